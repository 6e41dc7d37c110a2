#!/usr/bin/env python3
"""make_seeds.py OUTDIR -- write the seed corpora of the fuzz harnesses.

OUTDIR/fuzz_sql/    every statement and query of tests/sql/*.test and
                    tests/sql/gen/*.sql.in (one file each, with the shared
                    emp table's DDL from emp_data.inc prepended when the
                    record uses it), plus queries over the harness's own
                    tables t, u, e
OUTDIR/fuzz_load/   small CSV / .tbl files with the 2 + ncols byte prefix
                    fuzz_load.c expects
OUTDIR/fuzz_config/ catalog configs naming the harness's data files, and
                    the cost files in configs/
Deterministic; stdlib only.
"""
import hashlib
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def records(path):
    """Yield the SQL text of every statement/query record of a .test/.sql.in file."""
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    i = 0
    while i < len(lines):
        head = lines[i].split()
        if head and head[0] in ("statement", "query"):
            sql = []
            i += 1
            while i < len(lines) and lines[i].strip() and lines[i].strip() != "----":
                sql.append(lines[i])
                i += 1
            if sql:
                yield "\n".join(sql)
        i += 1


def write(d, data):
    if isinstance(data, str):
        data = data.encode()
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


SQL_EXTRA = [
    "SELECT i, r, s, d, b FROM t",
    "SELECT s, COUNT(*), SUM(i), AVG(r), MIN(d), MAX(s) FROM t GROUP BY s HAVING COUNT(*) > 0 ORDER BY s",
    "SELECT COUNT(DISTINCT s), SUM(DISTINCT b) FROM t",
    "SELECT t.i, u.v FROM t JOIN u ON t.i = u.k WHERE u.w > 0",
    "SELECT a.i, b.k, c.a FROM t a, u b, e c WHERE a.i = b.k AND b.k = c.a",
    "SELECT CASE WHEN i > 1 THEN s ELSE 'z' END, COALESCE(r, 0), NULLIF(b, 2), IFNULL(d, DATE '2000-01-01') FROM t",
    "SELECT CAST(i AS REAL), CAST(r AS INTEGER), CAST(s AS INTEGER), CAST(d AS TEXT) FROM t",
    "SELECT i FROM t WHERE s LIKE 'b%' OR s LIKE '_' OR s NOT LIKE '%a%'",
    "SELECT i FROM t WHERE i BETWEEN -1 AND 5 AND i IN (1, 2, NULL) AND NOT r IS NULL",
    "SELECT i + 1, i - 1, i * 2, i / 0, i % 3, -i, ABS(i) FROM t ORDER BY 1 DESC LIMIT 3 OFFSET 1",
    "SELECT DISTINCT s FROM t ORDER BY s",
    "SELECT d, COUNT(*) FROM t WHERE d > '2000-01-01' GROUP BY d",
    "INSERT INTO e VALUES (1, 'x'), (NULL, NULL); SELECT * FROM e",
    "CREATE TABLE f(x DATE, y TEXT); INSERT INTO f VALUES ('2020-02-02', 'q'); SELECT x, y FROM f",
    "SELECT 9223372036854775807 + 1, -9223372036854775808 / -1, 1e308 * 10",
    "SELECT SUM(r), AVG(i), MIN(NULL), MAX(NULL) FROM t",
    "SELECT k, v FROM u WHERE v = 'x' GROUP BY k, v ORDER BY k",
    # introspection statements (issue 14)
    "SHOW TABLES; DESCRIBE t; DESC SELECT s, i + 1 FROM t; PRAGMA table_info(u)",
    "EXPLAIN SELECT s, SUM(i) FROM t GROUP BY s; EXPLAIN ANALYZE SELECT COUNT(*) FROM u",
    "CREATE VIEW vv AS SELECT k, v FROM u; DESCRIBE vv; PRAGMA table_info('vv'); SHOW TABLES",
]

CSVS = [
    # (flags, types, content): flags bit0 tbl, bit1 header, bits 2-3 delimiter
    (2, [0, 6, 3, 4], "id,name,price,day\n1,apple,1.5,2020-01-05\n2,,,\n3,\"x,\"\"y\",-0.0,1999-12-31\n"),
    (0, [1, 1], "9223372036854775807,-9223372036854775808\n0,-0\n"),
    (1, [0, 6, 2], "1|a|1.5|\n2|b|-3e38|\n"),
    (0, [5, 6], "true,x\nfalse,\n1,y\n0,\"\"\n"),
    (0, [4], "2020-02-29\n1970-01-01\n9999-12-31\n"),
    (4, [0, 3], "1;2.5\n2;nan\n3;inf\n"),
    (8, [6, 6], "a\tb\n\tc\n"),
    (2, [6], "s\n\"multi\nline\"\nplain\n"),
    (0, [3], "1e308\n-1e-308\n0x10\n 5 \n"),
]

CONFIGS = [
    "tables:\n  - name: t\n    source: t.csv\n    format: csv\n    header: true\n    columns:\n"
    "      - {name: id, type: INT32}\n      - {name: name, type: STRING}\n"
    "      - {name: price, type: FLOAT64}\n      - {name: day, type: DATE}\n",
    "tables:\n  - name: t\n    source: t.tbl\n    format: tbl\n    columns:\n"
    "      - {name: id, type: INT64}\n      - {name: name, type: STRING}\n"
    "      - {name: price, type: FLOAT32}\n      - {name: day, type: DATE}\n",
    "tables:\n  - name: t\n    source: b\n    format: binary\n    columns:\n"
    "      - {name: i, type: INT32}\n      - {name: s, type: STRING}\n",
    "tables:\n  - name: t\n    source: t.csv\n    header: true\n    delimiter: \",\"\n    columns:\n"
    "      - name: id\n        type: INT32\n      - name: name\n        type: TEXT\n"
    "      - {name: price, type: REAL}\n      - {name: day, type: DATE}\n"
    "device:\n  gpu_cache_bytes: 8589934592\n",
    "tables: []\n",
    "tables:\n  - name: t\n    name: u\n    source: t.csv\n    columns: [{name: a, type: INT32}]\n",
]


def main():
    out = sys.argv[1]
    emp_stmts = "\n".join(s + ";" for s in records(os.path.join(ROOT, "tests/sql/gen/emp_data.inc")))
    srcs = []
    for d in ("tests/sql", "tests/sql/gen"):
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if f.endswith(".test") or f.endswith(".sql.in"):
                srcs.append(os.path.join(ROOT, d, f))
    seen = set()
    for p in srcs:
        for sql in records(p):
            if sql in seen:
                continue
            seen.add(sql)
            text = (emp_stmts + "\n" + sql) if "emp" in sql and "CREATE TABLE emp" not in sql else sql
            if len(text) > 4096:
                text = sql
            write(os.path.join(out, "fuzz_sql"), text)
    for sql in SQL_EXTRA:
        write(os.path.join(out, "fuzz_sql"), sql)
    for flags, types, content in CSVS:
        write(os.path.join(out, "fuzz_load"), bytes([flags, len(types) - 1] + types) + content.encode())
    for c in CONFIGS:
        write(os.path.join(out, "fuzz_config"), c)
    for f in sorted(os.listdir(os.path.join(ROOT, "configs"))):
        if f.endswith(".yaml"):
            write(os.path.join(out, "fuzz_config"), open(os.path.join(ROOT, "configs", f), "rb").read())
    print("make_seeds: %d sql, %d load, %d config seeds in %s" % (
        len(os.listdir(os.path.join(out, "fuzz_sql"))), len(os.listdir(os.path.join(out, "fuzz_load"))),
        len(os.listdir(os.path.join(out, "fuzz_config"))), out))


if __name__ == "__main__":
    main()
