/*
 * index.c -- DROP TABLE, indexes (CREATE [UNIQUE] INDEX / DROP INDEX, kept
 * as metadata) and the UNIQUE check that INSERT, UPDATE and CREATE UNIQUE
 * INDEX run: every row's key (the index's columns) is serialized into
 * bytes, the keys are sorted, and two equal neighbours are a violation.
 * A key with a NULL in it never conflicts (NULLs are distinct, as in
 * SQLite).
 */
#include "catalog/cat_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* See cat_internal.h: the value of stored column c at row r. */
void cat_cell_of(const CatColumn *c, int64_t r, CatCell *out) {
    memset(out, 0, sizeof *out);
    if (c->valid && !c->valid[r]) {
        out->null = 1;
        return;
    }
    switch (c->type) {
    case CAT_INT32:
    case CAT_DATE:
        out->i = ((const int32_t *)c->data)[r];
        break;
    case CAT_INT64:
    case CAT_DECIMAL:
        out->i = ((const int64_t *)c->data)[r];
        break;
    case CAT_BOOL:
        out->i = ((const uint8_t *)c->data)[r];
        break;
    case CAT_FLOAT32:
        out->f = ((const float *)c->data)[r];
        break;
    case CAT_FLOAT64:
        out->f = ((const double *)c->data)[r];
        break;
    case CAT_STRING: {
        int32_t code = ((const int32_t *)c->data)[r];
        out->s = cat_dict_str(c->dict, code);
        out->len = (size_t)cat_dict_len(c->dict, code);
        break;
    }
    default:
        break;
    }
}

/* A serialized key: its bytes and length. */
typedef struct Key {
    const char *p;
    size_t len;
} Key;

/* qsort order of keys: bytes, then length. */
static int key_cmp(const void *x, const void *y) {
    const Key *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->p, b->p, n);
    if (c) return c;
    return a->len < b->len ? -1 : a->len > b->len ? 1 : 0;
}

/* Check one unique index ix of t over nrows rows read through fn. */
static int check_index(const CatTable *t, const CatIndex *ix, int64_t nrows, CatCellFn fn,
                       const void *ud, CatError *err) {
    if (nrows < 2) return 0;
    size_t total = 0;
    CatCell cell;
    for (int64_t r = 0; r < nrows; r++)
        for (int k = 0; k < ix->ncols; k++) {
            fn(ud, ix->cols[k], r, &cell);
            total += 8 + (t->cols[ix->cols[k]].type == CAT_STRING ? cell.len : 0);
        }
    Key *keys = malloc((size_t)nrows * sizeof *keys);
    char *bytes = malloc(total + 1);
    if (!keys || !bytes) {
        free(keys);
        free(bytes);
        return cat_err(err, "out of memory checking index '%s'", ix->name);
    }
    char *p = bytes;
    int64_t nk = 0;
    for (int64_t r = 0; r < nrows; r++) {
        char *start = p;
        int null = 0;
        for (int k = 0; k < ix->ncols && !null; k++) {
            fn(ud, ix->cols[k], r, &cell);
            CatType ty = t->cols[ix->cols[k]].type;
            if (cell.null) {
                null = 1;
            } else if (ty == CAT_STRING) {
                uint64_t len = cell.len;
                memcpy(p, &len, 8);
                memcpy(p + 8, cell.s, cell.len);
                p += 8 + cell.len;
            } else if (ty == CAT_FLOAT32 || ty == CAT_FLOAT64) {
                double f = cell.f == 0 ? 0.0 : cell.f; /* -0.0 equals 0.0 */
                memcpy(p, &f, 8);
                p += 8;
            } else {
                memcpy(p, &cell.i, 8);
                p += 8;
            }
        }
        if (null) {
            p = start;
            continue;
        }
        keys[nk].p = start;
        keys[nk].len = (size_t)(p - start);
        nk++;
    }
    int rc = 0;
    if (nk > 1) qsort(keys, (size_t)nk, sizeof *keys, key_cmp);
    for (int64_t i = 1; i < nk && rc == 0; i++) {
        if (key_cmp(&keys[i - 1], &keys[i]) != 0) continue;
        char msg[sizeof err->msg];
        int o = snprintf(msg, sizeof msg, "Constraint Error: UNIQUE constraint failed: ");
        for (int k = 0; k < ix->ncols && o < (int)sizeof msg; k++)
            o += snprintf(msg + o, sizeof msg - (size_t)o, "%s%s.%s", k ? ", " : "", t->name,
                          t->cols[ix->cols[k]].name);
        if (err) snprintf(err->msg, sizeof err->msg, "%s", msg);
        rc = -1;
    }
    free(keys);
    free(bytes);
    return rc;
}

/* See cat_internal.h. */
int cat_unique_check(const CatTable *t, int64_t nrows, CatCellFn fn, const void *ud,
                     CatError *err) {
    for (int i = 0; i < t->nindexes; i++)
        if (t->indexes[i].unique && check_index(t, &t->indexes[i], nrows, fn, ud, err) != 0)
            return -1;
    return 0;
}

/* Free one index's arrays. */
static void index_free(CatIndex *ix) {
    free(ix->name);
    free(ix->cols);
}

/* See cat_internal.h. */
void cat_indexes_free(CatTable *t) {
    for (int i = 0; i < t->nindexes; i++)
        index_free(&t->indexes[i]);
    free(t->indexes);
    t->indexes = NULL;
    t->nindexes = 0;
}

/* See catalog.h. */
int cat_drop_table(Catalog *cat, const char *name, CatError *err) {
    for (int i = 0; cat && name && i < cat->ntables; i++) {
        if (strcasecmp(cat->tables[i]->name, name) != 0) continue;
        cat_table_free(cat->tables[i]);
        memmove(&cat->tables[i], &cat->tables[i + 1],
                sizeof *cat->tables * (size_t)(cat->ntables - i - 1));
        cat->ntables--;
        return 0;
    }
    return cat_err(err, "Table with name %s does not exist!", name ? name : "");
}

/* See catalog.h. */
CatTable *cat_find_index(const Catalog *cat, const char *name, int *which) {
    for (int i = 0; cat && name && i < cat->ntables; i++) {
        CatTable *t = cat->tables[i];
        for (int k = 0; k < t->nindexes; k++)
            if (strcasecmp(t->indexes[k].name, name) == 0) {
                if (which) *which = k;
                return t;
            }
    }
    return NULL;
}

/* The stored table t read as is (fn for cat_unique_check; ud is t). */
static void table_cell(const void *ud, int col, int64_t r, CatCell *out) {
    const CatTable *t = ud;
    cat_cell_of(&t->cols[col], r, out);
}

/* See catalog.h. */
int cat_create_index(Catalog *cat, CatTable *t, const char *name, int ncols, const int *cols,
                     int unique, CatError *err) {
    if (!cat || !t || !name || !*name || ncols < 1) return cat_err(err, "invalid index");
    if (cat_find_table(cat, name) || cat_find_index(cat, name, NULL))
        return cat_err(err, "there is already a table or index named %s", name);
    CatIndex ix = {0};
    ix.ncols = ncols;
    ix.unique = unique;
    ix.name = malloc(strlen(name) + 1);
    ix.cols = malloc(sizeof(int) * (size_t)ncols);
    CatIndex *grown = realloc(t->indexes, sizeof *grown * (size_t)(t->nindexes + 1));
    if (grown) t->indexes = grown;
    if (!ix.name || !ix.cols || !grown) {
        index_free(&ix);
        return cat_err(err, "out of memory creating index %s", name);
    }
    strcpy(ix.name, name);
    memcpy(ix.cols, cols, sizeof(int) * (size_t)ncols);
    for (int k = 0; unique && k < ncols; k++)
        if (cat_column_use(t, cols[k], err) != 0) {
            index_free(&ix);
            return -1;
        }
    if (unique) {
        /* check the data as it is: a one-index table view */
        CatTable probe = *t;
        probe.indexes = &ix;
        probe.nindexes = 1;
        if (cat_unique_check(&probe, t->nrows, table_cell, t, err) != 0) {
            index_free(&ix);
            return -1;
        }
    }
    t->indexes[t->nindexes++] = ix;
    return 0;
}

/* See catalog.h. */
int cat_drop_index(Catalog *cat, const char *name, CatError *err) {
    int k;
    CatTable *t = cat_find_index(cat, name, &k);
    if (!t) return cat_err(err, "no such index: %s", name ? name : "");
    index_free(&t->indexes[k]);
    memmove(&t->indexes[k], &t->indexes[k + 1], sizeof *t->indexes * (size_t)(t->nindexes - k - 1));
    t->nindexes--;
    return 0;
}
