#!/usr/bin/env python3
"""TPC-H's 22 queries: gqp (gpu and auto) vs DuckDB with all cores, in one run.

    python3 bench/tpch.py --sf 10 [--sf 30 ...] [--build build] [--device gpu,auto]
                          [--threads N] [--repeat 5] [--work bench/work]
                          [--duckdb-file | --duckdb-memory] [--gen-only] [--out]

* Data: `gqp gen tpch --sf N --out WORK/tpch-sfN --duckdb
  WORK/tpch-sfN/tpch.duckdb` (reused when there): gqp reads the binary
  columns (gqp.yaml), DuckDB the database file, which gen loads from the
  same CSV parts while gqp converts them (dbgen runs once, in one process
  per core: SF 30 in a few minutes on 16 cores; the file takes about 0.28
  GB of disk per SF beside gqp's 0.84 GB per SF: SF 30 about 34 GB in all,
  about 46 GB at the peak while lineitem's text is on disk). With
  --duckdb-memory DuckDB runs dbgen itself in memory each run instead (no
  file; dbgen is deterministic, so the rows are the same, but it is
  single-threaded and takes minutes per run at SF 30); --duckdb-file is the
  default, kept for scripts. Money columns are DECIMAL(15,2) in DuckDB,
  FLOAT64 in gqp until gqp has DECIMAL (docs/tpch.md). --gen-only stops
  after generating (a device call of its own at large SF).
* Queries: bench/tpch/q01..q22.sql, the text DuckDB's tpch extension prints;
  gqp and DuckDB run the same text.
* Check first: every query runs once per gqp device through `gqp run --mode
  csv` and its answer is compared with DuckDB's (tests/tpch/check.py's
  compare(): numbers within half a unit of DuckDB's last printed digit plus
  a relative 1e-9, as gqp sums FLOAT64 where DuckDB sums exact decimals).
  A query that fails or answers differently is shown as `n/a (why)` and not
  timed on that device.
* gqp timings: benchlib.bench_gqp (build/bench_gqp: config opened once,
  warm-up, --repeat timed runs), once per device: the median wall_ms =
  prepare + run, not gqp_exec_ms, because gqp materializes derived tables,
  CTEs and uncorrelated subqueries (Q7, Q8, Q9, Q11, Q13, Q15, Q16, Q18, ...)
  while preparing, outside gqp_exec_ms. For the first device also the peak
  device memory and the bytes its warm EXPLAIN ANALYZE run moved over PCIe
  (h2d + d2h summed over the plan's nodes: with the tables cached on the
  GPU after the warm-up, the intermediates and results that cross); both
  are the main plan's only: materializations are not counted.
* DuckDB: SET threads to --threads (default all cores); benchlib.duckdb_times
  (median of 5 runs of CREATE OR REPLACE TEMP TABLE r AS <query> after a
  warm-up).

Prints one markdown table per SF; geomeans over the queries every column
has; --out also writes bench/results/tpch-<host>-sf<N>.md. Timings are
reported, never asserted.
"""
import argparse
import datetime
import decimal
import glob
import json
import math
import os
import socket
import subprocess
import sys
import time

import benchlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
QDIR = os.path.join(HERE, "tpch")
sys.path.insert(0, os.path.join(ROOT, "tests", "tpch"))
import check  # noqa: E402  (tests/tpch/check.py: compare, parse_csv)

REL = 1e-9


def sf_name(sf):
    return "%g" % sf


def queries():
    """[(name, sql without the final ';', path)] for q01..q22."""
    out = []
    for path in sorted(glob.glob(os.path.join(QDIR, "q*.sql"))):
        sql = open(path).read().strip().rstrip(";")
        out.append((os.path.basename(path)[:-4], sql, path))
    return out


def gen_data(gqp, sf, work, duck_file):
    """Generate SF once (gqp's binary columns, and DuckDB's database when
    duck_file); the folder."""
    data = os.path.join(work, "tpch-sf%s" % sf_name(sf))
    duck = os.path.join(data, "tpch.duckdb")
    if not (os.path.exists(os.path.join(data, "gqp.yaml")) and
            (not duck_file or os.path.exists(duck))):
        print("gqp gen tpch --sf %s ..." % sf_name(sf), file=sys.stderr)
        t0 = time.perf_counter()
        subprocess.run([gqp, "gen", "tpch", "--sf", sf_name(sf), "--out", data] +
                       (["--duckdb", duck] if duck_file else []), check=True)
        print("  generated in %.1f s" % (time.perf_counter() - t0), file=sys.stderr)
    return data


def duckdb_connect(data, sf, threads, duck_file):
    """A DuckDB connection holding TPC-H at sf: the database file in data,
    or (not duck_file) dbgen run in memory."""
    import duckdb

    if duck_file:
        con = duckdb.connect(os.path.join(data, "tpch.duckdb"), read_only=True)
    else:
        sys.path.insert(0, os.path.join(ROOT, "cli"))
        import tpch_gen

        con = tpch_gen.connect()
        con.execute("SET enable_progress_bar = false")
        t0 = time.perf_counter()
        con.execute("CALL dbgen(sf=%r)" % sf)
        print("  duckdb dbgen in %.1f s" % (time.perf_counter() - t0), file=sys.stderr)
    con.execute("SET threads TO %d" % threads)
    return con


def text(v):
    """DuckDB's value v as text to compare with gqp's CSV."""
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (decimal.Decimal, int, str, datetime.date)):
        return str(v)
    return str(v)


def duckdb_answers(con, qs):
    """{name: (header, rows as text)} of DuckDB's answers."""
    res = {}
    for name, sql, _ in qs:
        cur = con.execute(sql)
        rows = cur.fetchall()
        res[name] = ([d[0] for d in cur.description], [[text(v) for v in r] for r in rows])
    return res


def gqp_check(gqp, cfg, device, qs, ref):
    """{name: None if gqp's answer on device equals DuckDB's, else why}."""
    out = {}
    for name, _, path in qs:
        dev, _, agg = device.partition("-")
        env = dict(os.environ)
        if agg:
            env["GQP_AGGREGATE"] = agg
        try:
            p = subprocess.run([gqp, "run", "-c", cfg, "--device", dev, "--mode", "csv", path],
                               capture_output=True, text=True, env=env, timeout=900)
        except subprocess.TimeoutExpired:
            out[name] = "timed out"
            continue
        if p.returncode != 0:
            out[name] = (p.stderr.strip().split("\n") or ["status %d" % p.returncode])[0]
            continue
        msg = check.compare(*ref[name], *check.parse_csv(p.stdout), rel=REL)
        out[name] = ("wrong answer: " + msg) if msg else None
    return out


def pcie_bytes(explain_dir, name, device):
    """h2d + d2h bytes of the EXPLAIN ANALYZE JSON bench_gqp wrote, or None."""
    path = os.path.join(explain_dir, "%s.sql.%s.json" % (name, device.split("-")[0]))
    try:
        plan = json.load(open(path))
    except (OSError, ValueError):
        return None
    nodes = plan.get("nodes", [])
    return sum(n.get("h2d_bytes", 0) + n.get("d2h_bytes", 0) for n in nodes)


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ms(x):
    return "%.2f" % x if x is not None else "n/a"


def report(args, sf, devices, g, d, errs, peaks, pcie, qs):
    """Markdown text of one SF's results."""
    first = devices[0]
    out = [
        "# TPC-H, scale factor %s" % sf_name(sf),
        "",
        "host %s, %s, %d threads; gqp --device %s; duckdb %s with %d threads; %s. Median "
        "ms of %d runs after a warm-up (gqp: prepare + run, as derived tables and CTEs are "
        "materialized while preparing); results materialized, not printed. Answers "
        "checked against DuckDB's before timing. Peak device memory and PCIe bytes: the "
        "main plan's, materializations not counted." % (
            socket.gethostname(), benchlib.cpu_model(), args.threads, ",".join(devices),
            __import__("duckdb").__version__, args.threads, time.strftime("%Y-%m-%d"),
            args.repeat),
        "",
    ]
    hdr = "| query | rows |" + "".join(" gqp %s ms |" % dv for dv in devices)
    hdr += " duckdb ms |" + "".join(" duckdb/gqp %s |" % dv for dv in devices)
    hdr += " peak device MB (%s) | PCIe MB (%s, warm) |" % (first, first)
    out += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    excluded = []
    common = [q for q, _, _ in qs if all(g[dv].get(q) for dv in devices) and d.get(q)]
    for name, _, _ in qs:
        dr, dt = d.get(name, (None, None))
        line = "| %s | %s |" % (name, dr if dr is not None else "?")
        for dv in devices:
            if name in g[dv]:
                line += " %s |" % ms(g[dv][name][1])
            else:
                line += " n/a (%s) |" % errs[dv].get(name, "no timing").replace("|", "/")
        line += " %s |" % ms(dt)
        for dv in devices:
            t = g[dv].get(name, (None, None))[1]
            line += " %s |" % ("%.2f×" % (dt / t) if t and dt else "n/a")
        pk, pc = peaks.get(name), pcie.get(name)
        line += " %s | %s |" % ("%.0f" % (pk / 1e6) if pk is not None else "n/a",
                                "%.1f" % (pc / 1e6) if pc is not None else "n/a")
        out.append(line)
        if name not in common:
            excluded.append(name)
    line = "| geomean (%d queries) | |" % len(common)
    for dv in devices:
        line += " %s |" % ms(geomean([g[dv][q][1] for q in common]))
    line += " %s |" % ms(geomean([d[q][1] for q in common]))
    for dv in devices:
        r = geomean([d[q][1] / g[dv][q][1] for q in common if g[dv][q][1]])
        line += " %s |" % ("%.2f×" % r if r else "n/a")
    out += [line + " | |", ""]
    if excluded:
        out.append("Not in the geomeans (a gqp device failed or answered differently from "
                   "DuckDB): %s." % ", ".join(excluded))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sf", type=float, action="append", help="scale factor (repeatable); "
                    "default 1")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--device", default="gpu,auto",
                    help="comma list of gqp devices timed in the same run (gpu, auto, cpu, "
                    "gpu-sort, ...)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--duckdb-file", action="store_true",
                    help="DuckDB reads a database file gen writes in the data folder (default)")
    ap.add_argument("--duckdb-memory", action="store_true",
                    help="DuckDB runs dbgen in memory each run instead of reading the file")
    ap.add_argument("--gen-only", action="store_true", help="generate the data, then stop")
    ap.add_argument("--out", action="store_true",
                    help="write bench/results/tpch-<host>-sf<N>.md")
    args = ap.parse_args()
    devices = [dv for dv in args.device.split(",") if dv]
    gqp = os.path.join(args.build, "gqp")
    if not os.access(os.path.join(args.build, "bench_gqp"), os.X_OK):
        sys.exit("tpch.py: %s/bench_gqp not found (build the project first)" % args.build)
    try:
        import duckdb  # noqa: F401
    except ImportError:
        sys.exit("tpch.py: needs duckdb==1.5.5 and duckdb-extension-tpch==1.5.5 (docs/tpch.md)")
    qs = queries()
    os.makedirs(args.work, exist_ok=True)
    for sf in args.sf or [1.0]:
        duck_file = args.duckdb_file or not args.duckdb_memory
        data = gen_data(gqp, sf, args.work, duck_file)
        if args.gen_only:
            continue
        cfg = os.path.join(data, "gqp.yaml")
        con = duckdb_connect(data, sf, args.threads, duck_file)
        print("duckdb answers, SF %s ..." % sf_name(sf), file=sys.stderr)
        ref = duckdb_answers(con, qs)
        g, errs, peaks, pcie = {}, {}, {}, {}
        explain_dir = os.path.join(data, "explain")
        os.makedirs(explain_dir, exist_ok=True)
        for dv in devices:
            print("gqp --device %s: checking answers, SF %s ..." % (dv, sf_name(sf)),
                  file=sys.stderr)
            errs[dv] = {k: v for k, v in gqp_check(gqp, cfg, dv, qs, ref).items() if v}
            ok = [q for q in qs if q[0] not in errs[dv]]
            print("gqp --device %s: timing %d queries ..." % (dv, len(ok)), file=sys.stderr)
            first = dv == devices[0]
            g[dv] = benchlib.bench_gqp(args.build, cfg, dv, args.threads, [p for _, _, p in ok],
                                       repeat=args.repeat, peaks=peaks if first else None,
                                       explain_dir=explain_dir, wall=True)
            if first:
                pcie = {q: pcie_bytes(explain_dir, q, dv) for q, _, _ in ok}
        print("duckdb timings, SF %s ..." % sf_name(sf), file=sys.stderr)
        d = benchlib.duckdb_times(con, qs)
        con.close()
        text_ = report(args, sf, devices, g, d, errs, peaks, pcie, qs)
        print(text_)
        if args.out:
            path = os.path.join(HERE, "results",
                                "tpch-%s-sf%s.md" % (socket.gethostname(), sf_name(sf)))
            with open(path, "w") as f:
                f.write(text_)
            print("wrote " + path, file=sys.stderr)


if __name__ == "__main__":
    main()
