/*
 * parse.c -- strict, allocation-free parsers for one text field. Used by the
 * CSV/.tbl loader (hot path) and by INSERT conversions.
 */
#include "catalog/cat_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Parse all of s[0..len) as an optionally signed decimal integer that fits
 * int64. Returns 0, or -1 (malformed or out of range). */
int cat_parse_i64(const char *s, size_t len, int64_t *out) {
    size_t i = 0;
    int neg = 0;
    if (len == 0) return -1;
    if (s[0] == '-' || s[0] == '+') {
        neg = s[0] == '-';
        i = 1;
        if (len == 1) return -1;
    }
    uint64_t v = 0;
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9) return -1;
        if (v > (limit - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* As cat_parse_i64, and the value must also fit int32. */
int cat_parse_i32(const char *s, size_t len, int32_t *out) {
    int64_t v;
    if (cat_parse_i64(s, len, &v) != 0 || v < INT32_MIN || v > INT32_MAX) return -1;
    *out = (int32_t)v;
    return 0;
}

/* Exact powers of ten representable in a double (Clinger's fast path). */
static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Slow path: strtod on a NUL-terminated copy; the whole field must be
 * consumed and must not start with a space. Returns 0 or -1. */
static int parse_f64_strtod(const char *s, size_t len, double *out) {
    char small[80];
    char *buf = small;
    if (len == 0 || s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' || s[0] == '\f' ||
        s[0] == '\v')
        return -1;
    if (len >= sizeof small) {
        buf = malloc(len + 1);
        if (!buf) return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    int ok = end == buf + len;
    if (buf != small) free(buf);
    if (!ok) return -1;
    *out = v;
    return 0;
}

/* Parse all of s[0..len) as a decimal floating-point number (also what
 * strtod accepts: exponents, inf, nan). Correctly rounded: the fast path is
 * taken only when the decimal mantissa (<= 2^53) and the power of ten (<=
 * 1e22) are both exact doubles, so one IEEE multiply/divide rounds once.
 * Returns 0, or -1 when malformed. */
int cat_parse_f64(const char *s, size_t len, double *out) {
    size_t i = 0;
    int neg = 0;
    if (len == 0) return -1;
    if (s[0] == '-' || s[0] == '+') {
        neg = s[0] == '-';
        i = 1;
    }
    uint64_t mant = 0;
    int ndig = 0;  /* significant digits in mant */
    int nseen = 0; /* digits seen in total */
    int exp10 = 0;
    int overflow = 0;
    for (; i < len && (unsigned)((unsigned char)s[i] - '0') <= 9; i++) {
        nseen++;
        if (mant == 0 && s[i] == '0') continue;
        if (ndig < 19) {
            mant = mant * 10 + (uint64_t)(s[i] - '0');
            ndig++;
        } else {
            overflow = 1;
        }
    }
    if (i < len && s[i] == '.') {
        i++;
        for (; i < len && (unsigned)((unsigned char)s[i] - '0') <= 9; i++) {
            nseen++;
            if (mant == 0 && s[i] == '0') {
                exp10--;
                continue;
            }
            if (ndig < 19) {
                mant = mant * 10 + (uint64_t)(s[i] - '0');
                ndig++;
                exp10--;
            } else {
                overflow = 1;
            }
        }
    }
    if (nseen == 0) return parse_f64_strtod(s, len, out); /* inf, nan, hex, or garbage */
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0, e = 0, edig = 0;
        if (i < len && (s[i] == '-' || s[i] == '+')) {
            eneg = s[i] == '-';
            i++;
        }
        for (; i < len && (unsigned)((unsigned char)s[i] - '0') <= 9; i++) {
            if (e < 100000) e = e * 10 + (s[i] - '0');
            edig++;
        }
        if (edig == 0) return -1;
        exp10 += eneg ? -e : e;
    }
    if (i != len) return -1;
    if (!overflow && mant <= (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22) {
        double v = (double)mant;
        v = exp10 >= 0 ? v * pow10_exact[exp10] : v / pow10_exact[-exp10];
        *out = neg ? -v : v;
        return 0;
    }
    return parse_f64_strtod(s, len, out);
}

/* Parse all of s[0..len) as a boolean: true/false, t/f, yes/no, y/n, 1/0
 * (case-insensitive). Returns 0 and *out = 0/1, or -1. */
int cat_parse_bool(const char *s, size_t len, uint8_t *out) {
    static const char *const yes[] = {"true", "t", "yes", "y", "1"};
    static const char *const no[] = {"false", "f", "no", "n", "0"};
    for (int i = 0; i < 5; i++) {
        if (strlen(yes[i]) == len && strncasecmp(s, yes[i], len) == 0) {
            *out = 1;
            return 0;
        }
        if (strlen(no[i]) == len && strncasecmp(s, no[i], len) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}
