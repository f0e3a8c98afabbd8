#!/usr/bin/env bash
# sharebuf's entry point. Every command installs what it needs first (Debian 12, as root).
#   ./run.sh test      install, build, run every test: unit tests (plain, ASan+UBSan, TSan builds)
#                      and the netns integration tests (root)
#   ./run.sh demo      install, build, run the main demo (root: network namespaces)
#   ./run.sh build     install and build (build/)
#   ./run.sh bench     install, build, run the microbenchmarks and update docs/benchmarks.md's table
#   ./run.sh deps      install the Debian packages only
#   ./run.sh ns3-debug build ns-3 with asserts from Debian's source package (about 3 minutes), so
#                      the sim tests also run against it (ctest label ns3debug)
#   ./run.sh ns3-mpi   build ns-3 with its distributed simulator (MPI) from the same source package
#                      (about 4 minutes on 2 cores) and sharebuf-sim-mpi on it (ctest label mpi)
# Environment: JOBS (parallel jobs, default the cores), NS3_DEBUG_PREFIX and NS3_MPI_PREFIX (where
# those two install and every build looks; default /opt/sharebuf-ns3-debug, /opt/sharebuf-ns3-mpi).
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=scripts/usage.sh
source scripts/usage.sh

JOBS=${JOBS:-$(nproc)}
PACKAGES=(
  build-essential cmake pkg-config git
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libtomlplusplus-dev
  libnl-3-dev libnl-route-3-dev libpcap-dev
  iproute2 ethtool iperf3 iputils-ping procps python3 jq strace help2man man-db systemd
  libcpp-httplib-dev prometheus mininet
  clang-format clang libclang-rt-14-dev shellcheck
  python3-matplotlib python3-sklearn
  libns3-dev libgsl-dev
  cpp libprotobuf32 libgc1 libboost-iostreams1.74.0
)

# The sanitizer builds' options (./run.sh test).
# GCC 12 at -O1 with ASan warns of a maybe-uninitialized member inside libstdc++'s <regex> (a false
# positive in a header the project does not own); the plain build keeps that warning.
SANITIZER_BUILD=(-DSHAREBUF_BENCH=OFF -DSHAREBUF_NS3=OFF
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG -Wno-maybe-uninitialized")

# ./run.sh ns3-mpi's: Open MPI (the compiler wrappers and mpirun).
MPI_PACKAGES=(libopenmpi-dev openmpi-bin)

# Each stage's line says when it began (minutes:seconds since the command started), so a CI log
# shows where its time went.
log() { printf '\033[1m== [%d:%02d] %s\033[0m\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# deps [EXTRA PACKAGES...]: the packages above and any extra ones a command needs.
deps() {
  local missing=()
  for p in "${PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "dependencies already installed"
    return
  fi
  log "installing: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "run.sh: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# build DIR [cmake options...]
build() {
  local dir=$1
  shift
  log "building in $dir ($*)"
  # The prefixes ./run.sh ns3-debug and ns3-mpi install into (NS3_*_PREFIX below), so that a
  # prefix set in the environment is the one the build looks in.
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSHAREBUF_NS3_DEBUG_PREFIX="$NS3_DEBUG_PREFIX" -DSHAREBUF_NS3_MPI_PREFIX="$NS3_MPI_PREFIX" \
    "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
}

unit_tests() {
  local dir=$1
  log "unit tests in $dir"
  ctest --test-dir "$dir" --output-on-failure -j "$JOBS" -L unit
}

# The libFuzzer targets, built with clang, each run for a bounded time (FUZZ_SECONDS, default 20)
# on a copy of its corpus: the control-request parser, the RX path's frame handling, the TOML
# configuration loader.
FUZZ_TARGETS=(control_request frame_parser config)
fuzz_tests() {
  local seconds=${FUZZ_SECONDS:-20}
  log "fuzzing ${FUZZ_TARGETS[*]} for ${seconds}s each (clang, libFuzzer + asan/ubsan)"
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSHAREBUF_FUZZ=ON -DSHAREBUF_TESTS=OFF -DSHAREBUF_BENCH=OFF >/dev/null
  local t targets=()
  for t in "${FUZZ_TARGETS[@]}"; do targets+=(--target "${t}_fuzz"); done
  cmake --build build-fuzz -j "$JOBS" "${targets[@]}"
  for t in "${FUZZ_TARGETS[@]}"; do
    local corpus rc
    corpus=$(mktemp -d)
    cp tests/fuzz/corpus/"$t"/* "$corpus"/
    log "fuzz: $t"
    # Long enough for a request nested thousands deep (control_request/deep_id).
    set +e
    build-fuzz/tests/fuzz/"${t}_fuzz" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
      "$corpus" 2>&1 | tail -3
    rc=${PIPESTATUS[0]}
    set -e
    rm -rf "$corpus"
    [ "$rc" -eq 0 ] || return "$rc"
  done
}

# ns-3 from Debian's own source package of the ns-3.37 that libns3-dev ships (`apt-get source ns3`,
# a deb-src line for the archive the system already uses), fetched once into build-ns3/src and
# built twice at most, each with only the modules sharebuf uses, into a prefix sim/CMakeLists.txt
# looks in. Both are optional: the tests that need one say "skipped" and how to get it.
#   ns3-debug  asserts on (NS_ASSERT, NS_LOG), into NS3_DEBUG_PREFIX: the ns3debug tests
#   ns3-mpi    optimised, with the distributed simulator (MPI, Open MPI), into NS3_MPI_PREFIX:
#              sharebuf-sim-mpi and the mpi tests
# A build stopped half-way resumes where it stopped (cmake --build keeps what it made).
NS3_SRC=build-ns3/src
NS3_MODULES="core;network;internet;point-to-point;traffic-control;applications;flow-monitor"
NS3_DEBUG_PREFIX=${NS3_DEBUG_PREFIX:-/opt/sharebuf-ns3-debug}
NS3_MPI_PREFIX=${NS3_MPI_PREFIX:-/opt/sharebuf-ns3-mpi}
ns3_source() {
  if compgen -G "$NS3_SRC/ns3-*/ns-3.37/CMakeLists.txt" >/dev/null; then
    dirname "$(compgen -G "$NS3_SRC/ns3-*/ns-3.37/CMakeLists.txt" | head -1)"
    return
  fi
  local list=/etc/apt/sources.list.d/sharebuf-deb-src.sources
  if ! grep -rqs "^Types: deb-src" /etc/apt/sources.list.d/ && ! grep -qs "^deb-src" /etc/apt/sources.list; then
    log "adding $list (Debian's source packages)" >&2
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$(. /etc/os-release && echo "$VERSION_CODENAME")" >"$list"
    apt-get update -qq
  fi
  mkdir -p "$NS3_SRC"
  log "fetching ns-3's source package into $NS3_SRC (about 40 MB)" >&2
  (cd "$NS3_SRC" && apt-get source -qq ns3 >/dev/null)
  dirname "$(compgen -G "$NS3_SRC/ns3-*/ns-3.37/CMakeLists.txt" | head -1)"
}

# ns3_build NAME PREFIX CMAKE_OPTIONS...: configure (once) and build build-ns3/NAME, install.
ns3_build() {
  local name=$1 prefix=$2 tree
  shift 2
  tree=$(ns3_source)
  log "building ns-3 ($name: $tree -> $prefix; cmake's [NN%] lines are its progress)"
  local start=$SECONDS
  # Only the libraries: ns-3.37 builds scratch/, utils/ and its `test` module whatever
  # NS3_EXAMPLES/NS3_TESTS say (build-support/macros-and-definitions.cmake adds `test` whenever
  # core is enabled); sharebuf uses none of them. Idempotent edits of the unpacked source.
  sed -i 's/^add_subdirectory(scratch)/# sharebuf: & (not needed)/; s/^add_subdirectory(utils)/# sharebuf: & (not needed)/' \
    "$tree/CMakeLists.txt"
  sed -i 's/^\( *\)list(APPEND ${libs_to_build} test) # include test module/\1# sharebuf: test module not needed/' \
    "$tree/build-support/macros-and-definitions.cmake"
  cmake -S "$tree" -B "build-ns3/$name" -DNS3_EXAMPLES=OFF -DNS3_TESTS=OFF \
    -DNS3_PYTHON_BINDINGS=OFF -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_INSTALL_RPATH="$prefix/lib" "$@" >/dev/null
  local TIMEFORMAT="ns-3 ($name) compiled in %0R s (%0U s user + %0S s system CPU, $JOBS jobs)"
  time cmake --build "build-ns3/$name" -j "$JOBS"
  cmake --install "build-ns3/$name" >/dev/null
  log "ns-3 ($name) installed in $prefix after $((SECONDS - start)) s"
}

ns3_debug() {
  if [ -f "$NS3_DEBUG_PREFIX/lib/libns3-core-debug.so" ]; then
    log "ns-3 with asserts already in $NS3_DEBUG_PREFIX"
    return
  fi
  ns3_build debug "$NS3_DEBUG_PREFIX" -DCMAKE_BUILD_TYPE=Debug -DNS3_ENABLED_MODULES="$NS3_MODULES"
}

ns3_mpi() {
  if [ -f "$NS3_MPI_PREFIX/lib/libns3-mpi.so" ]; then
    log "ns-3 with MPI already in $NS3_MPI_PREFIX"
    return
  fi
  ns3_build mpi "$NS3_MPI_PREFIX" -DCMAKE_BUILD_TYPE=Release -DNS3_MPI=ON \
    -DNS3_ENABLED_MODULES="$NS3_MODULES;mpi"
}

sim_tests() {
  log "ns-3 tests in $1 (sharebuf-sim, the queue disc, the installed library)"
  ctest --test-dir "$1" --output-on-failure -L sim -j "$JOBS"
  log "ns-3 tests against an ns-3 with asserts (./run.sh ns3-debug; skipped without it)"
  ctest --test-dir "$1" --output-on-failure -L ns3debug -j "$JOBS"
  # One at a time: its runs take every core.
  log "sharebuf-sim on several MPI ranks (./run.sh ns3-mpi; skipped without it)"
  ctest --test-dir "$1" --output-on-failure -L '^mpi$'
}

# The P4 programs against p4test ($P4TEST, PATH, or beside the repository; skipped with the reason
# when there is none), their loader, and against the Tofino compiler (label tofino; skipped,
# saying how to build it, when bf-p4c is not installed).
p4_tests() {
  log "P4 programs in $1 (p4test: frontend and midend; the bfrt_python loader)"
  ctest --test-dir "$1" --output-on-failure -L '^p4$'
  log "P4 programs in $1 against the Tofino compiler (bf-p4c; skipped without it)"
  ctest --test-dir "$1" --output-on-failure -L tofino
  log "P4 programs' paths (p4testgen) against the software in $1 (skipped without p4testgen)"
  ctest --test-dir "$1" --output-on-failure -L p4testgen
}

# The whole tree formatted (.clang-format) and its shell scripts shellcheck-clean.
lint_tests() {
  log "lint: clang-format and shellcheck over the tree"
  ctest --test-dir "$1" --output-on-failure -L lint
}

# netns_tests DIR [LABEL]: the integration tests (label netns) in DIR. The datapath's threads meet
# real sockets only there, so the ones labelled `sanitized` (no timing thresholds a sanitizer's
# slowdown could break) also run against the sanitizer builds' sharebufd, whose reports fail the
# test (scripts/testbed.sh).
netns_tests() {
  local label=${2:-netns}
  log "netns integration tests labelled $label in $1 (skipped unless root)"
  ctest --test-dir "$1" --output-on-failure -L "$label"
}

# The Debian package made, installed with dpkg, checked and purged (tests/package/).
package_tests() {
  log "the Debian package (cpack -G DEB, dpkg -i, dpkg --purge; skipped unless root)"
  ctest --test-dir "$1" --output-on-failure -L '^package$'
}

case "${1:-}" in
  deps)
    deps
    ;;
  ns3-debug)
    deps
    ns3_debug
    build build
    ctest --test-dir build --output-on-failure -L ns3debug -j "$JOBS"
    ;;
  ns3-mpi)
    deps "${MPI_PACKAGES[@]}"
    ns3_mpi
    build build
    ctest --test-dir build --output-on-failure -L '^mpi$'
    ;;
  build)
    deps
    build build
    ;;
  test)
    deps
    build build
    lint_tests build
    unit_tests build
    sim_tests build
    p4_tests build
    netns_tests build
    package_tests build
    # Sanitizer builds skip the benchmarks (they measure nothing useful there) and sharebuf-sim
    # (ns-3's libraries are not built with the sanitizers), and compile at -O1 with line tables
    # only (-g1): the reports keep their files and lines, and a file compiles in about 40 % less
    # time (one test file under ASan+UBSan: 42 s at -O2 -g, 25 s), which keeps CI inside its limit.
    build build-asan -DSHAREBUF_ASAN=ON "${SANITIZER_BUILD[@]}"
    unit_tests build-asan
    netns_tests build-asan sanitized
    build build-tsan -DSHAREBUF_TSAN=ON "${SANITIZER_BUILD[@]}"
    TSAN_OPTIONS="halt_on_error=1" unit_tests build-tsan
    netns_tests build-tsan sanitized
    fuzz_tests
    log "all test suites passed (unit: plain, asan+ubsan, tsan; sim; p4; netns: plain, asan+ubsan, tsan; fuzz)"
    ;;
  demo)
    deps
    build build
    shift
    netns-scripts/demo.sh "$@"
    ;;
  bench)
    deps
    build build
    bench/run_benchmarks.sh build
    ;;
  -h | --help | help | "")
    sb_usage "$0"
    ;;
  *)
    sb_usage "$0"
    echo "run.sh: unknown command '$1'" >&2
    exit 2
    ;;
esac
