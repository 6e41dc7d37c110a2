/*
 * setop.c -- lowering of compound SELECTs (UNION [ALL], INTERSECT, EXCEPT;
 * SQLite: equal precedence, left-associative) onto the primitives:
 *
 *   UNION ALL   the arms' columns, one concat node per column;
 *   UNION       the same, then the DISTINCT lowering (sort + segments +
 *               each segment's first row; NULLs equal each other);
 *   INTERSECT / EXCEPT
 *               the two sides concatenated with a side tag (0 left, 1
 *               right), sorted on all columns, segments of equal rows, the
 *               per-segment MIN and MAX of the tag by segmented reduce, and
 *               the first rows of the segments that qualify: INTERSECT
 *               min 0 and max 1 (on both sides), EXCEPT max 0 (left only).
 *
 * Runs of UNION / UNION ALL share one concat (a UNION dedups everything to
 * its left, so `a UNION ALL b UNION c` is one concat of three and one
 * distinct). The compound's ORDER BY sorts its output columns, LIMIT /
 * OFFSET slice the permutation (or the columns), as for one block.
 */
#include <string.h>

#include "operators/operators.h"
#include "planner/bexpr.h"

/* One concat node over values v[0..n) (all of one vector type), labelled;
 * returns its output value id or -1. */
static int concat(Lower *L, const int *v, int n, const char *label) {
    if (n == 1) return v[0];
    PrimType t = L->dag->values[v[0]].type;
    int64_t est = 0;
    for (int k = 0; k < n; k++) {
        if (L->dag->values[v[k]].type != t)
            return op_fail(L, "compound SELECT arms with different vector types");
        est += L->dag->values[v[k]].est_rows;
    }
    int node = plan_dag_add(L->dag, DN_CONCAT, v, n, 1, &t);
    if (node < 0) return op_fail(L, "out of memory");
    L->dag->nodes[node].est_rows = est;
    L->dag->nodes[node].label = plan_strdup(L->arena, label);
    int out = plan_dag_out(L->dag, node, 0);
    L->dag->values[out].ltype = L->dag->values[v[0]].ltype;
    L->dag->values[out].scale = L->dag->values[v[0]].scale;
    L->dag->values[out].dict = L->dag->values[v[0]].dict;
    L->dag->values[out].est_rows = est;
    return out;
}

/* The pending UNION / UNION ALL run: arms (value arrays of nout columns)
 * waiting for one concat, and whether the run ends deduplicated. */
typedef struct Run {
    int n;
    int *arms[DAG_MAX_IO];
    int distinct;
} Run;

/* Concatenate the run into out[0..nout) (one concat per column), then
 * deduplicate when the run holds a UNION. Empties the run. 0 or -1. */
static int flush(Lower *L, Run *r, int nout, int *out) {
    int v[DAG_MAX_IO];
    for (int c = 0; c < nout; c++) {
        for (int k = 0; k < r->n; k++)
            v[k] = r->arms[k][c];
        if ((out[c] = concat(L, v, r->n, r->distinct ? "union" : "union all")) < 0) return -1;
    }
    if (r->distinct && nout > 0 && op_distinct(L, out, nout, L->dag->values[out[0]].est_rows) != 0)
        return -1;
    r->n = 0;
    r->distinct = 0;
    return 0;
}

/* A vector of the constant tag, as long as value v. */
static int tag_vector(Lower *L, int v, int64_t tag) {
    LowState st;
    memset(&st, 0, sizeof st);
    st.len_value = v;
    st.est_rows = L->dag->values[v].est_rows;
    BExpr *k = bx_int(L->arena, CAT_INT64, tag, -1);
    if (!k) return op_fail(L, "out of memory");
    return op_expr(L, &st, k, PRIM_I64, 0);
}

/* Column col of the computed slot 0, INT64. */
static BExpr *slot_col(Lower *L, int col) {
    BExpr *e = bx_new(L->arena, BE_COL, CAT_INT64, -1);
    if (e) e->slot = 0, e->col = col;
    return e;
}

/* left[c] INTERSECT / EXCEPT right[c] (c < nout, distinct rows) into
 * left[0..nout). 0 or -1. */
static int intersect_except(Lower *L, int *left, const int *right, int nout, int op) {
    const char *name = op == SETOP_INTERSECT ? "intersect" : "except";
    if (nout + 1 > DAG_MAX_IO) return op_fail(L, "too many columns in %s", name);
    int cat[DAG_MAX_IO], sorted[DAG_MAX_IO];
    for (int c = 0; c < nout; c++) {
        int v[2] = {left[c], right[c]};
        if ((cat[c] = concat(L, v, 2, name)) < 0) return -1;
    }
    int t[2] = {tag_vector(L, left[0], 0), tag_vector(L, right[0], 1)};
    if (t[0] < 0 || t[1] < 0) return -1;
    int tag = concat(L, t, 2, "side");
    if (tag < 0) return -1;
    int64_t est = L->dag->values[cat[0]].est_rows;

    PrimType i64 = PRIM_I64;
    int sort = plan_dag_add(L->dag, DN_SORT, cat, nout, 1, &i64);
    if (sort < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[sort];
    n->desc = plan_alloc(L->arena, (size_t)nout);
    if (!n->desc) return op_fail(L, "out of memory");
    n->est_rows = est;
    n->label = plan_strdup(L->arena, name);
    int perm = plan_dag_out(L->dag, sort, 0);
    for (int c = 0; c < nout; c++)
        if ((sorted[c] = op_gather(L, cat[c], perm, est)) < 0) return -1;
    int stag = op_gather(L, tag, perm, est);
    if (stag < 0) return -1;
    int seg = plan_dag_add(L->dag, DN_SEGMENTS, sorted, nout, 1, &i64);
    if (seg < 0) return op_fail(L, "out of memory");
    L->dag->nodes[seg].est_rows = est;
    int starts = plan_dag_out(L->dag, seg, 0);

    /* per segment: the smallest and largest side tag */
    int cols[3];
    static const PrimAgg aggs[2] = {AGG_MIN, AGG_MAX};
    for (int a = 0; a < 2; a++) {
        int in[2] = {starts, stag};
        int r = plan_dag_add(L->dag, DN_SEGREDUCE, in, 2, 1, &i64);
        if (r < 0) return op_fail(L, "out of memory");
        DagNode *rn = &L->dag->nodes[r];
        rn->agg = aggs[a];
        rn->len_from = stag;
        rn->est_rows = est;
        rn->label = plan_strdup(L->arena, "side");
        cols[a] = plan_dag_out(L->dag, r, 0);
        L->dag->values[cols[a]].ltype = CAT_INT64;
        L->dag->values[cols[a]].est_rows = est;
    }
    cols[2] = starts;
    char **names = plan_alloc(L->arena, sizeof(char *) * 3);
    int *cv = plan_alloc(L->arena, sizeof(int) * 3);
    if (!names || !cv) return op_fail(L, "out of memory");
    names[0] = plan_strdup(L->arena, "min(side)");
    names[1] = plan_strdup(L->arena, "max(side)");
    names[2] = plan_strdup(L->arena, "segment start");
    memcpy(cv, cols, sizeof cols);

    LowState st;
    memset(&st, 0, sizeof st);
    st.nslots = 1;
    st.slots = plan_alloc(L->arena, sizeof(LowSlot));
    if (!st.slots) return op_fail(L, "out of memory");
    if (op_computed_slot(L, &st.slots[0], cv, names, 3) != 0) return -1;
    st.len_value = starts;
    st.est_rows = est;
    BExpr *pred;
    if (op == SETOP_INTERSECT) {
        BExpr *lo = bx_bin(L->arena, OP_EQ, CAT_BOOL, slot_col(L, 0),
                           bx_int(L->arena, CAT_INT64, 0, -1), -1);
        BExpr *hi = bx_bin(L->arena, OP_EQ, CAT_BOOL, slot_col(L, 1),
                           bx_int(L->arena, CAT_INT64, 1, -1), -1);
        pred = lo && hi ? bx_bin(L->arena, OP_AND, CAT_BOOL, lo, hi, -1) : NULL;
    } else {
        pred = bx_bin(L->arena, OP_EQ, CAT_BOOL, slot_col(L, 1), bx_int(L->arena, CAT_INT64, 0, -1),
                      -1);
    }
    if (!pred) return op_fail(L, "out of memory");
    if (op_filter(L, &st, pred, 0.5) != 0) return -1;
    int kept = op_column(L, &st, 0, 2);
    if (kept < 0) return -1;
    for (int c = 0; c < nout; c++)
        if ((left[c] = op_gather(L, sorted[c], kept, st.est_rows)) < 0) return -1;
    return 0;
}

int op_lower_compound(const BSelect *b, const LowerOpts *opts, Dag *dag, PlanError *err,
                      int **outp) {
    Lower L = {dag, dag->arena, b, err, opts};
    int nout = b->nout;
    if (nout > DAG_MAX_IO) return op_fail(&L, "too many columns in a compound SELECT");
    int *acc = plan_alloc(L.arena, sizeof(int) * (size_t)(nout ? nout : 1));
    if (!acc) return op_fail(&L, "out of memory");
    Run run;
    memset(&run, 0, sizeof run);
    for (int i = 0; i < b->narms; i++) {
        int *arm;
        if (op_lower_block(b->arms[i], opts, dag, err, &arm) != 0) return -1;
        int op = i == 0 ? SETOP_UNION_ALL : b->arm_op[i];
        if (op == SETOP_INTERSECT || op == SETOP_EXCEPT) {
            if (flush(&L, &run, nout, acc) != 0) return -1;
            if (intersect_except(&L, acc, arm, nout, op) != 0) return -1;
            run.arms[run.n++] = acc;
            acc = plan_alloc(L.arena, sizeof(int) * (size_t)(nout ? nout : 1));
            if (!acc) return op_fail(&L, "out of memory");
            continue;
        }
        if ((op == SETOP_UNION_ALL && run.distinct) || run.n == DAG_MAX_IO) {
            /* rows so far are deduplicated before this arm joins them */
            if (flush(&L, &run, nout, acc) != 0) return -1;
            run.arms[run.n++] = acc;
            acc = plan_alloc(L.arena, sizeof(int) * (size_t)(nout ? nout : 1));
            if (!acc) return op_fail(&L, "out of memory");
        }
        run.arms[run.n++] = arm;
        if (op == SETOP_UNION) run.distinct = 1;
    }
    if (flush(&L, &run, nout, acc) != 0) return -1;

    int64_t est = nout ? dag->values[acc[0]].est_rows : 0;
    if (b->norder) {
        LowState st;
        memset(&st, 0, sizeof st);
        st.len_value = acc[0];
        st.est_rows = est;
        int perm = op_sort(&L, &st, acc, 0);
        if (perm < 0) return -1;
        dag->values[perm].est_rows = est;
        if (b->limit >= 0 || b->offset > 0) {
            if ((perm = op_sort_limit(&L, perm, b->offset, b->limit)) < 0) return -1;
            est = b->limit >= 0 && b->limit < est ? b->limit : est;
        }
        for (int c = 0; c < nout; c++)
            if ((acc[c] = op_gather(&L, acc[c], perm, est)) < 0) return -1;
    } else if (b->limit >= 0 || b->offset > 0) {
        for (int c = 0; c < nout; c++)
            if ((acc[c] = op_limit(&L, acc[c], b->offset, b->limit)) < 0) return -1;
    }
    *outp = acc;
    return 0;
}
