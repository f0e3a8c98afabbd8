#!/usr/bin/python3
"""Rows and table of bench/host_bounds.sh: what the host allows any switch, beside the bridge.

usage: host_bounds_report.py row NAME LABEL REP BLAST_JSON TCP_JSON|null
         one JSON line: offered and delivered 64 B rates, CPU per frame, busy cores during the 64 B
         and the TCP runs, TCP goodput
       host_bounds_report.py table RESULTS_JSONL REPS SECONDS
         the Markdown table (medians and ranges) and the bounds it gives
"""
import argparse
import datetime
import json
import os
import platform
import statistics

def busy_cores(jiffies):
    """Cores kept busy between two /proc/stat samples [[busy, total], [busy, total]]."""
    (b0, t0), (b1, t1) = jiffies
    return (b1 - b0) / max(1, t1 - t0) * (os.cpu_count() or 1)


def make_row(name, label, rep, blast, tcp):
    """One result row from the shell's JSON objects (tcp may be None)."""
    frames = blast["rx"][1] - blast["rx"][0]
    seconds = blast["blaster"]["seconds"]
    (b0, t0), (b1, t1) = blast["jiffies"]
    hz_total = max(1, t1 - t0) / (os.cpu_count() or 1) / seconds  # jiffies per second per CPU
    r = {
        "switch": name, "label": label, "rep": rep,
        "offered_kpps": blast["blaster"]["pps"] / 1e3,
        "delivered_kpps": frames / seconds / 1e3,
        "busy_cores_64b": busy_cores(blast["jiffies"]),
        "cpu_ns_per_frame": (b1 - b0) / hz_total * 1e9 / max(1, frames),
    }
    ticks = blast["switch_ticks"][1] - blast["switch_ticks"][0]
    if ticks > 0:
        # sharebufd's own CPU per frame, and the rate one core of it would carry: what it could
        # take from a source that is not the bottleneck.
        r["switch_ns_per_frame"] = ticks / blast["hz"] * 1e9 / max(1, frames)
        r["switch_capacity_kpps"] = 1e6 / r["switch_ns_per_frame"]
    if tcp is not None:
        r["tcp_mbps"] = tcp["bps"] / 1e6
        r["busy_cores_tcp"] = busy_cores(tcp["jiffies"])
    return r


def median_range(rows, key):
    v = [r[key] for r in rows if key in r]
    return (statistics.median(v), min(v), max(v)) if v else None


def table(rows, reps, seconds):
    out = [f"{datetime.date.today()}, {os.cpu_count()} CPUs, Linux {platform.release()}; median "
           f"(range) of {reps} interleaved repetitions of {seconds} s; two hosts, offloads off, "
           "no shaping.  ",
           "Command: `bench/host_bounds.sh` (as root, after `./run.sh build`).", "",
           "| | 64 B offered (kpps) | 64 B delivered (kpps) | CPU per frame, both cores (ns) | "
           "busy cores, 64 B | sharebufd's own CPU per frame (ns) | one core of it carries (kpps) | "
           "TCP 1 stream (Mbit/s) | busy cores, TCP |",
           "|---|---|---|---|---|---|---|---|---|"]
    med = {}
    labels = {r["switch"]: r["label"] for r in rows}
    for name in labels:
        rs = [r for r in rows if r["switch"] == name]
        if not rs:
            continue
        cells = []
        for key, fmt in (("offered_kpps", "{:.0f}"), ("delivered_kpps", "{:.0f}"),
                         ("cpu_ns_per_frame", "{:.0f}"), ("busy_cores_64b", "{:.2f}"),
                         ("switch_ns_per_frame", "{:.0f}"), ("switch_capacity_kpps", "{:.0f}"),
                         ("tcp_mbps", "{:.0f}"), ("busy_cores_tcp", "{:.2f}")):
            m = median_range(rs, key)
            if m is None:
                cells.append("–")
                continue
            med.setdefault(name, {})[key] = m[0]
            cells.append(f"{fmt.format(m[0])} ({fmt.format(m[1])}–{fmt.format(m[2])})")
        out.append(f"| {labels[name]} | " + " | ".join(cells) + " |")
    out.append("")
    b, t = med.get("bridge"), med.get("tx-only")
    if b and t:
        out.append(f"- One core doing only a switch's sending (no switch) delivers "
                   f"{t['delivered_kpps'] / b['delivered_kpps']:.2f}x the bridge's 64 B rate: a "
                   "switch whose sends take one core cannot deliver more (the rate target: 1.5x).")
    e = med.get("tx-8")
    if t and e:
        out.append(f"- Sending 8 frames per sendmmsg instead of 64 costs "
                   f"{e['cpu_ns_per_frame'] - t['cpu_ns_per_frame']:.0f} ns more per frame: the most "
                   "that longer calls could save a switch whose calls are short.")
    r = med.get("tx-ring")
    if t and r:
        saved = t["cpu_ns_per_frame"] - r["cpu_ns_per_frame"]
        out.append(f"- Sending through a TX ring instead of sendmmsg: "
                   f"{r['delivered_kpps'] / t['delivered_kpps']:.2f}x the rate, "
                   f"{abs(saved):.0f} ns {'less' if saved >= 0 else 'more'} CPU per frame.")
    for name, s in med.items():
        if name in ("bridge", "tx-only", "tx-8", "tx-ring"):
            continue
        if b:
            out.append(f"- {labels[name]}: {s['delivered_kpps'] / b['delivered_kpps']:.2f}x the "
                       f"bridge's 64 B rate, {s['tcp_mbps'] / b['tcp_mbps']:.2f}x its TCP goodput"
                       + (f"; {s['delivered_kpps'] / t['delivered_kpps']:.2f}x what the sending "
                          "core alone delivers" if t else "")
                       + (f"; its own CPU per frame would carry "
                          f"{s['switch_capacity_kpps'] / b['delivered_kpps']:.2f}x the bridge's "
                          "rate on one core." if "switch_capacity_kpps" in s else "."))
    if b and "busy_cores_tcp" in b:
        out.append(f"- While the bridge carries TCP, {b['busy_cores_tcp']:.2f} of "
                   f"{os.cpu_count()} cores are busy (iperf3 on both ends and the kernel): what is "
                   "left for a switch's own work.")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("row", help="one JSON line")
    r.add_argument("name")
    r.add_argument("label")
    r.add_argument("rep", type=int)
    r.add_argument("blast_json")
    r.add_argument("tcp_json", help='or "null"')
    t = sub.add_parser("table", help="the Markdown table")
    t.add_argument("results")
    t.add_argument("reps")
    t.add_argument("seconds")
    a = ap.parse_args(argv)
    if a.command == "row":
        tcp = None if a.tcp_json == "null" else json.loads(a.tcp_json)
        print(json.dumps(make_row(a.name, a.label, a.rep, json.loads(a.blast_json), tcp)))
    else:
        with open(a.results) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        print(table(rows, a.reps, a.seconds))


if __name__ == "__main__":
    main()
