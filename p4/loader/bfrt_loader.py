#!/usr/bin/env python3
"""Install sharebuf-p4tables' JSON on a Tofino switch through the SDE's bfrt_python.

Two uses of this one file:

  bfrt_loader.py TABLES.json -o load.py      (python3, here) writes load.py: this file with the
                                              JSON embedded, for `bfshell -b load.py` on the
                                              switch (bfrt_python runs the script inside
                                              bf_switchd, which takes no arguments, hence the
                                              embedding).
  bfrt_loader.py TABLES.json --plan           prints the operations, one per line.
  bfrt_loader.py TABLES.json --check BF-RT.json
                                              checks every program table, action, key and data
                                              field, register and meter the JSON names against
                                              the compiler's bf-rt.json (exit 1 on a mismatch).

What it installs, in order: the program's table entries and default actions; register start
values; meter rates; the ports' shaped rates and queue counts (tf1.tm.port); mirror sessions
(mirror.cfg: truncation, queue, multicast); multicast groups (pre.node, pre.mgid); deflect-on-drop
destinations (tf1.tm.port.cfg); last the packet generator (tf1.pktgen), so that no probe runs
before the registers and tables it feeds are written.

bfrt_python names: tables and registers by their BF-RT path under bfrt.<program>; entries with
add_with_<action>(**fields), ternary masks as <field>_mask, ranges as <field>_start/_end,
priorities as MATCH_PRIORITY, the pipe a call writes as pipe= (the packet generator's buffer and
application: its port's pipe only; everything else: every pipe). A field goes by its last name component (dst_addr) unless two of
an entry's fields share it, then by its full name with '.' and '$' as '_' (bfrt_python's own
rule); where the method's signature can be read at run time the name it declares wins. This
has never run against an SDE (p4/README.md): the names follow the SDE's documentation and
public bfrt_python scripts, and --check verifies the program's names against bf-rt.json.
"""
import argparse
import json
import re
import sys

# ----------------------------------------------------------------------------------------------
# The plan: a list of operations, each (path under bfrt, method, kwargs, what), computed from the
# JSON alone so that it can be tested without an SDE.


PKTGEN_HEADER_BYTES = 6  # what Tofino's packet generator puts in front of its buffer's bytes
DEV_PORTS_PER_PIPE = 128  # Tofino 1: dev_port = pipe * 128 + the port's number in its pipe


def _int(v):
    """JSON values are numbers or "0x..." strings (48-bit MACs, masks)."""
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        return int(v, 0)
    return v


def _action_value(field, v):
    """An action parameter as BF-RT takes it: unsigned bytes. Every signed parameter of the
    programs is an int<32> (dt.p4 set_alpha, protean.p4 set_params and set_rate, log_arith.p4
    set_value), so a negative value goes as its 32-bit two's complement."""
    v = _int(v)
    if isinstance(v, bool) or v >= 0:
        return v
    if v < -(1 << 31):
        raise ValueError("action parameter %s = %d does not fit an int<32>" % (field, v))
    return v & 0xFFFFFFFF


def _short(name):
    return name.split(".")[-1]


def _full(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _field_names(names):
    """bfrt_python's argument name for each BF-RT field name of one call."""
    shorts = {}
    for n in names:
        shorts.setdefault(_short(n), []).append(n)
    out = {}
    for n in names:
        s = _short(n)
        out[n] = s if len(shorts[s]) == 1 and re.fullmatch(r"[A-Za-z_]\w*", s) else _full(n)
    return out


def _entry_kwargs(entry):
    fields = list(entry.get("match", {})) + list(entry.get("data", {}))
    name = _field_names(fields)
    kw = {}
    for field, m in entry.get("match", {}).items():
        if "exact" in m:
            kw[name[field]] = _int(m["exact"])
        elif "mask" in m:
            kw[name[field]] = _int(m["value"])
            kw[name[field] + "_mask"] = _int(m["mask"])
        elif "low" in m:
            kw[name[field] + "_start"] = _int(m["low"])
            kw[name[field] + "_end"] = _int(m["high"])
        else:
            raise ValueError("match on %s: neither exact, ternary nor range: %r" % (field, m))
    for field, v in entry.get("data", {}).items():
        kw[name[field]] = _action_value(field, v)
    if "priority" in entry:
        kw["MATCH_PRIORITY"] = entry["priority"]
    return kw


def _path(program, bfrt_name):
    """'pipe.DtIngress.fwd.forward' -> [program, 'pipe', 'DtIngress', 'fwd', 'forward']."""
    return [program] + bfrt_name.split(".")


def _kbits(nbytes):
    return max(1, (8 * nbytes + 999) // 1000)


def plan(doc):
    prog = doc["program"]
    ops = []

    def op(path, method, kwargs, what):
        ops.append({"path": path, "method": method, "kwargs": kwargs, "what": what})

    for t in doc.get("tables", []):
        path = _path(prog, t["table"])
        op(path, "clear", {}, "empty %s" % t["table"])
        for e in t["entries"]:
            op(path, "add_with_" + _short(e["action"]), _entry_kwargs(e), t["table"])
        d = t.get("default_action")
        if d:
            op(path, "set_default_with_" + _short(d["action"]), _entry_kwargs({"data": d["data"]}),
               "default of %s" % t["table"])
    for r in doc.get("registers", []):
        for i in range(r["first"], r["first"] + r["count"]):
            op(_path(prog, r["register"]), "mod", {"REGISTER_INDEX": i, "f1": _int(r["value"])},
               "start value of %s" % r["register"])
    for m in doc.get("meters", []):
        op(_path(prog, m["meter"]), "mod",
           {"METER_INDEX": m["index"], "METER_SPEC_CIR_KBPS": m["cir_kbps"],
            "METER_SPEC_PIR_KBPS": m["pir_kbps"], "METER_SPEC_CBS_KBITS": _kbits(m["cbs_bytes"]),
            "METER_SPEC_PBS_KBITS": _kbits(m["pbs_bytes"])}, "rates of %s" % m["meter"])
    for p in doc.get("ports", []):
        op(["tf1", "tm", "port", "cfg"], "mod",
           {"dev_port": p["dev_port"], "port_queues_count": p["queues"]},
           "%s's queues" % p["name"])
        if p.get("rate_bps"):
            op(["tf1", "tm", "port", "sched_shaping"], "mod",
               {"dev_port": p["dev_port"], "unit": "BPS", "provisioning": "MIN_ERROR",
                "max_rate": p["rate_bps"] // 1000, "max_burst_size": 9216},
               "%s shaped to its rate" % p["name"])
            op(["tf1", "tm", "port", "sched_cfg"], "mod",
               {"dev_port": p["dev_port"], "max_rate_enable": True}, "%s's shaper on" % p["name"])
    for s in doc.get("mirror_sessions", []):
        kw = {"sid": s["id"], "direction": s["direction"].upper(), "session_enable": True}
        if "multicast_group" in s:
            kw.update(mcast_grp_a=s["multicast_group"], mcast_grp_a_valid=True)
        else:
            kw.update(ucast_egress_port=s["egress_port"], ucast_egress_port_valid=True)
        if "queue" in s:
            kw["egress_port_queue"] = s["queue"]
        if "max_pkt_len" in s:
            kw["max_pkt_len"] = s["max_pkt_len"]
        op(["mirror", "cfg"], "add_with_normal", kw, "mirror session %d" % s["id"])
    for g in doc.get("multicast_groups", []):
        node = g["id"]  # one node per group, numbered as the group
        op(["pre", "node"], "add",
           {"MULTICAST_NODE_ID": node, "MULTICAST_RID": 0, "MULTICAST_LAG_ID": [],
            "DEV_PORT": list(g["ports"])}, "multicast node of group %d" % g["id"])
        op(["pre", "mgid"], "add",
           {"MGID": g["id"], "MULTICAST_NODE_ID": [node], "MULTICAST_NODE_L1_XID_VALID": [False],
            "MULTICAST_NODE_L1_XID": [0]}, "multicast group %d" % g["id"])
    for d in doc.get("tm", {}).get("deflect_on_drop", []):
        op(["tf1", "tm", "port", "cfg"], "mod",
           {"dev_port": d["deflect_on_drop_port"], "mirror_drop_destination": True,
            "mirror_drop_pg_queue": 0}, "pipe %d's deflect-on-drop destination" % d["pipe"])
    g = doc.get("pktgen")
    if g:
        packet = list(bytes.fromhex(g["packet_hex"]))
        if len(packet) != g["packet_bytes"]:
            raise ValueError("pktgen: packet_hex holds %d bytes, packet_bytes says %d"
                             % (len(packet), g["packet_bytes"]))
        op(["tf1", "pktgen", "port_cfg"], "mod", {"dev_port": g["src_port"], "pktgen_enable": True},
           "packet generator on port %d" % g["src_port"])
        # Each pipe has its own generator (buffer and applications); bfrt_python writes every
        # pipe unless a call names one, and every pipe's application would then send probes. The
        # buffer and the application go to the pipe of the generator's port only.
        pipe = g["src_port"] // DEV_PORTS_PER_PIPE
        # The generator prepends its own 6-byte header to what its buffer holds (Intel's
        # tna_pktgen test writes p[6:] and pkt_len - 6): packet_hex is the packet as ingress
        # parses it, so the buffer gets the bytes after the first 6.
        body = packet[PKTGEN_HEADER_BYTES:]
        op(["tf1", "pktgen", "pkt_buffer"], "mod",
           {"pkt_buffer_offset": 0, "pkt_buffer_size": len(body), "buffer": body, "pipe": pipe},
           "the generated packet, after the generator's header")
        # The generator counts batches and packets per batch from 0.
        op(["tf1", "pktgen", "app_cfg"], "add_with_trigger_timer_periodic",
           {"app_id": g["app_id"], "app_enable": True, "timer_nanosec": g["timer_ns"],
            "pkt_len": len(body), "pkt_buffer_offset": 0, "pipe_local_source_port":
            g["src_port"] % DEV_PORTS_PER_PIPE, "increment_source_port": False,
            "batch_count_cfg": g["batch_count"] - 1,
            "packets_per_batch_cfg": g["packets_per_batch"] - 1, "ibg": 0, "ibg_jitter": 0,
            "ipg": 0, "ipg_jitter": 0, "batch_counter": 0, "pkt_counter": 0,
            "trigger_counter": 0, "pipe": pipe},
           "packet generator application %d in pipe %d" % (g["app_id"], pipe))
    return ops


# ----------------------------------------------------------------------------------------------
# Running the plan inside bfrt_python.


def _resolve(bfrt, path):
    node = bfrt
    for name in path:
        node = getattr(node, name)
    return node


def _declared(method):
    """The argument names a bfrt_python method declares, when its signature can be read."""
    try:
        import inspect
        return set(inspect.signature(method).parameters)
    except (TypeError, ValueError):
        return None


def _rename(kwargs, declared):
    """Where the method declares a field by its full name (hdr_ethernet_dst_addr) and not the
    short one the plan chose, use the one it declares."""
    if not declared:
        return kwargs
    out = {}
    for k, v in kwargs.items():
        if k not in declared:
            full = [c for c in declared if c.endswith("_" + k)]
            if len(full) == 1:
                k = full[0]
        out[k] = v
    return out


def install(bfrt, doc, log=print):
    ops = plan(doc)
    for i, o in enumerate(ops, 1):
        method = getattr(_resolve(bfrt, o["path"]), o["method"])
        try:
            method(**_rename(o["kwargs"], _declared(method)))
        except Exception as e:  # bfrt_python raises its own types; name the operation
            raise RuntimeError("operation %d (%s: %s.%s): %s"
                               % (i, o["what"], ".".join(o["path"]), o["method"], e)) from e
    log("sharebuf: installed %d operations for %s.p4 from %s"
        % (len(ops), doc["program"], doc.get("config", "?")))
    return ops


# ----------------------------------------------------------------------------------------------
# Checking the plan against the compiler's bf-rt.json, and the command line.


def _fits(v, width):
    return width is None or isinstance(v, bool) or 0 <= v < (1 << width)


def check(doc, bfrt_json):
    """Problems: names in the JSON that the compiled program's bf-rt.json does not declare, and
    key or action values (as the loader sends them) wider than the fields it declares."""
    tables = {t["name"]: t for t in bfrt_json["tables"]}
    problems = []
    for t in doc.get("tables", []):
        info = tables.get(t["table"])
        if info is None:
            problems.append("table %s: not in bf-rt.json" % t["table"])
            continue
        keys = {k["name"]: k.get("type", {}).get("width") for k in info.get("key", [])}

        def data_field(d):
            d = d.get("singleton", d)
            return d.get("name"), d.get("type", {}).get("width")
        actions = {a["name"]: dict(data_field(d) for d in a.get("data", []))
                   for a in info.get("action_specs", [])}
        rows = t["entries"] + ([t["default_action"]] if t.get("default_action") else [])
        for e in rows:
            for f, m in e.get("match", {}).items():
                if f not in keys:
                    problems.append("%s: key field %s not declared (%s)"
                                    % (t["table"], f, sorted(keys)))
                    continue
                for part in ("exact", "value", "mask", "low", "high"):
                    if part in m and not _fits(_int(m[part]), keys[f]):
                        problems.append("%s: key %s %s = %s does not fit its %s bits"
                                        % (t["table"], f, part, m[part], keys[f]))
            if e["action"] not in actions:
                problems.append("%s: action %s not declared (%s)"
                                % (t["table"], e["action"], sorted(actions)))
                continue
            for p, v in e.get("data", {}).items():
                if p not in actions[e["action"]]:
                    problems.append("%s: %s has no parameter %s" % (t["table"], e["action"], p))
                    continue
                # What the loader sends (a negative value as its 32-bit two's complement) must
                # fit the width the compiler gave the parameter.
                width = actions[e["action"]][p]
                if not _fits(_action_value(p, v), width) or (_int(v) < 0 and width not in (None, 32)):
                    problems.append("%s: %s(%s = %s) does not fit its %s-bit parameter"
                                    % (t["table"], e["action"], p, v, width))
    for r in doc.get("registers", []):
        if r["register"] not in tables:
            problems.append("register %s: not in bf-rt.json" % r["register"])
    for m in doc.get("meters", []):
        if m["meter"] not in tables:
            problems.append("meter %s: not in bf-rt.json" % m["meter"])
    return sorted(set(problems))


def script(doc):
    """This file with the JSON embedded: what `bfshell -b` runs."""
    with open(__file__) as f:
        source = f.read()
    return ("# Generated by p4/loader/bfrt_loader.py from %s (%s.p4): run with bfshell -b.\n"
            "SHAREBUF_DOC = %s\n\n%s"
            % (doc.get("config", "?"), doc["program"], json.dumps(json.dumps(doc)), source))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables", help="the JSON sharebuf-p4tables wrote")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("-o", "--output", help="write the bfrt_python script here")
    what.add_argument("--plan", action="store_true", help="print the operations")
    what.add_argument("--check", metavar="BF_RT_JSON",
                      help="check the names against the compiled program's bf-rt.json")
    args = ap.parse_args(argv)
    with open(args.tables) as f:
        doc = json.load(f)
    if args.output:
        with open(args.output, "w") as f:
            f.write(script(doc))
        print("%s: %d operations; on the switch: bfshell -b %s"
              % (args.output, len(plan(doc)), args.output))
        return 0
    if args.plan:
        for o in plan(doc):
            print("bfrt.%s.%s(%s)  # %s" % (".".join(o["path"]), o["method"],
                                            ", ".join("%s=%r" % kv for kv in o["kwargs"].items()),
                                            o["what"]))
        return 0
    with open(args.check) as f:
        problems = check(doc, json.load(f))
    for p in problems:
        print("FAIL " + p)
    if not problems:
        print("ok   every table, action, field, register and meter of %s is in %s, every value "
              "within its width"
              % (args.tables, args.check))
    return 1 if problems else 0


if "SHAREBUF_DOC" in globals() and "bfrt" in globals():
    install(globals()["bfrt"], json.loads(SHAREBUF_DOC))  # noqa: F821 (set by script())
elif __name__ == "__main__":
    sys.exit(main())
