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
    int pinned;  /* the host range is page-locked (prim_gpu_host_register) */
    int readers; /* live values of the running query that read d_data: never
                    evicted while > 0 */
    void *ready; /* event after the copy (other streams wait on it) */
} ExecCacheEntry;

/*
 * Device memory accounting (budget.c): every device allocation of the
 * executor (the column cache, intermediates, the GPU twins' temporaries)
 * is recorded here by address and size and checked against a limit
 * (SET memory_limit / config device: memory_limit). Pure bookkeeping, no
 * CUDA: the unit tests drive it with fake addresses and sizes.
 */
typedef struct ExecBudget {
    size_t limit; /* bytes; 0 = no limit */
    size_t used;  /* bytes of the live allocations */
    size_t peak;  /* most bytes live at once since exec_budget_reset_peak */
    /* live allocations: open addressing, address -> bytes */
    const void **keys;
    size_t *sizes;
    size_t cap, n;
    /* fault injection (tests): allocations counted since exec_budget_fail_at;
     * the fail_at-th fails (and every later one when fail_sticky) */
    int64_t count, fail_at;
    int fail_sticky;
} ExecBudget;

/* Record a live allocation of bytes at p. 0, or -1 when the table cannot
 * grow (host out of memory: the caller frees p and reports an OOM). */
int exec_budget_add(ExecBudget *b, const void *p, size_t bytes);
/* Forget the allocation at p; returns its bytes (0 if p was not recorded). */
size_t exec_budget_remove(ExecBudget *b, const void *p);
/* 1 if bytes more fit under the limit (always without one). */
int exec_budget_fits(const ExecBudget *b, size_t bytes);
/* Bytes left under the limit (SIZE_MAX without one). */
size_t exec_budget_left(const ExecBudget *b);
/* Count one allocation; 1 if fault injection says it must fail. */
int exec_budget_inject(ExecBudget *b);
/* Arm fault injection: the n-th allocation from now fails (n <= 0: none),
 * and with sticky every one after it too. Resets the count. */
void exec_budget_fail_at(ExecBudget *b, int64_t n, int sticky);
/* Free the table (the budget is then empty, limits kept). */
void exec_budget_free(ExecBudget *b);
/* What the executor does after attempt `attempt` (1 = the first) of a GPU
 * node failed with a device out-of-memory (the failed attempt undone):
 * RETRY on the GPU once after freeing the cache and what the node does
 * not read; then CPU (its CPU twin) when cpu_fallback (--device auto),
 * else FAIL with the bytes needed and available. */
typedef enum ExecOomStep { EXEC_OOM_RETRY, EXEC_OOM_CPU, EXEC_OOM_FAIL } ExecOomStep;
ExecOomStep exec_oom_step(int attempt, int cpu_fallback);
/* The cache entry to evict next: the least recently used of those no live
 * value reads (readers == 0), or -1 when every entry is being read. */
int exec_cache_victim(const ExecCacheEntry *e, int n);

/* Streams of a GPU session: independent branches of a DAG run on
 * different ones. TUNING: 4 covers the widest branching of seed 004 and
 * SSB plans (output gathers, dimension filters); not measured further. */
#define EXEC_STREAMS 4

/* A host range (a table column) that chunked runs copy slice by slice. */
typedef struct ExecStreamed {
    const char *p;
    size_t bytes;
    int runs;   /* chunked runs that copied it */
    int pinned; /* page-locked (cudaHostRegister) until forgotten */
} ExecStreamed;

struct ExecDevice {
    void *stream; /* streams[0] */
    void *streams[EXEC_STREAMS];
    void *copy_stream; /* exec_cache_prefetch's copies (NULL: none made) */
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
    ExecBudget mem;     /* every device allocation of the executor */
    double limit_pct;   /* memory_limit as a share of device memory (0: bytes) */
    size_t limit_bytes; /* memory_limit in bytes (0: none, or limit_pct) */
    int running;        /* a query is issuing work (evicting syncs first) */
    int no_evict;       /* exec_cache_prefetch's allocation: no eviction, no
                           injected failure, not counted */
    /* the last device allocation that failed: bytes asked for and bytes
     * that were available (under the limit, or free on the device) */
    int64_t oom_count;
    size_t oom_need, oom_avail;
    int oom_by_limit; /* it failed against memory_limit (not the device) */
    /* host ranges streamed in chunks (exec_device_streamed): how often,
     * and whether they are kept page-locked */
    ExecStreamed *streamed;
    int nstreamed, streamed_cap;
};

/* The executor's device allocator: fault injection, then the budget
 * (evicting unread cache entries first), then the stream-ordered pool
 * (on a real out-of-memory: evict every unread entry, retry once). NULL
 * on failure, with oom_count/oom_need/oom_avail set. */
void *exec_dev_alloc(ExecDevice *d, size_t bytes, void *stream);
/* Free a block from exec_dev_alloc on stream (NULL is ignored). */
void exec_dev_free(ExecDevice *d, void *p, void *stream);
/* One live value stopped reading the cache entry of (h_data, n, type). */
void exec_cache_unpin(ExecDevice *d, const void *h_data, int64_t n, PrimType type);
/* Evict every cache entry no live value reads (waiting for the device
 * first); returns the bytes freed. */
size_t exec_cache_evict_unread(ExecDevice *d);

/* Device copy of host column h from the cache (copied on `stream` and
 * pinned on a miss, adding the bytes to *h2d; on a hit `stream` waits for
 * the copy). *out describes device memory owned by the cache. Returns 0 or
 * -1 with err. */
int exec_cache_get(ExecDevice *d, const PrimVec *h, PrimVec *out, int64_t *h2d, void *stream,
                   char *err, size_t cap);

#endif
