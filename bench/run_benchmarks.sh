#!/usr/bin/env bash
# Runs the microbenchmarks with repetitions and writes the medians as a Markdown table into
# docs/measurements/microbench-results.md and between the bench markers of docs/benchmarks.md.
#   bench/run_benchmarks.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin="$build/bench/sharebuf_bench"
[ -x "$bin" ] || { echo "run_benchmarks.sh: $bin not built (./run.sh build)" >&2; exit 1; }
json=$(mktemp)
trap 'rm -f "$json"' EXIT
cmd="$bin --benchmark_repetitions=9 --benchmark_min_time=0.1 --benchmark_enable_random_interleaving=true --benchmark_format=json"
echo "running: $cmd" >&2
$cmd >"$json"
/usr/bin/python3 bench/format_results.py "$json" "$cmd" >docs/measurements/microbench-results.md
/usr/bin/python3 scripts/doc_section.py bench docs/measurements/microbench-results.md
cat docs/measurements/microbench-results.md
