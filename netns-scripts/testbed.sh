#!/usr/bin/env bash
# Build a star testbed, run sharebufd on it, and keep it until Ctrl-C (or for --seconds).
#   netns-scripts/testbed.sh [--hosts N] [--policy NAME] [--rate RATE] [--size SIZE]
#                            [--cc cubic|reno|bbr|dctcp] [--ecn 0|1] [--rto-min 200ms]
#                            [--config FILE] [--seconds S]
# Prints how to reach the hosts; tears everything down on exit.
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
# shellcheck source=../scripts/testbed.sh
source "$(dirname "$0")/../scripts/testbed.sh"

hosts=3 policy=dt rate=100Mbit size="21000 cells" cc=cubic ecn=0 rto=200ms config="" seconds=0
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --policy) policy=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --cc) cc=$2; shift 2 ;;
    --ecn) ecn=$2; shift 2 ;;
    --rto-min) rto=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "testbed.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
tb_init
tb_create "$hosts" "$cc" "$ecn" "$rto"
if [ -z "$config" ]; then
  config="$TB_DIR/switch.toml"
  tb_write_config "$config" "$policy" "$rate" "$size"
fi
tb_start_switch "$config"
echo "testbed $TB_PREFIX is up: hosts $(for i in $(seq 1 "$hosts"); do printf '%s=%s ' "$(tb_ns_host "$i")" "$(tb_ip "$i")"; done)"
echo "run commands with: ip netns exec $(tb_ns_host 1) ping $(tb_ip 2)"
echo "switch log: $TB_DIR/sharebufd.log"
if [ "$seconds" -gt 0 ]; then sleep "$seconds"; else
  echo "Ctrl-C to tear down"
  while kill -0 "$TB_SWITCH_PID" 2>/dev/null; do sleep 1; done
fi
