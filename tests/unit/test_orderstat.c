/*
 * test_orderstat.c -- the plans of the order statistics (MEDIAN /
 * QUANTILE_CONT / QUANTILE_DISC, operators/quantile.c) and group_concat
 * (operators/groupconcat.c): which nodes they lower to. Their answers are
 * tested against DuckDB and SQLite in tests/sql/quantiles.test and
 * tests/sql/functions2.test.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gqp.h"

/* Runs statement sql on db to completion; returns the last step's code. */
static int run(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    if (rc != GQP_OK) return rc;
    while ((rc = gqp_step(st)) == GQP_ROW)
        ;
    gqp_finalize(st);
    return rc;
}

/* A database with t(g INTEGER, x INTEGER, y REAL, s TEXT) of a few rows. */
static gqp *open_db(void) {
    gqp *db = NULL;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(run(db, "CREATE TABLE t(g INTEGER, x INTEGER, y REAL, s TEXT)"), GQP_DONE, "%s",
                 gqp_errmsg(db));
    cr_assert_eq(run(db, "INSERT INTO t VALUES (1, 5, 1.5, 'a'), (1, NULL, 2.5, 'b'), "
                         "(2, 7, NULL, NULL), (2, 1, 0.5, 'c'), (3, NULL, NULL, 'd')"),
                 GQP_DONE, "%s", gqp_errmsg(db));
    return db;
}

/* Number of lines of EXPLAIN text x that define (not "see above") a node
 * whose line contains word. */
static int count_nodes(const char *x, const char *word) {
    int n = 0;
    for (const char *l = x; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)len, l);
        if (strstr(line, word) && !strstr(line, "see above")) n++;
        l = e ? e + 1 : NULL;
    }
    return n;
}

/* EXPLAIN text of sql (caller frees). */
static char *explain(gqp *db, const char *sql) {
    char *out = NULL;
    cr_assert_eq(gqp_explain(db, sql, -1, 0, &out), GQP_OK, "%s", gqp_errmsg(db));
    return out;
}

Test(orderstat, statistics_of_one_argument_share_a_sort) {
    gqp *db = open_db();
    /* the group-key sort, one sort for x (MEDIAN and QUANTILE_DISC), one
     * for y */
    char *x = explain(db, "SELECT g, MEDIAN(x), QUANTILE_DISC(x, 0.9), QUANTILE_CONT(y, 0.1) "
                          "FROM t GROUP BY g");
    cr_expect_eq(count_nodes(x, " sort ["), 3, "%s", x);
    free(x);
    /* without GROUP BY: one sort per argument */
    x = explain(db, "SELECT MEDIAN(x), QUANTILE_CONT(x, 0.25), MEDIAN(y) FROM t");
    cr_expect_eq(count_nodes(x, " sort ["), 2, "%s", x);
    free(x);
    gqp_close(db);
}

Test(orderstat, dense_plan_declines_order_statistics_and_group_concat) {
    gqp *db = open_db();
    cr_assert_eq(run(db, "SET aggregate = 'dense'"), GQP_DONE, "%s", gqp_errmsg(db));
    char *x = explain(db, "SELECT g, SUM(x) FROM t GROUP BY g");
    cr_expect_eq(count_nodes(x, "dense-aggregate"), 1, "the dense plan applies: %s", x);
    free(x);
    const char *q[] = {"SELECT g, SUM(x), MEDIAN(x) FROM t GROUP BY g",
                       "SELECT g, SUM(x), QUANTILE_DISC(x, 0.5) FROM t GROUP BY g",
                       "SELECT g, SUM(x), group_concat(s) FROM t GROUP BY g"};
    for (size_t k = 0; k < sizeof q / sizeof q[0]; k++) {
        x = explain(db, q[k]);
        cr_expect_eq(count_nodes(x, "dense-aggregate"), 0, "%s: %s", q[k], x);
        free(x);
    }
    gqp_close(db);
}

Test(orderstat, group_concat_is_a_cpu_to_text_node) {
    gqp *db = open_db();
    char *x = explain(db, "SELECT g, group_concat(s, ';') FROM t GROUP BY g");
    cr_expect_eq(count_nodes(x, "to-text [cpu] group_concat"), 1, "%s", x);
    free(x);
    gqp_close(db);
}

/* ORDER BY ... LIMIT / OFFSET: the sort keeps the range's rows itself (no
 * slice node), and the select list's columns that are not keys are
 * gathered for those rows only (after the sort), so the plan has no
 * gather of the whole table; without a LIMIT the sort orders every row. */
Test(orderstat, order_by_limit_sorts_a_range_and_gathers_after) {
    gqp *db = open_db();
    char *x = explain(db, "SELECT s, g FROM t WHERE g > 1 ORDER BY x DESC LIMIT 2 OFFSET 1");
    cr_expect_eq(count_nodes(x, "rows [1, 3) of the order"), 1, "%s", x);
    cr_expect_eq(count_nodes(x, " slice ["), 0, "%s", x);
    /* s and g: gathered through the filter's row ids composed with the
     * sort's range (the sort, that composition and the two gathers: 2
     * rows each); only the key x is gathered for the 3 filtered rows */
    cr_expect_eq(count_nodes(x, "est_rows=2 "), 4, "%s", x);
    cr_expect_eq(count_nodes(x, "est_rows=3 "), 2, "%s", x);
    free(x);
    x = explain(db, "SELECT s FROM t ORDER BY x LIMIT -1 OFFSET 3");
    cr_expect_eq(count_nodes(x, "rows [3, end) of the order"), 1, "%s", x);
    free(x);
    x = explain(db, "SELECT s FROM t ORDER BY x");
    cr_expect_eq(count_nodes(x, "of the order"), 0, "%s", x);
    free(x);
    gqp_close(db);
}
