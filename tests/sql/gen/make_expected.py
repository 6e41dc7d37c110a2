#!/usr/bin/env python3
"""Turn a sqllogictest spec (tests/sql/gen/*.sql.in) into a .test file whose
expected results come from SQLite.

Usage: make_expected.py SPEC.sql.in [...]   (writes tests/sql/<name>.test)
       make_expected.py --all               (every spec in this folder)
       make_expected.py --check             (exit 1 if a .test is out of date)

A spec is a sqllogictest file without expected blocks: records separated by
blank lines, each `statement ok|error` or `query <types> [nosort|rowsort|
valuesort] [label]` followed by SQL; `hash-threshold N` and `#` comments are
copied; `include FILE` inserts FILE (shared table set-up). Every record
is run through SQLite (Python's sqlite3 module, the same
library as /usr/bin/sqlite3) and the `----` block is written from its answer.

gqp's dialect differs from SQLite in one spelling the specs use: a date
literal `DATE 'yyyy-mm-dd'`. SQLite has no date type, so the SQL given to
SQLite has `DATE 'x'` replaced by `'x'` (dates are stored as ISO text in
SQLite, whose order and printed form equal gqp's DATE).

A spec whose first line is `# engine: duckdb` is run through DuckDB
instead (Python's `duckdb` module), for types SQLite lacks (DECIMAL): its
SQL goes to DuckDB unchanged, a DECIMAL value prints with exactly its
scale's digits (`-0.50`), as gqp prints it, and `nosort` queries are not
re-run reversed (DuckDB has no such pragma: give them a total ORDER BY).
`--check` skips such specs when the module is missing.

Checks made while generating (each is an error):
  * `statement ok` fails or `statement error` succeeds in SQLite;
  * a query's type string length differs from its column count;
  * a `nosort` query whose row order is not fully fixed by ORDER BY: the
    query is run again with PRAGMA reverse_unordered_selects and the two
    answers must be equal.
"""
import decimal
import math
import os
import re
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.dirname(HERE)
DATE_LIT = re.compile(r"\bDATE\s+'(\d{4}-\d\d-\d\d)'", re.IGNORECASE)


CAST_DATE = re.compile(r"\bCAST\(([^()]+?)\s+AS\s+DATE\)", re.IGNORECASE)
EXTRACT = re.compile(r"\bEXTRACT\(\s*(YEAR|MONTH|DAY)\s+FROM\s+([^()]+?)\)", re.IGNORECASE)
INTERVAL = re.compile(
    r"([\w.]+|'[^']*')\s*([+-])\s*INTERVAL\s+'?(\d+)'?\s+(DAY|MONTH|YEAR)S?\b", re.IGNORECASE)
SUBSTRING = re.compile(r"\bsubstring\(([^()]+?)\s+FROM\s+([^()]+?)(?:\s+FOR\s+([^()]+?))?\)",
                       re.IGNORECASE)
EXTRACT_FMT = {"year": "%Y", "month": "%m", "day": "%d"}


def for_sqlite(sql):
    """The SQL text as SQLite should run it: DATE literals become text,
    CAST(x AS DATE) is x, EXTRACT(f FROM x) is CAST(strftime(...) AS
    INTEGER), substring(x FROM a FOR b) is substr(x, a, b), x +/- INTERVAL 'n' unit is date(x, '+/-n units') (which
    agrees with gqp's DuckDB month rule except past a month's end)."""
    sql = DATE_LIT.sub(r"'\1'", sql)
    sql = CAST_DATE.sub(r"\1", sql)
    sql = SUBSTRING.sub(lambda m: "substr(%s, %s%s)" % (m.group(1), m.group(2),
                                                       ", " + m.group(3) if m.group(3) else ""), sql)
    sql = EXTRACT.sub(lambda m: "CAST(strftime('%s', %s) AS INTEGER)"
                      % (EXTRACT_FMT[m.group(1).lower()], m.group(2)), sql)
    return INTERVAL.sub(lambda m: "date(%s, '%s%s %ss')"
                        % (m.group(1), m.group(2), m.group(3), m.group(4).lower()), sql)


def text_to_int(s):
    """Integer of text as sqlite3_column_int64 reads it: numeric prefix, else 0."""
    m = re.match(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", s)
    if not m:
        return 0
    v = m.group(0).strip()
    if re.fullmatch(r"[+-]?\d+", v):
        return int(v)
    return int(float(v))


def fmt(v, t):
    """Format value v for sqllogictest type letter t (I, R or T)."""
    if v is None:
        return "NULL"
    if isinstance(v, decimal.Decimal):
        if t == "I":
            return str(int(v))
        if t == "R":
            return "%.3f" % float(v)
        return format(v, "f")
    if isinstance(v, bool):
        v = int(v)
    if t == "I":
        if isinstance(v, float):
            return str(int(math.trunc(v)))
        if isinstance(v, str):
            return str(text_to_int(v))
        return str(int(v))
    if t == "R":
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                v = 0.0
        return "%.3f" % float(v)
    if isinstance(v, float):
        s = sqlite_real_text(v)
    else:
        s = v if isinstance(v, str) else str(v)
    if s == "":
        return "(empty)"
    return "".join(c if " " <= c <= "~" else "@" for c in s)


def sqlite_real_text(d):
    """SQLite's text of a REAL ("%!.15g": always shows a decimal point)."""
    s = "%.15g" % d
    if re.fullmatch(r"-?\d+", s):
        s += ".0"
    return s


def parse_spec(path):
    """Yield records (lineno, header_words, sql_text) and copied lines."""
    with open(path) as f:
        lines = []
        for line in f.read().split("\n"):
            if line.startswith("include "):
                inc = os.path.join(os.path.dirname(path), line.split()[1])
                with open(inc) as g:
                    lines += g.read().split("\n") + [""]
            else:
                lines.append(line)
    i = 0
    out = []
    while i < len(lines):
        line = lines[i].rstrip("\r")
        if not line.strip():
            i += 1
            continue
        if line.startswith("#") or line.startswith("hash-threshold") or line == "halt":
            out.append(("copy", i + 1, line, None))
            i += 1
            continue
        if line.startswith("skipif") or line.startswith("onlyif"):
            out.append(("copy", i + 1, line, None))
            i += 1
            continue
        head = line.split()
        start = i + 1
        i += 1
        sql = []
        while i < len(lines) and lines[i].strip():
            sql.append(lines[i].rstrip("\r"))
            i += 1
        if head[0] not in ("statement", "query"):
            sys.exit("%s:%d: unknown record %r" % (path, start, head[0]))
        out.append(("rec", start, head, "\n".join(sql)))
    return out


def spec_engine(path):
    """'duckdb' when the spec's first line is `# engine: duckdb`, else 'sqlite'."""
    with open(path) as f:
        first = f.readline().strip()
    return "duckdb" if re.fullmatch(r"#\s*engine:\s*duckdb", first) else "sqlite"


class DuckCon:
    """The subset of sqlite3.Connection that generate() uses, over DuckDB;
    DuckDB's errors are raised as sqlite3.Error."""

    def __init__(self):
        import duckdb

        self.duckdb = duckdb
        self.con = duckdb.connect(":memory:")
        self.isolation_level = None

    def execute(self, sql):
        if sql.startswith("PRAGMA reverse_unordered_selects"):
            return self
        try:
            return self.con.execute(sql)
        except self.duckdb.Error as e:
            raise sqlite3.Error(str(e))


def run_query(con, sql):
    """Rows and column count of sql in SQLite (or DuckDB)."""
    cur = con.execute(sql if isinstance(con, DuckCon) else for_sqlite(sql))
    rows = cur.fetchall()
    return rows, len(cur.description or [])


def generate(spec):
    """Write the .test file for one spec; return its path."""
    name = os.path.basename(spec)[: -len(".sql.in")]
    duck = spec_engine(spec) == "duckdb"
    if duck:
        con = DuckCon()
        who = "DuckDB %s" % con.duckdb.__version__
    else:
        con = sqlite3.connect(":memory:")
        con.isolation_level = None
        who = "SQLite %s" % sqlite3.sqlite_version
    threshold = 0
    out = [
        "# Generated by tests/sql/gen/make_expected.py from gen/%s.sql.in;" % name,
        "# expected results computed by %s. Do not edit: edit the spec." % who,
        "",
    ]
    nq = 0
    for kind, lineno, a, sql in parse_spec(spec):
        where = "%s:%d" % (spec, lineno)
        if kind == "copy":
            out.append(a)
            if a.startswith("hash-threshold"):
                threshold = int(a.split()[1])
            out.append("") if a.startswith("hash-threshold") else None
            continue
        head = a
        if head[0] == "statement":
            ok = True
            try:
                con.execute(sql if duck else for_sqlite(sql))
            except sqlite3.Error:
                ok = False
            if ok != (head[1] == "ok"):
                sys.exit("%s: SQLite disagrees with 'statement %s'" % (where, head[1]))
            out += [" ".join(head), sql, ""]
            continue
        types = head[1]
        sort = head[2] if len(head) > 2 else "nosort"
        try:
            rows, ncols = run_query(con, sql)
        except Exception as e:
            sys.exit("%s: %s error: %s" % (where, "DuckDB" if duck else "SQLite", e))
        if ncols != len(types):
            sys.exit("%s: %d columns but types %r" % (where, ncols, types))
        if sort == "nosort" and len(rows) > 1 and not duck:
            con.execute("PRAGMA reverse_unordered_selects=ON")
            rows2, _ = run_query(con, sql)
            con.execute("PRAGMA reverse_unordered_selects=OFF")
            if rows2 != rows:
                sys.exit("%s: nosort but ORDER BY does not fix the row order" % where)
        vals = [[fmt(v, types[c]) for c, v in enumerate(r)] for r in rows]
        if sort == "rowsort":
            vals.sort()
        flat = [v for r in vals for v in r]
        if sort == "valuesort":
            flat.sort()
        out += [" ".join(head), sql, "----"]
        if threshold > 0 and len(flat) > threshold:
            import hashlib

            h = hashlib.md5("".join(v + "\n" for v in flat).encode()).hexdigest()
            out.append("%d values hashing to %s" % (len(flat), h))
        else:
            out += flat
        out.append("")
        nq += 1
    path = os.path.join(OUT_DIR, name + ".test")
    text = "\n".join(out).rstrip("\n") + "\n"
    return path, text, nq


def main():
    args = sys.argv[1:]
    check = "--check" in args
    if not args or "--all" in args or check:
        specs = sorted(
            os.path.join(HERE, f) for f in os.listdir(HERE) if f.endswith(".sql.in")
        )
    else:
        specs = args
    stale = 0
    total = 0
    for spec in specs:
        if check and spec_engine(spec) == "duckdb":
            try:
                import duckdb  # noqa: F401
            except ImportError:
                print("skipped (no duckdb module): %s" % spec)
                continue
        path, text, nq = generate(spec)
        total += nq
        if check:
            old = open(path).read() if os.path.exists(path) else None
            if old != text:
                print("out of date: %s" % path)
                stale += 1
            continue
        with open(path, "w") as f:
            f.write(text)
        print("wrote %s (%d queries)" % (path, nq))
    print("%d queries in %d files" % (total, len(specs)))
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
