#!/usr/bin/env bash
# Occupancy-vs-threshold timelines under contention, one run per policy: UDP h1 -> h2 at twice
# the port rate keeps port p2's queue full; after 1 s, 16 parallel TCP flows from h1 and h3 burst
# into port p3 for 1 s. `sharebufctl watch` samples every queue each millisecond into a CSV and
# tools/plot_watch.py draws p2's and p3's occupancy against their thresholds.
#   netns-scripts/timeline.sh [--out DIR] [--seconds S] [--buffer CELLS] POLICY[:key=value,...]...
# (as root, after ./run.sh build). Default policies: dt protean. Writes DIR/<policy>.csv and .png.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"

out=results/timeline seconds=3 buffer=6000 specs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --buffer) buffer=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    -*) echo "timeline.sh: unknown option '$1'" >&2; exit 2 ;;
    *) specs+=("$1"); shift ;;
  esac
done
[ ${#specs[@]} -gt 0 ] || specs=(dt protean)
mkdir -p "$out"
out=$(cd "$out" && pwd)

tb_init
tb_create 3
for spec in "${specs[@]}"; do
  policy=${spec%%:*}
  params=""
  if [ "$spec" != "$policy" ]; then params=$(echo "${spec#*:}" | tr ',' '\n'); fi
  TB_POLICY_PARAMS=$params tb_write_config "$TB_DIR/sw.toml" "$policy" 100Mbit "$buffer cells"
  tb_start_switch "$TB_DIR/sw.toml"
  tb_bg 2 iperf3 -s -1 -p 5201 >/dev/null
  tb_bg 3 iperf3 -s -1 -p 5202 >/dev/null
  tb_bg 3 iperf3 -s -1 -p 5203 >/dev/null
  sleep 0.3
  tb_ctl watch interval_us=1000 --csv "$out/$policy.csv" --duration "$seconds" 2>/dev/null &
  watch_pid=$!
  tb_bg 1 iperf3 -c "$(tb_ip 2)" -p 5201 -u -b 200M -l 1400 -t "$seconds" >/dev/null
  sleep 1
  tb_bg 1 iperf3 -c "$(tb_ip 3)" -p 5202 -P 8 -t 1 >/dev/null
  tb_bg 2 iperf3 -c "$(tb_ip 3)" -p 5203 -P 8 -t 1 >/dev/null
  wait "$watch_pid" || tb_die "watch failed"
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  tb_stop_switch || tb_die "$policy: sharebufd exited with $?"
  /usr/bin/python3 "$TB_ROOT/tools/plot_watch.py" "$out/$policy.csv" "$out/$policy.png" \
    --queues p2/0,p3/0 --title "$spec: UDP floods p2, TCP burst into p3 at 1 s"
done
echo "timelines in $out"
