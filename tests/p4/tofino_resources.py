"""What a Tofino compile used, from the compiler's report (OUT/<pipe>/logs/resources.json): the
match-action stages, and per stage the SRAM and TCAM blocks, stateful ALUs, hash distribution
units and logical tables, with the largest of each over the stages, against Tofino 1's per-stage
budget. Exit 1 if more than --max-stages stages are used.

usage: tofino_resources.py [--max-stages N] [--label TEXT] [--json] OUT
"""
import argparse
import glob
import json
import os
import sys

# Tofino 1, per match-action stage.
BUDGET = {"sram": 80, "tcam": 24, "salu": 4, "hash_dist": 6, "tables": 16}


def stage_use(stage):
    def n(*path):
        node = stage
        for p in path:
            node = node.get(p, {}) if isinstance(node, dict) else {}
        return len(node) if isinstance(node, list) else 0
    return {
        "stage": stage.get("stage_number"),
        "sram": n("rams", "srams"),
        "tcam": n("tcams", "tcams"),
        "salu": n("meter_alus", "meters"),
        "hash_dist": n("hash_distribution_units", "units"),
        "tables": n("logical_tables", "ids"),
    }


def gress_of(name, gress_by_table):
    if name in gress_by_table:
        return gress_by_table[name]
    first = name.split(".")[0]
    return "egress" if first.endswith("Egress") else "ingress" if first.endswith("Ingress") else None


def gress_use(data, mau):
    """Per gress: the stages its tables sit in and the SRAM, TCAM blocks and stateful ALUs its
    tables and registers take (by each memory's `used_by`). Ingress and egress share every
    stage's memories, so what is left is the pipeline's, not a gress's."""
    gress_by_table = {t["name"]: t["gress"] for t in mau["tables"]}
    out = {g: {"stages": set(), "sram": 0, "tcam": 0, "salu": 0} for g in ("ingress", "egress")}
    for t in mau["tables"]:
        if t["gress"] in out:
            out[t["gress"]]["stages"].update(
                a["stage_number"] for a in t["stage_allocation"] if a["stage_number"] >= 0)
    for stage in data["resources"]["mau"]["mau_stages"]:
        for kind, path in (("sram", ("rams", "srams")), ("tcam", ("tcams", "tcams")),
                           ("salu", ("meter_alus", "meters"))):
            for unit in stage.get(path[0], {}).get(path[1], []):
                owners = {gress_of(u["used_by"], gress_by_table) for u in unit.get("usages", [])}
                for g in owners & set(out):
                    out[g][kind] += 1 / len(owners & set(out))
    for g in out.values():
        g["stages"] = len(g["stages"])
        for k in ("sram", "tcam", "salu"):
            g[k] = round(g[k])
    return out


def report(out_dir):
    found = glob.glob(os.path.join(out_dir, "*", "logs", "resources.json"))
    if not found:
        raise SystemExit("%s: no */logs/resources.json (compile with --verbose 1)" % out_dir)
    with open(found[0]) as f:
        data = json.load(f)
    stages = [stage_use(s) for s in data["resources"]["mau"]["mau_stages"]]
    used = [s for s in stages if any(s[k] for k in BUDGET)]
    largest = {k: max((s[k] for s in stages), default=0) for k in BUDGET}
    total = {k: sum(s[k] for s in stages) for k in ("sram", "tcam", "salu")}
    r = {"stages": len(used), "largest": largest, "per_stage": stages, "total": total}
    mau = glob.glob(os.path.join(os.path.dirname(found[0]), "mau.json"))
    if mau:
        with open(mau[0]) as f:
            r["gress"] = gress_use(data, json.load(f))
    return r


def markdown_row(name, r, n):
    """| program | stages (ingress, egress) | largest per stage: SRAM, TCAM, stateful ALU, hash
    distribution, tables | ingress: SRAM, TCAM, ALU | egress: ... | left in the pipeline |"""
    big, g, tot = r["largest"], r.get("gress", {}), r["total"]
    gi, ge = g.get("ingress", {}), g.get("egress", {})

    def gress(u):
        return "%d / %d / %d" % (u.get("sram", 0), u.get("tcam", 0), u.get("salu", 0))
    return ("| `%s` | %d (%s, %s) | %d/%d, %d/%d, %d/%d, %d/%d, %d/%d | %s | %s | %d / %d / %d |"
            % (name, r["stages"], gi.get("stages", "?"), ge.get("stages", "?"),
               big["sram"], BUDGET["sram"], big["tcam"], BUDGET["tcam"], big["salu"], BUDGET["salu"],
               big["hash_dist"], BUDGET["hash_dist"], big["tables"], BUDGET["tables"],
               gress(gi), gress(ge), BUDGET["sram"] * n - tot["sram"],
               BUDGET["tcam"] * n - tot["tcam"], BUDGET["salu"] * n - tot["salu"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the directory given to bf-p4c -o")
    ap.add_argument("--max-stages", type=int, default=12)
    ap.add_argument("--label", default="")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--markdown-row", action="store_true",
                    help="print p4/README.md's resources row for the program (--label: its name)")
    args = ap.parse_args()
    r = report(args.out)
    if args.json:
        print(json.dumps(r))
    elif args.markdown_row:
        print(markdown_row(args.label, r, args.max_stages))
    else:
        big = r["largest"]
        print("%s %s: %d stages; largest per stage: SRAM %d/%d, TCAM %d/%d, stateful ALU %d/%d, "
              "hash distribution %d/%d, tables %d/%d"
              % ("ok  " if r["stages"] <= args.max_stages else "FAIL", args.label or args.out,
                 r["stages"], big["sram"], BUDGET["sram"], big["tcam"], BUDGET["tcam"],
                 big["salu"], BUDGET["salu"], big["hash_dist"], BUDGET["hash_dist"],
                 big["tables"], BUDGET["tables"]))
        n = args.max_stages
        tot = r["total"]
        for g, u in r.get("gress", {}).items():
            print("     %-7s tables in %2d of %d stages (a table that needs its result: %d left), "
                  "SRAM %d, TCAM %d, stateful ALU %d"
                  % (g, u["stages"], n, n - u["stages"], u["sram"], u["tcam"], u["salu"]))
        print("     left in the pipeline (both gresses share each stage): SRAM %d of %d, TCAM %d of %d,"
              " stateful ALU %d of %d"
              % (BUDGET["sram"] * n - tot["sram"], BUDGET["sram"] * n, BUDGET["tcam"] * n - tot["tcam"],
                 BUDGET["tcam"] * n, BUDGET["salu"] * n - tot["salu"], BUDGET["salu"] * n))
    return 0 if r["stages"] <= args.max_stages else 1


if __name__ == "__main__":
    sys.exit(main())
