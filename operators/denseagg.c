/*
 * denseagg.c -- lowering of GROUP BY / aggregate blocks into one fused
 * pass over the fact table (DN_DENSEAGG): the "few groups" aggregation by
 * direct addressing, with star joins probed through per-dimension keymaps
 * (DN_KEYMAP) and simple range filters evaluated in the same pass.
 *
 * It applies when the block is a star: one fact relation (the largest
 * table) joined to every other relation by exactly one equi-join of a fact
 * integer column with a unique integer key of small range; group keys are
 * plain columns of any relation with a small value range (catalog min/max);
 * aggregates are COUNT / SUM / MIN / MAX / AVG of integer expressions over
 * the fact relation. Each group key gets a code (0 = NULL, value - min + 1)
 * and the group id is the mixed-radix number of the codes, so the dense
 * table is in key order, NULLs first, as a sort would give.
 *
 * The plan:
 *   dimension d: scan + its filters (as usual) -> keymap key -> row id
 *   fact: simple range conjuncts go into the fused pass; any other fact
 *         conjunct becomes a select whose row ids the pass reads;
 *         aggregate arguments other than a column or column OP column
 *         become a map over the fact table
 *   dense-aggregate -> select non-empty groups (with keys) -> decode keys
 *   from the group id and finish the aggregates (NULL when no value, AVG).
 * Whether the dense plan replaces sort + segmented-reduce is the caller's
 * cost model's choice (LowerOpts.agg_cost), or forced by LowerOpts.agg.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/operators.h"
#include "planner/bexpr.h"

/* Largest dense table (groups) and keymap (slots) the lowering builds. */
#define DENSE_MAX_GROUPS ((int64_t)1 << 22)
#define DENSE_MAX_RANGE ((int64_t)1 << 27)

static int is_int_type(CatType t) {
    return t == CAT_INT32 || t == CAT_INT64 || t == CAT_DATE || t == CAT_BOOL || t == CAT_DECIMAL;
}

/* Column (slot, col) of e if e is a plain column reference, else NULL. */
static const CatColumn *plain_col(const BSelect *b, const BExpr *e) {
    if (!e || e->kind != BE_COL || e->slot < 0 || e->slot >= b->nrels) return NULL;
    const CatTable *t = b->rels[e->slot].table;
    return e->col >= 0 && e->col < t->ncols ? &t->cols[e->col] : NULL;
}

/* 1 if column c is an integer key without NULLs whose values are distinct
 * and span at most max_range values (a bitmap over [min, max]). */
static int unique_dense_key(const CatColumn *c, int64_t max_range) {
    if (!(c->type == CAT_INT32 || c->type == CAT_INT64 || c->type == CAT_DATE ||
          c->type == CAT_DECIMAL))
        return 0;
    if (c->valid || !c->stats.has_minmax || !cat_stats_exact(&c->stats) || c->stats.nulls > 0)
        return 0;
    int64_t lo = (int64_t)c->stats.min, range = (int64_t)c->stats.max - lo + 1;
    if (range < 1 || range > max_range || c->n > range) return 0;
    /* kept with the statistics (recomputed, and so reset, whenever the
     * column changes): a prepare does not scan a 15M-row key again */
    return cat_column_unique((CatColumn *)c) > 0;
}

/* A conjunct `col CMP const` (or const CMP col) over an integer column of
 * relation f as the inclusive range [*lo, *hi] of column *col. 1 if it is
 * one, 0 if not. */
static int as_range(const BSelect *b, int f, const BExpr *e, int *col, int64_t *lo, int64_t *hi) {
    if (e->kind != BE_BINARY || e->op < OP_EQ || e->op > OP_GE || e->op == OP_NE) return 0;
    const BExpr *c = e->a, *k = e->b;
    AstOp op = e->op;
    if (c->kind == BE_CONST) {
        const BExpr *t = c;
        c = k, k = t;
        op = op == OP_LT   ? OP_GT
             : op == OP_LE ? OP_GE
             : op == OP_GT ? OP_LT
             : op == OP_GE ? OP_LE
                           : op;
    }
    const CatColumn *cc = plain_col(b, c);
    if (!cc || c->slot != f || !is_int_type(cc->type) || cc->type != c->type) return 0;
    if (k->kind != BE_CONST || k->is_null || !is_int_type(k->type)) return 0;
    int64_t v = k->ival;
    *col = c->col;
    *lo = INT64_MIN, *hi = INT64_MAX;
    switch (op) {
    case OP_EQ:
        *lo = *hi = v;
        break;
    case OP_LT:
        if (v == INT64_MIN)
            *lo = 1, *hi = 0;
        else
            *hi = v - 1;
        break;
    case OP_LE:
        *hi = v;
        break;
    case OP_GT:
        if (v == INT64_MAX)
            *lo = 1, *hi = 0;
        else
            *lo = v + 1;
        break;
    case OP_GE:
        *lo = v;
        break;
    default:
        return 0;
    }
    return 1;
}

/* The dense plan of one block, decided before any node is made. */
typedef struct DensePlan {
    int f;                           /* the fact relation */
    int ndims, dim_rel[PRIM_DA_MAX]; /* FROM positions of the dimensions */
    int dim_fkcol[PRIM_DA_MAX], dim_keycol[PRIM_DA_MAX];
    int nranges, range_col[PRIM_DA_MAX];
    int64_t range_lo[PRIM_DA_MAX], range_hi[PRIM_DA_MAX];
    BExpr *rest; /* fact conjuncts that are not ranges (AND), or NULL */
    int64_t key_min[PRIM_DA_MAX], key_card[PRIM_DA_MAX];
    int64_t groups;
    PlanAggShape shape;
} DensePlan;

static int dim_index(const DensePlan *p, int rel) {
    for (int d = 0; d < p->ndims; d++)
        if (p->dim_rel[d] == rel) return d;
    return -1;
}

/* An upper bound on |e| over the rows of the block, from the catalog's
 * statistics (op_abs_bound), HUGE_VAL when unknown or when some integer
 * operation inside e may overflow. */
static double abs_bound(const BSelect *b, const BExpr *e) {
    int safe = 0;
    double r = op_abs_bound(e, op_block_col, b, &safe);
    return safe ? r : HUGE_VAL;
}

/* Whether no aggregate of p's pass can overflow int64 (a row's a OP b, a
 * SUM or AVG's sum over at most the fact's rows: each fact row meets at
 * most one row of each dimension, whose keys are unique); the largest
 * proven bound on a sum in *bound. */
static int dense_no_overflow(const BSelect *b, const DensePlan *p, double *bound) {
    double rows = (double)b->rels[p->f].table->nrows;
    *bound = 0;
    for (int a = 0; a < b->naggs; a++) {
        const BAgg *ag = &b->aggs[a];
        if (!ag->arg) continue;
        int safe = 0; /* no integer operation inside (a OP b) may overflow */
        double x = op_abs_bound(ag->arg, op_block_col, b, &safe);
        if (!safe) return 0;
        if (ag->agg == AGG_SUM || ag->agg == AGG_AVG) {
            if (!op_sum_no_overflow(rows, x)) return 0;
            if (rows * x > *bound) *bound = rows * x;
        }
    }
    return 1;
}

/* Expression nodes of e: about the map instructions it compiles to. */
static double expr_nodes(const BExpr *e) {
    return e ? 1 + expr_nodes(e->a) + expr_nodes(e->b) + expr_nodes(e->c) : 0;
}

/* Does the dense plan apply to L->b? Fills p (no DAG node is made). */
static int dense_applies(Lower *L, DensePlan *p) {
    const BSelect *b = L->b;
    memset(p, 0, sizeof *p);
    if (!b->has_agg || b->has_outer || b->has_semi || b->has_sub || b->nrels < 1 ||
        b->ngroup > PRIM_DA_MAX || b->naggs > PRIM_DA_MAX || b->nrels - 1 > PRIM_DA_MAX ||
        b->npreds != b->nrels - 1)
        return 0;
    int f = 0;
    for (int r = 1; r < b->nrels; r++)
        if (b->rels[r].table->nrows > b->rels[f].table->nrows) f = r;
    p->f = f;
    /* every other relation: one equi-join fact.col = dim.unique_key */
    for (int i = 0; i < b->npreds; i++) {
        const BPred *pr = &b->preds[i];
        if (!pr->is_equi) return 0;
        const BExpr *fk = pr->lrel == f ? pr->lkey : pr->rrel == f ? pr->rkey : NULL;
        const BExpr *dk = pr->lrel == f ? pr->rkey : pr->lkey;
        int d = pr->lrel == f ? pr->rrel : pr->lrel;
        const CatColumn *fc = plain_col(b, fk), *dc = plain_col(b, dk);
        if (!fc || !dc || d == f || dim_index(p, d) >= 0) return 0;
        if (!is_int_type(fc->type) || fc->type == CAT_BOOL || fk->type != fc->type ||
            dk->type != dc->type)
            return 0;
        if (!unique_dense_key(dc, DENSE_MAX_RANGE)) return 0;
        p->dim_rel[p->ndims] = d;
        p->dim_fkcol[p->ndims] = fk->col;
        p->dim_keycol[p->ndims] = dk->col;
        p->ndims++;
    }
    /* group keys: plain columns with a small range */
    p->groups = 1;
    for (int k = 0; k < b->ngroup; k++) {
        const BExpr *g = b->group[k];
        const CatColumn *c = plain_col(b, g);
        if (!c || !(is_int_type(c->type) || c->type == CAT_STRING) || g->type != c->type) return 0;
        int64_t card = 1;
        if (!cat_stats_exact(&c->stats)) return 0; /* a key range from inexact doubles */
        if (c->stats.has_minmax) {
            double range = c->stats.max - c->stats.min + 1;
            if (range < 1 || range > (double)DENSE_MAX_GROUPS) return 0;
            p->key_min[k] = (int64_t)c->stats.min;
            card = (int64_t)range + 1;
        } else {
            p->key_min[k] = 0;
            card = 1; /* every value NULL: code 0 only */
        }
        p->key_card[k] = card;
        if ((double)p->groups * (double)card > (double)DENSE_MAX_GROUPS) return 0;
        p->groups *= card;
    }
    /* aggregates: integer expressions over the fact relation */
    for (int a = 0; a < b->naggs; a++) {
        const BAgg *ag = &b->aggs[a];
        if (ag->distinct || ag->quant != AQ_NONE) return 0;
        if (!ag->arg) {
            if (ag->agg != AGG_COUNT_STAR) return 0;
            continue;
        }
        if (!is_int_type(ag->arg->type)) return 0;
        if (bx_rel_mask(ag->arg) & ~((uint64_t)1 << f)) return 0;
        /* AVG is SUM / count here, and its int64 sum must not overflow:
         * the sort plan (like SQLite) averages past an overflow in double,
         * the dense one would fail; take it only when the statistics rule
         * an overflow out (2^62: margin for the rounding of the bound) */
        if (ag->agg == AGG_AVG &&
            !(abs_bound(b, ag->arg) * (double)b->rels[f].table->nrows < 4611686018427387904.0))
            return 0;
        /* an argument other than a column or column OP column is a map
         * over every fact row, also those the pass then drops: take it only
         * when it cannot overflow (an overflow is an error, and SQLite never
         * evaluates the argument of a row that WHERE or a join removes) */
        const BExpr *e = ag->arg;
        int in_pass =
            plain_col(b, e) ||
            (e->kind == BE_BINARY && (e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL) &&
             (e->type == CAT_INT64 || e->type == CAT_DECIMAL) && plain_col(b, e->a) &&
             plain_col(b, e->b) && is_int_type(e->a->type) && is_int_type(e->b->type));
        if (!in_pass && (b->nrels > 1 || b->rels[f].nfilters > 0) &&
            !(abs_bound(b, e) < 4611686018427387904.0))
            return 0;
    }
    /* the fact's own conjuncts: ranges into the pass, the rest a select */
    const BRel *fr = &b->rels[f];
    for (int i = 0; i < fr->nfilters; i++) {
        int col;
        int64_t lo, hi;
        int merged = 0;
        if (as_range(b, f, fr->filters[i], &col, &lo, &hi)) {
            /* ranges on one column are one range (BETWEEN's two bounds):
             * the pass reads the column once (SSB Q1.x read lo_discount
             * twice) */
            for (int r = 0; r < p->nranges && !merged; r++)
                if (p->range_col[r] == col) {
                    if (lo > p->range_lo[r]) p->range_lo[r] = lo;
                    if (hi < p->range_hi[r]) p->range_hi[r] = hi;
                    merged = 1;
                }
            if (!merged && p->nranges < PRIM_DA_MAX) {
                p->range_col[p->nranges] = col;
                p->range_lo[p->nranges] = lo;
                p->range_hi[p->nranges] = hi;
                p->nranges++;
                merged = 1;
            }
        }
        if (!merged && !(p->rest = op_and(L, p->rest, fr->filters[i]))) {
            return op_fail(L, "out of memory");
        }
    }
    /* the shape the cost model prices */
    PlanAggShape *s = &p->shape;
    double fn = (double)fr->table->nrows;
    double fsel = fn > 0 ? (double)fr->est_rows / fn : 1;
    s->scanned = p->rest ? (double)fr->est_rows : fn;
    s->fact_bytes = 4.0 * (p->nranges + p->ndims + b->naggs) + (p->rest ? 8 : 0);
    double joined = fn * fsel;
    s->filtered = joined;
    s->nranges = p->nranges;
    for (int i = 0; i < fr->nfilters; i++) /* their AND chain: one more each */
        s->filter_ops += expr_nodes(fr->filters[i]) + (i > 0);
    for (int d = 0; d < p->ndims; d++) {
        const BRel *dr = &b->rels[p->dim_rel[d]];
        const CatColumn *kc = &dr->table->cols[p->dim_keycol[d]];
        double dn = (double)dr->table->nrows;
        joined *= dn > 0 ? (double)dr->est_rows / dn : 1;
        s->dim_rows += (double)dr->est_rows;
        s->dim_range += kc->stats.max - kc->stats.min + 1;
    }
    s->joined = joined;
    s->ndims = p->ndims;
    s->nkeys = b->ngroup;
    s->naggs = b->naggs;
    s->groups = (double)p->groups;
    /* non-empty groups: product of the keys' distinct counts, at most one
     * per joined row and per slot */
    double eg = 1;
    for (int k = 0; k < b->ngroup; k++) {
        const CatColumn *c = plain_col(b, b->group[k]);
        eg *= (double)(c->stats.distinct > 0 ? c->stats.distinct : 1) + (c->stats.nulls > 0);
    }
    if (eg > joined) eg = joined < 1 ? 1 : joined;
    s->est_groups = eg > s->groups ? s->groups : eg;
    return 1;
}

/* Index of value v among ins[0..*n), appending it. */
static int add_input(int *ins, int *n, int v) {
    for (int i = 0; i < *n; i++)
        if (ins[i] == v) return i;
    ins[*n] = v;
    return (*n)++;
}

static BExpr *col_ref(Lower *L, int slot, int col, CatType t) {
    BExpr *e = bx_new(L->arena, BE_COL, t, -1);
    if (e) e->slot = slot, e->col = col;
    return e;
}

/* CASE WHEN nn = 0 THEN NULL ELSE x END, of type t. */
static BExpr *null_if_none(Lower *L, BExpr *nn, BExpr *x, CatType t) {
    BExpr *z = bx_int(L->arena, CAT_INT64, 0, -1);
    BExpr *eq = z ? bx_bin(L->arena, OP_EQ, CAT_BOOL, nn, z, -1) : NULL;
    BExpr *nul = bx_null(L->arena, t, -1);
    BExpr *e = eq && nul ? bx_new(L->arena, BE_CASE, t, -1) : NULL;
    if (e) e->a = eq, e->b = nul, e->c = x;
    return e;
}

/* Build the dense plan p over st (which becomes the aggregated state). */
static int dense_build(Lower *L, LowState *st, const DensePlan *p, const char *why) {
    const BSelect *b = L->b;
    int f = p->f;
    PrimDenseAgg *spec = plan_alloc(L->arena, sizeof(PrimDenseAgg));
    if (!spec) return op_fail(L, "out of memory");
    int ins[DAG_MAX_IO], nin = 0;
    PlanBuf lb = {0};

    /* the fact state: unfiltered, no column read yet */
    if (op_table_slot(L, st, f) != 0) return -1;
    /* its first input fixes the pass's length: the first column it reads */
    int first = -1;
    if (p->ndims)
        first = p->dim_fkcol[0];
    else if (p->nranges)
        first = p->range_col[0];
    for (int a = 0; a < b->naggs && first < 0; a++)
        if (b->aggs[a].arg && b->aggs[a].arg->kind == BE_COL) first = b->aggs[a].arg->col;
    if (first < 0) first = 0;
    int v0 = op_source(L, &st->slots[f], first);
    if (v0 < 0) return -1;
    st->len_value = v0;
    add_input(ins, &nin, v0);
    plan_buf_printf(&lb, "fused:");

    /* fact conjuncts other than ranges: a select of fact row ids */
    spec->rows = -1;
    if (p->rest) {
        LowState fs = *st;
        fs.slots = plan_alloc(L->arena, sizeof(LowSlot) * (size_t)b->nrels);
        if (!fs.slots) return op_fail(L, "out of memory");
        memcpy(fs.slots, st->slots, sizeof(LowSlot) * (size_t)b->nrels);
        for (int k = 0; k < b->nrels; k++)
            fs.slots[k].joined = k == f;
        LowSlot *s = &fs.slots[f];
        s->gathered = plan_alloc(L->arena, sizeof(int) * (size_t)s->ncols);
        if (!s->gathered) return op_fail(L, "out of memory");
        for (int c = 0; c < s->ncols; c++)
            s->gathered[c] = -1;
        double sel = (double)b->rels[f].est_rows /
                     (double)(b->rels[f].table->nrows ? b->rels[f].table->nrows : 1);
        if (op_filter(L, &fs, p->rest, sel) != 0) return -1;
        spec->rows = add_input(ins, &nin, fs.slots[f].rowids);
        plan_buf_printf(&lb, " rows where %s,", op_expr_label(L, st, p->rest));
    }
    spec->nranges = p->nranges;
    for (int r = 0; r < p->nranges; r++) {
        int v = op_source(L, &st->slots[f], p->range_col[r]);
        if (v < 0) return -1;
        spec->range_col[r] = add_input(ins, &nin, v);
        spec->range_lo[r] = p->range_lo[r];
        spec->range_hi[r] = p->range_hi[r];
        plan_buf_printf(&lb, " %s in [%lld, %lld],", st->slots[f].col_names[p->range_col[r]],
                        (long long)p->range_lo[r], (long long)p->range_hi[r]);
    }

    /* dimensions: a keymap each, of the rows their own filter keeps */
    spec->ndims = p->ndims;
    for (int d = 0; d < p->ndims; d++) {
        int r = p->dim_rel[d];
        const BRel *rel = &b->rels[r];
        /* the keymap reads every dimension row's key and the filter's
         * flags: no compaction (and no host-side count) in between; the
         * filter runs over the dimension's rows (ds), st keeps the fact's */
        if (op_table_slot(L, st, r) != 0) return -1;
        st->est_rows = b->rels[f].table->nrows;
        int kin[2] = {op_source(L, &st->slots[r], p->dim_keycol[d]), -1};
        if (kin[0] < 0) return -1;
        if (rel->nfilters) {
            LowState ds = *st;
            ds.len_value = kin[0];
            ds.est_rows = rel->table->nrows;
            BExpr *pr = op_and_all(L, rel->filters, rel->nfilters);
            if (!pr) return op_fail(L, "out of memory");
            if ((kin[1] = op_expr(L, &ds, pr, PRIM_U8, 1)) < 0) return -1;
        }
        PrimType i64 = PRIM_I64;
        int km = plan_dag_add(L->dag, DN_KEYMAP, kin, kin[1] >= 0 ? 2 : 1, 1, &i64);
        if (km < 0) return op_fail(L, "out of memory");
        const CatColumn *kc = &rel->table->cols[p->dim_keycol[d]];
        DagNode *kn = &L->dag->nodes[km];
        kn->km_min = (int64_t)kc->stats.min;
        kn->km_range = (int64_t)(kc->stats.max - kc->stats.min) + 1;
        kn->est_rows = kn->km_range;
        PlanBuf kl = {0};
        plan_buf_printf(&kl, "%s -> row", st->slots[r].col_names[p->dim_keycol[d]]);
        kn->label = plan_strdup(L->arena, kl.s ? kl.s : "");
        free(kl.s);
        int mv = plan_dag_out(L->dag, km, 0);
        L->dag->values[mv].est_rows = kn->km_range;
        int fk = op_source(L, &st->slots[f], p->dim_fkcol[d]);
        if (fk < 0) return -1;
        spec->dim_fk[d] = add_input(ins, &nin, fk);
        spec->dim_map[d] = add_input(ins, &nin, mv);
        spec->dim_kmin[d] = kn->km_min;
        spec->dim_range[d] = kn->km_range;
        plan_buf_printf(&lb, " probe %s,", rel->alias);
    }

    /* group keys */
    spec->nkeys = b->ngroup;
    for (int k = 0; k < b->ngroup; k++) {
        const BExpr *g = b->group[k];
        int v = op_source(L, &st->slots[g->slot], g->col);
        if (v < 0) return -1;
        spec->key_col[k] = add_input(ins, &nin, v);
        spec->key_dim[k] = g->slot == f ? -1 : dim_index(p, g->slot);
        spec->key_min[k] = p->key_min[k];
        spec->key_card[k] = p->key_card[k];
    }
    spec->ngroups = p->groups;
    double ovf_bound = 0;
    spec->nocheck = op_skip_checks_allowed() && dense_no_overflow(b, p, &ovf_bound);

    /* aggregate values */
    spec->naggs = b->naggs;
    for (int a = 0; a < b->naggs; a++) {
        const BAgg *ag = &b->aggs[a];
        spec->agg[a] = ag->agg == AGG_AVG ? AGG_SUM : ag->agg;
        spec->val_a[a] = spec->val_b[a] = -1;
        spec->val_op[a] = 0;
        const BExpr *e = ag->arg;
        if (!e) continue;
        const BExpr *x = e, *y = NULL;
        if (e->kind == BE_BINARY && (e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL) &&
            (e->type == CAT_INT64 || e->type == CAT_DECIMAL) && plain_col(b, e->a) &&
            plain_col(b, e->b) && is_int_type(e->a->type) && is_int_type(e->b->type)) {
            x = e->a, y = e->b;
            spec->val_op[a] = e->op == OP_ADD ? '+' : e->op == OP_SUB ? '-' : '*';
        }
        int va;
        if (plain_col(b, x) && (y || is_int_type(x->type)))
            va = op_source(L, &st->slots[f], x->col);
        else
            va = op_expr(L, st, e, PRIM_I64, 0), y = NULL, spec->val_op[a] = 0;
        if (va < 0) return -1;
        spec->val_a[a] = add_input(ins, &nin, va);
        if (y) {
            int vb = op_source(L, &st->slots[f], y->col);
            if (vb < 0) return -1;
            spec->val_b[a] = add_input(ins, &nin, vb);
        }
    }
    if (nin > DAG_MAX_IO) return op_fail(L, "too many inputs for a dense aggregate");

    int nout = PRIM_DA_NOUT(b->naggs);
    PrimType ot[DAG_MAX_OUT];
    for (int k = 0; k < nout; k++)
        ot[k] = PRIM_I64;
    int node = plan_dag_add(L->dag, DN_DENSEAGG, ins, nin, nout, ot);
    if (node < 0) {
        free(lb.s);
        return op_fail(L, "out of memory");
    }
    DagNode *dn = &L->dag->nodes[node];
    dn->dagg = spec;
    dn->est_rows = p->groups;
    dn->da_pass = (int64_t)p->shape.filtered;
    dn->no_ovf = spec->nocheck;
    dn->ovf_bound = ovf_bound;
    if (b->ngroup) plan_buf_printf(&lb, " %d key%s", b->ngroup, b->ngroup > 1 ? "s" : "");
    for (int a = 0; a < b->naggs; a++)
        plan_buf_printf(&lb, "%s %s", a ? "," : "", op_agg_name(b->aggs[a].agg));
    if (why) plan_buf_printf(&lb, " {%s}", why);
    dn->label = plan_strdup(L->arena, lb.s ? lb.s : "dense aggregate");
    free(lb.s);

    /* the raw table: slot 0 = [rows, acc0, nn0, ...], slot 1 = group id */
    LowState rt;
    memset(&rt, 0, sizeof rt);
    rt.nslots = 2;
    rt.slots = plan_alloc(L->arena, sizeof(LowSlot) * 2);
    if (!rt.slots) return op_fail(L, "out of memory");
    LowSlot *raw = &rt.slots[0];
    int *rawv = plan_alloc(L->arena, sizeof(int) * (size_t)nout);
    char **rawn = plan_alloc(L->arena, sizeof(char *) * (size_t)nout);
    if (!rawv || !rawn) return op_fail(L, "out of memory");
    for (int k = 0; k < nout; k++) {
        rawv[k] = plan_dag_out(L->dag, node, k);
        L->dag->values[rawv[k]].est_rows = p->groups;
        L->dag->values[rawv[k]].ltype = CAT_INT64;
        rawn[k] = k == 0 ? "rows" : (k % 2) ? "acc" : "values";
    }
    if (op_computed_slot(L, raw, rawv, rawn, nout) != 0) return -1;
    rt.len_value = raw->col_value[0];
    rt.est_rows = p->groups;
    int64_t est = (int64_t)p->shape.est_groups;
    if (b->ngroup) {
        /* the non-empty groups, and their ids as slot 1 */
        BExpr *zero = bx_int(L->arena, CAT_INT64, 0, -1);
        BExpr *cnt = col_ref(L, 0, 0, CAT_INT64);
        BExpr *gt = zero && cnt ? bx_bin(L->arena, OP_GT, CAT_BOOL, cnt, zero, -1) : NULL;
        if (!gt) return op_fail(L, "out of memory");
        if (op_filter(L, &rt, gt, (double)est / (double)p->groups) != 0) return -1;
        static char *gid_name[1] = {"group id"};
        int *gid = plan_alloc(L->arena, sizeof(int));
        if (!gid) return op_fail(L, "out of memory");
        gid[0] = raw->rowids;
        if (op_computed_slot(L, &rt.slots[1], gid, gid_name, 1) != 0) return -1;
    }

    /* the aggregated state: keys decoded from the group id, then aggregates */
    int ng = b->ngroup, na = b->naggs;
    int *cols = plan_alloc(L->arena, sizeof(int) * (size_t)(ng + na + 1));
    char **names = plan_alloc(L->arena, sizeof(char *) * (size_t)(ng + na + 1));
    if (!cols || !names) return op_fail(L, "out of memory");
    int64_t stride = 1;
    for (int k = ng - 1; k >= 0; k--) {
        const BExpr *g = b->group[k];
        BExpr *gid = col_ref(L, 1, 0, CAT_INT64);
        BExpr *code = gid;
        if (stride > 1)
            code = bx_bin(L->arena, OP_DIV, CAT_INT64, code,
                          bx_int(L->arena, CAT_INT64, stride, -1), -1);
        if (k > 0 && code)
            code = bx_bin(L->arena, OP_MOD, CAT_INT64, code,
                          bx_int(L->arena, CAT_INT64, p->key_card[k], -1), -1);
        BExpr *val = code ? bx_bin(L->arena, OP_ADD, CAT_INT64, code,
                                   bx_int(L->arena, CAT_INT64, p->key_min[k] - 1, -1), -1)
                          : NULL;
        /* code 0 is the NULL key */
        BExpr *e = val ? null_if_none(L, code, val, g->type) : NULL;
        if (!e) return op_fail(L, "out of memory");
        e->dict = g->dict;
        e->b->dict = g->dict;
        if ((cols[k] = op_expr(L, &rt, e, op_prim_type(g->type), 0)) < 0) return -1;
        L->dag->values[cols[k]].ltype = g->type;
        L->dag->values[cols[k]].scale = g->scale;
        L->dag->values[cols[k]].dict = g->dict;
        names[k] = st->slots[g->slot].col_names[g->col];
        stride *= p->key_card[k];
    }
    for (int a = 0; a < na; a++) {
        const BAgg *ag = &b->aggs[a];
        BExpr *acc = col_ref(L, 0, 1 + 2 * a, CAT_INT64);
        BExpr *nn = col_ref(L, 0, 2 + 2 * a, CAT_INT64);
        if (!acc || !nn) return op_fail(L, "out of memory");
        BExpr *e = acc;
        if (ag->agg == AGG_AVG) {
            BExpr *fa = bx_new(L->arena, BE_CAST, CAT_FLOAT64, -1);
            BExpr *fn = bx_new(L->arena, BE_CAST, CAT_FLOAT64, -1);
            if (!fa || !fn) return op_fail(L, "out of memory");
            fa->a = acc, fn->a = nn;
            BExpr *q = bx_bin(L->arena, OP_DIV, CAT_FLOAT64, fa, fn, -1);
            e = q ? null_if_none(L, nn, q, CAT_FLOAT64) : NULL;
        } else if (ag->agg == AGG_SUM || ag->agg == AGG_MIN || ag->agg == AGG_MAX) {
            e = null_if_none(L, nn, acc, ag->type);
        }
        if (!e) return op_fail(L, "out of memory");
        PrimType pt = op_prim_type(ag->type);
        if ((cols[ng + a] = op_expr(L, &rt, e, pt, 0)) < 0) return -1;
        L->dag->values[cols[ng + a]].ltype = ag->type;
        L->dag->values[cols[ng + a]].scale = ag->scale;
        L->dag->values[cols[ng + a]].dict = ag->arg ? ag->arg->dict : NULL;
        PlanBuf nb = {0};
        if (ag->arg)
            plan_buf_printf(&nb, "%s(%s)", op_agg_name(ag->agg), op_expr_label(L, st, ag->arg));
        else
            plan_buf_printf(&nb, "count(*)");
        names[ng + a] = plan_strdup(L->arena, nb.s ? nb.s : "");
        free(nb.s);
    }
    LowSlot *s = plan_alloc(L->arena, sizeof(LowSlot));
    if (!s) return op_fail(L, "out of memory");
    if (op_computed_slot(L, s, cols, names, ng + na) != 0) return -1;
    st->nslots = 1;
    st->slots = s;
    st->len_value = ng + na > 0 ? cols[0] : rt.len_value;
    st->est_rows = ng ? est : 1;
    return 0;
}

int op_dense_aggregate(Lower *L, LowState *st) {
    const LowerOpts *o = L->opts;
    if (o && o->agg == LOWER_AGG_SORT) return 0;
    DensePlan *p = plan_alloc(L->arena, sizeof(DensePlan));
    if (!p) return op_fail(L, "out of memory");
    int r = dense_applies(L, p);
    if (r <= 0) return r;
    char why[160] = "";
    if ((!o || o->agg == LOWER_AGG_AUTO) && o && o->agg_cost) {
        double dense = o->agg_cost(o->ud, 1, &p->shape);
        double sort = o->agg_cost(o->ud, 0, &p->shape);
        if (!(dense < sort)) return 0;
        snprintf(why, sizeof why, "est %.3f ms < sort plan %.3f ms", dense / 1e3, sort / 1e3);
    } else if (!o || o->agg == LOWER_AGG_AUTO) {
        /* no cost model: dense while the table is not larger than the input */
        if (p->shape.groups > p->shape.scanned + 4096) return 0;
        snprintf(why, sizeof why, "no cost model");
    } else {
        snprintf(why, sizeof why, "forced");
    }
    if (dense_build(L, st, p, why) != 0) return -1;
    return 1;
}
