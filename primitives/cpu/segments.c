/*
 * segments.c -- CPU twin of the segments primitive: the first row of each
 * run of equal keys in sorted input. Two rows are equal when every key is
 * equal; NULL equals NULL, NULL differs from any value, floats compare
 * numerically (-0.0 == 0.0). Parallel in two passes over contiguous chunks
 * (count per chunk, then write at the chunk's offset).
 */
#include "primitives/primitives.h"

#include <stdio.h>

#define SEG_PAR_MIN_ROWS 65536
#define SEG_MAX_THREADS 256

typedef struct SegJob {
    const PrimVec *keys;
    int nkeys;
    int64_t n;
    int64_t *starts;
    int64_t cnt[SEG_MAX_THREADS]; /* per chunk: starts counted, then offset */
    int64_t end[SEG_MAX_THREADS]; /* per chunk: offset after its last start */
} SegJob;

/* Returns 1 if row i of key differs from row i-1 (i >= 1), else 0. */
static inline int seg_differs(const PrimVec *key, int64_t i) {
    if (key->valid) {
        int a = key->valid[i - 1] != 0, b = key->valid[i] != 0;
        if (a != b) return 1;
        if (!a) return 0;
    }
    switch (key->type) {
    case PRIM_U8:
        return ((const uint8_t *)key->data)[i] != ((const uint8_t *)key->data)[i - 1];
    case PRIM_I32:
        return ((const int32_t *)key->data)[i] != ((const int32_t *)key->data)[i - 1];
    case PRIM_I64:
        return ((const int64_t *)key->data)[i] != ((const int64_t *)key->data)[i - 1];
    case PRIM_F32:
        return ((const float *)key->data)[i] != ((const float *)key->data)[i - 1];
    default:
        return ((const double *)key->data)[i] != ((const double *)key->data)[i - 1];
    }
}

/* Returns 1 if row i starts a segment (row 0 always does). */
static inline int seg_starts(const SegJob *J, int64_t i) {
    if (i == 0) return 1;
    for (int k = 0; k < J->nkeys; k++)
        if (seg_differs(&J->keys[k], i)) return 1;
    return 0;
}

/* prim_parallel body, pass 1: counts the segment starts in chunk t. */
static void seg_count(void *arg, int t, int nt) {
    SegJob *J = arg;
    int64_t c = 0;
    for (int64_t i = J->n * t / nt, hi = J->n * (t + 1) / nt; i < hi; i++)
        c += seg_starts(J, i);
    J->cnt[t] = c;
}

/* prim_parallel body, pass 2: writes chunk t's starts from offset cnt[t]. */
static void seg_write(void *arg, int t, int nt) {
    SegJob *J = arg;
    int64_t o = J->cnt[t];
    for (int64_t i = J->n * t / nt, hi = J->n * (t + 1) / nt; i < hi; i++)
        if (seg_starts(J, i)) J->starts[o++] = i;
    J->end[t] = o;
}

/* See primitives.h. nkeys == 0 makes all rows one segment (when n > 0).
 * Returns 0, or -1 with a message in ctx->err (bad arguments). */
int prim_cpu_segments(PrimCtx *ctx, const PrimVec *keys, int nkeys, int64_t n, int64_t *starts,
                      int64_t *nseg) {
    if (n < 0 || nkeys < 0 || (nkeys > 0 && !keys) || !nseg || (n > 0 && !starts)) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: segments: bad arguments");
        return -1;
    }
    for (int k = 0; k < nkeys; k++) {
        if (prim_type_width(keys[k].type) == 0 || (n > 0 && !keys[k].data)) {
            snprintf(ctx->err, sizeof ctx->err, "Primitive Error: segments: bad key vector %d", k);
            return -1;
        }
    }
    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > SEG_MAX_THREADS) nt = SEG_MAX_THREADS;
    if (n < SEG_PAR_MIN_ROWS) nt = 1;
    SegJob J = {keys, nkeys, n, starts, {0}, {0}};
    if (nt > 1 && prim_parallel(nt, seg_count, &J) != 0) goto fail;
    int64_t run = 0; /* with one thread, cnt[0] stays 0 */
    for (int t = 0; t < nt; t++) {
        int64_t c = J.cnt[t];
        J.cnt[t] = run;
        run += c;
    }
    if (prim_parallel(nt, seg_write, &J) != 0) goto fail;
    *nseg = J.end[nt - 1];
    return 0;
fail:
    snprintf(ctx->err, sizeof ctx->err, "Primitive Error: segments: cannot start threads");
    return -1;
}

typedef struct RankJob {
    const int64_t *starts;
    int64_t nseg, n;
    int64_t *out;
} RankJob;

/* The segment holding row i: the last s with starts[s] <= i (starts[0] is
 * 0 and ascending). Shared by the twins' contract, not their code. */
static int64_t rank_segment(const int64_t *starts, int64_t nseg, int64_t i) {
    int64_t lo = 0, hi = nseg; /* starts[lo] <= i < starts[hi] */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (starts[mid] <= i)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* prim_parallel body: rows of chunk t numbered within their segments. */
static void rank_chunk(void *arg, int t, int nt) {
    RankJob *J = arg;
    int64_t lo = J->n * t / nt, hi = J->n * (t + 1) / nt;
    if (lo >= hi) return;
    int64_t s = rank_segment(J->starts, J->nseg, lo);
    for (int64_t i = lo; i < hi; i++) {
        while (s + 1 < J->nseg && J->starts[s + 1] <= i)
            s++;
        J->out[i] = i - J->starts[s] + 1;
    }
}

/* See primitives.h. Returns 0, or -1 with a message in ctx->err. */
int prim_cpu_segrank(PrimCtx *ctx, const int64_t *starts, int64_t nseg, int64_t n, int64_t *out) {
    if (n < 0 || nseg < 0 || (n > 0 && (!out || !starts || nseg < 1 || starts[0] != 0))) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: segment rank: bad arguments");
        return -1;
    }
    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > SEG_MAX_THREADS) nt = SEG_MAX_THREADS;
    if (n < SEG_PAR_MIN_ROWS) nt = 1;
    RankJob J = {starts, nseg, n, out};
    if (n > 0 && prim_parallel(nt, rank_chunk, &J) != 0) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: segment rank: cannot start threads");
        return -1;
    }
    return 0;
}
