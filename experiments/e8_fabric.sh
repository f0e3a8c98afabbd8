#!/usr/bin/env bash
# E8 (docs/experiments/e8-fabric.md): the papers' simulation figures at datacenter scale, with sharebuf's own
# buffer and policies as the switches of an ns-3 leaf-spine fabric (build/sim/sharebuf-sim,
# docs/ns3.md). Figures: protean (Protean IV-A: tail incast and short-flow FCT across loads, DT,
# CS, Protean), smartbuf (Smartbuf IV-B: p99 FCT across loads, static, CS, DT, EDT, Smartbuf),
# credence-load, credence-burst, credence-flip (Credence 4.2: DT, ABM, LQD and Credence with
# forests trained on the fabric's own LQD traces, across loads and burst sizes, and with flipped
# predictions), fb-single (the FB paper's single-queue comparison, Figures 7 and 9: DT, CS, FAB
# and IB, with Occamy beside them, at the paper's own size), occamy-burst (Occamy's testbed
# burst absorption, Figure 12, simulated: DT, Occamy, ABM, push-out across query sizes),
# reverie (Reverie's TCP bursts without its RDMA load: DT, ABM, Reverie across burst sizes),
# credence-paper (Figure 6 at the paper's own 256 hosts, one load: on 2 MPI ranks with
# build/sim/sharebuf-sim-mpi from ./run.sh ns3-mpi, else in one process, same results). Scaled
# to a 2-core machine (scale-down beside each table in docs/experiments/e8-fabric.md); two runs
# side by side; resumable (finished runs are kept). credence-paper is not in the default list
# (about 40 minutes on 2 cores).
#   experiments/e8_fabric.sh [--figures LIST] [--out DIR] [--build DIR] [--jobs N] [--quick]
#                            [--readme]   (--readme: update the figures' sections of the E8 page)
# --quick: one seed and 20 ms per run (minutes, a smoke test; its numbers mean nothing).
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
cd "$(dirname "$0")/.."
out=results/e8 build=build jobs=2 quick="" readme=""
figures=protean,smartbuf,credence-load,credence-burst,credence-flip,fb-single,occamy-burst,reverie
while [ $# -gt 0 ]; do
  case "$1" in
    --figures) figures=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --quick) quick=--quick; shift ;;
    --readme) readme=--readme; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "e8_fabric.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
sim="$build/sim/sharebuf-sim" replay="$build/sim/sharebuf-replay"
for b in "$sim" "$replay"; do
  [ -x "$b" ] || { echo "e8_fabric.sh: $b not built (./run.sh build; sharebuf-sim needs libns3-dev)" >&2; exit 1; }
done
[ -z "$quick" ] || out="$out-quick"
mkdir -p "$out"
mpi=()
[ ! -x "$build/sim/sharebuf-sim-mpi" ] || mpi=(--mpi-sim "$(realpath "$build/sim/sharebuf-sim-mpi")")
/usr/bin/python3 experiments/lib/e8_runs.py "$out" "$(realpath "$sim")" "$(realpath "$replay")" \
  "$figures" --jobs "$jobs" $quick "${mpi[@]}"
/usr/bin/python3 experiments/lib/e8_report.py "$out" "$figures" $readme
