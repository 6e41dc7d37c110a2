/*
 * test_subquery.c -- derived tables, CTEs and views (issue 10): EXPLAIN
 * lists the materialized subplans, prepared statements re-materialize
 * after a table changes, and no temporary table outlives its statement.
 * The answers themselves are checked against SQLite in
 * tests/sql/subqueries.test.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gqp.h"

/* Run every statement of script, asserting success. */
static void run_ok(gqp *db, const char *script) {
    const char *p = script;
    while (p && *p) {
        gqp_stmt *st = NULL;
        const char *tail = NULL;
        cr_assert_eq(gqp_prepare(db, p, -1, &st, &tail), GQP_OK, "%s: %s", p, gqp_errmsg(db));
        if (!st) break;
        int rc;
        while ((rc = gqp_step(st)) == GQP_ROW)
            ;
        cr_assert_eq(rc, GQP_DONE, "%s: %s", p, gqp_errmsg(db));
        gqp_finalize(st);
        p = tail;
    }
}

static gqp *open_db(void) {
    gqp *db = NULL;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK, "%s", gqp_errmsg(db));
    run_ok(db, "CREATE TABLE t(a INTEGER, b INTEGER); "
               "INSERT INTO t VALUES (1, 10), (2, 20), (2, NULL), (3, 30)");
    return db;
}

/* The single integer of sql's single row. */
static long long one_int(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s: %s", sql, gqp_errmsg(db));
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s: %s", sql, gqp_errmsg(db));
    long long v = gqp_column_int64(st, 0);
    gqp_finalize(st);
    return v;
}

Test(subquery, explain_lists_materialized_plans) {
    gqp *db = open_db();
    run_ok(db, "CREATE VIEW v AS SELECT a FROM t WHERE b > 10");
    char *out = NULL;
    const char *sql = "WITH c AS (SELECT a, SUM(b) AS s FROM t GROUP BY a) "
                      "SELECT * FROM c, (SELECT a AS z FROM v) d WHERE c.a = d.z";
    cr_assert_eq(gqp_explain(db, sql, -1, 0, &out), GQP_OK, "%s", gqp_errmsg(db));
    /* a CTE reference and a derived table are planned inline, into the
     * outer DAG; a view is materialized */
    cr_expect(strstr(out, "materialized CTE c") == NULL, "%s", out);
    cr_expect(strstr(out, "materialized derived table d") == NULL, "%s", out);
    cr_expect(strstr(out, "result 2 \"z\"") != NULL, "%s", out);
    cr_expect(strstr(out, "materialized view v") != NULL, "%s", out);
    gqp_free(out);
    out = NULL;
    sql = "SELECT a FROM t WHERE a IN (SELECT a FROM v) AND EXISTS (SELECT 1 FROM t)";
    cr_assert_eq(gqp_explain(db, sql, -1, 0, &out), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect(strstr(out, "ran the IN subquery") != NULL, "%s", out);
    cr_expect(strstr(out, "ran the EXISTS subquery") != NULL, "%s", out);
    gqp_free(out);
    gqp_close(db);
}

Test(subquery, prepared_statement_sees_new_rows) {
    gqp *db = open_db();
    gqp_stmt *st = NULL;
    const char *sql = "SELECT COUNT(*) FROM (SELECT a FROM t WHERE a > 1) d";
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
    run_ok(db, "INSERT INTO t VALUES (5, 50)");
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s", gqp_errmsg(db));
    cr_expect_eq(gqp_column_int64(st, 0), 4);
    gqp_finalize(st);
    gqp_close(db);
}

Test(subquery, temporaries_are_dropped) {
    gqp *db = open_db();
    cr_expect_eq(one_int(db, "SELECT COUNT(*) FROM (SELECT * FROM (SELECT a FROM t) x) y"), 4);
    /* the temporaries of the statement above are gone: the first one's name is free */
    run_ok(db, "CREATE TABLE __gqp_temp_1(a INTEGER)");
    run_ok(db, "CREATE TABLE __gqp_temp_2(a INTEGER)");
    gqp_close(db);
}

/* the correlated forms decorrelation does not handle (decorrelate.c) */
Test(subquery, correlated_is_an_error_at_the_column) {
    gqp *db = open_db();
    run_ok(db, "CREATE TABLE u(x INTEGER, y INTEGER); INSERT INTO u VALUES (1, 1), (2, NULL)");
    static const char *const bad[] = {
        /* correlated to a grand-parent query */
        "SELECT a FROM t WHERE a IN (SELECT x FROM u WHERE x IN (SELECT a FROM u WHERE y = t.b))",
        /* an IN whose subquery is grouped (correlation under OR over an
         * outer column with NULLs, a magic set over two outer tables,
         * HAVING, GROUP BY and ORDER BY are decorrelated:
         * tests/sql/gen/correlated.sql.in) */
        "SELECT a FROM t WHERE NOT (a = 1 OR b IN (SELECT MAX(x) FROM u WHERE u.y = t.a GROUP BY "
        "x))",
    };
    /* (NOT IN, IN anywhere, EXISTS under OR / in the select list and
     * EXISTS over an aggregate are decorrelated:
     * tests/sql/gen/correlated.sql.in) */
    /* more correlated subqueries in one WHERE than derived tables it may gain (64) */
    char many[4096] = "SELECT a FROM t WHERE 1";
    for (int k = 0; k < 65; k++)
        strcat(many, " AND EXISTS (SELECT 1 FROM u WHERE u.x = t.a)");
    gqp_stmt *mst = NULL;
    cr_expect_neq(gqp_prepare(db, many, -1, &mst, NULL), GQP_OK);
    cr_expect(strstr(gqp_errmsg(db), "Not implemented Error: correlated subquery") != NULL, "%s",
              gqp_errmsg(db));
    gqp_finalize(mst);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gqp_stmt *st = NULL;
        cr_expect_neq(gqp_prepare(db, bad[i], -1, &st, NULL), GQP_OK, "%s", bad[i]);
        cr_expect(strstr(gqp_errmsg(db), "Not implemented Error: correlated subquery") != NULL,
                  "%s: %s", bad[i], gqp_errmsg(db));
        gqp_finalize(st);
    }
    /* under OR over outer columns without NULLs (t.a) it is decorrelated
     * (the magic set); SUM(a) and COUNT(*) from sqlite3: 5, 2 */
    cr_expect_eq(one_int(db, "SELECT SUM(a) FROM t WHERE b > (SELECT MAX(x) FROM u WHERE x < a "
                             "OR a IS NULL)"),
                 5);
    cr_expect_eq(one_int(db, "SELECT COUNT(*) FROM t WHERE b > (SELECT MAX(x) FROM u WHERE x < a "
                             "OR a IS NULL)"),
                 2);
    /* an unknown column that resolves nowhere stays a Binder Error */
    gqp_stmt *st = NULL;
    cr_expect_neq(gqp_prepare(db, "SELECT a FROM t WHERE a IN (SELECT nope FROM u)", -1, &st, NULL),
                  GQP_OK);
    cr_expect(strstr(gqp_errmsg(db), "Binder Error") != NULL, "%s", gqp_errmsg(db));
    gqp_close(db);
}

Test(subquery, prepared_subquery_reruns) {
    gqp *db = open_db();
    gqp_stmt *st = NULL;
    const char *sql = "SELECT COUNT(*) FROM t WHERE b = (SELECT MAX(b) FROM t)";
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
    run_ok(db, "INSERT INTO t VALUES (7, 70), (8, 70)");
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s", gqp_errmsg(db));
    cr_expect_eq(gqp_column_int64(st, 0), 2);
    gqp_finalize(st);
    gqp_close(db);
}
