#!/usr/bin/python3
"""A P4 twin's decisions against the software's, on the paths p4testgen finds through it.

p4testgen (p4c's P4Tools, Tofino target, PTF back end) explores the program symbolically and
writes one test per path: the packet and ingress port, the register values the path read (PTF
tests write them before sending: setRegisterValue) and what leaves (verify_packet) or that
nothing does. The program runs on sharebuf-p4tables' entries for the configuration, fixed as
const entries (tests/p4/const_entries.py), so every path is a path of the program as the loader
configures it. Each test then goes through the software (sharebuf-p4-path-decide: the switch
model's forwarding and classification, the configured policy on a view holding those registers)
and must end the same way: admitted and sent to the port the software forwards to, or dropped
where the software drops, or dropped where the software filters a frame whose destination is
on its ingress port. Where they differ by design it says so and does not count it:

- a destination the static MAC table lacks: sharebufd floods it, the twin drops it;
- Q within 1 % of T (dt.p4) or a factor 1.5 (fb.p4), where the twin's T comes from logarithm
  or shift tables and the software's is exact (protean.p4's comparisons are exact);
- protean.p4: a frame for an empty incast-role queue, which the software holds to alpha_incast x
  the Rem of now and the program to what the queue's last probe wrote;
- a frame the software's parser refuses (counted malformed, dropped): the twin drops it too,
  or forwards it where its own parser accepts it (noted, not a decision of the policy).

The domain p4testgen explores is narrowed (dt_domain, fb_domain, protean_domain, WELL_FORMED;
each says what it allows): for dt.p4, Rem as ingress reads it at
its edges and at values drawn from --seed, with the log2 and exp2 tables cut to the entries those
values reach (a symbolic key over the full 6399-entry ternary table gave no path in 10 minutes);
depths in [0, B]; frames sharebufd's parser accepts. Within it, every path is the program's.

Paths p4testgen cannot give (its register writes do not reach a later packet, and egress's
intrinsic metadata — queue depths, timestamps — is left unconstrained): the probe path, which
tests/p4/p4_tables_test.cpp covers by emulating the program's integer arithmetic instead. Only
the configured ports are offered as ingress ports (--port-ranges), so every path is a data
packet's.

Exit 0 when every compared path agrees and both an admission and a threshold drop were compared
(a check that never saw one of them proves nothing); 1 otherwise. --expect-mismatch inverts it:
used on a copy whose admission is inverted, which must be caught.
"""
import argparse
import ast
import json
import os
import pathlib
import re
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


def find_p4testgen(arg):
    for c in [arg, os.environ.get("P4TESTGEN"), "/opt/bf-p4c/bin/p4testgen",
              "/var/tmp/bf-p4c/build/backends/p4tools/modules/testgen/p4testgen"]:
        if c and pathlib.Path(c).is_file() and os.access(c, os.X_OK):
            return c
    return None


def find_p4include():
    for c in [os.environ.get("BF_P4C_INCLUDE"), "/opt/bf-p4c/share/p4c/p4include"]:
        if c and (pathlib.Path(c) / "tna.p4").is_file():
            return c
    return None


class PtfTest:
    def __init__(self, name, body):
        self.name = name
        m = re.search(r"ig_port = (\d+)", body)
        self.ig_port = int(m.group(1)) if m else None
        m = re.search(r"pkt = (b'[^']*')", body)
        self.packet = ast.literal_eval(m.group(1)) if m else b""
        self.registers = {}  # name -> {index: value}
        for m in re.finditer(r"setRegisterValue\(\s*'([^']+)',\s*(\w+),\s*(\w+)\s*\)", body):
            self.registers.setdefault(m.group(1), {})[int(m.group(3), 0)] = int(m.group(2), 0)
        verify = body.split("def verifyPackets", 1)[-1].split("def runTest", 1)[0]
        # verify_packet(self, exp_pkt, eg_port) after `eg_port = N`, once per packet that leaves.
        ports = [int(p, 0) for p in re.findall(r"eg_port = (\w+)", verify)]
        self.out_ports = ports[:len(re.findall(r"verify_packet\(", verify))]
        self.trace = body.split("'''")[1] if "'''" in body else ""


def parse_ptf(path):
    text = path.read_text()
    parts = re.split(r"\nclass (Test\d+)\(AbstractTest\):", text)
    return [PtfTest(parts[i], parts[i + 1]) for i in range(1, len(parts), 2)]


# A program's registers as the software's view holds them (sharebuf-p4-path-decide's case keys).
REGISTERS = {"depth": "depth", "qlength": "depth", "rem": "rem", "remaining": "rem",
             "n_high": "n_high", "n_low": "n_low", "n_port": "n_port",
             "incast_thr": "incast_thr", "long_thr": "long_thr"}


def signed32(v):
    return v - (1 << 32) if v >= 0 and v & (1 << 31) else v


def near_threshold(program, s):
    """dt.p4 computes T = alpha x Rem through Q.8 logarithm tables (within 0.7 % of the product,
    p4/README.md), fb.p4 alpha / (N_p x n) x Rem as a power-of-two shift of Rem (within a factor
    of sqrt 2), the software both exactly: a decision may differ only that close to T."""
    q, t = s["depth"], s["threshold"]
    if program == "protean":  # the same integer comparisons on the same registers: exact
        return False
    if program == "fb":
        return t / 1.5 - 1 <= q <= t * 1.5 + 1
    return abs(q - t) <= max(1, t // 100)


def table(t, suffix):
    return next(x for x in t["tables"] if x["table"].endswith(suffix))


def dt_domain(t, seed):
    """What p4testgen explores of dt.p4: Rem (the value ingress reads, after the clamp at 0: a
    negative register reads 0) at the edges (0, 1, B / 2, B - 1, B) and at three values drawn
    from the seed; the exp2 keys those values' logarithms and the classes' alphas reach; a
    queue's depth anywhere in [0, B] (the states the software's counters can hold)."""
    import random
    rng = random.Random(seed)
    cap = next(r["value"] for r in t["registers"] if r["register"].endswith(".rem"))
    rems = sorted({0, 1, cap // 2, cap - 1, cap, *(rng.randint(2, cap - 2) for _ in range(3))})
    log2 = sorted(table(t, "log2_rem.log2")["entries"], key=lambda e: e.get("priority", 0))

    def log_of(v):
        for e in log2:
            m = e["match"]["x"]
            if v & int(str(m["mask"]), 0) == int(str(m["value"]), 0) & int(str(m["mask"]), 0):
                return e["data"]["value"]
        return None  # the default: LOG_OF_ZERO, no exp2 lookup
    alphas = {e["data"]["log_value"] for e in table(t, ".class_alpha")["entries"]} | {0}
    keys = sorted({log_of(v) + la for v in rems if log_of(v) is not None for la in alphas})
    return {"SbLog2.log2": {"values": rems, "assume": "x"},
            "SbExpCells.exp2": {"values": [k for k in keys if k >= 0]},
            "DtIngress": [{"after": "md.qdepth = depth_read.execute(md.qindex);",
                           "assume": f"md.qdepth <= {cap}"}],
            **WELL_FORMED}


def fb_domain(t, seed):
    """What p4testgen explores of fb.p4: Remaining (a bit<32> the walk writes saturating) at the
    edges (0, 1, B / 2, B - 1, B) and at three values drawn from the seed; a queue's depth in
    [0, B]; the congested-queue counts no larger than the queues of the group and of the port
    (what a SYNC walk can count). The Shift table stays whole (exact keys)."""
    import random
    rng = random.Random(seed)
    cap = next(r["value"] for r in t["registers"] if r["register"].endswith(".remaining"))
    rems = sorted({0, 1, cap // 2, cap - 1, cap, *(rng.randint(2, cap - 2) for _ in range(3))})
    groups = [e["data"]["group"] for e in table(t, ".queue_info")["entries"]]
    high, low = groups.count(1), groups.count(0)
    per_port = max(p["queues"] for p in t["ports"])
    rem_in = " || ".join(f"md.rem == {v}" for v in rems)
    return {"FbIngress": [
        {"after": "md.qdepth = qlength_read.execute(md.qindex);", "assume": f"md.qdepth <= {cap}"},
        {"after": "md.rem = remaining_read.execute(0);", "assume": rem_in},
        {"after": "n_p = n_high_read.execute(0);", "assume": f"n_p <= {high}"},
        {"after": "n_p = n_low_read.execute(0);", "assume": f"n_p <= {low}"},
        {"after": "n = n_port_read.execute(md.port_index);", "assume": f"n <= {per_port}"}],
        **WELL_FORMED}


def ternary_lookup(entries, v):
    """A ternary table's action data for key v (first match in priority order), None for none."""
    for e in sorted(entries, key=lambda e: e.get("priority", 0)):
        (m,) = e["match"].values()
        mask = int(str(m["mask"]), 0)
        if v & mask == int(str(m["value"]), 0) & mask:
            return e["data"]
    return None


def protean_domain(t, seed):
    """What p4testgen explores of protean.p4's data path: the registers a data packet's decision
    reads, in states the probes leave. Rem (an int<32>: negative while the latest depths come
    from different batches) at the edges (-1, 0, 1, B / 2, B - 1, B) and at three values drawn
    from the seed, one of them negative; long_thr what the probe that wrote Rem wrote with it,
    alpha_long x max(Rem, 0) through the program's own log2 and exp2 tables (computed here from
    the generated entries: the program's arithmetic, not the software's); a queue's depth in
    [0, B]; its incast threshold anything the exp2 tables can hold (at most 2^31 - 1, item 2's
    clamp), since it depends on the gradient egress measured. The copy reads rem, long_thr and
    incast_thr a second time to say so (p4testgen keeps one value per register). The log2 and
    exp2 tables lose their entries in the copy: only probes apply them (from the pktgen and
    recirculation ports, which --port-ranges does not offer), and their 55 000 const entries
    would only slow p4testgen down."""
    import random
    rng = random.Random(seed)
    cap = next(r["value"] for r in t["registers"] if r["register"].endswith(".rem"))
    rems = sorted({-1, 0, 1, cap // 2, cap - 1, cap, -rng.randint(2, cap),
                   *(rng.randint(2, cap - 2) for _ in range(2))})
    log_long = table(t, ".protean_params")["default_action"]["data"]["log_long"]
    log2 = table(t, "ProteanIngress.log2_rem.log2")["entries"]
    exp_long = {int(str(e["match"]["t"]["exact"]), 0): e["data"]["value"]
                for e in table(t, "ProteanIngress.exp_long.exp2")["entries"]}

    def long_thr(rem):  # rem_update's rv, SbLog2, log_long_of, SbExpCells
        found = ternary_lookup(log2, max(rem, 0))
        log_b = signed32(found["value"]) if found else LOG_OF_ZERO
        k = log_long + log_b
        return 0 if k < 0 else exp_long.get(k, 0)
    pairs = " || ".join(f"(tg_rem == {r} && tg_long == {long_thr(r)})" for r in rems)
    peek = ("RegisterAction<{t}, bit<{w}>, {t}>({reg}) tg_{reg}_peek = {{ "
            "void apply(inout {t} value, out {t} rv) {{ rv = value; }} }};")
    return {
        "SbLog2.log2": {"values": []}, "SbExpCells.exp2": {"values": []},
        "SbExpGradient.exp2": {"values": []},
        "ProteanIngress": [
            {"after": "SB_STEP(probe_qindex, md.qindex = hdr.sb.qindex;)",
             "insert": " ".join([peek.format(t="int<32>", w=1, reg="rem"),
                                 peek.format(t="bit<32>", w=1, reg="long_thr"),
                                 peek.format(t="bit<32>", w=16, reg="incast_thr")])},
            {"after": "md.qdepth = depth_read.execute(md.qindex);",
             "insert": "int<32> tg_rem = tg_rem_peek.execute(0); "
                       "bit<32> tg_long = tg_long_thr_peek.execute(0); "
                       "bit<32> tg_thr = tg_incast_thr_peek.execute(md.qindex); "
                       f"testgen_assume(md.qdepth <= {cap} && tg_thr <= 2147483647 && ({pairs}));"}],
        **WELL_FORMED}


EMPTY_INCAST = ("an empty incast queue: the software's threshold is alpha_incast x the Rem of now, "
                "the program's what the queue's last probe wrote (alpha_incast x the Rem then)")
LOG_OF_ZERO = -(1 << 30)  # p4/include/log_arith.p4: SbLog2's default (no bit set)

DOMAINS = {"dt": dt_domain, "fb": fb_domain, "protean": protean_domain}
ROUNDING = {"dt": "the log tables' rounding (Q within 1 % of T)",
            "fb": "the Shift table's rounding (Q within a factor 1.5 of T)"}


# Frames sharebufd's parser accepts (model/frame_parser.h): p4testgen otherwise fills IPv4's
# version, header and total length freely, and the software counts such a frame malformed
# before any policy sees it. The total length stays within the shortest packet p4testgen is
# allowed (--packet-size-range) to send.
WELL_FORMED = {
    "SbIngressParser": [
        {"after": "pkt.extract(hdr.ipv4);",
         "assume": "hdr.ipv4.version == 4 && hdr.ipv4.ihl == 5 && "
                   "hdr.ipv4.total_len >= 48 && hdr.ipv4.total_len <= 1400"},
        {"after": "pkt.extract(hdr.tcp);", "assume": "hdr.tcp.data_offset == 5"},
        {"after": "pkt.extract(hdr.udp);", "assume": "hdr.udp.length >= 8 && hdr.udp.length <= 28"},
    ],
}
MIN_PACKET_BITS = 1500 * 8


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--program", required=True, choices=sorted(DOMAINS),
                    help="the program (those whose data path decides by a policy's rule)")
    ap.add_argument("--source", help="the program's file (default p4/PROGRAM.p4)")
    ap.add_argument("--config", help="default p4/examples/PROGRAM.toml")
    ap.add_argument("--p4tables", required=True, help="the sharebuf-p4tables binary")
    ap.add_argument("--decide", required=True, help="the sharebuf-p4-path-decide binary")
    ap.add_argument("--p4testgen", help="default $P4TESTGEN, /opt/bf-p4c/bin/p4testgen, the build tree's")
    ap.add_argument("--max-tests", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", required=True, help="a directory for the copy, the tests and the cases")
    ap.add_argument("--expect-mismatch", action="store_true")
    a = ap.parse_args()

    testgen, include = find_p4testgen(a.p4testgen), find_p4include()
    if not testgen or not include:
        print("SKIP: p4testgen or the Tofino includes are not built (looked at --p4testgen, "
              "$P4TESTGEN, /opt/bf-p4c/bin/p4testgen); p4/compiler/build.sh builds the Tofino "
              "compiler and then p4testgen (p4/README.md, 'The programs' paths')")
        return 77
    source = pathlib.Path(a.source or ROOT / "p4" / f"{a.program}.p4")
    config = a.config or str(ROOT / "p4" / "examples" / f"{a.program}.toml")
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    tables = work / "tables.json"
    run([a.p4tables, "--config", config, "--program", a.program, "-o", str(tables)],
        stderr=subprocess.DEVNULL)
    t = json.loads(tables.read_text())
    domain = DOMAINS[a.program](t, a.seed)
    (work / "domain.json").write_text(json.dumps(domain, indent=1))
    print(f"the domain p4testgen explores (tests/p4/const_entries.py): {work / 'domain.json'}")
    run(["/usr/bin/python3", str(HERE / "const_entries.py"), str(source), str(tables),
         str(work / "src"), str(work / "domain.json")])
    defines = [f"-D{k}={v}" for k, v in t["compile"]["defines"].items()]
    skip = ",".join(x["table"].split(".", 1)[1] for x in t["tables"])
    dev_to_index = {p["dev_port"]: p["index"] for p in t["ports"]}
    ranges = ",".join(f"{d}:{d}" for d in sorted(dev_to_index))
    out = work / "ptf"
    print(f"p4testgen: {testgen}\n{source.name} on its {len(t['tables'])} generated tables, "
          f"{a.max_tests} paths, seed {a.seed}", flush=True)
    start = time.time()
    with open(work / "p4testgen.log", "w") as log:
        r = subprocess.run([testgen, "--target", "tofino", "--arch", "tna", "--std", "p4-16",
                            "-D__TARGET_TOFINO__=1", "-I", include, "-I", str(work / "src" / "include"),
                            *defines, "--test-backend", "PTF", "--max-tests", str(a.max_tests),
                            "--seed", str(a.seed), "--path-selection", "RANDOM_BACKTRACK",
                            "--port-ranges", ranges,
                            "--packet-size-range", f"{MIN_PACKET_BITS}:{MIN_PACKET_BITS + 800}", "--skip-control-plane-entities", skip,
                            "--out-dir", str(out), str(work / "src" / source.name)],
                           stdout=log, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        print(f"FAIL p4testgen exited {r.returncode} (log: {work / 'p4testgen.log'})")
        return 1
    tests = parse_ptf(next(out.glob("*.py")))
    print(f"{len(tests)} paths in {time.time() - start:.0f} s")

    cases = []
    for x in tests:
        case = {"test": x.name, "in_port": dev_to_index.get(x.ig_port, -1),
                "frame": x.packet.hex()}
        for name, values in x.registers.items():
            key = REGISTERS.get(name.rsplit(".", 1)[-1])
            if key in ("depth", "n_port", "incast_thr"):
                case.setdefault(key, {}).update({str(i): v for i, v in values.items()})
            elif key == "rem":  # dt.p4's and protean.p4's are int<32> (read as 0 below 0)
                v = values.get(0, 0)
                case[key] = v if a.program == "fb" else signed32(v)
            elif key:
                case[key] = values.get(0, 0)
        cases.append(case)
    (work / "cases.json").write_text(json.dumps(cases, indent=1))
    decided = run([a.decide, config, str(work / "cases.json")], stdout=subprocess.PIPE).stdout
    software = {d["test"]: d for d in map(json.loads, decided.splitlines())}
    index_to_dev = {v: k for k, v in dev_to_index.items()}

    counts, mismatches = {}, []
    for x in tests:
        s = software[x.name]
        prog = f"port {x.out_ports[0]}" if x.out_ports else "drop"
        want = s.get("decision")
        if "skip" in s:
            kind = "skipped: " + s["skip"]
        elif want == "no-route":
            kind = "unknown destination (sharebufd floods, the twin drops)" if not x.out_ports else None
        elif want == "filtered":
            kind = "filtered (destination on the ingress port)" if not x.out_ports else None
        elif want == "malformed":
            kind = "refused by sharebufd's parser" + (", dropped by the twin" if not x.out_ports
                                                      else f", the twin's parser sent it to {prog}")
        elif want == "admit":
            kind = "admit" if x.out_ports == [index_to_dev.get(s["port"])] else None
        else:
            kind = "threshold drop" if not x.out_ports else None
        if kind is None and want in ("admit", "drop") and near_threshold(a.program, s):
            kind = ROUNDING[a.program]
        if kind is None and s.get("empty_incast"):
            kind = EMPTY_INCAST
        if kind is None:
            mismatches.append((x, s, prog))
            kind = "MISMATCH"
        counts[kind] = counts.get(kind, 0) + 1
        detail = {k: s[k] for k in ("error", "port", "queue", "class", "depth", "remaining",
                                    "threshold", "incast_thr", "long_thr") if k in s}
        print(f"  {x.name:7} program: {prog:8} software: {want or '-':9} {kind}  {json.dumps(detail)}")
    print("summary: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    for x, s, prog in mismatches:
        print(f"MISMATCH {x.name}: the program {prog}, the software {s['decision']} "
              f"(registers {x.registers}; trace in {out})")
    if a.expect_mismatch:
        if mismatches:
            print(f"ok   {source.name}: {len(mismatches)} decision(s) differ from the software, as they must")
            return 0
        print(f"FAIL {source.name}: every path agrees with the software (the check cannot fail)")
        return 1
    if mismatches:
        return 1
    if not counts.get("admit") or not counts.get("threshold drop"):
        print("FAIL no admission or no threshold drop compared: more paths needed (--max-tests)")
        return 1
    print(f"ok   {source.name}: every path decides as the software does")
    return 0


if __name__ == "__main__":
    sys.exit(main())
