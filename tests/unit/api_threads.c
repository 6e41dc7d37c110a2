/*
 * api_threads.c -- see api_threads.h. No Criterion here: the TSan driver
 * links it too.
 */
#include "api_threads.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Runs every statement of sql to completion; returns GQP_OK or the first
 * error code. */
int api_run_sql(gqp *db, const char *sql) {
    const char *tail = sql;
    while (*tail) {
        gqp_stmt *st = NULL;
        int rc = gqp_prepare(db, tail, -1, &st, &tail);
        if (rc != GQP_OK) return rc;
        if (!st) break;
        while ((rc = gqp_step(st)) == GQP_ROW) {
        }
        gqp_finalize(st);
        if (rc != GQP_DONE) return rc;
    }
    return GQP_OK;
}

int api_make_tables(gqp *db) {
    size_t cap = 64 * 1024;
    char *sql = malloc(cap);
    if (!sql) return GQP_NOMEM;
    size_t k = (size_t)snprintf(sql, cap,
                                "CREATE TABLE t(a INTEGER, b INTEGER, s TEXT); "
                                "INSERT INTO t VALUES ");
    for (int i = 0; i < 1000; i++)
        k +=
            (size_t)snprintf(sql + k, cap - k, "%s(%d, %d, 's%d')", i ? "," : "", i % 10, i, i % 7);
    k += (size_t)snprintf(sql + k, cap - k, "; CREATE TABLE u(x INTEGER)");
    int rc = api_run_sql(db, sql);
    free(sql);
    return rc;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct Worker {
    gqp *db; /* shared handle, or NULL: the worker opens its own */
    int id;
    int failures;
    int runs;
    int iters;      /* rounds to run, or ... */
    double seconds; /* > 0: run rounds for this long */
    char msg[512];
} Worker;

/* One round of queries on db by worker w: a parameterized aggregate
 * checked against its known answer, a statement stepped row by row, an
 * error (whose code and message are read under gqp_lock), and for worker
 * 0 an INSERT into another table (plans of all threads go stale). */
static void worker_round(Worker *w, gqp *db, int it) {
    int k = (it + w->id) % 10 + 1;
    gqp_stmt *st = NULL;
    int rc = gqp_prepare(db, "SELECT COUNT(*), SUM(b) FROM t WHERE a < ?", -1, &st, NULL);
    if (rc != GQP_OK || !st) {
        w->failures++;
        snprintf(w->msg, sizeof w->msg, "prepare: %d", rc);
        return;
    }
    gqp_bind_int64(st, 1, k);
    rc = gqp_step(st);
    /* rows i < 1000 with i % 10 < k: 100 k rows, sum of i */
    int64_t want_sum = 0;
    for (int i = 0; i < 1000; i++)
        if (i % 10 < k) want_sum += i;
    if (rc != GQP_ROW || gqp_column_int64(st, 0) != 100 * k ||
        gqp_column_int64(st, 1) != want_sum) {
        w->failures++;
        snprintf(w->msg, sizeof w->msg, "aggregate: rc %d count %lld sum %lld (k %d)", rc,
                 (long long)gqp_column_int64(st, 0), (long long)gqp_column_int64(st, 1), k);
    }
    gqp_finalize(st);

    rc = gqp_prepare(db, "SELECT b, s FROM t WHERE b >= :lo AND b < :lo + 5 ORDER BY b", -1, &st,
                     NULL);
    if (rc == GQP_OK && st) {
        int lo = (it * 37 + w->id * 101) % 990;
        gqp_bind_int64(st, gqp_bind_parameter_index(st, ":lo"), lo);
        int n = 0;
        while ((rc = gqp_step(st)) == GQP_ROW) {
            char want[16];
            snprintf(want, sizeof want, "s%d", (lo + n) % 7);
            const char *txt = gqp_column_text(st, 1);
            if (gqp_column_int64(st, 0) != lo + n || !txt || strcmp(txt, want) != 0) {
                w->failures++;
                snprintf(w->msg, sizeof w->msg, "row %d of b >= %d", n, lo);
            }
            n++;
        }
        if (rc != GQP_DONE || n != 5) {
            w->failures++;
            snprintf(w->msg, sizeof w->msg, "rows: rc %d n %d", rc, n);
        }
        gqp_finalize(st);
    } else {
        w->failures++;
    }

    gqp_lock(db);
    rc = gqp_prepare(db, "SELECT nosuchcolumn FROM t", -1, &st, NULL);
    if (rc != GQP_ERROR || gqp_errcode(db) != GQP_ERROR ||
        gqp_extended_errcode(db) != GQP_ERROR_BINDER || !strstr(gqp_errmsg(db), "nosuchcolumn")) {
        w->failures++;
        snprintf(w->msg, sizeof w->msg, "error: rc %d, %s", rc, gqp_errmsg(db));
    }
    gqp_unlock(db);

    if (w->id == 0 && it % 8 == 0) {
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT INTO u VALUES (%d)", it);
        if (api_run_sql(db, sql) != GQP_OK) w->failures++;
    }
    w->runs++;
}

/* Thread body: rounds on the shared handle, or on a handle of its own. */
static void *worker_main(void *arg) {
    Worker *w = arg;
    gqp *db = w->db;
    if (!db) {
        if (gqp_open(NULL, &db) != GQP_OK) {
            w->failures++;
            return NULL;
        }
        /* odd threads place with the cost model (each handle loads its
         * cost file on first use, concurrently with the others) */
        gqp_set_device(db, w->id % 2 ? GQP_DEVICE_AUTO : GQP_DEVICE_CPU);
        gqp_set_threads(db, 2);
        if (api_make_tables(db) != GQP_OK) {
            w->failures++;
            snprintf(w->msg, sizeof w->msg, "tables: %s", gqp_errmsg(db));
        }
    }
    double t0 = now_s();
    for (int it = 0; w->seconds > 0 ? now_s() - t0 < w->seconds : it < w->iters; it++)
        worker_round(w, db, it);
    if (!w->db) gqp_close(db);
    return NULL;
}

int api_thread_stress(gqp *shared, int nthreads, int iters, double seconds, int *rounds, char *msg,
                      size_t cap) {
    pthread_t th[64];
    Worker w[64];
    int failures = 0;
    if (nthreads > 64) nthreads = 64;
    *rounds = 0;
    for (int i = 0; i < nthreads; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].db = shared;
        w[i].id = i;
        w[i].iters = iters;
        w[i].seconds = seconds;
        if (pthread_create(&th[i], NULL, worker_main, &w[i]) != 0) {
            w[i].failures = 1;
            snprintf(w[i].msg, sizeof w[i].msg, "pthread_create failed");
            th[i] = 0;
        }
    }
    for (int i = 0; i < nthreads; i++) {
        if (th[i]) pthread_join(th[i], NULL);
        if (w[i].failures) snprintf(msg, cap, "thread %d: %s", i, w[i].msg);
        failures += w[i].failures;
        *rounds += w[i].runs;
    }
    return failures;
}

typedef struct IntArg {
    gqp *db;
    int done; /* __atomic */
    int calls;
} IntArg;

/* Thread body: interrupts a->db every 200 us until a->done. */
static void *interrupter(void *arg) {
    IntArg *a = arg;
    while (!__atomic_load_n(&a->done, __ATOMIC_ACQUIRE)) {
        gqp_interrupt(a->db);
        a->calls++;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int api_interrupt_check(gqp *db, char *msg, size_t cap) {
    char *sql = malloc(64 * 1024);
    if (!sql) return -1;
    size_t k = (size_t)sprintf(sql, "CREATE TABLE big(x INTEGER); INSERT INTO big VALUES ");
    for (int i = 0; i < 2000; i++)
        k += (size_t)sprintf(sql + k, "%s(%d)", i ? "," : "", i);
    int rc = api_run_sql(db, sql);
    free(sql);
    gqp_stmt *st = NULL;
    if (rc == GQP_OK)
        rc = gqp_prepare(db,
                         "SELECT COUNT(*), SUM(p.x * q.x % 7) FROM big p, big q "
                         "WHERE p.x + q.x > 10",
                         -1, &st, NULL);
    if (rc != GQP_OK || !st) {
        snprintf(msg, cap, "setup: %s", gqp_errmsg(db));
        return -1;
    }
    IntArg a = {db, 0, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, interrupter, &a) != 0) {
        gqp_finalize(st);
        snprintf(msg, cap, "pthread_create failed");
        return -1;
    }
    rc = gqp_step(st);
    __atomic_store_n(&a.done, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    int bad = rc != GQP_INTERRUPT || strcmp(gqp_errmsg(db), "Interrupted") != 0 ||
              gqp_errcode(db) != GQP_INTERRUPT;
    if (bad)
        snprintf(msg, cap, "step returned %d (%s) after %d interrupts", rc, gqp_errmsg(db),
                 a.calls);
    gqp_finalize(st);
    if (bad) return -1;
    /* an interrupt while nothing runs is forgotten when the next starts */
    gqp_interrupt(db);
    if (api_run_sql(db, "SELECT COUNT(*) FROM big WHERE x < 5") != GQP_OK) {
        snprintf(msg, cap, "query after the interrupt: %s", gqp_errmsg(db));
        return -1;
    }
    return 0;
}
