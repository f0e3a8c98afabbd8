#!/usr/bin/python3
"""Live-vs-replay agreement: compares one live run of sharebufd with the replay of its recorded
arrivals under the same configuration and policy (experiments/live_vs_replay.sh).

Per queue that saw traffic: drops live and in replay, peak occupancy, and the mean absolute
difference of the occupancy timelines (the live 1 ms watch against the replay's 100 us timeline,
aligned on the daemon's monotonic clock through the capture's clock offset) and of the threshold
timelines while the queue is busy (what the policy held the queue to). Per run: how the
live port spaced its departures against its line rate (receive times at the host behind the
bottleneck port: for consecutive frames, gap / (bytes x 8 / rate) - 1).

usage: agreement.py RUN_DIR EXPERIMENT POLICY RATE_BPS >> rows.csv   (one CSV row per queue)
       agreement.py --header
       agreement.py --markdown rows.csv OUT.md   (the fidelity page's table)
       agreement.py --readme OUT   (the fidelity page's section from OUT/rows.csv and the runs'
                                    effective configurations, which it keeps under
                                    docs/runs/agreement/; tests/python/test_results_pages.py
                                    makes the section again from them)
"""
import argparse
import bisect
import csv
import glob
import json
import statistics
import struct
import os
import shutil
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_section  # noqa: E402
import effective_setup  # noqa: E402
import stats  # noqa: E402  (scripts/stats.py: the one percentile)

RECORD_DIR = os.path.join(ROOT, "docs", "runs", "agreement")

COLUMNS = ["experiment", "policy", "queue", "live_drops", "replay_drops", "drops_diff_pct",
           "live_peak", "replay_peak", "mad_cells", "mad_pct_b", "threshold_mad_cells", "samples",
           "spacing_p50_pct", "spacing_p99_pct", "spacing_gaps", "capacity_cells"]


def first_pcap_time_ns(paths):
    """The earliest record time (ns) over pcap files (microsecond or nanosecond format)."""
    first = None
    for p in paths:
        with open(p, "rb") as f:
            header = f.read(24)
            if len(header) < 24:
                continue
            magic = struct.unpack("<I", header[:4])[0]
            nano = magic == 0xA1B23C4D
            rec = f.read(16)
            if len(rec) < 16:
                continue
            sec, frac = struct.unpack("<II", rec[:8])
            t = sec * 1_000_000_000 + (frac if nano else frac * 1000)
            first = t if first is None else min(first, t)
    return first


def percentile(values, q):
    return stats.percentile(values, q)


def spacing_errors(gaps_csv, rate_bps):
    """|gap / expected - 1| in %, for consecutive frames of a backlogged port: gaps longer than
    ten frame times are the port going idle, not spacing, and are left out."""
    rows = [(int(r["t_ns"]), int(r["bytes"])) for r in csv.DictReader(open(gaps_csv))]
    rows.sort()
    errors = []
    for (t0, _), (t1, b1) in zip(rows, rows[1:]):
        expected = b1 * 8e9 / rate_bps
        gap = t1 - t0
        if gap > 10 * expected:
            continue
        errors.append(abs(gap / expected - 1) * 100)
    return errors


def compare(run, experiment, policy, rate_bps):
    stats = json.load(open(f"{run}/stats.json"))
    replay = json.load(open(f"{run}/replay.json"))["results"][0]
    capture = json.load(open(f"{run}/capture.json"))
    capacity = stats["buffer"]["capacity_cells"]
    first_wall = first_pcap_time_ns(glob.glob(f"{run}/rec-*.pcap"))
    offset = capture["clock_offset_ns"]
    # Kept for later analyses of the run (the recordings are large and usually deleted).
    with open(f"{run}/alignment.json", "w") as f:
        json.dump({"first_frame_wall_ns": first_wall, "clock_offset_ns": offset}, f)

    # Replay timeline: label -> (sorted times in s, occupancy, threshold).
    replay_tl = {}
    for r in csv.DictReader(open(f"{run}/replay-timeline.csv")):
        key = f"{r['port']}/{r['queue']}"
        replay_tl.setdefault(key, ([], [], []))
        replay_tl[key][0].append(float(r["t_s"]))
        replay_tl[key][1].append(int(r["occupancy_cells"]))
        replay_tl[key][2].append(int(r["threshold_cells"]))
    end_s = max((t[-1] for t, _, _ in replay_tl.values() if t), default=0)

    # Live watch: label -> [(replay time s, occupancy, threshold)].
    live_tl = {}
    for line in open(f"{run}/watch.jsonl"):
        line = line.strip()
        if not line:
            continue
        s = json.loads(line)
        tau = (s["t_ns"] + offset - first_wall) * 1e-9
        if tau < 0 or tau > end_s:
            continue
        for q in s["queues"]:
            live_tl.setdefault(f"{q['port']}/{q['queue']}", []).append(
                (tau, q["occupancy_cells"], q["threshold_cells"]))

    errors = spacing_errors(f"{run}/gaps.csv", rate_bps)
    rows = []
    live_queues = [(p["interface"], q) for p in stats["ports"] for q in p["queues"]]
    for (iface, lq), rq in zip(live_queues, replay["queues"]):
        label = f"{iface}/{lq['queue']}"
        if lq["received"] == 0 and rq["arrivals"] == 0:
            continue
        live_drops = sum(lq["dropped"].values())
        replay_drops = sum(rq["dropped"].values())
        diff = (100.0 * (replay_drops - live_drops) / live_drops) if live_drops else float("nan")
        mad, thr_mad = [], []
        times, occ, thr = replay_tl.get(label, ([], [], []))
        for tau, live_occ, live_thr in live_tl.get(label, []):
            if not times:
                break
            i = bisect.bisect_left(times, tau)
            if i > 0 and (i == len(times) or tau - times[i - 1] < times[i] - tau):
                i -= 1
            mad.append(abs(live_occ - occ[i]))
            if live_occ > 0 or occ[i] > 0:  # while the queue is busy: what admission applies
                thr_mad.append(abs(live_thr - thr[i]))
        mad_cells = statistics.fmean(mad) if mad else float("nan")
        thr_mad_cells = statistics.fmean(thr_mad) if thr_mad else float("nan")
        rows.append([experiment, policy, label, live_drops, replay_drops, f"{diff:.1f}",
                     lq["peak_cells"], rq["peak_cells"], f"{mad_cells:.0f}",
                     f"{100 * mad_cells / capacity:.2f}", f"{thr_mad_cells:.0f}", len(mad),
                     f"{percentile(errors, 0.5):.1f}", f"{percentile(errors, 0.99):.1f}",
                     len(errors), capacity])
    return rows


def markdown(rows_csv, out_md=None):
    """The table of a CSV of comparisons (written to OUT_MD when given)."""
    with open(rows_csv) as f:
        rows = list(csv.DictReader(f))
    lines = ["| experiment | policy | queue | drops live | drops replay | drops diff | peak live "
             "| peak replay | timeline MAD (cells) | MAD % of B | threshold MAD while busy (cells) "
             "| departure spacing error p50 / p99 |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        # Queues that only carried a few frames (ARP, control connections) say nothing.
        if (int(r["live_drops"]) == 0 and int(r["replay_drops"]) == 0
                and max(int(r["live_peak"]), int(r["replay_peak"])) < 100):
            continue
        diff = r["drops_diff_pct"]
        live, rep = int(r["live_drops"]), int(r["replay_drops"])
        if diff == "nan":
            diff_text = "—" if rep == 0 else f"+{rep}"
        else:
            d = float(diff)
            ok = abs(d) <= 10 or abs(rep - live) <= 10
            diff_text = f"{d:+.1f} %" + ("" if ok else " ✗")
        # No live sample caught the queue busy (a queue of a few short bursts): nothing to compare.
        thr_mad = "—" if r["threshold_mad_cells"] == "nan" else r["threshold_mad_cells"]
        mad = float(r["mad_pct_b"])
        mad_text = f"{mad:.2f} %" + ("" if mad <= 5 else " ✗")
        lines.append(f"| {r['experiment']} | {r['policy']} | {r['queue']} | {live} | {rep} | "
                     f"{diff_text} | {r['live_peak']} | {r['replay_peak']} | {r['mad_cells']} | "
                     f"{mad_text} | {thr_mad} | {r['spacing_p50_pct']} % / "
                     f"{r['spacing_p99_pct']} % |")
    text = "\n".join(lines) + "\n"
    if out_md:
        with open(out_md, "w") as f:
            f.write(text)
    return text


def render(out):
    """The fidelity page's section from OUT/rows.csv and the effective configurations alone."""
    setup = effective_setup.setup_table(out)
    return markdown(f"{out}/rows.csv") + ("\n" + setup if setup else "")


def record(out, dest=RECORD_DIR):
    """Copies what render() reads to DEST (docs/runs/agreement)."""
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    for name in ["rows.csv"] + [os.path.relpath(p, out) for p in effective_setup.effective_files(out)]:
        os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
        shutil.copy(os.path.join(out, name), os.path.join(dest, name))
    return dest


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--header", action="store_true", help="print the CSV header and stop")
    ap.add_argument("--markdown", nargs=2, metavar=("CSV", "OUT_MD"),
                    help="write the Markdown table of a CSV of comparisons")
    ap.add_argument("--readme", metavar="OUT",
                    help="write the fidelity page's section from OUT and keep its files")
    ap.add_argument("run", nargs="?", help="the run's folder")
    ap.add_argument("experiment", nargs="?")
    ap.add_argument("policy", nargs="?")
    ap.add_argument("rate", nargs="?", type=float, help="the ports' rate, bit/s")
    a = ap.parse_args()
    if a.header:
        print(",".join(COLUMNS))
    elif a.markdown:
        markdown(*a.markdown)
    elif a.readme:
        doc_section.write_section("agreement", render(a.readme))
        print(f"section agreement written; its runs kept in "
              f"{os.path.relpath(record(a.readme), ROOT)}")
    elif a.rate is None:
        ap.error("give RUN EXPERIMENT POLICY RATE, --header or --markdown CSV OUT_MD")
    else:
        w = csv.writer(sys.stdout)
        for row in compare(a.run, a.experiment, a.policy, a.rate):
            w.writerow(row)


if __name__ == "__main__":
    main()
