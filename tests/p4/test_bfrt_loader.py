"""p4/loader/bfrt_loader.py against the JSON sharebuf-p4tables writes for every example
configuration: the bfrt_python script it generates, run against a recording stand-in for
bfrt_python's `bfrt` object, installs every table entry and default action, every register start
value, meter, mirror session, multicast group, port setting, deflect-on-drop destination and the
packet generator the JSON holds, with the arguments bfrt_python takes; and --check refuses names
a compiled program's bf-rt.json does not declare.

Run by ctest (p4.loader) with SHAREBUF_P4TABLES set to the generator binary.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "p4", "loader"))
import bfrt_loader  # noqa: E402

PROGRAMS = ["dt", "protean", "fb", "trim"]


class Recorder:
    """Stands in for bfrt_python's `bfrt`: every attribute is a node, every call is recorded."""

    def __init__(self, calls, path=()):
        self._calls, self._path = calls, path

    def __getattr__(self, name):
        return Recorder(self._calls, self._path + (name,))

    def __call__(self, **kwargs):
        self._calls.append((list(self._path[:-1]), self._path[-1], kwargs))


def generate(program, workdir):
    out = os.path.join(workdir, program + ".json")
    subprocess.run([os.environ["SHAREBUF_P4TABLES"], "--config",
                    os.path.join(ROOT, "p4", "examples", program + ".toml"), "--program", program,
                    "-o", out], check=True, capture_output=True)
    with open(out) as f:
        return out, json.load(f)


def fake_bfrt_json(doc):
    """A bf-rt.json declaring exactly what `doc` names (what the compiler's would hold)."""
    tables = {}
    for t in doc["tables"]:
        info = tables.setdefault(t["table"], {"name": t["table"], "key": [], "action_specs": []})
        rows = t["entries"] + ([t["default_action"]] if t.get("default_action") else [])
        keys, actions = set(), {}
        for e in rows:
            keys.update(e.get("match", {}))
            actions.setdefault(e["action"], set()).update(e["data"])
        info["key"] = [{"name": k} for k in sorted(keys)]
        info["action_specs"] = [{"name": a, "data": [{"name": p} for p in sorted(ps)]}
                                for a, ps in actions.items()]
    for r in doc.get("registers", []):
        tables[r["register"]] = {"name": r["register"]}
    for m in doc.get("meters", []):
        tables[m["meter"]] = {"name": m["meter"]}
    return {"tables": list(tables.values())}


class LoaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if "SHAREBUF_P4TABLES" not in os.environ:
            raise unittest.SkipTest("SHAREBUF_P4TABLES (the sharebuf-p4tables binary) not set: "
                                    "run through ctest -R p4.loader")
        cls.dir = tempfile.TemporaryDirectory()
        cls.docs = {p: generate(p, cls.dir.name) for p in PROGRAMS}

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def run_script(self, program):
        """The generated script, executed as bfshell -b would, against a Recorder."""
        path, doc = self.docs[program]
        script = os.path.join(self.dir.name, program + "_load.py")
        bfrt_loader.main([path, "-o", script])
        calls = []
        with open(script) as f:
            code = compile(f.read(), script, "exec")
        exec(code, {"bfrt": Recorder(calls), "__name__": "__main__", "__file__": script,
                    "print": lambda *a: None})
        return doc, calls

    def test_every_json_item_is_installed(self):
        for program in PROGRAMS:
            with self.subTest(program=program):
                doc, calls = self.run_script(program)
                done = {}
                for path, method, kw in calls:
                    done.setdefault((".".join(path), method), []).append(kw)
                for t in doc["tables"]:
                    path = program + "." + t["table"]
                    adds = sum(len(v) for (p, m), v in done.items()
                               if p == path and m.startswith("add_with_"))
                    self.assertEqual(adds, len(t["entries"]), t["table"])
                    self.assertIn((path, "clear"), done, t["table"])
                    if t.get("default_action"):
                        act = t["default_action"]["action"].split(".")[-1]
                        # Action data as BF-RT takes it: int<32> parameters two's complement.
                        want = {k: v & 0xFFFFFFFF if isinstance(v, int) and v < 0 else v
                                for k, v in t["default_action"]["data"].items()}
                        self.assertEqual(done[(path, "set_default_with_" + act)], [want],
                                         t["table"])
                for r in doc["registers"]:
                    writes = done[(program + "." + r["register"], "mod")]
                    self.assertEqual(sorted(w["REGISTER_INDEX"] for w in writes),
                                     list(range(r["first"], r["first"] + r["count"])))
                    self.assertTrue(all(w["f1"] == r["value"] for w in writes))
                for m in doc.get("meters", []):
                    self.assertIn({"METER_INDEX": m["index"], "METER_SPEC_CIR_KBPS": m["cir_kbps"],
                                   "METER_SPEC_PIR_KBPS": m["pir_kbps"],
                                   "METER_SPEC_CBS_KBITS": -(-8 * m["cbs_bytes"] // 1000),
                                   "METER_SPEC_PBS_KBITS": -(-8 * m["pbs_bytes"] // 1000)},
                                  done[(program + "." + m["meter"], "mod")])
                sessions = {kw["sid"]: kw for kw in done.get(("mirror.cfg", "add_with_normal"), [])}
                self.assertEqual(sorted(sessions), sorted(s["id"] for s in doc["mirror_sessions"]))
                for s in doc["mirror_sessions"]:
                    kw = sessions[s["id"]]
                    self.assertEqual(kw["direction"], s["direction"].upper())
                    if "multicast_group" in s:
                        self.assertEqual(kw["mcast_grp_a"], s["multicast_group"])
                    else:
                        self.assertEqual(kw["ucast_egress_port"], s["egress_port"])
                    self.assertEqual(kw.get("max_pkt_len"), s.get("max_pkt_len"))
                groups = {kw["MGID"]: kw for kw in done.get(("pre.mgid", "add"), [])}
                nodes = {kw["MULTICAST_NODE_ID"]: kw for kw in done.get(("pre.node", "add"), [])}
                for g in doc["multicast_groups"]:
                    (node,) = groups[g["id"]]["MULTICAST_NODE_ID"]
                    self.assertEqual(nodes[node]["DEV_PORT"], g["ports"])
                port_cfg = done.get(("tf1.tm.port.cfg", "mod"), [])
                for p in doc["ports"]:
                    self.assertIn({"dev_port": p["dev_port"], "port_queues_count": p["queues"]},
                                  port_cfg)
                    shaped = [kw for kw in done.get(("tf1.tm.port.sched_shaping", "mod"), [])
                              if kw["dev_port"] == p["dev_port"]]
                    self.assertEqual([kw["max_rate"] for kw in shaped],
                                     [p["rate_bps"] // 1000] if p["rate_bps"] else [])
                for d in doc.get("tm", {}).get("deflect_on_drop", []):
                    self.assertIn({"dev_port": d["deflect_on_drop_port"],
                                   "mirror_drop_destination": True, "mirror_drop_pg_queue": 0},
                                  port_cfg)
                if "pktgen" in doc:
                    g = doc["pktgen"]
                    (app,) = done[("tf1.pktgen.app_cfg", "add_with_trigger_timer_periodic")]
                    self.assertEqual((app["app_id"], app["timer_nanosec"],
                                      app["packets_per_batch_cfg"] + 1),
                                     (g["app_id"], g["timer_ns"], g["packets_per_batch"]))
                    # The generator prepends its 6-byte header: the buffer holds the rest.
                    (buf,) = done[("tf1.pktgen.pkt_buffer", "mod")]
                    self.assertEqual(bytes(buf["buffer"]).hex(), g["packet_hex"][12:])
                    self.assertEqual(len(buf["buffer"]), g["packet_bytes"] - 6)
                    self.assertEqual(app["pkt_len"], g["packet_bytes"] - 6)
                    # One pipe's generator: its port's, written there only (without a pipe,
                    # bfrt_python writes every pipe and each one's generator sends probes).
                    self.assertEqual((buf["pipe"], app["pipe"]), (g["src_port"] // 128,) * 2)
                    self.assertEqual(app["pipe_local_source_port"], g["src_port"] % 128)
                    # The generator starts only after every table and register is written.
                    last_table = max(i for i, (path, _, _) in enumerate(calls) if path[0] == program)
                    first_gen = min(i for i, (path, _, _) in enumerate(calls)
                                    if path[:2] == ["tf1", "pktgen"])
                    self.assertLess(last_table, first_gen)
                self.assertEqual(len(calls), len(bfrt_loader.plan(doc)))

    def test_negative_action_data_goes_as_its_twos_complement(self):
        # protean.p4's log_cells_per_ns and log_long are negative below one cell per ns and
        # alpha 1; BF-RT takes action data as unsigned bytes.
        _, doc = self.docs["protean"]
        negative = [(t["table"], f, v) for t in doc["tables"] for e in t["entries"]
                    for f, v in e.get("data", {}).items() if isinstance(v, int) and v < 0]
        self.assertTrue(negative, "the protean example has no negative action data to encode")
        entry = {"match": {}, "data": {"value": -3237}}
        self.assertEqual(bfrt_loader._entry_kwargs(entry)["value"], (1 << 32) - 3237)
        self.assertEqual(bfrt_loader._entry_kwargs({"match": {}, "data": {"value": 7}})["value"], 7)
        with self.assertRaises(ValueError):
            bfrt_loader._entry_kwargs({"match": {}, "data": {"value": -(1 << 31) - 1}})
        for op in bfrt_loader.plan(doc):
            for k, v in op["kwargs"].items():
                if isinstance(v, int) and not isinstance(v, bool):
                    self.assertGreaterEqual(v, 0, f"{op['path']} {op['method']}: {k} = {v}")

    def test_match_kinds_as_bfrt_python_takes_them(self):
        _, doc = self.docs["dt"]
        by_name = {t["table"]: t for t in doc["tables"]}
        ternary = by_name["pipe.DtIngress.log2_rem.log2"]["entries"][0]
        kw = bfrt_loader._entry_kwargs(ternary)
        self.assertEqual(kw, {"x": ternary["match"]["x"]["value"],
                              "x_mask": int(ternary["match"]["x"]["mask"], 16),
                              "value": ternary["data"]["value"],
                              "MATCH_PRIORITY": ternary["priority"]})
        rng = by_name["pipe.DtIngress.fwd.cells_of_length"]["entries"][0]
        kw = bfrt_loader._entry_kwargs(rng)
        self.assertEqual((kw["total_len_start"], kw["total_len_end"]),
                         (rng["match"]["hdr.ipv4.total_len"]["low"],
                          rng["match"]["hdr.ipv4.total_len"]["high"]))
        fwd = by_name["pipe.DtIngress.fwd.forward"]["entries"][0]
        self.assertEqual(bfrt_loader._entry_kwargs(fwd)["dst_addr"],
                         int(fwd["match"]["hdr.ethernet.dst_addr"]["exact"], 16))

    def test_shared_short_names_use_the_full_name(self):
        kw = bfrt_loader._entry_kwargs({"match": {"hdr.sb.port": {"exact": 3},
                                                  "hdr.ipv4.$valid": {"value": 1, "mask": 1}},
                                        "data": {"port": 5}, "action": "a"})
        self.assertEqual(kw, {"hdr_sb_port": 3, "hdr_ipv4__valid": 1, "hdr_ipv4__valid_mask": 1,
                              "port": 5})
        # Where bfrt_python's method declares the full name, it wins over the short one.
        self.assertEqual(bfrt_loader._rename({"dst_addr": 1, "port": 2},
                                             {"hdr_ethernet_dst_addr", "port"}),
                         {"hdr_ethernet_dst_addr": 1, "port": 2})

    def test_check_against_bf_rt_json(self):
        for program in PROGRAMS:
            with self.subTest(program=program):
                _, doc = self.docs[program]
                info = fake_bfrt_json(doc)
                self.assertEqual(bfrt_loader.check(doc, info), [])
                # A table, an action parameter and a register the compiler named otherwise.
                info["tables"][0]["name"] += "_renamed"
                spec = next(t for t in info["tables"][1:] if t.get("action_specs")
                            and any(a["data"] for a in t["action_specs"]))
                spec["action_specs"][0]["data"][0]["name"] += "_renamed"
                problems = bfrt_loader.check(doc, info)
                self.assertTrue(any("not in bf-rt.json" in p for p in problems), problems)
                self.assertTrue(any("has no parameter" in p for p in problems), problems)
                if doc["registers"]:
                    info["tables"] = [t for t in info["tables"]
                                      if t["name"] != doc["registers"][0]["register"]]
                    self.assertTrue(any(p.startswith("register ")
                                        for p in bfrt_loader.check(doc, info)))

    def test_check_refuses_values_wider_than_the_compiler_declared(self):
        # protean.p4's set_params(int<32> log_long) takes a negative value: the loader sends its
        # 32-bit two's complement, which fits the 32 bits the compiler declares and no fewer.
        _, doc = self.docs["protean"]
        table = next(t for t in doc["tables"] if t["table"].endswith("protean_params"))
        value = table["default_action"]["data"]["log_long"]
        self.assertLess(value, 0)
        for width, fits in ((32, True), (16, False)):
            info = fake_bfrt_json(doc)
            spec = next(t for t in info["tables"] if t["name"] == table["table"])
            spec["action_specs"][0]["data"] = [{"name": "log_long",
                                                "type": {"type": "bytes", "width": width}}]
            problems = [p for p in bfrt_loader.check(doc, info) if "does not fit" in p]
            self.assertEqual(problems == [], fits, problems)
        # A key value past its field's width.
        info = fake_bfrt_json(doc)
        spec = next(t for t in info["tables"] if t["name"].endswith("log2_rem.log2"))
        spec["key"] = [{"name": "x", "type": {"type": "bytes", "width": 16}}]
        self.assertTrue(any("does not fit its 16 bits" in p for p in bfrt_loader.check(doc, info)))

    def test_command_line_check_exit_status(self):
        path, doc = self.docs["trim"]
        good = os.path.join(self.dir.name, "bf-rt.json")
        with open(good, "w") as f:
            json.dump(fake_bfrt_json(doc), f)
        loader = os.path.join(ROOT, "p4", "loader", "bfrt_loader.py")
        ok = subprocess.run([sys.executable, loader, path, "--check", good], capture_output=True)
        self.assertEqual(ok.returncode, 0, ok.stdout)
        bad = fake_bfrt_json(doc)
        bad["tables"].pop()
        with open(good, "w") as f:
            json.dump(bad, f)
        ko = subprocess.run([sys.executable, loader, path, "--check", good], capture_output=True)
        self.assertEqual(ko.returncode, 1)
        self.assertIn(b"FAIL", ko.stdout)


if __name__ == "__main__":
    unittest.main()
