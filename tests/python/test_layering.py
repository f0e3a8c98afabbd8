"""The libraries point one way (docs/how-it-works.md, repository layout): common <- buffer <-
policies <- model <- datapath <- mgmt, with sim beside the datapath: the replay and ns-3 run the
switch model and include no I/O header. No file includes a header of a layer above its own, and
management code reaches the datapath only through datapath/switch_control.h, never
switch_core.h or the workers."""
import glob
import os
import re
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ORDER = ["common", "buffer", "policies", "model", "datapath", "mgmt"]
# What each folder may include besides itself and the layers below it.
# sim reads configurations through mgmt (whose headers include only the model's), never the I/O.
EXTRA = {"sim": {"common", "buffer", "policies", "model", "mgmt"},
         "sim/ns3": {"common", "buffer", "policies", "model", "mgmt", "sim"}}
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

    def test_sim_includes_no_io_header_through_mgmt(self):
        wrong = [f"{inc} includes {inner}"
                 for path in sources("sim") + sources("sim/ns3")
                 for inc in includes(path) if inc.startswith("mgmt/")
                 for inner in includes(os.path.join(ROOT, inc)) if inner.startswith("datapath/")]
        self.assertEqual(wrong, [])

    def test_mgmt_reaches_the_datapath_only_through_switch_control(self):
        wrong = [f"{os.path.relpath(p, ROOT)} includes {inc}"
                 for p in sources("mgmt") for inc in includes(p) if inc in DATAPATH_INSIDES]
        self.assertEqual(wrong, [])


if __name__ == "__main__":
    unittest.main()
