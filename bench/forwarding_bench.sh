#!/usr/bin/env bash
# Forwarding benchmark: the same two-host testbed (offloads off, unshaped) switched by sharebufd,
# by a Linux bridge, by Open vSwitch with its userspace datapath (netdev, AF_PACKET ports), and
# by sharebuf-floor (sharebufd's AF_PACKET port I/O with nothing between: the floor of a switch
# built that way) and by the kernel's XDP redirect between the same veths (no switch), in one run, the repetitions interleaved. For each: iperf3 TCP goodput with 1 and 4 streams, the
# 64-byte frame rate delivered to the receiver (sharebuf-blaster as the source), and ping RTT
# p50/p99. Each measurement is repeated and the median reported, with the CPU time of both cores
# per 64-byte frame delivered. Writes docs/measurements/forwarding-results.md, the table between the fwd markers of docs/benchmarks.md,
# and docs/img/fwd-ping-cdf.png (ping RTT CDFs side by side). For sharebufd, also its hop
# histograms (wake-up, ring → RX, RX → queued, RX → sent per port) over the 64-byte flood and
# over the pings, each reset before. Over the TCP runs, the segments the receiver queued out of
# order (every switch) and, for sharebufd, the frames it took out of their arrival order.
# What each switch ran goes beside the table, in docs/measurements/forwarding-results/: sharebufd's
# effective configurations (effective-NAME.toml), sharebuf-floor's command lines.
# --baseline DIR adds sharebufd-baseline, the sharebufd of another build directory (a before/after
# comparison, interleaved in one run); --report NAME writes docs/measurements/NAME.md, NAME.jsonl
# and NAME/ instead, leaving the rest of docs/ as it is (to keep a recorded run).
#   bench/forwarding_bench.sh [--build DIR] [--reps N] [--seconds S] [--only NAME[,NAME]]
#                             [--baseline DIR] [--report NAME]
# Needs root; installs openvswitch-switch if missing.
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

cmdline="$*"
build=$TB_ROOT/build report="" reps=3 seconds=5 only="sharebufd,sharebufd-busypoll,sharebufd-xdp,sharebufd-xdp2-busypoll,sharebufd-percpu,sharebufd-credence,sharebufd-nopark,sharebufd-1rx,floor,floor-2t,bridge,ovs,ovs-afxdp,xdp-redirect"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --baseline) export SHAREBUFD_BASELINE=$2/mgmt/sharebufd; only="$only,sharebufd-baseline"; shift 2 ;;
    --report)
      [[ ${2:-} =~ ^[a-z0-9][a-z0-9-]*$ ]] || { echo "--report: a file name (a-z, 0-9, -), written into docs/measurements/" >&2; exit 2; }
      report=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "forwarding_bench.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
export SHAREBUFD=$build/mgmt/sharebufd SHAREBUFCTL=$build/mgmt/sharebufctl
blaster=$build/tools/sharebuf-blaster
[ -x "$blaster" ] || { echo "build first: ./run.sh build" >&2; exit 1; }
if [[ $only == *ovs* ]] && ! command -v ovs-vswitchd >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openvswitch-switch >/dev/null
fi

IFS=, read -r -a switches <<<"$only"
for name in "${switches[@]}"; do bench_switch_label "$name" >/dev/null || tb_die "unknown switch '$name'"; done

measurements=$TB_ROOT/docs/measurements
out=$measurements/${report:-forwarding-results}
tb_init
tb_create 2 cubic 0 200ms
results="$TB_DIR/results.jsonl"
# What each switch ran, beside the table (bench_stop_switch writes it).
bench_keep_in "$out"

# sharebufd's hop histograms over one phase: reset before it, read after ("{}" for the others).
hops_reset() { [[ $1 != sharebufd* ]] || tb_ctl counters.reset >/dev/null; }
hops_read() {
  if [[ $1 == sharebufd* ]]; then tb_ctl --json latency 2>/dev/null || echo "{}"; else echo "{}"; fi
}

# Out-of-order segments the receiver (host 2) queued: TcpExt TCPOFOQueue from its namespace's
# /proc/net/netstat. Losses cause them too, but a switch that reorders a flow adds many.
receiver_ofo() {
  tb_exec 2 awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) col[$i] = i; h = 1 } else print $col["TCPOFOQueue"] }' /proc/net/netstat
}

# Reordering over the TCP runs: the receiver's out-of-order segments (OFO_BEFORE: before them),
# and for sharebufd its RX frames and frames taken out of their arrival order (rx_out_of_order,
# per-CPU RX: datapath/rx_worker.h), summed over the ports.
order_read() {
  local name=$1 ofo=$(($(receiver_ofo) - $2))
  if [[ $name == sharebufd* ]]; then
    tb_ctl --json ports 2>/dev/null | jq -c --argjson ofo "$ofo" '{rx_frames: ([.[].rx_frames // 0] | add),
      rx_out_of_order: ([.[].rx_out_of_order // 0] | add), receiver_ofo: $ofo}' || echo "{\"receiver_ofo\": $ofo}"
  else
    echo "{\"receiver_ofo\": $ofo}"
  fi
}

measure() {
  local name=$1 rep=$2 ofo0
  hops_reset "$name"
  ofo0=$(receiver_ofo)
  tb_bg 2 iperf3 -s -p 5201 -1 >/dev/null
  sleep 0.3
  # Each TCP run's busy time of both cores and the frames host 2 took (its data segments).
  local tcp1 tcp4 b0 f0 tcp_cpu
  b0=$(busy_jiffies) f0=$(rx_packets)
  tcp1=$(tb_exec 1 timeout $((seconds + 20)) iperf3 -c "$(tb_ip 2)" -p 5201 -t "$seconds" -J |
    jq .end.sum_received.bits_per_second)
  tcp_cpu="\"tcp1_busy\": $(($(busy_jiffies) - b0)), \"tcp1_frames\": $(($(rx_packets) - f0))"
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  tb_bg 2 iperf3 -s -p 5201 -1 >/dev/null
  sleep 0.3
  b0=$(busy_jiffies) f0=$(rx_packets)
  tcp4=$(tb_exec 1 timeout $((seconds + 20)) iperf3 -c "$(tb_ip 2)" -p 5201 -P 4 -t "$seconds" -J |
    jq .end.sum_received.bits_per_second)
  tcp_cpu="{$tcp_cpu, \"tcp4_busy\": $(($(busy_jiffies) - b0)), \"tcp4_frames\": $(($(rx_packets) - f0))}"
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  local before after blast busy0 busy1 flood_lat tcp_order pid own0="" switch_cpu="{}"
  tcp_order=$(order_read "$name" "$ofo0")
  hops_reset "$name"
  before=$(rx_packets)
  busy0=$(busy_jiffies)
  # The switch's own threads' CPU over the flood too (none for the bridge and the redirect).
  pid=$(bench_switch_pid "$name")
  [ -z "$pid" ] || own0=$(bench_cpu_ticks "$pid")
  blast=$(tb_exec 1 "$blaster" --interface eth0 --dst-mac "$(tb_mac 2)" --src-ip "$(tb_ip 1)" \
    --dst-ip "$(tb_ip 2)" --ethertype 0x88b5 --seconds "$seconds")
  busy1=$(busy_jiffies)
  [ -z "$own0" ] || switch_cpu="{\"switch_busy\": $(($(bench_cpu_ticks "$pid") - own0))}"
  sleep 0.5
  after=$(rx_packets)
  flood_lat=$(hops_read "$name")
  hops_reset "$name"
  local rtts
  rtts=$(tb_exec 1 ping -c 300 -i 0.005 -W 1 "$(tb_ip 2)" | sed -n 's/.*time=\([0-9.]*\) ms/\1/p' | tr '\n' ' ')
  /usr/bin/python3 "$here/lib/forwarding_report.py" row "$name" "$rep" "$tcp1" "$tcp4" "$before" \
    "$after" "$blast" "$seconds" "$rtts" "$((busy1 - busy0))" "$(getconf CLK_TCK)" \
    "$(bench_switch_label "$name")" "$flood_lat" "$(hops_read "$name")" "$tcp_order" "$tcp_cpu" \
    "$switch_cpu" \
    >>"$results"
  tail -1 "$results" >&2
}

bench_interleave "$reps" measure "${switches[@]}"

cp "$results" "$out.jsonl"
/usr/bin/python3 "$here/lib/forwarding_report.py" table "$results" "$reps" "$seconds" --options="$cmdline" >"$out.md"
cat "$out.md"
echo "what each switch ran: $out/"
[ -z "$report" ] || exit 0
/usr/bin/python3 "$here/lib/forwarding_report.py" plot "$results" "$TB_ROOT/docs/img/fwd-ping-cdf.png"
/usr/bin/python3 "$TB_ROOT/scripts/doc_section.py" fwd "$out.md"
