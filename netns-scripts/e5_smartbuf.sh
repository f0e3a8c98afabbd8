#!/usr/bin/env bash
# E5 (EXPERIMENTS.md): Smartbuf's demand prediction. Partition-aggregate queries of several
# fan-ins (N parallel responses of SIZE/N bytes from h2 into h1's port, sharebuf-tg query) run
# twice: first under CS with a buffer large enough never to drop, where the queue's peak (counters
# reset before each query) is the demand each burst reaches; then under Smartbuf with the
# experiment's buffer, where the policy's burst log (policy.get) records, per burst, the demand it
# predicted and the peak it saw. Reports
# the prediction error per burst against the CS demand of the same fan-in (paper: within 9 % of
# the ideal, 6 % on average). Every fan-in runs --rounds times in each phase (the repetitions).
# The Smartbuf phase runs once per --syncs mode: dequeue (the paper's algorithm, learning at every
# dequeue) and probe (learning from the probe registers once per probe interval, Tofino-style).
# Writes cs_demand.csv, smartbuf_bursts.csv, smartbuf_state-<sync>.json, summary.md and
# prediction.png.
#   netns-scripts/e5_smartbuf.sh [--out DIR] [--fan-ins 16,32,48] [--rounds 6] [--size 1000000]
#                                [--buffer 21000] [--syncs dequeue,probe] [--quick] [--readme]
set -euo pipefail
# shellcheck source=lib/testbed.sh
source "$(dirname "$0")/lib/testbed.sh"
out=results/e5 fanins=16,32,48 rounds=6 size=1000000 buffer=21000 readme=0 syncs=dequeue,probe
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --fan-ins) fanins=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --buffer) buffer=$2; shift 2 ;;
    --syncs) syncs=$2; shift 2 ;;
    --quick) rounds=3; shift ;;
    --readme) readme=1; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "e5_smartbuf.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
out=$(tb_out_dir "$out")
tg=$(tb_tg) || exit 1
IFS=, read -r -a fan <<<"$fanins"
IFS=, read -r -a sync_modes <<<"$syncs"
tb_init
tb_create 2

servers_for() {  # N connections to the server on h2
  local i s=""
  for i in $(seq 1 "$1"); do s+="${s:+,}$(tb_ip 2)"; done
  echo "$s"
}

# Phase 1: CS, a buffer that never fills: the demand each fan-in's burst reaches.
echo "fan_in,round,demand_cells" >"$out/cs_demand.csv"
tb_write_config "$TB_DIR/sw.toml" cs 100Mbit "400000 cells"
tb_start_switch "$TB_DIR/sw.toml"
ip netns exec "$(tb_ns_host 2)" "$tg" server --port 5500 --duration 600 2>/dev/null &  # not tb_exec: $! must be the server itself
srv=$!
for r in $(seq 1 "$rounds"); do
  for f in "${fan[@]}"; do
    tb_ctl counters.reset >/dev/null
    tb_exec 1 "$tg" query --servers "$(servers_for "$f")" --size "$size" --count 1 --timeout 20 >/dev/null \
      || tb_die "query fan-in $f failed under CS"
    peak=$(tb_ctl --json queues | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["peak_cells"])')
    echo "$f,$r,$peak" >>"$out/cs_demand.csv"
    sleep 0.3
  done
done
kill "$srv" 2>/dev/null || true
wait "$srv" 2>/dev/null || true
tb_stop_switch || tb_die "sharebufd (cs) failed"

# Phase 2: Smartbuf, the experiment's buffer, once per sync mode; its burst log says what it
# predicted.
echo "sync,fan_in,round,burst,predicted_cells,peak_cells" >"$out/smartbuf_bursts.csv"
for sync in "${sync_modes[@]}"; do
  TB_POLICY_PARAMS="sync = \"$sync\"" tb_write_config "$TB_DIR/sw.toml" smartbuf 100Mbit "$buffer cells"
  tb_start_switch "$TB_DIR/sw.toml"
  ip netns exec "$(tb_ns_host 2)" "$tg" server --port 5500 --duration 600 2>/dev/null &  # not tb_exec: $! must be the server itself
  srv=$!
  seen=0
  for r in $(seq 1 "$rounds"); do
    for f in "${fan[@]}"; do
      tb_exec 1 "$tg" query --servers "$(servers_for "$f")" --size "$size" --count 1 --timeout 20 >/dev/null \
        || echo "query fan-in $f round $r lost flows under smartbuf sync=$sync (counted by the switch)"
      sleep 0.3
      tb_ctl --json policy.get >"$TB_DIR/pol.json"
      seen=$(/usr/bin/python3 - "$TB_DIR/pol.json" "$seen" "$f" "$r" "$out/smartbuf_bursts.csv" "$sync" <<'PY'
import json, sys
pol, seen, f, r, out, sync = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
bursts = pol["state"]["bursts"]
with open(out, "a") as o:
    for i, b in enumerate(bursts[seen:], start=seen):
        o.write(f"{sync},{f},{r},{i},{b['predicted_cells']},{b['peak_cells']}\n")
print(len(bursts))
PY
)
    done
  done
  tb_ctl --json policy.get >"$out/smartbuf_state-$sync.json"
  kill "$srv" 2>/dev/null || true
  wait "$srv" 2>/dev/null || true
  tb_stop_switch || tb_die "sharebufd (smartbuf sync=$sync) failed"
done

/usr/bin/python3 - "$out" "$buffer" <<'PY'
import csv, datetime, os, platform, statistics, sys
out, B = sys.argv[1], int(sys.argv[2])
demand = {}
for r in csv.DictReader(open(f"{out}/cs_demand.csv")):
    demand.setdefault(r["fan_in"], []).append(int(r["demand_cells"]))
rows = list(csv.DictReader(open(f"{out}/smartbuf_bursts.csv")))
syncs = list(dict.fromkeys(r["sync"] for r in rows))
lines = ["| sync | fan-in | CS demand (median cells) | bursts | predicted (real phase) | mean error | max error |",
         "|---|---|---|---|---|---|---|"]
summary = []
for sync in syncs:
    all_err = []
    for f, d in demand.items():
        ideal = statistics.median(d)
        bs = [r for r in rows if r["fan_in"] == f and r["sync"] == sync]
        pred = [int(r["predicted_cells"]) for r in bs if int(r["predicted_cells"]) > 0]
        err = [abs(p - ideal) / ideal for p in pred]
        all_err += err
        lines.append(f"| {sync} | {f} | {ideal:.0f} | {len(bs)} | {len(pred)} | "
                     + (f"{100 * statistics.mean(err):.1f} % | {100 * max(err):.1f} % |" if err else "— | — |"))
    summary.append(f"sync = {sync}: {len(all_err)} predictions, mean error "
                   + (f"{100 * statistics.mean(all_err):.1f} %, max {100 * max(all_err):.1f} %." if all_err else "none (Smartbuf never left its learning phase: no burst exceeded B/sigma or fewer than k were learned)."))
lines.append("")
lines.append("Over all predicted bursts: " + " ".join(summary)
             + f" Buffer {B} cells; Smartbuf defaults (k 3, sigma 5, beta 0.5). Paper: within 9 %, 6 % on average.")
lines.append(f"Produced by `netns-scripts/e5_smartbuf.sh` on {datetime.date.today()} ({platform.node()}, {os.cpu_count()} CPUs).")
open(f"{out}/summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, axes = plt.subplots(1, len(syncs), figsize=(6 * len(syncs), 4), squeeze=False, sharey=True)
for ax, sync in zip(axes[0], syncs):
    for i, (f, d) in enumerate(demand.items()):
        ideal = statistics.median(d)
        color = f"C{i}"
        ax.axhline(ideal, color=color, ls="--", lw=1)
        pred = [(int(r["burst"]), int(r["predicted_cells"])) for r in rows
                if r["fan_in"] == f and r["sync"] == sync and int(r["predicted_cells"]) > 0]
        ax.scatter([b for b, _ in pred], [p for _, p in pred], color=color, s=14, label=f"fan-in {f}: predicted (dashed: CS demand)")
    ax.set_xlabel("burst (in Smartbuf's burst log)")
    ax.set_ylabel("cells")
    ax.set_title(f"E5: Smartbuf (sync = {sync}) predicted vs CS demand")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(f"{out}/prediction.png", dpi=110)
PY
if [ "$readme" = 1 ]; then
  /usr/bin/python3 "$TB_ROOT/netns-scripts/lib/doc_section.py" e5 "$out/summary.md" \
    "$out/prediction.png"
fi
echo "results in $out"
