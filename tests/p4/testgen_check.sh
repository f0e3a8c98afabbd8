#!/usr/bin/env bash
# The P4 twins' logic against the software (ctest label `p4testgen`): p4testgen's paths through
# dt.p4 on its generated entries must decide as the switch model and the policy do
# (tests/p4/testgen_check.py), and a copy of dt.p4 whose admission is inverted (admit iff Q >= T)
# must be caught. Skipped (exit 77, with the reason) where p4testgen is not built.
# Takes about 4 minutes (p4testgen runs in narrowed domains: dt.p4 twice, fb.p4 once).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tables=${SHAREBUF_P4TABLES:?SHAREBUF_P4TABLES: the sharebuf-p4tables binary}
decide=${SHAREBUF_P4_DECIDE:?SHAREBUF_P4_DECIDE: the sharebuf-p4-path-decide binary}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
check() { /usr/bin/python3 "$root/tests/p4/testgen_check.py" --p4tables "$tables" --decide "$decide" "$@"; }

rc=0
check --program dt --max-tests "${TESTGEN_PATHS:-200}" --work "$dir/dt" || rc=$?
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 0 ] || { echo "FAIL dt.p4"; exit 1; }

mkdir -p "$dir/inverted"
cp -r "$root/p4/include" "$dir/inverted/"
sed 's/if (md.below\[31:31\] == 0) {/if (md.below[31:31] == 1) {/' "$root/p4/dt.p4" \
  >"$dir/inverted/dt.p4"
if cmp -s "$root/p4/dt.p4" "$dir/inverted/dt.p4"; then
  echo "FAIL the inverted copy of dt.p4 is unchanged (the check could not fail)"
  exit 1
fi
check --program dt --source "$dir/inverted/dt.p4" --max-tests "${TESTGEN_PATHS:-200}" \
  --work "$dir/inverted-run" --expect-mismatch || { echo "FAIL the inverted dt.p4 was not caught"; exit 1; }

# fb.p4: its Shift table (exact entries by class and counts) makes p4testgen slower: 100 paths,
# about 3.5 minutes.
check --program fb --max-tests "${TESTGEN_FB_PATHS:-100}" --work "$dir/fb" || { echo "FAIL fb.p4"; exit 1; }
