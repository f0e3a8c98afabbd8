#!/usr/bin/python3
"""The netns tests' checks on what a run left behind (sharebufd's stats and status JSON, iperf3's
JSON, sharebuf-tg's CSVs, the receivers' summaries): one subcommand per check, named after what
it checks. Each prints what it read and exits 1 when the check fails (a message says which part).

usage: netns_checks.py CHECK ARGS...   (netns_checks.py CHECK --help: its arguments)
"""
import argparse
import csv
import inspect
import json
import statistics
import struct
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def port_of(stats, name):
    return next(p for p in stats["ports"] if p["interface"] == name)


def verdicts(checks):
    """Prints each named check as ok/FAIL; true when all hold."""
    for name, ok in checks.items():
        print(("ok   " if ok else "FAIL ") + name)
    return all(checks.values())


def tcp_mbps(run):
    return run["end"]["sum_received"]["bits_per_second"] / 1e6


def within(expr):
    """An arithmetic condition the shell built from measured numbers ("0.95 * 8 <= 7.9 <= 8.4")."""
    return bool(eval(expr, {"__builtins__": {}}, {"abs": abs}))  # the tests' own expressions


def tcp_rate(tcp_json, at_least_mbps="0"):
    """Prints an iperf3 run's goodput; at least AT_LEAST_MBPS Mbit/s."""
    mbps = tcp_mbps(load(tcp_json))
    print(f"TCP {mbps:.0f} Mbit/s")
    return mbps >= float(at_least_mbps)


def median_status_ms(times_json):
    """control_crowd: the median time of the fresh status requests, under 100 ms."""
    t = sorted(json.loads(times_json))
    return t[len(t) // 2] < 100


def median_in_range(samples_csv, field, low, high):
    """departure_clock: prints the median of FIELD over samples with the queue at LOW-HIGH cells."""
    rows = list(csv.DictReader(open(samples_csv)))
    vals = [float(r[field]) for r in rows if int(low) <= int(r["occupancy_cells"]) <= int(high)]
    print(f"{len(rows)} samples, {len(vals)} with the queue at {low}-{high} cells: "
          + " ".join(f"{v:.3f}" for v in vals), file=sys.stderr)
    if len(vals) < 8:
        print("too few samples with the queue in range", file=sys.stderr)
        return False
    print(f"{statistics.median(vals):.4f}")
    return True


def watch_policies(watch_csv, *policies):
    """live_policy_switch: every policy installed shows in the watch stream."""
    rows = list(csv.DictReader(open(watch_csv)))
    seen = {r["policy"] for r in rows}
    missing = [p for p in policies if p not in seen]
    print(f"{len(rows)} rows, policies seen: {sorted(seen)}")
    if missing:
        print(f"never seen in watch samples: {missing}")
    return not missing and all(int(r["threshold_cells"]) >= 0 for r in rows)


def capture_frames(capture_json, pcap):
    """live_policy_switch: the drop capture is a nanosecond pcap holding as many frames as the
    daemon says it wrote."""
    st = load(capture_json)
    data = open(pcap, "rb").read()
    magic, = struct.unpack("<I", data[:4])
    if magic != 0xA1B23C4D:  # nanosecond pcap: the admission times, to the ns
        print(f"not a nanosecond pcap: magic {magic:#x}")
        return False
    n, off = 0, 24
    while off < len(data):
        caplen, = struct.unpack("<I", data[off + 8:off + 12])
        off += 16 + caplen
        n += 1
    print(f"capture: {n} refused frames in {len(data)} bytes; daemon says {st['frames']}")
    return n == st["frames"] and n > 0


def hop_latency(latency_json):
    """ping_all_pairs: every port's hop histograms counted the pings, with plausible medians."""
    ok = True
    for p in load(latency_json):
        for hop in ("wakeup", "ring_to_rx", "rx_to_queued", "rx_to_sent"):
            h = p["hops"][hop]
            print(p["interface"], hop, h["count"], h["p50_ns"], h["p99_ns"])
            ok &= h["count"] >= 4 and 0 < h["p50_ns"] < 1e9
    return ok


def record_replay(run_dir):
    """record_replay: the replay of the recorded arrivals sees the frames the live switch did."""
    cap = load(f"{run_dir}/capture.json")
    rep = load(f"{run_dir}/replay.json")
    live = load(f"{run_dir}/stats.json")
    p3_live = port_of(live, "p3")["queues"][0]["received"]
    dt = rep["results"][0]
    p3_replay = dt["queues"][2]["arrivals"]
    print(f"captured {cap['frames']} frames ({cap['missed_busy']} missed busy); "
          f"{rep['description']}")
    print(f"frames to p3: live {p3_live}, replay {p3_replay}; replay dt transmitted "
          f"{dt['transmitted']}")
    return verdicts({
        "over 1000 frames captured, under 1 % missed": cap["frames"] > 1000
        and cap["missed_busy"] < 0.01 * cap["frames"],
        "the replay neither lost nor invented frames to p3": abs(p3_replay - p3_live)
        <= 0.02 * p3_live + 10,
        "no accounting errors in the replay": all(not r["accounting_errors"]
                                                  for r in rep["results"]),
    })


def returned_headers(rx_json, receiver):
    """return_to_sender: the refused frames' headers came back to the sender, well formed."""
    r = load(rx_json)
    return verdicts({
        "returned headers arrived": r["trimmed"] > 100,
        "they come from the receiver's address": r["trimmed_src"] == [receiver],
        "every IPv4 header checksum verifies": r["trimmed_bad_ipv4"] == 0,
        "every UDP checksum verifies": r["trimmed_bad_udp"] == 0,
        "they carry the return mark, DSCP 7": r["trimmed_dscp"] == [7],
    })


def returned_again(rx_json):
    """return_to_sender: headers refused under the second configuration came back too."""
    r = load(rx_json)
    return r["trimmed"] > 20 and r["trimmed_dscp"] == [7]


def tcp_kept_order(tcp_json, send_before, send_after, stats_json, recv_before="{}",
                   recv_after="{}"):
    """tcp_in_order, rx_af_xdp: a TCP stream through the switch was not reordered (the sender's
    DSACK and SACK-reordering counters, nstat JSON before and after)."""
    run = load(tcp_json)
    s0, s1, r0, r1 = (json.loads(a) for a in (send_before, send_after, recv_before, recv_after))
    stats = load(stats_json)

    def d(a, b, k):
        return b.get(k, 0) - a.get(k, 0)

    segs = d(s0, s1, "OutSegs")
    dsack, reorder = d(s0, s1, "TCPDSACKRecv"), d(s0, s1, "TCPSACKReorder")
    rx = sum(p["rx_frames"] for p in stats["ports"])
    drops = sum(p["ring_drops"] + p["tx_errors"] for p in stats["ports"]) + sum(
        n for p in stats["ports"] for q in p["queues"] for n in q["dropped"].values())
    print(f"{tcp_mbps(run):.0f} Mbit/s, {segs} segments sent, {d(s0, s1, 'RetransSegs')} "
          f"retransmitted, {dsack} of them spurious (DSACK; {d(s0, s1, 'TCPLossProbes')} tail loss "
          f"probes, {d(s0, s1, 'TCPTimeouts')} timeouts), {reorder} reorderings detected; "
          f"receiver queued {d(r0, r1, 'TCPOFOQueue')} out of order; sharebufd received {rx} "
          f"frames, dropped {drops}, ring drops {sum(p['ring_drops'] for p in stats['ports'])}, "
          f"taken after a later one of their flow "
          f"{sum(p.get('rx_out_of_order', 0) for p in stats['ports'])}")
    # A few may come from elsewhere (a retransmission timer firing as the original is delivered).
    # The sender's SACK-reorder counter also moves in loss recovery (a segment marked lost, then
    # SACKed): with the switch dropping, as it does when a loaded machine starves its egress
    # (measured: 110-1771 drops, 11-15 reorder counts, 0-1 DSACK), DSACK alone, a retransmission
    # the receiver already had, is the evidence of reordering.
    # And the counter is a weak witness. With af_xdp's two receive queues per port (each frame
    # stamped by its queue's NAPI poll, which a loaded CPU runs late), correct code, before and
    # after the port interface side by side, gave 0-40 reorder counts per 400-600 thousand
    # segments with a CPU hog on each core (28 in a run with one switch drop), and 2 of 5 runs of
    # the flaky-test guard failed this check with a limit of one per 20000 segments. Reading the
    # queues without their stamps gave 89-93, and 713-1033 DSACK: DSACK is what catches it. So the
    # limit is loose (one per 5000 segments, at least 50).
    reorder_limit = max(50, segs // 5000)
    return (segs > 10000 and rx > 10000 and dsack <= 10
            and (reorder <= reorder_limit or drops > 0))


def rx_workers(status_json, expr):
    """rx_parking: a condition over the RX workers of `sharebufctl --json status` (w: the list)."""
    w = load(status_json)["rx_workers"]
    print("rx workers:", w)
    return bool(eval(expr, {"__builtins__": {}}, {"w": w, "all": all, "any": any, "sum": sum,
                                                   "len": len}))  # the test's own expression


def per_cpu_workers(status_json, cpus):
    """rx_per_cpu: one RX worker per CPU, each serving both ports; prints their frame counts."""
    st = load(status_json)
    w = st["rx_workers"]
    print(" ".join(str(x["frames"]) for x in w))
    return (st["rx_mode"] == "per-cpu" and len(w) == int(cpus)
            and all(x["ports"] == ["p1", "p2"] for x in w))


def shaper_rates(before_json, after_json, t1, t2):
    """shaper_rate: prints p2's rates between two stats (Mbit/s of frames, whether its queue held
    frames, Mbit/s of shaper catch-up and of charged probes)."""
    a, b = load(before_json), load(after_json)
    t1, t2 = float(t1), float(t2)

    def rate(key):
        return (port_of(b, "p2")[key] - port_of(a, "p2")[key]) * 8 / (t2 - t1) / 1e6

    print(f"{rate('tx_bytes'):.1f} {int(port_of(b, 'p2')['queues'][0]['occupancy_cells'] > 0)} "
          f"{rate('shaper_catchup_bytes'):.1f} {rate('probe_charged_bytes'):.2f}")
    return True


def tcp_goodput(tcp_json):
    """tcp_throughput: the median second of a TCP run through a 100 Mbit/s port is 90-100."""
    run = load(tcp_json)
    rates = [i["sum"]["bits_per_second"] / 1e6 for i in run["intervals"]
             if not i["sum"].get("omitted") and i["sum"]["seconds"] >= 0.9]
    if not rates:
        print("no whole seconds in the run")
        return False
    mbps = statistics.median(rates)
    print(f"TCP goodput through a 100 Mbit/s port: median {mbps:.1f} Mbit/s over {len(rates)} s "
          f"(seconds: {', '.join(f'{r:.1f}' for r in rates)})")
    return 90 <= mbps <= 100


def timeline_protean(out):
    """timeline_protean: during the burst Protean's incast threshold rose above DT's."""
    def above(policy, alpha):
        rows = [r for r in csv.DictReader(open(f"{out}/{policy}.csv"))
                if r["port"] == "p3" and float(r["t_s"]) >= 1.0 and int(r["occupancy_cells"]) > 0]
        n = sum(int(r["threshold_cells"])
                > 1.05 * alpha * (int(r["capacity_cells"]) - int(r["total_cells"])) for r in rows)
        return n, len(rows)

    dt, dt_rows = above("dt", 1.0)
    pr, pr_rows = above("protean", 0.8)
    print(f"burst samples with threshold > 1.05 alpha Rem: dt {dt}/{dt_rows}, "
          f"protean {pr}/{pr_rows}")
    return verdicts({
        f"the TCP burst reached p3 (samples with p3 occupied: dt {dt_rows}, protean {pr_rows})":
        dt_rows > 100 and pr_rows > 100,
        "Protean's incast threshold rose above DT's during the burst": pr >= 5 and pr > 3 * dt,
    })


def fixed_fct(flows_csv):
    """traffic_gen_fct: 1 MB over 10 Mbit/s completes no faster than it serialises, and not
    much slower."""
    r = next(csv.DictReader(open(flows_csv)))
    fct = float(r["fct_ms"]) / 1e3
    floor = 1_000_000 * 8 / 10e6
    print(f"1 MB over 10 Mbit/s: FCT {fct:.3f} s, serialisation alone {floor:.3f} s")
    return r["ok"] == "1" and floor <= fct <= 1.5 * floor + 0.3


def open_loop(flows_csv):
    """traffic_gen_fct: open-loop queries overlap (a closed loop would start each after the last)."""
    flows = list(csv.DictReader(open(flows_csv)))
    starts = sorted((float(f["start_ms"]), float(f["start_ms"]) + float(f["fct_ms"]))
                    for f in flows)
    overlaps = sum(1 for a, b in zip(starts, starts[1:]) if b[0] < a[1])
    print(f"open loop: {len(flows)} queries in 2 s, {overlaps} started before the previous one "
          "ended")
    return all(f["ok"] == "1" for f in flows) and len(flows) >= 14 and overlaps >= 5


def schedule(schedule_csv, flows_csv):
    """traffic_gen_fct: every scheduled flow ran, on a new connection (a handshake timed), its
    request written at its time, and the two rows of query 7 made one query."""
    wanted = sorted((r["kind"], int(r["bytes"])) for r in csv.DictReader(open(schedule_csv)))
    flows = list(csv.DictReader(open(flows_csv)))
    ran = sorted((f["kind"], int(f["bytes"])) for f in flows)
    late = [float(f["start_ms"]) - float(f["connect_ms"]) - at for f in flows
            for at in [{"short": 0, "query": 300, "long": 600}[f["kind"]]]]
    queries = list(csv.DictReader(open(flows_csv + ".queries.csv")))
    print(f"schedule: ran {ran}, started {[round(x, 1) for x in late]} ms after their times, "
          f"connect_ms {[f['connect_ms'] for f in flows]}, queries {queries}")
    return (ran == wanted and all(f["ok"] == "1" for f in flows)
            and all(-1 <= x <= 50 for x in late)
            and all(float(f["connect_ms"]) > 0 for f in flows)
            and [q["query"] for q in queries] == ["7"]
            and float(queries[0]["qct_ms"]) >= max(float(f["fct_ms"]) for f in flows
                                                   if f["kind"] == "query"))


def trim_push_out(run_dir):
    """trim_push_out: LQD's pushed-out frames get trimmed; trim_newest cuts queued frames, once
    per overflow at probability 1 and about half the time at 0.5."""
    def queues(name):
        return {q["queue"]: q for q in load(f"{run_dir}/{name}.json") if q["interface"] == "p3"}

    def refused_arrivals(q):
        return sum(v for r, v in q["dropped"].items() if r not in ("pushed_out", "reclaimed"))

    checks = {}
    lqd = queues("lqd")
    for k in (1, 2):
        q = lqd[k]
        print(f"LQD p3/{k}: received {q['received']}, refused {refused_arrivals(q)}, pushed out "
              f"{q['dropped']['pushed_out']}, trimmed {q['trimmed']}")
    checks["LQD pushed frames out"] = sum(lqd[k]["dropped"]["pushed_out"] for k in (1, 2)) > 20
    checks["pushed-out frames were trimmed (trimmed > refused arrivals)"] = any(
        lqd[k]["trimmed"] > refused_arrivals(lqd[k]) + 10 for k in (1, 2))
    checks["every trimmed copy reached the trim queue"] = (
        lqd[1]["trimmed"] + lqd[2]["trimmed"] == lqd[0]["received"])
    new = queues("newest")
    for k in (1, 2):
        q = new[k]
        print(f"DT + trim_newest p3/{k}: received {q['received']}, admitted {q['admitted']}, "
              f"pushed out {q['dropped']['pushed_out']}, trimmed_newest {q['trimmed_newest']}, "
              f"trimmed {q['trimmed']}")
    checks["trim_newest trimmed queued frames"] = sum(new[k]["trimmed_newest"] for k in (1, 2)) > 20
    checks["each counted as a push-out"] = all(
        new[k]["trimmed_newest"] == new[k]["dropped"]["pushed_out"] for k in (1, 2))
    # Equal-sized frames of trimming classes: the newest always qualifies, so with probability 1
    # an overflow cuts the newest frame and the arrival is admitted, not refused too.
    newest = sum(new[k]["trimmed_newest"] for k in (1, 2))
    refused = sum(new[k]["dropped"].get("threshold", 0) for k in (1, 2))
    print(f"trim_newest = 1: {newest} newest frames trimmed, {refused} arrivals refused")
    checks["one cut per overflow (arrivals refused under 5 % of the newest trimmed)"] = (
        refused <= 0.05 * newest)
    half = queues("half")
    newest = sum(half[k]["trimmed_newest"] for k in (1, 2))
    refused = sum(half[k]["dropped"].get("threshold", 0) for k in (1, 2))
    share = newest / max(1, newest + refused)
    print(f"trim_newest = 0.5: {newest} newest frames trimmed, {refused} arrivals refused "
          f"({share:.2f})")
    checks["about half the overflows trim the newest frame at 0.5"] = (
        newest + refused > 40 and 0.3 <= share <= 0.7)
    return verdicts(checks)


def trim_transport(run_dir):
    """trim_transport: sharebuf-ndp's flows complete under Tofino and ideal trimming (NACKs) and
    under drops (timeouts); the Tofino approximation's counters agree with the queues'."""
    def rows(name):
        return list(csv.DictReader(open(f"{run_dir}/{name}.csv")))

    def total(rs, k):
        return sum(int(r[k]) for r in rs)

    checks = {}
    for mode in ("tofino", "ideal", "drop"):
        rs = rows(mode)
        fct = statistics.mean(int(r["fct_ns"]) for r in rs) / 1e6 if rs else 0
        print(f"{mode:6s}: {len(rs)} flows, mean FCT {fct:.2f} ms, trimmed {total(rs, 'trimmed')}, "
              f"nack_retx {total(rs, 'nack_retx')}, rto_retx {total(rs, 'rto_retx')}")
        checks[f"{mode}: 128 flows completed"] = len(rs) == 128 and total(rs, "failed") == 0
    for mode in ("tofino", "ideal"):
        rs = rows(mode)
        checks[f"{mode}: trimmed headers arrived"] = total(rs, "trimmed") > 50
        checks[f"{mode}: NACKed packets came back"] = total(rs, "nack_retx") > 50
    drop = rows("drop")
    checks["drop: no headers, timeouts recover"] = (
        total(drop, "trimmed") == 0 and total(drop, "rto_retx") > 0)
    p1 = port_of(load(f"{run_dir}/stats-tofino.json"), "p1")
    t = p1["tofino_approx"]
    print("p1 tofino_approx:", {k: v for k, v in t.items() if k != "states"})
    q = p1["queues"][1]
    checks["meters trimmed at ingress"] = t["ingress_trimmed"] > 0
    checks["meter drops counted as reason 'meter'"] = q["dropped"]["meter"] == t["ingress_trimmed"]
    checks["deflections counted per queue and port"] = q["deflected"] == t["deflected"]
    checks["notifications follow deflections"] = t["notifications"] <= t["deflected"]
    dropped = {k: v for k, v in q["dropped"].items() if v}
    print(f"p1 data queue (snapshot once quiet): received {q['received']}, admitted "
          f"{q['admitted']}, dropped {dropped}")
    checks["data queue: received = admitted + dropped"] = (
        q["received"] == q["admitted"] + sum(q["dropped"].values()))
    return verdicts(checks)


def drop_set_live(queues_json):
    """trimming: after trim.set overflow=drop, p3/1 drops and trims nothing."""
    q = next(q for q in load(queues_json) if q["interface"] == "p3" and q["queue"] == 1)
    print(f"second flood at p3/1: dropped {sum(q['dropped'].values())}, trimmed {q['trimmed']}")
    return q["trimmed"] == 0 and sum(q["dropped"].values()) > 100


def trimmed_receiver(rx_json):
    """trimming: the receiver got whole data and trimmed headers, well formed, marked, early."""
    r = load(rx_json)
    return verdicts({
        "trimmed headers arrived": r["trimmed"] > 100,
        "whole data arrived too": r["whole"] > 1000,
        "every trimmed IPv4 header checksum verifies": r["trimmed_bad_ipv4"] == 0,
        "every trimmed UDP checksum verifies": r["trimmed_bad_udp"] == 0,
        "trimmed headers carry DSCP 8": r["trimmed_dscp"] == [8],
        "headers overtook queued data": r["overtaking_headers"] > 10,
    })


CHECKS = {f.__name__.replace("_", "-"): f for f in (
    within, tcp_rate, median_status_ms, median_in_range, watch_policies, capture_frames, hop_latency,
    record_replay, returned_headers, returned_again, tcp_kept_order, rx_workers, per_cpu_workers,
    shaper_rates, tcp_goodput, timeline_protean, fixed_fct, open_loop, schedule, trim_push_out,
    trim_transport, drop_set_live, trimmed_receiver)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="check", required=True)
    for name, fn in CHECKS.items():
        p = sub.add_parser(name, help=fn.__doc__.split("\n")[0], description=fn.__doc__)
        p.add_argument("args", nargs="*")
    a = ap.parse_args(argv)
    fn = CHECKS[a.check]
    try:
        inspect.signature(fn).bind(*a.args)
    except TypeError as e:
        ap.error(f"{a.check}: {e}")
    return 0 if fn(*a.args) else 1


if __name__ == "__main__":
    sys.exit(main())
