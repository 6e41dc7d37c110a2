#!/bin/sh
# check.sh GQP_BINARY WORKDIR [SF]
#
# The Star Schema Benchmark's 13 queries (queries/q1.1.sql .. q4.3.sql) on
# data from `gqp gen ssb --sf SF` (default 0.01), checked against sqlite3.
# Loads the generated .tbl files into sqlite3 (WORKDIR/ref.db, DDL from
# schema.sql), runs every query in sqlite3 and in gqp (--mode csv, config
# gqp.yaml = the binary-column folders) under --device cpu and auto, and gpu
# too when `gqp --version` reports a usable GPU, and compares the answers
# exactly (every SSB answer is integers and strings), in order for queries
# with ORDER BY. Prints a line per query and device with the row counts (at
# small SF some queries, Q3.4 especially, legitimately return no rows). Also
# checks that the .tbl config (gqp-tbl.yaml) loads the same row counts, and
# that `gqp explain` shows join (or keymap) nodes for Q2.1 and Q4.1. Exit 0 if all agree,
# 1 otherwise, naming each failure.
set -u

if [ $# -lt 2 ]; then
    echo "usage: check.sh GQP_BINARY WORKDIR [SF]" >&2
    exit 1
fi
GQP=$1
WORK=$2
SF=${3:-0.01}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$WORK/data
REF=$WORK/ref.db
TABLES="customer supplier part ddate lineorder"

command -v sqlite3 >/dev/null 2>&1 || { echo "check.sh: sqlite3 not found" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "check.sh: python3 not found" >&2; exit 1; }

mkdir -p "$WORK" || exit 1
rm -rf "$DATA" "$REF"
"$GQP" gen ssb --sf "$SF" --out "$DATA" || { echo "FAIL: gqp gen ssb" >&2; exit 1; }
for t in $TABLES; do
    [ -f "$DATA/$t.tbl" ] && [ -d "$DATA/bin/$t" ] ||
        { echo "FAIL: gqp gen ssb did not write $t.tbl and bin/$t" >&2; exit 1; }
done
[ -f "$DATA/gqp.yaml" ] && [ -f "$DATA/gqp-tbl.yaml" ] ||
    { echo "FAIL: gqp gen ssb did not write gqp.yaml and gqp-tbl.yaml" >&2; exit 1; }

# sqlite3's .import wants no trailing delimiter: strip it into WORK/<t>.psv.
{
    cat "$HERE/schema.sql"
    echo ".mode list"
    echo ".separator |"
    for t in $TABLES; do
        sed 's/|$//' "$DATA/$t.tbl" >"$WORK/$t.psv" || exit 1
        echo ".import $WORK/$t.psv $t"
    done
} | sqlite3 "$REF" || { echo "FAIL: loading the .tbl files into sqlite3" >&2; exit 1; }
rm -f "$WORK"/*.psv

status=0
# Row counts: sqlite3 against gqp on both configs.
for t in $TABLES; do
    n=$(sqlite3 "$REF" "SELECT COUNT(*) FROM $t")
    for cfg in gqp.yaml gqp-tbl.yaml; do
        g=$("$GQP" run -c "$DATA/$cfg" --device cpu --mode csv -e "SELECT COUNT(*) FROM $t" 2>&1 |
            tail -n 1)
        if [ "$g" != "$n" ]; then
            echo "FAIL: $t: sqlite3 has $n rows, gqp ($cfg) says $g" >&2
            status=1
        fi
    done
    echo "table $t: $n rows"
done

# compare EXPECTED GOT ORDERED: sqlite3's csv (no header) against gqp's csv
# (header first), exactly; ORDERED=1 keeps the row order. Prints the row
# counts; exits non-zero on a difference.
compare() {
    python3 - "$1" "$2" "$3" <<'EOF'
import csv
import sys

exp_path, got_path, ordered = sys.argv[1], sys.argv[2], sys.argv[3] == "1"


def rows(path, skip_header):
    with open(path, newline="") as f:
        out = [r for r in csv.reader(f)]
    if skip_header:
        if not out:
            sys.exit("gqp printed no header line")
        out = out[1:]
    return [[int(v) if v.lstrip("-").isdigit() else v for v in r] for r in out]


exp = rows(exp_path, False)
got = rows(got_path, True)
if len(exp) != len(got):
    sys.exit("row count: sqlite3 %d, gqp %d" % (len(exp), len(got)))
if not ordered:
    exp.sort(key=repr)
    got.sort(key=repr)
bad = 0
for i, (e, g) in enumerate(zip(exp, got)):
    if e != g:
        bad += 1
        if bad <= 5:
            print("  row %d: sqlite3 %s, gqp %s" % (i + 1, e, g))
if bad:
    sys.exit("%d of %d rows differ" % (bad, len(exp)))
print("%d rows agree" % len(exp))
EOF
}

devices="cpu auto"
"$GQP" --version 2>/dev/null | grep -q "GPU available" && devices="cpu auto gpu"
echo "devices: $devices"

nq=0
for q in "$HERE"/queries/q*.sql; do
    name=$(basename "$q" .sql)
    nq=$((nq + 1))
    exp=$WORK/$name.sqlite.csv
    if ! sqlite3 -csv "$REF" <"$q" >"$exp"; then
        echo "FAIL $name: sqlite3 failed" >&2
        status=1
        continue
    fi
    ordered=0
    grep -qi 'order by' "$q" && ordered=1
    for dev in $devices; do
        got=$WORK/$name.$dev.csv
        if ! GQP_DEVICE=$dev "$GQP" run -c "$DATA/gqp.yaml" --device "$dev" --mode csv "$q" \
            >"$got" 2>"$WORK/$name.$dev.err"; then
            echo "FAIL $name ($dev): gqp run failed:" >&2
            cat "$WORK/$name.$dev.err" >&2
            status=1
            continue
        fi
        if msg=$(compare "$exp" "$got" "$ordered" 2>&1); then
            echo "$name $dev: $msg"
        else
            echo "FAIL $name ($dev): results differ from sqlite3: $msg" >&2
            status=1
        fi
    done
done

# The star joins must show up in the plan: join nodes, or keymap nodes
# probed by a fused dense-aggregate.
for name in q2.1 q4.1; do
    plan=$WORK/$name.plan
    if ! "$GQP" explain -c "$DATA/gqp.yaml" "$HERE/queries/$name.sql" >"$plan" 2>&1; then
        echo "FAIL $name: gqp explain failed:" >&2
        cat "$plan" >&2
        status=1
    elif ! grep -qiE "join|keymap" "$plan"; then
        echo "FAIL $name: gqp explain printed no join node:" >&2
        cat "$plan" >&2
        status=1
    else
        echo "$name explain: $(grep -ciE 'join|keymap' "$plan") join/keymap lines"
    fi
done

if [ $status -eq 0 ]; then
    echo "ssb: all $nq queries agree with sqlite3 at SF $SF on: $devices"
else
    echo "ssb: FAILED" >&2
fi
exit $status
