#!/usr/bin/env bash
# E6 (docs/experiments/e6-live-reconfig.md): live reconfiguration under load. Four hosts; web-search flows (sharebuf-tg,
# load 0.5) from h1 to h3 and h4, partition-aggregate queries from h2 to h1, h3 and h4 (20/s),
# and UDP from h3 to h1 run while the policy is switched over the control socket every
# --interval seconds for --seconds, cycling through every policy with varying parameters, and the
# view mode and probe interval change too. Checks: no crash; every switch appears in the next
# watch sample (the delay is measured); after the traffic every cell is back in the pool and the
# counters balance; no frame lost outside the counters.
#   experiments/e6_live_reconfig.sh [--out DIR] [--seconds 60] [--interval 1] [--quick] [--readme]
# --quick: 10 seconds, a switch every 0.5 s. Writes switches.csv, watch.csv, summary.md.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"
out=results/e6 seconds=60 interval=1 readme=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --quick) seconds=10; interval=0.5; shift ;;
    --readme) readme=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "e6_live_reconfig.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
out=$(tb_out_dir "$out")
tg=$(tb_tg) || exit 1
tb_init
tb_create 4
tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "21000 cells"
tb_start_switch "$TB_DIR/sw.toml"
mapfile -t policies < <(tb_ctl --json policy.list | jq -r '.[].name')
run_s=$(awk -v s="$seconds" 'BEGIN { printf "%d", s + 2 }')
for h in 1 3 4; do
  tb_exec "$h" "$tg" server --port 5500 --duration $((run_s + 20)) 2>/dev/null &
  TB_PIDS+=($!)
done
tb_bg 1 iperf3 -s -1 -p 5201 >/dev/null
sleep 0.5
tb_ctl watch interval_us=1000 --csv "$out/watch.csv" --duration "$run_s" 2>/dev/null &
watch_pid=$!
tb_exec 1 "$tg" websearch --servers "$(tb_ip 3),$(tb_ip 4)" --load 0.5 --link-rate 100Mbit \
  --duration "$seconds" --timeout 20 --csv "$out/background.csv" >"$out/background.out" 2>&1 &
bg_pid=$!
tb_exec 2 "$tg" query --servers "$(tb_ip 1),$(tb_ip 3),$(tb_ip 4)" --size 300000 --rate 20 \
  --duration "$seconds" --timeout 20 --csv "$out/queries.csv" >"$out/queries.out" 2>&1 &
q_pid=$!
tb_bg 3 iperf3 -c "$(tb_ip 1)" -p 5201 -u -b 60M -l 1400 -t "$seconds" >/dev/null

echo "t_s,policy,params,view" >"$out/switches.csv"
t0=$(date +%s.%N)
n=0
params_for() {  # a different parameter set each time a policy comes round
  case "$1:$(( $2 % 2 ))" in
    dt:1) echo "alpha=2" ;; dt:0) echo "alpha=0.5" ;;
    protean:1) echo "alpha_incast=0.8 arithmetic=tofino" ;;
    fb:1) echo "gamma=measured" ;; fba:1) echo "period_ms=10" ;;
    lqd:1) echo "push_out=head" ;; credence:1) echo "oracle=forest" ;;
    smartbuf:1) echo "k=2 sigma=4" ;; reverie:1) echo "gamma=0.99" ;; *) echo "" ;;
  esac
}
while awk -v a="$(date +%s.%N)" -v b="$t0" -v s="$seconds" 'BEGIN { exit !(a - b < s) }'; do
  p=${policies[$((n % ${#policies[@]}))]}
  # shellcheck disable=SC2046
  tb_ctl policy.set "$p" $(params_for "$p" $((n / ${#policies[@]}))) >/dev/null || tb_die "policy.set $p failed"
  view=exact
  if [ $((n % 3)) -eq 1 ]; then view=probe; tb_ctl view.set probe probe_interval_us=$((5 + 10 * (n % 7))) >/dev/null
  elif [ $((n % 3)) -eq 2 ]; then tb_ctl view.set exact >/dev/null; fi
  echo "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.4f", a - b }'),$p,\"$(params_for "$p" $((n / ${#policies[@]})))\",$view" >>"$out/switches.csv"
  n=$((n + 1))
  sleep "$interval"
done
wait "$bg_pid" || echo "background generator reported failed flows (see $out/background.out)"
wait "$q_pid" || echo "query generator reported failed flows (see $out/queries.out)"
wait "$watch_pid" || true
for pid in "${TB_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
wait "${TB_PIDS[@]}" 2>/dev/null || true
TB_PIDS=()
sleep 0.5
rc=0
tb_stop_switch || rc=$?
cp "$TB_DIR/stats.json" "$out/stats.json"
tb_keep_effective "$out/effective.toml"  # as the last switch left it
/usr/bin/python3 "$TB_ROOT/tools/plot_watch.py" "$out/watch.csv" "$out/timeline.png" --queues p1/0,p3/0,p4/0 \
  --title "E6: the policy changes every ${interval}s under load" >/dev/null
readme_args=()
[ "$readme" = 1 ] && readme_args=(--readme --image "$out/timeline.png")
/usr/bin/python3 "$TB_ROOT/experiments/lib/e6_checks.py" "$out" "$n" "$rc" --seconds "$seconds" \
  --interval "$interval" "${readme_args[@]}"
echo "results in $out"
