/*
 * filter.c -- lowering of a filter: one map node evaluates the whole
 * predicate into flags, a scan turns the flags into output offsets, a
 * scatter writes the selected row ids, and every slot's row ids are
 * gathered through them (late materialization: payload columns are
 * gathered only when read).
 */
#include "operators/operators.h"

int op_filter(Lower *L, LowState *st, const BExpr *pred, double selectivity) {
    int flags = op_expr(L, st, pred, PRIM_U8, 1);
    if (flags < 0) return -1;
    PrimType i64 = PRIM_I64;
    int scan = plan_dag_add(L->dag, DN_SCAN, &flags, 1, 1, &i64);
    if (scan < 0) return op_fail(L, "out of memory");
    L->dag->nodes[scan].est_rows = st->est_rows;
    int offs = plan_dag_out(L->dag, scan, 0);
    int in[2] = {flags, offs};
    int sc = plan_dag_add(L->dag, DN_SCATTER, in, 2, 1, &i64);
    if (sc < 0) return op_fail(L, "out of memory");
    int64_t est = (int64_t)((double)st->est_rows * selectivity + 0.5);
    DagNode *n = &L->dag->nodes[sc];
    n->count_from = scan;
    n->est_rows = est;
    n->label = plan_strdup(L->arena, "row ids where flag");
    int sel = plan_dag_out(L->dag, sc, 0);
    L->dag->values[sel].est_rows = est;
    return op_reselect(L, st, sel, est);
}
