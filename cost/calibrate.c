/*
 * calibrate.c -- `gqp calibrate`: microbenchmarks of every primitive on
 * each device at several sizes, a least-squares fit of each primitive's
 * constants (slopes from the large sizes, the fixed cost from the
 * smallest on the CPU and the median over all sizes on the GPU), and the
 * transfers (pinned bandwidth from prim_gpu_bandwidth, pageable and
 * small-copy latency timed here, and the two ways a cold table column
 * reaches the GPU -- a pageable copy, or page-lock + pinned copy -- timed
 * at sizes from 64 KiB to 256 MiB and fitted as latency + bytes / rate). The YAML it writes is what
 * cost_model_load reads, plus the raw points.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cost/cost.h"

#define MAX_POINTS 64

typedef struct Point {
    int gpu;
    CostPrimKind prim;
    int64_t rows;
    double elems, bytes, us;
} Point;

/* One timed host-to-device copy of a cold column (measure_links). */
typedef struct LinkPoint {
    const char *link; /* "h2d_pageable" or "h2d_lock" */
    double bytes, us;
} LinkPoint;

#define MAX_LINK_POINTS 32

typedef struct Cal {
    Point pts[CP_COUNT * 2 * MAX_POINTS];
    int npts;
    LinkPoint lpts[MAX_LINK_POINTS];
    int nlpts;
    PrimCtx h, d;
    void *stream;
    void (*progress)(void *ud, const char *line);
    void *ud;
    double cache_mb[2]; /* CPU last-level cache, GPU L2 (miss() in cost.h) */
    double spawn_us;    /* one parallel pass on the CPU (cost.h), 0 with one thread */
} Cal;

int cost_fit(const double *X, const double *y, int n, int k, double *beta) {
    int active[8], na = k;
    if (k > 8) return -1;
    for (int j = 0; j < k; j++)
        active[j] = 1;
    for (int iter = 0; iter < k + 1; iter++) {
        double A[8][9];
        int idx[8], m = 0;
        for (int j = 0; j < k; j++)
            if (active[j]) idx[m++] = j;
        for (int a = 0; a < m; a++) {
            for (int b = 0; b < m; b++) {
                double s = 0;
                for (int i = 0; i < n; i++)
                    s += X[i * k + idx[a]] * X[i * k + idx[b]];
                A[a][b] = s;
            }
            double s = 0;
            for (int i = 0; i < n; i++)
                s += X[i * k + idx[a]] * y[i];
            A[a][m] = s;
        }
        for (int c = 0; c < m; c++) { /* Gauss-Jordan with partial pivoting */
            int piv = c;
            for (int r = c + 1; r < m; r++)
                if (fabs(A[r][c]) > fabs(A[piv][c])) piv = r;
            if (fabs(A[piv][c]) < 1e-300) return -1;
            for (int q = 0; q <= m; q++) {
                double t = A[c][q];
                A[c][q] = A[piv][q];
                A[piv][q] = t;
            }
            for (int r = 0; r < m; r++) {
                if (r == c) continue;
                double f = A[r][c] / A[c][c];
                for (int q = c; q <= m; q++)
                    A[r][q] -= f * A[c][q];
            }
        }
        for (int j = 0; j < k; j++)
            beta[j] = 0;
        int neg = -1;
        for (int a = 0; a < m; a++) {
            beta[idx[a]] = A[a][m] / A[a][a];
            if (beta[idx[a]] < 0 && (neg < 0 || beta[idx[a]] < beta[neg])) neg = idx[a];
        }
        if (neg < 0) return 0;
        active[neg] = 0; /* clamp the most negative at 0 and refit */
        if (--na == 0) {
            for (int j = 0; j < k; j++)
                beta[j] = 0;
            return 0;
        }
    }
    return 0;
}

/* Wall clock in microseconds. */
static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Host allocator for the CPU twins. */
static void *h_alloc(void *ud, size_t bytes) {
    (void)ud;
    return malloc(bytes ? bytes : 1);
}

/* Release of h_alloc. */
static void h_free(void *ud, void *p) {
    (void)ud;
    free(p);
}

/* Device allocator for the GPU twins (ud: the stream). */
static void *d_alloc(void *ud, size_t bytes) {
    return prim_gpu_malloc(bytes ? bytes : 1, ud);
}

/* Release of d_alloc. */
static void d_free(void *ud, void *p) {
    prim_gpu_free(p, ud);
}

/* The buffers of one size, on the host or the device. */
typedef struct Bufs {
    int64_t n;
    int32_t *vals;   /* uniform 0..99 */
    int64_t *keys;   /* a permutation of 0..n-1 (join keys, unique) */
    uint8_t *flags;  /* vals > 49 */
    int64_t *offs;   /* scan of flags */
    int64_t *idx;    /* random row ids */
    int64_t *starts; /* segment starts, 1000 rows per segment */
    int64_t nseg;
    int32_t *skeys; /* sorted group keys: row / 1000 (segments `starts`) */
    float *fvals;   /* random floats in [-128, 128) (compensated SUM, sort keys) */
    int32_t *bkeys; /* a small join build side: CAL_DIM keys 0..CAL_DIM-1 */
    void *out;      /* 8n bytes */
    uint8_t *outv;  /* n validity bytes */
    /* dense-aggregate: a dimension of CAL_DIM rows keyed 0..CAL_DIM-1 */
    int64_t *dmap;  /* its keymap: row i, every tenth key filtered out (-1) */
    int32_t *dattr; /* its group key: row % 7 */
    int64_t *dout;  /* PRIM_DA_NOUT(1) outputs of CAL_GROUPS groups */
} Bufs;

/* The dense-aggregate benchmark's dimension rows and group slots. */
#define CAL_DIM 100
#define CAL_GROUPS 8

/* Free b (device memory when gpu). */
static void bufs_free(Bufs *b, int gpu, void *stream) {
    void *p[] = {b->vals,  b->keys,  b->flags, b->offs, b->idx,  b->starts, b->skeys,
                 b->fvals, b->bkeys, b->out,   b->outv, b->dmap, b->dattr,  b->dout};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) {
        if (gpu)
            prim_gpu_free(p[i], stream);
        else
            free(p[i]);
    }
    memset(b, 0, sizeof *b);
}

/* Host buffers of n rows, deterministic contents. Returns 0 or -1. */
static int bufs_host(Bufs *b, int64_t n) {
    memset(b, 0, sizeof *b);
    b->n = n;
    size_t sn = (size_t)n;
    b->vals = malloc(sn * 4);
    b->keys = malloc(sn * 8);
    b->flags = malloc(sn);
    b->offs = malloc(sn * 8);
    b->idx = malloc(sn * 8);
    b->nseg = (n + 999) / 1000;
    b->starts = malloc((size_t)b->nseg * 8);
    b->skeys = malloc(sn * 4);
    b->fvals = malloc(sn * 4);
    b->bkeys = malloc(CAL_DIM * 4);
    b->out = malloc(sn * 8);
    b->outv = malloc(sn);
    b->dmap = malloc(CAL_DIM * 8);
    b->dattr = malloc(CAL_DIM * 4);
    b->dout = malloc(PRIM_DA_NOUT(1) * CAL_GROUPS * 8);
    if (!b->vals || !b->keys || !b->flags || !b->offs || !b->idx || !b->starts || !b->skeys ||
        !b->fvals || !b->bkeys || !b->out || !b->outv || !b->dmap || !b->dattr || !b->dout) {
        bufs_free(b, 0, NULL);
        return -1;
    }
    for (int i = 0; i < CAL_DIM; i++) {
        b->dmap[i] = i % 10 == 9 ? -1 : i;
        b->dattr[i] = i % 7;
        b->bkeys[i] = i;
    }
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    int64_t acc = 0;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        b->vals[i] = (int32_t)(s % 100);
        b->fvals[i] = (float)(s >> 40) / 65536.0f - 128.0f; /* -128 .. 128, 24 bits */
        b->skeys[i] = (int32_t)(i / 1000);
        b->flags[i] = b->vals[i] > 49;
        b->offs[i] = acc;
        acc += b->flags[i];
        b->idx[i] = (int64_t)((s >> 20) % (uint64_t)n);
        b->keys[i] = i;
    }
    for (int64_t i = n - 1; i > 0; i--) { /* shuffle the keys */
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        int64_t j = (int64_t)(s % (uint64_t)(i + 1)), t = b->keys[i];
        b->keys[i] = b->keys[j];
        b->keys[j] = t;
    }
    for (int64_t g = 0; g < b->nseg; g++)
        b->starts[g] = g * 1000;
    return 0;
}

/* Device copies of host buffers h. Returns 0 or -1. */
static int bufs_dev(Bufs *d, const Bufs *h, void *stream, char *err, size_t cap) {
    memset(d, 0, sizeof *d);
    d->n = h->n;
    d->nseg = h->nseg;
    size_t sn = (size_t)h->n;
    struct {
        void **dst;
        const void *src;
        size_t bytes;
    } c[] = {{(void **)&d->vals, h->vals, sn * 4},
             {(void **)&d->keys, h->keys, sn * 8},
             {(void **)&d->flags, h->flags, sn},
             {(void **)&d->offs, h->offs, sn * 8},
             {(void **)&d->idx, h->idx, sn * 8},
             {(void **)&d->starts, h->starts, (size_t)h->nseg * 8},
             {(void **)&d->skeys, h->skeys, sn * 4},
             {(void **)&d->fvals, h->fvals, sn * 4},
             {(void **)&d->bkeys, h->bkeys, CAL_DIM * 4},
             {(void **)&d->out, NULL, sn * 8},
             {(void **)&d->outv, NULL, sn},
             {(void **)&d->dmap, h->dmap, CAL_DIM * 8},
             {(void **)&d->dattr, h->dattr, CAL_DIM * 4},
             {(void **)&d->dout, NULL, PRIM_DA_NOUT(1) * CAL_GROUPS * 8}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        *c[i].dst = prim_gpu_malloc(c[i].bytes ? c[i].bytes : 1, stream);
        if (!*c[i].dst) {
            snprintf(err, cap, "Cost Error: out of device memory calibrating");
            bufs_free(d, 1, stream);
            return -1;
        }
        if (c[i].src &&
            prim_gpu_copy(*c[i].dst, c[i].src, c[i].bytes, PRIM_H2D, stream, err, cap) != 0) {
            bufs_free(d, 1, stream);
            return -1;
        }
    }
    return prim_gpu_sync(stream, err, cap);
}

/* Programs: short (col + 1: 3 ops), long (9 ops), filter (col > 49). */
static const PrimInstr prog_short_code[] = {{POP_COL, PRIM_REG_I, 0, 0, 0, 0, 0, 0, NULL, 0},
                                            {POP_CONST, PRIM_REG_I, 1, 0, 0, 0, 1, 0, NULL, 0},
                                            {POP_ADD, PRIM_REG_I, 2, 0, 1, 0, 0, 0, NULL, 0}};
static const PrimInstr prog_long_code[] = {{POP_COL, PRIM_REG_I, 0, 0, 0, 0, 0, 0, NULL, 0},
                                           {POP_CONST, PRIM_REG_I, 1, 0, 0, 0, 3, 0, NULL, 0},
                                           {POP_MUL, PRIM_REG_I, 2, 0, 1, 0, 0, 0, NULL, 0},
                                           {POP_ADD, PRIM_REG_I, 3, 2, 0, 0, 0, 0, NULL, 0},
                                           {POP_SUB, PRIM_REG_I, 4, 3, 1, 0, 0, 0, NULL, 0},
                                           {POP_MUL, PRIM_REG_I, 5, 4, 4, 0, 0, 0, NULL, 0},
                                           {POP_ADD, PRIM_REG_I, 6, 5, 2, 0, 0, 0, NULL, 0},
                                           {POP_SUB, PRIM_REG_I, 7, 6, 0, 0, 0, 0, NULL, 0},
                                           {POP_ADD, PRIM_REG_I, 8, 7, 1, 0, 0, 0, NULL, 0}};
static const PrimInstr prog_filter_code[] = {{POP_COL, PRIM_REG_I, 0, 0, 0, 0, 0, 0, NULL, 0},
                                             {POP_CONST, PRIM_REG_I, 1, 0, 0, 0, 49, 0, NULL, 0},
                                             {POP_GT, PRIM_REG_I, 2, 0, 1, 0, 0, 0, NULL, 0}};

/* The dense-aggregate benchmark over b: rows whose vals lie in [10, 99],
 * joined through the keymap dmap on vals (ndims times: 0 or 3
 * dimensions), grouped by the dimension's dattr (no key and one group
 * without dimensions: a filtered SUM), SUM(keys). Inputs: 0 vals, 1 keys,
 * 2 dmap, 3 dattr. */
static void cal_dense_spec(PrimDenseAgg *s, int ndims) {
    memset(s, 0, sizeof *s);
    s->rows = -1;
    s->nranges = 1;
    s->range_col[0] = 0;
    s->range_lo[0] = 10;
    s->range_hi[0] = 99;
    s->ndims = ndims;
    for (int d = 0; d < ndims; d++) {
        s->dim_fk[d] = 0;
        s->dim_map[d] = 2;
        s->dim_kmin[d] = 0;
        s->dim_range[d] = CAL_DIM;
    }
    s->nkeys = ndims > 0;
    s->key_col[0] = 3;
    s->key_dim[0] = 0;
    s->key_min[0] = 0;
    s->key_card[0] = CAL_GROUPS; /* codes 1..7, 0 for NULL */
    s->naggs = 1;
    s->agg[0] = AGG_SUM;
    s->val_a[0] = 1;
    s->val_b[0] = -1;
    s->ngroups = ndims > 0 ? CAL_GROUPS : 1;
}

/* Run primitive p once on b (device gpu); 0 or -1. */
static int run_prim(Cal *c, int gpu, CostPrimKind p, const Bufs *b, int variant) {
    PrimCtx *ctx = gpu ? &c->d : &c->h;
    int64_t n = b->n;
    PrimVec v32 = {PRIM_I32, n, b->vals, NULL};
    PrimVec v64 = {PRIM_I64, n, b->keys, NULL};
    PrimVec f8 = {PRIM_U8, n, b->flags, NULL};
    PrimVec o64 = {PRIM_I64, n, b->out, NULL};
    PrimProgram sp = {3, prog_short_code, 3, 2, PRIM_REG_I, 1, 0, 0};
    PrimProgram lp = {9, prog_long_code, 9, 8, PRIM_REG_I, 1, 0, 0};
    PrimProgram fp = {3, prog_filter_code, 3, 2, PRIM_REG_I, 1, 1, 0};
    int64_t cnt = 0, tot = 0;
    int rc = -1;
    switch (p) {
    case CP_MAP:
        rc = gpu ? prim_gpu_map(ctx, variant ? &lp : &sp, &v32, n, &o64)
                 : prim_cpu_map(ctx, variant ? &lp : &sp, &v32, n, &o64);
        break;
    case CP_SELECT:
        rc = gpu ? prim_gpu_select(ctx, &fp, &v32, n, b->out, &cnt)
                 : prim_cpu_select(ctx, &fp, &v32, n, b->out, &cnt);
        break;
    case CP_SCAN:
        rc = gpu ? prim_gpu_scan(ctx, &f8, n, b->out, &tot)
                 : prim_cpu_scan(ctx, &f8, n, b->out, &tot);
        break;
    case CP_SCATTER:
        rc = gpu ? prim_gpu_scatter(ctx, NULL, b->flags, b->offs, n, &o64)
                 : prim_cpu_scatter(ctx, NULL, b->flags, b->offs, n, &o64);
        break;
    case CP_GATHER: {
        /* variant 0: ascending row ids (a filter's), 1: random ones */
        PrimVec o32 = {PRIM_I32, n, b->out, NULL};
        const int64_t *ids = variant ? b->idx : b->offs;
        rc = gpu ? prim_gpu_gather(ctx, &v32, ids, n, &o32)
                 : prim_cpu_gather(ctx, &v32, ids, n, &o32);
        break;
    }
    case CP_SORT: {
        /* FLOAT keys: every byte varies, so no radix pass is skipped (vals'
         * 0..99 would leave three of four byte passes out) */
        uint8_t desc = 0;
        PrimVec f32 = {PRIM_F32, n, b->fvals, NULL};
        rc = gpu ? prim_gpu_sort(ctx, &f32, &desc, 1, n, b->out)
                 : prim_cpu_sort(ctx, &f32, &desc, 1, n, b->out);
        break;
    }
    case CP_SEGMENTS: {
        /* variant 0: sorted keys, 1000 rows a segment (a GROUP BY); 1:
         * random keys, a segment almost every row */
        int64_t nseg = 0;
        PrimVec k32 = {PRIM_I32, n, variant ? b->vals : b->skeys, NULL};
        rc = gpu ? prim_gpu_segments(ctx, &k32, 1, n, b->out, &nseg)
                 : prim_cpu_segments(ctx, &k32, 1, n, b->out, &nseg);
        break;
    }
    case CP_SEGREDUCE: {
        /* variant 0: SUM of INT32 (a plain sum), 1: of FLOAT (compensated) */
        PrimVec f32 = {PRIM_F32, n, b->fvals, NULL};
        PrimVec out = {variant ? PRIM_F64 : PRIM_I64, b->nseg, b->out, b->outv};
        const PrimVec *val = variant ? &f32 : &v32;
        rc = gpu ? prim_gpu_segreduce(ctx, AGG_SUM, val, b->starts, b->nseg, n, &out)
                 : prim_cpu_segreduce(ctx, AGG_SUM, val, b->starts, b->nseg, n, &out);
        break;
    }
    case CP_JOIN: {
        /* variant 0: n probe rows (vals) against a CAL_DIM-row build side
         * (a dimension, cache-resident), one match each; 1: n unique keys
         * against the same n keys (a table out of the cache) */
        PrimPairs pr = {0, NULL, NULL};
        PrimVec bk = {PRIM_I32, CAL_DIM, b->bkeys, NULL};
        if (variant)
            rc = gpu ? prim_gpu_join(ctx, &v64, n, &v64, n, &pr)
                     : prim_cpu_join(ctx, &v64, n, &v64, n, &pr);
        else
            rc = gpu ? prim_gpu_join(ctx, &bk, CAL_DIM, &v32, n, &pr)
                     : prim_cpu_join(ctx, &bk, CAL_DIM, &v32, n, &pr);
        if (rc == 0) {
            ctx->free(ctx->ud, pr.left);
            ctx->free(ctx->ud, pr.right);
        }
        break;
    }
    case CP_CROSS: {
        /* n pairs: sqrt(n) x sqrt(n) */
        int64_t side = (int64_t)sqrt((double)n);
        PrimPairs pr = {0, NULL, NULL};
        rc = gpu ? prim_gpu_cross(ctx, side, side, &pr) : prim_cpu_cross(ctx, side, side, &pr);
        if (rc == 0) {
            ctx->free(ctx->ud, pr.left);
            ctx->free(ctx->ud, pr.right);
        }
        break;
    }
    case CP_KEYMAP:
        rc = gpu ? prim_gpu_keymap(ctx, &v64, b->idx, n, 0, n, b->out)
                 : prim_cpu_keymap(ctx, &v64, b->idx, n, 0, n, b->out);
        break;
    case CP_DENSEAGG: {
        PrimDenseAgg spec;
        cal_dense_spec(&spec, variant ? 3 : 0);
        PrimVec in[4] = {
            v32, v64, {PRIM_I64, CAL_DIM, b->dmap, NULL}, {PRIM_I32, CAL_DIM, b->dattr, NULL}};
        PrimVec out[PRIM_DA_NOUT(1)];
        for (int k = 0; k < PRIM_DA_NOUT(1); k++)
            out[k] = (PrimVec){PRIM_I64, CAL_GROUPS, b->dout + k * CAL_GROUPS, NULL};
        rc = gpu ? prim_gpu_denseagg(ctx, &spec, in, n, out)
                 : prim_cpu_denseagg(ctx, &spec, in, n, out);
        break;
    }
    case CP_SLICE: {
        char e[256];
        if (gpu)
            rc = prim_gpu_copy(b->out, b->keys, (size_t)n * 8, PRIM_D2D, c->stream, e, sizeof e);
        else {
            memcpy(b->out, b->keys, (size_t)n * 8);
            rc = 0;
        }
        break;
    }
    default:
        rc = 0;
        break;
    }
    (void)tot;
    return rc;
}

/* Work and bytes of one run of p over n rows (the table in cost.h), on a
 * device with a cache of cache_mb MiB. */
static void features(CostPrimKind p, int64_t n, int variant, double cache_mb, double *elems,
                     double *bytes) {
    double r = (double)n;
    *elems = 0;
    switch (p) {
    case CP_MAP:
        *elems = r * (variant ? 9 : 3), *bytes = r * 12;
        break;
    case CP_SELECT:
        *elems = r * 3, *bytes = r * 5 + r * 0.5 * 8;
        break;
    case CP_SCAN:
        *bytes = r * 9;
        break;
    case CP_SCATTER:
        *bytes = r * 9 + r * 0.5 * 8;
        break;
    case CP_GATHER: /* INT32 values from n rows */
        *elems = variant ? r * cost_miss_share(r * 4, cache_mb) : 0;
        *bytes = r * (8 + 2 * 4);
        break;
    case CP_SORT:
        *elems = r * 4, *bytes = r * 12;
        break;
    case CP_SEGMENTS: { /* one INT32 key; random keys 0..99 differ 99% of the time */
        double segs = variant ? 0.99 * r : ceil(r / 1000);
        *elems = r + segs, *bytes = r * 4 + segs * 8;
        break;
    }
    case CP_SEGREDUCE:
        *elems = variant ? r : 0;
        *bytes = r / 1000 * 8 + r * 4 + r / 1000 * 8;
        break;
    case CP_JOIN: /* the smaller side's table: 32 bytes a row */
        if (variant) {
            *elems = 2 * r;
            *bytes = 2 * r * (8 + 64 * cost_miss_share(32 * r, cache_mb)) + r * 16;
        } else {
            *elems = r + CAL_DIM;
            *bytes = (r + CAL_DIM) * (4 + 64 * cost_miss_share(32 * CAL_DIM, cache_mb)) + r * 16;
        }
        break;
    case CP_CROSS: {
        double side = floor(sqrt(r));
        *bytes = side * side * 16;
        break;
    }
    case CP_SLICE:
        *bytes = r * 16;
        break;
    case CP_KEYMAP: /* fill, I64 keys, row ids, slot writes */
        *bytes = r * 8 + r * (8 + 8 + 8);
        break;
    case CP_DENSEAGG: /* fact columns vals (I32) and keys (I64), the table */
        /* one range test a row; 90% pass it: the row count, one SUM (and
         * three probes) */
        *elems = r + 0.9 * r * (1 + 1 + (variant ? 3 : 0));
        *bytes = r * 12 + (double)CAL_GROUPS * 8 * PRIM_DA_NOUT(1);
        break;
    default:
        *bytes = 0;
        break;
    }
}

/* Median of v[0..k). */
static double median(double *v, int k) {
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[k / 2];
}

/* Time primitive p on b: a warm-up run, then the fastest of `reps` runs
 * (CUDA events on the GPU): other processes on a shared machine only ever
 * add time, and on the 2-core VM they moved medians by up to 2x between
 * calibrations. Returns microseconds, or -1 on error. */
static double time_prim(Cal *c, int gpu, CostPrimKind p, const Bufs *b, int variant, int reps) {
    double t[15];
    if (run_prim(c, gpu, p, b, variant) != 0) return -1;
    for (int r = 0; r < reps; r++) {
        if (gpu) {
            void *e0 = prim_gpu_event_record(c->stream);
            int rc = run_prim(c, gpu, p, b, variant);
            void *e1 = prim_gpu_event_record(c->stream);
            float ms = rc == 0 ? prim_gpu_event_ms(e0, e1) : -1;
            prim_gpu_event_destroy(e0);
            prim_gpu_event_destroy(e1);
            if (ms < 0) return -1;
            t[r] = ms * 1e3;
        } else {
            double t0 = now_us();
            if (run_prim(c, gpu, p, b, variant) != 0) return -1;
            t[r] = now_us() - t0;
        }
    }
    double best = t[0];
    for (int r = 1; r < reps; r++)
        if (t[r] < best) best = t[r];
    return best;
}

/* 1 if p is timed in two variants and fitted with both slopes. */
static int two_slopes(CostPrimKind p) {
    return p == CP_MAP || p == CP_DENSEAGG || p == CP_GATHER || p == CP_SEGMENTS ||
           p == CP_SEGREDUCE || p == CP_JOIN;
}

/* Fit the points of (gpu, p) into cp. Features: map, denseagg, gather,
 * segments, segreduce and join [1, elems, bytes] (two variants each, so
 * the two slopes separate); sort [1, elems]; the others [1, bytes];
 * select takes map's
 * per-instruction cost (elem_ns) and fits [1, bytes] to the rest. Slopes
 * come from the sizes >= 1e5 rows by plain least squares (so the largest,
 * out-of-cache size dominates, as it does in placement decisions), the
 * fixed cost from the smallest size on the CPU and from every size on the
 * GPU (see below). */
static void fit_prim(const Cal *c, int gpu, CostPrimKind p, CostPrim *cp, double elem_ns) {
    double X[MAX_POINTS * 3], y[MAX_POINTS], beta[3];
    int n = 0, k = two_slopes(p) ? 3 : 2;
    /* slopes from the sizes that leave the caches (>= 1e5 rows) when there
     * are enough of them; the fixed cost below */
    int64_t min_rows = INT64_MAX, nbig = 0;
    for (int i = 0; i < c->npts; i++)
        if (c->pts[i].gpu == gpu && c->pts[i].prim == p && c->pts[i].us > 0) {
            if (c->pts[i].rows < min_rows) min_rows = c->pts[i].rows;
            nbig += c->pts[i].rows >= 100000;
        }
    int64_t floor_rows = nbig >= k + (k == 3) ? 100000 : 0;
    for (int i = 0; i < c->npts && n < MAX_POINTS; i++) {
        const Point *q = &c->pts[i];
        if (q->gpu != gpu || q->prim != p || q->us <= 0 || q->rows < floor_rows) continue;
        double w = 1.0; /* absolute error: the largest size dominates the slopes */
        X[n * k] = w;
        if (k == 3) {
            X[n * k + 1] = q->elems * w;
            X[n * k + 2] = q->bytes * w;
        } else {
            X[n * k + 1] = (p == CP_SORT ? q->elems : q->bytes) * w;
        }
        y[n] = p == CP_SELECT ? q->us - q->elems * elem_ns / 1e3 : q->us;
        if (!gpu && q->rows >= COST_PAR_MIN_ROWS) /* thread starts are priced apart */
            y[n] -= c->spawn_us * cost_cpu_passes(p, 4);
        n++;
    }
    if (n < k || cost_fit(X, y, n, k, beta) != 0) return; /* keep the defaults */
    cp->fixed_us = beta[0];
    if (k == 3) {
        cp->ns_per_elem = beta[1] * 1e3;
        cp->ns_per_byte = beta[2] * 1e3;
    } else if (p == CP_SELECT) {
        cp->ns_per_elem = elem_ns;
        cp->ns_per_byte = beta[1] * 1e3;
    } else if (p == CP_SORT) {
        cp->ns_per_elem = beta[1] * 1e3;
        cp->ns_per_byte = 0;
    } else {
        cp->ns_per_elem = 0;
        cp->ns_per_byte = beta[1] * 1e3;
    }
    /* fixed cost: on the CPU what the slopes leave of the smallest calls;
     * on the GPU the median of what they leave at every size (a GPU
     * primitive changes algorithm with size: CUB's radix sort of 1,000
     * keys took 29 us, of 1e4-1e5 keys 68-79 us, which a line through the
     * smallest point missed by 2-3x in the placement sweep) */
    double fixed = -1, rests[MAX_POINTS];
    int nr = 0;
    for (int i = 0; i < c->npts; i++) {
        const Point *q = &c->pts[i];
        if (q->gpu != gpu || q->prim != p || (!gpu && q->rows != min_rows)) continue;
        double rest = q->us - (q->elems * cp->ns_per_elem + q->bytes * cp->ns_per_byte) / 1e3;
        if (gpu && nr < MAX_POINTS) rests[nr++] = rest;
        if (!gpu && (fixed < 0 || rest < fixed)) fixed = rest;
    }
    if (gpu && nr > 0) fixed = median(rests, nr);
    if (fixed >= 0 || floor_rows > 0) cp->fixed_us = fixed > 0 ? fixed : 0;
}

/* Size in MiB of the largest CPU cache Linux reports for cpu0 (sysfs
 * cache/index*: the level with the highest number), or fallback when none
 * can be read. */
static double cpu_cache_mb(double fallback) {
    double best = 0;
    int best_level = -1;
    for (int i = 0; i < 8; i++) {
        char path[96], buf[32];
        int level = -1;
        double kib = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(buf, sizeof buf, f)) level = atoi(buf);
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        f = fopen(path, "r");
        if (!f) continue;
        if (fgets(buf, sizeof buf, f)) {
            char *end;
            kib = strtod(buf, &end);
            if (*end == 'M') kib *= 1024;
        }
        fclose(f);
        if (level > best_level && kib > 0) best_level = level, best = kib / 1024;
    }
    return best > 0 ? best : fallback;
}

/* prim_parallel body that does nothing. */
static void noop_pass(void *arg, int t, int nt) {
    (void)arg, (void)t, (void)nt;
}

/* Median microseconds of one empty parallel pass with nthreads threads
 * (the worker pool awake; 0 with one thread), or -1 when threads cannot
 * start. */
static double time_spawn(int nthreads) {
    double t[31];
    if (nthreads <= 1) return 0;
    if (prim_parallel(nthreads, noop_pass, NULL) != 0) return -1;
    for (int r = 0; r < 31; r++) {
        double t0 = now_us();
        if (prim_parallel(nthreads, noop_pass, NULL) != 0) return -1;
        t[r] = now_us() - t0;
    }
    return median(t, 31);
}

/* The first parallel pass after the pool's workers fell asleep (2 ms
 * idle, past their spin) minus a pass with them awake: what a query pays
 * once to wake them. Median of 9; -1 if the pool cannot start. */
static double time_wake(int nthreads, double spawn_us) {
    double t[9];
    if (nthreads <= 1) return 0;
    for (int r = 0; r < 9; r++) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        double t0 = now_us();
        if (prim_parallel(nthreads, noop_pass, NULL) != 0) return -1;
        t[r] = now_us() - t0;
    }
    double w = median(t, 9) - spawn_us;
    return w > 0 ? w : 0;
}

/* Measure every primitive of one device at every size. Returns 0 or -1. */
static int measure(Cal *c, int gpu, int64_t max_rows, char *err, size_t cap) {
    static const int64_t sizes[] = {1000, 10000, 100000, 1000000, 10000000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int64_t n = sizes[s];
        if (n > max_rows) break;
        Bufs hb, db, *b = &hb;
        if (bufs_host(&hb, n) != 0) {
            snprintf(err, cap, "Cost Error: out of memory calibrating %lld rows", (long long)n);
            return -1;
        }
        if (gpu) {
            if (bufs_dev(&db, &hb, c->stream, err, cap) != 0) {
                bufs_free(&hb, 0, NULL);
                return -1;
            }
            b = &db;
        }
        int reps = n >= 10000000 ? 5 : n >= 1000000 ? 9 : 15;
        for (int p = 0; p < CP_COUNT; p++) {
            if (p == CP_TOTEXT) continue;
            int nvar = two_slopes((CostPrimKind)p) ? 2 : 1;
            for (int variant = 0; variant < nvar; variant++) {
                double us = time_prim(c, gpu, (CostPrimKind)p, b, variant, reps);
                if (us < 0) {
                    snprintf(err, cap, "Cost Error: %s %s at %lld rows failed: %s",
                             gpu ? "GPU" : "CPU", cost_prim_name((CostPrimKind)p), (long long)n,
                             gpu ? c->d.err : c->h.err);
                    if (gpu) bufs_free(&db, 1, c->stream);
                    bufs_free(&hb, 0, NULL);
                    return -1;
                }
                if (c->npts < (int)(sizeof c->pts / sizeof *c->pts)) {
                    Point *q = &c->pts[c->npts++];
                    q->gpu = gpu;
                    q->prim = (CostPrimKind)p;
                    q->rows = n;
                    q->us = us;
                    features((CostPrimKind)p, n, variant, c->cache_mb[gpu], &q->elems, &q->bytes);
                }
                if (c->progress) {
                    char line[160];
                    static const char *vn[CP_COUNT][2] = {
                        [CP_MAP] = {" (3 ops)", " (9 ops)"},
                        [CP_DENSEAGG] = {" (0 dims)", " (3 dims)"},
                        [CP_GATHER] = {" (ascending)", " (random)"},
                        [CP_SEGMENTS] = {" (sorted)", " (random)"},
                        [CP_SEGREDUCE] = {" (int)", " (float)"},
                        [CP_JOIN] = {" (small build)", " (n x n)"}};
                    const char *var = vn[p][variant] ? vn[p][variant] : "";
                    snprintf(line, sizeof line, "%s %-9s %9lld rows%s %10.1f us",
                             gpu ? "gpu" : "cpu", cost_prim_name((CostPrimKind)p), (long long)n,
                             var, us);
                    c->progress(c->ud, line);
                }
            }
        }
        if (gpu) bufs_free(&db, 1, c->stream);
        bufs_free(&hb, 0, NULL);
    }
    return 0;
}

/* Rows at which each CPU primitive is timed on one thread (serial_x). */
#define CAL_SERIAL_ROWS 100000

/* serial_x of every CPU primitive (cost.h): its time over CAL_SERIAL_ROWS
 * rows on one thread, less the fixed cost, over the fitted slopes' time
 * (the slopes come from parallel runs). Needs the fitted m->cpu. Returns
 * 0 or -1. */
static int measure_serial(Cal *c, CostModel *m, int nthreads, char *err, size_t cap) {
    if (nthreads <= 1) return 0;
    Bufs hb;
    if (bufs_host(&hb, CAL_SERIAL_ROWS) != 0) {
        snprintf(err, cap, "Cost Error: out of memory calibrating one thread");
        return -1;
    }
    int rc = 0;
    c->h.nthreads = 1;
    for (int p = 0; p < CP_COUNT && rc == 0; p++) {
        if (p == CP_TOTEXT) continue;
        double us = time_prim(c, 0, (CostPrimKind)p, &hb, 0, 9), elems, bytes;
        if (us < 0) {
            snprintf(err, cap, "Cost Error: CPU %s on one thread failed: %s",
                     cost_prim_name((CostPrimKind)p), c->h.err);
            rc = -1;
            break;
        }
        features((CostPrimKind)p, CAL_SERIAL_ROWS, 0, c->cache_mb[0], &elems, &bytes);
        CostPrim *cp = &m->cpu[p];
        double par = (elems * cp->ns_per_elem + bytes * cp->ns_per_byte) / 1e3;
        double x = par > 0 ? (us - cp->fixed_us) / par : 1;
        cp->serial_x = x < 1 ? 1 : x > nthreads ? nthreads : x;
        if (c->progress) {
            char line[160];
            snprintf(line, sizeof line, "cpu %-9s %9d rows on one thread %10.1f us: serial_x %.2f",
                     cost_prim_name((CostPrimKind)p), CAL_SERIAL_ROWS, us, cp->serial_x);
            c->progress(c->ud, line);
        }
    }
    c->h.nthreads = nthreads;
    bufs_free(&hb, 0, NULL);
    return rc;
}

/* Transfers: pinned bandwidth (prim_gpu_bandwidth), pageable bandwidth
 * and small-copy latency (wall clock around copy + sync), host sync.
 * Returns 0 or -1. */
static int measure_links(Cal *c, CostModel *m, char *err, size_t cap) {
    double d2d, h2d, d2h;
    size_t big = (size_t)256 << 20;
    if (prim_gpu_bandwidth(big, &d2d, &h2d, &d2h, err, cap) != 0) return -1;
    m->h2d_pinned.gbps = h2d;
    m->d2h_pinned.gbps = d2h;
    void *dbuf = prim_gpu_malloc(big, c->stream);
    char *hbuf = malloc(big);
    void *pin = prim_gpu_pinned_alloc(64);
    if (!dbuf || !hbuf || !pin) {
        prim_gpu_free(dbuf, c->stream);
        free(hbuf);
        prim_gpu_pinned_free(pin);
        snprintf(err, cap, "Cost Error: out of memory timing transfers");
        return -1;
    }
    memset(hbuf, 1, big);
    double t[5];
    int rc = 0;
    for (int dir = 0; dir < 2 && rc == 0; dir++) {
        for (int r = 0; r < 5 && rc == 0; r++) { /* pageable bandwidth */
            double t0 = now_us();
            rc = prim_gpu_copy(dir ? hbuf : dbuf, dir ? dbuf : hbuf, big, dir ? PRIM_D2H : PRIM_H2D,
                               c->stream, err, cap) |
                 prim_gpu_sync(c->stream, err, cap);
            t[r] = now_us() - t0;
        }
        double gbps = (double)big / (median(t, 5) * 1e3);
        (dir ? &m->d2h_pageable : &m->h2d_pageable)->gbps = gbps;
        for (int r = 0; r < 5 && rc == 0; r++) { /* latency: 8 bytes, pinned */
            double t0 = now_us();
            rc = prim_gpu_copy(dir ? pin : dbuf, dir ? dbuf : pin, 8, dir ? PRIM_D2H : PRIM_H2D,
                               c->stream, err, cap) |
                 prim_gpu_sync(c->stream, err, cap);
            t[r] = now_us() - t0;
        }
        double lat = median(t, 5);
        (dir ? &m->d2h_pinned : &m->h2d_pinned)->latency_us = lat;
        (dir ? &m->d2h_pageable : &m->h2d_pageable)->latency_us = lat;
    }
    /* a cold column: pageable copy, or page-lock + pinned copy (the
     * unlock, at eviction, is not on a query's path and is not timed);
     * each from a fresh block allocated and filled as the catalog does
     * (64-byte aligned, written once), never locked or copied before;
     * fitted by relative error, latency + bytes / rate */
    double lx[2][16 * 2], ly[2][16];
    int nl = 0;
    for (size_t b = (size_t)64 << 10; b <= big && rc == 0 && nl < 16; b *= 4, nl++) {
        for (int way = 0; way < 2 && rc == 0; way++) {
            for (int r = 0; r < 3 && rc == 0; r++) {
                char *col = aligned_alloc(64, b); /* b: a multiple of 64 */
                if (!col) {
                    snprintf(err, cap, "Cost Error: out of memory timing transfers");
                    rc = -1;
                    break;
                }
                memset(col, 1, b);
                double t0 = now_us();
                if (way == 1) rc = prim_gpu_host_register(col, b, err, cap);
                if (rc == 0)
                    rc = prim_gpu_copy(dbuf, col, b, PRIM_H2D, c->stream, err, cap) |
                         prim_gpu_sync(c->stream, err, cap);
                t[r] = now_us() - t0;
                if (way == 1) prim_gpu_host_unregister(col);
                free(col);
            }
            if (rc != 0) break;
            double us = median(t, 3);
            lx[way][2 * nl] = 1.0 / us;
            lx[way][2 * nl + 1] = (double)b / us;
            ly[way][nl] = 1.0;
            if (c->nlpts < MAX_LINK_POINTS)
                c->lpts[c->nlpts++] = (LinkPoint){way ? "h2d_lock" : "h2d_pageable", (double)b, us};
        }
    }
    for (int way = 0; way < 2 && rc == 0 && nl >= 2; way++) {
        double beta[2];
        if (cost_fit(lx[way], ly[way], nl, 2, beta) != 0 || beta[1] <= 0) continue;
        CostLink *l = way ? &m->h2d_lock : &m->h2d_pageable;
        l->latency_us = beta[0] > 0 ? beta[0] : 0;
        l->gbps = 1.0 / (beta[1] * 1e3);
    }
    for (int r = 0; r < 5 && rc == 0; r++) { /* a sync of an idle stream */
        double t0 = now_us();
        rc = prim_gpu_sync(c->stream, err, cap);
        t[r] = now_us() - t0;
    }
    if (rc == 0) m->gpu_sync_us = median(t, 5);
    prim_gpu_free(dbuf, c->stream);
    free(hbuf);
    prim_gpu_pinned_free(pin);
    return rc == 0 ? 0 : -1;
}

int cost_calibrate_steps(int nthreads, int64_t max_rows, int gpu) {
    static const int64_t sizes[] = {1000, 10000, 100000, 1000000, 10000000};
    if (nthreads <= 0) nthreads = prim_ncores();
    if (max_rows <= 0) max_rows = 10000000;
    int per_size = 0, nsizes = 0;
    for (int p = 0; p < CP_COUNT; p++)
        if (p != CP_TOTEXT) per_size += two_slopes((CostPrimKind)p) ? 2 : 1;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes && sizes[s] <= max_rows; s++)
        nsizes++;
    /* measure() per device, then measure_serial() with several threads */
    return nsizes * per_size * (gpu ? 2 : 1) + (nthreads > 1 ? CP_COUNT - 1 : 0);
}

int cost_calibrate_ex(const char *out_path, int nthreads, int64_t max_rows,
                      void (*progress)(void *ud, const char *line), void *ud,
                      int (*probe)(void *ud, CostModel *m, char *err, size_t cap), char *err,
                      size_t cap) {
    Cal *c = calloc(1, sizeof(Cal));
    if (!c) {
        snprintf(err, cap, "Cost Error: out of memory");
        return -1;
    }
    if (nthreads <= 0) nthreads = prim_ncores();
    if (max_rows <= 0) max_rows = 10000000;
    c->progress = progress;
    c->ud = ud;
    c->h.nthreads = nthreads;
    c->h.alloc = h_alloc;
    c->h.free = h_free;
    int gpu = prim_gpu_available();
    char gname[256] = "";
    if (gpu) prim_gpu_describe(gname, sizeof gname);
    CostModel m;
    cost_model_default(&m, strstr(gname, "H200") ? "h200" : strstr(gname, "H100") ? "h100" : "cpu");
    m.cpu_cache_mb = cpu_cache_mb(m.cpu_cache_mb);
    c->cache_mb[0] = m.cpu_cache_mb;
    c->cache_mb[1] = m.gpu_cache_mb;
    c->spawn_us = time_spawn(nthreads);
    if (c->spawn_us < 0) c->spawn_us = m.cpu_spawn_us;
    m.cpu_spawn_us = c->spawn_us;
    double wake = time_wake(nthreads, c->spawn_us);
    if (wake >= 0) m.cpu_wake_us = wake;
    int rc = measure(c, 0, max_rows, err, cap);
    if (rc == 0 && gpu) {
        c->stream = prim_gpu_stream_create();
        c->d.nthreads = 1;
        c->d.stream = c->stream;
        c->d.alloc = d_alloc;
        c->d.free = d_free;
        c->d.ud = c->stream;
        rc = c->stream ? measure(c, 1, max_rows, err, cap) : -1;
        if (!c->stream) snprintf(err, cap, "Cost Error: cannot create a CUDA stream");
        if (rc == 0) rc = measure_links(c, &m, err, cap);
    }
    if (rc == 0) {
        for (int p = 0; p < CP_COUNT; p++) { /* map first: select uses its per-op cost */
            fit_prim(c, 0, (CostPrimKind)p, &m.cpu[p], m.cpu[CP_MAP].ns_per_elem);
            if (gpu) fit_prim(c, 1, (CostPrimKind)p, &m.gpu[p], m.gpu[CP_MAP].ns_per_elem);
        }
        rc = measure_serial(c, &m, nthreads, err, cap);
        m.cpu_threads = nthreads;
        if (rc == 0 && probe) rc = probe(ud, &m, err, cap);
    }
    if (rc == 0) {
        snprintf(m.name, sizeof m.name, "calibrated-%dthreads%s%s", nthreads, gpu ? "-" : "",
                 gpu ? (strstr(gname, "H200")   ? "h200"
                        : strstr(gname, "H100") ? "h100"
                                                : "gpu")
                     : "");
        rc = cost_model_write(&m, out_path, err, cap);
    }
    if (rc == 0) {
        FILE *f = fopen(out_path, "a");
        if (!f) {
            snprintf(err, cap, "Cost Error: cannot write %s", out_path);
            rc = -1;
        } else {
            fprintf(f, "# calibrated with %d CPU threads%s%s; GPU part %s\n", nthreads,
                    gpu ? " on " : "", gname,
                    gpu ? "measured" : "not measured (no GPU): built-in H100 defaults");
            fprintf(f, "points:  # raw measurements: fastest microseconds per call\n");
            for (int i = 0; i < c->npts; i++) {
                const Point *q = &c->pts[i];
                fprintf(f,
                        "  - {dev: %s, prim: %s, rows: %lld, elems: %.0f, bytes: %.0f, us: %.2f}\n",
                        q->gpu ? "gpu" : "cpu", cost_prim_name(q->prim), (long long)q->rows,
                        q->elems, q->bytes, q->us);
            }
            if (c->nlpts)
                fprintf(f, "link_points:  # cold-column copies: median microseconds of 3\n");
            for (int i = 0; i < c->nlpts; i++)
                fprintf(f, "  - {link: %s, bytes: %.0f, us: %.2f}\n", c->lpts[i].link,
                        c->lpts[i].bytes, c->lpts[i].us);
            if (fclose(f) != 0) rc = -1;
        }
    }
    if (c->stream) prim_gpu_stream_destroy(c->stream);
    free(c);
    return rc;
}

int cost_calibrate(const char *out_path, int nthreads, char *err, size_t cap) {
    return cost_calibrate_ex(out_path, nthreads, 0, NULL, NULL, NULL, err, cap);
}
