#!/usr/bin/env bash
# E7, Figure 13 of the trimming paper (section 7): what a small trimming buffer does for
# latency-sensitive traffic. h11 pings h1 every 5 ms while nine bulk senders (h2-h10) also send to
# h1, whose port p1 is shaped to 100 Mbit/s:
#   idle       no bulk traffic;
#   droptail   TCP (iperf3, cubic) into a 200-packet drop-tail queue (static cap, 200 full frames);
#   trim       sharebuf-ndp into a 12-packet queue whose overflow is trimmed, headers through a
#              strict-priority trim queue (the paper's NDP switch with its small buffer).
# The pings share the data queue with the bulk traffic, as in the paper. Prints and writes
# summary.md (RTT p50/p90/p99 per case, added latency against idle, in ms and in packet-times of
# a 1514-byte frame at 100 Mbit/s) and rtt_cdf.png beside the paper's numbers (½ ms added with the
# 200-packet buffer, 36 us with the 12-packet one).
#   experiments/e7_fig13_latency.sh [--out DIR] [--seconds 4] [--cases idle,droptail,trim]
# About 30 s. Needs root and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"
out=results/e7-fig13 seconds=4 cases=idle,droptail,trim
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    -h | --help) sb_usage "$0"; exit 0 ;;
    *) echo "e7_fig13_latency.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 1 ] && [ "$seconds" -le 600 ] ||
  { echo "e7_fig13_latency.sh: --seconds: '$seconds' is not a number from 1 to 600" >&2; exit 2; }
for c in ${cases//,/ }; do
  case "$c" in idle | droptail | trim) ;; *) echo "e7_fig13_latency.sh: --cases: '$c' is not idle, droptail or trim" >&2; exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || { echo "e7_fig13_latency.sh: needs root (network namespaces)" >&2; exit 1; }
out=$(tb_out_dir "$out")
ndp=$(tb_ndp) || exit 1
tb_init
tb_create 11
# A full frame is 1514 bytes: 19 cells of 80 B. The queue caps count full frames.
frame_cells=19
senders=$(seq 2 10)
for case_ in ${cases//,/ }; do
  cap=$((200 * frame_cells)) overflow=drop
  [ "$case_" = trim ] && cap=$((12 * frame_cells)) overflow=trim
  TB_POLICY_PARAMS="cap_cells = $cap" TB_PORT_EXTRA='scheduler = "sp"
trim_queue = 0' tb_write_config "$TB_DIR/sw.toml" static 100Mbit "21000 cells" 2 "
[[classes]]
name = \"data\"
queue = 1
overflow = \"$overflow\"
[trimming]
trim_dscp = 8"
  tb_start_switch "$TB_DIR/sw.toml"
  echo "== E7 Figure 13: $case_ (queue cap $cap cells)" >&2
  case "$case_" in
    droptail)
      for h in $senders; do tb_bg 1 timeout $((seconds + 20)) iperf3 -s -1 -p $((5200 + h)) >/dev/null; done
      sleep 0.3
      for h in $senders; do
        tb_bg "$h" timeout $((seconds + 20)) iperf3 -c "$(tb_ip 1)" -p $((5200 + h)) -t $((seconds + 2)) >/dev/null
      done
      ;;
    trim)
      for h in $senders; do tb_bg "$h" timeout $((seconds + 30)) "$ndp" serve --port 9100 --rto 10ms; done
      sleep 0.3
      servers=$(for h in $senders; do printf '%s,' "$(tb_ip "$h")"; done)
      # One flow per sender, large enough to last the pings (9 x 100 Mbit/s / 9 for seconds + 2).
      tb_bg 1 timeout $((seconds + 30)) "$ndp" query --servers "${servers%,}" --flows 9 \
        --size $(((seconds + 2) * 12500000 / 9)) --count 1 --window 8 --pull-rate 100Mbit \
        --timeout $((seconds + 20))s --csv "$TB_DIR/ndp.csv"
      ;;
  esac
  sleep 1  # past the bulk traffic's start
  tb_exec 11 ping -i 0.005 -c $((seconds * 200)) -n "$(tb_ip 1)" 2>/dev/null |
    sed -n 's/.*icmp_seq=\([0-9]*\).*time=\([0-9.]*\) ms.*/\1,\2/p' | sed "s/^/$case_,/" >"$TB_DIR/rtt-$case_.csv" || true
  tb_snapshot_stats "$out/stats-$case_.json" >/dev/null
  tb_stop_switch || tb_die "sharebufd exited with $?"
  tb_keep_effective "$out/effective-$case_.toml"
  for pid in "${TB_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  TB_PIDS=()
done
{
  echo "case,seq,rtt_ms"
  cat "$TB_DIR"/rtt-*.csv
} >"$out/rtt.csv"
/usr/bin/python3 "$(dirname "$0")/lib/fig13_report.py" "$out"
