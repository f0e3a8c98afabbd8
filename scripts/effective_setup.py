#!/usr/bin/python3
"""The setup a results page quotes, read from the effective configurations the runs wrote beside
their results — so a page states what ran, not what its prose remembers.

Every run writes one: the live experiments keep `sharebufctl config` as effective*.toml
(scripts/testbed.sh tb_keep_effective), sharebuf-replay writes --effective-config (or
"effective_config" in its JSON), sharebuf-sim writes scenario.toml with --out. setup_table(dir)
finds the effective*.toml files in a results folder and its run folders (one level down) and
renders, per file, the buffer, the policy and its parameters, the ports, the classes and
trimming, as a Markdown table.

usage: effective_setup.py DIR   (prints that table)
"""
import argparse
import glob
import os
import sys
import tomllib


def _size(v):
    return f"{v} cells" if isinstance(v, int) else str(v)


def _rate(v):
    if isinstance(v, int):
        if v == 0:
            return "unshaped"
        for unit, div in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
            if v >= div:
                return f"{v / div:g} {unit}"
        return f"{v} bit/s"
    return str(v)


def _params(table, skip=("name",)):
    return ", ".join(f"{k} = {v}" for k, v in sorted(table.items()) if k not in skip)


def summary(cfg):
    """One dict of short strings (buffer, policy, ports, classes, trimming) for a configuration."""
    buf = cfg.get("buffer", {})
    buffer = _size(buf.get("size", "?"))
    if "cell_bytes" in buf:
        buffer += f" of {buf['cell_bytes']} B"
    if buf.get("view", "exact") != "exact":
        buffer += f"; view {buf['view']} every {buf.get('probe_interval', '?')}"
    pol = cfg.get("policy", {})
    policy = pol.get("name", "dt")
    if _params(pol):
        policy += f" ({_params(pol)})"
    groups = {}
    for p in cfg.get("ports", []):
        key = (_rate(p.get("rate", 0)), p.get("queues", 1), p.get("scheduler", "rr"))
        groups.setdefault(key, []).append(p.get("interface", "?"))
    ports = "; ".join(f"{','.join(names)}: {rate}, {q} queue{'s' if q != 1 else ''}"
                      f"{' ' + sched if q != 1 else ''}" for (rate, q, sched), names in groups.items())
    classes = []
    trims = False
    for c in cfg.get("classes", []):
        extra = [f"{k} {c[k]}" for k in ("alpha", "ecn_threshold", "role") if k in c]
        if c.get("overflow", "drop") != "drop":
            extra.append(c["overflow"])
            trims = True
        classes.append(f"{c.get('name', '?')} → q{c.get('queue', 0)}" +
                       (f" ({', '.join(extra)})" if extra else ""))
    trim = cfg.get("trimming", {})
    trimming = (f"{trim.get('mode', 'ideal')}, trim_size {trim.get('trim_size', 128)}, "
                f"header_reserve {trim.get('header_reserve', 8)}") if trims else "—"
    return {"buffer": buffer, "policy": policy, "ports": ports or "—",
            "classes": "; ".join(classes) or "—", "trimming": trimming}


def effective_files(out, run_folders=True):
    """The effective*.toml files of a results folder and (run_folders) of its run folders, sorted."""
    return sorted(glob.glob(os.path.join(out, "effective*.toml")) +
                  (glob.glob(os.path.join(out, "*", "effective*.toml")) if run_folders else []))


def setup_table(out, run_folders=True):
    """A Markdown table of every effective configuration under out; '' when there is none.
    run_folders=False: only out's own, for a results folder whose subfolders hold other
    experiments' runs (E3's e4/, the replay of its recorded trace)."""
    files = effective_files(out, run_folders)
    if not files:
        return ""
    rows = ["Setup, quoted from each run's effective configuration (`effective*.toml` beside its "
            "results):", "",
            "| run | buffer | policy | ports | classes | trimming |", "|---|---|---|---|---|---|"]
    for f in files:
        with open(f, "rb") as fh:
            s = summary(tomllib.load(fh))
        run = os.path.relpath(f, out)
        rows.append(f"| {run} | {s['buffer']} | {s['policy']} | {s['ports']} | {s['classes']} | "
                    f"{s['trimming']} |".replace("|  |", "| — |"))
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="a results folder")
    a = ap.parse_args(argv)
    table = setup_table(a.dir)
    if not table:
        print(f"effective_setup.py: no effective*.toml under {a.dir}", file=sys.stderr)
        return 1
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
