"""Compares what a real Prometheus server scraped from sharebufd's [metrics] listener with the
switch's own counters (sharebufctl --json ports / queues), by PromQL queries over its HTTP API.

Polls until every pair agrees (the traffic has stopped, so the next scrape catches up) or the
timeout passes; prints one line per query with both values; exit 0 when all agree, 1 otherwise.
Run it where both the Prometheus server and the metrics address are reachable (the switch's
network namespace).

usage: prom_compare.py --prometheus URL --sharebufctl PATH --socket SOCKET --port P
                       [--timeout S] [--min-drops N]
"""
import argparse
import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request


def promql(url, expr):
    """The single value of an instant query, or None if it has no or several series."""
    q = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=5) as r:
        body = json.load(r)
    result = body.get("data", {}).get("result", [])
    if body.get("status") != "success" or len(result) != 1:
        return None
    return float(result[0]["value"][1])


def ctl(args, command):
    out = subprocess.run([args.sharebufctl, "--socket", args.socket, "--json", command],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def pairs(args):
    """(PromQL, the switch's own value) for each check."""
    ports = {p["interface"]: p for p in ctl(args, "ports")}
    queues = [q for q in ctl(args, "queues") if q["interface"] == args.port]
    q0 = next(q for q in queues if q["queue"] == 0)
    sel = f'port="{args.port}"'
    return [
        (f'sharebuf_queue_dropped_total{{{sel},queue="0",reason="threshold"}}',
         q0["dropped"]["threshold"]),
        (f"sum(sharebuf_queue_received_total{{{sel}}})", sum(q["received"] for q in queues)),
        (f"sum(sharebuf_queue_transmitted_total{{{sel}}})",
         sum(q["transmitted"] for q in queues)),
        (f"sharebuf_port_tx_bytes_total{{{sel}}}", ports[args.port]["tx_bytes"]),
        ("sum(sharebuf_port_rx_frames_total)", sum(p["rx_frames"] for p in ports.values())),
        (f'sharebuf_queue_delay_seconds_count{{{sel},queue="0"}}',
         sum(n for _, n in q0["delay_histogram"])),
        ('sharebuf_policy_info{policy="dt"}', 1),
        ('up{job="sharebuf"}', 1),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prometheus", required=True, help="e.g. http://127.0.0.1:9090")
    ap.add_argument("--sharebufctl", required=True)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--port", required=True, help="the congested port's interface")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--min-drops", type=int, default=1000,
                    help="threshold drops the workload must have caused on queue 0")
    args = ap.parse_args()
    deadline = time.monotonic() + args.timeout
    while True:
        checks = [(expr, own, promql(args.prometheus, expr)) for expr, own in pairs(args)]
        if all(got is not None and got == own for _, own, got in checks) or \
                time.monotonic() > deadline:
            break
        time.sleep(0.5)
    # Agreement on zeros would prove nothing: the workload must have driven drops.
    ok = checks[0][1] >= args.min_drops
    print(f"{'ok ' if ok else 'BAD'} the switch dropped {checks[0][1]} (>= {args.min_drops})")
    for expr, own, got in checks:
        same = got is not None and got == own
        ok &= same
        print(f"{'ok ' if same else 'BAD'} {expr}: prometheus {got}, switch {own}")
    # The histogram as Prometheus reads it: its p99 within the power-of-two bucket of the
    # switch's own (the switch interpolates in quarter-octave buckets, Prometheus in octaves).
    q0 = next(q for q in ctl(args, "queues") if q["interface"] == args.port and q["queue"] == 0)
    p99 = promql(args.prometheus, "histogram_quantile(0.99, sharebuf_queue_delay_seconds_bucket"
                 f'{{port="{args.port}",queue="0"}})')
    own = q0["delay_p99_ns"] * 1e-9
    near = p99 is not None and own / 2 <= p99 <= own * 2
    ok &= near
    print(f"{'ok ' if near else 'BAD'} histogram_quantile(0.99) {p99} s, switch p99 {own} s")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
