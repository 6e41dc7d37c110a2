/*
 * test_readcsv.c -- files in FROM (issue 14 item 3): read_csv('f.csv', ...)
 * and 'f.csv' / 'f.tbl' through the API: errors that name the stage and
 * the file and never block (a FIFO, /dev/zero), a value past the sniffed
 * sample widening its column, the shell's .import statements (CREATE
 * TABLE AS / INSERT ... SELECT from read_csv), the per-statement cache,
 * bare quotes, .tbl files and the options. Inferred types and values are
 * compared with DuckDB's in tests/csv/check_duckdb.py.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog/catalog.h"
#include "include/gqp.h"

/* A fresh temporary folder (static buffer). */
static const char *tmpdir(void) {
    static char dir[64];
    strcpy(dir, "/tmp/gqp_readcsv_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

/* Write text to dir/name; returns the path (static buffer, one at a time). */
static const char *put(const char *dir, const char *name, const char *text) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static gqp *open_db(void) {
    gqp *db = NULL;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK, "%s", gqp_errmsg(db));
    return db;
}

/* Run every statement of sql, asserting success. */
static void run_ok(gqp *db, const char *sql) {
    const char *p = sql;
    while (p && *p) {
        gqp_stmt *st = NULL;
        cr_assert_eq(gqp_prepare(db, p, -1, &st, &p), GQP_OK, "%s: %s", sql, gqp_errmsg(db));
        if (!st) break;
        int rc;
        while ((rc = gqp_step(st)) == GQP_ROW)
            ;
        cr_assert_eq(rc, GQP_DONE, "%s: %s", sql, gqp_errmsg(db));
        gqp_finalize(st);
    }
}

/* Prepare (and step) sql expecting an error; returns gqp's message. */
static const char *run_err(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    if (rc == GQP_OK && st) {
        while ((rc = gqp_step(st)) == GQP_ROW)
            ;
        gqp_finalize(st);
        if (rc == GQP_DONE) rc = GQP_OK;
    }
    cr_assert_neq(rc, GQP_OK, "%s: expected an error", sql);
    return gqp_errmsg(db);
}

/* The text of row 0, column 0 of sql (static buffer). */
static const char *one_text(gqp *db, const char *sql) {
    static char buf[256];
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s: %s", sql, gqp_errmsg(db));
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s: %s", sql, gqp_errmsg(db));
    const char *v = gqp_column_text(st, 0);
    snprintf(buf, sizeof buf, "%s", v ? v : "NULL");
    gqp_finalize(st);
    return buf;
}

/* The type of result column col of sql. */
static gqp_type col_type(gqp *db, const char *sql, int col) {
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s: %s", sql, gqp_errmsg(db));
    int rc = gqp_step(st);
    cr_assert(rc == GQP_ROW || rc == GQP_DONE, "%s: %s", sql, gqp_errmsg(db));
    gqp_type t = gqp_column_type(st, col);
    gqp_finalize(st);
    return t;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

Test(readcsv, errors_name_the_stage_and_the_file) {
    gqp *db = open_db();
    const char *dir = tmpdir();
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT * FROM '%s/missing.csv'", dir);
    const char *m = run_err(db, sql);
    cr_assert(strstr(m, "Catalog Error:") && strstr(m, "missing.csv") && strstr(m, "No such file"),
              "%s", m);
    cr_assert_eq(gqp_extended_errcode(db), GQP_ERROR_CATALOG, "%s", m);
    snprintf(sql, sizeof sql, "SELECT * FROM read_csv('%s')", dir);
    m = run_err(db, sql);
    cr_assert(strstr(m, "is a directory"), "%s", m);
    put(dir, "empty.csv", "");
    snprintf(sql, sizeof sql, "SELECT * FROM '%s/empty.csv'", dir);
    m = run_err(db, sql);
    cr_assert(strstr(m, "empty.csv: the file is empty"), "%s", m);
    put(dir, "blank.csv", "\n\r\n\n");
    snprintf(sql, sizeof sql, "SELECT * FROM '%s/blank.csv'", dir);
    m = run_err(db, sql);
    cr_assert(strstr(m, "empty"), "%s", m);
    m = run_err(db, "SELECT * FROM read_csv('')");
    cr_assert(strstr(m, "Binder Error") && strstr(m, "empty"), "%s", m);
    m = run_err(db, "SELECT * FROM read_csv('x.csv', quote = '''')");
    cr_assert(strstr(m, "Binder Error: read_csv: option 'quote' is not supported"), "%s", m);
    m = run_err(db, "SELECT * FROM read_csv('x.csv', header = 'yes')");
    cr_assert(strstr(m, "option 'header' takes true or false"), "%s", m);
    m = run_err(db, "SELECT * FROM read_csv('x.csv', delim = ',,')");
    cr_assert(strstr(m, "option 'delim'"), "%s", m);
    m = run_err(db, "SELECT * FROM read_csv(['a.csv', 'b.csv'])");
    cr_assert(strstr(m, "a list of files is not supported"), "%s", m);
    /* a path longer than the system allows */
    char *big = malloc(9000);
    strcpy(big, "SELECT * FROM '");
    memset(big + 15, 'a', 8000);
    strcpy(big + 8015, "'");
    m = run_err(db, big);
    cr_assert(strstr(m, "Catalog Error") && strstr(m, "...") && strstr(m, "too long"), "%s", m);
    free(big);
    gqp_close(db);
}

Test(readcsv, fifo_and_devices_fail_fast) {
    gqp *db = open_db();
    const char *dir = tmpdir();
    char fifo[128], sql[256];
    snprintf(fifo, sizeof fifo, "%s/pipe.csv", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    double t0 = now_s();
    snprintf(sql, sizeof sql, "SELECT * FROM read_csv('%s')", fifo);
    const char *m = run_err(db, sql);
    cr_assert(strstr(m, "not a regular file"), "%s", m);
    m = run_err(db, "SELECT * FROM '/dev/zero'");
    cr_assert(strstr(m, "/dev/zero: not a regular file"), "%s", m);
    m = run_err(db, "SELECT * FROM read_csv('/dev/null')");
    cr_assert(strstr(m, "not a regular file"), "%s", m);
    /* the config loader's reader does not wait for a writer either */
    Catalog *cat = cat_catalog_new();
    const char *names[] = {"a"};
    CatType types[] = {CAT_INT64};
    CatTableDef def = {.name = "p",
                       .source = fifo,
                       .format = CAT_FMT_CSV,
                       .ncols = 1,
                       .col_names = names,
                       .col_types = types};
    CatError err;
    cr_assert_neq(cat_load_table(cat, &def, &err), 0);
    cr_assert(strstr(err.msg, "not a regular file"), "%s", err.msg);
    cat_catalog_free(cat);
    /* nothing waited: well under the seconds a blocked open would take */
    cr_assert_lt(now_s() - t0, 5.0);
    unlink(fifo);
    gqp_close(db);
}

Test(readcsv, bad_row_names_file_line_and_nothing_stays_loaded) {
    gqp *db = open_db();
    const char *dir = tmpdir();
    char sql[512];
    const char *p = put(dir, "bad.csv", "a,b\n1,x\n2,y\nz,w\n");
    snprintf(sql, sizeof sql,
             "SELECT * FROM read_csv('%s', columns = {'a': 'INTEGER', 'b': 'TEXT'})", p);
    const char *m = run_err(db, sql);
    cr_assert(strstr(m, "bad.csv:4: column 'a': cannot parse 'z'"), "%s", m);
    p = put(dir, "ragged.csv", "a,b\n1,2\n3,4,5\n");
    snprintf(sql, sizeof sql, "SELECT * FROM '%s'", p);
    m = run_err(db, sql);
    cr_assert(strstr(m, "ragged.csv:3:") && strstr(m, "expected 2"), "%s", m);
    /* no temporary table outlives the failed statements */
    m = run_err(db, "SELECT * FROM __gqp_temp_1");
    cr_assert(strstr(m, "__gqp_temp_1"), "%s", m);
    gqp_close(db);
}

Test(readcsv, value_past_the_sample_widens_its_column) {
    gqp *db = open_db();
    const char *dir = tmpdir();
    size_t cap = 64 * (CAT_SNIFF_ROWS + 100);
    char *text = malloc(cap), *o = text;
    o += sprintf(o, "i,d,s\n");
    for (int r = 0; r < CAT_SNIFF_ROWS + 10; r++)
        o += sprintf(o, "%d,%d,2020-01-01\n", r, r);
    o += sprintf(o, "1,2.5,tomorrow\n");
    const char *p = put(dir, "wide.csv", text);
    free(text);
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT SUM(d), COUNT(*), MAX(s) FROM '%s'", p);
    cr_assert_eq(col_type(db, sql, 0), GQP_TYPE_FLOAT64);
    snprintf(sql, sizeof sql, "SELECT i, d, s FROM '%s' LIMIT 1", p);
    cr_assert_eq(col_type(db, sql, 0), GQP_TYPE_INT64);
    cr_assert_eq(col_type(db, sql, 1), GQP_TYPE_FLOAT64);
    cr_assert_eq(col_type(db, sql, 2), GQP_TYPE_STRING);
    snprintf(sql, sizeof sql, "SELECT SUM(d) FROM '%s'", p);
    long long n = CAT_SNIFF_ROWS + 10;
    char want[64];
    snprintf(want, sizeof want, "%.1f", (double)(n * (n - 1) / 2) + 2.5);
    cr_assert_str_eq(one_text(db, sql), want);
    snprintf(sql, sizeof sql, "SELECT s FROM '%s' WHERE i = 1 AND d = 2.5", p);
    cr_assert_str_eq(one_text(db, sql), "tomorrow");
    char *out = NULL;
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM '%s'", p);
    cr_assert_eq(gqp_explain(db, sql, -1, 0, &out), GQP_OK, "%s", gqp_errmsg(db));
    cr_assert(strstr(out, "wide.csv") && strstr(out, "read 2 more times"), "%s", out);
    gqp_free(out);
    gqp_close(db);
}

Test(readcsv, import_statements_of_the_shell) {
    /* cli/shell.c's .import FILE TABLE runs exactly these two statements */
    gqp *db = open_db();
    const char *dir = tmpdir();
    const char *p = put(dir, "people.csv", "name,age,born\nann,31,1993-05-01\nbob,,1980-12-24\n");
    char sql[512];
    snprintf(sql, sizeof sql, "CREATE TABLE \"People\" AS SELECT * FROM read_csv('%s')", p);
    run_ok(db, sql);
    cr_assert_eq(col_type(db, "SELECT age, born, name FROM People", 0), GQP_TYPE_INT64);
    cr_assert_eq(col_type(db, "SELECT age, born, name FROM People", 1), GQP_TYPE_DATE);
    cr_assert_eq(col_type(db, "SELECT age, born, name FROM People", 2), GQP_TYPE_STRING);
    snprintf(sql, sizeof sql, "INSERT INTO \"People\" SELECT * FROM read_csv('%s')", p);
    run_ok(db, sql);
    cr_assert_str_eq(one_text(db, "SELECT COUNT(*) FROM People"), "4");
    cr_assert_str_eq(one_text(db, "SELECT COUNT(age) FROM People"), "2");
    cr_assert_str_eq(one_text(db, "SELECT MIN(born) FROM People"), "1980-12-24");
    /* the file's rows are converted to an existing table's types */
    run_ok(db, "CREATE TABLE t2(name TEXT, age REAL, born TEXT)");
    snprintf(sql, sizeof sql, "INSERT INTO t2 SELECT * FROM read_csv('%s')", p);
    run_ok(db, sql);
    cr_assert_str_eq(one_text(db, "SELECT MAX(age) FROM t2"), "31.0");
    gqp_close(db);
}

Test(readcsv, same_file_is_read_once_per_statement) {
    gqp *db = open_db();
    const char *dir = tmpdir();
    const char *p = put(dir, "k.csv", "k,v\n1,10\n2,20\n3,30\n");
    char path[256], sql[1024];
    snprintf(path, sizeof path, "%s", p);
    snprintf(sql, sizeof sql,
             "SELECT a.k, b.v FROM '%s' a JOIN read_csv('%s') b ON a.k = b.k "
             "WHERE a.v > (SELECT MIN(v) FROM '%s') ORDER BY a.k",
             path, path, path);
    char *out = NULL;
    cr_assert_eq(gqp_explain(db, sql, -1, 0, &out), GQP_OK, "%s", gqp_errmsg(db));
    int loads = 0, again = 0;
    for (const char *s = out; (s = strstr(s, "rows; delimiter")); s++)
        loads++;
    for (const char *s = out; (s = strstr(s, "read once for this statement")); s++)
        again++;
    cr_assert_eq(loads, 1, "%s", out);
    cr_assert_eq(again, 2, "%s", out);
    gqp_free(out);
    snprintf(sql, sizeof sql,
             "SELECT SUM(b.v) FROM '%s' a JOIN read_csv('%s') b ON a.k = b.k "
             "WHERE a.v > (SELECT MIN(v) FROM '%s')",
             path, path, path);
    cr_assert_str_eq(one_text(db, sql), "50");
    /* a prepared statement keeps its rows; planned again after a table
     * change, it reads the file again */
    gqp_stmt *st = NULL;
    snprintf(sql, sizeof sql, "SELECT SUM(v) FROM '%s'", path);
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_step(st), GQP_ROW);
    cr_assert_str_eq(gqp_column_text(st, 0), "60");
    put(dir, "k.csv", "k,v\n1,100\n");
    run_ok(db, "CREATE TABLE bump(x INTEGER)");
    gqp_reset(st);
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s", gqp_errmsg(db));
    cr_assert_str_eq(gqp_column_text(st, 0), "100");
    gqp_finalize(st);
    gqp_close(db);
}

Test(readcsv, bare_quotes_tbl_and_options) {
    gqp *db = open_db();
    const char *dir = tmpdir();
    char sql[512];
    /* a quote inside an unquoted field is a character (SQLite, DuckDB) */
    const char *p = put(dir, "q.csv", "a,b\n1,5\"11\n2,\"x,\ny\"\n3,it\"s\n");
    snprintf(sql, sizeof sql, "SELECT b FROM '%s' WHERE a = 1", p);
    cr_assert_str_eq(one_text(db, sql), "5\"11");
    snprintf(sql, sizeof sql, "SELECT b FROM '%s' WHERE a = 2", p);
    cr_assert_str_eq(one_text(db, sql), "x,\ny");
    snprintf(sql, sizeof sql, "SELECT b FROM '%s' WHERE a = 3", p);
    cr_assert_str_eq(one_text(db, sql), "it\"s");
    /* dbgen's .tbl: '|', a trailing '|', no header; qualified by the stem */
    p = put(dir, "nation.tbl", "0|ALGERIA|0|haggle|\n1|ARGENTINA|1|al foxes|\n");
    snprintf(sql, sizeof sql, "SELECT COUNT(*), MAX(nation.column1) FROM '%s'", p);
    cr_assert_str_eq(one_text(db, sql), "2");
    snprintf(sql, sizeof sql, "SELECT column3 FROM '%s' WHERE column0 = 1", p);
    cr_assert_str_eq(one_text(db, sql), "al foxes");
    snprintf(sql, sizeof sql, "SELECT column0 FROM read_csv('%s') WHERE column1 = 'ALGERIA'", p);
    cr_assert_str_eq(one_text(db, sql), "0");
    /* options: header, delim ('\t' is a tab), nullstr, columns, types */
    p = put(dir, "o.txt", "1\t\\N\tx\n2\tNA\t\n");
    snprintf(sql, sizeof sql,
             "SELECT COUNT(column1), COUNT(column2) FROM read_csv('%s', delim = '\\t', "
             "header = false, nullstr = ['\\N', 'NA'])",
             p);
    cr_assert_str_eq(one_text(db, sql), "0");
    snprintf(sql, sizeof sql,
             "SELECT COUNT(column2) FROM read_csv('%s', delim := '\\t', nullstr = '\\N')", p);
    cr_assert_str_eq(one_text(db, sql), "2"); /* the empty field is '' */
    snprintf(sql, sizeof sql,
             "SELECT SUM(n) FROM read_csv('%s', sep = '\\t', columns = {'n': 'DOUBLE', "
             "b: 'TEXT', 'c': 'TEXT'})",
             p);
    cr_assert_str_eq(one_text(db, sql), "3.0");
    snprintf(sql, sizeof sql, "SELECT column0 FROM read_csv('%s', types = ['TEXT']) LIMIT 1", p);
    cr_assert_eq(col_type(db, sql, 0), GQP_TYPE_STRING);
    snprintf(sql, sizeof sql, "SELECT * FROM read_csv('%s', types = {'nope': 'TEXT'})", p);
    const char *m = run_err(db, sql);
    cr_assert(strstr(m, "nope"), "%s", m);
    snprintf(sql, sizeof sql,
             "SELECT * FROM read_csv('%s', columns = {'a': 'BLOB', 'b': 'TEXT', 'c': 'TEXT'})", p);
    m = run_err(db, sql);
    cr_assert(strstr(m, "unknown type 'BLOB'"), "%s", m);
    gqp_close(db);
}

Test(readcsv, implicit_aliases_are_made_unique) {
    /* DuckDB: read_csv, read_csv_1, ...; a file's stem as for a table */
    gqp *db = open_db();
    const char *dir = tmpdir();
    char a[256], b[256], sql[1024];
    snprintf(a, sizeof a, "%s", put(dir, "x.csv", "p,q\n1,2\n3,4\n"));
    snprintf(b, sizeof b, "%s", put(dir, "y.csv", "r\n5\n6\n7\n"));
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM read_csv('%s'), read_csv('%s')", a, b);
    cr_assert_str_eq(one_text(db, sql), "6");
    snprintf(sql, sizeof sql,
             "SELECT SUM(read_csv.p * read_csv_1.r) FROM read_csv('%s'), read_csv('%s')", a, b);
    cr_assert_str_eq(one_text(db, sql), "72");
    snprintf(sql, sizeof sql, "SELECT SUM(x.p + x_1.q) FROM '%s', '%s'", a, a);
    cr_assert_str_eq(one_text(db, sql), "20");
    run_ok(db, "CREATE TABLE x(p INTEGER); INSERT INTO x VALUES (100)");
    snprintf(sql, sizeof sql, "SELECT SUM(x.p + x_1.q) FROM x, '%s'", a);
    cr_assert_str_eq(one_text(db, sql), "206");
    gqp_close(db);
}
