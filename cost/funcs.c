/*
 * funcs.c -- cost functions: one per DAG node kind and device, from the
 * node's estimated rows and its values' types (the table in cost.h says
 * which bytes and elements each primitive is charged for), and transfers.
 */
#include "cost/cost.h"

double cost_prim_us(const CostPrim *p, double elems, double bytes) {
    return p->fixed_us + (elems * p->ns_per_elem + bytes * p->ns_per_byte) / 1000.0;
}

double cost_link_us(const CostLink *l, double bytes) {
    if (bytes <= 0) return 0;
    return l->latency_us + (l->gbps > 0 ? bytes / (l->gbps * 1e3) : 0);
}

int64_t cost_value_rows(const Dag *d, int v) {
    if (v < 0 || v >= d->nvalues) return 0;
    int64_t r = d->values[v].est_rows;
    if (r <= 0) r = d->nodes[d->values[v].producer].est_rows;
    return r > 0 ? r : 0;
}

double cost_value_bytes(const Dag *d, int v) {
    if (v < 0 || v >= d->nvalues) return 0;
    return (double)cost_value_rows(d, v) * (double)prim_type_width(d->values[v].type);
}

/* Width in bytes of value v. */
static double width(const Dag *d, int v) {
    return (double)prim_type_width(d->values[v].type);
}

/* Rows a map (or filter) node runs over: its length source, else its first
 * input, else its own estimate. */
static double map_rows(const Dag *d, const DagNode *n) {
    if (n->len_from >= 0) return (double)cost_value_rows(d, n->len_from);
    if (n->ninputs > 0) return (double)cost_value_rows(d, n->inputs[0]);
    return (double)(n->est_rows > 0 ? n->est_rows : 0);
}

/* Bytes of all inputs of n over `rows` rows. */
static double input_bytes(const Dag *d, const DagNode *n, double rows) {
    double b = 0;
    for (int k = 0; k < n->ninputs; k++)
        b += width(d, n->inputs[k]) * rows;
    return b;
}

double cost_node_us(const CostModel *m, const Dag *d, int i, DagDevice dev) {
    const DagNode *n = &d->nodes[i];
    const CostPrim *c = dev == DEV_GPU ? m->gpu : m->cpu;
    double in0 = n->ninputs > 0 ? (double)cost_value_rows(d, n->inputs[0]) : 0;
    double out = n->noutputs > 0 ? (double)cost_value_rows(d, n->outputs[0]) : 0;
    double ow = n->noutputs > 0 ? width(d, n->outputs[0]) : 0;
    switch (n->kind) {
    case DN_SOURCE:
    case DN_CONST:
    case DN_TRANSFER:
        return 0;
    case DN_MAP: {
        double rows = map_rows(d, n);
        double ops = n->prog.ninstr > 0 ? n->prog.ninstr : 1;
        return cost_prim_us(&c[CP_MAP], rows * ops, input_bytes(d, n, rows) + rows * ow);
    }
    case DN_SCAN:
        return cost_prim_us(&c[CP_SCAN], 0, in0 * (width(d, n->inputs[0]) + 8));
    case DN_SCATTER:
        return cost_prim_us(&c[CP_SCATTER], 0, in0 * 9 + out * 8);
    case DN_GATHER: {
        double rows = n->ninputs > 1 ? (double)cost_value_rows(d, n->inputs[1]) : out;
        return cost_prim_us(&c[CP_GATHER], 0, rows * (8 + 2 * ow));
    }
    case DN_SORT: {
        double kb = 0;
        for (int k = 0; k < n->ninputs; k++)
            kb += width(d, n->inputs[k]);
        return cost_prim_us(&c[CP_SORT], in0 * kb, in0 * (kb + 8));
    }
    case DN_SEGMENTS: {
        double kb = 0;
        for (int k = 0; k < n->ninputs; k++)
            kb += width(d, n->inputs[k]);
        return cost_prim_us(&c[CP_SEGMENTS], 0, in0 * kb + out * 8);
    }
    case DN_SEGREDUCE: {
        double rows = n->ninputs > 1 ? (double)cost_value_rows(d, n->inputs[1])
                                     : (double)cost_value_rows(d, n->len_from);
        double vw = n->ninputs > 1 ? width(d, n->inputs[1]) : 0;
        return cost_prim_us(&c[CP_SEGREDUCE], 0, in0 * 8 + rows * vw + out * ow);
    }
    case DN_JOIN: {
        double nr = n->ninputs > 1 ? (double)cost_value_rows(d, n->inputs[1]) : 0;
        double kw = n->ninputs > 0 ? width(d, n->inputs[0]) : 8;
        double pairs = (double)(n->est_rows > 0 ? n->est_rows : 0);
        return cost_prim_us(&c[CP_JOIN], in0 + nr, (in0 + nr) * kw + pairs * 16);
    }
    case DN_CROSS: {
        double pairs = (double)(n->est_rows > 0 ? n->est_rows : 0);
        return cost_prim_us(&c[CP_CROSS], 0, pairs * 16);
    }
    case DN_SLICE:
        return cost_prim_us(&c[CP_SLICE], 0, 2 * out * ow);
    case DN_TOTEXT:
        if (dev == DEV_GPU) return 1e30;
        return cost_prim_us(&c[CP_TOTEXT], in0, 0);
    }
    return 0;
}

double cost_select_us(const CostModel *m, const Dag *d, int map, int scatter, DagDevice dev) {
    const DagNode *n = &d->nodes[map];
    const CostPrim *c = dev == DEV_GPU ? m->gpu : m->cpu;
    double rows = map_rows(d, n);
    double ops = n->prog.ninstr > 0 ? n->prog.ninstr : 1;
    double sel = (double)cost_value_rows(d, d->nodes[scatter].outputs[0]);
    return cost_prim_us(&c[CP_SELECT], rows * ops, input_bytes(d, n, rows) + rows + sel * 8);
}
