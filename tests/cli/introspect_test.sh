#!/bin/sh
# introspect_test.sh GQP_BINARY WORKDIR
#
# The real `gqp` binary on issue 14's items 2 and 6: SHOW TABLES / DESCRIBE /
# PRAGMA / EXPLAIN through `gqp run`; `gqp explain FILE` explaining every
# query of a script (SET, DDL and DML executed on the way); `--help` of
# each subcommand; `gqp calibrate` writing the user's cost file (created
# folders, a temporary XDG_CONFIG_HOME / HOME, --max-rows 1000 so it takes
# well under a second), failing before measuring when the output cannot be
# written, and later runs finding the file; a named but missing cost file
# is an error naming it. Prints one line per failed check; exit 1 if any
# failed.
set -u

if [ $# -ne 2 ]; then
    echo "usage: introspect_test.sh GQP_BINARY WORKDIR" >&2
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
# no calibrated file of the person running the tests may leak in
export XDG_CONFIG_HOME="$W/xdg-none"
unset GQP_COST_FILE GQP_CONFIG

fail() {
    fails=$((fails + 1))
    echo "FAIL: $1"
    echo "  --- stdout:"
    sed 's/^/  | /' "$OUT" | head -20
    echo "  --- stderr:"
    sed 's/^/  | /' "$ERR" | head -20
}

run() {
    "$GQP" "$@" >"$OUT" 2>"$ERR"
    rc=$?
    checks=$((checks + 1))
}

expect_rc() {
    [ "$rc" -eq "$2" ] || fail "$1: exit status $rc, expected $2"
}

expect_in() {
    grep -qF -- "$3" "$2" || fail "$1: $(basename "$2") lacks '$3'"
}

expect_not_in() {
    grep -qF -- "$3" "$2" && fail "$1: $(basename "$2") has '$3'"
}

# expect_out NAME TEXT: stdout is exactly TEXT (printf %s, plus a newline).
expect_out() {
    printf '%s\n' "$2" >"$W/want.txt"
    if ! cmp -s "$W/want.txt" "$OUT"; then
        fail "$1: output differs"
        diff "$W/want.txt" "$OUT" | head -20 | sed 's/^/  /'
    fi
}

# ---- --help of every subcommand: usage on stdout, status 0 ----
for sub in run explain calibrate gen; do
    run "$sub" --help
    expect_rc "$sub --help" 0
    expect_in "$sub --help" "$OUT" "gqp $sub"
    run "$sub" -h
    expect_rc "$sub -h" 0
done

# ---- SQL-level introspection through gqp run ----
DDL="CREATE TABLE zeta(a INTEGER, b VARCHAR, c DECIMAL(15,2)); CREATE TABLE alpha(d DATE);
CREATE VIEW mid AS SELECT a, b FROM zeta"
run run --device cpu --mode csv -e "$DDL; SHOW TABLES"
expect_rc "SHOW TABLES" 0
expect_out "SHOW TABLES" "name
alpha
mid
zeta"
run run --device cpu --mode csv -e "$DDL; DESCRIBE zeta; DESCRIBE mid"
expect_rc "DESCRIBE" 0
expect_out "DESCRIBE" 'column_name,column_type,null,key,default,extra
a,BIGINT,YES,,,
b,VARCHAR,YES,,,
c,"DECIMAL(15,2)",YES,,,
column_name,column_type,null,key,default,extra
a,BIGINT,YES,,,
b,VARCHAR,YES,,,'
run run --device cpu --mode csv -e "$DDL; PRAGMA table_info(alpha); PRAGMA table_info(nosuch)"
expect_rc "PRAGMA table_info" 0
expect_out "PRAGMA table_info" "cid,name,type,notnull,dflt_value,pk
0,d,DATE,0,,0
cid,name,type,notnull,dflt_value,pk"
run run --device cpu -e "DESCRIBE nosuch"
expect_rc "DESCRIBE nosuch" 1
expect_in "DESCRIBE nosuch" "$ERR" "Catalog Error: Table with name nosuch does not exist!"

# EXPLAIN as a statement: one row per line of `gqp explain`'s text
Q="SELECT b, COUNT(*) FROM zeta WHERE a > 1 GROUP BY b"
run explain --device cpu -e "$DDL; $Q"
expect_rc "explain -e with DDL first" 0
cp "$OUT" "$W/plan.txt"
run run --device cpu --mode json -e "$DDL; EXPLAIN $Q"
expect_rc "EXPLAIN statement" 0
python3 - "$OUT" "$W/plan.txt" <<'PY' || fail "EXPLAIN rows differ from gqp explain's lines"
import json, sys
rows = json.load(open(sys.argv[1]))
want = open(sys.argv[2]).read().rstrip("\n").split("\n")
got = [r["explain"] for r in rows]
sys.exit(0 if got == want else 1)
PY
run run --device cpu --mode csv -e "$DDL; INSERT INTO zeta VALUES (2, 'x', 1.5); EXPLAIN ANALYZE $Q"
expect_rc "EXPLAIN ANALYZE statement" 0
expect_in "EXPLAIN ANALYZE statement" "$OUT" "result rows: 1,"
echo "EXPLAIN SELECT 1;" | "$GQP" run --mode csv - >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_rc "EXPLAIN from stdin" 0
expect_in "EXPLAIN from stdin" "$OUT" "primitive DAG"

# ---- gqp explain FILE: every query; SET, DDL and DML run on the way ----
cat >"$W/script.sql" <<'SQL'
SET threads = 2;
SET aggregate = 'dense';
CREATE TABLE t(a INTEGER, b TEXT);
INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'x');
SELECT b, SUM(a) FROM t GROUP BY b;
-- a comment between statements
SELECT COUNT(*) FROM t WHERE a > 1;
SQL
run explain --device cpu "$W/script.sql"
expect_rc "explain FILE" 0
n=$(grep -c "^primitive DAG" "$OUT")
[ "$n" -eq 2 ] || fail "explain FILE: $n plans, expected 2"
# SET aggregate = 'dense' took effect (a 3-row GROUP BY is planned as a
# sort otherwise)
expect_in "explain FILE after SET" "$OUT" "dense-aggregate"
# the INSERT ran: the estimates see its 3 rows
expect_in "explain FILE after INSERT" "$OUT" "est_rows=3"
run explain --device cpu --analyze "$W/script.sql"
expect_rc "explain --analyze FILE" 0
n=$(grep -c "^result rows:" "$OUT")
[ "$n" -eq 2 ] || fail "explain --analyze FILE: $n results, expected 2"
run explain --device cpu --format json "$W/script.sql"
expect_rc "explain --format json FILE" 0
n=$(grep -c '"nodes"' "$OUT")
[ "$n" -eq 2 ] || fail "explain --format json FILE: $n plans, expected 2"
# an error in a later statement stops there, after the earlier plans
printf 'SELECT 1;\nSELECT nosuch FROM nowhere;\nSELECT 2;\n' >"$W/bad.sql"
run explain --device cpu "$W/bad.sql"
expect_rc "explain FILE with an error" 1
expect_in "explain FILE with an error" "$ERR" "nowhere"
n=$(grep -c "^primitive DAG" "$OUT")
[ "$n" -eq 1 ] || fail "explain FILE with an error: $n plans before it, expected 1"
run explain --device cpu -e "CREATE TABLE x(a INT)"
expect_rc "explain without a query" 1
expect_in "explain without a query" "$ERR" "no query to explain"

# ---- gqp calibrate and the user's cost file ----
X=$W/cfg/deeper # a folder that does not exist yet
XDG_CONFIG_HOME=$X "$GQP" calibrate --max-rows 1000 --threads 1 >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_rc "calibrate into XDG_CONFIG_HOME" 0
[ -s "$X/gqp/cost-local.yaml" ] || fail "calibrate: no $X/gqp/cost-local.yaml"
expect_in "calibrate says where" "$OUT" "wrote $X/gqp/cost-local.yaml"
ls "$X/gqp" | grep -q tmp && fail "calibrate left a temporary file in $X/gqp"
XDG_CONFIG_HOME=$X "$GQP" explain --device cpu -e "SELECT 1" >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_rc "explain with the user's cost file" 0
expect_in "the user's cost file is found" "$ERR" "cost model: $X/gqp/cost-local.yaml"
# without XDG_CONFIG_HOME (or with a relative one): ~/.config/gqp
H=$W/home
mkdir -p "$H"
HOME=$H XDG_CONFIG_HOME=relative "$GQP" calibrate --max-rows 1000 --threads 1 >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_rc "calibrate into HOME" 0
[ -s "$H/.config/gqp/cost-local.yaml" ] || fail "calibrate: no $H/.config/gqp/cost-local.yaml"
HOME=$H XDG_CONFIG_HOME= "$GQP" explain --device cpu -e "SELECT 1" >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_in "HOME's cost file is found" "$ERR" "cost model: $H/.config/gqp/cost-local.yaml"
# a config's cost_file still comes first
cp "$X/gqp/cost-local.yaml" "$W/named.yaml"
printf 'device:\n  cost_file: named.yaml\n' >"$W/named-cfg.yaml"
XDG_CONFIG_HOME=$X "$GQP" explain -c "$W/named-cfg.yaml" --device cpu -e "SELECT 1" >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_in "config cost_file first" "$ERR" "cost model: $W/named.yaml"
# an output that cannot be written fails before measuring anything
touch "$W/plainfile"
run calibrate --max-rows 1000 --out "$W/plainfile/sub/cost.yaml"
expect_rc "calibrate into an impossible folder" 1
expect_in "calibrate into an impossible folder" "$ERR" "cannot write $W/plainfile/sub/cost.yaml"
expect_not_in "calibrate into an impossible folder" "$ERR" "cpu map"
run calibrate --max-rows 1000 --threads 1 --out "$W/new/dir/c.yaml"
expect_rc "calibrate --out into a new folder" 0
[ -s "$W/new/dir/c.yaml" ] || fail "calibrate --out: no $W/new/dir/c.yaml"

# ---- a cost file named but missing is an error naming it ----
GQP_COST_FILE=$W/missing.yaml "$GQP" run -e "SELECT 1" >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_rc "GQP_COST_FILE missing" 1
expect_in "GQP_COST_FILE missing" "$ERR" "$W/missing.yaml"
GQP_COST_FILE=$W/named.yaml "$GQP" explain --device cpu -e "SELECT 1" >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_in "GQP_COST_FILE used" "$ERR" "cost model: $W/named.yaml"
printf 'device:\n  cost_file: no-such-cost.yaml\n' >"$W/missing-cfg.yaml"
run run -c "$W/missing-cfg.yaml" -e "SELECT 1"
expect_rc "config cost_file missing" 1
expect_in "config cost_file missing" "$ERR" "no-such-cost.yaml"
expect_in "config cost_file missing" "$ERR" "cost_file"
printf 'name: [broken\n' >"$W/broken.yaml"
GQP_COST_FILE=$W/broken.yaml "$GQP" run -e "SELECT 1" >"$OUT" 2>"$ERR"
rc=$?
checks=$((checks + 1))
expect_rc "GQP_COST_FILE malformed" 1
expect_in "GQP_COST_FILE malformed" "$ERR" "$W/broken.yaml"

echo "introspect_test: $checks commands, $fails failed checks"
[ $fails -eq 0 ]
