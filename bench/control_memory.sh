#!/usr/bin/env bash
# The daemon's memory while read-only peers pipeline requests and never read a reply
# (docs/security.md, N3): sharebufd on a two-host testbed (socket mode 0666, admin_group set,
# idle_timeout --idle), `nobody` running N such clients for --seconds (tests/netns/hostile_peer.py
# pipeline), sharebufd's RSS sampled every second during the attack and for --after seconds after
# it. Prints the samples and the largest growth over the RSS before the attack.
#   bench/control_memory.sh [--build DIR] [--clients N] [--seconds S] [--after S] [--idle DURATION]
# Needs root and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/testbed.sh
source "$here/../scripts/testbed.sh"
# shellcheck source=lib/open_socket_testbed.sh
source "$here/lib/open_socket_testbed.sh"

usage() { sb_usage "$0"; }
build=$TB_ROOT/build clients=8 seconds=15 after=0 idle=300s
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
export SHAREBUFD=$build/mgmt/sharebufd

open_socket_testbed "idle_timeout = \"$idle\""
rss() { awk '/^VmRSS/ {print $2}' /proc/"$TB_SWITCH_PID"/status; }
base=$(rss)
hostile_peer pipeline "$clients" --seconds "$seconds" >"$TB_DIR/peer.json" &
peer=$!
samples=() peak=$base
for _ in $(seq 1 $((seconds + after))); do
  sleep 1
  samples+=("$(rss)")
  [ "${samples[-1]}" -le "$peak" ] || peak=${samples[-1]}
done
wait "$peer" || true
echo "RSS (KiB) before: $base; each second: ${samples[*]}"
echo "peer: $(cat "$TB_DIR/peer.json")"
echo "largest growth: $(((peak - base) / 1024)) MiB with $clients clients"
