/*
 * segreduce.c -- CPU twin of the segmented-reduce primitive: COUNT(*),
 * COUNT, SUM, MIN, MAX, AVG per segment of rows.
 *
 * Numerics follow SQLite:
 *   integer SUM   int64; an overflow is an error ("integer overflow")
 *   float SUM     double with Neumaier (Kahan-Babuska) compensation; an
 *                 infinite sum is the plain sum (the compensation of an
 *                 Inf is Inf - Inf = NaN and is dropped), and a NaN result
 *                 (+Inf plus -Inf) is NULL, as in SQLite
 *   AVG           integer values: int64 sum / count (a double sum when the
 *                 int64 sum overflows); float values: compensated sum / count
 *   no values     SUM, MIN, MAX, AVG are NULL; COUNT is 0
 *
 * Work is split so that results never depend on the thread count: a
 * segment of at most SEGR_BLOCK rows is reduced in one piece by one thread
 * (threads take contiguous ranges of such segments); a longer segment is
 * cut into blocks of SEGR_BLOCK rows from its start, blocks are reduced in
 * parallel, and the block partials are combined in block order.
 */
#include "primitives/primitives.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SEGR_BLOCK 65536
#define SEGR_PAR_MIN_ROWS 65536
#define SEGR_MAX_THREADS 256

/* Partial aggregate over some rows. */
typedef struct SegAcc {
    int64_t cnt;   /* non-NULL values (rows for COUNT(*)) */
    int64_t isum;  /* integer sum */
    int ovf;       /* isum overflowed */
    double fs, fc; /* compensated float sum: value fs + fc */
    int64_t imin, imax;
    double fmin, fmax;
} SegAcc;

typedef struct SegBlock {
    int64_t seg, lo, hi;
} SegBlock;

typedef struct SegJob {
    PrimAgg agg;
    const PrimVec *val;
    const int64_t *starts;
    int64_t nseg, n;
    PrimVec *out;
    int isfloat;
    int nocheck; /* the planner proved that no integer sum overflows */
    const SegBlock *blocks;
    SegAcc *bacc;
    int64_t nblocks;
    int ovf[SEGR_MAX_THREADS]; /* per thread: an integer SUM overflowed */
} SegJob;

/* Formats an error message into ctx->err and returns -1. */
static int segr_err(PrimCtx *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(ctx->err, sizeof ctx->err, "Primitive Error: segreduce: ");
    if (k < 0 || (size_t)k >= sizeof ctx->err) k = 0;
    vsnprintf(ctx->err + k, sizeof ctx->err - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

/* Adds x to the compensated sum (s, c) (Neumaier). */
static inline void segr_kadd(double *s, double *c, double x) {
    double t = *s + x;
    if (fabs(*s) >= fabs(x))
        *c += (*s - t) + x;
    else
        *c += (x - t) + *s;
    *s = t;
}

/* The value of the compensated sum of a: fs + fc, or fs alone when fs is
 * not finite (its compensation is then NaN or meaningless). */
static inline double segr_fsum(const SegAcc *a) {
    return isfinite(a->fs) ? a->fs + a->fc : a->fs;
}

/* Returns an empty accumulator. */
static SegAcc segr_empty(void) {
    SegAcc a;
    memset(&a, 0, sizeof a);
    a.imin = INT64_MAX;
    a.imax = INT64_MIN;
    a.fmin = INFINITY;
    a.fmax = -INFINITY;
    return a;
}

/* Accumulates rows [lo, hi) of val into a; at most SEGR_BLOCK rows, so
 * 32-bit sums cannot overflow int64 inside one call. */
#define SEGR_ACC_INT(T)                                                                            \
    do {                                                                                           \
        const T *v = (const T *)val->data;                                                         \
        for (int64_t i = lo; i < hi; i++) {                                                        \
            if (vd && !vd[i]) continue;                                                            \
            int64_t x = v[i];                                                                      \
            cnt++;                                                                                 \
            if (agg == AGG_MIN)                                                                    \
                imin = x < imin ? x : imin;                                                        \
            else if (agg == AGG_MAX)                                                               \
                imax = x > imax ? x : imax;                                                        \
            else if (wide) {                                                                       \
                if (__builtin_add_overflow(isum, x, &isum)) ovf = 1;                               \
                if (agg == AGG_AVG) segr_kadd(&fs, &fc, (double)x);                                \
            } else                                                                                 \
                isum += x;                                                                         \
        }                                                                                          \
    } while (0)

#define SEGR_ACC_FLT(T)                                                                            \
    do {                                                                                           \
        const T *v = (const T *)val->data;                                                         \
        for (int64_t i = lo; i < hi; i++) {                                                        \
            if (vd && !vd[i]) continue;                                                            \
            double x = v[i];                                                                       \
            cnt++;                                                                                 \
            if (agg == AGG_MIN)                                                                    \
                fmin = x < fmin ? x : fmin;                                                        \
            else if (agg == AGG_MAX)                                                               \
                fmax = x > fmax ? x : fmax;                                                        \
            else                                                                                   \
                segr_kadd(&fs, &fc, x);                                                            \
        }                                                                                          \
    } while (0)

/* Reduces rows [lo, hi) (hi - lo <= SEGR_BLOCK) of val for agg into *a;
 * nocheck: integer sums add without the overflow test (proven safe). */
static void segr_range(PrimAgg agg, int nocheck, const PrimVec *val, int64_t lo, int64_t hi,
                       SegAcc *a) {
    *a = segr_empty();
    if (agg == AGG_COUNT_STAR) {
        a->cnt = hi - lo;
        return;
    }
    const uint8_t *vd = val->valid;
    int64_t cnt = 0, isum = 0, imin = INT64_MAX, imax = INT64_MIN;
    double fs = 0, fc = 0, fmin = INFINITY, fmax = -INFINITY;
    int ovf = 0, wide = 1;
    if (!vd && (agg == AGG_MIN || agg == AGG_MAX) &&
        (val->type == PRIM_I32 || val->type == PRIM_I64)) {
        /* fast path: no NULLs, integer MIN/MAX in a branch-free loop the
         * compiler vectorizes (seed 004's Q13 spent 3x DuckDB's time in the
         * general loop above) */
        int64_t mn = INT64_MAX, mx = INT64_MIN;
        if (val->type == PRIM_I32) {
            const int32_t *v = (const int32_t *)val->data;
            int32_t m32 = agg == AGG_MIN ? INT32_MAX : INT32_MIN;
            if (agg == AGG_MIN)
                for (int64_t i = lo; i < hi; i++)
                    m32 = v[i] < m32 ? v[i] : m32;
            else
                for (int64_t i = lo; i < hi; i++)
                    m32 = v[i] > m32 ? v[i] : m32;
            mn = mx = m32;
        } else {
            const int64_t *v = (const int64_t *)val->data;
            int64_t m = agg == AGG_MIN ? INT64_MAX : INT64_MIN;
            if (agg == AGG_MIN)
                for (int64_t i = lo; i < hi; i++)
                    m = v[i] < m ? v[i] : m;
            else
                for (int64_t i = lo; i < hi; i++)
                    m = v[i] > m ? v[i] : m;
            mn = mx = m;
        }
        cnt = hi - lo;
        if (agg == AGG_MIN)
            imin = mn;
        else
            imax = mx;
    } else if (!vd && agg == AGG_SUM && val->type == PRIM_I32) {
        /* fast path: 32-bit values, at most SEGR_BLOCK of them, cannot
         * overflow an int64 sum */
        const int32_t *v = (const int32_t *)val->data;
        int64_t sum = 0;
        for (int64_t i = lo; i < hi; i++)
            sum += v[i];
        isum = sum;
        cnt = hi - lo;
        wide = 0;
    } else if (agg == AGG_COUNT) {
        if (!vd)
            cnt = hi - lo;
        else
            for (int64_t i = lo; i < hi; i++)
                cnt += vd[i] != 0;
    } else {
        switch (val->type) {
        case PRIM_U8:
            wide = 0;
            SEGR_ACC_INT(uint8_t);
            break;
        case PRIM_I32:
            wide = 0;
            SEGR_ACC_INT(int32_t);
            break;
        case PRIM_I64:
            wide = !nocheck;
            SEGR_ACC_INT(int64_t);
            break;
        case PRIM_F32:
            SEGR_ACC_FLT(float);
            break;
        default:
            SEGR_ACC_FLT(double);
            break;
        }
        /* exact (|isum| < 2^53 within one block) unless nocheck, where fs
         * is never read (no overflow) */
        if (!wide && agg == AGG_AVG) fs = (double)isum;
    }
    a->cnt = cnt;
    a->isum = isum;
    a->ovf = ovf;
    a->fs = fs;
    a->fc = fc;
    a->imin = imin;
    a->imax = imax;
    a->fmin = fmin;
    a->fmax = fmax;
}

/* Folds partial b (rows after a's) into a, deterministically. */
static void segr_merge(SegAcc *a, const SegAcc *b) {
    a->cnt += b->cnt;
    if (__builtin_add_overflow(a->isum, b->isum, &a->isum)) a->ovf = 1;
    a->ovf |= b->ovf;
    segr_kadd(&a->fs, &a->fc, b->fs);
    a->fc += b->fc;
    a->imin = b->imin < a->imin ? b->imin : a->imin;
    a->imax = b->imax > a->imax ? b->imax : a->imax;
    a->fmin = b->fmin < a->fmin ? b->fmin : a->fmin;
    a->fmax = b->fmax > a->fmax ? b->fmax : a->fmax;
}

/* Writes segment s's result from a into out. Returns 0, or 1 when an
 * integer SUM overflowed (the value is then written as NULL). */
static int segr_final(const SegJob *J, int64_t s, const SegAcc *a) {
    PrimVec *out = J->out;
    int isnull = 0, bad = 0;
    int64_t iv = 0;
    double fv = 0;
    switch (J->agg) {
    case AGG_COUNT_STAR:
    case AGG_COUNT:
        iv = a->cnt;
        break;
    case AGG_SUM:
        isnull = a->cnt == 0;
        if (J->isfloat)
            fv = segr_fsum(a), isnull |= isnan(fv);
        else if (a->ovf)
            isnull = bad = 1;
        else
            iv = a->isum;
        break;
    case AGG_MIN:
        isnull = a->cnt == 0;
        iv = a->imin;
        fv = a->fmin;
        break;
    case AGG_MAX:
        isnull = a->cnt == 0;
        iv = a->imax;
        fv = a->fmax;
        break;
    case AGG_AVG:
        isnull = a->cnt == 0;
        if (!J->isfloat && !a->ovf)
            fv = (double)a->isum / (double)a->cnt;
        else
            fv = segr_fsum(a) / (double)a->cnt;
        isnull |= isnan(fv);
        break;
    }
    if (out->type == PRIM_F64)
        ((double *)out->data)[s] = isnull ? 0.0 : fv;
    else
        ((int64_t *)out->data)[s] = isnull ? 0 : iv;
    if (out->valid) out->valid[s] = !isnull;
    return bad;
}

/* Returns the row where segment s ends (exclusive). */
static inline int64_t segr_end(const SegJob *J, int64_t s) {
    return s + 1 < J->nseg ? J->starts[s + 1] : J->n;
}

/* Returns the first segment whose start is >= row (starts is sorted). */
static int64_t segr_lower(const SegJob *J, int64_t row) {
    int64_t lo = 0, hi = J->nseg;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (J->starts[mid] < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* prim_parallel body, pass 1: thread t reduces the short segments whose
 * start lies in its share of the rows (long ones are left to pass 2). */
static void segr_small(void *arg, int t, int nt) {
    SegJob *J = arg;
    int64_t s0 = t == 0 ? 0 : segr_lower(J, J->n * t / nt);
    int64_t s1 = t == nt - 1 ? J->nseg : segr_lower(J, J->n * (t + 1) / nt);
    for (int64_t s = s0; s < s1; s++) {
        int64_t lo = J->starts[s], hi = segr_end(J, s);
        if (hi - lo > SEGR_BLOCK) continue;
        SegAcc a;
        segr_range(J->agg, J->nocheck, J->val, lo, hi, &a);
        J->ovf[t] |= segr_final(J, s, &a);
    }
}

/* prim_parallel body, pass 2: thread t reduces its share of the blocks of
 * long segments into bacc. */
static void segr_blocks(void *arg, int t, int nt) {
    SegJob *J = arg;
    for (int64_t b = J->nblocks * t / nt, e = J->nblocks * (t + 1) / nt; b < e; b++)
        segr_range(J->agg, J->nocheck, J->val, J->blocks[b].lo, J->blocks[b].hi, &J->bacc[b]);
}

/* See primitives.h. val may be NULL for AGG_COUNT_STAR. out->type must be
 * the documented result type. starts must be non-decreasing within 0..n.
 * Temporary block storage comes from ctx->alloc. Returns 0, or -1 with a
 * message in ctx->err (bad arguments, "integer overflow" in SUM, memory). */
int prim_cpu_segreduce(PrimCtx *ctx, PrimAgg agg, const PrimVec *val, const int64_t *starts,
                       int64_t nseg, int64_t n, PrimVec *out) {
    return prim_cpu_segreduce_ex(ctx, agg, 0, val, starts, nseg, n, out);
}

/* See primitives.h: prim_cpu_segreduce, with the overflow test left out
 * when nocheck (the caller proved that no integer sum overflows). */
int prim_cpu_segreduce_ex(PrimCtx *ctx, PrimAgg agg, int nocheck, const PrimVec *val,
                          const int64_t *starts, int64_t nseg, int64_t n, PrimVec *out) {
    if (n < 0 || nseg < 0 || !out || (nseg > 0 && (!starts || !out->data)))
        return segr_err(ctx, "bad arguments");
    if (agg < AGG_COUNT_STAR || agg > AGG_AVG) return segr_err(ctx, "bad aggregate %d", (int)agg);
    int isfloat = 0;
    if (agg != AGG_COUNT_STAR) {
        if (!val || prim_type_width(val->type) == 0 || (n > 0 && !val->data))
            return segr_err(ctx, "bad value vector");
        isfloat = val->type == PRIM_F32 || val->type == PRIM_F64;
    }
    PrimType want = PRIM_I64;
    if (agg == AGG_AVG || ((agg == AGG_SUM || agg == AGG_MIN || agg == AGG_MAX) && isfloat))
        want = PRIM_F64;
    if (out->type != want)
        return segr_err(ctx, "output type %d, expected %d", (int)out->type, (int)want);
    for (int64_t s = 0; s < nseg; s++)
        if (starts[s] < 0 || starts[s] > n || (s > 0 && starts[s] < starts[s - 1]))
            return segr_err(ctx, "segment starts are not sorted within 0..n");
    if (nseg == 0) return 0;

    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > SEGR_MAX_THREADS) nt = SEGR_MAX_THREADS;
    if (n < SEGR_PAR_MIN_ROWS) nt = 1;
    SegJob J;
    memset(&J, 0, sizeof J);
    J.agg = agg;
    J.val = val;
    J.starts = starts;
    J.nseg = nseg;
    J.n = n;
    J.out = out;
    J.isfloat = isfloat;
    J.nocheck = nocheck;
    if (prim_parallel(nt, segr_small, &J) != 0) return segr_err(ctx, "cannot start worker threads");
    int ovf = 0;
    for (int t = 0; t < nt; t++)
        ovf |= J.ovf[t];

    /* Long segments: blocks of SEGR_BLOCK rows. */
    int64_t nblocks = 0;
    for (int64_t s = 0; s < nseg; s++) {
        int64_t len = segr_end(&J, s) - starts[s];
        if (len > SEGR_BLOCK) nblocks += (len + SEGR_BLOCK - 1) / SEGR_BLOCK;
    }
    if (nblocks > 0) {
        size_t bytes = (sizeof(SegBlock) + sizeof(SegAcc)) * (size_t)nblocks;
        char *mem = ctx->alloc(ctx->ud, bytes);
        if (!mem) return segr_err(ctx, "out of memory");
        SegBlock *blocks = (SegBlock *)mem;
        SegAcc *bacc = (SegAcc *)(mem + sizeof(SegBlock) * (size_t)nblocks);
        int64_t b = 0;
        for (int64_t s = 0; s < nseg; s++) {
            int64_t lo = starts[s], hi = segr_end(&J, s);
            if (hi - lo <= SEGR_BLOCK) continue;
            for (int64_t r = lo; r < hi; r += SEGR_BLOCK) {
                blocks[b].seg = s;
                blocks[b].lo = r;
                blocks[b].hi = hi - r > SEGR_BLOCK ? r + SEGR_BLOCK : hi;
                b++;
            }
        }
        J.blocks = blocks;
        J.bacc = bacc;
        J.nblocks = nblocks;
        int bt = nt < nblocks ? nt : (int)nblocks;
        if (prim_parallel(bt, segr_blocks, &J) != 0) {
            ctx->free(ctx->ud, mem);
            return segr_err(ctx, "cannot start worker threads");
        }
        for (b = 0; b < nblocks;) {
            SegAcc a = bacc[b];
            int64_t s = blocks[b].seg;
            for (b++; b < nblocks && blocks[b].seg == s; b++)
                segr_merge(&a, &bacc[b]);
            ovf |= segr_final(&J, s, &a);
        }
        ctx->free(ctx->ud, mem);
    }
    if (ovf) return segr_err(ctx, "integer overflow");
    return 0;
}
