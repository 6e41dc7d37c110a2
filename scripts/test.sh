#!/bin/sh
# test.sh -- the whole check, as CI runs it: install missing dependencies,
# build (Release, all cores) into build/, run every test with ctest. Exit
# status is ctest's. On a machine without a GPU the GPU tests skip.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh Release
JOBS=$(nproc 2>/dev/null || echo 2)
cd build
ctest --output-on-failure -j"$JOBS"
