/*
 * subquery.c -- derived tables (FROM (SELECT ...) d), non-recursive CTEs
 * (WITH) and views. A derived table is bound and lowered inline, into the
 * DAG of the query that names it (planner/bind.c, operators/scan.c); here
 * only its own FROM and subqueries are prepared. A CTE or view reference
 * (and a derived table whose result has text made at run time, which the
 * binder cannot describe) is materialized once per plan: its
 * SELECT runs through the normal pipeline (bind, lower, place, execute) and
 * its rows become a temporary catalog table, owned by the statement that
 * names it, which the outer query then binds like a base table. The
 * temporaries are dropped when the statement is planned again or
 * finalized.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libgqp/internal.h"

/* The CTEs whose materialization is under way, innermost first. */
typedef struct GqpBusy {
    const AstCte *cte;
    const struct GqpBusy *next;
} GqpBusy;

void gqp_explain_note(gqp_stmt *st, const char *s) {
    size_t a = st->mat_explain ? strlen(st->mat_explain) : 0, b = strlen(s);
    char *t = realloc(st->mat_explain, a + b + 1);
    if (!t) return; /* only the EXPLAIN note is lost */
    memcpy(t + a, s, b + 1);
    st->mat_explain = t;
}

void gqp_drop_temps(gqp *db, gqp_stmt *st) {
    for (int i = 0; i < st->ntemps; i++) {
        CatTable *t = cat_find_table(db->cat, st->temps[i]);
        if (t) {
            gqp_forget_table(db, t);
            cat_drop_table(db->cat, st->temps[i], NULL);
        }
        free(st->temps[i]);
    }
    free(st->temps);
    st->temps = NULL;
    st->ntemps = 0;
    gqp_files_forget(st);
    free(st->mat_explain);
    st->mat_explain = NULL;
}

/* Free a child statement made by run_child. */
static void child_free(gqp *db, gqp_stmt *child) {
    if (!child) return;
    gqp_drop_temps(db, child);
    exec_result_free(&child->res);
    free(child->chunk_note);
    plan_dag_free(child->dag);
    plan_arena_free(child->plan_arena);
    free(child);
}

/* Plan and run sel (text sql[0..len), AST positions into it) with the CTEs
 * of scope visible, as a child of st; *out gets the child (its rows in
 * res, its plan in dag; free with child_free) also on error (or NULL). */
static int run_child(gqp *db, gqp_stmt *st, const char *sql, int64_t len, AstSelect *sel,
                     const GqpScope *scope, gqp_stmt **out) {
    gqp_stmt *child = *out = calloc(1, sizeof *child);
    if (!child) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    child->db = db;
    child->parent = st;
    child->sql = sql;
    child->sql_len = len;
    child->placed_device = -1;
    child->profile = st->profile; /* EXPLAIN ANALYZE times the subplans too */
    child->ast = st->ast;
    child->parse_arena = st->parse_arena; /* shared (views parse into it); st frees it */
    if (!(child->plan_arena = plan_arena_new()))
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    const GqpScope *saved = db->scope;
    db->scope = scope;
    int rc = gqp_plan_select(db, child, sel);
    db->scope = saved;
    if (rc == GQP_OK) rc = gqp_run_select(db, child);
    if (rc == GQP_OK) rc = gqp_no_reals(db, &child->res, "a subquery's rows");
    return rc;
}

static AstExpr *find_col_sel(AstSelect *s, int64_t pos);

/* A Binder Error of a subquery (or of a derived table decorrelation made)
 * at a column that an enclosing query two or more levels out has: a
 * correlation gqp does not unnest yet, said as such (not "table not
 * found"). Returns rc, or the new error's code. */
static int deep_correlation(gqp *db, gqp_stmt *st, const char *sql, int64_t len, AstSelect *sel,
                            int rc) {
    if (rc != GQP_ERROR || strncmp(db->errmsg, "Binder Error", 12) != 0 || !st->ast ||
        !st->ast->select || sel == st->ast->select)
        return rc;
    AstExpr *c = find_col_sel(sel, db->err_offset);
    if (!c || !gqp_resolves_in(db, st->ast->select, c)) return rc;
    return gqp_set_error_at(db, sql, len, c->pos, "Not implemented",
                            "correlated subquery (a column of an enclosing query more than one "
                            "level out)");
}

/* Run sel (see run_child) and store its rows in a new temporary table
 * owned by st; its name goes to *out (st-owned). what / label describe it
 * for EXPLAIN. */
static int materialize_one(gqp *db, gqp_stmt *st, const char *sql, int64_t len, AstSelect *sel,
                           const GqpScope *scope, char *const *cols, int ncols, const char *what,
                           const char *label, char **out) {
    char name[64];
    snprintf(name, sizeof name, "__gqp_temp_%llu", (unsigned long long)++db->ntemps);
    char **g = realloc(st->temps, sizeof *g * (size_t)(st->ntemps + 1));
    if (!g) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    st->temps = g;
    gqp_stmt *child = NULL;
    double t0 = gqp_wall_ms();
    int rc = run_child(db, st, sql, len, sel, scope, &child);
    double ms = gqp_wall_ms() - t0;
    rc = deep_correlation(db, st, sql, len, sel, rc);
    if (rc == GQP_OK && cols && ncols != child->res.ncols)
        rc = gqp_set_error(db, GQP_ERROR, "Binder Error: expected %d columns for '%s' but got %d",
                           ncols, label, child->res.ncols);
    if (rc == GQP_OK)
        rc = gqp_table_from_result(db, &child->res, child->dag->result_names, name, cols, ncols);
    if (rc == GQP_OK) {
        if (!(st->temps[st->ntemps] = strdup(name))) {
            cat_drop_table(db->cat, name, NULL);
            rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        } else {
            *out = st->temps[st->ntemps++];
            char head[400];
            snprintf(head, sizeof head,
                     "-- materialized %s %s as %s (%lld rows; planned and run in %.3f ms, "
                     "%.3f ms of it running):\n",
                     what, label, name, (long long)child->res.nrows, ms, child->exec_ms);
            gqp_explain_note(st, head);
            if (child->mat_explain) gqp_explain_note(st, child->mat_explain);
            char *plan = plan_explain_text(child->dag, st->profile);
            if (plan) gqp_explain_note(st, plan);
            free(plan);
        }
    }
    /* the child's own temporaries are no longer needed: its rows are copied */
    child_free(db, child);
    return rc;
}

int gqp_is_view(gqp *db, const char *name) {
    for (int i = 0; i < db->nviews; i++)
        if (strcasecmp(db->views[i].name, name) == 0) return 1;
    return 0;
}

/* The view named name, or NULL. */
static GqpView *find_view(gqp *db, const char *name) {
    for (int i = 0; i < db->nviews; i++)
        if (strcasecmp(db->views[i].name, name) == 0) return &db->views[i];
    return NULL;
}

/* Materialize the references of one SELECT core's FROM with scope sc. */
static int materialize_from(gqp *db, gqp_stmt *st, AstSelect *s, const GqpScope *sc) {
    for (int i = 0; i < s->nfrom; i++) {
        AstTableRef *r = &s->from[i];
        r->bound_name = NULL;
        if (r->file) {
            int rc = gqp_load_file(db, st, s, i);
            if (rc != GQP_OK) return rc;
            continue;
        }
        if (r->subquery) {
            if (!r->alias) {
                char buf[48];
                snprintf(buf, sizeof buf, "(subquery-%d)", i + 1);
                if (!(r->alias = sql_arena_strndup(st->parse_arena, buf, strlen(buf))))
                    return gqp_set_error(db, GQP_NOMEM, "out of memory");
            }
            int rc;
            if (!db->no_inline && !r->materialize) {
                /* planned inline by the binder: only its own FROM and
                 * subqueries are prepared here */
                const GqpScope *saved = db->scope;
                db->scope = sc;
                rc = gqp_materialize(db, st, r->subquery);
                db->scope = saved;
            } else {
                rc = materialize_one(db, st, st->sql, st->sql_len, r->subquery, sc, r->colnames,
                                     r->ncolnames, "derived table", r->alias, &r->bound_name);
            }
            if (rc != GQP_OK) return rc;
            continue;
        }
        const AstCte *cte = NULL;
        const GqpScope *found = NULL;
        for (const GqpScope *p = sc; p && !cte; p = p->parent)
            for (int k = 0; k < p->nvisible && !cte; k++)
                if (strcasecmp(p->with[k].name, r->name) == 0) {
                    cte = &p->with[k];
                    found = p;
                }
        if (!r->alias && (cte || find_view(db, r->name))) r->alias = r->name;
        if (cte) {
            for (const GqpBusy *b = db->busy; b; b = b->next)
                if (b->cte == cte) {
                    char msg[300];
                    snprintf(msg, sizeof msg, "circular reference: %s", cte->name);
                    return gqp_set_error_at(db, st->sql, st->sql_len, r->pos, "Binder", msg);
                }
            GqpBusy me = {cte, db->busy};
            db->busy = &me;
            int rc;
            if (!db->no_inline) {
                /* planned inline as a derived table over the CTE's SELECT
                 * (each reference: a CTE named twice runs twice) */
                r->subquery = cte->select;
                r->colnames = cte->colnames;
                r->ncolnames = cte->ncolnames;
                const GqpScope *saved = db->scope;
                db->scope = found;
                rc = gqp_materialize(db, st, cte->select);
                db->scope = saved;
            } else {
                rc =
                    materialize_one(db, st, st->sql, st->sql_len, cte->select, found, cte->colnames,
                                    cte->ncolnames, "CTE", cte->name, &r->bound_name);
            }
            db->busy = me.next;
            if (rc != GQP_OK) return rc;
            continue;
        }
        GqpView *v = find_view(db, r->name);
        if (!v) continue; /* a base table */
        AstStmt *vs = NULL;
        int64_t next;
        SqlError perr;
        int64_t len = (int64_t)strlen(v->sql);
        if (sql_parse_one(v->sql, len, 0, st->parse_arena, &vs, &next, &perr) != 0 || !vs ||
            vs->kind != STMT_SELECT)
            return gqp_set_error(db, GQP_ERROR, "Binder Error: view %s cannot be parsed", v->name);
        /* the view's text outlives this plan only while the view exists:
         * errors inside it are formatted now */
        int rc = materialize_one(db, st, v->sql, len, vs->select, NULL, v->cols, v->ncols, "view",
                                 v->name, &r->bound_name);
        if (rc != GQP_OK) return rc;
    }
    return GQP_OK;
}

int gqp_materialize_from(gqp *db, gqp_stmt *st, AstSelect *s, const GqpScope *sc) {
    return materialize_from(db, st, s, sc);
}

/* Materialize s's FROM, then decorrelate its correlated subqueries (the
 * derived tables that become, materialized in turn). */
static int materialize_core(gqp *db, gqp_stmt *st, AstSelect *s, const GqpScope *sc) {
    int n = 0, rc = materialize_from(db, st, s, sc);
    if (rc == GQP_OK) rc = gqp_decorrelate(db, st, s, sc, &n);
    if (rc == GQP_OK && n > 0) {
        AstSelect tail;
        memset(&tail, 0, sizeof tail);
        tail.from = s->from + (s->nfrom - n);
        tail.nfrom = n;
        rc = materialize_from(db, st, &tail, sc);
    }
    return rc;
}

/* ---- subqueries in expressions ---- */

/* Context of one SELECT whose expressions' subqueries are being run. */
typedef struct SubCtx {
    gqp *db;
    gqp_stmt *st;
    AstSelect *outer; /* the SELECT (for correlation: its FROM) */
    const GqpScope *scope;
} SubCtx;

static AstExpr *find_col_sel(AstSelect *s, int64_t pos);

/* The AST_COLUMN at byte offset pos inside e (and its subqueries), or NULL. */
static AstExpr *find_col_expr(AstExpr *e, int64_t pos) {
    if (!e) return NULL;
    if (e->kind == AST_COLUMN && e->pos == pos) return e;
    AstExpr *r = NULL;
    if (e->select && (r = find_col_sel(e->select, pos))) return r;
    if ((r = find_col_expr(e->a, pos)) || (r = find_col_expr(e->b, pos)) ||
        (r = find_col_expr(e->c, pos)))
        return r;
    for (int i = 0; i < e->nlist; i++)
        if ((r = find_col_expr(e->list[i], pos))) return r;
    return NULL;
}

static AstExpr *find_col_sel(AstSelect *s, int64_t pos) {
    AstExpr *r = NULL;
    for (int i = 0; i < s->nitems && !r; i++)
        r = find_col_expr(s->items[i].expr, pos);
    for (int i = 0; i < s->nfrom && !r; i++) {
        r = find_col_expr(s->from[i].join_on, pos);
        if (!r && s->from[i].subquery) r = find_col_sel(s->from[i].subquery, pos);
    }
    if (!r) r = find_col_expr(s->where, pos);
    if (!r) r = find_col_expr(s->having, pos);
    for (int i = 0; i < s->ngroup && !r; i++)
        r = find_col_expr(s->group_by[i], pos);
    for (int i = 0; i < s->norder && !r; i++)
        r = find_col_expr(s->order_by[i].expr, pos);
    for (int i = 0; i < s->ncompound && !r; i++)
        r = find_col_sel(s->compound[i].select, pos);
    for (int i = 0; i < s->nwith && !r; i++)
        r = find_col_sel(s->with[i].select, pos);
    return r;
}

int gqp_derived_item(const AstTableRef *r, const char *name) {
    if (r->ncolnames) {
        for (int i = 0; i < r->ncolnames; i++)
            if (strcasecmp(r->colnames[i], name) == 0) return i;
        return -1;
    }
    const AstSelect *d = r->subquery;
    for (int i = 0; i < d->nitems; i++) {
        const AstSelectItem *it = &d->items[i];
        const char *n = it->alias ? it->alias : it->expr->kind == AST_COLUMN ? it->expr->str : NULL;
        if (n && strcasecmp(n, name) == 0) return i;
    }
    return -1;
}

int gqp_entry_has(gqp *db, const AstTableRef *r, const char *name) {
    if (r->subquery && !r->bound_name) return gqp_derived_item(r, name) >= 0;
    CatTable *t = cat_find_table(db->cat, r->bound_name ? r->bound_name : r->name);
    return t && cat_find_column(t, name) >= 0;
}

int gqp_resolves_in(gqp *db, const AstSelect *s, const AstExpr *c) {
    for (int k = 0; k <= s->ncompound; k++) {
        const AstSelect *q = k ? s->compound[k - 1].select : s;
        for (int i = 0; i < q->nfrom; i++) {
            const AstTableRef *r = &q->from[i];
            const char *alias = r->alias ? r->alias : r->name;
            if (c->table && (!alias || strcasecmp(c->table, alias) != 0)) continue;
            if (gqp_entry_has(db, r, c->str)) return 1;
        }
    }
    return 0;
}

/* Row r of c, an integer vector (U8, I32 or I64). */
static int64_t col_int(const ExecColumn *c, int64_t r) {
    return c->vec.type == PRIM_U8    ? ((const uint8_t *)c->vec.data)[r]
           : c->vec.type == PRIM_I32 ? ((const int32_t *)c->vec.data)[r]
                                     : ((const int64_t *)c->vec.data)[r];
}

/* e rewritten into the literal of row r of result column c. */
static void set_literal(AstExpr *e, const ExecColumn *c, int64_t r) {
    e->str = NULL;
    e->nlist = 0;
    e->list = NULL;
    e->ints = NULL;
    e->n_ints = 0;
    e->has_null = 0;
    e->a = e->b = e->c = NULL;
    if (c->vec.valid && !c->vec.valid[r]) {
        e->kind = AST_NULL;
        return;
    }
    int64_t i = 0;
    double f = 0;
    int isf = 0;
    switch (c->vec.type) {
    case PRIM_U8:
    case PRIM_I32:
    case PRIM_I64:
        i = col_int(c, r);
        break;
    case PRIM_F32:
        f = ((const float *)c->vec.data)[r], isf = 1;
        break;
    case PRIM_F64:
        f = ((const double *)c->vec.data)[r], isf = 1;
        break;
    }
    if (c->ltype == CAT_STRING) {
        e->kind = AST_STRING;
        e->str = (char *)cat_dict_str(c->dict, i);
    } else if (c->ltype == CAT_DATE) {
        e->kind = AST_DATE;
        e->ival = i;
    } else if (c->ltype == CAT_DECIMAL) {
        /* a REAL literal: exact again where it meets a DECIMAL (bind.c,
         * dec_from_literal) for up to 15 significant digits */
        e->kind = AST_FLOAT;
        e->fval = (double)i / (double)cat_pow10(c->scale);
    } else if (isf) {
        e->kind = AST_FLOAT;
        e->fval = f;
    } else {
        e->kind = AST_INT;
        e->ival = i;
    }
}

/* Run e's subquery and rewrite e into its value (see AstExpr.select). */
static int run_sub(SubCtx *x, AstExpr *e) {
    gqp *db = x->db;
    gqp_stmt *st = x->st, *child = NULL;
    double t0 = gqp_wall_ms();
    int rc = run_child(db, st, st->sql, st->sql_len, e->select, x->scope, &child);
    double ms = gqp_wall_ms() - t0;
    if (rc == GQP_ERROR && strncmp(db->errmsg, "Binder Error", 12) == 0) {
        AstExpr *c = find_col_sel(e->select, db->err_offset);
        if (c && gqp_resolves_in(db, x->outer, c))
            rc = gqp_set_error_at(db, st->sql, st->sql_len, c->pos, "Not implemented",
                                  "correlated subquery");
    }
    rc = deep_correlation(db, st, st->sql, st->sql_len, e->select, rc);
    if (rc == GQP_OK && e->sub_kind != AST_EXISTS && child->res.ncols != 1) {
        char msg[200];
        snprintf(msg, sizeof msg, "sub-select returns %d columns - expected 1", child->res.ncols);
        rc = gqp_set_error_at(db, st->sql, st->sql_len, e->select->items[0].expr->pos, "Binder",
                              msg);
    }
    if (rc == GQP_OK) {
        const ExecResult *res = &child->res;
        char head[200];
        snprintf(head, sizeof head,
                 "-- ran the %s subquery at byte %lld first (%lld rows; planned and run in "
                 "%.3f ms, %.3f ms of it running):\n",
                 e->sub_kind == AST_EXISTS ? "EXISTS"
                 : e->sub_kind == AST_IN   ? "IN"
                                           : "scalar",
                 (long long)e->pos, (long long)res->nrows, ms, child->exec_ms);
        gqp_explain_note(st, head);
        if (child->mat_explain) gqp_explain_note(st, child->mat_explain);
        char *plan = plan_explain_text(child->dag, st->profile);
        if (plan) gqp_explain_note(st, plan);
        free(plan);
        if (e->sub_kind == AST_EXISTS) {
            e->kind = AST_INT;
            e->ival = res->nrows > 0;
        } else if (e->sub_kind == AST_SUBQUERY) {
            /* SQLite: the first row; no row is NULL */
            if (res->nrows == 0) {
                e->kind = AST_NULL;
                e->str = NULL;
            } else {
                set_literal(e, &res->cols[0], 0);
            }
        } else if (res->cols[0].ltype != CAT_STRING && res->cols[0].ltype != CAT_DATE &&
                   res->cols[0].ltype != CAT_DECIMAL &&
                   (res->cols[0].vec.type == PRIM_U8 || res->cols[0].vec.type == PRIM_I32 ||
                    res->cols[0].vec.type == PRIM_I64)) {
            /* IN over integers: the values as they are (the binder makes
             * its set from them; thousands of literals cost more) */
            const ExecColumn *c = &res->cols[0];
            int64_t *v = sql_arena_alloc(st->parse_arena, sizeof *v * (size_t)(res->nrows + 1));
            if (!v) {
                rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
            } else {
                int64_t k = 0;
                int nul = 0;
                for (int64_t r = 0; r < res->nrows; r++) {
                    if (c->vec.valid && !c->vec.valid[r]) {
                        nul = 1;
                        continue;
                    }
                    v[k++] = col_int(c, r);
                }
                e->kind = AST_IN;
                e->list = NULL;
                e->nlist = 0;
                e->ints = v;
                e->n_ints = k;
                e->has_null = nul;
            }
        } else { /* IN: the rows as a list of literals */
            AstExpr **list =
                sql_arena_alloc(st->parse_arena, sizeof *list * (size_t)(res->nrows + 1));
            AstExpr *vals =
                sql_arena_alloc(st->parse_arena, sizeof *vals * (size_t)(res->nrows + 1));
            if (!list || !vals || res->nrows > INT32_MAX) {
                rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
            } else {
                for (int64_t r = 0; r < res->nrows; r++) {
                    vals[r].pos = e->select->items[0].expr->pos;
                    vals[r].end = e->end;
                    vals[r].height = vals[r].weight = 1;
                    set_literal(&vals[r], &res->cols[0], r);
                    list[r] = &vals[r];
                }
                e->kind = AST_IN;
                e->list = list;
                e->nlist = (int)res->nrows;
                e->ints = NULL;
                e->n_ints = 0;
                e->has_null = 0;
            }
        }
    }
    child_free(db, child);
    return rc;
}

/* Run the subqueries in e (not inside other subqueries: their own plans do). */
static int walk_expr(SubCtx *x, AstExpr *e) {
    if (!e) return GQP_OK;
    int rc;
    if (e->select) {
        if (e->sub_kind == AST_IN && (rc = walk_expr(x, e->a)) != GQP_OK) return rc;
        return run_sub(x, e);
    }
    if ((rc = walk_expr(x, e->a)) != GQP_OK || (rc = walk_expr(x, e->b)) != GQP_OK ||
        (rc = walk_expr(x, e->c)) != GQP_OK)
        return rc;
    for (int i = 0; i < e->nlist; i++)
        if ((rc = walk_expr(x, e->list[i])) != GQP_OK) return rc;
    return GQP_OK;
}

/* Run the expression subqueries of one SELECT core (and ORDER BY / LIMIT). */
static int walk_core(SubCtx *x, AstSelect *s) {
    int rc = GQP_OK;
    for (int i = 0; rc == GQP_OK && i < s->nitems; i++)
        rc = walk_expr(x, s->items[i].expr);
    for (int i = 0; rc == GQP_OK && i < s->nfrom; i++)
        rc = walk_expr(x, s->from[i].join_on);
    if (rc == GQP_OK) rc = walk_expr(x, s->where);
    for (int i = 0; rc == GQP_OK && i < s->ngroup; i++)
        rc = walk_expr(x, s->group_by[i]);
    if (rc == GQP_OK) rc = walk_expr(x, s->having);
    for (int i = 0; rc == GQP_OK && i < s->norder; i++)
        rc = walk_expr(x, s->order_by[i].expr);
    if (rc == GQP_OK) rc = walk_expr(x, s->limit);
    if (rc == GQP_OK) rc = walk_expr(x, s->offset);
    return rc;
}

/* Core c (a compound's first core or an arm) becomes SELECT * FROM
 * (<its select list, FROM, WHERE, GROUP BY, HAVING>) AS __gqp_armK, the
 * derived table run into a temporary table first; c keeps its compound
 * arms, ORDER BY, LIMIT and WITH. Returns GQP_OK or GQP_NOMEM. */
static int wrap_core(gqp *db, gqp_stmt *st, AstSelect *c, int k) {
    SqlArena *a = st->parse_arena;
    AstSelect *in = sql_arena_alloc(a, sizeof *in);
    AstTableRef *ref = sql_arena_alloc(a, sizeof *ref);
    AstSelectItem *it = sql_arena_alloc(a, sizeof *it);
    AstExpr *star = sql_arena_alloc(a, sizeof *star);
    char name[32];
    snprintf(name, sizeof name, "__gqp_arm%d", k);
    char *alias = sql_arena_strndup(a, name, strlen(name));
    if (!in || !ref || !it || !star || !alias) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    memset(ref, 0, sizeof *ref);
    memset(it, 0, sizeof *it);
    memset(star, 0, sizeof *star);
    *in = *c; /* the core; what applies to the compound stays with c */
    in->order_by = NULL;
    in->norder = 0;
    in->limit = in->offset = NULL;
    in->compound = NULL;
    in->ncompound = 0;
    in->with = NULL;
    in->nwith = 0;
    int64_t pos = c->nitems ? c->items[0].expr->pos : 0;
    star->kind = AST_STAR;
    star->pos = pos;
    star->height = star->weight = 1;
    it->expr = star;
    ref->subquery = in;
    ref->alias = alias;
    ref->pos = pos;
    ref->materialize = 1;
    c->distinct = 0;
    c->items = it;
    c->nitems = 1;
    c->from = ref;
    c->nfrom = 1;
    c->where = NULL;
    c->group_by = NULL;
    c->ngroup = 0;
    c->having = NULL;
    return GQP_OK;
}

int gqp_wrap_arms(gqp *db, gqp_stmt *st, AstSelect *sel) {
    int rc = wrap_core(db, st, sel, 0);
    for (int i = 0; rc == GQP_OK && i < sel->ncompound; i++)
        rc = wrap_core(db, st, sel->compound[i].select, i + 1);
    return rc;
}

int gqp_materialize(gqp *db, gqp_stmt *st, AstSelect *sel) {
    GqpScope sc = {sel->with, sel->nwith, db->scope};
    const GqpScope *use = sel->nwith ? &sc : db->scope;
    int rc = GQP_OK;
    for (int i = 0; rc == GQP_OK && i <= sel->ncompound; i++)
        rc = materialize_core(db, st, i ? sel->compound[i - 1].select : sel, use);
    SubCtx x = {db, st, sel, use};
    if (rc == GQP_OK) rc = walk_core(&x, sel);
    for (int i = 0; rc == GQP_OK && i < sel->ncompound; i++)
        rc = walk_core(&x, sel->compound[i].select);
    return rc;
}

void gqp_free_views(gqp *db) {
    for (int i = 0; i < db->nviews; i++) {
        free(db->views[i].name);
        free(db->views[i].sql);
        for (int k = 0; k < db->views[i].ncols; k++)
            free(db->views[i].cols[k]);
        free(db->views[i].cols);
    }
    free(db->views);
    db->views = NULL;
    db->nviews = 0;
}

int gqp_run_view(gqp *db, gqp_stmt *st) {
    const AstStmt *a = st->ast;
    GqpView *v = find_view(db, a->table);
    char msg[300];
    if (a->kind == STMT_DROP_VIEW) {
        if (!v) {
            if (a->if_not_exists) return GQP_OK;
            snprintf(msg, sizeof msg, "no such view: %s", a->table);
            return gqp_set_error_at(db, st->sql, st->sql_len, a->table_pos, "Catalog", msg);
        }
        free(v->name);
        free(v->sql);
        for (int k = 0; k < v->ncols; k++)
            free(v->cols[k]);
        free(v->cols);
        *v = db->views[--db->nviews];
        return GQP_OK;
    }
    if (v || cat_find_table(db->cat, a->table)) {
        if (a->if_not_exists) return GQP_OK;
        snprintf(msg, sizeof msg, "%s %s already exists", v ? "view" : "table", a->table);
        return gqp_set_error_at(db, st->sql, st->sql_len, a->table_pos, "Catalog", msg);
    }
    GqpView *g = realloc(db->views, sizeof *g * (size_t)(db->nviews + 1));
    if (!g) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    db->views = g;
    GqpView nv = {strdup(a->table), strndup(st->sql + a->view_pos, (size_t)(a->end - a->view_pos)),
                  NULL, 0};
    if (a->ninsert_cols) nv.cols = calloc((size_t)a->ninsert_cols, sizeof(char *));
    int ok = nv.name && nv.sql && (!a->ninsert_cols || nv.cols);
    for (int k = 0; ok && k < a->ninsert_cols; k++)
        ok = (nv.cols[nv.ncols++] = strdup(a->insert_cols[k])) != NULL;
    db->views[db->nviews++] = nv;
    if (!ok) {
        --db->nviews;
        free(nv.name);
        free(nv.sql);
        for (int k = 0; k < nv.ncols; k++)
            free(nv.cols[k]);
        free(nv.cols);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    /* check it now, as SQLite does at CREATE VIEW time: plan (and run) it once */
    AstTableRef ref = {.name = nv.name, .pos = a->table_pos};
    AstSelect probe;
    memset(&probe, 0, sizeof probe);
    probe.from = &ref;
    probe.nfrom = 1;
    int rc = materialize_from(db, st, &probe, NULL);
    gqp_drop_temps(db, st);
    if (rc != GQP_OK) {
        char keep[sizeof db->errmsg];
        memcpy(keep, db->errmsg, sizeof keep);
        int code = db->errcode;
        gqp_run_view(
            db, &(gqp_stmt){
                    .ast = &(AstStmt){.kind = STMT_DROP_VIEW, .table = nv.name, .if_not_exists = 1},
                    .db = db});
        memcpy(db->errmsg, keep, sizeof keep);
        db->errcode = code;
    }
    return rc;
}
