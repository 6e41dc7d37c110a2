/*
 * denseagg_cases.c -- the random dense-aggregate cases of
 * denseagg_cases.h.
 */
#include "denseagg_cases.h"

#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

/* Returns a uniform integer in lo..hi (inclusive, hi >= lo) from r. */
static int64_t rnd_in(const DaRand *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)(r->next() % (uint64_t)(hi - lo + 1));
}

/* A zeroed host vector of n values of type t, without validity. */
static PrimVec zero_vec(PrimType t, int64_t n) {
    PrimVec v;
    v.type = t;
    v.n = n;
    v.data = calloc((size_t)n + 1, prim_type_width(t));
    v.valid = NULL;
    cr_assert(v.data, "calloc");
    return v;
}

/* malloc allocator of the keymap's context. */
static void *da_alloc(void *ud, size_t bytes) {
    (void)ud;
    return malloc(bytes ? bytes : 1);
}

/* Frees a block from da_alloc. */
static void da_free(void *ud, void *p) {
    (void)ud;
    free(p);
}

/* Appends v to c's inputs; returns its index. */
static int da_add(DaCase *c, PrimVec v) {
    cr_assert_lt(c->nin, DA_MAXIN);
    c->in[c->nin] = v;
    return c->nin++;
}

/* A group-key column of n values with codes 1..card-1 (values from kmin),
 * about 5% NULLs and, when stray, about 0.5% values just outside the range
 * (the twins drop those rows). card == 1: all NULL but the strays. */
static PrimVec da_key_vec(const DaRand *r, PrimType t, int64_t n, int64_t kmin, int64_t card,
                          int stray) {
    PrimVec v = r->vec(t, n, kmin, card > 1 ? kmin + card - 2 : kmin, 5);
    for (int64_t i = 0; i < n; i++) {
        if (card == 1) v.valid[i] = 0;
        if (stray && r->next() % 200 == 0) {
            int64_t x = r->next() & 1 ? kmin - 1 : kmin + card - 1;
            if (t == PRIM_I32)
                ((int32_t *)v.data)[i] = (int32_t)x;
            else
                ((int64_t *)v.data)[i] = x;
            v.valid[i] = 1;
        }
    }
    return v;
}

void da_case(DaCase *c, const DaRand *r, int64_t nf, int gclass, int with_rows) {
    memset(c, 0, sizeof *c);
    PrimDenseAgg *s = &c->s;
    static const PrimType ity[3] = {PRIM_U8, PRIM_I32, PRIM_I64};
    /* six fact value columns: small ranges, one wide I64 (products past
     * 32 bits; sums of up to 2^19 of its products stay inside int64, since
     * an overflow is an error, tested on its own), NULLs in some */
    int fact[6];
    for (int k = 0; k < 6; k++) {
        PrimType t = ity[r->next() % 3];
        int64_t lo = t == PRIM_U8 ? 0 : -40, hi = t == PRIM_U8 ? 60 : 100;
        if (k == 5) {
            t = PRIM_I64;
            lo = -((int64_t)1 << 21);
            hi = (int64_t)1 << 21;
        }
        fact[k] = da_add(c, r->vec(t, nf, lo, hi, r->next() % 2 ? 8 : -1));
    }
    c->n = nf;
    s->rows = -1;
    if (with_rows) {
        c->n = nf * 3 / 4;
        PrimVec rv = zero_vec(PRIM_I64, c->n);
        for (int64_t i = 0; i < c->n; i++)
            ((int64_t *)rv.data)[i] = rnd_in(r, 0, nf - 1);
        s->rows = da_add(c, rv);
    }
    s->nranges = (int)(r->next() % 4);
    for (int f = 0; f < s->nranges; f++) {
        int k = (int)(r->next() % 5);
        s->range_col[f] = fact[k];
        s->range_lo[f] = rnd_in(r, -40, 30);
        s->range_hi[f] = s->range_lo[f] + rnd_in(r, r->next() % 8 ? 30 : -5, 120);
    }
    s->ndims = (int)(r->next() % 4);
    int64_t dn[PRIM_DA_MAX];
    for (int d = 0; d < s->ndims; d++) {
        /* dimension of dn rows with keys kbase + gap * row, about 85% of
         * its rows surviving its filter */
        dn[d] = rnd_in(r, 1, 3000);
        int64_t gap = 1 + (int64_t)(r->next() % 2), kbase = rnd_in(r, -1000, 1000),
                range = gap * dn[d];
        PrimVec dkey = zero_vec(PRIM_I64, dn[d]);
        int64_t *rows = malloc(sizeof(int64_t) * (size_t)dn[d]), nsel = 0;
        cr_assert(rows, "malloc");
        for (int64_t i = 0; i < dn[d]; i++) {
            ((int64_t *)dkey.data)[i] = kbase + gap * i;
            if (r->next() % 100 < 85) rows[nsel++] = i;
        }
        /* the map takes the filtered rows' keys */
        PrimVec skey = zero_vec(PRIM_I64, nsel);
        for (int64_t i = 0; i < nsel; i++)
            ((int64_t *)skey.data)[i] = ((int64_t *)dkey.data)[rows[i]];
        PrimVec map = zero_vec(PRIM_I64, range);
        PrimCtx kc;
        memset(&kc, 0, sizeof kc);
        kc.nthreads = 1;
        kc.alloc = da_alloc;
        kc.free = da_free;
        cr_assert_eq(prim_cpu_keymap(&kc, &skey, rows, nsel, kbase, range, map.data), 0, "%s",
                     kc.err);
        free(dkey.data);
        free(skey.data);
        free(rows);
        s->dim_map[d] = da_add(c, map);
        s->dim_kmin[d] = kbase;
        s->dim_range[d] = range;
        s->dim_fk[d] = da_add(c, r->vec(r->next() % 2 ? PRIM_I32 : PRIM_I64, nf, kbase - 3,
                                        kbase + range + 3, r->next() % 2 ? 3 : -1));
    }
    s->nkeys = gclass == 0 ? (int)(r->next() % 2) : 1 + (int)(r->next() % 3);
    static const int64_t mid[4] = {0, 5000, 70, 17}, big[4] = {0, 500000, 700, 80};
    s->ngroups = 1;
    for (int j = 0; j < s->nkeys; j++) {
        int64_t card = gclass == 0   ? 1
                       : gclass == 1 ? rnd_in(r, 2, 6)
                       : gclass == 2 ? mid[s->nkeys]
                                     : big[s->nkeys];
        s->key_card[j] = card;
        s->key_min[j] = rnd_in(r, -100, 100);
        s->key_dim[j] = s->ndims > 0 && r->next() % 2 ? (int)(r->next() % (uint64_t)s->ndims) : -1;
        int64_t len = s->key_dim[j] >= 0 ? dn[s->key_dim[j]] : nf;
        s->key_col[j] = da_add(c, da_key_vec(r, r->next() % 2 ? PRIM_I32 : PRIM_I64, len,
                                             s->key_min[j], card, (int)(r->next() % 2)));
        s->ngroups *= card;
    }
    s->naggs = (int)(r->next() % 7);
    static const char ops[3] = {'+', '-', '*'};
    for (int a = 0; a < s->naggs; a++) {
        s->agg[a] = (PrimAgg)(r->next() % 5);
        int novalue = (s->agg[a] == AGG_COUNT_STAR || s->agg[a] == AGG_COUNT) && r->next() % 2;
        s->val_a[a] = novalue ? -1 : fact[r->next() % 6];
        s->val_b[a] = !novalue && r->next() % 2 ? fact[r->next() % 6] : -1;
        s->val_op[a] = ops[r->next() % 3];
    }
}

void da_case_free(DaCase *c) {
    for (int k = 0; k < c->nin; k++) {
        free(c->in[k].data);
        free(c->in[k].valid);
    }
}
