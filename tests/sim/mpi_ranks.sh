#!/usr/bin/env bash
# sharebuf-sim-mpi gives the same answer on any number of ranks: a leaf-spine fabric (4 leaves of
# 8 hosts, 2 spines, web-search background and incast queries; the E8 Credence fabric, 40 ms)
# with DT, Protean, Credence with the repository's forest and LQD push-out, each run on 1 and on 2
# ranks (cut at the spine links), writes byte-identical summary.json (every switch's drops by
# reason and queue among it), flows.csv, queries.csv and per-queue occupancy.csv; the same on 4
# ranks and with the null-message scheduler (LQD), with identical --record traces (DT); the
# plain sharebuf-sim (Debian's ns-3, one process) writes the same bytes too; and another seed
# changes them. A split the fabric cannot take is refused with the reason.
set -euo pipefail
mpi=${SHAREBUF_SIM_MPI:?SHAREBUF_SIM_MPI: the sharebuf-sim-mpi binary}
plain=${SHAREBUF_SIM:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# mpirun refuses root without these; --oversubscribe: more ranks than cores is allowed here.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# A burst of 1.5 leaf buffers, so that every policy drops (LQD too).
scenario=("$root/experiments/e8/credence.toml" --quiet --set run.duration=40ms
  --set run.sample_queues=true --set 'workload.incast.size="150%"')
run() {  # run NAME RANKS ARGS...: one run into $dir/NAME
  local name=$1 ranks=$2
  shift 2
  mpirun --oversubscribe -np "$ranks" "$mpi" "${scenario[@]}" --out "$dir/$name" "$@" >/dev/null
}
same() {  # same A B: every output file of runs A and B byte for byte
  local f
  for f in summary.json flows.csv queries.csv occupancy.csv; do
    cmp "$dir/$1/$f" "$dir/$2/$f" || { echo "FAIL: $1 and $2 differ in $f" >&2; exit 1; }
  done
  echo "ok: $1 = $2"
}

model="$root/data/credence-forest.json"
declare -A policy=(
  [dt]='switches.policy={name = "dt", alpha = 0.5}'
  [protean]='switches.policy={name = "protean"}'
  [credence]="switches.policy={name = \"credence\", oracle = \"forest\", model = \"$model\"}"
  [lqd]='switches.policy={name = "lqd"}'
)
for p in dt protean credence lqd; do
  run "$p-1" 1 --set "${policy[$p]}"
  run "$p-2" 2 --set "${policy[$p]}"
  same "$p-1" "$p-2"
done
# The runs mean something: the buffers dropped or pushed out, and flows completed.
/usr/bin/python3 "$root/tests/sim/check_sim.py" busy-runs "$dir"/{dt,protean,credence,lqd}-2

run lqd-4 4 --set "${policy[lqd]}"
same lqd-1 lqd-4
run lqd-2-null 2 --set "${policy[lqd]}" --mpi-scheduler null-message
same lqd-1 lqd-2-null
run dt-1-rec 1 --set "${policy[dt]}" --record "$dir/rec1"
run dt-2-rec 2 --set "${policy[dt]}" --record "$dir/rec2"
diff -r "$dir/rec1" "$dir/rec2" >/dev/null || { echo "FAIL: the --record traces differ" >&2; exit 1; }
echo "ok: --record on 2 ranks = on 1 ($(find "$dir/rec2" -mindepth 1 -maxdepth 1 | wc -l) switches)"
if [ -n "$plain" ]; then
  "$plain" "${scenario[@]}" --out "$dir/credence-plain" --set "${policy[credence]}" >/dev/null
  same credence-plain credence-1
fi

run dt-2-seed2 2 --set "${policy[dt]}" --set run.seed=2
if cmp -s "$dir/dt-2/flows.csv" "$dir/dt-2-seed2/flows.csv"; then
  echo "FAIL: seed 2 gave the same flows as seed 1" >&2
  exit 1
fi
echo "ok: seed 2 differs"

# 5 ranks for 4 leaves; a star on 2 ranks.
refused() {  # refused RANKS SCENARIO
  local err rc
  set +e
  err=$(mpirun --oversubscribe -np "$1" "$mpi" "$2" --check 2>&1 >/dev/null)
  rc=$?
  set -e
  if [ "$rc" -eq 0 ] || ! grep -q "rank" <<<"$err"; then
    echo "FAIL: $1 ranks for $2: rc $rc, '$err'" >&2
    exit 1
  fi
  echo "ok: refused: $(grep -m1 sharebuf-sim <<<"$err")"
}
refused 5 "$root/experiments/e8/credence.toml"
refused 2 "$root/experiments/e8/occamy.toml"
