# Counters the rate benchmarks read around a run (bench/forwarding_bench.sh, loss_sweep.sh,
# host_bounds.sh); source after scripts/testbed.sh.
#   rx_packets     frames host 2's eth0 has received
#   busy_jiffies   busy jiffies of all CPUs together (user nice system irq softirq steal): the
#                  switch, the sender and the kernel's forwarding alike
#   jiffies        the same, and the total (idle and iowait included): "busy total"
# shellcheck shell=bash

rx_packets() { tb_exec 2 awk '$1 == "eth0:" { print $3 }' /proc/net/dev; }
busy_jiffies() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
jiffies() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
