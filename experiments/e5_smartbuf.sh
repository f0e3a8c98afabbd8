#!/usr/bin/env bash
# E5 (docs/experiments/e5-smartbuf.md): Smartbuf's demand prediction. Partition-aggregate queries of several
# fan-ins (N parallel responses of SIZE/N bytes from h2 into h1's port, sharebuf-tg query) run
# twice: first under CS with a buffer large enough never to drop, where the queue's peak (counters
# reset before each query) is the demand each burst reaches; then under Smartbuf with the
# experiment's buffer, where the policy's burst log (policy.get) records, per burst, the demand it
# predicted and the peak it saw. Reports
# the prediction error per burst against the CS demand of the same fan-in (paper: within 9 % of
# the ideal, 6 % on average). Every fan-in runs --rounds times in each phase (the repetitions).
# The Smartbuf phase runs once per --syncs mode: dequeue (the paper's algorithm, learning at every
# dequeue) and probe (learning from the probe registers once per probe interval, Tofino-style).
# Writes cs_demand.csv, smartbuf_bursts.csv, smartbuf_state-<sync>.json, summary.md and
# prediction.png.
#   experiments/e5_smartbuf.sh [--out DIR] [--fan-ins 16,32,48] [--rounds 6] [--size 1000000]
#                                [--buffer 21000] [--syncs dequeue,probe] [--quick] [--readme]
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"
out=results/e5 fanins=16,32,48 rounds=6 size=1000000 buffer=21000 readme=0 syncs=dequeue,probe
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --fan-ins) fanins=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --buffer) buffer=$2; shift 2 ;;
    --syncs) syncs=$2; shift 2 ;;
    --quick) rounds=3; shift ;;
    --readme) readme=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "e5_smartbuf.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
out=$(tb_out_dir "$out")
tg=$(tb_tg) || exit 1
IFS=, read -r -a fan <<<"$fanins"
IFS=, read -r -a sync_modes <<<"$syncs"
tb_init
tb_create 2

servers_for() {  # N connections to the server on h2
  local i s=""
  for i in $(seq 1 "$1"); do s+="${s:+,}$(tb_ip 2)"; done
  echo "$s"
}

# Phase 1: CS, a buffer that never fills: the demand each fan-in's burst reaches.
echo "fan_in,round,demand_cells" >"$out/cs_demand.csv"
tb_write_config "$TB_DIR/sw.toml" cs 100Mbit "400000 cells"
tb_start_switch "$TB_DIR/sw.toml"
ip netns exec "$(tb_ns_host 2)" "$tg" server --port 5500 --duration 600 2>/dev/null &  # not tb_exec: $! must be the server itself
srv=$!
for r in $(seq 1 "$rounds"); do
  for f in "${fan[@]}"; do
    tb_ctl counters.reset >/dev/null
    tb_exec 1 "$tg" query --servers "$(servers_for "$f")" --size "$size" --count 1 --timeout 20 >/dev/null \
      || tb_die "query fan-in $f failed under CS"
    peak=$(tb_ctl --json queues | jq '.[0].peak_cells')
    echo "$f,$r,$peak" >>"$out/cs_demand.csv"
    sleep 0.3
  done
done
kill "$srv" 2>/dev/null || true
wait "$srv" 2>/dev/null || true
tb_stop_switch || tb_die "sharebufd (cs) failed"
tb_keep_effective "$out/effective-cs.toml"

# Phase 2: Smartbuf, the experiment's buffer, once per sync mode; its burst log says what it
# predicted.
echo "sync,fan_in,round,burst,predicted_cells,peak_cells" >"$out/smartbuf_bursts.csv"
for sync in "${sync_modes[@]}"; do
  TB_POLICY_PARAMS="sync = \"$sync\"" tb_write_config "$TB_DIR/sw.toml" smartbuf 100Mbit "$buffer cells"
  tb_start_switch "$TB_DIR/sw.toml"
  ip netns exec "$(tb_ns_host 2)" "$tg" server --port 5500 --duration 600 2>/dev/null &  # not tb_exec: $! must be the server itself
  srv=$!
  seen=0
  for r in $(seq 1 "$rounds"); do
    for f in "${fan[@]}"; do
      tb_exec 1 "$tg" query --servers "$(servers_for "$f")" --size "$size" --count 1 --timeout 20 >/dev/null \
        || echo "query fan-in $f round $r lost flows under smartbuf sync=$sync (counted by the switch)"
      sleep 0.3
      tb_ctl --json policy.get >"$TB_DIR/pol.json"
      seen=$(/usr/bin/python3 "$TB_ROOT/experiments/lib/e5_report.py" bursts "$TB_DIR/pol.json" "$seen" \
        "$f" "$r" "$out/smartbuf_bursts.csv" "$sync")
    done
  done
  tb_ctl --json policy.get >"$out/smartbuf_state-$sync.json"
  kill "$srv" 2>/dev/null || true
  wait "$srv" 2>/dev/null || true
  tb_stop_switch || tb_die "sharebufd (smartbuf sync=$sync) failed"
  tb_keep_effective "$out/effective-smartbuf-$sync.toml"
done

readme_flag=()
[ "$readme" = 1 ] && readme_flag=(--readme)
/usr/bin/python3 "$TB_ROOT/experiments/lib/e5_report.py" report "$out" "$buffer" "${readme_flag[@]}"
echo "results in $out"
