#!/usr/bin/env bash
# The Debian package (docs/package.md): `cpack -G DEB` from the build folder, its contents, then
# installed on this machine with dpkg as a user would: the installed sharebufd checks the shipped
# example, finds the data files installed with it (not the source tree's), `systemd-analyze verify`
# accepts the unit, the man pages are where man looks; then purged, leaving nothing behind.
#   SHAREBUF_BUILD=build bash tests/package/deb_package.sh
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: installing a package needs root"
  exit 77
fi
build=$(cd "${SHAREBUF_BUILD:?the build folder}" && pwd)
if dpkg-query -W -f='${Status}' sharebuf 2>/dev/null | grep -q 'ok installed'; then
  echo "SKIPPED: a sharebuf package is installed already; this test does not replace it"
  exit 77
fi
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
work=$(mktemp -d /tmp/sharebuf-deb.XXXXXX)
installed=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ "$installed" = 1 ] && ! dpkg --purge sharebuf >"$work/purge.log" 2>&1; then
    cat "$work/purge.log" >&2
    rc=1
  fi
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; }
deb=$(compgen -G "$work/sharebuf_*.deb" | head -1)
[ -n "$deb" ] || fail "cpack wrote no sharebuf_*.deb"
dpkg-deb -c "$deb" | awk '{ print $6 }' >"$work/contents"
expect=(./usr/sbin/sharebufd ./usr/bin/sharebufctl ./usr/bin/sharebuf-replay
  ./usr/lib/systemd/system/sharebufd@.service ./usr/share/sharebuf/credence-forest.json
  ./usr/share/doc/sharebuf/examples/demo.toml ./usr/share/doc/sharebuf/configuration.md
  ./usr/share/man/man8/sharebufd.8.gz ./usr/share/man/man1/sharebufctl.1.gz
  ./usr/share/man/man1/sharebuf-replay.1.gz ./usr/lib/python3/dist-packages/sharebuf/mininet.py)
if [ -x "$build/sim/sharebuf-sim" ]; then
  expect+=(./usr/bin/sharebuf-sim ./usr/share/man/man1/sharebuf-sim.1.gz
    ./usr/lib/libsharebuf-ns3.so ./usr/lib/cmake/sharebuf-ns3/sharebuf-ns3Config.cmake
    ./usr/share/doc/sharebuf/examples/ns3/star_two_policies.cc)
fi
for f in "${expect[@]}"; do
  grep -qxF "$f" "$work/contents" || fail "the package lacks $f"
done
depends=$(dpkg-deb -f "$deb" Depends)
case "$depends" in
  *libspdlog*) ;;
  *) fail "dpkg-shlibdeps found no dependencies: Depends: $depends" ;;
esac

installed=1
dpkg -i "$deb" >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; fail "dpkg -i failed"; }
/usr/sbin/sharebufd --version | grep -qx "sharebufd $(dpkg-deb -f "$deb" Version)" ||
  fail "sharebufd --version does not say the package's version"
/usr/sbin/sharebufd --config /usr/share/doc/sharebuf/examples/demo.toml --check-config \
  >"$work/check.log" 2>&1 || { cat "$work/check.log" >&2; fail "sharebufd --check-config failed"; }
# The installed replay reads the installed web-search CDF, nothing of the source tree.
strace -f -e trace=openat -o "$work/strace.log" /usr/bin/sharebuf-replay --scenario websearch \
  --policies dt --duration-ms 1 >/dev/null 2>&1 || fail "the installed sharebuf-replay failed"
grep -q '/usr/share/sharebuf/websearch-flow-size-cdf.txt' "$work/strace.log" ||
  fail "the installed sharebuf-replay did not open /usr/share/sharebuf's CDF"
if grep -F "$(cd "$(dirname "$0")/../.." && pwd)/data" "$work/strace.log"; then
  fail "the installed sharebuf-replay read the source tree's data/"
fi
systemd-analyze verify /usr/lib/systemd/system/sharebufd@.service >"$work/verify.log" 2>&1 ||
  { cat "$work/verify.log" >&2; fail "systemd-analyze verify rejects sharebufd@.service"; }
if grep -i 'sharebufd@' "$work/verify.log"; then
  fail "systemd-analyze verify warns about sharebufd@.service"
fi
for page in sharebufd sharebufctl; do
  man -w "$page" >/dev/null 2>&1 || fail "man cannot find $page"
done
zcat /usr/share/man/man8/sharebufd.8.gz | grep -q 'check\\-config' ||
  fail "sharebufd(8) lacks the options of --help"

dpkg --purge sharebuf >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "dpkg --purge failed"; }
installed=0
[ ! -e /usr/sbin/sharebufd ] || fail "/usr/sbin/sharebufd is still there after the purge"
echo "ok: $(basename "$deb"), $(wc -l <"$work/contents") paths; Depends: $depends"
