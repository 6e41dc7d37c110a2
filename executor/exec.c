/*
 * exec.c -- the DAG executor. Nodes run in index order (the lowering
 * creates them topologically); each dispatches to the CPU twin of its
 * primitive on host memory or to the GPU twin on device memory, issued on
 * the session's stream. A value lives on the host, on the device, or both;
 * it is copied across only when a node on the other side reads it (counted
 * as that node's transfer bytes). The host waits on the device only where
 * it needs a count (scan totals, segment and join sizes) and for the final
 * copy of the result. A value is freed as soon as its last consumer ran.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor/exec_internal.h"

typedef struct RtVal {
    PrimVec h;     /* host copy (h.data NULL if none) */
    PrimVec d;     /* device copy (d.data NULL if none) */
    int h_owned;   /* h allocated by the executor */
    int d_owned;   /* d allocated by the executor (not the column cache) */
    int d_cached;  /* d is a column cache entry this value keeps from eviction */
    int64_t n;     /* length */
    int64_t total; /* DN_SCAN: sum of the flags */
    int ready;
    const CatDict *rdict; /* STRING codes of a dictionary built at run time */
    void *d_ready;        /* event after an implicit host->device copy ... */
    void *d_stream;       /* ... issued on this stream */
    int gpu_in;           /* a GPU node reads it as an input: its host copy crosses PCIe */
    PrimReals re;         /* host: REAL rows from an integer overflow (owned; is NULL: none) */
} RtVal;

typedef struct Exec {
    Dag *dag;
    RtVal *vals;
    int *last_use;
    PrimCtx hctx, dctx;
    ExecDevice *dev;
    ExecHostPool *pool;
    char *err;
    size_t errcap;
    DagNode *cur;
    CatDict **dicts; /* built at run time; handed to the result */
    int ndicts;
    /* streams: every GPU node runs on stream node_stream[i] of the
     * session; done[i] is an event marked after it, for consumers on other
     * streams */
    int *node_stream;
    void **done;
    int *last_reader; /* [v * EXEC_STREAMS + k]: last GPU node on stream k reading v, or -1 */
    void *cur_stream;
    ExecLikeMemo *like_memo;
} Exec;

void exec_like_memo_free(ExecLikeMemo *m) {
    for (int i = 0; m && i < m->n; i++) {
        free(m->e[i].pattern);
        free(m->e[i].tab);
    }
    if (m) m->n = 0;
}

/* The CPU LIKE table of dict for pattern (negated) into tab: from x's
 * memo when this run computed it before, else computed (and kept while
 * the memo has room). */
static const uint8_t *like_memo_find(const ExecLikeMemo *m, const CatDict *dict,
                                     const char *pattern, int neg) {
    for (int i = 0; m && i < m->n; i++)
        if (m->e[i].dict == dict && m->e[i].bytes == dict->bytes && m->e[i].n == dict->n &&
            m->e[i].len == dict->offsets[dict->n] && m->e[i].neg == neg &&
            strcmp(m->e[i].pattern, pattern) == 0)
            return m->e[i].tab;
    return NULL;
}

/* Keep tab (dict->n bytes, taken over: freed with the memo, or here when
 * the memo is full or missing). */
static void like_memo_put(ExecLikeMemo *m, const CatDict *dict, const char *pattern, int neg,
                          uint8_t *tab) {
    char *pc = m && m->n < EXEC_LIKE_MEMO ? strdup(pattern) : NULL;
    if (!pc) { /* only the reuse is lost */
        free(tab);
        return;
    }
    m->e[m->n].dict = dict;
    m->e[m->n].bytes = dict->bytes;
    m->e[m->n].n = dict->n;
    m->e[m->n].len = dict->offsets[dict->n];
    m->e[m->n].neg = neg;
    m->e[m->n].pattern = pc;
    m->e[m->n].tab = tab;
    m->n++;
}

static void like_table_cpu(Exec *x, const CatDict *dict, const char *pattern, int neg,
                           uint8_t *tab) {
    size_t n = (size_t)dict->n;
    const uint8_t *kept = like_memo_find(x->like_memo, dict, pattern, neg);
    if (kept) {
        if (n) memcpy(tab, kept, n);
        return;
    }
    plan_like_bytes(dict, pattern, neg, tab);
    if (!x->like_memo || x->like_memo->n == EXEC_LIKE_MEMO) return;
    uint8_t *tc = malloc(n ? n : 1);
    if (!tc) return;
    if (n) memcpy(tc, tab, n);
    like_memo_put(x->like_memo, dict, pattern, neg, tc);
}

/* TUNING: a GPU LIKE over a dictionary larger than 1/LIKE_WHOLE_SHARE of
 * what the device holds for this process (the memory_limit) reads its
 * strings in pieces of 1/LIKE_PIECE_SHARE of it (TPC-H SF 10 Q13: the
 * 7.9M o_comment strings, 398 MB with their offsets, under a 46 MB
 * budget). */
#define LIKE_WHOLE_SHARE 2
#define LIKE_PIECE_SHARE 8

/* DN_DICTLIKE node n on the GPU over dict's strings [a, b): their text
 * and offsets through the column cache, read while the kernel runs
 * (unpinned after its launch: an eviction waits for the device first),
 * the table entries written to d_out + a. 0, or -1 with x->err or ctx's
 * error set. */
static int likedict_range(Exec *x, DagNode *n, PrimCtx *ctx, const CatDict *dict, int64_t a,
                          int64_t b, uint8_t *d_out) {
    const int64_t *off = dict->offsets;
    PrimVec hb = {PRIM_U8, off[b] - off[a], dict->bytes + off[a], NULL};
    PrimVec ho = {PRIM_I64, b - a + 1, (void *)(off + a), NULL};
    PrimVec db, dof;
    if (exec_cache_get(x->dev, &hb, &db, &n->bytes_h2d, x->cur_stream, x->err, x->errcap) != 0)
        return -1;
    if (exec_cache_get(x->dev, &ho, &dof, &n->bytes_h2d, x->cur_stream, x->err, x->errcap) != 0) {
        exec_cache_unpin(x->dev, hb.data, hb.n, hb.type);
        return -1;
    }
    int rc =
        prim_gpu_likedict(ctx, db.data, dof.data, b - a, n->totext_text, n->totext_neg, d_out + a);
    exec_cache_unpin(x->dev, hb.data, hb.n, hb.type);
    exec_cache_unpin(x->dev, ho.data, ho.n, ho.type);
    return rc;
}

/* The end of dict's piece from string a: the most strings whose text
 * and offsets fit piece bytes, at least one. */
static int64_t piece_end(const CatDict *dict, int64_t a, size_t piece) {
    const int64_t *off = dict->offsets;
    int64_t lo = a + 1, hi = dict->n;
    while (lo < hi) {
        int64_t m = lo + (hi - lo + 1) / 2;
        size_t b = (size_t)(off[m] - off[a]) + sizeof(int64_t) * (size_t)(m - a + 1);
        if (b <= piece)
            lo = m;
        else
            hi = m - 1;
    }
    return lo;
}

/* Drop the column cache's copies of dict's pieces that start before
 * string upto (the caller has waited for the stream that read them):
 * keyed by addresses inside the dictionary, nothing else would drop them
 * (a freed dictionary's address handed out again would find them). */
static void forget_pieces(Exec *x, const CatDict *dict, size_t piece, int64_t upto) {
    const int64_t *off = dict->offsets;
    for (int64_t a = 0, b; a < upto && a < dict->n; a = b) {
        b = piece_end(dict, a, piece);
        exec_device_forget(x->dev, dict->bytes + off[a], off[b] - off[a]);
        exec_device_forget(x->dev, off + a, b - a + 1);
    }
}

/* DN_DICTLIKE node n on the GPU in pieces: each piece of dict's strings
 * (at most piece bytes with its offsets, at least one string) through the
 * column cache, its table entries written to d_out; the table is kept in
 * the run's memo (its n bytes back on the host), so that the later chunks
 * of a chunked run copy it instead of reading the strings again; the
 * pieces' cache entries are dropped after. 0, or -1 with x->err or ctx's
 * error set. */
static int likedict_pieces(Exec *x, DagNode *n, PrimCtx *ctx, const CatDict *dict, uint8_t *d_out,
                           size_t piece) {
    const char *pat = n->totext_text;
    int neg = n->totext_neg;
    n->dict_pieces = 0; /* a run again after an out-of-memory counts afresh */
    const uint8_t *kept = like_memo_find(x->like_memo, dict, pat, neg);
    if (kept) {
        n->dict_pieces = -1;
        n->bytes_h2d += dict->n;
        return prim_gpu_copy(d_out, kept, (size_t)dict->n, PRIM_H2D, x->cur_stream, x->err,
                             x->errcap);
    }
    for (int64_t a = 0, b; a < dict->n; a = b) {
        b = piece_end(dict, a, piece); /* the most strings from a that fit */
        int rc = likedict_range(x, n, ctx, dict, a, b, d_out);
        if (rc != 0) {
            char e[128];
            prim_gpu_sync(x->cur_stream, e, sizeof e);
            forget_pieces(x, dict, piece, b);
            return rc;
        }
        n->dict_pieces++;
    }
    /* the table back for the memo, then one wait for it and the pieces */
    int keep = x->like_memo && x->like_memo->n < EXEC_LIKE_MEMO && dict->n > 0;
    uint8_t *tab = keep ? malloc((size_t)dict->n) : NULL; /* NULL: only the reuse is lost */
    int rc =
        tab ? prim_gpu_copy(tab, d_out, (size_t)dict->n, PRIM_D2H, x->cur_stream, x->err, x->errcap)
            : 0;
    char e[128]; /* the wait happens even after a failed copy (its error kept) */
    int sr = prim_gpu_sync(x->cur_stream, rc ? e : x->err, rc ? sizeof e : x->errcap);
    if (rc == 0) rc = sr;
    forget_pieces(x, dict, piece, dict->n);
    if (rc != 0) {
        free(tab);
        return -1;
    }
    if (tab) {
        n->bytes_d2h += dict->n;
        like_memo_put(x->like_memo, dict, pat, neg, tab);
    }
    return 0;
}

/* Host allocator of the CPU twins (ud: the ExecHostPool or NULL): 64-byte
 * aligned, NULL on failure. */
static void *host_alloc(void *ud, size_t bytes) {
    return exec_pool_alloc(ud, bytes);
}

static void host_free(void *ud, void *p) {
    exec_pool_release(ud, p);
}

/* Device allocator of the GPU twins: the session's accounted allocator
 * (memory_limit, eviction, fault injection) over the stream-ordered pool. */
static void *dev_alloc(void *ud, size_t bytes) {
    Exec *x = ud;
    return exec_dev_alloc(x->dev, bytes, x->cur_stream);
}

static void dev_free(void *ud, void *p) {
    Exec *x = ud;
    exec_dev_free(x->dev, p, x->cur_stream);
}

/* Forget value v's device copy: an owned one is freed (the caller made
 * sure no reader is in flight), a cached column is unpinned. */
static void drop_dev(Exec *x, RtVal *r) {
    if (r->d_owned && x->dev) {
        exec_dev_free(x->dev, r->d.data, x->cur_stream);
        exec_dev_free(x->dev, r->d.valid, x->cur_stream);
    }
    if (r->d_cached && x->dev) exec_cache_unpin(x->dev, r->h.data, r->n, r->d.type);
    prim_gpu_event_destroy(r->d_ready);
    memset(&r->d, 0, sizeof r->d);
    r->d_owned = r->d_cached = 0;
    r->d_ready = r->d_stream = NULL;
}

/* "N bytes needed, M available[ under memory_limit]" of the last failed
 * device allocation, into buf. */
static const char *oom_text(const Exec *x, char *buf, size_t cap) {
    size_t need = 0, avail = 0;
    int how = exec_device_oom(x->dev, NULL, &need, &avail);
    snprintf(buf, cap, "%zu bytes needed, %zu available%s", need, avail,
             how == 2 ? " under memory_limit" : "");
    return buf;
}

/* Record an execution error; returns -1. */
static int ex_fail(Exec *x, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err, x->errcap, fmt, ap);
    va_end(ap);
    return -1;
}

/* Allocate value v as n elements of its type on the host or the device
 * (+ validity if want_valid); a host value that a GPU node reads gets
 * page-locked memory. */
static int ex_alloc(Exec *x, int v, int64_t n, int want_valid, int on_dev) {
    RtVal *r = &x->vals[v];
    PrimVec *p = on_dev ? &r->d : &r->h;
    p->type = x->dag->values[v].type;
    p->n = n;
    size_t bytes = (size_t)n * prim_type_width(p->type);
    if (on_dev) {
        p->data = exec_dev_alloc(x->dev, bytes, x->cur_stream);
        p->valid = want_valid && p->data ? exec_dev_alloc(x->dev, (size_t)n, x->cur_stream) : NULL;
        r->d_owned = 1;
        if (!p->data || (want_valid && !p->valid)) {
            char t[160];
            drop_dev(x, r);
            return ex_fail(x, "Device Error: out of device memory allocating %lld rows (%s)",
                           (long long)n, oom_text(x, t, sizeof t));
        }
    } else {
        /* a GPU node reads it: a buffer that crosses PCIe */
        void *(*alloc)(ExecHostPool *, size_t) =
            x->dev && r->gpu_in ? exec_pool_alloc_pinned : exec_pool_alloc;
        p->data = alloc(x->pool, bytes);
        p->valid = want_valid ? alloc(x->pool, (size_t)n) : NULL;
        r->h_owned = 1;
    }
    r->n = n;
    r->ready = 1;
    if (!p->data || (want_valid && !p->valid))
        return ex_fail(x, "Execution Error: out of memory allocating %lld rows on the host",
                       (long long)n);
    return 0;
}

/* Stream of the node producing value v (the session's first stream for
 * CPU producers). */
static void *value_stream(Exec *x, int v) {
    int p = x->dag->values[v].producer;
    return x->dev->streams[x->node_stream[p] >= 0 ? x->node_stream[p] : 0];
}

/* Release value v's copies that the executor owns. Device memory is freed
 * on the stream of node `at` (its last reader) after that stream has
 * waited for every other GPU reader of v on another stream; at < 0 frees
 * on the producer's stream (nothing read it, or the run is over). */
static void ex_release_at(Exec *x, int v, int at) {
    RtVal *r = &x->vals[v];
    if (r->h_owned) {
        host_free(x->pool, r->h.data);
        host_free(x->pool, r->h.valid);
    }
    host_free(x->pool, r->re.val);
    host_free(x->pool, r->re.is);
    if (r->d_cached && x->dev) exec_cache_unpin(x->dev, r->h.data, r->n, r->d.type);
    if (r->d_owned && x->dev) {
        void *s = (at >= 0 && x->node_stream[at] >= 0) ? x->dev->streams[x->node_stream[at]]
                                                       : value_stream(x, v);
        /* every GPU reader on another stream must be done first: nodes of
         * one stream complete in order, so its last reader suffices */
        char e[128];
        for (int k = 0; k < EXEC_STREAMS; k++) {
            int c = x->last_reader[(size_t)v * EXEC_STREAMS + (size_t)k];
            if (c >= 0 && x->done[c] && x->dev->streams[k] != s)
                prim_gpu_stream_wait(s, x->done[c], e, sizeof e);
        }
        /* ... and so must its producer: a node that reads only v's length
         * (len_from: COUNT(*) over a GPU cross join) never waited for the
         * kernel writing v, which could still be writing into memory
         * reused after this free (a wrong COUNT under load on the H200) */
        int p = x->dag->values[v].producer;
        if (p >= 0 && x->node_stream[p] >= 0 && x->done[p] &&
            x->dev->streams[x->node_stream[p]] != s)
            prim_gpu_stream_wait(s, x->done[p], e, sizeof e);
        exec_dev_free(x->dev, r->d.data, s);
        exec_dev_free(x->dev, r->d.valid, s);
    }
    prim_gpu_event_destroy(r->d_ready);
    memset(r, 0, sizeof *r);
}

/* Release value v (see ex_release_at), freeing device memory on its
 * producer's stream. */
static void ex_release(Exec *x, int v) {
    ex_release_at(x, v, -1);
}

/* Make sure value v has a host copy, copying from the device if needed;
 * with wait = 0 the copy is only issued (the caller synchronizes the
 * stream before reading it). */
static int ensure_host_issue(Exec *x, int v, int wait) {
    RtVal *r = &x->vals[v];
    if (r->h.data || r->n == 0) {
        if (!r->h.data) {
            r->h.type = x->dag->values[v].type;
            r->h.n = 0;
            r->h.data = host_alloc(x->pool, 0);
            r->h_owned = 1;
            if (!r->h.data) {
                r->h_owned = 0;
                return ex_fail(x, "Execution Error: out of memory copying a value to the host");
            }
        }
        return 0;
    }
    size_t bytes = (size_t)r->n * prim_type_width(r->d.type);
    r->h.type = r->d.type;
    r->h.n = r->n;
    /* a copy from the device (the pool decides what is page-locked) */
    r->h.data = exec_pool_alloc_pinned(x->pool, bytes);
    r->h.valid = r->d.valid ? exec_pool_alloc_pinned(x->pool, (size_t)r->n) : NULL;
    r->h_owned = 1;
    void *s = value_stream(x, v);
    int rc = 0;
    if (!r->h.data || (r->d.valid && !r->h.valid))
        rc = ex_fail(x, "Execution Error: out of memory copying a value to the host");
    else if (prim_gpu_copy(r->h.data, r->d.data, bytes, PRIM_D2H, s, x->err, x->errcap) != 0 ||
             (r->d.valid && prim_gpu_copy(r->h.valid, r->d.valid, (size_t)r->n, PRIM_D2H, s, x->err,
                                          x->errcap) != 0) ||
             (wait && prim_gpu_sync(s, x->err, x->errcap) != 0))
        rc = -1;
    if (rc != 0) {
        /* no half copy may stay: a set h.data reads as "on the host" */
        host_free(x->pool, r->h.data);
        host_free(x->pool, r->h.valid);
        memset(&r->h, 0, sizeof r->h);
        r->h_owned = 0;
        return -1;
    }
    if (x->cur) x->cur->bytes_d2h += (int64_t)bytes + (r->d.valid ? r->n : 0);
    return 0;
}

/* Make sure value v has a host copy, waiting for the copy. */
static int ensure_host(Exec *x, int v) {
    return ensure_host_issue(x, v, 1);
}

/* Make sure value v has a device copy (copying from the host if needed). */
static int ensure_dev(Exec *x, int v) {
    RtVal *r = &x->vals[v];
    if (r->d.data) {
        /* copied on another stream by an earlier reader: wait for the copy */
        if (r->d_ready && r->d_stream != x->cur_stream)
            return prim_gpu_stream_wait(x->cur_stream, r->d_ready, x->err, x->errcap);
        /* produced on another stream: wait for its producer */
        int p = x->dag->values[v].producer;
        if (x->node_stream[p] >= 0 && x->dev->streams[x->node_stream[p]] != x->cur_stream)
            return prim_gpu_stream_wait(x->cur_stream, x->done[p], x->err, x->errcap);
        return 0;
    }
    if (!x->dev) return ex_fail(x, "Device Error: a GPU node without a GPU session");
    size_t bytes = (size_t)r->n * prim_type_width(r->h.type);
    r->d.type = r->h.type;
    r->d.n = r->n;
    r->d.data = exec_dev_alloc(x->dev, bytes, x->cur_stream);
    r->d.valid =
        r->h.valid && r->d.data ? exec_dev_alloc(x->dev, (size_t)r->n, x->cur_stream) : NULL;
    r->d_owned = 1;
    if (!r->d.data || (r->h.valid && !r->d.valid)) {
        /* no half copy may stay: a set d.data reads as "on the device" */
        char t[160];
        drop_dev(x, r);
        return ex_fail(x, "Device Error: out of device memory copying %lld rows to the device (%s)",
                       (long long)r->n, oom_text(x, t, sizeof t));
    }
    if (prim_gpu_copy(r->d.data, r->h.data, bytes, PRIM_H2D, x->cur_stream, x->err, x->errcap) !=
            0 ||
        (r->h.valid && prim_gpu_copy(r->d.valid, r->h.valid, (size_t)r->n, PRIM_H2D, x->cur_stream,
                                     x->err, x->errcap) != 0))
        return -1;
    r->d_ready = prim_gpu_event_mark(x->cur_stream);
    r->d_stream = x->cur_stream;
    if (x->cur) x->cur->bytes_h2d += (int64_t)bytes + (r->h.valid ? r->n : 0);
    return 0;
}

/* Drop a host validity array that marks no NULL. */
static void drop_all_valid(Exec *x, PrimVec *p) {
    if (!p->valid) return;
    for (int64_t i = 0; i < p->n; i++)
        if (!p->valid[i]) return;
    host_free(x->pool, p->valid);
    p->valid = NULL;
}

/* 1 if prog may produce NULL from non-NULL inputs. */
static int prog_makes_null(const PrimProgram *p) {
    for (int i = 0; i < p->ninstr; i++) {
        PrimOp op = (PrimOp)p->code[i].op;
        if (op == POP_NULL || op == POP_DIV || op == POP_MOD || op == POP_LOOKUP ||
            op == POP_MATH || op == POP_POW)
            return 1;
        /* REAL + - * giving NaN (Inf - Inf) is NULL */
        if ((op == POP_ADD || op == POP_SUB || op == POP_MUL) && p->code[i].t == PRIM_REG_F)
            return 1;
        /* a run search of codes (never negative) from a first start of 0 */
        if (op == POP_RUNS && (p->code[i].table_n <= 0 || p->code[i].table[0] > 0)) return 1;
        if (op == POP_INLIST && p->code[i].ival) return 1;
    }
    return 0;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Text of value i of in (SQLite's CAST(x AS TEXT): integers in decimal,
 * reals with 15 significant digits, DATE days (date != 0) as yyyy-mm-dd)
 * into buf (>= 32 bytes); NULL for a NULL value. */
static const char *number_text(const PrimVec *in, int64_t i, int date, char *buf) {
    if (in->valid && !in->valid[i]) return NULL;
    if (in->type == PRIM_I32) /* STRING codes: see value_text */
        return NULL;
    if (in->type == PRIM_F64)
        cat_format_real(((const double *)in->data)[i], 15, buf, 32);
    else if (date >= 2) /* DECIMAL of scale date - 2 */
        cat_format_decimal(((const int64_t *)in->data)[i], date - 2, buf, 32);
    else if (date)
        cat_format_date((int32_t)((const int64_t *)in->data)[i], buf);
    else
        snprintf(buf, 32, "%lld", (long long)((const int64_t *)in->data)[i]);
    return buf;
}

/* Text of value i of in as number_text, except that STRING codes (an I32
 * vector, group_concat's run-time text) read as their entry of dict d. */
static const char *value_text(const PrimVec *in, int64_t i, int date, const CatDict *d, char *buf) {
    if (in->type == PRIM_I32 && d)
        return in->valid && !in->valid[i] ? NULL : cat_dict_str(d, ((const int32_t *)in->data)[i]);
    return number_text(in, i, date, buf);
}

/* Bytes a row's text needs in to_text: 32 for a number, the longest
 * entries of the two dictionaries (plus NUL) for a pair index. */
static size_t text_width(const DagNode *node) {
    if (!node->totext_pair[0]) return 32;
    size_t w = 1;
    for (int k = 0; k < 2; k++) {
        int64_t m = 0;
        for (int64_t i = 0; i < node->totext_pair[k]->n; i++)
            if (cat_dict_len(node->totext_pair[k], i) > m)
                m = cat_dict_len(node->totext_pair[k], i);
        w += (size_t)m;
    }
    return w < 32 ? 32 : w;
}

/* Text of row i of to-text node node's input in (value_text, or for a
 * pair index x * |d1| + y the concatenation d1[x] || d2[y]) into buf
 * (text_width bytes); NULL for NULL. */
static const char *row_text(const DagNode *node, const PrimVec *in, int64_t i, int date,
                            const CatDict *d, char *buf) {
    const CatDict *p0 = node->totext_pair[0], *p1 = node->totext_pair[1];
    if (!p0) return value_text(in, i, date, d, buf);
    if (in->valid && !in->valid[i]) return NULL;
    int64_t v = ((const int64_t *)in->data)[i], n1 = p1->n ? p1->n : 1;
    int64_t a = v / n1, b = v % n1;
    if (a < 0 || a >= p0->n || b < 0 || b >= p1->n) return NULL;
    size_t la = (size_t)cat_dict_len(p0, a), lb = (size_t)cat_dict_len(p1, b);
    memcpy(buf, cat_dict_str(p0, a), la);
    memcpy(buf + la, cat_dict_str(p1, b), lb);
    buf[la + lb] = 0;
    return buf;
}

/* DN_TOTEXT node with TU_GCONCAT: in[0] holds the values in group order
 * (STRING codes of node->totext_dict or of d, numbers, DATE days), in[1]
 * the nseg group starts; out (nseg rows, validity) receives per group the
 * text of its non-NULL values joined by node->totext_text, NULL when it
 * has none, as codes into a dictionary built now (it joins x->dicts and
 * becomes out->rdict). SQLite's group_concat. Returns 0 or -1. */
static int group_concat(Exec *x, const DagNode *node, const PrimVec *in, const CatDict *d,
                        RtVal *out) {
    int64_t n = in[0].n, nseg = in[1].n;
    const int64_t *starts = in[1].data;
    const char *sep = node->totext_text ? node->totext_text : ",";
    size_t seplen = strlen(sep), total = 0;
    int date = node->totext_date;
    char nb[32];
    PrimVec *o = &out->h;
    size_t *lens = calloc((size_t)(nseg ? nseg : 1), sizeof(size_t));
    const char **strs = calloc((size_t)(nseg ? nseg : 1), sizeof(char *));
    CatDict **nd = realloc(x->dicts, sizeof(CatDict *) * (size_t)(x->ndicts + 1));
    if (nd) x->dicts = nd;
    if (!lens || !strs || !nd) {
        free(lens);
        free(strs);
        return ex_fail(x, "Execution Error: out of memory");
    }
    /* lengths first, then one buffer for every group's text */
    for (int pass = 0; pass < 2; pass++) {
        char *buf = NULL;
        if (pass == 1 && !(buf = malloc(total ? total : 1))) {
            free(lens);
            free(strs);
            return ex_fail(x, "Execution Error: out of memory");
        }
        size_t at = 0;
        for (int64_t s = 0; s < nseg; s++) {
            int64_t hi = s + 1 < nseg ? starts[s + 1] : n;
            size_t len = 0;
            int any = 0;
            if (pass == 1) strs[s] = buf + at;
            for (int64_t i = starts[s]; i < hi; i++) {
                const char *t = value_text(&in[0], i, date, d, nb);
                if (!t) continue;
                size_t tl = strlen(t);
                if (pass == 1) {
                    if (any) memcpy(buf + at + len, sep, seplen);
                    memcpy(buf + at + len + (any ? seplen : 0), t, tl);
                }
                len += (any ? seplen : 0) + tl;
                any = 1;
            }
            if (pass == 0) {
                total += len;
                if (o->valid) o->valid[s] = (uint8_t)any;
            } else {
                lens[s] = len;
                at += len;
            }
        }
        if (pass == 1) {
            CatDict *dict = cat_dict_build(strs, lens, nseg, o->data);
            free(buf);
            free(lens);
            free(strs);
            if (!dict) return ex_fail(x, "Execution Error: out of memory");
            x->dicts[x->ndicts++] = dict;
            out->rdict = dict;
        }
    }
    return 0;
}

/* 1 if strcmp-order c satisfies comparison op. */
static int cmp_holds(AstOp op, int c) {
    switch (op) {
    case OP_EQ:
        return c == 0;
    case OP_NE:
        return c != 0;
    case OP_LT:
        return c < 0;
    case OP_LE:
        return c <= 0;
    case OP_GT:
        return c > 0;
    default:
        return c >= 0;
    }
}

/* DN_TOTEXT node n over numbers in[0] (n rows; for TU_CMP with a second
 * input, in[1] holds STRING codes into node->totext_dict): the text of each
 * number (NULL -> NULL, or n->totext_null when set) used as
 * n->totext_use says (TextUse in planner.h) into out, whose host vector
 * ex_alloc sized with validity when an input has it. TU_TEXT builds a
 * dictionary of the texts now (it joins x->dicts and becomes
 * out->rdict). */
static int to_text(Exec *x, const DagNode *node, const PrimVec *in, int64_t n, RtVal *out) {
    int date = node->totext_date;
    const CatDict *rd = x->vals[node->inputs[0]].rdict; /* STRING input: group_concat */
    TextUse use = node->totext_use;
    PrimVec *o = &out->h;
    size_t w = text_width(node);
    if (use != TU_TEXT) {
        char *buf = malloc(w);
        if (!buf) return ex_fail(x, "Execution Error: out of memory");
        for (int64_t i = 0; i < n; i++) {
            const char *s = row_text(node, in, i, date, rd, buf);
            if (!s) s = node->totext_null;
            const char *other = node->totext_text;
            if ((use == TU_CMP || use == TU_LIKE) && node->ninputs > 1)
                other = in[1].valid && !in[1].valid[i]
                            ? NULL
                            : cat_dict_str(node->totext_dict, ((const int32_t *)in[1].data)[i]);
            if ((use == TU_CMP || (use == TU_LIKE && node->ninputs > 1)) && !other) s = NULL;
            if (o->valid) o->valid[i] = s != NULL;
            if (!s) s = other = "";
            switch (use) {
            case TU_INT:
                ((int64_t *)o->data)[i] = cat_text_to_int64(s);
                break;
            case TU_REAL:
                ((double *)o->data)[i] = cat_text_to_real(s);
                break;
            case TU_LIKE:
                ((uint8_t *)o->data)[i] =
                    (uint8_t)(plan_like_match(s, other) ^ (node->totext_neg ? 1 : 0));
                break;
            default:
                ((uint8_t *)o->data)[i] = (uint8_t)cmp_holds(node->totext_op, strcmp(s, other));
                break;
            }
        }
        free(buf);
        return 0;
    }
    char *buf = malloc((size_t)(n ? n : 1) * w);
    const char **strs = malloc(sizeof(char *) * (size_t)(n ? n : 1));
    size_t *lens = malloc(sizeof(size_t) * (size_t)(n ? n : 1));
    CatDict **nd = realloc(x->dicts, sizeof(CatDict *) * (size_t)(x->ndicts + 1));
    if (nd) x->dicts = nd;
    if (!buf || !strs || !lens || !nd) {
        free(buf);
        free(strs);
        free(lens);
        return ex_fail(x, "Execution Error: out of memory");
    }
    for (int64_t i = 0; i < n; i++) {
        const char *s = row_text(node, in, i, date, rd, buf + (size_t)i * w);
        if (!s) s = node->totext_null;
        if (o->valid) o->valid[i] = s != NULL;
        strs[i] = s ? s : "";
        lens[i] = strlen(strs[i]);
    }
    CatDict *d = cat_dict_build(strs, lens, n, o->data);
    free(buf);
    free(strs);
    free(lens);
    if (!d) return ex_fail(x, "Execution Error: out of memory");
    x->dicts[x->ndicts++] = d;
    out->rdict = d;
    return 0;
}

/* REAL rows for n values into r (host memory of the pool, is zeroed):
 * 0, or -1 with the error. The caller (an RtVal or ExecColumn) owns them. */
static int reals_alloc(Exec *x, PrimReals *r, int64_t n) {
    size_t m = (size_t)(n ? n : 1);
    r->val = host_alloc(x->pool, sizeof(double) * m);
    r->is = host_alloc(x->pool, m);
    if (!r->val || !r->is) return ex_fail(x, "Execution Error: out of memory");
    memset(r->is, 0, m);
    return 0;
}

/* The REAL rows (from an integer overflow) of a gather's result: row k
 * takes src's row ids[k] (none for an id outside 0..n-1, a NULL row). */
static int gather_reals(Exec *x, const PrimReals *src, int64_t n, const int64_t *ids, int64_t len,
                        PrimReals *out) {
    if (reals_alloc(x, out, len) != 0) return -1;
    for (int64_t k = 0; k < len; k++) {
        int64_t r = ids[k];
        int is = r >= 0 && r < n && src->is[r];
        out->is[k] = (uint8_t)is;
        out->val[k] = is ? src->val[r] : 0.0;
    }
    return 0;
}

/* 1 if node i reads a value with REAL rows from an integer overflow. */
static int node_has_reals(const Exec *x, int i) {
    const DagNode *n = &x->dag->nodes[i];
    for (int k = 0; k < n->ninputs; k++)
        if (x->vals[n->inputs[k]].re.is) return 1;
    return 0;
}

/* A sort's or segments' keys where an input holds REALs from an integer
 * overflow: that input becomes three keys (its value as a double, its
 * int64, whether it is a REAL of 2^63 or more), SQLite's exact numeric
 * order and equality. Two values whose doubles differ compare as those; an
 * integer and a REAL with the same double compare by the integer against
 * the REAL's truncation (its int64 slot), and an integer equal to that
 * truncation is below the REAL only where the REAL is 2^63 or more (the
 * flag); an integral REAL within the range equals the integer. */
typedef struct RealKeys {
    PrimVec keys[3 * DAG_MAX_IO];
    uint8_t desc[3 * DAG_MAX_IO];
    int nk;
    void *owned[2 * DAG_MAX_IO];
    int nowned;
} RealKeys;

/* Fills rk from node i's inputs in[0..ninputs) of len rows. 0, or -1 (out
 * of memory, with the error); real_keys_free in both cases. */
static int real_keys(Exec *x, int i, const PrimVec *in, int64_t len, RealKeys *rk) {
    DagNode *n = &x->dag->nodes[i];
    rk->nk = rk->nowned = 0;
    for (int k = 0; k < n->ninputs && k < DAG_MAX_IO; k++) {
        const PrimReals *r = &x->vals[n->inputs[k]].re;
        uint8_t dk = n->desc ? n->desc[k] : 0;
        if (!r->is) {
            rk->desc[rk->nk] = dk;
            rk->keys[rk->nk++] = in[k];
            continue;
        }
        size_t m = (size_t)(len ? len : 1);
        double *f = host_alloc(x->pool, sizeof(double) * m);
        uint8_t *is = host_alloc(x->pool, m);
        rk->owned[rk->nowned++] = f;
        rk->owned[rk->nowned++] = is;
        if (!f || !is) return ex_fail(x, "Execution Error: out of memory");
        const int64_t *v = in[k].data;
        for (int64_t j = 0; j < len; j++) {
            f[j] = r->is[j] ? r->val[j] : (double)v[j];
            is[j] = r->is[j] && r->val[j] >= 9223372036854775808.0;
        }
        PrimVec kf = {PRIM_F64, len, f, in[k].valid}, ki = {PRIM_U8, len, is, NULL};
        for (int c = 0; c < 3; c++) {
            rk->desc[rk->nk] = dk;
            rk->keys[rk->nk++] = c == 0 ? kf : c == 1 ? in[k] : ki;
        }
    }
    return 0;
}

static void real_keys_free(Exec *x, RealKeys *rk) {
    for (int k = 0; k < rk->nowned; k++)
        host_free(x->pool, rk->owned[k]);
    rk->nowned = 0;
}

/* SQLite's sum of one segment (sumStep / sumFinalize): integers exactly
 * until a REAL comes, then everything in doubles with Kahan-Babuska-
 * Neumaier compensation. */
typedef struct RealSum {
    int64_t isum;
    double rsum, rerr;
    int approx, ovfl;
    int64_t cnt;
} RealSum;

static void rsum_step(RealSum *p, double r) {
    double s = p->rsum, t = s + r;
    if (fabs(s) > fabs(r))
        p->rerr += (s - t) + r;
    else
        p->rerr += (r - t) + s;
    p->rsum = t;
}

/* An integer into the compensated sum: a large one in two parts, each
 * exact as a double. */
static void rsum_step_int(RealSum *p, int64_t v) {
    if (v <= -4503599627370496LL || v >= 4503599627370496LL) {
        int64_t big = v - v % 16384;
        rsum_step(p, (double)big);
        rsum_step(p, (double)(v - big));
    } else {
        rsum_step(p, (double)v);
    }
}

static void rsum_add(RealSum *p, int isreal, int64_t iv, double fv) {
    p->cnt++;
    if (!isreal) {
        if (p->approx) {
            rsum_step_int(p, iv);
        } else {
            int64_t t;
            if (!__builtin_add_overflow(p->isum, iv, &t)) {
                p->isum = t;
            } else {
                /* SUM's error, as SQLite's (even should a REAL follow);
                 * AVG goes on in doubles */
                p->ovfl = 1;
                p->approx = 1;
                p->rsum = p->rerr = 0;
                rsum_step_int(p, p->isum);
                rsum_step_int(p, iv);
            }
        }
        return;
    }
    if (!p->approx) {
        p->approx = 1;
        p->rsum = p->rerr = 0;
        rsum_step_int(p, p->isum);
    }
    rsum_step(p, fv);
}

/* 1 if the value of row a (an integer iv, or a REAL fv when ra) is below
 * that of row b, by SQLite's exact numeric comparison. */
static int real_less(int ra, int64_t ia, double fa, int rb, int64_t ib, double fb) {
    if (!ra && !rb) return ia < ib;
    if (ra && rb) return fa < fb;
    /* one integer, one REAL: compared exactly (a is the REAL: f < i iff
     * i > f) */
    int c = ra ? prim_cmp_int_real(ib, fa) : prim_cmp_int_real(ia, fb);
    return ra ? c > 0 : c < 0;
}

/* Segmented reduce node i (CPU) whose value holds REALs from an integer
 * overflow: SUM, AVG, MIN and MAX as SQLite computes them over INTEGER and
 * REAL values (a SUM or MIN / MAX result that is a REAL becomes one of the
 * output's REAL rows); COUNT as usual. */
static int segreduce_reals(Exec *x, int i, const PrimVec *val, const int64_t *starts, int64_t nseg,
                           int64_t len) {
    DagNode *n = &x->dag->nodes[i];
    RtVal *out = &x->vals[n->outputs[0]];
    const PrimReals *re = &x->vals[n->inputs[1]].re;
    const int64_t *v = val->data;
    int avg = n->agg == AGG_AVG;
    if (!avg && reals_alloc(x, &out->re, nseg) != 0) return -1;
    int anyreal = 0;
    for (int64_t s = 0; s < nseg; s++) {
        int64_t lo = starts[s], hi = s + 1 < nseg ? starts[s + 1] : len;
        RealSum sum = {0, 0, 0, 0, 0, 0};
        int have = 0, br = 0;
        int64_t bi = 0;
        double bf = 0;
        for (int64_t r = lo; r < hi; r++) {
            if (val->valid && !val->valid[r]) continue;
            int isr = re->is[r];
            if (n->agg == AGG_SUM || avg) {
                rsum_add(&sum, isr, v[r], isr ? re->val[r] : 0.0);
            } else if (!have ||
                       (n->agg == AGG_MIN ? real_less(isr, v[r], re->val[r], br, bi, bf)
                                          : real_less(br, bi, bf, isr, v[r], re->val[r]))) {
                br = isr, bi = v[r], bf = isr ? re->val[r] : 0.0;
            }
            have = 1;
        }
        uint8_t *ov = out->h.valid;
        if (ov) ov[s] = (uint8_t)have;
        if (!have) {
            if (avg)
                ((double *)out->h.data)[s] = 0.0;
            else
                ((int64_t *)out->h.data)[s] = 0;
            continue;
        }
        if (avg) {
            double t = sum.approx ? sum.rsum + sum.rerr : (double)sum.isum;
            ((double *)out->h.data)[s] = t / (double)sum.cnt;
            continue;
        }
        if (n->agg == AGG_SUM) {
            if (sum.ovfl) return ex_fail(x, "Execution Error: integer overflow");
            br = sum.approx;
            bi = sum.isum;
            bf = sum.rsum + sum.rerr;
        }
        if (br) {
            ((int64_t *)out->h.data)[s] = prim_real_to_int(bf);
            out->re.val[s] = bf;
            out->re.is[s] = 1;
            anyreal = 1;
        } else {
            ((int64_t *)out->h.data)[s] = bi;
        }
    }
    if (!avg && !anyreal) {
        host_free(x->pool, out->re.val);
        host_free(x->pool, out->re.is);
        out->re.val = NULL;
        out->re.is = NULL;
    }
    return 0;
}

/* Node i reads a value with REAL rows from an integer overflow (SQLite's
 * switch to REAL): the nodes that carry them (map, gather, concat, slice),
 * order or group by them (sort, segments: real_keys) or aggregate them
 * (segmented reduce: segreduce_reals) run on
 * their CPU twins (*gpu becomes 0); any other is not implemented for such
 * values and fails. 0, or -1 with the error. */
static int reals_in(Exec *x, int i, int *gpu) {
    DagNode *n = &x->dag->nodes[i];
    for (int k = 0; k < n->ninputs; k++) {
        if (!x->vals[n->inputs[k]].re.is) continue;
        int carries = n->kind == DN_MAP || (n->kind == DN_GATHER && k == 0) ||
                      n->kind == DN_CONCAT || n->kind == DN_SLICE || n->kind == DN_SORT ||
                      n->kind == DN_SEGMENTS || (n->kind == DN_SEGREDUCE && k == 1);
        if (!carries)
            return ex_fail(x,
                           "Not implemented Error: integer overflow: SQLite's REAL result "
                           "as input of a %s node (#%d%s%s)",
                           plan_dag_kind_name(n->kind), i, n->label ? ", " : "",
                           n->label ? n->label : "");
        if (*gpu) {
            *gpu = 0;
            n->device = DEV_CPU;
            n->real_cpu = 1;
        }
    }
    return 0;
}

/* Make node n's inputs available on its side (copying across PCIe where
 * needed) and describe them in in[0..ninputs). Returns 0 or -1. */
static int load_inputs(Exec *x, const DagNode *n, int gpu, PrimVec *in) {
    for (int k = 0; k < n->ninputs && k < DAG_MAX_IO; k++) {
        int v = n->inputs[k];
        if ((gpu ? ensure_dev(x, v) : ensure_host(x, v)) != 0) return -1;
        in[k] = gpu ? x->vals[v].d : x->vals[v].h;
        in[k].n = x->vals[v].n;
    }
    return 0;
}

/* 0 if dense-aggregate spec s fits node n: every input index it names is
 * one of n's inputs, the counts are within PRIM_DA_MAX, the node has
 * PRIM_DA_NOUT(naggs) outputs and there is a fact-length column to take
 * the row count from; -1 otherwise (a lowering bug, reported as such). */
static int dagg_check(const PrimDenseAgg *s, const DagNode *n) {
    if (!s || s->nranges < 0 || s->nranges > PRIM_DA_MAX || s->ndims < 0 ||
        s->ndims > PRIM_DA_MAX || s->nkeys < 0 || s->nkeys > PRIM_DA_MAX || s->naggs < 0 ||
        s->naggs > PRIM_DA_MAX || s->ngroups < 0 || n->noutputs != PRIM_DA_NOUT(s->naggs) ||
        n->ninputs < 1 || n->ninputs > DAG_MAX_IO || s->rows >= n->ninputs)
        return -1;
    int ni = n->ninputs;
#define DA_IN(k) ((k) >= 0 && (k) < ni)
    for (int f = 0; f < s->nranges; f++)
        if (!DA_IN(s->range_col[f])) return -1;
    for (int d = 0; d < s->ndims; d++)
        if (!DA_IN(s->dim_fk[d]) || !DA_IN(s->dim_map[d])) return -1;
    for (int j = 0; j < s->nkeys; j++)
        if (!DA_IN(s->key_col[j]) || s->key_dim[j] < -1 || s->key_dim[j] >= s->ndims) return -1;
    for (int a = 0; a < s->naggs; a++) {
        int op = s->val_op[a] == '+' || s->val_op[a] == '-' || s->val_op[a] == '*';
        if ((s->val_a[a] != -1 && !DA_IN(s->val_a[a])) || (op && !DA_IN(s->val_b[a])) ||
            (op && s->val_a[a] == -1))
            return -1;
    }
#undef DA_IN
    return 0;
}

/* 1 if primitive message m reports an integer overflow in the data (a
 * user-facing error, given without the node's name), else 0. */
static int ex_overflow(const char *m) {
    size_t n = strlen(m), k = strlen("integer overflow");
    return n >= k && strcmp(m + n - k, "integer overflow") == 0;
}

/* A GPU source node read in place (n->mapped): 1 with *d the device
 * addresses of h's host data and validity, else 0 (a column resident in
 * the cache is read there; a range that cannot be mapped is copied). */
static int source_mapped(Exec *x, DagNode *n, const PrimVec *h, PrimVec *d) {
    if (h->n == 0 || exec_device_resident(x->dev, h->data, h->n)) return 0;
    size_t bytes = (size_t)h->n * prim_type_width(h->type);
    void *dd = NULL, *dv = NULL;
    char e[256];
    int lock = n->mapped == 1;
    if (exec_device_map(x->dev, h->data, bytes, lock, &dd, e, sizeof e) != 0) return 0;
    if (h->valid && exec_device_map(x->dev, h->valid, (size_t)h->n, lock, &dv, e, sizeof e) != 0)
        return 0;
    *d = *h;
    d->data = dd;
    d->valid = dv;
    n->bytes_mapped = (int64_t)bytes + (h->valid ? h->n : 0);
    return 1;
}

/* Run node i on the CPU (gpu = 0) or the GPU (gpu = 1). */
static int run_node(Exec *x, int i, int gpu) {
    DagNode *n = &x->dag->nodes[i];
    PrimCtx *ctx = gpu ? &x->dctx : &x->hctx;
    int o0 = n->noutputs > 0 ? n->outputs[0] : -1;
    PrimVec in[DAG_MAX_IO];
    if (n->kind != DN_SOURCE && n->kind != DN_CONST && load_inputs(x, n, gpu, in) != 0) return -1;
    RtVal *out = o0 >= 0 ? &x->vals[o0] : NULL;
#define OUTV (gpu ? &out->d : &out->h)
    int rc = 0;
    switch (n->kind) {
    case DN_SOURCE: {
        const CatColumn *c = &n->table->cols[n->column];
        PrimVec h = {x->dag->values[o0].type, n->table->nrows, c->data, c->valid};
        out->h = h;
        out->n = h.n;
        out->ready = 1;
        n->rows_in = h.n;
        if (gpu && n->mapped && source_mapped(x, n, &h, &out->d)) return 0;
        if (gpu && exec_cache_get(x->dev, &h, &out->d, &n->bytes_h2d, x->cur_stream, x->err,
                                  x->errcap) != 0)
            return -1;
        out->d_cached = gpu; /* pinned in the cache until the value is released */
        return 0;
    }
    case DN_CONST: {
        PrimVec h = {PRIM_I64, n->cn, n->cdata, NULL};
        out->h = h;
        out->n = n->cn;
        out->ready = 1;
        return gpu ? ensure_dev(x, o0) : 0;
    }
    case DN_MAP: {
        int64_t len = n->len_from >= 0 ? x->vals[n->len_from].n : in[0].n;
        int want_valid = 0;
        if (!n->prog.as_filter) {
            want_valid = prog_makes_null(&n->prog);
            for (int k = 0; k < n->ninputs; k++)
                want_valid |= in[k].valid != NULL;
        }
        if (ex_alloc(x, o0, len, want_valid, gpu) != 0) return -1;
        n->rows_in = len;
        if (gpu) {
            rc = prim_gpu_map(ctx, &n->prog, in, len, OUTV);
        } else {
            /* SQLite's REAL where an integer overflows (the inputs' REALs in) */
            PrimReals ir[DAG_MAX_IO];
            for (int k = 0; k < n->ninputs && k < DAG_MAX_IO; k++)
                ir[k] = x->vals[n->inputs[k]].re;
            rc = prim_cpu_map_reals(ctx, &n->prog, in, ir, len, OUTV, &out->re);
            /* SQLite's REAL stands in for an INTEGER only (a DECIMAL's or a
             * DATE's overflow is an error) */
            if (rc == 0 && out->re.is && x->dag->values[o0].ltype != CAT_INT64)
                return ex_fail(x, "Execution Error: integer overflow");
        }
        if (rc == 0 && want_valid && !gpu) drop_all_valid(x, &out->h);
        break;
    }
    case DN_SCAN: {
        int64_t len = in[0].n;
        if (ex_alloc(x, o0, len, 0, gpu) != 0) return -1;
        n->rows_in = len;
        rc = gpu ? prim_gpu_scan(ctx, &in[0], len, out->d.data, &out->total)
                 : prim_cpu_scan(ctx, &in[0], len, out->h.data, &out->total);
        break;
    }
    case DN_SCATTER: {
        if (n->count_from < 0) {
            /* match marks: a fresh I64 vector of len_from's length, all -1,
             * then dst[idx[k]] = k (flags NULL); duplicate indices write
             * any one of their k, which is all the marks need */
            int64_t len = x->vals[n->len_from].n;
            if (ex_alloc(x, o0, len, 0, gpu) != 0) return -1;
            n->rows_in = in[0].n;
            if (gpu) {
                if (prim_gpu_memset(OUTV->data, 0xff, (size_t)len * 8, x->cur_stream, x->err,
                                    x->errcap) != 0)
                    return -1;
            } else if (len) {
                memset(OUTV->data, 0xff, (size_t)len * 8);
            }
            rc = gpu ? prim_gpu_scatter(ctx, NULL, NULL, in[0].data, in[0].n, OUTV)
                     : prim_cpu_scatter(ctx, NULL, NULL, in[0].data, in[0].n, OUTV);
            break;
        }
        int64_t total = x->vals[x->dag->nodes[n->count_from].outputs[0]].total;
        if (ex_alloc(x, o0, total, 0, gpu) != 0) return -1;
        n->rows_in = in[0].n;
        rc = gpu ? prim_gpu_scatter(ctx, NULL, in[0].data, in[1].data, in[0].n, OUTV)
                 : prim_cpu_scatter(ctx, NULL, in[0].data, in[1].data, in[0].n, OUTV);
        break;
    }
    case DN_GATHER: {
        int64_t len = in[1].n;
        if (ex_alloc(x, o0, len, in[0].valid != NULL || n->gather_nulls, gpu) != 0) return -1;
        n->rows_in = in[0].n;
        rc = gpu ? prim_gpu_gather(ctx, &in[0], in[1].data, len, OUTV)
                 : prim_cpu_gather(ctx, &in[0], in[1].data, len, OUTV);
        out->rdict = x->vals[n->inputs[0]].rdict;
        if (rc == 0 && x->vals[n->inputs[0]].re.is &&
            gather_reals(x, &x->vals[n->inputs[0]].re, in[0].n, in[1].data, len, &out->re) != 0)
            return -1;
        break;
    }
    case DN_SORT: {
        int64_t len = in[0].n;
        n->rows_in = len;
        /* ORDER BY ... LIMIT / OFFSET: only the range's rows of the order */
        int range = n->slice_limit >= 0 || n->slice_offset > 0;
        int64_t cnt = range ? prim_range_rows(len, n->slice_offset, n->slice_limit) : len, got = 0;
        if (ex_alloc(x, o0, cnt, 0, gpu) != 0) return -1;
        /* keys holding REALs from an integer overflow (CPU): exact keys */
        RealKeys rk = {.nk = 0, .nowned = 0};
        const PrimVec *keys = in;
        const uint8_t *desc = n->desc;
        int nk = n->ninputs;
        if (!gpu && node_has_reals(x, i)) {
            if (real_keys(x, i, in, len, &rk) != 0) {
                real_keys_free(x, &rk);
                return -1;
            }
            keys = rk.keys, desc = rk.desc, nk = rk.nk;
        }
        if (!range)
            rc = gpu ? prim_gpu_sort(ctx, keys, desc, nk, len, out->d.data)
                     : prim_cpu_sort(ctx, keys, desc, nk, len, out->h.data);
        else
            rc = gpu ? prim_gpu_sort_range(ctx, keys, desc, nk, len, n->slice_offset,
                                           n->slice_limit, out->d.data, &got)
                     : prim_cpu_sort_range(ctx, keys, desc, nk, len, n->slice_offset,
                                           n->slice_limit, out->h.data, &got);
        real_keys_free(x, &rk);
        break;
    }
    case DN_SEGMENTS: {
        int64_t len = in[0].n, nseg = 0;
        if (ex_alloc(x, o0, len, 0, gpu) != 0) return -1;
        n->rows_in = len;
        RealKeys rk = {.nk = 0, .nowned = 0}; /* as DN_SORT's */
        const PrimVec *keys = in;
        int nk = n->ninputs;
        if (!gpu && node_has_reals(x, i)) {
            if (real_keys(x, i, in, len, &rk) != 0) {
                real_keys_free(x, &rk);
                return -1;
            }
            keys = rk.keys, nk = rk.nk;
        }
        rc = gpu ? prim_gpu_segments(ctx, keys, nk, len, out->d.data, &nseg)
                 : prim_cpu_segments(ctx, keys, nk, len, out->h.data, &nseg);
        real_keys_free(x, &rk);
        out->n = nseg;
        OUTV->n = nseg;
        break;
    }
    case DN_SEGREDUCE: {
        int64_t nseg = in[0].n;
        int64_t len = n->ninputs > 1 ? in[1].n : x->vals[n->len_from].n;
        int counts = n->agg == AGG_COUNT || n->agg == AGG_COUNT_STAR;
        if (ex_alloc(x, o0, nseg, !counts, gpu) != 0) return -1;
        n->rows_in = len;
        const PrimVec *val = n->ninputs > 1 ? &in[1] : NULL;
        if (!gpu && !counts && val && x->vals[n->inputs[1]].re.is &&
            (n->agg == AGG_SUM || n->agg == AGG_AVG || n->agg == AGG_MIN || n->agg == AGG_MAX)) {
            if (segreduce_reals(x, i, val, in[0].data, nseg, len) != 0) return -1;
            break;
        }
        rc = gpu ? prim_gpu_segreduce_ex(ctx, n->agg, n->no_ovf, val, in[0].data, nseg, len, OUTV)
                 : prim_cpu_segreduce_ex(ctx, n->agg, n->no_ovf, val, in[0].data, nseg, len, OUTV);
        if (rc == 0 && !gpu) drop_all_valid(x, &out->h);
        break;
    }
    case DN_SEGRANK: {
        int64_t nseg = in[0].n, len = x->vals[n->len_from].n;
        if (ex_alloc(x, o0, len, 0, gpu) != 0) return -1;
        n->rows_in = len;
        rc = gpu ? prim_gpu_segrank(ctx, in[0].data, nseg, len, out->d.data)
                 : prim_cpu_segrank(ctx, in[0].data, nseg, len, out->h.data);
        break;
    }
    case DN_JOIN:
    case DN_CROSS: {
        PrimPairs pairs = {0, NULL, NULL};
        n->rows_in = in[0].n + in[1].n;
        if (n->kind == DN_JOIN)
            rc = gpu ? prim_gpu_join(ctx, &in[0], in[0].n, &in[1], in[1].n, &pairs)
                     : prim_cpu_join(ctx, &in[0], in[0].n, &in[1], in[1].n, &pairs);
        else
            rc = gpu ? prim_gpu_cross(ctx, in[0].n, in[1].n, &pairs)
                     : prim_cpu_cross(ctx, in[0].n, in[1].n, &pairs);
        if (rc != 0) break;
        RtVal *l = out, *r = &x->vals[n->outputs[1]];
        if (gpu && !pairs.left) {
            /* no pairs: a value's NULL device pointer means "not on the
             * device yet" (ensure_dev would copy an unset host side), so
             * an empty result still gets (minimal) device buffers */
            pairs.left = exec_dev_alloc(x->dev, 0, x->cur_stream);
            pairs.right = pairs.left ? exec_dev_alloc(x->dev, 0, x->cur_stream) : NULL;
            if (!pairs.left || !pairs.right) {
                char t[160];
                exec_dev_free(x->dev, pairs.left, x->cur_stream);
                exec_dev_free(x->dev, pairs.right, x->cur_stream);
                return ex_fail(x, "Device Error: out of device memory (join node #%d: %s)", i,
                               oom_text(x, t, sizeof t));
            }
        }
        PrimVec lv = {PRIM_I64, pairs.n, pairs.left, NULL};
        PrimVec rv = {PRIM_I64, pairs.n, pairs.right, NULL};
        if (gpu) {
            l->d = lv, r->d = rv;
            l->d_owned = r->d_owned = 1;
        } else {
            l->h = lv, r->h = rv;
            l->h_owned = r->h_owned = 1;
        }
        l->n = r->n = pairs.n;
        l->ready = r->ready = 1;
        break;
    }
    case DN_SLICE: {
        int64_t len = in[0].n;
        int64_t off = n->slice_offset < len ? n->slice_offset : len;
        int64_t cnt = len - off;
        if (n->slice_limit >= 0 && n->slice_limit < cnt) cnt = n->slice_limit;
        if (ex_alloc(x, o0, cnt, in[0].valid != NULL, gpu) != 0) return -1;
        size_t w = prim_type_width(in[0].type);
        n->rows_in = len;
        out->rdict = x->vals[n->inputs[0]].rdict;
        if (gpu) {
            if (prim_gpu_copy(out->d.data, (char *)in[0].data + (size_t)off * w, (size_t)cnt * w,
                              PRIM_D2D, x->cur_stream, x->err, x->errcap) != 0 ||
                (in[0].valid && prim_gpu_copy(out->d.valid, in[0].valid + off, (size_t)cnt,
                                              PRIM_D2D, x->cur_stream, x->err, x->errcap) != 0))
                return -1;
        } else {
            if (cnt) memcpy(out->h.data, (char *)in[0].data + (size_t)off * w, (size_t)cnt * w);
            if (cnt && in[0].valid) memcpy(out->h.valid, in[0].valid + off, (size_t)cnt);
            const PrimReals *r = &x->vals[n->inputs[0]].re;
            if (r->is) {
                /* REAL rows from an integer overflow: the same range */
                if (reals_alloc(x, &out->re, cnt) != 0) return -1;
                if (cnt) memcpy(out->re.val, r->val + off, sizeof(double) * (size_t)cnt);
                if (cnt) memcpy(out->re.is, r->is + off, (size_t)cnt);
            }
        }
        break;
    }
    case DN_CONCAT: {
        /* inputs of one type, copied one after another; validity when any
         * input has it (all-valid bytes for those without) */
        int64_t len = 0;
        int want_valid = 0;
        size_t w = prim_type_width(x->dag->values[o0].type);
        for (int k = 0; k < n->ninputs; k++) {
            if (in[k].type != x->dag->values[o0].type)
                return ex_fail(x, "Execution Error: concat node #%d input %d has another type", i,
                               k);
            len += in[k].n;
            want_valid |= in[k].valid != NULL;
        }
        if (ex_alloc(x, o0, len, want_valid, gpu) != 0) return -1;
        n->rows_in = len;
        int64_t at = 0;
        for (int k = 0; k < n->ninputs; k++) {
            int64_t cnt = in[k].n;
            char *dst = (char *)OUTV->data + (size_t)at * w;
            uint8_t *dv = want_valid ? OUTV->valid + at : NULL;
            if (gpu) {
                if (prim_gpu_copy(dst, in[k].data, (size_t)cnt * w, PRIM_D2D, x->cur_stream, x->err,
                                  x->errcap) != 0 ||
                    (dv && in[k].valid &&
                     prim_gpu_copy(dv, in[k].valid, (size_t)cnt, PRIM_D2D, x->cur_stream, x->err,
                                   x->errcap) != 0) ||
                    (dv && !in[k].valid &&
                     prim_gpu_memset(dv, 1, (size_t)cnt, x->cur_stream, x->err, x->errcap) != 0))
                    return -1;
            } else if (cnt) {
                memcpy(dst, in[k].data, (size_t)cnt * w);
                if (dv && in[k].valid) memcpy(dv, in[k].valid, (size_t)cnt);
                if (dv && !in[k].valid) memset(dv, 1, (size_t)cnt);
            }
            at += cnt;
        }
        int anyre = 0; /* REAL rows from an integer overflow (on the CPU) */
        for (int k = 0; k < n->ninputs; k++)
            anyre |= x->vals[n->inputs[k]].re.is != NULL;
        if (anyre) {
            if (reals_alloc(x, &out->re, len) != 0) return -1;
            at = 0;
            for (int k = 0; k < n->ninputs; k++) {
                const PrimReals *r = &x->vals[n->inputs[k]].re;
                if (r->is && in[k].n) {
                    memcpy(out->re.is + at, r->is, (size_t)in[k].n);
                    memcpy(out->re.val + at, r->val, sizeof(double) * (size_t)in[k].n);
                }
                at += in[k].n;
            }
        }
        break;
    }
    case DN_KEYMAP: {
        /* in[0]: keys of the selected dimension rows; in[1] (optional):
         * their row ids in the dimension table (I64), or the filter flags
         * of every dimension row (U8, in[0] then holds every row's key) */
        int64_t len = in[0].n;
        if (n->ninputs > 1 && in[1].n != len)
            return ex_fail(x, "Execution Error: keymap node #%d has %lld keys but %lld row ids", i,
                           (long long)len, (long long)in[1].n);
        if (n->km_range < 0 || x->dag->values[o0].type != PRIM_I64)
            return ex_fail(x, "Execution Error: keymap node #%d needs an I64 output of range >= 0",
                           i);
        if (ex_alloc(x, o0, n->km_range, 0, gpu) != 0) return -1;
        n->rows_in = len;
        int64_t *km = gpu ? out->d.data : out->h.data;
        if (n->ninputs > 1 && in[1].type == PRIM_U8) {
            rc = gpu ? prim_gpu_keymap_where(ctx, &in[0], in[1].data, len, n->km_min, n->km_range,
                                             km)
                     : prim_cpu_keymap_where(ctx, &in[0], in[1].data, len, n->km_min, n->km_range,
                                             km);
        } else {
            const int64_t *rows = n->ninputs > 1 ? in[1].data : NULL;
            rc = gpu ? prim_gpu_keymap(ctx, &in[0], rows, len, n->km_min, n->km_range, km)
                     : prim_cpu_keymap(ctx, &in[0], rows, len, n->km_min, n->km_range, km);
        }
        break;
    }
    case DN_DENSEAGG: {
        const PrimDenseAgg *s = n->dagg;
        if (dagg_check(s, n) != 0)
            return ex_fail(x, "Execution Error: dense-aggregate node #%d has a bad spec", i);
        /* fact rows: the row-id input, else the first (fact-length) input */
        int64_t len = s->rows >= 0 ? in[s->rows].n : in[0].n;
        PrimVec outs[DAG_MAX_OUT];
        for (int k = 0; k < n->noutputs; k++)
            if (x->dag->values[n->outputs[k]].type != PRIM_I64)
                return ex_fail(x, "Execution Error: dense-aggregate node #%d output %d is not I64",
                               i, k);
        for (int k = 0; k < n->noutputs; k++) {
            if (ex_alloc(x, n->outputs[k], s->ngroups, 0, gpu) != 0) return -1;
            outs[k] = gpu ? x->vals[n->outputs[k]].d : x->vals[n->outputs[k]].h;
        }
        n->rows_in = len;
        rc = gpu ? prim_gpu_denseagg(ctx, s, in, len, outs)
                 : prim_cpu_denseagg(ctx, s, in, len, outs);
        break;
    }
    case DN_DICTLIKE: {
        const CatDict *dict = n->totext_dict;
        if (ex_alloc(x, o0, dict->n, 0, gpu) != 0) return -1;
        n->rows_in = dict->n;
        if (!gpu) {
            like_table_cpu(x, dict, n->totext_text, n->totext_neg, out->h.data);
            break;
        }
        size_t cap = exec_device_capacity(x->dev),
               tbytes = (size_t)dict->offsets[dict->n] + sizeof(int64_t) * (size_t)(dict->n + 1);
        if (cap > 0 && tbytes > cap / LIKE_WHOLE_SHARE)
            rc = likedict_pieces(x, n, ctx, dict, out->d.data, cap / LIKE_PIECE_SHARE);
        else
            rc = likedict_range(x, n, ctx, dict, 0, dict->n, out->d.data);
        if (rc != 0 && !ctx->err[0]) return -1; /* x->err says why */
        break;
    }
    case DN_TRANSFER:
        return ex_fail(x, "Execution Error: transfer nodes are executed implicitly");
    case DN_TOTEXT: {
        if (gpu) return ex_fail(x, "Execution Error: to-text runs on the CPU only");
        if (n->totext_use == TU_GCONCAT) {
            if (ex_alloc(x, o0, in[1].n, 1, 0) != 0) return -1;
            n->rows_in = in[0].n;
            rc = group_concat(x, n, in,
                              n->totext_dict ? n->totext_dict : x->vals[n->inputs[0]].rdict, out);
            break;
        }
        int64_t len = in[0].n;
        int want_valid = in[0].valid != NULL || (n->ninputs > 1 && in[1].valid != NULL);
        if (ex_alloc(x, o0, len, want_valid, 0) != 0) return -1;
        n->rows_in = len;
        rc = to_text(x, n, in, len, out);
        break;
    }
    }
#undef OUTV
    if (rc != 0) {
        const char *m = ctx->err[0] ? ctx->err : "unknown error";
        if (ex_overflow(m)) return ex_fail(x, "Execution Error: integer overflow");
        if (strncmp(m, "Device Error", 12) == 0)
            return ex_fail(x, "%s (in %s node #%d)", m, plan_dag_kind_name(n->kind), i);
        return ex_fail(x, "Execution Error: %s node #%d failed: %s", plan_dag_kind_name(n->kind), i,
                       m);
    }
    return 0;
}

/* If node i is a filter map whose flags feed only a scan and a scatter
 * (the lowering of a filter) and the scan's offsets feed only that
 * scatter, return the scatter's index (the chain can run as one select
 * primitive), else -1. nuse[v] counts the consumers of value v. */
static int fusable_filter(const Dag *dag, int i, const int *nuse) {
    const DagNode *m = &dag->nodes[i];
    if (m->kind != DN_MAP || !m->prog.as_filter) return -1;
    int flags = m->outputs[0];
    if (nuse[flags] != 2) return -1;
    for (int s = i + 1; s < dag->nnodes; s++) {
        const DagNode *sn = &dag->nodes[s];
        if (sn->kind != DN_SCAN || sn->inputs[0] != flags) continue;
        int offs = sn->outputs[0];
        if (nuse[offs] != 1) return -1;
        for (int c = s + 1; c < dag->nnodes; c++) {
            const DagNode *cn = &dag->nodes[c];
            if (cn->kind == DN_SCATTER && cn->count_from == s && cn->inputs[0] == flags &&
                cn->inputs[1] == offs && cn->device == m->device && sn->device == m->device)
                return c;
        }
        return -1;
    }
    return -1;
}

/* Run filter map i and its scan and scatter (node c) as one select: the
 * scatter's output receives the selected row ids. */
static int run_select(Exec *x, int i, int c, int gpu) {
    DagNode *m = &x->dag->nodes[i];
    PrimCtx *ctx = gpu ? &x->dctx : &x->hctx;
    PrimVec in[DAG_MAX_IO];
    if (load_inputs(x, m, gpu, in) != 0) return -1;
    int64_t len = m->len_from >= 0 ? x->vals[m->len_from].n : in[0].n;
    int o = x->dag->nodes[c].outputs[0];
    if (ex_alloc(x, o, len, 0, gpu) != 0) return -1;
    RtVal *out = &x->vals[o];
    int64_t count = 0;
    int rc = gpu ? prim_gpu_select(ctx, &m->prog, in, len, out->d.data, &count)
                 : prim_cpu_select(ctx, &m->prog, in, len, out->h.data, &count);
    if (rc != 0 && ex_overflow(ctx->err)) return ex_fail(x, "Execution Error: integer overflow");
    if (rc != 0)
        return ex_fail(x, "%s%s (fused filter #%d)",
                       strncmp(ctx->err, "Device", 6) ? "Execution Error: " : "", ctx->err, i);
    out->n = count;
    (gpu ? &out->d : &out->h)->n = count;
    m->rows_in = len;
    return 0;
}

/* Hand value v's host copy to result column c. With copy = 0 the memory
 * moves into c when the executor owns it (v is then emptied: nothing may
 * read it again); otherwise, or when it is not the executor's to give (a
 * table column), c gets a copy and v is left intact. The caller passes
 * copy = 1 for every hand-off of a value but its last, so a value named
 * several times in the result (the same column twice, a GROUP BY or
 * ORDER BY key also selected, DISTINCT over repeated columns) is read
 * whole each time. A validity array without a NULL is dropped from c
 * only, never from v. */
static int take_result(Exec *x, int v, int copy, ExecColumn *c) {
    if (ensure_host(x, v) != 0) return -1;
    RtVal *r = &x->vals[v];
    PrimVec h = r->h;
    h.n = r->n;
    if (!r->h_owned || copy) {
        size_t bytes = (size_t)h.n * prim_type_width(h.type);
        void *d = host_alloc(x->pool, bytes);
        uint8_t *vd = h.valid ? host_alloc(x->pool, (size_t)h.n) : NULL;
        if (!d || (h.valid && !vd)) {
            host_free(x->pool, d);
            host_free(x->pool, vd);
            return ex_fail(x, "Execution Error: out of memory copying the result");
        }
        if (bytes) memcpy(d, h.data, bytes);
        if (vd && h.n) memcpy(vd, h.valid, (size_t)h.n);
        h.data = d;
        h.valid = vd;
    } else {
        /* moved: v no longer holds (or frees) this memory */
        r->h_owned = 0;
        r->h.data = NULL;
        r->h.valid = NULL;
    }
    drop_all_valid(x, &h);
    c->vec = h;
    if (r->re.is) {
        /* REAL rows from an integer overflow: the column's own copy */
        if (reals_alloc(x, &c->re, h.n) != 0) return -1;
        memcpy(c->re.val, r->re.val, sizeof(double) * (size_t)h.n);
        memcpy(c->re.is, r->re.is, (size_t)h.n);
    }
    return 0;
}

/* 1 if the attempt that failed with x->err ran out of device memory: a
 * device allocation failed since the session's failure count was oc, or a
 * CUDA call reported cudaErrorMemoryAllocation. */
static int dev_oom(const Exec *x, int64_t oc) {
    int64_t now = 0;
    if (!x->dev) return 0;
    exec_device_oom(x->dev, &now, NULL, NULL);
    return now != oc || strstr(x->err, "out of device memory") ||
           (strncmp(x->err, "Device Error", 12) == 0 && strstr(x->err, "out of memory"));
}

/* Undo a failed attempt of node i (fused with scatter fc when fc >= 0):
 * its outputs are released, whatever part of them was allocated. */
static void undo_node(Exec *x, int i, int fc) {
    const DagNode *n = &x->dag->nodes[i];
    for (int k = 0; k < n->noutputs; k++)
        ex_release(x, n->outputs[k]);
    if (fc >= 0) ex_release(x, x->dag->nodes[fc].outputs[0]);
}

/* 1 if node i reads value v (an input, or the value its length comes from). */
static int node_reads(const DagNode *n, int v) {
    for (int k = 0; k < n->ninputs; k++)
        if (n->inputs[k] == v) return 1;
    return n->len_from == v;
}

/* Make room on the device for node i after an out-of-memory: every live
 * value that node i does not read gives up its device copy (a cached
 * column is unpinned, an intermediate is first copied back to the host:
 * the executor copies it again should a later GPU node read it), then
 * every cached column no live value reads is evicted. Returns the device
 * bytes given up. */
static size_t free_for_node(Exec *x, int i) {
    const DagNode *n = &x->dag->nodes[i];
    char e[256];
    size_t before = exec_device_used(x->dev);
    /* nothing in flight may still read what is freed below */
    if (prim_gpu_device_sync(e, sizeof e) != 0) return 0;
    for (int v = 0; v < x->dag->nvalues; v++) {
        RtVal *r = &x->vals[v];
        if (!r->d.data || node_reads(n, v)) continue;
        if (r->d_owned && !r->h.data && ensure_host(x, v) != 0) {
            x->err[0] = 0; /* no host memory to spill to: keep it on the device */
            continue;
        }
        drop_dev(x, r);
    }
    exec_cache_evict_unread(x->dev);
    size_t after = exec_device_used(x->dev);
    return before > after ? before - after : 0;
}

/* Run node i (fused with scatter fc when fc >= 0) on the GPU; on a device
 * out-of-memory, free what it does not need and run it again, and if
 * that fails too, run it on its CPU twin when opt allows (--device auto;
 * *gpu becomes 0) or fail with the bytes needed and available. The node
 * records what happened for EXPLAIN ANALYZE. */
static int run_gpu_recover(Exec *x, const ExecOptions *opt, int i, int fc, int *gpu,
                           ExecStats *st) {
    DagNode *n = &x->dag->nodes[i];
    int fallback = opt && opt->oom_cpu_fallback;
    for (int attempt = 1;; attempt++) {
        int64_t oc = 0;
        exec_device_oom(x->dev, &oc, NULL, NULL);
        int rc = fc >= 0 ? run_select(x, i, fc, 1) : run_node(x, i, 1);
        if (rc == 0 || !dev_oom(x, oc)) return rc;
        size_t need = 0, avail = 0;
        int how = exec_device_oom(x->dev, NULL, &need, &avail);
        n->oom_need = (int64_t)need;
        n->oom_avail = (int64_t)avail;
        n->oom_limit = how == 2;
        undo_node(x, i, fc);
        switch (exec_oom_step(attempt, fallback)) {
        case EXEC_OOM_RETRY:
            /* free the cache and what this node does not read; again */
            free_for_node(x, i);
            x->err[0] = x->dctx.err[0] = 0;
            n->oom_action = 1;
            if (st) st->oom_retries++;
            continue;
        case EXEC_OOM_FAIL: {
            char t[160];
            return ex_fail(x, "Device Error: out of device memory in %s node #%d%s%s%s: %s",
                           plan_dag_kind_name(n->kind), i, n->label ? " (" : "",
                           n->label ? n->label : "", n->label ? ")" : "", oom_text(x, t, sizeof t));
        }
        case EXEC_OOM_CPU:
            break;
        }
        /* its CPU twin; its GPU consumers copy its outputs across (and
         * recover the same way should that not fit) */
        x->err[0] = x->hctx.err[0] = x->dctx.err[0] = 0;
        n->oom_action = 2;
        n->device = DEV_CPU;
        /* the scan and scatter fused into it move along (and back to the
         * GPU with it at the next run) */
        for (int s = i + 1; fc >= 0 && s <= fc; s++) {
            DagNode *f = &x->dag->nodes[s];
            if (s != fc && f->fused_with != i) continue;
            f->device = DEV_CPU;
            f->oom_action = 2;
            f->oom_need = n->oom_need;
            f->oom_avail = n->oom_avail;
            f->oom_limit = n->oom_limit;
        }
        if (st) st->oom_fallbacks++;
        *gpu = 0;
        return fc >= 0 ? run_select(x, i, fc, 0) : run_node(x, i, 0);
    }
}

/* One run of dag (exec_run); *gpu_ovf is set when a GPU kernel found an
 * integer overflow (the run then failed with it). */
static int exec_run_once(Dag *dag, const ExecOptions *opt, ExecResult *res, ExecStats *stats,
                         char *errbuf, size_t errcap, int *gpu_ovf) {
    Exec x;
    memset(&x, 0, sizeof x);
    memset(res, 0, sizeof *res);
    x.dag = dag;
    x.err = errbuf;
    x.errcap = errcap;
    x.dev = opt ? opt->dev : NULL;
    x.hctx.nthreads = opt && opt->nthreads > 0 ? opt->nthreads : 1;
    x.pool = opt ? opt->pool : NULL;
    res->pool = x.pool;
    x.hctx.alloc = host_alloc;
    x.hctx.free = host_free;
    x.hctx.ud = x.pool;
    x.hctx.interrupt = opt ? opt->interrupt : NULL;
    x.like_memo = opt ? opt->like_memo : NULL;
    if (x.dev) {
        x.dctx.nthreads = 1;
        x.dctx.stream = x.dev->stream;
        x.dctx.alloc = dev_alloc;
        x.dctx.free = dev_free;
        x.dctx.ud = &x;
        x.dctx.status = x.dev->d_status;
        x.cur_stream = x.dev->stream;
        prim_gpu_pool_peak(1);
    }
    x.vals = calloc((size_t)(dag->nvalues ? dag->nvalues : 1), sizeof(RtVal));
    x.last_use = malloc(sizeof(int) * (size_t)(dag->nvalues ? dag->nvalues : 1));
    void **ev = calloc((size_t)(dag->nnodes ? dag->nnodes : 1) * 2, sizeof(void *));
    if (!x.vals || !x.last_use || !ev) {
        free(x.vals);
        free(x.last_use);
        free(ev);
        return ex_fail(&x, "Execution Error: out of memory");
    }
    for (int v = 0; v < dag->nvalues; v++)
        x.last_use[v] = -1;
    for (int i = 0; i < dag->nnodes; i++) {
        DagNode *n = &dag->nodes[i];
        /* a node an earlier run moved to the CPU after an out-of-memory is
         * placed on the GPU again (memory may have been freed since) */
        if (n->oom_action == 2) n->device = DEV_GPU;
        n->oom_action = 0;
        n->oom_need = n->oom_avail = 0;
        n->oom_limit = 0;
        n->ms = 0;
        n->rows_in = n->rows_out = 0;
        n->launches = n->host_waits = 0;
        n->wait_ms = 0;
        n->bytes_h2d = n->bytes_d2h = n->bytes_mapped = n->dict_pieces = 0;
        for (int k = 0; k < n->ninputs; k++)
            x.last_use[n->inputs[k]] = i;
        if (n->len_from >= 0 && x.last_use[n->len_from] < i) x.last_use[n->len_from] = i;
        if (n->count_from >= 0) {
            int cv = dag->nodes[n->count_from].outputs[0];
            if (x.last_use[cv] < i) x.last_use[cv] = i;
        }
    }
    for (int r = 0; r < dag->nresults; r++)
        x.last_use[dag->results[r]] = INT_MAX;

    /* streams: a GPU node continues the stream of its first input's GPU
     * producer unless another node already did (then a branch starts on
     * the next stream); sources start branches */
    x.node_stream = malloc(sizeof(int) * (size_t)(dag->nnodes ? dag->nnodes : 1));
    x.done = calloc((size_t)(dag->nnodes ? dag->nnodes : 1), sizeof(void *));
    uint8_t *passed = calloc((size_t)(dag->nnodes ? dag->nnodes : 1), 1);
    x.last_reader = malloc(sizeof(int) * (size_t)(dag->nvalues ? dag->nvalues : 1) * EXEC_STREAMS);
    if (!x.node_stream || !x.done || !passed || !x.last_reader) {
        free(x.node_stream);
        free(x.done);
        free(x.last_reader);
        free(passed);
        free(x.vals);
        free(x.last_use);
        free(ev);
        return ex_fail(&x, "Execution Error: out of memory");
    }
    int next_stream = 0;
    for (int i = 0; i < dag->nnodes; i++) {
        DagNode *n = &dag->nodes[i];
        x.node_stream[i] = -1;
        if (n->device != DEV_GPU || !x.dev) continue;
        for (int k = 0; k < n->ninputs && x.node_stream[i] < 0; k++) {
            int p = dag->values[n->inputs[k]].producer;
            if (dag->nodes[p].device == DEV_GPU && !passed[p]) {
                passed[p] = 1;
                x.node_stream[i] = x.node_stream[p];
            }
        }
        if (x.node_stream[i] < 0) x.node_stream[i] = next_stream++ % EXEC_STREAMS;
    }
    free(passed);
    for (size_t k = 0; k < (size_t)dag->nvalues * EXEC_STREAMS; k++)
        x.last_reader[k] = -1;
    for (int i = 0; i < dag->nnodes; i++) {
        const DagNode *n = &dag->nodes[i];
        if (x.node_stream[i] < 0) continue;
        for (int k = 0; k < n->ninputs; k++) {
            x.last_reader[(size_t)n->inputs[k] * EXEC_STREAMS + (size_t)x.node_stream[i]] = i;
            x.vals[n->inputs[k]].gpu_in = 1;
        }
        if (n->len_from >= 0)
            x.last_reader[(size_t)n->len_from * EXEC_STREAMS + (size_t)x.node_stream[i]] = i;
    }

    /* consumers per value, for fusion decisions */
    int *nuse = calloc((size_t)(dag->nvalues ? dag->nvalues : 1), sizeof(int));
    uint8_t *skip = calloc((size_t)(dag->nnodes ? dag->nnodes : 1), 1);
    if (!nuse || !skip) {
        free(nuse);
        free(skip);
        free(x.node_stream);
        free(x.done);
        free(x.last_reader);
        free(x.vals);
        free(x.last_use);
        free(ev);
        return ex_fail(&x, "Execution Error: out of memory");
    }
    for (int i = 0; i < dag->nnodes; i++) {
        DagNode *n = &dag->nodes[i];
        n->fused_with = -1;
        for (int k = 0; k < n->ninputs; k++)
            nuse[n->inputs[k]]++;
        if (n->len_from >= 0) nuse[n->len_from]++;
    }
    for (int r = 0; r < dag->nresults; r++)
        nuse[dag->results[r]]++;

    double t_start = now_ms();
    int rc = 0;
    ExecStats rstats; /* the recovery counts, copied into *stats at the end */
    memset(&rstats, 0, sizeof rstats);
    if (x.dev) x.dev->running = 1;
    /* EXPLAIN ANALYZE on a GPU: the origin of the nodes' start times */
    void *ev_run = x.dev && opt && opt->profile ? prim_gpu_event_record(x.dev->stream) : NULL;
    for (int i = 0; i < dag->nnodes; i++)
        dag->nodes[i].start_ms = -1;
    for (int i = 0; i < dag->nnodes && rc == 0; i++) {
        DagNode *n = &dag->nodes[i];
        int gpu = n->device == DEV_GPU;
        if (skip[i]) {
            n->rows_out = n->noutputs ? x.vals[n->outputs[0]].n : 0;
            continue;
        }
        if (gpu && !x.dev) {
            rc = ex_fail(&x, "Device Error: node #%d is placed on the GPU but no GPU is usable", i);
            break;
        }
        if (x.hctx.interrupt && __atomic_load_n(x.hctx.interrupt, __ATOMIC_RELAXED)) {
            rc = ex_fail(&x, "Interrupted");
            break;
        }
        x.hctx.err[0] = x.dctx.err[0] = 0;
        x.cur = n;
        if (gpu) {
            x.cur_stream = x.dev->streams[x.node_stream[i]];
            x.dctx.stream = x.cur_stream;
        }
        if (reals_in(&x, i, &gpu) != 0) {
            rc = -1;
            break;
        }
        double t0 = now_ms(), w0;
        int64_t l0, h0;
        prim_gpu_host_counters(&l0, &h0, &w0);
        int prof = gpu && opt && opt->profile;
        if (prof) ev[2 * i] = prim_gpu_event_record(x.cur_stream);
        int fc =
            (opt && opt->no_fusion) || node_has_reals(&x, i) ? -1 : fusable_filter(dag, i, nuse);
        if (fc >= 0) {
            /* the scan between map and scatter is the one node in that range */
            for (int s = i + 1; s <= fc; s++)
                if (dag->nodes[s].kind == DN_SCAN && dag->nodes[s].inputs[0] == n->outputs[0]) {
                    skip[s] = 1;
                    dag->nodes[s].fused_with = i;
                    x.node_stream[s] = x.node_stream[i];
                }
            skip[fc] = 1;
            dag->nodes[fc].fused_with = i;
            /* the scatter's output is written here, on this node's stream */
            x.node_stream[fc] = x.node_stream[i];
            rc = gpu ? run_gpu_recover(&x, opt, i, fc, &gpu, &rstats) : run_select(&x, i, fc, gpu);
            if (rc != 0 && !gpu && strcmp(x.err, "Execution Error: integer overflow") == 0) {
                /* the filter with SQLite's REALs: the map, scan and
                 * scatter one by one (the map gives them) */
                undo_node(&x, i, fc);
                for (int s = i + 1; s <= fc; s++)
                    if (dag->nodes[s].fused_with == i) {
                        skip[s] = 0;
                        dag->nodes[s].fused_with = -1;
                    }
                x.err[0] = x.hctx.err[0] = 0;
                rc = run_node(&x, i, 0);
            }
        } else {
            rc = gpu ? run_gpu_recover(&x, opt, i, -1, &gpu, &rstats) : run_node(&x, i, gpu);
        }
        if (prof && !gpu) {
            /* it ran on the CPU after all: its time is the wall time */
            prim_gpu_event_destroy(ev[2 * i]);
            ev[2 * i] = NULL;
            prof = 0;
        }
        if (prof) ev[2 * i + 1] = prim_gpu_event_record(x.cur_stream);
        if (gpu && rc == 0) {
            x.done[i] = prim_gpu_event_mark(x.cur_stream);
            if (fc >= 0) x.done[fc] = prim_gpu_event_mark(x.cur_stream);
        }
        n->ms = n->issue_ms = now_ms() - t0;
        {
            double w1;
            int64_t l1, h1;
            prim_gpu_host_counters(&l1, &h1, &w1);
            n->launches = l1 - l0;
            n->host_waits = h1 - h0;
            n->wait_ms = w1 - w0;
        }
        if (rc == 0 && n->noutputs) n->rows_out = fc >= 0 ? n->rows_in : x.vals[n->outputs[0]].n;
        for (int k = 0; k < n->ninputs; k++)
            if (x.last_use[n->inputs[k]] == i) ex_release_at(&x, n->inputs[k], i);
        if (n->len_from >= 0 && x.last_use[n->len_from] == i) ex_release_at(&x, n->len_from, i);
        if (n->count_from >= 0) {
            int cv = dag->nodes[n->count_from].outputs[0];
            if (x.last_use[cv] == i) ex_release_at(&x, cv, i);
        }
        for (int k = 0; k < n->noutputs; k++)
            if (x.last_use[n->outputs[k]] < 0) ex_release(&x, n->outputs[k]);
    }
    x.cur = NULL;
    double tail0 = now_ms(), tw0;
    int64_t th0;
    prim_gpu_host_counters(NULL, &th0, &tw0);
    if (rc == 0) {
        res->ncols = dag->nresults;
        res->cols = calloc((size_t)(dag->nresults ? dag->nresults : 1), sizeof(ExecColumn));
        if (!res->cols) rc = ex_fail(&x, "Execution Error: out of memory");
        /* issue every result column's copy back, then wait once */
        int issued = 0;
        for (int r = 0; r < dag->nresults && rc == 0; r++) {
            int v = dag->results[r];
            if (x.vals[v].h.data || !x.vals[v].d.data) continue;
            x.cur = &dag->nodes[dag->values[v].producer];
            rc = ensure_host_issue(&x, v, 0);
            issued = 1;
        }
        x.cur = NULL;
        if (rc == 0 && issued) rc = prim_gpu_device_sync(x.err, x.errcap);
        for (int r = 0; r < dag->nresults && rc == 0; r++) {
            int v = dag->results[r];
            /* copy unless no later result column hands out v again */
            int copy = 0;
            for (int q = r + 1; q < dag->nresults; q++)
                if (dag->results[q] == v) copy = 1;
            DagNode *prod = &dag->nodes[dag->values[v].producer];
            x.cur = prod;
            if (take_result(&x, v, copy, &res->cols[r]) != 0) {
                rc = -1;
                break;
            }
            res->cols[r].ltype = dag->values[v].ltype;
            res->cols[r].scale = dag->values[v].scale;
            res->cols[r].dict = dag->values[v].dict ? dag->values[v].dict : x.vals[v].rdict;
            if (r == 0) res->nrows = res->cols[r].vec.n;
        }
        x.cur = NULL;
        if (rc != 0) exec_result_free(res);
    }
    if (rc == 0) {
        res->dicts = x.dicts;
        res->ndicts = x.ndicts;
    } else {
        for (int k = 0; k < x.ndicts; k++)
            cat_dict_free(x.dicts[k]);
        free(x.dicts);
    }
    if (x.dev && rc == 0) rc = prim_gpu_device_sync(x.err, x.errcap);
    if (x.dev && rc == 0 && x.dev->h_status && *x.dev->h_status) {
        /* a kernel found an integer overflow: read after the sync above */
        exec_result_free(res);
        rc = ex_fail(&x, "Execution Error: integer overflow");
        *gpu_ovf = 1;
    }
    double t_end = now_ms();
    {
        int64_t th1;
        double tw1;
        prim_gpu_host_counters(NULL, &th1, &tw1);
        dag->tail_ms = t_end - tail0;
        dag->tail_waits = th1 - th0;
    }
    /* GPU node times from their events (measured after the run so that
     * recording them never synchronized the stream) */
    for (int i = 0; i < dag->nnodes; i++) {
        if (ev[2 * i] && ev[2 * i + 1] && rc == 0) {
            float ms = prim_gpu_event_ms(ev[2 * i], ev[2 * i + 1]);
            if (ms >= 0) dag->nodes[i].ms = ms;
            float at = ev_run ? prim_gpu_event_ms(ev_run, ev[2 * i]) : -1;
            if (ms >= 0 && at >= 0) dag->nodes[i].start_ms = at;
        }
        prim_gpu_event_destroy(ev[2 * i]);
        prim_gpu_event_destroy(ev[2 * i + 1]);
    }
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->total_ms = t_end - t_start;
        for (int i = 0; i < dag->nnodes; i++) {
            stats->bytes_h2d += dag->nodes[i].bytes_h2d;
            stats->bytes_mapped += dag->nodes[i].bytes_mapped;
            stats->bytes_d2h += dag->nodes[i].bytes_d2h;
        }
        if (x.dev) stats->peak_device_bytes = prim_gpu_pool_peak(0);
        stats->oom_retries = rstats.oom_retries;
        stats->oom_fallbacks = rstats.oom_fallbacks;
    }
    for (int v = 0; v < dag->nvalues; v++)
        ex_release(&x, v);
    if (x.dev) {
        char e2[256];
        prim_gpu_device_sync(e2, sizeof e2);
        for (int i = 0; i < dag->nnodes; i++)
            prim_gpu_event_destroy(x.done[i]);
        /* an overflow found before another error caused it; reset the word
         * for the next run (no kernel runs after the sync) */
        if (x.dev->h_status && *x.dev->h_status) {
            if (rc != 0 && !strstr(x.err, "integer overflow"))
                ex_fail(&x, "Execution Error: integer overflow");
            *x.dev->h_status = 0;
            *gpu_ovf = 1;
        }
        x.dev->running = 0;
    }
    free(x.node_stream);
    free(x.done);
    free(x.last_reader);
    free(ev);
    prim_gpu_event_destroy(ev_run);
    free(nuse);
    free(skip);
    free(x.vals);
    free(x.last_use);
    return rc;
}

int exec_run(Dag *dag, const ExecOptions *opt, ExecResult *res, ExecStats *stats, char *errbuf,
             size_t errcap) {
    /* nodes an earlier run moved to the CPU for REALs go back to the GPU */
    for (int i = 0; i < dag->nnodes; i++) {
        if (dag->nodes[i].real_cpu) dag->nodes[i].device = DEV_GPU;
        dag->nodes[i].real_cpu = 0;
    }
    int gpu_ovf = 0;
    int rc = exec_run_once(dag, opt, res, stats, errbuf, errcap, &gpu_ovf);
    if (rc == 0 || !gpu_ovf) return rc;
    /* A GPU kernel found an integer overflow, where SQLite switches to REAL
     * (or, in a SUM, fails): the run again with every node on its CPU
     * twin, whose maps give the REALs (prim_cpu_map_reals). */
    for (int i = 0; i < dag->nnodes; i++)
        if (dag->nodes[i].device == DEV_GPU) {
            dag->nodes[i].device = DEV_CPU;
            dag->nodes[i].real_cpu = 2;
        }
    errbuf[0] = 0;
    gpu_ovf = 0;
    return exec_run_once(dag, opt, res, stats, errbuf, errcap, &gpu_ovf);
}

void exec_result_free(ExecResult *res) {
    if (!res) return;
    for (int i = 0; i < res->ncols; i++) {
        exec_pool_release(res->pool, res->cols[i].vec.data);
        exec_pool_release(res->pool, res->cols[i].vec.valid);
        exec_pool_release(res->pool, res->cols[i].re.val);
        exec_pool_release(res->pool, res->cols[i].re.is);
    }
    for (int k = 0; k < res->ndicts; k++)
        cat_dict_free(res->dicts[k]);
    free(res->dicts);
    free(res->cols);
    memset(res, 0, sizeof *res);
}
