# shellcheck shell=bash
# The measured part of a live FCT experiment (E1, E2), once the switch runs and the background
# load has started: after WARMUP seconds, FLOWS parallel flows of SIZE bytes go from SERVER_HOST
# to CLIENT_HOST (sharebuf-tg fixed) under a 1 ms watch; then every traffic source ends, the
# switch stops (its stats land in $TB_DIR/stats.json) and the flows' times in $TB_DIR/fct.csv
# (a flow that does not finish within 15 s is a failed row, not an error).
# The first repetition's watch is kept as OUT/watch-POLICY.csv, the switch's effective
# configuration as OUT/effective-POLICY.toml.
#   fct_run POLICY REP OUT SERVER_HOST CLIENT_HOST FLOWS SIZE WARMUP
fct_run() {
  local policy=$1 rep=$2 out=$3 server=$4 client=$5 flows=$6 size=$7 warmup=$8
  local tg tg_pid watch_pid rc=0
  tg=$(tb_tg) || tb_die "no traffic generator"
  # Not tb_exec: $! must be the server itself, so that it can be ended here.
  ip netns exec "$(tb_ns_host "$server")" "$tg" server --port 5500 --duration 60 2>/dev/null &
  tg_pid=$!
  sleep "$warmup"
  tb_ctl watch interval_us=1000 --csv "$TB_DIR/watch.csv" --duration 2.5 2>/dev/null &
  watch_pid=$!
  sleep 0.3
  tb_exec "$client" timeout 20 "$tg" fixed --servers "$(tb_ip "$server")" --flows "$flows" \
    --size "$size" --timeout 15 --csv "$TB_DIR/fct.csv" >"$TB_DIR/tg.out" 2>&1 || rc=$?
  wait "$watch_pid" || true
  kill "$tg_pid" 2>/dev/null || true
  wait "$tg_pid" 2>/dev/null || true
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  tb_stop_switch || tb_die "$policy: sharebufd exited with an error"
  [ "$rep" -ne 1 ] || tb_keep_effective "$out/effective-$policy.toml"
  # Flows that did not finish within the timeout are a result (a policy can starve them), kept
  # as failed rows; only a run that produced no flow table at all is an error.
  if [ "$rc" -ne 0 ]; then
    [ -s "$TB_DIR/fct.csv" ] || { cat "$TB_DIR/tg.out"; tb_die "$policy: sharebuf-tg failed"; }
    echo "   $policy repetition $rep: $(grep -c ',0$' "$TB_DIR/fct.csv") flow(s) did not finish within 15 s"
  fi
  if [ "$rep" -eq 1 ]; then cp "$TB_DIR/watch.csv" "$out/watch-$policy.csv"; fi
}
