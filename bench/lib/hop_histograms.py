"""The daemon's per-hop latency histograms (`sharebufctl --json latency`) in the benchmarks' rows
and reports (bench/idle_latency.sh, bench/forwarding_bench.sh)."""
import json
import statistics

# (label, port, hop): host 1's request enters at p1 and leaves at p2; the reply the other way.
HOPS = [("request: wake-up", "p1", "wakeup"), ("ring → RX", "p1", "ring_to_rx"),
        ("RX → queued", "p1", "rx_to_queued"), ("RX → sent", "p2", "rx_to_sent"),
        ("reply: wake-up", "p2", "wakeup"), ("ring → RX", "p2", "ring_to_rx"),
        ("RX → queued", "p2", "rx_to_queued"), ("RX → sent", "p1", "rx_to_sent")]


def hops_of(latency_json):
    """{"PORT.HOP": {p50_us, p99_us, count}} from `sharebufctl --json latency` ("{}": none)."""
    hops = {}
    for port in json.loads(latency_json) if latency_json.strip() not in ("", "{}") else []:
        for hop, h in port["hops"].items():
            hops[f"{port['interface']}.{hop}"] = {"p50_us": h["p50_ns"] / 1e3,
                                                 "p99_us": h["p99_ns"] / 1e3, "count": h["count"]}
    return hops


def hop_table(rows, keys, names, field="hops"):
    """Markdown lines: one row per hop, one column per switch key, "p50 / p99" (µs) as the median
    over that switch's rows of row[field]; "–" where a switch has no such hop."""
    lines = ["| hop | " + " | ".join(names[k] for k in keys) + " |", "|---|" + "---|" * len(keys)]
    for label, port, hop in HOPS:
        cells = []
        for k in keys:
            hs = [(r.get(field) or {}).get(f"{port}.{hop}") for r in rows if r["switch"] == k]
            hs = [h for h in hs if h and h.get("count", 1) > 0]
            if not hs:
                cells.append("–")
                continue
            p50 = statistics.median(h["p50_us"] for h in hs)
            p99 = statistics.median(h["p99_us"] for h in hs)
            cells.append(f"{p50:.1f} / {p99:.1f}")
        lines.append(f"| {label} ({port}) | " + " | ".join(cells) + " |")
    return lines
