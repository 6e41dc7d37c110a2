/*
 * arrow.c -- Arrow in and out of libgqp (include/gqp_arrow.h): a result as
 * an ArrowArrayStream of record batches, and an Arrow stream or record
 * batch registered as a table (the copy itself is catalog/load_arrow.c).
 *
 * Export copies the result when the stream is made: every batch the
 * stream hands out owns its buffers (64-byte aligned), so the stream, its
 * schemas and its batches outlive the statement and the handle. A batch is
 * a struct array with one child per result column:
 *
 *   gqp result type   Arrow format   buffers
 *   NULL              n              (none; every value NULL)
 *   BOOL              b              validity, value bits
 *   INT32 / INT64     i / l          validity, values
 *   FLOAT32 / 64      f / g          validity, values
 *   DATE              tdD            validity, int32 days
 *   DECIMAL, scale s  d:18,s         validity, 16-byte two's complement
 *                     (d:38,s when a value has 19 digits)
 *   TEXT              u              validity, int32 offsets, UTF-8 bytes
 *
 * A validity buffer is present only in a batch holding a NULL of its
 * column (else NULL with null_count 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gqp_arrow.h"
#include "libgqp/internal.h"

/* ------------------------------------------------------------ export -- */

/* 64-byte aligned, zeroed allocation of at least `bytes` (1 when 0);
 * NULL when out of memory. Freed with free(). */
static void *abuf(size_t bytes) {
    void *p = NULL;
    if (bytes == 0) bytes = 1;
    bytes = (bytes + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, bytes) != 0) return NULL;
    memset(p, 0, bytes);
    return p;
}

/* What one exported array owns: its buffer list, the buffers it allocated
 * and its children (each released through its own callback). */
typedef struct ExpArray {
    const void *bufs[3];
    void *own[3];
    struct ArrowArray *kids;
    struct ArrowArray **kid_ptrs;
} ExpArray;

/* Release callback of every exported array: releases the children not
 * moved away by the consumer, frees the buffers, marks a released. */
static void exp_array_release(struct ArrowArray *a) {
    ExpArray *p = a->private_data;
    if (p) {
        for (int64_t i = 0; i < a->n_children; i++)
            if (p->kid_ptrs[i]->release) p->kid_ptrs[i]->release(p->kid_ptrs[i]);
        for (int k = 0; k < 3; k++)
            free(p->own[k]);
        free(p->kids);
        free(p->kid_ptrs);
        free(p);
    }
    a->release = NULL;
    a->private_data = NULL;
}

/* Make a an array of `len` rows with nbuf buffers and nkids children (all
 * zeroed; a->private_data the ExpArray to fill). Returns 0, or -1 when out
 * of memory (a left released). */
static int exp_array_init(struct ArrowArray *a, int64_t len, int nbuf, int64_t nkids) {
    memset(a, 0, sizeof *a);
    ExpArray *p = calloc(1, sizeof *p);
    if (!p) return -1;
    a->length = len;
    a->n_buffers = nbuf;
    a->buffers = p->bufs;
    a->n_children = 0;
    a->release = exp_array_release;
    a->private_data = p;
    if (nkids > 0) {
        p->kids = calloc((size_t)nkids, sizeof *p->kids);
        p->kid_ptrs = calloc((size_t)nkids, sizeof *p->kid_ptrs);
        if (!p->kids || !p->kid_ptrs) {
            exp_array_release(a);
            return -1;
        }
        for (int64_t i = 0; i < nkids; i++)
            p->kid_ptrs[i] = &p->kids[i];
        a->children = p->kid_ptrs;
        a->n_children = nkids; /* each child still released (release NULL) */
    }
    return 0;
}

/* A result column as the stream describes it. */
typedef struct ExpCol {
    char *name;
    char format[24];
} ExpCol;

/* The stream's private data: the columns and the batches not yet handed
 * out. */
typedef struct ExpStream {
    int ncols;
    ExpCol *cols;
    int64_t nbatches, next;
    struct ArrowArray *batches;
    char err[256];
} ExpStream;

/* What one exported schema owns. */
typedef struct ExpSchema {
    char *format, *name;
    struct ArrowSchema *kids;
    struct ArrowSchema **kid_ptrs;
} ExpSchema;

/* Release callback of every exported schema (children first). */
static void exp_schema_release(struct ArrowSchema *s) {
    ExpSchema *p = s->private_data;
    if (p) {
        for (int64_t i = 0; i < s->n_children; i++)
            if (p->kid_ptrs[i]->release) p->kid_ptrs[i]->release(p->kid_ptrs[i]);
        free(p->format);
        free(p->name);
        free(p->kids);
        free(p->kid_ptrs);
        free(p);
    }
    s->release = NULL;
    s->private_data = NULL;
}

/* malloc'ed copy of s (NULL when out of memory). */
static char *dupstr(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* Fill s as a schema of format `format` and name `name` with nkids
 * children to fill. Returns 0, or -1 when out of memory (s released). */
static int exp_schema_init(struct ArrowSchema *s, const char *format, const char *name,
                           int64_t flags, int64_t nkids) {
    memset(s, 0, sizeof *s);
    ExpSchema *p = calloc(1, sizeof *p);
    if (!p) return -1;
    s->release = exp_schema_release;
    s->private_data = p;
    p->format = dupstr(format);
    p->name = dupstr(name);
    if (!p->format || !p->name) {
        exp_schema_release(s);
        return -1;
    }
    s->format = p->format;
    s->name = p->name;
    s->flags = flags;
    if (nkids > 0) {
        p->kids = calloc((size_t)nkids, sizeof *p->kids);
        p->kid_ptrs = calloc((size_t)nkids, sizeof *p->kid_ptrs);
        if (!p->kids || !p->kid_ptrs) {
            exp_schema_release(s);
            return -1;
        }
        for (int64_t i = 0; i < nkids; i++)
            p->kid_ptrs[i] = &p->kids[i];
        s->children = p->kid_ptrs;
        s->n_children = nkids;
    }
    return 0;
}

/* get_schema: a fresh schema of the stream's columns. */
static int exp_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out) {
    ExpStream *x = stream->private_data;
    if (exp_schema_init(out, "+s", "", 0, x->ncols) != 0) goto oom;
    for (int j = 0; j < x->ncols; j++)
        if (exp_schema_init(&((ExpSchema *)out->private_data)->kids[j], x->cols[j].format,
                            x->cols[j].name, ARROW_FLAG_NULLABLE, 0) != 0) {
            exp_schema_release(out);
            goto oom;
        }
    return 0;
oom:
    snprintf(x->err, sizeof x->err, "out of memory");
    return 12; /* ENOMEM */
}

/* get_next: the next batch moved out, or a released array at the end. */
static int exp_get_next(struct ArrowArrayStream *stream, struct ArrowArray *out) {
    ExpStream *x = stream->private_data;
    if (x->next < x->nbatches) {
        *out = x->batches[x->next];
        x->batches[x->next].release = NULL;
        x->next++;
    } else {
        memset(out, 0, sizeof *out);
    }
    return 0;
}

/* get_last_error: the message of the last failed call, or NULL. */
static const char *exp_last_error(struct ArrowArrayStream *stream) {
    ExpStream *x = stream->private_data;
    return x->err[0] ? x->err : NULL;
}

/* Free x: its columns and the batches never handed out. */
static void exp_stream_free(ExpStream *x) {
    if (!x) return;
    for (int j = 0; x->cols && j < x->ncols; j++)
        free(x->cols[j].name);
    free(x->cols);
    for (int64_t b = 0; x->batches && b < x->nbatches; b++)
        if (x->batches[b].release) x->batches[b].release(&x->batches[b]);
    free(x->batches);
    free(x);
}

/* Release callback of the stream. */
static void exp_stream_release(struct ArrowArrayStream *stream) {
    exp_stream_free(stream->private_data);
    stream->release = NULL;
    stream->private_data = NULL;
}

/* Value r of vector v as int64 (floats truncated). */
static int64_t vec_i64(const PrimVec *v, int64_t r) {
    switch (v->type) {
    case PRIM_U8:
        return ((const uint8_t *)v->data)[r];
    case PRIM_I32:
        return ((const int32_t *)v->data)[r];
    case PRIM_I64:
        return ((const int64_t *)v->data)[r];
    case PRIM_F32:
        return (int64_t)((const float *)v->data)[r];
    default:
        return (int64_t)((const double *)v->data)[r];
    }
}

/* Value r of vector v as double. */
static double vec_f64(const PrimVec *v, int64_t r) {
    switch (v->type) {
    case PRIM_F32:
        return ((const float *)v->data)[r];
    case PRIM_F64:
        return ((const double *)v->data)[r];
    default:
        return (double)vec_i64(v, r);
    }
}

/* 1 when row r of result column c holds a value. */
static int row_valid(const ExecColumn *c, int64_t r) {
    return c->ltype != CAT_NULL && c->vec.data && (!c->vec.valid || c->vec.valid[r]);
}

/* Bytes of the string of row r of TEXT column c (0 for NULL). */
static int64_t str_len(const ExecColumn *c, int64_t r) {
    if (!row_valid(c, r) || !c->dict) return 0;
    int32_t code = ((const int32_t *)c->vec.data)[r];
    return code >= 0 && code < c->dict->n ? cat_dict_len(c->dict, code) : 0;
}

/* Fill child a with rows [r0, r1) of result column c.
 * Returns 0, or -1 when out of memory. */
static int exp_column(const ExecColumn *c, int64_t r0, int64_t r1, struct ArrowArray *a) {
    int64_t n = r1 - r0;
    if (c->ltype == CAT_NULL) {
        if (exp_array_init(a, n, 0, 0) != 0) return -1;
        a->null_count = n;
        return 0;
    }
    int nbuf = c->ltype == CAT_STRING ? 3 : 2;
    if (exp_array_init(a, n, nbuf, 0) != 0) return -1;
    int copy = c->vec.data != NULL; /* whole ranges memcpy'd when the types agree */
    ExpArray *p = a->private_data;
    int64_t nulls = 0;
    for (int64_t r = r0; r < r1; r++)
        nulls += !row_valid(c, r);
    if (nulls) {
        uint8_t *bm = p->own[0] = abuf((size_t)(n + 7) / 8);
        if (!bm) goto oom;
        for (int64_t r = r0; r < r1; r++)
            if (row_valid(c, r)) bm[(r - r0) >> 3] |= (uint8_t)(1u << ((r - r0) & 7));
        p->bufs[0] = bm;
    }
    a->null_count = nulls;
    switch (c->ltype) {
    case CAT_BOOL: {
        uint8_t *bits = p->own[1] = abuf((size_t)(n + 7) / 8);
        if (!bits) goto oom;
        for (int64_t r = r0; r < r1; r++)
            if (row_valid(c, r) && vec_i64(&c->vec, r))
                bits[(r - r0) >> 3] |= (uint8_t)(1u << ((r - r0) & 7));
        break;
    }
    case CAT_INT32:
    case CAT_DATE: {
        int32_t *v = p->own[1] = abuf((size_t)n * 4);
        if (!v) goto oom;
        if (copy && c->vec.type == PRIM_I32)
            memcpy(v, (const int32_t *)c->vec.data + r0, (size_t)n * 4);
        else
            for (int64_t r = r0; r < r1; r++)
                v[r - r0] = row_valid(c, r) ? (int32_t)vec_i64(&c->vec, r) : 0;
        break;
    }
    case CAT_INT64: {
        int64_t *v = p->own[1] = abuf((size_t)n * 8);
        if (!v) goto oom;
        if (copy && c->vec.type == PRIM_I64)
            memcpy(v, (const int64_t *)c->vec.data + r0, (size_t)n * 8);
        else
            for (int64_t r = r0; r < r1; r++)
                v[r - r0] = row_valid(c, r) ? vec_i64(&c->vec, r) : 0;
        break;
    }
    case CAT_FLOAT32: {
        float *v = p->own[1] = abuf((size_t)n * 4);
        if (!v) goto oom;
        for (int64_t r = r0; r < r1; r++)
            v[r - r0] = row_valid(c, r) ? (float)vec_f64(&c->vec, r) : 0.0f;
        break;
    }
    case CAT_FLOAT64: {
        double *v = p->own[1] = abuf((size_t)n * 8);
        if (!v) goto oom;
        for (int64_t r = r0; r < r1; r++)
            v[r - r0] = row_valid(c, r) ? vec_f64(&c->vec, r) : 0.0;
        break;
    }
    case CAT_DECIMAL: {
        uint64_t *v = p->own[1] = abuf((size_t)n * 16);
        if (!v) goto oom;
        for (int64_t r = r0; r < r1; r++) {
            int64_t x = row_valid(c, r) ? vec_i64(&c->vec, r) : 0;
            v[(r - r0) * 2] = (uint64_t)x;
            v[(r - r0) * 2 + 1] = x < 0 ? UINT64_MAX : 0;
        }
        break;
    }
    case CAT_STRING: {
        int32_t *off = p->own[1] = abuf((size_t)(n + 1) * 4);
        if (!off) goto oom;
        int64_t bytes = 0;
        for (int64_t r = r0; r < r1; r++)
            bytes += str_len(c, r);
        char *data = p->own[2] = abuf((size_t)bytes);
        if (!data) goto oom;
        int64_t at = 0;
        for (int64_t r = r0; r < r1; r++) {
            off[r - r0] = (int32_t)at;
            int64_t len = str_len(c, r);
            if (len > 0) {
                memcpy(data + at, cat_dict_str(c->dict, ((const int32_t *)c->vec.data)[r]),
                       (size_t)len);
                at += len;
            }
        }
        off[n] = (int32_t)at;
        p->bufs[2] = data;
        break;
    }
    default:
        break;
    }
    p->bufs[1] = p->own[1];
    return 0;
oom:
    exp_array_release(a);
    return -1;
}

/* The end of the batch starting at row r0 of res: at most
 * GQP_ARROW_BATCH_ROWS rows, fewer where a TEXT column's bytes would pass
 * INT32_MAX (at least one row). */
static int64_t batch_end(const ExecResult *res, int64_t r0) {
    int64_t end = res->nrows - r0 > GQP_ARROW_BATCH_ROWS ? r0 + GQP_ARROW_BATCH_ROWS : res->nrows;
    for (int j = 0; j < res->ncols; j++) {
        const ExecColumn *c = &res->cols[j];
        if (c->ltype != CAT_STRING) continue;
        int64_t bytes = 0;
        for (int64_t r = r0; r < end; r++) {
            bytes += str_len(c, r);
            if (bytes > INT32_MAX) {
                end = r > r0 ? r : r0 + 1;
                break;
            }
        }
    }
    return end;
}

/* The Arrow format of result column c into buf: a DECIMAL is
 * decimal128(18, s), or (38, s) when one of its values has 19 digits. */
static void exp_format(const ExecColumn *c, int64_t nrows, char *buf, size_t cap) {
    switch (c->ltype) {
    case CAT_BOOL:
        snprintf(buf, cap, "b");
        break;
    case CAT_INT32:
        snprintf(buf, cap, "i");
        break;
    case CAT_INT64:
        snprintf(buf, cap, "l");
        break;
    case CAT_FLOAT32:
        snprintf(buf, cap, "f");
        break;
    case CAT_FLOAT64:
        snprintf(buf, cap, "g");
        break;
    case CAT_DATE:
        snprintf(buf, cap, "tdD");
        break;
    case CAT_STRING:
        snprintf(buf, cap, "u");
        break;
    case CAT_DECIMAL: {
        int prec = CAT_DEC_MAX_PREC;
        int64_t lim = cat_pow10(CAT_DEC_MAX_PREC) - 1;
        for (int64_t r = 0; r < nrows && prec == CAT_DEC_MAX_PREC; r++) {
            int64_t v = row_valid(c, r) ? vec_i64(&c->vec, r) : 0;
            if (v > lim || v < -lim) prec = 38;
        }
        snprintf(buf, cap, "d:%d,%d", prec, c->scale);
        break;
    }
    default:
        snprintf(buf, cap, "n");
        break;
    }
}

/* Export the result of st (it has run; NULL: a result of no column) into
 * *out. GQP_OK, or GQP_NOMEM (GQP_ERROR for a column of REALs from an
 * integer overflow) with db's message and out->release NULL. */
static int export_result(gqp *db, gqp_stmt *st, struct ArrowArrayStream *out) {
    static const ExecResult none;
    const ExecResult *res = st ? &st->res : &none;
    /* an Arrow column has one type: an INT64 column holding SQLite's REALs
     * from an integer overflow has none */
    int rr = gqp_no_reals(db, res, "an Arrow column");
    if (rr != GQP_OK) {
        out->release = NULL;
        return rr;
    }
    int nc = res->cols ? res->ncols : 0;
    int64_t nrows = nc > 0 ? res->nrows : 0;
    ExpStream *x = calloc(1, sizeof *x);
    if (!x) goto oom;
    x->cols = calloc((size_t)(nc > 0 ? nc : 1), sizeof *x->cols);
    if (!x->cols) goto oom;
    x->ncols = nc;
    for (int j = 0; j < nc; j++) {
        const char *name = gqp_column_name(st, j);
        if (!(x->cols[j].name = dupstr(name ? name : ""))) goto oom;
        exp_format(&res->cols[j], nrows, x->cols[j].format, sizeof x->cols[j].format);
    }
    int64_t cap = nrows / GQP_ARROW_BATCH_ROWS + 1;
    x->batches = calloc((size_t)cap, sizeof *x->batches);
    if (!x->batches) goto oom;
    for (int64_t r0 = 0; r0 < nrows;) {
        int64_t r1 = batch_end(res, r0);
        if (x->nbatches == cap) {
            struct ArrowArray *p = realloc(x->batches, (size_t)cap * 2 * sizeof *p);
            if (!p) goto oom;
            memset(p + cap, 0, (size_t)cap * sizeof *p);
            x->batches = p;
            cap *= 2;
        }
        struct ArrowArray *b = &x->batches[x->nbatches];
        if (exp_array_init(b, r1 - r0, 1, nc) != 0) goto oom;
        x->nbatches++;
        ExpArray *p = b->private_data;
        for (int j = 0; j < nc; j++)
            if (exp_column(&res->cols[j], r0, r1, &p->kids[j]) != 0) goto oom;
        r0 = r1;
    }
    memset(out, 0, sizeof *out);
    out->get_schema = exp_get_schema;
    out->get_next = exp_get_next;
    out->get_last_error = exp_last_error;
    out->release = exp_stream_release;
    out->private_data = x;
    return GQP_OK;
oom:
    exp_stream_free(x);
    return gqp_set_error(db, GQP_NOMEM, "out of memory exporting the result to Arrow");
}

int gqp_stmt_arrow_stream(gqp_stmt *st, struct ArrowArrayStream *out) {
    if (out) out->release = NULL;
    if (!st) return GQP_MISUSE;
    gqp *db = st->db;
    gqp_enter(db);
    int rc = GQP_OK;
    if (!out)
        rc = gqp_set_error(db, GQP_MISUSE, "API Error: gqp_stmt_arrow_stream: out is NULL");
    else if (!st->ran) {
        rc = gqp_step(st);
        if (rc == GQP_ROW || rc == GQP_DONE) rc = GQP_OK;
    }
    if (rc == GQP_OK) rc = export_result(db, st, out);
    gqp_leave(db);
    return rc;
}

int gqp_query_arrow(gqp *db, const char *sql, struct ArrowArrayStream *out) {
    if (out) out->release = NULL;
    if (!db) return GQP_MISUSE;
    if (!sql || !out)
        return gqp_set_error(db, GQP_MISUSE, "API Error: gqp_query_arrow: sql or out is NULL");
    gqp_enter(db);
    gqp_stmt *last = NULL;
    const char *p = sql;
    int rc = GQP_OK;
    for (;;) {
        gqp_stmt *st = NULL;
        const char *tail = NULL;
        rc = gqp_prepare(db, p, -1, &st, &tail);
        if (rc != GQP_OK || !st) break;
        rc = gqp_step(st);
        if (rc != GQP_ROW && rc != GQP_DONE) {
            gqp_finalize(st);
            break;
        }
        rc = GQP_OK;
        gqp_finalize(last);
        last = st;
        if (!tail || !*tail) break;
        p = tail;
    }
    /* (nothing but white space and comments: no column, no batch) */
    if (rc == GQP_OK) rc = export_result(db, last, out);
    gqp_finalize(last);
    gqp_leave(db);
    return rc;
}

/* ------------------------------------------------------------ import -- */

/* Register the nb batches of schema as table `name` (db locked; replace:
 * over a table of that name). GQP_OK or an error code with db's message;
 * releases nothing. */
static int register_locked(gqp *db, const char *name, const struct ArrowSchema *schema,
                           struct ArrowArray *const *batches, int64_t nb, int replace) {
    CatError err;
    if (gqp_is_view(db, name))
        return gqp_set_error(db, GQP_ERROR, "Catalog Error: view %s already exists", name);
    CatTable *old = replace ? cat_find_table(db->cat, name) : NULL;
    /* the old table's columns leave the GPU cache (harmless if it stays) */
    if (old) gqp_forget_table(db, old);
    if (cat_load_arrow(db->cat, name, schema, batches, nb, replace, &err) != 0)
        return gqp_set_error(db, strstr(err.msg, "out of memory") ? GQP_NOMEM : GQP_ERROR, "%s",
                             err.msg);
    /* prepared plans must bind again: a name they saw missing may exist */
    db->version++;
    return GQP_OK;
}

int gqp_register_arrow(gqp *db, const char *name, struct ArrowArrayStream *stream) {
    return gqp_register_arrow_ex(db, name, stream, 0);
}

int gqp_register_arrow_ex(gqp *db, const char *name, struct ArrowArrayStream *stream, int flags) {
    if (!db) {
        if (stream && stream->release) stream->release(stream);
        return GQP_MISUSE;
    }
    gqp_enter(db);
    int rc = GQP_OK;
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    struct ArrowArray **batches = NULL;
    int64_t nb = 0, cap = 0;
    CatError err;
    if (!stream || !stream->release || !stream->get_schema || !stream->get_next) {
        rc = gqp_set_error(db, GQP_MISUSE,
                           "API Error: gqp_register_arrow: the stream is NULL or released");
        goto done;
    }
    if (!name || !*name) {
        rc = gqp_set_error(db, GQP_MISUSE, "API Error: gqp_register_arrow: the name is empty");
        goto done;
    }
    if (flags & ~GQP_ARROW_REPLACE) {
        rc = gqp_set_error(db, GQP_MISUSE, "API Error: gqp_register_arrow_ex: unknown flags %d",
                           flags);
        goto done;
    }
    int e = stream->get_schema(stream, &schema);
    if (e != 0 || !schema.release) {
        const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
        rc = gqp_set_error(db, GQP_ERROR,
                           "Catalog Error: cannot register table '%s': the Arrow stream gave no "
                           "schema (error %d%s%s)",
                           name, e, m ? ": " : "", m ? m : "");
        if (e == 0) memset(&schema, 0, sizeof schema);
        goto done;
    }
    /* refuse a type gqp cannot hold before reading any batch */
    if (gqp_is_view(db, name)) {
        rc = gqp_set_error(db, GQP_ERROR, "Catalog Error: view %s already exists", name);
        goto done;
    }
    if (cat_arrow_check(db->cat, name, &schema, flags & GQP_ARROW_REPLACE, &err) != 0) {
        rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
        goto done;
    }
    for (;;) {
        if (nb == cap) {
            int64_t ncap = cap ? cap * 2 : 16;
            struct ArrowArray **p = realloc(batches, (size_t)ncap * sizeof *p);
            if (!p) {
                rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
                goto done;
            }
            batches = p;
            cap = ncap;
        }
        struct ArrowArray *a = calloc(1, sizeof *a);
        if (!a) {
            rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
            goto done;
        }
        e = stream->get_next(stream, a);
        if (e != 0) {
            const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
            rc = gqp_set_error(db, GQP_ERROR,
                               "Catalog Error: cannot register table '%s': reading Arrow batch "
                               "%lld failed (error %d%s%s)",
                               name, (long long)(nb + 1), e, m ? ": " : "", m ? m : "");
            free(a);
            goto done;
        }
        if (!a->release) { /* the end of the stream */
            free(a);
            break;
        }
        batches[nb++] = a;
    }
    rc = register_locked(db, name, &schema, batches, nb, flags & GQP_ARROW_REPLACE);
done:
    for (int64_t b = 0; b < nb; b++) {
        if (batches[b]->release) batches[b]->release(batches[b]);
        free(batches[b]);
    }
    free(batches);
    if (schema.release) schema.release(&schema);
    if (stream && stream->release) stream->release(stream);
    gqp_leave(db);
    return rc;
}

int gqp_register_arrow_array(gqp *db, const char *name, struct ArrowSchema *schema,
                             struct ArrowArray *array) {
    int rc;
    if (!db)
        rc = GQP_MISUSE;
    else {
        gqp_enter(db);
        if (!schema || !schema->release || !array || !array->release)
            rc = gqp_set_error(db, GQP_MISUSE,
                               "API Error: gqp_register_arrow_array: the schema or the array is "
                               "NULL or released");
        else if (!name || !*name)
            rc = gqp_set_error(db, GQP_MISUSE,
                               "API Error: gqp_register_arrow_array: the name is empty");
        else
            rc = register_locked(db, name, schema, &array, 1, 0);
        gqp_leave(db);
    }
    if (array && array->release) array->release(array);
    if (schema && schema->release) schema->release(schema);
    return rc;
}
