#!/usr/bin/env bash
# Every signal sharebufd gives a meaning to, sent while UDP overloads a port (docs/running.md,
# "Signals"):
#   SIGTERM, SIGINT, SIGQUIT, SIGXCPU  a clean stop: exit 0 (the accounting identities held), the
#                                      stats file written, the ports no longer promiscuous;
#   SIGHUP                             the file read again: a new policy parameter and a lower
#                                      port rate are applied live (the port then carries about
#                                      the new rate); a broken file is refused and changes
#                                      nothing; a key that takes a restart is named and keeps its
#                                      running value;
#   SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGRTMIN  logged and ignored.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
TB_POLICY_PARAMS='alpha = 1.0' tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "4000 cells"
# One server per load (5202-5206): a server whose client was killed takes a while to take the next.
for port in 5202 5203 5204 5205 5206; do tb_bg 2 iperf3 -s -1 -p "$port" >/dev/null; done
sleep 0.5

# udp SECONDS PORT: h1 -> h2 at 200 Mbit/s (twice the port's rate) in the background; its PID, that of
# iperf3 itself (not tb_exec: a function runs in a subshell, and killing that PID would leave
# iperf3 running to its end).
udp() {
  ip netns exec "$(tb_ns_of 1)" iperf3 -c "$(tb_ip 2)" -p "$2" -u -b 200M -l 1400 -t "$1" \
    >/dev/null 2>&1 &
  echo $!
}

# stop_udp PID: ends the load and waits (bounded) until it is gone.
stop_udp() {
  kill "$1" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.05
  done
  fail "the UDP load (pid $1) did not end"
}

promiscuous_ports() {
  ip -n "$(tb_ns_sw)" -o link show | grep -o 'p[0-9]*@[^:]*: <[^>]*PROMISC' || true
}

# A clean stop by each signal, during overload.
port=5202
for sig in TERM INT QUIT XCPU; do
  rm -f "$TB_DIR/stats.json"
  tb_start_switch "$TB_DIR/sw.toml"
  load=$(udp 4 "$port")
  port=$((port + 1))
  sleep 1.5
  pid=$TB_SWITCH_PID
  TB_SWITCH_PID=""
  kill -"$sig" "$pid"
  rc=0
  timeout 10 tail --pid="$pid" -f /dev/null || fail "SIG$sig: sharebufd did not stop within 10 s"
  wait "$pid" || rc=$?
  stop_udp "$load"
  grep -q "SIG$sig received from pid" "$TB_DIR/sharebufd.log" || fail "SIG$sig: no stop logged"
  [ "$rc" -eq 0 ] || fail "SIG$sig: exit $rc (3: an accounting identity was violated)"
  check_stats "port('p1')['rx_frames'] > 1000" "queue('p2', 0)['admitted'] > 1000"
  [ -z "$(promiscuous_ports)" ] || fail "SIG$sig: ports left promiscuous: $(promiscuous_ports)"
  echo "SIG$sig: a clean stop during overload (exit 0, stats written: $(jq '[.ports[].queues[].dropped | add] | add' "$TB_DIR/stats.json") drops), ports restored"
done

# SIGHUP: a reload during overload.
tb_start_switch "$TB_DIR/sw.toml"
load=$(udp 12 5206)
sleep 1
# goodput_mbps: h2's received UDP over 2 s, Mbit/s, on the second server.
before=$(tb_ctl --json ports | jq '[.[] | select(.interface == "p2")][0].tx_bytes')
sleep 2
after=$(tb_ctl --json ports | jq '[.[] | select(.interface == "p2")][0].tx_bytes')
rate_before=$(((after - before) * 8 / 2000000))
sed -i 's/alpha = 1.0/alpha = 2.0/; 0,/rate = "100Mbit"/! s/rate = "100Mbit"/rate = "50Mbit"/' "$TB_DIR/sw.toml"
grep -q 'rate = "50Mbit"' "$TB_DIR/sw.toml" || fail "the test's own edit of the configuration failed"
kill -HUP "$TB_SWITCH_PID"
for _ in $(seq 1 50); do
  grep -q "SIGHUP: configuration reloaded" "$TB_DIR/sharebufd.log" && break
  sleep 0.1
done
grep "SIGHUP: configuration" "$TB_DIR/sharebufd.log" || fail "SIGHUP: no reload logged"
[ "$(tb_ctl --json policy.get | jq .params.alpha)" = 2 ] || fail "SIGHUP: alpha is not 2"
[ "$(tb_ctl --json ports | jq '[.[] | select(.interface == "p2")][0].rate_bps')" = 50000000 ] ||
  fail "SIGHUP: p2's rate is not 50 Mbit/s"
sleep 0.5
before=$(tb_ctl --json ports | jq '[.[] | select(.interface == "p2")][0].tx_bytes')
sleep 2
after=$(tb_ctl --json ports | jq '[.[] | select(.interface == "p2")][0].tx_bytes')
rate_after=$(((after - before) * 8 / 2000000))
echo "SIGHUP: alpha 1 -> 2, p2 100 -> 50 Mbit/s live; p2 sent ${rate_before} then ${rate_after} Mbit/s"
within "40 <= $rate_after <= 55" || fail "SIGHUP: p2 sent $rate_after Mbit/s after its rate became 50"
# A broken file: refused, nothing changes.
cp "$TB_DIR/sw.toml" "$TB_DIR/good.toml"
sed -i 's/alpha = 2.0/alpha = "two"/' "$TB_DIR/sw.toml"
kill -HUP "$TB_SWITCH_PID"
for _ in $(seq 1 50); do
  grep -q "reload refused" "$TB_DIR/sharebufd.log" && break
  sleep 0.1
done
grep "reload refused" "$TB_DIR/sharebufd.log" || fail "SIGHUP: a broken file was not refused"
[ "$(tb_ctl --json policy.get | jq .params.alpha)" = 2 ] || fail "SIGHUP: a broken file changed alpha"
# A key that takes a restart: named, and the running value stays.
sed 's/size = "4000 cells"/size = "8000 cells"/' "$TB_DIR/good.toml" >"$TB_DIR/sw.toml"
kill -HUP "$TB_SWITCH_PID"
for _ in $(seq 1 50); do
  grep -q "NOT applied" "$TB_DIR/sharebufd.log" && break
  sleep 0.1
done
grep "NOT applied" "$TB_DIR/sharebufd.log" | grep -q "\[buffer\] size" ||
  fail "SIGHUP: a change of [buffer] size was not named as taking a restart"
tb_ctl --json config | jq -r .toml | grep -q "4000 cells" || fail "SIGHUP: config no longer says what runs"

# Signals with no meaning: logged, ignored, forwarding goes on.
for sig in USR2 ALRM VTALRM PROF IO PWR RTMIN; do
  kill -"$sig" "$TB_SWITCH_PID"
  sleep 0.2
  kill -0 "$TB_SWITCH_PID" 2>/dev/null || fail "SIG$sig killed sharebufd"
done
sleep 1.1  # the second of the ignored signals' summary
grep -q "ignored" "$TB_DIR/sharebufd.log" || fail "the ignored signals were not logged"
stop_udp "$load"
# The overload gone, p2's queue drains within milliseconds at 50 Mbit/s.
tb_exec 1 ping -c 3 -i 0.2 -W 1 "$(tb_ip 2)" >/dev/null || fail "no forwarding after the ignored signals"
rm -f "$TB_DIR/stats.json"
tb_stop_switch || fail "sharebufd exited with $? after the reloads and signals"
check_stats "port('p1')['rx_frames'] > 1000"
echo "SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGRTMIN: ignored; then a clean stop"
