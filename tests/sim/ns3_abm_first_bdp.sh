#!/usr/bin/env bash
# ABM's first round trip in sharebuf-sim: the senders tag each flow's first bandwidth-delay
# product (sim/ns3/sender_tag.h) and ABM gives those frames first_rtt_alpha. An incast of 8
# responses, each sent whole in its first window and within its BDP, into a 200 KB buffer: with
# the boost (first_rtt_alpha 64) the switch keeps the bursts that alpha 0.5 alone refuses, and
# the flow table's time window (base_rtt_us) no longer decides (it would start at the SYN, a
# round trip before any data: the boost never fired at base_rtt_us up to 25 in E8's fabric).
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/abm.toml" <<'TOML'
[topology]
kind = "star"
hosts = 9
host_rate = "10Gbit"
delay = "3us"
[switches.buffer]
size = "200KB"
[switches.policy]
name = "abm"
[transport]
cc = "dctcp"
[workload.incast]
rate = 2000
aggregators = 1
fan_in = 8
size = "50%"
initial_cwnd = "whole"
[run]
duration = "10ms"
TOML
run() {  # run NAME OVERRIDES...
  local name=$1
  shift
  local sets=()
  for o in "$@"; do sets+=(--set "$o"); done
  "$sim" --quiet "$dir/abm.toml" "${sets[@]}" --out "$dir/$name" --record "$dir/$name-rec" >/dev/null
}
run boost switches.policy.first_rtt_alpha=64 switches.policy.base_rtt_us=0.001
run boost-window switches.policy.first_rtt_alpha=64 switches.policy.base_rtt_us=25
run none switches.policy.first_rtt_alpha=0.5
/usr/bin/python3 - "$dir" <<'PY'
import csv, json, sys
d = sys.argv[1]
def drops(name):
    s = json.load(open(f"{d}/{name}/summary.json"))["switches"][0]
    return sum(s["dropped"].values())
tagged = sum(1 for r in csv.DictReader(open(f"{d}/boost-rec/switch/arrivals.csv"))
             if r["first_bdp"] == "1")
boost, window, none = drops("boost"), drops("boost-window"), drops("none")
print(f"first-BDP frames recorded: {tagged}; drops: boost {boost}, boost at base_rtt_us 25 "
      f"{window}, no boost {none}")
ok = True
if tagged == 0:
    print("FAIL: no frame reached the switch tagged as its flow's first BDP"); ok = False
if boost != window:
    print("FAIL: base_rtt_us changed the result: the tags should decide"); ok = False
if not boost * 4 < none:
    print("FAIL: the boost did not keep the incast bursts (expected under a quarter of the "
          "drops without it)"); ok = False
with open(f"{d}/boost/flows.csv") as f:
    if open(f"{d}/none/flows.csv").read() == f.read():
        print("FAIL: flows.csv is the same with and without the boost"); ok = False
sys.exit(0 if ok else 1)
PY
