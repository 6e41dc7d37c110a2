/*
 * util.c -- error messages and the small thread helper of catalog/.
 */
#include "catalog/cat_internal.h"
#include <fcntl.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Format "Catalog Error: <fmt...>" into err->msg (err may be NULL).
 * Returns -1 always. */
int cat_err(CatError *err, const char *fmt, ...) {
    if (!err) return -1;
    static const char prefix[] = "Catalog Error: ";
    memcpy(err->msg, prefix, sizeof prefix);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + sizeof prefix - 1, sizeof err->msg - (sizeof prefix - 1), fmt, ap);
    va_end(ap);
    return -1;
}

/* See cat_internal.h. */
int cat_utf8_len(const char *str, size_t n) {
    const unsigned char *s = (const unsigned char *)str;
    if (n == 0) return 0;
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int len;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0; /* no overlongs */
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F; /* <= U+10FFFF */
    } else {
        return 0;
    }
    if (n < (size_t)len || s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return len;
}

/* See cat_internal.h. */
size_t cat_utf8_check(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        int l = cat_utf8_len(s + i, n - i);
        if (l == 0) return i;
        i += (size_t)l;
    }
    return n;
}

/* Copy s[0..len) into buf for quoting in a message, cut at
 * CAT_ERR_VALUE_MAX bytes (at a character boundary) with "..." appended;
 * newlines, CRs, NULs and other control bytes become spaces, bytes that are
 * not UTF-8 become '?', so the message is printable UTF-8. Returns buf
 * (size >= CAT_ERR_VALUE_MAX + 4). */
char *cat_err_value(char *buf, const char *s, size_t len) {
    size_t i = 0, o = 0;
    while (i < len) {
        unsigned char ch = (unsigned char)s[i];
        int l = ch < 0x80 ? 1 : cat_utf8_len(s + i, len - i);
        if (o + (size_t)(l ? l : 1) > CAT_ERR_VALUE_MAX) break;
        if (l == 0) {
            buf[o++] = '?';
            i++;
        } else if (l == 1) {
            buf[o++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
            i++;
        } else {
            memcpy(buf + o, s + i, (size_t)l);
            o += (size_t)l;
            i += (size_t)l;
        }
    }
    if (i < len) {
        memcpy(buf + o, "...", 4);
    } else {
        buf[o] = '\0';
    }
    return buf;
}

/* Online processor count clamped to [1, 64]. */
int cat_nthreads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > 64) n = 64;
    return (int)n;
}

/* One worker's arguments for cat_parallel. */
typedef struct ParTask {
    void (*fn)(void *arg, int i);
    void *arg;
    int i;
} ParTask;

/* pthread entry: run one task. Returns NULL. */
static void *par_main(void *p) {
    ParTask *t = p;
    t->fn(t->arg, t->i);
    return NULL;
}

/* Run fn(arg, i) for i in [0, n) in parallel; see cat_internal.h. */
void cat_parallel(int n, void (*fn)(void *arg, int i), void *arg) {
    if (n <= 1) {
        if (n == 1) fn(arg, 0);
        return;
    }
    pthread_t th[64];
    ParTask task[64];
    int started[64];
    int nt = n < 64 ? n : 64; /* indexes >= 64 run inline on this thread */
    for (int i = 1; i < nt; i++) {
        task[i].fn = fn;
        task[i].arg = arg;
        task[i].i = i;
        started[i] = pthread_create(&th[i], NULL, par_main, &task[i]) == 0;
    }
    fn(arg, 0);
    for (int i = nt; i < n; i++)
        fn(arg, i);
    for (int i = 1; i < nt; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            fn(arg, i);
    }
}

/* mkdir -p: create dir and missing parents. Returns 0 (also when it already
 * exists as a directory), or -1 with errno set. */
int cat_mkdirs(const char *dir) {
    size_t n = strlen(dir);
    if (n == 0) {
        errno = ENOENT;
        return -1;
    }
    char *p = malloc(n + 1);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char save = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            int e = errno;
            free(p);
            errno = e;
            return -1;
        }
        p[i] = save;
    }
    free(p);
    struct stat st;
    if (stat(dir, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* malloc'ed concatenation of a, b and c; NULL when out of memory. */
char *cat_concat3(const char *a, const char *b, const char *c) {
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *p = malloc(la + lb + lc + 1);
    if (!p) return NULL;
    memcpy(p, a, la);
    memcpy(p + la, b, lb);
    memcpy(p + la + lb, c, lc + 1);
    return p;
}

/* Read all of `path` into a cat_host_alloc block (NUL-terminated; free with cat_host_free).
 * Returns it with *len set, or NULL with err set; when missing_ok and the
 * file does not exist, returns NULL with *len = 0 and err untouched. */
void *cat_read_file(const char *path, size_t *len, int missing_ok, CatError *err) {
    *len = 0;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused
     * below as not a regular file); it changes nothing for a regular file */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (!(missing_ok && errno == ENOENT))
            cat_err(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        cat_err(err, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    char *buf = cat_host_alloc(size + 1);
    if (!buf) {
        cat_err(err, "%s: out of memory reading %zu bytes", path, size);
        close(fd);
        return NULL;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            cat_err(err, "%s: read failed: %s", path, r < 0 ? strerror(errno) : "unexpected end");
            cat_host_free(buf);
            close(fd);
            return NULL;
        }
        got += (size_t)r;
    }
    close(fd);
    buf[size] = '\0';
    *len = size;
    return buf;
}

uint64_t cat_splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

char *cat_put_int(char *p, int64_t v) {
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    if (v < 0) *p++ = '-';
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        *p++ = tmp[--n];
    return p;
}

int cat_write_text(const char *path, const void *data, size_t n, CatError *err) {
    /* into a new file renamed over path: a reader never sees half a file,
     * and a column mapped from path (a table written back to its own
     * folder) keeps the old file's pages */
    char *tmp = cat_concat3(path, ".tmp", "");
    if (!tmp) return cat_err(err, "%s: out of memory", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        cat_err(err, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    int bad = n && fwrite(data, 1, n, f) != n;
    if (fclose(f) != 0) bad = 1;
    if (!bad && rename(tmp, path) != 0) bad = 1;
    if (bad) {
        cat_err(err, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return bad ? -1 : 0;
}
