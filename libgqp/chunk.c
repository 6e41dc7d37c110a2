/*
 * chunk.c -- chunked (tablet) execution of a SELECT block, after
 * Virginian's tablets (seed 001): the block's largest table F is cut into
 * row ranges and, per range, the block runs as a partial plan whose
 * result rows are concatenated into a table T; a final plan over T
 * merges them and applies what only the whole result can:
 *
 *   with aggregates   partial: SELECT <group keys>, <partial aggregates>
 *                     ... GROUP BY <keys>  (no HAVING / ORDER / LIMIT)
 *                     final:   GROUP BY the keys again, SUM of the partial
 *                     COUNTs and SUMs, MIN of MINs, MAX of MAXs, AVG as
 *                     SUM(partial sums) / SUM(partial counts); then
 *                     HAVING, the select list, DISTINCT, ORDER BY, LIMIT
 *                     as written (they read the merged values). A
 *                     DISTINCT aggregate's argument is one more partial
 *                     group key; the final plan runs the DISTINCT
 *                     aggregate over that column (a value's copies from
 *                     several chunks meet there)
 *   without           partial: the select list (plus ORDER BY keys not in
 *                     it), DISTINCT per chunk, and ORDER BY + LIMIT
 *                     (offset + limit rows) per chunk when there is a
 *                     LIMIT; final: DISTINCT, ORDER BY, OFFSET, LIMIT
 *
 * A relation G of F's block joined to F on a key that both tables hold
 * sorted (no NULL, never decreasing in row order: TPC-H's lineitem and
 * orders by their order key, partsupp and part by the part key) is cut
 * with F: each chunk reads only G's rows whose key lies in the range of
 * the chunk's F keys (co-sliced relations below).
 *
 * Every plan is lowered, placed and run like any other (both devices), so
 * a chunk needs the device memory of its rows only. Blocks it cannot
 * split this way run whole: compound SELECTs, DISTINCT aggregates of text
 * made at run time, MEDIAN / QUANTILE / group_concat, F on the NULL-padded side of an outer
 * join or inside a derived table, RIGHT / FULL JOINs, and group keys (or,
 * without aggregates, output columns) whose text is made at run time.
 *
 * SET chunk_rows = N (or GQP_CHUNK_ROWS=N) forces chunks of N rows on
 * every device (tests run the SQL suite so); with a memory_limit, a plan
 * whose GPU nodes' estimated outputs exceed it runs in chunks sized from
 * it; under --device gpu a query that runs out of device memory is tried
 * again in chunks (a quarter of F, then halves).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libgqp/internal.h"
#include "operators/operators.h"
#include "planner/bexpr.h"

/* TUNING: the smallest chunk the out-of-memory retry tries (rows): below
 * it the per-chunk plan overhead dominates and the query fails instead. */
#define CHUNK_OOM_MIN_ROWS ((int64_t)1 << 16)
/* TUNING: and never fewer rows of F than this (the retry halves down to
 * the floor: a table with few rows of a large co-sliced one would
 * otherwise be tried down to chunks of one row). */
#define CHUNK_MIN_ROWS_ABS 1024.0
/* TUNING: a plan whose GPU nodes' estimated outputs add up to more than
 * this share of the device budget runs in chunks (the sum over-counts:
 * not every output lives at once), each chunk sized for CHUNK_BUDGET_SHARE
 * of the budget. Not measured on a GPU yet. */
#define CHUNK_BUDGET_FIT 1.0
#define CHUNK_BUDGET_SHARE 0.5

/* 1 when e contains text made at run time (BE_TOTEXT). */
static int has_totext(const BExpr *e) {
    if (!e) return 0;
    if (e->kind == BE_TOTEXT) return 1;
    return has_totext(e->a) || has_totext(e->b) || has_totext(e->c);
}

/* The largest base table of b that chunks can cut (not a derived table,
 * a semi join's or the NULL-padded side of an outer join), or -1. */
static int largest_base(const BSelect *b) {
    int f = -1;
    for (int r = 0; r < b->nrels; r++) {
        const BRel *rel = &b->rels[r];
        if (rel->sub || rel->semi || rel->outer || !rel->table) continue;
        if (f < 0 || rel->table->nrows > b->rels[f].table->nrows) f = r;
    }
    return f;
}

static int sorted_key(CatTable *t, int c);

/* The group key of derived table d that is a column of its relation fl
 * and a sorted key of its table (or, with copies, one that can order a
 * copy of it, cluster.c), the sorted one first; -1 when none. Chunks of
 * that table that end where the key changes hold each of d's groups
 * whole. */
static int derived_key(const BSelect *d, int fl, int copies) {
    int k = -1;
    for (int i = 0; d->has_agg && fl >= 0 && i < d->ngroup; i++) {
        const BExpr *e = d->group[i];
        if (!e || e->kind != BE_COL || e->slot != fl || e->col < 0) continue;
        if (sorted_key(d->rels[fl].table, e->col)) return e->col;
        if (copies && k < 0 && gqp_cluster_ok(d->rels[fl].table, e->col)) k = e->col;
    }
    return k;
}

/* NULL when derived table d is a select-project-join block whose rows a
 * chunk of its base table gives a part of (TPC-H Q7, Q8, Q9), or one that
 * groups by a key of that table (derived_key: Q13's orders per customer),
 * whose chunks give each group whole; else what prevents it. */
static const char *plain_derived(const BSelect *d, int copies) {
    if (d->narms > 0) return "a compound SELECT in the derived table";
    if ((d->has_agg || d->ngroup > 0 || d->having) &&
        (!d->has_agg || d->rank_keys > 0 || derived_key(d, largest_base(d), copies) < 0))
        return "an aggregate in the derived table (not grouped by a sorted key of its largest "
               "table)";
    if (d->distinct) return "DISTINCT in the derived table";
    if (d->limit >= 0 || d->offset > 0 || d->norder > 0)
        return "ORDER BY or LIMIT in the derived table";
    if (d->late_where || d->nrels < 1) return "a RIGHT or FULL JOIN in the derived table";
    for (int r = 0; r < d->nrels; r++)
        if (d->rels[r].full || d->rels[r].right || d->rels[r].padded)
            return "a RIGHT or FULL JOIN in the derived table";
    for (int i = 0; i < d->nout; i++)
        if (has_totext(d->out[i]) || d->out[i]->type == CAT_NULL)
            return "a derived column made at run time";
    return NULL;
}

int gqp_chunk_table(const BSelect *b, int64_t chunk_rows, int copies, const char **why) {
    *why = NULL;
    if (!b || b->narms > 0) return *why = "a compound SELECT", -1;
    if (b->nrels < 1) return *why = "no table", -1;
    if (b->late_where) return *why = "a RIGHT or FULL JOIN", -1;
    /* row numbers among equal ORDER BY keys (a decorrelated LIMIT) count
     * across chunks */
    if (b->rank_keys > 0) return *why = "a row number over the ORDER BY keys", -1;
    for (int r = 0; r < b->nrels; r++)
        if (b->rels[r].full || b->rels[r].right || b->rels[r].padded)
            return *why = "a RIGHT or FULL JOIN", -1;
    for (int j = 0; j < b->naggs; j++) {
        const BAgg *a = &b->aggs[j];
        if (a->quant != AQ_NONE) return *why = "MEDIAN, QUANTILE or group_concat", -1;
        if (a->distinct && (!a->arg || has_totext(a->arg) || a->arg->type == CAT_NULL))
            return *why = "a DISTINCT aggregate of a value made at run time", -1;
        if (a->type == CAT_NULL) return *why = "an aggregate of NULL", -1;
    }
    for (int i = 0; i < b->ngroup; i++)
        if (has_totext(b->group[i]) || b->group[i]->type == CAT_NULL)
            return *why = "a group key made at run time", -1;
    if (!b->has_agg) {
        for (int i = 0; i < b->nout; i++)
            if (has_totext(b->out[i]) || b->out[i]->type == CAT_NULL)
                return *why = "a result column made at run time", -1;
        for (int i = 0; i < b->norder; i++)
            if (b->order_out[i] < 0 && (has_totext(b->order[i]) || b->order[i]->type == CAT_NULL))
                return *why = "an ORDER BY key made at run time", -1;
    }
    int f = largest_base(b), base = 0;
    if (f < 0 && b->nrels == 1 && b->rels[0].sub) {
        /* the block reads one derived table: its largest base table */
        const BSelect *d = b->rels[0].sub;
        if ((*why = plain_derived(d, copies))) return -1;
        if ((f = largest_base(d)) >= 0) {
            b = d;
            base = GQP_CHUNK_IN_SUB;
        }
    }
    if (f < 0) return *why = "no base table outside outer joins", -1;
    if (b->rels[f].table->nrows <= chunk_rows) return *why = "the table fits one chunk", -1;
    return base + f;
}

const BRel *gqp_chunk_rel(const BSelect *b, int f) {
    return f >= GQP_CHUNK_IN_SUB ? &b->rels[0].sub->rels[f - GQP_CHUNK_IN_SUB] : &b->rels[f];
}

/* ------------------------------------------------ co-sliced relations --
 * G (a relation of F's block, not on the padded side of a RIGHT / FULL
 * JOIN: a table, or a derived table that holds one's key row for row,
 * rel_key) is co-sliced with F when an equality F.a = G.c joins them (a
 * WHERE / inner join conjunct, or an ON conjunct of G's LEFT, SEMI or ANTI
 * JOIN), or joins G to a relation already cut on the column it was cut
 * by, and both columns are sorted keys (cat_column_sorted). The rows of
 * a chunk of F hold the keys [F.a of its first row, F.a of its last]; a
 * row of G outside them meets none of the chunk's rows, so the chunk reads
 * only G's rows in that key range (a row range of G, by binary search).
 * Every row of the block's result still comes from one row of F, in one
 * chunk: a row of G whose key two chunks share is read by both and meets
 * each chunk's own rows only, and whether a row of the chunk finds a
 * match in a LEFT / SEMI / ANTI JOIN of G does not change. */
#define CHUNK_MAX_CO 8

/* A table cut into row ranges: F, or a co-sliced G. */
typedef struct Cut {
    CatTable *src;    /* the table the plan reads */
    CatTable *t;      /* src, or its copy in the cut column's order (clu) */
    int clu;          /* 1: t is src's key-ordered copy (cluster.c) */
    double copy_ms;   /* clu: time spent opening and filling the copy */
    CatTable *slice;  /* its rows for the current chunk (columns into t's) */
    uint8_t *on_gpu;  /* t's columns that some chunk read on the GPU */
    int rel;          /* G: its index in F's block; -1 for F */
    int fcol, gcol;   /* G: the key columns of F and of G; F: its cut column or -1 */
    int64_t est_rows; /* G: the relation's estimated rows, whole */
    /* G read inside a derived table (sub_rel >= 0): an EXISTS / IN
     * subquery's SEMI JOIN over one table and its filters (TPC-H Q4, Q21),
     * or a block that joins G with others and may GROUP BY G's key (Q2's
     * minimum cost per part): its relation sub_rel is cut, in the partial
     * block's copy of the derived table (sub) */
    int sub_rel;
    int64_t sub_est_rows;
    BSelect *sub;
} Cut;

/* How co_find may cut: fkey < 0, F by any sorted key of its own; fkey >=
 * 0, F by that column only (sorted, or F read through its copy in that
 * column's order); copies: a G whose key column is not sorted through
 * its table's copy in that order (cluster.c). */
typedef struct CoMode {
    int fkey;
    int copies;
} CoMode;
/* The block that holds relation f (b, or the derived table b reads) and
 * f's index in it (*fl). */
static BSelect *chunk_block(const BSelect *b, int f, int *fl) {
    *fl = f >= GQP_CHUNK_IN_SUB ? f - GQP_CHUNK_IN_SUB : f;
    return f >= GQP_CHUNK_IN_SUB ? b->rels[0].sub : (BSelect *)b;
}

/* 1 when e is `x.a = y.c` (either way round) of two columns of one type
 * (and scale) of relations x and y: a in *ca, c in *cc. */
static int eq_cols(const BExpr *e, int x, int y, int *ca, int *cc) {
    if (!e || e->kind != BE_BINARY || e->op != OP_EQ || !e->a || !e->b) return 0;
    const BExpr *l = e->a, *r = e->b;
    if (l->kind != BE_COL || r->kind != BE_COL || l->col < 0 || r->col < 0) return 0;
    if (l->slot == y && r->slot == x) {
        const BExpr *t = l;
        l = r;
        r = t;
    }
    if (l->slot != x || r->slot != y || l->type != r->type || l->scale != r->scale) return 0;
    *ca = l->col;
    *cc = r->col;
    return 1;
}

/* 1 when column c of t is a sorted key (read first when it waits for its
 * first use). */
static int sorted_key(CatTable *t, int c) {
    CatError err;
    if (c < 0 || c >= t->ncols || cat_column_use(t, c, &err) != 0) return 0;
    return cat_column_sorted(&t->cols[c]) == 1;
}

/* 1 when relation r of a block is a base table read as it is (not a
 * derived table, not on the NULL-padded or SEMI side of a join). */
static int plain_rel(const BRel *r) {
    return r->table && !r->sub && !r->outer && !r->semi && !r->full && !r->right && !r->padded;
}

/* The table and column that column c of relation r (of F's block) holds
 * row for row: r's own table and c; or, for a derived table, the table
 * column its output c reads (*s: its relation there), when the derived
 * table's rows with a value v of output c come only from that table's
 * rows with value v: a block (no compound, DISTINCT, ORDER BY, LIMIT, row
 * number) whose output c is a plain column of one of its inner tables, or,
 * with GROUP BY, a group key that is one. NULL else. */
static CatTable *rel_key(const BRel *r, int c, int *s, int *col) {
    *s = -1;
    *col = c;
    if (!r->sub) return r->table;
    const BSelect *d = r->sub;
    if (d->narms > 0 || d->distinct || d->limit >= 0 || d->offset > 0 || d->norder > 0 ||
        d->rank_keys > 0 || d->late_where || c < 0 || c >= d->nout)
        return NULL;
    const BExpr *e = d->out[c];
    if (d->has_agg) { /* agg scope: columns 0..ngroup-1 are the group keys */
        if (!e || e->kind != BE_COL || e->col < 0 || e->col >= d->ngroup) return NULL;
        e = d->group[e->col];
    }
    if (!e || e->kind != BE_COL || e->col < 0 || e->slot < 0 || e->slot >= d->nrels ||
        !plain_rel(&d->rels[e->slot]))
        return NULL;
    *s = e->slot;
    *col = e->col;
    return d->rels[e->slot].table;
}

/* 1 when e equates column *ac of relation a (when *ac >= 0; any sorted
 * column of F when a is F, fl, and *ac < 0: then set) with a column of r
 * (relation g of F's block) that a sorted column of a table holds row for
 * row (rel_key: the table in *t, its column in *gc, the derived table's
 * relation in *s; r's own column as the block reads it in *bc). */
static int co_key(const BExpr *e, int a, int fl, CatTable *F, int *ac, int g, const BRel *r,
                  const CoMode *m, CatTable **t, int *s, int *gc, int *bc, int *clu) {
    int x = -1;
    if (!eq_cols(e, a, g, &x, bc)) return 0;
    if (*ac >= 0 ? x != *ac : (a != fl || (m->fkey >= 0 ? x != m->fkey : !sorted_key(F, x))))
        return 0;
    *t = rel_key(r, *bc, s, gc);
    if (!*t) return 0;
    *clu = !sorted_key(*t, *gc);
    if (*clu && !(m->copies && gqp_cluster_ok(*t, *gc))) return 0;
    *ac = x;
    return 1;
}

/* The relations co-sliced with F (relation f of b) into co[0..CHUNK_MAX_CO)
 * (t, rel, fcol, gcol, est_rows, sub_rel, sub_est_rows); their number.
 * Joined to F on F's sorted key, or to a relation already cut on the
 * column it was cut by (its values lie in the chunk's range of that F key
 * too: TPC-H Q2's minimum cost per part joins part, which is cut with
 * partsupp by the part key). */
static int co_find(const BSelect *b, int f, const CoMode *m, Cut *co) {
    int fl, n = 0;
    const BSelect *blk = chunk_block(b, f, &fl);
    CatTable *F = blk->rels[fl].table;
    int bcol[CHUNK_MAX_CO];
    for (int grown = 1; grown && n < CHUNK_MAX_CO;) {
        grown = 0;
        for (int g = 0; g < blk->nrels && n < CHUNK_MAX_CO; g++) {
            const BRel *r = &blk->rels[g];
            int done = g == fl || r->full || r->right || r->padded;
            for (int k = 0; k < n && !done; k++)
                done = co[k].rel == g;
            if (done) continue;
            CatTable *t = NULL;
            int s = -1, gc = -1, bc = -1, fc = -1, found = 0, clu = 0;
            /* the anchors: F (any sorted column), then each cut relation */
            for (int an = -1; an < n && !found; an++) {
                int a = an < 0 ? fl : co[an].rel, ac = an < 0 ? -1 : bcol[an];
                for (int k = 0; k < blk->npreds && !found; k++)
                    found = blk->preds[k].is_equi && co_key(blk->preds[k].expr, a, fl, F, &ac, g, r,
                                                            m, &t, &s, &gc, &bc, &clu);
                for (int k = 0; (r->outer || r->semi) && k < r->non && !found; k++)
                    found = co_key(r->on[k], a, fl, F, &ac, g, r, m, &t, &s, &gc, &bc, &clu);
                if (found) fc = an < 0 ? ac : co[an].fcol;
            }
            if (!found) continue;
            memset(&co[n], 0, sizeof co[n]);
            co[n].src = co[n].t = t;
            co[n].clu = clu;
            co[n].rel = g;
            co[n].fcol = fc;
            co[n].gcol = gc;
            co[n].est_rows = r->est_rows;
            co[n].sub_rel = s;
            co[n].sub_est_rows = s >= 0 ? r->sub->rels[s].est_rows : 0;
            bcol[n++] = bc;
            grown = 1;
        }
    }
    return n;
}

/* 1 when e is an equality of a column of relation fl with a column of
 * another relation: that column in *x. */
static int f_eq_col(const BExpr *e, int fl, int *x) {
    if (!e || e->kind != BE_BINARY || e->op != OP_EQ || !e->a || !e->b) return 0;
    const BExpr *l = e->a, *r = e->b;
    if (l->kind != BE_COL || r->kind != BE_COL || l->col < 0 || r->col < 0 || l->slot == r->slot)
        return 0;
    if (l->slot != fl && r->slot != fl) return 0;
    *x = l->slot == fl ? l->col : r->col;
    return 1;
}

/* The rows the cuts co[0..n) keep from being read whole (co_best's
 * measure). */
static double cut_rows(const Cut *co, int n) {
    double r = 0;
    for (int i = 0; i < n; i++)
        r += (double)(co[i].sub_rel >= 0 ? co[i].sub_est_rows : co[i].est_rows);
    return r;
}

/* co_find's best cut of F's block into co (their number): by F's sorted
 * keys; with copies also through key-ordered copies of the relations
 * (any G), or of F itself by one of its join columns (*fkey: that column
 * when F is read through its copy, else -1). The cut that leaves the
 * fewest estimated rows whole wins; a tie keeps the one with fewer
 * copies. */
static int co_best(const BSelect *b, int f, int copies, Cut *co, int *fkey) {
    int fl;
    const BSelect *blk = chunk_block(b, f, &fl);
    CatTable *F = blk->rels[fl].table;
    *fkey = -1;
    int need = f >= GQP_CHUNK_IN_SUB ? derived_key(blk, fl, copies) : -1;
    if (need >= 0) { /* F's chunks end where the derived table's group key changes */
        CoMode mk = {need, copies};
        if (!sorted_key(F, need)) *fkey = need;
        return co_find(b, f, &mk, co);
    }
    CoMode m = {-1, 0};
    int n = co_find(b, f, &m, co);
    if (!copies) return n;
    double best = cut_rows(co, n);
    Cut tmp[CHUNK_MAX_CO];
    m.copies = 1;
    int k = co_find(b, f, &m, tmp);
    if (cut_rows(tmp, k) > best) {
        best = cut_rows(tmp, k);
        n = k;
        memcpy(co, tmp, sizeof *co * (size_t)k);
    }
    /* F through its copy in a join column's order; not when the block
     * groups by a sorted key of F: chunks in that key's order hold every
     * group whole, where a reordered F would leave each chunk a partial
     * row for every group (TPC-H Q11, GROUP BY ps_partkey: partsupp in
     * ps_suppkey order gave each chunk's dense aggregate every part key,
     * more scratch than a quarter budget holds; H200, SF 10) */
    for (int i = 0; f < GQP_CHUNK_IN_SUB && i < b->ngroup; i++) {
        const BExpr *e = b->group[i];
        if (e->kind == BE_COL && e->slot == f && sorted_key(F, e->col)) return n;
    }
    int cand[16], nc = 0;
    for (int i = 0; i < blk->npreds + blk->nrels; i++) {
        const BRel *r = i >= blk->npreds ? &blk->rels[i - blk->npreds] : NULL;
        for (int j = 0; j < (r ? r->non : 1) && nc < 16; j++) {
            int x = -1, dup = 0;
            if (r ? !f_eq_col(r->on[j], fl, &x)
                  : !blk->preds[i].is_equi || !f_eq_col(blk->preds[i].expr, fl, &x))
                continue;
            for (int c = 0; c < nc && !dup; c++)
                dup = cand[c] == x;
            if (!dup && !sorted_key(F, x) && gqp_cluster_ok(F, x)) cand[nc++] = x;
        }
    }
    for (int c = 0; c < nc; c++) {
        m.fkey = cand[c];
        k = co_find(b, f, &m, tmp);
        if (k > 0 && cut_rows(tmp, k) > best) {
            best = cut_rows(tmp, k);
            n = k;
            *fkey = cand[c];
            memcpy(co, tmp, sizeof *co * (size_t)k);
        }
    }
    return n;
}

/* Value of row i of an integer column (4 or 8 bytes). */
static int64_t key_at(const CatColumn *c, int64_t i) {
    return cat_type_width(c->type) == 8 ? ((const int64_t *)c->data)[i]
                                        : ((const int32_t *)c->data)[i];
}

/* The first of c's n rows (sorted) whose value is above k (upper) or not
 * below it (!upper). */
static int64_t key_bound(const CatColumn *c, int64_t n, int64_t k, int upper) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t m = lo + (hi - lo) / 2, v = key_at(c, m);
        if (upper ? v <= k : v < k)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* EXPLAIN's text for F's cut (fkey: the column of F's copy, or -1) and
 * the cut relations co[0..n) into buf (cap bytes): "; with it orders by
 * o_orderkey, ...", empty when none; a table read through its key-ordered
 * copy says so. */
static void cut_names(const CatTable *F, int fkey, const Cut *co, int n, char *buf, size_t cap) {
    size_t len = 0;
    if (cap) buf[0] = 0;
    if (fkey >= 0 && cap) {
        int w = snprintf(buf, cap, "; read through a copy of %s in %s order", F->name,
                         F->cols[fkey].name);
        len = w < 0 ? 0 : (size_t)w;
    }
    for (int i = 0; i < n && len < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s by %s%s", i ? ", " : "; with it ",
                         co[i].src->name, co[i].src->cols[co[i].gcol].name,
                         co[i].clu ? " (through a copy in that order)" : "");
        if (w < 0) break;
        len += (size_t)w;
    }
}

int gqp_chunk_cosliced(const BSelect *b, int f, int copies, char *buf, size_t cap) {
    Cut co[CHUNK_MAX_CO];
    int fkey = -1, n = co_best(b, f, copies, co, &fkey);
    cut_names(gqp_chunk_rel(b, f)->table, fkey, co, n, buf, cap);
    return n;
}

/* ------------------------------------------------------ bound blocks -- */

/* A column reference (slot, col) of type t (dictionary d, scale s). */
static BExpr *col_ref(PlanArena *a, int slot, int col, CatType t, const CatDict *d, int prec,
                      int scale) {
    BExpr *e = bx_new(a, BE_COL, t, 0);
    if (!e) return NULL;
    e->slot = slot;
    e->col = col;
    e->dict = d;
    e->prec = prec;
    e->scale = scale;
    return e;
}

/* What the partial plan of an aggregation computes for each aggregate j of
 * the block: partial aggregate first[j], and for AVG its count cnt[j]
 * (-1 otherwise); isum[j]: AVG's partial sum is an exact INT64 sum of the
 * argument's (scaled) integers rather than a DOUBLE sum. Equal partials
 * are computed once (AVG(x) beside SUM(x), COUNT(x) of a column without
 * NULLs beside COUNT(*)): fewer partials keep more plans within the dense
 * aggregate's limits (TPC-H Q1: 11 partials are 8). */
typedef struct Partials {
    BAgg *aggs;
    int n;
    int *first, *cnt;
    uint8_t *isum;
    /* DISTINCT aggregates: their arguments become extra group keys of the
     * partial plan (dkeys[0..ndk), after the block's own), which the
     * final plan aggregates again with DISTINCT (duplicates across chunks
     * meet there); dk[j]: aggregate j's key, -1 for the others */
    BExpr **dkeys;
    int ndk;
    int *dk;
} Partials;

/* The column of F (relation f of b) a plain column reference e reads, or
 * NULL (another relation, a computed value). */
static const CatColumn *f_col(const BSelect *b, int f, const BExpr *e) {
    if (!e || e->kind != BE_COL || f >= GQP_CHUNK_IN_SUB || e->slot != f || e->col < 0) return NULL;
    const CatTable *t = b->rels[f].table;
    return t && e->col < t->ncols ? &t->cols[e->col] : NULL;
}

/* 1 when COUNT(arg) over the block is COUNT(*): arg a column of F
 * (relation f, not NULL-padded) that holds no NULL. */
static int count_is_star(const BSelect *b, int f, const BExpr *arg) {
    const CatColumn *c = f_col(b, f, arg);
    return c && !c->valid && !gqp_chunk_rel(b, f)->outer;
}

/* 1 when x and y are the same argument: both absent, the same node, or
 * the same column read as the same type. */
static int same_arg(const BExpr *x, const BExpr *y) {
    if (x == y) return 1;
    return x && y && x->kind == BE_COL && y->kind == BE_COL && x->slot == y->slot &&
           x->col == y->col && x->type == y->type && x->scale == y->scale && x->dict == y->dict;
}

/* Index of partial g among p's (added when new); -1 when out of room. */
static int add_partial(Partials *p, const BAgg *g) {
    for (int k = 0; k < p->n; k++) {
        const BAgg *h = &p->aggs[k];
        if (h->agg == g->agg && h->type == g->type && h->scale == g->scale &&
            h->distinct == g->distinct && h->quant == g->quant && same_arg(h->arg, g->arg))
            return k;
    }
    p->aggs[p->n] = *g;
    return p->n++;
}

/* The partial aggregates of b's aggregates (F is relation f); 0 or -1
 * (out of memory). */
static int partials(PlanArena *a, const BSelect *b, int f, Partials *p) {
    p->aggs = plan_alloc(a, sizeof(BAgg) * (size_t)(2 * b->naggs + 2));
    p->first = plan_alloc(a, sizeof(int) * (size_t)(b->naggs + 1));
    p->cnt = plan_alloc(a, sizeof(int) * (size_t)(b->naggs + 1));
    p->isum = plan_alloc(a, (size_t)(b->naggs + 1));
    p->dkeys = plan_alloc(a, sizeof(BExpr *) * (size_t)(b->naggs + 1));
    p->dk = plan_alloc(a, sizeof(int) * (size_t)(b->naggs + 1));
    if (!p->aggs || !p->first || !p->cnt || !p->isum || !p->dkeys || !p->dk) return -1;
    p->n = 0;
    p->ndk = 0;
    /* rows of the block at most: the product of its relations' (a
     * derived table's unknown) */
    double rows = 1;
    for (int r = 0; r < b->nrels; r++) {
        const BRel *rel = &b->rels[r];
        if (rel->semi) continue;
        if (rel->sub || !rel->table)
            rows = HUGE_VAL;
        else if (rel->table->nrows > 1)
            rows *= (double)rel->table->nrows;
    }
    for (int j = 0; j < b->naggs; j++) {
        BAgg g = b->aggs[j];
        p->cnt[j] = -1;
        p->isum[j] = 0;
        p->dk[j] = -1;
        if (g.distinct) {
            int k = 0;
            while (k < p->ndk && !same_arg(p->dkeys[k], g.arg))
                k++;
            if (k == p->ndk) p->dkeys[p->ndk++] = g.arg;
            p->dk[j] = k;
            p->first[j] = -1;
            continue;
        }
        /* COUNT of a column of F without NULLs is COUNT(*) */
        if (g.agg == AGG_COUNT && !g.distinct && count_is_star(b, f, g.arg)) {
            g.agg = AGG_COUNT_STAR;
            g.arg = NULL;
        }
        if (g.agg != AGG_AVG) {
            p->first[j] = add_partial(p, &g);
            continue;
        }
        /* AVG: the sum and the count. An integer (or DECIMAL: scaled
         * integers; AVG divides by 10^scale outside the aggregate) whose
         * sum the statistics prove cannot overflow: an exact INT64 sum, as
         * the unchunked plans add it; else the sum as a DOUBLE, as AVG's
         * own never overflows (the segmented reduce falls back to a
         * compensated double sum) */
        BAgg s = g, c = g;
        s.agg = AGG_SUM;
        s.scale = 0;
        int safe = 0;
        double x = g.arg && !bx_is_float(g.arg->type) && g.arg->type != CAT_STRING
                       ? op_abs_bound(g.arg, op_block_col, b, &safe)
                       : HUGE_VAL;
        if (safe && op_sum_no_overflow(rows, x)) {
            s.type = CAT_INT64;
            p->isum[j] = 1;
        } else {
            s.type = CAT_FLOAT64;
            if (g.arg && !bx_is_float(g.arg->type)) {
                BExpr *cx = bx_new(a, BE_CAST, CAT_FLOAT64, g.arg->pos);
                if (!cx) return -1;
                cx->a = g.arg;
                s.arg = cx;
            }
        }
        c.agg = AGG_COUNT;
        c.type = CAT_INT64;
        c.scale = 0;
        if (count_is_star(b, f, g.arg)) {
            c.agg = AGG_COUNT_STAR;
            c.arg = NULL;
        }
        p->first[j] = add_partial(p, &s);
        p->cnt[j] = add_partial(p, &c);
    }
    return 0;
}

/* The partial block: b over the slice (relation f), without HAVING,
 * DISTINCT of aggregates, ORDER BY and LIMIT (see the file comment);
 * without aggregates the ORDER BY keys not in the select list are
 * appended to it. */
static BSelect *partial_block(PlanArena *a, const BSelect *b, int f, CatTable *slice,
                              const Partials *pa, int complete) {
    BSelect *p = plan_alloc(a, sizeof *p);
    BRel *rels = plan_alloc(a, sizeof(BRel) * (size_t)b->nrels);
    if (!p || !rels) return NULL;
    *p = *b;
    memcpy(rels, b->rels, sizeof(BRel) * (size_t)b->nrels);
    if (f >= GQP_CHUNK_IN_SUB) {
        /* F inside the derived table: a copy of it reading the slice */
        const BSelect *d = b->rels[0].sub;
        BSelect *pd = plan_alloc(a, sizeof *pd);
        BRel *drels = plan_alloc(a, sizeof(BRel) * (size_t)d->nrels);
        if (!pd || !drels) return NULL;
        *pd = *d;
        memcpy(drels, d->rels, sizeof(BRel) * (size_t)d->nrels);
        drels[f - GQP_CHUNK_IN_SUB].table = slice;
        pd->rels = drels;
        rels[0].sub = pd;
    } else {
        rels[f].table = slice;
    }
    p->rels = rels;
    if (b->has_agg && !complete) {
        p->aggs = pa->aggs;
        p->naggs = pa->n;
        if (pa->ndk) { /* the DISTINCT aggregates' arguments as keys too */
            p->ngroup = b->ngroup + pa->ndk;
            p->group = plan_alloc(a, sizeof(BExpr *) * (size_t)(p->ngroup + 1));
            if (!p->group) return NULL;
            if (b->ngroup) memcpy(p->group, b->group, sizeof(BExpr *) * (size_t)b->ngroup);
            memcpy(p->group + b->ngroup, pa->dkeys, sizeof(BExpr *) * (size_t)pa->ndk);
        }
        p->having = NULL;
        p->distinct = 0;
        p->norder = 0;
        p->order = NULL;
        p->order_desc = NULL;
        p->order_out = NULL;
        p->limit = -1;
        p->offset = 0;
        p->nout = p->ngroup + pa->n;
        p->out = plan_alloc(a, sizeof(BExpr *) * (size_t)(p->nout + 1));
        p->out_names = plan_alloc(a, sizeof(char *) * (size_t)(p->nout + 1));
        if (!p->out || !p->out_names) return NULL;
        for (int k = 0; k < p->nout; k++) {
            char name[32];
            snprintf(name, sizeof name, "__p%d", k);
            if (k < p->ngroup) {
                const BExpr *g = p->group[k];
                p->out[k] = col_ref(a, 0, k, g->type, g->dict, g->prec, g->scale);
            } else {
                const BAgg *g = &pa->aggs[k - p->ngroup];
                const CatDict *d =
                    g->arg && (g->agg == AGG_MIN || g->agg == AGG_MAX) ? g->arg->dict : NULL;
                p->out[k] = col_ref(a, 0, k, g->type, d, g->arg ? g->arg->prec : 0, g->scale);
            }
            p->out_names[k] = plan_strdup(a, name);
            if (!p->out[k] || !p->out_names[k]) return NULL;
        }
        return p;
    }
    /* no aggregates (or every group whole in one chunk: the block as
     * written, HAVING included): the select list plus the ORDER BY keys
     * not in it */
    int extra = 0;
    for (int i = 0; i < b->norder; i++)
        extra += b->order_out[i] < 0;
    p->nout = b->nout + extra;
    p->out = plan_alloc(a, sizeof(BExpr *) * (size_t)(p->nout + 1));
    p->out_names = plan_alloc(a, sizeof(char *) * (size_t)(p->nout + 1));
    int *oo = plan_alloc(a, sizeof(int) * (size_t)(b->norder + 1));
    if (!p->out || !p->out_names || !oo) return NULL;
    memcpy(p->out, b->out, sizeof(BExpr *) * (size_t)b->nout);
    memcpy(p->out_names, b->out_names, sizeof(char *) * (size_t)b->nout);
    for (int i = 0, k = b->nout; i < b->norder; i++) {
        oo[i] = b->order_out[i];
        if (oo[i] >= 0) continue;
        p->out[k] = b->order[i];
        p->out_names[k] = plan_strdup(a, "__order");
        if (!p->out_names[k]) return NULL;
        oo[i] = k++;
    }
    p->order_out = oo;
    if (b->limit >= 0 && b->norder > 0) {
        /* each chunk's first offset + limit rows in the final order */
        p->limit = b->limit + b->offset;
    } else {
        /* without ORDER BY a chunk's first rows are the result's only
         * when no later DISTINCT can drop some of them */
        p->norder = 0;
        p->order = NULL;
        p->order_desc = NULL;
        p->order_out = NULL;
        p->limit = b->limit >= 0 && !b->distinct ? b->limit + b->offset : -1;
    }
    p->offset = 0;
    return p;
}

/* Copy of agg-scope expression e for the final block: a reference to
 * aggregate j becomes one to its merged value (AVG: merged sum / merged
 * count). NULL when out of memory. */
static BExpr *merge_ref(PlanArena *a, const BSelect *b, const Partials *pa, const BExpr *e) {
    if (!e) return NULL;
    BExpr *c = plan_alloc(a, sizeof *c);
    if (!c) return NULL;
    *c = *e;
    if (e->kind == BE_COL && e->col >= b->ngroup) {
        int j = e->col - b->ngroup, k = b->ngroup + pa->first[j];
        if (pa->dk[j] >= 0) { /* the final plan's own DISTINCT aggregate */
            c->col = b->ngroup + pa->n + j;
            return c;
        }
        c->col = k;
        if (pa->ndk && b->ngroup == 0 &&
            (b->aggs[j].agg == AGG_COUNT || b->aggs[j].agg == AGG_COUNT_STAR)) {
            /* no chunk has a row when the DISTINCT argument, a partial
             * key, has no group: the merged COUNT is 0, not NULL */
            BExpr *z = bx_int(a, CAT_INT64, 0, e->pos);
            BExpr *cz = bx_new(a, BE_COALESCE, CAT_INT64, e->pos);
            if (!z || !cz) return NULL;
            cz->a = c;
            cz->b = z;
            return cz;
        }
        if (b->aggs[j].agg != AGG_AVG) return c;
        /* AVG: merged sum / merged count, as the unchunked plans divide:
         * (double) sum / (double) count */
        BExpr *s = col_ref(a, 0, k, pa->isum[j] ? CAT_INT64 : CAT_FLOAT64, NULL, 0, 0);
        BExpr *n = col_ref(a, 0, b->ngroup + pa->cnt[j], CAT_INT64, NULL, 0, 0);
        BExpr *fn = bx_new(a, BE_CAST, CAT_FLOAT64, e->pos);
        if (!s || !n || !fn) return NULL;
        fn->a = n;
        if (pa->isum[j]) {
            BExpr *fs = bx_new(a, BE_CAST, CAT_FLOAT64, e->pos);
            if (!fs) return NULL;
            fs->a = s;
            s = fs;
        }
        return bx_bin(a, OP_DIV, CAT_FLOAT64, s, fn, e->pos);
    }
    if ((e->a && !(c->a = merge_ref(a, b, pa, e->a))) ||
        (e->b && !(c->b = merge_ref(a, b, pa, e->b))) ||
        (e->c && !(c->c = merge_ref(a, b, pa, e->c))))
        return NULL;
    if (e->orig && !(c->orig = merge_ref(a, b, pa, e->orig))) return NULL;
    return c;
}

/* A reference to column k of t (the partial results) in the final block. */
static BExpr *t_col(PlanArena *a, const CatTable *t, int k) {
    const CatColumn *c = &t->cols[k];
    return col_ref(a, 0, k, c->type, c->dict, c->prec, c->scale);
}

/* The final block over t (the partial results, in the partial block's
 * columns). */
static BSelect *final_block(PlanArena *a, const BSelect *b, const Partials *pa, CatTable *t,
                            int complete) {
    BSelect *fb = plan_alloc(a, sizeof *fb);
    BRel *rel = plan_alloc(a, sizeof *rel);
    int *order = plan_alloc(a, sizeof(int));
    if (!fb || !rel || !order) return NULL;
    rel->table = t;
    rel->alias = t->name;
    rel->est_rows = t->nrows;
    fb->nrels = 1;
    fb->rels = rel;
    fb->join_order = order;
    fb->nout = b->nout;
    fb->out_names = b->out_names;
    fb->distinct = b->distinct;
    fb->norder = b->norder;
    fb->order_desc = b->order_desc;
    fb->limit = b->limit;
    fb->offset = b->offset;
    fb->est_groups = b->est_groups;
    fb->out = plan_alloc(a, sizeof(BExpr *) * (size_t)(b->nout + 1));
    fb->order = plan_alloc(a, sizeof(BExpr *) * (size_t)(b->norder + 1));
    if (!fb->out || !fb->order) return NULL;
    if (!b->has_agg || complete) {
        for (int k = 0; k < b->nout; k++)
            if (!(fb->out[k] = t_col(a, t, k))) return NULL;
        int *oo = plan_alloc(a, sizeof(int) * (size_t)(b->norder + 1));
        if (!oo) return NULL;
        for (int i = 0, x = b->nout; i < b->norder; i++) {
            int k = b->order_out[i] >= 0 ? b->order_out[i] : x++;
            oo[i] = b->order_out[i];
            if (!(fb->order[i] = t_col(a, t, k))) return NULL;
            /* NULLS FIRST / LAST's key `out[j] IS NULL` (planner/bind.c
             * nulls_keys) as that over the final block's column j, which
             * a DISTINCT final block computes from its output */
            int j = op_isnull_key_output(b, i);
            if (j < 0) continue;
            BExpr *isn = bx_new(a, BE_ISNULL, CAT_BOOL, b->order[i]->pos);
            if (!isn || !(isn->a = t_col(a, t, j))) return NULL;
            fb->order[i] = isn;
        }
        fb->order_out = oo;
        return fb;
    }
    fb->has_agg = 1;
    fb->ngroup = b->ngroup;
    fb->group = plan_alloc(a, sizeof(BExpr *) * (size_t)(b->ngroup + 1));
    /* the merged partials, then (at pa->n + j) aggregate j again where it
     * is DISTINCT, over its argument's column */
    fb->naggs = pa->n + (pa->ndk ? b->naggs : 0);
    fb->aggs = plan_alloc(a, sizeof(BAgg) * (size_t)(fb->naggs + 1));
    if (!fb->group || !fb->aggs) return NULL;
    for (int i = 0; i < b->ngroup; i++)
        if (!(fb->group[i] = t_col(a, t, i))) return NULL;
    for (int j = 0; pa->ndk && j < b->naggs; j++) {
        BAgg *m = &fb->aggs[pa->n + j];
        *m = b->aggs[j];
        if (pa->dk[j] < 0) { /* a placeholder no expression reads */
            m->agg = AGG_COUNT_STAR;
            m->arg = NULL;
            m->distinct = 0;
            m->type = CAT_INT64;
            m->scale = 0;
        } else if (!(m->arg = t_col(a, t, b->ngroup + pa->dk[j]))) {
            return NULL;
        }
    }
    for (int k = 0; k < pa->n; k++) {
        const BAgg *g = &pa->aggs[k];
        int c = b->ngroup + pa->ndk + k;
        BAgg *m = &fb->aggs[k];
        *m = *g;
        if (!(m->arg = t_col(a, t, c))) return NULL;
        if (g->agg == AGG_COUNT || g->agg == AGG_COUNT_STAR) {
            m->agg = AGG_SUM;
            m->type = CAT_INT64;
            m->scale = 0;
        }
    }
    if (b->having && !(fb->having = merge_ref(a, b, pa, b->having))) return NULL;
    for (int k = 0; k < b->nout; k++)
        if (!(fb->out[k] = merge_ref(a, b, pa, b->out[k]))) return NULL;
    for (int i = 0; i < b->norder; i++)
        if (!(fb->order[i] = merge_ref(a, b, pa, b->order[i]))) return NULL;
    fb->order_out = b->order_out;
    return fb;
}

/* ------------------------------------------------------------ tables -- */

/* The table of the partial results: columns like res's (names __pK),
 * capacity cap rows, no rows yet. NULL when out of memory. */
static CatTable *parts_new(const ExecResult *res, int64_t cap) {
    CatTable *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->name = strdup("__gqp_chunks");
    t->cols = calloc((size_t)res->ncols + 1, sizeof *t->cols);
    t->ncols = res->ncols;
    if (!t->name || !t->cols) goto fail;
    for (int k = 0; k < res->ncols; k++) {
        const ExecColumn *rc = &res->cols[k];
        CatColumn *c = &t->cols[k];
        char name[32];
        snprintf(name, sizeof name, "__p%d", k);
        c->name = strdup(name);
        c->type = rc->ltype;
        c->dict = (CatDict *)rc->dict; /* not owned (the plan's or the catalog's) */
        c->prec = CAT_DEC_MAX_PREC;
        c->scale = rc->scale;
        c->data = malloc(cat_type_width(c->type) * (size_t)(cap ? cap : 1));
        c->valid = malloc((size_t)(cap ? cap : 1));
        if (!c->name || !c->data || !c->valid) goto fail;
    }
    return t;
fail:
    for (int k = 0; t->cols && k < t->ncols; k++) {
        free(t->cols[k].name);
        free(t->cols[k].data);
        free(t->cols[k].valid);
    }
    free(t->cols);
    free(t->name);
    free(t);
    return NULL;
}

/* Free a table made by parts_new (its dictionaries are not its own). */
static void parts_free(CatTable *t) {
    if (!t) return;
    for (int k = 0; k < t->ncols; k++) {
        free(t->cols[k].name);
        free(t->cols[k].data);
        free(t->cols[k].valid);
        free(t->cols[k].stats.hist);
    }
    free(t->cols);
    free(t->name);
    free(t);
}

/* Append res's rows to t (capacity *cap rows, grown by doubling).
 * Returns 0, -1 out of memory, -2 when res does not match t's columns (a
 * type or dictionary that differs between chunks). */
static int parts_append(CatTable *t, int64_t *cap, const ExecResult *res) {
    if (res->ncols != t->ncols) return -2;
    for (int k = 0; k < t->ncols; k++)
        if (res->cols[k].ltype != t->cols[k].type || res->cols[k].dict != t->cols[k].dict ||
            res->cols[k].scale != t->cols[k].scale)
            return -2;
    int64_t n = t->nrows + res->nrows;
    if (n > *cap) {
        int64_t nc = *cap ? *cap : 1024;
        while (nc < n)
            nc *= 2;
        for (int k = 0; k < t->ncols; k++) {
            CatColumn *c = &t->cols[k];
            void *d = realloc(c->data, cat_type_width(c->type) * (size_t)nc);
            if (d) c->data = d;
            uint8_t *v = d ? realloc(c->valid, (size_t)nc) : NULL;
            if (v) c->valid = v;
            if (!d || !v) return -1;
        }
        *cap = nc;
    }
    for (int k = 0; k < t->ncols; k++) {
        CatColumn *c = &t->cols[k];
        size_t w = cat_type_width(c->type);
        const PrimVec *v = &res->cols[k].vec;
        if (res->nrows)
            memcpy((char *)c->data + w * (size_t)t->nrows, v->data, w * (size_t)res->nrows);
        if (v->valid)
            memcpy(c->valid + t->nrows, v->valid, (size_t)res->nrows);
        else if (res->nrows)
            memset(c->valid + t->nrows, 1, (size_t)res->nrows);
    }
    t->nrows = n;
    for (int k = 0; k < t->ncols; k++)
        t->cols[k].n = n;
    return 0;
}

/* Row r of column c's host data. */
static const char *col_row(const CatColumn *c, int64_t r) {
    return (const char *)c->data + cat_type_width(c->type) * (size_t)r;
}

/* Point slice's columns at rows [lo, lo + n) of f (same types,
 * dictionaries and statistics: a sub-range's values lie in the table's
 * bounds, which is what the plans read of them; but not whether they are
 * distinct, which is checked again per chunk). */
static void slice_set(CatTable *slice, const CatTable *f, int64_t lo, int64_t n) {
    slice->nrows = n;
    for (int c = 0; c < f->ncols; c++) {
        const CatColumn *src = &f->cols[c];
        CatColumn *dst = &slice->cols[c];
        dst->n = n;
        dst->cap = 0;
        dst->data = src->data ? (void *)col_row(src, lo) : NULL;
        dst->valid = src->valid ? src->valid + lo : NULL;
        /* whether the values are distinct is the slice's own (the planner
         * checks it on demand and keeps the answer in the statistics: one
         * chunk's answer must not stand for the next) */
        dst->stats.unique = 0;
        /* F's statistics bound the slice's values (overflow proofs) */
        dst->stats_cover = 1;
        /* a sorted column's bounds are the slice's first and last values
         * (a dense aggregate or keymap over them spans the chunk's keys
         * only); others keep the table's */
        dst->stats.min = src->stats.min;
        dst->stats.max = src->stats.max;
        if (src->stats.sorted == 1 && src->stats.has_minmax && n > 0 && src->data) {
            dst->stats.min = (double)key_at(src, lo);
            dst->stats.max = (double)key_at(src, lo + n - 1);
        }
    }
}

/* ----------------------------------------------------------- running -- */

/* Lower and place block b into a new DAG in arena a; NULL with db's
 * error set. */
static Dag *plan_block(gqp *db, gqp_stmt *st, PlanArena *a, const BSelect *b) {
    Dag *dag = plan_dag_new(a);
    if (!dag) return gqp_set_error(db, GQP_NOMEM, "out of memory"), NULL;
    if (gqp_lower_dag(db, st, b, dag) != GQP_OK) {
        plan_dag_free(dag);
        return NULL;
    }
    gqp_place_dag(db, dag);
    return dag;
}

/* Add s into acc. */
static void stats_add(ExecStats *acc, const ExecStats *s) {
    acc->total_ms += s->total_ms;
    acc->bytes_h2d += s->bytes_h2d;
    acc->bytes_mapped += s->bytes_mapped;
    acc->bytes_d2h += s->bytes_d2h;
    if (s->peak_device_bytes > acc->peak_device_bytes)
        acc->peak_device_bytes = s->peak_device_bytes;
    acc->oom_retries += s->oom_retries;
    acc->oom_fallbacks += s->oom_fallbacks;
}

/* Replace st's chunk note by text (malloc'ed) or NULL. */
static void set_note(gqp_stmt *st, char *text) {
    free(st->chunk_note);
    st->chunk_note = text;
}

/* The partial block pb's estimates of F's rows after its filters (and of
 * the derived table F is in) for a chunk of share of F's rows. */
static void chunk_estimates(BSelect *pb, const BSelect *b, int f, double share) {
    BRel *r = (BRel *)gqp_chunk_rel(pb, f);
    r->est_rows = (int64_t)((double)gqp_chunk_rel(b, f)->est_rows * share + 0.999);
    if (f >= GQP_CHUNK_IN_SUB)
        pb->rels[0].est_rows = (int64_t)((double)b->rels[0].est_rows * share + 0.999);
}

/* A slice table of c->t (its columns into t's, read in place) in
 * c->slice and its GPU marks, after loading the columns of c->src that
 * dag's sources read (and, for a key-ordered copy, opening the copy, in
 * c->t, and ordering those columns into it). 0, or a gqp error code (db's
 * message set). */
static int cut_open(gqp *db, const Dag *dag, Cut *c, int key) {
    double t0 = c->clu ? gqp_wall_ms() : 0;
    if (c->clu) {
        int rc = gqp_cluster_open(db, c->src, key, &c->t);
        if (rc != GQP_OK) {
            c->t = NULL;
            return rc;
        }
    }
    CatTable *T = c->t;
    for (int i = 0; i < dag->nnodes; i++) {
        const DagNode *nd = &dag->nodes[i];
        CatError cerr;
        if (nd->kind != DN_SOURCE || nd->table != c->src) continue;
        if (cat_column_use(c->src, nd->column, &cerr) != 0)
            return gqp_set_error(db, GQP_ERROR, "%s", cerr.msg);
        int rc = c->clu ? gqp_cluster_fill(db, T, nd->column) : GQP_OK;
        if (rc != GQP_OK) return rc;
    }
    if (c->clu) c->copy_ms = gqp_wall_ms() - t0;
    CatTable *slice = calloc(1, sizeof *slice);
    CatColumn *scols = calloc((size_t)T->ncols + 1, sizeof *scols);
    c->on_gpu = calloc((size_t)T->ncols + 1, 1);
    if (!slice || !scols || !c->on_gpu) {
        free(slice);
        free(scols);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    *slice = *T;
    memcpy(scols, T->cols, sizeof *scols * (size_t)T->ncols);
    for (int k = 0; k < T->ncols; k++)
        scols[k].lazy = NULL, scols[k].map = NULL;
    slice->cols = scols;
    slice->indexes = NULL;
    slice->nindexes = 0;
    c->slice = slice;
    return GQP_OK;
}

/* After a chunk ran dag: mark c's columns that a GPU source read, and drop
 * the slice's columns from the column cache (a chunk's columns are copied
 * to the device once: they would hold the budget, and an UPDATE forgets a
 * table's columns by their start address, not a slice's; by address and
 * row count, so the first chunk, which starts where the table does, leaves
 * a cached copy of the whole column, and its read counts, alone). */
static void cut_after_chunk(gqp *db, const Dag *dag, Cut *c) {
    for (int k = 0; dag && k < dag->nnodes; k++) {
        const DagNode *nd = &dag->nodes[k];
        if (nd->kind == DN_SOURCE && nd->device == DEV_GPU && nd->table == c->slice &&
            nd->column >= 0 && nd->column < c->t->ncols)
            c->on_gpu[nd->column] = 1;
    }
    for (int k = 0; k < c->slice->ncols; k++)
        exec_device_forget(db->dev, c->slice->cols[k].data, c->slice->nrows);
}

/* A table streamed in chunks again and again: its columns stay
 * page-locked from their second chunked run on (exec_device_streamed). */
static void cut_streamed(gqp *db, const Cut *c) {
    for (int k = 0; k < c->t->ncols; k++) {
        const CatColumn *col = &c->t->cols[k];
        if (!c->on_gpu[k] || !col->data) continue;
        exec_device_streamed(db->dev, col->data, (size_t)c->t->nrows * cat_type_width(col->type));
        if (col->valid) exec_device_streamed(db->dev, col->valid, (size_t)c->t->nrows);
    }
}

static void cut_close(gqp *db, Cut *c) {
    if (c->clu && c->t) gqp_cluster_close(db, c->t);
    c->t = c->src;
    if (c->slice) free(c->slice->cols);
    free(c->slice);
    free(c->on_gpu);
    c->slice = NULL;
    c->on_gpu = NULL;
}

/* SET mapped_columns = 'on': c's table's columns page-locked before the
 * chunks run, so that every chunk's slices are read mapped inside them
 * (gqp_mark_mapped's 2); they stay locked as exec_device_streamed's do. */
static void cut_lock_mapped(gqp *db, const Cut *c) {
    if (!db->dev || db->mapped != 2) return;
    char e[256];
    void *d;
    for (int k = 0; k < c->t->ncols; k++) {
        const CatColumn *col = &c->t->cols[k];
        if (!col->data || c->t->nrows <= 0) continue;
        exec_device_map(db->dev, col->data, (size_t)c->t->nrows * cat_type_width(col->type), 1, &d,
                        e, sizeof e);
        if (col->valid)
            exec_device_map(db->dev, col->valid, (size_t)c->t->nrows, 1, &d, e, sizeof e);
    }
}

/* The rows of F's chunk from row lo: chunk_rows (fewer at the end), up
 * to where column align's key changes when align >= 0. */
static int64_t chunk_len(const CatTable *F, int64_t lo, int64_t chunk_rows, int align) {
    int64_t n = F->nrows - lo < chunk_rows ? F->nrows - lo : chunk_rows;
    if (align >= 0 && lo + n < F->nrows) /* up to where the key changes */
        n = key_bound(&F->cols[align], F->nrows, key_at(&F->cols[align], lo + n - 1), 1) - lo;
    return n;
}

/* The rows [*glo, *ghi) of cuts[c] in the chunk of F's rows [lo, lo + n):
 * those rows of F (c = 0), else the rows of co-sliced G whose key lies in
 * their keys. */
static void cut_range(const Cut *cuts, int c, int64_t lo, int64_t n, int64_t *glo, int64_t *ghi) {
    *glo = lo;
    *ghi = lo + n;
    if (c == 0) return;
    const CatTable *F = cuts[0].t;
    const Cut *g = &cuts[c];
    const CatColumn *fk = &F->cols[g->fcol], *gk = &g->t->cols[g->gcol];
    *glo = key_bound(gk, g->t->nrows, key_at(fk, lo), 0);
    *ghi = key_bound(gk, g->t->nrows, key_at(fk, lo + n - 1), 1);
}

/* Issue the copies of the next chunk's columns (F's rows [lo, lo + n) and
 * its co-sliced relations' rows) that dag, this chunk's plan, reads on
 * the GPU, so that they cross PCIe while this chunk's kernels run
 * (exec_cache_prefetch: only ranges kept page-locked, from a table's
 * second chunked run on). Returns the bytes issued. */
static int64_t prefetch_next(gqp *db, const Dag *dag, const Cut *cuts, int ncut, int64_t lo,
                             int64_t n) {
    int64_t bytes = 0;
    for (int k = 0; n > 0 && k < dag->nnodes; k++) {
        const DagNode *nd = &dag->nodes[k];
        if (nd->kind != DN_SOURCE || nd->device != DEV_GPU || nd->mapped || nd->column < 0 ||
            nd->noutputs < 1)
            continue;
        int c = 0;
        while (c < ncut && nd->table != cuts[c].slice)
            c++;
        if (c == ncut || nd->column >= cuts[c].t->ncols) continue;
        int64_t glo, ghi;
        cut_range(cuts, c, lo, n, &glo, &ghi);
        const CatColumn *col = &cuts[c].t->cols[nd->column];
        if (!col->data || ghi <= glo) continue;
        PrimVec h = {dag->values[nd->outputs[0]].type, ghi - glo, (void *)col_row(col, glo),
                     col->valid ? col->valid + glo : NULL};
        if (prim_type_width(h.type) != cat_type_width(col->type)) continue;
        bytes += exec_cache_prefetch(db->dev, &h);
    }
    return bytes;
}

/* Drop the cached copies of the chunk at F's rows [lo, lo + n) and its
 * co-sliced relations' rows (prefetch_next's, for a chunk that never ran). */
static void forget_chunk(gqp *db, const Cut *cuts, int ncut, int64_t lo, int64_t n) {
    for (int c = 0; n > 0 && c < ncut; c++) {
        int64_t glo, ghi;
        cut_range(cuts, c, lo, n, &glo, &ghi);
        const CatTable *t = cuts[c].t;
        for (int k = 0; k < t->ncols; k++)
            if (t->cols[k].data && ghi > glo)
                exec_device_forget(db->dev, col_row(&t->cols[k], glo), ghi - glo);
    }
}

int gqp_run_chunked(gqp *db, gqp_stmt *st, int f, int64_t chunk_rows, const ExecOptions *opt,
                    int copies) {
    const BSelect *b = st->bound;
    /* cuts[0] is F, then the relations co-sliced with it */
    Cut cuts[1 + CHUNK_MAX_CO];
    memset(cuts, 0, sizeof cuts);
    int fkey = -1;
    cuts[0].src = cuts[0].t = gqp_chunk_rel(b, f)->table;
    cuts[0].rel = -1;
    int ncut = 1 + co_best(b, f, copies, cuts + 1, &fkey), rc = GQP_OK;
    cuts[0].clu = fkey >= 0;
    CatTable *F = NULL, *t = NULL;
    PlanArena *a = plan_arena_new();
    char *partial_text = NULL;
    int64_t nchunks = 0, cap = 0;
    if (!a) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto done;
    }
    for (int c = 0; c < ncut && rc == GQP_OK; c++)
        rc = cut_open(db, st->dag, &cuts[c], c ? cuts[c].gcol : fkey);
    if (rc != GQP_OK) goto done;
    F = cuts[0].t; /* F's rows as the chunks read them (its copy when clu) */
    /* F's group key columns: when sorted, each chunk's bounds are its own
     * (slice_set), so that a dense aggregate spans the chunk's keys; and
     * when chunks end where the first such key changes (whole >= 0), every
     * group lies whole in one chunk: each chunk runs the block as written
     * (aggregates, HAVING, the select list; ORDER BY + LIMIT as a chunk's
     * first rows), and the final plan only applies DISTINCT, ORDER BY and
     * LIMIT to the concatenated rows (TPC-H Q18's IN subquery, GROUP BY
     * l_orderkey HAVING ..., keeps a few rows per chunk instead of a
     * partial row per order) */
    int whole = -1;
    for (int i = 0; f < GQP_CHUNK_IN_SUB && i < b->ngroup; i++) {
        const BExpr *e = b->group[i];
        if (e->kind == BE_COL && e->slot == f && sorted_key(F, e->col) && whole < 0) whole = e->col;
    }
    Partials pa = {0};
    if (b->has_agg && whole < 0 && partials(a, b, f, &pa) != 0) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto done;
    }
    BSelect *pb = partial_block(a, b, f, cuts[0].slice, &pa, whole >= 0);
    if (!pb) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto done;
    }
    int fl;
    BSelect *pblk = chunk_block(pb, f, &fl); /* pb's own copy of F's block */
    for (int c = 1; c < ncut && rc == GQP_OK; c++) {
        Cut *g = &cuts[c];
        if (g->sub_rel < 0) {
            pblk->rels[g->rel].table = g->slice;
            continue;
        }
        /* a copy of the derived table reading the slice */
        const BSelect *d = pblk->rels[g->rel].sub;
        BSelect *cd = plan_alloc(a, sizeof *cd);
        BRel *cr = plan_alloc(a, sizeof *cr * (size_t)d->nrels);
        if (!cd || !cr) {
            rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
            break;
        }
        *cd = *d;
        memcpy(cr, d->rels, sizeof *cr * (size_t)d->nrels);
        cr[g->sub_rel].table = g->slice;
        cd->rels = cr;
        pblk->rels[g->rel].sub = g->sub = cd;
    }
    if (rc != GQP_OK) goto done;
    ExecStats total;
    memset(&total, 0, sizeof total);
    double t0 = gqp_wall_ms();
    /* chunks end where a key changes: the sorted group key above, else the
     * key of F cut again as a co-sliced relation of itself (an EXISTS over
     * F on that key, TPC-H Q21): both then read the same rows, one copy */
    int align = whole;
    if (f >= GQP_CHUNK_IN_SUB && b->rels[0].sub->has_agg) { /* its groups whole: co_best */
        align = fkey >= 0 ? fkey : derived_key(b->rels[0].sub, f - GQP_CHUNK_IN_SUB, 0);
        if (align < 0 || !sorted_key(F, align)) {
            rc = gqp_set_error(db, GQP_ERROR,
                               "Execution Error: chunked execution: no sorted group key");
            goto done;
        }
    }
    for (int c = 1; c < ncut && align < 0; c++)
        if (cuts[c].t == F && cuts[c].gcol == cuts[c].fcol) align = cuts[c].fcol;
    for (int c = 0; c < ncut; c++)
        cut_lock_mapped(db, &cuts[c]);
    const char *pe = getenv("GQP_CHUNK_PREFETCH");
    /* not when every GPU source is to be read mapped (mapped_columns on):
     * a copy made ahead would stand in for the mapped read */
    int prefetch = db->dev && db->mapped != 2 && !(pe && strcmp(pe, "0") == 0);
    int64_t prefetched = 0, pf_lo = -1, pf_n = 0;
    for (int64_t lo = 0, n = 0; lo < F->nrows && rc == GQP_OK; lo += n) {
        n = chunk_len(F, lo, chunk_rows, align);
        const int last = lo + n >= F->nrows;
        nchunks++;
        slice_set(cuts[0].slice, F, lo, n);
        /* the estimates of F's rows after its filters: the chunk's share */
        chunk_estimates(pb, b, f, (double)n / (double)(F->nrows > 0 ? F->nrows : 1));
        for (int c = 1; c < ncut; c++) {
            /* G's rows with a key in the chunk's range of F's keys */
            Cut *g = &cuts[c];
            int64_t glo, ghi;
            cut_range(cuts, c, lo, n, &glo, &ghi);
            slice_set(g->slice, g->t, glo, ghi - glo);
            double share = (double)(ghi - glo) / (double)(g->t->nrows > 0 ? g->t->nrows : 1);
            pblk->rels[g->rel].est_rows = (int64_t)((double)g->est_rows * share + 0.999);
            if (g->sub)
                g->sub->rels[g->sub_rel].est_rows =
                    (int64_t)((double)g->sub_est_rows * share + 0.999);
        }
        PlanArena *ca = plan_arena_new();
        Dag *dag = ca ? plan_block(db, st, ca, pb) : NULL;
        /* the columns every chunk reads whole, mapped (gqp_budget_plan) */
        if (dag && st->chunk_mapped && db->mapped >= 1) gqp_mark_mapped(db, dag, 0, 0);
        /* the next chunk's columns cross PCIe while this one's kernels run */
        if (dag && prefetch && !last) {
            pf_lo = lo + n;
            pf_n = chunk_len(F, pf_lo, chunk_rows, align);
            prefetched += prefetch_next(db, dag, cuts, ncut, pf_lo, pf_n);
        }
        ExecResult res;
        ExecStats s;
        memset(&res, 0, sizeof res);
        memset(&s, 0, sizeof s);
        if (!ca)
            rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        else if (!dag)
            rc = db->errcode ? db->errcode : GQP_ERROR;
        else if ((rc = gqp_exec_dag(db, dag, opt, &res, &s)) == GQP_OK &&
                 (rc = st->chunk_reals = gqp_no_reals(db, &res, "a chunk's partial result")) ==
                     GQP_OK) {
            stats_add(&total, &s);
            if (!t && !(t = parts_new(&res, 0))) rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
            int ar = rc == GQP_OK ? parts_append(t, &cap, &res) : 0;
            if (ar == -1) rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
            if (ar == -2)
                rc = gqp_set_error(db, GQP_ERROR,
                                   "Execution Error: chunked execution: the partial results "
                                   "of two chunks differ in type");
            if (rc == GQP_OK && last && st->profile) partial_text = plan_explain_text(dag, 1);
        }
        for (int c = 0; c < ncut; c++)
            cut_after_chunk(db, rc == GQP_OK ? dag : NULL, &cuts[c]);
        exec_result_free(&res);
        plan_dag_free(dag);
        plan_arena_free(ca);
    }
    /* a chunk failed: what was copied ahead for the next one goes (keyed
     * by addresses inside the tables, nothing else would drop it) */
    if (rc != GQP_OK && pf_lo >= 0) forget_chunk(db, cuts, ncut, pf_lo, pf_n);
    for (int c = 0; rc == GQP_OK && c < ncut; c++)
        cut_streamed(db, &cuts[c]);
    if (rc != GQP_OK) goto done;
    /* the final plan over the partial results */
    cat_table_stats(t);
    BSelect *fb = final_block(a, b, &pa, t, whole >= 0);
    Dag *fdag = fb ? plan_block(db, st, a, fb) : NULL;
    if (!fb) rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
    if (rc == GQP_OK && !fdag) rc = GQP_ERROR;
    ExecStats s;
    memset(&s, 0, sizeof s);
    exec_result_free(&st->res);
    total.bytes_h2d += prefetched; /* copied for the chunks ahead of their runs */
    if (rc == GQP_OK && (rc = gqp_exec_dag(db, fdag, opt, &st->res, &s)) == GQP_OK) {
        stats_add(&total, &s);
        st->stats = total;
        st->exec_ms = gqp_wall_ms() - t0; /* plus the copies' time (cut_open) */
        for (int c = 0; c < ncut; c++)
            st->exec_ms += cuts[c].copy_ms;
    }
    if (rc == GQP_OK && st->profile) { /* EXPLAIN ANALYZE: what ran, for its text */
        char head[1400], with[512], groups[256] = "", copies[96] = "";
        cut_names(cuts[0].src, fkey, cuts + 1, ncut - 1, with, sizeof with);
        double cms = 0;
        for (int c = 0; c < ncut; c++)
            cms += cuts[c].copy_ms;
        if (cms >= 0.05) /* a copy made or a column ordered into it in this run */
            snprintf(copies, sizeof copies, " (%.1f ms of it ordering copies)", cms);
        if (whole >= 0)
            snprintf(groups, sizeof groups,
                     "; chunks end where %s changes: every group whole in one chunk",
                     F->cols[whole].name);
        snprintf(head, sizeof head,
                 "-- chunked execution: %s in %lld chunks of %s%lld rows%s%s%s; %lld partial "
                 "rows, merged by the final plan (last)%s\n",
                 F->name, (long long)nchunks, align >= 0 ? "about " : "up to ",
                 (long long)chunk_rows, with, groups, st->chunk_mapped ? GQP_CHUNK_MAPPED_TEXT : "",
                 (long long)t->nrows, copies);
        char *ft = plan_explain_text(fdag, 1);
        size_t len =
            strlen(head) + (partial_text ? strlen(partial_text) : 0) + (ft ? strlen(ft) : 0) + 64;
        char *note = malloc(len);
        if (note)
            snprintf(note, len, "%s%s%s%s", head, partial_text ? partial_text : "",
                     ft ? "-- final plan over the partial rows:\n" : "", ft ? ft : "");
        set_note(st, note);
        free(ft);
    }
    free(partial_text);
    plan_dag_free(fdag);
done:
    /* the partial rows are freed here: their device copies go too (malloc
     * may hand the same address with the same row count to the next
     * statement's partial table, which the column cache would take for
     * this one) */
    if (t) gqp_forget_table(db, t);
    parts_free(t);
    for (int c = 0; c < ncut; c++)
        cut_close(db, &cuts[c]);
    plan_arena_free(a);
    return rc;
}

/* 1 when err is a device out-of-memory message. */
static int is_device_oom(const char *msg) {
    return strncmp(msg, "Device Error", 12) == 0 && strstr(msg, "out of device memory");
}

int64_t gqp_chunk_rows_for_budget(double need, double budget, int64_t rows, int64_t min_rows) {
    if (budget <= 0 || rows <= 0 || need <= CHUNK_BUDGET_FIT * budget) return 0;
    double r = (double)rows * CHUNK_BUDGET_SHARE * budget / need;
    if (min_rows < 1) min_rows = 1;
    int64_t n = r < (double)min_rows ? min_rows : (int64_t)r;
    return n >= rows ? 0 : n;
}

/* The fewest rows of F a chunk holds: CHUNK_OOM_MIN_ROWS rows of the
 * largest table the chunks cut (F or a co-sliced G), in F's rows. A chunk
 * of supplier carries its suppliers' lineitem rows (TPC-H Q15: 65536 of
 * 100000 suppliers took 39M lineitem rows, past a 360 MB budget). */
static int64_t chunk_min_rows(const CatTable *F, const Cut *co, int nco) {
    double most = (double)F->nrows;
    for (int i = 0; i < nco; i++)
        if (co[i].src && (double)co[i].src->nrows > most) most = (double)co[i].src->nrows;
    if (most <= 0) return CHUNK_OOM_MIN_ROWS;
    double m = (double)CHUNK_OOM_MIN_ROWS * (double)F->nrows / most;
    if (m < CHUNK_MIN_ROWS_ABS) m = CHUNK_MIN_ROWS_ABS; /* a bound on the chunk count */
    return (int64_t)m;
}

/* TUNING: without a memory_limit, plans estimated to need less than this
 * are not checked against the device's free memory (a cudaMemGetInfo per
 * run; a GPU has gigabytes free unless another process holds them). */
#define CHUNK_CHECK_FREE_MIN ((double)(256 << 20))

/* The device bytes st's placed plan is estimated to need (every GPU
 * node's outputs: an upper bound of what lives at once) and the budget:
 * the memory_limit, else what this process holds on the device plus its
 * free memory (another process may hold the rest: the out-of-memory
 * probe); 0 when no node is on the GPU or no session is open. */
static double plan_device_need(gqp *db, const Dag *dag, double *budget) {
    double need = 0;
    *budget = 0;
    for (int i = 0; i < dag->nnodes; i++)
        if (dag->nodes[i].device == DEV_GPU)
            need += (double)plan_node_est_bytes(dag, &dag->nodes[i]);
    /* the run opens the device session: the first query of a process
     * (a one-shot `gqp run`, its EXPLAIN, a subquery run first) is judged
     * against the budget as later ones are (it ran whole, ran out of
     * memory and only then chunked: TPC-H Q13 and Q15 under --device gpu) */
    if (!db->dev && need > 0 && prim_gpu_available()) {
        char keep[sizeof db->errmsg];
        int kc = db->errcode;
        snprintf(keep, sizeof keep, "%s", db->errmsg);
        if (!gqp_device_session(db)) { /* the run reports it */
            db->errcode = kc;
            snprintf(db->errmsg, sizeof db->errmsg, "%s", keep);
        }
    }
    if (!db->dev) return 0;
    if (!exec_device_limit(db->dev) && need < CHUNK_CHECK_FREE_MIN) return 0;
    *budget = (double)exec_device_capacity(db->dev);
    return *budget > 0 ? need : 0;
}

/* What every chunk of a chunked run over F needs whole, from st's placed
 * plan (nodes in topological order): the device bytes of the GPU source
 * nodes that do not depend on F's rows (columns of other tables, a column
 * of F read by a second relation as in a self-join or an EXISTS over F),
 * cached while the chunks run, plus twice the bytes of an input of a GPU
 * join that does not depend on F's rows while its other side does (the
 * join's table, built again for each chunk); what is computed from them
 * comes and goes, and is not counted (counting it sent TPC-H Q5 to the
 * CPU at 0.9 s where its chunks took 0.14 s). *us: the estimated GPU time
 * of every node that does not depend on F (paid again by each chunk);
 * *fbytes: the bytes of F's columns (read once per run, a chunk at a
 * time). The tables co[0..nco) co-sliced with F count as F does. With
 * mapped, a source whose consumers stream it (value_streams: each chunk
 * reads it mapped) is not counted but added to *mbytes. Returns the
 * bytes; -1 when out of memory. */
static int value_streams(const Dag *dag, int v);
static double per_chunk_whole(const Dag *dag, const CatTable *F, const Cut *co, int nco,
                              const CostModel *m, double *us, double *fbytes, int mapped,
                              double *mbytes) {
    double other = 0;
    *us = 0;
    *fbytes = 0;
    *mbytes = 0;
    uint8_t *dep = calloc((size_t)(dag->nnodes ? dag->nnodes : 1), 1);
    if (!dep) return -1;
    for (int i = 0; i < dag->nnodes; i++) {
        const DagNode *n = &dag->nodes[i];
        if (n->kind == DN_SOURCE) {
            /* a table co-sliced with F: every read of it is cut too (F's
             * own table co-sliced: a self-join or an EXISTS over F on the
             * sorted key) */
            int co_t = 0, again = 0;
            for (int c = 0; c < nco; c++)
                co_t |= co[c].t == n->table;
            for (int k = 0; k < i && n->table == F && !co_t; k++) {
                const DagNode *o = &dag->nodes[k];
                again |= o->kind == DN_SOURCE && o->table == F && o->column == n->column;
            }
            dep[i] = co_t || (n->table == F && !again);
        } else {
            for (int k = 0; k < n->ninputs; k++)
                dep[i] |= dep[dag->values[n->inputs[k]].producer];
            if (n->len_from >= 0) dep[i] |= dep[dag->values[n->len_from].producer];
        }
        if (n->device != DEV_GPU) continue;
        double b = (double)plan_node_est_bytes(dag, n);
        if (!dep[i]) {
            if (n->kind == DN_SOURCE && mapped && n->noutputs && value_streams(dag, n->outputs[0]))
                *mbytes += b;
            else if (n->kind == DN_SOURCE)
                other += b;
            if (m) *us += cost_node_us(m, dag, i, DEV_GPU);
        } else if (n->kind == DN_SOURCE) {
            *fbytes += b;
        }
        if (n->kind == DN_JOIN && dep[i])
            for (int k = 0; k < n->ninputs; k++)
                if (!dep[dag->values[n->inputs[k]].producer])
                    other += 2 * cost_value_bytes(dag, n->inputs[k]);
    }
    free(dep);
    return other;
}

/* TUNING: what one chunk costs beyond its nodes: planning the partial
 * block, its launches and synchronisations, the partial rows (about
 * 0.3-1.1 ms per chunk above the PCIe floor for TPC-H Q6, Q14 and Q19 at
 * SF 10 under a quarter budget, H200, tenth session). */
#define CHUNK_FIXED_US 800.0
/* TUNING: chunking needs at least this share of the budget left beside
 * what every chunk needs whole (per_chunk_whole): with 0.75, TPC-H Q3 and
 * Q12 at SF 10 under a quarter budget ran 39 and 37 chunks that copied
 * the other tables' columns again for every chunk or fell back to the CPU
 * (1.76 s and 0.88 s against 0.35 s and 0.19 s on the CPU; H200). */
#define CHUNK_WHOLE_MAX 0.5

/* TUNING: host time to make a key-ordered copy (cluster.c), per thread:
 * per row of the key's sort, and per value of a column ordered into it
 * (a random gather). Measured on the project's 2-core machine (twentieth
 * session, TPC-H SF 1 lineitem by l_partkey, 6M rows): the sort 125 ms,
 * 43-60 ms per 4- or 8-byte column. */
#define CLUSTER_SORT_NS 42.0
#define CLUSTER_GATHER_NS 16.0

/* The estimated host time (us) of the key-ordered copies a chunked run
 * would make (F's when fkey >= 0, each co[i] with clu): none for a copy
 * db holds; a copy not yet made is charged its build time divided by the
 * chunked plans that have asked for it so far (gqp_cluster_wanted), so a
 * query run again and again pays it once. */
static double copies_us(gqp *db, const Dag *dag, const CatTable *F, int fkey, const Cut *co,
                        int nco) {
    double us = 0;
    for (int i = -1; i < nco; i++) {
        const CatTable *t = i < 0 ? F : co[i].src;
        int key = i < 0 ? fkey : co[i].gcol, made = 0, dup = 0;
        if (key < 0 || (i >= 0 && !co[i].clu)) continue;
        for (int k = -1; k < i && !dup; k++) /* a copy two cuts share */
            dup = k < 0 ? fkey >= 0 && F == t && fkey == key
                        : co[k].clu && co[k].src == t && co[k].gcol == key;
        if (dup) continue;
        int64_t wanted = gqp_cluster_wanted(db, t, key, &made);
        if (made) continue;
        double values = (double)t->nrows; /* the key column */
        for (int k = 0; k < dag->nnodes; k++)
            if (dag->nodes[k].kind == DN_SOURCE && dag->nodes[k].table == t &&
                dag->nodes[k].column != key)
                values += (double)t->nrows;
        double ns = (double)t->nrows * CLUSTER_SORT_NS + values * CLUSTER_GATHER_NS;
        us += ns / 1e3 / (db->nthreads > 0 ? db->nthreads : 1) / (double)wanted;
    }
    return us;
}

/* 1 when every consumer of value v (a GPU source's column) reads it in
 * one sequential pass, as a kernel reading mapped host memory across PCIe
 * should: maps, scans, keymaps, dense aggregates, joins, segment passes,
 * concatenation, a gather's index, and a gather's data at a select's
 * ascending row ids; not a sort (several passes) or a gather at ids in
 * another order (a random read per row). */
static int value_streams(const Dag *dag, int v) {
    for (int k = 0; k < dag->nnodes; k++) {
        const DagNode *c = &dag->nodes[k];
        int reads = c->len_from == v;
        for (int j = 0; j < c->ninputs; j++)
            reads |= c->inputs[j] == v;
        if (!reads) continue;
        switch (c->kind) {
        case DN_MAP:
        case DN_SCAN:
        case DN_SCATTER:
        case DN_KEYMAP:
        case DN_JOIN:
        case DN_SEGMENTS:
        case DN_SEGREDUCE:
        case DN_CONCAT:
        case DN_SLICE:
            break;
        case DN_DENSEAGG: /* not a key read at its dimension's row ids */
            for (int j = 0; c->dagg && j < c->dagg->nkeys; j++)
                if (c->dagg->key_dim[j] >= 0 && c->dagg->key_col[j] >= 0 &&
                    c->dagg->key_col[j] < c->ninputs && c->inputs[c->dagg->key_col[j]] == v)
                    return 0;
            break;
        case DN_GATHER: {
            if (c->inputs[0] != v) break;
            /* a select's row ids (a scan's offsets: ascending), not a
             * scatter of match marks */
            int p = dag->values[c->inputs[1]].producer;
            if (p < 0 || dag->nodes[p].kind != DN_SCATTER || dag->nodes[p].count_from < 0) return 0;
            break;
        }
        default:
            return 0;
        }
    }
    return 1;
}

double gqp_mark_mapped(gqp *db, Dag *dag, int all, int clear) {
    double bytes = 0;
    for (int i = 0; dag && i < dag->nnodes; i++) {
        DagNode *n = &dag->nodes[i];
        n->mapped = 0;
        if (clear || n->kind != DN_SOURCE || n->device != DEV_GPU || !n->table || n->noutputs < 1 ||
            n->table->nrows <= 0)
            continue;
        const CatColumn *c = &n->table->cols[n->column];
        if (!all && !value_streams(dag, n->outputs[0])) continue;
        /* resident in the cache: read there */
        if (c->data && exec_device_resident(db->dev, c->data, n->table->nrows)) continue;
        n->mapped = cat_find_table(db->cat, n->table->name) == n->table ? 1 : 2;
        bytes += (double)plan_node_est_bytes(dag, n);
    }
    return bytes;
}

/* TUNING: a kernel reading mapped host memory across PCIe, against the
 * pinned copy rate (cost model h2d_pinned). Measured on the H200 (twenty-
 * first session, SSB SF 20 under a quarter memory_limit): Q1.1's dense
 * aggregate read its 1920 MB mapped in 31.8 ms, 60 GB/s against 55 GB/s
 * pinned copies; selective plans read less (only the sectors holding
 * passing rows: Q3.3 1925 MB of columns in 10.6 ms), which this ignores. */
#define MAPPED_SLOWDOWN 1.0
/* TUNING: the bytes a kernel's read of mapped host memory brings across
 * PCIe for one row it needs: a whole 128-byte request. With it the model
 * below gives SSB SF 20 Q1.1 1660 MB (30 ms at 55 GB/s; measured 31.8 ms,
 * H200, twenty-first session). */
#define MAPPED_REQUEST_BYTES 128.0

/* The estimated bytes that reading source node i mapped brings across
 * PCIe: all of them, unless every consumer is a dense aggregate, which
 * loads a column only for the rows still alive (primitives/gpu/device.cu:
 * range filters in order, then probes, keys, aggregates): its first
 * filter (or first probe) column whole, the r-th of R range filters at
 * the share p^(r/R) of rows alive (p: the rows passing every range
 * filter, da_pass, each filter taken as equally selective), the rest at
 * p; a request is fetched when one of its rows is alive. */
static double mapped_touched(const Dag *dag, int i) {
    const DagNode *n = &dag->nodes[i];
    double bytes = (double)plan_node_est_bytes(dag, n), frac = 0;
    int v = n->outputs[0];
    double rows = (double)n->table->nrows, w = (double)prim_type_width(dag->values[v].type);
    if (rows <= 0 || w <= 0) return bytes;
    for (int k = 0; k < dag->nnodes; k++) {
        const DagNode *c = &dag->nodes[k];
        int j = -1;
        for (int q = 0; q < c->ninputs && j < 0; q++)
            if (c->inputs[q] == v) j = q;
        if (j < 0 && c->len_from != v) continue;
        if (c->kind != DN_DENSEAGG || !c->dagg || j < 0) return bytes;
        const PrimDenseAgg *s = c->dagg;
        double p = c->da_pass > 0 && (double)c->da_pass < rows ? (double)c->da_pass / rows : 1;
        double alive = p;
        if (s->nranges > 0 ? s->range_col[0] == j : s->ndims > 0 && s->dim_fk[0] == j) alive = 1;
        for (int r = 1; r < s->nranges; r++)
            if (s->range_col[r] == j) alive = pow(p, (double)r / s->nranges);
        double f = 1 - pow(1 - alive, MAPPED_REQUEST_BYTES / w);
        if (f > frac) frac = f;
    }
    return bytes * frac;
}

/* How much the sources of dag marked mapped change the placed plan's
 * estimate: their reads across PCIe (mapped_touched) instead of the
 * copies placement charged them (est_cost_xfer). */
static double mapped_delta_us(const CostModel *m, const Dag *dag) {
    double us = 0;
    for (int i = 0; m && i < dag->nnodes; i++)
        if (dag->nodes[i].mapped)
            us += MAPPED_SLOWDOWN * cost_link_us(&m->h2d_pinned, mapped_touched(dag, i)) -
                  dag->nodes[i].est_cost_xfer * 1e3;
    return us;
}

/* TUNING: device scratch of a GPU hash join (primitives/gpu/sort_join.cu):
 * per probe row its start, count and offset (8 bytes each); per build
 * row its flag, row ids and keys sorted twice, the sort's temporary
 * space and two hash slots. */
#define JOIN_PROBE_SCRATCH 24.0
#define JOIN_BUILD_SCRATCH 100.0

/* The most device scratch one GPU join or reduction of dag needs beside
 * the plan's values (a node runs at a time: the most, not the sum). Not
 * in the values' estimates; a plan that reads its inputs mapped holds
 * little else, so that this scratch decides whether it fits (TPC-H Q11,
 * Q17, Q18: a probe of every lineitem or partsupp row ran out of memory
 * and fell back to the CPU at 10-20x the chunks' time; a reduction's CUB
 * space is sized by the device's multiprocessors, 155 KB on the H200). */
static double scratch_at(const Dag *dag, int i) {
    const DagNode *n = &dag->nodes[i];
    if (n->device != DEV_GPU || n->ninputs < 1) return 0;
    if (n->kind == DN_JOIN && n->ninputs >= 2) {
        double a = (double)cost_value_rows(dag, n->inputs[0]),
               b = (double)cost_value_rows(dag, n->inputs[1]);
        double np = a > b ? a : b, nb = a > b ? b : a;
        return JOIN_PROBE_SCRATCH * np + JOIN_BUILD_SCRATCH * nb;
    }
    if (n->kind == DN_SEGREDUCE)
        return (double)prim_gpu_segreduce_scratch(cost_value_rows(dag, n->inputs[0]));
    return 0;
}

static double node_scratch(const Dag *dag) {
    double most = 0;
    for (int i = 0; i < dag->nnodes; i++) {
        double s = scratch_at(dag, i);
        if (s > most) most = s;
    }
    return most;
}

/* The values node n reads (inputs, its length, its count) into rd
 * (at most DAG_MAX_IO + 2); returns how many. */
static int node_reads(const Dag *dag, const DagNode *n, int *rd) {
    int k = 0;
    for (int j = 0; j < n->ninputs && k < DAG_MAX_IO; j++)
        rd[k++] = n->inputs[j];
    if (n->len_from >= 0) rd[k++] = n->len_from;
    if (n->count_from >= 0 && dag->nodes[n->count_from].noutputs > 0)
        rd[k++] = dag->nodes[n->count_from].outputs[0];
    return k;
}

/* 1 when the device holds no copy of value v made by its producer p: a
 * CPU node's (gpu_only), or a source read mapped. */
static int value_off_device(const Dag *dag, int v, int gpu_only) {
    int p = dag->values[v].producer;
    if (p < 0) return 1;
    const DagNode *pn = &dag->nodes[p];
    return (gpu_only && pn->device != DEV_GPU) || (pn->kind == DN_SOURCE && pn->mapped);
}

double gqp_plan_peak_bytes(const Dag *dag, int gpu_only) {
    int nv = dag->nvalues;
    int *last = malloc(sizeof(int) * (size_t)(nv ? nv : 1));
    uint8_t *on = calloc((size_t)(nv ? nv : 1), 1);
    if (!last || !on) {
        free(last);
        free(on);
        return -1;
    }
    /* where each value is last read (results: the end), and whether the
     * device holds a copy: made by a GPU node (not read mapped) or copied
     * for one */
    int rd[DAG_MAX_IO + 2];
    for (int v = 0; v < nv; v++) {
        last[v] = -1;
        on[v] = !value_off_device(dag, v, gpu_only);
    }
    for (int i = 0; i < dag->nnodes; i++) {
        const DagNode *n = &dag->nodes[i];
        int k = node_reads(dag, n, rd);
        for (int j = 0; j < k; j++) {
            int v = rd[j];
            last[v] = i;
            if (gpu_only && n->device == DEV_GPU && !value_off_device(dag, v, 0)) on[v] = 1;
        }
    }
    for (int r = 0; r < dag->nresults; r++)
        last[dag->results[r]] = dag->nnodes;
    double live = 0, peak = 0;
    for (int i = 0; i < dag->nnodes; i++) {
        const DagNode *n = &dag->nodes[i];
        for (int k = 0; k < n->noutputs; k++)
            if (on[n->outputs[k]]) live += cost_value_bytes(dag, n->outputs[k]);
        double s = (!gpu_only || n->device == DEV_GPU) ? scratch_at(dag, i) : 0;
        if (live + s > peak) peak = live + s;
        /* what dies here: the values it read last, its outputs nobody reads */
        int k = node_reads(dag, n, rd);
        for (int j = 0; j < k; j++)
            if (on[rd[j]] && last[rd[j]] == i) {
                live -= cost_value_bytes(dag, rd[j]);
                on[rd[j]] = 0; /* read twice by this node: freed once */
            }
        for (int j = 0; j < n->noutputs; j++)
            if (on[n->outputs[j]] && last[n->outputs[j]] < 0) {
                live -= cost_value_bytes(dag, n->outputs[j]);
                on[n->outputs[j]] = 0;
            }
    }
    free(last);
    free(on);
    return peak;
}

/* GQP_BUDGET_PEAK=1: the budget judges a plan by gqp_plan_peak_bytes (its
 * device values live at once, with the running node's scratch) instead
 * of the sum of every GPU output plus the largest scratch (an A/B switch;
 * the sum over-counts TPC-H SF 10 Q13's 2.1 GB about five times, which
 * sizes its chunks at 13,257 customers where 65,536 ran; not yet run on
 * a GPU). */
static int budget_by_peak(void) {
    const char *e = getenv("GQP_BUDGET_PEAK");
    return e && strcmp(e, "1") == 0;
}

GqpBudget gqp_budget_plan(gqp *db, gqp_stmt *st, int *f, int64_t *rows, char *why, size_t cap) {
    const char *w = NULL;
    double budget = 0, need = plan_device_need(db, st->dag, &budget);
    *f = -1;
    *rows = 0;
    if (why && cap) why[0] = 0;
    st->budget_mapped[0] = 0;
    st->chunk_mapped = 0;
    gqp_mark_mapped(db, st->dag, 0, 1);
    /* the peak of the plan as it stands (no source marked mapped) */
    double pk = budget_by_peak() && need > 0 ? gqp_plan_peak_bytes(st->dag, 1) : -1;
    const int peak = pk > 0;
    if (peak) need = pk;
    if (need <= 0) return GQP_BUDGET_WHOLE;
    int cpu_ok = db->device == GQP_DEVICE_AUTO;
    const double mb = 1048576.0;
    if (need <= CHUNK_BUDGET_FIT * budget) return GQP_BUDGET_WHOLE;
    if (db->mapped >= 1) {
        /* whole, reading the columns its GPU nodes only stream in place */
        double mbytes = gqp_mark_mapped(db, st->dag, db->mapped == 2, 0);
        const CostModel *m = gqp_cost(db);
        double est = st->est_us + mapped_delta_us(m, st->dag);
        double lp = peak ? gqp_plan_peak_bytes(st->dag, 1) : -1;
        double left = lp > 0 ? lp : need - mbytes + node_scratch(st->dag);
        if (mbytes > 0 && left <= CHUNK_BUDGET_FIT * budget &&
            (!cpu_ok || st->est_cpu_us <= 0 || est <= st->est_cpu_us)) {
            int ncols = 0;
            for (int i = 0; i < st->dag->nnodes; i++)
                ncols += st->dag->nodes[i].mapped != 0;
            snprintf(st->budget_mapped, sizeof st->budget_mapped,
                     "%d column%s (%.0f MB) read mapped from host memory: the GPU nodes' "
                     "estimated %.0f MB exceed the device budget of %.0f MB, %.0f MB without "
                     "them (est %.1f ms)",
                     ncols, ncols == 1 ? "" : "s", mbytes / mb, need / mb, budget / mb, left / mb,
                     est / 1e3);
            return GQP_BUDGET_WHOLE;
        }
        gqp_mark_mapped(db, st->dag, 0, 1);
    }
    *f = gqp_chunk_table(st->bound, 0, db->chunk_cluster >= 1, &w);
    if (*f < 0) {
        if (!cpu_ok) return GQP_BUDGET_WHOLE;
        snprintf(why, cap,
                 "the GPU nodes' estimated %.0f MB exceed the device budget of %.0f MB, and "
                 "the plan cannot run in chunks (%s)",
                 need / mb, budget / mb, w ? w : "?");
        return GQP_BUDGET_CPU;
    }
    const CatTable *F = gqp_chunk_rel(st->bound, *f)->table;
    const CostModel *m = gqp_cost(db);
    Cut co[CHUNK_MAX_CO];
    int fkey = -1, nco = co_best(st->bound, *f, db->chunk_cluster >= 1, co, &fkey);
    double whole_us = 0, fbytes = 0, mbytes = 0,
           other = per_chunk_whole(st->dag, F, co, nco, m, &whole_us, &fbytes, 0, &mbytes);
    if (other < 0) return GQP_BUDGET_WHOLE;
    int cmapped = 0;
    if (other >= CHUNK_WHOLE_MAX * budget && db->mapped >= 1) {
        /* every chunk reading the columns it needs whole mapped (each
         * chunk reads them again across PCIe) instead of holding them */
        double w2 = 0, f2 = 0, o2 = per_chunk_whole(st->dag, F, co, nco, m, &w2, &f2, 1, &mbytes);
        if (o2 >= 0 && mbytes > 0 && o2 < CHUNK_WHOLE_MAX * budget) {
            other = o2;
            cmapped = 1;
        }
    }
    /* the chunks share what the whole parts leave of the budget, with the
     * scratch of their largest join or reduction, which shrinks with them
     * (TPC-H Q22's anti-join: 12 MB a chunk beside a 21 MB budget's values) */
    int64_t minr = chunk_min_rows(F, co, nco);
    double scr = peak ? 0 : node_scratch(st->dag), per = need + scr - other;
    if (per < 0.05 * need) per = 0.05 * need; /* a peak that the whole parts hold */
    if (other < CHUNK_WHOLE_MAX * budget)
        *rows = gqp_chunk_rows_for_budget(per, budget - other, F->nrows, minr);
    else if (!cpu_ok)
        *rows = gqp_chunk_rows_for_budget(need + scr, budget, F->nrows, minr);
    /* the plan's peak exceeds the budget but its chunks' share looked as
     * if it fit whole: halves (the peak mixed with the whole parts' sum) */
    if (peak && *rows <= 0 && F->nrows > 1) *rows = F->nrows / 2 > minr ? F->nrows / 2 : minr;
    /* st->chunk_mapped only with the chunks it is for */
    if (!cpu_ok) {
        st->chunk_mapped = *rows > 0 && cmapped;
        return *rows > 0 ? GQP_BUDGET_CHUNKS : GQP_BUDGET_WHOLE;
    }
    /* auto: the CPU when the whole parts leave too little, or when its
     * plan is estimated faster than the chunks */
    if (other >= CHUNK_WHOLE_MAX * budget) {
        snprintf(why, cap,
                 "the GPU nodes' estimated %.0f MB exceed the device budget of %.0f MB, and "
                 "every chunk of %s would also need %.0f MB whole (other columns, join tables)",
                 need / mb, budget / mb, F->name, other / mb);
        return GQP_BUDGET_CPU;
    }
    if (*rows <= 0) return GQP_BUDGET_WHOLE;
    int64_t nchunks = (F->nrows + *rows - 1) / *rows;
    double chunked = st->est_us, cpu = st->est_cpu_us;
    double cp = copies_us(db, st->dag, F, fkey, co, nco);
    if (m)
        chunked += cost_link_us(&m->h2d_pinned, fbytes) +
                   (double)nchunks * (m->gpu_query_us + CHUNK_FIXED_US + whole_us) + cp;
    if (m && cmapped) /* the mapped columns, read by every chunk */
        chunked += (double)nchunks * MAPPED_SLOWDOWN * cost_link_us(&m->h2d_pinned, mbytes);
    if (cpu > 0 && cpu < chunked) {
        char cps[96] = "";
        if (cp > 0)
            snprintf(cps, sizeof cps, ", %.1f ms of it making key-ordered copies", cp / 1e3);
        snprintf(why, cap,
                 "the GPU nodes' estimated %.0f MB exceed the device budget of %.0f MB, and "
                 "the CPU plan (est %.1f ms) beats %lld chunks of %s (est %.1f ms%s)",
                 need / mb, budget / mb, cpu / 1e3, (long long)nchunks, F->name, chunked / 1e3,
                 cps);
        return GQP_BUDGET_CPU;
    }
    st->chunk_mapped = cmapped;
    return GQP_BUDGET_CHUNKS;
}

void gqp_place_all_cpu(gqp_stmt *st, const char *why) {
    char *r = plan_strdup(st->plan_arena, why);
    for (int i = 0; i < st->dag->nnodes; i++) {
        DagNode *n = &st->dag->nodes[i];
        n->device = DEV_CPU;
        n->reason = r;
    }
    snprintf(st->budget_cpu, sizeof st->budget_cpu, "%s", why);
    /* placed again at the next run: the budget or the data may change */
    st->placed_device = -1;
}

GqpBudget gqp_budget_apply(gqp *db, gqp_stmt *st, int *f, int64_t *rows) {
    char why[sizeof st->budget_cpu];
    GqpBudget k = gqp_budget_plan(db, st, f, rows, why, sizeof why);
    if (k == GQP_BUDGET_CPU) gqp_place_all_cpu(st, why);
    return k;
}

/* gqp_run_chunked, except that a chunk whose partial result holds SQLite's
 * REALs from an integer overflow (which a parts table cannot hold) makes
 * the statement run whole instead: *handled = 0, GQP_OK. */
static int chunked_or_whole(gqp *db, gqp_stmt *st, int f, int64_t rows, const ExecOptions *opt,
                            int copies, int *handled) {
    *handled = 1;
    st->chunk_reals = GQP_OK;
    int rc = gqp_run_chunked(db, st, f, rows, opt, copies);
    if (rc != GQP_OK && st->chunk_reals != GQP_OK) {
        *handled = 0;
        return GQP_OK;
    }
    return rc;
}

int gqp_run_select_chunked(gqp *db, gqp_stmt *st, const ExecOptions *opt, int *handled) {
    *handled = 0;
    const char *why = NULL;
    if (db->chunk_rows > 0) {
        int f = gqp_chunk_table(st->bound, db->chunk_rows, db->chunk_cluster == 2, &why);
        if (f >= 0)
            return chunked_or_whole(db, st, f, db->chunk_rows, opt, db->chunk_cluster == 2,
                                    handled);
        return GQP_OK;
    }
    /* the plan's GPU part estimated larger than the device budget */
    int f = -1;
    int64_t rows = 0;
    if (gqp_budget_apply(db, st, &f, &rows) != GQP_BUDGET_CHUNKS) return GQP_OK;
    return chunked_or_whole(db, st, f, rows, opt, db->chunk_cluster >= 1, handled);
}

int gqp_retry_chunked(gqp *db, gqp_stmt *st, const ExecOptions *opt) {
    if (db->device != GQP_DEVICE_GPU || !is_device_oom(db->errmsg)) return GQP_ERROR;
    const char *why = NULL;
    int f = gqp_chunk_table(st->bound, 0, db->chunk_cluster >= 1, &why);
    if (f < 0) return GQP_ERROR;
    char first[sizeof db->errmsg];
    snprintf(first, sizeof first, "%s", db->errmsg);
    const CatTable *F = gqp_chunk_rel(st->bound, f)->table;
    Cut co[CHUNK_MAX_CO];
    int fkey = -1, nco = co_best(st->bound, f, db->chunk_cluster >= 1, co, &fkey);
    int64_t minr = chunk_min_rows(F, co, nco);
    int64_t rows = (F->nrows + 3) / 4;
    for (; rows >= minr && rows > 0; rows /= 2) {
        int rc = gqp_run_chunked(db, st, f, rows, opt, db->chunk_cluster >= 1);
        if (rc == GQP_OK || !is_device_oom(db->errmsg)) return rc;
    }
    return gqp_set_error(db, GQP_DEVICE, "%s (also in chunks of %lld rows of %s)", first,
                         (long long)(rows * 2), F->name);
}
