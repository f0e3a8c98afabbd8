#!/usr/bin/env bash
# The simplest incast, with iperf3: N senders (one namespace each) start together into one
# receiver through sharebufd; prints per-stream goodput and retransmits from iperf3's JSON and
# the switch's drops per queue beside them.
#   netns-scripts/iperf_incast.sh [--senders N] [--policy NAME[:key=value,...]] [--bytes B]
#                                 [--rate 100Mbit] [--buffer "21000 cells"] [--out DIR]
# Synchronised start: every client waits in `read` on one named pipe; opening the pipe for
# writing wakes all of them at once, and each records its wake-up time (date +%s%N) just before
# exec'ing iperf3; the spread of those times is printed ("started within X ms").
# Usable as background load too: --bytes 0 --seconds S runs time-bounded streams instead.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"

senders=8 spec=dt bytes=2M seconds=0 rate=100Mbit buffer="21000 cells" out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --senders) senders=$2; shift 2 ;;
    --policy) spec=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --buffer) buffer=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "iperf_incast.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ "$senders" -ge 1 ] && [ "$senders" -le 60 ] || tb_die "--senders must be 1..60"
policy=${spec%%:*}
params=""
if [ "$spec" != "$policy" ]; then params=$(echo "${spec#*:}" | tr ',' '\n'); fi

tb_init
hosts=$((senders + 1))
tb_create "$hosts"
TB_POLICY_PARAMS=$params tb_write_config "$TB_DIR/sw.toml" "$policy" "$rate" "$buffer"
tb_start_switch "$TB_DIR/sw.toml"
rx=$hosts
for i in $(seq 1 "$senders"); do
  tb_bg "$rx" iperf3 -s -1 -p $((5200 + i)) >/dev/null
done
sleep 0.5
fifo="$TB_DIR/go"
mkfifo "$fifo"
if [ "$seconds" != 0 ]; then amount=(-t "$seconds"); else amount=(-n "$bytes"); fi
for i in $(seq 1 "$senders"); do
  tb_bg "$i" sh -c 'read _ < "$1"; date +%s%N > "$2"; exec iperf3 -c "$3" -p "$4" "$5" "$6" -J > "$7"' \
    sh "$fifo" "$TB_DIR/t$i" "$(tb_ip "$rx")" $((5200 + i)) "${amount[@]}" "$TB_DIR/c$i.json"
done
sleep 0.5
: >"$fifo"  # opening for writing releases every reader at once
wait "${TB_PIDS[@]}" 2>/dev/null || true
TB_PIDS=()
tb_stop_switch || tb_die "sharebufd exited with an error"
/usr/bin/python3 "$(dirname "$0")/../scripts/demo_report.py" incast "$TB_DIR" "$senders"
if [ -n "$out" ]; then mkdir -p "$out" && cp "$TB_DIR"/c*.json "$TB_DIR/stats.json" "$out"/; fi
