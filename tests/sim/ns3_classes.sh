#!/usr/bin/env bash
# Classes and ECN in sharebuf-sim: a star of 4 hosts under DCTCP, three flows into host 0 with
# DSCP 10 (TCP), 20 (TCP) and 30 (UDP) that the switch's [[classes]] put in queues 0, 1 and 2.
# Every queue carries its own flow (the DSCP reaches the switch), and the TCP class with an ECN
# threshold is marked and held near it (DCTCP reacts to marks) while the other TCP class, with
# no threshold, is never marked and grows past it.
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/classes.toml" <<'TOML'
[topology]
kind = "star"
hosts = 4
host_rate = "10Gbit"
delay = "2us"
[switches.buffer]
size = "2MB"
[switches.policy]
name = "dt"
alpha = 8
[switches.ports]
queues = 3
scheduler = "rr"
default_class = "marked"
[switches.classify]
mode = "dscp"
[[switches.classes]]
name = "marked"
queue = 0
dscp = [10]
ecn_threshold = "30KB"
[[switches.classes]]
name = "unmarked"
queue = 1
dscp = [20]
[[switches.classes]]
name = "udp"
queue = 2
dscp = [30]
[transport]
cc = "dctcp"
[[workload.flows]]
from = [1]
to = 0
bytes = "3MB"
dscp = 10
[[workload.flows]]
from = [2]
to = 0
bytes = "3MB"
dscp = 20
[[workload.flows]]
from = [3]
to = 0
protocol = "udp"
rate = 0.2
dscp = 30
[run]
duration = "10ms"
sample_queues = true
sample_interval = "10us"
TOML
"$sim" --quiet "$dir/classes.toml" --out "$dir/out" >/dev/null
/usr/bin/python3 "$here/check_sim.py" classes "$dir/out/summary.json" "$dir/out/occupancy.csv"
