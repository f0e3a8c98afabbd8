#!/usr/bin/env bash
# sharebufd's CPU while frames recirculate in trimming's Tofino approximation: three hosts, ports
# shaped to 50 Mbit/s, `mode = "tofino-approx"` with 2 pipelines and a 1 ms recirculation latency,
# h1 and h2 sending 40 Mbit/s of UDP each into h3 for 4 s (every overflow deflected). Prints the
# daemon's CPU time over the overload (utime + stime, 1/100 s) and p3's deflections. Compare two
# builds with SHAREBUFD=DIR/mgmt/sharebufd.
#   bench/recirc_cpu.sh
# Needs root and ./run.sh build.
source "$(dirname "$0")/../tests/netns/lib.sh"
tb_init
tb_create 3
TB_PORT_EXTRA='scheduler = "sp"
trim_queue = 0' tb_write_config "$TB_DIR/sw.toml" dt 50Mbit "600 cells" 3 '
[classify]
mode = "dscp"
[[classes]]
name = "a"
queue = 1
dscp = [10]
overflow = "trim"
[trimming]
mode = "tofino-approx"
pipelines = 2
recirc_latency = "1ms"
recirc_rate = "50Mbit"'
tb_start_switch "$TB_DIR/sw.toml"
cpu() { awk '{print $14 + $15}' /proc/"$TB_SWITCH_PID"/stat; }
tb_bg 3 iperf3 -s -1 -p 5201 >/dev/null
tb_bg 3 iperf3 -s -1 -p 5202 >/dev/null
sleep 0.4
c0=$(cpu)
tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 3)" -p 5201 -u -b 40M -l 1400 -t 4 -S 40 >/dev/null &
c1pid=$!
tb_exec 2 timeout 30 iperf3 -c "$(tb_ip 3)" -p 5202 -u -b 40M -l 1400 -t 4 -S 40 >/dev/null
wait "$c1pid" || true
c1=$(cpu)
echo "sharebufd CPU over the 4 s overload: $((c1 - c0)) ticks (1/100 s)"
tb_ctl --json ports | jq -r '.[] | select(.interface == "p3") | .tofino_approx // {} |
  "deflected \(.deflected) ingress_trimmed \(.ingress_trimmed)"'
