/*
 * place.c -- the placement optimizer: DEV_CPU or DEV_GPU per node so that
 * the estimated total time (compute + PCIe transfers) is smallest.
 *
 * State is where each value lives. The objective (total()) mirrors what the
 * executor does:
 *   - a node's output lives on the device it ran on; a source (table
 *     column) is always on the host, and placing it on the GPU means
 *     "fetch it through the column cache" (free when resident, else the
 *     copy, shared with the earlier queries that read the column); a constant placed
 *     on the GPU is a tiny copy;
 *   - a value is copied at most once per direction, when a consumer on the
 *     other side (or the result, which must end on the host) needs it;
 *     device-to-host copies also wait for the device;
 *   - a filter map, its scan and its scatter on one device run fused as
 *     one select primitive (exec.c's fusable_filter);
 *   - a plan with a parallel pass on the CPU wakes the worker pool once
 *     (cpu_wake_us; explain charges it to the first such node);
 *   - the executor's own time per query (gpu_query_us for a plan with a
 *     GPU node, else cpu_query_us; in the plan's total only), and per GPU
 *     node that waits for a count (gpu_sync_node_us, in its estimate).
 * Sources and constants are not searched: they go to the GPU exactly when
 * a consumer runs there (a cached copy is never dearer than a pageable
 * one). DN_TOTEXT stays on the CPU. Every other kind is searched on both
 * devices, keymaps and dense-aggregates included: their inputs (a keymap
 * built on one side, probed on the other) cross PCIe like any value, and
 * each of a dense-aggregate's outputs is copied on its own (one copy and,
 * back to the host, one wait per output, as the executor does).
 *
 * Search: every placement of the free nodes when there are at most
 * exhaustive_max (default 12: 4,096 placements, up to a few ms of
 * planning, which the lower-bound skip avoids for small queries); otherwise a dynamic programme in
 * topological order that keeps, per value, the cheapest way to have it on
 * the host and on the device, followed by local improvement (single-node,
 * fused-chain, prefix and suffix flips) under the exact objective, then
 * compared with all-CPU and all-GPU so the result is never estimated worse
 * than either.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost.h"

#define BIG 1e30

typedef struct Prob {
    const Dag *d;
    const CostModel *m;
    const CostInputs *in;
    int n;
    double *u[2];        /* compute cost per node and device */
    double *sel[2];      /* fused select cost of a filter map */
    int *fscan, *fscat;  /* filter map -> its scan / scatter, else -1 */
    int *fmap;           /* scan / scatter -> its filter map, else -1 */
    double *fetch;       /* source / const on the GPU */
    int *cstart, *clist; /* data consumers of each value (CSR) */
    uint8_t *is_result;
    uint8_t *is_free;
    uint8_t *par;      /* runs parallel passes on the CPU (cost_node_parallel) */
    uint8_t *syncs;    /* waits for a count on the GPU (cost_node_syncs) */
    double *h2d, *d2h; /* per value: its copy to the device / back (with the wait) */
    int *free_idx;
    int nfree;
} Prob;

/* 1 if node kind k is decided by its consumers, not searched. */
static int derived_kind(DagKind k) {
    return k == DN_SOURCE || k == DN_CONST || k == DN_TRANSFER || k == DN_TOTEXT;
}

/* derived_kind of node nd, or a map only the CPU twin runs (on the CPU
 * like to-text: plan_node_cpu_only). */
static int derived_node(const DagNode *nd) {
    return derived_kind(nd->kind) || plan_node_cpu_only(nd);
}

/* Set the derived nodes of dev from the free ones: a source or constant is
 * on the GPU when any consumer is; to-text and transfer on the CPU.
 * Consumers come after producers, so a reverse pass sees them decided. */
static void derive(const Prob *P, DagDevice *dev) {
    const Dag *d = P->d;
    for (int i = P->n - 1; i >= 0; i--) {
        const DagNode *nd = &d->nodes[i];
        if (P->is_free[i]) continue; /* the derived nodes are the others */
        dev[i] = DEV_CPU;
        if (nd->kind != DN_SOURCE && nd->kind != DN_CONST) continue;
        if (!P->in->gpu_available) continue;
        for (int k = 0; k < nd->noutputs; k++) {
            int v = nd->outputs[k];
            for (int c = P->cstart[v]; c < P->cstart[v + 1]; c++)
                if (dev[P->clist[c]] == DEV_GPU) dev[i] = DEV_GPU;
        }
    }
}

/* 1 if a host intermediate of b bytes is page-locked for its copy (the
 * executor's pool: EXEC_PIN_MIN_BYTES .. EXEC_PIN_MAX_BYTES). */
static int pinned_copy(const Prob *P, double b) {
    return P->in->host_pinned && b >= P->in->pin_min_bytes &&
           (P->in->pin_max_bytes <= 0 || b <= P->in->pin_max_bytes);
}

/* Host-to-device copy of value v (pageable from a table column, else as
 * the intermediates are allocated); prob_init keeps it in P->h2d. */
static double h2d_calc(const Prob *P, int v) {
    const Dag *d = P->d;
    int src = d->nodes[d->values[v].producer].kind == DN_SOURCE;
    double b = cost_value_bytes(d, v);
    const CostLink *l = !src && pinned_copy(P, b) ? &P->m->h2d_pinned : &P->m->h2d_pageable;
    return cost_link_us(l, b);
}

/* Device-to-host copy of value v, with the wait for the device; prob_init
 * keeps it in P->d2h. */
static double d2h_calc(const Prob *P, int v) {
    double b = cost_value_bytes(P->d, v);
    const CostLink *l = pinned_copy(P, b) ? &P->m->d2h_pinned : &P->m->d2h_pageable;
    return b > 0 ? cost_link_us(l, b) + P->m->gpu_sync_us : 0;
}

#define h2d_us(P, v) ((P)->h2d[v])
#define d2h_us(P, v) ((P)->d2h[v])

/* 1 if filter map i runs fused with its scan and scatter under dev. */
static int fused(const Prob *P, const DagDevice *dev, int i) {
    return P->fscan[i] >= 0 && dev[P->fscan[i]] == dev[i] && dev[P->fscat[i]] == dev[i];
}

/* Estimated total time (us) of placement dev (derived nodes already set).
 * xfer (may be NULL) receives per node the transfers charged to it: the
 * copies its inputs need, a source's cache fetch, a result's final copy
 * (charged to its producer). */
static double total(const Prob *P, const DagDevice *dev, double *xfer) {
    const Dag *d = P->d;
    double t = 0, wake = 0;
    int any_gpu = 0;
    if (xfer) memset(xfer, 0, sizeof(double) * (size_t)P->n);
    for (int i = 0; i < P->n; i++) {
        const DagNode *nd = &d->nodes[i];
        if (nd->kind == DN_SOURCE || nd->kind == DN_CONST) {
            if (dev[i] == DEV_GPU) {
                t += P->fetch[i];
                if (xfer) xfer[i] += P->fetch[i];
            }
            continue;
        }
        if (P->fmap[i] >= 0 && fused(P, dev, P->fmap[i])) continue;
        t += fused(P, dev, i) ? P->sel[dev[i]][i] : P->u[dev[i]][i];
        if (dev[i] == DEV_GPU && P->syncs[i]) t += P->m->gpu_sync_node_us;
        if (dev[i] == DEV_CPU && P->par[i]) wake = P->m->cpu_wake_us;
        any_gpu |= dev[i] == DEV_GPU;
    }
    t += wake; /* the CPU's workers woken once (cost.h) */
    t += any_gpu ? P->m->gpu_query_us : P->m->cpu_query_us; /* the executor's own time */
    for (int v = 0; v < d->nvalues; v++) {
        int p = d->values[v].producer;
        DagKind pk = d->nodes[p].kind;
        int have_d = dev[p] == DEV_GPU;
        int have_h = dev[p] == DEV_CPU || pk == DN_SOURCE || pk == DN_CONST;
        int first_h = -1, first_d = -1;
        for (int c = P->cstart[v]; c < P->cstart[v + 1]; c++) {
            int q = P->clist[c];
            if (dev[q] == DEV_GPU && first_d < 0) first_d = q;
            if (dev[q] == DEV_CPU && first_h < 0) first_h = q;
        }
        if (first_h < 0 && P->is_result[v]) first_h = p;
        if (first_d >= 0 && !have_d) {
            double c = h2d_us(P, v);
            t += c;
            if (xfer) xfer[first_d] += c;
        }
        if (first_h >= 0 && !have_h) {
            double c = d2h_us(P, v);
            t += c;
            if (xfer) xfer[first_h] += c;
        }
    }
    return t;
}

/* Free the problem's arrays. */
static void prob_free(Prob *P) {
    free(P->u[0]);
    free(P->u[1]);
    free(P->sel[0]);
    free(P->sel[1]);
    free(P->fscan);
    free(P->fscat);
    free(P->fmap);
    free(P->fetch);
    free(P->cstart);
    free(P->clist);
    free(P->is_result);
    free(P->is_free);
    free(P->free_idx);
    free(P->par);
    free(P->syncs);
    free(P->h2d);
    free(P->d2h);
}

/* The copy of bytes to the device for node nd (a source, or a LIKE's
 * dictionary: nd->table / nd->column name the column), shared with the
 * earlier queries that read that column (CostInputs.reads). */
static double shared_fetch_us(const CostModel *m, const CostInputs *in, const DagNode *nd,
                              double bytes) {
    if (nd->table && in->locked && in->locked(in->resident_ud, nd->table, nd->column))
        return cost_link_us(&m->h2d_pinned, bytes);
    int rd = nd->table && in->reads ? in->reads(in->resident_ud, nd->table, nd->column) : 0;
    return cost_fetch_us(m, bytes) / (1.0 + (rd > 0 ? rd : 0));
}

/* Build the problem for dag. Returns 0 or -1 (out of memory). */
static int prob_init(Prob *P, const Dag *d, const CostModel *m, const CostInputs *in) {
    memset(P, 0, sizeof *P);
    P->d = d;
    P->m = m;
    P->in = in;
    int n = P->n = d->nnodes, nv = d->nvalues;
    size_t sn = (size_t)(n ? n : 1), sv = (size_t)(nv ? nv : 1);
    P->u[0] = calloc(sn, sizeof(double));
    P->u[1] = calloc(sn, sizeof(double));
    P->sel[0] = calloc(sn, sizeof(double));
    P->sel[1] = calloc(sn, sizeof(double));
    P->fscan = malloc(sn * sizeof(int));
    P->fscat = malloc(sn * sizeof(int));
    P->fmap = malloc(sn * sizeof(int));
    P->fetch = calloc(sn, sizeof(double));
    P->cstart = calloc(sv + 1, sizeof(int));
    P->is_result = calloc(sv, 1);
    P->is_free = calloc(sn, 1);
    P->free_idx = malloc(sn * sizeof(int));
    P->par = calloc(sn, 1);
    P->syncs = calloc(sn, 1);
    P->h2d = calloc(sv, sizeof(double));
    P->d2h = calloc(sv, sizeof(double));
    int nedges = 0;
    for (int i = 0; i < n; i++)
        nedges += d->nodes[i].ninputs;
    P->clist = malloc(sizeof(int) * (size_t)(nedges ? nedges : 1));
    if (!P->u[0] || !P->u[1] || !P->sel[0] || !P->sel[1] || !P->fscan || !P->fscat || !P->fmap ||
        !P->fetch || !P->cstart || !P->is_result || !P->is_free || !P->free_idx || !P->clist ||
        !P->par || !P->syncs || !P->h2d || !P->d2h) {
        prob_free(P);
        return -1;
    }
    /* consumers of each value (a node reading a value twice counts once
     * per read; harmless) */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < d->nodes[i].ninputs; k++)
            P->cstart[d->nodes[i].inputs[k] + 1]++;
    for (int v = 0; v < nv; v++)
        P->cstart[v + 1] += P->cstart[v];
    int *fill = calloc(sv, sizeof(int));
    if (!fill) {
        prob_free(P);
        return -1;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < d->nodes[i].ninputs; k++) {
            int v = d->nodes[i].inputs[k];
            P->clist[P->cstart[v] + fill[v]++] = i;
        }
    free(fill);
    for (int r = 0; r < d->nresults; r++)
        P->is_result[d->results[r]] = 1;
    for (int v = 0; v < nv; v++) { /* the copies the search prices again and again */
        P->h2d[v] = h2d_calc(P, v);
        P->d2h[v] = d2h_calc(P, v);
    }

    /* uses per value as the executor counts them (inputs, len_from,
     * results), for the fusion pattern */
    int *nuse = calloc(sv, sizeof(int));
    if (!nuse) {
        prob_free(P);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < d->nodes[i].ninputs; k++)
            nuse[d->nodes[i].inputs[k]]++;
        if (d->nodes[i].len_from >= 0) nuse[d->nodes[i].len_from]++;
    }
    for (int r = 0; r < d->nresults; r++)
        nuse[d->results[r]]++;
    for (int i = 0; i < n; i++)
        P->fscan[i] = P->fscat[i] = P->fmap[i] = -1;
    for (int i = 0; i < n; i++) {
        const DagNode *mn = &d->nodes[i];
        if (mn->kind != DN_MAP || !mn->prog.as_filter || nuse[mn->outputs[0]] != 2) continue;
        int flags = mn->outputs[0];
        for (int s = i + 1; s < n; s++) {
            const DagNode *sn = &d->nodes[s];
            if (sn->kind != DN_SCAN || sn->inputs[0] != flags) continue;
            int offs = sn->outputs[0];
            if (nuse[offs] != 1) break;
            for (int c = s + 1; c < n; c++) {
                const DagNode *cn = &d->nodes[c];
                if (cn->kind == DN_SCATTER && cn->count_from == s && cn->inputs[0] == flags &&
                    cn->inputs[1] == offs) {
                    P->fscan[i] = s, P->fscat[i] = c;
                    P->fmap[s] = P->fmap[c] = i;
                    break;
                }
            }
            break;
        }
    }
    free(nuse);

    for (int i = 0; i < n; i++) {
        const DagNode *nd = &d->nodes[i];
        P->u[DEV_CPU][i] = cost_node_us(m, d, i, DEV_CPU);
        P->u[DEV_GPU][i] = cost_node_us(m, d, i, DEV_GPU);
        if (P->fscan[i] >= 0) {
            P->sel[DEV_CPU][i] = cost_select_us(m, d, i, P->fscat[i], DEV_CPU);
            P->sel[DEV_GPU][i] = cost_select_us(m, d, i, P->fscat[i], DEV_GPU);
        }
        if (nd->kind == DN_SOURCE) {
            int res = in->resident && in->resident(in->resident_ud, nd->table, nd->column);
            /* a column that is not resident is copied as the executor's
             * column cache does it (cost_fetch_us: page-locked and pinned
             * above the crossover, else pageable), the copy shared with the
             * earlier queries that read it (CostInputs.reads) */
            P->fetch[i] = res ? 0 : shared_fetch_us(m, in, nd, cost_value_bytes(d, nd->outputs[0]));
        } else if (nd->kind == DN_CONST) {
            P->fetch[i] = cost_link_us(&m->h2d_pinned, cost_value_bytes(d, nd->outputs[0]));
        } else if (nd->kind == DN_DICTLIKE && nd->totext_dict) {
            /* on the GPU it reads the dictionary's cached copy: copied
             * there first unless resident */
            const CatDict *dict = nd->totext_dict;
            if (!(in->dict_resident && in->dict_resident(in->resident_ud, dict)))
                P->u[DEV_GPU][i] += shared_fetch_us(
                    m, in, nd, (double)dict->offsets[dict->n] + 8.0 * (double)(dict->n + 1));
        }
        if (!derived_node(nd)) {
            P->par[i] = (uint8_t)cost_node_parallel(m, d, i);
            P->syncs[i] = (uint8_t)cost_node_syncs(d, i);
            P->is_free[i] = 1;
            P->free_idx[P->nfree++] = i;
        }
    }
    return 0;
}

double cost_dag_total(const Dag *dag, const CostModel *m, const CostInputs *in,
                      const DagDevice *dev) {
    Prob P;
    if (prob_init(&P, dag, m, in) != 0) return BIG;
    double t = total(&P, dev, NULL);
    prob_free(&P);
    return t;
}

/* A lower bound of every placement's total: each free node (a fused
 * chain as one) at its cheaper device, no transfers, no syncs, the
 * cheaper per-query constant. */
static double lower_bound(const Prob *P) {
    double t = P->m->cpu_query_us < P->m->gpu_query_us ? P->m->cpu_query_us : P->m->gpu_query_us;
    for (int k = 0; k < P->nfree; k++) {
        int i = P->free_idx[k];
        if (P->fmap[i] >= 0) continue; /* a scan or scatter: with its map */
        double parts = P->u[0][i] < P->u[1][i] ? P->u[0][i] : P->u[1][i];
        if (P->fscan[i] >= 0) {
            int s = P->fscan[i], c = P->fscat[i];
            parts += (P->u[0][s] < P->u[1][s] ? P->u[0][s] : P->u[1][s]) +
                     (P->u[0][c] < P->u[1][c] ? P->u[0][c] : P->u[1][c]);
            double sel = P->sel[0][i] < P->sel[1][i] ? P->sel[0][i] : P->sel[1][i];
            if (sel < parts) parts = sel;
        }
        t += parts;
    }
    return t;
}

/* 1 when no mixed placement can clear the margins against the better
 * uniform plan (cost_place's final test), so the search can be skipped. */
static int no_mixed_can_win(const Prob *P, const CostInputs *in, const CostPlan *pl) {
    if (in->force || !in->gpu_available) return 0;
    double best = pl->all_gpu_us < pl->all_cpu_us ? pl->all_gpu_us : pl->all_cpu_us;
    double lb = lower_bound(P);
    return lb > in->mixed_margin * best || best - lb < in->mixed_min_us;
}

/* Every free node on device u (the derived ones follow) into dev. Returns
 * the placement's total. */
static double uniform(const Prob *P, DagDevice *dev, DagDevice u) {
    for (int k = 0; k < P->nfree; k++)
        dev[P->free_idx[k]] = u;
    derive(P, dev);
    return total(P, dev, NULL);
}

/* Every placement of the free nodes; best into best. Returns its cost. */
static double exhaustive(const Prob *P, DagDevice *best, DagDevice *work) {
    double bt = BIG;
    uint32_t lim = (uint32_t)1 << P->nfree;
    for (uint32_t mask = 0; mask < lim; mask++) {
        for (int k = 0; k < P->nfree; k++)
            work[P->free_idx[k]] = (mask >> k & 1) ? DEV_GPU : DEV_CPU;
        derive(P, work);
        double t = total(P, work, NULL);
        if (t < bt) {
            bt = t;
            memcpy(best, work, sizeof(DagDevice) * (size_t)P->n);
        }
    }
    return bt;
}

/* The dynamic programme (see the file comment) into dev. Returns 0 or -1
 * (out of memory). */
static int dp(const Prob *P, DagDevice *dev) {
    const Dag *d = P->d;
    size_t sn = (size_t)(P->n ? P->n : 1), sv = (size_t)(d->nvalues ? d->nvalues : 1);
    double *c[2] = {malloc(sn * sizeof(double)), malloc(sn * sizeof(double))};
    double *best[2] = {malloc(sv * sizeof(double)), malloc(sv * sizeof(double))};
    uint8_t *want = calloc(sv, 1); /* bit 0: needed on host, bit 1: on device */
    int rc = -1;
    if (!c[0] || !c[1] || !best[0] || !best[1] || !want) goto out;
    for (int i = 0; i < P->n; i++) {
        const DagNode *nd = &d->nodes[i];
        if (nd->kind == DN_SOURCE || nd->kind == DN_CONST) {
            c[0][i] = 0;
            c[1][i] = P->fetch[i];
            for (int k = 0; k < nd->noutputs; k++) {
                best[0][nd->outputs[k]] = 0;
                best[1][nd->outputs[k]] = P->fetch[i];
            }
            continue;
        }
        for (int dv = 0; dv < 2; dv++) {
            double s = P->u[dv][i];
            /* (to-text, a CPU-only map and a transfer: the nodes not free) */
            if (dv == DEV_GPU && !P->is_free[i]) s = BIG;
            for (int k = 0; k < nd->ninputs; k++)
                s += best[dv][nd->inputs[k]];
            c[dv][i] = s;
        }
        for (int k = 0; k < nd->noutputs; k++) {
            int v = nd->outputs[k];
            best[0][v] = c[0][i] < c[1][i] + d2h_us(P, v) ? c[0][i] : c[1][i] + d2h_us(P, v);
            best[1][v] = c[1][i] < c[0][i] + h2d_us(P, v) ? c[1][i] : c[0][i] + h2d_us(P, v);
        }
    }
    for (int r = 0; r < d->nresults; r++)
        want[d->results[r]] |= 1;
    for (int i = P->n - 1; i >= 0; i--) {
        const DagNode *nd = &d->nodes[i];
        double cost[2] = {c[0][i], c[1][i]};
        for (int k = 0; k < nd->noutputs; k++) {
            int v = nd->outputs[k];
            if (want[v] & 2) cost[0] += h2d_us(P, v);
            if (want[v] & 1) cost[1] += d2h_us(P, v);
        }
        dev[i] = cost[1] < cost[0] ? DEV_GPU : DEV_CPU;
        for (int k = 0; k < nd->ninputs; k++)
            want[nd->inputs[k]] |= dev[i] == DEV_GPU ? 2 : 1;
    }
    derive(P, dev);
    rc = 0;
out:
    free(c[0]);
    free(c[1]);
    free(best[0]);
    free(best[1]);
    free(want);
    return rc;
}

/* Try candidate cand (derived, cost evaluated) against cur; keep the
 * better. Returns 1 if cand was kept. */
static int try_keep(const Prob *P, DagDevice *cur, double *tcur, DagDevice *cand) {
    /* a prefix or suffix run that is already cur's (most of them once the
     * search settles) needs no pricing */
    if (memcmp(cand, cur, sizeof(DagDevice) * (size_t)P->n) == 0) return 0;
    derive(P, cand);
    double t = total(P, cand, NULL);
    if (t < *tcur - 1e-9) {
        *tcur = t;
        memcpy(cur, cand, sizeof(DagDevice) * (size_t)P->n);
        return 1;
    }
    return 0;
}

/* Local improvement of cur under the exact objective (see the file
 * comment). Returns the final cost. */
static double improve(const Prob *P, DagDevice *cur, DagDevice *cand) {
    size_t bytes = sizeof(DagDevice) * (size_t)P->n;
    derive(P, cur);
    double t = total(P, cur, NULL);
    /* TUNING: every candidate costs O(n); on large DAGs (select5's 64-way
     * joins lower to ~500 nodes) the full search took seconds per query on
     * the H100 machine, so big DAGs get two rounds of single flips only */
    int big = P->nfree > 64;
    int max_rounds = big ? 2 : 50;
    for (int round = 0, changed = 1; changed && round < max_rounds; round++) {
        changed = 0;
        for (int k = 0; k < P->nfree; k++) {
            int i = P->free_idx[k];
            memcpy(cand, cur, bytes);
            cand[i] = cur[i] == DEV_GPU ? DEV_CPU : DEV_GPU;
            if (P->fscan[i] >= 0) { /* the fused chain together */
                cand[P->fscan[i]] = cand[P->fscat[i]] = cand[i];
                changed |= try_keep(P, cur, &t, cand);
                memcpy(cand, cur, bytes);
                cand[i] = cur[i] == DEV_GPU ? DEV_CPU : DEV_GPU;
            }
            changed |= try_keep(P, cur, &t, cand);
            for (int dv = 0; dv < 2 && !big; dv++) { /* prefix and suffix runs */
                memcpy(cand, cur, bytes);
                for (int q = 0; q <= k; q++)
                    cand[P->free_idx[q]] = (DagDevice)dv;
                changed |= try_keep(P, cur, &t, cand);
                memcpy(cand, cur, bytes);
                for (int q = k; q < P->nfree; q++)
                    cand[P->free_idx[q]] = (DagDevice)dv;
                changed |= try_keep(P, cur, &t, cand);
            }
        }
    }
    return t;
}

/* Reason text for node i under placement dev (cost tot), in the arena. */
static void set_reason(const Prob *P, Dag *dag, int i, DagDevice *dev, double tot, DagDevice *cand,
                       const double *xfer) {
    DagNode *nd = &dag->nodes[i];
    char buf[256];
    const char *on = dev[i] == DEV_GPU ? "GPU" : "CPU", *off = dev[i] == DEV_GPU ? "CPU" : "GPU";
    const char *cpu_only = !plan_node_cpu_only(nd) ? NULL
                           : nd->kind == DN_TOTEXT ? "to-text runs on the CPU only"
                                                   : "a math function: the CPU twin only";
    if (P->in->force) {
        snprintf(buf, sizeof buf, "forced: --device %s", P->in->force == 2 ? "gpu" : "cpu");
        if (cpu_only) snprintf(buf, sizeof buf, "%s", cpu_only);
    } else if (!P->in->gpu_available) {
        snprintf(buf, sizeof buf, "no GPU");
    } else if (cpu_only) {
        snprintf(buf, sizeof buf, "%s", cpu_only);
    } else if (nd->kind == DN_SOURCE) {
        if (dev[i] == DEV_CPU)
            snprintf(buf, sizeof buf, "host column; no GPU reader");
        else if (P->fetch[i] == 0)
            snprintf(buf, sizeof buf, "resident on the GPU");
        else
            snprintf(buf, sizeof buf, "not resident: copy %.3f ms", P->fetch[i] / 1e3);
    } else if (nd->kind == DN_CONST || nd->kind == DN_TRANSFER) {
        snprintf(buf, sizeof buf, "%s", dev[i] == DEV_GPU ? "read on the GPU" : "host");
    } else if (P->fmap[i] >= 0 && fused(P, dev, P->fmap[i])) {
        snprintf(buf, sizeof buf, "fused into the select of #%d", P->fmap[i]);
    } else {
        int fz = fused(P, dev, i);
        double mine = fz ? P->sel[dev[i]][i] : P->u[dev[i]][i];
        double other = P->fscan[i] >= 0 ? P->sel[!dev[i]][i] : P->u[!dev[i]][i];
        double delta = 0;
        if (P->nfree <= 64) { /* the exact price of flipping this node */
            memcpy(cand, dev, sizeof(DagDevice) * (size_t)P->n);
            cand[i] = dev[i] == DEV_GPU ? DEV_CPU : DEV_GPU;
            if (P->fscan[i] >= 0) cand[P->fscan[i]] = cand[P->fscat[i]] = cand[i];
            derive(P, cand);
            delta = total(P, cand, NULL) - tot; /* >= 0 at an optimum */
        }
        double xdiff = delta - (other - mine); /* extra transfer time of flipping */
        const char *pre = fz ? "select: " : "";
        if (P->nfree > 64)
            snprintf(buf, sizeof buf, "%s%s %.3f ms vs %s %.3f ms (DP placement over %d nodes)",
                     pre, on, mine / 1e3, off, other / 1e3, P->nfree);
        else if (other < mine)
            snprintf(buf, sizeof buf, "%stransfers %.3f ms > %s saving %.3f ms", pre, xdiff / 1e3,
                     off, (mine - other) / 1e3);
        else if (xfer[i] > 0)
            snprintf(buf, sizeof buf, "%s%s %.3f ms < %s %.3f ms (inputs moved %.3f ms)", pre, on,
                     mine / 1e3, off, other / 1e3, xfer[i] / 1e3);
        else
            snprintf(buf, sizeof buf, "%s%s %.3f ms < %s %.3f ms", pre, on, mine / 1e3, off,
                     other / 1e3);
    }
    nd->reason = plan_strdup(dag->arena, buf);
}

int cost_place(Dag *dag, const CostModel *m, const CostInputs *in_, CostPlan *plan, char *err,
               size_t cap) {
    CostInputs in = *in_;
    if (in.exhaustive_max == 0) in.exhaustive_max = 12;
    if (in.force == 2) in.gpu_available = 1; /* priced as asked */
    Prob P;
    if (prob_init(&P, dag, m, &in) != 0) {
        snprintf(err, cap, "Cost Error: out of memory");
        return -1;
    }
    size_t sn = (size_t)(P.n ? P.n : 1);
    DagDevice *dev = malloc(sn * sizeof(DagDevice)), *cand = malloc(sn * sizeof(DagDevice));
    double *xfer = malloc(sn * sizeof(double));
    if (!dev || !cand || !xfer) {
        free(dev);
        free(cand);
        free(xfer);
        prob_free(&P);
        snprintf(err, cap, "Cost Error: out of memory");
        return -1;
    }
    CostPlan pl;
    memset(&pl, 0, sizeof pl);
    pl.free_nodes = P.nfree;
    pl.all_cpu_us = uniform(&P, dev, DEV_CPU);
    if (in.gpu_available) pl.all_gpu_us = uniform(&P, dev, DEV_GPU);
    /* the better uniform placement */
    const DagDevice better = in.gpu_available && pl.all_gpu_us < pl.all_cpu_us ? DEV_GPU : DEV_CPU;
    double t;
    if (in.force == 1 || in.force == 2) {
        t = uniform(&P, dev, in.force == 2 ? DEV_GPU : DEV_CPU);
    } else if (!in.gpu_available || P.nfree == 0 || pl.all_cpu_us <= m->gpu_query_us) {
        /* (every plan with a GPU node pays gpu_query_us: when the all-CPU
         * plan costs no more, it is the optimum, and tiny queries skip the
         * search) */
        t = uniform(&P, dev, DEV_CPU);
    } else if (in.mixed_margin > 0 && no_mixed_can_win(&P, &in, &pl)) {
        /* a mixed plan is kept only when it clears the margins, which no
         * plan can here: the better uniform plan, without the search (it
         * took 1-2 ms for a 15-node GROUP BY over 1,000 rows that runs in
         * 0.02 ms) */
        t = uniform(&P, dev, better);
    } else if (in.exhaustive_max > 0 && P.nfree <= in.exhaustive_max && P.nfree < 31) {
        t = exhaustive(&P, dev, cand);
        pl.exhaustive = 1;
    } else {
        if (dp(&P, dev) != 0) {
            free(dev);
            free(cand);
            free(xfer);
            prob_free(&P);
            snprintf(err, cap, "Cost Error: out of memory");
            return -1;
        }
        /* TUNING: local search costs O(n) per candidate; on large DAGs
         * (select5's 64-way joins lower to ~500 nodes) it took ~20 ms per
         * query, so beyond 64 free nodes the DP result only competes with
         * the two uniform placements */
        int big = P.nfree > 64;
        t = big ? (derive(&P, dev), total(&P, dev, NULL)) : improve(&P, dev, cand);
        /* the result is never worse than either uniform placement.
         * TUNING: local search restarted from each of them as well found
         * no cheaper plan for any TPC-H, SSB or seed 004 query (resident
         * and cold columns, the H200 model) and made up two thirds of the
         * placement's time (TPC-H Q5: 1.1 ms, 2,294 plans priced) */
        for (int dv = 0; dv < 2; dv++) {
            double ta = dv == DEV_GPU ? pl.all_gpu_us : pl.all_cpu_us;
            if (dv == DEV_GPU && !in.gpu_available) continue;
            if (ta < t - 1e-9) {
                t = uniform(&P, dev, (DagDevice)dv);
            }
        }
    }
    if (!in.force && in.gpu_available && in.mixed_margin > 0 && P.nfree > 0) {
        /* TUNING: every crossing costs more than the model sees (stream
         * syncs, waking the other side); in the placement sweep on the H100
         * most of auto's misses were mixed plans slower than the better
         * uniform one, so a mixed plan must be estimated clearly cheaper:
         * by a share (mixed_margin) and by an amount (mixed_min_us) */
        int ngpu = 0;
        for (int k = 0; k < P.nfree; k++)
            ngpu += dev[P.free_idx[k]] == DEV_GPU;
        double best = pl.all_gpu_us < pl.all_cpu_us ? pl.all_gpu_us : pl.all_cpu_us;
        if (ngpu > 0 && ngpu < P.nfree &&
            (t > in.mixed_margin * best || best - t < in.mixed_min_us)) {
            t = uniform(&P, dev, better);
            pl.uniform_by_margin = 1;
        }
    }
    total(&P, dev, xfer);
    int woke = 0; /* the first parallel CPU node carries the pool's wake-up */
    for (int i = 0; i < P.n; i++) {
        DagNode *nd = &dag->nodes[i];
        nd->device = dev[i];
        int fz = P.fscan[i] >= 0 && fused(&P, dev, i);
        int part = P.fmap[i] >= 0 && fused(&P, dev, P.fmap[i]);
        if (nd->kind == DN_SOURCE || nd->kind == DN_CONST) {
            nd->est_cost_cpu = 0;
            nd->est_cost_gpu = P.fetch[i] / 1e3;
        } else {
            nd->est_cost_cpu = part ? 0 : (fz ? P.sel[0][i] : P.u[0][i]) / 1e3;
            nd->est_cost_gpu = part ? 0 : (fz ? P.sel[1][i] : P.u[1][i]) / 1e3;
            if (plan_node_cpu_only(nd)) nd->est_cost_gpu = 0;
            if (P.syncs[i] && !part) nd->est_cost_gpu += m->gpu_sync_node_us / 1e3;
            if (P.par[i] && !part) {
                if (dev[i] == DEV_CPU && !woke) nd->est_cost_cpu += m->cpu_wake_us / 1e3;
                woke |= dev[i] == DEV_CPU;
            }
        }
        nd->est_cost_xfer = xfer[i] / 1e3;
        set_reason(&P, dag, i, dev, t, cand, xfer);
    }
    pl.total_us = t;
    if (plan) *plan = pl;
    free(dev);
    free(cand);
    free(xfer);
    prob_free(&P);
    return 0;
}
