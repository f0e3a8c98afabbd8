#!/usr/bin/env bash
# The trim-aware transport through trimming's Tofino approximation: h1 asks h2-h5 for 16 flows of
# 64 KB at once (sharebuf-ndp, window 8) through p1 shaped to 100 Mbit/s with a small buffer, in
# [trimming] mode = "tofino-approx" with 2 pipelines (p1,p3,p5 on one RX worker, p2,p4 on the
# other). The trim queue is served by DRR with 4 times the data queue's weight (byte-based
# weighted fair queueing, NDP's preference; tests/netns/trimming.sh uses strict priority). Every flow completes; the receiver got trimmed headers and NACKed them, and the
# retransmissions they asked for arrived; the meters trimmed at ingress and the buffer's
# refusals were deflected (counted per port), and the counters balance. Then trim.set switches
# to ideal trimming live, then to drop: with drop the flows complete only through timeouts.
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 5
ndp=$(tb_ndp) || fail "sharebuf-ndp is not built"
TB_PORT_EXTRA='scheduler = "drr"
weights = [4, 1]
trim_queue = 0' tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "600 cells" 2 '
[[classes]]
name = "data"
queue = 1
alpha = 1.0
overflow = "trim"
[trimming]
mode = "tofino-approx"
pipelines = 2
trim_dscp = 8
recirc_rate = "100Mbit"'
tb_start_switch "$TB_DIR/sw.toml"
for h in 2 3 4 5; do tb_bg "$h" timeout 60 "$ndp" serve --port 9100 --rto 10ms; done
sleep 0.3
servers=$(for h in 2 3 4 5; do printf '%s,' "$(tb_ip "$h")"; done)
run() {  # run NAME: one round of 8 incasts, CSVs into $TB_DIR/NAME*.csv
  tb_exec 1 timeout 60 "$ndp" query --servers "${servers%,}" --flows 16 --size 65536 --count 8 \
    --gap 30ms --window 8 --pull-rate 100Mbit --timeout 10s --csv "$TB_DIR/$1.csv" --events "$TB_DIR/$1-events.csv" ||
    fail "sharebuf-ndp query ($1) failed: flows did not complete"
}
run tofino
# Quiet first: the servers may still resend for a while after the query returned.
tb_snapshot_quiet "$TB_DIR/stats-tofino.json" >/dev/null
tb_ctl trim.set mode=ideal >/dev/null || fail "trim.set mode=ideal failed"
run ideal
tb_ctl trim.set class=data overflow=drop >/dev/null || fail "trim.set overflow=drop failed"
run drop
tb_stop_switch || fail "sharebufd exited with $?"
netns_check trim-transport "$TB_DIR" || fail "transport check failed"
