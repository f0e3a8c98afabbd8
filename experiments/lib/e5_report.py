#!/usr/bin/python3
"""E5, Smartbuf's demand prediction: its bursts collected during the run and the report after it.

usage: e5_report.py bursts POLICY_JSON SEEN FAN_IN ROUND OUT_CSV SYNC
         appends the bursts of Smartbuf's log (policy.get JSON) after the first SEEN to OUT_CSV
         (sync,fan_in,round,burst,predicted_cells,peak_cells) and prints how many it has now
       e5_report.py report OUT BUFFER_CELLS [--readme]
         from OUT/cs_demand.csv (fan_in,demand_cells) and OUT/smartbuf_bursts.csv: the table of
         predicted against CS demand per sync mode and fan-in (OUT/summary.md) and a plot
         (OUT/prediction.png); --readme writes the E5 page's section (render(): from the run's
         files alone) and keeps those files under docs/runs/e5
         (tests/python/test_results_pages.py makes the section again from them)
"""
import argparse
import csv
import datetime
import json
import os
import platform
import statistics
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_section  # noqa: E402
import effective_setup  # noqa: E402
import run_record  # noqa: E402

RECORD_DIR = os.path.join(ROOT, "docs", "runs", "e5")


def append_bursts(policy, seen, fan_in, rnd, out_csv, sync):
    bursts = policy["state"]["bursts"]
    with open(out_csv, "a") as o:
        for i, b in enumerate(bursts[seen:], start=seen):
            o.write(f"{sync},{fan_in},{rnd},{i},{b['predicted_cells']},{b['peak_cells']}\n")
    return len(bursts)


def table(demand, rows, buffer_cells):
    """Markdown lines: per sync mode and fan-in, the median CS demand, Smartbuf's predictions
    (bursts in its real phase) and their relative errors against that demand."""
    syncs = list(dict.fromkeys(r["sync"] for r in rows))
    lines = ["| sync | fan-in | CS demand (median cells) | bursts | predicted (real phase) | "
             "mean error | max error |", "|---|---|---|---|---|---|---|"]
    summary = []
    for sync in syncs:
        all_err = []
        for f, d in demand.items():
            ideal = statistics.median(d)
            bs = [r for r in rows if r["fan_in"] == f and r["sync"] == sync]
            pred = [int(r["predicted_cells"]) for r in bs if int(r["predicted_cells"]) > 0]
            err = [abs(p - ideal) / ideal for p in pred]
            all_err += err
            lines.append(f"| {sync} | {f} | {ideal:.0f} | {len(bs)} | {len(pred)} | " +
                         (f"{100 * statistics.mean(err):.1f} % | {100 * max(err):.1f} % |"
                          if err else "— | — |"))
        summary.append(
            f"sync = {sync}: {len(all_err)} predictions, mean error " +
            (f"{100 * statistics.mean(all_err):.1f} %, max {100 * max(all_err):.1f} %."
             if all_err else "none (Smartbuf never left its learning phase: no burst exceeded "
             "B/sigma or fewer than k were learned)."))
    lines.append("")
    lines.append("Over all predicted bursts: " + " ".join(summary) +
                 f" Buffer {buffer_cells} cells; Smartbuf defaults (k 3, sigma 5, beta 0.5). "
                 "Paper: within 9 %, 6 % on average.")
    return lines


def plot(demand, rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    syncs = list(dict.fromkeys(r["sync"] for r in rows))
    fig, axes = plt.subplots(1, len(syncs), figsize=(6 * len(syncs), 4), squeeze=False,
                             sharey=True)
    for ax, sync in zip(axes[0], syncs):
        for i, (f, d) in enumerate(demand.items()):
            color = f"C{i}"
            ax.axhline(statistics.median(d), color=color, ls="--", lw=1)
            pred = [(int(r["burst"]), int(r["predicted_cells"])) for r in rows
                    if r["fan_in"] == f and r["sync"] == sync and int(r["predicted_cells"]) > 0]
            ax.scatter([b for b, _ in pred], [p for _, p in pred], color=color, s=14,
                       label=f"fan-in {f}: predicted (dashed: CS demand)")
        ax.set_xlabel("burst (in Smartbuf's burst log)")
        ax.set_ylabel("cells")
        ax.set_title(f"E5: Smartbuf (sync = {sync}) predicted vs CS demand")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def render(out):
    """(The section with its setup, the table with its stamp) from the run's files alone."""
    with open(f"{out}/meta.json") as f:
        meta = json.load(f)
    demand = {}
    with open(f"{out}/cs_demand.csv") as f:
        for r in csv.DictReader(f):
            demand.setdefault(r["fan_in"], []).append(int(r["demand_cells"]))
    with open(f"{out}/smartbuf_bursts.csv") as f:
        rows = list(csv.DictReader(f))
    lines = table(demand, rows, meta["buffer_cells"])
    lines.append(f"Produced by `experiments/e5_smartbuf.sh` on {meta['date']} "
                 f"({meta['host']}, {meta['cpus']} CPUs).")
    text = "\n".join(lines)
    setup = effective_setup.setup_table(out)
    return text + ("\n\n" + setup if setup else "") + "\n", text, demand, rows


def record(out, dest=RECORD_DIR):
    """Copies what render() reads to DEST (docs/runs/e5)."""
    return run_record.copy_fresh(out, dest, ["meta.json", "cs_demand.csv", "smartbuf_bursts.csv"])


def report(out, buffer_cells, readme=False):
    with open(f"{out}/meta.json", "w") as f:
        json.dump({"date": str(datetime.date.today()), "host": platform.node(),
                   "cpus": os.cpu_count(), "buffer_cells": buffer_cells}, f, indent=1)
        f.write("\n")
    section, text, demand, rows = render(out)
    with open(f"{out}/summary.md", "w") as f:
        f.write(text + "\n")
    print(text)
    plot(demand, rows, f"{out}/prediction.png")
    if readme:
        doc_section.write_section("e5", section, [f"{out}/prediction.png"])
        print(f"section e5 written; its run kept in {os.path.relpath(record(out), ROOT)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bursts", help="append the bursts of Smartbuf's log")
    b.add_argument("policy_json")
    b.add_argument("seen", type=int)
    for name in ("fan_in", "round", "out_csv", "sync"):
        b.add_argument(name)
    r = sub.add_parser("report", help="the table and the plot")
    r.add_argument("out")
    r.add_argument("buffer_cells", type=int)
    r.add_argument("--readme", action="store_true", help="write the E5 page's section")
    a = ap.parse_args(argv)
    if a.command == "bursts":
        with open(a.policy_json) as f:
            policy = json.load(f)
        print(append_bursts(policy, a.seen, a.fan_in, a.round, a.out_csv, a.sync))
    else:
        report(a.out, a.buffer_cells, a.readme)


if __name__ == "__main__":
    main()
