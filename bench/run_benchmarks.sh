#!/usr/bin/env bash
# Runs the microbenchmarks with repetitions and writes the medians as a Markdown table into
# docs/measurements/microbench-results.md and between the bench markers of docs/benchmarks.md.
#   bench/run_benchmarks.sh [--filter REGEX --out FILE] [--reps N] [BUILD_DIR]   (default: build)
# --filter runs only the benchmarks REGEX matches and writes the table (with its ratios) into FILE
# instead, e.g. Credence's decisions on one and two threads, exact and with pipelines (issue 61):
#   bench/run_benchmarks.sh --filter '^BM_DecideBurst/(2|10)/|^BM_DecideBurstPipelines' --reps 25 \
#     --out docs/measurements/credence-pipelines-results.md
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
cd "$(dirname "$0")/.."
filter="" out="" reps=9
while [ $# -gt 0 ]; do
  case "$1" in
    --filter) filter=${2:?--filter needs a regular expression}; shift 2 ;;
    --out) out=${2:?--out needs a file}; shift 2 ;;
    --reps) reps=${2:?--reps needs a number}; shift 2 ;;
    -h | --help) sb_usage "$0"; exit 0 ;;
    -*) echo "run_benchmarks.sh: unknown option $1 (--help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -z "$filter" ] || [ -n "$out" ] || { echo "run_benchmarks.sh: --filter needs --out FILE" >&2; exit 2; }
build=${1:-build}
bin="$build/bench/sharebuf_bench"
[ -x "$bin" ] || { echo "run_benchmarks.sh: $bin not built (./run.sh build)" >&2; exit 1; }
json=$(mktemp)
trap 'rm -f "$json"' EXIT
cmd="$bin${filter:+ --benchmark_filter=$filter} --benchmark_repetitions=$reps --benchmark_min_time=0.1 --benchmark_enable_random_interleaving=true --benchmark_format=json"
echo "running: $cmd" >&2
$cmd >"$json"
if [ -n "$out" ]; then
  /usr/bin/python3 bench/format_results.py "$json" "$cmd" >"$out"
  grep '^- ' "$out"
  exit 0
fi
/usr/bin/python3 bench/format_results.py "$json" "$cmd" >docs/measurements/microbench-results.md
/usr/bin/python3 scripts/doc_section.py bench docs/measurements/microbench-results.md
cat docs/measurements/microbench-results.md
