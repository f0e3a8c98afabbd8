"""Ping round-trip times as the benchmarks report them."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import stats  # noqa: E402  (scripts/stats.py: the one percentile)


def rtts_us(text):
    """The RTTs of `ping`'s time= fields (milliseconds, space separated), in µs, sorted."""
    return sorted(float(x) * 1000 for x in text.split())


def percentile(sorted_values, p):
    """The p-th percentile (0-100): scripts/stats.py's percentile."""
    return stats.percentile(sorted_values, p / 100)
