#!/usr/bin/env bash
# Live-vs-replay agreement: how close sharebufd's buffer is to the ideal line-rate buffer of the
# replay on the same arrivals. For each experiment (E1, E2) and policy, one live run as the
# experiment runs it (background UDP, then its TCP flows) with every arrival recorded
# (capture mode=all, one pcap per ingress port), a 1 ms watch of every queue, and the receive
# times of the bottleneck port's UDP frames at its host; then the recording is replayed with the
# same configuration and policy. experiments/lib/agreement.py compares, per queue: drops live and
# in replay, peak occupancy, the mean absolute difference of the occupancy timelines (cells and
# % of B); and the live port's departure spacing against its line rate (p50/p99 of
# |gap / frame time - 1|).
#   experiments/live_vs_replay.sh [--out DIR] [--experiments e1,e2] [--policies SPEC;...]
#                                 [--warmup S] [--keep-pcaps] [--readme]
# Defaults: results/agreement, e1 and e2, dt protean fb credence lqd, 3 s of warm-up. Writes
# rows.csv and agreement.md (and with --readme the fidelity page's section); each run's
# files stay in DIR/<experiment>-<policy>/ (the recordings only with --keep-pcaps: hundreds of
# MB). Needs root and a build (./run.sh build).
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../scripts/testbed.sh
source "$root/scripts/testbed.sh"
# shellcheck source=../scripts/fct_run.sh
source "$root/scripts/fct_run.sh"
# shellcheck source=../scripts/paper_testbeds.sh
source "$root/scripts/paper_testbeds.sh"

out=results/agreement experiments=e1,e2 policies="dt,protean,fb,credence,lqd" warmup=3 readme=0
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --experiments) experiments=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --readme) readme=1; shift ;;
    --keep-pcaps) keep=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "live_vs_replay.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
out=$(tb_out_dir "$out")
export TB_CAPTURE_DIR=$out  # the recordings go into the results folder
replay_bin="$TB_ROOT/build/sim/sharebuf-replay"
[ -x "$replay_bin" ] || tb_die "sharebuf-replay not built ($replay_bin): ./run.sh build"
tb_tg >/dev/null || exit 1
agreement="$root/experiments/lib/agreement.py"
/usr/bin/python3 "$agreement" --header >"$out/rows.csv"

tb_init
tb_create 3 cubic 0 200ms
mapfile -t plist < <(tb_split_specs "$policies")
IFS=, read -r -a elist <<<"$experiments"
for exp in "${elist[@]}"; do
  case "$exp" in
    e1) rate=100000000 udp_ports=5201 flows=16384 ;;
    e2) rate=80000000 udp_ports=5201,5202,5203,5204,5205,5206,5207 flows=8192 ;;
    *) tb_die "unknown experiment '$exp' (e1 or e2)" ;;
  esac
  for spec in "${plist[@]}"; do
    label=$(tb_policy_label "$spec")
    run="$out/$exp-$label"
    rm -rf "$run"
    mkdir -p "$run"
    echo "== $exp $label: live run, recorded"
    "${exp}_config" "$TB_DIR/sw.toml" "$spec"
    cp "$TB_DIR/sw.toml" "$run/sw.toml"
    tb_start_switch "$TB_DIR/sw.toml"
    tb_ctl --json capture.start path="$run/rec" mode=all per_port=true max_bytes=800000000 \
      >"$run/capture.json" || tb_die "capture.start failed"
    seconds=$(awk -v w="$warmup" 'BEGIN { printf "%d", w + 4 }')
    tb_ctl --json watch interval_us=1000 --duration "$((seconds + 1))" >"$run/watch.jsonl" 2>/dev/null &
    watch_pid=$!
    tb_exec 2 /usr/bin/python3 "$root/experiments/lib/rx_gaps.py" eth0 "$((seconds + 1))" \
      "$run/gaps.csv" "$udp_ports" &
    gaps_pid=$!
    "${exp}_background" "$seconds"
    # The experiment's TCP flows (S3 -> S1 in E1, S2's h3 -> S1 in E2), as fct_run runs them; it
    # stops the switch at the end (stats in $TB_DIR/stats.json, captures closed).
    fct_run "$label" 2 "$run" 3 1 100 "$flows" "$warmup" >/dev/null
    tb_keep_effective "$run/effective.toml"
    wait "$watch_pid" "$gaps_pid" || true
    cp "$TB_DIR/stats.json" "$run/stats.json"
    pcaps=()
    for p in 1 2 3; do pcaps+=(--pcap "$run/rec-p$p.pcap@p$p"); done
    "$replay_bin" --config "$run/sw.toml" "${pcaps[@]}" --policy "$spec" \
      --timeline "$run/replay-timeline.csv" --timeline-interval-us 100 --json >"$run/replay.json" ||
      tb_die "$exp $label: sharebuf-replay failed"
    /usr/bin/python3 "$agreement" "$run" "$exp" "$label" "$rate" >>"$out/rows.csv"
    [ "$keep" = 1 ] || rm -f "$run"/rec-*.pcap  # hundreds of MB; the comparison is in rows.csv
  done
done
/usr/bin/python3 "$agreement" --markdown "$out/rows.csv" "$out/agreement.md"
cat "$out/agreement.md"
if [ "$readme" = 1 ]; then
  /usr/bin/python3 "$agreement" --readme "$out"
fi
echo "results in $out"
