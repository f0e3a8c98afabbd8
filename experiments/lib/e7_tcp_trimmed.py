#!/usr/bin/python3
"""E7's TCP through a trimming switch (experiments/e7_tcp_trimmed.sh): one CSV row per run and
the Markdown table of all runs.

usage: e7_tcp_trimmed.py row RUN_DIR MODE REP SECONDS   (RUN_DIR: iperf-{2..5}.json, nstat.json,
                                                        queues.json, ports.json; to stdout)
       e7_tcp_trimmed.py table ROWS_CSV SECONDS
"""
import argparse
import csv
import datetime
import json
import os
import platform
import sys


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


def table(rows_csv, seconds):
    rows = list(csv.DictReader(open(rows_csv)))
    out = ["| mode | run | goodput (Mbit/s, 4 streams: bytes received / wall-clock time of the "
           "run) | retransmissions | segments in (h1) | queued out of order | D-SACKs sent "
           "| trimmed at p1 |",
           "|---|---|---|---|---|---|---|---|"]
    out += [f"| {r['mode']} | {r['rep']} | {r['goodput_mbps']} | {r['retransmits']} "
            f"| {r['in_segs']} | {r['ofo_queued']} | {r['dsack_sent']} | {r['trimmed']} |"
            for r in rows]
    out += ["", f"Produced by `experiments/e7_tcp_trimmed.sh` on {datetime.date.today()} "
            f"({platform.node()}, {os.cpu_count()} CPUs), {seconds} s per run."]
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("row")
    for name in ("run_dir", "mode", "rep", "seconds"):
        r.add_argument(name)
    t = sub.add_parser("table")
    t.add_argument("rows_csv")
    t.add_argument("seconds")
    a = ap.parse_args(argv)
    print(row(a.run_dir, a.mode, a.rep, a.seconds) if a.command == "row"
          else table(a.rows_csv, a.seconds))


if __name__ == "__main__":
    main()
