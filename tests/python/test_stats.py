"""scripts/stats.py: the one percentile every report computes, and no report with its own."""
import glob
import math
import os
import re
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import stats  # noqa: E402


class Percentile(unittest.TestCase):
    def test_the_definition(self):
        v = [5, 1, 4, 2, 3]  # sorted: 1..5, index round(q * 4)
        self.assertEqual(stats.percentile(v, 0), 1)
        self.assertEqual(stats.percentile(v, 0.5), 3)
        self.assertEqual(stats.percentile(v, 0.99), 5)
        self.assertEqual(stats.percentile(v, 0.3), 2)  # round(1.2) = 1
        self.assertEqual(stats.percentile(list(range(100)), 0.99), 98)  # round(98.01)
        # round half to even, as NumPy's method="nearest": index round(1.5) = 2, round(0.5) = 0
        self.assertEqual(stats.percentile([10, 20, 30, 40], 0.5), 30)
        self.assertEqual(stats.percentile([10, 20], 0.5), 10)

    def test_empty_and_bad_q(self):
        self.assertTrue(math.isnan(stats.percentile([], 0.5)))
        self.assertIsNone(stats.percentile([], 0.5, empty=None))
        with self.assertRaises(ValueError):
            stats.percentile([1], 50)  # a percent, not a fraction

    def test_median_range(self):
        self.assertEqual(stats.median_range([3, 1, 2]), "2 [1–3]")
        self.assertEqual(stats.median_range([]), "—")


class OneDefinition(unittest.TestCase):
    def test_no_report_computes_its_own_percentile(self):
        own = []
        for path in glob.glob(os.path.join(ROOT, "**", "*.py"), recursive=True):
            rel = os.path.relpath(path, ROOT)
            if rel.startswith(("build", "scripts/stats.py", "tests/")):
                continue
            with open(path) as f:
                text = f.read()
            for m in re.finditer(r"^def (pct|percentile|quantile)\(.*\):\n((?:    .*\n|\n)*)",
                                 text, re.M):
                if "stats.percentile" not in m.group(2):
                    own.append(f"{rel}: {m.group(1)}")
        self.assertEqual(own, [])


if __name__ == "__main__":
    unittest.main()
