/*
 * config.c -- the YAML config (libyaml document API): validate the whole
 * file first, so a malformed file loads nothing, then load each table; a
 * table with bad data is skipped while the others load.
 */
#include "catalog/cat_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* One table declaration gathered from the config, before loading. */
typedef struct TDecl {
    char *name;
    char *source; /* resolved against the config's folder */
    char **parts; /* source given as a list: every file, resolved (parts[0] == source) */
    int nparts;
    CatFormat format;
    int has_format;
    int header;
    char delimiter;
    int ncols;
    char **col_names;
    CatType *col_types;
    int *col_prec, *col_scale; /* DECIMAL(p,s) columns */
} TDecl;

/* Parse state for one config file. */
typedef struct Cfg {
    const char *path;
    yaml_document_t *doc;
    CatError *err;
    char *dir; /* config's folder with trailing '/', or "" */
    TDecl *decls;
    int ndecls;
} Cfg;

/* Set "file:line:col: <fmt...>" for node n. Returns -1. */
static int cfg_err(Cfg *g, const yaml_node_t *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int cfg_err(Cfg *g, const yaml_node_t *n, const char *fmt, ...) {
    char what[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cat_err(g->err, "%s:%lu:%lu: %s", g->path, (unsigned long)n->start_mark.line + 1,
                   (unsigned long)n->start_mark.column + 1, what);
}

/* The scalar text of n (NUL-terminated, owned by the document), or NULL
 * with an error naming `key` when n is not a scalar. */
static const char *scalar(Cfg *g, const yaml_node_t *n, const char *key) {
    if (n->type != YAML_SCALAR_NODE) {
        cfg_err(g, n, "'%s' must be a single value", key);
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

/* The key of pair p of mapping m when it is a scalar that no earlier pair
 * of m has; NULL with the error set otherwise (a duplicate key would
 * silently override, and leak, the first value). */
static const char *unique_key(Cfg *g, const yaml_node_t *m, const yaml_node_pair_t *p) {
    yaml_node_t *k = yaml_document_get_node(g->doc, p->key);
    const char *key = scalar(g, k, "key");
    if (!key) return NULL;
    for (const yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++) {
        yaml_node_t *k2 = yaml_document_get_node(g->doc, q->key);
        if (k2->type == YAML_SCALAR_NODE && strcmp((const char *)k2->data.scalar.value, key) == 0) {
            cfg_err(g, k, "duplicate key '%s'", key);
            return NULL;
        }
    }
    return key;
}

/* Parse a YAML boolean value for `key` into *out. Returns 0 or -1. */
static int get_bool(Cfg *g, const yaml_node_t *n, const char *key, int *out) {
    const char *s = scalar(g, n, key);
    uint8_t b;
    if (!s) return -1;
    if (strcasecmp(s, "on") == 0 || strcasecmp(s, "off") == 0) {
        *out = strcasecmp(s, "on") == 0;
        return 0;
    }
    if (cat_parse_bool(s, strlen(s), &b) != 0)
        return cfg_err(g, n, "'%s' must be true or false, not '%s'", key, s);
    *out = b;
    return 0;
}

/* malloc'ed path of p resolved against the config's folder (absolute paths
 * are kept). NULL when out of memory. */
static char *resolve(const Cfg *g, const char *p) {
    return cat_concat3(p[0] == '/' ? "" : g->dir, p, "");
}

/* Free one declaration's strings and arrays. */
static void decl_free(TDecl *d) {
    free(d->name);
    if (!d->parts) free(d->source);
    for (int i = 0; i < d->nparts; i++)
        free(d->parts[i]);
    free(d->parts);
    for (int i = 0; i < d->ncols; i++)
        free(d->col_names[i]);
    free(d->col_names);
    free(d->col_types);
    free(d->col_prec);
    free(d->col_scale);
}

/* malloc'ed copy of s, or NULL (with an out-of-memory error on n). */
static char *dup_or_err(Cfg *g, const yaml_node_t *n, const char *s) {
    char *p = cat_concat3(s, "", "");
    if (!p) cfg_err(g, n, "out of memory");
    return p;
}

/* 1 if `type` is "...(digits" without its ')' and the next flow-mapping
 * entry is the key "digits)" with an empty value: the two halves of an
 * unquoted DECIMAL(p,s) that YAML split at its comma. */
static int split_decimal(const char *type, const char *key, const yaml_node_t *v) {
    const char *open = strrchr(type, '(');
    if (!open || strchr(open, ')') || v->type != YAML_SCALAR_NODE || v->data.scalar.length != 0)
        return 0;
    for (const char *p = open + 1; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != ' ') return 0;
    size_t n = strlen(key), i = 0;
    while (i < n && (isdigit((unsigned char)key[i]) || key[i] == ' '))
        i++;
    return i > 0 && i + 1 == n && key[i] == ')';
}

/* Parse the `columns:` sequence n into d. Returns 0 or -1 with the error
 * set. */
static int parse_columns(Cfg *g, yaml_node_t *n, TDecl *d) {
    if (n->type != YAML_SEQUENCE_NODE)
        return cfg_err(g, n, "'columns' must be a list of {name, type}");
    int cnt = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (cnt == 0) return cfg_err(g, n, "'columns' is empty");
    d->col_names = calloc((size_t)cnt, sizeof *d->col_names);
    d->col_types = calloc((size_t)cnt, sizeof *d->col_types);
    d->col_prec = calloc((size_t)cnt, sizeof *d->col_prec);
    d->col_scale = calloc((size_t)cnt, sizeof *d->col_scale);
    if (!d->col_names || !d->col_types || !d->col_prec || !d->col_scale)
        return cfg_err(g, n, "out of memory");
    for (int i = 0; i < cnt; i++) {
        yaml_node_t *c = yaml_document_get_node(g->doc, n->data.sequence.items.start[i]);
        if (c->type != YAML_MAPPING_NODE)
            return cfg_err(g, c, "a column must be a mapping {name: ..., type: ...}");
        const char *name = NULL, *type = NULL;
        yaml_node_t *type_node = NULL;
        char joined[96];
        for (yaml_node_pair_t *p = c->data.mapping.pairs.start; p < c->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(g->doc, p->key);
            yaml_node_t *v = yaml_document_get_node(g->doc, p->value);
            const char *key = unique_key(g, c, p);
            if (!key) return -1;
            if (strcmp(key, "name") == 0) {
                if (!(name = scalar(g, v, key))) return -1;
            } else if (strcmp(key, "type") == 0) {
                if (!(type = scalar(g, v, key))) return -1;
                type_node = v;
            } else if (type && split_decimal(type, key, v)) {
                /* {name: x, type: DECIMAL(15,2)} unquoted: YAML's flow
                 * mapping split it at the comma into DECIMAL(15 and a key
                 * 2) without a value; join them again */
                if (snprintf(joined, sizeof joined, "%s,%s", type, key) >= (int)sizeof joined)
                    return cfg_err(g, k, "type too long in column");
                type = joined;
            } else {
                return cfg_err(g, k, "unknown key '%s' in column", key);
            }
        }
        if (!name || !*name) return cfg_err(g, c, "column %d has no 'name'", i + 1);
        if (!type) return cfg_err(g, c, "column '%s' has no 'type'", name);
        if (cat_type_parse_dec(type, &d->col_types[i], &d->col_prec[i], &d->col_scale[i]) != 0)
            return cfg_err(g, type_node, "unknown type '%s' for column '%s'%s", type, name,
                           cat_type_hint(type));
        for (int j = 0; j < i; j++)
            if (strcasecmp(d->col_names[j], name) == 0)
                return cfg_err(g, c, "duplicate column name '%s'", name);
        if (!(d->col_names[i] = dup_or_err(g, c, name))) return -1;
        d->ncols = i + 1;
    }
    return 0;
}

/* Parse one table mapping n into d (zeroed by the caller). Returns 0 or -1
 * with the error set. */
static int parse_table(Cfg *g, yaml_node_t *n, TDecl *d) {
    if (n->type != YAML_MAPPING_NODE)
        return cfg_err(g, n, "a table must be a mapping (name, source, format, columns)");
    yaml_node_t *cols = NULL;
    const char *delim = NULL;
    yaml_node_t *delim_node = NULL;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(g->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(g->doc, p->value);
        const char *key = unique_key(g, n, p), *s;
        if (!key) return -1;
        if (strcmp(key, "name") == 0) {
            if (!(s = scalar(g, v, key)) || !(d->name = dup_or_err(g, v, s))) return -1;
        } else if (strcmp(key, "source") == 0 && v->type == YAML_SEQUENCE_NODE) {
            /* a list of text files read as one (see CatTableDef.parts) */
            int np = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
            if (np < 1) return cfg_err(g, v, "'source' is an empty list");
            if (!(d->parts = calloc((size_t)np, sizeof *d->parts)))
                return cfg_err(g, v, "out of memory");
            for (int i = 0; i < np; i++) {
                yaml_node_t *it = yaml_document_get_node(g->doc, v->data.sequence.items.start[i]);
                if (!(s = scalar(g, it, key))) return -1;
                if (!*s) return cfg_err(g, it, "'source' names an empty file name");
                if (!(d->parts[i] = resolve(g, s))) return cfg_err(g, it, "out of memory");
                d->nparts = i + 1;
            }
            d->source = d->parts[0];
        } else if (strcmp(key, "source") == 0) {
            if (!(s = scalar(g, v, key))) return -1;
            if (!*s) return cfg_err(g, v, "'source' is empty");
            if (!(d->source = resolve(g, s))) return cfg_err(g, v, "out of memory");
        } else if (strcmp(key, "format") == 0) {
            if (!(s = scalar(g, v, key))) return -1;
            if (strcasecmp(s, "csv") == 0)
                d->format = CAT_FMT_CSV;
            else if (strcasecmp(s, "tbl") == 0)
                d->format = CAT_FMT_TBL;
            else if (strcasecmp(s, "binary") == 0)
                d->format = CAT_FMT_BINARY;
            else
                return cfg_err(g, v, "unknown format '%s' (expected csv, tbl or binary)", s);
            d->has_format = 1;
        } else if (strcmp(key, "header") == 0) {
            if (get_bool(g, v, key, &d->header) != 0) return -1;
        } else if (strcmp(key, "delimiter") == 0) {
            if (!(delim = scalar(g, v, key))) return -1;
            delim_node = v;
        } else if (strcmp(key, "columns") == 0) {
            cols = v;
        } else {
            return cfg_err(g, k, "unknown key '%s' in table", key);
        }
    }
    if (!d->name || !*d->name) return cfg_err(g, n, "table has no 'name'");
    if (!d->source) return cfg_err(g, n, "table '%s' has no 'source'", d->name);
    if (!cols) return cfg_err(g, n, "table '%s' has no 'columns'", d->name);
    if (!d->has_format) {
        size_t l = strlen(d->source);
        d->format = l >= 4 && strcmp(d->source + l - 4, ".tbl") == 0 ? CAT_FMT_TBL : CAT_FMT_CSV;
    }
    if (d->nparts > 1 && d->format == CAT_FMT_BINARY)
        return cfg_err(g, n, "table '%s': a list of sources needs format csv or tbl", d->name);
    if (delim) {
        if (strcmp(delim, "\\t") == 0 || strcasecmp(delim, "tab") == 0) delim = "\t";
        if (strlen(delim) != 1 || *delim == '"' || *delim == '\n' || *delim == '\r')
            return cfg_err(g, delim_node,
                           "'delimiter' must be one character other than a quote "
                           "or newline, not '%s'",
                           delim);
        d->delimiter = *delim;
    }
    return parse_columns(g, cols, d);
}

int cat_parse_memory_limit(const char *txt, int64_t *bytes, double *pct) {
    static const struct {
        const char *unit;
        double mult;
    } units[] = {{"", 1},
                 {"b", 1},
                 {"bytes", 1},
                 {"kb", 1e3},
                 {"mb", 1e6},
                 {"gb", 1e9},
                 {"tb", 1e12},
                 {"kib", 1024.0},
                 {"mib", 1024.0 * 1024},
                 {"gib", 1024.0 * 1024 * 1024},
                 {"tib", 1024.0 * 1024 * 1024 * 1024}};
    *bytes = 0;
    *pct = 0;
    if (!txt) return -1;
    while (*txt == ' ')
        txt++;
    if (strcasecmp(txt, "none") == 0 || strcasecmp(txt, "unlimited") == 0) return 0;
    if ((*txt < '0' || *txt > '9') && *txt != '.') return -1;
    char *end;
    errno = 0;
    double v = strtod(txt, &end);
    if (errno || end == txt || !(v >= 0)) return -1;
    while (*end == ' ')
        end++;
    size_t l = strlen(end);
    while (l && end[l - 1] == ' ')
        l--;
    char unit[8];
    if (l >= sizeof unit) return -1;
    memcpy(unit, end, l);
    unit[l] = '\0';
    if (strcmp(unit, "%") == 0) {
        if (!(v > 0 && v <= 100)) return -1;
        *pct = v;
        return 0;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcasecmp(unit, units[i].unit) == 0) {
            double b = v * units[i].mult;
            if (b >= 9.2e18) return -1;
            *bytes = (int64_t)(b + 0.5);
            if (v > 0 && *bytes == 0) *bytes = 1;
            return 0;
        }
    return -1;
}

/* Parse the `device:` mapping (or top-level settings) into s. Returns 0 or
 * -1 with the error set. */
static int parse_setting(Cfg *g, const char *key, yaml_node_t *v, CatSettings *s) {
    const char *txt = scalar(g, v, key);
    if (!txt) return -1;
    if (strcmp(key, "memory_limit") == 0) {
        if (cat_parse_memory_limit(txt, &s->memory_limit_bytes, &s->memory_limit_pct) != 0)
            return cfg_err(g, v,
                           "'memory_limit' must be a size (bytes, or with a unit: B, KB, MB, GB, "
                           "TB, KiB, MiB, GiB, TiB) or a share of device memory (up to 100%%), "
                           "not '%s'",
                           txt);
        return 0;
    }
    if (strcmp(key, "gpu_cache_bytes") == 0) {
        int64_t b;
        if (cat_parse_i64(txt, strlen(txt), &b) != 0 || b < 0)
            return cfg_err(g, v, "'gpu_cache_bytes' must be a non-negative integer, not '%s'", txt);
        s->gpu_cache_bytes = b;
        return 0;
    }
    char *p = resolve(g, txt);
    if (!p) return cfg_err(g, v, "out of memory");
    if (strlen(p) >= sizeof s->cost_file) {
        free(p);
        return cfg_err(g, v, "'cost_file' path is too long");
    }
    strcpy(s->cost_file, p);
    free(p);
    return 0;
}

/* Walk the root mapping: collect table declarations into g->decls and
 * settings into *s. Returns 0 or -1 with the error set. */
static int parse_root(Cfg *g, yaml_node_t *root, CatSettings *s) {
    if (root->type != YAML_MAPPING_NODE)
        return cfg_err(g, root, "the config must be a mapping with 'tables' (and 'device')");
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(g->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(g->doc, p->value);
        const char *key = unique_key(g, root, p);
        if (!key) return -1;
        if (strcmp(key, "tables") == 0) {
            if (v->type == YAML_SCALAR_NODE && v->data.scalar.length == 0)
                continue; /* "tables:" with nothing */
            if (v->type != YAML_SEQUENCE_NODE) return cfg_err(g, v, "'tables' must be a list");
            int cnt = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
            TDecl *nd = realloc(g->decls, (size_t)(g->ndecls + cnt + 1) * sizeof *nd);
            if (!nd) return cfg_err(g, v, "out of memory");
            g->decls = nd;
            for (int i = 0; i < cnt; i++) {
                TDecl *d = &g->decls[g->ndecls++];
                memset(d, 0, sizeof *d);
                yaml_node_t *tn = yaml_document_get_node(g->doc, v->data.sequence.items.start[i]);
                if (parse_table(g, tn, d) != 0) return -1;
            }
        } else if (strcmp(key, "device") == 0) {
            if (v->type == YAML_SCALAR_NODE && v->data.scalar.length == 0) continue;
            if (v->type != YAML_MAPPING_NODE) return cfg_err(g, v, "'device' must be a mapping");
            for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top;
                 q++) {
                yaml_node_t *k2 = yaml_document_get_node(g->doc, q->key);
                yaml_node_t *v2 = yaml_document_get_node(g->doc, q->value);
                const char *key2 = unique_key(g, v, q);
                if (!key2) return -1;
                if (strcmp(key2, "gpu_cache_bytes") != 0 && strcmp(key2, "cost_file") != 0 &&
                    strcmp(key2, "memory_limit") != 0)
                    return cfg_err(g, k2, "unknown key '%s' in device", key2);
                if (parse_setting(g, key2, v2, s) != 0) return -1;
            }
        } else if (strcmp(key, "cost_file") == 0) {
            if (parse_setting(g, key, v, s) != 0) return -1;
        } else {
            return cfg_err(g, k, "unknown key '%s'", key);
        }
    }
    return 0;
}

/* Read yaml_path, validate it entirely, then load every table it declares
 * into cat. Returns 0 when all loaded, or -1 with the first error in err:
 * a malformed or invalid file loads nothing; a table with bad data is
 * skipped and the others still load. settings (may be NULL) gets the
 * device settings, defaults when absent. */
int cat_load_config(Catalog *cat, const char *yaml_path, CatSettings *settings, CatError *err) {
    CatSettings s = {0};
    Cfg g = {0};
    g.path = yaml_path;
    g.err = err;
    if (settings) *settings = s;
    if (!cat || !yaml_path) return cat_err(err, "cat_load_config: no catalog or path");
    FILE *f = fopen(yaml_path, "rb");
    if (!f) return cat_err(err, "%s: cannot open config: %s", yaml_path, strerror(errno));
    const char *slash = strrchr(yaml_path, '/');
    g.dir = malloc(slash ? (size_t)(slash - yaml_path) + 2 : 1);
    if (!g.dir) {
        fclose(f);
        return cat_err(err, "out of memory");
    }
    if (slash) {
        memcpy(g.dir, yaml_path, (size_t)(slash - yaml_path) + 1);
        g.dir[slash - yaml_path + 1] = '\0';
    } else {
        g.dir[0] = '\0';
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    int rc = -1, have_doc = 0;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        free(g.dir);
        return cat_err(err, "out of memory");
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        const char *problem = parser.problem ? parser.problem : "malformed YAML";
        if (parser.context)
            cat_err(err, "%s:%lu:%lu: %s %s", yaml_path,
                    (unsigned long)parser.problem_mark.line + 1,
                    (unsigned long)parser.problem_mark.column + 1, problem, parser.context);
        else
            cat_err(err, "%s:%lu:%lu: %s", yaml_path, (unsigned long)parser.problem_mark.line + 1,
                    (unsigned long)parser.problem_mark.column + 1, problem);
        goto done;
    }
    have_doc = 1;
    g.doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && !(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0) &&
        parse_root(&g, root, &s) != 0)
        goto done;
    if (settings) *settings = s;
    rc = 0;
    for (int i = 0; i < g.ndecls; i++) {
        TDecl *d = &g.decls[i];
        CatTableDef def = {d->name,
                           d->source,
                           d->format,
                           d->header,
                           d->delimiter,
                           d->ncols,
                           (const char *const *)d->col_names,
                           d->col_types,
                           d->col_prec,
                           d->col_scale,
                           NULL,
                           NULL,
                           (const char *const *)d->parts,
                           d->nparts};
        CatError e;
        if (cat_load_table(cat, &def, &e) != 0 && rc == 0) {
            rc = -1;
            if (err) *err = e;
        }
    }
done:
    for (int i = 0; i < g.ndecls; i++)
        decl_free(&g.decls[i]);
    free(g.decls);
    if (have_doc) yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    fclose(f);
    free(g.dir);
    return rc;
}
