#!/usr/bin/env bash
# Trimming frames that were already queued. (1) LQD: h1 (class a, DSCP 10) and h2 (class b,
# DSCP 20) flood p3 at 60 Mbit/s each into 50 Mbit/s and a small buffer, each class in its own
# queue, both overflow = "trim", queue 0 the strict-priority trim queue. LQD pushes frames out of
# the longer queue for the shorter one's arrivals; those victims are trimmed too, so a data queue
# counts more trimmed frames than it refused itself. (2) DT with [trimming] trim_newest = 1 set
# live: an arrival refused for lack of room gets in, and the queue's newest frame is trimmed
# instead (counted pushed_out and trimmed_newest; DT never pushes out on its own), once per
# overflow: the arrivals are hardly ever refused as well. (3) trim_newest = 0.5, NDP's value:
# about half the overflows trim the newest frame, the other half the arrival.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 3
TB_PORT_EXTRA='scheduler = "sp"
trim_queue = 0' tb_write_config "$TB_DIR/sw.toml" lqd 50Mbit "600 cells" 3 '
[classify]
mode = "dscp"
[[classes]]
name = "a"
queue = 1
dscp = [10]
overflow = "trim"
[[classes]]
name = "b"
queue = 2
dscp = [20]
overflow = "trim"'
tb_start_switch "$TB_DIR/sw.toml"
flood() {  # flood SECONDS: h1 and h2 at 60 Mbit/s each toward h3
  tb_bg 3 iperf3 -s -1 -p 5201
  tb_bg 3 iperf3 -s -1 -p 5202
  sleep 0.4
  tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 3)" -p 5201 -u -b 60M -l 1400 -t "$1" -S 40 >/dev/null &
  local s1=$!
  tb_exec 2 timeout 30 iperf3 -c "$(tb_ip 3)" -p 5202 -u -b 60M -l 1400 -t "$1" -S 80 >/dev/null ||
    fail "iperf3 (h2) failed"
  wait "$s1" || fail "iperf3 (h1) failed"
}
flood 3
tb_ctl --json queues >"$TB_DIR/lqd.json"
tb_ctl policy.set dt >/dev/null || fail "policy.set dt failed"
tb_ctl trim.set trim_newest=1 >/dev/null || fail "trim.set trim_newest failed"
tb_ctl counters.reset >/dev/null
flood 2
tb_ctl --json queues >"$TB_DIR/newest.json"
tb_ctl trim.set trim_newest=0.5 >/dev/null || fail "trim.set trim_newest=0.5 failed"
tb_ctl counters.reset >/dev/null
flood 2
tb_ctl --json queues >"$TB_DIR/half.json"
tb_stop_switch || fail "sharebufd exited with $?"
netns_check trim-push-out "$TB_DIR" || fail "push-out trimming check failed"
