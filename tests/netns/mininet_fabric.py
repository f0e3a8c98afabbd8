"""A leaf-spine of sharebuf switches in Mininet (python/sharebuf/mininet.py): 2 spines, 2 leaves,
2 hosts per leaf, 100 Mbit/s links, built the way `mn --custom ... --switch sharebuf --topo
leafspine,...` builds it (Mininet's own customClass and buildTopo over the module's `switches`
and `topos`). Checks: every host reaches every other; a TCP transfer between leaves runs near
the link rate with its 16 flows spread over both spines (ECMP) and nothing dropped in the
fabric; a broadcast reaches the other host of its leaf and never a spine (no flooding on fabric
ports) and ARP needs no broadcast across the fabric (the hosts' addresses are static, from
the switches); every switch's effective configuration and stats file are written.
"""

import argparse
import json
import os
import re
import signal
import sys
import time

from mininet.link import TCLink
from mininet.log import setLogLevel
from mininet.net import Mininet
from mininet.util import buildTopo, customClass


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def port_stats(switch):
    return {p["interface"]: p for p in json.loads(switch.ctl("--json", "ports"))}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", required=True, help="python/sharebuf/mininet.py")
    ap.add_argument("--rundir", required=True, help="configurations, logs and stats go here")
    ap.add_argument("--prefix", required=True, help="switch and host name prefix (unique per run)")
    args = ap.parse_args()

    # What `mn --custom FILE` does with the file.
    custom = {}
    with open(args.module, encoding="utf-8") as f:
        exec(compile(f.read(), args.module, "exec"), custom, custom)  # pylint: disable=exec-used
    topo = buildTopo(custom["topos"], f"leafspine,2,2,2,prefix={args.prefix},bw=100")
    switch = customClass(custom["switches"], f"sharebuf,rundir={args.rundir}")

    setLogLevel("warning")
    net = Mininet(topo=topo, switch=switch, controller=None, link=TCLink, autoSetMacs=True,
                  ipBase="198.18.0.0/24", build=False)
    # A ctest timeout's SIGTERM tears the network down too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        net.build()
        net.start()  # no staticArp(): the switches give the hosts each other's addresses
        run_checks(net, args, custom["links_of"])
    finally:
        net.stop()
    for s in net.switches:  # sharebufd writes its stats file as it stops
        if not os.path.exists(os.path.join(args.rundir, f"{s.name}.stats.json")):
            fail(f"{s.name}: no stats file in {args.rundir}")
    print("mininet_fabric: all checks passed")


def run_checks(net, args, links_of):
    p = args.prefix
    hosts = [net.get(f"{p}h{i}") for i in range(1, 5)]
    leaf1, spines = net.get(f"{p}l1"), [net.get(f"{p}s1"), net.get(f"{p}s2")]

    loss = net.pingAll(timeout="1")
    if loss != 0:
        fail(f"pingAll lost {loss} %")

    # A broadcast from h1 (leaf 1): h2 gets it, no spine sees it.
    before = {s.name: sum(x["rx_frames"] for x in port_stats(s).values()) for s in spines}
    h2_port = next(i.name for i, o in links_of(leaf1) if o is hosts[1])
    h2_before = port_stats(leaf1)[h2_port]["tx_frames"]
    hosts[0].cmd("ping -b -c 20 -i 0.05 -W 1 198.18.0.255 >/dev/null 2>&1")
    time.sleep(0.3)
    for s in spines:
        got = sum(x["rx_frames"] for x in port_stats(s).values()) - before[s.name]
        if got != 0:
            fail(f"{s.name} received {got} frames while h1 broadcast (floods must stay on edge "
                 "ports)")
    h2_got = port_stats(leaf1)[h2_port]["tx_frames"] - h2_before
    if h2_got < 20:
        fail(f"the other host of the leaf got {h2_got} of 20 broadcasts")

    # 16 TCP flows from h1 (leaf 1) to h4 (leaf 2): both spines carry some.
    uplinks = [i.name for i, o in links_of(leaf1) if o in spines]
    tx0 = {u: port_stats(leaf1)[u]["tx_bytes"] for u in uplinks}
    hosts[3].cmd("iperf3 -s -1 -D -p 5301")
    time.sleep(0.5)
    out = hosts[0].cmd(f"timeout 20 iperf3 -c {hosts[3].IP()} -p 5301 -t 4 -P 16 -J")
    try:
        rx_bps = json.loads(out[out.index("{"):])["end"]["sum_received"]["bits_per_second"]
    except (ValueError, KeyError) as e:
        fail(f"iperf3 gave no result ({e}): {out[-400:]}")
    tx = {u: port_stats(leaf1)[u]["tx_bytes"] - tx0[u] for u in uplinks}
    total = sum(tx.values())
    print(f"16 flows across the fabric: {rx_bps / 1e6:.1f} Mbit/s; leaf 1's uplinks sent "
          + ", ".join(f"{u} {b / 1e6:.1f} MB" for u, b in tx.items()))
    # Two spines, 100 Mbit/s each way: the flows' ECMP share limits the rate to what the busier
    # uplink carries; one host link (100 Mbit/s) is the bottleneck when they spread.
    if rx_bps < 50e6:
        fail(f"{rx_bps / 1e6:.1f} Mbit/s across the fabric (expected above 50)")
    if min(tx.values()) < 0.02 * total:  # one flow of 16 carries about 6 %
        fail(f"ECMP put {min(tx.values())} of {total} bytes on one uplink")
    for s in net.switches:
        for name, x in port_stats(s).items():
            if x.get("flooded", 0) != 0 and s in spines:
                fail(f"spine port {name} flooded {x['flooded']} frames")

    for s in net.switches:
        text = s.ctl("config")
        if not re.search(r"role = .fabric.", text):
            fail(f"{s.name}'s effective configuration has no fabric port:\n{text}")
        if not os.path.exists(os.path.join(args.rundir, f"{s.name}.toml")):
            fail(f"{s.name}: no configuration written in {args.rundir}")


if __name__ == "__main__":
    main()
