#!/usr/bin/env python3
"""SSB's 13 queries through gqp, checked against DuckDB (for scale factors
where sqlite3 is too slow to be the reference, e.g. SF 1 on the GPU machine).

    python3 tests/ssb/check_duckdb.py GQP_BINARY DATA_DIR [--device gpu,cpu]

DATA_DIR holds `gqp gen ssb` output (the .tbl files DuckDB reads and
gqp.yaml). Every query's rows must be equal, in order (all SSB queries
have ORDER BY or return one row); integers exactly. Exit 1 on a mismatch."""
import argparse
import csv
import io
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import ssb  # noqa: E402


def norm(v):
    """A value as text the way both engines print it."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gqp")
    ap.add_argument("data")
    ap.add_argument("--device", default="gpu,cpu")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    con = ssb.duckdb_load(args.data, args.threads)
    if con is None:
        return 1
    bad = 0
    for name, sql, path in ssb.queries():
        want = [[norm(v) for v in row] for row in con.execute(sql).fetchall()]
        for dev in args.device.split(","):
            env = dict(os.environ, GQP_DEVICE=dev)
            p = subprocess.run([args.gqp, "run", "-c", os.path.join(args.data, "gqp.yaml"),
                                "--mode", "csv", path], capture_output=True, text=True, env=env)
            if p.returncode != 0:
                print("%s --device %s: gqp failed: %s" % (name, dev, p.stderr.strip()))
                bad += 1
                continue
            got = [row for row in csv.reader(io.StringIO(p.stdout))][1:]
            ok = got == want
            print("%s --device %s: %d rows %s" % (name, dev, len(got), "ok" if ok else "DIFFER"))
            if not ok:
                bad += 1
                for a, b in list(zip(want, got))[:3]:
                    print("   duckdb %s | gqp %s" % (a, b))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
