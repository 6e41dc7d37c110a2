/*
 * query.c -- libgqp's query path: bind + rewrite (planner), lower
 * (operators), place, execute (executor), and EXPLAIN.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libgqp/internal.h"

int gqp_build_has_cuda(void) {
#ifdef GQP_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

ExecDevice *gqp_device_session(gqp *db) {
    if (db->dev) return db->dev;
    char err[512];
    db->dev = exec_device_open((size_t)db->gpu_cache_bytes, err, sizeof err);
    if (!db->dev)
        gqp_set_error(db, GQP_DEVICE, "%s", err);
    else {
        exec_pool_set_pinned(db->pool, 1);
        exec_device_set_limit(db->dev, (size_t)db->mem_limit_bytes, db->mem_limit_pct);
        exec_device_fail_at(db->dev, db->fail_dev_at, db->fail_dev_sticky);
        const CostModel *m = gqp_cost(db);
        if (m) exec_device_set_lock_min(db->dev, cost_lock_min_bytes(m));
    }
    return db->dev;
}

const CostModel *gqp_cost(gqp *db) {
    if (db->cost) return db->cost;
    db->cost = malloc(sizeof(CostModel));
    if (!db->cost) return NULL;
    char gname[256] = "", err[200];
    if (prim_gpu_available()) prim_gpu_describe(gname, sizeof gname);
    if (cost_model_select(db->cost, db->cost_file, gname, err, sizeof err) != 0)
        snprintf(db->cost->source, sizeof db->cost->source, "built-in %s defaults (%s)",
                 db->cost->name, err);
    return db->cost;
}

/* Optimizer callback: 1 if column `column` of t is in the GPU session's
 * column cache (ud: the gqp handle). */
static int col_resident(void *ud, const CatTable *t, int column) {
    gqp *db = ud;
    if (db->test_gpu == 2) return 1;
    return exec_device_resident(db->dev, t->cols[column].data, t->nrows);
}

/* Optimizer callback: 1 if dictionary d's bytes and offsets are in the
 * GPU session's cache (DN_DICTLIKE's copy; ud: the gqp handle). */
static int dict_resident(void *ud, const CatDict *d) {
    gqp *db = ud;
    if (db->test_gpu == 2) return 1;
    return exec_device_resident(db->dev, d->bytes, d->offsets[d->n]) &&
           exec_device_resident(db->dev, d->offsets, d->n + 1);
}

/* Optimizer callback: 1 if column `column` of t lies in host memory the
 * GPU session keeps page-locked (a table streamed in chunks, ud: the gqp
 * handle). */
static int col_locked(void *ud, const CatTable *t, int column) {
    gqp *db = ud;
    const CatColumn *c = &t->cols[column];
    return c->data &&
           exec_device_locked(db->dev, c->data, (size_t)t->nrows * cat_type_width(c->type));
}

/* The column's entry in db->reads, or NULL. */
static GqpColReads *reads_find(gqp *db, const void *data, int64_t n) {
    for (int i = 0; i < db->nreads; i++)
        if (db->reads[i].data == data && db->reads[i].n == n) return &db->reads[i];
    return NULL;
}

/* Optimizer callback: how many earlier queries read column `column` of t
 * since the GPU cache was last reset (ud: the gqp handle). A chunk's slice
 * counts its table's column: the reads that make a column worth copying
 * make its chunks worth copying (their page locks stay, as the copy
 * would). */
static int col_reads(void *ud, const CatTable *t, int column) {
    gqp *db = ud;
    const CatColumn *c = &t->cols[column];
    if (!c->data) return 0;
    const char *p = c->data;
    size_t b = (size_t)t->nrows * cat_type_width(c->type);
    for (int i = 0; i < db->nreads; i++) {
        const char *q = db->reads[i].data;
        if (q && p >= q && p + b <= q + db->reads[i].bytes) return db->reads[i].reads;
    }
    return 0;
}

/* Count one read of every table column dag reads (once per query). */
static void count_reads(gqp *db, const Dag *dag) {
    db->nqueries++;
    for (int i = 0; i < dag->nnodes; i++) {
        const DagNode *nd = &dag->nodes[i];
        if (nd->kind != DN_SOURCE || !nd->table) continue;
        const void *data = nd->table->cols[nd->column].data;
        GqpColReads *r = reads_find(db, data, nd->table->nrows);
        if (!r) {
            if (db->nreads == db->cap_reads) {
                int nc = db->cap_reads ? 2 * db->cap_reads : 16;
                GqpColReads *g = realloc(db->reads, sizeof *g * (size_t)nc);
                if (!g) return; /* only a pricing hint is lost */
                db->reads = g;
                db->cap_reads = nc;
            }
            r = &db->reads[db->nreads++];
            size_t b = (size_t)nd->table->nrows * cat_type_width(nd->table->cols[nd->column].type);
            *r = (GqpColReads){data, nd->table->nrows, b, 0, 0};
        }
        if (r->last == db->nqueries || r->reads >= GQP_READS_CAP) continue;
        r->last = db->nqueries;
        r->reads++;
        db->reads_epoch++;
    }
}

void gqp_forget_reads(gqp *db) {
    if (db->nreads) db->reads_epoch++;
    db->nreads = 0;
}

/* Place every node. --device cpu|gpu forces one side; auto lets the cost
 * model decide per node (cost/place.c; everything on the CPU without a
 * GPU). The old uniform placement remains the fallback when the
 * optimizer cannot run (out of memory). Returns the plan's estimated
 * microseconds (0 for the fallback). */
static double place(gqp *db, Dag *dag, double *all_cpu_us) {
    CostInputs in;
    memset(&in, 0, sizeof in);
    in.gpu_available = prim_gpu_available() || db->test_gpu;
    in.resident = col_resident;
    in.dict_resident = dict_resident;
    in.resident_ud = db;
    in.reads = col_reads;
    in.locked = col_locked;
    in.host_pinned = in.gpu_available;             /* the host pool pins once a GPU is used */
    in.pin_max_bytes = (double)EXEC_PIN_MAX_BYTES; /* ...up to this size */
    in.pin_min_bytes = (double)EXEC_PIN_MIN_BYTES; /* ...from this size */
    in.force = db->device == GQP_DEVICE_CPU ? 1 : db->device == GQP_DEVICE_GPU ? 2 : 0;
    in.mixed_margin = 0.8; /* see cost/place.c: mixed plans must clearly win */
    const CostModel *m = gqp_cost(db);
    /* TUNING: and by two GPU query overheads: on the H100, plans that sent
     * a single 5,000-row sort to the GPU were estimated 0.05 ms cheaper
     * than the CPU plan and measured 0.05 ms dearer (gpu_query_us 27 us) */
    if (m) in.mixed_min_us = 2 * m->gpu_query_us;
    char err[256];
    CostPlan pl;
    if (all_cpu_us) *all_cpu_us = 0;
    if (m && cost_place(dag, m, &in, &pl, err, sizeof err) == 0) {
        if (all_cpu_us) *all_cpu_us = pl.all_cpu_us;
        return pl.total_us;
    }
    DagDevice d = DEV_CPU;
    if (db->device == GQP_DEVICE_GPU || (db->device == GQP_DEVICE_AUTO && prim_gpu_available()))
        d = DEV_GPU;
    for (int i = 0; i < dag->nnodes; i++)
        dag->nodes[i].device = plan_node_cpu_only(&dag->nodes[i]) ? DEV_CPU : d;
    return 0;
}

void gqp_place_dag(gqp *db, Dag *dag) {
    place(db, dag, NULL);
}

/* Place st's DAG and record what the placement priced (gqp_run_select
 * places again when any of it changes). */
static void place_stmt(gqp *db, gqp_stmt *st) {
    st->est_us = place(db, st->dag, &st->est_cpu_us);
    st->placed_device = (int)db->device;
    st->placed_epoch = exec_device_epoch(db->dev);
    st->placed_reads = db->reads_epoch;
}

/* The lowering's question to the cost model: the estimated time of the
 * sort or the dense plan of an aggregation (ud: the gqp handle). */
static double agg_cost(void *ud, int dense, const PlanAggShape *s) {
    gqp *db = ud;
    const CostModel *m = gqp_cost(db);
    if (!m) return dense ? 0 : 1;
    int gpu = db->device != GQP_DEVICE_CPU && (prim_gpu_available() || db->test_gpu);
    return cost_agg_plan_us(m, dense, s, gpu);
}

int gqp_lower_dag(gqp *db, gqp_stmt *st, const BSelect *b, Dag *dag) {
    PlanError perr;
    memset(&perr, 0, sizeof perr);
    LowerOpts opts = {(LowerAgg)db->agg_mode, agg_cost, db};
    if (op_lower_select(b, &opts, dag, &perr) != 0)
        return gqp_set_error_at(db, st->sql, st->sql_len, perr.offset, perr.stage, perr.msg);
    return GQP_OK;
}

/* Bind and lower sel into st->dag. The SQL text must still be valid. */
int gqp_plan_select(gqp *db, gqp_stmt *st, const AstSelect *sel) {
    PlanError perr;
    memset(&perr, 0, sizeof perr);
    gqp_drop_temps(db, st);
    double t0 = gqp_wall_ms();
    int mrc = gqp_materialize(db, st, (AstSelect *)sel);
    if (mrc != GQP_OK) return mrc;
    double t1 = gqp_wall_ms();
    if (plan_bind_select(db->cat, st->sql, sel, st->plan_arena, &st->bound, &perr) != 0) {
        int arms = strcmp(perr.stage, "MaterializeArms") == 0;
        if (arms && !db->arms_wrapped && sel->ncompound > 0) {
            /* a compound column of text made when an arm runs: every arm
             * into a temporary table first (once; the AST is changed for
             * good, so a second try of this statement starts from there) */
            db->arms_wrapped = 1;
            int rc = gqp_wrap_arms(db, st, (AstSelect *)sel);
            if (rc == GQP_OK) rc = gqp_plan_select(db, st, sel);
            db->arms_wrapped = 0;
            return rc;
        }
        if ((arms || strcmp(perr.stage, "Materialize") == 0) && !db->no_inline) {
            /* a derived table the binder cannot plan inline (or whose
             * compound needs its arms run first): run every derived table
             * into a temporary table instead, each planning its own */
            db->no_inline = 1;
            int rc = gqp_plan_select(db, st, sel);
            db->no_inline = 0;
            return rc;
        }
        if (arms) snprintf(perr.stage, sizeof perr.stage, "Not implemented");
        return gqp_set_error_at(db, st->sql, st->sql_len, perr.offset, perr.stage, perr.msg);
    }
    double t2 = gqp_wall_ms();
    st->dag = plan_dag_new(st->plan_arena);
    if (!st->dag) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    int lrc = gqp_lower_dag(db, st, st->bound, st->dag);
    if (lrc != GQP_OK) return lrc;
    double t3 = gqp_wall_ms();
    place_stmt(db, st);
    st->version = db->version;
    st->prep_ms[0] = t1 - t0;
    st->prep_ms[1] = t2 - t1;
    st->prep_ms[2] = t3 - t2;
    st->prep_ms[3] = gqp_wall_ms() - t3;
    return GQP_OK;
}

double gqp_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int gqp_exec_dag(gqp *db, Dag *dag, const ExecOptions *opt0, ExecResult *res, ExecStats *stats) {
    ExecOptions opt = *opt0;
    int any_gpu = 0;
    for (int i = 0; i < dag->nnodes; i++)
        any_gpu |= dag->nodes[i].device == DEV_GPU;
    if (any_gpu && !(opt.dev = gqp_device_session(db))) return GQP_DEVICE;
    if (any_gpu && db->mapped == 2) gqp_mark_mapped(db, dag, 1, 0);
    char err[1024];
    if (exec_run(dag, &opt, res, stats, err, sizeof err) != 0) {
        if (gqp_interrupted(db)) return gqp_set_error(db, GQP_INTERRUPT, "Interrupted");
        return gqp_set_error(db, strncmp(err, "Device", 6) == 0 ? GQP_DEVICE : GQP_ERROR, "%s",
                             err);
    }
    return GQP_OK;
}

int gqp_no_reals(gqp *db, const ExecResult *res, const char *what) {
    for (int c = 0; c < res->ncols; c++)
        if (res->cols[c].re.is)
            return gqp_set_error(db, GQP_ERROR,
                                 "Not implemented Error: integer overflow: SQLite's REAL result "
                                 "(column %d) used for %s",
                                 c + 1, what);
    return GQP_OK;
}

/* gqp_run_select, with memo (the run's LIKE tables over dictionaries,
 * shared by every DAG it runs: its chunks, a retry). */
static int run_select_memo(gqp *db, gqp_stmt *st, ExecLikeMemo *memo) {
    ExecOptions opt = {db->nthreads, NULL, db->pool, 0, st->profile, &db->interrupt, 0, memo};
    /* auto: a GPU node that runs out of device memory runs on its CPU twin */
    opt.oom_cpu_fallback = db->device == GQP_DEVICE_AUTO || db->oom_fallback_gpu;
    /* place again only if what the placement priced has changed since
     * prepare: the device setting, which columns are resident, or how
     * often the columns were read */
    if (st->placed_device != (int)db->device || st->placed_epoch != exec_device_epoch(db->dev) ||
        st->placed_reads != db->reads_epoch) {
        place_stmt(db, st);
    }
    free(st->chunk_note);
    st->chunk_note = NULL;
    st->budget_cpu[0] = 0;
    st->budget_mapped[0] = 0;
    st->chunk_mapped = 0;
    gqp_mark_mapped(db, st->dag, 0, 1);
    int keep = db->mapped, rc;
    double t0;
    for (int pass = 0;; pass++) {
        int handled = 0, crc = gqp_run_select_chunked(db, st, &opt, &handled);
        if (handled) {
            db->mapped = keep;
            if (crc == GQP_OK) count_reads(db, st->dag);
            return crc;
        }
        exec_result_free(&st->res);
        t0 = gqp_wall_ms();
        rc = gqp_exec_dag(db, st->dag, &opt, &st->res, &st->stats);
        /* the plan did not fit beside its mapped columns after all (a
         * kernel's scratch memory is not in the estimates): once more as
         * it would run without mapped reads, in chunks */
        if (pass > 0 || rc != GQP_DEVICE || !st->budget_mapped[0] ||
            !strstr(db->errmsg, "out of device memory"))
            break;
        db->mapped = 0;
    }
    db->mapped = keep;
    /* --device gpu: a plan that does not fit runs again in chunks */
    if (rc == GQP_DEVICE && gqp_retry_chunked(db, st, &opt) == GQP_OK)
        rc = GQP_OK;
    else if (rc != GQP_OK)
        return rc;
    else
        st->exec_ms = gqp_wall_ms() - t0;
    count_reads(db, st->dag);
    return GQP_OK;
}

int gqp_run_select(gqp *db, gqp_stmt *st) {
    ExecLikeMemo memo;
    memset(&memo, 0, sizeof memo);
    int rc = run_select_memo(db, st, &memo);
    exec_like_memo_free(&memo);
    return rc;
}

/* gqp_explain with db locked. */
static int explain_locked(gqp *db, const char *sql, int64_t nbytes, int flags, char **out) {
    *out = NULL;
    gqp_stmt *st;
    int rc = gqp_prepare(db, sql, nbytes, &st, NULL);
    if (rc != GQP_OK) return rc;
    if (!st) return gqp_set_error(db, GQP_ERROR, "Parser Error: nothing to explain");
    if (st->ast->kind != STMT_SELECT) {
        gqp_finalize(st);
        return gqp_set_error(db, GQP_ERROR, "Not implemented Error: EXPLAIN of a non-SELECT");
    }
    rc = gqp_explain_stmt_locked(db, st, flags, out);
    gqp_finalize(st);
    return rc;
}

/* s (malloc'ed) with the line head + why before it when why is not empty
 * (s kept as it is when out of memory). */
static char *with_head(char *s, const char *head, const char *why) {
    if (!s || !why[0]) return s;
    char *t = malloc(strlen(s) + strlen(head) + strlen(why) + 2);
    if (!t) return s;
    sprintf(t, "%s%s\n%s", head, why, s);
    free(s);
    return t;
}

int gqp_explain_stmt_locked(gqp *db, gqp_stmt *st, int flags, char **out) {
    *out = NULL;
    int rc;
    if (st->ran) gqp_reset(st);
    if (!(flags & GQP_EXPLAIN_ANALYZE) &&
        (st->version != db->version || st->planned_gen != st->bind_gen || !st->dag)) {
        /* as gqp_step would: a table or the bindings changed since the plan */
        if ((rc = gqp_replan(db, st)) != GQP_OK) return rc;
    }
    if (flags & GQP_EXPLAIN_ANALYZE) {
        st->profile = 1;
        /* plan again with profiling on: the subqueries and CTEs that run
         * while planning are timed node by node as well */
        if (st->ast->kind == STMT_SELECT && st->mat_explain &&
            (rc = gqp_replan(db, st)) != GQP_OK) {
            st->profile = 0;
            return rc;
        }
        rc = gqp_step(st);
        st->profile = 0;
        if (rc != GQP_ROW && rc != GQP_DONE) return rc;
    }
    int an = (flags & GQP_EXPLAIN_ANALYZE) != 0;
    /* under a memory_limit: what the run does (ANALYZE: did) with the plan */
    int bf = -1;
    int64_t brows = 0;
    if (!an && db->chunk_rows <= 0 && !st->chunk_note &&
        gqp_budget_apply(db, st, &bf, &brows) != GQP_BUDGET_CHUNKS)
        brows = 0;
    char *s = (flags & GQP_EXPLAIN_JSON)  ? plan_explain_json(st->dag, an)
              : (flags & GQP_EXPLAIN_DOT) ? plan_explain_dot(st->dag, an)
                                          : plan_explain_text(st->dag, an);
    if (!(flags & (GQP_EXPLAIN_JSON | GQP_EXPLAIN_DOT))) {
        s = with_head(s, "-- runs whole: ", st->budget_mapped);
        s = with_head(s, "-- runs on the CPU: ", st->budget_cpu);
    }
    if (s && !(flags & (GQP_EXPLAIN_JSON | GQP_EXPLAIN_DOT)) &&
        (db->chunk_rows > 0 || st->chunk_note || brows > 0)) {
        /* chunked execution: what ran (ANALYZE) or what would */
        char line[1024] = "", with[512] = "";
        const char *why = NULL;
        int f = db->chunk_rows > 0
                    ? gqp_chunk_table(st->bound, db->chunk_rows, db->chunk_cluster == 2, &why)
                    : -1;
        if (f >= 0 || brows > 0)
            gqp_chunk_cosliced(st->bound, f >= 0 ? f : bf,
                               f >= 0 ? db->chunk_cluster == 2 : db->chunk_cluster >= 1, with,
                               sizeof with);
        if (f >= 0)
            snprintf(line, sizeof line, "-- runs in chunks: %s in chunks of %lld rows%s\n",
                     gqp_chunk_rel(st->bound, f)->table->name, (long long)db->chunk_rows, with);
        else if (brows > 0)
            snprintf(line, sizeof line,
                     "-- runs in chunks: %s in chunks of %lld rows (the GPU nodes' estimated "
                     "outputs exceed the device budget)%s%s\n",
                     gqp_chunk_rel(st->bound, bf)->table->name, (long long)brows, with,
                     st->chunk_mapped ? GQP_CHUNK_MAPPED_TEXT : "");
        else if (db->chunk_rows > 0)
            snprintf(line, sizeof line, "-- runs whole (not chunked: %s)\n", why);
        const char *body = st->chunk_note ? st->chunk_note : "";
        if (st->chunk_note) *s = '\0'; /* it ran chunked: not the whole plan */
        size_t a = strlen(line), bl = strlen(body), c = strlen(s);
        char *t = malloc(a + bl + c + 1);
        if (t) {
            memcpy(t, line, a);
            memcpy(t + a, body, bl);
            memcpy(t + a + bl, s, c + 1);
            free(s);
            s = t;
        }
    }
    if (s && st->mat_explain && !(flags & (GQP_EXPLAIN_JSON | GQP_EXPLAIN_DOT))) {
        /* the derived tables / CTEs / views run before the query: their plans first */
        size_t a = strlen(st->mat_explain), b = strlen(s);
        char *t = malloc(a + b + 1);
        if (t) {
            memcpy(t, st->mat_explain, a);
            memcpy(t + a, s, b + 1);
            free(s);
            s = t;
        }
    }
    if (s && an && !(flags & (GQP_EXPLAIN_JSON | GQP_EXPLAIN_DOT))) {
        char mapped[64] = "";
        if (st->stats.bytes_mapped)
            snprintf(mapped, sizeof mapped, " (and %lld B read mapped)",
                     (long long)st->stats.bytes_mapped);
        size_t l = strlen(s);
        char *t = realloc(s, l + 320);
        if (t) {
            s = t;
            int k = snprintf(s + l, 320,
                             "result rows: %lld, execution %.3f ms, h2d %lld B%s, d2h %lld B, "
                             "peak device memory %zu B\n"
                             "prepared in %.3f ms: subqueries and derived tables %.3f, bind %.3f, "
                             "lower %.3f, place %.3f\n",
                             (long long)st->res.nrows, st->exec_ms, (long long)st->stats.bytes_h2d,
                             mapped, (long long)st->stats.bytes_d2h, st->stats.peak_device_bytes,
                             st->prep_ms[0] + st->prep_ms[1] + st->prep_ms[2] + st->prep_ms[3],
                             st->prep_ms[0], st->prep_ms[1], st->prep_ms[2], st->prep_ms[3]);
            if (k > 0 && k < 160 && (st->stats.oom_retries || st->stats.oom_fallbacks))
                snprintf(s + l + k, (size_t)(320 - k),
                         "device out-of-memory: %d node%s ran again on the GPU, %d on the CPU\n",
                         st->stats.oom_retries - st->stats.oom_fallbacks,
                         st->stats.oom_retries - st->stats.oom_fallbacks == 1 ? "" : "s",
                         st->stats.oom_fallbacks);
        }
    }
    if (!s) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    *out = s;
    return GQP_OK;
}

int gqp_explain(gqp *db, const char *sql, int64_t nbytes, int flags, char **out) {
    if (!db || !sql || !out) return GQP_MISUSE;
    gqp_enter(db);
    int rc = explain_locked(db, sql, nbytes, flags, out);
    gqp_leave(db);
    return rc;
}

int gqp_explain_stmt(gqp_stmt *st, int flags, char **out) {
    if (!st || !out) return GQP_MISUSE;
    gqp *db = st->db;
    gqp_enter(db);
    *out = NULL;
    int rc = GQP_OK;
    const AstStmt *in = st->ast->inner;
    if (st->ast->kind == STMT_SELECT) {
        rc = gqp_explain_stmt_locked(db, st, flags, out);
    } else if (st->ast->kind == STMT_EXPLAIN && in->kind == STMT_SELECT) {
        /* EXPLAIN [ANALYZE] SELECT: the SELECT's plan */
        gqp_stmt *q = NULL;
        rc = gqp_prepare(db, st->sql + in->pos, in->end - in->pos, &q, NULL);
        if (rc == GQP_OK && q) rc = gqp_copy_bindings(st, q);
        if (rc == GQP_OK && q)
            rc = gqp_explain_stmt_locked(db, q,
                                         flags | (st->ast->analyze ? GQP_EXPLAIN_ANALYZE : 0), out);
        gqp_finalize(q);
    }
    gqp_leave(db);
    return rc;
}
