#!/usr/bin/env bash
# The P4 twins compiled for Tofino 1 (TNA) by the Tofino compiler, bf-p4c: every program, with
# the compile definitions sharebuf-p4tables gives for its example configuration, must compile,
# fit Tofino 1's 12 stages per pipeline, and declare every table, action, field, register and
# meter its generated entries name (p4/loader/bfrt_loader.py --check against the compiler's
# bf-rt.json). Prints, per program, the stages used and the largest per-stage SRAM, TCAM,
# stateful ALU and hash figures of the compiler's report (p4/README.md's resources table).
# Then the check is shown to fail: a copy with an undeclared name and a copy whose ingress
# chains more dependent tables than 12 stages hold must both be refused.
# bf-p4c: $BF_P4C, else bf-p4c on PATH, else /opt/bf-p4c/bin/bf-p4c (where p4/README.md's
# recipe installs it); without one the test is skipped (exit 77) and says how to build it.
# --readme: also writes p4/README.md's resources table (section p4-resources) from this compile.
set -euo pipefail
readme=0
[ "${1:-}" = "--readme" ] && readme=1
root=$(cd "$(dirname "$0")/../.." && pwd)
tables=${SHAREBUF_P4TABLES:?SHAREBUF_P4TABLES: the sharebuf-p4tables binary}
compiler=${BF_P4C:-}
[ -n "$compiler" ] || compiler=$(command -v bf-p4c || true)
[ -n "$compiler" ] || { [ -x /opt/bf-p4c/bin/bf-p4c ] && compiler=/opt/bf-p4c/bin/bf-p4c; } || true
if [ -z "$compiler" ] || [ ! -x "$compiler" ]; then
  echo "SKIP: no Tofino compiler (looked at \$BF_P4C, bf-p4c on PATH, /opt/bf-p4c/bin/bf-p4c);"
  echo "      p4/compiler/build.sh builds it (about an hour on 2 cores; p4/README.md, 'The Tofino"
  echo "      compiler', says how, also from p4lang/p4c without the sources beside the repository)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
max_stages=12
echo "bf-p4c: $compiler"

compile() {  # compile OUT FILE [-D...]: bf-p4c for Tofino 1, logs and reports in OUT
  local out=$1 file=$2
  shift 2
  "$compiler" --target tofino --arch tna --verbose 1 -I "$root/p4/include" "$@" -o "$out" \
    "$file" >"$out.log" 2>&1
}

for prog in dt protean fb trim; do
  "$tables" --config "$root/p4/examples/$prog.toml" --program "$prog" -o "$dir/$prog.json" 2>/dev/null
  mapfile -t defines < <(jq -r '.compile.defines | to_entries[] | "-D\(.key)=\(.value)"' "$dir/$prog.json")
  start=$(date +%s)
  if ! compile "$dir/$prog" "$root/p4/$prog.p4" "${defines[@]}"; then
    echo "FAIL $prog.p4 does not compile for Tofino 1:"
    grep -iE "error|warning: .*(not|cannot)" "$dir/$prog.log" | head -20
    fail=1
    continue
  fi
  secs=$(($(date +%s) - start))
  if ! /usr/bin/python3 "$root/tests/p4/tofino_resources.py" --max-stages "$max_stages" \
    --label "$prog.p4 (${secs} s)" "$dir/$prog"; then
    fail=1
  fi
  /usr/bin/python3 "$root/tests/p4/tofino_resources.py" --max-stages "$max_stages" --markdown-row \
    --label "$prog.p4" "$dir/$prog" >>"$dir/rows.md" || true
  bfrt=$(find "$dir/$prog" -name bf-rt.json -o -name bfrt.json | head -1)
  if [ -z "$bfrt" ]; then
    echo "FAIL $prog.p4: the compiler wrote no bf-rt.json"
    fail=1
  else
    /usr/bin/python3 "$root/p4/loader/bfrt_loader.py" "$dir/$prog.json" --check "$bfrt" || fail=1
  fi
done

# The check can fail: an undeclared name, and more dependent steps than the stages hold.
mkdir -p "$dir/broken"
cp -r "$root/p4/include" "$dir/broken/"
sed '0,/fwd\.apply(/s//fwd_misspelt.apply(/' "$root/p4/dt.p4" >"$dir/broken/dt.p4"
if cmp -s "$root/p4/dt.p4" "$dir/broken/dt.p4"; then
  echo "FAIL the broken copy of dt.p4 is unchanged (the check could not fail)"
  fail=1
elif compile "$dir/broken-out" "$dir/broken/dt.p4"; then
  echo "FAIL dt.p4 with an undeclared name compiled"
  fail=1
else
  echo "ok   dt.p4 with an undeclared name refused"
fi
/usr/bin/python3 "$root/tests/p4/long_chain.py" "$root/p4/dt.p4" $((max_stages + 4)) \
  >"$dir/broken/dt_long.p4"
if compile "$dir/long-out" "$dir/broken/dt_long.p4"; then
  if /usr/bin/python3 "$root/tests/p4/tofino_resources.py" --max-stages "$max_stages" \
    --label "dt.p4 + $((max_stages + 4)) dependent tables" "$dir/long-out" >/dev/null; then
    echo "FAIL dt.p4 with $((max_stages + 4)) more dependent tables compiled within $max_stages stages"
    fail=1
  else
    echo "ok   dt.p4 with $((max_stages + 4)) more dependent tables: over $max_stages stages, refused here"
  fi
else
  echo "ok   dt.p4 with $((max_stages + 4)) more dependent tables refused by the compiler:"
  grep -iE "error" "$dir/long-out.log" | head -3
fi
if [ "$readme" = 1 ] && [ "$fail" = 0 ]; then
  {
    echo "Compiled $(date -u +%Y-%m-%d) by \`$("$compiler" --version 2>/dev/null | head -1)\` (\`tests/p4/tofino_check.sh --readme\`)."
    echo "Per stage: the largest figure of any one stage (ingress and egress together) against"
    echo "Tofino 1's budget. Per gress: SRAM / TCAM blocks / stateful ALUs its tables and registers"
    echo "take over all stages. Left: what the pipeline's 12 stages still have (both gresses share them)."
    echo
    echo "| program | stages (ingress, egress) | per stage: SRAM, TCAM, stateful ALU, hash distribution, tables | ingress SRAM / TCAM / ALU | egress SRAM / TCAM / ALU | left: SRAM / TCAM / ALU |"
    echo "|---|---|---|---|---|---|"
    cat "$dir/rows.md"
  } >"$dir/table.md"
  /usr/bin/python3 "$root/scripts/doc_section.py" p4-resources "$dir/table.md"
fi
exit $fail
