/*
 * test_store.c -- issue 14 item 4: a database folder (libgqp/store.c).
 * Tables, indexes and views persist across handles; opening maps no column
 * until a query reads it; a statement whose commit fails leaves memory and
 * disk as they were; a corrupt or missing catalog, a missing column file,
 * a locked or read-only folder give errors naming the stage and file with
 * nothing loaded; left-overs of a killed commit are swept at open.
 * (tests/store/store_test.py checks answers against sqlite3 across
 * processes and kills writers with SIGKILL.)
 */
#include "include/gqp.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256]; /* the test's scratch folder */
static char db[300];  /* dir/db: the database folder */

/* Criterion fixture: a fresh scratch folder. */
static void setup(void) {
    strcpy(dir, "/tmp/gqp_store_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/db", dir);
}

/* Criterion fixture: remove it. */
static void teardown(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
}

TestSuite(store, .init = setup, .fini = teardown);

/* Open the database folder path; asserts success. */
static gqp *open_ok(const char *path) {
    gqp *h = NULL;
    cr_assert_eq(gqp_open(path, &h), GQP_OK, "%s", h ? gqp_errmsg(h) : "out of memory");
    gqp_set_device(h, GQP_DEVICE_CPU);
    return h;
}

/* Open path expecting an error whose message holds every one of want[]
 * (NULL-terminated); the handle is closed. */
static void open_fails(const char *path, const char *const *want) {
    gqp *h = NULL;
    int rc = gqp_open(path, &h);
    cr_assert_not_null(h);
    const char *m = gqp_errmsg(h);
    cr_assert_neq(rc, GQP_OK, "opened: %s", path);
    for (int i = 0; want[i]; i++)
        cr_assert(strstr(m, want[i]), "'%s' not in: %s", want[i], m);
    /* nothing half-loaded: no table is there */
    gqp_stmt *st = NULL;
    cr_assert_neq(gqp_prepare(h, "SELECT * FROM t", -1, &st, NULL), GQP_OK);
    gqp_close(h);
}

/* Run sql (one statement) to its end; returns the step's code. */
static int run(gqp *h, const char *sql) {
    gqp_stmt *st = NULL;
    int rc = gqp_prepare(h, sql, -1, &st, NULL);
    if (rc != GQP_OK) return rc;
    while ((rc = gqp_step(st)) == GQP_ROW)
        ;
    gqp_finalize(st);
    return rc;
}

/* Run sql; asserts it succeeds. */
static void exec(gqp *h, const char *sql) {
    cr_assert_eq(run(h, sql), GQP_DONE, "%s: %s", sql, gqp_errmsg(h));
}

/* The first column of every row of sql, as text joined by '|' ("NULL"
 * for NULL), into buf. */
static const char *col0(gqp *h, const char *sql, char *buf, size_t cap) {
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(h, sql, -1, &st, NULL), GQP_OK, "%s: %s", sql, gqp_errmsg(h));
    size_t n = 0;
    buf[0] = '\0';
    int rc, rows = 0;
    while ((rc = gqp_step(st)) == GQP_ROW) {
        const char *v = gqp_column_is_null(st, 0) ? "NULL" : gqp_column_text(st, 0);
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", rows++ ? "|" : "", v);
        cr_assert_lt(n, cap);
    }
    cr_assert_eq(rc, GQP_DONE, "%s: %s", sql, gqp_errmsg(h));
    gqp_finalize(st);
    return buf;
}

/* Write text to path. */
static void put(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* The catalog's "next" folder number. */
static long next_folder(void) {
    char path[400], line[256];
    snprintf(path, sizeof path, "%s/gqp.catalog", db);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    long n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "next %ld", &n) == 1) break;
    fclose(f);
    return n;
}

/* The folder ("t<N>") the catalog names for table name, into out. */
static void folder_of(const char *name, char *out, size_t cap) {
    char path[400], line[4096], tname[256];
    snprintf(path, sizeof path, "%s/gqp.catalog", db);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    long num = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "table %255s %ld", tname, &num) == 2 && strcmp(tname, name) == 0) break;
    fclose(f);
    cr_assert_geq(num, 0, "no table %s in the catalog", name);
    snprintf(out, cap, "t%ld", num);
}

/* A small database: t(a, s, d) with 3 rows, a unique index on a, a view. */
static void make_small(void) {
    gqp *h = open_ok(db);
    exec(h, "CREATE TABLE t(a INTEGER, s TEXT, d DECIMAL(10,2))");
    exec(h, "INSERT INTO t VALUES (1, 'one', 1.25), (2, NULL, NULL), (3, 'three', -7.5)");
    exec(h, "CREATE UNIQUE INDEX ta ON t(a)");
    exec(h, "CREATE VIEW v(x) AS SELECT a * 10 FROM t WHERE s IS NOT NULL");
    gqp_close(h);
}

Test(store, statements_persist_across_handles) {
    char buf[512];
    make_small();
    gqp *h = open_ok(db);
    cr_assert_str_eq(col0(h, "SELECT s FROM t ORDER BY a", buf, sizeof buf), "one|NULL|three");
    cr_assert_str_eq(col0(h, "SELECT d FROM t ORDER BY a", buf, sizeof buf), "1.25|NULL|-7.50");
    cr_assert_str_eq(col0(h, "SELECT x FROM v ORDER BY x", buf, sizeof buf), "10|30");
    /* the UNIQUE index came back with the table */
    cr_assert_eq(run(h, "INSERT INTO t VALUES (3, 'again', 0)"), GQP_ERROR);
    cr_assert(strstr(gqp_errmsg(h), "UNIQUE"), "%s", gqp_errmsg(h));
    exec(h, "UPDATE t SET s = 'two' WHERE a = 2");
    exec(h, "DELETE FROM t WHERE a = 1");
    exec(h, "INSERT INTO t VALUES (4, 'four', 4)");
    exec(h, "CREATE TABLE c AS SELECT a, s FROM t WHERE a > 2");
    exec(h, "CREATE TABLE gone(x INT)");
    exec(h, "DROP TABLE gone");
    exec(h, "DROP INDEX ta");
    exec(h, "DROP VIEW v");
    gqp_close(h);
    h = open_ok(db);
    cr_assert_str_eq(col0(h, "SELECT s FROM t ORDER BY a", buf, sizeof buf), "two|three|four");
    cr_assert_str_eq(col0(h, "SELECT a FROM c ORDER BY a", buf, sizeof buf), "3|4");
    cr_assert_neq(run(h, "SELECT * FROM gone"), GQP_DONE);
    cr_assert_neq(run(h, "SELECT * FROM v"), GQP_DONE);
    exec(h, "INSERT INTO t VALUES (4, 'dup allowed now', 0)"); /* the index is gone */
    gqp_close(h);
}

Test(store, strings_with_newlines_persist) {
    char buf[512];
    gqp *h = open_ok(db);
    exec(h, "CREATE TABLE t(s TEXT)");
    exec(h, "INSERT INTO t VALUES ('a\nb'), ('plain'), ('')");
    gqp_close(h);
    h = open_ok(db);
    cr_assert_str_eq(col0(h, "SELECT s FROM t ORDER BY s", buf, sizeof buf), "|a\nb|plain");
    gqp_close(h);
}

Test(store, open_maps_nothing_until_a_query_reads_it) {
    char buf[512];
    gqp *h = open_ok(db);
    exec(h, "CREATE TABLE t(a INTEGER, b INTEGER, s TEXT)");
    exec(h, "INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y')");
    for (int i = 0; i < 16; i++) /* 2^17 rows */
        exec(h, "INSERT INTO t SELECT a + (SELECT max(a) FROM t), b, s FROM t");
    gqp_close(h);
    h = open_ok(db);
    cr_assert_eq(gqp_column_loaded(h, "t", "a"), 0);
    cr_assert_eq(gqp_column_loaded(h, "t", "b"), 0);
    cr_assert_eq(gqp_column_loaded(h, "t", "s"), 0);
    cr_assert_str_eq(col0(h, "SELECT sum(b) FROM t", buf, sizeof buf), "1966080");
    cr_assert_eq(gqp_column_loaded(h, "t", "a"), 0);
    cr_assert_eq(gqp_column_loaded(h, "t", "b"), 1);
    cr_assert_eq(gqp_column_loaded(h, "t", "s"), 0);
    /* an UPDATE of b rewrites b only: a's and s's files are the old ones
     * (hard links), unread */
    char f1[32], f2[32], p1[512], p2[512];
    struct stat s1, s2;
    struct stat b1, b2;
    folder_of("t", f1, sizeof f1);
    snprintf(p1, sizeof p1, "%s/%s/c0.bin", db, f1);
    cr_assert_eq(stat(p1, &s1), 0);
    snprintf(p1, sizeof p1, "%s/%s/c1.bin", db, f1);
    cr_assert_eq(stat(p1, &b1), 0);
    exec(h, "UPDATE t SET b = b + 1 WHERE a <= 5");
    cr_assert_eq(gqp_column_loaded(h, "t", "s"), 0);
    folder_of("t", f2, sizeof f2);
    cr_assert_str_neq(f1, f2);
    snprintf(p2, sizeof p2, "%s/%s/c0.bin", db, f2);
    cr_assert_eq(stat(p2, &s2), 0);
    cr_assert_eq(s1.st_ino, s2.st_ino, "a's file was rewritten");
    snprintf(p2, sizeof p2, "%s/%s/c1.bin", db, f2);
    cr_assert_eq(stat(p2, &b2), 0);
    cr_assert_neq(b1.st_ino, b2.st_ino, "b's file was not rewritten");
    snprintf(p1, sizeof p1, "%s/%s", db, f1);
    cr_assert_neq(access(p1, F_OK), 0, "the old folder %s is still there", p1);
    cr_assert_str_eq(col0(h, "SELECT sum(b) FROM t", buf, sizeof buf), "1966085");
    gqp_close(h);
    h = open_ok(db);
    cr_assert_str_eq(col0(h, "SELECT count(*) FROM t WHERE s = 'y'", buf, sizeof buf), "65536");
    cr_assert_str_eq(col0(h, "SELECT max(a) FROM t", buf, sizeof buf), "131072");
    gqp_close(h);
}

Test(store, a_failed_commit_changes_nothing) {
    char buf[512], path[400];
    make_small();
    gqp *h = open_ok(db);
    /* a folder where the new catalog is written: every commit fails after
     * writing its table folder */
    snprintf(path, sizeof path, "%s/gqp.catalog.tmp", db);
    cr_assert_eq(mkdir(path, 0777), 0);
    cr_assert_eq(run(h, "INSERT INTO t VALUES (9, 'nine', 9)"), GQP_ERROR);
    cr_assert(strstr(gqp_errmsg(h), "Catalog Error"), "%s", gqp_errmsg(h));
    cr_assert(strstr(gqp_errmsg(h), path), "%s", gqp_errmsg(h));
    cr_assert_str_eq(col0(h, "SELECT a FROM t ORDER BY a", buf, sizeof buf), "1|2|3");
    cr_assert_eq(run(h, "UPDATE t SET a = a + 100"), GQP_ERROR);
    cr_assert_str_eq(col0(h, "SELECT a FROM t ORDER BY a", buf, sizeof buf), "1|2|3");
    cr_assert_eq(run(h, "CREATE TABLE n AS SELECT a FROM t"), GQP_ERROR);
    cr_assert_neq(run(h, "SELECT * FROM n"), GQP_DONE);
    /* the unique index is back with the table */
    cr_assert_eq(run(h, "INSERT INTO t VALUES (1, 'dup', 0)"), GQP_ERROR);
    cr_assert(strstr(gqp_errmsg(h), "UNIQUE"), "%s", gqp_errmsg(h));
    cr_assert_eq(run(h, "DROP TABLE t"), GQP_ERROR);
    cr_assert_eq(run(h, "DROP VIEW v"), GQP_ERROR);
    cr_assert_str_eq(col0(h, "SELECT x FROM v ORDER BY x", buf, sizeof buf), "10|30");
    /* no table folder is left behind but the stored one */
    char f[32], other[512];
    folder_of("t", f, sizeof f);
    snprintf(other, sizeof other, "ls '%s' | grep -v -x -e gqp.catalog -e gqp.catalog.tmp -e %s",
             db, f);
    cr_assert_neq(system(other), 0, "a folder was left");
    rmdir(path);
    /* a folder in the way of the next table folder is skipped */
    snprintf(other, sizeof other, "%s/t%ld", db, next_folder());
    cr_assert_eq(mkdir(other, 0777), 0);
    exec(h, "INSERT INTO t VALUES (9, 'nine', 9)");
    gqp_close(h);
    h = open_ok(db);
    cr_assert_str_eq(col0(h, "SELECT a FROM t ORDER BY a", buf, sizeof buf), "1|2|3|9");
    gqp_close(h);
}

Test(store, corrupt_catalog_is_an_error) {
    char path[400];
    make_small();
    snprintf(path, sizeof path, "%s/gqp.catalog", db);
    put(path, "gqp-catalog 1\nnext 9\ntable t 1 3 1 0\ncolumn a NOSUCHTYPE 0 0\nend\n");
    open_fails(db, (const char *[]){"Catalog Error", "gqp.catalog:4", "column", NULL});
    put(path, "gqp-catalog 1\nnext 9\n"); /* cut short */
    open_fails(db, (const char *[]){"Catalog Error", "gqp.catalog", "end", NULL});
    put(path, "hello\n");
    open_fails(db, (const char *[]){"Catalog Error", "gqp.catalog:1", "not a gqp catalog", NULL});
    unlink(path); /* the table folder is still there */
    open_fails(db, (const char *[]){"Catalog Error", "missing catalog", NULL});
}

Test(store, missing_column_file_is_an_error) {
    char f[32], path[512];
    make_small();
    gqp *h = open_ok(db);
    exec(h, "CREATE TABLE u(x INT)");
    gqp_close(h);
    folder_of("t", f, sizeof f);
    snprintf(path, sizeof path, "%s/%s/c1.bin", db, f);
    cr_assert_eq(unlink(path), 0);
    open_fails(db, (const char *[]){"Catalog Error", "table 't'", path, NULL});
}

Test(store, a_second_handle_is_refused_while_one_is_open) {
    gqp *h = open_ok(db);
    open_fails(db, (const char *[]){"Catalog Error", "locked", NULL});
    gqp_close(h);
    gqp_close(open_ok(db));
}

Test(store, read_only_folder) {
    if (geteuid() == 0) cr_skip_test("root writes into read-only folders");
    char buf[256];
    make_small();
    cr_assert_eq(chmod(db, 0555), 0);
    gqp *h = open_ok(db); /* reading works */
    cr_assert_str_eq(col0(h, "SELECT a FROM t ORDER BY a", buf, sizeof buf), "1|2|3");
    cr_assert_eq(run(h, "INSERT INTO t VALUES (5, 'x', 0)"), GQP_ERROR);
    cr_assert(strstr(gqp_errmsg(h), "Permission denied"), "%s", gqp_errmsg(h));
    cr_assert(strstr(gqp_errmsg(h), db), "%s", gqp_errmsg(h));
    cr_assert_str_eq(col0(h, "SELECT a FROM t ORDER BY a", buf, sizeof buf), "1|2|3");
    gqp_close(h);
    chmod(db, 0755);
}

Test(store, open_creates_a_missing_folder_but_not_a_yaml_path) {
    char path[400];
    snprintf(path, sizeof path, "%s/new/", dir);
    gqp_close(open_ok(path));
    snprintf(path, sizeof path, "%s/new/gqp.catalog", dir);
    cr_assert_eq(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/missing.yaml", dir);
    gqp *h = NULL;
    cr_assert_neq(gqp_open(path, &h), GQP_OK);
    gqp_close(h);
    cr_assert_neq(access(path, F_OK), 0);
}

Test(store, open_sweeps_what_a_killed_commit_left) {
    char path[400], buf[256];
    make_small();
    snprintf(path, sizeof path, "%s/t999", db);
    cr_assert_eq(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/t999/c0.bin", db);
    put(path, "12345678");
    snprintf(path, sizeof path, "%s/gqp.catalog.tmp", db);
    put(path, "gqp-catalog 1\n");
    snprintf(path, sizeof path, "%s/notes.txt", db);
    put(path, "the user's\n");
    gqp *h = open_ok(db);
    cr_assert_str_eq(col0(h, "SELECT a FROM t ORDER BY a", buf, sizeof buf), "1|2|3");
    snprintf(path, sizeof path, "%s/t999", db);
    cr_assert_neq(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/gqp.catalog.tmp", db);
    cr_assert_neq(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/notes.txt", db);
    cr_assert_eq(access(path, F_OK), 0);
    exec(h, "INSERT INTO t VALUES (7, 'x', 0)");
    gqp_close(h);
    cr_assert_gt(next_folder(), 999);
}

Test(store, import_a_config) {
    char path[400], yaml[400], buf[256];
    snprintf(path, sizeof path, "%s/a.csv", dir);
    put(path, "k,name\n1,x\n2,y\n3,\n");
    snprintf(path, sizeof path, "%s/b.csv", dir);
    put(path, "z\n5\n");
    snprintf(yaml, sizeof yaml, "%s/in.yaml", dir);
    put(yaml, "tables:\n"
              "  - {name: a, source: a.csv, header: true, columns: [{name: k, type: INT32},"
              " {name: name, type: STRING}]}\n"
              "  - {name: b, source: b.csv, header: true, columns: [{name: z, type: INT64}]}\n");
    gqp *h = open_ok(db);
    cr_assert_eq(gqp_import(h, yaml, "nosuch", NULL, NULL), GQP_ERROR);
    cr_assert(strstr(gqp_errmsg(h), "nosuch"), "%s", gqp_errmsg(h));
    cr_assert_eq(gqp_import(h, yaml, "b", NULL, NULL), GQP_OK, "%s", gqp_errmsg(h));
    cr_assert_neq(run(h, "SELECT * FROM a"), GQP_DONE);
    /* b exists now: importing everything again imports nothing */
    cr_assert_eq(gqp_import(h, yaml, NULL, NULL, NULL), GQP_ERROR);
    cr_assert(strstr(gqp_errmsg(h), "already exists"), "%s", gqp_errmsg(h));
    exec(h, "DROP TABLE b");
    cr_assert_eq(gqp_import(h, yaml, NULL, NULL, NULL), GQP_OK, "%s", gqp_errmsg(h));
    gqp_close(h);
    h = open_ok(db);
    cr_assert_eq(gqp_column_loaded(h, "a", "name"), 0);
    cr_assert_str_eq(col0(h, "SELECT name FROM a ORDER BY k", buf, sizeof buf), "x|y|NULL");
    cr_assert_str_eq(col0(h, "SELECT z FROM b", buf, sizeof buf), "5");
    gqp_close(h);
    /* a handle over a YAML config is no database folder */
    h = NULL;
    cr_assert_eq(gqp_open(yaml, &h), GQP_OK, "%s", gqp_errmsg(h));
    cr_assert_eq(gqp_import(h, yaml, NULL, NULL, NULL), GQP_MISUSE);
    gqp_close(h);
}
