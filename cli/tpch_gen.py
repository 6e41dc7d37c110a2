#!/usr/bin/env python3
"""TPC-H tables through DuckDB's tpch extension (the real dbgen), as CSV.

Usage: tpch_gen.py --sf N --out DIR [--decimal] [--duckdb FILE] [--handshake]
                   [--jobs N] [--keep-csv]

`gqp gen tpch` runs this script (built into the gqp binary from
cli/tpch_gen.py) with python3 and --handshake: after writing each table
(lineitem first) the script prints the table's name on stdout and waits
for a line on stdin, while gqp turns that table into a binary-column
folder and removes its CSV, so that at most one table's text is on disk
at a time. Writes:
  DIR/csv/<table>.csv   the eight tables, with a header line
  DIR/csv/<table>.yaml  a gqp config declaring that table alone
  DIR/gqp-csv.yaml      a gqp config declaring all eight from the CSV files
DuckDB's DECIMAL(p,s) money columns are declared FLOAT64, or DECIMAL(p,s)
with --decimal; its BIGINT keys are declared INT32 when every value of the
column fits (true up to SF 300: lossless, half the bytes), else INT64. --duckdb FILE also keeps the generated database in FILE
(bench/tpch.py runs DuckDB on it). Exit 3 when duckdb or the extension is
missing, 1 on other errors.

--jobs N (default: all cores from SF 0.5 up, else 1) runs dbgen in N
processes, process i generating step i of `dbgen(sf, children=N, step=i)`
(the steps in order hold exactly the rows of one `dbgen(sf)`, in its order),
each writing its part of every table, one table at a time, as
DIR/csv/<table>.<i>.csv (only part 0 with the header line); the table's
config lists the parts as its `source`, read as one file. With --duckdb the
database file is loaded from the same parts (COPY ... FROM, in order) while
gqp converts them. The script removes the parts once gqp has answered,
unless --keep-csv.
"""
import argparse
import glob
import json
import os
import sys
import time

NEED = ("Error: gqp gen tpch needs python3 with duckdb==1.5.5 and "
        "duckdb-extension-tpch==1.5.5 (pip install duckdb==1.5.5 "
        "duckdb-extension-tpch==1.5.5)")
TABLES = ["lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region"]
TYPES = {"INTEGER": "INT32", "BIGINT": "INT64", "DATE": "DATE", "DOUBLE": "FLOAT64",
         "VARCHAR": "STRING"}


def extension_path(duckdb):
    """The tpch extension file matching this duckdb, or None."""
    try:
        import duckdb_extension_tpch
    except ImportError:
        return None
    base = os.path.dirname(duckdb_extension_tpch.__file__)
    found = glob.glob(os.path.join(base, "extensions", "v" + duckdb.__version__,
                                   "tpch.duckdb_extension"))
    return found[0] if found else None


def connect(db_file=None):
    """A DuckDB connection (to db_file, or in memory) with tpch loaded;
    exits 3 with NEED when duckdb or the extension is missing."""
    try:
        import duckdb
    except ImportError:
        print(NEED + " [no duckdb module in %s]" % sys.executable, file=sys.stderr)
        sys.exit(3)
    ext = extension_path(duckdb)
    if not ext:
        print(NEED + " [duckdb %s has no matching tpch extension]" % duckdb.__version__,
              file=sys.stderr)
        sys.exit(3)
    if db_file:
        os.makedirs(os.path.dirname(os.path.abspath(db_file)), exist_ok=True)
    con = duckdb.connect(db_file) if db_file else duckdb.connect()
    con.execute("LOAD '%s'" % ext.replace("'", "''"))
    return con


def gqp_type(con, table, col, t, decimal):
    """gqp's type name for column col (DuckDB type t) of table."""
    if t.startswith("DECIMAL"):
        return t if decimal else "FLOAT64"
    if t == "BIGINT":
        lo, hi = con.execute('SELECT min("%s"), max("%s") FROM %s' % (col, col, table)).fetchone()
        if lo is None or (lo >= -2**31 and hi < 2**31):
            return "INT32"
    if t not in TYPES:
        raise SystemExit("tpch_gen.py: no gqp type for DuckDB's %s" % t)
    return TYPES[t]


def worker(sf, jobs, step, out, threads, rd, wr):
    """Process `step` of a parallel run: dbgen's step into memory, then for
    each table, on a line from the parent (rd), its part as CSV and a JSON
    line to the parent (wr) with the table's columns and each BIGINT
    column's [min, max]. Never returns."""
    code = 0
    try:
        con = connect()
        con.execute("SET enable_progress_bar = false")
        con.execute("SET threads = %d" % threads)
        t0 = time.time()
        con.execute("CALL dbgen(sf=%r, children=%d, step=%d)" % (sf, jobs, step))
        if os.environ.get("GQP_GEN_TIMING", "") not in ("", "0"):
            print("tpch_gen.py: dbgen step %d of %d: %.1f s" % (step, jobs, time.time() - t0),
                  file=sys.stderr)
        for t in TABLES:
            if not rd.readline():
                break  # the parent went away
            cols = con.execute("SELECT column_name, data_type FROM information_schema.columns "
                               "WHERE table_name = ? ORDER BY ordinal_position", [t]).fetchall()
            path = os.path.join(out, "csv", "%s.%d.csv" % (t, step))
            con.execute("COPY %s TO '%s' (HEADER %s, DELIMITER ',')" %
                        (t, path.replace("'", "''"), "true" if step == 0 else "false"))
            mm = {}
            for n, ty in cols:
                if ty == "BIGINT":
                    mm[n] = list(con.execute('SELECT min("%s"), max("%s") FROM %s' %
                                             (n, n, t)).fetchone())
            # its memory back for gqp: DuckDB keeps a dropped table's blocks
            # until its memory limit is lowered to what is still in use
            con.execute("DROP TABLE %s" % t)
            used = con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()[0]
            con.execute("SET memory_limit = '%dMB'" % ((used or 0) // 2**20 + 256))
            con.execute("RESET memory_limit")
            wr.write(json.dumps({"table": t, "cols": cols, "minmax": mm}) + "\n")
            wr.flush()
        con.close()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
        if not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except BaseException as e:  # noqa: BLE001  (reported, then the process ends)
        print("tpch_gen.py: dbgen step %d of %d: %s" % (step, jobs, e), file=sys.stderr)
        code = 1
    sys.stderr.flush()
    os._exit(code)


def start_workers(a, jobs):
    """Fork the jobs worker processes; [(pid, to_worker, from_worker)]."""
    threads = max(1, (os.cpu_count() or 1) // jobs)
    ws = []
    for step in range(jobs):
        r1, w1 = os.pipe()  # parent -> worker
        r2, w2 = os.pipe()  # worker -> parent
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(w1)
            os.close(r2)
            for _, to, frm in ws:
                to.close()
                frm.close()
            worker(a.sf, jobs, step, a.out, threads, os.fdopen(r1, "r"), os.fdopen(w2, "w"))
        os.close(r1)
        os.close(w2)
        ws.append((pid, os.fdopen(w1, "w"), os.fdopen(r2, "r")))
    return ws


def parallel(a, jobs, head):
    """--jobs > 1: the tables from jobs dbgen processes, as part files.
    Returns the gqp-csv.yaml lines."""
    os.makedirs(os.path.join(a.out, "csv"), exist_ok=True)
    ws = start_workers(a, jobs)  # before this process opens DuckDB
    con = connect(a.duckdb)
    con.execute("SET enable_progress_bar = false")
    if a.duckdb:
        con.execute("CALL dbgen(sf=0)")  # the eight tables, empty
        # loading needs little memory; the rest is for gqp and the dbgen
        # processes (DuckDB's default limit is 80% of the machine's)
        con.execute("SET memory_limit = '4GB'")
    head = head % con.execute("SELECT version()").fetchone()[0]
    yaml = [head, "tables:"]
    for t in TABLES:
        t0 = time.time()
        for _, to, _ in ws:
            try:
                to.write("go\n")
                to.flush()
            except OSError:
                pass  # seen below as a missing answer
        got = []
        for step, (pid, _, frm) in enumerate(ws):
            line = frm.readline()
            if not line:
                _, st = os.waitpid(pid, 0)
                code = os.waitstatus_to_exitcode(st)
                how = ("was killed by signal %d" % -code if code < 0
                       else "ended with status %d" % code)
                sys.exit(3 if code == 3 else "tpch_gen.py: dbgen step %d of %d (process %d) %s "
                         "before writing its part of table %s" % (step, jobs, pid, how, t))
            got.append(json.loads(line))
        parts = ["%s.%d.csv" % (t, i) for i in range(jobs)]
        one = ["  - name: %s" % t, "    source: [%s]" % ", ".join(parts), "    format: csv",
               "    header: true", "    columns:"]
        for n, ty in got[0]["cols"]:
            if ty.startswith("DECIMAL"):
                g = ty if a.decimal else "FLOAT64"
            elif ty == "BIGINT":
                mms = [w["minmax"][n] for w in got if w["minmax"][n][0] is not None]
                fits = all(lo >= -2**31 and hi < 2**31 for lo, hi in mms)
                g = "INT32" if fits else "INT64"
            elif ty in TYPES:
                g = TYPES[ty]
            else:
                sys.exit("tpch_gen.py: no gqp type for DuckDB's %s" % ty)
            one.append("      - {name: %s, type: %s}" % (n, '"%s"' % g if "," in g else g))
        with open(os.path.join(a.out, "csv", t + ".yaml"), "w") as f:
            f.write("\n".join([head, "tables:"] + one) + "\n")
        yaml += [one[0], "    source: [%s]" % ", ".join("csv/" + p for p in parts)] + one[2:]
        t1 = time.time()
        if a.handshake:
            print(t, flush=True)
        if a.duckdb:  # while gqp converts the same files
            for i, p in enumerate(parts):
                path = os.path.join(a.out, "csv", p)
                if i > 0 and os.path.getsize(path) == 0:
                    continue  # a step with no rows of a small table (nation at 16 steps)
                con.execute("COPY %s FROM '%s' (HEADER %s, DELIMITER ',')" % (
                    t, path.replace("'", "''"), "true" if i == 0 else "false"))
        if a.handshake and not sys.stdin.readline():
            sys.exit(1)  # gqp went away
        if not a.keep_csv:
            for p in parts:
                os.remove(os.path.join(a.out, "csv", p))
        if a.timing:
            print("tpch_gen.py: %s: dbgen + csv %.1f s, gqp%s %.1f s" % (
                t, t1 - t0, " + duckdb" if a.duckdb else "", time.time() - t1), file=sys.stderr)
    for pid, to, frm in ws:
        to.close()
        frm.close()
        _, st = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(st) != 0:
            sys.exit("tpch_gen.py: dbgen step process %d failed with status %d at its end" %
                     (pid, os.waitstatus_to_exitcode(st)))
    con.close()
    return yaml


def check_modules():
    """Exit 3 with NEED unless duckdb and its tpch extension are there,
    without loading duckdb (worker processes are forked after this)."""
    import importlib.metadata
    import importlib.util
    if importlib.util.find_spec("duckdb") is None:
        print(NEED + " [no duckdb module in %s]" % sys.executable, file=sys.stderr)
        sys.exit(3)

    class V:  # what extension_path reads of the module
        __version__ = importlib.metadata.version("duckdb")
    if not extension_path(V):
        print(NEED + " [duckdb %s has no matching tpch extension]" % V.__version__,
              file=sys.stderr)
        sys.exit(3)


def main():
    ap = argparse.ArgumentParser(description="TPC-H tables via DuckDB's dbgen, as CSV")
    ap.add_argument("--sf", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--decimal", action="store_true",
                    help="declare money columns DECIMAL(p,s) instead of FLOAT64")
    ap.add_argument("--duckdb", metavar="FILE", help="keep the DuckDB database in FILE")
    ap.add_argument("--handshake", action="store_true",
                    help="after each table print its name and wait for a line on stdin")
    ap.add_argument("--jobs", type=int, default=0,
                    help="dbgen processes (default: all cores from SF 0.5 up, else 1)")
    ap.add_argument("--keep-csv", action="store_true",
                    help="with --jobs > 1: keep the part files (else removed after gqp's answer)")
    a = ap.parse_args()
    if not a.sf > 0:
        sys.exit("tpch_gen.py: --sf must be positive")
    if a.jobs < 0:
        sys.exit("tpch_gen.py: --jobs must be positive")
    jobs = a.jobs or ((os.cpu_count() or 1) if a.sf >= 0.5 else 1)
    a.timing = os.environ.get("GQP_GEN_TIMING", "") not in ("", "0")
    if a.duckdb and os.path.exists(a.duckdb):
        os.remove(a.duckdb)
    if jobs > 1:
        check_modules()
        yaml = parallel(a, jobs, "# TPC-H SF %g from DuckDB %%s's tpch extension (dbgen, %d "
                        "processes), as CSV" % (a.sf, jobs))
        with open(os.path.join(a.out, "gqp-csv.yaml"), "w") as f:
            f.write("\n".join(yaml) + "\n")
        return
    con = connect(a.duckdb)
    con.execute("SET enable_progress_bar = false")
    os.makedirs(os.path.join(a.out, "csv"), exist_ok=True)
    con.execute("CALL dbgen(sf=%r)" % a.sf)
    head = "# TPC-H SF %g from DuckDB %s's tpch extension (dbgen), as CSV" % (
        a.sf, con.execute("SELECT version()").fetchone()[0])
    yaml = [head, "tables:"]
    for t in TABLES:
        cols = con.execute("SELECT column_name, data_type FROM information_schema.columns "
                           "WHERE table_name = ? ORDER BY ordinal_position", [t]).fetchall()
        path = os.path.join(a.out, "csv", t + ".csv")
        con.execute("COPY %s TO '%s' (HEADER, DELIMITER ',')" % (t, path.replace("'", "''")))
        one = ["  - name: %s" % t, "    source: %s.csv" % t, "    format: csv",
               "    header: true", "    columns:"]
        for n, ty in cols:
            g = gqp_type(con, t, n, ty, a.decimal)
            one.append("      - {name: %s, type: %s}" % (n, '"%s"' % g if "," in g else g))
        # csv/<table>.yaml declares this table alone (gqp converts it while
        # the next one is written); gqp-csv.yaml all of them
        with open(os.path.join(a.out, "csv", t + ".yaml"), "w") as f:
            f.write("\n".join([head, "tables:"] + one) + "\n")
        yaml += [one[0], "    source: csv/%s.csv" % t] + one[2:]
        if a.handshake:
            print(t, flush=True)
            if not sys.stdin.readline():
                sys.exit(1)  # gqp went away
    with open(os.path.join(a.out, "gqp-csv.yaml"), "w") as f:
        f.write("\n".join(yaml) + "\n")
    con.close()


if __name__ == "__main__":
    main()
