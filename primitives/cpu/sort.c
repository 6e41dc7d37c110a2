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

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Order-preserving images of a key's row i, ascending (the caller inverts
 * them for descending), one function per type so that the range sort's
 * loops run without a type switch per row: U8 / I32 with the sign bit
 * flipped, I64 the same in 64 bits, floats with -0.0 read as 0.0 and
 * negative values' bits inverted, others' sign bit set. 32-bit images fit
 * in the low 32 bits. */
static inline uint64_t tk_u8(const void *d, int64_t i) {
    return (uint32_t)((const uint8_t *)d)[i] ^ 0x80000000u;
}
static inline uint64_t tk_i32(const void *d, int64_t i) {
    return (uint32_t)((const int32_t *)d)[i] ^ 0x80000000u;
}
static inline uint64_t tk_i64(const void *d, int64_t i) {
    return (uint64_t)((const int64_t *)d)[i] ^ 0x8000000000000000ull;
}
static inline uint64_t tk_f32(const void *d, int64_t i) {
    float f = ((const float *)d)[i];
    uint32_t b;
    if (f == 0.0f) f = 0.0f; /* -0.0 equals 0.0 */
    memcpy(&b, &f, sizeof b);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
static inline uint64_t tk_f64(const void *d, int64_t i) {
    double f = ((const double *)d)[i];
    uint64_t b;
    if (f == 0.0) f = 0.0;
    memcpy(&b, &f, sizeof b);
    return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
}

/* The image of row i of a U8/I32/F32 key (32 bits). */
static inline uint32_t sort_key32(const PrimVec *key, int64_t i) {
    switch (key->type) {
    case PRIM_U8:
        return (uint32_t)tk_u8(key->data, i);
    case PRIM_I32:
        return (uint32_t)tk_i32(key->data, i);
    default:
        return (uint32_t)tk_f32(key->data, i);
    }
}

/* The image of row i of an I64/F64 key, or of a 32-bit key widened. */
static inline uint64_t sort_key64(const PrimVec *key, int64_t i) {
    switch (key->type) {
    case PRIM_I64:
        return tk_i64(key->data, i);
    case PRIM_F64:
        return tk_f64(key->data, i);
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

/* ----------------------------------------------------------- sort range --
 * prim_cpu_sort_range: rows [offset, offset + cnt) of prim_cpu_sort's
 * permutation without sorting every row (ORDER BY ... LIMIT / OFFSET, the
 * k-th value; seed 003's k-th largest by counting bits, here a radix
 * select over digits of TOPK_DIG bits).
 *
 * The first key's rows are split into its NULL block (first ascending,
 * last descending) and its values, as order-preserving 64-bit images e
 * (sort_key64, inverted when descending). A radix select narrows an
 * interval [L, H] of images that holds the images at the range's first and
 * last value ranks: each pass counts the next digit of the rows in [L, H]
 * whose higher bits are L's (the low end's group) or H's (the high end's),
 * picks the digits where the two ranks fall, and keeps the rows between.
 * It stops when every bit is decided or TOPK_STOP rows remain. The rows
 * whose image lies in [L, H] (plus the NULL block when the range reaches
 * it) are exactly the ranks [before, before + m) of the full order, a
 * superset of the range; they are gathered in row order and sorted on all
 * keys by prim_cpu_sort (stable, so ties keep row order as in the full
 * sort), and the range is read off. The result is identical to sorting
 * every row and slicing. */

#define TOPK_DIG 11
#define TOPK_BINS (1 << TOPK_DIG)
#define TOPK_STOP 4096
#define TOPK_MAX_KEYS 64

typedef struct TopkItem {
    uint64_t e;
    int64_t row;
} TopkItem;

typedef struct TopkJob {
    const PrimVec *key;
    uint64_t inv; /* ~0 for a descending first key */
    int64_t n;    /* rows of the column, or items when items != NULL */
    const TopkItem *items;
    /* pass 0: per thread NULLs, least and greatest image */
    int64_t *nnull;
    uint64_t *mn, *mx;
    /* histogram passes */
    uint64_t L, H;
    int top, lo_bit;
    int64_t (*hlo)[TOPK_BINS], (*hhi)[TOPK_BINS];
    int64_t (*h4)[4 * TOPK_BINS]; /* the column pass's interleaved tables */
    /* compaction: per thread counts then offsets; keep NULL rows too */
    int64_t *cnt;
    int keep_nulls, keep_values;
    TopkItem *out_items; /* or */
    int64_t *out_rows;
} TopkJob;

/* The bits of x at and above bit top (top 64: none). */
static inline uint64_t topk_above(uint64_t x, int top) {
    return top >= 64 ? 0 : (x >> top) << top;
}

/* LOOP(IMG) with IMG the image function of PrimType t. */
#define TOPK_BY_TYPE(t, LOOP)                                                                      \
    switch (t) {                                                                                   \
    case PRIM_U8:                                                                                  \
        LOOP(tk_u8);                                                                               \
        break;                                                                                     \
    case PRIM_I32:                                                                                 \
        LOOP(tk_i32);                                                                              \
        break;                                                                                     \
    case PRIM_I64:                                                                                 \
        LOOP(tk_i64);                                                                              \
        break;                                                                                     \
    case PRIM_F32:                                                                                 \
        LOOP(tk_f32);                                                                              \
        break;                                                                                     \
    default:                                                                                       \
        LOOP(tk_f64);                                                                              \
        break;                                                                                     \
    }

/* prim_parallel body: NULL count and least / greatest image of thread t's
 * chunk of the column. */
static void topk_bounds(void *arg, int t, int nt) {
    TopkJob *J = arg;
    int64_t lo = J->n * t / nt, hi = J->n * (t + 1) / nt, nn = 0;
    uint64_t mn = ~(uint64_t)0, mx = 0, inv = J->inv;
    const void *d = J->key->data;
    const uint8_t *v = J->key->valid;
#define BOUNDS(IMG)                                                                                \
    for (int64_t i = lo; i < hi; i++) {                                                            \
        if (v && !v[i]) {                                                                          \
            nn++;                                                                                  \
            continue;                                                                              \
        }                                                                                          \
        uint64_t e = IMG(d, i) ^ inv;                                                              \
        mn = e < mn ? e : mn;                                                                      \
        mx = e > mx ? e : mx;                                                                      \
    }
    TOPK_BY_TYPE(J->key->type, BOUNDS)
#undef BOUNDS
    J->nnull[t] = nn;
    J->mn[t] = mn;
    J->mx[t] = mx;
}

/* prim_parallel body: thread t's counts of digit [lo_bit, top) of the
 * elements in [L, H] in L's group (hlo) and in H's group (hhi). On the
 * column (the first pass: L and H are its bounds, one group) only hlo. */
static void topk_hist(void *arg, int t, int nt) {
    TopkJob *J = arg;
    int64_t lo = J->n * t / nt, hi = J->n * (t + 1) / nt;
    int64_t *hl = J->hlo[t], *hh = J->hhi[t];
    int64_t bins = (int64_t)1 << (J->top - J->lo_bit);
    memset(hl, 0, sizeof(int64_t) * (size_t)bins);
    memset(hh, 0, sizeof(int64_t) * (size_t)bins);
    uint64_t mask = (uint64_t)bins - 1, inv = J->inv;
    int sh = J->lo_bit;
    if (!J->items) {
        const void *d = J->key->data;
        const uint8_t *v = J->key->valid;
        /* four interleaved tables, so that runs of one digit (skewed
         * data) do not chain every increment on the one before */
        int64_t *h4 = J->h4[t];
        memset(h4, 0, sizeof(int64_t) * 4 * (size_t)bins);
#define HIST(IMG)                                                                                  \
    for (int64_t i = lo; i < hi; i++)                                                              \
        if (!v || v[i]) h4[(size_t)(i & 3) * (size_t)bins + (((IMG(d, i) ^ inv) >> sh) & mask)]++;
        TOPK_BY_TYPE(J->key->type, HIST)
#undef HIST
        for (int64_t g = 0; g < bins; g++)
            hl[g] = h4[g] + h4[bins + g] + h4[2 * bins + g] + h4[3 * bins + g];
        return;
    }
    uint64_t gl = topk_above(J->L, J->top), gh = topk_above(J->H, J->top);
    for (int64_t i = lo; i < hi; i++) {
        uint64_t e = J->items[i].e;
        if (e - J->L > J->H - J->L) continue;
        uint64_t g = topk_above(e, J->top);
        size_t dg = (size_t)((e >> sh) & mask);
        if (g == gl) hl[dg]++;
        if (g == gh) hh[dg]++;
    }
}

/* prim_parallel body: thread t writes the column's rows of its chunk kept
 * by the job from its offset cnt[t], in order: as items (image and row)
 * the values in [L, H]; as row ids (out_rows) also the NULL rows when
 * keep_nulls, the values only when keep_values. With count_only, counts
 * them into cnt[t] instead. */
static void topk_pick_rows(TopkJob *J, int t, int nt, int count_only) {
    int64_t lo = J->n * t / nt, hi = J->n * (t + 1) / nt, o = count_only ? 0 : J->cnt[t];
    uint64_t L = J->L, span = J->H - J->L, inv = J->inv;
    const void *d = J->key->data;
    const uint8_t *v = J->key->valid;
    TopkItem *it = J->out_items;
    int64_t *rows = J->out_rows;
    int kn = J->keep_nulls, kv = J->keep_values;
#define KEEP(IMG)                                                                                  \
    for (int64_t i = lo; i < hi; i++) {                                                            \
        if (v && !v[i]) {                                                                          \
            if (kn) {                                                                              \
                if (!count_only) rows[o] = i;                                                      \
                o++;                                                                               \
            }                                                                                      \
            continue;                                                                              \
        }                                                                                          \
        if (!kv) continue;                                                                         \
        uint64_t e = IMG(d, i) ^ inv;                                                              \
        if (e - L > span) continue; /* one test: outside [L, H] */                                 \
        if (!count_only) {                                                                         \
            if (it) {                                                                              \
                it[o].e = e;                                                                       \
                it[o].row = i;                                                                     \
            } else {                                                                               \
                rows[o] = i;                                                                       \
            }                                                                                      \
        }                                                                                          \
        o++;                                                                                       \
    }
    TOPK_BY_TYPE(J->key->type, KEEP)
#undef KEEP
    if (count_only) J->cnt[t] = o;
}

/* prim_parallel bodies of topk_pick_rows. */
static void topk_count(void *arg, int t, int nt) {
    topk_pick_rows(arg, t, nt, 1);
}
static void topk_write(void *arg, int t, int nt) {
    topk_pick_rows(arg, t, nt, 0);
}

/* The compaction of the column by job J on nt threads, into J->out_items
 * or J->out_rows. With have_counts, cnt[] already holds each thread's
 * count. Returns the number kept, or -1 (threads). */
static int64_t topk_compact(TopkJob *J, int nt, int have_counts) {
    if (!have_counts && prim_parallel(nt, topk_count, J) != 0) return -1;
    int64_t run = 0;
    for (int t = 0; t < nt; t++) {
        int64_t c = J->cnt[t];
        J->cnt[t] = run;
        run += c;
    }
    if (prim_parallel(nt, topk_write, J) != 0) return -1;
    return run;
}

/* Digit of rank r among the counts h[0..bins); *below = elements before it. */
static int64_t topk_pick(const int64_t *h, int64_t bins, int64_t r, int64_t *below) {
    int64_t cum = 0, d = 0;
    for (; d < bins - 1 && cum + h[d] <= r; d++)
        cum += h[d];
    *below = cum;
    return d;
}

/* GQP_TOPK: 0 (or off) always sorts every row (A/B timing); force takes
 * the sampled bound from 16,384 rows at any range and else the radix
 * select at any size and range, narrowed to a single row (so that small
 * random queries, tests/diff, and the SQL tests exercise every pass); else
 * 1. */
int prim_topk_mode(void) {
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("GQP_TOPK");
        v = !e                                             ? 1
            : strcmp(e, "0") == 0 || strcmp(e, "off") == 0 ? 0
            : strcmp(e, "force") == 0                      ? 2
                                                           : 1;
    }
    return v;
}

int64_t prim_range_rows(int64_t n, int64_t offset, int64_t limit) {
    if (offset < 0) offset = 0;
    int64_t c = offset < n ? n - offset : 0;
    return limit >= 0 && limit < c ? limit : c;
}

/* The full sort, then the range copied to perm. */
static int topk_full(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys, int64_t n,
                     int64_t offset, int64_t cnt, int64_t *perm) {
    int64_t *all = ctx->alloc(ctx->ud, sizeof(int64_t) * (size_t)n);
    if (!all) return sort_err(ctx, "out of memory (%zu bytes)", sizeof(int64_t) * (size_t)n);
    int rc = prim_cpu_sort(ctx, keys, desc, nkeys, n, all);
    if (rc == 0) memcpy(perm, all + offset, sizeof(int64_t) * (size_t)cnt);
    ctx->free(ctx->ud, all);
    return rc;
}

/* perm[0..cnt) = cand[lp[start .. start + cnt)] where lp sorts the m
 * candidate rows cand (ascending row ids) on every key (stable, so ties
 * keep row order as in the full sort). Returns 0 or -1. */
static int topk_finish(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys,
                       const int64_t *cand, int64_t m, int64_t start, int64_t cnt, int64_t *perm) {
    PrimVec gk[TOPK_MAX_KEYS];
    /* lp, then per key its values and validity, each 8-byte aligned */
    size_t seg = ((size_t)m + 7) & ~(size_t)7;
    size_t gbytes = sizeof(int64_t) * seg;
    for (int k = 0; k < nkeys; k++)
        gbytes += (prim_type_width(keys[k].type) + 1) * seg;
    char *gmem = ctx->alloc(ctx->ud, gbytes);
    if (!gmem) return sort_err(ctx, "out of memory (%zu bytes)", gbytes);
    int64_t *lp = (int64_t *)gmem;
    char *p = gmem + sizeof(int64_t) * seg;
    int rc = 0;
    for (int k = 0; k < nkeys && rc == 0; k++) {
        size_t w = prim_type_width(keys[k].type);
        gk[k].type = keys[k].type;
        gk[k].n = m;
        gk[k].data = p;
        p += w * seg;
        gk[k].valid = keys[k].valid ? (uint8_t *)p : NULL;
        p += seg;
        rc = prim_cpu_gather(ctx, &keys[k], cand, m, &gk[k]);
    }
    if (rc == 0) rc = prim_cpu_sort(ctx, gk, desc, nkeys, m, lp);
    if (rc == 0)
        for (int64_t i = 0; i < cnt; i++)
            perm[i] = cand[lp[start + i]];
    ctx->free(ctx->ud, gmem);
    return rc;
}

/* ------------------------------------------ the sampled threshold --
 * Ranks [0, K) with K at most n / 256: the first key of TOPK_SAMPLE rows
 * spread evenly over the column, sorted, give a bound thr past the K-th
 * key (with a margin); one pass keeps every row whose first key is at most
 * thr, ties included, which are then the first m ranks of the full order
 * (m >= K), in row order. A first key is (class, image): its NULL block's
 * place (0 before the values, 1 after) and its order-preserving image.
 * When fewer than K rows pass, or more than a thread's buffer holds, the
 * radix select runs instead (the answer is the same, only slower). */

#define TOPK_SAMPLE 8192

typedef struct TkKey {
    uint64_t c, e; /* class (0 / 1), image */
} TkKey;

static int tk_key_cmp(const void *x, const void *y) {
    const TkKey *a = x, *b = y;
    if (a->c != b->c) return a->c < b->c ? -1 : 1;
    return a->e < b->e ? -1 : a->e > b->e;
}

typedef struct TkSampJob {
    const PrimVec *key;
    uint64_t inv, cnull, cval;
    int64_t n, cap;
    TkKey thr;
    int64_t *buf; /* thread t's rows at buf + t * cap */
    int64_t *cnt;
    uint8_t *over;
} TkSampJob;

/* prim_parallel body: thread t keeps the rows of its chunk whose first key
 * is at most thr, up to cap (over[t] = 1 past it). */
static void tk_samp_pass(void *arg, int t, int nt) {
    TkSampJob *J = arg;
    int64_t lo = J->n * t / nt, hi = J->n * (t + 1) / nt, o = 0, cap = J->cap;
    int64_t *b = J->buf + (size_t)t * (size_t)cap;
    const void *d = J->key->data;
    const uint8_t *v = J->key->valid;
    uint64_t inv = J->inv, te = J->thr.e;
    int nulls_in = J->cnull <= J->thr.c; /* a NULL's key is (cnull, 0) */
    int all_vals = J->cval < J->thr.c;   /* every value is under thr */
    int some_vals = J->cval == J->thr.c; /* values up to te */
    J->over[t] = 0;
#define SAMP(IMG)                                                                                  \
    for (int64_t i = lo; i < hi; i++) {                                                            \
        int keep = (v && !v[i]) ? nulls_in : all_vals || (some_vals && (IMG(d, i) ^ inv) <= te);   \
        if (!keep) continue;                                                                       \
        if (o == cap) {                                                                            \
            J->over[t] = 1;                                                                        \
            break;                                                                                 \
        }                                                                                          \
        b[o++] = i;                                                                                \
    }
    TOPK_BY_TYPE(J->key->type, SAMP)
#undef SAMP
    J->cnt[t] = o;
}

/* The range [offset, offset + cnt) through the sampled threshold: 1 when
 * perm is written, 0 when the radix select must run, -1 on an error. */
static int topk_sampled(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys,
                        int64_t n, int64_t offset, int64_t cnt, int64_t *perm, int nt) {
    int64_t K = offset + cnt, S = TOPK_SAMPLE;
    const PrimVec *key = &keys[0];
    int desc0 = desc && desc[0];
    TkSampJob J;
    memset(&J, 0, sizeof J);
    J.key = key;
    J.inv = desc0 ? ~(uint64_t)0 : 0;
    J.cnull = desc0 ? 1 : 0;
    J.cval = desc0 ? 0 : 1;
    J.n = n;
    TkKey *smp = ctx->alloc(ctx->ud, sizeof(TkKey) * (size_t)S);
    if (!smp) return sort_err(ctx, "out of memory"), -1;
    const void *d = key->data;
    const uint8_t *v = key->valid;
    int64_t stride = n / S;
    for (int64_t i = 0; i < S; i++) {
        int64_t r = i * stride + stride / 2;
        if (v && !v[r]) {
            smp[i].c = J.cnull, smp[i].e = 0;
            continue;
        }
        uint64_t e = 0;
#define ONE(IMG) e = IMG(d, r)
        TOPK_BY_TYPE(key->type, ONE)
#undef ONE
        smp[i].c = J.cval, smp[i].e = e ^ J.inv;
    }
    qsort(smp, (size_t)S, sizeof(TkKey), tk_key_cmp);
    /* the sample index of rank K, a margin of four standard deviations,
     * then the last sample row equal to that bound (its ties pass too) */
    int64_t j = K * S / n;
    int64_t j2 = j + 4 * (int64_t)sqrt((double)(j + 1)) + 8, j3;
    if (j2 >= S) {
        ctx->free(ctx->ud, smp);
        return 0;
    }
    J.thr = smp[j2];
    for (j3 = j2; j3 + 1 < S && tk_key_cmp(&smp[j3 + 1], &J.thr) == 0; j3++)
        ;
    ctx->free(ctx->ud, smp);
    /* more than an eighth of the rows would pass (ties of the bound): the
     * radix select narrows them better */
    if ((j3 + 1) * 8 > S) return 0;
    /* a thread's buffer: twice the rows the sample says pass in all */
    double pass = (double)(j3 + 1) * (double)n / (double)S;
    J.cap = (int64_t)(2 * pass) + 4096;
    if (J.cap > n) J.cap = n;
    /* every thread's buffer holds the whole estimate (sorted data puts
     * every candidate in one chunk): past 8 bytes a row in all, the radix
     * select (16 bytes a kept row) is the cheaper one in memory */
    if ((double)J.cap * nt > (double)n + 4096.0 * nt) return 0;
    size_t bytes = sizeof(int64_t) * ((size_t)J.cap * (size_t)nt + (size_t)nt) + (size_t)nt;
    char *mem = ctx->alloc(ctx->ud, bytes);
    if (!mem) return 0; /* the radix select needs less */
    J.buf = (int64_t *)mem;
    J.cnt = J.buf + (size_t)J.cap * (size_t)nt;
    J.over = (uint8_t *)(J.cnt + nt);
    if (prim_parallel(nt, tk_samp_pass, &J) != 0) {
        ctx->free(ctx->ud, mem);
        return sort_err(ctx, "cannot start worker threads"), -1;
    }
    int64_t m = 0;
    int over = 0;
    for (int t = 0; t < nt; t++)
        m += J.cnt[t], over |= J.over[t];
    if (over || m < K) {
        ctx->free(ctx->ud, mem);
        return 0;
    }
    /* the threads' rows side by side, in row order */
    int64_t at = J.cnt[0];
    for (int t = 1; t < nt; t++) {
        memmove(J.buf + at, J.buf + (size_t)t * (size_t)J.cap, sizeof(int64_t) * (size_t)J.cnt[t]);
        at += J.cnt[t];
    }
    int rc = topk_finish(ctx, keys, desc, nkeys, J.buf, m, offset, cnt, perm);
    ctx->free(ctx->ud, mem);
    return rc == 0 ? 1 : -1;
}

/* See primitives.h. */
int prim_cpu_sort_range(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys,
                        int64_t n, int64_t offset, int64_t limit, int64_t *perm, int64_t *nout) {
    if (n < 0 || offset < 0 || nkeys < 0 || (nkeys > 0 && !keys) || !nout)
        return sort_err(ctx, "bad arguments");
    int64_t cnt = prim_range_rows(n, offset, limit);
    *nout = cnt;
    if (cnt == 0) return 0;
    if (!perm) return sort_err(ctx, "bad arguments");
    for (int k = 0; k < nkeys; k++)
        if (prim_type_width(keys[k].type) == 0 || !keys[k].data)
            return sort_err(ctx, "bad key vector %d", k);
    if (nkeys == 0) {
        for (int64_t i = 0; i < cnt; i++)
            perm[i] = offset + i;
        return 0;
    }
    /* the range is a quarter of the rows or more: the candidates' sort
     * would cost about what the full sort does */
    int mode = prim_topk_mode();
    if (mode == 0 || nkeys > TOPK_MAX_KEYS || (mode == 1 && (n < 256 || cnt > n / 4)))
        return topk_full(ctx, keys, desc, nkeys, n, offset, cnt, perm);
    int64_t stop = mode == 2 ? 1 : TOPK_STOP;
    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > SORT_MAX_THREADS) nt = SORT_MAX_THREADS;
    if (n < SORT_PAR_MIN_ROWS) nt = 1;
    /* (force: from 2 samples' rows at any range, so that the SQL tests
     * reach both paths) */
    if ((mode == 1 && n >= 65536 && offset + cnt <= n / 256) ||
        (mode == 2 && n >= 2 * TOPK_SAMPLE)) {
        int r = topk_sampled(ctx, keys, desc, nkeys, n, offset, cnt, perm, nt);
        if (r != 0) return r > 0 ? 0 : -1;
    }

    size_t hb = sizeof(int64_t) * TOPK_BINS * (size_t)nt;
    size_t small = sizeof(int64_t) * 3 * (size_t)nt + 6 * hb + sizeof(int64_t) * (size_t)nt;
    char *mem = ctx->alloc(ctx->ud, small);
    if (!mem) return sort_err(ctx, "out of memory (%zu bytes)", small);
    TopkJob J;
    memset(&J, 0, sizeof J);
    J.key = &keys[0];
    int desc0 = desc && desc[0];
    J.inv = desc0 ? ~(uint64_t)0 : 0;
    J.n = n;
    J.nnull = (int64_t *)mem;
    J.mn = (uint64_t *)(J.nnull + nt);
    J.mx = J.mn + nt;
    J.hlo = (int64_t(*)[TOPK_BINS])(J.mx + nt);
    J.hhi = (int64_t(*)[TOPK_BINS])((char *)J.hlo + hb);
    J.h4 = (int64_t(*)[4 * TOPK_BINS])((char *)J.hhi + hb);
    J.cnt = (int64_t *)((char *)J.h4 + 4 * hb);
    TopkItem *items = NULL;
    int64_t *cand = NULL;
    int rc = -1;

    if (prim_parallel(nt, topk_bounds, &J) != 0) goto threads;
    int64_t nnull = 0;
    uint64_t mn = ~(uint64_t)0, mx = 0;
    for (int t = 0; t < nt; t++) {
        nnull += J.nnull[t];
        mn = J.mn[t] < mn ? J.mn[t] : mn;
        mx = J.mx[t] > mx ? J.mx[t] : mx;
    }
    int64_t nvalid = n - nnull, last = offset + cnt - 1;
    /* the NULL block's ranks, and the value ranks [vlo, vhi] the range reaches */
    int64_t nfirst = desc0 ? 0 : nnull; /* ranks before the values */
    int null_hit = desc0 ? last >= nvalid : offset < nnull;
    int64_t vlo = offset - nfirst, vhi = last - nfirst;
    if (vlo < 0) vlo = 0;
    if (vhi > nvalid - 1) vhi = nvalid - 1;
    int val_hit = nvalid > 0 && vlo <= vhi;
    /* radix select: A = the values with image in [L, H], below = values under L */
    uint64_t L = mn, H = mx;
    int64_t asize = val_hit ? nvalid : 0, below = 0, rlo = vlo, rhi = vhi;
    int top = L == H ? 0 : 64 - __builtin_clzll(L ^ H);
    J.keep_values = 1;
    while (val_hit && top > 0 && asize > stop) {
        J.L = L, J.H = H, J.top = top;
        J.lo_bit = top > TOPK_DIG ? top - TOPK_DIG : 0;
        int64_t bins = (int64_t)1 << (top - J.lo_bit);
        if (prim_parallel(nt, topk_hist, &J) != 0) goto threads;
        int first = J.items == NULL;
        if (first) /* one group: hhi is hlo */
            for (int t = 0; t < nt; t++)
                memcpy(J.hhi[t], J.hlo[t], sizeof(int64_t) * (size_t)bins);
        for (int t = 1; t < nt; t++)
            for (int64_t d = 0; d < bins; d++) {
                J.hlo[0][d] += J.hlo[t][d];
                J.hhi[0][d] += J.hhi[t][d];
            }
        int64_t glo = 0, ghi = 0, blo, bhi;
        for (int64_t d = 0; d < bins; d++)
            glo += J.hlo[0][d], ghi += J.hhi[0][d];
        int64_t dlo = topk_pick(J.hlo[0], bins, rlo, &blo);
        int64_t dhi = topk_pick(J.hhi[0], bins, rhi - (asize - ghi), &bhi);
        uint64_t nL = topk_above(L, top) | ((uint64_t)dlo << J.lo_bit);
        uint64_t nH =
            topk_above(H, top) | ((uint64_t)dhi << J.lo_bit) | (((uint64_t)1 << J.lo_bit) - 1);
        int64_t nsize;
        if (topk_above(L, top) == topk_above(H, top)) {
            nsize = 0;
            for (int64_t d = dlo; d <= dhi; d++)
                nsize += J.hlo[0][d];
        } else {
            nsize = (glo - blo) + (asize - glo - ghi) + (bhi + J.hhi[0][dhi]);
        }
        below += blo, rlo -= blo, rhi -= blo;
        L = nL, H = nH, asize = nsize, top = J.lo_bit;
        /* keep the rows in [L, H] as items: from the column the first
         * time, then in place (each pass keeps a subset, in order) */
        J.L = L, J.H = H;
        if (!items) {
            items = ctx->alloc(ctx->ud, sizeof(TopkItem) * (size_t)(asize ? asize : 1));
            if (!items) {
                rc = sort_err(ctx, "out of memory (%zu bytes)", sizeof(TopkItem) * (size_t)asize);
                goto done;
            }
            /* each thread's kept rows: its counts of the digits picked
             * (thread 0's row now holds the sums: recount it) */
            for (int t = 0; t < nt; t++) {
                int64_t c = 0;
                const int64_t *h = t ? J.hhi[t] : NULL;
                for (int64_t d = dlo; d <= dhi; d++)
                    c += h ? h[d] : 0;
                J.cnt[t] = c;
            }
            int64_t others = 0;
            for (int t = 1; t < nt; t++)
                others += J.cnt[t];
            J.cnt[0] = asize - others;
            J.out_items = items;
            if (topk_compact(&J, nt, 1) != asize) goto threads;
            J.items = items;
            J.n = asize;
            J.key = NULL;
        } else {
            int64_t o = 0;
            for (int64_t i = 0; i < J.n; i++)
                if (items[i].e >= L && items[i].e <= H) items[o++] = items[i];
            if (o != asize) {
                rc = sort_err(ctx, "range select lost rows");
                goto done;
            }
            J.n = asize;
        }
    }
    /* the candidates, in row order: the kept items (no NULL block), else
     * the column's rows in [L, H] and the NULL block if reached */
    int64_t m;
    if (items && !null_hit) {
        cand = ctx->alloc(ctx->ud, sizeof(int64_t) * (size_t)(asize ? asize : 1));
        if (!cand) goto oom;
        for (int64_t i = 0; i < asize; i++)
            cand[i] = items[i].row;
        m = asize;
    } else {
        m = (null_hit ? nnull : 0) + asize;
        cand = ctx->alloc(ctx->ud, sizeof(int64_t) * (size_t)(m ? m : 1));
        if (!cand) goto oom;
        J.key = &keys[0];
        J.items = NULL;
        J.n = n;
        J.L = L, J.H = H;
        J.keep_nulls = null_hit;
        J.keep_values = val_hit;
        J.out_items = NULL;
        J.out_rows = cand;
        if (topk_compact(&J, nt, 0) != m) goto threads;
    }
    int64_t before = desc0 ? (val_hit ? below : nvalid) : (null_hit ? 0 : nnull + below);
    int64_t start = offset - before;
    if (start < 0 || start + cnt > m) {
        rc = sort_err(ctx, "range select lost rows");
        goto done;
    }
    if (topk_finish(ctx, keys, desc, nkeys, cand, m, start, cnt, perm) != 0) goto done;
    rc = 0;
    goto done;
oom:
    rc = sort_err(ctx, "out of memory");
    goto done;
threads:
    rc = sort_err(ctx, "cannot start worker threads");
done:
    if (cand) ctx->free(ctx->ud, cand);
    if (items) ctx->free(ctx->ud, items);
    ctx->free(ctx->ud, mem);
    return rc;
}
