/*
 * dict.c -- sorted string dictionaries (the "superstring" of seed 002):
 * building by hashing then sorting the distinct strings, lookups by binary
 * search.
 */
#include "catalog/cat_internal.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* String `code` of d as a NUL-terminated C string; NULL when out of range. */
const char *cat_dict_str(const CatDict *d, int64_t code) {
    if (!d || code < 0 || code >= d->n) return NULL;
    return d->bytes + d->offsets[code];
}

/* Length in bytes of string `code` (without its NUL); -1 when out of range. */
int64_t cat_dict_len(const CatDict *d, int64_t code) {
    if (!d || code < 0 || code >= d->n) return -1;
    return d->offsets[code + 1] - d->offsets[code] - 1;
}

/* Dictionary order: memcmp on the common prefix, then the shorter first.
 * Returns <0, 0, >0. */
static int str_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    size_t n = alen < blen ? alen : blen;
    int c = n ? memcmp(a, b, n) : 0;
    if (c != 0) return c;
    return alen < blen ? -1 : alen > blen ? 1 : 0;
}

int cat_text_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    return str_cmp(a, alen, b, blen);
}

/* First code whose string is >= s[0..len); d->n when none (0 for NULL d). */
int64_t cat_dict_lower_bound(const CatDict *d, const char *s, size_t len) {
    if (!d) return 0;
    int64_t lo = 0, hi = d->n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        const char *m = d->bytes + d->offsets[mid];
        size_t mlen = (size_t)(d->offsets[mid + 1] - d->offsets[mid] - 1);
        if (str_cmp(m, mlen, s, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Code of s[0..len) in d, or -1 if absent. */
int64_t cat_dict_find(const CatDict *d, const char *s, size_t len) {
    int64_t c = cat_dict_lower_bound(d, s, len);
    if (!d || c >= d->n) return -1;
    const char *m = d->bytes + d->offsets[c];
    size_t mlen = (size_t)(d->offsets[c + 1] - d->offsets[c] - 1);
    return str_cmp(m, mlen, s, len) == 0 ? c : -1;
}

/* The hash index of an appendable dictionary: hashes[u] of string u (room
 * for cap strings) and an open-addressing table of codes (-1 = empty slot)
 * at most half full. */
struct CatDictIndex {
    int64_t cap;
    uint64_t *hashes;
    int32_t *slots;
    uint64_t mask;
};

/* Free an index; NULL is a no-op. */
static void index_free(struct CatDictIndex *x) {
    if (!x) return;
    free(x->hashes);
    free(x->slots);
    free(x);
}

/* Free d, its arrays and its index; NULL is a no-op. */
void cat_dict_free(CatDict *d) {
    if (!d) return;
    cat_host_free(d->bytes);
    cat_host_free(d->offsets);
    index_free(d->index);
    free(d);
}

/* A dictionary with no strings; NULL on allocation failure. */
CatDict *cat_dict_empty(void) {
    CatDict *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->bytes = cat_host_alloc(1);
    d->offsets = cat_host_alloc(sizeof(int64_t));
    if (!d->bytes || !d->offsets) {
        cat_dict_free(d);
        return NULL;
    }
    return d;
}

/* 64-bit hash of s[0..len) (8 bytes at a time, multiply-xorshift). */
static uint64_t str_hash(const char *s, size_t len) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (len * 0xFF51AFD7ED558CCDull);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    uint64_t w = 0;
    for (size_t k = 0; i + k < len; k++)
        w |= (uint64_t)(unsigned char)s[i + k] << (8 * k);
    h = (h ^ w) * 0x94D049BB133111EBull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h;
}

/* One distinct string while building. */
typedef struct DEnt {
    const char *p;
    size_t len;
    int32_t uid; /* index in first-seen order */
} DEnt;

/* qsort comparator on DEnt by dictionary order. */
static int dent_cmp(const void *a, const void *b) {
    const DEnt *x = a, *y = b;
    return str_cmp(x->p, x->len, y->p, y->len);
}

/* Build state: the distinct strings and an open-addressing table of their
 * indexes (-1 = empty slot). */
typedef struct DBuild {
    DEnt *ents;
    uint64_t *hashes;
    int64_t nents, capents;
    int32_t *slots;
    uint64_t mask;
} DBuild;

/* Double the slot table and reinsert every distinct string. Returns 0 or -1
 * (out of memory; the old table is kept). */
static int db_grow(DBuild *b) {
    uint64_t cap = (b->mask + 1) * 2;
    int32_t *slots = malloc(cap * sizeof *slots);
    if (!slots) return -1;
    memset(slots, 0xff, cap * sizeof *slots);
    for (int64_t u = 0; u < b->nents; u++) {
        uint64_t k = b->hashes[u] & (cap - 1);
        while (slots[k] >= 0)
            k = (k + 1) & (cap - 1);
        slots[k] = (int32_t)u;
    }
    free(b->slots);
    b->slots = slots;
    b->mask = cap - 1;
    return 0;
}

/* Index of s[0..len) among the distinct strings, adding it if new. Returns
 * the index or -1 (out of memory, or too many distinct strings). */
static int64_t db_intern(DBuild *b, const char *s, size_t len) {
    uint64_t h = str_hash(s, len);
    uint64_t k = h & b->mask;
    for (;;) {
        int32_t u = b->slots[k];
        if (u < 0) break;
        if (b->hashes[u] == h && b->ents[u].len == len && memcmp(b->ents[u].p, s, len) == 0)
            return u;
        k = (k + 1) & b->mask;
    }
    if (b->nents >= INT32_MAX) return -1;
    if (b->nents == b->capents) {
        int64_t cap = b->capents ? b->capents * 2 : 64;
        DEnt *e = realloc(b->ents, (size_t)cap * sizeof *e);
        if (!e) return -1;
        b->ents = e;
        uint64_t *hs = realloc(b->hashes, (size_t)cap * sizeof *hs);
        if (!hs) return -1;
        b->hashes = hs;
        b->capents = cap;
    }
    int64_t u = b->nents++;
    b->ents[u].p = s;
    b->ents[u].len = len;
    b->ents[u].uid = (int32_t)u;
    b->hashes[u] = h;
    b->slots[k] = (int32_t)u;
    if ((uint64_t)b->nents * 2 > b->mask + 1 && db_grow(b) != 0) return -1;
    return u;
}

/* See cat_internal.h. Distinct strings are found by hashing (O(n)), then
 * only the distinct ones are sorted, and codes are remapped to ranks. */
CatDict *cat_dict_build_masked(const char *const *strs, const size_t *lens, int64_t n,
                               const uint8_t *valid, int32_t *codes) {
    DBuild b = {0};
    CatDict *d = NULL;
    int32_t *rank = NULL;
    int32_t *tmp = NULL;
    if (!codes && n > 0) {
        tmp = malloc((size_t)n * sizeof *tmp);
        if (!tmp) return NULL;
        codes = tmp;
    }
    b.mask = 1023;
    b.slots = malloc((b.mask + 1) * sizeof *b.slots);
    if (!b.slots) goto done;
    memset(b.slots, 0xff, (b.mask + 1) * sizeof *b.slots);
    for (int64_t i = 0; i < n; i++) {
        if (valid && !valid[i]) {
            codes[i] = -1;
            continue;
        }
        int64_t u = db_intern(&b, strs[i], lens[i]);
        if (u < 0) goto done;
        codes[i] = (int32_t)u;
    }
    if (b.nents > 1) qsort(b.ents, (size_t)b.nents, sizeof *b.ents, dent_cmp);
    rank = malloc((size_t)(b.nents ? b.nents : 1) * sizeof *rank);
    d = calloc(1, sizeof *d);
    if (!rank || !d) goto fail;
    size_t total = 1;
    for (int64_t r = 0; r < b.nents; r++) {
        rank[b.ents[r].uid] = (int32_t)r;
        total += b.ents[r].len + 1;
    }
    d->n = b.nents;
    d->bytes = cat_host_alloc(total);
    d->offsets = cat_host_alloc((size_t)(b.nents + 1) * sizeof(int64_t));
    if (!d->bytes || !d->offsets) goto fail;
    int64_t off = 0;
    for (int64_t r = 0; r < b.nents; r++) {
        d->offsets[r] = off;
        if (b.ents[r].len) memcpy(d->bytes + off, b.ents[r].p, b.ents[r].len);
        off += (int64_t)b.ents[r].len;
        d->bytes[off++] = '\0';
    }
    d->offsets[b.nents] = off;
    for (int64_t i = 0; i < n; i++)
        codes[i] = codes[i] < 0 ? 0 : rank[codes[i]];
    goto done;
fail:
    cat_dict_free(d);
    d = NULL;
done:
    free(rank);
    free(tmp);
    free(b.slots);
    free(b.ents);
    free(b.hashes);
    return d;
}

/* Build a sorted dictionary of the n strings and their codes; see
 * catalog.h. NULL on allocation failure. */
CatDict *cat_dict_build(const char *const *strs, const size_t *lens, int64_t n, int32_t *codes) {
    return cat_dict_build_masked(strs, lens, n, NULL, codes);
}

/* ------------------------------------------- parallel building -- */

/* TUNING: columns with fewer rows are built on one thread. */
#define DICT_PARALLEL_MIN_ROWS ((int64_t)1 << 20)
/* TUNING: buckets per thread (balance) and sampled strings per bucket. */
#define DICT_BUCKETS_PER_THREAD 4
#define DICT_SAMPLES_PER_BUCKET 64

/* Shared state of cat_dict_build_par: the rows are cut into nthreads
 * chunks, the strings into nb buckets of consecutive dictionary ranges
 * (bucket b: splitter b - 1 <= s < splitter b), each bucket is deduplicated
 * and sorted alone, then placed after the buckets before it. */
typedef struct DPar {
    const char *const *strs;
    const size_t *lens;
    const uint8_t *valid;
    int32_t *codes;
    int64_t n;
    int nthreads, nb;
    DEnt *spl;       /* nb - 1 splitters */
    uint16_t *bk;    /* bucket of each row (unused for NULL rows) */
    int64_t *cnt;    /* [chunk * nb + b]: rows; then first slot in idx */
    int64_t *bstart; /* nb + 1: bucket b's rows are idx[bstart[b], bstart[b + 1]) */
    int64_t *idx;    /* row numbers grouped by bucket */
    DEnt **ents;     /* per bucket: its distinct strings, sorted */
    int64_t *nents;  /* per bucket: their count */
    int64_t *first;  /* nb + 1: bucket b's first code */
    size_t *nbytes;  /* per bucket: their bytes, a NUL after each */
    size_t *boff;    /* nb + 1: bucket b's first byte in the dictionary */
    CatDict *d;
    atomic_int oom;
} DPar;

static int64_t chunk_lo(const DPar *p, int i) {
    return p->n / p->nthreads * i;
}
static int64_t chunk_hi(const DPar *p, int i) {
    return i == p->nthreads - 1 ? p->n : p->n / p->nthreads * (i + 1);
}

/* Pass 1: each row's bucket (binary search among the splitters), counted
 * per chunk. */
static void dpar_bucket(void *arg, int i) {
    DPar *p = arg;
    int64_t *cnt = p->cnt + (int64_t)i * p->nb;
    for (int64_t r = chunk_lo(p, i); r < chunk_hi(p, i); r++) {
        if (p->valid && !p->valid[r]) {
            p->codes[r] = 0;
            continue;
        }
        int lo = 0, hi = p->nb - 1; /* first splitter > s */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (str_cmp(p->spl[mid].p, p->spl[mid].len, p->strs[r], p->lens[r]) > 0)
                hi = mid;
            else
                lo = mid + 1;
        }
        p->bk[r] = (uint16_t)lo;
        cnt[lo]++;
    }
}

/* Pass 2: row numbers scattered to their bucket's range of idx. */
static void dpar_scatter(void *arg, int i) {
    DPar *p = arg;
    int64_t *pos = p->cnt + (int64_t)i * p->nb;
    for (int64_t r = chunk_lo(p, i); r < chunk_hi(p, i); r++)
        if (!(p->valid && !p->valid[r])) p->idx[pos[p->bk[r]]++] = r;
}

/* Pass 3: buckets i, i + nthreads, ...: distinct strings (hash table),
 * sorted; each row's code becomes its string's rank within the bucket. */
static void dpar_sort(void *arg, int i) {
    DPar *p = arg;
    for (int b = i; b < p->nb; b += p->nthreads) {
        DBuild db = {0};
        int32_t *rank = NULL;
        db.mask = 1023;
        db.slots = malloc((db.mask + 1) * sizeof *db.slots);
        if (!db.slots) goto fail;
        memset(db.slots, 0xff, (db.mask + 1) * sizeof *db.slots);
        for (int64_t k = p->bstart[b]; k < p->bstart[b + 1]; k++) {
            int64_t r = p->idx[k];
            int64_t u = db_intern(&db, p->strs[r], p->lens[r]);
            if (u < 0) goto fail;
            p->codes[r] = (int32_t)u;
        }
        if (db.nents > 1) qsort(db.ents, (size_t)db.nents, sizeof *db.ents, dent_cmp);
        rank = malloc((size_t)(db.nents ? db.nents : 1) * sizeof *rank);
        if (!rank) goto fail;
        size_t bytes = 0;
        for (int64_t u = 0; u < db.nents; u++) {
            rank[db.ents[u].uid] = (int32_t)u;
            bytes += db.ents[u].len + 1;
        }
        for (int64_t k = p->bstart[b]; k < p->bstart[b + 1]; k++)
            p->codes[p->idx[k]] = rank[p->codes[p->idx[k]]];
        p->ents[b] = db.ents;
        p->nents[b] = db.nents;
        p->nbytes[b] = bytes;
        free(rank);
        free(db.slots);
        free(db.hashes);
        continue;
    fail:
        p->oom = 1;
        free(rank);
        free(db.slots);
        free(db.ents);
        free(db.hashes);
    }
}

/* Pass 4: buckets i, i + nthreads, ...: strings copied to their place in
 * the dictionary, codes shifted by the bucket's first code. */
static void dpar_place(void *arg, int i) {
    DPar *p = arg;
    CatDict *d = p->d;
    for (int b = i; b < p->nb; b += p->nthreads) {
        int64_t first = p->first[b];
        int64_t off = (int64_t)p->boff[b];
        for (int64_t u = 0; u < p->nents[b]; u++) {
            const DEnt *e = &p->ents[b][u];
            d->offsets[first + u] = off;
            if (e->len) memcpy(d->bytes + off, e->p, e->len);
            off += (int64_t)e->len;
            d->bytes[off++] = '\0';
        }
        if (first)
            for (int64_t k = p->bstart[b]; k < p->bstart[b + 1]; k++)
                p->codes[p->idx[k]] += (int32_t)first;
    }
}

/* See cat_internal.h. The same dictionary and codes as
 * cat_dict_build_masked, built on nthreads threads. */
CatDict *cat_dict_build_par(const char *const *strs, const size_t *lens, int64_t n,
                            const uint8_t *valid, int32_t *codes, int nthreads) {
    if (nthreads > 64) nthreads = 64;
    if (nthreads < 2 || n < DICT_PARALLEL_MIN_ROWS || !codes)
        return cat_dict_build_masked(strs, lens, n, valid, codes);
    DPar p = {0};
    CatDict *d = NULL;
    p.strs = strs;
    p.lens = lens;
    p.valid = valid;
    p.codes = codes;
    p.n = n;
    p.nthreads = nthreads;
    /* splitters: every DICT_SAMPLES_PER_BUCKET-th of a sorted, deduplicated
     * sample of rows spread evenly over the column */
    int want = nthreads * DICT_BUCKETS_PER_THREAD;
    int64_t ns = (int64_t)want * DICT_SAMPLES_PER_BUCKET, got = 0;
    p.spl = malloc((size_t)ns * sizeof *p.spl);
    if (!p.spl) goto done;
    for (int64_t k = 0; k < ns; k++) {
        int64_t r = n / ns * k;
        if (valid && !valid[r]) continue;
        p.spl[got].p = strs[r];
        p.spl[got].len = lens[r];
        p.spl[got].uid = 0;
        got++;
    }
    if (got > 1) qsort(p.spl, (size_t)got, sizeof *p.spl, dent_cmp);
    int64_t nd = 0; /* distinct sampled strings */
    for (int64_t k = 0; k < got; k++)
        if (nd == 0 || dent_cmp(&p.spl[nd - 1], &p.spl[k]) != 0) p.spl[nd++] = p.spl[k];
    p.nb = 1;
    for (int b = 1; b < want; b++) {
        int64_t k = nd * b / want;
        if (k > 0 && k < nd && (p.nb == 1 || dent_cmp(&p.spl[p.nb - 2], &p.spl[k]) < 0))
            p.spl[p.nb++ - 1] = p.spl[k];
    }
    p.bk = malloc((size_t)n * sizeof *p.bk);
    p.cnt = calloc((size_t)nthreads * (size_t)p.nb, sizeof *p.cnt);
    p.bstart = calloc((size_t)p.nb + 1, sizeof *p.bstart);
    p.idx = malloc((size_t)n * sizeof *p.idx);
    p.ents = calloc((size_t)p.nb, sizeof *p.ents);
    p.nents = calloc((size_t)p.nb, sizeof *p.nents);
    p.first = calloc((size_t)p.nb + 1, sizeof *p.first);
    p.nbytes = calloc((size_t)p.nb, sizeof *p.nbytes);
    p.boff = calloc((size_t)p.nb + 1, sizeof *p.boff);
    if (!p.bk || !p.cnt || !p.bstart || !p.idx || !p.ents || !p.nents || !p.first || !p.nbytes ||
        !p.boff)
        goto done;
    cat_parallel(nthreads, dpar_bucket, &p);
    /* cnt[chunk][b] becomes the first slot of that chunk's rows of bucket b */
    int64_t at = 0;
    for (int b = 0; b < p.nb; b++) {
        p.bstart[b] = at;
        for (int i = 0; i < nthreads; i++) {
            int64_t c = p.cnt[(int64_t)i * p.nb + b];
            p.cnt[(int64_t)i * p.nb + b] = at;
            at += c;
        }
    }
    p.bstart[p.nb] = at;
    cat_parallel(nthreads, dpar_scatter, &p);
    cat_parallel(nthreads, dpar_sort, &p);
    if (p.oom) goto done;
    for (int b = 0; b < p.nb; b++) {
        p.first[b + 1] = p.first[b] + p.nents[b];
        p.boff[b + 1] = p.boff[b] + p.nbytes[b];
    }
    if (p.first[p.nb] > INT32_MAX) goto done;
    d = calloc(1, sizeof *d);
    if (!d) goto done;
    d->n = p.first[p.nb];
    d->bytes = cat_host_alloc(p.boff[p.nb] + 1);
    d->offsets = cat_host_alloc((size_t)(d->n + 1) * sizeof(int64_t));
    if (!d->bytes || !d->offsets) {
        cat_dict_free(d);
        d = NULL;
        goto done;
    }
    p.d = d;
    cat_parallel(nthreads, dpar_place, &p);
    d->offsets[d->n] = (int64_t)p.boff[p.nb];
done:
    if (p.ents)
        for (int b = 0; b < p.nb; b++)
            free(p.ents[b]);
    free(p.spl);
    free(p.bk);
    free(p.cnt);
    free(p.bstart);
    free(p.idx);
    free(p.ents);
    free(p.nents);
    free(p.first);
    free(p.nbytes);
    free(p.boff);
    return d;
}
/* ------------------------------------------------------ appending -- */

/* Bytes of d's string u and its length. */
static const char *ent(const CatDict *d, int64_t u, size_t *len) {
    *len = (size_t)(d->offsets[u + 1] - d->offsets[u] - 1);
    return d->bytes + d->offsets[u];
}

/* A new index over d's n strings with room for cap (>= n) strings; NULL
 * when out of memory. */
static struct CatDictIndex *index_build(const CatDict *d, int64_t cap) {
    struct CatDictIndex *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    uint64_t nslots = 64;
    while (nslots < (uint64_t)cap * 2)
        nslots *= 2;
    x->cap = cap;
    x->mask = nslots - 1;
    x->hashes = malloc((size_t)(cap ? cap : 1) * sizeof *x->hashes);
    x->slots = malloc(nslots * sizeof *x->slots);
    if (!x->hashes || !x->slots) {
        index_free(x);
        return NULL;
    }
    memset(x->slots, 0xff, nslots * sizeof *x->slots);
    for (int64_t u = 0; u < d->n; u++) {
        size_t len;
        const char *p = ent(d, u, &len);
        uint64_t h = str_hash(p, len), k = h & x->mask;
        while (x->slots[k] >= 0)
            k = (k + 1) & x->mask;
        x->hashes[u] = h;
        x->slots[k] = (int32_t)u;
    }
    return x;
}

/* See cat_internal.h. Capacities grow at least twofold, so appending is
 * amortized O(1) per string. */
int cat_dict_reserve(CatDict *d, int64_t more_n, size_t more_bytes, char **old_bytes) {
    *old_bytes = NULL;
    int64_t need_n = d->n + more_n;
    if (more_n < 0 || need_n > INT32_MAX) return -1;
    int64_t used = d->offsets[d->n];
    int64_t cap_n = d->cap_n > d->n ? d->cap_n : d->n;
    int64_t cap_b = d->cap_bytes > used ? d->cap_bytes : used;
    int64_t need_b = used + (int64_t)more_bytes;
    int64_t *noff = NULL;
    char *nbytes = NULL;
    struct CatDictIndex *nx = NULL;
    if (need_n > cap_n) {
        cap_n = need_n > 2 * cap_n ? need_n : 2 * cap_n;
        if (cap_n < 16) cap_n = 16;
        if (cap_n > INT32_MAX) cap_n = INT32_MAX;
        noff = cat_host_alloc((size_t)(cap_n + 1) * sizeof *noff);
        if (!noff) return -1;
    }
    if (need_b > cap_b) {
        cap_b = need_b > 2 * cap_b ? need_b : 2 * cap_b;
        if (cap_b < 256) cap_b = 256;
        nbytes = cat_host_alloc((size_t)cap_b);
        if (!nbytes) goto oom;
    }
    if (!d->index || d->index->cap < need_n) {
        if (!(nx = index_build(d, cap_n))) goto oom;
    }
    /* nothing below fails */
    if (noff) {
        memcpy(noff, d->offsets, (size_t)(d->n + 1) * sizeof *noff);
        cat_host_free(d->offsets);
        d->offsets = noff;
    }
    d->cap_n = cap_n;
    if (nbytes) {
        if (used) memcpy(nbytes, d->bytes, (size_t)used);
        *old_bytes = d->bytes;
        d->bytes = nbytes;
    }
    d->cap_bytes = cap_b;
    if (nx) {
        index_free(d->index);
        d->index = nx;
    }
    return 0;
oom:
    cat_host_free(noff);
    cat_host_free(nbytes);
    return -1;
}

/* See cat_internal.h. */
int32_t cat_dict_append(CatDict *d, const char *s, size_t len) {
    struct CatDictIndex *x = d->index;
    uint64_t h = str_hash(s, len), k = h & x->mask;
    for (;;) {
        int32_t u = x->slots[k];
        if (u < 0) break;
        size_t ulen;
        const char *p = ent(d, u, &ulen);
        if (x->hashes[u] == h && ulen == len && (len == 0 || memcmp(p, s, len) == 0)) return u;
        k = (k + 1) & x->mask;
    }
    int64_t u = d->n;
    int64_t off = d->offsets[u];
    if (len) memcpy(d->bytes + off, s, len);
    d->bytes[off + (int64_t)len] = '\0';
    d->offsets[u + 1] = off + (int64_t)len + 1;
    if (!d->unsorted && u > 0) {
        size_t plen;
        const char *prev = ent(d, u - 1, &plen);
        if (str_cmp(prev, plen, s, len) > 0) d->unsorted = 1;
    }
    x->hashes[u] = h;
    x->slots[k] = (int32_t)u;
    d->n = u + 1;
    return (int32_t)u;
}

/* See cat_internal.h. */
int cat_dict_sort(CatDict *d, int32_t *codes, const uint8_t *valid, int64_t nrows) {
    if (!d->unsorted) return 0;
    int64_t n = d->n, used = d->offsets[n];
    int64_t cap_n = d->cap_n > n ? d->cap_n : n;
    int64_t cap_b = d->cap_bytes > used ? d->cap_bytes : used;
    DEnt *e = malloc((size_t)n * sizeof *e);
    int32_t *old2new = malloc((size_t)n * sizeof *old2new);
    int64_t *noff = cat_host_alloc((size_t)(cap_n + 1) * sizeof *noff);
    char *nbytes = cat_host_alloc((size_t)(cap_b ? cap_b : 1));
    uint64_t *nh =
        d->index ? malloc((size_t)(d->index->cap ? d->index->cap : 1) * sizeof *nh) : NULL;
    if (!e || !old2new || !noff || !nbytes || (d->index && !nh)) {
        free(e);
        free(old2new);
        cat_host_free(noff);
        cat_host_free(nbytes);
        free(nh);
        return -1;
    }
    for (int64_t u = 0; u < n; u++) {
        e[u].p = ent(d, u, &e[u].len);
        e[u].uid = (int32_t)u;
    }
    if (n > 1) qsort(e, (size_t)n, sizeof *e, dent_cmp);
    int64_t off = 0;
    for (int64_t r = 0; r < n; r++) {
        old2new[e[r].uid] = (int32_t)r;
        noff[r] = off;
        if (e[r].len) memcpy(nbytes + off, e[r].p, e[r].len);
        off += (int64_t)e[r].len;
        nbytes[off++] = '\0';
        if (nh) nh[r] = d->index->hashes[e[r].uid];
    }
    noff[n] = off;
    for (int64_t i = 0; i < nrows; i++)
        codes[i] = valid && !valid[i] ? 0 : old2new[codes[i]];
    if (d->index) {
        for (uint64_t k = 0; k <= d->index->mask; k++)
            if (d->index->slots[k] >= 0) d->index->slots[k] = old2new[d->index->slots[k]];
        free(d->index->hashes);
        d->index->hashes = nh;
    }
    cat_host_free(d->bytes);
    cat_host_free(d->offsets);
    d->bytes = nbytes;
    d->offsets = noff;
    d->cap_n = cap_n;
    d->cap_bytes = cap_b ? cap_b : 1;
    d->unsorted = 0;
    free(e);
    free(old2new);
    return 0;
}
