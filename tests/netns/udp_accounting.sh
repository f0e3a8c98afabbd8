#!/usr/bin/env bash
# UDP at twice the port rate into one port under DT: every frame is accounted (received =
# admitted + dropped by reason; admitted = transmitted + pushed out + queued) and the queue's peak
# respects DT's bound: one saturated queue holds at most alpha*B/(1+alpha) plus one frame.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "4000 cells" 1 '
[[classes]]
name = "all"
alpha = 1.0'
tb_start_switch "$TB_DIR/sw.toml"
tb_bg 2 iperf3 -s -1 -p 5201
sleep 0.5
tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 2)" -p 5201 -u -b 200M -l 1400 -t 3 >/dev/null || fail "iperf3 failed"
tb_stop_switch || fail "sharebufd exited with $?"
check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])' \
  'queue("p2")["dropped"]["threshold"] > 1000' \
  'queue("p2")["dropped"]["pool_full"] == 0' \
  'queue("p2")["peak_cells"] <= 4000 * 1.0 / (1 + 1.0) + 19' \
  'queue("p2")["peak_cells"] >= 4000 / 2 - 19' \
  'port("p1")["rx_frames"] == sum(q["received"] for q in port("p2")["queues"]) + port("p1")["filtered"] + port("p1")["malformed_total"] + port("p1")["truncated"] + port("p2")["oversize"]' \
  's["buffer"]["pool_free_cells"] == s["buffer"]["pool_physical_cells"] - s["buffer"]["occupancy_cells"] + s["buffer"]["outside_cells"]'
