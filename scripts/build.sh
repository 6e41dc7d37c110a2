#!/bin/sh
# build.sh [BUILD_TYPE] -- configure and build gqp into build/ (default
# Release) with all cores. CUDA twins are built when nvcc is found.
set -eu
cd "$(dirname "$0")/.."
TYPE=${1:-Release}
JOBS=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE="$TYPE"
cmake --build build -j"$JOBS"
