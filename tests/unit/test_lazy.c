/*
 * test_lazy.c -- issue 11 item 6: a binary folder is checked at load but
 * each column is read (mapped) on its first use. A query reading 2 of
 * lineorder's 17 columns reads only those (gqp_column_loaded), with the
 * answer of the same query over the .tbl copy of the data (read eagerly by
 * the text loader); changes to a mapped table never reach its files; a
 * table written back over its own folder stays readable; statistics come
 * from the folder's .stats files and equal those computed from the data.
 */
#include "catalog/catalog.h"
#include "include/gqp.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

/* Criterion fixture: SSB at SF 0.01 in a fresh temporary folder. */
static void setup(void) {
    strcpy(dir, "/tmp/gqp_lazy_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    char *msg = NULL;
    cr_assert_eq(gqp_gen_ssb(dir, 0.01, 1, 0, &msg), GQP_OK, "%s", msg ? msg : "");
}

/* Criterion fixture: remove the folder. */
static void teardown(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
}

TestSuite(lazy, .init = setup, .fini = teardown);

/* A database over dir/name (gqp.yaml: binary, gqp-tbl.yaml: text). */
static gqp *open_db(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gqp *db = NULL;
    cr_assert_eq(gqp_open(path, &db), GQP_OK, "%s", db ? gqp_errmsg(db) : "");
    gqp_set_device(db, GQP_DEVICE_CPU);
    return db;
}

/* The int64 in the first column of the first row of sql. */
static int64_t one(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s", gqp_errmsg(db));
    int64_t v = gqp_column_int64(st, 0);
    gqp_finalize(st);
    return v;
}

/* Runs a statement without a result. */
static void exec(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_step(st), GQP_DONE, "%s", gqp_errmsg(db));
    gqp_finalize(st);
}

static const char *LO[] = {"lo_orderkey", "lo_linenumber",    "lo_custkey",       "lo_partkey",
                           "lo_suppkey",  "lo_orderdate",     "lo_orderpriority", "lo_shippriority",
                           "lo_quantity", "lo_extendedprice", "lo_ordtotalprice", "lo_discount",
                           "lo_revenue",  "lo_supplycost",    "lo_tax",           "lo_commitdate",
                           "lo_shipmode"};

/* Columns of lineorder read so far. */
static int nloaded(gqp *db) {
    int n = 0;
    for (int k = 0; k < 17; k++) {
        int r = gqp_column_loaded(db, "lineorder", LO[k]);
        cr_assert(r == 0 || r == 1, "%s: %d", LO[k], r);
        n += r;
    }
    return n;
}

Test(lazy, query_reads_only_its_columns) {
    const char *sql = "SELECT SUM(lo_revenue) FROM lineorder WHERE lo_quantity < 10";
    gqp *db = open_db("gqp.yaml");
    cr_assert_eq(nloaded(db), 0);
    cr_assert_eq(gqp_column_loaded(db, "lineorder", "no_such"), -1);
    cr_assert_eq(gqp_column_loaded(db, "no_such", "lo_revenue"), -1);
    int64_t got = one(db, sql);
    /* the two columns it reads (on a GPU the dense plan's pass also takes
     * its row count from column 0, lo_orderkey: one more at most) */
    cr_assert_leq(nloaded(db), 3);
    cr_assert_eq(gqp_column_loaded(db, "lineorder", "lo_revenue"), 1);
    cr_assert_eq(gqp_column_loaded(db, "lineorder", "lo_quantity"), 1);
    cr_assert_eq(gqp_column_loaded(db, "ddate", "d_datekey"), 0);
    /* COUNT(*) reads no more than one column */
    int64_t rows = one(db, "SELECT COUNT(*) FROM lineorder");
    cr_assert_leq(nloaded(db), 3);
    /* a string column, a join: the same answers as the text copy */
    const char *sql2 = "SELECT COUNT(*) FROM lineorder, ddate WHERE lo_orderdate = d_datekey "
                       "AND d_year = 1994 AND lo_shipmode = 'AIR'";
    int64_t got2 = one(db, sql2);
    cr_assert_eq(gqp_column_loaded(db, "ddate", "d_year"), 1);
    cr_assert_eq(gqp_column_loaded(db, "ddate", "d_month"), 0);
    gqp_close(db);
    gqp *tdb = open_db("gqp-tbl.yaml");
    cr_assert_eq(gqp_column_loaded(tdb, "lineorder", "lo_tax"), 1); /* text: read at load */
    cr_assert_eq(one(tdb, sql), got);
    cr_assert_eq(one(tdb, "SELECT COUNT(*) FROM lineorder"), rows);
    cr_assert_eq(one(tdb, sql2), got2);
    gqp_close(tdb);
}

/* A whole file's bytes (malloc'ed), its size in *n. */
static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*n + 1);
    cr_assert_not_null(b);
    cr_assert_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

Test(lazy, changes_never_reach_the_files) {
    char path[512];
    snprintf(path, sizeof path, "%s/bin/supplier/s_suppkey.bin", dir);
    size_t n0, n1;
    char *before = slurp(path, &n0);
    gqp *db = open_db("gqp.yaml");
    int64_t sum = one(db, "SELECT SUM(s_suppkey) FROM supplier");
    exec(db, "UPDATE supplier SET s_suppkey = s_suppkey + 1000 WHERE s_suppkey < 5");
    cr_assert_eq(one(db, "SELECT SUM(s_suppkey) FROM supplier"), sum + 4 * 1000);
    exec(db, "DELETE FROM supplier WHERE s_suppkey > 1000");
    exec(db, "INSERT INTO supplier SELECT * FROM supplier WHERE s_suppkey = 7");
    cr_assert_eq(one(db, "SELECT COUNT(*) FROM supplier WHERE s_suppkey = 7"), 2);
    gqp_close(db);
    char *after = slurp(path, &n1);
    cr_assert_eq(n0, n1);
    cr_assert_eq(memcmp(before, after, n0), 0, "the mapped file changed");
    free(before);
    free(after);
    /* a fresh load sees the files as they were */
    db = open_db("gqp.yaml");
    cr_assert_eq(one(db, "SELECT SUM(s_suppkey) FROM supplier"), sum);
    gqp_close(db);
}

Test(lazy, written_back_over_its_own_folder) {
    char yaml[512], src[512];
    snprintf(yaml, sizeof yaml, "%s/gqp.yaml", dir);
    snprintf(src, sizeof src, "%s/bin/part", dir);
    Catalog *c = cat_catalog_new();
    CatError e;
    cr_assert_eq(cat_load_config(c, yaml, NULL, &e), 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "part");
    cr_assert_eq(cat_column_use(t, 0, &e), 0, "%s", e.msg); /* mapped from src */
    int64_t first = ((const int32_t *)t->cols[0].data)[0];
    int64_t rows = t->nrows;
    /* the new files replace the old ones by rename: the mapping keeps its
     * pages, and a fresh load reads the same table */
    cr_assert_eq(cat_write_binary(t, src, &e), 0, "%s", e.msg);
    cr_assert_eq(((const int32_t *)t->cols[0].data)[0], first);
    Catalog *c2 = cat_catalog_new();
    cr_assert_eq(cat_load_config(c2, yaml, NULL, &e), 0, "%s", e.msg);
    CatTable *t2 = cat_find_table(c2, "part");
    cr_assert_eq(t2->nrows, rows);
    cr_assert_eq(cat_table_use_all(t2, &e), 0, "%s", e.msg);
    for (int k = 0; k < t->ncols; k++) {
        size_t w = cat_type_width(t->cols[k].type);
        cr_assert_eq(memcmp(t->cols[k].data, t2->cols[k].data, (size_t)rows * w), 0, "%s",
                     t->cols[k].name);
    }
    cat_catalog_free(c2);
    cat_catalog_free(c);
}

Test(lazy, stats_files_equal_computed_stats) {
    char yaml[512], p[512];
    snprintf(yaml, sizeof yaml, "%s/gqp.yaml", dir);
    Catalog *c = cat_catalog_new();
    CatError e;
    cr_assert_eq(cat_load_config(c, yaml, NULL, &e), 0, "%s", e.msg);
    CatTable *t = cat_find_table(c, "lineorder");
    cr_assert_eq(cat_table_use_all(t, &e), 0, "%s", e.msg);
    /* the same folder without its .stats files: computed on first use */
    for (int k = 0; k < t->ncols; k++) {
        snprintf(p, sizeof p, "%s/bin/lineorder/%s.stats", dir, t->cols[k].name);
        cr_assert_eq(unlink(p), 0, "%s", p);
    }
    Catalog *c2 = cat_catalog_new();
    cr_assert_eq(cat_load_config(c2, yaml, NULL, &e), 0, "%s", e.msg);
    CatTable *t2 = cat_find_table(c2, "lineorder");
    cr_assert_eq(cat_table_use_all(t2, &e), 0, "%s", e.msg);
    for (int k = 0; k < t->ncols; k++) {
        const CatStats *a = &t->cols[k].stats, *b = &t2->cols[k].stats;
        cr_assert_eq(a->rows, t->nrows);
        cr_assert_eq(a->rows, b->rows);
        cr_assert_eq(a->nulls, b->nulls);
        cr_assert_eq(a->distinct, b->distinct, "%s", t->cols[k].name);
        cr_assert_eq(a->min, b->min);
        cr_assert_eq(a->max, b->max);
        cr_assert_eq(a->hist->n, b->hist->n);
        for (int i = 0; i < a->hist->n; i++) {
            cr_assert_eq(a->hist->val[i], b->hist->val[i]);
            cr_assert_eq(a->hist->le[i], b->hist->le[i]);
        }
    }
    cat_catalog_free(c2);
    cat_catalog_free(c);
}

/* --no-lineorder-tbl (GQP_GEN_NO_FACT_TBL) over a full folder: the binary
 * columns are the same bytes, lineorder.tbl and gqp-tbl.yaml are gone (a
 * stale config would declare the missing text), the dimensions' .tbl stay. */
Test(lazy, no_fact_tbl_writes_the_same_binary_columns) {
    char p[512], q[512];
    snprintf(p, sizeof p, "%s/bin/lineorder/lo_revenue.bin", dir);
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    size_t n = (size_t)st.st_size;
    cr_assert_gt(n, 0);
    char *a = malloc(n), *b = malloc(n);
    FILE *f = fopen(p, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(a, 1, n, f), n);
    fclose(f);
    char *msg = NULL;
    cr_assert_eq(gqp_gen_ssb(dir, 0.01, 1, GQP_GEN_NO_FACT_TBL, &msg), GQP_OK, "%s",
                 msg ? msg : "");
    f = fopen(p, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(b, 1, n, f), n);
    cr_assert_eq(fgetc(f), EOF);
    fclose(f);
    cr_assert_eq(memcmp(a, b, n), 0);
    free(a);
    free(b);
    snprintf(q, sizeof q, "%s/lineorder.tbl", dir);
    cr_assert_neq(stat(q, &st), 0);
    snprintf(q, sizeof q, "%s/gqp-tbl.yaml", dir);
    cr_assert_neq(stat(q, &st), 0);
    snprintf(q, sizeof q, "%s/part.tbl", dir);
    cr_assert_eq(stat(q, &st), 0);
    gqp *db = open_db("gqp.yaml");
    cr_assert_eq(one(db, "SELECT COUNT(*) FROM lineorder"), (int64_t)(n / 4));
    gqp_close(db);
}
