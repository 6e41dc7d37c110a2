/*
 * sort.c -- CPU twin of the sort primitive: a stable permutation that
 * orders rows by several keys, as successive stable LSD radix sorts from the
 * last key to the first (each pass stable, so earlier keys dominate).
 *
 * Every key is turned into an order-preserving unsigned integer:
 *   U8, I32        32 bits: value ^ 0x80000000 (sign bit flipped)
 *   I64            64 bits: value ^ sign bit
 *   F32 / F64      bits of the value with -0.0 read as 0.0; negative values
 *                  have all bits flipped, others the sign bit
 *   descending     all bits inverted
 *   NULL           0 (a constant, so NULL rows keep their relative order),
 *                  then a stable partition moves NULL rows first (ascending)
 *                  or last (descending), as SQLite orders them
 * A 32-bit key is packed with the row's position as (key << 32 | position)
 * and sorted on the upper four bytes; a 64-bit key (or any key when n does
 * not fit in 32 bits) is sorted as (key, position) pairs. Byte passes whose
 * byte is the same for all rows are skipped. Histograms and scatters run
 * in parallel over contiguous chunks, with per-chunk offsets in chunk
 * order, so the result does not depend on the thread count.
 */
#include "primitives/primitives.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SORT_PAR_MIN_ROWS 65536
#define SORT_MAX_THREADS 64

typedef struct SortKV {
    uint64_t k, v;
} SortKV;

/* Formats an error message into ctx->err and returns -1. */
static int sort_err(PrimCtx *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(ctx->err, sizeof ctx->err, "Primitive Error: sort: ");
    if (k < 0 || (size_t)k >= sizeof ctx->err) k = 0;
    vsnprintf(ctx->err + k, sizeof ctx->err - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

/* Returns the order-preserving 32-bit image of row i of a U8/I32/F32 key
 * (ascending; the caller inverts it for descending). */
static inline uint32_t sort_key32(const PrimVec *key, int64_t i) {
    switch (key->type) {
    case PRIM_U8:
        return (uint32_t)((const uint8_t *)key->data)[i] ^ 0x80000000u;
    case PRIM_I32:
        return (uint32_t)((const int32_t *)key->data)[i] ^ 0x80000000u;
    default: {
        float f = ((const float *)key->data)[i];
        uint32_t b;
        if (f == 0.0f) f = 0.0f; /* -0.0 equals 0.0 */
        memcpy(&b, &f, sizeof b);
        return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    }
    }
}

/* Returns the order-preserving 64-bit image of row i of an I64/F64 key,
 * or of a 32-bit key widened (ascending). */
static inline uint64_t sort_key64(const PrimVec *key, int64_t i) {
    switch (key->type) {
    case PRIM_I64:
        return (uint64_t)((const int64_t *)key->data)[i] ^ 0x8000000000000000ull;
    case PRIM_F64: {
        double f = ((const double *)key->data)[i];
        uint64_t b;
        if (f == 0.0) f = 0.0;
        memcpy(&b, &f, sizeof b);
        return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
    }
    default:
        return sort_key32(key, i);
    }
}

/* One radix sort over n elements (packed uint64 or SortKV pairs). */
typedef struct RadixJob {
    void *src, *dst;
    int kv; /* 0: uint64 elements keyed by themselves; 1: SortKV keyed by .k */
    int64_t n;
    int shift;
    int nt;
    int64_t (*hist)[256];     /* nt rows: per-chunk counts, then per-chunk offsets */
    int64_t (*ghist)[8][256]; /* nt rows: per-chunk counts of every byte */
} RadixJob;

/* prim_parallel body: thread t counts every byte of its chunk's keys into
 * ghist[t] (used to skip passes whose byte is constant). */
static void radix_ghist(void *arg, int t, int nt) {
    RadixJob *J = arg;
    int64_t lo = J->n * t / nt, hi = J->n * (t + 1) / nt;
    int64_t(*g)[256] = J->ghist[t];
    memset(g, 0, sizeof(int64_t) * 8 * 256);
    if (J->kv) {
        const SortKV *s = J->src;
        for (int64_t i = lo; i < hi; i++) {
            uint64_t k = s[i].k;
            for (int b = 0; b < 8; b++)
                g[b][(k >> (8 * b)) & 255]++;
        }
    } else {
        const uint64_t *s = J->src;
        for (int64_t i = lo; i < hi; i++) {
            uint64_t k = s[i];
            for (int b = 4; b < 8; b++)
                g[b][(k >> (8 * b)) & 255]++;
        }
    }
}

/* prim_parallel body: thread t counts byte (shift) of its chunk into hist[t]. */
static void radix_count(void *arg, int t, int nt) {
    RadixJob *J = arg;
    int64_t lo = J->n * t / nt, hi = J->n * (t + 1) / nt;
    int64_t *h = J->hist[t];
    int sh = J->shift;
    memset(h, 0, sizeof(int64_t) * 256);
    if (J->kv) {
        const SortKV *s = J->src;
        for (int64_t i = lo; i < hi; i++)
            h[(s[i].k >> sh) & 255]++;
    } else {
        const uint64_t *s = J->src;
        for (int64_t i = lo; i < hi; i++)
            h[(s[i] >> sh) & 255]++;
    }
}

/* prim_parallel body: thread t moves its chunk to dst at its offsets. */
static void radix_scatter(void *arg, int t, int nt) {
    RadixJob *J = arg;
    int64_t lo = J->n * t / nt, hi = J->n * (t + 1) / nt;
    int64_t off[256];
    memcpy(off, J->hist[t], sizeof off);
    int sh = J->shift;
    if (J->kv) {
        const SortKV *s = J->src;
        SortKV *d = J->dst;
        for (int64_t i = lo; i < hi; i++)
            d[off[(s[i].k >> sh) & 255]++] = s[i];
    } else {
        const uint64_t *s = J->src;
        uint64_t *d = J->dst;
        for (int64_t i = lo; i < hi; i++) {
            uint64_t v = s[i];
            d[off[(v >> sh) & 255]++] = v;
        }
    }
}

/* Stable LSD radix sort of a (n elements) using b as scratch of the same
 * size; kv selects the element kind. Returns the buffer (a or b) that holds
 * the sorted elements, or NULL if threads could not be started. */
static void *radix_sort(void *a, void *b, int kv, int64_t n, int nt, int64_t (*hist)[256],
                        int64_t (*ghist)[8][256]) {
    RadixJob J = {a, b, kv, n, 0, nt, hist, ghist};
    if (prim_parallel(nt, radix_ghist, &J) != 0) return NULL;
    for (int byte = kv ? 0 : 4; byte < 8; byte++) {
        int trivial = 0;
        for (int d = 0; d < 256 && !trivial; d++) {
            int64_t c = 0;
            for (int t = 0; t < nt; t++)
                c += ghist[t][byte][d];
            trivial = c == n;
        }
        if (trivial) continue;
        J.shift = 8 * byte;
        if (prim_parallel(nt, radix_count, &J) != 0) return NULL;
        int64_t run = 0;
        for (int d = 0; d < 256; d++) {
            for (int t = 0; t < nt; t++) {
                int64_t c = hist[t][d];
                hist[t][d] = run;
                run += c;
            }
        }
        if (prim_parallel(nt, radix_scatter, &J) != 0) return NULL;
        void *tmp = J.src;
        J.src = J.dst;
        J.dst = tmp;
    }
    return J.src;
}

/* Fill / apply work for one key pass. */
typedef struct SortPass {
    const PrimVec *key;
    int desc;
    int first; /* 1: perm is the identity */
    int64_t n;
    const int64_t *perm; /* current order */
    int64_t *next;       /* receives the new order */
    uint64_t *packed;    /* 32-bit keys */
    SortKV *pairs;       /* 64-bit keys */
    const void *sorted;  /* result of radix_sort */
} SortPass;

/* prim_parallel body: builds the packed / pair elements of positions in
 * thread t's chunk (key of row perm[p], NULL rows as 0). */
static void sort_fill(void *arg, int t, int nt) {
    SortPass *P = arg;
    int64_t lo = P->n * t / nt, hi = P->n * (t + 1) / nt;
    const uint8_t *valid = P->key->valid;
    if (P->packed) {
        uint32_t inv = P->desc ? 0xffffffffu : 0;
        for (int64_t p = lo; p < hi; p++) {
            int64_t row = P->first ? p : P->perm[p];
            uint32_t k = (valid && !valid[row]) ? 0 : sort_key32(P->key, row) ^ inv;
            P->packed[p] = ((uint64_t)k << 32) | (uint64_t)p;
        }
    } else {
        uint64_t inv = P->desc ? ~(uint64_t)0 : 0;
        for (int64_t p = lo; p < hi; p++) {
            int64_t row = P->first ? p : P->perm[p];
            P->pairs[p].k = (valid && !valid[row]) ? 0 : sort_key64(P->key, row) ^ inv;
            P->pairs[p].v = (uint64_t)p;
        }
    }
}

/* prim_parallel body: next[q] = perm[position of the q-th sorted element]
 * for q in thread t's chunk. */
static void sort_apply(void *arg, int t, int nt) {
    SortPass *P = arg;
    int64_t lo = P->n * t / nt, hi = P->n * (t + 1) / nt;
    if (P->packed) {
        const uint64_t *s = P->sorted;
        for (int64_t q = lo; q < hi; q++) {
            int64_t p = (int64_t)(s[q] & 0xffffffffu);
            P->next[q] = P->first ? p : P->perm[p];
        }
    } else {
        const SortKV *s = P->sorted;
        for (int64_t q = lo; q < hi; q++) {
            int64_t p = (int64_t)s[q].v;
            P->next[q] = P->first ? p : P->perm[p];
        }
    }
}

/* Writes into out the stable partition of perm[0..n) by key validity:
 * NULL rows first when nulls_first, else last. */
static void sort_nulls(const uint8_t *valid, const int64_t *perm, int64_t n, int nulls_first,
                       int64_t *out) {
    int64_t nnull = 0;
    for (int64_t p = 0; p < n; p++)
        nnull += valid[perm[p]] == 0;
    int64_t inull = nulls_first ? 0 : n - nnull;
    int64_t ival = nulls_first ? nnull : 0;
    for (int64_t p = 0; p < n; p++) {
        if (valid[perm[p]])
            out[ival++] = perm[p];
        else
            out[inull++] = perm[p];
    }
}

/* See primitives.h. Temporary buffers (up to 2 x 16 bytes plus 8 bytes per
 * row) come from ctx->alloc and are freed before returning. nkeys == 0
 * gives the identity. Returns 0, or -1 with a message in ctx->err (bad key
 * vector, out of memory, threads). */
int prim_cpu_sort(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys, int64_t n,
                  int64_t *perm) {
    if (n < 0 || nkeys < 0 || (nkeys > 0 && !keys) || (n > 0 && !perm))
        return sort_err(ctx, "bad arguments");
    int wide = 0;
    for (int k = 0; k < nkeys; k++) {
        if (prim_type_width(keys[k].type) == 0 || (n > 0 && !keys[k].data))
            return sort_err(ctx, "bad key vector %d", k);
        if (keys[k].type == PRIM_I64 || keys[k].type == PRIM_F64) wide = 1;
    }
    if (n == 0) return 0;
    if (nkeys == 0 || n == 1) {
        for (int64_t i = 0; i < n; i++)
            perm[i] = i;
        return 0;
    }
    int big = n > (int64_t)0xffffffff;
    if (big) wide = 1;
    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > SORT_MAX_THREADS) nt = SORT_MAX_THREADS;
    if (n < SORT_PAR_MIN_ROWS) nt = 1;

    size_t esz = wide ? sizeof(SortKV) : sizeof(uint64_t);
    size_t hbytes = sizeof(int64_t) * 256 * (size_t)nt;
    size_t gbytes = sizeof(int64_t) * 8 * 256 * (size_t)nt;
    size_t bytes = 2 * esz * (size_t)n + sizeof(int64_t) * (size_t)n + hbytes + gbytes;
    char *mem = ctx->alloc(ctx->ud, bytes);
    if (!mem) return sort_err(ctx, "out of memory (%zu bytes)", bytes);
    char *bufa = mem, *bufb = mem + esz * (size_t)n;
    int64_t *tmp = (int64_t *)(mem + 2 * esz * (size_t)n);
    int64_t(*hist)[256] = (int64_t(*)[256])(tmp + n);
    int64_t(*ghist)[8][256] = (int64_t(*)[8][256])((char *)hist + hbytes);

    int rc = 0;
    int64_t *cur = perm, *next = tmp; /* current order lives in cur */
    for (int k = nkeys - 1; k >= 0; k--) {
        const PrimVec *key = &keys[k];
        int kwide = big || key->type == PRIM_I64 || key->type == PRIM_F64;
        int kdesc = desc && desc[k];
        SortPass P = {key, kdesc, k == nkeys - 1, n, cur, next, NULL, NULL, NULL};
        if (kwide)
            P.pairs = (SortKV *)bufa;
        else
            P.packed = (uint64_t *)bufa;
        if (prim_parallel(nt, sort_fill, &P) != 0) {
            rc = sort_err(ctx, "cannot start worker threads");
            break;
        }
        P.sorted = radix_sort(bufa, bufb, kwide, n, nt, hist, ghist);
        if (!P.sorted || prim_parallel(nt, sort_apply, &P) != 0) {
            rc = sort_err(ctx, "cannot start worker threads");
            break;
        }
        int64_t *t = cur;
        cur = next;
        next = t;
        if (key->valid) {
            int64_t nnull = 0;
            for (int64_t i = 0; i < n; i++)
                nnull += key->valid[i] == 0;
            if (nnull > 0) {
                sort_nulls(key->valid, cur, n, !kdesc, next);
                t = cur;
                cur = next;
                next = t;
            }
        }
    }
    if (rc == 0 && cur != perm) memcpy(perm, cur, sizeof(int64_t) * (size_t)n);
    ctx->free(ctx->ud, mem);
    return rc;
}
