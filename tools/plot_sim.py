#!/usr/bin/python3
"""Plots of one sharebuf-sim run (its --out folder): the flow-completion-time CDF of each kind of
flow (short and long background flows, incast responses, queries), as the papers draw them, and
every switch's buffer occupancy over time.

usage: tools/plot_sim.py OUT_DIR   (writes OUT_DIR/fct_cdf.png and OUT_DIR/occupancy.png)
"""
import argparse
import csv
import os


def cdf_series(flows, queries):
    """{label: sorted completion times in ms} of the completed flows of each kind."""
    series = {"short (< 100 KB)": [], "long (>= 1 MB)": [], "incast responses": []}
    for f in flows:
        if int(f["fct_ns"]) < 0 or f["kind"] not in ("background", "incast"):
            continue
        ms = int(f["fct_ns"]) / 1e6
        size = int(f["bytes"])
        if f["kind"] == "incast":
            series["incast responses"].append(ms)
        elif size < 100_000:
            series["short (< 100 KB)"].append(ms)
        elif size >= 1_000_000:
            series["long (>= 1 MB)"].append(ms)
    series["queries"] = [int(q["qct_ns"]) / 1e6 for q in queries if int(q["qct_ns"]) >= 0]
    return {k: sorted(v) for k, v in series.items() if v}


def occupancy_series(rows):
    """{switch: ([t], [cells])} from occupancy.csv (per-switch or per-queue samples)."""
    out = {}
    per_queue = rows and "queue" in rows[0]
    for r in rows:
        t, sw = float(r["time_s"]), r["switch"]
        cells = int(r["cells"] if per_queue else r["total_cells"])
        ts, cs = out.setdefault(sw, ([], []))
        if per_queue and ts and ts[-1] == t:
            cs[-1] += cells
        else:
            ts.append(t)
            cs.append(cells)
    return out


def main(out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    flows = list(csv.DictReader(open(os.path.join(out, "flows.csv"))))
    queries = list(csv.DictReader(open(os.path.join(out, "queries.csv"))))
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, xs in cdf_series(flows, queries).items():
        ax.plot(xs, [(i + 1) / len(xs) for i in range(len(xs))], label=f"{label} ({len(xs)})")
    ax.set_xscale("log")
    ax.set_xlabel("completion time (ms)")
    ax.set_ylabel("CDF")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "fct_cdf.png"), dpi=110)
    plt.close(fig)
    rows = list(csv.DictReader(open(os.path.join(out, "occupancy.csv"))))
    fig, ax = plt.subplots(figsize=(7, 4))
    for sw, (ts, cs) in occupancy_series(rows).items():
        ax.plot(ts, cs, label=sw, linewidth=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("occupancy (cells)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "occupancy.png"), dpi=110)
    plt.close(fig)
    print(f"{out}/fct_cdf.png, {out}/occupancy.png")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", help="the folder sharebuf-sim --out wrote")
    main(ap.parse_args().out_dir)
