#!/bin/sh
# tsan.sh [BUILD_DIR [THREADS [SECONDS]]]
#
# Builds libgqp and tests/tsan/thread_stress.c with ThreadSanitizer (clang,
# CPU only) in BUILD_DIR (default build-tsan, beside the source tree's
# root) and runs the API thread workload: THREADS threads (default 8) on one
# shared handle, then on a handle each, for SECONDS seconds each (default
# 5), then the gqp_interrupt check. Exit 0 only when every check passed and
# TSan reported nothing (halt_on_error: the first report fails the run).
# CI: sh tests/tsan.sh
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$SRC/build-tsan}
THREADS=${2:-8}
SECONDS_EACH=${3:-5}
cmake -S "$SRC" -B "$B" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGQP_WITH_CUDA=OFF -DCMAKE_C_FLAGS=-fsanitize=thread \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
cmake --build "$B" -j"${JOBS:-2}" --target thread_stress >/dev/null
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
    "$B/tests/thread_stress" "$THREADS" "$SECONDS_EACH"
echo "tsan.sh: no ThreadSanitizer reports ($THREADS threads x ${SECONDS_EACH} s, shared and per-handle)"
