#!/usr/bin/env bash
# sharebuf-sim's web-search workload: 4 senders into 2 receivers at load 0.4 for 80 ms (DCTCP,
# DT): flows start and complete, short and long flows are reported, and the run is
# deterministic: the same arguments give byte-identical flow CSVs and summaries, and another
# seed gives different flows.
set -euo pipefail
sim=${SHAREBUF_SIM:?SHAREBUF_SIM: the sharebuf-sim binary}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '[buffer]\nsize = "3000 cells"\ncell_bytes = 80\n[policy]\nname = "dt"\n[[classes]]\nname = "x"\necn_threshold = "30KB"\n' \
  >"$dir/sw.toml"
args=(--switch-config="$dir/sw.toml" --senders=4 --receivers=2 --link-rate=10Gbps --delay=5us
      --workload=websearch --load=0.4 --duration=0.08 --transport=dctcp)
"$sim" --quiet "${args[@]}" --seed=1 --flows-csv="$dir/a.csv" >"$dir/a.json"
"$sim" --quiet "${args[@]}" --seed=1 --flows-csv="$dir/b.csv" >"$dir/b.json"
"$sim" --quiet "${args[@]}" --seed=2 --flows-csv="$dir/c.csv" >"$dir/c.json"
cmp -s "$dir/a.csv" "$dir/b.csv" || { echo "FAIL: the same seed gave different flows"; exit 1; }
cmp -s "$dir/a.json" "$dir/b.json" || { echo "FAIL: the same seed gave different summaries"; exit 1; }
! cmp -s "$dir/a.csv" "$dir/c.csv" || { echo "FAIL: another seed gave the same flows"; exit 1; }
/usr/bin/python3 - "$dir/a.json" "$dir/a.csv" <<'PY'
import csv, json, sys
s = json.load(open(sys.argv[1]))["flows"]
rows = list(csv.DictReader(open(sys.argv[2])))
print(f"flows {s['flows']}, completed {s['completed']}, short {s['short']} "
      f"(p99 FCT {s['short_fct_ms']['p99']:.3f} ms), long {s['long']} "
      f"({s['long_goodput_gbps']:.2f} Gbit/s mean goodput)")
ok = (s["flows"] == len(rows) > 50 and s["completed"] >= 0.8 * s["flows"] and s["short"] > 0
      and s["long"] > 0 and s["short_fct_ms"]["p99"] > 0)
print("ok   web-search flows complete and are reported" if ok else "FAIL web-search summary")
sys.exit(0 if ok else 1)
PY
echo "ok   deterministic: same seed, same bytes; another seed, other flows"
