#!/usr/bin/env bash
# sharebuf-floor (tools/floor_forwarder.cpp), the floor the benchmarks measure sharebufd against,
# started as they start it (bench/lib/switches.sh): in each of its modes it forwards pings both
# ways without loss and a TCP stream, and on SIGTERM it stops and reports what it forwarded, each
# direction, with nothing dropped. What each ran is kept as the benchmarks keep it
# (BENCH_KEEP_DIR): the floor's command line, sharebufd's effective configuration.
source "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/lib/switches.sh
source "$HERE/../../bench/lib/switches.sh"
tb_init
tb_create 2
export BENCH_KEEP_DIR=$TB_DIR/kept

for name in floor floor-2t floor-spin; do
  echo "== $name: $(bench_switch_label "$name")"
  bench_start_switch "$name"  # fails unless host 1 reaches host 2 through it
  tb_exec 1 ping -c 50 -i 0.01 -W 1 -q "$(tb_ip 2)" | tail -2 | tee "$TB_DIR/ping.txt"
  grep -q " 0% packet loss" "$TB_DIR/ping.txt" || fail "$name: pings from host 1 lost"
  tb_exec 2 ping -c 50 -i 0.01 -W 1 -q "$(tb_ip 1)" | tail -2 | tee "$TB_DIR/ping.txt"
  grep -q " 0% packet loss" "$TB_DIR/ping.txt" || fail "$name: pings from host 2 lost"
  if [ "$name" != floor-spin ]; then  # a spinning thread takes one of the two cores: no TCP
    tb_bg 2 iperf3 -s -1 -p 5201
    sleep 0.3
    tb_exec 1 timeout 20 iperf3 -c "$(tb_ip 2)" -p 5201 -t 2 -J >"$TB_DIR/tcp.json" || fail "$name: iperf3 failed"
    wait "${TB_PIDS[@]}" 2>/dev/null || true
    TB_PIDS=()
    netns_check tcp-rate "$TB_DIR/tcp.json" 10 || fail "$name: TCP below 10 Mbit/s"
  fi
  bench_stop_switch "$name" 2>"$TB_DIR/stop.err" || fail "$name: did not stop cleanly on SIGTERM"
  ! grep -q "effective configuration" "$TB_DIR/stop.err" || fail "$name: $(cat "$TB_DIR/stop.err")"
  want="sharebuf-floor --port p1 --port p2"
  case "$name" in floor-2t) want+=" --threads 2" ;; floor-spin) want+=" --spin" ;; esac
  [ "$(cat "$BENCH_KEEP_DIR/effective-$name.txt" 2>/dev/null)" = "$want" ] ||
    fail "$name: its command line was not kept (BENCH_KEEP_DIR/effective-$name.txt)"
  tail -1 "$TB_DIR/floor.out"
  tail -1 "$TB_DIR/floor.out" |
    jq -e '(.forwarded | min) >= 100 and .dropped == [0, 0] and .tx_dropped == [0, 0]' >/dev/null ||
    fail "$name: its counters on exit do not show both directions forwarded, none dropped"
done

# sharebufd, as the benchmarks start it: its effective configuration kept beside the results.
bench_start_switch sharebufd
bench_stop_switch sharebufd || fail "sharebufd did not stop cleanly on SIGTERM"
grep -q "^size = '21000 cells'" "$BENCH_KEEP_DIR/effective-sharebufd.toml" 2>/dev/null ||
  fail "sharebufd's effective configuration was not kept (BENCH_KEEP_DIR/effective-sharebufd.toml)"
echo "PASS"
