#!/usr/bin/python3
"""E3, incast under web-search load: each run's results appended to the experiment's tables, and
the report over all runs.

usage: e3_report.py collect RUN_DIR OUT KEY
         KEY = queues,transport,policy,load,burst,rep. Appends the run's flows (RUN_DIR/bg*.csv and
         q.csv of sharebuf-tg) to OUT/flows.csv, its query completion times to OUT/queries.csv,
         and its p99 occupancy, drops, bytes sent and shaper catch-up (watch.csv, stats.json) to
         OUT/runs.csv; removes the per-run CSVs it consumed.
       e3_report.py report OUT README(0|1) SECONDS QUERY_RATE REPS
         OUT/summary.csv and summary.md (per cell: queries, p99 and p99.9 QCT, the p99's range
         over repetitions, short-flow p99 FCT, long-flow goodput, occupancy, drops, failed flows,
         shaper catch-up), qct_p99.png and qct_cdf.png; README=1 writes the E3 page's section
         (--tag: which) and keeps the files it was made from under docs/runs/e3/TAG.
"""
import argparse
import csv
import datetime
import glob
import json
import os
import shutil
import statistics
from collections import defaultdict
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import doc_section  # noqa: E402
import effective_setup  # noqa: E402
import run_record  # noqa: E402
import stats  # noqa: E402  (scripts/stats.py: the one percentile)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
KEY = ("queues", "transport", "policy", "load", "burst")


def pct(v, p):
    """The p-quantile (0-1) of v: scripts/stats.py's percentile."""
    return stats.percentile(v, p)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def key(r):
    return tuple(r[k] for k in KEY)


def collect(d, out, key):
    with open(f"{out}/flows.csv", "a") as f:
        # The query generator's own flows too (kind "query"), so that a failed response counts.
        for path in glob.glob(f"{d}/bg*.csv") + glob.glob(f"{d}/q.csv"):
            for r in csv.DictReader(open(path)):
                f.write(f"{key},{r['kind']},{r['bytes']},{r['fct_ms']},{r['ok']}\n")
            os.remove(path)
    qpath = f"{d}/q.csv.queries.csv"
    with open(f"{out}/queries.csv", "a") as f:
        if os.path.exists(qpath):
            for r in csv.DictReader(open(qpath)):
                f.write(f"{key},{r['qct_ms']}\n")
            os.remove(qpath)
    occ = {}
    for r in csv.DictReader(open(f"{d}/watch.csv")):
        occ[r["t_s"]] = int(r["total_cells"])
    v = sorted(occ.values()) or [0]
    s = json.load(open(f"{d}/stats.json"))
    drops = lambda qs: sum(sum(q["dropped"].values()) for q in qs)
    qs = [q for p in s["ports"] for q in p["queues"]]
    p1 = [q for p in s["ports"] if p["interface"] == "p1" for q in p["queues"]]
    with open(f"{out}/runs.csv", "a") as f:
        f.write(f"{key},{v[min(len(v) - 1, int(0.99 * len(v)))]},{drops(qs)},{drops(p1)},{sum(q['received'] for q in qs)},"
                f"{sum(p['tx_bytes'] for p in s['ports'])},{sum(p['shaper_catchup_bytes'] for p in s['ports'])}\n")


RECORD_FILES = ("runs.csv", "queries.csv", "meta.json")


def record_dir(tag):
    return os.path.join(ROOT, "docs", "runs", "e3", tag)


def summarize(out):
    """Per cell (KEY), in the runs' order: the summary row, and every query's completion time by
    repetition."""
    q, q_rep, short, long_, failed, order = (defaultdict(list), defaultdict(lambda: defaultdict(list)),
                                             defaultdict(list), defaultdict(list), defaultdict(int), [])
    occ, drops, p1_drops = defaultdict(list), defaultdict(int), defaultdict(int)
    tx, catchup = defaultdict(int), defaultdict(int)
    for r in read_csv(f"{out}/runs.csv"):
        k = key(r)
        if k not in order: order.append(k)
        occ[k].append(int(r["occ_p99_cells"]))
        drops[k] += int(r["drops"])
        p1_drops[k] += int(r["p1_drops"])
        tx[k] += int(r["tx_bytes"])
        catchup[k] += int(r["catchup_bytes"])
    for r in read_csv(f"{out}/queries.csv"):
        q[key(r)].append(float(r["qct_ms"]))
        q_rep[key(r)][r["rep"]].append(float(r["qct_ms"]))
    for r in run_record.read_rows(out, "flows.csv"):
        k = key(r)
        if r["ok"] != "1":
            failed[k] += 1
        elif r["kind"] == "short":
            short[k].append(float(r["fct_ms"]))
        elif r["kind"] == "long":
            long_[k].append(int(r["bytes"]) * 8 / (float(r["fct_ms"]) / 1e3) / 1e6)
    rows = []
    for k in order:
        per_rep = [pct(v, 0.99) for v in q_rep[k].values()]
        rows.append(list(k) + [len(q[k]), pct(q[k], 0.99), min(per_rep, default=float("nan")),
                               max(per_rep, default=float("nan")), pct(q[k], 0.999), len(short[k]),
                               pct(short[k], 0.99),
                               statistics.mean(long_[k]) if long_[k] else float("nan"), max(occ[k]),
                               drops[k], p1_drops[k], failed[k],
                               100 * catchup[k] / tx[k] if tx[k] else 0.0])
    return order, rows, q, q_rep


def mean_qct_text(order, q, q_rep):
    """Mean query completion time per load and policy (the FB paper's metric), each repetition's
    mean in brackets, and each policy's ratio to DT's repetition by repetition."""
    panels = list(dict.fromkeys((k[0], k[1], k[4]) for k in order))
    policies = list(dict.fromkeys(k[2] for k in order))
    parts = []
    for qm, tr, b in panels:
        loads = list(dict.fromkeys(k[3] for k in order if (k[0], k[1], k[4]) == (qm, tr, b)))
        lines = [f"Mean query completion time, {qm} queue(s), {tr}, burst {b} of B (all queries of a "
                 "cell; in brackets each repetition's mean, each repetition replaying the same query "
                 "arrivals for every policy):", "",
                 "| load | " + " | ".join(policies) + " |", "|---" * (len(policies) + 1) + "|"]
        ratios = defaultdict(list)
        for load in loads:
            cells = []
            for p in policies:
                k = (qm, tr, p, load, b)
                if not q.get(k):
                    cells.append("—")
                    continue
                reps = sorted(q_rep[k], key=int)
                means = [statistics.mean(q_rep[k][r]) for r in reps]
                cells.append(f"{statistics.mean(q[k]):.1f} ms ("
                             + ", ".join(f"{m:.1f}" for m in means) + ")")
                d = (qm, tr, "dt", load, b)
                if p != "dt" and q.get(d):
                    r_of = [statistics.mean(q_rep[k][r]) / statistics.mean(q_rep[d][r])
                            for r in reps if q_rep[d].get(r)]
                    ratios[p].append(" and ".join(f"{x:.2f}" for x in r_of) + f" at load {load}")
            lines.append(f"| {load} | " + " | ".join(cells) + " |")
        if ratios:
            lines += ["", "Against dt, repetition by repetition (mean QCT ratio, < 1: better than dt): "
                      + "; ".join(f"{p} " + ", ".join(v) for p, v in ratios.items()) + "."]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def render(out):
    """The page section from the runs' files under OUT alone (a record renders the same)."""
    with open(f"{out}/meta.json") as f:
        meta = json.load(f)
    order, rows, q, q_rep = summarize(out)
    lines = ["| queues | transport | load | burst (of B) | policy | queries | p99 QCT | p99 QCT per rep (min–max) | p99.9 QCT | short flows | p99 short FCT | long-flow goodput (mean) | p99 occupancy (max over reps) | drops (at p1) | failed flows | shaper catch-up |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        qm, tr, p, l, b = row[:5]
        lines.append(f"| {qm} | {tr} | {l} | {b} | {p} | {row[5]} | {row[6]:.1f} ms | {row[7]:.0f}–{row[8]:.0f} ms | {row[9]:.1f} ms | "
                     f"{row[10]} | {row[11]:.1f} ms | {row[12]:.1f} Mbit/s | {row[13]} | {row[14]} ({row[15]}) | {row[16]} | {row[17]:.1f} % |")
    stamp = (f"Produced by `experiments/e3_incast.sh` on {meta['date']} ({meta['cpus']} CPUs): "
             f"8 hosts, 100 Mbit/s, 21000 cells, {meta['seconds']} s per run, {meta['query_rate']} queries/s, "
             f"{meta['reps']} repetition(s) per cell (percentiles pool the repetitions). Shaper catch-up: "
             f"the share of the bytes sent whose shaper credit was earned while the host ran an egress "
             f"thread late (see How it works, Shaper).")
    parts = ["\n".join(lines), stamp]
    if meta.get("mean_qct"):
        parts.append(mean_qct_text(order, q, q_rep))
    setup = effective_setup.setup_table(out, run_folders=False)  # not e4/ (--record's replay)
    if setup:
        parts.append(setup)
    return "\n\n".join(parts) + "\n", rows


def record(out, tag, dest=None):
    """Copies the files render() reads to DEST (docs/runs/e3/TAG): runs.csv, queries.csv,
    meta.json, flows.csv gzipped and the effective configurations."""
    dest = dest or record_dir(tag)
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    for name in RECORD_FILES + tuple(os.path.basename(p) for p in glob.glob(f"{out}/effective*.toml")):
        shutil.copy(os.path.join(out, name), os.path.join(dest, name))
    run_record.gzip_copy(f"{out}/flows.csv", os.path.join(dest, "flows.csv.gz"))
    return dest


def report(out, readme, seconds, qrate, reps, tag="e3"):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    if not os.path.exists(f"{out}/meta.json"):
        with open(f"{out}/meta.json", "w") as f:
            json.dump({"date": str(datetime.date.today()), "cpus": os.cpu_count(),
                       "seconds": seconds, "query_rate": qrate, "reps": reps,
                       # The E3 page's first section predates the mean-QCT tables.
                       "mean_qct": tag != "e3"}, f, indent=1)
            f.write("\n")
    body, rows = render(out)
    order, _rows, q, _q_rep = summarize(out)
    with open(f"{out}/summary.csv", "w") as f:
        w = csv.writer(f)
        w.writerow(list(KEY) + ["queries", "qct_p99_ms", "qct_p99_rep_min_ms", "qct_p99_rep_max_ms", "qct_p999_ms", "short_flows",
                                "short_fct_p99_ms", "long_goodput_mbps", "occ_p99_cells", "drops", "p1_drops", "failed_flows",
                                "shaper_catchup_pct"])
        w.writerows(rows)
    with open(f"{out}/summary.md", "w") as f:
        f.write(body)

    # p99 QCT bars with the per-repetition range as error bars.
    fig, ax = plt.subplots(figsize=(max(8, 0.45 * len(rows)), 3.8))
    labels = [f"{r[2]}\n{r[0][0]}/{r[1][0]} {r[3]}/{r[4]}" for r in rows]
    err = [[max(0, r[6] - r[7]) for r in rows], [max(0, r[8] - r[6]) for r in rows]]
    ax.bar(range(len(rows)), [r[6] for r in rows], yerr=err, capsize=2, color="tab:red", label="p99 QCT (range over repetitions)")
    ax.set_xticks(range(len(rows)), labels, fontsize=6)
    ax.set_ylabel("ms")
    ax.set_title("E3: p99 query completion time (policy, queues s/m / transport c/e, load/burst)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{out}/qct_p99.png", dpi=110)

    # QCT CDF per policy, one panel per (queues, transport, load, burst).
    panels = []
    for k in order:
        if k[:2] + k[3:] not in panels: panels.append(k[:2] + k[3:])
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.4), squeeze=False, sharey=True)
    for ax, (qm, tr, l, b) in zip(axes[0], panels):
        for k in order:
            if (k[0], k[1], k[3], k[4]) != (qm, tr, l, b) or not q[k]:
                continue
            v = sorted(q[k])
            ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], label=k[2], lw=1.2)
        ax.set_xscale("log")
        ax.set_title(f"{qm} queue(s), {tr}, load {l}, burst {b}", fontsize=8)
        ax.set_xlabel("query completion time (ms)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("CDF")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(f"{out}/qct_cdf.png", dpi=110)
    print(body)
    if readme:
        doc_section.write_section(tag, body, [f"{out}/qct_p99.png", f"{out}/qct_cdf.png"])
        print(f"section {tag} written; its runs kept in {os.path.relpath(record(out, tag), ROOT)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="append one run's results")
    c.add_argument("run_dir")
    c.add_argument("out")
    c.add_argument("key", help="queues,transport,policy,load,burst,rep")
    r = sub.add_parser("report", help="the report over all runs")
    r.add_argument("out")
    r.add_argument("readme", choices=("0", "1"))
    r.add_argument("seconds")
    r.add_argument("query_rate")
    r.add_argument("reps")
    r.add_argument("--tag", default="e3", help="the page section README=1 writes (e3, e3-baselines, e3ecn)")
    a = ap.parse_args(argv)
    if a.command == "collect":
        collect(a.run_dir, a.out, a.key)
    else:
        report(a.out, a.readme == "1", a.seconds, a.query_rate, a.reps, a.tag)


if __name__ == "__main__":
    main()
