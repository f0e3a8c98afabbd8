#!/usr/bin/env bash
# E7's side question: what an unmodified Linux TCP stack does with trimmed segments. Four
# senders (h2-h5) each run one iperf3 TCP stream (cubic, no ECN) into h1 through p1, shaped to
# 100 Mbit/s with a 600-cell buffer; the data class's overflow is "drop", then "trim" (128-byte
# headers, lengths and checksums fixed, strict-priority trim queue), switched live. Per mode and
# repetition: goodput (bytes received over the wall-clock time from starting the senders to the
# last one's exit; iperf3's own interval undercounted it by up to 15 % here), the senders'
# retransmissions (iperf3), and the receiver's TCP counters
# (nstat in h1's namespace: segments in, segments queued out of order, D-SACKs sent for data
# that arrived twice).
#   experiments/e7_tcp_trimmed.sh [--out DIR] [--seconds 5] [--reps 3] [--readme]
# Writes DIR/tcp_trimmed.csv and DIR/tcp_trimmed.md (a table of every run); --readme puts the
# table into the E7 page (section e7tcp).
set -euo pipefail
# shellcheck source=../netns-scripts/lib/usage.sh
source "$(dirname "$0")/../netns-scripts/lib/usage.sh"
# shellcheck source=../netns-scripts/lib/testbed.sh
source "$(dirname "$0")/../netns-scripts/lib/testbed.sh"
out=results/e7 seconds=5 reps=3 readme=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --readme) readme=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "e7_tcp_trimmed.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "e7_tcp_trimmed.sh: needs root (network namespaces)" >&2; exit 1; }
out=$(tb_out_dir "$out")
tb_init
tb_create 5 cubic 0
TB_PORT_EXTRA='scheduler = "sp"
trim_queue = 0' tb_write_config "$TB_DIR/sw.toml" dt 100Mbit "600 cells" 2 '
[[classes]]
name = "data"
queue = 1
alpha = 1.0
overflow = "drop"
[trimming]
trim_dscp = 8'
tb_start_switch "$TB_DIR/sw.toml"
csv="$out/tcp_trimmed.csv"
echo "mode,rep,goodput_mbps,retransmits,in_segs,ofo_queued,dsack_sent,trimmed" >"$csv"
for rep in $(seq 1 "$reps"); do
  for mode in drop trim; do
    tb_ctl trim.set class=data overflow="$mode" >/dev/null
    tb_ctl counters.reset >/dev/null
    for h in 2 3 4 5; do tb_bg 1 iperf3 -s -1 -p $((5200 + h)); done
    sleep 0.3
    tb_exec 1 nstat -n >/dev/null  # resets nstat's history in h1
    pids=()
    t0=$EPOCHREALTIME
    for h in 2 3 4 5; do
      tb_exec "$h" timeout $((seconds + 20)) iperf3 -c "$(tb_ip 1)" -p $((5200 + h)) -t "$seconds" -J \
        >"$TB_DIR/iperf-$h.json" &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || tb_die "iperf3 failed"; done
    elapsed=$(/usr/bin/python3 -c "print($EPOCHREALTIME - $t0)")
    tb_exec 1 nstat -j >"$TB_DIR/nstat.json"  # the change since nstat -n
    tb_ctl --json queues >"$TB_DIR/queues.json"
    tb_ctl --json ports >"$TB_DIR/ports.json"
    /usr/bin/python3 - "$TB_DIR" "$mode" "$rep" "$elapsed" >>"$csv" <<'PY'
import json, sys
d, mode, rep = sys.argv[1:4]
good = retx = 0
for h in (2, 3, 4, 5):
    j = json.load(open(f"{d}/iperf-{h}.json"))
    r = j["end"]["sum_received"]
    print(f"h{h}: {r['bytes']} B in {r['seconds']:.3f} s", file=sys.stderr)
    good += r["bytes"] * 8 / 1e6 / float(sys.argv[4])
    retx += j["end"]["sum_sent"].get("retransmits", 0)
n = json.load(open(f"{d}/nstat.json"))["kernel"]
q = next(q for q in json.load(open(f"{d}/queues.json")) if q["interface"] == "p1" and q["queue"] == 1)
p1 = next(p for p in json.load(open(f"{d}/ports.json")) if p["interface"] == "p1")
print(f"p1 sent {p1['tx_bytes']} B, {p1['shaper_catchup_bytes']} B of it on shaper catch-up",
      file=sys.stderr)
dsack = n.get("TcpExtTCPDSACKOldSent", 0) + n.get("TcpExtTCPDSACKOfoSent", 0)
print(f"{mode},{rep},{good:.1f},{retx},{n.get('TcpInSegs', 0)},{n.get('TcpExtTCPOFOQueue', 0)},"
      f"{dsack},{q['trimmed']}")
PY
  done
done
tb_stop_switch || tb_die "sharebufd exited with $?"
/usr/bin/python3 - "$csv" "$seconds" >"$out/tcp_trimmed.md" <<'PY'
import csv, datetime, os, platform, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| mode | run | goodput (Mbit/s, 4 streams: bytes received / wall-clock time of the run) | retransmissions | segments in (h1) "
      "| queued out of order | D-SACKs sent | trimmed at p1 |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['mode']} | {r['rep']} | {r['goodput_mbps']} | {r['retransmits']} | {r['in_segs']} "
          f"| {r['ofo_queued']} | {r['dsack_sent']} | {r['trimmed']} |")
print()
print(f"Produced by `experiments/e7_tcp_trimmed.sh` on {datetime.date.today()} "
      f"({platform.node()}, {os.cpu_count()} CPUs), {sys.argv[2]} s per run.")
PY
cat "$out/tcp_trimmed.md"
[ "$readme" = 0 ] ||
  /usr/bin/python3 "$(dirname "$0")/../netns-scripts/lib/doc_section.py" e7tcp "$out/tcp_trimmed.md"
