#!/usr/bin/env bash
# [switch] poll_mode (model/switch_config.h): how an idle RX worker waits. With "busy-poll" the
# first RX worker never blocks: while nothing flows its voluntary context switches (each a block
# in poll() or a sleep) stay where they are, and pings still cross. With rx_io = "af_xdp" too,
# the AF_XDP sockets take the busy-polling options without a warning. With "adaptive" the worker
# spins only after a frame and blocks at idle: its voluntary switches keep growing (poll()'s
# 100 ms timeout at least). status reports the mode. Counting context switches, not CPU time,
# keeps the check true on a machine whose cores other work keeps busy.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2

# The voluntary context switches of sharebufd's first RX worker (thread sb-rx0).
rx0_switches() {
  local t
  for t in /proc/"$TB_SWITCH_PID"/task/*; do
    if [ "$(cat "$t/comm")" = sb-rx0 ]; then
      awk '/^voluntary_ctxt_switches/ { print $2 }' "$t/status"
      return 0
    fi
  done
  fail "sharebufd has no thread sb-rx0"
}

# run MODE RX_IO: starts sharebufd so, pings through it, then sets `blocked` to how many times
# sb-rx0 blocked during one idle second.
run() {
  local mode=$1 io=$2
  tb_write_config "$TB_DIR/sw.toml" cs 0 "21000 cells"
  sed -i "s/^\[switch\]/[switch]\npoll_mode = \"$mode\"\nrx_io = \"$io\"/" "$TB_DIR/sw.toml"
  tb_start_switch "$TB_DIR/sw.toml"
  [ "$(tb_ctl --json status | jq -r .poll_mode)" = "$mode" ] || fail "status does not say poll_mode $mode"
  ! grep -q 'busy polling refused' "$TB_DIR/sharebufd.log" ||
    fail "$mode/$io: $(grep 'busy polling refused' "$TB_DIR/sharebufd.log")"
  tb_exec 1 ping -c 30 -i 0.01 -W 1 "$(tb_ip 2)" >"$TB_DIR/ping.txt" || fail "$mode/$io: ping failed"
  grep -q ' 0% packet loss' "$TB_DIR/ping.txt" || fail "$mode/$io: $(grep 'packet loss' "$TB_DIR/ping.txt")"
  sleep 0.5  # past adaptive's spin and the second worker's parking
  local s0 s1
  s0=$(rx0_switches)
  sleep 1
  s1=$(rx0_switches)
  tb_stop_switch || fail "$mode/$io: sharebufd exited with $?"
  check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])'
  blocked=$((s1 - s0))
  echo "$mode/$io: sb-rx0 blocked $blocked times in an idle second"
}

run busy-poll af_packet
[ "$blocked" -eq 0 ] || fail "busy-poll: the first RX worker blocked $blocked times while idle"
run busy-poll af_xdp
[ "$blocked" -eq 0 ] || fail "busy-poll with af_xdp: the first RX worker blocked $blocked times while idle"
run adaptive af_packet
[ "$blocked" -ge 5 ] ||
  fail "adaptive: the first RX worker blocked only $blocked times in an idle second (spinning?)"
echo "poll_mode: busy-poll never blocks (TPACKET and AF_XDP), adaptive blocks at idle; pings cross"
