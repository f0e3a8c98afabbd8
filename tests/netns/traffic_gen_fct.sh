#!/usr/bin/env bash
# sharebuf-tg against a known shaped link: a flow of S bytes through a port shaped to R bit/s
# cannot finish faster than S*8/R (and here should not take much longer); query mode runs closed
# loop with --count and open loop with --rate (queries overlap); websearch runs and reports; a schedule runs its flows at their times and its queries as one; a connection to a closed port fails the run with the reason.
source "$(dirname "$0")/lib.sh"
tg="$TB_ROOT/build/tools/sharebuf-tg"
[ -x "$tg" ] || fail "sharebuf-tg not built"
tb_init
tb_create 2
tb_write_config "$TB_DIR/sw.toml" dt 10Mbit "21000 cells"
tb_start_switch "$TB_DIR/sw.toml"
tb_bg 2 "$tg" server --port 5500 --duration 40
sleep 0.5
tb_exec 1 "$tg" fixed --servers "$(tb_ip 2)" --flows 1 --size 1000000 --csv "$TB_DIR/f.csv" --duration 10 \
  || fail "fixed flow failed"
netns_check fixed-fct "$TB_DIR/f.csv" || fail "FCT not consistent with the 10 Mbit/s port"
tb_exec 1 "$tg" query --servers "$(tb_ip 2)" --size 20000 --count 5 --csv "$TB_DIR/q.csv" --duration 10 \
  >"$TB_DIR/q.out" || fail "query mode failed"
grep -q "^qct " "$TB_DIR/q.out" || fail "no query completion times"
[ "$(wc -l <"$TB_DIR/q.csv.queries.csv")" -eq 6 ] || fail "expected 5 queries"
# Open loop: 10 queries/s of 250 KB for 2 s is twice what the 10 Mbit/s port carries, so queries
# overlap. A closed loop (each query after the last) would fit at most 11 (0.2 s of link time
# each); open loop starts every Poisson arrival (about 20), and with a pool of 2 connections per
# server the overlapping ones open more.
tb_exec 1 "$tg" query --servers "$(tb_ip 2)" --size 250000 --rate 10 --pool 2 --duration 2 --timeout 20 \
  --seed 3 --csv "$TB_DIR/o.csv" >"$TB_DIR/o.out" || fail "open-loop query mode failed"
netns_check open-loop "$TB_DIR/o.csv" || fail "queries did not arrive open-loop"
grep -q "opened one" "$TB_DIR/o.out" || fail "overlapping queries did not open connections beyond the pool"
# Flows of 1-100 KB (mean ~50 KB) so that a few seconds at 10 Mbit/s hold about twenty.
printf '1000 0\n100000 1\n' >"$TB_DIR/cdf.txt"
tb_exec 1 "$tg" websearch --servers "$(tb_ip 2)" --load 0.3 --link-rate 10Mbit --duration 3 --timeout 20 \
  --cdf "$TB_DIR/cdf.txt" --csv "$TB_DIR/w.csv" >"$TB_DIR/w.out" || fail "websearch mode failed"
[ "$(wc -l <"$TB_DIR/w.csv")" -ge 6 ] || fail "websearch made fewer than 5 flows"
# A schedule (another engine's arrivals): flows at their times on new connections, two rows of
# query 7 making one query; a bad row is refused with its line.
srv="$(tb_ip 2):5500"
printf 'start_ms,kind,query,server,bytes\n0,short,-1,%s,20000\n300,query,7,%s,50000\n300,query,7,%s,50000\n600,long,-1,%s,200000\n' \
  "$srv" "$srv" "$srv" "$srv" >"$TB_DIR/sched.csv"
tb_exec 1 "$tg" schedule --file "$TB_DIR/sched.csv" --timeout 20 --csv "$TB_DIR/s.csv" \
  --start-at "$(date +%s.%N | awk '{ printf "%.3f", $1 + 0.5 }')" >"$TB_DIR/s.out" || fail "schedule mode failed"
netns_check schedule "$TB_DIR/sched.csv" "$TB_DIR/s.csv" || fail "the schedule did not run as listed"
# --pool: the query's responses on connections opened before the clock (no handshake in them).
tb_exec 1 "$tg" schedule --file "$TB_DIR/sched.csv" --pool 2 --timeout 20 --csv "$TB_DIR/sp.csv" \
  >"$TB_DIR/sp.out" || fail "schedule mode with --pool failed"
[ "$(awk -F, '$2 == "query" && $9 == 0' "$TB_DIR/sp.csv" | wc -l)" -eq 2 ] \
  || fail "pooled query responses timed a handshake: $(cat "$TB_DIR/sp.csv")"
[ "$(wc -l <"$TB_DIR/sp.csv.queries.csv")" -eq 2 ] || fail "the pooled query did not complete"
printf 'start_ms,kind,query,server,bytes\n0,short,-1,%s,0\n' "$srv" >"$TB_DIR/bad.csv"
if tb_exec 1 "$tg" schedule --file "$TB_DIR/bad.csv" 2>"$TB_DIR/bad.out"; then fail "a 0-byte row was run"; fi
grep -q "bad.csv:2: bytes" "$TB_DIR/bad.out" || fail "the bad row is not named: $(cat "$TB_DIR/bad.out")"
if tb_exec 1 "$tg" fixed --servers "$(tb_ip 2):5999" --flows 1 --size 1000 2>"$TB_DIR/err.out"; then
  fail "a flow to a closed port succeeded"
fi
grep -q "Connection refused" "$TB_DIR/err.out" || fail "the failure does not say why: $(cat "$TB_DIR/err.out")"
cat "$TB_DIR/q.out" "$TB_DIR/o.out" "$TB_DIR/w.out" "$TB_DIR/s.out"
echo PASS
