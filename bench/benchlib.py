"""Helpers shared by the benchmark scripts (seed004.py, ssb.py, tpch.py, placement.py):
the host's CPU name, the GPU bandwidths that floors divide by, gqp timings
through bench_gqp, and DuckDB timings measured the same way in every script."""
import os
import platform
import re
import statistics
import subprocess
import sys
import time


def cpu_model():
    """The CPU model name from /proc/cpuinfo, or the platform string."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def bandwidth(build):
    """(d2d GB/s counting read + write, pinned h2d GB/s) measured by
    `bench_gqp --bandwidth`, or None without a GPU."""
    exe = os.path.join(build, "bench_gqp")
    try:
        out = subprocess.run([exe, "--bandwidth"], capture_output=True, text=True).stdout
    except OSError:
        return None
    m = re.search(r"d2d_GBps=([\d.]+) h2d_pinned_GBps=([\d.]+)", out)
    return (float(m.group(1)), float(m.group(2))) if m else None


def bench_gqp(build, cfg, device, threads, paths, repeat=5, check=False, peaks=None,
              explain_dir=None, wall=False, sql=()):
    # a device may carry the aggregation plan: "gpu-sort" = --device gpu with
    # GQP_AGGREGATE=sort (the plan before the fused dense-aggregate)
    env = None
    if "-" in device:
        device, agg = device.split("-", 1)
        env = dict(os.environ, GQP_AGGREGATE=agg)
    """{query file name without .sql: (rows or None, median exec ms)} from one
    bench_gqp process (config opened once, warm-up, `repeat` timed runs).
    check=True raises on failure; otherwise it is reported on stderr. A dict
    `peaks` receives {name: peak device bytes over the runs}. explain_dir:
    bench_gqp --explain-dir (one EXPLAIN ANALYZE JSON per query after its
    timed runs, DIR/<file>.<device>.json). wall=True reports the median
    wall_ms (prepare + run) instead of exec_ms: derived tables, CTEs and
    uncorrelated subqueries are materialized while preparing, outside
    gqp_exec_ms. sql: statements run once before the queries (bench_gqp
    --sql, e.g. SET memory_limit = '2GB')."""
    cmd = [os.path.join(build, "bench_gqp"), "-c", cfg, "--device", device,
           "--threads", str(threads), "--repeat", str(repeat)]
    for stmt in sql:
        cmd += ["--sql", stmt]
    if explain_dir:
        cmd += ["--explain-dir", explain_dir]
    cmd += list(paths)
    p = subprocess.run(cmd, capture_output=True, text=True, check=check, env=env)
    if p.returncode != 0:
        print("bench_gqp --device %s failed: %s" % (device, p.stderr.strip()), file=sys.stderr)
    res = {}
    for line in p.stdout.splitlines():
        m = re.match(r"(\S+) rows=(-?\d+) exec_ms=([\d.]+) wall_ms=([\d.]+)", line)
        if m:
            rows = int(m.group(2))
            name = os.path.basename(m.group(1))[:-4]
            res[name] = (rows if rows >= 0 else None, float(m.group(4 if wall else 3)))
            pk = re.search(r"peak_dev_bytes=(\d+)", line)
            if peaks is not None and pk:
                peaks[name] = int(pk.group(1))
    return res


def duckdb_times(con, qs, runs=6):
    """{name: (rows, median ms)} for [(name, sql, ...)] on a DuckDB connection:
    each query materialized into a temp table `runs` times, the first run a
    warm-up."""
    res = {}
    for q in qs:
        name, sql = q[0], q[1]
        times = []
        for i in range(runs):
            t0 = time.perf_counter()
            con.execute("CREATE OR REPLACE TEMP TABLE r AS " + sql)
            if i:
                times.append((time.perf_counter() - t0) * 1e3)
        rows = con.execute("SELECT COUNT(*) FROM r").fetchone()[0]
        res[name] = (rows, statistics.median(times))
    return res
