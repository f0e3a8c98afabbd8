#!/usr/bin/python3
"""Scrapes a metrics URL over and over, as Prometheus does but as often as asked: every
INTERVAL seconds (0: back to back) for SECONDS seconds. Prints "SCRAPES BYTES_PER_SCRAPE".

usage: scrape_loop.py URL --interval S --seconds S
"""
import argparse
import time
import urllib.request


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("url")
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--seconds", type=float, default=10.0)
    a = ap.parse_args()
    end = time.monotonic() + a.seconds
    n = size = 0
    while time.monotonic() < end:
        t0 = time.monotonic()
        with urllib.request.urlopen(a.url, timeout=5) as r:
            size = len(r.read())
        n += 1
        time.sleep(max(0.0, a.interval - (time.monotonic() - t0)))
    print(n, size)


if __name__ == "__main__":
    main()
