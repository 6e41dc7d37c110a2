/*
 * scatter.c -- CPU twin of the scatter primitive: dst[idx[i]] = src[i] (or
 * the row id i when src is NULL) for every selected row. The indices of the
 * selected rows must be distinct for the result not to depend on the thread
 * count (compaction and permutation guarantee it). Parallel over contiguous
 * row ranges.
 */
#include "primitives/primitives.h"

#include <stdio.h>

#define SCATTER_PAR_MIN_ROWS 65536

typedef struct ScatterJob {
    const PrimVec *src; /* NULL: row ids */
    const uint8_t *flags;
    const int64_t *idx;
    int64_t n;
    PrimVec *dst;
    int bad[256]; /* per thread: 1 = a selected index outside 0..dst->n-1 */
} ScatterJob;

/* Scatters rows lo..hi-1. Returns 0, or 1 when a selected row's index is
 * outside 0..dst->n-1 (that row is skipped, the others are written). */
static int scatter_range(const ScatterJob *J, int64_t lo, int64_t hi) {
    const uint8_t *f = J->flags;
    const int64_t *idx = J->idx;
    PrimVec *dst = J->dst;
    int64_t dn = dst->n;
    int bad = 0;
    size_t w = J->src ? prim_type_width(J->src->type) : 8;
    const uint8_t *sv = J->src ? J->src->valid : NULL;
    uint8_t *dv = dst->valid;
    for (int64_t i = lo; i < hi; i++) {
        if (f && !f[i]) continue;
        int64_t j = idx[i];
        if (j < 0 || j >= dn) {
            bad = 1;
            continue;
        }
        if (!J->src)
            ((int64_t *)dst->data)[j] = i;
        else if (w == 1)
            ((uint8_t *)dst->data)[j] = ((const uint8_t *)J->src->data)[i];
        else if (w == 4)
            ((uint32_t *)dst->data)[j] = ((const uint32_t *)J->src->data)[i];
        else
            ((uint64_t *)dst->data)[j] = ((const uint64_t *)J->src->data)[i];
        if (dv) dv[j] = sv ? sv[i] != 0 : 1;
    }
    return bad;
}

/* prim_parallel body: thread t scatters its contiguous share of rows. */
static void scatter_worker(void *arg, int t, int nt) {
    ScatterJob *J = arg;
    J->bad[t] = scatter_range(J, J->n * t / nt, J->n * (t + 1) / nt);
}

/* See primitives.h. dst->n is dst's capacity: a selected index outside
 * 0..dst->n-1 is an error. When dst has validity and src has none (or src
 * is NULL), written rows become valid. Returns 0, or -1 with a message in
 * ctx->err (bad types, index out of range; the in-range rows are written). */
int prim_cpu_scatter(PrimCtx *ctx, const PrimVec *src, const uint8_t *flags, const int64_t *idx,
                     int64_t n, PrimVec *dst) {
    if (!dst || n < 0 || (n > 0 && (!idx || (src && !src->data))) ||
        (src && prim_type_width(src->type) == 0)) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: scatter: bad arguments");
        return -1;
    }
    PrimType want = src ? src->type : PRIM_I64;
    if (dst->type != want) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: scatter: dst type %d, expected %d",
                 (int)dst->type, (int)want);
        return -1;
    }
    if (dst->n > 0 && !dst->data) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: scatter: dst has no data");
        return -1;
    }
    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > 256) nt = 256;
    if (n < SCATTER_PAR_MIN_ROWS) nt = 1;
    ScatterJob J = {src, flags, idx, n, dst, {0}};
    if (prim_parallel(nt, scatter_worker, &J) != 0) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: scatter: cannot start threads");
        return -1;
    }
    for (int t = 0; t < nt; t++) {
        if (J.bad[t]) {
            snprintf(ctx->err, sizeof ctx->err,
                     "Primitive Error: scatter: index out of range (dst has %lld rows)",
                     (long long)dst->n);
            return -1;
        }
    }
    return 0;
}
