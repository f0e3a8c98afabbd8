# A CMake toolchain file that makes the Tofino compiler's build fit in a working session on two
# cores: p4c's own unity build (batches of 10 sources, as p4c's CI builds the Tofino backend;
# abseil, protobuf and z3 are built without it, p4c's cmake says so) and -O1 instead of
# Release's -O3. The compiler it makes is the same program, only less optimised.
# Used through the environment by the shipped build script, on a fresh build root:
#   CMAKE_TOOLCHAIN_FILE=$PWD/p4/compiler/quick-build.cmake build-bf-p4c.sh --background
set(CMAKE_UNITY_BUILD ON CACHE BOOL "p4c's unity build")
# In the cache before project(): the compiler modules append -O3 to any *_INIT value.
set(CMAKE_C_FLAGS_RELEASE "-O1 -DNDEBUG" CACHE STRING "")
set(CMAKE_CXX_FLAGS_RELEASE "-O1 -DNDEBUG" CACHE STRING "")
