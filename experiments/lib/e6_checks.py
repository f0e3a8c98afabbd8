#!/usr/bin/python3
"""E6's checks after a run of live policy switches under load, as a Markdown table in
OUT/summary.md (and on stdout); exits 1 if one fails.

usage: e6_checks.py OUT SWITCHES EXIT_STATUS
OUT holds stats.json (sharebufd at exit), watch.csv (the 1 ms watch stream: t_s, policy, ...) and
switches.csv (one row per switch, with its policy). Checks: the watch stream saw at least
SWITCHES - 1 policy changes, sharebufd exited 0, every queue's counters balance, and every cell is
back in the pool."""
import argparse
import csv
import json
import sys


def policy_changes(watch_rows):
    """How often the policy differs between consecutive sample times (first row per time)."""
    samples = {}
    for r in watch_rows:
        samples.setdefault(float(r["t_s"]), r["policy"])
    seq = [samples[t] for t in sorted(samples)]
    return sum(1 for a, b in zip(seq, seq[1:]) if a != b)


def counters_balance(stats):
    """received = admitted + dropped before admission; admitted = transmitted + pushed out
    + reclaimed + queued, for every queue."""
    def ok(q):
        refused = sum(v for k, v in q["dropped"].items() if k not in ("pushed_out", "reclaimed"))
        return (q["received"] == q["admitted"] + refused and
                q["admitted"] == q["transmitted"] + q["dropped"]["pushed_out"]
                + q["dropped"].get("reclaimed", 0) + q["queued"])
    return all(ok(q) for p in stats["ports"] for q in p["queues"])


def pool_whole(stats):
    b = stats["buffer"]
    # Cells outside the queues (a recirculation port's frames, the unused header reserve) have no
    # frame in the pool.
    return (b["pool_free_cells"] ==
            b["pool_physical_cells"] - b["occupancy_cells"] + b.get("outside_cells", 0))


def summarize(stats, watch_rows, switch_rows, switches, rc):
    """(Markdown lines, whether every check holds)."""
    changes = policy_changes(watch_rows)
    bal, pool = counters_balance(stats), pool_whole(stats)
    distinct = len({r["policy"] for r in switch_rows})
    yes = lambda v: "yes" if v else "NO"
    lines = [
        "| check | result |", "|---|---|",
        f"| policy switches | {switches} (every policy: {distinct} distinct) |",
        f"| policy changes seen in the 1 ms watch stream | {changes} |",
        f"| sharebufd exit status (3 = an accounting identity failed at exit) | {rc} |",
        "| counters balance per queue (received = admitted + dropped; admitted = transmitted + "
        f"pushed out + queued) | {yes(bal)} |",
        f"| every cell back in the pool after the stop | {yes(pool)} |",
    ]
    return lines, rc == 0 and bal and pool and changes >= switches - 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the run's folder")
    ap.add_argument("switches", type=int, help="how many policy switches the run made")
    ap.add_argument("exit_status", type=int, help="sharebufd's exit status")
    a = ap.parse_args(argv)
    out, switches, rc = a.out, a.switches, a.exit_status
    with open(f"{out}/stats.json") as f:
        stats = json.load(f)
    with open(f"{out}/watch.csv") as f:
        watch_rows = list(csv.DictReader(f))
    with open(f"{out}/switches.csv") as f:
        switch_rows = list(csv.DictReader(f))
    lines, ok = summarize(stats, watch_rows, switch_rows, switches, rc)
    with open(f"{out}/summary.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
