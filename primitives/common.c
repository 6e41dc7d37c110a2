/*
 * common.c -- helpers shared by the CPU twins: type widths, the worker
 * pool every CPU primitive runs its shares on, and the core count.
 */
#include "primitives/primitives.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
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
 * share calling prim_parallel) spawns threads instead.
 *
 * Shares are claimed lock-free: `next` holds the job's number in its high
 * 32 bits and the next share in the low ones, so a worker that read an
 * older job's description cannot claim a share of a newer one (its
 * compare-and-swap fails). The caller writes `next` first, then the job,
 * then publishes `gen`; all with sequentially consistent atomics.
 *
 * After a job a worker spins for PAR_SPIN_NS on `gen` before it sleeps on
 * the condition variable, and so does the caller waiting for the last
 * share (unless the workers outnumber the cores): the passes of one query follow each other within
 * microseconds, and waking 15 sleeping threads through one mutex cost 50-250 us per pass on the
 * lent GPU host (EXPLAIN ANALYZE of a COUNT(*) segmented reduce over 49 groups: 0.1-0.25 ms). */
#define PAR_MAX_WORKERS 256
/* TUNING: longer than the gap between the passes of one query on the CPU
 * (a few us to tens of us), short enough that idle workers leave the cores
 * to the GPU path's host thread and other processes soon. */
#define PAR_SPIN_NS 100000

typedef void (*ParFn)(void *arg, int t, int nt);

static struct {
    pthread_mutex_t mu; /* sleeping, waking, busy, nworkers */
    pthread_cond_t go, done;
    int nworkers, busy;
    _Atomic int spin;      /* 0 when the workers outnumber the cores: no spinning */
    _Atomic uint64_t gen;  /* job number: workers wait for it to change */
    _Atomic uint64_t next; /* job number << 32 | next share */
    _Atomic(ParFn) fn;
    _Atomic(void *) arg;
    _Atomic int nt, remaining;
} par = {.mu = PTHREAD_MUTEX_INITIALIZER,
         .go = PTHREAD_COND_INITIALIZER,
         .done = PTHREAD_COND_INITIALIZER};

/* Nanoseconds on the monotonic clock. */
static int64_t par_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A pause in a spin loop. */
static inline void par_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Claims and runs shares of job g until none is left (or a newer job has
 * replaced it); the last share to finish wakes the caller. */
static void par_claim(uint64_t g) {
    ParFn fn = atomic_load(&par.fn);
    void *arg = atomic_load(&par.arg);
    int nt = atomic_load(&par.nt);
    const uint64_t tag = (g & 0xffffffffu) << 32;
    for (;;) {
        uint64_t v = atomic_load(&par.next);
        if ((v & ~(uint64_t)0xffffffffu) != tag || (int)(v & 0xffffffffu) >= nt) return;
        if (!atomic_compare_exchange_weak(&par.next, &v, v + 1)) continue;
        fn(arg, (int)(v & 0xffffffffu), nt);
        if (atomic_fetch_sub(&par.remaining, 1) == 1) {
            pthread_mutex_lock(&par.mu);
            pthread_cond_broadcast(&par.done);
            pthread_mutex_unlock(&par.mu);
        }
    }
}

/* Spins up to PAR_SPIN_NS while par.gen == v. Returns the last value seen. */
static uint64_t par_spin_gen(uint64_t v) {
    int64_t t0 = par_now_ns();
    uint64_t g;
    for (int k = 1; (g = atomic_load(&par.gen)) == v; k++) {
        if (!atomic_load(&par.spin) || ((k & 255) == 0 && par_now_ns() - t0 > PAR_SPIN_NS)) break;
        par_relax();
    }
    return g;
}

/* A pool worker: runs shares of each new job. Never returns. */
static void *par_worker(void *unused) {
    (void)unused;
    uint64_t seen = atomic_load(&par.gen);
    for (;;) {
        uint64_t g = par_spin_gen(seen);
        if (g == seen) {
            pthread_mutex_lock(&par.mu);
            while ((g = atomic_load(&par.gen)) == seen)
                pthread_cond_wait(&par.go, &par.mu);
            pthread_mutex_unlock(&par.mu);
        }
        seen = g;
        par_claim(g);
    }
    return NULL;
}

int prim_cmp_int_real(int64_t i, double f) {
    if (f >= 9223372036854775808.0) return -1;
    if (f < -9223372036854775808.0) return 1;
    double t = trunc(f);
    int64_t y = (int64_t)t;
    if (i != y) return i < y ? -1 : 1;
    return f > t ? -1 : f < t ? 1 : 0;
}

int prim_prog_cpu_only(const PrimProgram *prog) {
    for (int i = 0; prog && i < prog->ninstr; i++) {
        const PrimInstr *in = &prog->code[i];
        /* the GPU twin has SQRT and fmod, both exact in IEEE arithmetic;
         * EXP, LN, the LOGs and POWER stay on the CPU (libm's rounding) */
        if (in->op == POP_MATH && in->ival != PMATH_SQRT) return 1;
        if (in->op == POP_POW && in->ival != 1) return 1;
    }
    return 0;
}

int prim_prog_table_input(const PrimProgram *prog, int k) {
    for (int i = 0; i < prog->ninstr; i++)
        if (prog->code[i].op == POP_LOOKUPV && prog->code[i].ival == k) return 1;
    return 0;
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
    /* spinning threads beyond the cores would take them from the ones with
     * work (a 2-core machine asked for 16 threads) */
    atomic_store(&par.spin, par.nworkers < prim_ncores());
    par.busy = 1;
    pthread_mutex_unlock(&par.mu);
    uint64_t g = atomic_load(&par.gen) + 1;
    atomic_store(&par.next, ((g & 0xffffffffu) << 32) | 1); /* share 0 is the caller's */
    atomic_store(&par.fn, fn);
    atomic_store(&par.arg, arg);
    atomic_store(&par.nt, nthreads);
    atomic_store(&par.remaining, nthreads);
    pthread_mutex_lock(&par.mu);
    atomic_store(&par.gen, g);
    pthread_cond_broadcast(&par.go);
    pthread_mutex_unlock(&par.mu);
    fn(arg, 0, nthreads);
    if (atomic_fetch_sub(&par.remaining, 1) != 1) {
        par_claim(g);
        int64_t t0 = par_now_ns();
        for (int k = 1; atomic_load(&par.remaining) > 0; k++) {
            if (!atomic_load(&par.spin) || ((k & 255) == 0 && par_now_ns() - t0 > PAR_SPIN_NS))
                break;
            par_relax();
        }
        if (atomic_load(&par.remaining) > 0) {
            pthread_mutex_lock(&par.mu);
            while (atomic_load(&par.remaining) > 0)
                pthread_cond_wait(&par.done, &par.mu);
            pthread_mutex_unlock(&par.mu);
        }
    }
    pthread_mutex_lock(&par.mu);
    par.busy = 0;
    pthread_mutex_unlock(&par.mu);
    return 0;
}

/* Returns the number of online cores (at least 1). */
int prim_ncores(void) {
    /* asked once: glibc answers from /sys, ~5 us a call, and the worker
     * pool asks on every parallel pass */
    static _Atomic int cached = 0;
    int n = atomic_load(&cached);
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c < 1 ? 1 : (int)c;
        atomic_store(&cached, n);
    }
    return n;
}
