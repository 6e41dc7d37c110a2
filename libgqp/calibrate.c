/*
 * calibrate.c -- `gqp calibrate` in libgqp: the primitive microbenchmarks
 * and fits of cost/calibrate.c, plus an end-to-end probe that runs whole
 * queries against the fitted model to measure the executor's per-query
 * time beyond its nodes' estimates (gpu_query_us, cpu_query_us).
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* mkdtemp, DIR */
#endif
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libgqp/internal.h"

/* Queries the calibration runs end to end (gqp gen test data, 1e5 rows):
 * a filter with gathers, a dense aggregate, a sort aggregate, a top-k. */
static const char *const probe_sql[] = {
    "SELECT id, uniformi FROM test WHERE id < 1000",
    "SELECT SUM(uniformi), COUNT(*) FROM test WHERE id < 50000",
    "SELECT normali5, COUNT(*), SUM(uniformf) FROM test WHERE id < 20000 GROUP BY normali5",
    "SELECT id, uniformf FROM test WHERE id < 5000 ORDER BY uniformf LIMIT 10",
};
#define PROBE_ROWS 100000
#define PROBE_RUNS 9

/* qsort comparator over doubles. */
static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Remove dir and the files in it (the probe's generated data). */
static void rm_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* cost_calibrate_ex's probe: the per-query constants of m (cost.h) as the
 * median, over the probe queries run PROBE_RUNS times each (2 ms apart,
 * so that every run starts with the CPU workers asleep, as the placement
 * benchmark runs them), of measured execution minus the fitted model's
 * estimate of the plan, for all-CPU plans and (with a GPU) all-GPU plans
 * with the columns resident. */
static int calib_probe(void *ud, CostModel *m, char *err, size_t cap) {
    (void)ud;
    char dir[] = "/tmp/gqp-calibrate-XXXXXX";
    if (!mkdtemp(dir)) {
        snprintf(err, cap, "Cost Error: cannot create a temporary folder for the query probe");
        return -1;
    }
    char *emsg = NULL, cfg[64];
    gqp *db = NULL;
    int rc = gqp_gen_test(dir, PROBE_ROWS, 7, &emsg);
    snprintf(cfg, sizeof cfg, "%s/gqp.yaml", dir);
    if (rc == GQP_OK) rc = gqp_open(cfg, &db);
    if (rc == GQP_OK && !(db->cost = malloc(sizeof *db->cost))) rc = GQP_NOMEM;
    if (rc != GQP_OK) {
        snprintf(err, cap, "Cost Error: query probe: %s",
                 emsg ? emsg
                 : db ? gqp_errmsg(db)
                      : "out of memory");
        free(emsg);
        gqp_close(db);
        rm_dir(dir);
        return -1;
    }
    *db->cost = *m;
    db->cost->gpu_query_us = db->cost->cpu_query_us = 0; /* what is measured */
    snprintf(db->cost->source, sizeof db->cost->source, "being calibrated");
    gqp_set_threads(db, m->cpu_threads > 0 ? m->cpu_threads : 0);
    const int nq = (int)(sizeof probe_sql / sizeof *probe_sql);
    for (int gpu = 0; gpu <= prim_gpu_available() && rc == GQP_OK; gpu++) {
        gqp_set_device(db, gpu ? GQP_DEVICE_GPU : GQP_DEVICE_CPU);
        double diff[PROBE_RUNS * 8];
        int nd = 0;
        for (int q = 0; q < nq && rc == GQP_OK; q++) {
            for (int r = -1; r < PROBE_RUNS && rc == GQP_OK; r++) { /* r = -1: warm-up */
                struct timespec ts = {0, 2000000};
                nanosleep(&ts, NULL);
                gqp_stmt *st = NULL;
                rc = gqp_prepare(db, probe_sql[q], -1, &st, NULL);
                if (rc == GQP_OK && st) {
                    int s = gqp_step(st);
                    rc = s == GQP_ROW || s == GQP_DONE ? GQP_OK : s;
                    if (rc == GQP_OK && r >= 0) diff[nd++] = st->exec_ms * 1e3 - st->est_us;
                }
                gqp_finalize(st);
            }
        }
        if (rc != GQP_OK) {
            snprintf(err, cap, "Cost Error: query probe on the %s: %s", gpu ? "GPU" : "CPU",
                     gqp_errmsg(db));
            break;
        }
        qsort(diff, (size_t)nd, sizeof *diff, cmp_dbl);
        double med = nd ? diff[nd / 2] : 0;
        *(gpu ? &m->gpu_query_us : &m->cpu_query_us) = med > 0 ? med : 0;
    }
    gqp_close(db);
    rm_dir(dir);
    return rc == GQP_OK ? 0 : -1;
}

int gqp_calibrate_ex(const char *out_path, int nthreads, int64_t max_rows, char **errmsg) {
    char err[512];
    if (errmsg) *errmsg = NULL;
    if (!out_path) return GQP_MISUSE;
    if (cost_calibrate_ex(out_path, nthreads, max_rows, NULL, NULL, calib_probe, err, sizeof err) ==
        0)
        return GQP_OK;
    if (errmsg) {
        *errmsg = malloc(strlen(err) + 1);
        if (*errmsg) strcpy(*errmsg, err);
    }
    return strncmp(err, "Device", 6) == 0 ? GQP_DEVICE : GQP_ERROR;
}

int gqp_calibrate(const char *out_path, char **errmsg) {
    return gqp_calibrate_ex(out_path, 0, 0, errmsg);
}
