#!/usr/bin/env bash
# A TCP stream through sharebufd (defaults, unshaped) arrives in order, as through a cable and a
# hardware switch: the sender's retransmissions that the receiver reports as duplicates (DSACK:
# the segment was reordered, not lost) and its reordering detections stay near zero. The testbed
# keeps its links in order (TB_LINK_ORDER, scripts/testbed.sh: NAPI by default); with
# TB_LINK_ORDER=off a sender transmitting from two CPUs has its segments reordered on the veth
# into the switch, and this test fails (hundreds of each per run on 2 CPUs). Nor does the link
# itself lose a frame (host 1's eth0 has a transmit queue). sharebufd warns at start about a veth
# port with neither NAPI (an XDP program) nor RPS, and not with TB_LINK_ORDER=switch (NAPI on the
# switch's ends only).
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
for end in "$(tb_ns_sw) p1" "$(tb_ns_sw) p2" "$(tb_ns_host 1) eth0" "$(tb_ns_host 2) eth0"; do
  read -r ns dev <<<"$end"
  echo "$ns $dev: rps_cpus $(ip netns exec "$ns" cat "/sys/class/net/$dev/queues/rx-0/rps_cpus")," \
    "$(ip -n "$ns" -d link show dev "$dev" | grep -o 'prog/xdp id [0-9]*' || echo 'no XDP program')"
done
tb_write_config "$TB_DIR/sw.toml" cs 0 "21000 cells"

# sharebufd warns about a veth port with neither NAPI nor RPS, and only about that one.
tb_set_link_order off
tb_link_order "$(tb_ns_sw)" p2 flow
tb_start_switch "$TB_DIR/sw.toml"
tb_stop_switch || fail "sharebufd exited with $?"
# (On one CPU there is nothing to reorder, and no warning.)
[ "$(nproc)" -eq 1 ] || grep -q 'port p1 is a veth without NAPI or RPS' "$TB_DIR/sharebufd.log" ||
  fail "no warning about p1, whose rps_cpus are 0"
! grep -q 'port p2 is a veth without NAPI or RPS' "$TB_DIR/sharebufd.log" ||
  fail "a warning about p2, which steers by flow (RPS)"
# The order `switch`: NAPI (an XDP program) on the switch's ends only, so no warning, and the
# kernel's own receive on the hosts' ends.
tb_set_link_order switch
for i in 1 2; do
  ip -n "$(tb_ns_sw)" -d link show dev "p$i" | grep -q 'prog/xdp' ||
    fail "link order switch: p$i has no XDP program"
  ! ip -n "$(tb_ns_host "$i")" -d link show dev eth0 | grep -q 'prog/xdp' ||
    fail "link order switch: host $i's eth0 has an XDP program"
done
tb_start_switch "$TB_DIR/sw.toml"
tb_stop_switch || fail "sharebufd exited with $?"
! grep -q 'without NAPI or RPS' "$TB_DIR/sharebufd.log" ||
  fail "a link-order warning with NAPI on the switch's ends"
tb_set_link_order "$TB_LINK_ORDER"

tb_start_switch "$TB_DIR/sw.toml"
! grep -q 'without NAPI or RPS' "$TB_DIR/sharebufd.log" ||
  fail "a link-order warning on the testbed's links ($TB_LINK_ORDER)"

counters() { tb_exec "$1" /usr/bin/python3 "$TB_ROOT/bench/lib/tcp_reorder_report.py" counters; }
# Frames host 1's eth0 dropped on transmit (a full veth ring with no queue in front of it).
drop0=$(tb_host_tx_dropped 1)
tb_bg 2 iperf3 -s -1 -p 5201
sleep 0.3
recv0=$(counters 2) send0=$(counters 1)
tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 2)" -p 5201 -t 4 -J >"$TB_DIR/tcp.json" || fail "iperf3 failed"
wait "${TB_PIDS[@]}" 2>/dev/null || true
TB_PIDS=()
recv1=$(counters 2) send1=$(counters 1)
tb_stop_switch || fail "sharebufd exited with $?"
drop1=$(tb_host_tx_dropped 1)
echo "host 1's eth0 dropped $((drop1 - drop0)) frames on transmit"
[ "$((drop1 - drop0))" -eq 0 ] || fail "the link from host 1 lost frames (its eth0 needs a transmit queue)"

netns_check tcp-kept-order "$TB_DIR/tcp.json" "$send0" "$send1" "$TB_DIR/stats.json" "$recv0" "$recv1" ||
  fail "the TCP stream was reordered on its way through the switch"
check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])'
echo "TCP through sharebufd: in order"
