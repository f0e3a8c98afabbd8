#!/usr/bin/env bash
# E1 (docs/experiments/e1-protean.md): Protean's hardware testbed on real Linux TCP. Three hosts around sharebufd,
# egress ports shaped to 100 Mbit/s, 21000 cells of 80 B, one queue per port. Class "incast"
# (TCP, DSCP 0): alpha 0.8, Protean role incast, FB group high; class "bulk" (UDP, DSCP CS1):
# alpha 0.5, role long, group low. A UDP flow S1 -> S2 saturates S2's port; once the buffer is in
# steady state, 100 TCP flows of 16 KB each start in parallel from S3 to S1 (RTO min 200 ms).
# Every flow's completion time comes from sharebuf-tg; UDP goodput from iperf3; drops per queue
# from the switch; a 1 ms watch gives the occupancy-vs-threshold timelines of both egress queues.
#   experiments/e1_protean.sh [--out DIR] [--reps N] [--policies SPEC;SPEC;...] [--rto-min T]
#                               [--tx-batch N] [--label E1-x] [--quick] [--readme]
# Defaults: results/e1, 5 repetitions, dt cs protean smartbuf fb credence lqd, rto_min 200ms.
# A SPEC is a policy or policy:key=value,... (e.g. protean:sync=probe); separate specs with ';'
# (or ',' when none has parameters). --quick: 1 repetition, a shorter UDP warm-up. Writes
# flows.csv, summary.csv, summary.md, fct_cdf.png, fct_p99.png and timeline-<policy>.png into DIR;
# --readme fills the section marked with --label (in docs/experiments/e1-protean.md) (lower case; default e1).
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"
# shellcheck source=../scripts/fct_run.sh
source "$(dirname "$0")/../scripts/fct_run.sh"
# shellcheck source=../scripts/paper_testbeds.sh
source "$(dirname "$0")/../scripts/paper_testbeds.sh"

out=results/e1 reps=5 policies=dt,cs,protean,smartbuf,fb,credence,lqd warmup=3 readme=0 rto=200ms
label=E1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --rto-min) rto=$2; shift 2 ;;
    --tx-batch) export TB_PORT_EXTRA="tx_batch = $2"; shift 2 ;;
    --label) label=$2; shift 2 ;;
    --quick) reps=1; warmup=1.5; shift ;;
    --readme) readme=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "e1_protean.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
out=$(tb_out_dir "$out")
tg=$(tb_tg) || exit 1

tb_init
tb_create 3 cubic 0 "$rto"
echo "policy,rep,flow,bytes,fct_ms,ok" >"$out/flows.csv"
echo "policy,rep,udp_mbps,tcp_drops,udp_drops,tcp_peak_cells,udp_peak_cells" >"$out/runs.csv"
mapfile -t plist < <(tb_split_specs "$policies")
for spec in "${plist[@]}"; do
  policy=$(tb_policy_label "$spec")
  for rep in $(seq 1 "$reps"); do
    echo "== E1: $policy, repetition $rep of $reps"
    e1_config "$TB_DIR/sw.toml" "$spec"
    tb_start_switch "$TB_DIR/sw.toml"
    e1_background "$(awk -v w="$warmup" 'BEGIN { printf "%d", w + 4 }')"
    fct_run "$policy" "$rep" "$out" 3 1 100 16384 "$warmup"
    /usr/bin/python3 "$TB_ROOT/experiments/lib/fct_collect.py" e1 "$TB_DIR" "$out" "$policy" "$rep"
  done
  /usr/bin/python3 "$TB_ROOT/tools/plot_watch.py" "$out/watch-$policy.csv" "$out/timeline-$policy.png" \
    --queues p1/0,p2/0 --title "E1 $policy: p1 = TCP incast (S3 -> S1), p2 = UDP (S1 -> S2)" >/dev/null
done
readme_flag=()
[ "$readme" = 1 ] && readme_flag=(--readme)
/usr/bin/python3 "$TB_ROOT/experiments/lib/fct_report.py" --experiment "$label" --out "$out" \
  --baseline dt --highlight protean --paper "Protean: tail FCT 2.3x and mean FCT 1.7x better than DT, same UDP throughput" \
  "${readme_flag[@]}"
echo "results in $out"
