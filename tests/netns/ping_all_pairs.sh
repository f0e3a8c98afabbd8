#!/usr/bin/env bash
# Every host reaches every other host through sharebufd (learning bridge, flooding, ARP).
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 3
tb_write_config "$TB_DIR/sw.toml" dt 100Mbit
tb_start_switch "$TB_DIR/sw.toml"
for a in 1 2 3; do
  for b in 1 2 3; do
    [ "$a" = "$b" ] && continue
    tb_exec "$a" ping -c 3 -i 0.2 -W 2 -q "$(tb_ip "$b")" >/dev/null || fail "h$a cannot ping h$b"
    echo "ok h$a -> h$b"
  done
done
# Every hop of every port saw the pings (datapath/hop_latency.h), with plausible times.
tb_ctl --json latency >"$TB_DIR/latency.json"
netns_check hop-latency "$TB_DIR/latency.json" || fail "hop latency histograms"
# A command tb_bg started ends when its remembered PID is killed (E7 once left its servers
# running past this, and the next policy's servers could not bind their port).
tb_bg 1 timeout 3600 sleep 60
for _ in $(seq 50); do [ -n "$(ip netns pids "$(tb_ns_of 1)")" ] && break; sleep 0.02; done
kill "${TB_PIDS[-1]}"
wait "${TB_PIDS[-1]}" 2>/dev/null || true
TB_PIDS=()
# Gone within 5 s (timeout forwards the signal to its child; a loaded machine runs them late).
for _ in $(seq 100); do [ -z "$(ip netns pids "$(tb_ns_of 1)")" ] && break; sleep 0.05; done
[ -z "$(ip netns pids "$(tb_ns_of 1)")" ] || fail "a killed tb_bg command kept running"
# The human tables too (sharebufctl links them from mgmt/text_table.cpp): one row per queue.
tb_ctl queues | tee "$TB_DIR/queues.txt"
head -1 "$TB_DIR/queues.txt" | grep -q '^queue .* drop:thr  *drop:full ' || fail "queues table header"
[ "$(grep -c '^p[0-9]' "$TB_DIR/queues.txt")" -ge 3 ] || fail "queues table rows"
tb_stop_switch || fail "sharebufd exited with $?"
check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])' \
  'all(p["malformed_total"] == 0 for p in s["ports"])' \
  'sum(p["flooded"] for p in s["ports"]) > 0' \
  's["buffer"]["pool_free_cells"] == s["buffer"]["pool_physical_cells"]'
