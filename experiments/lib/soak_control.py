"""The soak's control-plane load on a running sharebufd, until SIGTERM/SIGINT or --seconds.

usage: soak_control.py SOCKET SUMMARY_JSON [--every-ms 100] [--fast-switches N] [--seconds S]
                       [--crowd-every-s 60] [--seed N]
       soak_control.py SOCKET SUMMARY_JSON --crowds N   (only the crowd, N times)

Four kinds of client, each on its own connection (threads):
  operator  every --every-ms: a random policy (policy.set, from policy.list, default
            parameters) and a random view (view.set exact, or probe with a random interval and
            delay); every reply must be ok.
  switcher  --fast-switches policy.set requests back to back (from 10 s on), so the daemon
            retires and reclaims that many policies under traffic.
  hammer    status and queues back to back on two connections; the slowest status is recorded.
  watcher   one `watch interval_us=1000` stream, read as it comes.
  crowd     every --crowd-every-s (from 20 s on): 300 idle connections and 1000 that pipeline 20
            status requests each, then one fresh status, timed (the [control] fairness bound of
            100 ms); every busy reply must arrive.
At the end it writes SUMMARY_JSON: counts per client, errors (with the first few messages),
the slowest status, the crowd's fresh-status times, and which policies it switched among.
"""
import argparse
import json
import random
import resource
import signal
import socket
import sys
import threading
import time


class Client:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # Connected blocking: a unix socket with a timeout fails with EAGAIN while the daemon's
        # listen backlog is full, instead of waiting for its turn.
        self.sock.connect(path)
        self.sock.settimeout(10)
        self.buf = b""

    def line(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the daemon closed the connection")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def request(self, cmd, **args):
        self.sock.sendall((json.dumps({"cmd": cmd, "args": args}) + "\n").encode())
        return self.line()


class CrowdError(Exception):
    pass


def crowd_once(path, idle_n=300, busy_n=1000, pipelined=20):
    """Milliseconds to a fresh status with idle_n idle connections and busy_n that pipeline
    `pipelined` status requests each; every busy reply must arrive and be ok."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = idle_n + busy_n + 64
    if soft < need <= hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    burst = b'{"cmd":"status"}\n' * pipelined
    idle, busy = [], []
    try:
        idle = [Client(path) for _ in range(idle_n)]
        busy = [Client(path) for _ in range(busy_n)]
        fresh = Client(path)
        busy.append(fresh)
        for c in busy[:-1]:
            c.sock.sendall(burst)
        t0 = time.monotonic()
        reply = fresh.request("status")
        ms = round((time.monotonic() - t0) * 1000, 2)
        if not reply.get("ok"):
            raise CrowdError(f"fresh status: {reply.get('error')}")
        for c in busy[:-1]:
            for _ in range(pipelined):
                reply = c.line()
                if not reply.get("ok"):
                    raise CrowdError(f"busy status: {reply.get('error')}")
        return ms
    finally:
        for c in idle + busy:
            c.sock.close()


class Soak:
    def __init__(self, path, every_ms, fast_switches, seed, crowd_every_s=60):
        self.path = path
        self.crowd_every = crowd_every_s
        self.crowd_ms = []
        self.every = every_ms / 1000
        self.fast_switches = fast_switches
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.counts = {"operator_policy": 0, "operator_view": 0, "switcher": 0, "status": 0,
                       "queues": 0, "watch_samples": 0}
        self.errors = []
        self.error_count = 0
        self.slowest_status_ms = 0.0
        self.policies = []

    def count(self, key, n=1):
        with self.lock:
            self.counts[key] += n

    def error(self, who, message):
        with self.lock:
            self.error_count += 1
            if len(self.errors) < 10:
                self.errors.append(f"{who}: {message}")

    def checked(self, who, reply):
        if not reply.get("ok"):
            self.error(who, reply.get("error", "no error text"))
            return False
        return True

    def usable_policies(self):
        """Every policy that builds with its defaults on this switch; the active one restored."""
        c = Client(self.path)
        active = c.request("policy.get")["result"]["name"]
        names = [p["name"] for p in c.request("policy.list")["result"]]
        for name in names:
            if c.request("policy.set", name=name).get("ok"):
                self.policies.append(name)
        c.request("policy.set", name=active)
        return self.policies

    def operator(self):
        c = Client(self.path)
        rng = random.Random(self.rng.random())
        next_t = time.monotonic()
        while not self.stop.is_set():
            if self.checked("policy.set", c.request("policy.set", name=rng.choice(self.policies))):
                self.count("operator_policy")
            if rng.random() < 0.5:
                view = {"mode": "exact"}
            else:
                interval = rng.choice([1, 5, 10, 20, 50])
                view = {"mode": "probe", "probe_interval_us": interval,
                        "probe_delay_us": interval * rng.randint(0, 4)}
            if self.checked("view.set", c.request("view.set", **view)):
                self.count("operator_view")
            next_t += self.every
            self.stop.wait(max(0.0, next_t - time.monotonic()))

    def switcher(self):
        if self.fast_switches == 0 or self.stop.wait(10):
            return
        c = Client(self.path)
        rng = random.Random(self.rng.random())
        for _ in range(self.fast_switches):
            if self.stop.is_set():
                return
            if self.checked("switcher", c.request("policy.set", name=rng.choice(self.policies))):
                self.count("switcher")

    def hammer(self):
        c = Client(self.path)
        while not self.stop.is_set():
            t0 = time.monotonic()
            if self.checked("status", c.request("status")):
                self.count("status")
            ms = (time.monotonic() - t0) * 1000
            with self.lock:
                self.slowest_status_ms = max(self.slowest_status_ms, ms)
            if self.checked("queues", c.request("queues")):
                self.count("queues")

    def crowd(self):
        if self.crowd_every <= 0 or self.stop.wait(20):
            return
        while not self.stop.is_set():
            try:
                ms = crowd_once(self.path)
                with self.lock:
                    self.crowd_ms.append(ms)
            except CrowdError as e:
                self.error("crowd", str(e))
            if self.stop.wait(self.crowd_every):
                return

    def watcher(self):
        c = Client(self.path)
        c.sock.sendall(b'{"cmd":"watch","args":{"interval_us":1000}}\n')
        n = 0
        while not self.stop.is_set():
            reply = c.line()
            if "ok" in reply and not reply["ok"]:
                self.error("watch", reply.get("error"))
                return
            n += 1
            if n % 1000 == 0:
                self.count("watch_samples", 1000)
        self.count("watch_samples", n % 1000)

    def run(self, seconds):
        def guarded(fn, *args):
            def body():
                try:
                    fn(*args)
                except Exception as e:  # noqa: BLE001 - any failure of a client is reported
                    if not self.stop.is_set():
                        self.error(fn.__name__, repr(e))
            return threading.Thread(target=body, daemon=True)

        threads = [guarded(self.operator), guarded(self.switcher), guarded(self.hammer),
                   guarded(self.hammer), guarded(self.watcher), guarded(self.crowd)]
        for t in threads:
            t.start()
        end = time.monotonic() + seconds if seconds else None
        while not self.stop.is_set() and (end is None or time.monotonic() < end):
            self.stop.wait(1)  # a short wait, so the signal handlers run
        self.stop.set()
        for t in threads:
            t.join(timeout=15)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("socket")
    ap.add_argument("summary")
    ap.add_argument("--every-ms", type=float, default=100)
    ap.add_argument("--fast-switches", type=int, default=100000)
    ap.add_argument("--seconds", type=float, default=0, help="0: until SIGTERM")
    ap.add_argument("--crowd-every-s", type=float, default=60, help="0: no crowd")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--crowds", type=int, default=0,
                    help="only run this many crowds one after another, print their fresh-status "
                         "times (ms) as JSON and exit")
    a = ap.parse_args()
    if a.crowds:
        times = [crowd_once(a.socket) for _ in range(a.crowds)]
        json.dump({"crowd_fresh_status_ms": times}, open(a.summary, "w"))
        print(json.dumps(times))
        return 0
    soak = Soak(a.socket, a.every_ms, a.fast_switches, a.seed, a.crowd_every_s)
    signal.signal(signal.SIGTERM, lambda *_: soak.stop.set())
    signal.signal(signal.SIGINT, lambda *_: soak.stop.set())
    policies = soak.usable_policies()
    print(f"soak_control: switching among {', '.join(policies)}", file=sys.stderr, flush=True)
    started = time.monotonic()
    soak.run(a.seconds)
    summary = {"seconds": round(time.monotonic() - started, 1), "every_ms": a.every_ms,
               "policies": policies,
               "counts": soak.counts, "errors": soak.error_count, "first_errors": soak.errors,
               "slowest_status_ms": round(soak.slowest_status_ms, 2),
               "crowd_fresh_status_ms": soak.crowd_ms}
    with open(a.summary, "w") as f:
        json.dump(summary, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
