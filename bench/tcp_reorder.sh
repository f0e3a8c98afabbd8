#!/usr/bin/env bash
# TCP reordering through each switch: one iperf3 stream from host 1 to host 2 on the two-host
# testbed (offloads off, unshaped), and around it the hosts' own TCP counters: the segments the
# receiver queued out of order, the sender's retransmissions and how many of them the receiver
# reported as duplicates (DSACK: the segment was reordered, not lost), the sender's reordering
# detections, the segments each host sent (data per ACK: an ACK is a frame the switch forwards too),
# and what sharebufd dropped (RX ring, TX errors, policy). A hardware switch keeps one
# port pair's frames in order; out-of-order segments with nothing dropped come from the path.
# Writes docs/measurements/tcp-reorder-results.md (and DIR/results.jsonl), and what each switch
# ran (sharebufd's effective configurations) into docs/measurements/tcp-reorder-results/.
#   bench/tcp_reorder.sh [--build DIR] [--reps N] [--seconds S] [--only NAME[,NAME]]
#                        [--client-cpu N]
# NAMEs: bench/lib/switches.sh (default: the bridge and sharebufd each on the testbed's links
# (TB_LINK_ORDER, NAPI unless set), @off (the kernel's order, where a sender transmitting from two
# CPUs is reordered) and @flow (RPS by flow hash), and sharebufd-percpu on NAPI and RPS links).
# --client-cpu N pins iperf3's client (the sender) to CPU N. Needs root and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/testbed.sh
source "$here/../scripts/testbed.sh"
# shellcheck source=lib/switches.sh
source "$here/lib/switches.sh"

build=$TB_ROOT/build reps=3 seconds=4 only="bridge,bridge@off,bridge@flow,sharebufd,sharebufd@off,sharebufd@flow,sharebufd-percpu,sharebufd-percpu@flow"
client_cpu=
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --client-cpu)
      [[ ${2:-} =~ ^[0-9]+$ ]] && [ "$2" -lt "$(nproc)" ] || { echo "--client-cpu: a CPU number below $(nproc)" >&2; exit 2; }
      client_cpu=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "tcp_reorder.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
export SHAREBUFD=$build/mgmt/sharebufd SHAREBUFCTL=$build/mgmt/sharebufctl
[ -x "$SHAREBUFD" ] || { echo "build first: ./run.sh build" >&2; exit 1; }
IFS=, read -r -a switches <<<"$only"
for name in "${switches[@]}"; do bench_switch_label "$name" >/dev/null || tb_die "unknown switch '$name'"; done

tb_init
tb_create 2 cubic 0 200ms
results="$TB_DIR/results.jsonl"
# What each switch ran, beside the table (bench_stop_switch writes it).
bench_keep_in "$here/../docs/measurements/tcp-reorder-results"
: >"$results"
report=$here/lib/tcp_reorder_report.py

counters() { tb_exec "$1" /usr/bin/python3 "$report" counters; }
# What sharebufd dropped since the counters' reset: RX ring, TX errors, every drop reason.
switch_drops() {
  if [[ $1 != sharebufd* ]]; then echo -; return; fi
  jq -n --argjson p "$(tb_ctl --json ports)" --argjson q "$(tb_ctl --json queues)" \
    '([$p[] | .ring_drops + .tx_errors] | add) + ([$q[] | .dropped[]] | add)'
}

measure() {
  local name=$1 rep=$2 r0 r1 s0 s1 bps
  if [[ $name == sharebufd* ]]; then tb_ctl counters.reset >/dev/null; fi
  tb_bg 2 iperf3 -s -p 5201 -1 >/dev/null
  sleep 0.3
  r0=$(counters 2) s0=$(counters 1)
  bps=$(tb_exec 1 ${client_cpu:+taskset -c "$client_cpu"} timeout $((seconds + 20)) \
    iperf3 -c "$(tb_ip 2)" -p 5201 -t "$seconds" -J |
    jq .end.sum_received.bits_per_second)
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  r1=$(counters 2) s1=$(counters 1)
  /usr/bin/python3 "$report" row "$name" "$(bench_switch_label "$name")" "$rep" "$bps" \
    "$r0" "$r1" "$s0" "$s1" "$(switch_drops "$name")" >>"$results"
  tail -1 "$results" >&2
}

bench_interleave "$reps" measure "${switches[@]}"

{
  echo "$(date +%F), $(nproc) CPUs, Linux $(uname -r); median of $reps runs of $seconds s, one TCP stream" \
    "(cubic) from host 1 to host 2${client_cpu:+, the sender on CPU $client_cpu}; offloads off, no shaping.  "
  echo "Command: \`bench/tcp_reorder.sh${client_cpu:+ --client-cpu $client_cpu}\` (as root, after \`./run.sh build\`)."
  echo
  /usr/bin/python3 "$report" table "$results"
} >"$here/../docs/measurements/tcp-reorder-results.md"
cat "$here/../docs/measurements/tcp-reorder-results.md"
