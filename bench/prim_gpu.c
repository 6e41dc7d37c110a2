/*
 * prim_gpu.c -- throughput of each GPU twin against CUB / Thrust called
 * directly on the same device input (issue 3: goal within 1.2x).
 *
 *   bench_prim_gpu [--n N] [--reps R]     N rows (default 2^26), R timed runs (default 20)
 *
 * Inputs are generated on the host from a fixed seed, copied to the device
 * once, and every primitive is run through its gqp twin (prim_gpu_*, PrimCtx
 * allocating with prim_gpu_malloc / prim_gpu_free on one stream from
 * prim_gpu_stream_create) and through its direct baseline
 * (primitives/gpu_direct.h). Each side gets one warm-up run, then R runs
 * between two events on the stream; the median is reported. Twins that
 * return a host count synchronize inside the call, and so do their
 * baselines, so both are timed the same way. Both results are copied back
 * and compared with each other and with a host-side check.
 *
 * Output: one markdown table,
 *
 *   | primitive | rows | gqp ms | direct ms | gqp/direct | gqp GB/s | check |
 *
 * where GB/s counts the bytes a primitive must read and write (its inputs
 * and outputs, not its temporaries) divided by the gqp time:
 *
 *   | primitive        | bytes                                   |
 *   |------------------|-----------------------------------------|
 *   | map              | 4n + 4n read, n flags written           |
 *   | scan             | n flags read, 8n offsets written        |
 *   | select           | 8n read, 8 x count row ids written      |
 *   | sort             | 4n keys read, 8n permutation written    |
 *   | gather           | 8n indices + 4n values read, 4n written |
 *   | segreduce 1 seg  | 8n read                                 |
 *   | segreduce N/1000 | 8n + 8 nseg read, 8 nseg written        |
 *   | join             | 4n + 4 nb read, 16 x pairs written      |
 *   | denseagg Q1.1    | 4 x 4n read (the map stays in L2)       |
 *
 * Join has no direct equivalent and reports gqp only. Neither has
 * denseagg: its "direct" column is the floor instead, the time to move its
 * 16n bytes at the device copy bandwidth that prim_gpu_bandwidth measures
 * (read + write bytes per second), so gqp/direct is the distance to it. Without a device it
 * prints "no CUDA device" and exits 0; otherwise it exits 1 if anything
 * failed or any check mismatched.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "primitives/gpu_direct.h"
#include "primitives/primitives.h"

/* Build sides of the join benchmark: 2^20 distinct keys (about half the
 * probe rows match), and 4096 distinct keys of which about 1 probe row in
 * 25 matches (TPC-H q11's partsupp x supplier of one nation). */
#define JOIN_BUILD ((int64_t)1 << 20)
#define JOIN_BUILD_SMALL ((int64_t)4096)

/* The benchmark's state: sizes, the stream and the twins' context. */
typedef struct Bench {
    int64_t n;
    int reps;
    void *stream;
    PrimCtx ctx;
    int bad; /* set on any error or mismatch */
} Bench;

/* ---------------------------------------------------------- utilities -- */

/* splitmix64: the next pseudo-random 64-bit value of *s. */
static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A pseudo-random value in 0..m-1 (m >= 1). */
static uint64_t rng_below(uint64_t *s, uint64_t m) {
    return rng_next(s) % m;
}

/* PrimCtx allocator: stream-ordered device memory from the pool (ud is the
 * stream). */
static void *bench_alloc(void *ud, size_t bytes) {
    return prim_gpu_malloc(bytes, ud);
}

/* PrimCtx free: stream-ordered release to the pool. */
static void bench_free(void *ud, void *p) {
    prim_gpu_free(p, ud);
}

/* Device memory of bytes on the bench stream; NULL (message printed, b->bad
 * set) on failure. */
static void *dev_alloc(Bench *b, size_t bytes) {
    void *p = prim_gpu_malloc(bytes, b->stream);
    if (!p) {
        fprintf(stderr, "Device Error: out of device memory allocating %zu bytes\n", bytes);
        b->bad = 1;
    }
    return p;
}

/* Releases device memory from dev_alloc (NULL is ignored). */
static void dev_free(Bench *b, void *p) {
    if (p) prim_gpu_free(p, b->stream);
}

/* Host memory of bytes; NULL (message printed, b->bad set) on failure. */
static void *host_alloc(Bench *b, size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of host memory allocating %zu bytes\n", bytes);
        b->bad = 1;
    }
    return p;
}

/* Copies bytes between host and device (kind) and waits for the stream.
 * Returns 0, or -1 (message printed, b->bad set). */
static int copy_sync(Bench *b, void *dst, const void *src, size_t bytes, PrimCopyKind kind) {
    char err[256];
    if (prim_gpu_copy(dst, src, bytes, kind, b->stream, err, sizeof err) != 0 ||
        prim_gpu_sync(b->stream, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        b->bad = 1;
        return -1;
    }
    return 0;
}

/* Median of t[0..n) (n >= 1; sorts t), as gpu_direct.h computes it. */
static float median(float *t, int n) {
    for (int i = 1; i < n; ++i) {
        const float x = t[i];
        int j = i - 1;
        while (j >= 0 && t[j] > x) {
            t[j + 1] = t[j];
            --j;
        }
        t[j + 1] = x;
    }
    return (n & 1) ? t[n / 2] : 0.5f * (t[n / 2 - 1] + t[n / 2]);
}

/* One call of a twin on the bench stream: 0 or -1 with b->ctx.err. */
typedef int (*TwinRun)(Bench *b, void *arg);
/* Work done before each run, outside the timed range (may be NULL). */
typedef void (*TwinReset)(Bench *b, void *arg);

/* Times run(b, arg): one warm-up, then b->reps runs between two events on
 * the stream, reset (if any) before each. Returns the median ms, or -1 with
 * the error printed (b->bad set). */
static float time_twin(Bench *b, const char *what, TwinRun run, TwinReset reset, void *arg) {
    char err[256];
    float *t = host_alloc(b, (size_t)b->reps * sizeof(float));
    if (!t) return -1;
    float ms = -1;
    if (reset) reset(b, arg);
    if (run(b, arg) != 0) goto fail;
    if (prim_gpu_sync(b->stream, err, sizeof err) != 0) {
        snprintf(b->ctx.err, sizeof b->ctx.err, "%s", err);
        goto fail;
    }
    for (int r = 0; r < b->reps; ++r) {
        if (reset) reset(b, arg);
        void *e0 = prim_gpu_event_record(b->stream);
        const int rc = run(b, arg);
        void *e1 = prim_gpu_event_record(b->stream);
        t[r] = rc == 0 ? prim_gpu_event_ms(e0, e1) : -1;
        prim_gpu_event_destroy(e0);
        prim_gpu_event_destroy(e1);
        if (rc != 0) goto fail;
        if (!e0 || !e1 || t[r] < 0) {
            snprintf(b->ctx.err, sizeof b->ctx.err, "Device Error: event timing failed");
            goto fail;
        }
    }
    ms = median(t, b->reps);
    free(t);
    return ms;
fail:
    fprintf(stderr, "%s (gqp): %s\n", what, b->ctx.err);
    b->bad = 1;
    free(t);
    return -1;
}

/* Reports a failed direct call (ms < 0): prints err, sets b->bad. Returns ms. */
static float direct_done(Bench *b, const char *what, float ms, const char *err) {
    if (ms < 0) {
        fprintf(stderr, "%s (direct): %s\n", what, err);
        b->bad = 1;
    }
    return ms;
}

/* Prints the table header. */
static void table_head(void) {
    printf("| primitive | rows | gqp ms | direct ms | gqp/direct | gqp GB/s | check |\n");
    printf("|---|---:|---:|---:|---:|---:|---|\n");
}

/* Prints one table row: g / d are the gqp and direct medians in ms (d < 0
 * with has_direct = 0: no direct equivalent), bytes the bytes moved, ok the
 * check's outcome (1 ok, 0 mismatch, -1 not checked because a side failed).
 * A mismatch sets b->bad. */
static void table_row(Bench *b, const char *name, int64_t rows, float g, float d, int has_direct,
                      double bytes, int ok) {
    char gs[32], ds[32], rs[32], bw[32];
    if (g >= 0)
        snprintf(gs, sizeof gs, "%.3f", g);
    else
        snprintf(gs, sizeof gs, "error");
    if (!has_direct)
        snprintf(ds, sizeof ds, "n/a");
    else if (d >= 0)
        snprintf(ds, sizeof ds, "%.3f", d);
    else
        snprintf(ds, sizeof ds, "error");
    if (has_direct && g > 0 && d > 0)
        snprintf(rs, sizeof rs, "%.2f", g / d);
    else
        snprintf(rs, sizeof rs, "-");
    if (g > 0)
        snprintf(bw, sizeof bw, "%.1f", bytes / ((double)g * 1e6));
    else
        snprintf(bw, sizeof bw, "-");
    if (ok == 0) b->bad = 1;
    printf("| %s | %" PRId64 " | %s | %s | %s | %s | %s |\n", name, rows, gs, ds, rs, bw,
           ok > 0    ? "ok"
           : ok == 0 ? "MISMATCH"
                     : "-");
    fflush(stdout);
}

/* ------------------------------------------------------ shared inputs -- */

/* Host and device copies of the columns several primitives read: a in
 * 0..99, b in -50..49 (the filter a > 60 AND b < 0 keeps about 20%), and
 * the expected flags of that filter. */
typedef struct Cols {
    int32_t *h_a, *h_b;
    uint8_t *h_flags;
    int64_t h_count; /* set flags */
    int32_t *d_a, *d_b;
    uint8_t *d_flags; /* the filter's flags, written by the direct map */
} Cols;

/* The register program of a > 60 AND b < 0 over inputs 0 (a) and 1 (b) as
 * a filter: r0 = a, r1 = 60, r2 = r0 > r1, r3 = b, r4 = 0, r5 = r3 < r4,
 * r6 = r2 AND r5. */
static const PrimInstr filter_code[] = {
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 0, .ival = 0},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 1, .ival = 60},
    {.op = POP_GT, .t = PRIM_REG_I, .dst = 2, .a = 0, .b = 1},
    {.op = POP_COL, .t = PRIM_REG_I, .dst = 3, .ival = 1},
    {.op = POP_CONST, .t = PRIM_REG_I, .dst = 4, .ival = 0},
    {.op = POP_LT, .t = PRIM_REG_I, .dst = 5, .a = 3, .b = 4},
    {.op = POP_AND, .t = PRIM_REG_I, .dst = 6, .a = 2, .b = 5},
};
static const PrimProgram filter_prog = {.ninstr = 7,
                                        .code = filter_code,
                                        .nregs = 7,
                                        .result = 6,
                                        .result_t = PRIM_REG_I,
                                        .ninputs = 2,
                                        .as_filter = 1};

/* Generates and uploads the shared columns. Returns 0 or -1. */
static int cols_init(Bench *b, Cols *c) {
    const int64_t n = b->n;
    uint64_t s = 1;
    memset(c, 0, sizeof *c);
    c->h_a = host_alloc(b, (size_t)n * 4);
    c->h_b = host_alloc(b, (size_t)n * 4);
    c->h_flags = host_alloc(b, (size_t)n);
    if (!c->h_a || !c->h_b || !c->h_flags) return -1;
    for (int64_t i = 0; i < n; ++i) {
        c->h_a[i] = (int32_t)rng_below(&s, 100);
        c->h_b[i] = (int32_t)rng_below(&s, 100) - 50;
        c->h_flags[i] = (uint8_t)(c->h_a[i] > 60 && c->h_b[i] < 0);
        c->h_count += c->h_flags[i];
    }
    c->d_a = dev_alloc(b, (size_t)n * 4);
    c->d_b = dev_alloc(b, (size_t)n * 4);
    c->d_flags = dev_alloc(b, (size_t)n);
    if (!c->d_a || !c->d_b || !c->d_flags) return -1;
    if (copy_sync(b, c->d_a, c->h_a, (size_t)n * 4, PRIM_H2D) != 0 ||
        copy_sync(b, c->d_b, c->h_b, (size_t)n * 4, PRIM_H2D) != 0)
        return -1;
    return 0;
}

/* Releases the shared columns. */
static void cols_free(Bench *b, Cols *c) {
    free(c->h_a);
    free(c->h_b);
    free(c->h_flags);
    dev_free(b, c->d_a);
    dev_free(b, c->d_b);
    dev_free(b, c->d_flags);
}

/* The two filter inputs as PrimVecs over c's device columns. */
static void filter_inputs(Bench *b, const Cols *c, PrimVec in[2]) {
    in[0] = (PrimVec){PRIM_I32, b->n, c->d_a, NULL};
    in[1] = (PrimVec){PRIM_I32, b->n, c->d_b, NULL};
}

/* ---------------------------------------------------------------- map -- */

/* Arguments of run_map: the filter inputs and the flags output. */
typedef struct MapArg {
    PrimVec in[2];
    PrimVec out;
} MapArg;

/* One map twin call. */
static int run_map(Bench *b, void *arg) {
    MapArg *m = arg;
    return prim_gpu_map(&b->ctx, &filter_prog, m->in, b->n, &m->out);
}

/* map: the register program against the fused kernel; the direct flags stay
 * in c->d_flags for scan. Returns 0, or -1 if the flags are unusable. */
static int bench_map(Bench *b, Cols *c) {
    const int64_t n = b->n;
    char err[256];
    MapArg m;
    filter_inputs(b, c, m.in);
    uint8_t *d_fg = dev_alloc(b, (size_t)n);
    uint8_t *h_g = host_alloc(b, (size_t)n), *h_d = host_alloc(b, (size_t)n);
    int ok = -1, rc = -1;
    if (!d_fg || !h_g || !h_d) goto done;
    m.out = (PrimVec){PRIM_U8, n, d_fg, NULL};
    const float g = time_twin(b, "map", run_map, NULL, &m);
    const float d = direct_done(
        b, "map",
        prim_direct_map(c->d_a, c->d_b, n, c->d_flags, b->stream, b->reps, err, sizeof err), err);
    if (d >= 0 && copy_sync(b, h_d, c->d_flags, (size_t)n, PRIM_D2H) == 0) {
        rc = memcmp(h_d, c->h_flags, (size_t)n) == 0 ? 0 : -1;
        ok = rc == 0;
        if (g >= 0 && copy_sync(b, h_g, d_fg, (size_t)n, PRIM_D2H) == 0)
            ok = ok && memcmp(h_g, c->h_flags, (size_t)n) == 0;
        else
            ok = -1;
    }
    table_row(b, "map (a > 60 AND b < 0)", n, g, d, 1, 9.0 * (double)n, ok);
done:
    dev_free(b, d_fg);
    free(h_g);
    free(h_d);
    return rc;
}

/* --------------------------------------------------------------- scan -- */

/* Arguments of run_scan: the flags, the offsets output and its total. */
typedef struct ScanArg {
    PrimVec in;
    int64_t *d_out;
    int64_t total;
} ScanArg;

/* One scan twin call. */
static int run_scan(Bench *b, void *arg) {
    ScanArg *s = arg;
    return prim_gpu_scan(&b->ctx, &s->in, b->n, s->d_out, &s->total);
}

/* scan of the filter flags: twin against the direct exclusive scan; checks
 * both offset arrays against the host's. */
static void bench_scan(Bench *b, Cols *c) {
    const int64_t n = b->n;
    char err[256];
    ScanArg s;
    s.in = (PrimVec){PRIM_U8, n, c->d_flags, NULL};
    s.d_out = dev_alloc(b, (size_t)n * 8);
    s.total = -1;
    int64_t *d_od = dev_alloc(b, (size_t)n * 8), total_d = -1;
    int64_t *h_g = host_alloc(b, (size_t)n * 8), *h_d = host_alloc(b, (size_t)n * 8);
    if (!s.d_out || !d_od || !h_g || !h_d) goto done;
    const float g = time_twin(b, "scan", run_scan, NULL, &s);
    const float d = direct_done(
        b, "scan",
        prim_direct_scan(c->d_flags, n, d_od, &total_d, b->stream, b->reps, err, sizeof err), err);
    int ok = -1;
    if (g >= 0 && d >= 0 && copy_sync(b, h_g, s.d_out, (size_t)n * 8, PRIM_D2H) == 0 &&
        copy_sync(b, h_d, d_od, (size_t)n * 8, PRIM_D2H) == 0) {
        ok = s.total == c->h_count && total_d == c->h_count && memcmp(h_g, h_d, (size_t)n * 8) == 0;
        int64_t acc = 0;
        for (int64_t i = 0; i < n && ok; ++i) {
            ok = h_g[i] == acc;
            acc += c->h_flags[i];
        }
    }
    table_row(b, "scan (u8 -> i64)", n, g, d, 1, 9.0 * (double)n, ok);
done:
    dev_free(b, s.d_out);
    dev_free(b, d_od);
    free(h_g);
    free(h_d);
}

/* ------------------------------------------------------------- select -- */

/* Arguments of run_select: the filter inputs, row ids and their count. */
typedef struct SelectArg {
    PrimVec in[2];
    int64_t *d_rows;
    int64_t count;
} SelectArg;

/* One fused-filter twin call (synchronizes for the count). */
static int run_select(Bench *b, void *arg) {
    SelectArg *s = arg;
    return prim_gpu_select(&b->ctx, &filter_prog, s->in, b->n, s->d_rows, &s->count);
}

/* select (fused filter): twin against the direct map kernel + Flagged; both
 * row-id lists are compared with each other and with the host flags. */
static void bench_select(Bench *b, Cols *c) {
    const int64_t n = b->n;
    char err[256];
    SelectArg s;
    filter_inputs(b, c, s.in);
    s.d_rows = dev_alloc(b, (size_t)n * 8);
    s.count = -1;
    int64_t *d_rd = dev_alloc(b, (size_t)n * 8), count_d = -1;
    int64_t *h_g = host_alloc(b, (size_t)n * 8), *h_d = host_alloc(b, (size_t)n * 8);
    if (!s.d_rows || !d_rd || !h_g || !h_d) goto done;
    const float g = time_twin(b, "select", run_select, NULL, &s);
    const float d = direct_done(
        b, "select",
        prim_direct_select(c->d_a, c->d_b, n, d_rd, &count_d, b->stream, b->reps, err, sizeof err),
        err);
    int ok = -1;
    const int64_t cnt = c->h_count;
    if (g >= 0 && d >= 0) {
        ok = s.count == cnt && count_d == cnt;
        if (ok && cnt > 0) {
            if (copy_sync(b, h_g, s.d_rows, (size_t)cnt * 8, PRIM_D2H) != 0 ||
                copy_sync(b, h_d, d_rd, (size_t)cnt * 8, PRIM_D2H) != 0) {
                ok = -1;
            } else {
                ok = memcmp(h_g, h_d, (size_t)cnt * 8) == 0;
                int64_t k = 0;
                for (int64_t i = 0; i < n && ok; ++i)
                    if (c->h_flags[i]) ok = h_g[k++] == i;
            }
        }
    }
    table_row(b, "select (fused filter)", n, g, d, 1, 8.0 * (double)n + 8.0 * (double)cnt, ok);
done:
    dev_free(b, s.d_rows);
    dev_free(b, d_rd);
    free(h_g);
    free(h_d);
}

/* --------------------------------------------------------------- sort -- */

/* Arguments of run_sort: the key column and the permutation output. */
typedef struct SortArg {
    PrimVec key;
    int64_t *d_perm;
} SortArg;

/* One single-key sort twin call. */
static int run_sort(Bench *b, void *arg) {
    SortArg *s = arg;
    return prim_gpu_sort(&b->ctx, &s->key, NULL, 1, b->n, s->d_perm);
}

/* sort of full-range random int32 keys: twin against one CUB SortPairs;
 * both permutations must be equal (both stable) and sort the keys. */
static void bench_sort(Bench *b) {
    const int64_t n = b->n;
    char err[256];
    uint64_t seed = 2;
    SortArg s;
    int32_t *h_k = host_alloc(b, (size_t)n * 4);
    int32_t *d_k = dev_alloc(b, (size_t)n * 4);
    s.d_perm = dev_alloc(b, (size_t)n * 8);
    int64_t *d_pd = dev_alloc(b, (size_t)n * 8);
    int64_t *h_g = host_alloc(b, (size_t)n * 8), *h_d = host_alloc(b, (size_t)n * 8);
    if (!h_k || !d_k || !s.d_perm || !d_pd || !h_g || !h_d) goto done;
    for (int64_t i = 0; i < n; ++i)
        h_k[i] = (int32_t)(uint32_t)rng_next(&seed);
    if (copy_sync(b, d_k, h_k, (size_t)n * 4, PRIM_H2D) != 0) goto done;
    s.key = (PrimVec){PRIM_I32, n, d_k, NULL};
    const float g = time_twin(b, "sort", run_sort, NULL, &s);
    const float d = direct_done(
        b, "sort", prim_direct_sort(d_k, n, d_pd, b->stream, b->reps, err, sizeof err), err);
    int ok = -1;
    if (g >= 0 && d >= 0 && copy_sync(b, h_g, s.d_perm, (size_t)n * 8, PRIM_D2H) == 0 &&
        copy_sync(b, h_d, d_pd, (size_t)n * 8, PRIM_D2H) == 0) {
        ok = memcmp(h_g, h_d, (size_t)n * 8) == 0;
        for (int64_t i = 0; i < n && ok; ++i) {
            const int64_t p = h_g[i];
            ok = p >= 0 && p < n;
            if (ok && i > 0) {
                const int64_t q = h_g[i - 1];
                ok = h_k[q] < h_k[p] || (h_k[q] == h_k[p] && q < p);
            }
        }
    }
    table_row(b, "sort (1 key i32)", n, g, d, 1, 12.0 * (double)n, ok);
done:
    free(h_k);
    dev_free(b, d_k);
    dev_free(b, s.d_perm);
    dev_free(b, d_pd);
    free(h_g);
    free(h_d);
}

/* ------------------------------------------------------------- gather -- */

/* Arguments of run_gather: source column, indices, destination. */
typedef struct GatherArg {
    PrimVec src;
    const int64_t *d_idx;
    PrimVec dst;
} GatherArg;

/* One gather twin call. */
static int run_gather(Bench *b, void *arg) {
    GatherArg *a = arg;
    return prim_gpu_gather(&b->ctx, &a->src, a->d_idx, b->n, &a->dst);
}

/* gather of column a by uniformly random int64 indices: twin against
 * thrust::gather; both outputs must equal the host gather. */
static void bench_gather(Bench *b, Cols *c) {
    const int64_t n = b->n;
    char err[256];
    uint64_t seed = 3;
    GatherArg a;
    int64_t *h_i = host_alloc(b, (size_t)n * 8);
    int64_t *d_i = dev_alloc(b, (size_t)n * 8);
    int32_t *d_gg = dev_alloc(b, (size_t)n * 4), *d_gd = dev_alloc(b, (size_t)n * 4);
    int32_t *h_g = host_alloc(b, (size_t)n * 4), *h_d = host_alloc(b, (size_t)n * 4);
    if (!h_i || !d_i || !d_gg || !d_gd || !h_g || !h_d) goto done;
    for (int64_t i = 0; i < n; ++i)
        h_i[i] = (int64_t)rng_below(&seed, (uint64_t)n);
    if (copy_sync(b, d_i, h_i, (size_t)n * 8, PRIM_H2D) != 0) goto done;
    a.src = (PrimVec){PRIM_I32, n, c->d_a, NULL};
    a.d_idx = d_i;
    a.dst = (PrimVec){PRIM_I32, n, d_gg, NULL};
    const float g = time_twin(b, "gather", run_gather, NULL, &a);
    const float d = direct_done(
        b, "gather", prim_direct_gather(c->d_a, d_i, n, d_gd, b->stream, b->reps, err, sizeof err),
        err);
    int ok = -1;
    if (g >= 0 && d >= 0 && copy_sync(b, h_g, d_gg, (size_t)n * 4, PRIM_D2H) == 0 &&
        copy_sync(b, h_d, d_gd, (size_t)n * 4, PRIM_D2H) == 0) {
        ok = memcmp(h_g, h_d, (size_t)n * 4) == 0;
        for (int64_t i = 0; i < n && ok; ++i)
            ok = h_g[i] == c->h_a[h_i[i]];
    }
    table_row(b, "gather (i32 by random i64)", n, g, d, 1, 16.0 * (double)n, ok);
done:
    free(h_i);
    dev_free(b, d_i);
    dev_free(b, d_gg);
    dev_free(b, d_gd);
    free(h_g);
    free(h_d);
}

/* ---------------------------------------------------------- segreduce -- */

/* Arguments of run_seg: values, segment starts, their count, the sums. */
typedef struct SegArg {
    PrimVec val;
    const int64_t *d_starts;
    int64_t nseg;
    PrimVec out;
} SegArg;

/* One SUM segreduce twin call. */
static int run_seg(Bench *b, void *arg) {
    SegArg *s = arg;
    return prim_gpu_segreduce(&b->ctx, AGG_SUM, &s->val, s->d_starts, s->nseg, b->n, &s->out);
}

/* SUM of doubles over nseg equal-sized segments (nseg == 1: the global
 * aggregate against cub::DeviceReduce::Sum; otherwise against
 * cub::DeviceSegmentedReduce::Sum). Values are multiples of 1/4 in
 * -1000..1000, so every partial sum is exact and the twin, CUB and the host
 * must agree bit for bit whatever the order of additions. */
static void bench_segreduce(Bench *b, const double *h_v, const double *d_v, int64_t nseg) {
    const int64_t n = b->n;
    char err[256];
    SegArg s;
    int64_t *h_off = host_alloc(b, (size_t)(nseg + 1) * 8);
    double *h_sum = host_alloc(b, (size_t)nseg * 8);
    double *h_g = host_alloc(b, (size_t)nseg * 8), *h_d = host_alloc(b, (size_t)nseg * 8);
    uint8_t *h_valid = host_alloc(b, (size_t)nseg);
    int64_t *d_off = dev_alloc(b, (size_t)(nseg + 1) * 8);
    double *d_sg = dev_alloc(b, (size_t)nseg * 8), *d_sd = dev_alloc(b, (size_t)nseg * 8);
    uint8_t *d_valid = dev_alloc(b, (size_t)nseg);
    if (!h_off || !h_sum || !h_g || !h_d || !h_valid || !d_off || !d_sg || !d_sd || !d_valid)
        goto done;
    for (int64_t k = 0; k <= nseg; ++k)
        h_off[k] = k * n / nseg;
    for (int64_t k = 0; k < nseg; ++k) {
        double acc = 0.0;
        for (int64_t i = h_off[k]; i < h_off[k + 1]; ++i)
            acc += h_v[i];
        h_sum[k] = acc;
    }
    if (copy_sync(b, d_off, h_off, (size_t)(nseg + 1) * 8, PRIM_H2D) != 0) goto done;
    s.val = (PrimVec){PRIM_F64, n, (void *)d_v, NULL};
    s.d_starts = d_off;
    s.nseg = nseg;
    s.out = (PrimVec){PRIM_F64, nseg, d_sg, d_valid};
    const char *what = nseg == 1 ? "segreduce SUM 1 seg" : "segreduce SUM";
    const float g = time_twin(b, what, run_seg, NULL, &s);
    const float d = direct_done(
        b, what,
        nseg == 1 ? prim_direct_sum(d_v, n, d_sd, b->stream, b->reps, err, sizeof err)
                  : prim_direct_segsum(d_v, d_off, nseg, d_sd, b->stream, b->reps, err, sizeof err),
        err);
    int ok = -1;
    if (g >= 0 && d >= 0 && copy_sync(b, h_g, d_sg, (size_t)nseg * 8, PRIM_D2H) == 0 &&
        copy_sync(b, h_d, d_sd, (size_t)nseg * 8, PRIM_D2H) == 0 &&
        copy_sync(b, h_valid, d_valid, (size_t)nseg, PRIM_D2H) == 0) {
        ok = 1;
        for (int64_t k = 0; k < nseg && ok; ++k)
            ok = h_valid[k] == 1 && h_g[k] == h_sum[k] && h_d[k] == h_sum[k];
    }
    char name[64];
    if (nseg == 1)
        snprintf(name, sizeof name, "segreduce SUM f64, 1 segment");
    else
        snprintf(name, sizeof name, "segreduce SUM f64, %" PRId64 " segments", nseg);
    const double bytes = nseg == 1 ? 8.0 * (double)n : 8.0 * (double)n + 16.0 * (double)nseg;
    table_row(b, name, n, g, d, 1, bytes, ok);
done:
    free(h_off);
    free(h_sum);
    free(h_g);
    free(h_d);
    free(h_valid);
    dev_free(b, d_off);
    dev_free(b, d_sg);
    dev_free(b, d_sd);
    dev_free(b, d_valid);
}

/* Generates the double column and runs both segreduce rows. */
static void bench_segreduce_all(Bench *b) {
    const int64_t n = b->n;
    uint64_t seed = 4;
    double *h_v = host_alloc(b, (size_t)n * 8);
    double *d_v = dev_alloc(b, (size_t)n * 8);
    if (h_v && d_v) {
        for (int64_t i = 0; i < n; ++i)
            h_v[i] = ((double)rng_below(&seed, 8001) - 4000.0) / 4.0;
        if (copy_sync(b, d_v, h_v, (size_t)n * 8, PRIM_H2D) == 0) {
            bench_segreduce(b, h_v, d_v, 1);
            /* N/1000 segments of about 1000 rows (at least 2 when n allows). */
            const int64_t many = n / 1000 >= 2 ? n / 1000 : n >= 2 ? 2 : 1;
            bench_segreduce(b, h_v, d_v, many);
        }
    }
    free(h_v);
    dev_free(b, d_v);
}

/* --------------------------------------------------------------- join -- */

/* Arguments of run_join: probe (left) and build (right) keys, the pairs of
 * the last run (device memory, freed by reset_join). */
typedef struct JoinArg {
    PrimVec probe, build;
    int64_t nb;
    PrimPairs pairs;
} JoinArg;

/* Frees the previous run's pairs (outside the timed range). */
static void reset_join(Bench *b, void *arg) {
    JoinArg *j = arg;
    dev_free(b, j->pairs.left);
    dev_free(b, j->pairs.right);
    j->pairs.n = 0;
    j->pairs.left = j->pairs.right = NULL;
}

/* One join twin call: probe side left (n rows), build side right. */
static int run_join(Bench *b, void *arg) {
    JoinArg *j = arg;
    return prim_gpu_join(&b->ctx, &j->probe, b->n, &j->build, j->nb, &j->pairs);
}

/* join: nb distinct build keys (a shuffle of 0..nb-1), n probe keys
 * uniform in 0..nb*spread-1 (1 in spread match, at most once each). gqp
 * only; the pairs are checked on the host (count, order, equal keys). */
static void bench_join(Bench *b, int64_t nb, uint64_t spread) {
    const int64_t n = b->n;
    uint64_t seed = 5;
    JoinArg j;
    memset(&j, 0, sizeof j);
    int32_t *h_p = host_alloc(b, (size_t)n * 4), *h_b = host_alloc(b, (size_t)nb * 4);
    int32_t *d_p = dev_alloc(b, (size_t)n * 4), *d_b = dev_alloc(b, (size_t)nb * 4);
    int64_t *h_l = NULL, *h_r = NULL;
    if (!h_p || !h_b || !d_p || !d_b) goto done;
    for (int64_t i = 0; i < nb; ++i)
        h_b[i] = (int32_t)i;
    for (int64_t i = nb - 1; i > 0; --i) {
        const int64_t k = (int64_t)rng_below(&seed, (uint64_t)i + 1);
        const int32_t t = h_b[i];
        h_b[i] = h_b[k];
        h_b[k] = t;
    }
    int64_t expect = 0;
    for (int64_t i = 0; i < n; ++i) {
        h_p[i] = (int32_t)rng_below(&seed, spread * (uint64_t)nb);
        expect += h_p[i] < nb;
    }
    if (copy_sync(b, d_p, h_p, (size_t)n * 4, PRIM_H2D) != 0 ||
        copy_sync(b, d_b, h_b, (size_t)nb * 4, PRIM_H2D) != 0)
        goto done;
    j.probe = (PrimVec){PRIM_I32, n, d_p, NULL};
    j.build = (PrimVec){PRIM_I32, nb, d_b, NULL};
    j.nb = nb;
    const float g = time_twin(b, "join", run_join, reset_join, &j);
    int ok = -1;
    if (g >= 0) {
        const int64_t np = j.pairs.n;
        ok = np == expect;
        if (ok && np > 0) {
            h_l = host_alloc(b, (size_t)np * 8);
            h_r = host_alloc(b, (size_t)np * 8);
            if (!h_l || !h_r || copy_sync(b, h_l, j.pairs.left, (size_t)np * 8, PRIM_D2H) != 0 ||
                copy_sync(b, h_r, j.pairs.right, (size_t)np * 8, PRIM_D2H) != 0) {
                ok = -1;
            } else {
                for (int64_t k = 0; k < np && ok; ++k) {
                    const int64_t l = h_l[k], r = h_r[k];
                    ok = l >= 0 && l < n && r >= 0 && r < nb && h_p[l] == h_b[r] &&
                         (k == 0 || h_l[k - 1] < l);
                }
            }
        }
    }
    char name[64];
    snprintf(name, sizeof name, "join (build %" PRId64 ", probe n, 1/%d match)", nb, (int)spread);
    const double bytes = 4.0 * (double)n + 4.0 * (double)nb + 16.0 * (double)j.pairs.n;
    table_row(b, name, n, g, -1, 0, bytes, ok);
done:
    reset_join(b, &j);
    free(h_p);
    free(h_b);
    free(h_l);
    free(h_r);
    dev_free(b, d_p);
    dev_free(b, d_b);
}

/* ----------------------------------------------------------- denseagg -- */

/* Days of the date dimension of the denseagg benchmark (7 years). */
#define DA_DAYS 2556

/* Arguments of run_denseagg: the spec, its inputs and its outputs. */
typedef struct DenseArg {
    PrimDenseAgg spec;
    PrimVec in[5];
    PrimVec out[3];
} DenseArg;

/* One denseagg twin call. */
static int run_denseagg(Bench *b, void *arg) {
    DenseArg *a = arg;
    return prim_gpu_denseagg(&b->ctx, &a->spec, a->in, b->n, a->out);
}

/* denseagg on SSB Q1.1's shape: four int32 columns of n rows (price
 * 90000..10^7, discount 0..10, quantity 1..50, order date 0..2555),
 * SUM(price * discount) WHERE discount BETWEEN 1 AND 3 AND quantity < 25
 * AND the date joins a keymap holding one year's 365 days; one group.
 * Checked against the host's count and sum; the floor (direct column) is
 * 16n bytes at the measured copy bandwidth. */
static void bench_denseagg(Bench *b) {
    const int64_t n = b->n;
    uint64_t seed = 6;
    DenseArg a;
    memset(&a, 0, sizeof a);
    int32_t *h_c[4] = {NULL, NULL, NULL, NULL}, *d_c[4] = {NULL, NULL, NULL, NULL};
    int64_t *h_map = host_alloc(b, DA_DAYS * sizeof(int64_t));
    int64_t *d_map = dev_alloc(b, DA_DAYS * sizeof(int64_t)), *d_out = dev_alloc(b, 3 * 8);
    int64_t h_out[3] = {-1, -1, -1}, rows = 0;
    uint64_t sum = 0;
    if (!h_map || !d_map || !d_out) goto done;
    for (int k = 0; k < 4; ++k) {
        h_c[k] = host_alloc(b, (size_t)n * 4);
        d_c[k] = dev_alloc(b, (size_t)n * 4);
        if (!h_c[k] || !d_c[k]) goto done;
    }
    for (int64_t d = 0; d < DA_DAYS; ++d)
        h_map[d] = d >= 365 && d < 730 ? d : -1;
    for (int64_t i = 0; i < n; ++i) {
        h_c[0][i] = 90000 + (int32_t)rng_below(&seed, 9910001);
        h_c[1][i] = (int32_t)rng_below(&seed, 11);
        h_c[2][i] = 1 + (int32_t)rng_below(&seed, 50);
        h_c[3][i] = (int32_t)rng_below(&seed, DA_DAYS);
        if (h_c[1][i] >= 1 && h_c[1][i] <= 3 && h_c[2][i] < 25 && h_map[h_c[3][i]] >= 0) {
            sum += (uint64_t)h_c[0][i] * (uint64_t)h_c[1][i];
            rows++;
        }
    }
    for (int k = 0; k < 4; ++k)
        if (copy_sync(b, d_c[k], h_c[k], (size_t)n * 4, PRIM_H2D) != 0) goto done;
    if (copy_sync(b, d_map, h_map, DA_DAYS * sizeof(int64_t), PRIM_H2D) != 0) goto done;
    for (int k = 0; k < 4; ++k)
        a.in[k] = (PrimVec){PRIM_I32, n, d_c[k], NULL};
    a.in[4] = (PrimVec){PRIM_I64, DA_DAYS, d_map, NULL};
    for (int k = 0; k < 3; ++k)
        a.out[k] = (PrimVec){PRIM_I64, 1, d_out + k, NULL};
    PrimDenseAgg *s = &a.spec;
    s->rows = -1;
    s->nranges = 2;
    s->range_col[0] = 1;
    s->range_lo[0] = 1;
    s->range_hi[0] = 3;
    s->range_col[1] = 2;
    s->range_lo[1] = INT64_MIN;
    s->range_hi[1] = 24;
    s->ndims = 1;
    s->dim_fk[0] = 3;
    s->dim_map[0] = 4;
    s->dim_kmin[0] = 0;
    s->dim_range[0] = DA_DAYS;
    s->naggs = 1;
    s->agg[0] = AGG_SUM;
    s->val_a[0] = 0;
    s->val_b[0] = 1;
    s->val_op[0] = '*';
    s->ngroups = 1;
    const float g = time_twin(b, "denseagg", run_denseagg, NULL, &a);
    char err[256];
    double d2d = 0, h2d = 0, d2h = 0;
    float floor_ms = -1;
    if (prim_gpu_bandwidth((size_t)256 << 20, &d2d, &h2d, &d2h, err, sizeof err) == 0 && d2d > 0)
        floor_ms = (float)(16.0 * (double)n / (d2d * 1e6));
    else
        direct_done(b, "denseagg floor", -1, err);
    int ok = -1;
    if (g >= 0 && copy_sync(b, h_out, d_out, sizeof h_out, PRIM_D2H) == 0)
        ok = h_out[0] == rows && (uint64_t)h_out[1] == sum && h_out[2] == rows;
    table_row(b, "denseagg Q1.1 (direct = floor)", n, g, floor_ms, 1, 16.0 * (double)n, ok);
done:
    for (int k = 0; k < 4; ++k) {
        free(h_c[k]);
        dev_free(b, d_c[k]);
    }
    free(h_map);
    dev_free(b, d_map);
    dev_free(b, d_out);
}

/* ---------------------------------------------------------------- main -- */

/* Prints the usage line to stderr; returns 2. */
static int usage(void) {
    fprintf(stderr, "usage: bench_prim_gpu [--n N] [--reps R]\n");
    return 2;
}

int main(int argc, char **argv) {
    Bench b;
    memset(&b, 0, sizeof b);
    b.n = (int64_t)1 << 26;
    b.reps = 20;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            char *end = NULL;
            b.n = (int64_t)strtoll(argv[++i], &end, 10);
            if (!end || *end || b.n < 1) return usage();
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            char *end = NULL;
            const long r = strtol(argv[++i], &end, 10);
            if (!end || *end || r < 1 || r > 10000) return usage();
            b.reps = (int)r;
        } else {
            return usage();
        }
    }
    if (!prim_gpu_available()) {
        printf("no CUDA device\n");
        return 0;
    }
    char dev[256];
    prim_gpu_describe(dev, sizeof dev);
    b.stream = prim_gpu_stream_create();
    if (!b.stream) {
        fprintf(stderr, "Device Error: cannot create a stream\n");
        return 1;
    }
    b.ctx.nthreads = 1;
    b.ctx.stream = b.stream;
    b.ctx.alloc = bench_alloc;
    b.ctx.free = bench_free;
    b.ctx.ud = b.stream;
    printf("bench_prim_gpu: %s; n = %" PRId64 " rows, median of %d runs after 1 warm-up\n\n", dev,
           b.n, b.reps);
    table_head();

    Cols c;
    if (cols_init(&b, &c) == 0) {
        if (bench_map(&b, &c) == 0) bench_scan(&b, &c);
        bench_select(&b, &c);
        bench_gather(&b, &c);
    }
    cols_free(&b, &c);
    bench_sort(&b);
    bench_segreduce_all(&b);
    bench_join(&b, JOIN_BUILD, 2);
    bench_join(&b, JOIN_BUILD_SMALL, 25);
    bench_denseagg(&b);

    char err[256];
    if (prim_gpu_device_sync(err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        b.bad = 1;
    }
    prim_gpu_stream_destroy(b.stream);
    return b.bad ? 1 : 0;
}
