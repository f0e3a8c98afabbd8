"""Rows and table of bench/loss_sweep.sh.

usage: loss_sweep_report.py row NAME LABEL KPPS BLAST_JSON DELIVERED BUSY_JIFFIES HZ PORTS QUEUES
       loss_sweep_report.py table RESULTS_JSONL SECONDS [--args=ARGS]

row: one JSON line for one rate (BLAST_JSON is sharebuf-blaster's summary; PORTS and QUEUES are
sharebufctl --json ports / queues, "[]" for other switches).
table: the Markdown report, one row per switch and rate, and per switch the highest offered rate
delivered with less than 1 % loss.
"""
import argparse
import datetime
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_clock import clock_mhz, median_mhz, ns_and_cycles  # noqa: E402


def row(argv):
    name, label, kpps, blast, delivered, busy, hz, ports, queues = argv
    blast = json.loads(blast)
    ports, queues = json.loads(ports), json.loads(queues)
    sent, delivered = blast["sent"], int(delivered)
    policy_drops = sum(n for q in queues for n in q["dropped"].values())
    return {
        "switch": name, "label": label, "target_kpps": int(kpps),
        "offered_kpps": blast["pps"] / 1e3,
        "delivered_kpps": delivered / blast["seconds"] / 1e3,
        "loss_pct": 100.0 * max(0, sent - delivered) / max(1, sent),
        "ring_drops": sum(p["ring_drops"] for p in ports) if ports else None,
        "tx_errors": sum(p["tx_errors"] for p in ports) if ports else None,
        "policy_drops": policy_drops if ports else None,
        "sent": sent, "delivered": delivered,
        # CPU time of the whole machine (both cores) per frame delivered.
        "cpu_ns_per_frame": int(busy) / int(hz) * 1e9 / max(1, delivered),
        "cpu_mhz": clock_mhz(),
    }


def uncounted(r):
    """Frames the source sent that neither reached the receiver nor were counted by sharebufd
    (ring drops, TX errors, policy drops); None for switches that count none. Frames still queued
    when the counters were read (0.3 s after the source stopped) would show here too."""
    if r.get("ring_drops") is None or "sent" not in r:
        return None
    return r["sent"] - r["delivered"] - r["ring_drops"] - r["tx_errors"] - r["policy_drops"]


def table(path, seconds, args=""):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    out = [f"{datetime.date.today()}, {os.cpu_count()} CPUs, Linux {platform.release()}; "
           f"{seconds} s per rate; two hosts, offloads off, no shaping; 64-byte frames "
           "(EtherType 0x88b5) from sharebuf-blaster.  ",
           f"Command: `bench/loss_sweep.sh{' ' + args.strip() if args.strip() else ''}` (as root, "
           "after `./run.sh build`).", "",
           "| switch | asked (kpps) | offered (kpps) | delivered (kpps) | lost | ring drops | "
           "TX errors | policy drops | not counted | CPU per frame (ns / cycles) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    dash = lambda v: "–" if v is None else f"{v}"  # noqa: E731
    for r in rows:
        asked = "max" if r["target_kpps"] == 0 else str(r["target_kpps"])
        out.append(f"| {r['label']} | {asked} | {r['offered_kpps']:.0f} | "
                   f"{r['delivered_kpps']:.0f} | {r['loss_pct']:.2f} % | {dash(r['ring_drops'])} | "
                   f"{dash(r['tx_errors'])} | {dash(r['policy_drops'])} | "
                   f"{dash(uncounted(r))} | "
                   f"{ns_and_cycles(r['cpu_ns_per_frame'], r.get('cpu_mhz'))} |")
    out.append("")
    mhz = median_mhz(rows)
    if mhz:
        out.append(f"CPU per frame: both cores' busy time over the frames delivered; in cycles, that "
                   f"time at the clock /proc/cpuinfo gave during the run ({mhz:.0f} MHz; this host "
                   "exposes no cycle counter).")
        out.append("")
    if any(uncounted(r) is not None for r in rows):
        out.append("Not counted: frames the source sent that neither reached the receiver nor "
                   "appear in sharebufd's counters (ring drops, TX errors, policy drops); a few "
                   "below zero are frames of the hosts' own (neighbour discovery) that the "
                   "receiver counted too.")
        out.append("")
    for name in dict.fromkeys(r["switch"] for r in rows):
        rs = [r for r in rows if r["switch"] == name]
        ok = [r["offered_kpps"] for r in rs if r["loss_pct"] < 1.0]
        best = max(r["delivered_kpps"] for r in rs)
        missing = [uncounted(r) for r in rs if uncounted(r) is not None]
        if missing:
            out.append(f"- {rs[0]['label']}: frames lost and not counted, over all rates: "
                       f"{sum(max(0, m) for m in missing)} of {sum(r['sent'] for r in rs)} sent.")
        out.append(f"- {rs[0]['label']}: highest offered rate delivered with less than 1 % loss "
                   f"{max(ok):.0f} kpps; most delivered {best:.0f} kpps." if ok else
                   f"- {rs[0]['label']}: every rate lost 1 % or more; most delivered "
                   f"{best:.0f} kpps.")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("row", help="one measurement as a JSON line")
    for name in ("name", "label", "kpps", "blast_json", "delivered", "busy_jiffies", "hz",
                 "ports", "queues"):
        r.add_argument(name)
    t = sub.add_parser("table", help="the table of a results.jsonl")
    t.add_argument("results")
    t.add_argument("seconds")
    t.add_argument("--args", default="", help="the options loss_sweep.sh ran with (give it with "
                   "'=': it starts with --)")
    a = ap.parse_args(argv)
    if a.command == "row":
        print(json.dumps(row([a.name, a.label, a.kpps, a.blast_json, a.delivered, a.busy_jiffies,
                              a.hz, a.ports, a.queues])))
    else:
        print(table(a.results, a.seconds, a.args))


if __name__ == "__main__":
    main()
