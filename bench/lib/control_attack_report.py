#!/usr/bin/python3
"""The summary of bench/control_attack.sh (and bench/metrics_scrape.sh): from its results (one
line per phase: REP PHASE IPERF_MBIT PING_P50_MS THREAD_CPU_PCT), per phase other than "quiet"
the medians (min, max) of its ratios to the quiet phase of the same repetition, and the measured
thread's CPU in each phase.

usage: control_attack_report.py [--phases NAME ...] [--thread NAME] RESULTS_TXT
"""
import argparse
import statistics


def summary(lines, phases=("watchers", "pipeline"), thread="control"):
    rows = [line.split() for line in lines if line.strip()]
    by = {(r[0], r[1]): r for r in rows}
    reps = sorted({r[0] for r in rows})

    def ratio(attack, i):
        v = [float(by[(k, attack)][i]) / float(by[(k, "quiet")][i]) for k in reps]
        return f"{statistics.median(v):.3f} (min {min(v):.3f}, max {max(v):.3f})"

    out = []
    for attack in phases:
        cpu = [by[(k, attack)][4] for k in reps]
        out.append(f"{attack}: iperf {ratio(attack, 2)} of quiet; ping p50 {ratio(attack, 3)} of "
                   f"quiet; {thread} thread {', '.join(cpu)} % of a core")
    out.append(f"quiet: {thread} thread " + ", ".join(by[(k, "quiet")][4] for k in reps)
               + " % of a core")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--phases", nargs="+", default=["watchers", "pipeline"],
                    help="the phases compared with quiet")
    ap.add_argument("--thread", default="control", help="whose CPU the last column is")
    a = ap.parse_args(argv)
    print(summary(open(a.results).read().splitlines(), a.phases, a.thread))


if __name__ == "__main__":
    main()
