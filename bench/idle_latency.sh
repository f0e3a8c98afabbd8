#!/usr/bin/env bash
# Idle-path latency: where a ping's time goes through sharebufd, beside a Linux bridge on the same
# two-host testbed (offloads off, no shaping), back to back in one run. For each switch and
# repetition: 500 pings 10 ms apart (RTT p50/p99; --interval MS for another gap: how long the
# vCPUs idle between pings changes what a wake-up costs); for sharebufd variants also the
# daemon's hop histograms (`sharebufctl latency`: wake-up, ring → RX, RX → queued, RX → sent, per
# direction); for sharebufd, sharebuf-floor and Open vSwitch their CPU time over 10 s with no
# traffic. With --perf, `perf sched` records one
# sharebufd repetition and reports how long its woken threads waited for a CPU (sch_delay) and
# how long they were off CPU. With --trace, the first repetition of every switch (the bridge too)
# is recorded with kernel tracepoints (network receive/transmit, wake-ups, context switches, poll
# and sendmmsg) and each exchange split into phases: host 1 sends, the switch forwards the
# request (for sharebufd: the wake-up, the wait for a CPU, poll()'s return, its own code,
# sendmmsg), host 2 answers, the switch forwards the reply (bench/lib/exchange_phases.py).
# The switch's CPU share is read twice: while the pings run (light load: what a polling mode
# spends between frames) and over 10 s with no traffic (idle).
# --ping-cpu N pins the ping to CPU N. Writes docs/measurements/idle-latency-results.md and .jsonl
# (--report NAME: docs/measurements/NAME.md and .jsonl instead, to keep the recorded run), and
# what each switch ran (sharebufd's effective configurations) into the folder of that name.
# --baseline DIR: the sharebufd of another build directory runs the NAMEs ending in -baseline
# (sharebufd-baseline, sharebufd-xdp2-busypoll-baseline: that variant's configuration), to
# compare a change with the build before it in one run.
#   bench/idle_latency.sh [--build DIR] [--baseline DIR] [--reps N] [--only NAME[,NAME]] [--perf]
#                         [--trace] [--ping-cpu N] [--interval MS] [--report NAME]
# NAMEs: bridge, sharebufd (defaults), sharebufd-nopark (rx_park_after = 0: one RX worker per
# port at idle too), sharebufd-1rx (rx_threads = 1), sharebufd-rt (realtime_priority = 10), and
# the others of bench/lib/switches.sh.
# Needs root and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/testbed.sh
source "$here/../scripts/testbed.sh"
# shellcheck source=lib/switches.sh
source "$here/lib/switches.sh"

cmdline="$*"
build=$TB_ROOT/build reps=3 only="bridge,sharebufd,sharebufd-nopark,sharebufd-1rx" perf=0 trace=0
ping_cpu="" interval_ms=10 report=idle-latency-results
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --baseline)
      [ -x "${2:-}/mgmt/sharebufd" ] || { echo "--baseline: a build directory with mgmt/sharebufd" >&2; exit 2; }
      export SHAREBUFD_BASELINE=$2/mgmt/sharebufd; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --perf) perf=1; shift ;;
    --trace) trace=1; shift ;;
    --ping-cpu)
      [[ ${2:-} =~ ^[0-9]+$ ]] && [ "$2" -lt "$(nproc)" ] || { echo "--ping-cpu: a CPU number below $(nproc)" >&2; exit 2; }
      ping_cpu=$2; shift 2 ;;
    --interval)
      [[ ${2:-} =~ ^[0-9]+$ ]] && [ "$2" -ge 2 ] && [ "$2" -le 1000 ] || { echo "--interval: milliseconds between pings, 2 to 1000" >&2; exit 2; }
      interval_ms=$2; shift 2 ;;
    --report)
      [[ ${2:-} =~ ^[a-z0-9][a-z0-9-]*$ ]] || { echo "--report: a file name (a-z, 0-9, -), written into docs/measurements/" >&2; exit 2; }
      report=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "idle_latency.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
export SHAREBUFD=$build/mgmt/sharebufd SHAREBUFCTL=$build/mgmt/sharebufctl
[ -x "$SHAREBUFD" ] || { echo "build first: ./run.sh build" >&2; exit 1; }
[ "$perf$trace" = 00 ] || command -v perf >/dev/null || { echo "--perf and --trace need perf (linux-perf)" >&2; exit 1; }
[ "$perf$trace" != 11 ] || { echo "--perf and --trace each record a repetition; use one" >&2; exit 2; }
# The trace filters poll and sendmmsg by their x86-64 system call numbers (7, 307), as does
# bench/lib/exchange_phases.py.
[ "$trace" -eq 0 ] || [ "$(uname -m)" = x86_64 ] || { echo "--trace knows x86-64 system call numbers only" >&2; exit 2; }

tb_init
tb_create 2 cubic 0 200ms
results="$TB_DIR/results.jsonl"
# What each switch ran, beside the table (bench_stop_switch writes it).
bench_keep_in "$here/../docs/measurements/$report"
: >"$results"

measure() {
  local name=$1 rep=$2 rtts lat="{}" idle_cpu=null perf_json=null phases=null trace_pid=""
  if [[ $name == sharebufd* ]]; then tb_ctl counters.reset >/dev/null; fi
  if [ "$perf" -eq 1 ] && [[ $name == sharebufd* ]] && [ "$rep" -eq 1 ]; then
    perf sched record -q -o "$TB_DIR/perf.data" -- sleep 6 >/dev/null 2>&1 &
    local perf_pid=$!
    sleep 0.5
  fi
  if [ "$trace" -eq 1 ] && [ "$rep" -eq 1 ]; then
    # poll (7) and sendmmsg (307) only: every other system call would add its own overhead.
    perf record -q -a -o "$TB_DIR/trace.data" -e net:netif_rx -e net:net_dev_start_xmit \
      -e sched:sched_wakeup -e sched:sched_switch \
      -e raw_syscalls:sys_enter --filter 'id == 7 || id == 307' \
      -e raw_syscalls:sys_exit --filter 'id == 7 || id == 307' -- sleep 8 >/dev/null 2>&1 &
    trace_pid=$!
    sleep 1  # perf needs a moment to open its events on every CPU
  fi
  # The switch's CPU time while the pings run (see below for whose).
  local cpu_pid ping_ticks=null ping_ns t_ping
  cpu_pid=$(bench_switch_pid "$name")
  [ -z "$cpu_pid" ] || ping_ticks=$(bench_cpu_ticks "$cpu_pid")
  t_ping=$(date +%s%N)
  rtts=$(tb_exec 1 ${ping_cpu:+taskset -c "$ping_cpu"} ping -c 500 -i "$(awk -v ms="$interval_ms" 'BEGIN { print ms / 1000 }')" -W 1 "$(tb_ip 2)" | sed -n 's/.*time=\([0-9.]*\) ms/\1/p' | tr '\n' ' ')
  ping_ns=$(( $(date +%s%N) - t_ping ))
  [ "$ping_ticks" = null ] || ping_ticks=$(( $(bench_cpu_ticks "$cpu_pid") - ping_ticks ))
  if [ -n "${perf_pid:-}" ]; then
    wait "$perf_pid" || true
    perf_pid=""
    perf sched timehist -i "$TB_DIR/perf.data" --pid "$TB_SWITCH_PID" 2>/dev/null \
      >"$TB_DIR/timehist-$name.txt" || true
    perf_json=$(/usr/bin/python3 "$here/lib/sched_delays.py" "$TB_DIR/timehist-$name.txt")
  fi
  if [ -n "$trace_pid" ]; then
    wait "$trace_pid" || true
    perf script --ns -F comm,tid,cpu,time,event,trace -i "$TB_DIR/trace.data" 2>/dev/null \
      >"$TB_DIR/trace-$name.txt" || true
    phases=$(/usr/bin/python3 "$here/lib/exchange_phases.py" "$TB_DIR/trace-$name.txt" "$interval_ms")
  fi
  if [[ $name == sharebufd* ]]; then
    lat=$(tb_ctl --json latency 2>/dev/null || echo "{}")  # "{}": a daemon without hop histograms
  fi
  # A user-space switch's CPU time at idle: sharebufd's, sharebuf-floor's, or ovs-vswitchd's
  # (its PMD thread polls whether traffic flows or not).
  if [ -n "$cpu_pid" ]; then
    local t0
    t0=$(bench_cpu_ticks "$cpu_pid")
    sleep 10
    idle_cpu=$(( $(bench_cpu_ticks "$cpu_pid") - t0 ))
  fi
  /usr/bin/python3 "$here/lib/idle_latency_row.py" "$name" "$rep" "$rtts" "$lat" "$idle_cpu" \
    "$perf_json" "$(getconf CLK_TCK)" "$(bench_switch_label "$name")" "$phases" "$interval_ms" "$ping_ticks" "$ping_ns" >>"$results"
  tail -1 "$results" | cut -c1-200 >&2
}

IFS=, read -r -a switches <<<"$only"
bench_interleave "$reps" measure "${switches[@]}"
cp "$results" "$here/../docs/measurements/$report.jsonl"
/usr/bin/python3 "$here/lib/idle_latency_report.py" "$results" "$reps" "$ping_cpu" --args="$cmdline" \
  >"$here/../docs/measurements/$report.md"
cat "$here/../docs/measurements/$report.md"
