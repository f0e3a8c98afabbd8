#!/usr/bin/env bash
# ECN: with ECN-capable TCP hosts and a low K, the switch marks CE above K and the receiver sees
# CE-marked packets. The hosts use dctcp when the kernel has it; this machine's kernel may lack
# the module, and then ECN-enabled cubic is used (it negotiates ECN the same way, so the marks
# are the same; only the sender's reaction differs).
source "$(dirname "$0")/lib.sh"
cc=cubic
grep -qw dctcp /proc/sys/net/ipv4/tcp_available_congestion_control && cc=dctcp
echo "hosts use $cc with ECN"
tb_init
tb_create 2 "$cc" 1
tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "21000 cells" 1 '
[[classes]]
name = "all"
ecn_threshold = "20 cells"'
tb_start_switch "$TB_DIR/sw.toml"
ce_before=$(tb_exec 2 awk '/^IpExt:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "InCEPkts") c = i; h = 1 } else print $c }' /proc/net/netstat)
tb_bg 2 iperf3 -s -1 -p 5201
sleep 0.5
tb_exec 1 timeout 30 iperf3 -c "$(tb_ip 2)" -p 5201 -t 3 >/dev/null || fail "iperf3 failed"
ce_after=$(tb_exec 2 awk '/^IpExt:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "InCEPkts") c = i; h = 1 } else print $c }' /proc/net/netstat)
echo "receiver InCEPkts: $ce_before -> $ce_after"
[ "$ce_after" -gt "$ce_before" ] || fail "the receiver saw no CE-marked packets"
tb_stop_switch || fail "sharebufd exited with $?"
check_stats 'queue("p2")["ecn_marked"] > 0' \
  'queue("p2")["ecn_marked"] <= queue("p2")["admitted"]' \
  'all(accounted(q) for p in s["ports"] for q in p["queues"])'
