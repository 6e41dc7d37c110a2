#!/usr/bin/env python3
"""The Star Schema Benchmark's 13 queries: gqp vs DuckDB vs the bandwidth floor.

    python3 bench/ssb.py --sf 1 [--sf 10 ...] [--build build] [--device gpu,cpu]
                         [--threads N] [--no-duckdb] [--work bench/work]
                         [--crystal DIR [--crystal-trials N] [--crystal-timeout S]]
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
* Crystal (--crystal DIR, the folder holding crystal_run.sh,
  crystal_build.sh, crystal_convert.py and crystal-src.txz; on the GPU
  machine the repo's git-ignored .crystal/, see docs/gpu.md): the
  hand-written CUDA SSB kernels on the same GPU over the same data. Per SF,
  after gqp and DuckDB, `bash DIR/crystal_run.sh WORK/ssb-sfN
  WORK/crystal-sfN-raw.txt TRIALS` converts the data, builds the binaries
  into $CRYSTAL_BIN (default /tmp/crystal/bin) when they do not run, and runs
  each query TRIALS times (--crystal-trials, default 21) within
  --crystal-timeout seconds (default 900); its output goes to
  WORK/crystal-sfN.log. The time is the median of "time_query" over trials
  2..N (the first is a warm-up); Q4.1 is q41nocopy (the stock q41 keeps
  debug copies inside its timer). A failure leaves "n/a" in the table and
  its reason on stderr. Crystal's Q2.3 brand filter and Q1.3 date range are
  not SSB's, so those two answers are not comparable; the times are.

Prints one markdown table per SF (query, rows, gqp ms per device, duckdb ms,
duckdb/gqp, floor ms, gqp/floor, with --crystal crystal ms and gqp/crystal,
geometric means); --out also writes each to
bench/results/ssb-<host>-sf<N>.md; --png draws gqp vs DuckDB vs floor (and
Crystal) per query (matplotlib, log scale; FILE gets -sf<N> before its
extension when several SFs are run). Timings are reported, never asserted.
"""
import argparse
import math
import os
import re
import signal
import socket
import statistics
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


def gen_data(gqp, sf, work, no_fact_tbl=False):
    """Generate SF once (no_fact_tbl: without lineorder.tbl, gen ssb
    --no-lineorder-tbl); return the data folder."""
    data = os.path.join(work, "ssb-sf%s" % sf_name(sf))
    need = [os.path.join(data, "gqp.yaml")]
    need += [os.path.join(data, t + ".tbl") for t in TABLES if t != "lineorder"]
    if not no_fact_tbl:
        need += [os.path.join(data, f) for f in ("gqp-tbl.yaml", "lineorder.tbl")]
    if not all(os.path.exists(p) for p in need):
        print("gqp gen ssb --sf %s ..." % sf_name(sf), file=sys.stderr)
        t0 = time.perf_counter()
        subprocess.run([gqp, "gen", "ssb", "--sf", sf_name(sf), "--out", data] +
                       (["--no-lineorder-tbl"] if no_fact_tbl else []), check=True)
        print("  generated in %.1f s" % (time.perf_counter() - t0), file=sys.stderr)
    return data


def lineorder_rows(data):
    """Rows of lineorder, from the size of its binary lo_orderkey column."""
    return os.path.getsize(os.path.join(data, "bin", "lineorder", "lo_orderkey.bin")) // 4


def lo_columns(sql):
    """Distinct lineorder columns (lo_*) the query names."""
    return sorted(set(re.findall(r"\blo_\w+", sql.lower())))


def bench_gqp(build, cfg, device, threads, qs, peaks=None, sql=()):
    """{name: (rows, median ms)} for gqp on one device (peaks, sql: see
    benchlib)."""
    return benchlib.bench_gqp(build, cfg, device, threads, [q for _, _, q in qs], peaks=peaks,
                              sql=sql)


def duckdb_load(data, threads):
    """A DuckDB connection with the five tables read from data's .tbl files,
    or None if duckdb is not importable. Without lineorder.tbl (gen ssb
    --no-lineorder-tbl) lineorder is read from its binary columns through
    numpy (memmap), the lineorder columns SSB's queries name only (numpy
    needed)."""
    try:
        import duckdb
    except ImportError:
        print("duckdb not importable (pip install duckdb); skipped", file=sys.stderr)
        return None
    con = duckdb.connect()
    con.execute("SET threads TO %d" % threads)
    t0 = time.perf_counter()
    for table, cols in schema().items():
        tbl = os.path.join(data, table + ".tbl")
        if table == "lineorder" and not os.path.exists(tbl):
            import numpy
            used = sorted(set(c for q in queries() for c in lo_columns(q[1])))
            arrays = {c: numpy.memmap(os.path.join(data, "bin", "lineorder", c + ".bin"),
                                      dtype="<i4", mode="r") for c in used}
            con.register("lineorder_bin", arrays)
            con.execute("CREATE TABLE lineorder AS SELECT * FROM lineorder_bin")
            con.unregister("lineorder_bin")
            print("  duckdb: lineorder from bin/ (%s)" % ", ".join(used), file=sys.stderr)
            continue
        spec = ", ".join("'%s': '%s'" % c for c in cols + [("_pad", "VARCHAR")])
        con.execute(
            "CREATE TABLE %s AS SELECT * EXCLUDE (_pad) FROM read_csv('%s', delim='|', "
            "header=false, quote='', escape='', columns={%s})"
            % (table, tbl, spec))
    print("  duckdb loaded the tables in %.1f s" % (time.perf_counter() - t0),
          file=sys.stderr)
    return con


def norm(v):
    """A value as text the way both engines print it."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def check_answers(gqp, data, con, devices, sql=(), out=sys.stdout):
    """Every query's rows through `gqp run --mode csv` (per device; sql:
    statements run first, e.g. SET memory_limit) against DuckDB's on con,
    in order (every SSB query has ORDER BY or returns one row), integers
    exactly. Prints one line per query and device into out; returns the
    number that differ or failed."""
    import csv
    import io
    import tempfile
    bad = 0
    for name, q, path in queries():
        want = [[norm(v) for v in row] for row in con.execute(q).fetchall()]
        run = path
        if sql:
            with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
                f.write("".join(st.rstrip(";") + ";\n" for st in sql) + open(path).read())
                run = f.name
        for dev in devices:
            env = dict(os.environ, GQP_DEVICE=dev.split("-")[0])
            if "-" in dev:
                env["GQP_AGGREGATE"] = dev.split("-", 1)[1]
            p = subprocess.run([gqp, "run", "-c", os.path.join(data, "gqp.yaml"),
                                "--mode", "csv", run], capture_output=True, text=True, env=env)
            if p.returncode != 0:
                print("%s --device %s: gqp failed: %s" % (name, dev, p.stderr.strip()), file=out)
                bad += 1
                continue
            got = [row for row in csv.reader(io.StringIO(p.stdout))][1:]
            ok = got == want
            print("%s --device %s: %d rows %s" % (name, dev, len(got), "ok" if ok else "DIFFER"),
                  file=out)
            if not ok:
                bad += 1
                for a, b in list(zip(want, got))[:3]:
                    print("   duckdb %s | gqp %s" % (a, b), file=out)
        if run != path:
            os.unlink(run)
    return bad


def bench_duckdb(data, qs, threads):
    """{name: (rows, median ms)} for DuckDB, or None if not importable."""
    con = duckdb_load(data, threads)
    if con is None:
        return None
    return benchlib.duckdb_times(con, qs)


def crystal_name(binary):
    """gqp's query name for a Crystal binary (q11 -> q1.1, q41nocopy -> q4.1),
    or None for the stock q41 (its timer holds debug device-to-host copies)."""
    m = re.fullmatch(r"q(\d)(\d)(nocopy)?", binary)
    if not m or binary == "q41":
        return None
    return "q%s.%s" % (m.group(1), m.group(2))


def parse_crystal(text):
    """{gqp query name: median ms} from crystal_run.sh's raw log: one block
    per binary, headed `=== qNN`, each trial printing "time_query":X (ms);
    the median of trials 2..N (all of them when only one ran). Binaries that
    printed no time are left out."""
    res = {}
    for block in text.split("=== ")[1:]:
        words = block.split()
        name = crystal_name(words[0]) if words else None
        times = [float(t) for t in re.findall(r'"time_query":([\d.eE+-]+)', block)]
        if name and times:
            res[name] = statistics.median(times[1:] if len(times) > 1 else times)
    return res


def bench_crystal(crystal, data, sf, work, trials, timeout):
    """({gqp query name: median ms}, None) from crystal_run.sh over data, or
    ({...}, reason) when it failed or timed out (what it timed is kept)."""
    tag = "crystal-sf%s" % sf_name(sf)
    raw = os.path.join(work, tag + "-raw.txt")
    log = os.path.join(work, tag + ".log")
    for f in (raw, log):
        if os.path.exists(f):
            os.remove(f)
    env = dict(os.environ)
    env.setdefault("CRYSTAL_BIN", "/tmp/crystal/bin")
    cmd = ["bash", os.path.join(crystal, "crystal_run.sh"), data, raw, str(trials)]
    why = None
    t0 = time.perf_counter()
    try:
        with open(log, "w") as out:
            # its own process group: a timeout also ends the nvcc builds and
            # the query binary it started
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                 start_new_session=True)
            try:
                rc = p.wait(timeout=timeout)
                if rc != 0:
                    why = "crystal_run.sh exited %d" % rc
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                why = "crystal_run.sh ran past --crystal-timeout %g s" % timeout
    except OSError as e:
        why = "crystal_run.sh could not start: %s" % e
    print("  crystal ran in %.1f s (log %s)" % (time.perf_counter() - t0, log), file=sys.stderr)
    text = ""
    if os.path.exists(raw):
        with open(raw, errors="replace") as f:
            text = f.read()
    times = parse_crystal(text)
    if not times and why is None:
        why = "no query printed a time"
    if why is not None or len(times) < len(queries()):
        # what went wrong: the convert, probe or build failures from the log
        # (else its last line), the query binaries' exit statuses and their
        # first error line
        hints = []
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                lines = [l.strip() for l in f if l.strip()]
            hints = [l for l in lines if "fail" in l.lower() or "error" in l.lower()][:3]
            hints = hints or lines[-1:]
        rcs = re.findall(r"^rc=(\d+)", text, re.M)
        if rcs:
            hints.append("query exit statuses %s" % ",".join(sorted(set(rcs))))
        errs = [l.strip() for l in text.splitlines() if "error" in l.lower()][:1]
        hints += [e for e in errs if not any(e in h for h in hints)]
        why = "%s (%d of %d queries timed)%s" % (
            why or "some queries printed no time", len(times), len(queries()),
            ": " + "; ".join(h[:300] for h in hints) if hints else "")
        print("crystal, SF %s: %s" % (sf_name(sf), why), file=sys.stderr)
    return times, why


def geomean(xs):
    """Geometric mean of the positive values of xs, or None."""
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ms(x):
    return "%.2f" % x if x is not None else "n/a"


def ratio(a, b):
    return "%.2f×" % (a / b) if a is not None and b else "n/a"


def report(args, sf, nrows, devices, g, d, bw, qs, peaks=None, cr=None, answers=None):
    """(markdown text, per-query rows for the chart) for one SF; cr: None
    without --crystal, else bench_crystal's (times, reason or None);
    answers: None, or (equal, checked) from check_answers."""
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
    if getattr(args, "memory_limit", None):
        out += ["gqp under `SET memory_limit = '%s'` (the device budget: the column cache "
                "and every intermediate)." % args.memory_limit, ""]
    if answers:
        out += ["Answers: %d of %d queries equal DuckDB's (`gqp run --device %s`, rows in "
                "order, integers exactly)." % (answers[0], answers[1], first), ""]
    hdr = "| query | rows |" + "".join(" gqp-%s ms |" % dv for dv in devices)
    hdr += " duckdb ms | duckdb/gqp-%s | floor ms | gqp-%s/floor |" % (first, first)
    if cr is not None:
        hdr += " crystal ms | gqp-%s/crystal |" % first
    if peaks:
        hdr += " peak device MB |"
    out += [hdr, "|" + "---|" * (hdr.count("|") - 1)]
    cols = {dv: [] for dv in devices}
    dks, rts, fls, gfs, chart = [], [], [], [], []
    cts, gcs = [], []
    crystal = cr[0] if cr is not None else {}
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
        ct = crystal.get(name)
        if cr is not None:
            line += " %s | %s |" % (ms(ct), ratio(gt, ct))
        if peaks:
            pk = peaks.get(name)
            line += " %s |" % ("%.0f" % (pk / 1e6) if pk else "n/a")
        out.append(line)
        dks.append(dt)
        rts.append(dt / gt if dt and gt else None)
        fls.append(fl)
        gfs.append(gt / fl if gt and fl else None)
        cts.append(ct)
        gcs.append(gt / ct if gt and ct else None)
        chart.append((name, gt, dt, fl, ct))
    line = "| geomean | |" + "".join(" %s |" % ms(geomean(cols[dv])) for dv in devices)
    gm = geomean(rts)
    gf = geomean(gfs)
    line += " %s | %s | %s | %s |" % (ms(geomean(dks)), "%.2f×" % gm if gm else "n/a",
                                      ms(geomean(fls)), "%.2f×" % gf if gf else "n/a")
    if cr is not None:
        gc = geomean(gcs)
        line += " %s | %s |" % (ms(geomean(cts)), "%.2f×" % gc if gc else "n/a")
    if peaks:
        line += " |"
    out.append(line)
    if cr is not None:
        out += ["", "Crystal = the hand-written CUDA SSB kernels (crystal_run.sh; median "
                "of trials 2..%d of time_query; Q4.1 = q41nocopy) on the same GPU over "
                "this data. Its Q2.3 filters brand MFGR#2221 and its Q1.3 date range is "
                "not d_weeknuminyear's, so those two answers are not comparable; the "
                "times are.%s" % (args.crystal_trials,
                                   " Crystal n/a: %s." % cr[1] if cr[1] else "")]
    return "\n".join(out) + "\n", chart


def draw(path, sf, first, chart):
    """Bar chart of gqp vs DuckDB vs floor (and Crystal) per query (log
    scale) into path."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not importable (pip install matplotlib); no chart", file=sys.stderr)
        return
    names = [c[0] for c in chart]
    series = [("gqp-%s" % first, [c[1] for c in chart]), ("DuckDB", [c[2] for c in chart]),
              ("floor", [c[3] for c in chart]), ("Crystal", [c[4] for c in chart])]
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
    ap.add_argument("--crystal", metavar="DIR",
                    help="also time Crystal: DIR holds crystal_run.sh (e.g. .crystal)")
    ap.add_argument("--crystal-trials", type=int, default=21,
                    help="Crystal runs per query; the first is a warm-up (default 21)")
    ap.add_argument("--crystal-timeout", type=float, default=900,
                    help="seconds for crystal_run.sh per SF, build included (default 900)")
    ap.add_argument("--png", help="bar chart file (matplotlib)")
    ap.add_argument("--out", action="store_true", help="write bench/results/ssb-<host>-sf<N>.md")
    ap.add_argument("--memory-limit", metavar="BYTES",
                    help="gqp runs under SET memory_limit = BYTES (e.g. 16GB)")
    ap.add_argument("--no-lineorder-tbl", action="store_true",
                    help="generate without lineorder.tbl (DuckDB reads lineorder's binary "
                         "columns through numpy): SF 100's text would be 57 GB")
    ap.add_argument("--answers", action="store_true",
                    help="check gqp's answers (gqp run, first device) against DuckDB's")
    args = ap.parse_args()
    sfs = args.sf or [1.0]
    devices = [dv for dv in args.device.split(",") if dv]
    if not os.access(os.path.join(args.build, "bench_gqp"), os.X_OK):
        sys.exit("ssb.py: %s/bench_gqp not found (build the project first)" % args.build)

    qs = queries()
    limit_sql = ("SET memory_limit = '%s'" % args.memory_limit,) if args.memory_limit else ()
    os.makedirs(args.work, exist_ok=True)
    gpu_used = any(dv.split("-")[0] in ("gpu", "auto") for dv in devices)
    bw = benchlib.bandwidth(args.build) if gpu_used else None
    bw = bw[0] if bw else None  # the floor reads lineorder: device copy bandwidth
    for sf in sfs:
        data = gen_data(os.path.join(args.build, "gqp"), sf, args.work, args.no_lineorder_tbl)
        cfg = os.path.join(data, "gqp.yaml")
        g = {}
        peaks = {}
        for dv in devices:
            print("gqp --device %s, SF %s ..." % (dv, sf_name(sf)), file=sys.stderr)
            g[dv] = bench_gqp(args.build, cfg, dv, args.threads, qs,
                              peaks=peaks if dv == devices[0] else None, sql=limit_sql)
        d = None
        answers = None
        if not args.no_duckdb:
            print("duckdb, SF %s ..." % sf_name(sf), file=sys.stderr)
            con = duckdb_load(data, args.threads)
            if con is not None:
                d = benchlib.duckdb_times(con, qs)
                if args.answers:
                    print("answers vs duckdb, SF %s ..." % sf_name(sf), file=sys.stderr)
                    bad = check_answers(os.path.join(args.build, "gqp"), data, con,
                                        devices[:1], limit_sql, out=sys.stderr)
                    answers = (len(qs) - bad, len(qs))
                con.close()
        cr = None
        if args.crystal:
            print("crystal, SF %s ..." % sf_name(sf), file=sys.stderr)
            cr = bench_crystal(args.crystal, data, sf, args.work, args.crystal_trials,
                               args.crystal_timeout)
        text, chart = report(args, sf, lineorder_rows(data), devices, g, d, bw, qs,
                             peaks if any(peaks.values()) else None, cr, answers)
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
