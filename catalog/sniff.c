/*
 * sniff.c -- read_csv's sniffer: the dialect, header and column types of
 * a CSV / .tbl file from a sample, in the manner of DuckDB's CSV sniffer;
 * the text loader (load_text.c) then loads the whole file with them.
 *
 *   step      | from                         | rule
 *   ----------+------------------------------+--------------------------------
 *   sample    | the first SNIFF_MAX_BYTES    | at most CAT_SNIFF_ROWS non-blank
 *             | (a cut last row is dropped)  | rows
 *   delimiter | , | ; TAB (given: only it)   | the most columns among those
 *             |                              | that split every row alike, else
 *             |                              | the one that splits most rows alike
 *   types     | rows 2.. of each column      | narrowest of INT64 < FLOAT64,
 *             |                              | DATE, STRING reading every value
 *   header    | row 1 against those types    | a value that does not fit its
 *             |                              | column's type, or all text
 *   names     | the header, trimmed          | empty: column<i>; repeated
 *             |                              | (any case): name_1, name_2, ...;
 *             |                              | no header: column0.. (padded)
 *
 * Values as DuckDB's sniffer reads them: an integer has no '+' and no
 * leading zero ("007" is text), beyond int64 it is a FLOAT64; a real is
 * [-]digits[.digits][e[+-]digits] with the same rule on its integer part
 * (no "inf" / "nan"); a date is yyyy-mm-dd exactly; NULL markers and empty
 * fields fit every type. BOOLEAN, TIME and TIMESTAMP are not inferred
 * (text). A value past the sample that does not fit widens its column and
 * the file is read again (cat_load_csv_auto).
 */
#include "catalog/cat_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* TUNING: bytes read for the sample; 20480 rows of 400 bytes. */
#define SNIFF_MAX_BYTES ((size_t)8 << 20)
/* Most columns a file may have (SQLite's SQLITE_MAX_COLUMN default). */
#define SNIFF_MAX_COLS 2000

/* Value kinds, ordered so that join() is mostly max(). */
enum { K_NULL = 0, K_INT, K_DOUBLE, K_DATE, K_STRING };

/* One field of a row: its text (without the quotes, "" not unescaped). */
typedef struct Field {
    const char *s;
    size_t n;
    int quoted;
} Field;

/* The sample: buf[body .. len) holds whole rows only. */
typedef struct Sample {
    char *buf;
    size_t len, body;
    int quoting, trailing;
} Sample;

/* Split row [p, q) (q at its '\n') into fields with delimiter delim; the
 * first cap go to f. Returns the number of fields. A quoted field ends at
 * its closing quote; any text after it up to the delimiter is dropped (the
 * loader reports it). */
static int split_fields(const Sample *sm, const char *p, const char *q, char delim, Field *f,
                        int cap) {
    if (q > p && q[-1] == '\r') q--;
    if (sm->trailing && q > p && q[-1] == delim) q--;
    int n = 0;
    for (;;) {
        Field cur = {p, 0, 0};
        if (sm->quoting && p < q && *p == '"') {
            const char *s = p + 1;
            for (; s < q; s++) {
                if (*s != '"') continue;
                if (s + 1 < q && s[1] == '"') {
                    s++;
                    continue;
                }
                break;
            }
            cur.s = p + 1;
            cur.n = (size_t)(s - (p + 1));
            cur.quoted = 1;
            p = s < q ? s + 1 : q;
            const char *d = memchr(p, delim, (size_t)(q - p));
            p = d ? d : q;
        } else {
            const char *d = memchr(p, delim, (size_t)(q - p));
            cur.n = (size_t)((d ? d : q) - p);
            p = d ? d : q;
        }
        if (n < cap) f[n] = cur;
        n++;
        if (p >= q) break;
        p++; /* the delimiter */
    }
    return n;
}

/* 1 if the row [p, q) is empty or only "\r". */
static int blank(const char *p, const char *q) {
    return q == p || (q == p + 1 && *p == '\r');
}

/* 1 when s[0..n) is one of o's NULL markers ("" when none are given). */
static int is_null_marker(const CatCsvOpts *o, const char *s, size_t n) {
    if (o->nnulls == 0) return n == 0;
    for (int k = 0; k < o->nnulls; k++)
        if (strlen(o->nulls[k]) == n && memcmp(o->nulls[k], s, n) == 0) return 1;
    return 0;
}

/* Digits of s[i..n) from i: the index after them. */
static size_t digits(const char *s, size_t i, size_t n) {
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    return i;
}

/* The kind of one value (see the header comment). */
static int classify(const CatCsvOpts *o, const char *s, size_t n) {
    if (is_null_marker(o, s, n)) return K_NULL;
    while (n > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (n == 0) return K_NULL;
    size_t i = s[0] == '-' ? 1 : 0;
    size_t a = digits(s, i, n);
    int lead_ok = a - i <= 1 || s[i] != '0'; /* no leading zero */
    if (a > i && a == n) {
        int64_t v;
        if (!lead_ok) return K_STRING;
        return cat_parse_i64(s, n, &v) == 0 ? K_INT : K_DOUBLE;
    }
    size_t b = a;
    int frac = 0;
    if (b < n && s[b] == '.') {
        size_t c = digits(s, b + 1, n);
        frac = c > b + 1;
        b = c;
    }
    if ((a > i || frac) && lead_ok) {
        if (b < n && (s[b] == 'e' || s[b] == 'E')) {
            size_t e = b + 1;
            if (e < n && (s[e] == '+' || s[e] == '-')) e++;
            size_t f = digits(s, e, n);
            b = f > e ? f : n + 1;
        }
        double d;
        if (b == n && cat_parse_f64(s, n, &d) == 0) return K_DOUBLE;
    }
    int32_t days;
    if (cat_parse_date(s, n, &days) == 0) return K_DATE;
    return K_STRING;
}

/* The narrowest kind reading values of kinds a and b. */
static int join(int a, int b) {
    if (a == K_NULL || a == b) return b;
    if (b == K_NULL) return a;
    if ((a == K_INT && b == K_DOUBLE) || (a == K_DOUBLE && b == K_INT)) return K_DOUBLE;
    return K_STRING;
}

static CatType kind_type(int k) {
    switch (k) {
    case K_INT:
        return CAT_INT64;
    case K_DOUBLE:
        return CAT_FLOAT64;
    case K_DATE:
        return CAT_DATE;
    default:
        return CAT_STRING;
    }
}

/* path for a message: cut in the middle when longer than 200 bytes. */
static const char *shown(const char *path, char *buf, size_t cap) {
    size_t n = strlen(path);
    if (n <= 200 || cap < 200) return path;
    snprintf(buf, cap, "%.100s...%s", path, path + n - 60);
    return buf;
}

/* Read the sample of path into sm (a NUL-terminated cat_host_alloc block).
 * path must be a regular file, checked before it is opened. Returns 0, or
 * -1 with err set (missing, a directory, a FIFO or device, unreadable,
 * empty). */
static int read_sample(const char *fpath, Sample *sm, CatError *err) {
    char pbuf[256];
    const char *path = shown(fpath, pbuf, sizeof pbuf);
    struct stat st;
    if (stat(fpath, &st) != 0) return cat_err(err, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return cat_err(err, "%s: is a directory, not a file", path);
    if (!S_ISREG(st.st_mode))
        return cat_err(err, "%s: not a regular file (a FIFO, device or socket cannot be read)",
                       path);
    int fd = open(fpath, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return cat_err(err, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cat_err(err, "%s: not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return cat_err(err, "%s: the file is empty", path);
    }
    size_t want = (size_t)st.st_size < SNIFF_MAX_BYTES ? (size_t)st.st_size : SNIFF_MAX_BYTES;
    int whole = (size_t)st.st_size <= SNIFF_MAX_BYTES;
    char *buf = cat_host_alloc(want + 1);
    if (!buf) {
        close(fd);
        return cat_err(err, "%s: out of memory", path);
    }
    size_t got = 0;
    while (got < want) {
        ssize_t r = read(fd, buf + got, want - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            cat_host_free(buf);
            return cat_err(err, "%s: read failed: %s", path, strerror(e));
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    sm->buf = buf;
    sm->len = got;
    sm->body = got >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    if (!whole || got < (size_t)st.st_size) {
        /* drop the row the sample cuts (quotes ignored: a guess is enough) */
        char *nl = NULL;
        for (size_t k = got; k > sm->body; k--)
            if (buf[k - 1] == '\n') {
                nl = buf + k;
                break;
            }
        if (nl) sm->len = (size_t)(nl - buf);
    }
    return 0;
}

/* Field counts of the first CAT_SNIFF_ROWS non-blank rows of sm split by
 * delim: the most frequent count in *mode, the rows having it in *same,
 * all rows in *rows. Returns 0, or -1 when out of memory. */
static int dialect_score(const Sample *sm, char delim, int *mode, int64_t *same, int64_t *rows) {
    int *cnt = malloc(sizeof *cnt * CAT_SNIFF_ROWS);
    if (!cnt) return -1;
    const char *p = sm->buf + sm->body, *end = sm->buf + sm->len;
    int64_t n = 0;
    while (p < end && n < CAT_SNIFF_ROWS) {
        const char *q = cat_text_row_end(p, end, sm->quoting, delim);
        if (!blank(p, q)) cnt[n++] = split_fields(sm, p, q, delim, NULL, 0);
        p = q < end ? q + 1 : end;
    }
    /* the mode: counts are few in practice; a linear count per distinct
     * value of the first 64 distinct ones is enough */
    int best = n ? cnt[0] : 0;
    int64_t bestn = 0;
    int seen[64], nseen = 0;
    for (int64_t i = 0; i < n && nseen < 64; i++) {
        int c = cnt[i], dup = 0;
        for (int k = 0; k < nseen && !dup; k++)
            dup = seen[k] == c;
        if (dup) continue;
        seen[nseen++] = c;
        int64_t m = 0;
        for (int64_t k = 0; k < n; k++)
            m += cnt[k] == c;
        if (m > bestn || (m == bestn && c > best)) {
            best = c;
            bestn = m;
        }
    }
    free(cnt);
    *mode = best;
    *same = bestn;
    *rows = n;
    return 0;
}

/* Pick the delimiter (see the header comment). Returns 0 or -1 (out of
 * memory). */
static int pick_delim(const Sample *sm, const CatCsvOpts *o, char *delim, CatError *err) {
    static const char cands[] = {',', '|', ';', '\t'};
    if (o->delim) {
        *delim = o->delim;
        return 0;
    }
    if (o->format == CAT_FMT_TBL) {
        *delim = '|';
        return 0;
    }
    int best = -1, bmode = 0, ball = 0;
    int64_t bsame = 0;
    for (int i = 0; i < 4; i++) {
        int mode;
        int64_t same, rows;
        if (dialect_score(sm, cands[i], &mode, &same, &rows) != 0)
            return cat_err(err, "out of memory sniffing the file");
        if (mode < 2) continue;
        int all = same == rows;
        if (best < 0 || (all && !ball) ||
            (all == ball &&
             (all ? mode > bmode : same > bsame || (same == bsame && mode > bmode)))) {
            best = i;
            bmode = mode;
            bsame = same;
            ball = all;
        }
    }
    *delim = best < 0 ? ',' : cands[best];
    return 0;
}

/* A malloc'ed copy of the header field f: quotes unescaped, spaces and
 * tabs trimmed, bytes that are not UTF-8 as '?'. NULL when out of memory. */
static char *field_name(const Field *f) {
    char *w = malloc(f->n + 1), *o = w;
    if (!w) return NULL;
    for (size_t k = 0; k < f->n; k++) {
        if (f->quoted && f->s[k] == '"' && k + 1 < f->n && f->s[k + 1] == '"') k++;
        *o++ = f->s[k];
    }
    while (o > w && (o[-1] == ' ' || o[-1] == '\t'))
        o--;
    *o = '\0';
    size_t lead = strspn(w, " \t");
    memmove(w, w + lead, strlen(w + lead) + 1);
    for (size_t k = 0, n = strlen(w); k < n;) {
        int l = cat_utf8_len(w + k, n - k);
        if (l == 0) {
            w[k++] = '?';
        } else {
            k += (size_t)l;
        }
    }
    return w;
}

/* 1 when name is one of names[0..n), case-insensitively. */
static int name_taken(char *const *names, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (names[i] && strcasecmp(names[i], name) == 0) return 1;
    return 0;
}

/* The sniffed schema. */
typedef struct Schema {
    int ncols;
    char **names;
    CatType *types;
    int *prec, *scale;
    int *sniffed; /* 1: the type was inferred (may widen on a later value) */
    int header;
    char delim;
} Schema;

static void schema_free(Schema *s) {
    for (int i = 0; s->names && i < s->ncols; i++)
        free(s->names[i]);
    free(s->names);
    free(s->types);
    free(s->prec);
    free(s->scale);
    free(s->sniffed);
    memset(s, 0, sizeof *s);
}

/* Make the column names unique (DuckDB: name_1, name_2, ... in any case)
 * and give empty ones column<i>. Returns 0 or -1 (out of memory). */
static int unique_names(Schema *s) {
    for (int i = 0; i < s->ncols; i++) {
        char *nm = s->names[i];
        if (!*nm) {
            char buf[32];
            snprintf(buf, sizeof buf, "column%d", i);
            free(nm);
            if (!(nm = s->names[i] = strdup(buf))) return -1;
        }
        if (!name_taken(s->names, i, nm)) continue;
        size_t len = strlen(nm) + 24;
        char *u = malloc(len);
        if (!u) return -1;
        for (int k = 1;; k++) {
            snprintf(u, len, "%s_%d", nm, k);
            if (!name_taken(s->names, i, u)) break;
        }
        free(nm);
        s->names[i] = u;
    }
    return 0;
}

/* Set column i's type from a type name given by the user. */
static int given_type(Schema *s, int i, const char *tname, CatError *err) {
    CatType t;
    int p = 0, sc = 0;
    if (cat_type_parse_dec(tname, &t, &p, &sc) != 0)
        return cat_err(err, "read_csv: unknown type '%s' for column '%s'%s", tname, s->names[i],
                       cat_type_hint(tname));
    s->types[i] = t;
    s->prec[i] = p;
    s->scale[i] = sc;
    s->sniffed[i] = 0;
    return 0;
}

/* Sniff sm into s (see the header comment), applying o's given header,
 * columns and types. Returns 0 or -1 with err set. */
static int sniff(const Sample *sm0, const CatCsvOpts *o, const char *path, Schema *s,
                 CatError *err) {
    Sample smv = *sm0;
    Sample *sm = &smv;
    memset(s, 0, sizeof *s);
    if (pick_delim(sm, o, &s->delim, err) != 0) return -1;
    int mode;
    int64_t same, nrows;
    if (dialect_score(sm, s->delim, &mode, &same, &nrows) != 0)
        return cat_err(err, "out of memory sniffing the file");
    if (nrows == 0) return cat_err(err, "%s: the file is empty (no rows)", path);
    int nc = mode;
    if (nc > SNIFF_MAX_COLS)
        return cat_err(err, "%s: too many columns (%d; at most %d)", path, nc, SNIFF_MAX_COLS);
    s->ncols = nc;
    s->names = calloc((size_t)nc, sizeof *s->names);
    s->types = calloc((size_t)nc, sizeof *s->types);
    s->prec = calloc((size_t)nc, sizeof *s->prec);
    s->scale = calloc((size_t)nc, sizeof *s->scale);
    s->sniffed = calloc((size_t)nc, sizeof *s->sniffed);
    int *kind = calloc((size_t)nc, sizeof *kind), *kind0 = calloc((size_t)nc, sizeof *kind0);
    Field *f = malloc(sizeof *f * (size_t)nc), *f0 = malloc(sizeof *f0 * (size_t)nc);
    int rc = -1;
    if (!s->names || !s->types || !s->prec || !s->scale || !s->sniffed || !kind || !kind0 || !f ||
        !f0) {
        cat_err(err, "out of memory sniffing the file");
        goto done;
    }
    /* kinds of row 1 (kind0) and of the rows below (kind) */
    const char *p = sm->buf + sm->body, *end = sm->buf + sm->len;
    int64_t r = 0;
    int have0 = 0;
    while (p < end && r < CAT_SNIFF_ROWS) {
        const char *q = cat_text_row_end(p, end, sm->quoting, s->delim);
        if (!blank(p, q)) {
            Field *g = r == 0 ? f0 : f;
            int n = split_fields(sm, p, q, s->delim, g, nc);
            if (r == 0) have0 = n;
            if (n == nc)
                for (int c = 0; c < nc; c++) {
                    int k = classify(o, g[c].s, g[c].n);
                    if (r == 0)
                        kind0[c] = k;
                    else
                        kind[c] = join(kind[c], k);
                }
            r++;
        }
        p = q < end ? q + 1 : end;
    }
    int header = 0;
    if (o->header >= 0) {
        header = o->header;
    } else if (o->format != CAT_FMT_TBL && have0 == nc) {
        int misfit = 0, all_text = 1;
        for (int c = 0; c < nc; c++) {
            if (kind[c] != K_NULL && kind[c] != K_STRING && kind0[c] != K_NULL &&
                join(kind[c], kind0[c]) != kind[c])
                misfit = 1;
            if (kind[c] != K_STRING &&
                !(kind[c] == K_NULL && (kind0[c] == K_NULL || kind0[c] == K_STRING)))
                all_text = 0;
        }
        header = misfit || all_text;
    }
    s->header = header;
    for (int c = 0; c < nc; c++) {
        int k = header ? kind[c] : join(kind[c], kind0[c]);
        s->types[c] = kind_type(k);
        s->sniffed[c] = s->types[c] != CAT_STRING;
        if (header && c < have0) {
            s->names[c] = field_name(&f0[c]);
        } else {
            char buf[32];
            int width = snprintf(NULL, 0, "%d", nc - 1);
            snprintf(buf, sizeof buf, "column%0*d", width, c);
            s->names[c] = strdup(buf);
        }
        if (!s->names[c]) {
            cat_err(err, "out of memory sniffing the file");
            goto done;
        }
    }
    if (unique_names(s) != 0) {
        cat_err(err, "out of memory sniffing the file");
        goto done;
    }
    if (o->ncols > 0) {
        if (o->ncols != nc) {
            cat_err(err, "%s: columns names %d columns, but the file has %d (delimiter '%s')", path,
                    o->ncols, nc, s->delim == '\t' ? "\\t" : (char[2]){s->delim, 0});
            goto done;
        }
        for (int c = 0; c < nc; c++) {
            char *nm = strdup(o->col_names[c]);
            if (!nm) {
                cat_err(err, "out of memory");
                goto done;
            }
            free(s->names[c]);
            s->names[c] = nm;
            if (given_type(s, c, o->col_types[c], err) != 0) goto done;
        }
    }
    for (int t = 0; t < o->ntypes; t++) {
        int c = t;
        if (o->type_names) {
            for (c = 0; c < nc && strcasecmp(s->names[c], o->type_names[t]) != 0; c++)
                ;
            if (c == nc) {
                cat_err(err, "read_csv: types names column '%s', which the file does not have",
                        o->type_names[t]);
                goto done;
            }
        } else if (c >= nc) {
            cat_err(err, "read_csv: types lists %d types for %d columns", o->ntypes, nc);
            goto done;
        }
        if (given_type(s, c, o->type_types[t], err) != 0) goto done;
    }
    rc = 0;
done:
    free(kind);
    free(kind0);
    free(f);
    free(f0);
    if (rc != 0) schema_free(s);
    return rc;
}

int cat_load_csv_auto(Catalog *cat, const char *name, const char *path, const CatCsvOpts *o,
                      CatCsvInfo *info, CatError *err) {
    Sample sm = {0};
    if (read_sample(path, &sm, err) != 0) return -1;
    sm.quoting = o->format == CAT_FMT_CSV && memchr(sm.buf, '"', sm.len) != NULL;
    sm.trailing = o->format == CAT_FMT_TBL;
    Schema s;
    int rc = sniff(&sm, o, path, &s, err);
    cat_host_free(sm.buf);
    if (rc != 0) return -1;
    static const char *const empty[] = {""};
    int bad = -1;
    CatTextOpts text = {o->nnulls ? o->nulls : empty, o->nnulls ? o->nnulls : 1, s.header,
                        s.ncols == 1 && o->format == CAT_FMT_CSV, &bad};
    CatTableDef def = {
        name,    path,   o->format, 0,     s.delim, s.ncols, (const char *const *)s.names,
        s.types, s.prec, s.scale,   &text, NULL,    NULL,    0};
    int retries = 0;
    for (;;) {
        if (cat_load_table(cat, &def, err) == 0) {
            rc = 0;
            break;
        }
        rc = -1;
        if (bad < 0 || bad >= s.ncols || !s.sniffed[bad]) break;
        /* a value past the sample does not fit: widen the column, read again */
        s.types[bad] = s.types[bad] == CAT_INT64 ? CAT_FLOAT64 : CAT_STRING;
        s.sniffed[bad] = s.types[bad] != CAT_STRING;
        retries++;
    }
    if (rc == 0 && info) {
        info->delim = s.delim;
        info->header = s.header;
        info->retries = retries;
    }
    schema_free(&s);
    return rc;
}
