#!/usr/bin/env bash
# E7's side question: what an unmodified Linux TCP stack does with trimmed segments. Four
# senders (h2-h5) each run one iperf3 TCP stream (cubic, no ECN) into h1 through p1, shaped to
# 100 Mbit/s with a 600-cell buffer; the data class's overflow is "drop", then "trim" (128-byte
# headers, lengths and checksums fixed, strict-priority trim queue), switched live. Per mode and
# repetition: goodput (bytes received over the wall-clock time from starting the senders to the
# last one's exit; iperf3's own interval undercounted it by up to 15 % here), the senders'
# retransmissions (iperf3), and the receiver's TCP counters
# (nstat in h1's namespace: segments in, segments queued out of order, D-SACKs sent for data
# that arrived twice).
#   experiments/e7_tcp_trimmed.sh [--out DIR] [--seconds 5] [--reps 3] [--readme]
# Writes DIR/tcp_trimmed.csv and DIR/tcp_trimmed.md (a table of every run; DIR defaults to
# results/e7tcp, apart from e7_trimming.sh's results/e7: each directory's effective-*.toml are its
# run's); --readme puts the table into the E7 page (section e7tcp) and keeps what it was made
# from in docs/runs/e7/e7tcp.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"
out=results/e7tcp seconds=5 reps=3 readme=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --readme) readme=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "e7_tcp_trimmed.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
  esac
done
for v in "$seconds" "$reps"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] ||
    { echo "e7_tcp_trimmed.sh: --seconds and --reps take whole numbers from 1 ('$v')" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "e7_tcp_trimmed.sh: needs root (network namespaces)" >&2; exit 1; }
out=$(tb_out_dir "$out")
tb_init
tb_create 5 cubic 0
TB_PORT_EXTRA='scheduler = "sp"
trim_queue = 0' tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "600 cells" 2 '
[[classes]]
name = "data"
queue = 1
alpha = 1.0
overflow = "drop"
[trimming]
trim_dscp = 8'
tb_start_switch "$TB_DIR/sw.toml"
csv="$out/tcp_trimmed.csv" lib="$(dirname "$0")/lib"
echo "mode,rep,goodput_mbps,retransmits,in_segs,ofo_queued,dsack_sent,trimmed" >"$csv"
for rep in $(seq 1 "$reps"); do
  for mode in drop trim; do
    tb_ctl trim.set class=data overflow="$mode" >/dev/null
    tb_ctl counters.reset >/dev/null
    [ "$rep" -ne 1 ] || tb_ctl config >"$out/effective-$mode.toml"  # what this mode ran with
    for h in 2 3 4 5; do tb_bg 1 iperf3 -s -1 -p $((5200 + h)); done
    sleep 0.3
    tb_exec 1 nstat -n >/dev/null  # resets nstat's history in h1
    pids=()
    t0=$EPOCHREALTIME
    for h in 2 3 4 5; do
      tb_exec "$h" timeout $((seconds + 20)) iperf3 -c "$(tb_ip 1)" -p $((5200 + h)) -t "$seconds" -J \
        >"$TB_DIR/iperf-$h.json" &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || tb_die "iperf3 failed"; done
    elapsed=$(awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN { printf "%.6f", a - b }')
    tb_exec 1 nstat -j >"$TB_DIR/nstat.json"  # the change since nstat -n
    tb_ctl --json queues >"$TB_DIR/queues.json"
    tb_ctl --json ports >"$TB_DIR/ports.json"
    /usr/bin/python3 "$lib/e7_tcp_trimmed.py" row "$TB_DIR" "$mode" "$rep" "$elapsed" >>"$csv"
  done
done
tb_stop_switch || tb_die "sharebufd exited with $?"
readme_flag=()
[ "$readme" = 0 ] || readme_flag=(--readme)
/usr/bin/python3 "$lib/e7_tcp_trimmed.py" report "$out" "$seconds" "${readme_flag[@]}"
