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
