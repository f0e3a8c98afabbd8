#!/usr/bin/python3
"""The soak's verdict (experiments/soak.sh): from the run's folder (stats.json at exit,
control.json from soak_control.py, sharebufd.log) and the measurements the script took, the
checks a long run must pass — sharebufd exited 0, every queue's counters balance, every frame's
copies are accounted, every cell is back in the pool, nothing was logged as an error, no control
request failed, RSS grew under 10 % after warm-up, the frame and switch targets were reached —
written to OUT/summary.md and printed. Exits 1 when a check fails.

usage: soak_report.py OUT EXIT_STATUS RSS_START_KB RSS_WARM_KB RSS_END_KB SECONDS TARGET_FRAMES
                      TARGET_SWITCHES
"""
import argparse
import json
import re
import sys


def checks_of(s, ctl, log, rc, rss_warm, rss_end, target, fast):
    """[(name, holds, measured)] and the totals the summary line needs."""
    ports = s["ports"]
    queues = [q for p in ports for q in p["queues"]]

    def drops(q):
        return sum(v for k, v in q["dropped"].items() if k not in ("pushed_out", "reclaimed"))

    rx = sum(p["rx_frames"] for p in ports)
    flooded = sum(p["flooded"] for p in ports)
    dropped_at_rx = sum(p["filtered"] + p["malformed_total"] + p["truncated"] + p["storm_dropped"]
                        for p in ports)
    copies = (rx - dropped_at_rx - flooded) + flooded * (len(ports) - 1)
    received = sum(q["received"] for q in queues) + sum(p["oversize"] for p in ports)
    bad_lines = [line for line in log.splitlines()
                 if re.match(r"^\S+ \S+ (error|critical) ", line)]
    m = re.search(r"stopped; (\d+) of (\d+) pool cells free", log)
    checks = [
        ("sharebufd exited 0", rc == 0, f"exit {rc}"),
        ("per-queue identities", all(q["received"] == q["admitted"] + drops(q) and
                                     q["admitted"] == q["transmitted"] + q["dropped"]["pushed_out"]
                                     + q["dropped"].get("reclaimed", 0)
                                     + q["queued"] for q in queues), f"{len(queues)} queues"),
        ("copies balance", copies == received, f"{copies} copies expected, {received} received"),
        ("every cell back", bool(m) and m.group(1) == m.group(2),
         m.group(0) if m else "no 'stopped' line"),
        ("no error logged", not bad_lines, bad_lines[0] if bad_lines else "none"),
        ("no failed request", ctl["errors"] == 0,
         "; ".join(ctl["first_errors"]) if ctl["errors"] else "none"),
        ("RSS within 10 %", rss_end <= rss_warm * 1.10,
         f"{rss_warm} kB after 20 s, {rss_end} kB at the end "
         f"({(rss_end / rss_warm - 1) * 100:+.1f} %)"),
        (f"{target:,} frames", rx >= target, f"{rx:,} received"),
        (f"{fast:,} back-to-back switches", ctl["counts"]["switcher"] >= fast,
         f"{ctl['counts']['switcher']:,} done"),
    ]
    crowd = ctl.get("crowd_fresh_status_ms", [])
    if crowd:
        checks.append(("fresh status beside 1000 busy and 300 idle clients within 100 ms",
                       max(crowd) < 100,
                       f"{len(crowd)} crowds: median {sorted(crowd)[len(crowd) // 2]} ms, "
                       f"max {max(crowd)} ms"))
    return checks, rx, flooded


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    for name in ("exit_status", "rss_start", "rss_warm", "rss_end", "seconds"):
        ap.add_argument(name, type=int)
    ap.add_argument("target", type=float, help="frames the soak was to receive")
    ap.add_argument("fast", type=float, help="back-to-back policy switches it was to make")
    a = ap.parse_args(argv)
    out = a.out
    s = json.load(open(f"{out}/stats.json"))
    ctl = json.load(open(f"{out}/control.json"))
    log = open(f"{out}/sharebufd.log").read()
    checks, rx, flooded = checks_of(s, ctl, log, a.exit_status, a.rss_warm, a.rss_end,
                                    int(a.target), int(a.fast))
    ports = s["ports"]
    c = ctl["counts"]
    malformed = sum(p["malformed_total"] for p in ports)
    storm = sum(p["storm_dropped"] for p in ports)
    elapsed = a.seconds
    lines = [
        f"Soak of {elapsed // 60} min {elapsed % 60} s: {rx:,} frames received "
        f"({rx / elapsed / 1e3:.0f} kframes/s), {flooded:,} flooded, {malformed:,} malformed, "
        f"{storm:,} stopped by storm control; {c['operator_policy']:,} policy and "
        f"{c['operator_view']:,} view switches every {ctl.get('every_ms', 100):g} ms plus "
        f"{c['switcher']:,} back to back ({len(ctl['policies'])} policies: "
        f"{', '.join(ctl['policies'])}); {c['status']:,} status and {c['queues']:,} queues "
        f"requests (slowest status {ctl['slowest_status_ms']} ms), {c['watch_samples']:,} watch "
        f"samples. RSS {a.rss_start} kB at start.",
        "",
        "| check | result | measured |",
        "|---|---|---|",
    ] + [f"| {name} | {'pass' if ok else '**FAIL**'} | {detail} |" for name, ok, detail in checks]
    open(f"{out}/summary.md", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
