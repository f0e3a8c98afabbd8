#!/usr/bin/python3
"""E7, the trimming paper's Figure 13: ping RTTs to a receiver nine bulk senders also send to.

Reads OUT/rtt.csv (case, seq, rtt_ms; experiments/e7_fig13_latency.sh) and OUT/stats-CASE.json;
writes OUT/summary.md (RTT p50/p90/p99 and lost pings per case, the latency added against the
idle case in ms and in packet-times of a 1514-byte frame at 100 Mbit/s, p1's data queue drops and
trims) beside the paper's numbers, and OUT/rtt_cdf.png.
"""
import argparse
import csv
import json
import os
from collections import defaultdict
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import stats  # noqa: E402  (scripts/stats.py: the one percentile)

CASES = ("idle", "droptail", "trim")
LABEL = {
    "idle": "idle receiver",
    "droptail": "9 TCP senders, 200-packet drop-tail queue",
    "trim": "9 sharebuf-ndp senders, 12-packet queue that trims",
}
# The paper's Figure 13 (section 7): the 200-packet baseline adds about half a millisecond when
# the receiver is busy, the 12-packet trimming buffer 36 us.
PAPER_ADDED_MS = {"droptail": 0.5, "trim": 0.036}
PACKET_TIME_MS = 1514 * 8 / 100e6 * 1e3  # one full frame at 100 Mbit/s


def pct(values, p):
    return stats.percentile(values, p / 100)


def queue_counters(out, case):
    path = os.path.join(out, f"stats-{case}.json")
    if not os.path.exists(path):
        return None
    s = json.load(open(path))
    p1 = next(p for p in s["ports"] if p["interface"] == "p1")
    q = p1["queues"][1]
    return {"dropped": sum(q["dropped"].values()), "trimmed": q.get("trimmed", 0),
            "received": q["received"]}


def rows(rtts, counters):
    """One dict per case present: RTT percentiles, the p50 added against idle (ms and
    packet-times; None for idle or without an idle case), the paper's added latency, counters."""
    idle_p50 = pct(rtts["idle"], 50) if rtts.get("idle") else None
    out = []
    for c in (c for c in CASES if rtts.get(c)):
        v = rtts[c]
        added = pct(v, 50) - idle_p50 if idle_p50 is not None and c != "idle" else None
        out.append({"case": c, "pings": len(v), "p50": pct(v, 50), "p90": pct(v, 90),
                    "p99": pct(v, 99), "added_ms": added,
                    "added_packets": added / PACKET_TIME_MS if added is not None else None,
                    "paper_ms": PAPER_ADDED_MS.get(c), "queue": counters.get(c)})
    return out


def table(rs):
    lines = ["| case | pings | RTT p50 / p90 / p99 (ms) | added p50 (ms) | added (packet-times) "
             "| paper's added | p1 data queue: dropped / trimmed |", "|---|---|---|---|---|---|---|"]
    for r in rs:
        qc = r["queue"]
        lines.append(
            f"| {LABEL[r['case']]} | {r['pings']} | {r['p50']:.3f} / {r['p90']:.3f} / "
            f"{r['p99']:.3f} | "
            + (f"{r['added_ms']:.3f} | {r['added_packets']:.1f} | " if r["added_ms"] is not None
               else "– | – | ")
            + (f"{r['paper_ms']} ms | " if r["paper_ms"] is not None else "– | ")
            + (f"{qc['dropped']} / {qc['trimmed']} |" if qc else "– |"))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the folder e7_fig13_latency.sh wrote")
    a = ap.parse_args()
    rtts = defaultdict(list)
    for r in csv.DictReader(open(os.path.join(a.out, "rtt.csv"))):
        rtts[r["case"]].append(float(r["rtt_ms"]))
    cases = [c for c in CASES if c in rtts]
    counters = {c: queue_counters(a.out, c) for c in cases}
    text = ("Ping RTT from h11 to h1 (every 5 ms) while h2-h10 send to h1 through p1 at 100 Mbit/s "
            f"(a full frame is {PACKET_TIME_MS * 1e3:.0f} us on the wire).\n\n"
            + table(rows(rtts, counters)) + "\n")
    open(os.path.join(a.out, "summary.md"), "w").write(text)
    print(text)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("fig13_report.py: no matplotlib (python3-matplotlib): rtt_cdf.png not drawn")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for c in cases:
        v = sorted(rtts[c])
        ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], label=LABEL[c])
    ax.set_xscale("log")
    ax.set_xlabel("ping RTT (ms)")
    ax.set_ylabel("CDF")
    ax.set_title("Figure 13, live at 100 Mbit/s")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "rtt_cdf.png"), dpi=120)


if __name__ == "__main__":
    main()
