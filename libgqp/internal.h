/*
 * internal.h -- libgqp's private structures: the database handle and the
 * prepared statement behind the opaque types of include/gqp.h.
 */
#ifndef GQP_LIBGQP_INTERNAL_H
#define GQP_LIBGQP_INTERNAL_H

#include <pthread.h>

#include "gqp.h"
#include "catalog/catalog.h"
#include "cost/cost.h"
#include "executor/executor.h"
#include "operators/operators.h"
#include "planner/planner.h"
#include "sqlfront/sqlfront.h"

/* How many queries of the session read one table column (query.c). */
typedef struct GqpColReads {
    const void *data; /* the column's host data */
    int64_t n;
    size_t bytes;  /* of data: n values */
    int reads;     /* capped at GQP_READS_CAP */
    uint64_t last; /* the query (db->nqueries) that counted it last */
} GqpColReads;

/* Reads counted per column: beyond this many, a copy's share (1/(1+reads))
 * barely changes, and the count stops (so plans stop being re-placed). */
#define GQP_READS_CAP 8

/*
 * Threads (see "Threads" in gqp.h): every API entry point that touches a
 * handle or one of its statements holds the handle's recursive mutex `mu`
 * for the whole call (SQLite's serialized mode), so entry points may call
 * each other. The one field read without it is `interrupt`, written by
 * gqp_interrupt() from any thread and read with __atomic builtins.
 */
struct gqp {
    pthread_mutex_t mu; /* recursive; held by every entry point */
    int interrupt;      /* gqp_interrupt(): stop the running query (atomic) */
    int errcode;        /* extended code of the last error (gqp_extended_errcode) */
    uint64_t version;   /* bumped by every CREATE / INSERT: plans of older versions are stale */
    Catalog *cat;
    gqp_device device;
    int nthreads;
    int agg_mode; /* LowerAgg: SET aggregate = 'auto' | 'sort' | 'dense' */
    char errmsg[2048];
    int64_t err_offset;
    struct gqp_stmt *stmts;  /* open statements */
    ExecDevice *dev;         /* GPU session, opened on first GPU use */
    ExecHostPool *pool;      /* host intermediates, reused across queries */
    int64_t gpu_cache_bytes; /* config device: gpu_cache_bytes (0 = default) */
    /* memory_limit (config device: memory_limit, SET memory_limit): bytes,
     * or a share of device memory in percent; both 0: none */
    int64_t mem_limit_bytes;
    double mem_limit_pct;
    /* tests (GQP_FAIL_ALLOC=device:N, gqp_test_fail_alloc): the device
     * fault injection, armed again whenever the GPU session opens */
    int64_t fail_dev_at;
    int fail_dev_sticky;
    /* tests (GQP_OOM_FALLBACK=1): --device gpu recovers from a device
     * out-of-memory on the CPU twin as auto does, so that a test can put
     * every node on the GPU and still check every answer */
    int oom_fallback_gpu;
    char cost_file[512]; /* config's device: cost_file ("" = by GPU name) */
    CostModel *cost;     /* loaded on first placement (query.c) */
    int test_gpu;        /* tests: 1 = place as if a GPU were present,
                            2 = and every table column resident on it */
    GqpColReads *reads;  /* columns read since the GPU cache was last reset */
    int nreads, cap_reads;
    uint64_t nqueries;    /* SELECTs executed */
    uint64_t reads_epoch; /* bumped whenever a count in `reads` changes */
    /* views (subquery.c): name, the SELECT's text, optional column names */
    struct GqpView *views;
    int nviews;
    const struct GqpScope *scope; /* CTEs visible to the SELECT being planned */
    const struct GqpBusy *busy;   /* CTEs being materialized (circular references) */
    uint64_t ntemps;              /* temporary tables made so far (their names) */
    int no_inline;                /* materialize derived tables (see gqp_plan_select) */
    int arms_wrapped;             /* a compound's arms run into temporary tables first */
    int64_t chunk_rows; /* SET chunk_rows / GQP_CHUNK_ROWS: chunked execution (chunk.c), 0 off */
    struct GqpStore *store; /* a database directory (store.c), or NULL */
    /* SET chunk_cluster / GQP_CHUNK_CLUSTER: chunked runs may cut a table
     * through a copy in a join key's order (cluster.c): 0 'off', 1 'auto'
     * (under a device budget, not when chunk_rows forces chunks), 2 'on' */
    int chunk_cluster;
    struct GqpClusters *clusters; /* those copies (cluster.c) */
    /* SET mapped_columns / GQP_MAPPED: GPU nodes read table columns in
     * place from page-locked host memory (zero-copy) instead of copying
     * them into device memory: 0 'off', 1 'auto' (when the plan exceeds
     * the device budget and fits without those columns: chunk.c's
     * gqp_budget_plan), 2 'on' (every GPU source that can be) */
    int mapped;
};

typedef struct GqpView {
    char *name;
    char *sql; /* SELECT ... as written */
    char **cols;
    int ncols;
} GqpView;

/* A bound parameter value (gqp_bind_*). */
typedef struct GqpParam {
    int kind; /* 0 NULL, 1 int64, 2 double, 3 text */
    int64_t i;
    double f;
    char *s; /* kind 3: malloc'ed copy, NUL-terminated */
} GqpParam;

struct gqp_stmt {
    uint64_t version;        /* db->version the plan was made against */
    int placed_device;       /* db->device the DAG was placed for (-1: not placed) */
    int64_t placed_epoch;    /* GPU column cache epoch it was placed at */
    uint64_t placed_reads;   /* db->reads_epoch it was placed at */
    double est_us;           /* the placed plan's estimated time (cost model) */
    double est_cpu_us;       /* ... and that of every node on the CPU (0: unknown) */
    char budget_cpu[320];    /* the last run's plan went to the CPU for the device
                                budget: why (gqp_budget_plan); "" otherwise */
    char budget_mapped[320]; /* ... or reads columns mapped for it: what and why */
    /* the last gqp_plan_select's phases, ms: subqueries / derived tables run
     * first (gqp_materialize), bind, lower to the DAG, place */
    double prep_ms[4];
    gqp *db;
    struct gqp_stmt *next;
    const char *sql; /* copy of the statement's text (plan arena) */
    int64_t sql_len;
    SqlArena *parse_arena;
    PlanArena *plan_arena;
    AstStmt *ast;
    BSelect *bound;
    Dag *dag;
    ExecResult res;
    int ran;
    int64_t cursor;
    int64_t changes;
    double exec_ms;
    ExecStats stats;
    int profile; /* EXPLAIN ANALYZE: time every GPU node with events */
    char text[64];
    /* bind parameters (gqp_bind_*): values by index - 1; each run that
     * finds bind_gen != planned_gen rewrites the AST's parameter nodes into
     * these constants and plans again */
    GqpParam *params;
    uint64_t bind_gen, planned_gen;
    /* derived tables, CTEs and views of the last plan, materialized into
     * catalog tables (subquery.c); dropped on re-plan and on finalize */
    char **temps;
    int ntemps;
    char *mat_explain; /* EXPLAIN text of their plans (malloc'ed) or NULL */
    char *chunk_note;  /* EXPLAIN text of the last chunked run (chunk.c) or NULL */
    int chunk_mapped;  /* the budget's chunks read mapped the columns that every
                          chunk reads whole (gqp_budget_plan; EXPLAIN says
                          GQP_CHUNK_MAPPED_TEXT) */
    int chunk_reals;   /* a chunk's partial result held REALs from an integer overflow
                          (a parts table cannot): the last chunked run stopped */
    /* files read by this plan (files.c): each once per statement, in a
     * temporary table listed in temps; a child statement (a subquery or a
     * view run while planning) uses its root's */
    struct gqp_stmt *parent;
    struct GqpFile *files;
    int nfiles;
};

/* query.c, for plans libgqp makes itself (chunk.c): lower b into dag as
 * gqp_plan_select does (GQP_OK, or db's error at the SQL text); place dag;
 * run dag, opening the GPU session when a node is placed there (GQP_OK,
 * or db's error: GQP_DEVICE for a device error); the monotonic clock. */
int gqp_lower_dag(gqp *db, gqp_stmt *st, const BSelect *b, Dag *dag);
void gqp_place_dag(gqp *db, Dag *dag);
int gqp_exec_dag(gqp *db, Dag *dag, const ExecOptions *opt, ExecResult *res, ExecStats *stats);
/* GQP_OK, or a Not implemented error when a column of res holds REALs
 * that an integer overflow gave (SQLite's switch to REAL, which only a
 * statement's own result rows carry so far) and res is to become `what`
 * (a table's rows, a subquery's value, ...). */
int gqp_no_reals(gqp *db, const ExecResult *res, const char *what);
double gqp_wall_ms(void);
/* cluster.c: copies of a table's rows in the order of one integer key
 * column, for chunked runs (chunk.c). gqp_cluster_ok: t's column col can
 * order one (an integer key without NULLs, t not a chunk's slice).
 * gqp_cluster_open: the copy of t in column key's order in *copy, made
 * (the permutation and the key column) unless db keeps it; its other
 * columns are empty (data NULL) until gqp_cluster_fill. 0, or a gqp error
 * code with db's message set. gqp_cluster_wanted: count one more chunked
 * plan asking for (t, key); the count so far (1 when not made yet), and
 * in *made whether db holds the copy. gqp_cluster_forget: t changes or
 * goes (its copies are dropped). */
int gqp_cluster_ok(CatTable *t, int col);
/* chunk_cluster's (and mapped_columns') value for "off" / "auto" / "on" (0 / 1 / 2); -1 else. */
int gqp_chunk_cluster_mode(const char *s);
/* SET device / GQP_DEVICE: "cpu", "gpu", "auto" (any case) as gqp_device,
 * -1 otherwise; SET aggregate / GQP_AGGREGATE: "auto", "sort", "dense" as
 * LowerAgg, -1 otherwise. */
int gqp_device_mode(const char *s);
int gqp_agg_mode(const char *s);
int gqp_cluster_open(gqp *db, CatTable *t, int key, CatTable **copy);
int gqp_cluster_fill(gqp *db, CatTable *copy, int col);
/* The run that opened copy is done with it (it may be dropped again). */
void gqp_cluster_close(gqp *db, CatTable *copy);
int64_t gqp_cluster_wanted(gqp *db, const CatTable *t, int key, int *made);
void gqp_cluster_forget(gqp *db, const CatTable *t);
void gqp_cluster_free_all(gqp *db);
/* Host bytes db's copies hold (their permutations and gathered columns),
 * and how many copies in *ncopies (tests; cluster.c caps the bytes). */
size_t gqp_cluster_bytes(gqp *db, int *ncopies);
/* chunk.c: the relation of b that chunked execution would cut into
 * chunks of chunk_rows rows (the largest base table it can), or -1 with
 * *why saying what prevents it. From GQP_CHUNK_IN_SUB on: relation
 * f - GQP_CHUNK_IN_SUB of the derived table that is b's only relation
 * (a plain select-project-join block, or one grouped by a key of its
 * largest table: with copies, also a key that is not sorted, through a
 * key-ordered copy); gqp_chunk_rel gives either. */
#define GQP_CHUNK_IN_SUB 4096
int gqp_chunk_table(const BSelect *b, int64_t chunk_rows, int copies, const char **why);
const BRel *gqp_chunk_rel(const BSelect *b, int f);
/* The tables cut with relation f's chunks by key range (chunk.c's
 * co-sliced relations; copies: through key-ordered copies where a key is
 * not sorted, cluster.c): their number, and in buf (cap bytes) text for
 * EXPLAIN ("; with it orders by o_orderkey"), empty when none. */
int gqp_chunk_cosliced(const BSelect *b, int f, int copies, char *buf, size_t cap);
/* Run st's SELECT with relation f in chunks of chunk_rows rows into
 * st->res (st->stats, st->exec_ms, st->chunk_note set); copies: tables
 * may be cut through key-ordered copies (cluster.c). */
int gqp_run_chunked(gqp *db, gqp_stmt *st, int f, int64_t chunk_rows, const ExecOptions *opt,
                    int copies);
/* When db->chunk_rows forces chunks and st's SELECT allows them: run it
 * so (*handled = 1) and return its code; else *handled = 0. */
int gqp_run_select_chunked(gqp *db, gqp_stmt *st, const ExecOptions *opt, int *handled);
/* The most bytes dag's values are estimated to hold at once as its nodes
 * run in order (each freed after its last reader; results to the end),
 * with the running node's scratch (a GPU join's or reduction's): with
 * gpu_only, only device copies (a GPU node's outputs not read mapped,
 * and the inputs a GPU node copies across); else every value. -1 when
 * out of memory. */
double gqp_plan_peak_bytes(const Dag *dag, int gpu_only);
/* Chunk rows for a plan estimated to need `need` device bytes under a
 * budget of `budget` bytes over a table of `rows` rows, at least min_rows
 * (at least 1); 0: run whole. */
int64_t gqp_chunk_rows_for_budget(double need, double budget, int64_t rows, int64_t min_rows);
/* What a memory_limit makes of st's placed plan, as gqp_run_select_chunked
 * decides it: WHOLE, the GPU nodes' estimated outputs fit the budget (or
 * no limit, no GPU node): run as placed; CHUNKS: run in chunks of *rows
 * rows of relation *f; CPU (--device auto only): every node on the CPU,
 * *why (cap bytes) says why: the plan cannot be chunked, or its chunks
 * would not fit beside what each reads whole, or the CPU plan's estimate
 * beats the chunked one's (st->est_cpu_us against st->est_us plus F's
 * pinned copy plus a fixed cost per chunk). */
typedef enum { GQP_BUDGET_WHOLE, GQP_BUDGET_CHUNKS, GQP_BUDGET_CPU } GqpBudget;
/* EXPLAIN's words for st->chunk_mapped, after the chunks' line */
#define GQP_CHUNK_MAPPED_TEXT "; what every chunk reads whole is read mapped"
/* (WHOLE also when the plan fits the budget once the columns its GPU nodes
 * only stream are read mapped: those source nodes get DagNode.mapped, and
 * st->budget_mapped says which and why.) */
GqpBudget gqp_budget_plan(gqp *db, gqp_stmt *st, int *f, int64_t *rows, char *why, size_t cap);
/* Every node of st's DAG on the CPU, each giving why as its reason (kept
 * in st->budget_cpu too); the statement is placed again at its next run. */
void gqp_place_all_cpu(gqp_stmt *st, const char *why);
/* gqp_budget_plan, with its CPU placement applied (gqp_place_all_cpu):
 * what a run (or EXPLAIN of one) does with st's plan. */
GqpBudget gqp_budget_apply(gqp *db, gqp_stmt *st, int *f, int64_t *rows);
/* After a device out-of-memory under --device gpu (db's message): run
 * st's SELECT again in chunks, smaller until it fits; GQP_ERROR (message
 * kept) when it cannot be chunked. */
int gqp_retry_chunked(gqp *db, gqp_stmt *st, const ExecOptions *opt);
/* Mark the GPU source nodes of dag to be read mapped (DagNode.mapped):
 * with all, every one (SET mapped_columns = 'on'), else only those whose
 * every consumer streams the column (gqp_budget_plan); 1 for a column of
 * a catalog table (its host range may be page-locked for it), 2 for any
 * other (a chunk's slice: only inside a range locked already). Returns
 * the estimated bytes marked. clear: unmark every node instead. */
double gqp_mark_mapped(gqp *db, Dag *dag, int all, int clear);

/* files.c: load the file that sel->from[i] names (read_csv(...) or
 * 'f.csv') into a temporary table of st's root statement, or find it
 * loaded there already (same path, file identity, size, modification time
 * and options); set its bound_name, and its alias when none was written
 * (its name, made unique in that FROM list: read_csv, read_csv_1, ...).
 * GQP_OK, or an error with db's message naming the stage, the file and
 * (for a bad row) its line. */
int gqp_load_file(gqp *db, gqp_stmt *st, AstSelect *sel, int i);
/* Forget st's file cache entries (its temporary tables are dropped by
 * gqp_drop_temps, which calls this). */
void gqp_files_forget(gqp_stmt *st);
/* Append text s to st's EXPLAIN note (printed before the plan). */
void gqp_explain_note(gqp_stmt *st, const char *s);

/* Materialize every derived table, CTE and view named in sel's FROM (and
 * its compound arms) into temporary catalog tables owned by st, setting
 * each reference's bound_name. GQP_OK or an error with db's message. */
int gqp_materialize(gqp *db, gqp_stmt *st, AstSelect *sel);
/* The CTEs a SELECT being planned may name: with[0..nvisible) of one WITH
 * (as in SQLite, a CTE may name any other of its WITH), then the enclosing
 * scopes'. */
typedef struct GqpScope {
    const AstCte *with;
    int nvisible;
    const struct GqpScope *parent;
} GqpScope;
/* 1 when column reference c names a column of a table in s's FROM (or its
 * compound arms), as far as the catalog knows them now. */
int gqp_resolves_in(gqp *db, const AstSelect *s, const AstExpr *c);
/* 1 when FROM entry r (a table, a materialized or an inline derived table)
 * has a column named name. */
int gqp_entry_has(gqp *db, const AstTableRef *r, const char *name);
/* The item of FROM entry r's derived table (not materialized: planned
 * inline) that makes its output column named name (by its column list,
 * else the first core's items by alias or column name; a * is not looked
 * into), or -1. */
int gqp_derived_item(const AstTableRef *r, const char *name);
/* Every core of compound sel (its first and its arms) becomes SELECT *
 * FROM (<the core>) run into a temporary table first: a column of text
 * made when an arm runs then has a dictionary the compound can unify.
 * GQP_OK or GQP_NOMEM. */
int gqp_wrap_arms(gqp *db, gqp_stmt *st, AstSelect *sel);
/* decorrelate.c: rewrite the correlated subqueries of sel's WHERE that it
 * can into joins with derived tables, appended to sel's FROM (*nadded of
 * them, not yet materialized). GQP_OK, or GQP_NOMEM with db's message. */
int gqp_decorrelate(gqp *db, gqp_stmt *st, AstSelect *sel, const GqpScope *sc, int *nadded);
/* Prepare the references of s's FROM with the CTEs of sc: derived tables
 * and CTEs for inline planning, views and files into temporary tables
 * (subquery.c's materialize_from). GQP_OK or an error. */
int gqp_materialize_from(gqp *db, gqp_stmt *st, AstSelect *s, const GqpScope *sc);
/* Drop st's temporary tables (and forget its materialized plans' text). */
void gqp_drop_temps(gqp *db, gqp_stmt *st);
/* CREATE VIEW / DROP VIEW. */
int gqp_run_view(gqp *db, gqp_stmt *st);
/* 1 when db has a view named name. */
int gqp_is_view(gqp *db, const char *name);
/* Free every view of db. */
void gqp_free_views(gqp *db);
/* Create table `name` from res (column names: colnames when given, else
 * result_names, a repeated name getting ":1", ... as in SQLite) and insert
 * its rows; on error the table does not exist. */
int gqp_table_from_result(gqp *db, const ExecResult *res, char *const *result_names,
                          const char *name, char *const *colnames, int ncolnames);
/* Drop table t's columns from the GPU cache and the read counts. */
void gqp_forget_table(gqp *db, const CatTable *t);

/* Take / release db's recursive mutex (the public gqp_lock/gqp_unlock). */
void gqp_enter(gqp *db);
void gqp_leave(gqp *db);
/* 1 if gqp_interrupt() was called on db since its running query began. */
int gqp_interrupted(gqp *db);
/* Plan st's SELECT again in a fresh plan arena (bindings or tables
 * changed): the parameters' values are written into the AST first
 * (gqp_apply_params). GQP_OK or an error code with db's message set. */
int gqp_replan(gqp *db, gqp_stmt *st);
/* Write st's bound values (NULL where unbound) into its AST's parameter
 * nodes, as literals, and mark the bindings planned (planned_gen). */
void gqp_apply_params(gqp_stmt *st);
int gqp_set_error(gqp *db, int rc, const char *fmt, ...);
int gqp_set_error_at(gqp *db, const char *sql, int64_t len, int64_t offset, const char *stage,
                     const char *msg);
void gqp_stmt_destroy(gqp_stmt *st);
int gqp_build_has_cuda(void);
/* The GPU session of db, opened on first use; NULL with db's error set. */
ExecDevice *gqp_device_session(gqp *db);
/* Tests: from now, the n-th host (device = 0: the executor's host pool) or
 * device (device = 1: every executor device allocation) allocation fails,
 * and every later one too when sticky; n <= 0 disarms. The environment's
 * GQP_FAIL_ALLOC=host:N|device:N[+] does the same when the handle opens. */
void gqp_test_fail_alloc(gqp *db, int device, int64_t n, int sticky);
/* Tests: host or device allocations counted since the last
 * gqp_test_fail_alloc (0 for the device without a GPU session). */
int64_t gqp_test_alloc_count(gqp *db, int device);
/* Apply `SET memory_limit = txt` (or the config's value): GQP_OK, or
 * GQP_ERROR with db's message naming the accepted forms. */
int gqp_set_memory_limit(gqp *db, const char *txt);

/* query.c */
int gqp_plan_select(gqp *db, gqp_stmt *st, const AstSelect *sel);
int gqp_run_select(gqp *db, gqp_stmt *st);
/* The session's cost model, loaded on first use (see cost_model_select);
 * never NULL unless out of memory. */
const CostModel *gqp_cost(gqp *db);
/* Forget the per-column read counts (the GPU column cache was reset). */
void gqp_forget_reads(gqp *db);
/* gqp_explain_stmt of a prepared SELECT, db locked: its plan's text (or
 * JSON / dot by flags) in *out (malloc'ed), run first with
 * GQP_EXPLAIN_ANALYZE. GQP_OK or an error code with db's message. */
int gqp_explain_stmt_locked(gqp *db, gqp_stmt *st, int flags, char **out);
/* introspect.c: EXPLAIN, SHOW TABLES, DESCRIBE, PRAGMA as statements. 1
 * when kind is one of them. */
int gqp_is_introspect(int kind);
/* At prepare: st's result columns (a Dag without nodes that names and
 * types them). GQP_OK or an error with db's message. */
int gqp_introspect_prepare(gqp *db, gqp_stmt *st);
/* At the first step: the rows, built on the host into st->res. */
int gqp_introspect_run(gqp *db, gqp_stmt *st);
/* Bind to `to` the values bound to `from` (index by index, as many as
 * both have): EXPLAIN / DESCRIBE pass theirs to the SELECT they prepare
 * from their own text, whose parameters are numbered alike. */
int gqp_copy_bindings(gqp_stmt *from, gqp_stmt *to);
/* dml.c: CREATE TABLE, INSERT, SET, DROP */
int gqp_run_other(gqp *db, gqp_stmt *st);

/* store.c: a database directory. 1 when gqp_open's path names one: an
 * existing folder, or a missing path not ending in .yaml / .yml. */
int gqp_store_wants(const char *path);
/* Open (creating it when missing) the database directory dir into db's
 * empty catalog: GQP_OK, or an error with db's message naming the stage
 * and file, db's catalog then empty. */
int gqp_store_open(gqp *db, const char *dir);
/* Release db's store (its lock); a no-op without one. */
void gqp_store_close(gqp *db);
/* After statement st succeeded in memory: make its change durable in db's
 * store (atomically) when it changed a stored table, index or view.
 * GQP_OK, or an error after which memory again matches the store. */
int gqp_store_after(gqp *db, gqp_stmt *st);

#endif
