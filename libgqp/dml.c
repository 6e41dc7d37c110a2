/*
 * dml.c -- statements other than queries: CREATE TABLE, INSERT ... VALUES,
 * INSERT ... SELECT, and SET device / threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libgqp/internal.h"

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
    if (!names || !types) {
        free(names);
        free(types);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    for (int i = 0; i < a->ncols; i++) {
        names[i] = a->cols[i].name;
        const char *tn = a->cols[i].type_name;
        if (!tn || !*tn) {
            types[i] = CAT_INT64; /* untyped column */
        } else if (cat_type_parse(tn, &types[i]) != 0) {
            char msg[300];
            snprintf(msg, sizeof msg, "unknown type \"%s\"", tn);
            free(names);
            free(types);
            return gqp_set_error_at(db, st->sql, st->sql_len, a->cols[i].pos, "Catalog", msg);
        }
    }
    CatError err;
    int rc = cat_create_table(db->cat, a->table, a->ncols, names, types, &err);
    free(names);
    free(types);
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

/* INSERT INTO t [(cols)] SELECT ... : run the query, insert its rows. */
static int run_insert_select(gqp *db, gqp_stmt *st, CatTable *t) {
    int rc = gqp_replan(db, st); /* a fresh plan arena for every run */
    if (rc != GQP_OK) return rc;
    if ((rc = gqp_run_select(db, st)) != GQP_OK) return rc;
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
            const ExecColumn *c = &st->res.cols[map[k]];
            if (c->vec.valid && !c->vec.valid[r]) {
                v->kind = CAT_V_NULL;
                continue;
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
            } else if (c->ltype == CAT_DATE) {
                char *buf = textbuf + (r * t->ncols + k) * 32;
                cat_format_date((int32_t)v->i, buf);
                v->kind = CAT_V_STR;
                v->s = buf;
            }
        }
    }
    CatError err;
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
 * SET threads = N */
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
        gqp_device d = strcasecmp(v.s, "gpu") == 0   ? GQP_DEVICE_GPU
                       : strcasecmp(v.s, "cpu") == 0 ? GQP_DEVICE_CPU
                                                     : GQP_DEVICE_AUTO;
        if (strcasecmp(v.s, "gpu") && strcasecmp(v.s, "cpu") && strcasecmp(v.s, "auto"))
            rc = gqp_set_error(db, GQP_ERROR, "Binder Error: device must be cpu, gpu or auto");
        else
            rc = gqp_set_device(db, d);
    } else if (strcasecmp(a->set_name, "aggregate") == 0 && v.kind == CAT_V_STR) {
        int m = strcasecmp(v.s, "sort") == 0    ? LOWER_AGG_SORT
                : strcasecmp(v.s, "dense") == 0 ? LOWER_AGG_DENSE
                : strcasecmp(v.s, "auto") == 0  ? LOWER_AGG_AUTO
                                                : -1;
        if (m < 0) {
            rc =
                gqp_set_error(db, GQP_ERROR, "Binder Error: aggregate must be auto, sort or dense");
        } else {
            db->agg_mode = m;
            db->version++; /* prepared statements lower again */
        }
    } else if (strcasecmp(a->set_name, "threads") == 0 && v.kind == CAT_V_INT) {
        rc = gqp_set_threads(db, (int)v.i);
    } else {
        rc = gqp_set_error(db, GQP_ERROR, "Binder Error: unknown setting \"%s\"", a->set_name);
    }
    plan_arena_free(arena);
    return rc;
}

int gqp_run_other(gqp *db, gqp_stmt *st) {
    const AstStmt *a = st->ast;
    /* tables may change: columns cached on the GPU are stale, and prepared
     * plans must re-bind */
    if (a->kind != STMT_SET) {
        exec_device_invalidate(db->dev);
        gqp_forget_reads(db);
        db->version++;
    }
    switch (a->kind) {
    case STMT_CREATE_TABLE:
        return run_create(db, st);
    case STMT_INSERT: {
        CatTable *t = cat_find_table(db->cat, a->table);
        if (!t) {
            char msg[300];
            snprintf(msg, sizeof msg, "Table with name %s does not exist!", a->table);
            return gqp_set_error_at(db, st->sql, st->sql_len, a->table_pos, "Catalog", msg);
        }
        return a->select ? run_insert_select(db, st, t) : run_insert_values(db, st, t);
    }
    case STMT_SET:
        return run_set(db, st);
    case STMT_DROP_TABLE:
        return gqp_set_error(db, GQP_ERROR, "Not implemented Error: DROP TABLE");
    default:
        return gqp_set_error(db, GQP_ERROR, "Not implemented Error: statement");
    }
}
