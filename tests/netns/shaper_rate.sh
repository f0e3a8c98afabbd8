#!/usr/bin/env bash
# The egress shaper holds the configured rate within +-5 % at 10, 100 and 500 Mbit/s. UDP is
# offered at 1.5x the rate; once the queue is full, the rate is the growth of the port's
# tx_bytes counter (Ethernet frame bytes, what the shaper counts) between two snapshots taken
# 2 s apart. (iperf3's own receiver rate also counts the start-up and the drain of the buffer,
# which say nothing about the shaper.)
# Sending more than 5 % above the rate fails at once: that is the shaper's fault whatever the
# host does. Sending less can be the host's: at 500 Mbit/s a 2-core machine is close to
# CPU-bound, and when something else loads it the switch cannot keep up. So a rate that comes
# out low is measured up to three times; if it is low every time, the switch's forwarding
# capacity is measured right then (the same traffic through an unshaped 10 Gbit/s port). A
# capacity below the configured rate + 5 % means the host, not the shaper, set the rate: the
# point is reported as not measurable now and does not fail; otherwise the shaper is off.
# The buffer holds 30 ms at the rate: when the host runs the egress thread late, the shaper owes
# the queue up to 20 ms of sending (shaper_catchup_bytes), and a queue shorter than that would
# run dry before the debt is paid (with 4000 cells, 5 ms at 500 Mbit/s, two CPU-bound processes
# beside the switch cut the port to 400 Mbit/s; with 30 ms it held 500).
# First, with [buffer] probe_bytes, the probes take their share of a 10 Mbit/s port.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
# measure CONFIGURED_MBIT OFFERED_MBIT: prints "MBPS BACKLOGGED CATCHUP PROBES" (Mbit/s of frame
# bytes sent on p2, whether its queue was backlogged, Mbit/s caught up, Mbit/s of probes). Run it
# in this shell (not in $(...)), so that its switch and iperf3 are this shell's to clean up.
measure() {
  local rate=$1 offered=$2 t1 t2 cells
  cells=$((rate * 47))  # 30 ms at the rate, in 80-byte cells; at least 4000, at most 30000
  cells=$((cells < 4000 ? 4000 : cells > 30000 ? 30000 : cells))
  tb_write_config "$TB_DIR/sw.toml" cs "${rate}Mbit" "$cells cells"
  tb_start_switch "$TB_DIR/sw.toml"
  tb_bg 2 iperf3 -s -1 -p 5201 >/dev/null
  sleep 0.5
  tb_bg 1 iperf3 -c "$(tb_ip 2)" -p 5201 -u -b "${offered}M" -l 1400 -t 6 >/dev/null
  sleep 2
  t1=$(tb_snapshot_stats "$TB_DIR/a.json")
  sleep 2
  t2=$(tb_snapshot_stats "$TB_DIR/b.json")
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  tb_stop_switch >&2 || fail "sharebufd exited with $?"
  netns_check shaper-rates "$TB_DIR/a.json" "$TB_DIR/b.json" "$t1" "$t2"
}

# Probes charged to the port ([buffer] probe_bytes), as Tofino's shaper charges dt.p4's: one
# queue probed every 1 ms with 250 B takes 2 Mbit/s of a 10 Mbit/s port, so 8 are left for frames.
TB_BUFFER_EXTRA=$'view = "probe"\nprobe_interval = "1ms"\nprobe_bytes = 250' measure 10 15 >"$TB_DIR/m.txt"
read -r mbps full _ probes <"$TB_DIR/m.txt"
echo "10 Mbit/s with 250-byte probes every 1 ms: $mbps Mbit/s of frames, $probes Mbit/s of probes"
[ "$full" = 1 ] || fail "the queue with probes was not backlogged"
within "0.95 * 8 <= $mbps <= 1.05 * 8" || fail "with probes charged the port sent $mbps Mbit/s of frames, not 8 (+-5 %)"
within "0.9 * 2 <= $probes <= 1.1 * 2" || fail "the probes took $probes Mbit/s, not 2 (+-10 %)"
for rate in 10 100 500; do
  ok=0
  for attempt in 1 2 3; do
    measure "$rate" $((rate * 3 / 2)) >"$TB_DIR/m.txt"
    read -r mbps full catchup _ <"$TB_DIR/m.txt"
    echo "configured $rate Mbit/s, sent $mbps Mbit/s of frames (of which $catchup Mbit/s caught up after late wake-ups), queue backlogged: $full"
    [ "$full" = 1 ] || fail "the queue at $rate Mbit/s was not backlogged: the test offered too little"
    within "$mbps > 1.05 * $rate" && fail "shaper at $rate Mbit/s sent $mbps Mbit/s, more than 5 % above"
    if within "$mbps >= 0.95 * $rate"; then
      ok=1
      break
    fi
    echo "below 5 % of $rate Mbit/s (attempt $attempt)"
  done
  [ "$ok" = 1 ] && continue
  measure 10000 $((rate * 3 / 2)) >"$TB_DIR/m.txt"
  read -r capacity _ <"$TB_DIR/m.txt"
  echo "forwarding capacity right now (unshaped 10 Gbit/s port, same offered load): $capacity Mbit/s"
  within "$capacity < 1.05 * $rate" ||
    fail "shaper at $rate Mbit/s sent less than 95 % three times while the switch could forward $capacity Mbit/s"
  echo "NOT MEASURABLE NOW: at $rate Mbit/s the host limits the switch to $capacity Mbit/s; the shaper did not overshoot"
done
