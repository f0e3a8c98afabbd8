#!/usr/bin/env bash
# Builds the Tofino compiler (bf-p4c) with the build script shipped beside this repository
# (../shared/tools/p4c/build-bf-p4c.sh, or $BF_P4C_BUILD_SCRIPT) and the two things this
# repository adds, then compiles its smoke test:
#   - quick-build.cmake: p4c's unity build and -O1, through the script's cmake (the environment's
#     CMAKE_TOOLCHAIN_FILE, on a fresh build root): about 1 h on 2 cores instead of 3-3.5 h, so a
#     build fits in one working session (a machine here keeps nothing between sessions);
#   - patches/*.patch, applied to the p4c sources and to the installed driver: the driver stored
#     its assembler's path as a pathlib.Path and joined it as a string (every compile failed after
#     the compiler proper had succeeded: "'PosixPath' object has no attribute 'find'").
#   - p4testgen (p4c's P4Tools with its Tofino target, the same commit), built in the compiler's
#     build tree from the p4tools and inja tarballs beside the build script (src/SOURCES.txt) and
#     installed as PREFIX/bin/p4testgen: `ctest -L p4testgen` (tests/p4/testgen_check.sh) needs it.
#     About 15 minutes more on 2 cores; --no-p4testgen skips it.
#   p4/compiler/build.sh [--root DIR] [--prefix DIR] [--background] [--stop] [--no-p4testgen]
# --root (default /var/tmp/bf-p4c) and --prefix (default /opt/bf-p4c) go to the script; it resumes
# where it stopped. With --background the patch and the smoke compile run when the build is done.
# Needs root (the script installs Debian's build packages).
set -euo pipefail
# shellcheck source=../../scripts/usage.sh
source "$(dirname "$0")/../../scripts/usage.sh"
here=$(cd "$(dirname "$0")" && pwd)
script=${BF_P4C_BUILD_SCRIPT:-$here/../../../shared/tools/p4c/build-bf-p4c.sh}
root=/var/tmp/bf-p4c prefix=/opt/bf-p4c background=0 stop=0 testgen=1
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --background) background=1; shift ;;
    --stop) stop=1; shift ;;
    --no-p4testgen) testgen=0; shift ;;
    -h|--help) sb_usage "$0"; exit 0 ;;
    *) echo "build.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$script" ] || { echo "build.sh: no build script at $script (set BF_P4C_BUILD_SCRIPT)" >&2; exit 1; }
if [ "$stop" = 1 ]; then
  exec "$script" --stop --root "$root"
fi
if [ "$background" = 1 ]; then
  log=$root.wrapper.log
  echo "build.sh: in the background, log $log (the script's own: $root/build-bf-p4c.log)"
  more=()
  [ "$testgen" = 1 ] || more=(--no-p4testgen)
  setsid nohup "$0" --root "$root" --prefix "$prefix" "${more[@]}" >"$log" 2>&1 </dev/null &
  exit 0
fi
CMAKE_TOOLCHAIN_FILE=$here/quick-build.cmake "$script" --root "$root" --prefix "$prefix" --no-smoke
# apply_once DIR STRIP PATCH: applies PATCH in DIR unless it is applied already.
apply_once() {
  if patch -d "$1" -p"$2" -R --dry-run -s -f <"$3" >/dev/null 2>&1; then return 0; fi
  patch -d "$1" -p"$2" -N -s <"$3"
}
for patch in "$here"/patches/*.patch; do
  # Into the sources (a rebuild keeps it) and into the installed driver: the patches name
  # tools/driver/p4c_src/..., installed as share/p4c/p4c_src/...
  apply_once "$root/src/p4c" 1 "$patch"
  apply_once "$prefix/share/p4c" 3 "$patch"
  echo "build.sh: $(basename "$patch") applied"
done
smoke=$(dirname "$script")/smoke/tna_smoke.p4
if [ -f "$smoke" ]; then
  out=$(mktemp -d)
  if "$prefix/bin/bf-p4c" --target tofino --arch tna -o "$out" "$smoke" >"$out.log" 2>&1; then
    echo "build.sh: smoke test compiled ($out)"
  else
    echo "build.sh: the smoke test did not compile:" >&2
    tail -20 "$out.log" >&2
    exit 1
  fi
fi

# p4testgen: the p4tools sources of the same commit into the build root's p4c tree, inja beside,
# then p4c's own CMake with the test tools on (the other P4Tools targets' test lists name
# programs of p4c's testdata/, which the compiler's tarball leaves out, so they stay off).
srcs=$(dirname "$script")/src
if [ "$testgen" = 1 ] && [ ! -x "$prefix/bin/p4testgen" ]; then
  p4tools=$(find "$srcs" -maxdepth 1 -name 'p4c-p4tools-*.tar.xz' 2>/dev/null | head -1)
  inja=$(find "$srcs" -maxdepth 1 -name 'inja-*.tar.xz' 2>/dev/null | head -1)
  if [ -z "$p4tools" ] || [ -z "$inja" ]; then
    echo "build.sh: no p4tools or inja tarball in $srcs: p4testgen not built" >&2
  else
    [ -d "$root/src/p4c/backends/p4tools/modules/testgen" ] || tar -C "$root/src" -xJf "$p4tools"
    mkdir -p "$root/inja" && tar -C "$root/inja" -xJf "$inja"
    inja_dir=$(dirname "$(find "$root/inja" -maxdepth 2 -name CMakeLists.txt | head -1)")
    PATH=$root/shims:$PATH PYTHONPATH=$root/src/jsl cmake -S "$root/src/p4c" -B "$root/build" \
      -DENABLE_TEST_TOOLS=ON -DENABLE_TOOLS_MODULE_SMITH=OFF -DENABLE_TOOLS_TARGET_BMV2=OFF \
      -DENABLE_TOOLS_TARGET_EBPF=OFF -DENABLE_TOOLS_TARGET_PNA=OFF \
      -DFETCHCONTENT_SOURCE_DIR_INJA="$inja_dir" >"$root/p4testgen.log" 2>&1
    PATH=$root/shims:$PATH PYTHONPATH=$root/src/jsl ninja -C "$root/build" p4testgen \
      >>"$root/p4testgen.log" 2>&1
    install -m 755 "$root/build/backends/p4tools/modules/testgen/p4testgen" "$prefix/bin/p4testgen"
    echo "build.sh: p4testgen installed as $prefix/bin/p4testgen"
  fi
fi
