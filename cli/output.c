/*
 * output.c -- the result printers of the `gqp` command (table, csv, json,
 * markdown, line), shared by `gqp run` and the interactive shell, and the
 * statement loop both use. Uses only the public API in include/gqp.h.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strdup */
#endif
#include "output.h"
#include "wcwidth.h" /* WC_ZERO, WC_WIDE */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Table mode shows at most this many rows: the first and last half. */
#define TABLE_MAX_ROWS 40

/* 1 if values of type t are numbers (right-aligned, unquoted in JSON). */
static int type_is_numeric(gqp_type t) {
    return t == GQP_TYPE_INT32 || t == GQP_TYPE_INT64 || t == GQP_TYPE_FLOAT32 ||
           t == GQP_TYPE_FLOAT64 || t == GQP_TYPE_DECIMAL;
}

/* Lower-case display name of a result type for the table header. */
static const char *type_label(gqp_type t) {
    switch (t) {
    case GQP_TYPE_NULL:
        return "null";
    case GQP_TYPE_INT32:
        return "int32";
    case GQP_TYPE_INT64:
        return "int64";
    case GQP_TYPE_FLOAT32:
        return "float";
    case GQP_TYPE_FLOAT64:
        return "double";
    case GQP_TYPE_DATE:
        return "date";
    case GQP_TYPE_BOOL:
        return "boolean";
    case GQP_TYPE_STRING:
        return "varchar";
    case GQP_TYPE_DECIMAL:
        return "decimal";
    }
    return "?";
}

/* ---- display width, escapes and numbers ---- */

/* 1 when cp lies in one of the n sorted, disjoint ranges r. */
static int in_ranges(uint32_t cp, const uint32_t (*r)[2], size_t n) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < r[mid][0])
            hi = mid;
        else if (cp > r[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

/* Terminal columns of code point cp (0, 1 or 2; see out_display_width). */
static size_t cp_width(uint32_t cp) {
    if (cp < 0x300) return 1;
    if (in_ranges(cp, WC_ZERO, sizeof WC_ZERO / sizeof WC_ZERO[0])) return 0;
    if (in_ranges(cp, WC_WIDE, sizeof WC_WIDE / sizeof WC_WIDE[0])) return 2;
    return 1;
}

/* Decode the UTF-8 sequence at s[0..n) (n >= 1) into *cp. Returns its
 * length in bytes; an invalid or truncated sequence is one byte, *cp
 * 0xFFFD. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        *cp = 0xFFFD;
        return 1;
    }
    if (len > n) {
        *cp = 0xFFFD;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = 0xFFFD;
        return 1;
    }
    *cp = v;
    return len;
}

size_t out_display_width(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += utf8_decode(u + i, n - i, &cp);
        w += cp_width(cp);
    }
    return w;
}

/* Display width of the NUL-terminated UTF-8 text s. */
static size_t text_width(const char *s) {
    return out_display_width(s, strlen(s));
}

/* A malloc'd copy of s (caller frees) with every control character shown
 * as an escape, so one value is one line of fixed width: newline "\n",
 * CR "\r", tab "\t", other C0 controls and DEL "\xNN", C1 controls
 * "\u0080".."\u009f". NULL on allocation failure. */
static char *escape_controls(const char *s) {
    size_t n = strlen(s), extra = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7F) extra += 3;
        if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
            (unsigned char)s[i + 1] <= 0x9F)
            extra += 4;
    }
    char *out = malloc(n + extra + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' || c == '\r' || c == '\t') {
            *o++ = '\\';
            *o++ = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else if (c < 0x20 || c == 0x7F) {
            o += sprintf(o, "\\x%02x", c);
        } else if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
                   (unsigned char)s[i + 1] <= 0x9F) {
            o += sprintf(o, "\\u%04x", (unsigned char)s[i + 1]);
            i++;
        } else {
            *o++ = (char)c;
        }
    }
    *o = '\0';
    return out;
}

void out_format_double(double d, char *buf, size_t cap) {
    if (isnan(d)) {
        snprintf(buf, cap, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, cap, d > 0 ? "Inf" : "-Inf");
        return;
    }
    if (d == 0) d = 0; /* -0.0 prints as 0.0 */
    char tmp[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(tmp, sizeof tmp, "%.*g", digits, d);
        if (strtod(tmp, NULL) == d) break;
    }
    char *e = strpbrk(tmp, "eE");
    if (strchr(tmp, '.'))
        snprintf(buf, cap, "%s", tmp);
    else if (e) /* "1e+20" -> "1.0e+20" */
        snprintf(buf, cap, "%.*s.0%s", (int)(e - tmp), tmp, e);
    else /* "2" -> "2.0" */
        snprintf(buf, cap, "%s.0", tmp);
}

/* Text of column c of st's current row for csv and json: a FLOAT64 with
 * round-trip precision (out_format_double into buf, cap >= 32), every
 * other type as gqp_column_text gives it. NULL for SQL NULL. */
static const char *exact_text(gqp_stmt *st, int c, gqp_type t, char *buf, size_t cap) {
    const char *s = gqp_column_text(st, c);
    if (!s || t != GQP_TYPE_FLOAT64) return s;
    out_format_double(gqp_column_double(st, c), buf, cap);
    return buf;
}

/* Print n copies of the UTF-8 string s. */
static void repeat(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        fputs(s, stdout);
}

/* ---- table mode ---- */

/* One buffered row: ncols malloc'd strings (control characters escaped),
 * NULL for SQL NULL; v itself NULL for a row never captured. */
typedef struct RowBuf {
    char **v;
} RowBuf;

/* Copy the current row of st into a new RowBuf (NULL entries for SQL NULL,
 * control characters escaped). Returns 0, or -1 on allocation failure. */
static int row_capture(gqp_stmt *st, int ncols, RowBuf *r) {
    r->v = calloc((size_t)ncols, sizeof(char *));
    if (!r->v) return -1;
    for (int c = 0; c < ncols; c++) {
        const char *t = gqp_column_text(st, c);
        if (t && !(r->v[c] = escape_controls(t))) return -1;
    }
    return 0;
}

/* Free the strings of r (r itself belongs to the caller). */
static void row_free(RowBuf *r, int ncols) {
    if (!r->v) return;
    for (int c = 0; c < ncols; c++)
        free(r->v[c]);
    free(r->v);
    r->v = NULL;
}

/* Print text s padded to width w: right-aligned if right, else left. */
static void print_cell(const char *s, size_t w, int right) {
    size_t sw = text_width(s);
    if (right) repeat(" ", w - sw);
    fputs(s, stdout);
    if (!right) repeat(" ", w - sw);
}

/* Print text s centered in width w. */
static void print_centered(const char *s, size_t w) {
    size_t sw = text_width(s), left = (w - sw) / 2;
    repeat(" ", left);
    fputs(s, stdout);
    repeat(" ", w - sw - left);
}

/* Print a horizontal box rule with the given corner/junction glyphs. */
static void table_rule(const size_t *w, int ncols, const char *l, const char *m, const char *r) {
    fputs(l, stdout);
    for (int c = 0; c < ncols; c++) {
        repeat("─", w[c] + 2);
        fputs(c + 1 < ncols ? m : r, stdout);
    }
    fputc('\n', stdout);
}

/* Print one data row of the box (nothing for a row never captured). */
static void table_row(const RowBuf *row, const size_t *w, const gqp_type *types, int ncols) {
    if (!row->v) return;
    fputs("│", stdout);
    for (int c = 0; c < ncols; c++) {
        fputc(' ', stdout);
        print_cell(row->v[c] ? row->v[c] : "NULL", w[c], type_is_numeric(types[c]));
        fputs(" │", stdout);
    }
    fputc('\n', stdout);
}

/* Print the ellipsis row that stands for rows left out. */
static void table_ellipsis(const size_t *w, int ncols) {
    fputs("│", stdout);
    for (int c = 0; c < ncols; c++) {
        fputc(' ', stdout);
        print_centered("·", w[c]);
        fputs(" │", stdout);
    }
    fputc('\n', stdout);
}

/* Step st to the end and print its rows as a DuckDB-like box with names and
 * types; more than TABLE_MAX_ROWS rows show the first and last half and a
 * count line. Only the rows shown are formatted: the result's row count
 * (gqp_result_rows, known at the first row) says which rows are the last
 * half, and the rows between are stepped over and counted. Returns the
 * gqp_step code that ended the loop (GQP_DONE on success), or GQP_NOMEM. */
static int print_table(gqp_stmt *st, int ncols) {
    enum { HALF = TABLE_MAX_ROWS / 2 };
    RowBuf head[HALF], tail[HALF];
    int64_t nrows = 0, total = -1;
    int rc;
    memset(head, 0, sizeof head);
    memset(tail, 0, sizeof tail);
    char **names = calloc((size_t)ncols, sizeof *names);
    if (!names) return GQP_NOMEM;
    while ((rc = gqp_step(st)) == GQP_ROW) {
        if (total < 0) total = gqp_result_rows(st);
        RowBuf *slot;
        if (nrows < HALF) {
            slot = &head[nrows];
        } else if (nrows < total - HALF) {
            nrows++; /* neither among the first nor the last HALF rows */
            continue;
        } else {
            slot = &tail[(nrows - HALF) % HALF];
            row_free(slot, ncols);
        }
        if (row_capture(st, ncols, slot) != 0) {
            rc = GQP_NOMEM;
            break;
        }
        nrows++;
    }
    for (int c = 0; rc == GQP_DONE && c < ncols; c++)
        if (!(names[c] = escape_controls(gqp_column_name(st, c)))) rc = GQP_NOMEM;
    if (rc == GQP_DONE) {
        size_t *w = calloc((size_t)ncols, sizeof *w);
        gqp_type *types = calloc((size_t)ncols, sizeof *types);
        int64_t nhead = nrows < HALF ? nrows : HALF;
        int64_t ntail = nrows - nhead;
        int64_t skipped = 0;
        if (ntail > HALF) {
            skipped = ntail - HALF;
            ntail = HALF;
        }
        if (!w || !types) {
            rc = GQP_NOMEM;
        } else {
            for (int c = 0; c < ncols; c++) {
                types[c] = gqp_column_type(st, c);
                w[c] = text_width(names[c]);
                size_t tw = text_width(type_label(types[c]));
                if (tw > w[c]) w[c] = tw;
            }
            /* The tail ring holds rows HALF.. in slots (i - HALF) % HALF. */
            int64_t first_tail = nrows - ntail;
            for (int64_t i = 0; i < nhead + ntail; i++) {
                RowBuf *r = i < nhead ? &head[i] : &tail[(first_tail + i - nhead - HALF) % HALF];
                for (int c = 0; r->v && c < ncols; c++) {
                    size_t vw = text_width(r->v[c] ? r->v[c] : "NULL");
                    if (vw > w[c]) w[c] = vw;
                }
            }
            table_rule(w, ncols, "┌", "┬", "┐");
            fputs("│", stdout);
            for (int c = 0; c < ncols; c++) {
                fputc(' ', stdout);
                print_centered(names[c], w[c]);
                fputs(" │", stdout);
            }
            fputs("\n│", stdout);
            for (int c = 0; c < ncols; c++) {
                fputc(' ', stdout);
                print_centered(type_label(types[c]), w[c]);
                fputs(" │", stdout);
            }
            fputc('\n', stdout);
            table_rule(w, ncols, "├", "┼", "┤");
            for (int64_t i = 0; i < nhead; i++)
                table_row(&head[i], w, types, ncols);
            if (skipped > 0) table_ellipsis(w, ncols);
            for (int64_t i = 0; i < ntail; i++)
                table_row(&tail[(first_tail + i - HALF) % HALF], w, types, ncols);
            table_rule(w, ncols, "└", "┴", "┘");
            if (skipped > 0) printf("%" PRId64 " rows (%d shown)\n", nrows, TABLE_MAX_ROWS);
        }
        free(w);
        free(types);
    }
    for (int i = 0; i < HALF; i++) {
        row_free(&head[i], ncols);
        row_free(&tail[i], ncols);
    }
    for (int c = 0; c < ncols; c++)
        free(names[c]);
    free(names);
    return rc;
}

/* ---- csv / json / markdown / line ---- */

/* Print s as a CSV field, quoted when it holds a comma, quote, CR, LF or
 * leading/trailing space, or is empty (so that an empty string, "", and
 * NULL, nothing, differ, as in sqlite3's and DuckDB's CSV). */
static void csv_field(const char *s) {
    size_t n = strlen(s);
    int quote = n == 0 || s[0] == ' ' || s[n - 1] == ' ';
    if (strpbrk(s, ",\"\r\n")) quote = 1;
    if (!quote) {
        fputs(s, stdout);
        return;
    }
    fputc('"', stdout);
    for (; *s; s++) {
        if (*s == '"') fputc('"', stdout);
        fputc(*s, stdout);
    }
    fputc('"', stdout);
}

/* Print s as a JSON string literal with escapes. */
static void json_string(const char *s) {
    fputc('"', stdout);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", stdout);
        else if (ch == '\r')
            fputs("\\r", stdout);
        else if (ch == '\t')
            fputs("\\t", stdout);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            fputc(ch, stdout);
    }
    fputc('"', stdout);
}

/* Print column c of the current row as a JSON value (a FLOAT64 with
 * round-trip precision; NaN and infinities, which JSON lacks, as null). */
static void json_value(gqp_stmt *st, int c, gqp_type t) {
    char buf[48];
    const char *s = exact_text(st, c, t, buf, sizeof buf);
    if (!s || gqp_column_is_null(st, c)) {
        fputs("null", stdout);
    } else if (t == GQP_TYPE_BOOL) {
        fputs(gqp_column_int64(st, c) ? "true" : "false", stdout);
    } else if (type_is_numeric(t)) {
        double d = gqp_column_double(st, c);
        fputs(isfinite(d) ? s : "null", stdout);
    } else {
        json_string(s);
    }
}

/* Print s as a markdown cell: control characters escaped (a cell is one
 * line), '|' as "\|". */
static void md_text(const char *s) {
    char *e = escape_controls(s);
    for (const char *p = e ? e : s; *p; p++) {
        if (*p == '|') fputc('\\', stdout);
        fputc(*p, stdout);
    }
    free(e);
}

/* Step st to the end printing rows in mode (csv, json, markdown or line).
 * JSON is one array of row objects per statement on one line, so the
 * output of several statements is newline-delimited JSON. Returns the
 * gqp_step code that ended the loop (GQP_DONE on success). */
static int print_stream(gqp_stmt *st, int ncols, OutMode mode) {
    int rc;
    int64_t nrows = 0;
    size_t name_w = 0;
    if (mode == MODE_CSV) {
        for (int c = 0; c < ncols; c++) {
            if (c) fputc(',', stdout);
            csv_field(gqp_column_name(st, c));
        }
        fputc('\n', stdout);
    } else if (mode == MODE_MARKDOWN) {
        fputc('|', stdout);
        for (int c = 0; c < ncols; c++) {
            fputc(' ', stdout);
            md_text(gqp_column_name(st, c));
            fputs(" |", stdout);
        }
        fputs("\n|", stdout);
        for (int c = 0; c < ncols; c++)
            fputs(type_is_numeric(gqp_column_type(st, c)) ? "---:|" : "---|", stdout);
        fputc('\n', stdout);
    } else if (mode == MODE_LINE) {
        for (int c = 0; c < ncols; c++) {
            size_t nw = text_width(gqp_column_name(st, c));
            if (nw > name_w) name_w = nw;
        }
    } else {
        fputc('[', stdout);
    }
    while ((rc = gqp_step(st)) == GQP_ROW) {
        if (mode == MODE_JSON)
            fputs(nrows ? ",{" : "{", stdout);
        else if (mode == MODE_MARKDOWN)
            fputc('|', stdout);
        else if (mode == MODE_LINE && nrows)
            fputc('\n', stdout);
        for (int c = 0; c < ncols; c++) {
            char buf[48];
            gqp_type t = gqp_column_type(st, c);
            if (mode == MODE_CSV) {
                const char *s = exact_text(st, c, t, buf, sizeof buf);
                if (c) fputc(',', stdout);
                if (s) csv_field(s);
            } else if (mode == MODE_MARKDOWN) {
                const char *s = gqp_column_text(st, c);
                fputc(' ', stdout);
                md_text(s ? s : "NULL");
                fputs(" |", stdout);
            } else if (mode == MODE_LINE) {
                const char *name = gqp_column_name(st, c), *s = gqp_column_text(st, c);
                repeat(" ", name_w - text_width(name));
                printf("%s = %s\n", name, s ? s : "NULL");
            } else {
                if (c) fputc(',', stdout);
                json_string(gqp_column_name(st, c));
                fputc(':', stdout);
                json_value(st, c, t);
            }
        }
        if (mode == MODE_JSON)
            fputc('}', stdout);
        else if (mode != MODE_LINE)
            fputc('\n', stdout);
        nrows++;
    }
    if (mode == MODE_JSON) fputs("]\n", stdout);
    return rc;
}

/* ---- the statement loop ---- */

int out_parse_mode(const char *name, OutMode *m) {
    static const OutMode modes[] = {MODE_TABLE, MODE_CSV, MODE_JSON, MODE_MARKDOWN, MODE_LINE};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(name, out_mode_name(modes[i])) == 0) {
            *m = modes[i];
            return 0;
        }
    return -1;
}

const char *out_mode_name(OutMode m) {
    switch (m) {
    case MODE_TABLE:
        return "table";
    case MODE_CSV:
        return "csv";
    case MODE_JSON:
        return "json";
    case MODE_MARKDOWN:
        return "markdown";
    case MODE_LINE:
        return "line";
    }
    return "?";
}

void out_error(const char *msg) {
    size_t n = strlen(msg);
    fputs(msg, stderr);
    if (n == 0 || msg[n - 1] != '\n') fputc('\n', stderr);
}

int out_print_result(gqp_stmt *st, int ncols, OutMode mode) {
    return mode == MODE_TABLE ? print_table(st, ncols) : print_stream(st, ncols, mode);
}

int out_exec(gqp *db, const char *sql, int64_t len, const OutOpts *o) {
    int status = 0;
    const char *p = sql;
    const char *end = sql + len; /* once: -1 would make each prepare scan the rest */
    while (p < end && *p) {
        gqp_stmt *st = NULL;
        const char *tail = NULL;
        if (gqp_prepare(db, p, (int64_t)(end - p), &st, &tail) != GQP_OK) {
            out_error(gqp_errmsg(db));
            status = 1;
            break;
        }
        if (!st) break;
        int ncols = gqp_column_count(st);
        int rc;
        if (ncols > 0 && o->explain) {
            char *plan = NULL;
            const char *stop = tail && tail > p ? tail : end;
            if (gqp_explain(db, p, (int64_t)(stop - p), 0, &plan) == GQP_OK && plan) {
                size_t n = strlen(plan);
                fputs(plan, stdout);
                if (n == 0 || plan[n - 1] != '\n') fputc('\n', stdout);
            }
            gqp_free(plan);
        }
        if (ncols > 0) {
            rc = out_print_result(st, ncols, o->mode);
        } else {
            while ((rc = gqp_step(st)) == GQP_ROW)
                ;
        }
        fflush(stdout);
        if (rc != GQP_DONE) {
            out_error(rc == GQP_NOMEM ? "gqp: out of memory" : gqp_errmsg(db));
            gqp_finalize(st);
            status = 1;
            break;
        }
        if (o->timer) fprintf(stderr, "Run Time: %.3f ms\n", gqp_exec_ms(st));
        gqp_finalize(st);
        if (!tail || tail <= p) break;
        p = tail;
    }
    return status;
}
