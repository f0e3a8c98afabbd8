#!/usr/bin/env bash
# The egress shaper holds the configured rate within +-5 % at 10, 100 and 500 Mbit/s: UDP offered
# at 1.5x the rate, measured at the receiver and converted to Ethernet frame bytes (what the
# shaper counts: 14 + 20 + 8 + 1400 bytes per 1400-byte datagram).
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
for rate in 10 100 500; do
  tb_write_config "$TB_DIR/sw.toml" cs "${rate}Mbit" "21000 cells"
  tb_start_switch "$TB_DIR/sw.toml"
  tb_bg 2 iperf3 -s -1 -p 5201 -J --logfile "$TB_DIR/server-$rate.json"
  sleep 0.5
  offered=$((rate * 3 / 2))
  tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 2)" -p 5201 -u -b "${offered}M" -l 1400 -t 4 >/dev/null ||
    fail "iperf3 at $offered Mbit/s failed"
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  tb_stop_switch || fail "sharebufd exited with $?"
  /usr/bin/python3 - "$TB_DIR/server-$rate.json" "$rate" <<'PY' || fail "shaper at $rate Mbit/s off by more than 5 %"
import json, sys
s = json.load(open(sys.argv[1]))["end"]["sum"]
rate = float(sys.argv[2])
# The first second includes the buffer filling; iperf3's sum covers the whole run, so use the
# datagrams received over the receiver's measured time.
frames = s["packets"] - s["lost_packets"]
l2_mbps = frames * (1400 + 42) * 8 / s["seconds"] / 1e6
print(f"configured {rate:.0f} Mbit/s, delivered {l2_mbps:.1f} Mbit/s of frames "
      f"({100 * l2_mbps / rate:.1f} %)")
sys.exit(0 if abs(l2_mbps - rate) <= 0.05 * rate else 1)
PY
done
