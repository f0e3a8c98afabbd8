#!/usr/bin/python3
"""E8: the papers' simulation figures, run with sharebuf-sim (docs/ns3.md).

Each figure is a scenario file (experiments/e8/*.toml), an axis (load or burst size), the
policies compared, and the seeds; every cell is one sharebuf-sim run with --set overrides. Runs
are kept under OUT/runs/<key>/ (key: a hash of the scenario's name and the overrides that change
it, in any order; a run made from an older version of the scenario file is made again), so a run
shared by two figures is made once and an interrupted E8 resumes where it stopped. Two runs go
side by side (one per core).

A figure with "ranks" runs each cell on that many MPI ranks when --mpi-sim names
sharebuf-sim-mpi (./run.sh ns3-mpi), one such run at a time; without it, on the plain
sharebuf-sim in one process. The results are the same bytes either way (tests/sim/mpi_ranks.sh).

usage: e8_runs.py OUT SIM REPLAY FIGURE[,FIGURE...] [--jobs N] [--quick] [--mpi-sim PATH]
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import subprocess
import threading
import time
import tomllib

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# Policies as inline TOML tables for --set switches.policy=... ({model_leaf} / {model_spine}:
# the forests trained for this E8, see train_credence()).
DT_HALF = '{name = "dt", alpha = 0.5}'
PROTEAN = '{name = "protean", alpha_incast = 1.0, alpha_long = 0.5, beta = 0.25, buildup = 2.0}'
CREDENCE = ('{{name = "credence", oracle = "forest", model = "{model}", base_rtt_us = 25}}')
FLIP = ('{{name = "credence", oracle = "flip", flip_base = "forest", model = "{model}", '
        'flip_probability = {p}, base_rtt_us = 25}}')


def credence_policy(flip=None):
    """The policy overrides for Credence: leaves and spines each with the forest trained on
    their own LQD traces (their buffers differ)."""
    def table(model):
        return CREDENCE.format(model=model) if flip is None else FLIP.format(model=model, p=flip)
    return [f"switches.policy={table('{model_leaf}')}",
            f"switches.spine.policy={table('{model_spine}')}"]


# Credence's comparison (section 4.1): DT and ABM at alpha 0.5 ("similar to prior work"), ABM's
# first round trip at alpha 64 (the senders tag each flow's first BDP: docs/ns3.md), LQD and
# Credence with the trained forests.
CREDENCE_COMPARED = {
    "dt": [f"switches.policy={DT_HALF}"],
    "abm": ["switches.policy={name = \"abm\", alpha = 0.5, first_rtt_alpha = 64}"],
    "lqd": ["switches.policy={name = \"lqd\"}"],
    "credence": credence_policy(),
}

FIGURES = {
    # Protean section IV-A, Figures 5-7: DT, CS and Protean across loads, DCTCP.
    "protean": {
        "scenario": "experiments/e8/protean.toml",
        "title": "Protean (section IV-A): incast and short flows across loads",
        # Three loads of 0.3 s: 12 minutes for the figure on 2 cores (measured 2026-11-24).
        "axis": ("load", "workload.websearch.load", [0.2, 0.5, 0.8]),
        "policies": {
            "dt": ["switches.policy={name = \"dt\"}"],
            "cs": ["switches.policy={name = \"cs\"}"],
            "protean": [f"switches.policy={PROTEAN}"],
        },
        "seeds": [1, 2],
        "duration": "0.3s",
    },
    # Smartbuf section IV-B, Figure 3: p99 FCT across loads; the compared policy on the leaves,
    # DT on the spines. Three loads of 80 ms: its 2:1 fabric carries twice the traffic of the
    # others' 4:1 at a load, and four loads of 100 ms would take about 27 minutes on 2 cores
    # (their runs' walls: 25, 53, 100 and 152 s).
    "smartbuf": {
        "scenario": "experiments/e8/smartbuf.toml",
        "title": "Smartbuf (section IV-B): 99th-percentile FCT across loads",
        "axis": ("load", "workload.websearch.load", [0.2, 0.5, 0.8]),
        "policies": {
            "static": ["switches.policy={name = \"static\"}"],
            "cs": ["switches.policy={name = \"cs\"}"],
            "dt": ["switches.policy={name = \"dt\", alpha = 1.0}"],
            "edt": ["switches.policy={name = \"edt\", alpha = 1.0, time_limit_us = 80}"],
            "smartbuf": ["switches.policy={name = \"smartbuf\", alpha = 1.0}"],
        },
        "seeds": [1, 2],
        "duration": "0.08s",
    },
    # The FB paper section 6, Figures 7 and 9 (single queue): the baselines it compares FB with,
    # DT at alpha 0.5, CS, FAB and Cisco's IB (at alpha 0.5), at the paper's low and high loads,
    # at its own size (80 hosts at 1 Gbit/s); Occamy beside them (no paper compares it here).
    "fb-single": {
        "scenario": "experiments/e8/fb.toml",
        "title": "FB (section 6, Figures 7 and 9, single queue): DT, CS, FAB, IB; Occamy beside",
        "axis": ("load", "workload.websearch.load", [0.4, 0.9]),
        "policies": {
            "dt": ["switches.policy={name = \"dt\", alpha = 0.5}"],
            "cs": ["switches.policy={name = \"cs\"}"],
            "fab": ["switches.policy={name = \"fab\", alpha = 0.5}"],
            "ib": ["switches.policy={name = \"ib\", alpha = 0.5}"],
            # IB with DPP as the paper's IB has it: a flow's first packets (a BDP: 1 Gbit/s x
            # 200 us = 17 packets, as the ABM and Credence authors set it) in a strict-priority
            # queue of their own, everything else in the second queue.
            "ib-dpp": ["switches.policy={name = \"ib\", alpha = 0.5, dpp_packets = 17}",
                       "switches.ports={queues = 2, scheduler = \"sp\"}",
                       "switches.classes=[{name = \"all\", queue = 1}]"],
            # The authors' ns-3 code as written (docs/policies/fab.md, ib.md: variant "as-coded"):
            # FAB counting the frame first at 21 000 B and alpha 1024; IB whose AFD never drops
            # from queue 0 (one queue: DT) and, with DPP, drops the data queue's arrivals while
            # the priority queue is above 150 KiB.
            "fab-as-coded": ["switches.policy={name = \"fab\", alpha = 0.5, variant = \"as-coded\"}"],
            "ib-as-coded": ["switches.policy={name = \"ib\", alpha = 0.5, variant = \"as-coded\"}"],
            "ib-dpp-as-coded": [
                "switches.policy={name = \"ib\", alpha = 0.5, dpp_packets = 17, "
                "variant = \"as-coded\"}",
                "switches.ports={queues = 2, scheduler = \"sp\"}",
                "switches.classes=[{name = \"all\", queue = 1}]"],
            "occamy": ["switches.policy={name = \"occamy\", alpha = 0.5}"],
        },
        "seeds": [1, 2],
        "duration": "1s",
    },
    # Occamy's burst absorption (its DPDK testbed, Figure 12) simulated: DT at alpha 1, Occamy at
    # 8, ABM at 2 and push-out, as the authors' scripts run them, across query sizes of 0.5, 1
    # and 1.4 times the testbed's base of 419 430 bytes. Occamy runs the DPDK prototype's bucket
    # (token_model "dpdk": the testbed this simulates); "occamy-sharebuf" beside it runs
    # sharebuf's own bucket (1600 B cap, speedup 1), which the figure ran before 2026-11-29.
    "occamy-burst": {
        "scenario": "experiments/e8/occamy.toml",
        "title": "Occamy (testbed, Figure 12): queries across sizes, DT, Occamy, ABM, push-out",
        "axis": ("burst", "workload.incast.size", ["209715B", "419430B", "587202B"]),
        "policies": {
            "dt": ["switches.policy={name = \"dt\", alpha = 1.0}"],
            "occamy": ["switches.policy={name = \"occamy\", alpha = 8.0, token_model = \"dpdk\"}"],
            "occamy-sharebuf": ["switches.policy={name = \"occamy\", alpha = 8.0}"],
            "abm": ["switches.policy={name = \"abm\", alpha = 2.0}"],
            "lqd": ["switches.policy={name = \"lqd\"}"],
        },
        # Two seeds of 0.3 s per cell: a run of 1 s took 8.5 minutes here (the star's 40 Gbit/s).
        "seeds": [1, 2],
        "duration": "0.3s",
    },
    # Credence section 4, Figure 6: across loads at a burst of 50 % of the buffer.
    "credence-load": {
        "scenario": "experiments/e8/credence.toml",
        "title": "Credence (section 4.2, Figure 6): across loads, burst 50 % of the buffer",
        "axis": ("load", "workload.websearch.load", [0.2, 0.4, 0.6, 0.8]),
        "policies": CREDENCE_COMPARED,
        "seeds": [1, 2],
        "duration": "0.3s",
    },
    # Credence Figure 6 at the paper's own size (section 4.1: 256 hosts, 4 spines, 16 leaves of 16,
    # 10 Gbit/s, 3 us links, the same buffers; an incast from all 16 hosts of a leaf) beside E8's
    # 32-host fabric, at load 0.4 and one seed, with the forests trained on the 32-host fabric's
    # LQD traces. 0.1 s per run. The axis is the fabric: each value a set of overrides.
    "credence-paper": {
        "scenario": "experiments/e8/credence.toml",
        "title": "Credence (section 4.2, Figure 6) at the paper's size: 256 hosts (4 spines x "
                 "16 leaves x 16) beside E8's 32, load 0.4, burst 50 % of the buffer",
        "axis": ("hosts", None, {
            32: ["workload.websearch.load=0.4"],
            256: ["topology.spines=4", "topology.leaves=16", "topology.hosts_per_leaf=16",
                  "workload.incast.fan_in=16", "workload.websearch.load=0.4"]}),
        "policies": CREDENCE_COMPARED,
        "seeds": [1],
        "duration": "0.1s",
        "ranks": 2,
    },
    # Credence Figure 7: across burst sizes at load 0.4.
    "credence-burst": {
        "scenario": "experiments/e8/credence.toml",
        "title": "Credence (section 4.2, Figure 7): across burst sizes, load 0.4",
        "axis": ("burst", "workload.incast.size", ["25%", "50%", "75%", "100%"]),
        "policies": CREDENCE_COMPARED,
        "seeds": [1, 2],
        "duration": "0.3s",
    },
    # Reverie (NSDI 2024), its TCP bursts (the authors' run-tcp-bursts.sh: DT, ABM and Reverie
    # across burst sizes) without the RDMA load those runs put beside TCP (sharebuf has no PFC):
    # Credence's fabric at load 0.4, DCTCP. Every policy at alpha 0.5 (the authors' alphas file
    # is not in their repository); ABM and Reverie give a flow's first BDP alpha 1024 as the
    # authors' code does (SetABMalphaHigh(1024)); Reverie's filter at gamma 0.999, as every one of
    # their scripts sets it.
    "reverie": {
        "scenario": "experiments/e8/credence.toml",
        "title": "Reverie (TCP bursts, TCP only): DT, ABM, Reverie across burst sizes, load 0.4",
        "axis": ("burst", "workload.incast.size", ["25%", "50%", "75%"]),
        "policies": {
            "dt": [f"switches.policy={DT_HALF}"],
            "abm": ["switches.policy={name = \"abm\", alpha = 0.5, first_rtt_alpha = 1024}"],
            "reverie": ["switches.policy={name = \"reverie\", alpha = 0.5, "
                        "first_rtt_alpha = 1024, gamma = 0.999}"],
            # The filter alone: no first-RTT boost (its alpha the others' 0.5), to tell what the
            # low-pass filter does from what alpha 1024 for a flow's first BDP does.
            "reverie-no-boost": ["switches.policy={name = \"reverie\", alpha = 0.5, "
                                 "first_rtt_alpha = 0.5, gamma = 0.999}"],
        },
        "seeds": [1, 2],
        "duration": "0.3s",
    },
    # Credence Figure 10: predictions flipped at a probability, against LQD; load 0.4, burst 50 %.
    "credence-flip": {
        "scenario": "experiments/e8/credence.toml",
        "title": "Credence (section 4.2, Figure 10): the forest's answers flipped",
        "axis": ("load", "workload.websearch.load", [0.4]),
        "policies": {
            "lqd": ["switches.policy={name = \"lqd\"}"],
            # FollowLQD (section 3): Credence's thresholds and safeguard without an oracle, so
            # the gap between it and LQD is the thresholds' and the gap between it and Credence
            # the predictions'.
            "followlqd": ["switches.policy={name = \"credence\", oracle = \"none\", "
                          "base_rtt_us = 25}"],
            "credence": credence_policy(),
            "flip-0.001": credence_policy(0.001),
            "flip-0.01": credence_policy(0.01),
            "flip-0.1": credence_policy(0.1),
        },
        "seeds": [1, 2],
        "duration": "0.3s",
    },
}

# Credence's forests are trained as the paper trains them (section 4.1): on the LQD traces of the
# fabric's switches at load 0.8 and a burst of 75 % of the buffer, with a seed the evaluation
# does not use.
TRAINING = {"seed": 100, "duration": "0.3s",
            "overrides": ["workload.websearch.load=0.8", "workload.incast.size=75%",
                          "switches.policy={name = \"lqd\"}"]}


def scenario_table(scenario):
    with open(os.path.join(ROOT, scenario), "rb") as f:
        return tomllib.load(f)


def restates(table, override):
    """Whether `key=value` sets what the scenario file already says at that key."""
    key, _, text = override.partition("=")
    node = table
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if node is None:
        return False
    try:
        return tomllib.loads(f"v = {text}")["v"] == node
    except tomllib.TOMLDecodeError:
        return False


def run_key(scenario, overrides):
    """The run's identity: the scenario and the overrides that change it, in any order. So one
    configuration reached by two figures (Figure 6's load 0.4 at its burst of 50 % is Figure 7's
    burst of 50 % at its load 0.4, both the scenario's own values) is one run."""
    table = scenario_table(scenario)
    changes = sorted(o for o in overrides if not restates(table, o))
    return hashlib.sha1(json.dumps([scenario] + changes).encode()).hexdigest()[:12]


def cells(name, quick=False):
    """Every run of a figure: (policy, axis value, seed, overrides)."""
    fig = FIGURES[name]
    _, key, values = fig["axis"]
    seeds = fig["seeds"][:1] if quick else fig["seeds"]
    duration = "0.02s" if quick else fig["duration"]
    # An axis over one key, or over named sets of overrides (a dict).
    if isinstance(values, dict):
        points = list(values.items())
    else:
        points = [(v, [f"{key}={chr(34) + v + chr(34) if isinstance(v, str) else v}"])
                  for v in values]
    out = []
    for policy, pol in fig["policies"].items():
        for v, axis_overrides in points:
            for seed in seeds:
                out.append((policy, v, seed,
                            pol + axis_overrides + [f"run.seed={seed}",
                                                    f"run.duration={duration}"]))
    return out


def sim_command(sim, scenario, overrides, out_dir):
    """sim: the binary, or a list (mpirun ... sharebuf-sim-mpi)."""
    cmd = (list(sim) if isinstance(sim, list) else [sim]) + [os.path.join(ROOT, scenario),
                                                               "--quiet", "--out", out_dir]
    for o in overrides:
        cmd += ["--set", o]
    return cmd


def scenario_sha1(scenario):
    with open(os.path.join(ROOT, scenario), "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


def run_one(sim, scenario, overrides, out_dir):
    """Runs sharebuf-sim unless out_dir already holds its summary from the same scenario file
    (an edited scenario makes its runs again); returns the wall time."""
    meta_path = os.path.join(out_dir, "meta.json")
    digest = scenario_sha1(scenario)
    if os.path.exists(os.path.join(out_dir, "summary.json")):
        with open(meta_path) as f:
            if json.load(f).get("scenario_sha1", digest) == digest:
                return 0.0
    os.makedirs(out_dir, exist_ok=True)
    with open(meta_path, "w") as f:
        json.dump({"scenario": scenario, "scenario_sha1": digest, "overrides": overrides}, f,
                  indent=1)
    t0 = time.time()
    tmp = out_dir + ".tmp"
    r = subprocess.run(sim_command(sim, scenario, overrides, tmp), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit(f"e8: sharebuf-sim failed ({' '.join(overrides)}):\n{r.stderr}")
    for f in os.listdir(tmp):
        os.replace(os.path.join(tmp, f), os.path.join(out_dir, f))
    os.rmdir(tmp)
    return time.time() - t0


def lqd_drops(trace):
    """How many arrivals of an LQD trace LQD refused or pushed out (label 1)."""
    with open(trace) as f:
        next(f)
        return sum(line.rstrip().endswith(",1") for line in f)


def train_credence(out, sim, replay, quick):
    """Forests for Credence's leaves and spines from LQD traces recorded in the fabric. A role
    whose switches LQD never drops at is None: a forest can only learn "accept" there, which is
    Credence's oracle "none" (FollowLQD), so that is what it runs (with_models)."""
    # Named by the scenario file's digest: an edited scenario (other buffers) trains again.
    tag = scenario_sha1("experiments/e8/credence.toml")[:12]
    models = {"leaf": os.path.join(out, f"credence-forest-leaf-{tag}.json"),
              "spine": os.path.join(out, f"credence-forest-spine-{tag}.json")}
    def done(m):
        return os.path.exists(m) or os.path.exists(m + ".no-drops")
    if all(done(m) for m in models.values()):
        return {r: (m if os.path.exists(m) else None) for r, m in models.items()}
    rec = os.path.join(out, "training")
    scenario = "experiments/e8/credence.toml"
    overrides = TRAINING["overrides"] + [f"run.seed={TRAINING['seed']}",
                                         f"run.duration={'0.02s' if quick else TRAINING['duration']}"]
    print(f"e8: recording LQD traces for Credence's forests ({' '.join(overrides)})", flush=True)
    cmd = sim_command(sim, scenario, overrides, os.path.join(rec, "run")) + ["--record", rec]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    for role, model in models.items():
        traces = []
        for sw in sorted(os.listdir(rec)):
            if not sw.startswith(role):
                continue
            d = os.path.join(rec, sw)
            trace = os.path.join(d, "lqd-trace.csv")
            subprocess.run([replay, "--config", os.path.join(d, "switch.toml"), "--csv",
                            os.path.join(d, "arrivals.csv"), "--policies", "lqd",
                            "--order", "arrivals-first", "--base-rtt-us", "25",
                            "--lqd-trace", trace], check=True, stdout=subprocess.DEVNULL)
            traces.append(trace)
        if sum(lqd_drops(t) for t in traces) == 0:
            print(f"e8: LQD drops nothing at the {role} switches: Credence runs there with "
                  "oracle \"none\" (what a forest of those traces would answer)", flush=True)
            with open(model + ".no-drops", "w") as f:
                f.write(" ".join(overrides) + "\n")
        else:
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "train_forest.py"),
                            *traces, "-o", model, "--trees", "4", "--depth", "4", "--seed", "1",
                            "--max-rows", "2000000"], check=True)
        for t in traces:
            os.remove(t)
    return {r: (m if os.path.exists(m) else None) for r, m in models.items()}


def with_models(override, models):
    """Puts the trained forests into a policy override; a role without one (None) runs Credence's
    oracle "none" instead, or flips "none"'s answers."""
    for role in ("leaf", "spine"):
        ph = "{model_" + role + "}"
        if ph not in override:
            continue
        if models.get(role) is None:
            override = (override.replace(f'oracle = "forest", model = "{ph}"', 'oracle = "none"')
                        .replace(f'flip_base = "forest", model = "{ph}"', 'flip_base = "none"'))
        else:
            override = override.replace(ph, models[role])
    return override


def write_index(out, quick, figures):
    """Records the figures' cells in OUT/index.json beside the figures an earlier invocation
    recorded (running one figure must not make the others' reports empty)."""
    path = os.path.join(out, "index.json")
    index = {"quick": quick, "figures": {}}
    if os.path.exists(path):
        with open(path) as fh:
            old = json.load(fh)
        if old.get("quick") == quick:
            index["figures"] = old.get("figures", {})
    index["figures"].update(figures)
    with open(path + ".tmp", "w") as fh:
        json.dump(index, fh, indent=1)
    os.replace(path + ".tmp", path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("sim", help="sharebuf-sim")
    ap.add_argument("replay", help="sharebuf-replay")
    ap.add_argument("figures", metavar="FIGURE[,FIGURE...]")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--mpi-sim", help="sharebuf-sim-mpi, for the figures that name ranks")
    a = ap.parse_args(argv)
    out, sim, replay, figures = a.out, a.sim, a.replay, a.figures.split(",")
    jobs, quick = a.jobs, a.quick
    for f in figures:
        if f not in FIGURES:
            raise SystemExit(f"e8: unknown figure '{f}' (known: {', '.join(FIGURES)})")
    os.makedirs(out, exist_ok=True)
    models = {}
    if any(f.startswith("credence") for f in figures):
        models = train_credence(out, sim, replay, quick)
    # Every figure's cells, for the report: figure -> [(policy, value, seed, run dir)]; a run two
    # figures share is made once.
    todo, index = {}, {}
    for f in figures:
        scenario = FIGURES[f]["scenario"]
        for policy, value, seed, overrides in cells(f, quick):
            overrides = [with_models(o, models) for o in overrides]
            key = run_key(scenario, overrides)
            todo.setdefault(key, (f, policy, value, seed, scenario, overrides))
            index.setdefault(f, []).append([policy, value, seed, os.path.join("runs", key)])
    write_index(out, quick, index)
    lock = threading.Lock()
    done = [0]
    started = time.time()

    def ranks(key):
        return FIGURES[todo[key][0]].get("ranks", 1) if a.mpi_sim else 1

    def work(key):
        f, policy, value, seed, scenario, overrides = todo[key]
        n = ranks(key)
        # mpirun refuses root without these; --oversubscribe: a busy machine may count fewer cores.
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        binary = sim if n == 1 else ["mpirun", "--oversubscribe", "-np", str(n), a.mpi_sim]
        wall = run_one(binary, scenario, overrides, os.path.join(out, "runs", key))
        with lock:
            done[0] += 1
            elapsed = time.time() - started
            left = elapsed / done[0] * (len(todo) - done[0])
            print(f"e8: {done[0]}/{len(todo)} {f} {policy} {FIGURES[f]['axis'][0]} {value} "
                  f"seed {seed}: {wall:.0f} s on {n} rank(s) (about {left / 60:.0f} min left)",
                  flush=True)

    # One-process runs side by side, then the multi-rank ones one at a time (they take the cores).
    for group in (1, 2):
        keys = [k for k in todo if (ranks(k) == 1) == (group == 1)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs if group == 1 else 1) as pool:
            for fut in [pool.submit(work, k) for k in keys]:
                fut.result()
    print(f"e8: {len(todo)} runs in {(time.time() - started) / 60:.1f} min", flush=True)


if __name__ == "__main__":
    main()
