#!/usr/bin/env python3
"""Correlated subqueries with LIMIT / OFFSET per outer row against sqlite3
(tests/diff, CI's diff stage).

    python3 tests/diff/limit_fuzz.py [--gqp build/gqp] [--seeds A:B] [--device D]

Scalar, IN / NOT IN (in WHERE and in the select list) and [NOT] EXISTS
subqueries correlated by one or two equalities, with a random LIMIT
(0, 1, several, -1) and OFFSET, ORDER BY a column with ties and NULLs
(NULLS FIRST / LAST too) then the table's unique id (so that SQLite's
answer is defined), over small random tables with NULL keys: rank_limit
and the forms it hands over to (libgqp/decorrelate.c). Each query runs
under `gqp run --device D` as is, in 3-row chunks (GQP_CHUNK_ROWS) and
with every range sort forced through the radix select (GQP_TOPK), and
through sqlite3; the rows are compared as multisets. Any error (also
"Not implemented": every template is a supported form) or difference
fails (exit status 1).
"""
import argparse
import os
import random
import subprocess
import sys

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--gqp", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "gqp"))
ap.add_argument("--seeds", default="0:40")
ap.add_argument("--device", default="cpu", help="gqp's --device (cpu, gpu, auto)")
args = ap.parse_args()
lo, hi = (int(v) for v in args.seeds.split(":"))
CONFIGS = [{}, {"GQP_CHUNK_ROWS": "3"}, {"GQP_TOPK": "force"}]


def val(r, nullp, a, b):
    return "NULL" if r.random() < nullp else str(r.randint(a, b))


def queries(r):
    out = []
    for _ in range(12):
        keys = r.choice([["t.k = o.k"], ["o.k = t.k", "t.j = o.j"], ["t.k = o.k + 1"], ["t.j = o.j"]])
        where = " AND ".join(keys) + r.choice(["", " AND t.y > 2", " AND t.z IS NOT NULL", " AND t.y <> t.z"])
        ob = r.choice(["t.z", "t.z DESC", "t.y DESC", "t.y", "t.z NULLS LAST", "t.y DESC NULLS FIRST"])
        order = " ORDER BY %s, t.id%s" % (ob, r.choice(["", " DESC"]))
        off = r.choice([None, 0, 1, 2, 4])
        lim = " LIMIT %d" % r.choice([0, 1, 2, 3, -1, 5]) + ("" if off is None else " OFFSET %d" % off)
        sub = "SELECT %s FROM t WHERE %s%s%s" % (r.choice(["t.y", "t.z", "t.id"]), where, order, lim)
        ex = "SELECT 1 FROM t WHERE %s%s" % (where, lim)
        out.append(r.choice([
            "SELECT o.id, (%s) FROM o" % sub,
            "SELECT o.id FROM o WHERE o.x < (%s)" % sub,
            "SELECT o.id FROM o WHERE o.x IN (%s)" % sub,
            "SELECT o.id FROM o WHERE o.x NOT IN (%s)" % sub,
            "SELECT o.id, o.x IN (%s) FROM o" % sub,
            "SELECT o.id FROM o WHERE o.id > 3 OR o.x NOT IN (%s)" % sub,
            "SELECT o.id FROM o WHERE EXISTS (%s)" % ex,
            "SELECT o.id FROM o WHERE NOT EXISTS (%s)" % ex,
            "SELECT o.id, EXISTS (%s) FROM o WHERE o.id > 1" % ex,
        ]))
    return out


bad = 0
checks = 0
for seed in range(lo, hi):
    r = random.Random(seed)
    stm = ["CREATE TABLE o(id INTEGER, k INTEGER, j INTEGER, x INTEGER)",
           "CREATE TABLE t(id INTEGER, k INTEGER, j INTEGER, y INTEGER, z INTEGER)"]
    no, nt = r.randint(0, 12), r.randint(0, 25)
    if no:
        stm.append("INSERT INTO o VALUES " + ",".join(
            "(%d,%s,%s,%s)" % (i, val(r, .15, 0, 4), val(r, .1, 0, 2), val(r, .2, 0, 6)) for i in range(no)))
    if nt:
        stm.append("INSERT INTO t VALUES " + ",".join(
            "(%d,%s,%s,%s,%s)" % (i, val(r, .15, 0, 4), val(r, .1, 0, 2), val(r, .2, 0, 9), val(r, .2, 0, 5))
            for i in range(nt)))
    for q in queries(r):
        sql = ";\n".join(stm + [q]) + ";\n"
        s = subprocess.run(["sqlite3", "-csv"], input=sql, capture_output=True, text=True)
        want = sorted(s.stdout.split("\n")[:-1]) if s.stdout else []
        for cfg in CONFIGS:
            env = dict(os.environ)
            env.update(cfg)
            g = subprocess.run([args.gqp, "run", "--device", args.device, "--mode", "csv", "-"], input=sql,
                               capture_output=True, text=True, env=env)
            got = sorted(g.stdout.split("\n")[1:-1]) if g.stdout else []
            checks += 1
            if g.returncode != 0 or got != want:
                bad += 1
                print("seed %d %s: %s\n  sqlite3: %s\n  gqp:     %s %s" % (
                    seed, cfg or "default", q, want, got, (g.stderr or "").strip()[:300]))
                break
print("limit_fuzz: seeds %d:%d, %d checks, %d failing" % (lo, hi, checks, bad))
sys.exit(1 if bad else 0)
