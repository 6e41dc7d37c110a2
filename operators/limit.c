/*
 * limit.c -- lowering of LIMIT / OFFSET: a slice node keeping rows
 * [offset, offset + limit) of a vector (limit -1 = to the end); after an
 * ORDER BY, the sort itself keeps only those rows of its permutation
 * (op_sort_limit), so it need not order every row (prim_cpu_sort_range).
 */
#include "operators/operators.h"

int op_limit(Lower *L, int v, int64_t offset, int64_t limit) {
    PrimType t = L->dag->values[v].type;
    int node = plan_dag_add(L->dag, DN_SLICE, &v, 1, 1, &t);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    n->slice_offset = offset;
    n->slice_limit = limit;
    n->len_from = v;
    int64_t est = L->dag->values[v].est_rows - offset;
    if (est < 0) est = 0;
    if (limit >= 0 && limit < est) est = limit;
    n->est_rows = est;
    int out = plan_dag_out(L->dag, node, 0);
    L->dag->values[out].ltype = L->dag->values[v].ltype;
    L->dag->values[out].scale = L->dag->values[v].scale;
    L->dag->values[out].dict = L->dag->values[v].dict;
    L->dag->values[out].est_rows = est;
    return out;
}

int op_sort_limit(Lower *L, int perm, int64_t offset, int64_t limit) {
    DagValue *pv = &L->dag->values[perm];
    DagNode *n = &L->dag->nodes[pv->producer];
    if (n->kind != DN_SORT || n->noutputs != 1) return op_limit(L, perm, offset, limit);
    n->slice_offset = offset;
    n->slice_limit = limit;
    int64_t est = (n->est_rows > pv->est_rows ? n->est_rows : pv->est_rows) - offset;
    if (est < 0) est = 0;
    if (limit >= 0 && limit < est) est = limit;
    n->est_rows = est;
    pv->est_rows = est;
    return perm;
}
