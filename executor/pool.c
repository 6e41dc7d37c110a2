/*
 * pool.c -- the executor's host buffer pool. Large intermediates (>= 1 MiB)
 * are kept after use and handed out again, so a repeated query touches
 * memory that is already mapped instead of paying a page fault per 4 KiB
 * of every fresh buffer (measured on the 2-core CI machine: a fresh 40 MB
 * buffer costs ~10 ms of faults, a reused one none). Small blocks go
 * straight to the C allocator. With a GPU session the large blocks that
 * cross PCIe (exec_pool_alloc_pinned) are page-locked, so results and
 * intermediates copied to or from the device move at pinned bandwidth (H2D
 * ~55 GB/s pinned vs ~8 GB/s pageable on the lent H200); the others are
 * not, since locking costs more than a CPU plan's whole run (in the
 * placement sweep, CPU plans in a GPU session varied 2-13 ms where they
 * took 2-3 ms without one).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "executor/executor.h"

#define POOL_MIN_BLOCK EXEC_PIN_MIN_BYTES

typedef struct PoolBlock {
    void *p;
    size_t cap;
    int pinned;  /* 1: from prim_gpu_pinned_alloc; 2: locked in place
                    (prim_gpu_host_register) */
    int crossed; /* handed out for a buffer that crosses PCIe */
} PoolBlock;

struct ExecHostPool {
    pthread_mutex_t mu;
    PoolBlock *live, *idle;
    int nlive, caplive, nidle, capidle;
    size_t idle_bytes, max_idle;
    int pinned; /* new large blocks are page-locked (a GPU session exists) */
    /* fault injection (tests): allocations counted since exec_pool_fail_at,
     * the fail_at-th failing (and every later one when fail_sticky) */
    int64_t count, fail_at;
    int fail_sticky;
};

void exec_pool_fail_at(ExecHostPool *p, int64_t n, int sticky) {
    if (!p) return;
    __atomic_store_n(&p->count, 0, __ATOMIC_SEQ_CST);
    p->fail_at = n > 0 ? n : 0;
    p->fail_sticky = n > 0 && sticky;
}

int64_t exec_pool_alloc_count(ExecHostPool *p) {
    return p ? __atomic_load_n(&p->count, __ATOMIC_SEQ_CST) : 0;
}

/* Count one allocation; 1 if fault injection says it must fail (worker
 * threads of the CPU twins allocate too: the count is atomic). */
static int pool_inject(ExecHostPool *p) {
    int64_t c = __atomic_add_fetch(&p->count, 1, __ATOMIC_SEQ_CST);
    return p->fail_at > 0 && (c == p->fail_at || (p->fail_sticky && c > p->fail_at));
}

/* Free one block with the allocator it came from. */
static void block_free(PoolBlock b) {
    if (b.pinned == 1) {
        prim_gpu_pinned_free(b.p);
        return;
    }
    if (b.pinned == 2) prim_gpu_host_unregister(b.p);
    free(b.p);
}

void exec_pool_set_pinned(ExecHostPool *p, int on) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->pinned = on;
    pthread_mutex_unlock(&p->mu);
}

ExecHostPool *exec_pool_new(size_t max_idle_bytes) {
    ExecHostPool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->mu, NULL);
    p->max_idle = max_idle_bytes;
    return p;
}

void exec_pool_free(ExecHostPool *p) {
    if (!p) return;
    for (int i = 0; i < p->nidle; i++)
        block_free(p->idle[i]);
    for (int i = 0; i < p->nlive; i++)
        block_free(p->live[i]);
    free(p->idle);
    free(p->live);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* Append b to a growable block array. Returns 0 or -1. */
static int push(PoolBlock **a, int *n, int *cap, PoolBlock b) {
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 32;
        PoolBlock *na = realloc(*a, sizeof(PoolBlock) * (size_t)nc);
        if (!na) return -1;
        *a = na;
        *cap = nc;
    }
    (*a)[(*n)++] = b;
    return 0;
}

/* A block of at least bytes (pinned: it crosses PCIe, page-locked if the
 * pool pins). Up to EXEC_PIN_MAX_BYTES a new block is locked at once;
 * a larger one is locked only when it crosses PCIe a second time, in place
 * (locking costs about as much as the pageable copy it saves: a one-off
 * query keeps the pageable price, a repeated one gets the pinned rate from
 * its second run on). */
static void *pool_alloc(ExecHostPool *p, size_t bytes, int pinned) {
    size_t want = (bytes + 63) & ~(size_t)63;
    if (want == 0) want = 64;
    if (p && pool_inject(p)) return NULL;
    if (!p || want < POOL_MIN_BLOCK) return aligned_alloc(64, want);
    pthread_mutex_lock(&p->mu);
    int pin = pinned && p->pinned;
    int lock_now = pin && want <= EXEC_PIN_MAX_BYTES;
    int best = -1;
    /* the smallest fitting block: a locked one for a request that locks
     * at once (lock_now), a locked one first for a larger crossing one,
     * an unlocked one first otherwise (keep the locked blocks for the
     * buffers that cross PCIe) */
    for (int i = 0; i < p->nidle; i++) {
        const PoolBlock *c = &p->idle[i], *b = best >= 0 ? &p->idle[best] : NULL;
        int cp = c->pinned != 0, bp = b && b->pinned != 0;
        if (c->cap < want || c->cap > want * 2 || cp < lock_now) continue;
        if (!b || (cp != bp ? cp == pin : c->cap < b->cap)) best = i;
    }
    PoolBlock b = {NULL, 0, 0, 0};
    if (best >= 0) {
        b = p->idle[best];
        p->idle[best] = p->idle[--p->nidle];
        p->idle_bytes -= b.cap;
        /* a large block crossing PCIe again: lock it where it is */
        if (pin && !b.pinned && b.crossed && prim_gpu_host_register(b.p, b.cap, NULL, 0) == 0)
            b.pinned = 2;
    } else {
        b.cap = (want + POOL_MIN_BLOCK - 1) & ~(POOL_MIN_BLOCK - 1);
        b.p = lock_now ? prim_gpu_pinned_alloc(b.cap) : NULL;
        b.pinned = b.p != NULL;
        /* page-aligned, so that locking it later locks no neighbour's page */
        if (!b.p) b.p = aligned_alloc(4096, b.cap);
    }
    b.crossed |= pin;
    if (b.p && push(&p->live, &p->nlive, &p->caplive, b) != 0) {
        block_free(b);
        b.p = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    return b.p;
}

void *exec_pool_alloc(ExecHostPool *p, size_t bytes) {
    return pool_alloc(p, bytes, 0);
}

void *exec_pool_alloc_pinned(ExecHostPool *p, size_t bytes) {
    return pool_alloc(p, bytes, 1);
}

int exec_pool_block_pinned(ExecHostPool *p, const void *ptr) {
    int r = 0;
    if (!p || !ptr) return 0;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->nlive; i++)
        if (p->live[i].p == ptr) r = p->live[i].pinned;
    pthread_mutex_unlock(&p->mu);
    return r;
}

void exec_pool_release(ExecHostPool *p, void *ptr) {
    if (!ptr) return;
    if (!p) {
        free(ptr);
        return;
    }
    pthread_mutex_lock(&p->mu);
    int at = -1;
    for (int i = p->nlive - 1; i >= 0; i--)
        if (p->live[i].p == ptr) {
            at = i;
            break;
        }
    if (at < 0) {
        pthread_mutex_unlock(&p->mu);
        free(ptr);
        return;
    }
    PoolBlock b = p->live[at];
    p->live[at] = p->live[--p->nlive];
    if (p->idle_bytes + b.cap > p->max_idle || push(&p->idle, &p->nidle, &p->capidle, b) != 0) {
        block_free(b);
    } else {
        p->idle_bytes += b.cap;
    }
    pthread_mutex_unlock(&p->mu);
}
