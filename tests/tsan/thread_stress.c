/*
 * thread_stress.c -- the API thread workload (tests/unit/api_threads.c)
 * as a plain program, for ThreadSanitizer builds (Criterion cannot run
 * under TSan; tests/tsan.sh builds and runs this) and as a ctest of the
 * ordinary build.
 *
 *   thread_stress [THREADS [SECONDS]]   (default 8 threads, 200 rounds each)
 *
 * Runs THREADS threads on one shared handle, then THREADS threads on a
 * handle each, then the interrupt check; prints "threads x seconds" held
 * and exits 0 when every check passed (TSan's own exit code 66 when it
 * reported anything).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gqp.h"
#include "tests/unit/api_threads.h"

/* Seconds on the monotonic clock. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
    return failures ? 1 : 0;
}
