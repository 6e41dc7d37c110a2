/*
 * exec_internal.h -- structures shared by the executor's files.
 */
#ifndef GQP_EXEC_INTERNAL_H
#define GQP_EXEC_INTERNAL_H

#include "executor/executor.h"

typedef struct ExecCacheEntry {
    const void *h_data; /* key: host column data */
    int64_t n;
    PrimType type;
    void *d_data;
    uint8_t *d_valid;
    size_t bytes;
    int64_t last_use;
    int64_t uses;
    int pinned;
    void *ready; /* event after the copy (other streams wait on it) */
} ExecCacheEntry;

/* Streams of a GPU session: independent branches of a DAG run on
 * different ones. TUNING: 4 covers the widest branching of seed 004 and
 * SSB plans (output gathers, dimension filters); not measured further. */
#define EXEC_STREAMS 4

struct ExecDevice {
    void *stream; /* streams[0] */
    void *streams[EXEC_STREAMS];
    ExecCacheEntry *cache;
    int ncache, cap;
    size_t cache_bytes, budget;
    size_t lock_min; /* columns of at least this many bytes are page-locked
                        before their copy (exec_device_set_lock_min) */
    int64_t tick;
    int64_t epoch; /* bumped whenever the set of cached columns changes */
    /* the GPU twins' PrimCtx.status word (mapped pinned memory: h_status
     * for the host, d_status for kernels); 0 between runs, NULL if it could
     * not be allocated (the twins then check themselves) */
    volatile int *h_status;
    int *d_status;
};

/* Device copy of host column h from the cache (copied on `stream` and
 * pinned on a miss, adding the bytes to *h2d; on a hit `stream` waits for
 * the copy). *out describes device memory owned by the cache. Returns 0 or
 * -1 with err. */
int exec_cache_get(ExecDevice *d, const PrimVec *h, PrimVec *out, int64_t *h2d, void *stream,
                   char *err, size_t cap);

#endif
