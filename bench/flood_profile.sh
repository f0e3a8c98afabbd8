#!/usr/bin/env bash
# Where the CPU goes at rate: a 64-byte flood (sharebuf-blaster, as fast as one sender thread can)
# through one switch of bench/lib/switches.sh while `perf record -a -g -e cpu-clock` samples both
# CPUs. Prints the share of samples per thread, and for the switch's busiest thread (sharebufd's,
# Open vSwitch's PMD, sharebuf-floor's) the kernel/user split and the call-graph totals of the
# steps docs/datapath-latency.md names (sendmmsg or AF_XDP's sendto and generic transmit,
# packet_sendmsg, the receiving host's softirq, the sender's tpacket_rcv), the user-space frame
# copies' share (what one UMEM shared by all ports could save), and what the switch ran
# (sharebufd's effective configuration, sharebuf-floor's command line).
#   bench/flood_profile.sh [--build DIR] [--seconds S] [--switch NAME] [--tcp] [--keep FILE]
# --tcp: one iperf3 TCP stream instead of the flood (its goodput and segments are printed, to
# divide by). --keep FILE: keep perf.data there. Needs root, perf (linux-perf) and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/testbed.sh
source "$here/../scripts/testbed.sh"
# shellcheck source=lib/switches.sh
source "$here/lib/switches.sh"

build=$TB_ROOT/build seconds=4 switch=sharebufd keep="" tcp=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --switch) switch=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --tcp) tcp=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "flood_profile.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
export SHAREBUFD=$build/mgmt/sharebufd SHAREBUFCTL=$build/mgmt/sharebufctl
blaster=$build/tools/sharebuf-blaster
[ -x "$blaster" ] || { echo "build first: ./run.sh build" >&2; exit 1; }
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)" >&2; exit 1; }

tb_init
tb_create 2 cubic 0 200ms
bench_start_switch "$switch"
data=$TB_DIR/perf.data
# The sender runs a second longer than the recording, so every sample is taken at full rate.
perf record -q -a -g -e cpu-clock -o "$data" -- sleep "$seconds" >/dev/null 2>&1 &
perf_pid=$!
if [ "$tcp" = 1 ]; then
  tb_bg 2 iperf3 -s -1 -p 5201
  sleep 0.3
  tb_exec 1 timeout $((seconds + 30)) iperf3 -c "$(tb_ip 2)" -p 5201 -t $((seconds + 1)) -J >"$TB_DIR/tcp.json"
  jq -r '"TCP 1 stream: \(.end.sum_received.bits_per_second / 1e6 | floor) Mbit/s, \(.end.sum_received.bytes) bytes received"' "$TB_DIR/tcp.json"
else
  tb_exec 1 "$blaster" --interface eth0 --dst-mac "$(tb_mac 2)" --src-ip "$(tb_ip 1)" \
    --dst-ip "$(tb_ip 2)" --ethertype 0x88b5 --seconds $((seconds + 1))
fi
wait "$perf_pid" || true
bench_keep_in "$TB_DIR/ran"
bench_stop_switch "$switch"

# perf's percentages are of all samples (with --comm filters too); shares of one thread are
# computed here from the sample counts.
report() { perf report -i "$data" --stdio -g none -n "$@" 2>/dev/null | grep -E '^ +[0-9]'; }
# pct THREAD: the thread's share of all samples, in per cent.
pct() { report --no-children --sort comm | awk -v t="$1" '$3 == t { sub("%", "", $1); print $1 }'; }
echo "== share of all samples, per thread (both CPUs)"
report --no-children --sort comm | head -6
# The switch's busiest thread: sharebufd's workers (sb-*), Open vSwitch's PMD (pmd-*) or
# sharebuf-floor; both AF_XDP and AF_PACKET transmit paths are among the steps.
busiest=$(report --no-children --sort comm | awk '$3 ~ /^(sb-|pmd|sharebuf-floo)/ { print $3; exit }')
if [ -n "$busiest" ]; then
  total=$(report --no-children --sort comm | awk -v t="$busiest" '$3 == t { print $2 }')
  echo "== $busiest ($total samples): share of its samples by binary"
  report --no-children --sort comm,dso | awk -v t="$busiest" -v n="$total" \
    '$3 == t { printf "  %5.1f %%  %s\n", 100 * $2 / n, $4 }'
  echo "== $busiest: share of its samples in each step, callees included"
  # --children: column 1 is the share of all samples with callees; the sample count is self only.
  report --children --sort comm,sym | awk -v t="$busiest" -v p="$(pct "$busiest")" \
    '$4 == t && $6 ~ /^(__sys_sendmmsg|__sys_sendto|packet_sendmsg|xsk_sendmsg|__xsk_generic_xmit|__local_bh_enable_ip|net_rx_action|__vdso_clock_gettime)$/ {
       printf "  %5.1f %%  %s\n", 100 * $1 / p, $6 }'
  # What a UMEM shared by all ports (no copy between a frame's receive buffer, its cells and its
  # transmit buffer) could save at most. At least the self samples of memcpy/memmove and of the
  # cell pool's frame writes and reads; at most those and all of the two functions that inline
  # small copies (RxWorker::admit_copy, EgressPath::send_one), which do other work too.
  echo "== user-space frame copies: at least (memcpy, memmove, CellPool::write_frame/read_frame), at most (and RxWorker::admit_copy, EgressPath::send_one), self samples"
  report --no-children --sort comm,sym | awk -v t="$busiest" -v n="$total" '
    $3 ~ /^(sb-|pmd|sharebuf-floo)/ { all += $2 }
    $3 ~ /^(sb-|pmd|sharebuf-floo)/ && $4 == "[.]" && $5 ~ /(memcpy|memmove|CellPool::(write|read)_frame)/ {
      lo += $2; if ($3 == t) own_lo += $2 }
    $3 ~ /^(sb-|pmd|sharebuf-floo)/ && $4 == "[.]" && $5 ~ /(RxWorker::admit_copy|EgressPath::send_one)$/ {
      hi += $2; if ($3 == t) own_hi += $2 }
    END { printf "  %5.1f - %4.1f %%  of the samples of %s\n", 100 * own_lo / n, 100 * (own_lo + own_hi) / n, t
          if (all) printf "  %5.1f - %4.1f %%  of the samples of all the switch threads\n", 100 * lo / all, 100 * (lo + hi) / all }'
fi
if [ -d "$BENCH_KEEP_DIR" ]; then
  echo "== what the switch ran ($switch)"
  sed 's/^/  /' "$BENCH_KEEP_DIR"/*
fi
[ "$tcp" = 0 ] || { [ -z "$keep" ] || cp "$data" "$keep"; exit 0; }
sender=$(report --no-children --sort comm | awk '$3 ~ /^sharebuf-blas/ { print $2; exit }')
echo "== the sender ($sender samples): share in tpacket_rcv (the switch's RX ring copy, in its softirq)"
report --children --sort comm,sym | awk -v p="$(pct sharebuf-blaste)" \
  '$4 ~ /^sharebuf-blas/ && $6 == "tpacket_rcv" { printf "  %5.1f %%  %s\n", 100 * $1 / p, $6 }'
[ -z "$keep" ] || cp "$data" "$keep"
