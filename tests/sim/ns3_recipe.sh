#!/usr/bin/env bash
# docs/ns3.md's recipe as a new user follows it with no other file open: the two files its
# "recipe:" blocks hold, in an empty folder, configured against a fresh `cmake --install` alone
# (sharebuf::ns3 must bring ns-3 and C++17 with it), built and run under strace. The program must
# run Credence on the forest installed with the library and open nothing in the source tree's
# data/ (the installed library once read the checkout it was built from). With TARGET (e.g.
# sharebuf::ns3-mpi) the recipe links that variant instead of sharebuf::ns3.
set -euo pipefail
build=${1:?usage: ns3_recipe.sh BUILD_DIR SOURCE_DIR [TARGET]}
src=${2:?usage: ns3_recipe.sh BUILD_DIR SOURCE_DIR [TARGET]}
target=${3:-sharebuf::ns3}
command -v strace >/dev/null || { echo "FAIL: strace is needed (./run.sh installs it)"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake --install "$build" --prefix "$dir/prefix" >/dev/null
if [ "$target" != sharebuf::ns3 ]; then
  cmake --install "$build" --prefix "$dir/prefix" --component ns3-variants >/dev/null
fi
prefix=$(realpath "$dir/prefix")
/usr/bin/python3 "$src/tests/sim/recipe_blocks.py" "$src/docs/ns3.md" "$dir/project" \
  --expect CMakeLists.txt --expect my_switch.cc
if [ "$target" != sharebuf::ns3 ]; then
  grep -q 'PRIVATE sharebuf::ns3)' "$dir/project/CMakeLists.txt" ||
    { echo "FAIL: the recipe no longer links sharebuf::ns3 as this test expects"; exit 1; }
  sed -i "s/PRIVATE sharebuf::ns3)/PRIVATE $target)/" "$dir/project/CMakeLists.txt"
fi
cmake -S "$dir/project" -B "$dir/project/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$dir/project/build" >/dev/null
strace -f -e trace=openat -o "$dir/opens" "$dir/project/build/my_switch" | tee "$dir/out.txt"
grep -Eq '^credence: [0-9]+ packets received, [0-9]+ dropped$' "$dir/out.txt" ||
  { echo "FAIL: the program did not print its switch's counts"; exit 1; }
grep -q "\"$prefix/share/sharebuf/credence-forest.json\"" "$dir/opens" ||
  { echo "FAIL: the installed forest was not read"; grep forest "$dir/opens" || true; exit 1; }
if grep -F "\"$(realpath "$src")/data/" "$dir/opens"; then
  echo "FAIL: the installed library read the source tree"
  exit 1
fi
echo "ok   docs/ns3.md's recipe builds with $target against the install alone and reads its own forest"
