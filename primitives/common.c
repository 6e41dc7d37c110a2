/*
 * common.c -- helpers shared by the CPU twins: type widths, the worker
 * pool every CPU primitive runs its shares on, and the core count.
 */
#include "primitives/primitives.h"

#include <pthread.h>
#include <stdint.h>
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

/* Runs fn(arg, t, nthreads) for t = 0..nthreads-1 on freshly created
 * threads and waits for all of them (the fallback of prim_parallel when
 * the pool is busy). A share whose thread cannot be created runs on the
 * calling thread. Returns 0, or -1 when nothing could be allocated. */
static int par_spawn(int nthreads, void (*fn)(void *arg, int t, int nt), void *arg) {
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

/* The persistent worker pool: threads are created once (lazily, as many as
 * the largest call asked for) and wait for jobs, so a parallel pass costs a
 * wake-up instead of a thread creation per worker (on the lent GPU host,
 * 16 pthread_create + join took 30-60 us: more than a filter over 10K
 * rows). One job at a time; a call while a job runs (another thread, or a
 * share calling prim_parallel) spawns threads instead. Shares are claimed
 * one at a time by the caller and the workers, so every share runs exactly
 * once even if fewer workers exist than shares. */
#define PAR_MAX_WORKERS 256
static struct {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    int nworkers;
    uint64_t gen; /* job number: workers wait for it to change */
    void (*fn)(void *arg, int t, int nt);
    void *arg;
    int nt, next, remaining, busy;
} par = {.mu = PTHREAD_MUTEX_INITIALIZER,
         .go = PTHREAD_COND_INITIALIZER,
         .done = PTHREAD_COND_INITIALIZER};

/* Claims and runs shares of the current job until none is left; called
 * with par.mu held, returns with it held. */
static void par_claim(void) {
    while (par.next < par.nt) {
        int t = par.next++;
        void (*fn)(void *, int, int) = par.fn;
        void *arg = par.arg;
        int nt = par.nt;
        pthread_mutex_unlock(&par.mu);
        fn(arg, t, nt);
        pthread_mutex_lock(&par.mu);
        if (--par.remaining == 0) pthread_cond_broadcast(&par.done);
    }
}

/* A pool worker: runs shares of each new job. Never returns. */
static void *par_worker(void *unused) {
    (void)unused;
    pthread_mutex_lock(&par.mu);
    uint64_t seen = par.gen;
    for (;;) {
        while (par.gen == seen)
            pthread_cond_wait(&par.go, &par.mu);
        seen = par.gen;
        par_claim();
    }
    return NULL;
}

/* Runs fn(arg, t, nthreads) for t = 0..nthreads-1 and waits for all of them.
 * Share 0 runs on the calling thread. Every share runs exactly once (fn
 * must not wait for another share). Returns 0, or -1 only when the
 * bookkeeping itself cannot be allocated (nothing ran). */
int prim_parallel(int nthreads, void (*fn)(void *arg, int t, int nt), void *arg) {
    if (nthreads <= 1) {
        fn(arg, 0, 1);
        return 0;
    }
    pthread_mutex_lock(&par.mu);
    if (par.busy) {
        pthread_mutex_unlock(&par.mu);
        return par_spawn(nthreads, fn, arg);
    }
    while (par.nworkers < nthreads - 1 && par.nworkers < PAR_MAX_WORKERS) {
        pthread_t tid;
        if (pthread_create(&tid, NULL, par_worker, NULL) != 0) break;
        pthread_detach(tid);
        par.nworkers++;
    }
    par.busy = 1;
    par.fn = fn;
    par.arg = arg;
    par.nt = nthreads;
    par.next = 1; /* share 0 is the caller's */
    par.remaining = nthreads;
    par.gen++;
    pthread_cond_broadcast(&par.go);
    pthread_mutex_unlock(&par.mu);
    fn(arg, 0, nthreads);
    pthread_mutex_lock(&par.mu);
    if (--par.remaining == 0) pthread_cond_broadcast(&par.done);
    par_claim();
    while (par.remaining > 0)
        pthread_cond_wait(&par.done, &par.mu);
    par.busy = 0;
    pthread_mutex_unlock(&par.mu);
    return 0;
}

/* Returns the number of online cores (at least 1). */
int prim_ncores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}
