/*
 * api.c -- libgqp, the implementation of include/gqp.h: the one place that
 * calls the stages in order (parse, bind + rewrite, lower, place, execute,
 * explain). It holds no stage logic itself.
 */
#include <math.h>
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

/* Set db's error message (plain, no position). Returns rc. */
int gqp_set_error(gqp *db, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(db->errmsg, sizeof db->errmsg, fmt, ap);
    va_end(ap);
    db->err_offset = -1;
    return rc;
}

/* Set db's error from a stage error positioned in sql. Returns GQP_ERROR. */
int gqp_set_error_at(gqp *db, const char *sql, int64_t len, int64_t offset, const char *stage,
                     const char *msg) {
    sql_format_error(sql, len, offset, stage, msg, db->errmsg, sizeof db->errmsg);
    db->err_offset = offset;
    return GQP_ERROR;
}

int gqp_open(const char *config_path, gqp **out) {
    *out = NULL;
    gqp *db = calloc(1, sizeof(gqp));
    if (!db) return GQP_NOMEM;
    db->cat = cat_catalog_new();
    if (!db->cat) {
        free(db);
        return GQP_NOMEM;
    }
    /* TUNING: keep up to 4 GiB of freed intermediates for reuse; a 5M-row
     * seed-004 query needs ~100 MB. */
    db->pool = exec_pool_new((size_t)4 << 30);
    db->device = GQP_DEVICE_AUTO;
    /* GQP_DEVICE=cpu|gpu|auto sets the default placement (scripts, tests) */
    const char *env = getenv("GQP_DEVICE");
    if (env && strcasecmp(env, "cpu") == 0) db->device = GQP_DEVICE_CPU;
    if (env && strcasecmp(env, "gpu") == 0) db->device = GQP_DEVICE_GPU;
    /* GQP_AGGREGATE=sort|dense|auto: the aggregation plan (tests) */
    env = getenv("GQP_AGGREGATE");
    db->agg_mode = LOWER_AGG_AUTO;
    if (env && strcasecmp(env, "sort") == 0) db->agg_mode = LOWER_AGG_SORT;
    if (env && strcasecmp(env, "dense") == 0) db->agg_mode = LOWER_AGG_DENSE;
    db->nthreads = prim_ncores();
    db->err_offset = -1;
    snprintf(db->errmsg, sizeof db->errmsg, "not an error");
    *out = db;
    if (config_path) {
        CatError err;
        CatSettings settings;
        memset(&settings, 0, sizeof settings);
        int lrc = cat_load_config(db->cat, config_path, &settings, &err);
        snprintf(db->cost_file, sizeof db->cost_file, "%s", settings.cost_file);
        db->gpu_cache_bytes = settings.gpu_cache_bytes;
        if (lrc != 0) return gqp_set_error(db, GQP_ERROR, "%s", err.msg);
    }
    return GQP_OK;
}

int gqp_close(gqp *db) {
    if (!db) return GQP_OK;
    while (db->stmts)
        gqp_finalize(db->stmts);
    exec_device_close(db->dev);
    exec_pool_free(db->pool);
    cat_catalog_free(db->cat);
    free(db->cost);
    free(db->reads);
    free(db);
    return GQP_OK;
}

const char *gqp_errmsg(gqp *db) {
    return db ? db->errmsg : "out of memory";
}

int64_t gqp_error_offset(gqp *db) {
    return db ? db->err_offset : -1;
}

int gqp_set_device(gqp *db, gqp_device device) {
    if (!db) return GQP_MISUSE;
    if (device == GQP_DEVICE_GPU && !prim_gpu_available())
        return gqp_set_error(db, GQP_ERROR,
                             "Device Error: --device gpu needs a CUDA device, and none is usable "
                             "(%s)",
                             gqp_build_has_cuda() ? "no device found by the CUDA runtime"
                                                  : "gqp was built without CUDA");
    db->device = device;
    return GQP_OK;
}

const char *gqp_cost_model(gqp *db) {
    if (!db) return "none";
    const CostModel *m = gqp_cost(db);
    return m ? m->source : "none (out of memory)";
}

int gqp_set_threads(gqp *db, int nthreads) {
    if (!db || nthreads < 0) return GQP_MISUSE;
    db->nthreads = nthreads ? nthreads : prim_ncores();
    return GQP_OK;
}

/* Unlink st from its db's list of open statements. */
static void stmt_unlink(gqp_stmt *st) {
    gqp_stmt **p = &st->db->stmts;
    while (*p && *p != st)
        p = &(*p)->next;
    if (*p) *p = st->next;
}

int gqp_prepare(gqp *db, const char *sql, int64_t nbytes, gqp_stmt **stmt, const char **tail) {
    if (!db || !sql || !stmt) return GQP_MISUSE;
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
    /* keep our own copy of the statement's text: errors found when it is
     * stepped point into it */
    char *copy = plan_alloc(st->plan_arena, (size_t)next + 1);
    if (!copy) {
        gqp_stmt_destroy(st);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    memcpy(copy, sql, (size_t)next);
    st->sql = copy;
    st->sql_len = next;
    if (!st->ast) {
        gqp_stmt_destroy(st);
        return GQP_OK;
    }
    if (st->ast->kind == STMT_SELECT) {
        int rc = gqp_plan_select(db, st, st->ast->select);
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

int gqp_step(gqp_stmt *st) {
    if (!st) return GQP_MISUSE;
    gqp *db = st->db;
    if (!st->ran) {
        int rc;
        st->ran = 1;
        st->cursor = -1;
        if (st->ast->kind == STMT_SELECT && st->version != db->version) {
            /* a table changed since prepare (dictionaries and row counts
             * the plan captured are gone): plan again from the AST */
            plan_dag_free(st->dag);
            st->dag = NULL;
            rc = gqp_plan_select(db, st, st->ast->select);
            if (rc != GQP_OK) {
                st->ran = 0;
                return rc;
            }
        }
        switch (st->ast->kind) {
        case STMT_SELECT:
            rc = gqp_run_select(db, st);
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

int gqp_reset(gqp_stmt *st) {
    if (!st) return GQP_MISUSE;
    exec_result_free(&st->res);
    st->ran = 0;
    st->cursor = -1;
    return GQP_OK;
}

int gqp_finalize(gqp_stmt *st) {
    if (!st) return GQP_OK;
    stmt_unlink(st);
    gqp_stmt_destroy(st);
    return GQP_OK;
}

/* Free everything of st (not linked in any list any more). */
void gqp_stmt_destroy(gqp_stmt *st) {
    exec_result_free(&st->res);
    plan_dag_free(st->dag);
    plan_arena_free(st->plan_arena);
    sql_arena_free(st->parse_arena);
    free(st);
}

int gqp_column_count(gqp_stmt *st) {
    return st && st->dag ? st->dag->nresults : 0;
}

const char *gqp_column_name(gqp_stmt *st, int col) {
    if (!st || !st->dag || col < 0 || col >= st->dag->nresults) return NULL;
    return st->dag->result_names[col];
}

gqp_type gqp_column_type(gqp_stmt *st, int col) {
    if (!st || !st->dag || col < 0 || col >= st->dag->nresults) return GQP_TYPE_NULL;
    return (gqp_type)st->dag->values[st->dag->results[col]].ltype;
}

/* The result column col if a row is current, else NULL. */
static const ExecColumn *cur_col(gqp_stmt *st, int col) {
    if (!st || col < 0 || col >= st->res.ncols || st->cursor < 0 || st->cursor >= st->res.nrows)
        return NULL;
    return &st->res.cols[col];
}

int gqp_column_is_null(gqp_stmt *st, int col) {
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
        break;
    case PRIM_F32:
        *isf = 1, *f = ((const float *)c->vec.data)[row];
        break;
    case PRIM_F64:
        *isf = 1, *f = ((const double *)c->vec.data)[row];
        break;
    }
}

int64_t gqp_column_int64(gqp_stmt *st, int col) {
    const ExecColumn *c = cur_col(st, col);
    if (!c || (c->vec.valid && !c->vec.valid[st->cursor])) return 0;
    if (c->ltype == CAT_STRING) {
        return strtoll(cat_dict_str(c->dict, ((const int32_t *)c->vec.data)[st->cursor]), NULL, 10);
    }
    int isf;
    int64_t i;
    double f;
    cur_num(c, st->cursor, &isf, &i, &f);
    if (!isf) return i;
    /* SQLite's REAL -> INTEGER: truncation, saturating; a NaN (NULL in
     * SQLite, whose sqlite3_column_int64 then gives 0) gives 0 */
    if (f != f) return 0;
    if (f >= 9.2233720368547758e18) return INT64_MAX;
    if (f <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)f;
}

double gqp_column_double(gqp_stmt *st, int col) {
    const ExecColumn *c = cur_col(st, col);
    if (!c || (c->vec.valid && !c->vec.valid[st->cursor])) return 0;
    if (c->ltype == CAT_STRING)
        return strtod(cat_dict_str(c->dict, ((const int32_t *)c->vec.data)[st->cursor]), NULL);
    int isf;
    int64_t i;
    double f;
    cur_num(c, st->cursor, &isf, &i, &f);
    return isf ? f : (double)i;
}

const char *gqp_column_text(gqp_stmt *st, int col) {
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

int64_t gqp_result_rows(gqp_stmt *st) {
    return st && st->ran ? st->res.nrows : 0;
}

const void *gqp_result_column(gqp_stmt *st, int col, const uint8_t **valid) {
    if (valid) *valid = NULL;
    if (!st || !st->ran || col < 0 || col >= st->res.ncols) return NULL;
    if (valid) *valid = st->res.cols[col].vec.valid;
    return st->res.cols[col].vec.data;
}

const char *gqp_result_string(gqp_stmt *st, int col, int32_t code) {
    if (!st || !st->ran || col < 0 || col >= st->res.ncols) return NULL;
    const CatDict *d = st->res.cols[col].dict;
    if (!d || code < 0 || code >= d->n) return NULL;
    return cat_dict_str(d, code);
}

int64_t gqp_changes(gqp_stmt *st) {
    return st ? st->changes : 0;
}

double gqp_exec_ms(gqp_stmt *st) {
    return st ? st->exec_ms : 0;
}

int64_t gqp_peak_device_bytes(gqp_stmt *st) {
    return st ? (int64_t)st->stats.peak_device_bytes : 0;
}

int gqp_gpu_nodes(gqp_stmt *st, int *nnodes) {
    int g = 0, n = st && st->dag ? st->dag->nnodes : 0;
    for (int i = 0; i < n; i++)
        g += st->dag->nodes[i].device == DEV_GPU;
    if (nnodes) *nnodes = n;
    return g;
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

int gqp_gen_ssb(const char *dir, double sf, uint64_t seed, char **errmsg) {
    CatError err;
    if (errmsg) *errmsg = NULL;
    if (cat_gen_ssb(dir, sf, seed, &err) != 0) {
        if (errmsg) *errmsg = strdup(err.msg);
        return GQP_ERROR;
    }
    return GQP_OK;
}
