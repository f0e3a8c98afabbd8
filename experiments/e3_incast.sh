#!/usr/bin/env bash
# E3 (docs/experiments/e3-incast.md): incast under web-search background load. 8 hosts around sharebufd, ports
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
#   experiments/e3_incast.sh [--out DIR] [--seconds 15] [--reps 2] [--queues single,multi]
#       [--transport cubic] [--loads 0.4,0.8] [--bursts 0.5] [--query-rate 2]
#       [--policies dt,cs,protean,fb,credence,lqd] [--record] [--full] [--quick] [--readme]
#       [--tag e3]
# A policy is NAME or NAME:KEY=VALUE[+KEY=VALUE...] (e.g. ib:variant=as-coded), named in the tables
# as written. --readme writes the page section TAG (e3 by default; e3-baselines, e3ecn) and keeps
# the runs' files it was made from under docs/runs/e3/TAG (tests/python/test_results_pages.py).
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
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"
out=results/e3 seconds=15 reps=2 queues=single,multi transports=cubic loads=0.4,0.8 bursts=0.5
policies=dt,cs,protean,fb,credence,lqd qrate=2 readme=0 record=0 tag=e3
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
    --tag) tag=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
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
# A policy entry's parameters as TOML lines: NAME:k=v+k2=v2 -> k = v, k2 = "v2" (numbers and
# booleans bare, anything else quoted), after any the caller set in TB_POLICY_PARAMS.
policy_params() {  # ENTRY
  local kv k v
  [ -z "${TB_POLICY_PARAMS:-}" ] || printf '%s\n' "$TB_POLICY_PARAMS"
  [[ "$1" == *:* ]] || return 0
  IFS=+ read -r -a kv <<<"${1#*:}"
  for k in "${kv[@]}"; do
    v=${k#*=} k=${k%%=*}
    if [[ "$v" =~ ^-?[0-9]+(\.[0-9]+)?$ || "$v" == true || "$v" == false ]]; then
      echo "$k = $v"
    else
      echo "$k = \"$v\""
    fi
  done
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
            TB_POLICY_PARAMS=$(policy_params "$policy") \
              tb_write_config "$TB_DIR/sw.toml" "${policy%%:*}" "$rate" "$buffer_cells cells" "$nq" "$(classes "$qmode" "$transport")"
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
              cp "$TB_DIR/watch.csv" "$out/watch-$qmode-$transport-${policy//[:=+]/-}-$burst.csv"
              tb_keep_effective "$out/effective-$qmode-$transport-${policy//[:=+]/-}-$burst.toml"
            fi
            /usr/bin/python3 "$TB_ROOT/experiments/lib/e3_report.py" collect "$TB_DIR" "$out" \
              "$qmode,$transport,$policy,$load,$burst,$rep"
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
  echo "== E4 on the recorded trace ($(jq .frames "$out/trace/capture.json") frames)"
  "$TB_ROOT/experiments/e4_credence.sh" --out "$out/e4" "${pcaps[@]}" --config "$out/trace/sw.toml" | tail -25
fi
/usr/bin/python3 "$TB_ROOT/experiments/lib/e3_report.py" report "$out" "$readme" "$seconds" "$qrate" "$reps" \
  --tag "$tag"
echo "results in $out"
