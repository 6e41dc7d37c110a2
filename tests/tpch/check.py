#!/usr/bin/env python3
"""TPC-H's 22 queries against the official answers.

Usage: check.py GQP_BINARY WORKDIR [--sf SF] [--configs C,...] [--queries N,...] [-j JOBS]
       check.py --self-test      (the comparison rules, no gqp or DuckDB needed)

Generates TPC-H at scale factor SF (default 0.01) with `gqp gen tpch` into
WORKDIR/sf<SF>/ once (regenerated only when the generator or the binary
column format's sources change: a stamp file holds their hash), runs
bench/tpch/q01..q22.sql (the text DuckDB's tpch extension prints) with
`gqp run --mode csv` under each configuration and compares every answer
with the official one (tests/tpch/answers/sf<SF>/qNN.ans, copied from the
extension's tpch_answers(); for another SF the extension is asked).

Configurations: `cpu` and `auto`; `cpu-sort` / `cpu-dense` force an
aggregation plan (GQP_AGGREGATE=sort / dense); `cpu-chunked` runs in
chunks of CHUNK_ROWS rows (GQP_CHUNK_ROWS: chunked execution, with the
tables sorted on a join key cut by key range, libgqp/chunk.c);
`cpu-copies` so too, and through key-ordered copies of the tables whose
join key is not sorted (GQP_CHUNK_CLUSTER=on, libgqp/cluster.c); with a
usable GPU (`gqp --version` says so) also `gpu`, `gpu-sort`, `gpu-dense`,
`gpu-chunked`, `gpu-copies`. With
GQP_TEST_SCALE below 1 (the sanitizer build) an SF above 0.01 runs only
`cpu`.

Comparison (compare()): the same number of columns and rows, rows in the
answer's order (every query has an ORDER BY; none leaves ties that change
an answer at SF 0.01 or 0.1). Headers case-insensitively, where an answer
header that is a bare aggregate name (`sum`, as DuckDB names Q18's
unaliased sum(l_quantity)) also matches gqp's `sum(l_quantity)`. A number
in the answer is matched within half a unit of its last printed digit plus
a relative 1e-12 (float formatting and summation order); text and dates
exactly.

TPCH_XFAIL lists the queries gqp cannot run yet: each is still run and must
fail with `Not implemented Error` (never a wrong answer, never a crash); one
that passes is an error too (remove it from the list).

Exit 0 when everything matches, 1 otherwise, 77 (skipped) when `gqp gen
tpch` reports that python3 lacks duckdb and its tpch extension.
"""
import argparse
import csv
import fcntl
import hashlib
import io
import math
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
QUERIES = os.path.join(ROOT, "bench", "tpch")
ANSWERS = os.path.join(HERE, "answers")
# The one place listing the queries gqp cannot run yet (correlated subqueries).
TPCH_XFAIL = set()
# Sources whose change invalidates generated data (the generator script and
# the text loader, the dictionary builder, the binary-column writer / reader).
STAMP_SOURCES = ["cli/tpch_gen.py", "catalog/convert.c", "catalog/load_binary.c",
                 "catalog/types.c", "catalog/load_text.c", "catalog/dict.c"]
SKIP = 77
NUM = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?")


def parse_answer(text):
    """(header, rows) of an official answer: '|'-separated, header first."""
    # one line per row, each ended by a newline: a row of one NULL column
    # is an empty line (q17 at SF 0.01), so only the last newline goes
    lines = (text[:-1] if text.endswith("\n") else text).split("\n")
    return lines[0].split("|"), [ln.split("|") for ln in lines[1:]]


def parse_csv(text):
    """(header, rows) of gqp's --mode csv output."""
    rows = [r if r else [""] for r in csv.reader(io.StringIO(text))]  # "" = NULL
    if not rows:
        return None, []
    return rows[0], rows[1:]


def header_matches(got, want):
    """gqp's column name got against the answer's want (see the module doc)."""
    g, w = got.lower(), want.lower()
    return g == w or (re.fullmatch(r"[a-z_]+", w) is not None and g.startswith(w + "(")
                      and g.endswith(")"))


def value_matches(got, want, rel=1e-12):
    """gqp's printed value got against the answer's want (see the module
    doc; rel is the relative slack)."""
    if got == want:
        return True
    if NUM.fullmatch(want) and NUM.fullmatch(got):
        w, g = float(want), float(got)
        frac = want.split("e")[0].split("E")[0]
        digits = len(frac.split(".")[1]) if "." in frac else 0
        exp = int(re.split("[eE]", want)[1]) if re.search("[eE]", want) else 0
        return abs(g - w) <= 0.5 * 10.0 ** (exp - digits) + rel * abs(w)
    return False


def compare(want_header, want_rows, got_header, got_rows, rel=1e-12):
    """None when gqp's answer (got_*) equals the expected one, else a
    message naming the first difference (rel: see value_matches)."""
    if got_header is None:
        return "gqp printed nothing"
    if len(got_header) != len(want_header):
        return "%d columns %s, expected %d %s" % (len(got_header), got_header, len(want_header),
                                                  want_header)
    for g, w in zip(got_header, want_header):
        if not header_matches(g, w):
            return "column %r, expected %r" % (g, w)
    if len(got_rows) != len(want_rows):
        return "%d rows, expected %d" % (len(got_rows), len(want_rows))
    for i, (gr, wr) in enumerate(zip(got_rows, want_rows)):
        if len(gr) != len(wr):
            return "row %d has %d fields, expected %d" % (i + 1, len(gr), len(wr))
        for j, (g, w) in enumerate(zip(gr, wr)):
            if not value_matches(g, w, rel):
                return "row %d column %s: %r, expected %r" % (i + 1, want_header[j], g, w)
    return None


def sf_name(sf):
    """The folder / answer name of scale factor sf ('0.01', '1')."""
    return "%g" % sf


def stamp():
    """Hash of the generator's and the binary format's sources."""
    h = hashlib.sha256()
    for rel in STAMP_SOURCES:
        p = os.path.join(ROOT, rel)
        if os.path.exists(p):
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


def generate(gqp, work, sf):
    """WORKDIR/sf<SF> with gqp.yaml, generated unless the stamp is current.
    Returns (folder, None), or (None, exit status) after printing why."""
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "sf" + sf_name(sf))
    with open(out + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        st = os.path.join(out, "stamp")
        want = stamp()
        if os.path.exists(st) and open(st).read() == want:
            return out, None
        shutil.rmtree(out, ignore_errors=True)
        p = subprocess.run([gqp, "gen", "tpch", "--sf", sf_name(sf), "--out", out],
                           capture_output=True, text=True)
        if p.returncode != 0:
            msg = (p.stderr + p.stdout).strip()
            print(msg)
            if "needs python3 with duckdb" in msg:
                print("tpch: SKIPPED (python3 lacks duckdb / its tpch extension)")
                return None, SKIP
            print("tpch: FAIL: gqp gen tpch --sf %s" % sf_name(sf))
            return None, 1
        with open(st, "w") as f:
            f.write(want)
        return out, None


def answers(sf, queries):
    """{query number: answer text} for scale factor sf: the committed files,
    else the tpch extension's tpch_answers() (SF 0.01, 0.1, 1)."""
    d = os.path.join(ANSWERS, "sf" + sf_name(sf))
    if os.path.isdir(d):
        res = {}
        for q in queries:
            with open(os.path.join(d, "q%02d.ans" % q)) as f:
                res[q] = f.read()
        return res
    sys.path.insert(0, os.path.join(ROOT, "cli"))
    import tpch_gen

    con = tpch_gen.connect()
    rows = con.execute("SELECT query_nr, answer FROM tpch_answers() WHERE scale_factor = ?",
                       [sf]).fetchall()
    res = {q: a for q, a in rows if q in queries}
    if len(res) != len(queries):
        sys.exit("tpch: no official answers for SF %s" % sf_name(sf))
    return res


# Rows per chunk of the `-chunked` configurations (GQP_CHUNK_ROWS): 800,000
# per unit of SF (main() sets it), so that lineitem runs as 8 chunks and
# orders as 2 at any SF; the environment's GQP_TPCH_CHUNK_ROWS instead
# when set.
CHUNK_ROWS = 8000


def run_query(gqp, config, device, agg, q, timeout=600):
    """Run query q with gqp; (returncode, stdout, stderr). agg: sort or
    dense (GQP_AGGREGATE), chunked (GQP_CHUNK_ROWS=CHUNK_ROWS), or copies
    (chunked, and through key-ordered copies: GQP_CHUNK_CLUSTER=on)."""
    env = dict(os.environ)
    env.pop("GQP_AGGREGATE", None)
    env.pop("GQP_CHUNK_ROWS", None)
    env.pop("GQP_CHUNK_CLUSTER", None)
    if agg in ("chunked", "copies"):
        env["GQP_CHUNK_ROWS"] = str(CHUNK_ROWS)
        env["GQP_CHUNK_CLUSTER"] = "on" if agg == "copies" else "off"
    elif agg:
        env["GQP_AGGREGATE"] = agg
    try:
        p = subprocess.run([gqp, "run", "-c", config, "--device", device, "--mode", "csv",
                            os.path.join(QUERIES, "q%02d.sql" % q)],
                           capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout
    return p.returncode, p.stdout, p.stderr


def check_one(gqp, config, cfg, q, answer):
    """(status, message) of query q under configuration cfg ('cpu',
    'gpu-sort', ...): status is pass, xfail or FAIL."""
    device, _, agg = cfg.partition("-")
    rc, out, err = run_query(gqp, config, device, agg or None, q)
    err = err.strip()
    if q in TPCH_XFAIL:
        if rc == 1 and "Not implemented Error" in err:
            return "xfail", err.split("\n")[0]
        if rc == 0:
            return "FAIL", ("listed in TPCH_XFAIL but ran (%s): remove it from the list"
                            % (compare(*parse_answer(answer), *parse_csv(out)) or "answer equal"))
        return "FAIL", "expected a Not implemented Error, got status %s: %s" % (rc, err[:300])
    if rc != 0:
        return "FAIL", "status %s: %s" % (rc, err[:500])
    msg = compare(*parse_answer(answer), *parse_csv(out))
    return ("FAIL", msg) if msg else ("pass", "")


def self_test():
    """compare()'s rules on made-up answers; exit status 0 when they hold."""
    h = ["l_returnflag", "sum", "avg_qty", "d"]
    want = [["A", "505822441.4861", "25.575154611454693", "1995-03-15"]]
    ok = [["A", "505822441.48614", "25.57515461145469", "1995-03-15"]]
    cases = [
        (h, ok, None),
        (["L_RETURNFLAG", "sum(l_quantity)", "avg_qty", "d"], ok, None),
        (["l_returnflag", "total", "avg_qty", "d"], ok, "column"),
        (h, [["A", "505822441.4801", "25.575154611454693", "1995-03-15"]], "row 1 column sum"),
        (h, [["A", "505822441.4861", "25.5751546114", "1995-03-15"]], "row 1 column avg_qty"),
        (h, [["a", "505822441.4861", "25.575154611454693", "1995-03-15"]], "row 1 column l_"),
        (h, [["A", "505822441.4861", "25.575154611454693", "1995-03-16"]], "row 1 column d"),
        (h, ok + ok, "2 rows"),
        (h[:3], [r[:3] for r in ok], "3 columns"),
        (None, [], "nothing"),
    ]
    bad = 0
    for gh, gr, expect in cases:
        m = compare(h, want, gh, gr)
        if (m is None) != (expect is None) or (m and expect not in m):
            print("self-test: %r %r gave %r, expected %r" % (gh, gr, m, expect))
            bad += 1
    if not value_matches("380456", "380456") or value_matches("380457", "380456") or \
            not value_matches("380456.4", "380456") or value_matches("0.056", "0.05"):
        print("self-test: value_matches on integers / short decimals")
        bad += 1
    print("tpch compare self-test: %s" % ("FAILED" if bad else "ok"))
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gqp")
    ap.add_argument("work")
    ap.add_argument("--sf", type=float, default=0.01)
    ap.add_argument("--configs", help="comma-separated, default cpu,auto,cpu-sort,cpu-dense,"
                    "cpu-chunked,cpu-copies (+ gpu,gpu-sort,gpu-dense,gpu-chunked,gpu-copies with a GPU)")
    ap.add_argument("--queries", help="comma-separated query numbers, default 1..22")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    a = ap.parse_args()
    gqp = os.path.abspath(a.gqp)
    global CHUNK_ROWS
    CHUNK_ROWS = int(os.environ.get("GQP_TPCH_CHUNK_ROWS") or max(1000, round(800000 * a.sf)))
    queries = [int(x) for x in a.queries.split(",")] if a.queries else list(range(1, 23))
    if a.configs:
        configs = a.configs.split(",")
    elif a.sf > 0.01 and float(os.environ.get("GQP_TEST_SCALE") or 1) < 1:
        configs = ["cpu"]  # sanitizer builds: SF 0.01 runs every configuration
    else:
        configs = ["cpu", "auto", "cpu-sort", "cpu-dense", "cpu-chunked", "cpu-copies"]
        v = subprocess.run([gqp, "--version"], capture_output=True, text=True).stdout
        if "GPU available" in v:
            configs += ["gpu", "gpu-sort", "gpu-dense", "gpu-chunked", "gpu-copies"]
    data, status = generate(gqp, os.path.abspath(a.work), a.sf)
    if status is not None:
        return status
    config = os.path.join(data, "gqp.yaml")
    ans = answers(a.sf, queries)
    jobs = [(cfg, q) for cfg in configs for q in queries]
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(lambda j: check_one(gqp, config, j[0], j[1], ans[j[1]]), jobs))
    res = dict(zip(jobs, results))
    print("TPC-H SF %s (%s): pass = equal to the official answer, xfail = Not implemented "
          "(TPCH_XFAIL)" % (sf_name(a.sf), config))
    print("%-10s %s" % ("query", " ".join("%-9s" % c for c in configs)))
    for q in queries:
        print("%-10s %s" % ("q%02d" % q, " ".join("%-9s" % res[(c, q)][0] for c in configs)))
    bad = [(c, q, m) for (c, q), (s, m) in res.items() if s == "FAIL"]
    for c, q, m in sorted(bad, key=lambda x: (x[1], x[0])):
        print("FAIL q%02d %s: %s" % (q, c, m))
    npass = sum(1 for s, _ in results if s == "pass")
    nx = sum(1 for s, _ in results if s == "xfail")
    print("tpch SF %s: %d passed, %d expected failures, %d failed (%d queries x %d configs)"
          % (sf_name(a.sf), npass, nx, len(bad), len(queries), len(configs)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
