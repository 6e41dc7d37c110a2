/*
 * join.c -- lowering of an inner join of the current state with one more
 * FROM relation: the relation is scanned and filtered on its own, then a
 * join node produces (left row, right row) pairs on the first equi-join
 * predicate that connects them (a cross node where none does), every
 * slot's row ids are gathered through the pairs, and the predicates that
 * have become evaluable run as one filter.
 */
#include "operators/operators.h"

/* The vector type both join keys are converted to. */
static PrimType key_type(PrimType a, PrimType b) {
    if (a == b) return a;
    if (a == PRIM_F32 || a == PRIM_F64 || b == PRIM_F32 || b == PRIM_F64) return PRIM_F64;
    return PRIM_I64;
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

    int pi = -1;
    const BExpr *lk = NULL, *rk = NULL;
    for (int i = 0; i < b->npreds && pi < 0; i++) {
        const BPred *p = &b->preds[i];
        if (used[i] || !p->is_equi) continue;
        if (p->rrel == r && (in_mask >> p->lrel & 1))
            pi = i, lk = p->lkey, rk = p->rkey;
        else if (p->lrel == r && (in_mask >> p->rrel & 1))
            pi = i, lk = p->rkey, rk = p->lkey;
    }
    int64_t est = st->est_rows * rs.est_rows;
    PrimType i64[2] = {PRIM_I64, PRIM_I64};
    int node;
    if (pi >= 0) {
        used[pi] = 1;
        int lv = op_expr(L, st, lk, op_prim_type(lk->type), 0);
        int rv = lv >= 0 ? op_expr(L, &rs, rk, op_prim_type(rk->type), 0) : -1;
        if (rv < 0) return -1;
        PrimType kt = key_type(L->dag->values[lv].type, L->dag->values[rv].type);
        if ((lv = op_convert(L, lv, kt)) < 0 || (rv = op_convert(L, rv, kt)) < 0) return -1;
        const CatColumn *kc = (rk->kind == BE_COL) ? &rel->table->cols[rk->col] : NULL;
        int64_t nd = kc && kc->stats.distinct > 0 ? kc->stats.distinct : 1;
        est = est / nd;
        int in[2] = {lv, rv};
        node = plan_dag_add(L->dag, DN_JOIN, in, 2, 2, i64);
        if (node < 0) return op_fail(L, "out of memory");
        L->dag->nodes[node].label = plan_strdup(L->arena, "hash equi-join");
    } else {
        int in[2] = {st->len_value, rs.len_value};
        node = plan_dag_add(L->dag, DN_CROSS, in, 2, 2, i64);
        if (node < 0) return op_fail(L, "out of memory");
    }
    L->dag->nodes[node].est_rows = est;
    int li = plan_dag_out(L->dag, node, 0), ri = plan_dag_out(L->dag, node, 1);
    for (int k = 0; k < st->nslots; k++) {
        LowSlot *s = &st->slots[k];
        if (!s->joined) continue;
        s->rowids = s->rowids < 0 ? li : op_gather(L, s->rowids, li, est);
        if (s->rowids < 0) return -1;
        for (int c = 0; c < s->ncols; c++)
            s->gathered[c] = -1;
    }
    st->slots[r] = rs.slots[r];
    LowSlot *s = &st->slots[r];
    s->rowids = s->rowids < 0 ? ri : op_gather(L, s->rowids, ri, est);
    if (s->rowids < 0) return -1;
    for (int c = 0; c < s->ncols; c++)
        s->gathered[c] = -1;
    st->est_rows = est;
    st->len_value = li;

    /* predicates now evaluable, as one filter */
    in_mask |= (uint64_t)1 << r;
    BExpr *acc = NULL;
    for (int i = 0; i < b->npreds; i++) {
        if (used[i] || (b->preds[i].rels & ~in_mask)) continue;
        used[i] = 1;
        if (!(acc = op_and(L, acc, b->preds[i].expr))) return op_fail(L, "out of memory");
    }
    if (acc && op_filter(L, st, acc, 0.25) != 0) return -1;
    return 0;
}
