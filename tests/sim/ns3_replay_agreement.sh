#!/usr/bin/env bash
# The same switch in ns-3 and in the replay: sharebuf-sim records every arrival at each switch
# (time, port, queue, bytes, class) and its fate (refused or later pushed out: 1), then
# sharebuf-replay replays those arrivals with the same configuration; the fates must be
# identical frame by frame. Runs: a star under DT with Cubic TCP (4 senders into 2 receivers), a
# star under LQD with UDP overload (push-outs), and a leaf-spine fabric under LQD with web-search
# flows and incast queries, checked at a leaf and at a spine (with a smaller buffer of its own). Within one instant the ns-3 switch admits the arrivals before a departure frees cells
# (sim/ns3/sharebuf_queue_disc.h); the replay's --order arrivals-first is that order.
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
replay=${SHAREBUF_REPLAY:?SHAREBUF_REPLAY: the sharebuf-replay binary}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

check() {  # check RUN SWITCH POLICY
  local d=$dir/$1/$2
  "$replay" --config "$d/switch.toml" --csv "$d/arrivals.csv" --policies "$3" \
    --order arrivals-first --fates "$d/replay-fates.csv" >/dev/null
  /usr/bin/python3 "$here/check_sim.py" agreement "$1 at $2" "$d/fates.csv" \
    "$d/replay-fates.csv" || fail=1
}

star() {  # star NAME POLICY FLOWS-TOML DURATION
  cat >"$dir/$1.toml" <<TOML
[topology]
kind = "star"
hosts = 6
host_rate = "1Gbit"
delay = "7us"
[switches.buffer]
size = "2000 cells"
cell_bytes = 80
[switches.policy]
name = "$2"
[transport]
cc = "cubic"
$3
[run]
duration = "$4"
TOML
  "$sim" --quiet "$dir/$1.toml" --record "$dir/$1" >/dev/null
  check "$1" switch "$2"
}
star dt-tcp dt '[[workload.flows]]
from = [2, 4]
to = 0
[[workload.flows]]
from = [3, 5]
to = 1' 0.05s
star lqd-udp lqd '[[workload.flows]]
from = [2, 4]
to = 0
protocol = "udp"
rate = 0.8
[[workload.flows]]
from = [3, 5]
to = 1
protocol = "udp"
rate = 0.8' 0.02s

cat >"$dir/fabric.toml" <<'TOML'
[topology]
kind = "leaf-spine"
spines = 2
leaves = 3
hosts_per_leaf = 3
host_rate = "10Gbit"
fabric_rate = "10Gbit"
delay = "3us"
[switches.buffer]
size = "200KB"
[switches.policy]
name = "lqd"
[switches.spine.buffer]
size = "40KB"
[workload.websearch]
load = 0.6
[workload.incast]
rate = 300
fan_in = 3
size = "100%"
[run]
duration = "20ms"
TOML
"$sim" --quiet "$dir/fabric.toml" --record "$dir/fabric" >/dev/null
check fabric leaf1 lqd
check fabric spine0 lqd
exit "$fail"
