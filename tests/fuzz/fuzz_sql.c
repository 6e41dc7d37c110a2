/*
 * fuzz_sql.c -- libFuzzer harness for the SQL front end, binder, planner and
 * executor through the public API (gqp_prepare / gqp_step / the column
 * accessors), on a small in-memory database created by SQL: three tables
 * with NULLs, INT64 extremes, reals, strings (empty, repeated, UTF-8) and
 * dates.
 *
 * The input is a SQL script (any bytes); every statement of it is prepared
 * and stepped to the end, results are read through every accessor. Every
 * input sees the same database, built by the set-up script: the handle is
 * reused, and rebuilt after an input that may change it (one holding
 * INSERT, CREATE or SET), so DDL/DML are fuzzed too and every crash
 * reproduces from its input alone. Errors are expected and ignored; only crashes,
 * sanitizer reports, leaks and timeouts are findings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gqp.h"

/* The fixed schema and rows every input runs against. */
static const char *SETUP =
    "CREATE TABLE t(i INTEGER, r REAL, s TEXT, d DATE, b SMALLINT);"
    "INSERT INTO t VALUES (1, 1.5, 'a', DATE '2020-01-05', 1), (2, NULL, 'bb', NULL, 0),"
    " (NULL, -0.0, '', DATE '1970-01-01', NULL), (9223372036854775807, 1e308, 'a', "
    "DATE '1999-12-31', 32767), (-9223372036854775808, -1e-308, NULL, DATE '2038-01-19', -32768),"
    " (0, 0.0, 'é', DATE '2000-02-29', 2), (2, 3.25, 'bb', DATE '2020-01-05', 2);"
    "CREATE TABLE u(k INTEGER, v TEXT, w REAL);"
    "INSERT INTO u VALUES (1, 'x', 2.0), (2, NULL, NULL), (2, 'y', -1.0), (NULL, 'x', 0.5);"
    "CREATE TABLE e(a INTEGER, z TEXT);";

/* Prepare and step every statement of sql[0..n); read every column. */
static void run_script(gqp *db, const char *sql, int64_t n) {
    const char *p = sql, *end = sql + n;
    while (p < end) {
        gqp_stmt *st = NULL;
        const char *tail = NULL;
        int rc = gqp_prepare(db, p, end - p, &st, &tail);
        if (rc != GQP_OK || st == NULL) {
            gqp_finalize(st);
            break; /* the tail is unknown after an error */
        }
        {
            int ncol = gqp_column_count(st);
            for (int c = 0; c < ncol; c++) {
                (void)gqp_column_name(st, c);
                (void)gqp_column_type(st, c);
            }
            int64_t rows = 0;
            while ((rc = gqp_step(st)) == GQP_ROW && rows < 100000) {
                for (int c = 0; c < ncol; c++) {
                    (void)gqp_column_is_null(st, c);
                    (void)gqp_column_int64(st, c);
                    (void)gqp_column_double(st, c);
                    (void)gqp_column_text(st, c);
                }
                rows++;
            }
            gqp_finalize(st);
        }
        if (tail == NULL || tail <= p || tail > end) break;
        p = tail;
    }
}

/* True if the input may change the database or its settings (then the
 * handle is rebuilt after it, so every input sees the same state). */
static int changes_state(const char *sql) {
    static const char *words[] = {"insert", "create", "set"};
    for (const char *p = sql; *p; p++)
        for (int w = 0; w < 3; w++) {
            size_t i = 0;
            while (words[w][i] && (p[i] | 0x20) == words[w][i])
                i++;
            if (!words[w][i]) return 1;
        }
    return 0;
}

static gqp *db;

/* A fresh handle with the set-up tables, CPU placement, one thread. */
static gqp *fresh_db(void) {
    gqp *h = NULL;
    if (gqp_open(NULL, &h) != GQP_OK) abort();
    gqp_set_device(h, GQP_DEVICE_CPU);
    gqp_set_threads(h, 1);
    run_script(h, SETUP, (int64_t)strlen(SETUP));
    return h;
}

/* libFuzzer hook: run one input as a SQL script (NUL-terminated copy). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0; /* long inputs only probe the known recursion limits */
    char *sql = malloc(size + 1);
    if (!sql) return 0;
    memcpy(sql, data, size);
    sql[size] = 0;
    if (!db) db = fresh_db();
    run_script(db, sql, (int64_t)size);
    if (changes_state(sql)) {
        gqp_close(db);
        db = fresh_db();
    }
    free(sql);
    return 0;
}
