/*
 * load_binary.c -- the binary-column folder format, read and written.
 *
 *   file          | contents
 *   --------------+-----------------------------------------------------
 *   <col>.bin     | n raw little-endian values of cat_type_width(type)
 *                 | (BOOL 1 byte 0/1, DATE int32 days, STRING int32 code)
 *   <col>.dict    | STRING only: the dictionary, each string followed by
 *                 | '\n', in code order (sorted, distinct)
 *   <col>.dict0   | instead of .dict when a string holds a newline: each
 *                 | string followed by a NUL byte
 *   <col>.valid   | optional: n bytes, 1 = value, 0 = NULL (absent = no
 *                 | NULLs); gqp's extension for round-tripping NULLs
 */
#include "catalog/cat_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Turn the bytes of a .dict file (strings each ending in sep: '\n', or
 * '\0' for a .dict0 file) into a dictionary, taking ownership of buf.
 * Returns it, or NULL with err set (missing final separator, unsorted or
 * repeated strings, out of memory). */
static CatDict *dict_from_file(char *buf, size_t len, const char *path, char sep, CatError *err) {
    char vbuf[CAT_ERR_VALUE_MAX + 4];
    if (len > 0 && buf[len - 1] != sep) {
        cat_host_free(buf);
        cat_err(err, "%s: last string lacks its terminating %s", path,
                sep ? "newline" : "NUL byte");
        return NULL;
    }
    const char *nul = sep ? memchr(buf, '\0', len) : NULL;
    size_t bad = nul ? (size_t)(nul - buf) : cat_utf8_check(buf, len);
    if (bad < len) {
        int64_t line = 1;
        for (size_t i = 0; i < bad; i++)
            line += buf[i] == sep;
        cat_err(err, "%s:%lld: %s (byte offset %zu)", path, (long long)line,
                nul ? "NUL byte in a string" : "invalid UTF-8", bad);
        cat_host_free(buf);
        return NULL;
    }
    int64_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += buf[i] == sep;
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
        if (buf[i] != sep) continue;
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

/* Size of the regular file at path into *size. Returns 0, 1 when it does
 * not exist (missing_ok), or -1 with err set. */
static int file_size(const char *path, size_t *size, int missing_ok, CatError *err) {
    struct stat st;
    if (stat(path, &st) != 0) {
        if (missing_ok && errno == ENOENT) return 1;
        return cat_err(err, "%s: cannot open: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) return cat_err(err, "%s: not a regular file", path);
    *size = (size_t)st.st_size;
    return 0;
}

/* See cat_internal.h: a binary-column folder described by def, checked but
 * not read: every column's .bin holds a whole number of values and the same
 * row count, a .valid (if any) one byte per row, a STRING has its .dict.
 * The columns are read on first use (cat_column_use). */
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
        size_t w = cat_type_width(col->type), len = 0;
        path = cat_concat3(def->source, "/", def->col_files ? def->col_files[c] : col->name);
        char *bin = path ? cat_concat3(path, ".bin", "") : NULL;
        if (!bin) goto oom;
        if (file_size(bin, &len, 0, err) != 0) {
            free(bin);
            goto fail;
        }
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
        char *vpath = cat_concat3(path, ".valid", "");
        if (!vpath) goto oom;
        int vr = file_size(vpath, &len, 1, err);
        if (vr < 0 || (vr == 0 && (int64_t)len != n)) {
            if (vr == 0)
                cat_err(err, "%s: size %zu does not match the column's %lld rows", vpath, len,
                        (long long)n);
            free(vpath);
            goto fail;
        }
        free(vpath);
        if (col->type == CAT_STRING) {
            char *dpath = cat_concat3(path, ".dict", "");
            if (!dpath) goto oom;
            int dr = file_size(dpath, &len, 1, err);
            if (dr == 1) { /* no .dict: a .dict0 then */
                free(dpath);
                if (!(dpath = cat_concat3(path, ".dict0", ""))) goto oom;
                dr = file_size(dpath, &len, 0, err);
            }
            free(dpath);
            if (dr != 0) goto fail;
        }
        /* read on first use */
        cat_host_free(col->data);
        col->data = NULL;
        col->lazy = path;
        col->from_file = 1;
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

/* Releases column c's data: munmap when mapped, else cat_host_free. */
void cat_column_free_data(CatColumn *c) {
    if (c->map) {
        munmap(c->map, c->map_len);
        c->map = NULL;
        c->map_len = 0;
    } else {
        cat_host_free(c->data);
    }
    c->data = NULL;
}

/* Maps base.bin (n values of w bytes, as checked at load) into *data:
 * MAP_PRIVATE and writable, so that a write (the BOOL normalization, a
 * re-coding) copies a page and never reaches the file. Returns 0, or -1
 * with err set (the file changed since the load). */
static int map_column(CatColumn *c, const char *bin, size_t bytes, CatError *err) {
    if (bytes == 0) {
        c->data = cat_host_alloc(0);
        return c->data ? 0 : cat_err(err, "%s: out of memory", bin);
    }
    int fd = open(bin, O_RDONLY);
    if (fd < 0) return cat_err(err, "%s: cannot open: %s", bin, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != bytes) {
        close(fd);
        return cat_err(err, "%s: changed since the table was loaded (expected %zu bytes)", bin,
                       bytes);
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) return cat_err(err, "%s: cannot map: %s", bin, strerror(e));
    c->map = p;
    c->map_len = bytes;
    c->data = p;
    return 0;
}

/* 1 when base.stats exists and is not older than base.bin, base.valid and
 * base.dict (those that exist): written with them, not left behind by a
 * later change of the data. */
static int stats_fresh(const char *base) {
    static const char *ext[] = {".bin", ".valid", ".dict", ".dict0"};
    char *p = cat_concat3(base, ".stats", "");
    struct stat ss, st;
    int ok = p && stat(p, &ss) == 0;
    free(p);
    for (int k = 0; k < 4 && ok; k++) {
        if (!(p = cat_concat3(base, ext[k], ""))) return 0;
        if (stat(p, &st) == 0)
            ok =
                st.st_mtim.tv_sec < ss.st_mtim.tv_sec || (st.st_mtim.tv_sec == ss.st_mtim.tv_sec &&
                                                          st.st_mtim.tv_nsec <= ss.st_mtim.tv_nsec);
        free(p);
    }
    return ok;
}

/* Reads column ci of t (cat_column_use); its statistics too (from its
 * .stats file when fresh, else computed) when want_stats. */
static int column_read(CatTable *t, int ci, int want_stats, CatError *err) {
    if (!t || ci < 0 || ci >= t->ncols) return cat_err(err, "no such column");
    CatColumn *col = &t->cols[ci];
    if (!col->lazy) return 0;
    const char *path = col->lazy;
    int64_t n = col->n;
    size_t w = cat_type_width(col->type), len;
    char *bin = cat_concat3(path, ".bin", "");
    char *vpath = cat_concat3(path, ".valid", "");
    char *dpath = cat_concat3(path, ".dict", "");
    char *spath = cat_concat3(path, ".stats", "");
    uint8_t *valid = NULL;
    CatDict *d = NULL;
    /* statistics written with the folder: nothing to compute */
    int have_stats = want_stats && spath && stats_fresh(path) && cat_stats_read(col, spath, n);
    if (!bin || !vpath || !dpath || !spath) {
        cat_err(err, "%s: out of memory reading column '%s'", path, col->name);
        goto fail;
    }
    if (map_column(col, bin, (size_t)n * w, err) != 0) goto fail;
    if (col->type == CAT_BOOL)
        for (int64_t i = 0; i < n; i++) /* writes (copies) only pages that need it */
            if (((uint8_t *)col->data)[i] > 1) ((uint8_t *)col->data)[i] = 1;
    valid = cat_read_file(vpath, &len, 1, err);
    if (!valid && len == 0 && access(vpath, F_OK) == 0) goto fail;
    if (valid) {
        if ((int64_t)len != n) {
            cat_err(err, "%s: size %zu does not match the column's %lld rows", vpath, len,
                    (long long)n);
            goto fail;
        }
        int any_null = 0;
        for (int64_t i = 0; i < n; i++) {
            valid[i] = valid[i] != 0;
            any_null |= !valid[i];
        }
        if (!any_null) {
            cat_host_free(valid);
            valid = NULL;
        }
    }
    if (col->type == CAT_STRING) {
        char sep = '\n';
        char *dbuf = cat_read_file(dpath, &len, 1, err);
        if (!dbuf && len == 0 && access(dpath, F_OK) != 0) { /* no .dict: a .dict0 then */
            char *d0 = cat_concat3(path, ".dict0", "");
            if (!d0) {
                cat_err(err, "%s: out of memory reading column '%s'", path, col->name);
                goto fail;
            }
            free(dpath);
            dpath = d0;
            sep = '\0';
            dbuf = cat_read_file(dpath, &len, 0, err);
        }
        if (!dbuf) goto fail;
        if (!(d = dict_from_file(dbuf, len, dpath, sep, err))) goto fail;
        const int32_t *codes = col->data;
        /* fresh statistics bound the codes: no need to read them all */
        const CatStats *s = &col->stats;
        int checked =
            have_stats && (s->has_minmax ? s->min >= 0 && s->max < (double)d->n : s->nulls == n);
        for (int64_t i = 0; i < n && !checked; i++) {
            if (valid && !valid[i]) continue;
            if (codes[i] < 0 || codes[i] >= d->n) {
                cat_err(err, "%s: row %lld: code %d out of range (%s has %lld strings)", bin,
                        (long long)i + 1, (int)codes[i], dpath, (long long)d->n);
                goto fail;
            }
        }
        cat_dict_free(col->dict);
        col->dict = d;
        d = NULL;
    }
    col->valid = valid;
    free(bin);
    free(vpath);
    free(dpath);
    free(spath);
    free(col->lazy);
    col->lazy = NULL;
    if (!have_stats && want_stats) cat_column_stats(col);
    return 0;
fail:
    cat_column_free_data(col);
    cat_host_free(valid);
    cat_dict_free(d);
    free(col->stats.hist);
    memset(&col->stats, 0, sizeof col->stats);
    free(bin);
    free(vpath);
    free(dpath);
    free(spath);
    return -1;
}

/* See catalog.h. */
int cat_column_use(CatTable *t, int ci, CatError *err) {
    return column_read(t, ci, 1, err);
}

/* See cat_internal.h. */
int cat_binary_write_stats(const CatTableDef *def, CatError *err) {
    CatTable *t = cat_read_binary(def, err);
    if (!t) return -1;
    int rc = 0;
    for (int c = 0; c < t->ncols && rc == 0; c++)
        rc = column_read(t, c, 0, err);
    if (rc == 0) cat_table_stats(t); /* the columns in parallel */
    for (int c = 0; c < t->ncols && rc == 0; c++) {
        char *base = cat_concat3(def->source, "/", t->cols[c].name);
        char *spath = base ? cat_concat3(base, ".stats", "") : NULL;
        rc = spath ? cat_stats_write(&t->cols[c], spath, err)
                   : cat_err(err, "%s: out of memory", def->source);
        free(base);
        free(spath);
    }
    cat_table_free(t);
    return rc;
}

/* See catalog.h. */
int cat_table_use_all(CatTable *t, CatError *err) {
    for (int c = 0; t && c < t->ncols; c++)
        if (cat_column_use(t, c, err) != 0) return -1;
    return 0;
}

/* See catalog.h. */
int cat_column_loaded(const CatTable *t, int col) {
    return t && col >= 0 && col < t->ncols && !t->cols[col].lazy;
}

/* See catalog.h: column c's files dir/name.* (.bin, .valid, .dict or
 * .dict0, .stats). Returns 0, or -1 with err set. */
int cat_write_column(const CatColumn *c, const char *dir, const char *name, CatError *err) {
    int rc = -1;
    char *base = cat_concat3(dir, "/", name);
    char *d0path = base ? cat_concat3(base, ".dict0", "") : NULL;
    char *bin = base ? cat_concat3(base, ".bin", "") : NULL;
    char *vpath = base ? cat_concat3(base, ".valid", "") : NULL;
    char *dpath = base ? cat_concat3(base, ".dict", "") : NULL;
    char *spath = base ? cat_concat3(base, ".stats", "") : NULL;
    char *dbuf = NULL;
    if (!bin || !vpath || !dpath || !spath || !d0path) {
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
        /* a string with a newline: the NUL-separated .dict0 (the bytes as
         * they are in memory) instead of .dict */
        int nl = d && bytes && memchr(d->bytes, '\n', (size_t)bytes) != NULL;
        if (bytes) memcpy(dbuf, d->bytes, (size_t)bytes);
        for (int64_t i = 0; i < bytes && !nl; i++)
            if (dbuf[i] == '\0') dbuf[i] = '\n';
        if (cat_write_text(nl ? d0path : dpath, dbuf, (size_t)bytes, err) != 0) goto done;
        const char *other = nl ? dpath : d0path;
        if (unlink(other) != 0 && errno != ENOENT) {
            cat_err(err, "%s: cannot remove stale file: %s", other, strerror(errno));
            goto done;
        }
    }
    if (cat_write_text(bin, c->data, (size_t)c->n * cat_type_width(c->type), err) != 0) goto done;
    if (c->valid) {
        if (cat_write_text(vpath, c->valid, (size_t)c->n, err) != 0) goto done;
    } else if (unlink(vpath) != 0 && errno != ENOENT) {
        cat_err(err, "%s: cannot remove stale file: %s", vpath, strerror(errno));
        goto done;
    }
    /* the statistics last, so that their file is the newest (see
     * stats_fresh) */
    if (c->stats.rows == c->n) {
        if (cat_stats_write(c, spath, err) != 0) goto done;
    } else if (unlink(spath) != 0 && errno != ENOENT) {
        cat_err(err, "%s: cannot remove stale file: %s", spath, strerror(errno));
        goto done;
    }
    rc = 0;
done:
    free(d0path);
    free(spath);
    free(dbuf);
    free(dpath);
    free(vpath);
    free(bin);
    free(base);
    return rc;
}

/* cat_write_binary's columns, written in parallel. */
typedef struct WriteJob {
    const CatTable *t;
    const char *dir;
    CatError *errs; /* per column */
    int *rcs;       /* per column: cat_write_column's result */
    int nthreads;
} WriteJob;

/* Write worker i: columns i, i + nthreads, ... */
static void write_worker(void *arg, int i) {
    WriteJob *w = arg;
    for (int c = i; c < w->t->ncols; c += w->nthreads)
        w->rcs[c] = cat_write_column(&w->t->cols[c], w->dir, w->t->cols[c].name, &w->errs[c]);
}

/* Write t as a binary-column folder at dir (created if missing; existing
 * files of the same names are replaced). Returns 0, or -1 with err set. */
int cat_write_binary(const CatTable *t, const char *dir, CatError *err) {
    if (!t || !dir) return cat_err(err, "cat_write_binary: no table or folder");
    if (cat_table_use_all((CatTable *)t, err) != 0) return -1;
    /* statistics travel with the folder: compute those not current */
    for (int c = 0; c < t->ncols; c++)
        if (t->cols[c].stats.rows != t->cols[c].n) {
            cat_table_stats((CatTable *)t);
            break;
        }
    if (t->stale)
        return cat_err(err, "table '%s': rows were inserted; call cat_table_ready() first",
                       t->name);
    if (cat_mkdirs(dir) != 0)
        return cat_err(err, "%s: cannot create folder: %s", dir, strerror(errno));
    WriteJob w = {t, dir, calloc((size_t)t->ncols, sizeof *w.errs),
                  calloc((size_t)t->ncols, sizeof *w.rcs), 0};
    if (!w.errs || !w.rcs) {
        free(w.errs);
        free(w.rcs);
        return cat_err(err, "table '%s': out of memory writing its columns", t->name);
    }
    /* the columns' files are written by all threads at once: one thread
     * writes at a fraction of a disk's speed */
    w.nthreads = t->ncols < cat_nthreads() ? t->ncols : cat_nthreads();
    cat_parallel(w.nthreads, write_worker, &w);
    int rc = 0;
    for (int c = 0; c < t->ncols && rc == 0; c++)
        if (w.rcs[c] != 0) {
            if (err) *err = w.errs[c];
            rc = -1;
        }
    free(w.errs);
    free(w.rcs);
    return rc;
}
