/*
 * join.c -- lowering of an inner join of the current state with one more
 * FROM relation: the relation is scanned and filtered on its own, then a
 * join node produces (left row, right row) pairs on the first equi-join
 * predicate that connects them (a cross node where none does), every
 * slot's row ids are gathered through the pairs, and the predicates that
 * have become evaluable run as one filter. A LEFT JOIN (op_left_join)
 * keeps the unmatched left rows with right row id -1 (NULL columns); a
 * FULL JOIN also the unmatched right rows with left row ids -1, a RIGHT
 * JOIN after other joins only those (and the matched pairs). A SEMI
 * (ANTI) JOIN (op_semi_join) keeps the left rows that some pair reaches
 * (that none does), through the same match-marking scatter.
 */
#include <string.h>

#include "operators/operators.h"
#include "planner/bexpr.h"

/* The vector type both join keys are converted to. */
static PrimType key_type(PrimType a, PrimType b) {
    if (a == b) return a;
    if (a == PRIM_F32 || a == PRIM_F64 || b == PRIM_F32 || b == PRIM_F64) return PRIM_F64;
    return PRIM_I64;
}

/* The column statistics of e when it is a column of a relation (through
 * CASTs), else NULL. */
static const CatStats *col_stats(const BSelect *b, const BExpr *e) {
    if (e && e->kind == BE_CAST) e = e->a;
    if (!e || e->kind != BE_COL || e->slot < 0 || e->slot >= b->nrels) return NULL;
    const CatTable *t = b->rels[e->slot].table;
    return e->col >= 0 && e->col < t->ncols ? &t->cols[e->col].stats : NULL;
}

/* Adds the node pairing st's rows with rs's rows of rel: a hash equi-join
 * on lk = rk (labelled label) when lk is set, else a cross product; sets
 * *est to its estimated pairs (nd: the distinct keys on the right, 0 for
 * rk's column statistics). Returns the node or -1 with an error. */
static int pair_node(Lower *L, LowState *st, LowState *rs, const BExpr *lk, const BExpr *rk,
                     int64_t nd, const char *label, int64_t *est) {
    PrimType i64[2] = {PRIM_I64, PRIM_I64};
    int node;
    *est = st->est_rows * rs->est_rows;
    if (lk) {
        int lv = op_expr(L, st, lk, op_prim_type(lk->type), 0);
        int rv = lv >= 0 ? op_expr(L, rs, rk, op_prim_type(rk->type), 0) : -1;
        if (rv < 0) return -1;
        PrimType kt = key_type(L->dag->values[lv].type, L->dag->values[rv].type);
        if ((lv = op_convert(L, lv, kt)) < 0 || (rv = op_convert(L, rv, kt)) < 0) return -1;
        if (nd <= 0) {
            const CatStats *ks = col_stats(L->b, rk);
            nd = ks && ks->distinct > 0 ? ks->distinct : 1;
        }
        *est = *est / nd;
        int in[2] = {lv, rv};
        node = plan_dag_add(L->dag, DN_JOIN, in, 2, 2, i64);
        if (node < 0) return op_fail(L, "out of memory");
        L->dag->nodes[node].label = plan_strdup(L->arena, label);
    } else {
        int in[2] = {st->len_value, rs->len_value};
        node = plan_dag_add(L->dag, DN_CROSS, in, 2, 2, i64);
        if (node < 0) return op_fail(L, "out of memory");
    }
    L->dag->nodes[node].est_rows = *est;
    return node;
}

/* 1 when e is left = right with one side over relations of in_mask only
 * and the other over relation r only: *lk gets the in_mask side, *rk r's. */
static int eq_sides(const BExpr *e, uint64_t in_mask, int r, const BExpr **lk, const BExpr **rk) {
    if (e->kind != BE_BINARY || e->op != OP_EQ) return 0;
    uint64_t ma = bx_rel_mask(e->a), mb = bx_rel_mask(e->b), rbit = (uint64_t)1 << r;
    if (ma && !(ma & ~in_mask) && mb == rbit) return *lk = e->a, *rk = e->b, 1;
    if (mb && !(mb & ~in_mask) && ma == rbit) return *lk = e->b, *rk = e->a, 1;
    return 0;
}

/* Most equi-join predicates one join combines into its key. */
#define JOIN_MAX_KEYS 4

/* Combine the equi-join keys lks[i] = rks[i] (i < n) into one integer key
 * on each side, (k0 - lo0) * span1 * ... + (k1 - lo1) * span2 * ... + ...,
 * where lo_i .. lo_i + span_i - 1 covers both sides' column statistics:
 * a one-to-one map of the key tuples, so the join on it pairs exactly the
 * rows whose keys are all equal (a NULL part makes the key NULL). Applies
 * when every key is an integer or DATE column with statistics on both
 * sides and the spans' product stays below 2^62; sets *lk, *rk (else
 * NULL) and *nd (distinct composite keys estimated). 0, or -1 when out
 * of memory. */
static int composite_key(Lower *L, const BExpr *const *lks, const BExpr *const *rks, int n,
                         BExpr **lk, BExpr **rk, int64_t *nd) {
    int64_t lo[JOIN_MAX_KEYS], span[JOIN_MAX_KEYS];
    double prod = 1, dist = 1;
    *lk = *rk = NULL;
    for (int i = 0; i < n; i++) {
        const CatStats *a = col_stats(L->b, lks[i]), *c = col_stats(L->b, rks[i]);
        CatType ta = lks[i]->type, tc = rks[i]->type;
        int okt = (ta == CAT_INT32 || ta == CAT_INT64 || ta == CAT_DATE) &&
                  (tc == CAT_INT32 || tc == CAT_INT64 || tc == CAT_DATE);
        if (!okt || !a || !c || !a->has_minmax || !c->has_minmax) return 0;
        double mn = a->min < c->min ? a->min : c->min, mx = a->max > c->max ? a->max : c->max;
        if (mn < -4e18 || mx > 4e18) return 0;
        lo[i] = (int64_t)mn;
        span[i] = (int64_t)mx - lo[i] + 1;
        prod *= (double)span[i];
        dist *= (double)(c->distinct > 0 ? c->distinct : 1);
        if (prod >= 4.0e18) return 0;
    }
    BExpr *acc[2] = {NULL, NULL};
    for (int side = 0; side < 2; side++) {
        for (int i = 0; i < n; i++) {
            BExpr *k = (BExpr *)(side ? rks[i] : lks[i]);
            if (k->type != CAT_INT64) {
                BExpr *c = bx_new(L->arena, BE_CAST, CAT_INT64, -1);
                if (!c) return op_fail(L, "out of memory");
                c->a = k;
                k = c;
            }
            BExpr *lov = bx_int(L->arena, CAT_INT64, lo[i], -1);
            BExpr *part = lov ? bx_bin(L->arena, OP_SUB, CAT_INT64, k, lov, -1) : NULL;
            if (!part) return op_fail(L, "out of memory");
            if (acc[side]) {
                BExpr *sp = bx_int(L->arena, CAT_INT64, span[i], -1);
                BExpr *m = sp ? bx_bin(L->arena, OP_MUL, CAT_INT64, acc[side], sp, -1) : NULL;
                if (!m || !(part = bx_bin(L->arena, OP_ADD, CAT_INT64, m, part, -1)))
                    return op_fail(L, "out of memory");
            }
            acc[side] = part;
        }
    }
    *lk = acc[0];
    *rk = acc[1];
    *nd = dist < 4e18 ? (int64_t)dist : INT64_MAX;
    return 0;
}

/* The WHERE predicates that the relations joined into st (and r) make
 * evaluable, as one filter. Returns 0 or -1. */
static int where_now(Lower *L, LowState *st, int r, uint8_t *used) {
    const BSelect *b = L->b;
    uint64_t in_mask = (uint64_t)1 << r;
    for (int k = 0; k < st->nslots; k++)
        if (st->slots[k].joined) in_mask |= (uint64_t)1 << k;
    BExpr *acc = NULL;
    for (int i = 0; i < b->npreds; i++) {
        if (used[i] || (b->preds[i].rels & ~in_mask)) continue;
        used[i] = 1;
        if (!(acc = op_and(L, acc, b->preds[i].expr))) return op_fail(L, "out of memory");
    }
    return acc ? op_filter(L, st, acc, 0.25) : 0;
}

int op_join(Lower *L, LowState *st, int r, uint8_t *used) {
    const BSelect *b = L->b;
    const BRel *rel = &b->rels[r];
    uint64_t in_mask = 0;
    for (int k = 0; k < st->nslots; k++)
        if (st->slots[k].joined) in_mask |= (uint64_t)1 << k;

    /* the right side: its own state with only slot r */
    LowState rs = *st;
    rs.slots = plan_alloc(L->arena, sizeof(LowSlot) * (size_t)st->nslots);
    if (!rs.slots) return op_fail(L, "out of memory");
    if (op_scan(L, &rs, r) != 0) return -1;
    if (rel->nfilters) {
        BExpr *p = op_and_all(L, rel->filters, rel->nfilters);
        if (!p) return op_fail(L, "out of memory");
        double sel = (double)rel->est_rows / (double)(rel->table->nrows ? rel->table->nrows : 1);
        if (op_filter(L, &rs, p, sel) != 0) return -1;
    }

    /* the equi-join predicates that connect r with the state (lk on the
     * state's side): the first is the join key, or all of them combined
     * into one (composite_key); the others stay predicates and are
     * checked on the pairs */
    int pi = -1, neq = 0;
    const BExpr *lks[JOIN_MAX_KEYS], *rks[JOIN_MAX_KEYS];
    for (int i = 0; i < b->npreds && neq < JOIN_MAX_KEYS; i++) {
        const BPred *p = &b->preds[i];
        if (used[i]) continue;
        if (!p->is_equi) {
            /* an equality of an expression over several joined relations
             * and one over r (the COALESCE a RIGHT / FULL JOIN's USING
             * merged, say); not a late WHERE conjunct (its mask holds more) */
            if (p->rels != bx_rel_mask(p->expr) ||
                !eq_sides(p->expr, in_mask, r, &lks[neq], &rks[neq]))
                continue;
            neq++;
        } else if (p->rrel == r && (in_mask >> p->lrel & 1))
            lks[neq] = p->lkey, rks[neq++] = p->rkey;
        else if (p->lrel == r && (in_mask >> p->rrel & 1))
            lks[neq] = p->rkey, rks[neq++] = p->lkey;
        else
            continue;
        if (pi < 0) pi = i;
    }
    if (pi >= 0) used[pi] = 1;
    const BExpr *lk = neq ? lks[0] : NULL, *rk = neq ? rks[0] : NULL;
    int64_t nd = 0;
    BExpr *clk = NULL, *crk = NULL;
    if (neq > 1 && composite_key(L, lks, rks, neq, &clk, &crk, &nd) < 0) return -1;
    if (clk) {
        lk = clk, rk = crk;
        if (nd > rel->table->nrows) nd = rel->table->nrows > 0 ? rel->table->nrows : 1;
    }
    int64_t est;
    int node = pair_node(L, st, &rs, lk, rk, nd,
                         clk ? "hash equi-join (composite key)" : "hash equi-join", &est);
    if (node < 0) return -1;
    int li = plan_dag_out(L->dag, node, 0), ri = plan_dag_out(L->dag, node, 1);
    if (op_reselect(L, st, li, est) != 0) return -1;
    st->slots[r] = rs.slots[r];
    LowSlot *s = &st->slots[r];
    s->rowids = s->rowids < 0 ? ri : op_gather(L, s->rowids, ri, est);
    if (s->rowids < 0) return -1;
    for (int c = 0; c < s->ncols; c++)
        s->gathered[c] = -1;

    /* predicates now evaluable, as one filter */
    return where_now(L, st, r, used);
}

/* A fresh copy of slot s for another state: its own gathered cache (all
 * -1), so resetting it leaves s alone. Returns 0 or -1. */
static int copy_slot(Lower *L, LowSlot *dst, const LowSlot *s) {
    *dst = *s;
    dst->gathered = plan_alloc(L->arena, sizeof(int) * (size_t)(s->ncols + 1));
    if (!dst->gathered) return op_fail(L, "out of memory");
    for (int c = 0; c < s->ncols; c++)
        dst->gathered[c] = -1;
    return 0;
}

/* The I64 vectors in[0..n) one after another (one DN_CONCAT node); -1 on
 * failure. */
static int concat(Lower *L, const int *in, int n, int64_t est) {
    PrimType t = PRIM_I64;
    int node = plan_dag_add(L->dag, DN_CONCAT, in, n, 1, &t);
    if (node < 0) return op_fail(L, "out of memory");
    L->dag->nodes[node].est_rows = est;
    int v = plan_dag_out(L->dag, node, 0);
    L->dag->values[v].ltype = CAT_INT64;
    L->dag->values[v].est_rows = est;
    return v;
}

/* *ts becomes a state of one computed column, the I64 value v (n rows
 * estimated, named name); returns that column as a bound expression, or
 * NULL when out of memory. */
static BExpr *one_column_state(Lower *L, LowState *ts, int v, int64_t n, const char *name) {
    memset(ts, 0, sizeof *ts);
    ts->nslots = 1;
    ts->slots = plan_alloc(L->arena, sizeof(LowSlot));
    int *cols = plan_alloc(L->arena, sizeof(int));
    char **names = plan_alloc(L->arena, sizeof(char *));
    BExpr *col = bx_new(L->arena, BE_COL, CAT_INT64, -1);
    if (!ts->slots || !cols || !names || !col) return NULL;
    cols[0] = v;
    names[0] = plan_strdup(L->arena, name);
    if (op_computed_slot(L, &ts->slots[0], cols, names, 1) != 0) return NULL;
    col->slot = 0;
    col->col = 0;
    ts->len_value = v;
    ts->est_rows = n;
    return col;
}

/* The rows 0..n-1 of a side (n = the length of value len) that no pair
 * idx[] reaches (matched = 0), or that some pair reaches (matched = 1):
 * marks[idx[k]] = k over -1s (a match-marking scatter), then the rows
 * whose mark is still -1 (or is not) (*u, row numbers of that side) and
 * *pad (for matched = 0: as many -1s, the row ids of the other side).
 * Returns 0 or -1. */
static int rows_by_match(Lower *L, int idx, int len, int64_t n_est, int matched, int *u, int *pad,
                         int64_t *nu) {
    PrimType t64 = PRIM_I64;
    int mk = plan_dag_add(L->dag, DN_SCATTER, &idx, 1, 1, &t64);
    if (mk < 0) return op_fail(L, "out of memory");
    L->dag->nodes[mk].len_from = len;
    L->dag->nodes[mk].est_rows = n_est;
    L->dag->nodes[mk].label = plan_strdup(L->arena, "mark matched rows");
    int marks = plan_dag_out(L->dag, mk, 0);
    L->dag->values[marks].ltype = CAT_INT64;
    L->dag->values[marks].est_rows = n_est;
    LowState ts;
    BExpr *mcol = one_column_state(L, &ts, marks, n_est, "match");
    BExpr *zero = bx_int(L->arena, CAT_INT64, 0, -1);
    BExpr *unm =
        mcol && zero ? bx_bin(L->arena, matched ? OP_GE : OP_LT, CAT_BOOL, mcol, zero, -1) : NULL;
    if (!unm) return op_fail(L, "out of memory");
    if (op_filter(L, &ts, unm, matched ? 0.5 : 0.1) != 0) return -1;
    *u = ts.len_value;
    *nu = ts.est_rows;
    if (matched) return 0;
    *pad = op_gather(L, marks, *u, *nu); /* all -1 */
    return *pad < 0 ? -1 : 0;
}

/* The pairs of st's rows with the rows of relation r (b->rels[r].on: an
 * outer, semi or anti join): r's own state *rs (scanned, its filters
 * applied), a join node on the first ON conjunct left-expr = right-expr
 * (or a cross product), the other ON conjuncts as a filter on the pairs;
 * *li / *ri get the pairs' row numbers of st and of *rs, *est their
 * estimate. Returns 0 or -1. */
static int on_pairs(Lower *L, LowState *st, int r, LowState *rs, const char *label, int *lip,
                    int *rip, int64_t *estp) {
    const BSelect *b = L->b;
    const BRel *rel = &b->rels[r];
    uint64_t in_mask = 0;
    for (int k = 0; k < st->nslots; k++)
        if (st->slots[k].joined) in_mask |= (uint64_t)1 << k;

    /* the right side, with the ON conjuncts that read only it */
    *rs = *st;
    rs->slots = plan_alloc(L->arena, sizeof(LowSlot) * (size_t)st->nslots);
    if (!rs->slots) return op_fail(L, "out of memory");
    if (op_scan(L, rs, r) != 0) return -1;
    if (rel->nfilters) {
        BExpr *p = op_and_all(L, rel->filters, rel->nfilters);
        if (!p) return op_fail(L, "out of memory");
        double sel = (double)rel->est_rows / (double)(rel->table->nrows ? rel->table->nrows : 1);
        if (op_filter(L, rs, p, sel) != 0) return -1;
    }

    /* the first ON conjunct left-expr = right-expr is the join key; the
     * others are evaluated on the pairs */
    const BExpr *lk = NULL, *rk = NULL;
    BExpr *resid = NULL;
    for (int i = 0; i < rel->non; i++) {
        BExpr *e = rel->on[i];
        if (!lk && eq_sides(e, in_mask, r, &lk, &rk)) continue;
        if (!(resid = op_and(L, resid, e))) return op_fail(L, "out of memory");
    }
    int64_t est;
    int node = pair_node(L, st, rs, lk, rk, 0, label, &est);
    if (node < 0) return -1;
    int li = plan_dag_out(L->dag, node, 0), ri = plan_dag_out(L->dag, node, 1);

    /* the rest of ON on the pairs: a state of both sides through (li, ri) */
    if (resid) {
        LowState ps = *st;
        ps.slots = plan_alloc(L->arena, sizeof(LowSlot) * (size_t)st->nslots);
        if (!ps.slots) return op_fail(L, "out of memory");
        for (int k = 0; k < st->nslots; k++) {
            const LowSlot *s = k == r ? &rs->slots[r] : &st->slots[k];
            if (!s->joined) continue;
            if (copy_slot(L, &ps.slots[k], s) != 0) return -1;
            int idx = k == r ? ri : li;
            LowSlot *d = &ps.slots[k];
            d->rowids = d->rowids < 0 ? idx : op_gather(L, d->rowids, idx, est);
            if (d->rowids < 0) return -1;
        }
        ps.len_value = li;
        ps.est_rows = est;
        if (op_filter(L, &ps, resid, 0.5) != 0) return -1;
        est = ps.est_rows;
        if ((li = op_gather(L, li, ps.len_value, est)) < 0 ||
            (ri = op_gather(L, ri, ps.len_value, est)) < 0)
            return -1;
    }
    *lip = li, *rip = ri, *estp = est;
    return 0;
}

int op_semi_join(Lower *L, LowState *st, int r, uint8_t *used) {
    const BRel *rel = &L->b->rels[r];
    LowState rs;
    int li, ri, u, pad;
    int64_t est, nu;
    if (on_pairs(L, st, r, &rs, rel->semi == 1 ? "hash semi-join" : "hash anti-join", &li, &ri,
                 &est) != 0)
        return -1;
    (void)ri;
    if (rows_by_match(L, li, st->len_value, st->est_rows, rel->semi == 1, &u, &pad, &nu) != 0)
        return -1;
    if (op_reselect(L, st, u, nu) != 0) return -1;
    return where_now(L, st, r, used);
}

/* Row ids idx gathered through index vector lall, whose -1 entries (NULL
 * padding) give -1 when padded (a NULL-aware gather, then COALESCE(x, -1)
 * as a map). Value id or -1. */
static int pad_gather(Lower *L, int idx, int lall, int64_t n, int padded) {
    int g = op_gather(L, idx, lall, n);
    if (g < 0 || !padded) return g;
    L->dag->nodes[L->dag->values[g].producer].gather_nulls = 1;
    LowState ts;
    BExpr *col = one_column_state(L, &ts, g, n, "row id");
    BExpr *neg = bx_int(L->arena, CAT_INT64, -1, -1);
    BExpr *co = bx_new(L->arena, BE_COALESCE, CAT_INT64, -1);
    if (!col || !neg || !co) return op_fail(L, "out of memory");
    co->a = col;
    co->b = neg;
    return op_expr(L, &ts, co, PRIM_I64, 0);
}

int op_left_join(Lower *L, LowState *st, int r, uint8_t *used) {
    const BRel *rel = &L->b->rels[r];
    LowState rs;
    int li, ri;
    int64_t est;
    if (on_pairs(L, st, r, &rs, "hash equi-join (left outer)", &li, &ri, &est) != 0) return -1;

    /* the unmatched left rows u (LEFT, FULL) and right rows v (RIGHT, FULL) */
    int u = -1, pad = -1, v = -1, vpad = -1;
    int64_t nu = 0, nv = 0;
    int keep_left = !rel->right, keep_right = rel->right || rel->full;
    if (keep_left && rows_by_match(L, li, st->len_value, st->est_rows, 0, &u, &pad, &nu) != 0)
        return -1;
    if (keep_right) {
        if (rows_by_match(L, ri, rs.len_value, rs.est_rows, 0, &v, &vpad, &nv) != 0) return -1;
        /* row numbers of the right side's state -> its table's rows */
        if (rs.slots[r].rowids >= 0 && (v = op_gather(L, rs.slots[r].rowids, v, nv)) < 0) return -1;
    }

    /* the result: matched pairs, then the unmatched left rows, then the
     * unmatched right rows */
    int64_t tot = est + nu + nv;
    int rrow = rs.slots[r].rowids < 0 ? ri : op_gather(L, rs.slots[r].rowids, ri, est);
    int lin[3] = {li}, rin[3] = {rrow}, nparts = 1;
    if (keep_left) lin[nparts] = u, rin[nparts++] = pad;
    if (keep_right) lin[nparts] = vpad, rin[nparts++] = v;
    int lall = concat(L, lin, nparts, tot);
    int rall = lall >= 0 && rrow >= 0 ? concat(L, rin, nparts, tot) : -1;
    if (rall < 0) return -1;
    for (int k = 0; k < st->nslots; k++) {
        LowSlot *s = &st->slots[k];
        if (!s->joined) continue;
        s->rowids = s->rowids < 0 ? lall : pad_gather(L, s->rowids, lall, tot, keep_right);
        if (s->rowids < 0) return -1;
        if (keep_right) s->nullable = 1;
        for (int c = 0; c < s->ncols; c++)
            s->gathered[c] = -1;
    }
    if (copy_slot(L, &st->slots[r], &rs.slots[r]) != 0) return -1;
    st->slots[r].rowids = rall;
    st->slots[r].nullable = keep_left;
    st->est_rows = tot;
    st->len_value = lall;

    /* WHERE predicates now evaluable, after the NULL padding */
    return where_now(L, st, r, used);
}
