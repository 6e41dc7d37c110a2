/*
 * like.c -- SQLite's LIKE over UTF-8 text: `%` matches any run of
 * characters, `_` exactly one character (a UTF-8 sequence, not a byte),
 * and letters compare case-insensitively in ASCII only ('A' LIKE 'a' but
 * not 'É' LIKE 'é'), as SQLite's built-in like() does without ICU.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
static int like_at(const unsigned char *p, const unsigned char *s, uint32_t esc) {
    while (*p) {
        uint32_t c = utf8_read(&p);
        if (esc && c == esc) {
            /* LIKE ... ESCAPE: the next character is itself (an escape at
             * the end matches nothing, as in SQLite) */
            if (!*p || !*s) return LIKE_NOMATCH;
            c = utf8_read(&p);
            if (fold(c) != fold(utf8_read(&s))) return LIKE_NOMATCH;
            continue;
        }
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
            if (*p < 0x80 && *p != '_' && !(esc && *p == esc)) {
                lo = (unsigned char)fold(*p);
                up = lo >= 'a' && lo <= 'z' ? (unsigned char)(lo - ('a' - 'A')) : lo;
            }
            while (*s) {
                if (lo) {
                    while (*s && *s != lo && *s != up)
                        s++;
                    if (!*s) break;
                }
                int r = like_at(p, s, esc);
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
    return like_at((const unsigned char *)pattern, (const unsigned char *)s, 0) == LIKE_MATCH;
}

/* TUNING: literal segments a pattern may have for the segment matcher
 * (TPC-H's have at most 2; longer patterns use like_at). */
#define LIKE_SEG_MAX 8

/* An ASCII pattern of literal runs separated by `%` (no `_`), compiled
 * for like_seg: '%special%requests%' is the runs "special", "requests",
 * unanchored at both ends. */
typedef struct LikeSegs {
    int nseg, start_anchored, end_anchored;
    const unsigned char *seg[LIKE_SEG_MAX];
    size_t len[LIKE_SEG_MAX];
} LikeSegs;

/* Compile pattern into *ls; 0, or -1 when the pattern does not have that
 * form (non-ASCII bytes, `_`, too many runs). Only ASCII patterns: their
 * bytes never occur inside a UTF-8 sequence of the text, so a byte-wise
 * search finds exactly the character positions like_at would try. */
static int like_compile_segs(const char *pattern, LikeSegs *ls) {
    const unsigned char *p = (const unsigned char *)pattern;
    memset(ls, 0, sizeof *ls);
    for (const unsigned char *q = p; *q; q++)
        if (*q >= 0x80 || *q == '_') return -1;
    size_t n = strlen(pattern);
    ls->start_anchored = n == 0 || p[0] != '%';
    ls->end_anchored = n == 0 || p[n - 1] != '%';
    for (size_t i = 0; i < n;) {
        if (p[i] == '%') {
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && p[j] != '%')
            j++;
        if (ls->nseg == LIKE_SEG_MAX) return -1;
        ls->seg[ls->nseg] = p + i;
        ls->len[ls->nseg++] = j - i;
        i = j;
    }
    return 0;
}

/* s[0..m) equals the ASCII run seg[0..m), letters compared ASCII
 * case-insensitively. */
static int seg_eq(const unsigned char *s, const unsigned char *seg, size_t m) {
    for (size_t k = 0; k < m; k++)
        if (s[k] != seg[k] && fold(s[k]) != fold(seg[k])) return 0;
    return 1;
}

/* 8 bytes at p as a little-endian word. */
static uint64_t load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

#define LIKE_ONES 0x0101010101010101ULL
#define LIKE_HIGHS 0x8080808080808080ULL

/* The high bit of every byte of v that is zero (and possibly of a byte
 * above a zero one: a superset, never missing a zero byte). */
static uint64_t zero_bytes(uint64_t v) {
    return (v - LIKE_ONES) & ~v & LIKE_HIGHS;
}

/* Leftmost position >= 0 of seg (m >= 1 bytes) in s[0..n), or -1. Runs of
 * 2 or more bytes on a little-endian host: 8 candidate positions at a
 * time, a position is a candidate when its byte and the next equal the
 * run's first two (letters folded by OR 0x20, zero bytes found by the
 * classic word trick); candidates are checked in place, leftmost first.
 * Otherwise memchr of the first byte (both cases of a letter). */
static int64_t seg_find(const unsigned char *s, size_t n, const unsigned char *seg, size_t m) {
    if (m > n) return -1;
    size_t last = n - m; /* last possible start */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (m >= 2) {
        unsigned char c0 = (unsigned char)fold(seg[0]), c1 = (unsigned char)fold(seg[1]);
        uint64_t f0 = c0 >= 'a' && c0 <= 'z' ? 0x20 * LIKE_ONES : 0;
        uint64_t f1 = c1 >= 'a' && c1 <= 'z' ? 0x20 * LIKE_ONES : 0;
        uint64_t b0 = c0 * LIKE_ONES, b1 = c1 * LIKE_ONES;
        size_t i = 0;
#if defined(__SSE2__)
        /* the same test on 16 positions at a time (SSE2 is part of every
         * x86-64): about twice the SWAR loop's rate on TPC-H's comments */
        const __m128i v0 = _mm_set1_epi8((char)c0), v1 = _mm_set1_epi8((char)c1);
        const __m128i g0 = _mm_set1_epi8((char)(f0 & 0xff)), g1 = _mm_set1_epi8((char)(f1 & 0xff));
        for (; i + 17 <= n && i <= last; i += 16) {
            __m128i a = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(s + i)), g0);
            __m128i b =
                _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(s + i + 1)), g1);
            unsigned c = (unsigned)_mm_movemask_epi8(
                _mm_and_si128(_mm_cmpeq_epi8(a, v0), _mm_cmpeq_epi8(b, v1)));
            while (c) {
                size_t at = i + (size_t)__builtin_ctz(c);
                if (at > last) return -1;
                if (seg_eq(s + at, seg, m)) return (int64_t)at;
                c &= c - 1;
            }
        }
#endif
        for (; i + 9 <= n && i <= last; i += 8) {
            uint64_t c =
                zero_bytes((load64(s + i) | f0) ^ b0) & zero_bytes((load64(s + i + 1) | f1) ^ b1);
            while (c) {
                size_t at = i + (size_t)(__builtin_ctzll(c) >> 3);
                if (at > last) return -1;
                if (seg_eq(s + at, seg, m)) return (int64_t)at;
                c &= c - 1;
            }
        }
        for (; i <= last; i++)
            if (seg_eq(s + i, seg, m)) return (int64_t)i;
        return -1;
    }
#endif
    unsigned char lo = (unsigned char)fold(seg[0]);
    unsigned char up = lo >= 'a' && lo <= 'z' ? (unsigned char)(lo - ('a' - 'A')) : lo;
    size_t i = 0;
    while (i <= last) {
        size_t lim = last + 1 - i; /* candidate starts left */
        const unsigned char *a = memchr(s + i, lo, lim);
        if (up != lo) {
            const unsigned char *b = memchr(s + i, up, a ? (size_t)(a - (s + i)) : lim);
            if (b) a = b;
        }
        if (!a) return -1;
        size_t at = (size_t)(a - s);
        if (seg_eq(a + 1, seg + 1, m - 1)) return (int64_t)at;
        i = at + 1;
    }
    return -1;
}

/* s (n bytes) LIKE the compiled pattern: the first run at the start when
 * anchored, each middle run at its leftmost place after the previous one
 * (leftmost is always safe: it leaves the most text for what follows),
 * the last run at the end when anchored. */
static int like_seg(const LikeSegs *ls, const unsigned char *s, size_t n) {
    size_t pos = 0;
    int first = 0, last = ls->nseg;
    if (ls->nseg == 0) return ls->start_anchored ? n == 0 : 1;
    if (ls->start_anchored) {
        if (ls->len[0] > n || !seg_eq(s, ls->seg[0], ls->len[0])) return 0;
        pos = ls->len[0];
        first = 1;
        if (ls->nseg == 1 && ls->end_anchored) return pos == n;
    }
    if (ls->end_anchored) last--;
    for (int k = first; k < last; k++) {
        int64_t at = seg_find(s + pos, n - pos, ls->seg[k], ls->len[k]);
        if (at < 0) return 0;
        pos += (size_t)at + ls->len[k];
    }
    if (ls->end_anchored && last >= first && last < ls->nseg) {
        size_t m = ls->len[last];
        if (m > n - pos || !seg_eq(s + n - m, ls->seg[last], m)) return 0;
    }
    return 1;
}

/* One thread's share of plan_like_table. */
typedef struct LikeJob {
    const CatDict *d;
    const char *pat;
    int negated;
    int use_segs;
    LikeSegs segs;
    int64_t *tab;  /* one of tab ... */
    uint8_t *tab8; /* ... and tab8 */
    uint32_t esc;  /* LIKE ... ESCAPE's character, 0 for none */
} LikeJob;

/* Entry i of j's dictionary LIKE its pattern (before negation). */
static int like_entry(const LikeJob *j, int64_t i) {
    if (j->use_segs)
        return like_seg(&j->segs, (const unsigned char *)cat_dict_str(j->d, i),
                        (size_t)cat_dict_len(j->d, i));
    return like_at((const unsigned char *)j->pat, (const unsigned char *)cat_dict_str(j->d, i),
                   j->esc) == LIKE_MATCH;
}

static void like_worker(void *arg, int t, int nt) {
    const LikeJob *j = arg;
    int64_t n = j->d->n, lo = n * t / nt, hi = n * (t + 1) / nt;
    int neg = j->negated ? 1 : 0;
    if (j->tab8) {
        for (int64_t i = lo; i < hi; i++)
            j->tab8[i] = (uint8_t)(like_entry(j, i) ^ neg);
        return;
    }
    for (int64_t i = lo; i < hi; i++)
        j->tab[i] = like_entry(j, i) ^ neg;
}

/* Fill tab (int64) or tab8 (bytes) with the LIKE table of d's entries:
 * patterns of literal runs and `%` take the segment matcher, others
 * like_at; on all cores for large dictionaries. */
static void like_fill(const CatDict *d, const char *pattern, uint32_t esc, int negated,
                      int64_t *tab, uint8_t *tab8) {
    LikeJob j = {d, pattern, negated, 0, {0}, tab, tab8, esc};
    j.use_segs = !esc && like_compile_segs(pattern, &j.segs) == 0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = d->n < 65536 ? 1 : (int)(ncpu < 1 ? 1 : ncpu > 64 ? 64 : ncpu);
    if (nt > 1 && prim_parallel(nt, like_worker, &j) == 0) return;
    like_worker(&j, 0, 1);
}

void plan_like_table(const CatDict *d, const char *pattern, uint32_t esc, int negated,
                     int64_t *tab) {
    like_fill(d, pattern, esc, negated, tab, NULL);
}

int plan_like_escape(const char *esc, uint32_t *cp) {
    const unsigned char *z = (const unsigned char *)esc;
    if (!z || !*z) return 0;
    *cp = utf8_read(&z);
    return *z == 0;
}

void plan_like_bytes(const CatDict *d, const char *pattern, int negated, uint8_t *tab) {
    like_fill(d, pattern, 0, negated, NULL, tab);
}

double plan_like_share(const CatDict *d, const char *pattern) {
    if (!d || d->n <= 0) return 0;
    LikeJob j = {d, pattern, 0, 0, {0}, NULL, NULL, 0};
    j.use_segs = like_compile_segs(pattern, &j.segs) == 0;
    int64_t k = d->n < 4096 ? d->n : 4096, pass = 0;
    for (int64_t s = 0; s < k; s++)
        pass += like_entry(&j, d->n * s / k + (d->n / k) / 2);
    return (double)pass / (double)k;
}

/* plan_like_match through the segment matcher when the pattern allows it
 * (tests compare the two). */
int plan_like_match_fast(const char *s, const char *pattern) {
    LikeSegs ls;
    if (like_compile_segs(pattern, &ls) != 0) return plan_like_match(s, pattern);
    return like_seg(&ls, (const unsigned char *)s, strlen(s));
}

int64_t plan_dictlike_min(void) {
    const char *e = getenv("GQP_DICTLIKE_MIN");
    if (e && *e) {
        char *end = NULL;
        long long v = strtoll(e, &end, 10);
        if (end && !*end && v >= 1) return (int64_t)v;
    }
    /* TUNING: below this many entries the bind-time table (a few ms on
     * one core at most) costs less than a run-time node */
    return 65536;
}
