/*
 * device.c -- the GPU session of the executor: one stream, and the cache of
 * table columns resident in device memory. A column is copied on first use
 * (its host range page-locked first when it is large enough for that to pay,
 * so the copy runs at pinned bandwidth)
 * and stays resident across queries until the byte budget forces the least
 * recently used column out. Every device allocation of the executor goes
 * through exec_dev_alloc here: it is accounted against memory_limit
 * (budget.c), and a failing one first evicts cached columns no live value
 * of the running query reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/exec_internal.h"

/* Wait for the copies exec_cache_prefetch issued (before host memory they
 * read is unlocked or an entry they fill is dropped outside a run). */
static void copies_done(ExecDevice *d) {
    char e[128];
    if (d->copy_stream) prim_gpu_sync(d->copy_stream, e, sizeof e);
}

ExecDevice *exec_device_open(size_t budget_bytes, char *err, size_t cap) {
    if (!prim_gpu_available()) {
        snprintf(err, cap, "Device Error: no usable CUDA device");
        return NULL;
    }
    ExecDevice *d = calloc(1, sizeof(ExecDevice));
    if (!d) {
        snprintf(err, cap, "Device Error: out of memory");
        return NULL;
    }
    for (int k = 0; k < EXEC_STREAMS; k++) {
        d->streams[k] = prim_gpu_stream_create();
        if (!d->streams[k]) {
            for (int j = 0; j < k; j++)
                prim_gpu_stream_destroy(d->streams[j]);
            free(d);
            snprintf(err, cap, "Device Error: cannot create a CUDA stream");
            return NULL;
        }
    }
    d->stream = d->streams[0];
    void *dst = NULL;
    d->h_status = prim_gpu_mapped_alloc(sizeof(int), &dst);
    d->d_status = d->h_status ? dst : NULL;
    /* TUNING: 48 GiB (60% of an 80 GB H100) for resident columns leaves the
     * rest for intermediates; a choice, not a measurement. */
    d->budget = budget_bytes ? budget_bytes : (size_t)48 << 30;
    return d;
}

void exec_device_set_limit(ExecDevice *d, size_t bytes, double pct) {
    if (!d) return;
    d->limit_bytes = bytes;
    d->limit_pct = pct;
    d->mem.limit = bytes;
    if (pct > 0) {
        size_t fr = 0, total = 0;
        if (prim_gpu_mem_info(&fr, &total) == 0) {
            double l = (double)total * pct / 100.0;
            d->mem.limit = l < 1 ? 1 : (size_t)l;
        } else {
            d->mem.limit = 0; /* the device's size is unknown: no limit */
        }
    }
}

size_t exec_device_limit(const ExecDevice *d) {
    return d ? d->mem.limit : 0;
}

size_t exec_device_used(const ExecDevice *d) {
    return d ? d->mem.used : 0;
}

size_t exec_device_capacity(const ExecDevice *d) {
    if (!d) return 0;
    if (d->mem.limit) return d->mem.limit;
    size_t fr = 0, total = 0;
    if (prim_gpu_mem_info(&fr, &total) != 0) return 0;
    return d->mem.used + fr;
}

void exec_device_fail_at(ExecDevice *d, int64_t n, int sticky) {
    if (d) exec_budget_fail_at(&d->mem, n, sticky);
}

int64_t exec_device_alloc_count(const ExecDevice *d) {
    return d ? d->mem.count : 0;
}

int exec_device_oom(const ExecDevice *d, int64_t *count, size_t *need, size_t *avail) {
    if (!d) return 0;
    if (count) *count = d->oom_count;
    if (need) *need = d->oom_need;
    if (avail) *avail = d->oom_avail;
    return d->oom_by_limit ? 2 : 1;
}

void exec_device_set_lock_min(ExecDevice *d, size_t bytes) {
    if (d) d->lock_min = bytes;
}

/* Drop cache entry i (device memory freed, host range unpinned). */
static void cache_drop(ExecDevice *d, int i) {
    ExecCacheEntry *e = &d->cache[i];
    /* its copy may still run on another stream (exec_cache_prefetch's):
     * the frees below come after it in stream order */
    char err[128];
    prim_gpu_stream_wait(d->stream, e->ready, err, sizeof err);
    exec_dev_free(d, e->d_data, d->stream);
    exec_dev_free(d, e->d_valid, d->stream);
    prim_gpu_event_destroy(e->ready);
    if (e->pinned) prim_gpu_host_unregister((void *)e->h_data);
    d->cache_bytes -= e->bytes;
    d->cache[i] = d->cache[--d->ncache];
    d->epoch++;
}

void exec_device_invalidate(ExecDevice *d) {
    if (!d) return;
    while (d->ncache)
        cache_drop(d, d->ncache - 1);
}

static void drain(ExecDevice *d);

void exec_device_forget(ExecDevice *d, const void *h_data, int64_t n) {
    if (!d || !h_data) return;
    for (int i = d->ncache - 1; i >= 0; i--)
        if (d->cache[i].h_data == h_data && (n < 0 || d->cache[i].n == n)) cache_drop(d, i);
    if (n >= 0) return; /* a chunk's slice: the table's column stays */
    for (int i = d->nstreamed - 1; i >= 0; i--)
        if (d->streamed[i].p == (const char *)h_data) {
            if (d->streamed[i].pinned) {
                drain(d); /* no copy from it may be in flight */
                prim_gpu_host_unregister((void *)d->streamed[i].p);
            }
            d->streamed[i] = d->streamed[--d->nstreamed];
        }
}

/* 1 if [p, p + bytes) lies inside a range kept page-locked. */
static int in_kept_pinned(const ExecDevice *d, const void *p, size_t bytes) {
    const char *c = p;
    for (int i = 0; i < d->nstreamed; i++) {
        const ExecStreamed *r = &d->streamed[i];
        if (r->pinned && c >= r->p && c + bytes <= r->p + r->bytes) return 1;
    }
    return 0;
}

int exec_device_locked(const ExecDevice *d, const void *p, size_t bytes) {
    return d && p && in_kept_pinned(d, p, bytes);
}

/* The entry of host range [p, p + bytes) among d's streamed ranges, added
 * (not locked, no runs) when missing; NULL when out of memory. */
static ExecStreamed *streamed_entry(ExecDevice *d, const void *p, size_t bytes) {
    for (int i = 0; i < d->nstreamed; i++)
        if (d->streamed[i].p == (const char *)p && d->streamed[i].bytes == bytes)
            return &d->streamed[i];
    if (d->nstreamed == d->streamed_cap) {
        int nc = d->streamed_cap ? 2 * d->streamed_cap : 8;
        ExecStreamed *ns = realloc(d->streamed, sizeof *ns * (size_t)nc);
        if (!ns) return NULL;
        d->streamed = ns;
        d->streamed_cap = nc;
    }
    ExecStreamed *r = &d->streamed[d->nstreamed++];
    memset(r, 0, sizeof *r);
    r->p = p;
    r->bytes = bytes;
    return r;
}

void exec_device_streamed(ExecDevice *d, const void *p, size_t bytes) {
    if (!d || !p || !bytes) return;
    ExecStreamed *r = streamed_entry(d, p, bytes);
    if (!r) return;
    r->runs++;
    /* a whole cached copy of the column registered it already: leave it */
    for (int i = 0; i < d->ncache; i++)
        if (d->cache[i].pinned && d->cache[i].h_data == p) return;
    char err[256];
    if (r->runs >= 2 && !r->pinned &&
        prim_gpu_host_register((void *)r->p, r->bytes, err, sizeof err) == 0)
        r->pinned = 1;
}

int exec_device_map(ExecDevice *d, const void *p, size_t bytes, int may_lock, void **dev, char *err,
                    size_t cap) {
    *dev = NULL;
    if (!d || !p || !bytes) return -1;
    const char *c = p;
    ExecStreamed *r = NULL;
    /* a range kept locked (never one a cache entry locked: an eviction
     * would unlock it under a running kernel) */
    for (int i = 0; i < d->nstreamed && !r; i++)
        if (d->streamed[i].pinned && c >= d->streamed[i].p &&
            c + bytes <= d->streamed[i].p + d->streamed[i].bytes)
            r = &d->streamed[i];
    if (!r) {
        if (!may_lock) return -1;
        /* a cache entry's lock over it would make a second lock fail */
        for (int i = 0; i < d->ncache; i++) {
            const ExecCacheEntry *e = &d->cache[i];
            const char *a = e->h_data, *b = a + (size_t)e->n * prim_type_width(e->type);
            if (e->pinned && a < c + bytes && c < b) return -1;
        }
        if (!(r = streamed_entry(d, p, bytes))) return -1;
        if (!r->pinned) {
            if (prim_gpu_host_register((void *)r->p, r->bytes, err, cap) != 0) return -1;
            r->pinned = 1;
        }
    }
    return prim_gpu_host_device_ptr(r->p, (size_t)(c - r->p), dev, err, cap);
}

void exec_device_close(ExecDevice *d) {
    if (!d) return;
    exec_device_invalidate(d);
    char err[128];
    prim_gpu_device_sync(err, sizeof err);
    for (int i = 0; i < d->nstreamed; i++)
        if (d->streamed[i].pinned) prim_gpu_host_unregister((void *)d->streamed[i].p);
    free(d->streamed);
    for (int k = 0; k < EXEC_STREAMS; k++)
        prim_gpu_stream_destroy(d->streams[k]);
    prim_gpu_stream_destroy(d->copy_stream);
    prim_gpu_pinned_free((void *)d->h_status);
    exec_budget_free(&d->mem);
    free(d->cache);
    free(d);
}

/* Wait for every stream before device memory that a kernel still in
 * flight may read is freed for reuse (an unread cache entry may still be
 * read by a node issued earlier on another stream). */
static void drain(ExecDevice *d) {
    char e[256];
    if (d->running)
        prim_gpu_device_sync(e, sizeof e);
    else
        copies_done(d);
}

size_t exec_cache_evict_unread(ExecDevice *d) {
    size_t freed = 0;
    int v = exec_cache_victim(d->cache, d->ncache);
    if (v < 0) return 0;
    char e[256];
    prim_gpu_device_sync(e, sizeof e);
    for (; v >= 0; v = exec_cache_victim(d->cache, d->ncache)) {
        freed += d->cache[v].bytes;
        cache_drop(d, v);
    }
    /* the frees above are stream-ordered: let them complete, so that an
     * allocation on any stream can reuse the memory */
    prim_gpu_device_sync(e, sizeof e);
    return freed;
}

void exec_cache_unpin(ExecDevice *d, const void *h_data, int64_t n, PrimType type) {
    if (!d) return;
    for (int i = 0; i < d->ncache; i++) {
        ExecCacheEntry *e = &d->cache[i];
        if (e->h_data == h_data && e->n == n && e->type == type && e->readers > 0) {
            e->readers--;
            return;
        }
    }
}

/* Record a failed allocation of need bytes with avail available. */
static void *oom(ExecDevice *d, size_t need, size_t avail, int by_limit) {
    d->oom_count++;
    d->oom_need = need;
    d->oom_avail = avail;
    d->oom_by_limit = by_limit;
    return NULL;
}

void *exec_dev_alloc(ExecDevice *d, size_t bytes, void *stream) {
    size_t b = bytes ? bytes : 256; /* what prim_gpu_malloc takes for 0 */
    if (d->no_evict) {              /* a prefetch: what is free now, or nothing */
        void *p = exec_budget_fits(&d->mem, b) ? prim_gpu_malloc(b, stream) : NULL;
        if (p && exec_budget_add(&d->mem, p, b) != 0) {
            prim_gpu_free(p, stream);
            p = NULL;
        }
        return p;
    }
    if (exec_budget_inject(&d->mem)) {
        /* injected: as if the device had nothing left */
        size_t l = exec_budget_left(&d->mem);
        return oom(d, b, l == SIZE_MAX ? 0 : l, 0);
    }
    if (!exec_budget_fits(&d->mem, b)) {
        /* over memory_limit: evict unread columns, least recently used first */
        int v;
        int drained = 0;
        while (!exec_budget_fits(&d->mem, b) && (v = exec_cache_victim(d->cache, d->ncache)) >= 0) {
            if (!drained) drain(d);
            drained = 1;
            cache_drop(d, v);
        }
        if (!exec_budget_fits(&d->mem, b)) return oom(d, b, exec_budget_left(&d->mem), 1);
    }
    void *p = prim_gpu_malloc(b, stream);
    if (!p && exec_cache_evict_unread(d) > 0) p = prim_gpu_malloc(b, stream);
    if (!p) {
        size_t fr = 0, total = 0;
        prim_gpu_mem_info(&fr, &total);
        size_t l = exec_budget_left(&d->mem);
        return oom(d, b, fr < l ? fr : l, 0);
    }
    if (exec_budget_add(&d->mem, p, b) != 0) {
        prim_gpu_free(p, stream);
        return oom(d, b, 0, 0);
    }
    return p;
}

void exec_dev_free(ExecDevice *d, void *p, void *stream) {
    if (!p) return;
    exec_budget_remove(&d->mem, p);
    prim_gpu_free(p, stream);
}

int64_t exec_device_epoch(const ExecDevice *d) {
    return d ? d->epoch : 0;
}

int exec_device_resident(const ExecDevice *d, const void *h_data, int64_t n) {
    if (!d) return 0;
    for (int i = 0; i < d->ncache; i++)
        if (d->cache[i].h_data == h_data && d->cache[i].n == n) return 1;
    return 0;
}

/* Where the host range [p, ...) stops being uniformly page-locked or not
 * (what this session registered: cached columns, ranges kept locked): the
 * end of a locked range holding p, else the start of the first locked
 * range after p, else end. */
static const char *lock_run_end(const ExecDevice *d, const char *p, const char *end) {
    const char *stop = end;
    /* locked range k < ncache + nstreamed: [a, b) */
    for (int k = 0; k < d->ncache + d->nstreamed; k++) {
        const char *a, *b;
        if (k < d->ncache) {
            const ExecCacheEntry *e = &d->cache[k];
            if (!e->pinned) continue;
            a = e->h_data;
            b = a + (size_t)e->n * prim_type_width(e->type);
        } else {
            const ExecStreamed *r = &d->streamed[k - d->ncache];
            if (!r->pinned) continue;
            a = r->p;
            b = a + r->bytes;
        }
        if (a <= p && p < b) return b < end ? b : end;
        if (a > p && a < stop) stop = a;
    }
    return stop;
}

/* Host-to-device copy of a column's bytes, split where the host range
 * moves between page-locked and pageable memory: CUDA refuses a copy that
 * spans both ("invalid argument"), as two slices of one column do when
 * they overlap (a table cut as F and again as a co-sliced relation of
 * itself, TPC-H Q21's EXISTS over lineitem) and only one was locked. */
static int copy_h2d_runs(const ExecDevice *d, void *dst, const void *src, size_t bytes,
                         void *stream, char *err, size_t cap) {
    const char *p = src, *end = p + bytes;
    char *q = dst;
    if (bytes == 0) return prim_gpu_copy(dst, src, 0, PRIM_H2D, stream, err, cap);
    while (p < end) {
        const char *stop = lock_run_end(d, p, end);
        if (stop <= p) stop = end;
        if (prim_gpu_copy(q, p, (size_t)(stop - p), PRIM_H2D, stream, err, cap) != 0) return -1;
        q += stop - p;
        p = stop;
    }
    return 0;
}

/* The cache entry of host column h, or -1. */
static int cache_find(const ExecDevice *d, const PrimVec *h) {
    for (int i = 0; i < d->ncache; i++)
        if (d->cache[i].h_data == h->data && d->cache[i].n == h->n && d->cache[i].type == h->type)
            return i;
    return -1;
}

int exec_cache_get(ExecDevice *d, const PrimVec *h, PrimVec *out, int64_t *h2d, void *stream,
                   char *err, size_t cap) {
    d->tick++;
    int hit = cache_find(d, h);
    if (hit >= 0) {
        ExecCacheEntry *e = &d->cache[hit];
        e->last_use = d->tick;
        e->uses++;
        if (prim_gpu_stream_wait(stream, e->ready, err, cap) != 0) return -1;
        e->readers++;
        *out = *h;
        out->data = e->d_data;
        out->valid = e->d_valid;
        return 0;
    }
    size_t w = prim_type_width(h->type);
    size_t bytes = (size_t)h->n * w + (h->valid ? (size_t)h->n : 0);
    /* evict least recently used columns until the new one fits (never one
     * that a live value of the running query reads) */
    int lru, drained = 0;
    while (d->cache_bytes + bytes > d->budget &&
           (lru = exec_cache_victim(d->cache, d->ncache)) >= 0) {
        if (!drained) drain(d);
        drained = 1;
        cache_drop(d, lru);
    }
    if (d->ncache == d->cap) {
        int nc = d->cap ? d->cap * 2 : 16;
        ExecCacheEntry *ne = realloc(d->cache, sizeof(ExecCacheEntry) * (size_t)nc);
        if (!ne) {
            snprintf(err, cap, "Device Error: out of memory");
            return -1;
        }
        d->cache = ne;
        d->cap = nc;
    }
    ExecCacheEntry e;
    memset(&e, 0, sizeof e);
    e.h_data = h->data;
    e.n = h->n;
    e.type = h->type;
    e.bytes = bytes;
    e.last_use = d->tick;
    e.uses = 1;
    e.readers = 1;
    char perr[256];
    /* page-lock the host column so the copy runs at pinned bandwidth (when
     * that beats a pageable copy: lock_min); a failure only costs speed */
    e.pinned = bytes >= d->lock_min && !in_kept_pinned(d, h->data, (size_t)h->n * w) &&
               prim_gpu_host_register((void *)h->data, (size_t)h->n * w, perr, sizeof perr) == 0;
    e.d_data = exec_dev_alloc(d, (size_t)h->n * w, stream);
    e.d_valid = h->valid && e.d_data ? exec_dev_alloc(d, (size_t)h->n, stream) : NULL;
    if (!e.d_data || (h->valid && !e.d_valid)) {
        exec_dev_free(d, e.d_data, stream);
        exec_dev_free(d, e.d_valid, stream);
        if (e.pinned) prim_gpu_host_unregister((void *)h->data);
        snprintf(err, cap,
                 "Device Error: out of device memory caching a column of %lld rows (%zu bytes "
                 "needed, %zu available%s)",
                 (long long)h->n, d->oom_need, d->oom_avail,
                 d->oom_by_limit ? " under memory_limit" : "");
        return -1;
    }
    if (copy_h2d_runs(d, e.d_data, h->data, (size_t)h->n * w, stream, err, cap) != 0 ||
        (h->valid && copy_h2d_runs(d, e.d_valid, h->valid, (size_t)h->n, stream, err, cap) != 0)) {
        exec_dev_free(d, e.d_data, stream);
        exec_dev_free(d, e.d_valid, stream);
        if (e.pinned) prim_gpu_host_unregister((void *)h->data);
        return -1;
    }
    *h2d += (int64_t)bytes;
    e.ready = prim_gpu_event_mark(stream);
    d->cache[d->ncache++] = e;
    d->epoch++;
    d->cache_bytes += bytes;
    *out = *h;
    out->data = e.d_data;
    out->valid = e.d_valid;
    return 0;
}

/* TUNING: a prefetch is made only while the device budget holds this many
 * times its bytes free, so that the running chunk's own allocations do not
 * evict it (an eviction waits for the device: the overlap is lost). */
#define PREFETCH_ROOM 2
/* TUNING: columns of fewer bytes are not copied ahead: a small copy is
 * latency, and the cross-stream wait costs more than it hides (H200,
 * twenty-third session: sql.topk.gpu-chunked, chunks of a few rows, 27 s
 * without the prefetch, 35 s with it). */
#define PREFETCH_MIN_BYTES ((size_t)64 << 10)

int64_t exec_cache_prefetch(ExecDevice *d, const PrimVec *h) {
    if (!d || !h || !h->data || h->n <= 0) return 0;
    size_t w = prim_type_width(h->type);
    size_t bytes = (size_t)h->n * w + (h->valid ? (size_t)h->n : 0);
    if (bytes < PREFETCH_MIN_BYTES || !in_kept_pinned(d, h->data, (size_t)h->n * w) ||
        (h->valid && !in_kept_pinned(d, h->valid, (size_t)h->n)))
        return 0;
    if (cache_find(d, h) >= 0) return 0;
    if (d->cache_bytes + bytes > d->budget || !exec_budget_fits(&d->mem, PREFETCH_ROOM * bytes))
        return 0;
    /* without a memory_limit: what the device has free (an allocation that
     * fails must not flush the cache, as the executor's do) */
    size_t fr = 0, total = 0;
    if (!d->mem.limit && (prim_gpu_mem_info(&fr, &total) != 0 || fr < PREFETCH_ROOM * bytes))
        return 0;
    if (!d->copy_stream && !(d->copy_stream = prim_gpu_stream_create())) return 0;
    int64_t h2d = 0;
    PrimVec out;
    char err[256];
    d->no_evict = 1;
    int rc = exec_cache_get(d, h, &out, &h2d, d->copy_stream, err, sizeof err);
    d->no_evict = 0;
    if (rc != 0) return 0; /* only the overlap is lost: the chunk copies it itself */
    exec_cache_unpin(d, h->data, h->n, h->type);
    return h2d;
}
