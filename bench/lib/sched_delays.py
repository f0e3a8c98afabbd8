"""Scheduling delays of sharebufd's threads from `perf sched timehist` output.

usage: sched_delays.py TIMEHIST_TXT

Each timehist line is one time a thread ran: how long it had been off CPU ("wait time"), how long
it waited for a CPU after being woken ("sch delay"), how long it ran. Prints JSON: per thread kind
(sb-rx, sb-tx, sb-control, other) the number of runs and the p50 / p99 / max of the sch delay
and of the run time, in microseconds.
"""
import argparse
import json
import re
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import stats  # noqa: E402  (scripts/stats.py: the one percentile)

LINE = re.compile(r"^\s*[\d.]+\s+\[\d+\]\s+(\S.*?)\[\d+(?:/\d+)?\]\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")


def pct(xs, p):
    return stats.percentile(xs, p / 100, empty=None)


def kind(name):
    for k in ("sb-rx", "sb-tx", "sb-control"):
        if name.startswith(k):
            return k
    return "other"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("timehist", metavar="TIMEHIST_TXT")
    a = ap.parse_args()
    runs = {}
    for line in open(a.timehist):
        m = LINE.match(line)
        if not m:
            continue
        name, delay, run = m.group(1).strip(), *map(float, m.groups()[2:])
        r = runs.setdefault(kind(name), {"delay": [], "run": []})
        r["delay"].append(delay * 1000)
        r["run"].append(run * 1000)
    out = {}
    for k, r in sorted(runs.items()):
        out[k] = {"runs": len(r["delay"]),
                  "sch_delay_p50_us": pct(r["delay"], 50), "sch_delay_p99_us": pct(r["delay"], 99),
                  "sch_delay_max_us": max(r["delay"]),
                  "run_p50_us": pct(r["run"], 50), "run_p99_us": pct(r["run"], 99)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
