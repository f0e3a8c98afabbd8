#!/usr/bin/env bash
# Answers (rx_worker.cpp): with one RX worker per port (rx_park_after = 0), the worker that sent a
# frame inline takes the answer from the other port's ring while that port's worker sleeps (pings:
# the requests' worker takes replies as they arrive, without waiting for a wake-up), and leaves the ring to
# its own worker while that one runs (a TCP stream: each worker takes its own port's frames; taking
# the other's cost a fifth of the goodput, docs/datapath-latency.md).
source "$(dirname "$0")/lib.sh"
tb_init
tb_create 2
tb_write_config "$TB_DIR/sw.toml" dt 0 "21000 cells"
# Realtime priority: a woken worker runs at once, so "asleep" means asleep. Under normal
# priority, on a busy machine a woken worker waits for a core while its flag still says asleep,
# the other worker rightly takes its frames meanwhile, and the counts below cannot tell the rule
# from the scheduler: on a busy machine (2026-11-27, E8 running or a CPU hog per core) p2's
# worker took 26-28 % of the stream with the flag and 16-30 % without it; with realtime priority
# and a hog per core, 0.8-1.7 % with it and 22-33 % without.
sed -i 's/^\[switch\]/[switch]\nrx_park_after = 0\nrealtime_priority = 10/' "$TB_DIR/sw.toml"
tb_start_switch "$TB_DIR/sw.toml"

# Frames each worker took and each port received, as "w1 w2 p1 p2".
counts() {
  tb_ctl --json status >"$TB_DIR/status.json"
  tb_ctl --json ports >"$TB_DIR/ports.json"
  echo "$(jq -r '[.rx_workers[] | {(.ports[0]): .frames}] | add | "\(.p1) \(.p2)"' "$TB_DIR/status.json")" \
    "$(jq -r 'map({(.interface): .rx_frames}) | add | "\(.p1) \(.p2)"' "$TB_DIR/ports.json")"
}

tb_exec 1 ping -c 5 -i 0.2 -W 1 -q "$(tb_ip 2)" >/dev/null  # learnt both ways
read -r w1 w2 p1 p2 < <(counts)
tb_exec 1 ping -c 100 -i 0.01 -W 1 -q "$(tb_ip 2)" | tail -2
read -r w1b w2b p1b p2b < <(counts)
echo "pings: p1's worker took $((w1b - w1)), p2's $((w2b - w2)); p1 received $((p1b - p1)), p2 $((p2b - p2))"
[ $((p2b - p2)) -ge 100 ] || fail "p2 did not receive the 100 replies"
# The kernel wakes p2's worker too, inside the send that produced the reply, and the two race
# for the ring (rx_owned): about half of the replies go each way here; none would be taken by
# p1's worker without the answers.
[ $((w2b - w2)) -le 80 ] || fail "p2's worker took $((w2b - w2)) of the 100 replies: the requests' worker took few of the answers"

tb_bg 2 iperf3 -s -1 -p 5201
sleep 0.3
tb_exec 1 timeout 20 iperf3 -c "$(tb_ip 2)" -p 5201 -t 3 -J >"$TB_DIR/tcp.json" || fail "iperf3 failed"
wait "${TB_PIDS[@]}" 2>/dev/null || true
TB_PIDS=()
read -r w1c w2c p1c p2c < <(counts)
data=$((p1c - p1b)) acks=$((p2c - p2b)) took2=$((w2c - w2b))
echo "TCP: p1 received $data (data), p2 $acks (ACKs); p1's worker took $((w1c - w1b)), p2's $took2"
[ "$data" -ge 10000 ] || fail "the TCP stream carried only $data frames"
# p2's worker may take the odd data frame while p1's worker sleeps, not a share of the stream:
# at most an eighth. With the rule, 0.1-4 % here (2026-12-02, 8 runs: 6 with three CPU hogs on
# the two cores, 2 with one) and 8.7 % once in CI (likely a slower VM: the flag stays set until
# its worker runs); without it (the rx_asleep check removed), 20-30 % with three hogs and
# 31-34 % with one.
[ "$took2" -le $((acks + data / 8)) ] ||
  fail "p2's worker took $took2 frames, $((took2 - acks)) more than p2 received: it read p1's ring while p1's worker ran"
echo "PASS"
