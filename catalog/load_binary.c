/*
 * load_binary.c -- the binary-column folder format, read and written.
 *
 *   file          | contents
 *   --------------+-----------------------------------------------------
 *   <col>.bin     | n raw little-endian values of cat_type_width(type)
 *                 | (BOOL 1 byte 0/1, DATE int32 days, STRING int32 code)
 *   <col>.dict    | STRING only: the dictionary, each string followed by
 *                 | '\n', in code order (sorted, distinct)
 *   <col>.valid   | optional: n bytes, 1 = value, 0 = NULL (absent = no
 *                 | NULLs); gqp's extension for round-tripping NULLs
 */
#include "catalog/cat_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Turn the bytes of a .dict file (strings each ending in '\n') into a
 * dictionary, taking ownership of buf. Returns it, or NULL with err set
 * (missing final newline, unsorted or repeated strings, out of memory). */
static CatDict *dict_from_file(char *buf, size_t len, const char *path, CatError *err) {
    char vbuf[CAT_ERR_VALUE_MAX + 4];
    if (len > 0 && buf[len - 1] != '\n') {
        cat_host_free(buf);
        cat_err(err, "%s: last string lacks its terminating newline", path);
        return NULL;
    }
    const char *nul = memchr(buf, '\0', len);
    size_t bad = nul ? (size_t)(nul - buf) : cat_utf8_check(buf, len);
    if (bad < len) {
        int64_t line = 1;
        for (size_t i = 0; i < bad; i++)
            line += buf[i] == '\n';
        cat_err(err, "%s:%lld: %s (byte offset %zu)", path, (long long)line,
                nul ? "NUL byte in a string" : "invalid UTF-8", bad);
        cat_host_free(buf);
        return NULL;
    }
    int64_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += buf[i] == '\n';
    CatDict *d = calloc(1, sizeof *d);
    int64_t *off = cat_host_alloc((size_t)(n + 1) * sizeof *off);
    if (!d || !off) {
        free(d);
        cat_host_free(off);
        cat_host_free(buf);
        cat_err(err, "%s: out of memory", path);
        return NULL;
    }
    d->n = n;
    d->bytes = buf;
    d->offsets = off;
    int64_t k = 0;
    off[0] = 0;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != '\n') continue;
        buf[i] = '\0';
        off[++k] = (int64_t)i + 1;
        if (k >= 2) {
            const char *a = buf + off[k - 2], *b = buf + off[k - 1];
            size_t la = (size_t)(off[k - 1] - off[k - 2] - 1),
                   lb = (size_t)(off[k] - off[k - 1] - 1);
            size_t m = la < lb ? la : lb;
            int c = m ? memcmp(a, b, m) : 0;
            if (c > 0 || (c == 0 && la >= lb)) {
                cat_err(err,
                        "%s:%lld: string '%s' is not greater than the one before (the "
                        "dictionary must be sorted and distinct)",
                        path, (long long)k, cat_err_value(vbuf, b, lb));
                cat_dict_free(d);
                return NULL;
            }
        }
    }
    return d;
}

/* See cat_internal.h: load a binary-column folder described by def. */
CatTable *cat_read_binary(const CatTableDef *def, CatError *err) {
    CatTable *t = cat_table_new(def->name, def->ncols, def->col_names, def->col_types);
    if (t) cat_table_set_decimal(t, def->col_prec, def->col_scale);
    char *path = NULL;
    const char *first = NULL;
    if (!t) {
        cat_err(err, "%s: out of memory loading table '%s'", def->source, def->name);
        return NULL;
    }
    int64_t nrows = -1;
    for (int c = 0; c < t->ncols; c++) {
        CatColumn *col = &t->cols[c];
        size_t w = cat_type_width(col->type), len;
        path = cat_concat3(def->source, "/", col->name);
        char *bin = path ? cat_concat3(path, ".bin", "") : NULL;
        if (!bin) goto oom;
        void *data = cat_read_file(bin, &len, 0, err);
        if (!data) {
            free(bin);
            goto fail;
        }
        cat_host_free(col->data);
        col->data = data;
        if (len % w != 0) {
            cat_err(err, "%s: size %zu is not a multiple of %zu bytes (%s column '%s')", bin, len,
                    w, cat_type_name(col->type), col->name);
            free(bin);
            goto fail;
        }
        int64_t n = (int64_t)(len / w);
        if (nrows >= 0 && n != nrows) {
            cat_err(err,
                    "%s: holds %lld rows but %s.bin holds %lld (every column must have the "
                    "same row count)",
                    bin, (long long)n, first, (long long)nrows);
            free(bin);
            goto fail;
        }
        free(bin);
        if (nrows < 0) {
            nrows = n;
            first = col->name;
        }
        col->n = n;
        if (col->type == CAT_BOOL)
            for (int64_t i = 0; i < n; i++)
                ((uint8_t *)col->data)[i] = ((uint8_t *)col->data)[i] != 0;
        char *vpath = cat_concat3(path, ".valid", "");
        if (!vpath) goto oom;
        uint8_t *valid = cat_read_file(vpath, &len, 1, err);
        if (!valid && len == 0 && access(vpath, F_OK) == 0) {
            free(vpath);
            goto fail;
        }
        if (valid) {
            if ((int64_t)len != n) {
                cat_err(err, "%s: size %zu does not match the column's %lld rows", vpath, len,
                        (long long)n);
                cat_host_free(valid);
                free(vpath);
                goto fail;
            }
            int any_null = 0;
            for (int64_t i = 0; i < n; i++) {
                valid[i] = valid[i] != 0;
                any_null |= !valid[i];
            }
            if (any_null) {
                col->valid = valid;
            } else {
                cat_host_free(valid);
            }
        }
        free(vpath);
        if (col->type == CAT_STRING) {
            char *dpath = cat_concat3(path, ".dict", "");
            if (!dpath) goto oom;
            char *dbuf = cat_read_file(dpath, &len, 0, err);
            if (!dbuf) {
                free(dpath);
                goto fail;
            }
            CatDict *d = dict_from_file(dbuf, len, dpath, err);
            if (!d) {
                free(dpath);
                goto fail;
            }
            cat_dict_free(col->dict);
            col->dict = d;
            const int32_t *codes = col->data;
            for (int64_t i = 0; i < n; i++) {
                if (col->valid && !col->valid[i]) continue;
                if (codes[i] < 0 || codes[i] >= d->n) {
                    cat_err(err, "%s/%s.bin: row %lld: code %d out of range (%s has %lld strings)",
                            def->source, col->name, (long long)i + 1, (int)codes[i], dpath,
                            (long long)d->n);
                    free(dpath);
                    goto fail;
                }
            }
            free(dpath);
        }
        free(path);
        path = NULL;
    }
    t->nrows = nrows < 0 ? 0 : nrows;
    size_t sl = strlen(def->source) + 1;
    t->source = malloc(sl);
    if (!t->source) goto oom;
    memcpy(t->source, def->source, sl);
    return t;
oom:
    cat_err(err, "%s: out of memory loading table '%s'", def->source, def->name);
fail:
    free(path);
    cat_table_free(t);
    return NULL;
}

/* Write n bytes to a new file at path (truncating). Returns 0, or -1 with
 * err set. */
static int write_file(const char *path, const void *data, size_t n, CatError *err) {
    FILE *f = fopen(path, "wb");
    if (!f) return cat_err(err, "%s: cannot create: %s", path, strerror(errno));
    size_t put = n ? fwrite(data, 1, n, f) : 0;
    int bad = put != n;
    if (fclose(f) != 0) bad = 1;
    if (bad) return cat_err(err, "%s: write failed: %s", path, strerror(errno));
    return 0;
}

/* Write column c's files under dir. Returns 0, or -1 with err set. */
static int write_column(const CatColumn *c, const char *dir, CatError *err) {
    int rc = -1;
    char *base = cat_concat3(dir, "/", c->name);
    char *bin = base ? cat_concat3(base, ".bin", "") : NULL;
    char *vpath = base ? cat_concat3(base, ".valid", "") : NULL;
    char *dpath = base ? cat_concat3(base, ".dict", "") : NULL;
    char *dbuf = NULL;
    if (!bin || !vpath || !dpath) {
        cat_err(err, "out of memory writing column '%s'", c->name);
        goto done;
    }
    if (c->type == CAT_STRING) {
        const CatDict *d = c->dict;
        int64_t bytes = d ? d->offsets[d->n] : 0;
        dbuf = malloc((size_t)bytes + 1);
        if (!dbuf) {
            cat_err(err, "out of memory writing column '%s'", c->name);
            goto done;
        }
        for (int64_t i = 0; d && i < d->n; i++) {
            if (memchr(cat_dict_str(d, i), '\n', (size_t)cat_dict_len(d, i))) {
                cat_err(err,
                        "%s: column '%s': string %lld holds a newline, which the binary "
                        "format cannot store",
                        dpath, c->name, (long long)i);
                goto done;
            }
        }
        if (bytes) memcpy(dbuf, d->bytes, (size_t)bytes);
        for (int64_t i = 0; i < bytes; i++)
            if (dbuf[i] == '\0') dbuf[i] = '\n';
        if (write_file(dpath, dbuf, (size_t)bytes, err) != 0) goto done;
    }
    if (write_file(bin, c->data, (size_t)c->n * cat_type_width(c->type), err) != 0) goto done;
    if (c->valid) {
        if (write_file(vpath, c->valid, (size_t)c->n, err) != 0) goto done;
    } else if (unlink(vpath) != 0 && errno != ENOENT) {
        cat_err(err, "%s: cannot remove stale file: %s", vpath, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    free(dbuf);
    free(dpath);
    free(vpath);
    free(bin);
    free(base);
    return rc;
}

/* Write t as a binary-column folder at dir (created if missing; existing
 * files of the same names are replaced). Returns 0, or -1 with err set. */
int cat_write_binary(const CatTable *t, const char *dir, CatError *err) {
    if (!t || !dir) return cat_err(err, "cat_write_binary: no table or folder");
    if (t->stale)
        return cat_err(err, "table '%s': rows were inserted; call cat_table_ready() first",
                       t->name);
    if (cat_mkdirs(dir) != 0)
        return cat_err(err, "%s: cannot create folder: %s", dir, strerror(errno));
    for (int c = 0; c < t->ncols; c++)
        if (write_column(&t->cols[c], dir, err) != 0) return -1;
    return 0;
}
