#!/usr/bin/python3
"""Hostile control-socket peers for the hostile_peers suite (docs/security.md).

Each attack runs for a bounded time, as the user given by --user (e.g. nobody: a peer allowed on
the socket that is not an operator), and prints one JSON line of what it saw.

  watchers N   open N connections, each asking for a watch (--interval-us); --read keeps reading
               the samples (a fast watcher), otherwise they only stay open
  flood        loop connect() without sending, holding the newest --hold connections
  pipeline N   N connections writing {"cmd":"version"} lines as fast as the socket takes them;
               --read reads the replies, otherwise they are never read
  idle N       N connections that send nothing
  stall N      N connections each sending --bytes of a request line it never finishes, then
               holding them for --seconds (or until SIGTERM)
  ask N        N one-shot connections, each asking for status (one at a time, --interval-us
               apart); how many were answered, each within 5 s
"""
import argparse
import json
import os
import pwd
import selectors
import signal
import socket
import sys
import time


# Set by SIGTERM: an attack that holds until --seconds ends at once and still reports.
STOPPED = []


def connect(path, blocking=True):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    s.setblocking(blocking)
    return s


def watchers(a):
    socks, ok, refused = [], 0, 0
    sel = selectors.DefaultSelector()
    req = json.dumps({"cmd": "watch", "args": {"interval_us": a.interval_us}}).encode() + b"\n"
    for _ in range(a.n):
        try:
            s = connect(a.socket)
            s.sendall(req)
            f = s.makefile("rb")
            reply = json.loads(f.readline() or b"{}")
            ok += reply.get("ok") is True
            refused += reply.get("ok") is False
            s.setblocking(False)
            socks.append(s)
            if a.read:
                sel.register(s, selectors.EVENT_READ)
        except OSError:
            refused += 1
    samples = 0
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        if not a.read:
            time.sleep(0.05)
            continue
        for key, _ in sel.select(timeout=0.05):
            try:
                data = key.fileobj.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                sel.unregister(key.fileobj)
                continue
            samples += data.count(b"\n")
    return {"watching": ok, "refused": refused, "samples": samples}


def flood(a):
    held, connects, failures = [], 0, 0
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        try:
            held.append(connect(a.socket))
            connects += 1
        except OSError:
            failures += 1
        if len(held) > a.hold:
            held.pop(0).close()
    return {"connects": connects, "failures": failures}


def pipeline(a):
    line = b'{"cmd":"version"}\n'
    chunk = line * 4096
    socks = [connect(a.socket, blocking=False) for _ in range(a.n)]
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_WRITE | (selectors.EVENT_READ if a.read else 0))
    sent, replies, closed, budget = 0, 0, 0, a.bytes * a.n
    end = time.monotonic() + a.seconds
    while time.monotonic() < end and len(sel.get_map()) > 0:
        events = sel.select(timeout=0.05)
        for key, ev in events:
            s = key.fileobj
            try:
                if ev & selectors.EVENT_READ:
                    data = s.recv(1 << 16)
                    replies += data.count(b"\n")
                    if not data:
                        raise ConnectionResetError
                if ev & selectors.EVENT_WRITE and sent < budget:
                    sent += s.send(chunk)
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                sel.unregister(s)  # the daemon closed it (a limit): counted, not retried
                closed += 1
        if sent >= budget and not a.read:
            time.sleep(0.05)
    return {"sent_bytes": sent, "replies": replies, "closed_by_daemon": closed}


def idle(a):
    socks = []
    for _ in range(a.n):
        try:
            socks.append(connect(a.socket))
        except OSError:
            break
    time.sleep(a.seconds)
    return {"open": len(socks)}


def stall(a):
    partial = b'{"cmd":"version","id":"' + b"x" * a.bytes
    socks = [connect(a.socket, blocking=False) for _ in range(a.n)]
    sent = [0] * a.n
    closed = 0
    end = time.monotonic() + a.seconds
    while time.monotonic() < end and not STOPPED:
        for i, s in enumerate(socks):
            if s is None or sent[i] >= len(partial):
                continue
            try:
                sent[i] += s.send(partial[sent[i]:])
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                socks[i] = None
                closed += 1
        time.sleep(0.01)
    return {"connections": a.n, "sent_bytes": sum(sent), "closed_by_daemon": closed}


def ask(a):
    answered = 0
    for _ in range(a.n):
        try:
            s = connect(a.socket)
            s.settimeout(5)  # answered within 5 s, or not at all
            s.sendall(b'{"cmd":"status"}\n')
            f = s.makefile("rb")
            answered += json.loads(f.readline() or b"{}").get("ok") is True
            s.close()
        except (OSError, ValueError):
            pass
        time.sleep(a.interval_us / 1e6)
    return {"asked": a.n, "answered": answered}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("attack", choices=["watchers", "flood", "pipeline", "idle", "stall", "ask"])
    p.add_argument("n", type=int, nargs="?", default=1, help="connections (not for flood)")
    p.add_argument("--socket", required=True, help="the daemon's control socket")
    p.add_argument("--user", help="run as this user (e.g. nobody); needs root")
    p.add_argument("--seconds", type=float, default=5, help="how long the attack lasts")
    p.add_argument("--interval-us", type=int, default=60_000_000,
                   help="watchers: interval; ask: pause between requests")
    p.add_argument("--read", action="store_true", help="watchers/pipeline: read what comes back")
    p.add_argument("--hold", type=int, default=64, help="flood: connections held at once")
    p.add_argument("--bytes", type=int, default=40 << 20,
                   help="pipeline, stall: bytes per connection")
    a = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: STOPPED.append(True))
    if a.user:
        pw = pwd.getpwnam(a.user)
        os.setgroups([])
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)
    attacks = {"watchers": watchers, "flood": flood, "pipeline": pipeline, "idle": idle,
               "stall": stall, "ask": ask}
    result = attacks[a.attack](a)
    result["attack"] = a.attack
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
