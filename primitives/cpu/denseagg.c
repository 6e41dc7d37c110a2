/*
 * denseagg.c -- CPU twins of the star-join build side (keymap: a
 * direct-address map from a dimension key to its row) and of the fused
 * filter -> probe -> GROUP BY aggregation into a dense table (denseagg).
 *
 * denseagg works on batches of DA_BATCH fact rows per thread, column at a
 * time over a selection vector: each range filter and each probe compacts
 * the batch's surviving rows, so a column is read only for rows that are
 * still alive, and the aggregates then run over the survivors.
 *
 * Accumulators (one table of ngroups int64 per output, as primitives.h
 * lays out the outputs):
 *
 *   | entries = ngroups * nout        | tables                                |
 *   |---------------------------------|---------------------------------------|
 *   | <= DA_PRIVATE_MAX               | one private set per thread (thread 0  |
 *   |                                 | writes the outputs), merged by group  |
 *   |                                 | ranges in a second parallel pass      |
 *   | larger                          | the outputs themselves, updated with  |
 *   |                                 | relaxed __atomic builtins             |
 *
 * Both give the same integers whatever the thread count (wrapping sums,
 * counts, min and max are order-independent). A SUM (also AVG's) whose
 * running value overflows int64 anywhere (a row's a OP b, a partial sum or
 * the merge of two) fails with "integer overflow", as the sort plan's
 * segmented reduce and SQLite's SUM do; with values of both signs near the
 * limits, whether a partial sum overflows can depend on the summation
 * order, as it depends on the row order in SQLite. A spec with nocheck
 * (the planner proved from column bounds that nothing overflows) sums
 * without the tests.
 *
 * A row whose group code falls outside 0..key_card-1 (the planner promises
 * that it never does) is dropped rather than written out of bounds; the GPU
 * twin does the same, so the twins agree even then.
 */
#include "primitives/primitives.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Rows per batch of one thread. */
#define DA_BATCH 1024
/* Rows below which one thread does everything. TUNING: as select.c. */
#define DA_PAR_MIN_ROWS 65536
/* Largest accumulator set (int64 entries, all outputs together) that each
 * thread keeps privately. TUNING: 2^20 entries = 8 MiB per thread, about an
 * L2 + share of L3 on the CI machine; not measured. */
#define DA_PRIVATE_MAX ((int64_t)1 << 20)
#define DA_MAX_THREADS 256
#define DA_NOUT_MAX PRIM_DA_NOUT(PRIM_DA_MAX)

/* How an output combines values: sum (counts, SUM), min or max. */
enum { DA_ADD = 0, DA_MIN = 1, DA_MAX = 2 };

typedef struct DaJob {
    const PrimDenseAgg *s;
    const PrimVec *in;
    int64_t n, ngroups;
    int nout;
    int shared; /* 1: accumulate into the outputs with atomics */
    int64_t stride[PRIM_DA_MAX];
    int kind[DA_NOUT_MAX];     /* DA_ADD / DA_MIN / DA_MAX per output */
    int64_t init[DA_NOUT_MAX]; /* identity per output */
    int64_t *out[DA_NOUT_MAX]; /* output tables */
    int64_t *priv;             /* (nt - 1) private sets of nout * ngroups entries */
    int64_t next;              /* the next morsel's first row (__atomic) */
    int ovf;                   /* a SUM overflowed int64 (__atomic) */
} DaJob;

/* Rows a thread claims at a time. Shares are claimed, not fixed ranges:
 * the rows that pass a filter are often clustered (a date range, a key
 * range of a sorted table), and with fixed ranges one thread did all the
 * accumulating while the others only tested (placement sweep: `id < K` over
 * 1e7 rows on 16 threads, 10% passing, took 2.6x the time of 0.01%). TUNING: 16
 * batches, large enough that claiming costs nothing next to the rows. */
#define DA_MORSEL ((int64_t)DA_BATCH * 16)

static void da_rows(const DaJob *J, int64_t lo, int64_t hi, int64_t *const *T);

/* Runs morsels of the fact rows into T until none is left. */
static void da_morsels(DaJob *J, int64_t *const *T) {
    for (;;) {
        int64_t lo = __atomic_fetch_add(&J->next, DA_MORSEL, __ATOMIC_RELAXED);
        if (lo >= J->n) return;
        da_rows(J, lo, J->n - lo < DA_MORSEL ? J->n : lo + DA_MORSEL, T);
    }
}

/* Formats "Primitive Error: <what>: ..." into ctx->err and returns -1. */
static int da_err(PrimCtx *ctx, const char *what, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(ctx->err, sizeof ctx->err, "Primitive Error: %s: ", what);
    if (k < 0 || (size_t)k >= sizeof ctx->err) k = 0;
    vsnprintf(ctx->err + k, sizeof ctx->err - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

/* Returns 1 for the integer vector types denseagg and keymap accept. */
static int da_int_type(PrimType t) {
    return t == PRIM_U8 || t == PRIM_I32 || t == PRIM_I64;
}

/* Value i of an integer vector (U8, I32 or I64) as int64. */
static inline int64_t da_get(const PrimVec *v, int64_t i) {
    switch (v->type) {
    case PRIM_U8:
        return ((const uint8_t *)v->data)[i];
    case PRIM_I32:
        return ((const int32_t *)v->data)[i];
    default:
        return ((const int64_t *)v->data)[i];
    }
}

/* 1 when value i of v is NULL. */
static inline int da_null(const PrimVec *v, int64_t i) {
    return v->valid && !v->valid[i];
}

/* 1 when lo <= v < lo + range (range >= 0), exactly: once v >= lo the
 * unsigned difference is the true one, even where lo + range overflows. */
static inline int da_in(int64_t v, int64_t lo, int64_t range) {
    return v >= lo && (uint64_t)v - (uint64_t)lo < (uint64_t)range;
}

/* Checks that input k exists as an integer vector; what names its role. */
static int da_check_in(PrimCtx *ctx, const PrimVec *in, int k, const char *what, int j) {
    if (k < 0) return da_err(ctx, "denseagg", "%s %d: input index %d", what, j, k);
    if (!da_int_type(in[k].type))
        return da_err(ctx, "denseagg", "%s %d: input %d has type %d (integers only)", what, j, k,
                      (int)in[k].type);
    return 0;
}

/* Checks a denseagg spec against its inputs and outputs, for both twins
 * (the GPU twin calls it too: it reads only the host-side PrimVec fields).
 * Input indices must be >= 0 and name integer vectors (that they are below
 * the caller's input count is the caller's duty); counts within
 * 0..PRIM_DA_MAX; ngroups >= 1 and equal to the product of key_card (each
 * >= 1); keymaps I64 with at least dim_range values; value operators
 * '+', '-', '*'; aggregates COUNT_STAR..MAX; outputs PRIM_I64 with data.
 * Fills stride[0..nkeys) (last key 1). Returns 0 or -1 with a message in
 * ctx->err. */
int prim_denseagg_check(PrimCtx *ctx, const PrimDenseAgg *s, const PrimVec *in, int64_t n,
                        const PrimVec *out, int64_t *stride) {
    const char *w = "denseagg";
    if (!s || !out || n < 0 ||
        (!in && (s->rows >= 0 || s->nranges || s->ndims || s->nkeys || s->naggs)))
        return da_err(ctx, w, "bad arguments");
    if (s->nranges < 0 || s->nranges > PRIM_DA_MAX || s->ndims < 0 || s->ndims > PRIM_DA_MAX ||
        s->nkeys < 0 || s->nkeys > PRIM_DA_MAX || s->naggs < 0 || s->naggs > PRIM_DA_MAX)
        return da_err(ctx, w, "counts %d ranges, %d dims, %d keys, %d aggs (0..%d each)",
                      s->nranges, s->ndims, s->nkeys, s->naggs, PRIM_DA_MAX);
    if (s->ngroups < 1) return da_err(ctx, w, "%lld groups", (long long)s->ngroups);
    if (s->rows >= 0 && in[s->rows].type != PRIM_I64)
        return da_err(ctx, w, "row ids (input %d) must be PRIM_I64", s->rows);
    for (int f = 0; f < s->nranges; f++)
        if (da_check_in(ctx, in, s->range_col[f], "range", f) != 0) return -1;
    for (int d = 0; d < s->ndims; d++) {
        if (da_check_in(ctx, in, s->dim_fk[d], "dimension key", d) != 0) return -1;
        int m = s->dim_map[d];
        if (m < 0 || in[m].type != PRIM_I64)
            return da_err(ctx, w, "dimension %d: keymap (input %d) must be PRIM_I64", d, m);
        if (s->dim_range[d] < 0)
            return da_err(ctx, w, "dimension %d: key range %lld", d, (long long)s->dim_range[d]);
        if (in[m].n < s->dim_range[d])
            return da_err(ctx, w, "dimension %d: keymap has %lld values, range %lld", d,
                          (long long)in[m].n, (long long)s->dim_range[d]);
    }
    int64_t prod = 1;
    for (int j = s->nkeys - 1; j >= 0; j--) {
        if (da_check_in(ctx, in, s->key_col[j], "key", j) != 0) return -1;
        if (s->key_dim[j] < -1 || s->key_dim[j] >= s->ndims)
            return da_err(ctx, w, "key %d: dimension %d of %d", j, s->key_dim[j], s->ndims);
        if (s->key_card[j] < 1 || prod > INT64_MAX / s->key_card[j])
            return da_err(ctx, w, "key %d: cardinality %lld", j, (long long)s->key_card[j]);
        stride[j] = prod;
        prod *= s->key_card[j];
    }
    if (prod != s->ngroups)
        return da_err(ctx, w, "%lld groups, but the keys' cardinalities multiply to %lld",
                      (long long)s->ngroups, (long long)prod);
    for (int a = 0; a < s->naggs; a++) {
        PrimAgg g = s->agg[a];
        if (g < AGG_COUNT_STAR || g > AGG_MAX)
            return da_err(ctx, w, "aggregate %d: kind %d (COUNT_STAR..MAX only)", a, (int)g);
        if (s->val_a[a] < 0) {
            if (g != AGG_COUNT_STAR && g != AGG_COUNT)
                return da_err(ctx, w, "aggregate %d needs a value", a);
            continue;
        }
        if (da_check_in(ctx, in, s->val_a[a], "aggregate", a) != 0) return -1;
        if (s->val_b[a] >= 0) {
            if (da_check_in(ctx, in, s->val_b[a], "aggregate", a) != 0) return -1;
            char op = s->val_op[a];
            if (op != '+' && op != '-' && op != '*')
                return da_err(ctx, w, "aggregate %d: operator %d", a, (int)op);
        }
    }
    for (int k = 0; k < PRIM_DA_NOUT(s->naggs); k++)
        if (out[k].type != PRIM_I64 || !out[k].data)
            return da_err(ctx, w, "output %d must be PRIM_I64 with data", k);
    return 0;
}

/* Output k's identity and combining kind for spec s. */
static void da_kinds(const PrimDenseAgg *s, int *kind, int64_t *init) {
    kind[0] = DA_ADD;
    init[0] = 0;
    for (int a = 0; a < s->naggs; a++) {
        int k = s->agg[a] == AGG_MIN ? DA_MIN : s->agg[a] == AGG_MAX ? DA_MAX : DA_ADD;
        kind[1 + 2 * a] = k;
        init[1 + 2 * a] = k == DA_MIN ? INT64_MAX : k == DA_MAX ? INT64_MIN : 0;
        kind[2 + 2 * a] = DA_ADD;
        init[2 + 2 * a] = 0;
    }
}

/* Atomically folds v into *p with kind (relaxed: only the final values
 * matter, read after the threads are joined). */
static inline void da_atomic(int64_t *p, int kind, int64_t v) {
    if (kind == DA_ADD) {
        __atomic_fetch_add((uint64_t *)p, (uint64_t)v, __ATOMIC_RELAXED);
        return;
    }
    int64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (kind == DA_MIN ? v < cur : v > cur)
        if (__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) break;
}

/* Folds v into *p with kind (no other thread touches p). */
static inline void da_plain(int64_t *p, int kind, int64_t v) {
    if (kind == DA_ADD)
        *p = (int64_t)((uint64_t)*p + (uint64_t)v);
    else if (kind == DA_MIN ? v < *p : v > *p)
        *p = v;
}

/* Adds v to the SUM *p (wrapping), atomically when shared; returns 1 when
 * the int64 sum overflowed. */
static inline int da_sum(int64_t *p, int shared, int64_t v) {
    int64_t old =
        shared ? (int64_t)__atomic_fetch_add((uint64_t *)p, (uint64_t)v, __ATOMIC_RELAXED) : *p;
    int64_t s = (int64_t)((uint64_t)old + (uint64_t)v);
    if (!shared) *p = s;
    return ((old ^ s) & (v ^ s)) < 0;
}

/* Records a SUM overflow in J (any thread). */
static inline void da_overflow(const DaJob *J) {
    __atomic_store_n(&((DaJob *)J)->ovf, 1, __ATOMIC_RELAXED);
}

/* Folds column c at rows r[0..m) (no NULLs) into *acc by kind, with the
 * running value in a register (the one-group case). r == NULL: rows base,
 * base + 1, ... (nothing filtered: a loop the compiler vectorizes). Returns
 * 1 when a sum overflowed int64, else 0. */
static int da_fold1(const PrimVec *c, const int64_t *r, int64_t base, int m, int kind,
                    int64_t *acc) {
    int64_t x = *acc;
    int ovf = 0;
    if (c->type == PRIM_I32 && !r) {
        const int32_t *d = (const int32_t *)c->data + base;
        if (kind == DA_ADD) {
            int64_t u = 0; /* at most DA_BATCH 32-bit values: no overflow */
            for (int p = 0; p < m; p++)
                u += d[p];
            ovf = __builtin_add_overflow(x, u, &x);
        } else if (kind == DA_MIN) {
            int32_t y = INT32_MAX;
            for (int p = 0; p < m; p++)
                y = d[p] < y ? d[p] : y;
            x = m > 0 && y < x ? y : x;
        } else {
            int32_t y = INT32_MIN;
            for (int p = 0; p < m; p++)
                y = d[p] > y ? d[p] : y;
            x = m > 0 && y > x ? y : x;
        }
    } else if (c->type == PRIM_I32) {
        const int32_t *d = c->data;
        if (kind == DA_ADD) {
            int64_t u = 0; /* at most DA_BATCH 32-bit values: no overflow */
            for (int p = 0; p < m; p++)
                u += d[r[p]];
            ovf = __builtin_add_overflow(x, u, &x);
        } else if (kind == DA_MIN) {
            for (int p = 0; p < m; p++)
                x = d[r[p]] < x ? d[r[p]] : x;
        } else {
            for (int p = 0; p < m; p++)
                x = d[r[p]] > x ? d[r[p]] : x;
        }
    } else if (c->type == PRIM_I64 && kind == DA_ADD) {
        /* the batch's exact sum from its high and low 32-bit halves (each
         * sum fits in int64 for DA_BATCH values; loops the compiler
         * vectorizes), then one checked addition */
        const int64_t *d = c->data;
        int64_t hi = 0, lo = 0;
        if (r)
            for (int p = 0; p < m; p++)
                hi += d[r[p]] >> 32, lo += (int64_t)(d[r[p]] & 0xffffffff);
        else
            for (int p = 0; p < m; p++)
                hi += d[base + p] >> 32, lo += (int64_t)(d[base + p] & 0xffffffff);
        __int128 t = (__int128)x + (__int128)hi * 4294967296 + lo;
        ovf = t > INT64_MAX || t < INT64_MIN;
        x = (int64_t)t;
    } else {
        for (int p = 0; p < m; p++) {
            int64_t v = da_get(c, r ? r[p] : base + p);
            if (kind == DA_ADD)
                ovf |= __builtin_add_overflow(x, v, &x);
            else if (kind == DA_MIN ? v < x : v > x)
                x = v;
        }
    }
    *acc = x;
    return ovf;
}

/* Runs fact rows [lo, hi) into the tables T[0..nout) (atomically when
 * J->shared), one batch at a time. */
static void da_rows(const DaJob *J, int64_t lo, int64_t hi, int64_t *const *T) {
    const PrimDenseAgg *s = J->s;
    const PrimVec *in = J->in;
    int64_t r[DA_BATCH], g[DA_BATCH], rd[DA_BATCH];
    /* one group, nothing filtered, every aggregate COUNT(*) or a plain
     * column without NULLs: whole batches fold in registers, no row list */
    int whole = !J->shared && s->ngroups == 1 && s->rows < 0 && s->nranges == 0 && s->ndims == 0 &&
                s->nkeys == 0;
    for (int a = 0; a < s->naggs && whole; a++) {
        const PrimVec *va = s->val_a[a] >= 0 ? &in[s->val_a[a]] : NULL;
        whole = s->agg[a] == AGG_COUNT_STAR ||
                (va && s->val_b[a] < 0 && !va->valid &&
                 (s->agg[a] == AGG_SUM || s->agg[a] == AGG_MIN || s->agg[a] == AGG_MAX));
    }
    if (whole) {
        for (int64_t b0 = lo; b0 < hi; b0 += DA_BATCH) {
            int m = (int)(hi - b0 < DA_BATCH ? hi - b0 : DA_BATCH);
            T[0][0] += m;
            for (int a = 0; a < s->naggs; a++) {
                if (s->agg[a] == AGG_COUNT_STAR)
                    T[1 + 2 * a][0] += m;
                else if (da_fold1(&in[s->val_a[a]], NULL, b0, m, J->kind[1 + 2 * a],
                                  &T[1 + 2 * a][0]))
                    da_overflow(J);
                T[2 + 2 * a][0] += m;
            }
        }
        return;
    }
    for (int64_t b0 = lo; b0 < hi; b0 += DA_BATCH) {
        int m = (int)(hi - b0 < DA_BATCH ? hi - b0 : DA_BATCH);
        if (s->rows >= 0) {
            const int64_t *rows = (const int64_t *)in[s->rows].data;
            for (int p = 0; p < m; p++)
                r[p] = rows[b0 + p];
        } else {
            for (int p = 0; p < m; p++)
                r[p] = b0 + p;
        }
        for (int p = 0; p < m; p++)
            g[p] = 0;
        /* 1. range filters */
        for (int f = 0; f < s->nranges && m > 0; f++) {
            const PrimVec *c = &in[s->range_col[f]];
            const int64_t flo = s->range_lo[f], fhi = s->range_hi[f];
            int k = 0;
            for (int p = 0; p < m; p++) {
                int64_t v = da_get(c, r[p]);
                r[k] = r[p];
                k += !da_null(c, r[p]) && v >= flo && v <= fhi;
            }
            m = k;
        }
        /* 2. probes, each followed by the keys that read its dimension */
        for (int d = 0; d < s->ndims && m > 0; d++) {
            const PrimVec *fk = &in[s->dim_fk[d]];
            const int64_t *map = (const int64_t *)in[s->dim_map[d]].data;
            const int64_t kmin = s->dim_kmin[d], range = s->dim_range[d];
            int k = 0;
            for (int p = 0; p < m; p++) {
                if (da_null(fk, r[p])) continue;
                int64_t v = da_get(fk, r[p]);
                if (!da_in(v, kmin, range)) continue;
                int64_t row = map[(uint64_t)v - (uint64_t)kmin];
                if (row < 0) continue;
                r[k] = r[p];
                g[k] = g[p];
                rd[k] = row;
                k++;
            }
            m = k;
            for (int j = 0; j < s->nkeys && m > 0; j++) {
                if (s->key_dim[j] != d) continue;
                const PrimVec *c = &in[s->key_col[j]];
                const int64_t kmn = s->key_min[j], card = s->key_card[j], st = J->stride[j];
                k = 0;
                for (int p = 0; p < m; p++) {
                    int64_t code = 0;
                    if (!da_null(c, rd[p])) {
                        int64_t v = da_get(c, rd[p]);
                        if (!da_in(v, kmn, card - 1)) continue;
                        code = (int64_t)((uint64_t)v - (uint64_t)kmn) + 1;
                    }
                    r[k] = r[p];
                    rd[k] = rd[p];
                    g[k] = g[p] + code * st;
                    k++;
                }
                m = k;
            }
        }
        /* 3. keys on fact columns */
        for (int j = 0; j < s->nkeys && m > 0; j++) {
            if (s->key_dim[j] != -1) continue;
            const PrimVec *c = &in[s->key_col[j]];
            const int64_t kmn = s->key_min[j], card = s->key_card[j], st = J->stride[j];
            int k = 0;
            for (int p = 0; p < m; p++) {
                int64_t code = 0;
                if (!da_null(c, r[p])) {
                    int64_t v = da_get(c, r[p]);
                    if (!da_in(v, kmn, card - 1)) continue;
                    code = (int64_t)((uint64_t)v - (uint64_t)kmn) + 1;
                }
                r[k] = r[p];
                g[k] = g[p] + code * st;
                k++;
            }
            m = k;
        }
        if (m == 0) continue;
        /* rows b0 .. b0 + m - 1 untouched by any filter or probe */
        const int contig = s->rows < 0 && s->nranges == 0 && s->ndims == 0 && s->nkeys == 0;
        /* 4. aggregates */
        if (J->shared)
            for (int p = 0; p < m; p++)
                da_atomic(&T[0][g[p]], DA_ADD, 1);
        else
            for (int p = 0; p < m; p++)
                T[0][g[p]]++;
        for (int a = 0; a < s->naggs; a++) {
            const PrimAgg agg = s->agg[a];
            const int kind = J->kind[1 + 2 * a];
            int64_t *acc = T[1 + 2 * a], *nn = T[2 + 2 * a];
            const PrimVec *va = s->val_a[a] >= 0 ? &in[s->val_a[a]] : NULL;
            const PrimVec *vb = va && s->val_b[a] >= 0 ? &in[s->val_b[a]] : NULL;
            const char op = s->val_op[a];
            if (!J->shared && s->ngroups == 1 && va && !vb && !va->valid &&
                (agg == AGG_SUM || agg == AGG_MIN || agg == AGG_MAX)) {
                /* one group, one plain column: fold the batch in registers */
                if (da_fold1(va, contig ? NULL : r, b0, m, kind, &acc[0])) da_overflow(J);
                nn[0] += m;
                continue;
            }
            if (s->nocheck && agg == AGG_SUM && !J->shared && va) {
                /* proven free of overflow (the planner's bounds): wrapping
                 * arithmetic with no tests */
                for (int p = 0; p < m; p++) {
                    const int64_t i = r[p];
                    int present = !da_null(va, i);
                    uint64_t v = (uint64_t)da_get(va, i);
                    if (vb) {
                        present = present && !da_null(vb, i);
                        uint64_t u = (uint64_t)da_get(vb, i);
                        v = op == '+' ? v + u : op == '-' ? v - u : v * u;
                    }
                    acc[g[p]] = (int64_t)((uint64_t)acc[g[p]] + (present ? v : 0));
                    nn[g[p]] += present;
                }
                continue;
            }
            int ovf = 0;
            for (int p = 0; p < m; p++) {
                const int64_t i = r[p];
                int present = 1;
                int64_t v = 0;
                if (va) {
                    present = !da_null(va, i);
                    v = da_get(va, i);
                    if (vb) {
                        present = present && !da_null(vb, i);
                        int64_t u = da_get(vb, i), w;
                        int o = op == '+'   ? __builtin_add_overflow(v, u, &w)
                                : op == '-' ? __builtin_sub_overflow(v, u, &w)
                                            : __builtin_mul_overflow(v, u, &w);
                        ovf |= o & present; /* a OP b overflowed: the map's error */
                        v = w;
                    }
                }
                int64_t x;
                if (agg == AGG_COUNT_STAR)
                    x = 1;
                else if (!present)
                    continue;
                else
                    x = agg == AGG_COUNT ? 1 : v;
                if (agg == AGG_SUM) {
                    ovf |= da_sum(&acc[g[p]], J->shared, x);
                    if (J->shared)
                        da_atomic(&nn[g[p]], DA_ADD, 1);
                    else
                        nn[g[p]]++;
                } else if (J->shared) {
                    da_atomic(&acc[g[p]], kind, x);
                    if (present) da_atomic(&nn[g[p]], DA_ADD, 1);
                } else {
                    da_plain(&acc[g[p]], kind, x);
                    nn[g[p]] += present;
                }
            }
            if (ovf) da_overflow(J);
        }
    }
}

/* The table set of thread t: the outputs for thread 0 (and in shared
 * mode), otherwise its private set. */
static void da_tables(const DaJob *J, int t, int64_t **T) {
    for (int k = 0; k < J->nout; k++)
        T[k] = (J->shared || t == 0)
                   ? J->out[k]
                   : J->priv + ((size_t)(t - 1) * (size_t)J->nout + (size_t)k) * (size_t)J->ngroups;
}

/* prim_parallel body, private mode: thread t fills its table set with the
 * identities and runs morsels of the rows (DA_MORSEL) into it. */
static void da_private(void *arg, int t, int nt) {
    DaJob *J = arg;
    int64_t *T[DA_NOUT_MAX];
    da_tables(J, t, T);
    for (int k = 0; k < J->nout; k++)
        for (int64_t g = 0; g < J->ngroups; g++)
            T[k][g] = J->init[k];
    (void)nt;
    da_morsels(J, T);
}

/* The merge pass: the job and how many private sets it folds in. */
typedef struct DaMerge {
    DaJob *J;
    int nsets;
} DaMerge;

/* prim_parallel body, private mode: thread t folds its share of the groups
 * of the M->nsets private sets into the outputs (thread 0's set). */
static void da_merge(void *arg, int t, int nt) {
    DaMerge *M = arg;
    DaJob *J = M->J;
    int64_t g0 = J->ngroups * t / nt, g1 = J->ngroups * (t + 1) / nt;
    int ovf = 0;
    for (int q = 0; q < M->nsets; q++)
        for (int k = 0; k < J->nout; k++) {
            const int64_t *src =
                J->priv + ((size_t)q * (size_t)J->nout + (size_t)k) * (size_t)J->ngroups;
            if (k % 2 == 1 && J->s->agg[k / 2] == AGG_SUM)
                for (int64_t g = g0; g < g1; g++)
                    ovf |= da_sum(&J->out[k][g], 0, src[g]);
            else
                for (int64_t g = g0; g < g1; g++)
                    da_plain(&J->out[k][g], J->kind[k], src[g]);
        }
    if (ovf) da_overflow(J);
}

/* prim_parallel body, shared mode pass 1: thread t fills its share of the
 * groups of every output with the identities. */
static void da_init(void *arg, int t, int nt) {
    DaJob *J = arg;
    int64_t g0 = J->ngroups * t / nt, g1 = J->ngroups * (t + 1) / nt;
    for (int k = 0; k < J->nout; k++)
        for (int64_t g = g0; g < g1; g++)
            J->out[k][g] = J->init[k];
}

/* prim_parallel body, shared mode pass 2: thread t runs its share of the
 * rows (morsels, see DA_MORSEL) into the outputs with atomics. */
static void da_shared(void *arg, int t, int nt) {
    (void)t, (void)nt;
    DaJob *J = arg;
    da_morsels(J, J->out);
}

/* See primitives.h. out[0..PRIM_DA_NOUT(naggs)) are PRIM_I64 vectors of at
 * least spec->ngroups values. Private accumulator sets come from ctx->alloc
 * (when that fails, the shared atomic tables are used instead). Returns 0,
 * or -1 with a message in ctx->err (a bad spec: see prim_denseagg_check;
 * "integer overflow" in a SUM or a row's a OP b). */
int prim_cpu_denseagg(PrimCtx *ctx, const PrimDenseAgg *spec, const PrimVec *in, int64_t n,
                      PrimVec *out) {
    DaJob J;
    memset(&J, 0, sizeof J);
    if (prim_denseagg_check(ctx, spec, in, n, out, J.stride) != 0) return -1;
    J.s = spec;
    J.in = in;
    J.n = n;
    J.ngroups = spec->ngroups;
    J.nout = PRIM_DA_NOUT(spec->naggs);
    da_kinds(spec, J.kind, J.init);
    for (int k = 0; k < J.nout; k++)
        J.out[k] = (int64_t *)out[k].data;

    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > DA_MAX_THREADS) nt = DA_MAX_THREADS;
    if (n < DA_PAR_MIN_ROWS) nt = 1;
    const int64_t entries = J.ngroups <= DA_PRIVATE_MAX ? J.ngroups * J.nout : DA_PRIVATE_MAX + 1;
    if (entries <= DA_PRIVATE_MAX) {
        /* private sets only pay off while filling and merging them costs
         * less than the rows: at most about n entries in all */
        while (nt > 1 && entries * (nt - 1) > n)
            nt--;
        if (nt > 1) {
            J.priv = ctx->alloc(ctx->ud, sizeof(int64_t) * (size_t)entries * (size_t)(nt - 1));
            if (!J.priv) J.shared = 1; /* fall back to the atomic tables */
        }
    } else {
        J.shared = 1;
    }
    if (J.shared) {
        if (prim_parallel(nt, da_init, &J) != 0 || prim_parallel(nt, da_shared, &J) != 0)
            return da_err(ctx, "denseagg", "cannot start worker threads");
        return J.ovf ? da_err(ctx, "denseagg", "integer overflow") : 0;
    }
    int rc = prim_parallel(nt, da_private, &J);
    if (rc == 0 && nt > 1) {
        DaMerge M = {&J, nt - 1};
        int mt = J.ngroups < nt ? (int)J.ngroups : nt;
        rc = prim_parallel(mt, da_merge, &M);
    }
    if (J.priv) ctx->free(ctx->ud, J.priv);
    if (rc != 0) return da_err(ctx, "denseagg", "cannot start worker threads");
    return J.ovf ? da_err(ctx, "denseagg", "integer overflow") : 0;
}

/* --------------------------------------------------------------- keymap -- */

typedef struct KmJob {
    const PrimVec *key;
    const int64_t *rows;
    const uint8_t *flags;
    int64_t n, kmin, range;
    int64_t *out;
} KmJob;

/* prim_parallel body, pass 1: thread t fills its share of out with -1. */
static void km_fill(void *arg, int t, int nt) {
    KmJob *J = arg;
    for (int64_t i = J->range * t / nt, e = J->range * (t + 1) / nt; i < e; i++)
        J->out[i] = -1;
}

/* prim_parallel body, pass 2: thread t enters its share of the keys; on a
 * shared slot the larger row id wins (an atomic max, so the winner does not
 * depend on the thread count). */
static void km_scatter(void *arg, int t, int nt) {
    KmJob *J = arg;
    const int atomic = nt > 1;
    for (int64_t i = J->n * t / nt, e = J->n * (t + 1) / nt; i < e; i++) {
        if ((J->flags && !J->flags[i]) || da_null(J->key, i)) continue;
        int64_t v = da_get(J->key, i);
        if (!da_in(v, J->kmin, J->range)) continue;
        int64_t *p = &J->out[(uint64_t)v - (uint64_t)J->kmin];
        int64_t row = J->rows ? J->rows[i] : i;
        if (atomic)
            da_atomic(p, DA_MAX, row);
        else if (row > *p)
            *p = row;
    }
}

/* See primitives.h. key may be U8, I32 or I64. Returns 0, or -1 with a message in ctx->err. */
/* The twins' common body: rows and flags may each be NULL. */
static int keymap(PrimCtx *ctx, const PrimVec *key, const int64_t *rows, const uint8_t *flags,
                  int64_t n, int64_t kmin, int64_t range, int64_t *out) {
    if (!key || n < 0 || range < 0 || (range > 0 && !out) || (n > 0 && !key->data))
        return da_err(ctx, "keymap", "bad arguments");
    if (!da_int_type(key->type))
        return da_err(ctx, "keymap", "key type %d (integers only)", (int)key->type);
    if (range == 0) return 0;
    KmJob J = {key, rows, flags, n, kmin, range, out};
    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > DA_MAX_THREADS) nt = DA_MAX_THREADS;
    int ft = range < DA_PAR_MIN_ROWS ? 1 : nt;
    if (n < DA_PAR_MIN_ROWS) nt = 1;
    if (prim_parallel(ft, km_fill, &J) != 0 || prim_parallel(nt, km_scatter, &J) != 0)
        return da_err(ctx, "keymap", "cannot start worker threads");
    return 0;
}

int prim_cpu_keymap(PrimCtx *ctx, const PrimVec *key, const int64_t *rows, int64_t n, int64_t kmin,
                    int64_t range, int64_t *out) {
    return keymap(ctx, key, rows, NULL, n, kmin, range, out);
}

/* See primitives.h. Returns 0, or -1 with a message in ctx->err. */
int prim_cpu_keymap_where(PrimCtx *ctx, const PrimVec *key, const uint8_t *flags, int64_t n,
                          int64_t kmin, int64_t range, int64_t *out) {
    if (n > 0 && !flags) return da_err(ctx, "keymap", "bad arguments");
    return keymap(ctx, key, NULL, flags, n, kmin, range, out);
}
