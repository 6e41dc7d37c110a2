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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libgqp/internal.h"

/* Queries the calibration runs end to end on `gqp gen test` tables of
 * PROBE_SMALL and PROBE_LARGE rows (one thread and all threads; the large
 * one big enough that the GPU's work, not its overhead, sets the slope): a
 * filter with gathers, a dense aggregate, a sort aggregate, a top-k, a
 * plain filter, a count. */
static const char *const probe_sql[] = {
    "SELECT id, uniformi FROM test WHERE id < 1000",
    "SELECT SUM(uniformi), COUNT(*) FROM test WHERE id < 5000000",
    "SELECT normali5, COUNT(*), SUM(uniformf) FROM test WHERE id < 2000000 GROUP BY normali5",
    "SELECT id, uniformf FROM test WHERE id < 500000 ORDER BY uniformf LIMIT 10",
    "SELECT id FROM test WHERE uniformi > 90",
    "SELECT COUNT(*) FROM test WHERE normali5 < 0",
};
#define PROBE_NQ ((int)(sizeof probe_sql / sizeof *probe_sql))
#define PROBE_SMALL 10000
#define PROBE_LARGE 10000000
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

/* Run every probe query on db under device (warm-up, then PROBE_RUNS runs
 * 2 ms apart, so that each starts with the CPU workers asleep as the
 * placement benchmark runs them); the median measured and the plan's
 * estimate, in microseconds, into meas[q] and est[q], and its GPU nodes
 * that wait for a count into nsync[q]. GQP_OK or an error. */
static int probe_runs(gqp *db, gqp_device device, double *meas, double *est, double *nsync) {
    int rc = gqp_set_device(db, device);
    for (int q = 0; q < PROBE_NQ && rc == GQP_OK; q++) {
        double t[PROBE_RUNS];
        for (int r = -1; r < PROBE_RUNS && rc == GQP_OK; r++) { /* r = -1: warm-up */
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            gqp_stmt *st = NULL;
            rc = gqp_prepare(db, probe_sql[q], -1, &st, NULL);
            if (rc == GQP_OK && st) {
                int s = gqp_step(st);
                rc = s == GQP_ROW || s == GQP_DONE ? GQP_OK : s;
                if (rc == GQP_OK && r >= 0) t[r] = st->exec_ms * 1e3;
                if (rc == GQP_OK) {
                    est[q] = st->est_us;
                    nsync[q] = 0;
                    for (int i = 0; i < st->dag->nnodes; i++)
                        nsync[q] += st->dag->nodes[i].device == DEV_GPU &&
                                    st->dag->nodes[i].fused_with < 0 && cost_node_syncs(st->dag, i);
                }
            }
            gqp_finalize(st);
        }
        if (rc == GQP_OK) {
            qsort(t, PROBE_RUNS, sizeof *t, cmp_dbl);
            meas[q] = t[PROBE_RUNS / 2];
        }
    }
    return rc;
}

/* What cost_calibrate_ex's callbacks share (ud): the caller's progress
 * callback and the step count. */
typedef struct CalibRun {
    gqp_progress_fn fn;
    void *ud;
    int step, nsteps;
    int64_t max_rows;
} CalibRun;

/* cost_calibrate_ex's progress: one step more, passed on. */
static void calib_progress(void *ud, const char *line) {
    CalibRun *r = ud;
    r->step++;
    if (r->step > r->nsteps) r->nsteps = r->step;
    if (r->fn) r->fn(r->ud, r->step, r->nsteps, line);
}

/* cost_calibrate_ex's probe: fit, over the probe queries at both sizes,
 * by relative error, with the model's per-query constants at 0 and its
 * scales at 1 (cost.h): on the CPU measured = cpu_query_us + cpu_scale x
 * estimate; on the GPU (columns resident) measured = estimate +
 * gpu_query_us + gpu_sync_node_us x the GPU nodes that wait for a count. */
static int calib_probe(void *ud, CostModel *m, char *err, size_t cap) {
    CalibRun *run = ud;
    /* [gpu][large][query] */
    double meas[2][2][PROBE_NQ], est[2][2][PROBE_NQ], nsync[2][2][PROBE_NQ];
    /* the large table as large as the primitives' largest size (a smaller
     * --max-rows makes a quick calibration quick throughout) */
    int64_t large =
        run && run->max_rows > 0 && run->max_rows < PROBE_LARGE ? run->max_rows : PROBE_LARGE;
    if (large < 2 * PROBE_SMALL) large = 2 * PROBE_SMALL;
    const int64_t sizes[2] = {PROBE_SMALL, large};
    char line[160];
    int ngpu = prim_gpu_available() ? 2 : 1;
    for (int z = 0; z < 2; z++) {
        char dir[] = "/tmp/gqp-calibrate-XXXXXX";
        if (!mkdtemp(dir)) {
            snprintf(err, cap, "Cost Error: cannot create a temporary folder for the query probe");
            return -1;
        }
        char *emsg = NULL, cfg[64];
        gqp *db = NULL;
        snprintf(line, sizeof line, "query probe: generating %lld rows", (long long)sizes[z]);
        if (run) calib_progress(run, line);
        int rc = gqp_gen_test(dir, sizes[z], 7, &emsg);
        snprintf(cfg, sizeof cfg, "%s/gqp.yaml", dir);
        if (rc == GQP_OK) rc = gqp_open(cfg, &db);
        if (rc == GQP_OK && !(db->cost = malloc(sizeof *db->cost))) rc = GQP_NOMEM;
        if (rc == GQP_OK) {
            *db->cost = *m;
            db->cost->gpu_query_us = db->cost->cpu_query_us = 0; /* what is measured */
            db->cost->gpu_sync_node_us = 0;
            db->cost->gpu_scale = db->cost->cpu_scale = 1;
            snprintf(db->cost->source, sizeof db->cost->source, "being calibrated");
            gqp_set_threads(db, m->cpu_threads > 0 ? m->cpu_threads : 0);
            for (int g = 0; g < ngpu && rc == GQP_OK; g++) {
                snprintf(line, sizeof line, "query probe: %d queries on %lld rows, %s", PROBE_NQ,
                         (long long)sizes[z], g ? "GPU" : "CPU");
                if (run) calib_progress(run, line);
                rc = probe_runs(db, g ? GQP_DEVICE_GPU : GQP_DEVICE_CPU, meas[g][z], est[g][z],
                                nsync[g][z]);
            }
        }
        if (rc != GQP_OK)
            snprintf(err, cap, "Cost Error: query probe: %s",
                     emsg ? emsg
                     : db ? gqp_errmsg(db)
                          : "out of memory");
        free(emsg);
        gqp_close(db);
        rm_dir(dir);
        if (rc != GQP_OK) return -1;
    }
    for (int g = 0; g < ngpu; g++) {
        /* CPU: [1, estimate] -> cpu_query_us, cpu_scale (the 1e7-row runs,
         * tens of ms, pin the scale). GPU: [1, syncs] over what the model
         * leaves -> gpu_query_us, gpu_sync_node_us, scale 1: its plans take
         * well under a millisecond even at 1e7 rows, so a scale and a
         * per-query constant cannot be told apart there (fitting both gave
         * 0-71 us and 1.1-2.4x from one calibration to the next) */
        double X[2 * 2 * PROBE_NQ], y[2 * PROBE_NQ], beta[2] = {0, 1};
        int n = 0;
        for (int z = 0; z < 2; z++)
            for (int q = 0; q < PROBE_NQ; q++) {
                double me = meas[g][z][q];
                if (me <= 0) continue;
                X[2 * n] = 1.0 / me;
                X[2 * n + 1] = (g ? nsync[g][z][q] : est[g][z][q]) / me;
                y[n++] = g ? 1.0 - est[g][z][q] / me : 1.0;
            }
        if (n < 2 || cost_fit(X, y, n, 2, beta) != 0) continue; /* keep the defaults */
        /* (clamped at 0: the lower bound in cost/place.c needs them >= 0) */
        if (g) {
            m->gpu_query_us = beta[0] > 0 ? beta[0] : 0;
            m->gpu_sync_node_us = beta[1] > 0 ? beta[1] : 0;
            m->gpu_scale = 1;
            continue;
        }
        /* TUNING: a scale beyond 2.5x either way would mean the primitive
         * fits are broken, not a cold-cache effect: clamp */
        m->cpu_query_us = beta[0] > 0 ? beta[0] : 0;
        m->cpu_scale = beta[1] < 0.4 ? 0.4 : beta[1] > 2.5 ? 2.5 : beta[1];
    }
    return 0;
}

int gqp_user_cost_path(char *buf, size_t cap) {
    if (!buf || cap == 0) return GQP_MISUSE;
    return cost_user_file(buf, cap) == 0 ? GQP_OK : GQP_ERROR;
}

/* Create the folder that will hold file path, and its parents (mkdir -p
 * of path's dirname). 0, or -1 with errno set. */
static int make_parent_dirs(const char *path) {
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path) return 0;
    size_t n = (size_t)(slash - path);
    if (n >= sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(dir, path, n);
    dir[n] = 0;
    for (char *p = dir + 1;; p++) {
        char c = *p;
        if (c != '/' && c != 0) continue;
        *p = 0;
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) return -1;
        *p = c;
        if (!c) break;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0) return -1;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int gqp_calibrate_progress(const char *out_path, int nthreads, int64_t max_rows,
                           gqp_progress_fn progress, void *ud, char **errmsg) {
    char err[1200], user[2048], tmp[4200];
    if (errmsg) *errmsg = NULL;
    int rc = GQP_OK;
    if (!out_path) {
        if (cost_user_file(user, sizeof user) != 0) {
            snprintf(err, sizeof err,
                     "Cost Error: no place for the calibrated cost file: neither "
                     "XDG_CONFIG_HOME nor HOME is set (give an output file)");
            rc = GQP_ERROR;
        }
        out_path = user;
    }
    /* before measuring anything: the folder exists (made if missing) and a
     * file can be written in it; the file is written there under a
     * temporary name and renamed over out_path once complete */
    if (rc == GQP_OK && strlen(out_path) + 32 > sizeof tmp) {
        snprintf(err, sizeof err, "Cost Error: output path too long: %.200s", out_path);
        rc = GQP_ERROR;
    }
    if (rc == GQP_OK) {
        snprintf(tmp, sizeof tmp, "%s.tmp%ld", out_path, (long)getpid());
        FILE *f = NULL;
        if (make_parent_dirs(out_path) != 0 || !(f = fopen(tmp, "w"))) {
            snprintf(err, sizeof err, "Cost Error: cannot write %.1000s: %s", out_path,
                     strerror(errno));
            rc = GQP_ERROR;
        } else {
            fclose(f);
        }
    }
    if (rc == GQP_OK) {
        CalibRun run = {progress, ud, 0, 0, max_rows};
        run.nsteps = cost_calibrate_steps(nthreads, max_rows, prim_gpu_available()) +
                     2 * (1 + (prim_gpu_available() ? 2 : 1));
        if (cost_calibrate_ex(tmp, nthreads, max_rows, calib_progress, &run, calib_probe, err,
                              sizeof err) != 0)
            rc = strncmp(err, "Device", 6) == 0 ? GQP_DEVICE : GQP_ERROR;
        else if (rename(tmp, out_path) != 0) {
            snprintf(err, sizeof err, "Cost Error: cannot write %.1000s: %s", out_path,
                     strerror(errno));
            rc = GQP_ERROR;
        }
        if (rc != GQP_OK) unlink(tmp);
    }
    if (rc != GQP_OK && errmsg) {
        *errmsg = malloc(strlen(err) + 1);
        if (*errmsg) strcpy(*errmsg, err);
    }
    return rc;
}

int gqp_calibrate_ex(const char *out_path, int nthreads, int64_t max_rows, char **errmsg) {
    return gqp_calibrate_progress(out_path, nthreads, max_rows, NULL, NULL, errmsg);
}

int gqp_calibrate(const char *out_path, char **errmsg) {
    return gqp_calibrate_ex(out_path, 0, 0, errmsg);
}
