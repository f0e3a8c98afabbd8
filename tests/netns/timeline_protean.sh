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
/usr/bin/python3 "$root/tests/netns/netns_checks.py" timeline-protean "$out"
echo "PASS"
