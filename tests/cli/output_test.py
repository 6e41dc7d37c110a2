"""output_test.py GQP_BINARY WORKDIR -- the output rules of `gqp run --mode`
(docs/shell.md "Output modes"), checked on the real binary:

- table mode measures display width: East Asian wide characters take two
  columns, combining marks none, so every line of the box has the same
  width (measured here with Python's unicodedata, independently of gqp);
- a newline, tab or other control character inside a value is escaped
  ("\\n") so the box never breaks;
- more than 40 rows show the first and last 20, a row of dots and a count;
- json of several statements is newline-delimited JSON: every line parses;
- FLOAT64 values print with round-trip precision in csv and json: parsed
  back, they equal the double SQLite computes for the same expression.

Prints one line per failed check; exits 1 if any failed.
"""
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import unicodedata

GQP, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
fails = 0


def fail(msg, out=""):
    global fails
    fails += 1
    print("FAIL: " + msg)
    for line in out.splitlines()[:30]:
        print("  | " + line)


def gqp(mode, sql, *extra):
    """stdout of `gqp run --mode MODE -e SQL` (a failure is a failed check)."""
    p = subprocess.run([GQP, "run", "--device", "cpu", "--mode", mode, *extra, "-e", sql],
                       capture_output=True, text=True, encoding="utf-8")
    if p.returncode != 0:
        fail("gqp exited %d on %r: %s" % (p.returncode, sql, p.stderr.strip()))
    return p.stdout


def width(s):
    """Terminal columns of s: wide/fullwidth 2, combining and format 0."""
    w = 0
    for ch in s:
        if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


# ---- table mode: wide characters, combining marks, control characters ----
values = ["漢字", "ｆｕｌｌ", "e\u0301\u0301", "한국어 text", "a\nb\tc\x01", "plain", "😀"]
setup = "CREATE TABLE u(k TEXT, n INTEGER); INSERT INTO u VALUES " + ", ".join(
    "('%s', %d)" % (v.replace("'", "''"), i) for i, v in enumerate(values)) + ";"
out = gqp("table", setup + " SELECT k, n FROM u ORDER BY n;")
lines = out.rstrip("\n").split("\n")
if len(lines) != 5 + len(values):
    fail("table: %d lines, expected %d (a value broke the box?)" % (len(lines), 5 + len(values)),
         out)
widths = {width(l) for l in lines}
if len(widths) != 1:
    fail("table: box lines have different display widths %s" % sorted(widths), out)
if "a\\nb\\tc\\x01" not in out:
    fail("table: control characters are not escaped as \\n, \\t, \\x01", out)
for v in values:
    if "\n" not in v and v not in out:
        fail("table: value %r missing" % v, out)
# the exact box for one wide value, as DuckDB draws it
want = ("┌─────────┐\n"
        "│    k    │\n"
        "│ varchar │\n"
        "├─────────┤\n"
        "│ 漢字ab  │\n"
        "│ x       │\n"
        "└─────────┘\n")
got = gqp("table", "SELECT '漢字ab' AS k UNION ALL SELECT 'x' ORDER BY k DESC")
if got != want:
    fail("table: wide characters padded wrongly", got)

# ---- table mode: 1000 rows show the first and last 20 and a count ----
data = os.path.join(WORK, "gen")
subprocess.run([GQP, "gen", "test", "--rows", "1000", "--out", data, "--seed", "3"],
               check=True, capture_output=True)
out = gqp("table", "SELECT id FROM test ORDER BY id", "-c", os.path.join(data, "gqp.yaml"))
rows = [l.strip("│ ") for l in out.split("\n") if l.startswith("│")][2:]
ids = sorted(int(r) for r in rows if r.strip("·") != "")
first = sorted(int(r[0]) for r in csv.reader(io.StringIO(
    gqp("csv", "SELECT id FROM test ORDER BY id", "-c", os.path.join(data, "gqp.yaml"))))
    if r and r[0] != "id")
if ids != first[:20] + first[-20:]:
    fail("table: 1000 rows do not show the first and last 20", out)
if "1000 rows (40 shown)" not in out or not any("·" in r for r in rows):
    fail("table: no dots row or count line for 1000 rows", out)

# ---- json: several statements are newline-delimited JSON ----
out = gqp("json", "CREATE TABLE t(a INTEGER, s TEXT); INSERT INTO t VALUES (1, 'x\ny'), (2, NULL);"
          " SELECT a, s FROM t ORDER BY a; SELECT COUNT(*) AS n FROM t; SELECT a FROM t WHERE a > 5;")
docs = []
for i, line in enumerate(out.splitlines()):
    try:
        docs.append(json.loads(line))
    except ValueError as e:
        fail("json: line %d is not JSON (%s)" % (i + 1, e), out)
if docs != [[{"a": 1, "s": "x\ny"}, {"a": 2, "s": None}], [{"n": 2}], []]:
    fail("json: documents are %r" % (docs,), out)

# ---- floats round-trip through csv and json ----
exprs = ["0.1 + 0.2", "1.0 / 3", "2.0 / 3 * 1e300", "1e-300 / 7", "-123456.789e-5 * 3",
         "1.0 / 9 + 100", "0.5", "1e22", "4.35 * 100", "5e-324 * 3"]
sql = "SELECT " + ", ".join("%s AS c%d" % (e, i) for i, e in enumerate(exprs))
want = list(sqlite3.connect(":memory:").execute(sql).fetchone())
rows = list(csv.reader(io.StringIO(gqp("csv", sql))))
if len(rows) != 2:
    fail("csv: expected a header and one row", "\n".join(map(str, rows)))
else:
    for e, w, g in zip(exprs, want, rows[1]):
        if float(g) != w:
            fail("csv: %s printed as %s reads back as %r, SQLite's double is %r" % (e, g, float(g), w))
try:
    got = json.loads(gqp("json", sql).splitlines()[0])[0]
except (ValueError, IndexError) as e:
    fail("json: one-row result does not parse (%s)" % e)
    got = {}
for i, (e, w) in enumerate(zip(exprs, want)):
    if got.get("c%d" % i) != w:
        fail("json: %s is %r, SQLite's double is %r" % (e, got.get("c%d" % i), w))
# the short form stays where it is exact, and table mode keeps 15 digits
if rows and len(rows) == 2 and (rows[1][6] != "0.5" or rows[1][7] != "1.0e+22"):
    fail("csv: short values changed form: %s" % rows[1])
if "0.333333333333333 " not in gqp("table", "SELECT 1.0 / 3 AS x"):
    fail("table: 1.0/3 should keep the short 15-digit form")

print("output_test: %d failed checks" % fails)
sys.exit(1 if fails else 0)
