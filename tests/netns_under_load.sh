#!/usr/bin/env bash
# The flaky-test guard: runs netns integration tests REPS times in a row (default 5) while a
# CPU hog spins on every core, so that a test which passes only on an idle machine is found
# before CI finds it at random. Each hog is a busy shell loop at normal priority, started and
# ended by this script (by PID). Prints one line per run and a table per test; exits 1 if any
# run failed. Run it (as root, after ./run.sh build) before resolving an issue that touched a
# netns test.
#   tests/netns_under_load.sh [--build DIR] [--reps N] [--no-hogs] [TEST ...]
# TEST: a ctest name without "netns." (e.g. rx_per_cpu); default: every test labelled netns.
# --no-hogs: the same runs on an idle machine, for comparison.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build reps=5 hogs=1 tests=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --no-hogs) hogs=0; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    -*) echo "netns_under_load.sh: unknown option '$1'" >&2; exit 2 ;;
    *) tests+=("$1"); shift ;;
  esac
done
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "--reps: a positive number" >&2; exit 2; }
[ -f "$build/CTestTestfile.cmake" ] || { echo "no build in $build (./run.sh build)" >&2; exit 2; }
if [ ${#tests[@]} -eq 0 ]; then
  mapfile -t tests < <(ctest --test-dir "$build" -N -L netns | sed -n 's/^ *Test *#[0-9]*: netns\.//p')
fi
hog_pids=()
stop_hogs() {
  local p
  for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  hog_pids=()
}
trap stop_hogs EXIT INT TERM
if [ "$hogs" = 1 ]; then
  for cpu in $(seq 0 $(($(nproc) - 1))); do
    taskset -c "$cpu" sh -c 'while :; do :; done' &
    hog_pids+=($!)
  done
  echo "CPU hogs on $(nproc) cores: ${hog_pids[*]}"
fi
declare -A passed failed
fail=0
for t in "${tests[@]}"; do
  passed[$t]=0 failed[$t]=0
  for rep in $(seq 1 "$reps"); do
    log=$(mktemp)
    start=$(date +%s)
    if ctest --test-dir "$build" --output-on-failure -R "^netns\.${t}\$" >"$log" 2>&1; then
      if grep -q "Skipped\|Not Run" "$log"; then
        echo "SKIP $t ($(grep -m1 -o 'SKIP[^\r]*' "$log" || true))"
      fi
      passed[$t]=$((passed[$t] + 1))
      echo "ok   $t run $rep ($(($(date +%s) - start)) s)"
    else
      failed[$t]=$((failed[$t] + 1))
      fail=1
      echo "FAIL $t run $rep ($(($(date +%s) - start)) s):"
      grep -E "FAIL|Error|error" "$log" | head -5 | sed 's/^/     /'
    fi
    rm -f "$log"
  done
done
stop_hogs
echo
echo "| test | passed | failed |"
echo "|---|---|---|"
for t in "${tests[@]}"; do echo "| $t | ${passed[$t]} | ${failed[$t]} |"; done
exit $fail
