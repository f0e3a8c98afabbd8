#!/usr/bin/env bash
# RX parking (rx_worker.h): at idle the RX workers of p2 and p3 hand their rings to the first
# worker and sleep; pings still go both ways and leave them parked (a ping's answer is read by the
# first worker without waking anyone); a TCP stream makes the first worker find a parked ring
# busy and wake its worker; once the traffic stops they park again. The books balance.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 3
tb_write_config "$TB_DIR/sw.toml" dt 0 "21000 cells"
tb_start_switch "$TB_DIR/sw.toml"

workers() { tb_ctl --json status >"$TB_DIR/status.json" && cat "$TB_DIR/status.json"; }
check_workers() {  # PYTHON-EXPR over w (the rx_workers list)... MESSAGE
  workers >/dev/null
  netns_check rx-workers "$TB_DIR/status.json" "$1" || fail "$2"
}

sleep 0.3
check_workers 'len(w) == 3 and not w[0]["parked"] and w[1]["parked"] and w[2]["parked"]' \
  "workers 1 and 2 did not park at idle"
tb_exec 1 ping -c 20 -i 0.01 -W 1 -q "$(tb_ip 2)" | tail -2
tb_exec 3 ping -c 20 -i 0.01 -W 1 -q "$(tb_ip 1)" | tail -2 || fail "h3 cannot ping h1"
check_workers 'w[1]["parked"] and w[2]["parked"] and w[1]["unparks"] == 0 and w[2]["unparks"] == 0' \
  "pings woke a parked worker"

tb_bg 2 iperf3 -s -1 -p 5201
sleep 0.3
tb_exec 1 timeout 20 iperf3 -c "$(tb_ip 2)" -p 5201 -t 3 -R -J >"$TB_DIR/tcp.json" || fail "iperf3 failed"
wait "${TB_PIDS[@]}" 2>/dev/null || true
TB_PIDS=()
netns_check tcp-rate "$TB_DIR/tcp.json"
check_workers 'w[1]["unparks"] >= 1' "a TCP stream from h2 did not wake p2's worker"
sleep 0.3
check_workers 'w[1]["parked"] and w[2]["parked"] and w[1]["parks"] >= 2' \
  "the workers did not park again after the traffic"

tb_stop_switch || fail "sharebufd exited with $?"
check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])' \
  's["buffer"]["pool_free_cells"] == s["buffer"]["pool_physical_cells"]'
echo "RX workers park at idle and wake under load"
