#!/usr/bin/env bash
# The same switch in ns-3 and in the replay: sharebuf-sim records every arrival at its switch
# (time, port, queue, bytes, class) and its fate (refused or later pushed out: 1), then
# sharebuf-replay replays those arrivals with the same configuration; the fates must be
# identical frame by frame. Two runs: DT under TCP (Cubic, 4 senders into 2 receivers) and LQD
# under UDP overload (push-outs). Within one instant the ns-3 switch admits the arrivals before a
# departure frees cells (sim/ns3/sharebuf_queue_disc.h); the replay's --order arrivals-first is
# that order.
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
replay=${SHAREBUF_REPLAY:?SHAREBUF_REPLAY: the sharebuf-replay binary}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
run() {  # run NAME POLICY SIM-ARGS...
  local name=$1 policy=$2
  shift 2
  mkdir -p "$dir/$name"
  printf '[buffer]\nsize = "2000 cells"\ncell_bytes = 80\n[policy]\nname = "%s"\n' "$policy" \
    >"$dir/$name.toml"
  "$sim" --quiet --switch-config="$dir/$name.toml" --link-rate=1Gbps --delay=7us "$@" \
    --record="$dir/$name" >/dev/null
  "$replay" --config "$dir/$name/switch.toml" --csv "$dir/$name/arrivals.csv" \
    --policies "$policy" --order arrivals-first --fates "$dir/$name/replay-fates.csv" >/dev/null
  /usr/bin/python3 - "$dir/$name" "$name" <<'PY' || fail=1
import csv, sys
d, name = sys.argv[1:]
sim = [int(r[1]) for r in list(csv.reader(open(f"{d}/fates.csv")))[1:]]
rep = [int(r[1]) for r in list(csv.reader(open(f"{d}/replay-fates.csv")))[1:]]
diff = [i for i, (a, b) in enumerate(zip(sim, rep)) if a != b]
ok = len(sim) == len(rep) and not diff and sum(sim) > 0
print(f"{'ok  ' if ok else 'FAIL'} {name}: {len(sim)} arrivals, {sum(sim)} refused or pushed out "
      f"in ns-3, {sum(rep)} in the replay, {len(diff)} differ"
      + (f" (first at arrival {diff[0]})" if diff else ""))
sys.exit(0 if ok else 1)
PY
}
run dt-tcp dt --senders=4 --receivers=2 --transport=cubic --duration=0.05
run lqd-udp lqd --senders=4 --receivers=2 --udp-load=0.8 --duration=0.02
exit "$fail"
