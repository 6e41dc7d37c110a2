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
} ExecCacheEntry;

struct ExecDevice {
    void *stream;
    char name[128];
    ExecCacheEntry *cache;
    int ncache, cap;
    size_t cache_bytes, budget;
    int64_t tick;
};

/* Device copy of host column h from the cache (copied and pinned on a
 * miss, adding the bytes to *h2d). *out describes device memory owned by
 * the cache. Returns 0 or -1 with err. */
int exec_cache_get(ExecDevice *d, const PrimVec *h, PrimVec *out, int64_t *h2d, char *err,
                   size_t cap);

#endif
