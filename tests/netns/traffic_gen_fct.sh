#!/usr/bin/env bash
# sharebuf-tg against a known shaped link: a flow of S bytes through a port shaped to R bit/s
# cannot finish faster than S*8/R (and here should not take much longer); query and websearch
# modes run and report; a connection to a closed port fails the run with the reason.
source "$(dirname "$0")/lib.sh"
tg="$TB_ROOT/build/tools/sharebuf-tg"
[ -x "$tg" ] || fail "sharebuf-tg not built"
tb_init
tb_create 2
tb_write_config "$TB_DIR/sw.toml" dt 10Mbit "21000 cells"
tb_start_switch "$TB_DIR/sw.toml"
tb_bg 2 "$tg" server --port 5500 --duration 25
sleep 0.5
tb_exec 1 "$tg" fixed --servers "$(tb_ip 2)" --flows 1 --size 1000000 --csv "$TB_DIR/f.csv" --duration 10 \
  || fail "fixed flow failed"
/usr/bin/python3 - "$TB_DIR/f.csv" <<'PY' || fail "FCT not consistent with the 10 Mbit/s port"
import csv, sys
r = next(csv.DictReader(open(sys.argv[1])))
fct = float(r["fct_ms"]) / 1e3
floor = 1_000_000 * 8 / 10e6
print(f"1 MB over 10 Mbit/s: FCT {fct:.3f} s, serialisation alone {floor:.3f} s")
assert r["ok"] == "1" and fct >= floor and fct <= 1.5 * floor + 0.3
PY
tb_exec 1 "$tg" query --servers "$(tb_ip 2)" --size 20000 --count 5 --csv "$TB_DIR/q.csv" --duration 10 \
  >"$TB_DIR/q.out" || fail "query mode failed"
grep -q "^qct " "$TB_DIR/q.out" || fail "no query completion times"
[ "$(wc -l <"$TB_DIR/q.csv.queries.csv")" -eq 6 ] || fail "expected 5 queries"
# Flows of 1-100 KB (mean ~50 KB) so that a few seconds at 10 Mbit/s hold about twenty.
printf '1000 0\n100000 1\n' >"$TB_DIR/cdf.txt"
tb_exec 1 "$tg" websearch --servers "$(tb_ip 2)" --load 0.3 --link-rate 10Mbit --duration 3 --timeout 20 \
  --cdf "$TB_DIR/cdf.txt" --csv "$TB_DIR/w.csv" >"$TB_DIR/w.out" || fail "websearch mode failed"
[ "$(wc -l <"$TB_DIR/w.csv")" -ge 6 ] || fail "websearch made fewer than 5 flows"
if tb_exec 1 "$tg" fixed --servers "$(tb_ip 2):5999" --flows 1 --size 1000 2>"$TB_DIR/err.out"; then
  fail "a flow to a closed port succeeded"
fi
grep -q "Connection refused" "$TB_DIR/err.out" || fail "the failure does not say why: $(cat "$TB_DIR/err.out")"
cat "$TB_DIR/q.out" "$TB_DIR/w.out"
echo PASS
