#!/bin/bash
# bench/corrlimit/run.sh BUILD WORK SF -- correlated LIMIT / OFFSET per outer
# row (libgqp/decorrelate.c rank_limit) on TPC-H data: gqp (bench_gqp,
# gpu and cpu, median of 5 after a warm-up) against DuckDB (all cores, the
# same data through its tpch extension, median of 5), answers compared.
set -u
B=$1 W=$2 SF=${3:-1}
D=$(cd "$(dirname "$0")" && pwd)
[ -f "$W/gqp.yaml" ] || "$B/gqp" gen tpch --sf "$SF" --out "$W" >/dev/null || exit 1
for q in "$D"/c*.sql; do
    echo "== $(basename "$q")"
    "$B/gqp" run -c "$W/gqp.yaml" --device gpu --mode csv "$q" > "$W/$(basename "$q" .sql).gpu.csv"
    "$B/gqp" run -c "$W/gqp.yaml" --device cpu --mode csv "$q" > "$W/$(basename "$q" .sql).cpu.csv"
    "$B/bench_gqp" -c "$W/gqp.yaml" --device gpu,cpu --repeat 5 "$q" 2>&1 | tail -3
done
python3 - "$SF" "$D" "$W" <<'PY'
import duckdb, glob, hashlib, statistics, sys, time, os
sf, d, w = sys.argv[1], sys.argv[2], sys.argv[3]
con = duckdb.connect()
ext = glob.glob(os.path.join(os.environ.get("PYTHONPATH", "/tmp/site").split(":")[0], "**", "tpch.duckdb_extension"), recursive=True)
con.execute("LOAD '%s'" % ext[0]) if ext else con.execute("LOAD tpch")
con.execute("CALL dbgen(sf=%s)" % sf)
for q in sorted(glob.glob(d + "/c*.sql")):
    sql = open(q).read()
    rows = con.execute(sql).fetchall()
    ts = []
    for _ in range(6):
        t = time.perf_counter(); con.execute(sql).fetchall(); ts.append((time.perf_counter() - t) * 1e3)
    want = ["," .join("" if v is None else str(v) for v in r) for r in rows]
    name = os.path.basename(q)[:-4]
    same = {dev: open(os.path.join(w, name + "." + dev + ".csv")).read().split("\n")[1:-1] == want
            for dev in ("gpu", "cpu")}
    print("== %s duckdb median %.2f ms (%d threads); %d rows, first %s; gqp gpu answer = duckdb's: %s, "
          "gqp cpu: %s" % (name, statistics.median(ts[1:]), os.cpu_count(), len(rows), want[:2],
                           same["gpu"], same["cpu"]))
PY
