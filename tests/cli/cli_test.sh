#!/bin/sh
# cli_test.sh GQP_BINARY WORKDIR
#
# Runs the real `gqp` binary and checks its output and exit status (in the
# manner of SQLite's shell1.test): help and version, `run -e` on a small
# generated table (answers from sqlite3), the exact text of every output mode,
# --timer, stdin scripts, `explain` in each format, and the error paths
# (parser, binder, bad CSV row, bad YAML, --device gpu without a GPU, missing
# file, usage errors, gen tpch's usage errors and its message without
# python3). Prints one line per failed check; exit 1 if any
# failed.
set -u

if [ $# -ne 2 ]; then
    echo "usage: cli_test.sh GQP_BINARY WORKDIR" >&2
    exit 1
fi
GQP=$1
W=$2
case $GQP in /*) ;; *) GQP=$(pwd)/$GQP ;; esac
rm -rf "$W"
mkdir -p "$W" || exit 1
OUT=$W/out.txt
ERR=$W/err.txt
fails=0
checks=0

# fail MESSAGE: record a failed check and show what the command printed.
fail() {
    fails=$((fails + 1))
    echo "FAIL: $1"
    echo "  --- stdout:"
    sed 's/^/  | /' "$OUT" | head -20
    echo "  --- stderr:"
    sed 's/^/  | /' "$ERR" | head -20
}

# run ARGS...: run gqp with stdout/stderr captured; sets $rc.
run() {
    "$GQP" "$@" >"$OUT" 2>"$ERR"
    rc=$?
    checks=$((checks + 1))
}

# expect_rc NAME CODE: the last run exited with CODE.
expect_rc() {
    [ "$rc" -eq "$2" ] || fail "$1: exit status $rc, expected $2"
}

# expect_in NAME FILE FIXED_STRING: FILE contains the string.
expect_in() {
    grep -qF -- "$3" "$2" || fail "$1: $(basename "$2") lacks '$3'"
}

# expect_re NAME FILE REGEX: FILE has a line matching the extended regex.
expect_re() {
    grep -qE -- "$3" "$2" || fail "$1: $(basename "$2") has no line matching /$3/"
}

# expect_text NAME EXPECTED_FILE: stdout equals the file exactly.
expect_text() {
    if ! cmp -s "$2" "$OUT"; then
        fail "$1: output differs from the expected text"
        diff "$2" "$OUT" | head -20 | sed 's/^/  /'
    fi
}

# ---- help, version, usage errors ----
run --help
expect_rc "--help" 0
expect_in "--help" "$OUT" "gqp run"
expect_in "--help" "$OUT" "gqp explain"
run --version
expect_rc "--version" 0
expect_re "--version" "$OUT" '^gqp [0-9]'
# no arguments and no terminal: the shell reads SQL from stdin (here none)
"$GQP" </dev/null >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_rc "no arguments, empty stdin" 0
[ -s "$OUT" ] && fail "no arguments, empty stdin: printed something"
printf 'SELECT 6 * 7 AS x;\n' | "$GQP" --mode csv >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_rc "SQL piped into gqp" 0
printf 'x\n42\n' >"$W/piped.csv"
expect_text "SQL piped into gqp" "$W/piped.csv"
run frobnicate
expect_rc "unknown command" 1
expect_in "unknown command" "$ERR" "frobnicate"
run shell --bogus
expect_rc "shell: unknown option" 1
run run
expect_rc "run without SQL" 1
run run --mode xml -e "SELECT 1"
expect_rc "bad --mode" 1
run run --device tpu -e "SELECT 1"
expect_rc "bad --device" 1

# ---- gen test and run -e on the generated table ----
run gen test --rows 50 --out "$W/gen" --seed 7
expect_rc "gen test" 0
expect_in "gen test" "$OUT" "$W/gen"
[ -f "$W/gen/test.csv" ] && [ -f "$W/gen/gqp.yaml" ] || fail "gen test: files missing"
sqlite3 "$W/gen.db" <<EOF
CREATE TABLE test(id INTEGER, uniformi INTEGER, normali5 INTEGER, normali20 INTEGER,
                  uniformf REAL, normalf5 REAL, normalf20 REAL);
.import --csv --skip 1 $W/gen/test.csv test
EOF
Q1="SELECT COUNT(*), MIN(id), MAX(id), SUM(uniformi) FROM test WHERE normali5 < 3"
sqlite3 -csv "$W/gen.db" "$Q1" | tr -d '\r' >"$W/q1.expected"
run run -c "$W/gen/gqp.yaml" --mode csv -e "$Q1"
expect_rc "run -e on generated table" 0
tail -n +2 "$OUT" >"$W/q1.got"
cmp -s "$W/q1.expected" "$W/q1.got" ||
    fail "run -e: gqp says '$(cat "$W/q1.got")', sqlite3 says '$(cat "$W/q1.expected")'"

Q2="SELECT id, uniformi FROM test WHERE id < 5 ORDER BY id DESC"
sqlite3 -csv "$W/gen.db" "$Q2" | tr -d '\r' >"$W/q2.expected"
GQP_CONFIG=$W/gen/gqp.yaml "$GQP" run --mode csv -e "$Q2" >"$OUT" 2>"$ERR"
rc=$?
expect_rc "run with GQP_CONFIG" 0
tail -n +2 "$OUT" | cmp -s "$W/q2.expected" - || fail "run with GQP_CONFIG: rows differ from sqlite3"
(cd "$W/gen" && "$GQP" run --mode csv -e "$Q2") >"$OUT" 2>"$ERR"
rc=$?
expect_rc "run with ./gqp.yaml" 0
tail -n +2 "$OUT" | cmp -s "$W/q2.expected" - || fail "run with ./gqp.yaml: rows differ from sqlite3"

# ---- output modes: exact text ----
SETUP="CREATE TABLE t(a INTEGER, b TEXT, c REAL);
INSERT INTO t VALUES (1, 'x', 2.5), (2, NULL, NULL), (10, 'hello, \"w\"', -1.25);"
Q3="SELECT a, b, c FROM t ORDER BY a"
# The data, from sqlite3 (csv without header).
printf '%s\n%s;\n' "$SETUP" "$Q3" | sqlite3 -csv | tr -d '\r' >"$W/modes.sqlite"
cat >"$W/modes.csv" <<'EOF'
a,b,c
1,x,2.5
2,,
10,"hello, ""w""",-1.25
EOF
tail -n +2 "$W/modes.csv" | cmp -s "$W/modes.sqlite" - ||
    fail "csv mode: the hand-written expectation disagrees with sqlite3"
cat >"$W/modes.table" <<'EOF'
┌───────┬────────────┬────────┐
│   a   │     b      │   c    │
│ int64 │  varchar   │ double │
├───────┼────────────┼────────┤
│     1 │ x          │    2.5 │
│     2 │ NULL       │   NULL │
│    10 │ hello, "w" │  -1.25 │
└───────┴────────────┴────────┘
EOF
# one statement's result is one line (several statements: newline-delimited JSON)
cat >"$W/modes.json" <<'EOF'
[{"a":1,"b":"x","c":2.5},{"a":2,"b":null,"c":null},{"a":10,"b":"hello, \"w\"","c":-1.25}]
EOF
cat >"$W/modes.markdown" <<'EOF'
| a | b | c |
|---:|---|---:|
| 1 | x | 2.5 |
| 2 | NULL | NULL |
| 10 | hello, "w" | -1.25 |
EOF
for mode in table csv json markdown; do
    run run --mode "$mode" -e "$SETUP $Q3;"
    expect_rc "--mode $mode" 0
    expect_text "--mode $mode" "$W/modes.$mode"
done
run run -e "$SETUP $Q3;"
expect_rc "default mode" 0
expect_text "default mode is table" "$W/modes.table"

# Empty result: header only in csv, [] in json.
run run --mode csv -e "CREATE TABLE e(x INTEGER); SELECT x FROM e;"
expect_rc "empty result csv" 0
printf 'x\n' >"$W/empty.csv"
expect_text "empty result csv" "$W/empty.csv"
run run --mode json -e "CREATE TABLE e(x INTEGER); SELECT x FROM e;"
printf '[]\n' >"$W/empty.json"
expect_text "empty result json" "$W/empty.json"

# Several statements from stdin, --timer on stderr.
printf '%s\n%s;\nSELECT COUNT(*) AS n FROM t;\n' "$SETUP" "$Q3" >"$W/script.sql"
"$GQP" run --mode csv --timer - <"$W/script.sql" >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_rc "stdin script" 0
printf 'n\n3\n' >"$W/count.csv"
tail -n 2 "$OUT" | cmp -s "$W/count.csv" - || fail "stdin script: last result is not n=3"
expect_re "--timer" "$ERR" '^Run Time: [0-9.]+ ms$'
[ "$(grep -c '^Run Time:' "$ERR")" -eq 4 ] || fail "--timer: expected one Run Time line per statement (4)"
run run --mode csv "$W/script.sql"
expect_rc "run FILE" 0
tail -n 2 "$OUT" | cmp -s "$W/count.csv" - || fail "run FILE: last result is not n=3"

# ---- explain ----
QE="SELECT id FROM test WHERE uniformi > 60"
run explain -c "$W/gen/gqp.yaml" -e "$QE"
expect_rc "explain" 0
[ -s "$OUT" ] || fail "explain: empty output"
run explain -c "$W/gen/gqp.yaml" --format json -e "$QE"
expect_rc "explain --format json" 0
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT" 2>/dev/null ||
    fail "explain --format json: output is not JSON"
run explain -c "$W/gen/gqp.yaml" --format dot -e "$QE"
expect_rc "explain --format dot" 0
expect_in "explain --format dot" "$OUT" "digraph"
run explain -c "$W/gen/gqp.yaml" --analyze -e "$QE"
expect_rc "explain --analyze" 0
run explain -c "$W/gen/gqp.yaml" -e "SELECT id FORM test"
expect_rc "explain of bad SQL" 1

# ---- errors ----
run run -c "$W/gen/gqp.yaml" -e "SELECT id FORM test"
expect_rc "parser error" 1
expect_in "parser error" "$ERR" 'Parser Error: syntax error at or near "FORM"'
expect_in "parser error" "$ERR" "LINE 1:"
expect_re "parser error caret" "$ERR" '^ *\^ *$'

run run -c "$W/gen/gqp.yaml" -e "SELECT id, nosuchcol FROM test"
expect_rc "binder error" 1
expect_in "binder error" "$ERR" "Binder Error:"
expect_in "binder error" "$ERR" "nosuchcol"
expect_re "binder error caret" "$ERR" '^ *\^ *$'

mkdir -p "$W/badcsv"
printf 'id,qty\n1,10\n2,abc\n3,30\n' >"$W/badcsv/bad.csv"
cat >"$W/badcsv/gqp.yaml" <<'EOF'
tables:
  - name: items
    source: bad.csv
    format: csv
    header: true
    columns:
      - {name: id, type: INT32}
      - {name: qty, type: INT32}
EOF
run run -c "$W/badcsv/gqp.yaml" -e "SELECT 1"
expect_rc "bad CSV row" 1
expect_in "bad CSV row" "$ERR" "Catalog Error:"
expect_in "bad CSV row" "$ERR" "bad.csv"
expect_re "bad CSV row line number" "$ERR" 'bad\.csv:3|line 3'
expect_in "bad CSV row column" "$ERR" "qty"

mkdir -p "$W/badyaml"
printf 'tables:\n  - name: items\n\tsource: bad.csv\n' >"$W/badyaml/broken.yaml"
run run -c "$W/badyaml/broken.yaml" -e "SELECT 1"
expect_rc "bad YAML" 1
expect_in "bad YAML" "$ERR" "Catalog Error:"
expect_in "bad YAML file:line" "$ERR" "broken.yaml:3"

# A header is matched to the config's columns by name (issue 13 item 9):
# the file lists price before qty, the config qty before price; an extra
# file column is skipped; a config column missing from the header is an
# error naming file:line and the column.
mkdir -p "$W/hdr"
printf 'price,note,QTY\n2.5,a,4\n10,b,1\n' >"$W/hdr/items.csv"
cat >"$W/hdr/gqp.yaml" <<'EOF'
tables:
  - name: items
    source: items.csv
    header: true
    columns:
      - {name: qty, type: INT32}
      - {name: price, type: FLOAT64}
EOF
run run -c "$W/hdr/gqp.yaml" --mode csv -e "SELECT SUM(qty), SUM(qty * price) FROM items"
expect_rc "header by name" 0
expect_in "header by name" "$OUT" "5,20.0"
printf 'price,quantity\n2.5,4\n' >"$W/hdr/items.csv"
run run -c "$W/hdr/gqp.yaml" -e "SELECT 1"
expect_rc "header lacks a column" 1
expect_in "header lacks a column" "$ERR" "Catalog Error:"
expect_in "header lacks a column file:line" "$ERR" "items.csv:1:"
expect_in "header lacks a column name" "$ERR" "'qty'"

# Malformed text files: a clear Catalog Error with file:line, no table.
mkdir -p "$W/mal"
cat >"$W/mal/gqp.yaml" <<'EOF'
tables:
  - name: m
    source: m.csv
    columns:
      - {name: a, type: INT32}
      - {name: s, type: TEXT}
EOF
for case in 'nul|1,x\n2,a\000b\n|m.csv:2:|NUL' \
    'utf8|1,x\n2,a\377b\n|m.csv:2:|UTF-8' \
    'quote|1,"x\n2,y\n|m.csv:1:|unterminated' \
    'fewer|1,x\n2\n|m.csv:2:|missing value' \
    'more|1,x\r\n2,y,z\r\n|m.csv:2:|extra value'; do
    name=${case%%|*}
    rest=${case#*|}
    body=${rest%%|*}
    rest=${rest#*|}
    where=${rest%%|*}
    what=${rest#*|}
    printf "$body" >"$W/mal/m.csv"
    run run -c "$W/mal/gqp.yaml" -e "SELECT COUNT(*) FROM m"
    expect_rc "malformed csv $name" 1
    expect_in "malformed csv $name" "$ERR" "Catalog Error: "
    expect_in "malformed csv $name file:line" "$ERR" "$where"
    expect_in "malformed csv $name reason" "$ERR" "$what"
done
printf '1,x\r\n2,"y"' >"$W/mal/m.csv"
run run -c "$W/mal/gqp.yaml" --mode csv -e "SELECT COUNT(*), MAX(s) FROM m"
expect_rc "CRLF, no final newline" 0
expect_in "CRLF, no final newline" "$OUT" "2,y"

# DECIMAL prints exactly its scale's digits (DuckDB's text: -0.50, 0.00),
# as a number in JSON and right-aligned in markdown.
DEC="CREATE TABLE m(x DECIMAL(15,2)); INSERT INTO m VALUES (-0.5), (0), (1234.567); SELECT x, x * x AS y FROM m ORDER BY x;"
run run --mode csv -e "$DEC"
printf 'x,y\n-0.50,0.2500\n0.00,0.0000\n1234.57,1524163.0849\n' >"$W/dec.csv"
expect_text "decimal csv" "$W/dec.csv"
run run --mode json -e "$DEC"
printf '[{"x":-0.50,"y":0.2500},{"x":0.00,"y":0.0000},{"x":1234.57,"y":1524163.0849}]\n' >"$W/dec.json"
expect_text "decimal json" "$W/dec.json"
run run --mode markdown -e "$DEC"
expect_in "decimal markdown" "$OUT" "|---:|---:|"
expect_in "decimal markdown" "$OUT" "| -0.50 | 0.2500 |"
run run --mode table -e "$DEC"
expect_in "decimal table" "$OUT" "decimal"
expect_in "decimal table" "$OUT" "   -0.50 "

run run -c "$W/nonexistent.yaml" -e "SELECT 1"
expect_rc "missing config" 1
run run "$W/nonexistent.sql"
expect_rc "missing SQL file" 1
expect_in "missing SQL file" "$ERR" "nonexistent.sql"

if "$GQP" --version | grep -q "GPU available"; then
    run run --device gpu -e "SELECT 1"
    expect_rc "--device gpu with a GPU" 0
else
    run run --device gpu -e "SELECT 1"
    expect_rc "--device gpu without a GPU" 1
    expect_re "--device gpu message" "$ERR" '[Dd]evice|GPU|CUDA'
fi
run run --device cpu --threads 1 -e "SELECT 1"
expect_rc "--device cpu --threads 1" 0

# ---- gen tpch: usage errors, and the message without python3's duckdb ----
run gen tpch --out "$W/tpch"
expect_rc "gen tpch without --sf" 1
expect_in "gen tpch without --sf" "$ERR" "gen tpch needs --sf N"
run gen tpch --sf 0 --out "$W/tpch"
expect_rc "gen tpch --sf 0" 1
run gen tpch --sf 0.01 --bogus 1 --out "$W/tpch"
expect_rc "gen tpch unknown option" 1
GQP_PYTHON=$W/no-such-python "$GQP" gen tpch --sf 0.01 --out "$W/tpch" >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_rc "gen tpch without python3" 1
expect_in "gen tpch without python3" "$ERR" \
    "Error: gqp gen tpch needs python3 with duckdb==1.5.5 and duckdb-extension-tpch==1.5.5"

echo "cli_test: $checks commands, $fails failed checks"
[ $fails -eq 0 ]
