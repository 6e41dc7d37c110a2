/*
 * test_prim_select.c -- the fused filter primitive (map -> scan -> scatter
 * in one): the CPU twin against a row-at-a-time reference on random inputs
 * of many sizes and thread counts, and the GPU twin against the CPU twin
 * (skipped without a device). Uses only the device runtime of
 * primitives.h, so it needs no CUDA headers.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "primitives/primitives.h"

/* malloc-backed allocator for the CPU twin. */
static void *h_alloc(void *ud, size_t bytes) {
    (void)ud;
    return malloc(bytes ? bytes : 1);
}
static void h_free(void *ud, void *p) {
    (void)ud;
    free(p);
}
/* device allocator for the GPU twin (stream-ordered pool, default stream). */
static void *d_alloc(void *ud, size_t bytes) {
    (void)ud;
    return prim_gpu_malloc(bytes, NULL);
}
static void d_free(void *ud, void *p) {
    (void)ud;
    prim_gpu_free(p, NULL);
}

/* Deterministic xorshift generator. */
static uint64_t rng(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The program "a > k AND (b < 0 OR b IS NULL)" over int32 a and double b:
 * exercises comparison, three-valued OR and NULL inputs. */
static const PrimInstr PROG[] = {
    {POP_COL, PRIM_REG_I, 0, 0, 0, 0, 0, 0, NULL, 0},
    {POP_CONST, PRIM_REG_I, 1, 0, 0, 0, 10, 0, NULL, 0},
    {POP_GT, PRIM_REG_I, 2, 0, 1, 0, 0, 0, NULL, 0},
    {POP_COL, PRIM_REG_F, 3, 0, 0, 0, 1, 0, NULL, 0},
    {POP_CONST, PRIM_REG_F, 4, 0, 0, 0, 0, 0.0, NULL, 0},
    {POP_LT, PRIM_REG_F, 5, 3, 4, 0, 0, 0, NULL, 0},
    {POP_ISNULL, PRIM_REG_F, 6, 3, 0, 0, 0, 0, NULL, 0},
    {POP_OR, PRIM_REG_I, 7, 5, 6, 0, 0, 0, NULL, 0},
    {POP_AND, PRIM_REG_I, 8, 2, 7, 0, 0, 0, NULL, 0},
};
static const PrimProgram PROGRAM = {9, PROG, 9, 8, PRIM_REG_I, 2, 1, 0};

/* Random inputs of n rows: a in [-50, 50], b in [-1, 1) with ~10% NULL. */
static void make_inputs(int64_t n, uint64_t seed, int32_t **a, double **b, uint8_t **bv) {
    uint64_t s = seed * 2654435761u + 1;
    *a = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    *b = malloc(sizeof(double) * (size_t)(n ? n : 1));
    *bv = malloc((size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        (*a)[i] = (int32_t)(rng(&s) % 101) - 50;
        (*b)[i] = (double)(rng(&s) % 2000) / 1000.0 - 1.0;
        (*bv)[i] = rng(&s) % 10 != 0;
    }
}

/* Row-at-a-time reference: the selected row ids and their count. */
static int64_t reference(const int32_t *a, const double *b, const uint8_t *bv, int64_t n,
                         int64_t *out) {
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (a[i] > 10 && (!bv[i] || b[i] < 0)) out[k++] = i;
    return k;
}

static const int64_t SIZES[] = {0, 1, 2, 255, 1023, 1024, 1025, 65535, 65537, 100003, 3000001};

Test(prim_select, cpu_matches_reference) {
    for (size_t z = 0; z < sizeof SIZES / sizeof *SIZES; z++) {
        int64_t n = SIZES[z];
        int32_t *a;
        double *b;
        uint8_t *bv;
        make_inputs(n, (uint64_t)z + 1, &a, &b, &bv);
        int64_t *want = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
        int64_t nwant = reference(a, b, bv, n, want);
        PrimVec in[2] = {{PRIM_I32, n, a, NULL}, {PRIM_F64, n, b, bv}};
        for (int nt = 1; nt <= 4; nt += 3) {
            PrimCtx ctx = {nt, NULL, h_alloc, h_free, NULL, {0}, NULL, NULL};
            int64_t *got = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
            int64_t ngot = -1;
            cr_assert_eq(prim_cpu_select(&ctx, &PROGRAM, in, n, got, &ngot), 0, "%s", ctx.err);
            cr_assert_eq(ngot, nwant, "n=%lld threads=%d", (long long)n, nt);
            cr_assert(memcmp(got, want, sizeof(int64_t) * (size_t)nwant) == 0,
                      "row ids differ at n=%lld threads=%d", (long long)n, nt);
            free(got);
        }
        free(want);
        free(a);
        free(b);
        free(bv);
    }
}

Test(prim_select, rejects_non_filter_program) {
    PrimProgram p = PROGRAM;
    p.as_filter = 0;
    PrimCtx ctx = {1, NULL, h_alloc, h_free, NULL, {0}, NULL, NULL};
    int64_t out[1], c;
    int32_t a[1] = {0};
    double b[1] = {0};
    PrimVec in[2] = {{PRIM_I32, 1, a, NULL}, {PRIM_F64, 1, b, NULL}};
    cr_assert_eq(prim_cpu_select(&ctx, &p, in, 1, out, &c), -1);
    cr_assert(ctx.err[0] != 0);
}

Test(prim_select, gpu_matches_cpu) {
    if (!prim_gpu_available()) cr_skip_test("no CUDA device");
    char err[256];
    for (size_t z = 0; z < sizeof SIZES / sizeof *SIZES; z++) {
        int64_t n = SIZES[z];
        int32_t *a;
        double *b;
        uint8_t *bv;
        make_inputs(n, (uint64_t)z + 7, &a, &b, &bv);
        int64_t *want = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
        int64_t nwant = reference(a, b, bv, n, want);
        void *da = prim_gpu_malloc(sizeof(int32_t) * (size_t)n, NULL);
        void *db = prim_gpu_malloc(sizeof(double) * (size_t)n, NULL);
        void *dv = prim_gpu_malloc((size_t)n, NULL);
        int64_t *dout = prim_gpu_malloc(sizeof(int64_t) * (size_t)(n ? n : 1), NULL);
        cr_assert(da && db && dv && dout);
        cr_assert_eq(
            prim_gpu_copy(da, a, sizeof(int32_t) * (size_t)n, PRIM_H2D, NULL, err, sizeof err), 0,
            "%s", err);
        cr_assert_eq(
            prim_gpu_copy(db, b, sizeof(double) * (size_t)n, PRIM_H2D, NULL, err, sizeof err), 0,
            "%s", err);
        cr_assert_eq(prim_gpu_copy(dv, bv, (size_t)n, PRIM_H2D, NULL, err, sizeof err), 0, "%s",
                     err);
        PrimVec in[2] = {{PRIM_I32, n, da, NULL}, {PRIM_F64, n, db, dv}};
        PrimCtx ctx = {1, NULL, d_alloc, d_free, NULL, {0}, NULL, NULL};
        int64_t ngot = -1;
        cr_assert_eq(prim_gpu_select(&ctx, &PROGRAM, in, n, dout, &ngot), 0, "%s", ctx.err);
        cr_assert_eq(ngot, nwant, "n=%lld", (long long)n);
        int64_t *got = malloc(sizeof(int64_t) * (size_t)(nwant ? nwant : 1));
        cr_assert_eq(prim_gpu_copy(got, dout, sizeof(int64_t) * (size_t)nwant, PRIM_D2H, NULL, err,
                                   sizeof err),
                     0, "%s", err);
        cr_assert_eq(prim_gpu_sync(NULL, err, sizeof err), 0, "%s", err);
        cr_assert(memcmp(got, want, sizeof(int64_t) * (size_t)nwant) == 0, "n=%lld", (long long)n);
        prim_gpu_free(da, NULL);
        prim_gpu_free(db, NULL);
        prim_gpu_free(dv, NULL);
        prim_gpu_free(dout, NULL);
        free(got);
        free(want);
        free(a);
        free(b);
        free(bv);
    }
}
