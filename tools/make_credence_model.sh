#!/usr/bin/env bash
# Regenerates the Credence oracle that ships in data/credence-forest.json: replays the
# web-search generator (seed 1, 200 ms, 8 ports) under LQD, writes every arrival's features
# with LQD's label, and trains a 4-tree depth-4 random forest on it (tools/train_forest.py).
#   tools/make_credence_model.sh [BUILD_DIR] [OUT.json]     (after ./run.sh build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-data/credence-forest.json}
replay="$build/sim/sharebuf-replay"
[ -x "$replay" ] || { echo "make_credence_model.sh: $replay not built (./run.sh build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$replay" --scenario websearch --seed 1 --duration-ms 200 --policies lqd \
  --lqd-trace "$work/trace.csv" >/dev/null
/usr/bin/python3 tools/train_forest.py "$work/trace.csv" -o "$out" --trees 4 --depth 4 --seed 1 \
  --predictions "$work/heldout.csv"
"$build/tools/sharebuf-forest-check" "$out" "$work/heldout.csv"
