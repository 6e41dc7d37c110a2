/*
 * quantile.c -- lowering of the order statistics MEDIAN / QUANTILE_CONT /
 * QUANTILE_DISC (BAgg.quant, planner.h) onto the existing primitives, so
 * they run on either device:
 *
 *   sort (group keys..., x) -> perm; xs = x gathered through perm
 *   cnt  = segmented COUNT(xs), size = segmented COUNT(*) over the group
 *          segments (the starts of the group-key sort: both sorts order
 *          the groups alike, so a group's rows occupy the same positions)
 *   idx  = map (starts, size, cnt): NULLs sort first, so the group's k-th
 *          non-NULL value sits at start + size - cnt + k; -1 when cnt = 0
 *   v    = xs gathered at idx (a -1 gives NULL)
 *   CONT: a second index and a map interpolating the two values.
 *
 * The index arithmetic follows DuckDB's (quantile_helpers): DISC takes
 * index max(1, n - floor(n - n*q)) - 1, evaluated exactly in integers when
 * q is a decimal fraction of at most 6 digits (DuckDB's DECIMAL literal),
 * else in doubles; CONT takes r = (n-1)*q, lo = floor(r), hi = ceil(r)
 * and lo + (hi - lo) * (r - lo).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/operators.h"

/* A small program under construction: registers are written once. */
typedef struct QProg {
    PrimInstr code[32];
    int n;
} QProg;

/* Append an instruction writing a fresh register; returns the register. */
static int qi(QProg *p, PrimOp op, int t, int a, int b, int c, int64_t ival, double fval) {
    PrimInstr *in = &p->code[p->n];
    memset(in, 0, sizeof *in);
    in->op = (uint8_t)op;
    in->t = (uint8_t)t;
    in->dst = (int16_t)p->n;
    in->a = (int16_t)a;
    in->b = (int16_t)b;
    in->c = (int16_t)c;
    in->ival = ival;
    in->fval = fval;
    return p->n++;
}

/* A map node running program p over inputs in[0..nin) (each as long as
 * in[0]) with result register res of register type rt, into a vector of
 * type out_t. Returns the output value id or -1. */
static int q_map(Lower *L, const QProg *p, int res, int rt, const int *in, int nin, PrimType out_t,
                 const char *label, int64_t est) {
    PrimInstr *code = plan_alloc(L->arena, sizeof(PrimInstr) * (size_t)p->n);
    if (!code) return op_fail(L, "out of memory");
    memcpy(code, p->code, sizeof(PrimInstr) * (size_t)p->n);
    int node = plan_dag_add(L->dag, DN_MAP, in, nin, 1, &out_t);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    n->prog.ninstr = p->n;
    n->prog.code = code;
    n->prog.nregs = p->n;
    n->prog.result = res;
    n->prog.result_t = rt;
    n->prog.ninputs = nin;
    n->len_from = in[0];
    n->label = plan_strdup(L->arena, label);
    n->est_rows = est;
    int v = plan_dag_out(L->dag, node, 0);
    L->dag->values[v].ltype = out_t == PRIM_F64 ? CAT_FLOAT64 : CAT_INT64;
    L->dag->values[v].est_rows = est;
    return v;
}

/* q as num / den with den = 10^k, k <= 6, when that is exactly the double
 * q (a short decimal literal); 0 if none. */
static int q_decimal(double q, int64_t *num, int64_t *den) {
    int64_t d = 1;
    for (int k = 0; k <= 6; k++, d *= 10) {
        double x = q * (double)d;
        int64_t i = (int64_t)llround(x);
        if ((double)i / (double)d == q) {
            *num = i;
            *den = d;
            return 1;
        }
    }
    return 0;
}

/* The index of the wanted value in the sorted vector, per group, from
 * in = {starts, size, cnt}: DISC (which = 0), CONT's lower (1) or upper
 * (2) neighbour; -1 for a group without values. Value id or -1. */
static int q_index(Lower *L, const int *in, AggQuant quant, double q, int which, int64_t est) {
    QProg p = {.n = 0};
    const int I = PRIM_REG_I, F = PRIM_REG_F;
    int start = qi(&p, POP_COL, I, 0, 0, 0, 0, 0);
    int size = qi(&p, POP_COL, I, 0, 0, 0, 1, 0);
    int cnt = qi(&p, POP_COL, I, 0, 0, 0, 2, 0);
    int one = qi(&p, POP_CONST, I, 0, 0, 0, 1, 0);
    int k;
    if (quant == AQ_DISC) {
        int64_t num, den;
        int floored;
        if (q_decimal(q, &num, &den)) {
            int c = qi(&p, POP_CONST, I, 0, 0, 0, den - num, 0);
            int m = qi(&p, POP_MUL, I, cnt, c, 0, 0, 0);
            int d = qi(&p, POP_CONST, I, 0, 0, 0, den, 0);
            floored = qi(&p, POP_DIV, I, m, d, 0, 0, 0);
        } else {
            int nf = qi(&p, POP_I2F, F, cnt, 0, 0, 0, 0);
            int qc = qi(&p, POP_CONST, F, 0, 0, 0, 0, q);
            int nq = qi(&p, POP_MUL, F, nf, qc, 0, 0, 0);
            int df = qi(&p, POP_SUB, F, nf, nq, 0, 0, 0);
            floored = qi(&p, POP_F2I, F, df, 0, 0, 0, 0);
        }
        int r = qi(&p, POP_SUB, I, cnt, floored, 0, 0, 0);
        int lt = qi(&p, POP_LT, I, r, one, 0, 0, 0);
        int mx = qi(&p, POP_CASE, I, lt, one, r, 0, 0);
        k = qi(&p, POP_SUB, I, mx, one, 0, 0, 0);
    } else {
        int n1 = qi(&p, POP_SUB, I, cnt, one, 0, 0, 0);
        int nf = qi(&p, POP_I2F, F, n1, 0, 0, 0, 0);
        int qc = qi(&p, POP_CONST, F, 0, 0, 0, 0, q);
        int rn = qi(&p, POP_MUL, F, nf, qc, 0, 0, 0);
        k = qi(&p, POP_F2I, F, rn, 0, 0, 0, 0); /* floor: rn >= 0 when cnt > 0 */
        if (which == 2) {
            int kf = qi(&p, POP_I2F, F, k, 0, 0, 0, 0);
            int up = qi(&p, POP_LT, F, kf, rn, 0, 0, 0);
            k = qi(&p, POP_ADD, I, k, up, 0, 0, 0);
        }
    }
    int ss = qi(&p, POP_ADD, I, start, size, 0, 0, 0);
    int base = qi(&p, POP_SUB, I, ss, cnt, 0, 0, 0);
    int pos = qi(&p, POP_ADD, I, base, k, 0, 0, 0);
    int zero = qi(&p, POP_CONST, I, 0, 0, 0, 0, 0);
    int some = qi(&p, POP_GT, I, cnt, zero, 0, 0, 0);
    int none = qi(&p, POP_CONST, I, 0, 0, 0, -1, 0);
    int res = qi(&p, POP_CASE, I, some, pos, none, 0, 0);
    return q_map(L, &p, res, I, in, 3, PRIM_I64,
                 which == 0   ? "quantile index"
                 : which == 1 ? "quantile lower index"
                              : "quantile upper index",
                 est);
}

/* The value of xs at each group's index idx (NULL where idx is -1). */
static int q_fetch(Lower *L, int xs, int idx, int64_t est) {
    int v = op_gather(L, xs, idx, est);
    if (v >= 0) L->dag->nodes[L->dag->values[v].producer].gather_nulls = 1;
    return v;
}

int op_quantile(Lower *L, LowState *st, const BAgg *ag, const int *keys, int ng, int starts,
                int64_t est_groups, int *shared, char **label) {
    PlanBuf lb = {0};
    if (ag->quant == AQ_CONT && ag->q == 0.5)
        plan_buf_printf(&lb, "median(%s)", op_expr_label(L, st, ag->arg));
    else
        plan_buf_printf(&lb, "quantile_%s(%s, %g)", ag->quant == AQ_CONT ? "cont" : "disc",
                        op_expr_label(L, st, ag->arg), ag->q);
    *label = plan_strdup(L->arena, lb.s ? lb.s : "quantile");
    free(lb.s);
    if (!*label) return op_fail(L, "out of memory");
    if (ng + 1 > DAG_MAX_IO) return op_fail(L, "too many GROUP BY keys");
    int xs, counts[2];
    if (shared[0] >= 0) { /* an earlier order statistic of the same argument */
        xs = shared[0], counts[0] = shared[1], counts[1] = shared[2];
        goto sorted;
    }
    int x = op_expr(L, st, ag->arg, op_prim_type(ag->arg->type), 0);
    if (x < 0) return -1;
    /* sort (keys, x): the groups in the group-key sort's order, each
     * group's values ascending with its NULLs first */
    int sk[DAG_MAX_IO + 1];
    for (int k = 0; k < ng; k++)
        sk[k] = keys[k];
    sk[ng] = x;
    PrimType i64 = PRIM_I64;
    int sort = plan_dag_add(L->dag, DN_SORT, sk, ng + 1, 1, &i64);
    if (sort < 0) return op_fail(L, "out of memory");
    DagNode *sn = &L->dag->nodes[sort];
    sn->desc = plan_alloc(L->arena, (size_t)(ng + 1));
    sn->est_rows = st->est_rows;
    sn->label = plan_strdup(L->arena, "group keys, quantile argument");
    if (!sn->desc) return op_fail(L, "out of memory");
    xs = op_gather(L, x, plan_dag_out(L->dag, sort, 0), st->est_rows);
    if (xs < 0) return -1;
    /* per group: its non-NULL values and its rows */
    for (int c = 0; c < 2; c++) {
        int in[2] = {starts, xs};
        int node = plan_dag_add(L->dag, DN_SEGREDUCE, in, c == 0 ? 2 : 1, 1, &i64);
        if (node < 0) return op_fail(L, "out of memory");
        DagNode *n = &L->dag->nodes[node];
        n->agg = c == 0 ? AGG_COUNT : AGG_COUNT_STAR;
        n->len_from = xs;
        n->est_rows = est_groups;
        n->label = plan_strdup(L->arena, c == 0 ? "quantile values" : "quantile rows");
        counts[c] = plan_dag_out(L->dag, node, 0);
        L->dag->values[counts[c]].ltype = CAT_INT64;
        L->dag->values[counts[c]].est_rows = est_groups;
    }
    shared[0] = xs, shared[1] = counts[0], shared[2] = counts[1];
sorted:;
    int in[3] = {starts, counts[1], counts[0]};
    if (ag->quant == AQ_DISC) {
        int idx = q_index(L, in, AQ_DISC, ag->q, 0, est_groups);
        int v = idx < 0 ? -1 : q_fetch(L, xs, idx, est_groups);
        if (v < 0) return -1;
        L->dag->values[v].ltype = ag->type;
        L->dag->values[v].dict = ag->arg->dict;
        L->dag->values[v].scale = ag->scale;
        return op_convert(L, v, op_prim_type(ag->type));
    }
    int lo = q_index(L, in, AQ_CONT, ag->q, 1, est_groups);
    int hi = lo < 0 ? -1 : q_index(L, in, AQ_CONT, ag->q, 2, est_groups);
    int vlo = hi < 0 ? -1 : q_fetch(L, xs, lo, est_groups);
    int vhi = vlo < 0 ? -1 : q_fetch(L, xs, hi, est_groups);
    if (vhi < 0) return -1;
    /* lo + (hi - lo) * d, d = r - floor(r); lo itself when d = 0 */
    QProg p = {.n = 0};
    const int I = PRIM_REG_I, F = PRIM_REG_F;
    int a = qi(&p, POP_COL, F, 0, 0, 0, 0, 0);
    int b = qi(&p, POP_COL, F, 0, 0, 0, 1, 0);
    int cnt = qi(&p, POP_COL, I, 0, 0, 0, 2, 0);
    int one = qi(&p, POP_CONST, I, 0, 0, 0, 1, 0);
    int n1 = qi(&p, POP_SUB, I, cnt, one, 0, 0, 0);
    int nf = qi(&p, POP_I2F, F, n1, 0, 0, 0, 0);
    int qc = qi(&p, POP_CONST, F, 0, 0, 0, 0, ag->q);
    int rn = qi(&p, POP_MUL, F, nf, qc, 0, 0, 0);
    int fl = qi(&p, POP_F2I, F, rn, 0, 0, 0, 0);
    int flf = qi(&p, POP_I2F, F, fl, 0, 0, 0, 0);
    int d = qi(&p, POP_SUB, F, rn, flf, 0, 0, 0);
    int delta = qi(&p, POP_SUB, F, b, a, 0, 0, 0);
    int md = qi(&p, POP_MUL, F, delta, d, 0, 0, 0);
    int sum = qi(&p, POP_ADD, F, a, md, 0, 0, 0);
    int zero = qi(&p, POP_CONST, F, 0, 0, 0, 0, 0.0);
    int exact = qi(&p, POP_EQ, F, d, zero, 0, 0, 0);
    int res = qi(&p, POP_CASE, F, exact, a, sum, 0, 0);
    int vin[3] = {vlo, vhi, counts[0]};
    int v = q_map(L, &p, res, F, vin, 3, PRIM_F64, "quantile interpolation", est_groups);
    if (v >= 0) L->dag->values[v].ltype = CAT_FLOAT64;
    return v;
}
