"""gqp: SQL on pandas DataFrames and Arrow tables, on the GPU or the CPU.

A thin ctypes binding of libgqp (the shared library ``libgqp.so`` that the
CMake build writes beside ``libgqp.a``). Data crosses in both directions
through the Arrow C Stream Interface, so pyarrow is the only Python
dependency (pandas for DataFrames)::

    import gqp, pandas as pd
    con = gqp.connect()                      # or gqp.connect("demo/gqp.yaml")
    con.register("t", pd.DataFrame({"k": [1, 2, 2], "v": [1.5, 2.0, 4.0]}))
    tbl = con.sql("SELECT k, SUM(v) AS s FROM t GROUP BY k ORDER BY k")  # pyarrow.Table
    df = tbl.to_pandas()

The library is found through ``$GQP_LIBRARY`` (a path to libgqp.so), then
the repository's ``build/`` folders, then the system's library path.
"""

from ._core import Connection, Error, connect, library_path

__all__ = ["Connection", "Error", "connect", "library_path"]
__version__ = "0.1.0"
