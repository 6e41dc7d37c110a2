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
        if (e->kind == BE_TOTEXT) {
            int v = op_expr(L, st, e->a, bx_is_float(e->a->type) ? PRIM_F64 : PRIM_I64, 0);
            if (v < 0) return -1;
            PrimType i32 = PRIM_I32;
            int node = plan_dag_add(L->dag, DN_TOTEXT, &v, 1, 1, &i32);
            if (node < 0) return op_fail(L, "out of memory");
            L->dag->nodes[node].est_rows = st->est_rows;
            L->dag->nodes[node].totext_date = e->a->type == CAT_DATE;
            L->dag->nodes[node].label = op_expr_label(L, st, e);
            out[i] = plan_dag_out(L->dag, node, 0);
            L->dag->values[out[i]].ltype = CAT_STRING;
            L->dag->values[out[i]].dict = NULL;
            continue;
        }
        out[i] = op_expr(L, st, e, op_prim_type(e->type), 0);
        if (out[i] < 0) return -1;
        L->dag->values[out[i]].ltype = e->type;
        L->dag->values[out[i]].dict = e->dict;
    }
    return 0;
}
