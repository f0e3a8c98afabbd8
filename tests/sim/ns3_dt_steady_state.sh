#!/usr/bin/env bash
# DT inside ns-3 (sharebuf-sim): senders overload S receiver ports with constant-rate UDP, so each
# of the S queues sits at DT's threshold, whose fixed point is alpha*B/(1+alpha*S). Checked for
# S = 1 and 2 and alpha = 1 and 0.5: the peak and the mean occupancy over the second half are
# within one frame (19 cells of 80 B for 1514-byte frames) of it.
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
for alpha in 1.0 0.5; do
  for s in 1 2; do
    cat >"$dir/dt.toml" <<TOML
[buffer]
size = "3000 cells"
cell_bytes = 80
[policy]
name = "dt"
alpha = $alpha
TOML
    "$sim" --quiet --switch-config="$dir/dt.toml" --senders=$((2 * s)) --receivers="$s" --udp-load=1.5 \
      --link-rate=1Gbps --duration=0.1 >"$dir/out.json"
    /usr/bin/python3 - "$dir/out.json" "$alpha" "$s" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
alpha, s = float(sys.argv[2]), int(sys.argv[3])
b = d["capacity_cells"]
t = alpha * b / (1 + alpha * s)
frame = 19
ok = True
for p in d["ports"]:
    good = abs(p["peak_cells"] - t) <= frame and abs(p["mean_cells"] - t) <= frame
    ok &= good
    print(f"{'ok  ' if good else 'FAIL'} alpha {alpha} S {s} port {p['port']}: peak {p['peak_cells']}, "
          f"mean {p['mean_cells']:.1f}, alpha*B/(1+alpha*S) = {t:.1f}")
sys.exit(0 if ok else 1)
PY
  done
done
exit "$fail"
