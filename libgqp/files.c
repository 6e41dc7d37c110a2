/*
 * files.c -- files named in FROM: read_csv('f.csv', opt = value, ...),
 * read_csv_auto(...) and a string literal 'f.csv' / 'f.tbl'. Each becomes
 * a temporary catalog table of the statement (as a materialized view
 * does, subquery.c): the sniffer picks the dialect, header and types and
 * the text loader reads the file with them (catalog/sniff.c), so that the
 * planner and both devices see an ordinary table.
 *
 * Cache: per statement. The statement being prepared (its root, when the
 * file is named inside a subquery or a view run while planning it) keeps
 * (key, table) pairs, the key being the path, the file's device, inode,
 * size and modification time, and the options; the same file named twice
 * in one statement is read once. The tables are dropped with the
 * statement's other temporaries (when it is planned again, which reads the
 * file again, or finalized).
 *
 * Options (DuckDB's names): header = true|false, delim / sep = ',' (one
 * character; '\t' is a tab), nullstr = '\N' or ['\N', 'NA'], columns =
 * {'a': 'INTEGER', ...}, types / dtypes = {'a': 'TEXT'} or ['INTEGER',
 * ...], auto_detect = true (false needs columns).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "libgqp/internal.h"

typedef struct GqpFile {
    char *key;
    char *table; /* one of the root's temps */
} GqpFile;

void gqp_files_forget(gqp_stmt *st) {
    for (int i = 0; i < st->nfiles; i++)
        free(st->files[i].key);
    free(st->files);
    st->files = NULL;
    st->nfiles = 0;
}

/* An error about option o of r's call. */
static int opt_error(gqp *db, gqp_stmt *st, const AstFileRef *f, const AstOpt *o,
                     const char *what) {
    char msg[400];
    snprintf(msg, sizeof msg, "%s: option '%s' %s", f->func ? f->func : "read_csv", o->name, what);
    return gqp_set_error_at(db, st->sql, st->sql_len, o->pos, "Binder", msg);
}

/* Fill *co from f's options. GQP_OK or a Binder Error at the option. */
static int read_opts(gqp *db, gqp_stmt *st, const AstFileRef *f, CatCsvOpts *co) {
    for (int i = 0; i < f->nopts; i++) {
        const AstOpt *o = &f->opts[i];
        const char *n = o->name;
        if (strcasecmp(n, "header") == 0) {
            if (o->kind != AST_OPT_BOOL && !(o->kind == AST_OPT_INT && (o->ival | 1) == 1))
                return opt_error(db, st, f, o, "takes true or false");
            co->header = (int)o->ival;
        } else if (strcasecmp(n, "delim") == 0 || strcasecmp(n, "sep") == 0 ||
                   strcasecmp(n, "delimiter") == 0) {
            const char *d = o->kind == AST_OPT_STRING ? o->str : NULL;
            char c = d && strcmp(d, "\\t") == 0 ? '\t' : d && strlen(d) == 1 ? d[0] : 0;
            if (!c || c == '"' || c == '\n' || c == '\r')
                return opt_error(db, st, f, o,
                                 "takes one character other than a quote or a line end");
            co->delim = c;
        } else if (strcasecmp(n, "nullstr") == 0 || strcasecmp(n, "null") == 0) {
            if (o->kind == AST_OPT_STRING) {
                co->nulls = (const char *const *)&o->str;
                co->nnulls = 1;
            } else if (o->kind == AST_OPT_LIST && o->n > 0) {
                co->nulls = (const char *const *)o->vals;
                co->nnulls = o->n;
            } else {
                return opt_error(db, st, f, o, "takes a string or a list of strings");
            }
        } else if (strcasecmp(n, "columns") == 0) {
            if (o->kind != AST_OPT_STRUCT || o->n == 0)
                return opt_error(db, st, f, o, "takes a struct {'name': 'TYPE', ...}");
            co->ncols = o->n;
            co->col_names = (const char *const *)o->keys;
            co->col_types = (const char *const *)o->vals;
        } else if (strcasecmp(n, "types") == 0 || strcasecmp(n, "dtypes") == 0 ||
                   strcasecmp(n, "column_types") == 0) {
            if ((o->kind != AST_OPT_STRUCT && o->kind != AST_OPT_LIST) || o->n == 0)
                return opt_error(db, st, f, o,
                                 "takes a struct {'name': 'TYPE', ...} or a list ['TYPE', ...]");
            co->ntypes = o->n;
            co->type_names = o->kind == AST_OPT_STRUCT ? (const char *const *)o->keys : NULL;
            co->type_types = (const char *const *)o->vals;
        } else if (strcasecmp(n, "auto_detect") == 0) {
            if (o->kind != AST_OPT_BOOL) return opt_error(db, st, f, o, "takes true or false");
        } else {
            return opt_error(db, st, f, o,
                             "is not supported (header, delim, sep, nullstr, columns, types, "
                             "auto_detect are)");
        }
    }
    for (int i = 0; i < f->nopts; i++) {
        const AstOpt *o = &f->opts[i];
        if (strcasecmp(o->name, "auto_detect") == 0 && !o->ival && co->ncols == 0)
            return opt_error(db, st, f, o, "false needs columns = {...}");
    }
    return GQP_OK;
}

/* Append text s to a growing key buffer (NULL-safe; the buffer stays NULL
 * after an allocation failure). */
static void key_add(char **k, size_t *len, const char *s) {
    if (!*k) return;
    size_t n = strlen(s);
    char *g = realloc(*k, *len + n + 2);
    if (!g) {
        free(*k);
        *k = NULL;
        return;
    }
    memcpy(g + *len, s, n);
    g[*len + n] = '\x1f';
    g[*len + n + 1] = '\0';
    *len += n + 1;
    *k = g;
}

/* The cache key of f (see the header comment), malloc'ed; NULL when the
 * file cannot be examined (the load then reports why) or out of memory. */
static char *file_key(const AstFileRef *f, CatFormat fmt) {
    struct stat sb;
    if (stat(f->path, &sb) != 0 || !S_ISREG(sb.st_mode)) return NULL;
    char id[160];
    snprintf(id, sizeof id, "%d %llu %llu %lld %lld.%09ld", (int)fmt, (unsigned long long)sb.st_dev,
             (unsigned long long)sb.st_ino, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
             (long)sb.st_mtim.tv_nsec);
    size_t len = 0;
    char *k = calloc(1, 1);
    key_add(&k, &len, f->path);
    key_add(&k, &len, id);
    for (int i = 0; i < f->nopts; i++) {
        const AstOpt *o = &f->opts[i];
        char num[32];
        snprintf(num, sizeof num, "%d %lld %d", (int)o->kind, (long long)o->ival, o->n);
        key_add(&k, &len, o->name);
        key_add(&k, &len, num);
        if (o->str) key_add(&k, &len, o->str);
        for (int j = 0; j < o->n; j++) {
            if (o->keys) key_add(&k, &len, o->keys[j]);
            key_add(&k, &len, o->vals[j]);
        }
    }
    return k;
}

/* 1 when path ends in ".tbl" (any case): dbgen's format. */
static int is_tbl(const char *path) {
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".tbl") == 0;
}

/* The EXPLAIN note of a file loaded into table t. */
static void explain_file(gqp_stmt *st, const AstFileRef *f, const CatTable *t,
                         const CatCsvInfo *info, int again) {
    char buf[1024];
    int n =
        snprintf(buf, sizeof buf, "-- %s '%s' as %s", f->func ? f->func : "file", f->path, t->name);
    if (again) {
        snprintf(buf + n, sizeof buf - (size_t)n, " (read once for this statement)\n");
        gqp_explain_note(st, buf);
        return;
    }
    char d[4] = {info->delim, 0};
    if (info->delim == '\t') strcpy(d, "\\t");
    n += snprintf(buf + n, sizeof buf - (size_t)n, " (%lld rows; delimiter '%s', %s",
                  (long long)t->nrows, d, info->header ? "header" : "no header");
    if (info->retries && n < (int)sizeof buf)
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      ", read %d more times after a value "
                      "did not fit a sniffed type",
                      info->retries);
    if (n < (int)sizeof buf) n += snprintf(buf + n, sizeof buf - (size_t)n, "):");
    for (int c = 0; c < t->ncols && n < (int)sizeof buf - 40; c++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %s %s%s", t->cols[c].name,
                      cat_type_name(t->cols[c].type), c + 1 < t->ncols ? "," : "");
    if (n >= (int)sizeof buf - 40) strcpy(buf + sizeof buf - 6, " ...");
    gqp_explain_note(st, buf);
    gqp_explain_note(st, "\n");
}

/* 1 when a FROM item of sel other than item i is known by name (a later
 * file without an alias does not count: it is named after this one). */
static int alias_taken(const AstSelect *sel, int i, const char *name) {
    for (int k = 0; k < sel->nfrom; k++) {
        const AstTableRef *o = &sel->from[k];
        const char *a = o->alias ? o->alias : o->name;
        if (k > i && o->file && !o->alias) continue;
        if (k != i && a && strcasecmp(a, name) == 0) return 1;
    }
    return 0;
}

/* Give sel->from[i] (a file without an alias) its name as alias, made
 * unique in sel's FROM list as DuckDB does (read_csv, read_csv_1, ...).
 * GQP_OK or GQP_NOMEM. */
static int implicit_alias(gqp *db, gqp_stmt *st, AstSelect *sel, int i) {
    AstTableRef *r = &sel->from[i];
    if (!alias_taken(sel, i, r->name)) {
        r->alias = r->name;
        return GQP_OK;
    }
    size_t len = strlen(r->name) + 24;
    char *a = sql_arena_alloc(st->parse_arena, len);
    if (!a) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    for (int k = 1;; k++) {
        snprintf(a, len, "%s_%d", r->name, k);
        if (!alias_taken(sel, i, a)) break;
    }
    r->alias = a;
    return GQP_OK;
}

int gqp_load_file(gqp *db, gqp_stmt *st, AstSelect *sel, int i) {
    AstTableRef *r = &sel->from[i];
    const AstFileRef *f = r->file;
    if (!r->alias && implicit_alias(db, st, sel, i) != GQP_OK) return GQP_NOMEM;
    gqp_stmt *root = st;
    while (root->parent)
        root = root->parent;
    if (!*f->path)
        return gqp_set_error_at(db, st->sql, st->sql_len, f->path_pos, "Binder",
                                "read_csv: the file name is empty");
    CatCsvOpts co;
    memset(&co, 0, sizeof co);
    co.header = -1;
    co.format = is_tbl(f->path) ? CAT_FMT_TBL : CAT_FMT_CSV;
    int rc = read_opts(db, st, f, &co);
    if (rc != GQP_OK) return rc;
    char *key = file_key(f, co.format);
    for (int i = 0; key && i < root->nfiles; i++)
        if (strcmp(root->files[i].key, key) == 0) {
            free(key);
            r->bound_name = root->files[i].table;
            CatTable *t = cat_find_table(db->cat, r->bound_name);
            if (t) explain_file(st, f, t, NULL, 1);
            return GQP_OK;
        }
    char name[64];
    snprintf(name, sizeof name, "__gqp_temp_%llu", (unsigned long long)++db->ntemps);
    char **g = realloc(root->temps, sizeof *g * (size_t)(root->ntemps + 1));
    GqpFile *gf = realloc(root->files, sizeof *gf * (size_t)(root->nfiles + 1));
    if (g) root->temps = g;
    if (gf) root->files = gf;
    char *tname = g && gf ? strdup(name) : NULL;
    if (!tname) {
        free(key);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    CatError err;
    CatCsvInfo info;
    if (cat_load_csv_auto(db->cat, name, f->path, &co, &info, &err) != 0) {
        free(key);
        free(tname);
        const char *m = err.msg;
        if (strncmp(m, "Catalog Error: ", 15) == 0) m += 15;
        return gqp_set_error_at(db, st->sql, st->sql_len, f->path_pos, "Catalog", m);
    }
    root->temps[root->ntemps++] = tname;
    if (key) root->files[root->nfiles++] = (GqpFile){key, tname};
    r->bound_name = tname;
    explain_file(st, f, cat_find_table(db->cat, name), &info, 0);
    return GQP_OK;
}
