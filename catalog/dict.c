/*
 * dict.c -- sorted string dictionaries (the "superstring" of seed 002):
 * building by hashing then sorting the distinct strings, lookups by binary
 * search.
 */
#include "catalog/cat_internal.h"

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

/* Free d and its arrays; NULL is a no-op. */
void cat_dict_free(CatDict *d) {
    if (!d) return;
    cat_host_free(d->bytes);
    cat_host_free(d->offsets);
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
    qsort(b.ents, (size_t)b.nents, sizeof *b.ents, dent_cmp);
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
