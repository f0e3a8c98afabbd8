#!/usr/bin/env bash
# A flow's class holds at every hop of a leaf-spine fabric, not only the first: a flow's DSCP
# travels as an ns-3 packet tag (sim/ns3/sender_tag.h), and a tag lost between switches would put
# every later hop's packets in the default class. Two UDP classes from four hosts under two
# leaves into one host under a third: the spines (second hop, per-flow ECMP) and the last leaf's
# port to the receiver (third hop) queue, and there the packets sit in their class's queue (0 or
# 1), none in the default class's (2). The first hop is tests/sim/ns3_classes.sh's.
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/classes_fabric.toml" <<'TOML'
[topology]
kind = "leaf-spine"
spines = 2
leaves = 3
hosts_per_leaf = 2
host_rate = "10Gbit"
delay = "2us"
[switches.buffer]
size = "4MB"
[switches.policy]
name = "dt"
alpha = 8
[switches.ports]
queues = 3
scheduler = "rr"
default_class = "untagged"
[switches.classify]
mode = "dscp"
[[switches.classes]]
name = "ten"
queue = 0
dscp = [10]
[[switches.classes]]
name = "twenty"
queue = 1
dscp = [20]
[[switches.classes]]
name = "untagged"
queue = 2
[[workload.flows]]
from = [0, 2]
to = 4
protocol = "udp"
rate = 0.6
dscp = 10
[[workload.flows]]
from = [1, 3]
to = 4
protocol = "udp"
rate = 0.6
dscp = 20
[run]
duration = "2ms"
sample_queues = true
sample_interval = "10us"
TOML
"$sim" --quiet "$dir/classes_fabric.toml" --out "$dir/out" >/dev/null
/usr/bin/python3 "$here/check_sim.py" classes-fabric "$dir/out/occupancy.csv"
