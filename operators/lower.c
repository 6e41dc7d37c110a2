/*
 * lower.c -- the lowering driver: turns a bound SELECT block into a DAG of
 * primitives by running the operators in evaluation order
 *   scan+filter (first relation) -> join (each further relation)
 *   -> aggregate -> having (filter) -> project -> distinct -> sort -> limit
 * and the shared helpers for columns and gathers.
 */
#include <stdlib.h>
#include <string.h>

#include "operators/operators.h"
#include "planner/bexpr.h"

int op_gather(Lower *L, int v, int idx, int64_t est_rows) {
    int in[2] = {v, idx};
    PrimType t = L->dag->values[v].type;
    int node = plan_dag_add(L->dag, DN_GATHER, in, 2, 1, &t);
    if (node < 0) return op_fail(L, "out of memory");
    L->dag->nodes[node].est_rows = est_rows;
    int out = plan_dag_out(L->dag, node, 0);
    L->dag->values[out].ltype = L->dag->values[v].ltype;
    L->dag->values[out].scale = L->dag->values[v].scale;
    L->dag->values[out].dict = L->dag->values[v].dict;
    L->dag->values[out].est_rows = est_rows;
    return out;
}

int op_source(Lower *L, LowSlot *s, int col) {
    if (s->col_value[col] >= 0) return s->col_value[col];
    /* a binary column not read yet (one no expression named, such as the
     * column that gives COUNT(*) its row count): read it now */
    CatError cerr;
    if (cat_column_use((CatTable *)s->table, col, &cerr) != 0) return op_fail(L, "%s", cerr.msg);
    const CatColumn *c = &s->table->cols[col];
    PrimType t = op_prim_type(c->type);
    int node = plan_dag_add(L->dag, DN_SOURCE, NULL, 0, 1, &t);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    n->table = s->table;
    n->column = col;
    n->est_rows = s->table->nrows;
    int v = plan_dag_out(L->dag, node, 0);
    L->dag->values[v].ltype = c->type;
    L->dag->values[v].scale = c->scale;
    L->dag->values[v].dict = c->dict;
    L->dag->values[v].est_rows = s->table->nrows;
    s->col_value[col] = v;
    return v;
}

int op_column(Lower *L, LowState *st, int slot, int col) {
    LowSlot *s = &st->slots[slot];
    if (s->gathered[col] >= 0) return s->gathered[col];
    int v = op_source(L, s, col);
    if (v >= 0 && s->rowids >= 0) {
        v = op_gather(L, v, s->rowids, st->est_rows);
        if (v >= 0 && s->nullable) L->dag->nodes[L->dag->values[v].producer].gather_nulls = 1;
    }
    if (v >= 0) s->gathered[col] = v;
    return v;
}

int op_reselect(Lower *L, LowState *st, int idx, int64_t est) {
    for (int k = 0; k < st->nslots; k++) {
        LowSlot *s = &st->slots[k];
        if (!s->joined) continue;
        s->rowids = s->rowids < 0 ? idx : op_gather(L, s->rowids, idx, est);
        if (s->rowids < 0) return -1;
        for (int c = 0; c < s->ncols; c++)
            s->gathered[c] = -1;
    }
    st->est_rows = est;
    st->len_value = idx;
    return 0;
}

int op_computed_slot(Lower *L, LowSlot *s, int *cols, char **names, int n) {
    memset(s, 0, sizeof *s);
    s->ncols = n;
    s->col_value = cols;
    s->gathered = plan_alloc(L->arena, sizeof(int) * (size_t)(n + 1));
    if (!s->gathered) return op_fail(L, "out of memory");
    memcpy(s->gathered, cols, sizeof(int) * (size_t)n);
    s->col_names = names;
    s->rowids = -1;
    s->joined = 1;
    return 0;
}

/* Allocate the slot arrays of st for nslots slots. Returns 0 or -1. */
static int state_init(Lower *L, LowState *st, int nslots) {
    memset(st, 0, sizeof *st);
    st->nslots = nslots;
    st->len_value = -1;
    st->slots = plan_alloc(L->arena, sizeof(LowSlot) * (size_t)(nslots ? nslots : 1));
    return st->slots ? 0 : op_fail(L, "out of memory");
}

BExpr *op_and(Lower *L, BExpr *acc, BExpr *x) {
    if (!acc) return x;
    BExpr *e = bx_new(L->arena, BE_BINARY, CAT_BOOL, -1);
    if (!e) return NULL;
    e->op = OP_AND;
    e->a = acc;
    e->b = x;
    return e;
}

/* list[0..n) combined with AND as a balanced tree (the terms in order; see
 * operators.h): its height grows as log2(n), so later recursion over it
 * (compile, labels) stays shallow for 100000 conjuncts. */
BExpr *op_and_all(Lower *L, BExpr *const *list, int n) {
    if (n <= 0) return NULL;
    if (n == 1) return list[0];
    int h = (n + 1) / 2;
    BExpr *l = op_and_all(L, list, h);
    BExpr *r = l ? op_and_all(L, list + h, n - h) : NULL;
    return r ? op_and(L, l, r) : NULL;
}

int op_zero_row(Lower *L, const char *label) {
    PrimType t = PRIM_I64;
    int node = plan_dag_add(L->dag, DN_CONST, NULL, 0, 1, &t);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    n->cdata = plan_alloc(L->arena, sizeof(int64_t));
    if (!n->cdata) return op_fail(L, "out of memory");
    n->cn = 1;
    n->est_rows = 1;
    if (label) n->label = plan_strdup(L->arena, label);
    return plan_dag_out(L->dag, node, 0);
}

/* The last output column of a ranked SELECT (b->rank_keys, no LIMIT; out
 * in the ORDER BY's order): each row's number among the rows equal on the
 * first rank_keys ORDER BY keys, which are output columns -- their
 * segments, then a segment rank. Returns 0 or -1. */
static int op_rank(Lower *L, int *out, int nout, int64_t est) {
    const BSelect *b = L->b;
    int keys[DAG_MAX_IO];
    for (int k = 0; k < b->rank_keys; k++)
        keys[k] = out[b->order_out[k]];
    PrimType i64 = PRIM_I64;
    int seg = plan_dag_add(L->dag, DN_SEGMENTS, keys, b->rank_keys, 1, &i64);
    if (seg < 0) return op_fail(L, "out of memory");
    L->dag->nodes[seg].est_rows = est;
    int starts = plan_dag_out(L->dag, seg, 0);
    int node = plan_dag_add(L->dag, DN_SEGRANK, &starts, 1, 1, &i64);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    n->len_from = keys[0];
    n->est_rows = est;
    n->label = plan_strdup(L->arena, "row number");
    int v = plan_dag_out(L->dag, node, 0);
    L->dag->values[v].ltype = CAT_INT64;
    L->dag->values[v].est_rows = est;
    out[nout - 1] = v;
    return 0;
}

int op_lower_block(const BSelect *b, const LowerOpts *opts, Dag *dag, PlanError *err, int **outp) {
    Lower L = {dag, dag->arena, b, err, opts};
    LowState st;
    if (b->nrels == 0) {
        if (state_init(&L, &st, 0) != 0) return -1;
        st.len_value = op_zero_row(&L, NULL);
        st.est_rows = 1;
        if (st.len_value < 0) return -1;
    } else {
        if (state_init(&L, &st, b->nrels) != 0) return -1;
        int dense = b->has_agg ? op_dense_aggregate(&L, &st) : 0;
        if (dense < 0) return -1;
        if (dense) goto aggregated;
        uint8_t *used = plan_alloc(L.arena, (size_t)(b->npreds ? b->npreds : 1));
        if (!used) return op_fail(&L, "out of memory");
        int first = b->join_order[0];
        if (op_scan(&L, &st, first) != 0) return -1;
        const BRel *r0 = &b->rels[first];
        if (r0->nfilters) {
            BExpr *p = op_and_all(&L, r0->filters, r0->nfilters);
            double sel = (double)r0->est_rows / (double)(r0->table->nrows ? r0->table->nrows : 1);
            if (!p || op_filter(&L, &st, p, sel) != 0) return -1;
        }
        for (int k = 1; k < b->nrels; k++) {
            const BRel *rk = &b->rels[b->join_order[k]];
            if ((rk->semi    ? op_semi_join
                 : rk->outer ? op_left_join
                             : op_join)(&L, &st, b->join_order[k], used) != 0)
                return -1;
        }
    }
    if (b->has_agg && op_aggregate(&L, &st) != 0) return -1;
aggregated:
    if (b->having && op_filter(&L, &st, b->having, 0.5) != 0) return -1;

    int nout = b->nout;
    int *out = plan_alloc(L.arena, sizeof(int) * (size_t)(nout ? nout : 1));
    if (!out) return op_fail(&L, "out of memory");
    if (b->norder && (b->limit >= 0 || b->offset > 0) && !b->distinct) {
        /* ORDER BY ... LIMIT / OFFSET: the keys over the state, a sort that
         * keeps the range's rows, and the select list computed (its columns
         * gathered) for those rows alone */
        int perm = op_sort(&L, &st, NULL, 1);
        if (perm < 0 || (perm = op_sort_limit(&L, perm, b->offset, b->limit)) < 0) return -1;
        if (op_reselect(&L, &st, perm, dag->values[perm].est_rows) != 0) return -1;
        if (op_project(&L, &st, out) != 0) return -1;
        goto projected;
    }
    if (op_project(&L, &st, out) != 0) return -1;
    int64_t est = st.est_rows;
    if (b->distinct) {
        if (op_distinct(&L, out, nout, est) != 0) return -1;
    }
    if (b->norder) {
        int perm = op_sort(&L, &st, out, !b->distinct);
        if (perm < 0) return -1;
        if (b->limit >= 0 || b->offset > 0) {
            perm = op_sort_limit(&L, perm, b->offset, b->limit);
            if (perm < 0) return -1;
            est = b->limit >= 0 && b->limit < est ? b->limit : est;
        }
        for (int i = 0; i < nout; i++)
            if ((out[i] = op_gather(&L, out[i], perm, est)) < 0) return -1;
        if (b->rank_keys > 0 && op_rank(&L, out, nout, est) != 0) return -1;
    } else if (b->limit >= 0 || b->offset > 0) {
        for (int i = 0; i < nout; i++)
            if ((out[i] = op_limit(&L, out[i], b->offset, b->limit)) < 0) return -1;
    }
projected:
    for (int i = 0; i < nout; i++) {
        DagValue *v = &dag->values[out[i]];
        if (v->ltype == CAT_NULL) v->ltype = CAT_INT64;
        if (op_prim_type(v->ltype) != v->type) {
            int c = op_convert(&L, out[i], op_prim_type(v->ltype));
            if (c < 0) return -1;
            out[i] = c;
        }
    }
    *outp = out;
    return 0;
}

int op_lower_select(const BSelect *b, const LowerOpts *opts, Dag *dag, PlanError *err) {
    err->offset = -1;
    int *out = NULL;
    int rc = b->narms > 0 ? op_lower_compound(b, opts, dag, err, &out)
                          : op_lower_block(b, opts, dag, err, &out);
    if (rc != 0) return -1;
    dag->nresults = b->nout;
    dag->results = out;
    dag->result_names = b->out_names;
    return 0;
}
