#!/bin/sh
# test-sanitize.sh -- the whole ctest suite under AddressSanitizer +
# UndefinedBehaviorSanitizer: clang (so -fsanitize=float-cast-overflow and
# the other UBSan checks gcc lacks are on), -fno-sanitize-recover=all (any
# report fails its test), leak checking on, CUDA off, built into
# build-asan/. Tests read GQP_TEST_SCALE (set to 0.1 here) and shrink their
# generated data sets so the run fits CI; no test is skipped.
# Usage: scripts/test-sanitize.sh [ctest args...], e.g. -R sql.nulls
# Environment: CC (default clang-14 or clang), GQP_TEST_SCALE, JOBS.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --clang
if [ -z "${CC:-}" ]; then
    if command -v clang-14 >/dev/null 2>&1; then CC=clang-14; else CC=clang; fi
fi
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
SAN="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B build-asan -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGQP_WITH_CUDA=OFF -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS="$SAN" \
    -DCMAKE_EXE_LINKER_FLAGS="$SAN" >/dev/null
cmake --build build-asan -j"$JOBS"
export GQP_TEST_SCALE=${GQP_TEST_SCALE:-0.1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$(pwd)/tests/sanitize/lsan.supp:print_suppressions=0}
cd build-asan
# Criterion runs each test in a child process and may report a test passed
# although the child printed a sanitizer report (a leak at its exit): keep
# every test's output and fail on any report found in it.
set +e
ctest -V -j"$JOBS" "$@" >ctest-sanitize.log 2>&1
rc=$?
set -e
grep -E "^[0-9]+/[0-9]+ Test|tests passed|tests failed|\(Failed\)" ctest-sanitize.log | tail -n 120
if grep -nE "ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:" ctest-sanitize.log >sanitizer-reports.txt; then
    echo "test-sanitize: sanitizer reports in the test output (build-asan/ctest-sanitize.log):"
    head -n 40 sanitizer-reports.txt
    rc=1
fi
[ $rc -eq 0 ] || echo "test-sanitize: FAILED (full output in build-asan/ctest-sanitize.log)"
exit $rc
