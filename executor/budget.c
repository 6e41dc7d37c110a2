/*
 * budget.c -- the bookkeeping behind the device memory budget: a table of
 * the executor's live device allocations (address -> bytes) summed against
 * a limit, the cache's eviction choice (least recently used among the
 * entries no running query reads), the out-of-memory recovery's next step
 * and the allocation fault injection the out-of-memory tests use. No CUDA
 * here: device.c calls it around the real allocations, and
 * tests/unit/test_memory.c drives it with fake sizes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "executor/exec_internal.h"

/* Slot of p in a table of cap (a power of two) slots: Fibonacci hashing of
 * the address (allocations are aligned, so the low bits carry little). */
static size_t slot_of(const void *p, size_t cap) {
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

/* Put (p, bytes) into the table (which has a free slot; p not present). */
static void put(const void **keys, size_t *sizes, size_t cap, const void *p, size_t bytes) {
    size_t i = slot_of(p, cap);
    while (keys[i])
        i = (i + 1) & (cap - 1);
    keys[i] = p;
    sizes[i] = bytes;
}

/* Double the table (or make the first one). 0 or -1 out of memory. */
static int grow(ExecBudget *b) {
    size_t nc = b->cap ? b->cap * 2 : 64;
    const void **nk = calloc(nc, sizeof *nk);
    size_t *ns = calloc(nc, sizeof *ns);
    if (!nk || !ns) {
        free(nk);
        free(ns);
        return -1;
    }
    for (size_t i = 0; i < b->cap; i++)
        if (b->keys[i]) put(nk, ns, nc, b->keys[i], b->sizes[i]);
    free(b->keys);
    free(b->sizes);
    b->keys = nk;
    b->sizes = ns;
    b->cap = nc;
    return 0;
}

int exec_budget_add(ExecBudget *b, const void *p, size_t bytes) {
    if (!p) return 0;
    /* an address recorded already (freed behind the budget's back and
     * handed out again): it is one allocation, of the new size */
    exec_budget_remove(b, p);
    if ((b->n + 1) * 2 > b->cap && grow(b) != 0) return -1;
    put(b->keys, b->sizes, b->cap, p, bytes);
    b->n++;
    b->used += bytes;
    if (b->used > b->peak) b->peak = b->used;
    return 0;
}

size_t exec_budget_remove(ExecBudget *b, const void *p) {
    if (!p || !b->cap) return 0;
    size_t i = slot_of(p, b->cap);
    while (b->keys[i] && b->keys[i] != p)
        i = (i + 1) & (b->cap - 1);
    if (!b->keys[i]) return 0;
    size_t bytes = b->sizes[i];
    b->keys[i] = NULL;
    b->n--;
    b->used -= bytes;
    /* linear probing: re-insert the rest of the cluster after the hole */
    for (size_t j = (i + 1) & (b->cap - 1); b->keys[j]; j = (j + 1) & (b->cap - 1)) {
        const void *k = b->keys[j];
        size_t s = b->sizes[j];
        b->keys[j] = NULL;
        put(b->keys, b->sizes, b->cap, k, s);
    }
    return bytes;
}

int exec_budget_fits(const ExecBudget *b, size_t bytes) {
    return !b->limit || (b->used <= b->limit && bytes <= b->limit - b->used);
}

size_t exec_budget_left(const ExecBudget *b) {
    if (!b->limit) return SIZE_MAX;
    return b->used < b->limit ? b->limit - b->used : 0;
}

int exec_budget_inject(ExecBudget *b) {
    b->count++;
    if (b->fail_at <= 0) return 0;
    return b->count == b->fail_at || (b->fail_sticky && b->count > b->fail_at);
}

void exec_budget_fail_at(ExecBudget *b, int64_t n, int sticky) {
    b->count = 0;
    b->fail_at = n > 0 ? n : 0;
    b->fail_sticky = n > 0 && sticky;
}

void exec_budget_free(ExecBudget *b) {
    free(b->keys);
    free(b->sizes);
    b->keys = NULL;
    b->sizes = NULL;
    b->cap = b->n = 0;
    b->used = 0;
}

ExecOomStep exec_oom_step(int attempt, int cpu_fallback) {
    if (attempt <= 1) return EXEC_OOM_RETRY;
    return cpu_fallback ? EXEC_OOM_CPU : EXEC_OOM_FAIL;
}

int exec_cache_victim(const ExecCacheEntry *e, int n) {
    int v = -1;
    for (int i = 0; i < n; i++)
        if (e[i].readers <= 0 && (v < 0 || e[i].last_use < e[v].last_use)) v = i;
    return v;
}

int exec_parse_fail_spec(const char *spec, int *device, int64_t *n, int *sticky) {
    if (!spec) return -1;
    const char *p;
    if (strncmp(spec, "host:", 5) == 0) {
        *device = 0;
        p = spec + 5;
    } else if (strncmp(spec, "device:", 7) == 0) {
        *device = 1;
        p = spec + 7;
    } else {
        return -1;
    }
    if (*p < '0' || *p > '9') return -1;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (v < 1) return -1;
    *sticky = 0;
    if (*end == '+') {
        *sticky = 1;
        end++;
    }
    if (*end) return -1;
    *n = v;
    return 0;
}
