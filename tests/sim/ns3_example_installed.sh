#!/usr/bin/env bash
# The ns-3 library as a user gets it: `cmake --install` of the build into a fresh prefix, then
# examples/ns3 (copied elsewhere, as a user copies it) configured against that prefix alone,
# built, and run under two policies: each prints its switch's and FlowMonitor's counts and
# writes FlowMonitor's XML, and the two policies' drops differ.
set -euo pipefail
build=${1:?usage: ns3_example_installed.sh BUILD_DIR EXAMPLE_DIR}
example=${2:?usage: ns3_example_installed.sh BUILD_DIR EXAMPLE_DIR}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake --install "$build" --prefix "$dir/prefix" >/dev/null
test -f "$dir/prefix/include/sharebuf-ns3/sharebuf-module.h"
cp -r "$example" "$dir/project"
cmake -S "$dir/project" -B "$dir/project/build" -DCMAKE_PREFIX_PATH="$dir/prefix" >/dev/null
cmake --build "$dir/project/build" -j "$(nproc)" >/dev/null
cd "$dir"
project/build/star_two_policies --policies=dt,lqd --time=0.02 --out="$dir/fm" | tee "$dir/out.txt"
/usr/bin/python3 "$here/check_sim.py" example-installed "$dir"
