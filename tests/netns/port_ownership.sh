#!/usr/bin/env bash
# Ports owned once and given back: a second sharebufd on ports in use is refused and names the
# owner; an MTU change while running is logged and becomes the egress limit; after SIGKILL the
# ports stay promiscuous, and the next daemon recognises that and restores the state from before
# the crashed one; a control request naming a FIFO as a model neither hangs the daemon nor delays
# SIGTERM; storm control keeps a broadcast storm from starving unicast.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 3
blaster=${SHAREBUF_BLASTER:-$TB_ROOT/build/tools/sharebuf-blaster}
[ -x "$blaster" ] || fail "sharebuf-blaster not built at $blaster"
bin=${SHAREBUFD:-$TB_ROOT/build/mgmt/sharebufd}

promisc() { tb_exec sw ip -o link show "$1" | grep -q '[<,]PROMISC[,>]'; }

TB_PORT_EXTRA='storm_pps = 1000'
tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "4000 cells"
promisc p1 && fail "p1 is promiscuous before the switch started"
tb_start_switch "$TB_DIR/sw.toml"
first=$TB_SWITCH_PID
promisc p1 || fail "p1 is not promiscuous while the switch runs"

echo "--- a second daemon on the same ports"
rc=0
tb_exec sw timeout 10 "$bin" --config "$TB_DIR/sw.toml" --socket "$TB_DIR/second.sock" \
  >/dev/null 2>"$TB_DIR/second.log" || rc=$?
cat "$TB_DIR/second.log"
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "the second daemon was not refused (exit $rc)"
grep -q "port p1 is in use by another sharebufd (pid $first)" "$TB_DIR/second.log" ||
  fail "the refusal does not name the port and the owner"
kill -0 "$first" || fail "the first daemon died"

echo "--- MTU changes while running"
tb_exec 1 ping -c 2 -i 0.2 -W 1 "$(tb_ip 2)" >/dev/null || fail "no ping before the MTU change"
tb_exec sw ip link set p2 mtu 1400
for _ in $(seq 1 30); do
  grep -q "port p2: MTU changed from 1500 to 1400" "$TB_DIR/sharebufd.log" && break
  sleep 0.1
done
grep "MTU changed" "$TB_DIR/sharebufd.log" || fail "the MTU change was not logged within 3 s"
tb_ctl status >"$TB_DIR/status.json"
# 1472 bytes of ICMP payload: 1500-byte IP packets, now above p2's MTU: refused as oversize.
tb_exec 1 ping -c 3 -i 0.2 -W 1 -s 1472 "$(tb_ip 2)" >/dev/null && fail "a 1500-byte packet crossed a 1400-byte MTU"
tb_exec sw ip link set p2 mtu 9000
for _ in $(seq 1 30); do
  grep -q "port p2: MTU changed from 1400 to 9000" "$TB_DIR/sharebufd.log" && break
  sleep 0.1
done
grep -q "port p2: MTU changed from 1400 to 9000.*truncated until sharebufd is restarted" \
  "$TB_DIR/sharebufd.log" || fail "raising the MTU beyond the ring slots was not explained"
tb_exec 1 ping -c 2 -i 0.2 -W 1 -s 1472 "$(tb_ip 2)" >/dev/null || fail "1500-byte packets do not cross a 9000-byte MTU"
tb_snapshot_stats "$TB_DIR/mtu.json" >/dev/null
/usr/bin/python3 "$HERE/check_stats.py" "$TB_DIR/mtu.json" \
  'port("p2")["mtu"] == 9000' 'port("p2")["oversize"] >= 3' || fail "stats after the MTU changes"

echo "--- storm control: a broadcast storm from h1 while h2 pings h3"
tb_exec 2 ping -c 1 -W 1 "$(tb_ip 3)" >/dev/null || fail "no ping before the storm"
tb_bg 1 "$blaster" --interface eth0 --dst-mac ff:ff:ff:ff:ff:ff --src-ip "$(tb_ip 1)" \
  --dst-ip 198.18.0.255 --ethertype 0x88b5 --seconds 4 >"$TB_DIR/storm.json"
storm_pid=${TB_PIDS[-1]}
sleep 0.5
ping_out=$(tb_exec 2 ping -c 25 -i 0.1 -W 1 "$(tb_ip 3)" || true)
wait "$storm_pid" || true
echo "$ping_out" | tail -2
cat "$TB_DIR/storm.json"
loss=$(echo "$ping_out" | sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p')
[ -n "$loss" ] || fail "no ping summary"
tb_snapshot_quiet "$TB_DIR/storm-stats.json" >/dev/null  # counters balance once quiet
/usr/bin/python3 "$HERE/check_stats.py" "$TB_DIR/storm-stats.json" \
  'port("p1")["storm_dropped"] > 100000' \
  'port("p1")["flooded"] <= 1000 * 4.5 + 50 + 100' \
  'all(accounted(q) for p in s["ports"] for q in p["queues"])' || fail "storm counters"
awk -v l="$loss" 'BEGIN { exit !(l <= 8) }' || fail "ping loss $loss % during the storm, with storm control"

echo "--- SIGKILL: the ports stay promiscuous; the next daemon restores them"
kill -KILL "$first"
wait "$first" 2>/dev/null || true
TB_SWITCH_PID=""
promisc p1 || fail "p1 was not promiscuous after SIGKILL (nothing to recover: test broken?)"
mv "$TB_DIR/sharebufd.log" "$TB_DIR/first.log"
tb_start_switch "$TB_DIR/sw.toml"
grep -q "port p1 was left by sharebufd pid $first, which did not exit cleanly" \
  "$TB_DIR/sharebufd.log" || fail "the crashed owner was not recognised"

echo "--- a FIFO as a Credence model: an error at once, and SIGTERM still stops within 1 s"
mkfifo "$TB_DIR/model.fifo"
start=$(date +%s%N)
reply=$(timeout 5 "${SHAREBUFCTL:-$TB_ROOT/build/mgmt/sharebufctl}" --socket "$TB_DIR/ctl.sock" \
  policy.set credence oracle=forest model="$TB_DIR/model.fifo" 2>&1 || true)
echo "$reply"
(($(date +%s%N) - start < 2000000000)) || fail "the FIFO model request took over 2 s"
echo "$reply" | grep -q "regular file" || fail "the FIFO model was not refused as not a regular file"
pid=$TB_SWITCH_PID
start=$(date +%s%N)
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
TB_SWITCH_PID=""
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
echo "sharebufd exited with $rc after $elapsed_ms ms"
[ "$rc" -eq 0 ] || fail "sharebufd exited with $rc"
[ "$elapsed_ms" -le 1000 ] || fail "sharebufd took $elapsed_ms ms to stop"
promisc p1 && fail "p1 is still promiscuous after the clean exit that followed the crash"
promisc p3 && fail "p3 is still promiscuous"
key_files=$(find /run/sharebuf/ports/ -maxdepth 1 -name "net$(stat -L -c %i /run/netns/"$(tb_ns_sw)")-*" 2>/dev/null | wc -l || true)
[ "$key_files" -eq 0 ] || fail "$key_files lock files left after a clean exit"
echo "ports owned once and given back"
