/*
 * common.c -- helpers shared by the CPU twins: type widths, the pthread
 * fork/join used by every CPU primitive, and the core count.
 */
#include "primitives/primitives.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

/* Returns the width in bytes of one value of type t, or 0 for a value that
 * is not a PrimType. */
size_t prim_type_width(PrimType t) {
    switch (t) {
    case PRIM_U8:
        return 1;
    case PRIM_I32:
        return 4;
    case PRIM_I64:
        return 8;
    case PRIM_F32:
        return 4;
    case PRIM_F64:
        return 8;
    }
    return 0;
}

typedef struct ParTask {
    void (*fn)(void *arg, int t, int nt);
    void *arg;
    int t, nt;
} ParTask;

/* pthread entry: runs one task's share. Returns NULL; owns nothing. */
static void *par_entry(void *p) {
    ParTask *task = p;
    task->fn(task->arg, task->t, task->nt);
    return NULL;
}

/* Runs fn(arg, t, nthreads) for t = 0..nthreads-1 and waits for all of them.
 * Share 0 runs on the calling thread. A share whose thread cannot be created
 * runs on the calling thread after the others were started, so every share
 * always runs exactly once (fn must not wait for another share). Returns 0,
 * or -1 only when the bookkeeping itself cannot be allocated (nothing ran). */
int prim_parallel(int nthreads, void (*fn)(void *arg, int t, int nt), void *arg) {
    if (nthreads <= 1) {
        fn(arg, 0, 1);
        return 0;
    }
    ParTask *tasks = malloc(sizeof(ParTask) * (size_t)nthreads);
    pthread_t *tids = malloc(sizeof(pthread_t) * (size_t)nthreads);
    uint8_t *started = calloc((size_t)nthreads, 1);
    if (!tasks || !tids || !started) {
        free(tasks);
        free(tids);
        free(started);
        return -1;
    }
    for (int t = 0; t < nthreads; t++) {
        tasks[t].fn = fn;
        tasks[t].arg = arg;
        tasks[t].t = t;
        tasks[t].nt = nthreads;
    }
    for (int t = 1; t < nthreads; t++)
        started[t] = pthread_create(&tids[t], NULL, par_entry, &tasks[t]) == 0;
    fn(arg, 0, nthreads);
    for (int t = 1; t < nthreads; t++) {
        if (started[t])
            pthread_join(tids[t], NULL);
        else
            fn(arg, t, nthreads);
    }
    free(tasks);
    free(tids);
    free(started);
    return 0;
}

/* Returns the number of online cores (at least 1). */
int prim_ncores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}
