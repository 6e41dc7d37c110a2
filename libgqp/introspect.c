/*
 * introspect.c -- the statements that read the catalog or a plan rather
 * than table data: EXPLAIN [ANALYZE] <statement>, SHOW TABLES, DESCRIBE
 * <table | view | SELECT>, PRAGMA table_info(<table>). Their results are
 * built on the host (no plan, no executor): at prepare a Dag without nodes
 * names and types the result columns (so gqp_column_* answer as for a
 * query), and the first step fills st->res with the rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog/cat_internal.h"
#include "libgqp/internal.h"

/* Most columns an introspection result has (DESCRIBE: 6). */
#define INTRO_MAX_COLS 6

/* A result under construction: TEXT or INT64 columns, rows appended. */
typedef struct HostRes {
    int ncols;
    CatType types[INTRO_MAX_COLS];
    char **text[INTRO_MAX_COLS]; /* TEXT: malloc'ed strings, NULL = SQL NULL */
    int64_t *ints[INTRO_MAX_COLS];
    int64_t nrows, cap;
    int oom;
} HostRes;

int gqp_is_introspect(int kind) {
    return kind == STMT_EXPLAIN || kind == STMT_SHOW_TABLES || kind == STMT_DESCRIBE ||
           kind == STMT_PRAGMA;
}

/* The result columns of each statement. */
static const char *const explain_names[] = {"explain"};
static const CatType explain_types[] = {CAT_STRING};
static const char *const show_names[] = {"name"};
static const CatType show_types[] = {CAT_STRING};
static const char *const describe_names[] = {"column_name", "column_type", "null",
                                             "key",         "default",     "extra"};
static const CatType describe_types[] = {CAT_STRING, CAT_STRING, CAT_STRING,
                                         CAT_STRING, CAT_STRING, CAT_STRING};
static const char *const pragma_names[] = {"cid", "name", "type", "notnull", "dflt_value", "pk"};
static const CatType pragma_types[] = {CAT_INT64, CAT_STRING, CAT_STRING,
                                       CAT_INT64, CAT_STRING, CAT_INT64};

/* The columns (names, types, count) of st's statement kind. */
static int result_shape(int kind, const char *const **names, const CatType **types) {
    switch (kind) {
    case STMT_EXPLAIN:
        *names = explain_names, *types = explain_types;
        return 1;
    case STMT_SHOW_TABLES:
        *names = show_names, *types = show_types;
        return 1;
    case STMT_DESCRIBE:
        *names = describe_names, *types = describe_types;
        return 6;
    default:
        *names = pragma_names, *types = pragma_types;
        return 6;
    }
}

int gqp_introspect_prepare(gqp *db, gqp_stmt *st) {
    const char *const *names;
    const CatType *types;
    int n = result_shape(st->ast->kind, &names, &types);
    Dag *d = plan_dag_new(st->plan_arena);
    if (!d) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    st->dag = d;
    d->values = calloc((size_t)n, sizeof *d->values); /* freed by plan_dag_free */
    d->results = plan_alloc(st->plan_arena, sizeof(int) * (size_t)n);
    d->result_names = plan_alloc(st->plan_arena, sizeof(char *) * (size_t)n);
    if (!d->values || !d->results || !d->result_names)
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    d->nvalues = d->capvalues = n;
    for (int c = 0; c < n; c++) {
        d->values[c].producer = -1;
        d->values[c].ltype = types[c];
        d->values[c].type = types[c] == CAT_STRING ? PRIM_I32 : PRIM_I64;
        d->results[c] = c;
        if (!(d->result_names[c] = plan_strdup(st->plan_arena, names[c])))
            return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    d->nresults = n;
    return GQP_OK;
}

/* ------------------------------------------------------- host results -- */

/* Start an empty result of st's shape. */
static void hr_init(HostRes *r, int kind) {
    const char *const *names;
    const CatType *types;
    memset(r, 0, sizeof *r);
    r->ncols = result_shape(kind, &names, &types);
    memcpy(r->types, types, sizeof(CatType) * (size_t)r->ncols);
}

/* Free everything r holds. */
static void hr_free(HostRes *r) {
    for (int c = 0; c < r->ncols; c++) {
        if (r->text[c])
            for (int64_t i = 0; i < r->nrows; i++)
                free(r->text[c][i]);
        free(r->text[c]);
        free(r->ints[c]);
    }
    memset(r, 0, sizeof *r);
}

/* Append a row of NULL / 0 values; returns its index, or -1 (r->oom). */
static int64_t hr_row(HostRes *r) {
    if (r->oom) return -1;
    if (r->nrows == r->cap) {
        int64_t nc = r->cap ? 2 * r->cap : 16;
        for (int c = 0; c < r->ncols; c++) {
            if (r->types[c] == CAT_STRING) {
                char **g = realloc(r->text[c], sizeof *g * (size_t)nc);
                if (!g) return r->oom = 1, -1;
                r->text[c] = g;
            } else {
                int64_t *g = realloc(r->ints[c], sizeof *g * (size_t)nc);
                if (!g) return r->oom = 1, -1;
                r->ints[c] = g;
            }
        }
        r->cap = nc;
    }
    for (int c = 0; c < r->ncols; c++) {
        if (r->types[c] == CAT_STRING)
            r->text[c][r->nrows] = NULL;
        else
            r->ints[c][r->nrows] = 0;
    }
    return r->nrows++;
}

/* Set TEXT column c of row i to a copy of the n bytes at s (s NULL: SQL
 * NULL). */
static void hr_textn(HostRes *r, int64_t i, int c, const char *s, size_t n) {
    if (i < 0 || !s) return;
    char *t = malloc(n + 1);
    if (!t) {
        r->oom = 1;
        return;
    }
    memcpy(t, s, n);
    t[n] = 0;
    r->text[c][i] = t;
}

/* Set TEXT column c of row i to a copy of s (NULL: SQL NULL). */
static void hr_text(HostRes *r, int64_t i, int c, const char *s) {
    if (s) hr_textn(r, i, c, s, strlen(s));
}

/* Set INT64 column c of row i. */
static void hr_int(HostRes *r, int64_t i, int c, int64_t v) {
    if (i >= 0) r->ints[c][i] = v;
}

/* Move r's rows into res (a host ExecResult: malloc'ed vectors, string
 * columns as codes into dictionaries res owns). GQP_OK or GQP_NOMEM. */
static int hr_to_result(HostRes *r, ExecResult *res) {
    memset(res, 0, sizeof *res);
    if (r->oom) return GQP_NOMEM;
    int64_t n = r->nrows;
    size_t cells = (size_t)(n ? n : 1);
    res->cols = calloc((size_t)r->ncols, sizeof *res->cols);
    res->dicts = calloc((size_t)r->ncols, sizeof *res->dicts);
    if (!res->cols || !res->dicts) goto oom;
    res->ncols = r->ncols;
    res->nrows = n;
    for (int c = 0; c < r->ncols; c++) {
        ExecColumn *col = &res->cols[c];
        col->ltype = r->types[c];
        col->vec.n = n;
        if (r->types[c] != CAT_STRING) {
            col->vec.type = PRIM_I64;
            if (!(col->vec.data = malloc(sizeof(int64_t) * cells))) goto oom;
            if (n) memcpy(col->vec.data, r->ints[c], sizeof(int64_t) * (size_t)n);
            continue;
        }
        col->vec.type = PRIM_I32;
        const char **strs = malloc(sizeof *strs * cells);
        size_t *lens = malloc(sizeof *lens * cells);
        int32_t *codes = malloc(sizeof *codes * cells);
        uint8_t *valid = malloc(cells);
        int nulls = 0;
        if (strs && lens && valid)
            for (int64_t i = 0; i < n; i++) {
                const char *s = r->text[c][i];
                valid[i] = s != NULL;
                nulls |= s == NULL;
                strs[i] = s ? s : "";
                lens[i] = s ? strlen(s) : 0;
            }
        CatDict *d = strs && lens && codes && valid
                         ? cat_dict_build_masked(strs, lens, n, valid, codes)
                         : NULL;
        free(strs);
        free(lens);
        col->vec.data = codes;
        if (!d) {
            free(valid);
            goto oom;
        }
        res->dicts[res->ndicts++] = d;
        col->dict = d;
        for (int64_t i = 0; i < n; i++)
            if (!valid[i]) codes[i] = 0;
        if (nulls)
            col->vec.valid = valid;
        else
            free(valid);
    }
    hr_free(r);
    return GQP_OK;
oom:
    hr_free(r);
    exec_result_free(res);
    return GQP_NOMEM;
}

/* ---------------------------------------------------------- statements -- */

int gqp_copy_bindings(gqp_stmt *from, gqp_stmt *to) {
    int n = to->ast ? to->ast->nparams : 0, rc = GQP_OK;
    if (from->ast && from->ast->nparams < n) n = from->ast->nparams;
    for (int i = 0; i < n && rc == GQP_OK; i++) {
        const GqpParam *v = &from->params[i];
        rc = v->kind == 1   ? gqp_bind_int64(to, i + 1, v->i)
             : v->kind == 2 ? gqp_bind_double(to, i + 1, v->f)
             : v->kind == 3 ? gqp_bind_text(to, i + 1, v->s, -1)
                            : gqp_bind_null(to, i + 1);
    }
    return rc;
}

/* qsort comparator of C strings (byte order, as SQLite's BINARY). */
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 for the catalog tables a statement made for itself (materialized
 * derived tables, CTEs and views: subquery.c's "__gqp_temp_<n>"). */
static int is_temp_table(const char *name) {
    return strncmp(name, "__gqp_temp_", 11) == 0;
}

/* SHOW TABLES: every table and view, sorted by name. */
static int show_tables(gqp *db, HostRes *r) {
    int n = 0;
    const char **names = malloc(sizeof *names * (size_t)(db->cat->ntables + db->nviews + 1));
    if (!names) return GQP_NOMEM;
    for (int i = 0; i < db->cat->ntables; i++)
        if (!is_temp_table(db->cat->tables[i]->name)) names[n++] = db->cat->tables[i]->name;
    for (int i = 0; i < db->nviews; i++)
        names[n++] = db->views[i].name;
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++)
        hr_text(r, hr_row(r), 0, names[i]);
    free(names);
    return GQP_OK;
}

/* The SQL spelling of a column type that gqp's CREATE TABLE reads back as
 * the same type (INT32 and FLOAT32 keep gqp's names: INTEGER and REAL mean
 * 64 bits in gqp's SQL, as in SQLite). prec <= 0: DECIMAL's precision
 * unknown (a query's result), taken as the largest. */
static const char *type_sql(CatType t, int prec, int scale, char *buf, size_t cap) {
    switch (t) {
    case CAT_INT32:
        return "INT32";
    case CAT_INT64:
        return "BIGINT";
    case CAT_FLOAT32:
        return "FLOAT32";
    case CAT_FLOAT64:
        return "DOUBLE";
    case CAT_DATE:
        return "DATE";
    case CAT_BOOL:
        return "BOOLEAN";
    case CAT_STRING:
        return "VARCHAR";
    case CAT_DECIMAL:
        snprintf(buf, cap, "DECIMAL(%d,%d)", prec > 0 ? prec : CAT_DEC_MAX_PREC, scale);
        return buf;
    case CAT_NULL:
        return "NULL";
    }
    return "NULL";
}

/* One column's row of DESCRIBE (kind STMT_DESCRIBE) or PRAGMA table_info. */
static void column_row(HostRes *r, int kind, int cid, const char *name, const char *type) {
    int64_t i = hr_row(r);
    if (kind == STMT_DESCRIBE) {
        hr_text(r, i, 0, name);
        hr_text(r, i, 1, type);
        hr_text(r, i, 2, "YES"); /* NOT NULL is parsed but not kept */
        return;
    }
    hr_int(r, i, 0, cid);
    hr_text(r, i, 1, name);
    hr_text(r, i, 2, type);
}

/* The result columns of the SELECT in sql[0..len) (prepared, so planned,
 * then finalized) as rows of DESCRIBE / PRAGMA table_info. */
static int describe_query(gqp *db, gqp_stmt *st, const char *sql, int64_t len, HostRes *r) {
    int kind = st->ast->kind;
    gqp_stmt *q = NULL;
    int rc = gqp_prepare(db, sql, len, &q, NULL);
    if (rc != GQP_OK) return rc;
    if (!q) return gqp_set_error(db, GQP_ERROR, "Parser Error: nothing to describe");
    if (st->ast->nparams > 0) {
        /* DESCRIBE SELECT ... ?: typed with the values bound to st */
        if ((rc = gqp_copy_bindings(st, q)) == GQP_OK) rc = gqp_replan(db, q);
        if (rc != GQP_OK) {
            gqp_finalize(q);
            return rc;
        }
    }
    char buf[32];
    for (int c = 0; c < q->dag->nresults; c++) {
        const DagValue *v = &q->dag->values[q->dag->results[c]];
        column_row(r, kind, c, q->dag->result_names[c],
                   type_sql(v->ltype, 0, v->scale, buf, sizeof buf));
    }
    gqp_finalize(q);
    return GQP_OK;
}

/* DESCRIBE t / PRAGMA table_info(t) of a table or view named name (pos: its
 * offset in st's text); missing is an error for DESCRIBE and no rows for
 * the PRAGMA (as SQLite). */
static int describe_table(gqp *db, gqp_stmt *st, const char *name, HostRes *r) {
    int kind = st->ast->kind;
    const CatTable *t = cat_find_table(db->cat, name);
    if (t && !is_temp_table(t->name)) {
        char buf[32];
        for (int c = 0; c < t->ncols; c++) {
            const CatColumn *col = &t->cols[c];
            column_row(r, kind, c, col->name,
                       type_sql(col->type, col->prec, col->scale, buf, sizeof buf));
        }
        return GQP_OK;
    }
    if (gqp_is_view(db, name)) {
        /* its columns are those of SELECT * FROM "name" */
        size_t n = strlen(name);
        char *sql = malloc(2 * n + 32);
        if (!sql) return gqp_set_error(db, GQP_NOMEM, "out of memory");
        char *o = sql + sprintf(sql, "SELECT * FROM \"");
        for (size_t k = 0; k < n; k++) {
            if (name[k] == '"') *o++ = '"';
            *o++ = name[k];
        }
        strcpy(o, "\"");
        int rc = describe_query(db, st, sql, -1, r);
        free(sql);
        return rc;
    }
    if (kind == STMT_PRAGMA) return GQP_OK;
    char msg[512];
    snprintf(msg, sizeof msg, "Table with name %s does not exist!", name);
    return gqp_set_error_at(db, st->sql, st->sql_len, st->ast->table_pos, "Catalog", msg);
}

/* EXPLAIN [ANALYZE] of st's inner statement: its plan's text, a row per
 * line. */
static int explain_rows(gqp *db, gqp_stmt *st, HostRes *r) {
    const AstStmt *in = st->ast->inner;
    if (in->kind != STMT_SELECT)
        return gqp_set_error_at(db, st->sql, st->sql_len, in->pos, "Not implemented",
                                "EXPLAIN of a statement other than a SELECT");
    gqp_stmt *q = NULL;
    int rc = gqp_prepare(db, st->sql + in->pos, in->end - in->pos, &q, NULL);
    if (rc != GQP_OK) return rc;
    if (!q) return gqp_set_error(db, GQP_ERROR, "Parser Error: nothing to explain");
    char *text = NULL;
    rc = gqp_copy_bindings(st, q); /* the same parameters, numbered alike */
    if (rc == GQP_OK)
        rc = gqp_explain_stmt_locked(db, q, st->ast->analyze ? GQP_EXPLAIN_ANALYZE : 0, &text);
    gqp_finalize(q);
    if (rc != GQP_OK) return rc;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        hr_textn(r, hr_row(r), 0, p, n);
        p += n + (e != NULL);
    }
    free(text);
    return GQP_OK;
}

int gqp_introspect_run(gqp *db, gqp_stmt *st) {
    const AstStmt *a = st->ast;
    HostRes r;
    hr_init(&r, a->kind);
    int rc = GQP_OK;
    switch (a->kind) {
    case STMT_EXPLAIN:
        rc = explain_rows(db, st, &r);
        break;
    case STMT_SHOW_TABLES:
        rc = show_tables(db, &r);
        break;
    case STMT_DESCRIBE:
        rc = a->select ? describe_query(db, st, st->sql + a->view_pos, a->end - a->view_pos, &r)
                       : describe_table(db, st, a->table, &r);
        break;
    default:
        if (strcasecmp(a->set_name, "table_info") != 0) {
            char msg[300];
            snprintf(msg, sizeof msg, "PRAGMA %.200s (gqp knows PRAGMA table_info(table))",
                     a->set_name);
            rc = gqp_set_error_at(db, st->sql, st->sql_len, a->pos, "Not implemented", msg);
        } else if (!a->table) {
            rc = gqp_set_error_at(db, st->sql, st->sql_len, a->pos, "Binder",
                                  "PRAGMA table_info needs a table: PRAGMA table_info(t)");
        } else {
            rc = describe_table(db, st, a->table, &r);
        }
        break;
    }
    if (rc == GQP_NOMEM || (rc == GQP_OK && r.oom)) {
        hr_free(&r);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    if (rc != GQP_OK) {
        hr_free(&r);
        return rc;
    }
    exec_result_free(&st->res);
    if (hr_to_result(&r, &st->res) != GQP_OK) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    st->exec_ms = 0;
    return GQP_OK;
}
