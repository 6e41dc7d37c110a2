/*
 * stats.c -- per-column statistics: rows, NULLs, min, max, a distinct
 * count (exact below 2 * KMV_K distinct values, a K-minimum-values estimate
 * above; exact dictionary size for STRING) and an equi-depth histogram from
 * a deterministic sample (see CatHist in catalog.h).
 */
#include "catalog/cat_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Reorders a[0..n) (distinct values) so that a[k] is the (k+1)-th
 * smallest, the ones before it smaller and the ones after larger (Hoare's
 * selection, median of three): O(n) on average. */
static void select_u64(uint64_t *a, int64_t n, int64_t k) {
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];
        uint64_t p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < p)
                i++;
            while (a[j] > p)
                j--;
            if (i <= j) {
                uint64_t t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* Move the set's hashes into out (size >= 2K); returns their count n. When
 * n >= K, out[0..K) are the K smallest and out[K - 1] the largest of them
 * (selected, not sorted: sorting 8K hashes per compaction made a table's
 * statistics cost milliseconds per column). The set is left empty. */
static int64_t kmv_drain(Kmv *k, uint64_t *out) {
    int64_t n = 0;
    for (int64_t i = 0; i < 4 * KMV_K; i++) {
        if (k->slots[i]) {
            out[n++] = k->slots[i];
            k->slots[i] = 0;
        }
    }
    if (n >= KMV_K) select_u64(out, n, KMV_K - 1);
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
    case CAT_DECIMAL: /* the scaled integer: what the binder compares */
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
    case CAT_DECIMAL:
        return mix64((uint64_t)((const int64_t *)c->data)[i]);
    case CAT_FLOAT32:
    case CAT_FLOAT64:
        return hash_double(value_at(c, i));
    default:
        return mix64((uint64_t)(int64_t)value_at(c, i));
    }
}

/* ------------------------------------------------------------ histogram -- */

/* Order-preserving key of a double (no NaN): flip all bits of negatives,
 * set the sign bit of the rest, so unsigned order is numeric order. */
static uint64_t dbl_key(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return (b >> 63) ? ~b : b | 0x8000000000000000ull;
}

/* Inverse of dbl_key(). */
static double key_dbl(uint64_t k) {
    uint64_t b = (k >> 63) ? k & 0x7FFFFFFFFFFFFFFFull : ~k;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* Sort keys[0..n) ascending with an LSD radix sort of 8-bit digits, using
 * tmp (n entries) as scratch. One pass counts every digit; a digit all keys
 * share (the high bytes of small integers, the low ones of integers held
 * as doubles) costs no move. */
static void radix_sort_u64(uint64_t *keys, uint64_t *tmp, int64_t n) {
    static const int ndig = 8;
    int64_t count[8][256];
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < ndig; d++)
            count[d][(keys[i] >> (8 * d)) & 0xFF]++;
    for (int d = 0; d < ndig; d++) {
        int shift = 8 * d;
        if (count[d][(keys[0] >> shift) & 0xFF] == n) continue;
        int64_t pos = 0;
        for (int b = 0; b < 256; b++) {
            int64_t c = count[d][b];
            count[d][b] = pos;
            pos += c;
        }
        for (int64_t i = 0; i < n; i++)
            tmp[count[d][(keys[i] >> shift) & 0xFF]++] = keys[i];
        memcpy(keys, tmp, (size_t)n * sizeof *keys);
    }
}

/* 1 if row i of c is a non-NULL, non-NaN value; its value (-0.0 folded into
 * 0.0) in *v. */
static int sample_at(const CatColumn *c, int64_t i, double *v) {
    if (c->valid && !c->valid[i]) return 0;
    double d = value_at(c, i);
    if (d != d) return 0;
    *v = d == 0 ? 0 : d;
    return 1;
}

/* TUNING: rows tried per stratum before giving it up as NULL; columns that
 * are mostly NULL get a smaller sample rather than a longer scan. */
#define SAMPLE_PROBES 8

/* TUNING: strata ahead whose row is prefetched (each is a cache miss).
 * Measured on SSB SF 1 lineorder (6M rows, 17 columns, one thread): the
 * histograms add ~40 ms of CPU to ~450 ms of stats without, ~20 ms with. */
#define SAMPLE_AHEAD 16

/* The row sampled first from stratum j of CAT_HIST_SAMPLE strata over n >
 * CAT_HIST_SAMPLE rows: rows [j n / S, (j + 1) n / S) at a hashed offset
 * (not splitmix64's own step, j + golden ratio: data generators use it). */
static int64_t sample_row(int64_t n, int64_t j) {
    int64_t lo = j * n / CAT_HIST_SAMPLE, len = (j + 1) * n / CAT_HIST_SAMPLE - lo;
    uint64_t h = mix64((uint64_t)j * 0xD6E8FEB86659FD93ull ^ 0x2545F4914F6CDD1Dull);
    return lo + (int64_t)(h % (uint64_t)len);
}

/* Write the keys (dbl_key) of a deterministic sample of c's non-NULL,
 * non-NaN values into keys (CAT_HIST_SAMPLE entries) and return how many.
 * Columns of at most CAT_HIST_SAMPLE rows give every value. Longer ones are
 * cut into CAT_HIST_SAMPLE equal strata of rows and give one value from
 * each, at an offset hashed from the stratum number (a jittered systematic
 * sample: no period of the data lines up with it, and sorted data is
 * covered evenly); a NULL there moves on to the next rows of the stratum.
 * Cost O(CAT_HIST_SAMPLE * SAMPLE_PROBES), independent of c->n. */
static int64_t sample_keys(const CatColumn *c, uint64_t *keys) {
    int64_t ns = 0;
    double v;
    if (c->n <= CAT_HIST_SAMPLE) {
        for (int64_t i = 0; i < c->n; i++)
            if (sample_at(c, i, &v)) keys[ns++] = dbl_key(v);
        return ns;
    }
    size_t w = cat_type_width(c->type);
    for (int64_t j = 0; j < CAT_HIST_SAMPLE; j++) {
        if (j + SAMPLE_AHEAD < CAT_HIST_SAMPLE)
            __builtin_prefetch((const char *)c->data +
                               (size_t)sample_row(c->n, j + SAMPLE_AHEAD) * w);
        int64_t lo = j * c->n / CAT_HIST_SAMPLE, len = (j + 1) * c->n / CAT_HIST_SAMPLE - lo;
        int64_t off = sample_row(c->n, j) - lo;
        for (int p = 0; p < SAMPLE_PROBES && p < len; p++) {
            if (sample_at(c, lo + (off + p) % len, &v)) {
                keys[ns++] = dbl_key(v);
                break;
            }
        }
    }
    return ns;
}

/* Equi-depth histogram of the ns > 0 sampled keys (sorted in place, tmp is
 * scratch of ns entries): bounds at ranks b * ns / B for b = 0 .. B - 1 and
 * ns - 1, duplicates merged, with the exact sample fractions below and up
 * to each bound and the distinct counts between bounds (CatHist). Returns a
 * malloc'ed block the caller owns, or NULL when out of memory. */
static CatHist *hist_build(uint64_t *keys, uint64_t *tmp, int64_t ns) {
    radix_sort_u64(keys, tmp, ns);
    double bound[CAT_HIST_BUCKETS + 1];
    int n = 0;
    for (int b = 0; b <= CAT_HIST_BUCKETS; b++) {
        int64_t r = b == CAT_HIST_BUCKETS ? ns - 1 : (int64_t)b * ns / CAT_HIST_BUCKETS;
        double v = key_dbl(keys[r]);
        if (n == 0 || v != bound[n - 1]) bound[n++] = v;
    }
    CatHist *h = malloc(sizeof *h + 4 * (size_t)n * sizeof(double));
    if (!h) return NULL;
    h->n = n;
    h->nsample = ns;
    h->val = (double *)(h + 1);
    h->lt = h->val + n;
    h->le = h->lt + n;
    h->gap_ndv = h->le + n;
    int64_t i = 0, ndv = 0;
    for (int k = 0; k < n; k++) {
        int64_t d = 0; /* distinct keys between bound k - 1 and bound k */
        for (; i < ns && key_dbl(keys[i]) < bound[k]; i++)
            d += i == 0 || keys[i] != keys[i - 1];
        if (k > 0) h->gap_ndv[k - 1] = (double)d;
        ndv += d + 1;
        h->val[k] = bound[k];
        h->lt[k] = (double)i / (double)ns;
        while (i < ns && key_dbl(keys[i]) == bound[k])
            i++;
        h->le[k] = (double)i / (double)ns;
    }
    h->gap_ndv[n - 1] = 0;
    h->ndv = ndv;
    return h;
}

/* The histogram of c (see sample_keys and hist_build), or NULL when c has
 * no non-NULL value or memory runs out. The caller owns it. */
static CatHist *column_hist(const CatColumn *c) {
    uint64_t *keys = malloc(2 * (size_t)CAT_HIST_SAMPLE * sizeof *keys);
    if (!keys) return NULL;
    int64_t ns = sample_keys(c, keys);
    CatHist *h = ns > 0 ? hist_build(keys, keys + CAT_HIST_SAMPLE, ns) : NULL;
    free(keys);
    return h;
}

/* Recompute c->stats from its data, validity and dictionary, releasing the
 * previous histogram. On allocation failure the distinct count falls back
 * to the non-NULL row count and the histogram is left out (NULL). */
void cat_column_stats(CatColumn *c) {
    if (c->lazy) return; /* not read yet: computed on first use */
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
    if (nonnull > 0) s.hist = column_hist(c);
    free(c->stats.hist);
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

int cat_stats_exact(const CatStats *s) {
    return !s->has_minmax || (s->min >= -9007199254740992.0 && s->max <= 9007199254740992.0);
}

/* Recompute the statistics of every column of t (columns in parallel when
 * the table is large); a binary column not read yet is left for its first
 * use (cat_column_use). */
void cat_table_stats(CatTable *t) {
    if (!t) return;
    StatsJob j = {t, 1};
    if (t->nrows >= 100000) {
        j.nthreads = cat_nthreads();
        if (j.nthreads > t->ncols) j.nthreads = t->ncols;
    }
    cat_parallel(j.nthreads, stats_worker, &j);
}

/* ---------------------------------------------------- stats files -- */

/* A column's statistics as text (binary folders keep one <column>.stats
 * beside <column>.bin, so that loading a folder computes nothing):
 *
 *   gqp-stats 1
 *   rows R nulls N distinct D
 *   minmax HAS MIN MAX
 *   hist N NSAMPLE NDV          (N = 0: no histogram)
 *   VAL LT LE GAP_NDV           (N lines)
 *
 * Doubles are written with 17 significant digits (they read back
 * exactly). */

/* See cat_internal.h. */
int cat_stats_write(const CatColumn *c, const char *path, CatError *err) {
    const CatStats *s = &c->stats;
    const CatHist *h = s->hist;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return cat_err(err, "%s: out of memory", path);
    fprintf(f, "gqp-stats 1\nrows %lld nulls %lld distinct %lld\nminmax %d %.17g %.17g\n",
            (long long)s->rows, (long long)s->nulls, (long long)s->distinct, s->has_minmax, s->min,
            s->max);
    fprintf(f, "hist %d %lld %lld\n", h ? h->n : 0, h ? (long long)h->nsample : 0LL,
            h ? (long long)h->ndv : 0LL);
    for (int k = 0; h && k < h->n; k++)
        fprintf(f, "%.17g %.17g %.17g %.17g\n", h->val[k], h->lt[k], h->le[k], h->gap_ndv[k]);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || !buf) {
        free(buf);
        return cat_err(err, "%s: out of memory", path);
    }
    int rc = cat_write_text(path, buf, len, err);
    free(buf);
    return rc;
}

/* See cat_internal.h. */
int cat_stats_read(CatColumn *c, const char *path, int64_t rows) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    CatStats s;
    memset(&s, 0, sizeof s);
    long long r = 0, nn = 0, d = 0, ns = 0, ndv = 0;
    int ver = 0, n = 0, ok = 0;
    CatHist *h = NULL;
    if (fscanf(
            f,
            "gqp-stats %d rows %lld nulls %lld distinct %lld minmax %d %lg %lg hist %d %lld %lld",
            &ver, &r, &nn, &d, &s.has_minmax, &s.min, &s.max, &n, &ns, &ndv) == 10 &&
        ver == 1 && r == rows && nn >= 0 && nn <= r && n >= 0 && n <= CAT_HIST_BUCKETS + 1) {
        ok = 1;
        if (n > 0) {
            h = malloc(sizeof *h + 4 * (size_t)n * sizeof(double));
            if (!h) ok = 0;
        }
        if (h) {
            h->n = n;
            h->nsample = ns;
            h->ndv = ndv;
            h->val = (double *)(h + 1);
            h->lt = h->val + n;
            h->le = h->lt + n;
            h->gap_ndv = h->le + n;
            for (int k = 0; k < n && ok; k++)
                ok = fscanf(f, "%lg %lg %lg %lg", &h->val[k], &h->lt[k], &h->le[k],
                            &h->gap_ndv[k]) == 4;
        }
    }
    fclose(f);
    if (!ok) {
        free(h);
        return 0;
    }
    s.rows = r;
    s.nulls = nn;
    s.distinct = d;
    s.hist = h;
    free(c->stats.hist);
    c->stats = s;
    return 1;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int cat_column_unique(CatColumn *c) {
    if (c->stats.unique) return c->stats.unique;
    size_t w = cat_type_width(c->type);
    int ok = c->type == CAT_INT32 || c->type == CAT_INT64 || c->type == CAT_DATE ||
             c->type == CAT_DECIMAL || c->type == CAT_STRING;
    if (!ok || (w != 4 && w != 8) || (c->n > 0 && !c->data)) return 0;
    int64_t m = 0, lo = INT64_MAX, hi = INT64_MIN;
    int64_t *v = malloc(sizeof *v * (size_t)(c->n ? c->n : 1));
    if (!v) return 0;
    for (int64_t i = 0; i < c->n; i++) {
        if (c->valid && !c->valid[i]) continue;
        int64_t x = w == 8 ? ((const int64_t *)c->data)[i] : ((const int32_t *)c->data)[i];
        v[m++] = x;
        if (x < lo) lo = x;
        if (x > hi) hi = x;
    }
    int r = 1;
    if (m > 1 && (uint64_t)hi - (uint64_t)lo < (uint64_t)m * 8 + 64) {
        /* dense values: a bitmap */
        uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
        uint64_t *bits = calloc((size_t)((span + 63) / 64), sizeof *bits);
        if (!bits) {
            free(v);
            return 0;
        }
        for (int64_t i = 0; i < m && r > 0; i++) {
            uint64_t k = (uint64_t)v[i] - (uint64_t)lo;
            if (bits[k / 64] >> (k % 64) & 1) r = -1;
            bits[k / 64] |= (uint64_t)1 << (k % 64);
        }
        free(bits);
    } else if (m > 1) {
        qsort(v, (size_t)m, sizeof *v, cmp_i64);
        for (int64_t i = 1; i < m && r > 0; i++)
            if (v[i] == v[i - 1]) r = -1;
    }
    free(v);
    c->stats.unique = r;
    return r;
}

int cat_column_sorted(CatColumn *c) {
    if (c->stats.sorted) return c->stats.sorted;
    int ok = c->type == CAT_INT32 || c->type == CAT_INT64 || c->type == CAT_DATE ||
             c->type == CAT_DECIMAL;
    if (!ok || (c->n > 0 && !c->data)) return 0;
    int r = 1;
    for (int64_t i = 0; c->valid && i < c->n && r > 0; i++)
        if (!c->valid[i]) r = -1;
    if (cat_type_width(c->type) == 8) {
        const int64_t *v = c->data;
        for (int64_t i = 1; i < c->n && r > 0; i++)
            if (v[i] < v[i - 1]) r = -1;
    } else {
        const int32_t *v = c->data;
        for (int64_t i = 1; i < c->n && r > 0; i++)
            if (v[i] < v[i - 1]) r = -1;
    }
    c->stats.sorted = r;
    return r;
}
