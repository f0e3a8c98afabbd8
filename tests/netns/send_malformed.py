"""Sends malformed Ethernet frames out of an interface with a raw AF_PACKET socket.

usage: send_malformed.py IFACE COUNT
Each kind is sent COUNT times; prints the kinds (the parser's reason names) as JSON.
"""
import argparse
import json
import socket
import struct

BROADCAST = b"\xff" * 6


def eth(src, ethertype, payload):
    return BROADCAST + src + struct.pack("!H", ethertype) + payload


def ipv4(ihl=5, total=None, proto=17, payload=b""):
    header_len = ihl * 4 if ihl >= 5 else 20
    total = total if total is not None else header_len + len(payload)
    header = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total, 0, 0, 64, proto, 0,
                         bytes([198, 18, 0, 1]), bytes([198, 18, 0, 99]))
    return header + b"\0" * (header_len - 20) + payload


def frames(src):
    yield "ipv4_truncated", eth(src, 0x0800, b"\x45" + b"\0" * 9)
    yield "ipv4_bad_version", eth(src, 0x0800, b"\x65" + b"\0" * 40)
    yield "ipv4_bad_ihl", eth(src, 0x0800, ipv4(ihl=3, payload=b"\0" * 30))
    yield "ipv4_bad_length", eth(src, 0x0800, ipv4(total=1400, payload=b"\0" * 30))
    tcp_bad_offset = struct.pack("!HHIIBBHHH", 1, 2, 0, 0, 0x20, 0x02, 0, 0, 0)
    yield "tcp_bad_offset", eth(src, 0x0800, ipv4(proto=6, payload=tcp_bad_offset))
    udp_bad_len = struct.pack("!HHHH", 1, 2, 4, 0) + b"\0" * 10
    yield "udp_bad_length", eth(src, 0x0800, ipv4(proto=17, payload=udp_bad_len))
    yield "l4_truncated", eth(src, 0x0800, ipv4(proto=6, payload=b"\0" * 8))
    yield "ipv6_truncated", eth(src, 0x86DD, b"\x60" + b"\0" * 20)
    yield "ipv6_bad_length", eth(src, 0x86DD, b"\x60" + b"\0" * 3 + struct.pack("!H", 1000) +
                                 b"\x11\x40" + b"\0" * 32 + b"\0" * 8)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("iface")
    ap.add_argument("count", type=int, help="frames of each kind")
    a = ap.parse_args()
    iface, count = a.iface, a.count
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    src = s.getsockname()[4][:6]
    kinds = []
    for kind, frame in frames(src):
        for _ in range(count):
            s.send(frame)
        kinds.append(kind)
    print(json.dumps(kinds))


if __name__ == "__main__":
    main()
