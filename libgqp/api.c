/*
 * api.c -- libgqp, the implementation of include/gqp.h: the one place that
 * calls the stages in order (parse, bind + rewrite, lower, place, execute,
 * explain). It holds no stage logic itself.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gqp.h"
#include "libgqp/internal.h"

const char *gqp_libversion(void) {
    return "0.1.0";
}

void gqp_free(void *p) {
    free(p);
}

int gqp_gpu_available(void) {
    return prim_gpu_available();
}

void gqp_enter(gqp *db) {
    pthread_mutex_lock(&db->mu);
}

void gqp_leave(gqp *db) {
    pthread_mutex_unlock(&db->mu);
}

void gqp_lock(gqp *db) {
    if (db) gqp_enter(db);
}

void gqp_unlock(gqp *db) {
    if (db) gqp_leave(db);
}

void gqp_interrupt(gqp *db) {
    if (db) __atomic_store_n(&db->interrupt, 1, __ATOMIC_RELAXED);
}

int gqp_interrupted(gqp *db) {
    return __atomic_load_n(&db->interrupt, __ATOMIC_RELAXED);
}

/* The extended code of an error rc whose message is msg: GQP_ERROR refined
 * by the message's stage ("Parser Error: ..." -> GQP_ERROR_PARSER, ...);
 * every other code as it is. */
static int extended_code(int rc, const char *msg) {
    static const struct {
        const char *prefix;
        int code;
    } stages[] = {
        {"Parser Error", GQP_ERROR_PARSER},        {"Binder Error", GQP_ERROR_BINDER},
        {"Catalog Error", GQP_ERROR_CATALOG},      {"Not implemented Error", GQP_ERROR_NOTIMPL},
        {"Execution Error", GQP_ERROR_EXECUTION},  {"Primitive Error", GQP_ERROR_EXECUTION},
        {"Constraint Error", GQP_ERROR_CONSTRAINT}};
    if (rc != GQP_ERROR) return rc;
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
        if (strncmp(msg, stages[i].prefix, strlen(stages[i].prefix)) == 0) return stages[i].code;
    return rc;
}

/* Set db's error message (plain, no position) and code. Returns rc. */
int gqp_set_error(gqp *db, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(db->errmsg, sizeof db->errmsg, fmt, ap);
    va_end(ap);
    db->err_offset = -1;
    db->errcode = extended_code(rc, db->errmsg);
    return rc;
}

/* Set db's error from a stage error positioned in sql. Returns GQP_ERROR. */
int gqp_set_error_at(gqp *db, const char *sql, int64_t len, int64_t offset, const char *stage,
                     const char *msg) {
    sql_format_error(sql, len, offset, stage, msg, db->errmsg, sizeof db->errmsg);
    db->err_offset = offset;
    db->errcode = extended_code(GQP_ERROR, db->errmsg);
    return GQP_ERROR;
}

/* The first environment setting gqp_open does not understand, into bad
 * (kept when one is there already). */
static void env_bad(char *bad, size_t cap, const char *name, const char *value, const char *want) {
    if (!bad[0])
        snprintf(bad, cap, "Config Error: environment %s='%.60s': expected %s", name, value, want);
}

/* Environment setting name read by parse (-1: not understood): dflt when
 * unset or empty, or when not understood (noted in bad, expecting want). */
static int env_mode(char *bad, size_t cap, const char *name, int (*parse)(const char *), int dflt,
                    const char *want) {
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    int m = parse(v);
    if (m >= 0) return m;
    env_bad(bad, cap, name, v, want);
    return dflt;
}

int gqp_open(const char *config_path, gqp **out) {
    *out = NULL;
    gqp *db = calloc(1, sizeof(gqp));
    if (!db) return GQP_NOMEM;
    pthread_mutexattr_t ma;
    if (pthread_mutexattr_init(&ma) != 0) {
        free(db);
        return GQP_NOMEM;
    }
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    int mrc = pthread_mutex_init(&db->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    if (mrc != 0) {
        free(db);
        return GQP_NOMEM;
    }
    db->cat = cat_catalog_new();
    if (!db->cat) {
        pthread_mutex_destroy(&db->mu);
        free(db);
        return GQP_NOMEM;
    }
    /* TUNING: keep up to 4 GiB of freed intermediates for reuse; a 5M-row
     * seed-004 query needs ~100 MB. */
    db->pool = exec_pool_new((size_t)4 << 30);
    /* settings from the environment (scripts, tests); a value not
     * understood fails the open, naming it, before anything loads */
    char bad[200] = "";
    /* GQP_DEVICE=cpu|gpu|auto sets the default placement */
    db->device = (gqp_device)env_mode(bad, sizeof bad, "GQP_DEVICE", gqp_device_mode,
                                      GQP_DEVICE_AUTO, "cpu, gpu or auto");
    /* GQP_AGGREGATE=sort|dense|auto: the aggregation plan */
    db->agg_mode = env_mode(bad, sizeof bad, "GQP_AGGREGATE", gqp_agg_mode, LOWER_AGG_AUTO,
                            "sort, dense or auto");
    /* GQP_CHUNK_ROWS=N: chunked execution in chunks of N rows (0: off) */
    const char *env = getenv("GQP_CHUNK_ROWS");
    db->chunk_rows = 0;
    if (env && *env) {
        char *end = NULL;
        long long v = strtoll(env, &end, 10);
        if (!end || *end || v < 0)
            env_bad(bad, sizeof bad, "GQP_CHUNK_ROWS", env, "a row count");
        else
            db->chunk_rows = v;
    }
    /* GQP_CHUNK_CLUSTER=off|auto|on: key-ordered copies (cluster.c) */
    db->chunk_cluster = env_mode(bad, sizeof bad, "GQP_CHUNK_CLUSTER", gqp_chunk_cluster_mode, 1,
                                 "off, auto or on");
    /* GQP_MAPPED=off|auto|on: mapped (zero-copy) column reads */
    db->mapped =
        env_mode(bad, sizeof bad, "GQP_MAPPED", gqp_chunk_cluster_mode, 1, "off, auto or on");
    /* GQP_CLUSTER_BYTES=N: the key-ordered copies' cap (cluster.c reads it) */
    env = getenv("GQP_CLUSTER_BYTES");
    if (env && *env && strspn(env, "0123456789") != strlen(env))
        env_bad(bad, sizeof bad, "GQP_CLUSTER_BYTES", env, "a byte count");
    db->nthreads = prim_ncores();
    db->err_offset = -1;
    snprintf(db->errmsg, sizeof db->errmsg, "not an error");
    *out = db;
    if (bad[0]) return gqp_set_error(db, GQP_ERROR, "%s", bad);
    if (config_path && gqp_store_wants(config_path)) {
        int src = gqp_store_open(db, config_path); /* a database folder */
        if (src != GQP_OK) return src;
    } else if (config_path) {
        CatError err;
        CatSettings settings;
        memset(&settings, 0, sizeof settings);
        int lrc = cat_load_config(db->cat, config_path, &settings, &err);
        snprintf(db->cost_file, sizeof db->cost_file, "%s", settings.cost_file);
        db->gpu_cache_bytes = settings.gpu_cache_bytes;
        db->mem_limit_bytes = settings.memory_limit_bytes;
        db->mem_limit_pct = settings.memory_limit_pct;
        if (lrc != 0) return gqp_set_error(db, GQP_ERROR, "%s", err.msg);
    }
    /* a cost file named explicitly ($GQP_COST_FILE over the config's
     * device: cost_file) must load: checked now, not at the first query */
    env = getenv("GQP_COST_FILE");
    if (env && *env) snprintf(db->cost_file, sizeof db->cost_file, "%s", env);
    if (db->cost_file[0]) {
        CostModel *m = malloc(sizeof *m);
        char cerr[700];
        if (!m) return gqp_set_error(db, GQP_NOMEM, "out of memory");
        cost_model_default(m, "cpu");
        int crc = cost_model_load(m, db->cost_file, cerr, sizeof cerr);
        free(m);
        const char *why = strncmp(cerr, "Cost Error: ", 12) == 0 ? cerr + 12 : cerr;
        if (crc != 0)
            return gqp_set_error(db, GQP_ERROR, "Catalog Error: %s (named by %s)", why,
                                 env && *env ? "$GQP_COST_FILE" : "the config's device: cost_file");
    }
    env = getenv("GQP_OOM_FALLBACK");
    db->oom_fallback_gpu = env && strcmp(env, "1") == 0;
    /* GQP_FAIL_ALLOC=host:N|device:N[+]: allocation fault injection (tests) */
    env = getenv("GQP_FAIL_ALLOC");
    if (env && *env) {
        int dv, sticky;
        int64_t n;
        if (exec_parse_fail_spec(env, &dv, &n, &sticky) != 0)
            return gqp_set_error(db, GQP_MISUSE,
                                 "API Error: GQP_FAIL_ALLOC must be host:N or device:N, N >= 1, "
                                 "with + to fail every allocation from the N-th on; not '%s'",
                                 env);
        gqp_test_fail_alloc(db, dv, n, sticky);
    }
    return GQP_OK;
}

void gqp_test_fail_alloc(gqp *db, int device, int64_t n, int sticky) {
    if (!device) {
        exec_pool_fail_at(db->pool, n, sticky);
        return;
    }
    db->fail_dev_at = n;
    db->fail_dev_sticky = sticky;
    exec_device_fail_at(db->dev, n, sticky);
}

int64_t gqp_test_alloc_count(gqp *db, int device) {
    return device ? exec_device_alloc_count(db->dev) : exec_pool_alloc_count(db->pool);
}

int gqp_set_memory_limit(gqp *db, const char *txt) {
    int64_t b;
    double pct;
    if (cat_parse_memory_limit(txt, &b, &pct) != 0)
        return gqp_set_error(db, GQP_ERROR,
                             "Binder Error: memory_limit must be a size (bytes, or with a unit: "
                             "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), a share of device memory "
                             "(up to 100%%) or 'none', not '%s'",
                             txt);
    db->mem_limit_bytes = b;
    db->mem_limit_pct = pct;
    exec_device_set_limit(db->dev, (size_t)b, pct);
    return GQP_OK;
}

int gqp_close(gqp *db) {
    if (!db) return GQP_OK;
    gqp_enter(db);
    while (db->stmts)
        gqp_finalize(db->stmts);
    gqp_cluster_free_all(db);
    exec_device_close(db->dev);
    exec_pool_free(db->pool);
    cat_catalog_free(db->cat);
    gqp_free_views(db);
    gqp_store_close(db);
    free(db->cost);
    free(db->reads);
    gqp_leave(db);
    pthread_mutex_destroy(&db->mu);
    free(db);
    return GQP_OK;
}

const char *gqp_errmsg(gqp *db) {
    if (!db) return "out of memory";
    gqp_enter(db);
    const char *m = db->errmsg;
    gqp_leave(db);
    return m;
}

int64_t gqp_error_offset(gqp *db) {
    if (!db) return -1;
    gqp_enter(db);
    int64_t o = db->err_offset;
    gqp_leave(db);
    return o;
}

int gqp_errcode(gqp *db) {
    return gqp_extended_errcode(db) & 0xff;
}

int gqp_extended_errcode(gqp *db) {
    if (!db) return GQP_NOMEM;
    gqp_enter(db);
    int c = db->errcode;
    gqp_leave(db);
    return c;
}

int gqp_set_device(gqp *db, gqp_device device) {
    if (!db) return GQP_MISUSE;
    gqp_enter(db);
    int rc = GQP_OK;
    if (device != GQP_DEVICE_AUTO && device != GQP_DEVICE_CPU && device != GQP_DEVICE_GPU)
        rc = gqp_set_error(db, GQP_MISUSE,
                           "API Error: gqp_set_device: %d is not a device (GQP_DEVICE_AUTO, "
                           "GQP_DEVICE_CPU or GQP_DEVICE_GPU)",
                           (int)device);
    else if (device == GQP_DEVICE_GPU && !prim_gpu_available())
        rc = gqp_set_error(db, GQP_ERROR,
                           "Device Error: --device gpu needs a CUDA device, and none is usable "
                           "(%s)",
                           gqp_build_has_cuda() ? "no device found by the CUDA runtime"
                                                : "gqp was built without CUDA");
    else
        db->device = device;
    gqp_leave(db);
    return rc;
}

const char *gqp_cost_model(gqp *db) {
    if (!db) return "none";
    gqp_enter(db);
    const CostModel *m = gqp_cost(db);
    const char *s = m ? m->source : "none (out of memory)";
    gqp_leave(db);
    return s;
}

int gqp_column_loaded(gqp *db, const char *table, const char *column) {
    if (!db || !table || !column) return -1;
    gqp_enter(db);
    const CatTable *t = cat_find_table(db->cat, table);
    int c = t ? cat_find_column(t, column) : -1;
    int rc = c < 0 ? -1 : cat_column_loaded(t, c);
    gqp_leave(db);
    return rc;
}

int gqp_set_threads(gqp *db, int nthreads) {
    if (!db) return GQP_MISUSE;
    gqp_enter(db);
    int rc = GQP_OK;
    if (nthreads < 0)
        rc = gqp_set_error(db, GQP_MISUSE, "API Error: gqp_set_threads: %d threads", nthreads);
    else
        db->nthreads = nthreads ? nthreads : prim_ncores();
    gqp_leave(db);
    return rc;
}

/* Unlink st from its db's list of open statements (db locked). */
static void stmt_unlink(gqp_stmt *st) {
    gqp_stmt **p = &st->db->stmts;
    while (*p && *p != st)
        p = &(*p)->next;
    if (*p) *p = st->next;
}

/* gqp_prepare with db locked. */
static int prepare_locked(gqp *db, const char *sql, int64_t nbytes, gqp_stmt **stmt,
                          const char **tail) {
    *stmt = NULL;
    int64_t len = nbytes < 0 ? (int64_t)strlen(sql) : nbytes;
    gqp_stmt *st = calloc(1, sizeof(gqp_stmt));
    if (!st) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    st->db = db;
    st->sql = sql;
    st->sql_len = len;
    st->parse_arena = sql_arena_new();
    st->plan_arena = plan_arena_new();
    if (!st->parse_arena || !st->plan_arena) {
        gqp_stmt_destroy(st);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    SqlError perr;
    int64_t next = len;
    if (sql_parse_one(sql, len, 0, st->parse_arena, &st->ast, &next, &perr) != 0) {
        gqp_stmt_destroy(st);
        return gqp_set_error_at(db, sql, len, perr.offset, "Parser", perr.msg);
    }
    if (tail) *tail = sql + next;
    /* keep our own copy of the statement's text (in the parse arena, which
     * lives as long as the statement): errors found when it is stepped
     * point into it */
    char *copy = sql_arena_strndup(st->parse_arena, sql, (size_t)next);
    if (!copy) {
        gqp_stmt_destroy(st);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    st->sql = copy;
    st->sql_len = next;
    if (!st->ast) {
        gqp_stmt_destroy(st);
        return GQP_OK;
    }
    if (st->ast->nparams > 0) {
        st->params = calloc((size_t)st->ast->nparams, sizeof(GqpParam));
        if (!st->params) {
            gqp_stmt_destroy(st);
            return gqp_set_error(db, GQP_NOMEM, "out of memory");
        }
    }
    if (st->ast->kind == STMT_SELECT) {
        /* unbound parameters are NULL, as in SQLite */
        gqp_apply_params(st);
        int rc = gqp_plan_select(db, st, st->ast->select);
        if (rc == GQP_ERROR && st->ast->nparams > 0) {
            /* a parameter where NULL is refused (LIMIT ?): plan it as 0
             * instead, each parameter that an error points at in turn; if
             * that plans, the statement is valid, and its first step plans
             * it with the values bound by then */
            char msg[sizeof db->errmsg];
            int64_t off = db->err_offset;
            int code = db->errcode;
            memcpy(msg, db->errmsg, sizeof msg);
            for (int tries = 0; rc == GQP_ERROR && tries < st->ast->nparams; tries++) {
                int idx = 0;
                for (int k = 0; k < st->ast->nparam_refs && !idx; k++)
                    if (st->ast->params[k].expr->pos == db->err_offset &&
                        st->params[st->ast->params[k].index - 1].kind == 0)
                        idx = st->ast->params[k].index;
                if (!idx) break;
                st->params[idx - 1].kind = 1; /* integer 0 */
                rc = gqp_replan(db, st);
            }
            memset(st->params, 0, sizeof(GqpParam) * (size_t)st->ast->nparams);
            if (rc == GQP_OK) {
                st->planned_gen = st->bind_gen - 1; /* plan again on the first step */
            } else if (rc == GQP_ERROR) {
                memcpy(db->errmsg, msg, sizeof msg);
                db->err_offset = off;
                db->errcode = code;
            }
        }
        if (rc != GQP_OK) {
            gqp_stmt_destroy(st);
            return rc;
        }
    } else if (gqp_is_introspect(st->ast->kind)) {
        int rc = gqp_introspect_prepare(db, st); /* EXPLAIN, SHOW, DESCRIBE, PRAGMA */
        if (rc != GQP_OK) {
            gqp_stmt_destroy(st);
            return rc;
        }
    }
    st->next = db->stmts;
    db->stmts = st;
    *stmt = st;
    return GQP_OK;
}

int gqp_prepare(gqp *db, const char *sql, int64_t nbytes, gqp_stmt **stmt, const char **tail) {
    if (!db || !sql || !stmt) return GQP_MISUSE;
    gqp_enter(db);
    int rc = prepare_locked(db, sql, nbytes, stmt, tail);
    gqp_leave(db);
    return rc;
}

void gqp_apply_params(gqp_stmt *st) {
    const AstStmt *a = st->ast;
    for (int k = 0; k < a->nparam_refs; k++) {
        AstExpr *e = a->params[k].expr;
        const GqpParam *v = &st->params[a->params[k].index - 1];
        e->str = NULL;
        switch (v->kind) {
        case 1:
            e->kind = AST_INT;
            e->ival = v->i;
            break;
        case 2:
            e->kind = AST_FLOAT;
            e->fval = v->f;
            break;
        case 3:
            e->kind = AST_STRING;
            e->str = v->s;
            break;
        default:
            e->kind = AST_NULL;
            break;
        }
    }
    st->planned_gen = st->bind_gen;
}

int gqp_replan(gqp *db, gqp_stmt *st) {
    plan_dag_free(st->dag);
    st->dag = NULL;
    st->bound = NULL;
    plan_arena_free(st->plan_arena);
    if (!(st->plan_arena = plan_arena_new())) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    gqp_apply_params(st);
    return gqp_plan_select(db, st, st->ast->select);
}

/* SQLite's REAL after an integer overflow reaches aggregates through the
 * sort aggregation plan only (executor/exec.c segreduce_reals): a query
 * whose dense aggregate failed on an overflow (its fused arithmetic, or a
 * REAL as its input) is planned again with aggregate = 'sort' and run
 * once more. Returns rc, or the second run's code. */
static int retry_sort_agg(gqp *db, gqp_stmt *st, int rc) {
    if (rc == GQP_OK || !strstr(db->errmsg, "integer overflow") || db->agg_mode == LOWER_AGG_SORT ||
        !st->dag)
        return rc;
    int dense = 0;
    for (int i = 0; i < st->dag->nnodes; i++)
        dense |= st->dag->nodes[i].kind == DN_DENSEAGG;
    if (!dense) return rc;
    int saved = db->agg_mode;
    db->agg_mode = LOWER_AGG_SORT;
    rc = gqp_replan(db, st);
    if (rc == GQP_OK) rc = gqp_run_select(db, st);
    db->agg_mode = saved;
    return rc;
}

/* gqp_step with the handle locked. */
static int step_locked(gqp *db, gqp_stmt *st) {
    if (!st->ran) {
        int rc;
        st->ran = 1;
        st->cursor = -1;
        /* as SQLite: an interrupt that arrived while nothing ran is
         * forgotten when the next statement starts */
        __atomic_store_n(&db->interrupt, 0, __ATOMIC_RELAXED);
        if (st->ast->kind == STMT_SELECT &&
            (st->version != db->version || st->planned_gen != st->bind_gen || !st->dag)) {
            /* a table changed since prepare (dictionaries and row counts
             * the plan captured are gone) or the bindings did: plan again
             * from the AST */
            rc = gqp_replan(db, st);
            if (rc != GQP_OK) {
                st->ran = 0;
                return rc;
            }
        } else if (st->ast->kind != STMT_SELECT && st->planned_gen != st->bind_gen) {
            gqp_apply_params(st);
        }
        switch (st->ast->kind) {
        case STMT_SELECT:
            rc = retry_sort_agg(db, st, gqp_run_select(db, st));
            break;
        case STMT_EXPLAIN:
        case STMT_SHOW_TABLES:
        case STMT_DESCRIBE:
        case STMT_PRAGMA:
            rc = gqp_introspect_run(db, st);
            break;
        default:
            rc = gqp_run_other(db, st);
            break;
        }
        if (rc != GQP_OK) {
            st->ran = 0;
            return rc;
        }
    }
    if (st->cursor + 1 < st->res.nrows) {
        st->cursor++;
        return GQP_ROW;
    }
    st->cursor = st->res.nrows;
    return GQP_DONE;
}

int gqp_step(gqp_stmt *st) {
    if (!st) return GQP_MISUSE;
    gqp *db = st->db;
    gqp_enter(db);
    int rc = step_locked(db, st);
    gqp_leave(db);
    return rc;
}

int gqp_reset(gqp_stmt *st) {
    if (!st) return GQP_MISUSE;
    gqp_enter(st->db);
    exec_result_free(&st->res);
    st->ran = 0;
    st->cursor = -1;
    gqp_leave(st->db);
    return GQP_OK;
}

int gqp_finalize(gqp_stmt *st) {
    if (!st) return GQP_OK;
    gqp *db = st->db;
    gqp_enter(db);
    stmt_unlink(st);
    gqp_stmt_destroy(st);
    gqp_leave(db);
    return GQP_OK;
}

/* Free everything of st (not linked in any list any more). */
void gqp_stmt_destroy(gqp_stmt *st) {
    gqp_drop_temps(st->db, st);
    exec_result_free(&st->res);
    free(st->chunk_note);
    plan_dag_free(st->dag);
    plan_arena_free(st->plan_arena);
    if (st->params)
        for (int i = 0; i < st->ast->nparams; i++)
            free(st->params[i].s);
    free(st->params);
    sql_arena_free(st->parse_arena);
    free(st);
}

/* ------------------------------------------------------------ bindings -- */

/* Common checks of gqp_bind_*: st not running (stepped and not reset) and
 * idx in range. Returns the slot (its old text freed, set to NULL) or NULL
 * with *rc the error (db locked). */
static GqpParam *bind_slot(gqp_stmt *st, int idx, int *rc) {
    gqp *db = st->db;
    if (st->ran) {
        *rc = gqp_set_error(db, GQP_MISUSE,
                            "API Error: bind on a statement that has run: call gqp_reset() first");
        return NULL;
    }
    int n = st->ast ? st->ast->nparams : 0;
    if (idx < 1 || idx > n) {
        *rc = gqp_set_error(db, GQP_RANGE,
                            "API Error: bind parameter index %d out of range (the statement has "
                            "%d)",
                            idx, n);
        return NULL;
    }
    GqpParam *p = &st->params[idx - 1];
    free(p->s);
    memset(p, 0, sizeof *p);
    st->bind_gen++;
    *rc = GQP_OK;
    return p;
}

int gqp_bind_null(gqp_stmt *st, int idx) {
    if (!st) return GQP_MISUSE;
    gqp_enter(st->db);
    int rc;
    bind_slot(st, idx, &rc);
    gqp_leave(st->db);
    return rc;
}

int gqp_bind_int64(gqp_stmt *st, int idx, int64_t value) {
    if (!st) return GQP_MISUSE;
    gqp_enter(st->db);
    int rc;
    GqpParam *p = bind_slot(st, idx, &rc);
    if (p) p->kind = 1, p->i = value;
    gqp_leave(st->db);
    return rc;
}

int gqp_bind_double(gqp_stmt *st, int idx, double value) {
    if (!st) return GQP_MISUSE;
    gqp_enter(st->db);
    int rc;
    GqpParam *p = bind_slot(st, idx, &rc);
    if (p) p->kind = 2, p->f = value;
    gqp_leave(st->db);
    return rc;
}

int gqp_bind_text(gqp_stmt *st, int idx, const char *text, int64_t nbytes) {
    if (!st) return GQP_MISUSE;
    gqp_enter(st->db);
    int rc;
    GqpParam *p = bind_slot(st, idx, &rc);
    if (p && text) {
        size_t n = nbytes < 0 ? strlen(text) : strnlen(text, (size_t)nbytes);
        if (!(p->s = malloc(n + 1))) {
            rc = gqp_set_error(st->db, GQP_NOMEM, "out of memory");
        } else {
            memcpy(p->s, text, n);
            p->s[n] = 0;
            p->kind = 3;
        }
    }
    gqp_leave(st->db);
    return rc;
}

int gqp_bind_parameter_count(gqp_stmt *st) {
    if (!st) return 0;
    gqp_enter(st->db);
    int n = st->ast ? st->ast->nparams : 0;
    gqp_leave(st->db);
    return n;
}

int gqp_bind_parameter_index(gqp_stmt *st, const char *name) {
    if (!st || !name) return 0;
    gqp_enter(st->db);
    int found = 0;
    for (int i = 0; st->ast && i < st->ast->nparams && !found; i++)
        if (st->ast->param_names[i] && strcmp(st->ast->param_names[i], name) == 0) found = i + 1;
    gqp_leave(st->db);
    return found;
}

const char *gqp_bind_parameter_name(gqp_stmt *st, int idx) {
    if (!st) return NULL;
    gqp_enter(st->db);
    const char *s = NULL;
    if (st->ast && idx >= 1 && idx <= st->ast->nparams) s = st->ast->param_names[idx - 1];
    gqp_leave(st->db);
    return s;
}

int gqp_clear_bindings(gqp_stmt *st) {
    if (!st) return GQP_MISUSE;
    gqp_enter(st->db);
    for (int i = 0; st->ast && i < st->ast->nparams; i++) {
        free(st->params[i].s);
        memset(&st->params[i], 0, sizeof st->params[i]);
    }
    st->bind_gen++;
    gqp_leave(st->db);
    return GQP_OK;
}

/* ------------------------------------------------------------- results -- */

/* gqp_column_count() without the lock (st may be NULL). */
static int column_count_unlocked(gqp_stmt *st) {
    return st && st->dag ? st->dag->nresults : 0;
}

/* gqp_column_name() without the lock (st may be NULL). */
static const char *column_name_unlocked(gqp_stmt *st, int col) {
    if (!st || !st->dag || col < 0 || col >= st->dag->nresults) return NULL;
    return st->dag->result_names[col];
}

/* gqp_column_type() without the lock (st may be NULL). */
static gqp_type column_type_unlocked(gqp_stmt *st, int col) {
    if (!st || !st->dag || col < 0 || col >= st->dag->nresults) return GQP_TYPE_NULL;
    return (gqp_type)st->dag->values[st->dag->results[col]].ltype;
}

/* gqp_column_scale() without the lock (st may be NULL). */
static int column_scale_unlocked(gqp_stmt *st, int col) {
    if (!st || !st->dag || col < 0 || col >= st->dag->nresults) return 0;
    const DagValue *v = &st->dag->values[st->dag->results[col]];
    return v->ltype == CAT_DECIMAL ? v->scale : 0;
}

/* The result column col if a row is current, else NULL. */
static const ExecColumn *cur_col(gqp_stmt *st, int col) {
    if (!st || col < 0 || col >= st->res.ncols || st->cursor < 0 || st->cursor >= st->res.nrows)
        return NULL;
    return &st->res.cols[col];
}

/* gqp_column_is_null() without the lock (st may be NULL). */
static int column_is_null_unlocked(gqp_stmt *st, int col) {
    const ExecColumn *c = cur_col(st, col);
    if (!c) return 1;
    return c->vec.valid && !c->vec.valid[st->cursor];
}

/* Numeric value of the current row of c as (is_float, i, f). */
static void cur_num(const ExecColumn *c, int64_t row, int *isf, int64_t *i, double *f) {
    *isf = 0;
    *i = 0;
    *f = 0;
    switch (c->vec.type) {
    case PRIM_U8:
        *i = ((const uint8_t *)c->vec.data)[row];
        break;
    case PRIM_I32:
        *i = ((const int32_t *)c->vec.data)[row];
        break;
    case PRIM_I64:
        *i = ((const int64_t *)c->vec.data)[row];
        if (c->re.is && c->re.is[row]) *isf = 1, *f = c->re.val[row]; /* overflow: REAL */
        break;
    case PRIM_F32:
        *isf = 1, *f = ((const float *)c->vec.data)[row];
        break;
    case PRIM_F64:
        *isf = 1, *f = ((const double *)c->vec.data)[row];
        break;
    }
}

/* gqp_value_type() without the lock (st may be NULL). */
static gqp_type value_type_unlocked(gqp_stmt *st, int col) {
    const ExecColumn *c = cur_col(st, col);
    if (!c || (c->vec.valid && !c->vec.valid[st->cursor])) return GQP_TYPE_NULL;
    if (c->re.is && c->re.is[st->cursor]) return GQP_TYPE_FLOAT64;
    return column_type_unlocked(st, col);
}

/* gqp_result_reals() without the lock (st may be NULL). */
static const double *result_reals_unlocked(gqp_stmt *st, int col, const uint8_t **is) {
    if (is) *is = NULL;
    if (!st || !st->ran || col < 0 || col >= st->res.ncols || !st->res.cols[col].re.is) return NULL;
    if (is) *is = st->res.cols[col].re.is;
    return st->res.cols[col].re.val;
}

/* gqp_column_int64() without the lock (st may be NULL). */
static int64_t column_int64_unlocked(gqp_stmt *st, int col) {
    const ExecColumn *c = cur_col(st, col);
    if (!c || (c->vec.valid && !c->vec.valid[st->cursor])) return 0;
    if (c->ltype == CAT_STRING) {
        return strtoll(cat_dict_str(c->dict, ((const int32_t *)c->vec.data)[st->cursor]), NULL, 10);
    }
    int isf;
    int64_t i;
    double f;
    cur_num(c, st->cursor, &isf, &i, &f);
    if (c->ltype == CAT_DECIMAL) return i / cat_pow10(c->scale);
    if (!isf) return i;
    /* SQLite's REAL -> INTEGER: truncation, saturating; a NaN (NULL in
     * SQLite, whose sqlite3_column_int64 then gives 0) gives 0 */
    return prim_real_to_int(f);
}

/* gqp_column_double() without the lock (st may be NULL). */
static double column_double_unlocked(gqp_stmt *st, int col) {
    const ExecColumn *c = cur_col(st, col);
    if (!c || (c->vec.valid && !c->vec.valid[st->cursor])) return 0;
    if (c->ltype == CAT_STRING)
        return strtod(cat_dict_str(c->dict, ((const int32_t *)c->vec.data)[st->cursor]), NULL);
    int isf;
    int64_t i;
    double f;
    cur_num(c, st->cursor, &isf, &i, &f);
    if (c->ltype == CAT_DECIMAL) return (double)i / (double)cat_pow10(c->scale);
    return isf ? f : (double)i;
}

/* gqp_column_text() without the lock (st may be NULL). */
static const char *column_text_unlocked(gqp_stmt *st, int col) {
    const ExecColumn *c = cur_col(st, col);
    if (!c || (c->vec.valid && !c->vec.valid[st->cursor])) return NULL;
    int64_t row = st->cursor;
    switch (c->ltype) {
    case CAT_STRING:
        return cat_dict_str(c->dict, ((const int32_t *)c->vec.data)[row]);
    case CAT_DATE: {
        int isf;
        int64_t i;
        double f;
        cur_num(c, row, &isf, &i, &f);
        cat_format_date((int32_t)i, st->text);
        return st->text;
    }
    case CAT_DECIMAL: {
        int isf;
        int64_t i;
        double f;
        cur_num(c, row, &isf, &i, &f);
        cat_format_decimal(i, c->scale, st->text, sizeof st->text);
        return st->text;
    }
    default:
        break;
    }
    int isf;
    int64_t i;
    double f;
    cur_num(c, row, &isf, &i, &f);
    if (isf)
        cat_format_real(f, c->vec.type == PRIM_F32 ? 9 : 15, st->text, sizeof st->text);
    else
        snprintf(st->text, sizeof st->text, "%lld", (long long)i);
    return st->text;
}

/* gqp_result_rows() without the lock (st may be NULL). */
static int64_t result_rows_unlocked(gqp_stmt *st) {
    return st && st->ran ? st->res.nrows : 0;
}

/* gqp_result_column() without the lock (st may be NULL). */
static const void *result_column_unlocked(gqp_stmt *st, int col, const uint8_t **valid) {
    if (valid) *valid = NULL;
    if (!st || !st->ran || col < 0 || col >= st->res.ncols) return NULL;
    if (valid) *valid = st->res.cols[col].vec.valid;
    return st->res.cols[col].vec.data;
}

/* gqp_result_string() without the lock (st may be NULL). */
static const char *result_string_unlocked(gqp_stmt *st, int col, int32_t code) {
    if (!st || !st->ran || col < 0 || col >= st->res.ncols) return NULL;
    const CatDict *d = st->res.cols[col].dict;
    if (!d || code < 0 || code >= d->n) return NULL;
    return cat_dict_str(d, code);
}

/* gqp_changes() without the lock (st may be NULL). */
static int64_t changes_unlocked(gqp_stmt *st) {
    return st ? st->changes : 0;
}

/* gqp_exec_ms() without the lock (st may be NULL). */
static double exec_ms_unlocked(gqp_stmt *st) {
    return st ? st->exec_ms : 0;
}

/* gqp_peak_device_bytes() without the lock (st may be NULL). */
static int64_t peak_device_bytes_unlocked(gqp_stmt *st) {
    return st ? (int64_t)st->stats.peak_device_bytes : 0;
}

/* gqp_gpu_nodes() without the lock (st may be NULL). */
static int gpu_nodes_unlocked(gqp_stmt *st, int *nnodes) {
    int g = 0, n = st && st->dag ? st->dag->nnodes : 0;
    for (int i = 0; i < n; i++)
        g += st->dag->nodes[i].device == DEV_GPU;
    if (nnodes) *nnodes = n;
    return g;
}

/* The public accessors: each holds the statement's handle locked around
 * its unlocked twin above (NULL st: the twin's answer for NULL). */

int gqp_column_count(gqp_stmt *st) {
    if (!st) return column_count_unlocked(st);
    gqp_enter(st->db);
    int r = column_count_unlocked(st);
    gqp_leave(st->db);
    return r;
}

const char *gqp_column_name(gqp_stmt *st, int col) {
    if (!st) return column_name_unlocked(st, col);
    gqp_enter(st->db);
    const char *r = column_name_unlocked(st, col);
    gqp_leave(st->db);
    return r;
}

gqp_type gqp_column_type(gqp_stmt *st, int col) {
    if (!st) return column_type_unlocked(st, col);
    gqp_enter(st->db);
    gqp_type r = column_type_unlocked(st, col);
    gqp_leave(st->db);
    return r;
}

int gqp_column_scale(gqp_stmt *st, int col) {
    if (!st) return column_scale_unlocked(st, col);
    gqp_enter(st->db);
    int r = column_scale_unlocked(st, col);
    gqp_leave(st->db);
    return r;
}

int gqp_column_is_null(gqp_stmt *st, int col) {
    if (!st) return column_is_null_unlocked(st, col);
    gqp_enter(st->db);
    int r = column_is_null_unlocked(st, col);
    gqp_leave(st->db);
    return r;
}

int64_t gqp_column_int64(gqp_stmt *st, int col) {
    if (!st) return column_int64_unlocked(st, col);
    gqp_enter(st->db);
    int64_t r = column_int64_unlocked(st, col);
    gqp_leave(st->db);
    return r;
}

double gqp_column_double(gqp_stmt *st, int col) {
    if (!st) return column_double_unlocked(st, col);
    gqp_enter(st->db);
    double r = column_double_unlocked(st, col);
    gqp_leave(st->db);
    return r;
}

const char *gqp_column_text(gqp_stmt *st, int col) {
    if (!st) return column_text_unlocked(st, col);
    gqp_enter(st->db);
    const char *r = column_text_unlocked(st, col);
    gqp_leave(st->db);
    return r;
}

gqp_type gqp_value_type(gqp_stmt *st, int col) {
    if (!st) return value_type_unlocked(st, col);
    gqp_enter(st->db);
    gqp_type r = value_type_unlocked(st, col);
    gqp_leave(st->db);
    return r;
}

const double *gqp_result_reals(gqp_stmt *st, int col, const uint8_t **is) {
    if (!st) return result_reals_unlocked(st, col, is);
    gqp_enter(st->db);
    const double *r = result_reals_unlocked(st, col, is);
    gqp_leave(st->db);
    return r;
}

int64_t gqp_result_rows(gqp_stmt *st) {
    if (!st) return result_rows_unlocked(st);
    gqp_enter(st->db);
    int64_t r = result_rows_unlocked(st);
    gqp_leave(st->db);
    return r;
}

const void *gqp_result_column(gqp_stmt *st, int col, const uint8_t **valid) {
    if (!st) return result_column_unlocked(st, col, valid);
    gqp_enter(st->db);
    const void *r = result_column_unlocked(st, col, valid);
    gqp_leave(st->db);
    return r;
}

const char *gqp_result_string(gqp_stmt *st, int col, int32_t code) {
    if (!st) return result_string_unlocked(st, col, code);
    gqp_enter(st->db);
    const char *r = result_string_unlocked(st, col, code);
    gqp_leave(st->db);
    return r;
}

int64_t gqp_changes(gqp_stmt *st) {
    if (!st) return changes_unlocked(st);
    gqp_enter(st->db);
    int64_t r = changes_unlocked(st);
    gqp_leave(st->db);
    return r;
}

double gqp_exec_ms(gqp_stmt *st) {
    if (!st) return exec_ms_unlocked(st);
    gqp_enter(st->db);
    double r = exec_ms_unlocked(st);
    gqp_leave(st->db);
    return r;
}

int64_t gqp_peak_device_bytes(gqp_stmt *st) {
    if (!st) return peak_device_bytes_unlocked(st);
    gqp_enter(st->db);
    int64_t r = peak_device_bytes_unlocked(st);
    gqp_leave(st->db);
    return r;
}

int gqp_gpu_nodes(gqp_stmt *st, int *nnodes) {
    if (!st) return gpu_nodes_unlocked(st, nnodes);
    gqp_enter(st->db);
    int r = gpu_nodes_unlocked(st, nnodes);
    gqp_leave(st->db);
    return r;
}

int gqp_gen_test(const char *dir, int64_t nrows, uint64_t seed, char **errmsg) {
    CatError err;
    if (errmsg) *errmsg = NULL;
    if (cat_gen_test(dir, nrows, seed, &err) != 0) {
        if (errmsg) *errmsg = strdup(err.msg);
        return GQP_ERROR;
    }
    return GQP_OK;
}

int gqp_config_to_binary(const char *config_path, const char *out_config, int append,
                         char **errmsg) {
    CatError err;
    if (errmsg) *errmsg = NULL;
    if (cat_config_to_binary(config_path, out_config, append, &err) != 0) {
        if (errmsg) *errmsg = strdup(err.msg);
        return GQP_ERROR;
    }
    return GQP_OK;
}

int gqp_gen_ssb(const char *dir, double sf, uint64_t seed, unsigned flags, char **errmsg) {
    CatError err;
    if (errmsg) *errmsg = NULL;
    if (cat_gen_ssb(dir, sf, seed, flags & GQP_GEN_NO_FACT_TBL ? CAT_GEN_NO_FACT_TBL : 0, &err) !=
        0) {
        if (errmsg) *errmsg = strdup(err.msg);
        return GQP_ERROR;
    }
    return GQP_OK;
}
