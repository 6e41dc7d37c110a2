/*
 * error.c -- rendering of positioned errors (DuckDB's "LINE n:" + caret
 * layout) and the source text of expressions.
 */
#include "sqlfront/sqlfront.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Most bytes of a line shown before / after the offending byte; longer
 * lines are clipped with "..." on the clipped side(s). */
#define ERR_CONTEXT_BEFORE 40
#define ERR_CONTEXT_AFTER 40

/* Output cursor over a caller buffer that always stays NUL-terminated. */
typedef struct OutBuf {
    char *buf;
    size_t cap;
    size_t used;
} OutBuf;

/* Appends formatted text, truncating silently at the buffer's end. */
static void out_printf(OutBuf *o, const char *fmt, ...) {
    if (o->cap == 0 || o->used + 1 >= o->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->used, o->cap - o->used, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    o->used += (size_t)n;
    if (o->used >= o->cap) o->used = o->cap - 1;
}

/* Appends one byte, truncating silently at the buffer's end. */
static void out_char(OutBuf *o, char c) {
    if (o->cap == 0 || o->used + 1 >= o->cap) return;
    o->buf[o->used++] = c;
    o->buf[o->used] = '\0';
}

/* Returns 1 for a UTF-8 continuation byte (10xxxxxx). */
static int is_utf8_cont(unsigned char c) {
    return (c & 0xC0) == 0x80;
}

/* Writes `<stage> Error: <msg>` and, when 0 <= offset <= len, the line that
 * holds offset (CR/LF stripped, tabs shown as spaces, clipped to about 80
 * bytes around offset) prefixed by "LINE n: ", then a caret line whose caret
 * sits under the character at offset (under the end of the line when offset
 * is at a line break or at len). Output is truncated to cap bytes including
 * the NUL; nothing is written when cap is 0. */
void sql_format_error(const char *sql, int64_t len, int64_t offset, const char *stage,
                      const char *msg, char *buf, size_t cap) {
    OutBuf o = {buf, cap, 0};
    if (cap == 0) return;
    buf[0] = '\0';
    out_printf(&o, "%s Error: %s", stage ? stage : "Parser", msg ? msg : "");
    if (!sql || offset < 0 || offset > len) return;
    const unsigned char *s = (const unsigned char *)sql;

    int64_t line_start = offset, line_no = 1;
    while (line_start > 0 && s[line_start - 1] != '\n')
        line_start--;
    for (int64_t i = 0; i < line_start; i++)
        line_no += s[i] == '\n';
    int64_t line_end = line_start;
    while (line_end < len && s[line_end] != '\n')
        line_end++;
    while (line_end > line_start && s[line_end - 1] == '\r')
        line_end--;
    int64_t at = offset > line_end ? line_end : offset;

    int64_t from = line_start, to = line_end;
    if (at - from > ERR_CONTEXT_BEFORE) {
        from = at - ERR_CONTEXT_BEFORE;
        while (from < at && is_utf8_cont(s[from]))
            from++;
    }
    if (to - at > ERR_CONTEXT_AFTER) {
        to = at + ERR_CONTEXT_AFTER;
        while (to > at && to < line_end && is_utf8_cont(s[to]))
            to--;
    }
    int clip_front = from > line_start, clip_back = to < line_end;

    int prefix = 0;
    out_printf(&o, "\nLINE %lld: ", (long long)line_no);
    prefix = snprintf(NULL, 0, "LINE %lld: ", (long long)line_no);
    if (clip_front) {
        out_printf(&o, "...");
        prefix += 3;
    }
    int64_t col = 0; /* characters (not bytes) between from and at */
    for (int64_t i = from; i < to; i++) {
        unsigned char c = s[i];
        out_char(&o, (c == '\t' || c == '\r') ? ' ' : (char)c);
        if (i < at && !is_utf8_cont(c)) col++;
    }
    if (clip_back) out_printf(&o, "...");
    out_char(&o, '\n');
    for (int64_t i = 0; i < prefix + col; i++)
        out_char(&o, ' ');
    out_char(&o, '^');
}

/* Returns sql[e->pos .. e->end) as a NUL-terminated arena string, or NULL
 * when e is NULL, its range is invalid, or memory runs out. */
char *sql_expr_text(SqlArena *a, const char *sql, const AstExpr *e) {
    if (!a || !sql || !e || e->pos < 0 || e->end < e->pos) return NULL;
    return sql_arena_strndup(a, sql + e->pos, (size_t)(e->end - e->pos));
}
