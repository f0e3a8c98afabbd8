#!/usr/bin/env bash
# The P4 twins (p4/*.p4) checked by p4test, the P4 reference compiler's frontend and midend,
# against the Tofino Native Architecture includes: each program parses and type-checks
# (--validate: names, widths, extern signatures) and passes the generic midend; the entries
# sharebuf-p4tables generates for its example configuration (p4/examples/) name tables, match
# fields, actions, parameters and meters the program declares (P4Info from p4test); and a
# deliberately broken copy of each program — an undeclared name, a width mismatch — is refused,
# so the check can fail. p4test does not place a program into Tofino's stages, PHV or memories:
# that needs the Tofino compiler (p4/README.md).
# p4test: $P4TEST, else p4test on PATH, else ../shared/tools/p4c/bin/p4test beside the
# repository; without one the test is skipped (exit 77) and says why.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tables=${SHAREBUF_P4TABLES:?SHAREBUF_P4TABLES: the sharebuf-p4tables binary}
p4test=${P4TEST:-}
if [ -z "$p4test" ]; then
  p4test=$(command -v p4test || true)
fi
if [ -z "$p4test" ] && [ -x "$root/../shared/tools/p4c/bin/p4test" ]; then
  p4test=$root/../shared/tools/p4c/bin/p4test
fi
if [ -z "$p4test" ] || [ ! -x "$p4test" ]; then
  echo "SKIP: no p4test (looked at \$P4TEST, PATH and $root/../shared/tools/p4c/bin/p4test)"
  exit 77
fi
command -v cpp >/dev/null || { echo "FAIL: p4test needs the C preprocessor 'cpp' on PATH"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
echo "p4test: $p4test (frontend and midend only: no Tofino stage allocation)"

compile() {  # compile FILE [extra p4test options...]: validate, then the midend with P4Info
  local file=$1
  shift
  "$p4test" -D__TARGET_TOFINO__=1 --validate "$@" "$file" >"$dir/out.txt" 2>&1 &&
    "$p4test" -D__TARGET_TOFINO__=1 "$@" "$file" >>"$dir/out.txt" 2>&1
}

for prog in dt protean fb trim; do
  "$tables" --config "$root/p4/examples/$prog.toml" --program "$prog" -o "$dir/$prog.json"
  defines=$(jq -r '.compile.defines | to_entries | map("-D\(.key)=\(.value)") | join(" ")' "$dir/$prog.json")
  # shellcheck disable=SC2086
  if compile "$root/p4/$prog.p4" $defines --p4runtime-files "$dir/$prog.p4info.txtpb"; then
    echo "ok   $prog.p4: accepted (frontend and midend, $defines)"
  else
    echo "FAIL $prog.p4 refused:"; cat "$dir/out.txt"; fail=1; continue
  fi
  /usr/bin/python3 "$root/tests/p4/check_p4tables.py" "$dir/$prog.p4info.txtpb" "$dir/$prog.json" \
    "$root/p4/$prog.p4" "$root"/p4/include/*.p4 || fail=1

  # Broken copies, in a copy of the tree (the includes are found relative to the program).
  mkdir -p "$dir/broken"
  cp -r "$root/p4/include" "$dir/broken/"
  # 1. An undeclared name: the ingress control's first table application misspelt.
  sed '0,/\(fwd\|probe_route\|protean_params\|fb_params\|trim_params\)\.apply(/s//\1_misspelt.apply(/' \
    "$root/p4/$prog.p4" >"$dir/broken/$prog.p4"
  if cmp -s "$root/p4/$prog.p4" "$dir/broken/$prog.p4"; then
    echo "FAIL $prog.p4: the broken copy is unchanged (the check could not fail)"; fail=1
  elif compile "$dir/broken/$prog.p4"; then
    echo "FAIL $prog.p4 with an undeclared name was accepted"; fail=1
  else
    echo "ok   $prog.p4 with an undeclared name refused: $(grep -m1 -o 'error: .*' "$dir/out.txt")"
  fi
  # 2. A width mismatch: a 48-bit MAC address assigned to the 16-bit queue index.
  sed '0,/apply {/s//apply {\n        md.qindex = hdr.ethernet.dst_addr;/' "$root/p4/$prog.p4" \
    >"$dir/broken/$prog.p4"
  if compile "$dir/broken/$prog.p4"; then
    echo "FAIL $prog.p4 with a width mismatch was accepted"; fail=1
  else
    echo "ok   $prog.p4 with a width mismatch refused: $(grep -m1 -o 'error: .*' "$dir/out.txt" | cut -c1-100)"
  fi
done
exit "$fail"
