/*
 * funcs.c -- bind-time helpers of SQL scalar functions that work on
 * constants: civil dates, DuckDB's month arithmetic, SQLite's date()
 * modifiers, and UTF-8 string functions evaluated once per dictionary
 * entry (LENGTH, UPPER, LOWER, SUBSTR, TRIM, REPLACE, INSTR).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "planner/bexpr.h"
#include "primitives/primitives.h"

/* Days since 1970-01-01 of the proleptic Gregorian y-m-d; d may pass the
 * month's end (it then counts on into the next month, as SQLite's date
 * arithmetic normalizes). */
int64_t fn_days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468 + (d - 1);
}

/* Year, month (1..12) and day (1..31) of days since 1970-01-01. */
void fn_civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* Days in month m of year y. */
static int64_t month_days(int64_t y, int64_t m) {
    static const int md[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return md[m - 1] + (m == 2 && leap);
}

/* days plus n months, DuckDB's rule: the day is clamped to the end of the
 * resulting month (2021-01-31 + 1 month = 2021-02-28). */
int64_t fn_add_months(int64_t days, int64_t n) {
    int64_t y, m, d;
    fn_civil_from_days(days, &y, &m, &d);
    int64_t mm = y * 12 + (m - 1) + n;
    int64_t ny = mm >= 0 ? mm / 12 : -((-mm + 11) / 12);
    int64_t nm = mm - ny * 12 + 1;
    int64_t dim = month_days(ny, nm);
    return fn_days_from_civil(ny, nm, d > dim ? dim : d);
}

/* Parse n digits at s into *v; 0 or -1. */
static int digits(const char *s, int n, int64_t *v) {
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

/* 1 if s (len bytes) is SQLite's time part after a date: [ T]HH:MM[:SS[.f]]
 * then spaces. */
static int time_part(const char *s, size_t len) {
    size_t i = 1;
    int64_t v;
    while (i < len && s[i] == ' ' && s[0] == ' ')
        i++;
    if (i + 5 > len || digits(s + i, 2, &v) || s[i + 2] != ':' || digits(s + i + 3, 2, &v))
        return 0;
    i += 5;
    if (i < len && s[i] == ':') {
        if (i + 3 > len || digits(s + i + 1, 2, &v)) return 0;
        i += 3;
        if (i < len && s[i] == '.') {
            i++;
            while (i < len && s[i] >= '0' && s[i] <= '9')
                i++;
        }
    }
    return i == len;
}

/*
 * SQLite's date(s, mods...) for constant text, modelled on SQLite's
 * date.c: s is 'YYYY-MM-DD' (optionally a time part, which date() drops);
 * the date is kept as written (day up to 31) until a modifier computes
 * with it, which normalizes a day past the month's end. Modifiers:
 * '[+-]N day(s)|month(s)|year(s)' (months and years keep the day, then
 * normalize: 2021-01-31 +1 month is 2021-03-03), 'start of month|year|day'.
 * Writes 'YYYY-MM-DD' to out (>= 16 bytes) and returns 0; returns 1 where
 * SQLite's answer is NULL (malformed date), 2 for what is not folded here
 * (other modifiers, fractional amounts, times, Julian day numbers).
 */
int fn_sqlite_date(const char *s, const char *const *mods, int nmods, char *out) {
    int64_t y, m, d;
    size_t len = strlen(s);
    while (len && s[len - 1] == ' ')
        len--;
    if (len < 10 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &m) || s[7] != '-' ||
        digits(s + 8, 2, &d))
        return (s[0] >= '0' && s[0] <= '9') || strcasecmp(s, "now") == 0 ? 2 : 1;
    if (len > 10 && ((s[10] != ' ' && s[10] != 'T') || !time_part(s + 10, len - 10))) return 1;
    if (m < 1 || m > 12 || d < 1 || d > 31) return 1;
    int have_ymd = 1; /* y-m-d as written; else days */
    int64_t days = 0;
    for (int i = 0; i < nmods; i++) {
        const char *p = mods[i];
        if (strcasecmp(p, "start of day") == 0) continue;
        if (strcasecmp(p, "start of month") == 0 || strcasecmp(p, "start of year") == 0) {
            if (!have_ymd) fn_civil_from_days(days, &y, &m, &d);
            d = 1;
            if (p[9] == 'y' || p[9] == 'Y') m = 1;
            have_ymd = 1;
            continue;
        }
        char *end;
        if (isalpha((unsigned char)*p)) {
            /* SQLite's other named modifiers are not folded; any other
             * word is an invalid modifier: NULL */
            static const char *const named[] = {"start of", "weekday",   "unixepoch", "julianday",
                                                "auto",     "localtime", "utc",       "subsec",
                                                "ceiling",  "floor"};
            for (size_t k = 0; k < sizeof named / sizeof named[0]; k++)
                if (strncasecmp(p, named[k], strlen(named[k])) == 0) return 2;
            return 1;
        }
        if (!(*p == '+' || *p == '-' || (*p >= '0' && *p <= '9'))) return 2;
        if (p[*p == '+' || *p == '-'] < '0' || p[*p == '+' || *p == '-'] > '9') return 2;
        long long n = strtoll(p, &end, 10);
        if (*end != ' ') return 2; /* fractions, times */
        while (*end == ' ')
            end++;
        size_t ul = strlen(end);
        if (ul > 3 && (end[ul - 1] == 's' || end[ul - 1] == 'S')) ul--;
        if (ul == 3 && strncasecmp(end, "day", 3) == 0) {
            if (have_ymd) days = fn_days_from_civil(y, m, d);
            days += n;
        } else if ((ul == 5 && strncasecmp(end, "month", 5) == 0) ||
                   (ul == 4 && strncasecmp(end, "year", 4) == 0)) {
            if (!have_ymd) fn_civil_from_days(days, &y, &m, &d);
            int64_t mm = (y * 12 + (m - 1)) + (ul == 5 ? n : n * 12);
            int64_t ny = mm >= 0 ? mm / 12 : -((-mm + 11) / 12);
            days = fn_days_from_civil(ny, mm - ny * 12 + 1, d);
        } else {
            return 2;
        }
        have_ymd = 0;
    }
    if (!have_ymd) fn_civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999) return 2;
    snprintf(out, 16, "%04lld-%02lld-%02lld", (long long)y, (long long)m, (long long)d);
    return 0;
}

/* ------------------------------------------------- string functions -- */

/* Bytes of the UTF-8 character starting with byte c (1 for a stray
 * continuation byte). */
static size_t u8len(unsigned char c) {
    return c < 0xC0 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
}

/* Number of UTF-8 characters in s[0..n). */
static int64_t u8count(const char *s, size_t n) {
    int64_t k = 0;
    for (size_t i = 0; i < n; i += u8len((unsigned char)s[i]))
        k++;
    return k;
}

/* Byte offset of character k (clamped to n) in s[0..n). */
static size_t u8skip(const char *s, size_t n, int64_t k) {
    size_t i = 0;
    while (k-- > 0 && i < n)
        i += u8len((unsigned char)s[i]);
    return i < n ? i : n;
}

/* 1 if the UTF-8 character at c (cl bytes) is one of the characters of
 * set. */
static int in_set(const char *c, size_t cl, const char *set) {
    for (size_t i = 0, n = strlen(set); i < n;) {
        size_t l = u8len((unsigned char)set[i]);
        if (l == cl && memcmp(set + i, c, cl) == 0) return 1;
        i += l;
    }
    return 0;
}

/* The bytes [*lo, *hi) of in (n bytes) that SUBSTR, TRIM, LTRIM and RTRIM
 * keep (SQLite's rules; see fn_apply_str). Returns 1 for those functions,
 * 0 (nothing set) for the others. */
static int str_span(const FnStrOp *op, const char *in, size_t n, size_t *plo, size_t *phi) {
    size_t lo = 0, hi = n;
    switch (op->fn) {
    case FN_SUBSTR: {
        int64_t p1 = op->a, p2 = op->has_b ? op->b : INT64_MAX / 4;
        int neg = 0;
        if (p2 < 0) p2 = -p2, neg = 1;
        if (p1 < 0) {
            p1 += u8count(in, n);
            if (p1 < 0) {
                p2 += p1;
                if (p2 < 0) p2 = 0;
                p1 = 0;
            }
        } else if (p1 > 0) {
            p1--;
        } else if (p2 > 0) {
            p2--;
        }
        if (neg) {
            p1 -= p2;
            if (p1 < 0) p2 += p1, p1 = 0;
        }
        lo = u8skip(in, n, p1);
        hi = lo + u8skip(in + lo, n - lo, p2);
        break;
    }
    case FN_TRIM:
    case FN_LTRIM:
    case FN_RTRIM: {
        const char *set = op->s1 ? op->s1 : " ";
        if (op->fn != FN_RTRIM)
            while (lo < hi && in_set(in + lo, u8len((unsigned char)in[lo]), set))
                lo += u8len((unsigned char)in[lo]);
        if (op->fn != FN_LTRIM)
            while (hi > lo) {
                size_t s = hi - 1;
                while (s > lo && ((unsigned char)in[s] & 0xC0) == 0x80)
                    s--;
                if (!in_set(in + s, hi - s, set)) break;
                hi = s;
            }
        break;
    }
    default:
        return 0;
    }
    *plo = lo;
    *phi = hi;
    return 1;
}

/*
 * Apply the string function op to the text in[0..n). A text result is
 * malloc'd into *out (NUL-terminated, length *outlen) and 0 returned; an
 * integer result goes to *ival and 1 is returned; -1 when out of memory.
 * Semantics are SQLite's (func.c): LENGTH and INSTR count UTF-8
 * characters, UPPER/LOWER fold ASCII letters only, SUBSTR's start and
 * length follow substrFunc (negative start counts from the end, 0 is
 * before the first character, a negative length takes characters before
 * the start), TRIM removes any character of the set (default ' '), REPLACE
 * replaces every occurrence (an empty pattern leaves the text).
 */
int fn_apply_str(const FnStrOp *op, const char *in, size_t n, char **out, size_t *outlen,
                 int64_t *ival) {
    size_t lo = 0, hi = n;
    switch (op->fn) {
    case FN_LENGTH:
        *ival = u8count(in, strnlen(in, n));
        return 1;
    case FN_INSTR: {
        const char *hit = strstr(in, op->s1);
        *ival = hit ? u8count(in, (size_t)(hit - in)) + 1 : 0;
        return 1;
    }
    case FN_STARTS: {
        size_t pl = strlen(op->s1);
        *ival = pl <= n && memcmp(in, op->s1, pl) == 0;
        return 1;
    }
    case FN_LPAD:
    case FN_RPAD: {
        int64_t want = op->a > 0 ? op->a : 0, len = u8count(in, n);
        if (len >= want) { /* both keep the first characters */
            hi = u8skip(in, n, want);
            break;
        }
        /* the padding: s1's characters over and over, want - len of them */
        size_t pl = strlen(op->s1), pb = 0;
        int64_t need = want - len;
        for (int64_t k = 0, at = 0; k < need; k++) {
            size_t l = u8len((unsigned char)op->s1[at]);
            pb += l;
            at = (size_t)at + l >= pl ? 0 : at + (int64_t)l;
        }
        char *r = malloc(n + pb + 1);
        if (!r) return -1;
        char *pad = op->fn == FN_LPAD ? r : r + n;
        memcpy(op->fn == FN_LPAD ? r + pb : r, in, n);
        for (size_t k = 0; k < pb; k++)
            pad[k] = op->s1[k % pl];
        r[n + pb] = 0;
        *out = r;
        *outlen = n + pb;
        return 0;
    }
    case FN_CONCAT: {
        size_t l1 = strlen(op->s1), l2 = strlen(op->s2);
        char *r = malloc(l1 + n + l2 + 1);
        if (!r) return -1;
        memcpy(r, op->s1, l1);
        memcpy(r + l1, in, n);
        memcpy(r + l1 + n, op->s2, l2);
        r[l1 + n + l2] = 0;
        *out = r;
        *outlen = l1 + n + l2;
        return 0;
    }
    case FN_REPLACE: {
        size_t pl = strlen(op->s1), rl = strlen(op->s2), cap = n + 1, k = 0;
        if (pl > 0)
            for (const char *p = in; (p = strstr(p, op->s1)); p += pl)
                cap += rl;
        char *r = malloc(cap);
        if (!r) return -1;
        for (size_t i = 0; i < n;) {
            if (pl > 0 && i + pl <= n && memcmp(in + i, op->s1, pl) == 0) {
                memcpy(r + k, op->s2, rl);
                k += rl;
                i += pl;
            } else {
                r[k++] = in[i++];
            }
        }
        r[k] = 0;
        *out = r;
        *outlen = k;
        return 0;
    }
    default: /* UPPER, LOWER: the whole text; SUBSTR, TRIM*: a span */
        str_span(op, in, n, &lo, &hi);
        break;
    }
    char *r = malloc(hi - lo + 1);
    if (!r) return -1;
    memcpy(r, in + lo, hi - lo);
    r[hi - lo] = 0;
    for (size_t i = 0; i < hi - lo; i++) {
        if (op->fn == FN_UPPER && r[i] >= 'a' && r[i] <= 'z') r[i] = (char)(r[i] - 32);
        if (op->fn == FN_LOWER && r[i] >= 'A' && r[i] <= 'Z') r[i] = (char)(r[i] + 32);
    }
    *out = r;
    *outlen = hi - lo;
    return 0;
}

/* Entries of a dictionary below which fn_map_dict stays on one thread. */
#define MAP_DICT_PAR_MIN 65536
#define MAP_DICT_MAX_THREADS 64

/* fn_map_dict's work, shared by its threads: entries [lo, hi) of d. */
typedef struct MapDictJob {
    const CatDict *d;
    const FnStrOp *op;
    int64_t lo, hi;
    int is_int;
    int64_t *tab;      /* integer results, or (text) the final codes */
    const char **strs; /* text results: spans of d's bytes or owned[i] */
    size_t *lens;
    char **owned;   /* results fn_apply_str allocated (NULL for span ops) */
    int32_t *codes; /* codes in the thread's own dictionary */
    CatDict *local[MAP_DICT_MAX_THREADS];
    int64_t base[MAP_DICT_MAX_THREADS]; /* first entry of local[t] in gcodes */
    const int32_t *gcodes;              /* local code -> final code */
    int failed[MAP_DICT_MAX_THREADS];
} MapDictJob;

/* Thread t's share of the entries. */
static void map_range(const MapDictJob *j, int t, int nt, int64_t *lo, int64_t *hi) {
    int64_t n = j->hi - j->lo;
    *lo = j->lo + n * t / nt;
    *hi = j->lo + n * (t + 1) / nt;
}

/* Phase 1: apply the function to thread t's entries; text results are
 * interned into the thread's own (small, cache-resident when the results
 * repeat) dictionary. Spans of SUBSTR/TRIM point into d's bytes: no copy. */
static void map_dict_apply(void *arg, int t, int nt) {
    MapDictJob *j = arg;
    int64_t lo, hi;
    map_range(j, t, nt, &lo, &hi);
    for (int64_t i = lo; i < hi; i++) {
        const char *in = cat_dict_str(j->d, i);
        size_t n = (size_t)cat_dict_len(j->d, i), slo, shi;
        if (!j->is_int && str_span(j->op, in, n, &slo, &shi)) {
            j->strs[i] = in + slo;
            j->lens[i] = shi - slo;
            continue;
        }
        char *o = NULL;
        size_t ol = 0;
        int k = fn_apply_str(j->op, in, n, &o, &ol, &j->tab[i]);
        if (k < 0) {
            j->failed[t] = 1;
            return;
        }
        if (k == 0) j->owned[i] = o, j->strs[i] = o, j->lens[i] = ol;
    }
    if (!j->is_int &&
        !(j->local[t] = cat_dict_build(j->strs + lo, j->lens + lo, hi - lo, j->codes + lo)))
        j->failed[t] = 1;
}

/* Phase 2: thread t's entries get their codes in the merged dictionary. */
static void map_dict_remap(void *arg, int t, int nt) {
    MapDictJob *j = arg;
    int64_t lo, hi;
    map_range(j, t, nt, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
        j->tab[i] = j->gcodes[j->base[t] + j->codes[i]];
}

/* Run fn over the job on nt threads (one when that fails). */
static void map_dict_run(void *j, int nt, void (*fn)(void *, int, int)) {
    if (nt > 1 && prim_parallel(nt, fn, j) == 0) return;
    for (int t = 0; t < nt; t++)
        fn(j, t, nt);
}

/* A string function's result over one dictionary, kept in the arena for
 * the same function of the same dictionary elsewhere in the statement
 * (TPC-H Q22 takes substring(c_phone FROM 1 FOR 2) in its SELECT list and
 * in its WHERE). */
typedef struct FnMemo {
    const CatDict *d;
    FnStrOp op;
    const BExpr *r;
    struct FnMemo *next;
} FnMemo;

static int same_op(const FnStrOp *x, const FnStrOp *y) {
    return x->fn == y->fn && x->a == y->a && x->b == y->b && x->has_b == y->has_b &&
           bx_same_text(x->s1, y->s1) && bx_same_text(x->s2, y->s2);
}

/* A STRING lookup of idx (codes, or a computed index) into tab's n codes
 * of dictionary d; NULL when out of memory. */
static BExpr *text_lookup(PlanArena *a, BExpr *idx, const int64_t *tab, int64_t n, const CatDict *d,
                          int64_t pos) {
    BExpr *r = bx_new(a, BE_LOOKUP, CAT_STRING, pos);
    if (r) {
        r->a = idx;
        r->table = tab;
        r->table_n = n;
        r->dict = d;
    }
    return r;
}

static BExpr *fn_map_dict_once(PlanArena *a, BExpr *x, const FnStrOp *op, int64_t pos,
                               int64_t *tab);

/* fn_map_dict_runs's work: thread t's entries [lo, hi) of d, the first
 * result of each run of equal results (heads), every entry's run. */
typedef struct RunsJob {
    const CatDict *d;
    const FnStrOp *op;
    int64_t *tab; /* run within the thread, then the final code */
    const char **hs[MAP_DICT_MAX_THREADS];
    size_t *hl[MAP_DICT_MAX_THREADS];
    int64_t nh[MAP_DICT_MAX_THREADS], base[MAP_DICT_MAX_THREADS];
    int fail[MAP_DICT_MAX_THREADS];
    const int32_t *gcodes;
} RunsJob;

static void runs_scan(void *arg, int t, int nt) {
    RunsJob *j = arg;
    int64_t n = j->d->n, lo = n * t / nt, hi = n * (t + 1) / nt, nh = 0, cap = 0;
    const char **hs = NULL;
    size_t *hl = NULL;
    for (int64_t i = lo; i < hi; i++) {
        const char *in = cat_dict_str(j->d, i);
        size_t slo, shi;
        if (!str_span(j->op, in, (size_t)cat_dict_len(j->d, i), &slo, &shi)) goto fail;
        const char *sp = in + slo;
        size_t sl = shi - slo;
        if (nh > 0) {
            int c = cat_text_cmp(sp, sl, hs[nh - 1], hl[nh - 1]);
            if (c < 0) goto fail; /* not in order: the general path sorts */
            if (c == 0) {
                j->tab[i] = nh - 1;
                continue;
            }
        }
        if (nh == cap) {
            cap = cap ? 2 * cap : 64;
            const char **ns = realloc(hs, sizeof *hs * (size_t)cap);
            if (ns) hs = ns;
            size_t *nl = ns ? realloc(hl, sizeof *hl * (size_t)cap) : NULL;
            if (!nl) goto fail;
            hl = nl;
        }
        hs[nh] = sp;
        hl[nh] = sl;
        j->tab[i] = nh++;
    }
    j->hs[t] = hs;
    j->hl[t] = hl;
    j->nh[t] = nh;
    return;
fail:
    free(hs);
    free(hl);
    j->fail[t] = 1;
}

static void runs_remap(void *arg, int t, int nt) {
    RunsJob *j = arg;
    int64_t n = j->d->n, lo = n * t / nt, hi = n * (t + 1) / nt;
    for (int64_t i = lo; i < hi; i++)
        j->tab[i] = j->gcodes[j->base[t] + j->tab[i]];
}

/* SUBSTR over a sorted dictionary whose results never decrease in byte
 * order (SUBSTR(x, 1, k), TPC-H Q22's country codes): equal results are
 * adjacent, so one pass over runs gives every entry its code, with no
 * copy or sort of n results (the general path interns all of them). The
 * same dictionary and table as fn_map_dict_once; NULL when the results
 * are not in order (or out of memory): the caller takes the general path. */
static BExpr *fn_map_dict_runs(PlanArena *a, BExpr *x, const FnStrOp *op, int64_t pos,
                               int64_t *tab) {
    const CatDict *d = x->dict;
    int64_t n = d->n;
    if (op->fn != FN_SUBSTR || d->unsorted || n < 1) return NULL;
    RunsJob *j = calloc(1, sizeof *j);
    const char **gs = NULL;
    size_t *gl = NULL;
    int32_t *gcodes = NULL;
    BExpr *r = NULL;
    int c = prim_ncores();
    int nt = c < 1 ? 1 : c > MAP_DICT_MAX_THREADS ? MAP_DICT_MAX_THREADS : c;
    if (n < MAP_DICT_PAR_MIN) nt = 1;
    if (!j || !tab) goto done;
    j->d = d;
    j->op = op;
    j->tab = tab;
    map_dict_run(j, nt, runs_scan);
    int64_t total = 0;
    for (int t = 0; t < nt; t++) {
        if (j->fail[t]) goto done;
        total += j->nh[t];
    }
    gs = malloc(sizeof *gs * (size_t)(total ? total : 1));
    gl = malloc(sizeof *gl * (size_t)(total ? total : 1));
    gcodes = malloc(sizeof *gcodes * (size_t)(total ? total : 1));
    if (!gs || !gl || !gcodes) goto done;
    int64_t g = 0;
    for (int t = 0; t < nt; t++) {
        int64_t k = 0;
        if (j->nh[t] > 0 && g > 0) {
            /* a thread's first run may go on from the previous thread's last */
            int cmp = cat_text_cmp(j->hs[t][0], j->hl[t][0], gs[g - 1], gl[g - 1]);
            if (cmp < 0) goto done;
            if (cmp == 0) k = 1;
        }
        j->base[t] = g - k;
        for (; k < j->nh[t]; k++, g++)
            gs[g] = j->hs[t][k], gl[g] = j->hl[t][k];
    }
    CatDict *nd = cat_dict_build(gs, gl, g, gcodes);
    if (!nd || plan_arena_own_dict(a, nd) != 0) goto done;
    j->gcodes = gcodes;
    map_dict_run(j, nt, runs_remap);
    r = text_lookup(a, x, tab, n, nd, pos);
done:
    if (j)
        for (int t = 0; t < MAP_DICT_MAX_THREADS; t++) {
            free(j->hs[t]);
            free(j->hl[t]);
        }
    free(j);
    free(gs);
    free(gl);
    free(gcodes);
    return r;
}

/* Dictionaries below this many entries keep the table of one code per
 * entry for a prefix too (cheap to build, one load per row). */
#define PREFIX_RUNS_MIN 65536
/* Most runs a prefix keeps as run starts (POP_RUNS searches them per row:
 * 12 steps over 32 KiB); more runs go to the table of one code per entry. */
#define PREFIX_RUNS_MAX 4096

/* 1 if op takes a prefix of every text: SUBSTR(x, 1, k) or SUBSTR(x, 0,
 * k) with k >= 0 (str_span starts every span at 0). */
static int prefix_op(const FnStrOp *op) {
    return op->fn == FN_SUBSTR && (op->a == 0 || op->a == 1) && op->has_b && op->b >= 0;
}

/* 1 if entry i of d has the prefix (op) h[0..hl). */
static int has_prefix(const CatDict *d, const FnStrOp *op, int64_t i, const char *h, size_t hl) {
    const char *in = cat_dict_str(d, i);
    size_t lo, hi;
    str_span(op, in, (size_t)cat_dict_len(d, i), &lo, &hi);
    return hi - lo == hl && memcmp(in + lo, h, hl) == 0;
}

/*
 * A prefix (prefix_op) of a sorted dictionary's texts as runs: prefixes
 * never decrease in byte order, so the entries with one prefix are one
 * range of codes, found by galloping from its first entry -- O(runs x
 * log n) prefixes instead of one per entry, and a BE_RUNS of the run
 * starts instead of a table of one code per entry (TPC-H Q22's
 * substring(c_phone FROM 1 FOR 2): 25 runs of 4.5M phone numbers at SF
 * 30, whose 36 MB table took 29 ms to build per statement and was copied
 * to the device by every map that read it). NULL when x does not qualify
 * (small or unsorted dictionary, more than PREFIX_RUNS_MAX runs) or out of
 * memory: the caller builds the table.
 */
static BExpr *fn_map_dict_prefix(PlanArena *a, BExpr *x, const FnStrOp *op, int64_t pos) {
    const CatDict *d = x->dict;
    int64_t n = d->n, g = 0;
    if (!prefix_op(op) || d->unsorted || n < PREFIX_RUNS_MIN) return NULL;
    int64_t *starts = malloc(sizeof *starts * PREFIX_RUNS_MAX);
    const char **hs = malloc(sizeof *hs * PREFIX_RUNS_MAX);
    size_t *hl = malloc(sizeof *hl * PREFIX_RUNS_MAX);
    int32_t *codes = malloc(sizeof *codes * PREFIX_RUNS_MAX);
    int64_t *tab = NULL;
    BExpr *r = NULL;
    if (!starts || !hs || !hl || !codes) goto done;
    for (int64_t i = 0; i < n;) {
        if (g == PREFIX_RUNS_MAX) goto done;
        const char *in = cat_dict_str(d, i);
        size_t lo, hi;
        str_span(op, in, (size_t)cat_dict_len(d, i), &lo, &hi);
        starts[g] = i, hs[g] = in + lo, hl[g] = hi - lo;
        /* the run's last entry: entries in [i, last] have the prefix,
         * end does not (or is n) */
        int64_t last = i, end = n;
        for (int64_t step = 1; last + step < n; step *= 2) {
            if (!has_prefix(d, op, last + step, hs[g], hl[g])) {
                end = last + step;
                break;
            }
            last += step;
        }
        while (end - last > 1) {
            int64_t mid = last + (end - last) / 2;
            if (has_prefix(d, op, mid, hs[g], hl[g]))
                last = mid;
            else
                end = mid;
        }
        g++;
        i = end;
    }
    CatDict *nd = cat_dict_build(hs, hl, g, codes);
    if (!nd || plan_arena_own_dict(a, nd) != 0) goto done;
    for (int64_t k = 0; k < g; k++)
        if (codes[k] != k) goto done; /* heads ascend and differ: never */
    if (!(tab = plan_alloc(a, sizeof *tab * (size_t)g))) goto done;
    memcpy(tab, starts, sizeof *tab * (size_t)g);
    if ((r = bx_new(a, BE_RUNS, CAT_STRING, pos))) {
        r->a = x;
        r->table = tab;
        r->table_n = g;
        r->dict = nd;
    }
done:
    free(starts);
    free(hs);
    free(hl);
    free(codes);
    return r;
}

/*
 * The string function op applied to the STRING expression x (a non-NULL
 * constant, or anything with a dictionary) once per dictionary entry: an
 * integer result is a BE_LOOKUP of type INT64 from x's codes; a text
 * result a new dictionary of the results plus a BE_LOOKUP from x's codes
 * to its codes. A constant folds to a constant. NULL when out of memory.
 * Large dictionaries (a column of 15M distinct comments) run on every
 * core: each thread interns its share into a dictionary of its own, then
 * the threads' dictionaries are merged (few entries when results repeat,
 * as substrings of phone numbers do) and the codes remapped; SUBSTR whose
 * results come in order takes one pass over runs instead
 * (fn_map_dict_runs). The result is kept in a's memo for the same
 * function of the same dictionary elsewhere in the statement.
 */
BExpr *fn_map_dict(PlanArena *a, BExpr *x, const FnStrOp *op, int64_t pos) {
    if (x->kind == BE_CONST) return fn_map_dict_once(a, x, op, pos, NULL);
    FnMemo **head = (FnMemo **)plan_arena_memo(a);
    for (FnMemo *m = *head; m; m = m->next)
        if (m->d == x->dict && same_op(&m->op, op)) {
            BExpr *r = bx_new(a, m->r->kind, m->r->type, pos);
            if (!r) return NULL;
            *r = *m->r; /* the same table (and dictionary) over x's codes */
            r->a = x;
            r->pos = pos;
            return r;
        }
    BExpr *r = fn_map_dict_prefix(a, x, op, pos);
    if (!r) {
        /* one table for either path (the runs leave it to the general one
         * when the results are out of order) */
        int64_t *tab = plan_alloc(a, sizeof(int64_t) * (size_t)(x->dict->n ? x->dict->n : 1));
        if (!tab) return NULL;
        r = fn_map_dict_runs(a, x, op, pos, tab);
        if (!r) r = fn_map_dict_once(a, x, op, pos, tab);
    }
    FnMemo *m = r ? plan_alloc(a, sizeof *m) : NULL;
    BExpr *keep = m ? bx_new(a, r->kind, r->type, pos) : NULL;
    if (keep) { /* a private copy: the caller may change r */
        *keep = *r;
        m->d = x->dict;
        m->op = *op;
        m->r = keep;
        m->next = *head;
        *head = m;
    }
    return r;
}

/* fn_map_dict's general path, into tab (d->n entries; NULL: allocated
 * here). */
static BExpr *fn_map_dict_once(PlanArena *a, BExpr *x, const FnStrOp *op, int64_t pos,
                               int64_t *tab) {
    const CatDict *d = x->dict;
    int64_t n = d->n, alloc_n = n ? n : 1;
    MapDictJob *j = calloc(1, sizeof *j);
    if (!tab) tab = plan_alloc(a, sizeof(int64_t) * (size_t)alloc_n);
    BExpr *r = NULL;
    const char **gstrs = NULL;
    size_t *glens = NULL;
    int32_t *gcodes = NULL;
    int nt = 1;
    if (!j || !tab) goto done;
    j->d = d;
    j->op = op;
    j->lo = x->kind == BE_CONST ? x->ival : 0;
    j->hi = x->kind == BE_CONST ? x->ival + 1 : n;
    j->is_int = op->fn == FN_LENGTH || op->fn == FN_INSTR || op->fn == FN_STARTS;
    j->tab = tab;
    if (!j->is_int) {
        j->strs = calloc((size_t)alloc_n, sizeof *j->strs);
        j->lens = calloc((size_t)alloc_n, sizeof *j->lens);
        /* SUBSTR / TRIM results are spans of d's bytes: nothing to own */
        int spans =
            op->fn == FN_SUBSTR || op->fn == FN_TRIM || op->fn == FN_LTRIM || op->fn == FN_RTRIM;
        j->owned = spans ? NULL : calloc((size_t)alloc_n, sizeof *j->owned);
        j->codes = calloc((size_t)alloc_n, sizeof *j->codes);
        if (!j->strs || !j->lens || (!spans && !j->owned) || !j->codes) goto done;
    }
    if (j->hi - j->lo >= MAP_DICT_PAR_MIN) {
        int c = prim_ncores();
        nt = c < 1 ? 1 : c > MAP_DICT_MAX_THREADS ? MAP_DICT_MAX_THREADS : c;
    }
    map_dict_run(j, nt, map_dict_apply);
    for (int t = 0; t < nt; t++)
        if (j->failed[t]) goto done;
    if (j->is_int) {
        if (x->kind == BE_CONST) {
            r = bx_int(a, CAT_INT64, tab[j->lo], pos);
        } else if ((r = bx_new(a, BE_LOOKUP, CAT_INT64, pos))) {
            r->a = x;
            r->table = tab;
            r->table_n = n;
        }
        goto done;
    }
    /* merge the threads' dictionaries (each sorted and distinct) */
    int64_t total = 0;
    for (int t = 0; t < nt; t++)
        j->base[t] = total, total += j->local[t]->n;
    gstrs = malloc((size_t)(total ? total : 1) * sizeof *gstrs);
    glens = malloc((size_t)(total ? total : 1) * sizeof *glens);
    gcodes = malloc((size_t)(total ? total : 1) * sizeof *gcodes);
    if (!gstrs || !glens || !gcodes) goto done;
    for (int t = 0; t < nt; t++)
        for (int64_t u = 0; u < j->local[t]->n; u++) {
            gstrs[j->base[t] + u] = cat_dict_str(j->local[t], u);
            glens[j->base[t] + u] = (size_t)cat_dict_len(j->local[t], u);
        }
    CatDict *nd = cat_dict_build(gstrs, glens, total, gcodes);
    if (!nd || plan_arena_own_dict(a, nd) != 0) goto done;
    j->gcodes = gcodes;
    map_dict_run(j, nt, map_dict_remap);
    if (x->kind == BE_CONST) {
        if ((r = bx_new(a, BE_CONST, CAT_STRING, pos))) r->ival = tab[j->lo], r->dict = nd;
        goto done;
    }
    r = text_lookup(a, x, tab, n, nd, pos);
done:
    if (j) {
        for (int t = 0; t < nt; t++)
            cat_dict_free(j->local[t]);
        if (j->owned)
            for (int64_t i = j->lo; i < j->hi; i++)
                free(j->owned[i]);
        free(j->strs);
        free(j->lens);
        free(j->owned);
        free(j->codes);
    }
    free(j);
    free(gstrs);
    free(glens);
    free(gcodes);
    return r;
}

/* Entries of the table of a pair of dictionaries beyond which the binder
 * declines a pair lookup (Not implemented): 2^20 pairs (8 MiB of int64
 * table; for ||, as many strings to build at bind time). */
#define FN_PAIRS_MAX ((int64_t)1 << 20)

int64_t fn_pairs_max(void) {
    return FN_PAIRS_MAX;
}

/* x * |dict(y)| + y over the codes of STRING expressions x and y, INT64
 * (NULL when either is NULL). The BE_CASTs reinterpret a code as an
 * integer: in a map a code already is one (an I register). */
BExpr *fn_pair_index(PlanArena *a, BExpr *x, BExpr *y, int64_t pos) {
    BExpr *cx = bx_new(a, BE_CAST, CAT_INT64, pos), *cy = bx_new(a, BE_CAST, CAT_INT64, pos);
    BExpr *n = bx_int(a, CAT_INT64, y->dict->n, pos);
    BExpr *mul = bx_new(a, BE_BINARY, CAT_INT64, pos), *add = bx_new(a, BE_BINARY, CAT_INT64, pos);
    if (!cx || !cy || !n || !mul || !add) return NULL;
    cx->a = x, cy->a = y;
    mul->op = OP_MUL, mul->a = cx, mul->b = n;
    add->op = OP_ADD, add->a = mul, add->b = cy;
    return add;
}

/* A lookup of type t from the pair index of x and y into tab (x's entries
 * times y's), dictionary d for STRING. NULL when out of memory. */
static BExpr *pair_lookup(PlanArena *a, BExpr *x, BExpr *y, CatType t, const int64_t *tab,
                          const CatDict *d, int64_t pos) {
    BExpr *idx = fn_pair_index(a, x, y, pos);
    BExpr *r = idx ? bx_new(a, BE_LOOKUP, t, pos) : NULL;
    if (!r) return NULL;
    r->a = idx;
    r->table = tab;
    r->table_n = x->dict->n * y->dict->n;
    r->dict = d;
    return r;
}

/*
 * x || y of two STRING expressions with dictionaries (constants too) whose
 * entries multiply to at most fn_pairs_max(): the dictionary of every
 * concatenation of an entry of x's with one of y's, built now, and a
 * BE_LOOKUP from the pair index (x * |y| + y) to its codes, so it runs as
 * a map on either device. NULL when out of memory.
 */
BExpr *fn_concat_pairs(PlanArena *a, BExpr *x, BExpr *y, int64_t pos) {
    const CatDict *dx = x->dict, *dy = y->dict;
    int64_t n = dx->n * dy->n;
    int64_t *tab = plan_alloc(a, sizeof(int64_t) * (size_t)(n ? n : 1));
    char **strs = calloc((size_t)(n ? n : 1), sizeof(char *));
    size_t *lens = calloc((size_t)(n ? n : 1), sizeof(size_t));
    int32_t *codes = calloc((size_t)(n ? n : 1), sizeof(int32_t));
    BExpr *r = NULL;
    if (!tab || !strs || !lens || !codes) goto done;
    for (int64_t i = 0; i < dx->n; i++) {
        size_t li = (size_t)cat_dict_len(dx, i);
        for (int64_t j = 0; j < dy->n; j++) {
            size_t lj = (size_t)cat_dict_len(dy, j), k = (size_t)(i * dy->n + j);
            if (!(strs[k] = malloc(li + lj + 1))) goto done;
            memcpy(strs[k], cat_dict_str(dx, i), li);
            memcpy(strs[k] + li, cat_dict_str(dy, j), lj);
            strs[k][li + lj] = 0;
            lens[k] = li + lj;
        }
    }
    CatDict *nd = cat_dict_build((const char *const *)strs, lens, n, codes);
    if (!nd || plan_arena_own_dict(a, nd) != 0) goto done;
    for (int64_t k = 0; k < n; k++)
        tab[k] = codes[k];
    r = pair_lookup(a, x, y, CAT_STRING, tab, nd, pos);
done:
    if (strs)
        for (int64_t k = 0; k < n; k++)
            free(strs[k]);
    free(strs);
    free(lens);
    free(codes);
    return r;
}

/* x [NOT] LIKE p of two STRING expressions with dictionaries whose entries
 * multiply to at most fn_pairs_max(): SQLite's LIKE of every pair of
 * entries, computed now, and a BOOL BE_LOOKUP from the pair index (NULL
 * when either side is NULL). NULL when out of memory. */
BExpr *fn_like_pairs(PlanArena *a, BExpr *x, BExpr *p, int negated, int64_t pos) {
    const CatDict *dx = x->dict, *dp = p->dict;
    int64_t n = dx->n * dp->n;
    int64_t *tab = plan_alloc(a, sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!tab) return NULL;
    for (int64_t i = 0; i < dx->n; i++)
        for (int64_t j = 0; j < dp->n; j++)
            tab[i * dp->n + j] =
                plan_like_match(cat_dict_str(dx, i), cat_dict_str(dp, j)) ^ (negated ? 1 : 0);
    return pair_lookup(a, x, p, CAT_BOOL, tab, NULL, pos);
}

/* Parse SQLite's date-time text s: 'YYYY-MM-DD' then optionally [ T]
 * 'HH:MM[:SS[.fff]]', then spaces. Writes the fields (sec with its
 * fraction); 0, or 1 where SQLite's answer is NULL, or 2 for forms not
 * handled here (Julian day numbers, a time alone, 'now', time zones). */
static int parse_datetime(const char *s, int64_t *y, int64_t *m, int64_t *d, int64_t *hh,
                          int64_t *mi, double *sec) {
    size_t len = strlen(s);
    while (len && s[len - 1] == ' ')
        len--;
    *hh = *mi = 0;
    *sec = 0;
    if (len < 10 || digits(s, 4, y) || s[4] != '-' || digits(s + 5, 2, m) || s[7] != '-' ||
        digits(s + 8, 2, d)) {
        if (strcasecmp(s, "now") == 0) return 2;
        char *end;
        strtod(s, &end);
        if (end != s && (*end == 0 || *end == ' ')) return 2; /* a Julian day number */
        if (len >= 5 && s[2] == ':') return 2;                /* a time alone */
        return 1;
    }
    if (m[0] < 1 || m[0] > 12 || d[0] < 1 || d[0] > 31) return 1;
    if (len == 10) return 0;
    if ((s[10] != ' ' && s[10] != 'T') || !time_part(s + 10, len - 10)) {
        /* SQLite also takes a time zone suffix ([+-]HH:MM, Z) */
        const char *t = s + len - 1;
        return *t == 'Z' || *t == 'z' || (len > 16 && (t[-5] == '+' || t[-5] == '-')) ? 2 : 1;
    }
    size_t i = 11;
    while (i < len && s[i] == ' ')
        i++;
    digits(s + i, 2, hh);
    digits(s + i + 3, 2, mi);
    if (i + 5 < len && s[i + 5] == ':') *sec = strtod(s + i + 6, NULL);
    if (*hh > 24 || *mi > 59 || *sec >= 60.0) return 1;
    return 0;
}

/* 1 if every conversion of strftime format fmt is one fn_strftime
 * writes (%d %f %H %j %m %M %s %S %w %W %Y %%), else 0. */
int fn_strftime_ok(const char *fmt) {
    for (const char *p = fmt; *p; p++)
        if (*p == '%' && (!p[1] || !strchr("dfHjmMsSwWY%", *++p))) return 0;
    return 1;
}

/*
 * SQLite's strftime(fmt, s) for the text s (parse_datetime's forms) and
 * a format that fn_strftime_ok accepts, into out (cap bytes, at least
 * 32 + 24 * strlen(fmt)). The date is printed as written (2021-02-30
 * stays), the computed fields (%j %w %W %s) come from its day count as
 * SQLite computes them. Returns 0, 1 for NULL, 2 for what is not handled.
 */
int fn_strftime(const char *fmt, const char *s, char *out, size_t cap) {
    int64_t y, m, d, hh, mi;
    double sec;
    int rc = parse_datetime(s, &y, &m, &d, &hh, &mi, &sec);
    if (rc) return rc;
    int64_t days = fn_days_from_civil(y, m, d);
    int64_t jan1 = fn_days_from_civil(y, 1, 1);
    size_t o = 0;
    for (const char *p = fmt; *p; p++) {
        char buf[40];
        if (*p != '%') {
            buf[0] = *p, buf[1] = 0;
        } else {
            switch (*++p) {
            case 'd':
                snprintf(buf, sizeof buf, "%02lld", (long long)d);
                break;
            case 'f':
                snprintf(buf, sizeof buf, "%06.3f", sec > 59.999 ? 59.999 : sec);
                break;
            case 'H':
                snprintf(buf, sizeof buf, "%02lld", (long long)hh);
                break;
            case 'j':
                snprintf(buf, sizeof buf, "%03lld", (long long)(days - jan1 + 1));
                break;
            case 'm':
                snprintf(buf, sizeof buf, "%02lld", (long long)m);
                break;
            case 'M':
                snprintf(buf, sizeof buf, "%02lld", (long long)mi);
                break;
            case 's':
                snprintf(buf, sizeof buf, "%lld",
                         (long long)(days * 86400 + hh * 3600 + mi * 60 + (int64_t)sec));
                break;
            case 'S':
                snprintf(buf, sizeof buf, "%02d", (int)sec);
                break;
            case 'w':
                snprintf(buf, sizeof buf, "%lld", (long long)(((days + 4) % 7 + 7) % 7));
                break;
            case 'W': {
                int64_t wd = ((days + 3) % 7 + 7) % 7; /* 0 = Monday */
                snprintf(buf, sizeof buf, "%02lld", (long long)((days - jan1 + 7 - wd) / 7));
                break;
            }
            case 'Y':
                snprintf(buf, sizeof buf, "%04lld", (long long)y);
                break;
            case '%':
                buf[0] = '%', buf[1] = 0;
                break;
            default:
                return 2;
            }
        }
        size_t bl = strlen(buf);
        if (o + bl + 1 > cap) return 2;
        memcpy(out + o, buf, bl);
        o += bl;
    }
    out[o] = 0;
    return 0;
}

/* fn_map_text's function that keeps the text as it is (the text of an
 * integer or a DATE, as a dictionary). */
int fn_text_same(const void *ud, const char *in, char *out, size_t cap) {
    (void)ud;
    size_t l = strlen(in);
    if (l + 1 > cap) return 2;
    memcpy(out, in, l + 1);
    return 0;
}

/*
 * A text-valued function of one text argument, evaluated at bind time once
 * per possible value of x: per dictionary entry of a STRING x, per day of
 * [lo, hi] for a DATE x (its text 'YYYY-MM-DD'), per integer of [lo, hi]
 * for an integer x (its decimal text); the lookup index is then x - lo. fn(ud, in, out, cap)
 * returns 0 with text, 1 for NULL, 2 for what is not handled. Returns the new dictionary's lookup
 * (a constant for a constant x), or NULL with *unsupported set when fn answered 2 for some value,
 * or NULL when out of memory.
 */
BExpr *fn_map_text(PlanArena *a, BExpr *x, FnText fn, const void *ud, int64_t lo, int64_t hi,
                   int64_t pos, int *unsupported) {
    int date = x->type == CAT_DATE, num = !date && x->type != CAT_STRING;
    int64_t n = x->kind == BE_CONST ? 1 : date || num ? hi - lo + 1 : x->dict->n;
    if (n < 0) n = 0;
    size_t cap = 4096;
    int64_t *tab = plan_alloc(a, sizeof(int64_t) * (size_t)(n ? n : 1));
    char **strs = calloc((size_t)(n ? n : 1), sizeof(char *));
    size_t *lens = calloc((size_t)(n ? n : 1), sizeof(size_t));
    int32_t *codes = calloc((size_t)(n ? n : 1), sizeof(int32_t));
    int64_t *which = calloc((size_t)(n ? n : 1), sizeof(int64_t));
    char *buf = malloc(cap);
    BExpr *r = NULL;
    int64_t m = 0;
    *unsupported = 0;
    if (!tab || !strs || !lens || !codes || !which || !buf) goto done;
    for (int64_t i = 0; i < n; i++) {
        char dbuf[32];
        const char *in;
        if (date) {
            cat_format_date((int32_t)(x->kind == BE_CONST ? x->ival : lo + i), dbuf);
            in = dbuf;
        } else if (num) {
            snprintf(dbuf, sizeof dbuf, "%lld",
                     (long long)(x->kind == BE_CONST ? x->ival : lo + i));
            in = dbuf;
        } else {
            in = cat_dict_str(x->dict, x->kind == BE_CONST ? x->ival : i);
        }
        int k = fn(ud, in, buf, cap);
        if (k == 2) {
            *unsupported = 1;
            goto done;
        }
        tab[i] = INT64_MIN; /* NULL */
        if (k == 0) {
            if (!(strs[m] = strdup(buf))) goto done;
            lens[m] = strlen(buf);
            which[m++] = i;
        }
    }
    CatDict *nd = cat_dict_build((const char *const *)strs, lens, m, codes);
    if (!nd || plan_arena_own_dict(a, nd) != 0) goto done;
    for (int64_t k = 0; k < m; k++)
        tab[which[k]] = codes[k];
    if (x->kind == BE_CONST) {
        r = tab[0] == INT64_MIN ? bx_null(a, CAT_STRING, pos)
                                : bx_new(a, BE_CONST, CAT_STRING, pos);
        if (r) r->ival = tab[0] == INT64_MIN ? 0 : tab[0], r->dict = nd;
        goto done;
    }
    BExpr *idx = x;
    if (date || num) {
        BExpr *c = bx_new(a, BE_CAST, CAT_INT64, pos), *k = bx_int(a, CAT_INT64, lo, pos);
        BExpr *sub = bx_new(a, BE_BINARY, CAT_INT64, pos);
        if (!c || !k || !sub) goto done;
        c->a = x;
        sub->op = OP_SUB, sub->a = c, sub->b = k;
        idx = sub;
    }
    r = text_lookup(a, idx, tab, n, nd, pos);
done:
    if (strs)
        for (int64_t k = 0; k < m; k++)
            free(strs[k]);
    free(strs);
    free(lens);
    free(codes);
    free(which);
    free(buf);
    return r;
}

void plan_unique_name(char *out, size_t cap, const char *base, int nprev,
                      const char *(*prev)(const void *ud, int j), const void *ud) {
    snprintf(out, cap, "%s", base);
    for (int k = 1;; k++) {
        int dup = 0;
        for (int j = 0; j < nprev && !dup; j++)
            dup = strcasecmp(prev(ud, j), out) == 0;
        if (!dup) return;
        snprintf(out, cap, "%s:%d", base, k);
    }
}
