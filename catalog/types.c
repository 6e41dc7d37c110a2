/*
 * types.c -- type names and widths, host allocation, dates.
 */
#include "catalog/cat_internal.h"

#include <math.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Bytes per stored value of type t; 0 for CAT_NULL or an unknown value. */
size_t cat_type_width(CatType t) {
    switch (t) {
    case CAT_INT32:
    case CAT_FLOAT32:
    case CAT_DATE:
    case CAT_STRING:
        return 4;
    case CAT_INT64:
    case CAT_FLOAT64:
    case CAT_DECIMAL:
        return 8;
    case CAT_BOOL:
        return 1;
    case CAT_NULL:
        return 0;
    }
    return 0;
}

/* Static upper-case name of t ("INT32", ...); "UNKNOWN" for a bad value. */
const char *cat_type_name(CatType t) {
    switch (t) {
    case CAT_NULL:
        return "NULL";
    case CAT_INT32:
        return "INT32";
    case CAT_INT64:
        return "INT64";
    case CAT_FLOAT32:
        return "FLOAT32";
    case CAT_FLOAT64:
        return "FLOAT64";
    case CAT_DATE:
        return "DATE";
    case CAT_BOOL:
        return "BOOL";
    case CAT_STRING:
        return "STRING";
    case CAT_DECIMAL:
        return "DECIMAL";
    }
    return "UNKNOWN";
}

/* Spelling -> type table for cat_type_parse; `sized` marks the names that
 * may carry a "(n)" suffix. */
static const struct {
    const char *name;
    CatType type;
    int sized;
} type_names[] = {
    {"INT32", CAT_INT32, 0},     {"INT64", CAT_INT64, 0},    {"FLOAT32", CAT_FLOAT32, 0},
    {"FLOAT64", CAT_FLOAT64, 0}, {"DATE", CAT_DATE, 0},      {"BOOL", CAT_BOOL, 0},
    {"STRING", CAT_STRING, 0},   {"INTEGER", CAT_INT64, 0},  {"INT", CAT_INT64, 0},
    {"BIGINT", CAT_INT64, 0},    {"SMALLINT", CAT_INT32, 0}, {"TINYINT", CAT_INT32, 0},
    {"REAL", CAT_FLOAT64, 0},    {"DOUBLE", CAT_FLOAT64, 0}, {"DOUBLE PRECISION", CAT_FLOAT64, 0},
    {"FLOAT", CAT_FLOAT64, 0},   {"BOOLEAN", CAT_BOOL, 0},   {"TEXT", CAT_STRING, 1},
    {"VARCHAR", CAT_STRING, 1},  {"CHAR", CAT_STRING, 1},
};

/* Parse a type name, case-insensitively, ignoring surrounding spaces; string
 * types may be followed by "(digits)". Returns 0 and sets *out, or -1 when
 * the name is unknown or malformed (*out untouched). */
int cat_type_parse(const char *name, CatType *out) {
    if (!name) return -1;
    while (isspace((unsigned char)*name))
        name++;
    size_t len = strlen(name);
    while (len > 0 && isspace((unsigned char)name[len - 1]))
        len--;
    /* Split off an optional "(...)" suffix. */
    size_t base = len;
    const char *paren = memchr(name, '(', len);
    if (paren) {
        base = (size_t)(paren - name);
        if (name[len - 1] != ')') return -1;
        const char *p = paren + 1, *e = name + len - 1;
        while (p < e && isspace((unsigned char)*p))
            p++;
        int digits = 0;
        while (p < e && isdigit((unsigned char)*p)) {
            p++;
            digits++;
        }
        while (p < e && isspace((unsigned char)*p))
            p++;
        if (digits == 0 || p != e) return -1;
        while (base > 0 && isspace((unsigned char)name[base - 1]))
            base--;
    }
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++) {
        if (strlen(type_names[i].name) == base &&
            strncasecmp(type_names[i].name, name, base) == 0) {
            if (paren && !type_names[i].sized) return -1;
            *out = type_names[i].type;
            return 0;
        }
    }
    return -1;
}

/* See catalog.h: the type name with DECIMAL's "(p)" / "(p,s)" suffix
 * read here (not by cat_type_parse, which then sees "DECIMAL"). */
int cat_type_parse_dec(const char *name, CatType *out, int *prec, int *scale) {
    *prec = *scale = 0;
    if (!name) return -1;
    while (isspace((unsigned char)*name))
        name++;
    size_t n = 0;
    while (isalpha((unsigned char)name[n]))
        n++;
    int is_dec = (n == 7 && strncasecmp(name, "DECIMAL", 7) == 0) ||
                 (n == 7 && strncasecmp(name, "NUMERIC", 7) == 0);
    if (!is_dec) return cat_type_parse(name, out);
    const char *p = name + n;
    int pr = CAT_DEC_DEFAULT_PREC, sc = CAT_DEC_DEFAULT_SCALE;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '(') {
        char *e;
        p++;
        long a = strtol(p, &e, 10), b = 0;
        if (e == p) return -1;
        p = e;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ',') {
            p++;
            b = strtol(p, &e, 10);
            if (e == p) return -1;
            p = e;
            while (isspace((unsigned char)*p))
                p++;
        }
        if (*p != ')') return -1;
        p++;
        if (a < 1 || a > CAT_DEC_MAX_PREC || b < 0 || b > a) return -1;
        pr = (int)a;
        sc = (int)b;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p) return -1;
    *out = CAT_DECIMAL;
    *prec = pr;
    *scale = sc;
    return 0;
}

/* See catalog.h. */
const char *cat_type_hint(const char *name) {
    while (name && isspace((unsigned char)*name))
        name++;
    if (name && (strncasecmp(name, "DECIMAL", 7) == 0 || strncasecmp(name, "NUMERIC", 7) == 0))
        return " (DECIMAL(p,s) takes 1 <= p <= 18 and 0 <= s <= p)";
    return "";
}

/* See catalog.h. */
int64_t cat_pow10(int k) {
    int64_t v = 1;
    for (int i = 0; i < k && i < 18; i++)
        v *= 10;
    return v;
}

/* See catalog.h: digits are accumulated exactly (up to 19 significant
 * ones before the decision on range), the first dropped digit decides the
 * rounding. */
int cat_parse_decimal(const char *s, size_t len, int prec, int scale, int64_t *out) {
    size_t i = 0;
    while (i < len && isspace((unsigned char)s[i]))
        i++;
    while (len > i && isspace((unsigned char)s[len - 1]))
        len--;
    int neg = 0;
    if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    /* value = dig[0..nd) * 10^exp10 (leading zeros dropped) */
    char dig[64];
    int nd = 0, point = 0, lead = 1, any = 0;
    int64_t exp10 = 0;
    for (; i < len; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            any = 1;
            if (lead && c == '0') {
                if (point) exp10--;
                continue;
            }
            lead = 0;
            if (nd < (int)sizeof dig) {
                dig[nd++] = c;
                if (point) exp10--;
            } else if (!point) {
                exp10++; /* an integer digit past what is kept */
            }
        } else if (c == '.' && !point) {
            point = 1;
        } else {
            break;
        }
    }
    if (!any) return 1;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < len && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        if (i == len || s[i] < '0' || s[i] > '9') return 1;
        int64_t e = 0;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            if (e < 100000) e = e * 10 + (s[i] - '0');
        exp10 += eneg ? -e : e;
    }
    if (i != len) return 1;
    if (nd == 0) {
        *out = 0;
        return 0;
    }
    /* wanted: round(value * 10^scale), half away from zero */
    int64_t shift = exp10 + scale;
    int64_t v = 0;
    if (shift >= 0) {
        if (nd + shift > prec) return 2;
        for (int k = 0; k < nd; k++)
            v = v * 10 + (dig[k] - '0');
        for (int64_t k = 0; k < shift; k++)
            v *= 10;
    } else {
        int64_t keep = nd + shift;
        if (keep > prec) return 2;
        for (int64_t k = 0; k < keep; k++)
            v = v * 10 + (dig[k] - '0');
        if (keep >= 0 && dig[keep] >= '5') v++;
        if (v >= cat_pow10(prec)) return 2;
    }
    *out = neg ? -v : v;
    return 0;
}

/* See catalog.h. */
void cat_format_decimal(int64_t v, int scale, char *buf, size_t cap) {
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    if (scale <= 0) {
        snprintf(buf, cap, "%s%llu", v < 0 ? "-" : "", (unsigned long long)a);
        return;
    }
    uint64_t p = (uint64_t)cat_pow10(scale);
    snprintf(buf, cap, "%s%llu.%0*llu", v < 0 ? "-" : "", (unsigned long long)(a / p), scale,
             (unsigned long long)(a % p));
}

/* 64-byte aligned, zeroed allocation of at least `bytes` (a 0-byte request
 * still returns a distinct block). NULL when out of memory. Free with
 * cat_host_free(). */
void *cat_host_alloc(size_t bytes) {
    size_t rounded = (bytes + 63) / 64 * 64;
    if (rounded == 0) rounded = 64;
    if (rounded < bytes) return NULL;
    void *p = aligned_alloc(64, rounded);
    if (p) memset(p, 0, rounded);
    return p;
}

/* Release a block from cat_host_alloc(); NULL is a no-op. */
void cat_host_free(void *p) {
    free(p);
}

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d (m 1..12,
 * d 1..31); H. Hinnant's days_from_civil. */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* 1 if y is a Gregorian leap year, else 0. */
static int is_leap(int y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Parse exactly "yyyy-mm-dd" (four-digit year, two-digit month and day,
 * a real calendar date) into days since 1970-01-01. Returns 0, or -1 when
 * malformed (*days untouched). */
int cat_parse_date(const char *s, size_t len, int32_t *days) {
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (len != 10 || s[4] != '-' || s[7] != '-') return -1;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9')) return -1;
    int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int m = (s[5] - '0') * 10 + (s[6] - '0');
    int d = (s[8] - '0') * 10 + (s[9] - '0');
    if (m < 1 || m > 12 || d < 1) return -1;
    int dim = mdays[m - 1] + (m == 2 && is_leap(y));
    if (d > dim) return -1;
    *days = (int32_t)days_from_civil(y, m, d);
    return 0;
}

/* Write days (since 1970-01-01) as yyyy-mm-dd plus NUL into buf (>= 11
 * bytes); years outside 0..9999 are printed as far as 11 bytes allow. */
void cat_format_date(int32_t days, char *buf) {
    int64_t z = (int64_t)days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int d = (int)(doy - (153 * mp + 2) / 5 + 1);
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    y += m <= 2;
    if (y >= 0 && y <= 9999) {
        buf[0] = (char)('0' + y / 1000);
        buf[1] = (char)('0' + y / 100 % 10);
        buf[2] = (char)('0' + y / 10 % 10);
        buf[3] = (char)('0' + y % 10);
        buf[4] = '-';
        buf[5] = (char)('0' + m / 10);
        buf[6] = (char)('0' + m % 10);
        buf[7] = '-';
        buf[8] = (char)('0' + d / 10);
        buf[9] = (char)('0' + d % 10);
        buf[10] = '\0';
    } else {
        char tmp[48];
        snprintf(tmp, sizeof tmp, "%lld-%02d-%02d", (long long)y, m, d);
        size_t n = strlen(tmp) < 10 ? strlen(tmp) : 10;
        memcpy(buf, tmp, n);
        buf[n] = '\0';
    }
}

void cat_format_real(double f, int digits, char *buf, size_t cap) {
    if (isnan(f)) {
        snprintf(buf, cap, "NaN");
        return;
    }
    if (isinf(f)) {
        snprintf(buf, cap, f > 0 ? "Inf" : "-Inf");
        return;
    }
    if (f == 0) f = 0; /* -0.0 prints as 0.0 */
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*g", digits, f);
    char *e = strpbrk(tmp, "eE");
    if (!strchr(tmp, '.')) {
        /* "2" -> "2.0", "1e+20" -> "1.0e+20" */
        char out[72];
        if (e)
            snprintf(out, sizeof out, "%.*s.0%s", (int)(e - tmp), tmp, e);
        else
            snprintf(out, sizeof out, "%s.0", tmp);
        snprintf(buf, cap, "%s", out);
        return;
    }
    snprintf(buf, cap, "%s", tmp);
}

/* 1 for the white space SQLite skips before a number. */
static int num_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '\v';
}

int64_t cat_text_to_int64(const char *s) {
    while (num_space(*s))
        s++;
    int neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s >= '0' && *s <= '9'; s++) {
        uint64_t dgt = (uint64_t)(*s - '0');
        if (v > (lim - dgt) / 10) {
            v = lim; /* saturate, as SQLite does */
            break;
        }
        v = v * 10 + dgt;
    }
    if (!neg) return (int64_t)v;
    return v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
}

double cat_text_to_real(const char *s) {
    while (num_space(*s))
        s++;
    const char *p = s;
    if (*p == '-' || *p == '+') p++;
    int digits = 0;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (!digits) return *s == '-' ? -0.0 : 0.0; /* SQLite: "-" reads as -0.0 */
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '-' || *q == '+') q++;
        if (*q >= '0' && *q <= '9') {
            while (*q >= '0' && *q <= '9')
                q++;
            p = q;
        }
    }
    /* strtod on exactly the prefix (it alone would also read hex and inf) */
    char buf[128];
    size_t n = (size_t)(p - s);
    char *tmp = n < sizeof buf ? buf : malloc(n + 1);
    if (!tmp) return 0.0;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    double d = strtod(tmp, NULL);
    if (tmp != buf) free(tmp);
    return d;
}
