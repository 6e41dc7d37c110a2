/*
 * test_api.c -- the public API of include/gqp.h beyond plain queries:
 * threads (one shared handle, and a handle per thread), bind parameters,
 * gqp_interrupt, error codes, gqp_set_device's checks.
 *
 * The thread workload lives in api_threads.c, which tests/tsan.sh also runs
 * under ThreadSanitizer (through tests/tsan/thread_stress.c: Criterion
 * cannot run under TSan). Length: GQP_TEST_THREAD_ITERS rounds per thread
 * (default 200), or with GQP_TEST_THREAD_SECONDS set, that many seconds.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gqp.h"
#include "primitives/primitives.h"
#include "tests/unit/api_threads.h"

#define NTHREADS 8

/* Opens an empty handle on the CPU with 2 worker threads. */
static gqp *open_db(void) {
    gqp *db = NULL;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    cr_assert_eq(gqp_set_threads(db, 2), GQP_OK);
    return db;
}

#define run_sql api_run_sql

/* Creates the tables of api_make_tables in db. */
static void make_t(gqp *db) {
    cr_assert_eq(api_make_tables(db), GQP_OK, "%s", gqp_errmsg(db));
}

/* Rounds per thread: GQP_TEST_THREAD_ITERS (default 200); with
 * GQP_TEST_THREAD_SECONDS set, as many as fit in that many seconds. */
static void stress(gqp *shared) {
    const char *e = getenv("GQP_TEST_THREAD_ITERS");
    const char *secs = getenv("GQP_TEST_THREAD_SECONDS");
    char msg[600] = "";
    int rounds = 0;
    int f = api_thread_stress(shared, NTHREADS, e && atoi(e) > 0 ? atoi(e) : 200,
                              secs ? atof(secs) : 0, &rounds, msg, sizeof msg);
    cr_expect_eq(f, 0, "%d failed checks, last: %s", f, msg);
    cr_log_info("%s handle: %d threads, %d rounds", shared ? "shared" : "own", NTHREADS, rounds);
}

Test(threads, shared_handle) {
    gqp *db = open_db();
    make_t(db);
    stress(db);
    gqp_close(db);
}

Test(threads, handle_per_thread) {
    stress(NULL);
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

Test(interrupt, stops_a_running_query) {
    gqp *db = open_db();
    char msg[600] = "";
    cr_expect_eq(api_interrupt_check(db, msg, sizeof msg), 0, "%s", msg);
    gqp_interrupt(NULL); /* a no-op */
    gqp_close(db);
}

/* Host allocator for the primitive calls below (64-byte aligned). */
static void *t_alloc(void *ud, size_t bytes) {
    (void)ud;
    return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
}

static void t_free(void *ud, void *p) {
    (void)ud;
    free(p);
}

/* The CPU map (and the fused select, which runs it per share) stop within
 * a morsel when the interrupt flag is set, and run normally when not. */
Test(interrupt, cpu_map_and_select_stop_at_a_morsel) {
    const int64_t n = (int64_t)1 << 22;
    int64_t *a = malloc(sizeof(int64_t) * (size_t)n);
    uint8_t *flags = malloc((size_t)n);
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)n);
    cr_assert(a && flags && rows);
    for (int64_t i = 0; i < n; i++)
        a[i] = i;
    static const PrimInstr code[] = {{POP_COL, PRIM_REG_I, 0, 0, 0, 0, 0, 0, NULL, 0},
                                     {POP_CONST, PRIM_REG_I, 1, 0, 0, 0, 10, 0, NULL, 0},
                                     {POP_GT, PRIM_REG_I, 2, 0, 1, 0, 0, 0, NULL, 0}};
    PrimProgram map = {3, code, 3, 2, PRIM_REG_I, 1, 0, 0},
                sel = {3, code, 3, 2, PRIM_REG_I, 1, 1, 0};
    PrimVec in = {PRIM_I64, n, a, NULL}, out = {PRIM_U8, n, flags, NULL};
    int stop = 1;
    PrimCtx ctx = {2, NULL, t_alloc, t_free, NULL, {0}, &stop, NULL};
    int64_t count = -1;
    cr_expect_eq(prim_cpu_map(&ctx, &map, &in, n, &out), -1);
    cr_expect(strstr(ctx.err, "Interrupted"), "%s", ctx.err);
    ctx.err[0] = 0;
    cr_expect_eq(prim_cpu_select(&ctx, &sel, &in, n, rows, &count), -1);
    cr_expect(strstr(ctx.err, "Interrupted"), "%s", ctx.err);
    stop = 0;
    cr_expect_eq(prim_cpu_map(&ctx, &map, &in, n, &out), 0, "%s", ctx.err);
    cr_expect_eq(flags[10], 0);
    cr_expect_eq(flags[n - 1], 1);
    cr_expect_eq(prim_cpu_select(&ctx, &sel, &in, n, rows, &count), 0, "%s", ctx.err);
    cr_expect_eq(count, n - 11);
    free(a);
    free(flags);
    free(rows);
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

Test(bind, column_type_follows_the_plan) {
    gqp *db = open_db();
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, "SELECT ?", -1, &st, NULL), GQP_OK);
    gqp_bind_text(st, 1, "x", -1);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_expect_eq(gqp_column_type(st, 0), GQP_TYPE_STRING);
    gqp_reset(st);
    gqp_bind_int64(st, 1, 7);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_expect_eq(gqp_column_type(st, 0), GQP_TYPE_INT64);
    cr_expect_eq(gqp_column_int64(st, 0), 7);
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

/* Every row of "SELECT k, s, x FROM d ORDER BY x" as one text line per
 * row ("k|s|x"), for comparing a table before and after a statement. */
static char *dump_d(gqp *db) {
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, "SELECT k, s, x FROM d ORDER BY x", -1, &st, NULL), GQP_OK, "%s",
                 gqp_errmsg(db));
    size_t cap = 4096, len = 0;
    char *out = calloc(1, cap);
    int rc;
    while ((rc = gqp_step(st)) == GQP_ROW) {
        for (int c = 0; c < 3; c++) { /* a column's text lives until the next call */
            const char *v = gqp_column_text(st, c);
            len +=
                (size_t)snprintf(out + len, cap - len, "%s%s", v ? v : "NULL", c < 2 ? "|" : "\n");
            cr_assert_lt(len, cap);
        }
    }
    cr_assert_eq(rc, GQP_DONE, "%s", gqp_errmsg(db));
    gqp_finalize(st);
    return out;
}

Test(dml, failing_update_changes_nothing) {
    gqp *db = open_db();
    cr_assert_eq(run_sql(db, "CREATE TABLE d(k INTEGER, s TEXT, x DOUBLE)"), GQP_OK);
    cr_assert_eq(run_sql(db, "INSERT INTO d VALUES (1, 'a', 1.0), (2, 'b', 2.0), (NULL, 'c', 3.0),"
                             " (4, NULL, 4.0)"),
                 GQP_OK, "%s", gqp_errmsg(db));
    /* a row INSERTed alone: its string is appended to the dictionary */
    cr_assert_eq(run_sql(db, "INSERT INTO d VALUES (5, 'aa', 5.0)"), GQP_OK);
    cr_assert_eq(run_sql(db, "CREATE UNIQUE INDEX dk ON d(k)"), GQP_OK, "%s", gqp_errmsg(db));
    char *before = dump_d(db);
    /* the UNIQUE violation comes after both the string and the key column
     * were computed: neither may change */
    cr_assert_eq(run_sql(db, "UPDATE d SET s = 'new', k = 7 WHERE x > 1.5"), GQP_ERROR);
    cr_expect_eq(gqp_extended_errcode(db), GQP_ERROR_CONSTRAINT, "%s", gqp_errmsg(db));
    cr_expect(strstr(gqp_errmsg(db), "UNIQUE constraint failed: d.k") != NULL, "%s",
              gqp_errmsg(db));
    char *after = dump_d(db);
    cr_expect_str_eq(after, before);
    free(after);
    /* a value that cannot be stored (text into an INTEGER column) in the
     * last matching row only */
    cr_assert_eq(run_sql(db, "UPDATE d SET s = 'z', k = CASE WHEN x > 4.5 THEN 'text' ELSE x END"),
                 GQP_ERROR);
    after = dump_d(db);
    cr_expect_str_eq(after, before);
    free(after);
    /* an error while evaluating the SET expression (integer overflow) */
    cr_assert_eq(run_sql(db, "UPDATE d SET s = 'q', k = k + 9223372036854775807 WHERE k > 0"),
                 GQP_ERROR);
    after = dump_d(db);
    cr_expect_str_eq(after, before);
    free(after);
    /* gqp checks UNIQUE on the statement's end state: a permutation of
     * the keys is accepted (SQLite checks row by row and may reject it;
     * see docs/sql.md) */
    cr_assert_eq(run_sql(db, "UPDATE d SET k = 6 - k WHERE k IN (1, 2, 4, 5)"), GQP_OK, "%s",
                 gqp_errmsg(db));
    after = dump_d(db);
    cr_expect_str_eq(after, "5|a|1.0\n4|b|2.0\nNULL|c|3.0\n2|NULL|4.0\n1|aa|5.0\n");
    free(after);
    free(before);
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

/* A GQP_* environment setting gqp_open does not understand fails the open
 * with a Config Error naming the variable and what it expects (before,
 * GQP_DEVICE=gpuu ran under auto without a word); valid values and empty
 * ones still open. */
Test(errors, bad_environment_settings_fail_the_open) {
    const char *cases[][3] = {{"GQP_DEVICE", "gpuu", "cpu, gpu or auto"},
                              {"GQP_AGGREGATE", "hash", "sort, dense or auto"},
                              {"GQP_CHUNK_ROWS", "12x", "a row count"},
                              {"GQP_CHUNK_ROWS", "-5", "a row count"},
                              {"GQP_CHUNK_CLUSTER", "yes", "off, auto or on"},
                              {"GQP_MAPPED", "always", "off, auto or on"},
                              {"GQP_CLUSTER_BYTES", "4GB", "a byte count"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *old = getenv(cases[i][0]);
        char *keep = old ? strdup(old) : NULL;
        setenv(cases[i][0], cases[i][1], 1);
        gqp *db = NULL;
        cr_expect_eq(gqp_open(NULL, &db), GQP_ERROR, "%s=%s", cases[i][0], cases[i][1]);
        cr_assert_not_null(db);
        const char *m = gqp_errmsg(db);
        cr_expect(strstr(m, "Config Error") && strstr(m, cases[i][0]) && strstr(m, cases[i][1]) &&
                      strstr(m, cases[i][2]),
                  "%s", m);
        gqp_close(db);
        setenv(cases[i][0], "", 1); /* empty: the default */
        cr_expect_eq(gqp_open(NULL, &db), GQP_OK, "%s empty: %s", cases[i][0], gqp_errmsg(db));
        gqp_close(db);
        if (keep)
            setenv(cases[i][0], keep, 1);
        else
            unsetenv(cases[i][0]);
        free(keep);
    }
    setenv("GQP_AGGREGATE", "Dense", 1); /* case does not matter */
    gqp *db = NULL;
    cr_expect_eq(gqp_open(NULL, &db), GQP_OK, "%s", gqp_errmsg(db));
    gqp_close(db);
    unsetenv("GQP_AGGREGATE");
}

/* ---------------------------------------------- dates over a column -- */

/* Days in month m of year y (the test's own calendar). */
static int test_mdays(int y, int m) {
    static const int md[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return md[m - 1] + (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
}

/* EXTRACT and date +/- INTERVAL over a DATE column (map arithmetic and
 * month lookups) against a plain calendar walk, for every day of
 * 1895..2105 and some far dates: DuckDB's month rule clamps the day. */
Test(dates, column_extract_and_month_intervals_match_a_calendar) {
    gqp *db = open_db();
    cr_assert_eq(run_sql(db, "CREATE TABLE cal(d DATE)"), GQP_OK, "%s", gqp_errmsg(db));
    size_t cap = (size_t)4 << 20, len = 0;
    char *sql = malloc(cap);
    cr_assert_not_null(sql);
    len += (size_t)snprintf(sql, cap, "INSERT INTO cal VALUES (NULL)");
    int far[][3] = {{1, 1, 1}, {4, 2, 29}, {400, 12, 31}, {1600, 2, 29}, {9998, 1, 31}};
    for (size_t k = 0; k < sizeof far / sizeof far[0]; k++)
        len += (size_t)snprintf(sql + len, cap - len, ",(DATE '%04d-%02d-%02d')", far[k][0],
                                far[k][1], far[k][2]);
    for (int y = 1895; y <= 2105; y++)
        for (int m = 1; m <= 12; m++)
            for (int d = 1; d <= test_mdays(y, m); d++)
                len += (size_t)snprintf(sql + len, cap - len, ",(DATE '%04d-%02d-%02d')", y, m, d);
    cr_assert_eq(run_sql(db, sql), GQP_OK, "%s", gqp_errmsg(db));
    free(sql);
    static const int deltas[] = {1, -1, 13, -25, 120};
    for (size_t k = 0; k < sizeof deltas / sizeof deltas[0]; k++) {
        int n = deltas[k];
        char q[300];
        snprintf(q, sizeof q,
                 "SELECT CAST(d AS TEXT), EXTRACT(YEAR FROM d), EXTRACT(MONTH FROM d), "
                 "EXTRACT(DAY FROM d), CAST(d + INTERVAL '%d' MONTH AS TEXT), "
                 "CAST(d - INTERVAL '%d' DAY AS TEXT) FROM cal",
                 n, n);
        gqp_stmt *st = NULL;
        cr_assert_eq(gqp_prepare(db, q, -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
        int64_t rows = 0, bad = 0;
        while (gqp_step(st) == GQP_ROW) {
            rows++;
            const char *t = gqp_column_text(st, 0);
            if (!t) {
                for (int c = 1; c < 6; c++)
                    bad += gqp_column_text(st, c) != NULL;
                continue;
            }
            int y, m, d;
            cr_assert_eq(sscanf(t, "%d-%d-%d", &y, &m, &d), 3, "%s", t);
            bad += gqp_column_int64(st, 1) != y || gqp_column_int64(st, 2) != m ||
                   gqp_column_int64(st, 3) != d;
            int mi = y * 12 + (m - 1) + n, ny = mi / 12, nm = mi % 12 + 1;
            /* mi < 0 is past the DATE range (checked below): no calendar day */
            int nd = mi < 0 ? 1 : d > test_mdays(ny, nm) ? test_mdays(ny, nm) : d;
            char want[32];
            snprintf(want, sizeof want, "%04d-%02d-%02d", ny, nm, nd);
            const char *got = gqp_column_text(st, 4);
            if (mi < 0 || ny > 9999) { /* past the DATE range: NULL (docs/sql.md) */
                bad += got != NULL;
            } else if (!got || strcmp(got, want) != 0) {
                if (bad < 5) cr_log_error("%s + %d months: %s, want %s", t, n, got, want);
                bad++;
            }
            /* d - n days: walk the calendar */
            int yy = y, mm = m, dd = d;
            for (int s = 0; s < (n < 0 ? -n : n); s++) {
                if (n > 0) {
                    if (--dd == 0) {
                        if (--mm == 0) mm = 12, yy--;
                        dd = test_mdays(yy, mm);
                    }
                } else if (++dd > test_mdays(yy, mm)) {
                    dd = 1;
                    if (++mm == 13) mm = 1, yy++;
                }
            }
            snprintf(want, sizeof want, "%04d-%02d-%02d", yy, mm, dd);
            got = gqp_column_text(st, 5);
            bad += !got || strcmp(got, want) != 0;
        }
        cr_expect_eq(bad, 0, "%lld wrong values of %lld rows (%d months)", (long long)bad,
                     (long long)rows, n);
        cr_expect_gt(rows, 77000);
        gqp_finalize(st);
    }
    gqp_close(db);
}

/* ------------------------------------------------- chunked execution -- */

/* Every row of sql's result as text ("a|b\n" per row), malloc'ed. */
static char *rows_text(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s: %s", sql, gqp_errmsg(db));
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    cr_assert(out);
    out[0] = '\0';
    int rc;
    while ((rc = gqp_step(st)) == GQP_ROW) {
        for (int c = 0; c < gqp_column_count(st); c++) {
            const char *v = gqp_column_is_null(st, c) ? "NULL" : gqp_column_text(st, c);
            size_t n = strlen(v) + 2;
            while (len + n + 1 > cap)
                cr_assert((out = realloc(out, cap *= 2)));
            len += (size_t)snprintf(out + len, cap - len, "%s%s", v,
                                    c + 1 < gqp_column_count(st) ? "|" : "\n");
        }
    }
    cr_assert_eq(rc, GQP_DONE, "%s: %s", sql, gqp_errmsg(db));
    gqp_finalize(st);
    return out;
}

/* SET chunk_rows = N runs a SELECT as partial plans over chunks of its
 * largest table merged by a final plan (libgqp/chunk.c): the answers are
 * those of the whole run, for aggregates (AVG, COUNT, MIN/MAX of text,
 * HAVING, ORDER BY an aggregate), plain rows with ORDER BY + LIMIT and
 * DISTINCT, and a join; EXPLAIN ANALYZE says how it ran. */
Test(chunked, answers_equal_the_whole_run) {
    gqp *db = open_db();
    cr_assert_eq(run_sql(db, "CREATE TABLE t (g INTEGER, v INTEGER, r REAL, s TEXT)"), GQP_OK, "%s",
                 gqp_errmsg(db));
    cr_assert_eq(run_sql(db, "CREATE TABLE d (g INTEGER, name TEXT)"), GQP_OK, "%s",
                 gqp_errmsg(db));
    cr_assert_eq(
        run_sql(db, "INSERT INTO d VALUES (0, 'zero'), (1, 'one'), (2, 'two'), (3, 'three')"),
        GQP_OK, "%s", gqp_errmsg(db));
    gqp_stmt *ins;
    cr_assert_eq(gqp_prepare(db, "INSERT INTO t VALUES (?, ?, ?, ?)", -1, &ins, NULL), GQP_OK);
    for (int i = 0; i < 5000; i++) {
        char s[32];
        snprintf(s, sizeof s, "s%03d", (i * 7919) % 613);
        gqp_bind_int64(ins, 1, i % 5);
        if (i % 11 == 0)
            gqp_bind_null(ins, 2);
        else
            gqp_bind_int64(ins, 2, (i * 31) % 1000 - 300);
        gqp_bind_double(ins, 3, i * 0.25);
        gqp_bind_text(ins, 4, s, -1);
        cr_assert_eq(gqp_step(ins), GQP_DONE, "%s", gqp_errmsg(db));
        gqp_reset(ins);
    }
    gqp_finalize(ins);
    const char *qs[] = {
        "SELECT g, COUNT(*), COUNT(v), SUM(v), AVG(v), MIN(s), MAX(s), TOTAL(r) FROM t "
        "GROUP BY g ORDER BY g",
        "SELECT COUNT(*), AVG(v) + 1, MIN(v), MAX(r) FROM t WHERE v > 100",
        "SELECT s, SUM(v) FROM t GROUP BY s HAVING COUNT(*) > 8 ORDER BY SUM(v) DESC, s LIMIT 7",
        "SELECT v, s FROM t WHERE v IS NOT NULL ORDER BY v DESC, s LIMIT 10 OFFSET 3",
        "SELECT DISTINCT g, s FROM t WHERE v < -290 ORDER BY s, g",
        "SELECT d.name, COUNT(*), AVG(t.r) FROM t, d WHERE t.g = d.g GROUP BY d.name ORDER BY 1",
        "SELECT COUNT(*) FROM t WHERE v > 5000",
        "SELECT g, COUNT(DISTINCT v), SUM(DISTINCT v), COUNT(*), COUNT(DISTINCT s) FROM t "
        "GROUP BY g ORDER BY g",
    };
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        cr_assert_eq(run_sql(db, "SET chunk_rows = 0"), GQP_OK, "%s", gqp_errmsg(db));
        char *whole = rows_text(db, qs[k]);
        cr_assert_eq(run_sql(db, "SET chunk_rows = 700"), GQP_OK, "%s", gqp_errmsg(db));
        char *chunked = rows_text(db, qs[k]);
        cr_expect_str_eq(chunked, whole, "%s", qs[k]);
        free(whole);
        free(chunked);
    }
    char *plan = NULL;
    cr_assert_eq(gqp_explain(db, qs[0], -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s",
                 gqp_errmsg(db));
    cr_expect(strstr(plan, "chunked execution: t in 8 chunks of up to 700 rows"), "%s", plan);
    gqp_free(plan);
    /* a DISTINCT aggregate runs in chunks (its argument a partial group
     * key); MEDIAN does not */
    cr_assert_eq(gqp_explain(db, "SELECT COUNT(DISTINCT v) FROM t", -1, 0, &plan), GQP_OK);
    cr_expect(strstr(plan, "runs in chunks: t in chunks of 700 rows"), "%s", plan);
    gqp_free(plan);
    cr_assert_eq(gqp_explain(db, "SELECT MEDIAN(v) FROM t", -1, 0, &plan), GQP_OK);
    cr_expect(strstr(plan, "runs whole (not chunked: MEDIAN, QUANTILE or group_concat)"), "%s",
              plan);
    gqp_free(plan);
    gqp_stmt *st;
    /* a second table sorted on the join key is cut with the chunks (its
     * key range per chunk); once an INSERT leaves it unsorted it is read
     * whole, with the same answers */
    cr_assert_eq(run_sql(db, "CREATE TABLE o (g INTEGER, w INTEGER)"), GQP_OK, "%s",
                 gqp_errmsg(db));
    cr_assert_eq(run_sql(db, "CREATE TABLE so (g INTEGER, v INTEGER)"), GQP_OK, "%s",
                 gqp_errmsg(db));
    cr_assert_eq(run_sql(db, "INSERT INTO so SELECT g, v FROM t ORDER BY g, v"), GQP_OK, "%s",
                 gqp_errmsg(db));
    cr_assert_eq(run_sql(db, "INSERT INTO o VALUES (0, 5), (1, 6), (1, 7), (3, 8), (4, 9)"), GQP_OK,
                 "%s", gqp_errmsg(db));
    const char *jq = "SELECT so.g, o.w, COUNT(*), SUM(so.v) FROM so, o WHERE so.g = o.g "
                     "GROUP BY so.g, o.w ORDER BY 1, 2";
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(run_sql(db, "SET chunk_rows = 0"), GQP_OK, "%s", gqp_errmsg(db));
        char *whole = rows_text(db, jq);
        cr_assert_eq(run_sql(db, "SET chunk_rows = 700"), GQP_OK, "%s", gqp_errmsg(db));
        char *chunked = rows_text(db, jq);
        cr_expect_str_eq(chunked, whole, "round %d", round);
        cr_assert_eq(gqp_explain(db, jq, -1, GQP_EXPLAIN_ANALYZE, &plan), GQP_OK, "%s",
                     gqp_errmsg(db));
        /* its group key so.g is sorted too: chunks end where it changes
         * (1,000 rows per value), every group whole in one chunk */
        cr_expect(strstr(plan, "chunked execution: so in 5 chunks of about 700 rows") != NULL, "%s",
                  plan);
        cr_expect(strstr(plan, "chunks end where g changes") != NULL, "%s", plan);
        cr_expect((strstr(plan, "with it o by g") != NULL) == (round == 0), "round %d: %s", round,
                  plan);
        gqp_free(plan);
        free(whole);
        free(chunked);
        cr_assert_eq(run_sql(db, "INSERT INTO o VALUES (2, 10)"), GQP_OK, "%s", gqp_errmsg(db));
    }
    cr_expect_eq(gqp_prepare(db, "SET chunk_rows = -1", -1, &st, NULL), GQP_OK);
    cr_expect_eq(gqp_step(st), GQP_ERROR);
    cr_expect(strstr(gqp_errmsg(db), "chunk_rows must not be negative"), "%s", gqp_errmsg(db));
    gqp_finalize(st);
    gqp_close(db);
}
