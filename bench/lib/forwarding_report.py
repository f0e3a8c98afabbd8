#!/usr/bin/python3
"""The forwarding benchmark's rows, table and plot (bench/forwarding_bench.sh).

usage: forwarding_report.py row NAME REP TCP1_BPS TCP4_BPS RX_BEFORE RX_AFTER BLAST_JSON SECONDS
                                RTTS_MS BUSY_JIFFIES HZ LABEL [FLOOD_LATENCY_JSON PING_LATENCY_JSON
                                [TCP_ORDER_JSON [TCP_CPU_JSON [SWITCH_CPU_JSON]]]]
         one JSON line: goodputs, offered and delivered 64 B rates, ping p50/p99 and RTTs, CPU
         time of both cores per delivered frame, sharebufd's hop histograms
         (`sharebufctl --json latency`) over the 64 B flood and over the pings ("{}": none),
         reordering over the TCP runs: {"receiver_ofo": segments the receiver queued out of
         order} and for sharebufd "rx_frames", "rx_out_of_order" ("{}": none), and the CPU of
         each TCP run: {"tcp1_busy": jiffies, "tcp1_frames": frames the receiver took, and the
         same for tcp4} ("{}": none), and the switch's own threads' CPU over the 64 B flood:
         {"switch_busy": ticks} ("{}": a switch without a process, the bridge or XDP redirect)
       forwarding_report.py table RESULTS_JSONL REPS SECONDS [--options=OPTIONS]
         the Markdown table (medians per switch), a table of the spreads and the switch's own
         CPU per frame, and the ratios against OVS and the bridge;
         OPTIONS: the benchmark's command-line options, for the command it prints
       forwarding_report.py plot RESULTS_JSONL PNG
         ping RTT CDFs per switch
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_clock import clock_mhz, median_mhz, ns_and_cycles  # noqa: E402
from hop_histograms import hop_table, hops_of  # noqa: E402
from ping_rtts import percentile, rtts_us  # noqa: E402


def read_rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def row(argv):
    name, rep, tcp1, tcp4, before, after, blast, seconds, rtts, busy, hz, label, *rest = argv
    flood_lat, ping_lat, tcp_order, tcp_cpu, switch_cpu = (rest + ["{}"] * 5)[:5]
    tcp_cpu = json.loads(tcp_cpu) if tcp_cpu.strip() else {}
    own = json.loads(switch_cpu).get("switch_busy") if switch_cpu.strip() else None
    delivered = max(1, int(after) - int(before))
    blast = json.loads(blast)
    r = rtts_us(rtts)
    pct = lambda p: percentile(r, p)  # noqa: E731
    print(json.dumps({
        "switch": name, "label": label, "rep": int(rep),
        "tcp1_mbps": float(tcp1) / 1e6, "tcp4_mbps": float(tcp4) / 1e6,
        "offered_kpps": blast["pps"] / 1e3,
        "delivered_kpps": (int(after) - int(before)) / blast["seconds"] / 1e3,
        "ping_p50_us": pct(50), "ping_p99_us": pct(99), "pings": len(r), "rtts_us": r,
        # CPU time of the whole machine (both cores) per frame delivered during the 64 B run.
        "cpu_ns_per_frame": int(busy) / int(hz) * 1e9 / delivered,
        # The switch's own threads only (sharebufd's, the floor's, ovs-vswitchd's), per frame
        # delivered and as a share of one core over the flood.
        **({"switch_cpu_ns_per_frame": own / int(hz) * 1e9 / delivered,
            "switch_cpu_pct": own / int(hz) / blast["seconds"] * 100} if own is not None else {}),
        # The same during each TCP run, per frame the receiving host took (its data segments).
        **{f"{t}_cpu_ns_per_frame": tcp_cpu[f"{t}_busy"] / int(hz) * 1e9 / tcp_cpu[f"{t}_frames"]
           for t in ("tcp1", "tcp4") if tcp_cpu.get(f"{t}_frames")},
        "cpu_mhz": clock_mhz(),
        "hops_flood": hops_of(flood_lat), "hops_ping": hops_of(ping_lat),
        "tcp_order": json.loads(tcp_order) if tcp_order.strip() else {}}))


def table(argv):
    rows = read_rows(argv[0])
    reps, seconds = argv[1], argv[2]
    options = argv[3] if len(argv) > 3 else ""
    names = {r["switch"]: r["label"] for r in rows}  # bench/lib/switches.sh names them
    print(f"{datetime.date.today()}, {os.cpu_count()} CPUs, Linux {platform.release()}; median of "
          f"{reps} runs of {seconds} s each; two hosts, offloads off, no shaping.  ")
    print(f"Command: `bench/forwarding_bench.sh{' ' + options if options else ''}` (as root, after "
          "`./run.sh build`).")
    print()
    print("| switch | TCP 1 stream (Mbit/s) | TCP 4 streams (Mbit/s) | CPU per TCP segment, 1 / 4 streams (ns) | 64 B frames delivered (kpps) | offered (kpps) | CPU per 64 B frame (ns / cycles) | ping p50 (µs) | ping p99 (µs) |")
    print("|---|---|---|---|---|---|---|---|---|")
    med = {}
    order = ("sharebufd", "sharebufd-busypoll", "sharebufd-percpu", "sharebufd-credence", "sharebufd-nopark", "sharebufd-rt",
             "sharebufd-1rx", "sharebufd-spin", "floor", "floor-2t", "floor-spin", "bridge", "ovs",
             "ovs-afxdp")
    # NAME@ORDER ran on links in another order (bench/lib/switches.sh): listed after NAME, and
    # compared with the bridge and OVS on the same links where those ran too.
    present = list(dict.fromkeys(r["switch"] for r in rows))
    keys = sorted(present, key=lambda k: (order.index(k.split("@")[0]) if k.split("@")[0] in order
                                          else len(order), "@" in k, k))
    ours = tuple(k for k in keys if k.startswith("sharebufd"))
    floors = tuple(k for k in keys if k.startswith("floor"))

    def ref(key, base):
        other = base + key[key.index("@"):] if "@" in key else base
        return other if other in med else base

    for key in keys:
        rs = [r for r in rows if r["switch"] == key]
        if not rs:
            continue
        m = {k: statistics.median(r[k] for r in rs) for k in
             ("tcp1_mbps", "tcp4_mbps", "delivered_kpps", "offered_kpps", "ping_p50_us", "ping_p99_us",
              "cpu_ns_per_frame")}
        for t in ("tcp1", "tcp4"):  # rows from before these were measured have none
            vs = [r[f"{t}_cpu_ns_per_frame"] for r in rs if f"{t}_cpu_ns_per_frame" in r]
            if vs:
                m[f"{t}_cpu_ns_per_frame"] = statistics.median(vs)
        med[key] = m
        cpu = ns_and_cycles(m["cpu_ns_per_frame"], median_mhz(rs))
        tcp_cpu = " / ".join(f"{m[k]:.0f}" if k in m else "–"
                             for k in ("tcp1_cpu_ns_per_frame", "tcp4_cpu_ns_per_frame"))
        print(f"| {names[key]} | {m['tcp1_mbps']:.0f} | {m['tcp4_mbps']:.0f} | {tcp_cpu} | "
              f"{m['delivered_kpps']:.0f} | {m['offered_kpps']:.0f} | {cpu} | "
              f"{m['ping_p50_us']:.0f} | {m['ping_p99_us']:.0f} |")
    print()
    spread_table(rows, keys, names)
    print()
    for key in ours:
        if key in med and ref(key, "ovs") in med:
            s, o = med[key], med[ref(key, "ovs")]
            print(f"- {names[key]} / OVS userspace: TCP {s['tcp1_mbps'] / o['tcp1_mbps']:.2f}x (1 stream), "
                  f"{s['tcp4_mbps'] / o['tcp4_mbps']:.2f}x (4 streams), 64 B frame rate "
                  f"{s['delivered_kpps'] / o['delivered_kpps']:.2f}x (target: 2x).")
    for key in ours + floors:
        if key in med and ref(key, "bridge") in med:
            s, b = med[key], med[ref(key, "bridge")]
            cpu = [f"{s[k] / b[k]:.2f}x" for k in ("tcp1_cpu_ns_per_frame", "tcp4_cpu_ns_per_frame")
                   if k in s and k in b]
            print(f"- {names[key]} / bridge: TCP {s['tcp1_mbps'] / b['tcp1_mbps']:.2f}x (1 stream), "
                  f"{s['tcp4_mbps'] / b['tcp4_mbps']:.2f}x (4 streams) (target: at least 1x)"
                  + (f", at {' / '.join(cpu)} the bridge's CPU per segment" if len(cpu) == 2 else "")
                  + "; 64 B frames "
                  f"{s['delivered_kpps'] / b['delivered_kpps']:.2f}x (target: 1.5x); ping p50 "
                  f"{s['ping_p50_us'] / b['ping_p50_us']:.2f}x (target: at most 1.5x), p99 "
                  f"{s['ping_p99_us'] / b['ping_p99_us']:.2f}x (target: at most 2x).")
    # The floor (tools/floor_forwarder.cpp) is sharebufd's port I/O with nothing between: what
    # sharebufd costs beyond it is its own work, what the floor costs beyond the bridge is user
    # space on AF_PACKET.
    for key in floors:
        base = "sharebufd" + key[key.index("@"):] if "@" in key else "sharebufd"
        if key in med and base in med:
            s, f = med[base], med[key]
            print(f"- {names[base]} / {names[key]}: TCP {s['tcp1_mbps'] / f['tcp1_mbps']:.2f}x (1 "
                  f"stream), {s['tcp4_mbps'] / f['tcp4_mbps']:.2f}x (4 streams); 64 B frames "
                  f"{s['delivered_kpps'] / f['delivered_kpps']:.2f}x at "
                  f"{s['cpu_ns_per_frame'] / f['cpu_ns_per_frame']:.2f}x the CPU per frame; ping p50 "
                  f"{s['ping_p50_us'] / f['ping_p50_us']:.2f}x.")
    print("- The 64-byte source is one sender thread (sendmmsg on AF_PACKET) sharing the 2 cores with "
          "the switch; 'offered' is what it managed to send, so no switch can deliver more. Its frames "
          "carry EtherType 0x88b5, which the receiver's kernel discards at once, so the rate measures "
          "the switches rather than the receiver's UDP stack. CPU per frame is the busy time of both "
          "cores (sender and kernel included) over the frames delivered, so it holds when the host is "
          "noisy and the rates move; CPU per TCP segment likewise, over the frames the receiving "
          "host took during each TCP run (its data segments), both iperf3s included" + (
              f"; in cycles, that time at the clock /proc/cpuinfo gave during the run "
              f"({mhz:.0f} MHz; this host exposes no cycle counter)." if (mhz := median_mhz(rows))
              else "."))
    shown = [k for k in ours if k in med]
    for key in med:
        orders = [r["tcp_order"] for r in rows if r["switch"] == key and r.get("tcp_order")]
        if not orders:
            continue
        ofo = statistics.median(o.get("receiver_ofo", 0) for o in orders)
        line = (f"- {names[key]}: segments the receiver queued out of order during the TCP runs "
                f"(TcpExt TCPOFOQueue, median per run): {ofo:.0f}")
        frames = sum(o.get("rx_frames", 0) for o in orders)
        late = sum(o.get("rx_out_of_order", 0) for o in orders)
        if frames:
            line += (f"; frames sharebufd took after a later-received one of their flow (rx_out_of_order, "
                     f"all runs): {late} of {frames} ({100 * late / frames:.3f} %)")
        print(line + ".")
    for field, what in (("hops_flood", "during the 64 B flood"),
                        ("hops_ping", "during the pings (300, 5 ms apart)")):
        if not any(r.get(field) for r in rows if r["switch"] in shown):
            continue
        print()
        print(f"Per hop inside sharebufd {what} (µs, p50 / p99 of the daemon's histograms, reset "
              "before; median over the runs; buckets are within about 12 %):")
        print()
        print("\n".join(hop_table(rows, shown, names, field)))


def spread_table(rows, keys, names):
    """Each switch's range over the repetitions beside its median, and the CPU of its own
    threads per 64 B frame (the kernel's work in the senders' context is not in it; the bridge
    and the XDP redirect have no threads of their own)."""
    def cell(vs, fmt="{:.0f}"):
        vs = [v for v in vs if v is not None]
        if not vs:
            return "–"
        return f"{fmt.format(statistics.median(vs))} ({fmt.format(min(vs))}–{fmt.format(max(vs))})"
    print("Median (range over the repetitions), and what the switch's own threads spent over the "
          "64-byte flood:")
    print()
    print("| switch | TCP 1 stream (Mbit/s) | 64 B frames delivered (kpps) | CPU per 64 B frame, "
          "both cores (ns) | the switch's own CPU per 64 B frame (ns) | the switch's own CPU "
          "(% of a core) |")
    print("|---|---|---|---|---|---|")
    for key in keys:
        rs = [r for r in rows if r["switch"] == key]
        print(f"| {names[key]} | {cell(r['tcp1_mbps'] for r in rs)} | "
              f"{cell(r['delivered_kpps'] for r in rs)} | {cell(r['cpu_ns_per_frame'] for r in rs)} | "
              f"{cell(r.get('switch_cpu_ns_per_frame') for r in rs)} | "
              f"{cell(r.get('switch_cpu_pct') for r in rs)} |")


def plot(argv):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = read_rows(argv[0])
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
    fig.savefig(argv[1], dpi=110)


ROW_FIELDS = ("name", "rep", "tcp1_bps", "tcp4_bps", "rx_before", "rx_after", "blast_json",
              "seconds", "rtts_ms", "busy_jiffies", "hz", "label")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("row", help="one JSON line")
    for name in ROW_FIELDS:
        r.add_argument(name)
    r.add_argument("rest", nargs="*", metavar="FLOOD_LATENCY_JSON PING_LATENCY_JSON "
                   "[TCP_ORDER_JSON [TCP_CPU_JSON [SWITCH_CPU_JSON]]]")
    t = sub.add_parser("table", help="the Markdown table")
    t.add_argument("results")
    t.add_argument("reps")
    t.add_argument("seconds")
    t.add_argument("--options", default="", help="the benchmark's command-line options (give it "
                   "with '=': they start with --)")
    p = sub.add_parser("plot", help="ping RTT CDFs per switch")
    p.add_argument("results")
    p.add_argument("png")
    a = ap.parse_args(argv)
    if a.command == "row":
        if len(a.rest) not in (0, 2, 3, 4, 5):
            ap.error("row takes no latency JSON or FLOOD and PING, then TCP_ORDER, TCP_CPU and "
                     "SWITCH_CPU")
        row([getattr(a, f) for f in ROW_FIELDS] + a.rest)
    elif a.command == "table":
        table([a.results, a.reps, a.seconds] + ([a.options] if a.options else []))
    else:
        plot([a.results, a.png])


if __name__ == "__main__":
    main()
