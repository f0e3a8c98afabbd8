#!/usr/bin/python3
"""What a receiving host gets from a trimming switch: captures the IPv4/UDP frames to some ports
for a while (AF_PACKET, inside the host's namespace) and reports, as JSON, how many arrived whole
and trimmed (exactly TRIM_SIZE bytes: what a cut leaves of a longer frame; shorter frames, such
as iperf3's first datagrams, pass whole), whether every trimmed frame's IPv4 header and UDP checksums verify, their DSCP
values and source addresses, and how many trimmed headers overtook queued data: a header of
sender packet n that arrived before a whole packet m < n of the same sender (iperf3 numbers its
datagrams). A frame counts if its UDP source or destination port is one of PORT (headers a
switch returned to their sender carry the original destination port as their source).

usage: trim_rx.py IFACE SECONDS TRIM_SIZE PORT[,PORT...]
"""
import argparse
import json
import socket
import struct
import time

ETH_P_ALL = 0x0003


def ones_sum(data, total=0):
    if len(data) % 2:
        data = data + b"\0"
    for (word,) in struct.iter_unpack("!H", data):
        total += word
        total = (total & 0xFFFF) + (total >> 16)
    return total


def ipv4_ok(ip):
    ihl = (ip[0] & 0x0F) * 4
    return ones_sum(ip[:ihl]) == 0xFFFF


def udp_ok(ip):
    ihl = (ip[0] & 0x0F) * 4
    total = struct.unpack_from("!H", ip, 2)[0]
    seg = ip[ihl:total]
    if struct.unpack_from("!H", seg, 6)[0] == 0:
        return True  # no checksum
    pseudo = ip[12:20] + struct.pack("!BBH", 0, 17, len(seg))
    return ones_sum(seg, ones_sum(pseudo)) == 0xFFFF


def analyse(frames, trim_size):
    """frames: (bytes,) in arrival order. Returns the report dict."""
    out = {"frames": 0, "whole": 0, "trimmed": 0, "trimmed_bad_ipv4": 0, "trimmed_bad_udp": 0,
           "trimmed_dscp": [], "trimmed_src": [], "overtaking_headers": 0}
    dscps, sources = set(), set()
    events = []  # (sender, seq, trimmed)
    for data in frames:
        ip = data[14:]
        out["frames"] += 1
        ihl = (ip[0] & 0x0F) * 4
        src = (ip[12:16], struct.unpack_from("!H", ip, ihl)[0])
        seq = struct.unpack_from("!I", ip, ihl + 8 + 8)[0] if len(ip) >= ihl + 20 else None
        trimmed = len(data) == trim_size
        if trimmed:
            out["trimmed"] += 1
            dscps.add(ip[1] >> 2)
            sources.add(".".join(str(b) for b in ip[12:16]))
            out["trimmed_bad_ipv4"] += not ipv4_ok(ip)
            out["trimmed_bad_udp"] += not udp_ok(ip)
        else:
            out["whole"] += 1
        if seq is not None:
            events.append((src, seq, trimmed))
    # A header overtook data if a whole packet with a lower number from its sender came later.
    lowest_later = {}
    for src, seq, trimmed in reversed(events):
        if trimmed and seq > lowest_later.get(src, seq):
            out["overtaking_headers"] += 1
        if not trimmed:
            lowest_later[src] = min(seq, lowest_later.get(src, seq))
    out["trimmed_dscp"] = sorted(dscps)
    out["trimmed_src"] = sorted(sources)
    return out


def capture(iface, seconds, ports):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.settimeout(0.2)
    end = time.monotonic() + seconds
    frames = []
    while time.monotonic() < end:
        try:
            data, addr = s.recvfrom(2048)
        except socket.timeout:
            continue
        if addr[2] == socket.PACKET_OUTGOING or len(data) < 42:
            continue
        if data[12:14] != b"\x08\x00" or data[23] != 17:
            continue
        ihl = (data[14] & 0x0F) * 4
        sport, dport = struct.unpack_from("!HH", data, 14 + ihl)
        if sport in ports or dport in ports:
            frames.append(data)
    s.close()
    return frames


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("iface")
    ap.add_argument("seconds", type=float)
    ap.add_argument("trim_size", type=int)
    ap.add_argument("ports", metavar="PORT[,PORT...]")
    a = ap.parse_args(argv)
    iface, seconds, trim_size = a.iface, a.seconds, a.trim_size
    ports = {int(p) for p in a.ports.split(",")}
    print(json.dumps(analyse(capture(iface, seconds, ports), trim_size)))


if __name__ == "__main__":
    main()
