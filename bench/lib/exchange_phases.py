"""Where each ping exchange's time goes, from kernel tracepoints recorded during the pings.

usage: exchange_phases.py PERF_SCRIPT_TXT [INTERVAL_MS]   (the pings' interval, default 10)

Input: `perf script -F comm,tid,cpu,time,event,trace` of a `perf record -a` with net:netif_rx,
net:net_dev_start_xmit, sched:sched_wakeup, sched:sched_switch and raw_syscalls:sys_enter/sys_exit
(poll and sendmmsg only) on the two-host testbed (host 1 pings host 2 through ports p1 and p2;
both hosts' interfaces are eth0). One exchange is the events from the ping's transmit to its
reply's arrival at host 1, found by their order (pings are milliseconds apart, so exchanges do
not overlap) and by the echo's IP length (84 bytes):

  E0 ping transmits on eth0      E1 netif_rx on p1 (the switch has the request)
  E6 netif_rx on eth0 (host 2)   E7 netif_rx on p2 (the switch has the reply)
  E8 netif_rx on eth0 (host 1: the reply is back; ping stamps it here)

and, for sharebufd, between E1 and E6: E2 the kernel wakes an sb-rx thread, E3 it gets a CPU,
E4 its poll() returns, E5 it enters sendmmsg (E2 and E3 are missing when the wake-up was not
recorded, as when the thread wakes on a CPU that was idle). Phases are the gaps between them.
Prints JSON: the number of exchanges, p50/p99 per phase in microseconds with the number of
exchanges that had it, the same phases' medians over the slowest 1 % of exchanges (by E0 -> E8),
and the share of exchanges whose datapath thread ran on the ping's CPU.
"""
import os
import argparse
import json
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import stats  # noqa: E402  (scripts/stats.py: the one percentile)

LINE = re.compile(r"^\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$")
ECHO_LEN = "len=84"
STALE_US = 5000  # half the default 10 ms between pings: an exchange without its reply is over
PHASES = [
    ("host1_send", "E0", "E1", "host 1 sends the request (ping → veth → switch port p1)"),
    ("to_poll_exit", "E1", "E4", "the request in the ring → the datapath thread's poll() returns"),
    ("wakeup", "E1", "E2", "the kernel wakes a datapath thread (after the ring write)"),
    ("to_cpu", "E2", "E3", "the woken thread waits for a CPU"),
    ("poll_return", "E3", "E4", "poll() returns"),
    ("daemon", "E4", "E5", "sharebufd's own code: RX ring → admission → cells → sendmmsg"),
    ("send", "E5", "E6", "sendmmsg until host 2 has the request"),
    ("switch_request", "E1", "E6", "the switch forwards the request (p1 → host 2)"),
    ("host2_reply", "E6", "E7", "host 2 answers (its kernel, ICMP)"),
    ("switch_reply", "E7", "E8", "the switch forwards the reply (p2 → host 1)"),
    ("total", "E0", "E8", "the whole exchange as the kernel saw it"),
]


def pct(xs, p):
    return stats.percentile(xs, p / 100, empty=None)


def events(lines):
    for line in lines:
        m = LINE.match(line)
        if m:
            comm, tid, cpu, t, ev, rest = m.groups()
            yield comm.strip(), int(tid), int(cpu), float(t) * 1e6, ev, rest


def exchanges(evs, stale_us=STALE_US):
    """Yields one dict of event times (µs) per exchange, plus the CPUs of E0 and E3. An exchange
    still without its reply stale_us after it began is given up (half the pings' interval)."""
    cur = None
    for comm, tid, cpu, t, ev, rest in evs:
        if ev == "net:net_dev_start_xmit" and comm == "ping" and "dev=eth0" in rest:
            # Through a bridge, host 2's reply is sent in the ping's context too: an exchange
            # starts only when none is under way (or the last one lost its reply).
            if cur is None or t - cur["E0"] > stale_us:
                cur = {"E0": t, "cpu_ping": cpu}
            continue
        if cur is None:
            continue
        if ev == "net:netif_rx" and ECHO_LEN in rest:
            if "dev=p1" in rest and "E1" not in cur:
                cur["E1"] = t
            elif "dev=eth0" in rest and "E1" in cur and "E6" not in cur:
                cur["E6"] = t
            elif "dev=p2" in rest and "E6" in cur and "E7" not in cur:
                cur["E7"] = t
            elif "dev=eth0" in rest and "E7" in cur:
                cur["E8"] = t
                yield cur
                cur = None
        elif "E1" in cur and "E6" not in cur:
            # Between the request's arrival at the switch and its delivery: sharebufd's thread.
            # A wake-up on another CPU may go unrecorded (the woken CPU was idle), so the poll
            # exit is found by the thread's name when no wake-up named it.
            rx_tid = cur.get("rx_tid")
            if ev == "sched:sched_wakeup" and "comm=sb-rx" in rest and "E2" not in cur:
                cur["E2"] = t
                cur["rx_tid"] = int(re.search(r"pid=(\d+)", rest).group(1))
            elif ev == "sched:sched_switch" and "E2" in cur and "E3" not in cur:
                if re.search(r"next_pid=%d\b" % rx_tid, rest):
                    cur["E3"] = t
                    cur["cpu_rx"] = cpu
            elif ev == "raw_syscalls:sys_exit" and rest.startswith("NR 7 ") and "E4" not in cur:
                if tid == rx_tid if rx_tid is not None else comm.startswith("sb-rx"):
                    cur["E4"] = t
                    cur["rx_tid"] = tid
                    cur.setdefault("cpu_rx", cpu)
            elif ev == "raw_syscalls:sys_enter" and rest.startswith("NR 307 ") and "E4" in cur:
                if tid == rx_tid and "E5" not in cur:
                    cur["E5"] = t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("perf_script", metavar="PERF_SCRIPT_TXT")
    ap.add_argument("interval_ms", nargs="?", type=float, help="the pings' interval (default 10)")
    a = ap.parse_args()
    stale_us = a.interval_ms * 500 if a.interval_ms is not None else STALE_US
    with open(a.perf_script) as f:
        xs = list(exchanges(events(f), stale_us))
    if not xs:
        print(json.dumps({"exchanges": 0}))
        return
    by_total = sorted(xs, key=lambda x: x["E8"] - x["E0"])
    slowest = by_total[-max(1, len(xs) // 100):]
    phases, slow = {}, {}
    for name, a, b, _what in PHASES:
        vals = [x[b] - x[a] for x in xs if a in x and b in x]
        if not vals:
            continue
        phases[name] = {"p50": round(pct(vals, 50), 1), "p99": round(pct(vals, 99), 1),
                        "n": len(vals)}
        svals = [x[b] - x[a] for x in slowest if a in x and b in x]
        if svals:
            slow[name] = round(pct(svals, 50), 1)
    woken = [x for x in xs if "cpu_rx" in x]
    out = {"exchanges": len(xs), "phases": phases, "slowest": slow, "slowest_n": len(slowest)}
    if woken:
        out["same_cpu"] = round(sum(x["cpu_rx"] == x["cpu_ping"] for x in woken) / len(woken), 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
