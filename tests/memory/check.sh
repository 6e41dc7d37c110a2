#!/bin/sh
# check.sh MODE GQP_BINARY WORKDIR
#
# The out-of-memory paths on seed 004's queries and SSB's 13 queries, each
# answer compared with the same query's --device cpu answer (rows as
# multisets, numbers within 1e-6 relative: tests/memory/same.py).
#
# MODE host: every query with the N-th host allocation failing
#   (GQP_FAIL_ALLOC=host:N, N = 1, 2, 3, 5, 8, 16, 40; the SQL suite runs
#   every N through gqp_slt --fail-alloc host), under auto: each run answers as the CPU does or fails with an
#   "out of memory" error, never anything else (a crash, a wrong answer).
#   Seed 004 at 20,000 rows, SSB at SF 0.01.
# MODE device (needs a GPU, else exit 77 = skipped): seed 004 at 200,000
#   rows and SSB at SF 0.1 (columns larger than 1 MB), all queries of a set
#   in one process (one load), and its answers must be the CPU's:
#   - on the GPU with the process's N-th device allocation failing
#     (GQP_FAIL_ALLOC=device:N once, device:N+ from the N-th on; N from 1
#     to 987) and the CPU fallback on (GQP_OOM_FALLBACK=1: as auto does,
#     with every node on the GPU);
#   - under auto with device:1+, device:4 and device:40 failing;
#   - with SET memory_limit = '1MB', on the GPU (with the fallback) and
#     under auto;
#   - and for the set's first query: memory_limit 1MB on --device gpu
#     proper (no fallback) fails, the message naming the bytes needed and
#     available; EXPLAIN ANALYZE with every device allocation failing shows
#     a node that "ran on the CPU after a device out-of-memory".
# Exit 0 if all hold, 1 otherwise (each failure named).
set -u
if [ $# -lt 3 ]; then
    echo "usage: check.sh host|device GQP_BINARY WORKDIR" >&2
    exit 1
fi
MODE=$1
GQP=$2
WORK=$3
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
command -v python3 >/dev/null 2>&1 || { echo "check.sh: python3 not found" >&2; exit 1; }
if [ "$MODE" = device ]; then
    if ! "$GQP" run --device gpu -e "SELECT 1" >/dev/null 2>&1; then
        echo "check.sh: no usable GPU; skipped"
        exit 77
    fi
    ROWS=200000
    SF=0.1
else
    ROWS=20000
    SF=0.01
fi
mkdir -p "$WORK" || exit 1
SEED=$WORK/seed004_$ROWS
SSB=$WORK/ssb_$SF
[ -f "$SEED/gqp.yaml" ] || "$GQP" gen test --rows "$ROWS" --out "$SEED" >/dev/null ||
    { echo "FAIL: gqp gen test" >&2; exit 1; }
[ -f "$SSB/gqp.yaml" ] || "$GQP" gen ssb --sf "$SF" --out "$SSB" >/dev/null ||
    { echo "FAIL: gqp gen ssb" >&2; exit 1; }

fails=0
runs=0
ooms=0
OUT=$WORK/out.csv
ERR=$WORK/err.txt

# fail WHAT: report one failure
fail() {
    echo "FAIL: $1" >&2
    [ -s "$ERR" ] && sed 's/^/  stderr: /' "$ERR" | head -5 >&2
    fails=$((fails + 1))
}

# same REF: 0 if $OUT holds REF's rows
same() {
    python3 "$HERE/same.py" "$1" "$OUT"
}

for set in seed004 ssb; do
    if [ $set = seed004 ]; then CFG=$SEED/gqp.yaml; else CFG=$SSB/gqp.yaml; fi
    if [ "$MODE" = device ]; then
        # every query of the set in one process (one load of the tables)
        ALL=$WORK/$set-all.sql
        cat "$SRC"/tests/$set/queries/*.sql >"$ALL"
        REF=$WORK/ref.csv
        if ! "$GQP" run -c "$CFG" --device cpu --mode csv "$ALL" >"$REF" 2>"$ERR"; then
            fail "$set: the CPU run failed"
            continue
        fi
        # the N-th device allocation of the process failing, once and from
        # the N-th on (later ones then fall back to the CPU too)
        for n in 1 2 3 5 8 13 21 34 55 89 144 233 377 610 987; do
            for spec in device:$n device:$n+; do
                runs=$((runs + 1))
                GQP_FAIL_ALLOC=$spec GQP_OOM_FALLBACK=1 "$GQP" run -c "$CFG" --device gpu \
                    --mode csv "$ALL" >"$OUT" 2>"$ERR" && same "$REF" ||
                    fail "$set on the GPU with $spec failing (CPU fallback on)"
            done
        done
        for spec in device:1+ device:4 device:40; do
            runs=$((runs + 1))
            GQP_FAIL_ALLOC=$spec "$GQP" run -c "$CFG" --device auto --mode csv "$ALL" >"$OUT" \
                2>"$ERR" && same "$REF" || fail "$set under auto with $spec failing"
        done
        for dev in gpu auto; do
            runs=$((runs + 1))
            { echo "SET memory_limit = '1MB';"; cat "$ALL"; } >"$WORK/limited.sql"
            GQP_OOM_FALLBACK=1 "$GQP" run -c "$CFG" --device $dev --mode csv "$WORK/limited.sql" \
                >"$OUT" 2>"$ERR" && same "$REF" || fail "$set on $dev under memory_limit 1MB"
        done
        q=$(ls "$SRC"/tests/$set/queries/*.sql | head -1)
        sql=$(cat "$q")
        if "$GQP" run -c "$CFG" --device gpu --mode csv -e "SET memory_limit = '1MB'; $sql" \
            >"$OUT" 2>"$ERR"; then
            fail "$q: --device gpu under memory_limit 1MB answered (expected an out-of-memory)"
        elif ! grep -q "bytes needed, [0-9]* available under memory_limit" "$ERR"; then
            fail "$q: --device gpu's out-of-memory error does not name needed/available bytes"
        fi
        GQP_FAIL_ALLOC=device:1+ GQP_OOM_FALLBACK=1 "$GQP" explain --analyze -c "$CFG" \
            --device gpu "$q" >"$OUT" 2>"$ERR" ||
            fail "$q: EXPLAIN ANALYZE with every device allocation failing"
        grep -q "ran on the CPU after a device out-of-memory" "$OUT" ||
            fail "$q: EXPLAIN ANALYZE does not say a node ran on the CPU after an out-of-memory"
        continue
    fi
    for q in "$SRC"/tests/$set/queries/*.sql; do
        name=$set/$(basename "$q" .sql)
        REF=$WORK/ref.csv
        if ! "$GQP" run -c "$CFG" --device cpu --mode csv "$q" >"$REF" 2>"$ERR"; then
            fail "$name: the CPU run failed"
            continue
        fi
        for n in 1 2 3 5 8 16 40; do
            runs=$((runs + 1))
            GQP_FAIL_ALLOC=host:$n "$GQP" run -c "$CFG" --device auto --mode csv "$q" \
                >"$OUT" 2>"$ERR"
            rc=$?
            if [ $rc -eq 0 ]; then
                same "$REF" || fail "$name with host allocation $n failing: another answer"
            elif [ $rc -ge 128 ] || ! grep -q "out of memory" "$ERR"; then
                fail "$name with host allocation $n failing: exit $rc, not an out-of-memory error"
            else
                ooms=$((ooms + 1))
            fi
        done
    done
done
echo "check.sh $MODE: $runs runs, $ooms out-of-memory errors, $fails failures"
[ $fails -eq 0 ]
