/*
 * test_api.c -- the public API of include/gqp.h beyond plain queries:
 * threads (one shared handle, and a handle per thread), bind parameters,
 * gqp_interrupt, error codes, gqp_set_device's checks.
 *
 * The thread tests also run under ThreadSanitizer (tests/tsan.sh). Their
 * length: GQP_TEST_THREAD_ITERS iterations per thread (default 200), or,
 * with GQP_TEST_THREAD_SECONDS set, as many as fit in that many seconds.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gqp.h"

#define NTHREADS 8

/* Opens an empty handle on the CPU with 2 worker threads. */
static gqp *open_db(void) {
    gqp *db = NULL;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    cr_assert_eq(gqp_set_threads(db, 2), GQP_OK);
    return db;
}

/* Runs every statement of sql to completion; returns GQP_OK or the first
 * error code. */
static int run_sql(gqp *db, const char *sql) {
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

/* Creates t(a INTEGER, b INTEGER, s TEXT) with rows i = 0..999: a = i % 10,
 * b = i, s = 's' || (i % 7). */
static void make_t(gqp *db) {
    size_t cap = 64 * 1024;
    char *sql = malloc(cap);
    cr_assert(sql);
    size_t k = (size_t)snprintf(sql, cap,
                                "CREATE TABLE t(a INTEGER, b INTEGER, s TEXT); "
                                "INSERT INTO t VALUES ");
    for (int i = 0; i < 1000; i++)
        k +=
            (size_t)snprintf(sql + k, cap - k, "%s(%d, %d, 's%d')", i ? "," : "", i % 10, i, i % 7);
    cr_assert_eq(run_sql(db, sql), GQP_OK, "%s", gqp_errmsg(db));
    free(sql);
}

/* Iterations per thread (GQP_TEST_THREAD_ITERS, default 200) and the time
 * limit in seconds (GQP_TEST_THREAD_SECONDS, 0 = none: iterations only). */
static int iters(void) {
    const char *e = getenv("GQP_TEST_THREAD_ITERS");
    return e && atoi(e) > 0 ? atoi(e) : 200;
}

static double seconds_limit(void) {
    const char *e = getenv("GQP_TEST_THREAD_SECONDS");
    return e ? atof(e) : 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 1 while thread work should continue: iteration it of a run started at t0. */
static int keep_going(int it, double t0) {
    double lim = seconds_limit();
    if (lim > 0) return now_s() - t0 < lim;
    return it < iters();
}

typedef struct Worker {
    gqp *db; /* shared handle, or NULL: the worker opens its own */
    int id;
    int failures;
    int runs;
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
        if (run_sql(db, sql) != GQP_OK) w->failures++;
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
        gqp_set_device(db, GQP_DEVICE_CPU);
        gqp_set_threads(db, 2);
        make_t(db);
        run_sql(db, "CREATE TABLE u(x INTEGER)");
    }
    double t0 = now_s();
    for (int it = 0; keep_going(it, t0); it++)
        worker_round(w, db, it);
    if (!w->db) gqp_close(db);
    return NULL;
}

/* Runs NTHREADS workers (on shared, or each on its own handle when shared
 * is NULL) and asserts that none failed. */
static void run_workers(gqp *shared) {
    pthread_t th[NTHREADS];
    Worker w[NTHREADS];
    double t0 = now_s();
    for (int i = 0; i < NTHREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].db = shared;
        w[i].id = i;
        cr_assert_eq(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    int runs = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        cr_expect_eq(w[i].failures, 0, "thread %d: %d failures, last: %s", i, w[i].failures,
                     w[i].msg);
        runs += w[i].runs;
    }
    cr_log_info("%s handle: %d threads x %.1f s, %d rounds", shared ? "shared" : "own", NTHREADS,
                now_s() - t0, runs);
}

Test(threads, shared_handle) {
    gqp *db = open_db();
    make_t(db);
    cr_assert_eq(run_sql(db, "CREATE TABLE u(x INTEGER)"), GQP_OK);
    run_workers(db);
    gqp_close(db);
}

Test(threads, handle_per_thread) {
    run_workers(NULL);
}

/* A statement prepared on one thread, stepped on another while a third
 * finalizes its own statements on the same handle. */
typedef struct StepArg {
    gqp_stmt *st;
    int rows;
} StepArg;

static void *step_all(void *arg) {
    StepArg *a = arg;
    while (gqp_step(a->st) == GQP_ROW)
        a->rows++;
    return NULL;
}

Test(threads, statement_moves_between_threads) {
    gqp *db = open_db();
    make_t(db);
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, "SELECT b FROM t WHERE a = 3", -1, &st, NULL), GQP_OK);
    StepArg a = {st, 0};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, step_all, &a), 0);
    for (int i = 0; i < 50; i++)
        cr_assert_eq(run_sql(db, "SELECT COUNT(*) FROM t"), GQP_OK);
    pthread_join(th, NULL);
    cr_expect_eq(a.rows, 100);
    gqp_close(db); /* finalizes st */
}

/* ------------------------------------------------------------ interrupt -- */

typedef struct IntArg {
    gqp *db;
    int done; /* __atomic */
    int calls;
} IntArg;

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

Test(interrupt, stops_a_running_query) {
    gqp *db = open_db();
    /* 2000 x 2000 pairs: a cross join that runs far longer than 200 us */
    char *sql = malloc(64 * 1024);
    size_t k = (size_t)sprintf(sql, "CREATE TABLE big(x INTEGER); INSERT INTO big VALUES ");
    for (int i = 0; i < 2000; i++)
        k += (size_t)sprintf(sql + k, "%s(%d)", i ? "," : "", i);
    cr_assert_eq(run_sql(db, sql), GQP_OK, "%s", gqp_errmsg(db));
    free(sql);
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db,
                             "SELECT COUNT(*), SUM(p.x * q.x % 7) FROM big p, big q "
                             "WHERE p.x + q.x > 10",
                             -1, &st, NULL),
                 GQP_OK, "%s", gqp_errmsg(db));
    IntArg a = {db, 0, 0};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, interrupter, &a), 0);
    int rc = gqp_step(st);
    __atomic_store_n(&a.done, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    cr_expect_eq(rc, GQP_INTERRUPT, "step returned %d after %d interrupts", rc, a.calls);
    cr_expect_str_eq(gqp_errmsg(db), "Interrupted");
    cr_expect_eq(gqp_errcode(db), GQP_INTERRUPT);
    gqp_finalize(st);
    /* an interrupt while nothing runs is forgotten when the next starts */
    gqp_interrupt(db);
    cr_expect_eq(run_sql(db, "SELECT COUNT(*) FROM big WHERE x < 5"), GQP_OK, "%s", gqp_errmsg(db));
    gqp_interrupt(NULL); /* a no-op */
    gqp_close(db);
}

/* --------------------------------------------------------------- binding -- */

Test(bind, numbering_and_names) {
    gqp *db = open_db();
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, "SELECT ?, ?5, :a, $b, @c, :a, ?", -1, &st, NULL), GQP_OK, "%s",
                 gqp_errmsg(db));
    cr_expect_eq(gqp_bind_parameter_count(st), 9);
    cr_expect_null(gqp_bind_parameter_name(st, 1));
    cr_expect_null(gqp_bind_parameter_name(st, 2));
    cr_expect_str_eq(gqp_bind_parameter_name(st, 5), "?5");
    cr_expect_str_eq(gqp_bind_parameter_name(st, 6), ":a");
    cr_expect_str_eq(gqp_bind_parameter_name(st, 7), "$b");
    cr_expect_str_eq(gqp_bind_parameter_name(st, 8), "@c");
    cr_expect_null(gqp_bind_parameter_name(st, 9));
    cr_expect_null(gqp_bind_parameter_name(st, 10));
    cr_expect_eq(gqp_bind_parameter_index(st, ":a"), 6);
    cr_expect_eq(gqp_bind_parameter_index(st, "@c"), 8);
    cr_expect_eq(gqp_bind_parameter_index(st, "?5"), 5);
    cr_expect_eq(gqp_bind_parameter_index(st, ":zz"), 0);
    cr_expect_eq(gqp_bind_parameter_index(st, "a"), 0);
    /* unbound parameters are NULL */
    cr_assert_eq(gqp_step(st), GQP_ROW);
    for (int c = 0; c < 7; c++)
        cr_expect(gqp_column_is_null(st, c), "column %d", c);
    gqp_finalize(st);
    cr_expect_eq(gqp_prepare(db, "SELECT ?0", -1, &st, NULL), GQP_ERROR);
    cr_expect_eq(gqp_extended_errcode(db), GQP_ERROR_PARSER);
    cr_expect_eq(gqp_prepare(db, "SELECT ?32767", -1, &st, NULL), GQP_ERROR);
    cr_expect_eq(gqp_prepare(db, "SELECT ?32766", -1, &st, NULL), GQP_OK);
    cr_expect_eq(gqp_bind_parameter_count(st), 32766);
    gqp_finalize(st);
    cr_expect_eq(gqp_prepare(db, "SELECT 1", -1, &st, NULL), GQP_OK);
    cr_expect_eq(gqp_bind_parameter_count(st), 0);
    cr_expect_eq(gqp_bind_int64(st, 1, 5), GQP_RANGE);
    cr_expect_eq(gqp_errcode(db), GQP_RANGE);
    gqp_finalize(st);
    gqp_close(db);
}

Test(bind, values_are_typed_literals) {
    gqp *db = open_db();
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, "SELECT ?1 + 1, ?2 * 2, ?3, ?4, ?1 / 2", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_bind_int64(st, 1, 41), GQP_OK);
    cr_assert_eq(gqp_bind_double(st, 2, 1.25), GQP_OK);
    cr_assert_eq(gqp_bind_text(st, 3, "it's", -1), GQP_OK);
    cr_assert_eq(gqp_bind_text(st, 4, "abcdef", 3), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s", gqp_errmsg(db));
    cr_expect_eq(gqp_column_int64(st, 0), 42);
    cr_expect_eq(gqp_column_type(st, 0), GQP_TYPE_INT64);
    cr_expect_eq(gqp_column_double(st, 1), 2.5);
    cr_expect_eq(gqp_column_type(st, 1), GQP_TYPE_FLOAT64);
    cr_expect_str_eq(gqp_column_text(st, 2), "it's");
    cr_expect_eq(gqp_column_type(st, 2), GQP_TYPE_STRING);
    cr_expect_str_eq(gqp_column_text(st, 3), "abc");
    cr_expect_eq(gqp_column_int64(st, 4), 20); /* integer division: an integer literal */
    /* binding while the statement has run is misuse */
    cr_expect_eq(gqp_bind_int64(st, 1, 1), GQP_MISUSE);
    cr_expect_eq(gqp_errcode(db), GQP_MISUSE);
    /* reset keeps the bindings; new ones are planned at the next step */
    gqp_reset(st);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_expect_eq(gqp_column_int64(st, 0), 42);
    gqp_reset(st);
    cr_assert_eq(gqp_bind_null(st, 1), GQP_OK);
    cr_assert_eq(gqp_bind_text(st, 3, NULL, 0), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_expect(gqp_column_is_null(st, 0));
    cr_expect(gqp_column_is_null(st, 2));
    cr_expect_eq(gqp_column_double(st, 1), 2.5);
    gqp_reset(st);
    cr_assert_eq(gqp_clear_bindings(st), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_expect(gqp_column_is_null(st, 1));
    gqp_finalize(st);
    gqp_close(db);
}

Test(bind, where_limit_and_dates) {
    gqp *db = open_db();
    make_t(db);
    cr_assert_eq(run_sql(db, "CREATE TABLE d(k INTEGER, day DATE); INSERT INTO d VALUES "
                             "(1, DATE '2020-01-05'), (2, DATE '2021-03-01'), (3, NULL)"),
                 GQP_OK);
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, "SELECT b FROM t WHERE s = $s AND b > $min ORDER BY b LIMIT ?", -1,
                             &st, NULL),
                 GQP_OK, "%s", gqp_errmsg(db));
    for (int round = 0; round < 3; round++) {
        char s[8];
        snprintf(s, sizeof s, "s%d", round + 2);
        gqp_bind_text(st, gqp_bind_parameter_index(st, "$s"), s, -1);
        gqp_bind_int64(st, gqp_bind_parameter_index(st, "$min"), 100 * round);
        gqp_bind_int64(st, 3, 4);
        int n = 0;
        while (gqp_step(st) == GQP_ROW) {
            int64_t b = gqp_column_int64(st, 0);
            cr_expect_eq(b % 7, round + 2);
            cr_expect_gt(b, 100 * round);
            n++;
        }
        cr_expect_eq(n, 4, "round %d: %s", round, gqp_errmsg(db));
        gqp_reset(st);
    }
    gqp_finalize(st);
    /* a text value compared with a DATE column is a date, like a literal */
    cr_assert_eq(gqp_prepare(db, "SELECT k FROM d WHERE day < ?", -1, &st, NULL), GQP_OK);
    gqp_bind_text(st, 1, "2021-01-01", -1);
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s", gqp_errmsg(db));
    cr_expect_eq(gqp_column_int64(st, 0), 1);
    cr_expect_eq(gqp_step(st), GQP_DONE);
    gqp_finalize(st);
    /* a name error is still found at prepare */
    cr_expect_eq(gqp_prepare(db, "SELECT nope FROM t LIMIT ?", -1, &st, NULL), GQP_ERROR);
    cr_expect(strstr(gqp_errmsg(db), "nope"), "%s", gqp_errmsg(db));
    gqp_close(db);
}

Test(bind, insert_loop) {
    gqp *db = open_db();
    cr_assert_eq(run_sql(db, "CREATE TABLE r(i INTEGER, x DOUBLE, s TEXT)"), GQP_OK);
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, "INSERT INTO r VALUES (?, ?, ?)", -1, &st, NULL), GQP_OK);
    for (int i = 0; i < 50; i++) {
        gqp_bind_int64(st, 1, i);
        gqp_bind_double(st, 2, i * 0.5);
        if (i % 5)
            gqp_bind_text(st, 3, i % 2 ? "odd" : "even", -1);
        else
            gqp_bind_null(st, 3);
        cr_assert_eq(gqp_step(st), GQP_DONE, "%s", gqp_errmsg(db));
        cr_expect_eq(gqp_changes(st), 1);
        gqp_reset(st);
    }
    gqp_finalize(st);
    cr_assert_eq(gqp_prepare(db, "SELECT COUNT(*), SUM(i), SUM(x), COUNT(s) FROM r", -1, &st, NULL),
                 GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_expect_eq(gqp_column_int64(st, 0), 50);
    cr_expect_eq(gqp_column_int64(st, 1), 1225);
    cr_expect_eq(gqp_column_double(st, 2), 612.5);
    cr_expect_eq(gqp_column_int64(st, 3), 40);
    gqp_finalize(st);
    /* INSERT ... SELECT with a parameter, stepped twice */
    cr_assert_eq(gqp_prepare(db, "INSERT INTO r SELECT i, x, s FROM r WHERE i < ?", -1, &st, NULL),
                 GQP_OK, "%s", gqp_errmsg(db));
    gqp_bind_int64(st, 1, 3);
    cr_assert_eq(gqp_step(st), GQP_DONE, "%s", gqp_errmsg(db));
    cr_expect_eq(gqp_changes(st), 3);
    gqp_reset(st);
    gqp_bind_int64(st, 1, 1);
    cr_assert_eq(gqp_step(st), GQP_DONE, "%s", gqp_errmsg(db));
    cr_expect_eq(gqp_changes(st), 2); /* the two rows with i = 0 now */
    gqp_finalize(st);
    gqp_close(db);
}

/* ------------------------------------------------------ errors, settings -- */

Test(errors, codes_by_stage) {
    gqp *db = open_db();
    cr_expect_eq(gqp_errcode(db), GQP_OK);
    cr_expect_str_eq(gqp_errmsg(db), "not an error");
    gqp_stmt *st;
    cr_expect_eq(gqp_prepare(db, "SELEC 1", -1, &st, NULL), GQP_ERROR);
    cr_expect_eq(gqp_errcode(db), GQP_ERROR);
    cr_expect_eq(gqp_extended_errcode(db), GQP_ERROR_PARSER);
    cr_expect_eq(gqp_prepare(db, "SELECT * FROM nosuch", -1, &st, NULL), GQP_ERROR);
    cr_expect_eq(gqp_extended_errcode(db), GQP_ERROR_CATALOG, "%s", gqp_errmsg(db));
    cr_expect_eq(gqp_errcode(NULL), GQP_NOMEM);
    gqp_close(db);
}

Test(errors, set_device_rejects_bad_values) {
    gqp *db = open_db();
    cr_expect_eq(gqp_set_device(db, (gqp_device)7), GQP_MISUSE);
    cr_expect_eq(gqp_errcode(db), GQP_MISUSE);
    cr_expect(strstr(gqp_errmsg(db), "gqp_set_device"), "%s", gqp_errmsg(db));
    cr_expect_eq(gqp_set_device(db, (gqp_device)-1), GQP_MISUSE);
    if (!gqp_gpu_available()) {
        cr_expect_eq(gqp_set_device(db, GQP_DEVICE_GPU), GQP_ERROR);
        cr_expect(strstr(gqp_errmsg(db), "Device Error"), "%s", gqp_errmsg(db));
    }
    /* the setting is unchanged: still the CPU */
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, "SELECT 1 + 1", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_expect_eq(gqp_gpu_nodes(st, NULL), 0);
    gqp_finalize(st);
    cr_expect_eq(gqp_set_threads(db, -3), GQP_MISUSE);
    cr_expect_eq(gqp_set_device(NULL, GQP_DEVICE_CPU), GQP_MISUSE);
    gqp_close(db);
}
