#!/usr/bin/env python3
"""gqpdiff.py -- differential testing of gqp against SQLite (stdlib only).

For every seed of a range: random tables (NULLs, duplicate rows, and with
the `extremes` feature INT64 extremes, +-0.0, huge/tiny reals, empty and
non-ASCII strings, dates), then random queries over them, each run in gqp
(through build/tests/gqp_batch, one process for thousands of queries) and
in SQLite (Python's sqlite3; DATE columns are ISO TEXT there). Oracles:

  sqlite   the result equals SQLite's (multisets unless ORDER BY fixes the
           order; reals within 1e-9 relative; an integer equal to a real
           counts as equal)
  tlp      ternary-logic partitioning (SQLancer): Q equals Q WHERE p +
           Q WHERE NOT p + Q WHERE (p) IS NULL as multisets, and for
           aggregates SUM/COUNT/MIN/MAX of the three parts combine to the
           aggregate of the whole (gqp alone)
  device   with --compare-device D: the same query on gqp's other device
           (e.g. gpu vs cpu on a GPU machine) gives the same result

Each mismatch is classified (wrong / gqp_error / crash / timeout / tlp /
device; `sqlite_error` = gqp answers where SQLite errors, reported but not a
failure), reduced (rows, select items, WHERE) and written as a reproducer
(DDL + INSERTs + query, both answers) to the report.

  python3 tests/diff/gqpdiff.py                       # CI: seeds 1..3000, CI features
  python3 tests/diff/gqpdiff.py --seeds 1:5000 --features all --report diff.md
  python3 tests/diff/gqpdiff.py --device gpu --compare-device cpu
  python3 tests/diff/gqpdiff.py --list-features

Exit status 1 if any failing mismatch was found (0 with --no-fail).
"""
import argparse
import math
import os
import random
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# feature -> (in the CI set?, what it generates). Features outside the CI
# set trigger known open issues (see docs/testing.md, "Known failing").
FEATURES = {
    "joins": (True, "inner joins of 2-3 tables (JOIN ... ON and comma + WHERE)"),
    "setops": (True, "UNION / UNION ALL / INTERSECT / EXCEPT of the query with itself under another WHERE"),
    "outer_joins": (True, "LEFT / RIGHT / FULL JOIN among those joins (NULL-padded rows under every other feature)"),
    "aggregates": (True, "GROUP BY / HAVING / COUNT SUM AVG MIN MAX"),
    "distinct_agg": (True, "COUNT/SUM/... (DISTINCT x)"),
    "distinct": (True, "SELECT DISTINCT"),
    "order_limit": (True, "ORDER BY every output column, LIMIT / OFFSET"),
    "case": (True, "CASE WHEN, COALESCE, IFNULL, NULLIF over same-typed branches"),
    "like": (True, "LIKE / NOT LIKE with ASCII data"),
    "in_between": (True, "IN (list), BETWEEN"),
    "cast_num": (True, "CAST between INTEGER and REAL"),
    "dates": (True, "DATE columns and literals, compared and grouped"),
    "reals": (True, "REAL columns and arithmetic"),
    "tlp": (True, "ternary-logic partitioning oracle (WHERE p / NOT p / p IS NULL)"),
    "tlp_agg": (True, "TLP for SUM/COUNT/MIN/MAX"),
    "div_mod": (True, "integer / and %"),
    "dup_items": (True, "the same expression twice in the select list / GROUP BY (issue 13 item 1)"),
    "extremes": (False, "INT64 extremes and 1e308 in the data (issue 13 item 7, 8)"),
    "null_branch": (True, "a NULL literal as a CASE/COALESCE/IFNULL/NULLIF branch (item 11, 17)"),
    "mixed_branch": (True, "CASE/COALESCE mixing INTEGER and REAL branches (item 8b)"),
    "cast_text": (True, "CAST to/from TEXT, CAST AS DATE (items 2, 18, 19)"),
    "utf8": (True, "non-ASCII strings with LIKE '_' (item 12)"),
    "chained_cmp": (True, "unparenthesized a = b < c (item 15)"),
    "group_expr": (True, "GROUP BY / DISTINCT over expressions, constants (items 14, 16)"),
    "agg_null": (True, "MIN/MAX/SUM(NULL) (item 17)"),
    "bool_arith": (True, "comparisons used as numbers (p + 1, SUM(p))"),
    "subquery": (False, "correlated and uncorrelated scalar / EXISTS / IN subqueries (issue 10)"),
    "sorted_keys": (True, "tables stored in the order of an INTEGER column without NULLs (chunked "
                          "runs cut a joined table by key range and keep groups whole)"),
    "sql_fns": (True, "IIF, SIGN, TRUNC/FLOOR/CEIL, MOD, SQRT/EXP/LN/LOG10, IS [NOT] DISTINCT FROM, "
                       "LIKE ... ESCAPE (the fifteenth session's functions)"),
}
CI_FEATURES = [f for f, (ci, _) in FEATURES.items() if ci]

PREFIX = []  # gqp statements run before each database's DDL (SET aggregate = ...)

FAILING = ("wrong", "gqp_error", "crash", "timeout", "tlp", "device")
# gqp's documented "Not implemented Error: correlated subquery" (the
# correlated forms it does not unnest, docs/sql.md): counted, not failing
# documented limitations (docs/sql.md): counted as "unsupported", not failing
UNSUPPORTED = ("Not implemented Error: correlated subquery",
               "Not implemented Error: a compound SELECT (UNION/INTERSECT/EXCEPT) column of text made")


# ------------------------------------------------------------------ data --

DATES = ["1970-01-01", "1999-12-31", "2000-02-29", "2020-01-05", "2020-01-06", "1969-07-20",
         "2038-01-19", "1995-03-15"]
STRS_ASCII = ["", "a", "A", "ab", "abc", "b", "B", "ba", " a", "a%", "_", "x'y", "10", "zz"]
STRS_UTF8 = ["é", "aé", "ü", "日本"]
INTS_SMALL = [0, 1, -1, 2, 3, 5, 7, 10, -10, 42, 99, -100, 100]
INTS_EXTREME = [9223372036854775807, -9223372036854775808, 9223372036854775806, 2147483647,
                -2147483648, 4294967296]
REALS_SMALL = [0.0, -0.0, 0.5, -0.5, 1.5, 2.25, -3.75, 100.125, 1e-3, 7.0, 1e6]
REALS_EXTREME = [1e308, -1e308, 1e-308, 2.2250738585072014e-308, 1.7976931348623157e308, 1e18]


class Table:
    def __init__(self, name, cols, rows):
        self.name, self.cols, self.rows = name, cols, rows  # cols: [(name, type)]


def sql_value(v, typ, dialect):
    if v is None:
        return "NULL"
    if typ == "TEXT":
        return "'" + v.replace("'", "''") + "'"
    if typ == "DATE":
        return ("DATE '%s'" % v) if dialect == "gqp" else "'%s'" % v
    if typ == "REAL":
        r = repr(float(v))
        return r
    return str(v)


def gen_tables(rng, feats):
    types = ["INTEGER", "INTEGER", "TEXT"]
    if "reals" in feats:
        types += ["REAL", "REAL"]
    if "dates" in feats:
        types += ["DATE"]
    ntab = rng.choice([1, 2, 2, 3]) if "joins" in feats else 1
    tables = []
    for ti in range(ntab):
        ncol = rng.randint(2, 4)
        cols = [("c%d" % i, rng.choice(types)) for i in range(ncol)]
        if all(t != "INTEGER" for _, t in cols):
            cols[0] = ("c0", "INTEGER")  # a join key
        nrows = rng.choice([0, 1, 2, 3, 5, 8, 8, 12, 12, 20])
        rows = []
        for _ in range(nrows):
            if rows and rng.random() < 0.2:
                rows.append(list(rng.choice(rows)))  # duplicate row
                continue
            rows.append([gen_value(rng, t, feats) for _, t in cols])
        if "sorted_keys" in feats and rng.random() < 0.5:
            # stored in the order of an INTEGER column that holds no NULL
            # (a sorted key: libgqp/chunk.c's co-sliced tables, whole groups)
            k = rng.choice([i for i, (_, t) in enumerate(cols) if t == "INTEGER"])
            for r in rows:
                if r[k] is None:
                    r[k] = rng.choice(INTS_SMALL)
            rows.sort(key=lambda r: r[k])
        tables.append(Table("t%d" % ti, cols, rows))
    return tables


def gen_value(rng, typ, feats):
    if rng.random() < 0.2:
        return None
    if typ == "INTEGER":
        if "extremes" in feats and rng.random() < 0.15:
            return rng.choice(INTS_EXTREME)
        return rng.choice(INTS_SMALL)
    if typ == "REAL":
        if "extremes" in feats and rng.random() < 0.15:
            return rng.choice(REALS_EXTREME)
        return rng.choice(REALS_SMALL)
    if typ == "TEXT":
        if "utf8" in feats and rng.random() < 0.2:
            return rng.choice(STRS_UTF8)
        return rng.choice(STRS_ASCII)
    return rng.choice(DATES)


def ddl(tables, dialect, rows_of=None):
    out = []
    for t in tables:
        cols = ", ".join("%s %s" % (n, ("TEXT" if ty == "DATE" and dialect == "sqlite" else ty))
                         for n, ty in t.cols)
        out.append("CREATE TABLE %s(%s)" % (t.name, cols))
        rows = t.rows if rows_of is None else rows_of[t.name]
        if rows:
            vals = ", ".join("(" + ", ".join(sql_value(v, ty, dialect) for v, (_, ty) in zip(r, t.cols)) + ")"
                             for r in rows)
            out.append("INSERT INTO %s VALUES %s" % (t.name, vals))
    return out


# ----------------------------------------------------------- expressions --
# An expression is a tuple tree rendered per dialect; gen_* return (tree, type).

class Gen:
    nsub = 0  # subquery aliases made (sq1, sq2, ...)

    def __init__(self, rng, feats, cols, tables=None):
        self.rng, self.feats, self.cols = rng, feats, cols  # cols: [(qualified name, type)]
        self.tables = tables  # for subqueries (the subquery feature)
        self.used = set()

    def has(self, f):
        return f in self.feats

    def use(self, f):
        self.used.add(f)

    def top_expr(self, typ, depth):
        """A select item of a query without aggregates: the one place where
        CAST(number AS TEXT) (text that exists only at run time) is
        generated, as gqp supports it there; inside CASE, NULLIF,
        aggregates, GROUP BY or a comparison with another such text it is a
        documented Not implemented error (docs/sql.md)."""
        self.rt_ok = True
        return self.expr(typ, depth)

    def col(self, typ):
        c = [n for n, t in self.cols if t == typ]
        return ("col", self.rng.choice(c)) if c else None

    def lit(self, typ):
        rng = self.rng
        if typ == "INTEGER":
            if self.has("extremes") and rng.random() < 0.1:
                self.use("extremes")
                return ("lit", str(rng.choice(INTS_EXTREME)))
            return ("lit", str(rng.choice(INTS_SMALL[:10])))
        if typ == "REAL":
            return ("lit", repr(rng.choice(REALS_SMALL)))
        if typ == "TEXT":
            return ("lit", "'" + rng.choice(STRS_ASCII).replace("'", "''") + "'")
        if typ == "DATE":
            return ("date", rng.choice(DATES))
        return ("lit", rng.choice(["1", "0"]))

    def subquery(self, kind, depth):
        """A subquery over a random table under a fresh alias, its WHERE
        free to read the enclosing query's columns (correlated) or not:
        kind scalar (an aggregate, INTEGER), exists or in. No subquery
        inside it (correlation to a grand-parent is not supported)."""
        rng = self.rng
        self.use("subquery")
        t = rng.choice(self.tables)
        Gen.nsub += 1
        alias = "sq%d" % Gen.nsub
        icols = [("%s.%s" % (alias, n), ty) for n, ty in t.cols]
        g2 = Gen(rng, set(self.feats) - {"subquery"}, icols + self.cols)
        where = g2.pred(max(depth - 1, 1)) if rng.random() < 0.9 else None
        self.used |= g2.used
        ints = [n for n, ty in icols if ty == "INTEGER"]
        if kind == "scalar":
            agg = rng.choice(["COUNT(*)", "SUM", "MIN", "MAX", "COUNT"])
            item = (("agg", "COUNT", None, False) if agg == "COUNT(*)" or not ints
                    else ("agg", agg, ("col", rng.choice(ints)), False))
            return ("subq", kind, t.name, alias, item, where, None, False)
        if kind == "exists":
            return ("subq", kind, t.name, alias, ("lit", "1"), where, None, rng.random() < 0.4)
        ty = rng.choice(sorted({ty for _, ty in icols} & {"INTEGER", "TEXT"}) or ["INTEGER"])
        cands = [n for n, t2 in icols if t2 == ty]
        item = ("col", rng.choice(cands)) if cands else ("lit", "1")
        if not cands:
            ty = "INTEGER"
        return ("subq", kind, t.name, alias, item, where, self.expr(ty, depth - 1),
                rng.random() < 0.3)

    def expr(self, typ, depth):
        """A random expression of SQL type typ (INTEGER REAL TEXT DATE BOOL)."""
        rng = self.rng
        rt_ok, self.rt_ok = getattr(self, "rt_ok", False), False  # the top node only
        if typ == "BOOL":
            return self.pred(depth)
        if (typ == "INTEGER" and depth > 0 and self.has("subquery") and self.tables
                and rng.random() < 0.12):
            return self.subquery("scalar", depth)
        if depth <= 0 or rng.random() < 0.3:
            c = self.col(typ)
            if c and rng.random() < 0.75:
                return c
            return self.lit(typ)
        r = rng.random()
        if typ in ("INTEGER", "REAL") and r < 0.45:
            if typ == "REAL" and not self.has("reals"):
                return self.lit("REAL")
            ops = ["+", "-", "*"]
            if typ == "INTEGER" and self.has("div_mod"):
                ops += ["/", "%"]
            op = rng.choice(ops)
            if op in "/%":
                self.use("div_mod")
            if typ == "REAL":
                self.use("reals")
                lt = rng.choice(["REAL", "INTEGER"])
                rt = "REAL" if lt == "INTEGER" else rng.choice(["REAL", "INTEGER"])
            else:
                lt = rt = "INTEGER"
            return ("bin", op, self.expr(lt, depth - 1), self.expr(rt, depth - 1))
        if typ in ("INTEGER", "REAL") and r < 0.55:
            return rng.choice([("neg", self.expr(typ, depth - 1)), ("fn", "ABS", [self.expr(typ, depth - 1)])])
        if r < 0.8 and self.has("case"):
            return self.cond(typ, depth)
        if r < 0.9 and typ == "INTEGER" and self.has("cast_num") and self.has("reals"):
            self.use("cast_num")
            return ("cast", self.expr("REAL", depth - 1), "INTEGER")
        if r < 0.9 and typ == "REAL" and self.has("cast_num"):
            self.use("cast_num")
            return ("cast", self.expr("INTEGER", depth - 1), "REAL")
        if typ == "TEXT" and self.has("cast_text") and rng.random() < 0.5:
            self.use("cast_text")
            src = rng.choice(["INTEGER", "TEXT"])
            if not rt_ok:
                src = "TEXT"
            return ("cast", self.expr(src, depth - 1), "TEXT")
        if typ == "INTEGER" and self.has("bool_arith") and rng.random() < 0.3:
            self.use("bool_arith")
            return ("bin", "+", self.pred(depth - 1), self.lit("INTEGER"))
        if typ in ("INTEGER", "REAL", "TEXT") and self.has("sql_fns") and rng.random() < 0.5:
            return self.sql_fn(typ, depth)
        c = self.col(typ)
        return c if c else self.lit(typ)

    def sql_fn(self, typ, depth):
        """One of SQLite's scalar functions of type typ (feature sql_fns)."""
        rng = self.rng
        self.use("sql_fns")
        k = rng.randrange(4)
        if k == 0 or typ == "TEXT":
            return ("fn", "IIF", [self.pred(depth - 1), self.expr(typ, depth - 1), self.expr(typ, depth - 1)])
        if typ == "INTEGER":
            if k == 1:
                return ("fn", "SIGN", [self.expr(rng.choice(["INTEGER", "REAL"]) if self.has("reals")
                                                 else "INTEGER", depth - 1)])
            return ("fn", rng.choice(["CEIL", "FLOOR", "TRUNC"]), [self.expr("INTEGER", depth - 1)])
        self.use("reals")
        if k == 1:
            return ("fn", rng.choice(["CEIL", "FLOOR", "TRUNC", "CEILING"]), [self.expr("REAL", depth - 1)])
        if k == 2:
            return ("fn", "MOD", [self.expr("INTEGER", depth - 1), self.expr("INTEGER", depth - 1)])
        return ("fn", rng.choice(["SQRT", "EXP", "LN", "LOG10"]), [self.expr("REAL", depth - 1)])

    def branch(self, typ, depth):
        if self.has("null_branch") and self.rng.random() < 0.15:
            self.use("null_branch")
            return ("lit", "NULL")
        if typ == "REAL" and self.has("mixed_branch") and self.rng.random() < 0.3:
            self.use("mixed_branch")
            return self.expr("INTEGER", depth)
        return self.expr(typ, depth)

    def cond(self, typ, depth):
        rng = self.rng
        self.use("case")
        k = rng.randrange(5)
        if k == 0:
            whens = [(self.pred(depth - 1), self.branch(typ, depth - 1)) for _ in range(rng.randint(1, 2))]
            return ("case", whens, self.branch(typ, depth - 1) if rng.random() < 0.7 else None)
        if k == 1:
            return ("fn", "COALESCE", [self.branch(typ, depth - 1) for _ in range(rng.randint(2, 3))])
        if k == 2:
            return ("fn", "IFNULL", [self.branch(typ, depth - 1), self.branch(typ, depth - 1)])
        if k == 3:
            return ("fn", "NULLIF", [self.expr(typ, depth - 1), self.expr(typ, depth - 1)])
        # simple CASE x WHEN v THEN ...
        kt = rng.choice(["INTEGER", "TEXT"])
        whens = [(self.expr(kt, 0), self.branch(typ, depth - 1)) for _ in range(rng.randint(1, 2))]
        return ("scase", self.expr(kt, depth - 1), whens, self.branch(typ, depth - 1))

    def cmp_type(self):
        ts = ["INTEGER", "INTEGER", "TEXT"]
        if self.has("reals"):
            ts.append("REAL")
        if self.has("dates"):
            ts.append("DATE")
        return self.rng.choice(ts)

    def pred(self, depth):
        """A random boolean expression."""
        rng = self.rng
        if depth > 0 and self.has("subquery") and self.tables and rng.random() < 0.15:
            return self.subquery(rng.choice(["exists", "in"]), depth)
        r = rng.random()
        if depth > 0 and r < 0.25:
            op = rng.choice(["AND", "OR"])
            return ("bin", op, self.pred(depth - 1), self.pred(depth - 1))
        if depth > 0 and r < 0.33:
            return ("not", self.pred(depth - 1))
        t = self.cmp_type()
        if t == "DATE":
            self.use("dates")
        if t == "REAL":
            self.use("reals")
        r = rng.random()
        if r < 0.5:
            op = rng.choice(["=", "<>", "<", "<=", ">", ">="])
            a, b = self.expr(t, depth - 1), self.expr(t, depth - 1)
            if t in ("INTEGER", "REAL") and self.has("reals") and rng.random() < 0.2:
                b = self.expr("REAL" if t == "INTEGER" else "INTEGER", depth - 1)
            # a = b < c is a = (b < c): a number (never a string or a DATE,
            # SQLite's text) meets the 0/1 of b < c, and b the INTEGER c;
            # gqp rejects a string against a number (docs/sql.md)
            if self.has("chained_cmp") and t in ("INTEGER", "REAL") and rng.random() < 0.1:
                self.use("chained_cmp")
                return ("raw2", rng.choice(["=", "<>"]), a, rng.choice(["<", ">="]), b, self.lit("INTEGER"))
            return ("bin", op, a, b)
        if r < 0.6:
            if self.has("sql_fns") and rng.random() < 0.3:
                self.use("sql_fns")
                return ("distinct", self.expr(t, depth - 1), self.expr(t, depth - 1), rng.random() < 0.5)
            return ("isnull", self.expr(t, depth - 1), rng.random() < 0.5)
        if r < 0.72 and self.has("in_between"):
            self.use("in_between")
            items = [self.lit(t) if rng.random() < 0.8 else ("lit", "NULL") for _ in range(rng.randint(1, 4))]
            return ("in", self.expr(t, depth - 1), items, rng.random() < 0.3)
        if r < 0.84 and self.has("in_between"):
            self.use("in_between")
            return ("between", self.expr(t, depth - 1), self.expr(t, 0), self.expr(t, 0), rng.random() < 0.3)
        if self.has("like"):
            self.use("like")
            pats = ["a%", "%b", "%a%", "_", "__", "%", "A%", "_b%", "", "x'y"]
            if self.has("utf8"):
                pats += ["_", "é", "%é%", "_é"]
                self.use("utf8")
            if self.has("sql_fns") and rng.random() < 0.2:
                self.use("sql_fns")
                pat = rng.choice(["a!%", "%!_%", "!!%", "a!b", "!%%", "%!"])
                return ("like_esc", self.expr("TEXT", depth - 1), pat, rng.random() < 0.3)
            pat = rng.choice(pats).replace("'", "''")
            return ("like", self.expr("TEXT", depth - 1), pat, rng.random() < 0.3)
        return ("isnull", self.expr(t, depth - 1), True)


def render(e, d):
    """SQL text of expression tree e for dialect d ('gqp' or 'sqlite')."""
    k = e[0]
    if k == "col":
        return e[1]
    if k == "lit":
        return e[1]
    if k == "date":
        return ("DATE '%s'" % e[1]) if d == "gqp" else "'%s'" % e[1]
    if k == "bin":
        return "(%s %s %s)" % (render(e[2], d), e[1], render(e[3], d))
    if k == "raw2":
        return "(%s %s %s %s %s)" % (render(e[2], d), e[1], render(e[4], d), e[3], render(e[5], d))
    if k == "neg":
        return "(- %s)" % render(e[1], d)
    if k == "not":
        return "(NOT %s)" % render(e[1], d)
    if k == "fn":
        return "%s(%s)" % (e[1], ", ".join(render(a, d) for a in e[2]))
    if k == "cast":
        return "CAST(%s AS %s)" % (render(e[1], d), e[2])
    if k == "case":
        s = "CASE" + "".join(" WHEN %s THEN %s" % (render(w, d), render(t, d)) for w, t in e[1])
        if e[2] is not None:
            s += " ELSE " + render(e[2], d)
        return s + " END"
    if k == "scase":
        s = "CASE %s" % render(e[1], d)
        s += "".join(" WHEN %s THEN %s" % (render(w, d), render(t, d)) for w, t in e[2])
        return s + " ELSE %s END" % render(e[3], d)
    if k == "isnull":
        return "(%s IS %sNULL)" % (render(e[1], d), "NOT " if e[2] else "")
    if k == "in":
        return "(%s %sIN (%s))" % (render(e[1], d), "NOT " if e[3] else "", ", ".join(render(i, d) for i in e[2]))
    if k == "between":
        return "(%s %sBETWEEN %s AND %s)" % (render(e[1], d), "NOT " if e[4] else "", render(e[2], d),
                                             render(e[3], d))
    if k == "like":
        return "(%s %sLIKE '%s')" % (render(e[1], d), "NOT " if e[3] else "", e[2])
    if k == "like_esc":
        return "(%s %sLIKE '%s' ESCAPE '!')" % (render(e[1], d), "NOT " if e[3] else "", e[2])
    if k == "distinct":
        return "(%s IS %sDISTINCT FROM %s)" % (render(e[1], d), "NOT " if e[3] else "", render(e[2], d))
    if k == "agg":
        return "%s(%s%s)" % (e[1], "DISTINCT " if e[3] else "", "*" if e[2] is None else render(e[2], d))
    if k == "subq":
        _, kind, tname, alias, item, where, x, neg = e
        body = "SELECT %s FROM %s AS %s" % (render(item, d), tname, alias)
        if where is not None:
            body += " WHERE " + render(where, d)
        if kind == "scalar":
            return "(%s)" % body
        if kind == "exists":
            return "(%sEXISTS (%s))" % ("NOT " if neg else "", body)
        return "(%s %sIN (%s))" % (render(x, d), "NOT " if neg else "", body)
    raise ValueError(k)


# --------------------------------------------------------------- queries --

class Query:
    """A query as parts, rendered per dialect."""

    def __init__(self):
        self.items = []  # expression trees
        self.frm = ""  # FROM text (dialect-independent)
        self.where = None
        self.group = []
        self.having = None
        self.distinct = False
        self.order = False  # ORDER BY every output column
        self.limit = None
        self.offset = None
        self.setop = None  # (operator, second WHERE): this query OP itself under it
        self.used = set()

    def sql(self, d, where=None, extra_where=None):
        s = self.body(d, self.where if where is None else where, extra_where)
        if self.setop and where is None and extra_where is None:
            s += " %s %s" % (self.setop[0], self.body(d, self.setop[1], None))
        if self.order:
            s += " ORDER BY " + ", ".join(str(i + 1) for i in range(len(self.items)))
            if self.limit is not None:
                s += " LIMIT %d" % self.limit
                if self.offset is not None:
                    s += " OFFSET %d" % self.offset
        return s

    def body(self, d, w, extra_where):
        """The SELECT without ORDER BY / LIMIT, under WHERE w [AND extra]."""
        s = "SELECT %s%s FROM %s" % ("DISTINCT " if self.distinct else "",
                                     ", ".join(render(e, d) for e in self.items), self.frm)
        conds = []
        if w is not None:
            conds.append(render(w, d))
        if extra_where is not None:
            conds.append(extra_where(d))
        if conds:
            s += " WHERE " + " AND ".join(conds)
        if self.group:
            s += " GROUP BY " + ", ".join(render(g, d) for g in self.group)
        if self.having is not None:
            s += " HAVING " + render(self.having, d)
        return s


def gen_from(rng, tables, feats, used):
    """FROM clause over 1-3 tables and the visible columns [(qualified, type)]."""
    k = 1
    if "joins" in feats and len(tables) > 1 and rng.random() < 0.5:
        k = rng.randint(2, len(tables))
        used.add("joins")
    chosen = rng.sample(tables, k)
    cols = [("%s.%s" % (t.name, n), ty) for t in chosen for n, ty in t.cols]
    if k == 1:
        return chosen[0].name, cols, None
    conds = []
    for i in range(1, k):
        a, b = chosen[i - 1], chosen[i]
        ta = {ty for _, ty in a.cols} & {ty for _, ty in b.cols}
        ty = rng.choice(sorted(ta)) if ta else None
        if ty is None:
            conds.append(None)
            continue
        ca = rng.choice([n for n, t in a.cols if t == ty])
        cb = rng.choice([n for n, t in b.cols if t == ty])
        op = "=" if rng.random() < 0.85 else rng.choice(["<", "<>"])
        conds.append("%s.%s %s %s.%s" % (a.name, ca, op, b.name, cb))
    if rng.random() < 0.5:
        s = chosen[0].name
        for i in range(1, k):
            kind = "JOIN"
            if "outer_joins" in feats and rng.random() < 0.5:
                kind = rng.choice(["LEFT JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
                used.add("outer_joins")
            s += " %s %s ON %s" % (kind, chosen[i].name, conds[i - 1] or "1 = 1")
        return s, cols, None
    s = ", ".join(t.name for t in chosen)
    extra = " AND ".join(c for c in conds if c)
    return s, cols, extra or None


def gen_query(rng, tables, feats):
    q = Query()
    frm, cols, join_where = gen_from(rng, tables, feats, q.used)
    q.frm = frm
    g = Gen(rng, feats, cols, tables)
    depth = rng.choice([1, 2, 2, 3])
    types = ["INTEGER", "TEXT"] + (["REAL"] if "reals" in feats else []) + (["DATE"] if "dates" in feats else [])
    if rng.random() < 0.65:
        q.where = g.pred(depth)
    if join_where:
        jw = ("lit", join_where)
        q.where = jw if q.where is None else ("bin", "AND", jw, q.where)
    if "aggregates" in feats and rng.random() < 0.4:
        q.used.add("aggregates")
        ngroup = rng.choice([0, 1, 1, 2])
        for _ in range(ngroup):
            if "group_expr" in feats and rng.random() < 0.3:
                g.use("group_expr")
                q.group.append(g.expr(rng.choice(types), 1))
            else:
                c = rng.choice(cols)
                q.group.append(("col", c[0]))
        q.items = list(q.group)
        for _ in range(rng.randint(1, 3)):
            q.items.append(gen_agg(rng, g, types, feats))
        if q.group and rng.random() < 0.3:
            a = gen_agg(rng, g, ["INTEGER"], feats)
            q.having = ("bin", rng.choice([">", ">=", "<"]), a, g.lit("INTEGER"))
    else:
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.15:
                q.items.append(g.pred(depth - 1))
            else:
                q.items.append(g.top_expr(rng.choice(types), depth))
        if "distinct" in feats and rng.random() < 0.15:
            q.distinct = True
            q.used.add("distinct")
            if "group_expr" not in feats:
                q.items = [("col", rng.choice(cols)[0]) for _ in q.items]
    if "order_limit" in feats and rng.random() < 0.3:
        q.used.add("order_limit")
        q.order = True
        if rng.random() < 0.6:
            q.limit = rng.randint(0, 6)
            if rng.random() < 0.4:
                q.offset = rng.randint(0, 3)
    if "setops" in feats and rng.random() < 0.25:
        q.used.add("setops")
        w2 = g.pred(depth) if rng.random() < 0.8 else None
        if join_where:
            jw = ("lit", join_where)
            w2 = jw if w2 is None else ("bin", "AND", jw, w2)
        # UNION / INTERSECT / EXCEPT compare rows exactly: an aggregate
        # over REAL values may differ in its last bits between the arms
        # (summation order), in SQLite as in gqp
        ops = ["UNION ALL"]
        if not any(e[0] == "agg" for e in q.items):
            ops += ["UNION", "INTERSECT", "EXCEPT"]
        q.setop = (rng.choice(ops), w2)
    q.used |= g.used
    dedup_items(q, feats)
    return q, g


def dedup_items(q, feats):
    """Tag (feature dup_items) or remove repeated select items and GROUP BY keys."""
    for attr in ("items", "group"):
        seen, out = set(), []
        for e in getattr(q, attr):
            r = render(e, "gqp")
            if r in seen:
                if "dup_items" not in feats:
                    continue
                q.used.add("dup_items")
            seen.add(r)
            out.append(e)
        setattr(q, attr, out)


def gen_agg(rng, g, types, feats):
    fn = rng.choice(["COUNT", "COUNT", "SUM", "AVG", "MIN", "MAX"])
    if fn == "COUNT" and rng.random() < 0.5:
        return ("agg", "COUNT", None, False)
    if "agg_null" in feats and rng.random() < 0.05:
        g.use("agg_null")
        return ("agg", fn, ("lit", "NULL"), False)
    if fn in ("SUM", "AVG"):
        t = rng.choice(["INTEGER", "REAL"] if "reals" in feats else ["INTEGER"])
    else:
        t = rng.choice(types)
    dist = "distinct_agg" in feats and rng.random() < 0.2
    if dist:
        g.use("distinct_agg")
    return ("agg", fn, g.expr(t, 1), dist)


# ---------------------------------------------------------------- engines --

class GqpError(Exception):
    pass


class Gqp:
    """A gqp_batch process; run() returns ('ok', rows) / ('error', msg) /
    ('crash', stderr) / ('timeout', '')."""

    def __init__(self, binary, device, timeout):
        self.binary, self.device, self.timeout = binary, device, timeout
        self.p = None
        self.requests = 0

    def start(self):
        self.p = subprocess.Popen([self.binary, "--device", self.device], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
        self.buf = b""

    def stop(self):
        if self.p:
            try:
                self.p.kill()
            except OSError:
                pass
            self.p.wait()
            self.p = None

    def _readline(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if not r:
                raise TimeoutError
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def request(self, line):
        """Send one request line; return a list of results, one per statement:
        ('ok', rows) or ('error', msg); or ('crash', msg) / ('timeout', '')."""
        if self.p is None:
            self.start()
        self.requests += 1
        try:
            self.p.stdin.write(line.encode() + b"\n")
            out = []
            deadline = time.time() + self.timeout
            cur = None
            while True:
                ln = self._readline(deadline)
                if ln == ".":
                    return out
                if ln.startswith("R "):
                    cur = []
                    out.append(("ok", cur))
                elif ln.startswith("X "):
                    out.append(("error", ln[2:].replace("\\n", "\n")))
                else:
                    cur.append(tuple(parse_val(v) for v in ln.split("\t")) if ln != "" else ())
        except (EOFError, BrokenPipeError):
            err = b""
            try:
                self.p.wait(timeout=5)
                err = self.p.stderr.read() or b""
            except Exception:
                pass
            rc = self.p.returncode
            self.p = None
            msg = err.decode("utf-8", "replace").strip().splitlines()
            tail = [m for m in msg if "ERROR" in m or "SUMMARY" in m or "runtime error" in m][:3]
            return [("crash", "exit %s: %s" % (rc, " | ".join(tail or msg[-3:])))]
        except TimeoutError:
            self.stop()
            return [("timeout", "")]

    def run_db(self, setup, queries):
        """Reset, run the setup statements, then each query; results per query."""
        r = self.request("#reset")
        if r and r[0][0] in ("crash", "timeout"):
            return [r[0]] * len(queries)
        r = self.request("; ".join(setup)) if setup else []
        for x in r:
            if x[0] != "ok":
                return [("setup", x)] * len(queries)
        res = []
        for q in queries:
            r = self.request(q)
            if not r:
                res.append(("ok", []))
            else:
                res.append(r[-1] if r[0][0] == "ok" else r[0])
            if res[-1][0] in ("crash", "timeout"):
                # the process is gone: rebuild the database for the rest
                self.request("#reset")
                if setup:
                    self.request("; ".join(setup))
        return res


def parse_val(v):
    if v == "N":
        return None
    if v[0] == "i":
        return int(v[1:])
    if v[0] == "f":
        return float(v[1:])
    return v[1:].replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r").replace("\\\\", "\\")


def run_sqlite(setup, queries):
    con = sqlite3.connect(":memory:")
    for s in setup:
        con.execute(s)
    out = []
    for q in queries:
        try:
            out.append(("ok", [tuple(r) for r in con.execute(q).fetchall()]))
        except Exception as e:  # sqlite3.Error, OverflowError
            out.append(("error", "%s: %s" % (type(e).__name__, e)))
    con.close()
    return out


# ------------------------------------------------------------ comparison --

def val_eq(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300)


def sort_key(row):
    # numbers by their value to 9 significant digits (val_eq's tolerance),
    # so that two answers whose sums differ in the last bits, or that give 7
    # and 7.0, sort their rows alike; integers that share a float (e.g.
    # 9223372036854775807 and 9223372036854775806) then by their distance
    # from it, exactly
    def key(v):
        if v is None:
            return (0, 0, 0)
        if isinstance(v, str):
            return (2, 0, v)
        f = float(v)
        if math.isnan(f):
            return (1, math.inf, 1)
        r = float("%.9g" % f) if math.isfinite(f) else f
        return (1, r, 0 if isinstance(v, float) or not math.isfinite(f) else v - int(f))
    return tuple(key(v) for v in row)


def rows_eq(a, b, ordered):
    if len(a) != len(b):
        return False
    if not ordered:
        try:
            a, b = sorted(a, key=sort_key), sorted(b, key=sort_key)
        except OverflowError:
            pass
    def row_eq(ra, rb):
        return len(ra) == len(rb) and all(val_eq(x, y) for x, y in zip(ra, rb))
    if all(row_eq(ra, rb) for ra, rb in zip(a, b)):
        return True
    if ordered or len(a) > 2000:
        return False
    # rows whose numbers tie to 9 digits (1000000.0 and 1000000.001) may
    # sort apart: match each row with an equal one, in any order
    left = list(b)
    for ra in a:
        k = next((i for i, rb in enumerate(left) if row_eq(ra, rb)), -1)
        if k < 0:
            return False
        left.pop(k)
    return True


def fmt_rows(r, limit=12):
    if r[0] == "setup":
        return "the CREATE/INSERT failed: %s: %s" % (r[1][0], (r[1][1] or "").splitlines()[0] if r[1][1] else "")
    if r[0] != "ok":
        return "%s: %s" % (r[0], r[1].splitlines()[0] if r[1] else "")
    rows = r[1]
    s = "; ".join("|".join("NULL" if v is None else repr(v) for v in row) for row in rows[:limit])
    if len(rows) > limit:
        s += "; ... (%d rows)" % len(rows)
    return "%d rows: %s" % (len(rows), s) if rows else "0 rows"


def classify(g, s, ordered):
    """None when the answers agree, else the mismatch class."""
    if g[0] in ("crash", "timeout"):
        return g[0]
    if g[0] == "setup":
        return "crash" if g[1][0] in ("crash", "timeout") else "gqp_error"
    if g[0] == "error" and s[0] == "error":
        return None
    if g[0] == "error" and (g[1] or "").startswith(UNSUPPORTED):
        return "unsupported"
    if g[0] == "error":
        return "gqp_error"
    if s[0] == "error":
        return "sqlite_error"
    return None if rows_eq(g[1], s[1], ordered) else "wrong"


# ------------------------------------------------------------------- TLP --

def tlp_queries(q, rng, g):
    """(the unfiltered query, [three partitions]) for a TLP check, or None."""
    p = g.pred(rng.choice([1, 2]))
    base = q.where

    def part(form):
        def f(d):
            return form % render(p, d)
        return f
    forms = ["%s", "NOT %s", "(%s) IS NULL"]
    qs = []
    for form in forms:
        qs.append(q.sql("gqp", where=base, extra_where=part("(" + form + ")")))
    return q.sql("gqp"), qs, p


def tlp_check(whole, parts, agg):
    """Compare the combined partitions with the whole (gqp results)."""
    for x in [whole] + parts:
        if x[0] == "setup":
            return "crash" if x[1][0] in ("crash", "timeout") else "gqp_error"
    if whole[0] != "ok" or any(x[0] != "ok" for x in parts):
        bad = [x for x in [whole] + parts if x[0] != "ok"]
        if all(x[0] == "error" for x in [whole] + parts):
            return None
        if bad[0][0] in ("crash", "timeout"):
            return bad[0][0]
        if any(x[0] == "error" and (x[1] or "").startswith(UNSUPPORTED) for x in bad):
            return "unsupported"
        return "gqp_error" if whole[0] == "ok" else "tlp"
    if agg is None:
        combined = [r for x in parts for r in x[1]]
        return None if rows_eq(whole[1], combined, False) else "tlp"
    vals = [x[1][0][0] if x[1] else None for x in parts]
    nn = [v for v in vals if v is not None]
    if agg in ("COUNT", "COUNT(*)"):
        comb = sum(v or 0 for v in vals)
    elif agg == "SUM":
        comb = sum(nn) if nn else None
    elif agg == "MIN":
        comb = min(nn, key=sort_key_1) if nn else None
    else:
        comb = max(nn, key=sort_key_1) if nn else None
    w = whole[1][0][0] if whole[1] else None
    return None if val_eq(w, comb) else "tlp"


def sort_key_1(v):
    return sort_key((v,))


# ------------------------------------------------------------- reduction --

def reduce_case(gq, case):
    """Shrink a reproducer while its mismatch class stays: drop rows, then
    select items, then the WHERE clause. Returns the reduced case."""
    tables, q, cls = case["tables"], case["query"], case["cls"]
    if cls in ("tlp", "device", "sqlite_error"):
        return case

    def still(tabs, qq):
        setup_g, setup_s = PREFIX + ddl(tabs, "gqp"), ddl(tabs, "sqlite")
        g = gq.run_db(setup_g, [qq.sql("gqp")])[0]
        s = run_sqlite(setup_s, [qq.sql("sqlite")])[0]
        c = classify(g, s, qq.order)
        if c != cls:
            return None
        if cls == "gqp_error" and norm_err(g[1] if g[0] != "setup" else str(g[1])) != case["sig_err"]:
            return None
        return g, s

    budget = [150]

    def attempt(tabs, qq):
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        return still(tabs, qq)

    res = attempt(tables, q)
    if res is None:
        return case
    # rows
    for t in tables:
        i = len(t.rows) - 1
        while i >= 0:
            saved = t.rows
            t.rows = saved[:i] + saved[i + 1:]
            r = attempt(tables, q)
            if r is None:
                t.rows = saved
            else:
                res = r
            i -= 1
    # select items (not for aggregate/group queries with HAVING dependency)
    i = len(q.items) - 1
    while i >= 0 and len(q.items) > 1:
        if not (q.group and i < len(q.group)):
            saved = q.items
            q.items = saved[:i] + saved[i + 1:]
            r = attempt(tables, q)
            if r is None:
                q.items = saved
            else:
                res = r
        i -= 1
    if q.where is not None:
        saved = q.where
        q.where = None
        r = attempt(tables, q)
        if r is None:
            q.where = saved
        else:
            res = r
    case["g"], case["s"] = res
    return case


def norm_err(msg):
    m = (msg or "").splitlines()[0] if msg else ""
    m = re.sub(r'"[^"]*"', '"?"', m)
    m = re.sub(r"'[^']*'", "'?'", m)
    m = re.sub(r"\d+", "N", m)
    return m[:100]


# ------------------------------------------------------------------ main --

def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1:3000", help="A:B, seeds A..B inclusive (default 1:3000, the CI range)")
    ap.add_argument("--queries", type=int, default=60, help="queries per seed (default 60)")
    ap.add_argument("--features", default="ci",
                    help="'ci' (default: what gqp supports), 'all', or a comma list of "
                         "features, 'ci', 'all', +f and -f (e.g. ci,-dup_items or all,-cast_text)")
    ap.add_argument("--gqp-batch", default=os.path.join(ROOT, "build/tests/gqp_batch"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--compare-device", default=None, help="also run on this device, compare gqp with gqp")
    ap.add_argument("--aggregate", default=None, help="SET aggregate = sort|dense|auto before each query")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--report", default=None, help="write the reproducers here (markdown)")
    ap.add_argument("--max-repro", type=int, default=20)
    ap.add_argument("--no-reduce", action="store_true")
    ap.add_argument("--no-fail", action="store_true")
    ap.add_argument("--list-features", action="store_true")
    args = ap.parse_args()

    if args.list_features:
        for f, (ci, desc) in FEATURES.items():
            print("%-14s %-3s %s" % (f, "ci" if ci else "", desc))
        return 0
    feats = parse_features(args.features)
    a, _, b = args.seeds.partition(":")
    seeds = range(int(a), int(b or a) + 1)
    if not os.path.exists(args.gqp_batch):
        print("gqpdiff: %s not built (cmake --build build --target gqp_batch)" % args.gqp_batch, file=sys.stderr)
        return 2
    gq = Gqp(args.gqp_batch, args.device, args.timeout)
    gq2 = Gqp(args.gqp_batch, args.compare_device, args.timeout) if args.compare_device else None
    prefix = ["SET aggregate = '%s'" % args.aggregate] if args.aggregate else []
    PREFIX[:] = prefix

    t0 = time.time()
    counts = {}
    checks = 0
    cases = {}  # signature -> first case
    sig_counts = {}
    feat_hits = {}
    for seed in seeds:
        rng = random.Random(seed)
        tables = gen_tables(rng, feats)
        data_used = set()  # features the data itself exercises
        for t in tables:
            for r in t.rows:
                for v in r:
                    if v in INTS_EXTREME and not isinstance(v, float) or (isinstance(v, float) and v in REALS_EXTREME):
                        data_used.add("extremes")
                    elif isinstance(v, str) and v in STRS_UTF8:
                        data_used.add("utf8")
        setup_g, setup_s = prefix + ddl(tables, "gqp"), ddl(tables, "sqlite")
        items = []  # (kind, query, gqp sqls, sqlite sqls, extra)
        for _ in range(args.queries):
            q, g = gen_query(rng, tables, feats)
            q.used |= data_used
            is_agg = any(e[0] == "agg" for e in q.items)
            if ("tlp" in feats and rng.random() < 0.25 and not is_agg and not q.distinct and
                    not q.order and not q.setop):
                if "tlp_agg" in feats and rng.random() < 0.4:
                    fn = rng.choice(["COUNT(*)", "SUM", "MIN", "MAX", "COUNT"])
                    if fn == "COUNT(*)":
                        q.items = [("agg", "COUNT", None, False)]
                    else:
                        t = rng.choice(["INTEGER"] + (["REAL"] if "reals" in feats else []) +
                                       (["TEXT", "DATE"] if fn in ("MIN", "MAX") and "dates" in feats else []))
                        q.items = [("agg", fn, g.expr(t, 1), False)]
                    q.used.add("tlp_agg")
                    agg = fn
                else:
                    agg = None
                q.used |= g.used | {"tlp"}
                whole, parts, p = tlp_queries(q, rng, g)
                q.used |= g.used
                items.append(("tlp", q, [whole] + parts, None, (agg, p)))
            else:
                items.append(("cmp", q, [q.sql("gqp")], [q.sql("sqlite")], None))
        gsql = [s for it in items for s in it[2]]
        gres = gq.run_db(setup_g, gsql)
        ssql = [it[3][0] for it in items if it[3]]
        sres = iter(run_sqlite(setup_s, ssql))
        g2res = iter(gq2.run_db(setup_g, gsql)) if gq2 else None
        gi = iter(gres)
        for kind, q, gs, ss, extra in items:
            rs = [next(gi) for _ in gs]
            cls = None
            other = None
            if kind == "cmp":
                s = next(sres)
                cls = classify(rs[0], s, q.order)
                other = s
                checks += 1
            else:
                cls = tlp_check(rs[0], rs[1:], extra[0])
                checks += 1
            if gq2:
                r2 = [next(g2res) for _ in gs]
                checks += 1
                if cls is None:
                    for x, y in zip(rs, r2):
                        c2 = classify(y, x, q.order)
                        if c2 is not None and c2 != "sqlite_error" or (x[0] == "error") != (y[0] == "error"):
                            cls, other = "device", y
                            break
            if cls is None:
                continue
            counts[cls] = counts.get(cls, 0) + 1
            for f in q.used:
                feat_hits.setdefault(f, {}).setdefault(cls, 0)
                feat_hits[f][cls] += 1
            gerr = rs[0][1] if rs[0][0] in ("error", "crash") else (
                "setup: " + str(rs[0][1][1]) if rs[0][0] == "setup" else "")
            sig = (cls, norm_err(gerr) if cls in ("gqp_error", "crash") else "",
                   tuple(sorted(q.used)) if cls not in ("gqp_error", "crash") else ())
            sig_counts[sig] = sig_counts.get(sig, 0) + 1
            if sig not in cases:
                cases[sig] = {"cls": cls, "seed": seed, "tables": [Table(t.name, t.cols, list(t.rows)) for t in tables],
                              "query": q, "kind": kind, "sqls": gs, "g": rs[0], "s": other, "extra": extra,
                              "sig_err": norm_err(gerr), "gall": rs}
    elapsed = time.time() - t0
    failing = sum(v for k, v in counts.items() if k in FAILING)

    # reproducers: the most frequent signatures first, failing classes first
    order = sorted(cases, key=lambda k: (k[0] not in FAILING, -sig_counts[k]))
    shown = order[:args.max_repro]
    if not args.no_reduce:
        for k in shown:
            if cases[k]["kind"] == "cmp" and not gq2:
                reduce_case(gq, cases[k])
    gq.stop()
    if gq2:
        gq2.stop()

    summary = ("gqpdiff: seeds %d..%d, features %s: %d checks (%d gqp requests) in %.1f s; mismatches: %s"
               % (seeds[0], seeds[-1], args.features, checks, gq.requests, elapsed,
                  ", ".join("%s %d" % kv for kv in sorted(counts.items())) or "none"))
    print(summary)
    if counts:
        print("gqpdiff: distinct signatures: %d; by feature used (class: count):" % len(cases))
        for f in sorted(feat_hits):
            print("  %-14s %s" % (f, ", ".join("%s %d" % kv for kv in sorted(feat_hits[f].items()))))
    lines = ["# gqpdiff report", "", summary, ""]
    for n, k in enumerate(shown, 1):
        c = cases[k]
        lines += repro_md(n, c, sig_counts[k])
    if args.report:
        with open(args.report, "w") as f:
            f.write("\n".join(lines) + "\n")
        print("gqpdiff: report in %s" % args.report)
    else:
        for ln in lines[4:]:
            print(ln)
    return 1 if failing and not args.no_fail else 0


def repro_md(n, c, count):
    q = c["query"]
    out = ["## %d. %s (x%d, seed %d; features: %s)" % (n, c["cls"], count, c["seed"], ", ".join(sorted(q.used))),
           "", "```sql"]
    text = " ".join(c["sqls"]) + " " + q.sql("gqp")
    used_tabs = [t for t in c["tables"] if re.search(r"\b%s\b" % t.name, text)]
    out += [s + ";" for s in PREFIX + ddl(used_tabs, "gqp")]
    if c["kind"] == "cmp":
        out.append(q.sql("gqp") + ";")
        out.append("```")
        out.append("")
        out.append("- gqp:    " + fmt_rows(c["g"]))
        out.append("- sqlite: " + fmt_rows(c["s"]) + ("  (sqlite SQL: `%s`)" % q.sql("sqlite")
                                                       if q.sql("sqlite") != q.sql("gqp") else ""))
    else:
        for s in c["sqls"]:
            out.append(s + ";")
        out.append("```")
        out.append("")
        names = ["whole", "WHERE p", "WHERE NOT p", "WHERE p IS NULL"]
        for nm, r in zip(names, c["gall"]):
            out.append("- gqp %s: %s" % (nm, fmt_rows(r)))
        if c["cls"] == "device":
            out.append("- other device: " + fmt_rows(c["s"]))
    out.append("")
    return out


def parse_features(spec):
    if spec == "all":
        return set(FEATURES)
    base = set()
    parts = spec.split(",")
    for p in parts:
        p = p.strip()
        if p == "ci":
            base |= set(CI_FEATURES)
        elif p == "all":
            base |= set(FEATURES)
        elif p.startswith("+"):
            base.add(p[1:])
        elif p.startswith("-"):
            base.discard(p[1:])
        elif p:
            base.add(p)
    unknown = [f for f in base if f not in FEATURES]
    if unknown:
        sys.exit("gqpdiff: unknown features %s (see --list-features)" % ", ".join(unknown))
    return base


if __name__ == "__main__":
    sys.exit(main())
