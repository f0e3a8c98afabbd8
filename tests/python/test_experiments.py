"""The experiments' Python (experiments/lib/) on small hand-made inputs whose results are known."""
import csv
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "experiments", "lib"))
import agreement  # noqa: E402
import e3_report  # noqa: E402
import e4_report  # noqa: E402
import e5_report  # noqa: E402
import e6_checks  # noqa: E402
import e7_agreement  # noqa: E402
import e7_report  # noqa: E402
import e8_report  # noqa: E402
import e8_runs  # noqa: E402
import fabric_live  # noqa: E402
import fabric_report  # noqa: E402
import fct_collect  # noqa: E402
import fig13_report  # noqa: E402
import trim_rx  # noqa: E402
import trim_scale  # noqa: E402


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def queue(received, admitted, transmitted, queued, threshold=0, pushed_out=0, peak=0):
    return {"received": received, "admitted": admitted, "transmitted": transmitted,
            "queued": queued, "peak_cells": peak,
            "dropped": {"threshold": threshold, "pool_full": 0, "pushed_out": pushed_out}}


def iperf(packets, lost, seconds):
    return json.dumps({"end": {"sum": {"packets": packets, "lost_packets": lost,
                                       "seconds": seconds}}})


class Scratch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()


class FctCollect(Scratch):
    def test_e1_appends_flows_and_one_run_row(self):
        run, out = f"{self.dir}/run", f"{self.dir}/out"
        os.makedirs(run)
        os.makedirs(out)
        write(f"{run}/fct.csv", "id,bytes,fct_ms,ok\n0,16384,3.5,1\n1,16384,210.0,0\n")
        # iperf3 appended an error object after the result: the first object counts.
        write(f"{run}/udp.json", iperf(1000, 100, 9.0) + '\n{"error": "x"}\n')
        write(f"{run}/stats.json", json.dumps({"ports": [
            {"interface": "p1", "queues": [queue(10, 7, 7, 0, threshold=3, peak=40)]},
            {"interface": "p2", "queues": [queue(900, 800, 800, 0, threshold=100, peak=900)]}]}))
        fct_collect.collect("e1", run, out, "dt", "2")
        with open(f"{out}/flows.csv") as f:
            self.assertEqual(f.read(), "dt,2,0,16384,3.5,1\ndt,2,1,16384,210.0,0\n")
        with open(f"{out}/runs.csv") as f:
            # 900 datagrams of 1400 B in 9 s = 1.12 Mbit/s.
            self.assertEqual(f.read(), "dt,2,1.12,3,100,40,900\n")

    def test_e2_sums_seven_udp_senders_over_queues_one_to_seven(self):
        run, out = f"{self.dir}/run", f"{self.dir}/out"
        os.makedirs(run)
        os.makedirs(out)
        write(f"{run}/fct.csv", "id,bytes,fct_ms,ok\n")
        for k in range(1, 8):
            write(f"{run}/udp{k}.json", iperf(1000, 0, 10.0))
        udp = [queue(5, 5, 5, 0, threshold=k, peak=10 * k) for k in range(1, 8)]
        write(f"{run}/stats.json", json.dumps({"ports": [
            {"interface": "p1", "queues": [queue(1, 1, 1, 0, peak=3)]},
            {"interface": "p2", "queues": [queue(0, 0, 0, 0)] + udp}]}))
        fct_collect.collect("e2", run, out, "fb", "1")
        with open(f"{out}/runs.csv") as f:
            self.assertEqual(f.read(), "fb,1,7.84,0,28,3,70\n")


class AgreementTable(Scratch):
    def row(self, queue, live, replay, diff, thr_mad):
        return {"experiment": "e2", "policy": "credence", "queue": queue, "live_drops": live,
                "replay_drops": replay, "drops_diff_pct": diff, "live_peak": 54,
                "replay_peak": 53, "mad_cells": 0, "mad_pct_b": "0.00",
                "threshold_mad_cells": thr_mad, "samples": 10, "spacing_p50_pct": "6.3",
                "spacing_p99_pct": "99.1", "spacing_gaps": 100, "capacity_cells": 9000}

    def test_misses_are_marked_and_a_queue_never_seen_busy_has_no_threshold_mad(self):
        rows = os.path.join(self.tmp.name, "rows.csv")
        with open(rows, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=agreement.COLUMNS)
            w.writeheader()
            w.writerow(self.row("p3/0", 27, 44, "63.0", "nan"))
            w.writerow(self.row("p1/0", 780, 839, "7.6", "65"))
        md = os.path.join(self.tmp.name, "agreement.md")
        agreement.markdown(rows, md)
        lines = open(md).read().splitlines()
        self.assertEqual(lines[2], "| e2 | credence | p3/0 | 27 | 44 | +63.0 % ✗ | 54 | 53 | 0 | "
                                   "0.00 % | — | 6.3 % / 99.1 % |")
        self.assertEqual(lines[3], "| e2 | credence | p1/0 | 780 | 839 | +7.6 % | 54 | 53 | 0 | "
                                   "0.00 % | 65 | 6.3 % / 99.1 % |")


class E6Checks(unittest.TestCase):
    STATS = {"buffer": {"pool_free_cells": 90, "pool_physical_cells": 100, "occupancy_cells": 10},
             "ports": [{"queues": [queue(10, 8, 5, 1, threshold=2, pushed_out=2)]}]}
    WATCH = [{"t_s": "0.001", "policy": "dt"}, {"t_s": "0.001", "policy": "dt"},
             {"t_s": "0.002", "policy": "lqd"}, {"t_s": "0.003", "policy": "dt"}]
    SWITCHES = [{"policy": "lqd"}, {"policy": "dt"}]

    def test_all_checks_hold(self):
        lines, ok = e6_checks.summarize(self.STATS, self.WATCH, self.SWITCHES, 2, 0)
        self.assertTrue(ok)
        self.assertIn("| policy changes seen in the 1 ms watch stream | 2 |", lines)

    def test_an_unbalanced_queue_a_lost_cell_or_a_failed_exit_fails(self):
        bad = json.loads(json.dumps(self.STATS))
        bad["ports"][0]["queues"][0]["transmitted"] = 4
        self.assertFalse(e6_checks.summarize(bad, self.WATCH, self.SWITCHES, 2, 0)[1])
        leak = json.loads(json.dumps(self.STATS))
        leak["buffer"]["pool_free_cells"] = 89
        self.assertFalse(e6_checks.summarize(leak, self.WATCH, self.SWITCHES, 2, 0)[1])
        self.assertFalse(e6_checks.summarize(self.STATS, self.WATCH, self.SWITCHES, 2, 3)[1])
        # Five switches but only two changes seen in the stream.
        self.assertFalse(e6_checks.summarize(self.STATS, self.WATCH, self.SWITCHES, 5, 0)[1])


class E5Report(Scratch):
    def test_errors_against_the_median_cs_demand(self):
        demand = {"16": [100, 120, 110]}
        rows = [{"sync": "dequeue", "fan_in": "16", "burst": "0", "predicted_cells": "0"},
                {"sync": "dequeue", "fan_in": "16", "burst": "1", "predicted_cells": "99"},
                {"sync": "dequeue", "fan_in": "16", "burst": "2", "predicted_cells": "132"}]
        lines = e5_report.table(demand, rows, 21000)
        # Median 110: errors 10 % and 20 %; the learning-phase burst (0) is not a prediction.
        self.assertIn("| dequeue | 16 | 110 | 3 | 2 | 15.0 % | 20.0 % |", lines)

    def test_bursts_after_those_seen_are_appended(self):
        out = f"{self.dir}/b.csv"
        policy = {"state": {"bursts": [{"predicted_cells": 0, "peak_cells": 5},
                                       {"predicted_cells": 7, "peak_cells": 9}]}}
        self.assertEqual(e5_report.append_bursts(policy, 1, "32", "3", out, "probe"), 2)
        with open(out) as f:
            self.assertEqual(f.read(), "probe,32,3,1,7,9\n")


class E4Report(unittest.TestCase):
    @staticmethod
    def result(policy, transmitted, arrivals=100):
        return {"policy": policy, "arrivals": arrivals, "transmitted": transmitted,
                "queues": [{"dropped": {"threshold": 0, "prediction": 0, "pushed_out": 0,
                                        "pool_full": arrivals - transmitted if k == 0 else 0}}
                           for k in range(8)]}

    def data(self, **t):
        names = ["cs", "dt", "lqd", "FollowLQD", "perfect", "perfect-nosafeguard", "forest",
                 "flip-0.001", "flip-0.01", "flip-0.1"]
        return {"fig3": {"description": "lone bursts",
                         "results": [self.result(p, t.get(p, 100)) for p in names]}}

    def test_fig3_expectations_hold_for_lqd_like_results(self):
        _, md, checks = e4_report.evaluate(self.data(dt=60), ["fig3"])
        self.assertTrue(all(ok for _, _, ok in checks), checks)
        self.assertIn("| dt | 60 | 0.6000 | 0 | 40 | 0 | 0 |", md)

    def test_a_credence_below_lqd_fails_its_expectation(self):
        _, _, checks = e4_report.evaluate(self.data(dt=60, perfect=90), ["fig3"])
        failed = {c for _, c, ok in checks if not ok}
        self.assertIn("perfect within 2 % of LQD", failed)


class E3Report(Scratch):
    def test_pct_is_the_nearest_rank(self):
        self.assertEqual(e3_report.pct([5, 1, 4, 2, 3], 0.5), 3)
        self.assertEqual(e3_report.pct(list(range(1, 101)), 0.99), 99)
        self.assertEqual(e3_report.pct([7], 0.999), 7)

    def test_report_pools_repetitions_and_keeps_each_ones_p99(self):
        out = self.dir
        key = "single,cubic,dt,0.4,0.5"
        write(f"{out}/runs.csv",
              "queues,transport,policy,load,burst,rep,occ_p99_cells,drops,p1_drops,received,"
              "tx_bytes,catchup_bytes\n"
              f"{key},1,100,5,2,50,1000,100\n{key},2,300,1,0,50,1000,0\n")
        write(f"{out}/queries.csv", "queues,transport,policy,load,burst,rep,qct_ms\n" +
              "".join(f"{key},1,{v}\n" for v in (10, 20)) +
              "".join(f"{key},2,{v}\n" for v in (30, 40)))
        write(f"{out}/flows.csv", "queues,transport,policy,load,burst,rep,kind,bytes,fct_ms,ok\n"
              f"{key},1,short,1000,2.0,1\n{key},1,long,1000000,800.0,1\n"
              f"{key},2,short,1000,4.0,0\n")
        e3_report.report(out, False, "15", "20", "2")
        with open(f"{out}/summary.csv") as f:
            row = next(csv.DictReader(f))
        self.assertEqual(row["queries"], "4")
        self.assertEqual(float(row["qct_p99_ms"]), 40.0)
        self.assertEqual((float(row["qct_p99_rep_min_ms"]), float(row["qct_p99_rep_max_ms"])),
                         (20.0, 40.0))
        self.assertEqual(row["short_flows"], "1")  # the failed one counts as failed
        self.assertEqual(row["failed_flows"], "1")
        self.assertEqual(float(row["long_goodput_mbps"]), 10.0)  # 8 Mbit in 0.8 s
        self.assertEqual(row["occ_p99_cells"], "300")
        self.assertEqual((row["drops"], row["p1_drops"]), ("6", "2"))
        self.assertEqual(float(row["shaper_catchup_pct"]), 5.0)
        self.assertTrue(os.path.exists(f"{out}/qct_cdf.png"))


class TrimRx(unittest.TestCase):
    @staticmethod
    def frame(seq, length, dscp=0, sport=1000):
        """An IPv4/UDP frame of `length` bytes carrying iperf3's datagram number `seq`, with
        valid checksums."""
        import struct
        payload = struct.pack("!III", 0, 0, seq).ljust(length - 42, b"x")
        udp = struct.pack("!HHHH", sport, 5201, 8 + len(payload), 0) + payload
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, dscp << 2, 20 + len(udp), 0, 0, 64, 17,
                                   0, bytes([198, 18, 0, 1]), bytes([198, 18, 0, 3])))
        ip[10:12] = struct.pack("!H", 0xFFFF - trim_rx.ones_sum(bytes(ip)))
        pseudo = bytes(ip[12:20]) + struct.pack("!BBH", 0, 17, len(udp))
        check = 0xFFFF - trim_rx.ones_sum(udp, trim_rx.ones_sum(pseudo))
        udp = udp[:6] + struct.pack("!H", check or 0xFFFF) + udp[8:]
        return bytes(14) [:12] + b"\x08\x00" + bytes(ip) + udp

    def test_counts_headers_that_overtook_data_and_checks_their_checksums(self):
        whole = lambda seq: self.frame(seq, 1442)
        header = lambda seq: self.frame(seq, 1442)[:128]  # cut, lengths not fixed: UDP fails
        bad_ip = lambda seq: good_header(seq)[:22] + b"\x01" + good_header(seq)[23:]  # TTL 1
        good_header = lambda seq: self.frame(seq, 128, dscp=8)
        r = trim_rx.analyse([whole(1), good_header(5), whole(2), whole(3), good_header(6),
                             header(7), bad_ip(8)], 128)
        self.assertEqual((r["whole"], r["trimmed"]), (3, 4))
        self.assertEqual(r["overtaking_headers"], 1)  # 5 came before 2 and 3; 6-8 before none
        self.assertEqual((r["trimmed_bad_ipv4"], r["trimmed_bad_udp"]), (1, 1))  # 8 and 7
        self.assertEqual(r["trimmed_dscp"], [0, 8])



class FabricLiveTransport(unittest.TestCase):
    """fabric_live.live_transport: the live hosts run the scenario's cc or the run stops (a
    failed sysctl once left them on the namespace's default, bbr, unnoticed)."""

    AVAILABLE = "reno bbr cubic\n"  # this machine's kernel: no dctcp

    def test_newreno_is_reno_and_ecn_follows_the_scenario(self):
        self.assertEqual(fabric_live.live_transport({"cc": "newreno", "ecn": True}, self.AVAILABLE),
                         ("reno", 1))
        self.assertEqual(fabric_live.live_transport({"cc": "cubic"}, self.AVAILABLE), ("cubic", 0))

    def test_a_kernel_without_the_cc_stops_the_run(self):
        with self.assertRaises(SystemExit) as e:
            fabric_live.live_transport({"cc": "dctcp"}, self.AVAILABLE)
        self.assertIn("lacks", str(e.exception.code))
        self.assertIn("reno bbr cubic", str(e.exception.code))
        self.assertEqual(fabric_live.live_transport({}, "reno dctcp"), ("dctcp", 1))


class FabricSameArrivals(unittest.TestCase):
    """fabric_live.write_schedules turns ns-3's flows into each receiving host's schedule, and
    fabric_report reads a replayed run as ns-3 times it (from the connect)."""

    class Host:
        def __init__(self, ip):
            self.ip = ip

        def IP(self):  # noqa: N802 (Mininet's name)
            return self.ip

    def test_a_flow_is_asked_for_by_its_receiver_from_its_sender(self):
        with tempfile.TemporaryDirectory() as d:
            write(f"{d}/flows.csv",
                  "id,kind,src,dst,bytes,received,start_ns,fct_ns,slowdown,query,first_byte_ns\n"
                  "0,background,2,0,5000,5000,1500000,9,1,-1,5\n"
                  "1,incast,2,1,250000,0,2000000,-1,,7,-1\n"
                  "2,incast,3,1,250000,0,2000000,-1,,7,-1\n"
                  "3,background,1,0,2000000,0,2500000,-1,,-1,-1\n")
            hosts = [self.Host(f"198.18.0.{i + 1}") for i in range(4)]
            paths = fabric_live.write_schedules(f"{d}/flows.csv", hosts, d)
            self.assertEqual(sorted(paths), [0, 1])
            with open(paths[0]) as f:
                self.assertEqual(f.read(), "start_ms,kind,query,server,bytes\n"
                                 "1.500000,short,-1,198.18.0.3:5500,5000\n"
                                 "2.500000,long,-1,198.18.0.2:5500,2000000\n")
            with open(paths[1]) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([(r["kind"], r["query"], r["server"]) for r in rows],
                             [("query", "7", "198.18.0.3:5500"), ("query", "7", "198.18.0.4:5500")])

    def test_the_report_times_live_flows_from_the_connect_and_counts_lost_handshakes(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(f"{d}/switches")
            write(f"{d}/h1-schedule.csv",
                  "id,kind,query,server,bytes,start_ms,fct_ms,ok,connect_ms\n"
                  "0,short,-1,198.18.0.3:5500,5000,1,10,1,30\n"
                  "1,query,7,198.18.0.3:5500,250000,2,100,1,1000.5\n"
                  "2,query,7,198.18.0.4:5500,250000,2,90,1,0\n"
                  "3,long,-1,198.18.0.2:5500,2000000,3,0,0,0\n")
            write(f"{d}/h1-schedule.csv.queries.csv", "query,qct_ms\n7,1101\n")
            live = fabric_report.live_side(d)
            self.assertEqual(live["short"], [40.0])
            self.assertEqual((live["queries"], live["qct"]), (1, [1101.0]))
            self.assertEqual((live["flows"], live["failed"]), (2, 1))
            self.assertEqual(live["slow_handshakes"], 1)


if __name__ == "__main__":
    unittest.main()


class E7Report(unittest.TestCase):
    """A query completes with its slowest flow; a query with a failed flow has no completion time;
    retransmission delays pool NACKed and timed-out ones; headers' latency has its own column."""

    def test_cells(self):
        def flow(query, flow_, fct, failed=0):
            return {"policy": "dt", "mode": "trim", "fanin": "2", "query": str(query),
                    "flow": str(flow_), "fct_ns": str(fct), "failed": str(failed)}
        flows = [flow(0, 0, 10_000_000), flow(0, 1, 30_000_000),
                 flow(1, 0, 20_000_000), flow(1, 1, 0, failed=1)]
        events = [{"policy": "dt", "mode": "trim", "fanin": "2", "kind": k, "ns": str(ns)}
                  for k, ns in (("header", 100_000), ("header", 300_000), ("header", 200_000),
                                ("nack_retx", 2_000_000), ("rto_retx", 12_000_000),
                                ("data", 5_000_000))]
        rows, _ = e7_report.cells(flows, events)
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual(r["queries"], 1)
        self.assertAlmostEqual(r["qct_mean_ms"], 30.0)
        self.assertEqual(r["failed"], 1)
        self.assertEqual((r["retx"], r["rto_retx"]), (2, 1))
        self.assertAlmostEqual(r["retx_delay_p99_ms"], 12.0)
        self.assertEqual(r["headers"], 3)
        self.assertAlmostEqual(r["header_p50_ms"], 0.2)
        self.assertAlmostEqual(r["data_p50_ms"], 5.0)


class E7Counters(Scratch):
    """The counters below E7's table come per policy and trimming mode (each mode's snapshot
    taken after a counters.reset); drop mode has none to show."""

    def test_one_line_per_trimming_mode(self):
        def stats(trimmed, reserve):
            trim_q = {"trimmed_sent": 3, "trimmed_dropped": 1, "header_reserve": reserve,
                      "dropped": {"threshold": 1, "pool_full": 0}}
            data_q = {"trimmed": trimmed, "bounced": 1, "dropped": {"threshold": trimmed}}
            return {"ports": [{"interface": "p1", "queues": [trim_q, data_q],
                               "tofino_approx": {"deflected": 7, "ingress_trimmed": 0}}]}
        for name, s in (("dt-drop", stats(0, 0)), ("dt-trim", stats(4, 2)),
                        ("dt-dod", stats(9, 5))):
            with open(f"{self.dir}/stats-{name}.json", "w") as f:
                json.dump(s, f)
        lines = e7_report.tofino_counters(self.dir)
        self.assertEqual(len(lines), 2)
        self.assertTrue(lines[0].startswith("- dt, ideal trim, p1: trimmed 4"))
        self.assertIn("returned to their senders 1", lines[0])
        self.assertTrue(lines[1].startswith("- dt, fixed meters + DoD, p1: trimmed 9"))
        self.assertIn("into the header reserve 5", lines[1])
        self.assertIn("deflected 7", lines[1])


class E7Agreement(Scratch):
    def test_concordance_counts_pairs_in_the_same_order(self):
        self.assertEqual(e7_agreement.concordance([1, 2, 3, 4], [1, 2, 3, 4]), 1.0)
        self.assertEqual(e7_agreement.concordance([1, 2, 3, 4], [4, 3, 2, 1]), 0.0)
        # One swap among 4 shared items: 5 of 6 pairs concordant; items not in both are ignored.
        self.assertAlmostEqual(e7_agreement.concordance([1, 2, 3, 4, 9], [8, 2, 1, 3, 4]), 5 / 6)
        self.assertEqual(e7_agreement.concordance([1], [2]), 1.0)

    def test_a_packet_trimmed_twice_is_two_items(self):
        self.assertEqual(e7_agreement.numbered(["a", "b", "a"]), [("a", 1), ("b", 1), ("a", 2)])

    def test_ndp_data_key_reads_an_ethernet_ipv4_udp_frame(self):
        import struct
        eth = b"\x00" * 12 + b"\x08\x00"
        ip = bytes([0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17]) + b"\x00" * 10
        udp = b"\x00" * 8
        ndp = struct.pack("<IBBBBIII", 0x4E445031, 2, 1, 0, 0, 3 * 65536 + 5, 17, 40)
        self.assertEqual(e7_agreement.ndp_data_key(eth + ip + udp + ndp + b"\x00" * 16),
                         (3, 5, 17))
        pull = struct.pack("<IBBBBIII", 0x4E445031, 5, 0, 0, 0, 1, 2, 3)
        self.assertIsNone(e7_agreement.ndp_data_key(eth + ip + udp + pull + b"\x00" * 16))
        tcp = ip[:9] + b"\x06" + ip[10:]
        self.assertIsNone(e7_agreement.ndp_data_key(eth + tcp + udp + ndp + b"\x00" * 16))

    def test_counters_and_headers_of_a_run(self):
        run = self.tmp.name

        def q(trimmed=0, threshold=0, meter=0, **kw):
            d = {"trimmed": trimmed, "trimmed_dropped": 0, "header_reserve": 0, "bounced": 0,
                 "deflected": 0, "dropped": {"threshold": threshold, "pool_full": 0,
                                             "meter": meter}}
            d.update(kw)
            return d
        write(os.path.join(run, "stats.json"), json.dumps(
            {"ports": [{"interface": "p1", "queues": [q(), q(trimmed=10, threshold=10)]}]}))
        write(os.path.join(run, "replay.json"), json.dumps({"results": [{"queues": [
            dict(q(), label="p1/0"), dict(q(trimmed=11, threshold=11), label="p1/1")]}]}))
        write(os.path.join(run, "events.csv"),
              "query,flow,seq,kind,ns\n0,1,5,header,9\n0,1,6,header,9\n0,2,0,data,9\n")
        write(os.path.join(run, "departures.csv"), "policy,t_ns,queue,arrival_ns,bytes,cut\n")
        rows = e7_agreement.rows(run, "dt", "trim")
        self.assertEqual(rows[0], ["dt", "trim", "data refused (threshold, pool full)", 10, 11,
                                   "+10.0 %"])
        self.assertEqual(rows[1][2:], ["cut copies sent on (trimmed)", 10, 11, "+10.0 %"])
        # No recording here: the replay's headers cannot be traced, so none are shared.
        self.assertEqual(rows[-2][2:], ["headers: the same packets trimmed (Jaccard)", 2, 0,
                                        "0.0 %"])


class E7AgreementTable(Scratch):
    def test_several_runs_give_medians_and_the_range(self):
        paths = []
        for k, (live, rep, jac) in enumerate([(100, 110, "70.0 %"), (100, 90, "80.0 %"),
                                              (200, 200, "75.0 %")]):
            path = os.path.join(self.dir, f"rows{k}.csv")
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(e7_agreement.COLUMNS)
                w.writerow(["dt", "trim", "deflected", live, rep, "x"])
                w.writerow(["dt", "trim", "headers: the same packets trimmed (Jaccard)", 5, 5,
                            jac])
                if k == 0:
                    w.writerow(["dt", "trim", "notifications", 0, 3, "+3"])
            paths.append(path)
        md = os.path.join(self.dir, "t.md")
        e7_agreement.markdown(paths, md)
        text = open(md).read()
        self.assertIn("of 3 runs", text)
        self.assertIn("| dt | trim | deflected | 100 | 110 | +0.0 % [-10.0 – +10.0] |", text)
        self.assertIn("(Jaccard) | 5 | 5 | 75.0 % [70.0 – 80.0] |", text)
        self.assertIn("| dt | trim | notifications | 0 | 3 | — (1 of 3 runs) |", text)


class TrimScale(Scratch):
    def test_the_papers_sender_i_sits_on_pipeline_i_div_16(self):
        ports = [trim_scale.in_port(i) for i in range(64)]
        self.assertEqual(sorted(ports), list(range(64)))
        self.assertTrue(all(p % 4 == i // 16 for i, p in enumerate(ports)))

    def test_pessimistic_periods_merge_and_restart_from_each_notification(self):
        write(os.path.join(self.dir, "notes.csv"),
              "policy,t_ns,port\nx,1000,p4\nx,4000,p4\nx,20000,p4\nx,2000,p8\n")
        periods = trim_scale.pessimistic_periods(self.dir, 6.0)
        self.assertEqual(periods[4], [[1.0, 10.0], [20.0, 26.0]])
        self.assertEqual(periods[8], [[2.0, 8.0]])


class E8Report(Scratch):
    def summary(self, incast_p999, short_p999):
        fct = lambda v: {"count": 10, "p50": v / 2, "p95": v / 1.5, "p99": v / 1.2, "p999": v,
                         "mean": v / 3}
        bucket = lambda v: {"flows": 10, "completed": 10, "fct_ms": fct(v), "slowdown": fct(1)}
        return {"traffic": {"flows": 40, "completed": 30,
                            "background": {"short": bucket(short_p999), "medium": bucket(1),
                                           "long": dict(bucket(50), goodput_gbps_mean=5.0)},
                            "incast": bucket(incast_p999),
                            "queries": {"count": 5, "completed": 5, "qct_ms": fct(3)}},
                "switches": [{"role": "leaf", "occupancy": {"p99_share": 0.5},
                              "dropped": {"threshold": 7, "pool_full": 1}, "ecn_marked": 2500,
                              "dropped_by_queue": {"0": {"threshold": 6},
                                                   "1": {"threshold": 1, "pool_full": 1}}}]}

    def test_medians_over_seeds_and_the_papers_ratio(self):
        cells = []
        runs = {("dt", 0.2, 1): (20.0, 4.0), ("dt", 0.2, 2): (40.0, 6.0),
                ("protean", 0.2, 1): (4.0, 2.0), ("protean", 0.2, 2): (6.0, 2.0)}
        for i, ((policy, load, seed), (inc, sh)) in enumerate(runs.items()):
            os.makedirs(f"{self.dir}/runs/{i}")
            with open(f"{self.dir}/runs/{i}/summary.json", "w") as f:
                json.dump(self.summary(inc, sh), f)
            # Four incast responses; under dt one waits out the 10 ms RTO, another never ends.
            late = ["12000000", "-1"] if policy == "dt" else ["900000", "800000"]
            write(f"{self.dir}/runs/{i}/flows.csv",
                  "id,kind,src,dst,bytes,received,start_ns,fct_ns,slowdown,query\n"
                  + "".join(f"{k},incast,1,0,1000,1000,0,{fct},1.0,0\n"
                            for k, fct in enumerate(["500000", "700000"] + late))
                  + "9,background,1,0,1000,1000,0,20000000,1.0,-1\n")
            cells.append([policy, load, seed, f"runs/{i}"])
        index = {"quick": False, "figures": {"protean": cells}}
        body, png = e8_report.report(self.dir, "protean", index)
        # dt's p99.9 incast FCT: median of 20 and 40 = 30, range 20-40; Protean's 5 (4-6).
        self.assertIn("| dt | 30.0 (20.0–40.0) |", body)
        self.assertIn("| protean | 5.00 (4.00–6.00) |", body)
        # The paper's comparison: dt's 30 over Protean's 5 = 6x; cs has no runs.
        self.assertIn("dt: 6.00x at 0.2", body)
        self.assertIn("| flows completed (%) | load 0.2 |", body)
        self.assertIn("| dt | 75.0 (75.0–75.0) |", body)
        self.assertIn("| incast responses at 10 ms or more (%) | load 0.2 |", body)
        self.assertIn("| dt | 50.0 (50.0–50.0) |", body)
        self.assertIn("| protean | 0.00 (0.00–0.00) |", body)
        # Drops of the incast class (queue 0) only, and marks in thousands.
        self.assertIn("| incast-class frames dropped, all switches | load 0.2 |\n|---|---|\n"
                      "| dt | 6.00 (6.00–6.00) |", body)
        self.assertIn("| ECN marks, all switches (thousands) | load 0.2 |\n|---|---|\n"
                      "| dt | 2.50 (2.50–2.50) |", body)
        self.assertTrue(os.path.exists(png))


class E8Flip(Scratch):
    def test_credence_is_drawn_against_its_flip_probability_beside_the_references(self):
        table = {"lqd": {"0.4": [10.0, 14.0]}, "followlqd": {"0.4": [12.0]},
                 "credence": {"0.4": [11.0, 13.0]}, "flip-0.1": {"0.4": [40.0, 60.0]},
                 "flip-0.001": {"0.4": [12.0]}, "flip-0.01": {"0.2": [99.0]}}
        points, refs = e8_report.flip_series(table, "0.4")
        # In order of probability, the unflipped forest at 0; flip-0.01 has no run at 0.4.
        self.assertEqual(points, [(0.0, 12.0, 11.0, 13.0), (0.001, 12.0, 12.0, 12.0),
                                  (0.1, 50.0, 40.0, 60.0)])
        self.assertEqual(refs, {"lqd": (12.0, 10.0, 14.0), "followlqd": (12.0, 12.0, 12.0)})

    def test_the_figure_plots_against_flip_probability(self):
        cells = []
        for i, policy in enumerate(["lqd", "credence", "flip-0.01"]):
            os.makedirs(f"{self.dir}/runs/{i}")
            with open(f"{self.dir}/runs/{i}/summary.json", "w") as f:
                json.dump(E8Report.summary(None, 10.0 * (i + 1), 2.0), f)
            write(f"{self.dir}/runs/{i}/flows.csv",
                  "id,kind,src,dst,bytes,received,start_ns,fct_ns,slowdown,query\n"
                  "0,incast,1,0,1000,1000,0,500000,1.0,0\n")
            cells.append([policy, 0.4, 1, f"runs/{i}"])
        calls = []
        real = e8_report.plot_flip
        e8_report.plot_flip = lambda *a: calls.append(a)
        try:
            e8_report.report(self.dir, "credence-flip", {"figures": {"credence-flip": cells}})
        finally:
            e8_report.plot_flip = real
        self.assertEqual(len(calls), 1)
        self.assertEqual(calls[0][3], "0.4")  # the one load, in the title


class E8RunKeys(unittest.TestCase):
    def key(self, figure, policy, value, seed):
        for p, v, s, overrides in e8_runs.cells(figure):
            if (p, v, s) == (policy, value, seed):
                return e8_runs.run_key(e8_runs.FIGURES[figure]["scenario"], overrides)
        raise KeyError((figure, policy, value, seed))

    def test_one_configuration_two_figures_reach_is_one_run(self):
        # Figure 6 at load 0.4 and Figure 7 at a burst of 50 %: both the scenario's own values.
        self.assertEqual(self.key("credence-load", "dt", 0.4, 1),
                         self.key("credence-burst", "dt", "50%", 1))
        self.assertEqual(self.key("credence-load", "lqd", 0.4, 2),
                         self.key("credence-flip", "lqd", 0.4, 2))
        # Anything that changes the run changes the key: the load, the burst, the seed, the
        # policy.
        self.assertNotEqual(self.key("credence-load", "dt", 0.4, 1),
                            self.key("credence-load", "dt", 0.6, 1))
        self.assertNotEqual(self.key("credence-burst", "dt", "50%", 1),
                            self.key("credence-burst", "dt", "75%", 1))
        self.assertNotEqual(self.key("credence-load", "dt", 0.4, 1),
                            self.key("credence-load", "dt", 0.4, 2))
        self.assertNotEqual(self.key("credence-load", "dt", 0.4, 1),
                            self.key("credence-load", "abm", 0.4, 1))

    def test_an_axis_of_override_sets(self):
        # credence-paper's axis is the fabric: each value a set of overrides.
        cells = {(p, v): o for p, v, _, o in e8_runs.cells("credence-paper")}
        self.assertIn("topology.leaves=16", cells[("dt", 256)])
        self.assertNotIn("topology.leaves=16", cells[("dt", 32)])
        self.assertIn("workload.websearch.load=0.4", cells[("dt", 32)])
        self.assertNotEqual(self.key("credence-paper", "dt", 32, 1),
                            self.key("credence-paper", "dt", 256, 1))

    def test_the_order_of_the_overrides_does_not_matter(self):
        scenario = e8_runs.FIGURES["credence-load"]["scenario"]
        a = ["workload.websearch.load=0.6", "run.seed=3"]
        self.assertEqual(e8_runs.run_key(scenario, a), e8_runs.run_key(scenario, a[::-1]))


class E8Index(Scratch):
    def test_running_one_figure_keeps_the_others_cells(self):
        e8_runs.write_index(self.dir, False, {"protean": [["dt", 0.2, 1, "runs/a"]]})
        e8_runs.write_index(self.dir, False, {"smartbuf": [["cs", 0.5, 1, "runs/b"]]})
        with open(f"{self.dir}/index.json") as f:
            figures = json.load(f)["figures"]
        self.assertEqual(figures, {"protean": [["dt", 0.2, 1, "runs/a"]],
                                   "smartbuf": [["cs", 0.5, 1, "runs/b"]]})
        # A figure run again replaces its own cells; a quick index does not mix with a full one.
        e8_runs.write_index(self.dir, False, {"protean": [["cs", 0.2, 1, "runs/c"]]})
        with open(f"{self.dir}/index.json") as f:
            self.assertEqual(json.load(f)["figures"]["protean"], [["cs", 0.2, 1, "runs/c"]])
        e8_runs.write_index(self.dir, True, {"credence-load": []})
        with open(f"{self.dir}/index.json") as f:
            index = json.load(f)
        self.assertEqual(index, {"quick": True, "figures": {"credence-load": []}})


class Fig13Report(unittest.TestCase):
    def test_added_latency_is_against_idle_in_ms_and_packet_times(self):
        rtts = {"idle": [0.1, 0.1, 0.2], "droptail": [24.3, 24.32, 25.0],
                "trim": [1.311, 1.312, 1.5]}
        rs = {r["case"]: r for r in fig13_report.rows(rtts, {})}
        self.assertIsNone(rs["idle"]["added_ms"])
        self.assertAlmostEqual(rs["droptail"]["added_ms"], 24.22)
        # 1514 bytes at 100 Mbit/s: 121.12 us a frame, so 24.22 ms is 200 frames.
        self.assertAlmostEqual(rs["droptail"]["added_packets"], 199.97, places=2)
        self.assertAlmostEqual(rs["trim"]["added_packets"], 1.212 / 0.12112, places=3)
        self.assertEqual(rs["trim"]["paper_ms"], 0.036)
        self.assertIn("| 9 TCP senders, 200-packet drop-tail queue | 3 |", fig13_report.table(
            fig13_report.rows(rtts, {})))

    def test_without_an_idle_case_nothing_is_added(self):
        rs = fig13_report.rows({"trim": [1.0, 2.0]}, {})
        self.assertEqual([r["case"] for r in rs], ["trim"])
        self.assertIsNone(rs[0]["added_ms"])
