#!/usr/bin/env bash
# The main demo: three hosts around sharebufd (DT, 100 Mbit/s ports, 21000-cell buffer, two
# queues per port served round robin: TCP in queue 0, UDP marked DSCP CS1 in queue 1). Pings every
# pair, then runs iperf3 TCP h1 -> h3 together with UDP h2 -> h3 at twice the port rate, so port
# p3's UDP queue fills the shared buffer up to DT's threshold; prints both throughputs and the
# switch's per-queue counters.
#   netns-scripts/basic_demo.sh [--seconds S] [--policy NAME]     (as root, after ./run.sh build)
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"

seconds=5 policy=dt
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --policy) policy=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "demo.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
command -v iperf3 >/dev/null || tb_die "iperf3 missing (./run.sh deps)"

tb_init
tb_create 3 cubic 0 200ms
tb_write_config "$TB_DIR/switch.toml" "$policy" 100Mbit "21000 cells" 2 '
[[classes]]
name = "tcp"
queue = 0
dscp = [0]
[[classes]]
name = "udp"
queue = 1
dscp = [8]'
tb_start_switch "$TB_DIR/switch.toml" --print-stats
echo "== sharebufd running in $(tb_ns_sw): policy $policy, ports p1..p3 shaped to 100 Mbit/s"

echo "== ping between all hosts"
for a in 1 2 3; do
  for b in 1 2 3; do
    [ "$a" = "$b" ] && continue
    if tb_exec "$a" ping -c 3 -i 0.2 -W 1 -q "$(tb_ip "$b")" >"$TB_DIR/ping" 2>&1; then
      printf '  h%s -> h%s  %s\n' "$a" "$b" "$(grep -o 'rtt.*' "$TB_DIR/ping")"
    else
      printf '  h%s -> h%s  FAILED\n' "$a" "$b"
      cat "$TB_DIR/ping"
      exit 1
    fi
  done
done

echo "== iperf3 for ${seconds}s: TCP h1 -> h3 and UDP h2 -> h3 at 200 Mbit/s, both into port p3"
tb_bg 3 iperf3 -s -p 5201 -1 -J --logfile "$TB_DIR/tcp-server.json"
tb_bg 3 iperf3 -s -p 5202 -1 -J --logfile "$TB_DIR/udp-server.json"
sleep 0.5
tb_bg 2 iperf3 -c "$(tb_ip 3)" -p 5202 -u -b 200M -l 1400 --dscp CS1 -t "$seconds" -J --logfile "$TB_DIR/udp-client.json"
tb_exec 1 timeout $((seconds + 20)) iperf3 -c "$(tb_ip 3)" -p 5201 -t "$seconds" -J >"$TB_DIR/tcp-client.json"
wait "${TB_PIDS[@]}" 2>/dev/null || true
TB_PIDS=()
/usr/bin/python3 "$(dirname "$0")/../scripts/demo_report.py" basic "$TB_DIR"

echo "== stopping sharebufd; its counters (p3/0 holds TCP, p3/1 the UDP flood):"
tb_stop_switch
cat "$TB_DIR/sharebufd.out"
grep -E "stopped|error" "$TB_DIR/sharebufd.log" | sed 's/^/  /'
