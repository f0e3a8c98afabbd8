# shellcheck shell=bash
# Shared by the netns integration tests (ctest label "netns"): root or skip (exit 77), the
# testbed library, and checks on sharebufd's stats JSON.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: netns tests need root (network namespaces, AF_PACKET)"
  exit 77
fi
# shellcheck source=../../scripts/testbed.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/testbed.sh"
for tool in iperf3 ping ethtool; do
  command -v "$tool" >/dev/null || tb_die "missing '$tool': ./run.sh deps installs it"
done
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

fail() {
  echo "FAIL: $*" >&2
  if [ -n "${TB_DIR:-}" ] && [ -f "$TB_DIR/sharebufd.log" ]; then
    echo "--- sharebufd.log (last 20 lines)" >&2
    tail -20 "$TB_DIR/sharebufd.log" >&2
  fi
  exit 1
}

# netns_check CHECK ARGS...: one of netns_checks.py's checks on what a run left behind.
netns_check() { /usr/bin/python3 "$HERE/netns_checks.py" "$@"; }
# within EXPR: an arithmetic condition over measured numbers ("0.95 * 8 <= $mbps <= 1.05 * 8").
within() { netns_check within "$1"; }

# check_stats EXPR...: evaluates Python expressions over the stats JSON (`s`, with helpers
# port(name) and queue(name, k)); each must be true.
check_stats() {
  /usr/bin/python3 "$HERE/check_stats.py" "$TB_DIR/stats.json" "$@" || fail "stats check failed"
}
