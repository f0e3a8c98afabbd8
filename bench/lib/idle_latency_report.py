"""The idle-latency table (bench/idle_latency.sh) from its results.jsonl.

usage: idle_latency_report.py RESULTS_JSONL REPS [PING_CPU] [--args=ARGS]
ARGS: the options idle_latency.sh ran with, for the command line the report prints (given with
"=", as it starts with "--").
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exchange_phases import PHASES  # noqa: E402
from hop_histograms import hop_table  # noqa: E402


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def spread(xs):
    xs = [x for x in xs if x is not None]
    return f"{min(xs):.0f}–{max(xs):.0f}" if xs else "–"


def paired_ratios(rows, name, ref):
    """The ratios repetition by repetition, each against the reference's run of the same
    repetition (minutes apart, where the medians of the table may be an hour apart): how the
    host's drift moves the ratio. Empty with fewer than two paired repetitions."""
    ref_rows = {r["rep"]: r for r in rows if r["switch"] == ref}
    pairs = [(r, ref_rows[r["rep"]]) for r in rows if r["switch"] == name and r["rep"] in ref_rows]
    pairs = [(r, b) for r, b in pairs if r["ping_p50_us"] and b["ping_p50_us"] and b["ping_p99_us"]]
    if len(pairs) < 2:
        return ""
    parts = []
    for key in ("ping_p50_us", "ping_p99_us"):
        ratios = [r[key] / b[key] for r, b in pairs]
        parts.append(f"{key[5:8]} {statistics.median(ratios):.2f}x ({min(ratios):.2f}–{max(ratios):.2f})")
    return "; repetition by repetition against its run of the same repetition, median (range): " + \
        ", ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="results.jsonl")
    ap.add_argument("reps")
    ap.add_argument("ping_cpu", nargs="?", default="")
    ap.add_argument("--args", default="", help="the options idle_latency.sh ran with")
    a = ap.parse_args()
    with open(a.results) as f:
        rows = [json.loads(line) for line in f]
    reps = a.reps
    ping_cpu = a.ping_cpu or None
    # The switches in the order they ran, named as bench/lib/switches.sh labels them.
    order = list(dict.fromkeys(r["switch"] for r in rows))
    NAMES = {r["switch"]: r.get("label", r["switch"]) for r in rows}
    interval = rows[0].get("interval_ms", 10) if rows else 10
    print(f"{datetime.date.today()}, {os.cpu_count()} CPUs, Linux {platform.release()}; median of "
          f"{reps} repetitions (interleaved), each 500 pings {interval:g} ms apart; two hosts, offloads off, "
          f"no shaping{f'; ping pinned to CPU {ping_cpu}' if ping_cpu else ''}.  ")
    args = a.args.strip()
    print(f"Command: `bench/idle_latency.sh{' ' + args if args else ''}` (as root, after "
          "`./run.sh build`).")
    print()
    print("| switch | ping p50 (µs) | ping p99 (µs) | p50 range | p99 range | CPU while pinging (% of a core) "
          "| idle CPU (% of a core) |")
    print("|---|---|---|---|---|---|---|")
    m = {}
    for k in order:
        rs = [r for r in rows if r["switch"] == k]
        p50, p99 = med([r["ping_p50_us"] for r in rs]), med([r["ping_p99_us"] for r in rs])
        cpu = med([r["idle_cpu_pct"] for r in rs])
        pcpu = med([r.get("ping_cpu_pct") for r in rs])
        m[k] = (p50, p99)
        print(f"| {NAMES[k]} | {p50:.0f} | {p99:.0f} | {spread([r['ping_p50_us'] for r in rs])} | "
              f"{spread([r['ping_p99_us'] for r in rs])} | {'–' if pcpu is None else f'{pcpu:.2f}'} | "
              f"{'–' if cpu is None else f'{cpu:.2f}'} |")
    print()
    # NAME@ORDER ran with the testbed's links in another order (bench/lib/switches.sh); it is
    # compared with the bridge on the same links where that ran too.
    is_bridge = lambda k: k.split("@")[0] == "bridge"  # noqa: E731
    for k in order:
        ref = "bridge@" + k.split("@", 1)[1] if "@" in k else "bridge"
        ref = ref if ref in m else "bridge"
        if is_bridge(k) or ref not in m:
            continue
        (p50, p99), (b50, b99) = m[k], m[ref]
        print(f"- {NAMES[k]}: p50 {p50 / b50:.2f}x the bridge's (target ≤ 1.5x), p99 "
              f"{p99 / b99:.2f}x (target ≤ 2x){'' if ref == 'bridge' else f', against {NAMES[ref]}'}"
              f"{paired_ratios(rows, k, ref)}.")
    # sharebuf-floor (bench/lib/switches.sh) forwards with sharebufd's port I/O and nothing else:
    # sharebufd against it is what sharebufd's own work adds to the exchange.
    for k in order:
        base = "sharebufd" + k[k.index("@"):] if "@" in k else "sharebufd"
        if not k.startswith("floor") or base not in m:
            continue
        (p50, p99), (f50, f99) = m[base], m[k]
        print(f"- {NAMES[base]} against {NAMES[k]}: p50 {p50 / f50:.2f}x, p99 {p99 / f99:.2f}x"
              f"{paired_ratios(rows, base, k)}.")
    if any(not is_bridge(k) for k in order):
        print()
    # The hop histograms are sharebufd's own (the bridge and the floor keep none).
    shown = [k for k in order if k.startswith("sharebufd")]
    if shown:
        print("Per hop inside sharebufd (µs, p50 / p99 of the daemon's histograms, median over the "
              "repetitions; buckets are within about 12 %):")
        print()
        print("\n".join(hop_table(rows, shown, NAMES)))
        print()
    sched = [(r["switch"], r["sched"]) for r in rows if r.get("sched")]
    if sched:
        print("`perf sched timehist` of one repetition: how long woken sharebufd threads waited for "
              "a CPU (sch delay) and ran, µs:")
        print()
        print("| switch | threads | runs | sch delay p50 | p99 | max | run time p50 | p99 |")
        print("|---|---|---|---|---|---|---|---|")
        for name, s in sched:
            for kind, v in s.items():
                print(f"| {NAMES[name]} | {kind} | {v['runs']} | {v['sch_delay_p50_us']:.0f} | "
                      f"{v['sch_delay_p99_us']:.0f} | {v['sch_delay_max_us']:.0f} | "
                      f"{v['run_p50_us']:.0f} | {v['run_p99_us']:.0f} |")
    traced = [(r["switch"], r["phases"]) for r in rows if r.get("phases", {}) and r["phases"].get("exchanges")]
    if traced:
        print()
        print("Each exchange of one traced repetition, split at kernel tracepoints (µs, p50 / p99 over "
              "the exchanges, and in brackets the median over the slowest 1 %; in square brackets how "
              "many exchanges had the phase, where not all: a wake-up onto an idle CPU is not always "
              "recorded; tracing adds its own cost to every event, so compare the columns rather "
              "than the absolute figures):")
        print()
        print("| phase | " + " | ".join(f"{NAMES[n]} ({p['exchanges']} exchanges)" for n, p in traced) + " |")
        print("|---|" + "---|" * len(traced))
        for key, _a, _b, what in PHASES:
            cells = []
            for _n, p in traced:
                v = p["phases"].get(key)
                if v is None:
                    cells.append("–")
                    continue
                part = "" if v["n"] == p["exchanges"] else f" [{v['n']} exchanges]"
                cells.append(f"{v['p50']:.1f} / {v['p99']:.1f} ({p['slowest'].get(key, 0):.1f}){part}")
            if any(c != "–" for c in cells):
                print(f"| {what} | " + " | ".join(cells) + " |")
        shares = [(n, p["same_cpu"]) for n, p in traced if "same_cpu" in p]
        if shares:
            print()
            print("Share of exchanges whose woken datapath thread ran on the ping's CPU: " +
                  ", ".join(f"{NAMES[n]} {s:.0%}" for n, s in shares) + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
