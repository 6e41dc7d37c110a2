#!/usr/bin/env python3
"""Tests of the gqp Python package (python/gqp) against a built libgqp.so.

Arrow round trips through pyarrow (every type gqp holds, NULLs, empty
tables, non-ASCII strings, 100,000 rows over several batches), pandas
DataFrames registered and queried with joins and aggregates (answers
compared with DuckDB's on the same DataFrames, or with pandas' own when
DuckDB is missing), Parquet through pyarrow, and the errors.

Run: GQP_LIBRARY=build/libgqp.so PYTHONPATH=python python3 python/tests/test_gqp.py
Exit status 77 (ctest's "skipped") when pyarrow or pandas is missing or
GQP_PY_SKIP is set (sanitizer builds: Python cannot load an ASan library).
"""

import datetime
import decimal
import math
import os
import random
import sys
import tempfile
import unittest

SKIP = 77

if os.environ.get("GQP_PY_SKIP"):
    print("skipped: %s" % os.environ["GQP_PY_SKIP"])
    sys.exit(SKIP)
try:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError as e:
    print("skipped: %s (python3 -m pip install --user pyarrow pandas)" % e)
    sys.exit(SKIP)
try:
    import duckdb
except ImportError:
    duckdb = None

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gqp  # noqa: E402

D = decimal.Decimal
day = datetime.date


def canon(v):
    """A value in a form two engines' answers compare equal in (floats
    rounded to 9 significant digits, decimals as floats likewise)."""
    if v is None:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None  # pandas' missing value
    if isinstance(v, (float, decimal.Decimal)):
        f = float(v)
        return float("%.9g" % f) if f else 0.0
    return v


def rows_of(table):
    """The rows of a pyarrow Table as a list of tuples of canon() values."""
    cols = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return [tuple(canon(c[r]) for c in cols) for r in range(table.num_rows)]


def sort_key(row):
    """Rows with NULLs sort (NULL first) and compare across types."""
    return tuple((v is not None, str(type(v)), v) for v in row)


class Devices:
    """The devices to run each query on: cpu and auto, and gpu when this
    libgqp has one."""

    @staticmethod
    def names():
        return ["cpu", "auto"] + (["gpu"] if gqp.Connection.gpu_available() else [])


class RoundTrip(unittest.TestCase):
    def setUp(self):
        self.con = gqp.connect()

    def tearDown(self):
        self.con.close()

    def test_every_type_with_nulls(self):
        n = [None]
        src = pa.table(
            {
                "i8": pa.array([1, -128, 127] + n, pa.int8()),
                "i16": pa.array([1, -32768, 32767] + n, pa.int16()),
                "i32": pa.array([1, -(2**31), 2**31 - 1] + n, pa.int32()),
                "i64": pa.array([1, -(2**63), 2**63 - 1] + n, pa.int64()),
                "u8": pa.array([0, 255, 7] + n, pa.uint8()),
                "u16": pa.array([0, 65535, 7] + n, pa.uint16()),
                "u32": pa.array([0, 2**32 - 1, 7] + n, pa.uint32()),
                "u64": pa.array([0, 2**63 - 1, 7] + n, pa.uint64()),
                "f32": pa.array([1.5, -0.25, 3.0e38] + n, pa.float32()),
                "f64": pa.array([1.5, -1e-300, 1e300] + n, pa.float64()),
                "b": pa.array([True, False, True] + n, pa.bool_()),
                "d32": pa.array([day(2020, 2, 29), day(1969, 12, 31), day(1, 1, 1)] + n),
                "d64": pa.array(
                    [day(2020, 2, 29), day(1969, 12, 31), day(9999, 12, 31)] + n, pa.date64()
                ),
                "dec": pa.array([D("123.45"), D("-0.05"), D("99999999.99")] + n,
                                pa.decimal128(10, 2)),
                "dec38": pa.array([D("1.5000"), D("-99999999999999.9999"), D("0")] + n,
                                  pa.decimal128(38, 4)),
                "s": pa.array(["a", "h\u00e9llo \u4e16\u754c \U0001f600", ""] + n),
                "ls": pa.array(["x", "e\u0301", "\u00df"] + n, pa.large_string()),
                "cat": pa.array(["lo", "hi", "lo"] + n).dictionary_encode(),
                "nul": pa.array([None] * 4, pa.null()),
            }
        )
        self.con.register("t", src)
        for dev in Devices.names():
            self.con.set_device(dev)
            got = self.con.sql("SELECT * FROM t")
            got.validate(full=True)  # the exported buffers are valid Arrow
            self.assertEqual(got.column_names, src.column_names)
            want_types = {
                "i8": pa.int32(), "i16": pa.int32(), "i32": pa.int32(), "i64": pa.int64(),
                "u8": pa.int32(), "u16": pa.int32(), "u32": pa.int64(), "u64": pa.int64(),
                "f32": pa.float32(), "f64": pa.float64(), "b": pa.bool_(),
                "d32": pa.date32(), "d64": pa.date32(), "dec": pa.decimal128(18, 2),
                "dec38": pa.decimal128(18, 4), "s": pa.string(), "ls": pa.string(),
                "cat": pa.string(), "nul": pa.int64(),
            }
            for name, t in want_types.items():
                self.assertEqual(got.schema.field(name).type, t, name)
                want = src.column(name).to_pylist()
                self.assertEqual(got.column(name).to_pylist(), want, name)
            self.assertEqual(got.column("i8").null_count, 1)

    def test_empty_table_and_result(self):
        src = pa.table({"a": pa.array([], pa.int32()), "s": pa.array([], pa.string())})
        self.con.register("e", src)
        got = self.con.sql("SELECT a, s FROM e")
        self.assertEqual(got.num_rows, 0)
        self.assertEqual(got.schema, pa.schema([("a", pa.int32()), ("s", pa.string())]))
        got = self.con.sql("SELECT COUNT(*) AS n, SUM(a) AS s FROM e")
        self.assertEqual(got.to_pylist(), [{"n": 0, "s": None}])
        # DDL: a table of no column
        self.assertEqual(self.con.sql("CREATE TABLE z(a INTEGER)").num_columns, 0)

    def test_large_table_many_batches(self):
        rnd = random.Random(7)
        n = 100000
        ids = list(range(n))
        vals = [None if rnd.random() < 0.1 else rnd.uniform(-1e6, 1e6) for _ in ids]
        strs = [None if i % 17 == 0 else "k%d\u00e9" % rnd.randrange(5000) for i in ids]
        src = pa.table({"id": pa.array(ids, pa.int64()), "v": vals, "s": strs})
        # three batches in, the result back in two (65536 rows each at most)
        reader = pa.RecordBatchReader.from_batches(src.schema, src.to_batches(max_chunksize=40000))
        self.con.register("big", reader)
        for dev in Devices.names():
            self.con.set_device(dev)
            got = self.con.sql("SELECT id, v, s FROM big ORDER BY id")
            got.validate(full=True)
            self.assertEqual(got.column("id").num_chunks, 2)
            self.assertTrue(got.equals(src), dev)
            agg = self.con.sql("SELECT COUNT(v) AS c, COUNT(DISTINCT s) AS d FROM big")
            self.assertEqual(agg.to_pylist(),
                             [{"c": sum(v is not None for v in vals),
                               "d": len({s for s in strs if s is not None})}])

    def test_sliced_input(self):
        # offsets that are not multiples of 8 into bitmaps, values, strings
        rnd = random.Random(3)
        n = 1000
        src = pa.table(
            {
                "id": pa.array(range(n), pa.int64()),
                "i": pa.array([None if i % 7 == 0 else i for i in range(n)], pa.int32()),
                "b": pa.array([None if i % 5 == 0 else i % 3 == 0 for i in range(n)]),
                "s": pa.array([None if i % 11 == 0 else "v%d" % rnd.randrange(50)
                               for i in range(n)]),
                "c": pa.array(["x%d" % (i % 4) for i in range(n)]).dictionary_encode(),
            }
        )
        part = src.slice(13, 501)
        self.con.register("sl", part)
        got = self.con.sql("SELECT i, b, s, c FROM sl ORDER BY id")
        self.assertEqual(got.column("i").to_pylist(), part.column("i").to_pylist())
        self.assertEqual(got.column("b").to_pylist(), part.column("b").to_pylist())
        self.assertEqual(got.column("s").to_pylist(), part.column("s").to_pylist())
        self.assertEqual(got.column("c").to_pylist(), part.column("c").to_pylist())

    def test_result_registered_again(self):
        self.con.register("t", pa.table({"a": [3, 1, 2], "s": ["c", None, "b"]}))
        self.con.register("u", self.con.sql("SELECT a * 2 AS a2, s FROM t WHERE a > 1"))
        got = self.con.sql("SELECT a2, s FROM u ORDER BY a2")
        self.assertEqual(got.to_pylist(), [{"a2": 4, "s": "b"}, {"a2": 6, "s": "c"}])

    def test_arrow_c_stream_protocol(self):
        class Wrapped:  # any producer of the capsule protocol (Polars, DuckDB, ...)
            def __init__(self, t):
                self.t = t

            def __arrow_c_stream__(self, requested_schema=None):
                return self.t.__arrow_c_stream__(requested_schema)

        self.con.register("w", Wrapped(pa.table({"x": [1, 2, 3]})))
        self.assertEqual(self.con.sql("SELECT SUM(x) AS s FROM w").to_pylist(), [{"s": 6}])

    def test_parquet_through_pyarrow(self):
        src = pa.table({"k": [1, 2, 2, 3], "v": [1.0, 2.5, 3.5, None], "s": list("abba")})
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.parquet")
            pq.write_table(src, path)
            self.con.register("p", pq.read_table(path))
        got = self.con.sql("SELECT k, SUM(v) AS v FROM p GROUP BY k ORDER BY k")
        self.assertEqual(got.to_pylist(),
                         [{"k": 1, "v": 1.0}, {"k": 2, "v": 6.0}, {"k": 3, "v": None}])

    def test_replace_and_execute(self):
        self.con.register("t", pa.table({"a": [1]}))
        self.con.register("t", pa.table({"a": [5, 6]}))  # replaces
        self.assertEqual(self.con.sql("SELECT SUM(a) AS s FROM t").to_pylist(), [{"s": 11}])
        with self.assertRaises(gqp.Error):
            self.con.register("t", pa.table({"a": [1]}), replace=False)
        # data refused: the old table stays as it was
        with self.assertRaises(gqp.Error):
            self.con.register("t", pa.table({"a": pa.array([2**64 - 1], pa.uint64())}))
        self.assertEqual(self.con.sql("SELECT SUM(a) AS s FROM t").to_pylist(), [{"s": 11}])
        self.assertEqual(self.con.execute("INSERT INTO t VALUES (1), (2), (3)"), 3)
        self.con.execute("CREATE TABLE x(a INTEGER); INSERT INTO x SELECT a FROM t")
        self.assertEqual(self.con.sql("SELECT COUNT(*) AS n FROM x").to_pylist(), [{"n": 5}])
        self.con.unregister("x")
        with self.assertRaises(gqp.Error):
            self.con.sql("SELECT * FROM x")


class Errors(unittest.TestCase):
    def setUp(self):
        self.con = gqp.connect()

    def tearDown(self):
        self.con.close()

    def test_unsupported_types_name_the_column(self):
        cases = {
            "ts": pa.array([datetime.datetime(2020, 1, 1)], pa.timestamp("us")),
            "lst": pa.array([[1, 2]]),
            "bin": pa.array([b"\x00\x01"]),
            "st": pa.array([{"x": 1}]),
        }
        for name, arr in cases.items():
            with self.assertRaises(gqp.Error) as cm:
                self.con.register("t", pa.table({"ok": [1], name: arr}))
            self.assertIn("column '%s'" % name, str(cm.exception))
            with self.assertRaises(gqp.Error):  # nothing half-registered
                self.con.sql("SELECT ok FROM t")

    def test_values_that_do_not_fit(self):
        with self.assertRaises(gqp.Error) as cm:
            self.con.register("t", pa.table({"u": pa.array([1, 2**64 - 1], pa.uint64())}))
        self.assertIn("row 2", str(cm.exception))
        with self.assertRaises(gqp.Error) as cm:
            self.con.register(
                "t", pa.table({"d": pa.array([D("1e20")], pa.decimal128(38, 0))})
            )
        self.assertIn("18 digits", str(cm.exception))

    def test_sql_errors_and_misuse(self):
        with self.assertRaises(gqp.Error) as cm:
            self.con.sql("SELEC 1")
        self.assertIn("Parser Error", str(cm.exception))
        with self.assertRaises(gqp.Error) as cm:
            self.con.sql("SELECT * FROM nowhere")
        self.assertIn("nowhere", str(cm.exception))
        with self.assertRaises(ValueError):
            self.con.set_device("tpu")
        if not gqp.Connection.gpu_available():
            with self.assertRaises(gqp.Error):
                self.con.set_device("gpu")
        with self.assertRaises(TypeError):
            self.con.register("t", [1, 2, 3])
        self.con.close()
        with self.assertRaises(gqp.Error):
            self.con.sql("SELECT 1")

    def test_bad_config(self):
        with self.assertRaises(gqp.Error):
            gqp.connect("/nonexistent/gqp.yaml")


class PandasQueries(unittest.TestCase):
    """DataFrames registered and queried; answers compared with DuckDB's on
    the same DataFrames (or pandas' where DuckDB is missing)."""

    @classmethod
    def setUpClass(cls):
        rnd = random.Random(42)
        ncust, nord = 300, 20000
        regions = ["north", "s\u00fcd", "\u6771", "west"]
        cls.customers = pd.DataFrame(
            {
                "cust": range(ncust),
                "name": ["c%03d-\u00e9" % i for i in range(ncust)],
                "region": pd.Categorical([regions[i % 4] for i in range(ncust)]),
            }
        )
        cls.orders = pd.DataFrame(
            {
                "o_id": range(nord),
                # some orders of customers that do not exist (LEFT JOIN)
                "cust": [rnd.randrange(ncust + 20) for _ in range(nord)],
                "amount": [round(rnd.uniform(1, 500), 2) for _ in range(nord)],
                "qty": pd.array([None if rnd.random() < 0.05 else rnd.randrange(1, 50)
                                 for _ in range(nord)], dtype="Int64"),
                "day": [day(2020, 1, 1) + datetime.timedelta(days=rnd.randrange(900))
                        for _ in range(nord)],
                "status": [rnd.choice(["open", "shipped", None]) for _ in range(nord)],
            }
        )
        cls.con = gqp.connect()
        cls.con.register("customers", cls.customers)
        cls.con.register("orders", cls.orders)
        if duckdb is not None:
            cls.duck = duckdb.connect()
            cls.duck.register("customers", cls.customers)
            cls.duck.register("orders", cls.orders)

    @classmethod
    def tearDownClass(cls):
        cls.con.close()

    QUERIES = [
        "SELECT c.region, COUNT(*), SUM(o.qty), MIN(o.amount), MAX(o.day) "
        "FROM orders o JOIN customers c ON o.cust = c.cust GROUP BY c.region",
        "SELECT status, COUNT(*), SUM(amount) FROM orders GROUP BY status",
        "SELECT c.name, SUM(o.amount) FROM orders o JOIN customers c ON o.cust = c.cust "
        "WHERE o.day >= DATE '2021-06-01' AND o.status = 'open' GROUP BY c.name "
        "HAVING COUNT(*) > 12",
        "SELECT COUNT(*), COUNT(c.cust) FROM orders o LEFT JOIN customers c ON o.cust = c.cust",
        "SELECT c.region, COUNT(DISTINCT o.cust) FROM orders o JOIN customers c "
        "ON o.cust = c.cust WHERE c.name LIKE 'c1%' GROUP BY c.region",
        "SELECT o_id, amount, qty FROM orders WHERE qty IS NULL AND amount > 450",
        "SELECT region, COUNT(*) FROM customers WHERE region <> 'west' GROUP BY region",
    ]

    def reference(self, sql):
        """The reference answer of sql: DuckDB's."""
        return [tuple(canon(v) for v in r) for r in self.duck.execute(sql).fetchall()]

    def test_queries_match_duckdb(self):
        if duckdb is None:
            self.skipTest("duckdb not installed")
        for dev in Devices.names():
            self.con.set_device(dev)
            for sql in self.QUERIES:
                got = sorted(rows_of(self.con.sql(sql)), key=sort_key)
                want = sorted(self.reference(sql), key=sort_key)
                self.assertTrue(len(want) > 0, sql)
                self.assertEqual(got, want, "%s on %s" % (sql, dev))

    def test_aggregate_matches_pandas(self):
        got = self.con.sql(
            "SELECT cust, COUNT(*) AS n, SUM(amount) AS s FROM orders GROUP BY cust ORDER BY cust"
        ).to_pandas()
        want = (self.orders.groupby("cust").agg(n=("amount", "size"), s=("amount", "sum"))
                .reset_index())
        self.assertEqual(list(got["cust"]), list(want["cust"]))
        self.assertEqual(list(got["n"]), list(want["n"]))
        for a, b in zip(got["s"], want["s"]):
            self.assertAlmostEqual(a, b, places=6)

    def test_to_pandas_round_trip(self):
        back = self.con.sql("SELECT * FROM customers ORDER BY cust").to_pandas()
        self.assertEqual(list(back["name"]), list(self.customers["name"]))
        self.assertEqual(list(back["region"]), list(self.customers["region"].astype(str)))


if __name__ == "__main__":
    # which devices the queries run on (the GPU ones only with a usable GPU)
    print("devices: %s" % ", ".join(Devices.names()), file=sys.stderr)
    print("gqp: %s" % gqp.library_path())
    unittest.main(verbosity=2)
