#!/usr/bin/env bash
# Forwarding while read-only peers attack the control socket (docs/security.md, N5): two hosts
# through sharebufd (1 Gbit/s ports, socket mode 0666, admin_group set), and for each repetition
# three phases side by side, in rotating order: quiet; `nobody` running 200 watchers that ask for
# 100 us samples and read them; one client pipelining 40 MB of requests and reading the replies
# (tests/netns/hostile_peer.py). In each phase: iperf3 h1 -> h2 for --seconds, then 200 pings
# 10 ms apart, and the control thread's CPU over the phase. Prints one line per phase and, per
# attack, the medians (with min-max) of the attacked/quiet ratios of the same repetition.
#   bench/control_attack.sh [--build DIR] [--reps N] [--seconds S]
# Needs root and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/testbed.sh
source "$here/../scripts/testbed.sh"
# shellcheck source=lib/open_socket_testbed.sh
source "$here/lib/open_socket_testbed.sh"

usage() { sb_usage "$0"; }
build=$TB_ROOT/build reps=3 seconds=10
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
export SHAREBUFD=$build/mgmt/sharebufd

open_socket_testbed
tb_bg 2 iperf3 -s -p 5201 >/dev/null
sleep 0.5

control_cpu_ns() {
  local t
  for t in /proc/"$TB_SWITCH_PID"/task/*; do
    [ "$(cat "$t/comm")" = sb-control ] && { cut -d' ' -f1 "$t/schedstat"; return; }
  done
}


# phase NAME: quiet, watchers or pipeline; prints "NAME mbit ping_p50_ms control_pct"
phase() {
  local name=$1 pids=() cpu0 cpu1 t0 t1 mbit p50
  case "$name" in
    watchers) hostile_peer watchers 200 --interval-us 100 --read --seconds $((seconds + 6)) >/dev/null & pids+=($!) ;;
    pipeline) hostile_peer pipeline 1 --read --bytes $((40 << 20)) --seconds $((seconds + 6)) >/dev/null & pids+=($!) ;;
  esac
  [ "$name" = quiet ] || sleep 1
  cpu0=$(control_cpu_ns)
  t0=$(date +%s%N)
  mbit=$(tb_exec 1 iperf3 -c "$(tb_ip 2)" -p 5201 -t "$seconds" -J |
    jq '.end.sum_received.bits_per_second / 1e5 | round / 10')
  p50=$(tb_exec 1 ping -c 200 -i 0.01 "$(tb_ip 2)" |
    sed -n 's/.*time=\([0-9.]*\).*/\1/p' | sort -g | awk '{ t[NR] = $1 } END {
      print NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2 }')
  cpu1=$(control_cpu_ns)
  t1=$(date +%s%N)
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  echo "$r $name $mbit $p50 $(((cpu1 - cpu0) * 100 / (t1 - t0)))"
}

results=$TB_DIR/results.txt
order=(quiet watchers pipeline)
for r in $(seq 1 "$reps"); do
  for i in 0 1 2; do
    phase "${order[$(((i + r) % 3))]}" | tee -a "$results"
  done
done
/usr/bin/python3 "$here/lib/control_attack_report.py" "$results"
