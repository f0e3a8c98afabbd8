"""The live fabric beside ns-3, from experiments/lib/fabric_live.py's OUT: per policy, incast query
completion times, short background flows' completion times, and per switch drops and peak
occupancy, live and simulated side by side. Prints the Markdown; with --readme, keeps the files
the table reads under docs/runs/fabric/ (record()) and writes the section `fabric` of
docs/fabric.md from that record (render(); tests/python/test_results_pages.py makes it again).
"""

import argparse
import csv
import glob
import json
import math
import os
import re
import shutil
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RECORD = os.path.join(ROOT, "docs", "runs", "fabric")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_section  # noqa: E402
import stats  # noqa: E402

# What the table reads, relative to a policy's folder (and the configurations that say what ran).
KEPT = ("run.json", "live/h*-query-*.csv", "live/h*-websearch.csv", "live/h*-schedule.csv",
        "live/h*-schedule.csv.queries.csv", "live/switches/*.stats.json",
        "live/switches/*.effective.toml", "sim/summary.json", "sim/queries.csv",
        "sim/flows.csv", "sim/scenario.toml")


def pct(values, p):
    return stats.percentile(values, p / 100)


def live_side(d):
    queries, started = [], 0
    for f in glob.glob(os.path.join(d, "h*-query-*.csv")):
        if f.endswith(".queries.csv"):
            continue
        with open(f, newline="") as fh:
            started += len({r["query"] for r in csv.DictReader(fh)})
        q = f + ".queries.csv"
        if os.path.exists(q):
            with open(q, newline="") as fh:
                queries += [float(r["qct_ms"]) for r in csv.DictReader(fh)]
    short, flows, failed = [], 0, 0
    slow_handshakes = None  # flows whose connect took 1 s or more: a SYN or SYN-ACK lost
    for f in glob.glob(os.path.join(d, "h*-websearch.csv")) + glob.glob(
            os.path.join(d, "h*-schedule.csv")):
        with open(f, newline="") as fh:
            rows = list(csv.DictReader(fh))
        if f.endswith("-schedule.csv"):  # ns-3's arrivals replayed: queries and flows in one
            started += len({r["query"] for r in rows if r["kind"] == "query"})
            q = f + ".queries.csv"
            if os.path.exists(q):
                with open(q, newline="") as fh:
                    queries += [float(r["qct_ms"]) for r in csv.DictReader(fh)]
        for r in rows:
            if r.get("connect_ms") is not None:
                slow_handshakes = (slow_handshakes or 0) + (float(r["connect_ms"]) >= 1000)
            if r["kind"] == "query":
                continue
            flows += 1
            if r["ok"] != "1":
                failed += 1
            elif int(r["bytes"]) < 100_000:
                # From the connect, as ns-3 times a flow (runs before connect_ms: the request).
                short.append(float(r["fct_ms"]) + float(r.get("connect_ms") or 0))
    switches, catchup, sent = {}, 0, 0
    for f in sorted(glob.glob(os.path.join(d, "switches", "*.stats.json"))):
        name = os.path.basename(f)[: -len(".stats.json")]
        with open(f) as fh:
            st = json.load(fh)
        m = re.match(r".*([ls])(\d+)$", name)
        key = ("leaf" if m.group(1) == "l" else "spine") + str(int(m.group(2)) - 1)
        if key in switches:  # two runs' files in one folder (another Mininet prefix)
            sys.exit(f"fabric_report: {f}: a second stats file for {key} in {d}/switches")
        drops = sum(sum(q["dropped"].values()) for p in st["ports"] for q in p["queues"])
        marks = sum(q["ecn_marked"] for p in st["ports"] for q in p["queues"])
        catchup += sum(p["shaper_catchup_bytes"] for p in st["ports"])
        sent += sum(p["tx_bytes"] for p in st["ports"])
        switches[key] = {"drops": drops, "marks": marks, "peak_kb": st["buffer"]["peak_cells"] *
                         st["buffer"]["cell_bytes"] / 1000}
    return {"queries": started, "qct": queries, "flows": flows, "failed": failed,
            "short": short, "switches": switches, "catchup": catchup / sent if sent else 0.0,
            "slow_handshakes": slow_handshakes}


def sim_side(d):
    with open(os.path.join(d, "summary.json")) as fh:
        s = json.load(fh)
    qct = []
    with open(os.path.join(d, "queries.csv"), newline="") as fh:
        for r in csv.DictReader(fh):
            if int(r["qct_ns"]) >= 0:
                qct.append(int(r["qct_ns"]) / 1e6)
    short, flows, failed = [], 0, 0
    slow_handshakes = None  # first byte 1 s or more after the start: a SYN or SYN-ACK lost
    with open(os.path.join(d, "flows.csv"), newline="") as fh:
        for r in csv.DictReader(fh):
            if r.get("first_byte_ns") is not None:
                first = int(r["first_byte_ns"])
                slow_handshakes = (slow_handshakes or 0) + (first >= 1e9 or (
                    first < 0 and int(r["fct_ns"]) < 0))
            if r["kind"] != "background":
                continue
            flows += 1
            if int(r["fct_ns"]) < 0:
                failed += 1
            elif int(r["bytes"]) < 100_000:
                short.append(int(r["fct_ns"]) / 1e6)
    switches = {sw["name"]: {"drops": sum(sw["dropped"].values()), "marks": sw["ecn_marked"],
                             "peak_kb": sw["occupancy"]["max_cells"] * sw["cell_bytes"] / 1000}
                for sw in s["switches"]}
    return {"queries": s["traffic"]["queries"]["count"], "qct": qct, "flows": flows,
            "failed": failed, "short": short, "switches": switches,
            "slow_handshakes": slow_handshakes}


def fmt(x, digits=1):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def record(out):
    """Copies what render() reads from `out` into docs/runs/fabric/ (replacing what was there)."""
    shutil.rmtree(RECORD, ignore_errors=True)
    for run in glob.glob(os.path.join(out, "*", "run.json")):
        policy_dir = os.path.dirname(run)
        for pattern in KEPT:
            for f in glob.glob(os.path.join(policy_dir, pattern)):
                dest = os.path.join(RECORD, os.path.relpath(f, out))
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.copy(f, dest)
    return RECORD


def render(out):
    rows = ["| Mbit/s | policy | engine | queries (done) | QCT p50 / p95 / p99 ms | short flows done (all flows unfinished) "
            "| short FCT p50 / p99 ms | drops leaves / spines | ECN marks leaves / spines "
            "| peak KB leaves (max) / spines (max) | flows with a handshake of 1 s or more |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    per_switch = ["| Mbit/s | policy | switch | drops | ECN marks | peak KB |",
                  "|---|---|---|---|---|---|"]
    def order(path):  # by rate, then policy
        with open(path) as fh:
            r = json.load(fh)
        return (r["host_rate_mbit"], r["policy"])

    for pdir in sorted(glob.glob(os.path.join(out, "*", "run.json")), key=order):
        with open(pdir) as fh:
            run = json.load(fh)
        base = os.path.dirname(pdir)
        live, sim = live_side(os.path.join(base, "live")), sim_side(os.path.join(base, "sim"))
        for name in sorted(sim["switches"]):
            a, b = live["switches"].get(name, {}), sim["switches"][name]
            per_switch.append(
                f"| {run['host_rate_mbit']} | {run['policy']} | {name} | {a.get('drops', '–')} / {b['drops']} | "
                f"{a.get('marks', '–')} / {b['marks']} | {fmt(a.get('peak_kb'), 0)} / "
                f"{fmt(b['peak_kb'], 0)} |")
        for engine, side in (("live", live), ("ns-3", sim)):
            sw = side["switches"]
            leaves = [v for k, v in sorted(sw.items()) if k.startswith("leaf")]
            spines = [v for k, v in sorted(sw.items()) if k.startswith("spine")]
            rows.append(
                f"| {run['host_rate_mbit']} | {run['policy']} | {engine} | {side['queries']} ({len(side['qct'])}) | "
                f"{fmt(pct(side['qct'], 50))} / {fmt(pct(side['qct'], 95))} / "
                f"{fmt(pct(side['qct'], 99))} | {len(side['short'])} ({side['failed']}) | "
                f"{fmt(pct(side['short'], 50), 2)} / {fmt(pct(side['short'], 99))} | "
                f"{sum(v['drops'] for v in leaves)} / {sum(v['drops'] for v in spines)} | "
                f"{sum(v['marks'] for v in leaves)} / {sum(v['marks'] for v in spines)} | "
                f"{fmt(max((v['peak_kb'] for v in leaves), default=None), 0)} / "
                f"{fmt(max((v['peak_kb'] for v in spines), default=None), 0)} | "
                f"{'–' if side['slow_handshakes'] is None else side['slow_handshakes']} |")
        hosts_tcp = ("live hosts' TCP not recorded (a run from before fabric_live checked it: "
                     "the namespace's default); " if "live_cc" not in run else
                     f"live hosts' TCP {run['live_cc']}" + (" with ECN; " if run["live_ecn"] else
                                                           " without ECN; "))
        notes.append(f"- {run['policy']} at {run['host_rate_mbit']} Mbit/s: {run['seconds']} s of workload; "
                     f"{hosts_tcp}live idle RTT "
                     f"{run.get('rtt_us', math.nan):.0f} µs (median of 100 pings h1 → h8), the "
                     f"machine {100 * run.get('cpu_busy', math.nan):.0f} % busy, "
                     f"{100 * live['catchup']:.0f} % of the bytes the switches sent sent on "
                     f"shaper catch-up; "
                     + ("live hosts replayed ns-3's arrivals "
                        f"({run.get('arrivals_flows', '?')} flows; incast responses on "
                        + (f"{run['query_pool']} pooled connections per responder"
                           if run.get("query_pool") else "new connections")
                        + "); " if run.get("arrivals") == "ns3" else
                        "each engine drew its own arrivals; ")
                     + (f"the hosts' htb burst {run['host_burst']} B; "
                        if isinstance(run.get("host_burst"), int) else "")
                     + "ns-3 `--set` "
                     + ", ".join(f"`{s}`" for s in run.get("sim_sets", [])))
    return ("\n".join(rows) + "\n\n" + "\n".join(notes) + "\n\nPer switch, live / ns-3:\n\n"
            + "\n".join(per_switch) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="fabric_live.py's --out")
    ap.add_argument("--readme", action="store_true",
                    help="record the run under docs/runs/fabric and write docs/fabric.md's table")
    args = ap.parse_args()
    if args.readme:
        text = render(record(args.out))
        print(f"wrote {doc_section.write_section('fabric', text)}")
    else:
        text = render(args.out)
    print(text, end="")


if __name__ == "__main__":
    main()
