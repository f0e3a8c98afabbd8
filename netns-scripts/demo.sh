#!/usr/bin/env bash
# The main demo: a short E1 (Protean's testbed, docs/experiments/e1-protean.md) — DT against Protean, one
# repetition each: UDP saturates one port while 100 parallel 16 KB TCP flows hit another; prints
# the flow-completion-time table and where the plots are, and tears everything down.
#   netns-scripts/demo.sh [--out DIR]      (as root; ./run.sh demo builds first)
# The full experiment: experiments/e1_protean.sh (7 policies x 5 repetitions).
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
out=results/demo
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "demo.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
"$(dirname "$0")/../experiments/e1_protean.sh" --quick --policies dt,protean --out "$out"
echo
echo "plots: $out/fct_cdf.png (FCT CDF), $out/fct_p99.png (mean and p99),"
echo "       $out/timeline-dt.png and $out/timeline-protean.png (occupancy vs threshold per queue)"
