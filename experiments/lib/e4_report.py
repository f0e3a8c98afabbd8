#!/usr/bin/python3
"""E4's report: Credence against LQD in replay. Reads OUT/<input>.json (sharebuf-replay --json,
one per input: fig3, fig4, websearch, recorded) and writes OUT/e4.csv, OUT/e4.md (a table per
input and the expectations of E4 with whether each holds) and OUT/e4.png; with
README=1 also the E4 page's generated section, made by render() from the run's files alone, and
those files kept under docs/runs/e4/ (tests/python/test_results_pages.py makes it again).

usage: e4_report.py OUT README(0|1) ORDER INPUT...
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_section  # noqa: E402
import effective_setup  # noqa: E402

RECORD_DIR = os.path.join(ROOT, "docs", "runs", "e4")
TITLES = {"fig3": "Fig. 3 pattern (lone bursts of B)",
          "fig4": "Fig. 4 pattern (4 bursts of B, then short bursts)",
          "websearch": "web-search + incast (generated, seed 2)", "recorded": "recorded trace"}


def evaluate(data, inputs):
    """(rows, markdown lines, checks) from the replays' JSON by input. rows: (input, policy,
    arrivals, transmitted, transmitted / LQD's); checks: (input, expectation, holds)."""
    policies = [r["policy"] for r in data[inputs[0]]["results"]]
    rows, md, checks = [], [], []
    for i in inputs:
        res = {r["policy"]: r for r in data[i]["results"]}
        lqd = res["lqd"]["transmitted"]
        md.append(f"**{TITLES.get(i, i)}** — {data[i]['description']}\n")
        md.append("| policy | transmitted | of LQD | refused: threshold | refused: pool_full | "
                  "by prediction | pushed out |")
        md.append("|---|---|---|---|---|---|---|")
        for p in policies:
            r = res[p]
            drops = {k: sum(q["dropped"][k] for q in r["queues"])
                     for k in ("threshold", "prediction", "pushed_out", "pool_full")}
            ratio = r["transmitted"] / lqd if lqd else float("nan")
            rows.append((i, p, r["arrivals"], r["transmitted"], ratio))
            md.append(f"| {p} | {r['transmitted']} | {ratio:.4f} | {drops['threshold']} | "
                      f"{drops['pool_full']} | {drops['prediction']} | {drops['pushed_out']} |")
        md.append("")
        t = {p: res[p]["transmitted"] for p in policies}
        n = len(res["lqd"]["queues"])
        if i in ("fig3", "fig4"):  # every frame 1500 B: Credence's cell-based thresholds are exact
            checks.append((i, "perfect-nosafeguard == LQD", t["perfect-nosafeguard"] == t["lqd"]))
        else:  # mixed frame sizes: LQD pushes out whole frames, Credence counts cells
            checks.append((i, "perfect-nosafeguard within 0.1 % of LQD (mixed frame sizes)",
                           t["perfect-nosafeguard"] >= 0.999 * t["lqd"]))
        checks.append((i, "perfect within 2 % of LQD", t["perfect"] >= 0.98 * t["lqd"]))
        checks.append((i, "flip degrades smoothly (0.001 >= 0.01 >= 0.1, small tolerance)",
                       t["flip-0.001"] >= 0.995 * t["flip-0.01"] and
                       t["flip-0.01"] >= 0.995 * t["flip-0.1"]))
        checks.append((i, f"every Credence >= LQD / N (N = {n})",
                       all(t[p] >= t["lqd"] / n for p in policies if p not in ("cs", "dt", "lqd"))))
        if i == "fig3":
            checks.append((i, "CS, LQD, Credence keep the whole burst; DT a fraction",
                           t["cs"] == t["lqd"] == t["perfect"] == res["lqd"]["arrivals"] and
                           t["dt"] < t["lqd"]))
        if i == "fig4":
            checks.append((i, "CS < DT < LQD ~ Credence(perfect)",
                           t["cs"] < t["dt"] < t["lqd"] and t["perfect"] >= 0.98 * t["lqd"]))
    return rows, md, checks


def plot(rows, inputs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    policies = list(dict.fromkeys(r[1] for r in rows))
    fig, ax = plt.subplots(figsize=(10, 3.8))
    width = 0.8 / len(policies)
    for k, p in enumerate(policies):
        ys = [next(r[4] for r in rows if r[0] == i and r[1] == p) for i in inputs]
        ax.bar([x + k * width for x in range(len(inputs))], ys, width, label=p)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(inputs))],
                  [TITLES.get(i, i) for i in inputs], fontsize=8)
    ax.set_ylabel("transmitted / LQD")
    ax.set_ylim(0, 1.15)
    ax.axhline(1, color="k", lw=0.6)
    ax.legend(ncol=5, fontsize=7, loc="upper center")
    ax.set_title("E4: Credence against LQD in replay")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def render(out):
    """(The page section, the rows) from the run's files alone: meta.json, <input>.json and the
    effective configurations."""
    with open(f"{out}/meta.json") as f:
        meta = json.load(f)
    data = {}
    for i in meta["inputs"]:
        with open(f"{out}/{i}.json") as f:
            data[i] = json.load(f)
    rows, md, checks = evaluate(data, meta["inputs"])
    verdicts = ["| input | expectation | holds |", "|---|---|---|"]
    verdicts += [f"| {i} | {c} | {'yes' if ok else '**no**'} |" for i, c, ok in checks]
    stamp = (f"Produced by `experiments/e4_credence.sh` on {meta['date']} "
             f"({meta['host']}, {meta['cpus']} CPUs); every number is a simulated-clock "
             "replay (deterministic: the same command gives the same table); events within an "
             f"instant: {meta['order']}.")
    table = "\n".join(md + ["Expectations (E4):", ""] + verdicts + ["", stamp])
    setup = effective_setup.setup_table(out)
    return table + ("\n\n" + setup if setup else "") + "\n", rows, table


def record(out, dest=RECORD_DIR):
    """Copies what render() reads to DEST (docs/runs/e4)."""
    with open(f"{out}/meta.json") as f:
        meta = json.load(f)
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    names = ["meta.json"] + [f"{i}.json" for i in meta["inputs"]] + [
        os.path.basename(p) for p in sorted(os.listdir(out)) if p.startswith("effective")]
    for name in names:
        shutil.copy(os.path.join(out, name), os.path.join(dest, name))
    return dest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("readme", choices=("0", "1"))
    ap.add_argument("order", help="the replay's order of events within an instant")
    ap.add_argument("inputs", nargs="+", metavar="INPUT")
    a = ap.parse_args(argv)
    out, readme = a.out, a.readme == "1"
    with open(f"{out}/meta.json", "w") as f:
        json.dump({"date": str(datetime.date.today()), "host": platform.node(),
                   "cpus": os.cpu_count(), "order": a.order, "inputs": a.inputs}, f, indent=1)
        f.write("\n")
    body, rows, table = render(out)
    with open(f"{out}/e4.csv", "w") as f:
        f.write("input,policy,arrivals,transmitted,of_lqd\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    with open(f"{out}/e4.md", "w") as f:
        f.write(table + "\n")
    plot(rows, a.inputs, f"{out}/e4.png")
    print(table)
    print(f"\nwritten: {out}/e4.csv, {out}/e4.md, {out}/e4.png")
    if readme:
        shutil.copy(f"{out}/e4.png", f"{out}/e4-credence.png")
        doc_section.write_section("e4", body, [f"{out}/e4-credence.png"])
        print(f"section e4 written; its run kept in {os.path.relpath(record(out), ROOT)}")


if __name__ == "__main__":
    main()
