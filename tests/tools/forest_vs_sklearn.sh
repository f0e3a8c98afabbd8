#!/usr/bin/env bash
# The shipped model's pipeline end to end: replay web-search traffic under LQD, train the forest
# with scikit-learn, and check that the C++ inference predicts exactly what scikit-learn predicts
# on every held-out row (tools/make_credence_model.sh does all three).
set -euo pipefail
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! /usr/bin/python3 -c "import sklearn" 2>/dev/null; then
  echo "SKIPPED: python3-sklearn is not installed (./run.sh deps installs it)"
  exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$root/tools/make_credence_model.sh" "$build" "$out"
