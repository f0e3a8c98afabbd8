"""Checks on sharebuf-sim's output for the `sim` ctest label (tests/sim/*.sh).

    check_sim.py dt-steady OCCUPANCY_CSV SUMMARY_JSON ALPHA QUEUES PORT [PORT ...]
    check_sim.py agreement NAME SIM_FATES REPLAY_FATES
    check_sim.py agreement-all NAME RECORD_DIR
    check_sim.py trim-agreement NAME SWITCH_RECORD_DIR SUMMARY_JSON
    check_sim.py fabric SUMMARY_JSON FLOWS_CSV
    check_sim.py websearch SUMMARY_JSON FLOWS_CSV QUERIES_CSV
    check_sim.py classes SUMMARY_JSON OCCUPANCY_CSV
    check_sim.py classes-fabric OCCUPANCY_CSV
    check_sim.py abm-first-bdp RUN_DIR
    check_sim.py example-installed RUN_DIR
    check_sim.py busy-runs RUN_DIR [RUN_DIR ...]

Each prints one line per check ("ok   ..." or "FAIL ...") and exits 1 if any failed.
"""

import argparse
import csv
import json
import re
import os
import sys

FRAME_CELLS = 19  # a 1502-byte frame (1500-byte IP packet + PPP) in 80-byte cells


def report(ok, text):
    print(("ok   " if ok else "FAIL ") + text)
    return ok


def dt_steady(occupancy, summary, alpha, queues, ports):
    """Each of `queues` saturated queues sits at DT's fixed point alpha*B/(1+alpha*S)."""
    alpha, queues = float(alpha), int(queues)
    s = json.load(open(summary))
    b = s["switches"][0]["buffer_cells"]
    end = s["simulated_s"]
    target = alpha * b / (1 + alpha * queues)
    rows = [r for r in csv.DictReader(open(occupancy))
            if float(r["time_s"]) >= end / 2 and r["queue"] == "0"]
    ok = True
    for port in ports:
        cells = [int(r["cells"]) for r in rows if r["port"] == port]
        peak, mean = max(cells), sum(cells) / len(cells)
        ok &= report(abs(peak - target) <= FRAME_CELLS and abs(mean - target) <= FRAME_CELLS,
                     f"alpha {alpha} S {queues} port {port}: peak {peak}, mean {mean:.1f}, "
                     f"alpha*B/(1+alpha*S) = {target:.1f}")
    return ok


def fates(path):
    return [int(r[1]) for r in list(csv.reader(open(path)))[1:]]


def departures(path):
    """Every transmission without its policy label: (t_ns, queue, arrival_ns, bytes, cut)."""
    return [tuple(r[1:]) for r in list(csv.reader(open(path)))[1:]]


def trim_agreement(name, d, summary):
    """Trimming: the ns-3 switch and the replay of its arrivals decide the same for every frame
    and send the same frames, cut copies included, at the same times; ns-3's own accounting of
    every port's queue disc has each packet it received enqueued or dropped (QueueDisc::Enqueue
    asserts it in an ns-3 built with asserts), cut copies included."""
    ok = agreement(name, os.path.join(d, "fates.csv"), os.path.join(d, "replay-fates.csv"))
    totals, bad = {}, []
    for sw in json.load(open(summary))["switches"]:
        for p in sw["ports"]:
            qd = p["queue_disc"]
            for k, v in qd.items():
                totals[k] = totals.get(k, 0) + v
            if any(qd["received" + u] != qd["dropped_before_enqueue" + u] + qd["enqueued" + u]
                   for u in ("", "_bytes")):
                bad.append(f"{sw['name']} port {p['port']}: {qd}")
    ok &= report(not bad and totals.get("received", 0) > 0,
                 f"{name}: ns-3's queue discs received {totals.get('received')} packets, dropped "
                 f"{totals.get('dropped_before_enqueue')} before enqueue, enqueued "
                 f"{totals.get('enqueued')}; ports where received != dropped + enqueued (packets "
                 f"or bytes): {'; '.join(bad) if bad else 'none'}")
    sim = departures(os.path.join(d, "departures.csv"))
    rep = departures(os.path.join(d, "replay-departures.csv"))
    cut = sum(1 for x in sim if x[4] == "1")
    first = next((i for i, (a, b) in enumerate(zip(sim, rep)) if a != b), None)
    ok &= report(sim == rep and cut > 0,
                 f"{name}: {len(sim)} transmissions ({cut} cut copies) in ns-3, {len(rep)} in "
                 f"the replay" + ("" if first is None else
                                  f"; first difference at {first}: {sim[first]} against "
                                  f"{rep[first]}"))
    r = json.load(open(os.path.join(d, "replay.json")))["results"][0]
    n = {k: sum(q[k] for q in r["queues"]) for k in ("trimmed", "bounced", "deflected",
                                                     "trimmed_dropped")}
    n["meter"] = sum(q["dropped"]["meter"] for q in r["queues"])
    need = {"ideal": ("trimmed",), "return": ("bounced",),
            "header-full": ("trimmed", "trimmed_dropped", "bounced"),
            "tofino": ("deflected", "meter")}.get(name, ())
    ok &= report(all(n[k] > 0 for k in need), f"{name}: {n} (needs {', '.join(need)} > 0)")
    return ok


def agreement(name, sim_path, replay_path):
    """The ns-3 switch and the replay of its arrivals decide the same for every frame."""
    sim, rep = fates(sim_path), fates(replay_path)
    diff = [i for i, (a, b) in enumerate(zip(sim, rep)) if a != b]
    return report(len(sim) == len(rep) and not diff and sum(sim) > 0 and len(sim) > 1000,
                  f"{name}: {len(sim)} arrivals, {sum(sim)} refused or pushed out in ns-3, "
                  f"{sum(rep)} in the replay, {len(diff)} differ"
                  + (f" (first at arrival {diff[0]})" if diff else ""))


def agreement_all(name, record_dir):
    """Every switch of a recording agrees frame for frame, and the recording is not vacuous: some
    frame was refused or pushed out somewhere."""
    ok, refused = True, 0
    switches = sorted(d for d in os.listdir(record_dir)
                      if os.path.exists(os.path.join(record_dir, d, "replay-fates.csv")))
    for sw in switches:
        sim = fates(os.path.join(record_dir, sw, "fates.csv"))
        rep = fates(os.path.join(record_dir, sw, "replay-fates.csv"))
        diff = [i for i, (a, b) in enumerate(zip(sim, rep)) if a != b]
        refused += sum(sim)
        ok &= report(len(sim) == len(rep) and not diff,
                     f"{name} at {sw}: {len(sim)} arrivals, {sum(sim)} refused or pushed out in "
                     f"ns-3, {sum(rep)} in the replay, {len(diff)} differ"
                     + (f" (first at arrival {diff[0]})" if diff else ""))
    return report(ok and switches and refused > 0,
                  f"{name}: {len(switches)} switches, {refused} refused or pushed out in all")


def fabric(summary, flows_csv):
    """A small leaf-spine: every host pair's flow completes, both spines carry traffic, the
    leaves' counters balance, and an overloaded leaf port drops by the policy's reason."""
    s = json.load(open(summary))
    flows = list(csv.DictReader(open(flows_csv)))
    sw = {x["name"]: x for x in s["switches"]}
    ok = True
    fixed = [f for f in flows if f["kind"] == "fixed"]
    done = [f for f in fixed if int(f["fct_ns"]) >= 0]
    pairs = {(f["src"], f["dst"]) for f in done}
    ok &= report(len(fixed) == len(done) == len(pairs) and len(pairs) == s["hosts"] * (s["hosts"] - 1),
                 f"all-to-all: {len(done)} of {len(fixed)} flows between {len(pairs)} host pairs "
                 "complete")
    spines = [x for x in s["switches"] if x["role"] == "spine"]
    carried = [x["transmitted"] for x in spines]
    ok &= report(all(c > 0 for c in carried) and min(carried) > 0.2 * max(carried),
                 f"per-flow ECMP uses every spine: frames sent {carried}")
    for x in s["switches"]:
        lost = sum(x["dropped"].values())
        evicted = x["dropped"].get("pushed_out", 0) + x["dropped"].get("reclaimed", 0)
        ok &= report(x["received"] == x["admitted"] + lost - evicted
                     and x["admitted"] - evicted >= x["transmitted"],
                     f"{x['name']}: received {x['received']} = admitted {x['admitted']} + "
                     f"refused; transmitted {x['transmitted']}")
        by_queue = {}
        for reasons in x["dropped_by_queue"].values():
            for reason, n in reasons.items():
                by_queue[reason] = by_queue.get(reason, 0) + n
        ok &= report(by_queue == {r: n for r, n in x["dropped"].items() if n},
                     f"{x['name']}: drops by queue {x['dropped_by_queue']} add up to {x['dropped']}")
        ports = x["ports"]
        ok &= report(len(ports) > 1 and sum(p["dropped"] for p in ports) == lost
                     and sum(p["transmitted"] for p in ports) == x["transmitted"]
                     and sum(p["ecn_marked"] for p in ports) == x["ecn_marked"],
                     f"{x['name']}: {len(ports)} ports' drops, frames sent and marks add up to the "
                     "switch's")
    drops = sum(x["dropped"].get("threshold", 0) for x in s["switches"] if x["role"] == "leaf")
    ok &= report(drops > 0, f"the incast into host 0 overflows its leaf port: {drops} threshold drops")
    q = s["traffic"]["queries"]
    ok &= report(q["count"] > 0 and q["completed"] == q["count"],
                 f"incast queries: {q['completed']} of {q['count']} complete, "
                 f"p99 QCT {q['qct_ms'].get('p99', -1):.3f} ms")
    return ok


def ecmp_seed(out, seeded):
    """The same scenario with another topology.ecmp_seed: the same flows, the spines' shares of
    them different."""
    def load(d):
        s = json.load(open(os.path.join(d, "summary.json")))
        flows = sorted((f["src"], f["dst"], f["bytes"], f["start_ns"])
                       for f in csv.DictReader(open(os.path.join(d, "flows.csv"))))
        return s, flows, {x["name"]: x["received"] for x in s["switches"] if x["role"] == "spine"}
    (a, fa, sa), (b, fb, sb) = load(out), load(seeded)
    ok = report(fa == fb, f"the same {len(fa)} flows with either seed")
    ok &= report(b["ecmp_seed"] == 1 and sa != sb,
                 f"the spines' frames differ: seed 0 {sa}, seed 1 {sb}")
    return ok


def websearch(summary, flows_csv, queries_csv):
    """Background flows and queries start and complete and are reported by bucket."""
    s = json.load(open(summary))["traffic"]
    flows = list(csv.DictReader(open(flows_csv)))
    queries = list(csv.DictReader(open(queries_csv)))
    bg = s["background"]
    ok = report(s["flows"] == len(flows) > 50 and s["completed"] >= 0.8 * s["flows"],
                f"{s['flows']} flows, {s['completed']} complete")
    ok &= report(bg["short"]["completed"] > 0 and bg["long"]["flows"] + bg["medium"]["flows"] > 0
                 and bg["short"]["fct_ms"]["p99"] > 0,
                 f"short flows p99 FCT {bg['short']['fct_ms'].get('p99', -1):.3f} ms, "
                 f"p99.9 {bg['short']['fct_ms'].get('p999', -1):.3f} ms")
    ok &= report(len(queries) == s["queries"]["count"] > 5 and s["queries"]["completed"] > 0,
                 f"{len(queries)} queries, {s['queries']['completed']} complete")
    # A query's responders all come from one leaf other than the aggregator's (4 hosts a leaf).
    by_query = {}
    for f in flows:
        if f["kind"] == "incast":
            by_query.setdefault(f["query"], []).append(f)
    one_leaf = all(len({int(f["src"]) // 4 for f in fl}) == 1
                   and int(fl[0]["src"]) // 4 != int(fl[0]["dst"]) // 4 for fl in by_query.values())
    ok &= report(one_leaf and bool(by_query), "each query's responders are under one other leaf")
    return ok


def classes(summary, occupancy_csv):
    """Three flows with DSCP 10, 20 and 30 into one port: each in its class's queue; DCTCP's
    marks hold the class with an ECN threshold (30 KB) near it, the other TCP class grows."""
    s = json.load(open(summary))
    peak = {}
    for r in csv.DictReader(open(occupancy_csv)):
        if r["port"] == "0":
            q = int(r["queue"])
            peak[q] = max(peak.get(q, 0), int(r["cells"]))
    cell = s["switches"][0]["cell_bytes"]
    peak_kb = {q: round(c * cell / 1000, 1) for q, c in sorted(peak.items())}
    ok = report(all(peak.get(q, 0) > 0 for q in (0, 1, 2)),
                f"every class's queue on the receiver's port holds its flow: peaks {peak_kb} KB")
    marked = s["switches"][0]["ecn_marked"]
    ok &= report(marked > 0, f"the switch marked {marked} packets CE")
    ok &= report(0 < peak_kb.get(0, 0) < 90 and peak_kb.get(1, 0) > 2 * peak_kb.get(0, 0),
                 f"DCTCP holds the marked queue near its 30 KB threshold ({peak_kb.get(0)} KB) "
                 f"while the unmarked one grows ({peak_kb.get(1)} KB)")
    return ok


def classes_fabric(occupancy_csv):
    """Two classes through a leaf-spine (tests/sim/ns3_classes_fabric.sh): where packets queue,
    second hop or third, they are in their class's queue, never the default's."""
    peak = {}
    for r in csv.DictReader(open(occupancy_csv)):
        key = (r["switch"], int(r["queue"]))
        peak[key] = max(peak.get(key, 0), int(r["cells"]))
    held = {k: v for k, v in sorted(peak.items()) if v > 0}
    ok = report(all(q in (0, 1) for _, q in held),
                f"queues that held packets, (switch, queue): cells {held}; none the default's (2)")
    ok &= report(peak.get(("leaf2", 0), 0) > 0 and peak.get(("leaf2", 1), 0) > 0,
                 "leaf2 (third hop) queued both classes in their own queues")
    spines = {q for (sw, q) in held if sw.startswith("spine")}
    ok &= report(spines == {0, 1}, f"the spines (second hop) queued classes {sorted(spines)}")
    return ok


def abm_first_bdp(d):
    """ABM's first-BDP boost in ns-3: frames arrive tagged, the tags (not base_rtt_us) decide,
    and the boost keeps the incast bursts (under a quarter of the drops without it)."""
    def drops(name):
        s = json.load(open(f"{d}/{name}/summary.json"))["switches"][0]
        return sum(s["dropped"].values())

    tagged = sum(1 for r in csv.DictReader(open(f"{d}/boost-rec/switch/arrivals.csv"))
                 if r["first_bdp"] == "1")
    boost, window, none = drops("boost"), drops("boost-window"), drops("none")
    print(f"first-BDP frames recorded: {tagged}; drops: boost {boost}, boost at base_rtt_us 25 "
          f"{window}, no boost {none}")
    ok = report(tagged > 0, "frames reached the switch tagged as their flow's first BDP")
    ok &= report(boost == window, "base_rtt_us did not change the result: the tags decide")
    ok &= report(boost * 4 < none, "the boost kept the incast bursts (under a quarter of the "
                 "drops without it)")
    ok &= report(open(f"{d}/none/flows.csv").read() != open(f"{d}/boost/flows.csv").read(),
                 "flows.csv differs with and without the boost")
    return ok


def example_installed(d):
    """The installed queue disc's example: a line per policy whose FlowMonitor losses are the
    switch's drops, a FlowMonitor XML per policy, and drops that differ between the policies."""
    lines = open(f"{d}/out.txt").read().splitlines()
    drops = {}
    ok = True
    for line in lines:
        m = re.match(r"(\w+): switch received (\d+) packets, dropped (\d+), marked (\d+); "
                     r"FlowMonitor: (\d+) flows, (\d+) bytes delivered, (\d+) packets lost", line)
        if m:
            drops[m.group(1)] = int(m.group(3))
            ok &= report(int(m.group(7)) == int(m.group(3)),
                         f"{m.group(1)}: FlowMonitor lost {m.group(7)}, the switch dropped "
                         f"{m.group(3)}")
            ok &= report(int(m.group(5)) > 0, f"{m.group(1)}: FlowMonitor saw {m.group(5)} flows")
    if not report(set(drops) == {"dt", "lqd"}, f"a line for dt and for lqd (got {sorted(drops)})"):
        return False
    for p in drops:
        ok &= report("<FlowMonitor>" in open(f"{d}/fm-{p}.xml").read(),
                     f"a FlowMonitor XML for {p}")
    ok &= report(drops["dt"] != drops["lqd"] and max(drops.values()) > 0,
                 f"the policies' drops differ and are not zero: {drops}")
    return ok


def busy_runs(dirs):
    """Runs that exercise the buffer (tests/sim/mpi_ranks.sh): each dropped or pushed out
    frames, and most of its flows completed."""
    ok = True
    for d in dirs:
        s = json.load(open(f"{d}/summary.json"))
        drops = sum(sum(sw["dropped"].values()) for sw in s["switches"])
        flows = list(csv.DictReader(open(f"{d}/flows.csv")))
        done = sum(1 for f in flows if int(f["fct_ns"]) >= 0)
        ok &= report(drops > 0 and done > 100,
                     f"{os.path.basename(d)}: {drops} drops, {done} of {len(flows)} flows complete")
    return ok


# Each check and its arguments (the last nargs "+" takes the rest).
CHECKS = {
    "dt-steady": (dt_steady, ["occupancy_csv", "summary_json", "alpha", "queues", "ports+"]),
    "agreement": (agreement, ["name", "sim_fates", "replay_fates"]),
    "agreement-all": (agreement_all, ["name", "record_dir"]),
    "trim-agreement": (trim_agreement, ["name", "switch_record_dir", "summary_json"]),
    "fabric": (fabric, ["summary_json", "flows_csv"]),
    "ecmp-seed": (ecmp_seed, ["out_dir", "seeded_dir"]),
    "websearch": (websearch, ["summary_json", "flows_csv", "queries_csv"]),
    "classes": (classes, ["summary_json", "occupancy_csv"]),
    "classes-fabric": (classes_fabric, ["occupancy_csv"]),
    "abm-first-bdp": (abm_first_bdp, ["run_dir"]),
    "example-installed": (example_installed, ["run_dir"]),
    "busy-runs": (busy_runs, ["run_dirs+"]),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="check", required=True)
    for name, (_, params) in CHECKS.items():
        p = sub.add_parser(name)
        for param in params:
            p.add_argument(param.rstrip("+"), nargs="+" if param.endswith("+") else None)
    a = ap.parse_args(argv)
    fn, params = CHECKS[a.check]
    ok = fn(*(getattr(a, param.rstrip("+")) for param in params))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
