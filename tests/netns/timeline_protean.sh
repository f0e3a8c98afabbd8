#!/usr/bin/env bash
# Protean's live signature and the plotting path: netns-scripts/timeline.sh
# runs DT and Protean through the same contention (UDP flood into p2, TCP burst into p3) with
# `sharebufctl watch` sampling every millisecond; during the burst Protean's incast threshold for
# p3 must rise above alpha * Rem (gradient above the buildup threshold) in clearly more samples
# than DT's ever exceeds its alpha * Rem, and both timelines must be plotted. The burst is looked
# for anywhere after 1 s, not in a window from 1 s: one run in five with a
# CPU hog per core found fewer than 100 occupied samples of p3 between 1 and 2.2 s (late TCP
# clients, presumably: the cause was not measured); after the change 5 of 5 passed.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: netns tests need root"
  exit 77
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bash "$root/netns-scripts/timeline.sh" --out "$out" --seconds 3 dt protean:alpha_incast=0.8
for p in dt protean; do
  [ -s "$out/$p.png" ] || { echo "FAIL: no plot $out/$p.png"; exit 1; }
done
/usr/bin/python3 - "$out" <<'PY'
import csv, sys
d = sys.argv[1]
def above(policy, alpha):
    rows = [r for r in csv.DictReader(open(f"{d}/{policy}.csv"))
            if r["port"] == "p3" and float(r["t_s"]) >= 1.0 and int(r["occupancy_cells"]) > 0]
    n = sum(int(r["threshold_cells"]) > 1.05 * alpha * (int(r["capacity_cells"]) - int(r["total_cells"]))
            for r in rows)
    return n, len(rows)
dt, dt_rows = above("dt", 1.0)
pr, pr_rows = above("protean", 0.8)
print(f"burst samples with threshold > 1.05 alpha Rem: dt {dt}/{dt_rows}, protean {pr}/{pr_rows}")
assert dt_rows > 100 and pr_rows > 100, \
    f"the TCP burst did not reach p3 (samples with p3 occupied: dt {dt_rows}, protean {pr_rows})"
assert pr >= 5 and pr > 3 * dt, "Protean's incast threshold did not rise above DT's during the burst"
print("PASS")
PY
