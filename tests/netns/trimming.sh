#!/usr/bin/env bash
# Packet trimming end to end: two UDP senders at 60 Mbit/s each into one 50 Mbit/s port whose
# small buffer refuses most data; their class says overflow = "trim", so each refused frame's
# first 128 bytes go on through the port's trim queue (queue 0, strict priority, DSCP 8 toward
# the port). The receiver captures what arrives (experiments/lib/trim_rx.py): trimmed headers
# of 128 bytes with valid IPv4 and UDP checksums and DSCP 8, many of them ahead of data queued
# before them, and the counters balance: every trimmed copy was admitted to the trim queue or
# counted trimmed_dropped there, and the trim queue sent what it admitted. Then trim.set turns the
# class back to drop live (through sharebufctl) and a second flood is dropped, not trimmed.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 3
TB_PORT_EXTRA='scheduler = "sp"
trim_queue = 0
trim_dscp_toward = 8' tb_write_config "$TB_DIR/sw.toml" dt 50Mbit "600 cells" 2 '
[[classes]]
name = "data"
queue = 1
alpha = 1.0
overflow = "trim"
[trimming]
trim_size = 128'
tb_start_switch "$TB_DIR/sw.toml"
tb_bg 3 iperf3 -s -1 -p 5201
tb_bg 3 iperf3 -s -1 -p 5202
sleep 0.5
tb_exec 3 /usr/bin/python3 "$TB_ROOT/experiments/lib/trim_rx.py" eth0 5 128 5201,5202 \
  >"$TB_DIR/rx.json" &
rx=$!
sleep 0.5
tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 3)" -p 5201 -u -b 60M -l 1400 -t 3 >/dev/null &
s1=$!
tb_exec 2 timeout 30 iperf3 -c "$(tb_ip 3)" -p 5202 -u -b 60M -l 1400 -t 3 >/dev/null ||
  fail "iperf3 (h2) failed"
wait "$s1" || fail "iperf3 (h1) failed"
wait "$rx" || fail "the receiver's capture failed"
# Live: the class drops again; a second flood is refused whole.
tb_ctl trim.set class=data overflow=drop >/dev/null || fail "trim.set failed"
[ "$(tb_ctl --json trim.get | jq -r '.classes[0].overflow')" = drop ] ||
  fail "trim.get does not show overflow = drop"
tb_ctl counters.reset >/dev/null
tb_bg 3 iperf3 -s -1 -p 5203
sleep 0.3
tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 3)" -p 5203 -u -b 120M -l 1400 -t 1 >/dev/null ||
  fail "iperf3 (second flood) failed"
tb_ctl --json queues >"$TB_DIR/second.json"
netns_check drop-set-live "$TB_DIR/second.json" || fail "overflow = drop set live still trims"
tb_stop_switch || fail "sharebufd exited with $?"
echo "receiver: $(cat "$TB_DIR/rx.json")"
netns_check trimmed-receiver "$TB_DIR/rx.json" || fail "receiver check failed"
check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])' \
  'queue("p3", 1)["trimmed"] > 100' \
  'queue("p3", 1)["trimmed"] == queue("p3", 0)["received"]' \
  'queue("p3", 0)["received"] == queue("p3", 0)["admitted"] + queue("p3", 0)["trimmed_dropped"]' \
  'queue("p3", 0)["trimmed_sent"] == queue("p3", 0)["transmitted"]' \
  'queue("p3", 1)["trimmed_sent"] == 0' \
  's["buffer"]["header_reserve_cells"] == 8 * 2' \
  '0 < queue("p3", 0)["header_reserve"] <= queue("p3", 0)["admitted"]' \
  's["buffer"]["pool_free_cells"] == s["buffer"]["pool_physical_cells"] - s["buffer"]["occupancy_cells"] + s["buffer"]["outside_cells"]'
