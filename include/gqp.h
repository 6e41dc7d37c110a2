/*
 * gqp.h -- the public C API of libgqp, a SQL query coprocessor for NVIDIA
 * GPUs. This is the only public header; nothing here exposes an internal
 * struct.
 *
 * The API follows the sqlite3 C interface:
 *
 *     gqp *db;
 *     gqp_stmt *st;
 *     if (gqp_open("demo/gqp.yaml", &db) != GQP_OK) { puts(gqp_errmsg(db)); }
 *     gqp_prepare(db, "SELECT id FROM test WHERE uniformi > 60", -1, &st, NULL);
 *     while (gqp_step(st) == GQP_ROW)
 *         printf("%lld\n", (long long)gqp_column_int64(st, 0));
 *     gqp_finalize(st);
 *     gqp_close(db);
 *
 * Ownership: every pointer returned by a gqp_* function is owned by the
 * object it was read from (the gqp handle or the statement) and stays valid
 * until the call named in its comment; the caller never frees it, except
 * where the comment says "free with gqp_free()".
 *
 * Errors: functions return GQP_OK (0) or an error code; the message is read
 * with gqp_errmsg() and, when it refers to a place in the SQL text, the byte
 * offset with gqp_error_offset(), the code with gqp_errcode(). The library
 * never calls exit().
 *
 * Threads (SQLite's "serialized" mode, always on): every function may be
 * called from any thread. A gqp handle and its statements may be shared by
 * threads: each call that touches a handle or one of its statements holds
 * the handle's recursive mutex for the whole call, so calls on one handle
 * run one at a time (a long query on a shared handle blocks the other
 * threads' calls on it until it finishes). A statement belongs to its
 * handle and takes that handle's lock. Separate handles share no state
 * that needs a lock of theirs and run in parallel: give each thread its
 * own handle for parallel queries (each handle has its own catalog, so
 * tables are loaded once per handle). What is process-wide: the CPU
 * worker pool (a second concurrent query spawns its own threads instead of
 * waiting) and the CUDA device (concurrent GPU queries share it; the peak
 * device memory that gqp_peak_device_bytes() reports is the device's).
 * Pointers that a call returns (gqp_errmsg(), gqp_column_text(), ...) are
 * overwritten by later calls from any thread on the same handle: to read
 * them safely while other threads use the handle, hold gqp_lock() across
 * the call and the use. gqp_interrupt() takes no lock.
 */
#ifndef GQP_H
#define GQP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result codes. */
#define GQP_OK 0        /* success */
#define GQP_ERROR 1     /* SQL error, binder error, load error, ... */
#define GQP_NOMEM 7     /* an allocation failed */
#define GQP_INTERRUPT 9 /* the query was stopped by gqp_interrupt() */
#define GQP_MISUSE 21   /* the API was called in a wrong order, with NULL or a bad value */
#define GQP_RANGE 25    /* gqp_bind_*: parameter index out of range */
#define GQP_DEVICE 30   /* a CUDA call failed (message says which) */
#define GQP_ROW 100     /* gqp_step() has a row ready */
#define GQP_DONE 101    /* gqp_step() has finished */

/* Extended codes of GQP_ERROR (gqp_extended_errcode(); the low 8 bits are
 * the primary code, as in SQLite): the stage that failed. */
#define GQP_ERROR_PARSER (GQP_ERROR | (1 << 8))     /* "Parser Error: ..." */
#define GQP_ERROR_BINDER (GQP_ERROR | (2 << 8))     /* "Binder Error: ..." */
#define GQP_ERROR_CATALOG (GQP_ERROR | (3 << 8))    /* "Catalog Error: ..." (also loading) */
#define GQP_ERROR_NOTIMPL (GQP_ERROR | (4 << 8))    /* "Not implemented Error: ..." */
#define GQP_ERROR_EXECUTION (GQP_ERROR | (5 << 8))  /* "Execution Error: ..." */
#define GQP_ERROR_CONSTRAINT (GQP_ERROR | (6 << 8)) /* "Constraint Error: ..." (UNIQUE) */

/* Column types of results and tables. */
typedef enum gqp_type {
    GQP_TYPE_NULL = 0, /* a result column whose every value is NULL */
    GQP_TYPE_INT32 = 1,
    GQP_TYPE_INT64 = 2,
    GQP_TYPE_FLOAT32 = 3,
    GQP_TYPE_FLOAT64 = 4,
    GQP_TYPE_DATE = 5, /* days since 1970-01-01 as int32 */
    GQP_TYPE_BOOL = 6, /* one byte, 0 or 1 */
    GQP_TYPE_STRING = 7,
    GQP_TYPE_DECIMAL = 8 /* int64 scaled by 10^gqp_column_scale() */
} gqp_type;

/* Where the nodes of a query run. */
typedef enum gqp_device {
    GQP_DEVICE_AUTO = 0, /* the cost model decides per node (CPU when no GPU) */
    GQP_DEVICE_CPU = 1,
    GQP_DEVICE_GPU = 2
} gqp_device;

typedef struct gqp gqp;           /* a database handle: catalog + settings */
typedef struct gqp_stmt gqp_stmt; /* one prepared statement */

/*
 * Open a database handle and load every table declared in the YAML config at
 * config_path (NULL: start with an empty catalog). On a load error the handle
 * is still returned in *out (tables that loaded are usable) together with
 * GQP_ERROR; read the message with gqp_errmsg(*out). Returns GQP_NOMEM with
 * *out NULL only if the handle itself could not be allocated. The caller
 * owns *out and releases it with gqp_close().
 *
 * A persistent database: when config_path names a directory, or a missing
 * path not ending in .yaml / .yml (created then, as sqlite3 and duckdb
 * create a missing database file), it is a database folder (docs/storage.md):
 * its tables, indexes and views are loaded (each column mapped on first
 * use), and every CREATE TABLE [AS], INSERT, UPDATE, DELETE, DROP TABLE,
 * CREATE / DROP INDEX and CREATE / DROP VIEW is written to it atomically
 * before the statement returns. The folder is locked while the handle is
 * open. On an error opening it nothing is loaded.
 */
int gqp_open(const char *config_path, gqp **out);

/*
 * Import into db, a database folder, the tables of the YAML config
 * `source` (path ending in .yaml / .yml; only the table named `table` when
 * not NULL), or the CSV / .tbl file `source` as table `table` (NULL: the
 * file's name without folder and extension) through CREATE TABLE ... AS
 * SELECT * FROM read_csv('source'). Each table is committed on its own;
 * a name that exists already is an error (nothing imported). progress
 * (may be NULL) receives a line per step. GQP_OK or an error code (message
 * in gqp_errmsg()).
 */
int gqp_import(gqp *db, const char *source, const char *table,
               void (*progress)(void *ud, const char *line), void *ud);

/* Release the handle, all its tables and device memory. Statements still
 * open are finalized. NULL is a no-op. Returns GQP_OK. No other thread may
 * use db or its statements during or after the call (as with sqlite3_close,
 * the caller orders it after their last use). */
int gqp_close(gqp *db);

/* The message of the last failed call on db (or one of its statements), in
 * English, stage-named ("Parser Error: ...", "Binder Error: ...",
 * "Catalog Error: ...", "Device Error: ..."), possibly several lines
 * ("LINE 1: ..." and a caret). Owned by db, valid until the next call on db.
 * Never NULL: "not an error" when there is none. */
const char *gqp_errmsg(gqp *db);

/* Byte offset into the SQL text that the last error refers to, or -1. */
int64_t gqp_error_offset(gqp *db);

/* The result code of the last failed call on db (or one of its
 * statements), the one whose message gqp_errmsg() returns: GQP_ERROR,
 * GQP_NOMEM, GQP_INTERRUPT, GQP_MISUSE, GQP_RANGE or GQP_DEVICE; GQP_OK
 * before any error. NULL db: GQP_NOMEM (as gqp_errmsg's "out of memory"). */
int gqp_errcode(gqp *db);
/* The same with GQP_ERROR refined by stage (GQP_ERROR_PARSER, ...; the low
 * 8 bits are gqp_errcode()). */
int gqp_extended_errcode(gqp *db);

/* Hold db's (recursive) mutex, as every gqp_* call on db does for its own
 * duration: to read gqp_errmsg() or a column's text without another
 * thread overwriting it, or to run several calls without other threads'
 * calls in between. Every gqp_lock() needs its gqp_unlock() on the same
 * thread. NULL is a no-op. */
void gqp_lock(gqp *db);
void gqp_unlock(gqp *db);

/* Ask the query running on db (in gqp_step(), gqp_explain() or an INSERT
 * ... SELECT) to stop: it stops at the next node boundary of its plan (and
 * within long CPU map nodes at the next morsel of 64K rows) and that call
 * returns GQP_INTERRUPT with the message "Interrupted"; the statement can
 * be stepped again. Safe to call from any thread, also while another
 * thread's call holds db; takes no lock and never blocks. As in SQLite, an
 * interrupt that arrives while no query runs is forgotten when the next
 * statement starts running. db must stay open during the call. */
void gqp_interrupt(gqp *db);

/* Choose where queries run (default GQP_DEVICE_AUTO). GQP_DEVICE_GPU without
 * a usable device returns GQP_ERROR with a message; a value that is not a
 * gqp_device returns GQP_MISUSE with a message; neither changes the
 * setting. */
int gqp_set_device(gqp *db, gqp_device device);

/* Number of worker threads for CPU primitives (0: all cores, the default;
 * negative: GQP_MISUSE). */
int gqp_set_threads(gqp *db, int nthreads);

/* 1 if a CUDA device is usable by this build and machine, else 0. */
int gqp_gpu_available(void);

/*
 * Compile the first statement of sql (nbytes < 0: up to the NUL). On success
 * *stmt is a statement the caller finalizes with gqp_finalize(); *stmt is
 * NULL when the text holds only whitespace/comments. *tail (if not NULL)
 * points just past the statement's ';' inside sql, for loops over a script.
 * DDL and DML (CREATE TABLE, INSERT) run when stepped, like queries.
 * EXPLAIN [ANALYZE] SELECT, SHOW TABLES, DESCRIBE and PRAGMA table_info
 * return rows like a query (columns known after prepare, rows built from
 * the catalog when stepped; docs/sql.md "Introspection").
 * The statement may hold bind parameters (see gqp_bind_int64); a query is
 * planned at prepare with every parameter NULL, so name and type errors
 * show here.
 */
int gqp_prepare(gqp *db, const char *sql, int64_t nbytes, gqp_stmt **stmt, const char **tail);

/*
 * Bind parameters, as in SQLite: "?" (the next index after the largest so
 * far), "?N" (index N, 1..32766), ":name", "$name" and "@name" (one index
 * per distinct name, the next free one at its first use) stand for values
 * anywhere a literal may stand. idx is 1-based. A bound value acts as a
 * literal of its type: gqp_bind_int64 as an integer literal, gqp_bind_double
 * as a real, gqp_bind_text as a string literal (compared as text; a DATE
 * column compares it as a date, as it does '2020-01-05'), gqp_bind_null and
 * an unbound parameter as NULL. gqp_bind_text copies the text (nbytes < 0:
 * up to the NUL; the value ends at the first NUL either way), so the caller
 * keeps ownership of text; NULL text binds NULL.
 *
 * Bindings are kept across gqp_reset() and cleared by gqp_clear_bindings().
 * Binding is allowed after prepare or gqp_reset() and before the first
 * gqp_step(); on a statement that has run and not been reset it returns
 * GQP_MISUSE. An index outside 1..gqp_bind_parameter_count() returns
 * GQP_RANGE. Both set db's message.
 *
 * Implementation: the first gqp_step() after the bindings changed writes
 * the values into the statement's parse tree and plans the query again
 * (bind, lower, place: about 4 us more per run for a small filtered
 * aggregate), so every run is planned with its values as constants
 * (constant folding, selectivity estimates and placement see them); a
 * gqp_reset() + gqp_step() without new bindings reuses the plan. Column
 * types (gqp_column_type) are those of the last plan: a "SELECT ?" column
 * has the type of "SELECT NULL" after prepare and the bound value's type
 * once stepped. A query whose planning refuses NULL where a parameter stands
 * (LIMIT ?) is checked at prepare with that parameter as 0.
 */
int gqp_bind_int64(gqp_stmt *stmt, int idx, int64_t value);
int gqp_bind_double(gqp_stmt *stmt, int idx, double value);
int gqp_bind_text(gqp_stmt *stmt, int idx, const char *text, int64_t nbytes);
int gqp_bind_null(gqp_stmt *stmt, int idx);
/* The largest parameter index in stmt (0 without parameters). */
int gqp_bind_parameter_count(gqp_stmt *stmt);
/* The index of the parameter named name as written, prefix included
 * (":x", "$x", "@x", "?3"), or 0 when there is none. */
int gqp_bind_parameter_index(gqp_stmt *stmt, const char *name);
/* The name of parameter idx as written (":x", "?3"), or NULL for a
 * nameless "?" or an index out of range; owned by stmt, valid until
 * gqp_finalize(). */
const char *gqp_bind_parameter_name(gqp_stmt *stmt, int idx);
/* Set every parameter of stmt to NULL (allowed at any time). GQP_OK. */
int gqp_clear_bindings(gqp_stmt *stmt);

/* Run the statement on its first call, then advance one row per call.
 * Returns GQP_ROW while a row is available, GQP_DONE at the end, or an error
 * code (message in gqp_errmsg()). */
int gqp_step(gqp_stmt *stmt);

/* Rewind a statement so the next gqp_step() runs it again (its bindings
 * stay; results read from it become invalid). */
int gqp_reset(gqp_stmt *stmt);

/* Release a statement. NULL is a no-op. Returns GQP_OK. */
int gqp_finalize(gqp_stmt *stmt);

/* Result shape; valid after prepare for queries (0 columns for DDL/DML). */
int gqp_column_count(gqp_stmt *stmt);
/* Column name as written (alias or expression text); owned by stmt, valid
 * until gqp_finalize(). */
const char *gqp_column_name(gqp_stmt *stmt, int col);
gqp_type gqp_column_type(gqp_stmt *stmt, int col);
/* Digits after the point of a GQP_TYPE_DECIMAL column (its int64 values
 * are the number times 10^scale); 0 for other types. */
int gqp_column_scale(gqp_stmt *stmt, int col);

/* Typed accessors for the current row (after gqp_step() returned GQP_ROW).
 * Conversions follow SQLite: int64 of a float truncates (saturating at the
 * int64 range; NaN gives 0), double of an int widens, text of a number is
 * its decimal form. A DECIMAL's double is its int64 / 10^scale, its int64
 * the number truncated, its text exactly `scale` digits after the point
 * ("-0.50"), as DuckDB prints it. */
int gqp_column_is_null(gqp_stmt *stmt, int col);
/* The type of the current row's value: the column's type, except
 * GQP_TYPE_NULL for a NULL and GQP_TYPE_FLOAT64 for a REAL in an INT64
 * column: where integer arithmetic overflowed, the value is the REAL that
 * SQLite computes (9223372036854775807 + 1 is 9.22337203685478e+18), and
 * the typed accessors give it as such (its text "9.22337203685478e+18",
 * its int64 truncated, saturating). */
gqp_type gqp_value_type(gqp_stmt *stmt, int col);
int64_t gqp_column_int64(gqp_stmt *stmt, int col);
double gqp_column_double(gqp_stmt *stmt, int col);
/* Text of the value (NULL for SQL NULL); owned by stmt, valid until the next
 * gqp_step(), gqp_reset() or gqp_finalize(). */
const char *gqp_column_text(gqp_stmt *stmt, int col);

/*
 * Direct column access to the whole result, after the first gqp_step():
 * number of rows, and a pointer to column col's values as a packed array of
 * its gqp_type (int32_t, int64_t, float, double, int32_t days, uint8_t bool,
 * int64_t scaled by 10^gqp_column_scale() for DECIMAL;
 * for GQP_TYPE_STRING an int32_t code per row, decoded with
 * gqp_result_string()). *valid (if not NULL) receives a byte-per-row
 * validity array (1 = value, 0 = NULL) or NULL when no value is NULL.
 * Everything is owned by stmt and valid until gqp_reset() or gqp_finalize().
 */
int64_t gqp_result_rows(gqp_stmt *stmt);
const void *gqp_result_column(gqp_stmt *stmt, int col, const uint8_t **valid);
/* The REAL rows of INT64 column col (see gqp_value_type): NULL when it has
 * none; else an array of doubles, one per row, the value where (*is)[row]
 * is 1 (gqp_result_column's int64 holds it truncated, saturating). Owned
 * by stmt, valid as gqp_result_column's arrays. */
const double *gqp_result_reals(gqp_stmt *stmt, int col, const uint8_t **is);
/* Text of string code `code` of string column col; owned by stmt. */
const char *gqp_result_string(gqp_stmt *stmt, int col, int32_t code);

/* Rows changed by the last INSERT stepped on this statement. */
int64_t gqp_changes(gqp_stmt *stmt);

/* Execution time of the last run of stmt in milliseconds (planning
 * excluded), for --timer. */
double gqp_exec_ms(gqp_stmt *stmt);
/* Peak device memory in bytes during the last run of stmt (the executor's
 * device pool: intermediates, plus columns the run brought to the GPU); 0
 * when the run used no GPU. */
int64_t gqp_peak_device_bytes(gqp_stmt *stmt);
/* Nodes of stmt's plan placed on the GPU when it last ran (or, before its
 * first run, when it was prepared); *nnodes (if not NULL) receives the
 * plan's node count. 0 for statements without a plan. */
int gqp_gpu_nodes(gqp_stmt *stmt, int *nnodes);

/* Whether column `column` of table `table` holds its data: 1 once read (a
 * column of a binary folder is mapped and read when a query first uses
 * it; columns of other sources are read at load), 0 for a binary column
 * no statement has used yet, -1 when there is no such table or column. */
int gqp_column_loaded(gqp *db, const char *table, const char *column);

/* Explain flags. */
#define GQP_EXPLAIN_ANALYZE 1 /* run the query and add measured figures */
#define GQP_EXPLAIN_JSON 2    /* JSON instead of a text tree */
#define GQP_EXPLAIN_DOT 4     /* Graphviz dot */

/*
 * Plan (and with GQP_EXPLAIN_ANALYZE run) the first statement of sql and
 * return its primitive DAG rendered as text in *out. The caller frees *out
 * with gqp_free(). Returns GQP_OK or an error code (message in gqp_errmsg()).
 */
int gqp_explain(gqp *db, const char *sql, int64_t nbytes, int flags, char **out);
/* The same for a prepared statement (a statement that has run is reset
 * first): for a query (or an EXPLAIN [ANALYZE] statement: its query), its
 * DAG in *out as gqp_explain gives it (with GQP_EXPLAIN_ANALYZE the query
 * runs); for any other statement *out is NULL and nothing happens (the
 * caller may step it). The caller frees *out
 * with gqp_free(). GQP_OK or an error code (message in gqp_errmsg()). */
int gqp_explain_stmt(gqp_stmt *stmt, int flags, char **out);

/*
 * Write the demo table `test` of seed 004 (id, uniformi, normali5,
 * normali20 INT32; uniformf, normalf5, normalf20 FLOAT32) with nrows rows,
 * deterministic for `seed`, as CSV into directory dir (created if missing)
 * together with dir/gqp.yaml declaring it. On error returns GQP_ERROR and,
 * if errmsg is not NULL, a message the caller frees with gqp_free().
 */
int gqp_gen_test(const char *dir, int64_t nrows, uint64_t seed, char **errmsg);

/*
 * Write the Star Schema Benchmark's five tables (lineorder, customer,
 * supplier, part, ddate) at scale factor sf (0 < sf <= 1000, fractional
 * allowed), deterministic for `seed`, into directory dir (created if
 * missing): <table>.tbl files, binary-column folders under dir/bin/,
 * dir/gqp.yaml declaring the tables from the binary folders and
 * dir/gqp-tbl.yaml declaring them from the .tbl files. On error returns
 * GQP_ERROR and, if errmsg is not NULL, a message the caller frees with
 * gqp_free(). flags: GQP_GEN_NO_FACT_TBL writes no lineorder.tbl and no
 * gqp-tbl.yaml (and removes old ones): the binary columns only for the
 * fact table (at SF 100 its .tbl is 57 GB).
 */
#define GQP_GEN_NO_FACT_TBL 1u
int gqp_gen_ssb(const char *dir, double sf, uint64_t seed, unsigned flags, char **errmsg);

/*
 * Load every table the config file config_path declares and write each as
 * a binary-column folder bin/<table>/ in the folder of out_config, together
 * with the config out_config declaring them (format binary: loaded without
 * parsing, as `gqp gen ssb`'s gqp.yaml); with append != 0, add their
 * entries to the end of out_config instead (one this function wrote).
 * `gqp gen tpch` uses it on each CSV file DuckDB's dbgen wrote. The tables
 * of config_path are held in memory at once. On error returns GQP_ERROR
 * and, if errmsg is not NULL, a message the caller frees with gqp_free().
 */
int gqp_config_to_binary(const char *config_path, const char *out_config, int append,
                         char **errmsg);

/*
 * Measure this machine for the cost model (`gqp calibrate`): time every
 * CPU primitive (and, with a GPU, every GPU primitive and the PCIe
 * transfers) at sizes from 1e3 to 1e7 rows, fit each primitive's constants
 * and write them with the raw measurements as YAML to out_path (NULL: the
 * user's cost file, see gqp_user_cost_path, found by later handles; or a
 * file to be named by a config's `device: cost_file:`). Takes tens
 * of seconds. On error returns GQP_ERROR (or GQP_DEVICE) and, if errmsg is
 * not NULL, a message the caller frees with gqp_free().
 */
int gqp_calibrate(const char *out_path, char **errmsg);
/* The same with nthreads CPU threads (0 = all cores) and sizes up to
 * max_rows (0 = 10,000,000). */
int gqp_calibrate_ex(const char *out_path, int nthreads, int64_t max_rows, char **errmsg);
/* A progress report: measurement `step` of about `nsteps` (nsteps grows if
 * the estimate was short) has finished; what names it ("cpu sort 1000000
 * rows ..."). */
typedef void (*gqp_progress_fn)(void *ud, int step, int nsteps, const char *what);
/* gqp_calibrate_ex with a progress callback (may be NULL; called on the
 * calling thread). out_path NULL: the user's cost file
 * (gqp_user_cost_path), which gqp_open then finds by itself. The folder of
 * the file is created if missing and checked writable before anything is
 * measured; the file appears complete (written under a temporary name,
 * then renamed) or not at all. A max_rows below 10,000,000 also bounds the
 * end-to-end query probe's table (quick, rougher calibrations). */
int gqp_calibrate_progress(const char *out_path, int nthreads, int64_t max_rows,
                           gqp_progress_fn progress, void *ud, char **errmsg);
/* The user's calibrated cost file into buf: $XDG_CONFIG_HOME/gqp/
 * cost-local.yaml (an absolute XDG_CONFIG_HOME), else
 * $HOME/.config/gqp/cost-local.yaml. GQP_OK, or GQP_ERROR when neither is
 * set (or it does not fit in cap). The cost model of a handle is, in this
 * order: $GQP_COST_FILE, else the config's `device: cost_file:` (either
 * one named but unreadable or malformed makes gqp_open fail naming it);
 * else this file, when it exists (and, on a machine with a GPU, was
 * calibrated with one); else the shipped file for the device
 * (configs/cost-h100.yaml, ... from $GQP_COST_DIR or the install prefix's
 * share/gqp); else built-in defaults. gqp_cost_model() says which. */
int gqp_user_cost_path(char *buf, size_t cap);

/* Where db's cost model came from: the cost file's path or "built-in ...
 * defaults". Owned by db, valid until gqp_close(). */
const char *gqp_cost_model(gqp *db);

/* Free memory that a gqp_* function documents as caller-owned. */
void gqp_free(void *p);

/* Library version string, static. */
const char *gqp_libversion(void);

#ifdef __cplusplus
}
#endif
#endif /* GQP_H */
