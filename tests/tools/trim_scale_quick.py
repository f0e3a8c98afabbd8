#!/usr/bin/python3
"""The trimming paper's figures in the replay, short (experiments/lib/trim_scale.py --quick: 100
packets per sender): what the paper's section 6.1 says of its modes must hold, and every run's
accounting must balance. Figure 5c: fixed meters + DoD cannot cope with sixteen 4:1 incasts
spread over the pipelines (headers far later than ideal), the full design and MoD can; MoD adds
its 1 us recirculation latency to every header; the full design's largest DoD queue stays a
third or less of fixed meters + DoD's (the paper's 250-packet bound does not hold with its
10-packet data queues: docs/experiments/e7-paper-scale.md).

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
        # The paper's bound (250 packets) does not hold here with its 10-packet data queues
        # (docs/experiments/e7-paper-scale.md: 251 at 5c, 847 at 32 senders); what holds is
        # the design's point: its DoD queue stays a fraction of fixed meters + DoD's.
        ("5b/5c: the full design's DoD queue at most a third of fixed meters + DoD's",
         all(3 * f5[k]["full"]["dod_peak"] <= f5[k]["dod"]["dod_peak"] for k in ("5b", "5c"))),
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
