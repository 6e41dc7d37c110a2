#!/usr/bin/env python3
"""Seed 004's 13 queries on N generated rows: gqp vs SQLite vs DuckDB.

    python3 bench/seed004.py [--rows 5000000] [--threads N] [--device cpu]
                             [--build build] [--work bench/work] [--out]
                             [--queries DIR] [--name NAME]

--queries DIR times the .sql files of DIR on the same table instead of the
13 queries (bench/topk/: ORDER BY ... LIMIT / OFFSET), --name sets the
table's title and file name (bench/results/<name>-<host>.md).

* gqp: build/bench_gqp opens the config once and, per query, runs a warm-up
  and 5 timed runs; the median of gqp_exec_ms (execution, planning excluded,
  result materialized, not printed). Without bench_gqp it falls back to one
  `gqp run --timer` of a script holding each query 6 times (first dropped).
* SQLite: the sqlite3 shell, in memory, CSV imported once, `.timer on`;
  median of 3 runs of `CREATE TEMP TABLE r AS <query>` (result materialized).
* DuckDB: `import duckdb` if available (`pip install duckdb`); SET threads
  to the same count as gqp; CSV read into a table once; median of 5 runs of
  `CREATE OR REPLACE TEMP TABLE r AS <query>` after one warm-up.

Prints a markdown table (query, rows returned, ms per engine, ratios
sqlite/gqp and duckdb/gqp); with --out also writes it to
bench/results/seed004-<host>.md. Timings are reported, never asserted.
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import time

import benchlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
QDIR = os.path.join(ROOT, "tests", "seed004", "queries")


def queries(qdir=QDIR):
    """[(name, sql without comments or ';', path)] for q01..q13 (or the .sql
    files of qdir)."""
    out = []
    for f in sorted(os.listdir(qdir)):
        if f.endswith(".sql"):
            path = os.path.join(qdir, f)
            sql = " ".join(
                l.strip() for l in open(path) if l.strip() and not l.startswith("--")
            ).rstrip(";")
            out.append((f[:-4], sql, path))
    return out


def gen_data(gqp, rows, work):
    """Generate the table once per row count; return (csv path, config path)."""
    data = os.path.join(work, "data-%d" % rows)
    csv, cfg = os.path.join(data, "test.csv"), os.path.join(data, "gqp.yaml")
    if not (os.path.exists(csv) and os.path.exists(cfg)):
        subprocess.run([gqp, "gen", "test", "--rows", str(rows), "--out", data], check=True)
    return csv, cfg


COLS = ["id", "uniformi", "normali5", "normali20", "uniformf", "normalf5", "normalf20"]


def floor_bytes(sql, rows, result_rows):
    """(bytes the query must read + write on the device, result bytes).

    Every column of `test` is 4 bytes. Reads: each referenced column once.
    Writes: the result (output columns x result rows). Result bytes cross
    PCIe once."""
    low = sql.lower()
    ref = [c for c in COLS if re.search(r"\b%s\b" % c, low)]
    sel = low.split(" from ")[0]
    out_cols = max(1, len([c for c in COLS if re.search(r"\b%s\b" % c, sel)]))
    rb = 4 * out_cols * (result_rows or 0)
    return 4 * len(ref) * rows + rb, rb


def bench_gqp(args, cfg, qs):
    """{name: (rows or None, median ms)} for gqp."""
    res = {}
    bench = os.path.join(args.build, "bench_gqp")
    common = ["--device", args.cur_device, "--threads", str(args.threads)]
    if os.access(bench, os.X_OK):
        return benchlib.bench_gqp(args.build, cfg, args.cur_device, args.threads,
                                  [p for _, _, p in qs], check=True)
    gqp = os.path.join(args.build, "gqp")
    for name, sql, _ in qs:
        script = (sql + ";\n") * 6
        p = subprocess.run(
            [gqp, "run", "-c", cfg, "--mode", "csv", "--timer", "-"] + common,
            input=script, capture_output=True, text=True, check=True,
        )
        times = [float(t) for t in re.findall(r"Run Time: ([\d.]+) ms", p.stderr)][1:]
        res[name] = (None, statistics.median(times))
    return res


def bench_sqlite(csv, qs):
    """{name: (rows, median ms)} for the sqlite3 shell, in memory."""
    lines = [
        "CREATE TABLE test(id INTEGER, uniformi INTEGER, normali5 INTEGER, normali20 INTEGER,"
        " uniformf REAL, normalf5 REAL, normalf20 REAL);",
        ".import --csv --skip 1 %s test" % csv,
    ]
    for name, sql, _ in qs:
        lines.append(".print @@%s" % name)
        for _ in range(3):
            lines += [".timer off", "DROP TABLE IF EXISTS r;", ".timer on",
                      "CREATE TEMP TABLE r AS %s;" % sql]
        lines += [".timer off", "SELECT 'rows=' || COUNT(*) FROM r;"]
    out = subprocess.run(["sqlite3", ":memory:"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout
    res, cur, times = {}, None, []
    for line in out.splitlines():
        if line.startswith("@@"):
            cur, times = line[2:], []
        elif line.startswith("Run Time: real"):
            times.append(float(line.split()[3]) * 1e3)
        elif line.startswith("rows="):
            res[cur] = (int(line[5:]), statistics.median(times))
    return res


def bench_duckdb(csv, qs, threads):
    """{name: (rows, median ms)} for DuckDB, or None if not importable."""
    try:
        import duckdb
    except ImportError:
        return None
    con = duckdb.connect()
    con.execute("SET threads TO %d" % threads)
    cols = ("{'id':'INTEGER','uniformi':'INTEGER','normali5':'INTEGER','normali20':'INTEGER',"
            "'uniformf':'FLOAT','normalf5':'FLOAT','normalf20':'FLOAT'}")
    con.execute("CREATE TABLE test AS SELECT * FROM read_csv('%s', header=true, columns=%s)"
                % (csv, cols))
    return benchlib.duckdb_times(con, qs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=5000000)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--device", default="cpu",
                    help="cpu, gpu or auto, or a comma list (gpu,cpu) timed in the same run")
    ap.add_argument("--no-sqlite", action="store_true", help="skip SQLite (very large N)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--out", action="store_true", help="write bench/results/<name>-<host>.md")
    ap.add_argument("--queries", default=QDIR, help="folder of .sql files (default seed 004's)")
    ap.add_argument("--name", default="seed004", help="title and result file name")
    args = ap.parse_args()

    qs = queries(args.queries)
    os.makedirs(args.work, exist_ok=True)
    csv, cfg = gen_data(os.path.join(args.build, "gqp"), args.rows, args.work)
    devices = args.device.split(",")
    g = {}
    for dev in devices:
        print("gqp --device %s ..." % dev, file=sys.stderr)
        args.cur_device = dev
        g[dev] = bench_gqp(args, cfg, qs)
    bw = benchlib.bandwidth(args.build) if "gpu" in devices else None
    s = {}
    if not args.no_sqlite:
        print("sqlite3 ...", file=sys.stderr)
        s = bench_sqlite(csv, qs)
    print("duckdb ...", file=sys.stderr)
    d = bench_duckdb(csv, qs, args.threads)

    def ms(x):
        # three significant digits below 10 ms (single-row queries take
        # 0.05-0.2 ms on a GPU: the fixed cost per query is what they show)
        if x is None:
            return "n/a"
        return "%.3g" % x if x < 10 else "%.1f" % x

    def ratio(a, b):
        return "%.1f×" % (a / b) if a is not None and b else "n/a"

    host = socket.gethostname()
    out = [
        "# %s queries, %d rows" % ("Seed 004" if args.name == "seed004" else args.name,
                                   args.rows),
        "",
        "host %s, %s, %d threads, gqp --device %s; %s; sqlite3 %s; duckdb %s. "
        "Median ms; results materialized, not printed." % (
            host, benchlib.cpu_model(), args.threads, args.device, time.strftime("%Y-%m-%d"),
            (subprocess.run(["sqlite3", "--version"], capture_output=True,
                            text=True).stdout.split() or ["?"])[0] if not args.no_sqlite
            else "skipped",
            __import__("duckdb").__version__ if d is not None else "not installed"),
        "",
    ]
    if bw:
        out += ["Floor = (columns read + result written) / %.0f GB/s device copy "
                "(measured, read+write) + result bytes / %.1f GB/s pinned H2D (measured)."
                % bw, ""]
    first = devices[0]
    hdr = "| query | rows |" + "".join(" gqp-%s ms |" % dv for dv in devices)
    hdr += " sqlite ms | duckdb ms | sqlite/gqp-%s | duckdb/gqp-%s |" % (first, first)
    if len(devices) > 1:
        hdr += " gqp-%s/gqp-%s |" % (devices[1], first)
    if bw:
        hdr += " floor ms | gqp-%s/floor |" % first
    out += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    for name, sql, _ in qs:
        gr, gt = g[first].get(name, (None, None))
        sr, st = s.get(name, (None, None))
        dr, dt = d.get(name, (None, None)) if d else (None, None)
        rows = gr if gr is not None else sr
        line = "| %s | %s |" % (name, rows if rows is not None else "?")
        for dv in devices:
            line += " %s |" % ms(g[dv].get(name, (None, None))[1])
        line += " %s | %s | %s | %s |" % (ms(st), ms(dt), ratio(st, gt), ratio(dt, gt))
        if len(devices) > 1:
            line += " %s |" % ratio(g[devices[1]].get(name, (None, None))[1], gt)
        if bw:
            dev_bytes, res_bytes = floor_bytes(sql, args.rows, rows)
            fl = dev_bytes / (bw[0] * 1e6) + res_bytes / (bw[1] * 1e6)
            line += " %.3f | %s |" % (fl, ratio(gt, fl))
        out.append(line)
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
        path = os.path.join(HERE, "results", "%s-%s.md" % (args.name, host))
        with open(path, "w") as f:
            f.write(text)
        print("wrote " + path, file=sys.stderr)


if __name__ == "__main__":
    main()
