#!/usr/bin/env bash
# E3 (EXPERIMENTS.md): incast under web-search background load. 8 hosts around sharebufd, ports
# shaped to 100 Mbit/s, 21000 cells of 80 B. Background: every host runs sharebuf-tg
# websearch to the other hosts (flow sizes from the web-search CDF, Poisson arrivals at LOAD of its
# link). Incast: h1 asks the 7 other hosts for BURST/7 bytes each (BURST a fraction of the
# buffer), open loop: Poisson arrivals at --query-rate whether or not earlier queries have
# finished (each on idle persistent connections, 32 per server opened in advance). Queues:
# "single" (everything in one queue per port) and/or "multi" (3 queues per port, round robin:
# incast responses DSCP 40 in queue 0, short flows < 100 KB in queue 1, flows >= 100 KB in queue
# 2; hosts reflect the DSCP of the SYN so responses carry it). Transport: "cubic", or "ecn" (ECN cubic, this kernel has no dctcp; the switch marks
# CE above K = 65 packets scaled to the port rate, at least 2 packets: 3000 B at 100 Mbit/s).
# Per (queues, transport, load, burst, policy), pooled over repetitions: p99 and p99.9 query
# completion time (and p99 QCT's range over repetitions), p99 short-flow FCT, long-flow goodput,
# p99 occupancy (1 ms watch), drops, failed flows (background and query responses; the query
# generator's messages go to DIR/query-errors.log), and the share of the bytes sent on shaper
# catch-up (how much the host delayed the egress threads).
#   netns-scripts/e3_incast.sh [--out DIR] [--seconds 15] [--reps 2] [--queues single,multi]
#       [--transport cubic] [--loads 0.4,0.8] [--bursts 0.5] [--query-rate 2]
#       [--policies dt,cs,protean,fb,credence,lqd] [--record] [--full] [--quick] [--readme]
# Reduced defaults: about 22 minutes here. The query rate makes the incast 13 % of the
# aggregator's link at burst 0.5 (2 x 0.84 MB/s): open-loop queries at a rate whose bursts
# exceed the link would overload it whatever the policy. --full: loads 0.2-0.8, bursts
# 0.25-0.75, both queue modes, both transports, 3 repetitions, all 10 policies (hours). --quick: DT, one repetition,
# both queue modes, load 0.4, 3 s. Writes flows.csv, queries.csv, runs.csv, summary.csv/.md,
# qct_p99.png, qct_cdf.png and timeline-QUEUES-TRANSPORT-POLICY-BURST.png (repetition 1, highest
# load) into DIR. --record: capture every arrival of the first run at the highest load (first
# 300 MB, one pcap per ingress port) into DIR/trace/ with its switch config, and replay it with
# experiments/e4_credence.sh (E4 on a recorded E3 trace; results in DIR/e4/).
set -euo pipefail
# shellcheck source=lib/testbed.sh
source "$(dirname "$0")/lib/testbed.sh"
out=results/e3 seconds=15 reps=2 queues=single,multi transports=cubic loads=0.4,0.8 bursts=0.5
policies=dt,cs,protean,fb,credence,lqd qrate=2 readme=0 record=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --queues) queues=$2; shift 2 ;;
    --transport) transports=$2; shift 2 ;;
    --loads) loads=$2; shift 2 ;;
    --bursts) bursts=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --query-rate) qrate=$2; shift 2 ;;
    --quick) seconds=3; reps=1; queues=single,multi; loads=0.4; bursts=0.5; policies=dt; shift ;;
    --full) loads=0.2,0.4,0.6,0.8; bursts=0.25,0.5,0.75; reps=3; queues=single,multi
            transports=cubic,ecn; policies=cs,dt,edt,abm,protean,smartbuf,fb,fba,credence,lqd
            shift ;;
    --record) record=1; shift ;;
    --readme) readme=1; shift ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "e3_incast.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
for q in ${queues//,/ }; do
  case "$q" in single|multi) ;; *) echo "e3_incast.sh: --queues: '$q' is not single or multi" >&2; exit 2 ;; esac
done
for t in ${transports//,/ }; do
  case "$t" in cubic|ecn) ;; *) echo "e3_incast.sh: --transport: '$t' is not cubic or ecn" >&2; exit 2 ;; esac
done
out=$(tb_out_dir "$out")
export TB_CAPTURE_DIR=$out  # --record writes its trace into the results folder
tg=$(tb_tg) || exit 1
buffer_cells=21000 rate=100Mbit ecn_k="3000 B"
tb_init
: >"$out/query-errors.log"
echo "queues,transport,policy,load,burst,rep,kind,bytes,fct_ms,ok" >"$out/flows.csv"
echo "queues,transport,policy,load,burst,rep,qct_ms" >"$out/queries.csv"
echo "queues,transport,policy,load,burst,rep,occ_p99_cells,drops,p1_drops,received,tx_bytes,catchup_bytes" >"$out/runs.csv"
IFS=, read -r -a plist <<<"$policies"
IFS=, read -r -a llist <<<"$loads"
IFS=, read -r -a blist <<<"$bursts"
IFS=, read -r -a qlist <<<"$queues"
IFS=, read -r -a tlist <<<"$transports"
max_load=$(printf '%s\n' "${llist[@]}" | sort -g | tail -1)
others() {  # every host but $1, as a server list
  local i s=""
  for i in $(seq 1 8); do [ "$i" = "$1" ] || s+="${s:+,}$(tb_ip "$i")"; done
  echo "$s"
}
# The switch's classes: one queue, or incast / short / large in queues 0 / 1 / 2.
classes() {  # QUEUES TRANSPORT
  local k=""
  [ "$2" = ecn ] && k="ecn_threshold = \"$ecn_k\""
  if [ "$1" = single ]; then
    printf '[[classes]]\nname = "all"\ndscp = [0]\n%s\n' "$k"
  else
    printf '[[classes]]\nname = "incast"\nqueue = 0\nrole = "incast"\ngroup = "high"\ndscp = [40]\n%s\n' "$k"
    printf '[[classes]]\nname = "short"\nqueue = 1\nrole = "short"\ngroup = "high"\ndscp = [0]\n%s\n' "$k"
    printf '[[classes]]\nname = "large"\nqueue = 2\nrole = "long"\ngroup = "low"\ndscp = [8]\n%s\n' "$k"
  fi
}
tb_create 8 cubic 0
for h in $(seq 1 8); do ip netns exec "$(tb_ns_host "$h")" sysctl -qw net.ipv4.tcp_reflect_tos=1; done
for transport in "${tlist[@]}"; do
  for h in $(seq 1 8); do
    ip netns exec "$(tb_ns_host "$h")" sysctl -qw net.ipv4.tcp_ecn="$([ "$transport" = ecn ] && echo 1 || echo 0)"
  done
  for qmode in "${qlist[@]}"; do
    nq=1 dscp_q="" dscp_bg=""
    if [ "$qmode" = multi ]; then nq=3 dscp_q="--dscp 40" dscp_bg="--dscp 0 --dscp-large 8"; fi
    for load in "${llist[@]}"; do
      for burst in "${blist[@]}"; do
        for policy in "${plist[@]}"; do
          for rep in $(seq 1 "$reps"); do
            echo "== E3: $qmode queue(s), $transport, load $load, burst $burst of B, $policy, repetition $rep of $reps"
            tb_write_config "$TB_DIR/sw.toml" "$policy" "$rate" "$buffer_cells cells" "$nq" "$(classes "$qmode" "$transport")"
            tb_start_switch "$TB_DIR/sw.toml"
            pids=()
            for h in $(seq 1 8); do
              ip netns exec "$(tb_ns_host "$h")" "$tg" server --port 5500 --duration $((seconds + 40)) 2>/dev/null &
              pids+=($!)
            done
            sleep 0.5
            tb_ctl watch interval_us=1000 --csv "$TB_DIR/watch.csv" --duration "$seconds" 2>/dev/null &
            watch_pid=$!
            recording=0
            if [ "$record" = 1 ] && [ ! -d "$out/trace" ] && [ "$load" = "$max_load" ]; then
              mkdir -p "$out/trace"
              cp "$TB_DIR/sw.toml" "$out/trace/sw.toml"
              tb_ctl capture.start path="$out/trace/e3" mode=all per_port=true max_bytes=300000000 >/dev/null
              recording=1
            fi
            gens=()
            for h in $(seq 1 8); do
              # shellcheck disable=SC2086  # $dscp_bg: zero or more options
              ip netns exec "$(tb_ns_host "$h")" "$tg" websearch --servers "$(others "$h")" --load "$load" \
                --link-rate "$rate" --duration "$seconds" --timeout 30 --seed "$((h + 100 * rep))" $dscp_bg \
                --csv "$TB_DIR/bg$h.csv" >/dev/null 2>&1 &
              gens+=($!)
            done
            qbytes=$(awk -v b="$burst" -v c="$buffer_cells" 'BEGIN { printf "%d", b * c * 80 }')
            # shellcheck disable=SC2086
            ip netns exec "$(tb_ns_host 1)" "$tg" query --servers "$(others 1)" --size "$qbytes" $dscp_q \
              --rate "$qrate" --pool 32 --duration "$seconds" --timeout 30 --seed "$rep" --csv "$TB_DIR/q.csv" >/dev/null 2>>"$out/query-errors.log" &
            gens+=($!)
            for pid in "${gens[@]}"; do wait "$pid" || true; done  # failed flows are rows with ok=0
            wait "$watch_pid" || true
            [ "$recording" = 0 ] || tb_ctl --json capture.stop >"$out/trace/capture.json"
            for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
            for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
            tb_stop_switch || tb_die "$policy: sharebufd exited with an error"
            if [ "$rep" = 1 ] && [ "$load" = "$max_load" ]; then
              cp "$TB_DIR/watch.csv" "$out/watch-$qmode-$transport-$policy-$burst.csv"
            fi
            /usr/bin/python3 - "$TB_DIR" "$out" "$qmode,$transport,$policy,$load,$burst,$rep" <<'PY'
import csv, glob, json, os, sys
d, out, key = sys.argv[1:4]
with open(f"{out}/flows.csv", "a") as f:
    # The query generator's own flows too (kind "query"), so that a failed response counts.
    for path in glob.glob(f"{d}/bg*.csv") + glob.glob(f"{d}/q.csv"):
        for r in csv.DictReader(open(path)):
            f.write(f"{key},{r['kind']},{r['bytes']},{r['fct_ms']},{r['ok']}\n")
        os.remove(path)
qpath = f"{d}/q.csv.queries.csv"
with open(f"{out}/queries.csv", "a") as f:
    if os.path.exists(qpath):
        for r in csv.DictReader(open(qpath)):
            f.write(f"{key},{r['qct_ms']}\n")
        os.remove(qpath)
occ = {}
for r in csv.DictReader(open(f"{d}/watch.csv")):
    occ[r["t_s"]] = int(r["total_cells"])
v = sorted(occ.values()) or [0]
s = json.load(open(f"{d}/stats.json"))
drops = lambda qs: sum(sum(q["dropped"].values()) for q in qs)
qs = [q for p in s["ports"] for q in p["queues"]]
p1 = [q for p in s["ports"] if p["interface"] == "p1" for q in p["queues"]]
with open(f"{out}/runs.csv", "a") as f:
    f.write(f"{key},{v[min(len(v) - 1, int(0.99 * len(v)))]},{drops(qs)},{drops(p1)},{sum(q['received'] for q in qs)},"
            f"{sum(p['tx_bytes'] for p in s['ports'])},{sum(p['shaper_catchup_bytes'] for p in s['ports'])}\n")
PY
          done
        done
      done
    done
  done
done
for w in "$out"/watch-*.csv; do
  [ -e "$w" ] || continue
  name=$(basename "$w" .csv)
  name=${name#watch-}
  pq=p1/0
  [ "${name%%-*}" = multi ] && pq=p1/0,p1/1,p1/2
  /usr/bin/python3 "$TB_ROOT/tools/plot_watch.py" "$w" "$out/timeline-$name.png" --queues "$pq" \
    --title "E3 $name (load $max_load, repetition 1): the aggregator's port p1" >/dev/null
done

if [ -d "$out/trace" ]; then
  pcaps=()
  for f in "$out"/trace/e3-p*.pcap; do pcaps+=(--pcap "$f@$(basename "$f" .pcap | sed 's/^e3-//')"); done
  echo "== E4 on the recorded trace ($(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["frames"])' "$out/trace/capture.json") frames)"
  "$TB_ROOT/experiments/e4_credence.sh" --out "$out/e4" "${pcaps[@]}" --config "$out/trace/sw.toml" | tail -25
fi
/usr/bin/python3 - "$out" "$readme" "$TB_ROOT" "$seconds" "$qrate" "$reps" <<'PY'
import csv, datetime, os, platform, statistics, sys
from collections import defaultdict
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
out, readme, root, seconds, qrate, reps = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
def pct(v, p):
    v = sorted(v)
    return v[max(0, min(len(v) - 1, int(-(-p * len(v) // 1)) - 1))] if v else float("nan")
KEY = ("queues", "transport", "policy", "load", "burst")
key = lambda r: tuple(r[k] for k in KEY)
q, q_rep, short, long_, failed, order = (defaultdict(list), defaultdict(lambda: defaultdict(list)), defaultdict(list),
                                         defaultdict(list), defaultdict(int), [])
occ, drops, p1_drops = defaultdict(list), defaultdict(int), defaultdict(int)
tx, catchup = defaultdict(int), defaultdict(int)
for r in csv.DictReader(open(f"{out}/runs.csv")):
    k = key(r)
    if k not in order: order.append(k)
    occ[k].append(int(r["occ_p99_cells"]))
    drops[k] += int(r["drops"])
    p1_drops[k] += int(r["p1_drops"])
    tx[k] += int(r["tx_bytes"])
    catchup[k] += int(r["catchup_bytes"])
for r in csv.DictReader(open(f"{out}/queries.csv")):
    q[key(r)].append(float(r["qct_ms"]))
    q_rep[key(r)][r["rep"]].append(float(r["qct_ms"]))
for r in csv.DictReader(open(f"{out}/flows.csv")):
    k = key(r)
    if r["ok"] != "1":
        failed[k] += 1
    elif r["kind"] == "short":
        short[k].append(float(r["fct_ms"]))
    elif r["kind"] == "long":
        long_[k].append(int(r["bytes"]) * 8 / (float(r["fct_ms"]) / 1e3) / 1e6)
lines = ["| queues | transport | load | burst (of B) | policy | queries | p99 QCT | p99 QCT per rep (min–max) | p99.9 QCT | short flows | p99 short FCT | long-flow goodput (mean) | p99 occupancy (max over reps) | drops (at p1) | failed flows | shaper catch-up |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
rows = []
for k in order:
    per_rep = [pct(v, 0.99) for v in q_rep[k].values()]
    row = list(k) + [len(q[k]), pct(q[k], 0.99), min(per_rep, default=float("nan")), max(per_rep, default=float("nan")),
                     pct(q[k], 0.999), len(short[k]), pct(short[k], 0.99),
                     statistics.mean(long_[k]) if long_[k] else float("nan"), max(occ[k]), drops[k], p1_drops[k], failed[k],
                     100 * catchup[k] / tx[k] if tx[k] else 0.0]
    rows.append(row)
    qm, tr, p, l, b = k
    lines.append(f"| {qm} | {tr} | {l} | {b} | {p} | {row[5]} | {row[6]:.1f} ms | {row[7]:.0f}–{row[8]:.0f} ms | {row[9]:.1f} ms | "
                 f"{row[10]} | {row[11]:.1f} ms | {row[12]:.1f} Mbit/s | {row[13]} | {row[14]} ({row[15]}) | {row[16]} | {row[17]:.1f} % |")
with open(f"{out}/summary.csv", "w") as f:
    w = csv.writer(f)
    w.writerow(list(KEY) + ["queries", "qct_p99_ms", "qct_p99_rep_min_ms", "qct_p99_rep_max_ms", "qct_p999_ms", "short_flows",
                            "short_fct_p99_ms", "long_goodput_mbps", "occ_p99_cells", "drops", "p1_drops", "failed_flows",
                            "shaper_catchup_pct"])
    w.writerows(rows)
stamp = (f"Produced by `netns-scripts/e3_incast.sh` on {datetime.date.today()} ({platform.node()}, {os.cpu_count()} CPUs): "
         f"8 hosts, 100 Mbit/s, 21000 cells, {seconds} s per run, {qrate} queries/s, {reps} repetition(s) per cell "
         f"(percentiles pool the repetitions). Shaper catch-up: the share of the bytes sent whose shaper credit "
         f"was earned while the host ran an egress thread late (see How it works, Shaper).")
table = "\n".join(lines + ["", stamp])
open(f"{out}/summary.md", "w").write(table + "\n")

# p99 QCT bars with the per-repetition range as error bars.
fig, ax = plt.subplots(figsize=(max(8, 0.45 * len(rows)), 3.8))
labels = [f"{r[2]}\n{r[0][0]}/{r[1][0]} {r[3]}/{r[4]}" for r in rows]
err = [[max(0, r[6] - r[7]) for r in rows], [max(0, r[8] - r[6]) for r in rows]]
ax.bar(range(len(rows)), [r[6] for r in rows], yerr=err, capsize=2, color="tab:red", label="p99 QCT (range over repetitions)")
ax.set_xticks(range(len(rows)), labels, fontsize=6)
ax.set_ylabel("ms")
ax.set_title("E3: p99 query completion time (policy, queues s/m / transport c/e, load/burst)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(f"{out}/qct_p99.png", dpi=110)

# QCT CDF per policy, one panel per (queues, transport, load, burst).
panels = []
for k in order:
    if k[:2] + k[3:] not in panels: panels.append(k[:2] + k[3:])
fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.4), squeeze=False, sharey=True)
for ax, (qm, tr, l, b) in zip(axes[0], panels):
    for k in order:
        if (k[0], k[1], k[3], k[4]) != (qm, tr, l, b) or not q[k]:
            continue
        v = sorted(q[k])
        ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], label=k[2], lw=1.2)
    ax.set_xscale("log")
    ax.set_title(f"{qm} queue(s), {tr}, load {l}, burst {b}", fontsize=8)
    ax.set_xlabel("query completion time (ms)")
    ax.grid(alpha=0.3)
axes[0][0].set_ylabel("CDF")
axes[0][-1].legend(fontsize=7)
fig.tight_layout()
fig.savefig(f"{out}/qct_cdf.png", dpi=110)
print(table)
if readme:
    import subprocess
    subprocess.run(["/usr/bin/python3", f"{root}/netns-scripts/lib/doc_section.py", "e3",
                    f"{out}/summary.md", f"{out}/qct_p99.png", f"{out}/qct_cdf.png"], check=True)
PY
echo "results in $out"
