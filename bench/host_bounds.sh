#!/usr/bin/env bash
# What this host allows any switch, measured beside the Linux bridge on one two-host testbed
# (offloads off, no shaping), interleaved, per repetition:
#   bridge     64-byte frames from host 1 through a Linux bridge (sharebuf-blaster, one thread);
#              TCP (iperf3, 1 stream) and how busy both cores are meanwhile
#   tx-only    no switch: sharebuf-blaster sends 64-byte frames out of the switch namespace's
#              port p2 straight to host 2, i.e. only what a switch's sending core must do per frame
#              (sendmmsg on AF_PACKET, the skb, the receiver's kernel); no switch that sends from
#              one core can deliver more
#   tx-8       the same, 8 frames per sendmmsg instead of 64 (sharebuf-blaster --batch 8): what a
#              call's own cost adds per frame when calls are short, as sharebufd's are below
#              saturation (about 9 frames per call at 700 kpps)
#   tx-ring    the same through a PACKET_TX_RING (sharebuf-blaster --tx-ring): what sending that
#              way, instead of sendmmsg, would save a switch
#   sharebufd  the same 64-byte and TCP runs through sharebufd (cs, defaults), and through the
#              other variants --switches names (bench/lib/switches.sh)
# Writes docs/measurements/host-bounds-results.md (and DIR/results.jsonl); docs/datapath-latency.md reads it.
# What each switch ran (sharebufd's effective configurations): docs/measurements/host-bounds-results/.
#   bench/host_bounds.sh [--build DIR] [--reps N] [--seconds S] [--switches NAME[,NAME]]
# Needs root and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/testbed.sh
source "$here/../scripts/testbed.sh"
# shellcheck source=lib/switches.sh
source "$here/lib/switches.sh"
# shellcheck source=lib/host_counters.sh
source "$here/lib/host_counters.sh"

build=$TB_ROOT/build reps=3 seconds=5 switches=sharebufd
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --switches) switches=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "host_bounds.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
export SHAREBUFD=$build/mgmt/sharebufd
blaster=$build/tools/sharebuf-blaster
[ -x "$blaster" ] || { echo "build first: ./run.sh build" >&2; exit 1; }

tb_init
tb_create 2 cubic 0 200ms
results="$TB_DIR/results.jsonl"
# What each switch ran, beside the table (bench_stop_switch writes it).
bench_keep_in "$here/../docs/measurements/host-bounds-results"
: >"$results"

# CPU ticks sharebufd used so far (all its threads; softirq work run inside its system calls,
# e.g. the receiving host's kernel inside sendmmsg, included), or 0 when no sharebufd runs.
switch_ticks() {
  if [ -n "$TB_SWITCH_PID" ]; then awk '{ print $14 + $15 }' "/proc/$TB_SWITCH_PID/stat"; else echo 0; fi
}

# blast NS IFACE [BLASTER OPTION...]: 64-byte frames for $seconds from namespace NS; prints one JSON object: the
# blaster's report, host 2's received frames before/after, [busy, total] jiffies of all CPUs
# before/after, and sharebufd's own ticks before/after.
blast() {
  local ns=$1 iface=$2 before after j0 j1 s0 s1 out
  shift 2
  before=$(rx_packets)
  s0=$(switch_ticks)
  j0=$(jiffies)
  out=$(tb_exec "$ns" "$blaster" --interface "$iface" --dst-mac "$(tb_mac 2)" --src-ip "$(tb_ip 1)" \
    --dst-ip "$(tb_ip 2)" --ethertype 0x88b5 --seconds "$seconds" "$@")
  j1=$(jiffies)
  s1=$(switch_ticks)
  sleep 0.5
  after=$(rx_packets)
  echo "{\"blaster\": $out, \"rx\": [$before, $after], \"jiffies\": [[${j0/ /, }], [${j1/ /, }]], \"switch_ticks\": [$s0, $s1], \"hz\": $(getconf CLK_TCK)}"
}

# tcp: iperf3, 1 stream, host 1 -> host 2; prints one JSON object: goodput and jiffies.
tcp() {
  local j0 j1 bps
  tb_bg 2 iperf3 -s -p 5201 -1 >/dev/null
  sleep 0.3
  j0=$(jiffies)
  bps=$(tb_exec 1 timeout $((seconds + 20)) iperf3 -c "$(tb_ip 2)" -p 5201 -t "$seconds" -J |
    jq .end.sum_received.bits_per_second)
  j1=$(jiffies)
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  echo "{\"bps\": $bps, \"jiffies\": [[${j0/ /, }], [${j1/ /, }]]}"
}

row() {  # row NAME LABEL REP BLAST [TCP]
  /usr/bin/python3 "$here/lib/host_bounds_report.py" row "$1" "$2" "$3" "$4" "${5:-null}" >>"$results"
  tail -1 "$results" >&2
}

IFS=, read -r -a names <<<"$switches"
for name in "${names[@]}"; do bench_switch_label "$name" >/dev/null || tb_die "unknown switch '$name'"; done
for rep in $(seq 1 "$reps"); do
  tb_log "== repetition $rep: bridge"
  bench_start_switch bridge
  b=$(blast 1 eth0)
  t=$(tcp)
  bench_stop_switch bridge
  row bridge "Linux bridge" "$rep" "$b" "$t"
  tb_log "== repetition $rep: tx-only (no switch; sent from p2)"
  row tx-only "no switch: one core sends straight to host 2" "$rep" "$(blast sw p2)"
  row tx-8 "the same, 8 frames per sendmmsg" "$rep" "$(blast sw p2 --batch 8)"
  row tx-ring "the same through a TX ring" "$rep" "$(blast sw p2 --tx-ring)"
  for name in "${names[@]}"; do
    tb_log "== repetition $rep: $name"
    bench_start_switch "$name"
    b=$(blast 1 eth0)
    t=$(tcp)
    bench_stop_switch "$name"
    row "$name" "$(bench_switch_label "$name")" "$rep" "$b" "$t"
  done
done

/usr/bin/python3 "$here/lib/host_bounds_report.py" table "$results" "$reps" "$seconds" \
  >"$here/../docs/measurements/host-bounds-results.md"
cat "$here/../docs/measurements/host-bounds-results.md"
