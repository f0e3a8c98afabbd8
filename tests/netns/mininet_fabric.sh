#!/usr/bin/env bash
# A leaf-spine of sharebuf switches in Mininet (tests/netns/mininet_fabric.py says what it
# checks). Mininet's switches live in the root namespace; the names carry this run's prefix, and
# Mininet's own teardown (net.stop) runs on every exit of the Python program.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
[ -d /usr/lib/python3/dist-packages/mininet ] || { echo "FAIL: Debian's mininet is missing (./run.sh deps)"; exit 1; }
prefix="m$(printf '%03x' $(($$ % 4096)))"
rundir=$(mktemp -d "/tmp/sharebuf-mn-$prefix.XXXXXX")
trap 'rm -rf "$rundir"' EXIT
cd "$ROOT"
timeout --signal=TERM 150 env PYTHONPATH="$ROOT/python" /usr/bin/python3 "$HERE/mininet_fabric.py" \
  --module "$ROOT/python/sharebuf/mininet.py" --rundir "$rundir" --prefix "$prefix" ||
  { rc=$?; for f in "$rundir"/*.log; do echo "== $f"; tail -5 "$f"; done >&2; exit "$rc"; }
