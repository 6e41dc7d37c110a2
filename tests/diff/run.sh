#!/bin/sh
# run.sh [SEEDS] [gqpdiff options...] -- the CI differential stage: build
# build/tests/gqp_batch if needed, then tests/diff/gqpdiff.py over SEEDS
# (default 1:3000, the CI range) with the CI feature set, once per
# aggregation plan (auto, sort, dense) and once in 3-row chunks. Reports
# go to build/diff-<plan>.md and build/diff-chunked.md.
# Exit 1 if any run found a failing mismatch.
#   tests/diff/run.sh 1:20000                       # a longer run
#   tests/diff/run.sh 1:2000 --features all --no-fail   # everything, known issues included
set -u
cd "$(dirname "$0")/../.."
SEEDS=${1:-1:3000}
[ $# -gt 0 ] && shift
if [ ! -x build/tests/gqp_batch ]; then
    [ -d build ] || cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target gqp_batch >/dev/null || exit 1
fi
status=0
# (the dense run also takes every ORDER BY ... LIMIT through the CPU range
# sort's radix select, whatever the table's size: GQP_TOPK=force)
for plan in auto sort dense; do
    topk=1
    [ "$plan" = dense ] && topk=force
    GQP_TOPK=$topk python3 tests/diff/gqpdiff.py --seeds "$SEEDS" --aggregate "$plan" \
        --report "build/diff-$plan.md" "$@" || status=1
done
# chunked execution (3-row chunks: partial plans merged by a final plan,
# libgqp/chunk.c) against sqlite3 on the same queries
GQP_CHUNK_ROWS=3 python3 tests/diff/gqpdiff.py --seeds "$SEEDS" --report build/diff-chunked.md "$@" ||
    status=1
# nested correlated subqueries (grand-parent correlations, GROUP BY /
# ORDER BY subqueries, multi-term top-1) against sqlite3
[ -x build/gqp ] || cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target gqp_cli >/dev/null || exit 1
python3 tests/diff/decorrelate_fuzz.py --gqp build/gqp --seeds 0:200 || status=1
# correlated LIMIT / OFFSET per outer row (ranked per key) against sqlite3
python3 tests/diff/limit_fuzz.py --gqp build/gqp --seeds 0:200 || status=1
exit $status
