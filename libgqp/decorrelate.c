/*
 * decorrelate.c -- correlated subqueries rewritten into joins before the
 * SELECT that holds them is bound, after Neumann and Kemper ("Unnesting
 * Arbitrary Queries", BTW 2015) for the forms analytical SQL uses:
 *
 *   [NOT] EXISTS (SELECT .. FROM F WHERE C AND L)     a top-level WHERE conjunct
 *   x IN (SELECT y FROM F WHERE C AND L)              likewise
 *   x NOT IN (SELECT y ..)                            an ANTI JOIN on C AND
 *                                      (x = y OR x IS NULL OR y IS NULL)
 *   EXISTS elsewhere (under OR / NOT, select list)    (SELECT COUNT(*) ..) > 0,
 *                                                     the scalar form below
 *   x IN (SELECT y ..) under OR in WHERE              EXISTS (.. AND y = x)
 *   x [NOT] IN (SELECT agg ..), no GROUP BY           x = (SELECT agg ..) (<> for NOT)
 *   x [NOT] IN (..) elsewhere (three-valued)          CASE over three correlated
 *                                                     COUNTs (rows, NULL y, y = x)
 *   a subquery whose WHERE has conjuncts P reading    CASE WHEN P THEN <it without
 *   only outer columns (when the above left it)       P> ELSE <over no rows> END
 *   (SELECT agg .. WHERE o1 < i1 AND ..)              the magic set: D = SELECT
 *                       DISTINCT <outer columns> FROM <their table> joined into
 *                       the subquery, grouped by D's columns, joined back
 *     -> FROM .., (SELECT <inner columns of C> FROM F WHERE L) AS __gqp_sqN
 *        joined as a SEMI (ANTI) JOIN on C (and x = y), C's inner columns
 *        read from __gqp_sqN; the conjunct becomes TRUE.
 *   (SELECT agg-expr FROM F WHERE o1 = i1 AND .. AND L)  anywhere in WHERE
 *     -> (SELECT i1 AS __k1, .., agg-expr AS __v FROM F WHERE L GROUP BY
 *        i1, ..) AS __gqp_sqN, joined on o1 = __k1 AND ..; the subquery
 *        becomes __gqp_sqN.__v (also in the select list). An inner join where the subquery is an
 *        operand of a comparison that is a top-level conjunct and its value
 *        over no rows is NULL (SUM, AVG, MIN, MAX and strict arithmetic on
 *        them); else a LEFT JOIN and CASE WHEN __k1 IS NULL THEN <the value
 *        over no rows> ELSE __v END (COUNT gives 0: the "count bug").
 *
 * C are the conjuncts of the subquery's WHERE that read a column of the
 * enclosing SELECT's FROM (correlated), L the others. The derived table is
 * uncorrelated, so it is materialized like any other (subquery.c), and the
 * joins run on the join primitives of either device. A magic set whose
 * outer column c may be NULL where no conjunct rejects it is split first:
 * CASE WHEN c IS NULL THEN <the subquery, c := NULL> ELSE <it> END
 * (null_split). The select list, HAVING, GROUP BY and ORDER BY are walked
 * as WHERE is; a subquery written twice (GROUP BY and the select list)
 * becomes one derived table (the memo, by the expressions' fingerprints).
 * Shapes outside these (most grand-parent correlations) are left alone and
 * end in "Not implemented Error: correlated subquery" as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libgqp/internal.h"

#define DC_MAX_ADD 64 /* derived tables one SELECT may gain */

#define DC_MAX_NONNULL 8 /* outer columns a CASE has proven non-NULL */
#define DC_MAX_SPLITS 15 /* null_split's per SELECT: four columns' worth */
#define DC_MAX_MEMO 32   /* rewritten subquery values remembered per SELECT */
#define DC_MAX_PREP 64   /* subqueries per SELECT whose FROM is prepared first */

/* A subquery value already rewritten in this SELECT: the same subquery
 * again (in GROUP BY and the select list, say) reads the same derived
 * table, so the binder sees one expression (a GROUP BY key) */
typedef struct DcMemo {
    char *key;      /* fingerprint of the expression before its rewrite */
    AstExpr *value; /* what it became */
} DcMemo;

typedef struct Dc {
    gqp *db;
    gqp_stmt *st;
    AstSelect *outer;
    const GqpScope *scope; /* the CTEs the outer SELECT (and its subqueries) see */
    /* subqueries whose FROM was prepared (prep_from) */
    const AstSelect *prepped[DC_MAX_PREP];
    int nprepped;
    int err;  /* a prep_from failure's code (its message is db's), else 0 */
    int nadd; /* FROM entries to append */
    AstTableRef add[DC_MAX_ADD];
    /* outer columns known non-NULL where the subquery being rewritten is
     * evaluated: it is the ELSE of CASE WHEN <column> IS NULL (null_split) */
    const AstExpr *nonnull[DC_MAX_NONNULL];
    int nnonnull;
    int nsplits; /* null_split's so far */
    DcMemo memo[DC_MAX_MEMO];
    int nmemo;
} Dc;

/* 1 when every FROM entry of s has columns known now: a base table, a
 * derived table or CTE prepared for inline planning (prep_from; its
 * output names), or a table a view or file was run into; not a CTE or
 * view that nothing prepared. */
static int base_only(Dc *x, const AstSelect *s) {
    if (s->ncompound || s->nwith || s->nfrom == 0) return 0;
    for (int i = 0; i < s->nfrom; i++) {
        const AstTableRef *r = &s->from[i];
        if (r->subquery && !r->bound_name) continue;
        if (r->bound_name) {
            if (!cat_find_table(x->db->cat, r->bound_name)) return 0;
            continue;
        }
        if (!r->name || gqp_is_view(x->db, r->name) || !cat_find_table(x->db->cat, r->name))
            return 0;
        for (const GqpScope *p = x->scope; p; p = p->parent)
            for (int k = 0; k < p->nvisible; k++)
                if (strcasecmp(p->with[k].name, r->name) == 0) return 0;
    }
    return 1;
}

/* Prepares the FROM of subquery sub once (gqp_materialize_from): CTE
 * references and derived tables become inline derived tables whose output
 * names are known, views temporary tables, so that base_only accepts
 * them. A FROM with a file is left alone (a file is read once per
 * statement). Returns 0, or -1 with the failure's code in x->err (the
 * subquery's own run would have failed the same way). */
static int prep_from(Dc *x, AstSelect *sub) {
    for (int i = 0; i < x->nprepped; i++)
        if (x->prepped[i] == sub) return 0;
    if (x->nprepped >= DC_MAX_PREP || sub->ncompound || sub->nwith) return 0;
    x->prepped[x->nprepped++] = sub;
    int needed = 0;
    for (int i = 0; i < sub->nfrom; i++) {
        const AstTableRef *r = &sub->from[i];
        if (r->file) return 0;
        needed |= r->subquery || !r->name || !cat_find_table(x->db->cat, r->name) ||
                  gqp_is_view(x->db, r->name);
    }
    if (!needed) return 0;
    int rc = gqp_materialize_from(x->db, x->st, sub, x->scope);
    if (rc == GQP_OK) return 0;
    x->err = rc;
    return -1;
}

/* 1 when column e names a derived table this rewrite already joined to the
 * outer FROM (a decorrelated subquery's value, e.g. in the operand of an
 * IN whose own subquery is then decorrelated): an outer column. */
static int added_col(const Dc *x, const AstExpr *e) {
    for (int i = 0; e->table && i < x->nadd; i++)
        if (strcasecmp(e->table, x->add[i].alias) == 0) return 1;
    return 0;
}

/* Column census of e (not inside nested subqueries): *inner counts columns
 * of sub's FROM, *outer columns of the enclosing FROM only, *bad columns
 * of neither; *nested counts nested subqueries. */
static void census(Dc *x, const AstSelect *sub, const AstExpr *e, int *inner, int *outer, int *bad,
                   int *nested) {
    if (!e) return;
    if (e->select) (*nested)++;
    if (e->kind == AST_COLUMN) {
        if (gqp_resolves_in(x->db, sub, e))
            (*inner)++;
        else if (gqp_resolves_in(x->db, x->outer, e) || added_col(x, e))
            (*outer)++;
        else
            (*bad)++;
        return;
    }
    census(x, sub, e->a, inner, outer, bad, nested);
    census(x, sub, e->b, inner, outer, bad, nested);
    census(x, sub, e->c, inner, outer, bad, nested);
    for (int i = 0; i < e->nlist; i++)
        census(x, sub, e->list[i], inner, outer, bad, nested);
}

/* A new AST node of kind k (parse arena); NULL when out of memory. */
static AstExpr *node(Dc *x, AstKind k, int64_t pos) {
    AstExpr *e = sql_arena_alloc(x->st->parse_arena, sizeof *e);
    if (!e) return NULL;
    e->kind = k;
    e->pos = e->end = pos;
    e->height = e->weight = 1;
    return e;
}

/* a op b (a binary node); NULL when out of memory. */
static AstExpr *bin(Dc *x, AstOp op, AstExpr *a, AstExpr *b) {
    AstExpr *e = node(x, AST_BINARY, a->pos);
    if (!e) return NULL;
    e->op = op;
    e->a = a;
    e->b = b;
    e->end = b->end > a->end ? b->end : a->end;
    e->height = (a->height > b->height ? a->height : b->height) + 1;
    e->weight = a->weight + b->weight + 1;
    return e;
}

/* CASE WHEN arms[0] THEN arms[1] ... ELSE els END over [pos, end) (the
 * arms copied); NULL when out of memory. */
static AstExpr *case_when(Dc *x, AstExpr *const *arms, int narms, AstExpr *els, int64_t pos,
                          int64_t end) {
    AstExpr *cs = node(x, AST_CASE, pos);
    AstExpr **list = sql_arena_alloc(x->st->parse_arena, sizeof *list * (size_t)narms);
    if (!cs || !list) return NULL;
    int h = els->height, w = els->weight + 1;
    for (int i = 0; i < narms; i++) {
        list[i] = arms[i];
        if (arms[i]->height > h) h = arms[i]->height;
        w += arms[i]->weight;
    }
    cs->list = list;
    cs->nlist = narms;
    cs->b = els;
    cs->end = end;
    cs->height = h + 1;
    cs->weight = w;
    return cs;
}

/* The column alias.name; NULL when out of memory. */
static AstExpr *colref(Dc *x, const char *alias, const char *name, int64_t pos) {
    AstExpr *e = node(x, AST_COLUMN, pos);
    if (!e) return NULL;
    e->table = sql_arena_strndup(x->st->parse_arena, alias, strlen(alias));
    e->str = sql_arena_strndup(x->st->parse_arena, name, strlen(name));
    return e->table && e->str ? e : NULL;
}

/* The conjuncts of an AND tree into list (cap entries); their count, or
 * -1 when there are more. */
static int conjuncts(AstExpr *e, AstExpr **list, int n, int cap) {
    if (!e) return n;
    if (e->kind == AST_BINARY && e->op == OP_AND) {
        n = conjuncts(e->a, list, n, cap);
        return n < 0 ? n : conjuncts(e->b, list, n, cap);
    }
    if (n >= cap) return -1;
    list[n] = e;
    return n + 1;
}

/* The AND of list[0..n), or NULL for n == 0 (*oom on failure). */
static AstExpr *and_all(Dc *x, AstExpr **list, int n, int *oom) {
    AstExpr *acc = NULL;
    for (int i = 0; i < n; i++)
        if (!(acc = acc ? bin(x, OP_AND, acc, list[i]) : list[i])) {
            *oom = 1;
            return NULL;
        }
    return acc;
}

#define DC_MAX_CONJ 256
#define DC_MAX_COLS 64

/* A subquery being taken apart. */
typedef struct Split {
    AstSelect *sub;
    AstExpr *local[DC_MAX_CONJ]; /* L */
    int nlocal;
    AstExpr *corr[DC_MAX_CONJ]; /* C */
    int ncorr;
    int ninner;                       /* columns of sub's FROM read by C */
    AstSelectItem items[DC_MAX_COLS]; /* the derived table's columns */
    int nitems;
    char alias[32];
} Split;

/* The conjuncts of sub's WHERE: those reading only sub's FROM (and
 * constants) into local[*nl], the correlated ones into corr[*nc] (at most
 * DC_MAX_CONJ each), *ninner counting the inner columns these read.
 * Returns 1, or 0 when a conjunct reads a column of neither FROM, a
 * correlated one holds a nested subquery, or there are too many. */
static int split_where(Dc *x, const AstSelect *sub, AstExpr **local, int *nl, AstExpr **corr,
                       int *nc, int *ninner) {
    AstExpr *list[DC_MAX_CONJ];
    int n = conjuncts(sub->where, list, 0, DC_MAX_CONJ);
    if (n < 0) return 0;
    for (int i = 0; i < n; i++) {
        int in = 0, out = 0, bad = 0, nested = 0;
        census(x, sub, list[i], &in, &out, &bad, &nested);
        if (bad) return 0;
        if (!out) {
            local[(*nl)++] = list[i];
            continue;
        }
        if (nested) return 0;
        corr[(*nc)++] = list[i];
        *ninner += in;
    }
    return 1;
}

/* Split sub's WHERE into s->local and s->corr (exists: 1 when sub is an
 * EXISTS subquery, whose rows only count; 2 for a scalar subquery, whose
 * first row is its value: either way a LIMIT of at least 1 changes
 * nothing). Returns 1 when some conjunct
 * is correlated and every correlated one reads only sub's and the outer
 * FROM's columns (no nested subquery); 0 when sub is not correlated (or
 * not in a form handled here); -1 when out of memory. */
static int split(Dc *x, AstSelect *sub, Split *s, int exists) {
    memset(s, 0, sizeof *s);
    s->sub = sub;
    /* EXISTS (... LIMIT n), n >= 1, is EXISTS (...); a scalar subquery
     * decorrelated here makes at most one row per outer row */
    int limit_ok = exists && sub->limit && !sub->offset && sub->limit->kind == AST_INT &&
                   sub->limit->ival >= 1;
    if (!base_only(x, sub) || sub->having || (sub->limit && !limit_ok) || sub->offset) return 0;
    if (!split_where(x, sub, s->local, &s->nlocal, s->corr, &s->ncorr, &s->ninner)) return 0;
    /* the derived table's columns (C's inner columns, an IN's item or a
     * scalar's keys and value) and the joins must fit: else left alone */
    if (!s->ncorr || s->ninner + 1 > DC_MAX_COLS || s->ncorr + 1 > DC_MAX_COLS ||
        x->nadd >= DC_MAX_ADD)
        return 0;
    /* correlation outside WHERE is not handled */
    for (int i = 0; i < sub->nitems; i++) {
        int in = 0, out = 0, bad = 0, nested = 0;
        census(x, sub, sub->items[i].expr, &in, &out, &bad, &nested);
        if (out || bad || nested) return 0;
    }
    for (int i = 0; i < sub->ngroup; i++) {
        int in = 0, out = 0, bad = 0, nested = 0;
        census(x, sub, sub->group_by[i], &in, &out, &bad, &nested);
        if (out || bad) return 0;
    }
    snprintf(s->alias, sizeof s->alias, "__gqp_sq%llu", (unsigned long long)++x->db->ntemps);
    return 1;
}

/* Add expression e (of sub's FROM) as a column of the derived table;
 * returns a reference alias.__cN to it, or NULL (out of memory / full). */
static AstExpr *export_col(Dc *x, Split *s, AstExpr *e, const char *prefix) {
    if (s->nitems >= DC_MAX_COLS) return NULL;
    char name[32];
    snprintf(name, sizeof name, "%s%d", prefix, s->nitems + 1);
    AstSelectItem *it = &s->items[s->nitems++];
    it->expr = e;
    if (!(it->alias = sql_arena_strndup(x->st->parse_arena, name, strlen(name)))) return NULL;
    return colref(x, s->alias, name, e->pos);
}

/* Rewrite the columns of sub's FROM inside correlated conjunct e into
 * columns of the derived table (each exported once per occurrence).
 * Returns 0 or -1. */
static int export_inner(Dc *x, Split *s, AstExpr *e) {
    if (!e) return 0;
    if (e->kind == AST_COLUMN) {
        if (!gqp_resolves_in(x->db, s->sub, e)) return 0;
        AstExpr *copy = node(x, AST_COLUMN, e->pos);
        if (!copy) return -1;
        *copy = *e;
        AstExpr *r = export_col(x, s, copy, "__c");
        if (!r) return -1;
        e->table = r->table;
        e->str = r->str;
        return 0;
    }
    if (export_inner(x, s, e->a) || export_inner(x, s, e->b) || export_inner(x, s, e->c)) return -1;
    for (int i = 0; i < e->nlist; i++)
        if (export_inner(x, s, e->list[i])) return -1;
    return 0;
}

/* Append the derived table of s to the outer FROM as a join of kind kind
 * with condition on (NULL: none); group (n keys) for scalar subqueries.
 * Returns 0 or -1. */
static int append(Dc *x, Split *s, int kind, AstExpr *on, AstExpr **group, int ngroup,
                  int64_t pos) {
    SqlArena *a = x->st->parse_arena;
    AstSelect *d = sql_arena_alloc(a, sizeof *d);
    AstSelectItem *items = sql_arena_alloc(a, sizeof *items * (size_t)(s->nitems + 1));
    if (!d || !items) return -1;
    int oom = 0;
    d->from = s->sub->from;
    d->nfrom = s->sub->nfrom;
    d->where = and_all(x, s->local, s->nlocal, &oom);
    if (oom) return -1;
    if (s->nitems == 0) { /* EXISTS on outer columns only: any one column */
        AstExpr *one = node(x, AST_INT, pos);
        if (!one) return -1;
        one->ival = 1;
        items[0].expr = one;
        items[0].alias = sql_arena_strndup(a, "__c1", 4);
        d->nitems = 1;
    } else {
        memcpy(items, s->items, sizeof *items * (size_t)s->nitems);
        d->nitems = s->nitems;
    }
    d->items = items;
    d->group_by = group;
    d->ngroup = ngroup;
    AstTableRef *r = &x->add[x->nadd++];
    memset(r, 0, sizeof *r);
    r->alias = sql_arena_strndup(a, s->alias, strlen(s->alias));
    r->pos = pos;
    r->subquery = d;
    r->join_kind = kind;
    r->join_on = on;
    r->hidden = 1;
    return r->alias ? 0 : -1;
}

static int has_agg(const AstExpr *e);

/* e becomes the literal TRUE (its subquery is now a join). */
static void set_true(AstExpr *e) {
    int64_t pos = e->pos, end = e->end;
    memset(e, 0, sizeof *e);
    e->kind = AST_BOOL;
    e->ival = 1;
    e->pos = pos;
    e->end = end;
    e->height = e->weight = 1;
}

static int same_col(const AstExpr *a, const AstExpr *b);

/* 1 when y, an IN subquery's plain-column item, is one of sub's GROUP BY
 * keys (by name, or GROUP BY 1). */
static int groups_by_item(const AstSelect *sub, const AstExpr *y) {
    for (int i = 0; i < sub->ngroup; i++) {
        const AstExpr *g = sub->group_by[i];
        if ((g->kind == AST_COLUMN && same_col(g, y)) || (g->kind == AST_INT && g->ival == 1))
            return 1;
    }
    return 0;
}

/* 1 when IN (is_in) or EXISTS subquery sub may keep its GROUP BY and
 * HAVING in the derived table of a semi join: the HAVING reads no outer
 * column and holds no subquery; an IN's item y is a plain column it groups
 * by (by name or GROUP BY 1; other ordinals would name the derived
 * table's columns, and an EXISTS may use none). The correlated conjuncts
 * must then be equalities on a plain inner column (grouped_corr_ok). */
static int grouped_ok(Dc *x, const AstSelect *sub, int is_in) {
    if (!sub->ngroup || sub->distinct || sub->ncompound) return 0;
    const AstExpr *y = is_in && sub->nitems == 1 ? sub->items[0].expr : NULL;
    if (is_in && (!y || y->kind != AST_COLUMN)) return 0;
    for (int i = 0; i < sub->ngroup; i++)
        if (sub->group_by[i]->kind == AST_INT && (!is_in || sub->group_by[i]->ival != 1)) return 0;
    int key = !is_in || groups_by_item(sub, y);
    int in = 0, out = 0, bad = 0, nested = 0;
    census(x, sub, sub->having, &in, &out, &bad, &nested);
    return key && !out && !bad && !nested;
}

/* 1 when every correlated conjunct of s is inner column = outer
 * expression (either way round): for one outer row those columns are
 * constant over the subquery's rows, so grouping by them as well splits
 * no group the subquery makes (TPC-H-like `x IN (SELECT y FROM t WHERE
 * t.k = o.k GROUP BY y HAVING COUNT(*) > 1)`). */
static int grouped_corr_ok(Dc *x, const Split *s) {
    for (int i = 0; i < s->ncorr; i++) {
        const AstExpr *c = s->corr[i];
        if (c->kind != AST_BINARY || c->op != OP_EQ) return 0;
        int ok = 0;
        for (int k = 0; k < 2 && !ok; k++) {
            const AstExpr *col = k ? c->b : c->a, *other = k ? c->a : c->b;
            int in = 0, out = 0, bad = 0, nested = 0;
            census(x, s->sub, other, &in, &out, &bad, &nested);
            ok = col->kind == AST_COLUMN && gqp_resolves_in(x->db, s->sub, col) && !in && !bad &&
                 !nested;
        }
        if (!ok) return 0;
    }
    return 1;
}

/* The anti join condition of x NOT IN (..) from in_eq (x = alias.name):
 * a row of the set that equals x, or any row when x is NULL, or a NULL in
 * the set makes it not TRUE (NULL or FALSE: the row goes either way); an
 * empty set keeps it. in_eq OR x IS NULL OR alias.name IS NULL; NULL when
 * out of memory. */
static AstExpr *not_in_cond(Dc *x, AstExpr *in_eq, const AstExpr *ex, const char *alias,
                            const char *name) {
    AstExpr *xn = node(x, AST_ISNULL, ex->pos), *yn = node(x, AST_ISNULL, ex->pos);
    AstExpr *y2 = colref(x, alias, name, ex->pos);
    if (!xn || !yn || !y2) return NULL;
    xn->a = ex->a;
    xn->height = ex->a->height + 1;
    xn->weight = ex->a->weight + 1;
    yn->a = y2;
    yn->height = yn->weight = 2;
    AstExpr *o1 = bin(x, OP_OR, in_eq, xn);
    return o1 ? bin(x, OP_OR, o1, yn) : NULL;
}

/* [NOT] EXISTS (sub) or x IN (sub) as top-level conjunct e (ex: the node
 * holding the subquery). Returns 1 rewritten, 0 left alone, -1 OOM. */
static int semi(Dc *x, AstExpr *e, AstExpr *ex, int anti) {
    Split s;
    AstSelect *sub = ex->select;
    /* x IN (.. GROUP BY y [HAVING ..]) and EXISTS (.. GROUP BY ..
     * HAVING ..): the derived table groups by the correlated inner
     * columns as well (split does not take a HAVING: it is set aside
     * meanwhile) */
    int is_in = ex->sub_kind == AST_IN;
    int grouped = grouped_ok(x, sub, is_in);
    AstExpr *having = sub->having;
    if (grouped) sub->having = NULL;
    int rc = split(x, sub, &s, ex->sub_kind == AST_EXISTS);
    sub->having = having;
    if (rc <= 0) return rc;
    if (sub->ngroup && !(grouped && grouped_corr_ok(x, &s))) return 0;
    /* an aggregate without GROUP BY makes one row whatever matches (with
     * one, an EXISTS's items do not matter) */
    for (int i = 0; i < sub->nitems && !(grouped && !is_in); i++)
        if (sub->items[i].expr->kind != AST_STAR && has_agg(sub->items[i].expr)) return 0;
    AstExpr *in_eq = NULL;
    if (ex->sub_kind == AST_IN) {
        if (sub->nitems != 1 || sub->items[0].expr->kind == AST_STAR) return 0;
        /* y first: GROUP BY 1 names it in the derived table too */
        AstExpr *y = export_col(x, &s, sub->items[0].expr, "__c");
        if (!y || !(in_eq = bin(x, OP_EQ, ex->a, y))) return -1;
        if (anti && !(in_eq = not_in_cond(x, in_eq, ex, y->table, y->str))) return -1;
    }
    for (int i = 0; i < s.ncorr; i++)
        if (export_inner(x, &s, s.corr[i]) != 0) return -1;
    int oom = 0;
    AstExpr *on = and_all(x, s.corr, s.ncorr, &oom);
    if (!oom && in_eq) on = bin(x, OP_AND, in_eq, on);
    if (oom || !on) return -1;
    AstExpr **group = NULL;
    int ngroup = 0;
    if (sub->ngroup) {
        /* the subquery's keys, then the correlated inner columns (the
         * derived table's columns, after an IN's y) */
        group = sql_arena_alloc(x->st->parse_arena,
                                sizeof *group * (size_t)(sub->ngroup + s.nitems + 1));
        if (!group) return -1;
        for (int i = 0; i < sub->ngroup; i++)
            group[ngroup++] = sub->group_by[i];
        for (int i = is_in; i < s.nitems; i++)
            group[ngroup++] = s.items[i].expr;
    }
    if (append(x, &s, anti ? AST_JOIN_ANTI : AST_JOIN_SEMI, on, group, ngroup, ex->pos) != 0)
        return -1;
    if (sub->ngroup) x->add[x->nadd - 1].subquery->having = sub->having;
    set_true(e);
    return 1;
}

/* 1 when a name is one of SQL's aggregate functions (one argument). */
static int is_agg_name(const char *n) {
    static const char *const aggs[] = {"sum",    "avg",      "min",           "max",
                                       "count",  "total",    "group_concat",  "string_agg",
                                       "median", "quantile", "quantile_cont", "quantile_disc"};
    for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++)
        if (strcasecmp(n, aggs[i]) == 0) return 1;
    return 0;
}

static int is_agg_call(const AstExpr *e) {
    return e->kind == AST_FUNC && is_agg_name(e->str) &&
           (e->nlist <= 1 || (strcasecmp(e->str, "min") != 0 && strcasecmp(e->str, "max") != 0));
}

/* 1 when e contains an aggregate call. */
static int has_agg(const AstExpr *e) {
    if (!e) return 0;
    if (is_agg_call(e)) return 1;
    if (has_agg(e->a) || has_agg(e->b) || has_agg(e->c)) return 1;
    for (int i = 0; i < e->nlist; i++)
        if (has_agg(e->list[i])) return 1;
    return 0;
}

/* 1 when e (an aggregate expression) is NULL over no rows for certain. */
static int null_on_empty(const AstExpr *e) {
    if (!e) return 0;
    if (is_agg_call(e)) return strcasecmp(e->str, "count") != 0 && strcasecmp(e->str, "total") != 0;
    switch (e->kind) {
    case AST_NULL:
        return 1;
    case AST_BINARY:
        if (e->op >= OP_ADD && e->op <= OP_MOD) return null_on_empty(e->a) || null_on_empty(e->b);
        return 0;
    case AST_UNARY:
        return e->op != OP_NOT && null_on_empty(e->a);
    case AST_CAST:
        return null_on_empty(e->a);
    default:
        return 0;
    }
}

/* A copy of aggregate expression e as its value over no rows: COUNT ->
 * 0, TOTAL -> 0.0, other aggregates and bare columns -> NULL. NULL when out
 * of memory. */
static AstExpr *empty_value(Dc *x, const AstExpr *e) {
    if (!e) return NULL;
    AstExpr *c = node(x, AST_NULL, e->pos);
    if (!c) return NULL;
    if (is_agg_call(e) || e->kind == AST_COLUMN) {
        c->end = e->end;
        if (e->kind == AST_FUNC && strcasecmp(e->str, "count") == 0) {
            c->kind = AST_INT;
        } else if (e->kind == AST_FUNC && strcasecmp(e->str, "total") == 0) {
            c->kind = AST_FLOAT;
        }
        return c;
    }
    *c = *e;
    if ((e->a && !(c->a = empty_value(x, e->a))) || (e->b && !(c->b = empty_value(x, e->b))) ||
        (e->c && !(c->c = empty_value(x, e->c))))
        return NULL;
    if (e->nlist) {
        c->list = sql_arena_alloc(x->st->parse_arena, sizeof *c->list * (size_t)e->nlist);
        if (!c->list) return NULL;
        for (int i = 0; i < e->nlist; i++)
            if (!(c->list[i] = empty_value(x, e->list[i]))) return NULL;
    }
    return c;
}

static int is_cmp(AstOp op);

/* 1 when e is NULL whenever any column in it is NULL: columns, constants
 * and arithmetic (+ - * / %, unary minus) only. */
static int strict_expr(const AstExpr *e) {
    if (!e) return 0;
    switch (e->kind) {
    case AST_COLUMN:
    case AST_INT:
    case AST_FLOAT:
    case AST_STRING:
    case AST_NULL:
        return 1;
    case AST_UNARY:
        return (e->op == OP_NEG || e->op == OP_PLUS) && strict_expr(e->a);
    case AST_BINARY:
        return e->op >= OP_ADD && e->op <= OP_MOD && strict_expr(e->a) && strict_expr(e->b);
    default:
        return 0;
    }
}

/* The catalog table of outer FROM entry k (a base table, or the table a
 * file reference was loaded into), or NULL. */
static CatTable *entry_table(Dc *x, int k) {
    const AstTableRef *r = &x->outer->from[k];
    return r->name ? cat_find_table(x->db->cat, r->bound_name ? r->bound_name : r->name) : NULL;
}

/* The FROM entry of x's outer SELECT that column c names (a base table,
 * or a derived table / CTE planned inline, whose SELECT a magic set's
 * domain then reads again; the first with the column when c is
 * unqualified), or -1. */
static int outer_entry(Dc *x, const AstExpr *c) {
    const AstSelect *o = x->outer;
    for (int i = 0; i < o->nfrom; i++) {
        const AstTableRef *r = &o->from[i];
        const char *alias = r->alias ? r->alias : r->name;
        if (c->table && (!alias || strcasecmp(c->table, alias) != 0)) continue;
        if (r->subquery) {
            if (r->bound_name || r->file) return -1;
            if (gqp_entry_has(x->db, r, c->str)) return i;
            continue;
        }
        if (!r->name || gqp_is_view(x->db, r->name)) return -1;
        CatTable *t = entry_table(x, i);
        if (t && cat_find_column(t, c->str) >= 0) return i;
    }
    return -1;
}

/* 1 when column references a and b are written alike (qualifier and name,
 * case-insensitive). */
static int same_col(const AstExpr *a, const AstExpr *b) {
    return strcasecmp(a->str, b->str) == 0 &&
           ((!a->table && !b->table) ||
            (a->table && b->table && strcasecmp(a->table, b->table) == 0));
}

/* The outer columns of the correlated conjunct e: each distinct one (by
 * qualifier and name) once into cols (at most DC_MAX_COLS, *n of them),
 * its FROM entry (a base table) into ents. Returns 0, or -1 when they do
 * not fit or one is not a column of a base table of the outer FROM. */
static int outer_cols(Dc *x, Split *s, const AstExpr *e, const AstExpr **cols, int *ents, int *n) {
    if (!e) return 0;
    if (e->kind == AST_COLUMN) {
        if (gqp_resolves_in(x->db, s->sub, e)) return 0;
        int k = outer_entry(x, e);
        if (k < 0) return -1;
        for (int i = 0; i < *n; i++)
            if (same_col(cols[i], e)) return 0;
        if (*n >= DC_MAX_COLS) return -1;
        /* a copy: to_magic rewrites the conjuncts' own nodes in place */
        AstExpr *cp = node(x, AST_COLUMN, e->pos);
        if (!cp) return -1;
        *cp = *e;
        ents[*n] = k;
        cols[(*n)++] = cp;
        return 0;
    }
    if (outer_cols(x, s, e->a, cols, ents, n) || outer_cols(x, s, e->b, cols, ents, n) ||
        outer_cols(x, s, e->c, cols, ents, n))
        return -1;
    for (int i = 0; i < e->nlist; i++)
        if (outer_cols(x, s, e->list[i], cols, ents, n)) return -1;
    return 0;
}

static AstExpr *deep_copy(Dc *x, const AstExpr *e);

/* 1 when e reads only columns of the outer FROM entries ents[0..ne) (base
 * tables) and holds no subquery. */
static int only_entries(Dc *x, const AstExpr *e, const int *ents, int ne) {
    if (!e) return 1;
    if (e->select) return 0;
    if (e->kind == AST_COLUMN) {
        if (added_col(x, e)) return 0;
        int k = outer_entry(x, e);
        for (int i = 0; i < ne; i++)
            if (ents[i] == k) return 1;
        return 0;
    }
    if (!only_entries(x, e->a, ents, ne) || !only_entries(x, e->b, ents, ne) ||
        !only_entries(x, e->c, ents, ne))
        return 0;
    for (int i = 0; i < e->nlist; i++)
        if (!only_entries(x, e->list[i], ents, ne)) return 0;
    return 1;
}

/* The WHERE of a magic set over several outer entries ents[0..ne): copies
 * of the conjuncts of the outer WHERE, and of the ON of those entries
 * joined INNER, that read only them (their join conditions and filters),
 * so that D is the outer rows' combinations (a superset of them: the rest
 * of the outer FROM is not there) rather than a cross product. NULL when
 * none; *oom on failure. */
static AstExpr *domain_where(Dc *x, const int *ents, int ne, int *oom) {
    AstExpr *list[DC_MAX_CONJ], *keep[DC_MAX_CONJ];
    int n = conjuncts(x->outer->where, list, 0, DC_MAX_CONJ);
    if (n < 0) n = 0; /* too many: none (D a superset all the same) */
    for (int i = 0; i < ne; i++) {
        const AstTableRef *r = &x->outer->from[ents[i]];
        if (r->join_kind == AST_JOIN_INNER && r->join_on) {
            int m = conjuncts(r->join_on, list, n, DC_MAX_CONJ);
            if (m > 0) n = m;
        }
    }
    int nk = 0;
    for (int i = 0; i < n; i++)
        if (only_entries(x, list[i], ents, ne)) {
            if (!(keep[nk] = deep_copy(x, list[i]))) {
                *oom = 1;
                return NULL;
            }
            nk++;
        }
    return and_all(x, keep, nk, oom);
}

/* 1 when column col of the outer FROM entry (a base table) holds no NULL
 * now. */
static int outer_not_null(Dc *x, const AstExpr *col, int entry) {
    const AstTableRef *r = &x->outer->from[entry];
    /* an outer join pads the entry's rows with NULLs whatever its data
     * hold: the right side of a LEFT JOIN, either side of a FULL JOIN,
     * everything before a RIGHT or FULL JOIN */
    if (r->join_kind == AST_JOIN_LEFT || r->join_kind == AST_JOIN_FULL) return 0;
    for (int i = entry + 1; i < x->outer->nfrom; i++)
        if (x->outer->from[i].join_kind == AST_JOIN_RIGHT ||
            x->outer->from[i].join_kind == AST_JOIN_FULL)
            return 0;
    CatTable *t = entry_table(x, entry);
    if (!t) return 0;
    int c = cat_find_column(t, col->str);
    CatError err;
    if (c < 0 || cat_column_use(t, c, &err) != 0) return 0;
    /* the validity bytes themselves: the statistics may be stale here (an
     * INSERT marks them so; binding, later, brings them up to date) */
    const CatColumn *cc = &t->cols[c];
    return !(cc->valid && cc->n > 0 && memchr(cc->valid, 0, (size_t)cc->n));
}

/* 1 when e reads the outer column c (a column not of sub's FROM). */
static int mentions(Dc *x, Split *s, const AstExpr *e, const AstExpr *c) {
    if (!e) return 0;
    if (e->kind == AST_COLUMN) return same_col(e, c) && !gqp_resolves_in(x->db, s->sub, e);
    if (mentions(x, s, e->a, c) || mentions(x, s, e->b, c) || mentions(x, s, e->c, c)) return 1;
    for (int i = 0; i < e->nlist; i++)
        if (mentions(x, s, e->list[i], c)) return 1;
    return 0;
}

/* 1 when predicate p is never TRUE while the outer column c is NULL (so an
 * outer row with c NULL gets the subquery's value over no rows): a
 * comparison, BETWEEN (c in the tested value, or a bound when not NOT
 * BETWEEN), IN list, LIKE or IS NOT NULL with c in a strict operand; an AND
 * with such a side; an OR with two. Sufficient, not necessary. */
static int null_rejects(Dc *x, Split *s, const AstExpr *p, const AstExpr *c) {
#define NR_IN(e) (strict_expr(e) && mentions(x, s, (e), c))
    switch (p->kind) {
    case AST_BINARY:
        if (p->op == OP_AND) return null_rejects(x, s, p->a, c) || null_rejects(x, s, p->b, c);
        if (p->op == OP_OR) return null_rejects(x, s, p->a, c) && null_rejects(x, s, p->b, c);
        return is_cmp(p->op) && (NR_IN(p->a) || NR_IN(p->b));
    case AST_BETWEEN:
        return NR_IN(p->a) || (!p->negated && (NR_IN(p->b) || NR_IN(p->c)));
    case AST_IN:
        return !p->select && NR_IN(p->a);
    case AST_LIKE:
        return NR_IN(p->a) || NR_IN(p->b);
    case AST_ISNULL:
        return !p->b && p->negated && NR_IN(p->a);
    default:
        return 0;
    }
#undef NR_IN
}

/* e with every outer column of cols[0..n) replaced in place by
 * alias.__oK (K its position + 1). Returns 0 or -1. */
static int to_magic(Dc *x, Split *s, AstExpr *e, const AstExpr **cols, int n, const char *alias) {
    if (!e) return 0;
    if (e->kind == AST_COLUMN && !gqp_resolves_in(x->db, s->sub, e)) {
        for (int i = 0; i < n; i++)
            if (same_col(cols[i], e)) {
                char name[16];
                snprintf(name, sizeof name, "__o%d", i + 1);
                AstExpr *r = colref(x, alias, name, e->pos);
                if (!r) return -1;
                e->table = r->table;
                e->str = r->str;
                return 0;
            }
        return 0;
    }
    if (to_magic(x, s, e->a, cols, n, alias) || to_magic(x, s, e->b, cols, n, alias) ||
        to_magic(x, s, e->c, cols, n, alias))
        return -1;
    for (int i = 0; i < e->nlist; i++)
        if (to_magic(x, s, e->list[i], cols, n, alias)) return -1;
    return 0;
}

/* Appends derived table d, named alias, to sub's FROM (a new array: the
 * old one may be shared with a copy of sub). Returns 0 or -1. */
static int add_from(Dc *x, AstSelect *sub, const char *alias, AstSelect *d) {
    SqlArena *a = x->st->parse_arena;
    AstTableRef *from = sql_arena_alloc(a, sizeof *from * (size_t)(sub->nfrom + 1));
    if (!from) return -1;
    memcpy(from, sub->from, sizeof *from * (size_t)sub->nfrom);
    memset(&from[sub->nfrom], 0, sizeof *from);
    from[sub->nfrom].alias = sql_arena_strndup(a, alias, strlen(alias));
    from[sub->nfrom].subquery = d;
    from[sub->nfrom].pos = sub->from[0].pos;
    if (!from[sub->nfrom].alias) return -1;
    sub->from = from;
    sub->nfrom++;
    return 0;
}

/* D = SELECT DISTINCT <outer columns cols (of outer FROM entries ents)>
 * AS __o1.. FROM <their tables> [WHERE <the outer conditions among them
 * only>], the magic set's domain, named in dalias; NULL when out of
 * memory. */
static AstSelect *magic_domain(Dc *x, const AstExpr *const *cols, const int *ents, int n,
                               char *dalias, size_t cap) {
    /* the outer entries the columns belong to, in FROM order */
    int eidx[DC_MAX_COLS], ne = 0;
    for (int k = 0; k < x->outer->nfrom; k++)
        for (int i = 0; i < n; i++)
            if (ents[i] == k) {
                eidx[ne++] = k;
                break;
            }
    SqlArena *a = x->st->parse_arena;
    AstSelect *d = sql_arena_alloc(a, sizeof *d);
    AstSelectItem *ditems = sql_arena_alloc(a, sizeof *ditems * (size_t)n);
    AstTableRef *dfrom = sql_arena_alloc(a, sizeof *dfrom * (size_t)ne);
    if (!d || !ditems || !dfrom) return NULL;
    for (int i = 0; i < ne; i++) {
        dfrom[i] = x->outer->from[eidx[i]];
        dfrom[i].join_kind = AST_JOIN_INNER;
        dfrom[i].join_on = NULL;
        dfrom[i].natural = 0;
        dfrom[i].using_cols = NULL;
        dfrom[i].nusing = 0;
    }
    d->from = dfrom;
    d->nfrom = ne;
    d->distinct = 1;
    if (ne > 1) {
        int oom = 0;
        d->where = domain_where(x, eidx, ne, &oom);
        if (oom) return NULL;
    }
    snprintf(dalias, cap, "__gqp_md%llu", (unsigned long long)++x->db->ntemps);
    for (int i = 0; i < n; i++) {
        AstExpr *cp = node(x, AST_COLUMN, cols[i]->pos);
        char name[16];
        snprintf(name, sizeof name, "__o%d", i + 1);
        if (!cp) return NULL;
        *cp = *cols[i];
        ditems[i].expr = cp;
        if (!(ditems[i].alias = sql_arena_strndup(a, name, strlen(name)))) return NULL;
    }
    d->items = ditems;
    d->nitems = n;
    return d;
}

/* The keys of scalar subquery sub correlated other than by equalities
 * (after Neumann & Kemper's magic set): its outer columns, of base tables
 * T.. of the outer FROM, become the derived table D = SELECT DISTINCT
 * <them> FROM T.. (with several tables, WHERE the outer conditions that
 * read only them: domain_where), joined into the subquery's FROM; the correlated
 * conjuncts read D's columns and go to the subquery's WHERE; the groups
 * are D's columns, joined back on outer column = key. Only conjuncts that
 * are comparisons of columns, constants and arithmetic (NULL when an outer
 * column is NULL, as an unmatched row's value over no rows assumes).
 * Sets group / *ngroup and *on. Returns 1, 0 (not this shape), -1, or 2
 * (nothing changed) when an outer column may be NULL where no conjunct
 * rejects it: *nullcol names it, for null_split. */
static int magic_keys(Dc *x, Split *s, AstExpr ***group, int *ngroup, AstExpr **on, AstExpr **first,
                      const AstExpr **nullcol) {
    const AstExpr *cols[DC_MAX_COLS];
    int n = 0, ents[DC_MAX_COLS];
    for (int i = 0; i < s->ncorr; i++)
        if (outer_cols(x, s, s->corr[i], cols, ents, &n) != 0) return 0;
    if (n == 0 || s->nlocal + s->ncorr > DC_MAX_CONJ || x->nadd >= DC_MAX_ADD) return 0;
    /* the join back on outer column = key gives an outer row with a NULL
     * there the value over no rows: right when some conjunct is never TRUE
     * while that column is NULL (null_rejects: comparisons, BETWEEN, ...),
     * or when the column holds no NULL (TPC-H's never do; the plan is made
     * again, and this checked again, whenever the table changes) */
    for (int i = 0; i < n; i++) {
        int rejected = 0;
        for (int j = 0; j < x->nnonnull && !rejected; j++)
            rejected = same_col(x->nonnull[j], cols[i]);
        for (int j = 0; j < s->ncorr && !rejected; j++)
            rejected = null_rejects(x, s, s->corr[j], cols[i]);
        if (!rejected && !outer_not_null(x, cols[i], ents[i])) {
            *nullcol = cols[i];
            return 2;
        }
    }
    AstSelect *sub = s->sub;
    char dalias[32];
    AstSelect *d = magic_domain(x, cols, ents, n, dalias, sizeof dalias);
    AstExpr **g = sql_arena_alloc(x->st->parse_arena, sizeof *g * (size_t)n);
    if (!d || !g) return -1;
    /* the outer side of the join back: copies taken before the rewrite */
    AstExpr *outer_side[DC_MAX_COLS];
    for (int i = 0; i < n; i++) {
        if (!(outer_side[i] = node(x, AST_COLUMN, cols[i]->pos))) return -1;
        *outer_side[i] = *cols[i];
    }
    for (int i = 0; i < s->ncorr; i++) {
        if (to_magic(x, s, s->corr[i], cols, n, dalias) != 0) return -1;
        s->local[s->nlocal++] = s->corr[i];
    }
    if (add_from(x, sub, dalias, d) != 0) return -1;
    *on = NULL;
    *first = NULL;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "__o%d", i + 1);
        if (!(g[i] = colref(x, dalias, name, cols[i]->pos))) return -1;
        AstExpr *gk = colref(x, dalias, name, cols[i]->pos);
        AstExpr *k = gk ? export_col(x, s, gk, "__k") : NULL;
        if (!k) return -1;
        if (!*first) *first = k;
        AstExpr *eq = bin(x, OP_EQ, outer_side[i], k);
        if (!eq || !(*on = *on ? bin(x, OP_AND, *on, eq) : eq)) return -1;
    }
    s->ncorr = 0;
    *group = g;
    *ngroup = n;
    return 1;
}

/* 1 when column col names the one GROUP BY key of derived table (or CTE)
 * r's SELECT, a plain column output under that name (or under its
 * column list's name): one row per key value (a lookup into an aggregated
 * CTE, `WITH w AS (SELECT k, SUM(v) s FROM u GROUP BY k)`). */
static int derived_key_unique(const AstTableRef *r, const AstExpr *col) {
    const AstSelect *d = r->subquery;
    if (d->ncompound || d->ngroup != 1 || d->group_by[0]->kind != AST_COLUMN) return 0;
    int i = gqp_derived_item(r, col->str);
    if (i < 0 || i >= d->nitems) return 0;
    const AstExpr *it = d->items[i].expr;
    return it->kind == AST_COLUMN && same_col(it, d->group_by[0]);
}

/* 1 when column col of sub's one base table holds no value twice among
 * its non-NULL rows: a UNIQUE index on it alone, else its data (the table
 * brought up to date first, as binding would). */
static int key_unique(Dc *x, const AstSelect *sub, const AstExpr *col) {
    const AstTableRef *r = sub->nfrom == 1 ? &sub->from[0] : NULL;
    if (!col || col->kind != AST_COLUMN || !r) return 0;
    if (r->subquery && !r->bound_name) return derived_key_unique(r, col);
    if (!(r->bound_name || r->name)) return 0;
    CatTable *t = cat_find_table(x->db->cat, r->bound_name ? r->bound_name : r->name);
    int c = t ? cat_find_column(t, col->str) : -1;
    CatError err;
    if (c < 0 || cat_column_use(t, c, &err) != 0) return 0;
    for (int i = 0; i < t->nindexes; i++)
        if (t->indexes[i].unique && t->indexes[i].ncols == 1 && t->indexes[i].cols[0] == c)
            return 1;
    return cat_table_ready(t) == 0 && cat_column_unique(&t->cols[c]) > 0;
}

static AstExpr *agg_call(Dc *x, const char *name, AstExpr *arg, int64_t pos);
static AstExpr *count_of(Dc *x, AstExpr *arg, int64_t pos);

/* alias.name = e, a new node (NULL when out of memory). */
static AstExpr *eq_col(Dc *x, const char *alias, const char *name, AstExpr *e) {
    AstExpr *c = colref(x, alias, name, e->pos);
    return c ? bin(x, OP_EQ, e, c) : NULL;
}

/* The scalar (SELECT e FROM T WHERE o1 = i1 AND .. AND L ORDER BY z [DESC]
 * [, z2 [DESC] ..] [LIMIT n >= 1]) without an aggregate whose keys may
 * repeat: the first row of each key's rows in z's order, SQLite's NULLs
 * first (ASC) or last (DESC); a second term picks among the rows the
 * first one picked, by the same steps over them, and so on. With M = (SELECT i1 AS __k1, ..,
 * MIN|MAX(z) AS __m, COUNT(*) - COUNT(z) AS __nn FROM T WHERE L GROUP BY i1, ..), the rows that
 * come first are those of T (WHERE L) joined to M on i1 = __k1 .. and ASC:  (__nn > 0 AND z IS
 * NULL) OR (__nn = 0 AND z = __m) DESC: (__m IS NULL AND z IS NULL) OR z = __m grouped by i1, ..
 * with MIN(e) as __v (rows tied on z: the least e, where SQLite takes the first it meets), LEFT
 * JOINed on o1 = __k1 AND ..; no row is NULL as before. Returns 1 rewritten, 0 left alone, -1. */
static int top1_join(Dc *x, AstExpr *ex, Split *s, AstExpr **keys, AstExpr **outer_side) {
    AstSelect *sub = s->sub;
    if (sub->norder < 1 || sub->offset || s->ncorr + 2 > DC_MAX_COLS ||
        s->nlocal + (int64_t)sub->norder * (s->ncorr + 1) > DC_MAX_CONJ)
        return 0;
    for (int t = 0; t < sub->norder; t++) /* NULLs where SQLite puts them only */
        if (sub->order_by[t].nulls_flip) return 0;
    AstExpr *zs[DC_MAX_CONJ];
    int nz = sub->norder;
    for (int t = 0; t < nz; t++) {
        AstExpr *z = sub->order_by[t].expr;
        if (z->kind == AST_INT) {
            if (z->ival != 1) return 0;
            z = sub->items[0].expr; /* ORDER BY 1 */
        }
        int in = 0, out = 0, bad = 0, nested = 0;
        census(x, sub, z, &in, &out, &bad, &nested);
        if (out || bad || nested || has_agg(z)) return 0;
        zs[t] = z;
    }
    SqlArena *a = x->st->parse_arena;
    int64_t pos = ex->pos;
    /* one M per ORDER BY term, each over the rows the terms before it
     * picked (T's FROM with the earlier M's, L and the earlier picks) */
    for (int t = 0; t < nz; t++) {
        AstExpr *z = zs[t];
        int desc = sub->order_by[t].desc;
        /* M over its own copies of T's FROM, L, the keys and z */
        AstSelect *m = sql_arena_alloc(a, sizeof *m);
        AstSelectItem *mi = sql_arena_alloc(a, sizeof *mi * (size_t)(s->ncorr + 2));
        AstExpr **mg = sql_arena_alloc(a, sizeof *mg * (size_t)s->ncorr);
        if (!m || !mi || !mg) return -1;
        char malias[32];
        snprintf(malias, sizeof malias, "__gqp_mt%llu", (unsigned long long)++x->db->ntemps);
        AstExpr *lw[DC_MAX_CONJ];
        for (int i = 0; i < s->nlocal; i++)
            if (!(lw[i] = deep_copy(x, s->local[i]))) return -1;
        int oom = 0;
        m->where = and_all(x, lw, s->nlocal, &oom);
        if (oom) return -1;
        m->from = sub->from;
        m->nfrom = sub->nfrom;
        for (int i = 0; i < s->ncorr; i++) {
            char name[16];
            snprintf(name, sizeof name, "__k%d", i + 1);
            if (!(mi[i].expr = deep_copy(x, keys[i])) || !(mg[i] = deep_copy(x, keys[i])) ||
                !(mi[i].alias = sql_arena_strndup(a, name, strlen(name))))
                return -1;
        }
        AstExpr *zm = deep_copy(x, z), *zc = deep_copy(x, z);
        AstExpr *ext = zm ? agg_call(x, desc ? "max" : "min", zm, pos) : NULL;
        AstExpr *all = agg_call(x, "count", NULL, pos), *nonnull = zc ? count_of(x, zc, pos) : NULL;
        AstExpr *nn = all && nonnull ? bin(x, OP_SUB, all, nonnull) : NULL;
        if (!ext || !nn) return -1;
        mi[s->ncorr].expr = ext;
        mi[s->ncorr + 1].expr = nn;
        if (!(mi[s->ncorr].alias = sql_arena_strndup(a, "__m", 3)) ||
            !(mi[s->ncorr + 1].alias = sql_arena_strndup(a, "__nn", 4)))
            return -1;
        m->items = mi;
        m->nitems = s->ncorr + 2;
        m->group_by = mg;
        m->ngroup = s->ncorr;
        /* T's rows that come first: joined to M on the keys, z picked */
        if (add_from(x, sub, malias, m) != 0) return -1;
        for (int i = 0; i < s->ncorr; i++) {
            char name[16];
            snprintf(name, sizeof name, "__k%d", i + 1);
            AstExpr *k = deep_copy(x, keys[i]);
            if (!k || !(s->local[s->nlocal++] = eq_col(x, malias, name, k))) return -1;
        }
        AstExpr *z1 = deep_copy(x, z), *z2 = deep_copy(x, z);
        AstExpr *zn = node(x, AST_ISNULL, pos), *mref = colref(x, malias, "__m", pos);
        AstExpr *nref = colref(x, malias, "__nn", pos), *zero = node(x, AST_INT, pos);
        if (!z1 || !z2 || !zn || !mref || !nref || !zero) return -1;
        zn->a = z1;
        zn->height = z1->height + 1;
        zn->weight = z1->weight + 1;
        AstExpr *pick;
        if (desc) {
            AstExpr *mn = node(x, AST_ISNULL, pos);
            if (!mn) return -1;
            mn->a = mref;
            mn->height = mn->weight = 2;
            AstExpr *eqm = eq_col(x, malias, "__m", z2), *both = bin(x, OP_AND, mn, zn);
            pick = eqm && both ? bin(x, OP_OR, both, eqm) : NULL;
        } else {
            AstExpr *nref2 = colref(x, malias, "__nn", pos), *zero2 = node(x, AST_INT, pos);
            AstExpr *has = bin(x, OP_GT, nref, zero);
            AstExpr *none = nref2 && zero2 ? bin(x, OP_EQ, nref2, zero2) : NULL;
            AstExpr *eqm = eq_col(x, malias, "__m", z2);
            AstExpr *l = has ? bin(x, OP_AND, has, zn) : NULL;
            AstExpr *r = none && eqm ? bin(x, OP_AND, none, eqm) : NULL;
            pick = l && r ? bin(x, OP_OR, l, r) : NULL;
        }
        if (!pick) return -1;
        s->local[s->nlocal++] = pick;
    }
    /* grouped by the keys, MIN(e) of the rows picked, joined back */
    AstExpr **group = sql_arena_alloc(a, sizeof *group * (size_t)s->ncorr), *on = NULL;
    if (!group) return -1;
    for (int i = 0; i < s->ncorr; i++) {
        group[i] = keys[i];
        AstExpr *k = export_col(x, s, keys[i], "__k");
        AstExpr *eq = k ? bin(x, OP_EQ, outer_side[i], k) : NULL;
        if (!eq || !(on = on ? bin(x, OP_AND, on, eq) : eq)) return -1;
    }
    AstExpr *mv = agg_call(x, "min", sub->items[0].expr, pos);
    AstExpr *v = mv ? export_col(x, s, mv, "__v") : NULL;
    if (!v) return -1;
    if (append(x, s, AST_JOIN_LEFT, on, group, s->ncorr, pos) != 0) return -1;
    int64_t end = ex->end;
    *ex = *v;
    ex->pos = pos;
    ex->end = end;
    return 1;
}

/* A scalar subquery without an aggregate, (SELECT e FROM T WHERE o1 = i1
 * AND .. AND L [ORDER BY ..] [LIMIT n >= 1]), whose keys i1.. include a
 * column of T that holds each value at most once: at most one row per
 * outer row, so its value is e of the row that matches, or NULL (the
 * ORDER BY and LIMIT change nothing) -- a lookup join, LEFT (INNER when
 * strict: a NULL never passes the comparison), on o1 = __k1 AND ..,
 * against (SELECT i1 AS __k1, .., e AS __v FROM T WHERE L). Other shapes
 * (several rows possible: SQLite then takes the first it meets) are left
 * alone. Returns 1 rewritten, 0 left alone, -1. */
static int lookup_join(Dc *x, AstExpr *ex, Split *s, AstExpr **keys, AstExpr **outer_side,
                       int eq_shape, int strict) {
    AstSelect *sub = s->sub;
    if (!eq_shape) return 0;
    /* rank_limit's D: its keys together are unique */
    int uniq = sub->nfrom == 1 && sub->from[0].subquery && !sub->from[0].bound_name &&
               sub->from[0].subquery->keys_unique == s->ncorr;
    for (int i = 0; i < s->ncorr && !uniq; i++)
        uniq = key_unique(x, sub, keys[i]);
    if (!uniq) return top1_join(x, ex, s, keys, outer_side);
    AstExpr *on = NULL;
    for (int i = 0; i < s->ncorr; i++) {
        AstExpr *k = export_col(x, s, keys[i], "__k");
        AstExpr *eq = k ? bin(x, OP_EQ, outer_side[i], k) : NULL;
        if (!eq || !(on = on ? bin(x, OP_AND, on, eq) : eq)) return -1;
    }
    AstExpr *v = export_col(x, s, sub->items[0].expr, "__v");
    if (!v) return -1;
    if (append(x, s, strict ? AST_JOIN_INNER : AST_JOIN_LEFT, on, NULL, 0, ex->pos) != 0) return -1;
    int64_t pos = ex->pos, end = ex->end;
    *ex = *v;
    ex->pos = pos;
    ex->end = end;
    return 1;
}

/* The type name of outer column c (a column of a base table of the outer
 * FROM) as CAST reads it, into buf; NULL when unknown. */
static const char *outer_type(Dc *x, const AstExpr *c, char *buf, size_t cap) {
    int k = outer_entry(x, c);
    const CatTable *t = k >= 0 ? entry_table(x, k) : NULL;
    int j = t ? cat_find_column(t, c->str) : -1;
    if (j < 0) return NULL;
    const CatColumn *col = &t->cols[j];
    if (col->type == CAT_DECIMAL)
        snprintf(buf, cap, "DECIMAL(%d,%d)", col->prec > 0 ? col->prec : 18, col->scale);
    else
        snprintf(buf, cap, "%s", cat_type_name(col->type));
    return buf;
}

/* e with every reference to the outer column c (not a column of sub's
 * FROM) replaced in place by NULL of c's type (CAST(NULL AS type), so that
 * a CASE or comparison over it binds as it did: a bare NULL has no type).
 * Returns 0, or -1 when out of memory. */
static int to_null(Dc *x, const AstSelect *sub, AstExpr *e, const AstExpr *c, const char *type) {
    if (!e) return 0;
    if (e->kind == AST_COLUMN) {
        if (same_col(e, c) && !gqp_resolves_in(x->db, sub, e)) {
            int64_t pos = e->pos, end = e->end;
            AstExpr *nul = node(x, AST_NULL, pos);
            if (!nul) return -1;
            nul->end = end;
            memset(e, 0, sizeof *e);
            e->kind = AST_NULL;
            e->pos = pos;
            e->end = end;
            e->height = e->weight = 1;
            if (type) {
                e->kind = AST_CAST;
                e->a = nul;
                if (!(e->str = sql_arena_strndup(x->st->parse_arena, type, strlen(type))))
                    return -1;
                e->height = e->weight = 2;
            }
        }
        return 0;
    }
    if (to_null(x, sub, e->a, c, type) || to_null(x, sub, e->b, c, type) ||
        to_null(x, sub, e->c, c, type))
        return -1;
    for (int i = 0; i < e->nlist; i++)
        if (to_null(x, sub, e->list[i], c, type)) return -1;
    return 0;
}

static int scalar(Dc *x, AstExpr *ex, int strict);

/* Scalar subquery node ex whose magic set stopped at outer column c, which
 * may be NULL where no correlated conjunct rejects it (an outer row with c
 * NULL would find no partner on c = key, yet the subquery over it need not
 * be empty: "c IS NULL OR i > 0"). ex becomes
 *   CASE WHEN c IS NULL THEN <ex, c replaced by NULL> ELSE <ex> END,
 * each arm decorrelated on its own: the THEN no longer reads c (it may be
 * uncorrelated now), the ELSE is evaluated only where c is not NULL
 * (x->nonnull), so its join back on c = key is exact. One split per such
 * column. Returns 1 rewritten, 0 left alone, -1 out of memory. */
static int null_split(Dc *x, AstExpr *ex, const AstExpr *c) {
    /* each split doubles the subquery: at most DC_MAX_SPLITS per SELECT
     * (2^k copies for k such columns; past that, left alone) */
    if (x->nsplits >= DC_MAX_SPLITS || x->nnonnull >= DC_MAX_NONNULL || x->nadd + 2 > DC_MAX_ADD)
        return 0;
    x->nsplits++;
    AstSelect *sub = ex->select;
    SqlArena *a = x->st->parse_arena;
    AstSelect *ns = sql_arena_alloc(a, sizeof *ns);
    AstSelectItem *items = sql_arena_alloc(a, sizeof *items * (size_t)sub->nitems);
    AstExpr *nq = node(x, AST_SUBQUERY, ex->pos), *els = node(x, AST_SUBQUERY, ex->pos);
    AstExpr *isn = node(x, AST_ISNULL, ex->pos), *col = node(x, AST_COLUMN, c->pos);
    if (!ns || !items || !nq || !els || !isn || !col) return -1;
    /* the THEN arm's own copy: the ELSE's rewrite changes sub in place */
    *ns = *sub;
    for (int i = 0; i < sub->nitems; i++) {
        items[i] = sub->items[i];
        if (!(items[i].expr = deep_copy(x, sub->items[i].expr))) return -1;
    }
    ns->items = items;
    if (sub->where && !(ns->where = deep_copy(x, sub->where))) return -1;
    char type[64];
    if (to_null(x, sub, ns->where, c, outer_type(x, c, type, sizeof type)) != 0) return -1;
    *nq = *ex;
    nq->select = ns;
    *els = *ex;
    *col = *c;
    isn->a = col;
    isn->height = 2;
    isn->weight = 2;
    x->nonnull[x->nnonnull++] = col;
    int rc = scalar(x, els, 0);
    x->nnonnull--;
    if (rc <= 0) return rc;
    if (scalar(x, nq, 0) < 0) return -1;
    AstExpr *arms[2] = {isn, nq};
    AstExpr *cs = case_when(x, arms, 2, els, ex->pos, ex->end);
    if (!cs) return -1;
    *ex = *cs;
    return 1;
}

/* Scalar subquery node ex; strict: it is an operand of a comparison that
 * is a top-level WHERE conjunct. Returns 1 rewritten, 0 left alone, -1. */
static int scalar(Dc *x, AstExpr *ex, int strict) {
    Split s;
    int rc = split(x, ex->select, &s, 2);
    if (rc <= 0) return rc;
    AstSelect *sub = ex->select;
    if (sub->ngroup || sub->distinct || sub->nitems != 1 || sub->items[0].expr->kind == AST_STAR)
        return 0;
    int lookup = !has_agg(sub->items[0].expr);
    SqlArena *a = x->st->parse_arena;
    AstExpr **group = NULL, *on = NULL, *first = NULL;
    int ngroup = 0;
    /* every correlated conjunct: outer-only expression = inner-only
     * expression; else the magic set */
    AstExpr *keys[DC_MAX_CONJ], *outer_side[DC_MAX_CONJ];
    int eq_shape = 1;
    for (int i = 0; i < s.ncorr && eq_shape; i++) {
        AstExpr *c = s.corr[i];
        if (c->kind != AST_BINARY || c->op != OP_EQ) {
            eq_shape = 0;
            break;
        }
        int ia = 0, oa = 0, ib = 0, ob = 0, bad = 0, nested = 0;
        census(x, sub, c->a, &ia, &oa, &bad, &nested);
        census(x, sub, c->b, &ib, &ob, &bad, &nested);
        if (oa && !ia && ib && !ob)
            outer_side[i] = c->a, keys[i] = c->b;
        else if (ob && !ib && ia && !oa)
            outer_side[i] = c->b, keys[i] = c->a;
        else
            eq_shape = 0;
    }
    if (lookup) return lookup_join(x, ex, &s, keys, outer_side, eq_shape, strict);
    if (!eq_shape) {
        const AstExpr *nullcol = NULL;
        rc = magic_keys(x, &s, &group, &ngroup, &on, &first, &nullcol);
        if (rc == 2) return null_split(x, ex, nullcol);
        if (rc <= 0) return rc;
    } else {
        if (!(group = sql_arena_alloc(a, sizeof *group * (size_t)s.ncorr))) return -1;
        ngroup = s.ncorr;
        for (int i = 0; i < s.ncorr; i++) {
            group[i] = keys[i];
            AstExpr *k = export_col(x, &s, keys[i], "__k");
            if (!k) return -1;
            if (!first) first = k;
            AstExpr *eq = bin(x, OP_EQ, outer_side[i], k);
            if (!eq || !(on = on ? bin(x, OP_AND, on, eq) : eq)) return -1;
        }
    }
    AstExpr *item = sub->items[0].expr;
    AstExpr *v = export_col(x, &s, item, "__v");
    if (!v) return -1;
    int inner = strict && null_on_empty(item);
    AstExpr *value = v;
    if (!inner) {
        /* CASE WHEN <first key> IS NULL THEN <value over no rows> ELSE __v END */
        AstExpr *isn = node(x, AST_ISNULL, ex->pos), *ev = empty_value(x, item);
        AstExpr *fk = colref(x, first->table, first->str, ex->pos);
        if (!isn || !ev || !fk) return -1;
        isn->a = fk;
        isn->height = 2;
        isn->weight = 2;
        AstExpr *arms[2] = {isn, ev};
        if (!(value = case_when(x, arms, 2, v, ex->pos, ex->end))) return -1;
    }
    if (append(x, &s, inner ? AST_JOIN_INNER : AST_JOIN_LEFT, on, group, ngroup, ex->pos) != 0)
        return -1;
    int64_t pos = ex->pos, end = ex->end;
    *ex = *value;
    ex->pos = pos;
    ex->end = end;
    return 1;
}

/* EXISTS (sub) by what only decides whether sub has a row: an aggregate
 * without GROUP BY or HAVING always makes one (e becomes TRUE: returns 1);
 * GROUP BY without HAVING makes one where some row passes WHERE (sub
 * becomes a copy without it, its select list the constant 1). Returns 0,
 * or -1 out of memory. */
static int exists_normalize(Dc *x, AstExpr *e) {
    AstSelect *sub = e->select;
    if (sub->having || sub->ncompound || sub->offset ||
        (sub->limit && !(sub->limit->kind == AST_INT && sub->limit->ival >= 1)))
        return 0;
    int agg = 0;
    for (int i = 0; i < sub->nitems; i++)
        agg |= sub->items[i].expr->kind != AST_STAR && has_agg(sub->items[i].expr);
    if (!sub->ngroup && agg) {
        set_true(e);
        return 1;
    }
    if (!sub->ngroup) return 0;
    SqlArena *a = x->st->parse_arena;
    AstSelect *c = sql_arena_alloc(a, sizeof *c);
    AstSelectItem *item = sql_arena_alloc(a, sizeof *item);
    AstExpr *one = node(x, AST_INT, e->pos);
    if (!c || !item || !one) return -1;
    *c = *sub;
    one->ival = 1;
    item->expr = one;
    c->items = item;
    c->nitems = 1;
    c->ngroup = 0;
    c->group_by = NULL;
    c->norder = 0;
    c->order_by = NULL;
    e->select = c;
    return 0;
}

static int count_sub(Dc *x, const AstSelect *sub, AstExpr *item, AstExpr *extra, int64_t pos,
                     AstExpr **out);

/* e becomes (SELECT COUNT(*) FROM <sub's FROM> WHERE <sub's WHERE> [AND
 * extra]) > 0 when scalar() decorrelates that count. 1, 0 (e unchanged),
 * -1. */
static int count_positive(Dc *x, AstExpr *e, const AstSelect *sub, AstExpr *extra) {
    AstExpr *sq = NULL, *zero = node(x, AST_INT, e->pos), *cnt = count_of(x, NULL, e->pos);
    if (!zero || !cnt) return -1;
    int rc = count_sub(x, sub, cnt, extra, e->pos, &sq);
    if (rc <= 0) return rc;
    AstExpr *gt = bin(x, OP_GT, sq, zero);
    if (!gt) return -1;
    int64_t pos = e->pos, end = e->end;
    *e = *gt;
    e->pos = pos;
    e->end = end;
    return 1;
}

/* EXISTS (sub) node e outside the positions semi() takes (under OR or
 * NOT, in CASE, in the select list): EXISTS is two-valued, so it is
 * (SELECT COUNT(*) FROM .. WHERE ..) > 0, whose correlated COUNT scalar()
 * joins (a LEFT JOIN; no row counts 0). Returns 1 rewritten, 0 left alone
 * (uncorrelated, or a shape scalar() does not take), -1 out of memory. */
static int exists_count(Dc *x, AstExpr *e) {
    AstSelect *sub = e->select;
    if (sub->ngroup || sub->having || sub->ncompound || sub->offset) return 0;
    if (sub->limit && !(sub->limit->kind == AST_INT && sub->limit->ival >= 1)) return 0;
    return count_positive(x, e, sub, NULL);
}

static int is_cmp(AstOp op) {
    return op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE;
}

/* x IN (sub) node e where only its TRUE counts (under OR in WHERE, not
 * under NOT): as EXISTS (SELECT 1 .. WHERE <sub's WHERE> AND y = x), NULL
 * and FALSE being alike there, through count_positive. Returns 1
 * rewritten, 0 left alone (e unchanged), -1 out of memory. */
static int in_as_exists(Dc *x, AstExpr *e) {
    AstSelect *sub = e->select;
    if (sub->nitems != 1 || sub->items[0].expr->kind == AST_STAR || sub->ngroup || sub->having ||
        sub->ncompound || sub->limit || sub->offset || has_agg(sub->items[0].expr))
        return 0;
    AstExpr *eq = bin(x, OP_EQ, sub->items[0].expr, e->a);
    return eq ? count_positive(x, e, sub, eq) : -1;
}

/* A copy of expression tree e (nested subqueries shared): scalar()
 * rewrites correlated conjuncts in place, so each subquery made from one
 * WHERE gets its own. NULL when out of memory (or e NULL). */
static AstExpr *deep_copy(Dc *x, const AstExpr *e) {
    if (!e) return NULL;
    AstExpr *c = node(x, e->kind, e->pos);
    if (!c) return NULL;
    *c = *e;
    if ((e->a && !(c->a = deep_copy(x, e->a))) || (e->b && !(c->b = deep_copy(x, e->b))) ||
        (e->c && !(c->c = deep_copy(x, e->c))))
        return NULL;
    if (e->nlist) {
        c->list = sql_arena_alloc(x->st->parse_arena, sizeof *c->list * (size_t)e->nlist);
        if (!c->list) return NULL;
        for (int i = 0; i < e->nlist; i++)
            if (!(c->list[i] = deep_copy(x, e->list[i]))) return NULL;
    }
    return c;
}

/* name(*) (arg NULL) or name(arg), a new aggregate call node. */
static AstExpr *agg_call(Dc *x, const char *name, AstExpr *arg, int64_t pos) {
    AstExpr **args = sql_arena_alloc(x->st->parse_arena, sizeof *args);
    AstExpr *f = node(x, AST_FUNC, pos), *star = arg ? arg : node(x, AST_STAR, pos);
    if (!args || !f || !star ||
        !(f->str = sql_arena_strndup(x->st->parse_arena, name, strlen(name))))
        return NULL;
    args[0] = star;
    f->list = args;
    f->nlist = 1;
    f->height = star->height + 1;
    f->weight = star->weight + 1;
    return f;
}

/* COUNT(*) (arg NULL) or COUNT(arg), a new node. */
static AstExpr *count_of(Dc *x, AstExpr *arg, int64_t pos) {
    return agg_call(x, "count", arg, pos);
}

/* The correlated scalar (SELECT <item> FROM F WHERE <sub's WHERE, copied>
 * [AND extra]) decorrelated by scalar() into *out. 1, 0 (left alone), -1. */
static int count_sub(Dc *x, const AstSelect *sub, AstExpr *item, AstExpr *extra, int64_t pos,
                     AstExpr **out) {
    SqlArena *a = x->st->parse_arena;
    AstSelect *c = sql_arena_alloc(a, sizeof *c);
    AstSelectItem *it = sql_arena_alloc(a, sizeof *it);
    AstExpr *sq = node(x, AST_SUBQUERY, pos);
    if (!c || !it || !sq || !item) return -1;
    *c = *sub;
    c->distinct = 0;
    c->limit = NULL; /* EXISTS (.. LIMIT n >= 1) counts the same rows */
    c->norder = 0;
    c->order_by = NULL;
    c->where = sub->where ? deep_copy(x, sub->where) : NULL;
    if (sub->where && !c->where) return -1;
    if (extra && !(c->where = c->where ? bin(x, OP_AND, c->where, extra) : extra)) return -1;
    it->expr = item;
    c->items = it;
    c->nitems = 1;
    sq->sub_kind = AST_SUBQUERY;
    sq->select = c;
    int rc = scalar(x, sq, 0);
    *out = sq;
    return rc;
}

/* x [NOT] IN (correlated sub) anywhere (the select list, under NOT, ...)
 * with SQL's three values, from three correlated counts (each a LEFT
 * JOIN of a grouped derived table, scalar()):
 *   CASE WHEN <rows with y = x> > 0 THEN 1 WHEN <rows> = 0 THEN 0
 *        WHEN x IS NULL OR <rows with a NULL y> > 0 THEN NULL ELSE 0 END
 * (NOT IN: 0 and 1 swapped). Returns 1 rewritten, 0 left alone, -1. */
static int in_three_valued(Dc *x, AstExpr *e) {
    AstSelect *sub = e->select;
    if (sub->nitems != 1 || sub->items[0].expr->kind == AST_STAR || sub->ngroup || sub->having ||
        sub->ncompound || sub->limit || sub->offset || has_agg(sub->items[0].expr) ||
        x->nadd + 3 > DC_MAX_ADD)
        return 0;
    Split probe;
    int rc = split(x, sub, &probe, 0); /* correlated at all? (only a name is used up) */
    if (rc < 0) return rc;
    AstExpr *y = sub->items[0].expr, *all = NULL, *nul = NULL, *match = NULL;
    /* or only through its item (y IN (SELECT b.v + a.x FROM b)): the
     * counts below move y into their WHEREs, and the count of all rows
     * is then uncorrelated (left to the uncorrelated path) */
    int item_only = 0;
    if (rc == 0) {
        int in = 0, out = 0, bad = 0, nested = 0;
        census(x, sub, y, &in, &out, &bad, &nested);
        if (!out || bad || nested) return 0;
        in = out = bad = nested = 0;
        census(x, sub, sub->where, &in, &out, &bad, &nested);
        if (out || bad || nested) return 0;
        item_only = 1;
    }
    int64_t pos = e->pos;
    /* the rows with a NULL y counted with y IS NULL in the WHERE, not as
     * COUNT(*) - COUNT(y): a y that reads the enclosing query then
     * correlates the WHERE only, which the magic-set form takes */
    AstExpr *cy = deep_copy(x, y), *c1 = count_of(x, NULL, pos), *c2 = count_of(x, NULL, pos);
    AstExpr *yn = node(x, AST_ISNULL, pos);
    if (!c1 || !c2 || !cy || !yn) return -1;
    yn->a = cy;
    yn->height = cy->height + 1;
    yn->weight = cy->weight + 1;
    if ((rc = count_sub(x, sub, c1, NULL, pos, &all)) < 0 || (rc == 0 && !item_only)) return rc;
    if ((rc = count_sub(x, sub, c2, yn, pos, &nul)) <= 0) return rc;
    AstExpr *ya = deep_copy(x, y), *xa = deep_copy(x, e->a), *c3 = count_of(x, NULL, pos);
    AstExpr *eq = ya && xa ? bin(x, OP_EQ, ya, xa) : NULL;
    if (!eq || !c3) return -1;
    if ((rc = count_sub(x, sub, c3, eq, pos, &match)) <= 0) return rc;
    int neg = e->negated;
    AstExpr *zero = node(x, AST_INT, pos), *one = node(x, AST_INT, pos);
    AstExpr *zero2 = node(x, AST_INT, pos), *nullv = node(x, AST_NULL, pos);
    AstExpr *yes = node(x, AST_INT, pos), *no = node(x, AST_INT, pos), *no2 = node(x, AST_INT, pos);
    AstExpr *xn = node(x, AST_ISNULL, pos);
    if (!zero || !one || !zero2 || !nullv || !yes || !no || !no2 || !xn) return -1;
    one->ival = 0; /* the literals compared with: 0 */
    yes->ival = neg ? 0 : 1;
    no->ival = no2->ival = neg ? 1 : 0;
    xn->a = e->a;
    xn->height = e->a->height + 1;
    xn->weight = e->a->weight + 1;
    AstExpr *w1 = bin(x, OP_GT, match, zero), *w2 = bin(x, OP_EQ, all, one);
    AstExpr *w3a = bin(x, OP_GT, nul, zero2), *w3 = w3a ? bin(x, OP_OR, xn, w3a) : NULL;
    if (!w1 || !w2 || !w3) return -1;
    AstExpr *arms[6] = {w1, yes, w2, no, w3, nullv};
    AstExpr *cs = case_when(x, arms, 6, no2, pos, e->end);
    if (!cs) return -1;
    int64_t end = e->end;
    *e = *cs;
    e->pos = pos;
    e->end = end;
    return 1;
}

/* The name a FROM entry answers to. */
static const char *ref_name(const AstTableRef *r) {
    return r->alias ? r->alias : r->name;
}

/* 1 when some FROM entry of s answers to name. */
static int names_ref(const AstSelect *s, const char *name) {
    for (int i = 0; name && i < s->nfrom; i++)
        if (ref_name(&s->from[i]) && strcasecmp(ref_name(&s->from[i]), name) == 0) return 1;
    return 0;
}

/* Columns of e (inner's expression) that neither inner's nor mid's FROM
 * has but the enclosing query's does (a grand-parent reference): counted
 * into *gp; *nested counts nested subqueries, *bad other columns. */
static void grand_refs(Dc *x, const AstSelect *inner, const AstSelect *mid, const AstExpr *e,
                       int *gp, int *nested, int *bad) {
    if (!e) return;
    if (e->select) (*nested)++;
    if (e->kind == AST_COLUMN) {
        if (gqp_resolves_in(x->db, inner, e) || gqp_resolves_in(x->db, mid, e)) return;
        if (gqp_resolves_in(x->db, x->outer, e))
            (*gp)++;
        else
            (*bad)++;
        return;
    }
    grand_refs(x, inner, mid, e->a, gp, nested, bad);
    grand_refs(x, inner, mid, e->b, gp, nested, bad);
    grand_refs(x, inner, mid, e->c, gp, nested, bad);
    for (int i = 0; i < e->nlist; i++)
        grand_refs(x, inner, mid, e->list[i], gp, nested, bad);
}

/* Subquery mid (of an EXISTS, NOT EXISTS, IN or NOT IN: only whether it
 * has rows, or the set of its values, counts) whose WHERE has a top-level
 * conjunct EXISTS (SELECT .. FROM C WHERE Q) reading the enclosing query's
 * columns (a grand-parent correlation, which the forms below cannot take;
 * or x IN (SELECT y FROM C WHERE Q), which is EXISTS (.. WHERE Q AND x =
 * y) there):
 * mid has a row (a value) iff some row of its FROM with its other
 * conjuncts has a row of C with Q, so the EXISTS moves into mid as C in
 * its FROM and Q in its WHERE (`EXISTS (SELECT .. FROM b WHERE b.id = a.id
 * AND EXISTS (SELECT .. FROM c WHERE c.y = b.k AND c.x = a.k))`); Q then
 * reads mid's enclosing query directly. Only when C is plain base tables
 * whose names mid and the enclosing query do not use, the EXISTS has no
 * GROUP BY, HAVING, aggregate, OFFSET or LIMIT below 1, and Q no nested
 * subquery; and only when mid has no aggregate (C's rows would repeat
 * its rows), no OFFSET and, unless it is an EXISTS's (exists = 1), no
 * LIMIT (the first rows of the repeated ones could hold fewer values).
 * Returns 1 when some EXISTS moved, 0, -1 out of memory. */
static int flatten_grand(Dc *x, AstSelect *mid, int exists) {
    if (mid->ncompound || mid->nwith || mid->ngroup || mid->having || !mid->where || mid->offset ||
        (mid->limit && !(exists && mid->limit->kind == AST_INT && mid->limit->ival >= 1)))
        return 0;
    for (int k = 0; k < mid->nitems; k++)
        if (mid->items[k].expr->kind != AST_STAR && has_agg(mid->items[k].expr)) return 0;
    AstExpr *list[DC_MAX_CONJ];
    int n = conjuncts(mid->where, list, 0, DC_MAX_CONJ), moved = 0;
    for (int i = 0; i < n; i++) {
        AstExpr *c = list[i];
        /* x IN (SELECT y FROM C WHERE Q), a conjunct of WHERE, is TRUE
         * exactly when EXISTS (SELECT .. FROM C WHERE Q AND x = y) */
        if (!c->select || c->negated || !(c->sub_kind == AST_EXISTS || c->sub_kind == AST_IN))
            continue;
        int is_in = c->sub_kind == AST_IN;
        AstSelect *in = c->select;
        if (is_in && (in->nitems != 1 || in->items[0].expr->kind == AST_STAR)) continue;
        if (!base_only(x, in) || in->ngroup || in->having || in->offset ||
            (in->limit && !(in->limit->kind == AST_INT && in->limit->ival >= 1)))
            continue;
        int ok = 1;
        for (int k = 0; k < in->nitems && ok; k++)
            ok = in->items[k].expr->kind == AST_STAR || !has_agg(in->items[k].expr);
        for (int k = 0; k < in->nfrom && ok; k++) {
            const AstTableRef *r = &in->from[k];
            const char *nm = ref_name(r);
            ok = r->join_kind == AST_JOIN_INNER && !r->join_on && !r->natural && !r->using_cols &&
                 nm && !names_ref(mid, nm) && !names_ref(x->outer, nm);
            for (int j = 0; j < k && ok; j++)
                ok = strcasecmp(ref_name(&in->from[j]), nm) != 0;
        }
        int gp = 0, nested = 0, bad = 0;
        if (ok) grand_refs(x, in, mid, in->where, &gp, &nested, &bad);
        if (ok && is_in) {
            grand_refs(x, in, mid, in->items[0].expr, &gp, &nested, &bad);
            grand_refs(x, in, mid, c->a, &gp, &nested, &bad);
        }
        if (!ok || !gp || nested || bad) continue;
        AstExpr *q = in->where;
        if (is_in) {
            AstExpr *eq = bin(x, OP_EQ, c->a, in->items[0].expr);
            if (!eq || (q && !(eq = bin(x, OP_AND, q, eq)))) return -1;
            q = eq;
        }
        AstTableRef *from =
            sql_arena_alloc(x->st->parse_arena, sizeof *from * (size_t)(mid->nfrom + in->nfrom));
        if (!from) return -1;
        memcpy(from, mid->from, sizeof *from * (size_t)mid->nfrom);
        memcpy(from + mid->nfrom, in->from, sizeof *from * (size_t)in->nfrom);
        mid->from = from;
        mid->nfrom += in->nfrom;
        if (q) {
            int64_t pos = c->pos, end = c->end;
            *c = *q;
            c->pos = pos;
            c->end = end;
        } else {
            set_true(c);
        }
        moved = 1;
    }
    return moved;
}

/* x [NOT] IN (SELECT y ... GROUP BY ..) without HAVING or an aggregate,
 * correlated, y one of the GROUP BY columns (by name, or GROUP BY 1): the
 * groups' y values are the rows' y values, so the GROUP BY changes
 * nothing that IN sees and is dropped (the IN forms below take it then).
 * Returns 1 dropped, 0 not this shape. */
static int in_drop_group(Dc *x, AstExpr *e) {
    AstSelect *sub = e->select;
    if (!sub->ngroup || sub->having || sub->nitems != 1 || sub->ncompound || sub->distinct)
        return 0;
    const AstExpr *y = sub->items[0].expr;
    if (y->kind != AST_COLUMN) return 0;
    int in = 0, out = 0, bad = 0, nested = 0;
    census(x, sub, y, &in, &out, &bad, &nested);
    if (!in || out || bad || nested) return 0;
    in = out = bad = nested = 0;
    census(x, sub, sub->where, &in, &out, &bad, &nested);
    if (!out) return 0; /* uncorrelated: its grouped rows make a shorter list */
    if (!groups_by_item(sub, y)) return 0;
    sub->ngroup = 0;
    sub->group_by = NULL;
    return 1;
}

/* x [NOT] IN (SELECT agg ... ) without GROUP BY / HAVING: the subquery
 * makes exactly one row, so it is x = (SELECT agg ...) (x <> (...) for
 * NOT IN) with the same NULL rules; e becomes that comparison, which the
 * scalar forms take. Returns 1 rewritten, 0 not this shape, -1. */
static int in_agg_to_cmp(Dc *x, AstExpr *e) {
    AstSelect *sub = e->select;
    if (sub->nitems != 1 || sub->items[0].expr->kind == AST_STAR || !has_agg(sub->items[0].expr) ||
        sub->ngroup || sub->having || sub->ncompound || sub->offset ||
        (sub->limit && !(sub->limit->kind == AST_INT && sub->limit->ival >= 1)))
        return 0;
    AstExpr *sq = node(x, AST_SUBQUERY, e->pos);
    if (!sq) return -1;
    sq->sub_kind = AST_SUBQUERY;
    sq->select = sub;
    sq->end = e->end;
    AstExpr *cmp = bin(x, e->negated ? OP_NE : OP_EQ, e->a, sq);
    if (!cmp) return -1;
    int64_t pos = e->pos, end = e->end;
    *e = *cmp;
    e->pos = pos;
    e->end = end;
    return 1;
}

/* Subquery node e whose WHERE has conjuncts P that read only the
 * enclosing query's columns (`t.c LIKE 'a%'`, `t.c IS NOT NULL`): they
 * gate the whole subquery, so e becomes CASE WHEN P THEN e' ELSE <e over
 * no rows> END, e' being e without P: the value over no rows of a scalar
 * aggregate without GROUP BY (COUNT 0, others NULL), NULL for another
 * scalar, FALSE for EXISTS and IN, TRUE for NOT IN (an empty set). P
 * NULL counts as FALSE, as in the WHERE it came from. e' is then
 * decorrelated as any subquery (or is uncorrelated). The fallback when the
 * other forms left e alone. Returns 1 rewritten, 0 left alone, -1 OOM. */
static int hoist_outer(Dc *x, AstExpr *e) {
    AstSelect *sub = e->select;
    if (!sub || sub->ncompound || sub->nwith || sub->having) return 0;
    AstExpr *list[DC_MAX_CONJ], *keep[DC_MAX_CONJ], *p = NULL;
    int n = conjuncts(sub->where, list, 0, DC_MAX_CONJ), nk = 0, oom = 0;
    if (n <= 0) return 0;
    for (int i = 0; i < n; i++) {
        int in = 0, out = 0, bad = 0, nested = 0;
        census(x, sub, list[i], &in, &out, &bad, &nested);
        if (!in && out && !bad && !nested) {
            if (!(p = p ? bin(x, OP_AND, p, list[i]) : list[i])) return -1;
        } else {
            keep[nk++] = list[i];
        }
    }
    if (!p) return 0;
    AstExpr *inner = node(x, AST_SUBQUERY, e->pos), *v0 = NULL;
    if (!inner) return -1;
    *inner = *e;
    if (e->sub_kind == AST_SUBQUERY) {
        const AstExpr *item = sub->nitems == 1 ? sub->items[0].expr : NULL;
        v0 = item && !sub->ngroup && has_agg(item) ? empty_value(x, item)
                                                   : node(x, AST_NULL, e->pos);
    } else if ((v0 = node(x, AST_BOOL, e->pos))) {
        v0->ival = e->sub_kind == AST_IN && e->negated;
    }
    AstExpr *arms[2] = {p, inner};
    AstExpr *cs = v0 ? case_when(x, arms, 2, v0, e->pos, e->end) : NULL;
    if (!cs) return -1;
    sub->where = and_all(x, keep, nk, &oom);
    if (oom) return -1;
    *e = *cs;
    return 1;
}

/* Fingerprints are written into a PlanBuf (plan_buf_printf); a shape they
 * do not cover stops the text as running out of memory does (oom set). */
static void fp_str(PlanBuf *f, const char *t) {
    if (t)
        plan_buf_printf(f, "%zu:%s", strlen(t), t);
    else
        plan_buf_printf(f, "-");
}

static void fp_select(PlanBuf *f, const AstSelect *s);

/* e's shape as text: equal texts, equal expressions (in one scope) */
static void fp_expr(PlanBuf *f, const AstExpr *e) {
    if (!e) {
        plan_buf_printf(f, "~");
        return;
    }
    if (e->ints) f->oom = 1;
    plan_buf_printf(f, "(%d %d %lld %a %d %d %d %d", (int)e->kind, (int)e->op, (long long)e->ival,
                    e->fval, e->negated, e->distinct, (int)e->sub_kind, e->nlist);
    fp_str(f, e->str);
    fp_str(f, e->table);
    fp_expr(f, e->a);
    fp_expr(f, e->b);
    fp_expr(f, e->c);
    for (int i = 0; i < e->nlist; i++)
        fp_expr(f, e->list[i]);
    if (e->select) fp_select(f, e->select);
    plan_buf_printf(f, ")");
}

static void fp_select(PlanBuf *f, const AstSelect *s) {
    if (s->ncompound || s->nwith) f->oom = 1;
    plan_buf_printf(f, "[S %d %d %d %d %d", s->distinct, s->nitems, s->nfrom, s->ngroup, s->norder);
    for (int i = 0; i < s->nitems; i++)
        fp_expr(f, s->items[i].expr);
    for (int i = 0; i < s->nfrom; i++) {
        const AstTableRef *r = &s->from[i];
        if (r->subquery || r->file || r->nusing || r->natural || r->hidden) f->oom = 1;
        plan_buf_printf(f, "{F %d", r->join_kind);
        fp_str(f, r->name);
        fp_str(f, r->alias);
        fp_str(f, r->bound_name);
        fp_expr(f, r->join_on);
        plan_buf_printf(f, "}");
    }
    fp_expr(f, s->where);
    for (int i = 0; i < s->ngroup; i++)
        fp_expr(f, s->group_by[i]);
    fp_expr(f, s->having);
    for (int i = 0; i < s->norder; i++) {
        plan_buf_printf(f, s->order_by[i].desc ? "d%d" : "a%d", s->order_by[i].nulls_flip);
        fp_expr(f, s->order_by[i].expr);
    }
    fp_expr(f, s->limit);
    fp_expr(f, s->offset);
    plan_buf_printf(f, "]");
}

/* The fingerprint of subquery expression e (malloc'd), or NULL when its
 * shape is not covered (or out of memory). */
static char *fingerprint(const AstExpr *e) {
    PlanBuf f = {NULL, 0, 0, 0};
    fp_expr(&f, e);
    if (f.oom || !f.s) {
        free(f.s);
        return NULL;
    }
    return f.s;
}

static int has_select(const AstExpr *e) {
    if (!e) return 0;
    if (e->select) return 1;
    if (has_select(e->a) || has_select(e->b) || has_select(e->c)) return 1;
    for (int i = 0; i < e->nlist; i++)
        if (has_select(e->list[i])) return 1;
    return 0;
}

/* e (fingerprint key) was rewritten: remember what it became. Takes key. */
static int memo_put(Dc *x, char *key, const AstExpr *e) {
    /* a value that still holds a subquery (null_split's arm for a NULL
     * outer column, now uncorrelated, runs before binding) is remembered
     * too: its copies share that subquery's SELECT and get the same
     * value, so that a GROUP BY copy still matches the select list's
     * (else the select list's became a bare column: a wrong answer,
     * gqpdiff seed 80452) */
    if (!key || x->nmemo == DC_MAX_MEMO) {
        free(key);
        return 0;
    }
    AstExpr *v = deep_copy(x, e);
    if (!v) {
        free(key);
        return -1;
    }
    x->memo[x->nmemo].key = key;
    x->memo[x->nmemo++].value = v;
    return 0;
}

/* 1 when e equals a subquery rewritten before (e becomes a copy of its
 * value), 0 when not, -1 out of memory. */
static int memo_get(Dc *x, const char *key, AstExpr *e) {
    for (int i = 0; key && i < x->nmemo; i++) {
        if (strcmp(x->memo[i].key, key) != 0) continue;
        AstExpr *v = deep_copy(x, x->memo[i].value);
        if (!v) return -1;
        int64_t pos = e->pos, end = e->end;
        *e = *v;
        e->pos = pos;
        e->end = end;
        return 1;
    }
    return 0;
}

/* walk (below) of a subquery value (top 0) through the memo */
static int walk(Dc *x, AstExpr *e, int top);
static int walk_value(Dc *x, AstExpr *e) {
    char *key = fingerprint(e);
    int rc = memo_get(x, key, e);
    if (rc != 0) {
        free(key);
        return rc < 0 ? -1 : 0;
    }
    rc = walk(x, e, -1);
    if (rc == 0 && !e->select) return memo_put(x, key, e);
    free(key);
    return rc;
}

#define DC_MAX_GREFS 256 /* outer column references grand_magic rewrites */
#define DC_MAX_DEPTH 16  /* nested SELECTs it looks into */

/* The references to the enclosing query's columns anywhere inside a
 * subquery, nested subqueries included (grand_magic). */
typedef struct GRefs {
    AstExpr *node[DC_MAX_GREFS];
    int nnode;
    const AstExpr *cols[DC_MAX_COLS]; /* distinct columns */
    int ents[DC_MAX_COLS];            /* their outer FROM entries */
    int ncols;
    int deep;     /* references below the subquery's own level */
    int items;    /* references in the subquery's own select list */
    int bad;      /* a shape this does not take */
    int in_items; /* walking the subquery's own select list now */
} GRefs;

static void gref_select(Dc *x, const AstSelect **sc, int depth, AstSelect *s, GRefs *g);

/* Collect e's references; sc[0..depth-1]: the scopes it is inside,
 * innermost last (sc[0] the subquery). */
static void gref_expr(Dc *x, const AstSelect **sc, int depth, AstExpr *e, GRefs *g) {
    if (!e || g->bad) return;
    if (e->select) {
        gref_select(x, sc, depth, e->select, g);
        gref_expr(x, sc, depth, e->a, g); /* an IN's operand */
        return;
    }
    if (e->kind == AST_COLUMN) {
        for (int d = depth - 1; d >= 0; d--)
            if (gqp_resolves_in(x->db, sc[d], e)) return;
        int k = added_col(x, e) ? -1 : outer_entry(x, e);
        if (k < 0 || g->nnode == DC_MAX_GREFS) {
            g->bad = 1;
            return;
        }
        g->node[g->nnode++] = e;
        g->deep += depth > 1;
        g->items += depth == 1 && g->in_items;
        for (int i = 0; i < g->ncols; i++)
            if (same_col(g->cols[i], e)) return;
        if (g->ncols == DC_MAX_COLS) {
            g->bad = 1;
            return;
        }
        g->ents[g->ncols] = k;
        g->cols[g->ncols++] = e;
        return;
    }
    gref_expr(x, sc, depth, e->a, g);
    gref_expr(x, sc, depth, e->b, g);
    gref_expr(x, sc, depth, e->c, g);
    for (int i = 0; i < e->nlist; i++)
        gref_expr(x, sc, depth, e->list[i], g);
}

static void gref_select(Dc *x, const AstSelect **sc, int depth, AstSelect *s, GRefs *g) {
    if (depth == DC_MAX_DEPTH || !base_only(x, s)) {
        g->bad = 1;
        return;
    }
    sc[depth++] = s;
    int outer_items = g->in_items;
    g->in_items = depth == 1;
    for (int i = 0; i < s->nitems; i++)
        gref_expr(x, sc, depth, s->items[i].expr, g);
    g->in_items = 0;
    for (int i = 0; i < s->nfrom; i++)
        gref_expr(x, sc, depth, s->from[i].join_on, g);
    gref_expr(x, sc, depth, s->where, g);
    for (int i = 0; i < s->ngroup; i++)
        gref_expr(x, sc, depth, s->group_by[i], g);
    gref_expr(x, sc, depth, s->having, g);
    for (int i = 0; i < s->norder; i++)
        gref_expr(x, sc, depth, s->order_by[i].expr, g);
    g->in_items = outer_items;
}

/* name(a, b), a new call node (NULL when out of memory). */
static AstExpr *call2(Dc *x, const char *name, AstExpr *a, AstExpr *b) {
    AstExpr **args = sql_arena_alloc(x->st->parse_arena, sizeof *args * 2);
    AstExpr *f = node(x, AST_FUNC, a->pos);
    if (!args || !f || !(f->str = sql_arena_strndup(x->st->parse_arena, name, strlen(name))))
        return NULL;
    args[0] = a;
    args[1] = b;
    f->list = args;
    f->nlist = 2;
    f->height = (a->height > b->height ? a->height : b->height) + 1;
    f->weight = a->weight + b->weight + 1;
    return f;
}

/* A constant of type t's kind, for COALESCE (NULL when out of memory). */
static AstExpr *filler(Dc *x, CatType t, int64_t pos) {
    AstExpr *k = node(x, t == CAT_STRING ? AST_STRING : t == CAT_DATE ? AST_DATE : AST_INT, pos);
    if (k && t == CAT_STRING && !(k->str = sql_arena_strndup(x->st->parse_arena, "", 0)))
        return NULL;
    if (k && t == CAT_DATE && !(k->str = sql_arena_strndup(x->st->parse_arena, "1970-01-01", 10)))
        return NULL;
    return k;
}

/* The join-back condition of outer column o and alias.name: o = alias.name,
 * or, when o may be NULL (t its type; CAT_NULL: it may not), the
 * null-safe COALESCE(o, k) = COALESCE(alias.name, k) AND (o IS NULL) =
 * (alias.name IS NULL), which still joins on keys. */
static AstExpr *gm_key(Dc *x, const char *alias, const char *name, AstExpr *o, CatType t) {
    if (t == CAT_NULL) return eq_col(x, alias, name, o);
    int64_t pos = o->pos;
    AstExpr *o2 = deep_copy(x, o), *c1 = colref(x, alias, name, pos),
            *c2 = colref(x, alias, name, pos);
    AstExpr *k1 = filler(x, t, pos), *k2 = filler(x, t, pos);
    AstExpr *n1 = node(x, AST_ISNULL, pos), *n2 = node(x, AST_ISNULL, pos);
    if (!o2 || !c1 || !c2 || !k1 || !k2 || !n1 || !n2) return NULL;
    n1->a = o2;
    n1->height = o2->height + 1;
    n1->weight = o2->weight + 1;
    n2->a = c2;
    n2->height = n2->weight = 2;
    AstExpr *l = call2(x, "coalesce", o, k1), *r = call2(x, "coalesce", c1, k2);
    AstExpr *v = l && r ? bin(x, OP_EQ, l, r) : NULL, *nn = bin(x, OP_EQ, n1, n2);
    return v && nn ? bin(x, OP_AND, v, nn) : NULL;
}

/* A top-level conjunct e: [NOT] EXISTS (sub) or x [NOT] IN (SELECT y ..)
 * (ex the EXISTS / IN node) whose sub reads the enclosing query's columns
 * inside a nested subquery (a grand-parent correlation: relational
 * division's NOT EXISTS (.. NOT EXISTS (.. a.k ..))), or in the IN's y,
 * which the forms above cannot take. With D = SELECT DISTINCT <those columns> AS __o1..
 * FROM <their tables> (the magic set), X = SELECT DISTINCT D.__o1 .. [, y]
 * FROM <sub's FROM>, D WHERE <sub's WHERE, every such column read from D>
 * is uncorrelated (its nested subqueries are then correlated to X's own
 * FROM only, and decorrelated when X is materialized); e becomes a SEMI
 * (ANTI) join of X on o1 = X.__o1 AND .. [AND x = X.__v (NOT IN: or x or
 * __v NULL)], null-safely on a column that may be NULL (gm_key: an outer
 * row with a NULL there meets D's NULL row). Only when sub has no
 * aggregate, GROUP BY, HAVING, OFFSET or (unless an EXISTS's, n >= 1)
 * LIMIT. Returns 1 rewritten, 0 left alone, -1 out of memory. */
static int grand_magic(Dc *x, AstExpr *e, AstExpr *ex, int anti) {
    AstSelect *sub = ex->select;
    int is_in = ex->sub_kind == AST_IN;
    if (!sub || !(is_in || ex->sub_kind == AST_EXISTS) || sub->ngroup || sub->having ||
        sub->offset || x->nadd >= DC_MAX_ADD ||
        (sub->limit && !(!is_in && sub->limit->kind == AST_INT && sub->limit->ival >= 1)) ||
        (is_in && (sub->nitems != 1 || sub->items[0].expr->kind == AST_STAR || has_select(ex->a))))
        return 0;
    for (int k = 0; k < sub->nitems; k++)
        if (sub->items[k].expr->kind != AST_STAR && has_agg(sub->items[k].expr)) return 0;
    GRefs *g = calloc(1, sizeof *g);
    if (!g) return -1;
    const AstSelect *sc[DC_MAX_DEPTH];
    gref_select(x, sc, 0, sub, g);
    /* the forms above take correlation in the subquery's own WHERE; an
     * IN's select list reading the outer query they do not */
    int ok = !g->bad && (g->deep > 0 || (is_in && g->items > 0));
    /* a column that may be NULL joins back null-safely (gm_key) */
    CatType nullable[DC_MAX_COLS];
    for (int i = 0; ok && i < g->ncols; i++) {
        int nn = outer_not_null(x, g->cols[i], g->ents[i]);
        for (int j = 0; j < x->nnonnull && !nn; j++)
            nn = same_col(x->nonnull[j], g->cols[i]);
        nullable[i] = CAT_NULL;
        if (!nn) {
            const CatTable *t = entry_table(x, g->ents[i]);
            int j = t ? cat_find_column(t, g->cols[i]->str) : -1;
            if (j < 0)
                ok = 0;
            else
                nullable[i] = t->cols[j].type;
        }
    }
    if (!ok) {
        free(g);
        return 0;
    }
    SqlArena *a = x->st->parse_arena;
    int n = g->ncols, rc = -1;
    char dalias[32], xalias[32];
    AstSelect *d = magic_domain(x, g->cols, g->ents, n, dalias, sizeof dalias);
    AstSelect *xs = sql_arena_alloc(a, sizeof *xs);
    AstSelectItem *items = sql_arena_alloc(a, sizeof *items * (size_t)(n + 1));
    AstExpr *outer_side[DC_MAX_COLS];
    if (!d || !xs || !items) goto out;
    /* the join's outer side: copies of the columns before their rewrite */
    for (int i = 0; i < n; i++) {
        if (!(outer_side[i] = node(x, AST_COLUMN, g->cols[i]->pos))) goto out;
        *outer_side[i] = *g->cols[i];
    }
    /* every reference now reads D */
    for (int r = 0; r < g->nnode; r++) {
        AstExpr *c = g->node[r];
        for (int i = 0; i < n; i++)
            if (same_col(outer_side[i], c)) {
                char name[16];
                snprintf(name, sizeof name, "__o%d", i + 1);
                AstExpr *ref = colref(x, dalias, name, c->pos);
                if (!ref) goto out;
                c->table = ref->table;
                c->str = ref->str;
                break;
            }
    }
    *xs = *sub;
    xs->limit = NULL;
    xs->order_by = NULL;
    xs->norder = 0;
    xs->distinct = 1;
    if (add_from(x, xs, dalias, d) != 0) goto out;
    snprintf(xalias, sizeof xalias, "__gqp_sq%llu", (unsigned long long)++x->db->ntemps);
    AstExpr *on = NULL;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "__o%d", i + 1);
        items[i].expr = colref(x, dalias, name, g->cols[i]->pos);
        items[i].alias = sql_arena_strndup(a, name, strlen(name));
        AstExpr *eq = items[i].expr ? gm_key(x, xalias, name, outer_side[i], nullable[i]) : NULL;
        if (!items[i].alias || !eq || !(on = on ? bin(x, OP_AND, on, eq) : eq)) goto out;
    }
    if (is_in) {
        items[n].expr = sub->items[0].expr;
        items[n].alias = sql_arena_strndup(a, "__v", 3);
        AstExpr *in_eq = items[n].alias ? eq_col(x, xalias, "__v", ex->a) : NULL;
        if (!in_eq) goto out;
        if (anti && !(in_eq = not_in_cond(x, in_eq, ex, xalias, "__v"))) goto out;
        if (!(on = bin(x, OP_AND, on, in_eq))) goto out;
    }
    xs->items = items;
    xs->nitems = n + is_in;
    AstTableRef *t = &x->add[x->nadd++];
    memset(t, 0, sizeof *t);
    t->alias = sql_arena_strndup(a, xalias, strlen(xalias));
    t->pos = ex->pos;
    t->subquery = xs;
    t->join_kind = anti ? AST_JOIN_ANTI : AST_JOIN_SEMI;
    t->join_on = on;
    t->hidden = 1;
    if (!t->alias) goto out;
    set_true(e);
    rc = 1;
out:
    free(g);
    return rc;
}

/* A new select item expr AS name (name copied); 0 or -1. */
static int set_item(Dc *x, AstSelectItem *it, AstExpr *expr, const char *name) {
    it->expr = expr;
    it->alias = sql_arena_strndup(x->st->parse_arena, name, strlen(name));
    return expr && it->alias ? 0 : -1;
}

/* A correlated subquery with a LIMIT over several rows, or an OFFSET, per
 * outer row -- (SELECT e FROM F WHERE o1 = i1 AND .. AND L ORDER BY z..
 * LIMIT n OFFSET m), the same under IN / NOT IN, or EXISTS (.. OFFSET m) --
 * whose correlated conjuncts are all outer-only = inner-only equalities:
 * in place, its rows become those of
 *   R = SELECT i1 AS __k1, .., e AS __v1, <row number> AS __rn FROM F
 *       WHERE L ORDER BY 1, .., z..      (rank_keys: ROW_NUMBER() OVER
 *       (PARTITION BY i1, .. ORDER BY z..), computed after R's sort)
 *   D = SELECT __k1, .., __v1 FROM R WHERE __rn > m AND __rn <= m + n
 *       (a scalar: __rn = m + 1, so D's keys are unique: keys_unique)
 * and the subquery SELECT D.__v1 FROM D WHERE o1 = D.__k1 AND .., which
 * the forms below decorrelate (a lookup join, a semi / anti join). The
 * rows tied on z at the range's edge are taken in the sort's order, where
 * SQLite takes them as it meets them. Shapes left alone: those the forms
 * below take with their LIMIT (EXISTS .. LIMIT n, a scalar's LIMIT without
 * OFFSET), a scalar or IN without ORDER BY (SQLite's rows then come in
 * its scan order), GROUP BY, HAVING, DISTINCT, aggregates, non-constant
 * LIMIT / OFFSET. Returns 1 rewritten, 0 left alone, -1 out of memory. */
/* 1 with *v when e is an integer literal, or minus one; else 0. */
static int int_literal(const AstExpr *e, int64_t *v) {
    if (e->kind == AST_INT) return *v = e->ival, 1;
    if (e->kind == AST_UNARY && e->op == OP_NEG && e->a && e->a->kind == AST_INT && e->a->ival > 0)
        return *v = -e->a->ival, 1;
    return 0;
}

static int rank_limit(Dc *x, AstExpr *ex) {
    AstSelect *sub = ex->select;
    int kind = ex->sub_kind;
    if (!sub || (kind != AST_SUBQUERY && kind != AST_IN && kind != AST_EXISTS)) return 0;
    /* a scalar's NULLS FIRST / LAST against its direction: top1_join does
     * not take it, so it is ranked here, LIMIT or not */
    int flip = 0;
    for (int i = 0; kind == AST_SUBQUERY && i < sub->norder; i++)
        flip |= sub->order_by[i].nulls_flip;
    if (!(sub->limit || sub->offset || flip)) return 0;
    int64_t lim = -1, off = 0;
    if ((sub->limit && !int_literal(sub->limit, &lim)) ||
        (sub->offset && !int_literal(sub->offset, &off)))
        return 0;
    if (lim < 0) lim = -1; /* SQLite: a negative LIMIT is none */
    if (off < 0) off = 0;
    /* LIMIT -1 and OFFSET 0 change nothing: gone, for the forms below */
    if (lim < 0) sub->limit = NULL;
    if (off == 0) sub->offset = NULL;
    if (off == 0 && lim < 0 && !flip) return 0;               /* no limit at all: nothing to rank */
    if (kind == AST_EXISTS && off == 0 && lim >= 1) return 0; /* split takes it */
    if (kind == AST_SUBQUERY && off == 0 && lim >= 1 && !flip) return 0; /* top1 / lookup */
    if (kind != AST_EXISTS && sub->norder < 1) return 0;
    if (kind != AST_EXISTS && (sub->nitems != 1 || sub->items[0].expr->kind == AST_STAR)) return 0;
    if (sub->ngroup || sub->having || sub->distinct || !base_only(x, sub) || x->nadd >= DC_MAX_ADD)
        return 0;
    for (int i = 0; i < sub->nitems; i++)
        if (sub->items[i].expr->kind != AST_STAR && has_agg(sub->items[i].expr)) return 0;
    AstExpr *local[DC_MAX_CONJ], *corr[DC_MAX_CONJ], *inner[DC_MAX_COLS], *outer[DC_MAX_COLS];
    int nl = 0, nc = 0, ninner = 0, nk = 0;
    if (!split_where(x, sub, local, &nl, corr, &nc, &ninner)) return 0;
    /* every correlated conjunct: outer-only = inner-only */
    for (int i = 0; i < nc; i++) {
        AstExpr *e = corr[i];
        if (e->kind != AST_BINARY || e->op != OP_EQ || nk >= DC_MAX_COLS - 2) return 0;
        int ia = 0, oa = 0, ib = 0, ob = 0, z = 0;
        census(x, sub, e->a, &ia, &oa, &z, &z);
        census(x, sub, e->b, &ib, &ob, &z, &z);
        if (oa && !ia && ib && !ob)
            outer[nk] = e->a, inner[nk++] = e->b;
        else if (ob && !ib && ia && !oa)
            outer[nk] = e->b, inner[nk++] = e->a;
        else
            return 0;
    }
    if (!nk) return 0; /* uncorrelated (or correlated elsewhere): left to the rest */
    /* the item and the ORDER BY read sub's FROM only (EXISTS: no order) */
    int nz = kind == AST_EXISTS ? 0 : sub->norder;
    for (int i = 0; i < nz + (kind != AST_EXISTS); i++) {
        const AstExpr *t = i < nz ? sub->order_by[i].expr : sub->items[0].expr;
        if (i < nz && t->kind == AST_INT && t->ival != 1) return 0;
        int in = 0, out = 0, bad = 0, nested = 0;
        census(x, sub, t, &in, &out, &bad, &nested);
        if (out || bad || nested || has_agg(t)) return 0;
    }
    SqlArena *a = x->st->parse_arena;
    int64_t pos = ex->pos;
    int nv = kind != AST_EXISTS; /* __v1 */
    AstSelect *r = sql_arena_alloc(a, sizeof *r), *d = sql_arena_alloc(a, sizeof *d);
    AstSelectItem *ri = sql_arena_alloc(a, sizeof *ri * (size_t)(nk + nv + 1));
    AstSelectItem *di = sql_arena_alloc(a, sizeof *di * (size_t)(nk + nv));
    AstOrderItem *ro = sql_arena_alloc(a, sizeof *ro * (size_t)(nk + nz));
    AstTableRef *rf = sql_arena_alloc(a, sizeof *rf), *df = sql_arena_alloc(a, sizeof *df);
    if (!r || !d || !ri || !di || !ro || !rf || !df) return -1;
    char ralias[32], dalias[32], name[16];
    snprintf(ralias, sizeof ralias, "__gqp_rk%llu", (unsigned long long)++x->db->ntemps);
    snprintf(dalias, sizeof dalias, "__gqp_rd%llu", (unsigned long long)++x->db->ntemps);
    int oom = 0;
    r->from = sub->from;
    r->nfrom = sub->nfrom;
    r->where = and_all(x, local, nl, &oom);
    if (oom) return -1;
    for (int i = 0; i < nk; i++) {
        snprintf(name, sizeof name, "__k%d", i + 1);
        AstExpr *one = node(x, AST_INT, pos);
        if (!one || set_item(x, &ri[i], inner[i], name) != 0 ||
            set_item(x, &di[i], colref(x, ralias, name, pos), name) != 0)
            return -1;
        one->ival = i + 1;
        ro[i].expr = one;
    }
    if (nv && (set_item(x, &ri[nk], sub->items[0].expr, "__v1") != 0 ||
               set_item(x, &di[nk], colref(x, ralias, "__v1", pos), "__v1") != 0))
        return -1;
    AstExpr *zero = node(x, AST_INT, pos);
    if (!zero || set_item(x, &ri[nk + nv], zero, "__rn") != 0) return -1;
    for (int i = 0; i < nz; i++) {
        ro[nk + i] = sub->order_by[i];
        if (ro[nk + i].expr->kind == AST_INT) { /* ORDER BY 1: the item */
            if (!(ro[nk + i].expr = node(x, AST_INT, pos))) return -1;
            ro[nk + i].expr->ival = nk + 1;
        }
    }
    r->items = ri;
    r->nitems = nk + nv + 1;
    r->order_by = ro;
    r->norder = nk + nz;
    r->rank_keys = nk;
    /* D: the rows of each key's range */
    AstExpr *rn1 = colref(x, ralias, "__rn", pos), *rn2 = colref(x, ralias, "__rn", pos);
    AstExpr *lo = node(x, AST_INT, pos), *hi = node(x, AST_INT, pos);
    if (!rn1 || !rn2 || !lo || !hi) return -1;
    if (kind == AST_SUBQUERY) d->keys_unique = nk; /* at most one row per key */
    if (kind == AST_SUBQUERY && lim != 0) {        /* LIMIT -1: no limit */
        lo->ival = off + 1;
        d->where = bin(x, OP_EQ, rn1, lo);
    } else {
        lo->ival = off;
        d->where = bin(x, OP_GT, rn1, lo);
        if (d->where && lim >= 0) {
            hi->ival = lim > INT64_MAX - off ? INT64_MAX : off + lim;
            AstExpr *le = bin(x, OP_LE, rn2, hi);
            d->where = le ? bin(x, OP_AND, d->where, le) : NULL;
        }
    }
    if (!d->where) return -1;
    memset(rf, 0, sizeof *rf);
    rf->alias = sql_arena_strndup(a, ralias, strlen(ralias));
    rf->subquery = r;
    rf->pos = sub->from[0].pos;
    d->from = rf;
    d->nfrom = 1;
    d->items = di;
    d->nitems = nk + nv;
    /* the subquery over D: o1 = D.__k1 AND .., its item D.__v1 */
    memset(df, 0, sizeof *df);
    df->alias = sql_arena_strndup(a, dalias, strlen(dalias));
    df->subquery = d;
    df->pos = sub->from[0].pos;
    if (!rf->alias || !df->alias) return -1;
    AstExpr *where = NULL;
    for (int i = 0; i < nk; i++) {
        snprintf(name, sizeof name, "__k%d", i + 1);
        AstExpr *eq = eq_col(x, dalias, name, outer[i]);
        if (!eq || !(where = where ? bin(x, OP_AND, where, eq) : eq)) return -1;
    }
    AstSelectItem *si = sql_arena_alloc(a, sizeof *si);
    if (!si) return -1;
    si->alias = nv ? sub->items[0].alias : NULL;
    if (!(si->expr = nv ? colref(x, dalias, "__v1", pos) : node(x, AST_INT, pos))) return -1;
    if (!nv) si->expr->ival = 1;
    sub->from = df;
    sub->nfrom = 1;
    sub->where = where;
    sub->items = si;
    sub->nitems = 1;
    sub->order_by = NULL;
    sub->norder = 0;
    sub->limit = sub->offset = NULL;
    return 1;
}

/* Decorrelate the subqueries of e (not inside other subqueries); top: 1
 * when e is a top-level conjunct of WHERE, 2 when it is reached from one
 * through OR / AND only (its NULL counts as FALSE), 0 elsewhere. Returns 0
 * or -1 (out of memory). */
static int walk(Dc *x, AstExpr *e, int top) {
    if (!e) return 0;
    /* a LIMIT / OFFSET per outer row first: a subquery without them */
    if (e->select && (prep_from(x, e->select) < 0 || rank_limit(x, e) < 0)) return -1;
    if (top == 0 && e->select) return walk_value(x, e);
    if (top < 0) top = 0; /* walk_value's own call */
    int rc = 0;
    if (e->select && prep_from(x, e->select) < 0) return -1;
    if (top == 1 && e->kind == AST_BINARY && e->op == OP_AND)
        return walk(x, e->a, 1) || walk(x, e->b, 1) ? -1 : 0;
    if (top && e->kind == AST_BINARY && (e->op == OP_OR || e->op == OP_AND))
        return walk(x, e->a, 2) || walk(x, e->b, 2) ? -1 : 0;
    if (e->select && (e->sub_kind == AST_EXISTS || e->sub_kind == AST_IN) &&
        flatten_grand(x, e->select, e->sub_kind == AST_EXISTS) < 0)
        return -1;
    /* an IN's operand first: a correlated subquery there becomes a column
     * of a joined derived table, which the IN's rewrite may then read */
    if (e->select && e->sub_kind == AST_IN && walk(x, e->a, 0)) return -1;
    if (e->select && e->sub_kind == AST_IN) in_drop_group(x, e);
    if (e->select && e->sub_kind == AST_IN && (rc = in_agg_to_cmp(x, e)) != 0)
        return rc < 0 ? -1 : walk(x, e, top);
    if (e->select) {
        if (e->sub_kind == AST_EXISTS && (rc = exists_normalize(x, e)) != 0) return rc < 0 ? -1 : 0;
        if (top == 1 && (rc = grand_magic(x, e, e, e->sub_kind == AST_IN && e->negated)) != 0)
            return rc < 0 ? -1 : 0;
        if (top == 1 && e->sub_kind == AST_EXISTS && (rc = semi(x, e, e, 0)) == 0)
            rc = exists_count(x, e);
        else if (top == 1 && e->sub_kind == AST_IN && e->negated)
            rc = semi(x, e, e, 1);
        else if (top == 1 && e->sub_kind == AST_IN && !e->negated)
            rc = semi(x, e, e, 0);
        else if (top == 2 && e->sub_kind == AST_IN && !e->negated && (rc = in_as_exists(x, e)) == 0)
            rc = in_three_valued(x, e);
        else if (e->sub_kind == AST_IN && !(top == 1))
            rc = in_three_valued(x, e);
        else if (e->sub_kind == AST_SUBQUERY)
            rc = scalar(x, e, 0);
        else if (e->sub_kind == AST_EXISTS)
            rc = exists_count(x, e);
        if (rc < 0) return -1;
        if (rc == 0 && (rc = hoist_outer(x, e)) != 0) return rc < 0 ? -1 : walk(x, e, 0);
        if (rc == 0 && e->sub_kind == AST_IN) return walk(x, e->a, 0);
        return 0;
    }
    if (top == 1 && e->kind == AST_UNARY && e->op == OP_NOT && e->a && e->a->select &&
        e->a->sub_kind == AST_EXISTS) {
        if (flatten_grand(x, e->a->select, 1) < 0) return -1;
        if ((rc = exists_normalize(x, e->a)) != 0) return rc < 0 ? -1 : 0;
        if ((rc = grand_magic(x, e, e->a, 1)) != 0) return rc < 0 ? -1 : 0;
        rc = semi(x, e, e->a, 1);
        if (rc != 0) return rc < 0 ? -1 : 0;
    }
    if (top == 1 && e->kind == AST_BINARY && is_cmp(e->op)) {
        for (int k = 0; k < 2; k++) {
            AstExpr *o = k ? e->b : e->a;
            if (o && o->select && o->sub_kind == AST_SUBQUERY && scalar(x, o, 1) < 0) return -1;
        }
    }
    if (walk(x, e->a, 0) || walk(x, e->b, 0) || walk(x, e->c, 0)) return -1;
    for (int i = 0; i < e->nlist; i++)
        if (walk(x, e->list[i], 0)) return -1;
    return 0;
}

int gqp_decorrelate(gqp *db, gqp_stmt *st, AstSelect *sel, const GqpScope *sc, int *nadded) {
    Dc x;
    memset(&x, 0, sizeof x);
    x.db = db;
    x.st = st;
    x.outer = sel;
    x.scope = sc;
    *nadded = 0;
    if (sel->nfrom == 0) return GQP_OK;
    int rc = walk(&x, sel->where, 1);
    for (int i = 0; rc == 0 && i < sel->nitems; i++)
        rc = walk(&x, sel->items[i].expr, 0);
    /* HAVING: each rewrite joins a derived table with at most one row per
     * outer row (grouped by its keys), so the groups keep their rows; a
     * value outside an aggregate reads the group's keys only, the same on
     * every row of the group */
    if (rc == 0 && sel->having) rc = walk(&x, sel->having, 0);
    /* GROUP BY and ORDER BY: a value per row like the select list's (the
     * same subquery there reads the same derived table: the memo) */
    for (int i = 0; rc == 0 && i < sel->ngroup; i++)
        rc = walk(&x, sel->group_by[i], 0);
    for (int i = 0; rc == 0 && !sel->ncompound && i < sel->norder; i++)
        rc = walk(&x, sel->order_by[i].expr, 0);
    for (int i = 0; i < x.nmemo; i++)
        free(x.memo[i].key);
    if (rc != 0) return x.err ? x.err : gqp_set_error(db, GQP_NOMEM, "out of memory");
    if (!x.nadd) return GQP_OK;
    AstTableRef *from =
        sql_arena_alloc(st->parse_arena, sizeof *from * (size_t)(sel->nfrom + x.nadd));
    if (!from) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    memcpy(from, sel->from, sizeof *from * (size_t)sel->nfrom);
    memcpy(from + sel->nfrom, x.add, sizeof *from * (size_t)x.nadd);
    sel->from = from;
    sel->nfrom += x.nadd;
    *nadded = x.nadd;
    return GQP_OK;
}
