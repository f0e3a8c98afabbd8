#!/usr/bin/python3
"""TCP reordering through a switch (bench/tcp_reorder.sh): counters, rows and table.

usage: tcp_reorder_report.py counters
         this network namespace's TCP counters as JSON (run inside a host's namespace): the
         TcpExt ones of /proc/net/netstat and Tcp RetransSegs of /proc/net/snmp
       tcp_reorder_report.py row NAME LABEL REP BPS RECV_BEFORE RECV_AFTER SEND_BEFORE SEND_AFTER
                                 SWITCH_DROPS
         one JSON line: goodput, and over the run the segments the receiver queued out of order
         (TCPOFOQueue), the sender's retransmissions (RetransSegs), the retransmissions the
         receiver reported as duplicates (TCPDSACKRecv: spurious, i.e. the segment had not been
         lost but reordered), the sender's reordering detections (TCPSACKReorder), the segments
         each host sent (OutSegs: the sender's data, the receiver's ACKs), and what the switch
         dropped ("-": not known)
       tcp_reorder_report.py table RESULTS_JSONL
         the Markdown table, medians per switch
"""
import argparse
import json
import statistics

FIELDS = (("ofo", "TCPOFOQueue", "recv"), ("retrans", "RetransSegs", "send"),
          ("dsack", "TCPDSACKRecv", "send"), ("sack_reorder", "TCPSACKReorder", "send"),
          ("data_segs", "OutSegs", "send"), ("acks", "OutSegs", "recv"))


def read_counters(netstat="/proc/net/netstat", snmp="/proc/net/snmp"):
    out = {}
    for path, prefix in ((netstat, "TcpExt:"), (snmp, "Tcp:")):
        with open(path) as f:
            lines = [line.split() for line in f if line.startswith(prefix)]
        if len(lines) >= 2:
            out.update({k: int(v) for k, v in zip(lines[0][1:], lines[1][1:])})
    return out


def row(argv):
    name, label, rep, bps, recv0, recv1, send0, send1, drops = argv
    ends = {"recv": (json.loads(recv0), json.loads(recv1)),
            "send": (json.loads(send0), json.loads(send1))}
    r = {"switch": name, "label": label, "rep": int(rep), "mbps": float(bps) / 1e6,
         "switch_drops": None if drops == "-" else int(drops)}
    for key, counter, side in FIELDS:
        before, after = ends[side]
        r[key] = after.get(counter, 0) - before.get(counter, 0)
    print(json.dumps(r))


def table(argv):
    with open(argv[0]) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    print("| switch | TCP (Mbit/s) | receiver: segments queued out of order | sender: retransmitted "
          "| of them spurious (DSACK) | sender: reordering detected (SACK) "
          "| data segments per ACK | switch drops |")
    print("|---|---|---|---|---|---|---|---|")
    for name in dict.fromkeys(r["switch"] for r in rows):
        rs = [r for r in rows if r["switch"] == name]
        med = {k: statistics.median(r[k] for r in rs)
               for k in ("mbps", "ofo", "retrans", "dsack", "sack_reorder")}
        drops = [r["switch_drops"] for r in rs if r["switch_drops"] is not None]
        # Every frame the switch forwards costs it; an ACK is one more frame per this many data
        # segments (rows of older runs have no segment counts).
        per_ack = [r["data_segs"] / r["acks"] for r in rs if r.get("acks")]
        print(f"| {rs[0]['label']} | {med['mbps']:.0f} | {med['ofo']:.0f} | {med['retrans']:.0f} | "
              f"{med['dsack']:.0f} | {med['sack_reorder']:.0f} | "
              f"{format(statistics.median(per_ack), '.1f') if per_ack else '–'} | "
              f"{format(statistics.median(drops), '.0f') if drops else '–'} |")


ROW_FIELDS = ("name", "label", "rep", "bps", "recv_before", "recv_after", "send_before",
              "send_after", "switch_drops")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("counters", help="this namespace's TCP counters as JSON")
    r = sub.add_parser("row", help="one JSON line")
    for name in ROW_FIELDS:
        r.add_argument(name)
    t = sub.add_parser("table", help="the Markdown table")
    t.add_argument("results")
    a = ap.parse_args(argv)
    if a.command == "counters":
        print(json.dumps(read_counters()))
    elif a.command == "row":
        row([getattr(a, f) for f in ROW_FIELDS])
    else:
        table([a.results])


if __name__ == "__main__":
    main()
