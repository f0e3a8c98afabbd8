#!/usr/bin/env bash
# The P4 twins' logic against the software (ctest label `p4testgen`): p4testgen's paths through
# dt.p4, fb.p4 and protean.p4 on their generated entries must decide as the switch model and the
# policy do (tests/p4/testgen_check.py), and copies of dt.p4 and protean.p4 whose admission is
# inverted (admit iff Q >= T) must be caught. Skipped (exit 77, with the reason) where p4testgen
# is not built. Takes about 5 minutes (p4testgen runs in narrowed domains).
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

# A copy of PROGRAM.p4 whose admission is inverted (admit iff Q >= T) must be caught.
inverted() {
  local program=$1 paths=$2
  mkdir -p "$dir/inverted-$program"
  cp -r "$root/p4/include" "$dir/inverted-$program/"
  sed 's/if (md.below\[31:31\] == 0) {/if (md.below[31:31] == 1) {/' "$root/p4/$program.p4" \
    >"$dir/inverted-$program/$program.p4"
  if cmp -s "$root/p4/$program.p4" "$dir/inverted-$program/$program.p4"; then
    echo "FAIL the inverted copy of $program.p4 is unchanged (the check could not fail)"
    exit 1
  fi
  check --program "$program" --source "$dir/inverted-$program/$program.p4" --max-tests "$paths" \
    --work "$dir/inverted-$program-run" --expect-mismatch ||
    { echo "FAIL the inverted $program.p4 was not caught"; exit 1; }
}
inverted dt "${TESTGEN_PATHS:-200}"

# fb.p4: its Shift table (exact entries by class and counts) makes p4testgen slower: 100 paths,
# about 3.5 minutes.
check --program fb --max-tests "${TESTGEN_FB_PATHS:-100}" --work "$dir/fb" || { echo "FAIL fb.p4"; exit 1; }

# protean.p4's data path (Algorithm 1 by role, on the registers its probes leave): no log table
# on its way, so 200 paths take about 20 s.
check --program protean --max-tests "${TESTGEN_PATHS:-200}" --work "$dir/protean" ||
  { echo "FAIL protean.p4"; exit 1; }
inverted protean "${TESTGEN_PATHS:-200}"
