#!/usr/bin/env bash
# Each policy on a live switch: UDP from h1 saturates port p2's queue while a burst of parallel
# TCP flows from h1 and h2 hits port p3. Every run must end with balanced counters and show the
# policy's signature in them: cs fills the buffer (pool_full drops), dt caps the UDP queue at
# alpha/(1+alpha) of B, fb caps it at alpha_low/(1+alpha_low) of B, lqd pushes frames out of the
# longest queue, credence (FollowLQD) refuses the UDP queue by threshold once the TCP burst makes
# LQD push it out, fba and abm hold it under alpha_low/(1+alpha_low) of B, smartbuf holds it under
# DT's cap until it has learned bursts and under the largest learned burst after, fab holds the
# UDP flow (long past its first bytes) to alpha/(1+alpha) of B (checked before the TCP burst: see
# below), occamy reclaims head frames of the UDP queue once the burst lowers its threshold, ib
# holds it under alpha/(1+alpha) of B (DT; its AFD drops count as threshold drops). (protean's
# signature, its incast threshold rising during the burst, needs the watch stream of the control
# socket; protean and edt are checked for balanced counters and threshold drops.)
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 3
B=6000
run() {
  local policy=$1
  shift
  tb_write_config "$TB_DIR/sw.toml" "$policy" 100Mbit "$B cells"
  tb_start_switch "$TB_DIR/sw.toml"
  tb_bg 2 timeout 20 iperf3 -s -1 -p 5201 >/dev/null
  tb_bg 3 timeout 20 iperf3 -s -1 -p 5202 >/dev/null
  tb_bg 3 timeout 20 iperf3 -s -1 -p 5203 >/dev/null
  sleep 0.5
  tb_bg 1 timeout 20 iperf3 -c "$(tb_ip 2)" -p 5201 -u -b 200M -l 1400 -t 4 >/dev/null
  sleep 1.5
  if [ -n "${BEFORE_BURST:-}" ]; then
    tb_snapshot_stats "$TB_DIR/before-burst.json" >/dev/null
    echo "== $policy, UDP alone (before the TCP burst)"
    check_stats "$BEFORE_BURST"
  fi
  tb_bg 1 timeout 20 iperf3 -c "$(tb_ip 3)" -p 5202 -P 8 -t 1 >/dev/null
  tb_bg 2 timeout 20 iperf3 -c "$(tb_ip 3)" -p 5203 -P 8 -t 1 >/dev/null
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  tb_stop_switch || fail "$policy: sharebufd exited with $?"
  echo "== $policy"
  check_stats 'all(accounted(q) for p in s["ports"] for q in p["queues"])' \
    's["buffer"]["pool_free_cells"] == s["buffer"]["pool_physical_cells"] - s["buffer"]["occupancy_cells"] + s["buffer"]["outside_cells"]' \
    'queue("p3")["admitted"] > 100' "$@"
}
run cs 'queue("p2")["dropped"]["pool_full"] + queue("p3")["dropped"]["pool_full"] > 0' \
  's["buffer"]["peak_cells"] > '"$B"' - 19'
run dt 'queue("p2")["peak_cells"] <= '"$B"' / 2 + 19' 'queue("p2")["dropped"]["threshold"] > 0'
run fb 'queue("p2")["peak_cells"] <= '"$B"' * 0.5 / 1.5 + 19' 'queue("p2")["dropped"]["threshold"] > 0'
run lqd 'queue("p2")["dropped"]["pushed_out"] > 0' 'queue("p2")["peak_cells"] > '"$B"' / 2'
run protean 'queue("p2")["dropped"]["threshold"] > 0'
run edt 'queue("p2")["dropped"]["threshold"] > 0'
# smartbuf: its map learns within the run (phase "real" after the third burst, in 6 of 6 runs
# here), and from then on a queue in a burst gets the mean of the K learned peaks nearest its
# gradient instead of DT's threshold: never more than the largest peak learned before. The peaks
# include p2's own, up to a frame over DT's cap (3002-3015 cells in those runs; a CI run saw p2 at
# 3021 against DT's cap plus a frame, 3019). So each burst's peak (the policy's own log, in the
# order it learned them) is at most a frame over the larger of DT's cap and every earlier peak,
# and p2's peak at most a frame over the larger of DT's cap and every learned peak.
bursts='s["policy"]["state"]["bursts"]'
cap_before='max(['"$B"' / 2] + [a["peak_cells"] for a in '"$bursts"'[:i]])'
run smartbuf 'all(b["peak_cells"] <= '"$cap_before"' + 19 for i, b in enumerate('"$bursts"'))' \
  'queue("p2")["peak_cells"] <= max(['"$B"' / 2] + [b["peak_cells"] for b in '"$bursts"']) + 19' \
  'queue("p2")["dropped"]["threshold"] > 0'
run fba 'queue("p2")["peak_cells"] <= '"$B"' * 0.5 / 1.5 + 19' 'queue("p2")["dropped"]["threshold"] > 0'
# abm: iperf3 paces UDP in bursts about 1 ms apart, so with the default flow_ageing_us (1000) the
# UDP flow is "new" again at every burst and its first frames get first_rtt_alpha (64): the queue
# then grows far past FB's cap. That is ABM doing what it is told; to see the cap, keep flows.
# The slack of ten frames is for the first-RTT frames of the TCP flows' ACKs, which also queue at
# p2 (measured peaks 2014-2018). A flow sharing the UDP flow's slot of a direct-mapped flow table
# once took the peak to 4800-5900 (about one run in a hundred): the table is 4-way now.
TB_POLICY_PARAMS='flow_ageing_us = 1000000' \
  run abm 'queue("p2")["peak_cells"] <= '"$B"' * 0.5 / 1.5 + 10 * 19' \
  'queue("p2")["dropped"]["threshold"] > 0'
run credence 'queue("p2")["dropped"]["threshold"] > 0' 'queue("p2")["dropped"]["pushed_out"] == 0' \
  'queue("p2")["peak_cells"] > '"$B"' / 2'
# fab: the cap is checked on a snapshot taken before the TCP burst, with UDP alone at p2. During
# the burst the queue also takes the ACKs of h2's TCP flows: new flows, whose first 22500 bytes
# (about 340 ACKs each) FAB admits at alpha_short, so the peak over the whole run is no bound
# (2016-2203 cells in 22 runs under TSan and a CPU hog per core, against 2014-2015 before the
# burst). The window is long because a flow's idle time is measured when the RX worker reads its
# frames: there the UDP frames waited in the kernel's ring (ring_to_rx p99 up to 0.4 s), the flow
# looked idle for more than 5 ms and its next 15 frames were short again (the snapshot's peak
# 2052-2204 in 4 of 8 runs with the default window_us).
BEFORE_BURST='queue("p2")["peak_cells"] <= '"$B"' * 0.5 / 1.5 + 19' TB_POLICY_PARAMS='window_us = 1000000' \
  run fab 'queue("p2")["dropped"]["threshold"] > 0'
run occamy 'queue("p2")["dropped"]["reclaimed"] > 0' 'queue("p2")["dropped"]["threshold"] > 0'
run ib 'queue("p2")["peak_cells"] <= '"$B"' * 0.5 / 1.5 + 10 * 19' \
  'queue("p2")["dropped"]["threshold"] > 0'
