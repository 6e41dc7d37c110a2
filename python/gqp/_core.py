"""The ctypes binding behind gqp.connect() (see the package docstring)."""

import ctypes
import ctypes.util
import os
import threading

# result codes of include/gqp.h
_OK, _ROW, _DONE = 0, 100, 101
_DEVICES = {"auto": 0, "cpu": 1, "gpu": 2}
_ARROW_REPLACE = 1  # GQP_ARROW_REPLACE of include/gqp_arrow.h


class Error(Exception):
    """A gqp error: the message is libgqp's ("Binder Error: ...")."""

    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


class _ArrowArrayStream(ctypes.Structure):
    """struct ArrowArrayStream of the Arrow C Stream Interface."""

    _fields_ = [
        ("get_schema", ctypes.c_void_p),
        ("get_next", ctypes.c_void_p),
        ("get_last_error", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


_lib = None
_lib_path = None
_lib_lock = threading.Lock()


def _candidates():
    """Paths to try for libgqp.so, most specific first."""
    env = os.environ.get("GQP_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, "libgqp.so")]
    repo = os.path.dirname(os.path.dirname(here))
    for b in ("build", "build-cuda", "build-release"):
        out.append(os.path.join(repo, b, "libgqp.so"))
    found = ctypes.util.find_library("gqp")
    if found:
        out.append(found)
    return out


def _load():
    """The loaded libgqp with its signatures declared (loaded once)."""
    global _lib, _lib_path
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(path)
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            if not hasattr(lib, "gqp_query_arrow"):
                tried.append("%s (no gqp_query_arrow: an older libgqp)" % path)
                continue
            _declare(lib)
            _lib, _lib_path = lib, path
            return lib
        raise Error(
            "gqp: libgqp.so not found; build it (cmake --build build) or set GQP_LIBRARY. "
            "Tried: " + "; ".join(tried)
        )


def _declare(lib):
    """Declare the argument and result types of the functions used."""
    P, I, I64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64
    S = ctypes.c_char_p
    sigs = {
        "gqp_open": (I, [S, ctypes.POINTER(P)]),
        "gqp_close": (I, [P]),
        "gqp_errmsg": (S, [P]),
        "gqp_errcode": (I, [P]),
        "gqp_set_device": (I, [P, I]),
        "gqp_set_threads": (I, [P, I]),
        "gqp_gpu_available": (I, []),
        "gqp_prepare": (I, [P, S, I64, ctypes.POINTER(P), ctypes.POINTER(P)]),
        "gqp_step": (I, [P]),
        "gqp_finalize": (I, [P]),
        "gqp_changes": (I64, [P]),
        "gqp_libversion": (S, []),
        "gqp_query_arrow": (I, [P, S, ctypes.POINTER(_ArrowArrayStream)]),
        "gqp_register_arrow_ex": (I, [P, S, ctypes.POINTER(_ArrowArrayStream), I]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


def library_path():
    """The path of the libgqp.so in use (loading it if needed)."""
    _load()
    return _lib_path


def _pa():
    """pyarrow, imported on first use (a clear error when missing)."""
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise Error("gqp: pyarrow is needed (python3 -m pip install pyarrow)") from e
    return pyarrow


def _gqp_type(pa, t):
    """An Arrow type libgqp reads in place of t (t itself when it does)."""
    if pa.types.is_string_view(t):
        return pa.large_string()
    if pa.types.is_dictionary(t) and not (
        pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)
    ):
        return _gqp_type(pa, t.value_type)
    return t


def _as_reader(data):
    """A pyarrow.RecordBatchReader over data: a pyarrow Table, RecordBatch or
    RecordBatchReader, a pandas DataFrame (its index dropped), or any object
    with __arrow_c_stream__ (Polars, DuckDB, nanoarrow, ...)."""
    pa = _pa()
    if isinstance(data, pa.RecordBatchReader):
        reader = data
    elif isinstance(data, pa.Table):
        reader = data.to_reader()
    elif isinstance(data, pa.RecordBatch):
        reader = pa.Table.from_batches([data]).to_reader()
    elif type(data).__module__.split(".")[0] == "pandas" and hasattr(data, "columns"):
        reader = pa.Table.from_pandas(data, preserve_index=False).to_reader()
    elif hasattr(data, "__arrow_c_stream__"):
        reader = pa.RecordBatchReader.from_stream(data)
    else:
        raise TypeError(
            "gqp: register() takes a pyarrow Table, RecordBatch or RecordBatchReader, a "
            "pandas DataFrame or an object with __arrow_c_stream__, not %s" % type(data).__name__
        )
    schema = reader.schema
    target = pa.schema([f.with_type(_gqp_type(pa, f.type)) for f in schema])
    if not target.equals(schema):
        reader = reader.read_all().cast(target).to_reader()
    return reader


class Connection:
    """A libgqp handle (gqp_open): its own catalog of tables and settings.

    Calls on one connection run one at a time (libgqp serializes them);
    use a connection per thread for parallel queries."""

    def __init__(self, config=None):
        self._lib = _load()
        db = ctypes.c_void_p()
        path = os.fsencode(config) if config is not None else None
        rc = self._lib.gqp_open(path, ctypes.byref(db))
        if rc != _OK:
            msg = self._lib.gqp_errmsg(db).decode("utf-8", "replace") if db else "out of memory"
            self._lib.gqp_close(db)
            raise Error(msg, rc)
        self._db = db

    def _check(self, rc):
        """Raise the connection's error when rc is not GQP_OK."""
        if rc != _OK:
            raise Error(self._lib.gqp_errmsg(self._db).decode("utf-8", "replace"), rc)

    def _handle(self):
        """The open handle (Error when closed)."""
        if not self._db:
            raise Error("gqp: the connection is closed", 21)
        return self._db

    def sql(self, query):
        """Run every statement of query and return the last one's result as
        a pyarrow.Table (zero columns for DDL / DML)."""
        pa = _pa()
        stream = _ArrowArrayStream()
        self._check(self._lib.gqp_query_arrow(self._handle(), query.encode(), ctypes.byref(stream)))
        reader = pa.RecordBatchReader._import_from_c(ctypes.addressof(stream))
        return reader.read_all()

    def execute(self, sql):
        """Run every statement of sql (DDL, DML, SET, queries whose rows are
        not wanted); returns the rows changed by the last statement."""
        db = self._handle()
        buf = ctypes.create_string_buffer(sql.encode())
        pos = ctypes.addressof(buf)
        end = pos + len(buf.value)
        changes = 0
        while pos < end:
            st, tail = ctypes.c_void_p(), ctypes.c_void_p()
            self._check(
                self._lib.gqp_prepare(db, ctypes.c_char_p(pos), -1, ctypes.byref(st),
                                      ctypes.byref(tail))
            )
            if not st:
                break
            rc = self._lib.gqp_step(st)
            while rc == _ROW:
                rc = self._lib.gqp_step(st)
            changes = self._lib.gqp_changes(st)
            self._lib.gqp_finalize(st)
            if rc != _DONE:
                raise Error(self._lib.gqp_errmsg(db).decode("utf-8", "replace"), rc)
            if not tail.value or tail.value <= pos:
                break
            pos = tail.value
        return changes

    def register(self, name, data, replace=True):
        """Copy data (a pyarrow Table / RecordBatch / RecordBatchReader, a
        pandas DataFrame, or anything with __arrow_c_stream__) into table
        `name`, which SQL then reads on either device. With replace, a table
        of that name is replaced once the new one is complete (it stays as
        it was when the data is refused); else the name must be free."""
        reader = _as_reader(data)
        db = self._handle()
        stream = _ArrowArrayStream()
        reader._export_to_c(ctypes.addressof(stream))
        # gqp_register_arrow_ex releases the stream whatever happens
        flags = _ARROW_REPLACE if replace else 0
        self._check(
            self._lib.gqp_register_arrow_ex(db, name.encode(), ctypes.byref(stream), flags)
        )
        return self

    def unregister(self, name):
        """Drop table `name` (no error when there is none)."""
        self.execute('DROP TABLE IF EXISTS "%s"' % name.replace('"', '""'))

    def set_device(self, device):
        """Where queries run: 'auto' (the cost model, the default), 'cpu' or
        'gpu' (an Error without a usable GPU)."""
        if device not in _DEVICES:
            raise ValueError("gqp: device must be 'auto', 'cpu' or 'gpu', not %r" % (device,))
        self._check(self._lib.gqp_set_device(self._handle(), _DEVICES[device]))

    def set_threads(self, n):
        """CPU worker threads (0: all cores)."""
        self._check(self._lib.gqp_set_threads(self._handle(), int(n)))

    @staticmethod
    def gpu_available():
        """True when this libgqp was built with CUDA and a GPU is usable."""
        return bool(_load().gqp_gpu_available())

    def close(self):
        """Release the handle and its tables (idempotent)."""
        if self._db:
            self._lib.gqp_close(self._db)
            self._db = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def connect(config=None):
    """Open a connection: config is a gqp YAML config (its tables are
    loaded) or None for an empty catalog."""
    return Connection(config)
