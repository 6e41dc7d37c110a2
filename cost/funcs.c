/*
 * funcs.c -- cost functions: one per DAG node kind and device, from the
 * node's estimated rows and its values' types (the table in cost.h says
 * which bytes and elements each primitive is charged for), and transfers.
 */
#include <string.h>

#include <math.h>

#include <stdint.h>

#include "cost/cost.h"

double cost_prim_us(const CostPrim *p, double elems, double bytes) {
    return p->fixed_us + (elems * p->ns_per_elem + bytes * p->ns_per_byte) / 1000.0;
}

double cost_miss_share(double bytes, double cache_mb) {
    if (bytes <= 0) return 0;
    double c = cache_mb > 0 ? cache_mb * 1048576.0 : 0;
    return bytes / (bytes + c);
}

double cost_link_us(const CostLink *l, double bytes) {
    if (bytes <= 0) return 0;
    return l->latency_us + (l->gbps > 0 ? bytes / (l->gbps * 1e3) : 0);
}

/* The end-to-end scale of device dev's compute estimates (cost.h). */
static double dev_scale(const CostModel *m, DagDevice dev) {
    double x = dev == DEV_GPU ? m->gpu_scale : m->cpu_scale;
    return x > 0 ? x : 1;
}

size_t cost_lock_min_bytes(const CostModel *m) {
    const CostLink *l = &m->h2d_lock, *p = &m->h2d_pageable;
    if (l->gbps <= 0) return SIZE_MAX; /* no lock figures: never lock */
    if (p->gbps <= 0) return 0;
    /* l->lat + B / l->bw <= p->lat + B / p->bw */
    double per_b = 1.0 / (p->gbps * 1e3) - 1.0 / (l->gbps * 1e3); /* us a byte saved */
    double extra = l->latency_us - p->latency_us;
    if (extra <= 0) return 0;
    if (per_b <= 0) return SIZE_MAX;
    double b = extra / per_b;
    return b >= 1e18 ? SIZE_MAX : (size_t)b + 1;
}

double cost_fetch_us(const CostModel *m, double bytes) {
    return bytes < (double)cost_lock_min_bytes(m) ? cost_link_us(&m->h2d_pageable, bytes)
                                                  : cost_link_us(&m->h2d_lock, bytes);
}

int64_t cost_value_rows(const Dag *d, int v) {
    if (v < 0 || v >= d->nvalues) return 0;
    int64_t r = d->values[v].est_rows;
    const DagNode *p = &d->nodes[d->values[v].producer];
    /* outputs whose length is a parameter, not an estimate */
    if (r <= 0 && p->kind == DN_KEYMAP) r = p->km_range;
    if (r <= 0 && p->kind == DN_DENSEAGG && p->dagg) r = p->dagg->ngroups;
    if (r <= 0) r = p->est_rows;
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

int cost_cpu_passes(CostPrimKind k, double key_bytes) {
    switch (k) {
    case CP_SELECT:
    case CP_SCAN:
    case CP_SEGMENTS:
    case CP_KEYMAP:
    case CP_DENSEAGG:
        return 2;
    case CP_JOIN:
        return 3;
    case CP_SORT:
        return 2 + 2 * (int)(key_bytes > 0 ? key_bytes : 1);
    case CP_SLICE:
    case CP_TOTEXT:
        return 0;
    default:
        return 1;
    }
}

/* Thread starts of CPU primitive k over rows rows (cost.h): 0 on the GPU,
 * with one thread, or below COST_PAR_MIN_ROWS. */
static double spawn_us(const CostModel *m, DagDevice dev, CostPrimKind k, double rows,
                       double key_bytes) {
    if (dev == DEV_GPU || m->cpu_threads <= 1 || rows < COST_PAR_MIN_ROWS) return 0;
    return m->cpu_spawn_us * cost_cpu_passes(k, key_bytes);
}

/* 1 if the row ids in value v are in no useful order (a sort's
 * permutation, ids gathered through one, a join's right side), 0 if they
 * ascend (a filter's row ids, segment starts, a join's or cross product's
 * left side; cost.h). */
static int random_ids(const Dag *d, int v) {
    if (v < 0 || v >= d->nvalues) return 0;
    const DagNode *p = &d->nodes[d->values[v].producer];
    switch (p->kind) {
    case DN_SORT:
    case DN_GATHER:
        return 1;
    case DN_JOIN:
        return p->noutputs > 1 && p->outputs[1] == v;
    default:
        return 0;
    }
}

/* 1 if segmented reduce n runs the compensated (Neumaier) sum per row: a
 * float SUM or AVG, or an integer AVG (segreduce.c). */
static int compensated(const Dag *d, const DagNode *n) {
    if (n->ninputs < 2) return 0;
    PrimType t = d->values[n->inputs[1]].type;
    if (n->agg == AGG_AVG) return 1;
    return n->agg == AGG_SUM && (t == PRIM_F32 || t == PRIM_F64);
}

/* Compute time of dense-aggregate node n with the constants c (the table
 * in cost.h): the fact rows it scans (its row-id input, else its first
 * input) times the widths of the inputs it reads at the fact row, plus the
 * dense table; a filter/accumulate step and one probe per dimension per
 * row. Without a spec every input counts as fact-side. */
static double denseagg_us(const CostPrim *c, const Dag *d, const DagNode *n) {
    const PrimDenseAgg *s = n->dagg;
    int ni = n->ninputs < DAG_MAX_IO ? n->ninputs : DAG_MAX_IO;
    uint8_t fact[DAG_MAX_IO] = {0};
    double rows = ni > 0 ? (double)cost_value_rows(d, n->inputs[0]) : 0;
    double groups = n->noutputs > 0 ? (double)cost_value_rows(d, n->outputs[0]) : 0;
    int ndims = 0;
    if (s) {
        if (s->rows >= 0 && s->rows < ni) {
            rows = (double)cost_value_rows(d, n->inputs[s->rows]);
            fact[s->rows] = 1;
        }
        int idx[4 * PRIM_DA_MAX], nidx = 0;
        for (int f = 0; f < s->nranges && f < PRIM_DA_MAX; f++)
            idx[nidx++] = s->range_col[f];
        for (int k = 0; k < s->ndims && k < PRIM_DA_MAX; k++)
            idx[nidx++] = s->dim_fk[k];
        for (int j = 0; j < s->nkeys && j < PRIM_DA_MAX; j++)
            if (s->key_dim[j] < 0) idx[nidx++] = s->key_col[j];
        for (int a = 0; a < s->naggs && a < PRIM_DA_MAX; a++) {
            idx[nidx++] = s->val_a[a];
            if (s->val_op[a] == '+' || s->val_op[a] == '-' || s->val_op[a] == '*')
                idx[nidx++] = s->val_b[a];
        }
        for (int k = 0; k < nidx; k++)
            if (idx[k] >= 0 && idx[k] < ni) fact[idx[k]] = 1;
        ndims = s->ndims;
        groups = (double)s->ngroups;
    } else {
        memset(fact, 1, (size_t)ni);
    }
    double fw = 0;
    for (int k = 0; k < ni; k++)
        if (fact[k]) fw += width(d, n->inputs[k]);
    /* elems: every scanned row's range tests, and for each row that
     * passes them its row count, aggregates and probes (cost.h) */
    double pass = n->da_pass > 0 && (double)n->da_pass < rows ? (double)n->da_pass : rows;
    double tests = s ? rows * s->nranges : 0;
    int naggs = s ? s->naggs : 1;
    return cost_prim_us(&c[CP_DENSEAGG], tests + pass * (1 + ndims + naggs),
                        rows * fw + groups * 8 * n->noutputs);
}

/* A hash join of l and r rows with keys of kw bytes emitting pairs pairs,
 * with the constants c (the table in cost.h): per row of both sides its
 * work, its key, and a 64-byte line for the share of probes that miss a
 * table of 32 bytes per row of the smaller side. */
static double join_us(const CostPrim *c, double cache_mb, double l, double r, double kw,
                      double pairs) {
    double miss = cost_miss_share(32 * (l < r ? l : r), cache_mb);
    return cost_prim_us(&c[CP_JOIN], l + r, (l + r) * (kw + 64 * miss) + pairs * 16);
}

/* The primitive node n runs (CP_COUNT for none) and, for a sort, its key
 * bytes a row in *kb. */
static CostPrimKind node_prim(const Dag *d, const DagNode *n, double *kb) {
    *kb = 0;
    switch (n->kind) {
    case DN_MAP:
        return CP_MAP;
    case DN_SCAN:
        return CP_SCAN;
    case DN_SCATTER:
        return CP_SCATTER;
    case DN_GATHER:
        return CP_GATHER;
    case DN_SORT:
        for (int k = 0; k < n->ninputs; k++)
            *kb += width(d, n->inputs[k]);
        return CP_SORT;
    case DN_SEGMENTS:
        return CP_SEGMENTS;
    case DN_SEGREDUCE:
    case DN_SEGRANK:
        return CP_SEGREDUCE;
    case DN_JOIN:
        return CP_JOIN;
    case DN_CROSS:
        return CP_CROSS;
    case DN_SLICE:
    case DN_CONCAT:
        return CP_SLICE;
    case DN_TOTEXT:
        return CP_TOTEXT;
    case DN_KEYMAP:
        return CP_KEYMAP;
    case DN_DENSEAGG:
        return CP_DENSEAGG;
    case DN_DICTLIKE:
        return CP_MAP;
    default:
        return CP_COUNT;
    }
}

/* Operations per row of a map program: one per instruction, a set probe
 * (POP_INLIST) or a run search (POP_RUNS) one per step of its binary
 * search. */
static double prog_ops(const PrimProgram *p) {
    double ops = 0;
    for (int i = 0; i < p->ninstr; i++) {
        int op = p->code[i].op;
        ops +=
            op == POP_INLIST || op == POP_RUNS ? 1.0 + log2((double)p->code[i].table_n + 1.0) : 1.0;
    }
    return ops > 0 ? ops : 1;
}

/* Compute time of node i on dev without thread starts (cost_node_us). */
static double node_compute_us(const CostModel *m, const Dag *d, int i, DagDevice dev) {
    const DagNode *n = &d->nodes[i];
    const CostPrim *c = dev == DEV_GPU ? m->gpu : m->cpu;
    double cache_mb = dev == DEV_GPU ? m->gpu_cache_mb : m->cpu_cache_mb;
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
        double ops = prog_ops(&n->prog);
        return cost_prim_us(&c[CP_MAP], rows * ops, input_bytes(d, n, rows) + rows * ow);
    }
    case DN_SCAN:
        return cost_prim_us(&c[CP_SCAN], 0, in0 * (width(d, n->inputs[0]) + 8));
    case DN_SCATTER:
        return cost_prim_us(&c[CP_SCATTER], 0, in0 * 9 + out * 8);
    case DN_GATHER: {
        double rows = n->ninputs > 1 ? (double)cost_value_rows(d, n->inputs[1]) : out;
        double miss = n->ninputs > 1 && random_ids(d, n->inputs[1])
                          ? cost_miss_share(cost_value_bytes(d, n->inputs[0]), cache_mb)
                          : 0;
        return cost_prim_us(&c[CP_GATHER], rows * miss, rows * (8 + 2 * ow));
    }
    case DN_SORT: {
        double kb = 0;
        for (int k = 0; k < n->ninputs; k++)
            kb += width(d, n->inputs[k]);
        /* ORDER BY ... LIMIT on the CPU with a range of at most a quarter of
         * the rows (prim_cpu_sort_range): three passes over the first key
         * (bounds, digit counts, compaction), each about two scans' work
         * (the key's image per row; 5M REAL keys on 2 cores: 6 ms), and the
         * sort of the range's rows with the first key's ties (a slack of
         * 1/256 of the rows). The GPU twin from PRIM_GPU_TOPK_MIN_ROWS: the first key
         * read by the bounds, about two histogram passes and the flags, the
         * flags compacted, and the sort of the range's rows plus its slack
         * (65,536 values and a histogram bin, 1/2048 of the rows) */
        int sliced = (n->slice_limit >= 0 || n->slice_offset > 0) && n->ninputs > 0;
        if (sliced && dev == DEV_CPU && in0 >= 256 && out * 4 <= in0) {
            double m = out + 64 + in0 / 256;
            return cost_prim_us(&c[CP_SCAN], 0, 6 * in0 * width(d, n->inputs[0])) +
                   cost_prim_us(&c[CP_SORT], m * kb, m * (kb + 8));
        }
        if (sliced && dev != DEV_CPU && in0 >= PRIM_GPU_TOPK_MIN_ROWS && out * 4 <= in0) {
            double m = out + 65536 + in0 / 2048;
            return cost_prim_us(&c[CP_SCAN], 0, in0 * (4 * width(d, n->inputs[0]) + 2)) +
                   cost_prim_us(&c[CP_SORT], m * kb, m * (kb + 8));
        }
        return cost_prim_us(&c[CP_SORT], in0 * kb, in0 * (kb + 8));
    }
    case DN_SEGMENTS: {
        double kb = 0;
        for (int k = 0; k < n->ninputs; k++)
            kb += width(d, n->inputs[k]);
        return cost_prim_us(&c[CP_SEGMENTS], in0 * n->ninputs + out, in0 * kb + out * 8);
    }
    case DN_SEGREDUCE: {
        double rows = n->ninputs > 1 ? (double)cost_value_rows(d, n->inputs[1])
                                     : (double)cost_value_rows(d, n->len_from);
        double vw = n->ninputs > 1 ? width(d, n->inputs[1]) : 0;
        return cost_prim_us(&c[CP_SEGREDUCE], compensated(d, n) ? rows : 0,
                            in0 * 8 + rows * vw + out * ow);
    }
    case DN_SEGRANK: {
        /* a binary search per row over the starts (cached), one write */
        double rows = (double)cost_value_rows(d, n->len_from);
        return cost_prim_us(&c[CP_SEGREDUCE], 0, in0 * 8 + rows * 8);
    }
    case DN_JOIN: {
        double nr = n->ninputs > 1 ? (double)cost_value_rows(d, n->inputs[1]) : 0;
        double kw = n->ninputs > 0 ? width(d, n->inputs[0]) : 8;
        double pairs = (double)(n->est_rows > 0 ? n->est_rows : 0);
        return join_us(c, cache_mb, in0, nr, kw, pairs);
    }
    case DN_CROSS: {
        double pairs = (double)(n->est_rows > 0 ? n->est_rows : 0);
        return cost_prim_us(&c[CP_CROSS], 0, pairs * 16);
    }
    case DN_SLICE:
    case DN_CONCAT:
        return cost_prim_us(&c[CP_SLICE], 0, 2 * out * ow);
    case DN_TOTEXT:
        if (dev == DEV_GPU) return 1e30;
        return cost_prim_us(&c[CP_TOTEXT], in0, 0);
    case DN_KEYMAP: {
        double range = n->km_range > 0 ? (double)n->km_range : out;
        return cost_prim_us(&c[CP_KEYMAP], 0, range * 8 + input_bytes(d, n, in0) + in0 * 8);
    }
    case DN_DENSEAGG:
        return denseagg_us(c, d, n);
    case DN_DICTLIKE: {
        /* a map over the entries, about one operation per two bytes of
         * text (the matcher's search) */
        const CatDict *dict = n->totext_dict;
        double ents = dict ? (double)dict->n : 0, text = dict ? (double)dict->offsets[dict->n] : 0;
        return cost_prim_us(&c[CP_MAP], ents + text / 2, text + ents * 9);
    }
    }
    return 0;
}

/* The rows node n's primitive splits over threads: a gather's row ids, a
 * segmented reduce's values, a map's length; else its largest input. */
static double par_rows(const Dag *d, const DagNode *n, CostPrimKind k) {
    double rows = 0;
    if (k == CP_GATHER || k == CP_SEGREDUCE)
        rows = n->ninputs > 1     ? (double)cost_value_rows(d, n->inputs[1])
               : n->len_from >= 0 ? (double)cost_value_rows(d, n->len_from)
                                  : 0;
    else if (k == CP_MAP)
        rows = map_rows(d, n);
    else
        for (int j = 0; j < n->ninputs; j++)
            if ((double)cost_value_rows(d, n->inputs[j]) > rows)
                rows = (double)cost_value_rows(d, n->inputs[j]);
    return rows;
}

/* t (a CPU primitive k's time over `rows` rows, fixed cost included) on
 * one thread when rows are too few to split: its variable part times
 * serial_x (cost.h). */
static double serial_us(const CostModel *m, CostPrimKind k, double rows, double t) {
    const CostPrim *c = &m->cpu[k];
    if (m->cpu_threads <= 1 || rows >= COST_PAR_MIN_ROWS || c->serial_x <= 1 || t <= c->fixed_us)
        return t;
    return c->fixed_us + (t - c->fixed_us) * c->serial_x;
}

double cost_node_us(const CostModel *m, const Dag *d, int i, DagDevice dev) {
    const DagNode *n = &d->nodes[i];
    double t = node_compute_us(m, d, i, dev), kb;
    CostPrimKind k = node_prim(d, n, &kb);
    if (k == CP_COUNT || t >= 1e30) return t;
    double rows = par_rows(d, n, k);
    if (dev == DEV_CPU) t = serial_us(m, k, rows, t);
    return (t + spawn_us(m, dev, k, rows, kb)) * dev_scale(m, dev);
}

int cost_node_syncs(const Dag *d, int i) {
    const DagNode *n = &d->nodes[i];
    return n->kind == DN_SCAN || n->kind == DN_SEGMENTS || n->kind == DN_JOIN ||
           (n->kind == DN_MAP && n->prog.as_filter);
}

int cost_node_parallel(const CostModel *m, const Dag *d, int i) {
    double kb;
    CostPrimKind k = node_prim(d, &d->nodes[i], &kb);
    return k != CP_COUNT && m->cpu_threads > 1 && cost_cpu_passes(k, kb) > 0 &&
           par_rows(d, &d->nodes[i], k) >= COST_PAR_MIN_ROWS;
}

/* Widths the aggregation-plan estimate assumes: keys (dimension keys,
 * group keys: INT32, DATE, string codes), aggregate values (INT64,
 * DECIMAL) and row ids. */
#define AGG_KW 4.0
#define AGG_VW 8.0
#define AGG_ID 8.0

/* Gather of rows values of width w (the table in cost.h) through
 * ascending row ids. */
static double gather_us(const CostPrim *c, double rows, double w) {
    return cost_prim_us(&c[CP_GATHER], 0, rows * (AGG_ID + 2 * w));
}

/* Gather of rows values of width w from src_rows rows through random row
 * ids (a permutation, a join's right side), with a cache of cache_mb. */
static double gather_rand_us(const CostPrim *c, double cache_mb, double rows, double w,
                             double src_rows) {
    double miss = cost_miss_share(src_rows * w, cache_mb);
    return cost_prim_us(&c[CP_GATHER], rows * miss, rows * (AGG_ID + 2 * w));
}

/* The sort plan of shape s on the device of constants c (docs/cost.md). */
static double agg_sort_us(const CostPrim *c, double cache_mb, const PlanAggShape *s) {
    double S = s->scanned, J = s->joined, G = s->est_groups;
    int nd = s->ndims, nk = s->nkeys, na = s->naggs;
    /* the fact filter: one select reading the fact columns, interpreting
     * the filters' operations on every row (at least 3: TPC-H Q6's five
     * conjuncts are 19, and the interpreter is compute-bound there: 4.3 ms
     * for 60M rows on the H200 against 0.2 ms for the dense pass) */
    double F = s->filtered > J ? s->filtered : J;
    double ops = s->filter_ops > 3 ? s->filter_ops : 3;
    double t = cost_prim_us(&c[CP_SELECT], S * ops, S * s->fact_bytes + S + F * AGG_ID);
    for (int k = 0; k < nd; k++) {
        /* the first join probes every filtered fact row; later ones fewer,
         * down to J (geometric steps: each dimension filters a share) */
        double P = F * pow(J / (F > 0 ? F : 1), (double)k / nd);
        double O = F * pow(J / (F > 0 ? F : 1), (double)(k + 1) / nd);
        double build = s->dim_rows / nd;
        t += gather_us(c, P, AGG_KW); /* the foreign key at the probe rows */
        t += join_us(c, cache_mb, P, build, AGG_KW, O);
        t += (k + 2) * gather_us(c, O, AGG_ID); /* every slot's row ids through the pairs */
    }
    t += nk * gather_us(c, J, AGG_KW) + na * gather_us(c, J, AGG_VW);
    if (nk > 0) {
        double kb = nk * AGG_KW;
        t += cost_prim_us(&c[CP_SORT], J * kb, J * (kb + 8));
        /* through the permutation: random row ids */
        t += nk * gather_rand_us(c, cache_mb, J, AGG_KW, J) +
             na * gather_rand_us(c, cache_mb, J, AGG_VW, J);
        t += cost_prim_us(&c[CP_SEGMENTS], J * nk + G, J * kb + G * 8);
    }
    t += na * cost_prim_us(&c[CP_SEGREDUCE], 0, G * 8 + J * AGG_VW + G * 8);
    t += nk * gather_us(c, G, AGG_KW);
    return t;
}

/* The dense plan of shape s on the device of constants c (docs/cost.md). */
static double agg_dense_us(const CostPrim *c, const PlanAggShape *s) {
    double S = s->scanned, G = s->est_groups, slots = s->groups;
    int nd = s->ndims, nk = s->nkeys, na = s->naggs;
    double t = 0;
    if (nd > 0) /* one keymap per dimension: keys, row ids, slot writes */
        t += nd * cost_prim_us(&c[CP_KEYMAP], 0,
                               (s->dim_range * 8 + s->dim_rows * (AGG_KW + AGG_ID + 8)) / nd);
    /* elems: the range tests of every scanned row, and the rows that pass
     * the fact filters (as in the sort plan, at least the joined rows)
     * accumulating and probing; the scan is the bytes */
    double F = s->filtered > s->joined ? s->filtered : s->joined;
    if (F > S || F <= 0) F = S;
    t += cost_prim_us(&c[CP_DENSEAGG], S * s->nranges + F * (1 + nd + na),
                      S * s->fact_bytes + slots * 8 * PRIM_DA_NOUT(na));
    /* the non-empty groups (rows per group > 0), then keys and aggregates */
    t += cost_prim_us(&c[CP_SELECT], slots * 3, slots * 8 + slots + G * AGG_ID);
    t += (nk + na) * gather_us(c, G, AGG_VW);
    return t;
}

double cost_agg_plan_us(const CostModel *m, int dense, const PlanAggShape *s, int gpu_ok) {
    /* each device's plan as the placement prices it: scaled, plus the
     * executor's per-query time, so that the plan chosen here for the
     * cheaper device is the one the placement then finds cheaper */
    double best = (dense ? agg_dense_us(m->cpu, s) : agg_sort_us(m->cpu, m->cpu_cache_mb, s)) *
                      dev_scale(m, DEV_CPU) +
                  m->cpu_query_us;
    if (gpu_ok) {
        double g = (dense ? agg_dense_us(m->gpu, s) : agg_sort_us(m->gpu, m->gpu_cache_mb, s)) *
                       dev_scale(m, DEV_GPU) +
                   m->gpu_query_us;
        if (g < best) best = g;
    }
    return best;
}

double cost_select_us(const CostModel *m, const Dag *d, int map, int scatter, DagDevice dev) {
    const DagNode *n = &d->nodes[map];
    const CostPrim *c = dev == DEV_GPU ? m->gpu : m->cpu;
    double rows = map_rows(d, n);
    double ops = prog_ops(&n->prog);
    double sel = (double)cost_value_rows(d, d->nodes[scatter].outputs[0]);
    double t = cost_prim_us(&c[CP_SELECT], rows * ops, input_bytes(d, n, rows) + rows + sel * 8);
    if (dev == DEV_CPU) t = serial_us(m, CP_SELECT, rows, t);
    return (t + spawn_us(m, dev, CP_SELECT, rows, 0)) * dev_scale(m, dev);
}
