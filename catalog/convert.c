/*
 * catalog/convert.c — turn a config's text tables into binary-column folders
 * (`gqp gen tpch` writes CSV through DuckDB, then this makes the tables fast
 * to load: a binary folder is read without parsing, as `gqp gen ssb`'s are).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/cat_internal.h"
#include "catalog/catalog.h"

/* Append printf-formatted text to the growing buffer *buf (*len used, *cap
 * allocated). Returns 0, or -1 when memory runs out. */
static int buf_add(char **buf, size_t *len, size_t *cap, const char *fmt, const char *a,
                   const char *b) {
    for (;;) {
        int n = snprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, a, b);
        if (n < 0) return -1;
        if (*buf && *len + (size_t)n < *cap) {
            *len += (size_t)n;
            return 0;
        }
        size_t ncap = (*cap ? *cap * 2 : 4096) + (size_t)n;
        char *g = realloc(*buf, ncap);
        if (!g) return -1;
        *buf = g;
        *cap = ncap;
    }
}

/* Load every table of the config in_path, write each as the binary-column
 * folder <folder of out_path>/bin/<table>/ and write out_path declaring
 * them (format binary, the same column names and types, in the config's
 * order), or with append add their entries to the end of out_path (a
 * config this function wrote). Returns 0, or -1 with err set (a table that
 * fails to load fails the whole conversion; folders written before the
 * error are left). */
int cat_config_to_binary(const char *in_path, const char *out_path, int append, CatError *err) {
    if (!in_path || !out_path) return cat_err(err, "cat_config_to_binary: no config path");
    Catalog *cat = cat_catalog_new();
    if (!cat) return cat_err(err, "out of memory");
    char *dir = strdup(out_path), *text = NULL;
    size_t len = 0, cap = 0;
    int rc = -1;
    if (!dir) {
        cat_err(err, "out of memory");
        goto done;
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[1] = 0;
    else
        dir[0] = 0;
    if (cat_load_config(cat, in_path, NULL, err) != 0) goto done;
    if (!append &&
        buf_add(&text, &len, &cap, "%s%s",
                "# binary-column folders under bin/ (gqp_config_to_binary)\n", "tables:\n") != 0)
        goto oom;
    for (int i = 0; i < cat->ntables; i++) {
        const CatTable *t = cat->tables[i];
        char *bindir = cat_concat3(dir, "bin/", t->name);
        if (!bindir) goto oom;
        int wrc = cat_write_binary(t, bindir, err);
        free(bindir);
        if (wrc != 0) goto done;
        if (buf_add(&text, &len, &cap, "  - name: %s\n    source: bin/%s\n", t->name, t->name) ||
            buf_add(&text, &len, &cap, "    format: binary\n    columns:\n%s%s", "", ""))
            goto oom;
        for (int c = 0; c < t->ncols; c++) {
            /* a type name with a comma (DECIMAL(p,s)) is quoted in the flow mapping */
            const char *ty = cat_type_name(t->cols[c].type);
            if (buf_add(&text, &len, &cap,
                        strchr(ty, ',') ? "      - {name: %s, type: \"%s\"}\n"
                                        : "      - {name: %s, type: %s}\n",
                        t->cols[c].name, ty) != 0)
                goto oom;
        }
    }
    if (!append) {
        rc = cat_write_text(out_path, text, len, err);
        goto done;
    }
    FILE *f = fopen(out_path, "ab");
    if (!f || fwrite(text, 1, len, f) != len) {
        cat_err(err, "%s: cannot append: %s", out_path, strerror(errno));
        if (f) fclose(f);
        goto done;
    }
    if (fclose(f) != 0) {
        cat_err(err, "%s: cannot append: %s", out_path, strerror(errno));
        goto done;
    }
    rc = 0;
    goto done;
oom:
    cat_err(err, "cat_config_to_binary: out of memory");
done:
    free(text);
    free(dir);
    cat_catalog_free(cat);
    return rc;
}
