/*
 * bench_gqp.c -- time SQL queries with libgqp, the database opened once.
 *
 *   bench_gqp -c config.yaml [--device auto|cpu|gpu[,...]] [--threads N]
 *             [--repeat R] [--cold] [--gap-us U] [--explain-dir DIR] QUERY.sql...
 *   bench_gqp --bandwidth      (GPU copy bandwidths in GB/s, for floors)
 *
 * --sql STMT (up to 8): statements run once after opening, before any
 * query, e.g. --sql "SET memory_limit = '2GB'" (bench/memlimit.py).
 *
 * For each query file and each device of the list: one warm-up run, then R
 * timed runs (default 5). With several devices (e.g. cpu,gpu,auto) the runs
 * interleave -- warm-ups first, then round r runs every device once, in
 * one of the orders of the devices, taken in turn -- so the devices are
 * compared in one process under the same conditions. A run
 * is prepare + the first gqp_step (which executes the whole query and
 * materializes its result); rows are counted with gqp_result_rows(), not
 * stepped through, so printing costs nothing. Prints one line per query and
 * device:
 *
 *   <file> rows=<n> exec_ms=<median gqp_exec_ms> wall_ms=<median prepare+run>
 *       peak_dev_bytes=<max> device=<d> gpu_nodes=<g>/<nodes> plans=<g,...>
 *       runs=<ms,...>
 *
 * (gpu_nodes: the placement of the last timed run; plans: the distinct
 * GPU node counts of the timed runs; runs: every timed run's exec ms.)
 *
 * --gap-us U (default 0): sleep U microseconds before every timed run, so
 * that each run starts from the same state whatever ran before it: the CPU
 * worker pool asleep (its workers spin only ~0.1 ms after a pass), as for
 * a query typed after the previous one finished (bench/placement.py).
 *
 * --cold: before every timed run (untimed) `SET gpu_cache = 'clear'`,
 * which drops every column cached on the GPU (libgqp/dml.c), so each run
 * finds the table on the host and pays page-locking and the PCIe copy
 * (INSERT / UPDATE / DELETE drop only the columns they change). The warm-up
 * still runs (thread pool, first touch of host pages, kernel loading are
 * once-per-process costs, not the data's location).
 *
 * --explain-dir DIR: after a query's timed runs, per device, one
 * `EXPLAIN --analyze --format json` run in this warm process (after a cache
 * drop under --cold), written to DIR/<query file name>.<device>.json: the
 * per-node estimates beside measured times; then the same as text (.txt),
 * which also shows the subqueries and CTEs run while planning, timed.
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
#define MAX_SETUP 8

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
 * count, gqp_exec_ms and wall milliseconds, the peak device bytes (a
 * maximum) and (if not NULL) the plan's GPU and total node counts. Returns GQP_OK or an error code
 * (message in gqp_errmsg(db)). */
static int run_once(gqp *db, const char *sql, int64_t *rows, double *exec_ms, double *wall_ms,
                    int64_t *peak, int *gpu_nodes, int *nnodes) {
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
        if (gpu_nodes) *gpu_nodes = gqp_gpu_nodes(st, nnodes);
        rc = GQP_OK;
    }
    gqp_finalize(st);
    return rc;
}

/* Run one statement that returns no rows (SET ...). Returns GQP_OK or an
 * error code. */
static int run_statement(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    if (rc != GQP_OK) return rc;
    rc = gqp_step(st);
    gqp_finalize(st);
    return rc == GQP_DONE || rc == GQP_ROW ? GQP_OK : rc;
}

/* --cold: drop the GPU column cache (and the read counts) with SET
 * gpu_cache = 'clear'. Returns GQP_OK or an error code. */
static int drop_gpu_cache(gqp *db, int *k) {
    (void)k;
    return run_statement(db, "SET gpu_cache = 'clear'");
}

/* Write `text` to dir/<base name of query>.<device>.<ext>. Returns 0 or -1. */
static int write_explain(const char *dir, const char *query, const char *dev, const char *ext,
                         const char *text) {
    const char *b = strrchr(query, '/');
    b = b ? b + 1 : query;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s.%s", dir, b, dev, ext);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

#define MAX_DEVS 3

/* Every order of 1, 2 and 3 devices. */
static const int order[MAX_DEVS][6][MAX_DEVS] = {
    {{0}}, {{0, 1}, {1, 0}}, {{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {2, 0, 1}, {0, 2, 1}, {1, 2, 0}}};
static const int norders[MAX_DEVS] = {1, 2, 6};

/* Parse arguments, open the config once and time every query file. */
int main(int argc, char **argv) {
    const char *config = NULL, *explain_dir = NULL;
    gqp_device devs[MAX_DEVS] = {GQP_DEVICE_AUTO};
    const char *dev_names[MAX_DEVS] = {"auto"};
    int ndev = 1;
    int threads = -1, repeat = 5, first_query = 0, cold = 0, ncold = 0;
    const char *setup[MAX_SETUP];
    int nsetup = 0;
    long gap_us = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            config = argv[++i];
        } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            char *list = argv[++i], *save = NULL;
            ndev = 0;
            for (char *d = strtok_r(list, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
                if (ndev == MAX_DEVS ||
                    (strcmp(d, "cpu") && strcmp(d, "gpu") && strcmp(d, "auto"))) {
                    fprintf(stderr, "bench_gqp: --device takes up to %d of auto, cpu, gpu\n",
                            MAX_DEVS);
                    return 1;
                }
                dev_names[ndev] = d;
                devs[ndev++] = strcmp(d, "cpu") == 0   ? GQP_DEVICE_CPU
                               : strcmp(d, "gpu") == 0 ? GQP_DEVICE_GPU
                                                       : GQP_DEVICE_AUTO;
            }
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--sql") == 0 && i + 1 < argc && nsetup < MAX_SETUP) {
            setup[nsetup++] = argv[++i];
        } else if (strcmp(argv[i], "--cold") == 0) {
            cold = 1;
        } else if (strcmp(argv[i], "--gap-us") == 0 && i + 1 < argc) {
            gap_us = atol(argv[++i]);
        } else if (strcmp(argv[i], "--explain-dir") == 0 && i + 1 < argc) {
            explain_dir = argv[++i];
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
    if (!config || !first_query || ndev < 1 || repeat < 1 || repeat > MAX_REPEAT) {
        fprintf(stderr, "usage: bench_gqp -c config.yaml [--device auto|cpu|gpu[,...]] "
                        "[--threads N] [--repeat R<=100] [--cold] [--sql STMT] [--explain-dir DIR] "
                        "QUERY.sql...\n");
        return 1;
    }
    gqp *db = NULL;
    if (gqp_open(config, &db) != GQP_OK || !db) {
        fprintf(stderr, "%s\n", db ? gqp_errmsg(db) : "out of memory");
        gqp_close(db);
        return 1;
    }
    int rc0 = threads >= 0 ? gqp_set_threads(db, threads) : GQP_OK;
    for (int k = 0; k < ndev && rc0 == GQP_OK; k++)
        rc0 = gqp_set_device(db, devs[k]); /* each device usable */
    if (rc0 != GQP_OK) {
        fprintf(stderr, "%s\n", gqp_errmsg(db));
        gqp_close(db);
        return 1;
    }
    for (int k = 0; k < nsetup && rc0 == GQP_OK; k++)
        rc0 = run_statement(db, setup[k]);
    if (rc0 != GQP_OK) {
        fprintf(stderr, "%s\n", gqp_errmsg(db));
        gqp_close(db);
        return 1;
    }
    printf("# cost model: %s\n", gqp_cost_model(db));
    int status = 0;
    for (int q = first_query; q < argc; q++) {
        char *sql = slurp(argv[q]);
        double exec[MAX_DEVS][MAX_REPEAT], wall[MAX_DEVS][MAX_REPEAT];
        int64_t rows[MAX_DEVS] = {0}, peak[MAX_DEVS] = {0};
        int gnodes[MAX_DEVS][MAX_REPEAT] = {{0}}, nnodes[MAX_DEVS] = {0};
        if (!sql) {
            fprintf(stderr, "cannot read %s\n", argv[q]);
            status = 1;
            continue;
        }
        int rc = GQP_OK;
        for (int k = 0; k < ndev && rc == GQP_OK; k++) /* warm-ups */
            if ((rc = gqp_set_device(db, devs[k])) == GQP_OK)
                rc = run_once(db, sql, &rows[k], &exec[k][0], &wall[k][0], &peak[k], NULL, NULL);
        for (int r = 0; rc == GQP_OK && r < repeat; r++)
            for (int j = 0; j < ndev && rc == GQP_OK; j++) {
                /* round r runs the devices in the (r mod n!)-th order, so
                 * that each device follows each other one about equally
                 * often (a run right after a CPU run of the same query
                 * finds the CPU caches warm; one after a GPU run does not) */
                int k = order[ndev - 1][r % norders[ndev - 1]][j];
                rc = gqp_set_device(db, devs[k]);
                if (rc == GQP_OK && cold) rc = drop_gpu_cache(db, &ncold);
                if (gap_us > 0) {
                    struct timespec ts = {gap_us / 1000000, (gap_us % 1000000) * 1000};
                    nanosleep(&ts, NULL);
                }
                if (rc == GQP_OK)
                    rc = run_once(db, sql, &rows[k], &exec[k][r], &wall[k][r], &peak[k],
                                  &gnodes[k][r], &nnodes[k]);
            }
        for (int k = 0; explain_dir && k < ndev && rc == GQP_OK; k++) {
            char *text = NULL;
            rc = gqp_set_device(db, devs[k]);
            if (rc == GQP_OK && cold) rc = drop_gpu_cache(db, &ncold);
            /* JSON (the main plan's nodes), then text, which also times the
             * subqueries and CTEs run while planning */
            for (int fmt = 0; fmt < 2 && rc == GQP_OK; fmt++) {
                if (fmt == 1 && cold) rc = drop_gpu_cache(db, &ncold);
                if (rc == GQP_OK)
                    rc =
                        gqp_explain(db, sql, -1,
                                    GQP_EXPLAIN_ANALYZE | (fmt == 0 ? GQP_EXPLAIN_JSON : 0), &text);
                if (rc == GQP_OK && write_explain(explain_dir, argv[q], dev_names[k],
                                                  fmt == 0 ? "json" : "txt", text) != 0)
                    fprintf(stderr, "%s: cannot write the explain file into %s\n", argv[q],
                            explain_dir);
                gqp_free(text);
                text = NULL;
            }
        }
        if (rc != GQP_OK) {
            fprintf(stderr, "%s: %s\n", argv[q], gqp_errmsg(db));
            status = 1;
        } else {
            for (int k = 0; k < ndev; k++) {
                char runs[MAX_REPEAT * 16] = "", plans[MAX_REPEAT * 8] = "";
                size_t lr = 0, lp = 0;
                for (int r = 0; r < repeat; r++) {
                    lr += (size_t)snprintf(runs + lr, sizeof runs - lr, "%s%.3f", r ? "," : "",
                                           exec[k][r]);
                    int seen = 0;
                    for (int j = 0; j < r; j++)
                        seen |= gnodes[k][j] == gnodes[k][r];
                    if (!seen)
                        lp += (size_t)snprintf(plans + lp, sizeof plans - lp, "%s%d", lp ? "," : "",
                                               gnodes[k][r]);
                }
                /* runs before the median sorts them */
                printf("%s rows=%lld exec_ms=%.3f wall_ms=%.3f peak_dev_bytes=%lld device=%s "
                       "gpu_nodes=%d/%d plans=%s runs=%s\n",
                       argv[q], (long long)rows[k], median(exec[k], repeat),
                       median(wall[k], repeat), (long long)peak[k], dev_names[k],
                       gnodes[k][repeat - 1], nnodes[k], plans, runs);
            }
            fflush(stdout);
        }
        free(sql);
    }
    gqp_close(db);
    return status;
}
