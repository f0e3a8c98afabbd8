#!/usr/bin/env bash
# A small leaf-spine fabric in sharebuf-sim (2 spines, 3 leaves of 2 hosts, Cubic, DT with a
# small buffer): a 100 KB TCP flow between every ordered pair of hosts completes (routing
# reaches every host), per-flow ECMP spreads flows over both spines, each switch's counters
# balance (received = admitted + refused), and incast queries bigger than a leaf's buffer
# complete after the leaf's DT threshold refused some of their packets; another ecmp_seed places
# the same flows on other spines.
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
{
  cat <<'TOML'
[topology]
kind = "leaf-spine"
spines = 2
leaves = 3
hosts_per_leaf = 2
host_rate = "10Gbit"
delay = "2us"
[switches.buffer]
size = "100KB"
[switches.policy]
name = "dt"
alpha = 1
[transport]
cc = "cubic"
[workload.incast]
rate = 1000
aggregators = 1
fan_in = 2
size = "300%"
[run]
duration = "50ms"
TOML
  for to in 0 1 2 3 4 5; do
    from=$(seq -s ', ' 0 5 | sed "s/\b$to\b, //; s/, $to\$//")
    printf '[[workload.flows]]\nfrom = [%s]\nto = %s\nbytes = "100KB"\n' "$from" "$to"
  done
} >"$dir/fabric.toml"
"$sim" --quiet "$dir/fabric.toml" --out "$dir/out" >/dev/null
/usr/bin/python3 "$here/check_sim.py" fabric "$dir/out/summary.json" "$dir/out/flows.csv"
# Another ECMP seed: the same flows, other paths.
"$sim" --quiet "$dir/fabric.toml" --out "$dir/seeded" --set topology.ecmp_seed=1 >/dev/null
/usr/bin/python3 "$here/check_sim.py" ecmp-seed "$dir/out" "$dir/seeded"
