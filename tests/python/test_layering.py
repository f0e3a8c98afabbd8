"""The libraries point one way (docs/how-it-works.md, repository layout): common <- buffer <-
policies <- datapath <- mgmt, with sim beside mgmt. No file includes a header of a layer above
its own, and management code reaches the datapath only through datapath/switch_control.h,
never switch_core.h or the workers."""
import glob
import os
import re
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ORDER = ["common", "buffer", "policies", "datapath", "mgmt"]
# What each folder may include besides itself and the layers below it.
EXTRA = {"sim": {"common", "buffer", "policies", "datapath", "mgmt"}}
DATAPATH_INSIDES = {"datapath/switch_core.h", "datapath/rx_worker.h", "datapath/egress_worker.h",
                    "datapath/egress_path.h", "datapath/epochs.h", "datapath/af_packet_port.h"}


def includes(path):
    with open(path) as f:
        return re.findall(r'^#include "([^"]+)"', f.read(), re.M)


def sources(folder):
    return sorted(glob.glob(os.path.join(ROOT, folder, "*.h")) +
                  glob.glob(os.path.join(ROOT, folder, "*.cpp")))


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

    def test_mgmt_reaches_the_datapath_only_through_switch_control(self):
        wrong = [f"{os.path.relpath(p, ROOT)} includes {inc}"
                 for p in sources("mgmt") for inc in includes(p) if inc in DATAPATH_INSIDES]
        self.assertEqual(wrong, [])


if __name__ == "__main__":
    unittest.main()
