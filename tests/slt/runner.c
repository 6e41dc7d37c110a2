/*
 * runner.c -- a sqllogictest runner over libgqp (its public API, and its
 * allocation fault injection test hook).
 *
 *   gqp_slt [--device cpu|gpu|auto] [--show N] [--verbose]
 *           [--memory-limit SIZE] [--fail-alloc host|device[:TRIES]] FILE...
 *
 * Format (see ../shared/slt/README.md): records separated by blank lines;
 * `statement ok|error` + SQL; `query <types> [nosort|rowsort|valuesort]
 * [label]` + SQL + `----` + one value per line (or one row per line, values
 * separated by spaces) or `N values hashing to <md5>`; `hash-threshold N`;
 * `skipif <db>` / `onlyif <db>` guards (this runner acts as `sqlite`);
 * `halt`; `#` comments; CRLF or LF line endings.
 *
 * Values are formatted as sqllogictest does: I integer (reals truncated
 * toward zero, text parsed as a number prefix, else 0), R "%.3f", T text with
 * bytes outside ' '..'~' shown as '@'; NULL prints "NULL", an empty string
 * "(empty)". Every file runs on a fresh empty database. The device comes
 * from --device, else $GQP_SLT_DEVICE, else auto.
 *
 * --memory-limit runs `SET memory_limit = 'SIZE'` on every file's database.
 * --fail-alloc (tests of the out-of-memory paths; libgqp's test hook
 * gqp_test_fail_alloc): every query that passed is run again with the
 * N-th host (or device) allocation failing, for up to TRIES (default 6)
 * values of N spread over the allocations its normal run made (a device
 * allocation also failing from the N-th on); each such run must answer as
 * the normal run did, or fail with an out-of-memory error where that is
 * allowed (host: always; device: only under --device gpu without
 * GQP_OOM_FALLBACK=1, since auto recovers).
 *
 * Output: each failure as file:line, the SQL and expected vs got (the first
 * --show N, default 10, per file in full), then per file "N records, P passed, F
 * failed, S skipped". Exit status 1 if any record failed or a file could not
 * be read, else 0.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strdup, stat, clock_gettime */
#endif
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gqp.h"
#include "libgqp/internal.h" /* gqp_test_fail_alloc, gqp_test_alloc_count */

#define MAX_SHOWN_VALUES 8 /* values listed around a first difference */

/* Failures printed in full per file (--show N). */
static int64_t max_reported = 10;
/* --memory-limit SIZE, or NULL. */
static const char *memory_limit;

/* ---------------------------------------------------------------- MD5 ---- */
/* RFC 1321 MD5, enough to check "values hashing to" records. */

typedef struct Md5 {
    uint32_t a, b, c, d;
    uint64_t nbytes;
    unsigned char buf[64];
    size_t nbuf;
} Md5;

static const uint32_t MD5_K[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
static const int MD5_R[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                              5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                              4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                              6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

/* Reset m to the MD5 initial state. */
static void md5_init(Md5 *m) {
    m->a = 0x67452301;
    m->b = 0xefcdab89;
    m->c = 0x98badcfe;
    m->d = 0x10325476;
    m->nbytes = 0;
    m->nbuf = 0;
}

/* Fold one 64-byte block into the state. */
static void md5_block(Md5 *m, const unsigned char *p) {
    uint32_t w[16], a = m->a, b = m->b, c = m->c, d = m->d;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
               (uint32_t)p[4 * i + 3] << 24;
    for (int i = 0; i < 64; i++) {
        uint32_t f;
        int g;
        if (i < 16) {
            f = (b & c) | (~b & d);
            g = i;
        } else if (i < 32) {
            f = (d & b) | (~d & c);
            g = (5 * i + 1) % 16;
        } else if (i < 48) {
            f = b ^ c ^ d;
            g = (3 * i + 5) % 16;
        } else {
            f = c ^ (b | ~d);
            g = (7 * i) % 16;
        }
        uint32_t t = d;
        d = c;
        c = b;
        uint32_t x = a + f + MD5_K[i] + w[g];
        b = b + (x << MD5_R[i] | x >> (32 - MD5_R[i]));
        a = t;
    }
    m->a += a;
    m->b += b;
    m->c += c;
    m->d += d;
}

/* Append n bytes of data to the hash. */
static void md5_update(Md5 *m, const void *data, size_t n) {
    const unsigned char *p = data;
    m->nbytes += n;
    while (n > 0) {
        size_t take = 64 - m->nbuf < n ? 64 - m->nbuf : n;
        memcpy(m->buf + m->nbuf, p, take);
        m->nbuf += take;
        p += take;
        n -= take;
        if (m->nbuf == 64) {
            md5_block(m, m->buf);
            m->nbuf = 0;
        }
    }
}

/* Finish the hash and write it as 32 lower-case hex digits + NUL into hex. */
static void md5_final(Md5 *m, char hex[33]) {
    uint64_t bits = m->nbytes * 8;
    unsigned char pad = 0x80, zero = 0, len[8];
    md5_update(m, &pad, 1);
    while (m->nbuf != 56)
        md5_update(m, &zero, 1);
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (8 * i));
    md5_update(m, len, 8);
    uint32_t s[4] = {m->a, m->b, m->c, m->d};
    for (int i = 0; i < 16; i++)
        sprintf(hex + 2 * i, "%02x", (s[i / 4] >> (8 * (i % 4))) & 0xff);
}

/* ------------------------------------------------------------ helpers ---- */

/* A growable array of malloc'd strings. */
typedef struct StrVec {
    char **v;
    size_t n, cap;
} StrVec;

/* Append a copy of s (len bytes) to sv; exits on allocation failure (a test
 * runner has nothing better to do). */
static void sv_push(StrVec *sv, const char *s, size_t len) {
    if (sv->n == sv->cap) {
        sv->cap = sv->cap ? sv->cap * 2 : 16;
        sv->v = realloc(sv->v, sv->cap * sizeof(char *));
        if (!sv->v) {
            fputs("gqp_slt: out of memory\n", stderr);
            exit(2);
        }
    }
    char *c = malloc(len + 1);
    if (!c) {
        fputs("gqp_slt: out of memory\n", stderr);
        exit(2);
    }
    memcpy(c, s, len);
    c[len] = '\0';
    sv->v[sv->n++] = c;
}

/* Free every string of sv and reset it to empty. */
static void sv_clear(StrVec *sv) {
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

/* qsort comparator over char* elements. */
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read the whole file at path into a malloc'd NUL-terminated buffer (caller
 * frees), or NULL if it cannot be read. */
static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (buf) buf[len] = '\0';
    fclose(f);
    return buf;
}

/* Split text into lines in place (LF or CRLF, trailing CR removed); fills
 * *lines with pointers into text. Returns the line count. */
static size_t split_lines(char *text, char ***lines) {
    size_t n = 0, cap = 1024;
    char **v = malloc(cap * sizeof(char *));
    char *p = text;
    while (v && *p) {
        char *nl = strchr(p, '\n');
        if (n == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof(char *));
            if (!v) break;
        }
        v[n++] = p;
        if (nl) *nl = '\0';
        size_t len = strlen(p);
        if (len > 0 && p[len - 1] == '\r') p[len - 1] = '\0';
        if (!nl) break;
        p = nl + 1;
    }
    if (!v) {
        fputs("gqp_slt: out of memory\n", stderr);
        exit(2);
    }
    *lines = v;
    return n;
}

/* 1 if line holds only whitespace. */
static int is_blank(const char *s) {
    for (; *s; s++)
        if (!isspace((unsigned char)*s)) return 0;
    return 1;
}

/* Split line s into at most max whitespace-separated words written into
 * w[] as pointers into s (s is modified). Returns the word count. */
static int split_words(char *s, char **w, int max) {
    int n = 0;
    while (*s && n < max) {
        while (*s && isspace((unsigned char)*s))
            s++;
        if (!*s) break;
        w[n++] = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        if (*s) *s++ = '\0';
    }
    return n;
}

/* Integer value of text as SQLite's sqlite3_column_int64 would read it: the
 * longest numeric prefix after leading spaces, reals truncated, else 0. */
static int64_t text_to_int(const char *s) {
    char *end;
    double d = strtod(s, &end);
    if (end == s) return 0;
    const char *q = s;
    while (isspace((unsigned char)*q))
        q++;
    if (*q == '+' || *q == '-') q++;
    size_t digits = strspn(q, "0123456789");
    if (q + digits == end) /* a pure integer: keep every digit exact */
        return (int64_t)strtoll(s, NULL, 10);
    if (!(d >= -9.2e18 && d <= 9.2e18)) return d < 0 ? INT64_MIN : INT64_MAX;
    return (int64_t)d;
}

/* Format column c of the current row for sqllogictest type letter t into a
 * new malloc'd string (caller frees). */
static char *format_value(gqp_stmt *st, int c, char t) {
    char buf[400]; /* "%.3f" of a double up to 1.8e308: 309 digits + ".000" */
    if (gqp_column_is_null(st, c)) return strdup("NULL");
    gqp_type ct = gqp_column_type(st, c);
    const char *txt = gqp_column_text(st, c);
    if (!txt) return strdup("NULL");
    if (t == 'I') {
        int64_t v;
        if (ct == GQP_TYPE_STRING || ct == GQP_TYPE_DATE)
            v = text_to_int(txt);
        else if (ct == GQP_TYPE_FLOAT32 || ct == GQP_TYPE_FLOAT64) {
            double d = gqp_column_double(st, c);
            v = (d >= -9.2e18 && d <= 9.2e18) ? (int64_t)d : (d < 0 ? INT64_MIN : INT64_MAX);
        } else
            v = gqp_column_int64(st, c);
        snprintf(buf, sizeof buf, "%" PRId64, v);
        return strdup(buf);
    }
    if (t == 'R') {
        double d = (ct == GQP_TYPE_STRING || ct == GQP_TYPE_DATE) ? strtod(txt, NULL)
                                                                  : gqp_column_double(st, c);
        snprintf(buf, sizeof buf, "%.3f", d);
        return strdup(buf);
    }
    if (*txt == '\0') return strdup("(empty)");
    char *s = strdup(txt);
    for (char *p = s; p && *p; p++)
        if (*p < ' ' || *p > '~') *p = '@';
    return s;
}

/* ------------------------------------------------------------- runner ---- */

/* Per-file state. */
typedef struct FileRun {
    const char *path;
    gqp *db;
    int64_t hash_threshold;
    int64_t records, passed, failed, skipped;
    int verbose;
    StrVec label_names, label_hashes; /* label -> md5 of its first result */
} FileRun;

/* Print the header of a failure report for the record at line (the first
 * max_reported per file; later ones are only counted). Returns 1 if the
 * details should be printed too. */
static int fail_header(FileRun *fr, int64_t line, const char *sql, const char *why) {
    fr->failed++;
    if (fr->failed > max_reported) {
        if (fr->failed == max_reported + 1)
            printf("%s: more failures follow, not shown\n", fr->path);
        return 0;
    }
    printf("FAIL %s:%" PRId64 ": %s\n  SQL: %s\n", fr->path, line, why, sql);
    return 1;
}

/* Print up to MAX_SHOWN_VALUES values of v starting at from, prefixed. */
static void show_values(const char *prefix, const StrVec *v, size_t from) {
    printf("  %s (%zu values):", prefix, v->n);
    for (size_t i = from; i < v->n && i < from + MAX_SHOWN_VALUES; i++)
        printf(" [%s]", v->v[i]);
    if (v->n > from + MAX_SHOWN_VALUES) printf(" ...");
    printf("\n");
}

/* Prepare and step sql to completion, discarding rows. Returns GQP_OK or
 * the failing code. */
static int exec_all(gqp *db, const char *sql) {
    gqp_stmt *st = NULL;
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    if (rc != GQP_OK) return rc;
    if (!st) return GQP_OK;
    while ((rc = gqp_step(st)) == GQP_ROW)
        ;
    gqp_finalize(st);
    return rc == GQP_DONE ? GQP_OK : rc;
}

/* Run a `statement ok|error` record. */
static void run_statement(FileRun *fr, int64_t line, const char *sql, int expect_ok) {
    int rc = exec_all(fr->db, sql);
    if ((rc == GQP_OK) == expect_ok) {
        fr->passed++;
        return;
    }
    if (expect_ok) {
        if (fail_header(fr, line, sql, "statement failed"))
            printf("  error: %s\n", gqp_errmsg(fr->db));
    } else {
        fail_header(fr, line, sql, "statement succeeded but an error was expected");
    }
}

/* Hash the values of v (each followed by "\n") into hex. */
static void hash_values(const StrVec *v, char hex[33]) {
    Md5 m;
    md5_init(&m);
    for (size_t i = 0; i < v->n; i++) {
        md5_update(&m, v->v[i], strlen(v->v[i]));
        md5_update(&m, "\n", 1);
    }
    md5_final(&m, hex);
}

/* Columns per row for cmp_row (qsort has no context argument). */
static int slt_row_ncols;
/* qsort comparator over rows (char ** of slt_row_ncols strings): strcmp
 * column by column. */
static int cmp_row(const void *a, const void *b) {
    char **ra = *(char **const *)a, **rb = *(char **const *)b;
    for (int c = 0; c < slt_row_ncols; c++) {
        int d = strcmp(ra[c], rb[c]);
        if (d) return d;
    }
    return 0;
}

/* Outcomes of fetch() besides GQP_DONE and an error code of the step. */
#define FETCH_NOPREP (-1000) /* prepare failed (message in gqp_errmsg) */
#define FETCH_NCOLS (-1001)  /* the column count differs from the types */

/* Prepare and run sql, formatting every value as types says into got
 * (rows in *nrows, columns in *ncols) and sorting as sort says. Returns
 * GQP_DONE, FETCH_NOPREP, FETCH_NCOLS or the failing step's code. */
static int fetch(gqp *db, const char *sql, const char *types, const char *sort, StrVec *got,
                 int64_t *nrows_out, int *ncols_out) {
    gqp_stmt *st = NULL;
    int ntypes = (int)strlen(types);
    int rc = gqp_prepare(db, sql, -1, &st, NULL);
    *nrows_out = 0;
    *ncols_out = 0;
    if (rc != GQP_OK || !st) return FETCH_NOPREP;
    int ncols = gqp_column_count(st);
    *ncols_out = ncols;
    if (ncols != ntypes) {
        gqp_finalize(st);
        return FETCH_NCOLS;
    }
    int64_t nrows = 0;
    while ((rc = gqp_step(st)) == GQP_ROW) {
        for (int c = 0; c < ncols; c++) {
            char *s = format_value(st, c, types[c]);
            if (!s) {
                fputs("gqp_slt: out of memory\n", stderr);
                exit(2);
            }
            sv_push(got, s, strlen(s));
            free(s);
        }
        nrows++;
    }
    gqp_finalize(st);
    *nrows_out = nrows;
    if (rc != GQP_DONE) return rc;
    /* Sort as the record asks: rowsort compares rows column by column. */
    if (strcmp(sort, "rowsort") == 0 && ncols > 0 && nrows > 1) {
        /* Sort row pointers; each row is ncols consecutive strings. */
        char ***rows = malloc((size_t)nrows * sizeof(char **));
        char **flat = malloc(got->n * sizeof(char *));
        if (!rows || !flat) {
            fputs("gqp_slt: out of memory\n", stderr);
            exit(2);
        }
        for (int64_t r = 0; r < nrows; r++)
            rows[r] = &got->v[r * ncols];
        slt_row_ncols = ncols;
        qsort(rows, (size_t)nrows, sizeof(char **), cmp_row);
        for (int64_t r = 0; r < nrows; r++)
            memcpy(&flat[r * ncols], rows[r], (size_t)ncols * sizeof(char *));
        memcpy(got->v, flat, got->n * sizeof(char *));
        free(rows);
        free(flat);
    } else if (strcmp(sort, "valuesort") == 0 && got->n > 1) {
        qsort(got->v, got->n, sizeof(char *), cmp_str);
    }
    return GQP_DONE;
}

/* Fault injection (--fail-alloc): 0 host, 1 device, -1 off; the most
 * failing allocations tried per query. */
static int fail_kind = -1;
static int fail_tries = 6;
/* Runs made with an allocation failing, and how many of them failed with
 * an out-of-memory error (reported per file). */
static int64_t injected_runs, injected_ooms;

/* With --fail-alloc: run the query again with the N-th host or device
 * allocation failing (once, and for the device also from the N-th on),
 * for up to fail_tries values of N spread over the allocations its normal
 * run made (count). Each run must give the normal run's values (hash) or,
 * where allowed, fail with an out-of-memory error: a host failure may fail
 * the query; a device one may only under --device gpu. */
static void run_injected(FileRun *fr, int64_t line, const char *types, const char *sort,
                         const char *sql, int64_t count, const char *hex, gqp_device device) {
    if (count <= 0) return;
    int tries = fail_tries < 1 ? 1 : fail_tries;
    int64_t prev = 0;
    for (int t = 0; t < tries; t++) {
        int64_t n = tries == 1 || count == 1 ? 1 : 1 + (count - 1) * t / (tries - 1);
        if (n == prev) continue;
        prev = n;
        for (int sticky = 0; sticky <= fail_kind; sticky++) {
            StrVec got = {0};
            int64_t nrows;
            int ncols;
            gqp_test_fail_alloc(fr->db, fail_kind, n, sticky);
            int rc = fetch(fr->db, sql, types, sort, &got, &nrows, &ncols);
            gqp_test_fail_alloc(fr->db, fail_kind, 0, 0);
            injected_runs++;
            char why[160];
            snprintf(why, sizeof why, "with the %s allocation %lld%s failing",
                     fail_kind ? "device" : "host", (long long)n, sticky ? " and later ones" : "");
            if (rc == GQP_DONE) {
                char h2[33];
                hash_values(&got, h2);
                if (strcmp(h2, hex) != 0 && fail_header(fr, line, sql, "result differs"))
                    printf("  %s\n", why);
            } else {
                const char *m = gqp_errmsg(fr->db);
                int oom = strstr(m, "out of memory") || strstr(m, "out of device memory");
                const char *fb = getenv("GQP_OOM_FALLBACK");
                int allowed =
                    fail_kind == 0 || (device == GQP_DEVICE_GPU && !(fb && strcmp(fb, "1") == 0));
                injected_ooms += oom;
                if ((!oom || !allowed) && fail_header(fr, line, sql, "query failed"))
                    printf("  %s: %s\n", why, m);
            }
            sv_clear(&got);
        }
    }
}

/* Run a `query` record: types, sort mode, optional label, SQL and the
 * expected lines (NULL when the record has no "----"). */
static void run_query(FileRun *fr, int64_t line, const char *types, const char *sort,
                      const char *label, const char *sql, char **exp, size_t nexp, int has_exp,
                      gqp_device device) {
    StrVec got = {0};
    int64_t nrows = 0;
    int ncols = 0;
    if (fail_kind >= 0) gqp_test_fail_alloc(fr->db, fail_kind, 0, 0);
    int rc = fetch(fr->db, sql, types, sort, &got, &nrows, &ncols);
    int64_t count = fail_kind >= 0 ? gqp_test_alloc_count(fr->db, fail_kind) : 0;
    if (rc == FETCH_NOPREP) {
        if (fail_header(fr, line, sql, "query failed to prepare"))
            printf("  error: %s\n", gqp_errmsg(fr->db));
        sv_clear(&got);
        return;
    }
    if (rc == FETCH_NCOLS) {
        if (fail_header(fr, line, sql, "column count differs from the type string"))
            printf("  types '%s' but the query has %d columns\n", types, ncols);
        sv_clear(&got);
        return;
    }
    if (rc != GQP_DONE) {
        if (fail_header(fr, line, sql, "query failed while running"))
            printf("  error: %s\n", gqp_errmsg(fr->db));
        sv_clear(&got);
        return;
    }
    char hex[33];
    hash_values(&got, hex);
    int ok = 1;
    if (has_exp) {
        unsigned long long nv;
        char hv[64];
        if (nexp == 1 && sscanf(exp[0], "%llu values hashing to %63s", &nv, hv) == 2) {
            if (nv != (unsigned long long)got.n || strcmp(hv, hex) != 0) {
                ok = 0;
                if (fail_header(fr, line, sql, "result differs (hashed)")) {
                    printf("  expected: %llu values hashing to %s\n", nv, hv);
                    printf("  got:      %zu values hashing to %s\n", got.n, hex);
                    show_values("got", &got, 0);
                }
            }
        } else {
            /* One value per line; or one row per line, values separated by
             * single spaces/tabs. */
            int same = nexp == got.n;
            for (size_t i = 0; same && i < nexp; i++)
                same = strcmp(exp[i], got.v[i]) == 0;
            if (!same && ncols > 1 && nexp == (size_t)nrows) {
                same = 1;
                for (int64_t r = 0; same && r < nrows; r++) {
                    char rowbuf[4096];
                    size_t pos = 0;
                    for (int c = 0; c < ncols; c++)
                        pos += (size_t)snprintf(rowbuf + pos,
                                                pos < sizeof rowbuf ? sizeof rowbuf - pos : 0,
                                                c ? " %s" : "%s", got.v[r * ncols + c]);
                    for (char *q = exp[r]; *q; q++)
                        if (*q == '\t') *q = ' ';
                    same = pos < sizeof rowbuf && strcmp(rowbuf, exp[r]) == 0;
                }
            }
            if (!same) {
                ok = 0;
                if (fail_header(fr, line, sql, "result differs")) {
                    size_t first = 0;
                    while (first < nexp && first < got.n && strcmp(exp[first], got.v[first]) == 0)
                        first++;
                    StrVec ev = {exp, nexp, nexp};
                    printf("  first difference at value %zu (row %zu)\n", first + 1,
                           ncols ? first / (size_t)ncols + 1 : 0);
                    size_t from = first > 2 ? first - 2 : 0;
                    show_values("expected", &ev, from);
                    show_values("got     ", &got, from);
                }
            }
        }
    }
    if (ok && label) {
        size_t i;
        for (i = 0; i < fr->label_names.n; i++)
            if (strcmp(fr->label_names.v[i], label) == 0) break;
        if (i == fr->label_names.n) {
            sv_push(&fr->label_names, label, strlen(label));
            sv_push(&fr->label_hashes, hex, strlen(hex));
        } else if (strcmp(fr->label_hashes.v[i], hex) != 0) {
            ok = 0;
            if (fail_header(fr, line, sql, "result differs from an earlier query with the label"))
                printf("  label %s: expected hash %s, got %s\n", label, fr->label_hashes.v[i], hex);
        }
    }
    if (ok && fail_kind >= 0) {
        int64_t before = fr->failed;
        run_injected(fr, line, types, sort, sql, count, hex, device);
        ok = fr->failed == before;
    }
    if (ok) fr->passed++;
    sv_clear(&got);
}

/* 1 if a skipif/onlyif guard names this runner's engine. */
static int is_our_engine(const char *name) {
    return strcmp(name, "sqlite") == 0;
}

/* Run every record of one file on a fresh database. Returns 0 if all
 * passed, 1 otherwise. */
static int run_file(const char *path, gqp_device device, int verbose) {
    char *text = read_file(path);
    if (!text) {
        printf("%s: cannot read\n", path);
        return 1;
    }
    char **lines;
    size_t nlines = split_lines(text, &lines);
    FileRun fr = {0};
    fr.path = path;
    fr.verbose = verbose;
    fr.hash_threshold = 0;
    if (gqp_open(NULL, &fr.db) != GQP_OK || !fr.db) {
        printf("%s: gqp_open failed: %s\n", path, fr.db ? gqp_errmsg(fr.db) : "out of memory");
        gqp_close(fr.db);
        free(lines);
        free(text);
        return 1;
    }
    if (gqp_set_device(fr.db, device) != GQP_OK) {
        printf("%s: cannot set device: %s\n", path, gqp_errmsg(fr.db));
        gqp_close(fr.db);
        free(lines);
        free(text);
        return 1;
    }
    if (memory_limit) {
        char set[128];
        snprintf(set, sizeof set, "SET memory_limit = '%s'", memory_limit);
        if (exec_all(fr.db, set) != GQP_OK) {
            printf("%s: %s: %s\n", path, set, gqp_errmsg(fr.db));
            gqp_close(fr.db);
            free(lines);
            free(text);
            return 1;
        }
    }
    size_t i = 0;
    int halted = 0;
    while (i < nlines && !halted) {
        if (is_blank(lines[i]) || lines[i][0] == '#') {
            i++;
            continue;
        }
        /* Guards. */
        int skip = 0;
        while (i < nlines &&
               (strncmp(lines[i], "skipif ", 7) == 0 || strncmp(lines[i], "onlyif ", 7) == 0)) {
            char tmp[256], *w[2];
            snprintf(tmp, sizeof tmp, "%s", lines[i]);
            if (split_words(tmp, w, 2) == 2) {
                int ours = is_our_engine(w[1]);
                if ((w[0][0] == 's' && ours) || (w[0][0] == 'o' && !ours)) skip = 1;
            }
            i++;
        }
        if (i >= nlines) break;
        int64_t line = (int64_t)i + 1;
        char head[512], *w[8];
        snprintf(head, sizeof head, "%s", lines[i]);
        int nw = split_words(head, w, 8);
        i++;
        if (nw == 0) continue;
        if (strcmp(w[0], "halt") == 0) {
            if (!skip) halted = 1;
            continue;
        }
        if (strcmp(w[0], "hash-threshold") == 0) {
            if (nw > 1) fr.hash_threshold = strtoll(w[1], NULL, 10);
            continue;
        }
        if (strcmp(w[0], "statement") != 0 && strcmp(w[0], "query") != 0) {
            printf("%s:%" PRId64 ": unknown record '%s', skipping it\n", path, line, w[0]);
            while (i < nlines && !is_blank(lines[i]))
                i++;
            continue;
        }
        /* Collect SQL lines up to "----" or a blank line. */
        size_t sql_len = 0, sql_start = i;
        while (i < nlines && !is_blank(lines[i]) && strcmp(lines[i], "----") != 0)
            sql_len += strlen(lines[i++]) + 1;
        char *sql = malloc(sql_len + 1);
        if (!sql) {
            fputs("gqp_slt: out of memory\n", stderr);
            exit(2);
        }
        sql[0] = '\0';
        for (size_t k = sql_start, pos = 0; k < i; k++) {
            size_t l = strlen(lines[k]);
            memcpy(sql + pos, lines[k], l);
            pos += l;
            sql[pos++] = k + 1 < i ? '\n' : '\0';
        }
        int has_exp = 0;
        size_t exp_start = i, nexp = 0;
        if (i < nlines && strcmp(lines[i], "----") == 0) {
            has_exp = 1;
            exp_start = ++i;
            while (i < nlines && !is_blank(lines[i]))
                i++;
            nexp = i - exp_start;
        }
        fr.records++;
        if (skip) {
            fr.skipped++;
        } else if (strcmp(w[0], "statement") == 0) {
            if (verbose) printf("%s:%" PRId64 ": statement\n", path, line);
            run_statement(&fr, line, sql, nw > 1 && strcmp(w[1], "ok") == 0);
        } else {
            const char *types = nw > 1 ? w[1] : "";
            const char *sort = nw > 2 ? w[2] : "nosort";
            const char *label = nw > 3 ? w[3] : NULL;
            if (verbose) printf("%s:%" PRId64 ": query\n", path, line);
            run_query(&fr, line, types, sort, label, sql, lines + exp_start, nexp, has_exp, device);
        }
        free(sql);
        fflush(stdout);
    }
    printf("%s: %" PRId64 " records, %" PRId64 " passed, %" PRId64 " failed, %" PRId64
           " skipped%s\n",
           path, fr.records, fr.passed, fr.failed, fr.skipped, halted ? " (halted)" : "");
    if (fail_kind >= 0)
        printf("%s: %" PRId64 " runs with a %s allocation failing, %" PRId64
               " of them failed with an out-of-memory error\n",
               path, injected_runs, fail_kind ? "device" : "host", injected_ooms);
    injected_runs = injected_ooms = 0;
    gqp_close(fr.db);
    sv_clear(&fr.label_names);
    sv_clear(&fr.label_hashes);
    free(lines);
    free(text);
    return fr.failed > 0;
}

/* Parse a device name; -1 if unknown. */
static int parse_device(const char *s, gqp_device *out) {
    if (strcmp(s, "cpu") == 0)
        *out = GQP_DEVICE_CPU;
    else if (strcmp(s, "gpu") == 0)
        *out = GQP_DEVICE_GPU;
    else if (strcmp(s, "auto") == 0)
        *out = GQP_DEVICE_AUTO;
    else
        return -1;
    return 0;
}

/* Run every file named on the command line. Returns 0 if all passed, 1 if
 * any record failed, 2 on usage errors. */
int main(int argc, char **argv) {
    gqp_device device = GQP_DEVICE_AUTO;
    int verbose = 0, nfiles = 0, status = 0;
    const char *env = getenv("GQP_SLT_DEVICE");
    if (env && *env && parse_device(env, &device) != 0) {
        fprintf(stderr, "gqp_slt: GQP_SLT_DEVICE must be cpu, gpu or auto, not '%s'\n", env);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            if (parse_device(argv[++i], &device) != 0) {
                fprintf(stderr, "gqp_slt: --device must be cpu, gpu or auto\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--show") == 0 && i + 1 < argc) {
            max_reported = strtoll(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
            verbose = 1;
        } else if (strcmp(argv[i], "--memory-limit") == 0 && i + 1 < argc) {
            memory_limit = argv[++i];
        } else if (strcmp(argv[i], "--fail-alloc") == 0 && i + 1 < argc) {
            const char *k = argv[++i];
            fail_kind = strncmp(k, "host", 4) == 0 ? 0 : strncmp(k, "device", 6) == 0 ? 1 : -2;
            const char *c = strchr(k, ':');
            if (c) fail_tries = atoi(c + 1);
            if (fail_kind == -2 || fail_tries < 1) {
                fprintf(stderr, "gqp_slt: --fail-alloc must be host or device, with :TRIES >= 1\n");
                return 2;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: gqp_slt [--device cpu|gpu|auto] [--show N] [--verbose] "
                            "[--memory-limit SIZE] "
                            "[--fail-alloc host|device[:TRIES]] FILE...\n");
            return 2;
        } else {
            nfiles++;
        }
    }
    if (nfiles == 0) {
        fprintf(
            stderr,
            "usage: gqp_slt [--device cpu|gpu|auto] [--show N] [--verbose] [--memory-limit SIZE] "
            "[--fail-alloc host|device[:TRIES]] FILE...\n");
        return 2;
    }
    /* --device gpu (or device fault injection, or a device memory limit)
     * where no GPU is usable: the run is skipped, not failed (exit 77,
     * ctest's SKIP_RETURN_CODE) */
    if ((device == GQP_DEVICE_GPU || fail_kind == 1 || memory_limit) && !gqp_gpu_available()) {
        printf("gqp_slt: no usable GPU; skipped\n");
        return 77;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 || strcmp(argv[i], "--show") == 0 ||
            strcmp(argv[i], "--memory-limit") == 0 || strcmp(argv[i], "--fail-alloc") == 0) {
            i++;
            continue;
        }
        if (argv[i][0] == '-') continue;
        status |= run_file(argv[i], device, verbose);
    }
    return status;
}
