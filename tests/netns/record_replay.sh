#!/usr/bin/env bash
# Recording a live run and replaying it: capture every arrival per ingress port
# over the control socket while UDP and TCP cross the switch, then replay the pcaps with the same
# configuration. The replay must see the frames the switch received, sent to the same egress
# ports (MACs learned from the per-port files), and finish with its identities intact.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 3
tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "6000 cells"
tb_start_switch "$TB_DIR/sw.toml"
for h in 1 2; do tb_exec "$h" ping -c 2 -i 0.2 -W 1 -q "$(tb_ip 3)" >/dev/null || fail "ping h$h"; done
tb_ctl capture.start path="$TB_DIR/rec" mode=all per_port=true >/dev/null || fail "capture.start"
tb_bg 3 iperf3 -s -1 -p 5201 >/dev/null
tb_bg 3 iperf3 -s -1 -p 5202 >/dev/null
sleep 0.3
tb_bg 1 iperf3 -c "$(tb_ip 3)" -p 5201 -u -b 120M -l 1400 -t 2 >/dev/null
tb_bg 2 iperf3 -c "$(tb_ip 3)" -p 5202 -t 2 >/dev/null
wait "${TB_PIDS[@]}" 2>/dev/null || true
TB_PIDS=()
tb_ctl --json capture.stop >"$TB_DIR/capture.json" || fail "capture.stop"
tb_stop_switch || fail "sharebufd exited with $?"

"$TB_ROOT/build/sim/sharebuf-replay" --config "$TB_DIR/sw.toml" \
  --pcap "$TB_DIR/rec-p1.pcap@p1" --pcap "$TB_DIR/rec-p2.pcap@p2" --pcap "$TB_DIR/rec-p3.pcap@p3" \
  --policies dt,lqd --json >"$TB_DIR/replay.json" || fail "sharebuf-replay exited with $?"
netns_check record-replay "$TB_DIR" || fail "replayed run does not match the live one"
echo PASS
