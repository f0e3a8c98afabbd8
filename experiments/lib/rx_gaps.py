#!/usr/bin/python3
"""Records when a host receives each UDP frame for some destination ports: the kernel's receive
timestamp (SO_TIMESTAMPNS) and the frame's length, for measuring how a switch port spaces its
departures against its line rate. Run inside the receiving host's namespace.

usage: rx_gaps.py IFACE SECONDS OUT.csv PORT[,PORT...]
Writes `t_ns,bytes,dst_port` rows (t_ns on CLOCK_REALTIME, as the kernel stamps it).
"""
import argparse
import socket
import struct
import time

ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SCM_TIMESTAMPNS = SO_TIMESTAMPNS


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("iface")
    ap.add_argument("seconds", type=float)
    ap.add_argument("out", metavar="OUT.csv")
    ap.add_argument("ports", metavar="PORT[,PORT...]")
    a = ap.parse_args()
    iface, seconds, out, ports = a.iface, a.seconds, a.out, a.ports
    wanted = {int(p) for p in ports.split(",")}
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.settimeout(0.2)
    end = time.monotonic() + seconds
    rows = []
    while time.monotonic() < end:
        try:
            data, anc, _flags, addr = s.recvmsg(64, socket.CMSG_SPACE(16))
        except socket.timeout:
            continue
        if addr[2] == socket.PACKET_OUTGOING or len(data) < 42:
            continue
        if data[12:14] != b"\x08\x00" or data[23] != 17:  # IPv4, UDP
            continue
        ihl = (data[14] & 0x0F) * 4
        dport = struct.unpack_from("!H", data, 14 + ihl + 2)[0]
        if dport not in wanted:
            continue
        t_ns = 0
        for level, kind, value in anc:
            if level == socket.SOL_SOCKET and kind == SCM_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", value[:16])
                t_ns = sec * 1_000_000_000 + nsec
        total = struct.unpack_from("!H", data, 16)[0] + 14  # IP total length + Ethernet header
        rows.append((t_ns, total, dport))
    with open(out, "w") as f:
        f.write("t_ns,bytes,dst_port\n")
        for r in rows:
            f.write(f"{r[0]},{r[1]},{r[2]}\n")


if __name__ == "__main__":
    main()
