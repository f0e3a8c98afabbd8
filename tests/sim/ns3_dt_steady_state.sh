#!/usr/bin/env bash
# DT inside ns-3 (sharebuf-sim, a star): pairs of UDP senders at 0.9 of line rate overload S
# receiver ports, so each of the S queues sits at DT's threshold, whose fixed point is
# alpha*B/(1+alpha*S). Checked for S = 1 and 2 and alpha = 1 and 0.5: the peak and the mean
# occupancy over the second half are within one frame (19 cells of 80 B for 1502-byte frames).
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
for alpha in 1.0 0.5; do
  for s in 1 2; do
    flows=""
    for r in $(seq 0 $((s - 1))); do
      flows+="[[workload.flows]]
from = [$((s + 2 * r)), $((s + 2 * r + 1))]
to = $r
protocol = \"udp\"
rate = 0.9
"
    done
    cat >"$dir/dt.toml" <<TOML
[topology]
kind = "star"
hosts = $((3 * s))
host_rate = "1Gbit"
[switches.buffer]
size = "3000 cells"
cell_bytes = 80
[switches.policy]
name = "dt"
alpha = $alpha
$flows
[run]
duration = "0.1s"
sample_queues = true
TOML
    "$sim" --quiet "$dir/dt.toml" --out "$dir/out" >/dev/null
    ports=$(seq -s ' ' 0 $((s - 1)))
    # shellcheck disable=SC2086
    /usr/bin/python3 "$here/check_sim.py" dt-steady "$dir/out/occupancy.csv" \
      "$dir/out/summary.json" "$alpha" "$s" $ports || fail=1
  done
done
exit "$fail"
