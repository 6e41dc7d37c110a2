/*
 * map.c -- CPU twin of the map primitive: a vectorized interpreter of the
 * register program in primitives.h.
 *
 * Rows are processed in batches of MAP_BATCH per thread. Each instruction
 * runs as one tight loop over the batch, reading and writing whole register
 * arrays (int64 or double values plus one NULL byte per row), so the
 * dispatch cost is paid once per instruction per batch, not per row.
 *
 * Per register and batch a "may be NULL" flag is kept; while it is 0 the
 * register's NULL bytes are not maintained and operations skip NULL work.
 * A register filled by POP_COL from an I64 (F64) column into an I (F)
 * register points straight into the column instead of being copied.
 * POP_CONST / POP_NULL into a register that nothing else writes are
 * evaluated once per thread, not once per batch.
 *
 * Integer semantics (SQLite's, with C undefined behaviour avoided):
 *   +, -, *, unary -  an int64 overflow is an error ("integer overflow") in
 *                     prim_cpu_map; prim_cpu_map_reals gives SQLite's REAL
 *                     (map_dyn_row)
 *   a / 0, a % 0      NULL (also for F: x / 0.0 is NULL)
 *   INT64_MIN / -1    an overflow as above;  INT64_MIN % -1 is 0
 *
 * Overflow detection costs one OR per row on the batch loops: an op that
 * overflows on a non-NULL row sets MapRegs.ovf. Only then is the batch
 * checked again row by row (map_recheck) to see whether the overflowed
 * value reaches the result: CASE, COALESCE, AND and OR evaluate every
 * operand over the whole batch, but an overflow in a CASE branch that is
 * not taken (or an operand whose value does not matter) is no error, as in
 * SQLite, which never evaluates it. The GPU twin tracks the same per row.
 *   F % F             both truncated to int64 (saturating), integer
 *                     remainder as a double; NULL when the divisor
 *                     truncates to 0 (SQLite's OP_Remainder)
 *   F -> I            truncation toward zero, saturating at INT64_MIN/MAX,
 *                     NaN gives 0 (SQLite's CAST(x AS INTEGER))
 */
#include <math.h>

#include "primitives/primitives.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ln 10 and ln 2 (math.h's M_LN10 / M_LN2, which C11 does not define):
 * SQLite's log10 / log2 divide the natural log by them */
#define GQP_LN10 2.30258509299404568402
#define GQP_LN2 0.69314718055994530942

#define MAP_BATCH 1024
#define MAP_PAR_MIN_ROWS 65536

static const uint8_t map_zeros[MAP_BATCH];

/* Formats an error message into ctx->err and returns -1. */
static int map_err(PrimCtx *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(ctx->err, sizeof ctx->err, "Primitive Error: map: ");
    if (k < 0 || (size_t)k >= sizeof ctx->err) k = 0;
    vsnprintf(ctx->err + k, sizeof ctx->err - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

/* Returns x truncated toward zero as int32, saturating; NaN gives 0. */
static inline int32_t map_f2i32(double x) {
    if (x >= 2147483648.0) return INT32_MAX;
    if (x >= -2147483648.0) return (int32_t)x;
    return x < 0 ? INT32_MIN : 0;
}

/* One thread's registers for one batch. ri/rf are what instructions read
 * (an own buffer, or a pointer into an input column); oi/of/nl are the
 * thread's own storage. */
typedef struct MapRegs {
    const int64_t *ri[PRIM_MAX_REGS];
    const double *rf[PRIM_MAX_REGS];
    int64_t *oi[PRIM_MAX_REGS];
    double *of[PRIM_MAX_REGS];
    uint8_t *nl[PRIM_MAX_REGS];
    uint8_t maynull[PRIM_MAX_REGS];
    int ovf; /* an integer op overflowed on a non-NULL row of this batch */
} MapRegs;

typedef struct MapJob {
    const PrimProgram *prog;
    const PrimVec *inputs;
    PrimVec *out;
    int64_t n;
    const uint8_t *hoisted; /* per instruction: 1 = evaluated once per thread */
    char *scratch;          /* nt * 2 * per_thread bytes (batch, recheck) */
    size_t per_thread;
    const int *interrupt; /* PrimCtx's: stop between batches when set */
    int failed;           /* some thread found an integer overflow in the result */
    /* prim_cpu_map_reals: the inputs' REAL rows (NULL: none), and, on the
     * second pass (dyn = 1), where the result's go; nreal: some row's is */
    const PrimReals *in_reals;
    PrimReals *out_reals;
    int dyn, nreal;
} MapJob;

/* Marks register d as written through its own int64 buffer and returns
 * that buffer (owned by the thread's scratch). */
static inline int64_t *map_wi(MapRegs *R, int d) {
    R->ri[d] = R->oi[d];
    return R->oi[d];
}

/* Marks register d as written through its own double buffer and returns it. */
static inline double *map_wf(MapRegs *R, int d) {
    R->rf[d] = R->of[d];
    return R->of[d];
}

/* Returns register r's NULL bytes, or a zero array when it cannot be NULL. */
static inline const uint8_t *map_nulls(const MapRegs *R, int r) {
    return R->maynull[r] ? R->nl[r] : map_zeros;
}

/* dst's NULLs = a's NULLs OR b's NULLs (over len rows). */
static void map_null2(MapRegs *R, int d, int a, int b, int64_t len) {
    if (!R->maynull[a] && !R->maynull[b]) {
        R->maynull[d] = 0;
        return;
    }
    const uint8_t *na = map_nulls(R, a), *nb = map_nulls(R, b);
    uint8_t *nd = R->nl[d];
    for (int64_t k = 0; k < len; k++)
        nd[k] = na[k] | nb[k];
    R->maynull[d] = 1;
}

/* dst's NULLs = a's NULLs (over len rows). */
static void map_null1(MapRegs *R, int d, int a, int64_t len) {
    R->maynull[d] = R->maynull[a];
    if (R->maynull[a] && d != a) memcpy(R->nl[d], R->nl[a], (size_t)len);
}

/* SQLite's rule for REAL arithmetic: a NaN result (Inf - Inf, 0 * Inf,
 * Inf / Inf) is NULL. Marks those rows of register d (its values D, just
 * written) NULL; nothing to do, and no NULL bytes written, without one. */
static void map_nan_null(MapRegs *R, int d, double *D, int64_t len) {
    int any = 0;
    for (int64_t k = 0; k < len; k++)
        any |= D[k] != D[k];
    if (!any) return;
    uint8_t *nd = R->nl[d];
    if (!R->maynull[d]) memset(nd, 0, (size_t)len);
    for (int64_t k = 0; k < len; k++)
        if (D[k] != D[k]) {
            nd[k] = 1;
            D[k] = 0.0;
        }
    R->maynull[d] = 1;
}

/* Loads rows base..base+len-1 of input column col into register d of type
 * t (converting), with its NULL bytes. */
static void map_col(MapRegs *R, const PrimVec *col, int d, int t, int64_t base, int64_t len) {
    if (t == PRIM_REG_I) {
        if (col->type == PRIM_I64) {
            R->ri[d] = (const int64_t *)col->data + base;
        } else {
            int64_t *D = map_wi(R, d);
            switch (col->type) {
            case PRIM_U8: {
                const uint8_t *s = (const uint8_t *)col->data + base;
                for (int64_t k = 0; k < len; k++)
                    D[k] = s[k];
                break;
            }
            case PRIM_I32: {
                const int32_t *s = (const int32_t *)col->data + base;
                for (int64_t k = 0; k < len; k++)
                    D[k] = s[k];
                break;
            }
            case PRIM_F32: {
                const float *s = (const float *)col->data + base;
                for (int64_t k = 0; k < len; k++)
                    D[k] = prim_real_to_int(s[k]);
                break;
            }
            default: {
                const double *s = (const double *)col->data + base;
                for (int64_t k = 0; k < len; k++)
                    D[k] = prim_real_to_int(s[k]);
                break;
            }
            }
        }
    } else {
        if (col->type == PRIM_F64) {
            R->rf[d] = (const double *)col->data + base;
        } else {
            double *D = map_wf(R, d);
            switch (col->type) {
            case PRIM_U8: {
                const uint8_t *s = (const uint8_t *)col->data + base;
                for (int64_t k = 0; k < len; k++)
                    D[k] = s[k];
                break;
            }
            case PRIM_I32: {
                const int32_t *s = (const int32_t *)col->data + base;
                for (int64_t k = 0; k < len; k++)
                    D[k] = s[k];
                break;
            }
            case PRIM_I64: {
                const int64_t *s = (const int64_t *)col->data + base;
                for (int64_t k = 0; k < len; k++)
                    D[k] = (double)s[k];
                break;
            }
            default: {
                const float *s = (const float *)col->data + base;
                for (int64_t k = 0; k < len; k++)
                    D[k] = s[k];
                break;
            }
            }
        }
    }
#if defined(__GNUC__)
    /* Touch the next batch of this column now: the interpreter's other
     * loops run in between, too long for the hardware prefetcher alone. */
    {
        size_t w = prim_type_width(col->type);
        const char *nx = (const char *)col->data + (size_t)(base + len) * w;
        const char *end = (const char *)col->data + (size_t)col->n * w;
        for (size_t o = 0; o < (size_t)len * w && nx + o < end; o += 64)
            __builtin_prefetch(nx + o);
    }
#endif
    R->maynull[d] = 0;
    if (col->valid) {
        const uint8_t *v = col->valid + base;
        uint8_t *nd = R->nl[d];
        uint8_t any = 0;
        for (int64_t k = 0; k < len; k++) {
            nd[k] = v[k] == 0;
            any |= nd[k];
        }
        R->maynull[d] = any != 0;
    }
}

/* The index of the last element <= x of the ascending int64 array t[0..n)
 * (a branchless binary search), or -1 when x is below t[0] (POP_RUNS,
 * POP_INLIST). */
static inline int64_t map_run_of(const int64_t *t, int64_t n, int64_t x) {
    if (n <= 0 || x < t[0]) return -1;
    const int64_t *base = t;
    while (n > 1) {
        int64_t half = n / 2;
        base = base[half] <= x ? base + half : base;
        n -= half;
    }
    return base - t;
}

/* Returns 1 if x is in the ascending int64 set t[0..n): the last element
 * <= x is x. */
static inline int map_in_i(const int64_t *t, int64_t n, int64_t x) {
    int64_t k = map_run_of(t, n, x);
    return k >= 0 && t[k] == x;
}

/* Returns 1 if x is in the ascending double set t[0..n) (NaN never is). */
static inline int map_in_f(const double *t, int64_t n, double x) {
    if (n <= 0) return 0;
    const double *base = t;
    while (n > 1) {
        int64_t half = n / 2;
        base = base[half] <= x ? base + half : base;
        n -= half;
    }
    return *base == x;
}

/* Binary arithmetic / comparison loops: D[k] = EXPR over A[k], B[k]. */
#define MAP_LOOP2(DT, D, AT, A, BT, B, EXPR)                                                       \
    do {                                                                                           \
        for (int64_t k = 0; k < len; k++) {                                                        \
            AT x = A[k];                                                                           \
            BT y = B[k];                                                                           \
            D[k] = (DT)(EXPR);                                                                     \
        }                                                                                          \
    } while (0)

/* Runs instruction in over rows base..base+len-1 (len <= MAP_BATCH). */
static void map_exec(MapRegs *R, const PrimInstr *in, const PrimVec *inputs, int64_t base,
                     int64_t len) {
    int d = in->dst, a = in->a, b = in->b, c = in->c;
    int isf = in->t == PRIM_REG_F;
    switch ((PrimOp)in->op) {
    case POP_COL:
        map_col(R, &inputs[in->ival], d, in->t, base, len);
        break;
    case POP_CONST:
        if (isf) {
            double *D = map_wf(R, d);
            for (int64_t k = 0; k < MAP_BATCH; k++)
                D[k] = in->fval;
        } else {
            int64_t *D = map_wi(R, d);
            for (int64_t k = 0; k < MAP_BATCH; k++)
                D[k] = in->ival;
        }
        R->maynull[d] = 0;
        break;
    case POP_NULL: {
        int64_t *Di = map_wi(R, d);
        double *Df = map_wf(R, d);
        memset(Di, 0, sizeof(int64_t) * MAP_BATCH);
        for (int64_t k = 0; k < MAP_BATCH; k++)
            Df[k] = 0.0;
        memset(R->nl[d], 1, MAP_BATCH);
        R->maynull[d] = 1;
        break;
    }
    case POP_ADD:
    case POP_SUB:
    case POP_MUL:
        map_null2(R, d, a, b, len);
        if (isf) {
            const double *A = R->rf[a], *B = R->rf[b];
            double *D = map_wf(R, d);
            if (in->op == POP_ADD)
                MAP_LOOP2(double, D, double, A, double, B, x + y);
            else if (in->op == POP_SUB)
                MAP_LOOP2(double, D, double, A, double, B, x - y);
            else
                MAP_LOOP2(double, D, double, A, double, B, x *y);
            map_nan_null(R, d, D, len);
        } else {
            const int64_t *A = R->ri[a], *B = R->ri[b];
            int64_t *D = map_wi(R, d);
            /* the wrapped result and its overflow bit (bit 63 of o) per row,
             * NULL rows masked out (M: 0 for a NULL row, all ones else):
             * one OR per row, no branch */
            uint64_t o = 0;
#define MAP_ARITH_OVF(M)                                                                           \
    do {                                                                                           \
        if (in->op == POP_ADD) {                                                                   \
            for (int64_t k = 0; k < len; k++) {                                                    \
                uint64_t x = (uint64_t)A[k], y = (uint64_t)B[k], r = x + y;                        \
                o |= ((x ^ r) & (y ^ r)) & (M);                                                    \
                D[k] = (int64_t)r;                                                                 \
            }                                                                                      \
        } else if (in->op == POP_SUB) {                                                            \
            for (int64_t k = 0; k < len; k++) {                                                    \
                uint64_t x = (uint64_t)A[k], y = (uint64_t)B[k], r = x - y;                        \
                o |= ((x ^ y) & (x ^ r)) & (M);                                                    \
                D[k] = (int64_t)r;                                                                 \
            }                                                                                      \
        } else {                                                                                   \
            /* operands within 32 bits cannot overflow: that test in the                           \
             * vectorized loop, the exact one only for a batch that fails it */                    \
            uint64_t big = 0;                                                                      \
            for (int64_t k = 0; k < len; k++) {                                                    \
                uint64_t x = (uint64_t)A[k], y = (uint64_t)B[k];                                   \
                big |= ((x + 0x80000000u) | (y + 0x80000000u)) & (M);                              \
                D[k] = (int64_t)(x * y);                                                           \
            }                                                                                      \
            if (big >> 32)                                                                         \
                for (int64_t k = 0; k < len; k++) {                                                \
                    int64_t r;                                                                     \
                    uint64_t v = (uint64_t)__builtin_mul_overflow(A[k], B[k], &r);                 \
                    o |= (v << 63) & (M);                                                          \
                }                                                                                  \
        }                                                                                          \
    } while (0)
            if (R->maynull[d]) {
                const uint8_t *nd = R->nl[d];
                MAP_ARITH_OVF((uint64_t)nd[k] - 1);
            } else {
                MAP_ARITH_OVF(~(uint64_t)0);
            }
#undef MAP_ARITH_OVF
            R->ovf |= (int)(o >> 63);
        }
        break;
    case POP_DIV:
    case POP_MOD: {
        /* NULLs first: dst may alias b, whose zeros decide the NULLs. */
        int fmod_ = isf && in->op == POP_MOD;
        uint8_t anyz = 0;
        if (isf) {
            const double *B = R->rf[b];
            if (fmod_)
                for (int64_t k = 0; k < len; k++)
                    anyz |= prim_real_to_int(B[k]) == 0;
            else
                for (int64_t k = 0; k < len; k++)
                    anyz |= B[k] == 0.0;
        } else {
            const int64_t *B = R->ri[b];
            for (int64_t k = 0; k < len; k++)
                anyz |= B[k] == 0;
        }
        if (anyz || R->maynull[a] || R->maynull[b]) {
            const uint8_t *na = map_nulls(R, a), *nb = map_nulls(R, b);
            uint8_t *nd = R->nl[d];
            if (fmod_) {
                const double *B = R->rf[b];
                for (int64_t k = 0; k < len; k++)
                    nd[k] = na[k] | nb[k] | (prim_real_to_int(B[k]) == 0);
            } else if (isf) {
                const double *B = R->rf[b];
                for (int64_t k = 0; k < len; k++)
                    nd[k] = na[k] | nb[k] | (B[k] == 0.0);
            } else {
                const int64_t *B = R->ri[b];
                for (int64_t k = 0; k < len; k++)
                    nd[k] = na[k] | nb[k] | (B[k] == 0);
            }
            R->maynull[d] = 1;
        } else {
            R->maynull[d] = 0;
        }
        if (fmod_) {
            const double *A = R->rf[a], *B = R->rf[b];
            double *D = map_wf(R, d);
            for (int64_t k = 0; k < len; k++) {
                int64_t x = prim_real_to_int(A[k]), y = prim_real_to_int(B[k]);
                D[k] = (y == 0 || y == -1) ? 0.0 : (double)(x % y);
            }
        } else if (isf) {
            const double *A = R->rf[a], *B = R->rf[b];
            double *D = map_wf(R, d);
            for (int64_t k = 0; k < len; k++)
                D[k] = B[k] == 0.0 ? 0.0 : A[k] / B[k];
            map_nan_null(R, d, D, len);
        } else if (in->op == POP_DIV) {
            const int64_t *A = R->ri[a], *B = R->ri[b];
            const uint8_t *nd = map_nulls(R, d);
            int64_t *D = map_wi(R, d);
            uint8_t o = 0;
            for (int64_t k = 0; k < len; k++) {
                int64_t x = A[k], y = B[k];
                o |= (uint8_t)((y == -1) & (x == INT64_MIN) & !nd[k]);
                D[k] = y == 0 ? 0 : y == -1 ? (int64_t)(0 - (uint64_t)x) : x / y;
            }
            R->ovf |= o;
        } else {
            const int64_t *A = R->ri[a], *B = R->ri[b];
            int64_t *D = map_wi(R, d);
            for (int64_t k = 0; k < len; k++) {
                int64_t x = A[k], y = B[k];
                D[k] = (y == 0 || y == -1) ? 0 : x % y;
            }
        }
        break;
    }
    case POP_NEG:
        map_null1(R, d, a, len);
        if (isf) {
            const double *A = R->rf[a];
            double *D = map_wf(R, d);
            for (int64_t k = 0; k < len; k++)
                D[k] = -A[k];
        } else {
            const int64_t *A = R->ri[a];
            int64_t *D = map_wi(R, d);
            /* bit 63 of x & -x is set for x = INT64_MIN only */
            uint64_t o = 0;
            if (R->maynull[d]) {
                const uint8_t *nd = R->nl[d];
                for (int64_t k = 0; k < len; k++) {
                    uint64_t x = (uint64_t)A[k];
                    o |= x & (0 - x) & ((uint64_t)nd[k] - 1);
                    D[k] = (int64_t)(0 - x);
                }
            } else {
                for (int64_t k = 0; k < len; k++) {
                    uint64_t x = (uint64_t)A[k];
                    o |= x & (0 - x);
                    D[k] = (int64_t)(0 - x);
                }
            }
            R->ovf |= (int)(o >> 63);
        }
        break;
    case POP_I2F: {
        map_null1(R, d, a, len);
        const int64_t *A = R->ri[a];
        double *D = map_wf(R, d);
        for (int64_t k = 0; k < len; k++)
            D[k] = (double)A[k];
        break;
    }
    case POP_MATH:
    case POP_POW: {
        /* NULL where an operand is, or outside the domain (SQLite) */
        const double *A = R->rf[a], *B = in->op == POP_POW ? R->rf[b] : NULL;
        const uint8_t *na = map_nulls(R, a), *nb = B ? map_nulls(R, b) : map_zeros;
        uint8_t *nd = R->nl[d];
        double *D = map_wf(R, d);
        int f = (int)in->ival;
        for (int64_t k = 0; k < len; k++) {
            double x = A[k], r;
            int bad;
            if (B) {
                r = f ? fmod(x, B[k]) : pow(x, B[k]);
                bad = isnan(r);
            } else {
                switch (f) {
                case PMATH_SQRT:
                    bad = !(x >= 0), r = sqrt(x);
                    break;
                case PMATH_EXP:
                    bad = isnan(x), r = exp(x);
                    break;
                case PMATH_LN:
                    bad = !(x > 0), r = log(x);
                    break;
                case PMATH_LOG10:
                    bad = !(x > 0), r = log(x) / GQP_LN10; /* as SQLite: ln, then the base */
                    break;
                default:
                    bad = !(x > 0), r = log(x) / GQP_LN2;
                    break;
                }
            }
            nd[k] = (uint8_t)(na[k] | nb[k] | bad);
            D[k] = bad ? 0.0 : r;
        }
        R->maynull[d] = 1;
        break;
    }
    case POP_F2I: {
        map_null1(R, d, a, len);
        if (in->ival == 1) {
            /* CAST(integer AS INTEGER): the value itself (a REAL from an
             * overflow is truncated by map_dyn_row) */
            const int64_t *A = R->ri[a];
            int64_t *D = map_wi(R, d);
            if (D != A) memmove(D, A, sizeof(int64_t) * (size_t)len);
            break;
        }
        const double *A = R->rf[a];
        int64_t *D = map_wi(R, d);
        for (int64_t k = 0; k < len; k++)
            D[k] = prim_real_to_int(A[k]);
        break;
    }
    case POP_EQ:
    case POP_NE:
    case POP_LT:
    case POP_LE:
    case POP_GT:
    case POP_GE: {
        map_null2(R, d, a, b, len);
        int op = in->op;
        if (isf) {
            const double *A = R->rf[a], *B = R->rf[b];
            int64_t *D = map_wi(R, d);
            if (op == POP_EQ)
                MAP_LOOP2(int64_t, D, double, A, double, B, x == y);
            else if (op == POP_NE)
                MAP_LOOP2(int64_t, D, double, A, double, B, x != y);
            else if (op == POP_LT)
                MAP_LOOP2(int64_t, D, double, A, double, B, x < y);
            else if (op == POP_LE)
                MAP_LOOP2(int64_t, D, double, A, double, B, x <= y);
            else if (op == POP_GT)
                MAP_LOOP2(int64_t, D, double, A, double, B, x > y);
            else
                MAP_LOOP2(int64_t, D, double, A, double, B, x >= y);
        } else {
            const int64_t *A = R->ri[a], *B = R->ri[b];
            int64_t *D = map_wi(R, d);
            if (op == POP_EQ)
                MAP_LOOP2(int64_t, D, int64_t, A, int64_t, B, x == y);
            else if (op == POP_NE)
                MAP_LOOP2(int64_t, D, int64_t, A, int64_t, B, x != y);
            else if (op == POP_LT)
                MAP_LOOP2(int64_t, D, int64_t, A, int64_t, B, x < y);
            else if (op == POP_LE)
                MAP_LOOP2(int64_t, D, int64_t, A, int64_t, B, x <= y);
            else if (op == POP_GT)
                MAP_LOOP2(int64_t, D, int64_t, A, int64_t, B, x > y);
            else
                MAP_LOOP2(int64_t, D, int64_t, A, int64_t, B, x >= y);
        }
        break;
    }
    case POP_AND:
    case POP_OR: {
        int isand = in->op == POP_AND;
        int mn = R->maynull[a] || R->maynull[b];
        const uint8_t *na = map_nulls(R, a), *nb = map_nulls(R, b);
        uint8_t *nd = R->nl[d];
        /* Truth values: compute into dst's int64 buffer first (it may alias a
         * or b element-wise, which is fine: each row reads then writes). */
        const int64_t *Ai = R->ri[a], *Bi = R->ri[b];
        const double *Af = R->rf[a], *Bf = R->rf[b];
        int64_t *D = map_wi(R, d);
        if (!mn) {
            if (isf && isand)
                MAP_LOOP2(int64_t, D, double, Af, double, Bf, (x != 0) & (y != 0));
            else if (isf)
                MAP_LOOP2(int64_t, D, double, Af, double, Bf, (x != 0) | (y != 0));
            else if (isand)
                MAP_LOOP2(int64_t, D, int64_t, Ai, int64_t, Bi, (x != 0) & (y != 0));
            else
                MAP_LOOP2(int64_t, D, int64_t, Ai, int64_t, Bi, (x != 0) | (y != 0));
            R->maynull[d] = 0;
            break;
        }
        for (int64_t k = 0; k < len; k++) {
            int ta = isf ? Af[k] != 0 : Ai[k] != 0;
            int tb = isf ? Bf[k] != 0 : Bi[k] != 0;
            int xa = na[k], xb = nb[k];
            if (isand) {
                int f = ((!xa) & (!ta)) | ((!xb) & (!tb)); /* definitely false */
                D[k] = ta & tb & (!xa) & (!xb);
                nd[k] = (uint8_t)((!f) & (xa | xb));
            } else {
                int tr = ((!xa) & ta) | ((!xb) & tb); /* definitely true */
                D[k] = tr;
                nd[k] = (uint8_t)((!tr) & (xa | xb));
            }
        }
        R->maynull[d] = 1;
        break;
    }
    case POP_NOT:
    case POP_TRUTH: {
        map_null1(R, d, a, len);
        int isnot = in->op == POP_NOT;
        if (isf) {
            const double *A = R->rf[a];
            int64_t *D = map_wi(R, d);
            for (int64_t k = 0; k < len; k++)
                D[k] = isnot ? A[k] == 0 : A[k] != 0;
        } else {
            const int64_t *A = R->ri[a];
            int64_t *D = map_wi(R, d);
            for (int64_t k = 0; k < len; k++)
                D[k] = isnot ? A[k] == 0 : A[k] != 0;
        }
        break;
    }
    case POP_ISNULL:
    case POP_NOTNULL: {
        const uint8_t *na = map_nulls(R, a);
        int64_t *D = map_wi(R, d);
        if (in->op == POP_ISNULL)
            for (int64_t k = 0; k < len; k++)
                D[k] = na[k] != 0;
        else
            for (int64_t k = 0; k < len; k++)
                D[k] = na[k] == 0;
        R->maynull[d] = 0;
        break;
    }
    case POP_CASE: {
        /* The condition is taken first: dst may alias a. */
        uint8_t cond[MAP_BATCH];
        const int64_t *A = R->ri[a];
        const uint8_t *na = map_nulls(R, a), *nb = map_nulls(R, b), *nc = map_nulls(R, c);
        for (int64_t k = 0; k < len; k++)
            cond[k] = (uint8_t)((!na[k]) & (A[k] != 0));
        int mn = R->maynull[b] || R->maynull[c];
        if (mn) {
            uint8_t *nd = R->nl[d];
            for (int64_t k = 0; k < len; k++)
                nd[k] = cond[k] ? nb[k] : nc[k];
        }
        if (isf) {
            const double *B = R->rf[b], *C = R->rf[c];
            double *D = map_wf(R, d);
            for (int64_t k = 0; k < len; k++)
                D[k] = cond[k] ? B[k] : C[k];
        } else {
            const int64_t *B = R->ri[b], *C = R->ri[c];
            int64_t *D = map_wi(R, d);
            for (int64_t k = 0; k < len; k++)
                D[k] = cond[k] ? B[k] : C[k];
        }
        R->maynull[d] = (uint8_t)mn;
        break;
    }
    case POP_LOOKUP: {
        const int64_t *A = R->ri[a];
        const uint8_t *na = map_nulls(R, a);
        const int64_t *tab = in->table;
        int64_t tn = in->table_n;
        uint8_t *nd = R->nl[d];
        /* t == PRIM_REG_F: the entries are doubles' bit patterns */
        char *D = isf ? (char *)map_wf(R, d) : (char *)map_wi(R, d);
        uint8_t any = 0;
        for (int64_t k = 0; k < len; k++) {
            int64_t x = A[k];
            int ok = !na[k] && x >= 0 && x < tn;
            int64_t v = ok ? tab[x] : INT64_MIN;
            uint8_t isn = v == INT64_MIN;
            nd[k] = isn;
            any |= isn;
            int64_t bits = isn ? 0 : v;
            memcpy(D + (size_t)k * sizeof bits, &bits, sizeof bits);
        }
        R->maynull[d] = any != 0;
        break;
    }
    case POP_LOOKUPV: {
        const int64_t *A = R->ri[a];
        const uint8_t *na = map_nulls(R, a);
        const uint8_t *tab = (const uint8_t *)inputs[in->ival].data;
        int64_t tn = inputs[in->ival].n;
        uint8_t *nd = R->nl[d];
        int64_t *D = map_wi(R, d);
        uint8_t any = 0;
        for (int64_t k = 0; k < len; k++) {
            int64_t x = A[k];
            uint8_t isn = na[k] || x < 0 || x >= tn;
            nd[k] = isn;
            any |= isn;
            D[k] = isn ? 0 : tab[x];
        }
        R->maynull[d] = any != 0;
        break;
    }
    case POP_RUNS: {
        /* Element-wise: dst (and its NULL bytes) may alias a. */
        const int64_t *A = R->ri[a];
        const uint8_t *na = map_nulls(R, a);
        uint8_t *nd = R->nl[d];
        int64_t *D = map_wi(R, d);
        uint8_t any = 0;
        for (int64_t k = 0; k < len; k++) {
            int64_t r = na[k] ? -1 : map_run_of(in->table, in->table_n, A[k]);
            uint8_t isn = r < 0;
            nd[k] = isn;
            any |= isn;
            D[k] = isn ? 0 : r;
        }
        R->maynull[d] = any != 0;
        break;
    }
    case POP_INLIST: {
        /* Element-wise: dst (and its NULL bytes) may alias a. */
        const uint8_t *na = map_nulls(R, a);
        int hasnull = in->ival != 0;
        uint8_t mn = (uint8_t)(R->maynull[a] | hasnull);
        uint8_t *nd = R->nl[d];
        int64_t tn = in->table_n;
        if (isf) {
            const double *A = R->rf[a];
            const double *tab = (const double *)(const void *)in->table;
            int64_t *D = map_wi(R, d);
            for (int64_t k = 0; k < len; k++) {
                int f = map_in_f(tab, tn, A[k]);
                uint8_t isn = (uint8_t)(na[k] | ((!f) & hasnull));
                D[k] = f & !na[k];
                if (mn) nd[k] = isn;
            }
        } else {
            const int64_t *A = R->ri[a];
            int64_t *D = map_wi(R, d);
            for (int64_t k = 0; k < len; k++) {
                int f = map_in_i(in->table, tn, A[k]);
                uint8_t isn = (uint8_t)(na[k] | ((!f) & hasnull));
                D[k] = f & !na[k];
                if (mn) nd[k] = isn;
            }
        }
        R->maynull[d] = mn;
        break;
    }
    case POP_COALESCE: {
        if (!R->maynull[a]) {
            if (isf) {
                const double *A = R->rf[a];
                double *D = map_wf(R, d);
                if (D != A) memcpy(D, A, sizeof(double) * (size_t)len);
            } else {
                const int64_t *A = R->ri[a];
                int64_t *D = map_wi(R, d);
                if (D != A) memcpy(D, A, sizeof(int64_t) * (size_t)len);
            }
            R->maynull[d] = 0;
            break;
        }
        const uint8_t *na = R->nl[a], *nb = map_nulls(R, b);
        int mb = R->maynull[b];
        if (isf) {
            const double *A = R->rf[a], *B = R->rf[b];
            double *D = map_wf(R, d);
            for (int64_t k = 0; k < len; k++)
                D[k] = na[k] ? B[k] : A[k];
        } else {
            const int64_t *A = R->ri[a], *B = R->ri[b];
            int64_t *D = map_wi(R, d);
            for (int64_t k = 0; k < len; k++)
                D[k] = na[k] ? B[k] : A[k];
        }
        /* Values are written before NULLs: dst may alias a's NULL bytes. */
        uint8_t *nd = R->nl[d];
        for (int64_t k = 0; k < len; k++)
            nd[k] = na[k] & nb[k];
        R->maynull[d] = (uint8_t)mb;
        break;
    }
    }
}

/* Stores register r (of type rt) for rows base..base+len-1 into out,
 * converting to out->type, with validity and as_filter semantics. */
static void map_store(const MapRegs *R, int r, int rt, int as_filter, PrimVec *out, int64_t base,
                      int64_t len) {
    const uint8_t *nr = map_nulls(R, r);
    int mn = R->maynull[r];
    if (out->valid) {
        uint8_t *v = out->valid + base;
        if (as_filter || !mn)
            memset(v, 1, (size_t)len);
        else
            for (int64_t k = 0; k < len; k++)
                v[k] = !nr[k];
    }
    if (rt == PRIM_REG_I) {
        const int64_t *A = R->ri[r];
        if (as_filter || out->type == PRIM_U8) {
            uint8_t *D = (uint8_t *)out->data + base;
            for (int64_t k = 0; k < len; k++)
                D[k] = (uint8_t)((!nr[k]) & (A[k] != 0));
            return;
        }
        switch (out->type) {
        case PRIM_I32: {
            int32_t *D = (int32_t *)out->data + base;
            for (int64_t k = 0; k < len; k++)
                D[k] = nr[k] ? 0 : (int32_t)A[k];
            break;
        }
        case PRIM_I64: {
            int64_t *D = (int64_t *)out->data + base;
            for (int64_t k = 0; k < len; k++)
                D[k] = nr[k] ? 0 : A[k];
            break;
        }
        case PRIM_F32: {
            float *D = (float *)out->data + base;
            for (int64_t k = 0; k < len; k++)
                D[k] = nr[k] ? 0.0f : (float)A[k];
            break;
        }
        default: {
            double *D = (double *)out->data + base;
            for (int64_t k = 0; k < len; k++)
                D[k] = nr[k] ? 0.0 : (double)A[k];
            break;
        }
        }
    } else {
        const double *A = R->rf[r];
        if (as_filter || out->type == PRIM_U8) {
            uint8_t *D = (uint8_t *)out->data + base;
            for (int64_t k = 0; k < len; k++)
                D[k] = (uint8_t)((!nr[k]) & (A[k] != 0));
            return;
        }
        switch (out->type) {
        case PRIM_I32: {
            int32_t *D = (int32_t *)out->data + base;
            for (int64_t k = 0; k < len; k++)
                D[k] = nr[k] ? 0 : map_f2i32(A[k]);
            break;
        }
        case PRIM_I64: {
            int64_t *D = (int64_t *)out->data + base;
            for (int64_t k = 0; k < len; k++)
                D[k] = nr[k] ? 0 : prim_real_to_int(A[k]);
            break;
        }
        case PRIM_F32: {
            float *D = (float *)out->data + base;
            for (int64_t k = 0; k < len; k++)
                D[k] = nr[k] ? 0.0f : (float)A[k];
            break;
        }
        default: {
            double *D = (double *)out->data + base;
            for (int64_t k = 0; k < len; k++)
                D[k] = nr[k] ? 0.0 : A[k];
            break;
        }
        }
    }
}

static int map_reads(int op);

/* Points R's registers at the per_thread bytes at s and evaluates the
 * hoisted instructions once. */
static void map_regs_init(const MapJob *J, MapRegs *R, char *s) {
    const PrimProgram *P = J->prog;
    for (int r = 0; r < P->nregs; r++) {
        R->oi[r] = (int64_t *)s;
        s += sizeof(int64_t) * MAP_BATCH;
        R->of[r] = (double *)s;
        s += sizeof(double) * MAP_BATCH;
        R->nl[r] = (uint8_t *)s;
        s += MAP_BATCH;
        R->ri[r] = R->oi[r];
        R->rf[r] = R->of[r];
        R->maynull[r] = 0;
    }
    R->ovf = 0;
    for (int i = 0; i < P->ninstr; i++)
        if (J->hoisted[i]) map_exec(R, &P->code[i], J->inputs, 0, MAP_BATCH);
}

/* Whether the result of in is an overflow error (a "poisoned" value),
 * given pm, the poisoned registers before in runs, and R's values of the
 * current row (index 0). An error in an operand carries over, except where
 * the operand's value cannot matter, as SQLite would not evaluate it:
 *   CASE      the condition's error, and the chosen branch's only
 *   COALESCE  a's error, and b's only when a is NULL
 *   AND (OR)  none when either operand is a non-error false (true)
 * The GPU twin's map_poison (primitives/gpu/device.cu) is the same rule. */
static int map_poison(const MapRegs *R, const PrimInstr *in, uint64_t pm) {
    int rd = map_reads(in->op);
    int pa = (rd & 1) && (pm >> in->a & 1), pb = (rd & 2) && (pm >> in->b & 1);
    int pc = (rd & 4) && (pm >> in->c & 1);
    switch ((PrimOp)in->op) {
    case POP_CASE:
        return pa | ((!map_nulls(R, in->a)[0] && R->ri[in->a][0] != 0) ? pb : pc);
    case POP_COALESCE:
        return pa | (map_nulls(R, in->a)[0] ? pb : 0);
    case POP_AND:
    case POP_OR: {
        int want = in->op == POP_OR, isf = in->t == PRIM_REG_F;
        int ta = isf ? R->rf[in->a][0] != 0 : R->ri[in->a][0] != 0;
        int tb = isf ? R->rf[in->b][0] != 0 : R->ri[in->b][0] != 0;
        if ((!pa && !map_nulls(R, in->a)[0] && ta == want) ||
            (!pb && !map_nulls(R, in->b)[0] && tb == want))
            return 0;
        return pa | pb;
    }
    default:
        return pa | pb | pc;
    }
}

/* Rows base..base+len-1, one at a time in R (a second register set, its
 * hoisted instructions evaluated): returns 1 when an integer overflow on
 * one of them reaches the program's result (see map_poison), else 0. */
static int map_recheck(const MapJob *J, MapRegs *R, int64_t base, int64_t len) {
    const PrimProgram *P = J->prog;
    for (int64_t k = 0; k < len; k++) {
        uint64_t pm = 0;
        for (int i = 0; i < P->ninstr; i++) {
            if (J->hoisted[i]) continue;
            const PrimInstr *in = &P->code[i];
            int p = pm ? map_poison(R, in, pm) : 0;
            R->ovf = 0;
            map_exec(R, in, J->inputs, base + k, 1);
            pm = (pm & ~(1ull << in->dst)) | ((uint64_t)(p | R->ovf) << in->dst);
        }
        if (pm >> P->result & 1) return 1;
    }
    return 0;
}

/* Register type masks used by validation. */
enum { MAP_I = 1, MAP_F = 2, MAP_ANY = 3 };
static int map_operand_type(const PrimInstr *in, int o);

/* --- SQLite's switch to REAL on an integer overflow (prim_cpu_map_reals) --
 * A row whose batch saw an overflow (or read an input's REAL row) is
 * evaluated again alone by map_dyn_row: each register of type I may then
 * hold a REAL (ov[r] set, its value in ovv[r]) besides its int64. An
 * instruction none of whose operands holds one runs as usual (map_exec
 * over one row); an integer + - * / or unary - that overflows on the row
 * makes its result the REAL SQLite computes. An instruction reading a REAL
 * follows SQLite's rules for a REAL operand: arithmetic in doubles,
 * comparisons by value (exactly against integers), truth as != 0.0,
 * CAST AS INTEGER truncating. */

/* Row 0 of register r as a number: *isnull, and its value as a double
 * (and an int64 in *iv, *isreal = 0, when it holds one). */
static void dyn_get(const MapRegs *R, const uint8_t *ov, const double *ovv, int r, int isf,
                    int *isnull, int *isreal, int64_t *iv, double *fv) {
    *isnull = map_nulls(R, r)[0] != 0;
    if (ov[r]) {
        *isreal = 1, *fv = ovv[r], *iv = 0;
    } else if (isf) {
        *isreal = 1, *fv = R->rf[r][0], *iv = 0;
    } else {
        *isreal = 0, *iv = R->ri[r][0], *fv = (double)*iv;
    }
}

/* Row 0 of register d := an integer (or NULL). */
static void dyn_set_i(MapRegs *R, int d, int isnull, int64_t v) {
    map_wi(R, d)[0] = isnull ? 0 : v;
    R->nl[d][0] = (uint8_t)isnull;
    R->maynull[d] = 1;
}

/* Row 0 of register d := a double (or NULL), an F register's value. */
static void dyn_set_f(MapRegs *R, int d, int isnull, double v) {
    map_wf(R, d)[0] = isnull ? 0.0 : v;
    R->nl[d][0] = (uint8_t)isnull;
    R->maynull[d] = 1;
}

/* Evaluates row `row` of the program alone in R (a register set with the
 * hoisted instructions evaluated) with REAL overflow, and stores its
 * result into out (a REAL result of an I program: its truncation, and
 * val/is in reals). Returns 0, or -1 where the REAL cannot be the value:
 * ABS(INT64_MIN) (an error in SQLite too), a REAL used as a dictionary
 * code, an I result stored in a vector narrower than int64. */
static int map_dyn_row(const MapJob *J, MapRegs *R, int64_t row) {
    const PrimProgram *P = J->prog;
    uint8_t ov[PRIM_MAX_REGS] = {0};
    double ovv[PRIM_MAX_REGS];
    for (int i = 0; i < P->ninstr; i++) {
        if (J->hoisted[i]) continue;
        const PrimInstr *in = &P->code[i];
        int d = in->dst, op = in->op, rd = map_reads(op);
        int isf = in->t == PRIM_REG_F;
        int any = ((rd & 1) && ov[in->a]) || ((rd & 2) && ov[in->b]) || ((rd & 4) && ov[in->c]);
        int af_ = map_operand_type(in, 0) == MAP_F, bf_ = map_operand_type(in, 1) == MAP_F;
        if (!any) {
            int an = 0, bn = 0, ar = 0, br = 0;
            int64_t ai = 0, bi = 0;
            double af = 0, bf = 0;
            if (rd & 1) dyn_get(R, ov, ovv, in->a, af_, &an, &ar, &ai, &af);
            if (rd & 2) dyn_get(R, ov, ovv, in->b, bf_, &bn, &br, &bi, &bf);
            R->ovf = 0;
            map_exec(R, in, J->inputs, row, 1);
            ov[d] = 0;
            if (op == POP_COL && !isf && J->in_reals && J->in_reals[in->ival].is &&
                J->in_reals[in->ival].is[row]) {
                ov[d] = 1, ovv[d] = J->in_reals[in->ival].val[row];
            } else if (R->ovf) {
                /* an integer op overflowed on this (non-NULL) row */
                ov[d] = 1;
                switch (op) {
                case POP_ADD:
                    ovv[d] = af + bf;
                    break;
                case POP_SUB:
                    ovv[d] = af - bf;
                    break;
                case POP_MUL:
                    ovv[d] = af * bf;
                    break;
                case POP_DIV:
                    ovv[d] = af / bf; /* INT64_MIN / -1 */
                    break;
                default: /* POP_NEG */
                    ovv[d] = -af;
                    break;
                }
                /* ival 1: ABS's negation or DECIMAL arithmetic, whose
                 * overflow stays an error */
                if (in->ival == 1) return -1;
            }
            continue;
        }
        /* an operand holds a REAL */
        int an = 0, bn = 0, ar = 0, br = 0;
        int64_t ai = 0, bi = 0;
        double af = 0, bf = 0;
        if (rd & 1) dyn_get(R, ov, ovv, in->a, af_, &an, &ar, &ai, &af);
        if (rd & 2) dyn_get(R, ov, ovv, in->b, bf_, &bn, &br, &bi, &bf);
        int nul = an || ((rd & 2) && bn);
        double r = 0;
        switch ((PrimOp)op) {
        case POP_ADD:
        case POP_SUB:
        case POP_MUL:
        case POP_DIV:
        case POP_MOD:
        case POP_NEG:
            if (in->ival == 1 && op != POP_NEG) return -1; /* DECIMAL arithmetic */
            if (op == POP_ADD) r = af + bf;
            if (op == POP_SUB) r = af - bf;
            if (op == POP_MUL) r = af * bf;
            if (op == POP_DIV) nul |= bf == 0.0, r = bf == 0.0 ? 0 : af / bf;
            if (op == POP_MOD) {
                int64_t x = ar ? prim_real_to_int(af) : ai, y = br ? prim_real_to_int(bf) : bi;
                nul |= y == 0;
                r = (y == 0 || y == -1) ? 0.0 : (double)(x % y);
            }
            if (op == POP_NEG) r = -af;
            nul |= r != r; /* a NaN (Inf - Inf) is NULL */
            if (nul) {
                dyn_set_i(R, d, 1, 0);
                ov[d] = 0;
            } else {
                ov[d] = 1, ovv[d] = r;
            }
            continue;
        case POP_I2F:
            ov[d] = 0;
            dyn_set_f(R, d, an, af);
            continue;
        case POP_F2I: /* ival 1: CAST(integer AS INTEGER) of a REAL */
            ov[d] = 0;
            dyn_set_i(R, d, an, prim_real_to_int(af));
            continue;
        case POP_EQ:
        case POP_NE:
        case POP_LT:
        case POP_LE:
        case POP_GT:
        case POP_GE: {
            int c = ar && br ? (af < bf ? -1 : af > bf)
                    : ar     ? -prim_cmp_int_real(bi, af)
                             : prim_cmp_int_real(ai, bf);
            int v = op == POP_EQ   ? c == 0
                    : op == POP_NE ? c != 0
                    : op == POP_LT ? c < 0
                    : op == POP_LE ? c <= 0
                    : op == POP_GT ? c > 0
                                   : c >= 0;
            ov[d] = 0;
            dyn_set_i(R, d, nul, v);
            continue;
        }
        case POP_AND:
        case POP_OR: {
            int ta = ar ? af != 0 : ai != 0, tb = br ? bf != 0 : bi != 0;
            int want = op == POP_OR; /* the value that decides */
            int v, vn = 0;
            if ((!an && ta == want) || (!bn && tb == want))
                v = want;
            else if (an || bn)
                v = 0, vn = 1;
            else
                v = !want;
            ov[d] = 0;
            dyn_set_i(R, d, vn, v);
            continue;
        }
        case POP_NOT:
        case POP_TRUTH:
            ov[d] = 0;
            dyn_set_i(R, d, an, op == POP_NOT ? af == 0 : af != 0);
            continue;
        case POP_ISNULL:
        case POP_NOTNULL:
            ov[d] = 0;
            dyn_set_i(R, d, 0, op == POP_ISNULL ? an : !an);
            continue;
        case POP_CASE:
        case POP_COALESCE: {
            int pick; /* the register the value comes from */
            if (op == POP_CASE)
                pick = (!an && (ar ? af != 0 : ai != 0)) ? in->b : in->c;
            else
                pick = an ? in->b : in->a;
            int pn, pr;
            int64_t pi;
            double pf;
            dyn_get(R, ov, ovv, pick, isf, &pn, &pr, &pi, &pf);
            if (ov[pick]) {
                ov[d] = 1, ovv[d] = pf;
            } else {
                ov[d] = 0;
                if (isf)
                    dyn_set_f(R, d, pn, pf);
                else
                    dyn_set_i(R, d, pn, pi);
            }
            continue;
        }
        case POP_INLIST: {
            /* a REAL in a set of integers: only an integral value can be */
            int f = !an && af == trunc(af) && af >= -9223372036854775808.0 &&
                    af < 9223372036854775808.0 && map_in_i(in->table, in->table_n, (int64_t)af);
            ov[d] = 0;
            dyn_set_i(R, d, an || (!f && in->ival != 0), f);
            continue;
        }
        default: /* a REAL as a dictionary code or table index */
            return -1;
        }
    }
    int res = P->result;
    PrimVec *out = J->out;
    if (!ov[res]) {
        map_store(R, res, P->result_t, P->as_filter, out, row, 1);
        return 0;
    }
    double v = ovv[res];
    if (out->valid) out->valid[row] = 1;
    if (P->as_filter || out->type == PRIM_U8) {
        if (!P->as_filter) return -1;
        ((uint8_t *)out->data)[row] = v != 0;
    } else if (out->type == PRIM_F64) {
        ((double *)out->data)[row] = v;
    } else if (out->type == PRIM_I64 && J->out_reals) {
        ((int64_t *)out->data)[row] = prim_real_to_int(v);
        J->out_reals->val[row] = v;
        J->out_reals->is[row] = 1;
        __atomic_store_n(&((MapJob *)J)->nreal, 1, __ATOMIC_RELAXED);
    } else {
        return -1;
    }
    return 0;
}

/* 1 if input column k's rows base..base+len-1 hold a REAL (in_reals). */
static int map_col_real(const MapJob *J, int64_t k, int64_t base, int64_t len) {
    const uint8_t *is = J->in_reals ? J->in_reals[k].is : NULL;
    if (!is) return 0;
    uint8_t any = 0;
    for (int64_t r = 0; r < len; r++)
        any |= is[base + r];
    return any != 0;
}

/* prim_parallel body: thread t evaluates its contiguous share of rows in
 * batches, using its slice of the job's scratch (the second half only for
 * map_recheck, after a batch saw an overflow). */
static void map_worker(void *arg, int t, int nt) {
    MapJob *J = arg;
    const PrimProgram *P = J->prog;
    int64_t lo = J->n * t / nt, hi = J->n * (t + 1) / nt;
    if (lo >= hi) return;
    MapRegs R, R2;
    char *s = J->scratch + 2 * J->per_thread * (size_t)t;
    int r2_ready = 0;
    map_regs_init(J, &R, s);
    for (int64_t base = lo; base < hi; base += MAP_BATCH) {
        int64_t len = hi - base < MAP_BATCH ? hi - base : MAP_BATCH;
        if (J->interrupt && ((base - lo) & (64 * MAP_BATCH - 1)) == 0 &&
            __atomic_load_n(J->interrupt, __ATOMIC_RELAXED))
            return;
        R.ovf = 0;
        for (int i = 0; i < P->ninstr; i++) {
            if (J->hoisted[i]) continue;
            const PrimInstr *in = &P->code[i];
            map_exec(&R, in, J->inputs, base, len);
            if (in->op == POP_COL && J->in_reals && map_col_real(J, in->ival, base, len)) R.ovf = 1;
        }
        if (R.ovf) {
            if (!r2_ready) map_regs_init(J, &R2, s + J->per_thread), r2_ready = 1;
            if (J->dyn) {
                /* the batch as usual, then its rows again with REALs */
                map_store(&R, P->result, P->result_t, P->as_filter, J->out, base, len);
                for (int64_t k = 0; k < len; k++)
                    if (map_dyn_row(J, &R2, base + k) != 0) {
                        __atomic_store_n(&J->failed, 1, __ATOMIC_RELAXED);
                        return;
                    }
                continue;
            }
            if (map_recheck(J, &R2, base, len)) {
                __atomic_store_n(&J->failed, 1, __ATOMIC_RELAXED);
                return;
            }
        }
        map_store(&R, P->result, P->result_t, P->as_filter, J->out, base, len);
    }
}

/* Returns which operands (bit 0: a, 1: b, 2: c) op reads. */
static int map_reads(int op) {
    switch (op) {
    case POP_COL:
    case POP_CONST:
    case POP_NULL:
        return 0;
    case POP_NEG:
    case POP_I2F:
    case POP_F2I:
    case POP_NOT:
    case POP_ISNULL:
    case POP_NOTNULL:
    case POP_TRUTH:
    case POP_LOOKUP:
    case POP_INLIST:
    case POP_LOOKUPV:
    case POP_RUNS:
    case POP_MATH:
        return 1;
    case POP_CASE:
        return 7;
    default:
        return 3;
    }
}

/* Returns the type mask that operand o (0: a, 1: b, 2: c) of in must have. */
static int map_operand_type(const PrimInstr *in, int o) {
    int t = in->t == PRIM_REG_F ? MAP_F : MAP_I;
    switch (in->op) {
    case POP_I2F:
    case POP_LOOKUP:
    case POP_LOOKUPV:
    case POP_RUNS:
        return MAP_I;
    case POP_F2I:
        return in->ival == 1 ? MAP_I : MAP_F;
    case POP_MATH:
    case POP_POW:
        return MAP_F;
    case POP_ISNULL:
    case POP_NOTNULL:
        return MAP_ANY;
    case POP_CASE:
        return o == 0 ? MAP_I : t;
    default:
        return t;
    }
}

/* Returns the type mask of the register that in writes. */
static int map_dst_type(const PrimInstr *in) {
    switch (in->op) {
    case POP_NULL:
        return MAP_ANY;
    case POP_I2F:
    case POP_MATH:
    case POP_POW:
        return MAP_F;
    case POP_COL:
    case POP_CONST:
    case POP_ADD:
    case POP_SUB:
    case POP_MUL:
    case POP_DIV:
    case POP_MOD:
    case POP_NEG:
    case POP_CASE:
    case POP_COALESCE:
    case POP_LOOKUP:
        return in->t == PRIM_REG_F ? MAP_F : MAP_I;
    default:
        return MAP_I;
    }
}

/* Checks prog, inputs and out against the contract and fills hoisted[i]
 * (ninstr bytes). Returns 0, or -1 with a message in ctx->err. */
static int map_validate(PrimCtx *ctx, const PrimProgram *P, const PrimVec *inputs, int64_t n,
                        const PrimVec *out, uint8_t *hoisted) {
    if (P->nregs < 1 || P->nregs > PRIM_MAX_REGS)
        return map_err(ctx, "nregs %d out of range", P->nregs);
    if (P->ninstr < 0 || (P->ninstr > 0 && !P->code)) return map_err(ctx, "bad instruction list");
    if (P->result < 0 || P->result >= P->nregs)
        return map_err(ctx, "result register %d out of range", P->result);
    if (P->result_t != PRIM_REG_I && P->result_t != PRIM_REG_F)
        return map_err(ctx, "bad result type");
    if (P->ninputs < 0 || (P->ninputs > 0 && !inputs)) return map_err(ctx, "missing inputs");
    for (int i = 0; i < P->ninputs; i++)
        if (prim_type_width(inputs[i].type) == 0 || (n > 0 && !inputs[i].data))
            return map_err(ctx, "bad input column %d", i);
    if (prim_type_width(out->type) == 0 || (n > 0 && !out->data))
        return map_err(ctx, "bad output vector");
    uint8_t written[PRIM_MAX_REGS] = {0}, nwrites[PRIM_MAX_REGS] = {0};
    uint8_t regtype[PRIM_MAX_REGS] = {0};
    for (int i = 0; i < P->ninstr; i++) {
        const PrimInstr *in = &P->code[i];
        if (in->op > POP_POW) return map_err(ctx, "instruction %d: bad opcode %d", i, in->op);
        if (in->t != PRIM_REG_I && in->t != PRIM_REG_F)
            return map_err(ctx, "instruction %d: bad type %d", i, in->t);
        int rd = map_reads(in->op);
        int16_t ops[3] = {in->a, in->b, in->c};
        for (int o = 0; o < 3; o++) {
            if (!(rd & (1 << o))) continue;
            if (ops[o] < 0 || ops[o] >= P->nregs)
                return map_err(ctx, "instruction %d: register %d out of range", i, ops[o]);
            if (!written[ops[o]])
                return map_err(ctx, "instruction %d: register %d read before written", i, ops[o]);
            int want = map_operand_type(in, o);
            if (want != MAP_ANY && !(regtype[ops[o]] & want))
                return map_err(ctx, "instruction %d: register %d has the wrong type", i, ops[o]);
        }
        if (in->dst < 0 || in->dst >= P->nregs)
            return map_err(ctx, "instruction %d: register %d out of range", i, in->dst);
        if (in->op == POP_COL && (in->ival < 0 || in->ival >= P->ninputs))
            return map_err(ctx, "instruction %d: input %lld out of range", i, (long long)in->ival);
        if ((in->op == POP_LOOKUP || in->op == POP_INLIST || in->op == POP_RUNS) &&
            (in->table_n < 0 || (in->table_n > 0 && !in->table)))
            return map_err(ctx, "instruction %d: bad lookup table", i);
        if (in->op == POP_LOOKUPV &&
            (in->ival < 0 || in->ival >= P->ninputs || inputs[in->ival].type != PRIM_U8))
            return map_err(ctx, "instruction %d: LOOKUPV needs a U8 table input", i);
        written[in->dst] = 1;
        regtype[in->dst] = (uint8_t)map_dst_type(in);
        if (nwrites[in->dst] < 2) nwrites[in->dst]++;
    }
    if (!written[P->result]) return map_err(ctx, "result register %d never written", P->result);
    if (!(regtype[P->result] & (P->result_t == PRIM_REG_F ? MAP_F : MAP_I)))
        return map_err(ctx, "result register %d has the wrong type", P->result);
    for (int i = 0; i < P->ninstr; i++) {
        const PrimInstr *in = &P->code[i];
        hoisted[i] = (in->op == POP_CONST || in->op == POP_NULL) && nwrites[in->dst] == 1;
    }
    return 0;
}

/* prim_cpu_map and prim_cpu_map_reals. Temporary storage (registers per
 * thread) comes from ctx->alloc and is freed before returning. Returns 0,
 * or -1 with a message in ctx->err (invalid program or vectors, out of
 * memory, "integer overflow" reaching the result without out_reals). */
static int map_run(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs,
                   const PrimReals *in_reals, int64_t n, PrimVec *out, PrimReals *out_reals) {
    if (!prog || !out || n < 0) return map_err(ctx, "bad arguments");
    uint8_t hoisted_small[256];
    uint8_t *hoisted = hoisted_small;
    size_t hbytes = prog->ninstr > 0 ? (size_t)prog->ninstr : 1;
    if (hbytes > sizeof hoisted_small) {
        hoisted = ctx->alloc(ctx->ud, hbytes);
        if (!hoisted) return map_err(ctx, "out of memory");
    }
    int rc = map_validate(ctx, prog, inputs, n, out, hoisted);
    if (rc == 0 && n > 0) {
        int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
        if (n < MAP_PAR_MIN_ROWS) nt = 1;
        if (nt > 1 && n / nt < MAP_BATCH) nt = (int)(n / MAP_BATCH) > 0 ? (int)(n / MAP_BATCH) : 1;
        MapJob J = {prog, inputs, out, n, hoisted, NULL, 0, ctx->interrupt, 0, NULL, NULL, 0, 0};
        J.in_reals = in_reals;
        int has_in = 0; /* an input holds REAL rows: straight to the second pass */
        for (int k = 0; in_reals && k < prog->ninputs; k++)
            has_in |= in_reals[k].is != NULL;
        if (has_in && !out_reals) rc = map_err(ctx, "REAL rows in an input, no place for them");
        J.failed = has_in;
        J.per_thread =
            ((size_t)prog->nregs * MAP_BATCH * (2 * sizeof(int64_t) + 1) + 63) & ~(size_t)63;
        J.scratch = ctx->alloc(ctx->ud, 2 * J.per_thread * (size_t)nt);
        if (rc != 0 || !J.scratch) {
            if (rc == 0) rc = map_err(ctx, "out of memory");
            if (J.scratch) ctx->free(ctx->ud, J.scratch);
        } else {
            if (!has_in && prim_parallel(nt, map_worker, &J) != 0)
                rc = map_err(ctx, "cannot start worker threads");
            else if (J.interrupt && __atomic_load_n(J.interrupt, __ATOMIC_RELAXED))
                rc = map_err(ctx, "Interrupted");
            else if (J.failed && out_reals) {
                /* again, with the REAL rows SQLite's arithmetic gives */
                out_reals->val = ctx->alloc(ctx->ud, sizeof(double) * (size_t)n);
                out_reals->is = ctx->alloc(ctx->ud, (size_t)n);
                if (!out_reals->val || !out_reals->is) {
                    rc = map_err(ctx, "out of memory");
                } else {
                    memset(out_reals->is, 0, (size_t)n);
                    J.failed = 0;
                    J.dyn = 1;
                    J.out_reals = out_reals;
                    if (prim_parallel(nt, map_worker, &J) != 0)
                        rc = map_err(ctx, "cannot start worker threads");
                    else if (J.interrupt && __atomic_load_n(J.interrupt, __ATOMIC_RELAXED))
                        rc = map_err(ctx, "Interrupted");
                    else if (J.failed)
                        rc = map_err(ctx, "integer overflow");
                }
                if (rc != 0 || !J.nreal) {
                    ctx->free(ctx->ud, out_reals->val);
                    ctx->free(ctx->ud, out_reals->is);
                    out_reals->val = NULL;
                    out_reals->is = NULL;
                }
            } else if (J.failed)
                rc = map_err(ctx, "integer overflow");
            ctx->free(ctx->ud, J.scratch);
        }
    }
    if (hoisted != hoisted_small) ctx->free(ctx->ud, hoisted);
    return rc;
}

/* See primitives.h. */
int prim_cpu_map(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs, int64_t n,
                 PrimVec *out) {
    return map_run(ctx, prog, inputs, NULL, n, out, NULL);
}

/* See primitives.h. */
int prim_cpu_map_reals(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs,
                       const PrimReals *in_reals, int64_t n, PrimVec *out, PrimReals *out_reals) {
    if (out_reals) out_reals->val = NULL, out_reals->is = NULL;
    return map_run(ctx, prog, inputs, in_reals, n, out, out_reals);
}
