#!/usr/bin/env python3
"""TPC-H tables through DuckDB's tpch extension (the real dbgen), as CSV.

Usage: tpch_gen.py --sf N --out DIR [--decimal] [--duckdb FILE] [--handshake]

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
"""
import argparse
import glob
import os
import sys

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


def main():
    ap = argparse.ArgumentParser(description="TPC-H tables via DuckDB's dbgen, as CSV")
    ap.add_argument("--sf", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--decimal", action="store_true",
                    help="declare money columns DECIMAL(p,s) instead of FLOAT64")
    ap.add_argument("--duckdb", metavar="FILE", help="keep the DuckDB database in FILE")
    ap.add_argument("--handshake", action="store_true",
                    help="after each table print its name and wait for a line on stdin")
    a = ap.parse_args()
    if not a.sf > 0:
        sys.exit("tpch_gen.py: --sf must be positive")
    if a.duckdb and os.path.exists(a.duckdb):
        os.remove(a.duckdb)
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
