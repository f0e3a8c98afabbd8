"""Ping round-trip times as the benchmarks report them."""


def rtts_us(text):
    """The RTTs of `ping`'s time= fields (milliseconds, space separated), in µs, sorted."""
    return sorted(float(x) * 1000 for x in text.split())


def percentile(sorted_values, p):
    """The p-th percentile (0-100) of sorted values: the value at rank round(p/100 * (n - 1))."""
    v = sorted_values
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
