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
# then, on a daemon with the default limits whose stderr is a pipe and whose stats file is in a
# shared sticky directory:
#   N6 one uid's 64 connections each holding 0.9 MB of an unfinished request line: another
#      read-only uid is answered 12 of 12 times (each uid holds at most its share of the buffers);
#   N7 symbolic links planted at the stats file and at <path>.tmp: SIGUSR1 replaces them and never
#      writes through them;
#   N8 the stderr reader dies and a peer's connections make the daemon log: it goes on forwarding
#      and counts the lost lines;
#   N9 SIGHUP, SIGUSR2, SIGALRM, SIGPIPE leave it running; SIGQUIT stops it cleanly (exit 0, stats
#      written, ports restored);
# and last, a stats file in a 0777 directory is refused, and a daemon whose hard open-file limit
# cannot fit max_clients refuses to start, saying what to set.
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

# The next four attacks on a daemon with the default connection limits (1024, 64 per uid), its
# stderr a pipe (a FIFO read by `cat`, as `sharebufd ... 2>&1 | tee log` would be) and its stats
# file in a directory every user may write to, with the sticky bit (as /tmp).
export TB_CONTROL_EXTRA='socket_mode = "0666"
admin_group = "staff"'
tb_write_config "$TB_DIR/sw2.toml" dt 1Gbit "4000 cells"
shared=$TB_DIR/shared
mkdir -m 1777 "$shared"
mkfifo "$TB_DIR/stderr.fifo"
cat "$TB_DIR/stderr.fifo" >>"$TB_DIR/sharebufd.log" &
reader=$!
TB_SWITCH_STDERR=$TB_DIR/stderr.fifo TB_STATS_FILE=$shared/stats.json tb_start_switch "$TB_DIR/sw2.toml"

# N6: one uid's 64 connections (its limit) each hold 0.9 MB of a request line they never finish;
# another read-only uid must be answered every time, and so must root.
peer stall 64 --bytes 900000 --seconds 120 >"$TB_DIR/n6.json" &
stall=$!
sleep 6  # until the daemon has read what they sent (their reads take at most cpu_share)
/usr/bin/python3 "$HERE/hostile_peer.py" ask 12 --interval-us 200000 --socket "$SOCK" --user daemon \
  >"$TB_DIR/n6ask.json"
operator_ok 3 "N6 (64 stalled request lines)"
kill -TERM "$stall"
wait "$stall"
echo "N6 peers: $(cat "$TB_DIR/n6.json") $(cat "$TB_DIR/n6ask.json")"
jq -e '.answered == 12' "$TB_DIR/n6ask.json" >/dev/null ||
  fail "N6: another read-only uid was answered $(jq .answered "$TB_DIR/n6ask.json") of 12 times"

# N7: links and files planted where the stats file is written: a symbolic link at the path and at
# the name the daemon once wrote through (<path>.tmp), to a root-only file. SIGUSR1 must replace
# the links, never write through them; the file they point to keeps its contents.
printf 'secret\n' >"$TB_DIR/victim"
chmod 600 "$TB_DIR/victim"
setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s "$TB_DIR/victim" "$shared/stats.json.tmp"
setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s "$TB_DIR/victim" "$shared/stats.json"
kill -USR1 "$TB_SWITCH_PID"
for _ in $(seq 1 100); do
  [ -L "$shared/stats.json" ] || break
  sleep 0.05
done
[ "$(cat "$TB_DIR/victim")" = secret ] || fail "N7: the stats file was written through a planted link"
[ -f "$shared/stats.json" ] && [ ! -L "$shared/stats.json" ] && [ "$(stat -c %u "$shared/stats.json")" = 0 ] ||
  fail "N7: the stats file is not root's own regular file: $(find "$shared" -mindepth 1 -printf '%f %u %y; ')"
jq -e '.ports | length == 2' "$shared/stats.json" >/dev/null || fail "N7: the stats file is not whole"
echo "N7: the planted links were replaced, their target untouched: $(find "$shared" -mindepth 1 -printf '%f %u %y; ')"

# N8: the stderr reader dies (a log shipper restarted); a peer's connections make the daemon log.
# The daemon must go on forwarding and answering, counting the lines it could not write.
kill "$reader"
wait "$reader" 2>/dev/null || true
/usr/bin/python3 "$HERE/hostile_peer.py" ask 3 --interval-us 100000 --socket "$SOCK" --user nobody \
  >"$TB_DIR/n8ask.json"
kill -0 "$TB_SWITCH_PID" 2>/dev/null || fail "N8: sharebufd died when its stderr reader went"
tb_exec 1 ping -c 3 -i 0.2 -W 1 "$(tb_ip 2)" >/dev/null || fail "N8: no forwarding after the reader went"
lost=$(timeout 5 "$CTL" --socket "$SOCK" --json status | jq .log_lines_lost)
echo "N8: stderr reader gone; peer answered $(jq .answered "$TB_DIR/n8ask.json") of 3, $lost log lines lost, pings through"
[ "$lost" -gt 0 ] || fail "N8: no log line was lost, so the dead reader was never written to"

# N9: the signals that used to kill it: SIGHUP (the terminal went; a conventional reload), SIGUSR2,
# SIGALRM, SIGPIPE each leave it running; SIGQUIT stops it cleanly (exit 0: the accounting
# identities hold), with the stats file written and the ports' promiscuous mode given back.
for sig in HUP USR2 ALRM PIPE; do
  kill -"$sig" "$TB_SWITCH_PID"
  sleep 0.3
  kill -0 "$TB_SWITCH_PID" 2>/dev/null || fail "N9: SIG$sig killed sharebufd"
done
tb_exec 1 ping -c 2 -i 0.2 -W 1 "$(tb_ip 2)" >/dev/null || fail "N9: no forwarding after the signals"
rm -f "$shared/stats.json"
pid=$TB_SWITCH_PID
TB_SWITCH_PID=""
kill -QUIT "$pid"
rc=0
timeout 10 tail --pid="$pid" -f /dev/null || true
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "N9: SIGQUIT: sharebufd exited with $rc"
jq -e '.daemon.log_lines_lost > 0 and (.ports | length == 2)' "$shared/stats.json" >/dev/null ||
  fail "N9: no stats file at the stop"
for p in p1 p2; do
  ip -n "$(tb_ns_sw)" link show "$p" | grep -q PROMISC && fail "N9: $p left promiscuous"
done
echo "N9: SIGHUP, SIGUSR2, SIGALRM, SIGPIPE ignored or handled; SIGQUIT stopped it (exit 0, stats written, ports restored)"

# A stats file in a directory every user may write to without the sticky bit is refused.
mkdir -m 0777 "$TB_DIR/open"
set +e
out=$("${SHAREBUFD:-$TB_ROOT/build/mgmt/sharebufd}" --config "$TB_DIR/sw2.toml" --check-config \
  --stats-file "$TB_DIR/open/stats.json" 2>&1)
rc=$?
set -e
echo "stats file in a 0777 directory: exit $rc: $out"
[ "$rc" -eq 2 ] && echo "$out" | grep -q "no sticky bit" || fail "a stats file in a 0777 directory was not refused"

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
