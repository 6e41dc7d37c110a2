/*
 * join.c -- CPU twins of the join primitives: hash equi-join and cross
 * product, both producing (left, right) row-id pairs ordered by left row,
 * then right row.
 *
 * Equi-join plan:
 *   1. keys become 64-bit patterns: integers sign-extended, floats by their
 *      bits (-0.0 as 0.0); NULL and NaN never match
 *   2. an open-addressing table (linear probing) over the distinct keys of
 *      the smaller side gives each distinct key a dense id; every row of
 *      the build side gets its id while inserting, every row of the other
 *      side gets its id by a (parallel) lookup, -1 for no match
 *   3. the right rows are grouped by id in increasing row order (CSR)
 *   4. each left row emits its id's right rows: a parallel count over left
 *      ranges, a prefix over the ranges, one exactly sized allocation, and
 *      a parallel fill; so the output order is (i, j) whatever the thread
 *      count
 */
#include "primitives/primitives.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define JOIN_PAR_MIN_ROWS 65536
#define JOIN_MAX_THREADS 256

/* Formats an error message into ctx->err and returns -1. */
static int join_err(PrimCtx *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = snprintf(ctx->err, sizeof ctx->err, "Primitive Error: join: ");
    if (k < 0 || (size_t)k >= sizeof ctx->err) k = 0;
    vsnprintf(ctx->err + k, sizeof ctx->err - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

/* Returns 1 and the 64-bit pattern of row i of v in *key, or 0 when the
 * row is NULL (or NaN) and can never match. */
static inline int join_key(const PrimVec *v, int64_t i, uint64_t *key) {
    if (v->valid && !v->valid[i]) return 0;
    switch (v->type) {
    case PRIM_U8:
        *key = ((const uint8_t *)v->data)[i];
        return 1;
    case PRIM_I32:
        *key = (uint64_t)(int64_t)((const int32_t *)v->data)[i];
        return 1;
    case PRIM_I64:
        *key = (uint64_t)((const int64_t *)v->data)[i];
        return 1;
    case PRIM_F32: {
        float f = ((const float *)v->data)[i];
        uint32_t b;
        if (f != f) return 0;
        if (f == 0.0f) f = 0.0f;
        memcpy(&b, &f, sizeof b);
        *key = b;
        return 1;
    }
    default: {
        double f = ((const double *)v->data)[i];
        if (f != f) return 0;
        if (f == 0.0) f = 0.0;
        memcpy(key, &f, sizeof *key);
        return 1;
    }
    }
}

/* Returns a well-mixed hash of k (murmur3's 64-bit finalizer). */
static inline uint64_t join_hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

/* One table slot: a distinct key and its dense id (-1 = empty), side by
 * side so that a probe touches one cache line. */
typedef struct JoinSlot {
    uint64_t key;
    int64_t id;
} JoinSlot;

typedef struct JoinJob {
    /* lookup */
    const PrimVec *probe;
    int64_t nprobe;
    int64_t *probe_id;
    const JoinSlot *slots;
    uint64_t mask;
    /* emission */
    const int64_t *lid; /* per left row: dense id or -1 */
    int64_t nl;
    const int64_t *rstart; /* ndist + 1 offsets into rlist */
    const int64_t *rlist;
    int64_t cnt[JOIN_MAX_THREADS]; /* per range: pairs, then offset */
    int64_t *left, *right;
} JoinJob;

/* prim_parallel body: looks up the probe rows of chunk t in the table. */
static void join_lookup(void *arg, int t, int nt) {
    JoinJob *J = arg;
    for (int64_t i = J->nprobe * t / nt, e = J->nprobe * (t + 1) / nt; i < e; i++) {
        uint64_t k;
        int64_t id = -1;
        if (join_key(J->probe, i, &k)) {
            for (uint64_t s = join_hash(k) & J->mask;; s = (s + 1) & J->mask) {
                if (J->slots[s].id < 0) break;
                if (J->slots[s].key == k) {
                    id = J->slots[s].id;
                    break;
                }
            }
        }
        J->probe_id[i] = id;
    }
}

/* Returns the number of right rows matching left row i. */
static inline int64_t join_nmatch(const JoinJob *J, int64_t i) {
    int64_t id = J->lid[i];
    return id < 0 ? 0 : J->rstart[id + 1] - J->rstart[id];
}

/* prim_parallel body: counts the pairs of left range t. */
static void join_count(void *arg, int t, int nt) {
    JoinJob *J = arg;
    int64_t c = 0;
    for (int64_t i = J->nl * t / nt, e = J->nl * (t + 1) / nt; i < e; i++)
        c += join_nmatch(J, i);
    J->cnt[t] = c;
}

/* prim_parallel body: writes the pairs of left range t from offset cnt[t]. */
static void join_fill(void *arg, int t, int nt) {
    JoinJob *J = arg;
    int64_t o = J->cnt[t];
    for (int64_t i = J->nl * t / nt, e = J->nl * (t + 1) / nt; i < e; i++) {
        int64_t id = J->lid[i];
        if (id < 0) continue;
        for (int64_t p = J->rstart[id]; p < J->rstart[id + 1]; p++) {
            J->left[o] = i;
            J->right[o] = J->rlist[p];
            o++;
        }
    }
}

/* Returns the thread count for work over n rows. */
static int join_threads(const PrimCtx *ctx, int64_t n) {
    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads;
    if (nt > JOIN_MAX_THREADS) nt = JOIN_MAX_THREADS;
    return n < JOIN_PAR_MIN_ROWS ? 1 : nt;
}

/* See primitives.h. Temporary storage (table, ids, groups: about 16 bytes
 * per table slot plus 24 bytes per row) comes from ctx->alloc and is freed
 * before returning; out->left/right are the caller's to free through
 * ctx->free. Returns 0, or -1 with a message in ctx->err (mismatched key
 * types, out of memory, threads); out is then empty. */
int prim_cpu_join(PrimCtx *ctx, const PrimVec *lkey, int64_t nl, const PrimVec *rkey, int64_t nr,
                  PrimPairs *out) {
    if (!out) return join_err(ctx, "bad arguments");
    out->n = 0;
    out->left = out->right = NULL;
    if (!lkey || !rkey || nl < 0 || nr < 0 || (nl > 0 && !lkey->data) || (nr > 0 && !rkey->data) ||
        prim_type_width(lkey->type) == 0)
        return join_err(ctx, "bad arguments");
    if (lkey->type != rkey->type)
        return join_err(ctx, "key types differ (%d, %d)", (int)lkey->type, (int)rkey->type);
    if (nl == 0 || nr == 0) return 0;

    int build_right = nr <= nl;
    const PrimVec *bkey = build_right ? rkey : lkey, *pkey = build_right ? lkey : rkey;
    int64_t nb = build_right ? nr : nl, np = build_right ? nl : nr;
    uint64_t cap = 16;
    while (cap < (uint64_t)nb * 2)
        cap <<= 1;
    size_t tbytes = (size_t)cap * sizeof(JoinSlot);
    size_t ibytes = sizeof(int64_t) * ((size_t)nl + (size_t)nr);
    char *mem = ctx->alloc(ctx->ud, tbytes + ibytes);
    if (!mem) return join_err(ctx, "out of memory");
    JoinSlot *slots = (JoinSlot *)mem;
    int64_t *lid = (int64_t *)(mem + tbytes), *rid = lid + nl;
    int64_t *bid = build_right ? rid : lid, *pid = build_right ? lid : rid;
    for (uint64_t s = 0; s < cap; s++)
        slots[s].id = -1;

    /* Build: dense ids over the distinct keys of the smaller side. */
    uint64_t mask = cap - 1;
    int64_t ndist = 0;
    for (int64_t i = 0; i < nb; i++) {
        uint64_t k;
        if (!join_key(bkey, i, &k)) {
            bid[i] = -1;
            continue;
        }
        uint64_t s = join_hash(k) & mask;
        while (slots[s].id >= 0 && slots[s].key != k)
            s = (s + 1) & mask;
        if (slots[s].id < 0) {
            slots[s].key = k;
            slots[s].id = ndist++;
        }
        bid[i] = slots[s].id;
    }

    JoinJob J;
    memset(&J, 0, sizeof J);
    J.probe = pkey;
    J.nprobe = np;
    J.probe_id = pid;
    J.slots = slots;
    J.mask = mask;
    int rc = 0;
    char *grp = NULL;
    if (prim_parallel(join_threads(ctx, np), join_lookup, &J) != 0) {
        rc = join_err(ctx, "cannot start worker threads");
        goto done;
    }

    /* Group the right rows by id, in row order. */
    grp = ctx->alloc(ctx->ud, sizeof(int64_t) * ((size_t)ndist + 1 + (size_t)nr));
    if (!grp) {
        rc = join_err(ctx, "out of memory");
        goto done;
    }
    int64_t *rstart = (int64_t *)grp, *rlist = rstart + ndist + 1;
    memset(rstart, 0, sizeof(int64_t) * ((size_t)ndist + 1));
    for (int64_t j = 0; j < nr; j++)
        if (rid[j] >= 0) rstart[rid[j] + 1]++;
    for (int64_t d = 0; d < ndist; d++)
        rstart[d + 1] += rstart[d];
    /* Fill with a moving cursor per id, kept in the table's storage (no
     * longer needed; ndist <= nb < 2 * cap): cursor[d] starts at rstart[d]. */
    int64_t *cursor = (int64_t *)mem;
    memcpy(cursor, rstart, sizeof(int64_t) * (size_t)ndist);
    for (int64_t j = 0; j < nr; j++)
        if (rid[j] >= 0) rlist[cursor[rid[j]]++] = j;

    /* Emit pairs in (i, j) order. */
    J.lid = lid;
    J.nl = nl;
    J.rstart = rstart;
    J.rlist = rlist;
    int nt = join_threads(ctx, nl);
    if (prim_parallel(nt, join_count, &J) != 0) {
        rc = join_err(ctx, "cannot start worker threads");
        goto done;
    }
    int64_t total = 0;
    for (int t = 0; t < nt; t++) {
        int64_t c = J.cnt[t];
        J.cnt[t] = total;
        if (__builtin_add_overflow(total, c, &total)) {
            rc = join_err(ctx, "result too large");
            goto done;
        }
    }
    if (total > 0) {
        if ((uint64_t)total > SIZE_MAX / sizeof(int64_t)) {
            rc = join_err(ctx, "result too large");
            goto done;
        }
        J.left = ctx->alloc(ctx->ud, sizeof(int64_t) * (size_t)total);
        J.right = J.left ? ctx->alloc(ctx->ud, sizeof(int64_t) * (size_t)total) : NULL;
        if (!J.left || !J.right) {
            if (J.left) ctx->free(ctx->ud, J.left);
            rc = join_err(ctx, "out of memory (%lld pairs)", (long long)total);
            goto done;
        }
        if (prim_parallel(nt, join_fill, &J) != 0) {
            ctx->free(ctx->ud, J.left);
            ctx->free(ctx->ud, J.right);
            rc = join_err(ctx, "cannot start worker threads");
            goto done;
        }
        out->n = total;
        out->left = J.left;
        out->right = J.right;
    }
done:
    if (grp) ctx->free(ctx->ud, grp);
    ctx->free(ctx->ud, mem);
    return rc;
}

typedef struct CrossJob {
    int64_t nl, nr;
    int64_t *left, *right;
} CrossJob;

/* prim_parallel body: writes the pairs of left rows in range t. */
static void cross_fill(void *arg, int t, int nt) {
    CrossJob *J = arg;
    for (int64_t i = J->nl * t / nt, e = J->nl * (t + 1) / nt; i < e; i++) {
        int64_t *l = J->left + i * J->nr, *r = J->right + i * J->nr;
        for (int64_t j = 0; j < J->nr; j++) {
            l[j] = i;
            r[j] = j;
        }
    }
}

/* See primitives.h. out->left/right are the caller's to free through
 * ctx->free (NULL when nl * nr == 0). Returns 0, or -1 with a message in
 * ctx->err (negative counts, a product past int64, out of memory). */
int prim_cpu_cross(PrimCtx *ctx, int64_t nl, int64_t nr, PrimPairs *out) {
    if (!out || nl < 0 || nr < 0) return join_err(ctx, "bad arguments");
    out->n = 0;
    out->left = out->right = NULL;
    if (nl == 0 || nr == 0) return 0;
    int64_t total;
    if (__builtin_mul_overflow(nl, nr, &total) || (uint64_t)total > SIZE_MAX / sizeof(int64_t))
        return join_err(ctx, "cross product too large");
    CrossJob J = {nl, nr, NULL, NULL};
    J.left = ctx->alloc(ctx->ud, sizeof(int64_t) * (size_t)total);
    J.right = J.left ? ctx->alloc(ctx->ud, sizeof(int64_t) * (size_t)total) : NULL;
    if (!J.left || !J.right) {
        if (J.left) ctx->free(ctx->ud, J.left);
        return join_err(ctx, "out of memory (%lld pairs)", (long long)total);
    }
    int nt = join_threads(ctx, total);
    if (nt > nl) nt = (int)nl;
    if (prim_parallel(nt, cross_fill, &J) != 0) {
        ctx->free(ctx->ud, J.left);
        ctx->free(ctx->ud, J.right);
        return join_err(ctx, "cannot start worker threads");
    }
    out->n = total;
    out->left = J.left;
    out->right = J.right;
    return 0;
}
