/*
 * internal.h -- libgqp's private structures: the database handle and the
 * prepared statement behind the opaque types of include/gqp.h.
 */
#ifndef GQP_LIBGQP_INTERNAL_H
#define GQP_LIBGQP_INTERNAL_H

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
    int reads;     /* capped at GQP_READS_CAP */
    uint64_t last; /* the query (db->nqueries) that counted it last */
} GqpColReads;

/* Reads counted per column: beyond this many, a copy's share (1/(1+reads))
 * barely changes, and the count stops (so plans stop being re-placed). */
#define GQP_READS_CAP 8

struct gqp {
    uint64_t version; /* bumped by every CREATE / INSERT: plans of older versions are stale */
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
    char cost_file[512];     /* config's device: cost_file ("" = by GPU name) */
    CostModel *cost;         /* loaded on first placement (query.c) */
    int test_gpu;            /* tests: 1 = place as if a GPU were present,
                                2 = and every table column resident on it */
    GqpColReads *reads;      /* columns read since the GPU cache was last reset */
    int nreads, cap_reads;
    uint64_t nqueries;    /* SELECTs executed */
    uint64_t reads_epoch; /* bumped whenever a count in `reads` changes */
};

struct gqp_stmt {
    uint64_t version;      /* db->version the plan was made against */
    int placed_device;     /* db->device the DAG was placed for (-1: not placed) */
    int64_t placed_epoch;  /* GPU column cache epoch it was placed at */
    uint64_t placed_reads; /* db->reads_epoch it was placed at */
    double est_us;         /* the placed plan's estimated time (cost model) */
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
};

int gqp_set_error(gqp *db, int rc, const char *fmt, ...);
int gqp_set_error_at(gqp *db, const char *sql, int64_t len, int64_t offset, const char *stage,
                     const char *msg);
void gqp_stmt_destroy(gqp_stmt *st);
int gqp_build_has_cuda(void);
/* The GPU session of db, opened on first use; NULL with db's error set. */
ExecDevice *gqp_device_session(gqp *db);

/* query.c */
int gqp_plan_select(gqp *db, gqp_stmt *st, const AstSelect *sel);
int gqp_run_select(gqp *db, gqp_stmt *st);
/* The session's cost model, loaded on first use (see cost_model_select);
 * never NULL unless out of memory. */
const CostModel *gqp_cost(gqp *db);
/* Forget the per-column read counts (the GPU column cache was reset). */
void gqp_forget_reads(gqp *db);
/* dml.c: CREATE TABLE, INSERT, SET, DROP */
int gqp_run_other(gqp *db, gqp_stmt *st);

#endif
