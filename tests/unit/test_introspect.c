/*
 * test_introspect.c -- EXPLAIN [ANALYZE] <stmt>, SHOW TABLES, DESCRIBE and
 * PRAGMA table_info as SQL statements through gqp_prepare / gqp_step, and
 * gqp_explain_stmt. Expected answers: DuckDB's DESCRIBE columns
 * (column_name, column_type, null, key, default, extra), column types
 * spelled as gqp's CREATE TABLE reads them back, EXPLAIN's rows the lines
 * of gqp_explain's text. (PRAGMA table_info against SQLite's own answers:
 * tests/sql/gen/introspection.sql.in.)
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gqp.h"

/* An empty handle on the CPU. */
static gqp *open_db(void) {
    gqp *db = NULL;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    cr_assert_eq(gqp_set_threads(db, 2), GQP_OK);
    return db;
}

/* Run every statement of sql, failing the test on any error. */
static void exec_all(gqp *db, const char *sql) {
    const char *p = sql;
    while (*p) {
        gqp_stmt *st = NULL;
        const char *tail = NULL;
        cr_assert_eq(gqp_prepare(db, p, -1, &st, &tail), GQP_OK, "%s", gqp_errmsg(db));
        if (!st) break;
        int rc;
        while ((rc = gqp_step(st)) == GQP_ROW)
            ;
        cr_assert_eq(rc, GQP_DONE, "%s", gqp_errmsg(db));
        gqp_finalize(st);
        p = tail;
    }
}

/* The rows of one statement as text: cells joined by '|', NULL as
 * "NULL", rows ended by '\n' (malloc'ed; the caller frees). */
static char *rows_of(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
    size_t cap = 1 << 16, len = 0;
    char *out = calloc(1, cap);
    int rc, n = gqp_column_count(st);
    while ((rc = gqp_step(st)) == GQP_ROW) {
        for (int c = 0; c < n; c++) {
            const char *t = gqp_column_text(st, c);
            len += (size_t)snprintf(out + len, cap - len, "%s%s", c ? "|" : "", t ? t : "NULL");
        }
        len += (size_t)snprintf(out + len, cap - len, "\n");
        cr_assert_lt(len, cap - 1);
    }
    cr_assert_eq(rc, GQP_DONE, "%s", gqp_errmsg(db));
    gqp_finalize(st);
    return out;
}

/* Assert that the rows of sql are exactly want. */
static void expect_rows(gqp *db, const char *sql, const char *want) {
    char *got = rows_of(db, sql);
    cr_assert_str_eq(got, want, "%s", sql);
    free(got);
}

Test(introspect, show_tables_sorted_with_views) {
    gqp *db = open_db();
    expect_rows(db, "SHOW TABLES", "");
    exec_all(db, "CREATE TABLE zeta(a INT); CREATE TABLE Alpha(b INT); CREATE TABLE beta(c INT);"
                 "CREATE VIEW gamma AS SELECT a FROM zeta");
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, "SHOW TABLES", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_column_count(st), 1);
    cr_assert_str_eq(gqp_column_name(st, 0), "name");
    cr_assert_eq(gqp_column_type(st, 0), GQP_TYPE_STRING);
    gqp_finalize(st);
    expect_rows(db, "SHOW TABLES", "Alpha\nbeta\ngamma\nzeta\n");
    /* a statement's materialized CTE (a temporary catalog table) is not
     * listed while that statement is open */
    gqp_stmt *cte = NULL;
    cr_assert_eq(
        gqp_prepare(db, "WITH w AS (SELECT b FROM Alpha) SELECT * FROM w, w AS w2", -1, &cte, NULL),
        GQP_OK, "%s", gqp_errmsg(db));
    expect_rows(db, "show tables;", "Alpha\nbeta\ngamma\nzeta\n");
    gqp_finalize(cte);
    exec_all(db, "DROP TABLE beta; DROP VIEW gamma");
    expect_rows(db, "SHOW TABLES", "Alpha\nzeta\n");
    gqp_close(db);
}

Test(introspect, describe_table) {
    gqp *db = open_db();
    exec_all(db, "CREATE TABLE t(a INTEGER NOT NULL, b VARCHAR(20), c REAL, d DATE, "
                 "e DECIMAL(15,2), f BOOLEAN, g INT32, h FLOAT32, i TEXT, j DECIMAL)");
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, "DESCRIBE t", -1, &st, NULL), GQP_OK);
    const char *names[] = {"column_name", "column_type", "null", "key", "default", "extra"};
    cr_assert_eq(gqp_column_count(st), 6);
    for (int c = 0; c < 6; c++) {
        cr_assert_str_eq(gqp_column_name(st, c), names[c]);
        cr_assert_eq(gqp_column_type(st, c), GQP_TYPE_STRING);
    }
    gqp_finalize(st);
    /* INTEGER and REAL are 64-bit in gqp (as in SQLite); NOT NULL is not
     * kept, so null is YES */
    const char *want = "a|BIGINT|YES|NULL|NULL|NULL\n"
                       "b|VARCHAR|YES|NULL|NULL|NULL\n"
                       "c|DOUBLE|YES|NULL|NULL|NULL\n"
                       "d|DATE|YES|NULL|NULL|NULL\n"
                       "e|DECIMAL(15,2)|YES|NULL|NULL|NULL\n"
                       "f|BOOLEAN|YES|NULL|NULL|NULL\n"
                       "g|INT32|YES|NULL|NULL|NULL\n"
                       "h|FLOAT32|YES|NULL|NULL|NULL\n"
                       "i|VARCHAR|YES|NULL|NULL|NULL\n"
                       "j|DECIMAL(18,3)|YES|NULL|NULL|NULL\n";
    expect_rows(db, "DESCRIBE t", want);
    expect_rows(db, "desc T", want);
    gqp_close(db);
}

Test(introspect, describe_types_round_trip) {
    /* every column_type DESCRIBE prints, given back to CREATE TABLE, makes
     * a column that DESCRIBE prints the same way */
    gqp *db = open_db();
    exec_all(db, "CREATE TABLE t(a INT32, b BIGINT, c FLOAT32, d DOUBLE, e DATE, f BOOLEAN, "
                 "g VARCHAR, h DECIMAL(9,4))");
    char *first = rows_of(db, "DESCRIBE t");
    char sql[1024] = "CREATE TABLE u(";
    for (char *line = first; *line;) {
        char *e = strchr(line, '\n');
        char *bar = strchr(line, '|'), *bar2 = strchr(bar + 1, '|');
        size_t l = strlen(sql);
        snprintf(sql + l, sizeof sql - l, "%s%.*s %.*s", l > 15 ? ", " : "", (int)(bar - line),
                 line, (int)(bar2 - bar - 1), bar + 1);
        line = e + 1;
    }
    strcat(sql, ")");
    exec_all(db, sql);
    expect_rows(db, "DESCRIBE u", first);
    free(first);
    gqp_close(db);
}

Test(introspect, describe_view_and_select) {
    gqp *db = open_db();
    exec_all(db, "CREATE TABLE t(a INT, b TEXT, e DECIMAL(15,2));"
                 "CREATE VIEW v(x, y) AS SELECT b, a * 2 FROM t");
    expect_rows(db, "DESCRIBE v", "x|VARCHAR|YES|NULL|NULL|NULL\ny|BIGINT|YES|NULL|NULL|NULL\n");
    expect_rows(db, "DESCRIBE SELECT a + 0.5 AS h, b, COUNT(*) FROM t GROUP BY a, b",
                "h|DOUBLE|YES|NULL|NULL|NULL\nb|VARCHAR|YES|NULL|NULL|NULL\n"
                "COUNT(*)|BIGINT|YES|NULL|NULL|NULL\n");
    expect_rows(db, "PRAGMA table_info(v)", "0|x|VARCHAR|0|NULL|0\n1|y|BIGINT|0|NULL|0\n");
    gqp_close(db);
}

Test(introspect, describe_missing_table_is_catalog_error) {
    gqp *db = open_db();
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, "DESCRIBE nosuch", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ERROR);
    cr_assert_eq(gqp_extended_errcode(db), GQP_ERROR_CATALOG);
    cr_assert(strstr(gqp_errmsg(db), "nosuch"), "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_error_offset(db), 9);
    gqp_finalize(st);
    /* PRAGMA table_info of a missing table: no rows, as in SQLite */
    expect_rows(db, "PRAGMA table_info(nosuch)", "");
    gqp_close(db);
}

Test(introspect, pragma_errors) {
    gqp *db = open_db();
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, "PRAGMA journal_mode", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ERROR);
    cr_assert_eq(gqp_extended_errcode(db), GQP_ERROR_NOTIMPL, "%s", gqp_errmsg(db));
    cr_assert(strstr(gqp_errmsg(db), "journal_mode"), "%s", gqp_errmsg(db));
    gqp_finalize(st);
    cr_assert_eq(gqp_prepare(db, "PRAGMA table_info", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ERROR);
    cr_assert(strstr(gqp_errmsg(db), "needs a table"), "%s", gqp_errmsg(db));
    gqp_finalize(st);
    const char *bad[] = {"PRAGMA table_info(",
                         "PRAGMA table_info(t",
                         "PRAGMA",
                         "SHOW",
                         "SHOW TABLE",
                         "SHOW ALL TABLES",
                         "DESCRIBE",
                         "DESCRIBE 1",
                         "EXPLAIN",
                         "EXPLAIN ANALYZE",
                         "EXPLAIN EXPLAIN SELECT 1",
                         "DESCRIBE t extra",
                         "SHOW TABLES x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        st = NULL;
        cr_assert_eq(gqp_prepare(db, bad[i], -1, &st, NULL), GQP_ERROR, "%s", bad[i]);
        cr_assert_eq(gqp_extended_errcode(db), GQP_ERROR_PARSER, "%s: %s", bad[i], gqp_errmsg(db));
        cr_assert_null(st);
    }
    gqp_close(db);
}

/* The lines of text as rows_of would print a one-column result. */
static void expect_lines_equal(const char *rows, const char *text) {
    size_t n = strlen(text);
    char *want = malloc(n + 2);
    memcpy(want, text, n + 1);
    if (n && want[n - 1] != '\n') strcat(want, "\n");
    cr_assert_str_eq(rows, want);
    free(want);
}

Test(introspect, explain_rows_are_gqp_explain_lines) {
    gqp *db = open_db();
    exec_all(db, "CREATE TABLE t(a INT, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')");
    const char *q = "SELECT b, SUM(a) FROM t WHERE a > 0 GROUP BY b ORDER BY b";
    char *text = NULL;
    cr_assert_eq(gqp_explain(db, q, -1, 0, &text), GQP_OK, "%s", gqp_errmsg(db));
    char sql[256];
    snprintf(sql, sizeof sql, "EXPLAIN %s", q);
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_column_count(st), 1);
    cr_assert_str_eq(gqp_column_name(st, 0), "explain");
    cr_assert_eq(gqp_column_type(st, 0), GQP_TYPE_STRING);
    gqp_finalize(st);
    char *rows = rows_of(db, sql);
    expect_lines_equal(rows, text);
    cr_assert(strstr(rows, "primitive DAG"));
    free(rows);
    gqp_free(text);
    /* ANALYZE runs the query: measured figures and the result's row count */
    snprintf(sql, sizeof sql, "EXPLAIN ANALYZE %s", q);
    rows = rows_of(db, sql);
    cr_assert(strstr(rows, "result rows: 2,"), "%s", rows);
    cr_assert(strstr(rows, "time="), "%s", rows);
    free(rows);
    /* a statement other than a SELECT cannot be explained */
    cr_assert_eq(gqp_prepare(db, "EXPLAIN INSERT INTO t VALUES (3, 'z')", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ERROR);
    cr_assert_eq(gqp_extended_errcode(db), GQP_ERROR_NOTIMPL, "%s", gqp_errmsg(db));
    gqp_finalize(st);
    expect_rows(db, "SELECT COUNT(*) FROM t", "2\n");
    /* an error inside the explained statement is its own */
    cr_assert_eq(gqp_prepare(db, "EXPLAIN SELECT nosuch FROM t", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ERROR);
    cr_assert_eq(gqp_extended_errcode(db), GQP_ERROR_BINDER, "%s", gqp_errmsg(db));
    gqp_finalize(st);
    gqp_close(db);
}

Test(introspect, results_reset_and_rerun) {
    gqp *db = open_db();
    exec_all(db, "CREATE TABLE a(x INT)");
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, "SHOW TABLES", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_assert_eq(gqp_result_rows(st), 1);
    cr_assert_str_eq(gqp_column_text(st, 0), "a");
    cr_assert_eq(gqp_step(st), GQP_DONE);
    exec_all(db, "CREATE TABLE b(x INT)");
    /* a reset statement reads the catalog again */
    gqp_reset(st);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_assert_str_eq(gqp_column_text(st, 0), "b");
    const int32_t *codes = gqp_result_column(st, 0, NULL);
    cr_assert_str_eq(gqp_result_string(st, 0, codes[0]), "a");
    cr_assert_eq(gqp_step(st), GQP_DONE);
    gqp_finalize(st);
    /* PRAGMA's integer columns */
    cr_assert_eq(gqp_prepare(db, "PRAGMA table_info(b)", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_column_type(st, 0), GQP_TYPE_INT64);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_assert_eq(gqp_column_int64(st, 0), 0);
    cr_assert(gqp_column_is_null(st, 4));
    cr_assert_eq(gqp_step(st), GQP_DONE);
    gqp_finalize(st);
    gqp_close(db);
}

Test(introspect, explain_stmt) {
    gqp *db = open_db();
    exec_all(db, "CREATE TABLE t(a INT)");
    gqp_stmt *st = NULL;
    char *out = (char *)1;
    /* not a query: nothing to show, nothing done */
    cr_assert_eq(gqp_prepare(db, "INSERT INTO t VALUES (1)", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_explain_stmt(st, 0, &out), GQP_OK);
    cr_assert_null(out);
    gqp_finalize(st);
    expect_rows(db, "SELECT COUNT(*) FROM t", "0\n");
    /* a query prepared before the table changed is planned again */
    cr_assert_eq(gqp_prepare(db, "SELECT a FROM t", -1, &st, NULL), GQP_OK);
    exec_all(db, "INSERT INTO t VALUES (1), (2), (3)");
    cr_assert_eq(gqp_explain_stmt(st, 0, &out), GQP_OK, "%s", gqp_errmsg(db));
    cr_assert(strstr(out, "est_rows=3"), "%s", out);
    gqp_free(out);
    cr_assert_eq(gqp_explain_stmt(st, GQP_EXPLAIN_ANALYZE, &out), GQP_OK, "%s", gqp_errmsg(db));
    cr_assert(strstr(out, "result rows: 3,"), "%s", out);
    gqp_free(out);
    cr_assert_eq(gqp_explain_stmt(NULL, 0, &out), GQP_MISUSE);
    gqp_finalize(st);
    /* an EXPLAIN statement: its SELECT's plan (ANALYZE: run) */
    cr_assert_eq(gqp_prepare(db, "EXPLAIN ANALYZE SELECT a FROM t", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_explain_stmt(st, 0, &out), GQP_OK, "%s", gqp_errmsg(db));
    cr_assert(strstr(out, "result rows: 3,"), "%s", out);
    gqp_free(out);
    gqp_finalize(st);
    gqp_close(db);
}

Test(introspect, bindings_reach_the_explained_query) {
    gqp *db = open_db();
    exec_all(db, "CREATE TABLE t(a INT, b TEXT); INSERT INTO t VALUES (1, 'x'), (5, 'y')");
    gqp_stmt *st = NULL;
    cr_assert_eq(
        gqp_prepare(db, "EXPLAIN ANALYZE SELECT a FROM t WHERE a > ? AND b <> :s", -1, &st, NULL),
        GQP_OK, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_bind_parameter_count(st), 2);
    cr_assert_eq(gqp_bind_int64(st, 1, 3), GQP_OK);
    cr_assert_eq(gqp_bind_text(st, gqp_bind_parameter_index(st, ":s"), "z", -1), GQP_OK);
    int found_filter = 0, found_rows = 0, rc;
    while ((rc = gqp_step(st)) == GQP_ROW) {
        const char *line = gqp_column_text(st, 0);
        found_filter |= strstr(line, "t.a > 3") != NULL;
        found_rows |= strstr(line, "result rows: 1,") != NULL;
    }
    cr_assert_eq(rc, GQP_DONE, "%s", gqp_errmsg(db));
    cr_assert(found_filter && found_rows);
    gqp_finalize(st);
    /* DESCRIBE SELECT ?: typed by the bound value */
    cr_assert_eq(gqp_prepare(db, "DESCRIBE SELECT ? AS p, a FROM t", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_bind_text(st, 1, "hi", -1), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_assert_str_eq(gqp_column_text(st, 1), "VARCHAR");
    gqp_reset(st);
    cr_assert_eq(gqp_bind_double(st, 1, 1.5), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_assert_str_eq(gqp_column_text(st, 1), "DOUBLE");
    gqp_finalize(st);
    gqp_close(db);
}
