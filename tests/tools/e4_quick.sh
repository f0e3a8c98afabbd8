#!/usr/bin/env bash
# E4 runs in a second (replay): run it whole and require its outputs and every expectation.
set -euo pipefail
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$root/experiments/e4_credence.sh" --build "$build" --out "$out" >"$out/log" || { cat "$out/log"; exit 1; }
for f in e4.csv e4.md e4.png fig3.json fig4.json websearch.json; do
  [ -s "$out/$f" ] || { echo "FAIL: $f missing"; exit 1; }
done
if grep -q '\*\*no\*\*' "$out/e4.md"; then
  grep '\*\*no\*\*' "$out/e4.md"
  echo "FAIL: an E4 expectation does not hold"
  exit 1
fi
echo "PASS: $(grep -c '| yes |' "$out/e4.md") expectations hold"
