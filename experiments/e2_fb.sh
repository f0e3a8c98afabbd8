#!/usr/bin/env bash
# E2 (docs/experiments/e2-fb.md): FB's hardware testbed on real Linux TCP. S1 = h1 on port p1; S2 on two
# ports = h2 (p2) and h3 (p3). Eight queues per port under strict priority: queue 0 for TCP
# (class "tcp", high priority, alpha 0.8), queues 1-7 for UDP (classes udp1..udp7 by DSCP
# CS1..CS7, low priority, alpha 0.6). Buffer 9000 cells of 80 B. Seven UDP flows (one per
# low-priority queue) from S1 to S2 via p2 oversubscribe it; then 100 TCP flows of 8 KB from S2
# (h3, port p3) to S1. Ports shaped to 80 Mbit/s: the paper's rate is garbled, this value is ours.
#   experiments/e2_fb.sh [--out DIR] [--reps N] [--policies SPEC;SPEC;...] [--quick] [--readme]
# Defaults: results/e2, 5 repetitions, dt cs fb fba abm. Policy specs and outputs as in E1.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"
# shellcheck source=../scripts/fct_run.sh
source "$(dirname "$0")/../scripts/fct_run.sh"
# shellcheck source=../scripts/paper_testbeds.sh
source "$(dirname "$0")/../scripts/paper_testbeds.sh"

out=results/e2 reps=5 policies=dt,cs,fb,fba,abm warmup=3 readme=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --quick) reps=1; warmup=1.5; shift ;;
    --readme) readme=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "e2_fb.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
out=$(tb_out_dir "$out")
tg=$(tb_tg) || exit 1
tb_init
tb_create 3 cubic 0 200ms
echo "policy,rep,flow,bytes,fct_ms,ok" >"$out/flows.csv"
echo "policy,rep,udp_mbps,tcp_drops,udp_drops,tcp_peak_cells,udp_peak_cells" >"$out/runs.csv"
mapfile -t plist < <(tb_split_specs "$policies")
for spec in "${plist[@]}"; do
  policy=$(tb_policy_label "$spec")
  for rep in $(seq 1 "$reps"); do
    echo "== E2: $policy, repetition $rep of $reps"
    e2_config "$TB_DIR/sw.toml" "$spec"
    tb_start_switch "$TB_DIR/sw.toml"
    e2_background "$(awk -v w="$warmup" 'BEGIN { printf "%d", w + 4 }')"
    fct_run "$policy" "$rep" "$out" 3 1 100 8192 "$warmup"
    /usr/bin/python3 "$TB_ROOT/experiments/lib/fct_collect.py" e2 "$TB_DIR" "$out" "$policy" "$rep"
  done
  /usr/bin/python3 "$TB_ROOT/tools/plot_watch.py" "$out/watch-$policy.csv" "$out/timeline-$policy.png" \
    --queues p1/0,p2/1,p2/7 --title "E2 $policy: p1/0 = TCP (S2 -> S1), p2/1..7 = UDP (S1 -> S2)" >/dev/null
done
readme_flag=()
[ "$readme" = 1 ] && readme_flag=(--readme)
/usr/bin/python3 "$TB_ROOT/experiments/lib/fct_report.py" --experiment E2 --out "$out" \
  --baseline dt --highlight fb --paper "FB: FCTs at least 50 ms smaller than DT" \
  "${readme_flag[@]}"
echo "results in $out"
