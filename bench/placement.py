#!/usr/bin/env python3
"""Issue 4: does `--device auto` place queries as well as the better forced plan?

    python3 bench/placement.py [--build build] [--work bench/work/placement]
        [--sizes 1e3,1e4,...] [--threads N] [--out FILE.md] [--png FILE.png]
        [--quick] [--repeat 5] [--cold-repeat 3] [--explain-max-rows 1e7]
        [--join-matches 1]

Sweep: table size x selectivity x data location x query shape, each timed
with bench_gqp (median gqp_exec_ms: execution only, planning excluded, result
materialized, not printed; 3x the repeats up to 1e5 rows, where runs are
short and noisy) under --device cpu, gpu (only with a GPU) and auto,
interleaved in one process (`bench_gqp --device cpu,gpu,auto`: per query a
warm-up on each device, then each round runs every device once), so the
three are compared under the same conditions and the ratio auto / forced
measures the placement, not process-to-process noise.

* Data: `gqp gen test --rows N` once per size, plus a generated dimension
  table `dim(k, w)` holding every uniformi value (-99..99) --join-matches
  times, so each probe row of the join matches exactly that many rows.
* Predicate `id < K` with K = round(sel x N): id is 0..N-1, so the
  selectivity is exact (K = 0 where sel x N < 0.5, e.g. 0.01% of 1e3).
* Shapes: filter-project, filtered aggregate, group-by, join (aggregated,
  so the result is 2 values), order-by + LIMIT 100.
* Location `resident`: the process first runs priming queries (a SUM over
  every column the sweep uses, which its gpu run brings into the GPU column
  cache), so every column is resident when auto plans.
* Location `host`: bench_gqp --cold: before every timed run `SET gpu_cache
  = 'clear'` drops the GPU column cache, so each run of a GPU plan pays
  page-locking + the PCIe copy of the columns it reads.
* auto / min(forced) is paired: the better forced device is the one with
  the lower median, and the ratio is the median over rounds of auto's run
  over that device's run of the same round (a round's runs share the
  machine's state: clock, caches, other load).
* The plan auto ran (GPU nodes / nodes) is recorded from the timed runs
  (`a|b/n`: the placement differed between runs).
* Every timed run sleeps 2 ms first (bench_gqp --gap-us), so each starts
  with the CPU worker pool asleep whatever ran before it.
* Estimation error: bench_gqp --explain-dir writes, per query and device,
  `EXPLAIN --analyze --format json` run in the same warm process (after a
  cache drop under `host`); per node, estimate = est_cost_<device>_ms +
  est_cost_xfer_ms (a source: its copy, est_cost_xfer_ms), measured = ms (GPU nodes timed with CUDA events). Nodes
  fused into a select (`fused_with`) are skipped (the select's head carries
  their cost), as are nodes where both estimate and measurement are below
  --est-min-ms.

Prints the markdown report (also --out, rewritten after every size so a cut
run keeps what it finished) and draws --png if matplotlib imports.
Timings are reported, never asserted.
"""
import argparse
import json
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

SELS = [0.0001, 0.001, 0.01, 0.1, 0.5, 1.0]
QUICK_SELS = [0.001, 0.1, 1.0]
SIZES = [10**3, 10**4, 10**5, 10**6, 10**7, 10**8]
QUICK_SIZES = [10**3, 10**4, 10**5]
SHAPES = [
    ("filter-project", "SELECT id, uniformi FROM test WHERE id < {K}"),
    ("aggregate", "SELECT SUM(uniformi), COUNT(*) FROM test WHERE id < {K}"),
    ("group-by", "SELECT normali5, COUNT(*), SUM(uniformf) FROM test WHERE id < {K} "
                 "GROUP BY normali5"),
    ("join", "SELECT COUNT(*), SUM(dim.w) FROM test JOIN dim ON test.uniformi = dim.k "
             "WHERE test.id < {K}"),
    ("order-by", "SELECT id, uniformf FROM test WHERE id < {K} ORDER BY uniformf LIMIT 100"),
]
PRIME = "SELECT SUM(id), SUM(uniformi), SUM(normali5), SUM(uniformf) FROM test"
PRIME_DIM = "SELECT SUM(k), SUM(w) FROM dim"
LOCS = ["resident", "host"]


def pct(s):
    return ("%g%%" % (s * 100))


def fmt_n(n):
    e = len(str(n)) - 1
    return "1e%d" % e if n == 10**e else str(n)


ENV = dict(os.environ, CUDA_MODULE_LOADING="EAGER")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, env=ENV, **kw)


def gpu_info(build):
    """(has GPU, description)."""
    p = run([os.path.join(build, "bench_gqp"), "--bandwidth"])
    if p.returncode == 0 and "d2d_GBps" in p.stdout:
        return True, p.stdout.strip()
    return False, (p.stderr.strip() or p.stdout.strip() or "no GPU")


def prepare_size(args, n, sels):
    """Generate data + dim + config + query files for n rows; return (cfg, cases)
    with cases = [(shape, sel, K, path)]."""
    d = os.path.join(args.work, "data-%d" % n)
    if not os.path.exists(os.path.join(d, "test.csv")):
        t0 = time.time()
        subprocess.run([os.path.join(args.build, "gqp"), "gen", "test", "--rows", str(n),
                        "--out", d], check=True, stdout=subprocess.DEVNULL)
        log("  gen %s rows: %.1f s" % (fmt_n(n), time.time() - t0))
    with open(os.path.join(d, "dim.csv"), "w") as f:
        f.write("k,w\n")
        for m in range(args.join_matches):
            for k in range(-99, 100):
                f.write("%d,%d\n" % (k, k * 7 + m))
    cfg = os.path.join(d, "placement.yaml")
    base = open(os.path.join(d, "gqp.yaml")).read().rstrip() + "\n"
    with open(cfg, "w") as f:
        f.write(base + "  - name: dim\n    source: dim.csv\n    format: csv\n    header: true\n"
                "    columns:\n      - {name: k, type: INT32}\n      - {name: w, type: INT32}\n")
    qd = os.path.join(d, "q")
    os.makedirs(qd, exist_ok=True)
    cases = []
    for shape, tmpl in SHAPES:
        if args.shapes and shape not in args.shapes:
            continue
        for i, s in enumerate(sels):
            k = int(round(s * n))
            path = os.path.join(qd, "%s-s%d.sql" % (shape, i))
            with open(path, "w") as f:
                f.write(tmpl.format(K=k) + "\n")
            cases.append((shape, s, k, path))
    for name, sql in [("set-gpu", "SET device = 'gpu'"), ("set-auto", "SET device = 'auto'"),
                      ("prime", PRIME), ("prime-dim", PRIME_DIM)]:
        with open(os.path.join(qd, "_%s.sql" % name), "w") as f:
            f.write(sql + "\n")
    return cfg, cases, qd


def bench(args, cfg, devs, files, cold=False, explain_dir=None, more=False):
    """{(device, query path): (exec_ms, "g/n" GPU nodes)} from one bench_gqp
    process running the devices interleaved (missing on error)."""
    cmd = [os.path.join(args.build, "bench_gqp"), "-c", cfg, "--device", ",".join(devs),
           "--threads", str(args.threads),
           "--repeat", str((args.cold_repeat if cold else args.repeat) * (3 if more else 1)),
           "--gap-us", "2000"]
    if cold:
        cmd.append("--cold")
    if explain_dir:
        os.makedirs(explain_dir, exist_ok=True)
        cmd += ["--explain-dir", explain_dir]
    cmd += files
    t0 = time.time()
    p = run(cmd)
    with open(os.path.join(args.work, "bench-raw.txt"), "a") as f:  # every run, for the record
        f.write("$ %s\n%s" % (" ".join(cmd), p.stdout))
    res = {}
    for line in p.stdout.splitlines():
        if line.startswith("# cost model: "):
            args.cost_model = line[len("# cost model: "):].strip()
        m = re.match(r"(\S+) rows=(-?\d+) exec_ms=([\d.]+).* device=(\w+) "
                     r"gpu_nodes=\d+/(\d+) plans=([\d,]+) runs=([\d.,]+)", line)
        if m:
            # the GPU node counts of the timed runs: one, or several when
            # the placement changed between runs; every run in round order
            res[(m.group(4), m.group(1))] = (
                float(m.group(3)), "%s/%s" % (m.group(6).replace(",", "|"), m.group(5)),
                [float(x) for x in m.group(7).split(",")])
    log("  bench %-12s %-8s %d queries: %.1f s%s" % (
        ",".join(devs), "host" if cold else "resident", len(files), time.time() - t0,
        "" if p.returncode == 0 else "  (rc=%d: %s)" % (p.returncode, p.stderr.strip()[-300:])))
    return res


def save_state(args, st):
    """The cases and estimation points beside the report (--out X.md ->
    X.json), for --merge."""
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump({"rows": st["rows"],
                   "est": {"%s|%s" % k: v for k, v in st["est"].items()},
                   "has_gpu": st["has_gpu"], "gpu_desc": st["gpu_desc"],
                   "cost_model": getattr(args, "cost_model", "?"), "threads": args.threads,
                   "host": socket.gethostname(), "cpu": benchlib.cpu_model()}, f)


def paired_ratio(cpu, gpu, auto):
    """auto / the better forced plan, paired by round: the forced device
    with the lower median is the better one, and the ratio is the median
    over rounds of auto's run / that device's run in the same round (the
    runs interleave, so a round's runs share the machine's state); None
    when a side is missing."""
    cands = [x for x in (cpu, gpu) if x[0] is not None and x[2]]
    if auto[0] is None or not auto[2] or not cands:
        return None
    best = min(cands, key=lambda x: x[0])
    pairs = [a / b for a, b in zip(auto[2], best[2]) if b > 0]
    return statistics.median(pairs) if pairs else None


def explain_nodes(path):
    """The nodes of one --explain-dir JSON file, or None."""
    try:
        with open(path) as f:
            return json.load(f).get("nodes", [])
    except (OSError, ValueError):
        return None


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def ratio_s(x):
    return "%.2f" % x if x is not None else "n/a"


def ms_s(x):
    return "%.3f" % x if x is not None else "n/a"


def report(args, st):
    """The markdown report from the state dict st."""
    R, has_gpu = st["rows"], st["has_gpu"]
    out = ["# Placement sweep: auto vs forced CPU / GPU", ""]
    out.append("host %s, %s, %d threads, %s; cost model %s; bench_gqp median gqp_exec_ms "
               "(planning excluded), %d warm runs (resident) / %d cold runs (host), 3x as many "
               "up to 1e5 rows; join: every probe row matches %d dim row(s)." % (
                   getattr(args, "host", socket.gethostname()),
                   getattr(args, "cpu", benchlib.cpu_model()), args.threads,
                   time.strftime("%Y-%m-%d"),
                   getattr(args, "cost_model", "?"), args.repeat, args.cold_repeat, args.join_matches))
    out.append("")
    out.append("GPU: " + st["gpu_desc"] if has_gpu else
               "**No GPU: the gpu columns are missing (n/a); auto is compared with forced CPU "
               "only; `host` differs from `resident` only by first-run costs (nothing is "
               "cached on a GPU).**")
    out.append("")
    # summary
    rat = [(r["ratio"], r) for r in R if r.get("ratio") is not None]
    rat = [(x, r) for x, r in rat if x == x]
    out.append("## Summary")
    out.append("")
    if rat:
        within = sum(1 for x, _ in rat if x <= 1.1)
        slack = sum(1 for x, r in rat
                    if r["auto"] <= 1.1 * min(v for v in (r["cpu"], r["gpu"]) if v is not None)
                    + 0.02)
        worst, wr = max(rat, key=lambda t: t[0])
        out.append("- auto within 1.1x of the better forced plan: %d / %d cases (%.0f%%); "
                   "within 1.1x + 0.02 ms: %d / %d (%.0f%%)" % (
                       within, len(rat), 100.0 * within / len(rat), slack, len(rat),
                       100.0 * slack / len(rat)))
        out.append("- worst auto / min(forced): %.2fx (%s rows, %s, %s, %s: auto %s ms, cpu %s ms, "
                   "gpu %s ms)" % (worst, fmt_n(wr["n"]), pct(wr["sel"]), wr["shape"], wr["loc"],
                                   ms_s(wr["auto"]), ms_s(wr["cpu"]), ms_s(wr["gpu"])))
        gm = statistics.geometric_mean([x for x, _ in rat if x > 0]) if any(
            x > 0 for x, _ in rat) else float("nan")
        out.append("- geometric mean auto / min(forced): %.3f" % gm)
    else:
        out.append("- no cases measured")
    if not has_gpu:
        out.append("- min(forced) is forced CPU alone (no GPU): auto and cpu run the same "
                   "all-CPU plan, so these ratios measure run-to-run noise only")
    out.append("")
    # turning points
    out.append("## Turning points (forced GPU faster than forced CPU)")
    out.append("")
    if not has_gpu:
        out.append("n/a: no GPU.")
    else:
        sels = st["sels"]
        out.append("Per cell: the smallest size at which GPU < CPU at that selectivity "
                   "(— = never in the sweep). `first` = smallest size, then smallest "
                   "selectivity there.")
        out.append("")
        hdr = "| shape | location | first |" + "".join(" %s |" % pct(s) for s in sels)
        out += [hdr, "|" + "---|" * (3 + len(sels))]
        for shape, _ in SHAPES:
            for loc in LOCS:
                rs = [r for r in R if r["shape"] == shape and r["loc"] == loc
                      and r["gpu"] is not None and r["cpu"] is not None]
                if not rs:
                    continue
                wins = sorted((r["n"], r["sel"]) for r in rs if r["gpu"] < r["cpu"])
                cells = []
                for s in sels:
                    w = [n for n, s2 in wins if s2 == s]
                    cells.append(fmt_n(w[0]) if w else "—")
                first = "%s, %s" % (fmt_n(wins[0][0]), pct(wins[0][1])) if wins else "—"
                out.append("| %s | %s | %s |" % (shape, loc, first) +
                           "".join(" %s |" % c for c in cells))
    out.append("")
    # estimation error
    out.append("## Estimated vs measured per primitive (cpu, gpu and auto runs, both locations)")
    out.append("")
    E = st["est"]
    if not E:
        out.append("no explain data")
    else:
        out.append("measured / estimated per node (estimate = est_cost on its device + "
                   "est_cost_xfer_ms); nodes fused into a select and nodes under %.2f ms on "
                   "both sides skipped. Goal: within 2x (0.5 .. 2)." % args.est_min_ms)
        out.append("")
        out += ["| primitive | device | nodes | median | min | max | share within 2x "
                "| nodes >= 1 ms | median there | max there |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for key in sorted(E):
            xs = [x for x, _ in E[key]]
            big = [x for x, ms in E[key] if ms >= 1.0]
            w2 = sum(1 for x in xs if 0.5 <= x <= 2)
            out.append("| %s | %s | %d | %.2f | %.2f | %.2f | %.0f%% | %d | %s | %s |" % (
                key[0], key[1], len(xs), statistics.median(xs), min(xs), max(xs),
                100.0 * w2 / len(xs), len(big),
                "%.2f" % statistics.median(big) if big else "n/a",
                "%.2f" % max(big) if big else "n/a"))
    out.append("")
    # full table
    out.append("## All cases (ms)")
    out.append("")
    out.append("cpu, gpu, auto: median ms; auto/min(forced): the paired ratio (median over "
               "rounds of auto / the better forced device in the same round).")
    out.append("")
    out += ["| rows | sel | shape | location | cpu | gpu | auto | auto/min(forced) | gpu/cpu "
            "| auto plan |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in R:
        a = r.get("ratio")
        g = r["gpu"] / r["cpu"] if r["gpu"] is not None and r["cpu"] else None
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            fmt_n(r["n"]), pct(r["sel"]), r["shape"], r["loc"], ms_s(r["cpu"]), ms_s(r["gpu"]),
            ms_s(r["auto"]), ratio_s(a), ratio_s(g), r.get("plan", "")))
    return "\n".join(out) + "\n"


def plot(args, st):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib not importable: no PNG")
        return
    R = [r for r in st["rows"] if r["gpu"] is not None and r["cpu"]]
    if not R:
        log("no GPU timings: no PNG")
        return
    shapes = [s for s, _ in SHAPES if any(r["shape"] == s for r in R)]
    fig, axes = plt.subplots(1, len(shapes), figsize=(4.2 * len(shapes), 4), squeeze=False)
    sizes = sorted({r["n"] for r in R})
    cmap = plt.get_cmap("viridis")
    for ax, shape in zip(axes[0], shapes):
        for i, n in enumerate(sizes):
            for loc, ls in (("resident", "-"), ("host", "--")):
                pts = sorted((max(r["sel"], 1e-6), r["gpu"] / r["cpu"]) for r in R
                             if r["shape"] == shape and r["n"] == n and r["loc"] == loc)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker="o", ms=3,
                            color=cmap(i / max(1, len(sizes) - 1)),
                            label="%s %s" % (fmt_n(n), loc))
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(shape)
        ax.set_xlabel("selectivity")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("GPU time / CPU time (< 1: GPU faster)")
    axes[0][-1].legend(fontsize=6, loc="best")
    fig.suptitle("forced GPU / forced CPU (solid: resident, dashed: host)")
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    log("wrote " + args.png)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(HERE, "work", "placement"))
    ap.add_argument("--sizes", help="comma list, e.g. 1e3,1e5,1e7; none: only --merge")
    ap.add_argument("--sels", help="comma list of fractions, e.g. 0.001,0.5")
    ap.add_argument("--shapes", help="comma list of " + ",".join(s for s, _ in SHAPES))
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=7, help="timed warm runs per query")
    ap.add_argument("--cold-repeat", type=int, default=5, help="timed cold runs per query")
    ap.add_argument("--explain-max-rows", type=float, default=1e7,
                    help="explain --analyze (one process per case) only up to this size")
    ap.add_argument("--est-min-ms", type=float, default=0.05,
                    help="estimation error: skip nodes with est and measured both below")
    ap.add_argument("--join-matches", type=int, default=1, help="dim rows per probe row")
    ap.add_argument("--no-gpu", action="store_true", help="skip the GPU even if present")
    ap.add_argument("--out", help="write the report here (markdown)")
    ap.add_argument("--png", help="write the GPU/CPU ratio figure here")
    ap.add_argument("--quick", action="store_true", help="sizes 1e3..1e5, 3 selectivities")
    ap.add_argument("--merge", help="comma list of state files (FILE.json written beside an "
                    "earlier --out FILE.md) whose cases join this report: a sweep split over "
                    "several calls, e.g. 1e8 on its own")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    args.work = os.path.abspath(args.work)
    sizes = [] if args.sizes == "none" else [int(float(x)) for x in args.sizes.split(",")] \
        if args.sizes else (QUICK_SIZES if args.quick else SIZES)
    sels = [float(x) for x in args.sels.split(",")] if args.sels else (
        QUICK_SELS if args.quick else SELS)
    args.shapes = args.shapes.split(",") if args.shapes else None
    os.makedirs(args.work, exist_ok=True)

    has_gpu, desc = (False, "no sweep here (--sizes none)") if not sizes else \
        (False, "disabled (--no-gpu)") if args.no_gpu else gpu_info(args.build)
    log("GPU: " + (desc if has_gpu else "none (%s): running cpu and auto only" % desc))
    st = {"rows": [], "est": {}, "has_gpu": has_gpu, "gpu_desc": desc, "sels": sels}
    for path in (args.merge.split(",") if args.merge else []):
        with open(path) as f:
            old = json.load(f)
        st["rows"] += old["rows"]
        if not sizes:  # a report of earlier runs only: their machine
            st["has_gpu"], st["gpu_desc"] = old.get("has_gpu", False), old.get("gpu_desc", "?")
            args.cost_model = old.get("cost_model", "?")
            args.threads = old.get("threads", args.threads)
            args.host, args.cpu = old.get("host", "?"), old.get("cpu", "?")
        for k, v in old["est"].items():
            st["est"].setdefault(tuple(k.split("|")), []).extend(tuple(x) for x in v)
        log("merged %d cases from %s" % (len(old["rows"]), path))
    t_all = time.time()
    for n in sizes:
        log("size %s" % fmt_n(n))
        cfg, cases, qd = prepare_size(args, n, sels)
        files = [c[3] for c in cases]
        prime = [os.path.join(qd, "_%s.sql" % name) for name in ("prime", "prime-dim")]
        devs = ["cpu", "gpu", "auto"] if has_gpu else ["cpu", "auto"]
        t = {}
        small = n <= 10**5  # noisy sub-0.1 ms runs: more repeats
        for loc in LOCS:
            exd = os.path.join(args.work, "explain-%d-%s" % (n, loc)) \
                if n <= args.explain_max_rows else None
            t[loc] = bench(args, cfg, devs, (prime if loc == "resident" else []) + files,
                           cold=loc == "host", explain_dir=exd, more=small)
            if not exd:
                continue
            for shape, s, k, path in cases:
                for dev in devs:
                    nodes = explain_nodes(os.path.join(exd, "%s.%s.json" % (
                        os.path.basename(path), dev)))
                    for nd in nodes or []:
                        if nd.get("fused_with", -1) >= 0:
                            continue
                        nd_dev = nd.get("device", "cpu")
                        # a source's cost is its copy, in est_cost_gpu_ms and
                        # est_cost_xfer_ms alike: count it once
                        est = (0.0 if nd["kind"] == "source" else
                               nd.get("est_cost_%s_ms" % nd_dev, 0.0)) + nd.get(
                                   "est_cost_xfer_ms", 0.0)
                        ms = nd.get("ms")
                        if ms is None or max(est, ms) < args.est_min_ms or est <= 0 or ms <= 0:
                            continue
                        st["est"].setdefault((nd["kind"], nd_dev), []).append((ms / est, ms))
        for shape, s, k, path in cases:
            for loc in LOCS:
                g = lambda dev: t[loc].get((dev, path), (None, "", []))
                st["rows"].append({
                    "n": n, "sel": s, "K": k, "shape": shape, "loc": loc,
                    "cpu": g("cpu")[0],
                    "gpu": g("gpu")[0] if has_gpu else None,
                    "auto": g("auto")[0],
                    "ratio": paired_ratio(g("cpu"), g("gpu") if has_gpu else (None, "", []),
                                          g("auto")),
                    "plan": g("auto")[1] + " gpu" if g("auto")[1] else "",
                })
        if args.out:
            with open(args.out, "w") as f:
                f.write(report(args, st))
            save_state(args, st)
    text = report(args, st)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
        log("wrote " + args.out)
    if args.png:
        plot(args, st)
    log("total %.1f s" % (time.time() - t_all))


if __name__ == "__main__":
    main()
