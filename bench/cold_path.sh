#!/usr/bin/env bash
# Cold path: where an idle RX worker's time goes from its wake-up (poll() returns because a ring
# has a frame) to the sendmmsg() that forwards that frame, step by step. Builds a scratch copy of
# the working tree with bench/cold_path/marks.patch applied (TSC marks at each step; the project's
# own build never has them), runs it on the two-host testbed with its defaults, sends pings 10 ms
# apart (each request finds the switch idle), and reports per step the p50/p90 over all wake-ups
# (bench/lib/cold_path_report.py). Writes docs/measurements/cold-path-results.md.
#   bench/cold_path.sh [--reps N] [--pings N] [--keep]
#     --reps N    daemon runs (default 3), each with its own pings
#     --pings N   pings per run (default 500)
#     --keep      keep the run folder with the scratch build (printed) instead of removing it
# Needs root, x86-64 (the marks read the TSC), and the build dependencies (./run.sh deps).
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
reps=3 pings=500 keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "--reps: a positive number" >&2; exit 2; }; reps=$2; shift 2 ;;
    --pings) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "--pings: a positive number" >&2; exit 2; }; pings=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "cold_path.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ "$(uname -m)" = x86_64 ] || { echo "cold_path.sh: the marks read the x86-64 TSC" >&2; exit 2; }
command -v git >/dev/null || { echo "cold_path.sh needs git (to copy the tree and apply the patch)" >&2; exit 1; }

# shellcheck source=../scripts/testbed.sh
source "$root/scripts/testbed.sh"
# shellcheck source=lib/switches.sh
source "$here/lib/switches.sh"
# The scratch copy lives in the run's folder, which the testbed's cleanup removes on every exit
# (kept with --keep).
[ "$keep" -eq 0 ] || export TB_KEEP_DIR=1
tb_init
scratch=$TB_DIR/src
mkdir "$scratch"
[ "$keep" -eq 0 ] || tb_log "keeping $TB_DIR (the marked build is in $scratch/build)"
# The tracked files as they are in the working tree (local changes included, untracked files
# not), not the last commit.
(cd "$root" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$scratch/"
(cd "$scratch" && git apply "$here/cold_path/marks.patch") ||
  tb_die "bench/cold_path/marks.patch no longer applies to this tree; update its context"
tb_log "building the marked daemon in $scratch/build (a few minutes)"
cmake -S "$scratch" -B "$scratch/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$scratch/build" -j"$(nproc)" --target sharebufd sharebufctl >/dev/null
export SHAREBUFD=$scratch/build/mgmt/sharebufd SHAREBUFCTL=$scratch/build/mgmt/sharebufctl
tb_create 2 cubic 0 200ms
files=()
for rep in $(seq 1 "$reps"); do
  export SHAREBUF_COLD_MARKS=$TB_DIR/marks-$rep.txt
  bench_start_switch sharebufd
  sleep 1
  rtts=$(tb_exec 1 ping -c "$pings" -i 0.01 -W 1 "$(tb_ip 2)" | sed -n 's/.*time=\([0-9.]*\) ms/\1/p' | sort -n)
  bench_stop_switch sharebufd  # the marks are written as the daemon exits
  [ -s "$SHAREBUF_COLD_MARKS" ] || tb_die "run $rep: the daemon wrote no marks"
  files+=("$SHAREBUF_COLD_MARKS")
  tb_log "run $rep: $(wc -l <"$SHAREBUF_COLD_MARKS") wake-ups; ping p50 $(awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}' <<<"$rtts") ms"
done
{
  echo "$(date -u +%F), $(nproc) CPUs, Linux $(uname -r); $reps daemon runs of $pings pings 10 ms apart; sharebufd defaults (cs, unshaped), two hosts, offloads off."
  echo "Command: \`bench/cold_path.sh --reps $reps --pings $pings\` (as root). Times from the TSC marks of bench/cold_path/marks.patch; the marks cost about 10 ns each."
  echo
  /usr/bin/python3 "$here/lib/cold_path_report.py" "${files[@]}"
} >"$here/../docs/measurements/cold-path-results.md"
cat "$here/../docs/measurements/cold-path-results.md"
