#!/usr/bin/python3
"""E7's live switch against the replay of its recorded arrivals (experiments/e7_agreement.sh).

Per run (policy, overflow mode): the trimming counters of the bottleneck port p1 live (sharebufd's
stats at the end) and in the replay (sharebuf-replay --json): data frames refused, trimmed at
ingress by a meter, deflected, cut copies sent to h1, copies refused at the header queue, copies
sent back to their senders, notifications and changes to pessimistic; then the headers
themselves: which data packets were trimmed (live: the headers h1 received, from sharebuf-ndp's
events; replay: the cut copies p1's header queue sent, traced to the arrival they came from in
the recording) as the Jaccard index of the two sets, and in which order they reached h1, as the
share of concordant pairs among the headers both have (Kendall: 100 % = the same order).

usage: e7_agreement.py RUN_DIR POLICY MODE >> rows.csv    (one row per metric)
       e7_agreement.py --header
       e7_agreement.py --markdown rows.csv [rows.csv...] OUT.md   (several: medians over runs)
       e7_agreement.py --report OUT [--runs N] [--readme]
         OUT/agreement.md over OUT/run*/rows.csv (render(): from OUT's meta.json, run*/rows.csv
         and effective-*.toml alone); --readme writes the E7 page's section e7-agreement and keeps
         those files under docs/runs/e7/e7-agreement, from which
         tests/python/test_results_pages.py makes the section again
"""
import argparse
import csv
import datetime
import glob
import json
import os
import platform
import shutil
import statistics
import struct
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_section  # noqa: E402
import effective_setup  # noqa: E402
import run_record  # noqa: E402

RECORD_DIR = os.path.join(ROOT, "docs", "runs", "e7", "e7-agreement")

COLUMNS = ["policy", "mode", "metric", "live", "replay", "diff"]

# (metric, how it is read live from the stats JSON's port p1, and from the replay's JSON)
COUNTERS = [
    ("data refused (threshold, pool full)",
     lambda p: drops(p["queues"][1], "threshold", "pool_full"),
     lambda r: drops(r["q"][1], "threshold", "pool_full")),
    ("trimmed at ingress by a meter",
     lambda p: drops(p["queues"][1], "meter"), lambda r: drops(r["q"][1], "meter")),
    ("deflected", lambda p: p["queues"][1]["deflected"], lambda r: r["q"][1]["deflected"]),
    ("cut copies sent on (trimmed)", lambda p: p["queues"][1]["trimmed"],
     lambda r: r["q"][1]["trimmed"]),
    ("cut copies refused at the header queue", lambda p: p["queues"][0]["trimmed_dropped"],
     lambda r: r["q"][0]["trimmed_dropped"]),
    ("cut copies in the header reserve", lambda p: p["queues"][0]["header_reserve"],
     lambda r: r["q"][0]["header_reserve"]),
    ("sent back to their senders (bounced)", lambda p: p["queues"][1]["bounced"],
     lambda r: r["q"][1]["bounced"]),
    ("notifications", lambda p: p.get("tofino_approx", {}).get("notifications", 0),
     lambda r: r["t"].get("notifications", 0)),
    ("changes to pessimistic", lambda p: p.get("tofino_approx", {}).get("to_pessimistic", 0),
     lambda r: r["t"].get("to_pessimistic", 0)),
]


def drops(q, *reasons):
    return sum(q["dropped"].get(r, 0) for r in reasons)


def pct_diff(live, replay):
    if live == 0:
        return "—" if replay == 0 else f"+{replay}"
    return f"{100.0 * (replay - live) / live:+.1f} %"


def concordance(a, b):
    """Share of pairs of the items both sequences have that they put in the same order (1.0 when
    fewer than two are shared). Items are unique within each sequence. Counts inversions of b's
    ranks taken in a's order by merge sort: O(n log n)."""
    rank = {x: i for i, x in enumerate(b)}
    seq = [rank[x] for x in a if x in rank]
    n = len(seq)
    if n < 2:
        return 1.0

    def sort_count(v):
        if len(v) < 2:
            return v, 0
        mid = len(v) // 2
        left, il = sort_count(v[:mid])
        right, ir = sort_count(v[mid:])
        merged, inv, i, j = [], il + ir, 0, 0
        while i < len(left) and j < len(right):
            if left[i] <= right[j]:
                merged.append(left[i])
                i += 1
            else:
                merged.append(right[j])
                inv += len(left) - i
                j += 1
        merged += left[i:] + right[j:]
        return merged, inv

    _, inversions = sort_count(seq)
    pairs = n * (n - 1) // 2
    return 1.0 - inversions / pairs


def numbered(keys):
    """(key, k): the k-th occurrence of each key, so a packet trimmed twice is two items."""
    seen = {}
    out = []
    for k in keys:
        seen[k] = seen.get(k, 0) + 1
        out.append((k, seen[k]))
    return out


def read_pcap(path):
    """(time_ns, frame bytes) of every record of a pcap file (micro- or nanosecond format)."""
    out = []
    with open(path, "rb") as f:
        header = f.read(24)
        if len(header) < 24:
            return out
        nano = struct.unpack("<I", header[:4])[0] == 0xA1B23C4D
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            sec, frac, caplen, _ = struct.unpack("<IIII", rec)
            data = f.read(caplen)
            out.append((sec * 1_000_000_000 + (frac if nano else frac * 1000), data))
    return out


NDP_MAGIC = 0x4E445031
NDP_DATA = 2


def ndp_data_key(frame):
    """(query, flow, seq) of a sharebuf-ndp data packet in an Ethernet/IPv4/UDP frame, else
    None (the flow id is query * 65536 + the flow's index in its query)."""
    if len(frame) < 14 + 20 + 8 + 16 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
        return None
    payload = 14 + (frame[14] & 0x0F) * 4 + 8
    if len(frame) < payload + 16:
        return None
    magic, kind = struct.unpack_from("<IB", frame, payload)
    if magic != NDP_MAGIC or kind != NDP_DATA:
        return None
    flow, seq = struct.unpack_from("<II", frame, payload + 8)
    return (flow // 65536, flow % 65536, seq)


def live_headers(events_csv):
    """The headers h1 received, in the order it received them: (query, flow, seq)."""
    with open(events_csv) as f:
        return [(int(r["query"]), int(r["flow"]), int(r["seq"]))
                for r in csv.DictReader(f) if r["kind"] == "header"]


def replay_headers(run_dir, policy, header_queue):
    """The cut copies the replay sent from `header_queue` (flat id), in order, traced to the data
    packet each was cut from through its arrival time in the recording (the replay's clock starts
    at the earliest record of all the port recordings)."""
    frames = []
    for path in sorted(glob.glob(os.path.join(run_dir, "rec-p*.pcap"))):
        frames += read_pcap(path)
    if not frames:
        return []
    t0 = min(t for t, _ in frames)
    by_time = {}
    for t, data in frames:
        key = ndp_data_key(data)
        if key is not None:
            by_time.setdefault(t - t0, []).append(key)
    out = []
    with open(os.path.join(run_dir, "departures.csv")) as f:
        for r in csv.DictReader(f):
            if r["policy"] != policy or r["cut"] != "1" or int(r["queue"]) != header_queue:
                continue
            # Frames recorded at one instant are taken in order (the recording stamps each
            # frame with its own ring time, so ties are rare).
            keys = by_time.get(int(r["arrival_ns"]))
            if keys:
                out.append(keys.pop(0))
    return out


def rows(run_dir, policy, mode):
    stats = json.load(open(os.path.join(run_dir, "stats.json")))
    port = next(p for p in stats["ports"] if p["interface"] == "p1")
    replay = json.load(open(os.path.join(run_dir, "replay.json")))["results"][0]
    labels = [q["label"] for q in replay["queues"]]
    r = {"q": [replay["queues"][labels.index("p1/0")], replay["queues"][labels.index("p1/1")]],
         "t": next((t for t in replay.get("tofino_approx", []) if t["port"] == "p1"), {})}
    out = []
    for name, live_of, replay_of in COUNTERS:
        live, rep = live_of(port), replay_of(r)
        if live == 0 and rep == 0:
            continue
        out.append([policy, mode, name, live, rep, pct_diff(live, rep)])
    live = numbered(live_headers(os.path.join(run_dir, "events.csv")))
    rep = numbered(replay_headers(run_dir, policy, labels.index("p1/0")))
    if live or rep:
        both = set(live) & set(rep)
        union = set(live) | set(rep)
        out.append([policy, mode, "headers: the same packets trimmed (Jaccard)", len(live),
                    len(rep), f"{100.0 * len(both) / len(union):.1f} %"])
        out.append([policy, mode, "headers: the same order at h1 (concordant pairs)", len(both),
                    len(both), f"{100.0 * concordance(live, rep):.1f} %"])
    return out


def diff_value(row):
    """The row's replay-vs-live figure as a number (None when live and replay are both 0 or
    live is 0): % difference for counters, the % itself for the header rows."""
    d = row["diff"].replace("%", "").strip()
    if row["metric"].startswith("headers:"):
        return float(d)
    live, rep = float(row["live"]), float(row["replay"])
    return None if live == 0 else 100.0 * (rep - live) / live


def markdown(rows_csvs, out_md):
    with open(out_md, "w") as f:
        f.write("\n".join(table(rows_csvs)) + "\n")


def table(rows_csvs):
    """The table of one run, or of several: medians of live and replay and the median [range]
    of the replay-vs-live figure over the runs that have the row."""
    runs = []
    for path in rows_csvs:
        with open(path) as f:
            runs.append(list(csv.DictReader(f)))
    order, by_key = [], {}
    for data in runs:
        for r in data:
            key = (r["policy"], r["mode"], r["metric"])
            if key not in by_key:
                order.append(key)
                by_key[key] = []
            by_key[key].append(r)
    if len(runs) == 1:
        lines = ["| policy | mode | metric | live | replay | replay vs live |",
                 "|---|---|---|---:|---:|---:|"]
        for key in order:
            r = by_key[key][0]
            lines.append(f"| {r['policy']} | {r['mode']} | {r['metric']} | {r['live']} | "
                         f"{r['replay']} | {r['diff']} |")
    else:
        lines = [f"| policy | mode | metric | live | replay | replay vs live, median [range] "
                 f"of {len(runs)} runs |", "|---|---|---|---:|---:|---:|"]
        for key in order:
            rs = by_key[key]
            live = statistics.median(float(r["live"]) for r in rs)
            rep = statistics.median(float(r["replay"]) for r in rs)
            vals = [v for v in (diff_value(r) for r in rs) if v is not None]
            header = key[2].startswith("headers:")
            if vals:
                sign = "" if header else "+"
                fig = (f"{statistics.median(vals):{sign}.1f} % [{min(vals):{sign}.1f} – "
                       f"{max(vals):{sign}.1f}]")
            else:
                fig = "—"
            if len(rs) < len(runs):
                fig += f" ({len(rs)} of {len(runs)} runs)"
            lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {live:g} | {rep:g} | {fig} |")
    return lines


def run_rows(out):
    """OUT's run*/rows.csv in run order."""
    return sorted(glob.glob(os.path.join(out, "run*", "rows.csv")),
                  key=lambda p: int(os.path.basename(os.path.dirname(p))[3:]))


def render(out):
    """(The section with its setup table, the table) from OUT's files alone."""
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    text = "\n".join(table(run_rows(out)) + [
        "", f"Produced by `experiments/e7_agreement.sh --runs {meta['runs']}` on {meta['date']} "
        f"({meta['host']}, {meta['cpus']} CPUs): fan-in {meta['fanin']}, {meta['queries']} "
        f"queries of {meta['size']} B flows per run."])
    setup = effective_setup.setup_table(out)
    return text + ("\n\n" + setup if setup else "") + "\n", text


def record(out, dest=RECORD_DIR):
    """Copies what render() reads to DEST (docs/runs/e7/e7-agreement)."""
    run_record.copy_fresh(out, dest, ["meta.json"])
    for path in run_rows(out):
        run = os.path.basename(os.path.dirname(path))
        os.makedirs(os.path.join(dest, run))
        shutil.copy(path, os.path.join(dest, run, "rows.csv"))
    return dest


def report(out, runs, fanin, queries, size, readme=False):
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump({"date": str(datetime.date.today()), "host": platform.node(),
                   "cpus": os.cpu_count(), "runs": runs, "fanin": fanin, "queries": queries,
                   "size": size}, f, indent=1)
        f.write("\n")
    section, text = render(out)
    with open(os.path.join(out, "agreement.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    if readme:
        doc_section.write_section("e7-agreement", section)
        print(f"section e7-agreement written; its runs kept in "
              f"{os.path.relpath(record(out), ROOT)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--header", action="store_true", help="print the CSV header and stop")
    ap.add_argument("--markdown", nargs="+", metavar="FILE",
                    help="ROWS.csv [ROWS.csv ...] OUT.md: the Markdown table")
    ap.add_argument("--report", metavar="OUT",
                    help="OUT/agreement.md over OUT/run*/rows.csv (with --runs, --fanin, "
                    "--queries, --size: what the runs were)")
    for name in ("runs", "fanin", "queries", "size"):
        ap.add_argument(f"--{name}", type=int, default=0)
    ap.add_argument("--readme", action="store_true",
                    help="with --report: write section e7-agreement and record its runs")
    ap.add_argument("run_dir", nargs="?")
    ap.add_argument("policy", nargs="?")
    ap.add_argument("mode", nargs="?")
    a = ap.parse_args(argv)
    if a.header:
        csv.writer(sys.stdout).writerow(COLUMNS)
    elif a.markdown:
        if len(a.markdown) < 2:
            ap.error("--markdown takes ROWS.csv [ROWS.csv ...] OUT.md")
        markdown(a.markdown[:-1], a.markdown[-1])
    elif a.report:
        report(a.report, a.runs, a.fanin, a.queries, a.size, a.readme)
    elif a.mode is None:
        ap.error("give RUN_DIR POLICY MODE, --header or --markdown")
    else:
        w = csv.writer(sys.stdout)
        for row in rows(a.run_dir, a.policy, a.mode):
            w.writerow(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
