#!/usr/bin/env bash
# Forwarding benchmark: the same two-host testbed (offloads off, unshaped) switched by sharebufd,
# by a Linux bridge, and by Open vSwitch with its userspace datapath (netdev, AF_PACKET ports),
# back to back in one run. For each: iperf3 TCP goodput with 1 and 4 streams, the 64-byte frame
# rate delivered to the receiver (sharebuf-blaster as the source), and ping RTT p50/p99. Each
# measurement is repeated and the median reported, with the CPU time of both cores per 64-byte
# frame delivered. Writes bench/forwarding-results.md, the table between the fwd markers of docs/benchmarks.md,
# and docs/img/fwd-ping-cdf.png (ping RTT CDFs side by side).
#   bench/forwarding_bench.sh [--build DIR] [--reps N] [--seconds S] [--only NAME[,NAME]]
# Needs root; installs openvswitch-switch if missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../netns-scripts/lib/testbed.sh
source "$here/../netns-scripts/lib/testbed.sh"
# shellcheck source=lib/switches.sh
source "$here/lib/switches.sh"

build=$TB_ROOT/build reps=3 seconds=5 only="sharebufd,sharebufd-credence,sharebufd-nopark,sharebufd-1rx,bridge,ovs,ovs-afxdp"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "forwarding_bench.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
export SHAREBUFD=$build/mgmt/sharebufd
blaster=$build/tools/sharebuf-blaster
[ -x "$blaster" ] || { echo "build first: ./run.sh build" >&2; exit 1; }
if [[ $only == *ovs* ]] && ! command -v ovs-vswitchd >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openvswitch-switch >/dev/null
fi

tb_init
tb_create 2 cubic 0 200ms
results="$TB_DIR/results.jsonl"
rx_packets() { tb_exec 2 awk '$1 == "eth0:" { print $3 }' /proc/net/dev; }
# Busy jiffies of all CPUs (user + nice + system + irq + softirq + steal): the switch, the sender
# and the kernel's forwarding alike, so every switch is charged the same way.
busy_jiffies() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

measure() {
  local name=$1 rep=$2
  tb_bg 2 iperf3 -s -p 5201 -1 >/dev/null
  sleep 0.3
  local tcp1 tcp4
  tcp1=$(tb_exec 1 timeout $((seconds + 20)) iperf3 -c "$(tb_ip 2)" -p 5201 -t "$seconds" -J |
    /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['end']['sum_received']['bits_per_second'])")
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  tb_bg 2 iperf3 -s -p 5201 -1 >/dev/null
  sleep 0.3
  tcp4=$(tb_exec 1 timeout $((seconds + 20)) iperf3 -c "$(tb_ip 2)" -p 5201 -P 4 -t "$seconds" -J |
    /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['end']['sum_received']['bits_per_second'])")
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  local before after blast busy0 busy1
  before=$(rx_packets)
  busy0=$(busy_jiffies)
  blast=$(tb_exec 1 "$blaster" --interface eth0 --dst-mac "$(tb_mac 2)" --src-ip "$(tb_ip 1)" \
    --dst-ip "$(tb_ip 2)" --ethertype 0x88b5 --seconds "$seconds")
  busy1=$(busy_jiffies)
  sleep 0.5
  after=$(rx_packets)
  local rtts
  rtts=$(tb_exec 1 ping -c 300 -i 0.005 -W 1 "$(tb_ip 2)" | sed -n 's/.*time=\([0-9.]*\) ms/\1/p' | tr '\n' ' ')
  /usr/bin/python3 - "$name" "$rep" "$tcp1" "$tcp4" "$before" "$after" "$blast" "$seconds" "$rtts" \
    "$((busy1 - busy0))" "$(getconf CLK_TCK)" "$(bench_switch_label "$name")" >>"$results" <<'PY'
import json, statistics, sys
name, rep, tcp1, tcp4, before, after, blast, seconds, rtts, busy, hz, label = sys.argv[1:13]
blast = json.loads(blast)
r = sorted(float(x) * 1000 for x in rtts.split())
def pct(p):
    return r[min(len(r) - 1, int(round(p / 100 * (len(r) - 1))))]
print(json.dumps({
    "switch": name, "label": label, "rep": int(rep),
    "tcp1_mbps": float(tcp1) / 1e6, "tcp4_mbps": float(tcp4) / 1e6,
    "offered_kpps": blast["pps"] / 1e3,
    "delivered_kpps": (int(after) - int(before)) / blast["seconds"] / 1e3,
    "ping_p50_us": pct(50), "ping_p99_us": pct(99), "pings": len(r), "rtts_us": r,
    # CPU time of the whole machine (both cores) per frame delivered during the 64 B run.
    "cpu_ns_per_frame": int(busy) / int(hz) * 1e9 / max(1, int(after) - int(before))}))
PY
  tail -1 "$results" >&2
}

IFS=, read -r -a switches <<<"$only"
for name in "${switches[@]}"; do
  tb_log "== $name"
  bench_start_switch "$name"
  for rep in $(seq 1 "$reps"); do measure "$name" "$rep"; done
  bench_stop_switch "$name"
done

/usr/bin/python3 - "$results" "$reps" "$seconds" "$*" >"$here/forwarding-results.md" <<'PY'
import json, platform, statistics, sys, datetime, os
rows = [json.loads(l) for l in open(sys.argv[1])]
reps, seconds = sys.argv[2], sys.argv[3]
names = {r["switch"]: r["label"] for r in rows}  # bench/lib/switches.sh names them
print(f"{datetime.date.today()}, {os.cpu_count()} CPUs, Linux {platform.release()}; median of "
      f"{reps} runs of {seconds} s each; two hosts, offloads off, no shaping.  ")
print("Command: `bench/forwarding_bench.sh` (as root, after `./run.sh build`).")
print()
print("| switch | TCP 1 stream (Mbit/s) | TCP 4 streams (Mbit/s) | 64 B frames delivered (kpps) | offered (kpps) | CPU per 64 B frame (ns) | ping p50 (µs) | ping p99 (µs) |")
print("|---|---|---|---|---|---|---|---|")
med = {}
ours = ("sharebufd", "sharebufd-credence", "sharebufd-nopark", "sharebufd-rt", "sharebufd-1rx",
        "sharebufd-spin")
for key in ours + ("bridge", "ovs", "ovs-afxdp"):
    rs = [r for r in rows if r["switch"] == key]
    if not rs:
        continue
    m = {k: statistics.median(r[k] for r in rs) for k in
         ("tcp1_mbps", "tcp4_mbps", "delivered_kpps", "offered_kpps", "ping_p50_us", "ping_p99_us",
          "cpu_ns_per_frame")}
    med[key] = m
    print(f"| {names[key]} | {m['tcp1_mbps']:.0f} | {m['tcp4_mbps']:.0f} | {m['delivered_kpps']:.0f} | "
          f"{m['offered_kpps']:.0f} | {m['cpu_ns_per_frame']:.0f} | {m['ping_p50_us']:.0f} | "
          f"{m['ping_p99_us']:.0f} |")
print()
for key in ours:
    if key in med and "ovs" in med:
        s, o = med[key], med["ovs"]
        print(f"- {names[key]} / OVS userspace: TCP {s['tcp1_mbps'] / o['tcp1_mbps']:.2f}x (1 stream), "
              f"{s['tcp4_mbps'] / o['tcp4_mbps']:.2f}x (4 streams), 64 B frame rate "
              f"{s['delivered_kpps'] / o['delivered_kpps']:.2f}x (target: 2x).")
for key in ours:
    if key in med and "bridge" in med:
        s, b = med[key], med["bridge"]
        print(f"- {names[key]} / bridge: TCP {s['tcp1_mbps'] / b['tcp1_mbps']:.2f}x (1 stream), "
              f"{s['tcp4_mbps'] / b['tcp4_mbps']:.2f}x (4 streams) (target: at least 1x); 64 B frames "
              f"{s['delivered_kpps'] / b['delivered_kpps']:.2f}x (target: 1.5x); ping p50 "
              f"{s['ping_p50_us'] / b['ping_p50_us']:.2f}x (target: at most 1.5x), p99 "
              f"{s['ping_p99_us'] / b['ping_p99_us']:.2f}x (target: at most 2x).")
print("- The 64-byte source is one sender thread (sendmmsg on AF_PACKET) sharing the 2 cores with "
      "the switch; 'offered' is what it managed to send, so no switch can deliver more. Its frames "
      "carry EtherType 0x88b5, which the receiver's kernel discards at once, so the rate measures "
      "the switches rather than the receiver's UDP stack. CPU per frame is the busy time of both "
      "cores (sender and kernel included) over the frames delivered, so it holds when the host is "
      "noisy and the rates move.")
PY
/usr/bin/python3 - "$results" "$TB_ROOT/docs/img/fwd-ping-cdf.png" <<'PY'
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = [json.loads(l) for l in open(sys.argv[1])]
fig, ax = plt.subplots(figsize=(7, 4))
for key in dict.fromkeys(r["switch"] for r in rows):
    rtts = sorted(x for r in rows if r["switch"] == key for x in r.get("rtts_us", []))
    if rtts:
        ax.plot(rtts, [(i + 1) / len(rtts) for i in range(len(rtts))], label=key)
ax.set_xscale("log")
ax.set_xlabel("ping RTT (µs), all repetitions")
ax.set_ylabel("CDF")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
PY
cat "$here/forwarding-results.md"
/usr/bin/python3 "$TB_ROOT/netns-scripts/lib/doc_section.py" fwd "$here/forwarding-results.md"
