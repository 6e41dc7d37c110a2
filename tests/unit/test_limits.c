/*
 * test_limits.c -- long and deep expressions through the whole library
 * (issue 13 items 3, 5 and 6): 10^5-term AND / OR chains and IN lists
 * plan and run (in linear time), trees deeper than SQL_MAX_EXPR_DEPTH fail
 * with the parser's error instead of overflowing the stack, and the
 * deepest trees the parser accepts bind, plan, lower, explain and run
 * within the default 8 MB stack (also under ASan, whose frames are
 * bigger). The SQL text is generated here; each case runs well under a
 * second in a release build.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gqp.h"
#include "sqlfront/sqlfront.h"

/* Terms of the long AND chain: 100,000, scaled down under sanitizers (the
 * tree's height, what the stack sees, differs by two levels). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AND_TERMS 30000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define AND_TERMS 30000
#endif
#endif
#ifndef AND_TERMS
#define AND_TERMS 100000
#endif

/* A growable string. */
typedef struct Str {
    char *s;
    size_t n, cap;
} Str;

/* Appends printf-formatted text to b (asserting on allocation failure). */
static void put(Str *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    cr_assert_geq(k, 0);
    if (b->n + (size_t)k + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + (size_t)k + 1)
            cap *= 2;
        b->s = realloc(b->s, cap);
        cr_assert_not_null(b->s);
        b->cap = cap;
    }
    vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap2);
    va_end(ap2);
    b->n += (size_t)k;
}

/* Appends s repeated n times. */
static void rep(Str *b, const char *s, int n) {
    for (int i = 0; i < n; i++)
        put(b, "%s", s);
}

/* Opens an empty handle with t(a INTEGER, s TEXT) = (1,'x'), (7,'y'),
 * (NULL, NULL), running on the CPU. */
static gqp *open_db(void) {
    gqp *db = NULL;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    const char *setup[] = {"CREATE TABLE t(a INTEGER, s TEXT)",
                           "INSERT INTO t VALUES (1, 'x'), (7, 'y'), (NULL, NULL)"};
    for (int i = 0; i < 2; i++) {
        gqp_stmt *st = NULL;
        cr_assert_eq(gqp_prepare(db, setup[i], -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
        cr_assert_eq(gqp_step(st), GQP_DONE, "%s", gqp_errmsg(db));
        gqp_finalize(st);
    }
    return db;
}

/* Runs sql, which must succeed with one row; returns its first column as
 * an integer (-999 for NULL). */
static int64_t one_int(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%.200s: %s", sql, gqp_errmsg(db));
    cr_assert_eq(gqp_step(st), GQP_ROW, "%.200s: %s", sql, gqp_errmsg(db));
    int64_t v = gqp_column_is_null(st, 0) ? -999 : gqp_column_int64(st, 0);
    cr_assert_eq(gqp_step(st), GQP_DONE, "%s", gqp_errmsg(db));
    gqp_finalize(st);
    return v;
}

/* Asserts that sql fails (at prepare or at the first step) with the parser's
 * depth-limit error pointing into the text. */
static void too_deep(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    if (rc == GQP_OK) {
        rc = gqp_step(st);
        gqp_finalize(st);
    }
    cr_assert_neq(rc, GQP_OK);
    cr_assert_neq(rc, GQP_ROW);
    const char *m = gqp_errmsg(db);
    cr_assert(strstr(m, "Parser Error: Expression tree is too large (maximum depth 1000)") != NULL,
              "%.300s", m);
    cr_assert(strstr(m, "LINE 1:") != NULL, "%.300s", m);
    cr_assert_geq(gqp_error_offset(db), 7);
    cr_assert_lt(gqp_error_offset(db), (int64_t)strlen(sql));
}

Test(limits, long_and_chain_plans_and_runs) {
    gqp *db = open_db();
    Str q = {0};
    put(&q, "SELECT COUNT(*) FROM t WHERE a > 0");
    for (int k = 1; k < AND_TERMS; k++)
        put(&q, k % 2 ? " AND a > -%d" : " AND s <> 'z%d'", k);
    cr_expect_eq(one_int(db, q.s), 2);
    char *plan = NULL;
    cr_assert_eq(gqp_explain(db, q.s, -1, 0, &plan), GQP_OK, "%s", gqp_errmsg(db));
    gqp_free(plan);
    free(q.s);
    gqp_close(db);
}

Test(limits, long_or_chain_plans_and_runs) {
    gqp *db = open_db();
    Str q = {0};
    put(&q, "SELECT COUNT(*) FROM t WHERE a = 0");
    for (int k = 1; k < 50000; k++)
        put(&q, " OR a = %d", k);
    cr_expect_eq(one_int(db, q.s), 2);
    free(q.s);
    /* NOT over the chain, with a NULL term: a NULL row stays out */
    Str n = {0};
    put(&n, "SELECT COUNT(*) FROM t WHERE NOT (a = NULL");
    for (int k = 2; k < 50000; k++)
        put(&n, " OR a = %d", k);
    put(&n, ")");
    cr_expect_eq(one_int(db, n.s), 0);
    free(n.s);
    gqp_close(db);
}

Test(limits, long_in_lists) {
    gqp *db = open_db();
    /* integers: 1 and 7 are in, a NULL row never is */
    Str list = {0};
    put(&list, "-1");
    for (int k = 0; k < 60000; k++)
        put(&list, ", %d", k * 3 + 1);
    Str q = {0};
    put(&q, "SELECT COUNT(*) FROM t WHERE a IN (%s)", list.s);
    cr_expect_eq(one_int(db, q.s), 2);
    Str nq = {0};
    put(&nq, "SELECT COUNT(*) FROM t WHERE a NOT IN (%s)", list.s);
    cr_expect_eq(one_int(db, nq.s), 0);
    Str v = {0};
    put(&v, "SELECT SUM(a IN (%s)) FROM t", list.s);
    cr_expect_eq(one_int(db, v.s), 2);
    free(v.s);
    free(nq.s);
    free(q.s);
    free(list.s);
    /* strings, most of them absent from the column's dictionary */
    Str s = {0};
    put(&s, "SELECT COUNT(*) FROM t WHERE s IN ('y'");
    for (int k = 0; k < 60000; k++)
        put(&s, ", 'v%d'", k);
    put(&s, ")");
    cr_expect_eq(one_int(db, s.s), 1);
    free(s.s);
    /* the list's NULL: no match gives NULL, so NOT IN keeps nothing */
    Str m = {0};
    put(&m, "SELECT COUNT(*) FROM t WHERE a NOT IN (NULL");
    for (int k = 0; k < 20000; k++)
        put(&m, ", %d.5", k);
    put(&m, ")");
    cr_expect_eq(one_int(db, m.s), 0);
    free(m.s);
    /* a non-constant member: a balanced chain of = and OR */
    Str c = {0};
    put(&c, "SELECT COUNT(*) FROM t WHERE a IN (a + 1");
    for (int k = 0; k < 20000; k++)
        put(&c, ", %d", 7 + k * 2);
    put(&c, ")");
    cr_expect_eq(one_int(db, c.s), 1);
    free(c.s);
    gqp_close(db);
}

Test(limits, deeper_than_the_limit_is_a_parser_error) {
    gqp *db = open_db();
    Str q = {0};
    put(&q, "SELECT 1");
    rep(&q, "+1", 70000);
    too_deep(db, q.s);
    free(q.s);

    Str p = {0};
    put(&p, "SELECT ");
    rep(&p, "(", 100000);
    put(&p, "1");
    rep(&p, ")", 100000);
    too_deep(db, p.s);
    free(p.s);

    Str u = {0};
    put(&u, "SELECT ");
    rep(&u, "- ", 100000);
    put(&u, "1");
    too_deep(db, u.s);
    free(u.s);

    Str n = {0};
    put(&n, "SELECT a FROM t WHERE ");
    rep(&n, "NOT ", 100000);
    put(&n, "a");
    too_deep(db, n.s);
    free(n.s);

    Str c = {0};
    put(&c, "SELECT ");
    rep(&c, "CASE WHEN a > 0 THEN ", 2000);
    put(&c, "1");
    rep(&c, " END", 2000);
    put(&c, " FROM t");
    too_deep(db, c.s);
    free(c.s);

    /* a flat CASE / COALESCE binds to one node per arm: counted as depth */
    Str w = {0};
    put(&w, "SELECT CASE a");
    for (int k = 0; k < 5000; k++)
        put(&w, " WHEN %d THEN %d", k, k);
    put(&w, " END FROM t");
    too_deep(db, w.s);
    free(w.s);
    Str k = {0};
    put(&k, "SELECT COALESCE(a");
    rep(&k, ", a", 5000);
    put(&k, ") FROM t");
    too_deep(db, k.s);
    free(k.s);

    /* parenthesized FROM lists recurse too */
    Str f = {0};
    put(&f, "SELECT a FROM ");
    rep(&f, "(", 100000);
    put(&f, "t");
    rep(&f, ")", 100000);
    too_deep(db, f.s);
    free(f.s);

    /* operands the binder uses twice or more: the expanded size is bounded */
    const char *dup[] = {" NOT BETWEEN -1 AND 0) + 1", " IN (1, 2, 3)) + 1", ") + ABS(a)"};
    const char *head[] = {"(", "(", "ABS("};
    for (int d = 0; d < 3; d++) {
        Str x = {0};
        put(&x, "SELECT a FROM t WHERE ");
        rep(&x, head[d], 200);
        put(&x, "a");
        rep(&x, dup[d], 200);
        put(&x, " > 0");
        gqp_stmt *st = NULL;
        cr_assert_neq(gqp_prepare(db, x.s, -1, &st, NULL), GQP_OK);
        cr_assert(strstr(gqp_errmsg(db), "Parser Error: Expression tree is too large (more than "
                                         "1000000 nodes when expanded)") != NULL,
                  "%.300s", gqp_errmsg(db));
        free(x.s);
    }

    /* a long chain inside a deep one: heights add up */
    Str m = {0};
    put(&m, "SELECT ");
    rep(&m, "-(1+", 300);
    put(&m, "1");
    for (int i = 0; i < 300; i++)
        put(&m, "+1+1)");
    too_deep(db, m.s);
    free(m.s);
    gqp_close(db);
}

/* Runs sql (which must succeed with one row) and its EXPLAIN. */
static int64_t run_and_explain(gqp *db, const char *sql) {
    int64_t v = one_int(db, sql);
    char *plan = NULL;
    cr_assert_eq(gqp_explain(db, sql, -1, 0, &plan), GQP_OK, "%s", gqp_errmsg(db));
    gqp_free(plan);
    return v;
}

Test(limits, deepest_accepted_trees_run_within_the_stack) {
    gqp *db = open_db();
    /* 999 terms: height 1000, SQLite's limit too */
    Str q = {0};
    put(&q, "SELECT 1");
    rep(&q, "+1", 998);
    cr_expect_eq(one_int(db, q.s), 999);
    free(q.s);

    /* a column chain under a comparison and an aggregate */
    Str a = {0};
    put(&a, "SELECT SUM(a");
    rep(&a, "+a", 996);
    put(&a, ") FROM t WHERE a");
    rep(&a, "+a", 997);
    put(&a, " > 0");
    cr_expect_eq(run_and_explain(db, a.s), 997 * 8);
    free(a.s);

    /* nested NOT: 990 deep */
    Str n = {0};
    put(&n, "SELECT COUNT(*) FROM t WHERE ");
    rep(&n, "NOT ", 990);
    put(&n, "a > 3");
    cr_expect_eq(run_and_explain(db, n.s), 1);
    free(n.s);

    /* nested CASE, 2 levels each (nested in ELSE: the register program
     * holds a constant number of registers for that shape, while 32 levels
     * nested in THEN already need more than 64, a Planner Error) */
    Str c = {0};
    put(&c, "SELECT SUM(");
    rep(&c, "CASE WHEN a > 100 THEN 0 ELSE ", 480);
    put(&c, "a");
    rep(&c, " END", 480);
    put(&c, ") FROM t");
    cr_expect_eq(run_and_explain(db, c.s), 8);
    free(c.s);

    /* nested comparisons and float arithmetic in parentheses: each level
     * is <, a CAST and + when bound, deeper than the AST */
    Str b = {0};
    put(&b, "SELECT COUNT(*) FROM t WHERE ");
    rep(&b, "(", 490);
    put(&b, "a");
    rep(&b, " < 1.5) + 0.5", 490);
    put(&b, " > 0");
    cr_expect_eq(run_and_explain(db, b.s), 2);
    free(b.s);

    /* BETWEEN binds its operand twice: 16 nested levels expand to 2^16
     * copies and run; 480 would be 2^480, refused by the parser */
    Str e = {0};
    put(&e, "SELECT COUNT(*) FROM t WHERE ");
    rep(&e, "(", 16);
    put(&e, "a");
    rep(&e, " NOT BETWEEN -1 AND 0) + 1", 16);
    put(&e, " > 0");
    cr_expect_eq(run_and_explain(db, e.s), 2);
    free(e.s);
    gqp_close(db);
}

Test(limits, parser_heights) {
    /* the AST records heights; AND chains are balanced */
    const char *sql = "SELECT a FROM t WHERE a = 1 AND b = 2 AND c = 3 AND d = 4 AND e = 5";
    SqlArena *ar = sql_arena_new();
    AstStmt *st = NULL;
    int64_t next;
    SqlError err;
    cr_assert_eq(sql_parse_one(sql, (int64_t)strlen(sql), 0, ar, &st, &next, &err), 0, "%s",
                 err.msg);
    cr_expect_eq(st->select->where->height, 2 + 3, "5 terms: 3 levels of AND over height 2");
    cr_expect_eq(st->select->where->op, OP_AND);
    sql_arena_free(ar);
}
