#!/usr/bin/python3
"""One repetition of E1 or E2, appended to the experiment's tables: the flows' completion times to
OUT/flows.csv (policy,rep,flow,bytes,fct_ms,ok) and the run's UDP goodput, drops and peaks to
OUT/runs.csv (policy,rep,udp_mbps,tcp_drops,udp_drops,tcp_peak,udp_peak), read from the run's
folder: fct.csv (sharebuf-tg), udp*.json (iperf3 -J) and stats.json (sharebufd).

usage: fct_collect.py e1|e2 RUN_DIR OUT POLICY REP
  e1: TCP on p1's queue 0, UDP on p2's queue 0, one iperf3 (udp.json)
  e2: TCP on p1's queue 0, UDP on p2's queues 1-7, seven iperf3 (udp1.json .. udp7.json)
"""
import argparse
import csv
import json

PAYLOAD_BYTES = 1400  # the iperf3 UDP datagrams the experiments send


def udp_goodput_mbps(iperf_json_text):
    """Delivered UDP goodput of one iperf3 -J log. iperf3 may append a second object (an error
    on exit) to its log: the first is read."""
    end = json.JSONDecoder().raw_decode(iperf_json_text)[0]["end"]["sum"]
    return (end["packets"] - end["lost_packets"]) * PAYLOAD_BYTES * 8 / end["seconds"] / 1e6


def drops(queue):
    return sum(queue["dropped"].values())


def read(path):
    with open(path) as f:
        return f.read()


def run_row(kind, run_dir):
    """(udp_mbps, tcp_drops, udp_drops, tcp_peak, udp_peak) of one run."""
    stats = json.loads(read(f"{run_dir}/stats.json"))
    ports = {p["interface"]: p for p in stats["ports"]}
    tcp = ports["p1"]["queues"][0]
    if kind == "e1":
        udp = [ports["p2"]["queues"][0]]
        mbps = udp_goodput_mbps(read(f"{run_dir}/udp.json"))
    else:
        udp = ports["p2"]["queues"][1:]
        mbps = sum(udp_goodput_mbps(read(f"{run_dir}/udp{k}.json")) for k in range(1, 8))
    return (mbps, drops(tcp), sum(drops(q) for q in udp), tcp["peak_cells"],
            max(q["peak_cells"] for q in udp))


def collect(kind, run_dir, out, policy, rep):
    with open(f"{run_dir}/fct.csv") as src, open(f"{out}/flows.csv", "a") as f:
        for r in csv.DictReader(src):
            f.write(f"{policy},{rep},{r['id']},{r['bytes']},{r['fct_ms']},{r['ok']}\n")
    mbps, tcp_drops, udp_drops, tcp_peak, udp_peak = run_row(kind, run_dir)
    with open(f"{out}/runs.csv", "a") as f:
        f.write(f"{policy},{rep},{mbps:.2f},{tcp_drops},{udp_drops},{tcp_peak},{udp_peak}\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", choices=("e1", "e2"))
    ap.add_argument("run_dir")
    ap.add_argument("out")
    ap.add_argument("policy")
    ap.add_argument("rep")
    a = ap.parse_args(argv)
    collect(a.experiment, a.run_dir, a.out, a.policy, a.rep)


if __name__ == "__main__":
    main()
