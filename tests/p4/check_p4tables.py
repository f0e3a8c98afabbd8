"""The entries sharebuf-p4tables generates name what the P4 program declares: every table (by its
P4Info name, 'pipe.' dropped), every match field, every action of a table and every action
parameter, as p4test's P4Info of the compiled program lists them; meters and registers the
entries (and start values) name are declared in the program's source (P4Info leaves TNA's externs out).

usage: check_p4tables.py PROGRAM.p4info.txtpb TABLES.json PROGRAM.p4 [INCLUDE.p4 ...]
Prints one line per problem and exits 1 if there is any; prints a summary line otherwise.
"""
import argparse
import json
import re
import sys


def blocks(text, kind):
    """The top-level `kind { ... }` blocks of a protobuf text file, as strings."""
    out, i = [], 0
    pattern = re.compile(r"^%s \{" % kind, re.M)
    while True:
        m = pattern.search(text, i)
        if not m:
            return out
        depth, j = 0, m.end() - 1
        while True:
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        out.append(text[m.end():j])
        i = j


def first(block, field):
    m = re.search(r'%s: "?([^"\n]+)"?' % field, block)
    return m.group(1) if m else None


def p4info(path):
    text = open(path).read()
    actions = {}
    for b in blocks(text, "actions"):
        pre = blocks(b.replace("\n  ", "\n"), "preamble")
        name, ident = first(pre[0], "name"), first(pre[0], "id")
        params = [first(p, "name") for p in blocks(b.replace("\n  ", "\n"), "params")]
        actions[ident] = (name, params)
    tables = {}
    for b in blocks(text, "tables"):
        body = b.replace("\n  ", "\n")
        name = first(blocks(body, "preamble")[0], "name")
        fields = [first(f, "name") for f in blocks(body, "match_fields")]
        refs = [first(r, "id") for r in blocks(body, "action_refs")]
        tables[name] = (fields, {actions[r][0]: actions[r][1] for r in refs if r in actions})
    return tables


def check(info_path, tables_path, sources):
    tables = p4info(info_path)
    gen = json.load(open(tables_path))
    source = "\n".join(open(s).read() for s in sources)
    problems, entries = [], 0

    def check_action(tname, action, data, where):
        declared = tables[tname][1]
        if action not in declared:
            problems.append(f"{where}: action {action} is not one of {tname}'s "
                            f"({', '.join(sorted(declared))})")
        elif sorted(data) != sorted(declared[action]):
            problems.append(f"{where}: {action} takes {declared[action]}, the entry gives "
                            f"{sorted(data)}")

    for t in gen["tables"]:
        name = t["table"].removeprefix("pipe.")
        if name not in tables:
            problems.append(f"table {name}: not in the program (P4Info)")
            continue
        fields = [f.replace("$valid$", "$valid") for f in tables[name][0]]
        for i, e in enumerate(t["entries"]):
            entries += 1
            where = f"{name} entry {i}"
            if sorted(e["match"]) != sorted(fields):
                problems.append(f"{where}: match {sorted(e['match'])}, the table's key is "
                                f"{sorted(fields)}")
            check_action(name, e["action"], e["data"], where)
            if len(problems) > 20:
                break
        if "default_action" in t:
            d = t["default_action"]
            check_action(name, d["action"], d["data"], f"{name} default action")
    for m in gen.get("meters", []):
        inst = m["meter"].split(".")[-1]
        if not re.search(r"\bMeter<.*>\(.*\)\s+%s;" % re.escape(inst), source):
            problems.append(f"meter {m['meter']}: not declared in the program")
    for r in gen.get("registers", []):
        inst = r["register"].split(".")[-1]
        size = re.search(r"\bRegister<.+?>\(\s*(\w+)\s*,[^)]*\)\s+%s;" % re.escape(inst), source)
        if not size:
            problems.append(f"register {r['register']}: not declared in the program")
        elif size.group(1).isdigit() and r["first"] + r["count"] > int(size.group(1)):
            problems.append(f"register {r['register']}: {r['count']} values from {r['first']} "
                            f"do not fit its {size.group(1)}")
    for p in problems[:20]:
        print("FAIL", p)
    if not problems:
        print(f"ok   {gen['program']}: {len(gen['tables'])} tables, {entries} entries, "
              f"{len(gen.get('meters', []))} meter settings and "
              f"{len(gen.get('registers', []))} register start values name what the program "
              f"declares")
    return not problems


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("p4info", metavar="PROGRAM.p4info.txtpb")
    ap.add_argument("tables", metavar="TABLES.json")
    ap.add_argument("sources", nargs="+", metavar="PROGRAM.p4 [INCLUDE.p4 ...]")
    a = ap.parse_args()
    sys.exit(0 if check(a.p4info, a.tables, a.sources) else 1)
