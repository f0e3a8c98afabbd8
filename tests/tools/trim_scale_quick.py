#!/usr/bin/python3
"""The trimming paper's figures in the replay, short (experiments/lib/trim_scale.py --quick: 100
packets per sender): what the paper's section 6.1 says of its modes must hold, and every run's
accounting must balance. Figure 5c: fixed meters + DoD cannot cope with sixteen 4:1 incasts
spread over the pipelines (headers far later than ideal), the full design and MoD can; MoD adds
its 1 us recirculation latency to every header; the full design's largest DoD queue stays below
the paper's 250 packets.

usage: trim_scale_quick.py BUILD_DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_dir")
    a = ap.parse_args(argv)
    replay = os.path.join(a.build_dir, "sim", "sharebuf-replay")
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, os.path.join(ROOT, "experiments", "lib", "trim_scale.py"),
                        out, "--quick", "--replay", replay], check=True)
        res = json.load(open(os.path.join(out, "results.json")))
    f5 = res["fig5"]
    checks = [
        ("5c: DoD's p99 header at least 3x ideal's",
         f5["5c"]["dod"]["p99_us"] >= 3 * f5["5c"]["ideal"]["p99_us"]),
        ("5c: the full design's p50 header within 2x ideal's",
         f5["5c"]["full"]["p50_us"] <= 2 * f5["5c"]["ideal"]["p50_us"]),
        ("5a: MoD's p50 header 0.9-1.3 us after ideal's",
         0.9 <= f5["5a"]["mod"]["p50_us"] - f5["5a"]["ideal"]["p50_us"] <= 1.3),
        ("5a: no header lost in a DoD port",
         all(f5["5a"][m]["deflect_dropped"] == 0 for m in f5["5a"] if m != "what")),
        ("5b/5c: the full design's DoD queue below 250 packets",
         max(f5["5b"]["full"]["dod_peak"], f5["5c"]["full"]["dod_peak"]) < 250),
        ("64 senders: pessimistic mode on every destination port",
         len(res["fig7"]["64"]["pessimistic_us"]) == 16),
    ]
    ok = True
    for what, good in checks:
        print(("ok   " if good else "FAIL ") + what)
        ok = ok and good
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
