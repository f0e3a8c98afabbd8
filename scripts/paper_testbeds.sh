# shellcheck shell=bash
# The switch configurations and background loads of E1 (Protean's testbed) and E2 (FB's), shared
# by their experiment scripts and the live-vs-replay agreement script. Source after testbed.sh;
# a testbed of 3 hosts must exist (tb_create 3).

# e1_config FILE SPEC: E1's switch: 100 Mbit/s ports, 21000 cells, one queue per port; class
# "incast" (TCP, DSCP 0: alpha 0.8, Protean role incast, FB group high) and "bulk" (UDP, DSCP
# CS1: alpha 0.5, role long, group low); the policy from SPEC (tb_policy_params).
e1_config() {
  TB_POLICY_PARAMS=$(tb_policy_params "$2") tb_write_config "$1" "$(tb_policy_name "$2")" \
    100Mbit "21000 cells" 1 '
[[classes]]
name = "incast"
alpha = 0.8
role = "incast"
group = "high"
dscp = [0]
[[classes]]
name = "bulk"
alpha = 0.5
role = "long"
group = "low"
dscp = [8]'
}

# e1_background SECONDS: a UDP flow S1 -> S2 at 200 Mbit/s (twice S2's port) for SECONDS, its
# iperf3 report in $TB_DIR/udp.json.
e1_background() {
  tb_bg 2 iperf3 -s -1 -p 5201 -J --logfile "$TB_DIR/udp.json"
  sleep 0.5
  tb_bg 1 iperf3 -c "$(tb_ip 2)" -p 5201 -u -b 200M -l 1400 --dscp CS1 -t "$1" >/dev/null
}

# e2_config FILE SPEC: E2's switch: 80 Mbit/s ports (the paper's rate is garbled; ours), 9000
# cells, eight queues per port under strict priority; queue 0 TCP (class "tcp", high, alpha 0.8),
# queues 1-7 UDP (classes udp1..udp7 by DSCP CS1..CS7, low, alpha 0.6).
e2_config() {
  local classes k
  classes='
[[classes]]
name = "tcp"
queue = 0
alpha = 0.8
group = "high"
dscp = [0]'
  for k in 1 2 3 4 5 6 7; do
    classes+="
[[classes]]
name = \"udp$k\"
queue = $k
alpha = 0.6
group = \"low\"
dscp = [$((8 * k))]"
  done
  TB_POLICY_PARAMS=$(tb_policy_params "$2") tb_write_config "$1" "$(tb_policy_name "$2")" \
    80Mbit "9000 cells" 8 "$classes"
  sed -i 's/^queues = 8$/queues = 8\nscheduler = "sp"/' "$1"
}

# e2_background SECONDS: seven UDP flows S1 -> S2 (one per low-priority queue, 30 Mbit/s each,
# oversubscribing p2) for SECONDS; reports in $TB_DIR/udp<k>.json.
e2_background() {
  local k
  for k in 1 2 3 4 5 6 7; do tb_bg 2 iperf3 -s -1 -p $((5200 + k)) -J --logfile "$TB_DIR/udp$k.json"; done
  sleep 0.5
  for k in 1 2 3 4 5 6 7; do
    tb_bg 1 iperf3 -c "$(tb_ip 2)" -p $((5200 + k)) -u -b 30M -l 1400 --dscp $((8 * k)) -t "$1" >/dev/null
  done
}

# e7_config FILE POLICY HEADER_RESERVE [OVERFLOW MODE METERS]: E7's switch (5 hosts): 100 Mbit/s
# ports, 600 cells of 80 B, two strict-priority queues per port (trimmed headers in queue 0 ahead
# of data in queue 1); class "data" (alpha 1) with OVERFLOW (default trim) under MODE (default
# tofino-approx; ideal) and METERS (three; fixed: the paper's DoD curve); the Tofino
# approximation's 2 pipelines with the paper's times scaled to the port rate: its switch runs
# 100 Gbit/s ports, these 100 Mbit/s, so T0 = 6 us, T1 = 18 us and a 1 us recirculation latency
# last as many packet-times here at 6 ms, 18 ms and 1 ms.
e7_config() {
  TB_PORT_EXTRA='scheduler = "sp"
trim_queue = 0' tb_write_config "$1" "$2" 100Mbit "600 cells" 2 '
[[classes]]
name = "data"
queue = 1
alpha = 1.0
overflow = "'"${4:-trim}"'"
[trimming]
mode = "'"${5:-tofino-approx}"'"
meters = "'"${6:-three}"'"
pipelines = 2
trim_dscp = 8
pessimistic_share = 0.25
t0 = "6ms"
t1 = "18ms"
recirc_rate = "100Mbit"
recirc_latency = "1ms"
header_reserve = '"$3"
}
