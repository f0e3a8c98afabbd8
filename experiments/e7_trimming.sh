#!/usr/bin/env bash
# E7 (docs/experiments/e7-trimming.md): packet trimming under incast. h1 asks h2-h5 for N flows of SIZE bytes at
# once (sharebuf-ndp: NDP-like, receiver-driven, pulls paced at h1's link rate, first window of
# 8 packets) through p1, shaped to 100 Mbit/s, with a small shared buffer (600 cells of 80 B).
# Overflow modes, switched live with trim.set on one running switch per policy: "drop" (lost
# packets come back after sharebuf-ndp's 10 ms timeout, doubled per resend), "trim" (the
# idealised NDP switch: the refused frame's 128-byte header goes on through the port's
# strict-priority trim queue), "tofino" (trimming's Tofino approximation: 2 ingress pipelines,
# h2/h4 on one, h3/h5 on the other; per-pipeline meters, deflect-on-drop through a 100 Mbit/s
# recirculation port, notifications; times scaled to the port rate, see
# docs/experiments/e7-trimming.md) and "dod" (the same with fixed line-rate meters and no
# notifications: the paper's "DoD" curve of Figure 5).
# Per (policy, mode, N): query completion time (mean, p99), flow completion time, retransmission
# delay (first transmission to the retransmission's arrival) and the one-way latency of trimmed
# headers (the paper's header-arrival view, plotted as CDFs).
#   experiments/e7_trimming.sh [--out DIR] [--fanin 8,16,32] [--policies dt,credence,lqd]
#       [--modes drop,trim,tofino,dod] [--queries 20] [--size 65536] [--header-reserve 8]
#       [--readme] [--quick]
# About 5 minutes with the defaults. --quick: N = 16, DT, 5 queries. --readme writes the E7 page's
# results section. --header-reserve: headers each port keeps room for apart from the shared pool
# ([trimming] header_reserve; 0 puts every header at the policy's mercy). Writes flows.csv,
# events.csv, summary.csv/.md, stats-POLICY-MODE.json (counters of each mode), header_latency_cdf.png
# and qct.png into DIR.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"
# shellcheck source=../scripts/paper_testbeds.sh
source "$(dirname "$0")/../scripts/paper_testbeds.sh"
out=results/e7 fanin=8,16,32 policies=dt,credence,lqd modes=drop,trim,tofino,dod queries=20 size=65536
readme=0 header_reserve=8
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --fanin) fanin=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --queries) queries=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --header-reserve) header_reserve=$2; shift 2 ;;
    --readme) readme=1; shift ;;
    --quick) fanin=16; policies=dt; queries=5; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "e7_trimming.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
  esac
done
for m in ${modes//,/ }; do
  case "$m" in drop|trim|tofino|dod) ;; *) echo "e7_trimming.sh: --modes: '$m' is not drop, trim, tofino or dod" >&2; exit 2 ;; esac
done
for n in ${fanin//,/ }; do
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 256 ] ||
    { echo "e7_trimming.sh: --fanin: '$n' is not a number from 1 to 256" >&2; exit 2; }
done
[[ "$header_reserve" =~ ^[0-9]+$ ]] ||
  { echo "e7_trimming.sh: --header-reserve: '$header_reserve' is not a number of headers" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "e7_trimming.sh: needs root (network namespaces)" >&2; exit 1; }
out=$(tb_out_dir "$out")
ndp=$(tb_ndp) || exit 1
tb_init
echo "policy,mode,fanin,query,flow,server,bytes,packets,fct_ns,trimmed,nack_retx,rto_retx,duplicates,failed" >"$out/flows.csv"
echo "policy,mode,fanin,query,flow,seq,kind,ns" >"$out/events.csv"
tb_create 5
servers=$(for h in 2 3 4 5; do printf '%s,' "$(tb_ip "$h")"; done)
for policy in ${policies//,/ }; do
  e7_config "$TB_DIR/sw.toml" "$policy" "$header_reserve"
  tb_start_switch "$TB_DIR/sw.toml"
  for h in 2 3 4 5; do tb_bg "$h" timeout 3600 "$ndp" serve --port 9100 --rto 10ms; done
  sleep 0.3
  for mode in ${modes//,/ }; do
    case "$mode" in
      drop) tb_ctl trim.set class=data overflow=drop >/dev/null ;;
      trim) tb_ctl trim.set class=data overflow=trim mode=ideal >/dev/null ;;
      tofino) tb_ctl trim.set class=data overflow=trim mode=tofino-approx meters=three >/dev/null ;;
      dod) tb_ctl trim.set class=data overflow=trim mode=tofino-approx meters=fixed >/dev/null ;;
    esac
    tb_ctl counters.reset >/dev/null
    tb_ctl config >"$out/effective-$policy-$mode.toml"  # what this mode ran with
    for n in ${fanin//,/ }; do
      echo "== E7: $policy, $mode, fan-in $n, $queries queries of ${size} B per flow" >&2
      tb_exec 1 timeout 600 "$ndp" query --servers "${servers%,}" --flows "$n" --size "$size" \
        --count "$queries" --gap 30ms --window 8 --pull-rate 100Mbit --timeout 10s \
        --csv "$TB_DIR/q.csv" --events "$TB_DIR/ev.csv" --seed "$n" ||
        echo "e7_trimming.sh: some flows of $policy/$mode/N=$n did not complete (failed=1 rows)" >&2
      tail -n +2 "$TB_DIR/q.csv" | sed "s/^/$policy,$mode,$n,/" >>"$out/flows.csv"
      tail -n +2 "$TB_DIR/ev.csv" | sed "s/^/$policy,$mode,$n,/" >>"$out/events.csv"
    done
    # This mode's counters (since the reset above): the ports' and queues' replies as one object
    # shaped like the stats JSON.
    tb_ctl --json ports >"$TB_DIR/ports.json"
    tb_ctl --json queues >"$TB_DIR/queues.json"
    jq -n --slurpfile p "$TB_DIR/ports.json" --slurpfile q "$TB_DIR/queues.json" \
      '{ports: [$p[0][] | .interface as $i | .queues = [$q[0][] | select(.interface == $i)]]}' \
      >"$out/stats-$policy-$mode.json"
  done
  tb_stop_switch || tb_die "sharebufd exited with $?"
  for pid in "${TB_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  TB_PIDS=()
done
/usr/bin/python3 "$(dirname "$0")/lib/e7_report.py" "$out" "$readme" "$queries" "$size"
