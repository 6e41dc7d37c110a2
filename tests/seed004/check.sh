#!/bin/sh
# check.sh GQP_BINARY WORKDIR [ROWS]
#
# Seed 004's 13 queries (queries/q01.sql .. q13.sql) on the generated table
# `test`, checked against sqlite3. Generates ROWS rows (default 1000000) with
# `gqp gen test` into WORKDIR/data (times $GQP_TEST_SCALE when set and ROWS
# is not given), loads the same CSV into sqlite3
# (WORKDIR/ref.db, INTEGER/REAL columns), runs every query in both (gqp with
# --mode csv) and compares the answers: as multisets of rows for queries
# without ORDER BY, numbers equal within 1e-6 relative. Also checks that
# `gqp explain` prints a DAG for each query (a map node for the filters, a
# reduce or dense-aggregate node for the aggregates). Exit 0 if all agree, 1 otherwise, naming
# each query that failed.
set -u

if [ $# -lt 2 ]; then
    echo "usage: check.sh GQP_BINARY WORKDIR [ROWS]" >&2
    exit 1
fi
GQP=$1
WORK=$2
ROWS=${3:-1000000}
# under sanitizers (scripts/test-sanitize.sh) GQP_TEST_SCALE shrinks the table
if [ $# -lt 3 ] && [ -n "${GQP_TEST_SCALE:-}" ]; then
    ROWS=$(awk -v r="$ROWS" -v f="$GQP_TEST_SCALE" 'BEGIN { n = int(r * f); if (n < 10000) n = 10000; print n }')
fi
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$WORK/data
REF=$WORK/ref.db

command -v sqlite3 >/dev/null 2>&1 || { echo "check.sh: sqlite3 not found" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "check.sh: python3 not found" >&2; exit 1; }

mkdir -p "$WORK" || exit 1
rm -rf "$DATA" "$REF"
"$GQP" gen test --rows "$ROWS" --out "$DATA" || { echo "FAIL: gqp gen test" >&2; exit 1; }
[ -f "$DATA/test.csv" ] && [ -f "$DATA/gqp.yaml" ] ||
    { echo "FAIL: gqp gen test did not write test.csv and gqp.yaml" >&2; exit 1; }

sqlite3 "$REF" <<EOF || { echo "FAIL: loading the CSV into sqlite3" >&2; exit 1; }
CREATE TABLE test(id INTEGER, uniformi INTEGER, normali5 INTEGER, normali20 INTEGER,
                  uniformf REAL, normalf5 REAL, normalf20 REAL);
.import --csv --skip 1 $DATA/test.csv test
EOF
n=$(sqlite3 "$REF" "SELECT COUNT(*) FROM test")
if [ "$n" != "$ROWS" ]; then
    echo "FAIL: sqlite3 loaded $n rows, expected $ROWS" >&2
    exit 1
fi

# compare EXPECTED GOT ORDERED: rows of sqlite3's csv (no header) against
# gqp's csv (header first); ORDERED=1 keeps the row order.
compare() {
    python3 - "$1" "$2" "$3" <<'EOF'
import sys

exp_path, got_path, ordered = sys.argv[1], sys.argv[2], sys.argv[3] == "1"


def rows(path, skip_header):
    with open(path) as f:
        lines = [l.rstrip("\r\n") for l in f]
    if skip_header:
        if not lines:
            sys.exit("gqp printed no header line")
        lines = lines[1:]
    out = []
    for l in lines:
        row = []
        for v in l.split(","):
            try:
                row.append(float(v) if v != "" else None)
            except ValueError:
                row.append(v)
        out.append(row)
    return out


def key(r):
    return [(0, 0.0) if v is None else (1, v) if isinstance(v, float) else (2, v) for v in r]


exp = rows(exp_path, False)
got = rows(got_path, True)
if len(exp) != len(got):
    sys.exit("row count: sqlite3 %d, gqp %d" % (len(exp), len(got)))
if not ordered:
    exp.sort(key=key)
    got.sort(key=key)
bad = 0
for i, (e, g) in enumerate(zip(exp, got)):
    same = len(e) == len(g)
    for a, b in zip(e, g):
        if isinstance(a, float) and isinstance(b, float):
            same = same and abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-300)
        else:
            same = same and a == b
    if not same:
        bad += 1
        if bad <= 5:
            print("  row %d: sqlite3 %s, gqp %s" % (i + 1, e, g))
if bad:
    sys.exit("%d rows differ" % bad)
print("  %d rows agree" % len(exp))
EOF
}

status=0
for q in "$HERE"/queries/q*.sql; do
    name=$(basename "$q" .sql)
    exp=$WORK/$name.sqlite.csv
    got=$WORK/$name.gqp.csv
    echo "$name: $(grep -v '^--' "$q")"
    if ! sqlite3 -csv "$REF" <"$q" >"$exp"; then
        echo "FAIL $name: sqlite3 failed" >&2
        status=1
        continue
    fi
    if ! "$GQP" run -c "$DATA/gqp.yaml" --device cpu --mode csv "$q" >"$got" 2>"$WORK/$name.err"; then
        echo "FAIL $name: gqp run failed:" >&2
        cat "$WORK/$name.err" >&2
        status=1
        continue
    fi
    ordered=0
    grep -qi 'order by' "$q" && ordered=1
    if ! compare "$exp" "$got" "$ordered"; then
        echo "FAIL $name: results differ from sqlite3" >&2
        status=1
    fi
    if ! "$GQP" explain -c "$DATA/gqp.yaml" "$q" >"$WORK/$name.plan" 2>&1; then
        echo "FAIL $name: gqp explain failed:" >&2
        cat "$WORK/$name.plan" >&2
        status=1
        continue
    fi
    case $name in
    q1[123]) want='reduce|aggregate' ;;
    *) want=map ;;
    esac
    if ! grep -qiE "$want" "$WORK/$name.plan"; then
        echo "FAIL $name: gqp explain printed no '$want' node:" >&2
        cat "$WORK/$name.plan" >&2
        status=1
    fi
done
if [ $status -eq 0 ]; then
    echo "seed004: all 13 queries agree with sqlite3 on $ROWS rows"
else
    echo "seed004: FAILED" >&2
fi
exit $status
