/*
 * scan.c -- CPU twin of the scan primitive: exclusive prefix sum of U8, I32
 * or I64 values into int64, in three phases (per-chunk sums, a prefix over
 * the chunk sums, per-chunk scans from that offset), so the result is the
 * same for any thread count. Sums wrap around in two's complement on
 * overflow instead of invoking undefined behaviour.
 */
#include "primitives/primitives.h"

#include <stdio.h>

#define SCAN_PAR_MIN_ROWS 65536
#define SCAN_MAX_THREADS 256

typedef struct ScanJob {
    const PrimVec *in;
    int64_t n;
    int64_t *out;
    uint64_t sums[SCAN_MAX_THREADS]; /* phase 1: chunk sums; phase 2: chunk offsets */
} ScanJob;

/* Returns the wrapped sum of in[lo..hi) (any of the three integer types). */
static uint64_t scan_sum(const PrimVec *in, int64_t lo, int64_t hi) {
    uint64_t s = 0;
    switch (in->type) {
    case PRIM_U8: {
        const uint8_t *p = in->data;
        for (int64_t i = lo; i < hi; i++)
            s += p[i];
        break;
    }
    case PRIM_I32: {
        const int32_t *p = in->data;
        for (int64_t i = lo; i < hi; i++)
            s += (uint64_t)(int64_t)p[i];
        break;
    }
    default: {
        const int64_t *p = in->data;
        for (int64_t i = lo; i < hi; i++)
            s += (uint64_t)p[i];
        break;
    }
    }
    return s;
}

/* Writes the exclusive scan of in[lo..hi) starting at s into out[lo..hi). */
static void scan_range(const PrimVec *in, int64_t lo, int64_t hi, uint64_t s, int64_t *out) {
    switch (in->type) {
    case PRIM_U8: {
        const uint8_t *p = in->data;
        for (int64_t i = lo; i < hi; i++) {
            out[i] = (int64_t)s;
            s += p[i];
        }
        break;
    }
    case PRIM_I32: {
        const int32_t *p = in->data;
        for (int64_t i = lo; i < hi; i++) {
            out[i] = (int64_t)s;
            s += (uint64_t)(int64_t)p[i];
        }
        break;
    }
    default: {
        const int64_t *p = in->data;
        for (int64_t i = lo; i < hi; i++) {
            out[i] = (int64_t)s;
            s += (uint64_t)p[i];
        }
        break;
    }
    }
}

/* prim_parallel body, phase 1: thread t sums its chunk into sums[t]. */
static void scan_phase1(void *arg, int t, int nt) {
    ScanJob *J = arg;
    J->sums[t] = scan_sum(J->in, J->n * t / nt, J->n * (t + 1) / nt);
}

/* prim_parallel body, phase 3: thread t scans its chunk from offset sums[t]. */
static void scan_phase3(void *arg, int t, int nt) {
    ScanJob *J = arg;
    scan_range(J->in, J->n * t / nt, J->n * (t + 1) / nt, J->sums[t], J->out);
}

/* See primitives.h. total may be NULL when the caller does not need it.
 * Returns 0, or -1 with a message in ctx->err (bad type or arguments). */
int prim_cpu_scan(PrimCtx *ctx, const PrimVec *in, int64_t n, int64_t *out, int64_t *total) {
    if (!in || n < 0 || (n > 0 && (!in->data || !out))) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: scan: bad arguments");
        return -1;
    }
    if (in->type != PRIM_U8 && in->type != PRIM_I32 && in->type != PRIM_I64) {
        snprintf(ctx->err, sizeof ctx->err, "Primitive Error: scan: type %d is not an integer",
                 (int)in->type);
        return -1;
    }
    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > SCAN_MAX_THREADS) nt = SCAN_MAX_THREADS;
    if (n < SCAN_PAR_MIN_ROWS) nt = 1;
    if (nt == 1) {
        scan_range(in, 0, n, 0, out);
        if (total) *total = n > 0 ? (int64_t)((uint64_t)out[n - 1] + scan_sum(in, n - 1, n)) : 0;
        return 0;
    }
    ScanJob J = {in, n, out, {0}};
    if (prim_parallel(nt, scan_phase1, &J) != 0) goto fail;
    uint64_t run = 0;
    for (int t = 0; t < nt; t++) {
        uint64_t s = J.sums[t];
        J.sums[t] = run;
        run += s;
    }
    if (prim_parallel(nt, scan_phase3, &J) != 0) goto fail;
    if (total) *total = (int64_t)run;
    return 0;
fail:
    snprintf(ctx->err, sizeof ctx->err, "Primitive Error: scan: cannot start worker threads");
    return -1;
}
