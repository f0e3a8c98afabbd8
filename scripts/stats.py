#!/usr/bin/python3
"""The statistics every report computes, defined once.

percentile(values, q): the element of the sorted values at index round(q * (n - 1)), q from 0 to
1, rounding half to even (Python's round): NumPy's percentile(..., method="nearest"). Always one
of the observed values; p50 of an even count is one of the two middle values, p100 the largest,
p0 the smallest. NaN (or `empty`) for no values. Every experiment and benchmark report uses it,
so a p99 means the same on every page.
"""
import math
import statistics


def percentile(values, q, empty=math.nan):
    """The q-quantile (0 <= q <= 1) of values, the definition above."""
    if not 0 <= q <= 1:
        raise ValueError(f"percentile: q must be between 0 and 1, got {q}")
    v = sorted(values)
    if not v:
        return empty
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def median(values, empty=math.nan):
    """The statistical median (the mean of the two middle values for an even count)."""
    return statistics.median(values) if values else empty


def median_range(values, fmt="{:.0f}"):
    """'median [min–max]' of values, each formatted with fmt; '—' for none."""
    if not values:
        return "—"
    return (fmt.format(statistics.median(values)) + " [" + fmt.format(min(values)) + "–" +
            fmt.format(max(values)) + "]")
