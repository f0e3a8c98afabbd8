#!/usr/bin/python3
"""A copy of a P4 twin whose tables hold sharebuf-p4tables' entries as `const entries`.

p4testgen chooses a table's entries itself unless the table is constant; a path through the
program is only comparable with the software when it runs on the entries the software
generates. So: copy the program and its include/ folder, and write each generated table's
entries (and a changed default action) into the table's declaration, in priority order (the
generator's lower priority number wins, as a const entry list's first match does).

An instance name (pipe.DtIngress.log2_rem.log2) is resolved through the declarations: the
control DtIngress declares `SbLog2() log2_rem;`, whose control declares `table log2`. Every
instance of a control shares its declaration, so all of them must carry the same entries (the
logarithm tables do); a difference is an error.

    const_entries.py PROGRAM.p4 TABLES.json OUT_DIR [DOMAIN.json]
        -> OUT_DIR/PROGRAM.p4, OUT_DIR/include/

DOMAIN.json narrows what p4testgen explores, for tables whose symbolic key would otherwise
branch over thousands of entries (a 6399-entry ternary log2 table keyed on a register's value
took p4testgen over 10 minutes without one path): {"CONTROL.TABLE": {"values": [...],
"assume": KEY}}. The table keeps the entries some listed value matches (the others cannot match
within the domain, so paths inside it are the program's paths on all its entries), and with
"assume" the control's apply block starts with testgen_assume(KEY == v1 || ...): p4testgen
explores only inputs in the domain. {"PARSER_OR_CONTROL": [{"after": STATEMENT, "assume": EXPR}]}
puts testgen_assume(EXPR) right after STATEMENT there (a parser state's extract: the packets
p4testgen may send); {"after": TEXT, "insert": CODE} puts CODE there as it is (protean.p4's
domain reads registers a second time to state what a probe leaves in them together: p4testgen
keeps one value per register, and a copy for p4testgen need not fit Tofino's one access per
pass).
"""
import argparse
import json
import pathlib
import re
import shutil


def block_end(text, open_brace):
    """Index of the brace closing the one at `open_brace`."""
    depth = 0
    for i in range(open_brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced braces")


class Sources:
    def __init__(self, files):
        self.files = files  # path -> text

    def control(self, name):
        """(path, body start, body end) of `control NAME(...) { ... }`."""
        pattern = re.compile(r"\b(?:control|parser)\s+" + re.escape(name) + r"\s*\(")
        for path, text in self.files.items():
            m = pattern.search(text)
            if m:
                start = text.index("{", m.end())
                return path, start, block_end(text, start)
        raise KeyError(f"no control {name}")

    def instance_type(self, control, instance):
        path, start, end = self.control(control)
        body = self.files[path][start:end]
        m = re.search(r"\b(\w+)\s*\([^;{}]*\)\s+" + re.escape(instance) + r"\s*;", body)
        if not m:
            raise KeyError(f"{control} declares no instance {instance}")
        return m.group(1)

    def table(self, control, table):
        """(path, start of `table NAME {`, its closing brace)."""
        path, start, end = self.control(control)
        text = self.files[path]
        m = re.compile(r"\btable\s+" + re.escape(table) + r"\s*\{").search(text, start, end)
        if not m:
            raise KeyError(f"control {control} declares no table {table}")
        brace = m.end() - 1
        return path, m.start(), block_end(text, brace)

    def action_params(self, control, action):
        path, start, end = self.control(control)
        text = self.files[path]
        m = re.compile(r"\baction\s+" + re.escape(action) + r"\s*\(([^)]*)\)").search(text, start, end)
        if not m:
            raise KeyError(f"control {control} declares no action {action}")
        params = [p.strip() for p in m.group(1).split(",") if p.strip()]
        return [(p.split()[-2], p.split()[-1]) for p in params]  # (type, name)


def number(v):
    return int(v, 0) if isinstance(v, str) else int(v)


def key_fields(decl):
    m = re.search(r"key\s*=\s*\{(.*?)\}", decl, re.S)
    fields = []
    if not m:  # a keyless table: its default action only
        return fields
    for part in m.group(1).split(";"):
        part = part.strip()
        if part:
            expr, kind = [s.strip() for s in part.rsplit(":", 1)]
            fields.append((expr, kind))
    return fields


def json_key_name(expr):
    return re.sub(r"\.isValid\(\)$", ".$valid", expr)


def key_text(expr, kind, match):
    m = match.get(json_key_name(expr))
    if m is None:
        return "_"
    is_bool = expr.endswith("isValid()")
    if kind == "exact":
        v = number(m["exact"])
        return ("true" if v else "false") if is_bool else str(v)
    if kind == "ternary":
        value, mask = number(m["value"]), number(m["mask"])
        if mask == 0:
            return "_"
        if is_bool:
            return "true" if value else "false"
        return f"{value & mask} &&& {mask}"
    if kind == "range":
        return f"{number(m['low'])} .. {number(m['high'])}"
    raise ValueError(f"match kind {kind} of {expr}")


def action_text(sources, control, action, data):
    short = action.split(".")[-1]
    if not data:  # also actions a macro declares (fb.p4's shift_right_K), which have no parameters
        return f"{short}()"
    args = []
    for ptype, pname in sources.action_params(control, short):
        v = data[pname]
        args.append(("true" if v else "false") if ptype == "bool" else str(number(v)))
    return f"{short}({', '.join(args)})"


def matches(kind, m, v):
    if kind == "exact":
        return number(m["exact"]) == v
    if kind == "ternary":
        return (v & number(m["mask"])) == (number(m["value"]) & number(m["mask"]))
    if kind == "range":
        return number(m["low"]) <= v <= number(m["high"])
    raise ValueError(kind)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("program", type=pathlib.Path, help="the P4 twin (its include/ beside it)")
    ap.add_argument("tables", type=pathlib.Path, help="the JSON sharebuf-p4tables wrote for it")
    ap.add_argument("out", type=pathlib.Path, help="where the copy goes")
    ap.add_argument("domain", type=pathlib.Path, nargs="?", help="DOMAIN.json (above)")
    a = ap.parse_args()
    program, tables_json, out = a.program, a.tables, a.out
    domain = json.loads(a.domain.read_text()) if a.domain else {}
    tables = json.loads(tables_json.read_text())
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(program.parent / "include", out / "include", dirs_exist_ok=True)
    shutil.copy(program, out / program.name)
    files = {p: p.read_text() for p in [out / program.name, *sorted((out / "include").glob("*.p4"))]}
    sources = Sources(files)

    edits = {}  # (path, table start) -> (table end, text)
    for t in tables["tables"]:
        parts = t["table"].split(".")[1:]  # pipe.<control>.<instance>...<table>
        control = parts[0]
        for inst in parts[1:-1]:
            control = sources.instance_type(control, inst)
        path, start, end = sources.table(control, parts[-1])
        decl = files[path][start:end]
        keys = key_fields(decl)
        entries = sorted(t.get("entries", []), key=lambda e: e.get("priority", 0))
        narrow = domain.get(f"{control}.{parts[-1]}")
        if narrow:
            (expr, kind), = keys
            entries = [e for e in entries
                       if any(matches(kind, e["match"][json_key_name(expr)], v & 0xFFFFFFFF)
                              for v in narrow["values"])]
        lines = []
        for e in entries:
            k = [key_text(expr, kind, e["match"]) for expr, kind in keys]
            ktext = k[0] if len(k) == 1 else "(" + ", ".join(k) + ")"
            lines.append(f"        {ktext} : {action_text(sources, control, e['action'], e.get('data', {}))};")
        text = "    const entries = {\n" + "\n".join(lines) + "\n    }\n" if lines else ""
        if "default_action" in t:
            d = t["default_action"]
            act = action_text(sources, control, d["action"], d.get("data", {}))
            text += f"    default_action = {act};\n"
        if (path, start) in edits and edits[(path, start)][1] != text:
            raise SystemExit(f"{t['table']}: another instance of {control}.{parts[-1]} has other entries")
        edits[(path, start)] = (end, text)

    assumes = {}  # (path, control body start) -> statement
    for name, narrow in domain.items():
        if isinstance(narrow, list):  # {"PARSER_OR_CONTROL": [{"after": TEXT, "assume"|"insert": ...}]}
            path, start, end = sources.control(name)
            for a in narrow:
                at = files[path].index(a["after"], start, end) + len(a["after"])
                code = a.get("insert") or f"testgen_assume({a['assume']});"
                assumes[(path, at)] = "\n        " + code
        elif "assume" in narrow:
            path, start, end = sources.control(name.split(".")[0])
            apply = files[path].rindex("\n    apply {", start, end) + len("\n    apply {")
            cond = " || ".join(f"{narrow['assume']} == {v}" for v in narrow["values"])
            assumes[(path, apply)] = f"\n        testgen_assume({cond});"
    for path in files:
        text = files[path]
        ops = [(start, end, add) for (p, start), (end, add) in edits.items() if p == path]
        ops += [(at, None, stmt) for (p, at), stmt in assumes.items() if p == path]
        for start, end, add in sorted(ops, key=lambda op: -op[0]):  # from the end: offsets hold
            if end is None:
                text = text[:start] + add + text[start:]
                continue
            decl = text[start:end]
            if "default_action" in add:  # the generated default replaces the declared one
                decl = re.sub(r"\n\s*default_action\s*=[^;]*;", "", decl)
            text = text[:start] + decl + "\n" + add + text[end:]
        if assumes and path == out / program.name:
            text = "extern void testgen_assume(in bool assumption);\n" + text
        path.write_text(text)


if __name__ == "__main__":
    main()
