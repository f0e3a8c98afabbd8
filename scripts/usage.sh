# shellcheck shell=bash
# sb_usage FILE: prints FILE's leading comment block — the lines after the shebang up to the first
# line that is not a comment — without the "# ", as the script's --help. Every script's help is
# its header, whatever its length (tests/python/test_scripts.py checks each one).
sb_usage() {
  awk 'NR == 1 && /^#!/ { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"
}
