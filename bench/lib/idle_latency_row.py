#!/usr/bin/python3
"""One repetition of bench/idle_latency.sh as a JSON line: ping RTT p50/p99, the daemon's hop
histograms per port (sharebufctl --json latency, "{}" for other switches), its idle CPU share,
the perf sched summary (or null) and the traced exchange phases (exchange_phases.py, or null).

usage: idle_latency_row.py NAME REP RTTS_MS LATENCY_JSON IDLE_TICKS PERF_JSON HZ LABEL [PHASES_JSON
                           [INTERVAL_MS [PING_TICKS PING_NS]]]
(LABEL: what NAME is, from bench/lib/switches.sh, for the report's tables; PING_TICKS: the
switch's CPU ticks while the pings ran, PING_NS: how long they ran)
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hop_histograms import hops_of  # noqa: E402
from ping_rtts import percentile, rtts_us  # noqa: E402


def row(argv):
    name, rep, rtts, lat, idle, perf_json, hz, label, *rest = argv
    phases = json.loads(rest[0]) if rest else None
    interval_ms = float(rest[1]) if len(rest) > 1 else 10.0
    ping_ticks, ping_ns = (rest[2], rest[3]) if len(rest) > 3 else ("null", "0")
    ping_cpu = None if ping_ticks == "null" or int(ping_ns) <= 0 else \
        int(ping_ticks) / int(hz) / (int(ping_ns) / 1e9) * 100
    r = rtts_us(rtts)
    pct = lambda p: percentile(r, p)  # noqa: E731
    hops = hops_of(lat)
    print(json.dumps({"switch": name, "label": label, "rep": int(rep), "pings": len(r), "ping_p50_us": pct(50),
                      "ping_p99_us": pct(99), "interval_ms": interval_ms, "hops": hops,
                      "idle_cpu_pct": None if idle == "null" else int(idle) / int(hz) / 10 * 100,
                      "ping_cpu_pct": ping_cpu,
                      "sched": json.loads(perf_json), "phases": phases}))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("name", "rep", "rtts_ms", "latency_json", "idle_ticks", "perf_json", "hz",
                 "label"):
        ap.add_argument(name)
    ap.add_argument("rest", nargs="*", metavar="PHASES_JSON [INTERVAL_MS [PING_TICKS PING_NS]]")
    a = ap.parse_args()
    if len(a.rest) > 4 or len(a.rest) == 3:
        ap.error("after LABEL: PHASES_JSON [INTERVAL_MS [PING_TICKS PING_NS]]")
    row([a.name, a.rep, a.rtts_ms, a.latency_json, a.idle_ticks, a.perf_json, a.hz, a.label,
         *a.rest])
