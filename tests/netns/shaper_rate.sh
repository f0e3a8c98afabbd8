#!/usr/bin/env bash
# The egress shaper holds the configured rate within +-5 % at 10, 100 and 500 Mbit/s. UDP is
# offered at 1.5x the rate; once the queue is full, the rate is the growth of the port's
# tx_bytes counter (Ethernet frame bytes, what the shaper counts) between two snapshots taken
# 2 s apart. (iperf3's own receiver rate also counts the start-up and the drain of the buffer,
# which say nothing about the shaper.) At 500 Mbit/s a 2-core machine is close to CPU-bound: when
# something else loads it, the switch cannot keep up and the rate sags for reasons that are not
# the shaper's, so a rate is measured a second time before the test fails; a shaper that is
# really off fails both times.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
measure() {
  local rate=$1 t1 t2
  tb_write_config "$TB_DIR/sw.toml" cs "${rate}Mbit" "4000 cells"
  tb_start_switch "$TB_DIR/sw.toml"
  tb_bg 2 iperf3 -s -1 -p 5201 >/dev/null
  sleep 0.5
  tb_bg 1 iperf3 -c "$(tb_ip 2)" -p 5201 -u -b "$((rate * 3 / 2))M" -l 1400 -t 6 >/dev/null
  sleep 2
  t1=$(tb_snapshot_stats "$TB_DIR/a.json")
  sleep 2
  t2=$(tb_snapshot_stats "$TB_DIR/b.json")
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  tb_stop_switch || fail "sharebufd exited with $?"
  /usr/bin/python3 - "$TB_DIR/a.json" "$TB_DIR/b.json" "$t1" "$t2" "$rate" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
t1, t2, rate = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
port = lambda s: next(p for p in s["ports"] if p["interface"] == "p2")
mbps = (port(b)["tx_bytes"] - port(a)["tx_bytes"]) * 8 / (t2 - t1) / 1e6
full = port(b)["queues"][0]["occupancy_cells"] > 0
print(f"configured {rate:.0f} Mbit/s, sent {mbps:.1f} Mbit/s of frames ({100 * mbps / rate:.1f} %), "
      f"queue backlogged: {full}")
sys.exit(0 if full and abs(mbps - rate) <= 0.05 * rate else 1)
PY
}
for rate in 10 100 500; do
  measure "$rate" || { echo "measuring $rate Mbit/s again"; measure "$rate"; } ||
    fail "shaper at $rate Mbit/s off by more than 5 % twice (or the queue was not backlogged)"
done
