/*
 * insert.c -- INSERT: append rows with SQLite-like conversions, all or
 * nothing, in three steps: every value is converted into scratch arrays;
 * then everything that may fail is allocated (grown column arrays, room in
 * the string dictionaries); only then are the rows appended, which cannot
 * fail. Arrays grow geometrically and new strings go to the end of the
 * dictionary through its hash index, so a one-row INSERT costs O(columns)
 * amortized whatever the table's size. The table is left `stale`:
 * cat_table_ready() re-sorts the dictionaries and recomputes the stats
 * before a query reads it.
 *
 *   value \ column | INT32/INT64      | FLOAT32/64 | DATE        | BOOL     | STRING
 *   ---------------+------------------+------------+-------------+----------+---------
 *   int            | range-checked    | widened    | error       | != 0     | its text
 *   float          | if integral and  | as is      | error       | != 0     | %.15g text
 *                  | in range         |            |             |          |
 *   text           | if it parses     | if it      | yyyy-mm-dd  | true/... | as is
 *                  | entirely         | parses     |             |          |
 *   NULL           | NULL             | NULL       | NULL        | NULL     | NULL
 */
#include "catalog/cat_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One column while an INSERT is being built. */
typedef struct NewCol {
    void *vals;       /* the new rows' converted values (not STRING) */
    uint8_t *valid;   /* the new rows' validity */
    const char **str; /* STRING: the new rows' text */
    char **owned;     /* STRING: text made from numbers, per new row (or NULL) */
    void *data;       /* grown data array (cap rows), or NULL to keep c->data */
    uint8_t *cvalid;  /* new validity array (cap rows), or NULL to keep c->valid */
    int64_t cap;      /* capacity of data / cvalid */
    char *old_bytes;  /* STRING: dictionary bytes moved by the reserve */
} NewCol;

/* Text of a double as SQLite prints a REAL: %.15g, with ".0" added when it
 * would otherwise read as an integer. Writes into buf (>= 40 bytes). */
static void real_text(double f, char *buf) {
    snprintf(buf, 32, "%.15g", f);
    if (strpbrk(buf, ".ni") != NULL) return;
    char *e = strchr(buf, 'e');
    if (!e) {
        strcat(buf, ".0");
        return;
    }
    char tail[32];
    strcpy(tail, e);
    strcpy(e, ".0");
    strcat(buf, tail);
}

/* Integer value of text s for an integer column: a whole-string integer,
 * or a float that is integral and within int64. Returns 0 or -1. */
static int text_to_int(const char *s, int64_t *out) {
    size_t n = strlen(s);
    double d;
    if (cat_parse_i64(s, n, out) == 0) return 0;
    if (cat_parse_f64(s, n, &d) == 0 && d == floor(d) && d >= -9223372036854775808.0 &&
        d < 9223372036854775808.0) {
        *out = (int64_t)d;
        return 0;
    }
    return -1;
}

/* v as text: *shown when set, else v (an integer or a REAL) printed into
 * text (>= 64 bytes), which *shown then points at. */
static const char *value_text(const CatValue *v, const char **shown, char *text) {
    if (!*shown) {
        if (v->kind == CAT_V_INT)
            snprintf(text, 64, "%lld", (long long)v->i);
        else
            real_text(v->f, text);
        *shown = text;
    }
    return *shown;
}

/* Convert v for column c into new row r of nc (r counts from 0, the first
 * inserted or updated row). Returns 0, or -1 with err naming the statement
 * (verb: "INSERT into" / "UPDATE of"), the row (r + 1) and the column. */
static int convert(const CatTable *t, const CatColumn *c, NewCol *nc, int64_t r, const CatValue *v,
                   const char *verb, CatError *err) {
    int64_t irow = r + 1;
    char text[64], vbuf[CAT_ERR_VALUE_MAX + 4];
    int64_t i = 0;
    double f = 0;
    CatValue iv;
    if (v->kind == CAT_V_NULL) {
        nc->valid[r] = 0;
        return 0;
    }
    nc->valid[r] = 1;
    if (v->kind == CAT_V_RAW) {
        if (c->type == CAT_DATE && v->i >= INT32_MIN && v->i <= INT32_MAX) {
            ((int32_t *)nc->vals)[r] = (int32_t)v->i;
            return 0;
        }
        if (c->type == CAT_DECIMAL) {
            ((int64_t *)nc->vals)[r] = v->i;
            return 0;
        }
        iv = *v;
        iv.kind = CAT_V_INT;
        v = &iv;
    }
    if (v->kind != CAT_V_INT && v->kind != CAT_V_FLOAT && v->kind != CAT_V_STR)
        return cat_err(err, "%s '%s': row %lld, column '%s': invalid value kind %d", verb, t->name,
                       (long long)irow, c->name, (int)v->kind);
    /* the value as text, made only where it is read (a number into a
     * DECIMAL or STRING column, an error message): printing every value
     * cost more than the rest of an INSERT */
    const char *shown = v->kind == CAT_V_STR ? (v->s ? v->s : "") : NULL;
#define SHOWN() value_text(v, &shown, text)
    int ok = 1;
    switch (c->type) {
    case CAT_INT32:
    case CAT_INT64:
        if (v->kind == CAT_V_INT) {
            i = v->i;
        } else if (v->kind == CAT_V_FLOAT) {
            ok = v->f == floor(v->f) && v->f >= -9223372036854775808.0 &&
                 v->f < 9223372036854775808.0;
            if (ok) i = (int64_t)v->f;
        } else {
            ok = text_to_int(SHOWN(), &i) == 0;
        }
        if (ok && c->type == CAT_INT32 && (i < INT32_MIN || i > INT32_MAX)) ok = 0;
        if (ok && c->type == CAT_INT32)
            ((int32_t *)nc->vals)[r] = (int32_t)i;
        else if (ok)
            ((int64_t *)nc->vals)[r] = i;
        break;
    case CAT_FLOAT32:
    case CAT_FLOAT64:
        if (v->kind == CAT_V_INT)
            f = (double)v->i;
        else if (v->kind == CAT_V_FLOAT)
            f = v->f;
        else
            ok = cat_parse_f64(SHOWN(), strlen(SHOWN()), &f) == 0;
        if (ok && c->type == CAT_FLOAT32)
            ((float *)nc->vals)[r] = (float)f;
        else if (ok)
            ((double *)nc->vals)[r] = f;
        break;
    case CAT_DATE:
        ok = v->kind == CAT_V_STR &&
             cat_parse_date(SHOWN(), strlen(SHOWN()), (int32_t *)nc->vals + r) == 0;
        break;
    case CAT_BOOL:
        if (v->kind == CAT_V_INT)
            ((uint8_t *)nc->vals)[r] = v->i != 0;
        else if (v->kind == CAT_V_FLOAT)
            ((uint8_t *)nc->vals)[r] = v->f != 0;
        else
            ok = cat_parse_bool(SHOWN(), strlen(SHOWN()), (uint8_t *)nc->vals + r) == 0;
        break;
    case CAT_DECIMAL: {
        /* an integer exactly; a REAL or text through its decimal text (so
         * that the literal 1.005 is 1.01 at scale 2, as DuckDB reads it) */
        int64_t d = 0;
        int bad;
        if (v->kind == CAT_V_INT) {
            int64_t lim = cat_pow10(c->prec - c->scale);
            bad = v->i >= lim || v->i <= -lim;
            d = bad ? 0 : v->i * cat_pow10(c->scale);
        } else {
            bad = cat_parse_decimal(SHOWN(), strlen(SHOWN()), c->prec, c->scale, &d);
        }
        ok = bad == 0;
        if (ok) ((int64_t *)nc->vals)[r] = d;
        break;
    }
    case CAT_STRING:
        if (v->kind != CAT_V_STR) {
            size_t n = strlen(SHOWN()) + 1;
            char *own = malloc(n);
            if (!own) return cat_err(err, "INSERT into '%s': out of memory", t->name);
            memcpy(own, text, n);
            nc->owned[r] = own;
            nc->str[r] = own;
        } else {
            nc->str[r] = shown;
        }
        break;
    default:
        ok = 0;
        break;
    }
    if (!ok)
        return cat_err(err, "%s '%s': row %lld, column '%s': cannot convert %s'%s' to %s", verb,
                       t->name, (long long)irow, c->name, v->kind == CAT_V_STR ? "text " : "",
                       cat_err_value(vbuf, SHOWN(), strlen(SHOWN())), cat_type_name(c->type));
    return 0;
#undef SHOWN
}

/* Free the scratch and, unless `committed`, the grown arrays of nc. */
static void newcol_free(NewCol *nc, int64_t nrows, int committed) {
    if (nc->owned)
        for (int64_t r = 0; r < nrows; r++)
            free(nc->owned[r]);
    free(nc->owned);
    free(nc->str);
    free(nc->vals);
    free(nc->valid);
    cat_host_free(nc->old_bytes);
    if (committed) return;
    cat_host_free(nc->data);
    cat_host_free(nc->cvalid);
}

/* Allocate what appending nc's nrows rows to column c needs: a grown data
 * array (twice the capacity, at least), a validity array when a NULL
 * arrives and the column had none, room in the dictionary. Changes nothing
 * visible. Returns 0 or -1 (out of memory). */
static int reserve(CatColumn *c, NewCol *nc, int64_t nrows) {
    int64_t total = c->n + nrows;
    int64_t cap = c->cap > c->n ? c->cap : c->n;
    int any_null = 0;
    for (int64_t r = 0; r < nrows && !any_null; r++)
        any_null = !nc->valid[r];
    int need_valid = c->valid != NULL || any_null;
    nc->cap = cap;
    if (total > cap) {
        nc->cap = total > 2 * cap ? total : 2 * cap;
        if (nc->cap < 16) nc->cap = 16;
        nc->data = cat_host_alloc((size_t)nc->cap * cat_type_width(c->type));
        if (!nc->data) return -1;
    }
    if (need_valid && (nc->data || !c->valid)) {
        nc->cvalid = cat_host_alloc((size_t)nc->cap);
        if (!nc->cvalid) return -1;
    }
    if (c->type == CAT_STRING) {
        int64_t more_n = 0;
        size_t more_bytes = 0;
        for (int64_t r = 0; r < nrows; r++) {
            if (!nc->valid[r]) continue;
            more_n++;
            more_bytes += strlen(nc->str[r]) + 1;
        }
        if (cat_dict_reserve(c->dict, more_n, more_bytes, &nc->old_bytes) != 0) return -1;
    }
    return 0;
}

/* Append nc's nrows rows to column c (after reserve(); cannot fail). */
static void append(CatColumn *c, NewCol *nc, int64_t nrows) {
    size_t w = cat_type_width(c->type);
    if (nc->data) {
        if (c->n) memcpy(nc->data, c->data, (size_t)c->n * w);
        cat_column_free_data(c);
        c->data = nc->data;
    }
    if (nc->cvalid) {
        if (c->valid)
            memcpy(nc->cvalid, c->valid, (size_t)c->n);
        else
            memset(nc->cvalid, 1, (size_t)c->n);
        cat_host_free(c->valid);
        c->valid = nc->cvalid;
    }
    c->cap = nc->cap;
    if (c->valid) memcpy(c->valid + c->n, nc->valid, (size_t)nrows);
    if (c->type == CAT_STRING) {
        int32_t *codes = (int32_t *)c->data + c->n;
        for (int64_t r = 0; r < nrows; r++)
            codes[r] = nc->valid[r] ? cat_dict_append(c->dict, nc->str[r], strlen(nc->str[r])) : 0;
    } else {
        memcpy((char *)c->data + (size_t)c->n * w, nc->vals, (size_t)nrows * w);
    }
    c->n += nrows;
}

static int insert_unique_check(const CatTable *t, const NewCol *nc, int64_t nrows, CatError *err);

/* INSERT nrows rows of vals (row-major) into t; see catalog.h. Returns 0,
 * or -1 with err set and t unchanged. */
int cat_insert_rows(CatTable *t, int64_t nrows, const CatValue *vals, CatError *err) {
    if (!t) return cat_err(err, "INSERT: no table");
    if (nrows < 0) return cat_err(err, "INSERT into '%s': negative row count", t->name);
    if (nrows == 0) return 0;
    if (!vals) return cat_err(err, "INSERT into '%s': no values", t->name);
    if (cat_table_use_all(t, err) != 0) return -1; /* a binary table: read it first */
    NewCol *nc = calloc((size_t)t->ncols, sizeof *nc);
    if (!nc) return cat_err(err, "INSERT into '%s': out of memory", t->name);
    int rc = -1;
    for (int ci = 0; ci < t->ncols; ci++) {
        CatColumn *c = &t->cols[ci];
        size_t w = cat_type_width(c->type);
        nc[ci].valid = malloc((size_t)nrows);
        if (c->type == CAT_STRING) {
            nc[ci].owned = calloc((size_t)nrows, sizeof *nc[ci].owned);
            nc[ci].str = calloc((size_t)nrows, sizeof *nc[ci].str);
        } else {
            nc[ci].vals = calloc((size_t)nrows, w);
        }
        if (!nc[ci].valid ||
            (c->type == CAT_STRING ? !nc[ci].owned || !nc[ci].str : !nc[ci].vals)) {
            cat_err(err, "INSERT into '%s': out of memory", t->name);
            goto done;
        }
        for (int64_t r = 0; r < nrows; r++)
            if (convert(t, c, &nc[ci], r, &vals[r * t->ncols + ci], "INSERT into", err) != 0)
                goto done;
    }
    if (insert_unique_check(t, nc, nrows, err) != 0) goto done;
    for (int ci = 0; ci < t->ncols; ci++) {
        if (reserve(&t->cols[ci], &nc[ci], nrows) != 0) {
            cat_err(err, "INSERT into '%s': out of memory", t->name);
            goto done;
        }
    }
    /* Commit: nothing below can fail. */
    for (int ci = 0; ci < t->ncols; ci++)
        append(&t->cols[ci], &nc[ci], nrows);
    t->nrows += nrows;
    t->stale = 1;
    rc = 0;
done:
    for (int ci = 0; ci < t->ncols; ci++)
        newcol_free(&nc[ci], nrows, rc == 0);
    free(nc);
    return rc;
}

int cat_table_adopt(CatTable *t, int64_t nrows, void **data, uint8_t **valid, CatError *err) {
    if (!t) return cat_err(err, "INSERT: no table");
    if (t->nrows != 0 || t->nindexes || nrows < 0)
        return cat_err(err, "INSERT into '%s': not an empty table without indexes", t->name);
    for (int c = 0; c < t->ncols; c++)
        if (t->cols[c].type == CAT_STRING || t->cols[c].lazy || t->cols[c].map)
            return cat_err(err, "INSERT into '%s': column '%s' cannot take an array", t->name,
                           t->cols[c].name);
    for (int c = 0; c < t->ncols; c++) {
        CatColumn *col = &t->cols[c];
        cat_column_free_data(col); /* what creating the table reserved */
        cat_host_free(col->valid);
        col->data = data[c];
        col->valid = valid[c];
        col->n = nrows;
        col->cap = nrows;
    }
    t->nrows = nrows;
    t->stale = 1;
    return 0;
}

/* See catalog.h: sort the dictionaries and recompute the stats of a stale
 * table. */
int cat_table_ready(CatTable *t) {
    if (!t || !t->stale) return 0;
    CatError e;
    if (cat_table_use_all(t, &e) != 0) return -1;
    for (int ci = 0; ci < t->ncols; ci++) {
        CatColumn *c = &t->cols[ci];
        if (c->type == CAT_STRING && c->dict && c->dict->unsorted &&
            cat_dict_sort(c->dict, c->data, c->valid, c->n) != 0)
            return -1;
    }
    cat_table_stats(t);
    t->stale = 0;
    return 0;
}

/* The table as an INSERT would leave it, for the UNIQUE check: old rows
 * from the columns, new ones from the converted scratch. */
typedef struct InsView {
    const CatTable *t;
    const NewCol *nc;
} InsView;

/* Value of a converted scratch row r of column c (nc). */
static void newcol_cell(const CatColumn *c, const NewCol *nc, int64_t r, CatCell *out) {
    memset(out, 0, sizeof *out);
    if (!nc->valid[r]) {
        out->null = 1;
        return;
    }
    switch (c->type) {
    case CAT_INT32:
    case CAT_DATE:
        out->i = ((const int32_t *)nc->vals)[r];
        break;
    case CAT_INT64:
    case CAT_DECIMAL:
        out->i = ((const int64_t *)nc->vals)[r];
        break;
    case CAT_BOOL:
        out->i = ((const uint8_t *)nc->vals)[r];
        break;
    case CAT_FLOAT32:
        out->f = ((const float *)nc->vals)[r];
        break;
    case CAT_FLOAT64:
        out->f = ((const double *)nc->vals)[r];
        break;
    case CAT_STRING:
        out->s = nc->str[r];
        out->len = strlen(nc->str[r]);
        break;
    default:
        break;
    }
}

/* CatCellFn over an InsView. */
static void ins_cell(const void *ud, int col, int64_t r, CatCell *out) {
    const InsView *v = ud;
    const CatColumn *c = &v->t->cols[col];
    if (r < v->t->nrows)
        cat_cell_of(c, r, out);
    else
        newcol_cell(c, &v->nc[col], r - v->t->nrows, out);
}

/* UNIQUE check of an INSERT of nrows converted rows (nc, per column). */
static int insert_unique_check(const CatTable *t, const NewCol *nc, int64_t nrows, CatError *err) {
    if (!t->nindexes) return 0;
    InsView v = {t, nc};
    return cat_unique_check(t, t->nrows + nrows, ins_cell, &v, err);
}

/* The table as an UPDATE would leave it: upd[col] is the scratch of a SET
 * column (NULL otherwise), pos[r] the index of row r among the updated
 * rows (-1 when unchanged). */
typedef struct UpdView {
    const CatTable *t;
    NewCol **upd;
    const int64_t *pos;
} UpdView;

/* CatCellFn over an UpdView. */
static void upd_cell(const void *ud, int col, int64_t r, CatCell *out) {
    const UpdView *v = ud;
    const CatColumn *c = &v->t->cols[col];
    if (v->upd[col] && v->pos[r] >= 0)
        newcol_cell(c, v->upd[col], v->pos[r], out);
    else
        cat_cell_of(c, r, out);
}

/* A new column array set: data (n rows), valid (or NULL), dict (STRING). */
typedef struct Rebuilt {
    void *data;
    uint8_t *valid;
    CatDict *dict;
} Rebuilt;

/* Free a rebuilt column that was not swapped in. */
static void rebuilt_free(Rebuilt *b) {
    cat_host_free(b->data);
    cat_host_free(b->valid);
    cat_dict_free(b->dict);
}

/* Build column c's new arrays (b) for n rows without touching c: row r
 * takes old row o = src[r] (src NULL: o = r), or scratch row pos[o] of nc
 * when nc is given and pos[o] >= 0. STRING columns get a fresh sorted
 * dictionary of the strings they hold. Returns 0 or -1 (out of memory). */
static int rebuild(const CatColumn *c, int64_t n, const int64_t *src, const NewCol *nc,
                   const int64_t *pos, Rebuilt *b) {
    size_t w = cat_type_width(c->type);
    memset(b, 0, sizeof *b);
    b->data = cat_host_alloc((size_t)(n ? n : 1) * w);
    b->valid = cat_host_alloc((size_t)(n ? n : 1));
    if (!b->data || !b->valid) return -1;
    int any_null = 0;
    const char **strs = NULL;
    size_t *lens = NULL;
    if (c->type == CAT_STRING) {
        strs = malloc(sizeof *strs * (size_t)(n ? n : 1));
        lens = malloc(sizeof *lens * (size_t)(n ? n : 1));
        if (!strs || !lens) {
            free(strs);
            free(lens);
            return -1;
        }
    }
    for (int64_t r = 0; r < n; r++) {
        int64_t o = src ? src[r] : r;
        int64_t k = nc ? pos[o] : -1;
        CatCell cell;
        if (k >= 0)
            newcol_cell(c, nc, k, &cell);
        else
            cat_cell_of(c, o, &cell);
        b->valid[r] = !cell.null;
        any_null |= cell.null;
        if (c->type == CAT_STRING) {
            strs[r] = cell.null ? "" : cell.s;
            lens[r] = cell.null ? 0 : cell.len;
        } else if (k >= 0) {
            memcpy((char *)b->data + (size_t)r * w, (const char *)nc->vals + (size_t)k * w, w);
        } else {
            memcpy((char *)b->data + (size_t)r * w, (const char *)c->data + (size_t)o * w, w);
        }
    }
    if (c->type == CAT_STRING) {
        b->dict = cat_dict_build_masked(strs, lens, n, b->valid, (int32_t *)b->data);
        free(strs);
        free(lens);
        if (!b->dict) return -1;
        for (int64_t r = 0; r < n; r++)
            if (!b->valid[r]) ((int32_t *)b->data)[r] = 0;
    }
    if (!any_null) {
        cat_host_free(b->valid);
        b->valid = NULL;
    }
    return 0;
}

/* Swap rebuilt arrays into column c (n rows); frees the old ones. */
static void swap_in(CatColumn *c, Rebuilt *b, int64_t n) {
    cat_column_free_data(c);
    cat_host_free(c->valid);
    c->data = b->data;
    c->valid = b->valid;
    if (c->type == CAT_STRING) {
        cat_dict_free(c->dict);
        c->dict = b->dict;
    }
    c->n = n;
    c->cap = 0;
    memset(b, 0, sizeof *b);
}

/* See catalog.h: UPDATE, all or nothing. */
int cat_update_rows(CatTable *t, int nset, const int *cols, int64_t m, const int64_t *rows,
                    const CatValue *vals, CatError *err) {
    if (!t) return cat_err(err, "UPDATE: no table");
    if (m <= 0 || nset <= 0) return 0;
    if (cat_table_use_all(t, err) != 0) return -1; /* a binary table: read it first */
    int64_t n = t->nrows;
    NewCol *nc = calloc((size_t)nset, sizeof *nc);
    NewCol **upd = calloc((size_t)t->ncols, sizeof *upd);
    Rebuilt *nb = calloc((size_t)nset, sizeof *nb);
    int64_t *pos = malloc(sizeof *pos * (size_t)(n ? n : 1));
    int rc = -1;
    if (!nc || !upd || !nb || !pos) {
        cat_err(err, "UPDATE of '%s': out of memory", t->name);
        goto done;
    }
    for (int64_t r = 0; r < n; r++)
        pos[r] = -1;
    for (int64_t k = 0; k < m; k++) {
        if (rows[k] < 0 || rows[k] >= n) {
            cat_err(err, "UPDATE of '%s': row %lld out of range", t->name, (long long)rows[k]);
            goto done;
        }
        pos[rows[k]] = k;
    }
    for (int j = 0; j < nset; j++) {
        CatColumn *c = &t->cols[cols[j]];
        nc[j].valid = malloc((size_t)m);
        if (c->type == CAT_STRING) {
            nc[j].owned = calloc((size_t)m, sizeof *nc[j].owned);
            nc[j].str = calloc((size_t)m, sizeof *nc[j].str);
        } else {
            nc[j].vals = calloc((size_t)m, cat_type_width(c->type));
        }
        if (!nc[j].valid || (c->type == CAT_STRING ? !nc[j].owned || !nc[j].str : !nc[j].vals)) {
            cat_err(err, "UPDATE of '%s': out of memory", t->name);
            goto done;
        }
        for (int64_t k = 0; k < m; k++)
            if (convert(t, c, &nc[j], k, &vals[k * nset + j], "UPDATE of", err) != 0) goto done;
        upd[cols[j]] = &nc[j];
    }
    if (t->nindexes) {
        UpdView v = {t, upd, pos};
        if (cat_unique_check(t, n, upd_cell, &v, err) != 0) goto done;
    }
    for (int j = 0; j < nset; j++)
        if (rebuild(&t->cols[cols[j]], n, NULL, &nc[j], pos, &nb[j]) != 0) {
            cat_err(err, "UPDATE of '%s': out of memory", t->name);
            goto done;
        }
    /* Commit: nothing below can fail. */
    for (int j = 0; j < nset; j++)
        swap_in(&t->cols[cols[j]], &nb[j], n);
    t->stale = 1;
    rc = 0;
done:
    for (int j = 0; nb && j < nset; j++)
        rebuilt_free(&nb[j]);
    for (int j = 0; nc && j < nset; j++)
        newcol_free(&nc[j], m, 1);
    free(nc);
    free(upd);
    free(nb);
    free(pos);
    return rc;
}

/* See catalog.h: DELETE, all or nothing. */
int cat_delete_rows(CatTable *t, const uint8_t *del, CatError *err) {
    if (!t || !del) return cat_err(err, "DELETE: no table");
    if (cat_table_use_all(t, err) != 0) return -1; /* a binary table: read it first */
    int64_t n = t->nrows, keep = 0;
    int64_t *src = malloc(sizeof *src * (size_t)(n ? n : 1));
    Rebuilt *nb = calloc((size_t)t->ncols, sizeof *nb);
    int rc = -1;
    if (!src || !nb) {
        cat_err(err, "DELETE from '%s': out of memory", t->name);
        goto done;
    }
    for (int64_t r = 0; r < n; r++)
        if (!del[r]) src[keep++] = r;
    if (keep == n) {
        rc = 0;
        goto done;
    }
    for (int ci = 0; ci < t->ncols; ci++)
        if (rebuild(&t->cols[ci], keep, src, NULL, NULL, &nb[ci]) != 0) {
            cat_err(err, "DELETE from '%s': out of memory", t->name);
            goto done;
        }
    /* Commit: nothing below can fail. */
    for (int ci = 0; ci < t->ncols; ci++)
        swap_in(&t->cols[ci], &nb[ci], keep);
    t->nrows = keep;
    t->stale = 1;
    rc = 0;
done:
    for (int ci = 0; nb && ci < t->ncols; ci++)
        rebuilt_free(&nb[ci]);
    free(nb);
    free(src);
    return rc;
}
