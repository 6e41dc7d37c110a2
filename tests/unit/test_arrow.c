/*
 * test_arrow.c -- Arrow in and out of libgqp (include/gqp_arrow.h) without
 * any Arrow library: record batches built by hand the way the C Data
 * Interface lays them out (offsets, validity bitmaps, dictionaries, 128-bit
 * decimals) are registered and queried; results are exported and their
 * buffers read back; an exported stream is registered again (a round trip
 * of 100,000 rows over two batches); every error leaves no table behind and
 * every release callback is called exactly once (ASan checks the rest).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gqp.h"
#include "gqp_arrow.h"

/* ------------------------------------------- a hand-made producer -- */

static int g_released; /* top-level releases of the test's producer called */

/* malloc'ed copy of n bytes of p. */
static void *dup_bytes(const void *p, size_t n) {
    void *q = malloc(n ? n : 1);
    cr_assert(q);
    if (n) memcpy(q, p, n);
    return q;
}

/* A validity / boolean bitmap from a string of '0' and '1' (bit i = s[i]). */
static void *bits(const char *s) {
    size_t n = strlen(s);
    uint8_t *b = calloc((n + 7) / 8 + 1, 1);
    cr_assert(b);
    for (size_t i = 0; i < n; i++)
        if (s[i] == '1') b[i / 8] |= (uint8_t)(1u << (i % 8));
    return b;
}

/* Release of the test's schemas: children and dictionary (heap structs)
 * first; counts the call. */
static void t_schema_release(struct ArrowSchema *s) {
    for (int64_t i = 0; i < s->n_children; i++) {
        if (s->children[i]->release) s->children[i]->release(s->children[i]);
        free(s->children[i]);
    }
    free(s->children);
    if (s->dictionary) {
        if (s->dictionary->release) s->dictionary->release(s->dictionary);
        free(s->dictionary);
    }
    s->release = NULL;
}

/* Release of a top-level schema: as a child's, and counted. */
static void t_top_schema_release(struct ArrowSchema *s) {
    t_schema_release(s);
    g_released++;
}

/* A heap schema of format fmt and name name (both static strings). */
static struct ArrowSchema *t_schema(const char *fmt, const char *name) {
    struct ArrowSchema *s = calloc(1, sizeof *s);
    cr_assert(s);
    s->format = fmt;
    s->name = name;
    s->flags = ARROW_FLAG_NULLABLE;
    s->release = t_schema_release;
    return s;
}

/* Fill *top as a struct schema with the n heap schemas kids. */
static void t_struct_schema(struct ArrowSchema *top, int n, struct ArrowSchema **kids) {
    memset(top, 0, sizeof *top);
    top->format = "+s";
    top->name = "";
    top->n_children = n;
    top->children = dup_bytes(kids, sizeof *kids * (size_t)n);
    top->release = t_top_schema_release;
}

/* Release of the test's arrays: children, dictionary, every buffer. */
static void t_array_release(struct ArrowArray *a) {
    for (int64_t i = 0; i < a->n_children; i++) {
        if (a->children[i]->release) a->children[i]->release(a->children[i]);
        free(a->children[i]);
    }
    free(a->children);
    if (a->dictionary) {
        if (a->dictionary->release) a->dictionary->release(a->dictionary);
        free(a->dictionary);
    }
    for (int64_t i = 0; i < a->n_buffers; i++)
        free((void *)a->buffers[i]);
    free(a->buffers);
    a->release = NULL;
}

/* Release of a top-level array: as a child's, and counted. */
static void t_top_array_release(struct ArrowArray *a) {
    t_array_release(a);
    g_released++;
}

/* A heap array of len rows from `offset` with the nbuf heap buffers b0..b2
 * (NULL allowed) and null_count nulls. */
static struct ArrowArray *t_array(int64_t len, int64_t null_count, int64_t offset, int nbuf,
                                  void *b0, void *b1, void *b2) {
    struct ArrowArray *a = calloc(1, sizeof *a);
    cr_assert(a);
    a->length = len;
    a->null_count = null_count;
    a->offset = offset;
    a->n_buffers = nbuf;
    const void **bufs = calloc(3, sizeof *bufs);
    cr_assert(bufs);
    bufs[0] = b0;
    bufs[1] = b1;
    bufs[2] = b2;
    a->buffers = bufs;
    a->release = t_array_release;
    return a;
}

/* Fill *top as a struct array of len rows over the n heap arrays kids. */
static void t_struct_array(struct ArrowArray *top, int64_t len, int n, struct ArrowArray **kids) {
    memset(top, 0, sizeof *top);
    top->length = len;
    top->n_buffers = 1;
    top->buffers = calloc(1, sizeof *top->buffers);
    top->n_children = n;
    top->children = dup_bytes(kids, sizeof *kids * (size_t)n);
    top->release = t_top_array_release;
}

/* A utf8 array ("u") of the n strings (NULL = null). */
static struct ArrowArray *t_utf8(int n, const char *const *strs) {
    int32_t *off = calloc((size_t)n + 1, sizeof *off);
    char valid[64] = "";
    size_t total = 0;
    int nulls = 0;
    for (int i = 0; i < n; i++)
        total += strs[i] ? strlen(strs[i]) : 0;
    char *data = calloc(total + 1, 1);
    for (int i = 0; i < n; i++) {
        size_t len = strs[i] ? strlen(strs[i]) : 0;
        if (len) memcpy(data + off[i], strs[i], len);
        off[i + 1] = off[i] + (int32_t)len;
        valid[i] = strs[i] ? '1' : '0';
        nulls += !strs[i];
    }
    return t_array(n, nulls, 0, 3, nulls ? bits(valid) : NULL, off, data);
}

/* A one-batch stream over a schema and an array (both moved into it). */
typedef struct TStream {
    struct ArrowSchema schema;
    struct ArrowArray batch;
    int handed, fail_next;
} TStream;

/* get_schema of TStream: a copy is not needed, the test moves it once. */
static int ts_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
    TStream *t = st->private_data;
    *out = t->schema;
    t->schema.release = NULL;
    return 0;
}

/* get_next of TStream: the batch, then the end (or EIO when fail_next). */
static int ts_get_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
    TStream *t = st->private_data;
    if (t->fail_next) return 5;
    if (!t->handed) {
        *out = t->batch;
        t->batch.release = NULL;
        t->handed = 1;
    } else {
        memset(out, 0, sizeof *out);
    }
    return 0;
}

static const char *ts_last_error(struct ArrowArrayStream *st) {
    (void)st;
    return "the disk is on fire";
}

static void ts_release(struct ArrowArrayStream *st) {
    TStream *t = st->private_data;
    if (t->schema.release) t->schema.release(&t->schema);
    if (t->batch.release) t->batch.release(&t->batch);
    free(t);
    st->release = NULL;
    g_released++;
}

/* A stream over (schema, batch), which it takes. */
static void t_stream(struct ArrowArrayStream *st, struct ArrowSchema *schema,
                     struct ArrowArray *batch) {
    TStream *t = calloc(1, sizeof *t);
    cr_assert(t);
    t->schema = *schema;
    t->batch = *batch;
    schema->release = NULL;
    batch->release = NULL;
    st->get_schema = ts_get_schema;
    st->get_next = ts_get_next;
    st->get_last_error = ts_last_error;
    st->release = ts_release;
    st->private_data = t;
}

/* ------------------------------------------------------- helpers -- */

static gqp *open_db(void) {
    gqp *db = NULL;
    cr_assert_eq(gqp_open(NULL, &db), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_CPU), GQP_OK);
    cr_assert_eq(gqp_set_threads(db, 2), GQP_OK);
    return db;
}

static void exec_sql(gqp *db, const char *sql) {
    struct ArrowArrayStream s;
    cr_assert_eq(gqp_query_arrow(db, sql, &s), GQP_OK, "%s: %s", sql, gqp_errmsg(db));
    s.release(&s);
}

/* Rows of sql's result as text: values joined by '|', rows ending in
 * '\n', NULL as "NULL". Returns a static buffer. */
static const char *rows_text(gqp *db, const char *sql) {
    static char out[8192];
    gqp_stmt *st = NULL;
    out[0] = '\0';
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s: %s", sql, gqp_errmsg(db));
    int rc;
    size_t at = 0;
    while ((rc = gqp_step(st)) == GQP_ROW) {
        for (int c = 0; c < gqp_column_count(st); c++) {
            const char *v = gqp_column_text(st, c);
            at += (size_t)snprintf(out + at, sizeof out - at, "%s%s", c ? "|" : "", v ? v : "NULL");
        }
        at += (size_t)snprintf(out + at, sizeof out - at, "\n");
    }
    cr_assert_eq(rc, GQP_DONE, "%s: %s", sql, gqp_errmsg(db));
    gqp_finalize(st);
    return out;
}

/* 1 when table t exists in db (a query on it prepares). */
static int has_table(gqp *db, const char *t) {
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT * FROM %s", t);
    gqp_stmt *st = NULL;
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    gqp_finalize(st);
    return rc == GQP_OK;
}

/* --------------------------------------------------------- import -- */

/* A batch of every type gqp reads; 4 rows. */
static void every_type_batch(struct ArrowSchema *schema, struct ArrowArray *array) {
    struct ArrowSchema *ks[13];
    struct ArrowArray *ka[13];
    int k = 0;
    /* id: int32 */
    ks[k] = t_schema("i", "id");
    int32_t id[] = {1, 2, 3, 4};
    ka[k++] = t_array(4, 0, 0, 2, NULL, dup_bytes(id, sizeof id), NULL);
    /* a8: int8 with a NULL in row 3 */
    ks[k] = t_schema("c", "a8");
    int8_t a8[] = {1, -2, 0, 127};
    ka[k++] = t_array(4, 1, 0, 2, bits("1101"), dup_bytes(a8, sizeof a8), NULL);
    /* u16: uint16 read from offset 1 */
    ks[k] = t_schema("S", "u16");
    uint16_t u16[] = {99, 10, 20, 65535, 40};
    ka[k++] = t_array(4, 0, 1, 2, NULL, dup_bytes(u16, sizeof u16), NULL);
    /* u64: uint64 */
    ks[k] = t_schema("L", "u64");
    uint64_t u64[] = {0, 5, (uint64_t)INT64_MAX, 9};
    ka[k++] = t_array(4, 0, 0, 2, NULL, dup_bytes(u64, sizeof u64), NULL);
    /* g: double, NULL in row 1 (null_count -1: unknown, bitmap read) */
    ks[k] = t_schema("g", "g");
    double g[] = {0, 1.5, -2.25, 1e10};
    ka[k++] = t_array(4, -1, 0, 2, bits("0111"), dup_bytes(g, sizeof g), NULL);
    /* b: boolean bits */
    ks[k] = t_schema("b", "b");
    ka[k++] = t_array(4, 0, 0, 2, NULL, bits("1010"), NULL);
    /* d32: date32 */
    ks[k] = t_schema("tdD", "d32");
    int32_t d32[] = {0, 18262, -1, 19000};
    ka[k++] = t_array(4, 0, 0, 2, NULL, dup_bytes(d32, sizeof d32), NULL);
    /* d64: date64 milliseconds (floored to days) */
    ks[k] = t_schema("tdm", "d64");
    int64_t d64[] = {86400000LL * 18262 + 5, -1, 0, 86400000LL};
    ka[k++] = t_array(4, 0, 0, 2, NULL, dup_bytes(d64, sizeof d64), NULL);
    /* dec: decimal128(20,2) whose values fit 18 digits */
    ks[k] = t_schema("d:20,2", "dec");
    int64_t dec[] = {12345, 0, -5, -1, 0, 0, 99999999999999999LL, 0};
    ka[k++] = t_array(4, 1, 0, 2, bits("1101"), dup_bytes(dec, sizeof dec), NULL);
    /* s: utf8 with non-ASCII, empty and NULL */
    ks[k] = t_schema("u", "s");
    const char *s[] = {"a", "h\xc3\xa9llo \xe4\xb8\x96", "", NULL};
    ka[k++] = t_utf8(4, s);
    /* ls: large_utf8 */
    ks[k] = t_schema("U", "ls");
    int64_t loff[] = {0, 1, 3, 3, 6};
    ka[k++] = t_array(4, 0, 0, 3, NULL, dup_bytes(loff, sizeof loff), dup_bytes("xyyzzz", 6));
    /* cat: dictionary-encoded strings (int8 indexes into "lo", "hi") */
    ks[k] = t_schema("c", "cat");
    ks[k]->dictionary = t_schema("u", "");
    int8_t idx[] = {1, 0, 1, 0};
    ka[k] = t_array(4, 1, 0, 2, bits("1110"), dup_bytes(idx, sizeof idx), NULL);
    const char *dv[] = {"lo", "hi"};
    ka[k++]->dictionary = t_utf8(2, dv);
    /* nul: the null type */
    ks[k] = t_schema("n", "nul");
    ka[k++] = t_array(4, 4, 0, 0, NULL, NULL, NULL);
    t_struct_schema(schema, k, ks);
    t_struct_array(array, 4, k, ka);
}

Test(arrow, import_every_type) {
    gqp *db = open_db();
    struct ArrowSchema schema;
    struct ArrowArray array;
    every_type_batch(&schema, &array);
    g_released = 0;
    cr_assert_eq(gqp_register_arrow_array(db, "t", &schema, &array), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect_null(schema.release);
    cr_expect_null(array.release);
    cr_expect_eq(g_released, 2, "the schema and the array are each released once");
    cr_expect_str_eq(rows_text(db, "SELECT id, a8, u16, u64, g, b FROM t ORDER BY id"),
                     "1|1|10|0|NULL|1\n"
                     "2|-2|20|5|1.5|0\n"
                     "3|NULL|65535|9223372036854775807|-2.25|1\n"
                     "4|127|40|9|10000000000.0|0\n");
    cr_expect_str_eq(rows_text(db, "SELECT id, d32, d64, dec, s, ls, cat, nul FROM t ORDER BY id"),
                     "1|1970-01-01|2020-01-01|123.45|a|x|hi|NULL\n"
                     "2|2020-01-01|1969-12-31|-0.05|h\xc3\xa9llo \xe4\xb8\x96|yy|lo|NULL\n"
                     "3|1969-12-31|1970-01-01|NULL|||hi|NULL\n"
                     "4|2022-01-08|1970-01-02|999999999999999.99|NULL|zzz|NULL|NULL\n");
    /* the registered table is a table like any other: joins, aggregates,
     * INSERT */
    cr_expect_str_eq(
        rows_text(db, "SELECT cat, COUNT(*), SUM(a8) FROM t GROUP BY cat ORDER BY cat"),
        "NULL|1|127\nhi|2|1\nlo|1|-2\n");
    exec_sql(db, "INSERT INTO t (id, s) VALUES (5, 'new')");
    cr_expect_str_eq(rows_text(db, "SELECT COUNT(*), COUNT(s), MAX(s) FROM t"), "5|4|new\n");
    gqp_close(db);
}

static char g_msg[2048]; /* register_one's error message */

/* Register a one-column batch of format fmt (name "c") built from the
 * buffers; returns the rc and leaves no table on error. */
static int register_one(gqp *db, const char *fmt, int64_t len, int nbuf, void *b0, void *b1,
                        void *b2) {
    struct ArrowSchema schema;
    struct ArrowArray array;
    struct ArrowSchema *ks[1] = {t_schema(fmt, "c")};
    struct ArrowArray *ka[1] = {t_array(len, b0 ? -1 : 0, 0, nbuf, b0, b1, b2)};
    t_struct_schema(&schema, 1, ks);
    t_struct_array(&array, len, 1, ka);
    g_released = 0;
    int existed = has_table(db, "bad");
    int rc = gqp_register_arrow_array(db, "bad", &schema, &array);
    snprintf(g_msg, sizeof g_msg, "%s", gqp_errmsg(db));
    cr_expect_eq(g_released, 2, "%s: schema and array released once each (%d)", fmt, g_released);
    if (rc != GQP_OK && !existed) cr_expect(!has_table(db, "bad"), "%s: nothing registered", fmt);
    return rc;
}

Test(arrow, import_errors) {
    gqp *db = open_db();
    int64_t ts[] = {1, 2};
    /* a type gqp cannot hold: the message names the column and the type */
    cr_expect_eq(register_one(db, "tsu:UTC", 2, 2, NULL, dup_bytes(ts, 16), NULL), GQP_ERROR);
    cr_expect(strstr(g_msg, "column 'c'") && strstr(g_msg, "timestamp"), "%s", g_msg);
    cr_expect(strstr(g_msg, "Catalog Error: "), "%s", g_msg);
    cr_expect_eq(register_one(db, "z", 2, 3, NULL, calloc(3, 4), calloc(1, 1)), GQP_ERROR);
    cr_expect(strstr(g_msg, "binary"), "%s", g_msg);
    cr_expect_eq(register_one(db, "d:40,2", 2, 2, NULL, calloc(2, 16), NULL), GQP_ERROR);
    cr_expect_eq(register_one(db, "d:20,19", 2, 2, NULL, calloc(2, 16), NULL), GQP_ERROR);
    cr_expect(strstr(g_msg, "scale"), "%s", g_msg);
    /* a value that does not fit: uint64 past INT64_MAX, 19-digit decimal */
    uint64_t big[] = {1, UINT64_MAX};
    cr_expect_eq(register_one(db, "L", 2, 2, NULL, dup_bytes(big, 16), NULL), GQP_ERROR);
    cr_expect(strstr(g_msg, "row 2") && strstr(g_msg, "18446744073709551615"), "%s", g_msg);
    int64_t dec[] = {1000000000000000000LL, 0, 5, 0};
    cr_expect_eq(register_one(db, "d:38,0", 2, 2, NULL, dup_bytes(dec, 32), NULL), GQP_ERROR);
    cr_expect(strstr(g_msg, "18 digits"), "%s", g_msg);
    int64_t dneg[] = {5, 1}; /* high word 1: 2^64 + 5 */
    cr_expect_eq(register_one(db, "d:38,0", 1, 2, NULL, dup_bytes(dneg, 16), NULL), GQP_ERROR);
    /* text that is not UTF-8, or holds a NUL byte */
    int32_t off[] = {0, 2};
    cr_expect_eq(register_one(db, "u", 1, 3, NULL, dup_bytes(off, 8), dup_bytes("\xff\xfe", 2)),
                 GQP_ERROR);
    cr_expect(strstr(g_msg, "UTF-8"), "%s", g_msg);
    cr_expect_eq(register_one(db, "u", 1, 3, NULL, dup_bytes(off, 8), dup_bytes("a\0", 2)),
                 GQP_ERROR);
    /* malformed: a values buffer missing */
    cr_expect_eq(register_one(db, "i", 2, 2, NULL, NULL, NULL), GQP_ERROR);
    cr_expect(strstr(g_msg, "malformed"), "%s", g_msg);
    /* not a struct at the top */
    struct ArrowSchema *lone = t_schema("i", "x");
    struct ArrowArray *la = t_array(0, 0, 0, 2, NULL, NULL, NULL);
    lone->release = t_top_schema_release;
    la->release = t_top_array_release;
    g_released = 0;
    cr_expect_eq(gqp_register_arrow_array(db, "bad", lone, la), GQP_ERROR);
    cr_expect(strstr(gqp_errmsg(db), "struct"), "%s", gqp_errmsg(db));
    cr_expect_eq(g_released, 2);
    free(lone);
    free(la);
    /* the name is taken by a table or a view; the table stays intact */
    int32_t v[] = {7};
    cr_expect_eq(register_one(db, "i", 1, 2, NULL, dup_bytes(v, 4), NULL), GQP_OK);
    cr_expect_eq(register_one(db, "i", 1, 2, NULL, dup_bytes(v, 4), NULL), GQP_ERROR);
    cr_expect(strstr(g_msg, "already exists"), "%s", g_msg);
    cr_expect_str_eq(rows_text(db, "SELECT c FROM bad"), "7\n");
    exec_sql(db, "DROP TABLE bad; CREATE VIEW bad AS SELECT 1 AS c");
    cr_expect_eq(register_one(db, "i", 1, 2, NULL, dup_bytes(v, 4), NULL), GQP_ERROR);
    cr_expect(strstr(g_msg, "view"), "%s", g_msg);
    /* NULL arguments */
    cr_expect_eq(gqp_register_arrow(db, "x", NULL), GQP_MISUSE);
    cr_expect_eq(gqp_register_arrow_array(db, "x", NULL, NULL), GQP_MISUSE);
    cr_expect_eq(gqp_query_arrow(db, "SELECT 1", NULL), GQP_MISUSE);
    gqp_close(db);
}

Test(arrow, import_stream_errors) {
    gqp *db = open_db();
    struct ArrowSchema schema;
    struct ArrowArray array;
    struct ArrowArrayStream st;
    /* get_next fails: its message reaches gqp_errmsg, nothing registered,
     * schema and stream released */
    every_type_batch(&schema, &array);
    t_stream(&st, &schema, &array);
    ((TStream *)st.private_data)->fail_next = 1;
    g_released = 0;
    cr_expect_eq(gqp_register_arrow(db, "t", &st), GQP_ERROR);
    cr_expect(strstr(gqp_errmsg(db), "the disk is on fire"), "%s", gqp_errmsg(db));
    cr_expect_null(st.release);
    cr_expect_eq(g_released, 3, "schema, unread batch and stream released (%d)", g_released);
    cr_expect(!has_table(db, "t"));
    /* a column of a type gqp cannot hold: refused before any batch is read */
    struct ArrowSchema *ks[2] = {t_schema("i", "ok"), t_schema("+l", "nested")};
    ks[1]->n_children = 1;
    ks[1]->children = calloc(1, sizeof *ks[1]->children);
    ks[1]->children[0] = t_schema("i", "item");
    struct ArrowArray *ka[2] = {t_array(0, 0, 0, 2, NULL, NULL, NULL),
                                t_array(0, 0, 0, 2, NULL, NULL, NULL)};
    t_struct_schema(&schema, 2, ks);
    t_struct_array(&array, 0, 2, ka);
    t_stream(&st, &schema, &array);
    cr_expect_eq(gqp_register_arrow(db, "t", &st), GQP_ERROR);
    cr_expect(strstr(gqp_errmsg(db), "column 'nested'") && strstr(gqp_errmsg(db), "list"), "%s",
              gqp_errmsg(db));
    cr_expect_null(st.release);
    cr_expect(!has_table(db, "t"));
    /* an empty stream: a table of no rows */
    ks[0] = t_schema("i", "a");
    ka[0] = t_array(0, 0, 0, 2, NULL, NULL, NULL);
    t_struct_schema(&schema, 1, ks);
    t_struct_array(&array, 0, 1, ka);
    t_stream(&st, &schema, &array);
    cr_expect_eq(gqp_register_arrow(db, "e", &st), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect_str_eq(rows_text(db, "SELECT COUNT(*), SUM(a) FROM e"), "0|NULL\n");
    gqp_close(db);
}

/* A stream of one int32 column "a" holding the n values v (heap copies). */
static void int_stream(struct ArrowArrayStream *st, int n, const int32_t *v) {
    struct ArrowSchema schema;
    struct ArrowArray array;
    struct ArrowSchema *ks[1] = {t_schema("i", "a")};
    struct ArrowArray *ka[1] = {
        t_array(n, 0, 0, 2, NULL, dup_bytes(v, sizeof *v * (size_t)n), NULL)};
    t_struct_schema(&schema, 1, ks);
    t_struct_array(&array, n, 1, ka);
    t_stream(st, &schema, &array);
}

Test(arrow, import_replace) {
    gqp *db = open_db();
    struct ArrowArrayStream st;
    int32_t v1[] = {1, 2}, v2[] = {10, 20, 30};
    int_stream(&st, 2, v1);
    cr_assert_eq(gqp_register_arrow_ex(db, "r", &st, 0), GQP_OK, "%s", gqp_errmsg(db));
    /* a prepared statement sees the new table when it runs again */
    gqp_stmt *stmt;
    cr_assert_eq(gqp_prepare(db, "SELECT SUM(a) FROM r", -1, &stmt, NULL), GQP_OK);
    cr_assert_eq(gqp_step(stmt), GQP_ROW);
    cr_expect_eq(gqp_column_int64(stmt, 0), 3);
    int_stream(&st, 3, v2);
    cr_expect_eq(gqp_register_arrow(db, "r", &st), GQP_ERROR, "the name is taken");
    int_stream(&st, 3, v2);
    cr_assert_eq(gqp_register_arrow_ex(db, "r", &st, GQP_ARROW_REPLACE), GQP_OK, "%s",
                 gqp_errmsg(db));
    gqp_reset(stmt);
    cr_assert_eq(gqp_step(stmt), GQP_ROW);
    cr_expect_eq(gqp_column_int64(stmt, 0), 60);
    gqp_finalize(stmt);
    /* refused data leaves the old table as it was */
    struct ArrowSchema schema;
    struct ArrowArray array;
    uint64_t big[] = {UINT64_MAX};
    struct ArrowSchema *ks[1] = {t_schema("L", "a")};
    struct ArrowArray *ka[1] = {t_array(1, 0, 0, 2, NULL, dup_bytes(big, 8), NULL)};
    t_struct_schema(&schema, 1, ks);
    t_struct_array(&array, 1, 1, ka);
    t_stream(&st, &schema, &array);
    cr_expect_eq(gqp_register_arrow_ex(db, "r", &st, GQP_ARROW_REPLACE), GQP_ERROR);
    cr_expect_str_eq(rows_text(db, "SELECT SUM(a), COUNT(*) FROM r"), "60|3\n");
    /* a view is never replaced; unknown flags are misuse */
    exec_sql(db, "CREATE VIEW vw AS SELECT 1 AS a");
    int_stream(&st, 2, v1);
    cr_expect_eq(gqp_register_arrow_ex(db, "vw", &st, GQP_ARROW_REPLACE), GQP_ERROR);
    int_stream(&st, 2, v1);
    cr_expect_eq(gqp_register_arrow_ex(db, "x", &st, 6), GQP_MISUSE);
    cr_expect_null(st.release);
    gqp_close(db);
}

/* --------------------------------------------------------- export -- */

/* Bit i of bitmap bm (NULL: every bit set). */
static int bit_at(const void *bm, int64_t i) {
    return !bm || ((((const uint8_t *)bm)[i / 8] >> (i % 8)) & 1);
}

Test(arrow, export_every_type) {
    gqp *db = open_db();
    exec_sql(db, "CREATE TABLE t(id INT32, i INTEGER, f FLOAT32, r REAL, d DECIMAL(10,2), "
                 "x DATE, b BOOLEAN, s TEXT);"
                 "INSERT INTO t VALUES (1, 10, 1.5, 0.25, 1.25, '2020-01-01', 1, 'a'),"
                 "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
                 "(3, -7, -2.0, 1e300, -0.05, '1969-12-31', 0, 'h\xc3\xa9')");
    struct ArrowArrayStream st;
    cr_assert_eq(gqp_query_arrow(db, "SELECT * FROM t ORDER BY id", &st), GQP_OK, "%s",
                 gqp_errmsg(db));
    struct ArrowSchema sc;
    cr_assert_eq(st.get_schema(&st, &sc), 0);
    cr_assert_str_eq(sc.format, "+s");
    cr_assert_eq(sc.n_children, 8);
    const char *fmts[] = {"i", "l", "f", "g", "d:18,2", "tdD", "b", "u"};
    const char *names[] = {"id", "i", "f", "r", "d", "x", "b", "s"};
    for (int j = 0; j < 8; j++) {
        cr_expect_str_eq(sc.children[j]->format, fmts[j], "column %d", j);
        cr_expect_str_eq(sc.children[j]->name, names[j]);
        cr_expect_eq(sc.children[j]->flags, ARROW_FLAG_NULLABLE);
    }
    sc.release(&sc);
    cr_expect_null(sc.release);
    struct ArrowArray a;
    cr_assert_eq(st.get_next(&st, &a), 0);
    cr_assert_not_null(a.release);
    cr_assert_eq(a.length, 3);
    cr_assert_eq(a.n_children, 8);
    struct ArrowArray **c = a.children;
    cr_expect_eq(c[0]->null_count, 0);
    cr_expect_null(c[0]->buffers[0], "no bitmap without a NULL");
    for (int j = 1; j < 8; j++) {
        cr_expect_eq(c[j]->null_count, 1, "column %d", j);
        cr_expect(bit_at(c[j]->buffers[0], 0) && !bit_at(c[j]->buffers[0], 1) &&
                  bit_at(c[j]->buffers[0], 2));
        cr_expect_eq((uintptr_t)c[j]->buffers[1] % 8, 0, "aligned");
    }
    const int32_t *id = c[0]->buffers[1];
    cr_expect(id[0] == 1 && id[1] == 2 && id[2] == 3);
    const int64_t *iv = c[1]->buffers[1];
    cr_expect(iv[0] == 10 && iv[2] == -7);
    const float *fv = c[2]->buffers[1];
    cr_expect(fv[0] == 1.5f && fv[2] == -2.0f);
    const double *rv = c[3]->buffers[1];
    cr_expect(rv[0] == 0.25 && rv[2] == 1e300);
    const int64_t *dv = c[4]->buffers[1]; /* 16 bytes each: low, high */
    cr_expect(dv[0] == 125 && dv[1] == 0 && dv[4] == -5 && dv[5] == -1);
    const int32_t *xv = c[5]->buffers[1];
    cr_expect(xv[0] == 18262 && xv[2] == -1);
    cr_expect(bit_at(c[6]->buffers[1], 0) && !bit_at(c[6]->buffers[1], 2));
    const int32_t *so = c[7]->buffers[1];
    const char *sd = c[7]->buffers[2];
    cr_expect(so[0] == 0 && so[1] == 1 && so[2] == 1 && so[3] == 4);
    cr_expect(memcmp(sd, "ah\xc3\xa9", 4) == 0);
    /* a consumer may move a child out and release it on its own */
    struct ArrowArray moved = *c[7];
    c[7]->release = NULL;
    a.release(&a);
    cr_expect_null(a.release);
    cr_expect_eq(((const int32_t *)moved.buffers[1])[3], 4);
    moved.release(&moved);
    cr_assert_eq(st.get_next(&st, &a), 0);
    cr_expect_null(a.release, "the end of the stream");
    st.release(&st);
    cr_expect_null(st.release);
    gqp_close(db);
}

Test(arrow, export_empty_ddl_and_lifetime) {
    gqp *db = open_db();
    exec_sql(db, "CREATE TABLE t(a INTEGER, s TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')");
    struct ArrowArrayStream st;
    struct ArrowSchema sc;
    struct ArrowArray a;
    /* no rows: the schema, then the end */
    cr_assert_eq(gqp_query_arrow(db, "SELECT a, s FROM t WHERE a > 5", &st), GQP_OK);
    cr_assert_eq(st.get_schema(&st, &sc), 0);
    cr_expect_eq(sc.n_children, 2);
    sc.release(&sc);
    cr_assert_eq(st.get_next(&st, &a), 0);
    cr_expect_null(a.release);
    st.release(&st);
    /* DDL and an empty text: no column */
    const char *none[] = {"CREATE TABLE u(a INTEGER)", "", "  -- nothing\n"};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(gqp_query_arrow(db, none[i], &st), GQP_OK, "%s", gqp_errmsg(db));
        cr_assert_eq(st.get_schema(&st, &sc), 0);
        cr_expect_str_eq(sc.format, "+s");
        cr_expect_eq(sc.n_children, 0);
        sc.release(&sc);
        st.release(&st);
    }
    /* an error: the code and message, out released */
    st.release = (void (*)(struct ArrowArrayStream *))1;
    cr_expect_eq(gqp_query_arrow(db, "SELECT nope FROM t", &st), GQP_ERROR);
    cr_expect_null(st.release);
    cr_expect(strstr(gqp_errmsg(db), "nope"), "%s", gqp_errmsg(db));
    /* a statement stepped past its first row still exports every row, and
     * the stream outlives the statement and the handle */
    gqp_stmt *stmt;
    cr_assert_eq(gqp_prepare(db, "SELECT s FROM t ORDER BY a", -1, &stmt, NULL), GQP_OK);
    cr_assert_eq(gqp_step(stmt), GQP_ROW);
    cr_assert_eq(gqp_step(stmt), GQP_ROW);
    cr_assert_eq(gqp_stmt_arrow_stream(stmt, &st), GQP_OK);
    gqp_finalize(stmt);
    gqp_close(db);
    cr_assert_eq(st.get_next(&st, &a), 0);
    cr_assert_eq(a.length, 2);
    const int32_t *off = a.children[0]->buffers[1];
    cr_expect(off[2] == 2 && memcmp(a.children[0]->buffers[2], "xy", 2) == 0);
    a.release(&a);
    st.release(&st);
}

Test(arrow, round_trip_100k_rows) {
    gqp *db = open_db();
    const int64_t n = 100000;
    int64_t *iv = malloc(sizeof *iv * (size_t)n);
    double *dv = malloc(sizeof *dv * (size_t)n);
    uint8_t *dvalid = calloc((size_t)n / 8 + 1, 1);
    int32_t *off = malloc(sizeof *off * (size_t)(n + 1));
    char *bytes = malloc((size_t)n * 8);
    off[0] = 0;
    int64_t nulls = 0;
    for (int64_t i = 0; i < n; i++) {
        iv[i] = i * 7 - 50000;
        dv[i] = (double)i * 0.5;
        if (i % 10 != 3)
            dvalid[i / 8] |= (uint8_t)(1u << (i % 8));
        else
            nulls++;
        off[i + 1] = off[i] + sprintf(bytes + off[i], "s%lld", (long long)(i % 1000));
    }
    struct ArrowSchema *ks[3] = {t_schema("l", "i"), t_schema("g", "d"), t_schema("u", "s")};
    struct ArrowArray *ka[3] = {t_array(n, 0, 0, 2, NULL, iv, NULL),
                                t_array(n, nulls, 0, 2, dvalid, dv, NULL),
                                t_array(n, 0, 0, 3, NULL, off, bytes)};
    struct ArrowSchema schema;
    struct ArrowArray array;
    t_struct_schema(&schema, 3, ks);
    t_struct_array(&array, n, 3, ka);
    cr_assert_eq(gqp_register_arrow_array(db, "big", &schema, &array), GQP_OK, "%s",
                 gqp_errmsg(db));
    /* out as a stream of two batches (65536 rows, then the rest) ... */
    struct ArrowArrayStream st;
    cr_assert_eq(gqp_query_arrow(db, "SELECT i, d, s FROM big", &st), GQP_OK);
    struct ArrowArray a;
    cr_assert_eq(st.get_next(&st, &a), 0);
    cr_expect_eq(a.length, GQP_ARROW_BATCH_ROWS);
    a.release(&a);
    st.release(&st);
    /* ... and that stream registered as a table again */
    cr_assert_eq(gqp_query_arrow(db, "SELECT i, d, s FROM big", &st), GQP_OK);
    cr_assert_eq(gqp_register_arrow(db, "big2", &st), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect_null(st.release);
    char expect[200];
    snprintf(expect, sizeof expect, "%lld|%lld|%lld\n", (long long)n, (long long)(n - nulls),
             (long long)1000);
    cr_expect_str_eq(rows_text(db, "SELECT COUNT(*), COUNT(d), COUNT(DISTINCT s) FROM big2"),
                     expect);
    cr_expect_str_eq(rows_text(db, "SELECT COUNT(*) FROM big b JOIN big2 c ON b.i = c.i "
                                   "WHERE b.s = c.s AND (b.d = c.d OR (b.d IS NULL AND "
                                   "c.d IS NULL))"),
                     "100000\n");
    cr_expect_str_eq(rows_text(db, "SELECT s, COUNT(*) FROM big2 WHERE s IN ('s3', 's999') "
                                   "GROUP BY s ORDER BY s"),
                     "s3|100\ns999|100\n");
    gqp_close(db);
}

Test(arrow, gpu_query_of_registered_table) {
    if (!gqp_gpu_available()) cr_skip_test("no CUDA device");
    gqp *db = open_db();
    struct ArrowSchema schema;
    struct ArrowArray array;
    every_type_batch(&schema, &array);
    cr_assert_eq(gqp_register_arrow_array(db, "t", &schema, &array), GQP_OK);
    cr_assert_eq(gqp_set_device(db, GQP_DEVICE_GPU), GQP_OK, "%s", gqp_errmsg(db));
    cr_expect_str_eq(
        rows_text(db, "SELECT cat, COUNT(*), SUM(a8) FROM t GROUP BY cat ORDER BY cat"),
        "NULL|1|127\nhi|2|1\nlo|1|-2\n");
    gqp_close(db);
}
