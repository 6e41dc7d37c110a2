/*
 * dml.c -- statements other than queries: CREATE TABLE [AS SELECT], DROP
 * TABLE, CREATE / DROP INDEX, INSERT ... VALUES, INSERT ... SELECT,
 * UPDATE, DELETE, and SET device / threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libgqp/internal.h"

static void forget_columns(gqp *db, const CatTable *t, const int *cols, int n);

/* CREATE TABLE t(col type, ...). */
static int run_create(gqp *db, gqp_stmt *st) {
    const AstStmt *a = st->ast;
    if (cat_find_table(db->cat, a->table)) {
        if (a->if_not_exists) return GQP_OK;
        char msg[300];
        snprintf(msg, sizeof msg, "Table with name \"%s\" already exists!", a->table);
        return gqp_set_error_at(db, st->sql, st->sql_len, a->table_pos, "Catalog", msg);
    }
    const char **names = calloc((size_t)a->ncols + 1, sizeof(char *));
    CatType *types = calloc((size_t)a->ncols + 1, sizeof(CatType));
    int *prec = calloc((size_t)a->ncols + 1, sizeof(int));
    int *scale = calloc((size_t)a->ncols + 1, sizeof(int));
    if (!names || !types || !prec || !scale) {
        free(names);
        free(types);
        free(prec);
        free(scale);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    for (int i = 0; i < a->ncols; i++) {
        names[i] = a->cols[i].name;
        const char *tn = a->cols[i].type_name;
        if (!tn || !*tn) {
            types[i] = CAT_INT64; /* untyped column */
        } else if (cat_type_parse_dec(tn, &types[i], &prec[i], &scale[i]) != 0) {
            char msg[300];
            snprintf(msg, sizeof msg, "unknown type \"%s\"%s", tn, cat_type_hint(tn));
            free(names);
            free(types);
            free(prec);
            free(scale);
            return gqp_set_error_at(db, st->sql, st->sql_len, a->cols[i].pos, "Catalog", msg);
        }
    }
    CatError err;
    int rc = cat_create_table(db->cat, a->table, a->ncols, names, types, &err);
    if (rc == 0) cat_table_set_decimal(cat_find_table(db->cat, a->table), prec, scale);
    free(names);
    free(types);
    free(prec);
    free(scale);
    if (rc != 0) return gqp_set_error(db, GQP_ERROR, "%s", err.msg);
    return GQP_OK;
}

/* Map the INSERT column list to table columns: map[k] = value index for
 * table column k, or -1 (NULL). Returns 0 or an error code. */
static int insert_map(gqp *db, gqp_stmt *st, CatTable *t, int *map, int width) {
    const AstStmt *a = st->ast;
    if (!a->insert_cols) {
        if (width != t->ncols)
            return gqp_set_error(db, GQP_ERROR,
                                 "Binder Error: table %s has %d columns but %d values were "
                                 "supplied",
                                 t->name, t->ncols, width);
        for (int k = 0; k < t->ncols; k++)
            map[k] = k;
        return GQP_OK;
    }
    if (a->ninsert_cols != width)
        return gqp_set_error(db, GQP_ERROR, "Binder Error: %d columns named but %d values supplied",
                             a->ninsert_cols, width);
    for (int k = 0; k < t->ncols; k++)
        map[k] = -1;
    for (int i = 0; i < a->ninsert_cols; i++) {
        int c = cat_find_column(t, a->insert_cols[i]);
        if (c < 0)
            return gqp_set_error(db, GQP_ERROR, "Binder Error: table %s has no column named %s",
                                 t->name, a->insert_cols[i]);
        map[c] = i;
    }
    return GQP_OK;
}

/* INSERT INTO t [(cols)] VALUES (...), ... */
static int run_insert_values(gqp *db, gqp_stmt *st, CatTable *t) {
    const AstStmt *a = st->ast;
    int *map = calloc((size_t)t->ncols + 1, sizeof(int));
    CatValue *vals = calloc((size_t)(a->nrows * t->ncols) + 1, sizeof(CatValue));
    PlanArena *arena = plan_arena_new();
    int rc = GQP_OK;
    if (!map || !vals || !arena) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = insert_map(db, st, t, map, a->row_width)) != GQP_OK) goto done;
    for (int64_t r = 0; r < a->nrows; r++) {
        for (int k = 0; k < t->ncols; k++) {
            CatValue *v = &vals[r * t->ncols + k];
            if (map[k] < 0) {
                v->kind = CAT_V_NULL;
                continue;
            }
            const AstExpr *e = a->rows[r][map[k]];
            BExpr *be;
            PlanError perr;
            memset(&perr, 0, sizeof perr);
            if (plan_bind_const(st->sql, e, arena, &be, &perr) != 0) {
                rc = gqp_set_error_at(db, st->sql, st->sql_len, perr.offset, perr.stage, perr.msg);
                goto done;
            }
            if (plan_eval_const(be, v, arena) != 0) {
                rc = gqp_set_error_at(db, st->sql, st->sql_len, e->pos, "Binder",
                                      "VALUES needs constant expressions");
                goto done;
            }
        }
    }
    CatError err;
    forget_columns(db, t, NULL, 0);
    if (cat_insert_rows(t, a->nrows, vals, &err) != 0) {
        rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
        goto done;
    }
    st->changes = a->nrows;
done:
    free(map);
    free(vals);
    plan_arena_free(arena);
    return rc;
}

/* Value of row r of result column c as an INSERT value; a DATE or DECIMAL
 * is written as text into buf (>= 32 bytes), or with raw as its stored
 * value (CAT_V_RAW, for a column made at c's scale); a STRING points into
 * c's dictionary. */
static void result_value(const ExecColumn *c, int64_t r, char *buf, CatValue *v, int raw) {
    memset(v, 0, sizeof *v);
    if (c->vec.valid && !c->vec.valid[r]) {
        v->kind = CAT_V_NULL;
        return;
    }
    switch (c->vec.type) {
    case PRIM_U8:
        v->kind = CAT_V_INT, v->i = ((uint8_t *)c->vec.data)[r];
        break;
    case PRIM_I32:
        v->kind = CAT_V_INT, v->i = ((int32_t *)c->vec.data)[r];
        break;
    case PRIM_I64:
        v->kind = CAT_V_INT, v->i = ((int64_t *)c->vec.data)[r];
        break;
    case PRIM_F32:
        v->kind = CAT_V_FLOAT, v->f = ((float *)c->vec.data)[r];
        break;
    case PRIM_F64:
        v->kind = CAT_V_FLOAT, v->f = ((double *)c->vec.data)[r];
        break;
    }
    if (c->ltype == CAT_STRING) {
        v->kind = CAT_V_STR;
        v->s = cat_dict_str(c->dict, v->i);
    } else if (raw && (c->ltype == CAT_DATE || c->ltype == CAT_DECIMAL)) {
        v->kind = CAT_V_RAW; /* a column made at the result's scale */
    } else if (c->ltype == CAT_DATE) {
        cat_format_date((int32_t)v->i, buf);
        v->kind = CAT_V_STR;
        v->s = buf;
    } else if (c->ltype == CAT_DECIMAL) {
        cat_format_decimal(v->i, c->scale, buf, 32);
        v->kind = CAT_V_STR;
        v->s = buf;
    }
}

/* Forget what the GPU column cache and the read counts hold of columns
 * cols[0..n) of t (every column when cols is NULL): call just before they
 * change or are freed. Other tables' cached columns stay resident. */
static void forget_columns(gqp *db, const CatTable *t, const int *cols, int n) {
    gqp_cluster_forget(db, t); /* its key-ordered copies (cluster.c) */
    if (!cols) n = t->ncols;
    for (int k = 0; k < n; k++) {
        const CatColumn *c = &t->cols[cols ? cols[k] : k];
        const void *data = c->data;
        exec_device_forget(db->dev, data, -1);
        exec_device_forget(db->dev, c->valid, -1); /* a page-locked range of it */
        if (c->dict) { /* a LIKE's copy of the dictionary (DN_DICTLIKE) */
            exec_device_forget(db->dev, c->dict->bytes, -1);
            exec_device_forget(db->dev, c->dict->offsets, -1);
        }
        for (int i = 0; i < db->nreads; i++)
            if (db->reads[i].data == data) {
                db->reads[i--] = db->reads[--db->nreads];
                db->reads_epoch++;
            }
    }
}

/* INSERT INTO t [(cols)] SELECT ... : run the query, insert its rows. */
static int run_insert_select(gqp *db, gqp_stmt *st, CatTable *t) {
    int rc = gqp_replan(db, st); /* a fresh plan arena for every run */
    if (rc != GQP_OK) return rc;
    if ((rc = gqp_run_select(db, st)) != GQP_OK) return rc;
    if ((rc = gqp_no_reals(db, &st->res, "rows to insert")) != GQP_OK) return rc;
    int width = st->res.ncols;
    int64_t n = st->res.nrows;
    int *map = calloc((size_t)t->ncols + 1, sizeof(int));
    CatValue *vals = calloc((size_t)(n * t->ncols) + 1, sizeof(CatValue));
    char *textbuf = malloc((size_t)(n * t->ncols) * 32 + 1);
    if (!map || !vals || !textbuf) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = insert_map(db, st, t, map, width)) != GQP_OK) goto done;
    for (int64_t r = 0; r < n; r++) {
        for (int k = 0; k < t->ncols; k++) {
            CatValue *v = &vals[r * t->ncols + k];
            if (map[k] < 0) {
                v->kind = CAT_V_NULL;
                continue;
            }
            result_value(&st->res.cols[map[k]], r, textbuf + (r * t->ncols + k) * 32, v, 0);
        }
    }
    CatError err;
    forget_columns(db, t, NULL, 0);
    if (cat_insert_rows(t, n, vals, &err) != 0) {
        rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
        goto done;
    }
    st->changes = n;
done:
    exec_result_free(&st->res);
    plan_dag_free(st->dag);
    st->dag = NULL;
    free(map);
    free(vals);
    free(textbuf);
    return rc;
}

/* SET device = 'cpu'|'gpu'|'auto' ; SET aggregate = 'auto'|'sort'|'dense' ;
 * SET threads = N ; SET gpu_cache = 'clear' (drop every resident column and
 * the read counts) ; SET memory_limit = '2GB'|'25%'|'none'|N (bytes) ;
 * SET chunk_rows = N (chunked execution in chunks of N rows; 0: off) ;
 * SET chunk_cluster = 'off'|'auto'|'on' (chunks through key-ordered copies) ;
 * SET mapped_columns = 'off'|'auto'|'on' (GPU reads of columns in place) */
static int run_set(gqp *db, gqp_stmt *st) {
    const AstStmt *a = st->ast;
    PlanArena *arena = plan_arena_new();
    if (!arena) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    BExpr *be;
    PlanError perr;
    CatValue v;
    int rc = GQP_OK;
    memset(&perr, 0, sizeof perr);
    if (plan_bind_const(st->sql, a->set_value, arena, &be, &perr) != 0) {
        rc = gqp_set_error_at(db, st->sql, st->sql_len, perr.offset, perr.stage, perr.msg);
    } else if (plan_eval_const(be, &v, arena) != 0) {
        rc = gqp_set_error(db, GQP_ERROR, "Binder Error: SET needs a constant");
    } else if (strcasecmp(a->set_name, "device") == 0 && v.kind == CAT_V_STR) {
        int d = gqp_device_mode(v.s);
        if (d < 0)
            rc = gqp_set_error(db, GQP_ERROR, "Binder Error: device must be cpu, gpu or auto");
        else
            rc = gqp_set_device(db, (gqp_device)d);
    } else if (strcasecmp(a->set_name, "aggregate") == 0 && v.kind == CAT_V_STR) {
        int m = gqp_agg_mode(v.s);
        if (m < 0) {
            rc =
                gqp_set_error(db, GQP_ERROR, "Binder Error: aggregate must be auto, sort or dense");
        } else {
            db->agg_mode = m;
            db->version++; /* prepared statements lower again */
        }
    } else if (strcasecmp(a->set_name, "gpu_cache") == 0 && v.kind == CAT_V_STR &&
               strcasecmp(v.s, "clear") == 0) {
        exec_device_invalidate(db->dev); /* benchmarks' cold runs */
        gqp_forget_reads(db);
    } else if (strcasecmp(a->set_name, "memory_limit") == 0 &&
               (v.kind == CAT_V_STR || v.kind == CAT_V_INT)) {
        char num[32];
        if (v.kind == CAT_V_INT) snprintf(num, sizeof num, "%lld", (long long)v.i);
        rc = v.kind == CAT_V_INT && v.i < 0
                 ? gqp_set_error(db, GQP_ERROR, "Binder Error: memory_limit must not be negative")
                 : gqp_set_memory_limit(db, v.kind == CAT_V_STR ? v.s : num);
    } else if (strcasecmp(a->set_name, "chunk_rows") == 0 && v.kind == CAT_V_INT) {
        if (v.i < 0)
            rc = gqp_set_error(db, GQP_ERROR, "Binder Error: chunk_rows must not be negative");
        else
            db->chunk_rows = v.i; /* chunk.c; 0 = whole */
    } else if (strcasecmp(a->set_name, "chunk_cluster") == 0 && v.kind == CAT_V_STR) {
        int m = gqp_chunk_cluster_mode(v.s);
        if (m < 0)
            rc =
                gqp_set_error(db, GQP_ERROR, "Binder Error: chunk_cluster must be off, auto or on");
        else
            db->chunk_cluster = m; /* cluster.c, chunk.c */
    } else if (strcasecmp(a->set_name, "mapped_columns") == 0 && v.kind == CAT_V_STR) {
        int m = gqp_chunk_cluster_mode(v.s);
        if (m < 0)
            rc = gqp_set_error(db, GQP_ERROR,
                               "Binder Error: mapped_columns must be off, auto or on");
        else
            db->mapped = m; /* chunk.c (gqp_mark_mapped), the executor */
    } else if (strcasecmp(a->set_name, "threads") == 0 && v.kind == CAT_V_INT) {
        rc = gqp_set_threads(db, (int)v.i);
    } else {
        rc = gqp_set_error(db, GQP_ERROR, "Binder Error: unknown setting \"%s\"", a->set_name);
    }
    plan_arena_free(arena);
    return rc;
}

/* Plan and run sel (a SELECT the statement made up) in a fresh plan arena;
 * its rows are in st->res, to be released with release_select(). UPDATE
 * and DELETE may not use aggregates (as in SQLite). */
static int run_inner_select(gqp *db, gqp_stmt *st, const AstSelect *sel, const char *what) {
    plan_dag_free(st->dag);
    st->dag = NULL;
    st->bound = NULL;
    plan_arena_free(st->plan_arena);
    if (!(st->plan_arena = plan_arena_new())) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    int rc = gqp_plan_select(db, st, sel);
    if (rc != GQP_OK) return rc;
    if (what && st->bound->has_agg)
        return gqp_set_error(db, GQP_ERROR,
                             "Binder Error: aggregate functions are not allowed in %s", what);
    rc = gqp_run_select(db, st);
    return rc == GQP_OK ? gqp_no_reals(db, &st->res, what ? what : "a statement's input") : rc;
}

/* Release what run_inner_select left in st. */
static void release_select(gqp_stmt *st) {
    exec_result_free(&st->res);
    plan_dag_free(st->dag);
    st->dag = NULL;
    st->bound = NULL;
}

/* SELECT items[0..n) FROM table [WHERE where], built in the parse arena
 * for UPDATE / DELETE. NULL when out of memory. */
static AstSelect *made_select(gqp_stmt *st, AstExpr **items, int n, AstExpr *where) {
    const AstStmt *a = st->ast;
    AstSelect *sel = sql_arena_alloc(st->parse_arena, sizeof *sel);
    AstTableRef *from = sql_arena_alloc(st->parse_arena, sizeof *from);
    AstSelectItem *it = sql_arena_alloc(st->parse_arena, sizeof *it * (size_t)(n ? n : 1));
    if (!sel || !from || !it) return NULL;
    from->name = a->table;
    from->pos = a->table_pos;
    for (int i = 0; i < n; i++)
        it[i].expr = items[i];
    sel->items = it;
    sel->nitems = n;
    sel->from = from;
    sel->nfrom = 1;
    sel->where = where;
    return sel;
}

/* 1 when row r of result column c is a true condition (SQLite: a non-zero
 * number; NULL is not true). */
static int result_true(const ExecColumn *c, int64_t r) {
    CatValue v;
    char buf[32];
    result_value(c, r, buf, &v, 0);
    switch (v.kind) {
    case CAT_V_INT:
        return c->ltype == CAT_STRING ? cat_text_to_real(v.s) != 0 : v.i != 0;
    case CAT_V_FLOAT:
        return v.f != 0;
    case CAT_V_STR:
        return cat_text_to_real(v.s) != 0;
    default:
        return 0;
    }
}

/* The rows of t that the statement's WHERE selects: flags[r] = 1 (every
 * row without a WHERE), evaluated by the planner and executor as
 * SELECT where FROM t (one value per row, in table order). *m counts them.
 * flags is malloc'ed (the caller frees it). */
static int where_rows(gqp *db, gqp_stmt *st, CatTable *t, const char *what, uint8_t **flags,
                      int64_t *m) {
    const AstStmt *a = st->ast;
    int64_t n = t->nrows;
    *flags = malloc((size_t)(n ? n : 1));
    if (!*flags) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    if (!a->where) {
        memset(*flags, 1, (size_t)(n ? n : 1));
        *m = n;
        return GQP_OK;
    }
    AstExpr *w = a->where;
    AstSelect *sel = made_select(st, &w, 1, NULL);
    if (!sel) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    int rc = run_inner_select(db, st, sel, what);
    if (rc == GQP_OK && st->res.nrows != n)
        rc = gqp_set_error(db, GQP_ERROR, "Execution Error: %s: WHERE gave %lld rows for %lld",
                           what, (long long)st->res.nrows, (long long)n);
    *m = 0;
    for (int64_t r = 0; rc == GQP_OK && r < n; r++)
        *m += (*flags)[r] = (uint8_t)result_true(&st->res.cols[0], r);
    release_select(st);
    return rc;
}

/* UPDATE t SET c = e, ... [WHERE w]: the matching rows come from SELECT w
 * FROM t, their new values from SELECT e, ... FROM t WHERE w (both through
 * the planner and executor, on the placed device); then the catalog
 * rebuilds the assigned columns and swaps them in (all or nothing), and
 * only those columns leave the GPU column cache. */
static int run_update(gqp *db, gqp_stmt *st, CatTable *t) {
    const AstStmt *a = st->ast;
    int nset = 0, rc;
    int *cols = malloc(sizeof(int) * (size_t)a->nset);
    int *which = malloc(sizeof(int) * (size_t)a->nset); /* set item of each cols[j] */
    uint8_t *flags = NULL;
    int64_t *rows = NULL, m = 0;
    CatValue *vals = NULL;
    char *textbuf = NULL;
    if (!cols || !which) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < a->nset; i++) {
        int c = cat_find_column(t, a->set_cols[i]);
        if (c < 0) {
            char msg[300];
            snprintf(msg, sizeof msg, "no such column: %s", a->set_cols[i]);
            rc = gqp_set_error_at(db, st->sql, st->sql_len, a->set_pos[i], "Binder", msg);
            goto done;
        }
        int j = 0;
        while (j < nset && cols[j] != c)
            j++;
        cols[j] = c;
        which[j] = i; /* SET a = 1, a = 2: the last one wins, as in SQLite */
        if (j == nset) nset++;
    }
    if ((rc = where_rows(db, st, t, "UPDATE", &flags, &m)) != GQP_OK) goto done;
    st->changes = 0;
    if (m == 0) goto done;
    AstExpr **items = sql_arena_alloc(st->parse_arena, sizeof *items * (size_t)nset);
    for (int j = 0; items && j < nset; j++)
        items[j] = a->set_exprs[which[j]];
    AstSelect *sel = items ? made_select(st, items, nset, a->where) : NULL;
    rows = malloc(sizeof *rows * (size_t)m);
    vals = calloc((size_t)(m * nset), sizeof *vals);
    textbuf = malloc((size_t)(m * nset) * 32 + 1);
    if (!sel || !rows || !vals || !textbuf) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = run_inner_select(db, st, sel, "UPDATE")) != GQP_OK) {
        release_select(st);
        goto done;
    }
    if (st->res.nrows != m) {
        rc = gqp_set_error(db, GQP_ERROR, "Execution Error: UPDATE: %lld new rows for %lld matches",
                           (long long)st->res.nrows, (long long)m);
        release_select(st);
        goto done;
    }
    for (int64_t r = 0, k = 0; r < t->nrows; r++)
        if (flags[r]) rows[k++] = r;
    for (int64_t k = 0; k < m; k++)
        for (int j = 0; j < nset; j++)
            result_value(&st->res.cols[j], k, textbuf + (k * nset + j) * 32, &vals[k * nset + j],
                         0);
    CatError err;
    forget_columns(db, t, cols, nset);
    if (cat_update_rows(t, nset, cols, m, rows, vals, &err) != 0)
        rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
    else
        st->changes = m;
    release_select(st);
done:
    free(cols);
    free(which);
    free(flags);
    free(rows);
    free(vals);
    free(textbuf);
    return rc;
}

/* DELETE FROM t [WHERE w]: the rows come from SELECT w FROM t; the catalog
 * rebuilds every column without them and swaps them in (all or nothing). */
static int run_delete(gqp *db, gqp_stmt *st, CatTable *t) {
    uint8_t *flags = NULL;
    int64_t m = 0;
    int rc = where_rows(db, st, t, "DELETE", &flags, &m);
    st->changes = 0;
    if (rc == GQP_OK && m > 0) {
        CatError err;
        forget_columns(db, t, NULL, 0);
        if (cat_delete_rows(t, flags, &err) != 0)
            rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
        else
            st->changes = m;
    }
    free(flags);
    return rc;
}

/* Entry j of the name array ud (plan_unique_name's callback). */
static const char *name_at(const void *ud, int j) {
    return ((char *const *)ud)[j];
}

/* Result column c as column col's stored values (cat_host_alloc'd) into
 * *data / *valid (NULL when c has no NULL). GQP_OK or GQP_NOMEM. */
static int column_from_result(gqp *db, const CatColumn *col, const ExecColumn *c, int64_t n,
                              void **data, uint8_t **valid) {
    size_t w = cat_type_width(col->type);
    *data = cat_host_alloc((size_t)(n ? n : 1) * w);
    *valid = NULL;
    if (!*data) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    const void *src = c->vec.data;
    int t = c->vec.type;
    int isf = col->type == CAT_FLOAT32 || col->type == CAT_FLOAT64;
    if (n > 0 && !src) { /* all NULL (an all-NULL expression) */
        memset(*data, 0, (size_t)n * w);
    } else if ((w == 4 && t == PRIM_I32 && !isf) || (w == 8 && t == PRIM_I64 && !isf) ||
               (col->type == CAT_FLOAT64 && t == PRIM_F64) ||
               (col->type == CAT_FLOAT32 && t == PRIM_F32)) {
        memcpy(*data, src, (size_t)n * w);
    } else {
        for (int64_t r = 0; r < n; r++) {
            double f = t == PRIM_F64   ? ((const double *)src)[r]
                       : t == PRIM_F32 ? ((const float *)src)[r]
                                       : 0;
            int64_t i = t == PRIM_U8    ? ((const uint8_t *)src)[r]
                        : t == PRIM_I32 ? ((const int32_t *)src)[r]
                        : t == PRIM_I64 ? ((const int64_t *)src)[r]
                                        : (int64_t)f;
            if (t != PRIM_F64 && t != PRIM_F32) f = (double)i;
            switch (col->type) {
            case CAT_FLOAT32:
                ((float *)*data)[r] = (float)f;
                break;
            case CAT_FLOAT64:
                ((double *)*data)[r] = f;
                break;
            case CAT_BOOL:
                ((uint8_t *)*data)[r] = (uint8_t)(i != 0);
                break;
            case CAT_INT32:
            case CAT_DATE:
                ((int32_t *)*data)[r] = (int32_t)i;
                break;
            default:
                ((int64_t *)*data)[r] = i;
                break;
            }
        }
    }
    if (c->vec.valid || (n > 0 && !src)) {
        if (!(*valid = cat_host_alloc((size_t)(n ? n : 1)))) {
            cat_host_free(*data);
            *data = NULL;
            return gqp_set_error(db, GQP_NOMEM, "out of memory");
        }
        if (src && c->vec.valid)
            memcpy(*valid, c->vec.valid, (size_t)n);
        else
            memset(*valid, 0, (size_t)(n ? n : 1));
    }
    return GQP_OK;
}

/* Fill t (just created from res's columns, no STRING among them) with
 * res's rows, column by column. */
static int adopt_result(gqp *db, CatTable *t, const ExecResult *res) {
    void **data = calloc((size_t)t->ncols + 1, sizeof *data);
    uint8_t **valid = calloc((size_t)t->ncols + 1, sizeof *valid);
    int rc = data && valid ? GQP_OK : gqp_set_error(db, GQP_NOMEM, "out of memory");
    for (int i = 0; rc == GQP_OK && i < t->ncols; i++)
        rc = column_from_result(db, &t->cols[i], &res->cols[i], res->nrows, &data[i], &valid[i]);
    CatError err;
    if (rc == GQP_OK && cat_table_adopt(t, res->nrows, data, valid, &err) != 0)
        rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
    if (rc != GQP_OK)
        for (int i = 0; data && valid && i < t->ncols; i++) {
            cat_host_free(data[i]);
            cat_host_free(valid[i]);
        }
    free(data);
    free(valid);
    return rc;
}

int gqp_table_from_result(gqp *db, const ExecResult *res, char *const *result_names,
                          const char *name, char *const *colnames, int ncolnames) {
    int nc = res->ncols, rc = gqp_no_reals(db, res, "a table's rows");
    if (rc != GQP_OK) return rc;
    int64_t n = res->nrows;
    if (colnames && ncolnames != nc)
        return gqp_set_error(db, GQP_ERROR, "Binder Error: table %s has %d values for %d columns",
                             name, nc, ncolnames);
    char **names = calloc((size_t)nc + 1, sizeof *names);
    CatType *types = calloc((size_t)nc + 1, sizeof *types);
    CatValue *vals = NULL;
    char *textbuf = NULL;
    int text = 0; /* a STRING column: row by row, through the dictionary */
    for (int i = 0; i < nc; i++)
        text |= res->cols[i].ltype == CAT_STRING;
    if (text) {
        vals = calloc((size_t)(n * nc) + 1, sizeof *vals);
        textbuf = malloc((size_t)(n * nc) * 32 + 1);
    }
    if (!names || !types || (text && (!vals || !textbuf))) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < nc; i++) {
        const char *base = colnames ? colnames[i] : result_names[i];
        size_t len = strlen(base) + 16;
        if (!(names[i] = malloc(len))) {
            rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
            goto done;
        }
        plan_unique_name(names[i], len, base, i, name_at, names);
        types[i] = res->cols[i].ltype == CAT_NULL ? CAT_INT64 : res->cols[i].ltype;
    }
    for (int64_t r = 0; text && r < n; r++)
        for (int i = 0; i < nc; i++)
            result_value(&res->cols[i], r, textbuf + (r * nc + i) * 32, &vals[r * nc + i], 1);
    CatError err;
    if (cat_create_table(db->cat, name, nc, (const char *const *)names, types, &err) != 0) {
        rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
        goto done;
    }
    for (int i = 0; i < nc; i++) {
        CatColumn *col = &cat_find_table(db->cat, name)->cols[i];
        col->prec = CAT_DEC_MAX_PREC;
        col->scale = res->cols[i].scale;
    }
    if (!text) { /* the result's arrays as they are, column by column */
        if ((rc = adopt_result(db, cat_find_table(db->cat, name), res)) != GQP_OK)
            cat_drop_table(db->cat, name, NULL);
        goto done;
    }
    if (cat_insert_rows(cat_find_table(db->cat, name), n, vals, &err) != 0) {
        rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
        cat_drop_table(db->cat, name, NULL);
        goto done;
    }
done:
    for (int i = 0; names && i < nc; i++)
        free(names[i]);
    free(names);
    free(types);
    free(vals);
    free(textbuf);
    return rc;
}

void gqp_forget_table(gqp *db, const CatTable *t) {
    forget_columns(db, t, NULL, 0);
}

/* CREATE TABLE t AS SELECT ...: run the query, create t with its column
 * names (a repeated name gets ":1", ":2", ... as in SQLite) and types,
 * insert its rows; on any error t does not exist. */
static int run_ctas(gqp *db, gqp_stmt *st) {
    const AstStmt *a = st->ast;
    int rc = run_inner_select(db, st, a->select, NULL);
    if (rc == GQP_OK)
        rc = gqp_table_from_result(db, &st->res, st->dag->result_names, a->table, NULL, 0);
    if (rc == GQP_OK) st->changes = st->res.nrows;
    release_select(st);
    return rc;
}

/* Error for a missing table t at the statement's table name. */
static int no_table(gqp *db, gqp_stmt *st) {
    char msg[300];
    snprintf(msg, sizeof msg, "Table with name %s does not exist!", st->ast->table);
    return gqp_set_error_at(db, st->sql, st->sql_len, st->ast->table_pos, "Catalog", msg);
}

/* CREATE [UNIQUE] INDEX [IF NOT EXISTS] i ON t(cols): metadata, checked
 * against the data when UNIQUE. */
static int run_create_index(gqp *db, gqp_stmt *st) {
    const AstStmt *a = st->ast;
    if (cat_find_index(db->cat, a->index_name, NULL) && a->if_not_exists) return GQP_OK;
    CatTable *t = cat_find_table(db->cat, a->table);
    if (!t) return no_table(db, st);
    int *cols = malloc(sizeof(int) * (size_t)a->ninsert_cols);
    if (!cols) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    int rc = GQP_OK;
    for (int i = 0; i < a->ninsert_cols && rc == GQP_OK; i++)
        if ((cols[i] = cat_find_column(t, a->insert_cols[i])) < 0)
            rc = gqp_set_error(db, GQP_ERROR, "Binder Error: table %s has no column named %s",
                               t->name, a->insert_cols[i]);
    CatError err;
    if (rc == GQP_OK && cat_table_ready(t) != 0) rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
    if (rc == GQP_OK &&
        cat_create_index(db->cat, t, a->index_name, a->ninsert_cols, cols, a->unique, &err) != 0)
        rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
    free(cols);
    return rc;
}

/* gqp_run_other's statement, in memory. */
static int run_other_mem(gqp *db, gqp_stmt *st) {
    const AstStmt *a = st->ast;
    /* tables may change: prepared plans must re-bind; each statement
     * below drops from the GPU column cache exactly the columns it changes
     * (forget_columns), just before changing them */
    if (a->kind != STMT_SET) db->version++;
    CatTable *t = NULL;
    if (a->kind == STMT_INSERT || a->kind == STMT_UPDATE || a->kind == STMT_DELETE) {
        if (!(t = cat_find_table(db->cat, a->table))) return no_table(db, st);
    }
    switch (a->kind) {
    case STMT_CREATE_TABLE:
        if (gqp_is_view(db, a->table)) {
            if (a->if_not_exists) return GQP_OK;
            char msg[300];
            snprintf(msg, sizeof msg, "view %s already exists", a->table);
            return gqp_set_error_at(db, st->sql, st->sql_len, a->table_pos, "Catalog", msg);
        }
        if (a->select && cat_find_table(db->cat, a->table) && a->if_not_exists) return GQP_OK;
        return a->select ? run_ctas(db, st) : run_create(db, st);
    case STMT_INSERT:
        return a->select ? run_insert_select(db, st, t) : run_insert_values(db, st, t);
    case STMT_UPDATE:
        return run_update(db, st, t);
    case STMT_DELETE:
        return run_delete(db, st, t);
    case STMT_SET:
        return run_set(db, st);
    case STMT_DROP_TABLE: {
        t = cat_find_table(db->cat, a->table);
        if (!t) return a->if_not_exists ? GQP_OK : no_table(db, st);
        forget_columns(db, t, NULL, 0);
        CatError err;
        if (cat_drop_table(db->cat, a->table, &err) != 0)
            return gqp_set_error(db, GQP_ERROR, "%s", err.msg);
        return GQP_OK;
    }
    case STMT_CREATE_INDEX:
        return run_create_index(db, st);
    case STMT_CREATE_VIEW:
    case STMT_DROP_VIEW:
        return gqp_run_view(db, st);
    case STMT_DROP_INDEX: {
        if (!cat_find_index(db->cat, a->index_name, NULL)) {
            if (a->if_not_exists) return GQP_OK;
            char msg[300];
            snprintf(msg, sizeof msg, "no such index: %s", a->index_name);
            return gqp_set_error_at(db, st->sql, st->sql_len, a->index_pos, "Catalog", msg);
        }
        CatError err;
        if (cat_drop_index(db->cat, a->index_name, &err) != 0)
            return gqp_set_error(db, GQP_ERROR, "%s", err.msg);
        return GQP_OK;
    }
    default:
        return gqp_set_error(db, GQP_ERROR, "Not implemented Error: statement");
    }
}

/* Run a statement other than a query; in a database folder, a change to
 * a stored table, index or view is then made durable (store.c). */
int gqp_run_other(gqp *db, gqp_stmt *st) {
    int rc = run_other_mem(db, st);
    return rc == GQP_OK ? gqp_store_after(db, st) : rc;
}
