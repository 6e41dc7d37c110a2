/*
 * test_prim_gpu.c -- every GPU twin against its CPU twin on the same random
 * input: sizes 0, 1, 255, 256, 257, 1023, 1025, 2^20 + 3 (and 20,000,000 rows
 * for map, scan and sort), every PrimType, with NULLs. Inputs are copied to
 * the device with cudaMalloc/cudaMemcpy; the GPU twins run on a non-default
 * stream with a PrimCtx whose allocator is cudaMalloc/cudaFree; results are
 * copied back and compared with prim_cpu_* (exactly, floating sums within
 * 1e-9 relative). Every test skips itself without a CUDA device, and in a
 * build without GQP_HAVE_CUDA.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "planner/planner.h"
#include "primitives/primitives.h"
#include "denseagg_cases.h"

#ifdef GQP_HAVE_CUDA
#include <cuda_runtime_api.h>

static const int64_t SIZES[] = {0, 1, 255, 256, 257, 1023, 1025, (1 << 20) + 3};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))
#define BIG_N 20000000

/* ------------------------------------------------------------ helpers -- */

static uint64_t rng_s = 0x9e3779b97f4a7c15ull;

/* Seeds the generator (deterministic runs). */
static void rng_seed(uint64_t s) {
    rng_s = s * 0x9e3779b97f4a7c15ull + 1;
}

/* Returns the next 64 random bits (xorshift64*). */
static uint64_t rnd(void) {
    rng_s ^= rng_s >> 12;
    rng_s ^= rng_s << 25;
    rng_s ^= rng_s >> 27;
    return rng_s * 0x2545f4914f6cdd1dull;
}

/* Returns a random integer in lo..hi (inclusive, hi >= lo). */
static int64_t rnd_range(int64_t lo, int64_t hi) {
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* Host allocator of the CPU twins' PrimCtx. */
static void *host_alloc(void *ud, size_t bytes) {
    (void)ud;
    return malloc(bytes ? bytes : 1);
}

/* Host free of the CPU twins' PrimCtx. */
static void host_free(void *ud, void *p) {
    (void)ud;
    free(p);
}

/* Device allocator of the GPU twins' PrimCtx: cudaMalloc, NULL on failure. */
static void *dev_alloc(void *ud, size_t bytes) {
    (void)ud;
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) return NULL;
    return p;
}

/* Device free of the GPU twins' PrimCtx (cudaFree synchronizes). */
static void dev_free(void *ud, void *p) {
    (void)ud;
    cudaFree(p);
}

/* A PrimCtx for the CPU twins. */
static PrimCtx hctx(void) {
    PrimCtx c;
    memset(&c, 0, sizeof c);
    c.nthreads = prim_ncores();
    c.alloc = host_alloc;
    c.free = host_free;
    return c;
}

/* A PrimCtx for the GPU twins on stream st. */
static PrimCtx dctx(cudaStream_t st) {
    PrimCtx c;
    memset(&c, 0, sizeof c);
    c.nthreads = 1;
    c.stream = st;
    c.alloc = dev_alloc;
    c.free = dev_free;
    return c;
}

/* Returns a new non-blocking stream (asserts on failure). */
static cudaStream_t new_stream(void) {
    cudaStream_t st;
    cr_assert_eq(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess,
                 "cudaStreamCreate");
    return st;
}

/* Waits for st and asserts that no CUDA error is pending. */
static void sync_ok(cudaStream_t st) {
    cudaError_t e = cudaStreamSynchronize(st);
    cr_assert_eq(e, cudaSuccess, "stream: %s", cudaGetErrorString(e));
}

/* Returns a device block of bytes (at least 1) holding a copy of h (if h). */
static void *to_dev(const void *h, size_t bytes) {
    void *d = NULL;
    cr_assert_eq(cudaMalloc(&d, bytes ? bytes : 1), cudaSuccess, "cudaMalloc %zu", bytes);
    if (h && bytes)
        cr_assert_eq(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice), cudaSuccess, "H2D");
    /* a copy from pageable memory may return before its DMA lands, and the
     * tests' non-blocking streams do not wait for the default stream: with
     * other GPU processes running (criterion's parallel jobs) scan,
     * segments and join read stale keys */
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess, "sync after H2D");
    return d;
}

/* Copies bytes from device d to host h. */
static void to_host(void *h, const void *d, size_t bytes) {
    if (bytes) cr_assert_eq(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost), cudaSuccess, "D2H");
}

/* A vector with a host copy (h) and a device copy (d) of the same data. */
typedef struct TVec {
    PrimVec h, d;
} TVec;

/* Fills n values of type t at data: integers in -range..range (U8:
 * 0..min(range, 255)); floats are such integers, half of them plus 0.25 or
 * 0.5 (exact in F32), zeros as -0.0 half the time. */
static void fill_values(PrimType t, void *data, int64_t n, int64_t range) {
    for (int64_t i = 0; i < n; i++) {
        switch (t) {
        case PRIM_U8:
            ((uint8_t *)data)[i] = (uint8_t)rnd_range(0, range > 255 ? 255 : range);
            break;
        case PRIM_I32:
            ((int32_t *)data)[i] = (int32_t)rnd_range(-(range > INT32_MAX ? INT32_MAX : range),
                                                      range > INT32_MAX ? INT32_MAX : range);
            break;
        case PRIM_I64:
            ((int64_t *)data)[i] = rnd_range(-range, range);
            break;
        default: {
            double v = (double)rnd_range(-range, range);
            uint64_t r = rnd();
            if (r & 1)
                v += (r & 2) ? 0.25 : 0.5;
            else if (v == 0.0 && (r & 4))
                v = -0.0;
            if (t == PRIM_F32)
                ((float *)data)[i] = (float)v;
            else
                ((double *)data)[i] = v;
            break;
        }
        }
    }
}

/* Fills n validity bytes, about one in null_every NULL (0: none). */
static void fill_valid(uint8_t *v, int64_t n, int null_every) {
    for (int64_t i = 0; i < n; i++)
        v[i] = (uint8_t)(null_every > 0 ? (rnd() % (uint64_t)null_every) != 0 : 1);
}

/* Copies the host side of v to a fresh device side. */
static void tvec_upload(TVec *v) {
    size_t w = prim_type_width(v->h.type);
    v->d = v->h;
    v->d.data = to_dev(v->h.data, (size_t)v->h.n * w);
    v->d.valid = v->h.valid ? to_dev(v->h.valid, (size_t)v->h.n) : NULL;
}

/* A random vector of n values (see fill_values), with about one NULL in
 * null_every rows when null_every > 0 (validity absent when 0), on host and
 * device. */
static TVec tvec_rand(PrimType t, int64_t n, int null_every, int64_t range) {
    TVec v;
    size_t w = prim_type_width(t);
    v.h.type = t;
    v.h.n = n;
    v.h.data = malloc((size_t)n * w + 1);
    cr_assert(v.h.data, "malloc");
    fill_values(t, v.h.data, n, range);
    v.h.valid = NULL;
    if (null_every > 0) {
        v.h.valid = malloc((size_t)n + 1);
        cr_assert(v.h.valid, "malloc");
        fill_valid(v.h.valid, n, null_every);
    }
    tvec_upload(&v);
    return v;
}

/* A zero-filled vector of n values on host and device, with validity when
 * with_valid. */
static TVec tvec_zero(PrimType t, int64_t n, int with_valid) {
    TVec v;
    size_t w = prim_type_width(t);
    v.h.type = t;
    v.h.n = n;
    v.h.data = calloc((size_t)n * w + 1, 1);
    v.h.valid = with_valid ? calloc((size_t)n + 1, 1) : NULL;
    cr_assert(v.h.data && (!with_valid || v.h.valid), "calloc");
    tvec_upload(&v);
    return v;
}

/* Copies the device side of v over its host side. */
static void tvec_fetch(TVec *v) {
    to_host(v->h.data, v->d.data, (size_t)v->h.n * prim_type_width(v->h.type));
    if (v->h.valid) to_host(v->h.valid, v->d.valid, (size_t)v->h.n);
}

/* Frees both sides of v. */
static void tvec_free(TVec *v) {
    free(v->h.data);
    free(v->h.valid);
    cudaFree(v->d.data);
    if (v->d.valid) cudaFree(v->d.valid);
}

/* Value i of x as a double (for messages and tolerant comparison). */
static double vec_f(const PrimVec *x, int64_t i) {
    switch (x->type) {
    case PRIM_U8:
        return ((const uint8_t *)x->data)[i];
    case PRIM_I32:
        return ((const int32_t *)x->data)[i];
    case PRIM_I64:
        return (double)((const int64_t *)x->data)[i];
    case PRIM_F32:
        return ((const float *)x->data)[i];
    default:
        return ((const double *)x->data)[i];
    }
}

/* 1 if value i of a and b (same type) are equal: integers exactly, floats
 * exactly (NaN equals NaN) or, with tol > 0, within tol relative. */
static int vec_val_eq(const PrimVec *a, const PrimVec *b, int64_t i, double tol) {
    switch (a->type) {
    case PRIM_U8:
        return ((const uint8_t *)a->data)[i] == ((const uint8_t *)b->data)[i];
    case PRIM_I32:
        return ((const int32_t *)a->data)[i] == ((const int32_t *)b->data)[i];
    case PRIM_I64:
        return ((const int64_t *)a->data)[i] == ((const int64_t *)b->data)[i];
    default: {
        double x = vec_f(a, i), y = vec_f(b, i);
        if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
        if (x == y) return 1;
        double m = fmax(fabs(x), fabs(y));
        return tol > 0 && fabs(x - y) <= tol * m + tol;
    }
    }
}

/* Asserts that cpu and gpu (host copies) hold the same n values: validity
 * equal where either has it (absent = all valid), values equal where valid. */
static void expect_vec_eq(const PrimVec *cpu, const PrimVec *gpu, int64_t n, double tol,
                          const char *what) {
    for (int64_t i = 0; i < n; i++) {
        int va = cpu->valid ? cpu->valid[i] != 0 : 1;
        int vb = gpu->valid ? gpu->valid[i] != 0 : 1;
        if (va != vb)
            cr_assert_fail("%s: n=%lld row %lld: validity cpu %d gpu %d", what, (long long)n,
                           (long long)i, va, vb);
        if (va && !vec_val_eq(cpu, gpu, i, tol))
            cr_assert_fail("%s: n=%lld row %lld: cpu %.17g gpu %.17g", what, (long long)n,
                           (long long)i, vec_f(cpu, i), vec_f(gpu, i));
    }
}

/* Asserts that two int64 arrays are equal. */
static void expect_i64_eq(const int64_t *cpu, const int64_t *gpu, int64_t n, const char *what) {
    for (int64_t i = 0; i < n; i++)
        if (cpu[i] != gpu[i])
            cr_assert_fail("%s: n=%lld row %lld: cpu %lld gpu %lld", what, (long long)n,
                           (long long)i, (long long)cpu[i], (long long)gpu[i]);
}

/* Copies n int64 from the device into a fresh host array. */
static int64_t *fetch_i64(const int64_t *d, int64_t n) {
    int64_t *h = malloc((size_t)n * sizeof(int64_t) + 1);
    cr_assert(h, "malloc");
    to_host(h, d, (size_t)n * sizeof(int64_t));
    return h;
}

static const PrimType ALL_TYPES[] = {PRIM_U8, PRIM_I32, PRIM_I64, PRIM_F32, PRIM_F64};

/* ---------------------------------------------------------------- map -- */

/* Five columns, one per PrimType: U8, I32, I64, F32, F64. */
#define MAP_NCOLS 5

/* P1: integer arithmetic: -(((c2 + c1) * 3) / c1 - c2 % c1). */
static const PrimInstr P1[] = {
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 0, .ival = 2},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 1, .ival = 1},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 2, .a = 0, .b = 1},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 3, .ival = 3},
    {.op = POP_MUL, .t = PRIM_REG_I, .dst = 4, .a = 2, .b = 3},
    {.op = POP_DIV, .t = PRIM_REG_I, .dst = 5, .a = 4, .b = 1},
    {.op = POP_MOD, .t = PRIM_REG_I, .dst = 6, .a = 0, .b = 1},
    {.op = POP_SUB, .t = PRIM_REG_I, .dst = 7, .a = 5, .b = 6},
    {.op = POP_NEG, .t = PRIM_REG_I, .dst = 8, .a = 7},
};

/* P2: float arithmetic: -((c4 + c3) / c0 * (c4 % c3) - c3). */
static const PrimInstr P2[] = {
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 0, .ival = 4},
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 1, .ival = 3},
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 2, .ival = 0},
    {.op = POP_ADD, .t = PRIM_REG_F, .dst = 3, .a = 0, .b = 1},
    {.op = POP_DIV, .t = PRIM_REG_F, .dst = 4, .a = 3, .b = 2},
    {.op = POP_MOD, .t = PRIM_REG_F, .dst = 5, .a = 0, .b = 1},
    {.op = POP_MUL, .t = PRIM_REG_F, .dst = 6, .a = 4, .b = 5},
    {.op = POP_SUB, .t = PRIM_REG_F, .dst = 7, .a = 6, .b = 1},
    {.op = POP_NEG, .t = PRIM_REG_F, .dst = 8, .a = 7},
};

/* P3: comparisons and three-valued AND / OR / NOT. */
static const PrimInstr P3[] = {
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 0, .ival = 2},
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 1, .ival = 4},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 2, .ival = 0},
    {.op = POP_GT, .t = PRIM_REG_I, .dst = 3, .a = 0, .b = 2},
    {.op = POP_CONST, .t = PRIM_REG_F, .dst = 4, .fval = 1.5},
    {.op = POP_LT, .t = PRIM_REG_F, .dst = 5, .a = 1, .b = 4},
    {.op = POP_AND, .t = PRIM_REG_I, .dst = 6, .a = 3, .b = 5},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 7, .ival = 0},
    {.op = POP_NOT, .t = PRIM_REG_I, .dst = 8, .a = 7},
    {.op = POP_OR, .t = PRIM_REG_I, .dst = 9, .a = 6, .b = 8},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 10, .ival = 1},
    {.op = POP_EQ, .t = PRIM_REG_I, .dst = 11, .a = 0, .b = 10},
    {.op = POP_LE, .t = PRIM_REG_I, .dst = 12, .a = 10, .b = 7},
    {.op = POP_GE, .t = PRIM_REG_F, .dst = 13, .a = 1, .b = 4},
    {.op = POP_NE, .t = PRIM_REG_I, .dst = 14, .a = 7, .b = 2},
    {.op = POP_AND, .t = PRIM_REG_I, .dst = 15, .a = 12, .b = 13},
    {.op = POP_OR, .t = PRIM_REG_I, .dst = 16, .a = 11, .b = 15},
    {.op = POP_AND, .t = PRIM_REG_I, .dst = 17, .a = 9, .b = 16},
    {.op = POP_OR, .t = PRIM_REG_I, .dst = 18, .a = 17, .b = 14},
    {.op = POP_AND, .t = PRIM_REG_F, .dst = 19, .a = 1, .b = 1},
    {.op = POP_OR, .t = PRIM_REG_I, .dst = 20, .a = 18, .b = 19},
};

/* Lookup table of P4: some entries are INT64_MIN (NULL). */
static const int64_t LOOKUP16[16] = {5,  INT64_MIN, -7, 100, 0, 42, INT64_MIN, 9,
                                     -1, 3,         77, 8,   6, 2,  INT64_MIN, 1};

/* P4: ISNULL, NOTNULL, TRUTH, F2I, I2F, CASE (I and F), LOOKUP, NULL,
 * COALESCE. */
static const PrimInstr P4[] = {
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 0, .ival = 1},
    {.op = POP_ISNULL, .t = PRIM_REG_I, .dst = 1, .a = 0},
    {.op = POP_NOTNULL, .t = PRIM_REG_I, .dst = 2, .a = 0},
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 3, .ival = 3},
    {.op = POP_TRUTH, .t = PRIM_REG_F, .dst = 4, .a = 3},
    {.op = POP_F2I, .t = PRIM_REG_I, .dst = 5, .a = 3},
    {.op = POP_I2F, .t = PRIM_REG_F, .dst = 6, .a = 0},
    {.op = POP_CASE, .t = PRIM_REG_I, .dst = 7, .a = 4, .b = 5, .c = 0},
    {.op = POP_LOOKUP, .t = PRIM_REG_I, .dst = 8, .a = 0, .table = LOOKUP16, .table_n = 16},
    {.op = POP_COALESCE, .t = PRIM_REG_I, .dst = 9, .a = 8, .b = 7},
    {.op = POP_NULL, .t = PRIM_REG_I, .dst = 10},
    {.op = POP_COALESCE, .t = PRIM_REG_I, .dst = 11, .a = 10, .b = 9},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 12, .a = 11, .b = 1},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 13, .a = 12, .b = 2},
    {.op = POP_CASE, .t = PRIM_REG_F, .dst = 14, .a = 1, .b = 6, .c = 3},
    {.op = POP_F2I, .t = PRIM_REG_I, .dst = 15, .a = 14},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 16, .a = 13, .b = 15},
};

/* P8: LOOKUP with t = F (CAST(text AS REAL) per dictionary entry): the
 * entries are doubles' bits; then F arithmetic and a CASE on the result. */
static int64_t LOOKUPF16[16];
static const PrimInstr P8[] = {
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 0, .ival = 1},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 1, .ival = 20},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 2, .a = 0, .b = 1},
    {.op = POP_LOOKUP, .t = PRIM_REG_F, .dst = 3, .a = 2, .table = LOOKUPF16, .table_n = 16},
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 4, .ival = 4},
    {.op = POP_ADD, .t = PRIM_REG_F, .dst = 5, .a = 3, .b = 4},
    {.op = POP_ISNULL, .t = PRIM_REG_F, .dst = 6, .a = 3},
    {.op = POP_CASE, .t = PRIM_REG_F, .dst = 7, .a = 6, .b = 4, .c = 5},
};

/* P5: edge cases: (INT64_MIN + 1) / -1, INT64_MIN % -1, F2I of +-1e300
 * and NaN, x / -1, float division by zero, float MOD by a negative; the
 * sums stay inside int64 (an overflow is an error: P6, P7). */
static PrimInstr P5[] = {
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 0, .ival = INT64_MIN},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 1, .ival = -1},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 2, .ival = INT64_MIN + 1},
    {.op = POP_DIV, .t = PRIM_REG_I, .dst = 3, .a = 2, .b = 1},
    {.op = POP_MOD, .t = PRIM_REG_I, .dst = 4, .a = 0, .b = 1},
    {.op = POP_CONST, .t = PRIM_REG_F, .dst = 5, .fval = 1e300},
    {.op = POP_F2I, .t = PRIM_REG_I, .dst = 6, .a = 5},
    {.op = POP_CONST, .t = PRIM_REG_F, .dst = 7, .fval = -1e300},
    {.op = POP_F2I, .t = PRIM_REG_I, .dst = 8, .a = 7},
    {.op = POP_CONST, .t = PRIM_REG_F, .dst = 9, .fval = 0.0}, /* NaN, set at run time */
    {.op = POP_F2I, .t = PRIM_REG_I, .dst = 10, .a = 9},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 11, .ival = 2},
    {.op = POP_DIV, .t = PRIM_REG_I, .dst = 12, .a = 11, .b = 1},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 13, .a = 3, .b = 4},   /* MAX */
    {.op = POP_SUB, .t = PRIM_REG_I, .dst = 14, .a = 13, .b = 6},  /* 0 */
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 15, .a = 14, .b = 8},  /* MIN */
    {.op = POP_SUB, .t = PRIM_REG_I, .dst = 16, .a = 15, .b = 8},  /* 0 */
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 17, .a = 16, .b = 10}, /* 0 */
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 18, .a = 17, .b = 12},
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 19, .ival = 4},
    {.op = POP_CONST, .t = PRIM_REG_F, .dst = 20, .fval = 0.0},
    {.op = POP_DIV, .t = PRIM_REG_F, .dst = 21, .a = 19, .b = 20},
    {.op = POP_COALESCE, .t = PRIM_REG_F, .dst = 22, .a = 21, .b = 19},
    {.op = POP_CONST, .t = PRIM_REG_F, .dst = 23, .fval = -2.5},
    {.op = POP_MOD, .t = PRIM_REG_F, .dst = 24, .a = 22, .b = 23},
    {.op = POP_F2I, .t = PRIM_REG_I, .dst = 25, .a = 24},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 26, .a = 18, .b = 25},
};

/* P6: CASE WHEN x > 500 THEN 7 ELSE (INT64_MAX - 500) + x END over the
 * I64 column (-1000..1000): the ELSE branch overflows exactly on the rows
 * where it is not taken, which is no error. P7: the THEN and ELSE swapped,
 * so the overflow is taken: an "integer overflow" error on both twins. */
static PrimInstr P6[] = {
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 0, .ival = 2},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 1, .ival = INT64_MAX - 500},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 2, .a = 1, .b = 0},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 3, .ival = 500},
    {.op = POP_GT, .t = PRIM_REG_I, .dst = 4, .a = 0, .b = 3},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 5, .ival = 7},
    {.op = POP_CASE, .t = PRIM_REG_I, .dst = 6, .a = 4, .b = 5, .c = 2},
};
static PrimInstr P7[] = {
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 0, .ival = 2},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 1, .ival = INT64_MAX - 500},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 2, .a = 1, .b = 0},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 3, .ival = 500},
    {.op = POP_GT, .t = PRIM_REG_I, .dst = 4, .a = 0, .b = 3},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 5, .ival = 7},
    {.op = POP_CASE, .t = PRIM_REG_I, .dst = 6, .a = 4, .b = 2, .c = 5},
};

#define NINSTR(p) ((int)(sizeof p / sizeof p[0]))

/* The test programs; result register = last dst, result type as given. */
static PrimProgram map_prog(int k) {
    PrimProgram p;
    memset(&p, 0, sizeof p);
    p.ninputs = MAP_NCOLS;
    switch (k) {
    case 0:
        p.code = P1, p.ninstr = NINSTR(P1), p.result_t = PRIM_REG_I;
        break;
    case 1:
        p.code = P2, p.ninstr = NINSTR(P2), p.result_t = PRIM_REG_F;
        break;
    case 2:
        p.code = P3, p.ninstr = NINSTR(P3), p.result_t = PRIM_REG_I;
        break;
    case 3:
        p.code = P4, p.ninstr = NINSTR(P4), p.result_t = PRIM_REG_I;
        break;
    case 4:
        P5[9].fval = NAN;
        p.code = P5, p.ninstr = NINSTR(P5), p.result_t = PRIM_REG_I;
        break;
    case 5:
        p.code = P6, p.ninstr = NINSTR(P6), p.result_t = PRIM_REG_I;
        break;
    case 6:
        p.code = P7, p.ninstr = NINSTR(P7), p.result_t = PRIM_REG_I;
        break;
    default:
        /* entries i: (i - 8) * 0.75, every fifth NULL */
        for (int i = 0; i < 16; i++) {
            double v = (i - 8) * 0.75;
            memcpy(&LOOKUPF16[i], &v, sizeof v);
            if (i % 5 == 2) LOOKUPF16[i] = INT64_MIN;
        }
        p.code = P8, p.ninstr = NINSTR(P8), p.result_t = PRIM_REG_F;
        break;
    }
    p.result = p.code[p.ninstr - 1].dst;
    p.nregs = p.result + 1;
    return p;
}
#define MAP_NPROGS 8

/* Makes the five input columns of n rows: U8 0..3, I32 -20..20, I64
 * -1000..1000, F32 and F64 -20..20 (with fractions and -0.0), NULLs in
 * about one row in ten. */
static void map_inputs(TVec *cols, int64_t n) {
    static const int64_t ranges[MAP_NCOLS] = {3, 20, 1000, 20, 20};
    for (int k = 0; k < MAP_NCOLS; k++)
        cols[k] = tvec_rand(ALL_TYPES[k], n, 10, ranges[k]);
}

/* Runs program prog over cols with both twins into an out of type ot (with
 * validity when with_valid, as a filter when as_filter) and compares. */
static void map_case(const PrimProgram *prog0, int as_filter, TVec *cols, int64_t n, PrimType ot,
                     int with_valid, cudaStream_t st, const char *what) {
    PrimProgram prog = *prog0;
    prog.as_filter = as_filter;
    PrimVec hin[MAP_NCOLS], din[MAP_NCOLS];
    for (int k = 0; k < MAP_NCOLS; k++) {
        hin[k] = cols[k].h;
        din[k] = cols[k].d;
    }
    TVec c = tvec_zero(ot, n, with_valid), g = tvec_zero(ot, n, with_valid);
    PrimCtx hc = hctx(), dc = dctx(st);
    int rc = prim_cpu_map(&hc, &prog, hin, n, &c.h);
    if (rc != 0 && strstr(hc.err, "integer overflow")) {
        /* the GPU twin (no ctx.status: it checks itself) must fail too */
        rc = prim_gpu_map(&dc, &prog, din, n, &g.d);
        cr_expect_eq(rc, -1, "map %s: gpu twin missed an integer overflow", what);
        cr_expect(strstr(dc.err, "integer overflow") != NULL, "map %s: %s", what, dc.err);
        tvec_free(&c);
        tvec_free(&g);
        return;
    }
    cr_assert_eq(rc, 0, "cpu map: %s", hc.err);
    rc = prim_gpu_map(&dc, &prog, din, n, &g.d);
    cr_assert_eq(rc, 0, "gpu map: %s", dc.err);
    sync_ok(st);
    tvec_fetch(&g);
    char msg[128];
    snprintf(msg, sizeof msg, "map %s out type %d valid %d filter %d", what, (int)ot, with_valid,
             as_filter);
    expect_vec_eq(&c.h, &g.h, n, 0.0, msg);
    tvec_free(&c);
    tvec_free(&g);
}

/* Runs every program, output type and validity choice over n rows. */
static void map_all(int64_t n, cudaStream_t st) {
    TVec cols[MAP_NCOLS];
    map_inputs(cols, n);
    for (int p = 0; p < MAP_NPROGS; p++) {
        PrimProgram prog = map_prog(p);
        char what[32];
        snprintf(what, sizeof what, "P%d", p + 1);
        for (int t = 0; t < 5; t++)
            for (int v = 0; v < 2; v++)
                map_case(&prog, 0, cols, n, ALL_TYPES[t], v, st, what);
        map_case(&prog, 1, cols, n, PRIM_U8, 0, st, what);
        map_case(&prog, 1, cols, n, PRIM_U8, 1, st, what);
    }
    for (int k = 0; k < MAP_NCOLS; k++)
        tvec_free(&cols[k]);
}

/* Sets of P9 (ascending, distinct): integers, doubles (in the 8-byte slots
 * POP_INLIST reads as doubles for a float operand), a short one, and a
 * 10,000-value one filled by map_inlist_sets. */
static const int64_t INSET_I[] = {-20, -7, -3, 0, 1, 2, 5, 11, 19, 500, 999};
static const double INSET_F[] = {-19.5, -3.25, -1.0, 0.0, 0.5, 2.0, 7.25, 12.0, 19.5, 20.0};
static const int64_t INSET_SHORT[] = {1, 3};
#define INSET_BIG_N 10000
static int64_t INSET_BIG[INSET_BIG_N];

/* P9: POP_INLIST over every column type, with and without the list's NULL
 * flag, under NOT, an empty set, and the sum of all of them. */
static const PrimInstr P9[] = {
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 0, .ival = 1},
    {.op = POP_INLIST, .t = PRIM_REG_I, .dst = 1, .a = 0, .table = INSET_I, .table_n = 11},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 2, .ival = 2},
    {.op = POP_INLIST,
     .t = PRIM_REG_I,
     .dst = 3,
     .a = 2,
     .ival = 1,
     .table = INSET_I,
     .table_n = 11},
    {.op = POP_NOT, .t = PRIM_REG_I, .dst = 4, .a = 3},
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 5, .ival = 3},
    {.op = POP_INLIST,
     .t = PRIM_REG_F,
     .dst = 6,
     .a = 5,
     .table = (const int64_t *)INSET_F,
     .table_n = 10},
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 7, .ival = 4},
    {.op = POP_INLIST,
     .t = PRIM_REG_F,
     .dst = 8,
     .a = 7,
     .ival = 1,
     .table = (const int64_t *)INSET_F,
     .table_n = 10},
    {.op = POP_INLIST,
     .t = PRIM_REG_I,
     .dst = 9,
     .a = 2,
     .table = INSET_BIG,
     .table_n = INSET_BIG_N},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 10, .ival = 0},
    {.op = POP_INLIST,
     .t = PRIM_REG_I,
     .dst = 11,
     .a = 10,
     .ival = 1,
     .table = INSET_SHORT,
     .table_n = 2},
    {.op = POP_INLIST, .t = PRIM_REG_I, .dst = 12, .a = 0, .ival = 0, .table = NULL, .table_n = 0},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 13, .a = 1, .b = 4},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 14, .a = 13, .b = 6},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 15, .a = 14, .b = 8},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 16, .a = 15, .b = 9},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 17, .a = 16, .b = 11},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 18, .a = 17, .b = 12},
};

/* P10: POP_RUNS (the last of ascending run starts <= a) over two integer
 * columns with NULLs: values below the first start are NULL; a short
 * table, one start below every value, 2,000 starts (RUNS_BIG, filled by
 * map_inlist_sets), no starts (always NULL), and their sum. */
static const int64_t RUNS_SMALL[] = {-5, -4, 0, 3, 4, 17};
static const int64_t RUNS_ONE[] = {-1000000};
#define RUNS_BIG_N 2000
static int64_t RUNS_BIG[RUNS_BIG_N];
static const PrimInstr P10[] = {
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 0, .ival = 1},
    {.op = POP_RUNS, .t = PRIM_REG_I, .dst = 1, .a = 0, .table = RUNS_SMALL, .table_n = 6},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 2, .ival = 2},
    {.op = POP_RUNS, .t = PRIM_REG_I, .dst = 3, .a = 2, .table = RUNS_ONE, .table_n = 1},
    {.op = POP_RUNS, .t = PRIM_REG_I, .dst = 4, .a = 2, .table = RUNS_BIG, .table_n = RUNS_BIG_N},
    {.op = POP_RUNS, .t = PRIM_REG_I, .dst = 5, .a = 0, .table = NULL, .table_n = 0},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 6, .a = 1, .b = 3},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 7, .a = 6, .b = 4},
};

/* Fills INSET_BIG: every third integer from -15000 (the I64 column holds
 * -1000..1000, so about a third of its rows match). */
static void map_inlist_sets(void) {
    for (int k = 0; k < INSET_BIG_N; k++)
        INSET_BIG[k] = -15000 + 3 * (int64_t)k;
    for (int k = 0; k < RUNS_BIG_N; k++)
        RUNS_BIG[k] = -600 + (int64_t)k + (int64_t)k * k / 3000;
}

#endif /* GQP_HAVE_CUDA */

/* Skips the calling test without a usable device or without CUDA. */
#define GPU_TEST_PRELUDE()                                                                         \
    do {                                                                                           \
        if (!prim_gpu_available()) cr_skip_test("no CUDA device");                                 \
    } while (0)

/* The body of a GPU test: dropped (the test skips) without CUDA. */
#ifdef GQP_HAVE_CUDA
#define GPU_BODY(...) __VA_ARGS__
#else
#define GPU_BODY(...) cr_skip_test("built without CUDA")
#endif

Test(prim_gpu, map_sizes) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(1);
        cudaStream_t st = new_stream();
        for (int s = 0; s < NSIZES; s++)
            map_all(SIZES[s], st);
        cudaStreamDestroy(st);
    });
}

#ifdef GQP_HAVE_CUDA
/* Program code (ninstr instructions over nregs registers) with each of
 * results[0..nres) as its result, over the random columns of every size,
 * on both twins: an I64 output with validity, an I32 one (with_i32), and
 * as a filter. */
static void map_program_cases(const PrimInstr *code, int ninstr, int nregs, const int *results,
                              size_t nres, const char *name, int with_i32) {
    cudaStream_t st = new_stream();
    for (int s = 0; s < NSIZES; s++) {
        TVec cols[MAP_NCOLS];
        map_inputs(cols, SIZES[s]);
        for (size_t r = 0; r < nres; r++) {
            PrimProgram p;
            memset(&p, 0, sizeof p);
            p.code = code;
            p.ninstr = ninstr;
            p.ninputs = MAP_NCOLS;
            p.nregs = nregs;
            p.result = results[r];
            p.result_t = PRIM_REG_I;
            char what[32];
            snprintf(what, sizeof what, "%s r%d", name, results[r]);
            map_case(&p, 0, cols, SIZES[s], PRIM_I64, 1, st, what);
            if (with_i32) map_case(&p, 0, cols, SIZES[s], PRIM_I32, 0, st, what);
            map_case(&p, 1, cols, SIZES[s], PRIM_U8, 0, st, what);
        }
        for (int k = 0; k < MAP_NCOLS; k++)
            tvec_free(&cols[k]);
    }
    cudaStreamDestroy(st);
}
#endif

/* PMATHS: SQRT and fmod (MOD()), the two math instructions the GPU twin runs
 * (both exact in IEEE arithmetic, so equal to the CPU twin's bits): over
 * F64 values -20..20 with -0.0 and NULLs, integer divisors -1000..1000
 * with zeros, NULL outside the domain. */
#ifdef GQP_HAVE_CUDA
static const PrimInstr PMATHS[] = {
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 0, .ival = 4},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 1, .ival = 2},
    {.op = POP_I2F, .t = PRIM_REG_F, .dst = 2, .a = 1},
    {.op = POP_POW, .t = PRIM_REG_F, .dst = 3, .a = 0, .b = 2, .ival = 1},
    {.op = POP_POW, .t = PRIM_REG_F, .dst = 4, .a = 2, .b = 0, .ival = 1},
    {.op = POP_MATH, .t = PRIM_REG_F, .dst = 5, .a = 0, .ival = PMATH_SQRT},
    {.op = POP_MATH, .t = PRIM_REG_F, .dst = 6, .a = 2, .ival = PMATH_SQRT},
    {.op = POP_ADD, .t = PRIM_REG_F, .dst = 7, .a = 5, .b = 3},
};

/* PMATHS's F results through both twins, at every size. */
static void map_math_cases(void) {
    cudaStream_t st = new_stream();
    static const int results[] = {3, 4, 5, 6, 7};
    for (int s = 0; s < NSIZES; s++) {
        TVec cols[MAP_NCOLS];
        map_inputs(cols, SIZES[s]);
        for (size_t r = 0; r < sizeof results / sizeof results[0]; r++) {
            PrimProgram p;
            memset(&p, 0, sizeof p);
            p.code = PMATHS;
            p.ninstr = NINSTR(PMATHS);
            p.ninputs = MAP_NCOLS;
            p.nregs = 8;
            p.result = results[r];
            p.result_t = PRIM_REG_F;
            cr_assert(!prim_prog_cpu_only(&p), "SQRT / fmod must run on the GPU");
            char what[32];
            snprintf(what, sizeof what, "PMATHS r%d", results[r]);
            map_case(&p, 0, cols, SIZES[s], PRIM_F64, 1, st, what);
            map_case(&p, 1, cols, SIZES[s], PRIM_U8, 0, st, what);
        }
        for (int k = 0; k < MAP_NCOLS; k++)
            tvec_free(&cols[k]);
    }
    cudaStreamDestroy(st);
}
#endif

Test(prim_gpu, map_sqrt_fmod_match_cpu) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(10);
        map_math_cases();
    });
}

Test(prim_gpu, map_inlist_matches_cpu) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(6);
        map_inlist_sets();
        static const int results[] = {1, 3, 4, 6, 8, 9, 11, 12, 18};
        map_program_cases(P9, NINSTR(P9), 19, results, sizeof results / sizeof results[0], "P9", 1);
    });
}

Test(prim_gpu, map_runs_matches_cpu) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(7);
        map_inlist_sets();
        static const int results[] = {1, 3, 4, 5, 7};
        map_program_cases(P10, NINSTR(P10), 8, results, sizeof results / sizeof results[0], "P10",
                          0);
    });
}

/* P11: COL / CONST / comparison triples the GPU twin fuses into one
 * instruction (device.cu's map_fuse) beside ones it must not: the constant
 * on the left, the comparison writing the column's register, a column
 * register read again later (not fused), every input type (F32 read as an
 * integer saturates), a NaN constant, NULLs from the columns. */
static const PrimInstr P11[] = {
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 0, .ival = 1},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 1, .ival = 3},
    {.op = POP_GT, .t = PRIM_REG_I, .dst = 2, .a = 0, .b = 1},
    {.op = POP_CONST, .t = PRIM_REG_F, .dst = 3, .fval = 1.5},
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 4, .ival = 4},
    {.op = POP_LE, .t = PRIM_REG_F, .dst = 5, .a = 3, .b = 4},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 6, .ival = 2},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 7, .ival = 0},
    {.op = POP_NE, .t = PRIM_REG_I, .dst = 6, .a = 6, .b = 7},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 9, .ival = 0},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 10, .ival = 2},
    {.op = POP_EQ, .t = PRIM_REG_I, .dst = 11, .a = 10, .b = 9},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 12, .a = 9, .b = 11},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 13, .ival = 3},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 14, .ival = -5},
    {.op = POP_LT, .t = PRIM_REG_I, .dst = 15, .a = 13, .b = 14},
    {.op = POP_COL, .t = PRIM_REG_F, .dst = 16, .ival = 4},
    {.op = POP_CONST, .t = PRIM_REG_F, .dst = 17, .fval = NAN},
    {.op = POP_NE, .t = PRIM_REG_F, .dst = 18, .a = 17, .b = 16},
    {.op = POP_AND, .t = PRIM_REG_I, .dst = 19, .a = 2, .b = 5},
    {.op = POP_OR, .t = PRIM_REG_I, .dst = 20, .a = 19, .b = 6},
    {.op = POP_AND, .t = PRIM_REG_I, .dst = 21, .a = 20, .b = 15},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 22, .a = 21, .b = 18},
    {.op = POP_ADD, .t = PRIM_REG_I, .dst = 23, .a = 22, .b = 12},
};

Test(prim_gpu, map_fused_compares_match_cpu) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(8);
        /* the first 12 instructions (no integer arithmetic: the kernel
         * without overflow tracking, register 9 not read again), then all */
        static const int head[] = {2, 5, 6, 11};
        map_program_cases(P11, 12, 12, head, sizeof head / sizeof head[0], "P11/12", 1);
        static const int all[] = {2, 5, 6, 11, 12, 15, 18, 19, 20, 21, 22, 23};
        map_program_cases(P11, NINSTR(P11), 24, all, sizeof all / sizeof all[0], "P11", 1);
    });
}

/* Random text from pieces that exercise LIKE: letters of both cases,
 * the pattern's own '%' and '_' as text, 2- and 3-byte UTF-8, a lone lead
 * byte and a lone continuation byte. */
static const char *const LIKE_PIECES[] = {"a",    "B",        "c",  "s",        "p",
                                          "E",    "ci",       "al", "\xc3\xa9", "%",
                                          "_",    " ",        "x",  "req",      "\xe2\x82\xac",
                                          "\xc3", "\x80\x80", "A"};
#define LIKE_NPIECES ((int)(sizeof LIKE_PIECES / sizeof *LIKE_PIECES))

static void like_text(char *buf, size_t cap, int maxp, int wild) {
    size_t len = 0;
    int np = (int)rnd_range(0, maxp);
    buf[0] = 0;
    for (int k = 0; k < np; k++) {
        const char *pc =
            wild && rnd() % 3 == 0 ? (rnd() % 2 ? "%" : "_") : LIKE_PIECES[rnd() % LIKE_NPIECES];
        size_t m = strlen(pc);
        if (len + m + 1 > cap) break;
        memcpy(buf + len, pc, m + 1);
        len += m;
    }
}

Test(prim_gpu, likedict_matches_cpu) {
    /* LIKE over a dictionary on the GPU (DN_DICTLIKE) against the CPU's
     * matcher, entry by entry, for fixed and random patterns; then a map
     * reading the table through POP_LOOKUPV against its CPU twin */
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(21);
        enum { N = 30000 };
        char(*text)[96] = malloc(sizeof *text * N);
        const char **strs = malloc(sizeof *strs * N);
        size_t *lens = malloc(sizeof *lens * N);
        int32_t *codes = malloc(sizeof *codes * N);
        cr_assert(text && strs && lens && codes);
        for (int i = 0; i < N; i++) {
            like_text(text[i], sizeof text[i], 14, 0);
            strs[i] = text[i];
            lens[i] = strlen(text[i]);
        }
        CatDict *d = cat_dict_build(strs, lens, N, codes);
        cr_assert(d);
        cudaStream_t st = new_stream();
        char *dbytes = to_dev(d->bytes, (size_t)d->offsets[d->n]);
        int64_t *doffs = to_dev(d->offsets, sizeof(int64_t) * (size_t)(d->n + 1));
        uint8_t *dout = to_dev(NULL, (size_t)d->n);
        uint8_t *got = malloc((size_t)d->n), *want = malloc((size_t)d->n);
        cr_assert(got && want);
        static const char *const fixed[] = {
            "",           "%",          "_",      "__",      "%_%",
            "a%",         "%a",         "%A%",    "%s%req%", "a_c%",
            "%\xc3\xa9%", "_\xc3\xa9%", "%_",     "%%a",     "%\xe2\x82\xac_",
            "%c_",        "\xc3%",      "%\x80%", "_%_%_",   "%al%ci%"};
        char pat[64];
        for (int k = 0; k < 220; k++) {
            if (k < (int)(sizeof fixed / sizeof *fixed))
                snprintf(pat, sizeof pat, "%s", fixed[k]);
            else
                like_text(pat, sizeof pat, 6, 1);
            int neg = k % 2;
            PrimCtx dc = dctx(st);
            cr_assert_eq(prim_gpu_likedict(&dc, dbytes, doffs, d->n, pat, neg, dout), 0, "%s",
                         dc.err);
            sync_ok(st);
            to_host(got, dout, (size_t)d->n);
            plan_like_bytes(d, pat, neg, want);
            int64_t bad = 0;
            for (int64_t i = 0; i < d->n; i++) {
                int ref = plan_like_match(cat_dict_str(d, i), pat) ^ neg;
                if (got[i] != ref || want[i] != ref) {
                    if (bad++ < 3)
                        cr_expect(0, "pattern '%s' neg %d entry '%s': gpu %d cpu %d match %d", pat,
                                  neg, cat_dict_str(d, i), got[i], want[i], ref);
                }
            }
            cr_expect_eq(bad, 0, "pattern '%s': %lld entries differ", pat, (long long)bad);
        }
        /* POP_LOOKUPV on both twins over the last table, codes with NULLs */
        PrimCtx dc = dctx(st);
        cr_assert_eq(prim_gpu_likedict(&dc, dbytes, doffs, d->n, "%a%", 0, dout), 0, "%s", dc.err);
        sync_ok(st);
        plan_like_bytes(d, "%a%", 0, want);
        TVec c = tvec_rand(PRIM_I32, N, 7, d->n + 2);
        PrimVec hin[2] = {c.h, {PRIM_U8, d->n, want, NULL}};
        PrimVec din[2] = {c.d, {PRIM_U8, d->n, dout, NULL}};
        PrimInstr code[2];
        memset(code, 0, sizeof code);
        code[0].op = POP_COL;
        code[1].op = POP_LOOKUPV;
        code[1].dst = 1;
        code[1].ival = 1;
        PrimProgram p = {2, code, 2, 1, PRIM_REG_I, 2, 0, 0};
        for (int f = 0; f < 2; f++) {
            p.as_filter = f;
            PrimType ot = f ? PRIM_U8 : PRIM_I64;
            TVec hc_out = tvec_zero(ot, N, !f), gc_out = tvec_zero(ot, N, !f);
            PrimCtx hc = hctx();
            cr_assert_eq(prim_cpu_map(&hc, &p, hin, N, &hc_out.h), 0, "%s", hc.err);
            cr_assert_eq(prim_gpu_map(&dc, &p, din, N, &gc_out.d), 0, "%s", dc.err);
            sync_ok(st);
            tvec_fetch(&gc_out);
            expect_vec_eq(&hc_out.h, &gc_out.h, N, 0.0, f ? "lookupv filter" : "lookupv value");
            tvec_free(&hc_out);
            tvec_free(&gc_out);
        }
        tvec_free(&c);
        cudaFree(dbytes);
        cudaFree(doffs);
        cudaFree(dout);
        cudaStreamDestroy(st);
        cat_dict_free(d);
        free(got);
        free(want);
        free(text);
        free(strs);
        free(lens);
        free(codes);
    });
}

Test(prim_gpu, map_big, .timeout = 600) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(2);
        cudaStream_t st = new_stream();
        TVec cols[MAP_NCOLS];
        map_inputs(cols, BIG_N);
        PrimProgram p1 = map_prog(0), p3 = map_prog(2);
        map_case(&p1, 0, cols, BIG_N, PRIM_I64, 1, st, "P1 big");
        map_case(&p3, 1, cols, BIG_N, PRIM_U8, 0, st, "P3 big");
        for (int k = 0; k < MAP_NCOLS; k++)
            tvec_free(&cols[k]);
        cudaStreamDestroy(st);
    });
}

#ifdef GQP_HAVE_CUDA
/* --------------------------------------------------------------- scan -- */

/* Scans a random U8 / I32 / I64 vector of n values with both twins. */
static void scan_case(PrimType t, int64_t n, int64_t range, cudaStream_t st) {
    TVec in = tvec_rand(t, n, 0, range);
    int64_t *hc_out = malloc((size_t)n * 8 + 8);
    int64_t *d_out = to_dev(NULL, (size_t)n * 8);
    int64_t tc = -1, tg = -2;
    PrimCtx hc = hctx(), dc = dctx(st);
    cr_assert_eq(prim_cpu_scan(&hc, &in.h, n, hc_out, &tc), 0, "cpu scan: %s", hc.err);
    cr_assert_eq(prim_gpu_scan(&dc, &in.d, n, d_out, &tg), 0, "gpu scan: %s", dc.err);
    sync_ok(st);
    int64_t *g = fetch_i64(d_out, n);
    cr_assert_eq(tc, tg, "scan type %d n=%lld: total cpu %lld gpu %lld", (int)t, (long long)n,
                 (long long)tc, (long long)tg);
    expect_i64_eq(hc_out, g, n, "scan");
    free(g);
    free(hc_out);
    cudaFree(d_out);
    tvec_free(&in);
}
#endif

Test(prim_gpu, scan) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(3);
        cudaStream_t st = new_stream();
        for (int s = 0; s < NSIZES; s++) {
            scan_case(PRIM_U8, SIZES[s], 255, st);
            scan_case(PRIM_I32, SIZES[s], INT32_MAX, st);
            scan_case(PRIM_I64, SIZES[s], INT64_MAX / 4, st);
        }
        scan_case(PRIM_U8, BIG_N, 1, st);
        scan_case(PRIM_I32, BIG_N, 1000, st);
        scan_case(PRIM_I64, BIG_N, 1000000000, st);
        cudaStreamDestroy(st);
    });
}

#ifdef GQP_HAVE_CUDA
/* ------------------------------------------------------ scatter/gather -- */

/* Scatters n rows (src of type t, or row ids when t < 0) through a random
 * injective idx into a dst of n + 7 rows (flags on every third call),
 * both twins from the same initial dst, and compares all of dst. */
static void scatter_case(int t, int64_t n, int nullable, int dst_valid, int use_flags,
                         cudaStream_t st) {
    PrimType dt = t < 0 ? PRIM_I64 : (PrimType)t;
    int64_t m = n + 7;
    TVec src;
    memset(&src, 0, sizeof src);
    if (t >= 0) src = tvec_rand(dt, n, nullable ? 5 : 0, 100);
    /* idx: the first n entries of a random permutation of 0..m-1. */
    int64_t *perm = malloc((size_t)m * 8);
    for (int64_t i = 0; i < m; i++)
        perm[i] = i;
    for (int64_t i = m - 1; i > 0; i--) {
        int64_t j = rnd_range(0, i), x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    int64_t *d_idx = to_dev(perm, (size_t)n * 8);
    uint8_t *flags = NULL, *d_flags = NULL;
    if (use_flags) {
        flags = malloc((size_t)n + 1);
        fill_valid(flags, n, 3);
        d_flags = to_dev(flags, (size_t)n);
    }
    /* Same initial dst for both twins. */
    TVec c = tvec_rand(dt, m, dst_valid ? 2 : 0, 50);
    TVec g;
    g.h = c.h;
    tvec_upload(&g);
    g.h.data = malloc((size_t)m * prim_type_width(dt) + 1);
    g.h.valid = dst_valid ? malloc((size_t)m + 1) : NULL;
    PrimCtx hc = hctx(), dc = dctx(st);
    cr_assert_eq(prim_cpu_scatter(&hc, t >= 0 ? &src.h : NULL, flags, perm, n, &c.h), 0,
                 "cpu scatter: %s", hc.err);
    cr_assert_eq(prim_gpu_scatter(&dc, t >= 0 ? &src.d : NULL, d_flags, d_idx, n, &g.d), 0,
                 "gpu scatter: %s", dc.err);
    sync_ok(st);
    tvec_fetch(&g);
    char msg[96];
    snprintf(msg, sizeof msg, "scatter type %d nullable %d dst_valid %d flags %d", t, nullable,
             dst_valid, use_flags);
    expect_vec_eq(&c.h, &g.h, m, 0.0, msg);
    tvec_free(&c);
    tvec_free(&g);
    if (t >= 0) tvec_free(&src);
    free(perm);
    free(flags);
    cudaFree(d_idx);
    if (d_flags) cudaFree(d_flags);
}

/* Gathers n rows from a random src of n + 3 rows of type t through random
 * indices (some -1 when dst has validity) and compares. */
static void gather_case(PrimType t, int64_t n, int nullable, int dst_valid, cudaStream_t st) {
    int64_t m = n + 3;
    TVec src = tvec_rand(t, m, nullable ? 5 : 0, 100);
    int64_t *idx = malloc((size_t)n * 8 + 8);
    for (int64_t i = 0; i < n; i++)
        idx[i] = (dst_valid && rnd() % 7 == 0) ? -1 : rnd_range(0, m - 1);
    int64_t *d_idx = to_dev(idx, (size_t)n * 8);
    TVec c = tvec_zero(t, n, dst_valid), g = tvec_zero(t, n, dst_valid);
    PrimCtx hc = hctx(), dc = dctx(st);
    cr_assert_eq(prim_cpu_gather(&hc, &src.h, idx, n, &c.h), 0, "cpu gather: %s", hc.err);
    cr_assert_eq(prim_gpu_gather(&dc, &src.d, d_idx, n, &g.d), 0, "gpu gather: %s", dc.err);
    sync_ok(st);
    tvec_fetch(&g);
    char msg[96];
    snprintf(msg, sizeof msg, "gather type %d nullable %d dst_valid %d", (int)t, nullable,
             dst_valid);
    expect_vec_eq(&c.h, &g.h, n, 0.0, msg);
    tvec_free(&c);
    tvec_free(&g);
    tvec_free(&src);
    free(idx);
    cudaFree(d_idx);
}
#endif

Test(prim_gpu, scatter) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(4);
        cudaStream_t st = new_stream();
        for (int s = 0; s < NSIZES; s++) {
            for (int t = 0; t < 5; t++)
                for (int v = 0; v < 4; v++)
                    scatter_case(t, SIZES[s], v & 1, (v >> 1) & 1, (s + t + v) % 3 == 0, st);
            scatter_case(-1, SIZES[s], 0, 0, 0, st);
            scatter_case(-1, SIZES[s], 0, 1, 1, st);
        }
        cudaStreamDestroy(st);
    });
}

Test(prim_gpu, gather) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(5);
        cudaStream_t st = new_stream();
        for (int s = 0; s < NSIZES; s++)
            for (int t = 0; t < 5; t++)
                for (int v = 0; v < 4; v++)
                    gather_case(ALL_TYPES[t], SIZES[s], v & 1, (v >> 1) & 1, st);
        cudaStreamDestroy(st);
    });
}

#ifdef GQP_HAVE_CUDA
/* --------------------------------------------------------------- sort -- */

/* The CPU twin's permutation cperm (host, n values) equals the GPU twin's
 * d_perm (device); then both and the nkeys key vectors are freed. */
static void perm_check_free(int64_t *cperm, int64_t *d_perm, int64_t n, const char *msg, TVec *keys,
                            int nkeys) {
    int64_t *g = fetch_i64(d_perm, n);
    expect_i64_eq(cperm, g, n, msg);
    free(g);
    free(cperm);
    cudaFree(d_perm);
    for (int k = 0; k < nkeys; k++)
        tvec_free(&keys[k]);
}

/* Sorts n rows by nkeys random keys of the given types (nullable, desc per
 * key; small ranges for many ties) with both twins and compares the
 * permutations (stable, so unique). */
static void sort_case(int64_t n, int nkeys, const PrimType *types, const int *nullable,
                      const uint8_t *desc, cudaStream_t st) {
    TVec keys[4];
    PrimVec hk[4], dk[4];
    int64_t range = n / 8 > 4 ? n / 8 : 4;
    for (int k = 0; k < nkeys; k++) {
        keys[k] = tvec_rand(types[k], n, nullable[k] ? 6 : 0, range);
        hk[k] = keys[k].h;
        dk[k] = keys[k].d;
    }
    int64_t *cperm = malloc((size_t)n * 8 + 8);
    int64_t *d_perm = to_dev(NULL, (size_t)n * 8);
    PrimCtx hc = hctx(), dc = dctx(st);
    cr_assert_eq(prim_cpu_sort(&hc, hk, desc, nkeys, n, cperm), 0, "cpu sort: %s", hc.err);
    cr_assert_eq(prim_gpu_sort(&dc, dk, desc, nkeys, n, d_perm), 0, "gpu sort: %s", dc.err);
    sync_ok(st);
    char msg[128];
    snprintf(msg, sizeof msg, "sort nkeys %d types %d/%d/%d nullable %d desc %d", nkeys,
             (int)types[0], nkeys > 1 ? (int)types[1] : -1, nkeys > 2 ? (int)types[2] : -1,
             nullable[0], desc[0]);
    perm_check_free(cperm, d_perm, n, msg, keys, nkeys);
}
#endif

Test(prim_gpu, sort_one_key) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(6);
        cudaStream_t st = new_stream();
        for (int s = 0; s < NSIZES; s++)
            for (int t = 0; t < 5; t++)
                for (int v = 0; v < 4; v++) {
                    int nullable[1] = {v & 1};
                    uint8_t desc[1] = {(uint8_t)((v >> 1) & 1)};
                    sort_case(SIZES[s], 1, &ALL_TYPES[t], nullable, desc, st);
                }
        cudaStreamDestroy(st);
    });
}

Test(prim_gpu, sort_multi_key) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(7);
        cudaStream_t st = new_stream();
        for (int s = 0; s < NSIZES; s++)
            for (int rep = 0; rep < 8; rep++) {
                int nkeys = 2 + rep % 2;
                PrimType types[3];
                int nullable[3];
                uint8_t desc[3];
                for (int k = 0; k < nkeys; k++) {
                    types[k] = ALL_TYPES[rnd() % 5];
                    nullable[k] = (int)(rnd() & 1);
                    desc[k] = (uint8_t)(rnd() & 1);
                }
                sort_case(SIZES[s], nkeys, types, nullable, desc, st);
            }
        /* nkeys == 0: the identity. */
        sort_case(1025, 0, ALL_TYPES, (const int[]){0}, (const uint8_t[]){0}, st);
        cudaStreamDestroy(st);
    });
}

/* The one-block sort (up to 1024 rows, 4 keys; GQP_SORT_SMALL=1, this
 * test's own process) at its edges: sizes about a warp and the limit, 4
 * keys of every type with ties, NULLs and mixed directions, against the
 * CPU twin. */
Test(prim_gpu, sort_small) {
    GPU_TEST_PRELUDE();
    setenv("GQP_SORT_SMALL", "1", 1);
    GPU_BODY({
        rng_seed(10);
        cudaStream_t st = new_stream();
        const int64_t ns[] = {2, 3, 31, 32, 33, 512, 1000, 1024};
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
            for (int rep = 0; rep < 6; rep++) {
                PrimType types[4];
                int nullable[4];
                uint8_t desc[4];
                for (int k = 0; k < 4; k++) {
                    types[k] = ALL_TYPES[(rep + k) % 5];
                    nullable[k] = (rep + k) % 3 == 0;
                    desc[k] = (uint8_t)((rep >> (k & 1)) & 1);
                }
                sort_case(ns[a], 1 + rep % 4, types, nullable, desc, st);
            }
        cudaStreamDestroy(st);
    });
}

#ifdef GQP_HAVE_CUDA
/* ORDER BY ... LIMIT / OFFSET: prim_gpu_sort_range against the CPU twin
 * (prim_cpu_sort_range: the radix select) over rows [offset, offset +
 * limit) of n rows. */
static void sort_range_case(int64_t n, const PrimType *types, int nkeys, int nullable,
                            uint8_t desc0, int64_t offset, int64_t limit, int64_t range0,
                            cudaStream_t st) {
    TVec keys[3];
    PrimVec hk[3], dk[3];
    uint8_t desc[3] = {desc0, 0, 1};
    for (int k = 0; k < nkeys; k++) {
        keys[k] = tvec_rand(types[k], n, nullable ? 6 : 0, k == 0 ? range0 : 5);
        hk[k] = keys[k].h;
        dk[k] = keys[k].d;
    }
    int64_t cnt = prim_range_rows(n, offset, limit), hn = -1, dn = -1;
    int64_t *cperm = malloc((size_t)cnt * 8 + 8);
    int64_t *d_perm = to_dev(NULL, (size_t)cnt * 8 + 8);
    PrimCtx hc = hctx(), dc = dctx(st);
    cr_assert_eq(prim_cpu_sort_range(&hc, hk, desc, nkeys, n, offset, limit, cperm, &hn), 0,
                 "cpu sort range: %s", hc.err);
    cr_assert_eq(prim_gpu_sort_range(&dc, dk, desc, nkeys, n, offset, limit, d_perm, &dn), 0,
                 "gpu sort range: %s", dc.err);
    sync_ok(st);
    cr_assert_eq(hn, cnt);
    cr_assert_eq(dn, cnt);
    char msg[128];
    snprintf(msg, sizeof msg,
             "sort range n %lld [%lld, +%lld) type %d range %lld nkeys %d nullable %d desc %d",
             (long long)n, (long long)offset, (long long)limit, (int)types[0], (long long)range0,
             nkeys, nullable, desc0);
    perm_check_free(cperm, d_perm, cnt, msg, keys, nkeys);
}

/* The ranges of one size: the first 10, the median row, a middle slice,
 * the last 5 (to the end), each first key over range0 values. */
static void sort_range_sizes(const int64_t *ns, size_t nn, const int64_t *ranges, size_t nr) {
    cudaStream_t st = new_stream();
    for (size_t a = 0; a < nn; a++)
        for (size_t r = 0; r < nr; r++)
            for (int t = 0; t < 5; t++)
                for (int v = 0; v < 4; v++) {
                    int64_t n = ns[a], rg = ranges[r] ? ranges[r] : (n > 4 ? n : 5);
                    PrimType types[2] = {ALL_TYPES[t], ALL_TYPES[(t + 2) % 5]};
                    sort_range_case(n, types, 1 + (v & 1), v >> 1, (uint8_t)(v & 1), 0, 10, rg, st);
                    sort_range_case(n, types, 1 + (v & 1), v >> 1, (uint8_t)(v >> 1), n / 2, 1, rg,
                                    st);
                    sort_range_case(n, types, 2, v & 1, 1, n / 3, n / 5, rg, st);
                    sort_range_case(n, types, 1, 1, 0, n > 5 ? n - 5 : 0, -1, rg, st);
                }
    cudaStreamDestroy(st);
}
#endif

/* Under GQP_TOPK's default: small inputs sort every row; from 2^20 rows
 * the radix select runs (distinct-ish, tie-heavy and wide first keys). */
Test(prim_gpu, sort_range, .timeout = 600) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(8);
        const int64_t ns[] = {0, 1, 300, 100000};
        sort_range_sizes(ns, 4, (const int64_t[]){0}, 1);
        const int64_t big[] = {(1 << 20) + 7};
        sort_range_sizes(big, 1, (const int64_t[]){0, 3, (int64_t)1 << 40}, 3);
    });
}

/* GQP_TOPK=force: the radix select at every size and range (this test's
 * own process: Criterion forks one per test). */
Test(prim_gpu, sort_range_forced, .timeout = 600) {
    GPU_TEST_PRELUDE();
    setenv("GQP_TOPK", "force", 1);
    GPU_BODY({
        rng_seed(9);
        const int64_t ns[] = {1, 2, 300, 5000, 100000};
        sort_range_sizes(ns, 5, (const int64_t[]){0, 1, 4, (int64_t)1 << 40}, 4);
    });
}

Test(prim_gpu, sort_big, .timeout = 900) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(8);
        cudaStream_t st = new_stream();
        {
            PrimType t[1] = {PRIM_I64};
            int nl[1] = {1};
            uint8_t d[1] = {1};
            sort_case(BIG_N, 1, t, nl, d, st);
        }
        {
            PrimType t[2] = {PRIM_I32, PRIM_F64};
            int nl[2] = {0, 1};
            uint8_t d[2] = {0, 1};
            sort_case(BIG_N, 2, t, nl, d, st);
        }
        cudaStreamDestroy(st);
    });
}

#ifdef GQP_HAVE_CUDA
/* ------------------------------------------------ segments / segreduce -- */

/* A key of n rows of type t made of runs: a NULL run first when nullable
 * (as sorted ascending input has), then values that step up at random rows
 * (about one step in every run_len rows). */
static TVec run_key(PrimType t, int64_t n, int nullable, int run_len) {
    TVec v = tvec_zero(t, n, nullable);
    int64_t nulls = nullable ? rnd_range(0, n / 4 + 1) : 0;
    double x = t == PRIM_U8 ? 0 : -50;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0 && rnd() % (uint64_t)run_len == 0)
            x += t == PRIM_U8 ? 1 : (double)rnd_range(1, 3) * 0.5;
        if (t == PRIM_U8 && x > 255) x = 255;
        switch (t) {
        case PRIM_U8:
            ((uint8_t *)v.h.data)[i] = (uint8_t)x;
            break;
        case PRIM_I32:
            ((int32_t *)v.h.data)[i] = (int32_t)(x * 2);
            break;
        case PRIM_I64:
            ((int64_t *)v.h.data)[i] = (int64_t)(x * 2);
            break;
        case PRIM_F32:
            ((float *)v.h.data)[i] = (float)x;
            break;
        default:
            ((double *)v.h.data)[i] = x == 0.0 && (rnd() & 1) ? -0.0 : x;
            break;
        }
        if (nullable) v.h.valid[i] = i >= nulls;
    }
    /* Garbage under the NULLs must not split them. */
    for (int64_t i = 0; i < nulls && i < n; i++)
        fill_values(t, (char *)v.h.data + (size_t)i * prim_type_width(t), 1, 9);
    cudaFree(v.d.data);
    if (v.d.valid) cudaFree(v.d.valid);
    tvec_upload(&v);
    return v;
}

/* Segments of n rows over nkeys run keys with both twins; compares and
 * returns the CPU starts (host, caller frees) and their count. */
static int64_t *segments_case(int64_t n, int nkeys, const PrimType *types, int nullable,
                              int run_len, cudaStream_t st, int64_t *nseg_out) {
    TVec keys[3];
    PrimVec hk[3], dk[3];
    for (int k = 0; k < nkeys; k++) {
        keys[k] = run_key(types[k], n, nullable, run_len);
        hk[k] = keys[k].h;
        dk[k] = keys[k].d;
    }
    int64_t *cs = malloc((size_t)n * 8 + 8);
    int64_t *d_s = to_dev(NULL, (size_t)n * 8);
    int64_t nc = -1, ng = -2;
    PrimCtx hc = hctx(), dc = dctx(st);
    cr_assert_eq(prim_cpu_segments(&hc, hk, nkeys, n, cs, &nc), 0, "cpu segments: %s", hc.err);
    cr_assert_eq(prim_gpu_segments(&dc, dk, nkeys, n, d_s, &ng), 0, "gpu segments: %s", dc.err);
    sync_ok(st);
    cr_assert_eq(nc, ng, "segments n=%lld nkeys %d type %d: nseg cpu %lld gpu %lld", (long long)n,
                 nkeys, nkeys ? (int)types[0] : -1, (long long)nc, (long long)ng);
    int64_t *g = fetch_i64(d_s, ng);
    expect_i64_eq(cs, g, nc, "segments starts");
    free(g);
    cudaFree(d_s);
    for (int k = 0; k < nkeys; k++)
        tvec_free(&keys[k]);
    *nseg_out = nc;
    return cs;
}

/* Runs aggregate agg over val (n rows) in the segments starts[0..nseg) with
 * both twins and compares (floating results within 1e-9 relative). */
static void segreduce_case(PrimAgg agg, TVec *val, const int64_t *starts, int64_t nseg, int64_t n,
                           cudaStream_t st) {
    int isf = val->h.type == PRIM_F32 || val->h.type == PRIM_F64;
    PrimType ot = PRIM_I64;
    if (agg == AGG_AVG || ((agg == AGG_SUM || agg == AGG_MIN || agg == AGG_MAX) && isf))
        ot = PRIM_F64;
    int64_t *d_starts = to_dev(starts, (size_t)nseg * 8);
    TVec c = tvec_zero(ot, nseg, 1), g = tvec_zero(ot, nseg, 1);
    PrimCtx hc = hctx(), dc = dctx(st);
    cr_assert_eq(prim_cpu_segreduce(&hc, agg, &val->h, starts, nseg, n, &c.h), 0,
                 "cpu segreduce: %s", hc.err);
    cr_assert_eq(prim_gpu_segreduce(&dc, agg, &val->d, d_starts, nseg, n, &g.d), 0,
                 "gpu segreduce: %s", dc.err);
    sync_ok(st);
    tvec_fetch(&g);
    char msg[96];
    snprintf(msg, sizeof msg, "segreduce agg %d type %d nseg %lld", (int)agg, (int)val->h.type,
             (long long)nseg);
    expect_vec_eq(&c.h, &g.h, nseg, 1e-9, msg);
    /* the values are small: the twins without the overflow checks (issue
     * 12: the planner proved none) give the same answers */
    TVec c2 = tvec_zero(ot, nseg, 1), g2 = tvec_zero(ot, nseg, 1);
    cr_assert_eq(prim_cpu_segreduce_ex(&hc, agg, 1, &val->h, starts, nseg, n, &c2.h), 0,
                 "cpu segreduce nocheck: %s", hc.err);
    cr_assert_eq(prim_gpu_segreduce_ex(&dc, agg, 1, &val->d, d_starts, nseg, n, &g2.d), 0,
                 "gpu segreduce nocheck: %s", dc.err);
    sync_ok(st);
    tvec_fetch(&g2);
    strncat(msg, " nocheck", sizeof msg - strlen(msg) - 1);
    expect_vec_eq(&c.h, &c2.h, nseg, 1e-9, msg);
    expect_vec_eq(&c.h, &g2.h, nseg, 1e-9, msg);
    tvec_free(&c2);
    tvec_free(&g2);
    tvec_free(&c);
    tvec_free(&g);
    cudaFree(d_starts);
}
#endif

Test(prim_gpu, segments) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(9);
        cudaStream_t st = new_stream();
        for (int s = 0; s < NSIZES; s++) {
            for (int t = 0; t < 5; t++)
                for (int nl = 0; nl < 2; nl++) {
                    int64_t ns;
                    free(segments_case(SIZES[s], 1, &ALL_TYPES[t], nl, 4, st, &ns));
                    PrimType two[2] = {ALL_TYPES[t], ALL_TYPES[(t + 2) % 5]};
                    free(segments_case(SIZES[s], 2, two, nl, 9, st, &ns));
                }
            int64_t ns;
            free(segments_case(SIZES[s], 0, ALL_TYPES, 0, 4, st, &ns));
        }
        cudaStreamDestroy(st);
    });
}

/* The segment rank over each segments_case's starts, both twins. */
Test(prim_gpu, segrank) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(11);
        cudaStream_t st = new_stream();
        for (int s = 0; s < NSIZES; s++)
            for (int run = 1; run <= 300; run *= 17) {
                int64_t n = SIZES[s], nseg;
                PrimType kt = PRIM_I64;
                int64_t *starts = segments_case(n, 1, &kt, 1, run, st, &nseg);
                int64_t *cr = malloc((size_t)n * 8 + 8);
                int64_t *d_starts = to_dev(starts, (size_t)nseg * 8);
                int64_t *d_r = to_dev(NULL, (size_t)n * 8 + 8);
                PrimCtx hc = hctx(), dc = dctx(st);
                cr_assert_eq(prim_cpu_segrank(&hc, starts, nseg, n, cr), 0, "cpu: %s", hc.err);
                cr_assert_eq(prim_gpu_segrank(&dc, d_starts, nseg, n, d_r), 0, "gpu: %s", dc.err);
                sync_ok(st);
                int64_t *g = fetch_i64(d_r, n);
                expect_i64_eq(cr, g, n, "segment rank");
                free(g);
                free(cr);
                free(starts);
                cudaFree(d_starts);
                cudaFree(d_r);
            }
        cudaStreamDestroy(st);
    });
}

Test(prim_gpu, segreduce) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(10);
        cudaStream_t st = new_stream();
        for (int s = 0; s < NSIZES; s++) {
            int64_t n = SIZES[s], nseg = 0;
            PrimType kt = PRIM_I32;
            int64_t *starts = segments_case(n, 1, &kt, 0, 5, st, &nseg);
            int64_t global0[1] = {0}, global1[1] = {n / 3};
            for (int t = 0; t < 5; t++)
                for (int nl = 0; nl < 2; nl++) {
                    TVec val = tvec_rand(ALL_TYPES[t], n, nl ? 4 : 0, 1000);
                    for (int a = AGG_COUNT_STAR; a <= AGG_AVG; a++) {
                        if (nseg > 0) segreduce_case((PrimAgg)a, &val, starts, nseg, n, st);
                        segreduce_case((PrimAgg)a, &val, global0, 1, n, st);
                        segreduce_case((PrimAgg)a, &val, global1, 1, n, st);
                    }
                    tvec_free(&val);
                }
            free(starts);
        }
        cudaStreamDestroy(st);
    });
}

/* Few long segments (a GROUP BY of a few groups over many rows: cut into
 * pieces on the GPU), with rows before the first start, an empty segment
 * and NULLs, against the CPU; then 300 segments of random lengths (a
 * piece or two each) and 600 (a block per segment). */
Test(prim_gpu, segreduce_long_segments) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(12);
        cudaStream_t st = new_stream();
        const int64_t n = (1 << 20) + 3;
        int64_t starts[5] = {7, 1000, 1000, n / 3, n - 5000};
        for (int t = 0; t < 5; t++)
            for (int nl = 0; nl < 2; nl++) {
                TVec val = tvec_rand(ALL_TYPES[t], n, nl ? 4 : 0, 1000);
                for (int a = AGG_COUNT_STAR; a <= AGG_AVG; a++) {
                    segreduce_case((PrimAgg)a, &val, starts, 5, n, st);
                    segreduce_case((PrimAgg)a, &val, starts + 1, 2, n, st);
                }
                tvec_free(&val);
            }
        int64_t many[600];
        for (int k = 0; k < 2; k++) {
            int64_t nseg = k ? 600 : 300, r = 3;
            for (int64_t i = 0; i < nseg; i++) {
                many[i] = r < n ? r : n;
                r += rnd_range(0, 2 * (n / nseg) - 8);
            }
            TVec val = tvec_rand(PRIM_I64, n, 4, 1000);
            TVec fv = tvec_rand(PRIM_F64, n, 0, 1000);
            for (int a = AGG_COUNT_STAR; a <= AGG_AVG; a++) {
                segreduce_case((PrimAgg)a, &val, many, nseg, n, st);
                segreduce_case((PrimAgg)a, &fv, many, nseg, n, st);
            }
            tvec_free(&val);
            tvec_free(&fv);
        }
        cudaStreamDestroy(st);
    });
}

/* Many segments of mixed lengths (GROUP BY over many small groups with a
 * few large ones, short on average: the one-thread and whole-warp paths of
 * the GPU kernel side by side in one warp),
 * with empty segments and NULLs, against the CPU. */
Test(prim_gpu, segreduce_mixed_lengths) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(13);
        cudaStream_t st = new_stream();
        const int64_t n = 3000000;
        int64_t cap = n + 1, nseg = 0, r = 5; /* rows 0..4 before the first segment */
        int64_t *starts = malloc(sizeof *starts * (size_t)cap);
        cr_assert(starts);
        while (r < n && nseg < cap) {
            int64_t p = rnd_range(0, 999), len;
            if (p < 30)
                len = 0;
            else if (p < 900)
                len = rnd_range(1, 8);
            else if (p < 999) /* 1 in 1000 huge: about 45 rows on average */
                len = rnd_range(31, 200);
            else
                len = rnd_range(1000, 60000);
            starts[nseg++] = r;
            r += len;
        }
        for (int t = 0; t < 5; t++)
            for (int nl = 0; nl < 2; nl++) {
                TVec val = tvec_rand(ALL_TYPES[t], n, nl ? 4 : 0, 1000);
                for (int a = AGG_COUNT_STAR; a <= AGG_AVG; a++)
                    segreduce_case((PrimAgg)a, &val, starts, nseg, n, st);
                tvec_free(&val);
            }
        free(starts);
        cudaStreamDestroy(st);
    });
}

Test(prim_gpu, segreduce_overflow) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        cudaStream_t st = new_stream();
        TVec val = tvec_zero(PRIM_I64, 4, 0);
        for (int i = 0; i < 4; i++)
            ((int64_t *)val.h.data)[i] = INT64_MAX / 2 + 1;
        cudaFree(val.d.data);
        tvec_upload(&val);
        int64_t starts[1] = {0};
        int64_t *d_starts = to_dev(starts, 8);
        TVec c = tvec_zero(PRIM_I64, 1, 1), g = tvec_zero(PRIM_I64, 1, 1);
        PrimCtx hc = hctx(), dc = dctx(st);
        cr_expect_eq(prim_cpu_segreduce(&hc, AGG_SUM, &val.h, starts, 1, 4, &c.h), -1);
        cr_expect_eq(prim_gpu_segreduce(&dc, AGG_SUM, &val.d, d_starts, 1, 4, &g.d), -1);
        cr_expect(strstr(dc.err, "integer overflow") != NULL, "gpu error: %s", dc.err);
        /* AVG does not overflow: it falls back to a double sum. */
        TVec ca = tvec_zero(PRIM_F64, 1, 1), ga = tvec_zero(PRIM_F64, 1, 1);
        cr_assert_eq(prim_cpu_segreduce(&hc, AGG_AVG, &val.h, starts, 1, 4, &ca.h), 0, "%s",
                     hc.err);
        cr_assert_eq(prim_gpu_segreduce(&dc, AGG_AVG, &val.d, d_starts, 1, 4, &ga.d), 0, "%s",
                     dc.err);
        sync_ok(st);
        tvec_fetch(&ga);
        expect_vec_eq(&ca.h, &ga.h, 1, 1e-9, "avg after overflow");
        tvec_free(&val);
        tvec_free(&c);
        tvec_free(&g);
        tvec_free(&ca);
        tvec_free(&ga);
        cudaFree(d_starts);
        cudaStreamDestroy(st);
    });
}

#ifdef GQP_HAVE_CUDA
/* --------------------------------------------------------- join/cross -- */

/* Compares CPU pairs (host) with GPU pairs (device; freed here). */
static void expect_pairs_eq(PrimPairs *c, PrimPairs *g, const char *what) {
    cr_assert_eq(c->n, g->n, "%s: pairs cpu %lld gpu %lld", what, (long long)c->n, (long long)g->n);
    if (g->n == 0) {
        cr_assert(g->left == NULL && g->right == NULL, "%s: empty result not NULL", what);
        return;
    }
    int64_t *l = fetch_i64(g->left, g->n), *r = fetch_i64(g->right, g->n);
    expect_i64_eq(c->left, l, c->n, what);
    expect_i64_eq(c->right, r, c->n, what);
    free(l);
    free(r);
    cudaFree(g->left);
    cudaFree(g->right);
}

/* Joins random keys of type t (nl and nr rows, values in -range..range,
 * NULLs, and NaN for floats) with both twins and compares the pairs. */
static void join_case(PrimType t, int64_t nl, int64_t nr, int64_t range, int nullable,
                      cudaStream_t st) {
    TVec l = tvec_rand(t, nl, nullable ? 7 : 0, range);
    TVec r = tvec_rand(t, nr, nullable ? 7 : 0, range);
    if (t == PRIM_F32 || t == PRIM_F64) {
        /* A few NaNs: they never match. */
        for (int64_t i = 0; i < nl; i += 97) {
            if (t == PRIM_F32)
                ((float *)l.h.data)[i] = NAN;
            else
                ((double *)l.h.data)[i] = NAN;
        }
        for (int64_t i = 0; i < nr; i += 89) {
            if (t == PRIM_F32)
                ((float *)r.h.data)[i] = NAN;
            else
                ((double *)r.h.data)[i] = NAN;
        }
        size_t w = prim_type_width(t);
        cr_assert_eq(cudaMemcpy(l.d.data, l.h.data, (size_t)nl * w, cudaMemcpyHostToDevice),
                     cudaSuccess);
        cr_assert_eq(cudaMemcpy(r.d.data, r.h.data, (size_t)nr * w, cudaMemcpyHostToDevice),
                     cudaSuccess);
        cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess); /* see to_dev */
    }
    PrimPairs c, g;
    PrimCtx hc = hctx(), dc = dctx(st);
    cr_assert_eq(prim_cpu_join(&hc, &l.h, nl, &r.h, nr, &c), 0, "cpu join: %s", hc.err);
    cr_assert_eq(prim_gpu_join(&dc, &l.d, nl, &r.d, nr, &g), 0, "gpu join: %s", dc.err);
    sync_ok(st);
    char msg[96];
    snprintf(msg, sizeof msg, "join type %d nl %lld nr %lld nullable %d", (int)t, (long long)nl,
             (long long)nr, nullable);
    expect_pairs_eq(&c, &g, msg);
    if (c.n > 0) {
        hc.free(hc.ud, c.left);
        hc.free(hc.ud, c.right);
    }
    tvec_free(&l);
    tvec_free(&r);
}
#endif

Test(prim_gpu, join, .timeout = 600) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(11);
        cudaStream_t st = new_stream();
        for (int s = 0; s < NSIZES; s++) {
            int64_t n = SIZES[s], m = n / 3 + 1;
            int64_t range = n / 2 > 4 ? n / 2 : 4;
            for (int t = 0; t < 5; t++) {
                if (ALL_TYPES[t] == PRIM_U8 && n > 1025)
                    continue; /* 256 distinct keys: the pair count would explode */
                for (int nl = 0; nl < 2; nl++) {
                    join_case(ALL_TYPES[t], n, n, range, nl, st);
                    join_case(ALL_TYPES[t], n, m, range, nl, st); /* build right */
                    join_case(ALL_TYPES[t], m, n, range, nl, st); /* build left */
                }
            }
        }
        /* skew: 7 key values, about 75 build rows each */
        join_case(PRIM_I64, 3000, 600, 3, 1, st);
        join_case(PRIM_I64, 600, 3000, 3, 0, st);
        cudaStreamDestroy(st);
    });
}

Test(prim_gpu, cross) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        cudaStream_t st = new_stream();
        static const int64_t dims[][2] = {{0, 5},     {5, 0},       {1, 1},      {1, 1025},
                                          {255, 257}, {1023, 1025}, {3000, 3001}};
        for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
            PrimPairs c, g;
            PrimCtx hc = hctx(), dc = dctx(st);
            cr_assert_eq(prim_cpu_cross(&hc, dims[k][0], dims[k][1], &c), 0, "%s", hc.err);
            cr_assert_eq(prim_gpu_cross(&dc, dims[k][0], dims[k][1], &g), 0, "%s", dc.err);
            sync_ok(st);
            expect_pairs_eq(&c, &g, "cross");
            if (c.n > 0) {
                hc.free(hc.ud, c.left);
                hc.free(hc.ud, c.right);
            }
        }
        cudaStreamDestroy(st);
    });
}

#ifdef GQP_HAVE_CUDA
/* ---------------------------------------------------- keymap / denseagg -- */

/* A host vector of n integer values (U8, I32, I64) uniform in lo..hi (U8:
 * the low byte), about null_pct percent NULLs (no validity when
 * null_pct < 0). Freed with dh_free. */
static PrimVec dh_vec(PrimType t, int64_t n, int64_t lo, int64_t hi, int null_pct) {
    PrimVec v;
    v.type = t;
    v.n = n;
    v.data = malloc(prim_type_width(t) * (size_t)n + 8);
    v.valid = null_pct >= 0 ? malloc((size_t)n + 1) : NULL;
    cr_assert(v.data && (null_pct < 0 || v.valid), "malloc");
    for (int64_t i = 0; i < n; i++) {
        int64_t x = rnd_range(lo, hi);
        if (t == PRIM_U8)
            ((uint8_t *)v.data)[i] = (uint8_t)(x & 255);
        else if (t == PRIM_I32)
            ((int32_t *)v.data)[i] = (int32_t)x;
        else
            ((int64_t *)v.data)[i] = x;
        if (v.valid) v.valid[i] = (int)(rnd() % 100) >= null_pct;
    }
    return v;
}

/* A zeroed host vector of n values of type t, with validity if asked. */
static PrimVec dh_zero(PrimType t, int64_t n, int with_valid) {
    PrimVec v;
    v.type = t;
    v.n = n;
    v.data = calloc((size_t)n + 1, prim_type_width(t));
    v.valid = with_valid ? calloc((size_t)n + 1, 1) : NULL;
    cr_assert(v.data && (!with_valid || v.valid), "calloc");
    return v;
}

/* Frees a host vector from dh_vec / dh_zero. */
static void dh_free(PrimVec *v) {
    free(v->data);
    free(v->valid);
    v->data = NULL;
    v->valid = NULL;
}

/* A device copy of host vector h (cudaFree its data and valid). */
static PrimVec dh_upload(const PrimVec *h) {
    PrimVec d = *h;
    d.data = to_dev(h->data, (size_t)h->n * prim_type_width(h->type));
    d.valid = h->valid ? to_dev(h->valid, (size_t)h->n) : NULL;
    return d;
}

/* Frees a device vector from dh_upload. */
static void dd_free(PrimVec *d) {
    cudaFree(d->data);
    if (d->valid) cudaFree(d->valid);
}

/* Builds a keymap over n random keys of type t (NULLs, duplicates, keys on
 * both sides of the range, row ids through rows when with_rows) with both
 * twins and compares. */
static void keymap_case(PrimType t, int64_t n, int with_rows, cudaStream_t st) {
    int64_t kmin = t == PRIM_U8 ? 10 : -500;
    int64_t range = t == PRIM_U8 ? 200 : n / 2 + 50;
    PrimVec hk = dh_vec(t, n, kmin - 5, kmin + range + 5, 10);
    PrimVec dk = dh_upload(&hk);
    int64_t *hrows = NULL, *drows = NULL;
    uint8_t *hflags = NULL, *dflags = NULL;
    if (with_rows == 2) { /* keymap_where: a filter's flags instead of row ids */
        hflags = malloc((size_t)n + 8);
        for (int64_t i = 0; i < n; i++)
            hflags[i] = rnd_range(0, 2) == 0;
        dflags = to_dev(hflags, (size_t)n);
    } else if (with_rows) {
        hrows = malloc(sizeof(int64_t) * (size_t)n + 8);
        for (int64_t i = 0; i < n; i++)
            hrows[i] = rnd_range(0, 3 * n);
        drows = to_dev(hrows, sizeof(int64_t) * (size_t)n);
    }
    int64_t *cm = malloc(sizeof(int64_t) * (size_t)range);
    int64_t *dm = to_dev(NULL, sizeof(int64_t) * (size_t)range);
    PrimCtx hc = hctx(), dc = dctx(st);
    if (hflags) {
        cr_assert_eq(prim_cpu_keymap_where(&hc, &hk, hflags, n, kmin, range, cm), 0,
                     "cpu keymap_where: %s", hc.err);
        cr_assert_eq(prim_gpu_keymap_where(&dc, &dk, dflags, n, kmin, range, dm), 0,
                     "gpu keymap_where: %s", dc.err);
    } else {
        cr_assert_eq(prim_cpu_keymap(&hc, &hk, hrows, n, kmin, range, cm), 0, "cpu keymap: %s",
                     hc.err);
        cr_assert_eq(prim_gpu_keymap(&dc, &dk, drows, n, kmin, range, dm), 0, "gpu keymap: %s",
                     dc.err);
    }
    sync_ok(st);
    int64_t *g = fetch_i64(dm, range);
    char msg[64];
    snprintf(msg, sizeof msg, "keymap type %d rows %d", (int)t, with_rows);
    expect_i64_eq(cm, g, range, msg);
    free(g);
    free(cm);
    cudaFree(dm);
    free(hrows);
    if (drows) cudaFree(drows);
    free(hflags);
    if (dflags) cudaFree(dflags);
    dh_free(&hk);
    dd_free(&dk);
}

/* The random source of the shared denseagg cases (denseagg_cases.h). */
static const DaRand DA_RAND = {rnd, dh_vec};

/* Runs case c with both twins (GPU outputs prefilled with garbage, so the
 * GPU twin's initialization is checked too) and compares every output. */
/* With shift > 0, denseagg_case runs on every I32 input from its row
 * `shift` on (n - shift rows): device columns 4 bytes off 16-byte
 * alignment, the lean kernel's one-load-a-row form instead of its 128-bit
 * loads. */
static int64_t da_shift;

static void denseagg_case(DaCase *c, cudaStream_t st, const char *what) {
    const int nout = PRIM_DA_NOUT(c->s.naggs);
    const int64_t ng = c->s.ngroups;
    PrimVec din[DA_MAXIN], hout[PRIM_DA_NOUT(PRIM_DA_MAX)], dout[PRIM_DA_NOUT(PRIM_DA_MAX)];
    PrimVec hin[DA_MAXIN];
    void *dbase[DA_MAXIN];
    const int64_t n = c->n - da_shift;
    for (int k = 0; k < c->nin; k++) {
        din[k] = dh_upload(&c->in[k]);
        dbase[k] = din[k].data;
        hin[k] = c->in[k];
        if (da_shift && c->in[k].type == PRIM_I32 && !c->in[k].valid) {
            din[k].data = (int32_t *)din[k].data + da_shift;
            hin[k].data = (int32_t *)hin[k].data + da_shift;
            din[k].n -= da_shift;
            hin[k].n -= da_shift;
        }
    }
    for (int k = 0; k < nout; k++) {
        hout[k] = dh_zero(PRIM_I64, ng, 0);
        dout[k] = hout[k];
        dout[k].data = to_dev(NULL, sizeof(int64_t) * (size_t)ng);
        cr_assert_eq(cudaMemset(dout[k].data, 0x5a, sizeof(int64_t) * (size_t)ng), cudaSuccess);
    }
    /* the garbage must land before the twin runs: cudaMemset is on the
     * legacy stream, which a non-blocking stream does not wait for */
    cr_assert_eq(cudaDeviceSynchronize(), cudaSuccess);
    PrimCtx hc = hctx(), dc = dctx(st);
    cr_assert_eq(prim_cpu_denseagg(&hc, &c->s, hin, n, hout), 0, "%s: cpu: %s", what, hc.err);
    cr_assert_eq(prim_gpu_denseagg(&dc, &c->s, din, n, dout), 0, "%s: gpu: %s", what, dc.err);
    sync_ok(st);
    for (int k = 0; k < nout; k++) {
        int64_t *g = fetch_i64(dout[k].data, ng);
        char msg[160];
        snprintf(msg, sizeof msg, "%s: output %d", what, k);
        expect_i64_eq(hout[k].data, g, ng, msg);
        free(g);
        dh_free(&hout[k]);
        cudaFree(dout[k].data);
    }
    for (int k = 0; k < c->nin; k++) {
        din[k].data = dbase[k];
        dd_free(&din[k]);
    }
}

/* A Q1.1-shaped case over n rows: SUM(price * discount) WHERE discount in
 * 1..3 AND quantity < 25 AND the order date joins a date keymap (1993's
 * days of a 7-year dimension); 4 I32 columns, one group. */
static void q11_case(DaCase *c, int64_t n) {
    memset(c, 0, sizeof *c);
    PrimVec price = dh_vec(PRIM_I32, n, 90000, 10000000, -1);
    PrimVec disc = dh_vec(PRIM_I32, n, 0, 10, -1);
    PrimVec qty = dh_vec(PRIM_I32, n, 1, 50, -1);
    PrimVec date = dh_vec(PRIM_I32, n, 0, 2555, -1);
    PrimVec map = dh_zero(PRIM_I64, 2556, 0);
    for (int64_t k = 0; k < 2556; k++)
        ((int64_t *)map.data)[k] = k >= 365 && k < 730 ? k : -1;
    c->in[0] = price, c->in[1] = disc, c->in[2] = qty, c->in[3] = date, c->in[4] = map;
    c->nin = 5;
    c->n = n;
    PrimDenseAgg *s = &c->s;
    s->rows = -1;
    s->nranges = 2;
    s->range_col[0] = 1, s->range_lo[0] = 1, s->range_hi[0] = 3;
    s->range_col[1] = 2, s->range_lo[1] = INT64_MIN, s->range_hi[1] = 24;
    s->ndims = 1;
    s->dim_fk[0] = 3, s->dim_map[0] = 4, s->dim_kmin[0] = 0, s->dim_range[0] = 2556;
    s->naggs = 1;
    s->agg[0] = AGG_SUM, s->val_a[0] = 0, s->val_b[0] = 1, s->val_op[0] = '*';
    s->ngroups = 1;
}
#endif

Test(prim_gpu, keymap) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(12);
        cudaStream_t st = new_stream();
        const PrimType kt[3] = {PRIM_U8, PRIM_I32, PRIM_I64};
        for (int s = 0; s < NSIZES; s++)
            for (int t = 0; t < 3; t++)
                for (int r = 0; r < 3; r++)
                    keymap_case(kt[t], SIZES[s], r, st);
        cudaStreamDestroy(st);
    });
}

Test(prim_gpu, denseagg, .timeout = 600) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        rng_seed(13);
        cudaStream_t st = new_stream();
        int iter = 0;
        for (int s = 0; s < NSIZES; s++)
            for (int gclass = 0; gclass < 4; gclass++)
                for (int rep = 0; rep < 4; rep++) {
                    DaCase c;
                    da_case(&c, &DA_RAND, SIZES[s], gclass, rep % 2);
                    char what[128];
                    snprintf(what, sizeof what,
                             "case %d: n %lld gclass %d rows %d: %d ranges %d dims %d keys %d "
                             "aggs %lld groups",
                             iter++, (long long)SIZES[s], gclass, rep % 2, c.s.nranges, c.s.ndims,
                             c.s.nkeys, c.s.naggs, (long long)c.s.ngroups);
                    denseagg_case(&c, st, what);
                    /* no sum of these cases overflows: the kernels without
                     * the checks (denseagg_kernel<..., false>, issue 12)
                     * give the same answers */
                    c.s.nocheck = 1;
                    denseagg_case(&c, st, what);
                    /* the unchecked kernel's measured variants (issue 12):
                     * mode 1 without its register cap, the general form
                     * instead of the lean one */
                    static const char *const var[][2] = {
                        {"GQP_DA_MINB", "0"}, {"GQP_DA_LEAN", "0"}, {"GQP_DA_VEC", "1"}};
                    for (size_t v = 0; v < sizeof var / sizeof var[0]; v++) {
                        setenv(var[v][0], var[v][1], 1);
                        denseagg_case(&c, st, what);
                        unsetenv(var[v][0]);
                    }
                    da_case_free(&c);
                }
        DaCase q;
        q11_case(&q, BIG_N);
        denseagg_case(&q, st, "Q1.1 shape");
        q.s.nocheck = 1;
        denseagg_case(&q, st, "Q1.1 shape, nocheck");
        setenv("GQP_DA_LEAN", "0", 1);
        denseagg_case(&q, st, "Q1.1 shape, nocheck, general kernel");
        unsetenv("GQP_DA_LEAN");
        /* the lean kernel's 128-bit loads (GQP_DA_VEC=1); 4 bytes off
         * 16-byte alignment they fall back to its scalar loads; 16 bytes
         * off, aligned again (the random cases' sizes give the last
         * tile's partial rows) */
        setenv("GQP_DA_VEC", "1", 1);
        denseagg_case(&q, st, "Q1.1 shape, nocheck, lean kernel with 128-bit loads");
        for (da_shift = 1; da_shift <= 4; da_shift += 3)
            denseagg_case(&q, st,
                          da_shift == 1 ? "Q1.1 shape, nocheck, misaligned"
                                        : "Q1.1 shape, nocheck, 4 rows on");
        da_shift = 0;
        unsetenv("GQP_DA_VEC");
        da_case_free(&q);
        cudaStreamDestroy(st);
    });
}

Test(prim_gpu, denseagg_errors) {
    GPU_TEST_PRELUDE();
    GPU_BODY({
        cudaStream_t st = new_stream();
        PrimVec hf = dh_vec(PRIM_I32, 4, 0, 9, -1);
        PrimVec df = dh_upload(&hf);
        df.type = PRIM_F32; /* not an integer column */
        int64_t *d_o = to_dev(NULL, 3 * sizeof(int64_t));
        PrimVec out[3] = {
            {PRIM_I64, 1, d_o, NULL}, {PRIM_I64, 1, d_o + 1, NULL}, {PRIM_I64, 1, d_o + 2, NULL}};
        PrimDenseAgg s;
        memset(&s, 0, sizeof s);
        s.rows = -1;
        s.naggs = 1;
        s.agg[0] = AGG_SUM;
        s.val_a[0] = 0;
        s.val_b[0] = -1;
        s.ngroups = 1;
        PrimCtx dc = dctx(st);
        cr_expect_eq(prim_gpu_denseagg(&dc, &s, &df, 4, out), -1, "F32 value accepted");
        cr_expect(strstr(dc.err, "denseagg") != NULL, "%s", dc.err);
        df.type = PRIM_I32;
        s.ngroups = 0;
        cr_expect_eq(prim_gpu_denseagg(&dc, &s, &df, 4, out), -1, "0 groups accepted");
        s.ngroups = 1;
        s.naggs = PRIM_DA_MAX + 1;
        cr_expect_eq(prim_gpu_denseagg(&dc, &s, &df, 4, out), -1, "9 aggregates accepted");
        s.naggs = 1;
        cr_assert_eq(prim_gpu_denseagg(&dc, &s, &df, 4, out), 0, "%s", dc.err);
        sync_ok(st);
        int64_t *g = fetch_i64(d_o, 3);
        int64_t sum = 0;
        for (int i = 0; i < 4; i++)
            sum += ((int32_t *)hf.data)[i];
        cr_expect(g[0] == 4 && g[1] == sum && g[2] == 4, "%lld %lld %lld", (long long)g[0],
                  (long long)g[1], (long long)g[2]);
        PrimVec fk = df;
        fk.type = PRIM_F64;
        int64_t *d_m = to_dev(NULL, 8);
        cr_expect_eq(prim_gpu_keymap(&dc, &fk, NULL, 4, 0, 1, d_m), -1, "F64 key accepted");
        free(g);
        cudaFree(d_m);
        cudaFree(d_o);
        dd_free(&df);
        dh_free(&hf);
        cudaStreamDestroy(st);
    });
}
