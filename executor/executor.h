/*
 * executor.h -- runs a placed primitive DAG: nodes in topological (index)
 * order, each on the device its placement names (CPU twins on host memory,
 * GPU twins on device memory issued in stream order), intermediates freed
 * after their last consumer, result columns handed back as host vectors.
 * Only the result's actual size crosses back from the GPU.
 */
#ifndef GQP_EXECUTOR_H
#define GQP_EXECUTOR_H

#include "planner/planner.h"

/* Host buffer pool kept across queries (pool.c); NULL = plain malloc. */
typedef struct ExecHostPool ExecHostPool;

/* One result column on the host. The executor result owns data/valid. */
typedef struct ExecColumn {
    PrimVec vec; /* vec.n = rows */
    CatType ltype;
    int scale;           /* DECIMAL: digits after the point */
    const CatDict *dict; /* STRING: codes refer to it (owned by plan or catalog) */
    /* INT64: the rows whose value is a REAL because an integer overflowed
     * (SQLite's switch to REAL; re.is NULL: none). Their vec slots hold the
     * REAL truncated. */
    PrimReals re;
} ExecColumn;

typedef struct ExecResult {
    int ncols;
    int64_t nrows;
    ExecColumn *cols;
    ExecHostPool *pool; /* where the column memory goes back */
    CatDict **dicts;    /* dictionaries built while running (CAST AS TEXT) */
    int ndicts;
} ExecResult;

/* The GPU side of a session: a stream and the cache of table columns
 * resident in device memory (kept across queries, evicted least recently
 * used first when over budget). Owned by the libgqp handle. */
typedef struct ExecDevice ExecDevice;

/* A device session, or NULL with a message in err when no GPU is usable.
 * budget_bytes: column cache budget (0 = 60% of device memory). */
ExecDevice *exec_device_open(size_t budget_bytes, char *err, size_t cap);
void exec_device_close(ExecDevice *dev);
/* Page-lock a column before copying it into the cache only when it has at
 * least `bytes` bytes (smaller ones are copied pageable, which is cheaper
 * than locking them; libgqp passes cost_lock_min_bytes). Default 0: lock
 * every column. */
void exec_device_set_lock_min(ExecDevice *dev, size_t bytes);
/* Forget every cached column (tables changed). */
void exec_device_invalidate(ExecDevice *dev);
/* Forget the cached copies of the host column at h_data: of n rows, or
 * whatever their row count when n < 0 (call before the column's arrays
 * change or are freed). */
void exec_device_forget(ExecDevice *dev, const void *h_data, int64_t n);
/* A chunked run copied slices of the host range [p, p + bytes) (a column
 * of the chunked table) to the device. From the range's second such run
 * on it stays page-locked, so that every later chunk's copy runs at pinned
 * bandwidth instead of locking (or staging) each slice again; it is
 * unlocked when forgotten (exec_device_forget with p) or at close. A
 * failure to lock only costs speed. */
void exec_device_streamed(ExecDevice *dev, const void *p, size_t bytes);
/* Mapped (zero-copy) reading: the device address of host bytes [p, p +
 * bytes) for kernels to read in place across PCIe. The range must lie in
 * one dev keeps page-locked (exec_device_streamed); with may_lock it is
 * locked now and kept so (p must then be the start of a table column that
 * exec_device_forget is told about when it changes or is freed). 0, or -1
 * when it cannot be mapped (the caller copies it instead). */
int exec_device_map(ExecDevice *dev, const void *p, size_t bytes, int may_lock, void **devp,
                    char *err, size_t cap);
/* A number that changes whenever a column enters or leaves the GPU column
 * cache (0 without a session): placements made at an older epoch priced
 * residency that may no longer hold. */
int64_t exec_device_epoch(const ExecDevice *dev);
/* 1 if the host column at h_data (n rows) is resident in dev's column
 * cache (a GPU read of it copies nothing), else 0; 0 when dev is NULL. */
int exec_device_resident(const ExecDevice *dev, const void *h_data, int64_t n);
/* Copy host column h (a slice of a table streamed in chunks) into the
 * column cache on a stream of its own, returning at once: the next chunk
 * of a chunked run reads it there while the current chunk's kernels run
 * (issue 11's copy/kernel overlap). Only a range dev keeps page-locked
 * (an asynchronous copy), of at least 64 KiB, not cached yet, that fits
 * the budget without evicting anything; the entry is evictable as any unread column.
 * Returns the bytes whose copy was issued (0: none). */
int64_t exec_cache_prefetch(ExecDevice *dev, const PrimVec *h);
/* 1 if host bytes [p, p + bytes) lie in a range dev keeps page-locked (a
 * table streamed in chunks, exec_device_streamed): a copy of them runs at
 * the pinned rate with no locking first; 0 otherwise or when dev is NULL. */
int exec_device_locked(const ExecDevice *dev, const void *p, size_t bytes);

/* memory_limit: the executor's device memory (cached columns,
 * intermediates, the GPU twins' temporaries) is kept under bytes, or under
 * pct percent of the device's memory when pct > 0; 0 and 0: no limit (the
 * device's own size is the limit). An allocation that would pass it first
 * evicts cached columns no running query reads, then fails as an
 * out-of-memory. */
void exec_device_set_limit(ExecDevice *dev, size_t bytes, double pct);
/* The limit in bytes (0: none) and the bytes allocated now. */
size_t exec_device_limit(const ExecDevice *dev);
size_t exec_device_used(const ExecDevice *dev);
/* What this process could hold on the device now: the limit when one is
 * set, else the bytes it holds plus the device's free memory (less when
 * another process holds the rest); 0 when unknown. */
size_t exec_device_capacity(const ExecDevice *dev);
/* The last failed device allocation: *count failures so far, *need bytes
 * asked for, *avail bytes available then. Returns 2 when it failed against
 * memory_limit, 1 otherwise, 0 without a session. */
int exec_device_oom(const ExecDevice *dev, int64_t *count, size_t *need, size_t *avail);
/* Tests (GQP_FAIL_ALLOC): the n-th device allocation from now fails (and
 * every later one with sticky; n <= 0: none); the allocations counted
 * since. */
void exec_device_fail_at(ExecDevice *dev, int64_t n, int sticky);
int64_t exec_device_alloc_count(const ExecDevice *dev);
/* Parse a fault-injection spec "host:N" / "device:N" (the N-th allocation
 * fails) or "host:N+" / "device:N+" (the N-th and every later one), N >= 1.
 * 0 with *device (0 host, 1 device), *n and *sticky set, or -1. */
int exec_parse_fail_spec(const char *spec, int *device, int64_t *n, int *sticky);

ExecHostPool *exec_pool_new(size_t max_idle_bytes);
/* Tests (GQP_FAIL_ALLOC): the n-th host allocation of the pool from now
 * fails (and every later one with sticky; n <= 0: none); the allocations
 * counted since. */
void exec_pool_fail_at(ExecHostPool *p, int64_t n, int sticky);
int64_t exec_pool_alloc_count(ExecHostPool *p);
void exec_pool_free(ExecHostPool *p);
/* 64-byte aligned block of at least bytes; NULL on failure. */
void *exec_pool_alloc(ExecHostPool *p, size_t bytes);
/* As exec_pool_alloc, for a buffer that crosses PCIe (a copy from or to
 * the device) when the pool pins (exec_pool_set_pinned): page-locked up to
 * EXEC_PIN_MAX_BYTES; a larger block is locked in place when it is handed
 * out to cross PCIe a second time (a repeated query's results and
 * intermediates), pageable before. exec_pool_alloc itself never locks new
 * memory: locking costs about a millisecond per few MB, and a CPU plan's
 * intermediates never cross. */
void *exec_pool_alloc_pinned(ExecHostPool *p, size_t bytes);

/* The largest new host block the pool page-locks to cross PCIe; larger
 * ones are copied pageable until their block crosses again. TUNING: in
 * the placement sweep at 1e8 rows on the H100, mixed plans whose CPU
 * filter handed 100-400 MB to the GPU ran 2.5-6x slower than planned:
 * locking fresh blocks that large cost more than the pinned copy saved.
 * libgqp tells the cost model (which prices a block's first crossing). */
#define EXEC_PIN_MAX_BYTES ((size_t)64 << 20)
/* The smallest: smaller buffers come from the C allocator, never locked
 * (the pool keeps and locks blocks of at least this size). */
#define EXEC_PIN_MIN_BYTES ((size_t)1 << 20)
/* How a block the pool handed out is held: 0 pageable (or not the pool's),
 * 1 allocated page-locked, 2 locked in place on its second crossing. */
int exec_pool_block_pinned(ExecHostPool *p, const void *ptr);
/* Give a block back (blocks the pool did not hand out are free()d). */
void exec_pool_release(ExecHostPool *p, void *ptr);
/* on != 0: new large blocks are page-locked (call once a GPU is in use). */
void exec_pool_set_pinned(ExecHostPool *p, int on);

/* LIKE tables over run-time dictionaries (DN_DICTLIKE on the CPU) kept
 * for the rest of one statement's run: each chunk of a chunked run (and
 * each DAG a statement runs) would compute the same table over the whole
 * dictionary again (TPC-H Q13 at SF 10: 7.9M comments, 30 ms a chunk).
 * The caller owns it, zeroed, for one run, and frees it after
 * (exec_like_memo_free); DML cannot run in between. */
#define EXEC_LIKE_MEMO 4
typedef struct ExecLikeMemo {
    struct {
        const void *dict; /* the CatDict, and its strings then */
        const char *bytes;
        int64_t n, len;
        int neg;
        char *pattern;
        uint8_t *tab; /* n bytes */
    } e[EXEC_LIKE_MEMO];
    int n;
} ExecLikeMemo;
void exec_like_memo_free(ExecLikeMemo *m);

typedef struct ExecOptions {
    int nthreads;       /* CPU worker threads (>= 1) */
    ExecDevice *dev;    /* NULL: every node must be placed on the CPU */
    ExecHostPool *pool; /* host intermediates and results (may be NULL) */
    int no_fusion;      /* 1: run every node on its own (for tests) */
    int profile;        /* 1: CUDA events around every GPU node (EXPLAIN ANALYZE);
                           0: GPU node times are host-side issue times only */
    /* not NULL: when *interrupt != 0 (read atomically) the run stops at
     * the next node (and CPU morsel) boundary with "Interrupted" */
    const int *interrupt;
    /* 1 (--device auto): a GPU node whose device allocation fails after
     * the cache was freed and the node retried runs on its CPU twin
     * (EXPLAIN ANALYZE says so); 0: the query fails with the bytes needed
     * and available */
    int oom_cpu_fallback;
    ExecLikeMemo *like_memo; /* NULL: none kept */
} ExecOptions;

typedef struct ExecStats {
    double total_ms;
    int64_t bytes_h2d, bytes_d2h;
    int64_t bytes_mapped; /* read in place from mapped host memory (DagNode.mapped) */
    size_t peak_device_bytes;
    int oom_retries;   /* GPU nodes run again after a device out-of-memory */
    int oom_fallbacks; /* GPU nodes run on their CPU twin after one */
} ExecStats;

/*
 * Execute dag. On success returns 0 and fills *res (release with
 * exec_result_free); measured time, rows and bytes are written into the
 * DAG's nodes and *stats (may be NULL). On error returns -1 with a
 * stage-named message in errbuf ("Execution Error: ...", "Device Error:
 * ...") and frees every intermediate.
 */
int exec_run(Dag *dag, const ExecOptions *opt, ExecResult *res, ExecStats *stats, char *errbuf,
             size_t errcap);
void exec_result_free(ExecResult *res);

#endif /* GQP_EXECUTOR_H */
