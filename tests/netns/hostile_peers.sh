#!/usr/bin/env bash
# Hostile peers on the control socket (docs/security.md, "Hostile peers"): a socket every user may
# open (mode 0666) with admin_group set, attacked by `nobody` — a read-only peer — in five ways;
# after each, root's one-shot `sharebufctl status` must be answered every time:
#   N1 sixteen watchers that never go (max_clients = 16);
#   N2 a connect() flood;
#   N3 eight clients that pipeline requests and never read a reply: RSS stays within 64 MiB;
#   N5 200 watchers at 100 us (nobody) and a 40 MB pipeline whose replies are read (daemon, another
#      read-only uid): the control thread takes under 30 % of a core and pings keep flowing;
#   N4 the open-file limit lowered under the daemon (prlimit) and idle connections past it: the
#      control thread does not spin (under 20 % of a core) and root still gets in;
# and last, a daemon whose hard open-file limit cannot fit max_clients refuses to start, saying
# what to set.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
chmod 711 "$TB_DIR"  # nobody may reach the socket inside it
export TB_CONTROL_EXTRA='socket_mode = "0666"
admin_group = "staff"
max_clients = 16'
tb_write_config "$TB_DIR/sw.toml" dt 1Gbit "4000 cells"
tb_start_switch "$TB_DIR/sw.toml"
SOCK=$TB_DIR/ctl.sock
CTL=${SHAREBUFCTL:-$TB_ROOT/build/mgmt/sharebufctl}
# Always started with &: exec, so that $! is the peer itself.
peer() { exec /usr/bin/python3 "$HERE/hostile_peer.py" "$@" --socket "$SOCK" --user nobody; }

# operator_ok N WHAT: root's one-shot status, N times, each within 5 s.
operator_ok() {
  local n=$1 what=$2 ok=0
  for _ in $(seq 1 "$n"); do
    timeout 5 "$CTL" --socket "$SOCK" status >/dev/null 2>&1 && ok=$((ok + 1))
    sleep 0.1
  done
  echo "$what: root's status answered $ok of $n times"
  [ "$ok" -eq "$n" ] || fail "$what: root's status answered $ok of $n times"
}

control_cpu_ns() {
  local t
  for t in /proc/"$TB_SWITCH_PID"/task/*; do
    [ "$(cat "$t/comm")" = sb-control ] && { cut -d' ' -f1 "$t/schedstat"; return; }
  done
  echo 0
}

# control_share SECONDS: the control thread's CPU over SECONDS, in percent of one core.
control_share() {
  local a b
  a=$(control_cpu_ns)
  sleep "$1"
  b=$(control_cpu_ns)
  echo $(((b - a) / ($1 * 10000000)))
}

rss_kib() { awk '/^VmRSS/ {print $2}' /proc/"$TB_SWITCH_PID"/status; }

# N1
peer watchers 16 --seconds 4 >"$TB_DIR/n1.json" &
sleep 1.5
operator_ok 5 "N1 (16 watchers)"
wait $!
echo "N1 peer: $(cat "$TB_DIR/n1.json")"
# Four watches at a time: of sixteen requests at least four are refused (a later connection of
# the same peer may close one of its own idle clients, a watch among them, to take its place).
jq -e '.refused >= 4' "$TB_DIR/n1.json" >/dev/null || fail "N1: nobody was not held to 4 watches"

# N2
peer flood --seconds 4 >"$TB_DIR/n2.json" &
sleep 0.5
operator_ok 10 "N2 (connect flood)"
wait $!
echo "N2 peer: $(cat "$TB_DIR/n2.json")"

# N3
rss0=$(rss_kib)
peer pipeline 8 --seconds 5 >"$TB_DIR/n3.json" &
sleep 4
rss1=$(rss_kib)
operator_ok 3 "N3 (8 unread pipelines)"
wait $!
echo "N3 peer: $(cat "$TB_DIR/n3.json"); RSS ${rss0} -> ${rss1} KiB"
[ $((rss1 - rss0)) -lt $((64 * 1024)) ] || fail "N3: RSS grew by $((rss1 - rss0)) KiB"

# N5
peer watchers 200 --interval-us 100 --read --seconds 6 >"$TB_DIR/n5w.json" &
w=$!
/usr/bin/python3 "$HERE/hostile_peer.py" pipeline 1 --read --bytes $((40 << 20)) --seconds 6 \
  --socket "$SOCK" --user daemon >"$TB_DIR/n5p.json" &
p=$!
tb_exec 1 ping -c 40 -i 0.05 -W 1 "$(tb_ip 2)" >"$TB_DIR/n5ping.txt" &
ping_pid=$!
sleep 1
share=$(control_share 4)
wait "$ping_pid" || fail "N5: pings were lost: $(tail -2 "$TB_DIR/n5ping.txt")"
wait "$w" "$p"
echo "N5 peers: $(cat "$TB_DIR/n5w.json") $(cat "$TB_DIR/n5p.json"); control thread ${share} % of a core"
echo "N5 ping: $(tail -1 "$TB_DIR/n5ping.txt")"
[ "$share" -lt 30 ] || fail "N5: the control thread took ${share} % of a core"
operator_ok 3 "N5"

# N4
open_fds=$(find /proc/"$TB_SWITCH_PID"/fd -mindepth 1 | wc -l)
prlimit --pid "$TB_SWITCH_PID" --nofile=$((open_fds + 4)):$((open_fds + 4))
peer idle 12 --seconds 5 >"$TB_DIR/n4.json" &
sleep 1.5
share=$(control_share 2)
echo "N4: open-file limit $((open_fds + 4)), control thread ${share} % of a core"
[ "$share" -lt 20 ] || fail "N4: the control thread took ${share} % of a core (spinning on EMFILE?)"
operator_ok 3 "N4 (out of descriptors)"
wait $!
echo "N4 peer: $(cat "$TB_DIR/n4.json")"
grep -q "out of file descriptors" "$TB_DIR/sharebufd.log" || true
kill -0 "$TB_SWITCH_PID" || fail "sharebufd is gone"
echo "hostile peers: root was answered every time"

tb_stop_switch || fail "sharebufd exited with $?"
TB_CONTROL_EXTRA="" tb_write_config "$TB_DIR/sw1024.toml" dt 1Gbit "4000 cells"  # max_clients 1024
set +e
out=$(timeout 10 ip netns exec "$(tb_ns_sw)" prlimit --nofile=256:256 \
  "${SHAREBUFD:-$TB_ROOT/build/mgmt/sharebufd}" --config "$TB_DIR/sw1024.toml" \
  --socket "$TB_DIR/ctl1024.sock" 2>&1)
rc=$?
set -e
echo "with 256 open files and max_clients = 1024: exit $rc: $(echo "$out" | grep -o 'open files are limited.*' | head -1)"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || ! echo "$out" | grep -q "raise the limit (ulimit -n"; then
  fail "a daemon whose open-file limit cannot fit max_clients did not refuse to start (exit $rc)"
fi
