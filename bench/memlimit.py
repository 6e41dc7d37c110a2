#!/usr/bin/env python3
"""Queries under a device memory budget smaller than what they read (issue 11).

    python3 bench/memlimit.py --config CFG --queries DIR_OR_FILES [--build build]
                              [--fraction 0.25] [--repeat 5] [--title T]

For each query:
* R = the bytes of the table columns it reads (the source nodes of its
  EXPLAIN under --device gpu, each column once);
* L = R x fraction, the `memory_limit` it runs under (`SET memory_limit`);
* answers: `gqp run --device gpu --mode csv` without and with the limit,
  compared row by row (sorted; numbers to 1e-9 relative), so the chunked
  or fallen-back run must give the unlimited run's answer;
* times: bench_gqp --device gpu (warm-up + `repeat` runs, median of
  prepare + run): unlimited (the column cache warm) and limited (columns
  no longer fit: each run copies what it reads again);
* the limited run's EXPLAIN ANALYZE (bench_gqp --explain-dir): chunks,
  bytes copied host to device;
* floor: the bytes that must cross PCIe with L of them resident, (R - L),
  over the pinned host-to-device bandwidth `bench_gqp --bandwidth`
  measures;
* with --cpu-column: bench_gqp --device cpu on the same query (no device
  at all), the time a limited run should not exceed when it could have run
  on the CPU instead (under auto, gqp_budget_plan chooses between them);
* with --hog BINARY (the out-of-memory probe, ../shared/tools/gpu_hog.cu):
  no memory_limit; the limited runs happen while another process holds all
  but --hog-free MiB of the GPU's free memory (every query's unlimited run
  first, then the hog, then every limited run); L is then that free memory,
  and the floor R over the pinned bandwidth (nothing stays resident).
Prints a markdown table. Timings are reported, never asserted.
"""
import argparse
import glob
import math
import os
import re
import signal
import subprocess
import sys
import tempfile

import benchlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def read_bytes(gqp, cfg, path, device):
    """Bytes of the distinct table columns the query's plans read."""
    p = subprocess.run([gqp, "explain", "-c", cfg, "--device", device, path],
                       capture_output=True, text=True)
    cols = {}
    for m in re.finditer(r"#\d+ source \[\w+\] (\S+) .*?est_bytes=(\d+)", p.stdout):
        cols[m.group(1)] = int(m.group(2))
    return sum(cols.values())


def gqp_under_limit(gqp, verb, cfg, path, device, limit, *extra):
    """`gqp VERB` on the query file, with SET memory_limit first when
    limit is given; the CompletedProcess."""
    sql = open(path).read()
    if limit is not None:
        sql = "SET memory_limit = '%d';\n%s" % (limit, sql)
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(sql)
        tmp = f.name
    try:
        return subprocess.run([gqp, verb, "-c", cfg, "--device", device, *extra, tmp],
                              capture_output=True, text=True)
    finally:
        os.unlink(tmp)


def answer(gqp, cfg, path, device, limit=None):
    """The query's CSV rows under --device gpu (sorted), or an error text."""
    p = gqp_under_limit(gqp, "run", cfg, path, device, limit, "--mode", "csv")
    if p.returncode != 0:
        return "error: " + (p.stderr.strip().splitlines() or ["?"])[-1]
    return sorted(p.stdout.splitlines())


def explain_failed(gqp, cfg, path, device, limit, out):
    """The plain EXPLAIN of a query whose limited run failed, into out."""
    p = gqp_under_limit(gqp, "explain", cfg, path, device, limit)
    with open(out, "w") as f:
        f.write(p.stdout + p.stderr)


def same_value(a, b):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def same_rows(a, b):
    if isinstance(a, str) or isinstance(b, str) or len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        fa, fb = ra.split(","), rb.split(",")
        if len(fa) != len(fb) or not all(same_value(x, y) for x, y in zip(fa, fb)):
            return False
    return True


def explain_facts(path):
    """(chunks text, h2d bytes) from an EXPLAIN ANALYZE text file."""
    try:
        t = open(path).read()
    except OSError:
        return ("n/a", None)
    ch = re.findall(r"chunked execution: (.*?) in (\d+) chunks of (?:up to|about) (\d+) rows", t)
    chunks = ", ".join("%s x%s" % (c[0].split()[-1], c[1]) for c in ch) if ch else "whole"
    if re.search(r"^-- runs on the CPU: ", t, re.M):
        chunks = "CPU (device budget)" + (", " + chunks if ch else "")
    m = re.search(r"^-- runs whole: (\d+) columns? \((\d+) MB\) read mapped", t, re.M)
    if m:
        chunks += ", %s columns mapped (%s MB)" % (m.group(1), m.group(2))
    if re.search(r"ran on the CPU after a device out-of-memory", t):
        chunks += " (+CPU fallback)"
    h2d = sum(int(x) for x in re.findall(r"h2d (\d+) B", t))
    return (chunks, h2d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--queries", required=True, help="a folder of .sql files, or files comma separated")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--fraction", type=float, default=0.25)
    ap.add_argument("--device", default="gpu", help="gpu (cpu or auto: to try the script)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cpu-column", action="store_true",
                    help="also time each query with --device cpu")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--title", default="")
    ap.add_argument("--work", default=tempfile.gettempdir())
    ap.add_argument("--hog", help="gpu_hog binary: limited runs beside it instead of a memory_limit")
    ap.add_argument("--hog-free", type=int, default=2048, help="MiB the hog leaves free")
    args = ap.parse_args()
    gqp = os.path.join(args.build, "gqp")
    if os.path.isdir(args.queries):
        paths = sorted(glob.glob(os.path.join(args.queries, "*.sql")))
    else:
        paths = args.queries.split(",")
    bw = benchlib.bandwidth(args.build)
    h2d_gbps = bw[1] if bw else None
    # a SIGTERM (timeout) ends the run with the table of what was measured
    def stop(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    cut = False
    # pass 1: bytes read, unlimited answers and times (no hog yet)
    first = {}
    rows = []
    hog = None
    try:
        cut = measure(args, gqp, paths, h2d_gbps, first, rows, hog)
    except KeyboardInterrupt:
        cut = True
    print_table(args, rows, h2d_gbps, cut)
    bad = [r[0] for r in rows if not r[8]]
    return 1 if bad or cut else 0


def measure(args, gqp, paths, h2d_gbps, first, rows, hog):
    for path in paths:
        name = os.path.basename(path)[:-4]
        r = read_bytes(gqp, args.config, path, args.device)
        lim = max(int(r * args.fraction), 1 << 20)
        if args.hog:
            lim = min(r, args.hog_free << 20)
        print("%s: reads %.1f MB, limit %.1f MB" % (name, r / 1e6, lim / 1e6), file=sys.stderr)
        a0 = answer(gqp, args.config, path, args.device)
        t0 = benchlib.bench_gqp(args.build, args.config, args.device, args.threads, [path],
                                repeat=args.repeat, wall=True)
        first[path] = (r, lim, a0, t0)
    if args.hog:
        hog = subprocess.Popen([args.hog, str(args.hog_free), "3600"], stdout=subprocess.PIPE,
                               text=True)
        line = hog.stdout.readline().strip()
        print(line, file=sys.stderr)
        if "ready" not in line:
            print("memlimit: the hog did not start: %s" % line, file=sys.stderr)
            hog.kill()
            return True
    try:
        for path in paths:
            name = os.path.basename(path)[:-4]
            r, lim, a0, t0 = first[path]
            a1 = answer(gqp, args.config, path, args.device, None if args.hog else lim)
            ok = same_rows(a0, a1)
            xdir = os.path.join(args.work, "memlimit-explain")
            os.makedirs(xdir, exist_ok=True)
            if isinstance(a1, str):  # the plan it failed with
                explain_failed(gqp, args.config, path, args.device, None if args.hog else lim,
                               os.path.join(xdir, os.path.basename(path) + ".failed.txt"))
            t1 = benchlib.bench_gqp(args.build, args.config, args.device, args.threads, [path],
                                    repeat=args.repeat, wall=True, explain_dir=xdir,
                                    sql=[] if args.hog else ["SET memory_limit = '%d'" % lim])
            chunks, h2d = explain_facts(os.path.join(xdir, os.path.basename(path) +
                                                     ".%s.txt" % args.device))
            tc = None
            if args.cpu_column:
                tc = benchlib.bench_gqp(args.build, args.config, "cpu", args.threads, [path],
                                        repeat=args.repeat, wall=True).get(name, (None, None))[1]
            # beside the hog nothing stays resident: every byte read crosses
            cross = r if args.hog else r - lim
            floor = cross / (h2d_gbps * 1e6) if h2d_gbps else None
            why = "" if ok else (a1 if isinstance(a1, str) else "rows differ")
            rows.append((name, r, lim, t0.get(name, (None, None))[1],
                         t1.get(name, (None, None))[1], chunks, h2d, floor, ok, why, tc))
    finally:
        if hog:
            hog.kill()
            hog.wait()
    return False


def print_table(args, rows, h2d_gbps, cut):
    what = ("another process holding all but %d MiB of the GPU" % args.hog_free if args.hog
            else "memory_limit = %g x the bytes read" % args.fraction)
    print("# %s" % (args.title or "gqp --device %s under %s" % (args.device, what)))
    print()
    print("pinned H2D bandwidth: %s GB/s (bench_gqp --bandwidth); %d warm-up + median of %d runs "
          "(prepare + run); floor = (read - %s) / pinned H2D." %
          ("%.1f" % h2d_gbps if h2d_gbps else "n/a", 1, args.repeat,
           "0, nothing resident beside the hog" if args.hog else "limit"))
    print()
    cpu = args.cpu_column
    print("| query | reads MB | limit MB | unlimited ms | limited ms | how it ran (limited) | "
          "h2d MB (limited, last run) | PCIe floor ms | limited / floor |%s same answer |"
          % (" cpu ms | limited / cpu |" if cpu else ""))
    print("|---|---|---|---|---|---|---|---|---|%s---|" % ("---|---|" if cpu else ""))
    for (name, r, lim, t0, t1, chunks, h2d, floor, ok, why, tc) in rows:
        f = lambda v: "%.2f" % v if v is not None else "n/a"
        print("| %s | %.1f | %.1f | %s | %s | %s | %s | %s | %s |%s %s |" % (
            name, r / 1e6, lim / 1e6, f(t0), f(t1), chunks,
            "%.1f" % (h2d / 1e6) if h2d is not None else "n/a", f(floor),
            "%.2fx" % (t1 / floor) if t1 and floor else "n/a",
            (" %s | %s |" % (f(tc), "%.2fx" % (t1 / tc) if t1 and tc else "n/a")) if cpu else "",
            "yes" if ok else "NO: " + why))
    bad = [r[0] for r in rows if not r[8]]
    print()
    print("answers equal to the unlimited run: %d/%d%s%s" % (len(rows) - len(bad), len(rows),
          (" (differ: %s)" % ", ".join(bad)) if bad else "",
          " (stopped early: the others not measured)" if cut else ""))


if __name__ == "__main__":
    sys.exit(main())
