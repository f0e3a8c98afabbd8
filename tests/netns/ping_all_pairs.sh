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
tb_stop_switch || fail "sharebufd exited with $?"
check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])' \
  'all(p["malformed_total"] == 0 for p in s["ports"])' \
  'sum(p["flooded"] for p in s["ports"]) > 0' \
  's["buffer"]["pool_free_cells"] == s["buffer"]["pool_physical_cells"]'
