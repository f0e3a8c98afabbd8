#!/usr/bin/env bash
# E4 (docs/experiments/e4-credence.md): Credence against LQD in replay. Replays the adversarial patterns of the
# Credence paper's Figures 3 and 4 and a datacenter trace (the web-search generator with incast
# queries, seed 2 — the shipped model was trained on seed 1 — or a recorded pcap) under CS, DT,
# LQD, FollowLQD, Credence with perfect predictions (with and without the safeguard), with the
# trained forest, and with perfect predictions flipped at 0.001 / 0.01 / 0.1; counts transmitted
# packets and writes CSV, Markdown and a PNG into the output folder.
# Events within one instant: departures first (sharebuf-replay's default), or with
# --order arrivals-first the order of the Credence paper's slotted model.
#   experiments/e4_credence.sh [--out DIR] [--build DIR] [--pcap FILE@PORT... --config FILE]
#                              [--order departures-first|arrivals-first]
#                              [--readme]    (--readme also updates the E4 page's section)
set -euo pipefail
# shellcheck source=../scripts/usage.sh
source "$(dirname "$0")/../scripts/usage.sh"
cd "$(dirname "$0")/.."
out=results/e4 build=build readme=0 pcap_args=() config="" order=departures-first
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --pcap) pcap_args+=(--pcap "$2"); shift 2 ;;
    --config) config=$2; shift 2 ;;
    --order) order=$2; shift 2 ;;
    --readme) readme=1; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "e4_credence.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
replay="$build/sim/sharebuf-replay"
[ -x "$replay" ] || { echo "e4_credence.sh: $replay not built (./run.sh build)" >&2; exit 1; }
mkdir -p "$out"

# shellcheck disable=SC2054 # the commas separate a policy spec's parameters, not elements
policies=(
  --order "$order"
  --policies cs,dt,lqd
  --policy "FollowLQD=credence:oracle=none"
  --policy "perfect=credence:oracle=perfect"
  --policy "perfect-nosafeguard=credence:oracle=perfect,safeguard=false"
  --policy "forest=credence:oracle=forest"
  --policy "flip-0.001=credence:oracle=flip,flip_base=perfect,flip_probability=0.001"
  --policy "flip-0.01=credence:oracle=flip,flip_base=perfect,flip_probability=0.01"
  --policy "flip-0.1=credence:oracle=flip,flip_base=perfect,flip_probability=0.1"
)
"$replay" --scenario credence-fig3 "${policies[@]}" --json \
  --effective-config "$out/effective-fig3.toml" >"$out/fig3.json"
"$replay" --scenario credence-fig4 "${policies[@]}" --json \
  --effective-config "$out/effective-fig4.toml" >"$out/fig4.json"
"$replay" --scenario websearch --seed 2 --duration-ms 200 "${policies[@]}" --json \
  --effective-config "$out/effective-websearch.toml" >"$out/websearch.json"
inputs=(fig3 fig4 websearch)
if [ ${#pcap_args[@]} -gt 0 ]; then
  [ -n "$config" ] || { echo "e4_credence.sh: --pcap needs --config" >&2; exit 2; }
  "$replay" "${pcap_args[@]}" --config "$config" "${policies[@]}" --json \
    --effective-config "$out/effective-recorded.toml" >"$out/recorded.json"
  inputs+=(recorded)
fi

/usr/bin/python3 experiments/lib/e4_report.py "$out" "$readme" "$order" "${inputs[@]}"
