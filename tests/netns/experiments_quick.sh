#!/usr/bin/env bash
# Every live experiment script's quick mode runs end to end and writes its output files:
# E1 (DT vs Protean with probe sync) and E2 (DT vs FB), one repetition each, E3 (DT,
# one load, 3 s), E5 (two rounds, both sync modes), E6 (10 s of switching), the live-vs-replay
# agreement (E1, DT), and the iperf3 incast. Each script builds and tears down its own testbed.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: netns tests need root"
  exit 77
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
need() { for f in "$@"; do [ -s "$f" ] || { echo "FAIL: $f missing"; exit 1; }; done; }

bash "$root/experiments/e1_protean.sh" --quick --policies "dt;protean:sync=probe" --out "$out/e1" >"$out/e1.log" 2>&1 \
  || { tail -20 "$out/e1.log"; echo "FAIL: e1"; exit 1; }
need "$out"/e1/{flows.csv,runs.csv,summary.csv,summary.md,fct_cdf.png,fct_p99.png,timeline-dt.png,timeline-protean+sync=probe.png}
[ "$(grep -c '^dt,' "$out/e1/flows.csv")" -eq 100 ] || { echo "FAIL: e1 dt does not have 100 flows"; exit 1; }

bash "$root/experiments/e2_fb.sh" --quick --policies dt,fb --out "$out/e2" >"$out/e2.log" 2>&1 \
  || { tail -20 "$out/e2.log"; echo "FAIL: e2"; exit 1; }
need "$out"/e2/{flows.csv,runs.csv,summary.md,fct_cdf.png,timeline-dt.png,timeline-fb.png}

bash "$root/experiments/e3_incast.sh" --quick --out "$out/e3" >"$out/e3.log" 2>&1 \
  || { tail -20 "$out/e3.log"; echo "FAIL: e3"; exit 1; }
need "$out"/e3/{flows.csv,queries.csv,runs.csv,summary.csv,summary.md,qct_p99.png,qct_cdf.png,timeline-single-cubic-dt-0.5.png,timeline-multi-cubic-dt-0.5.png}

bash "$root/experiments/e6_live_reconfig.sh" --quick --out "$out/e6" >"$out/e6.log" 2>&1 \
  || { tail -20 "$out/e6.log"; echo "FAIL: e6"; exit 1; }
need "$out"/e6/{switches.csv,watch.csv,summary.md}

bash "$root/experiments/e5_smartbuf.sh" --quick --rounds 2 --fan-ins 16,32 --out "$out/e5" >"$out/e5.log" 2>&1 \
  || { tail -20 "$out/e5.log"; echo "FAIL: e5"; exit 1; }
need "$out"/e5/{cs_demand.csv,smartbuf_bursts.csv,summary.md,prediction.png,smartbuf_state-dequeue.json,smartbuf_state-probe.json}
grep -q '"sync": "probe"' "$out/e5/smartbuf_state-probe.json" || { echo "FAIL: e5 probe phase ran without sync = probe"; exit 1; }

bash "$root/experiments/live_vs_replay.sh" --experiments e1 --policies dt --warmup 1 --out "$out/agreement" \
  >"$out/agreement.log" 2>&1 || { tail -20 "$out/agreement.log"; echo "FAIL: live_vs_replay"; exit 1; }
need "$out"/agreement/{rows.csv,agreement.md}
[ "$(grep -c '^e1,dt,' "$out/agreement/rows.csv")" -ge 2 ] || { echo "FAIL: agreement has no rows for e1 dt"; exit 1; }

bash "$root/netns-scripts/iperf_incast.sh" --senders 4 --bytes 1M --out "$out/incast" >"$out/incast.log" 2>&1 \
  || { tail -20 "$out/incast.log"; echo "FAIL: iperf incast"; exit 1; }
grep -q "started within" "$out/incast.log" || { echo "FAIL: incast did not report its start spread"; exit 1; }
need "$out"/incast/{c1.json,c4.json,stats.json}
cat "$out/e1/summary.md" "$out/e2/summary.md" "$out/e6/summary.md" "$out/e5/summary.md" "$out/agreement/agreement.md"
grep -E "started within|total" "$out/incast.log"
echo PASS
