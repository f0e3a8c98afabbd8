#!/usr/bin/env bash
# Trimming's return-to-sender (SFC): UDP at 60 Mbit/s into a 50 Mbit/s port whose small buffer
# refuses most of it; the class says overflow = "return-to-sender", so each refused frame's first
# 128 bytes go back out of the ingress port, addresses and ports swapped, marked DSCP 7. The
# sender captures them (experiments/lib/trim_rx.py): headers from the receiver's address to its
# own port, valid IPv4 and UDP checksums, DSCP 7; and the counters balance.
# Then NDP's fallback: a class that trims, no header reserve and a trim queue that is the data
# queue itself, so the policy refuses headers as it refuses data; a refused header goes back to
# its sender instead of being lost (header_full = "return-to-sender", the default).
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
TB_PORT_EXTRA='scheduler = "sp"
trim_queue = 0' tb_write_config "$TB_DIR/sw.toml" dt 50Mbit "600 cells" 2 '
[[classes]]
name = "data"
queue = 1
alpha = 1.0
overflow = "return-to-sender"
[trimming]
trim_size = 128
return_dscp = 7'
tb_start_switch "$TB_DIR/sw.toml"
tb_bg 2 iperf3 -s -1 -p 5201
sleep 0.5
tb_exec 1 /usr/bin/python3 "$TB_ROOT/experiments/lib/trim_rx.py" eth0 5 128 5201 \
  >"$TB_DIR/rx.json" &
rx=$!
sleep 0.5
tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 2)" -p 5201 -u -b 60M -l 1400 -t 3 >/dev/null ||
  fail "iperf3 failed"
wait "$rx" || fail "the sender's capture failed"
tb_stop_switch || fail "sharebufd exited with $?"
echo "sender: $(cat "$TB_DIR/rx.json")"
netns_check returned-headers "$TB_DIR/rx.json" "$(tb_ip 2)" || fail "sender check failed"
check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])' \
  'queue("p2", 1)["bounced"] > 100' \
  'queue("p2", 1)["trimmed"] == 0' \
  'queue("p2", 1)["bounced"] == queue("p1", 0)["received"]' \
  'queue("p1", 0)["received"] == queue("p1", 0)["admitted"] + queue("p1", 0)["trimmed_dropped"]' \
  'queue("p1", 0)["trimmed_sent"] == queue("p1", 0)["transmitted"]'

# NDP's fallback when the header queue is full.
TB_PORT_EXTRA='scheduler = "sp"
trim_queue = 1' tb_write_config "$TB_DIR/sw.toml" dt 50Mbit "600 cells" 2 '
[[classes]]
name = "data"
queue = 1
alpha = 1.0
overflow = "trim"
[trimming]
trim_size = 128
return_dscp = 7
header_reserve = 0'
tb_start_switch "$TB_DIR/sw.toml"
tb_bg 2 iperf3 -s -1 -p 5202
sleep 0.5
tb_exec 1 /usr/bin/python3 "$TB_ROOT/experiments/lib/trim_rx.py" eth0 4 128 5202 \
  >"$TB_DIR/rx2.json" &
rx=$!
sleep 0.5
tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 2)" -p 5202 -u -b 60M -l 1400 -t 2 >/dev/null ||
  fail "iperf3 (header queue full) failed"
wait "$rx" || fail "the sender's second capture failed"
echo "sender, header queue full: $(cat "$TB_DIR/rx2.json")"
netns_check returned-again "$TB_DIR/rx2.json" || fail "refused headers did not come back"
tb_stop_switch || fail "sharebufd exited with $?"
# Every header the data queue refused went back (returned ones join p1's queue 1 with the
# iperf3 control connection's segments).
check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])' \
  's["buffer"]["header_reserve_cells"] == 0' \
  'queue("p2", 1)["trimmed_dropped"] > 20' \
  'queue("p2", 1)["bounced"] == queue("p2", 1)["trimmed_dropped"]' \
  'queue("p1", 1)["received"] >= queue("p2", 1)["bounced"]'
