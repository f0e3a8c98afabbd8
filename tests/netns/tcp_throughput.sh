#!/usr/bin/env bash
# iperf3 TCP through a 100 Mbit/s port reaches 90-100 % of it.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
tb_write_config "$TB_DIR/sw.toml" dt 100Mbit
tb_start_switch "$TB_DIR/sw.toml"
tb_bg 2 iperf3 -s -1 -p 5201
sleep 0.5
tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 2)" -p 5201 -t 5 -O 1 -J >"$TB_DIR/tcp.json" || fail "iperf3 failed"
mbps=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['end']['sum_received']['bits_per_second']/1e6)" "$TB_DIR/tcp.json")
echo "TCP goodput through a 100 Mbit/s port: $mbps Mbit/s"
/usr/bin/python3 -c "import sys; v=float(sys.argv[1]); sys.exit(0 if 90 <= v <= 100 else 1)" "$mbps" ||
  fail "TCP goodput $mbps Mbit/s is outside 90-100 Mbit/s"
tb_stop_switch || fail "sharebufd exited with $?"
check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])'
