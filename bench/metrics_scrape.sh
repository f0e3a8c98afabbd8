#!/usr/bin/env bash
# Forwarding while the [metrics] listener is scraped (docs/metrics.md): two hosts through sharebufd
# (1 Gbit/s ports, DT), and for each repetition three phases side by side, in rotating order:
# quiet; scraped once a second (Prometheus' usual); scraped back to back by one client
# (bench/lib/scrape_loop.py in the switch's namespace). In each phase: iperf3 h1 -> h2 for
# --seconds, then 200 pings 10 ms apart, and the metrics thread's CPU over the phase. Prints one
# line per phase and, per scraped phase, the medians (with min-max) of the scraped/quiet ratios
# of the same repetition.
#   bench/metrics_scrape.sh [--build DIR] [--reps N] [--seconds S] [--out FILE]
# --out FILE also writes all of it, with the command line, date and commit, to FILE (markdown;
# docs/measurements/metrics-scrape-results.md is the one docs/metrics.md reads).
# Needs root and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/testbed.sh
source "$here/../scripts/testbed.sh"

usage() { sb_usage "$0"; }
build=$TB_ROOT/build reps=3 seconds=10 out=
args="$*"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
export SHAREBUFD=$build/mgmt/sharebufd

tb_init
tb_create 2
ip netns exec "$(tb_ns_sw)" ip link set lo up
tb_write_config "$TB_DIR/sw.toml" dt 1Gbit "21000 cells" 1 '[metrics]
listen = "127.0.0.1:9464"'
tb_start_switch "$TB_DIR/sw.toml"
tb_bg 2 iperf3 -s -p 5201 >/dev/null
sleep 0.5

metrics_cpu_ns() {
  local t
  for t in /proc/"$TB_SWITCH_PID"/task/*; do
    [ "$(cat "$t/comm")" = sb-metrics ] && { cut -d' ' -f1 "$t/schedstat"; return; }
  done
}

# phase NAME: quiet, every_1s or back_to_back; prints "REP NAME mbit ping_p50_ms metrics_pct"
phase() {
  local name=$1 pids=() cpu0 cpu1 t0 t1 mbit p50 interval
  case "$name" in
    every_1s) interval=1 ;;
    back_to_back) interval=0 ;;
  esac
  if [ "$name" != quiet ]; then
    ip netns exec "$(tb_ns_sw)" /usr/bin/python3 "$here/lib/scrape_loop.py" \
      http://127.0.0.1:9464/metrics --interval "$interval" --seconds $((seconds + 6)) \
      >"$TB_DIR/scrapes.$name" &
    pids+=($!)
    sleep 1
  fi
  cpu0=$(metrics_cpu_ns)
  t0=$(date +%s%N)
  mbit=$(tb_exec 1 iperf3 -c "$(tb_ip 2)" -p 5201 -t "$seconds" -J |
    jq '.end.sum_received.bits_per_second / 1e5 | round / 10')
  p50=$(tb_exec 1 ping -c 200 -i 0.01 "$(tb_ip 2)" |
    sed -n 's/.*time=\([0-9.]*\).*/\1/p' | sort -g | awk '{ t[NR] = $1 } END {
      print NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2 }')
  cpu1=$(metrics_cpu_ns)
  t1=$(date +%s%N)
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  echo "$r $name $mbit $p50 $(((cpu1 - cpu0) * 100 / (t1 - t0)))"
}

results=$TB_DIR/results.txt
report=$TB_DIR/report.txt
order=(quiet every_1s back_to_back)
echo "rep phase iperf3_mbit ping_p50_ms metrics_thread_pct_of_a_core" | tee "$report"
for r in $(seq 1 "$reps"); do
  for i in 0 1 2; do
    phase "${order[$(((i + r) % 3))]}" | tee -a "$results" | tee -a "$report"
  done
done
{
  for f in "$TB_DIR"/scrapes.*; do
    echo "${f##*.}: the last phase's scraper made $(cut -d' ' -f1 "$f") scrapes of $(cut -d' ' -f2 "$f") bytes"
  done
  /usr/bin/python3 "$here/lib/control_attack_report.py" --phases every_1s back_to_back \
    --thread metrics "$results"
} | tee -a "$report"
if [ -n "$out" ]; then
  {
    echo "# The [metrics] listener's cost to forwarding"
    echo
    echo "Written by \`bench/metrics_scrape.sh $args\` on $(date -u +%F), commit" \
      "$(git -C "$TB_ROOT" rev-parse --short HEAD)$(git -C "$TB_ROOT" diff --quiet HEAD || echo ' (with uncommitted changes)'), $(nproc) CPUs."
    echo
    echo '```'
    cat "$report"
    echo '```'
    echo
    echo "The switch's effective configuration (\`sharebufctl config\` at the end of the run):"
    echo
    echo '```toml'
    tb_ctl --json config | jq -r .toml
    echo '```'
  } >"$out"
fi
