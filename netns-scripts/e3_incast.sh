#!/usr/bin/env bash
# E3 (EXPERIMENTS.md): incast under web-search background load. 8 hosts around sharebufd, ports
# shaped to 100 Mbit/s, 21000 cells of 80 B, one queue per port (single-queue mode), cubic.
# Background: every host runs sharebuf-tg websearch to the other hosts (flow sizes from the
# web-search CDF, Poisson arrivals at LOAD of its link). Incast: h1 asks the 7 other hosts for
# BURST/7 bytes each (BURST a fraction of the buffer), Poisson at --query-rate. Per (policy, load,
# burst): p99 and p99.9 query completion time, p99 short-flow (< 100 KB) FCT, long-flow (>= 1 MB)
# goodput, p99 buffer occupancy (1 ms watch), drops.
#   netns-scripts/e3_incast.sh [--out DIR] [--seconds 10] [--full] [--loads 0.4,0.8]
#                              [--bursts 0.5] [--policies dt,cs,protean,fb,credence,lqd] [--quick]
#                              [--readme]
# --quick: DT only, load 0.4, 3 s (a check that everything runs). Reduced defaults finish in
# about 4 minutes here; --full sweeps loads 0.2,0.4,0.6,0.8, bursts
# 0.25,0.5,0.75 and cs,dt,edt,abm,protean,smartbuf,fb,fba,credence,lqd (hours).
set -euo pipefail
# shellcheck source=lib/testbed.sh
source "$(dirname "$0")/lib/testbed.sh"
out=results/e3 seconds=10 loads=0.4,0.8 bursts=0.5 policies=dt,cs,protean,fb,credence,lqd
qrate=10 readme=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --loads) loads=$2; shift 2 ;;
    --bursts) bursts=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --query-rate) qrate=$2; shift 2 ;;
    --quick) seconds=3; loads=0.4; bursts=0.5; policies=dt; shift ;;
    --full) loads=0.2,0.4,0.6,0.8; bursts=0.25,0.5,0.75
            policies=cs,dt,edt,abm,protean,smartbuf,fb,fba,credence,lqd; shift ;;
    --readme) readme=1; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "e3_incast.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
out=$(tb_out_dir "$out")
tg=$(tb_tg) || exit 1
buffer_cells=21000
tb_init
tb_create 8
echo "policy,load,burst,kind,bytes,fct_ms,ok" >"$out/flows.csv"
echo "policy,load,burst,qct_ms" >"$out/queries.csv"
echo "policy,load,burst,occ_p99_cells,drops,received" >"$out/runs.csv"
IFS=, read -r -a plist <<<"$policies"
IFS=, read -r -a llist <<<"$loads"
IFS=, read -r -a blist <<<"$bursts"
others() {  # every host but $1, as a server list
  local i s=""
  for i in $(seq 1 8); do [ "$i" = "$1" ] || s+="${s:+,}$(tb_ip "$i")"; done
  echo "$s"
}
for load in "${llist[@]}"; do
  for burst in "${blist[@]}"; do
    for policy in "${plist[@]}"; do
      echo "== E3: $policy, load $load, burst $burst of the buffer"
      tb_write_config "$TB_DIR/sw.toml" "$policy" 100Mbit "$buffer_cells cells"
      tb_start_switch "$TB_DIR/sw.toml"
      pids=()
      for h in $(seq 1 8); do
        ip netns exec "$(tb_ns_host "$h")" "$tg" server --port 5500 --duration $((seconds + 40)) 2>/dev/null &
        pids+=($!)
      done
      sleep 0.5
      tb_ctl watch interval_us=1000 --csv "$TB_DIR/watch.csv" --duration "$seconds" 2>/dev/null &
      watch_pid=$!
      gens=()
      for h in $(seq 2 8); do
        ip netns exec "$(tb_ns_host "$h")" "$tg" websearch --servers "$(others "$h")" --load "$load" \
          --link-rate 100Mbit --duration "$seconds" --timeout 30 --seed "$h" \
          --csv "$TB_DIR/bg$h.csv" >/dev/null 2>&1 &
        gens+=($!)
      done
      qbytes=$(awk -v b="$burst" -v c="$buffer_cells" 'BEGIN { printf "%d", b * c * 80 }')
      ip netns exec "$(tb_ns_host 1)" "$tg" query --servers "$(others 1)" --size "$qbytes" \
        --rate "$qrate" --duration "$seconds" --timeout 30 --csv "$TB_DIR/q.csv" >/dev/null 2>&1 &
      gens+=($!)
      for pid in "${gens[@]}"; do wait "$pid" || true; done  # failed flows are rows with ok=0
      wait "$watch_pid" || true
      for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
      for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
      tb_stop_switch || tb_die "$policy: sharebufd exited with an error"
      /usr/bin/python3 - "$TB_DIR" "$out" "$policy" "$load" "$burst" <<'PY'
import csv, glob, json, os, sys
d, out, policy, load, burst = sys.argv[1:6]
with open(f"{out}/flows.csv", "a") as f:
    for path in glob.glob(f"{d}/bg*.csv"):
        for r in csv.DictReader(open(path)):
            f.write(f"{policy},{load},{burst},{r['kind']},{r['bytes']},{r['fct_ms']},{r['ok']}\n")
        os.remove(path)
qpath = f"{d}/q.csv.queries.csv"
with open(f"{out}/queries.csv", "a") as f:
    if os.path.exists(qpath):
        for r in csv.DictReader(open(qpath)):
            f.write(f"{policy},{load},{burst},{r['qct_ms']}\n")
        os.remove(qpath)
occ = {}
for r in csv.DictReader(open(f"{d}/watch.csv")):
    occ[r["t_s"]] = int(r["total_cells"])
v = sorted(occ.values()) or [0]
s = json.load(open(f"{d}/stats.json"))
qs = [q for p in s["ports"] for q in p["queues"]]
drops = sum(sum(q["dropped"].values()) for q in qs)
with open(f"{out}/runs.csv", "a") as f:
    f.write(f"{policy},{load},{burst},{v[min(len(v) - 1, int(0.99 * len(v)))]},{drops},{sum(q['received'] for q in qs)}\n")
PY
    done
  done
done

/usr/bin/python3 - "$out" "$readme" "$TB_ROOT" "$seconds" "$qrate" <<'PY'
import csv, datetime, os, platform, statistics, sys
from collections import defaultdict
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
out, readme, root, seconds, qrate = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4], sys.argv[5]
def pct(v, p):
    v = sorted(v)
    return v[max(0, min(len(v) - 1, int(-(-p * len(v) // 1)) - 1))] if v else float("nan")
q, short, long_, runs, order = defaultdict(list), defaultdict(list), defaultdict(list), {}, []
failed = defaultdict(int)
for r in csv.DictReader(open(f"{out}/queries.csv")):
    q[(r["policy"], r["load"], r["burst"])].append(float(r["qct_ms"]))
for r in csv.DictReader(open(f"{out}/flows.csv")):
    k = (r["policy"], r["load"], r["burst"])
    if k not in order: order.append(k)
    if r["ok"] != "1":
        failed[k] += 1
    elif r["kind"] == "short":
        short[k].append(float(r["fct_ms"]))
    elif r["kind"] == "long":
        long_[k].append(int(r["bytes"]) * 8 / (float(r["fct_ms"]) / 1e3) / 1e6)
for r in csv.DictReader(open(f"{out}/runs.csv")):
    k = (r["policy"], r["load"], r["burst"])
    runs[k] = r
    if k not in order: order.append(k)
lines = ["| policy | load | burst (of B) | queries | p99 QCT | p99.9 QCT | short flows | p99 short FCT | long-flow goodput (mean) | p99 occupancy | drops | failed flows |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
rows = []
for k in order:
    p, l, b = k
    row = [p, l, b, len(q[k]), pct(q[k], 0.99), pct(q[k], 0.999), len(short[k]), pct(short[k], 0.99),
           statistics.mean(long_[k]) if long_[k] else float("nan"), int(runs[k]["occ_p99_cells"]), int(runs[k]["drops"]), failed[k]]
    rows.append(row)
    lines.append(f"| {p} | {l} | {b} | {row[3]} | {row[4]:.1f} ms | {row[5]:.1f} ms | {row[6]} | {row[7]:.1f} ms | "
                 f"{row[8]:.1f} Mbit/s | {row[9]} | {row[10]} | {row[11]} |")
with open(f"{out}/summary.csv", "w") as f:
    w = csv.writer(f)
    w.writerow(["policy", "load", "burst", "queries", "qct_p99_ms", "qct_p999_ms", "short_flows", "short_fct_p99_ms",
                "long_goodput_mbps", "occ_p99_cells", "drops", "failed_flows"])
    w.writerows(rows)
stamp = (f"Produced by `netns-scripts/e3_incast.sh` on {datetime.date.today()} ({platform.node()}, {os.cpu_count()} CPUs): "
         f"8 hosts, 100 Mbit/s, 21000 cells, one queue per port, cubic, {seconds} s per run, {qrate} queries/s, one run per cell.")
table = "\n".join(lines + ["", stamp])
open(f"{out}/summary.md", "w").write(table + "\n")
fig, ax = plt.subplots(figsize=(8, 3.5))
labels = [f"{p}\n{l}/{b}" for p, l, b in order]
ax.bar(range(len(rows)), [r[4] for r in rows], color="tab:red", label="p99 QCT")
ax.set_xticks(range(len(rows)), labels, fontsize=6)
ax.set_ylabel("ms")
ax.set_title("E3: p99 query completion time (policy, load/burst)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(f"{out}/qct_p99.png", dpi=110)
print(table)
if readme:
    import subprocess
    subprocess.run(["/usr/bin/python3", f"{root}/netns-scripts/lib/readme_section.py", f"{root}/README.md", "e3",
                    f"{out}/summary.md", f"{out}/qct_p99.png"], check=True)
PY
echo "results in $out"
