/*
 * insert.c -- INSERT: append rows with SQLite-like conversions, all or
 * nothing. Every column is rebuilt into new arrays first; only when every
 * value converted (and every allocation succeeded) are the new arrays
 * swapped in. STRING columns get a fresh sorted dictionary and are re-coded.
 * Meant for small tables: the cost is O(rows of the table) per call.
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

/* The new arrays of one column while an INSERT is being built. */
typedef struct NewCol {
    void *data;
    uint8_t *valid;
    CatDict *dict;
    char **owned; /* STRING: text made from numbers, per new row (or NULL) */
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

/* Convert v for column c into row r of nc (r counts from the start of the
 * new arrays). Returns 0, or -1 with err naming the INSERT row (irow, from
 * 1) and the column. */
static int convert(const CatTable *t, const CatColumn *c, NewCol *nc, int64_t r, int64_t irow,
                   const CatValue *v, CatError *err) {
    char text[64], vbuf[CAT_ERR_VALUE_MAX + 4];
    int64_t i = 0;
    double f = 0;
    if (v->kind == CAT_V_NULL) {
        nc->valid[r] = 0;
        return 0;
    }
    nc->valid[r] = 1;
    const char *shown = NULL;
    if (v->kind == CAT_V_INT) {
        snprintf(text, sizeof text, "%lld", (long long)v->i);
        shown = text;
    } else if (v->kind == CAT_V_FLOAT) {
        real_text(v->f, text);
        shown = text;
    } else if (v->kind == CAT_V_STR) {
        shown = v->s ? v->s : "";
    } else {
        return cat_err(err, "INSERT into '%s': row %lld, column '%s': invalid value kind %d",
                       t->name, (long long)irow, c->name, (int)v->kind);
    }
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
            ok = text_to_int(shown, &i) == 0;
        }
        if (ok && c->type == CAT_INT32 && (i < INT32_MIN || i > INT32_MAX)) ok = 0;
        if (ok && c->type == CAT_INT32)
            ((int32_t *)nc->data)[r] = (int32_t)i;
        else if (ok)
            ((int64_t *)nc->data)[r] = i;
        break;
    case CAT_FLOAT32:
    case CAT_FLOAT64:
        if (v->kind == CAT_V_INT)
            f = (double)v->i;
        else if (v->kind == CAT_V_FLOAT)
            f = v->f;
        else
            ok = cat_parse_f64(shown, strlen(shown), &f) == 0;
        if (ok && c->type == CAT_FLOAT32)
            ((float *)nc->data)[r] = (float)f;
        else if (ok)
            ((double *)nc->data)[r] = f;
        break;
    case CAT_DATE:
        ok = v->kind == CAT_V_STR &&
             cat_parse_date(shown, strlen(shown), (int32_t *)nc->data + r) == 0;
        break;
    case CAT_BOOL:
        if (v->kind == CAT_V_INT)
            ((uint8_t *)nc->data)[r] = v->i != 0;
        else if (v->kind == CAT_V_FLOAT)
            ((uint8_t *)nc->data)[r] = v->f != 0;
        else
            ok = cat_parse_bool(shown, strlen(shown), (uint8_t *)nc->data + r) == 0;
        break;
    case CAT_STRING:
        if (v->kind != CAT_V_STR) {
            size_t n = strlen(text) + 1;
            char *own = malloc(n);
            if (!own) return cat_err(err, "INSERT into '%s': out of memory", t->name);
            memcpy(own, text, n);
            nc->owned[r - c->n] = own;
        }
        break;
    default:
        ok = 0;
        break;
    }
    if (!ok)
        return cat_err(err, "INSERT into '%s': row %lld, column '%s': cannot convert %s'%s' to %s",
                       t->name, (long long)irow, c->name, v->kind == CAT_V_STR ? "text " : "",
                       cat_err_value(vbuf, shown, strlen(shown)), cat_type_name(c->type));
    return 0;
}

/* Build the dictionary and codes of STRING column c over its old rows
 * plus the new ones (vals column `ci`, stride ncols). Returns 0 or -1
 * (out of memory). */
static int rebuild_strings(const CatColumn *c, NewCol *nc, int64_t nrows, const CatValue *vals,
                           int ci, int ncols) {
    int64_t total = c->n + nrows;
    const char **strs = malloc((size_t)total * sizeof *strs);
    size_t *lens = malloc((size_t)total * sizeof *lens);
    if (!strs || !lens) {
        free(strs);
        free(lens);
        return -1;
    }
    for (int64_t r = 0; r < total; r++) {
        strs[r] = "";
        lens[r] = 0;
        if (!nc->valid[r]) continue;
        if (r < c->n) {
            int32_t code = ((const int32_t *)c->data)[r];
            strs[r] = cat_dict_str(c->dict, code);
            lens[r] = (size_t)cat_dict_len(c->dict, code);
            if (!strs[r]) {
                strs[r] = "";
                lens[r] = 0;
            }
        } else {
            const CatValue *v = &vals[(r - c->n) * ncols + ci];
            strs[r] = nc->owned[r - c->n] ? nc->owned[r - c->n] : (v->s ? v->s : "");
            lens[r] = strlen(strs[r]);
        }
    }
    nc->dict = cat_dict_build_masked(strs, lens, total, nc->valid, nc->data);
    free(strs);
    free(lens);
    return nc->dict ? 0 : -1;
}

/* Free one NewCol's arrays (after a failed INSERT, or its scratch after a
 * successful one when `scratch_only`). */
static void newcol_free(NewCol *nc, int64_t nrows, int scratch_only) {
    if (nc->owned)
        for (int64_t r = 0; r < nrows; r++)
            free(nc->owned[r]);
    free(nc->owned);
    nc->owned = NULL;
    if (scratch_only) return;
    cat_host_free(nc->data);
    cat_host_free(nc->valid);
    cat_dict_free(nc->dict);
}

/* INSERT nrows rows of vals (row-major) into t; see catalog.h. Returns 0,
 * or -1 with err set and t unchanged. */
int cat_insert_rows(CatTable *t, int64_t nrows, const CatValue *vals, CatError *err) {
    if (!t) return cat_err(err, "INSERT: no table");
    if (nrows < 0) return cat_err(err, "INSERT into '%s': negative row count", t->name);
    if (nrows == 0) return 0;
    if (!vals) return cat_err(err, "INSERT into '%s': no values", t->name);
    int64_t total = t->nrows + nrows;
    NewCol *nc = calloc((size_t)t->ncols, sizeof *nc);
    if (!nc) return cat_err(err, "INSERT into '%s': out of memory", t->name);
    int rc = -1;
    for (int ci = 0; ci < t->ncols; ci++) {
        CatColumn *c = &t->cols[ci];
        size_t w = cat_type_width(c->type);
        nc[ci].data = cat_host_alloc((size_t)total * w);
        nc[ci].valid = cat_host_alloc((size_t)total);
        if (c->type == CAT_STRING) nc[ci].owned = calloc((size_t)nrows, sizeof *nc[ci].owned);
        if (!nc[ci].data || !nc[ci].valid || (c->type == CAT_STRING && !nc[ci].owned)) {
            cat_err(err, "INSERT into '%s': out of memory", t->name);
            goto done;
        }
        if (c->n) memcpy(nc[ci].data, c->data, (size_t)c->n * w);
        if (c->valid)
            memcpy(nc[ci].valid, c->valid, (size_t)c->n);
        else
            memset(nc[ci].valid, 1, (size_t)c->n);
        for (int64_t r = 0; r < nrows; r++)
            if (convert(t, c, &nc[ci], c->n + r, r + 1, &vals[r * t->ncols + ci], err) != 0)
                goto done;
        if (c->type == CAT_STRING && rebuild_strings(c, &nc[ci], nrows, vals, ci, t->ncols) != 0) {
            cat_err(err, "INSERT into '%s': out of memory", t->name);
            goto done;
        }
    }
    /* Commit: nothing below can fail. */
    for (int ci = 0; ci < t->ncols; ci++) {
        CatColumn *c = &t->cols[ci];
        int any_null = 0;
        for (int64_t r = 0; r < total && !any_null; r++)
            any_null = !nc[ci].valid[r];
        cat_host_free(c->data);
        cat_host_free(c->valid);
        c->data = nc[ci].data;
        c->valid = any_null ? nc[ci].valid : NULL;
        if (!any_null) cat_host_free(nc[ci].valid);
        if (c->type == CAT_STRING) {
            cat_dict_free(c->dict);
            c->dict = nc[ci].dict;
        }
        c->n = total;
        newcol_free(&nc[ci], nrows, 1);
    }
    t->nrows = total;
    cat_table_stats(t);
    free(nc);
    return 0;
done:
    for (int ci = 0; ci < t->ncols; ci++)
        newcol_free(&nc[ci], nrows, 0);
    free(nc);
    return rc;
}
