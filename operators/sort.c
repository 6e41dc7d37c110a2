/*
 * sort.c -- lowering of ORDER BY: the keys (output columns, or expressions
 * over the state aligned with the output rows; with outv NULL all of them
 * expressions over the state) go to one sort node whose permutation the
 * caller gathers the outputs (or the state) through.
 */
#include "operators/operators.h"

int op_isnull_key_output(const BSelect *b, int k) {
    const BExpr *e = b->order[k];
    if (b->order_out[k] >= 0 || !e || e->kind != BE_ISNULL || e->negated || !e->a) return -1;
    for (int j = 0; j < b->nout; j++)
        if (b->out[j] == e->a || plan_bexpr_equal(b->out[j], e->a)) return j;
    return -1;
}

int op_sort(Lower *L, LowState *st, const int *outv, int pre_distinct) {
    const BSelect *b = L->b;
    int keys[DAG_MAX_IO];
    if (b->norder > DAG_MAX_IO) return op_fail(L, "too many ORDER BY keys");
    for (int k = 0; k < b->norder; k++) {
        int isn = outv && !pre_distinct ? op_isnull_key_output(b, k) : -1;
        if (outv && b->order_out[k] >= 0)
            keys[k] = outv[b->order_out[k]];
        else if (isn >= 0)
            keys[k] = op_isnull_value(L, outv[isn]);
        else if (pre_distinct || !outv)
            keys[k] = op_expr(L, st, b->order[k], op_prim_type(b->order[k]->type), 0);
        else
            return op_fail(L, "ORDER BY term not in the select list");
        if (keys[k] < 0) return -1;
    }
    PrimType i64 = PRIM_I64;
    int node = plan_dag_add(L->dag, DN_SORT, keys, b->norder, 1, &i64);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    n->desc = plan_alloc(L->arena, (size_t)b->norder);
    if (!n->desc) return op_fail(L, "out of memory");
    for (int k = 0; k < b->norder; k++)
        n->desc[k] = b->order_desc[k];
    n->est_rows = st->est_rows;
    n->label = plan_strdup(L->arena, "order by");
    return plan_dag_out(L->dag, node, 0);
}
