/*
 * test_catalog.c -- unit tests of catalog/: dictionaries, types, dates,
 * loading (CSV, .tbl, binary, YAML), errors, INSERT, stats and histograms,
 * cat_gen_test.
 *
 * Expected values come from the data the test itself writes, from
 * independent brute-force references (qsort, strtod, a day-by-day calendar)
 * or from sqlite3 (on PATH; tests that need it skip without it), never from
 * gqp's own output.
 */
#include "catalog/catalog.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

/* Criterion fixture: a fresh temporary folder per test. */
static void setup(void) {
    strcpy(tmpdir, "/tmp/gqp_cat_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

/* Criterion fixture: remove the temporary folder. */
static void teardown(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", tmpdir);
}

TestSuite(catalog, .init = setup, .fini = teardown);

/* Path of `name` inside the test's folder, in a static rotating buffer. */
static const char *tpath(const char *name) {
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, 512, "%s/%s", tmpdir, name);
    return b;
}

/* Write text to the test folder's file `name`; returns its path. */
static const char *put(const char *name, const char *text) {
    const char *p = tpath(name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "cannot write %s", p);
    fputs(text, f);
    fclose(f);
    return p;
}

/* Load a config; returns the catalog (caller frees) and cat_load_config's
 * return code in *rc. */
static Catalog *load(const char *yaml_name, int *rc, CatError *err) {
    Catalog *c = cat_catalog_new();
    cr_assert_not_null(c);
    err->msg[0] = '\0';
    *rc = cat_load_config(c, tpath(yaml_name), NULL, err);
    return c;
}

/* qsort comparator for C strings in dictionary order (memcmp, shorter
 * first): strcmp is exactly that for strings without NUL bytes. */
static int cstr_cmp(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* --------------------------------------------------------------- dict -- */

/* 1 if the sqlite3 shell is on PATH (the reference for two tests). */
static int have_sqlite3(void) {
    return system("sqlite3 -version > /dev/null 2>&1") == 0;
}

Test(catalog, dict_build_find_lower_bound) {
    const char *in[] = {"pear", "apple", "", "apple", "applesauce", "b", "appl", "pear", "Zed"};
    int64_t n = sizeof in / sizeof in[0];
    size_t lens[16];
    int32_t codes[16];
    for (int64_t i = 0; i < n; i++)
        lens[i] = strlen(in[i]);
    CatDict *d = cat_dict_build(in, lens, n, codes);
    cr_assert_not_null(d);
    /* Reference: sorted distinct strings by qsort + strcmp. */
    const char *ref[16];
    memcpy(ref, in, sizeof(char *) * (size_t)n);
    qsort(ref, (size_t)n, sizeof ref[0], cstr_cmp);
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++)
        if (u == 0 || strcmp(ref[u - 1], ref[i]) != 0) ref[u++] = ref[i];
    cr_assert_eq(d->n, u);
    for (int64_t i = 0; i < u; i++) {
        cr_assert_str_eq(cat_dict_str(d, i), ref[i]);
        cr_assert_eq(cat_dict_len(d, i), (int64_t)strlen(ref[i]));
    }
    for (int64_t i = 0; i < n; i++)
        cr_assert_str_eq(cat_dict_str(d, codes[i]), in[i]);
    /* sorted: "", "Zed", "appl", "apple", "applesauce", "b", "pear" */
    for (int64_t i = 0; i < u; i++)
        cr_assert_eq(cat_dict_find(d, ref[i], strlen(ref[i])), i);
    cr_assert_eq(cat_dict_find(d, "apple", 5), 3);
    cr_assert_eq(cat_dict_find(d, "", 0), 0);
    cr_assert_eq(cat_dict_find(d, "appl", 4), 2);
    cr_assert_eq(cat_dict_find(d, "apples", 6), -1);
    cr_assert_eq(cat_dict_find(d, "zzz", 3), -1);
    cr_assert_eq(cat_dict_lower_bound(d, "apples", 6), cat_dict_find(d, "applesauce", 10));
    cr_assert_eq(cat_dict_lower_bound(d, "zzz", 3), d->n);
    cr_assert_eq(cat_dict_lower_bound(d, "", 0), 0);
    cr_assert_eq(cat_dict_str(d, -1), NULL);
    cr_assert_eq(cat_dict_str(d, d->n), NULL);
    cat_dict_free(d);
}

Test(catalog, dict_random_against_qsort) {
    enum { N = 20000 };
    static char store[N][8];
    const char *s[N];
    size_t lens[N];
    static int32_t codes[N];
    srand(7);
    for (int i = 0; i < N; i++) {
        int len = rand() % 5; /* short strings over a tiny alphabet: many repeats, prefixes */
        for (int k = 0; k < len; k++)
            store[i][k] = (char)('a' + rand() % 3);
        store[i][len] = '\0';
        s[i] = store[i];
        lens[i] = (size_t)len;
    }
    CatDict *d = cat_dict_build(s, lens, N, codes);
    cr_assert_not_null(d);
    for (int64_t i = 1; i < d->n; i++)
        cr_assert_lt(strcmp(cat_dict_str(d, i - 1), cat_dict_str(d, i)), 0);
    for (int i = 0; i < N; i++) {
        cr_assert_str_eq(cat_dict_str(d, codes[i]), s[i]);
        /* lower_bound brute force: first code whose string >= s[i]+"b" */
        char probe[10];
        snprintf(probe, sizeof probe, "%sb", s[i]);
        int64_t lb = 0;
        while (lb < d->n && strcmp(cat_dict_str(d, lb), probe) < 0)
            lb++;
        cr_assert_eq(cat_dict_lower_bound(d, probe, strlen(probe)), lb);
    }
    cat_dict_free(d);
}

/* -------------------------------------------------------------- types -- */

Test(catalog, type_parse_spellings) {
    struct {
        const char *s;
        CatType t;
    } ok[] = {{"INT32", CAT_INT32},     {"int64", CAT_INT64},
              {"Float32", CAT_FLOAT32}, {"FLOAT64", CAT_FLOAT64},
              {"date", CAT_DATE},       {"BOOL", CAT_BOOL},
              {"string", CAT_STRING},   {"INTEGER", CAT_INT64},
              {"int", CAT_INT64},       {"BIGINT", CAT_INT64},
              {"smallint", CAT_INT32},  {"REAL", CAT_FLOAT64},
              {"double", CAT_FLOAT64},  {"FLOAT", CAT_FLOAT64},
              {"boolean", CAT_BOOL},    {"TEXT", CAT_STRING},
              {"varchar", CAT_STRING},  {"VARCHAR(40)", CAT_STRING},
              {"char(1)", CAT_STRING},  {" varchar (25) ", CAT_STRING}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        CatType t = CAT_NULL;
        cr_assert_eq(cat_type_parse(ok[i].s, &t), 0, "%s", ok[i].s);
        cr_assert_eq(t, ok[i].t, "%s", ok[i].s);
    }
    const char *bad[] = {"", "INT33", "VARCHAR(", "VARCHAR(x)", "INT(4)", "STRINGS", "DECIMAL"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CatType t;
        cr_assert_eq(cat_type_parse(bad[i], &t), -1, "%s", bad[i]);
    }
    cr_assert_eq(cat_type_width(CAT_INT64), 8);
    cr_assert_eq(cat_type_width(CAT_BOOL), 1);
    cr_assert_eq(cat_type_width(CAT_STRING), 4);
    cr_assert_str_eq(cat_type_name(CAT_FLOAT32), "FLOAT32");
}

Test(catalog, dates_against_day_by_day_calendar) {
    /* Independent reference: walk the calendar one day at a time. */
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y = 1600, m = 1, d = 1;
    int32_t days = -135140; /* 1600-01-01: checked below against sqlite3 */
    for (int k = 0; k < 800 * 366; k++) {
        char s[48], out[16];
        snprintf(s, sizeof s, "%04d-%02d-%02d", y, m, d);
        int32_t got;
        cr_assert_eq(cat_parse_date(s, 10, &got), 0, "%s", s);
        cr_assert_eq(got, days, "%s", s);
        cat_format_date(days, out);
        cr_assert_str_eq(out, s);
        int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        if (++d > mdays[m - 1] + (m == 2 && leap)) {
            d = 1;
            if (++m > 12) {
                m = 1;
                y++;
            }
        }
        days++;
    }
    int32_t z;
    cr_assert_eq(cat_parse_date("1970-01-01", 10, &z), 0);
    cr_assert_eq(z, 0);
    const char *bad[] = {"1999-02-29", "2000-13-01", "2000-00-10", "2000-01-32",
                         "20000101",   "2000-1-01",  "2000-01-0x", "2000/01/01"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(cat_parse_date(bad[i], strlen(bad[i]), &z), -1, "%s", bad[i]);
    cr_assert_eq(cat_parse_date("2000-02-29", 10, &z), 0);
}

Test(catalog, date_epoch_offset_matches_sqlite) {
    if (!have_sqlite3()) cr_skip_test("sqlite3 not on PATH");
    FILE *p = popen("sqlite3 :memory: \"select julianday('1600-01-01') - "
                    "julianday('1970-01-01'), julianday('2024-02-29') - julianday('1970-01-01');\"",
                    "r");
    cr_assert_not_null(p);
    double a = 0, b = 0;
    cr_assert_eq(fscanf(p, "%lf|%lf", &a, &b), 2);
    pclose(p);
    int32_t da, db;
    cr_assert_eq(cat_parse_date("1600-01-01", 10, &da), 0);
    cr_assert_eq(cat_parse_date("2024-02-29", 10, &db), 0);
    cr_assert_eq(da, (int32_t)a);
    cr_assert_eq(db, (int32_t)b);
}

/* ---------------------------------------------------------- CSV / tbl -- */

static const char *yaml_abc = "tables:\n"
                              "  - name: t\n"
                              "    source: t.csv\n"
                              "    format: csv\n"
                              "    header: %s\n"
                              "    columns:\n"
                              "      - {name: a, type: INT32}\n"
                              "      - {name: b, type: FLOAT64}\n"
                              "      - {name: s, type: VARCHAR(10)}\n"
                              "      - {name: d, type: DATE}\n"
                              "      - {name: big, type: BIGINT}\n"
                              "      - {name: f, type: FLOAT32}\n"
                              "      - {name: ok, type: BOOLEAN}\n";

/* Check the 3-row table that the CSV tests load. */
static void check_abc(const Catalog *c) {
    CatTable *t = cat_find_table(c, "T");
    cr_assert_not_null(t);
    cr_assert_eq(t->nrows, 3);
    cr_assert_eq(t->ncols, 7);
    const int32_t *a = t->cols[0].data;
    const double *b = t->cols[1].data;
    const int64_t *big = t->cols[4].data;
    const float *f = t->cols[5].data;
    const uint8_t *ok = t->cols[6].data;
    cr_assert_eq(a[0], 1);
    cr_assert_eq(a[1], -2147483648LL);
    cr_assert_eq(a[2], 2147483647);
    cr_assert_eq(b[0], strtod("0.1", NULL));
    cr_assert_eq(b[1], strtod("-1.5e300", NULL));
    cr_assert_eq(b[2], strtod("123456789012345678901234567890", NULL));
    const CatColumn *s = &t->cols[2];
    const int32_t *sc = s->data;
    cr_assert_str_eq(cat_dict_str(s->dict, sc[0]), "x, \"quoted\"");
    cr_assert_str_eq(cat_dict_str(s->dict, sc[1]), "line1\nline2");
    cr_assert_str_eq(cat_dict_str(s->dict, sc[2]), "plain");
    cr_assert_eq(s->dict->n, 3);
    int32_t d0;
    cat_parse_date("1995-03-17", 10, &d0);
    cr_assert_eq(((int32_t *)t->cols[3].data)[0], d0);
    cr_assert_eq(big[0], 9223372036854775807LL);
    cr_assert_eq(big[1], -9223372036854775807LL - 1);
    cr_assert_eq(f[0], (float)strtod("3.14159", NULL));
    cr_assert_eq(ok[0], 1);
    cr_assert_eq(ok[1], 0);
    cr_assert_eq(ok[2], 1);
    cr_assert_eq(t->cols[0].valid, NULL);
}

static const char *csv_abc_rows =
    "1,0.1,\"x, \"\"quoted\"\"\",1995-03-17,9223372036854775807,3.14159,true\n"
    "-2147483648,-1.5e300,\"line1\nline2\",2000-02-29,-9223372036854775808,1e-3,0\r\n"
    "2147483647,123456789012345678901234567890,plain,1970-01-01,0,-0,T\n";

Test(catalog, csv_with_header) {
    char y[1024], csv[1024];
    snprintf(y, sizeof y, yaml_abc, "true");
    put("gqp.yaml", y);
    snprintf(csv, sizeof csv, "a,b,s,d,big,f,ok\n%s", csv_abc_rows);
    put("t.csv", csv);
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    check_abc(c);
    cat_catalog_free(c);
}

Test(catalog, csv_without_header_and_header_count_checked) {
    char y[1024];
    snprintf(y, sizeof y, yaml_abc, "false");
    put("gqp.yaml", y);
    put("t.csv", csv_abc_rows);
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    check_abc(c);
    cat_catalog_free(c);
    /* header: true with a 6-column header is an error */
    snprintf(y, sizeof y, yaml_abc, "true");
    put("gqp.yaml", y);
    char csv[1024];
    snprintf(csv, sizeof csv, "a,b,s,d,big,f\n%s", csv_abc_rows);
    put("t.csv", csv);
    c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(e.msg, "t.csv:1:") && strstr(e.msg, "header"), "%s", e.msg);
    cr_assert_null(cat_find_table(c, "t"));
    cat_catalog_free(c);
}

Test(catalog, tbl_with_trailing_pipe) {
    put("gqp.yaml", "tables:\n"
                    "  - name: supplier\n"
                    "    source: supplier.tbl\n"
                    "    format: tbl\n"
                    "    columns:\n"
                    "      - {name: s_suppkey, type: INT32}\n"
                    "      - {name: s_name, type: CHAR(25)}\n"
                    "      - {name: s_city, type: TEXT}\n"
                    "      - {name: s_bal, type: DOUBLE}\n");
    put("supplier.tbl", "1|Supplier#000000001|\"ok\"|-5.5|\n"
                        "2|Supplier#000000002|UNITED KI1||\n"
                        "3|Supplier#000000003|x,y|7|\n");
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "supplier");
    cr_assert_not_null(t);
    cr_assert_eq(t->nrows, 3);
    cr_assert_eq(((int32_t *)t->cols[0].data)[2], 3);
    const CatColumn *city = &t->cols[2];
    /* .tbl has no quoting: quotes are data; commas are data */
    cr_assert_str_eq(cat_dict_str(city->dict, ((int32_t *)city->data)[0]), "\"ok\"");
    cr_assert_str_eq(cat_dict_str(city->dict, ((int32_t *)city->data)[2]), "x,y");
    const CatColumn *bal = &t->cols[3];
    cr_assert_not_null(bal->valid);
    cr_assert_eq(bal->valid[0], 1);
    cr_assert_eq(bal->valid[1], 0);
    cr_assert_eq(((double *)bal->data)[0], -5.5);
    cr_assert_eq(bal->stats.nulls, 1);
    cr_assert_eq(bal->stats.min, -5.5);
    cr_assert_eq(bal->stats.max, 7);
    cr_assert_str_eq(t->source, tpath("supplier.tbl"));
    cat_catalog_free(c);
}

Test(catalog, nulls_only_where_empty_and_unquoted) {
    put("gqp.yaml", "tables:\n"
                    "  - name: n\n"
                    "    source: n.csv\n"
                    "    columns: [{name: i, type: INT64}, {name: s, type: STRING},"
                    " {name: d, type: DATE}, {name: k, type: INT32}]\n");
    put("n.csv", "1,,,5\n"
                 ",\"\",2001-01-01,6\n"
                 "\n"
                 "3,z,,7\n");
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "n");
    cr_assert_eq(t->nrows, 3); /* blank line skipped */
    const CatColumn *i = &t->cols[0], *s = &t->cols[1], *d = &t->cols[2], *k = &t->cols[3];
    cr_assert_not_null(i->valid);
    cr_assert(i->valid[0] && !i->valid[1] && i->valid[2]);
    cr_assert(!s->valid[0] && s->valid[1] && s->valid[2]);
    cr_assert_eq(s->dict->n, 2); /* "" and "z"; NULL is not a string */
    cr_assert_str_eq(cat_dict_str(s->dict, ((int32_t *)s->data)[1]), "");
    cr_assert(!d->valid[0] && d->valid[1] && !d->valid[2]);
    cr_assert_null(k->valid);
    cr_assert_eq(i->stats.nulls, 1);
    cr_assert_eq(d->stats.nulls, 2);
    cr_assert_eq(i->stats.min, 1);
    cr_assert_eq(i->stats.max, 3);
    cr_assert_eq(i->stats.distinct, 2);
    cat_catalog_free(c);
}

/* ------------------------------------------------------ error reports -- */

/* Load a two-table config where table `bad` has body `rows`; expect the
 * error to mention every needle, `bad` absent and `good` loaded. */
static void expect_bad_row(const char *rows, const char *const *needles, int nneedles) {
    put("gqp.yaml", "tables:\n"
                    "  - name: bad\n"
                    "    source: bad.csv\n"
                    "    header: true\n"
                    "    columns:\n"
                    "      - {name: id, type: INT32}\n"
                    "      - {name: price, type: FLOAT32}\n"
                    "      - {name: day, type: DATE}\n"
                    "  - name: good\n"
                    "    source: good.csv\n"
                    "    columns: [{name: x, type: INT32}]\n");
    put("good.csv", "10\n20\n");
    char *body = malloc(strlen(rows) + 32);
    sprintf(body, "id,price,day\n%s", rows);
    put("bad.csv", body);
    free(body);
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, -1);
    cr_assert(strncmp(e.msg, "Catalog Error: ", 15) == 0, "%s", e.msg);
    cr_assert(strstr(e.msg, "bad.csv"), "%s", e.msg);
    for (int i = 0; i < nneedles; i++)
        cr_assert(strstr(e.msg, needles[i]), "missing '%s' in: %s", needles[i], e.msg);
    cr_assert_null(cat_find_table(c, "bad"));
    CatTable *g = cat_find_table(c, "good");
    cr_assert_not_null(g);
    cr_assert_eq(g->nrows, 2);
    cr_assert_eq(((int32_t *)g->cols[0].data)[1], 20);
    cat_catalog_free(c);
}

Test(catalog, bad_int_names_file_line_column_value) {
    const char *n[] = {":4:", "column 'id'", "'x17'", "INT32"};
    expect_bad_row("1,2.5,2000-01-01\n2,3,2000-01-02\nx17,4,2000-01-03\n4,5,2000-01-04\n", n, 4);
}

Test(catalog, int32_out_of_range_is_an_error) {
    const char *n[] = {":2:", "column 'id'", "'2147483648'", "INT32"};
    expect_bad_row("2147483648,1,2000-01-01\n", n, 4);
}

Test(catalog, bad_date_and_bad_float) {
    const char *n[] = {":3:", "column 'day'", "'2001-02-30'", "DATE"};
    expect_bad_row("1,1,2000-01-01\n2,2,2001-02-30\n", n, 4);
    const char *m[] = {":2:", "column 'price'", "'1.5.5'", "FLOAT32"};
    expect_bad_row("1,1.5.5,2000-01-01\n", m, 4);
}

Test(catalog, wrong_field_count) {
    const char *n[] = {":3:", "column 'day'", "missing"};
    expect_bad_row("1,1,2000-01-01\n2,2\n", n, 3);
    const char *m[] = {":2:", "'extra'", "expected 3"};
    expect_bad_row("1,1,2000-01-01,extra\n", m, 3);
}

Test(catalog, error_line_counts_quoted_newlines_and_big_files) {
    /* > 1 MB so that several threads parse; the bad row is near the end. */
    size_t cap = 3u << 20;
    char *body = malloc(cap);
    size_t len = 0;
    int rows = 60000;
    for (int i = 0; i < rows; i++)
        len += (size_t)snprintf(body + len, cap - len, "%d,%d.25,2000-01-01\n", i, i);
    /* line 1 is the header, row i is line i + 2; break row 59990 */
    len += (size_t)snprintf(body + len, cap - len, "1,1,1999-99-99\n");
    for (int i = 0; len < (1u << 21); i++)
        len += (size_t)snprintf(body + len, cap - len, "%d,%d.5,2000-01-01\n", i, i);
    char line[32];
    snprintf(line, sizeof line, ":%d:", rows + 2);
    const char *n[] = {line, "column 'day'", "'1999-99-99'"};
    expect_bad_row(body, n, 3);
    free(body);
}

Test(catalog, error_line_after_quoted_newline) {
    put("gqp.yaml", "tables:\n  - name: q\n    source: q.csv\n"
                    "    columns: [{name: s, type: STRING}, {name: n, type: INT32}]\n");
    put("q.csv", "\"a\nb\",1\n\"c\",2\n\"d\",three\n");
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(e.msg, "q.csv:4:") && strstr(e.msg, "column 'n'") && strstr(e.msg, "'three'"),
              "%s", e.msg);
    cr_assert_eq(c->ntables, 0);
    cat_catalog_free(c);
}

Test(catalog, malformed_yaml_loads_nothing) {
    put("good.csv", "1\n");
    put("gqp.yaml", "tables:\n"
                    "  - name: good\n"
                    "    source: good.csv\n"
                    "    columns: [{name: x, type: INT32}\n"
                    "  - name: other\n");
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(e.msg, "Catalog Error: ") == e.msg, "%s", e.msg);
    char where[600];
    snprintf(where, sizeof where, "%s:5:", tpath("gqp.yaml"));
    cr_assert(strstr(e.msg, where), "%s", e.msg);
    cr_assert_eq(c->ntables, 0);
    cat_catalog_free(c);
}

Test(catalog, unknown_key_and_unknown_type) {
    put("good.csv", "1\n");
    put("gqp.yaml", "tables:\n"
                    "  - name: good\n"
                    "    source: good.csv\n"
                    "    columns: [{name: x, type: INT32}]\n"
                    "  - name: two\n"
                    "    source: good.csv\n"
                    "    sauce: x\n"
                    "    columns: [{name: x, type: INT32}]\n");
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(e.msg, "gqp.yaml:7:") && strstr(e.msg, "'sauce'"), "%s", e.msg);
    cr_assert_eq(c->ntables, 0);
    cat_catalog_free(c);
    put("gqp.yaml", "tables:\n"
                    "  - name: good\n"
                    "    source: good.csv\n"
                    "    columns:\n"
                    "      - {name: x, type: INT32}\n"
                    "      - {name: y, type: HUGEINT}\n");
    c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(e.msg, "gqp.yaml:6:") && strstr(e.msg, "'HUGEINT'"), "%s", e.msg);
    cr_assert_eq(c->ntables, 0);
    cat_catalog_free(c);
}

Test(catalog, settings_and_missing_file) {
    put("gqp.yaml",
        "device:\n  gpu_cache_bytes: 8589934592\n  cost_file: costs.yaml\n"
        "tables:\n  - {name: m, source: nothere.csv, columns: [{name: x, type: INT}]}\n");
    Catalog *c = cat_catalog_new();
    CatSettings s;
    CatError e;
    int rc = cat_load_config(c, tpath("gqp.yaml"), &s, &e);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(e.msg, "nothere.csv"), "%s", e.msg);
    cr_assert_eq(s.gpu_cache_bytes, 8589934592LL);
    cr_assert_str_eq(s.cost_file, tpath("costs.yaml"));
    cr_assert_eq(c->ntables, 0);
    cat_catalog_free(c);
}

/* ------------------------------------------------------------- binary -- */

Test(catalog, binary_round_trip) {
    put("gqp.yaml", "tables:\n"
                    "  - name: r\n"
                    "    source: r.csv\n"
                    "    columns:\n"
                    "      - {name: i, type: INT32}\n"
                    "      - {name: l, type: INT64}\n"
                    "      - {name: f, type: FLOAT32}\n"
                    "      - {name: g, type: FLOAT64}\n"
                    "      - {name: d, type: DATE}\n"
                    "      - {name: b, type: BOOL}\n"
                    "      - {name: s, type: STRING}\n"
                    "  - name: rb\n"
                    "    source: rbin\n"
                    "    format: binary\n"
                    "    columns:\n"
                    "      - {name: i, type: INT32}\n"
                    "      - {name: l, type: INT64}\n"
                    "      - {name: f, type: FLOAT32}\n"
                    "      - {name: g, type: FLOAT64}\n"
                    "      - {name: d, type: DATE}\n"
                    "      - {name: b, type: BOOL}\n"
                    "      - {name: s, type: STRING}\n");
    put("r.csv", "1,10,1.5,2.25,1992-01-01,true,MAIL\n"
                 "2,,0.1,-3,,false,AIR\n"
                 "3,30,-7,1e10,1998-12-31,,\n"
                 "4,40,8,0,2000-06-15,1,MAIL\n");
    Catalog *c = cat_catalog_new();
    CatError e;
    CatTableDef def;
    /* First only the CSV table (the binary folder does not exist yet). */
    put("only.yaml", "tables:\n  - name: r\n    source: r.csv\n    columns:\n"
                     "      - {name: i, type: INT32}\n      - {name: l, type: INT64}\n"
                     "      - {name: f, type: FLOAT32}\n      - {name: g, type: FLOAT64}\n"
                     "      - {name: d, type: DATE}\n      - {name: b, type: BOOL}\n"
                     "      - {name: s, type: STRING}\n");
    cr_assert_eq(cat_load_config(c, tpath("only.yaml"), NULL, &e), 0, "%s", e.msg);
    CatTable *r = cat_find_table(c, "r");
    cr_assert_eq(cat_write_binary(r, tpath("rbin"), &e), 0, "%s", e.msg);
    /* Then load the folder through cat_load_table. */
    const char *names[] = {"i", "l", "f", "g", "d", "b", "s"};
    CatType types[] = {CAT_INT32, CAT_INT64, CAT_FLOAT32, CAT_FLOAT64,
                       CAT_DATE,  CAT_BOOL,  CAT_STRING};
    memset(&def, 0, sizeof def);
    def.name = "rb";
    def.source = tpath("rbin");
    def.format = CAT_FMT_BINARY;
    def.ncols = 7;
    def.col_names = names;
    def.col_types = types;
    cr_assert_eq(cat_load_table(c, &def, &e), 0, "%s", e.msg);
    CatTable *b = cat_find_table(c, "rb");
    cr_assert_eq(b->nrows, 4);
    /* loading read nothing: each column is read on its first use */
    for (int k = 0; k < 7; k++)
        cr_assert_eq(cat_column_loaded(b, k), 0);
    cr_assert_eq(cat_column_use(b, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(cat_column_loaded(b, 1), 1);
    cr_assert_eq(cat_column_loaded(b, 0), 0);
    cr_assert_eq(cat_table_use_all(b, &e), 0, "%s", e.msg);
    for (int k = 0; k < 7; k++) {
        const CatColumn *x = &r->cols[k], *y = &b->cols[k];
        cr_assert_eq(memcmp(x->data, y->data, 4 * cat_type_width(x->type)), 0, "%s", x->name);
        cr_assert_eq(!x->valid, !y->valid, "%s", x->name);
        if (x->valid) cr_assert_eq(memcmp(x->valid, y->valid, 4), 0);
        cr_assert_eq(x->stats.nulls, y->stats.nulls);
        cr_assert_eq(x->stats.rows, y->stats.rows);
        cr_assert_eq(x->stats.distinct, y->stats.distinct);
        cr_assert_eq(x->stats.has_minmax, y->stats.has_minmax);
        if (x->stats.has_minmax) {
            cr_assert_eq(x->stats.min, y->stats.min);
            cr_assert_eq(x->stats.max, y->stats.max);
        }
        cr_assert_eq(!x->stats.hist, !y->stats.hist);
        if (x->stats.hist) cr_assert_eq(x->stats.hist->n, y->stats.hist->n);
    }
    const CatColumn *s = &b->cols[6];
    cr_assert_eq(s->dict->n, 2);
    cr_assert_str_eq(cat_dict_str(s->dict, 0), "AIR");
    cr_assert_str_eq(cat_dict_str(s->dict, 1), "MAIL");
    cr_assert_eq(((double *)b->cols[3].data)[2], 1e10);
    cr_assert_eq(((float *)b->cols[2].data)[1], 0.1f);
    cat_catalog_free(c);
}

Test(catalog, binary_size_mismatch_and_bad_dict) {
    FILE *f;
    mkdir(tpath("bin"), 0777);
    int32_t a[3] = {1, 2, 3};
    int64_t l[2] = {1, 2};
    f = fopen(tpath("bin/a.bin"), "wb");
    fwrite(a, sizeof a, 1, f);
    fclose(f);
    f = fopen(tpath("bin/l.bin"), "wb");
    fwrite(l, sizeof l, 1, f);
    fclose(f);
    put("gqp.yaml", "tables:\n  - name: b\n    source: bin\n    format: binary\n"
                    "    columns: [{name: a, type: INT32}, {name: l, type: INT64}]\n"
                    "  - name: s\n    source: bin\n    format: binary\n"
                    "    columns: [{name: a, type: STRING}]\n");
    put("bin/a.dict", "b\na\nc\n"); /* not sorted */
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(e.msg, "l.bin") && strstr(e.msg, "2 rows") && strstr(e.msg, "3"), "%s", e.msg);
    /* b is not added; s is (its dictionary is read on first use) */
    cr_assert_eq(c->ntables, 1);
    cr_assert_null(cat_find_table(c, "b"));
    cat_catalog_free(c);
    /* Only the dictionary table now: it loads (nothing is read), and its
     * first use fails on the unsorted dict, naming the file. */
    put("gqp.yaml", "tables:\n  - name: s\n    source: bin\n    format: binary\n"
                    "    columns: [{name: a, type: STRING}]\n");
    c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    cr_assert_eq(cat_column_use(cat_find_table(c, "s"), 0, &e), -1);
    cr_assert(strstr(e.msg, "a.dict") && strstr(e.msg, "sorted"), "%s", e.msg);
    cr_assert_eq(cat_column_loaded(cat_find_table(c, "s"), 0), 0); /* still unread */
    put("bin/a.dict", "a\nb\n"); /* sorted, but code 2 is out of range */
    cat_catalog_free(c);
    c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    cr_assert_eq(cat_column_use(cat_find_table(c, "s"), 0, &e), -1);
    cr_assert(strstr(e.msg, "a.bin") && strstr(e.msg, "out of range"), "%s", e.msg);
    cat_catalog_free(c);
    /* a .dict missing altogether is still an error of the load */
    unlink(tpath("bin/a.dict"));
    c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(e.msg, "a.dict"), "%s", e.msg);
    cat_catalog_free(c);
    /* a NUL byte or invalid UTF-8 inside a dictionary string */
    const char *bad[] = {"a\nb\nc\xff\n", "a\nb\0x\nc\n"};
    const size_t blen[] = {7, 8};
    const char *why[] = {"a.dict:3:", "a.dict:2:"};
    for (int i = 0; i < 2; i++) {
        f = fopen(tpath("bin/a.dict"), "wb");
        fwrite(bad[i], 1, blen[i], f);
        fclose(f);
        c = load("gqp.yaml", &rc, &e);
        cr_assert_eq(rc, 0, "%s", e.msg);
        cr_assert_eq(cat_column_use(cat_find_table(c, "s"), 0, &e), -1);
        cr_assert(strstr(e.msg, why[i]) && (strstr(e.msg, "UTF-8") || strstr(e.msg, "NUL")), "%s",
                  e.msg);
        cat_catalog_free(c);
    }
}

/* ------------------------------------------------- text to numbers -- */

Test(catalog, text_to_number_like_sqlite_cast) {
    /* expected values: sqlite3 3.40, SELECT CAST('...' AS INTEGER / REAL) */
    static const struct {
        const char *s;
        int64_t i;
        double f;
    } cases[] = {
        {"1e3", 1, 1000.0},
        {" 12abc", 12, 12.0},
        {"0x10", 0, 0.0},
        {"1.9", 1, 1.9},
        {"abc", 0, 0.0},
        {"", 0, 0.0},
        {".5", 0, 0.5},
        {"  +3.", 3, 3.0},
        {"1e", 1, 1.0},
        {"1e+", 1, 1.0},
        {"-0012", -12, -12.0},
        {"\t\n 7", 7, 7.0},
        {"inf", 0, 0.0},
        {"nan", 0, 0.0},
        {"-2.25e-1x", -2, -0.225},
        {"99999999999999999999", INT64_MAX, 1e20},
        {"-99999999999999999999", INT64_MIN, -1e20},
        {"9223372036854775807", INT64_MAX, 9223372036854775807.0},
        {"-9223372036854775808", INT64_MIN, -9223372036854775808.0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cr_expect_eq(cat_text_to_int64(cases[k].s), cases[k].i, "int of '%s': %lld", cases[k].s,
                     (long long)cat_text_to_int64(cases[k].s));
        cr_expect_eq(cat_text_to_real(cases[k].s), cases[k].f, "real of '%s': %.17g", cases[k].s,
                     cat_text_to_real(cases[k].s));
    }
    cr_expect(isinf(cat_text_to_real("1e400")) && cat_text_to_real("1e400") > 0);
    cr_expect(signbit(cat_text_to_real("-")), "'-' reads as -0.0, as in SQLite");
}

/* ------------------------------------------------------------- INSERT -- */

Test(catalog, create_and_insert_conversions) {
    Catalog *c = cat_catalog_new();
    CatError e;
    const char *names[] = {"i", "l", "g", "s", "d", "b"};
    CatType types[] = {CAT_INT32, CAT_INT64, CAT_FLOAT64, CAT_STRING, CAT_DATE, CAT_BOOL};
    cr_assert_eq(cat_create_table(c, "t", 6, names, types, &e), 0, "%s", e.msg);
    cr_assert_eq(cat_create_table(c, "T", 6, names, types, &e), -1);
    cr_assert(strstr(e.msg, "already exists"), "%s", e.msg);
    CatTable *t = cat_find_table(c, "t");
    cr_assert_eq(t->nrows, 0);
    CatValue v[12] = {
        {CAT_V_INT, 7, 0, NULL},     {CAT_V_FLOAT, 0, 3.0, NULL},     {CAT_V_INT, 2, 0, NULL},
        {CAT_V_INT, 42, 0, NULL},    {CAT_V_STR, 0, 0, "2020-02-29"}, {CAT_V_INT, 1, 0, NULL},
        {CAT_V_STR, 0, 0, " 12"},    {CAT_V_STR, 0, 0, "-5"},         {CAT_V_STR, 0, 0, "2.5e1"},
        {CAT_V_FLOAT, 0, 2.5, NULL}, {CAT_V_NULL, 0, 0, NULL},        {CAT_V_STR, 0, 0, "false"},
    };
    /* " 12" does not parse entirely as an integer: the whole INSERT fails. */
    cr_assert_eq(cat_insert_rows(t, 2, v, &e), -1);
    cr_assert(strstr(e.msg, "row 2") && strstr(e.msg, "column 'i'") && strstr(e.msg, " 12"), "%s",
              e.msg);
    cr_assert_eq(t->nrows, 0);
    v[6].s = "12";
    cr_assert_eq(cat_insert_rows(t, 2, v, &e), 0, "%s", e.msg);
    cr_assert_eq(t->nrows, 2);
    cr_assert_eq(((int32_t *)t->cols[0].data)[1], 12);
    cr_assert_eq(((int64_t *)t->cols[1].data)[0], 3);
    cr_assert_eq(((int64_t *)t->cols[1].data)[1], -5);
    cr_assert_eq(((double *)t->cols[2].data)[0], 2.0);
    cr_assert_eq(((double *)t->cols[2].data)[1], 25.0);
    const CatColumn *s = &t->cols[3];
    /* SQLite: CAST(42 AS TEXT) = '42', CAST(2.5 AS TEXT) = '2.5' */
    cr_assert_str_eq(cat_dict_str(s->dict, ((int32_t *)s->data)[0]), "42");
    cr_assert_str_eq(cat_dict_str(s->dict, ((int32_t *)s->data)[1]), "2.5");
    int32_t day;
    cat_parse_date("2020-02-29", 10, &day);
    cr_assert_eq(((int32_t *)t->cols[4].data)[0], day);
    cr_assert_not_null(t->cols[4].valid);
    cr_assert_eq(t->cols[4].valid[1], 0);
    cr_assert_eq(((uint8_t *)t->cols[5].data)[1], 0);

    /* Atomicity: a bad value in the last column of the last row changes
     * nothing, including the string dictionary. */
    CatValue w[12] = {
        {CAT_V_INT, 1, 0, NULL},    {CAT_V_INT, 1, 0, NULL},     {CAT_V_INT, 1, 0, NULL},
        {CAT_V_STR, 0, 0, "0-new"}, {CAT_V_NULL, 0, 0, NULL},    {CAT_V_NULL, 0, 0, NULL},
        {CAT_V_INT, 1, 0, NULL},    {CAT_V_FLOAT, 0, 1.5, NULL}, {CAT_V_INT, 1, 0, NULL},
        {CAT_V_STR, 0, 0, "x"},     {CAT_V_NULL, 0, 0, NULL},    {CAT_V_NULL, 0, 0, NULL},
    };
    cr_assert_eq(cat_insert_rows(t, 2, w, &e), -1); /* 1.5 into INT64 */
    cr_assert(strstr(e.msg, "column 'l'") && strstr(e.msg, "1.5"), "%s", e.msg);
    cr_assert_eq(t->nrows, 2);
    cr_assert_eq(s->dict->n, 2);
    cr_assert_eq(t->cols[0].n, 2);
    w[7].f = 8.0;
    cr_assert_eq(cat_insert_rows(t, 2, w, &e), 0, "%s", e.msg);
    cr_assert_eq(t->nrows, 4);
    cr_assert(t->stale);
    cr_assert(s->dict->unsorted); /* appended in row order: "42", "2.5", "0-new", "x" */
    cr_assert_eq(cat_table_ready(t), 0);
    cr_assert(!t->stale && !s->dict->unsorted);
    /* "0-new" sorts first: old rows were re-coded */
    cr_assert_eq(s->dict->n, 4);
    cr_assert_str_eq(cat_dict_str(s->dict, 0), "0-new");
    cr_assert_str_eq(cat_dict_str(s->dict, ((int32_t *)s->data)[0]), "42");
    cr_assert_str_eq(cat_dict_str(s->dict, ((int32_t *)s->data)[2]), "0-new");
    cr_assert_eq(s->stats.distinct, 4);
    cr_assert_eq(t->cols[5].stats.nulls, 2);

    /* Out of range for INT32, text into DATE that is not a date. */
    CatValue big[6] = {{CAT_V_INT, 3000000000LL, 0, NULL}, {CAT_V_NULL, 0, 0, NULL},
                       {CAT_V_NULL, 0, 0, NULL},           {CAT_V_NULL, 0, 0, NULL},
                       {CAT_V_NULL, 0, 0, NULL},           {CAT_V_NULL, 0, 0, NULL}};
    cr_assert_eq(cat_insert_rows(t, 1, big, &e), -1);
    big[0].i = 5;
    big[4] = (CatValue){CAT_V_STR, 0, 0, "yesterday"};
    cr_assert_eq(cat_insert_rows(t, 1, big, &e), -1);
    cr_assert(strstr(e.msg, "yesterday") && strstr(e.msg, "DATE"), "%s", e.msg);
    cr_assert_eq(t->nrows, 4);
    cat_catalog_free(c);
}

/* -------------------------------------------------------------- stats -- */

/* qsort comparator for long long ascending. */
static int ll_cmp(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

Test(catalog, stats_against_brute_force) {
    enum { N = 300000 };
    FILE *f = fopen(tpath("s.csv"), "w");
    cr_assert_not_null(f);
    long long mn = 1LL << 62, mx = -(1LL << 62);
    static long long all[N];
    for (int i = 0; i < N; i++) {
        long long v = (long long)((unsigned)i * 2654435761u % 1000003u) - 500000;
        all[i] = v;
        int small = i % 1000;
        fprintf(f, "%lld,%d\n", v, small);
        if (v < mn) mn = v;
        if (v > mx) mx = v;
    }
    fclose(f);
    qsort(all, N, sizeof all[0], ll_cmp);
    int64_t exact = 0;
    for (int i = 0; i < N; i++)
        exact += i == 0 || all[i] != all[i - 1];
    put("gqp.yaml", "tables:\n  - name: s\n    source: s.csv\n"
                    "    columns: [{name: v, type: INT64}, {name: k, type: INT32}]\n");
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "s");
    const CatStats *v = &t->cols[0].stats, *k = &t->cols[1].stats;
    cr_assert_eq(v->rows, N);
    cr_assert_eq(v->min, (double)mn);
    cr_assert_eq(v->max, (double)mx);
    cr_assert(fabs((double)v->distinct - (double)exact) < 0.06 * (double)exact,
              "estimate %lld, exact %lld", (long long)v->distinct, (long long)exact);
    cr_assert_eq(k->distinct, 1000); /* exact for few distinct values */
    cr_assert_eq(k->min, 0);
    cr_assert_eq(k->max, 999);
    cat_catalog_free(c);
}

/* Fraction of the n non-NULL values of column c (as doubles) that are < v,
 * or <= v when incl: a brute-force reference for histogram bounds. */
static double true_frac(const CatColumn *c, double v, int incl) {
    int64_t hit = 0, nn = 0;
    for (int64_t i = 0; i < c->n; i++) {
        if (c->valid && !c->valid[i]) continue;
        double x;
        switch (c->type) {
        case CAT_FLOAT32:
            x = ((const float *)c->data)[i];
            break;
        case CAT_FLOAT64:
            x = ((const double *)c->data)[i];
            break;
        case CAT_INT64:
            x = (double)((const int64_t *)c->data)[i];
            break;
        case CAT_BOOL:
            x = ((const uint8_t *)c->data)[i];
            break;
        default:
            x = ((const int32_t *)c->data)[i];
            break;
        }
        nn++;
        hit += incl ? x <= v : x < v;
    }
    return nn ? (double)hit / (double)nn : 0;
}

/* Shape invariants of a histogram (CatHist in catalog.h) over column c. */
static void check_hist_shape(const CatColumn *c) {
    const CatHist *h = c->stats.hist;
    cr_assert_not_null(h, "%s: no histogram", c->name);
    cr_assert(h->n >= 1 && h->n <= CAT_HIST_BUCKETS + 1, "%s: %d bounds", c->name, h->n);
    cr_assert(h->nsample >= 1 && h->nsample <= CAT_HIST_SAMPLE, "%s", c->name);
    cr_assert(h->ndv >= h->n && h->ndv <= h->nsample, "%s", c->name);
    cr_assert_eq(h->lt[0], 0, "%s", c->name);
    cr_assert_eq(h->le[h->n - 1], 1, "%s", c->name);
    cr_assert(h->val[0] >= c->stats.min && h->val[h->n - 1] <= c->stats.max, "%s", c->name);
    for (int k = 0; k < h->n; k++) {
        cr_assert(h->lt[k] < h->le[k], "%s bound %d", c->name, k);
        if (k + 1 < h->n) {
            cr_assert(h->val[k] < h->val[k + 1], "%s bound %d", c->name, k);
            cr_assert(h->le[k] <= h->lt[k + 1], "%s bound %d", c->name, k);
            /* equi-depth: no bucket holds much more than 1/B of the values
             * besides the bounds' own frequent values */
            cr_assert(h->lt[k + 1] - h->le[k] <= 1.0 / CAT_HIST_BUCKETS + 1e-9, "%s bucket %d",
                      c->name, k);
        }
    }
}

Test(catalog, histogram_matches_the_data_of_sampled_columns) {
    enum { N = 300000 }; /* more rows than CAT_HIST_SAMPLE: sampled */
    CatError e;
    cr_assert_eq(cat_gen_test(tmpdir, N, 7, &e), 0, "%s", e.msg);
    Catalog *c = cat_catalog_new();
    cr_assert_eq(cat_load_config(c, tpath("gqp.yaml"), NULL, &e), 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "test");
    cr_assert_not_null(t);
    for (int k = 0; k < t->ncols; k++) {
        const CatColumn *col = &t->cols[k];
        check_hist_shape(col);
        const CatHist *h = col->stats.hist;
        cr_assert(h->nsample > CAT_HIST_SAMPLE * 99 / 100, "%s: %lld sampled", col->name,
                  (long long)h->nsample);
        /* At every bound the sample's fractions are within a few standard
         * errors (sqrt(1/4 / 65536) = 0.002) of the column's. */
        for (int b = 0; b < h->n; b++) {
            double lt = true_frac(col, h->val[b], 0), le = true_frac(col, h->val[b], 1);
            cr_assert(fabs(h->lt[b] - lt) < 0.01, "%s bound %g: lt %g, true %g", col->name,
                      h->val[b], h->lt[b], lt);
            cr_assert(fabs(h->le[b] - le) < 0.01, "%s bound %g: le %g, true %g", col->name,
                      h->val[b], h->le[b], le);
        }
    }
    /* normali5 has ~45 distinct values: every value holding more than a
     * bucket's worth (1/64) of the rows is a bound; |v| <= 8 hold over 2%
     * each. */
    const CatHist *h5 = t->cols[2].stats.hist;
    for (int v = -8; v <= 8; v++) {
        int found = 0;
        for (int b = 0; b < h5->n; b++)
            found |= h5->val[b] == v;
        cr_assert(found, "normali5 value %d is not a bound", v);
    }
    /* Deterministic: a second load gives the same histograms. */
    Catalog *c2 = cat_catalog_new();
    cr_assert_eq(cat_load_config(c2, tpath("gqp.yaml"), NULL, &e), 0, "%s", e.msg);
    CatTable *t2 = cat_find_table(c2, "test");
    for (int k = 0; k < t->ncols; k++) {
        const CatHist *a = t->cols[k].stats.hist, *b = t2->cols[k].stats.hist;
        cr_assert_eq(a->n, b->n);
        cr_assert_eq(a->nsample, b->nsample);
        cr_assert_eq(memcmp(a->val, b->val, 4 * (size_t)a->n * sizeof(double)), 0, "%s",
                     t->cols[k].name);
    }
    cat_catalog_free(c2);
    cat_catalog_free(c);
}

Test(catalog, histogram_is_exact_for_small_columns_and_skips_nulls) {
    enum { N = 50000 }; /* at most CAT_HIST_SAMPLE rows: every value is sampled */
    FILE *f = fopen(tpath("h.csv"), "w");
    cr_assert_not_null(f);
    int64_t nonnull = 0;
    for (int i = 0; i < N; i++) {
        /* v: skewed (40% are 1000, the rest spread over 0..96), NULL in every
         * third row; s: a string, 70% "a" */
        unsigned r = (unsigned)i * 2654435761u;
        if (i % 3 == 0)
            fputs(",", f);
        else {
            fprintf(f, "%d,", r % 10 < 4 ? 1000 : (int)(r >> 8) % 97);
            nonnull++;
        }
        fprintf(f, "%s\n", (r >> 4) % 10 < 7 ? "a" : (r >> 12) % 2 ? "b" : "zz");
    }
    fclose(f);
    put("gqp.yaml", "tables:\n  - name: h\n    source: h.csv\n"
                    "    columns: [{name: v, type: INT32}, {name: s, type: STRING}]\n");
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "h");
    const CatColumn *v = &t->cols[0], *s = &t->cols[1];
    check_hist_shape(v);
    check_hist_shape(s);
    cr_assert_eq(v->stats.hist->nsample, nonnull);
    cr_assert_eq(s->stats.hist->nsample, N);
    for (int k = 0; k < 2; k++) {
        const CatColumn *col = &t->cols[k];
        const CatHist *h = col->stats.hist;
        for (int b = 0; b < h->n; b++) {
            cr_assert(fabs(h->lt[b] - true_frac(col, h->val[b], 0)) < 1e-12, "%s", col->name);
            cr_assert(fabs(h->le[b] - true_frac(col, h->val[b], 1)) < 1e-12, "%s", col->name);
        }
    }
    /* the frequent values are bounds, with their exact frequency */
    const CatHist *hv = v->stats.hist;
    cr_assert_eq(hv->val[hv->n - 1], 1000);
    cr_assert(fabs((hv->le[hv->n - 1] - hv->lt[hv->n - 1]) - (1 - true_frac(v, 999, 1))) < 1e-12);
    const CatHist *hs = s->stats.hist; /* codes: a = 0, b = 1, zz = 2 */
    cr_assert_eq(hs->n, 3);
    cr_assert(fabs(hs->le[0] - true_frac(s, 0, 1)) < 1e-12);
    cat_catalog_free(c);
}

Test(catalog, histogram_follows_create_and_insert) {
    CatError e;
    Catalog *c = cat_catalog_new();
    const char *names[] = {"x", "y"};
    CatType types[] = {CAT_FLOAT64, CAT_INT64};
    cr_assert_eq(cat_create_table(c, "t", 2, names, types, &e), 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "t");
    cr_assert_null(t->cols[0].stats.hist); /* no rows */
    enum { R = 1000 };
    CatValue *v = calloc(2 * R, sizeof *v);
    for (int i = 0; i < R; i++) {
        v[2 * i] = (CatValue){.kind = CAT_V_FLOAT, .f = i < R / 2 ? 0.5 : 100.0 + i};
        v[2 * i + 1] = (CatValue){.kind = CAT_V_NULL};
    }
    cr_assert_eq(cat_insert_rows(t, R, v, &e), 0, "%s", e.msg);
    cr_assert_eq(cat_table_ready(t), 0);
    check_hist_shape(&t->cols[0]);
    cr_assert_null(t->cols[1].stats.hist); /* all NULL */
    const CatHist *h = t->cols[0].stats.hist;
    cr_assert_eq(h->nsample, R);
    cr_assert_eq(h->val[0], 0.5);
    cr_assert_eq(h->le[0], 0.5);
    /* a second INSERT replaces the histogram (the old one is freed: the
     * ASan build checks) */
    for (int i = 0; i < R; i++)
        v[2 * i] = (CatValue){.kind = CAT_V_FLOAT, .f = -1.0 * i};
    cr_assert_eq(cat_insert_rows(t, R, v, &e), 0, "%s", e.msg);
    cr_assert_eq(cat_table_ready(t), 0);
    check_hist_shape(&t->cols[0]);
    h = t->cols[0].stats.hist;
    cr_assert_eq(h->nsample, 2 * R);
    cr_assert_eq(h->val[0], -(R - 1));
    cr_assert(fabs(h->lt[0]) < 1e-12);
    cr_assert(fabs(h->le[h->n - 1] - 1) < 1e-12);
    free(v);
    cat_catalog_free(c);
}

/* ------------------------------------------------------ float parsing -- */

Test(catalog, float_fields_match_strtod) {
    enum { N = 50000 };
    char **txt = malloc(N * sizeof *txt);
    FILE *f = fopen(tpath("fl.csv"), "w");
    srand(11);
    for (int i = 0; i < N; i++) {
        char b[64];
        switch (i % 5) {
        case 0:
            snprintf(b, sizeof b, "%.17g", (double)rand() / RAND_MAX * pow(10, rand() % 40 - 20));
            break;
        case 1:
            snprintf(b, sizeof b, "%d.%06d", rand() % 100000 - 50000, rand() % 1000000);
            break;
        case 2:
            snprintf(b, sizeof b, "%.3e", (double)rand() * 1e-300);
            break;
        case 3:
            snprintf(b, sizeof b, "0.%018d%d", rand(), rand() % 10);
            break;
        default:
            snprintf(b, sizeof b, "%d%d.5", rand(), rand());
            break;
        }
        txt[i] = strdup(b);
        fprintf(f, "%s,%s\n", b, b);
    }
    fclose(f);
    put("gqp.yaml", "tables:\n  - name: fl\n    source: fl.csv\n"
                    "    columns: [{name: d, type: FLOAT64}, {name: f, type: FLOAT32}]\n");
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "fl");
    for (int i = 0; i < N; i++) {
        double ref = strtod(txt[i], NULL);
        cr_assert_eq(((double *)t->cols[0].data)[i], ref, "%s", txt[i]);
        cr_assert_eq(((float *)t->cols[1].data)[i], (float)ref, "%s", txt[i]);
        free(txt[i]);
    }
    free(txt);
    cat_catalog_free(c);
}

/* ----------------------------------------------------------- gen_test -- */

/* Whole file into a malloc'ed buffer; *len set. */
static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return b;
}

Test(catalog, gen_test_deterministic) {
    CatError e;
    char d1[300], d2[300], d3[300];
    snprintf(d1, sizeof d1, "%s/a/b", tmpdir); /* missing parents are created */
    snprintf(d2, sizeof d2, "%s/c", tmpdir);
    snprintf(d3, sizeof d3, "%s/d", tmpdir);
    cr_assert_eq(cat_gen_test(d1, 150000, 42, &e), 0, "%s", e.msg);
    cr_assert_eq(cat_gen_test(d2, 150000, 42, &e), 0, "%s", e.msg);
    cr_assert_eq(cat_gen_test(d3, 150000, 43, &e), 0, "%s", e.msg);
    char p[400];
    size_t l1, l2, l3;
    snprintf(p, sizeof p, "%s/test.csv", d1);
    char *a = slurp(p, &l1);
    snprintf(p, sizeof p, "%s/test.csv", d2);
    char *b = slurp(p, &l2);
    snprintf(p, sizeof p, "%s/test.csv", d3);
    char *x = slurp(p, &l3);
    cr_assert(l1 == l2 && memcmp(a, b, l1) == 0, "same seed, different files");
    cr_assert(l1 != l3 || memcmp(a, x, l1) != 0, "different seed, same file");
    const char *hdr = "id,uniformi,normali5,normali20,uniformf,normalf5,normalf20\n";
    cr_assert(strncmp(a, hdr, strlen(hdr)) == 0);
    free(a);
    free(b);
    free(x);
}

Test(catalog, gen_test_distribution_and_sqlite_sums) {
    enum { N = 200000 };
    CatError e;
    cr_assert_eq(cat_gen_test(tmpdir, N, 7, &e), 0, "%s", e.msg);
    Catalog *c = cat_catalog_new();
    cr_assert_eq(cat_load_config(c, tpath("gqp.yaml"), NULL, &e), 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "test");
    cr_assert_not_null(t);
    cr_assert_eq(t->nrows, N);
    const int32_t *id = t->cols[0].data, *ui = t->cols[1].data, *n5 = t->cols[2].data;
    const float *uf = t->cols[4].data, *f20 = t->cols[6].data;
    double s5 = 0, q5 = 0, su = 0, sf = 0, sf20 = 0;
    long long sui = 0;
    int seen_lo = 0, seen_hi = 0;
    for (int64_t i = 0; i < N; i++) {
        cr_assert_eq(id[i], i);
        cr_assert(ui[i] >= -99 && ui[i] <= 99, "uniformi %d", ui[i]);
        seen_lo |= ui[i] == -99;
        seen_hi |= ui[i] == 99;
        cr_assert(uf[i] >= -99 && uf[i] <= 99);
        cr_assert_eq(uf[i] * 1024, floorf(uf[i] * 1024)); /* multiple of 1/1024 */
        s5 += n5[i];
        q5 += (double)n5[i] * n5[i];
        sui += ui[i];
        su += ui[i];
        sf += uf[i];
        sf20 += f20[i];
    }
    cr_assert(seen_lo && seen_hi);
    double mean = s5 / N, sd = sqrt(q5 / N - mean * mean);
    cr_assert(fabs(mean) < 0.1, "mean %g", mean);
    cr_assert(fabs(sd - 5) < 0.15, "sd %g", sd); /* rounding adds 1/12 variance */
    cr_assert(fabs(su / N) < 0.5, "uniform mean %g", su / N);
    /* sqlite3 parses the same CSV text: exact sums (multiples of 1/1024). */
    if (!have_sqlite3()) {
        cat_catalog_free(c);
        cr_skip_test("sqlite3 not on PATH: distribution checked, sums against sqlite3 not");
    }
    char cmd[800];
    snprintf(cmd, sizeof cmd,
             "sqlite3 :memory: -cmd '.mode csv' -cmd \".import '%s' t\" "
             "\"select sum(cast(uniformi as integer)), printf('%%.17g', sum(cast(uniformf as "
             "real))), printf('%%.17g', sum(cast(normalf20 as real))) from t;\"",
             tpath("test.csv"));
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    long long qsui = 0;
    double qsf = 0, qsf20 = 0;
    cr_assert_eq(fscanf(p, "%lld,%lf,%lf", &qsui, &qsf, &qsf20), 3);
    pclose(p);
    cr_assert_eq(sui, qsui);
    cr_assert_eq(sf, qsf);
    cr_assert_eq(sf20, qsf20);
    cat_catalog_free(c);
}

/* ------------------------------------------- INSERT one row at a time -- */

/* 20,000 one-row INSERTs: the column arrays and the dictionary grow
 * geometrically (a bounded number of moves, not one per row, so the cost is
 * linear overall), and after cat_table_ready() the dictionary is sorted and
 * distinct, every row decodes to its string and the stats are exact. */
Test(catalog, single_row_inserts_grow_geometrically) {
    CatError e;
    Catalog *c = cat_catalog_new();
    const char *names[] = {"i", "s", "f"};
    CatType types[] = {CAT_INT64, CAT_STRING, CAT_FLOAT64};
    cr_assert_eq(cat_create_table(c, "t", 3, names, types, &e), 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "t");
    enum { R = 20000 };
    char **want = calloc(R, sizeof *want);
    int moves_data = 0, moves_bytes = 0;
    const void *last_data = t->cols[0].data;
    const char *last_bytes = t->cols[1].dict->bytes;
    int64_t nnull = 0;
    for (int r = 0; r < R; r++) {
        char buf[32];
        snprintf(buf, sizeof buf, "k%05u", (unsigned)((r * 7919u) % 9973u)); /* repeats */
        CatValue v[3] = {
            {CAT_V_INT, r, 0, NULL}, {CAT_V_STR, 0, 0, buf}, {CAT_V_FLOAT, 0, r, NULL}};
        if (r % 7 == 3) {
            v[1] = (CatValue){CAT_V_NULL, 0, 0, NULL};
            nnull++;
        } else {
            want[r] = strdup(buf);
        }
        cr_assert_eq(cat_insert_rows(t, 1, v, &e), 0, "%s", e.msg);
        moves_data += t->cols[0].data != last_data;
        moves_bytes += t->cols[1].dict->bytes != last_bytes;
        last_data = t->cols[0].data;
        last_bytes = t->cols[1].dict->bytes;
    }
    cr_assert_lt(moves_data, 20, "%d", moves_data);
    cr_assert_lt(moves_bytes, 20, "%d", moves_bytes);
    cr_assert_eq(t->nrows, R);
    cr_assert(t->stale);
    cr_assert_eq(cat_table_ready(t), 0);
    cr_assert(!t->stale);
    const CatColumn *s = &t->cols[1];
    for (int64_t k = 1; k < s->dict->n; k++)
        cr_assert_lt(strcmp(cat_dict_str(s->dict, k - 1), cat_dict_str(s->dict, k)), 0);
    const char **sorted = malloc(R * sizeof *sorted);
    int64_t m = 0;
    for (int r = 0; r < R; r++) {
        cr_assert_eq(((int64_t *)t->cols[0].data)[r], r);
        if (!want[r]) {
            cr_assert_eq(s->valid[r], 0);
            continue;
        }
        cr_assert_eq(s->valid[r], 1);
        cr_assert_str_eq(cat_dict_str(s->dict, ((int32_t *)s->data)[r]), want[r]);
        sorted[m++] = want[r];
    }
    qsort(sorted, (size_t)m, sizeof *sorted, cstr_cmp);
    int64_t distinct = m > 0;
    for (int64_t k = 1; k < m; k++)
        distinct += strcmp(sorted[k - 1], sorted[k]) != 0;
    cr_assert_eq(s->dict->n, distinct);
    cr_assert_eq(s->stats.distinct, distinct);
    cr_assert_eq(s->stats.nulls, nnull);
    cr_assert_eq(s->stats.rows, R);
    cr_assert_eq(t->cols[2].stats.max, R - 1);
    cr_assert_null(t->cols[0].valid);
    /* one more row after the sort: codes of old rows stay valid */
    CatValue v[3] = {{CAT_V_INT, R, 0, NULL}, {CAT_V_STR, 0, 0, "a"}, {CAT_V_NULL, 0, 0, NULL}};
    cr_assert_eq(cat_insert_rows(t, 1, v, &e), 0, "%s", e.msg);
    cr_assert_eq(cat_table_ready(t), 0);
    cr_assert_str_eq(cat_dict_str(s->dict, ((int32_t *)s->data)[R]), "a");
    cr_assert_str_eq(cat_dict_str(s->dict, 0), "a");
    cr_assert_str_eq(cat_dict_str(s->dict, ((int32_t *)s->data)[0]), want[0]);
    cr_assert_not_null(t->cols[2].valid);
    cr_assert_eq(t->cols[2].valid[R], 0);
    cr_assert_eq(t->cols[2].valid[R - 1], 1);
    for (int r = 0; r < R; r++)
        free(want[r]);
    free(want);
    free(sorted);
    cat_catalog_free(c);
}

/* INSERT whose text points into the table's own dictionary (INSERT ...
 * SELECT from the same table) while the dictionary's bytes must move: the
 * old bytes stay readable until every row is appended (the ASan build
 * checks). */
Test(catalog, insert_values_from_own_dictionary) {
    CatError e;
    Catalog *c = cat_catalog_new();
    const char *names[] = {"s"};
    CatType types[] = {CAT_STRING};
    cr_assert_eq(cat_create_table(c, "t", 1, names, types, &e), 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "t");
    CatValue v0[3] = {{CAT_V_STR, 0, 0, "q"}, {CAT_V_STR, 0, 0, "b"}, {CAT_V_STR, 0, 0, "q"}};
    cr_assert_eq(cat_insert_rows(t, 3, v0, &e), 0, "%s", e.msg);
    enum { N = 40 };
    CatValue v[N];
    char longs[N][200];
    const CatColumn *col = &t->cols[0];
    for (int r = 0; r < N; r++) {
        if (r < 3) {
            v[r] = (CatValue){CAT_V_STR, 0, 0, cat_dict_str(col->dict, ((int32_t *)col->data)[r])};
        } else {
            memset(longs[r], 'a' + r % 26, 150);
            snprintf(longs[r] + 150, 50, "%d", r);
            v[r] = (CatValue){CAT_V_STR, 0, 0, longs[r]};
        }
    }
    const char *before = col->dict->bytes;
    cr_assert_eq(cat_insert_rows(t, N, v, &e), 0, "%s", e.msg);
    cr_assert_neq(col->dict->bytes, before); /* the bytes did move */
    cr_assert_eq(cat_table_ready(t), 0);
    cr_assert_eq(col->dict->n, 2 + N - 3);
    cr_assert_str_eq(cat_dict_str(col->dict, ((int32_t *)col->data)[3]), "q");
    cr_assert_str_eq(cat_dict_str(col->dict, ((int32_t *)col->data)[4]), "b");
    cr_assert_str_eq(cat_dict_str(col->dict, ((int32_t *)col->data)[N + 2]), longs[N - 1]);
    cat_catalog_free(c);
}

/* ------------------------------------------------ header by name -- */

/* Write n bytes (NULs allowed) to the test folder's file `name`. */
static void putn(const char *name, const char *text, size_t n) {
    FILE *f = fopen(tpath(name), "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(text, 1, n, f), n);
    fclose(f);
}

/* A header lists the columns in another order than the config, with other
 * case, quotes, spaces, CRLF and a column the config does not declare: the
 * values land in the columns of their names. */
Test(catalog, header_matches_columns_by_name) {
    put("gqp.yaml", "tables:\n"
                    "  - name: t\n"
                    "    source: t.csv\n"
                    "    header: true\n"
                    "    columns:\n"
                    "      - {name: qty, type: INT32}\n"
                    "      - {name: price, type: FLOAT64}\n"
                    "      - {name: s, type: TEXT}\n"
                    "  - name: u\n"
                    "    source: u.tbl\n"
                    "    header: true\n"
                    "    columns: [{name: b, type: INT32}, {name: a, type: TEXT}]\n");
    put("t.csv", "PRICE, \"s\" ,skip,Qty\r\n2.5,x,zz,4\r\n10,\"y,1\",,1\r\n");
    put("u.tbl", "a|b|\nfoo|7|\n");
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "t");
    cr_assert_eq(t->nrows, 2);
    cr_assert_eq(((int32_t *)t->cols[0].data)[0], 4);
    cr_assert_eq(((int32_t *)t->cols[0].data)[1], 1);
    cr_assert_eq(((double *)t->cols[1].data)[0], 2.5);
    cr_assert_eq(((double *)t->cols[1].data)[1], 10.0);
    const CatColumn *s = &t->cols[2];
    cr_assert_str_eq(cat_dict_str(s->dict, ((int32_t *)s->data)[1]), "y,1");
    CatTable *u = cat_find_table(c, "u");
    cr_assert_eq(u->nrows, 1);
    cr_assert_eq(((int32_t *)u->cols[0].data)[0], 7);
    cr_assert_str_eq(cat_dict_str(u->cols[1].dict, 0), "foo");
    cat_catalog_free(c);
}

/* A config column missing from the header, or named twice in it, is an
 * error naming file:line (the header's) and the column; the table is not
 * loaded, the other table is. */
Test(catalog, header_missing_or_repeated_column_is_an_error) {
    const char *yaml = "tables:\n"
                       "  - name: t\n"
                       "    source: t.csv\n"
                       "    header: true\n"
                       "    columns: [{name: qty, type: INT32}, {name: price, type: FLOAT64}]\n"
                       "  - name: g\n"
                       "    source: g.csv\n"
                       "    columns: [{name: x, type: INT32}]\n";
    put("gqp.yaml", yaml);
    put("g.csv", "1\n");
    const char *bodies[] = {"price,quantity\n1,2\n", "qty,price,QTY\n1,2,3\n", ""};
    const char *needles[] = {"header has no column 'qty'", "names column 'qty' twice",
                             "header line"};
    for (int i = 0; i < 3; i++) {
        put("t.csv", bodies[i]);
        CatError e;
        int rc;
        Catalog *c = load("gqp.yaml", &rc, &e);
        cr_assert_eq(rc, -1, "%d", i);
        cr_assert(strncmp(e.msg, "Catalog Error: ", 15) == 0, "%s", e.msg);
        cr_assert(strstr(e.msg, "t.csv:1:"), "%s", e.msg);
        cr_assert(strstr(e.msg, needles[i]), "%s", e.msg);
        cr_assert_null(cat_find_table(c, "t"));
        cr_assert_not_null(cat_find_table(c, "g"));
        cat_catalog_free(c);
    }
    /* header only: an empty table */
    put("t.csv", "price,qty\n");
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    cr_assert_eq(cat_find_table(c, "t")->nrows, 0);
    cat_catalog_free(c);
}

/* Malformed text files: each is a Catalog Error naming file:line and the
 * reason, and leaves no table behind. */
Test(catalog, malformed_text_files) {
    put("gqp.yaml", "tables:\n"
                    "  - name: m\n"
                    "    source: m.csv\n"
                    "    columns: [{name: a, type: INT32}, {name: s, type: TEXT}]\n");
    static const struct {
        const char *body;
        size_t len;
        const char *where, *what;
    } cases[] = {
        {"1,x\n2,a\0b\n", 10, "m.csv:2:", "NUL byte"},
        {"1,x\n\n3,a\xff\n", 10, "m.csv:3:", "invalid UTF-8"},
        {"1,\xc3\n", 4, "m.csv:1:", "invalid UTF-8"},         /* cut sequence */
        {"1,\xed\xa0\x80\n", 6, "m.csv:1:", "invalid UTF-8"}, /* surrogate */
        {"1,\"x\n2,y\n", 9, "m.csv:1:", "unterminated"},
        {"1,\"x\"y\n", 7, "m.csv:1:", "after closing quote"},
        {"1,x\r\n2\r\n", 8, "m.csv:2:", "missing value"},
        {"1,x,y", 5, "m.csv:1:", "extra value"},
        {"x1,x", 4, "m.csv:1:", "cannot parse"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        putn("m.csv", cases[i].body, cases[i].len);
        CatError e;
        int rc;
        Catalog *c = load("gqp.yaml", &rc, &e);
        cr_assert_eq(rc, -1, "case %zu", i);
        cr_assert(strncmp(e.msg, "Catalog Error: ", 15) == 0, "%s", e.msg);
        cr_assert(strstr(e.msg, cases[i].where), "case %zu: %s", i, e.msg);
        cr_assert(strstr(e.msg, cases[i].what), "case %zu: %s", i, e.msg);
        cr_assert_null(cat_find_table(c, "m"));
        cat_catalog_free(c);
    }
    /* a very long line: the value is quoted cut short in the error */
    size_t n = 1 << 20;
    char *big = malloc(n + 9);
    memcpy(big, "1,x\n", 4);
    memset(big + 4, '7', n);
    memcpy(big + 4 + n, ",y,z\n", 5);
    putn("m.csv", big, n + 9);
    free(big);
    CatError e;
    int rc;
    Catalog *c = load("gqp.yaml", &rc, &e);
    cr_assert_eq(rc, -1);
    cr_assert(strstr(e.msg, "m.csv:2:") && strstr(e.msg, "...") && strlen(e.msg) < 300, "%s",
              e.msg);
    cat_catalog_free(c);
    /* empty file, missing final newline, CRLF, an all-NULL string column
     * (an empty dictionary: qsort of nothing) are fine */
    const char *ok[] = {"", "1,x", "1,\r\n2,\r\n"};
    int64_t rows[] = {0, 1, 2};
    for (int i = 0; i < 3; i++) {
        put("m.csv", ok[i]);
        c = load("gqp.yaml", &rc, &e);
        cr_assert_eq(rc, 0, "%s", e.msg);
        CatTable *t = cat_find_table(c, "m");
        cr_assert_eq(t->nrows, rows[i]);
        cr_assert_eq(t->cols[1].dict->n, i == 1);
        cat_catalog_free(c);
    }
}

/* A key given twice in a YAML mapping is an error at the second one (it
 * used to override the first and leak it). */
Test(catalog, yaml_duplicate_key_is_an_error) {
    const char *ys[] = {"tables:\n  - name: t\n    name: u\n    source: t.csv\n"
                        "    columns: [{name: a, type: INT32}]\n",
                        "tables:\n  - name: t\n    source: t.csv\n"
                        "    columns: [{name: a, type: INT32, name: b}]\n",
                        "tables:\ntables:\n"};
    const char *where[] = {"gqp.yaml:3:5:", "gqp.yaml:4:38:", "gqp.yaml:2:1:"};
    put("t.csv", "1\n");
    for (int i = 0; i < 3; i++) {
        put("gqp.yaml", ys[i]);
        CatError e;
        int rc;
        Catalog *c = load("gqp.yaml", &rc, &e);
        cr_assert_eq(rc, -1);
        cr_assert(strstr(e.msg, "duplicate key") && strstr(e.msg, where[i]), "%s", e.msg);
        cr_assert_eq(c->ntables, 0);
        cat_catalog_free(c);
    }
}

/* Building a dictionary of nothing (the all-NULL column is covered by
 * malformed_text_files). */
Test(catalog, dict_of_nothing) {
    int32_t codes[1] = {5};
    CatDict *d = cat_dict_build(NULL, NULL, 0, codes);
    cr_assert_not_null(d);
    cr_assert_eq(d->n, 0);
    cr_assert_eq(codes[0], 5);
    cat_dict_free(d);
}
