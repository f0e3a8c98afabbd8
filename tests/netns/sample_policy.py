"""Samples a running sharebufd over its control socket: every INTERVAL seconds for DURATION
seconds, one queue's occupancy (from `queues`) and the policy's state (from `policy.get`), as CSV
on stdout: t_s, occupancy_cells, then each requested field of policy.get's "state" at the queue's
flat index (e.g. gradients, incast_thresholds_cells).

usage: sample_policy.py SOCKET PORT_NAME QUEUE_INDEX INTERVAL_S DURATION_S FIELD [FIELD ...]
"""
import argparse
import json
import socket
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("socket")
    ap.add_argument("port", metavar="PORT_NAME")
    ap.add_argument("queue", type=int, metavar="QUEUE_INDEX")
    ap.add_argument("interval", type=float, metavar="INTERVAL_S")
    ap.add_argument("duration", type=float, metavar="DURATION_S")
    ap.add_argument("fields", nargs="+", metavar="FIELD")
    a = ap.parse_args()
    path, port, k, interval, duration, fields = (a.socket, a.port, a.queue, a.interval,
                                                 a.duration, a.fields)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    reader = s.makefile("r")

    def call(cmd):
        s.sendall((json.dumps({"cmd": cmd}) + "\n").encode())
        reply = json.loads(reader.readline())
        if not reply.get("ok"):
            raise SystemExit(f"{cmd}: {reply}")
        return reply["result"]

    flat = None
    print("t_s,occupancy_cells," + ",".join(fields))
    start = time.monotonic()
    while (now := time.monotonic()) - start < duration:
        queues = call("queues")
        mine = [q for q in queues if q["interface"] == port and q["queue"] == k]
        if not mine:
            raise SystemExit(f"no queue {port}/{k}")
        if flat is None:
            flat = next(i for i, q in enumerate(queues) if q is mine[0])
        state = call("policy.get")["state"]
        values = [state[f][flat] for f in fields]
        print(f"{now - start:.4f},{mine[0]['occupancy_cells']}," + ",".join(map(str, values)),
              flush=True)
        time.sleep(max(0.0, interval - (time.monotonic() - now)))


if __name__ == "__main__":
    main()
