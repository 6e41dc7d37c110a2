/*
 * gather.c -- CPU twin of the gather primitive: dst[i] = src[idx[i]], with
 * idx[i] < 0 giving NULL. The copy loops depend only on the value width, so
 * every PrimType shares three loops. Parallel over contiguous row ranges.
 */
#include "primitives/primitives.h"

#include <stdio.h>

#define GATHER_PAR_MIN_ROWS 65536

typedef struct GatherJob {
    const PrimVec *src;
    const int64_t *idx;
    int64_t n;
    PrimVec *dst;
    int bad[256]; /* per thread: 1 = index >= src->n, 2 = NULL without dst->valid */
} GatherJob;

/* Copies rows lo..hi-1. Returns 0, 1 for an index past src->n (that row is
 * written as 0 / NULL), or 2 for a negative index with no dst->valid. */
static int gather_range(const PrimVec *src, const int64_t *idx, int64_t lo, int64_t hi,
                        PrimVec *dst) {
    int bad = 0;
    int64_t sn = src->n;
    size_t w = prim_type_width(src->type);
    const uint8_t *sv = src->valid;
    uint8_t *dv = dst->valid;
    if (w == 1) {
        const uint8_t *s = src->data;
        uint8_t *d = dst->data;
        for (int64_t i = lo; i < hi; i++) {
            int64_t j = idx[i];
            d[i] = (j >= 0 && j < sn) ? s[j] : 0;
        }
    } else if (w == 4) {
        const uint32_t *s = src->data;
        uint32_t *d = dst->data;
        for (int64_t i = lo; i < hi; i++) {
            int64_t j = idx[i];
            d[i] = (j >= 0 && j < sn) ? s[j] : 0;
        }
    } else {
        const uint64_t *s = src->data;
        uint64_t *d = dst->data;
        for (int64_t i = lo; i < hi; i++) {
            int64_t j = idx[i];
            d[i] = (j >= 0 && j < sn) ? s[j] : 0;
        }
    }
    if (dv) {
        for (int64_t i = lo; i < hi; i++) {
            int64_t j = idx[i];
            dv[i] = (j >= 0 && j < sn) ? (sv ? sv[j] != 0 : 1) : 0;
        }
    }
    for (int64_t i = lo; i < hi; i++) {
        if (idx[i] >= sn)
            bad = 1;
        else if (idx[i] < 0 && !dv && !bad)
            bad = 2;
    }
    return bad;
}

/* prim_parallel body: thread t gathers its contiguous share of rows. */
static void gather_worker(void *arg, int t, int nt) {
    GatherJob *J = arg;
    J->bad[t] = gather_range(J->src, J->idx, J->n * t / nt, J->n * (t + 1) / nt, J->dst);
}

/* See primitives.h. dst must have src's type and room for n values.
 * Returns 0, or -1 with a message in ctx->err: mismatched types, an index
 * >= src->n, or a negative index while dst->valid is NULL (all other rows
 * are still written). */
int prim_cpu_gather(PrimCtx *ctx, const PrimVec *src, const int64_t *idx, int64_t n, PrimVec *dst) {
    if (!src || !dst || n < 0 || (n > 0 && (!idx || !dst->data || (src->n > 0 && !src->data))) ||
        prim_type_width(src->type) == 0) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: gather: bad arguments");
        return -1;
    }
    if (dst->type != src->type) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: gather: dst type %d != src type %d",
                 (int)dst->type, (int)src->type);
        return -1;
    }
    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > 256) nt = 256;
    if (n < GATHER_PAR_MIN_ROWS) nt = 1;
    GatherJob J = {src, idx, n, dst, {0}};
    if (prim_parallel(nt, gather_worker, &J) != 0) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: gather: cannot start threads");
        return -1;
    }
    for (int t = 0; t < nt; t++) {
        if (J.bad[t] == 1) {
            snprintf(ctx->err, sizeof ctx->err,
                     "Primitive Error: gather: index out of range (src has %lld rows)",
                     (long long)src->n);
            return -1;
        }
        if (J.bad[t] == 2) {
            snprintf(ctx->err, sizeof ctx->err,
                     "Primitive Error: gather: negative index needs dst->valid");
            return -1;
        }
    }
    return 0;
}
