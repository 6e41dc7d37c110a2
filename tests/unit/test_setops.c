/*
 * test_setops.c -- compound SELECTs (UNION [ALL] / INTERSECT / EXCEPT,
 * issue 10): the parser's chain and its errors, EXPLAIN showing the
 * lowering, and the GPU twin of every node they use (concat with and
 * without NULLs, the tagged sort + segmented reduce) against the CPU. The
 * answers themselves are checked against SQLite in tests/sql/setops.test.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gqp.h"
#include "sqlfront/sqlfront.h"

/* Parses sql (one SELECT); the AST lives in *arena (caller frees). */
static AstSelect *parse_sel(SqlArena **arena, const char *sql) {
    *arena = sql_arena_new();
    cr_assert_not_null(*arena);
    AstStmt *st = NULL;
    int64_t next;
    SqlError err;
    cr_assert_eq(sql_parse_one(sql, (int64_t)strlen(sql), 0, *arena, &st, &next, &err), 0, "%s: %s",
                 sql, err.msg);
    cr_assert(st && st->kind == STMT_SELECT);
    return st->select;
}

Test(setops, parse_chain_left_to_right) {
    SqlArena *a;
    const char *sql = "SELECT a FROM t UNION ALL SELECT b FROM u WHERE b > 1 INTERSECT "
                      "SELECT c FROM v GROUP BY c EXCEPT SELECT 1 UNION SELECT 2 ORDER BY 1 DESC "
                      "LIMIT 3 OFFSET 1";
    AstSelect *s = parse_sel(&a, sql);
    cr_assert_eq(s->ncompound, 4);
    cr_expect_eq(s->compound[0].op, SETOP_UNION_ALL);
    cr_expect_eq(s->compound[1].op, SETOP_INTERSECT);
    cr_expect_eq(s->compound[2].op, SETOP_EXCEPT);
    cr_expect_eq(s->compound[3].op, SETOP_UNION);
    cr_expect_eq(s->compound[0].pos, (int64_t)(strstr(sql, "UNION ALL") - sql));
    cr_expect_not_null(s->compound[0].select->where);
    cr_expect_eq(s->compound[1].select->ngroup, 1);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(s->compound[i].select->norder, 0);
        cr_expect_null(s->compound[i].select->limit);
        cr_expect_eq(s->compound[i].select->ncompound, 0);
    }
    /* ORDER BY / LIMIT belong to the compound (kept on the first SELECT) */
    cr_expect_eq(s->norder, 1);
    cr_expect_eq(s->order_by[0].desc, 1);
    cr_expect_not_null(s->limit);
    cr_expect_not_null(s->offset);
    sql_arena_free(a);
}

/* sql must fail to parse with message want at the offset of `at` in sql. */
static void parse_error(const char *sql, const char *want, const char *at) {
    SqlArena *a = sql_arena_new();
    AstStmt *st = NULL;
    int64_t next;
    SqlError err;
    cr_assert_eq(sql_parse_one(sql, (int64_t)strlen(sql), 0, a, &st, &next, &err), -1, "%s", sql);
    cr_expect_str_eq(err.msg, want, "%s", sql);
    cr_expect_eq(err.offset, (int64_t)(strstr(sql, at) - sql), "%s", sql);
    sql_arena_free(a);
}

Test(setops, order_or_limit_before_the_operator) {
    parse_error("SELECT a FROM t ORDER BY a UNION SELECT b FROM u",
                "ORDER BY clause should come after UNION not before", "UNION");
    parse_error("SELECT a FROM t LIMIT 1 UNION ALL SELECT b FROM u",
                "LIMIT clause should come after UNION ALL not before", "UNION");
    parse_error("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1 EXCEPT SELECT 1",
                "ORDER BY clause should come after EXCEPT not before", "EXCEPT");
    parse_error("SELECT a FROM t UNION SELECT b FROM u LIMIT 2 INTERSECT SELECT 1",
                "LIMIT clause should come after INTERSECT not before", "INTERSECT");
    parse_error("SELECT 1 UNION VALUES (2)", "VALUES in a compound SELECT is not supported",
                "VALUES");
}

/* Runs every statement of script on db; asserts that each succeeds. */
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

static const char *const setup =
    "CREATE TABLE p(a INTEGER, s TEXT, r REAL);"
    "INSERT INTO p VALUES (1, 'x', 1.5), (2, 'y', 2.5), (3, 'z', 3.5), (2, 'y', 2.5);"
    "CREATE TABLE q(a INTEGER, s TEXT, r REAL);"
    "INSERT INTO q VALUES (NULL, NULL, NULL), (2, 'y', NULL), (4, 'w', 4.5), (NULL, NULL, NULL),"
    " (3, 'z', 3.5);";

/* A handle on device dev with tables p (no NULLs) and q (NULLs). */
static gqp *open_db(gqp_device dev) {
    gqp *db = NULL;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, dev), GQP_OK, "%s", gqp_errmsg(db));
    run_ok(db, setup);
    return db;
}

/* All rows of sql as text, one "v|v|...\n" line per row (NULL as "N"),
 * malloc'ed. */
static char *rows_text(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s: %s", sql, gqp_errmsg(db));
    size_t cap = 4096, len = 0;
    char *buf = calloc(1, cap);
    cr_assert_not_null(buf);
    int rc;
    while ((rc = gqp_step(st)) == GQP_ROW) {
        for (int c = 0; c < gqp_column_count(st); c++) {
            const char *v = gqp_column_text(st, c);
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", c ? "|" : "", v ? v : "N");
            cr_assert_lt(len, cap - 64);
        }
        len += (size_t)snprintf(buf + len, cap - len, "\n");
    }
    cr_assert_eq(rc, GQP_DONE, "%s: %s", sql, gqp_errmsg(db));
    gqp_finalize(st);
    return buf;
}

static const char *const queries[] = {
    "SELECT a, s, r FROM p UNION ALL SELECT a, s, r FROM q ORDER BY 1, 2, 3",
    "SELECT a, s, r FROM q UNION ALL SELECT a, s, r FROM p ORDER BY 1, 2, 3",
    "SELECT a, s, r FROM p UNION SELECT a, s, r FROM q ORDER BY 1, 2, 3",
    "SELECT a, s, r FROM p INTERSECT SELECT a, s, r FROM q ORDER BY 1",
    "SELECT a, s FROM q EXCEPT SELECT a, s FROM p ORDER BY 1",
    "SELECT a FROM p UNION SELECT r FROM q ORDER BY 1 DESC LIMIT 3 OFFSET 1",
    "SELECT s FROM p UNION ALL SELECT s FROM q UNION SELECT 'v' ORDER BY s",
};

/* The expected answers of queries[] (SQLite's, with reals as gqp prints
 * them). */
static const char *const want[] = {
    "N|N|N\nN|N|N\n1|x|1.5\n2|y|N\n2|y|2.5\n2|y|2.5\n3|z|3.5\n3|z|3.5\n4|w|4.5\n",
    "N|N|N\nN|N|N\n1|x|1.5\n2|y|N\n2|y|2.5\n2|y|2.5\n3|z|3.5\n3|z|3.5\n4|w|4.5\n",
    "N|N|N\n1|x|1.5\n2|y|N\n2|y|2.5\n3|z|3.5\n4|w|4.5\n",
    "3|z|3.5\n",
    "N|N\n4|w\n",
    "3.5\n3.0\n2.0\n", /* SQLite: 3.5, 3, 2 (a REAL column, docs/sql.md) */
    "N\nv\nw\nx\ny\nz\n",
};

/* queries[] on device dev give want[]. */
static void answers(gqp_device dev) {
    gqp *db = open_db(dev);
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
        char *got = rows_text(db, queries[i]);
        cr_expect_str_eq(got, want[i], "%s", queries[i]);
        free(got);
    }
    gqp_close(db);
}

Test(setops, answers_cpu) {
    answers(GQP_DEVICE_CPU);
}

Test(setops, answers_gpu_equal_cpu) {
    if (!gqp_gpu_available()) cr_skip_test("no CUDA device");
    answers(GQP_DEVICE_GPU);
}

Test(setops, explain_shows_the_lowering) {
    gqp *db = open_db(GQP_DEVICE_CPU);
    char *out = NULL;
    const char *sql = "SELECT a FROM p INTERSECT SELECT a FROM q UNION SELECT 7 ORDER BY 1";
    cr_assert_eq(gqp_explain(db, sql, -1, 0, &out), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect(strstr(out, "concat") != NULL, "%s", out);
    cr_expect(strstr(out, "intersect") != NULL, "%s", out);
    cr_expect(strstr(out, "segmented-reduce") != NULL, "%s", out);
    cr_expect(strstr(out, "segments") != NULL, "%s", out);
    gqp_free(out);
    gqp_close(db);
}

Test(setops, binder_errors) {
    gqp *db = open_db(GQP_DEVICE_CPU);
    gqp_stmt *st = NULL;
    cr_expect_neq(gqp_prepare(db, "SELECT a, s FROM p UNION SELECT a FROM q", -1, &st, NULL),
                  GQP_OK);
    cr_expect(strstr(gqp_errmsg(db), "Binder Error: SELECTs to the left and right of UNION do "
                                     "not have the same number of result columns") != NULL,
              "%s", gqp_errmsg(db));
    cr_expect_neq(gqp_prepare(db, "SELECT a FROM p UNION SELECT s FROM q", -1, &st, NULL), GQP_OK);
    cr_expect(strstr(gqp_errmsg(db), "mixes STRING and numeric") != NULL, "%s", gqp_errmsg(db));
    cr_expect_neq(
        gqp_prepare(db, "SELECT a FROM p EXCEPT SELECT a FROM q ORDER BY zz", -1, &st, NULL),
        GQP_OK);
    cr_expect(strstr(gqp_errmsg(db),
                     "1st ORDER BY term does not match any column in the result set") != NULL,
              "%s", gqp_errmsg(db));
    gqp_close(db);
}
