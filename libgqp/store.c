/*
 * store.c -- a persistent database: gqp_open() of a directory.
 *
 *   DIR/gqp.catalog   the catalog: every table (its folder, row count,
 *                     columns, indexes) and every view, as text (below)
 *   DIR/t<N>/         one table's binary-column folder (load_binary.c's
 *                     format), its columns' files named c0.bin, c0.valid,
 *                     c0.dict / c0.dict0, c0.stats, c1.bin, ...
 *
 * A statement that changes a stored table writes the table as a NEW
 * folder t<N> (columns it did not change are hard links to the old
 * folder's files), fsyncs its files and the folder, then writes the new
 * catalog as gqp.catalog.tmp, fsyncs it and renames it over gqp.catalog
 * (the commit), fsyncs DIR, and only then removes the folder no longer
 * named. A process killed at any instant leaves gqp.catalog naming either
 * the old folders or the new ones, all complete; opening sweeps folders
 * the catalog does not name and a left-over gqp.catalog.tmp. When a step
 * before the rename fails (disk full, read-only directory), memory is put
 * back to the stored state and the statement reports the error.
 *
 * Opening reads the catalog and checks each column file's size, reading
 * no data: columns are mapped on first use (cat_column_use), so opening a
 * large database costs milliseconds. The directory is locked (flock) for
 * the handle's life: a second process opening it gets an error.
 *
 * Catalog text: lines of space-separated tokens; a token's bytes at or
 * below ' ', '\' and DEL are written \xHH, an empty token as \e:
 *
 *   gqp-catalog 1
 *   next N                              next folder number
 *   table NAME FOLDER NROWS NCOLS NIDX  then NCOLS column and NIDX index lines
 *   column NAME TYPE PREC SCALE
 *   index NAME UNIQUE NCOLS COL...      COL: column positions
 *   view NAME SQL NCOLS COLNAME...
 *   end
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libgqp/internal.h"

#define STORE_CATALOG "gqp.catalog"
#define STORE_CATALOG_TMP "gqp.catalog.tmp"

typedef struct StoreCol {
    char *name;
    CatType type;
    int prec, scale;
} StoreCol;

typedef struct StoreIdx {
    char *name;
    int unique, ncols;
    int *cols;
} StoreIdx;

typedef struct StoreTable {
    char *name;
    uint64_t folder; /* DIR/t<folder> */
    int64_t nrows;
    int ncols, nidx;
    StoreCol *cols;
    StoreIdx *idx;
} StoreTable;

typedef struct StoreView {
    char *name, *sql;
    int ncols;
    char **cols;
} StoreView;

/* The committed state: what gqp.catalog says now. */
typedef struct GqpStore {
    char *dir; /* as given, without trailing slashes ("." for "/"-less "") */
    int dirfd; /* open on dir, flock'ed */
    uint64_t next;
    int ntables, nviews;
    StoreTable *tables;
    StoreView *views;
} GqpStore;

/* ------------------------------------------------------------ helpers -- */

/* A growing text buffer. */
typedef struct Buf {
    char *p;
    size_t len, cap;
    int oom;
} Buf;

/* Append n bytes of s to b (b->oom set when memory runs out). */
static void buf_put(Buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *g = realloc(b->p, cap);
        if (!g) {
            b->oom = 1;
            return;
        }
        b->p = g;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/* Append printf-formatted text to b. */
static void buf_fmt(Buf *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        b->oom = 1;
        return;
    }
    buf_put(b, tmp, (size_t)n);
}

/* Append " " and s as one escaped token (see the file comment). */
static void buf_tok(Buf *b, const char *s) {
    buf_put(b, " ", 1);
    if (!*s) {
        buf_put(b, "\\e", 2);
        return;
    }
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= ' ' || c == '\\' || c == 0x7f) {
            char e[5];
            snprintf(e, sizeof e, "\\x%02X", c);
            buf_put(b, e, 4);
        } else {
            buf_put(b, (const char *)s, 1);
        }
    }
}

/* Undo buf_tok's escapes of the token s in place. Returns 0, or -1 when
 * malformed. */
static int unescape(char *s) {
    if (strcmp(s, "\\e") == 0) {
        *s = '\0';
        return 0;
    }
    char *o = s;
    for (const char *p = s; *p; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        if (p[1] != 'x' || !isxdigit((unsigned char)p[2]) || !isxdigit((unsigned char)p[3]))
            return -1;
        char hex[3] = {p[2], p[3], 0};
        int v = (int)strtol(hex, NULL, 16);
        if (v == 0) return -1;
        *o++ = (char)v;
        p += 3;
    }
    *o = '\0';
    return 0;
}

/* Set db's error "Catalog Error: <fmt...>" and return GQP_ERROR. */
static int store_err(gqp *db, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int store_err(gqp *db, const char *fmt, ...) {
    char msg[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gqp_set_error(db, GQP_ERROR, "Catalog Error: %s", msg);
}

/* "<dir>/<name>" malloc'ed, or NULL. */
static char *path2(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

static void idx_free(StoreIdx *x) {
    free(x->name);
    free(x->cols);
}

static void table_free(StoreTable *t) {
    free(t->name);
    for (int i = 0; t->cols && i < t->ncols; i++)
        free(t->cols[i].name);
    free(t->cols);
    for (int i = 0; t->idx && i < t->nidx; i++)
        idx_free(&t->idx[i]);
    free(t->idx);
    memset(t, 0, sizeof *t);
}

static void view_free(StoreView *v) {
    free(v->name);
    free(v->sql);
    for (int i = 0; v->cols && i < v->ncols; i++)
        free(v->cols[i]);
    free(v->cols);
    memset(v, 0, sizeof *v);
}

static void views_free(StoreView *v, int n) {
    for (int i = 0; i < n; i++)
        view_free(&v[i]);
    free(v);
}

/* Position of the stored table `name` (case-insensitive), or -1. */
static int store_find(const GqpStore *s, const char *name) {
    for (int i = 0; name && i < s->ntables; i++)
        if (strcasecmp(s->tables[i].name, name) == 0) return i;
    return -1;
}

/* fsync the file or folder at dirfd/name. Returns 0, or -1 with errno. */
static int sync_at(int dirfd, const char *name, int is_dir) {
    int fd = openat(dirfd, name, O_RDONLY | (is_dir ? O_DIRECTORY : 0));
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* 1 when name is a file name a table folder of ours holds: c<digits> then
 * .bin .valid .dict .dict0 .stats, optionally followed by .tmp. */
static int our_file(const char *name) {
    if (name[0] != 'c' || !isdigit((unsigned char)name[1])) return 0;
    const char *p = name + 1;
    while (isdigit((unsigned char)*p))
        p++;
    static const char *ext[] = {".bin", ".valid", ".dict", ".dict0", ".stats"};
    for (int k = 0; k < 5; k++) {
        size_t l = strlen(ext[k]);
        if (strncmp(p, ext[k], l) == 0 && (p[l] == '\0' || strcmp(p + l, ".tmp") == 0)) return 1;
    }
    return 0;
}

/* Folder number of the entry name "t<digits>" into *n: 1, else 0. */
static int folder_number(const char *name, uint64_t *n) {
    if (name[0] != 't' || !name[1]) return 0;
    for (const char *p = name + 1; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    if (strlen(name) > 19) return 0;
    *n = strtoull(name + 1, NULL, 10);
    return 1;
}

/* Remove the table folder dirfd/name: our files in it, then the folder
 * (left when it holds anything else). Best effort. */
static void remove_folder(int dirfd, const char *name) {
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (our_file(e->d_name)) unlinkat(fd, e->d_name, 0);
    closedir(d);
    unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* fsync every file of folder dirfd/name and the folder. Returns 0, or -1
 * with errno. */
static int sync_folder(int dirfd, const char *name) {
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int dfd = dup(fd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    int rc = 0;
    if (!d) {
        if (dfd >= 0) close(dfd);
        rc = -1;
    }
    struct dirent *e;
    while (d && rc == 0 && (e = readdir(d)) != NULL)
        if (our_file(e->d_name)) rc = sync_at(fd, e->d_name, 0);
    int en = errno;
    if (d) closedir(d);
    if (rc == 0)
        rc = fsync(fd);
    else
        errno = en;
    en = errno;
    close(fd);
    errno = en;
    return rc;
}

/* --------------------------------------------------- catalog: writing -- */

/* The catalog text of tables[0..nt) and views[0..nv) with `next`. */
static char *catalog_text(uint64_t next, const StoreTable *tables, int nt, const StoreView *views,
                          int nv, size_t *len) {
    Buf b = {0};
    buf_fmt(&b, "gqp-catalog 1\nnext %" PRIu64 "\n", next);
    for (int i = 0; i < nt; i++) {
        const StoreTable *t = &tables[i];
        buf_put(&b, "table", 5);
        buf_tok(&b, t->name);
        buf_fmt(&b, " %" PRIu64 " %" PRId64 " %d %d\n", t->folder, t->nrows, t->ncols, t->nidx);
        for (int c = 0; c < t->ncols; c++) {
            buf_put(&b, "column", 6);
            buf_tok(&b, t->cols[c].name);
            buf_fmt(&b, " %s %d %d\n", cat_type_name(t->cols[c].type), t->cols[c].prec,
                    t->cols[c].scale);
        }
        for (int k = 0; k < t->nidx; k++) {
            buf_put(&b, "index", 5);
            buf_tok(&b, t->idx[k].name);
            buf_fmt(&b, " %d %d", t->idx[k].unique, t->idx[k].ncols);
            for (int j = 0; j < t->idx[k].ncols; j++)
                buf_fmt(&b, " %d", t->idx[k].cols[j]);
            buf_put(&b, "\n", 1);
        }
    }
    for (int i = 0; i < nv; i++) {
        buf_put(&b, "view", 4);
        buf_tok(&b, views[i].name);
        buf_tok(&b, views[i].sql);
        buf_fmt(&b, " %d", views[i].ncols);
        for (int k = 0; k < views[i].ncols; k++)
            buf_tok(&b, views[i].cols[k]);
        buf_put(&b, "\n", 1);
    }
    buf_put(&b, "end\n", 4);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}

/* Write text as DIR/gqp.catalog: gqp.catalog.tmp written and fsynced,
 * renamed over gqp.catalog, DIR fsynced. Returns GQP_OK or an error
 * naming the file (gqp.catalog unchanged unless the rename happened). */
static int catalog_commit(gqp *db, const char *text, size_t len) {
    GqpStore *s = db->store;
    int fd = openat(s->dirfd, STORE_CATALOG_TMP, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        return store_err(db, "%s/%s: cannot create: %s", s->dir, STORE_CATALOG_TMP,
                         strerror(errno));
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = w < 0 ? errno : ENOSPC;
            close(fd);
            unlinkat(s->dirfd, STORE_CATALOG_TMP, 0);
            return store_err(db, "%s/%s: write failed: %s", s->dir, STORE_CATALOG_TMP, strerror(e));
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlinkat(s->dirfd, STORE_CATALOG_TMP, 0);
        return store_err(db, "%s/%s: write failed: %s", s->dir, STORE_CATALOG_TMP, strerror(e));
    }
    if (renameat(s->dirfd, STORE_CATALOG_TMP, s->dirfd, STORE_CATALOG) != 0) {
        int e = errno;
        unlinkat(s->dirfd, STORE_CATALOG_TMP, 0);
        return store_err(db, "%s/%s: cannot rename over %s: %s", s->dir, STORE_CATALOG_TMP,
                         STORE_CATALOG, strerror(e));
    }
    /* committed; the directory entry is made durable (an error here
     * leaves the new state in place) */
    fsync(s->dirfd);
    return GQP_OK;
}

/* --------------------------------------------------- catalog: reading -- */

/* Split line (NUL-terminated, modified) into at most max tokens, each
 * unescaped. Returns the count, or -1 when a token is malformed. */
static int split(char *line, char **tok, int max) {
    int n = 0;
    char *p = line;
    while (*p) {
        char *sp = strchr(p, ' ');
        if (sp) *sp = '\0';
        if (n == max || unescape(p) != 0) return -1;
        tok[n++] = p;
        if (!sp) break;
        p = sp + 1;
    }
    return n;
}

/* Parse an int64 token in [lo, hi] into *v: 0, or -1. */
static int tok_int(const char *s, int64_t lo, int64_t hi, int64_t *v) {
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || errno || x < lo || x > hi) return -1;
    *v = x;
    return 0;
}

/* Type named s (cat_type_name's spelling) into *t: 0, or -1. */
static int tok_type(const char *s, CatType *t) {
    for (int k = CAT_INT32; k <= CAT_DECIMAL; k++)
        if (strcmp(cat_type_name((CatType)k), s) == 0) {
            *t = (CatType)k;
            return 0;
        }
    return -1;
}

#define STORE_MAX_TOK 4100 /* a view of up to 4096 named columns */

/* Parse the catalog text (modified) of file path into s's tables, views
 * and next. Returns GQP_OK or an error "path:LINE: ...". */
static int catalog_parse(gqp *db, GqpStore *s, char *text, size_t len, const char *path) {
    char **tok = malloc(sizeof *tok * STORE_MAX_TOK);
    if (!tok) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    int rc = GQP_OK, line = 0, ended = 0;
    StoreTable *cur = NULL; /* the table whose column / index lines follow */
    int want_cols = 0, want_idx = 0;
    char *p = text, *endp = text + len;
    if (memchr(text, '\0', len)) {
        rc = store_err(db, "%s: corrupt catalog: holds a NUL byte", path);
        goto done;
    }
#define BAD(what)                                                                                  \
    do {                                                                                           \
        rc = store_err(db, "%s:%d: corrupt catalog: %s", path, line, what);                        \
        goto done;                                                                                 \
    } while (0)
    while (p < endp) {
        char *nl = memchr(p, '\n', (size_t)(endp - p));
        if (!nl) {
            line++;
            BAD("the last line lacks its newline (file cut short?)");
        }
        *nl = '\0';
        line++;
        char *l = p;
        p = nl + 1;
        if (ended) BAD("text after 'end'");
        int n = split(l, tok, STORE_MAX_TOK);
        if (n <= 0) BAD("malformed line");
        int64_t v[5];
        if (line == 1) {
            if (n != 2 || strcmp(tok[0], "gqp-catalog") != 0)
                BAD("not a gqp catalog (its first line must be 'gqp-catalog 1')");
            if (strcmp(tok[1], "1") != 0) BAD("unsupported catalog version (this gqp reads 1)");
            continue;
        }
        int is_col = strcmp(tok[0], "column") == 0, is_idx = strcmp(tok[0], "index") == 0;
        if ((want_cols || want_idx) && !(want_cols ? is_col : is_idx))
            BAD(want_cols ? "a table has fewer column lines than its column count"
                          : "a table has fewer index lines than its index count");
        if (strcmp(tok[0], "next") == 0) {
            if (n != 2 || tok_int(tok[1], 0, INT64_MAX, &v[0]) != 0) BAD("bad 'next' line");
            s->next = (uint64_t)v[0];
        } else if (strcmp(tok[0], "table") == 0) {
            if (n != 6 || tok_int(tok[2], 0, INT64_MAX, &v[0]) ||
                tok_int(tok[3], 0, INT64_MAX, &v[1]) || tok_int(tok[4], 1, 100000, &v[2]) ||
                tok_int(tok[5], 0, 100000, &v[3]) || !*tok[1])
                BAD("bad 'table' line");
            if (store_find(s, tok[1]) >= 0) BAD("a table is named twice");
            for (int i = 0; i < s->ntables; i++)
                if (s->tables[i].folder == (uint64_t)v[0]) BAD("two tables name one folder");
            StoreTable *g = realloc(s->tables, sizeof *g * (size_t)(s->ntables + 1));
            if (!g) goto oom;
            s->tables = g;
            cur = &s->tables[s->ntables++];
            memset(cur, 0, sizeof *cur);
            cur->name = strdup(tok[1]);
            cur->folder = (uint64_t)v[0];
            cur->nrows = v[1];
            cur->cols = calloc((size_t)v[2], sizeof *cur->cols);
            cur->idx = calloc((size_t)v[3] + 1, sizeof *cur->idx);
            if (!cur->name || !cur->cols || !cur->idx) goto oom;
            want_cols = (int)v[2];
            want_idx = (int)v[3];
        } else if (is_col) {
            CatType ty;
            if (!want_cols) BAD("a column line outside a table");
            if (n != 5 || !*tok[1] || tok_type(tok[2], &ty) || tok_int(tok[3], 0, 38, &v[0]) ||
                tok_int(tok[4], 0, 38, &v[1]))
                BAD("bad 'column' line");
            if (ty == CAT_DECIMAL ? v[0] < 1 || v[0] > CAT_DEC_MAX_PREC || v[1] > v[0]
                                  : v[0] || v[1])
                BAD("bad precision or scale in a 'column' line");
            StoreCol *c = &cur->cols[cur->ncols];
            if (!(c->name = strdup(tok[1]))) goto oom;
            cur->ncols++;
            c->type = ty;
            c->prec = (int)v[0];
            c->scale = (int)v[1];
            want_cols--;
        } else if (is_idx) {
            if (!want_idx) BAD("an index line outside a table");
            if (n < 4 || !*tok[1] || tok_int(tok[2], 0, 1, &v[0]) ||
                tok_int(tok[3], 1, cur->ncols, &v[1]) || n != 4 + v[1])
                BAD("bad 'index' line");
            StoreIdx *x = &cur->idx[cur->nidx];
            x->name = strdup(tok[1]);
            x->cols = malloc(sizeof(int) * (size_t)v[1]);
            if (!x->name || !x->cols) {
                idx_free(x);
                goto oom;
            }
            cur->nidx++;
            x->unique = (int)v[0];
            x->ncols = (int)v[1];
            for (int j = 0; j < x->ncols; j++) {
                if (tok_int(tok[4 + j], 0, cur->ncols - 1, &v[2])) BAD("bad 'index' column");
                x->cols[j] = (int)v[2];
            }
            want_idx--;
        } else if (strcmp(tok[0], "view") == 0) {
            if (n < 4 || !*tok[1] || tok_int(tok[3], 0, STORE_MAX_TOK - 4, &v[0]) || n != 4 + v[0])
                BAD("bad 'view' line");
            StoreView *g = realloc(s->views, sizeof *g * (size_t)(s->nviews + 1));
            if (!g) goto oom;
            s->views = g;
            StoreView *w = &s->views[s->nviews++];
            memset(w, 0, sizeof *w);
            w->name = strdup(tok[1]);
            w->sql = strdup(tok[2]);
            w->cols = calloc((size_t)v[0] + 1, sizeof *w->cols);
            if (!w->name || !w->sql || !w->cols) goto oom;
            for (int k = 0; k < v[0]; k++) {
                if (!(w->cols[k] = strdup(tok[4 + k]))) goto oom;
                w->ncols++;
            }
        } else if (strcmp(tok[0], "end") == 0 && n == 1) {
            ended = 1;
        } else {
            BAD("unknown line");
        }
    }
    if (line == 0) BAD("empty file");
    if (want_cols || want_idx) BAD("a table's column or index lines are missing");
    if (!ended) BAD("no 'end' line (file cut short?)");
#undef BAD
    goto done;
oom:
    rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
done:
    free(tok);
    return rc;
}

/* ------------------------------------------------------ table folders -- */

/* Load the stored table e from its folder into db's catalog (columns
 * checked, not read), with its indexes. GQP_OK, or an error naming the
 * table and file (nothing added). */
static int load_entry(gqp *db, const StoreTable *e) {
    GqpStore *s = db->store;
    int nc = e->ncols, rc = GQP_OK;
    const char **names = calloc((size_t)nc, sizeof *names);
    CatType *types = calloc((size_t)nc, sizeof *types);
    int *prec = calloc((size_t)nc, sizeof *prec), *scale = calloc((size_t)nc, sizeof *scale);
    char **files = calloc((size_t)nc, sizeof *files);
    char folder[32];
    snprintf(folder, sizeof folder, "t%" PRIu64, e->folder);
    char *src = path2(s->dir, folder);
    if (!names || !types || !prec || !scale || !files || !src) goto oom;
    for (int c = 0; c < nc; c++) {
        names[c] = e->cols[c].name;
        types[c] = e->cols[c].type;
        prec[c] = e->cols[c].prec;
        scale[c] = e->cols[c].scale;
        if (!(files[c] = malloc(16))) goto oom;
        snprintf(files[c], 16, "c%d", c);
    }
    CatTableDef def = {e->name, src,   CAT_FMT_BINARY, 0,     0,    nc,
                       names,   types, prec,           scale, NULL, (const char *const *)files,
                       NULL,    0};
    CatError err;
    if (cat_load_table(db->cat, &def, &err) != 0) {
        rc = store_err(db, "database %s: table '%s': %s", s->dir, e->name,
                       strncmp(err.msg, "Catalog Error: ", 15) == 0 ? err.msg + 15 : err.msg);
        goto done;
    }
    CatTable *t = cat_find_table(db->cat, e->name);
    if (t->nrows != e->nrows) {
        rc = store_err(db,
                       "database %s: table '%s': %s/c0.bin holds %" PRId64
                       " rows but the catalog says %" PRId64,
                       s->dir, e->name, src, t->nrows, e->nrows);
        cat_drop_table(db->cat, e->name, NULL);
        goto done;
    }
    if (e->nidx) {
        if (!(t->indexes = calloc((size_t)e->nidx, sizeof *t->indexes))) {
            cat_drop_table(db->cat, e->name, NULL);
            goto oom;
        }
        for (int k = 0; k < e->nidx; k++) {
            CatIndex *x = &t->indexes[k];
            x->name = strdup(e->idx[k].name);
            x->cols = malloc(sizeof(int) * (size_t)e->idx[k].ncols);
            t->nindexes++;
            if (!x->name || !x->cols) {
                cat_drop_table(db->cat, e->name, NULL);
                goto oom;
            }
            x->ncols = e->idx[k].ncols;
            x->unique = e->idx[k].unique;
            memcpy(x->cols, e->idx[k].cols, sizeof(int) * (size_t)x->ncols);
        }
    }
    goto done;
oom:
    rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
done:
    for (int c = 0; files && c < nc; c++)
        free(files[c]);
    free(files);
    free(names);
    free(types);
    free(prec);
    free(scale);
    free(src);
    return rc;
}

/* Copy file dirfd/a to the new file dirfd/b. 0, or -1 with errno. */
static int copy_at(int dirfd, const char *a, const char *b) {
    int in = openat(dirfd, a, O_RDONLY);
    if (in < 0) return -1;
    int out = openat(dirfd, b, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (out < 0) {
        int e = errno;
        close(in);
        errno = e;
        return -1;
    }
    char buf[1 << 16];
    int rc = 0;
    for (;;) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) rc = -1;
        if (r <= 0) break;
        for (ssize_t off = 0; off < r && rc == 0;) {
            ssize_t w = write(out, buf + off, (size_t)(r - off));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                if (w == 0) errno = ENOSPC;
                rc = -1;
            } else {
                off += w;
            }
        }
        if (rc) break;
    }
    int e = errno;
    close(in);
    if (close(out) != 0 && rc == 0) {
        e = errno;
        rc = -1;
    }
    errno = e;
    return rc;
}

/* Link (or, where the file system cannot, copy) from/base.* to to/base.*
 * (folders under s->dir) for every extension that exists. GQP_OK, or an
 * error naming the file. */
static int link_column(gqp *db, const char *from, const char *to, const char *base) {
    GqpStore *s = db->store;
    static const char *ext[] = {".bin", ".valid", ".dict", ".dict0", ".stats"};
    for (int k = 0; k < 5; k++) {
        char a[96], b[96];
        snprintf(a, sizeof a, "%s/%s%s", from, base, ext[k]);
        snprintf(b, sizeof b, "%s/%s%s", to, base, ext[k]);
        if (linkat(s->dirfd, a, s->dirfd, b, 0) == 0) continue;
        if (errno == ENOENT && faccessat(s->dirfd, a, F_OK, 0) != 0) continue;
        if (copy_at(s->dirfd, a, b) != 0)
            return store_err(db, "%s/%s: cannot write: %s", s->dir, b, strerror(errno));
    }
    return GQP_OK;
}

/* Describe in-memory table t as a stored entry into *e (folder unset).
 * GQP_OK or GQP_NOMEM. */
static int describe(gqp *db, const CatTable *t, StoreTable *e) {
    memset(e, 0, sizeof *e);
    e->name = strdup(t->name);
    e->nrows = t->nrows;
    e->cols = calloc((size_t)t->ncols, sizeof *e->cols);
    e->idx = calloc((size_t)t->nindexes + 1, sizeof *e->idx);
    if (!e->name || !e->cols || !e->idx) goto oom;
    for (int c = 0; c < t->ncols; c++) {
        if (!(e->cols[c].name = strdup(t->cols[c].name))) goto oom;
        e->ncols++;
        e->cols[c].type = t->cols[c].type;
        e->cols[c].prec = t->cols[c].type == CAT_DECIMAL ? t->cols[c].prec : 0;
        e->cols[c].scale = t->cols[c].type == CAT_DECIMAL ? t->cols[c].scale : 0;
    }
    for (int k = 0; k < t->nindexes; k++) {
        StoreIdx *x = &e->idx[k];
        x->name = strdup(t->indexes[k].name);
        x->cols = malloc(sizeof(int) * (size_t)t->indexes[k].ncols);
        e->nidx++;
        if (!x->name || !x->cols) goto oom;
        x->ncols = t->indexes[k].ncols;
        x->unique = t->indexes[k].unique;
        memcpy(x->cols, t->indexes[k].cols, sizeof(int) * (size_t)x->ncols);
    }
    return GQP_OK;
oom:
    table_free(e);
    return gqp_set_error(db, GQP_NOMEM, "out of memory");
}

/* Write in-memory table t as the new folder DIR/t<folder>: a column still
 * as the stored entry old has it (not read yet, or still its file's
 * mapping) is linked from old's folder, every other one written; then
 * every file and the folder are fsynced. *folder is the number to use, or
 * the one used instead when that name is taken. GQP_OK, or an error naming the
 * file (the new folder may be left half written: the caller removes it). */
static int write_folder(gqp *db, CatTable *t, const StoreTable *old, uint64_t *folder) {
    GqpStore *s = db->store;
    char name[32], oldname[32];
    snprintf(name, sizeof name, "t%" PRIu64, *folder);
    /* something in the way (not ours: sweep removes only our folders):
     * take the next number */
    for (int tries = 0; mkdirat(s->dirfd, name, 0777) != 0; tries++) {
        if (errno != EEXIST || tries == 100)
            return store_err(db, "%s/%s: cannot create folder: %s", s->dir, name, strerror(errno));
        *folder = s->next++;
        snprintf(name, sizeof name, "t%" PRIu64, *folder);
    }
    char *path = path2(s->dir, name), *oldpath = NULL;
    if (old) {
        snprintf(oldname, sizeof oldname, "t%" PRIu64, old->folder);
        oldpath = path2(s->dir, oldname);
    }
    int rc = GQP_OK;
    CatError err;
    if (!path || (old && !oldpath) || cat_table_ready(t) != 0) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto done;
    }
    /* statistics travel with the folder: compute those not current (a
     * column not read yet keeps its linked .stats) */
    for (int c = 0; c < t->ncols; c++)
        if (!t->cols[c].lazy && t->cols[c].stats.rows != t->cols[c].n) {
            cat_table_stats(t);
            break;
        }
    int same_src = old && t->source && strcmp(t->source, oldpath) == 0;
    for (int c = 0; c < t->ncols && rc == GQP_OK; c++) {
        CatColumn *col = &t->cols[c];
        char base[16];
        snprintf(base, sizeof base, "c%d", c);
        if (same_src && c < old->ncols && strcmp(old->cols[c].name, col->name) == 0 &&
            old->cols[c].type == col->type && (col->lazy || col->map)) {
            rc = link_column(db, oldname, name, base);
            continue;
        }
        if (cat_column_use(t, c, &err) != 0 || cat_write_column(col, path, base, &err) != 0)
            rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
    }
    if (rc == GQP_OK && sync_folder(s->dirfd, name) != 0)
        rc = store_err(db, "%s: cannot sync: %s", path, strerror(errno));
done:
    free(path);
    free(oldpath);
    return rc;
}

/* Replace db's in-memory table `name` by a fresh lazy load of the stored
 * entry e (its columns then map the files just written instead of holding
 * copies); the indexes move over. On failure the old table stays. */
static void reload(gqp *db, const StoreTable *e) {
    Catalog *cat = db->cat;
    int k = 0;
    while (k < cat->ntables && strcasecmp(cat->tables[k]->name, e->name) != 0)
        k++;
    if (k == cat->ntables) return;
    CatTable *old = cat->tables[k];
    for (int i = k; i + 1 < cat->ntables; i++)
        cat->tables[i] = cat->tables[i + 1];
    cat->ntables--;
    char keep[sizeof db->errmsg];
    memcpy(keep, db->errmsg, sizeof keep);
    int code = db->errcode;
    int rc = load_entry(db, e);
    memcpy(db->errmsg, keep, sizeof keep);
    db->errcode = code;
    CatTable *t = rc == GQP_OK ? cat->tables[cat->ntables - 1] : old;
    if (rc == GQP_OK) cat->ntables--;
    for (int i = cat->ntables; i > k; i--)
        cat->tables[i] = cat->tables[i - 1];
    cat->tables[k] = t;
    cat->ntables++;
    if (rc != GQP_OK) return;
    /* the new table has e's indexes, the same as old's */
    gqp_forget_table(db, old);
    cat_table_free(old);
}

/* Deep copy of db's views into *out (count *n). GQP_OK or GQP_NOMEM. */
static int copy_views(gqp *db, StoreView **out, int *n) {
    *n = 0;
    *out = calloc((size_t)db->nviews + 1, sizeof **out);
    if (!*out) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    for (int i = 0; i < db->nviews; i++) {
        const GqpView *v = &db->views[i];
        StoreView *w = &(*out)[(*n)++];
        w->name = strdup(v->name);
        w->sql = strdup(v->sql);
        w->cols = calloc((size_t)v->ncols + 1, sizeof *w->cols);
        if (!w->name || !w->sql || !w->cols) goto oom;
        for (int k = 0; k < v->ncols; k++) {
            if (!(w->cols[k] = strdup(v->cols[k]))) goto oom;
            w->ncols++;
        }
    }
    return GQP_OK;
oom:
    views_free(*out, *n);
    *out = NULL;
    *n = 0;
    return gqp_set_error(db, GQP_NOMEM, "out of memory");
}

/* Make db's views the stored ones again. */
static void restore_views(gqp *db) {
    GqpStore *s = db->store;
    gqp_free_views(db);
    db->views = calloc((size_t)s->nviews + 1, sizeof *db->views);
    for (int i = 0; db->views && i < s->nviews; i++) {
        const StoreView *w = &s->views[i];
        /* cols NULL: the view has no column list */
        GqpView v = {strdup(w->name), strdup(w->sql),
                     w->ncols ? calloc((size_t)w->ncols, sizeof(char *)) : NULL, 0};
        int ok = v.name && v.sql && (v.cols || !w->ncols);
        for (int k = 0; ok && k < w->ncols; k++)
            ok = (v.cols[v.ncols++] = strdup(w->cols[k])) != NULL;
        db->views[db->nviews++] = v;
        if (!ok) break; /* out of memory: the view is there, perhaps without its names */
    }
}

/* After a failed commit: put db's table `name` (if any) and its views
 * back as the store has them. */
static void restore(gqp *db, const char *name) {
    GqpStore *s = db->store;
    db->version++;
    if (name) {
        CatTable *t = cat_find_table(db->cat, name);
        if (t) {
            gqp_forget_table(db, t);
            cat_drop_table(db->cat, name, NULL);
        }
        int i = store_find(s, name);
        if (i >= 0) {
            char keep[sizeof db->errmsg];
            memcpy(keep, db->errmsg, sizeof keep);
            int code = db->errcode;
            load_entry(db, &s->tables[i]);
            memcpy(db->errmsg, keep, sizeof keep);
            db->errcode = code;
        }
    }
    restore_views(db);
}

/* Commit the in-memory state of table `name` (NULL: views only) and of
 * the views: write its folder when write_data (or when it is new), then
 * the catalog; see the file comment. GQP_OK, or an error after which
 * memory matches the store again. */
static int commit(gqp *db, const char *name, int write_data) {
    GqpStore *s = db->store;
    int old_i = store_find(s, name);
    const StoreTable *old = old_i >= 0 ? &s->tables[old_i] : NULL;
    CatTable *t = name ? cat_find_table(db->cat, name) : NULL;
    StoreTable nt;
    StoreTable *arr = NULL;
    StoreView *views = NULL;
    int nviews = 0, have = 0, made = 0, rc, n = 0;
    char *text = NULL;
    size_t len = 0;
    memset(&nt, 0, sizeof nt);
    /* the name may belong to the table a reload frees */
    char *keepname = name ? strdup(name) : NULL;
    if (name && !keepname) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    if (t) {
        if ((rc = describe(db, t, &nt)) != GQP_OK) goto fail;
        have = 1;
        if (write_data || !old) {
            nt.folder = s->next++;
            made = 1;
            if ((rc = write_folder(db, t, old, &nt.folder)) != GQP_OK) goto fail;
        } else {
            nt.folder = old->folder;
        }
    }
    arr = calloc((size_t)s->ntables + 1, sizeof *arr);
    if (!arr) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto fail;
    }
    for (int i = 0; i < s->ntables; i++)
        if (i != old_i)
            arr[n++] = s->tables[i];
        else if (have)
            arr[n++] = nt;
    if (have && !old) arr[n++] = nt;
    if ((rc = copy_views(db, &views, &nviews)) != GQP_OK) goto fail;
    if (!(text = catalog_text(s->next, arr, n, views, nviews, &len))) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto fail;
    }
    if ((rc = catalog_commit(db, text, len)) != GQP_OK) goto fail;
    /* committed: the store takes the new state, the old folder goes */
    uint64_t gone = old ? old->folder : 0;
    int drop_old = old && (!have || made);
    if (old) {
        StoreTable o = s->tables[old_i];
        table_free(&o);
    }
    free(s->tables);
    s->tables = arr;
    s->ntables = n;
    views_free(s->views, s->nviews);
    s->views = views;
    s->nviews = nviews;
    if (drop_old) {
        char f[32];
        snprintf(f, sizeof f, "t%" PRIu64, gone);
        remove_folder(s->dirfd, f);
        fsync(s->dirfd);
    }
    if (made) reload(db, &s->tables[store_find(s, keepname)]);
    free(text);
    free(keepname);
    return GQP_OK;
fail:
    if (made) {
        char f[32];
        snprintf(f, sizeof f, "t%" PRIu64, nt.folder);
        remove_folder(s->dirfd, f);
    }
    free(text);
    free(arr);
    views_free(views, nviews);
    table_free(&nt);
    restore(db, keepname);
    free(keepname);
    return rc;
}

/* ------------------------------------------------------- open / close -- */

int gqp_store_wants(const char *path) {
    struct stat st;
    if (!path || !*path) return 0;
    if (stat(path, &st) == 0) return S_ISDIR(st.st_mode);
    size_t n = strlen(path);
    return !((n >= 5 && strcasecmp(path + n - 5, ".yaml") == 0) ||
             (n >= 4 && strcasecmp(path + n - 4, ".yml") == 0));
}

/* Free store s (closing its directory, which drops the lock). */
static void store_free(GqpStore *s) {
    if (!s) return;
    for (int i = 0; i < s->ntables; i++)
        table_free(&s->tables[i]);
    free(s->tables);
    views_free(s->views, s->nviews);
    if (s->dirfd >= 0) close(s->dirfd);
    free(s->dir);
    free(s);
}

void gqp_store_close(gqp *db) {
    store_free(db->store);
    db->store = NULL;
}

/* Remove what a killed commit may have left: gqp.catalog.tmp and table
 * folders the catalog does not name; raise s->next past every folder
 * number seen. Best effort (a read-only directory keeps them). */
static void sweep(GqpStore *s) {
    int fd = dup(s->dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    unlinkat(s->dirfd, STORE_CATALOG_TMP, 0);
    char **gone = NULL;
    int ngone = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t num;
        if (!folder_number(e->d_name, &num)) continue;
        if (num >= s->next) s->next = num + 1;
        int named = 0;
        for (int i = 0; i < s->ntables && !named; i++)
            named = s->tables[i].folder == num;
        if (named) continue;
        char **g = realloc(gone, sizeof *g * (size_t)(ngone + 1));
        if (!g) break;
        gone = g;
        if ((gone[ngone] = strdup(e->d_name)) != NULL) ngone++;
    }
    closedir(d);
    for (int i = 0; i < ngone; i++) {
        remove_folder(s->dirfd, gone[i]);
        free(gone[i]);
    }
    free(gone);
}

int gqp_store_open(gqp *db, const char *dir) {
    GqpStore *s = calloc(1, sizeof *s);
    if (!s) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    s->dirfd = -1;
    s->next = 1;
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    s->dir = strndup(dir, n);
    char *cpath = s->dir ? path2(s->dir, STORE_CATALOG) : NULL;
    char *text = NULL;
    int rc = GQP_OK;
    if (!cpath) {
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto fail;
    }
    struct stat st;
    if (stat(s->dir, &st) != 0) {
        /* a new database, as sqlite3 and duckdb create a missing file */
        if (errno != ENOENT || mkdir(s->dir, 0777) != 0) {
            rc =
                store_err(db, "%s: cannot create the database folder: %s", s->dir, strerror(errno));
            goto fail;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        rc = store_err(db, "%s: not a database folder", s->dir);
        goto fail;
    }
    if ((s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY)) < 0) {
        rc = store_err(db, "%s: cannot open the database folder: %s", s->dir, strerror(errno));
        goto fail;
    }
    if (flock(s->dirfd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            rc = store_err(db, "%s: the database is in use by another process (it is locked)",
                           s->dir);
        else
            rc = store_err(db, "%s: cannot lock the database: %s", s->dir, strerror(errno));
        goto fail;
    }
    int fd = openat(s->dirfd, STORE_CATALOG, O_RDONLY);
    if (fd < 0 && errno == ENOENT) {
        /* no catalog: a new database, unless table folders say one was lost */
        DIR *d = opendir(s->dir);
        struct dirent *e;
        uint64_t num;
        int folders = 0;
        while (d && (e = readdir(d)) != NULL)
            folders += folder_number(e->d_name, &num);
        if (d) closedir(d);
        if (folders) {
            rc = store_err(db,
                           "%s: missing catalog file, but the folder holds table folders "
                           "(t<N>/): not opening a damaged database",
                           cpath);
            goto fail;
        }
        char *empty = catalog_text(s->next, NULL, 0, NULL, 0, &n);
        db->store = s;
        rc = empty ? catalog_commit(db, empty, n) : gqp_set_error(db, GQP_NOMEM, "out of memory");
        db->store = NULL;
        free(empty);
        if (rc != GQP_OK) goto fail;
        free(cpath);
        db->store = s;
        return GQP_OK;
    }
    if (fd < 0) {
        rc = store_err(db, "%s: cannot open: %s", cpath, strerror(errno));
        goto fail;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > ((off_t)1 << 30)) {
        close(fd);
        rc = store_err(db, "%s: not a regular file of at most 1 GiB", cpath);
        goto fail;
    }
    size_t len = (size_t)st.st_size, got = 0;
    if (!(text = malloc(len + 1))) {
        close(fd);
        rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        goto fail;
    }
    while (got < len) {
        ssize_t r = read(fd, text + got, len - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got != len) {
        rc = store_err(db, "%s: read failed", cpath);
        goto fail;
    }
    text[len] = '\0';
    if ((rc = catalog_parse(db, s, text, len, cpath)) != GQP_OK) goto fail;
    sweep(s);
    db->store = s;
    for (int i = 0; i < s->ntables; i++)
        if ((rc = load_entry(db, &s->tables[i])) != GQP_OK) {
            db->store = NULL;
            goto fail;
        }
    restore_views(db);
    free(text);
    free(cpath);
    return GQP_OK;
fail:
    /* nothing half-loaded */
    while (db->cat->ntables > 0)
        cat_drop_table(db->cat, db->cat->tables[0]->name, NULL);
    gqp_free_views(db);
    free(text);
    free(cpath);
    store_free(s);
    return rc;
}

/* ----------------------------------------------------------- statements -- */

int gqp_store_after(gqp *db, gqp_stmt *st) {
    GqpStore *s = db->store;
    const AstStmt *a = st->ast;
    if (!s || !a) return GQP_OK;
    switch (a->kind) {
    case STMT_CREATE_TABLE:
        /* a CREATE that found its table there changed nothing */
        if (store_find(s, a->table) >= 0 || !cat_find_table(db->cat, a->table)) return GQP_OK;
        return commit(db, a->table, 1);
    case STMT_INSERT:
    case STMT_UPDATE:
    case STMT_DELETE:
        if (st->changes == 0 || store_find(s, a->table) < 0) return GQP_OK;
        return commit(db, a->table, 1);
    case STMT_DROP_TABLE:
        if (store_find(s, a->table) < 0 || cat_find_table(db->cat, a->table)) return GQP_OK;
        return commit(db, a->table, 0);
    case STMT_CREATE_INDEX:
        if (store_find(s, a->table) < 0) return GQP_OK;
        return commit(db, a->table, 0);
    case STMT_DROP_INDEX:
        for (int i = 0; i < s->ntables; i++)
            for (int k = 0; k < s->tables[i].nidx; k++)
                if (strcasecmp(s->tables[i].idx[k].name, a->index_name) == 0)
                    return commit(db, s->tables[i].name, 0);
        return GQP_OK;
    case STMT_CREATE_VIEW:
    case STMT_DROP_VIEW:
        return commit(db, NULL, 0);
    default:
        return GQP_OK;
    }
}

/* ------------------------------------------------------------- import -- */

/* Report a progress line through progress (if any). */
static void say(void (*progress)(void *, const char *), void *ud, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void say(void (*progress)(void *, const char *), void *ud, const char *fmt, ...) {
    if (!progress) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    progress(ud, line);
}

/* Seconds since an arbitrary point (monotonic). */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Import the tables of the YAML config src (only `table` when given). */
static int import_config(gqp *db, const char *src, const char *table,
                         void (*progress)(void *, const char *), void *ud) {
    Catalog *scratch = cat_catalog_new();
    if (!scratch) return gqp_set_error(db, GQP_NOMEM, "out of memory");
    CatError err;
    double t0 = now_s();
    say(progress, ud, "loading %s ...", src);
    int rc = GQP_OK;
    if (cat_load_config(scratch, src, NULL, &err) != 0) {
        rc = gqp_set_error(db, GQP_ERROR, "%s", err.msg);
        goto done;
    }
    if (table && !cat_find_table(scratch, table)) {
        rc = store_err(db, "%s declares no table named '%s'", src, table);
        goto done;
    }
    int total = table ? 1 : scratch->ntables, k = 0;
    /* every name is checked first: a clash imports nothing */
    for (int i = 0; i < scratch->ntables; i++) {
        const char *nm = scratch->tables[i]->name;
        if (table && strcasecmp(nm, table) != 0) continue;
        if (cat_find_table(db->cat, nm) || gqp_is_view(db, nm)) {
            rc = store_err(db, "table '%s' already exists in database %s (DROP it first)", nm,
                           db->store->dir);
            goto done;
        }
    }
    while (scratch->ntables > 0 && rc == GQP_OK) {
        CatTable *t = scratch->tables[0];
        for (int i = 0; i + 1 < scratch->ntables; i++)
            scratch->tables[i] = scratch->tables[i + 1];
        scratch->ntables--;
        if (table && strcasecmp(t->name, table) != 0) {
            cat_table_free(t);
            continue;
        }
        char *name = strdup(t->name);
        int64_t rows = t->nrows;
        if (!name || cat_catalog_add(db->cat, t, &err) != 0) {
            cat_table_free(t);
            free(name);
            rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
            break;
        }
        db->version++;
        say(progress, ud, "writing %s (%d/%d): %" PRId64 " rows ...", name, ++k, total, rows);
        rc = commit(db, name, 1);
        if (rc == GQP_OK)
            say(progress, ud, "imported %s (%d/%d): %" PRId64 " rows, %.1f s", name, k, total, rows,
                now_s() - t0);
        free(name);
    }
done:
    cat_catalog_free(scratch);
    return rc;
}

int gqp_import(gqp *db, const char *source, const char *table,
               void (*progress)(void *ud, const char *line), void *ud) {
    if (!db) return GQP_MISUSE;
    if (!source || !*source)
        return gqp_set_error(db, GQP_MISUSE, "API Error: gqp_import: no source");
    gqp_enter(db);
    int rc;
    size_t n = strlen(source);
    if (!db->store) {
        rc = gqp_set_error(db, GQP_MISUSE,
                           "API Error: gqp_import needs a database folder (gqp_open of a "
                           "directory, gqp run --db DIR)");
    } else if ((n >= 5 && strcasecmp(source + n - 5, ".yaml") == 0) ||
               (n >= 4 && strcasecmp(source + n - 4, ".yml") == 0)) {
        rc = import_config(db, source, table, progress, ud);
    } else {
        /* a bare CSV / .tbl file: CREATE TABLE t AS SELECT * FROM
         * read_csv('source'), t the file's name without folder and
         * extension unless named */
        const char *base = strrchr(source, '/');
        base = base ? base + 1 : source;
        Buf b = {0}, q = {0};
        if (!table) {
            for (const char *p = base; *p && *p != '.'; p++)
                buf_put(&q, isalnum((unsigned char)*p) ? p : "_", 1);
            if (!q.len) buf_put(&q, "t", 1);
        } else {
            buf_put(&q, table, strlen(table));
        }
        buf_put(&b, "CREATE TABLE \"", 14);
        for (const char *p = q.p ? q.p : ""; *p; p++)
            buf_put(&b, *p == '"' ? "\"\"" : p, *p == '"' ? 2 : 1);
        buf_put(&b, "\" AS SELECT * FROM read_csv('", 29);
        for (const char *p = source; *p; p++)
            buf_put(&b, *p == '\'' ? "''" : p, *p == '\'' ? 2 : 1);
        buf_put(&b, "')", 2);
        if (b.oom || q.oom) {
            rc = gqp_set_error(db, GQP_NOMEM, "out of memory");
        } else {
            double t0 = now_s();
            say(progress, ud, "loading %s into %s ...", source, q.p);
            gqp_stmt *st = NULL;
            rc = gqp_prepare(db, b.p, (int64_t)b.len, &st, NULL);
            if (rc == GQP_OK && st) {
                while ((rc = gqp_step(st)) == GQP_ROW)
                    ;
                if (rc == GQP_DONE) {
                    rc = GQP_OK;
                    say(progress, ud, "imported %s: %" PRId64 " rows, %.1f s", q.p, gqp_changes(st),
                        now_s() - t0);
                }
                gqp_finalize(st);
            }
        }
        free(b.p);
        free(q.p);
    }
    gqp_leave(db);
    return rc;
}
