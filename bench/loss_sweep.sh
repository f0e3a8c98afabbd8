#!/usr/bin/env bash
# Loss against offered rate, 64-byte frames: how much of what the source sends each switch
# delivers, rate by rate, up to as fast as the source can go. For sharebufd also where the lost
# frames went: RX ring drops and TX errors (not the policy's decisions) and the policy's drops
# (none with cs and an idle buffer). Each rate runs for --seconds; the source is
# sharebuf-blaster (one thread, sendmmsg on AF_PACKET, EtherType 0x88b5 so the receiver's kernel
# discards the frames at once), pinned to no CPU, sharing the 2 cores with the switch.
# Writes docs/measurements/loss-sweep-results.md and .jsonl; --report NAME writes
# docs/measurements/NAME.md and .jsonl instead, to keep the recorded run; what each switch ran
# (sharebufd's effective configurations) goes into the folder of that name. The table's "not
# counted" column: frames sent that neither arrived nor were counted by sharebufd.
#   bench/loss_sweep.sh [--build DIR] [--seconds S] [--rates K,K,...] [--only NAME[,NAME]]
#                       [--report NAME]
# --rates: offered rates in kpps, 0 meaning as fast as the source can (default
# 200,400,600,800,1000,1200,0); NAMEs as in bench/lib/switches.sh (default sharebufd,bridge).
# Needs root and ./run.sh build.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../scripts/testbed.sh
source "$here/../scripts/testbed.sh"
# shellcheck source=lib/switches.sh
source "$here/lib/switches.sh"
# shellcheck source=lib/host_counters.sh
source "$here/lib/host_counters.sh"

cmdline="$*"
build=$TB_ROOT/build seconds=3 rates="200,400,600,800,1000,1200,0" only="sharebufd,bridge" report=loss-sweep-results
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --report)
      [[ ${2:-} =~ ^[a-z0-9][a-z0-9-]*$ ]] || { echo "--report: a file name (a-z, 0-9, -), written into docs/measurements/" >&2; exit 2; }
      report=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "loss_sweep.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
export SHAREBUFD=$build/mgmt/sharebufd SHAREBUFCTL=$build/mgmt/sharebufctl
blaster=$build/tools/sharebuf-blaster
[ -x "$blaster" ] || { echo "build first: ./run.sh build" >&2; exit 1; }

tb_init
tb_create 2 cubic 0 200ms
results="$TB_DIR/results.jsonl"
# What each switch ran, beside the table (bench_stop_switch writes it).
bench_keep_in "$here/../docs/measurements/$report"
: >"$results"


IFS=, read -r -a switches <<<"$only"
IFS=, read -r -a kpps_list <<<"$rates"
for name in "${switches[@]}"; do
  tb_log "== $name"
  bench_start_switch "$name"
  for kpps in "${kpps_list[@]}"; do
    [[ $name == sharebufd* ]] && tb_ctl counters.reset >/dev/null
    before=$(rx_packets)
    busy0=$(busy_jiffies)
    blast=$(tb_exec 1 "$blaster" --interface eth0 --dst-mac "$(tb_mac 2)" --src-ip "$(tb_ip 1)" \
      --dst-ip "$(tb_ip 2)" --ethertype 0x88b5 --seconds "$seconds" --pps $((kpps * 1000)))
    busy1=$(busy_jiffies)
    sleep 0.3
    after=$(rx_packets)
    ports="[]" queues="[]"
    if [[ $name == sharebufd* ]]; then
      ports=$(tb_ctl --json ports)
      queues=$(tb_ctl --json queues)
    fi
    /usr/bin/python3 "$here/lib/loss_sweep_report.py" row "$name" "$(bench_switch_label "$name")" \
      "$kpps" "$blast" "$((after - before))" "$((busy1 - busy0))" "$(getconf CLK_TCK)" \
      "$ports" "$queues" >>"$results"
    tail -1 "$results" >&2
  done
  bench_stop_switch "$name"
done
cp "$results" "$here/../docs/measurements/$report.jsonl"
/usr/bin/python3 "$here/lib/loss_sweep_report.py" table "$results" "$seconds" --args="$cmdline" \
  >"$here/../docs/measurements/$report.md"
cat "$here/../docs/measurements/$report.md"
