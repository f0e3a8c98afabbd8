"""sharebuf switches in Mininet: one sharebufd per Mininet switch, over that switch's interfaces.

    from mininet.net import Mininet
    from sharebuf.mininet import SharebufSwitch, LeafSpineTopo
    net = Mininet(topo=LeafSpineTopo(spines=2, leaves=4, hosts_per_leaf=2, bw=100),
                  switch=SharebufSwitch, controller=None, link=TCLink, autoSetMacs=True,
                  ipBase="198.18.0.0/24")
    net.start()

or, for any topology of Mininet's own (no OpenFlow controller: sharebufd forwards by itself):

    mn --custom python/sharebuf/mininet.py --switch sharebuf --controller none \\
       --topo leafspine,2,4,2 --link tc,bw=100

Each switch's configuration is written from the topology (docs/fabric.md): one [[ports]] table
per interface, a port facing another switch with role = "fabric" (it never learns and is never
flooded to), its rate from the link's `bw` (Mbit/s), and one [[routes]] entry per host MAC: the
port toward the host on its shortest paths, an ECMP group where several neighbours are equally
close. Routes only ever move a frame closer to its host, and floods never cross a fabric link,
so no frame can loop. ARP's broadcasts do not cross fabric links either: every host gets the
others' addresses statically as its switch starts (what `mn --arp` does). What is not topology (buffer, policy, classes, trimming) comes from a base
TOML file (`config=`, default: DT over 1.68 MB of 80-byte cells); the effective configuration is
written beside each switch's log and stats in `rundir`.

Mininet's TCLink shapes both ends of a link with tc; a sharebuf switch removes the qdisc from its
own interfaces and shapes them itself (the port's `rate`): the queue that fills is the switch's
shared buffer, not a tc queue in front of it. Hosts keep theirs (a NIC's rate).
"""

import inspect
import os
import shutil
import subprocess
import time
from collections import deque

from mininet.log import info
from mininet.node import Switch
from mininet.topo import Topo

# `mn --custom FILE` runs this file with exec(), without __file__: the code object knows it.
HERE = os.path.dirname(os.path.abspath(inspect.currentframe().f_code.co_filename))
CHECKOUT = os.path.abspath(os.path.join(HERE, "..", ".."))

DEFAULT_BASE = """[buffer]
size = "21000 cells"
cell_bytes = 80

[policy]
name = "dt"
alpha = 1.0
"""


def find_program(name, explicit=None, env=None):
    """`explicit`, else $env, else this checkout's build, else PATH (the Debian package)."""
    for candidate in (explicit, os.environ.get(env) if env else None,
                      os.path.join(CHECKOUT, "build", "mgmt", name)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
    if found:
        return found
    raise RuntimeError(f"{name} not found: build it (./run.sh build), install the sharebuf "
                       f"package, or set ${env}")


def links_of(node):
    """(this node's interface, the node at the other end) for each linked interface."""
    out = []
    for intf in node.intfList():
        link = getattr(intf, "link", None)
        if link is None:
            continue
        other = link.intf2 if link.intf1 is intf else link.intf1
        out.append((intf, other.node))
    return out


def is_switch(node):
    return isinstance(node, Switch)


def hosts_reachable(switch):
    """The hosts reachable from `switch` through switches, by name."""
    seen, queue = {switch}, deque([switch])
    while queue:
        node = queue.popleft()
        if not is_switch(node):
            continue
        for _, other in links_of(node):
            if other not in seen:
                seen.add(other)
                queue.append(other)
    return sorted((n for n in seen if not is_switch(n)), key=lambda n: n.name)


def routes_for(switch):
    """[(host MAC, [interface names])] for `switch`: toward each host interface of the network,
    the ports on its shortest paths (one: a plain route; several: an ECMP group). Hosts are never
    transit nodes."""
    routes = []
    for host in hosts_reachable(switch):
        for hintf, attached in links_of(host):
            if not is_switch(attached):
                continue
            # Hops from this host interface to each switch (1: the switch it is plugged into).
            dist, queue = {attached: 1}, deque([attached])
            while queue:
                node = queue.popleft()
                for _, other in links_of(node):
                    if is_switch(other) and other not in dist:
                        dist[other] = dist[node] + 1
                        queue.append(other)
            if switch not in dist:
                continue
            if switch is attached:
                ports = [i.name for i, other in links_of(switch) if i.link is hintf.link]
            else:
                ports = [i.name for i, other in links_of(switch)
                         if is_switch(other) and dist.get(other) == dist[switch] - 1]
            if ports:
                routes.append((hintf.MAC(), ports))
    return routes


def toml_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class SharebufSwitch(Switch):
    """A Mininet switch that is one sharebufd over its interfaces, in the root namespace.

    Parameters (also as `--switch sharebuf,config=FILE,...`): config: the base TOML (no [[ports]],
    [[routes]] or [[static_macs]]: those come from the topology); rate: every port's rate
    (`100Mbit`), over the links' bw; rundir: where the configuration, log, stats file and control
    socket go (default /tmp/sharebuf-mininet); sharebufd, sharebufctl: the programs (default: this
    checkout's build, then PATH); args: more sharebufd arguments (a list, e.g. ["--set",
    "policy.alpha=2"]).
    """

    def __init__(self, name, config=None, rate=None, rundir=None, sharebufd=None,
                 sharebufctl=None, args=None, **params):
        params.setdefault("inNamespace", False)
        Switch.__init__(self, name, **params)
        self.base_config = config
        self.rate = rate
        self.rundir = rundir or "/tmp/sharebuf-mininet"
        self.sharebufd = find_program("sharebufd", sharebufd, "SHAREBUFD")
        self.sharebufctl = find_program("sharebufctl", sharebufctl, "SHAREBUFCTL")
        self.extra_args = list(args or [])
        self.proc = None

    def path(self, suffix):
        return os.path.join(self.rundir, f"{self.name}{suffix}")

    def port_rate(self, intf):
        if self.rate:
            return str(self.rate)
        bw = intf.params.get("bw")
        return f"{bw}Mbit" if bw else None

    def config_text(self):
        base = DEFAULT_BASE
        if self.base_config:
            with open(self.base_config, encoding="utf-8") as f:
                base = f.read()
        for table in ("[[ports]]", "[[routes]]", "[[static_macs]]"):
            if table in base:
                raise ValueError(f"{self.base_config}: {table} comes from the topology; "
                                 "leave it out of the base configuration")
        out = [base.rstrip("\n"), "", f"# Written by sharebuf.mininet for switch {self.name}."]
        for intf, other in links_of(self):
            out += ["", "[[ports]]", f"interface = {toml_string(intf.name)}"]
            rate = self.port_rate(intf)
            if rate:
                out.append(f"rate = {toml_string(rate)}")
            if is_switch(other):
                out.append('role = "fabric"')
            out.append(f"# toward {other.name}")
        for mac, ports in routes_for(self):
            out += ["", "[[routes]]", f"mac = {toml_string(mac)}",
                    "ports = [" + ", ".join(toml_string(p) for p in ports) + "]"]
        return "\n".join(out) + "\n"

    def start(self, controllers):
        os.makedirs(self.rundir, exist_ok=True)
        with open(self.path(".toml"), "w", encoding="utf-8") as f:
            f.write(self.config_text())
        offloads = ["tx", "off", "tso", "off", "gso", "off", "gro", "off"]
        for intf, other in links_of(self):
            # The switch shapes its ports itself: no tc queue in front of its buffer.
            subprocess.run(["tc", "qdisc", "del", "dev", intf.name, "root"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            # Offloads off at both ends: the switch forwards frames of the MTU, not a host's 64 KB
            # super-frames (it would count them as oversize and drop them), and a host's frames
            # carry their checksums.
            subprocess.run(["ethtool", "-K", intf.name, *offloads],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            # The root namespace's IPv6 would send its own router solicitations and MLD reports
            # out of the switch's ports: frames no host sent, flooded by the switch next door.
            try:
                with open(f"/proc/sys/net/ipv6/conf/{intf.name}/disable_ipv6", "w") as f:
                    f.write("1")
            except OSError:
                pass
            if not is_switch(other):
                peer = intf.link.intf2 if intf.link.intf1 is intf else intf.link.intf1
                other.cmd("ethtool -K", peer.name, *offloads, ">/dev/null 2>&1")
        self.static_arp()
        cmd = [self.sharebufd, "--config", self.path(".toml"), "--socket", self.path(".sock"),
               "--stats-file", self.path(".stats.json"), "--set",
               f"switch.name={toml_string(self.name)}"] + self.extra_args
        log = open(self.path(".log"), "w", encoding="utf-8")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(self.path(".log"), encoding="utf-8", errors="replace") as f:
                text = f.read()
            if "running:" in text:
                info(f"*** {self.name}: sharebufd pid {self.proc.pid}\n")
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name}: sharebufd exited at start:\n{text}")
            time.sleep(0.1)
        self.stop_daemon()
        raise RuntimeError(f"{self.name}: sharebufd did not start within 10 s "
                           f"(log: {self.path('.log')})")

    def static_arp(self):
        """Every host plugged into this switch learns every reachable host's MAC statically (as
        `mn --arp` would): ARP's broadcasts never cross a fabric link, so without it a host could
        not resolve one behind another switch."""
        others = [(i.IP(), i.MAC()) for h in hosts_reachable(self) for i, _ in links_of(h)
                  if i.IP()]
        for intf, host in links_of(self):
            if is_switch(host):
                continue
            peer = intf.link.intf2 if intf.link.intf1 is intf else intf.link.intf1
            cmds = [f"ip neigh replace {ip} lladdr {mac} dev {peer.name} nud permanent"
                    for ip, mac in others if ip != peer.IP()]
            if cmds:
                host.cmd("; ".join(cmds))

    def ctl(self, *args):
        """sharebufctl against this switch; its standard output."""
        return subprocess.run([self.sharebufctl, "--socket", self.path(".sock"), *args],
                              check=True, capture_output=True, text=True).stdout

    def stop_daemon(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()  # sharebufd writes its stats file on exit
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def stop(self, deleteIntfs=True):
        self.stop_daemon()
        Switch.stop(self, deleteIntfs)


class LeafSpineTopo(Topo):
    """`spines` spines, `leaves` leaves with `hosts_per_leaf` hosts each; every leaf linked to
    every spine. Switch names: `prefix` + s1.. (spines) and l1.. (leaves); hosts h1.. in leaf
    order. Link options (e.g. bw=100, delay="10us") apply to every link."""

    def build(self, spines=2, leaves=4, hosts_per_leaf=2, prefix="", **link_opts):
        spines, leaves, hosts_per_leaf = int(spines), int(leaves), int(hosts_per_leaf)
        spine = [self.addSwitch(f"{prefix}s{i + 1}", dpid=f"{0x100 + i:x}")
                 for i in range(spines)]
        n = 0
        for j in range(leaves):
            leaf = self.addSwitch(f"{prefix}l{j + 1}", dpid=f"{0x200 + j:x}")
            for s in spine:
                self.addLink(leaf, s, **link_opts)
            for _ in range(hosts_per_leaf):
                n += 1
                self.addLink(self.addHost(f"{prefix}h{n}"), leaf, **link_opts)


# For `mn --custom`: --switch sharebuf, --topo leafspine,SPINES,LEAVES,HOSTS_PER_LEAF.
switches = {"sharebuf": SharebufSwitch}
topos = {"leafspine": LeafSpineTopo}
