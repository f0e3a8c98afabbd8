#!/usr/bin/env bash
# One fabric, live and simulated (docs/fabric.md): experiments/e8/live-fabric.toml — E8's
# Credence workload on 2 spines, 4 leaves of 2 hosts, 100 Mbit/s — run per policy as a Mininet
# leaf-spine of sharebufd switches with real Linux hosts (the scenario's [transport]: Reno with
# ECN on this kernel, which has no DCTCP), and as sharebuf-sim's ns-3
# fabric with the link delay the live fabric's idle ping measured, the live hosts replaying ns-3's
# flow arrivals (same times, sizes and hosts; a new connection per flow); then the table of incast
# query completion times, short flows' completion times, drops and peak occupancy per switch,
# live beside ns-3 (experiments/lib/fabric_report.py). Needs root, Mininet (./run.sh deps) and
# the build (sharebufd, sharebuf-tg, sharebuf-sim). About 2.5 minutes per policy and rate at 30 s.
#   experiments/fabric_live_vs_sim.sh [--out DIR] [--policies dt,abm,credence] [--seconds N]
#                                     [--rates 25,100] [--build DIR] [--readme]
#                                     [--arrivals ns3|own] [--query-pool K]
# --rates: every link's rate in Mbit/s, live and in ns-3, one run per rate (default: the
# scenario's 100; docs/fabric.md says why 25 too: this machine's CPU).
# --arrivals own: each engine draws its own arrivals (live: Poisson clients); --query-pool K:
# live incast responses on K pooled connections per responder (no handshake per response).
# --readme: keep the run's files under docs/runs/fabric/ and write docs/fabric.md's table.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
cd "$(dirname "$0")/.."
out=results/fabric-live policies=dt,abm,credence seconds=30 rates=100 build=build doc=() extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --readme) doc=(--readme); shift ;;
    --arrivals | --query-pool) extra+=("$1" "$2"); shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "fabric_live_vs_sim.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "fabric_live_vs_sim.sh: needs root (Mininet)" >&2; exit 1; }
for b in mgmt/sharebufd tools/sharebuf-tg sim/sharebuf-sim; do
  [ -x "$build/$b" ] || { echo "fabric_live_vs_sim.sh: $build/$b not built (./run.sh build)" >&2; exit 1; }
done
mkdir -p "$out"
for rate in ${rates//,/ }; do
  /usr/bin/python3 experiments/lib/fabric_live.py --out "$out" --policies "$policies" \
    --seconds "$seconds" --host-rate "$rate" --build "$(realpath "$build")" \
    --prefix "f$(printf '%03x' $(($$ % 4096)))" "${extra[@]}"
done
/usr/bin/python3 experiments/lib/fabric_report.py "$out" "${doc[@]}"
