#!/usr/bin/env python3
"""SSB's 13 queries through gqp, checked against DuckDB (for scale factors
where sqlite3 is too slow to be the reference, e.g. SF 1 on the GPU machine).

    python3 tests/ssb/check_duckdb.py GQP_BINARY DATA_DIR [--device gpu,cpu]

DATA_DIR holds `gqp gen ssb` output (the .tbl files DuckDB reads and
gqp.yaml). Every query's rows must be equal, in order (all SSB queries
have ORDER BY or return one row); integers exactly. Exit 1 on a mismatch."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import ssb  # noqa: E402


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
    return 1 if ssb.check_answers(args.gqp, args.data, con, args.device.split(",")) else 0


if __name__ == "__main__":
    sys.exit(main())
