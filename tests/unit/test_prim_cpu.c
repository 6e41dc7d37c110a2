/*
 * test_prim_cpu.c -- the CPU twins of primitives/primitives.h against
 * straightforward brute-force references (a row-at-a-time interpreter for
 * map, nested loops or qsort for sort and join, plain loops elsewhere), on
 * random inputs of sizes 0, 1, 2, 1023, 1024, 1025, 100000 and 3,000,000,
 * with NULLs, every PrimType, and 1 and 4 threads.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "primitives/primitives.h"
#include "denseagg_cases.h"
#include "test_scale.h"

/* ln 10 and ln 2 (math.h's M_LN10 / M_LN2, which C11 does not define):
 * SQLite's log10 / log2 divide the natural log by them */
#define GQP_LN10 2.30258509299404568402
#define GQP_LN2 0.69314718055994530942

/* ------------------------------------------------------------ harness -- */

static const int64_t SIZES[] = {0, 1, 2, 1023, 1024, 1025, 100000, 3000000};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))
#define NSMALL 7 /* SIZES without the 3M case */

static long g_live; /* allocations not yet freed through the context */

/* malloc-backed PrimCtx allocator; counts live blocks. Returns NULL on
 * failure. */
static void *t_alloc(void *ud, size_t bytes) {
    (void)ud;
    void *p = malloc(bytes ? bytes : 1);
    if (p) g_live++;
    return p;
}

/* Frees a block from t_alloc. */
static void t_free(void *ud, void *p) {
    (void)ud;
    if (p) {
        g_live--;
        free(p);
    }
}

/* Returns a context with nthreads workers and the malloc allocator. */
static PrimCtx mkctx(int nthreads) {
    PrimCtx c;
    memset(&c, 0, sizeof c);
    c.nthreads = nthreads;
    c.alloc = t_alloc;
    c.free = t_free;
    return c;
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

/* Returns the next splitmix64 pseudo-random value. */
static uint64_t rnd(void) {
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Returns a uniform integer in lo..hi. */
static int64_t rnd_in(int64_t lo, int64_t hi) {
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* Allocates (malloc, caller frees with free_vec) a vector of n values of
 * type t drawn from lo..hi (floats get a fractional part too), with about
 * null_pct percent NULLs (no validity array when null_pct < 0). */
static PrimVec rand_vec(PrimType t, int64_t n, int64_t lo, int64_t hi, int null_pct) {
    PrimVec v;
    v.type = t;
    v.n = n;
    v.data = malloc(prim_type_width(t) * (size_t)(n > 0 ? n : 1));
    v.valid = null_pct >= 0 ? malloc((size_t)(n > 0 ? n : 1)) : NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = rnd_in(lo, hi);
        double f = (double)x + (double)(rnd() % 4) * 0.25;
        switch (t) {
        case PRIM_U8:
            ((uint8_t *)v.data)[i] = (uint8_t)(x & 255);
            break;
        case PRIM_I32:
            ((int32_t *)v.data)[i] = (int32_t)x;
            break;
        case PRIM_I64:
            ((int64_t *)v.data)[i] = x;
            break;
        case PRIM_F32:
            ((float *)v.data)[i] = (float)f;
            break;
        case PRIM_F64:
            ((double *)v.data)[i] = f;
            break;
        }
        if (v.valid) v.valid[i] = (int)(rnd() % 100) >= null_pct;
    }
    return v;
}

/* Frees a vector from rand_vec / alloc_vec. */
static void free_vec(PrimVec *v) {
    free(v->data);
    free(v->valid);
    v->data = NULL;
    v->valid = NULL;
}

/* Allocates a zeroed vector of n values of type t, with validity if asked. */
static PrimVec alloc_vec(PrimType t, int64_t n, int with_valid) {
    PrimVec v;
    v.type = t;
    v.n = n;
    v.data = calloc((size_t)(n > 0 ? n : 1), prim_type_width(t));
    v.valid = with_valid ? calloc((size_t)(n > 0 ? n : 1), 1) : NULL;
    return v;
}

/* Returns row i of v as a double (any type). */
static double get_f(const PrimVec *v, int64_t i) {
    switch (v->type) {
    case PRIM_U8:
        return ((const uint8_t *)v->data)[i];
    case PRIM_I32:
        return ((const int32_t *)v->data)[i];
    case PRIM_I64:
        return (double)((const int64_t *)v->data)[i];
    case PRIM_F32:
        return ((const float *)v->data)[i];
    default:
        return ((const double *)v->data)[i];
    }
}

/* Returns row i of an integer-typed v as int64. */
static int64_t get_i(const PrimVec *v, int64_t i) {
    switch (v->type) {
    case PRIM_U8:
        return ((const uint8_t *)v->data)[i];
    case PRIM_I32:
        return ((const int32_t *)v->data)[i];
    default:
        return ((const int64_t *)v->data)[i];
    }
}

/* Returns 1 when row i of v is NULL. */
static int is_null(const PrimVec *v, int64_t i) {
    return v->valid && !v->valid[i];
}

static int is_float(PrimType t) {
    return t == PRIM_F32 || t == PRIM_F64;
}

/* ----------------------------------------------------------- common -- */

Test(common, type_width) {
    cr_expect_eq(prim_type_width(PRIM_U8), 1);
    cr_expect_eq(prim_type_width(PRIM_I32), 4);
    cr_expect_eq(prim_type_width(PRIM_I64), 8);
    cr_expect_eq(prim_type_width(PRIM_F32), 4);
    cr_expect_eq(prim_type_width(PRIM_F64), 8);
    cr_expect_eq(prim_type_width((PrimType)99), 0);
    cr_expect_geq(prim_ncores(), 1);
}

static int g_hits[16], g_nts[16];

/* prim_parallel body for the test: records that share t ran with nt. */
static void mark(void *arg, int t, int nt) {
    (void)arg;
    __atomic_add_fetch(&g_hits[t], 1, __ATOMIC_SEQ_CST);
    g_nts[t] = nt;
}

Test(common, parallel_runs_every_share_once) {
    for (int nt = 1; nt <= 16; nt *= 2) {
        memset(g_hits, 0, sizeof g_hits);
        cr_assert_eq(prim_parallel(nt, mark, NULL), 0);
        for (int t = 0; t < 16; t++) {
            cr_expect_eq(g_hits[t], t < nt ? 1 : 0, "nt %d share %d ran %d times", nt, t,
                         g_hits[t]);
            if (t < nt) cr_expect_eq(g_nts[t], nt);
        }
    }
}

/* A job of the stress test: every share adds its number + 1 to sum. */
typedef struct StressJob {
    int64_t sum;
} StressJob;

static void stress_share(void *arg, int t, int nt) {
    (void)nt;
    __atomic_add_fetch(&((StressJob *)arg)->sum, t + 1, __ATOMIC_SEQ_CST);
}

/* Thread body: `jobs` jobs of varying width; returns how many summed wrong. */
static void *stress_caller(void *p) {
    intptr_t bad = 0;
    int jobs = *(int *)p;
    for (int j = 0; j < jobs; j++) {
        int nt = 2 + (j * 7) % 15;
        StressJob sj = {0};
        if (prim_parallel(nt, stress_share, &sj) != 0) bad++;
        bad += sj.sum != (int64_t)nt * (nt + 1) / 2;
        if (j % 500 == 0) { /* past the spin: the workers go to sleep */
            struct timespec ts = {0, 300000};
            nanosleep(&ts, NULL);
        }
    }
    return (void *)bad;
}

Test(common, parallel_stress_back_to_back_sleeping_and_concurrent) {
    /* back-to-back jobs (spinning workers), jobs after a pause (sleeping
     * workers), and two callers at once (the second spawns threads) */
    int jobs = 20000;
    cr_assert_eq((intptr_t)stress_caller(&jobs), 0);
    pthread_t th;
    int jobs2 = 5000;
    cr_assert_eq(pthread_create(&th, NULL, stress_caller, &jobs2), 0);
    intptr_t bad_main = (intptr_t)stress_caller(&jobs2);
    void *bad_other;
    pthread_join(th, &bad_other);
    cr_assert_eq(bad_main, 0);
    cr_assert_eq((intptr_t)bad_other, 0);
}

Test(common, gpu_twins_without_device) {
    if (prim_gpu_available()) cr_skip_test("a GPU is available");
    /* without a device, a twin fails cleanly with a Device Error: "built
     * without CUDA" from the stubs, or the CUDA runtime's own reason */
    PrimCtx c = mkctx(1);
    PrimPairs pp;
    cr_expect_eq(prim_gpu_cross(&c, 2, 2, &pp), -1);
    cr_expect(strstr(c.err, "Device Error") != NULL, "err: %s", c.err);
    int64_t out[2], total;
    int64_t in[2] = {1, 2};
    PrimVec v = {PRIM_I64, 2, in, NULL};
    c.err[0] = 0;
    cr_expect_eq(prim_gpu_scan(&c, &v, 2, out, &total), -1);
    cr_expect(c.err[0] != 0);
}

/* -------------------------------------------------------------- map -- */

/* Reference register: one value per row. */
typedef struct RV {
    int null;
    int64_t i;
    double f;
} RV;

/* Reference float -> int64: truncation, saturating, NaN -> 0. */
static int64_t ref_f2i(double x) {
    if (isnan(x)) return 0;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    if (x >= 9223372036854775807.0) return INT64_MAX;
    return (int64_t)trunc(x);
}

/* Reference truth value of a register read as type t. */
static int ref_true(const RV *r, int t) {
    return t == PRIM_REG_F ? r->f != 0.0 : r->i != 0;
}

/* Evaluates prog for one row the slow way (SQLite semantics as documented
 * in primitives.h and map.c); regs has PRIM_MAX_REGS entries. Returns the
 * result register. */
static RV ref_row(const PrimProgram *p, const PrimVec *in, int64_t row, RV *regs) {
    for (int k = 0; k < p->ninstr; k++) {
        const PrimInstr *x = &p->code[k];
        RV a = regs[x->a < 0 ? 0 : x->a], b = regs[x->b < 0 ? 0 : x->b];
        RV c = regs[x->c < 0 ? 0 : x->c];
        RV r = {0, 0, 0.0};
        int F = x->t == PRIM_REG_F;
        switch ((PrimOp)x->op) {
        case POP_COL: {
            const PrimVec *col = &in[x->ival];
            r.null = is_null(col, row);
            if (F)
                r.f = is_float(col->type) ? get_f(col, row) : (double)get_i(col, row);
            else
                r.i = is_float(col->type) ? ref_f2i(get_f(col, row)) : get_i(col, row);
            break;
        }
        case POP_CONST:
            r.i = x->ival;
            r.f = x->fval;
            break;
        case POP_NULL:
            r.null = 1;
            break;
        case POP_ADD:
        case POP_SUB:
        case POP_MUL:
            r.null = a.null || b.null;
            if (F)
                r.f = x->op == POP_ADD ? a.f + b.f : x->op == POP_SUB ? a.f - b.f : a.f * b.f;
            else {
                uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
                r.i = (int64_t)(x->op == POP_ADD ? ua + ub : x->op == POP_SUB ? ua - ub : ua * ub);
            }
            break;
        case POP_DIV:
            if (F) {
                r.null = a.null || b.null || b.f == 0.0;
                if (!r.null) r.f = a.f / b.f;
            } else {
                r.null = a.null || b.null || b.i == 0;
                if (!r.null) r.i = b.i == -1 ? (int64_t)(0 - (uint64_t)a.i) : a.i / b.i;
            }
            break;
        case POP_MOD:
            if (F) {
                int64_t ia = ref_f2i(a.f), ib = ref_f2i(b.f);
                r.null = a.null || b.null || ib == 0;
                if (!r.null) r.f = ib == -1 ? 0.0 : (double)(ia % ib);
            } else {
                r.null = a.null || b.null || b.i == 0;
                if (!r.null) r.i = b.i == -1 ? 0 : a.i % b.i;
            }
            break;
        case POP_NEG:
            r.null = a.null;
            r.i = (int64_t)(0 - (uint64_t)a.i);
            r.f = -a.f;
            break;
        case POP_I2F:
            r.null = a.null;
            r.f = (double)a.i;
            break;
        case POP_F2I:
            r.null = a.null;
            r.i = ref_f2i(a.f);
            break;
        case POP_EQ:
        case POP_NE:
        case POP_LT:
        case POP_LE:
        case POP_GT:
        case POP_GE: {
            r.null = a.null || b.null;
            int cmp = F ? (a.f < b.f    ? -1
                           : a.f > b.f  ? 1
                           : a.f == b.f ? 0
                                        : 2)
                        : (a.i < b.i   ? -1
                           : a.i > b.i ? 1
                                       : 0);
            switch (x->op) {
            case POP_EQ:
                r.i = cmp == 0;
                break;
            case POP_NE:
                r.i = cmp != 0;
                break;
            case POP_LT:
                r.i = cmp == -1;
                break;
            case POP_LE:
                r.i = cmp == -1 || cmp == 0;
                break;
            case POP_GT:
                r.i = cmp == 1;
                break;
            default:
                r.i = cmp == 1 || cmp == 0;
                break;
            }
            break;
        }
        case POP_AND:
        case POP_OR: {
            int af = !a.null && !ref_true(&a, x->t), bf = !b.null && !ref_true(&b, x->t);
            int at = !a.null && ref_true(&a, x->t), bt = !b.null && ref_true(&b, x->t);
            if (x->op == POP_AND) {
                if (af || bf)
                    r.i = 0;
                else if (a.null || b.null)
                    r.null = 1;
                else
                    r.i = 1;
            } else {
                if (at || bt)
                    r.i = 1;
                else if (a.null || b.null)
                    r.null = 1;
                else
                    r.i = 0;
            }
            break;
        }
        case POP_NOT:
            r.null = a.null;
            r.i = !ref_true(&a, x->t);
            break;
        case POP_TRUTH:
            r.null = a.null;
            r.i = ref_true(&a, x->t);
            break;
        case POP_ISNULL:
            r.i = a.null;
            break;
        case POP_NOTNULL:
            r.i = !a.null;
            break;
        case POP_CASE:
            r = (!a.null && a.i != 0) ? b : c;
            break;
        case POP_LOOKUP:
            if (a.null || a.i < 0 || a.i >= x->table_n || x->table[a.i] == INT64_MIN)
                r.null = 1;
            else if (x->t == PRIM_REG_F)
                memcpy(&r.f, &x->table[a.i], sizeof r.f); /* the bits of a double */
            else
                r.i = x->table[a.i];
            break;
        case POP_LOOKUPV: {
            const PrimVec *tv = &in[x->ival];
            if (a.null || a.i < 0 || a.i >= tv->n)
                r.null = 1;
            else
                r.i = ((const uint8_t *)tv->data)[a.i];
            break;
        }
        case POP_COALESCE:
            r = a.null ? b : a;
            break;
        case POP_MATH: {
            /* SQLite's domains: NULL for sqrt of x < 0, a log of x <= 0, NaN */
            double v = a.f;
            int bad = a.null || isnan(v);
            switch ((int)x->ival) {
            case PMATH_SQRT:
                bad |= v < 0, r.f = sqrt(v);
                break;
            case PMATH_EXP:
                r.f = exp(v);
                break;
            case PMATH_LN:
                bad |= v <= 0, r.f = log(v);
                break;
            case PMATH_LOG10:
                bad |= v <= 0, r.f = log(v) / GQP_LN10;
                break;
            default:
                bad |= v <= 0, r.f = log(v) / GQP_LN2;
                break;
            }
            r.null = bad;
            if (bad) r.f = 0;
            break;
        }
        case POP_POW:
            r.f = x->ival ? fmod(a.f, b.f) : pow(a.f, b.f);
            r.null = a.null || b.null || isnan(r.f);
            if (r.null) r.f = 0;
            break;
        case POP_RUNS: {
            /* a linear scan for the last start <= a */
            int64_t k = -1;
            for (int64_t j = 0; j < x->table_n && !a.null; j++)
                if (x->table[j] <= a.i) k = j;
            r.null = k < 0;
            r.i = k < 0 ? 0 : k;
            break;
        }
        case POP_INLIST: {
            /* a linear scan of the set, the slots read as doubles for F */
            int found = 0;
            for (int64_t j = 0; j < x->table_n && !a.null; j++) {
                double fv;
                memcpy(&fv, &x->table[j], sizeof fv);
                found |= F ? fv == a.f : x->table[j] == a.i;
            }
            r.null = a.null || (!found && x->ival != 0);
            r.i = r.null ? 0 : found;
            break;
        }
        }
        regs[x->dst] = r;
    }
    return regs[p->result];
}

/* Runs prog through prim_cpu_map with nthreads into out and checks every
 * row against ref_row. Returns the number of mismatching rows (the first
 * is reported). */
static int64_t check_map(const PrimProgram *p, const PrimVec *in, int64_t n, PrimVec *out,
                         int nthreads) {
    PrimCtx c = mkctx(nthreads);
    long live = g_live;
    int rc = prim_cpu_map(&c, p, in, n, out);
    cr_assert_eq(rc, 0, "map failed: %s", c.err);
    cr_assert_eq(g_live, live, "map leaked temporary storage");
    RV regs[PRIM_MAX_REGS];
    memset(regs, 0, sizeof regs);
    int64_t bad = 0;
    for (int64_t row = 0; row < n; row++) {
        RV r = ref_row(p, in, row, regs);
        int F = p->result_t == PRIM_REG_F;
        int ok = 1;
        int filt = p->as_filter || out->type == PRIM_U8;
        if (out->valid) ok &= out->valid[row] == (filt && p->as_filter ? 1 : !r.null);
        if (filt) {
            int want = !r.null && (F ? r.f != 0.0 : r.i != 0);
            ok &= ((uint8_t *)out->data)[row] == want;
        } else {
            switch (out->type) {
            case PRIM_I32: {
                int32_t want = r.null ? 0
                               : F    ? (int32_t)(isnan(r.f)             ? 0
                                                  : r.f >= 2147483647.0  ? INT32_MAX
                                                  : r.f <= -2147483648.0 ? INT32_MIN
                                                                         : (int32_t)r.f)
                                      : (int32_t)(uint32_t)(uint64_t)r.i;
                ok &= ((int32_t *)out->data)[row] == want;
                break;
            }
            case PRIM_I64:
                ok &= ((int64_t *)out->data)[row] == (r.null ? 0 : F ? ref_f2i(r.f) : r.i);
                break;
            case PRIM_F32: {
                float want = r.null ? 0.0f : F ? (float)r.f : (float)r.i;
                float got = ((float *)out->data)[row];
                ok &= got == want || (isnan(got) && isnan(want));
                break;
            }
            default: {
                double want = r.null ? 0.0 : F ? r.f : (double)r.i;
                double got = ((double *)out->data)[row];
                ok &= got == want || (isnan(got) && isnan(want));
                break;
            }
            }
        }
        if (!ok && bad++ == 0)
            cr_log_error("map row %lld of %lld: null %d i %lld f %g", (long long)row, (long long)n,
                         r.null, (long long)r.i, r.f);
    }
    return bad;
}

/* Builds an instruction. */
static PrimInstr I(int op, int t, int dst, int a, int b, int c, int64_t ival, double fval) {
    PrimInstr x;
    memset(&x, 0, sizeof x);
    x.op = (uint8_t)op;
    x.t = (uint8_t)t;
    x.dst = (int16_t)dst;
    x.a = (int16_t)a;
    x.b = (int16_t)b;
    x.c = (int16_t)c;
    x.ival = ival;
    x.fval = fval;
    return x;
}

/* a > 60 AND b < 0 over two I32 columns, as a filter. */
static const PrimInstr FILTER_CODE[] = {
    {POP_COL, PRIM_REG_I, 0, 0, 0, 0, 0, 0, NULL, 0},
    {POP_CONST, PRIM_REG_I, 1, 0, 0, 0, 60, 0, NULL, 0},
    {POP_GT, PRIM_REG_I, 2, 0, 1, 0, 0, 0, NULL, 0},
    {POP_COL, PRIM_REG_I, 3, 0, 0, 0, 1, 0, NULL, 0},
    {POP_CONST, PRIM_REG_I, 4, 0, 0, 0, 0, 0, NULL, 0},
    {POP_LT, PRIM_REG_I, 5, 3, 4, 0, 0, 0, NULL, 0},
    {POP_AND, PRIM_REG_I, 6, 2, 5, 0, 0, 0, NULL, 0},
};

Test(map, filter_all_sizes_threads, .timeout = 120) {
    PrimProgram p = {7, FILTER_CODE, 7, 6, PRIM_REG_I, 2, 1, 0};
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = test_scaled(SIZES[s]);
        PrimVec in[2] = {rand_vec(PRIM_I32, n, -100, 100, 10),
                         rand_vec(PRIM_I32, n, -100, 100, -1)};
        PrimVec o1 = alloc_vec(PRIM_U8, n, 0), o4 = alloc_vec(PRIM_U8, n, 1);
        cr_expect_eq(check_map(&p, in, n, &o1, 1), 0, "n=%lld 1 thread", (long long)n);
        cr_expect_eq(check_map(&p, in, n, &o4, 4), 0, "n=%lld 4 threads", (long long)n);
        cr_expect(n == 0 || memcmp(o1.data, o4.data, (size_t)n) == 0);
        int64_t hits = 0;
        for (int64_t i = 0; i < n; i++)
            hits += ((uint8_t *)o1.data)[i];
        if (n >= 100000)
            cr_expect(hits > n / 20 && hits < n / 2, "selectivity %lld of %lld", (long long)hits,
                      (long long)n);
        free_vec(&in[0]);
        free_vec(&in[1]);
        free_vec(&o1);
        free_vec(&o4);
    }
}

/* Three-valued logic: a, b in {0, 1, NULL}. */
Test(map, three_valued_truth_tables) {
    /* rows: all 9 (a, b) combinations; 2 = NULL */
    int av[9] = {0, 0, 0, 1, 1, 1, 2, 2, 2}, bv[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    /* SQL: AND false dominates, OR true dominates, otherwise NULL wins */
    int want_and[9] = {0, 0, 0, 0, 1, 2, 0, 2, 2};
    int want_or[9] = {0, 1, 2, 1, 1, 1, 2, 1, 2};
    int want_not_a[9] = {1, 1, 1, 0, 0, 0, 2, 2, 2};
    int64_t a[9], b[9];
    uint8_t va[9], vb[9];
    for (int i = 0; i < 9; i++) {
        a[i] = av[i] == 2 ? 77 : av[i]; /* garbage under NULL must not matter */
        va[i] = av[i] != 2;
        b[i] = bv[i] == 2 ? 0 : bv[i];
        vb[i] = bv[i] != 2;
    }
    PrimVec in[2] = {{PRIM_I64, 9, a, va}, {PRIM_I64, 9, b, vb}};
    const int ops[3] = {POP_AND, POP_OR, POP_NOT};
    const int *wants[3] = {want_and, want_or, want_not_a};
    for (int k = 0; k < 3; k++) {
        for (int t = 0; t < 2; t++) {
            PrimInstr code[5] = {I(POP_COL, t, 0, 0, 0, 0, 0, 0), I(POP_COL, t, 1, 0, 0, 0, 1, 0),
                                 I(ops[k], t, 2, 0, 1, 0, 0, 0)};
            PrimProgram p = {3, code, 3, 2, PRIM_REG_I, 2, 0, 0};
            int64_t out[9];
            uint8_t ov[9];
            PrimVec o = {PRIM_I64, 9, out, ov};
            PrimCtx c = mkctx(1);
            cr_assert_eq(prim_cpu_map(&c, &p, in, 9, &o), 0, "%s", c.err);
            for (int i = 0; i < 9; i++) {
                int got = ov[i] ? (int)out[i] : 2;
                cr_expect_eq(got, wants[k][i], "op %d t %d a=%d b=%d: got %d want %d", ops[k], t,
                             av[i], bv[i], got, wants[k][i]);
            }
        }
    }
}

Test(map, div_mod_by_zero_and_edges) {
    int64_t a[6] = {7, -7, 7, INT64_MIN, INT64_MIN, 5};
    int64_t b[6] = {2, 2, 0, -1, 0, -1};
    /* expected (NULL = 99): trunc toward zero; x/0 NULL; INT64_MIN/-1 is an
     * integer overflow (below), INT64_MIN % -1 is 0 */
    int64_t want_div[6] = {3, -3, 99, INT64_MAX, 99, -5};
    int64_t want_mod[6] = {1, -1, 99, 0, 99, 0};
    PrimVec in[2] = {{PRIM_I64, 6, a, NULL}, {PRIM_I64, 6, b, NULL}};
    for (int k = 0; k < 2; k++) {
        PrimInstr code[3] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0), I(POP_COL, 0, 1, 0, 0, 0, 1, 0),
                             I(k ? POP_MOD : POP_DIV, 0, 2, 0, 1, 0, 0, 0)};
        PrimProgram p = {3, code, 3, 2, PRIM_REG_I, 2, 0, 0};
        int64_t out[6];
        uint8_t ov[6];
        PrimVec o = {PRIM_I64, 6, out, ov};
        PrimCtx c = mkctx(1);
        a[3] = INT64_MIN;
        if (!k) {
            cr_expect_eq(prim_cpu_map(&c, &p, in, 6, &o), -1, "INT64_MIN / -1 must fail");
            cr_expect(strstr(c.err, "integer overflow") != NULL, "%s", c.err);
            a[3] = INT64_MIN + 1; /* / -1 = INT64_MAX */
        }
        cr_assert_eq(prim_cpu_map(&c, &p, in, 6, &o), 0, "%s", c.err);
        for (int i = 0; i < 6; i++) {
            int64_t got = ov[i] ? out[i] : 99;
            int64_t want = k ? want_mod[i] : want_div[i];
            cr_expect_eq(got, want, "%s row %d: %lld", k ? "mod" : "div", i, (long long)got);
        }
    }
    /* floats: 7.5 / 0.0 NULL; 7.5 % 2.9 = 7 % 2 = 1; 5.5 % 0.5 NULL (0.5 truncates to 0) */
    double fa[3] = {7.5, 7.5, 5.5}, fb[3] = {0.0, 2.9, 0.5};
    PrimVec fin[2] = {{PRIM_F64, 3, fa, NULL}, {PRIM_F64, 3, fb, NULL}};
    PrimInstr code[4] = {I(POP_COL, 1, 0, 0, 0, 0, 0, 0), I(POP_COL, 1, 1, 0, 0, 0, 1, 0),
                         I(POP_DIV, 1, 2, 0, 1, 0, 0, 0), I(POP_MOD, 1, 3, 0, 1, 0, 0, 0)};
    double out[3];
    uint8_t ov[3];
    PrimVec o = {PRIM_F64, 3, out, ov};
    PrimCtx c = mkctx(1);
    PrimProgram pd = {3, code, 4, 2, PRIM_REG_F, 2, 0, 0};
    cr_assert_eq(prim_cpu_map(&c, &pd, fin, 3, &o), 0, "%s", c.err);
    cr_expect_eq(ov[0], 0);
    cr_expect(ov[1] && fabs(out[1] - 7.5 / 2.9) < 1e-15);
    PrimProgram pm = {4, code, 4, 3, PRIM_REG_F, 2, 0, 0};
    cr_assert_eq(prim_cpu_map(&c, &pm, fin, 3, &o), 0, "%s", c.err);
    cr_expect(ov[1] && out[1] == 1.0, "7.5 %% 2.9 = %g", out[1]);
    cr_expect_eq(ov[2], 0, "5.5 %% 0.5 must be NULL");
}

/* Integer overflow is an error only where it reaches the result: CASE
 * branches not taken, COALESCE's b after a non-NULL a, AND with a false
 * operand and NULL rows raise nothing (issue 13 item 7). n rows of x with
 * x = INT64_MAX on every 1000th row and NULL on every 7th, 1 and 4
 * threads. */
Test(map, overflow_only_where_it_matters) {
    const int64_t n = 300000;
    int64_t *x = malloc(sizeof(int64_t) * (size_t)n);
    uint8_t *vx = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) {
        x[i] = i % 1000 == 999 ? INT64_MAX : i % 1000;
        vx[i] = i % 7 != 3;
    }
    PrimVec in[1] = {{PRIM_I64, n, x, vx}};
    int64_t *out = malloc(sizeof(int64_t) * (size_t)n);
    uint8_t *ov = malloc((size_t)n);
    PrimVec o = {PRIM_I64, n, out, ov};
    /* r0 = x, r1 = 1, r2 = x + 1 (overflows on the big rows), r3 = 500,
     * r4 = x < 500 / x > 500, r5 = the program's use of r2 */
    struct {
        PrimInstr last[2];
        int fails;
        const char *what;
    } cases[] = {
        {{I(POP_LT, 0, 4, 0, 3, 0, 0, 0), I(POP_CASE, 0, 5, 4, 2, 1, 0, 0)}, 0, "CASE not taken"},
        {{I(POP_GT, 0, 4, 0, 3, 0, 0, 0), I(POP_CASE, 0, 5, 4, 2, 1, 0, 0)}, 1, "CASE taken"},
        {{I(POP_GT, 0, 4, 0, 3, 0, 0, 0), I(POP_COALESCE, 0, 5, 0, 2, 0, 0, 0)},
         0,
         "COALESCE(x, x + 1)"},
        {{I(POP_GT, 0, 4, 0, 3, 0, 0, 0), I(POP_COALESCE, 0, 5, 2, 0, 0, 0, 0)},
         1,
         "COALESCE(x + 1, x)"},
        {{I(POP_LT, 0, 4, 0, 3, 0, 0, 0), I(POP_AND, 0, 5, 4, 2, 0, 0, 0)}, 0, "x < 500 AND x + 1"},
        {{I(POP_GT, 0, 4, 0, 3, 0, 0, 0), I(POP_OR, 0, 5, 4, 2, 0, 0, 0)}, 0, "x > 500 OR x + 1"},
        {{I(POP_LT, 0, 4, 0, 3, 0, 0, 0), I(POP_OR, 0, 5, 4, 2, 0, 0, 0)}, 1, "x < 500 OR x + 1"},
        {{I(POP_LT, 0, 4, 0, 3, 0, 0, 0), I(POP_ISNULL, 0, 5, 2, 0, 0, 0, 0)}, 1, "x + 1 IS NULL"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int nt = 1; nt <= 4; nt += 3) {
            PrimInstr code[6] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0),
                                 I(POP_CONST, 0, 1, 0, 0, 0, 1, 0),
                                 I(POP_ADD, 0, 2, 0, 1, 0, 0, 0),
                                 I(POP_CONST, 0, 3, 0, 0, 0, 500, 0),
                                 cases[k].last[0],
                                 cases[k].last[1]};
            PrimProgram p = {6, code, 6, 5, PRIM_REG_I, 1, 0, 0};
            PrimCtx c = mkctx(nt);
            int rc = prim_cpu_map(&c, &p, in, n, &o);
            if (cases[k].fails) {
                cr_expect_eq(rc, -1, "%s (nt %d) must fail", cases[k].what, nt);
                cr_expect(strstr(c.err, "integer overflow") != NULL, "%s: %s", cases[k].what,
                          c.err);
            } else {
                cr_expect_eq(rc, 0, "%s (nt %d): %s", cases[k].what, nt, c.err);
            }
        }
    /* only NULL rows overflow: no error */
    for (int64_t i = 0; i < n; i++)
        vx[i] = x[i] != INT64_MAX;
    PrimInstr code[3] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0), I(POP_CONST, 0, 1, 0, 0, 0, 1, 0),
                         I(POP_ADD, 0, 2, 0, 1, 0, 0, 0)};
    PrimProgram p = {3, code, 3, 2, PRIM_REG_I, 1, 0, 0};
    PrimCtx c = mkctx(4);
    cr_expect_eq(prim_cpu_map(&c, &p, in, n, &o), 0, "%s", c.err);
    cr_expect(ov[999] == 0 && ov[1000] == 1 && out[1000] == 1);
    free(x);
    free(vx);
    free(out);
    free(ov);
}

Test(map, case_lookup_coalesce_compare_i_vs_f) {
    /* CASE WHEN a > 2 THEN lookup[a] ELSE COALESCE(b, -1) END, and a < f */
    int32_t a[6] = {0, 1, 3, 4, 5, 9};
    uint8_t va[6] = {1, 1, 1, 1, 0, 1};
    int64_t b[6] = {10, 11, 12, 13, 14, 15};
    uint8_t vb[6] = {1, 0, 1, 1, 1, 1};
    float f[6] = {0.5f, 0.5f, 3.0f, 4.5f, 1.0f, 8.75f};
    static const int64_t table[5] = {100, 101, 102, INT64_MIN, 104};
    PrimVec in[3] = {{PRIM_I32, 6, a, va}, {PRIM_I64, 6, b, vb}, {PRIM_F32, 6, f, NULL}};
    PrimInstr code[12] = {
        I(POP_COL, 0, 0, 0, 0, 0, 0, 0),      I(POP_CONST, 0, 1, 0, 0, 0, 2, 0),
        I(POP_GT, 0, 2, 0, 1, 0, 0, 0),       I(POP_LOOKUP, 0, 3, 0, 0, 0, 0, 0),
        I(POP_COL, 0, 4, 0, 0, 0, 1, 0),      I(POP_CONST, 0, 5, 0, 0, 0, -1, 0),
        I(POP_COALESCE, 0, 6, 4, 5, 0, 0, 0), I(POP_CASE, 0, 7, 2, 3, 6, 0, 0),
        I(POP_I2F, 0, 8, 0, 0, 0, 0, 0),      I(POP_COL, 1, 9, 0, 0, 0, 2, 0),
        I(POP_LT, 1, 10, 8, 9, 0, 0, 0),      I(POP_ISNULL, 0, 11, 3, 0, 0, 0, 0)};
    code[3].table = table;
    code[3].table_n = 5;
    /* a > 2 is NULL for row 4 -> ELSE branch */
    int64_t want_case[6] = {10, -1, 99, 104, 14, 99}; /* 99 = NULL */
    int64_t want_lt[6] = {1, 0, 0, 1, 99, 0};
    int64_t want_isnull[6] = {0, 0, 1, 0, 1, 1};
    struct {
        int reg;
        const int64_t *want;
    } cases[3] = {{7, want_case}, {10, want_lt}, {11, want_isnull}};
    for (int k = 0; k < 3; k++) {
        PrimProgram p = {12, code, 12, cases[k].reg, PRIM_REG_I, 3, 0, 0};
        int64_t out[6];
        uint8_t ov[6];
        PrimVec o = {PRIM_I64, 6, out, ov};
        PrimCtx c = mkctx(1);
        cr_assert_eq(prim_cpu_map(&c, &p, in, 6, &o), 0, "%s", c.err);
        for (int i = 0; i < 6; i++) {
            int64_t got = ov[i] ? out[i] : 99;
            cr_expect_eq(got, cases[k].want[i], "reg %d row %d: got %lld want %lld", cases[k].reg,
                         i, (long long)got, (long long)cases[k].want[i]);
        }
        cr_expect_eq(check_map(&p, in, 6, &o, 1), 0);
    }
}

Test(map, float_lookup) {
    /* CAST(text AS REAL) per dictionary entry: a LOOKUP with t = F reads the
     * table's entries as doubles' bits; INT64_MIN and NULL codes are NULL */
    int32_t a[6] = {0, 1, 2, 3, 4, 7};
    uint8_t va[6] = {1, 1, 1, 0, 1, 1};
    double vals[4] = {1.5, -2.25, 0.0, 1e300};
    int64_t table[5];
    memcpy(table, vals, sizeof vals);
    table[4] = INT64_MIN;
    PrimVec in[1] = {{PRIM_I32, 6, a, va}};
    PrimInstr code[2] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0), I(POP_LOOKUP, 1, 1, 0, 0, 0, 0, 0)};
    code[1].table = table;
    code[1].table_n = 5;
    PrimProgram p = {2, code, 2, 1, PRIM_REG_F, 1, 0, 0};
    double out[6];
    uint8_t ov[6];
    PrimVec o = {PRIM_F64, 6, out, ov};
    PrimCtx c = mkctx(1);
    cr_assert_eq(prim_cpu_map(&c, &p, in, 6, &o), 0, "%s", c.err);
    const double want[6] = {1.5, -2.25, 0.0, 0, 0, 0};
    const uint8_t want_valid[6] = {1, 1, 1, 0, 0, 0};
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(ov[i], want_valid[i], "row %d validity", i);
        if (ov[i]) cr_expect_eq(out[i], want[i], "row %d: %g", i, out[i]);
    }
    cr_expect_eq(check_map(&p, in, 6, &o, 1), 0);
    /* an F lookup is F: an I result register from it is a type error */
    PrimProgram bad = {2, code, 2, 1, PRIM_REG_I, 1, 0, 0};
    cr_expect_eq(prim_cpu_map(&c, &bad, in, 6, &o), -1);
}

Test(map, lookupv_table_from_an_input, .timeout = 60) {
    /* POP_LOOKUPV reads its table from a U8 input of its own length (a
     * LIKE per dictionary entry made at run time): NULL for a NULL code or
     * one outside the table; used as a filter and as a value */
    int32_t a[7] = {0, 1, 2, 3, 4, -1, 2};
    uint8_t va[7] = {1, 1, 1, 1, 1, 1, 0};
    uint8_t tab[4] = {1, 0, 1, 0};
    PrimVec in[2] = {{PRIM_I32, 7, a, va}, {PRIM_U8, 4, tab, NULL}};
    PrimInstr code[2] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0), I(POP_LOOKUPV, 0, 1, 0, 0, 0, 1, 0)};
    PrimProgram p = {2, code, 2, 1, PRIM_REG_I, 2, 0, 0};
    int64_t out[7];
    uint8_t ov[7];
    PrimVec o = {PRIM_I64, 7, out, ov};
    PrimCtx c = mkctx(1);
    cr_assert_eq(prim_cpu_map(&c, &p, in, 7, &o), 0, "%s", c.err);
    const int64_t want[7] = {1, 0, 1, 0, 0, 0, 0};
    const uint8_t want_valid[7] = {1, 1, 1, 1, 0, 0, 0};
    for (int i = 0; i < 7; i++) {
        cr_expect_eq(ov[i], want_valid[i], "row %d validity", i);
        if (ov[i]) cr_expect_eq(out[i], want[i], "row %d: %lld", i, (long long)out[i]);
    }
    cr_expect_eq(check_map(&p, in, 7, &o, 1), 0);
    PrimProgram f = p;
    f.as_filter = 1;
    uint8_t flags[7];
    PrimVec fo = {PRIM_U8, 7, flags, NULL};
    cr_assert_eq(prim_cpu_map(&c, &f, in, 7, &fo), 0, "%s", c.err);
    for (int i = 0; i < 7; i++)
        cr_expect_eq(flags[i], want_valid[i] && want[i], "row %d flag", i);
    /* the table input must be U8 */
    in[1].type = PRIM_I32;
    cr_expect_eq(prim_cpu_map(&c, &p, in, 4, &o), -1);
}

Test(map, runs_of_codes, .timeout = 60) {
    /* POP_RUNS: the index of the last run start <= a; NULL for a NULL a,
     * a below the first start, or no starts */
    int32_t a[8] = {0, 1, 2, 5, 6, 99, -1, 3};
    uint8_t va[8] = {1, 1, 1, 1, 1, 1, 1, 0};
    static const int64_t starts[3] = {0, 2, 6};
    PrimVec in[1] = {{PRIM_I32, 8, a, va}};
    PrimInstr code[3] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0), I(POP_RUNS, 0, 1, 0, 0, 0, 0, 0),
                         I(POP_RUNS, 0, 2, 0, 0, 0, 0, 0)};
    code[1].table = starts;
    code[1].table_n = 3;
    int64_t want[8] = {0, 0, 1, 1, 2, 2, 99, 99}; /* 99 = NULL */
    PrimProgram p = {3, code, 3, 1, PRIM_REG_I, 1, 0, 0};
    int64_t out[8];
    uint8_t ov[8];
    PrimVec o = {PRIM_I64, 8, out, ov};
    PrimCtx c = mkctx(1);
    cr_assert_eq(prim_cpu_map(&c, &p, in, 8, &o), 0, "%s", c.err);
    for (int i = 0; i < 8; i++) {
        int64_t got = ov[i] ? out[i] : 99;
        cr_expect_eq(got, want[i], "row %d: got %lld want %lld", i, (long long)got,
                     (long long)want[i]);
    }
    p.result = 2; /* no starts: NULL everywhere */
    cr_assert_eq(prim_cpu_map(&c, &p, in, 8, &o), 0, "%s", c.err);
    for (int i = 0; i < 8; i++)
        cr_expect_eq(ov[i], 0, "row %d: no starts gives NULL", i);
    /* a missing table is refused */
    code[1].table = NULL;
    p.result = 1;
    cr_expect_eq(prim_cpu_map(&c, &p, in, 8, &o), -1);
    /* many rows over several threads against the reference */
    int64_t n = 200000, ns = 1000;
    int64_t *big = malloc(sizeof(int64_t) * (size_t)n), *bo = malloc(sizeof(int64_t) * (size_t)n);
    int64_t *bs = malloc(sizeof(int64_t) * (size_t)ns);
    uint8_t *bv = malloc((size_t)n), *bov = malloc((size_t)n);
    cr_assert(big && bo && bs && bv && bov);
    for (int64_t i = 0; i < ns; i++)
        bs[i] = 7 * i + (i % 3) - 20;
    for (int64_t i = 0; i < n; i++) {
        big[i] = (int64_t)((uint64_t)i * 2654435761u % 8000) - 100;
        bv[i] = i % 13 != 0;
    }
    PrimVec bin[1] = {{PRIM_I64, n, big, bv}};
    PrimInstr bc[2] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0), I(POP_RUNS, 0, 1, 0, 0, 0, 0, 0)};
    bc[1].table = bs;
    bc[1].table_n = ns;
    PrimProgram pb = {2, bc, 2, 1, PRIM_REG_I, 1, 0, 0};
    PrimVec bout = {PRIM_I64, n, bo, bov};
    cr_expect_eq(check_map(&pb, bin, n, &bout, 4), 0);
    free(big);
    free(bo);
    free(bs);
    free(bv);
    free(bov);
}

Test(map, inlist_int_float_null_rules, .timeout = 60) {
    /* x IN set: NULL x -> NULL; member -> 1; else NULL when the list held a
     * NULL (ival 1), else 0; NOT IN through POP_NOT keeps NULL */
    int32_t a[7] = {3, 4, -7, 0, 5, 1000000, 9};
    uint8_t va[7] = {1, 1, 1, 1, 0, 1, 1};
    double f[7] = {0.5, 2.0, -1.25, 3.0, 7.0, 1e300, -0.0};
    static const int64_t iset[5] = {-7, 0, 3, 9, 1000000};
    static double fset[4] = {-1.25, 0.0, 0.5, 1e300};
    PrimVec in[2] = {{PRIM_I32, 7, a, va}, {PRIM_F64, 7, f, NULL}};
    PrimInstr code[6] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0),    I(POP_INLIST, 0, 1, 0, 0, 0, 0, 0),
                         I(POP_INLIST, 0, 2, 0, 0, 0, 1, 0), I(POP_NOT, 0, 3, 2, 0, 0, 0, 0),
                         I(POP_COL, 1, 4, 0, 0, 0, 1, 0),    I(POP_INLIST, 1, 5, 4, 0, 0, 1, 0)};
    code[1].table = code[2].table = iset;
    code[1].table_n = code[2].table_n = 5;
    code[5].table = (const int64_t *)(const void *)fset;
    code[5].table_n = 4;
    int64_t want_in[7] = {1, 0, 1, 1, 99, 1, 1}; /* 99 = NULL */
    int64_t want_in_null[7] = {1, 99, 1, 1, 99, 1, 1};
    int64_t want_not_in_null[7] = {0, 99, 0, 0, 99, 0, 0};
    int64_t want_f[7] = {1, 99, 1, 99, 99, 1, 1}; /* -0.0 == 0.0 */
    struct {
        int reg;
        const int64_t *want;
    } cases[4] = {{1, want_in}, {2, want_in_null}, {3, want_not_in_null}, {5, want_f}};
    for (int k = 0; k < 4; k++) {
        PrimProgram p = {6, code, 6, cases[k].reg, PRIM_REG_I, 2, 0, 0};
        int64_t out[7];
        uint8_t ov[7];
        PrimVec o = {PRIM_I64, 7, out, ov};
        PrimCtx c = mkctx(1);
        cr_assert_eq(prim_cpu_map(&c, &p, in, 7, &o), 0, "%s", c.err);
        for (int i = 0; i < 7; i++) {
            int64_t got = ov[i] ? out[i] : 99;
            cr_expect_eq(got, cases[k].want[i], "reg %d row %d: got %lld want %lld", cases[k].reg,
                         i, (long long)got, (long long)cases[k].want[i]);
        }
        cr_expect_eq(check_map(&p, in, 7, &o, 1), 0);
    }
    /* an empty set, and many rows over several threads against the reference */
    PrimInstr empty[2] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0), I(POP_INLIST, 0, 1, 0, 0, 0, 0, 0)};
    PrimProgram pe = {2, empty, 2, 1, PRIM_REG_I, 1, 0, 0};
    int64_t eo[7];
    uint8_t ev[7];
    PrimVec eout = {PRIM_I64, 7, eo, ev};
    cr_expect_eq(check_map(&pe, in, 7, &eout, 1), 0);
    int64_t n = 200000;
    int64_t *big = malloc(sizeof(int64_t) * (size_t)n), *bo = malloc(sizeof(int64_t) * (size_t)n);
    uint8_t *bv = malloc((size_t)n), *bov = malloc((size_t)n);
    int64_t set[100];
    for (int i = 0; i < 100; i++)
        set[i] = i * 37 - 500;
    cr_assert(big && bo && bv && bov);
    for (int64_t i = 0; i < n; i++) {
        big[i] = (int64_t)((uint64_t)i * 2654435761u % 5000) - 1000;
        bv[i] = i % 11 != 0;
    }
    PrimVec bin[1] = {{PRIM_I64, n, big, bv}};
    for (int hasnull = 0; hasnull < 2; hasnull++) {
        PrimInstr bc[2] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0),
                           I(POP_INLIST, 0, 1, 0, 0, 0, hasnull, 0)};
        bc[1].table = set;
        bc[1].table_n = 100;
        PrimProgram pb = {2, bc, 2, 1, PRIM_REG_I, 1, 0, 0};
        PrimVec bout = {PRIM_I64, n, bo, bov};
        cr_expect_eq(check_map(&pb, bin, n, &bout, 4), 0);
        pb.as_filter = 1;
        PrimVec fout = {PRIM_U8, n, bov, NULL};
        cr_expect_eq(check_map(&pb, bin, n, &fout, 3), 0);
    }
    free(big);
    free(bo);
    free(bv);
    free(bov);
}

Test(map, as_filter_and_bad_programs) {
    int64_t a[4] = {0, 5, -3, 7};
    uint8_t va[4] = {1, 1, 1, 0};
    PrimVec in[1] = {{PRIM_I64, 4, a, va}};
    PrimInstr code[2] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0), I(POP_ADD, 0, 1, 0, 2, 0, 0, 0)};
    PrimProgram p = {1, code, 1, 0, PRIM_REG_I, 1, 1, 0};
    uint8_t out[4], ov[4];
    PrimVec o = {PRIM_U8, 4, out, ov};
    PrimCtx c = mkctx(1);
    cr_assert_eq(prim_cpu_map(&c, &p, in, 4, &o), 0, "%s", c.err);
    uint8_t want[4] = {0, 1, 1, 0};
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(out[i], want[i], "row %d", i);
        cr_expect_eq(ov[i], 1, "filter flags are never NULL");
    }
    /* register 2 read before written */
    PrimProgram bad = {2, code, 3, 1, PRIM_REG_I, 1, 0, 0};
    cr_expect_eq(prim_cpu_map(&c, &bad, in, 4, &o), -1);
    cr_expect(strstr(c.err, "before written") != NULL, "%s", c.err);
    /* register out of range, wrong result type */
    PrimProgram bad2 = {1, code, 70, 0, PRIM_REG_I, 1, 0, 0};
    cr_expect_eq(prim_cpu_map(&c, &bad2, in, 4, &o), -1);
    PrimProgram bad3 = {1, code, 1, 0, PRIM_REG_F, 1, 0, 0};
    cr_expect_eq(prim_cpu_map(&c, &bad3, in, 4, &o), -1);
}

Test(map, constant_register_overwritten_in_place) {
    /* r1 = 5; r2 = r0 + r1; r1 = r1 * r2 (in place); r3 = r1 - r0: a constant
     * that is overwritten must be re-evaluated for every batch */
    PrimInstr code[5] = {I(POP_COL, 0, 0, 0, 0, 0, 0, 0), I(POP_CONST, 0, 1, 0, 0, 0, 5, 0),
                         I(POP_ADD, 0, 2, 0, 1, 0, 0, 0), I(POP_MUL, 0, 1, 1, 2, 0, 0, 0),
                         I(POP_SUB, 0, 3, 1, 0, 0, 0, 0)};
    PrimProgram p = {5, code, 4, 3, PRIM_REG_I, 1, 0, 0};
    int64_t n = 5000;
    PrimVec in = rand_vec(PRIM_I32, n, -1000, 1000, 10);
    PrimVec o = alloc_vec(PRIM_I64, n, 1);
    cr_expect_eq(check_map(&p, &in, n, &o, 1), 0);
    for (int64_t i = 0; i < n; i++) {
        int64_t a = ((int32_t *)in.data)[i];
        if (in.valid[i])
            cr_assert_eq(((int64_t *)o.data)[i], 5 * (a + 5) - a, "row %lld", (long long)i);
    }
    free_vec(&in);
    free_vec(&o);
}

static const int64_t LOOKUP_TAB[8] = {5, -3, INT64_MIN, 0, 12, INT64_MIN, 7, 1};
/* The bits of 0.5, -3.25, NULL, 0.0, 12.0, NULL, 7.5, 1.0: a FLOAT lookup. */
static const int64_t LOOKUP_TABF[8] = {
    0x3FE0000000000000, -0x3FF6000000000000, /* 0xC00A000000000000 */
    INT64_MIN,          0,
    0x4028000000000000, INT64_MIN,
    0x401E000000000000, 0x3FF0000000000000};

/* Fills code with a random well-typed program over inputs of types ty[];
 * returns ninstr and sets *nregs, *res, *res_t. */
static int gen_program(PrimInstr *code, const PrimType *ty, int ninputs, int *nregs, int *res,
                       int *res_t) {
    int rt[PRIM_MAX_REGS]; /* register type: 0 I, 1 F */
    int n = 0, nr = 0;
    for (int i = 0; i < ninputs; i++) {
        int t = is_float(ty[i]) ? (rnd() % 4 != 0) : (rnd() % 4 == 0);
        code[n++] = I(POP_COL, t, nr, 0, 0, 0, i, 0);
        rt[nr++] = t;
    }
    int64_t consts[5] = {0, -1, 3, 7, -20};
    for (int i = 0; i < 3; i++) {
        int t = (int)(rnd() % 2);
        int64_t v = consts[rnd() % 5];
        code[n++] = I(POP_CONST, t, nr, 0, 0, 0, v, (double)v * 0.75);
        rt[nr++] = t;
    }
    int nops = 6 + (int)(rnd() % 10);
    for (int k = 0; k < nops; k++) {
        int op = POP_ADD + (int)(rnd() % (POP_COALESCE - POP_ADD + 1));
        int t = (int)(rnd() % 2);
        int pick[3];
        for (int o = 0; o < 3; o++) {
            int want = t;
            if (op == POP_I2F || op == POP_LOOKUP || (op == POP_CASE && o == 0)) want = 0;
            if (op == POP_F2I) want = 1;
            int cand[PRIM_MAX_REGS], nc = 0;
            for (int r = 0; r < nr; r++)
                if (rt[r] == want || op == POP_ISNULL || op == POP_NOTNULL) cand[nc++] = r;
            if (nc == 0) { /* make one: I2F or F2I of register 0 */
                code[n++] = I(want ? POP_I2F : POP_F2I, 0, nr, 0, 0, 0, 0, 0);
                if (rt[0] == want) /* register 0 already fits */
                    n--;
                else {
                    rt[nr] = want;
                    cand[nc++] = nr++;
                }
                if (nc == 0) cand[nc++] = 0;
            }
            pick[o] = cand[rnd() % (uint64_t)nc];
        }
        int dt;
        switch (op) {
        case POP_I2F:
            dt = 1;
            break;
        case POP_ADD:
        case POP_SUB:
        case POP_MUL:
        case POP_DIV:
        case POP_MOD:
        case POP_NEG:
        case POP_CASE:
        case POP_COALESCE:
        case POP_LOOKUP:
            dt = t;
            break;
        default:
            dt = 0;
        }
        /* write a new register, or overwrite one in place half the time */
        int dst = (rnd() % 2 && nr > 0) ? pick[0] : nr;
        if (dst == nr && nr >= PRIM_MAX_REGS - 2) dst = pick[0];
        PrimInstr x = I(op, t, dst, pick[0], pick[1], pick[2], 0, 0);
        if (op == POP_LOOKUP) {
            x.table = t ? LOOKUP_TABF : LOOKUP_TAB;
            x.table_n = 8;
        }
        code[n++] = x;
        if (dst == nr) nr++;
        rt[dst] = dt;
        *res = dst;
    }
    *nregs = nr;
    *res_t = rt[*res];
    return n;
}

Test(map, random_programs_vs_reference, .timeout = 300) {
    const PrimType all[5] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};
    int programs = 0;
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = test_scaled(SIZES[s]);
        int reps = n >= 3000000 ? 2 : n >= 100000 ? 6 : 40;
        for (int rep = 0; rep < reps; rep++) {
            PrimType ty[4];
            PrimVec in[4];
            for (int i = 0; i < 4; i++) {
                ty[i] = all[rnd() % 5];
                in[i] = rand_vec(ty[i], n, -9, 9, (int)(rnd() % 3) * 10 - 1);
            }
            PrimInstr code[128];
            int nregs, res, res_t;
            int ni = gen_program(code, ty, 4, &nregs, &res, &res_t);
            PrimProgram p = {ni, code, nregs, res, res_t, 4, (int)(rnd() % 4 == 0), 0};
            PrimType ot = all[rnd() % 5];
            PrimVec o1 = alloc_vec(ot, n, rnd() % 2), o4 = alloc_vec(ot, n, o1.valid != NULL);
            cr_expect_eq(check_map(&p, in, n, &o1, 1), 0, "n=%lld rep %d 1 thread", (long long)n,
                         rep);
            cr_expect_eq(check_map(&p, in, n, &o4, 4), 0, "n=%lld rep %d 4 threads", (long long)n,
                         rep);
            cr_expect(n == 0 || memcmp(o1.data, o4.data, prim_type_width(ot) * (size_t)n) == 0,
                      "1 and 4 threads differ");
            programs++;
            for (int i = 0; i < 4; i++)
                free_vec(&in[i]);
            free_vec(&o1);
            free_vec(&o4);
        }
    }
    cr_expect_gt(programs, 200);
}

/* ------------------------------------------------------------- scan -- */

Test(scan, all_types_sizes_threads, .timeout = 120) {
    const PrimType ts[3] = {PRIM_U8, PRIM_I32, PRIM_I64};
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = test_scaled(SIZES[s]);
        for (int k = 0; k < 3; k++) {
            PrimVec v = rand_vec(ts[k], n, ts[k] == PRIM_U8 ? 0 : -1000000, 1000000, -1);
            int64_t *o1 = malloc(sizeof(int64_t) * (size_t)(n + 1));
            int64_t *o4 = malloc(sizeof(int64_t) * (size_t)(n + 1));
            int64_t t1 = -1, t4 = -2;
            PrimCtx c1 = mkctx(1), c4 = mkctx(4);
            cr_assert_eq(prim_cpu_scan(&c1, &v, n, o1, &t1), 0, "%s", c1.err);
            cr_assert_eq(prim_cpu_scan(&c4, &v, n, o4, &t4), 0, "%s", c4.err);
            int64_t run = 0, bad = 0;
            for (int64_t i = 0; i < n; i++) {
                bad += o1[i] != run || o4[i] != run;
                run += get_i(&v, i);
            }
            cr_expect_eq(bad, 0, "type %d n %lld: %lld wrong offsets", ts[k], (long long)n,
                         (long long)bad);
            cr_expect_eq(t1, run);
            cr_expect_eq(t4, run);
            free(o1);
            free(o4);
            free_vec(&v);
        }
    }
    PrimCtx c = mkctx(1);
    double d = 1;
    PrimVec fv = {PRIM_F64, 1, &d, NULL};
    int64_t o, t;
    cr_expect_eq(prim_cpu_scan(&c, &fv, 1, &o, &t), -1, "floats are not scanned");
}

/* ----------------------------------------------------- gather/scatter -- */

Test(gather, all_types_sizes_threads, .timeout = 120) {
    const PrimType all[5] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = test_scaled(SIZES[s]);
        for (int k = 0; k < 5; k++) {
            int64_t sn = n + 7;
            PrimVec src = rand_vec(all[k], sn, -100000, 100000, k % 2 ? 20 : -1);
            int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n + 1));
            for (int64_t i = 0; i < n; i++)
                idx[i] = rnd() % 10 == 0 ? -1 : rnd_in(0, sn - 1);
            PrimVec d1 = alloc_vec(all[k], n, 1), d4 = alloc_vec(all[k], n, 1);
            PrimCtx c1 = mkctx(1), c4 = mkctx(4);
            cr_assert_eq(prim_cpu_gather(&c1, &src, idx, n, &d1), 0, "%s", c1.err);
            cr_assert_eq(prim_cpu_gather(&c4, &src, idx, n, &d4), 0, "%s", c4.err);
            size_t w = prim_type_width(all[k]);
            int64_t bad = 0;
            for (int64_t i = 0; i < n; i++) {
                int wantv = idx[i] >= 0 && !is_null(&src, idx[i]);
                bad += d1.valid[i] != wantv || d4.valid[i] != wantv;
                if (idx[i] >= 0 && wantv)
                    bad += memcmp((char *)d1.data + w * (size_t)i,
                                  (char *)src.data + w * (size_t)idx[i], w) != 0 ||
                           memcmp((char *)d4.data + w * (size_t)i,
                                  (char *)src.data + w * (size_t)idx[i], w) != 0;
            }
            cr_expect_eq(bad, 0, "type %d n %lld", all[k], (long long)n);
            free(idx);
            free_vec(&src);
            free_vec(&d1);
            free_vec(&d4);
        }
    }
}

Test(gather, errors) {
    int32_t s[3] = {1, 2, 3}, d[2];
    PrimVec src = {PRIM_I32, 3, s, NULL}, dst = {PRIM_I32, 2, d, NULL};
    int64_t idx[2] = {0, -1}, idx2[2] = {0, 3};
    PrimCtx c = mkctx(1);
    cr_expect_eq(prim_cpu_gather(&c, &src, idx, 2, &dst), -1, "NULL needs dst->valid");
    cr_expect_eq(prim_cpu_gather(&c, &src, idx2, 2, &dst), -1, "index past src");
    PrimVec dst64 = {PRIM_I64, 2, d, NULL};
    cr_expect_eq(prim_cpu_gather(&c, &src, idx, 1, &dst64), -1, "type mismatch");
}

Test(scatter, all_types_sizes_threads, .timeout = 120) {
    const PrimType all[5] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};
    for (int s = 0; s < NSMALL + 1; s++) {
        int64_t n = test_scaled(SIZES[s]);
        /* a random permutation as target, about 70% of rows selected */
        int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n + 1));
        for (int64_t i = 0; i < n; i++)
            idx[i] = i;
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = rnd_in(0, i), t = idx[i];
            idx[i] = idx[j];
            idx[j] = t;
        }
        uint8_t *flags = malloc((size_t)(n + 1));
        for (int64_t i = 0; i < n; i++)
            flags[i] = rnd() % 10 < 7;
        for (int k = 0; k <= 5; k++) {
            int rowids = k == 5;
            PrimType ty = rowids ? PRIM_I64 : all[k];
            PrimVec src = rand_vec(ty, n, -1000, 1000, k % 2 ? 15 : -1);
            PrimVec d1 = alloc_vec(ty, n, 1), d4 = alloc_vec(ty, n, 1);
            memset(d1.valid, 7, (size_t)(n > 0 ? n : 1));
            memset(d4.valid, 7, (size_t)(n > 0 ? n : 1));
            PrimCtx c1 = mkctx(1), c4 = mkctx(4);
            const PrimVec *sp = rowids ? NULL : &src;
            const uint8_t *fp = k == 2 ? NULL : flags;
            cr_assert_eq(prim_cpu_scatter(&c1, sp, fp, idx, n, &d1), 0, "%s", c1.err);
            cr_assert_eq(prim_cpu_scatter(&c4, sp, fp, idx, n, &d4), 0, "%s", c4.err);
            size_t w = prim_type_width(ty);
            int64_t bad = 0;
            for (int64_t i = 0; i < n; i++) {
                int64_t j = idx[i];
                if (fp && !fp[i]) {
                    bad += d1.valid[j] != 7 || d4.valid[j] != 7; /* untouched */
                    continue;
                }
                uint8_t wantv = rowids ? 1 : !is_null(&src, i);
                bad += d1.valid[j] != wantv || d4.valid[j] != wantv;
                if (rowids)
                    bad += ((int64_t *)d1.data)[j] != i || ((int64_t *)d4.data)[j] != i;
                else
                    bad += memcmp((char *)d1.data + w * (size_t)j, (char *)src.data + w * (size_t)i,
                                  w) != 0 ||
                           memcmp((char *)d4.data + w * (size_t)j, (char *)src.data + w * (size_t)i,
                                  w) != 0;
            }
            cr_expect_eq(bad, 0, "kind %d n %lld", k, (long long)n);
            free_vec(&src);
            free_vec(&d1);
            free_vec(&d4);
        }
        free(idx);
        free(flags);
    }
    int64_t s[2] = {1, 2}, d[2], bidx[2] = {0, 2};
    PrimVec src = {PRIM_I64, 2, s, NULL}, dst = {PRIM_I64, 2, d, NULL};
    PrimCtx c = mkctx(1);
    cr_expect_eq(prim_cpu_scatter(&c, &src, NULL, bidx, 2, &dst), -1, "index past dst");
}

/* ------------------------------------------------------------- sort -- */

static const PrimVec *g_keys;
static const uint8_t *g_desc;
static int g_nkeys;

/* qsort comparator over row ids: keys lexicographically (NULLs first
 * ascending / last descending, numeric compare), then row id (stability). */
static int ref_cmp(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    for (int k = 0; k < g_nkeys; k++) {
        const PrimVec *v = &g_keys[k];
        int na = is_null(v, a), nb = is_null(v, b);
        int c;
        if (na || nb) {
            c = na && nb ? 0 : na ? -1 : 1;
        } else if (is_float(v->type)) {
            double x = get_f(v, a), y = get_f(v, b);
            c = x < y ? -1 : x > y ? 1 : 0;
        } else {
            int64_t x = get_i(v, a), y = get_i(v, b);
            c = x < y ? -1 : x > y ? 1 : 0;
        }
        if (g_desc[k]) c = -c;
        if (c) return c;
    }
    return a < b ? -1 : a > b;
}

/* Sorts with 1 and 4 threads and compares with qsort; returns mismatches. */
static int64_t check_sort(const PrimVec *keys, const uint8_t *desc, int nkeys, int64_t n) {
    int64_t *want = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t *p1 = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t *p4 = malloc(sizeof(int64_t) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        want[i] = i;
    g_keys = keys;
    g_desc = desc;
    g_nkeys = nkeys;
    qsort(want, (size_t)n, sizeof(int64_t), ref_cmp);
    PrimCtx c1 = mkctx(1), c4 = mkctx(4);
    long live = g_live;
    cr_assert_eq(prim_cpu_sort(&c1, keys, desc, nkeys, n, p1), 0, "%s", c1.err);
    cr_assert_eq(prim_cpu_sort(&c4, keys, desc, nkeys, n, p4), 0, "%s", c4.err);
    cr_assert_eq(g_live, live, "sort leaked");
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        if ((p1[i] != want[i] || p4[i] != want[i]) && bad++ == 0)
            cr_log_error("sort pos %lld: want %lld got %lld/%lld", (long long)i, (long long)want[i],
                         (long long)p1[i], (long long)p4[i]);
    free(want);
    free(p1);
    free(p4);
    return bad;
}

Test(sort, single_key_all_types, .timeout = 300) {
    const PrimType all[5] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = test_scaled(SIZES[s]);
        for (int k = 0; k < 5; k++) {
            if (n >= 3000000 && k != 1 && k != 4) continue; /* the big case for I32 and F64 */
            for (int variant = 0; variant < 4; variant++) {
                int wide = variant & 1; /* wide range vs many ties */
                int nulls = variant & 2;
                int64_t lim = wide ? (all[k] == PRIM_I64 ? INT64_MAX / 2 : 1000000000) : 20;
                PrimVec v = rand_vec(all[k], n, -lim, lim, nulls ? 10 : -1);
                if (is_float(all[k]))
                    for (int64_t i = 0; i < n; i += 5) { /* -0.0 equals 0.0 */
                        if (all[k] == PRIM_F32)
                            ((float *)v.data)[i] = (i / 5) % 2 ? -0.0f : 0.0f;
                        else
                            ((double *)v.data)[i] = (i / 5) % 2 ? -0.0 : 0.0;
                    }
                for (int d = 0; d < 2; d++) {
                    uint8_t desc = (uint8_t)d;
                    cr_expect_eq(check_sort(&v, &desc, 1, n), 0, "type %d n %lld var %d desc %d",
                                 all[k], (long long)n, variant, d);
                }
                free_vec(&v);
            }
        }
    }
}

/* ----------------------------------------------------------------- math -- */

/* POP_MATH / POP_POW (SQLite's math functions, the CPU twin only) against
 * libm row by row, with NULLs and values outside each domain. */
Test(map, math_functions) {
    const int64_t n = 3000;
    PrimVec x = rand_vec(PRIM_F64, n, -50, 50, 10), y = rand_vec(PRIM_F64, n, -4, 4, 10);
    double *xv = x.data;
    for (int64_t i = 0; i < n; i += 17)
        xv[i] = i % 2 ? 0.0 : -0.0;
    for (int f = 0; f <= PMATH_LOG2 + 2; f++) {
        /* past PMATH_LOG2: POP_POW's pow, then its fmod */
        int64_t iv = f <= PMATH_LOG2 ? f : f - PMATH_LOG2 - 1;
        PrimInstr code[3] = {
            {POP_COL, PRIM_REG_F, 0, 0, 0, 0, 0, 0, NULL, 0},
            {POP_COL, PRIM_REG_F, 1, 0, 0, 0, 1, 0, NULL, 0},
            {f <= PMATH_LOG2 ? POP_MATH : POP_POW, PRIM_REG_F, 2, 0, 1, 0, iv, 0, NULL, 0}};
        PrimProgram p = {3, code, 3, 2, PRIM_REG_F, 2, 0, 0};
        PrimVec in[2] = {x, y};
        double *out = malloc(sizeof(double) * (size_t)n);
        uint8_t *ov = malloc((size_t)n);
        PrimVec o = {PRIM_F64, n, out, ov};
        PrimCtx c = mkctx(2);
        cr_assert_eq(prim_cpu_map(&c, &p, in, n, &o), 0, "%s", c.err);
        /* SQRT and fmod have GPU twins (exact); the other functions not */
        cr_assert_eq(prim_prog_cpu_only(&p), !(f == PMATH_SQRT || f == PMATH_LOG2 + 2), "f %d", f);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            RV regs[PRIM_MAX_REGS];
            memset(regs, 0, sizeof regs);
            RV want = ref_row(&p, in, i, regs);
            int gotnull = !ov[i];
            if (gotnull != want.null || (!want.null && !(out[i] == want.f)))
                if (bad++ == 0)
                    cr_log_error("fn %d row %lld: x %g y %g: want %s%g got %s%g", f, (long long)i,
                                 xv[i], ((double *)y.data)[i], want.null ? "NULL " : "", want.f,
                                 gotnull ? "NULL " : "", out[i]);
        }
        cr_expect_eq(bad, 0, "math function %d", f);
        free(out);
        free(ov);
    }
    free_vec(&x);
    free_vec(&y);
}

/* REAL + - * / giving NaN (Inf - Inf, 0 * Inf, Inf / Inf) is NULL, as in
 * SQLite; Inf itself stays. */
Test(map, real_nan_is_null) {
    double xs[6] = {INFINITY, INFINITY, 0.0, 1.0, -INFINITY, 2.0};
    double ys[6] = {INFINITY, -INFINITY, INFINITY, 2.0, -INFINITY, 0.0};
    PrimVec x = {PRIM_F64, 6, xs, NULL}, y = {PRIM_F64, 6, ys, NULL};
    const PrimOp ops[4] = {POP_ADD, POP_SUB, POP_MUL, POP_DIV};
    /* per op and row: 1 NULL, 0 a value */
    const int want[4][6] = {
        {0, 1, 0, 0, 0, 0}, {1, 0, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 0}, {1, 1, 0, 0, 1, 1}};
    for (int o = 0; o < 4; o++) {
        PrimInstr code[3] = {{POP_COL, PRIM_REG_F, 0, 0, 0, 0, 0, 0, NULL, 0},
                             {POP_COL, PRIM_REG_F, 1, 0, 0, 0, 1, 0, NULL, 0},
                             {ops[o], PRIM_REG_F, 2, 0, 1, 0, 0, 0, NULL, 0}};
        PrimProgram p = {3, code, 3, 2, PRIM_REG_F, 2, 0, 0};
        PrimVec in[2] = {x, y};
        double out[6];
        uint8_t ov[6];
        PrimVec ou = {PRIM_F64, 6, out, ov};
        PrimCtx c = mkctx(1);
        cr_assert_eq(prim_cpu_map(&c, &p, in, 6, &ou), 0, "%s", c.err);
        for (int k = 0; k < 6; k++) {
            cr_expect_eq(!ov[k], want[o][k], "op %d row %d: %g, %g", o, k, xs[k], ys[k]);
            if (ov[k]) cr_expect(out[k] == out[k], "op %d row %d: NaN kept", o, k);
        }
    }
}

/* ----------------------------------------------------------- sort range -- */

/* prim_cpu_sort_range with 1 and 4 threads against the full sort's slice
 * [offset, offset + limit) (limit < 0: to the end); returns mismatches. */
static int64_t check_sort_range(const PrimVec *keys, const uint8_t *desc, int nkeys, int64_t n,
                                int64_t offset, int64_t limit) {
    int64_t *full = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t *p1 = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t *p4 = malloc(sizeof(int64_t) * (size_t)(n + 1));
    PrimCtx c1 = mkctx(1), c4 = mkctx(4);
    long live = g_live;
    cr_assert_eq(prim_cpu_sort(&c1, keys, desc, nkeys, n, full), 0, "%s", c1.err);
    int64_t want = prim_range_rows(n, offset, limit), got1 = -1, got4 = -1;
    cr_assert_eq(prim_cpu_sort_range(&c1, keys, desc, nkeys, n, offset, limit, p1, &got1), 0, "%s",
                 c1.err);
    cr_assert_eq(prim_cpu_sort_range(&c4, keys, desc, nkeys, n, offset, limit, p4, &got4), 0, "%s",
                 c4.err);
    cr_assert_eq(g_live, live, "sort range leaked");
    cr_assert_eq(got1, want, "n %lld offset %lld limit %lld: %lld rows, want %lld", (long long)n,
                 (long long)offset, (long long)limit, (long long)got1, (long long)want);
    cr_assert_eq(got4, want);
    int64_t bad = 0;
    for (int64_t i = 0; i < want; i++)
        if ((p1[i] != full[offset + i] || p4[i] != full[offset + i]) && bad++ == 0)
            cr_log_error("sort range n %lld [%lld, +%lld) pos %lld: want %lld got %lld/%lld",
                         (long long)n, (long long)offset, (long long)limit, (long long)i,
                         (long long)full[offset + i], (long long)p1[i], (long long)p4[i]);
    free(full);
    free(p1);
    free(p4);
    return bad;
}

/* Ranges at the start, the middle, the end, past the end and around the
 * NULL block's edge (nnull), small and up to a quarter of the rows. */
static int64_t check_ranges(const PrimVec *keys, const uint8_t *desc, int nkeys, int64_t n) {
    int64_t nnull = 0;
    for (int64_t i = 0; i < n; i++)
        nnull += keys[0].valid && !keys[0].valid[i];
    int64_t offs[] = {0,         1,
                      n / 2,     n - 1,
                      n,         n + 5,
                      nnull,     nnull > 3 ? nnull - 3 : 0,
                      n - nnull, n - nnull > 3 ? n - nnull - 3 : 0};
    int64_t lims[] = {1, 10, 100, n / 4, -1, 0};
    int64_t bad = 0;
    for (size_t a = 0; a < sizeof offs / sizeof offs[0]; a++)
        for (size_t b = 0; b < sizeof lims / sizeof lims[0]; b++) {
            if (offs[a] < 0) continue;
            bad += check_sort_range(keys, desc, nkeys, n, offs[a], lims[b]);
        }
    return bad;
}

Test(sort_range, single_key_all_types, .timeout = 300) {
    const PrimType all[5] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};
    const int64_t sizes[] = {0, 1, 300, 5000, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        for (int k = 0; k < 5; k++)
            for (int variant = 0; variant < 6; variant++) {
                /* wide range, many ties, one value; each with and without NULLs */
                int kind = variant % 3, nulls = variant >= 3;
                int64_t lim = kind == 0   ? (all[k] == PRIM_I64 ? INT64_MAX / 2 : 1000000000)
                              : kind == 1 ? 20
                                          : 0;
                PrimVec v = rand_vec(all[k], n, -lim, lim, nulls ? 30 : -1);
                if (is_float(all[k]))
                    for (int64_t i = 0; i < n; i += 7) { /* -0.0 equals 0.0 */
                        if (all[k] == PRIM_F32)
                            ((float *)v.data)[i] = (i / 7) % 2 ? -0.0f : 0.0f;
                        else
                            ((double *)v.data)[i] = (i / 7) % 2 ? -0.0 : 0.0;
                    }
                for (int d = 0; d < 2; d++) {
                    uint8_t desc = (uint8_t)d;
                    cr_expect_eq(check_ranges(&v, &desc, 1, n), 0, "type %d n %lld var %d desc %d",
                                 all[k], (long long)n, variant, d);
                }
                free_vec(&v);
            }
    }
}

Test(sort_range, multi_key_and_extremes, .timeout = 300) {
    const PrimType all[5] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};
    for (int rep = 0; rep < 12; rep++) {
        int64_t n = rep % 2 ? 60000 : 9000;
        int nkeys = 1 + (int)(rnd() % 3);
        PrimVec keys[3];
        uint8_t desc[3];
        for (int k = 0; k < nkeys; k++) {
            int64_t lim = k == 0 && rep % 3 ? 1000000 : 5;
            keys[k] = rand_vec(all[rnd() % 5], n, -lim, lim, rnd() % 2 ? 20 : -1);
            desc[k] = (uint8_t)(rnd() % 2);
        }
        cr_expect_eq(check_ranges(keys, desc, nkeys, n), 0, "n %lld rep %d", (long long)n, rep);
        for (int k = 0; k < nkeys; k++)
            free_vec(&keys[k]);
    }
    /* from 65,536 rows a range near the start goes through a sampled
     * bound first: sorted and reverse-sorted columns, NULL-heavy ones, a
     * run of one value that overflows the sample's estimate (the radix
     * select then answers), two keys */
    for (int variant = 0; variant < 6; variant++) {
        int64_t nb = 200000;
        PrimVec a = rand_vec(variant == 4 ? PRIM_F64 : PRIM_I64, nb, -1000, 1000,
                             variant == 2   ? 90
                             : variant == 3 ? 3
                                            : -1);
        PrimVec b2 = rand_vec(PRIM_I32, nb, 0, 3, 10);
        for (int64_t i = 0; i < nb; i++) {
            int64_t x = variant == 0                 ? i
                        : variant == 1               ? nb - i
                        : variant == 3 && i > nb / 3 ? 7
                                                     : i % 977;
            if (variant == 4)
                ((double *)a.data)[i] = (double)(i % 1013) * 0.5 - 100;
            else if (variant != 2 && variant != 5)
                ((int64_t *)a.data)[i] = x;
        }
        PrimVec kk[2] = {a, b2};
        for (int d = 0; d < 4; d++) {
            uint8_t desc2[2] = {(uint8_t)(d & 1), (uint8_t)(d >> 1)};
            int64_t bad = 0;
            const int64_t offs[] = {0, 3, 500};
            const int64_t lims[] = {1, 10, 200};
            for (int o = 0; o < 3; o++)
                for (int l = 0; l < 3; l++)
                    bad += check_sort_range(kk, desc2, 1 + (variant & 1), nb, offs[o], lims[l]);
            cr_expect_eq(bad, 0, "sampled variant %d desc %d", variant, d);
        }
        free_vec(&a);
        free_vec(&b2);
    }
    /* a column whose values at the sampled rows (every (n / 8192)-th, from
     * the middle of the first stride) mislead the bound: too loose (the
     * sample says every row passes) and too tight (fewer rows pass than
     * the range needs); the radix select answers both */
    for (int variant = 0; variant < 2; variant++) {
        int64_t nb = variant ? 65536 : 200000, stride = nb / 8192;
        PrimVec a = rand_vec(PRIM_I64, nb, 0, 1, -1);
        for (int64_t i = 0; i < nb; i++)
            ((int64_t *)a.data)[i] = i % stride != stride / 2 ? (variant ? 1000000 : 0)
                                     : variant                ? i / stride
                                                              : 1000;
        uint8_t asc = 0;
        cr_expect_eq(check_sort_range(&a, &asc, 1, nb, 0, 10), 0, "misleading sample %d", variant);
        cr_expect_eq(check_sort_range(&a, &asc, 1, nb, 5, nb / 256 - 5), 0, "misleading %d",
                     variant);
        free_vec(&a);
    }
    /* INT64 extremes and a skewed column: most rows one value */
    int64_t n = 50000;
    PrimVec v = rand_vec(PRIM_I64, n, -3, 3, 5);
    int64_t *x = v.data;
    for (int64_t i = 0; i < n; i++)
        x[i] = i % 11 == 0 ? INT64_MIN : i % 13 == 0 ? INT64_MAX : i % 3 ? 42 : x[i] * 1000003;
    for (int d = 0; d < 2; d++) {
        uint8_t desc = (uint8_t)d;
        cr_expect_eq(check_ranges(&v, &desc, 1, n), 0, "extremes desc %d", d);
    }
    free_vec(&v);
}

Test(sort, multi_key, .timeout = 300) {
    const PrimType all[5] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = test_scaled(SIZES[s]);
        int reps = n >= 3000000 ? 1 : n >= 100000 ? 3 : 12;
        for (int rep = 0; rep < reps; rep++) {
            int nkeys = 2 + (int)(rnd() % 2);
            PrimVec keys[3];
            uint8_t desc[3];
            for (int k = 0; k < nkeys; k++) {
                keys[k] = rand_vec(all[rnd() % 5], n, -5, 5, rnd() % 2 ? 15 : -1);
                desc[k] = (uint8_t)(rnd() % 2);
            }
            cr_expect_eq(check_sort(keys, desc, nkeys, n), 0, "n %lld rep %d", (long long)n, rep);
            for (int k = 0; k < nkeys; k++)
                free_vec(&keys[k]);
        }
    }
}

/* --------------------------------------------------------- segments -- */

Test(segments, runs_of_equal_keys) {
    const PrimType all[5] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = test_scaled(SIZES[s]);
        for (int rep = 0; rep < 3; rep++) {
            int nkeys = 1 + rep % 2;
            PrimVec keys[2];
            for (int k = 0; k < nkeys; k++) {
                keys[k] = rand_vec(all[(rep + k * 2 + s) % 5], n, 0, 3, 10);
                /* make runs: copy the previous row most of the time */
                size_t w = prim_type_width(keys[k].type);
                for (int64_t i = 1; i < n; i++)
                    if (rnd() % 4 != 0) {
                        memcpy((char *)keys[k].data + w * (size_t)i,
                               (char *)keys[k].data + w * (size_t)(i - 1), w);
                        keys[k].valid[i] = keys[k].valid[i - 1];
                    }
            }
            int64_t *st1 = malloc(sizeof(int64_t) * (size_t)(n + 1));
            int64_t *st4 = malloc(sizeof(int64_t) * (size_t)(n + 1));
            int64_t ns1 = -1, ns4 = -1;
            PrimCtx c1 = mkctx(1), c4 = mkctx(4);
            cr_assert_eq(prim_cpu_segments(&c1, keys, nkeys, n, st1, &ns1), 0, "%s", c1.err);
            cr_assert_eq(prim_cpu_segments(&c4, keys, nkeys, n, st4, &ns4), 0, "%s", c4.err);
            int64_t want = 0, bad = 0;
            for (int64_t i = 0; i < n; i++) {
                int differs = i == 0;
                for (int k = 0; k < nkeys && !differs; k++) {
                    int a = is_null(&keys[k], i - 1), b = is_null(&keys[k], i);
                    differs = a != b || (!a && get_f(&keys[k], i) != get_f(&keys[k], i - 1));
                }
                if (differs) {
                    bad += want >= ns1 || st1[want] != i || want >= ns4 || st4[want] != i;
                    want++;
                }
            }
            cr_expect_eq(ns1, want, "n %lld: %lld segments, want %lld", (long long)n,
                         (long long)ns1, (long long)want);
            cr_expect_eq(ns4, want);
            cr_expect_eq(bad, 0);
            free(st1);
            free(st4);
            for (int k = 0; k < nkeys; k++)
                free_vec(&keys[k]);
        }
    }
}

/* ----------------------------------------------------- segment rank -- */

Test(segments, rank_numbers_rows_within_their_segment) {
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = test_scaled(SIZES[s]);
        for (int rep = 0; rep < 3; rep++) {
            /* starts: 0, then each row with probability 1 / (1, 5, 200) */
            int64_t *starts = malloc(sizeof(int64_t) * (size_t)(n + 1)), nseg = 0;
            int every = rep == 0 ? 1 : rep == 1 ? 5 : 200;
            for (int64_t i = 0; i < n; i++)
                if (i == 0 || rnd() % every == 0) starts[nseg++] = i;
            int64_t *r1 = malloc(sizeof(int64_t) * (size_t)(n + 1));
            int64_t *r4 = malloc(sizeof(int64_t) * (size_t)(n + 1));
            PrimCtx c1 = mkctx(1), c4 = mkctx(4);
            cr_assert_eq(prim_cpu_segrank(&c1, starts, nseg, n, r1), 0, "%s", c1.err);
            cr_assert_eq(prim_cpu_segrank(&c4, starts, nseg, n, r4), 0, "%s", c4.err);
            int64_t bad = 0, seg = -1, first = 0;
            for (int64_t i = 0; i < n; i++) {
                if (seg + 1 < nseg && starts[seg + 1] == i) first = starts[++seg];
                bad += r1[i] != i - first + 1 || r4[i] != r1[i];
            }
            cr_expect_eq(bad, 0, "n %lld, %lld segments: %lld rows misnumbered", (long long)n,
                         (long long)nseg, (long long)bad);
            free(starts);
            free(r1);
            free(r4);
        }
    }
    PrimCtx c = mkctx(1);
    int64_t out[2], zero = 0, one = 1;
    cr_expect_eq(prim_cpu_segrank(&c, &zero, 0, 0, out), 0, "no rows: %s", c.err);
    cr_expect_eq(prim_cpu_segrank(&c, &one, 1, 2, out), -1, "starts[0] must be 0");
    cr_expect_eq(prim_cpu_segrank(&c, &zero, 0, 2, out), -1, "rows need a segment");
}

/* -------------------------------------------------------- segreduce -- */

/* Checks one aggregate over random segments against plain loops; returns
 * mismatches. out1/out4 come from 1 and 4 threads and must be identical. */
static int64_t check_segreduce(PrimAgg agg, const PrimVec *val, const int64_t *starts, int64_t nseg,
                               int64_t n) {
    int isf = is_float(val->type);
    PrimType ot = (agg == AGG_AVG || (isf && agg != AGG_COUNT && agg != AGG_COUNT_STAR)) ? PRIM_F64
                                                                                         : PRIM_I64;
    PrimVec o1 = alloc_vec(ot, nseg, 1), o4 = alloc_vec(ot, nseg, 1);
    PrimCtx c1 = mkctx(1), c4 = mkctx(4);
    long live = g_live;
    cr_assert_eq(prim_cpu_segreduce(&c1, agg, val, starts, nseg, n, &o1), 0, "%s", c1.err);
    cr_assert_eq(prim_cpu_segreduce(&c4, agg, val, starts, nseg, n, &o4), 0, "%s", c4.err);
    cr_assert_eq(g_live, live, "segreduce leaked");
    int64_t bad = 0;
    bad += nseg > 0 && memcmp(o1.data, o4.data, 8 * (size_t)nseg) != 0;
    bad += nseg > 0 && memcmp(o1.valid, o4.valid, (size_t)nseg) != 0;
    for (int64_t s = 0; s < nseg; s++) {
        int64_t lo = starts[s], hi = s + 1 < nseg ? starts[s + 1] : n;
        int64_t cnt = 0, isum = 0, imin = INT64_MAX, imax = INT64_MIN;
        long double fsum = 0, fabssum = 0;
        double fmin = INFINITY, fmax = -INFINITY;
        for (int64_t i = lo; i < hi; i++) {
            if (agg != AGG_COUNT_STAR && is_null(val, i)) continue;
            cnt++;
            if (agg == AGG_COUNT_STAR) continue;
            if (isf) {
                double x = get_f(val, i);
                fsum += x;
                fabssum += fabs(x);
                fmin = x < fmin ? x : fmin;
                fmax = x > fmax ? x : fmax;
            } else {
                int64_t x = get_i(val, i);
                isum += x;
                fabssum += llabs(x);
                imin = x < imin ? x : imin;
                imax = x > imax ? x : imax;
            }
        }
        int wantnull = agg != AGG_COUNT && agg != AGG_COUNT_STAR && cnt == 0;
        int ok = o1.valid[s] == !wantnull;
        if (!wantnull) {
            if (ot == PRIM_I64) {
                int64_t got = ((int64_t *)o1.data)[s];
                int64_t want = agg == AGG_SUM   ? isum
                               : agg == AGG_MIN ? imin
                               : agg == AGG_MAX ? imax
                                                : cnt;
                ok &= got == want;
            } else {
                double got = ((double *)o1.data)[s];
                long double want;
                if (agg == AGG_AVG)
                    want = (isf ? fsum : (long double)isum) / cnt;
                else if (agg == AGG_SUM)
                    want = fsum;
                else
                    want = agg == AGG_MIN ? fmin : fmax;
                long double scale = agg == AGG_AVG ? fabssum / cnt : fabssum;
                ok &= fabsl((long double)got - want) <= 1e-9L * (scale > 1 ? scale : 1);
            }
        }
        if (!ok && bad++ == 0)
            cr_log_error("segreduce agg %d seg %lld [%lld,%lld)", agg, (long long)s, (long long)lo,
                         (long long)hi);
    }
    free_vec(&o1);
    free_vec(&o4);
    return bad;
}

Test(segreduce, all_aggs_types_sizes, .timeout = 300) {
    const PrimType all[5] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = test_scaled(SIZES[s]);
        for (int k = 0; k < 5; k++) {
            if (n >= 3000000 && k != 4 && k != 2) continue;
            PrimVec v = rand_vec(all[k], n, all[k] == PRIM_U8 ? 0 : -1000000000, 1000000000,
                                 k % 2 ? 5 : -1);
            for (int shape = 0; shape < 3; shape++) {
                /* 0: global, 1: many small segments (some empty), 2: a few long ones */
                int64_t *starts = malloc(sizeof(int64_t) * (size_t)(n + 2));
                int64_t nseg = 0;
                if (shape == 0) {
                    starts[nseg++] = 0;
                } else {
                    int64_t avg = shape == 1 ? 5 : 200000;
                    for (int64_t r = 0; r <= n && nseg <= n;) {
                        starts[nseg++] = r;
                        r += rnd_in(shape == 1 ? 0 : 1, 2 * avg);
                        if (r > n) break;
                    }
                }
                for (int agg = AGG_COUNT_STAR; agg <= AGG_AVG; agg++)
                    cr_expect_eq(check_segreduce((PrimAgg)agg, &v, starts, nseg, n), 0,
                                 "agg %d type %d n %lld shape %d", agg, all[k], (long long)n,
                                 shape);
                free(starts);
            }
            free_vec(&v);
        }
    }
}

Test(segreduce, integer_overflow_and_empty) {
    int64_t v[3] = {INT64_MAX, 1, 5};
    PrimVec val = {PRIM_I64, 3, v, NULL};
    int64_t starts[1] = {0}, out[1];
    uint8_t ov[1];
    PrimVec o = {PRIM_I64, 1, out, ov};
    PrimCtx c = mkctx(1);
    cr_expect_eq(prim_cpu_segreduce(&c, AGG_SUM, &val, starts, 1, 3, &o), -1);
    cr_expect(strstr(c.err, "integer overflow") != NULL, "%s", c.err);
    double avg;
    PrimVec oa = {PRIM_F64, 1, &avg, ov};
    cr_assert_eq(prim_cpu_segreduce(&c, AGG_AVG, &val, starts, 1, 3, &oa), 0, "%s", c.err);
    cr_expect(fabs(avg - ((double)INT64_MAX + 6.0) / 3.0) < 1e3, "avg %g", avg);
    /* global aggregate of no rows: COUNT 0, SUM NULL */
    cr_assert_eq(prim_cpu_segreduce(&c, AGG_SUM, &val, starts, 1, 0, &o), 0, "%s", c.err);
    cr_expect_eq(ov[0], 0);
    cr_assert_eq(prim_cpu_segreduce(&c, AGG_COUNT_STAR, NULL, starts, 1, 0, &o), 0, "%s", c.err);
    cr_expect_eq(out[0], 0);
    cr_expect_eq(ov[0], 1);
    PrimVec wrong = {PRIM_F64, 1, &avg, ov};
    cr_expect_eq(prim_cpu_segreduce(&c, AGG_SUM, &val, starts, 1, 3, &wrong), -1);
}

/* ------------------------------------------------------------- join -- */

/* Returns 1 when row i of a equals row j of b (both non-NULL, numeric). */
static int key_eq(const PrimVec *a, int64_t i, const PrimVec *b, int64_t j) {
    if (is_null(a, i) || is_null(b, j)) return 0;
    return is_float(a->type) ? get_f(a, i) == get_f(b, j) : get_i(a, i) == get_i(b, j);
}

static const PrimVec *g_jr;

/* qsort comparator for right rows: key (numeric), then row id. */
static int jcmp(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    double x = get_f(g_jr, a), y = get_f(g_jr, b);
    if (!is_float(g_jr->type)) {
        int64_t p = get_i(g_jr, a), q = get_i(g_jr, b);
        if (p != q) return p < q ? -1 : 1;
    } else if (x != y) {
        return x < y ? -1 : 1;
    }
    return a < b ? -1 : a > b;
}

/* Reference pairs (malloc): nested loops for small inputs, otherwise the
 * right rows sorted by (key, row) and a binary search per left row. */
static int64_t ref_join(const PrimVec *l, int64_t nl, const PrimVec *r, int64_t nr, int64_t **L,
                        int64_t **R) {
    int64_t cap = 1024, n = 0;
    *L = malloc(sizeof(int64_t) * (size_t)cap);
    *R = malloc(sizeof(int64_t) * (size_t)cap);
    int64_t *sorted = NULL, ns = 0;
    int small = (double)nl * (double)nr <= 4e6;
    if (!small) {
        sorted = malloc(sizeof(int64_t) * (size_t)(nr + 1));
        for (int64_t j = 0; j < nr; j++)
            if (!is_null(r, j)) sorted[ns++] = j;
        g_jr = r;
        qsort(sorted, (size_t)ns, sizeof(int64_t), jcmp);
    }
    for (int64_t i = 0; i < nl; i++) {
        int64_t j0 = 0, j1 = nr;
        if (!small) {
            if (is_null(l, i)) continue;
            int64_t lo = 0, hi = ns;
            double x = get_f(l, i);
            while (lo < hi) {
                int64_t mid = (lo + hi) / 2;
                int less = is_float(l->type) ? get_f(r, sorted[mid]) < x
                                             : get_i(r, sorted[mid]) < get_i(l, i);
                if (less)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            j0 = lo;
            j1 = ns;
        }
        for (int64_t p = j0; p < j1; p++) {
            int64_t j = small ? p : sorted[p];
            if (!key_eq(l, i, r, j)) {
                if (small) continue;
                break;
            }
            if (n == cap) {
                cap *= 2;
                *L = realloc(*L, sizeof(int64_t) * (size_t)cap);
                *R = realloc(*R, sizeof(int64_t) * (size_t)cap);
            }
            (*L)[n] = i;
            (*R)[n] = j;
            n++;
        }
    }
    free(sorted);
    return n;
}

Test(join, all_types_sizes_threads, .timeout = 300) {
    const PrimType all[5] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};
    for (int s = 0; s < NSIZES; s++) {
        int64_t n = test_scaled(SIZES[s]);
        for (int k = 0; k < 5; k++) {
            if ((n >= 3000000 && k != 1) || (n >= 100000 && k == 0))
                continue; /* U8 keys on many rows would give billions of pairs */
            for (int shape = 0; shape < 2; shape++) {
                int64_t nl = shape ? n : n / 2 + (n & 1), nr = shape ? n / 3 + 1 : n;
                int64_t range = all[k] == PRIM_U8 ? 255 : n > 10 ? n : 10;
                PrimVec l = rand_vec(all[k], nl, 0, range, 5);
                PrimVec r = rand_vec(all[k], nr, 0, range, shape ? -1 : 5);
                if (is_float(all[k]) && nl > 0 && nr > 0) { /* -0.0 must meet 0.0 */
                    if (all[k] == PRIM_F32) {
                        ((float *)l.data)[0] = -0.0f;
                        ((float *)r.data)[nr - 1] = 0.0f;
                    } else {
                        ((double *)l.data)[0] = -0.0;
                        ((double *)r.data)[nr - 1] = 0.0;
                    }
                    l.valid[0] = 1;
                    if (r.valid) r.valid[nr - 1] = 1;
                }
                int64_t *wl, *wr;
                int64_t wn = ref_join(&l, nl, &r, nr, &wl, &wr);
                for (int nt = 1; nt <= 4; nt += 3) {
                    PrimCtx c = mkctx(nt);
                    PrimPairs out;
                    long live = g_live;
                    cr_assert_eq(prim_cpu_join(&c, &l, nl, &r, nr, &out), 0, "%s", c.err);
                    cr_expect_eq(out.n, wn, "type %d n %lld shape %d: %lld pairs, want %lld",
                                 all[k], (long long)n, shape, (long long)out.n, (long long)wn);
                    int64_t bad = 0;
                    for (int64_t p = 0; p < out.n && p < wn; p++)
                        bad += out.left[p] != wl[p] || out.right[p] != wr[p];
                    cr_expect_eq(bad, 0, "type %d n %lld shape %d nt %d", all[k], (long long)n,
                                 shape, nt);
                    if (out.n == 0) cr_expect(out.left == NULL && out.right == NULL);
                    c.free(c.ud, out.left);
                    c.free(c.ud, out.right);
                    cr_expect_eq(g_live, live, "join leaked");
                }
                if (n > 100 && k != 0) cr_expect_gt(wn, 0, "test data should produce matches");
                free(wl);
                free(wr);
                free_vec(&l);
                free_vec(&r);
            }
        }
    }
}

Test(join, cross_product) {
    const int64_t ns[4] = {0, 1, 3, 1025};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            PrimCtx c = mkctx(4);
            PrimPairs out;
            cr_assert_eq(prim_cpu_cross(&c, ns[a], ns[b], &out), 0, "%s", c.err);
            cr_assert_eq(out.n, ns[a] * ns[b]);
            int64_t p = 0, bad = 0;
            for (int64_t i = 0; i < ns[a]; i++)
                for (int64_t j = 0; j < ns[b]; j++, p++)
                    bad += out.left[p] != i || out.right[p] != j;
            cr_expect_eq(bad, 0);
            c.free(c.ud, out.left);
            c.free(c.ud, out.right);
        }
    PrimCtx c = mkctx(1);
    PrimPairs out;
    cr_expect_eq(prim_cpu_cross(&c, INT64_MAX / 2, 3, &out), -1, "overflowing product");
}

/* ---------------------------------------------------- keymap / denseagg -- */

/* Reference keymap: out[0..range) = -1, then the larger row id per key. */
static void ref_keymap(const PrimVec *key, const int64_t *rows, int64_t n, int64_t kmin,
                       int64_t range, int64_t *out) {
    for (int64_t k = 0; k < range; k++)
        out[k] = -1;
    for (int64_t i = 0; i < n; i++) {
        if (is_null(key, i)) continue;
        int64_t v = get_i(key, i);
        if (v < kmin || v - kmin >= range) continue;
        int64_t row = rows ? rows[i] : i;
        if (row > out[v - kmin]) out[v - kmin] = row;
    }
}

Test(keymap, duplicates_out_of_range_nulls, .timeout = 120) {
    const int64_t ns[] = {0, 1, 7, 1025, 100000, test_scaled(300000)};
    const PrimType types[] = {PRIM_U8, PRIM_I32, PRIM_I64};
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
        for (int t = 0; t < 3; t++)
            for (int with_rows = 0; with_rows < 2; with_rows++) {
                int64_t n = ns[s], kmin = types[t] == PRIM_U8 ? 10 : -500;
                int64_t range = types[t] == PRIM_U8 ? 200 : n / 2 + 50;
                /* keys spill past both ends of the range; about n / range
                 * rows share each key */
                PrimVec key = rand_vec(types[t], n, kmin - 5, kmin + range + 5, 10);
                int64_t *rows = NULL;
                if (with_rows) {
                    rows = malloc(sizeof(int64_t) * (size_t)(n + 1));
                    for (int64_t i = 0; i < n; i++)
                        rows[i] = rnd_in(0, 3 * n);
                }
                int64_t *want = malloc(sizeof(int64_t) * (size_t)range);
                ref_keymap(&key, rows, n, kmin, range, want);
                for (int nt = 1; nt <= 4; nt += 3) {
                    int64_t *got = malloc(sizeof(int64_t) * (size_t)range);
                    memset(got, 0x5a, sizeof(int64_t) * (size_t)range);
                    PrimCtx c = mkctx(nt);
                    cr_assert_eq(prim_cpu_keymap(&c, &key, rows, n, kmin, range, got), 0, "%s",
                                 c.err);
                    int64_t bad = 0;
                    for (int64_t k = 0; k < range; k++)
                        bad += got[k] != want[k];
                    cr_expect_eq(bad, 0, "keymap type %d n %lld rows %d nt %d", types[t],
                                 (long long)n, with_rows, nt);
                    free(got);
                }
                free(want);
                free(rows);
                free_vec(&key);
            }
    /* keymap_where: the rows whose flag is set enter as their own index */
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
        int64_t n = ns[s], kmin = -500, range = n / 2 + 50;
        PrimVec key = rand_vec(PRIM_I32, n, kmin - 5, kmin + range + 5, 10);
        uint8_t *flags = malloc((size_t)n + 1);
        int64_t *want = malloc(sizeof(int64_t) * (size_t)range);
        for (int64_t i = 0; i < n; i++)
            flags[i] = rnd_in(0, 1) == 0;
        for (int64_t k = 0; k < range; k++)
            want[k] = -1;
        for (int64_t i = 0; i < n; i++) {
            if (!flags[i] || is_null(&key, i)) continue;
            int64_t v = get_i(&key, i);
            if (v >= kmin && v - kmin < range && i > want[v - kmin]) want[v - kmin] = i;
        }
        for (int nt = 1; nt <= 4; nt += 3) {
            int64_t *got = malloc(sizeof(int64_t) * (size_t)range);
            PrimCtx c = mkctx(nt);
            cr_assert_eq(prim_cpu_keymap_where(&c, &key, flags, n, kmin, range, got), 0, "%s",
                         c.err);
            int64_t bad = 0;
            for (int64_t k = 0; k < range; k++)
                bad += got[k] != want[k];
            cr_expect_eq(bad, 0, "keymap_where n %lld nt %d", (long long)n, nt);
            free(got);
        }
        free(flags);
        free(want);
        free_vec(&key);
    }
    /* an explicit duplicate: the larger row id wins, whatever the order */
    int32_t k3[4] = {5, 6, 5, 99};
    uint8_t v3[4] = {1, 1, 1, 0};
    PrimVec key = {PRIM_I32, 4, k3, v3};
    int64_t rows[4] = {40, 41, 7, 3}, out[3];
    PrimCtx c = mkctx(1);
    cr_assert_eq(prim_cpu_keymap(&c, &key, rows, 4, 4, 3, out), 0, "%s", c.err);
    cr_expect(out[0] == -1 && out[1] == 40 && out[2] == 41, "%lld %lld %lld", (long long)out[0],
              (long long)out[1], (long long)out[2]);
    PrimVec fkey = {PRIM_F64, 4, k3, NULL};
    cr_expect_eq(prim_cpu_keymap(&c, &fkey, NULL, 4, 0, 3, out), -1);
    cr_expect_eq(prim_cpu_keymap(&c, &key, NULL, 4, 0, -1, out), -1);
}

/* The random source of the shared denseagg cases (denseagg_cases.h). */
static const DaRand DA_RAND = {rnd, rand_vec};

/* Allocates the PRIM_DA_NOUT(naggs) outputs of c (ngroups values each). */
static void da_outs(const DaCase *c, PrimVec *out) {
    for (int k = 0; k < PRIM_DA_NOUT(c->s.naggs); k++)
        out[k] = alloc_vec(PRIM_I64, c->s.ngroups, 0);
}

/* Reference denseagg: the header's four steps, one row at a time. */
static void ref_denseagg(const DaCase *c, PrimVec *out) {
    const PrimDenseAgg *s = &c->s;
    const PrimVec *in = c->in;
    int64_t *o[PRIM_DA_NOUT(PRIM_DA_MAX)];
    for (int k = 0; k < PRIM_DA_NOUT(s->naggs); k++) {
        o[k] = out[k].data;
        int64_t init = 0;
        if (k % 2 == 1 && s->agg[k / 2] == AGG_MIN) init = INT64_MAX;
        if (k % 2 == 1 && s->agg[k / 2] == AGG_MAX) init = INT64_MIN;
        for (int64_t g = 0; g < s->ngroups; g++)
            o[k][g] = init;
    }
    for (int64_t i = 0; i < c->n; i++) {
        int64_t r = s->rows >= 0 ? ((int64_t *)in[s->rows].data)[i] : i;
        int keep = 1;
        for (int f = 0; f < s->nranges && keep; f++) {
            const PrimVec *v = &in[s->range_col[f]];
            keep = !is_null(v, r) && get_i(v, r) >= s->range_lo[f] && get_i(v, r) <= s->range_hi[f];
        }
        int64_t rd[PRIM_DA_MAX];
        for (int d = 0; d < s->ndims && keep; d++) {
            const PrimVec *fk = &in[s->dim_fk[d]];
            if (is_null(fk, r)) {
                keep = 0;
                break;
            }
            int64_t k = get_i(fk, r) - s->dim_kmin[d];
            keep = k >= 0 && k < s->dim_range[d] && ((int64_t *)in[s->dim_map[d]].data)[k] != -1;
            if (keep) rd[d] = ((int64_t *)in[s->dim_map[d]].data)[k];
        }
        int64_t g = 0, stride = 1;
        for (int j = s->nkeys - 1; j >= 0 && keep; j--) {
            const PrimVec *v = &in[s->key_col[j]];
            int64_t at = s->key_dim[j] < 0 ? r : rd[s->key_dim[j]];
            int64_t code = is_null(v, at) ? 0 : get_i(v, at) - s->key_min[j] + 1;
            keep = code >= 0 && code < s->key_card[j] && (code > 0 || is_null(v, at));
            g += code * stride;
            stride *= s->key_card[j];
        }
        if (!keep) continue;
        o[0][g]++;
        for (int a = 0; a < s->naggs; a++) {
            int present = 1;
            int64_t x = 0;
            if (s->val_a[a] >= 0) {
                const PrimVec *va = &in[s->val_a[a]];
                present = !is_null(va, r);
                x = get_i(va, r);
                if (s->val_b[a] >= 0) {
                    const PrimVec *vb = &in[s->val_b[a]];
                    present = present && !is_null(vb, r);
                    uint64_t p = (uint64_t)x, q = (uint64_t)get_i(vb, r);
                    char op = s->val_op[a];
                    x = (int64_t)(op == '+' ? p + q : op == '-' ? p - q : p * q);
                }
            }
            int64_t *acc = &o[1 + 2 * a][g];
            o[2 + 2 * a][g] += present;
            switch (s->agg[a]) {
            case AGG_COUNT_STAR:
                (*acc)++;
                break;
            case AGG_COUNT:
                *acc += present;
                break;
            case AGG_SUM:
                if (present) *acc = (int64_t)((uint64_t)*acc + (uint64_t)x);
                break;
            case AGG_MIN:
                if (present && x < *acc) *acc = x;
                break;
            default:
                if (present && x > *acc) *acc = x;
                break;
            }
        }
    }
}

/* Runs case c with 1 and 4 threads against the reference; returns the
 * number of mismatching outputs. */
static int da_check(const DaCase *c, const char *what) {
    int nout = PRIM_DA_NOUT(c->s.naggs), bad = 0;
    PrimVec want[PRIM_DA_NOUT(PRIM_DA_MAX)], got[PRIM_DA_NOUT(PRIM_DA_MAX)];
    da_outs(c, want);
    ref_denseagg(c, want);
    for (int nt = 1; nt <= 4; nt += 3) {
        da_outs(c, got);
        PrimCtx ctx = mkctx(nt);
        long live = g_live;
        cr_assert_eq(prim_cpu_denseagg(&ctx, &c->s, c->in, c->n, got), 0, "%s: %s", what, ctx.err);
        cr_expect_eq(g_live, live, "denseagg leaked");
        for (int k = 0; k < nout; k++)
            if (memcmp(got[k].data, want[k].data, sizeof(int64_t) * (size_t)c->s.ngroups) != 0) {
                if (bad++ == 0)
                    cr_log_error("%s nt %d: output %d differs (n %lld, %lld groups)", what, nt, k,
                                 (long long)c->n, (long long)c->s.ngroups);
            }
        for (int k = 0; k < nout; k++)
            free_vec(&got[k]);
    }
    for (int k = 0; k < nout; k++)
        free_vec(&want[k]);
    return bad;
}

Test(denseagg, random_specs_vs_reference, .timeout = 600) {
    const int64_t ns[] = {0, 1, 1025, 100000, test_scaled(300000)};
    int iter = 0;
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
        for (int gclass = 0; gclass < 4; gclass++)
            for (int rep = 0; rep < (ns[s] >= 100000 ? 3 : 6); rep++) {
                if (gclass == 3 && ns[s] < 100000 && rep > 0) continue;
                DaCase c;
                da_case(&c, &DA_RAND, ns[s], gclass, rep % 2);
                char what[96];
                snprintf(what, sizeof what,
                         "case %d: n %lld gclass %d rows %d: %d ranges %d dims %d keys %d aggs",
                         iter++, (long long)ns[s], gclass, rep % 2, c.s.nranges, c.s.ndims,
                         c.s.nkeys, c.s.naggs);
                cr_expect_eq(da_check(&c, what), 0, "%s", what);
                /* no sum of these cases overflows: the same answers
                 * without the checks (PrimDenseAgg.nocheck, issue 12) */
                c.s.nocheck = 1;
                cr_expect_eq(da_check(&c, what), 0, "%s (nocheck)", what);
                da_case_free(&c);
            }
}

Test(denseagg, q11_shape_and_empty_groups) {
    /* SUM(a * b) over rows with 1 <= b <= 3 and q < 25 whose date joins */
    int64_t n = 200000;
    int32_t *a = malloc(4 * (size_t)n), *b = malloc(4 * (size_t)n), *q = malloc(4 * (size_t)n),
            *dt = malloc(4 * (size_t)n);
    int64_t map[10], want = 0, rows = 0;
    for (int k = 0; k < 10; k++)
        map[k] = k % 3 == 0 ? -1 : k;
    for (int64_t i = 0; i < n; i++) {
        a[i] = (int32_t)rnd_in(90000, 10000000);
        b[i] = (int32_t)rnd_in(0, 10);
        q[i] = (int32_t)rnd_in(1, 50);
        dt[i] = (int32_t)rnd_in(100, 109);
        if (b[i] >= 1 && b[i] <= 3 && q[i] <= 24 && map[dt[i] - 100] >= 0) {
            want += (int64_t)a[i] * b[i];
            rows++;
        }
    }
    PrimVec in[5] = {{PRIM_I32, n, a, NULL},
                     {PRIM_I32, n, b, NULL},
                     {PRIM_I32, n, q, NULL},
                     {PRIM_I32, n, dt, NULL},
                     {PRIM_I64, 10, map, NULL}};
    PrimDenseAgg s;
    memset(&s, 0, sizeof s);
    s.rows = -1;
    s.nranges = 2;
    s.range_col[0] = 1, s.range_lo[0] = 1, s.range_hi[0] = 3;
    s.range_col[1] = 2, s.range_lo[1] = INT64_MIN, s.range_hi[1] = 24;
    s.ndims = 1;
    s.dim_fk[0] = 3, s.dim_map[0] = 4, s.dim_kmin[0] = 100, s.dim_range[0] = 10;
    s.naggs = 2;
    s.agg[0] = AGG_SUM, s.val_a[0] = 0, s.val_b[0] = 1, s.val_op[0] = '*';
    s.agg[1] = AGG_MIN, s.val_a[1] = 2, s.val_b[1] = -1;
    s.ngroups = 1;
    int64_t o[5];
    PrimVec out[5];
    for (int k = 0; k < 5; k++)
        out[k] = (PrimVec){PRIM_I64, 1, &o[k], NULL};
    for (int nt = 1; nt <= 8; nt *= 2) {
        PrimCtx c = mkctx(nt);
        cr_assert_eq(prim_cpu_denseagg(&c, &s, in, n, out), 0, "%s", c.err);
        cr_expect(o[0] == rows && o[1] == want && o[2] == rows && o[3] == 1 && o[4] == rows,
                  "nt %d: rows %lld sum %lld (want %lld, %lld) min %lld", nt, (long long)o[0],
                  (long long)o[1], (long long)rows, (long long)want, (long long)o[3]);
    }
    /* no row passes: counts 0, MIN stays INT64_MAX */
    s.range_lo[0] = 50, s.range_hi[0] = 60;
    PrimCtx c = mkctx(4);
    cr_assert_eq(prim_cpu_denseagg(&c, &s, in, n, out), 0, "%s", c.err);
    cr_expect(o[0] == 0 && o[1] == 0 && o[2] == 0 && o[3] == INT64_MAX && o[4] == 0);
    free(a);
    free(b);
    free(q);
    free(dt);
}

Test(denseagg, bad_specs) {
    int32_t v[4] = {1, 2, 3, 4};
    double f[4] = {1, 2, 3, 4};
    int64_t map[4] = {0, 1, 2, 3};
    PrimVec in[3] = {{PRIM_I32, 4, v, NULL}, {PRIM_F64, 4, f, NULL}, {PRIM_I64, 4, map, NULL}};
    int64_t o[3][4];
    PrimVec out[3];
    for (int k = 0; k < 3; k++)
        out[k] = (PrimVec){PRIM_I64, 4, o[k], NULL};
    PrimDenseAgg good;
    memset(&good, 0, sizeof good);
    good.rows = -1;
    good.naggs = 1;
    good.agg[0] = AGG_SUM;
    good.val_a[0] = 0;
    good.val_b[0] = -1;
    good.ngroups = 1;
    PrimCtx c = mkctx(1);
    cr_assert_eq(prim_cpu_denseagg(&c, &good, in, 4, out), 0, "%s", c.err);
    cr_expect_eq(o[1][0], 10);
    PrimDenseAgg s;
    for (int k = 0; k < 11; k++) {
        s = good;
        switch (k) {
        case 0:
            s.nranges = PRIM_DA_MAX + 1;
            break;
        case 1:
            s.ngroups = 0;
            break;
        case 2:
            s.val_a[0] = 1; /* F64 value */
            break;
        case 3:
            s.agg[0] = AGG_AVG;
            break;
        case 4:
            s.val_b[0] = 0;
            s.val_op[0] = '/';
            break;
        case 5:
            s.nkeys = 1; /* card 3, but ngroups 1 */
            s.key_col[0] = 0, s.key_dim[0] = -1, s.key_card[0] = 3;
            break;
        case 6:
            s.ndims = 1; /* the map is not I64 */
            s.dim_fk[0] = 0, s.dim_map[0] = 0, s.dim_range[0] = 4;
            break;
        case 7:
            s.ndims = 1; /* range longer than the map */
            s.dim_fk[0] = 0, s.dim_map[0] = 2, s.dim_range[0] = 5;
            break;
        case 8:
            s.rows = 0; /* row ids must be I64 */
            break;
        case 9:
            s.val_a[0] = -1; /* SUM of nothing */
            break;
        default:
            s.naggs = -1;
            break;
        }
        c.err[0] = 0;
        cr_expect_eq(prim_cpu_denseagg(&c, &s, in, 4, out), -1, "bad spec %d accepted", k);
        cr_expect(strstr(c.err, "denseagg") != NULL, "spec %d: %s", k, c.err);
    }
    PrimVec wrong[3] = {out[0], {PRIM_I32, 4, o[1], NULL}, out[2]};
    cr_expect_eq(prim_cpu_denseagg(&c, &good, in, 4, wrong), -1, "I32 output accepted");
}
