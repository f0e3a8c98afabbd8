#!/usr/bin/env bash
# ABM's first round trip in sharebuf-sim: the senders tag each flow's first bandwidth-delay
# product (sim/ns3/sender_tag.h) and ABM gives those frames first_rtt_alpha. An incast of 8
# responses, each sent whole in its first window and within its BDP, into a 200 KB buffer: with
# the boost (first_rtt_alpha 64) the switch keeps the bursts that alpha 0.5 alone refuses, and
# the flow table's time window (base_rtt_us) no longer decides (it would start at the SYN, a
# round trip before any data: the boost never fired at base_rtt_us up to 25 in E8's fabric).
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
here=$(cd "$(dirname "$0")" && pwd)
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
/usr/bin/python3 "$here/check_sim.py" abm-first-bdp "$dir"
