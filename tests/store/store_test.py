#!/usr/bin/env python3
"""The persistent database (docs/storage.md), through the real binary.

usage: store_test.py GQP WORKDIR

1. persistence: groups of CREATE TABLE [AS] / INSERT / UPDATE / DELETE /
   DROP / CREATE VIEW statements, each group in its own `gqp run --db`
   process; after each group a new process reads every table and view,
   compared with sqlite3 running the same statements on a file database.
2. import: `gqp import -c gqp.yaml --db DIR` of a generated table, checked
   against sqlite3 reading the same CSV.
3. crash: a child `gqp run --db` runs a script of large INSERT / UPDATE /
   DELETE statements and is killed with SIGKILL after a random delay; the
   reopened database must be exactly one of the states sqlite3 computes
   before / after each statement, and hold no folder its catalog does not
   name. Repeated up to 40 times within about 20 s.
4. damaged catalogs: 150 random mutations of a catalog give an error or a
   consistent open, never a crash (or, in the sanitizer build, a report).
"""
import csv
import io
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

GQP = None
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL:", msg, file=sys.stderr)


def run_gqp(db, sql, check=True):
    """Run sql in a new `gqp run --db db` process; (stdout, stderr, rc)."""
    p = subprocess.run([GQP, "run", "--device", "cpu", "--mode", "csv", "--db", db, "-e", sql],
                       capture_output=True, text=True)
    if check and p.returncode != 0:
        raise SystemExit("gqp failed on %r:\n%s" % (sql, p.stderr))
    return p.stdout, p.stderr, p.returncode


def gqp_rows(db, query):
    """The rows of one query, as lists of strings (NULL: '')."""
    out, _, _ = run_gqp(db, query)
    rows = list(csv.reader(io.StringIO(out)))
    return rows[1:]


def norm(v):
    if v is None:
        return ""
    return str(v)


def same_cell(a, b):
    """gqp's text a against sqlite's value b (numbers compared as numbers)."""
    if b is None:
        return a == ""
    if isinstance(b, (int, float)) and a != "":
        try:
            x = float(a)
        except ValueError:
            return False
        return abs(x - float(b)) <= 1e-9 * max(1.0, abs(float(b)))
    return a == str(b)


def compare(what, got, want):
    if len(got) != len(want) or any(
            len(g) != len(w) or not all(same_cell(x, y) for x, y in zip(g, w))
            for g, w in zip(got, want)):
        fail("%s: gqp %r != sqlite %r" % (what, got[:10], [list(map(norm, w)) for w in want[:10]]))


def test_persistence(work):
    db = os.path.join(work, "persist_db")
    ref = os.path.join(work, "persist.sqlite")
    groups = [
        ["CREATE TABLE t(id INTEGER, name TEXT, price DOUBLE, qty INTEGER, d DATE)",
         "INSERT INTO t VALUES (1, 'apple', 1.5, 10, '2024-01-05'), "
         "(2, 'banana', 0.25, NULL, '2023-12-31'), (3, NULL, 2.0, 7, NULL), "
         "(4, 'it''s', 3.75, 1, '2024-02-29'), (5, 'two\nlines', 4.5, 3, '2000-01-01')"],
        ["UPDATE t SET price = price * 2 WHERE qty > 5",
         "DELETE FROM t WHERE id = 2",
         "INSERT INTO t SELECT id + 10, name, price, qty, d FROM t"],
        ["CREATE TABLE u AS SELECT name, sum(qty) AS q FROM t GROUP BY name",
         "CREATE VIEW v AS SELECT id, name FROM t WHERE price > 2",
         "CREATE INDEX ix ON t(id)"],
        ["DROP TABLE u",
         "UPDATE t SET name = 'cherry' WHERE name IS NULL",
         "DELETE FROM t WHERE id > 13",
         "CREATE TABLE e(x INTEGER)"],
        ["DROP VIEW v",
         "CREATE VIEW v2 AS SELECT count(*) AS n FROM t",
         "INSERT INTO e VALUES (1), (2)",
         "DELETE FROM e WHERE x = 1"],
    ]
    checks = [
        ("t", "SELECT * FROM t ORDER BY id"),
        ("u", "SELECT * FROM u ORDER BY name"),
        ("v", "SELECT * FROM v ORDER BY id"),
        ("e", "SELECT * FROM e ORDER BY x"),
        ("v2", "SELECT n FROM v2"),
    ]
    shutil.rmtree(db, ignore_errors=True)
    if os.path.exists(ref):
        os.remove(ref)
    for gi, g in enumerate(groups):
        run_gqp(db, ";\n".join(g) + ";")
        con = sqlite3.connect(ref)
        for s in g:
            con.execute(s)
        con.commit()
        con.close()
        con = sqlite3.connect(ref)  # reopened, as gqp is
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
        for name, q in checks:
            if name not in names:
                _, err, rc = run_gqp(db, q, check=False)
                if rc == 0:
                    fail("group %d: %s should not exist in gqp" % (gi + 1, name))
                continue
            compare("group %d: %s" % (gi + 1, q), gqp_rows(db, q), con.execute(q).fetchall())
        con.close()
    # -c DIR is the same database
    p = subprocess.run([GQP, "run", "--mode", "csv", "-c", db + "/", "-e",
                        "SELECT count(*) FROM t"], capture_output=True, text=True)
    if p.returncode != 0 or list(csv.reader(io.StringIO(p.stdout)))[1:] != gqp_rows(
            db, "SELECT count(*) FROM t"):
        fail("gqp run -c DIR/: rc %d, %r %r" % (p.returncode, p.stdout, p.stderr))
    # a missing .yaml path is still a missing config, and creates nothing
    missing = os.path.join(work, "no_such.yaml")
    p = subprocess.run([GQP, "run", "-c", missing, "-e", "SELECT 1"], capture_output=True,
                       text=True)
    if p.returncode == 0 or os.path.exists(missing):
        fail("gqp run -c missing.yaml: rc %d, exists %s" % (p.returncode, os.path.exists(missing)))
    # a failed statement changes nothing, on disk either
    before = gqp_rows(db, "SELECT * FROM t ORDER BY id")
    _, err, rc = run_gqp(db, "INSERT INTO t VALUES (99, 'x', 'not a number', 1, NULL)",
                         check=False)
    if rc == 0:
        fail("a bad INSERT succeeded")
    if gqp_rows(db, "SELECT * FROM t ORDER BY id") != before:
        fail("a failed INSERT changed the table")


def load_sqlite_test(con, csv_path):
    con.execute("CREATE TABLE test(id INTEGER, uniformi INTEGER, normali5 INTEGER, "
                "normali20 INTEGER, uniformf REAL, normalf5 REAL, normalf20 REAL)")
    with open(csv_path) as f:
        r = csv.reader(f)
        next(r)
        con.executemany("INSERT INTO test VALUES (?,?,?,?,?,?,?)",
                        ([int(x[0]), int(x[1]), int(x[2]), int(x[3]), float(x[4]),
                          float(x[5]), float(x[6])] for x in r))


def test_import(work):
    gen = os.path.join(work, "gen")
    db = os.path.join(work, "import_db")
    shutil.rmtree(gen, ignore_errors=True)
    shutil.rmtree(db, ignore_errors=True)
    subprocess.run([GQP, "gen", "test", "--rows", "20000", "--out", gen], check=True,
                   capture_output=True)
    p = subprocess.run([GQP, "import", "-c", os.path.join(gen, "gqp.yaml"), "--db", db],
                       capture_output=True, text=True)
    if p.returncode != 0 or "imported test" not in p.stderr:
        fail("gqp import: rc %d, %s" % (p.returncode, p.stderr))
        return
    p = subprocess.run([GQP, "import", "-c", os.path.join(gen, "gqp.yaml"), "--db", db],
                       capture_output=True, text=True)
    if p.returncode == 0 or "already exists" not in p.stderr:
        fail("a second import of the same table: rc %d, %s" % (p.returncode, p.stderr))
    con = sqlite3.connect(":memory:")
    load_sqlite_test(con, os.path.join(gen, "test.csv"))
    q = ("SELECT count(*), sum(id), sum(uniformi), sum(normali20), min(uniformf), "
         "max(normalf20) FROM test")
    compare("import", gqp_rows(db, q), con.execute(q).fetchall())
    # a bare CSV file: sniffed by read_csv (header, types), table named by --table
    p = subprocess.run([GQP, "import", os.path.join(gen, "test.csv"), "--db", db, "--table",
                        "test_csv"], capture_output=True, text=True)
    if p.returncode != 0 or "imported test_csv" not in p.stderr:
        fail("gqp import of a bare CSV: rc %d, %s" % (p.returncode, p.stderr))
        return
    q2 = q.replace("FROM test", "FROM test_csv")
    compare("import of a bare CSV", gqp_rows(db, q2), con.execute(q).fetchall())


CRASH_SQL = [
    "UPDATE t SET a = a + 1 WHERE id % 2 = 0",
    "INSERT INTO t SELECT id + 1000000, a, b, s FROM t WHERE id < 6000",
    "DELETE FROM t WHERE id % 7 = 3",
    "UPDATE t SET s = 'zzz' WHERE id % 5 = 0",
    "INSERT INTO t SELECT id + 2000000, b, a, s FROM t WHERE id % 3 = 1",
    "UPDATE t SET b = b - 3, s = NULL WHERE id % 11 = 0",
    "DELETE FROM t WHERE a > 50",
    "INSERT INTO t SELECT id + 3000000, a, b, 'new' FROM t WHERE id < 12000",
]
MAKE_T = ("CREATE TABLE t AS SELECT id, uniformi AS a, normali5 AS b, CASE WHEN id % 3 = 0 "
          "THEN 'x' WHEN id % 3 = 1 THEN 'yy' ELSE NULL END AS s FROM test")
CHECKSUM = "SELECT count(*), sum(id), sum(a), sum(b), count(s), sum(length(s)) FROM t"


def folders_named(db):
    """The folder numbers gqp.catalog names."""
    out = set()
    with open(os.path.join(db, "gqp.catalog")) as f:
        for line in f:
            w = line.split(" ")
            if w[0] == "table":
                out.add("t" + w[2])
    return out


def test_crash(work):
    gen = os.path.join(work, "gen_crash")
    tmpl = os.path.join(work, "crash_template")
    db = os.path.join(work, "crash_db")
    for d in (gen, tmpl, db):
        shutil.rmtree(d, ignore_errors=True)
    # GQP_TEST_SCALE (the sanitizer run sets 0.1) shrinks the table
    rows = max(20000, int(100000 * float(os.environ.get("GQP_TEST_SCALE", "1"))))
    subprocess.run([GQP, "gen", "test", "--rows", str(rows), "--out", gen], check=True,
                   capture_output=True)
    subprocess.run([GQP, "import", "-c", os.path.join(gen, "gqp.yaml"), "--db", tmpl],
                   check=True, capture_output=True)
    run_gqp(tmpl, MAKE_T + "; DROP TABLE test;")
    # the states, from sqlite
    con = sqlite3.connect(":memory:")
    load_sqlite_test(con, os.path.join(gen, "test.csv"))
    con.execute(MAKE_T)
    states = [tuple(con.execute(CHECKSUM).fetchone())]
    for s in CRASH_SQL:
        con.execute(s)
        states.append(tuple(con.execute(CHECKSUM).fetchone()))
    if len(set(states)) != len(states):
        fail("crash test: two states have the same checksum (pick other statements)")
    script = ";\n".join(CRASH_SQL) + ";"

    def state_of(d):
        rows = gqp_rows(d, CHECKSUM)
        got = tuple(int(x) if x != "" else None for x in rows[0])
        return states.index(got) if got in states else got

    if state_of(tmpl) != 0:
        fail("crash test: the template is not state 0 (%r)" % (state_of(tmpl),))
        return
    # one run to the end: the last state, and how long it takes
    shutil.copytree(tmpl, db)
    t0 = time.monotonic()
    run_gqp(db, script)
    full = time.monotonic() - t0
    if state_of(db) != len(CRASH_SQL):
        fail("crash test: an uninterrupted run ends in state %r, not %d" %
             (state_of(db), len(CRASH_SQL)))
        return
    rng = random.Random(int(os.environ.get("GQP_CRASH_SEED", "14")))
    seen = []
    start = time.monotonic()
    for it in range(40):
        if it >= 10 and time.monotonic() - start > 20:
            break
        shutil.rmtree(db)
        shutil.copytree(tmpl, db)
        child = subprocess.Popen([GQP, "run", "--device", "cpu", "--db", db, "-e", script],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, full * 1.1))
        child.send_signal(signal.SIGKILL)
        child.wait()
        k = state_of(db)
        if not isinstance(k, int):
            fail("crash test, iteration %d: the reopened table %r is no state" % (it, k))
            break
        seen.append(k)
        # the recovered database takes writes
        run_gqp(db, "CREATE TABLE after AS SELECT count(*) AS n FROM t")
        n = gqp_rows(db, "SELECT n FROM after")
        if n != [[str(states[k][0])]]:
            fail("crash test, iteration %d: a write after recovery: %r" % (it, n))
        extra = {e for e in os.listdir(db) if e != "gqp.catalog"} - folders_named(db)
        if extra:
            fail("crash test, iteration %d: left over after reopening: %s" % (it, sorted(extra)))
    print("crash test: %d kills, states seen %s (of 0..%d), full run %.2f s" %
          (len(seen), sorted(set(seen)), len(CRASH_SQL), full))


def test_corrupt_catalogs(work):
    """Randomly damaged catalogs: an error or a consistent open, never a
    crash or a sanitizer report."""
    base_db = os.path.join(work, "fuzz_base")
    db = os.path.join(work, "fuzz_db")
    shutil.rmtree(base_db, ignore_errors=True)
    run_gqp(base_db, "CREATE TABLE t(a INT, s TEXT, d DECIMAL(10,2)); "
            "INSERT INTO t VALUES (1, 'x', 1.5), (2, NULL, NULL); CREATE UNIQUE INDEX i ON t(a); "
            "CREATE VIEW v(q) AS SELECT a FROM t;")
    with open(os.path.join(base_db, "gqp.catalog"), "rb") as f:
        base = f.read()
    rng = random.Random(7)
    for it in range(150):
        b = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            pos = rng.randrange(len(b)) if b else 0
            if op < 0.4 and b:
                b[pos] = rng.choice(b" \n\\x0123456789abtcolumnidexvw-")
            elif op < 0.7:
                b[pos:pos] = bytes([rng.randrange(256)])
            elif op < 0.85 and b:
                del b[pos:pos + rng.randint(1, 10)]
            else:
                lines = b.split(b"\n")
                lines.insert(rng.randrange(len(lines)), lines[rng.randrange(len(lines))])
                b = bytearray(b"\n".join(lines))
        shutil.rmtree(db, ignore_errors=True)
        shutil.copytree(base_db, db)
        with open(os.path.join(db, "gqp.catalog"), "wb") as f:
            f.write(b)
        _, err, rc = run_gqp(db, "SELECT * FROM t; SELECT * FROM v; "
                             "INSERT INTO t VALUES (3, 'y', 2);", check=False)
        if rc not in (0, 1) or "Sanitizer" in err or "runtime error" in err:
            fail("damaged catalog %r: rc %d, %s" % (bytes(b), rc, err[-1500:]))
            break


def main():
    global GQP
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    GQP = os.path.abspath(sys.argv[1])
    work = sys.argv[2]
    os.makedirs(work, exist_ok=True)
    test_persistence(work)
    test_import(work)
    test_crash(work)
    test_corrupt_catalogs(work)
    if FAILS:
        print("%d failure(s)" % len(FAILS), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
