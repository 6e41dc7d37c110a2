/*
 * share.c -- a grouped query's uncorrelated scalar subquery over the same
 * FROM and WHERE, computed from the query's own groups instead of joining
 * and scanning again. TPC-H Q11 is the shape:
 *
 *   SELECT k, SUM(v) AS value FROM F WHERE P GROUP BY k
 *   HAVING SUM(v) > (SELECT SUM(v) * 0.0001 FROM F WHERE P) ORDER BY value
 *
 * becomes, with G = SELECT k AS __gqp_g0, SUM(v) AS __gqp_a0 FROM F WHERE P
 * GROUP BY k run once into a temporary table (subquery.c's materialize):
 *
 *   SELECT __gqp_g0 AS k, __gqp_a0 AS value FROM G
 *   WHERE __gqp_a0 > (SELECT SUM(__gqp_a0) * 0.0001 FROM G) ORDER BY value
 *
 * The subquery's aggregates are rolled up from the groups' (SUM and TOTAL
 * of the sums, MIN of the minima, MAX of the maxima, COUNT as the sum of
 * the counts or 0), which is exact for integers and decimals; a floating
 * SUM adds in another order, as a parallel SUM does anyway. Only the shape
 * is rewritten where every part is understood: FROM of base tables written
 * the same way in both, no DISTINCT, no compound, the outer query's columns
 * outside aggregates all GROUP BY terms, the subquery one expression of
 * SUM / COUNT / MIN / MAX / TOTAL (no DISTINCT) and constants. The AST is
 * changed in place and restored (AstSelect.unshared) before the statement
 * is planned again, since the temporary table is dropped then.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libgqp/internal.h"

#define SH_MAX 32 /* group keys or aggregates one rewrite may carry */

/* The rewrite of one SELECT: its GROUP BY terms' and aggregates'
 * fingerprints (the columns __gqp_gK / __gqp_aK of the groups' table). */
typedef struct Share {
    gqp_stmt *st;
    SqlArena *a;
    const AstSelect *s;
    char *gkey[SH_MAX];
    int ng;
    char *akey[SH_MAX];
    const AstExpr *agg[SH_MAX];
    int na;
    AstSelect *subs[SH_MAX]; /* the rewritten subqueries (FROM set last) */
    int nsubs;
    int bad; /* a shape outside the rewrite (or out of memory) */
} Share;

/* The groups' table's alias in the rewritten statements. */
static const char *const kAlias = "__gqp_groups";

static int sh_is_agg(const AstExpr *e) {
    return gqp_is_agg_call(e);
}

/* A new column node __gqp_<c><k> of the groups' table at e's text. */
static AstExpr *sh_col(Share *x, const AstExpr *e, char c, int k) {
    AstExpr *n = sql_arena_alloc(x->a, sizeof *n);
    char name[32];
    snprintf(name, sizeof name, "__gqp_%c%d", c, k);
    if (!n || !(n->str = sql_arena_strndup(x->a, name, strlen(name))) ||
        !(n->table = sql_arena_strndup(x->a, kAlias, strlen(kAlias)))) {
        x->bad = 1;
        return NULL;
    }
    n->kind = AST_COLUMN;
    n->pos = e->pos;
    n->end = e->end;
    n->height = n->weight = 1;
    return n;
}

/* The index of aggregate call e among x's (added when new), or -1. */
static int sh_agg(Share *x, const AstExpr *e) {
    char *k = gqp_ast_fingerprint(e);
    if (!k) return -1;
    for (int i = 0; i < x->na; i++)
        if (strcmp(x->akey[i], k) == 0) {
            free(k);
            return i;
        }
    if (x->na == SH_MAX) {
        free(k);
        return -1;
    }
    x->akey[x->na] = k;
    x->agg[x->na] = e;
    return x->na++;
}

static AstExpr *sh_sub(Share *x, const AstExpr *e);

/* e (of the outer query's select list, HAVING or ORDER BY) over the
 * groups' table: GROUP BY terms and aggregates become its columns, a
 * matching scalar subquery its rewrite; NULL (x->bad set) when some part
 * is outside the rewrite. */
static AstExpr *sh_outer(Share *x, const AstExpr *e) {
    if (!e || x->bad) return NULL;
    char *k = gqp_ast_fingerprint(e);
    if (k) {
        for (int i = 0; i < x->ng; i++)
            if (strcmp(x->gkey[i], k) == 0) {
                free(k);
                return sh_col(x, e, 'g', i);
            }
        free(k);
    }
    if (sh_is_agg(e)) {
        int i = sh_agg(x, e);
        if (i < 0) {
            x->bad = 1;
            return NULL;
        }
        return sh_col(x, e, 'a', i);
    }
    if (e->select) {
        if (e->kind != AST_SUBQUERY) { /* EXISTS / IN: left alone */
            x->bad = 1;
            return NULL;
        }
        return sh_sub(x, e);
    }
    if (e->kind == AST_COLUMN || e->kind == AST_STAR || e->kind == AST_PARAM) {
        x->bad = 1; /* a bare column (or a parameter not yet bound) */
        return NULL;
    }
    AstExpr *n = sql_arena_alloc(x->a, sizeof *n);
    if (!n) {
        x->bad = 1;
        return NULL;
    }
    *n = *e;
    if (e->a && !(n->a = sh_outer(x, e->a))) return NULL;
    if (e->b && !(n->b = sh_outer(x, e->b))) return NULL;
    if (e->c && !(n->c = sh_outer(x, e->c))) return NULL;
    if (e->nlist) {
        if (!(n->list = sql_arena_alloc(x->a, sizeof *n->list * (size_t)e->nlist))) {
            x->bad = 1;
            return NULL;
        }
        for (int i = 0; i < e->nlist; i++)
            if (!(n->list[i] = sh_outer(x, e->list[i]))) return NULL;
    }
    return n;
}

/* A call name(args...) at e's text. */
static AstExpr *sh_call(Share *x, const AstExpr *e, const char *name, AstExpr *a0, AstExpr *a1) {
    AstExpr *n = sql_arena_alloc(x->a, sizeof *n);
    AstExpr **l = sql_arena_alloc(x->a, sizeof *l * 2);
    if (!n || !l || !(n->str = sql_arena_strndup(x->a, name, strlen(name)))) {
        x->bad = 1;
        return NULL;
    }
    n->kind = AST_FUNC;
    n->pos = e->pos;
    n->end = e->end;
    n->list = l;
    l[0] = a0;
    l[1] = a1;
    n->nlist = a1 ? 2 : 1;
    n->height = 1 + (a0 ? a0->height : 0);
    if (a1 && 1 + a1->height > n->height) n->height = 1 + a1->height;
    n->weight = 1 + (a0 ? a0->weight : 0) + (a1 ? a1->weight : 0);
    return n;
}

/* The subquery's item e rolled up from the groups' columns: its
 * aggregates over their per-group values; NULL (x->bad) outside the
 * rewrite. */
static AstExpr *sh_roll(Share *x, const AstExpr *e) {
    if (!e || x->bad) return NULL;
    if (sh_is_agg(e)) {
        const char *f = e->str;
        int cnt = strcasecmp(f, "count") == 0;
        if (e->distinct || e->nlist != 1 ||
            !(cnt || strcasecmp(f, "sum") == 0 || strcasecmp(f, "total") == 0 ||
              strcasecmp(f, "min") == 0 || strcasecmp(f, "max") == 0)) {
            x->bad = 1;
            return NULL;
        }
        int i = sh_agg(x, e);
        if (i < 0) {
            x->bad = 1;
            return NULL;
        }
        AstExpr *c = sh_col(x, e, 'a', i);
        if (!c) return NULL;
        if (!cnt) return sh_call(x, e, f, c, NULL);
        AstExpr *zero = sql_arena_alloc(x->a, sizeof *zero);
        AstExpr *sum = sh_call(x, e, "sum", c, NULL);
        if (!zero || !sum) {
            x->bad = 1;
            return NULL;
        }
        zero->kind = AST_INT;
        zero->pos = e->pos;
        zero->end = e->end;
        zero->height = zero->weight = 1;
        return sh_call(x, e, "coalesce", sum, zero); /* COUNT over no groups is 0 */
    }
    switch (e->kind) {
    case AST_INT:
    case AST_FLOAT:
    case AST_NULL:
        if (e->select) break;
        return (AstExpr *)e;
    case AST_UNARY:
        if (e->op == OP_NOT) break;
        /* fall through */
    case AST_BINARY:
    case AST_CAST:
        if (e->kind == AST_BINARY && !(e->op >= OP_ADD && e->op <= OP_MOD)) break;
        {
            AstExpr *n = sql_arena_alloc(x->a, sizeof *n);
            if (!n) break;
            *n = *e;
            if (e->a && !(n->a = sh_roll(x, e->a))) return NULL;
            if (e->b && !(n->b = sh_roll(x, e->b))) return NULL;
            return n;
        }
    default:
        break;
    }
    x->bad = 1;
    return NULL;
}

/* FROM entry of the groups' table named t. */
static AstTableRef *sh_from(Share *x, const char *t, int64_t pos) {
    AstTableRef *r = sql_arena_alloc(x->a, sizeof *r);
    if (!r || !(r->name = sql_arena_strndup(x->a, t, strlen(t))) ||
        !(r->alias = sql_arena_strndup(x->a, kAlias, strlen(kAlias)))) {
        x->bad = 1;
        return NULL;
    }
    r->pos = pos;
    return r;
}

/* FROM and WHERE of s as text (NULL when not base tables only). */
static char *sh_fromwhere(const AstSelect *s) {
    AstSelect t;
    memset(&t, 0, sizeof t);
    t.from = s->from;
    t.nfrom = s->nfrom;
    t.where = s->where;
    for (int i = 0; i < s->nfrom; i++)
        if (s->from[i].subquery || s->from[i].file || s->from[i].bound_name || !s->from[i].name)
            return NULL;
    return gqp_ast_fingerprint_select(&t);
}

/* A matching scalar subquery e: a copy of its node whose SELECT is
 * rewritten over the groups' table once that exists (the item now, the
 * FROM later: see gqp_share_groups). */
static AstExpr *sh_sub(Share *x, const AstExpr *e) {
    const AstSelect *q = e->select;
    if (q->nitems != 1 || q->ngroup || q->having || q->distinct || q->norder || q->limit ||
        q->offset || q->ncompound || q->nwith || q->items[0].expr->kind == AST_STAR) {
        x->bad = 1;
        return NULL;
    }
    char *mine = sh_fromwhere(x->s), *its = sh_fromwhere(q);
    int same = mine && its && strcmp(mine, its) == 0;
    free(mine);
    free(its);
    if (!same) {
        x->bad = 1;
        return NULL;
    }
    AstExpr *item = sh_roll(x, q->items[0].expr);
    AstExpr *n = sql_arena_alloc(x->a, sizeof *n);
    AstSelect *q2 = sql_arena_alloc(x->a, sizeof *q2);
    AstSelectItem *it = sql_arena_alloc(x->a, sizeof *it);
    if (!item || !n || !q2 || !it) {
        x->bad = 1;
        return NULL;
    }
    *n = *e;
    memset(q2, 0, sizeof *q2);
    it->expr = item;
    it->alias = q->items[0].alias;
    q2->items = it;
    q2->nitems = 1;
    n->select = q2; /* FROM: set by gqp_share_groups */
    if (x->nsubs == SH_MAX) {
        x->bad = 1;
        return NULL;
    }
    x->subs[x->nsubs++] = q2;
    return n;
}

/* 1 when e holds a subquery anywhere. */
static int sh_has_select(const AstExpr *e) {
    if (!e) return 0;
    if (e->select) return 1;
    if (sh_has_select(e->a) || sh_has_select(e->b) || sh_has_select(e->c)) return 1;
    for (int i = 0; i < e->nlist; i++)
        if (sh_has_select(e->list[i])) return 1;
    return 0;
}

/* 1 when e is an unqualified name of one of s's select-list aliases. */
static int sh_names_alias(const AstSelect *s, const AstExpr *e) {
    if (e->kind != AST_COLUMN || e->table) return 0;
    for (int i = 0; i < s->nitems; i++)
        if (s->items[i].alias && strcasecmp(s->items[i].alias, e->str) == 0) return 1;
    return 0;
}

/* The output name SQLite gives item it (planner/bind.c's out_name). */
static char *sh_name(Share *x, const AstSelectItem *it) {
    if (it->alias) return it->alias;
    const AstExpr *e = it->expr;
    if (e->kind == AST_COLUMN) return e->str;
    int64_t len = e->end - e->pos;
    if (len <= 0 || e->end > x->st->sql_len) return NULL;
    return sql_arena_strndup(x->a, x->st->sql + e->pos, (size_t)len);
}

static void sh_free(Share *x) {
    for (int i = 0; i < x->ng; i++)
        free(x->gkey[i]);
    for (int i = 0; i < x->na; i++)
        free(x->akey[i]);
}

int gqp_share_groups(gqp *db, gqp_stmt *st, AstSelect *s, const GqpScope *sc) {
    if (db->no_share || s->ngroup == 0 || s->distinct || s->ncompound || s->nfrom == 0 ||
        s->ngroup > SH_MAX)
        return GQP_OK;
    int any = sh_has_select(s->having);
    for (int i = 0; i < s->nitems; i++) {
        if (s->items[i].expr->kind == AST_STAR) return GQP_OK;
        any |= sh_has_select(s->items[i].expr);
    }
    for (int i = 0; i < s->norder; i++)
        any |= sh_has_select(s->order_by[i].expr);
    if (!any || sh_has_select(s->where)) return GQP_OK;
    Share x;
    memset(&x, 0, sizeof x);
    x.st = st;
    x.a = st->parse_arena;
    x.s = s;
    for (int i = 0; i < s->ngroup; i++) {
        const AstExpr *g = s->group_by[i];
        if ((g->kind == AST_INT && !g->select) || sh_has_select(g) || sh_names_alias(s, g) ||
            !(x.gkey[x.ng] = gqp_ast_fingerprint(g))) {
            sh_free(&x);
            return GQP_OK;
        }
        x.ng++;
    }
    AstSelectItem *items = sql_arena_alloc(x.a, sizeof *items * (size_t)s->nitems);
    AstOrderItem *order =
        s->norder ? sql_arena_alloc(x.a, sizeof *order * (size_t)s->norder) : NULL;
    if (!items || (s->norder && !order)) x.bad = 1;
    for (int i = 0; !x.bad && i < s->nitems; i++) {
        items[i].expr = sh_outer(&x, s->items[i].expr);
        if (!(items[i].alias = sh_name(&x, &s->items[i]))) x.bad = 1;
    }
    AstExpr *where = s->having && !x.bad ? sh_outer(&x, s->having) : NULL;
    for (int i = 0; !x.bad && i < s->norder; i++) {
        const AstExpr *e = s->order_by[i].expr;
        order[i] = s->order_by[i];
        if (!((e->kind == AST_INT && !e->select) || sh_names_alias(s, e)))
            order[i].expr = sh_outer(&x, e);
    }
    for (int i = 0; !x.bad && i < x.na; i++)
        if (sh_has_select(x.agg[i])) x.bad = 1;
    if (x.bad || x.nsubs == 0) {
        sh_free(&x);
        return GQP_OK;
    }
    /* the groups: SELECT <keys> AS __gqp_gK, <aggregates> AS __gqp_aK
     * FROM <the FROM> WHERE <the WHERE> GROUP BY <the keys> */
    AstSelect *in = sql_arena_alloc(x.a, sizeof *in);
    AstSelectItem *gi = sql_arena_alloc(x.a, sizeof *gi * (size_t)(x.ng + x.na));
    AstTableRef *from = sql_arena_alloc(x.a, sizeof *from * (size_t)s->nfrom);
    if (!in || !gi || !from) {
        sh_free(&x);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    memset(in, 0, sizeof *in);
    for (int i = 0; i < x.ng + x.na; i++) {
        char name[32];
        snprintf(name, sizeof name, "__gqp_%c%d", i < x.ng ? 'g' : 'a', i < x.ng ? i : i - x.ng);
        gi[i].expr = (AstExpr *)(i < x.ng ? s->group_by[i] : x.agg[i - x.ng]);
        if (!(gi[i].alias = sql_arena_strndup(x.a, name, strlen(name)))) {
            sh_free(&x);
            return gqp_set_error(db, GQP_NOMEM, "out of memory");
        }
    }
    memcpy(from, s->from, sizeof *from * (size_t)s->nfrom);
    in->items = gi;
    in->nitems = x.ng + x.na;
    in->from = from;
    in->nfrom = s->nfrom;
    in->where = s->where;
    in->group_by = s->group_by;
    in->ngroup = s->ngroup;
    sh_free(&x);
    char *tname = NULL;
    int rc = gqp_run_into_temp(db, st, in, sc, "the groups of the query at byte",
                               s->items[0].expr->pos, &tname);
    if (rc != GQP_OK) return rc;
    AstSelect *orig = sql_arena_alloc(x.a, sizeof *orig);
    AstTableRef *tf = sh_from(&x, tname, s->from[0].pos);
    for (int i = 0; tf && i < x.nsubs; i++) {
        if (!(x.subs[i]->from = sh_from(&x, tname, s->from[0].pos))) break;
        x.subs[i]->nfrom = 1;
    }
    if (!orig || !tf || x.bad) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    *orig = *s;
    s->unshared = orig;
    s->items = items;
    s->from = tf;
    s->nfrom = 1;
    s->where = where;
    s->group_by = NULL;
    s->ngroup = 0;
    s->having = NULL;
    s->order_by = order;
    return GQP_OK;
}
