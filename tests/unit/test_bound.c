/*
 * test_bound.c -- unit tests of operators/bound.c (issue 12): the value
 * bounds that let SUM and map arithmetic skip their int64 overflow checks.
 * The bound analysis must prove what column statistics allow and refuse
 * everything else (unknown columns, stale statistics, an overflow hidden
 * inside a MOD or a CASE condition); EXPLAIN shows the proof; a sum the
 * proof refuses still fails with "integer overflow" in both plans.
 *
 * Expected bounds are worked out here from the inserted values.
 */
#include "catalog/catalog.h"
#include "include/gqp.h"
#include "operators/operators.h"
#include "planner/bexpr.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A table t(a BIGINT, b BIGINT, f REAL) with the given a / b values
 * (n rows, f = 0.5), statistics computed. */
static CatTable *make_table(Catalog *c, const int64_t *a, const int64_t *b, int n) {
    static const char *names[] = {"a", "b", "f"};
    static const CatType types[] = {CAT_INT64, CAT_INT64, CAT_FLOAT64};
    CatError e;
    cr_assert_eq(cat_create_table(c, "t", 3, names, types, &e), 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "t");
    CatValue *v = calloc((size_t)n * 3, sizeof *v);
    cr_assert_not_null(v);
    for (int i = 0; i < n; i++) {
        v[3 * i] = (CatValue){.kind = CAT_V_INT, .i = a[i]};
        v[3 * i + 1] = (CatValue){.kind = CAT_V_INT, .i = b[i]};
        v[3 * i + 2] = (CatValue){.kind = CAT_V_FLOAT, .f = 0.5};
    }
    cr_assert_eq(cat_insert_rows(t, n, v, &e), 0, "%s", e.msg);
    free(v);
    cr_assert_eq(cat_table_ready(t), 0);
    return t;
}

static BExpr nodes[64];
static int nnodes;

/* A fresh bound-expression node (static pool, reset per test). */
static BExpr *node(BExprKind k, CatType t) {
    cr_assert(nnodes < 64);
    BExpr *e = &nodes[nnodes++];
    memset(e, 0, sizeof *e);
    e->kind = k;
    e->type = t;
    return e;
}

static BExpr *col(int c, CatType t) {
    BExpr *e = node(BE_COL, t);
    e->slot = 0;
    e->col = c;
    return e;
}

static BExpr *cst(int64_t v) {
    BExpr *e = node(BE_CONST, CAT_INT64);
    e->ival = v;
    return e;
}

static BExpr *bin(AstOp op, CatType t, BExpr *a, BExpr *b) {
    BExpr *e = node(BE_BINARY, t);
    e->op = op;
    e->a = a;
    e->b = b;
    return e;
}

/* A LowState of one joined slot over t. */
static LowState state_of(const CatTable *t, LowSlot *slot) {
    memset(slot, 0, sizeof *slot);
    slot->table = t;
    slot->ncols = t->ncols;
    slot->joined = 1;
    slot->rowids = -1;
    LowState st = {1, slot, -1, t->nrows};
    return st;
}

Test(bound, proves_columns_products_and_sums) {
    nnodes = 0;
    Catalog *c = cat_catalog_new();
    const int64_t a[] = {-3000, 20, 10000000}, b[] = {7, -9, 4};
    CatTable *t = make_table(c, a, b, 3);
    LowSlot slot;
    LowState st = state_of(t, &slot);
    int safe = 0;
    /* |a| <= 1e7 (its min -3000, max 1e7) */
    cr_assert_float_eq(op_abs_bound(col(0, CAT_INT64), op_state_col, &st, &safe), 1e7, 1e-6);
    cr_assert_eq(safe, 1);
    /* a * b: 1e7 * 9; a + b: 1e7 + 9; -(a * b) too */
    BExpr *ab = bin(OP_MUL, CAT_INT64, col(0, CAT_INT64), col(1, CAT_INT64));
    cr_assert_float_eq(op_abs_bound(ab, op_state_col, &st, &safe), 9e7, 1e-6);
    cr_assert_eq(safe, 1);
    BExpr *neg = node(BE_UNARY, CAT_INT64);
    neg->op = OP_NEG;
    neg->a = ab;
    cr_assert_float_eq(op_abs_bound(neg, op_state_col, &st, &safe), 9e7, 1e-6);
    cr_assert_eq(safe, 1);
    BExpr *sum = bin(OP_ADD, CAT_INT64, col(0, CAT_INT64), col(1, CAT_INT64));
    cr_assert_float_eq(op_abs_bound(sum, op_state_col, &st, &safe), 1e7 + 9, 1e-6);
    cr_assert_eq(safe, 1);
    /* the sum of 3 rows of a * b: 2.7e8, far below 2^62 */
    cr_assert_float_eq(op_state_rows_bound(&st), 3, 1e-9);
    cr_assert(op_sum_no_overflow(op_state_rows_bound(&st), 9e7));
    /* at the edge: 2^62 itself is not below the limit */
    cr_assert(op_sum_no_overflow(1, 4611686018427387904.0 / 2));
    cr_assert_not(op_sum_no_overflow(2, 4611686018427387904.0 / 2));
    cat_catalog_free(c);
}

Test(bound, refuses_what_it_cannot_prove) {
    nnodes = 0;
    Catalog *c = cat_catalog_new();
    const int64_t a[] = {3037000499, -5}, b[] = {3037000499, 1};
    CatTable *t = make_table(c, a, b, 2);
    LowSlot slot;
    LowState st = state_of(t, &slot);
    int safe = 1;
    /* a * b can reach 9.2e18: not below 2^62 */
    BExpr *ab = bin(OP_MUL, CAT_INT64, col(0, CAT_INT64), col(1, CAT_INT64));
    op_abs_bound(ab, op_state_col, &st, &safe);
    cr_assert_eq(safe, 0);
    /* (a * b) % 7 is small, but the product inside may overflow */
    BExpr *mod = bin(OP_MOD, CAT_INT64, ab, cst(7));
    double r = op_abs_bound(mod, op_state_col, &st, &safe);
    cr_assert_float_eq(r, 7, 1e-9);
    cr_assert_eq(safe, 0);
    /* CASE WHEN a * b > 0 THEN 1 ELSE 2 END: the condition overflows */
    BExpr *cs = node(BE_CASE, CAT_INT64);
    cs->a = bin(OP_GT, CAT_BOOL, ab, cst(0));
    cs->b = cst(1);
    cs->c = cst(2);
    cr_assert_float_eq(op_abs_bound(cs, op_state_col, &st, &safe), 2, 1e-9);
    cr_assert_eq(safe, 0);
    /* a float column, a computed column: unknown */
    cr_assert(isinf(op_abs_bound(col(2, CAT_FLOAT64), op_state_col, &st, &safe)));
    BExpr *fa = bin(OP_ADD, CAT_INT64, col(0, CAT_INT64), col(0, CAT_INT64));
    fa->a->slot = 5; /* no such slot */
    op_abs_bound(fa, op_state_col, &st, &safe);
    cr_assert_eq(safe, 0);
    /* stale statistics (rows appended, not yet recomputed): unknown */
    CatError e;
    CatValue v[3] = {{.kind = CAT_V_INT, .i = 1}, {.kind = CAT_V_INT, .i = 1}, {.kind = CAT_V_NULL}};
    cr_assert_eq(cat_insert_rows(t, 1, v, &e), 0, "%s", e.msg);
    cr_assert(isinf(op_abs_bound(col(1, CAT_INT64), op_state_col, &st, &safe)));
    /* a state with a computed slot has no row bound */
    LowSlot two[2];
    two[0] = slot;
    memset(&two[1], 0, sizeof two[1]);
    two[1].joined = 1;
    LowState st2 = {2, two, -1, 0};
    cr_assert(isinf(op_state_rows_bound(&st2)));
    /* two joined tables: the product of their rows */
    two[1] = slot;
    cr_assert_float_eq(op_state_rows_bound(&st2), 9, 1e-9);
    cat_catalog_free(c);
}

/* Runs sql on db; returns gqp_step's code and the first column of the
 * first row in *v. */
static int run1(gqp *db, const char *sql, int64_t *v) {
    gqp_stmt *st = NULL;
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    if (rc != GQP_OK) return rc;
    rc = gqp_step(st);
    if (rc == GQP_ROW && v) *v = gqp_column_int64(st, 0);
    gqp_finalize(st);
    return rc;
}

/* EXPLAIN text of sql. */
static char *explain(gqp *db, const char *sql) {
    char *out = NULL;
    cr_assert_eq(gqp_explain(db, sql, -1, 0, &out), GQP_OK, "%s", gqp_errmsg(db));
    return out;
}

/* 1 when the first line of EXPLAIN text x naming an aggregation node
 * (segmented-reduce or dense-aggregate, not a "see above" reference)
 * carries the proof. */
static int agg_proven(const char *x) {
    for (const char *l = x; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)n, l);
        if ((strstr(line, "segmented-reduce") || strstr(line, "dense-aggregate")) &&
            !strstr(line, "see above") && strstr(line, "sum"))
            return strstr(line, "(no overflow") != NULL;
        l = e ? e + 1 : NULL;
    }
    cr_assert_fail("no aggregation node in %s", x);
    return 0;
}

/* The proof in EXPLAIN and the answers, in one aggregation plan. */
static void check_plan(const char *agg) {
    setenv("GQP_AGGREGATE", agg, 1);
    gqp *db = NULL;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    unsetenv("GQP_AGGREGATE");
    gqp_set_device(db, GQP_DEVICE_CPU);
    cr_assert_eq(run1(db, "CREATE TABLE s(g INTEGER, a BIGINT, b INTEGER)", NULL), GQP_DONE);
    cr_assert_eq(run1(db,
                      "INSERT INTO s VALUES (1, 1000000000000000000, 2), "
                      "(2, 1000000000000000000, 1), (2, -5, 3)",
                      NULL),
                 GQP_DONE);
    /* 3 rows x 1e18: proven */
    char *x = explain(db, "SELECT g, SUM(a) FROM s GROUP BY g");
    cr_assert(agg_proven(x), "%s", x);
    cr_assert(strstr(x, "(no overflow: bound 3e+18)"), "%s", x);
    gqp_free(x);
    int64_t v = 0;
    cr_assert_eq(run1(db, "SELECT SUM(a) FROM s", &v), GQP_ROW, "%s", gqp_errmsg(db));
    cr_assert_eq(v, 1999999999999999995);
    /* a * b: 3 rows x 3e18 is not below 2^62: checked */
    x = explain(db, "SELECT g, SUM(a * b) FROM s GROUP BY g");
    cr_assert_not(agg_proven(x), "%s", x);
    gqp_free(x);
    /* a map whose arithmetic is proven: a + 1 (its GPU kernel untracked) */
    x = explain(db, "SELECT a + 1 FROM s");
    cr_assert(strstr(x, "(a + 1)") || strstr(x, "(s.a + 1)"), "%s", x);
    cr_assert(strstr(x, "(no overflow: bound 1e+18)"), "%s", x);
    gqp_free(x);
    /* a value near INT64_MAX / 2: the bound refuses, the sum still fails */
    cr_assert_eq(run1(db, "INSERT INTO s VALUES (2, 4611686018427387904, 1), (2, 4611686018427387904, 1)",
                      NULL),
                 GQP_DONE);
    x = explain(db, "SELECT g, SUM(a) FROM s GROUP BY g");
    cr_assert_not(agg_proven(x), "%s", x);
    gqp_free(x);
    cr_assert_neq(run1(db, "SELECT g, SUM(a) FROM s GROUP BY g ORDER BY 2", NULL), GQP_ROW);
    cr_assert(strstr(gqp_errmsg(db), "integer overflow"), "%s", gqp_errmsg(db));
    /* and a row's a + a past int64 gives SQLite's REAL: the map's check is
     * kept (MAX of it is 9223372036854775808.0, its int64 saturates) */
    x = explain(db, "SELECT a + a FROM s");
    cr_assert_null(strstr(x, "no overflow"), "%s", x);
    gqp_free(x);
    int64_t mx = 0;
    cr_assert_eq(run1(db, "SELECT MAX(a + a) FROM s", &mx), GQP_ROW, "%s", gqp_errmsg(db));
    cr_assert_eq(mx, INT64_MAX);
    gqp_close(db);
}

Test(bound, explain_and_answers_sort_plan) {
    check_plan("sort");
}

Test(bound, explain_and_answers_dense_plan) {
    check_plan("dense");
}
