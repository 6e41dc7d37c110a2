/*
 * stats.c -- per-column statistics: rows, NULLs, min, max and a distinct
 * count (exact below 2 * KMV_K distinct values, a K-minimum-values estimate
 * above; exact dictionary size for STRING).
 */
#include "catalog/cat_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* TUNING: K of the KMV sketch. Relative error is about 1/sqrt(K) = 1.6%;
 * distinct counts below 2K are exact (modulo 64-bit hash collisions). */
#define KMV_K 4096

/* splitmix64 finalizer: a bijective 64-bit mix. */
static uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

/* A K-minimum-values sketch: hashes below `thr` in an open-addressing set
 * (0 = empty slot) of 4K slots holding at most 2K entries. */
typedef struct Kmv {
    uint64_t *slots;
    int64_t count;
    uint64_t thr;
    int compacted;
} Kmv;

/* qsort comparator for uint64_t ascending. */
static int u64_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Move the set's hashes into out (size >= 2K), sorted; returns their
 * count. The set is left empty. */
static int64_t kmv_drain(Kmv *k, uint64_t *out) {
    int64_t n = 0;
    for (int64_t i = 0; i < 4 * KMV_K; i++) {
        if (k->slots[i]) {
            out[n++] = k->slots[i];
            k->slots[i] = 0;
        }
    }
    qsort(out, (size_t)n, sizeof *out, u64_cmp);
    k->count = 0;
    return n;
}

/* Insert hash h (assumed nonzero and below k->thr) unless present. */
static void kmv_put(Kmv *k, uint64_t h) {
    uint64_t mask = 4 * KMV_K - 1;
    uint64_t i = (h >> 20) & mask;
    while (k->slots[i]) {
        if (k->slots[i] == h) return;
        i = (i + 1) & mask;
    }
    k->slots[i] = h;
    k->count++;
}

/* Add one value's hash; compacts to the K smallest when 2K are held. */
static void kmv_add(Kmv *k, uint64_t h, uint64_t *scratch) {
    if (h == 0) h = 1;
    if (h >= k->thr) return;
    kmv_put(k, h);
    if (k->count >= 2 * KMV_K) {
        int64_t n = kmv_drain(k, scratch);
        k->thr = scratch[KMV_K - 1];
        k->compacted = 1;
        for (int64_t i = 0; i < KMV_K && i < n; i++)
            kmv_put(k, scratch[i]);
    }
}

/* Distinct count from the sketch: exact (up to 2K - 1 distinct values)
 * when it never compacted, else (K - 1) / (K-th smallest hash / 2^64). */
static int64_t kmv_estimate(Kmv *k, uint64_t *scratch) {
    int64_t n = kmv_drain(k, scratch);
    if (!k->compacted || n < KMV_K) return n;
    return (int64_t)((KMV_K - 1) * (18446744073709551616.0 / (double)scratch[KMV_K - 1]));
}

/* Hash bits of a double, with -0.0 folded into 0.0. */
static uint64_t hash_double(double d) {
    if (d == 0) d = 0;
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return mix64(b ^ 0x5851F42D4C957F2Dull);
}

/* Value of row i of column c as a double. */
static double value_at(const CatColumn *c, int64_t i) {
    switch (c->type) {
    case CAT_INT32:
    case CAT_DATE:
    case CAT_STRING:
        return ((const int32_t *)c->data)[i];
    case CAT_INT64:
        return (double)((const int64_t *)c->data)[i];
    case CAT_FLOAT32:
        return ((const float *)c->data)[i];
    case CAT_FLOAT64:
        return ((const double *)c->data)[i];
    case CAT_BOOL:
        return ((const uint8_t *)c->data)[i];
    case CAT_NULL:
        break;
    }
    return 0;
}

/* Hash of row i's value: integers hash their int64 value, floats their
 * double bits. */
static uint64_t hash_at(const CatColumn *c, int64_t i) {
    switch (c->type) {
    case CAT_INT64:
        return mix64((uint64_t)((const int64_t *)c->data)[i]);
    case CAT_FLOAT32:
    case CAT_FLOAT64:
        return hash_double(value_at(c, i));
    default:
        return mix64((uint64_t)(int64_t)value_at(c, i));
    }
}

/* Recompute c->stats from its data, validity and dictionary. On allocation
 * failure the distinct count falls back to the non-NULL row count. */
void cat_column_stats(CatColumn *c) {
    CatStats s = {0};
    s.rows = c->n;
    double mn = INFINITY, mx = -INFINITY;
    int any = 0;
    int want_kmv = c->type != CAT_STRING;
    Kmv k = {0};
    uint64_t *scratch = NULL;
    if (want_kmv) {
        k.slots = calloc(4 * KMV_K, sizeof *k.slots);
        scratch = malloc(4 * KMV_K * sizeof *scratch);
        k.thr = UINT64_MAX;
        if (!k.slots || !scratch) want_kmv = 0;
    }
    for (int64_t i = 0; i < c->n; i++) {
        if (c->valid && !c->valid[i]) {
            s.nulls++;
            continue;
        }
        double v = value_at(c, i);
        if (v == v) {
            any = 1;
            if (v < mn) mn = v;
            if (v > mx) mx = v;
        }
        if (want_kmv) kmv_add(&k, hash_at(c, i), scratch);
    }
    if (any) {
        s.has_minmax = 1;
        s.min = mn;
        s.max = mx;
    }
    int64_t nonnull = s.rows - s.nulls;
    if (c->type == CAT_STRING)
        s.distinct = c->dict ? c->dict->n : 0;
    else if (want_kmv)
        s.distinct = kmv_estimate(&k, scratch);
    else
        s.distinct = nonnull;
    if (s.distinct > nonnull) s.distinct = nonnull;
    if (s.distinct < 1 && nonnull > 0) s.distinct = 1;
    free(k.slots);
    free(scratch);
    c->stats = s;
}

/* Shared state for computing a table's column stats on several threads. */
typedef struct StatsJob {
    CatTable *t;
    int nthreads;
} StatsJob;

/* Worker i computes the stats of columns i, i + nthreads, ... */
static void stats_worker(void *arg, int i) {
    StatsJob *j = arg;
    for (int c = i; c < j->t->ncols; c += j->nthreads)
        cat_column_stats(&j->t->cols[c]);
}

/* Recompute the statistics of every column of t (columns in parallel when
 * the table is large). */
void cat_table_stats(CatTable *t) {
    if (!t) return;
    StatsJob j = {t, 1};
    if (t->nrows >= 100000) {
        j.nthreads = cat_nthreads();
        if (j.nthreads > t->ncols) j.nthreads = t->ncols;
    }
    cat_parallel(j.nthreads, stats_worker, &j);
}
