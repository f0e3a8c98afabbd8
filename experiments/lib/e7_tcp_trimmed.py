#!/usr/bin/python3
"""E7's TCP through a trimming switch (experiments/e7_tcp_trimmed.sh): one CSV row per run and
the Markdown table of all runs.

usage: e7_tcp_trimmed.py row RUN_DIR MODE REP SECONDS   (RUN_DIR: iperf-{2..5}.json, nstat.json,
                                                        queues.json, ports.json; to stdout)
       e7_tcp_trimmed.py report OUT SECONDS [--readme]
         OUT/tcp_trimmed.md, the table of OUT/tcp_trimmed.csv's runs; --readme writes the E7
         page's section e7tcp (render(): from OUT's meta.json, tcp_trimmed.csv and effective-*.toml
         alone) and keeps those files under docs/runs/e7/e7tcp, from which
         tests/python/test_results_pages.py makes the section again
"""
import argparse
import csv
import datetime
import json
import os
import platform
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_section  # noqa: E402
import effective_setup  # noqa: E402
import run_record  # noqa: E402

RECORD_DIR = os.path.join(ROOT, "docs", "runs", "e7", "e7tcp")


def row(d, mode, rep, seconds):
    """The CSV row of one run: goodput (4 streams: bytes received over the run's wall-clock
    time), retransmissions, h1's segments in, queued out of order, D-SACKs sent, trimmed at p1."""
    good = retx = 0
    for h in (2, 3, 4, 5):
        j = json.load(open(f"{d}/iperf-{h}.json"))
        r = j["end"]["sum_received"]
        print(f"h{h}: {r['bytes']} B in {r['seconds']:.3f} s", file=sys.stderr)
        good += r["bytes"] * 8 / 1e6 / float(seconds)
        retx += j["end"]["sum_sent"].get("retransmits", 0)
    n = json.load(open(f"{d}/nstat.json"))["kernel"]
    q = next(q for q in json.load(open(f"{d}/queues.json"))
             if q["interface"] == "p1" and q["queue"] == 1)
    p1 = next(p for p in json.load(open(f"{d}/ports.json")) if p["interface"] == "p1")
    print(f"p1 sent {p1['tx_bytes']} B, {p1['shaper_catchup_bytes']} B of it on shaper catch-up",
          file=sys.stderr)
    dsack = n.get("TcpExtTCPDSACKOldSent", 0) + n.get("TcpExtTCPDSACKOfoSent", 0)
    return (f"{mode},{rep},{good:.1f},{retx},{n.get('TcpInSegs', 0)},"
            f"{n.get('TcpExtTCPOFOQueue', 0)},{dsack},{q['trimmed']}")


def table(rows_csv, meta):
    with open(rows_csv) as f:
        rows = list(csv.DictReader(f))
    out = ["| mode | run | goodput (Mbit/s, 4 streams: bytes received / wall-clock time of the "
           "run) | retransmissions | segments in (h1) | queued out of order | D-SACKs sent "
           "| trimmed at p1 |",
           "|---|---|---|---|---|---|---|---|"]
    out += [f"| {r['mode']} | {r['rep']} | {r['goodput_mbps']} | {r['retransmits']} "
            f"| {r['in_segs']} | {r['ofo_queued']} | {r['dsack_sent']} | {r['trimmed']} |"
            for r in rows]
    out += ["", f"Produced by `experiments/e7_tcp_trimmed.sh` on {meta['date']} "
            f"({meta['host']}, {meta['cpus']} CPUs), {meta['seconds']} s per run."]
    return "\n".join(out)


def render(out):
    """(The section with its setup table, the table) from OUT's files alone."""
    with open(f"{out}/meta.json") as f:
        meta = json.load(f)
    text = table(f"{out}/tcp_trimmed.csv", meta)
    setup = effective_setup.setup_table(out)
    return text + ("\n\n" + setup if setup else "") + "\n", text


def record(out, dest=RECORD_DIR):
    """Copies what render() reads to DEST (docs/runs/e7/e7tcp)."""
    return run_record.copy_fresh(out, dest, ["meta.json", "tcp_trimmed.csv"])


def report(out, seconds, readme=False):
    with open(f"{out}/meta.json", "w") as f:
        json.dump({"date": str(datetime.date.today()), "host": platform.node(),
                   "cpus": os.cpu_count(), "seconds": seconds}, f, indent=1)
        f.write("\n")
    section, text = render(out)
    with open(f"{out}/tcp_trimmed.md", "w") as f:
        f.write(text + "\n")
    print(text)
    if readme:
        doc_section.write_section("e7tcp", section)
        print(f"section e7tcp written; its run kept in {os.path.relpath(record(out), ROOT)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("row")
    for name in ("run_dir", "mode", "rep", "seconds"):
        r.add_argument(name)
    t = sub.add_parser("report")
    t.add_argument("out")
    t.add_argument("seconds", type=int)
    t.add_argument("--readme", action="store_true", help="write section e7tcp and record its run")
    a = ap.parse_args(argv)
    if a.command == "row":
        print(row(a.run_dir, a.mode, a.rep, a.seconds))
    else:
        report(a.out, a.seconds, a.readme)


if __name__ == "__main__":
    main()
