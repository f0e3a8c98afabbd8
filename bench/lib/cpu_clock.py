"""CPU time per frame in cycles, where the host has no cycle counter to read.

This host's VM exposes no hardware counters (`perf stat -e cycles`: not supported), so a cycle
count is the CPU time multiplied by the clock the kernel reports in /proc/cpuinfo, read during
the run. It scales with the time; it is given because cycles per frame is the unit hardware
comparisons use, not as a second measurement.
"""
import statistics


def clock_mhz(path="/proc/cpuinfo"):
    """The median `cpu MHz` over the CPUs, or None where the kernel gives none."""
    try:
        with open(path) as f:
            mhz = [float(line.split(":", 1)[1]) for line in f if line.startswith("cpu MHz")]
    except (OSError, ValueError):
        return None
    return statistics.median(mhz) if mhz else None


def ns_and_cycles(ns, mhz):
    """`ns / cycles` for a table cell; `ns / –` without a clock."""
    return f"{ns:.0f} / {ns * mhz / 1e3:.0f}" if mhz else f"{ns:.0f} / –"


def median_mhz(rows):
    """The clock over the rows that recorded one (rows of older runs have none)."""
    mhz = [r["cpu_mhz"] for r in rows if r.get("cpu_mhz")]
    return statistics.median(mhz) if mhz else None
