/*
 * distinct.c -- lowering of SELECT DISTINCT: sort all output columns,
 * find the segments of equal rows, keep each segment's first row.
 */
#include "operators/operators.h"

int op_distinct(Lower *L, int *out, int nout, int64_t est_rows) {
    if (nout > DAG_MAX_IO) return op_fail(L, "too many DISTINCT columns");
    PrimType i64 = PRIM_I64;
    int sort = plan_dag_add(L->dag, DN_SORT, out, nout, 1, &i64);
    if (sort < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[sort];
    n->desc = plan_alloc(L->arena, (size_t)nout);
    if (!n->desc) return op_fail(L, "out of memory");
    n->est_rows = est_rows;
    n->label = plan_strdup(L->arena, "distinct");
    int perm = plan_dag_out(L->dag, sort, 0);
    int sorted[DAG_MAX_IO];
    for (int i = 0; i < nout; i++)
        if ((sorted[i] = op_gather(L, out[i], perm, est_rows)) < 0) return -1;
    int seg = plan_dag_add(L->dag, DN_SEGMENTS, sorted, nout, 1, &i64);
    if (seg < 0) return op_fail(L, "out of memory");
    L->dag->nodes[seg].est_rows = est_rows;
    int starts = plan_dag_out(L->dag, seg, 0);
    for (int i = 0; i < nout; i++)
        if ((out[i] = op_gather(L, sorted[i], starts, est_rows)) < 0) return -1;
    return 0;
}
