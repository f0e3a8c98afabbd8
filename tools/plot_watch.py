#!/usr/bin/python3
"""Occupancy-vs-threshold timelines from a `sharebufctl watch --csv` file: one panel per queue,
the queue's occupancy and the threshold its policy held it to (the kind of picture in the Protean
paper's Fig. 1), with the active policy shaded when it changes.

usage: tools/plot_watch.py WATCH.csv OUT.png [--queues p1/0,p2/0] [--title TEXT]
"""
import argparse
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("png")
    ap.add_argument("--queues", help="comma-separated port/queue names to plot (default: every queue that held frames)")
    ap.add_argument("--title", default="")
    a = ap.parse_args()

    series = defaultdict(lambda: {"t": [], "occ": [], "thr": []})
    policy_at = []  # (t, policy) at each change
    capacity = None
    try:
        rows = csv.DictReader(open(a.csv))
        for r in rows:
            key = f'{r["port"]}/{r["queue"]}'
            t = float(r["t_s"])
            s = series[key]
            s["t"].append(t)
            s["occ"].append(int(r["occupancy_cells"]))
            s["thr"].append(int(r["threshold_cells"]))
            capacity = int(r["capacity_cells"])
            if not policy_at or policy_at[-1][1] != r["policy"]:
                policy_at.append((t, r["policy"]))
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"plot_watch.py: {a.csv}: not a sharebufctl watch CSV ({e})")
    if not series:
        sys.exit(f"plot_watch.py: {a.csv}: no samples")
    keys = a.queues.split(",") if a.queues else [k for k, s in series.items() if max(s["occ"]) > 0]
    keys = keys or list(series)
    missing = [k for k in keys if k not in series]
    if missing:
        sys.exit(f"plot_watch.py: no queue {', '.join(missing)} in {a.csv} (have {', '.join(series)})")

    fig, axes = plt.subplots(len(keys), 1, figsize=(9, 2.4 * len(keys) + 0.6), sharex=True, squeeze=False)
    end = max(max(s["t"]) for s in series.values())
    for ax, key in zip(axes[:, 0], keys):
        s = series[key]
        for i, (t0, pol) in enumerate(policy_at):
            t1 = policy_at[i + 1][0] if i + 1 < len(policy_at) else end
            if len(policy_at) > 1:
                ax.axvspan(t0, t1, color="0.93" if i % 2 else "white", lw=0)
                if len(policy_at) <= 12:
                    ax.text((t0 + t1) / 2, 0.97, pol, transform=ax.get_xaxis_transform(), ha="center",
                            va="top", fontsize=7, color="0.35")
        ax.step(s["t"], s["thr"], where="post", color="tab:red", lw=1, label="threshold")
        ax.fill_between(s["t"], s["occ"], step="post", color="tab:blue", alpha=0.5, lw=0, label="occupancy")
        ax.set_ylim(0, capacity * 1.02)
        ax.set_ylabel(f"{key}\ncells")
        ax.grid(alpha=0.3)
    axes[0, 0].legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time (s)")
    title = a.title or (f"policy {policy_at[0][1]}" if len(policy_at) == 1 else "")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    print(f"plot_watch.py: wrote {a.png} ({len(keys)} queues, {len(series[keys[0]]['t'])} samples)")


if __name__ == "__main__":
    main()
