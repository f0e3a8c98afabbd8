#!/usr/bin/python3
"""The summary of bench/control_attack.sh: from its results (one line per phase: REP PHASE
IPERF_MBIT PING_P50_MS CONTROL_CPU_PCT), per attack the medians (min, max) of the attacked/quiet
ratios of the same repetition, and the control thread's CPU in each phase.

usage: control_attack_report.py RESULTS_TXT
"""
import argparse
import statistics


def summary(lines):
    rows = [line.split() for line in lines if line.strip()]
    by = {(r[0], r[1]): r for r in rows}
    reps = sorted({r[0] for r in rows})

    def ratio(attack, i):
        v = [float(by[(k, attack)][i]) / float(by[(k, "quiet")][i]) for k in reps]
        return f"{statistics.median(v):.3f} (min {min(v):.3f}, max {max(v):.3f})"

    out = []
    for attack in ("watchers", "pipeline"):
        cpu = [by[(k, attack)][4] for k in reps]
        out.append(f"{attack}: iperf {ratio(attack, 2)} of quiet; ping p50 {ratio(attack, 3)} of "
                   f"quiet; control thread {', '.join(cpu)} % of a core")
    out.append("quiet: control thread " + ", ".join(by[(k, "quiet")][4] for k in reps)
               + " % of a core")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    a = ap.parse_args(argv)
    print(summary(open(a.results).read().splitlines()))


if __name__ == "__main__":
    main()
