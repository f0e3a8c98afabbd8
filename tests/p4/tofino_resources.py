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


def report(out_dir):
    found = glob.glob(os.path.join(out_dir, "*", "logs", "resources.json"))
    if not found:
        raise SystemExit("%s: no */logs/resources.json (compile with --verbose 1)" % out_dir)
    with open(found[0]) as f:
        data = json.load(f)
    stages = [stage_use(s) for s in data["resources"]["mau"]["mau_stages"]]
    used = [s for s in stages if any(s[k] for k in BUDGET)]
    largest = {k: max((s[k] for s in stages), default=0) for k in BUDGET}
    return {"stages": len(used), "largest": largest, "per_stage": stages}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the directory given to bf-p4c -o")
    ap.add_argument("--max-stages", type=int, default=12)
    ap.add_argument("--label", default="")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    r = report(args.out)
    if args.json:
        print(json.dumps(r))
    else:
        big = r["largest"]
        print("%s %s: %d stages; largest per stage: SRAM %d/%d, TCAM %d/%d, stateful ALU %d/%d, "
              "hash distribution %d/%d, tables %d/%d"
              % ("ok  " if r["stages"] <= args.max_stages else "FAIL", args.label or args.out,
                 r["stages"], big["sram"], BUDGET["sram"], big["tcam"], BUDGET["tcam"],
                 big["salu"], BUDGET["salu"], big["hash_dist"], BUDGET["hash_dist"],
                 big["tables"], BUDGET["tables"]))
    return 0 if r["stages"] <= args.max_stages else 1


if __name__ == "__main__":
    sys.exit(main())
