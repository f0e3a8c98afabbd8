#!/usr/bin/env bash
# The ns-3 library as a user gets it: `cmake --install` of the build into a fresh prefix, then
# examples/ns3 (copied elsewhere, as a user copies it) configured against that prefix alone,
# built, and run under two policies: each prints its switch's and FlowMonitor's counts and
# writes FlowMonitor's XML, and the two policies' drops differ.
set -euo pipefail
build=${1:?usage: ns3_example_installed.sh BUILD_DIR EXAMPLE_DIR}
example=${2:?usage: ns3_example_installed.sh BUILD_DIR EXAMPLE_DIR}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake --install "$build" --prefix "$dir/prefix" >/dev/null
test -f "$dir/prefix/include/sharebuf-ns3/sharebuf-module.h"
cp -r "$example" "$dir/project"
cmake -S "$dir/project" -B "$dir/project/build" -DCMAKE_PREFIX_PATH="$dir/prefix" >/dev/null
cmake --build "$dir/project/build" -j "$(nproc)" >/dev/null
cd "$dir"
project/build/star_two_policies --policies=dt,lqd --time=0.02 --out="$dir/fm" | tee "$dir/out.txt"
/usr/bin/python3 - "$dir" <<'PY'
import re, sys
d = sys.argv[1]
lines = open(f"{d}/out.txt").read().splitlines()
drops = {}
for line in lines:
    m = re.match(r"(\w+): switch received (\d+) packets, dropped (\d+), marked (\d+); "
                 r"FlowMonitor: (\d+) flows, (\d+) bytes delivered, (\d+) packets lost", line)
    if m:
        drops[m.group(1)] = int(m.group(3))
        if int(m.group(7)) != int(m.group(3)):
            sys.exit(f"FAIL: {m.group(1)}: FlowMonitor lost {m.group(7)}, the switch dropped {m.group(3)}")
        if int(m.group(5)) == 0:
            sys.exit(f"FAIL: {m.group(1)}: FlowMonitor saw no flow")
if set(drops) != {"dt", "lqd"}:
    sys.exit(f"FAIL: expected a line for dt and lqd, got {lines}")
for p in drops:
    if "<FlowMonitor>" not in open(f"{d}/fm-{p}.xml").read():
        sys.exit(f"FAIL: no FlowMonitor XML for {p}")
if drops["dt"] == drops["lqd"] or max(drops.values()) == 0:
    sys.exit(f"FAIL: the policies' drops should differ and not be zero: {drops}")
print("ok   installed library, example built and run:", drops)
PY
