#!/usr/bin/python3
"""FCT tables and plots for the live experiments (E1, E2): reads OUT/flows.csv
(policy,rep,flow,bytes,fct_ms,ok) and OUT/runs.csv (policy,rep,udp_mbps,...), writes
summary.csv, summary.md, fct_cdf.png and fct_p99.png; with --readme, puts the table and the plots
in the page holding the <!-- eN:begin --> / <!-- eN:end --> markers (doc_section.py: README.md or
docs/; plots copied to docs/img/) and keeps the files the section was made from (flows.csv
gzipped, runs.csv, meta.json, the effective configurations) under docs/runs/<section>/, from
which tests/python/test_results_pages.py makes the section again (render()).
"""
import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import statistics
import sys
from collections import defaultdict

import matplotlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import stats  # noqa: E402  (scripts/stats.py: the one percentile)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import doc_section  # noqa: E402
import effective_setup  # noqa: E402
import run_record  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def record_dir(tag):
    return os.path.join(ROOT, "docs", "runs", tag)




def pct(v, p):
    return stats.percentile(v, p)


# Student's t, two-sided 95 %, by degrees of freedom (1..10; the normal value beyond).
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]


def ci95(values):
    """Half-width of the 95 % confidence interval of the mean of `values` (nan for fewer than 2)."""
    if len(values) < 2:
        return float("nan")
    t = T95[len(values) - 2] if len(values) - 1 <= len(T95) else 1.96
    return t * statistics.stdev(values) / len(values) ** 0.5


def summarize(out, baseline):
    """(policies in run order, each policy's FCTs, the summary rows) from OUT's files."""
    flows = defaultdict(list)
    per_rep = defaultdict(lambda: defaultdict(list))  # policy -> rep -> FCTs
    failed = defaultdict(int)
    order = []
    for r in run_record.read_rows(out, "flows.csv"):
        if r["policy"] not in order:
            order.append(r["policy"])
        if r["ok"] == "1":
            flows[r["policy"]].append(float(r["fct_ms"]))
            per_rep[r["policy"]][r["rep"]].append(float(r["fct_ms"]))
        else:
            failed[r["policy"]] += 1
    runs = defaultdict(list)
    reps = defaultdict(set)
    with open(f"{out}/runs.csv") as f:
        for r in csv.DictReader(f):
            runs[r["policy"]].append(r)
            reps[r["policy"]].add(r["rep"])
    if not order:
        sys.exit("fct_report.py: no flows")
    base = flows.get(baseline)
    rows = []
    for p in order:
        v = flows[p]
        udp = statistics.mean(float(r["udp_mbps"]) for r in runs[p]) if runs[p] else float("nan")
        tcp_drops = sum(int(r["tcp_drops"]) for r in runs[p])
        udp_drops = sum(int(r["udp_drops"]) for r in runs[p])
        row = {"policy": p, "reps": len(reps[p]), "flows": len(v), "failed": failed[p],
               "mean_ms": statistics.mean(v), "p50_ms": pct(v, 0.5), "p99_ms": pct(v, 0.99),
               "max_ms": max(v), "over_200ms": sum(x > 200 for x in v),
               "udp_mbps": udp, "tcp_drops": tcp_drops, "udp_drops": udp_drops,
               # Each repetition's mean and p99; the interval says how far the pooled numbers could
               # move with other repetitions.
               "mean_ci95_ms": ci95([statistics.mean(x) for x in per_rep[p].values()]),
               "p99_ci95_ms": ci95([pct(x, 0.99) for x in per_rep[p].values()])}
        if base:
            row["mean_vs_base"] = statistics.mean(base) / row["mean_ms"]
            row["p99_vs_base"] = pct(base, 0.99) / row["p99_ms"]
        rows.append(row)
    return order, flows, rows


def render(out):
    """(The section: table, stamp and setup; the rows; the table with its stamp) from OUT's files
    alone, meta.json naming the experiment, baseline, paper and where it ran."""
    with open(f"{out}/meta.json") as f:
        m = json.load(f)
    _order, _flows, rows = summarize(out, m["baseline"])
    pm = lambda h: "" if h != h else f" ± {h:.1f}"  # nothing for a single repetition
    md = [f"| policy | reps | flows | mean FCT (± 95 % CI over reps) | p50 | p99 (± CI) | max | flows over 200 ms | {m['baseline']} mean / mean | "
          f"{m['baseline']} p99 / p99 | UDP goodput | TCP-queue drops | UDP-queue drops |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['policy']} | {r['reps']} | {r['flows']}{' (' + str(r['failed']) + ' failed)' if r['failed'] else ''} | "
                  f"{r['mean_ms']:.1f} ms{pm(r['mean_ci95_ms'])} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f}{pm(r['p99_ci95_ms'])} | {r['max_ms']:.1f} | {r['over_200ms']} | "
                  f"{r.get('mean_vs_base', float('nan')):.2f}x | {r.get('p99_vs_base', float('nan')):.2f}x | "
                  f"{r['udp_mbps']:.1f} Mbit/s | {r['tcp_drops']} | {r['udp_drops']} |")
    exp = m["experiment"]
    stamp = (f"{exp}, produced by `experiments/{'e1_protean' if exp.startswith('E1') else 'e2_fb'}.sh` on "
             f"{m['date']} ({m['host']}, {m['cpus']} CPUs, Linux {m['kernel']}). "
             f"Paper: {m['paper']}. Mean and p99 pool every repetition's flows; ± is the 95 % confidence "
             f"interval (Student's t) of the per-repetition means and p99s.")
    table = "\n".join(md + ["", stamp])
    setup = effective_setup.setup_table(out)
    return table + ("\n\n" + setup if setup else "") + "\n", rows, table


def record(out, tag, dest=None):
    """Copies what render() reads to DEST (docs/runs/<tag>)."""
    dest = dest or record_dir(tag)
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    for name in ["runs.csv", "meta.json"] + [n for n in sorted(os.listdir(out))
                                             if n.startswith("effective") and n.endswith(".toml")]:
        shutil.copy(os.path.join(out, name), os.path.join(dest, name))
    run_record.gzip_copy(f"{out}/flows.csv", os.path.join(dest, "flows.csv.gz"))
    return dest


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--experiment", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--baseline", default="dt")
    ap.add_argument("--paper", default="")
    ap.add_argument("--highlight", help="the policy whose timeline goes into the docs beside the baseline's")
    ap.add_argument("--readme", action="store_true",
                    help="write the table and plots into the page holding this experiment's markers")
    a = ap.parse_args()
    with open(f"{a.out}/meta.json", "w") as f:
        json.dump({"experiment": a.experiment, "baseline": a.baseline, "paper": a.paper,
                   "date": str(datetime.date.today()), "host": platform.node(),
                   "cpus": os.cpu_count(), "kernel": platform.release()}, f, indent=1)
        f.write("\n")
    section, rows, table = render(a.out)
    order, flows, _rows = summarize(a.out, a.baseline)
    keys = list(rows[0].keys())
    with open(f"{a.out}/summary.csv", "w") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)
    open(f"{a.out}/summary.md", "w").write(table + "\n")

    fig, ax = plt.subplots(figsize=(7, 4))
    for p in order:
        v = sorted(flows[p])
        ax.step(v, [(i + 1) / len(v) for i in range(len(v))], where="post", label=p)
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (ms, log)")
    ax.set_ylabel("CDF")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{a.experiment}: FCT CDF per policy")
    fig.tight_layout()
    fig.savefig(f"{a.out}/fct_cdf.png", dpi=110)
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.bar([r["policy"] for r in rows], [r["p99_ms"] for r in rows], color="tab:red", label="p99")
    ax.bar([r["policy"] for r in rows], [r["mean_ms"] for r in rows], color="tab:blue", label="mean")
    ax.set_ylabel("FCT (ms)")
    ax.legend(fontsize=8)
    ax.set_title(f"{a.experiment}: mean and p99 FCT")
    fig.tight_layout()
    fig.savefig(f"{a.out}/fct_p99.png", dpi=110)
    print(table)
    if a.readme:
        shown = [a.baseline] + ([a.highlight] if a.highlight else [])
        images = [f"{a.out}/{name}" for name in
                  ["fct_cdf.png", "fct_p99.png"] + [f"timeline-{p}.png" for p in shown]
                  if os.path.exists(f"{a.out}/{name}")]
        tag = a.experiment.lower()
        page = doc_section.write_section(tag, section, images)
        print(f"{page}: section {tag} updated; its runs kept in "
              f"{os.path.relpath(record(a.out, tag), ROOT)}")


if __name__ == "__main__":
    main()
