"""The benchmarks' Python (bench/lib/) on hand-made measurements whose results are known."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import cold_path_report  # noqa: E402
import cpu_clock  # noqa: E402
import exchange_phases  # noqa: E402
import format_results  # noqa: E402
import forwarding_report  # noqa: E402
import host_bounds_report  # noqa: E402
import idle_latency_report  # noqa: E402
import idle_latency_row  # noqa: E402
import loss_sweep_report  # noqa: E402
import tcp_reorder_report  # noqa: E402


def run(fn, argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(argv)
    return out.getvalue()


class ForwardingReport(unittest.TestCase):
    def measure(self, name, label, rep, tcp1, kpps, busy_jiffies, latency=None, tcp_cpu=None,
                switch_busy=None):
        # 5 s of blasting, RX counter +kpps*5000 frames; 100 pings of 10..109 µs.
        rtts = " ".join(f"{(10 + i) / 1000:.3f}" for i in range(100))
        blast = json.dumps({"sent": kpps * 5000, "seconds": 5.0, "pps": kpps * 1000})
        extra = list(latency) if latency else []
        if tcp_cpu is not None:
            extra = (extra + ["{}"] * 3)[:3] + [json.dumps(tcp_cpu)]
        if switch_busy is not None:
            extra = (extra + ["{}"] * 4)[:4] + [json.dumps({"switch_busy": switch_busy})]
        line = run(forwarding_report.row,
                   [name, str(rep), str(tcp1 * 1e6), str(tcp1 * 1e6), "0", str(kpps * 5000), blast,
                    "5", rtts, str(busy_jiffies), "100", label] + extra)
        r = json.loads(line)
        r["cpu_mhz"] = 2000.0  # the host's own clock is read by the row (tested in CpuClock)
        return r

    @staticmethod
    def latency(p1_wakeup_ns, p2_sent_ns):
        """`sharebufctl --json latency` with two hops set (the others never recorded)."""
        def hop(p50, count=10):
            return {"p50_ns": p50, "p99_ns": 2 * p50, "count": count}
        return json.dumps([
            {"interface": "p1", "hops": {"wakeup": hop(p1_wakeup_ns), "ring_to_rx": hop(0, 0)}},
            {"interface": "p2", "hops": {"rx_to_sent": hop(p2_sent_ns)}}])

    def test_row_computes_rates_percentiles_and_cpu_per_frame(self):
        r = self.measure("bridge", "Linux bridge", 1, 7000, 1000, 500)
        self.assertEqual(r["delivered_kpps"], 1000)
        self.assertEqual((r["ping_p50_us"], r["ping_p99_us"]), (60, 108))
        # 500 jiffies at 100 Hz = 5 s of CPU over 5e6 frames = 1000 ns each.
        self.assertAlmostEqual(r["cpu_ns_per_frame"], 1000)

    def test_the_switchs_own_cpu_and_the_spread_over_the_repetitions(self):
        # 250 ticks at 100 Hz over 5 s of flood and 5e6 frames: 500 ns a frame, half a core.
        rows = [self.measure("sharebufd", "sb", rep, tcp, kpps, 1000, switch_busy=own)
                for rep, tcp, kpps, own in ((1, 3000, 1000, 250), (2, 3600, 1200, 300),
                                            (3, 4000, 900, 200))]
        self.assertAlmostEqual(rows[0]["switch_cpu_ns_per_frame"], 500)
        self.assertAlmostEqual(rows[0]["switch_cpu_pct"], 50)
        bridge = self.measure("bridge", "Linux bridge", 1, 7000, 1000, 500)
        self.assertNotIn("switch_cpu_ns_per_frame", bridge)
        text = self.table_of(rows + [bridge], 3)
        self.assertIn("| sb | 3600 (3000–4000) | 1000 (900–1200) | 2000 (1667–2222) | 500 (444–500) "
                      "| 50 (40–60) |", text)
        self.assertIn("| Linux bridge | 7000 (7000–7000) | 1000 (1000–1000) | 1000 (1000–1000) | – "
                      "| – |", text)

    @staticmethod
    def table_of(rows, reps):
        """The report's table of these rows (written to a results file as the script does)."""
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
        try:
            return run(forwarding_report.table, [f.name, str(reps), "5"])
        finally:
            os.unlink(f.name)

    def test_table_takes_medians_and_the_ratios_against_the_bridge(self):
        rows = [self.measure("sharebufd", "sharebufd (cs)", rep, tcp, 1200, 1000)
                for rep, tcp in enumerate((3000, 3600, 4000))]
        text = self.table_of(rows + [self.measure("bridge", "Linux bridge", 1, 7200, 1200, 500)], 3)
        self.assertIn("| sharebufd (cs) | 3600 | 3600 | – / – | 1200 | 1200 | 1667 / 3333 | 60 | 108 |",
                      text)
        self.assertIn("in cycles, that time at the clock /proc/cpuinfo gave during the run (2000 MHz;",
                      text)
        self.assertIn("- sharebufd (cs) / bridge: TCP 0.50x (1 stream), 0.50x (4 streams) (target: at "
                      "least 1x); 64 B", text)

    def test_cpu_per_tcp_segment_beside_the_goodputs(self):
        # 1 stream: 1000 jiffies at 100 Hz = 10 s of CPU over 2.5e6 segments = 4000 ns each.
        cpu = lambda b1, f1, b4, f4: {"tcp1_busy": b1, "tcp1_frames": f1,  # noqa: E731
                                      "tcp4_busy": b4, "tcp4_frames": f4}
        rows = [self.measure("sharebufd", "sharebufd (cs)", rep, 3000, 1200, 1000,
                             tcp_cpu=cpu(b, 2_500_000, 900, 2_000_000))
                for rep, b in enumerate((800, 1000, 1200))]
        self.assertAlmostEqual(rows[1]["tcp1_cpu_ns_per_frame"], 4000)
        self.assertAlmostEqual(rows[1]["tcp4_cpu_ns_per_frame"], 4500)
        bridge = self.measure("bridge", "Linux bridge", 1, 6000, 1200, 500,
                              tcp_cpu=cpu(1000, 5_000_000, 900, 4_500_000))
        text = self.table_of(rows + [bridge], 3)
        self.assertIn("| sharebufd (cs) | 3000 | 3000 | 4000 / 4500 | 1200 |", text)
        self.assertIn("| Linux bridge | 6000 | 6000 | 2000 / 2000 | 1200 |", text)
        self.assertIn("- sharebufd (cs) / bridge: TCP 0.50x (1 stream), 0.50x (4 streams) (target: at "
                      "least 1x), at 2.00x / 2.25x the bridge's CPU per segment; 64 B", text)

    def test_a_switch_on_other_links_follows_its_own_and_is_compared_on_the_same_links(self):
        rows = [self.measure("bridge@off", "bridge off", 1, 8000, 1000, 500),
                self.measure("sharebufd@off", "sb off", 1, 2000, 1200, 1000),
                self.measure("bridge", "bridge", 1, 4000, 1000, 500),
                self.measure("sharebufd", "sb", 1, 3000, 1200, 1000)]
        text = self.table_of(rows, 1)
        # The main table only (the spread table after it lists the switches again).
        lines = [line.split(" |")[0] for line in text.split("Median (range")[0].splitlines()
                 if line.startswith("| ")]
        self.assertEqual(lines[1:], ["| sb", "| sb off", "| bridge", "| bridge off"])
        self.assertIn("- sb / bridge: TCP 0.75x (1 stream)", text)
        self.assertIn("- sb off / bridge: TCP 0.25x (1 stream)", text)

    def test_the_floor_is_compared_with_the_bridge_and_sharebufd_with_the_floor(self):
        rows = [self.measure("bridge", "bridge", 1, 4000, 1000, 500),
                self.measure("floor", "floor", 1, 3200, 1500, 750),
                self.measure("sharebufd", "sb", 1, 2400, 1200, 1000)]
        text = self.table_of(rows, 1)
        # The main table only (the spread table after it lists the switches again).
        lines = [line.split(" |")[0] for line in text.split("Median (range")[0].splitlines()
                 if line.startswith("| ")]
        self.assertEqual(lines[1:], ["| sb", "| floor", "| bridge"])
        self.assertIn("- floor / bridge: TCP 0.80x (1 stream)", text)
        # 1000 jiffies over 6e6 frames against 750 over 7.5e6: 1667 against 1000 ns, 1.67x.
        self.assertIn("- sb / floor: TCP 0.75x (1 stream), 0.75x (4 streams); 64 B frames 0.80x at "
                      "1.67x the CPU per frame; ping p50 1.00x.", text)

    def test_hop_histograms_per_phase_for_sharebufd_only(self):
        rows = [self.measure("sharebufd", "sharebufd (cs)", rep, 3000, 1200, 1000,
                             (self.latency(wake, 5000), self.latency(40000 + wake, 7000)))
                for rep, wake in enumerate((1000, 3000, 2000))]
        text = self.table_of(rows + [self.measure("bridge", "Linux bridge", 1, 7200, 1200, 500)], 3)
        flood, ping = text.split("during the 64 B flood")[1].split("during the pings")
        # Medians over the runs: wake-up 2 µs (flood), 42 µs (pings); p99 twice that.
        self.assertIn("| hop | sharebufd (cs) |", flood)
        self.assertIn("| request: wake-up (p1) | 2.0 / 4.0 |", flood)
        self.assertIn("| RX → sent (p2) | 5.0 / 10.0 |", flood)
        self.assertIn("| request: wake-up (p1) | 42.0 / 84.0 |", ping)
        self.assertIn("| RX → sent (p2) | 7.0 / 14.0 |", ping)
        # A hop never recorded (count 0) or not reported is a dash, not 0.0.
        self.assertIn("| ring → RX (p1) | – |", ping)
        self.assertNotIn("Linux bridge |", text.split("during the 64 B flood")[1])

    def test_reordering_receiver_median_and_switch_sum(self):
        empty = json.dumps([])
        rows = [self.measure("sharebufd-percpu", "sharebufd, rx_mode = per-cpu", rep, 3000, 1200, 1000,
                             (empty, empty, json.dumps({"rx_frames": 50000, "rx_out_of_order": late,
                                                        "receiver_ofo": ofo})))
                for rep, late, ofo in ((1, 10, 300), (2, 0, 100), (3, 40, 900))]
        self.assertEqual(rows[0]["tcp_order"]["rx_out_of_order"], 10)
        bridge = self.measure("bridge", "Linux bridge", 1, 7200, 1200, 500,
                              (empty, empty, json.dumps({"receiver_ofo": 7})))
        old = self.measure("sharebufd", "sharebufd (cs)", 1, 3000, 1200, 1000)
        text = self.table_of(rows + [bridge, old], 3)
        self.assertIn("- sharebufd, rx_mode = per-cpu: segments the receiver queued out of order during "
                      "the TCP runs (TcpExt TCPOFOQueue, median per run): 300; frames sharebufd took "
                      "after a later-received one of their flow (rx_out_of_order, all runs): 50 of 150000 "
                      "(0.033 %).", text)
        self.assertIn("- Linux bridge: segments the receiver queued out of order during the TCP runs "
                      "(TcpExt TCPOFOQueue, median per run): 7.", text)
        # A row without the counters (an older row) adds no line.
        self.assertNotIn("sharebufd (cs): segments", text)

    def test_rows_without_histograms_print_no_hop_tables(self):
        r = self.measure("bridge", "Linux bridge", 1, 7000, 1000, 500)
        self.assertEqual((r["hops_flood"], r["hops_ping"]), ({}, {}))
        text = self.table_of([self.measure("sharebufd", "sharebufd (cs)", 1, 3000, 1200, 1000)], 1)
        self.assertNotIn("Per hop", text)


class ColdPathReport(unittest.TestCase):
    @staticmethod
    def wakeup(step_ns, skip=()):
        """Marks of one wake-up: step i takes step_ns(i) ns; marks in `skip` not reached (-1)."""
        row, t = [0.0], 0.0
        for i in range(1, len(cold_path_report.STEPS)):
            t += step_ns(i)
            row.append(-1.0 if i in skip else t)
        return row

    def test_steps_are_differences_to_the_previous_mark_reached(self):
        # Step 5 not reached: its time falls to step 6 (from mark 4 to mark 6).
        rows = [self.wakeup(lambda i: 100 * i, skip={5}) for _ in range(3)]
        steps = cold_path_report.step_times(rows)
        self.assertEqual(steps[4], [400.0] * 3)
        self.assertEqual(steps[5], [])
        self.assertEqual(steps[6], [1100.0] * 3)

    def test_report_gives_percentiles_and_shares_and_ignores_unsent_wakeups(self):
        rows = [self.wakeup(lambda i, k=k: 1000 if i == 13 else 100 * k) for k in (1, 2, 3)]
        rows.append(self.wakeup(lambda i: 5, skip={len(cold_path_report.STEPS) - 1}))  # no send
        text = cold_path_report.report(rows)
        n = len(cold_path_report.STEPS) - 1  # steps; step 13 takes 1000 ns, the others 100·k
        total = 1000 + (n - 1) * 200  # the median wake-up (k = 2)
        self.assertIn(f"3 wake-ups; poll()'s return → sendmmsg(): p50 {total / 1000:.1f} µs", text)
        self.assertIn(f"| 13. cells reserved and written, queue linked | 1000 | 1000 | "
                      f"{100 * 1000 / total:.0f} % |", text)
        self.assertIn("| 7. frame parsed | 200 | 300 |", text)

    def test_the_marks_patch_applies_to_this_tree(self):
        # bench/cold_path.sh applies it to a copy of the tree; a datapath change that moves its
        # context must update the patch with it.
        patch = os.path.join(ROOT, "bench", "cold_path", "marks.patch")
        if not os.path.exists(os.path.join(ROOT, ".git")):
            self.skipTest("not a git checkout: git apply --check needs one")
        import subprocess
        r = subprocess.run(["git", "apply", "--check", patch], cwd=ROOT, capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)


class HostBoundsReport(unittest.TestCase):
    CPUS = os.cpu_count() or 1

    def blast(self, kpps, busy, switch_ticks=0):
        # 5 s at 100 jiffies per second per CPU; host 2 counts kpps*5000 frames.
        return {"blaster": {"sent": kpps * 5000, "seconds": 5.0, "pps": kpps * 1000},
                "rx": [0, kpps * 5000], "jiffies": [[0, 0], [busy, 500 * self.CPUS]],
                "switch_ticks": [0, switch_ticks], "hz": 100}

    def test_row_computes_cpu_per_frame_busy_cores_and_switch_capacity(self):
        tcp = {"bps": 5e9, "jiffies": [[0, 0], [700, 500 * self.CPUS]]}
        r = host_bounds_report.make_row("sharebufd", "sb", 1, self.blast(1000, 1000, 250), tcp)
        self.assertEqual(r["delivered_kpps"], 1000)
        self.assertAlmostEqual(r["busy_cores_64b"], 2.0)
        # 1000 jiffies = 10 s of CPU over 5e6 frames; sharebufd's 250 ticks = 2.5 s of it.
        self.assertAlmostEqual(r["cpu_ns_per_frame"], 2000)
        self.assertAlmostEqual(r["switch_ns_per_frame"], 500)
        self.assertAlmostEqual(r["switch_capacity_kpps"], 2000)
        self.assertAlmostEqual(r["busy_cores_tcp"], 1.4)
        self.assertNotIn("switch_ns_per_frame",
                         host_bounds_report.make_row("bridge", "b", 1, self.blast(500, 500), None))

    def test_table_gives_the_bounds_against_the_bridge(self):
        rows = [host_bounds_report.make_row("bridge", "Linux bridge", 1, self.blast(500, 500),
                                            {"bps": 5e9, "jiffies": [[0, 0], [650, 500 * self.CPUS]]}),
                host_bounds_report.make_row("tx-only", "tx", 1, self.blast(900, 500), None),
                host_bounds_report.make_row("tx-8", "tx8", 1, self.blast(800, 500), None),
                host_bounds_report.make_row("tx-ring", "ring", 1, self.blast(800, 500), None),
                host_bounds_report.make_row("sharebufd", "sb", 1, self.blast(700, 1000, 350),
                                            {"bps": 2.5e9, "jiffies": [[0, 0], [850, 500 * self.CPUS]]})]
        text = host_bounds_report.table(rows, "1", "5")
        self.assertIn("delivers 1.80x the bridge's 64 B rate", text)
        # 500 jiffies over 5 s: 1111 ns per frame at 900 kpps, 1250 ns at 800 kpps.
        self.assertIn("8 frames per sendmmsg instead of 64 costs 139 ns more per frame", text)
        self.assertNotIn("- tx8:", text)
        self.assertIn("TX ring instead of sendmmsg: 0.89x the rate, 139 ns more CPU per frame", text)
        self.assertIn("- sb: 1.40x the bridge's 64 B rate, 0.50x its TCP goodput; 0.78x what the "
                      "sending core alone delivers; its own CPU per frame would carry 2.00x", text)
        self.assertIn("1.30 of", text)


class FormatResults(unittest.TestCase):
    def test_work_ratios_give_other_work_in_ns_and_two_threads_over_one(self):
        name = "BM_DecideBurstThenWork/10/{}/real_time/threads:{}"
        # One thread: 320 ns per burst of 32 alone, 640 ns with 8 steps per decision (10 ns
        # each); two threads: wall time over both threads' iterations, 320 ns = 640 ns each.
        med = {name.format(0, 1): 320.0, name.format(0, 2): 320.0,
               name.format(8, 1): 640.0, name.format(8, 2): 400.0}
        labels = {k: "credence" for k in med}
        ratios = format_results.work_ratios(med, labels)
        self.assertEqual([(p, s) for p, s, _, _ in ratios], [("credence", 0), ("credence", 8)])
        self.assertAlmostEqual(ratios[0][3], 2.0)
        self.assertAlmostEqual(ratios[1][2], 10.0)
        self.assertAlmostEqual(ratios[1][3], 1.25)


class LossSweepReport(unittest.TestCase):
    def test_row_counts_loss_and_where_it_went(self):
        blast = json.dumps({"sent": 1000, "seconds": 1.0, "pps": 1000})
        ports = json.dumps([{"ring_drops": 15, "tx_errors": 0}, {"ring_drops": 5, "tx_errors": 1}])
        queues = json.dumps([{"dropped": {"threshold": 2, "pool_full": 0}}])
        r = loss_sweep_report.row(["sharebufd", "sb", "1", blast, "978", "10", "100", ports,
                                   queues])
        self.assertAlmostEqual(r["loss_pct"], 2.2)
        self.assertEqual((r["ring_drops"], r["tx_errors"], r["policy_drops"]), (20, 1, 2))

    def test_table_names_the_highest_rate_under_one_percent_loss(self):
        rows = [{"switch": "sb", "label": "sb", "target_kpps": k, "offered_kpps": k,
                 "delivered_kpps": k * (1 - loss / 100), "loss_pct": loss, "ring_drops": 0,
                 "tx_errors": 0, "policy_drops": 0, "cpu_ns_per_frame": 1000}
                for k, loss in ((200, 0.0), (400, 0.5), (600, 3.0))]
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write("\n".join(json.dumps(r) for r in rows) + "\n")
        try:
            text = loss_sweep_report.table(f.name, "3")
            with_args = loss_sweep_report.table(f.name, "3", "--only sb,bridge --rates 200,0")
        finally:
            os.unlink(f.name)
        self.assertIn("highest offered rate delivered with less than 1 % loss 400 kpps", text)
        self.assertIn("| 0.50 % | 0 | 0 | 0 | – | 1000 / – |", text)  # rows without a clock
        self.assertIn("Command: `bench/loss_sweep.sh` (", text)
        self.assertIn("Command: `bench/loss_sweep.sh --only sb,bridge --rates 200,0` (", with_args)


    def test_what_is_lost_and_not_counted(self):
        rows = [{"switch": "sb", "label": "sb", "target_kpps": 1, "offered_kpps": 1,
                 "delivered_kpps": 0.9, "loss_pct": 10.0, "ring_drops": ring, "tx_errors": 1,
                 "policy_drops": 2, "cpu_ns_per_frame": 1000, "sent": 1000, "delivered": 900}
                for ring in (97, 90)]
        self.assertEqual(loss_sweep_report.uncounted(rows[0]), 0)
        self.assertEqual(loss_sweep_report.uncounted(rows[1]), 7)
        self.assertIsNone(loss_sweep_report.uncounted(dict(rows[0], ring_drops=None)))
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write("\n".join(json.dumps(r) for r in rows) + "\n")
        try:
            text = loss_sweep_report.table(f.name, "3")
        finally:
            os.unlink(f.name)
        self.assertIn("| 97 | 1 | 2 | 0 | 1000 / – |", text)
        self.assertIn("- sb: frames lost and not counted, over all rates: 7 of 2000 sent.", text)


class CpuClock(unittest.TestCase):
    def test_the_clock_is_the_median_over_the_cpus_and_none_without_one(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("processor\t: 0\ncpu MHz\t\t: 2000.000\nprocessor\t: 1\ncpu MHz\t\t: 3000.5\n"
                    "processor\t: 2\ncpu MHz\t\t: 2500.0\n")
        with tempfile.NamedTemporaryFile("w", delete=False) as g:
            g.write("processor\t: 0\nBogoMIPS\t: 50.00\n")  # arm64: no clock given
        try:
            self.assertEqual(cpu_clock.clock_mhz(f.name), 2500.0)
            self.assertIsNone(cpu_clock.clock_mhz(g.name))
            self.assertIsNone(cpu_clock.clock_mhz(g.name + ".missing"))
        finally:
            os.unlink(f.name)
            os.unlink(g.name)
        self.assertEqual(cpu_clock.ns_and_cycles(1000, 2500.0), "1000 / 2500")
        self.assertEqual(cpu_clock.ns_and_cycles(1000, None), "1000 / –")

    def test_rows_record_the_clock_and_rows_of_older_runs_have_none(self):
        r = loss_sweep_report.row(["sb", "sb", "1", json.dumps({"sent": 10, "seconds": 1.0, "pps": 10}),
                                   "10", "1", "100", "[]", "[]"])
        self.assertEqual(r["cpu_mhz"], cpu_clock.clock_mhz())
        self.assertEqual(cpu_clock.median_mhz([{"cpu_mhz": 2000.0}, {}, {"cpu_mhz": 3000.0}]), 2500.0)
        self.assertIsNone(cpu_clock.median_mhz([{}]))


class ExchangePhases(unittest.TestCase):
    # perf script lines: comm tid [cpu] seconds: event: fields. Times below are in µs from 100 s.
    @staticmethod
    def ev(comm, tid, cpu, us, event, fields):
        return f"{comm:>16} {tid} [{cpu:03d}] {100 + us / 1e6:.9f}: {event}: {fields}"

    def sharebufd_exchange(self, t0, wait):
        e = self.ev
        return [
            e("ping", 50, 0, t0, "net:net_dev_start_xmit", "dev=eth0 skbaddr=0x1 len=98"),
            e("ping", 50, 0, t0 + 3, "net:netif_rx", "dev=p1 skbaddr=0x1 len=84"),
            e("ping", 50, 0, t0 + 13, "sched:sched_wakeup", "comm=sb-rx0 pid=40 prio=120 target_cpu=001"),
            # Another thread's switch-in and poll exit are not the woken one's.
            e("swapper", 0, 1, t0 + 14, "sched:sched_switch", "prev_comm=swapper/1 prev_pid=0 ==> next_comm=sb-tx-p2 next_pid=41"),
            e("swapper", 0, 1, t0 + 13 + wait, "sched:sched_switch", "prev_comm=swapper/1 prev_pid=0 ==> next_comm=sb-rx0 next_pid=40"),
            e("sb-tx-p2", 41, 0, t0 + 15 + wait, "raw_syscalls:sys_exit", "NR 7 = 1"),
            e("sb-rx0", 40, 1, t0 + 23 + wait, "raw_syscalls:sys_exit", "NR 7 = 1"),
            e("sb-rx0", 40, 1, t0 + 43 + wait, "raw_syscalls:sys_enter", "NR 307 (9, 5, 1, 40, 0, 0)"),
            e("sb-rx0", 40, 1, t0 + 50 + wait, "net:netif_rx", "dev=eth0 skbaddr=0x1 len=84"),
            # Host 2's reply is sent in the daemon's context: not a new exchange (not the ping).
            e("sb-rx0", 40, 1, t0 + 60 + wait, "net:net_dev_start_xmit", "dev=eth0 skbaddr=0x2 len=98"),
            e("sb-rx0", 40, 1, t0 + 61 + wait, "net:netif_rx", "dev=p2 skbaddr=0x2 len=84"),
            e("sb-rx0", 40, 1, t0 + 70 + wait, "net:netif_rx", "dev=eth0 skbaddr=0x2 len=84"),
        ]

    def test_a_switched_exchange_is_split_at_its_wakeup_poll_and_send(self):
        lines = self.sharebufd_exchange(0, 10) + self.sharebufd_exchange(10000, 30)
        xs = list(exchange_phases.exchanges(exchange_phases.events(lines)))
        self.assertEqual(len(xs), 2)
        d = lambda x, a, b: round(x[b] - x[a], 3)  # noqa: E731
        self.assertEqual([d(xs[0], a, b) for a, b in (("E1", "E2"), ("E2", "E3"), ("E3", "E4"),
                                                     ("E4", "E5"), ("E5", "E6"), ("E6", "E7"),
                                                     ("E7", "E8"))], [10, 10, 10, 20, 7, 11, 9])
        self.assertEqual(d(xs[1], "E2", "E3"), 30)
        self.assertEqual((xs[0]["cpu_ping"], xs[0]["cpu_rx"]), (0, 1))

    def test_through_a_bridge_the_reply_sent_in_the_pings_context_does_not_start_an_exchange(self):
        e = self.ev
        lines = [
            e("ping", 50, 0, 0, "net:net_dev_start_xmit", "dev=eth0 skbaddr=0x1 len=98"),
            e("ping", 50, 0, 2, "net:netif_rx", "dev=p1 skbaddr=0x1 len=84"),
            e("ping", 50, 0, 6, "net:net_dev_start_xmit", "dev=p2 skbaddr=0x1 len=98"),
            e("ping", 50, 0, 7, "net:netif_rx", "dev=eth0 skbaddr=0x1 len=84"),
            e("ping", 50, 0, 20, "net:net_dev_start_xmit", "dev=eth0 skbaddr=0x2 len=98"),
            e("ping", 50, 0, 21, "net:netif_rx", "dev=p2 skbaddr=0x2 len=84"),
            e("ping", 50, 0, 25, "net:netif_rx", "dev=eth0 skbaddr=0x2 len=84"),
        ]
        xs = list(exchange_phases.exchanges(exchange_phases.events(lines)))
        self.assertEqual(len(xs), 1)
        self.assertAlmostEqual(xs[0]["E8"] - xs[0]["E0"], 25, places=3)
        self.assertAlmostEqual(xs[0]["E6"] - xs[0]["E1"], 5, places=3)
        self.assertNotIn("E2", xs[0])

    def test_an_exchange_without_its_reply_is_given_up_after_half_the_interval(self):
        # A request lost after the switch took it, then the next ping 3 ms later (pings 5 ms
        # apart would be given up after 2.5 ms; at the default 10 ms, only after 5 ms).
        lost = [self.ev("ping", 50, 0, 0, "net:net_dev_start_xmit", "dev=eth0 skbaddr=0x1 len=98"),
                self.ev("ping", 50, 0, 3, "net:netif_rx", "dev=p1 skbaddr=0x1 len=84")]
        lines = lost + self.sharebufd_exchange(3000, 10)
        totals = lambda xs: [round(x["E8"] - x["E0"]) for x in xs]  # noqa: E731
        at_5ms = list(exchange_phases.exchanges(exchange_phases.events(lines), stale_us=2500))
        self.assertEqual(totals(at_5ms), [80])
        at_10ms = list(exchange_phases.exchanges(exchange_phases.events(lines)))
        self.assertEqual(totals(at_10ms), [3080])  # the lost request's start is kept


class TcpReorderReport(unittest.TestCase):
    def test_counters_read_both_files_by_name(self):
        with tempfile.TemporaryDirectory() as d:
            netstat, snmp = os.path.join(d, "netstat"), os.path.join(d, "snmp")
            with open(netstat, "w") as f:
                f.write("TcpExt: SyncookiesSent TCPOFOQueue TCPDSACKRecv\nTcpExt: 0 17 3\n"
                        "IpExt: InNoRoutes\nIpExt: 9\n")
            with open(snmp, "w") as f:
                f.write("Ip: Forwarding\nIp: 1\nTcp: RtoAlgorithm RetransSegs\nTcp: 1 40\n")
            c = tcp_reorder_report.read_counters(netstat, snmp)
        self.assertEqual((c["TCPOFOQueue"], c["TCPDSACKRecv"], c["RetransSegs"]), (17, 3, 40))
        self.assertNotIn("InNoRoutes", c)

    def test_rows_take_differences_and_the_table_medians(self):
        def one(rep, ofo, retrans, drops, acks):
            recv0 = {"TCPOFOQueue": 100, "OutSegs": 7}
            send0 = {"RetransSegs": 5, "TCPDSACKRecv": 1, "OutSegs": 50}
            recv1 = {"TCPOFOQueue": 100 + ofo, "OutSegs": 7 + acks}
            send1 = {"RetransSegs": 5 + retrans, "TCPDSACKRecv": 1 + retrans, "TCPSACKReorder": 2,
                     "OutSegs": 50 + 1200}
            return json.loads(run(tcp_reorder_report.row,
                                  ["sharebufd", "sharebufd (cs)", str(rep), "3e9", json.dumps(recv0),
                                   json.dumps(recv1), json.dumps(send0), json.dumps(send1), drops]))
        rows = [one(1, 10, 4, "0", 300), one(2, 30, 8, "2", 100), one(3, 20, 6, "0", 400)]
        self.assertEqual((rows[0]["ofo"], rows[0]["retrans"], rows[0]["dsack"], rows[0]["sack_reorder"],
                          rows[0]["data_segs"], rows[0]["acks"]), (10, 4, 4, 2, 1200, 300))
        bridge = json.loads(run(tcp_reorder_report.row,
                                ["bridge", "Linux bridge", "1", "5e9", "{}", "{}", "{}", "{}", "-"]))
        self.assertIsNone(bridge["switch_drops"])
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.writelines(json.dumps(r) + "\n" for r in rows + [bridge])
        try:
            text = run(tcp_reorder_report.table, [f.name])
        finally:
            os.unlink(f.name)
        # data segments per ACK: 1200 / 300, / 100, / 400 -> median 4.0
        self.assertIn("| sharebufd (cs) | 3000 | 20 | 6 | 6 | 2 | 4.0 | 0 |", text)
        self.assertIn("| Linux bridge | 5000 | 0 | 0 | 0 | 0 | – | – |", text)


class IdleLatencyReport(unittest.TestCase):
    @staticmethod
    def report(rows, args=None):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
        argv, out = sys.argv, io.StringIO()
        try:
            sys.argv = ["idle_latency_report.py", f.name, "1"] + (["", "--args=" + args] if args else [])
            with contextlib.redirect_stdout(out):
                idle_latency_report.main()
        finally:
            sys.argv = argv
            os.unlink(f.name)
        return out.getvalue()

    def test_the_command_line_names_the_options_it_ran_with(self):
        row = {"switch": "bridge", "label": "bridge", "rep": 1, "ping_p50_us": 50,
               "ping_p99_us": 60, "idle_cpu_pct": None, "hops": {}}
        self.assertIn("Command: `bench/idle_latency.sh --only bridge,sharebufd-xdp --interval 2` ",
                      self.report([row], "--only bridge,sharebufd-xdp --interval 2"))
        self.assertIn("Command: `bench/idle_latency.sh` ", self.report([row]))

    def test_a_switch_on_other_links_is_compared_with_the_bridge_on_those_links(self):
        def r(name, label, p50, p99, hops=None):
            return {"switch": name, "label": label, "rep": 1, "ping_p50_us": p50, "ping_p99_us": p99,
                    "idle_cpu_pct": None if name.startswith("bridge") else 0.1, "hops": hops or {}}
        text = self.report([r("bridge", "bridge", 50, 100), r("bridge@off", "bridge off", 40, 50),
                            r("sharebufd", "sb", 100, 150), r("sharebufd@off", "sb off", 80, 90),
                            r("sharebufd@cpu1", "sb cpu1", 75, 300)])
        self.assertIn("- sb: p50 2.00x the bridge's (target ≤ 1.5x), p99 1.50x (target ≤ 2x).", text)
        self.assertIn("- sb off: p50 2.00x the bridge's (target ≤ 1.5x), p99 1.80x (target ≤ 2x), "
                      "against bridge off.", text)
        # No bridge ran on those links: the plain bridge is the reference.
        self.assertIn("- sb cpu1: p50 1.50x the bridge's (target ≤ 1.5x), p99 3.00x (target ≤ 2x).",
                      text)
        self.assertNotIn("- bridge off:", text)
        self.assertNotIn("| hop | bridge off", text)

    def test_sharebufd_is_compared_with_the_floor_and_only_sharebufd_has_hop_columns(self):
        def r(name, rep, p50, p99):
            return {"switch": name, "label": name, "rep": rep, "ping_p50_us": p50,
                    "ping_p99_us": p99, "idle_cpu_pct": None if name == "bridge" else 0.1,
                    "hops": {"p1.wakeup": {"p50_us": 9, "p99_us": 12}} if name == "sharebufd" else {}}
        rows = [r("bridge", 1, 50, 60), r("sharebufd", 1, 100, 120), r("floor", 1, 80, 150),
                r("bridge", 2, 50, 60), r("sharebufd", 2, 90, 120), r("floor", 2, 100, 100)]
        text = self.report(rows)
        self.assertIn("- floor: p50 1.80x the bridge's", text)
        self.assertIn("- sharebufd against floor: p50 1.06x, p99 0.96x; repetition by repetition "
                      "against its run of the same repetition, median (range): p50 1.07x "
                      "(0.90–1.25), p99 1.00x (0.80–1.20).", text)
        self.assertIn("| hop | sharebufd |", text)
        self.assertNotIn("| hop | sharebufd | floor", text)

    def test_ratios_repetition_by_repetition_pair_runs_of_the_same_repetition(self):
        def r(name, rep, p50, p99):
            return {"switch": name, "label": name, "rep": rep, "ping_p50_us": p50,
                    "ping_p99_us": p99, "idle_cpu_pct": None, "hops": {}}
        # The host state moves between repetitions; each pair moves with it, and the ratio of the
        # medians (2x, 3x) pairs runs of different repetitions.
        rows = [r("bridge", 1, 20, 40), r("sharebufd", 1, 30, 60),
                r("bridge", 2, 80, 100), r("sharebufd", 2, 100, 150),
                r("bridge", 3, 40, 50), r("sharebufd", 3, 80, 150)]
        text = self.report(rows)
        self.assertIn("- sharebufd: p50 2.00x the bridge's (target ≤ 1.5x), p99 3.00x (target ≤ 2x); "
                      "repetition by repetition against its run of the same repetition, median "
                      "(range): p50 1.50x (1.25–2.00), p99 1.50x (1.50–3.00).", text)
        # One repetition: no pairs to speak of.
        self.assertIn("- sharebufd: p50 1.50x the bridge's (target ≤ 1.5x), p99 1.50x (target ≤ 2x).",
                      self.report(rows[:2]))

    def test_cpu_while_pinging_is_the_share_of_a_core_over_the_pings_time(self):
        out = io.StringIO()
        # 250 ticks of 100 Hz over 5 s of pings: half a core; 300 ticks over the 10 idle seconds.
        with contextlib.redirect_stdout(out):
            idle_latency_row.row(["sharebufd-busypoll", "1", "0.05 0.06", "{}", "300", "null", "100",
                                  "sb busy", "null", "10", "250", "5000000000"])
        r = json.loads(out.getvalue())
        self.assertAlmostEqual(r["ping_cpu_pct"], 50.0)
        self.assertAlmostEqual(r["idle_cpu_pct"], 30.0)
        text = self.report([dict(r, ping_p50_us=50, ping_p99_us=60)])
        self.assertIn("| sb busy | 50 | 60 | 50–50 | 60–60 | 50.00 | 30.00 |", text)


if __name__ == "__main__":
    unittest.main()
