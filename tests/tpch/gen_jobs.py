#!/usr/bin/env python3
"""`gqp gen tpch --jobs N` against --jobs 1: the same files, byte for byte.

Usage: gen_jobs.py GQP_BINARY WORKDIR

Generates SF 0.05 once with one dbgen process and once with three (dbgen's
steps in parallel, part files read as one source), then checks that bin/
and gqp.yaml are identical, that no CSV is left, that --keep-csv keeps the
parts and their config loads (a list of sources) with the same row counts,
and that the --duckdb database built from the parts holds dbgen's rows in
dbgen's order. Exit 0 when all hold, 1 otherwise, 77 (skipped) without
python3's duckdb and its tpch extension.
"""
import filecmp
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SF = "0.05"


def gen(gqp, out, *extra):
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([gqp, "gen", "tpch", "--sf", SF, "--out", out] + list(extra),
                       capture_output=True, text=True)
    msg = (p.stderr + p.stdout).strip()
    if p.returncode != 0 and "needs python3 with duckdb" in msg:
        print(msg + "\ngen_jobs: SKIPPED (python3 lacks duckdb / its tpch extension)")
        sys.exit(77)
    if p.returncode != 0:
        print(msg + "\ngen_jobs: FAIL: gqp gen tpch %s" % " ".join(extra))
        sys.exit(1)


def files(d):
    return sorted(os.path.relpath(os.path.join(r, f), d)
                  for r, _, fs in os.walk(d) for f in fs)


def count(gqp, cfg, table):
    p = subprocess.run([gqp, "run", "-c", cfg, "--mode", "csv", "-e",
                        "SELECT count(*) AS n FROM %s" % table], capture_output=True, text=True)
    return p.stdout.strip().splitlines()[-1] if p.returncode == 0 else "error: " + p.stderr


def main():
    gqp, work = os.path.abspath(sys.argv[1]), sys.argv[2]
    os.makedirs(work, exist_ok=True)
    one, three, keep = (os.path.join(work, d) for d in ("jobs1", "jobs3", "keep"))
    gen(gqp, one, "--jobs", "1")
    gen(gqp, three, "--jobs", "3", "--duckdb", os.path.join(three, "tpch.duckdb"))
    bad = []
    want = files(one)
    got = [f for f in files(three) if f != "tpch.duckdb"]
    if got != want:
        bad.append("files differ: %s" % sorted(set(got) ^ set(want)))
    for f in want:
        if f in got and not filecmp.cmp(os.path.join(one, f), os.path.join(three, f),
                                        shallow=False):
            bad.append("%s differs" % f)
    gen(gqp, keep, "--jobs", "3", "--keep-csv")
    parts = [f for f in files(keep) if f.startswith("csv/") and f.endswith(".csv")]
    if len(parts) != 24:
        bad.append("--keep-csv kept %d part files, not 24" % len(parts))
    for t in ("lineitem", "nation"):
        a = count(gqp, os.path.join(one, "gqp.yaml"), t)
        b = count(gqp, os.path.join(keep, "gqp-csv.yaml"), t)
        if a != b or a.startswith("error"):
            bad.append("%s: %s rows from bin/, %s from the parts" % (t, a, b))
    sys.path.insert(0, os.path.join(HERE, "..", "..", "cli"))
    import tpch_gen
    import duckdb
    mem = tpch_gen.connect()
    mem.execute("CALL dbgen(sf=%s)" % SF)
    db = duckdb.connect(os.path.join(three, "tpch.duckdb"), read_only=True)
    for t in tpch_gen.TABLES:
        q = ("SELECT count(*), md5(string_agg(x::VARCHAR, chr(10) ORDER BY rn)) FROM "
             "(SELECT row_number() OVER () AS rn, t AS x FROM %s t)" % t)
        if mem.execute(q).fetchone() != db.execute(q).fetchone():
            bad.append("tpch.duckdb: table %s differs from dbgen's" % t)
        if mem.execute("DESCRIBE %s" % t).fetchall() != db.execute("DESCRIBE %s" % t).fetchall():
            bad.append("tpch.duckdb: table %s's columns differ from dbgen's" % t)
    for b in bad:
        print("gen_jobs: FAIL: " + b)
    if not bad:
        print("gen_jobs: ok (SF %s, --jobs 3 == --jobs 1)" % SF)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
