#!/usr/bin/python3
"""E1 with the probe view, each probe reaching its register directly or through its own queue
(`[buffer] probe_path`, docs/configuration.md): the two runs of experiments/e1_protean.sh side by
side, from their own files (flows.csv, runs.csv, effective-*.toml).

usage: probe_path_report.py DIRECT_DIR QUEUE_DIR [--record] [--readme]
  --record  copies both runs to docs/runs/e1-probe-path/{direct,queue} (flows.csv gzipped) and
            renders from the copies;
  --readme  writes the table into p4/README.md's section p4-probe-path.

A run is refused when its effective configurations do not say the probe view and the path the
folder stands for: the table must say what ran.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_section  # noqa: E402
import run_record  # noqa: E402
import stats  # noqa: E402

RECORDS = os.path.join(ROOT, "docs", "runs", "e1-probe-path")


def buffer_key(text, key):
    m = re.search(r"^\[buffer\]\s*$(.*?)(?=^\[)", text + "\n[", re.S | re.M)
    k = re.search(rf"^{key}\s*=\s*[\"']?([^\"'\n]+)[\"']?", m.group(1) if m else "", re.M)
    return k.group(1).strip() if k else None


def setup(folder, path):
    """The buffer keys every effective configuration in FOLDER states; refuses another path."""
    found = {}
    for name in sorted(os.listdir(folder)):
        if name.startswith("effective") and name.endswith(".toml"):
            with open(os.path.join(folder, name)) as f:
                text = f.read()
            keys = {k: buffer_key(text, k) for k in ("view", "probe_interval", "probe_delay",
                                                     "probe_path")}
            if keys["view"] != "probe" or (keys["probe_path"] or "direct") != path:
                raise SystemExit(f"{folder}/{name}: view {keys['view']}, probe_path "
                                 f"{keys['probe_path']}: not the probe view with path {path}")
            found[name] = keys
    if not found:
        raise SystemExit(f"{folder}: no effective*.toml: the run does not say what ran")
    return next(iter(found.values()))


def summarise(folder):
    flows = run_record.read_rows(folder, "flows.csv")
    runs = run_record.read_rows(folder, "runs.csv")
    out = {}
    for policy in dict.fromkeys(r["policy"] for r in flows):
        fct = [float(r["fct_ms"]) for r in flows if r["policy"] == policy and r["ok"] == "1"]
        rr = [r for r in runs if r["policy"] == policy]
        by_rep = {}
        for r in flows:
            if r["policy"] == policy and r["ok"] == "1":
                by_rep.setdefault(r["rep"], []).append(float(r["fct_ms"]))
        out[policy] = {
            "over_per_rep": [sum(1 for v in f if v > 200) for f in by_rep.values()],
            "reps": len(rr), "flows": len(fct), "mean": sum(fct) / len(fct),
            "p99": stats.percentile(fct, 0.99), "over": sum(1 for v in fct if v > 200),
            "drops": [int(r["tcp_drops"]) for r in rr],
            "peak": [int(r["tcp_peak_cells"]) for r in rr],
            "udp": [float(r["udp_mbps"]) for r in rr]}
    return out


def render(direct, queue):
    s_direct, s_queue = setup(direct, "direct"), setup(queue, "queue")
    for k in ("probe_interval", "probe_delay"):  # the table says only probe_path differs
        if s_direct[k] != s_queue[k]:
            raise SystemExit(f"{direct} and {queue} differ in {k} ({s_direct[k]} against "
                             f"{s_queue[k]}), not only in probe_path")
    d, q = summarise(direct), summarise(queue)
    lines = [
        f"E1 ({len(next(iter(d.values()))['drops'])} repetitions per policy and path), view "
        f"`probe`, probe_interval {s_direct['probe_interval'] or '10us (default)'}, probe_delay "
        f"{s_direct['probe_delay'] or '0'}; only `probe_path` differs "
        f"(`experiments/lib/probe_path_report.py` from the runs' own files). Per repetition, "
        f"drops and peak: median [range] over repetitions; drops and peak of the TCP (incast) "
        f"queue.",
        "",
        "| policy | probe_path | mean FCT | p99 FCT | flows over 200 ms | per repetition | "
        "TCP-queue drops | TCP-queue peak (cells) | UDP goodput |",
        "|---|---|---|---|---|---|---|---|---|"]
    for policy in d:
        for path, s in (("direct", d[policy]), ("queue", q.get(policy))):
            if s is None:
                continue
            lines.append(
                f"| {policy} | {path} | {s['mean']:.1f} ms | {s['p99']:.1f} ms | {s['over']} of "
                f"{s['flows']} | {stats.median_range(s['over_per_rep'])} | "
                f"{stats.median_range(s['drops'])} | {stats.median_range(s['peak'])}"
                f" | {stats.median(s['udp']):.1f} Mbit/s |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("direct")
    ap.add_argument("queue")
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--readme", action="store_true")
    a = ap.parse_args()
    direct, queue = a.direct, a.queue
    if a.record:
        for src, path in ((a.direct, "direct"), (a.queue, "queue")):
            dest = run_record.copy_fresh(src, os.path.join(RECORDS, path), ["runs.csv"])
            run_record.gzip_copy(os.path.join(src, "flows.csv"), os.path.join(dest, "flows.csv.gz"))
        direct, queue = os.path.join(RECORDS, "direct"), os.path.join(RECORDS, "queue")
    body = render(direct, queue)
    print(body)
    if a.readme:
        page = doc_section.write_section("p4-probe-path", body)
        print(f"{os.path.relpath(page, ROOT)}: section p4-probe-path updated")


if __name__ == "__main__":
    main()
