#!/usr/bin/python3
"""What the demos print after their traffic (netns-scripts/basic_demo.sh, iperf_incast.sh).

usage: demo_report.py basic RUN_DIR             TCP and UDP goodput of the basic demo
       demo_report.py incast RUN_DIR SENDERS    each sender's goodput, the total, and the switch's
                                                drops per queue (RUN_DIR: c1.json.., t1.., stats.json)
"""
import argparse
import json
import os


def load(d, name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def basic(d):
    tcp = load(d, "tcp-client.json")["end"]
    udp = load(d, "udp-server.json")["end"]["sum"]
    # iperf3 3.12's UDP server leaves "bytes" at 0: count the datagrams that arrived instead.
    udp_bps = (udp["packets"] - udp["lost_packets"]) * 1400 * 8 / udp["seconds"]
    return "\n".join([
        f"  TCP h1 -> h3: {tcp['sum_received']['bits_per_second'] / 1e6:6.1f} Mbit/s received, "
        f"{tcp['sum_sent'].get('retransmits', 0)} retransmits",
        f"  UDP h2 -> h3: {udp_bps / 1e6:6.1f} Mbit/s received, "
        f"{udp['lost_percent']:.1f} % of datagrams lost"])


def incast(d, n):
    starts = [int(open(f"{d}/t{i}").read()) for i in range(1, n + 1)]
    out = [f"{n} senders started within {(max(starts) - min(starts)) / 1e6:.2f} ms of each other",
           f"{'stream':>8} {'goodput Mbit/s':>15} {'retransmits':>12} {'seconds':>8}"]
    tot = 0
    for i in range(1, n + 1):
        try:
            e = load(d, f"c{i}.json")["end"]
            bps = e["sum_received"]["bits_per_second"]
            tot += bps
            out.append(f"{i:>8} {bps / 1e6:>15.2f} {e['sum_sent'].get('retransmits', 0):>12} "
                       f"{e['sum_received']['seconds']:>8.3f}")
        except (OSError, KeyError, ValueError) as err:
            out.append(f"{i:>8} failed: {err}")
    out.append(f"{'total':>8} {tot / 1e6:>15.2f}")
    out.append("switch drops per queue:")
    for p in load(d, "stats.json")["ports"]:
        for q in p["queues"]:
            if q["received"]:
                out.append(f"  {p['interface']}/{q['queue']}: received {q['received']}, dropped "
                           + ", ".join(f"{k} {v}" for k, v in q["dropped"].items() if v)
                           + f", peak {q['peak_cells']} cells")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="demo", required=True)
    b = sub.add_parser("basic")
    b.add_argument("run_dir")
    i = sub.add_parser("incast")
    i.add_argument("run_dir")
    i.add_argument("senders", type=int)
    a = ap.parse_args(argv)
    print(basic(a.run_dir) if a.demo == "basic" else incast(a.run_dir, a.senders))


if __name__ == "__main__":
    main()
