#!/usr/bin/env bash
# How long sharebufd takes to exit after SIGTERM, from the signal to the process gone: a 5-port
# switch, idle, started and stopped RUNS times (default 5); prints each time and the median.
# Compare two builds side by side with SHAREBUFD=A:B (alternated runs). Most of the time is the
# kernel's: every AF_PACKET socket's close waits for an RCU grace period.
#   bench/stop_time.sh [RUNS]
# Needs root and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
case "${1:-}" in -h | --help) sb_usage "$0"; exit 0 ;; esac
runs=${1:-5}
here=$(cd "$(dirname "$0")" && pwd)
IFS=: read -r -a builds <<<"${SHAREBUFD:-$here/../build/mgmt/sharebufd}"
one() {  # one BINARY: prints the stop time in ms
  SHAREBUFD=$1 bash -c '
    source "'"$here"'/../tests/netns/lib.sh"
    tb_init
    tb_create 5 >/dev/null
    tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "600 cells" 2
    tb_start_switch "$TB_DIR/sw.toml" >/dev/null
    sleep 0.5
    t0=$(date +%s%N)
    tb_stop_switch
    echo $(( ($(date +%s%N) - t0) / 1000000 ))'
}
declare -A times
for ((i = 0; i < runs; i++)); do
  for b in "${builds[@]}"; do
    t=$(one "$b")
    times[$b]+="$t "
    echo "$b: $t ms"
  done
done
for b in "${builds[@]}"; do
  # shellcheck disable=SC2086
  echo "$b: median $(printf '%s\n' ${times[$b]} | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ms over $runs runs (${times[$b]% })"
done
