"""The libraries point one way (docs/how-it-works.md, repository layout): common <- buffer <-
policies <- model <- config <- datapath <- mgmt, with sim and p4 beside the datapath: the replay,
ns-3 and the P4 table generator run the switch model, read the switch through config/ and include
neither an I/O header nor the daemon's; their libraries and programs link neither (CMake). No
file includes a header of a layer above its own, and management code reaches the datapath only
through datapath/switch_control.h, never switch_core.h or the workers."""
import glob
import os
import re
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ORDER = ["common", "buffer", "policies", "model", "config", "datapath", "mgmt"]
# What each folder may include besides itself and the layers below it: the simulators and the P4
# tables read configurations through config/, never through the daemon or the I/O.
BESIDE = {"common", "buffer", "policies", "model", "config"}
EXTRA = {"sim": BESIDE, "sim/ns3": BESIDE | {"sim"}, "p4/tables": BESIDE}
DATAPATH_INSIDES = {"datapath/switch_core.h", "datapath/rx_worker.h", "datapath/egress_worker.h",
                    "datapath/egress_path.h", "datapath/epochs.h", "datapath/af_packet_port.h",
                    "datapath/port_io.h", "datapath/memory_port.h", "datapath/xsk_rx.h"}


def includes(path):
    with open(path) as f:
        return re.findall(r'^#include "([^"]+)"', f.read(), re.M)


def sources(folder):
    return sorted(f for ext in ("h", "cpp", "cc")
                  for f in glob.glob(os.path.join(ROOT, folder, "*." + ext)))


class Layering(unittest.TestCase):
    def allowed(self, folder):
        if folder in EXTRA:
            return EXTRA[folder] | {folder}
        return set(ORDER[: ORDER.index(folder) + 1])

    def test_no_include_reaches_up(self):
        wrong = []
        for folder in ORDER + list(EXTRA):
            for path in sources(folder):
                for inc in includes(path):
                    top = inc.split("/")[0]
                    if top in ORDER + list(EXTRA) and top not in self.allowed(folder):
                        wrong.append(f"{os.path.relpath(path, ROOT)} includes {inc}")
        self.assertEqual(wrong, [])

    def test_sim_and_p4_link_neither_the_daemon_nor_the_datapath(self):
        wrong = []
        for folder in ("sim", "p4", "config"):
            with open(os.path.join(ROOT, folder, "CMakeLists.txt")) as f:
                text = f.read()
            for call in re.findall(r"target_link_libraries\(([^)]*)\)", text):
                for lib in ("sharebuf_mgmt", "sharebuf_datapath"):
                    if re.search(r"\b" + lib + r"\b", call):
                        wrong.append(f"{folder}/CMakeLists.txt: {call.split()[0]} links {lib}")
        self.assertEqual(wrong, [])

    def test_mgmt_reaches_the_datapath_only_through_switch_control(self):
        wrong = [f"{os.path.relpath(p, ROOT)} includes {inc}"
                 for p in sources("mgmt") for inc in includes(p) if inc in DATAPATH_INSIDES]
        self.assertEqual(wrong, [])


if __name__ == "__main__":
    unittest.main()
