#!/usr/bin/env bash
# Soak: a long run of the live switch under everything at once, then the books must balance.
# Four hosts on 200 Mbit/s ports (two queues each; storm control at 50 000 frames/s):
#   h1 floods unknown unicast as fast as one core sends, frames of 60, 590 and 1514 bytes in turn;
#   h2 broadcasts 100 000 frames/s (half of them over the storm limit) and sends malformed
#   frames of every kind the parser names; h3 and h4 run TCP both ways (one direction DSCP 46).
# Meanwhile experiments/lib/soak_control.py switches to a random policy and view every 100 ms,
# switches policy back to back --fast-switches times in all (from 10 s on), hammers status and
# queues on two connections, reads a 1 ms watch stream and, every minute from 20 s on, times a
# fresh status beside 1000 busy and 300 idle connections. It runs until the switch has received
# --frames frames and reclaimed --fast-switches policies (or --max-minutes), then stops
# everything and checks:
#   - per queue: received = admitted + dropped, admitted = transmitted + pushed out + queued;
#   - the copies: what the queues received (plus copies refused as oversize) is what the ports
#     received minus their drops, each flooded frame counted once per other port;
#   - every cell back in the pool, sharebufd exits 0, no error or critical line in its log, no
#     failed control request;
#   - RSS at the end within 10 % of RSS after the first 20 s (rings and pools touched);
#   - each crowd's fresh status answered within 100 ms.
#   experiments/soak.sh [--frames 1e8] [--max-minutes 30] [--every-ms 100]
#                       [--fast-switches 100000] [--out DIR] [--readme]
# Writes DIR (default results/soak): soak.csv (t_s, rss_kb, rx_frames, retired_reclaimed,
# retired_pending), control.json, stats.json, sharebufd.log, summary.md; with --readme the table
# goes into docs/testing.md's soak section. Exits 1 if a check fails. Needs root and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../scripts/testbed.sh
source "$root/scripts/testbed.sh"

frames=1e8 max_minutes=30 every_ms=100 fast=100000 out=results/soak readme=0
while [ $# -gt 0 ]; do
  case "$1" in
    --frames) frames=$2; shift 2 ;;
    --max-minutes) max_minutes=$2; shift 2 ;;
    --every-ms) every_ms=$2; shift 2 ;;
    --fast-switches) fast=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --readme) readme=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "soak.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
target=$(awk -v f="$frames" 'BEGIN { printf "%d", f }')
out=$(tb_out_dir "$out")
blaster="$TB_ROOT/build/tools/sharebuf-blaster"
[ -x "$blaster" ] || tb_die "sharebuf-blaster not built: ./run.sh build"
command -v iperf3 >/dev/null || tb_die "missing iperf3: ./run.sh deps"

tb_init
tb_create 4
# Room for the crowd (1300 connections) beside the soak's own five clients: at the default 1024
# the daemon would close the longest-idle ones to admit the crowd, the soak's operator among them.
TB_CONTROL_EXTRA='max_clients = 2048' TB_PORT_EXTRA='storm_pps = 50000' tb_write_config "$TB_DIR/sw.toml" dt 200Mbit "21000 cells" 2 '
[[classes]]
name = "default"
queue = 0
[[classes]]
name = "ef"
queue = 1
group = "high"
dscp = [46]'
tb_start_switch "$TB_DIR/sw.toml"
pid=$TB_SWITCH_PID
rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
rss_start=$(rss)

stop_file="$TB_DIR/stop"
# loop HOST CMD...: CMD again and again in HOST's namespace until the stop file appears.
loop() {
  local h=$1
  shift
  tb_bg "$h" bash -c 'while [ ! -e "$0" ]; do "$@" >/dev/null 2>&1 || sleep 0.2; done' "$stop_file" "$@"
}
tb_bg 3 iperf3 -s -p 5201 >/dev/null 2>&1
tb_bg 4 iperf3 -s -p 5201 >/dev/null 2>&1
tb_bg 4 iperf3 -s -p 5202 >/dev/null 2>&1
sleep 0.5
loop 1 "$blaster" --interface eth0 --dst-mac 02:5b:00:00:00:99 --src-ip "$(tb_ip 1)" \
  --dst-ip 198.18.0.99 --frame-bytes 60,590,1514 --seconds 5
loop 2 "$blaster" --interface eth0 --dst-mac ff:ff:ff:ff:ff:ff --src-ip "$(tb_ip 2)" \
  --dst-ip 198.18.0.255 --ethertype 0x88b5 --pps 100000 --seconds 5
loop 2 /usr/bin/python3 "$TB_ROOT/tests/netns/send_malformed.py" eth0 200
loop 3 iperf3 -c "$(tb_ip 4)" -p 5201 -t 5
loop 4 iperf3 -c "$(tb_ip 3)" -p 5201 -t 5 -S 184
/usr/bin/python3 "$root/experiments/lib/soak_control.py" "$TB_DIR/ctl.sock" "$out/control.json" \
  --every-ms "$every_ms" --fast-switches "$fast" --seconds $((max_minutes * 60)) &
control_pid=$!

echo "t_s,rss_kb,rx_frames,retired_reclaimed,retired_pending" >"$out/soak.csv"
start=$(date +%s)
rss_warm="" rx=0
while :; do
  sleep 2
  now=$(($(date +%s) - start))
  kill -0 "$pid" 2>/dev/null || tb_die "sharebufd died after $now s"
  row=$(tb_ctl --json --timeout 10 ports 2>/dev/null | jq '[.[].rx_frames] | add' || echo "")
  [ -n "$row" ] && rx=$row
  st=$(tb_ctl --json --timeout 10 status 2>/dev/null |
    jq -r '"\(.retired_reclaimed) \(.retired_pending)"' || echo "- -")
  mem=$(rss)
  echo "$now,$mem,$rx,${st// /,}" >>"$out/soak.csv"
  [ -n "$rss_warm" ] || [ "$now" -lt 20 ] || rss_warm=$mem
  if [ $((now % 30)) -lt 2 ]; then
    tb_log "$now s: $rx of $target frames, RSS $mem kB, policies reclaimed/pending ${st}"
  fi
  reclaimed=${st%% *}
  [ "$rx" -lt "$target" ] || [ "$reclaimed" = - ] || [ "$reclaimed" -lt "$fast" ] || break
  [ "$now" -lt $((max_minutes * 60)) ] || { tb_log "time limit: $rx of $target frames"; break; }
done
elapsed=$(($(date +%s) - start))
rss_end=$(rss)
touch "$stop_file"
kill -TERM "$control_pid" 2>/dev/null || true
wait "$control_pid" || tb_log "soak_control exited with $?"
# The loops end with their current run (at most 5 s); then the iperf3 servers are stopped.
sleep 6
for p in "${TB_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
for p in "${TB_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
TB_PIDS=()
rc=0
tb_stop_switch || rc=$?
cp "$TB_DIR/stats.json" "$TB_DIR/sharebufd.log" "$TB_DIR/sw.toml" "$out/"
tb_keep_effective "$out/effective.toml"

verdict=0
/usr/bin/python3 "$TB_ROOT/experiments/lib/soak_report.py" "$out" "$rc" "$rss_start" \
  "${rss_warm:-$rss_end}" "$rss_end" "$elapsed" "$target" "$fast" || verdict=$?
if [ "$readme" -eq 1 ]; then
  /usr/bin/python3 "$TB_ROOT/scripts/doc_section.py" --setup "$out" soak "$out/summary.md"
fi
exit $verdict
