/*
 * project.c -- lowering of the select list: each output expression is a
 * column gathered through the state's row ids, or one map node over the
 * columns it reads.
 */
#include "operators/operators.h"
#include "planner/bexpr.h"

int op_project(Lower *L, LowState *st, int *out) {
    const BSelect *b = L->b;
    for (int i = 0; i < b->nout; i++) {
        const BExpr *e = b->out[i];
        out[i] = op_expr(L, st, e, op_prim_type(e->type), 0);
        if (out[i] < 0) return -1;
        L->dag->values[out[i]].ltype = e->type;
        L->dag->values[out[i]].scale = bx_scale(e);
        L->dag->values[out[i]].dict = e->dict;
    }
    return 0;
}
