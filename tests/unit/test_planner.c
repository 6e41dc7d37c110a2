/*
 * test_planner.c -- unit tests of planner/: cardinality estimates of
 * single-table filters (plan_selectivity through plan_bind_select and
 * plan_rewrite) against the true row counts.
 *
 * Expected values are counted by the test from the loaded column data,
 * never taken from gqp's own output. The "old" estimates the tests compare
 * against are the uniform formulas (linear between min and max, 1/distinct)
 * computed here from the column's min, max and distinct count.
 */
#include "catalog/catalog.h"
#include "planner/bexpr.h"
#include "planner/planner.h"
#include "sqlfront/sqlfront.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256];

/* Criterion fixture: a fresh temporary folder per test. */
static void setup(void) {
    strcpy(tmpdir, "/tmp/gqp_plan_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

/* Criterion fixture: remove the temporary folder. */
static void teardown(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", tmpdir);
}

TestSuite(estimate, .init = setup, .fini = teardown);

/* Path of `name` inside the test's folder, in a static rotating buffer. */
static const char *tpath(const char *name) {
    static char bufs[4][512];
    static int k;
    char *b = bufs[k++ % 4];
    snprintf(b, 512, "%s/%s", tmpdir, name);
    return b;
}

/* Load the catalog of the test folder's gqp.yaml; the caller frees it. */
static Catalog *load(void) {
    Catalog *c = cat_catalog_new();
    CatError e;
    cr_assert_not_null(c);
    cr_assert_eq(cat_load_config(c, tpath("gqp.yaml"), NULL, &e), 0, "%s", e.msg);
    return c;
}

/* The planner's estimated rows of `SELECT * FROM table WHERE where`
 * (the scan's est_rows after its pushed-down filters). */
static int64_t est_rows(const Catalog *cat, const char *table, const char *where) {
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s", table, where);
    SqlArena *sa = sql_arena_new();
    PlanArena *pa = plan_arena_new();
    cr_assert(sa && pa);
    AstStmt *st = NULL;
    int64_t next;
    SqlError serr;
    cr_assert_eq(sql_parse_one(sql, (int64_t)strlen(sql), 0, sa, &st, &next, &serr), 0, "%s: %s",
                 sql, serr.msg);
    cr_assert(st && st->select, "%s", sql);
    BSelect *b = NULL;
    PlanError perr;
    memset(&perr, 0, sizeof perr);
    cr_assert_eq(plan_bind_select(cat, sql, st->select, pa, &b, &perr), 0, "%s: %s", sql, perr.msg);
    cr_assert_eq(b->nrels, 1);
    int64_t est = b->rels[0].est_rows;
    plan_arena_free(pa);
    sql_arena_free(sa);
    return est;
}

/* Value of row i of a numeric column as a double; 0 with *isnull set for
 * NULL. */
static double value(const CatColumn *c, int64_t i, int *isnull) {
    *isnull = c->valid && !c->valid[i];
    switch (c->type) {
    case CAT_FLOAT32:
        return ((const float *)c->data)[i];
    case CAT_FLOAT64:
        return ((const double *)c->data)[i];
    case CAT_INT64:
        return (double)((const int64_t *)c->data)[i];
    default:
        return ((const int32_t *)c->data)[i];
    }
}

/* Rows of t whose column `col` is non-NULL and in the range lo .. hi (each
 * end inclusive when its flag is set; +-INFINITY for none). */
static int64_t count_range(const CatTable *t, const char *col, double lo, int lo_incl, double hi,
                           int hi_incl) {
    int k = cat_find_column(t, col);
    cr_assert(k >= 0, "%s", col);
    int64_t n = 0;
    for (int64_t i = 0; i < t->nrows; i++) {
        int isnull;
        double x = value(&t->cols[k], i, &isnull);
        if (isnull) continue;
        n += (lo_incl ? x >= lo : x > lo) && (hi_incl ? x <= hi : x < hi);
    }
    return n;
}

/* Non-NULL rows of column col. */
static int64_t count_nonnull(const CatTable *t, const char *col) {
    return count_range(t, col, -INFINITY, 0, INFINITY, 0);
}

/* The uniform estimate of `col < v` the planner used before histograms:
 * linear between the column's min and max. */
static double uniform_below(const CatTable *t, const char *col, double v) {
    const CatStats *s = &t->cols[cat_find_column(t, col)].stats;
    double f = (v - s->min) / (s->max - s->min);
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

/* One estimate checked against the truth: |est - truth| <= tol * rows, and
 * when old >= 0 (the uniform estimate as a fraction) the uniform estimate
 * was at least three times further off. */
static void check(const Catalog *cat, const CatTable *t, const char *where, int64_t truth,
                  double tol, double old) {
    int64_t est = est_rows(cat, t->name, where);
    double n = (double)t->nrows;
    double err = fabs((double)est - (double)truth) / n;
    cr_log_info("%-40s est %8lld  true %8lld  uniform %8.0f", where, (long long)est,
                (long long)truth, old >= 0 ? old * n : -1.0);
    cr_expect(err <= tol, "%s: estimated %lld rows, true %lld (tolerance %g of %lld)", where,
              (long long)est, (long long)truth, tol, (long long)t->nrows);
    if (old >= 0)
        cr_expect(fabs(old * n - (double)truth) / n > 3 * err &&
                      fabs(old * n - (double)truth) / n > tol,
                  "%s: the uniform estimate %.0f was not far from the truth %lld", where, old * n,
                  (long long)truth);
}

/* Like check() with a tolerance relative to the truth (equality). */
static void check_rel(const Catalog *cat, const CatTable *t, const char *where, int64_t truth,
                      double rel_tol, double old) {
    int64_t est = est_rows(cat, t->name, where);
    double n = (double)t->nrows;
    cr_log_info("%-40s est %8lld  true %8lld  uniform %8.0f", where, (long long)est,
                (long long)truth, old >= 0 ? old * n : -1.0);
    cr_expect(fabs((double)est - (double)truth) <= rel_tol * (double)truth,
              "%s: estimated %lld rows, true %lld", where, (long long)est, (long long)truth);
    if (old >= 0)
        cr_expect(fabs(old * n - (double)truth) > 2 * rel_tol * (double)truth,
                  "%s: the uniform estimate %.0f was not far from the truth %lld", where, old * n,
                  (long long)truth);
}

/* 1 / distinct of column col: the old equality estimate. */
static double uniform_eq(const CatTable *t, const char *col) {
    return 1.0 / (double)t->cols[cat_find_column(t, col)].stats.distinct;
}

enum { NGEN = 300000 }; /* rows of the generated table: more than CAT_HIST_SAMPLE */

Test(estimate, ranges_over_normal_columns) {
    CatError e;
    cr_assert_eq(cat_gen_test(tmpdir, NGEN, 3, &e), 0, "%s", e.msg);
    Catalog *c = load();
    const CatTable *t = cat_find_table(c, "test");
    const double inf = INFINITY;
    check(c, t, "normali5 < 0", count_range(t, "normali5", -inf, 0, 0, 0), 0.01,
          uniform_below(t, "normali5", 0));
    check(c, t, "0 > normali5", count_range(t, "normali5", -inf, 0, 0, 0), 0.01, -1);
    check(c, t, "normali5 <= -3", count_range(t, "normali5", -inf, 0, -3, 1), 0.01,
          uniform_below(t, "normali5", -3));
    check(c, t, "normali5 < 0.5", count_range(t, "normali5", -inf, 0, 0.5, 0), 0.01, -1);
    check(c, t, "normali20 >= 30", count_range(t, "normali20", 30, 1, inf, 0), 0.01,
          1 - uniform_below(t, "normali20", 30));
    check(c, t, "normalf5 > 2.5", count_range(t, "normalf5", 2.5, 0, inf, 0), 0.01,
          1 - uniform_below(t, "normalf5", 2.5));
    check(c, t, "normalf5 <= -10", count_range(t, "normalf5", -inf, 0, -10, 1), 0.01,
          uniform_below(t, "normalf5", -10));
    /* BETWEEN binds as two conjuncts; the old estimate multiplied them */
    check(c, t, "normalf20 BETWEEN -5 AND 5", count_range(t, "normalf20", -5, 1, 5, 1), 0.01,
          (1 - uniform_below(t, "normalf20", -5)) * uniform_below(t, "normalf20", 5));
    check(c, t, "normali20 >= 10 AND normali20 <= 25", count_range(t, "normali20", 10, 1, 25, 1),
          0.01, -1);
    check(c, t, "normalf20 NOT BETWEEN -5 AND 5",
          t->nrows - count_range(t, "normalf20", -5, 1, 5, 1), 0.01, -1);
    check(c, t, "normali5 > 3 OR normali5 < -100", count_range(t, "normali5", 3, 0, inf, 0), 0.01,
          -1);
    cat_catalog_free(c);
}

Test(estimate, equality_over_normal_columns) {
    CatError e;
    cr_assert_eq(cat_gen_test(tmpdir, NGEN, 3, &e), 0, "%s", e.msg);
    Catalog *c = load();
    const CatTable *t = cat_find_table(c, "test");
    check_rel(c, t, "normali5 = 0", count_range(t, "normali5", 0, 1, 0, 1), 0.1,
              uniform_eq(t, "normali5"));
    check_rel(c, t, "normali5 = -4", count_range(t, "normali5", -4, 1, -4, 1), 0.1,
              uniform_eq(t, "normali5"));
    check_rel(c, t, "normali20 = 5", count_range(t, "normali20", 5, 1, 5, 1), 0.15,
              uniform_eq(t, "normali20"));
    check(c, t, "normali5 <> 0", t->nrows - count_range(t, "normali5", 0, 1, 0, 1), 0.01, -1);
    /* a value beyond the extremes matches nothing (est_rows is at least 1) */
    cr_expect_leq(est_rows(c, t->name, "normali5 = 1000"), 1);
    /* a fraction never equals an integer column */
    cr_expect_leq(est_rows(c, t->name, "normali5 = 0.5"), 1);
    cat_catalog_free(c);
}

Test(estimate, uniform_columns_unchanged) {
    CatError e;
    cr_assert_eq(cat_gen_test(tmpdir, NGEN, 3, &e), 0, "%s", e.msg);
    Catalog *c = load();
    const CatTable *t = cat_find_table(c, "test");
    double n = (double)t->nrows;
    const double inf = INFINITY;
    struct {
        const char *where, *col;
        double lo, hi;
        int lo_incl, hi_incl;
    } cases[] = {
        {"uniformi < 10", "uniformi", -inf, 10, 0, 0},
        {"uniformi >= -50", "uniformi", -50, inf, 1, 0},
        {"uniformf < 25.5", "uniformf", -inf, 25.5, 0, 0},
        {"uniformf > -90", "uniformf", -90, inf, 0, 0},
        {"uniformi BETWEEN -20 AND 20", "uniformi", -20, 20, 1, 1},
        {"uniformf BETWEEN 0 AND 50", "uniformf", 0, 50, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t truth = count_range(t, cases[i].col, cases[i].lo, cases[i].lo_incl, cases[i].hi,
                                    cases[i].hi_incl);
        check(c, t, cases[i].where, truth, 0.01, -1);
        /* the uniform formula, for the range: still what the planner says */
        double lo = cases[i].lo == -inf ? 0 : uniform_below(t, cases[i].col, cases[i].lo);
        double hi = cases[i].hi == inf ? 1 : uniform_below(t, cases[i].col, cases[i].hi);
        int64_t est = est_rows(c, t->name, cases[i].where);
        cr_expect(fabs((double)est - (hi - lo) * n) <= 0.01 * n, "%s: %lld vs uniform %.0f",
                  cases[i].where, (long long)est, (hi - lo) * n);
    }
    int64_t truth = count_range(t, "uniformi", 7, 1, 7, 1);
    check_rel(c, t, "uniformi = 7", truth, 0.1, -1);
    cr_expect(fabs((double)est_rows(c, t->name, "uniformi = 7") - n * uniform_eq(t, "uniformi")) <=
                  0.1 * (double)truth,
              "uniformi = 7 moved away from 1 / distinct");
    cat_catalog_free(c);
}

Test(estimate, nulls_skew_and_strings) {
    enum { N = 200000 };
    FILE *f = fopen(tpath("h.csv"), "w");
    cr_assert_not_null(f);
    for (int i = 0; i < N; i++) {
        /* v: 30% NULL; of the rest half are 1000, half spread over 0..96;
         * s: 70% "a", then "b", "c", "zz" */
        unsigned r = (unsigned)i * 2654435761u ^ (unsigned)i >> 3;
        if (r % 10 < 3)
            fputs(",", f);
        else
            fprintf(f, "%d,", (r >> 8) % 2 ? 1000 : (int)((r >> 9) % 97));
        unsigned q = (r >> 16) % 20;
        fprintf(f, "%s\n", q < 14 ? "a" : q < 17 ? "b" : q < 19 ? "c" : "zz");
    }
    fclose(f);
    f = fopen(tpath("gqp.yaml"), "w");
    fputs("tables:\n  - name: h\n    source: h.csv\n"
          "    columns: [{name: v, type: INT32}, {name: s, type: STRING}]\n",
          f);
    fclose(f);
    Catalog *c = load();
    const CatTable *t = cat_find_table(c, "h");
    const double inf = INFINITY;
    int64_t nn = count_nonnull(t, "v");
    int64_t below = count_range(t, "v", -inf, 0, 50, 0);
    double nulls = (double)(N - nn) / N;
    check(c, t, "v < 50", below, 0.01, uniform_below(t, "v", 50));
    check(c, t, "NOT (v < 50)", nn - below, 0.01, -1);
    check(c, t, "v >= 50", nn - below, 0.01, -1);
    check(c, t, "v IS NULL", N - nn, 0.001, -1);
    check_rel(c, t, "v = 1000", count_range(t, "v", 1000, 1, 1000, 1), 0.05,
              (1 - nulls) * uniform_eq(t, "v"));
    check(c, t, "v <> 1000", nn - count_range(t, "v", 1000, 1, 1000, 1), 0.01, -1);
    check_rel(c, t, "v = 40", count_range(t, "v", 40, 1, 40, 1), 0.25, -1);
    cr_expect_leq(est_rows(c, "h", "v < NULL"), 1);
    /* strings compare by code: a = 0, b = 1, c = 2, zz = 3 */
    int64_t a = count_range(t, "s", 0, 1, 0, 1), ab = count_range(t, "s", 0, 1, 1, 1);
    check_rel(c, t, "s = 'a'", a, 0.05, uniform_eq(t, "s"));
    check(c, t, "s < 'b'", a, 0.01, -1);
    check(c, t, "s <= 'b'", ab, 0.01, -1);
    check(c, t, "s > 'b'", N - ab, 0.01, -1);
    check(c, t, "s >= 'bb'", N - ab, 0.01, -1); /* 'bb' is not in the dictionary */
    check(c, t, "'b' > s", a, 0.01, -1);
    cr_expect_leq(est_rows(c, "h", "s = 'nope'"), 1);
    check(c, t, "s <> 'nope'", N, 0.001, -1);
    cat_catalog_free(c);
}

/* ------------------------------------------------------------- LIKE -- */

Test(like, utf8_characters_and_ascii_case_folding) {
    /* expected values: sqlite3 3.40, SELECT s LIKE p */
    static const struct {
        const char *s, *p;
        int want;
    } cases[] = {
        {"é", "_", 1},
        {"é", "__", 0},
        {"aé", "a_", 1},
        {"aéb", "a%b", 1},
        {"É", "é", 0},
        {"A", "a", 1},
        {"ÄB", "_b", 1},
        {"€", "%__", 0},
        {"€€", "%__", 1},
        {"€x", "_x", 1},
        {"x€", "%_", 1},
        {"日本語", "___", 1},
        {"日本語", "__", 0},
        {"日本語", "%本%", 1},
        {"", "%", 1},
        {"", "_", 0},
        {"abc", "a%%c", 1},
        {"abc", "%_%_%_%", 1},
        {"ab", "%_%_%_%", 0},
        {"abc", "ABC", 1},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaab", "%a%a%a%a%a%a%a%a%a%a%a%a%c", 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        cr_expect_eq(plan_like_match(cases[k].s, cases[k].p), cases[k].want, "'%s' LIKE '%s'",
                     cases[k].s, cases[k].p);
}

/* --------------------------------------- per-dictionary functions -- */

/* fn_map_dict over a dictionary large enough for its threaded path (each
 * thread interns its share, the shares are merged): every entry maps to
 * the code whose text is fn_apply_str's (the one-entry reference whose
 * SQLite semantics the SQL tests check), and the result dictionary is
 * sorted and distinct. */
Test(functions, map_dict_threaded_equals_one_entry_at_a_time) {
    enum { N = 200003 };
    char **strs = malloc(N * sizeof *strs);
    size_t *lens = malloc(N * sizeof *lens);
    cr_assert(strs && lens);
    for (int64_t i = 0; i < N; i++) {
        char buf[64];
        /* repeats (i % 977), UTF-8, blanks to trim, distinct tails */
        int k = snprintf(buf, sizeof buf, "%s%03d-é%lld%s", i % 3 ? "  " : "", (int)(i % 977),
                         (long long)i, i % 5 ? "" : " ");
        strs[i] = strdup(buf);
        lens[i] = (size_t)k;
    }
    CatDict *d = cat_dict_build((const char *const *)strs, lens, N, NULL);
    cr_assert(d);
    const FnStrOp ops[] = {
        {FN_SUBSTR, 3, 3, 1, NULL, NULL}, {FN_SUBSTR, -4, 0, 0, NULL, NULL},
        {FN_TRIM, 0, 0, 0, NULL, NULL},   {FN_UPPER, 0, 0, 0, NULL, NULL},
        {FN_LENGTH, 0, 0, 0, NULL, NULL}, {FN_REPLACE, 0, 0, 0, "é", "e"},
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        PlanArena *pa = plan_arena_new();
        BExpr *x = bx_new(pa, BE_COL, CAT_STRING, 0);
        cr_assert(x);
        x->dict = d;
        BExpr *r = fn_map_dict(pa, x, &ops[o], 0);
        cr_assert(r && r->kind == BE_LOOKUP && r->table_n == d->n, "op %zu", o);
        for (int64_t u = 0; u < d->n; u++) {
            char *want = NULL;
            size_t wl = 0;
            int64_t iv = 0;
            int k = fn_apply_str(&ops[o], cat_dict_str(d, u), (size_t)cat_dict_len(d, u), &want,
                                 &wl, &iv);
            if (k == 1) {
                cr_assert_eq(r->table[u], iv, "op %zu entry %lld", o, (long long)u);
                continue;
            }
            cr_assert_eq(k, 0);
            int64_t c = r->table[u];
            cr_assert(c >= 0 && c < r->dict->n);
            cr_assert_eq((size_t)cat_dict_len(r->dict, c), wl);
            cr_assert_eq(memcmp(cat_dict_str(r->dict, c), want, wl), 0, "op %zu entry %lld", o,
                         (long long)u);
            free(want);
        }
        if (r->type == CAT_STRING)
            for (int64_t c = 1; c < r->dict->n; c++)
                cr_assert_lt(strcmp(cat_dict_str(r->dict, c - 1), cat_dict_str(r->dict, c)), 0);
        plan_arena_free(pa);
    }
    cat_dict_free(d);
    for (int64_t i = 0; i < N; i++)
        free(strs[i]);
    free(strs);
    free(lens);
}

/* The segment matcher (patterns of literal runs and `%`) agrees with
 * like_at (checked against SQLite above) on iters random texts of up to
 * max_atoms atoms (a small alphabet with UTF-8 and case variants) for
 * random patterns of up to 6. */
static void segment_matcher_check(uint64_t seed, int iters, int max_atoms, const char *const *atoms,
                                  int natoms, const char *const *patoms, int npatoms) {
    for (int it = 0; it < iters; it++) {
        char s[256] = "", p[64] = "";
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int ls = (int)((seed >> 33) % (uint64_t)(max_atoms + 1)), lp = (int)((seed >> 45) % 7);
        for (int k = 0; k < ls; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            strcat(s, atoms[(seed >> 33) % (uint64_t)natoms]);
        }
        for (int k = 0; k < lp; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            strcat(p, patoms[(seed >> 33) % (uint64_t)npatoms]);
        }
        cr_assert_eq(plan_like_match_fast(s, p), plan_like_match(s, p), "'%s' LIKE '%s'", s, p);
    }
}

Test(like, segment_matcher_equals_like_at) {
    static const char *atoms[] = {"a", "B", "b", "A", "é", "%", "ab", "x", " ", "€"};
    static const char *patoms[] = {"a", "b", "B", "%", "%", "ab", "x", " ", "AB"};
    segment_matcher_check(12345, 200000, 7, atoms, 10, patoms, 9);
}

/* The same on texts of up to 47 atoms (16-byte SIMD blocks, the 8-byte
 * word loop after them and the byte tail all find candidates). */
Test(like, segment_matcher_long_texts) {
    static const char *atoms[] = {"a", "B", "b", "A", "é", "%", "ab", "x", " ", "€", "AB"};
    static const char *patoms[] = {"a", "b", "B", "%", "%", "ab", "x", " ", "AB", "bA"};
    segment_matcher_check(777, 50000, 47, atoms, 11, patoms, 10);
}

/* ------------------------------------------- text of numbers (binder) -- */

/* Bind sql against a catalog with t(i INTEGER, s TEXT); returns 0 or -1 and
 * the error in *err. */
static int bind_sql(const char *sql, PlanError *err) {
    Catalog *cat = cat_catalog_new();
    CatError ce;
    const char *names[] = {"i", "s"};
    CatType types[] = {CAT_INT64, CAT_STRING};
    cr_assert_eq(cat_create_table(cat, "t", 2, names, types, &ce), 0, "%s", ce.msg);
    SqlArena *sa = sql_arena_new();
    PlanArena *pa = plan_arena_new();
    cr_assert(sa && pa);
    AstStmt *st = NULL;
    int64_t next;
    SqlError serr;
    cr_assert_eq(sql_parse_one(sql, (int64_t)strlen(sql), 0, sa, &st, &next, &serr), 0, "%s: %s",
                 sql, serr.msg);
    BSelect *b = NULL;
    memset(err, 0, sizeof *err);
    int rc = plan_bind_select(cat, sql, st->select, pa, &b, err);
    plan_arena_free(pa);
    sql_arena_free(sa);
    cat_catalog_free(cat);
    return rc;
}

Test(totext, supported_uses_bind) {
    const char *ok[] = {
        "SELECT CAST(CAST(i AS TEXT) AS INTEGER), CAST(CAST(i AS TEXT) AS REAL) FROM t",
        "SELECT CAST(CAST(i AS TEXT) AS DATE) FROM t",
        "SELECT CAST(i AS TEXT) = '1', '2' < CAST(i AS TEXT), CAST(i AS TEXT) LIKE '1%' FROM t",
        "SELECT CAST(COALESCE(CAST(i AS TEXT), 'x') AS TEXT) FROM t",
        "SELECT IFNULL(CAST(i AS TEXT), NULL), CAST(i AS TEXT) IS NULL FROM t",
        "SELECT COUNT(CAST(i AS TEXT)) FROM t",
        "SELECT i FROM t WHERE CAST(i AS TEXT) IN ('1', '2')",
        "SELECT CAST(i AS TEXT) = s, s >= CAST(i AS TEXT) FROM t",
        "SELECT NULLIF(CAST(i AS TEXT), NULL), NULLIF(s, CAST(i AS TEXT)) FROM t",
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        PlanError e;
        cr_expect_eq(bind_sql(ok[k], &e), 0, "%s: %s", ok[k], e.msg);
    }
}

Test(totext, unsupported_uses_are_not_implemented_errors) {
    /* documented in docs/sql.md (Known deviations from SQLite) */
    const char *bad[] = {
        "SELECT CAST(i AS TEXT) = 1 FROM t",
        "SELECT CAST(i AS TEXT) < CAST(i + 1 AS TEXT) FROM t",
        "SELECT CASE WHEN i > 0 THEN CAST(i AS TEXT) ELSE 'neg' END FROM t",
        "SELECT COALESCE(CAST(i AS TEXT), s) FROM t",
        "SELECT MAX(CAST(i AS TEXT)) FROM t",
        "SELECT COUNT(*) FROM t GROUP BY CAST(i AS TEXT)",
        /* NULLIF's result is a CASE branch: was a dictionary-less string
         * node reaching the executor (wrong rows, SIGSEGV in gqp_batch) */
        "SELECT NULLIF(CAST(i AS TEXT), 'x') FROM t",
        "SELECT NULLIF(CAST(i AS TEXT), s) FROM t",
        "SELECT NULLIF(CAST((i IS NOT NULL) + 7 AS TEXT), CASE i WHEN 2 THEN 'a' ELSE 'b' END) "
        "FROM t",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        PlanError e;
        cr_expect_eq(bind_sql(bad[k], &e), -1, "%s binds", bad[k]);
        cr_expect_str_eq(e.stage, "Not implemented", "%s: %s: %s", bad[k], e.stage, e.msg);
    }
}

/* ------------------------------------------------- outer joins -- */
Test(outer_join, using_over_a_column_a_right_or_full_join_merged_binds) {
    /* a later USING compares with the COALESCE the RIGHT / FULL JOIN made,
     * as SQLite (answers in tests/sql/outer_joins.test) */
    const char *ok[] = {
        "SELECT * FROM t AS x RIGHT JOIN t AS y USING (i) JOIN t AS z USING (i)",
        "SELECT * FROM t AS x NATURAL FULL JOIN t AS y NATURAL LEFT JOIN t AS z",
        "SELECT * FROM t AS x RIGHT JOIN t AS y USING (i)",
        "SELECT * FROM t AS x NATURAL FULL JOIN t AS y",
        "SELECT i FROM t AS x FULL JOIN t AS y USING (i) WHERE i > 1",
        "SELECT * FROM t AS x JOIN t AS y ON x.i = y.i RIGHT JOIN t AS z ON z.i = x.i",
        "SELECT * FROM t AS x LEFT JOIN t AS y ON x.i = y.i FULL JOIN t AS z ON z.i = x.i",
        "SELECT * FROM t AS x, t AS y RIGHT OUTER JOIN t AS z ON z.i = y.i",
        "SELECT * FROM t AS x RIGHT JOIN t AS y ON x.i = y.i LEFT JOIN t AS z ON z.i = x.i",
        "SELECT * FROM t AS x FULL OUTER JOIN t AS y ON x.i < y.i JOIN t AS z ON z.i = x.i",
        "SELECT * FROM t AS x LEFT JOIN t AS y",
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        PlanError e;
        cr_expect_eq(bind_sql(ok[k], &e), 0, "%s: %s", ok[k], e.msg);
    }
}

/* ------------------------------------------- OR factoring (binder) -- */

/* Bind sql against l(k INTEGER, q INTEGER, m TEXT) and p(k INTEGER,
 * b TEXT) and return the number of equi-join predicates and of all join
 * predicates, and the number of filters pushed to each table. */
static void join_shape(const char *sql, int *nequi, int *npreds, int *nfl, int *nfp) {
    Catalog *cat = cat_catalog_new();
    CatError ce;
    const char *ln[] = {"k", "q", "m"}, *pn[] = {"k", "b"};
    CatType lt[] = {CAT_INT64, CAT_INT64, CAT_STRING}, pt[] = {CAT_INT64, CAT_STRING};
    cr_assert_eq(cat_create_table(cat, "l", 3, ln, lt, &ce), 0, "%s", ce.msg);
    cr_assert_eq(cat_create_table(cat, "p", 2, pn, pt, &ce), 0, "%s", ce.msg);
    SqlArena *sa = sql_arena_new();
    PlanArena *pa = plan_arena_new();
    cr_assert(sa && pa);
    AstStmt *st = NULL;
    int64_t next;
    SqlError serr;
    cr_assert_eq(sql_parse_one(sql, (int64_t)strlen(sql), 0, sa, &st, &next, &serr), 0, "%s: %s",
                 sql, serr.msg);
    BSelect *b = NULL;
    PlanError err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(plan_bind_select(cat, sql, st->select, pa, &b, &err), 0, "%s: %s", sql, err.msg);
    *nequi = 0;
    *npreds = b->npreds;
    for (int i = 0; i < b->npreds; i++)
        *nequi += b->preds[i].is_equi;
    *nfl = b->rels[0].nfilters;
    *nfp = b->rels[1].nfilters;
    plan_arena_free(pa);
    sql_arena_free(sa);
    cat_catalog_free(cat);
}

Test(factor, join_key_common_to_every_or_branch_is_an_equi_join) {
    int ne, np, nfl, nfp;
    /* TPC-H Q19's shape: the key sits inside each branch */
    join_shape("SELECT l.q FROM l, p WHERE (p.k = l.k AND p.b = 'x' AND l.q < 5) OR "
               "(p.k = l.k AND p.b = 'y' AND l.q > 10) OR (l.k = p.k AND p.b = 'x' AND l.m = 'z')",
               &ne, &np, &nfl, &nfp);
    cr_expect_eq(ne, 1, "the common key (either side order) is an equi-join");
    cr_expect_eq(np, 2, "the equi-join and the residual OR");
    join_shape("SELECT l.q FROM l, p WHERE (p.k = l.k AND p.b = 'x' AND l.q < 5) OR "
               "(p.b = 'y' AND p.k = l.k AND l.q > 10) OR (p.k = l.k AND p.b = 'x' AND l.m = 'z')",
               &ne, &np, &nfl, &nfp);
    cr_expect_eq(ne, 1, "the common key is an equi-join");
    cr_expect_eq(np, 2, "the equi-join and the residual OR");
    /* every branch all common: A OR (A AND y) is A; single-table commons are pushed down */
    join_shape("SELECT l.q FROM l JOIN p ON (p.k = l.k AND l.q < 5) OR (l.q < 5 AND p.k = l.k AND "
               "p.b = 'y')",
               &ne, &np, &nfl, &nfp);
    cr_expect_eq(ne, 1);
    cr_expect_eq(np, 1, "no residual OR");
    cr_expect_eq(nfl, 1, "l.q < 5 pushed to l");
    cr_expect_eq(nfp, 0);
    /* Q19's full shape: key, IN list and string equality common; the
     * single-table commons go down to l's scan */
    join_shape("SELECT l.q FROM l, p WHERE (p.k = l.k AND p.b = 'x' AND l.q BETWEEN 1 AND 11 AND "
               "l.m IN ('AIR', 'AIR REG') AND l.m <> 'z') OR (p.k = l.k AND p.b = 'y' AND l.q "
               "BETWEEN 10 AND 20 AND l.m IN ('AIR', 'AIR REG') AND l.m <> 'z')",
               &ne, &np, &nfl, &nfp);
    cr_expect_eq(ne, 1);
    cr_expect_eq(np, 2);
    /* plus the branches' l.q ranges, implied by the OR and selective on
     * this table (below 0.3); p.b = 'x' OR p.b = 'y' is not (p's two
     * values), so it stays in the residual OR only */
    cr_expect_eq(nfl, 3, "the IN list, l.m <> 'z' and the implied l.q ranges (got %d)", nfl);
    cr_expect_eq(nfp, 0, "p.b's OR not selective on p (got %d)", nfp);
    /* nothing common: one OR predicate, no equi-join */
    join_shape("SELECT l.q FROM l, p WHERE (p.k = l.k AND l.q < 5) OR (p.k = l.q)", &ne, &np, &nfl,
               &nfp);
    cr_expect_eq(ne, 0);
    cr_expect_eq(np, 1);
}

/* ------------------------------------------------ dates (binder) -- */

/* Days of the DATE constant that `SELECT expr` folds to. */
static int64_t folded_date(const char *expr) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s", expr);
    Catalog *cat = cat_catalog_new();
    SqlArena *sa = sql_arena_new();
    PlanArena *pa = plan_arena_new();
    cr_assert(cat && sa && pa);
    AstStmt *st = NULL;
    int64_t next;
    SqlError serr;
    cr_assert_eq(sql_parse_one(sql, (int64_t)strlen(sql), 0, sa, &st, &next, &serr), 0, "%s: %s",
                 sql, serr.msg);
    BSelect *b = NULL;
    PlanError err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(plan_bind_select(cat, sql, st->select, pa, &b, &err), 0, "%s: %s", sql, err.msg);
    cr_assert_eq(b->out[0]->kind, BE_CONST, "%s folds", sql);
    cr_assert_eq(b->out[0]->type, CAT_DATE, "%s is a DATE", sql);
    int64_t d = b->out[0]->ival;
    plan_arena_free(pa);
    sql_arena_free(sa);
    cat_catalog_free(cat);
    return d;
}

/* Days of 'yyyy-mm-dd'. */
static int64_t days_of(const char *s) {
    int32_t d;
    cr_assert_eq(cat_parse_date(s, strlen(s), &d), 0, "%s", s);
    return d;
}

Test(dates, interval_months_clamp_to_month_end_as_duckdb) {
    /* documented in docs/sql.md: DuckDB's rule (SQLite's date(d, '+1 month')
     * normalizes 2021-01-31 + 1 month to 2021-03-03 instead) */
    cr_expect_eq(folded_date("DATE '2021-01-31' + INTERVAL '1' MONTH"), days_of("2021-02-28"));
    cr_expect_eq(folded_date("DATE '2020-01-31' + INTERVAL '1' MONTH"), days_of("2020-02-29"));
    cr_expect_eq(folded_date("DATE '1995-11-30' + INTERVAL '3' MONTH"), days_of("1996-02-29"));
    cr_expect_eq(folded_date("DATE '2020-02-29' + INTERVAL '1' YEAR"), days_of("2021-02-28"));
    cr_expect_eq(folded_date("DATE '2020-03-31' - INTERVAL 1 MONTH"), days_of("2020-02-29"));
    cr_expect_eq(folded_date("DATE '2000-12-31' + INTERVAL '2' MONTH"), days_of("2001-02-28"));
    cr_expect_eq(folded_date("INTERVAL '3' DAY + DATE '2000-02-28'"), days_of("2000-03-02"));
    cr_expect_eq(folded_date("CAST('1998-09-02' AS date)"), days_of("1998-09-02"));
}

Test(functions, unsupported_forms_are_not_implemented) {
    const char *bad[] = {
        "SELECT EXTRACT(HOUR FROM DATE '2000-01-01') FROM t",
        "SELECT date(i) FROM t",
        "SELECT date(s, s) FROM t",
        "SELECT strftime('%Y', i) FROM t",
        "SELECT strftime('%Q', s) FROM t",
        "SELECT strftime(s, s) FROM t",
        "SELECT strftime('%Y', s, s) FROM t",
        "SELECT datetime(i) FROM t",
        "SELECT strftime('%Y', DATE '2000-01-01' + INTERVAL 1 DAY + i) FROM t",
        "SELECT date('2000-01-01', '+1.5 days') FROM t",
        "SELECT date('2000-01-01', 'weekday 0') FROM t",
        "SELECT INTERVAL '1' DAY FROM t",
        "SELECT s || (i + 1) FROM t",
        "SELECT s || CAST(i AS REAL) FROM t",
        "SELECT s LIKE CAST(i AS TEXT) FROM t",
        "SELECT MEDIAN(s) FROM t",
        "SELECT group_concat(s, s) FROM t",
        "SELECT group_concat(DISTINCT s) FROM t",
        "SELECT group_concat(s) || 'x' FROM t",
        "SELECT QUANTILE_CONT(DATE '2000-01-01', 0.5) FROM t",
        "SELECT LENGTH(i) FROM t",
        "SELECT SUBSTR(s, i) FROM t",
        "SELECT REPLACE(s, s, 'x') FROM t",
        "SELECT UPPER(CAST(i * 2 AS TEXT)) FROM t",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        PlanError e;
        cr_expect_eq(bind_sql(bad[k], &e), -1, "%s binds", bad[k]);
        cr_expect_str_eq(e.stage, "Not implemented", "%s: %s: %s", bad[k], e.stage, e.msg);
    }
}

/* Bind sql against t(i INTEGER, s TEXT) holding nrows rows with distinct
 * strings; 0 or -1 and the error in *err. */
static int bind_sql_rows(const char *sql, int64_t nrows, PlanError *err) {
    Catalog *cat = cat_catalog_new();
    CatError ce;
    const char *names[] = {"i", "s"};
    CatType types[] = {CAT_INT64, CAT_STRING};
    cr_assert_eq(cat_create_table(cat, "t", 2, names, types, &ce), 0, "%s", ce.msg);
    CatTable *t = cat_find_table(cat, "t");
    CatValue *v = calloc((size_t)(2 * nrows + 1), sizeof(CatValue));
    char(*txt)[24] = calloc((size_t)(nrows + 1), sizeof *txt);
    cr_assert(t && v && txt);
    for (int64_t r = 0; r < nrows; r++) {
        snprintf(txt[r], sizeof txt[r], "v%lld", (long long)r);
        v[2 * r] = (CatValue){CAT_V_INT, r, 0, NULL};
        v[2 * r + 1] = (CatValue){CAT_V_STR, 0, 0, txt[r]};
    }
    cr_assert_eq(cat_insert_rows(t, nrows, v, &ce), 0, "%s", ce.msg);
    cr_assert_eq(cat_table_ready(t), 0);
    SqlArena *sa = sql_arena_new();
    PlanArena *pa = plan_arena_new();
    cr_assert(sa && pa);
    AstStmt *st = NULL;
    int64_t next;
    SqlError serr;
    cr_assert_eq(sql_parse_one(sql, (int64_t)strlen(sql), 0, sa, &st, &next, &serr), 0, "%s: %s",
                 sql, serr.msg);
    BSelect *b = NULL;
    memset(err, 0, sizeof *err);
    int rc = plan_bind_select(cat, sql, st->select, pa, &b, err);
    plan_arena_free(pa);
    sql_arena_free(sa);
    cat_catalog_free(cat);
    free(v);
    free(txt);
    return rc;
}

Test(functions, pair_lookups_bind_up_to_their_limit) {
    /* x || y and x LIKE p of two text columns: a table of every pair of
     * dictionary entries, up to 2^20 pairs (docs/sql.md); beyond, the text
     * or the match is made at run time (a CPU-only to-text node) */
    const char *sql[] = {"SELECT s LIKE s FROM t", "SELECT i FROM t WHERE s NOT LIKE s || '%'"};
    for (size_t k = 0; k < sizeof sql / sizeof sql[0]; k++) {
        PlanError e;
        cr_expect_eq(bind_sql_rows(sql[k], 1000, &e), 0, "%s: %s", sql[k], e.msg);
        cr_expect_eq(bind_sql_rows(sql[k], 1100, &e), 0, "%s: %s", sql[k], e.msg);
    }
    PlanError e;
    cr_expect_eq(bind_sql_rows("SELECT s || s FROM t", 1000, &e), 0, "%s", e.msg);
    cr_expect_eq(bind_sql_rows("SELECT s || s, s || s = 'v1v1' FROM t", 1100, &e), 0, "%s", e.msg);
    cr_expect_eq(bind_sql_rows("SELECT UPPER(s || s) FROM t", 1100, &e), -1);
    cr_expect_str_eq(e.stage, "Not implemented", "%s", e.msg);
}

Test(functions, quantile_fraction_must_be_a_constant_in_0_1) {
    const char *bad[] = {
        "SELECT QUANTILE_CONT(i, 1.5) FROM t",   "SELECT QUANTILE_DISC(i, -0.5) FROM t",
        "SELECT QUANTILE_CONT(i, i) FROM t",     "SELECT QUANTILE_CONT(i, NULL) FROM t",
        "SELECT QUANTILE_DISC(i, '0.5') FROM t", "SELECT MEDIAN(i, 0.5) FROM t",
        "SELECT MEDIAN(MEDIAN(i)) FROM t",       "SELECT i FROM t WHERE MEDIAN(i) > 0",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        PlanError e;
        cr_expect_eq(bind_sql(bad[k], &e), -1, "%s binds", bad[k]);
        cr_expect_str_eq(e.stage, "Binder", "%s: %s: %s", bad[k], e.stage, e.msg);
    }
}

Test(binder, string_vs_number_is_an_error) {
    /* documented deviation (docs/sql.md): SQLite orders numbers before text */
    const char *bad[] = {
        "SELECT s = 1 FROM t",
        "SELECT s = i < 2 FROM t",
        "SELECT i FROM t WHERE 1.5 <> s",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        PlanError e;
        cr_expect_eq(bind_sql(bad[k], &e), -1, "%s binds", bad[k]);
        cr_expect_str_eq(e.stage, "Binder", "%s: %s: %s", bad[k], e.stage, e.msg);
    }
}
