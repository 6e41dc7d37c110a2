/*
 * like.c -- SQLite's LIKE over UTF-8 text: `%` matches any run of
 * characters, `_` exactly one character (a UTF-8 sequence, not a byte),
 * and letters compare case-insensitively in ASCII only ('A' LIKE 'a' but
 * not 'É' LIKE 'é'), as SQLite's built-in like() does without ICU.
 */
#include <unistd.h>

#include "planner/planner.h"

enum { LIKE_MATCH = 0, LIKE_NOMATCH = 1, LIKE_NOWILD = 2 };

/* Read one character at *z (advancing *z): its code point for a UTF-8
 * sequence, a lone continuation or invalid byte as itself (SQLite's
 * sqlite3Utf8Read rule: a lead byte >= 0xC0 takes every following
 * 10xxxxxx byte). */
static uint32_t utf8_read(const unsigned char **z) {
    uint32_t c = *(*z)++;
    if (c >= 0xC0) {
        c = c >= 0xF0 ? c & 0x07 : c >= 0xE0 ? c & 0x0F : c & 0x1F;
        while ((**z & 0xC0) == 0x80)
            c = (c << 6) | (*(*z)++ & 0x3F);
    }
    return c;
}

/* ASCII lower case of code point c (others unchanged). */
static uint32_t fold(uint32_t c) {
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* Match s against pattern p: LIKE_MATCH, LIKE_NOMATCH, or LIKE_NOWILD when
 * s ran out under a `%`, so no later `%` position can match either (this
 * keeps patterns with many `%` linear, as in SQLite's patternCompare). */
static int like_at(const unsigned char *p, const unsigned char *s) {
    while (*p) {
        uint32_t c = utf8_read(&p);
        if (c == '%') {
            /* `%%` is `%`; each `_` after it still takes one character */
            while (*p == '%' || *p == '_') {
                if (*p++ == '_') {
                    if (!*s) return LIKE_NOWILD;
                    utf8_read(&s);
                }
            }
            if (!*p) return LIKE_MATCH;
            /* the next pattern character, when an ASCII letter or symbol,
             * must start the match: skip to its next occurrence (either
             * case) by bytes -- an ASCII byte never occurs inside a UTF-8
             * sequence -- instead of trying every position */
            unsigned char lo = 0, up = 0;
            if (*p < 0x80 && *p != '_') {
                lo = (unsigned char)fold(*p);
                up = lo >= 'a' && lo <= 'z' ? (unsigned char)(lo - ('a' - 'A')) : lo;
            }
            while (*s) {
                if (lo) {
                    while (*s && *s != lo && *s != up)
                        s++;
                    if (!*s) break;
                }
                int r = like_at(p, s);
                if (r != LIKE_NOMATCH) return r;
                utf8_read(&s);
            }
            return LIKE_NOWILD;
        }
        if (!*s) return LIKE_NOMATCH;
        uint32_t sc = utf8_read(&s);
        if (c != '_' && fold(c) != fold(sc)) return LIKE_NOMATCH;
    }
    return *s ? LIKE_NOMATCH : LIKE_MATCH;
}

int plan_like_match(const char *s, const char *pattern) {
    return like_at((const unsigned char *)pattern, (const unsigned char *)s) == LIKE_MATCH;
}

/* One thread's share of plan_like_table. */
typedef struct LikeJob {
    const CatDict *d;
    const char *pat;
    int negated;
    int64_t *tab;
} LikeJob;

static void like_worker(void *arg, int t, int nt) {
    const LikeJob *j = arg;
    int64_t n = j->d->n, lo = n * t / nt, hi = n * (t + 1) / nt;
    for (int64_t i = lo; i < hi; i++)
        j->tab[i] = plan_like_match(cat_dict_str(j->d, i), j->pat) ^ (j->negated ? 1 : 0);
}

void plan_like_table(const CatDict *d, const char *pattern, int negated, int64_t *tab) {
    LikeJob j = {d, pattern, negated, tab};
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = d->n < 65536 ? 1 : (int)(ncpu < 1 ? 1 : ncpu > 64 ? 64 : ncpu);
    if (nt > 1 && prim_parallel(nt, like_worker, &j) == 0) return;
    like_worker(&j, 0, 1);
}
