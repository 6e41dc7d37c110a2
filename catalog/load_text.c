/*
 * load_text.c -- CSV and .tbl loading on all cores.
 *
 * The file is read with one read() into a writable buffer. It is cut into
 * one chunk per thread at row boundaries (quote-aware when the file holds a
 * '"'), then two parallel passes run:
 *
 *   pass | per chunk                          | after
 *   -----+------------------------------------+------------------------------
 *   1    | count non-blank rows               | prefix sum: first row per chunk
 *   2    | parse every field straight into    | pick the earliest chunk error;
 *        | the column arrays (row = first row | build STRING dictionaries
 *        | of chunk + local index)            | (columns in parallel)
 *
 * STRING fields are kept as (pointer, length) into the buffer (quoted
 * fields are unescaped in place) until the dictionary is built. Blank lines
 * are skipped. An error is located by its row's byte offset; the line number
 * is the count of newlines before it, plus one.
 */
#include "catalog/cat_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* TUNING: files below this size are parsed on one thread (thread start-up
 * costs more than it saves). */
#define TEXT_PARALLEL_MIN_BYTES (1 << 20)

/* The first error met in one chunk; its message lacks the "file:line: "
 * prefix, which is added once the line number is known. */
typedef struct ChunkErr {
    int has;
    int col; /* the column of a value that did not parse, else -1 */
    size_t row_off;
    char msg[512];
} ChunkErr;

/* Everything the passes share. */
typedef struct TextJob {
    const CatTableDef *def;
    const CatTextOpts *text; /* def->text: read_csv's rules, or NULL */
    char *buf;
    size_t len;
    size_t body; /* offset of the first data row */
    char delim;
    int quoting;        /* CSV: fields may be "quoted" */
    int trailing_delim; /* .tbl: every row ends with the delimiter */
    int nfields;        /* fields per row: the header's, else ncols */
    int *fmap;          /* header: column of field k, -1 = not loaded; NULL = k */
    char **fname;       /* header: name of field k (for errors); NULL = column names */
    int nchunks;
    size_t *cstart; /* chunk i is [cstart[i], cstart[i + 1]) */
    int64_t *crows; /* pass 1: rows in chunk; then first row of chunk */
    CatTable *t;
    const char ***sptr; /* per column (STRING only): field pointers */
    size_t **slen;      /* per column (STRING only): field lengths */
    pthread_mutex_t lock;
    ChunkErr *errs;
    atomic_int oom; /* set by a worker that could not allocate */
    int ndict;      /* workers building dictionaries */
} TextJob;

/* See cat_internal.h: the '\n' ending the row that starts at p, or end.
 * With quoting, a '"' opens a quoted field only at the start of a field
 * ("" inside one is a quote); elsewhere it is an ordinary character (a
 * bare quote, as SQLite and DuckDB read it), and newlines inside a quoted
 * field do not end the row. */
const char *cat_text_row_end(const char *p, const char *end, int quoting, char delim) {
    if (!quoting) {
        const char *q = memchr(p, '\n', (size_t)(end - p));
        return q ? q : end;
    }
    int start = 1;
    while (p < end) {
        char ch = *p;
        if (ch == '"' && start) {
            for (p++; p < end; p++) {
                if (*p != '"') continue;
                if (p + 1 < end && p[1] == '"') {
                    p++;
                    continue;
                }
                break;
            }
            if (p >= end) return end;
            p++;
            start = 0;
            continue;
        }
        if (ch == '\n') return p;
        start = ch == delim;
        p++;
    }
    return end;
}

/* The row end of j's rows (cat_text_row_end with j's quoting and delimiter). */
static const char *row_end(const TextJob *j, const char *p, const char *end) {
    return cat_text_row_end(p, end, j->quoting, j->delim);
}

/* 1 if the row [p, q) is empty or only "\r". */
static int is_blank(const char *p, const char *q) {
    return q == p || (q == p + 1 && *p == '\r');
}

/* Pass 1 worker: count the non-blank rows of chunk i into crows[i]. */
static void count_worker(void *arg, int i) {
    TextJob *j = arg;
    const char *p = j->buf + j->cstart[i], *end = j->buf + j->cstart[i + 1];
    int64_t n = 0;
    while (p < end) {
        const char *q = row_end(j, p, end);
        n += !is_blank(p, q) || (j->text && j->text->blank_is_row);
        p = q + 1;
    }
    j->crows[i] = n;
}

/* Record the first error of chunk `ci` (later ones are ignored). Returns -1. */
static int chunk_err(TextJob *j, int ci, const char *row, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int chunk_err(TextJob *j, int ci, const char *row, const char *fmt, ...) {
    ChunkErr *e = &j->errs[ci];
    if (e->has) return -1;
    e->has = 1;
    e->row_off = (size_t)(row - j->buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* The validity array of column c, created (all rows valid) on first use
 * under the job's lock; cache is the worker's per-column copy of the
 * pointer. NULL when out of memory. */
static uint8_t *get_valid(TextJob *j, int c, uint8_t **cache) {
    if (cache[c]) return cache[c];
    pthread_mutex_lock(&j->lock);
    CatColumn *col = &j->t->cols[c];
    if (!col->valid) {
        col->valid = cat_host_alloc((size_t)j->t->nrows);
        if (col->valid) memset(col->valid, 1, (size_t)j->t->nrows);
    }
    cache[c] = col->valid;
    pthread_mutex_unlock(&j->lock);
    return cache[c];
}

/* 1 for the spaces trimmed around numeric fields. */
static int is_sp(char ch) {
    return ch == ' ' || ch == '\t';
}

/* Store field f[0..n) (quoted says it was in quotes) into row r of column
 * c. Returns 0, or -1 with the chunk's error set (row starts at `row`). */
static int store_field(TextJob *j, int ci, const char *row, int c, int64_t r, char *f, size_t n,
                       int quoted, uint8_t **vcache) {
    CatColumn *col = &j->t->cols[c];
    char vbuf[CAT_ERR_VALUE_MAX + 4];
    if (j->text)
        for (int k = 0; k < j->text->nnulls; k++)
            if (strlen(j->text->nulls[k]) == n && memcmp(j->text->nulls[k], f, n) == 0)
                goto null_value;
    if (col->type == CAT_STRING) {
        if (n == 0 && !quoted && !j->text) goto null_value;
        size_t bad = cat_utf8_check(f, n);
        if (bad < n)
            return chunk_err(j, ci, row,
                             "column '%s': invalid UTF-8 (byte 0x%02X at byte %zu) in '%s'",
                             col->name, (unsigned char)f[bad], bad + 1, cat_err_value(vbuf, f, n));
        j->sptr[c][r] = f;
        j->slen[c][r] = n;
        return 0;
    }
    const char *s = f;
    size_t m = n;
    while (m > 0 && is_sp(*s)) {
        s++;
        m--;
    }
    while (m > 0 && is_sp(s[m - 1]))
        m--;
    if (m == 0) goto null_value;
    int bad = 0;
    switch (col->type) {
    case CAT_INT32:
        bad = cat_parse_i32(s, m, (int32_t *)col->data + r);
        break;
    case CAT_INT64:
        bad = cat_parse_i64(s, m, (int64_t *)col->data + r);
        break;
    case CAT_FLOAT32: {
        double d;
        bad = cat_parse_f64(s, m, &d);
        ((float *)col->data)[r] = (float)d;
        break;
    }
    case CAT_FLOAT64:
        bad = cat_parse_f64(s, m, (double *)col->data + r);
        break;
    case CAT_DATE:
        bad = cat_parse_date(s, m, (int32_t *)col->data + r);
        break;
    case CAT_BOOL:
        bad = cat_parse_bool(s, m, (uint8_t *)col->data + r);
        break;
    case CAT_DECIMAL:
        bad = cat_parse_decimal(s, m, col->prec, col->scale, (int64_t *)col->data + r);
        if (bad == 2)
            return chunk_err(j, ci, row,
                             "column '%s': value '%s' is out of range for DECIMAL(%d,%d)",
                             col->name, cat_err_value(vbuf, f, n), col->prec, col->scale);
        break;
    default:
        bad = -1;
        break;
    }
    if (bad) {
        if (!j->errs[ci].has) j->errs[ci].col = c;
        return chunk_err(j, ci, row, "column '%s': cannot parse '%s' as %s", col->name,
                         cat_err_value(vbuf, f, n), cat_type_name(col->type));
    }
    return 0;
null_value : {
    uint8_t *v = get_valid(j, c, vcache);
    if (!v) {
        j->oom = 1;
        return chunk_err(j, ci, row, "out of memory");
    }
    v[r] = 0;
    return 0;
}
}

/* Name of field k of a row (the header's name, else the column's). */
static const char *field_name(const TextJob *j, int k) {
    return j->fname ? j->fname[k] : j->t->cols[k].name;
}

/* Parse one non-blank row [p, q) (q at its '\n' or the buffer end) into
 * row r. Returns 0, or -1 with the chunk's error set. */
static int parse_row(TextJob *j, int ci, char *p, char *q, int64_t r, uint8_t **vcache) {
    char *row = p;
    char *rend = q;
    int ncols = j->nfields;
    char vbuf[CAT_ERR_VALUE_MAX + 4];
    if (rend > p && rend[-1] == '\r') rend--;
    if (j->trailing_delim && rend > p && rend[-1] == j->delim) rend--;
    for (int k = 0; k < ncols; k++) {
        int c = j->fmap ? j->fmap[k] : k;
        if (p > rend)
            return chunk_err(j, ci, row,
                             "column '%s': missing value (row has %d fields, expected %d)",
                             field_name(j, k), k, ncols);
        char *f, *fend;
        size_t n;
        int quoted = 0;
        if (j->quoting && p < rend && *p == '"') {
            char *w = p + 1, *s = p + 1;
            for (;;) {
                if (s >= rend)
                    return chunk_err(j, ci, row, "column '%s': unterminated quoted value '%s'",
                                     field_name(j, k), cat_err_value(vbuf, p, (size_t)(rend - p)));
                if (*s == '"') {
                    if (s + 1 < rend && s[1] == '"') {
                        *w++ = '"';
                        s += 2;
                        continue;
                    }
                    s++;
                    break;
                }
                *w++ = *s++;
            }
            if (j->text) /* DuckDB: spaces after the closing quote are dropped */
                while (s < rend && *s != j->delim && is_sp(*s))
                    s++;
            if (s < rend && *s != j->delim) {
                fend = memchr(s, j->delim, (size_t)(rend - s));
                if (!fend) fend = rend;
                return chunk_err(j, ci, row,
                                 "column '%s': unexpected text after closing quote in '%s'",
                                 field_name(j, k), cat_err_value(vbuf, p, (size_t)(fend - p)));
            }
            f = p + 1;
            n = (size_t)(w - f);
            fend = s;
            quoted = 1;
        } else {
            fend = memchr(p, j->delim, (size_t)(rend - p));
            if (!fend) fend = rend;
            f = p;
            n = (size_t)(fend - p);
        }
        if (c >= 0 && store_field(j, ci, row, c, r, f, n, quoted, vcache) != 0) return -1;
        p = fend + 1;
    }
    if (p <= rend) {
        const char *x = p;
        const char *xe = memchr(x, j->delim, (size_t)(rend - x));
        if (!xe) xe = rend;
        int nf = ncols + 1;
        for (const char *s = xe; s < rend; s++)
            nf += *s == j->delim;
        return chunk_err(
            j, ci, row, "column '%s': unexpected extra value '%s' (row has %d fields, expected %d)",
            field_name(j, ncols - 1), cat_err_value(vbuf, x, (size_t)(xe - x)), nf, ncols);
    }
    return 0;
}

/* Pass 2 worker: parse every row of chunk i; stops at the chunk's first
 * error. */
static void parse_worker(void *arg, int i) {
    TextJob *j = arg;
    uint8_t *vcache[1024];
    uint8_t **vc = j->t->ncols <= 1024 ? vcache : calloc((size_t)j->t->ncols, sizeof *vc);
    if (!vc) {
        j->oom = 1;
        chunk_err(j, i, j->buf + j->cstart[i], "out of memory");
        return;
    }
    memset(vc, 0, (size_t)j->t->ncols * sizeof *vc);
    char *p = j->buf + j->cstart[i], *end = j->buf + j->cstart[i + 1];
    int64_t r = j->crows[i];
    while (p < end) {
        char *q = (char *)row_end(j, p, end);
        if (!is_blank(p, q) || (j->text && j->text->blank_is_row)) {
            if (parse_row(j, i, p, q, r, vc) != 0) break;
            r++;
        }
        p = q + 1;
    }
    if (vc != vcache) free(vc);
}

/* Dictionary-building worker: STRING columns i, i + ndict, ... get their
 * dictionary and codes. Sets j->oom on failure. */
static void dict_worker(void *arg, int i) {
    TextJob *j = arg;
    for (int k = i; k < j->t->ncols; k += j->ndict) {
        CatColumn *c = &j->t->cols[k];
        if (c->type != CAT_STRING) continue;
        /* a large column on all threads (a TPC-H comment column's
         * dictionary is most of the load) */
        CatDict *d = cat_dict_build_par(j->sptr[k], j->slen[k], j->t->nrows, c->valid, c->data,
                                        cat_nthreads());
        if (!d) {
            j->oom = 1;
            continue;
        }
        cat_dict_free(c->dict);
        c->dict = d;
    }
}

/* Cut [body, len) into j->nchunks chunks starting at row boundaries; fills
 * j->cstart (nchunks + 1 entries, possibly empty chunks). */
static void split_chunks(TextJob *j) {
    size_t span = j->len - j->body;
    j->cstart[0] = j->body;
    j->cstart[j->nchunks] = j->len;
    if (!j->quoting) {
        for (int i = 1; i < j->nchunks; i++) {
            size_t at = j->body + span / (size_t)j->nchunks * (size_t)i;
            if (at < j->cstart[i - 1]) at = j->cstart[i - 1];
            const char *nl = memchr(j->buf + at, '\n', j->len - at);
            j->cstart[i] = nl ? (size_t)(nl - j->buf) + 1 : j->len;
        }
        return;
    }
    int next = 1;
    const char *p = j->buf + j->body, *end = j->buf + j->len;
    while (p < end && next < j->nchunks) {
        const char *q = row_end(j, p, end);
        p = q < end ? q + 1 : end;
        size_t pos = (size_t)(p - j->buf);
        while (next < j->nchunks && pos >= j->body + span / (size_t)j->nchunks * (size_t)next)
            j->cstart[next++] = pos;
    }
    for (; next < j->nchunks; next++)
        j->cstart[next] = j->len;
}

/* Split the header row [p, q) into its field names (CSV quotes removed,
 * "" unescaped, spaces and tabs around a name trimmed) in j->fname and
 * j->nfields, then map each field to the column of that name
 * (case-insensitive) in j->fmap; fields naming no column are skipped.
 * Returns 0, or -1 with err set (a column missing from the header, a column
 * named twice, out of memory). */
static int map_header(TextJob *j, const char *p, const char *q, CatError *err) {
    const CatTableDef *def = j->def;
    char vbuf[CAT_ERR_VALUE_MAX + 4];
    if (q > p && q[-1] == '\r') q--;
    if (j->trailing_delim && q > p && q[-1] == j->delim) q--;
    int n = 1, inq = 0;
    for (const char *s = p; s < q; s++) {
        if (j->quoting && *s == '"')
            inq = !inq;
        else if (*s == j->delim && !inq)
            n++;
    }
    j->fname = calloc((size_t)n, sizeof *j->fname);
    j->fmap = malloc((size_t)n * sizeof *j->fmap);
    if (!j->fname || !j->fmap) return cat_err(err, "%s: out of memory", def->source);
    j->nfields = n;
    for (int k = 0; k < n; k++) {
        char *w = malloc((size_t)(q - p) + 1), *o = w;
        if (!w) return cat_err(err, "%s: out of memory", def->source);
        j->fname[k] = w;
        inq = 0;
        for (; p < q && (inq || *p != j->delim); p++) {
            if (j->quoting && *p == '"') {
                if (inq && p + 1 < q && p[1] == '"')
                    *o++ = *p++;
                else
                    inq = !inq;
                continue;
            }
            *o++ = *p;
        }
        p++; /* the delimiter */
        while (o > w && is_sp(o[-1]))
            o--;
        *o = '\0';
        size_t lead = strspn(w, " \t");
        memmove(w, w + lead, strlen(w + lead) + 1);
        j->fmap[k] = -1;
    }
    for (int c = 0; c < def->ncols; c++) {
        int found = -1;
        for (int k = 0; k < n; k++) {
            if (strcasecmp(j->fname[k], def->col_names[c]) != 0) continue;
            if (found >= 0)
                return cat_err(err, "%s:1: header names column '%s' twice (fields %d and %d)",
                               def->source, def->col_names[c], found + 1, k + 1);
            found = k;
        }
        if (found < 0)
            return cat_err(err,
                           "%s:1: header has no column '%s' (header: '%s'; columns are "
                           "matched to the header by name)",
                           def->source, def->col_names[c],
                           cat_err_value(vbuf, j->buf + j->body, (size_t)(q - (j->buf + j->body))));
        j->fmap[found] = c;
    }
    return 0;
}

/* Free the job's scratch arrays (not the table, not the buffer). */
static void job_free(TextJob *j) {
    if (j->fname)
        for (int k = 0; k < j->nfields; k++)
            free(j->fname[k]);
    free(j->fname);
    free(j->fmap);
    if (j->sptr)
        for (int c = 0; c < j->def->ncols; c++)
            free((void *)j->sptr[c]);
    if (j->slen)
        for (int c = 0; c < j->def->ncols; c++)
            free(j->slen[c]);
    free(j->sptr);
    free(j->slen);
    free(j->cstart);
    free(j->crows);
    free(j->errs);
}

/* TUNING: a file is read in pieces of this size, by all threads at once
 * (one read() of a 20 GB file runs at one core's copy speed). */
#define TEXT_READ_PIECE ((size_t)64 << 20)

/* The parallel read of a table's text files into one buffer. */
typedef struct ReadJob {
    const char *const *paths;
    int n;
    int *fds;
    size_t *start; /* file k is [start[k], start[k + 1]) of buf */
    char *buf;
    int nthreads;
    atomic_int failed; /* first failing file + 1 */
    int err_no;        /* its errno, 0 = it ended early */
} ReadJob;

/* Read worker i: pieces i, i + nthreads, ... of the files (a piece lies
 * within one file). */
static void read_worker(void *arg, int i) {
    ReadJob *r = arg;
    size_t piece = 0;
    for (int k = 0; k < r->n; k++) {
        size_t fsize = r->start[k + 1] - r->start[k];
        size_t np = (fsize + TEXT_READ_PIECE - 1) / TEXT_READ_PIECE;
        for (size_t q = 0; q < np; q++, piece++) {
            if (piece % (size_t)r->nthreads != (size_t)i) continue;
            size_t off = q * TEXT_READ_PIECE, end = off + TEXT_READ_PIECE;
            if (end > fsize) end = fsize;
            while (off < end && !r->failed) {
                ssize_t got = pread(r->fds[k], r->buf + r->start[k] + off, end - off, (off_t)off);
                if (got < 0 && errno == EINTR) continue;
                if (got <= 0) {
                    int none = 0;
                    if (atomic_compare_exchange_strong(&r->failed, &none, k + 1))
                        r->err_no = got < 0 ? errno : 0;
                    return;
                }
                off += (size_t)got;
            }
        }
    }
}

/* Read def's text, source or its nparts parts one after the other, into
 * one cat_host_alloc block (NUL-terminated), on all threads. Returns it
 * with *len set, or NULL with err set. */
static char *read_text(const CatTableDef *def, size_t *len, CatError *err) {
    const char *const one[1] = {def->source};
    ReadJob r = {0};
    r.paths = def->nparts > 1 ? def->parts : one;
    r.n = def->nparts > 1 ? def->nparts : 1;
    *len = 0;
    r.fds = malloc((size_t)r.n * sizeof *r.fds);
    r.start = calloc((size_t)r.n + 1, sizeof *r.start);
    int opened = 0;
    if (!r.fds || !r.start) {
        cat_err(err, "%s: out of memory", def->source);
        goto done;
    }
    for (; opened < r.n; opened++) {
        const char *path = r.paths[opened];
        /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is
         * refused below as not a regular file) */
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (fd < 0) {
            cat_err(err, "%s: cannot open: %s", path, strerror(errno));
            goto done;
        }
        r.fds[opened] = fd;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            cat_err(err, "%s: not a regular file", path);
            opened++;
            goto done;
        }
        r.start[opened + 1] = r.start[opened] + (size_t)st.st_size;
    }
    size_t total = r.start[r.n];
    r.buf = cat_host_alloc(total + 1);
    if (!r.buf) {
        cat_err(err, "%s: out of memory reading %zu bytes", def->source, total);
        goto done;
    }
    r.nthreads = total >= TEXT_PARALLEL_MIN_BYTES ? cat_nthreads() : 1;
    cat_parallel(r.nthreads, read_worker, &r);
    if (r.failed) {
        cat_err(err, "%s: read failed: %s", r.paths[r.failed - 1],
                r.err_no ? strerror(r.err_no) : "unexpected end (the file shrank?)");
        cat_host_free(r.buf);
        r.buf = NULL;
        goto done;
    }
    r.buf[total] = '\0';
    *len = total;
done:
    for (int k = 0; k < opened; k++)
        close(r.fds[k]);
    free(r.fds);
    free(r.start);
    return r.buf;
}

/* See cat_internal.h: load a CSV or .tbl file described by def. */
CatTable *cat_read_text(const CatTableDef *def, CatError *err) {
    TextJob j = {0};
    CatTable *t = NULL;
    j.def = def;
    j.text = def->text;
    if (j.text && j.text->bad_col) *j.text->bad_col = -1;
    j.quoting = def->format == CAT_FMT_CSV;
    j.trailing_delim = def->format == CAT_FMT_TBL;
    j.delim = def->delimiter ? def->delimiter : (def->format == CAT_FMT_TBL ? '|' : ',');
    j.buf = read_text(def, &j.len, err);
    if (!j.buf) return NULL;
    pthread_mutex_init(&j.lock, NULL);
    if (j.len >= 3 && memcmp(j.buf, "\xEF\xBB\xBF", 3) == 0) j.body = 3; /* UTF-8 byte-order mark */
    j.quoting = j.quoting && memchr(j.buf, '"', j.len) != NULL;
    const char *nul = memchr(j.buf, '\0', j.len);
    if (nul) {
        int64_t line = 1;
        for (const char *p = j.buf; (p = memchr(p, '\n', (size_t)(nul - p))); p++)
            line++;
        cat_err(err, "%s:%lld: NUL byte at byte offset %zu (not a text file?)", def->source,
                (long long)line, (size_t)(nul - j.buf));
        goto fail;
    }
    j.nfields = def->ncols;
    if (j.text && j.text->skip_header) {
        const char *h = j.buf + j.body;
        const char *he = row_end(&j, h, j.buf + j.len);
        j.body = he < j.buf + j.len ? (size_t)(he - j.buf) + 1 : j.len;
    } else if (def->header) {
        if (j.body >= j.len) {
            cat_err(err, "%s:1: the file is empty, but the config says it has a header line",
                    def->source);
            goto fail;
        }
        const char *h = j.buf + j.body;
        const char *he = row_end(&j, h, j.buf + j.len);
        if (map_header(&j, h, he, err) != 0) goto fail;
        j.body = he < j.buf + j.len ? (size_t)(he - j.buf) + 1 : j.len;
    }
    j.nchunks = j.len - j.body >= TEXT_PARALLEL_MIN_BYTES ? cat_nthreads() : 1;
    j.cstart = calloc((size_t)j.nchunks + 1, sizeof *j.cstart);
    j.crows = calloc((size_t)j.nchunks, sizeof *j.crows);
    j.errs = calloc((size_t)j.nchunks, sizeof *j.errs);
    j.sptr = calloc((size_t)def->ncols, sizeof *j.sptr);
    j.slen = calloc((size_t)def->ncols, sizeof *j.slen);
    if (!j.cstart || !j.crows || !j.errs || !j.sptr || !j.slen) goto oom;
    for (int i = 0; i < j.nchunks; i++)
        j.errs[i].col = -1;
    split_chunks(&j);
    cat_parallel(j.nchunks, count_worker, &j);
    int64_t nrows = 0;
    for (int i = 0; i < j.nchunks; i++) {
        int64_t n = j.crows[i];
        j.crows[i] = nrows;
        nrows += n;
    }
    t = cat_table_new(def->name, def->ncols, def->col_names, def->col_types);
    if (!t) goto oom;
    cat_table_set_decimal(t, def->col_prec, def->col_scale);
    t->nrows = nrows;
    for (int c = 0; c < def->ncols; c++) {
        CatColumn *col = &t->cols[c];
        col->n = nrows;
        cat_host_free(col->data);
        col->data = cat_host_alloc((size_t)nrows * cat_type_width(col->type));
        if (!col->data) goto oom;
        if (col->type == CAT_STRING) {
            j.sptr[c] = malloc((size_t)(nrows ? nrows : 1) * sizeof(char *));
            j.slen[c] = malloc((size_t)(nrows ? nrows : 1) * sizeof(size_t));
            if (!j.sptr[c] || !j.slen[c]) goto oom;
        }
    }
    j.t = t;
    cat_parallel(j.nchunks, parse_worker, &j);
    for (int i = 0; i < j.nchunks; i++) {
        if (j.errs[i].has) {
            int64_t line = 1;
            for (const char *p = j.buf;
                 (p = memchr(p, '\n', (size_t)(j.buf + j.errs[i].row_off - p))); p++)
                line++;
            cat_err(err, "%s:%lld: %s", def->source, (long long)line, j.errs[i].msg);
            if (j.text && j.text->bad_col) *j.text->bad_col = j.errs[i].col;
            goto fail;
        }
    }
    int nstr = 0;
    for (int c = 0; c < def->ncols; c++)
        nstr += def->col_types[c] == CAT_STRING;
    j.ndict = nstr < cat_nthreads() ? nstr : cat_nthreads();
    if (nrows < 100000 && j.ndict > 1) j.ndict = 1;
    cat_parallel(j.ndict, dict_worker, &j);
    if (j.oom) goto oom;
    size_t slen = strlen(def->source) + 1;
    t->source = malloc(slen);
    if (!t->source) goto oom;
    memcpy(t->source, def->source, slen);
    job_free(&j);
    pthread_mutex_destroy(&j.lock);
    cat_host_free(j.buf);
    return t;
oom:
    cat_err(err, "%s: out of memory loading table '%s'", def->source, def->name);
fail:
    cat_table_free(t);
    job_free(&j);
    pthread_mutex_destroy(&j.lock);
    cat_host_free(j.buf);
    return NULL;
}
