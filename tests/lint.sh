#!/usr/bin/env bash
# The whole tree kept clean: `lint.sh format` checks every C++ file against .clang-format
# (clang-format --dry-run --Werror); `lint.sh shell` runs shellcheck on every shell script
# (.shellcheckrc says which checks are off and why). Files are the repository's tracked ones (git
# ls-files), or every file under the tree when it is not a git checkout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
files() {  # files PATTERN...: tracked files matching the patterns
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -- "$@"
  else
    local args=() p
    for p in "$@"; do args+=(-o -name "$p"); done
    find . -path ./build -prune -o -path './build-*' -prune -o \( -false "${args[@]}" \) -print |
      sed 's|^\./||'
  fi
}
case "${1:-}" in
  format)
    command -v clang-format >/dev/null || { echo "FAIL: clang-format missing (./run.sh deps)"; exit 1; }
    mapfile -t f < <(files '*.cpp' '*.h' '*.cc')
    clang-format --dry-run --Werror "${f[@]}"
    echo "clang-format: ${#f[@]} files clean"
    ;;
  shell)
    command -v shellcheck >/dev/null || { echo "FAIL: shellcheck missing (./run.sh deps)"; exit 1; }
    mapfile -t f < <(files '*.sh')
    shellcheck -x "${f[@]}"
    echo "shellcheck: ${#f[@]} scripts clean"
    ;;
  *)
    echo "usage: tests/lint.sh format|shell" >&2
    exit 2
    ;;
esac
