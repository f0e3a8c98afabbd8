#!/usr/bin/env bash
# The line-rate departure clock (model/departure_clock.h), seen through the policies that learn
# from departures:
# 1. A queue fed at twice its port's line rate grows at line rate, so Protean's normalised
#    gradient reads 1.0 (within 5 %): h1 sends 1200-byte frames (15 cells exactly) at 10417
#    frames/s, twice p2's 50 Mbit/s, into an 8 MB buffer that fills in about 1.3 s; the gradient
#    (beta 0.01: an average over about 100 departures, so one reading is not one noisy sample)
#    is read every 50 ms while the queue holds 10-90 % of the buffer; the median must be 1 +- 5 %.
# 2. FB's measured gamma of a backlogged port's only queue is its dequeue rate over the line rate:
#    1 (at least 0.95) at 500 Mbit/s offered 1.5x. There the egress sends several frames per
#    wake-up, and a clock that gave a burst one time (as before) dropped all but the first
#    dequeue of each burst from the rate: about 0.55 on this machine.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
blaster=${SHAREBUF_BLASTER:-$TB_ROOT/build/tools/sharebuf-blaster}
[ -x "$blaster" ] || fail "sharebuf-blaster not built at $blaster"

# run POLICY_PARAMS POLICY RATE_MBIT PPS SECONDS INTERVAL FIELD: one switch, h1 blasting 1200-byte
# frames at h2, p2's queue sampled; samples in $TB_DIR/samples.csv.
run() {
  TB_POLICY_PARAMS=$1 tb_write_config "$TB_DIR/sw.toml" "$2" "${3}Mbit" "100000 cells"
  tb_start_switch "$TB_DIR/sw.toml"
  tb_bg 1 "$blaster" --interface eth0 --dst-mac "$(tb_mac 2)" --src-ip "$(tb_ip 1)" \
    --dst-ip "$(tb_ip 2)" --frame-bytes 1200 --pps "$4" --seconds "$5" >"$TB_DIR/blaster.json"
  /usr/bin/python3 "$HERE/sample_policy.py" "$TB_DIR/ctl.sock" p2 0 "$6" "$5" "$7" \
    >"$TB_DIR/samples.csv" || fail "sampling the switch failed"
  wait "${TB_PIDS[@]}" 2>/dev/null || true
  TB_PIDS=()
  cat "$TB_DIR/blaster.json"
  tb_stop_switch || fail "sharebufd exited with $?"
}

# median FIELD LOW_CELLS HIGH_CELLS: the median of FIELD over samples with occupancy in range.
median() {
  netns_check median-in-range "$TB_DIR/samples.csv" "$@"
}

run 'alpha_incast = 1000
beta = 0.01
buildup = 1000' protean 50 10417 2.4 0.05 gradients
g=$(median gradients 10000 90000) || fail "Protean's gradient could not be read"
echo "Protean's gradient at twice line rate: median $g (expected 1.0 +- 5 %)"
within "abs($g - 1) <= 0.05" || fail "Protean's gradient at twice line rate is $g, not 1.0"

run 'gamma = "measured"
alpha_low = 1000' fb 500 78125 1.2 0.02 gamma
m=$(median gamma 5000 100000) || fail "FB's measured gamma could not be read"
echo "FB's measured gamma of a backlogged single queue at 500 Mbit/s: median $m (expected >= 0.95)"
within "$m >= 0.95" || fail "FB's measured gamma is $m: departures are not clocked per frame"
echo PASS
