"""One fabric, live and simulated: experiments/e8/live-fabric.toml run as a Mininet leaf-spine of
sharebufd switches with real Linux hosts (python/sharebuf/mininet.py) and as sharebuf-sim's ns-3
fabric, per policy, into OUT/<policy>-<rate>mbit/{live,sim}/. The hosts run the scenario's
[transport] cc and ecn (newreno is Linux's reno); a kernel without that cc stops the run, and
every host's setting is read back.

Per policy: a Mininet network is built; an idle ping across the fabric gives the base RTT, and
the ns-3 links get the one-way delay that reproduces it; a 1 ms sharebuf-sim run with --record
writes each switch's configuration from the scenario's [switches] tables, and each live sharebufd
runs exactly that (its [[ports]] replaced by the Mininet interfaces, with roles and routes). With
--arrivals ns3 (the default) sharebuf-sim then runs the scenario for the same time with the
measured delay and the same policy, and every live host replays the flows ns-3 delivered to it
(sharebuf-tg schedule: same start times, sizes and senders, a new connection per flow, the
clients' zero one wall-clock instant). With --arrivals own every host runs a web-search client to
the hosts of the other leaves at the scenario's load and one query client per other leaf at a
third of the scenario's rate (a Poisson process split three ways: the responders' leaf drawn per
query, as in ns-3) asking its two hosts for the burst on pooled connections, and ns-3 runs after.
The switches' effective configurations and stats files are kept; OUT/<policy>-<rate>mbit/run.json
records what was set. experiments/lib/fabric_report.py makes the table.
"""

import argparse
import csv
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import tomllib

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

POLICIES = {
    "dt": '{name = "dt", alpha = 0.5}',
    "abm": '{name = "abm", alpha = 0.5, first_rtt_alpha = 64}',
    "credence": ('{name = "credence", oracle = "forest", model = "' +
                 os.path.join(ROOT, "data", "credence-forest.json") + '", base_rtt_us = RTT}'),
}


# The Linux congestion control for each of the scenario's (ns-3's TcpNewReno is Linux's reno).
LINUX_CC = {"dctcp": "dctcp", "cubic": "cubic", "newreno": "reno"}


def live_transport(transport, available):
    """(Linux congestion control, net.ipv4.tcp_ecn) that run the scenario's [transport] on the
    live hosts; exits when the kernel (`available`: tcp_available_congestion_control) lacks it.
    A host whose sysctl failed would run the namespace's default (bbr here) unnoticed."""
    cc = transport.get("cc", "dctcp")
    ecn = transport.get("ecn", cc == "dctcp")
    if cc not in LINUX_CC:
        sys.exit(f"fabric_live: [transport] cc = {cc!r}: not one of {', '.join(LINUX_CC)}")
    if LINUX_CC[cc] not in available.split():
        sys.exit(f"fabric_live: [transport] cc = {cc!r} needs Linux's {LINUX_CC[cc]}, which this "
                 f"kernel lacks (tcp_available_congestion_control: {available.strip()}); use a "
                 "scenario whose cc it has, e.g. cc = \"newreno\" with ecn = true")
    return LINUX_CC[cc], 1 if ecn else 0


def log(msg):
    print(f"[fabric_live {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def switch_bases(sim, scenario, policy, out):
    """Each switch's configuration without its ports, from a 1 ms sharebuf-sim --record."""
    rec = os.path.join(out, "sim-configs")
    subprocess.run([sim, scenario, "--quiet", "--set", 'run.duration="1ms"', "--set",
                    f"switches.policy={policy}", "--record", rec, "--out",
                    os.path.join(rec, "run")], check=True, stdout=subprocess.DEVNULL)
    bases = {}
    for name in ("leaf", "spine"):
        with open(os.path.join(rec, f"{name}0", "switch.toml"), encoding="utf-8") as f:
            text = f.read()
        head, _, ports = text.partition("[[ports]]")
        if re.search(r"^\[(?!\[ports\]\])", ports, re.M):
            raise RuntimeError(f"{name}0/switch.toml has tables after its [[ports]]")
        path = os.path.join(out, f"{name}-base.toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(head)
        bases[name] = path
    return bases


def cpu_times():
    """(total, idle + iowait) jiffies of all CPUs, from /proc/stat."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return sum(fields), fields[3] + fields[4]


def ping_rtt_us(src, dst):
    out = src.cmd(f"ping -c 60 -i 0.02 -q -W 1 {dst.IP()} >/dev/null; "
                  f"ping -c 100 -i 0.01 -W 1 {dst.IP()}")
    rtts = [float(x) for x in re.findall(r"time=([0-9.]+) ms", out)]
    if len(rtts) < 50:
        raise RuntimeError(f"idle ping across the fabric: {len(rtts)} of 100 answered")
    return statistics.median(rtts) * 1000.0, rtts


def write_schedules(flows_csv, hosts, out):
    """sharebuf-tg schedules from ns-3's flows.csv: a flow from host src to host dst is, live, a
    response src's server sends to a client on dst; one file per client host, h<N>-schedule.in.csv.
    Returns {host index: path}."""
    rows = {}
    with open(flows_csv, newline="") as fh:
        for r in csv.DictReader(fh):
            if r["kind"] not in ("background", "incast"):
                continue
            b = int(r["bytes"])
            kind = ("query" if r["kind"] == "incast" else
                    "short" if b < 100_000 else "long" if b >= 1_000_000 else "medium")
            rows.setdefault(int(r["dst"]), []).append(
                f"{int(r['start_ns']) / 1e6:.6f},{kind},{r['query']},{hosts[int(r['src'])].IP()}:5500,{b}")
    paths = {}
    for dst, lines in rows.items():
        paths[dst] = os.path.join(out, f"h{dst + 1}-schedule.in.csv")
        with open(paths[dst], "w", encoding="utf-8") as f:
            f.write("start_ms,kind,query,server,bytes\n" + "\n".join(lines) + "\n")
    return paths


def run_live(args, scenario, policy_name, policy, bases, out, rtt_out, before_traffic):
    """before_traffic(rtt) runs once the idle RTT is known; it returns ns-3's flows.csv whose
    arrivals the hosts replay, or None for the live clients' own Poisson arrivals."""
    from mininet.link import TCLink
    from mininet.log import setLogLevel
    from mininet.net import Mininet
    from sharebuf.mininet import LeafSpineTopo, SharebufSwitch

    topo_cfg, wl = scenario["topology"], scenario["workload"]
    rate_mbit = args.host_rate or int(re.match(r"(\d+)Mbit", topo_cfg["host_rate"]).group(1))
    spines, leaves, per_leaf = topo_cfg["spines"], topo_cfg["leaves"], topo_cfg["hosts_per_leaf"]

    class Topo(LeafSpineTopo):
        def addSwitch(self, name, **opts):  # leaves and spines get their own bases
            role = "spine" if name.startswith(f"{args.prefix}s") else "leaf"
            return LeafSpineTopo.addSwitch(self, name, config=bases[role], **opts)

    rundir = os.path.join(out, "switches")
    os.makedirs(rundir, exist_ok=True)
    setLogLevel("warning")

    def switch(name, **params):
        return SharebufSwitch(name, rundir=rundir, **params)

    net = Mininet(topo=Topo(spines=spines, leaves=leaves, hosts_per_leaf=per_leaf,
                            prefix=args.prefix, bw=rate_mbit),
                  switch=switch, controller=None, link=TCLink, autoSetMacs=True,
                  ipBase="198.18.0.0/24")
    procs = []
    try:
        net.start()
        hosts = [net.get(f"{args.prefix}h{i + 1}") for i in range(leaves * per_leaf)]
        leaf_of = [i // per_leaf for i in range(len(hosts))]
        tr = scenario["transport"]
        cc, ecn = args.live_cc
        for h in hosts:
            h.cmd(f"sysctl -qw net.ipv4.tcp_congestion_control={cc} net.ipv4.tcp_ecn={ecn} "
                  "net.ipv4.tcp_reflect_tos=1")
            got = h.cmd("sysctl -n net.ipv4.tcp_congestion_control net.ipv4.tcp_ecn").split()
            if got != [cc, str(ecn)]:
                sys.exit(f"fabric_live: {h.name} runs {' / '.join(got)} after setting "
                         f"tcp_congestion_control={cc} tcp_ecn={ecn}")
            h.cmd(f"ip route replace 198.18.0.0/24 dev {h.defaultIntf().name} "
                  f"rto_min {tr['rto_min']} initcwnd {tr['initial_cwnd']}")
            route = h.cmd("ip route show 198.18.0.0/24")
            if "rto_min" not in route or "initcwnd" not in route:
                sys.exit(f"fabric_live: {h.name}: the route did not take rto_min and initcwnd: "
                         f"{route.strip()}")
            if args.host_burst:
                # Mininet's TCLink shapes a host with htb burst 15k: up to ten frames leave at
                # once after idle, where ns-3's host sends each at its link's rate.
                said = h.cmd(f"tc class change dev {h.defaultIntf().name} parent 5:0 classid 5:1 "
                            f"htb rate {rate_mbit}Mbit burst {args.host_burst} "
                            f"cburst {args.host_burst}")
                errors = [x for x in said.splitlines() if x.strip() and "Warning:" not in x]
                if errors:  # (htb warns of its quantum at low rates: harmless)
                    sys.exit(f"fabric_live: {h.name}: tc class change: {errors[0]}")
        rtt_out["live_cc"], rtt_out["live_ecn"] = cc, ecn
        rtt_us, rtts = ping_rtt_us(hosts[0], hosts[-1])
        rtt_out["rtt_us"] = rtt_us
        rtt_out["rtt_us_all"] = rtts
        log(f"{policy_name}: idle RTT h1 -> h{len(hosts)} {rtt_us:.0f} us (median of 100)")
        flows_csv = before_traffic(rtt_out)
        seconds = args.seconds
        tg = args.tg
        cdf = os.path.join(ROOT, "data", "websearch-flow-size-cdf.txt")
        buffer_bytes = args.leaf_buffer_bytes
        size = int(buffer_bytes * float(wl["incast"]["size"].rstrip("%")) / 100)
        for i, h in enumerate(hosts):
            procs.append(h.popen([tg, "server", "--port", "5500", "--duration",
                                  str(seconds + 40)], stdout=subprocess.DEVNULL,
                                 stderr=open(os.path.join(out, f"h{i + 1}-server.log"), "w")))
        time.sleep(1)
        if flows_csv:
            # Every client's zero at one wall-clock instant: the hosts' flows keep ns-3's
            # relative timing across hosts too.
            start_at = time.time() + 2
            schedules = write_schedules(flows_csv, hosts, out)
            rtt_out["arrivals_flows"] = sum(
                sum(1 for _ in open(p, encoding="utf-8")) - 1 for p in schedules.values())
            for i, path in sorted(schedules.items()):
                procs.append(hosts[i].popen(
                    [tg, "schedule", "--file", path, "--start-at", f"{start_at:.3f}", "--pool",
                     str(args.query_pool), "--duration", str(seconds + 10),
                     "--csv", os.path.join(out, f"h{i + 1}-schedule.csv")],
                    stdout=open(os.path.join(out, f"h{i + 1}-schedule.txt"), "w"),
                    stderr=subprocess.STDOUT))
        for i, h in enumerate(hosts if not flows_csv else []):
            others = [f"{hosts[j].IP()}:5500" for j in range(len(hosts)) if leaf_of[j] != leaf_of[i]]
            procs.append(h.popen(
                [tg, "websearch", "--servers", ",".join(others), "--load",
                 str(wl["websearch"]["load"]), "--link-rate", f"{rate_mbit}Mbit", "--cdf", cdf,
                 "--duration", str(seconds), "--timeout", "10", "--seed", str(100 + i),
                 "--csv", os.path.join(out, f"h{i + 1}-websearch.csv")],
                stdout=open(os.path.join(out, f"h{i + 1}-websearch.txt"), "w"),
                stderr=subprocess.STDOUT))
            for leaf in range(leaves):
                if leaf == leaf_of[i]:
                    continue
                servers = [f"{hosts[j].IP()}:5500" for j in range(len(hosts)) if leaf_of[j] == leaf]
                procs.append(h.popen(
                    [tg, "query", "--servers", ",".join(servers), "--size", str(size), "--rate",
                     str(wl["incast"]["rate"] / (leaves - 1)), "--pool", "1", "--duration",
                     str(seconds), "--timeout", "10", "--seed", str(1000 + 10 * i + leaf),
                     "--csv", os.path.join(out, f"h{i + 1}-query-leaf{leaf + 1}.csv")],
                    stdout=open(os.path.join(out, f"h{i + 1}-query-leaf{leaf + 1}.txt"), "w"),
                    stderr=subprocess.STDOUT))
        log(f"{policy_name}: live workload for {seconds} s ({len(procs)} processes)")
        cpu0 = cpu_times()
        deadline = time.monotonic() + seconds + 30
        for p in procs[len(hosts):]:
            try:
                p.wait(timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.terminate()
        cpu1 = cpu_times()
        # The machine's share busy while the workload ran (all CPUs): where it nears 1, the
        # switches run late and catch up in bursts (shaper_catchup_bytes in their stats).
        rtt_out["cpu_busy"] = 1 - (cpu1[1] - cpu0[1]) / max(1, cpu1[0] - cpu0[0])
        for s in net.switches:
            with open(os.path.join(rundir, f"{s.name}.effective.toml"), "w") as f:
                f.write(s.ctl("config"))
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        net.stop()


def run_sim(args, sim, name, rate, record, out):
    """sharebuf-sim on the scenario with the live fabric's delay; what it set goes in `record`."""
    rtt_us = record["rtt_us"]
    # Four links each way; a 84-byte ping frame's serialisation at each of the 8 hops.
    per_hop_ser_us = 84 * 8 / rate
    delay_us = max(1.0, (rtt_us - 8 * per_hop_ser_us) / 8)
    policy = record.get("policy_live", POLICIES[name].replace("RTT", str(int(rtt_us))))
    # Arrivals for `seconds` in both (ns-3 starts none after run.flows_until of its run,
    # the live clients none after --duration), then as long as a live client waits for
    # what it started (sharebuf-tg --timeout 10) to finish.
    total = args.seconds + 10
    sets = [f'topology.delay="{delay_us:.1f}us"', f"switches.policy={policy}",
            f'topology.host_rate="{rate}Mbit"', f'run.duration="{total}s"',
            f"run.flows_until={args.seconds / total:.6f}"] + args.sim_set
    log(f"{name}: sharebuf-sim {args.seconds} s with " + " ".join(sets))
    cmd = [sim, args.scenario, "--quiet", "--out", os.path.join(out, "sim")]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    record["sim_sets"] = sets
    record["policy_sim"] = policy


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--scenario", default=os.path.join(ROOT, "experiments/e8/live-fabric.toml"))
    ap.add_argument("--policies", default="dt,abm,credence")
    ap.add_argument("--seconds", type=int, default=30, help="workload time, live and simulated")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--prefix", default="fl", help="Mininet name prefix (unique per run)")
    ap.add_argument("--host-rate", type=int, default=0, metavar="MBIT",
                    help="every link's rate, live and in ns-3, over the scenario's host_rate")
    ap.add_argument("--sim-set", action="append", default=[], metavar="KEY=VALUE",
                    help="one more sharebuf-sim --set (repeatable; recorded in run.json), e.g. "
                         "transport.syn_retries=12")
    ap.add_argument("--skip-live", action="store_true",
                    help="only the ns-3 side, with the RTT a previous live run recorded in OUT")
    ap.add_argument("--skip-sim", action="store_true")
    ap.add_argument("--arrivals", choices=("ns3", "own"), default="ns3",
                    help="ns3 (default): ns-3 runs first and the live hosts replay its flows "
                         "(sharebuf-tg schedule: same times, sizes, hosts; a new connection per "
                         "flow, as ns-3 opens one); own: each engine draws its own Poisson "
                         "arrivals (live: websearch and query clients, responses on pooled "
                         "connections)")
    ap.add_argument("--host-burst", type=int, default=0, metavar="BYTES",
                    help="the hosts' htb burst and cburst instead of Mininet's 15k (recorded in "
                         "run.json)")
    ap.add_argument("--query-pool", type=int, default=0, metavar="K",
                    help="with --arrivals ns3: incast responses on K pooled connections per "
                         "responder opened before the run (no handshake per response) instead "
                         "of a new connection each (default 0, as ns-3)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sim = os.path.join(args.build, "sim", "sharebuf-sim")
    args.tg = os.path.join(args.build, "tools", "sharebuf-tg")
    os.environ.setdefault("SHAREBUFD", os.path.join(args.build, "mgmt", "sharebufd"))
    os.environ.setdefault("SHAREBUFCTL", os.path.join(args.build, "mgmt", "sharebufctl"))
    with open(args.scenario, "rb") as f:
        scenario = tomllib.load(f)
    if not args.skip_live:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control", encoding="ascii") as f:
            args.live_cc = live_transport(scenario.get("transport", {}), f.read())
    size = scenario["switches"]["buffer"]["size"]
    args.leaf_buffer_bytes = float(size.rstrip("KB")) * 1000 if size.endswith("KB") else float(size)
    rate = args.host_rate or int(re.match(r"(\d+)Mbit", scenario["topology"]["host_rate"]).group(1))
    for name in args.policies.split(","):
        out = os.path.join(args.out, f"{name}-{rate}mbit")
        os.makedirs(out, exist_ok=True)
        record = {"policy": name, "scenario": os.path.relpath(args.scenario, ROOT),
                  "seconds": args.seconds, "host_rate_mbit": rate}
        run_path = os.path.join(out, "run.json")
        if os.path.exists(run_path):
            with open(run_path, encoding="utf-8") as f:
                record = json.load(f)
        sim_done = False

        def simulate():
            run_sim(args, sim, name, rate, record, out)
            with open(run_path, "w", encoding="utf-8") as f:
                json.dump(record, f, indent=1)

        if not args.skip_live:
            # Credence's EWMAs over the fabric's base RTT: a first pass measures it.
            policy = POLICIES[name].replace("RTT", str(int(record.get("rtt_us", 300))))
            bases = switch_bases(sim, args.scenario, policy, os.path.join(out, "live"))
            record["policy_live"] = policy
            record["arrivals"] = args.arrivals
            record["query_pool"] = args.query_pool if args.arrivals == "ns3" else 1
            record["host_burst"] = args.host_burst or "15k (Mininet's)"

            def before_traffic(rtt):
                nonlocal sim_done
                record.update(rtt)
                if args.arrivals != "ns3":
                    return None
                if not args.skip_sim:
                    simulate()
                    sim_done = True
                flows = os.path.join(out, "sim", "flows.csv")
                if not os.path.exists(flows):
                    sys.exit(f"fabric_live: {flows} is missing (--arrivals ns3 with --skip-sim "
                             "needs a previous run's)")
                return flows

            rtt = {}
            run_live(args, scenario, name, policy, bases, os.path.join(out, "live"), rtt,
                     before_traffic)
            record.update(rtt)
            with open(run_path, "w", encoding="utf-8") as f:
                json.dump(record, f, indent=1)
        if not args.skip_sim and not sim_done:
            simulate()
    log("done")


if __name__ == "__main__":
    main()
