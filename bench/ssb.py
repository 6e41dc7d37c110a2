#!/usr/bin/env python3
"""The Star Schema Benchmark's 13 queries: gqp vs DuckDB vs the bandwidth floor.

    python3 bench/ssb.py --sf 1 [--sf 10 ...] [--build build] [--device gpu,cpu]
                         [--threads N] [--no-duckdb] [--work bench/work]
                         [--png FILE] [--out]

* Data: `gqp gen ssb --sf N --out WORK/ssb-sfN` (reused when already there);
  gqp reads the binary columns (gqp.yaml), DuckDB the .tbl files.
* gqp: build/bench_gqp opens the config once and, per query, runs a warm-up
  and 5 timed runs; the median of gqp_exec_ms (execution, planning excluded,
  result materialized, not printed), once per --device in the same run.
* DuckDB: `import duckdb`; SET threads to the same count; the .tbl files read
  once into tables with read_csv(delim='|', header=false, columns=...); median
  of 5 runs of `CREATE OR REPLACE TEMP TABLE r AS <query>` after one warm-up.
* Floor: the lineorder columns the query reads (4 bytes each x rows) divided
  by the device-to-device copy bandwidth that `bench_gqp --bandwidth`
  measures (read + write counted): the time a GPU needs just to stream the
  fact table's columns once. "n/a" without a GPU.

Prints one markdown table per SF (query, rows, gqp ms per device, duckdb ms,
duckdb/gqp, floor ms, gqp/floor, geometric means); --out also writes each to
bench/results/ssb-<host>-sf<N>.md; --png draws gqp vs DuckDB vs floor per
query (matplotlib, log scale; FILE gets -sf<N> before its extension when
several SFs are run). Timings are reported, never asserted.
"""
import argparse
import math
import os
import re
import socket
import subprocess
import sys
import time

import benchlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
QDIR = os.path.join(ROOT, "tests", "ssb", "queries")
SCHEMA = os.path.join(ROOT, "tests", "ssb", "schema.sql")
TABLES = ["customer", "supplier", "part", "ddate", "lineorder"]


def queries():
    """[(name, sql without comments or ';', path)] for q1.1..q4.3."""
    out = []
    for f in sorted(os.listdir(QDIR)):
        if f.endswith(".sql"):
            path = os.path.join(QDIR, f)
            sql = " ".join(
                l.strip() for l in open(path) if l.strip() and not l.startswith("--")
            ).rstrip(";")
            out.append((f[:-4], sql, path))
    return out


def schema():
    """{table: [(column, 'INTEGER' or 'VARCHAR')]} from tests/ssb/schema.sql."""
    out = {}
    for m in re.finditer(r"CREATE TABLE (\w+) \(([^;]*)\);", open(SCHEMA).read()):
        cols = []
        for c in m.group(2).split(","):
            name, typ = c.split()
            cols.append((name, "INTEGER" if typ.upper() == "INTEGER" else "VARCHAR"))
        out[m.group(1)] = cols
    return out


def sf_name(sf):
    """'1', '0.1', '20': the scale factor as written in paths and titles."""
    return ("%g" % sf)


def gen_data(gqp, sf, work):
    """Generate SF once; return the data folder."""
    data = os.path.join(work, "ssb-sf%s" % sf_name(sf))
    need = [os.path.join(data, f) for f in ("gqp.yaml", "gqp-tbl.yaml")]
    need += [os.path.join(data, t + ".tbl") for t in TABLES]
    if not all(os.path.exists(p) for p in need):
        print("gqp gen ssb --sf %s ..." % sf_name(sf), file=sys.stderr)
        t0 = time.perf_counter()
        subprocess.run([gqp, "gen", "ssb", "--sf", sf_name(sf), "--out", data], check=True)
        print("  generated in %.1f s" % (time.perf_counter() - t0), file=sys.stderr)
    return data


def lineorder_rows(data):
    """Rows of lineorder, from the size of its binary lo_orderkey column."""
    return os.path.getsize(os.path.join(data, "bin", "lineorder", "lo_orderkey.bin")) // 4


def lo_columns(sql):
    """Distinct lineorder columns (lo_*) the query names."""
    return sorted(set(re.findall(r"\blo_\w+", sql.lower())))


def bench_gqp(build, cfg, device, threads, qs, peaks=None):
    """{name: (rows, median ms)} for gqp on one device (peaks: see benchlib)."""
    return benchlib.bench_gqp(build, cfg, device, threads, [q for _, _, q in qs], peaks=peaks)


def duckdb_load(data, threads):
    """A DuckDB connection with the five tables read from data's .tbl files,
    or None if duckdb is not importable."""
    try:
        import duckdb
    except ImportError:
        print("duckdb not importable (pip install duckdb); skipped", file=sys.stderr)
        return None
    con = duckdb.connect()
    con.execute("SET threads TO %d" % threads)
    t0 = time.perf_counter()
    for table, cols in schema().items():
        spec = ", ".join("'%s': '%s'" % c for c in cols + [("_pad", "VARCHAR")])
        con.execute(
            "CREATE TABLE %s AS SELECT * EXCLUDE (_pad) FROM read_csv('%s', delim='|', "
            "header=false, quote='', escape='', columns={%s})"
            % (table, os.path.join(data, table + ".tbl"), spec))
    print("  duckdb loaded the .tbl files in %.1f s" % (time.perf_counter() - t0),
          file=sys.stderr)
    return con


def bench_duckdb(data, qs, threads):
    """{name: (rows, median ms)} for DuckDB, or None if not importable."""
    con = duckdb_load(data, threads)
    if con is None:
        return None
    return benchlib.duckdb_times(con, qs)


def geomean(xs):
    """Geometric mean of the positive values of xs, or None."""
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ms(x):
    return "%.2f" % x if x is not None else "n/a"


def ratio(a, b):
    return "%.2f×" % (a / b) if a is not None and b else "n/a"


def report(args, sf, nrows, devices, g, d, bw, qs, peaks=None):
    """(markdown text, per-query rows for the chart) for one SF."""
    host = socket.gethostname()
    first = devices[0]
    out = [
        "# SSB, scale factor %s (%d lineorder rows)" % (sf_name(sf), nrows),
        "",
        "host %s, %s, %d threads, gqp --device %s; %s; duckdb %s. Median ms of 5 runs "
        "after a warm-up; results materialized, not printed." % (
            host, benchlib.cpu_model(), args.threads, ",".join(devices), time.strftime("%Y-%m-%d"),
            __import__("duckdb").__version__ if d is not None else "skipped"),
        "",
        "Floor = lineorder columns read (4 bytes × rows each) / %s device copy bandwidth "
        "(bench_gqp --bandwidth, read+write counted)."
        % ("%.0f GB/s" % bw if bw else "n/a (no GPU)"),
        "",
    ]
    hdr = "| query | rows |" + "".join(" gqp-%s ms |" % dv for dv in devices)
    hdr += " duckdb ms | duckdb/gqp-%s | floor ms | gqp-%s/floor |" % (first, first)
    if peaks:
        hdr += " peak device MB |"
    out += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    cols = {dv: [] for dv in devices}
    dks, rts, fls, gfs, chart = [], [], [], [], []
    for name, sql, _ in qs:
        gr, gt = g[first].get(name, (None, None))
        dr, dt = d.get(name, (None, None)) if d else (None, None)
        rows = "%s" % (gr if gr is not None else dr if dr is not None else "?")
        if gr is not None and dr is not None and gr != dr:
            rows = "%d (duckdb %d!)" % (gr, dr)
        fl = 4.0 * len(lo_columns(sql)) * nrows / (bw * 1e6) if bw else None
        line = "| %s | %s |" % (name, rows)
        for dv in devices:
            t = g[dv].get(name, (None, None))[1]
            cols[dv].append(t)
            line += " %s |" % ms(t)
        line += " %s | %s | %s | %s |" % (ms(dt), ratio(dt, gt), ms(fl), ratio(gt, fl))
        if peaks:
            pk = peaks.get(name)
            line += " %s |" % ("%.0f" % (pk / 1e6) if pk else "n/a")
        out.append(line)
        dks.append(dt)
        rts.append(dt / gt if dt and gt else None)
        fls.append(fl)
        gfs.append(gt / fl if gt and fl else None)
        chart.append((name, gt, dt, fl))
    line = "| geomean | |" + "".join(" %s |" % ms(geomean(cols[dv])) for dv in devices)
    gm = geomean(rts)
    gf = geomean(gfs)
    line += " %s | %s | %s | %s |" % (ms(geomean(dks)), "%.2f×" % gm if gm else "n/a",
                                      ms(geomean(fls)), "%.2f×" % gf if gf else "n/a")
    if peaks:
        line += " |"
    out.append(line)
    return "\n".join(out) + "\n", chart


def draw(path, sf, first, chart):
    """Bar chart of gqp vs DuckDB vs floor per query (log scale) into path."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not importable (pip install matplotlib); no chart", file=sys.stderr)
        return
    names = [c[0] for c in chart]
    series = [("gqp-%s" % first, [c[1] for c in chart]), ("DuckDB", [c[2] for c in chart]),
              ("floor", [c[3] for c in chart])]
    series = [(lab, vals) for lab, vals in series if any(v for v in vals)]
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(12, 4.5))
    for k, (lab, vals) in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(names))]
        ax.bar(xs, [v if v else 0 for v in vals], width, label=lab)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel("ms (median of 5)")
    ax.set_title("SSB SF %s" % sf_name(sf))
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print("wrote " + path, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sf", type=float, action="append",
                    help="scale factor (repeat for several); default 1")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--device", default="gpu,cpu",
                    help="comma list of gqp devices (gpu, cpu, auto) timed in the same run")
    ap.add_argument("--no-duckdb", action="store_true", help="skip DuckDB")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--png", help="bar chart file (matplotlib)")
    ap.add_argument("--out", action="store_true", help="write bench/results/ssb-<host>-sf<N>.md")
    args = ap.parse_args()
    sfs = args.sf or [1.0]
    devices = [dv for dv in args.device.split(",") if dv]
    if not os.access(os.path.join(args.build, "bench_gqp"), os.X_OK):
        sys.exit("ssb.py: %s/bench_gqp not found (build the project first)" % args.build)

    qs = queries()
    os.makedirs(args.work, exist_ok=True)
    gpu_used = any(dv.split("-")[0] in ("gpu", "auto") for dv in devices)
    bw = benchlib.bandwidth(args.build) if gpu_used else None
    bw = bw[0] if bw else None  # the floor reads lineorder: device copy bandwidth
    for sf in sfs:
        data = gen_data(os.path.join(args.build, "gqp"), sf, args.work)
        cfg = os.path.join(data, "gqp.yaml")
        g = {}
        peaks = {}
        for dv in devices:
            print("gqp --device %s, SF %s ..." % (dv, sf_name(sf)), file=sys.stderr)
            g[dv] = bench_gqp(args.build, cfg, dv, args.threads, qs,
                              peaks=peaks if dv == devices[0] else None)
        d = None
        if not args.no_duckdb:
            print("duckdb, SF %s ..." % sf_name(sf), file=sys.stderr)
            d = bench_duckdb(data, qs, args.threads)
        text, chart = report(args, sf, lineorder_rows(data), devices, g, d, bw, qs,
                             peaks if any(peaks.values()) else None)
        print(text)
        if args.out:
            os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
            path = os.path.join(HERE, "results",
                                "ssb-%s-sf%s.md" % (socket.gethostname(), sf_name(sf)))
            with open(path, "w") as f:
                f.write(text)
            print("wrote " + path, file=sys.stderr)
        if args.png:
            path = args.png
            if len(sfs) > 1:
                root, ext = os.path.splitext(args.png)
                path = "%s-sf%s%s" % (root, sf_name(sf), ext or ".png")
            draw(path, sf, devices[0], chart)


if __name__ == "__main__":
    main()
