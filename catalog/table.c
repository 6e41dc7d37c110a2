/*
 * table.c -- the Catalog and its tables: creation, lookup, ownership.
 */
#include "catalog/cat_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* An empty catalog, owned by the caller (cat_catalog_free); NULL when out of
 * memory. */
Catalog *cat_catalog_new(void) {
    return calloc(1, sizeof(Catalog));
}

/* Free every table and the catalog; NULL is a no-op. */
void cat_catalog_free(Catalog *cat) {
    if (!cat) return;
    for (int i = 0; i < cat->ntables; i++)
        cat_table_free(cat->tables[i]);
    free(cat->tables);
    free(cat);
}

/* Table named `name` (case-insensitive), owned by cat; NULL if absent. */
CatTable *cat_find_table(const Catalog *cat, const char *name) {
    if (!cat || !name) return NULL;
    for (int i = 0; i < cat->ntables; i++)
        if (strcasecmp(cat->tables[i]->name, name) == 0) return cat->tables[i];
    return NULL;
}

/* Index of column `name` in t (case-insensitive), or -1 if absent. */
int cat_find_column(const CatTable *t, const char *name) {
    if (!t || !name) return -1;
    for (int i = 0; i < t->ncols; i++)
        if (strcasecmp(t->cols[i].name, name) == 0) return i;
    return -1;
}

/* malloc'ed copy of s; NULL when out of memory (or s is NULL). */
static char *dup_str(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* See cat_internal.h. */
void cat_table_set_decimal(CatTable *t, const int *prec, const int *scale) {
    for (int i = 0; i < t->ncols; i++) {
        if (t->cols[i].type != CAT_DECIMAL) continue;
        t->cols[i].prec = prec ? prec[i] : CAT_DEC_DEFAULT_PREC;
        t->cols[i].scale = scale ? scale[i] : CAT_DEC_DEFAULT_SCALE;
    }
}

/* See cat_internal.h: an empty table with copied names; NULL when out of
 * memory. */
CatTable *cat_table_new(const char *name, int ncols, const char *const *col_names,
                        const CatType *col_types) {
    CatTable *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->name = dup_str(name);
    t->cols = calloc((size_t)(ncols > 0 ? ncols : 1), sizeof *t->cols);
    if (!t->name || !t->cols) {
        cat_table_free(t);
        return NULL;
    }
    t->ncols = ncols;
    for (int i = 0; i < ncols; i++) {
        CatColumn *c = &t->cols[i];
        c->name = dup_str(col_names[i]);
        c->type = col_types[i];
        c->data = cat_host_alloc(0);
        if (!c->name || !c->data) {
            cat_table_free(t);
            return NULL;
        }
        if (c->type == CAT_STRING) {
            c->dict = cat_dict_empty();
            if (!c->dict) {
                cat_table_free(t);
                return NULL;
            }
        }
    }
    return t;
}

/* Free t, its columns and their arrays, dictionaries and histograms; NULL
 * is a no-op. */
void cat_table_free(CatTable *t) {
    if (!t) return;
    if (t->cols) {
        for (int i = 0; i < t->ncols; i++) {
            CatColumn *c = &t->cols[i];
            free(c->name);
            free(c->lazy);
            cat_column_free_data(c);
            cat_host_free(c->valid);
            cat_dict_free(c->dict);
            free(c->stats.hist);
        }
    }
    free(t->cols);
    cat_indexes_free(t);
    free(t->name);
    free(t->source);
    free(t);
}

/* Append t to cat, which then owns it. Returns 0, or -1 with err set when
 * the name is taken or memory runs out (t stays the caller's). */
int cat_catalog_add(Catalog *cat, CatTable *t, CatError *err) {
    if (cat_find_table(cat, t->name)) return cat_err(err, "table '%s' already exists", t->name);
    if (cat->ntables == cat->cap) {
        int cap = cat->cap ? cat->cap * 2 : 8;
        CatTable **p = realloc(cat->tables, (size_t)cap * sizeof *p);
        if (!p) return cat_err(err, "out of memory adding table '%s'", t->name);
        cat->tables = p;
        cat->cap = cap;
    }
    cat->tables[cat->ntables++] = t;
    return 0;
}

/* CREATE TABLE: validate names and types, then add an empty table. Returns
 * 0, or -1 with err set (name exists, no columns, empty or duplicate column
 * name, invalid type, out of memory); nothing is added on error. */
int cat_create_table(Catalog *cat, const char *name, int ncols, const char *const *col_names,
                     const CatType *col_types, CatError *err) {
    if (!cat || !name || !*name) return cat_err(err, "table name is empty");
    if (cat_find_table(cat, name)) return cat_err(err, "table '%s' already exists", name);
    if (ncols < 1) return cat_err(err, "table '%s' must have at least one column", name);
    for (int i = 0; i < ncols; i++) {
        if (!col_names[i] || !*col_names[i])
            return cat_err(err, "table '%s': column %d has an empty name", name, i + 1);
        if (cat_type_width(col_types[i]) == 0)
            return cat_err(err, "table '%s': column '%s' has invalid type %d", name, col_names[i],
                           (int)col_types[i]);
        for (int j = 0; j < i; j++)
            if (strcasecmp(col_names[i], col_names[j]) == 0)
                return cat_err(err, "table '%s': duplicate column name '%s'", name, col_names[i]);
    }
    CatTable *t = cat_table_new(name, ncols, col_names, col_types);
    if (!t) return cat_err(err, "out of memory creating table '%s'", name);
    cat_table_stats(t);
    if (cat_catalog_add(cat, t, err) != 0) {
        cat_table_free(t);
        return -1;
    }
    return 0;
}

/* Load one table described by def and add it to cat. Returns 0, or -1 with
 * err set (bad definition, name taken, unreadable file, bad row); on error
 * nothing is added and nothing stays allocated. */
int cat_load_table(Catalog *cat, const CatTableDef *def, CatError *err) {
    if (!cat || !def || !def->name || !*def->name) return cat_err(err, "table name is empty");
    if (!def->source || !*def->source) return cat_err(err, "table '%s': no source file", def->name);
    if (cat_find_table(cat, def->name)) return cat_err(err, "table '%s' already exists", def->name);
    if (def->ncols < 1) return cat_err(err, "table '%s' must have at least one column", def->name);
    if (def->delimiter == '"' || def->delimiter == '\n' || def->delimiter == '\r')
        return cat_err(err, "table '%s': invalid delimiter", def->name);
    for (int i = 0; i < def->ncols; i++) {
        const char *n = def->col_names[i];
        if (!n || !*n)
            return cat_err(err, "table '%s': column %d has an empty name", def->name, i + 1);
        if (cat_type_width(def->col_types[i]) == 0)
            return cat_err(err, "table '%s': column '%s' has invalid type %d", def->name, n,
                           (int)def->col_types[i]);
        for (int j = 0; j < i; j++)
            if (strcasecmp(n, def->col_names[j]) == 0)
                return cat_err(err, "table '%s': duplicate column name '%s'", def->name, n);
    }
    CatTable *t;
    switch (def->format) {
    case CAT_FMT_CSV:
    case CAT_FMT_TBL:
        t = cat_read_text(def, err);
        break;
    case CAT_FMT_BINARY:
        t = cat_read_binary(def, err);
        break;
    default:
        return cat_err(err, "table '%s': unknown format %d", def->name, (int)def->format);
    }
    if (!t) return -1;
    cat_table_stats(t);
    if (cat_catalog_add(cat, t, err) != 0) {
        cat_table_free(t);
        return -1;
    }
    return 0;
}
