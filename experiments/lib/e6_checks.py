#!/usr/bin/python3
"""E6's checks after a run of live policy switches under load, as a Markdown table in
OUT/summary.md (and on stdout); exits 1 if one fails. With --readme, also the E6 page's section
(docs/experiments/e6-live-reconfig.md, marker e6), made by render() from the run's files alone, and
those files kept under docs/runs/e6/ (tests/python/test_results_pages.py makes the section again
from them).

usage: e6_checks.py OUT SWITCHES EXIT_STATUS [--seconds S --interval I --readme]
OUT holds stats.json (sharebufd at exit), watch.csv (the 1 ms watch stream: t_s, policy, ...) and
switches.csv (one row per switch, with its policy). Checks: the watch stream saw at least
SWITCHES - 1 policy changes, sharebufd exited 0, every queue's counters balance, and every cell is
back in the pool."""
import argparse
import csv
import datetime
import gzip
import json
import os
import re
import shutil
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_section  # noqa: E402
import effective_setup  # noqa: E402
import run_record  # noqa: E402

RECORD_DIR = os.path.join(ROOT, "docs", "runs", "e6")
# What render() reads; watch.csv is kept as its (t_s, policy) columns, gzipped (the check reads
# no other; the whole stream is 10 MB).
RECORD_FILES = ("meta.json", "stats.json", "switches.csv", "background.out", "queries.out",
                "effective.toml")


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


def read_watch(out):
    """The watch stream's rows: OUT/watch.csv, or the (t_s, policy) columns a record keeps."""
    if os.path.exists(f"{out}/watch.csv"):
        return run_record.read_rows(out, "watch.csv")
    return run_record.read_rows(out, "watch-policy.csv")


def checks(out):
    """(Markdown lines, whether every check holds) from the run's files and OUT/meta.json."""
    with open(f"{out}/meta.json") as f:
        meta = json.load(f)
    with open(f"{out}/stats.json") as f:
        stats = json.load(f)
    with open(f"{out}/switches.csv") as f:
        switch_rows = list(csv.DictReader(f))
    return summarize(stats, read_watch(out), switch_rows, meta["switches"], meta["exit_status"])


TG_LINE = re.compile(r"^(fct|qct) ")


def render(out):
    """The page section from the run's files alone."""
    with open(f"{out}/meta.json") as f:
        meta = json.load(f)
    lines, _ok = checks(out)
    tg = []
    for name in ("background.out", "queries.out"):
        if os.path.exists(f"{out}/{name}"):
            with open(f"{out}/{name}") as f:
                tg += [line.rstrip("\n") for line in f if TG_LINE.match(line)]
    parts = [f"`experiments/e6_live_reconfig.sh --readme` ({meta['seconds']} s, a switch every "
             f"{meta['interval']} s; {meta['date']}, {meta['cpus']} CPUs):",
             "\n".join(lines),
             "Background FCTs and query times while switching (sharebuf-tg):\n```\n"
             + "\n".join(tg) + "\n```",
             effective_setup.setup_table(out)]
    return "\n\n".join(p for p in parts if p) + "\n"


def record(out, dest=RECORD_DIR):
    """Copies what render() reads to DEST (docs/runs/e6)."""
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    for name in RECORD_FILES:
        if os.path.exists(f"{out}/{name}"):
            shutil.copy(f"{out}/{name}", os.path.join(dest, name))
    with gzip.GzipFile(os.path.join(dest, "watch-policy.csv.gz"), "wb", mtime=0) as raw:
        with open(f"{out}/watch.csv") as f:
            text = "t_s,policy\n" + "".join(f"{r['t_s']},{r['policy']}\n" for r in csv.DictReader(f))
        raw.write(text.encode())
    return dest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the run's folder")
    ap.add_argument("switches", type=int, help="how many policy switches the run made")
    ap.add_argument("exit_status", type=int, help="sharebufd's exit status")
    ap.add_argument("--seconds", default="?", help="the run's length (for the page)")
    ap.add_argument("--interval", default="?", help="seconds between switches (for the page)")
    ap.add_argument("--readme", action="store_true",
                    help="write the E6 page's section and keep its files under docs/runs/e6")
    ap.add_argument("--image", action="append", default=[], help="an image for the section")
    a = ap.parse_args(argv)
    out = a.out
    with open(f"{out}/meta.json", "w") as f:
        json.dump({"seconds": a.seconds, "interval": a.interval, "date": str(datetime.date.today()),
                   "cpus": os.cpu_count(), "switches": a.switches, "exit_status": a.exit_status},
                  f, indent=1)
        f.write("\n")
    lines, ok = checks(out)
    with open(f"{out}/summary.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if a.readme:
        doc_section.write_section("e6", render(out), a.image)
        print(f"section e6 written; its run kept in {os.path.relpath(record(out), ROOT)}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
