"""Report of bench/cold_path.sh: where an RX worker's time goes from its wake-up to sendmmsg.

Reads the mark files the patched daemon wrote (bench/cold_path/marks.patch): a "# tsc_ghz" line,
then one line per wake-up with the nanoseconds since poll() returned at each mark (-1: not
reached). Prints a Markdown table: per step, the time since the previous mark reached, p50 and
p90 over all wake-ups, and its share of the total's p50.
  cold_path_report.py MARKS_FILE...
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import stats  # noqa: E402  (scripts/stats.py: the one percentile)


# The step that ends at each mark (index = mark id in marks.patch); mark 0 is poll()'s return.
STEPS = [
    None,
    "back in the loop: poll()'s result read, epoch entered",
    "port claimed (rx_owned), first ring slot read",
    "policy pointer loaded, both clocks read",
    "ingress view (probe registers, buffer view)",
    "wake-up and ring hop records, policy burst begun",
    "port counters, capture check",
    "frame parsed",
    "checksum check, forwarded (source MAC learnt, destination looked up)",
    "classified",
    "queue and ECN check (the model's ingress step)",
    "arrival counted (queue stats)",
    "policy decision (admit)",
    "cells reserved and written, queue linked",
    "policy on_enqueue",
    "capture and trim checks, RX → queued record",
    "ring slot released, policy burst ended",
    "idle out-port check (fence)",
    "egress path taken, scheduler pick",
    "TX slot, probes advanced, dequeued",
    "frame copied from cells to the TX slot",
    "shaper, scheduler, counters; cells released",
    "departure clock, delay histogram",
    "policy on_dequeue",
    "scheduler's second pick, sendmmsg() entered",
]


def read_marks(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                rows.append([float(x) for x in line.split()])
    return rows


def pct(values, q):
    return stats.percentile(values, q)


def step_times(rows):
    """Per step (mark i > 0): the time from the previous mark this wake-up reached to mark i."""
    out = {i: [] for i in range(1, len(STEPS))}
    for row in rows:
        if len(row) != len(STEPS) or row[-1] < 0:
            continue  # not a wake-up that sent its frame
        prev = 0.0
        for i in range(1, len(STEPS)):
            if row[i] < 0:
                continue
            out[i].append(row[i] - prev)
            prev = row[i]
    return out


def report(rows):
    complete = [r for r in rows if len(r) == len(STEPS) and r[-1] >= 0]
    if not complete:
        return "No wake-up reached sendmmsg(): no marks to report.\n"
    total = statistics.median(r[-1] for r in complete)
    lines = [
        f"{len(complete)} wake-ups; poll()'s return → sendmmsg(): p50 {total / 1000:.1f} µs, "
        f"p90 {pct([r[-1] for r in complete], 0.9) / 1000:.1f} µs.",
        "",
        "| step (ends at mark) | p50 (ns) | p90 (ns) | share of the p50 total |",
        "|---|---|---|---|",
    ]
    for i, times in step_times(rows).items():
        if not times:
            continue
        p50 = statistics.median(times)
        lines.append(f"| {i}. {STEPS[i]} | {p50:.0f} | {pct(times, 0.9):.0f} | "
                     f"{100 * p50 / total:.0f} % |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("marks", nargs="+", metavar="MARKS_FILE")
    a = ap.parse_args(argv)
    sys.stdout.write(report(read_marks(a.marks)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
