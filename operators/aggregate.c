/*
 * aggregate.c -- lowering of GROUP BY and aggregates. With group keys:
 * sort the keys into a permutation, gather keys and arguments into sorted
 * order, find the segments of equal keys, and reduce each argument per
 * segment (sort + segmented-reduce). Without keys: one segment starting at
 * row 0 (a global aggregate is a one-segment segmented-reduce). The state
 * becomes one slot of computed columns: the keys, then the aggregates.
 */
#include <stdlib.h>
#include <string.h>

#include "operators/operators.h"

static const char *agg_names[] = {"count(*)", "count", "sum", "min", "max", "avg"};

const char *op_agg_name(PrimAgg agg) {
    return agg >= AGG_COUNT_STAR && agg <= AGG_AVG ? agg_names[agg - AGG_COUNT_STAR] : "?";
}

/* Output vector type of a segmented reduce of value type t. */
static PrimType agg_out_type(PrimAgg a, PrimType t) {
    if (a == AGG_COUNT_STAR || a == AGG_COUNT) return PRIM_I64;
    if (a == AGG_AVG) return PRIM_F64;
    return (t == PRIM_F32 || t == PRIM_F64) ? PRIM_F64 : PRIM_I64;
}

/* Sort vals[0..n) together and keep the first row of each run of equal
 * rows: vals[] is replaced by the distinct rows (sorted). */
static int dedupe(Lower *L, int *vals, int n, int64_t est) {
    PrimType i64 = PRIM_I64;
    int sort = plan_dag_add(L->dag, DN_SORT, vals, n, 1, &i64);
    if (sort < 0) return op_fail(L, "out of memory");
    L->dag->nodes[sort].desc = plan_alloc(L->arena, (size_t)n);
    L->dag->nodes[sort].est_rows = est;
    L->dag->nodes[sort].label = plan_strdup(L->arena, "distinct argument");
    if (!L->dag->nodes[sort].desc) return op_fail(L, "out of memory");
    int perm = plan_dag_out(L->dag, sort, 0);
    int sorted[DAG_MAX_IO];
    for (int k = 0; k < n; k++)
        if ((sorted[k] = op_gather(L, vals[k], perm, est)) < 0) return -1;
    int seg = plan_dag_add(L->dag, DN_SEGMENTS, sorted, n, 1, &i64);
    if (seg < 0) return op_fail(L, "out of memory");
    L->dag->nodes[seg].est_rows = est;
    int starts = plan_dag_out(L->dag, seg, 0);
    for (int k = 0; k < n; k++)
        if ((vals[k] = op_gather(L, sorted[k], starts, est)) < 0) return -1;
    return 0;
}

/* Segment starts of the (sorted) group keys vals[0..n), or one segment. */
static int group_starts(Lower *L, const int *keys, int n, int64_t est) {
    if (!n) return op_zero_row(L, "one segment");
    PrimType i64 = PRIM_I64;
    int node = plan_dag_add(L->dag, DN_SEGMENTS, keys, n, 1, &i64);
    if (node < 0) return op_fail(L, "out of memory");
    L->dag->nodes[node].est_rows = est;
    return plan_dag_out(L->dag, node, 0);
}

int op_aggregate(Lower *L, LowState *st) {
    const BSelect *b = L->b;
    int ng = b->ngroup, na = b->naggs;
    int *cols = plan_alloc(L->arena, sizeof(int) * (size_t)(ng + na + 1));
    char **names = plan_alloc(L->arena, sizeof(char *) * (size_t)(ng + na + 1));
    if (!cols || !names) return op_fail(L, "out of memory");
    int64_t est_groups = 1;
    int perm = -1, starts, nrows_ref = st->len_value;
    int *keys = plan_alloc(L->arena, sizeof(int) * (size_t)(ng + 1));
    if (!keys) return op_fail(L, "out of memory");
    if (ng > 0) {
        if (ng > DAG_MAX_IO) return op_fail(L, "too many GROUP BY keys");
        for (int k = 0; k < ng; k++) {
            keys[k] = op_expr(L, st, b->group[k], op_prim_type(b->group[k]->type), 0);
            if (keys[k] < 0) return -1;
            names[k] = op_expr_label(L, st, b->group[k]);
            const BExpr *g = b->group[k];
            int64_t nd = st->est_rows;
            if (g->kind == BE_COL && st->slots[g->slot].table) {
                const CatColumn *c = &st->slots[g->slot].table->cols[g->col];
                if (c->stats.distinct > 0) nd = c->stats.distinct;
            }
            if (est_groups < st->est_rows) est_groups *= nd > 0 ? nd : 1;
        }
        if (est_groups > st->est_rows) est_groups = st->est_rows;
        PrimType i64 = PRIM_I64;
        int sort = plan_dag_add(L->dag, DN_SORT, keys, ng, 1, &i64);
        if (sort < 0) return op_fail(L, "out of memory");
        L->dag->nodes[sort].desc = plan_alloc(L->arena, (size_t)ng);
        L->dag->nodes[sort].est_rows = st->est_rows;
        L->dag->nodes[sort].label = plan_strdup(L->arena, "group keys");
        perm = plan_dag_out(L->dag, sort, 0);
        int sorted[DAG_MAX_IO];
        for (int k = 0; k < ng; k++)
            if ((sorted[k] = op_gather(L, keys[k], perm, st->est_rows)) < 0) return -1;
        int seg = plan_dag_add(L->dag, DN_SEGMENTS, sorted, ng, 1, &i64);
        if (seg < 0) return op_fail(L, "out of memory");
        L->dag->nodes[seg].est_rows = est_groups;
        starts = plan_dag_out(L->dag, seg, 0);
        for (int k = 0; k < ng; k++)
            if ((cols[k] = op_gather(L, sorted[k], starts, est_groups)) < 0) return -1;
        nrows_ref = perm;
    } else if ((starts = group_starts(L, NULL, 0, 1)) < 0) {
        return -1;
    }
    int *qshared = NULL; /* per order statistic: sorted argument, counts */
    for (int a = 0; a < na; a++) {
        const BAgg *ag = &b->aggs[a];
        if (ag->quant == AQ_CONCAT) {
            if ((cols[ng + a] =
                     op_group_concat(L, st, ag, perm, starts, est_groups, &names[ng + a])) < 0)
                return -1;
            continue;
        }
        if (ag->quant != AQ_NONE) {
            /* order statistics of one argument share its sort and counts */
            if (!qshared && !(qshared = plan_alloc(L->arena, sizeof(int) * 3 * (size_t)na)))
                return op_fail(L, "out of memory");
            int *sh = &qshared[3 * a];
            sh[0] = sh[1] = sh[2] = -1;
            for (int p = 0; p < a; p++)
                if ((b->aggs[p].quant == AQ_CONT || b->aggs[p].quant == AQ_DISC) &&
                    plan_bexpr_equal(b->aggs[p].arg, ag->arg))
                    memcpy(sh, &qshared[3 * p], sizeof(int) * 3);
            if ((cols[ng + a] =
                     op_quantile(L, st, ag, keys, ng, starts, est_groups, sh, &names[ng + a])) < 0)
                return -1;
            continue;
        }
        int in[2] = {starts, -1};
        int nin = 1;
        PrimType vt = PRIM_I64;
        PlanBuf lb = {0};
        if (ag->arg && ag->distinct) {
            /* distinct (keys, arg) rows, then segments of their keys */
            int vals[DAG_MAX_IO + 1];
            if (ng + 1 > DAG_MAX_IO) return op_fail(L, "too many GROUP BY keys");
            for (int k = 0; k < ng; k++)
                vals[k] = keys[k];
            vals[ng] = op_expr(L, st, ag->arg, op_prim_type(ag->arg->type), 0);
            if (vals[ng] < 0 || dedupe(L, vals, ng + 1, st->est_rows) != 0) return -1;
            in[0] = group_starts(L, vals, ng, est_groups);
            if (in[0] < 0) return -1;
            in[1] = vals[ng];
            nin = 2;
            vt = L->dag->values[vals[ng]].type;
            plan_buf_printf(&lb, "%s(DISTINCT %s)", agg_names[ag->agg],
                            op_expr_label(L, st, ag->arg));
        } else if (ag->arg) {
            int v = op_expr(L, st, ag->arg, op_prim_type(ag->arg->type), 0);
            if (v < 0) return -1;
            if (perm >= 0 && (v = op_gather(L, v, perm, st->est_rows)) < 0) return -1;
            in[1] = v;
            nin = 2;
            vt = L->dag->values[v].type;
            plan_buf_printf(&lb, "%s(%s)", agg_names[ag->agg], op_expr_label(L, st, ag->arg));
        } else {
            plan_buf_printf(&lb, "count(*)");
        }
        PrimType ot = agg_out_type(ag->agg, vt);
        int node = plan_dag_add(L->dag, DN_SEGREDUCE, in, nin, 1, &ot);
        if (node < 0) {
            free(lb.s);
            return op_fail(L, "out of memory");
        }
        DagNode *n = &L->dag->nodes[node];
        n->agg = ag->agg;
        if (ag->arg && (ag->agg == AGG_SUM || ag->agg == AGG_AVG) && vt != PRIM_F32 &&
            vt != PRIM_F64) {
            /* a sum over at most the state's rows of values bounded by the
             * statistics cannot overflow: no check (operators/bound.c) */
            int safe = 0;
            double x = op_abs_bound(ag->arg, op_state_col, st, &safe);
            double rows = op_state_rows_bound(st);
            if (safe && op_sum_no_overflow(rows, x) && op_skip_checks_allowed()) {
                n->no_ovf = 1;
                n->ovf_bound = rows * x;
            }
        }
        n->len_from = nin == 2 ? in[1] : nrows_ref;
        n->est_rows = est_groups;
        n->label = plan_strdup(L->arena, lb.s ? lb.s : "");
        names[ng + a] = n->label;
        free(lb.s);
        int v = plan_dag_out(L->dag, node, 0);
        L->dag->values[v].ltype = ag->type;
        L->dag->values[v].scale = ag->scale;
        L->dag->values[v].dict = ag->arg ? ag->arg->dict : NULL;
        L->dag->values[v].est_rows = est_groups;
        if (op_prim_type(ag->type) != ot && (v = op_convert(L, v, op_prim_type(ag->type))) < 0)
            return -1;
        cols[ng + a] = v;
    }
    /* the new state: one slot of computed columns */
    LowSlot *s = plan_alloc(L->arena, sizeof(LowSlot));
    if (!s) return op_fail(L, "out of memory");
    if (op_computed_slot(L, s, cols, names, ng + na) != 0) return -1;
    st->nslots = 1;
    st->slots = s;
    st->len_value = ng + na > 0 ? cols[0] : starts;
    st->est_rows = est_groups;
    return 0;
}
