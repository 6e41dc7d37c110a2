/*
 * parse.c -- recursive-descent parser for gqp's SQL dialect (grammar in the
 * comment of sql_parse_one in sqlfront.h). Builds the AST in the caller's
 * arena; lists grow by doubling, so a 64-table FROM or a 64-term AND chain
 * costs linear time.
 *
 * Error handling: every parse_* function returns NULL (or -1) after the
 * first error, which it records in p->err; callers just propagate.
 */
#include "sqlfront/sqlfront.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Deepest recursion of the parser (nested parentheses, NOT, unary minus,
 * CASE, CAST, calls, parenthesized FROM lists) before it gives up: protects
 * the C stack from hostile input such as 100000 opening parentheses. The
 * height of the tree it builds is bounded separately (SQL_MAX_EXPR_DEPTH). */
#define PARSE_MAX_DEPTH 1000

/* Longest token text quoted in an error message. */
#define ERR_TOKEN_MAX 120

typedef struct Parser {
    const char *sql;
    int64_t len;
    SqlArena *arena;
    SqlToken tok;     /* current (not yet consumed) token */
    int64_t prev_end; /* byte offset just past the last consumed token */
    SqlError *err;
    int failed; /* an error has been recorded */
    int depth;  /* current expression nesting */
    /* bind parameters seen so far (AstStmt's nparams / params / names) */
    int nparams;
    struct Vec *prefs;  /* AstParamRef */
    struct Vec *pnamed; /* ParamName */
} Parser;

/* A named parameter (or "?N") and its index. */
typedef struct ParamName {
    char *name;
    int index;
} ParamName;

/* A growable array in the arena; elem bytes per item. */
typedef struct Vec { /* also declared as struct Vec in Parser */
    char *data;
    int64_t n, cap;
    size_t elem;
} Vec;

/* Words that never name a column, table or alias unless "quoted". */
static const char *const reserved_words[] = {
    "all",       "and",     "as",         "asc",    "between", "by",      "case",   "cast",
    "check",     "collate", "constraint", "create", "cross",   "default", "delete", "desc",
    "distinct",  "drop",    "else",       "end",    "escape",  "except",  "exists", "false",
    "from",      "full",    "glob",       "group",  "having",  "in",      "inner",  "insert",
    "intersect", "into",    "is",         "isnull", "join",    "left",    "like",   "limit",
    "natural",   "not",     "notnull",    "null",   "offset",  "on",      "or",     "order",
    "outer",     "primary", "references", "right",  "select",  "table",   "then",   "true",
    "union",     "unique",  "update",     "using",  "values",  "when",    "where",  "with",
};

/* ---- errors ---- */

/* Records a formatted error at offset (first error wins). Returns -1 so
 * callers can `return fail(...)`. */
static int fail_at(Parser *p, int64_t offset, const char *fmt, ...) {
    if (p->failed) return -1;
    p->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
    va_end(ap);
    p->err->offset = offset;
    return -1;
}

/* Records "out of memory" (no position). Returns -1. */
static int fail_oom(Parser *p) {
    return fail_at(p, -1, "out of memory");
}

/* Records the PostgreSQL-style syntax error for the current token:
 * `syntax error at or near "<text>"`, `syntax error at end of input`, or
 * for a TK_ERROR token the specific lexical error. Returns -1. */
static int fail_syntax(Parser *p) {
    SqlToken t = p->tok;
    if (t.kind == TK_EOF) return fail_at(p, p->len, "syntax error at end of input");
    int n = t.len > ERR_TOKEN_MAX ? ERR_TOKEN_MAX : (int)t.len;
    const char *s = p->sql + t.pos;
    if (t.kind == TK_ERROR) {
        if (s[0] == '\'')
            return fail_at(p, t.pos, "unterminated quoted string at or near \"%.*s\"", n, s);
        if (s[0] == '"' || s[0] == '`')
            return fail_at(p, t.pos, "unterminated quoted identifier at or near \"%.*s\"", n, s);
        if (t.len >= 2 && s[0] == '/' && s[1] == '*')
            return fail_at(p, t.pos, "unterminated /* comment at or near \"%.*s\"", n, s);
    }
    return fail_at(p, t.pos, "syntax error at or near \"%.*s\"", n, s);
}

/* Records "<what> is not supported" at offset. Returns -1. */
static int fail_unsupported(Parser *p, int64_t offset, const char *what) {
    return fail_at(p, offset, "%s is not supported", what);
}

/* ---- tokens ---- */

/* Consumes the current token and reads the next one. */
static void advance(Parser *p) {
    p->prev_end = p->tok.pos + p->tok.len;
    p->tok = sql_next_token(p->sql, p->len, p->prev_end);
}

/* Returns the token after the current one, without consuming anything. */
static SqlToken peek(const Parser *p) {
    return sql_next_token(p->sql, p->len, p->tok.pos + p->tok.len);
}

/* Returns the token after t, without consuming anything. */
static SqlToken peek_after(const Parser *p, SqlToken t) {
    return sql_next_token(p->sql, p->len, t.pos + t.len);
}

/* Returns 1 when t is the operator spelled op. */
static int tok_is_op(const Parser *p, SqlToken t, const char *op) {
    size_t n = strlen(op);
    return t.kind == TK_OP && (size_t)t.len == n && memcmp(p->sql + t.pos, op, n) == 0;
}

/* Returns 1 when t is the unquoted keyword kw (kw given in lower case). */
static int tok_is_kw(const Parser *p, SqlToken t, const char *kw) {
    size_t n = strlen(kw);
    if (t.kind != TK_IDENT || t.quoted || (size_t)t.len != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p->sql[t.pos + (int64_t)i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != kw[i]) return 0;
    }
    return 1;
}

/* Returns 1 when the current token is the operator op. */
static int is_op(const Parser *p, const char *op) {
    return tok_is_op(p, p->tok, op);
}

/* Returns 1 when the current token is the keyword kw (lower case). */
static int is_kw(const Parser *p, const char *kw) {
    return tok_is_kw(p, p->tok, kw);
}

/* Consumes the current token and returns 1 if it is operator op; else 0. */
static int accept_op(Parser *p, const char *op) {
    if (!is_op(p, op)) return 0;
    advance(p);
    return 1;
}

/* Consumes the current token and returns 1 if it is keyword kw; else 0. */
static int accept_kw(Parser *p, const char *kw) {
    if (!is_kw(p, kw)) return 0;
    advance(p);
    return 1;
}

/* Consumes operator op; returns 0, or -1 with a syntax error. */
static int expect_op(Parser *p, const char *op) {
    if (accept_op(p, op)) return 0;
    return fail_syntax(p);
}

/* Consumes keyword kw; returns 0, or -1 with a syntax error. */
static int expect_kw(Parser *p, const char *kw) {
    if (accept_kw(p, kw)) return 0;
    return fail_syntax(p);
}

/* Returns 1 when t is an unquoted reserved word. */
static int tok_is_reserved(const Parser *p, SqlToken t) {
    if (t.kind != TK_IDENT || t.quoted) return 0;
    for (size_t i = 0; i < sizeof reserved_words / sizeof reserved_words[0]; i++)
        if (tok_is_kw(p, t, reserved_words[i])) return 1;
    return 0;
}

/* Returns 1 when t can be a name: a quoted identifier or an unreserved one. */
static int tok_is_name(const Parser *p, SqlToken t) {
    return t.kind == TK_IDENT && !tok_is_reserved(p, t);
}

/* Returns the text of t with quotes removed and doubled quotes undone
 * (identifiers and strings), arena-owned; NULL after an out-of-memory error. */
static char *tok_text(Parser *p, SqlToken t) {
    const char *s = p->sql + t.pos;
    int quoted = t.kind == TK_STRING || (t.kind == TK_IDENT && t.quoted);
    if (!quoted) {
        char *r = sql_arena_strndup(p->arena, s, (size_t)t.len);
        if (!r) fail_oom(p);
        return r;
    }
    char q = s[0];
    char *r = sql_arena_alloc(p->arena, (size_t)t.len);
    if (!r) {
        fail_oom(p);
        return NULL;
    }
    int64_t o = 0;
    for (int64_t i = 1; i < t.len - 1; i++) {
        r[o++] = s[i];
        if (s[i] == q) i++; /* skip the second quote of a doubled pair */
    }
    r[o] = '\0';
    return r;
}

/* Consumes a name (quoted or unreserved identifier) and returns its text,
 * arena-owned; NULL with a syntax error when the current token is not one. */
static char *expect_name(Parser *p) {
    if (!tok_is_name(p, p->tok)) {
        fail_syntax(p);
        return NULL;
    }
    char *s = tok_text(p, p->tok);
    if (s) advance(p);
    return s;
}

/* ---- growable arrays ---- */

/* Returns an empty vector of elem-byte items. */
static Vec vec_make(size_t elem) {
    Vec v = {NULL, 0, 0, elem};
    return v;
}

/* Appends a copy of *item; returns 0, or -1 after recording an error (out
 * of memory, or more than INT_MAX items). */
static int vec_push(Parser *p, Vec *v, const void *item) {
    if (v->n == v->cap) {
        if (v->n >= INT_MAX) return fail_at(p, p->tok.pos, "too many items in a list");
        int64_t cap = v->cap ? v->cap * 2 : 8;
        char *d = sql_arena_alloc(p->arena, (size_t)cap * v->elem);
        if (!d) return fail_oom(p);
        if (v->n) memcpy(d, v->data, (size_t)v->n * v->elem);
        v->data = d;
        v->cap = cap;
    }
    memcpy(v->data + (size_t)v->n * v->elem, item, v->elem);
    v->n++;
    return 0;
}

/* ---- expressions ---- */

static AstExpr *parse_expr(Parser *p);
static AstExpr *parse_not(Parser *p);
static AstExpr *parse_unary(Parser *p);

/* Returns a zeroed expression node of kind k spanning [pos, end); NULL after
 * an out-of-memory error. */
static AstSelect *parse_select(Parser *p);

static AstExpr *new_expr(Parser *p, AstKind k, int64_t pos, int64_t end) {
    AstExpr *e = sql_arena_alloc(p->arena, sizeof *e);
    if (!e) {
        fail_oom(p);
        return NULL;
    }
    e->kind = k;
    e->pos = pos;
    e->end = end;
    e->height = 1;
    e->weight = 1;
    return e;
}

/* Records the depth-limit error at offset. Returns -1. */
static int fail_depth(Parser *p, int64_t offset) {
    return fail_at(p, offset, "Expression tree is too large (maximum depth %d)",
                   SQL_MAX_EXPR_DEPTH);
}

/* Returns 1 when e is a literal (or a signed numeric literal): a value the
 * binder turns into a constant. */
static int is_literal(const AstExpr *e) {
    if (e->kind == AST_UNARY && (e->op == OP_NEG || e->op == OP_PLUS)) e = e->a;
    return e->kind == AST_INT || e->kind == AST_FLOAT || e->kind == AST_STRING ||
           e->kind == AST_NULL || e->kind == AST_DATE || e->kind == AST_BOOL;
}

/* Returns how many times the binder uses operand a of e (1 for most; see
 * SQL_MAX_EXPR_WEIGHT): BETWEEN 2; an IN list bound to = / OR (SQL_IN_SET_MIN
 * values or fewer, or not all literals, planner/bind.c) once per value; a CASE
 * operand once per WHEN; ABS 3 (x < 0, -x, x). */
static int64_t operand_uses(const AstExpr *e) {
    switch (e->kind) {
    case AST_BETWEEN:
        return 2;
    case AST_IN: {
        int lit = e->nlist > SQL_IN_SET_MIN;
        for (int i = 0; lit && i < e->nlist; i++)
            lit = is_literal(e->list[i]);
        return lit || e->nlist == 0 ? 1 : e->nlist;
    }
    case AST_CASE:
        return e->nlist / 2 > 1 ? e->nlist / 2 : 1;
    default:
        return 1;
    }
}

/* Sets e->height to 1 + extra + the height of its tallest child (a, b, c and
 * list), and e->weight to 1 + its children's weights (a counted
 * operand_uses times, a call's arguments as the binder uses them), and
 * returns e; NULL (error at `at`) when the height exceeds
 * SQL_MAX_EXPR_DEPTH or the weight SQL_MAX_EXPR_WEIGHT. extra counts levels
 * the binder adds (the arms of a CASE, the arguments of a call, which it
 * chains). */
static AstExpr *set_height(Parser *p, AstExpr *e, int64_t extra, int64_t at) {
    if (!e) return NULL;
    const int64_t wmax = SQL_MAX_EXPR_WEIGHT + 1; /* weights saturate here */
    int64_t h = 0, w = 1;
    const AstExpr *kids[3] = {e->a, e->b, e->c};
    for (int i = 0; i < 3; i++) {
        if (!kids[i]) continue;
        if (kids[i]->height > h) h = kids[i]->height;
        int64_t uses = i == 0 ? operand_uses(e) : 1;
        w += kids[i]->weight > wmax / uses ? wmax : kids[i]->weight * uses;
        if (w > wmax) w = wmax;
    }
    int64_t arg_uses = 1;
    if (e->kind == AST_FUNC && e->str && strcasecmp(e->str, "abs") == 0) arg_uses = 3;
    if (e->kind == AST_FUNC && e->str && strcasecmp(e->str, "nullif") == 0) arg_uses = 2;
    /* the binder's rewrites (planner/bind.c bind_mathfunc) read x that often */
    if (e->kind == AST_FUNC && e->str &&
        (strcasecmp(e->str, "ceil") == 0 || strcasecmp(e->str, "ceiling") == 0 ||
         strcasecmp(e->str, "floor") == 0))
        arg_uses = 6;
    if (e->kind == AST_FUNC && e->str &&
        (strcasecmp(e->str, "trunc") == 0 || strcasecmp(e->str, "sign") == 0 ||
         strcasecmp(e->str, "greatest") == 0 || strcasecmp(e->str, "least") == 0))
        arg_uses = 4;
    for (int i = 0; i < e->nlist; i++) {
        if (!e->list[i]) continue;
        if (e->list[i]->height > h) h = e->list[i]->height;
        w += e->list[i]->weight > wmax / arg_uses ? wmax : e->list[i]->weight * arg_uses;
        if (w > wmax) w = wmax;
    }
    h += 1 + extra;
    if (h > SQL_MAX_EXPR_DEPTH) {
        fail_depth(p, at);
        return NULL;
    }
    if (w > SQL_MAX_EXPR_WEIGHT) {
        fail_at(p, at, "Expression tree is too large (more than %d nodes when expanded)",
                SQL_MAX_EXPR_WEIGHT);
        return NULL;
    }
    e->height = (int)h;
    e->weight = w;
    return e;
}

/* Returns a binary node a <op> b spanning both; NULL after an error
 * (including a tree deeper than SQL_MAX_EXPR_DEPTH, reported at b). */
static AstExpr *new_binary(Parser *p, AstOp op, AstExpr *a, AstExpr *b) {
    AstExpr *e = new_expr(p, AST_BINARY, a->pos, b->end);
    if (!e) return NULL;
    e->op = op;
    e->a = a;
    e->b = b;
    return set_height(p, e, 0, b->pos);
}

/* Returns the balanced tree of op (AND / OR) over terms[0..n) (n >= 1), the
 * terms in order left to right (the left half takes the middle term): its
 * height is the tallest term's plus about log2(n), so a chain of 100000
 * terms is no deeper than one of 20. NULL after an error. */
static AstExpr *balanced_chain(Parser *p, AstOp op, AstExpr **terms, int64_t n) {
    if (n == 1) return terms[0];
    int64_t h = (n + 1) / 2;
    AstExpr *l = balanced_chain(p, op, terms, h);
    AstExpr *r = l ? balanced_chain(p, op, terms + h, n - h) : NULL;
    return r ? new_binary(p, op, l, r) : NULL;
}

/* Enters one level of expression nesting; returns 0, or -1 with an error
 * when the input nests deeper than PARSE_MAX_DEPTH. */
static int enter(Parser *p) {
    if (++p->depth > PARSE_MAX_DEPTH) return fail_depth(p, p->tok.pos);
    return 0;
}

/* Returns the number of days from 1970-01-01 to the proleptic Gregorian
 * date y-m-d (negative before 1970). Inputs must be a valid date. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Parses "yyyy-mm-dd" (year 1..4 digits, month and day 1..2 digits) into
 * *days since 1970-01-01. Returns 0, or -1 when the text is not a valid
 * calendar date (month 1..12, day within the month, leap years honoured). */
static int parse_date_text(const char *s, int64_t *days) {
    int64_t v[3] = {0, 0, 0};
    int maxd[3] = {4, 2, 2};
    const char *c = s;
    for (int f = 0; f < 3; f++) {
        int nd = 0;
        while (*c >= '0' && *c <= '9' && nd < maxd[f])
            v[f] = v[f] * 10 + (*c++ - '0'), nd++;
        if (nd == 0) return -1;
        if (f < 2 && *c++ != '-') return -1;
    }
    if (*c != '\0') return -1;
    int64_t y = v[0], m = v[1], d = v[2];
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1 || m < 1 || m > 12 || d < 1) return -1;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    int dim = mdays[m - 1] + (m == 2 && leap);
    if (d > dim) return -1;
    *days = days_from_civil(y, m, d);
    return 0;
}

/* Returns the literal for the current TK_INTEGER token (consumed): AST_INT,
 * or AST_FLOAT when a decimal literal overflows int64 (as SQLite does).
 * A hex literal wider than 64 bits is an error. NULL after an error. */
static AstExpr *parse_integer(Parser *p) {
    SqlToken t = p->tok;
    const char *s = p->sql + t.pos;
    advance(p);
    AstExpr *e = new_expr(p, AST_INT, t.pos, p->prev_end);
    if (!e) return NULL;
    if (t.len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        uint64_t v = 0;
        int digits = 0;
        for (int64_t i = 2; i < t.len; i++) {
            char c = s[i];
            int d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
            if (v || d) digits++;
            v = v * 16 + (uint64_t)d;
        }
        if (digits > 16) {
            fail_at(p, t.pos, "hex literal too big: \"%.*s\"", (int)(t.len > 60 ? 60 : t.len), s);
            return NULL;
        }
        e->ival = (int64_t)v;
        return e;
    }
    int64_t v = 0;
    for (int64_t i = 0; i < t.len; i++) {
        int d = s[i] - '0';
        if (v > (INT64_MAX - d) / 10) {
            char *txt = sql_arena_strndup(p->arena, s, (size_t)t.len);
            if (!txt) {
                fail_oom(p);
                return NULL;
            }
            e->kind = AST_FLOAT;
            e->fval = strtod(txt, NULL);
            return e;
        }
        v = v * 10 + d;
    }
    e->ival = v;
    return e;
}

/* Returns 1 when the TK_INTEGER token t spells 9223372036854775808 (2^63),
 * the one magnitude that only fits in int64 when negated. */
static int tok_is_int64_min_magnitude(const Parser *p, SqlToken t) {
    static const char m[] = "9223372036854775808";
    const char *s = p->sql + t.pos;
    int64_t i = 0;
    while (i < t.len - 1 && s[i] == '0')
        i++;
    return t.len - i == (int64_t)(sizeof m - 1) && memcmp(s + i, m, sizeof m - 1) == 0;
}

/* Parses a type name for CAST or a column definition: one or more words,
 * then optionally "(n[, m])" with signed numbers. Stops before a word for
 * which stop() is true. Returns the text as written (arena-owned, "" when no
 * word is present and allow_empty), or NULL after an error. */
static char *parse_type_name(Parser *p, int allow_empty, int (*stop)(const Parser *, SqlToken)) {
    int64_t start = p->tok.pos;
    int words = 0;
    while (p->tok.kind == TK_IDENT && !(stop && stop(p, p->tok))) {
        advance(p);
        words++;
    }
    if (words == 0) {
        if (!allow_empty) {
            fail_syntax(p);
            return NULL;
        }
        char *r = sql_arena_strndup(p->arena, "", 0);
        if (!r) fail_oom(p);
        return r;
    }
    if (accept_op(p, "(")) {
        for (int i = 0;; i++) {
            if (i > 0 && !accept_op(p, ",")) break;
            if (is_op(p, "+") || is_op(p, "-")) advance(p);
            if (p->tok.kind != TK_INTEGER && p->tok.kind != TK_FLOAT) {
                fail_syntax(p);
                return NULL;
            }
            advance(p);
        }
        if (expect_op(p, ")") < 0) return NULL;
    }
    char *r = sql_arena_strndup(p->arena, p->sql + start, (size_t)(p->prev_end - start));
    if (!r) fail_oom(p);
    return r;
}

/* Parses "expr {, expr}" into *v (of AstExpr *). Returns 0, or -1 after an
 * error. */
static int parse_expr_list(Parser *p, Vec *v) {
    do {
        AstExpr *e = parse_expr(p);
        if (!e || vec_push(p, v, &e) < 0) return -1;
    } while (accept_op(p, ","));
    return 0;
}

/* Parses the arguments of a function call whose name token has been consumed
 * and whose "(" is current; returns the AST_FUNC node or NULL after an error.
 * Accepts f(), f(*), f(DISTINCT x, ...), f(ALL x, ...). */
static AstExpr *parse_call(Parser *p, SqlToken name) {
    AstExpr *e = new_expr(p, AST_FUNC, name.pos, name.pos + name.len);
    if (!e || !(e->str = tok_text(p, name))) return NULL;
    advance(p); /* ( */
    Vec args = vec_make(sizeof(AstExpr *));
    if (is_op(p, "*")) {
        AstExpr *star = new_expr(p, AST_STAR, p->tok.pos, p->tok.pos + 1);
        if (!star) return NULL;
        advance(p);
        if (vec_push(p, &args, &star) < 0) return NULL;
    } else if (!is_op(p, ")")) {
        if (accept_kw(p, "distinct"))
            e->distinct = 1;
        else
            accept_kw(p, "all");
        if (parse_expr_list(p, &args) < 0) return NULL;
    }
    if (expect_op(p, ")") < 0) return NULL;
    e->list = (AstExpr **)args.data;
    e->nlist = (int)args.n;
    /* an aggregate's FILTER (WHERE cond) (SQLite 3.30, DuckDB): cond in c */
    if (is_kw(p, "filter") && tok_is_op(p, peek(p), "(")) {
        advance(p);
        advance(p);
        if (expect_kw(p, "where") < 0 || !(e->c = parse_expr(p)) || expect_op(p, ")") < 0)
            return NULL;
    }
    e->end = p->prev_end;
    /* COALESCE / IFNULL bind to a chain of one node per argument */
    return set_height(p, e, e->nlist > 1 ? e->nlist - 1 : 0, e->pos);
}

/* A STRING node holding the literal text txt (arena copy), at pos. */
static AstExpr *string_node(Parser *p, const char *txt, int64_t pos, int64_t end) {
    AstExpr *e = new_expr(p, AST_STRING, pos, end);
    if (!e) return NULL;
    size_t n = strlen(txt);
    if (!(e->str = sql_arena_alloc(p->arena, n + 1))) {
        fail_at(p, pos, "out of memory");
        return NULL;
    }
    memcpy(e->str, txt, n + 1);
    return e;
}

/* Parses EXTRACT(field FROM expr) with EXTRACT current; returns the
 * AST_FUNC "extract" with list [STRING field (lower case), expr]. */
static AstExpr *parse_extract(Parser *p, SqlToken name) {
    AstExpr *e = new_expr(p, AST_FUNC, name.pos, 0);
    if (!e || !(e->str = tok_text(p, name))) return NULL;
    advance(p); /* EXTRACT */
    if (expect_op(p, "(") < 0) return NULL;
    SqlToken f = p->tok;
    if (f.kind != TK_IDENT && f.kind != TK_STRING) return fail_syntax(p), NULL;
    char *ft = tok_text(p, f);
    if (!ft) return NULL;
    for (char *c = ft; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c + 32);
    advance(p);
    if (expect_kw(p, "from") < 0) return NULL;
    AstExpr *fld = string_node(p, ft, f.pos, f.pos + f.len), *x = parse_expr(p);
    if (!fld || !x || expect_op(p, ")") < 0) return NULL;
    AstExpr **l = sql_arena_alloc(p->arena, 2 * sizeof(AstExpr *));
    if (!l) return fail_at(p, name.pos, "out of memory"), NULL;
    l[0] = fld;
    l[1] = x;
    e->list = l;
    e->nlist = 2;
    e->end = p->prev_end;
    return e;
}

/* Parses SUBSTRING(x FROM a [FOR b]) with "(" current (the name consumed);
 * also the comma form. Returns AST_FUNC "substr" with list [x, a[, b]]. */
static AstExpr *parse_substring(Parser *p, SqlToken name) {
    AstExpr *e = new_expr(p, AST_FUNC, name.pos, 0);
    if (!e || !(e->str = tok_text(p, name))) return NULL;
    advance(p); /* ( */
    AstExpr **l = sql_arena_alloc(p->arena, 3 * sizeof(AstExpr *));
    if (!l) return fail_at(p, name.pos, "out of memory"), NULL;
    int n = 0;
    if (!(l[n++] = parse_expr(p))) return NULL;
    if (accept_kw(p, "from")) {
        if (!(l[n++] = parse_expr(p))) return NULL;
        if (accept_kw(p, "for") && !(l[n++] = parse_expr(p))) return NULL;
    } else {
        while (n < 3 && accept_op(p, ","))
            if (!(l[n++] = parse_expr(p))) return NULL;
    }
    if (expect_op(p, ")") < 0) return NULL;
    e->list = l;
    e->nlist = n;
    e->end = p->prev_end;
    return e;
}

/* Parses INTERVAL 'n' unit, INTERVAL n unit or INTERVAL 'n unit' with
 * INTERVAL current (a string or integer token follows); unit is DAY, MONTH
 * or YEAR (also plural). Returns AST_FUNC "interval" with list
 * [INT n, STRING unit ("day", "month" or "year")]. */
static AstExpr *parse_interval(Parser *p, SqlToken name) {
    AstExpr *e = new_expr(p, AST_FUNC, name.pos, 0);
    if (!e || !(e->str = tok_text(p, name))) return NULL;
    advance(p); /* INTERVAL */
    SqlToken v = p->tok;
    char *vt = tok_text(p, v);
    if (!vt) return NULL;
    advance(p);
    char *endp;
    long long n = strtoll(vt, &endp, 10);
    if (endp == vt) return fail_at(p, v.pos, "invalid INTERVAL value"), NULL;
    while (*endp == ' ')
        endp++;
    char unit[16] = {0};
    if (*endp) { /* INTERVAL '3 days' */
        snprintf(unit, sizeof unit, "%s", endp);
    } else {
        if (p->tok.kind != TK_IDENT) return fail_syntax(p), NULL;
        char *ut = tok_text(p, p->tok);
        if (!ut) return NULL;
        snprintf(unit, sizeof unit, "%s", ut);
        advance(p);
    }
    for (char *c = unit; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c + 32);
    size_t ul = strlen(unit);
    if (ul > 1 && unit[ul - 1] == 's') unit[ul - 1] = 0;
    if (strcmp(unit, "day") && strcmp(unit, "month") && strcmp(unit, "year"))
        return fail_at(p, v.pos, "INTERVAL unit \"%s\" is not supported (DAY, MONTH, YEAR)", unit),
               NULL;
    AstExpr *nv = new_expr(p, AST_INT, v.pos, v.pos + v.len),
            *u = string_node(p, unit, v.pos, v.pos);
    AstExpr **l = sql_arena_alloc(p->arena, 2 * sizeof(AstExpr *));
    if (!nv || !u || !l) return fail_at(p, name.pos, "out of memory"), NULL;
    nv->ival = n;
    l[0] = nv;
    l[1] = u;
    e->list = l;
    e->nlist = 2;
    e->end = p->prev_end;
    return e;
}

/* Parses CASE [operand] WHEN c THEN r ... [ELSE e] END with CASE current.
 * Returns the AST_CASE node (list holds when/then pairs) or NULL. */
static AstExpr *parse_case(Parser *p) {
    AstExpr *e = new_expr(p, AST_CASE, p->tok.pos, 0);
    if (!e) return NULL;
    advance(p);
    if (!is_kw(p, "when") && !(e->a = parse_expr(p))) return NULL;
    Vec arms = vec_make(sizeof(AstExpr *));
    if (!is_kw(p, "when")) {
        fail_syntax(p);
        return NULL;
    }
    while (accept_kw(p, "when")) {
        AstExpr *w = parse_expr(p);
        if (!w || vec_push(p, &arms, &w) < 0 || expect_kw(p, "then") < 0) return NULL;
        AstExpr *t = parse_expr(p);
        if (!t || vec_push(p, &arms, &t) < 0) return NULL;
    }
    if (accept_kw(p, "else") && !(e->b = parse_expr(p))) return NULL;
    if (expect_kw(p, "end") < 0) return NULL;
    e->list = (AstExpr **)arms.data;
    e->nlist = (int)arms.n;
    e->end = p->prev_end;
    /* the binder nests one node per WHEN arm */
    return set_height(p, e, e->nlist / 2, e->pos);
}

/* Parses CAST(expr AS type) with CAST current. Returns the AST_CAST node
 * (type text in str) or NULL. */
static AstExpr *parse_cast(Parser *p) {
    AstExpr *e = new_expr(p, AST_CAST, p->tok.pos, 0);
    if (!e) return NULL;
    advance(p);
    if (expect_op(p, "(") < 0 || !(e->a = parse_expr(p)) || expect_kw(p, "as") < 0) return NULL;
    if (!(e->str = parse_type_name(p, 0, NULL))) return NULL;
    if (expect_op(p, ")") < 0) return NULL;
    e->end = p->prev_end;
    return set_height(p, e, 0, e->pos);
}

/* Parses a primary expression: literal, column, function call, CASE, CAST,
 * DATE literal or parenthesized expression. Returns the node or NULL. */
/* Parses a bind parameter token into an AST_PARAM node and records it
 * (numbering as in AstStmt). Returns the node or NULL. */
static AstExpr *parse_param(Parser *p) {
    SqlToken t = p->tok;
    const char *s = p->sql + t.pos;
    AstExpr *e = new_expr(p, AST_PARAM, t.pos, t.pos + t.len);
    if (!e) return NULL;
    int index = 0;
    if (t.len == 1 && s[0] == '?') {
        index = p->nparams + 1;
    } else {
        if (s[0] == '?') {
            int64_t v = 0;
            for (int64_t i = 1; i < t.len && v <= SQL_MAX_PARAMS; i++)
                v = v * 10 + (s[i] - '0');
            if (v < 1 || v > SQL_MAX_PARAMS) {
                fail_at(p, t.pos, "variable number must be between ?1 and ?%d", SQL_MAX_PARAMS);
                return NULL;
            }
            index = (int)v;
        }
        const ParamName *names = (const ParamName *)p->pnamed->data;
        int seen = 0;
        for (int64_t k = 0; k < p->pnamed->n && !seen; k++)
            if ((int64_t)strlen(names[k].name) == t.len &&
                memcmp(names[k].name, s, (size_t)t.len) == 0) {
                index = names[k].index;
                seen = 1;
            }
        if (index == 0) index = p->nparams + 1; /* a new name */
        if (!seen) {
            ParamName pn = {sql_arena_strndup(p->arena, s, (size_t)t.len), index};
            if (!pn.name) {
                fail_oom(p);
                return NULL;
            }
            if (vec_push(p, p->pnamed, &pn) < 0) return NULL;
        }
    }
    if (index > SQL_MAX_PARAMS) {
        fail_at(p, t.pos, "too many SQL variables (at most %d)", SQL_MAX_PARAMS);
        return NULL;
    }
    if (index > p->nparams) p->nparams = index;
    e->ival = index;
    if (!(e->str = sql_arena_strndup(p->arena, s, (size_t)t.len))) {
        fail_oom(p);
        return NULL;
    }
    AstParamRef ref = {e, index};
    if (vec_push(p, p->prefs, &ref) < 0) return NULL;
    advance(p);
    return e;
}

static AstExpr *parse_primary(Parser *p) {
    SqlToken t = p->tok;
    AstExpr *e;
    switch (t.kind) {
    case TK_PARAM:
        return parse_param(p);
    case TK_INTEGER:
        return parse_integer(p);
    case TK_FLOAT: {
        char *txt = tok_text(p, t);
        if (!txt || !(e = new_expr(p, AST_FLOAT, t.pos, t.pos + t.len))) return NULL;
        e->fval = strtod(txt, NULL);
        advance(p);
        return e;
    }
    case TK_STRING:
        if (!(e = new_expr(p, AST_STRING, t.pos, t.pos + t.len)) || !(e->str = tok_text(p, t)))
            return NULL;
        advance(p);
        return e;
    case TK_OP:
        if (is_op(p, "(")) {
            SqlToken n = peek(p);
            if (tok_is_kw(p, n, "select") || tok_is_kw(p, n, "with")) {
                if (enter(p) < 0) return NULL;
                advance(p);
                if (!(e = new_expr(p, AST_SUBQUERY, t.pos, 0))) return NULL;
                e->sub_kind = AST_SUBQUERY;
                if (!(e->select = parse_select(p)) || expect_op(p, ")") < 0) return NULL;
                p->depth--;
                e->end = p->prev_end;
                return e;
            }
            advance(p);
            if (!(e = parse_expr(p)) || expect_op(p, ")") < 0) return NULL;
            e->pos = t.pos; /* the parentheses belong to the text, e.g. "(a+b)" */
            e->end = p->prev_end;
            return e;
        }
        fail_syntax(p);
        return NULL;
    case TK_IDENT:
        break;
    default:
        fail_syntax(p);
        return NULL;
    }

    if (!t.quoted) {
        if (is_kw(p, "null") || is_kw(p, "true") || is_kw(p, "false")) {
            int is_null = is_kw(p, "null");
            if (!(e = new_expr(p, is_null ? AST_NULL : AST_BOOL, t.pos, t.pos + t.len)))
                return NULL;
            e->ival = is_kw(p, "true");
            advance(p);
            return e;
        }
        if (is_kw(p, "case")) return parse_case(p);
        if (is_kw(p, "cast")) return parse_cast(p);
        if (is_kw(p, "exists") && tok_is_op(p, peek(p), "(")) {
            advance(p);
            advance(p);
            if (!is_kw(p, "select") && !is_kw(p, "with")) {
                fail_syntax(p);
                return NULL;
            }
            if (enter(p) < 0) return NULL;
            if (!(e = new_expr(p, AST_EXISTS, t.pos, 0))) return NULL;
            e->sub_kind = AST_EXISTS;
            if (!(e->select = parse_select(p)) || expect_op(p, ")") < 0) return NULL;
            p->depth--;
            e->end = p->prev_end;
            return e;
        }
        SqlToken n = peek(p);
        if (is_kw(p, "extract") && tok_is_op(p, n, "(")) return parse_extract(p, t);
        if ((is_kw(p, "left") || is_kw(p, "right")) && tok_is_op(p, n, "(")) {
            advance(p); /* DuckDB's left(s, n) / right(s, n): calls, not joins */
            return parse_call(p, t);
        }
        if (is_kw(p, "interval") && (n.kind == TK_STRING || n.kind == TK_INTEGER))
            return parse_interval(p, t);
        if (is_kw(p, "date") && n.kind == TK_STRING) {
            if (!(e = new_expr(p, AST_DATE, t.pos, n.pos + n.len)) || !(e->str = tok_text(p, n)))
                return NULL;
            if (parse_date_text(e->str, &e->ival) < 0) {
                fail_at(p, n.pos, "invalid date literal at or near \"%.*s\"",
                        (int)(n.len > ERR_TOKEN_MAX ? ERR_TOKEN_MAX : n.len), p->sql + n.pos);
                return NULL;
            }
            advance(p);
            advance(p);
            return e;
        }
    }
    if (!tok_is_name(p, t)) {
        fail_syntax(p);
        return NULL;
    }
    advance(p);
    if (is_op(p, "(") && !t.quoted && tok_is_kw(p, t, "substring")) return parse_substring(p, t);
    if (is_op(p, "(")) return parse_call(p, t);
    if (!(e = new_expr(p, AST_COLUMN, t.pos, t.pos + t.len)) || !(e->str = tok_text(p, t)))
        return NULL;
    if (is_op(p, ".")) {
        advance(p);
        e->table = e->str;
        if (!(e->str = expect_name(p))) return NULL;
        e->end = p->prev_end;
    }
    return e;
}

/* unary := ('-' | '+') unary | NOT not-expr | primary. NOT as an operand
 * (as in "1 = NOT 0") is accepted as SQLite does. -9223372036854775808
 * becomes one AST_INT. Returns the node or NULL. */
static AstExpr *parse_unary(Parser *p) {
    if (enter(p) < 0) return NULL;
    SqlToken t = p->tok;
    AstExpr *e = NULL;
    if (is_op(p, "-") || is_op(p, "+")) {
        SqlToken n = peek(p);
        if (is_op(p, "-") && n.kind == TK_INTEGER && tok_is_int64_min_magnitude(p, n)) {
            advance(p);
            advance(p);
            if ((e = new_expr(p, AST_INT, t.pos, p->prev_end))) e->ival = INT64_MIN;
        } else {
            advance(p);
            AstExpr *a = parse_unary(p);
            if (a && (e = new_expr(p, AST_UNARY, t.pos, a->end))) {
                e->op = tok_is_op(p, t, "-") ? OP_NEG : OP_PLUS;
                e->a = a;
                e = set_height(p, e, 0, t.pos);
            }
        }
    } else if (is_kw(p, "not")) {
        e = parse_not(p);
    } else {
        e = parse_primary(p);
    }
    p->depth--;
    return e;
}

/* Binding strength of the binary and postfix operators below NOT, as
 * SQLite's grammar (parse.y) orders them, weakest first. */
enum {
    PREC_EQ = 1, /* = == <> != IS ISNULL NOTNULL NOT NULL [NOT] BETWEEN IN LIKE */
    PREC_REL,    /* < <= > >= */
    PREC_ADD,    /* + - */
    PREC_MUL,    /* * / % */
    PREC_CAT     /* || */
};

static AstExpr *parse_binary(Parser *p, int min_prec);

/* Returns the equality operator (= == <> !=) of the current token, or
 * OP_NONE. */
static AstOp eq_op(const Parser *p) {
    if (p->tok.kind != TK_OP) return OP_NONE;
    if (is_op(p, "=") || is_op(p, "==")) return OP_EQ;
    if (is_op(p, "<>") || is_op(p, "!=")) return OP_NE;
    return OP_NONE;
}

/* Returns the precedence of the binary or postfix operator at the current
 * token, 0 when there is none; *op is the binary operator, OP_NONE for the
 * postfix forms of the PREC_EQ level (IS, ISNULL, BETWEEN, ...). */
static int binop_prec(const Parser *p, AstOp *op) {
    *op = OP_NONE;
    if (p->tok.kind == TK_OP) {
        if ((*op = eq_op(p)) != OP_NONE) return PREC_EQ;
        *op = is_op(p, "<")    ? OP_LT
              : is_op(p, "<=") ? OP_LE
              : is_op(p, ">")  ? OP_GT
              : is_op(p, ">=") ? OP_GE
                               : OP_NONE;
        if (*op != OP_NONE) return PREC_REL;
        *op = is_op(p, "+") ? OP_ADD : is_op(p, "-") ? OP_SUB : OP_NONE;
        if (*op != OP_NONE) return PREC_ADD;
        *op = is_op(p, "*") ? OP_MUL : is_op(p, "/") ? OP_DIV : is_op(p, "%") ? OP_MOD : OP_NONE;
        if (*op != OP_NONE) return PREC_MUL;
        if (is_op(p, "||")) return *op = OP_CONCAT, PREC_CAT;
        return 0;
    }
    if (is_kw(p, "is") || is_kw(p, "isnull") || is_kw(p, "notnull") || is_kw(p, "between") ||
        is_kw(p, "in") || is_kw(p, "like"))
        return PREC_EQ;
    if (is_kw(p, "not")) {
        SqlToken n = peek(p);
        if (tok_is_kw(p, n, "between") || tok_is_kw(p, n, "in") || tok_is_kw(p, n, "like") ||
            tok_is_kw(p, n, "null"))
            return PREC_EQ;
    }
    return 0;
}

/* Parses the tail of "l [NOT] BETWEEN/IN/LIKE ..." with the keyword current
 * (NOT already consumed when negated). Returns the node or NULL. */
static AstExpr *parse_predicate_tail(Parser *p, AstExpr *l, int negated) {
    AstExpr *e;
    if (accept_kw(p, "between")) {
        if (!(e = new_expr(p, AST_BETWEEN, l->pos, 0))) return NULL;
        e->a = l;
        if (!(e->b = parse_binary(p, PREC_REL)) || expect_kw(p, "and") < 0 ||
            !(e->c = parse_binary(p, PREC_REL)))
            return NULL;
    } else if (accept_kw(p, "like")) {
        if (!(e = new_expr(p, AST_LIKE, l->pos, 0))) return NULL;
        e->a = l;
        if (!(e->b = parse_binary(p, PREC_REL))) return NULL;
        if (accept_kw(p, "escape") && !(e->c = parse_binary(p, PREC_REL))) return NULL;
    } else if (accept_kw(p, "in")) {
        if (!(e = new_expr(p, AST_IN, l->pos, 0))) return NULL;
        e->a = l;
        e->sub_kind = AST_IN;
        if (!is_op(p, "(") && tok_is_name(p, p->tok)) { /* SQLite's x IN table */
            AstSelect *s = sql_arena_alloc(p->arena, sizeof *s);
            AstSelectItem *it = sql_arena_alloc(p->arena, sizeof *it);
            AstTableRef *r = sql_arena_alloc(p->arena, sizeof *r);
            if (!s || !it || !r) {
                fail_oom(p);
                return NULL;
            }
            r->pos = p->tok.pos;
            if (!(it->expr = new_expr(p, AST_STAR, p->tok.pos, p->tok.pos + p->tok.len)) ||
                !(r->name = expect_name(p)))
                return NULL;
            s->items = it;
            s->nitems = 1;
            s->from = r;
            s->nfrom = 1;
            e->select = s;
            e->negated = negated;
            e->end = p->prev_end;
            return set_height(p, e, 0, e->pos);
        }
        if (expect_op(p, "(") < 0) return NULL;
        if (is_kw(p, "select") || is_kw(p, "with")) {
            if (enter(p) < 0) return NULL;
            if (!(e->select = parse_select(p)) || expect_op(p, ")") < 0) return NULL;
            p->depth--;
            e->negated = negated;
            e->end = p->prev_end;
            return set_height(p, e, 0, e->pos);
        }
        Vec items = vec_make(sizeof(AstExpr *));
        if (!is_op(p, ")") && parse_expr_list(p, &items) < 0) return NULL;
        if (expect_op(p, ")") < 0) return NULL;
        e->list = (AstExpr **)items.data;
        e->nlist = (int)items.n;
    } else {
        fail_syntax(p);
        return NULL;
    }
    e->negated = negated;
    e->end = p->prev_end;
    return set_height(p, e, 0, e->pos);
}

/* Parses the postfix form at the current token (binop_prec gave PREC_EQ
 * and no operator) applied to l: IS [NOT] NULL, ISNULL, NOTNULL, NOT NULL,
 * [NOT] BETWEEN, [NOT] IN, [NOT] LIKE. Returns the node or NULL. */
static AstExpr *parse_postfix(Parser *p, AstExpr *l) {
    if (is_kw(p, "between") || is_kw(p, "in") || is_kw(p, "like"))
        return parse_predicate_tail(p, l, 0);
    if (is_kw(p, "not") && !tok_is_kw(p, peek(p), "null")) {
        advance(p);
        return parse_predicate_tail(p, l, 1);
    }
    AstExpr *e = new_expr(p, AST_ISNULL, l->pos, 0);
    if (!e) return NULL;
    e->a = l;
    if (accept_kw(p, "is")) {
        /* SQLite's IS takes an operand of the next level: in "x IS NULL + 1"
         * it is NULL + 1; IS NULL proper when it is the NULL literal */
        e->negated = accept_kw(p, "not");
        /* IS [NOT] DISTINCT FROM (SQL, DuckDB, SQLite 3.39): IS NOT / IS */
        if (accept_kw(p, "distinct")) {
            if (expect_kw(p, "from") < 0) return NULL;
            e->negated = !e->negated;
        }
        AstExpr *r = parse_binary(p, PREC_EQ + 1);
        if (!r) return NULL;
        if (r->kind != AST_NULL) e->b = r;
    } else {
        e->negated = is_kw(p, "notnull") || is_kw(p, "not"); /* NOT NULL is NOTNULL */
        if (is_kw(p, "not")) advance(p);
        advance(p);
    }
    e->end = p->prev_end;
    return set_height(p, e, 0, e->pos);
}

/* binary(min) := unary {op binary(prec(op) + 1) | postfix} for operators of
 * precedence >= min, by precedence climbing: SQLite's levels (binop_prec),
 * each left-associative; as in SQLite's grammar, an operator after a
 * postfix form applies to everything before it at that level
 * ("x IN (1) < 2" is "(x IN (1)) < 2"). Returns the node or NULL. */
static AstExpr *parse_binary(Parser *p, int min_prec) {
    AstExpr *l = parse_unary(p);
    while (l) {
        AstOp op;
        int prec = binop_prec(p, &op);
        if (prec == 0 || prec < min_prec) break;
        if (op == OP_NONE) {
            l = parse_postfix(p, l);
            continue;
        }
        advance(p);
        AstExpr *r = parse_binary(p, prec + 1);
        l = r ? new_binary(p, op, l, r) : NULL;
    }
    return l;
}

/* cmp := binary(PREC_EQ): everything above NOT. Returns the node or NULL. */
static AstExpr *parse_cmp(Parser *p) {
    return parse_binary(p, PREC_EQ);
}

/* not := NOT not | cmp. Returns the node or NULL. */
static AstExpr *parse_not(Parser *p) {
    if (!is_kw(p, "not")) return parse_cmp(p);
    if (enter(p) < 0) return NULL;
    int64_t pos = p->tok.pos;
    advance(p);
    AstExpr *a = parse_not(p);
    AstExpr *e = a ? new_expr(p, AST_UNARY, pos, a->end) : NULL;
    if (e) {
        e->op = OP_NOT;
        e->a = a;
        e = set_height(p, e, 0, pos);
    }
    p->depth--;
    return e;
}

/* and := not {AND not}, built as a balanced tree (balanced_chain). Returns
 * the node or NULL. */
static AstExpr *parse_and(Parser *p) {
    AstExpr *l = parse_not(p);
    if (!l || !is_kw(p, "and")) return l;
    Vec terms = vec_make(sizeof(AstExpr *));
    if (vec_push(p, &terms, &l) < 0) return NULL;
    while (accept_kw(p, "and")) {
        AstExpr *r = parse_not(p);
        if (!r || vec_push(p, &terms, &r) < 0) return NULL;
    }
    return balanced_chain(p, OP_AND, (AstExpr **)terms.data, terms.n);
}

/* expr := and {OR and}, built as a balanced tree (balanced_chain). Returns
 * the node or NULL. */
static AstExpr *parse_expr(Parser *p) {
    if (enter(p) < 0) return NULL;
    AstExpr *l = parse_and(p);
    if (l && is_kw(p, "or")) {
        Vec terms = vec_make(sizeof(AstExpr *));
        if (vec_push(p, &terms, &l) < 0) l = NULL;
        while (l && accept_kw(p, "or")) {
            AstExpr *r = parse_and(p);
            if (!r || vec_push(p, &terms, &r) < 0) l = NULL;
        }
        if (l) l = balanced_chain(p, OP_OR, (AstExpr **)terms.data, terms.n);
    }
    p->depth--;
    return l;
}

/* ---- SELECT ---- */

/* Returns 1 when t may follow a bare (AS-less) alias: ',', ';', ')', end of
 * input, a lexical error (reported where it is), or a reserved word such as
 * FROM, WHERE or JOIN. */
static int may_follow_bare_alias(const Parser *p, SqlToken t) {
    return t.kind == TK_EOF || t.kind == TK_ERROR || tok_is_op(p, t, ",") || tok_is_op(p, t, ";") ||
           tok_is_op(p, t, ")") || tok_is_reserved(p, t);
}

/* Parses an optional alias: AS name (or AS 'string'), or a bare name that is
 * not a reserved word. Sets *alias (NULL when absent); returns 0 or -1.
 * A bare name followed by something that cannot follow an alias is taken to
 * be a misspelled keyword and reported as the syntax error, so that
 * "SELECT id FORM test" points at FORM (as PostgreSQL's user would expect). */
static int parse_alias(Parser *p, char **alias) {
    *alias = NULL;
    if (accept_kw(p, "as")) {
        if (p->tok.kind == TK_STRING) {
            if (!(*alias = tok_text(p, p->tok))) return -1;
            advance(p);
            return 0;
        }
        return (*alias = expect_name(p)) ? 0 : -1;
    }
    if (!tok_is_name(p, p->tok)) return 0;
    if (!may_follow_bare_alias(p, peek(p))) return fail_syntax(p);
    return (*alias = expect_name(p)) ? 0 : -1;
}

/* Parses one select-list item (*, t.*, or expr [alias]) into *it. Returns 0
 * or -1. */
static int parse_select_item(Parser *p, AstSelectItem *it) {
    SqlToken t = p->tok;
    memset(it, 0, sizeof *it);
    if (is_op(p, "*")) {
        advance(p);
        return (it->expr = new_expr(p, AST_STAR, t.pos, p->prev_end)) ? 0 : -1;
    }
    if (tok_is_name(p, t)) {
        SqlToken dot = peek(p);
        if (tok_is_op(p, dot, ".") && tok_is_op(p, peek_after(p, dot), "*")) {
            char *table = tok_text(p, t);
            if (!table) return -1;
            advance(p);
            advance(p);
            advance(p);
            if (!(it->expr = new_expr(p, AST_STAR, t.pos, p->prev_end))) return -1;
            it->expr->table = table;
            return 0;
        }
    }
    if (!(it->expr = parse_expr(p))) return -1;
    return parse_alias(p, &it->alias);
}

static int parse_from_list(Parser *p, Vec *from);
static AstSelect *parse_select(Parser *p);
static int parse_name_list(Parser *p, char ***names, int *n);

/* Most options and list / struct entries one table function call takes
 * (a bound for random input). */
#define FILE_OPT_MAX 64

/* Parses a string token into *out (arena-owned). Returns 0 or -1. */
static int parse_opt_string(Parser *p, char **out) {
    if (p->tok.kind != TK_STRING) return fail_syntax(p);
    if (!(*out = tok_text(p, p->tok))) return -1;
    advance(p);
    return 0;
}

/* Parses one option value: 'string', [-]integer, TRUE / FALSE, a list
 * ['a', ...] or a struct {'k': 'v', ...} (keys strings or names, values
 * strings). Returns 0 or -1. */
static int parse_opt_value(Parser *p, AstOpt *o) {
    if (p->tok.kind == TK_STRING) {
        o->kind = AST_OPT_STRING;
        return parse_opt_string(p, &o->str);
    }
    if (is_kw(p, "true") || is_kw(p, "false")) {
        o->kind = AST_OPT_BOOL;
        o->ival = is_kw(p, "true");
        advance(p);
        return 0;
    }
    if (p->tok.kind == TK_INTEGER || (is_op(p, "-") && peek(p).kind == TK_INTEGER)) {
        int neg = accept_op(p, "-");
        AstExpr *e = parse_integer(p);
        if (!e) return -1;
        if (e->kind != AST_INT) return fail_at(p, e->pos, "integer option value out of range");
        o->kind = AST_OPT_INT;
        o->ival = neg ? -e->ival : e->ival;
        return 0;
    }
    int list = is_op(p, "[");
    if (!list && !is_op(p, "{")) return fail_syntax(p);
    o->kind = list ? AST_OPT_LIST : AST_OPT_STRUCT;
    advance(p);
    Vec keys = vec_make(sizeof(char *)), vals = vec_make(sizeof(char *));
    if (!is_op(p, list ? "]" : "}")) {
        do {
            if (vals.n >= FILE_OPT_MAX * 16)
                return fail_at(p, p->tok.pos, "too many values in a table function option");
            char *k = NULL, *v = NULL;
            if (!list) {
                if (p->tok.kind == TK_STRING) {
                    if (parse_opt_string(p, &k) < 0) return -1;
                } else if (!(k = expect_name(p))) {
                    return -1;
                }
                if (expect_op(p, ":") < 0 || vec_push(p, &keys, &k) < 0) return -1;
            }
            if (parse_opt_string(p, &v) < 0 || vec_push(p, &vals, &v) < 0) return -1;
        } while (accept_op(p, ","));
    }
    if (expect_op(p, list ? "]" : "}") < 0) return -1;
    o->keys = (char **)keys.data;
    o->vals = (char **)vals.data;
    o->n = (int)vals.n;
    return 0;
}

/* Parses a file as a FROM factor into r: 'path' (a string literal), or
 * read_csv('path' {, name = value}) / read_csv_auto(...) with the current
 * token the function's name and the next "(". r->name becomes the
 * reference's default alias: the file's name without folder and extension
 * (as DuckDB), or the function's name. Returns 0 or -1. */
static int parse_file_ref(Parser *p, AstTableRef *r) {
    AstFileRef *f = sql_arena_alloc(p->arena, sizeof *f);
    if (!f) return fail_oom(p);
    r->file = f;
    if (p->tok.kind == TK_STRING) {
        f->path_pos = p->tok.pos;
        if (parse_opt_string(p, &f->path) < 0) return -1;
        const char *base = strrchr(f->path, '/');
        base = base ? base + 1 : f->path;
        const char *dot = strchr(base, '.');
        size_t n = dot && dot > base ? (size_t)(dot - base) : strlen(base);
        if (!(r->name = sql_arena_strndup(p->arena, base, n ? n : strlen(base))))
            return fail_oom(p);
        if (!*r->name && !(r->name = sql_arena_strndup(p->arena, "file", 4))) return fail_oom(p);
        return 0;
    }
    if (!(f->func = tok_text(p, p->tok))) return -1;
    r->name = f->func;
    advance(p);
    if (expect_op(p, "(") < 0) return -1;
    f->path_pos = p->tok.pos;
    if (p->tok.kind == TK_OP && is_op(p, "["))
        return fail_unsupported(p, p->tok.pos, "a list of files");
    if (parse_opt_string(p, &f->path) < 0) return -1;
    Vec opts = vec_make(sizeof(AstOpt));
    while (accept_op(p, ",")) {
        AstOpt o;
        memset(&o, 0, sizeof o);
        o.pos = p->tok.pos;
        if (opts.n >= FILE_OPT_MAX)
            return fail_at(p, p->tok.pos, "too many options in a call of %s", f->func);
        if (!(o.name = expect_name(p))) return -1;
        if (!accept_op(p, "=") && expect_op(p, ":=") < 0) return -1;
        if (parse_opt_value(p, &o) < 0 || vec_push(p, &opts, &o) < 0) return -1;
    }
    if (expect_op(p, ")") < 0) return -1;
    f->opts = (AstOpt *)opts.data;
    f->nopts = (int)opts.n;
    return 0;
}

/* Parses one FROM factor: name [[AS] alias], a file ('f.csv' or
 * read_csv(...), parse_file_ref) [[AS] alias], "(" select ")" [[AS] alias
 * [(cols)]] (a derived table, its columns renamed by the list), or "("
 * join-list ")" whose tables are flattened into *from (all joins are inner,
 * so this keeps the meaning). Returns 0 or -1. */
static int parse_table_factor(Parser *p, Vec *from) {
    if (is_op(p, "(")) {
        SqlToken n = peek(p);
        if (tok_is_kw(p, n, "select") || tok_is_kw(p, n, "with")) {
            AstTableRef r;
            memset(&r, 0, sizeof r);
            r.pos = n.pos;
            if (enter(p) < 0) return -1;
            advance(p);
            if (!(r.subquery = parse_select(p)) || expect_op(p, ")") < 0) return -1;
            p->depth--;
            if (tok_is_name(p, p->tok) && tok_is_op(p, peek(p), "(")) {
                if (!(r.alias = expect_name(p))) return -1; /* bare alias (cols) */
            } else if (parse_alias(p, &r.alias) < 0) {
                return -1;
            }
            if (r.alias && is_op(p, "(") && parse_name_list(p, &r.colnames, &r.ncolnames) < 0)
                return -1;
            return vec_push(p, from, &r);
        }
        if (enter(p) < 0) return -1;
        advance(p);
        if (parse_from_list(p, from) < 0) return -1;
        p->depth--;
        return expect_op(p, ")");
    }
    AstTableRef r;
    memset(&r, 0, sizeof r);
    r.pos = p->tok.pos;
    if (p->tok.kind == TK_STRING ||
        ((is_kw(p, "read_csv") || is_kw(p, "read_csv_auto")) && tok_is_op(p, peek(p), "("))) {
        if (parse_file_ref(p, &r) < 0 || parse_alias(p, &r.alias) < 0) return -1;
        return vec_push(p, from, &r);
    }
    if (!(r.name = expect_name(p))) return -1;
    if (is_op(p, ".")) return fail_unsupported(p, p->tok.pos, "a schema-qualified table name");
    if (parse_alias(p, &r.alias) < 0) return -1;
    return vec_push(p, from, &r);
}

/* Parses a FROM list: factor {(',' | CROSS JOIN | [INNER] JOIN |
 * [NATURAL] {LEFT | RIGHT | FULL} [OUTER] JOIN) factor [ON expr | USING
 * (names)]} (NATURAL and USING name their table's natural / using_cols;
 * an outer join
 * needs a single table on its right; its kind is recorded in join_kind of
 * that table; without ON it keeps every row of its preserved side). The ON
 * condition goes to join_on of the last table of the joined factor (ANDed
 * with one already there). Returns 0 or -1. */
static int parse_from_list(Parser *p, Vec *from) {
    if (parse_table_factor(p, from) < 0) return -1;
    for (;;) {
        int join = 0, kind = AST_JOIN_INNER;
        int64_t npos = p->tok.pos;
        int natural = is_kw(p, "natural") ? (advance(p), 1) : 0;
        if (natural && !is_kw(p, "join") && !is_kw(p, "inner") && !is_kw(p, "left") &&
            !is_kw(p, "right") && !is_kw(p, "full"))
            return fail_syntax(p);
        if (accept_op(p, ",")) {
        } else if (is_kw(p, "cross") && tok_is_kw(p, peek(p), "join")) {
            advance(p);
            advance(p);
        } else if (is_kw(p, "inner") || is_kw(p, "join")) {
            accept_kw(p, "inner");
            if (expect_kw(p, "join") < 0) return -1;
            join = 1;
        } else if (is_kw(p, "left") || is_kw(p, "right") || is_kw(p, "full")) {
            kind = is_kw(p, "left")    ? AST_JOIN_LEFT
                   : is_kw(p, "right") ? AST_JOIN_RIGHT
                                       : AST_JOIN_FULL;
            advance(p);
            accept_kw(p, "outer");
            if (expect_kw(p, "join") < 0) return -1;
            join = 1;
        } else {
            return 0;
        }
        int64_t fpos = p->tok.pos, nbefore = from->n;
        if (parse_table_factor(p, from) < 0) return -1;
        /* a parenthesized join on the right holding an outer join cannot be
         * flattened into written order (the outer ON could read its NULL-
         * padded side): refused rather than answered wrongly */
        for (int64_t k = nbefore + 1; k < from->n; k++)
            if (((AstTableRef *)from->data)[k].join_kind != AST_JOIN_INNER)
                return fail_unsupported(p, fpos, "an outer join inside a parenthesized join");
        if (kind != AST_JOIN_INNER) {
            AstTableRef *last = (AstTableRef *)from->data + (from->n - 1);
            if (from->n != nbefore + 1 || last->join_kind != AST_JOIN_INNER || last->join_on)
                return fail_unsupported(p, fpos, "an outer join of a parenthesized join");
            last->join_kind = kind;
        }
        if (natural || (join && is_kw(p, "using"))) {
            AstTableRef *last = (AstTableRef *)from->data + (from->n - 1);
            if (from->n != nbefore + 1)
                return fail_unsupported(p, natural ? npos : p->tok.pos,
                                        "NATURAL JOIN or USING of a parenthesized join");
            last->natural = natural;
            if (!natural) {
                advance(p);
                if (expect_op(p, "(") < 0) return -1;
                Vec names = vec_make(sizeof(char *));
                do {
                    char *n = expect_name(p);
                    if (!n || vec_push(p, &names, &n) < 0) return -1;
                } while (accept_op(p, ","));
                if (expect_op(p, ")") < 0) return -1;
                last->using_cols = (char **)names.data;
                last->nusing = (int)names.n;
            }
            continue;
        }
        if (join && accept_kw(p, "on")) {
            AstExpr *on = parse_expr(p);
            if (!on) return -1;
            AstTableRef *last = (AstTableRef *)from->data + (from->n - 1);
            if (last->join_on && !(on = new_binary(p, OP_AND, last->join_on, on))) return -1;
            last->join_on = on;
        }
    }
}

/* Parses "e [ASC|DESC] [NULLS FIRST|LAST] {, ...}" into *v (of
 * AstOrderItem). Returns 0 or -1. */
static int parse_order_list(Parser *p, Vec *v) {
    do {
        AstOrderItem it = {NULL, 0, 0};
        if (!(it.expr = parse_expr(p))) return -1;
        if (accept_kw(p, "desc"))
            it.desc = 1;
        else
            accept_kw(p, "asc");
        if (accept_kw(p, "nulls")) {
            int last = !accept_kw(p, "first");
            if (last && expect_kw(p, "last") < 0) return -1;
            it.nulls_flip = last != it.desc;
        }
        if (vec_push(p, v, &it) < 0) return -1;
    } while (accept_op(p, ","));
    return 0;
}

/* Parses one SELECT core (SELECT ... [HAVING ...], no ORDER BY / LIMIT)
 * with SELECT current. Returns the arena-owned AstSelect or NULL after an
 * error. */
static AstSelect *parse_select_core(Parser *p) {
    AstSelect *s = sql_arena_alloc(p->arena, sizeof *s);
    if (!s) {
        fail_oom(p);
        return NULL;
    }
    if (expect_kw(p, "select") < 0) return NULL;
    if (accept_kw(p, "distinct"))
        s->distinct = 1;
    else
        accept_kw(p, "all");

    Vec items = vec_make(sizeof(AstSelectItem));
    do {
        AstSelectItem it;
        if (parse_select_item(p, &it) < 0 || vec_push(p, &items, &it) < 0) return NULL;
    } while (accept_op(p, ","));
    s->items = (AstSelectItem *)items.data;
    s->nitems = (int)items.n;

    if (accept_kw(p, "from")) {
        Vec from = vec_make(sizeof(AstTableRef));
        if (parse_from_list(p, &from) < 0) return NULL;
        s->from = (AstTableRef *)from.data;
        s->nfrom = (int)from.n;
    }
    if (accept_kw(p, "where") && !(s->where = parse_expr(p))) return NULL;
    if (accept_kw(p, "group")) {
        Vec g = vec_make(sizeof(AstExpr *));
        if (expect_kw(p, "by") < 0 || parse_expr_list(p, &g) < 0) return NULL;
        s->group_by = (AstExpr **)g.data;
        s->ngroup = (int)g.n;
    }
    if (accept_kw(p, "having") && !(s->having = parse_expr(p))) return NULL;
    return s;
}

/* 1 if the current token starts a compound operator. */
static int at_setop(const Parser *p) {
    return is_kw(p, "union") || is_kw(p, "except") || is_kw(p, "intersect");
}

/* Consumes a compound operator (UNION [ALL] | INTERSECT | EXCEPT) into *op.
 * Returns its name as SQLite's messages spell it. */
static const char *accept_setop(Parser *p, AstSetOp *op) {
    if (accept_kw(p, "union")) {
        if (accept_kw(p, "all")) {
            *op = SETOP_UNION_ALL;
            return "UNION ALL";
        }
        *op = SETOP_UNION;
        return "UNION";
    }
    if (accept_kw(p, "intersect")) {
        *op = SETOP_INTERSECT;
        return "INTERSECT";
    }
    advance(p); /* except */
    *op = SETOP_EXCEPT;
    return "EXCEPT";
}

/* Parses a SELECT statement with SELECT current: a core, or a compound of
 * cores, then ORDER BY / LIMIT (of the whole compound). Returns the
 * arena-owned AstSelect or NULL after an error. */
static int parse_name_list(Parser *p, char ***names, int *n);

/* Parses WITH name [(cols)] AS (select), ... into *ctes. Returns 0 or -1. */
static int parse_with(Parser *p, AstCte **ctes, int *n) {
    advance(p);
    if (is_kw(p, "recursive")) return fail_unsupported(p, p->tok.pos, "WITH RECURSIVE");
    Vec v = vec_make(sizeof(AstCte));
    do {
        AstCte c;
        memset(&c, 0, sizeof c);
        c.pos = p->tok.pos;
        if (!(c.name = expect_name(p))) return -1;
        if (is_op(p, "(") && parse_name_list(p, &c.colnames, &c.ncolnames) < 0) return -1;
        if (expect_kw(p, "as") < 0 || expect_op(p, "(") < 0) return -1;
        if (!is_kw(p, "select") && !is_kw(p, "with")) return fail_syntax(p);
        if (enter(p) < 0) return -1;
        if (!(c.select = parse_select(p)) || expect_op(p, ")") < 0) return -1;
        p->depth--;
        if (vec_push(p, &v, &c) < 0) return -1;
    } while (accept_op(p, ","));
    *ctes = (AstCte *)v.data;
    *n = (int)v.n;
    return 0;
}

/* Parses "(" name, ... ")" into *names / *n. Returns 0 or -1. */
static int parse_name_list(Parser *p, char ***names, int *n) {
    if (expect_op(p, "(") < 0) return -1;
    Vec v = vec_make(sizeof(char *));
    do {
        char *nm = expect_name(p);
        if (!nm || vec_push(p, &v, &nm) < 0) return -1;
    } while (accept_op(p, ","));
    if (expect_op(p, ")") < 0) return -1;
    *names = (char **)v.data;
    *n = (int)v.n;
    return 0;
}

static AstSelect *parse_select(Parser *p) {
    AstCte *with = NULL;
    int nwith = 0;
    if (is_kw(p, "with")) {
        if (parse_with(p, &with, &nwith) < 0) return NULL;
        if (!is_kw(p, "select")) {
            fail_syntax(p);
            return NULL;
        }
    }
    AstSelect *s = parse_select_core(p);
    if (!s) return NULL;
    s->with = with;
    s->nwith = nwith;
    if (at_setop(p)) {
        Vec arms = vec_make(sizeof(AstCompoundArm));
        while (at_setop(p)) {
            AstCompoundArm arm;
            arm.pos = p->tok.pos;
            accept_setop(p, &arm.op);
            if (is_kw(p, "values")) {
                fail_unsupported(p, p->tok.pos, "VALUES in a compound SELECT");
                return NULL;
            }
            if (!is_kw(p, "select")) {
                fail_syntax(p);
                return NULL;
            }
            if (!(arm.select = parse_select_core(p)) || vec_push(p, &arms, &arm) < 0) return NULL;
        }
        s->compound = (AstCompoundArm *)arms.data;
        s->ncompound = (int)arms.n;
    }
    if (accept_kw(p, "order")) {
        Vec o = vec_make(sizeof(AstOrderItem));
        if (expect_kw(p, "by") < 0 || parse_order_list(p, &o) < 0) return NULL;
        s->order_by = (AstOrderItem *)o.data;
        s->norder = (int)o.n;
    }
    if (accept_kw(p, "limit")) {
        if (!(s->limit = parse_expr(p))) return NULL;
        if (accept_kw(p, "offset")) {
            if (!(s->offset = parse_expr(p))) return NULL;
        } else if (accept_op(p, ",")) { /* LIMIT m, n: skip m, take n */
            s->offset = s->limit;
            if (!(s->limit = parse_expr(p))) return NULL;
        }
    }
    if (at_setop(p)) { /* SQLite: ORDER BY / LIMIT only after the last SELECT */
        int64_t pos = p->tok.pos;
        AstSetOp op;
        const char *name = accept_setop(p, &op);
        fail_at(p, pos, "%s clause should come after %s not before",
                s->norder ? "ORDER BY" : "LIMIT", name);
        return NULL;
    }
    return s;
}

/* ---- other statements ---- */

/* Returns 1 when t starts a column constraint (ends a type name). */
static int is_constraint_word(const Parser *p, SqlToken t) {
    static const char *const w[] = {"primary", "not",        "null",    "unique",    "default",
                                    "check",   "references", "collate", "constraint"};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        if (tok_is_kw(p, t, w[i])) return 1;
    return 0;
}

/* Skips a table constraint (PRIMARY KEY (...), UNIQUE (...), ...) up to the
 * ',' or ')' that ends it at nesting depth 0. Returns 0 or -1 (end of
 * input). */
static int skip_table_constraint(Parser *p) {
    int depth = 0;
    for (;;) {
        if (p->tok.kind == TK_EOF || p->tok.kind == TK_ERROR) return fail_syntax(p);
        if (depth == 0 && (is_op(p, ",") || is_op(p, ")"))) return 0;
        if (is_op(p, "(")) depth++;
        if (is_op(p, ")")) depth--;
        advance(p);
    }
}

/* Parses the constraints after a column's type: PRIMARY KEY [ASC|DESC],
 * NOT NULL, NULL, UNIQUE, DEFAULT literal; all are ignored. Returns 0 or
 * -1. */
static int skip_column_constraints(Parser *p) {
    for (;;) {
        if (accept_kw(p, "primary")) {
            if (expect_kw(p, "key") < 0) return -1;
            if (!accept_kw(p, "asc")) accept_kw(p, "desc");
        } else if (accept_kw(p, "not")) {
            if (expect_kw(p, "null") < 0) return -1;
        } else if (accept_kw(p, "null") || accept_kw(p, "unique")) {
        } else if (accept_kw(p, "default")) {
            if (!parse_unary(p)) return -1;
        } else {
            return 0;
        }
    }
}

/* Parses CREATE TABLE [IF NOT EXISTS] name (coldef, ...) into st with
 * CREATE current. Returns 0 or -1. */
static int parse_create_index(Parser *p, AstStmt *st);

static int parse_create(Parser *p, AstStmt *st) {
    st->kind = STMT_CREATE_TABLE;
    advance(p);
    if (is_kw(p, "unique") || is_kw(p, "index")) return parse_create_index(p, st);
    int view = accept_kw(p, "view");
    if (view) st->kind = STMT_CREATE_VIEW;
    if (!view && expect_kw(p, "table") < 0) return -1;
    if (is_kw(p, "if") && tok_is_kw(p, peek(p), "not")) {
        advance(p);
        advance(p);
        if (expect_kw(p, "exists") < 0) return -1;
        st->if_not_exists = 1;
    }
    st->table_pos = p->tok.pos;
    if (!(st->table = expect_name(p))) return -1;
    if (view) {
        if (is_op(p, "(") && parse_name_list(p, &st->insert_cols, &st->ninsert_cols) < 0) return -1;
        if (expect_kw(p, "as") < 0) return -1;
        if (!is_kw(p, "select") && !is_kw(p, "with")) return fail_syntax(p);
        st->view_pos = p->tok.pos;
        return (st->select = parse_select(p)) ? 0 : -1;
    }
    if (accept_kw(p, "as")) {
        if (!is_kw(p, "select") && !is_kw(p, "with")) return fail_syntax(p);
        return (st->select = parse_select(p)) ? 0 : -1;
    }
    if (expect_op(p, "(") < 0) return -1;
    Vec cols = vec_make(sizeof(AstColumnDef));
    do {
        if (is_kw(p, "primary") || is_kw(p, "unique") || is_kw(p, "constraint") ||
            is_kw(p, "check") || is_kw(p, "foreign")) {
            if (skip_table_constraint(p) < 0) return -1;
            continue;
        }
        AstColumnDef c;
        memset(&c, 0, sizeof c);
        c.pos = p->tok.pos;
        if (!(c.name = expect_name(p))) return -1;
        if (!(c.type_name = parse_type_name(p, 1, is_constraint_word))) return -1;
        if (skip_column_constraints(p) < 0 || vec_push(p, &cols, &c) < 0) return -1;
    } while (accept_op(p, ","));
    if (expect_op(p, ")") < 0) return -1;
    if (cols.n == 0) return fail_at(p, st->pos, "a table needs at least one column");
    st->cols = (AstColumnDef *)cols.data;
    st->ncols = (int)cols.n;
    return 0;
}

/* Parses [UNIQUE] INDEX [IF NOT EXISTS] name ON table (col [ASC|DESC],
 * ...) into st with the token after CREATE current. Returns 0 or -1. */
static int parse_create_index(Parser *p, AstStmt *st) {
    st->kind = STMT_CREATE_INDEX;
    st->unique = accept_kw(p, "unique");
    if (expect_kw(p, "index") < 0) return -1;
    if (is_kw(p, "if") && tok_is_kw(p, peek(p), "not")) {
        advance(p);
        advance(p);
        if (expect_kw(p, "exists") < 0) return -1;
        st->if_not_exists = 1;
    }
    st->index_pos = p->tok.pos;
    if (!(st->index_name = expect_name(p)) || expect_kw(p, "on") < 0) return -1;
    st->table_pos = p->tok.pos;
    if (!(st->table = expect_name(p)) || expect_op(p, "(") < 0) return -1;
    Vec names = vec_make(sizeof(char *));
    do {
        char *n = expect_name(p);
        if (!n || vec_push(p, &names, &n) < 0) return -1;
        if (!accept_kw(p, "asc")) accept_kw(p, "desc");
    } while (accept_op(p, ","));
    if (expect_op(p, ")") < 0) return -1;
    st->insert_cols = (char **)names.data;
    st->ninsert_cols = (int)names.n;
    return 0;
}

/* Parses UPDATE name SET col = expr, ... [WHERE expr] into st with UPDATE
 * current. Returns 0 or -1. */
static int parse_update(Parser *p, AstStmt *st) {
    st->kind = STMT_UPDATE;
    advance(p);
    st->table_pos = p->tok.pos;
    if (!(st->table = expect_name(p)) || expect_kw(p, "set") < 0) return -1;
    Vec cols = vec_make(sizeof(char *)), exprs = vec_make(sizeof(AstExpr *)),
        poss = vec_make(sizeof(int64_t));
    do {
        int64_t pos = p->tok.pos;
        char *n = expect_name(p);
        if (!n || expect_op(p, "=") < 0) return -1;
        AstExpr *e = parse_expr(p);
        if (!e || vec_push(p, &cols, &n) < 0 || vec_push(p, &exprs, &e) < 0 ||
            vec_push(p, &poss, &pos) < 0)
            return -1;
    } while (accept_op(p, ","));
    st->set_cols = (char **)cols.data;
    st->set_exprs = (AstExpr **)exprs.data;
    st->set_pos = (int64_t *)poss.data;
    st->nset = (int)cols.n;
    if (accept_kw(p, "where") && !(st->where = parse_expr(p))) return -1;
    return 0;
}

/* Parses DELETE FROM name [WHERE expr] into st with DELETE current.
 * Returns 0 or -1. */
static int parse_delete(Parser *p, AstStmt *st) {
    st->kind = STMT_DELETE;
    advance(p);
    if (expect_kw(p, "from") < 0) return -1;
    st->table_pos = p->tok.pos;
    if (!(st->table = expect_name(p))) return -1;
    if (accept_kw(p, "where") && !(st->where = parse_expr(p))) return -1;
    return 0;
}

/* Parses INSERT INTO name [(cols)] (VALUES (row), ... | SELECT ...) into st
 * with INSERT current. Every row must have the same width. Returns 0 or -1. */
static int parse_insert(Parser *p, AstStmt *st) {
    st->kind = STMT_INSERT;
    advance(p);
    if (expect_kw(p, "into") < 0) return -1;
    st->table_pos = p->tok.pos;
    if (!(st->table = expect_name(p))) return -1;
    if (accept_op(p, "(")) {
        Vec names = vec_make(sizeof(char *));
        do {
            char *n = expect_name(p);
            if (!n || vec_push(p, &names, &n) < 0) return -1;
        } while (accept_op(p, ","));
        if (expect_op(p, ")") < 0) return -1;
        st->insert_cols = (char **)names.data;
        st->ninsert_cols = (int)names.n;
    }
    if (is_kw(p, "select") || is_kw(p, "with")) return (st->select = parse_select(p)) ? 0 : -1;
    if (expect_kw(p, "values") < 0) return -1;
    Vec rows = vec_make(sizeof(AstExpr **));
    do {
        int64_t row_pos = p->tok.pos;
        if (expect_op(p, "(") < 0) return -1;
        Vec vals = vec_make(sizeof(AstExpr *));
        if (parse_expr_list(p, &vals) < 0 || expect_op(p, ")") < 0) return -1;
        if (rows.n == 0) st->row_width = (int)vals.n;
        if (vals.n != st->row_width)
            return fail_at(p, row_pos, "VALUES lists must all be the same length");
        AstExpr **row = (AstExpr **)vals.data;
        if (vec_push(p, &rows, &row) < 0) return -1;
    } while (accept_op(p, ","));
    st->rows = (AstExpr ***)rows.data;
    st->nrows = rows.n;
    return 0;
}

/* Parses DROP TABLE|INDEX [IF EXISTS] name into st with DROP current. Returns 0
 * or -1. */
static int parse_drop(Parser *p, AstStmt *st) {
    st->kind = STMT_DROP_TABLE;
    advance(p);
    int index = accept_kw(p, "index");
    if (index)
        st->kind = STMT_DROP_INDEX;
    else if (accept_kw(p, "view"))
        st->kind = STMT_DROP_VIEW;
    else if (expect_kw(p, "table") < 0)
        return -1;
    if (is_kw(p, "if") && tok_is_kw(p, peek(p), "exists")) {
        advance(p);
        advance(p);
        st->if_not_exists = 1;
    }
    if (index) {
        st->index_pos = p->tok.pos;
        return (st->index_name = expect_name(p)) ? 0 : -1;
    }
    st->table_pos = p->tok.pos;
    return (st->table = expect_name(p)) ? 0 : -1;
}

/* Parses SET name (= | TO) expr into st with SET current. Returns 0 or -1. */
static int parse_set(Parser *p, AstStmt *st) {
    st->kind = STMT_SET;
    advance(p);
    if (!(st->set_name = expect_name(p))) return -1;
    if (!accept_op(p, "=") && expect_kw(p, "to") < 0) return -1;
    return (st->set_value = parse_expr(p)) ? 0 : -1;
}

/* Parses SHOW TABLES into st with SHOW current. Returns 0 or -1. */
static int parse_show(Parser *p, AstStmt *st) {
    st->kind = STMT_SHOW_TABLES;
    advance(p);
    if (is_kw(p, "all")) return fail_unsupported(p, p->tok.pos, "SHOW ALL TABLES");
    return expect_kw(p, "tables");
}

/* Parses DESCRIBE|DESC name or DESCRIBE SELECT ... into st with DESCRIBE
 * current. Returns 0 or -1. */
static int parse_describe(Parser *p, AstStmt *st) {
    st->kind = STMT_DESCRIBE;
    advance(p);
    st->view_pos = p->tok.pos;
    if (is_kw(p, "select") || is_kw(p, "with")) return (st->select = parse_select(p)) ? 0 : -1;
    accept_kw(p, "table");
    st->table_pos = p->tok.pos;
    return (st->table = expect_name(p)) ? 0 : -1;
}

/* Parses PRAGMA name [(arg) | = arg] into st with PRAGMA current; arg is a
 * name or a string. Returns 0 or -1. */
static int parse_pragma(Parser *p, AstStmt *st) {
    st->kind = STMT_PRAGMA;
    advance(p);
    if (!(st->set_name = expect_name(p))) return -1;
    int paren = accept_op(p, "(");
    if (!paren && !accept_op(p, "=")) return 0;
    st->table_pos = p->tok.pos;
    if (p->tok.kind == TK_STRING) {
        if (!(st->table = tok_text(p, p->tok))) return -1;
        advance(p);
    } else if (!(st->table = expect_name(p))) {
        return -1;
    }
    return paren ? expect_op(p, ")") : 0;
}

static int parse_body(Parser *p, AstStmt *st);

/* Parses EXPLAIN [ANALYZE] statement into st with EXPLAIN current: the
 * statement into st->inner (one level: EXPLAIN EXPLAIN is refused, so the
 * recursion is bounded). Returns 0 or -1. */
static int parse_explain(Parser *p, AstStmt *st) {
    st->kind = STMT_EXPLAIN;
    advance(p);
    st->analyze = accept_kw(p, "analyze") || accept_kw(p, "analyse");
    if (is_kw(p, "explain")) return fail_unsupported(p, p->tok.pos, "EXPLAIN of EXPLAIN");
    AstStmt *in = sql_arena_alloc(p->arena, sizeof *in);
    if (!in) return fail_oom(p);
    in->pos = p->tok.pos;
    st->inner = in;
    if (parse_body(p, in) < 0) return -1;
    in->end = p->prev_end;
    return 0;
}

/* Parses the statement that starts at the current token into st (its kind
 * and fields; not its pos, end or parameters). Returns 0 or -1. */
static int parse_body(Parser *p, AstStmt *st) {
    if (is_kw(p, "select") || is_kw(p, "with")) {
        st->kind = STMT_SELECT;
        return (st->select = parse_select(p)) ? 0 : -1;
    }
    if (is_kw(p, "create")) return parse_create(p, st);
    if (is_kw(p, "insert")) return parse_insert(p, st);
    if (is_kw(p, "drop")) return parse_drop(p, st);
    if (is_kw(p, "set")) return parse_set(p, st);
    if (is_kw(p, "update")) return parse_update(p, st);
    if (is_kw(p, "delete")) return parse_delete(p, st);
    if (is_kw(p, "explain")) return parse_explain(p, st);
    if (is_kw(p, "show")) return parse_show(p, st);
    if (is_kw(p, "describe") || is_kw(p, "desc")) return parse_describe(p, st);
    if (is_kw(p, "pragma")) return parse_pragma(p, st);
    return fail_syntax(p);
}

/* Parses one statement of sql[start..len); see sqlfront.h for the full
 * contract. Returns 0 (*out NULL when only blanks, comments and ";" remain)
 * or -1 with err filled; the AST is owned by arena. */
int sql_parse_one(const char *sql, int64_t len, int64_t start, SqlArena *arena, AstStmt **out,
                  int64_t *next, SqlError *err) {
    Parser ps;
    memset(&ps, 0, sizeof ps);
    Parser *p = &ps;
    SqlError scratch;
    if (!err) err = &scratch; /* callers that ignore the message may pass NULL */
    p->sql = sql;
    p->len = len;
    p->arena = arena;
    p->err = err;
    Vec prefs = vec_make(sizeof(AstParamRef)), pnamed = vec_make(sizeof(ParamName));
    p->prefs = &prefs;
    p->pnamed = &pnamed;
    err->msg[0] = '\0';
    err->offset = -1;
    *out = NULL;
    *next = len;
    if (!sql || len < 0 || !arena) {
        fail_at(p, -1, "invalid arguments to the parser");
        return -1;
    }
    if (start > len) start = len;
    p->tok = sql_next_token(sql, len, start);
    while (accept_op(p, ";")) {
    }
    if (p->tok.kind == TK_EOF) return 0;

    AstStmt *st = sql_arena_alloc(arena, sizeof *st);
    if (!st) {
        fail_oom(p);
        return -1;
    }
    st->pos = p->tok.pos;
    int rc = parse_body(p, st);
    if (rc == 0 && !is_op(p, ";") && p->tok.kind != TK_EOF) rc = fail_syntax(p);
    if (rc < 0) {
        if (!p->failed) fail_syntax(p);
        return -1;
    }
    st->end = p->prev_end;
    if (p->nparams > 0) {
        st->nparams = p->nparams;
        st->params = (AstParamRef *)prefs.data;
        st->nparam_refs = (int)prefs.n;
        st->param_names = sql_arena_alloc(arena, sizeof(char *) * (size_t)p->nparams);
        if (!st->param_names) {
            fail_oom(p);
            return -1;
        }
        const ParamName *names = (const ParamName *)pnamed.data;
        for (int64_t k = 0; k < pnamed.n; k++)
            if (!st->param_names[names[k].index - 1])
                st->param_names[names[k].index - 1] = names[k].name;
    }
    *next = p->tok.kind == TK_EOF ? len : p->tok.pos + 1;
    *out = st;
    return 0;
}
