#!/usr/bin/env bash
# Malformed frames sent from a host with a raw socket are counted per reason and dropped, while
# other traffic keeps flowing.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
tb_write_config "$TB_DIR/sw.toml" dt 100Mbit
tb_start_switch "$TB_DIR/sw.toml"
tb_exec 1 ping -c 2 -W 2 -q "$(tb_ip 2)" >/dev/null || fail "no connectivity before the test"
tb_bg 1 ping -c 40 -i 0.05 -W 2 -q "$(tb_ip 2)"
ping_pid=${TB_PIDS[-1]}
kinds=$(tb_exec 1 /usr/bin/python3 "$HERE/send_malformed.py" eth0 5) || fail "could not send frames"
wait "$ping_pid" || fail "ping lost packets while malformed frames were sent"
TB_PIDS=()
tb_bg 2 iperf3 -s -1 -p 5201
sleep 0.5
tb_exec 1 timeout 20 iperf3 -c "$(tb_ip 2)" -p 5201 -t 1 >/dev/null || fail "TCP fails after malformed frames"
tb_stop_switch || fail "sharebufd exited with $?"
echo "sent 5 of each: $kinds"
checks=()
for kind in $(echo "$kinds" | tr -d '[]",'); do
  checks+=("port(\"p1\")[\"malformed\"][\"$kind\"] == 5")
done
check_stats "${checks[@]}" 'port("p1")["malformed_total"] == 5 * '"$(echo "$kinds" | tr ',' '\n' | grep -c .)" \
  'all(accounted(q) for p in s["ports"] for q in p["queues"])'
