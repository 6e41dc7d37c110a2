/*
 * bench_gqp.c -- time SQL queries with libgqp, the database opened once.
 *
 *   bench_gqp -c config.yaml [--device auto|cpu|gpu] [--threads N]
 *             [--repeat R] [--cold] QUERY.sql...
 *   bench_gqp --bandwidth      (GPU copy bandwidths in GB/s, for floors)
 *
 * For each query file: one warm-up run, then R timed runs (default 5). A run
 * is prepare + the first gqp_step (which executes the whole query and
 * materializes its result); rows are counted with gqp_result_rows(), not
 * stepped through, so printing costs nothing. Prints one line per query:
 *
 *   <file> rows=<n> exec_ms=<median gqp_exec_ms> wall_ms=<median prepare+run>
 *
 * --cold: no warm-up, and before every run (untimed) a throw-away
 * `CREATE TABLE bench_cold_<k>`, which like any non-SET statement drops
 * every column cached on the GPU (libgqp/dml.c), so each run finds the
 * table on the host and pays page-locking and the PCIe copy.
 *
 * Exit 0, or 1 on any error (message on stderr).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strdup, stat, clock_gettime */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gqp.h"
#include "primitives/primitives.h"

#define MAX_REPEAT 100

/* Seconds on the monotonic clock. */
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* qsort comparator over doubles. */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n values (sorts v in place). */
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Read a whole file into a malloc'd NUL-terminated string (caller frees),
 * or NULL. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

/* Run sql once: prepare, execute (first step), count rows. Writes the row
 * count, gqp_exec_ms and wall milliseconds. Returns GQP_OK or an error code
 * (message in gqp_errmsg(db)). */
static int run_once(gqp *db, const char *sql, int64_t *rows, double *exec_ms, double *wall_ms,
                    int64_t *peak) {
    gqp_stmt *st = NULL;
    double t0 = now_ms();
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    if (rc != GQP_OK) return rc;
    if (!st) return GQP_MISUSE;
    rc = gqp_step(st);
    if (rc == GQP_ROW || rc == GQP_DONE) {
        *rows = rc == GQP_DONE ? 0 : gqp_result_rows(st);
        *wall_ms = now_ms() - t0;
        *exec_ms = gqp_exec_ms(st);
        if (gqp_peak_device_bytes(st) > *peak) *peak = gqp_peak_device_bytes(st);
        rc = GQP_OK;
    }
    gqp_finalize(st);
    return rc;
}

/* --cold: drop the GPU column cache by running a throw-away CREATE TABLE
 * (any non-SET statement invalidates it). Returns GQP_OK or an error code. */
static int drop_gpu_cache(gqp *db, int *k) {
    char sql[64];
    gqp_stmt *st = NULL;
    snprintf(sql, sizeof sql, "CREATE TABLE bench_cold_%d (x INT32)", ++*k);
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    if (rc != GQP_OK) return rc;
    rc = gqp_step(st);
    gqp_finalize(st);
    return rc == GQP_DONE || rc == GQP_ROW ? GQP_OK : rc;
}

/* Parse arguments, open the config once and time every query file. */
int main(int argc, char **argv) {
    const char *config = NULL;
    gqp_device dev = GQP_DEVICE_AUTO;
    int threads = -1, repeat = 5, first_query = 0, cold = 0, ncold = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            config = argv[++i];
        } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            const char *d = argv[++i];
            dev = strcmp(d, "cpu") == 0   ? GQP_DEVICE_CPU
                  : strcmp(d, "gpu") == 0 ? GQP_DEVICE_GPU
                                          : GQP_DEVICE_AUTO;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--cold") == 0) {
            cold = 1;
        } else if (strcmp(argv[i], "--bandwidth") == 0) {
            /* the floor's denominators: device copy and pinned transfers */
            double d2d, h2d, d2h;
            char err[256];
            if (prim_gpu_bandwidth((size_t)1 << 30, &d2d, &h2d, &d2h, err, sizeof err) != 0) {
                fprintf(stderr, "%s\n", err);
                return 1;
            }
            printf("bandwidth d2d_GBps=%.1f h2d_pinned_GBps=%.1f d2h_pinned_GBps=%.1f\n", d2d, h2d,
                   d2h);
            return 0;
        } else {
            first_query = i;
            break;
        }
    }
    if (!config || !first_query || repeat < 1 || repeat > MAX_REPEAT) {
        fprintf(stderr, "usage: bench_gqp -c config.yaml [--device auto|cpu|gpu] [--threads N] "
                        "[--repeat R<=100] [--cold] QUERY.sql...\n");
        return 1;
    }
    gqp *db = NULL;
    if (gqp_open(config, &db) != GQP_OK || !db) {
        fprintf(stderr, "%s\n", db ? gqp_errmsg(db) : "out of memory");
        gqp_close(db);
        return 1;
    }
    if (gqp_set_device(db, dev) != GQP_OK ||
        (threads >= 0 && gqp_set_threads(db, threads) != GQP_OK)) {
        fprintf(stderr, "%s\n", gqp_errmsg(db));
        gqp_close(db);
        return 1;
    }
    int status = 0;
    for (int q = first_query; q < argc; q++) {
        char *sql = slurp(argv[q]);
        double exec[MAX_REPEAT], wall[MAX_REPEAT];
        int64_t rows = 0, peak = 0;
        if (!sql) {
            fprintf(stderr, "cannot read %s\n", argv[q]);
            status = 1;
            continue;
        }
        int rc = cold ? GQP_OK : run_once(db, sql, &rows, &exec[0], &wall[0], &peak); /* warm-up */
        for (int r = 0; rc == GQP_OK && r < repeat; r++) {
            if (cold) rc = drop_gpu_cache(db, &ncold);
            if (rc == GQP_OK) rc = run_once(db, sql, &rows, &exec[r], &wall[r], &peak);
        }
        if (rc != GQP_OK) {
            fprintf(stderr, "%s: %s\n", argv[q], gqp_errmsg(db));
            status = 1;
        } else {
            printf("%s rows=%lld exec_ms=%.3f wall_ms=%.3f peak_dev_bytes=%lld\n", argv[q],
                   (long long)rows, median(exec, repeat), median(wall, repeat), (long long)peak);
            fflush(stdout);
        }
        free(sql);
    }
    gqp_close(db);
    return status;
}
