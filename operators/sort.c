/*
 * sort.c -- lowering of ORDER BY: the keys (output columns, or expressions
 * over the state aligned with the output rows; with outv NULL all of them
 * expressions over the state) go to one sort node whose permutation the
 * caller gathers the outputs (or the state) through.
 */
#include "operators/operators.h"

int op_sort(Lower *L, LowState *st, const int *outv, int pre_distinct) {
    const BSelect *b = L->b;
    int keys[DAG_MAX_IO];
    if (b->norder > DAG_MAX_IO) return op_fail(L, "too many ORDER BY keys");
    for (int k = 0; k < b->norder; k++) {
        if (outv && b->order_out[k] >= 0)
            keys[k] = outv[b->order_out[k]];
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
