"""tests/netns/netns_checks.py: the netns tests' checks hold on runs that pass them and fail on
runs that do not (synthetic files shaped like sharebufd's, iperf3's and the receivers')."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "netns"))
import netns_checks  # noqa: E402


def quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return fn(*args)


class NetnsChecks(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, obj):
        path = os.path.join(self.d, name)
        with open(path, "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return path

    def test_within_evaluates_chained_comparisons(self):
        self.assertTrue(netns_checks.within("0.95 * 8 <= 7.9 <= 1.05 * 8"))
        self.assertFalse(netns_checks.within("abs(1.2 - 1) <= 0.05"))
        with self.assertRaises(NameError):
            netns_checks.within("open('/etc/passwd')")

    def test_tcp_kept_order_fails_on_dsack(self):
        tcp = self.write("tcp.json", {"end": {"sum_received": {"bits_per_second": 9e7}}})
        stats = self.write("stats.json", {"ports": [
            {"rx_frames": 20000, "ring_drops": 0, "tx_errors": 0, "queues": [{"dropped": {}}]}]})
        before = json.dumps({"OutSegs": 0})
        good = json.dumps({"OutSegs": 20000, "TCPDSACKRecv": 3})
        bad = json.dumps({"OutSegs": 20000, "TCPDSACKRecv": 30})
        self.assertTrue(quiet(netns_checks.tcp_kept_order, tcp, before, good, stats))
        self.assertFalse(quiet(netns_checks.tcp_kept_order, tcp, before, bad, stats))
        # SACK reorder counts beside switch drops (loss recovery) pass; without drops they fail.
        reorder = json.dumps({"OutSegs": 20000, "TCPDSACKRecv": 1, "TCPSACKReorder": 60})
        self.assertFalse(quiet(netns_checks.tcp_kept_order, tcp, before, reorder, stats))
        dropping = self.write("drops.json", {"ports": [
            {"rx_frames": 20000, "ring_drops": 0, "tx_errors": 0,
             "queues": [{"dropped": {"pool_full": 120}}]}]})
        self.assertTrue(quiet(netns_checks.tcp_kept_order, tcp, before, reorder, dropping))
        # The limit grows with the stream: 60 in 500 000 segments is within it.
        long_run = json.dumps({"OutSegs": 500000, "TCPDSACKRecv": 1, "TCPSACKReorder": 60})
        self.assertTrue(quiet(netns_checks.tcp_kept_order, tcp, before, long_run, stats))

    def test_trimmed_receiver_needs_every_property(self):
        good = {"trimmed": 500, "whole": 5000, "trimmed_bad_ipv4": 0, "trimmed_bad_udp": 0,
                "trimmed_dscp": [8], "overtaking_headers": 50}
        self.assertTrue(quiet(netns_checks.trimmed_receiver, self.write("rx.json", good)))
        for key, value in (("trimmed_bad_udp", 1), ("trimmed_dscp", [0]), ("whole", 10)):
            with self.subTest(key=key):
                self.assertFalse(quiet(netns_checks.trimmed_receiver,
                                       self.write("rx.json", dict(good, **{key: value}))))

    def test_median_in_range_needs_eight_samples(self):
        rows = "occupancy_cells,g\n" + "".join(f"{50 + i},{1 + i / 100}\n" for i in range(10))
        path = self.write("samples.csv", rows)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            self.assertTrue(netns_checks.median_in_range(path, "g", "50", "59"))
        self.assertEqual(out.getvalue().strip(), "1.0450")
        self.assertFalse(quiet(netns_checks.median_in_range, path, "g", "50", "55"))

    def test_cli_refuses_missing_arguments(self):
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as e:
            netns_checks.main(["returned-again"])
        self.assertEqual(e.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
