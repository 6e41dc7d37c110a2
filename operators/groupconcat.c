/*
 * groupconcat.c -- lowering of SQLite's group_concat(x, sep) (BAgg with
 * quant AQ_CONCAT): the argument in group order (gathered through the
 * group-key sort's permutation, which is stable, so each group keeps the
 * input order as SQLite does), then a CPU-only DN_TOTEXT node (TU_GCONCAT)
 * that joins the text of each segment's non-NULL values into a dictionary
 * built at run time. The placement keeps that node on the CPU under
 * --device gpu as it does every to-text node (docs/sql.md).
 */
#include <stdlib.h>

#include "operators/operators.h"
#include "planner/bexpr.h"

int op_group_concat(Lower *L, LowState *st, const BAgg *ag, int perm, int starts,
                    int64_t est_groups, char **label) {
    const BExpr *arg = ag->arg;
    /* codes for text, int64 for integers and DATE days, doubles for reals
     * (what the executor's to-text reads) */
    PrimType t = arg->type == CAT_STRING ? PRIM_I32 : bx_is_float(arg->type) ? PRIM_F64 : PRIM_I64;
    int v = op_expr(L, st, arg, t, 0);
    if (v < 0) return -1;
    if (perm >= 0 && (v = op_gather(L, v, perm, st->est_rows)) < 0) return -1;
    PlanBuf lb = {0};
    plan_buf_printf(&lb, "group_concat(%s, '%s')", op_expr_label(L, st, arg), ag->sep);
    *label = plan_strdup(L->arena, lb.s ? lb.s : "group_concat");
    free(lb.s);
    if (!*label) return op_fail(L, "out of memory");
    int in[2] = {v, starts};
    PrimType ot = PRIM_I32;
    int node = plan_dag_add(L->dag, DN_TOTEXT, in, 2, 1, &ot);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    n->est_rows = est_groups;
    n->totext_date = arg->type == CAT_DATE      ? 1
                     : arg->type == CAT_DECIMAL ? 2 + bx_scale(arg)
                                                : 0; /* how the executor writes it */
    n->totext_use = TU_GCONCAT;
    n->totext_text = ag->sep;
    n->totext_dict = arg->type == CAT_STRING ? arg->dict : NULL;
    n->label = *label;
    int out = plan_dag_out(L->dag, node, 0);
    L->dag->values[out].ltype = CAT_STRING;
    L->dag->values[out].dict = NULL;
    L->dag->values[out].est_rows = est_groups;
    return out;
}
