#!/usr/bin/python3
"""E8's tables and plots from the runs e8_runs.py made (OUT/index.json, OUT/runs/*/summary.json).

For every figure: one Markdown table per metric (rows: policies, columns: the axis; each cell
the median over the seeds with their range), the comparisons the paper states (ratios of tail
FCTs), and a PNG with the metrics against the axis like the paper's figures. Writes
OUT/<figure>.md and OUT/<figure>.png; with --readme also the figure's section of
docs/experiments/e8-fabric.md (marker e8-<figure>), and the runs' own files the section was made
from (each run's summary.json, meta.json and scenario.toml; flows.csv.gz where a metric reads the
flows) under docs/runs/e8/<figure>/, from which tests/python/test_results_pages.py makes the
section again and fails if the page differs.

usage: e8_report.py OUT FIGURE[,FIGURE...] [--readme]
"""
import argparse
import csv
import gzip
import json
import os
import re
import shutil
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import run_record  # noqa: E402


def short(stat):
    return lambda s: s["traffic"]["background"]["short"]["fct_ms"].get(stat)


def long_(stat):
    return lambda s: s["traffic"]["background"]["long"]["fct_ms"].get(stat)


def incast(stat):
    return lambda s: s["traffic"]["incast"]["fct_ms"].get(stat)


def qct(stat):
    return lambda s: s["traffic"]["queries"]["qct_ms"].get(stat)


def goodput(s):
    return s["traffic"]["background"]["long"].get("goodput_gbps_mean")


def leaf_occupancy(s):
    """The leaves' p99 occupancy, as a share of their buffer (%), averaged over the leaves."""
    shares = [x["occupancy"]["p99_share"] for x in s["switches"] if x["role"] == "leaf"]
    return 100 * sum(shares) / len(shares) if shares else None


def drops(s):
    return sum(sum(v for k, v in x["dropped"].items()) for x in s["switches"])


def marks(s):
    """ECN marks of all switches, in thousands: DCTCP at work (None for runs made before the
    switches counted them)."""
    n = [x.get("ecn_marked") for x in s["switches"]]
    return None if None in n else sum(n) / 1000


def queue_drops(queue):
    """Frames dropped from one queue index of every port, all switches (with a class per queue:
    that class's drops)."""
    def f(s):
        if any("dropped_by_queue" not in x for x in s["switches"]):
            return None
        return sum(sum(x["dropped_by_queue"].get(queue, {}).values()) for x in s["switches"])
    return f


def completion(s):
    t = s["traffic"]
    return 100 * t["completed"] / t["flows"] if t["flows"] else None


def incast_timeouts(s, run_dir):
    """Incast responses that took 10 ms (the minimum RTO) or more, or never completed, in % of
    the incast responses: the ones that waited out a retransmission timeout."""
    n = late = 0
    path = os.path.join(run_dir, "flows.csv")
    if not os.path.exists(path):
        path += ".gz"  # as docs/runs/ keeps it
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for row in csv.DictReader(f):
            if row["kind"] != "incast":
                continue
            n += 1
            late += int(row["fct_ns"]) < 0 or int(row["fct_ns"]) >= 10_000_000
    return 100 * late / n if n else None


incast_timeouts.needs_run_dir = True


# figure -> [(metric id, label, extractor, lower is better)]
METRICS = {
    "protean": [
        ("incast_p999", "incast flows' p99.9 FCT (ms)", incast("p999"), True),
        ("incast_mean", "incast flows' mean FCT (ms)", incast("mean"), True),
        ("short_p999", "short flows' (< 100 KB) p99.9 FCT (ms)", short("p999"), True),
        ("short_mean", "short flows' mean FCT (ms)", short("mean"), True),
        ("long_goodput", "long flows' (>= 1 MB) mean goodput (Gbit/s)", goodput, False),
        ("drops", "frames dropped, all switches", drops, True),
        ("incast_drops", "incast-class frames dropped, all switches", queue_drops("0"), True),
        ("incast_rto", "incast responses at 10 ms or more (%)", incast_timeouts, True),
        ("marks", "ECN marks, all switches (thousands)", marks, False),
    ],
    "smartbuf": [
        ("short_p99", "short flows' (1-32 KB) p99 FCT (ms)", short("p99"), True),
        ("qct_p99", "incast queries' p99 completion time (ms)", qct("p99"), True),
        ("long_goodput", "long flows' (1-10 MB) mean goodput (Gbit/s)", goodput, False),
        ("drops", "frames dropped, all switches", drops, True),
        ("marks", "ECN marks, all switches (thousands)", marks, False),
    ],
    "credence-load": [
        ("incast_p95", "incast flows' p95 FCT (ms)", incast("p95"), True),
        ("short_p95", "short flows' (< 100 KB) p95 FCT (ms)", short("p95"), True),
        ("long_p95", "long flows' (>= 1 MB) p95 FCT (ms)", long_("p95"), True),
        ("occupancy", "leaves' p99 buffer occupancy (% of the buffer)", leaf_occupancy, False),
        ("incast_rto", "incast responses at 10 ms or more (%)", incast_timeouts, True),
        ("drops", "frames dropped, all switches", drops, True),
        ("marks", "ECN marks, all switches (thousands)", marks, False),
    ],
    "credence-flip": [
        ("incast_p95", "incast flows' p95 FCT (ms)", incast("p95"), True),
        ("short_p95", "short flows' (< 100 KB) p95 FCT (ms)", short("p95"), True),
        ("long_p95", "long flows' (>= 1 MB) p95 FCT (ms)", long_("p95"), True),
        ("drops", "frames dropped, all switches", drops, True),
        ("incast_rto", "incast responses at 10 ms or more (%)", incast_timeouts, True),
    ],
}
METRICS["credence-burst"] = METRICS["credence-load"]
METRICS["credence-paper"] = METRICS["credence-load"]
METRICS["reverie"] = METRICS["credence-load"]
def reclaimed(s):
    return sum(x["dropped"].get("reclaimed", 0) for x in s["switches"])


METRICS["occamy-burst"] = [
    ("qct_mean", "queries' mean completion time (ms)", qct("mean"), True),
    ("qct_p99", "queries' p99 completion time (ms)", qct("p99"), True),
    ("short_p99", "short flows' (< 100 KB) p99 FCT (ms)", short("p99"), True),
    ("long_goodput", "long flows' (>= 1 MB) mean goodput (Gbit/s)", goodput, False),
    ("drops", "frames dropped (reclaimed ones included)", drops, True),
    ("reclaimed", "frames reclaimed (Occamy's head drops)", reclaimed, False),
]
METRICS["fb-single"] = [
    ("qct_mean", "queries' mean completion time (ms)", qct("mean"), True),
    ("qct_p99", "queries' p99 completion time (ms)", qct("p99"), True),
    ("short_p99", "short flows' (< 100 KB) p99 FCT (ms)", short("p99"), True),
    ("long_goodput", "long flows' (>= 1 MB) mean goodput (Gbit/s)", goodput, False),
    ("occupancy", "leaves' p99 buffer occupancy (% of the buffer)", leaf_occupancy, False),
    ("drops", "frames dropped, all switches", drops, True),
]

# The comparisons each paper states: (metric, policy compared, baselines, how the paper says it).
CLAIMS = {
    "protean": [("incast_p999", "protean", ["dt", "cs"],
                 "tail incast FCT 5x better than DT and 4.6x than CS with DCTCP, on average "
                 "across loads"),
                ("short_p999", "protean", ["dt", "cs"],
                 "tail short-flow FCT up to 5x better than DT and 3.6x than CS with DCTCP")],
    "smartbuf": [("short_p99", "smartbuf", ["dt", "edt", "cs", "static"],
                  "p99 FCT about 8x better than the others at high load")],
    "credence-load": [("incast_p95", "credence", ["dt", "abm", "lqd"],
                       "p95 incast FCT 95.5 % lower than DT's and 95.5 % than ABM's; close to "
                       "LQD")],
    "credence-paper": [("incast_p95", "credence", ["dt", "abm", "lqd"],
                        "p95 incast FCT 95.5 % lower than DT's and 95.5 % than ABM's; close to "
                        "LQD (Figure 6, this fabric)")],
    "credence-burst": [("incast_p95", "credence", ["dt", "abm", "lqd"],
                        "p95 incast FCT 95 % lower than DT's and 96.9 % than ABM's on average "
                        "across bursts; like DT and ABM at small bursts")],
    "occamy-burst": [("qct_mean", "occamy", ["dt", "abm", "lqd"],
                      "the abstract: Occamy improves end-to-end performance by up to about 55 % "
                      "(the figure's own numbers were not readable here)")],
    "fb-single": [("qct_mean", "fab", ["dt", "cs", "ib"],
                   "FB paper, Figure 7 (single queue, TCP): mean QCT of FAB 104 ms against DT's "
                   "237, CS's 165 and IB's 177 at 90 % load; 63 against 193, 135 and 168 at 40 %"),
                  ("qct_mean", "ib", ["dt"],
                   "IB 177 ms against DT's 237 at 90 % load, 168 against 193 at 40 % (the "
                   "paper's IB with DPP's priority queue for short flows; ib here without it)"),
                  ("qct_mean", "ib-dpp", ["dt"],
                   "the same, against ib-dpp: IB with DPP's priority queue"),
                  ("qct_mean", "ib-dpp-as-coded", ["dt"],
                   "the same, against IB with DPP as the authors' code runs it"),
                  ("qct_mean", "fab-as-coded", ["dt", "cs"],
                   "FAB 104 ms against DT's 237 and CS's 165 at 90 % load, 63 against 193 and 135 "
                   "at 40 %, against FAB as the authors' code runs it")],
    "reverie": [("incast_p95", "reverie", ["dt", "abm"],
                 "the abstract: flow completion times up to 33 % better, RDMA and TCP (the "
                 "TCP burst figure's own numbers were not read here: the paper is not among "
                 "this project's sources)")],
    "credence-flip": [("incast_p95", "credence", ["lqd"],
                       "close to LQD up to a flip probability of 0.005, diverging at 0.01 and "
                       "much worse at 0.1")],
}


def load_index(out):
    with open(os.path.join(out, "index.json")) as f:
        return json.load(f)


def collect(out, cells, metric):
    """{policy: {axis value: [metric per seed]}} for one figure's cells."""
    table = {}
    for policy, value, _seed, run in cells:
        path = os.path.join(out, run, "summary.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            summary = json.load(f)
        if getattr(metric, "needs_run_dir", False):
            v = metric(summary, os.path.join(out, run))
        else:
            v = metric(summary)
        if v is not None:
            table.setdefault(policy, {}).setdefault(str(value), []).append(v)
    return table


def fmt(v):
    if v is None:
        return "–"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def cell_text(values):
    if not values:
        return "–"
    med = statistics.median(values)
    if len(values) == 1:
        return fmt(med)
    return f"{fmt(med)} ({fmt(min(values))}–{fmt(max(values))})"


def ordered(values):
    """The axis values by their number ("209715B" by 209715), then by text: the same order in every
    process (a set's own order is not)."""
    def key(v):
        m = re.match(r"[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?", str(v))
        return (float(m.group(0)) if m else 0.0, str(v))
    return sorted({str(v) for v in values}, key=key)


def markdown_table(label, axis_name, axis_values, policies, table):
    head = f"| {label} | " + " | ".join(f"{axis_name} {v}" for v in axis_values) + " |"
    lines = [head, "|---|" + "---|" * len(axis_values)]
    for p in policies:
        row = table.get(p, {})
        lines.append(f"| {p} | " + " | ".join(cell_text(row.get(v, [])) for v in axis_values)
                     + " |")
    return "\n".join(lines)


def ratios(table, metric_lower_better, policy, baselines, axis_values):
    """Per axis value, baseline median over the policy's median (> 1: the policy is better)."""
    out = {}
    for b in baselines:
        rs = []
        for v in axis_values:
            a, c = table.get(policy, {}).get(v), table.get(b, {}).get(v)
            if not a or not c:
                continue
            pa, pb = statistics.median(a), statistics.median(c)
            if pa <= 0 or pb <= 0:
                continue
            rs.append((v, pb / pa if metric_lower_better else pa / pb))
        out[b] = rs
    return out


def panels(path, title, metrics, draw):
    """One panel per metric, three to a row: draw(ax, metric id) plots the data and names the x
    axis; the panels' titles, scales, grid, legend and the file are done here."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(metrics)
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for i, (mid, label, _, lower) in enumerate(metrics):
        ax = axes[i // cols][i % cols]
        draw(ax, mid)
        ax.set_title(label, fontsize=9)
        if lower and mid not in ("drops", "incast_drops", "incast_rto"):
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].axis("off")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot(path, title, axis_name, axis_values, policies, tables, metrics):
    xs = list(range(len(axis_values)))

    def draw(ax, mid):
        for p in policies:
            row = tables[mid].get(p, {})
            ys = [statistics.median(row[v]) if row.get(v) else float("nan") for v in axis_values]
            lo = [min(row[v]) if row.get(v) else float("nan") for v in axis_values]
            hi = [max(row[v]) if row.get(v) else float("nan") for v in axis_values]
            ax.plot(xs, ys, marker="o", label=p)
            ax.fill_between(xs, lo, hi, alpha=0.15)
        ax.set_xticks(xs)
        ax.set_xticklabels(axis_values)
        ax.set_xlabel(axis_name)

    panels(path, title, metrics, draw)


def flip_probability(policy):
    """The flip probability a policy of the credence-flip figure stands for (Credence's own
    forest: 0); None for the references (LQD, FollowLQD)."""
    if policy == "credence":
        return 0.0
    if policy.startswith("flip-"):
        return float(policy[len("flip-"):])
    return None


def flip_series(table, axis_value):
    """Credence against its flip probability, as the paper's Figure 10 draws it: the
    probabilities in order with each one's median and range over the seeds, and the references'
    {policy: (median, low, high)}, at one axis value."""
    points, refs = [], {}
    for policy, row in table.items():
        values = row.get(axis_value)
        if not values:
            continue
        stats = (statistics.median(values), min(values), max(values))
        p = flip_probability(policy)
        if p is None:
            refs[policy] = stats
        else:
            points.append((p,) + stats)
    points.sort()
    return points, refs


def plot_flip(path, title, axis_name, axis_value, tables, metrics):
    def draw(ax, mid):
        points, refs = flip_series(tables[mid], axis_value)
        # The probabilities span decades and include 0 (the forest as trained): evenly spaced
        # ticks, labelled with the probability.
        xs = list(range(len(points)))
        ax.plot(xs, [m for _, m, _, _ in points], marker="o", color="C2", label="credence")
        ax.fill_between(xs, [lo for _, _, lo, _ in points], [hi for _, _, _, hi in points],
                        color="C2", alpha=0.15)
        for k, (policy, (med, lo, hi)) in enumerate(sorted(refs.items())):
            color = f"C{k}"
            ax.axhline(med, color=color, linestyle="--", label=policy)
            ax.axhspan(lo, hi, color=color, alpha=0.1)
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{p:g}" for p, _, _, _ in points])
        ax.set_xlabel("flip probability")

    panels(path, f"{title} ({axis_name} {axis_value})", metrics, draw)


def rows_text(out, cells, policies):
    """Each row's policy overrides as its runs recorded them (meta.json): what ran, from the runs'
    own files rather than from e8_runs.py as it reads today."""
    seen = {}
    for policy, _value, _seed, run in cells:
        path = os.path.join(out, run, "meta.json")
        if policy in seen or not os.path.exists(path):
            continue
        with open(path) as f:
            seen[policy] = json.load(f).get("overrides", [])
    lines = []
    for policy in policies:
        if policy in seen:
            given = "; ".join(f"`{o}`" for o in seen[policy] if o.startswith("switches."))
            lines.append(f"`{policy}`: {given or 'the scenario as it is'}")
    return "Rows, as their runs recorded them: " + ". ".join(lines) + "." if lines else ""


def layout(figure, index):
    """The figure's definition, its runs, the axis and the rows. The rows are the runs' own (index
    order), so a record renders the same whatever e8_runs.py says today."""
    import e8_runs
    fig = e8_runs.FIGURES[figure]
    cells = index["figures"].get(figure, [])
    axis_values = ordered(v for _, v, _, _ in cells)
    policies = list(dict.fromkeys(p for p, _, _, _ in cells))
    return fig, cells, fig["axis"][0], axis_values, policies


def render(out, figure, index):
    """The figure's Markdown body and its tables, from the runs' files under OUT alone."""
    fig, cells, axis_name, axis_values, policies = layout(figure, index)
    # The scenario as the runs recorded it (meta.json).
    scenario = fig["scenario"]
    for _, _, _, run in cells:
        meta = os.path.join(out, run, "meta.json")
        if os.path.exists(meta):
            with open(meta) as f:
                scenario = json.load(f).get("scenario", scenario)
            break
    metrics = METRICS[figure]
    tables = {mid: collect(out, cells, f) for mid, _, f, _ in metrics}
    seeds = sorted({s for _, _, s, _ in cells})
    parts = [f"**{fig['title']}.** Scenario `{scenario}`, "
             f"{'quick run: ' if index.get('quick') else ''}"
             f"seeds {', '.join(map(str, seeds))}; each cell the median over the seeds "
             "(their range in brackets)."]
    rows = rows_text(out, cells, policies)
    if rows:
        parts.append(rows)
    for mid, label, _, _ in metrics:
        parts.append(markdown_table(label, axis_name, axis_values, policies, tables[mid]))
    comp = collect(out, cells, completion)
    parts.append(markdown_table("flows completed (%)", axis_name, axis_values, policies, comp))
    for mid, policy, baselines, claim in CLAIMS.get(figure, []):
        lower = next(lo for m, _, _, lo in metrics if m == mid)
        rs = ratios(tables[mid], lower, policy, baselines, axis_values)
        lines = []
        for b, vals in rs.items():
            if not vals:
                continue
            each = ", ".join(f"{fmt(r)}x at {v}" for v, r in vals)
            mean = sum(r for _, r in vals) / len(vals)
            lines.append(f"{b}: {each} (mean {fmt(mean)}x)")
        parts.append(f"Paper: {claim}. Measured, {mid} of {b_list(baselines)} over {policy}'s "
                     f"(> 1: {policy} better): " + ("; ".join(lines) if lines else "no data") +
                     ".")
    return "\n\n".join(parts) + "\n", tables


def report(out, figure, index):
    """The figure's Markdown body; writes OUT/<figure>.md and OUT/<figure>.png."""
    fig, _cells, axis_name, axis_values, policies = layout(figure, index)
    metrics = METRICS[figure]
    body, tables = render(out, figure, index)
    with open(os.path.join(out, f"{figure}.md"), "w") as f:
        f.write(body)
    png = os.path.join(out, f"{figure}.png")
    if figure == "credence-flip" and len(axis_values) == 1:
        plot_flip(png, fig["title"], axis_name, axis_values[0], tables, metrics)
    else:
        plot(png, fig["title"], axis_name, axis_values, policies, tables, metrics)
    return body, png


def b_list(baselines):
    return ", ".join(baselines)


RECORD_FILES = ("summary.json", "meta.json", "scenario.toml")


def record_dir(figure):
    return os.path.normpath(os.path.join(HERE, "..", "..", "docs", "runs", "e8", figure))


def record(out, figure, index, dest=None):
    """Copies the files render() reads for `figure` to DEST (docs/runs/e8/<figure>): the page's
    section can be made again from them (tests/python/test_results_pages.py)."""
    dest = dest or record_dir(figure)
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    needs_flows = any(getattr(f, "needs_run_dir", False) for _, _, f, _ in METRICS[figure])
    cells = index["figures"].get(figure, [])
    for _policy, _value, _seed, run in cells:
        src, dst = os.path.join(out, run), os.path.join(dest, run)
        if not os.path.exists(os.path.join(src, "summary.json")):
            continue
        os.makedirs(dst, exist_ok=True)
        for name in RECORD_FILES:
            if os.path.exists(os.path.join(src, name)):
                shutil.copy(os.path.join(src, name), os.path.join(dst, name))
        if needs_flows:
            run_record.gzip_copy(os.path.join(src, "flows.csv"), os.path.join(dst, "flows.csv.gz"))
    os.makedirs(dest, exist_ok=True)
    with open(os.path.join(dest, "index.json"), "w") as f:
        json.dump({"quick": index.get("quick", False), "figures": {figure: cells}}, f, indent=1)
        f.write("\n")
    return dest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the folder e8_runs.py wrote")
    ap.add_argument("figures", metavar="FIGURE[,FIGURE...]")
    ap.add_argument("--readme", action="store_true", help="write each figure's docs section")
    a = ap.parse_args(argv)
    out, figures, readme = a.out, a.figures.split(","), a.readme
    index = load_index(out)
    for figure in figures:
        body, png = report(out, figure, index)
        print(body)
        if readme:
            import doc_section
            doc_section.write_section(f"e8-{figure}", body, [png])
            print(f"recorded in {os.path.relpath(record(out, figure, index))}")


if __name__ == "__main__":
    main()
