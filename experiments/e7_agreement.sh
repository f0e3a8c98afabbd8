#!/usr/bin/env bash
# E7's live switch against its replay: for each policy and overflow mode, one E7 incast (h1 asks
# h2-h5 for N sharebuf-ndp flows, Q queries) through a fresh sharebufd with that mode in its
# configuration and every arrival recorded (capture mode=all, one pcap per ingress port); then
# the recording is replayed through sharebuf-replay with the same configuration and policy (the
# live switch's trimming code on a simulated clock with ideal line-rate ports), and
# experiments/lib/e7_agreement.py compares port p1's trimming counters (refusals, meter trims,
# deflections, cut copies, header-queue refusals, returns, notifications, changes to
# pessimistic) and the trimmed headers themselves: the same packets (Jaccard) and the same
# order at h1 (concordant pairs).
#   experiments/e7_agreement.sh [--out DIR] [--policies dt,credence,lqd]
#       [--modes drop,trim,tofino,dod] [--fanin 16] [--queries 10] [--size 65536]
#       [--header-reserve 8] [--runs 3] [--keep-pcaps] [--readme]
# About 3 minutes a run with the defaults (--runs: how many times the whole set runs; the table
# gives medians and ranges over them). Writes DIR/runK/rows.csv and DIR/agreement.md, each run's
# files in DIR/runK/POLICY-MODE/ (the recordings only with --keep-pcaps), and the configuration
# each policy and mode ran with as DIR/effective-POLICY-MODE.toml. --readme writes the E7 page's
# agreement section and keeps what it was made from in docs/runs/e7/e7-agreement. Needs root and
# a build (./run.sh build).
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../scripts/testbed.sh
source "$root/scripts/testbed.sh"
# shellcheck source=../scripts/paper_testbeds.sh
source "$root/scripts/paper_testbeds.sh"

out=results/e7-agreement policies=dt,credence,lqd modes=drop,trim,tofino,dod fanin=16 queries=10
size=65536 header_reserve=8 keep=0 readme=0 runs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --fanin) fanin=$2; shift 2 ;;
    --queries) queries=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --header-reserve) header_reserve=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --keep-pcaps) keep=1; shift ;;
    --readme) readme=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "e7_agreement.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
  esac
done
for m in ${modes//,/ }; do
  case "$m" in drop|trim|tofino|dod) ;; *) echo "e7_agreement.sh: --modes: '$m' is not drop, trim, tofino or dod" >&2; exit 2 ;; esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "e7_agreement.sh: --runs: '$runs' is not a number from 1" >&2; exit 2; }
for v in "$fanin" "$queries" "$header_reserve"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "e7_agreement.sh: '$v' is not a number" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "e7_agreement.sh: needs root (network namespaces)" >&2; exit 1; }
out=$(tb_out_dir "$out")
ndp=$(tb_ndp) || exit 1
replay_bin="$TB_ROOT/build/sim/sharebuf-replay"
[ -x "$replay_bin" ] || tb_die "sharebuf-replay not built ($replay_bin): ./run.sh build"
agreement="$root/experiments/lib/e7_agreement.py"
rm -rf "$out"/run[0-9]* "$out"/effective-*.toml

tb_init
tb_create 5
servers=$(for h in 2 3 4 5; do printf '%s,' "$(tb_ip "$h")"; done)
for rep in $(seq 1 "$runs"); do
  mkdir -p "$out/run$rep"
  # The recordings go into the run's folder (captures may go one directory below capture_dir).
  export TB_CAPTURE_DIR=$out/run$rep
  /usr/bin/python3 "$agreement" --header >"$out/run$rep/rows.csv"
  for policy in ${policies//,/ }; do
    for mode in ${modes//,/ }; do
      run="$out/run$rep/$policy-$mode"
      rm -rf "$run"
      mkdir -p "$run"
      case "$mode" in
        drop) e7_config "$TB_DIR/sw.toml" "$policy" "$header_reserve" drop ideal three ;;
        trim) e7_config "$TB_DIR/sw.toml" "$policy" "$header_reserve" trim ideal three ;;
        tofino) e7_config "$TB_DIR/sw.toml" "$policy" "$header_reserve" trim tofino-approx three ;;
        dod) e7_config "$TB_DIR/sw.toml" "$policy" "$header_reserve" trim tofino-approx fixed ;;
      esac
      cp "$TB_DIR/sw.toml" "$run/sw.toml"
      echo "== E7 agreement, run $rep of $runs: $policy, $mode, fan-in $fanin, $queries queries: live run, recorded" >&2
      tb_start_switch "$TB_DIR/sw.toml"
      for h in 2 3 4 5; do tb_bg "$h" timeout 600 "$ndp" serve --port 9100 --rto 10ms; done
      sleep 0.3
      tb_ctl --json capture.start path="$run/rec" mode=all per_port=true stamps=ring \
        max_bytes=800000000 \
        >"$run/capture.json" || tb_die "capture.start failed"
      tb_exec 1 timeout 600 "$ndp" query --servers "${servers%,}" --flows "$fanin" --size "$size" \
        --count "$queries" --gap 30ms --window 8 --pull-rate 100Mbit --timeout 10s \
        --csv "$run/flows.csv" --events "$run/events.csv" --seed "$fanin" ||
        echo "e7_agreement.sh: some flows of $policy/$mode did not complete" >&2
      tb_stop_switch || tb_die "sharebufd exited with $?"
      cp "$TB_DIR/stats.json" "$run/stats.json"
      tb_keep_effective "$run/effective.toml"
      [ "$rep" -ne 1 ] || cp "$run/effective.toml" "$out/effective-$policy-$mode.toml"
      for pid in "${TB_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
      TB_PIDS=()
      pcaps=()
      for p in 1 2 3 4 5; do pcaps+=(--pcap "$run/rec-p$p.pcap@p$p"); done
      "$replay_bin" --config "$run/sw.toml" "${pcaps[@]}" --policies "$policy" --json \
        --departures "$run/departures.csv" >"$run/replay.json" ||
        tb_die "$policy/$mode: sharebuf-replay failed"
      /usr/bin/python3 "$agreement" "$run" "$policy" "$mode" >>"$out/run$rep/rows.csv"
      [ "$keep" = 1 ] || rm -f "$run"/rec-*.pcap
    done
  done
done
readme_flag=()
[ "$readme" = 0 ] || readme_flag=(--readme)
/usr/bin/python3 "$agreement" --report "$out" --runs "$runs" --fanin "$fanin" --queries "$queries" \
  --size "$size" "${readme_flag[@]}"
echo "results in $out"
