#!/usr/bin/env bash
# Trimming in ns-3 against the replay, frame for frame: a star of 10 Gbit/s hosts, four UDP
# senders at line rate into one receiver (a 4:1 incast), the data class trimming what the buffer
# refuses into a strict-priority header queue. For each of the trimming paper's modes — ideal
# trim, return-to-sender, NDP's header_full fallback over a tiny header reserve, and the Tofino
# approximation (meters, deflect-on-drop through recirculation ports, notifications) — sharebuf-sim
# records the switch's arrivals (with their ingress ports), fates and every transmission, cut
# copies included; sharebuf-replay replays the arrivals with the same configuration; fates and
# transmissions (up to the run's end, 2 ms) must be identical, the ns-3 run must have sent cut
# copies, and each mode must have done what it is for (the replay's counters: returned copies,
# header_full's bounces, deflections and meter trims). ns-3's own accounting of every port's
# queue disc (summary.json) must have each packet it received enqueued or dropped, cut copies
# included: the check QueueDisc::Enqueue asserts in an ns-3 built with asserts.
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
replay=${SHAREBUF_REPLAY:?SHAREBUF_REPLAY: the sharebuf-replay binary}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

run() {  # run NAME OVERFLOW TRIMMING-TOML [POLICY-TOML]
  local policy=${4:-$'name = "dt"\nalpha = 0.5'}
  cat >"$dir/$1.toml" <<TOML
[topology]
kind = "star"
hosts = 5
host_rate = "10Gbit"
delay = "2us"
[switches.buffer]
size = "1200 cells"
cell_bytes = 80
[switches.policy]
$policy
[[switches.classes]]
name = "headers"
queue = 0
[[switches.classes]]
name = "data"
queue = 1
overflow = "$2"
[switches.ports]
queues = 2
scheduler = "sp"
trim_queue = 0
default_class = "data"
[switches.trimming]
trim_size = 64
$3
[[workload.flows]]
from = [1, 2, 3, 4]
to = 0
protocol = "udp"
rate = 1.0
[run]
duration = "2ms"
TOML
  "$sim" --quiet "$dir/$1.toml" --record "$dir/$1" --out "$dir/$1-out" >/dev/null
  local d=$dir/$1/switch
  "$replay" --config "$d/switch.toml" --csv "$d/arrivals.csv" --policies config \
    --order arrivals-first --end-ms 2 --fates "$d/replay-fates.csv" \
    --departures "$d/replay-departures.csv" --json >"$d/replay.json"
  /usr/bin/python3 "$here/check_sim.py" trim-agreement "$1" "$d" "$dir/$1-out/summary.json" || fail=1
}

run ideal trim ''
run return return-to-sender ''
# Header queues of 2 cells and no reserve: the receiver's header queue refuses most copies, which
# go back to their senders instead (NDP's header_full).
run header-full trim 'header_reserve = 0' 'name = "static"
cap_cells = [2, 100, 2, 100, 2, 100, 2, 100, 2, 100]'
run tofino trim 'mode = "tofino-approx"
pipelines = 2
recirc_latency = "1us"'
exit "$fail"
