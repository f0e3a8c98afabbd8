"""tools/plot_sim.py's series on hand-made sharebuf-sim rows."""
import os
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import plot_sim  # noqa: E402


def flow(kind, size, fct_ns):
    return {"kind": kind, "bytes": str(size), "fct_ns": str(fct_ns)}


class PlotSim(unittest.TestCase):
    def test_completed_flows_by_kind_and_size(self):
        flows = [flow("background", 5000, 2_000_000), flow("background", 50_000, 1_000_000),
                 flow("background", 500_000, 3_000_000),  # medium: in no curve
                 flow("background", 2_000_000, 9_000_000), flow("background", 7000, -1),
                 flow("incast", 60_000, 4_000_000), flow("fixed", 10, 1)]
        queries = [{"qct_ns": "5000000"}, {"qct_ns": "-1"}]
        s = plot_sim.cdf_series(flows, queries)
        self.assertEqual(s["short (< 100 KB)"], [1.0, 2.0])
        self.assertEqual(s["long (>= 1 MB)"], [9.0])
        self.assertEqual(s["incast responses"], [4.0])
        self.assertEqual(s["queries"], [5.0])

    def test_occupancy_sums_queues_of_a_sample(self):
        rows = [{"time_s": "0.1", "switch": "leaf0", "port": "0", "queue": "0", "cells": "5"},
                {"time_s": "0.1", "switch": "leaf0", "port": "1", "queue": "0", "cells": "7"},
                {"time_s": "0.2", "switch": "leaf0", "port": "0", "queue": "0", "cells": "1"}]
        self.assertEqual(plot_sim.occupancy_series(rows), {"leaf0": ([0.1, 0.2], [12, 1])})
        totals = [{"time_s": "0.1", "switch": "spine0", "total_cells": "3"}]
        self.assertEqual(plot_sim.occupancy_series(totals), {"spine0": ([0.1], [3])})
