#!/usr/bin/python3
"""E7, packet trimming under incast: the report over experiments/e7_trimming.sh's tables.

usage: e7_report.py OUT README(0|1) QUERIES SIZE
  Reads OUT/flows.csv and OUT/events.csv (sharebuf-ndp's rows with policy, mode and fan-in in
  front) and OUT/stats-POLICY.json; writes OUT/summary.csv and summary.md (per policy, mode and
  fan-in: query completion time mean and p99, flow completion time p99, retransmissions and
  their delay, trimmed headers and their one-way latency p50/p99, whole packets' one-way latency
  on their first transmission p50/p99, failed flows, and the Tofino
  approximation's counters per policy), header_latency_cdf.png and qct.png; README=1 writes the
  E7 page's results section and keeps what it was made from under docs/runs/e7/e7.

The section is render()'s, from the run's meta.json, summary.csv, stats-*.json and effective-*.toml
alone; record() keeps those (not flows.csv and events.csv, tens of megabytes: summary.csv is what
cells() made of them) and tests/python/test_results_pages.py makes the section again from them.
"""
import argparse
import csv
import datetime
import glob
import json
import os
import platform
from collections import defaultdict
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import doc_section  # noqa: E402
import effective_setup  # noqa: E402
import run_record  # noqa: E402
import stats  # noqa: E402  (scripts/stats.py: the one percentile)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RECORD_DIR = os.path.join(ROOT, "docs", "runs", "e7", "e7")
MODES = ("drop", "trim", "tofino", "dod")
MODE_LABEL = {"drop": "drop", "trim": "ideal trim", "tofino": "tofino-approx",
              "dod": "fixed meters + DoD"}


def pct(values, p):
    return stats.percentile(values, p / 100)


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def ms(ns):
    return ns / 1e6


def load(out):
    with open(f"{out}/flows.csv") as f:
        flows = list(csv.DictReader(f))
    with open(f"{out}/events.csv") as f:
        events = list(csv.DictReader(f))
    return flows, events


def cells(flows, events):
    """Per (policy, mode, fanin): the numbers of the table."""
    by = defaultdict(list)
    for r in flows:
        by[(r["policy"], r["mode"], int(r["fanin"]))].append(r)
    ev = defaultdict(lambda: defaultdict(list))
    for e in events:
        ev[(e["policy"], e["mode"], int(e["fanin"]))][e["kind"]].append(int(e["ns"]))
    rows = []
    for key in sorted(by, key=lambda k: (k[0], MODES.index(k[1]) if k[1] in MODES else 9, k[2])):
        rs = by[key]
        ok = [r for r in rs if r["failed"] == "0"]
        qct = defaultdict(int)
        for r in ok:
            qct[r["query"]] = max(qct[r["query"]], int(r["fct_ns"]))
        # A query with a failed flow has no completion time.
        failed_q = {r["query"] for r in rs if r["failed"] != "0"}
        qcts = [v for q, v in qct.items() if q not in failed_q]
        fcts = [int(r["fct_ns"]) for r in ok]
        e = ev[key]
        retx = e.get("nack_retx", []) + e.get("rto_retx", [])
        rows.append({
            "policy": key[0], "mode": key[1], "fanin": key[2],
            "queries": len(qcts),
            "qct_mean_ms": ms(mean(qcts)), "qct_p99_ms": ms(pct(qcts, 99)),
            "fct_p99_ms": ms(pct(fcts, 99)),
            "retx": len(retx), "rto_retx": len(e.get("rto_retx", [])),
            "retx_delay_p50_ms": ms(pct(retx, 50)), "retx_delay_p99_ms": ms(pct(retx, 99)),
            "headers": len(e.get("header", [])),
            "header_p50_ms": ms(pct(e.get("header", []), 50)),
            "header_p99_ms": ms(pct(e.get("header", []), 99)),
            "data_p50_ms": ms(pct(e.get("data", []), 50)),
            "data_p99_ms": ms(pct(e.get("data", []), 99)),
            "failed": sum(1 for r in rs if r["failed"] != "0"),
        })
    return rows, ev


def fmt(v, digits=2):
    return "–" if v != v else f"{v:.{digits}f}"


def table(rows):
    lines = ["| policy | mode | N | QCT mean (ms) | QCT p99 (ms) | FCT p99 (ms) | retx (timeout) "
             "| retx delay p50 / p99 (ms) | headers | header latency p50 / p99 (ms) "
             "| data latency p50 / p99 (ms) | failed |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['policy']} | {MODE_LABEL.get(r['mode'], r['mode'])} | {r['fanin']} "
            f"| {fmt(r['qct_mean_ms'])} | {fmt(r['qct_p99_ms'])} | {fmt(r['fct_p99_ms'])} "
            f"| {r['retx']} ({r['rto_retx']}) "
            f"| {fmt(r['retx_delay_p50_ms'])} / {fmt(r['retx_delay_p99_ms'])} | {r['headers']} "
            f"| {fmt(r['header_p50_ms'])} / {fmt(r['header_p99_ms'])} "
            f"| {fmt(r['data_p50_ms'])} / {fmt(r['data_p99_ms'])} | {r['failed']} |")
    return lines


def reasons(queue):
    """A queue's drops by reason, the non-zero ones."""
    d = {k: v for k, v in queue["dropped"].items() if v}
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"


def p1_counters(label, s):
    """One line: port p1's trimming counters in the stats snapshot `s`."""
    p1 = next(p for p in s["ports"] if p["interface"] == "p1")
    t = p1.get("tofino_approx", {})
    trim_q, q = p1["queues"][0], p1["queues"][1]
    return (
        f"- {label}: trimmed {q['trimmed']} (by the meters {t.get('ingress_trimmed', 0)}), "
        f"deflected {t.get('deflected', 0)} (not deflected: {t.get('deflect_dropped', 0)}, "
        f"recirculation port or shared buffer full; most frames it held: "
        f"{t.get('deflect_queue_peak', 'not recorded')}), notifications "
        f"{t.get('notifications', 0)}, state changes seen: to pessimistic "
        f"{t.get('to_pessimistic', 0)}, to half {t.get('to_half', 0)}, to optimistic "
        f"{t.get('to_optimistic', 0)}; trim queue: sent {trim_q['trimmed_sent']}, refused "
        f"{trim_q['trimmed_dropped']} (drops: {reasons(trim_q)}), into the header reserve "
        f"{trim_q.get('header_reserve', 0)}; returned to their senders {q['bounced']}; data "
        f"queue drops: {reasons(q)}.")


def tofino_counters(out):
    """p1's counters per policy and trimming mode (stats-POLICY-MODE.json, counters reset before
    each mode), or per policy over the whole run (stats-POLICY.json, older runs)."""
    lines = []
    runs = []
    for path in glob.glob(f"{out}/stats-*.json"):
        policy, _, mode = os.path.basename(path)[len("stats-"):-len(".json")].partition("-")
        runs.append((policy, MODES.index(mode) if mode in MODES else -1, mode, path))
    for policy, _, mode, path in sorted(runs):
        if mode == "drop":
            continue
        label = (f"{policy}, {MODE_LABEL.get(mode, mode)}, p1" if mode
                 else f"{policy}, p1 over the whole run")
        with open(path) as f:
            lines.append(p1_counters(label, json.load(f)))
    return lines


def plots(rows, ev, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = sorted(ev)
    policies = sorted({k[0] for k in keys})
    fanins = sorted({k[2] for k in keys})
    fig, axes = plt.subplots(1, len(fanins), figsize=(4.5 * len(fanins), 3.6), squeeze=False)
    for ax, n in zip(axes[0], fanins):
        for policy in policies:
            for mode, style in (("trim", "-"), ("tofino", "--"), ("dod", ":")):
                v = sorted(ev.get((policy, mode, n), {}).get("header", []))
                if not v:
                    continue
                ax.plot([x / 1e6 for x in v], [(i + 1) / len(v) for i in range(len(v))], style,
                        label=f"{policy}, {MODE_LABEL[mode]}")
        ax.set_title(f"N = {n}: trimmed headers")
        ax.set_xlabel("one-way latency (ms)")
        ax.set_ylabel("CDF")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(f"{out}/header_latency_cdf.png", dpi=110)
    plt.close(fig)
    fig, axes = plt.subplots(1, len(policies), figsize=(4.5 * len(policies), 3.6), squeeze=False)
    for ax, policy in zip(axes[0], policies):
        for mode in MODES:
            pts = [(r["fanin"], r["qct_p99_ms"]) for r in rows
                   if r["policy"] == policy and r["mode"] == mode]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=MODE_LABEL[mode])
        ax.set_title(f"{policy}: p99 query completion time")
        ax.set_xlabel("fan-in N")
        ax.set_ylabel("ms")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(f"{out}/qct.png", dpi=110)
    plt.close(fig)


def write_summary(out, rows):
    with open(f"{out}/summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["policy"])
        w.writeheader()
        w.writerows(rows)


def read_summary(out):
    """summary.csv's rows with cells()'s types (repr() of a float reads back exactly)."""
    rows = []
    with open(f"{out}/summary.csv") as f:
        for r in csv.DictReader(f):
            rows.append({k: (v if k in ("policy", "mode") else
                             float(v) if k.endswith("_ms") else int(v)) for k, v in r.items()})
    return rows


def render(out):
    """The section (setup table included) from meta.json, summary.csv, stats-*.json and the
    effective configurations alone."""
    with open(f"{out}/meta.json") as f:
        meta = json.load(f)
    queries, size = meta["queries"], meta["size"]
    lines = [f"{queries} incasts per cell, N flows of {size} B each from 4 senders into one "
             f"100 Mbit/s port (600-cell buffer); sharebuf-ndp with pulls paced at 100 Mbit/s. "
             f"A query completes with its last flow; the link alone needs "
             f"N x {size * 8 / 1e5:.2f} ms at 100 Mbit/s (payload only).", ""]
    lines += table(read_summary(out))
    lines += ["", *tofino_counters(out), "",
              f"Produced by `experiments/e7_trimming.sh` on {meta['date']} "
              f"({meta['host']}, {meta['cpus']} CPUs)."]
    text = "\n".join(lines) + "\n"
    setup = effective_setup.setup_table(out)
    return text + ("\n" + setup + "\n" if setup else ""), text


def record(out, dest=RECORD_DIR):
    """Copies what render() reads to DEST (docs/runs/e7/e7)."""
    return run_record.copy_fresh(out, dest, ["meta.json", "summary.csv"],
                                 lambda n: n.startswith("stats-") and n.endswith(".json"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("readme", choices=("0", "1"), help="1: write docs' e7 section and record its run")
    ap.add_argument("queries", type=int)
    ap.add_argument("size", type=int)
    a = ap.parse_args(argv)
    out, readme = a.out, a.readme == "1"
    flows, events = load(out)
    rows, ev = cells(flows, events)
    write_summary(out, rows)
    with open(f"{out}/meta.json", "w") as f:
        json.dump({"date": str(datetime.date.today()), "host": platform.node(),
                   "cpus": os.cpu_count(), "queries": a.queries, "size": a.size}, f, indent=1)
        f.write("\n")
    section, text = render(out)
    with open(f"{out}/summary.md", "w") as f:
        f.write(text)
    print(text)
    plots(rows, ev, out)
    if readme:
        doc_section.write_section("e7", section,
                                  [f"{out}/header_latency_cdf.png", f"{out}/qct.png"])
        print(f"section e7 written; its run kept in {os.path.relpath(record(out), ROOT)}")


if __name__ == "__main__":
    main()
