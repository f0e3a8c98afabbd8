#!/usr/bin/python3
"""E5, Smartbuf's demand prediction: its bursts collected during the run and the report after it.

usage: e5_report.py bursts POLICY_JSON SEEN FAN_IN ROUND OUT_CSV SYNC
         appends the bursts of Smartbuf's log (policy.get JSON) after the first SEEN to OUT_CSV
         (sync,fan_in,round,burst,predicted_cells,peak_cells) and prints how many it has now
       e5_report.py report OUT BUFFER_CELLS
         from OUT/cs_demand.csv (fan_in,demand_cells) and OUT/smartbuf_bursts.csv: the table of
         predicted against CS demand per sync mode and fan-in (OUT/summary.md) and a plot
         (OUT/prediction.png)
"""
import argparse
import csv
import datetime
import json
import os
import platform
import statistics


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


def report(out, buffer_cells):
    demand = {}
    with open(f"{out}/cs_demand.csv") as f:
        for r in csv.DictReader(f):
            demand.setdefault(r["fan_in"], []).append(int(r["demand_cells"]))
    with open(f"{out}/smartbuf_bursts.csv") as f:
        rows = list(csv.DictReader(f))
    lines = table(demand, rows, buffer_cells)
    lines.append(f"Produced by `experiments/e5_smartbuf.sh` on {datetime.date.today()} "
                 f"({platform.node()}, {os.cpu_count()} CPUs).")
    with open(f"{out}/summary.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot(demand, rows, f"{out}/prediction.png")


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
    a = ap.parse_args(argv)
    if a.command == "bursts":
        with open(a.policy_json) as f:
            policy = json.load(f)
        print(append_bursts(policy, a.seen, a.fan_in, a.round, a.out_csv, a.sync))
    else:
        report(a.out, a.buffer_cells)


if __name__ == "__main__":
    main()
