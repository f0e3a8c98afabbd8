#!/usr/bin/python3
"""The trimming paper's simulation figures (section 6) at its own scale,
in sharebuf-replay: a 64-port 100 Gbit/s switch with 4 ingress pipelines of 16 ports (the paper's
sender i on pipeline i // 16), a Tofino-sized shared buffer (22 MB), per-port data queues of 10
packets (the "suggested 10" of section 6.1) behind a strict-priority header queue, 64-byte
headers. Senders blast open-loop, as in the paper's uncontrolled startup phase: each sends
PACKETS packets of 1500 bytes back to back at line rate (120 ns apart) from a seeded phase in
its first packet time. Trimming runs in four modes through the live switch's own code:

  ideal  the idealised NDP switch (mode "ideal": trim what the buffer refuses)
  mod    Mirror-on-Drop (meters "mirror": the header of a refused frame crosses a 100 Gbit/s
         mirror port per pipeline, 1 us later in the header queue)
  dod    fixed per-destination meters + Deflect-on-Drop (meters "fixed")
  full   the paper's design: three meters, pessimistic / half-pessimistic states, notifications
         (T0 = 6 us, half-pessimistic until 24 us, 25 % pessimistic share)

Figures: 5a/5b/5c (header arrival times at the receivers: 64:1, four 16:1, sixteen 4:1), 7
(pessimistic periods per port, 18 / 32 / 64 senders to ports i % 16), 8c (congestion response
0-30 us: trims against ideal and the largest DoD queue, 64 senders), 9 (pessimistic only, and
"trim everything", 32 senders), and the open-loop part of 6.2's claims (trims against ideal,
largest DoD queue, senders 1-64).

usage: trim_scale.py OUT [--replay BIN] [--packets N] [--seeds N] [--quick] [--readme]
Writes OUT/summary.md, OUT/results.json, OUT/fig*.png and each run's files in OUT/runs/ (about
25 s with the defaults); --readme puts the summary and plots on docs/experiments/e7-paper-scale.md
and keeps what the summary was made from (results.json, the quoted effective configuration) in
docs/runs/e7/trim-scale/, from which tests/python/test_results_pages.py makes it again.
"""
import argparse
import csv
import json
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import stats  # noqa: E402  (scripts/stats.py: the one percentile)

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PORTS = 64
PIPELINES = 4
PKT = 1500
PKT_NS = 120  # 1500 B at 100 Gbit/s
HDR = 64
CELL = 80
DATA_CAP_PKTS = 10
HEADER_CAP_CELLS = 12_500  # 1 MB; the 64:1 incast overflows it (its headers are returned or lost)
BUFFER = "22 MB"
MODES = {"ideal": ("ideal", "three"), "mod": ("tofino-approx", "mirror"),
         "dod": ("tofino-approx", "fixed"), "full": ("tofino-approx", "three")}
MODE_LABEL = {"ideal": "ideal NDP switch", "mod": "Mirror-on-Drop", "dod": "fixed meters + DoD",
              "full": "full design"}


def in_port(i):
    """The port of the paper's sender i: pipeline i // 16 under sharebuf's port p -> p mod 4."""
    return (i % 16) * PIPELINES + i // 16


def cells(nbytes):
    return -(-nbytes // CELL)


def config_text(mode, t0_us=6.0, t1_us=24.0, share=0.25):
    trim_mode, meters = MODES[mode]
    caps = []
    for _ in range(PORTS):
        caps += [HEADER_CAP_CELLS, DATA_CAP_PKTS * cells(PKT)]
    lines = [
        "[buffer]", f'size = "{BUFFER}"', f"cell_bytes = {CELL}",
        "[policy]", 'name = "static"', f"cap_cells = {caps}",
        "[trimming]", f'mode = "{trim_mode}"', f'meters = "{meters}"',
        f"pipelines = {PIPELINES}", f"trim_size = {HDR}", f"pessimistic_share = {share}",
        f't0 = "{t0_us * 1000:.0f}ns"', f't1 = "{t1_us * 1000:.0f}ns"',
        'recirc_rate = "100Gbit"', 'recirc_latency = "1us"', f"recirc_queue = {64 << 20}",
        "[[classes]]", 'name = "data"', "queue = 1", 'overflow = "trim"',
    ]
    for p in range(PORTS):
        lines += ["[[ports]]", f'interface = "p{p}"', 'rate = "100Gbit"', "queues = 2",
                  'scheduler = "sp"', "trim_queue = 0"]
    return "\n".join(lines) + "\n"


def write_arrivals(path, flows, packets, seed):
    """flows: (paper sender i, receiver port). Back to back at line rate from a seeded phase."""
    rng = random.Random(seed)
    rows = []
    for i, dest in flows:
        phase = rng.randrange(PKT_NS)
        rows += [(phase + k * PKT_NS, dest, in_port(i)) for k in range(packets)]
    rows.sort()
    with open(path, "w") as f:
        f.write("time_ns,port,queue,bytes,in_port\n")
        for t, dest, src in rows:
            f.write(f"{t},{dest},1,{PKT},{src}\n")


def run(replay, run_dir, mode, flows, packets, seed=1, **cfg):
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "sw.toml"), "w") as f:
        f.write(config_text(mode, **cfg))
    write_arrivals(os.path.join(run_dir, "arrivals.csv"), flows, packets, seed)
    out = subprocess.run(
        # "config": the [policy] of sw.toml with its caps (a bare "static" ran with static's
        # defaults before the replay took a same-named policy's parameters from the file).
        [replay, "--config", os.path.join(run_dir, "sw.toml"),
         "--csv", os.path.join(run_dir, "arrivals.csv"), "--policies", "config", "--json",
         "--effective-config", os.path.join(run_dir, "effective.toml"),
         "--departures", os.path.join(run_dir, "departures.csv"),
         "--trim-notes", os.path.join(run_dir, "notes.csv")],
        capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)["results"][0]
    data = [q for q in result["queues"] if q["label"].endswith("/1")]
    tofino = result.get("tofino_approx", [])
    return {
        "trimmed": sum(q["trimmed"] for q in data),
        "meter": sum(q["dropped"]["meter"] for q in data),
        "deflected": sum(q["deflected"] for q in data),
        "deflect_dropped": sum(t["deflect_dropped"] for t in tofino),
        "dod_peak": max((t["deflect_queue_peak"] for t in tofino), default=0),
        "returned": sum(q["bounced"] for q in result["queues"]),
        "header_refused": sum(q["trimmed_dropped"] for q in result["queues"]),
        "arrivals": sum(q["arrivals"] for q in data),
        "accounting_errors": result["accounting_errors"],
    }


def headers_out(run_dir):
    """Every trimmed header that left the switch, at any port: the receivers' and, returned, the
    senders'."""
    with open(os.path.join(run_dir, "departures.csv")) as f:
        return sum(r["cut"] == "1" for r in csv.DictReader(f))


def header_times_us(run_dir, receivers):
    """When each header reached its receiver (its last bit left the port), microseconds."""
    hq = {2 * p for p in receivers}
    out = []
    with open(os.path.join(run_dir, "departures.csv")) as f:
        for r in csv.DictReader(f):
            if r["cut"] == "1" and int(r["queue"]) in hq:
                out.append((int(r["t_ns"]) + int(r["bytes"]) * 8 / 100) / 1000)
    return sorted(out)


def pessimistic_periods(run_dir, t0_us):
    """Per port: merged [start, end) microseconds of pessimistic mode (each notification starts
    T0 from its arrival; a later one restarts it)."""
    spans = {}
    with open(os.path.join(run_dir, "notes.csv")) as f:
        for r in csv.DictReader(f):
            spans.setdefault(int(r["port"][1:]), []).append(int(r["t_ns"]) / 1000)
    out = {}
    for port, times in spans.items():
        merged = []
        for t in sorted(times):
            if merged and t <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], t + t0_us)
            else:
                merged.append([t, t + t0_us])
        out[port] = merged
    return out


def percentile(v, q):
    return stats.percentile(v, q)


def fig5(replay, out, packets):
    cases = {"5a": ("64:1", [(i, in_port(0)) for i in range(64)]),
             "5b": ("four 16:1", [(i, in_port(i % 4)) for i in range(64)]),
             "5c": ("sixteen 4:1", [(i, in_port(i % 16)) for i in range(64)])}
    res = {}
    for fig, (what, flows) in cases.items():
        receivers = sorted({d for _, d in flows})
        res[fig] = {"what": what}
        for mode in MODES:
            d = os.path.join(out, "runs", f"fig{fig}-{mode}")
            r = run(replay, d, mode, flows, packets)
            h = header_times_us(d, receivers)
            out_all = headers_out(d)
            # Made = delivered + returned (left through their senders' ports) + lost. A sender on
            # a receiver's port (5a: sender 0) has its returned headers counted as delivered.
            r.update({"headers_returned": out_all - len(h),
                      "headers_lost": r["trimmed"] - out_all})
            r.update({"headers": len(h), "p50_us": percentile(h, 0.5),
                      "p90_us": percentile(h, 0.9), "p99_us": percentile(h, 0.99),
                      "last_us": h[-1] if h else float("nan")})
            res[fig][mode] = r
            res[fig][mode]["cdf"] = h[:: max(1, len(h) // 400)]
    return res


def flows_62(n):
    """Section 6.2: sender i sends to the receiver on output port i % 16."""
    return [(i, in_port(i % 16)) for i in range(n)]


def fig7(replay, out, packets):
    res = {}
    for n in (18, 32, 64):
        d = os.path.join(out, "runs", f"fig7-{n}")
        r = run(replay, d, "full", flows_62(n), packets)
        periods = pessimistic_periods(d, 6.0)
        r["periods"] = {str(p): v for p, v in periods.items()}
        r["pessimistic_us"] = {str(p): sum(b - a for a, b in v) for p, v in periods.items()}
        res[str(n)] = r
    return res


def sweep(replay, out, packets, name, n, responses, **cfg_of):
    res = {}
    for t0 in responses:
        row = {}
        for mode in ("ideal", "full"):
            if mode == "ideal" and res:
                row["ideal"] = next(iter(res.values()))["ideal"]
                continue
            cfg = cfg_of["cfg"](t0) if mode == "full" else {}
            d = os.path.join(out, "runs", f"{name}-{mode}-{t0:g}")
            row[mode] = run(replay, d, mode, flows_62(n), packets, **cfg)
        row["trims_vs_ideal"] = row["full"]["trimmed"] / max(1, row["ideal"]["trimmed"]) - 1
        res[t0] = row
    return res


def design(t0):
    return {"t0_us": t0, "t1_us": t0 + 18 if t0 > 0 else 0}


def pessimistic_only(t0):
    return {"t0_us": t0, "t1_us": t0}


def trim_all(t0):
    return {"t0_us": t0, "t1_us": t0, "share": 0.01}


def senders_sweep(replay, out, packets, counts, seeds):
    """Section 6.2 open loop, each count with several seeds (the senders' phases) and both of the
    paper's half-pessimistic periods (18 us in 6.2, "24us" in 7.a)."""
    res = {}
    for n in counts:
        row = {"ideal": [], "half18": [], "half24": []}
        for seed in seeds:
            def go(mode, tag, **cfg):
                return run(replay, os.path.join(out, "runs", f"fig6-{tag}-{n}-s{seed}"), mode,
                           flows_62(n), packets, seed=seed, **cfg)
            row["ideal"].append(go("ideal", "ideal"))
            row["half18"].append(go("full", "half18", t0_us=6, t1_us=24))
            row["half24"].append(go("full", "half24", t0_us=6, t1_us=30))
        res[n] = row
    return res


def median_range(values, fmt="{:.0f}"):
    return stats.median_range(values, fmt)


def save(fig, path):
    import matplotlib.pyplot as plt
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plots(res, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("trim_scale.py: no matplotlib (python3-matplotlib): no plots", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, key in zip(axes, ("5a", "5b", "5c")):
        for mode in MODES:
            r = res["fig5"][key][mode]
            h = r["cdf"]
            if not h:
                continue
            # Shares of every header made, not of the delivered ones: a curve ends at the share
            # delivered, the gap above it the headers returned to their senders or lost.
            share = r["headers"] / r["trimmed"] if r["trimmed"] else 1.0
            ax.plot(h, [share * (k + 1) / len(h) for k in range(len(h))],
                    label=f"{MODE_LABEL[mode]}: {r['headers']} delivered, "
                          f"{r['headers_returned']} returned, {r['headers_lost']} lost")
        ax.set_title(f"Figure {key}: {res['fig5'][key]['what']}")
        ax.set_xlabel("header arrival time (us)")
        ax.set_xscale("log")
        ax.set_ylabel("share of the headers made")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, loc="upper left")
    save(fig, os.path.join(out, "fig5.png"))

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.4), sharex=True)
    for ax, n in zip(axes, ("18", "32", "64")):
        for port, spans in res["fig7"][n]["periods"].items():
            row = int(port) // PIPELINES  # the paper's output port index (0-15)
            for a, b in spans:
                ax.plot([a, b], [row, row], color="tab:red", lw=3)
        ax.set_title(f"Figure 7: {n} senders")
        ax.set_xlabel("time (us)")
        ax.set_ylabel("destination port")
        ax.set_ylim(-1, 16)
    save(fig, os.path.join(out, "fig7.png"))

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for name, label in (("fig8c", "full design (64 senders)"),
                        ("fig9a", "pessimistic only (32)"), ("fig9c", "trim everything (32)"),
                        ("fig9_design", "full design (32)")):
        rows = res[name]
        xs = sorted(float(x) for x in rows)
        axes[0].plot(xs, [100 * rows[x]["trims_vs_ideal"] for x in xs], marker="o", label=label)
        axes[1].plot(xs, [rows[x]["full"]["dod_peak"] for x in xs], marker="o", label=label)
    axes[0].set_ylabel("trims against ideal (%)")
    axes[1].set_ylabel("largest DoD queue (packets)")
    axes[1].set_yscale("symlog")
    for ax in axes:
        ax.set_xlabel("congestion response T0 (us)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    save(fig, os.path.join(out, "fig8c_fig9.png"))


def setup_from(out):
    """The setup as the runs ran it: quoted from a run's effective configuration (written by
    sharebuf-replay --effective-config), not from this script's constants."""
    import tomllib
    path = os.path.join(out, "runs", "fig5a-full", "effective.toml")
    with open(path, "rb") as f:
        c = tomllib.load(f)
    ports = c["ports"]
    caps = c["policy"].get("cap_cells", [])
    cell = c["buffer"]["cell_bytes"]
    data_q = {cl["queue"] for cl in c["classes"] if cl["overflow"] == "trim"}
    data_cap = {caps[q] for q in data_q if q < len(caps)}
    head_cap = caps[0] if caps else None
    t = c["trimming"]
    rate_g = ports[0]["rate"] / 1e9

    def us(v):  # "6000ns"
        return f"{int(str(v).removesuffix('ns')) / 1000:g}"

    def gbit(v):  # "100000000000bit"
        return f"{int(str(v).removesuffix('bit')) / 1e9:g}"
    return (f"Setup, as every run ran it (quoted from `runs/fig5a-full/effective.toml`, the "
            f"replay's effective configuration): {len(ports)} ports of {rate_g:g} Gbit/s, "
            f"{c['switch'].get('rx_threads', len(ports))} ingress pipelines; a buffer of "
            f"{c['buffer']['size']} cells of {cell} B ({c['buffer']['size'] * cell / 1e6:g} MB); "
            f"policy `{c['policy']['name']}` with data queues (queue {sorted(data_q)}) capped at "
            f"{', '.join(str(x) for x in sorted(data_cap))} cells "
            f"({', '.join(f'{x * cell / PKT:.1f}' for x in sorted(data_cap))} packets of {PKT} B) "
            f"and header queues at {head_cap} cells ({head_cap * cell / 1e6:g} MB) plus "
            f"{t['header_reserve']} headers of reserve; trim_size {t['trim_size']} B; "
            f"t0 {us(t['t0'])} µs, t1 {us(t['t1'])} µs, pessimistic share "
            f"{t['pessimistic_share']}; recirculation at {gbit(t['recirc_rate'])} Gbit/s, "
            f"{us(t['recirc_latency'])} µs.")


def summary(res, packets, out):
    f5 = res["fig5"]
    lines = [f"Open-loop blasts of {packets} packets per sender; every run through "
             "`sharebuf-replay` (deterministic).", "", setup_from(out), "",
             "**Figure 5** — header arrival times at the receivers (µs since the first packet), "
             "of the headers that reached them, and what became of the others: every trimmed "
             "frame makes a header; one its receiver's header queue refuses is returned to its "
             "sender (`header_full = \"return-to-sender\"`, NDP's rule; Mirror-on-Drop's "
             "recirculated copies cannot be) or lost. The percentiles are over the delivered "
             "headers only; the plot's curves are shares of all headers made, so each ends at "
             "the delivered share. Deflect-on-Drop's losses are whole frames, never trimmed:",
             "", "| figure | incast | mode | headers made | delivered | p50 | p90 | p99 | last | "
             "returned to sender | lost | DoD queue peak (packets) | frames lost in the DoD "
             "port |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key in ("5a", "5b", "5c"):
        for mode in MODES:
            r = f5[key][mode]
            lines.append(f"| {key} | {f5[key]['what']} | {MODE_LABEL[mode]} | {r['trimmed']} | "
                         f"{r['headers']} | "
                         f"{r['p50_us']:.1f} | {r['p90_us']:.1f} | {r['p99_us']:.1f} | "
                         f"{r['last_us']:.1f} | {r['headers_returned']} | {r['headers_lost']} | "
                         f"{r['dod_peak']} | {r['deflect_dropped']} |")
    lines += ["", "**Figure 7** — time in pessimistic mode per destination port (full design):",
              "", "| senders | ports ever pessimistic | pessimistic time per port (µs): min / "
              "median / max | incast lasts (µs) | trims vs ideal |", "|---|---:|---|---:|---:|"]
    for n in ("18", "32", "64"):
        r = res["fig7"][n]
        v = sorted(r["pessimistic_us"].values())
        mid = v[len(v) // 2] if v else 0
        six = res["fig6"].get(int(n)) or res["fig6"].get(n)
        ideal = six["ideal"][0]["trimmed"] if six else None
        vs = f"{100 * (r['trimmed'] / ideal - 1):+.1f} %" if ideal else "—"
        lines.append(f"| {n} | {len(v)} | {v[0] if v else 0:.1f} / {mid:.1f} / "
                     f"{v[-1] if v else 0:.1f} | {packets * PKT_NS / 1000:.0f} | {vs} |")
    for name, title in (("fig8c", "**Figure 8c** — congestion response (T0; half-pessimistic "
                                  "18 µs longer), 64 senders:"),
                        ("fig9_design", "**Figure 9**, 32 senders — the full design:"),
                        ("fig9a", "**Figure 9a** — pessimistic only (no half-pessimistic "
                                  "period), 32 senders:"),
                        ("fig9c", "**Figure 9c** — trim everything while pessimistic (share "
                                  "0.01), 32 senders:")):
        lines += ["", title, "", "| T0 (µs) | trims vs ideal | largest DoD queue (packets) | "
                  "lost in the DoD port | meter trims | deflected |",
                  "|---:|---:|---:|---:|---:|---:|"]
        for t0 in sorted(res[name], key=float):
            r = res[name][t0]
            lines.append(f"| {float(t0):g} | {100 * r['trims_vs_ideal']:+.1f} % | "
                         f"{r['full']['dod_peak']} | {r['full']['deflect_dropped']} | "
                         f"{r['full']['meter']} | {r['full']['deflected']} |")
    seeds = len(next(iter(res["fig6"].values()))["ideal"]) if res["fig6"] else 0
    lines += ["", f"**Section 6.2, open loop** — the full design against ideal, senders i → "
              f"port i % 16; median [range] over {seeds} seeds of the senders' phases, with the "
              "half-pessimistic period of 6.2 (18 µs) and of 7.a (24 µs):", "",
              "| senders | trims, ideal | vs ideal, half 18 µs | largest DoD queue, half 18 µs | "
              "vs ideal, half 24 µs | largest DoD queue, half 24 µs |",
              "|---:|---:|---:|---:|---:|---:|"]
    for n in sorted(res["fig6"], key=int):
        r = res["fig6"][n]
        ideal = [x["trimmed"] for x in r["ideal"]]

        def vs(key):
            v = [100 * (f["trimmed"] / i["trimmed"] - 1)
                 for f, i in zip(r[key], r["ideal"]) if i["trimmed"]]
            return median_range(v, "{:+.1f}") + " %" if v else "—"
        lines.append(f"| {n} | {median_range(ideal)} | {vs('half18')} | "
                     f"{median_range([x['dod_peak'] for x in r['half18']])} | {vs('half24')} | "
                     f"{median_range([x['dod_peak'] for x in r['half24']])} |")
    return "\n".join(lines) + "\n"


RECORD_DIR = os.path.join(ROOT, "docs", "runs", "e7", "trim-scale")
SETUP_FILE = os.path.join("runs", "fig5a-full", "effective.toml")


def render(out, packets):
    """The page's summary from OUT/results.json and the effective configuration it quotes."""
    with open(os.path.join(out, "results.json")) as f:
        return summary(json.load(f), packets, out)


def record(out, packets, dest=RECORD_DIR):
    """Keeps what render() reads (and the packet count) in DEST: docs/runs/e7/trim-scale."""
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(os.path.join(dest, os.path.dirname(SETUP_FILE)))
    shutil.copy(os.path.join(out, "results.json"), os.path.join(dest, "results.json"))
    shutil.copy(os.path.join(out, SETUP_FILE), os.path.join(dest, SETUP_FILE))
    with open(os.path.join(dest, "meta.json"), "w") as f:
        json.dump({"packets": packets}, f)
        f.write("\n")
    return dest


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--replay", default=os.path.join(ROOT, "build", "sim", "sharebuf-replay"))
    ap.add_argument("--packets", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=5,
                    help="seeds of the senders' phases for section 6.2's table (default 5)")
    ap.add_argument("--quick", action="store_true", help="100 packets, fewer points, 2 seeds")
    ap.add_argument("--readme", action="store_true",
                    help="write the results section of docs/experiments/e7-paper-scale.md")
    a = ap.parse_args(argv[1:])
    if not os.access(a.replay, os.X_OK):
        sys.exit(f"trim_scale.py: sharebuf-replay not found at {a.replay} (./run.sh build)")
    packets = 100 if a.quick else a.packets
    if a.quick:
        a.seeds = 2
    responses = (0, 3, 6, 12) if a.quick else (0, 1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 20, 25, 30)
    counts = (16, 18, 32, 64) if a.quick else (8, 16, 17, 18, 24, 32, 48, 64)
    os.makedirs(a.out, exist_ok=True)
    res = {}
    steps = [("fig5", lambda: fig5(a.replay, a.out, packets)),
             ("fig6", lambda: senders_sweep(a.replay, a.out, packets, counts,
                                            range(1, 1 + a.seeds))),
             ("fig7", lambda: fig7(a.replay, a.out, packets)),
             ("fig8c", lambda: sweep(a.replay, a.out, packets, "fig8c", 64, responses,
                                     cfg=design)),
             ("fig9_design", lambda: sweep(a.replay, a.out, packets, "fig9d", 32, responses,
                                           cfg=design)),
             ("fig9a", lambda: sweep(a.replay, a.out, packets, "fig9a", 32, responses,
                                     cfg=pessimistic_only)),
             ("fig9c", lambda: sweep(a.replay, a.out, packets, "fig9c", 32, responses,
                                     cfg=trim_all))]
    for k, (name, step) in enumerate(steps):
        print(f"[{k + 1}/{len(steps)}] {name}", file=sys.stderr, flush=True)
        res[name] = step()
    bad = [name for name, r in res.items() for v in _runs(r) if v.get("accounting_errors")]
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, default=str)
    # The summary from the file just written, as a record of it gives it again.
    text = render(a.out, packets)
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(text)
    plots(res, a.out)
    if a.readme:
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import doc_section
        images = [os.path.join(a.out, n) for n in ("fig5.png", "fig7.png", "fig8c_fig9.png")
                  if os.path.exists(os.path.join(a.out, n))]
        print(doc_section.write_section("trim-scale", text, images))
        print(f"recorded in {os.path.relpath(record(a.out, packets), ROOT)}")
    if bad:
        sys.exit(f"trim_scale.py: accounting errors in {sorted(set(bad))}")
    return 0


def _runs(obj):
    """Every run result (a dict with 'trimmed') inside a nested result."""
    if isinstance(obj, dict):
        if "trimmed" in obj and "accounting_errors" in obj:
            yield obj
        else:
            for v in obj.values():
                yield from _runs(v)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
