/*
 * thread_stress.c -- the API thread workload (tests/unit/api_threads.c)
 * as a plain program, for ThreadSanitizer builds (Criterion cannot run
 * under TSan; tests/tsan.sh builds and runs this) and as a ctest of the
 * ordinary build.
 *
 *   thread_stress [THREADS [SECONDS]]   (default 8 threads, 200 rounds each)
 *
 * Runs THREADS threads on one shared handle, then THREADS threads on a
 * handle each, then the interrupt checks (a query through the API, and the
 * fused CPU select with every share stopping at once); prints "threads x
 * seconds" held and exits 0 when every check passed (TSan's own exit code
 * 66 when it reported anything).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gqp.h"
#include "primitives/primitives.h"
#include "tests/unit/api_threads.h"

/* Seconds on the monotonic clock. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Host allocator of the primitive check (64-byte aligned). */
static void *t_alloc(void *ud, size_t bytes) {
    (void)ud;
    return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
}

static void t_free(void *ud, void *p) {
    (void)ud;
    free(p);
}

/* The fused select on 4 threads with the interrupt flag set: every share
 * fails at once (their error hand-off must not race). Returns 0 when each
 * call failed with "Interrupted". */
static int interrupted_select(void) {
    const int64_t n = (int64_t)1 << 20;
    int64_t *a = malloc(sizeof(int64_t) * (size_t)n), *rows = malloc(sizeof(int64_t) * (size_t)n);
    if (!a || !rows) return -1;
    for (int64_t i = 0; i < n; i++)
        a[i] = i;
    static const PrimInstr code[] = {{POP_COL, PRIM_REG_I, 0, 0, 0, 0, 0, 0, NULL, 0},
                                     {POP_CONST, PRIM_REG_I, 1, 0, 0, 0, 10, 0, NULL, 0},
                                     {POP_GT, PRIM_REG_I, 2, 0, 1, 0, 0, 0, NULL, 0}};
    PrimProgram sel = {3, code, 3, 2, PRIM_REG_I, 1, 1, 0};
    PrimVec in = {PRIM_I64, n, a, NULL};
    int stop = 1, bad = 0;
    PrimCtx ctx = {4, NULL, t_alloc, t_free, NULL, {0}, &stop, NULL};
    for (int k = 0; k < 10; k++) {
        int64_t count;
        ctx.err[0] = 0;
        bad |= prim_cpu_select(&ctx, &sel, &in, n, rows, &count) != -1 ||
               !strstr(ctx.err, "Interrupted");
    }
    free(a);
    free(rows);
    return bad ? -1 : 0;
}

int main(int argc, char **argv) {
    int nthreads = argc > 1 ? atoi(argv[1]) : 8;
    double seconds = argc > 2 ? atof(argv[2]) : 0;
    if (nthreads < 1 || nthreads > 64) {
        fprintf(stderr, "usage: thread_stress [THREADS (1..64) [SECONDS]]\n");
        return 2;
    }
    int failures = 0, rounds;
    char msg[600] = "";
    gqp *db = NULL;
    if (gqp_open(NULL, &db) != GQP_OK || gqp_set_device(db, GQP_DEVICE_CPU) != GQP_OK ||
        gqp_set_threads(db, 2) != GQP_OK || api_make_tables(db) != GQP_OK) {
        fprintf(stderr, "setup: %s\n", gqp_errmsg(db));
        return 1;
    }
    double t0 = now_s();
    int f = api_thread_stress(db, nthreads, 200, seconds, &rounds, msg, sizeof msg);
    double t1 = now_s();
    printf("shared handle: %d threads x %.1f s, %d rounds, %d failed checks%s%s\n", nthreads,
           t1 - t0, rounds, f, f ? ": " : "", f ? msg : "");
    failures += f;
    gqp_close(db);

    f = api_thread_stress(NULL, nthreads, 200, seconds, &rounds, msg, sizeof msg);
    double t2 = now_s();
    printf("handle per thread: %d threads x %.1f s, %d rounds, %d failed checks%s%s\n", nthreads,
           t2 - t1, rounds, f, f ? ": " : "", f ? msg : "");
    failures += f;

    if (gqp_open(NULL, &db) != GQP_OK) return 1;
    gqp_set_device(db, GQP_DEVICE_CPU);
    gqp_set_threads(db, 2);
    if (api_interrupt_check(db, msg, sizeof msg) != 0) {
        printf("interrupt: FAILED: %s\n", msg);
        failures++;
    } else {
        printf("interrupt: ok\n");
    }
    gqp_close(db);
    if (interrupted_select() != 0) {
        printf("interrupted select: FAILED\n");
        failures++;
    } else {
        printf("interrupted select: ok\n");
    }
    return failures ? 1 : 0;
}
