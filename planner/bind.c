/*
 * bind.c -- the binder: resolves names of a parsed SELECT against the
 * catalog, types every expression, collects aggregates, splits WHERE and ON
 * into conjuncts (pushing single-relation ones down to their scan) and
 * builds the logical plan (BSelect). Errors are "Binder Error" with the
 * byte offset of the offending text.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "planner/bexpr.h"

typedef struct BindCtx {
    const Catalog *cat;
    const char *sql;
    PlanArena *arena;
    PlanError *err;
    BSelect *b;
    const AstSelect *sel;
    int in_agg;    /* binding an aggregate's argument */
    int *item_pos; /* select item i (as written) -> its output column after * expansion */
} BindCtx;

/* Record a binder error at offset pos; always returns NULL for chaining. */
static void *bind_fail(BindCtx *bc, const char *stage, int64_t pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(bc->err->msg, sizeof bc->err->msg, fmt, ap);
    va_end(ap);
    snprintf(bc->err->stage, sizeof bc->err->stage, "%s", stage);
    bc->err->offset = pos;
    return NULL;
}

/* Out-of-memory error; returns NULL. */
static void *bind_oom(BindCtx *bc) {
    return bind_fail(bc, "Binder", -1, "out of memory");
}

static BExpr *bind_expr(BindCtx *bc, const AstExpr *e, int allow_agg);
static BExpr *column_text(BindCtx *bc, BExpr *x);
static AstExpr *ast_node(BindCtx *bc, AstKind k, int64_t pos);
static AstExpr *ast_bin(BindCtx *bc, AstKind k, AstOp op, const char *name, AstExpr *a, AstExpr *b,
                        int64_t pos);
static AstExpr *ast_text(BindCtx *bc, const char *s, int64_t pos);
static int has_agg_call(const BExpr *e);
/* DECIMAL (see "DECIMAL(p,s): scaled int64" below) */
static int dec_is(const BExpr *x);
static BExpr *dec_to(BindCtx *bc, BExpr *x, CatType t, int scale, int64_t pos);
static BExpr *dec_compare(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos);
static BExpr *dec_arith(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos);
static void dec_exact_fold(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, BExpr *r);

/* Resolve a column reference in the FROM scope. Returns the bound column or
 * NULL with an error (unknown table, unknown column, ambiguous name). */
static BExpr *bind_column(BindCtx *bc, const AstExpr *e) {
    BSelect *b = bc->b;
    int found_rel = -1, found_col = -1;
    int table_seen = 0;
    for (int r = 0; r < b->nrels; r++) {
        if (e->table && strcasecmp(e->table, b->rels[r].alias) != 0) continue;
        table_seen = 1;
        int c = cat_find_column(b->rels[r].table, e->str);
        if (c < 0 || (!e->table && b->rels[r].hidden && b->rels[r].hidden[c])) continue;
        if (found_rel >= 0)
            return bind_fail(bc, "Binder", e->pos, "column reference \"%s\" is ambiguous", e->str);
        found_rel = r;
        found_col = c;
    }
    if (e->table && !table_seen)
        return bind_fail(bc, "Binder", e->pos, "referenced table \"%s\" not found", e->table);
    if (found_rel < 0) {
        if (e->table)
            return bind_fail(bc, "Binder", e->pos, "column \"%s\" not found in table \"%s\"",
                             e->str, e->table);
        return bind_fail(bc, "Binder", e->pos, "column \"%s\" not found", e->str);
    }
    /* a column a RIGHT / FULL JOIN's USING merged: the COALESCE of both */
    if (!e->table && b->rels[found_rel].merged && b->rels[found_rel].merged[found_col])
        return bind_expr(bc, b->rels[found_rel].merged[found_col], 0);
    /* a binary column is read on its first use (its dictionary and stats
     * are needed from here on) */
    CatError cerr;
    if (cat_column_use(b->rels[found_rel].table, found_col, &cerr) != 0)
        return bind_fail(bc, "Catalog", e->pos, "%s", cerr.msg);
    const CatColumn *col = &b->rels[found_rel].table->cols[found_col];
    BExpr *x = bx_new(bc->arena, BE_COL, col->type, e->pos);
    if (!x) return bind_oom(bc);
    x->slot = found_rel;
    x->col = found_col;
    x->dict = col->dict;
    x->prec = col->prec;
    x->scale = col->scale;
    return x;
}

/* Wrap a numeric expression used as a condition so it is BOOL-typed. */
static BExpr *as_condition(BindCtx *bc, BExpr *x) {
    if (!x) return NULL;
    if (x->type == CAT_BOOL) return x;
    if (x->type == CAT_STRING)
        return bind_fail(bc, "Binder", x->pos, "a STRING value cannot be used as a condition");
    BExpr *t = bx_new(bc->arena, BE_TRUTH, CAT_BOOL, x->pos);
    if (!t) return bind_oom(bc);
    t->a = x;
    return t;
}

/* Cast numeric x to type t when its register class differs. */
static BExpr *cast_to(BindCtx *bc, BExpr *x, CatType t) {
    if (!x) return NULL;
    if (dec_is(x) && t != CAT_DECIMAL) return dec_to(bc, x, t, 0, x->pos);
    if (x->type == t || (bx_is_float(x->type) == bx_is_float(t) && x->type != CAT_NULL)) return x;
    if (x->kind == BE_CONST) {
        BExpr *c = bx_new(bc->arena, BE_CONST, t, x->pos);
        if (!c) return bind_oom(bc);
        c->is_null = x->is_null;
        if (bx_is_float(t))
            c->fval = bx_is_float(x->type) ? x->fval : (double)x->ival;
        else
            c->ival = bx_to_type(t, bx_is_float(x->type) ? bx_f2i(x->fval) : x->ival);
        return c;
    }
    BExpr *c = bx_new(bc->arena, BE_CAST, t, x->pos);
    if (!c) return bind_oom(bc);
    c->a = x;
    return c;
}

/* 1 if x is text that exists only when the query runs: CAST of a
 * non-constant number to TEXT, with no dictionary at bind time. */
static int runtime_text(const BExpr *x) {
    return x && x->kind == BE_TOTEXT && x->tuse == TU_TEXT;
}

/* The node of runtime text x made to deliver `use` of that text, typed t
 * (see TextUse); NULL when out of memory. */
static BExpr *text_use(BindCtx *bc, const BExpr *x, TextUse use, CatType t, int64_t pos) {
    BExpr *u = bx_new(bc->arena, BE_TOTEXT, t, pos);
    if (!u) return bind_oom(bc);
    u->a = x->a;
    u->tnull = x->tnull;
    u->tpair[0] = x->tpair[0];
    u->tpair[1] = x->tpair[1];
    u->tuse = use;
    return u;
}

/* Not-implemented error for runtime text x where `what` needs its
 * dictionary at bind time; returns NULL. */
static void *runtime_text_fail_as(BindCtx *bc, const BExpr *x, const char *what,
                                  const char *stage) {
    return bind_fail(bc, stage, x->pos,
                     "%s text made when the query runs (CAST(x AS TEXT) of a non-constant number, "
                     "group_concat) (supported: output, IS NULL, "
                     "COUNT, LIKE, comparison with a string, CAST to a number, COALESCE with a "
                     "constant string)",
                     what);
}

static void *runtime_text_fail(BindCtx *bc, const BExpr *x, const char *what) {
    return runtime_text_fail_as(bc, x, what, "Not implemented");
}

/* Text of the non-NULL numeric constant x as SQLite's CAST(x AS TEXT)
 * writes it (decimal integers, reals as %!.15g, dates yyyy-mm-dd), as a
 * STRING constant. */
static BExpr *const_to_text(BindCtx *bc, const BExpr *x, int64_t pos) {
    char buf[64];
    if (bx_is_float(x->type))
        cat_format_real(x->fval, 15, buf, sizeof buf);
    else if (x->type == CAT_DATE)
        cat_format_date((int32_t)x->ival, buf);
    else if (x->type == CAT_DECIMAL)
        cat_format_decimal(x->ival, bx_scale(x), buf, sizeof buf);
    else
        snprintf(buf, sizeof buf, "%lld", (long long)x->ival);
    BExpr *c = bx_new(bc->arena, BE_CONST, CAT_STRING, pos);
    if (!c || !(c->dict = bx_literal_dict(bc->arena, buf))) return bind_oom(bc);
    return c;
}

/* Text of the STRING constant x (which must not be NULL). */
static const char *const_text(const BExpr *x) {
    return cat_dict_str(x->dict, x->ival);
}

/* A NULL-typed expression x (the NULL literal, a CASE of NULLs, MIN(NULL)
 * ...) taking type t (and dictionary dict for STRING) from its context, as
 * SQLite's untyped NULL does. A constant becomes a NULL constant of type t;
 * anything else is wrapped in a BE_CAST of type t rather than retyped in
 * place (it may be an aggregate call or shared). NULL when out of memory. */
static BExpr *adopt_null(BindCtx *bc, BExpr *x, CatType t, const CatDict *dict) {
    BExpr *c =
        x->kind == BE_CONST ? bx_null(bc->arena, t, x->pos) : bx_new(bc->arena, BE_CAST, t, x->pos);
    if (!c) return bind_oom(bc);
    if (c->kind == BE_CAST) c->a = x;
    c->dict = t == CAT_STRING ? dict : NULL;
    return c;
}

/* Convert a string literal to a DATE constant where it meets a DATE. */
static BExpr *string_to_date(BindCtx *bc, BExpr *x) {
    if (x->kind != BE_CONST || x->type != CAT_STRING || x->is_null) return x;
    const char *s = cat_dict_str(x->dict, x->ival);
    int32_t days;
    if (cat_parse_date(s, strlen(s), &days) != 0)
        return bind_fail(bc, "Binder", x->pos, "invalid date '%s'", s);
    return bx_int(bc->arena, CAT_DATE, days, x->pos);
}

/* A STRING expression x as a DATE where it meets one, when every string it
 * can take is a date written as DATE prints it ('yyyy-mm-dd'), so that the
 * conversion loses nothing: a constant becomes a DATE constant, anything
 * else a LOOKUP from its codes to days. Otherwise x unchanged (the caller
 * reports the type clash). NULL when out of memory. */
static BExpr *string_as_date(BindCtx *bc, BExpr *x) {
    const CatDict *d = x->dict;
    if (x->type != CAT_STRING || !d || (x->kind == BE_CONST && x->is_null)) return x;
    int64_t lo = x->kind == BE_CONST ? x->ival : 0, hi = x->kind == BE_CONST ? x->ival + 1 : d->n;
    int64_t *tab = plan_alloc(bc->arena, sizeof(int64_t) * (size_t)(d->n ? d->n : 1));
    if (!tab) return bind_oom(bc);
    for (int64_t i = lo; i < hi; i++) {
        const char *s = cat_dict_str(d, i);
        int32_t days;
        char buf[16];
        if (cat_parse_date(s, strlen(s), &days) != 0) return x;
        cat_format_date(days, buf);
        if (strcmp(buf, s) != 0) return x;
        tab[i] = days;
    }
    if (x->kind == BE_CONST) return bx_int(bc->arena, CAT_DATE, tab[x->ival], x->pos);
    BExpr *l = bx_new(bc->arena, BE_LOOKUP, CAT_DATE, x->pos);
    if (!l) return bind_oom(bc);
    l->a = x;
    l->table = tab;
    l->table_n = d->n;
    return l;
}

/* 1 if x is the constant NULL (of any type). */
static int is_null_const(const BExpr *x) {
    return x->kind == BE_CONST && (x->is_null || x->type == CAT_NULL);
}

/* Operators distributed into mixed INT/REAL branches (see below). */
typedef enum DistKind {
    DIST_LEFT,
    DIST_RIGHT,
    DIST_NEG,
    DIST_ABS,
    DIST_CMP_LEFT, /* comparison with an integer: int branches compare exactly */
    DIST_CMP_RIGHT
} DistKind;
static int dist_ok(const BExpr *x, const BExpr *other);
static BExpr *distribute(BindCtx *bc, BExpr *m, DistKind kind, AstOp op, BExpr *other, int64_t pos);

/* Bind a comparison op(x, y): numeric promotion, string dictionary
 * unification, dates against date strings. */
/* 1 when every value of integer expression x converts to a double
 * exactly: a narrow type, a constant or a column (statistics) within
 * +-2^53. */
static int int_exact_in_double(const BindCtx *bc, const BExpr *x) {
    if (x->type != CAT_INT64) return 1;
    if (x->kind == BE_CONST)
        return x->is_null || (x->ival >= -9007199254740992LL && x->ival <= 9007199254740992LL);
    if (x->kind != BE_COL || !bc->b || x->slot < 0 || x->slot >= bc->b->nrels) return 0;
    const CatTable *t = bc->b->rels[x->slot].table;
    if (!t || x->col < 0 || x->col >= t->ncols) return 0;
    const CatStats *st = &t->cols[x->col].stats;
    if (st->rows != t->nrows) return 0; /* statistics not computed (or stale) */
    return cat_stats_exact(st);
}

/* x op y of an INT64 expression and a FLOAT64 one (either side) compared
 * exactly, as SQLite compares an integer with a real: as doubles where
 * the integer's double differs from the real (rounding to the nearest
 * double keeps that order), else as integers (the real is then a whole
 * number; 2^63 itself is above every int64):
 *   CASE WHEN dbl(i) = d THEN (CASE WHEN d >= 2^63 THEN <i < d> ELSE
 *   i op int(d) END) ELSE dbl(i) op d END
 * A NULL operand makes the first test NULL and the result NULL. */
static BExpr *compare_int_real(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos) {
    int int_left = !bx_is_float(x->type);
    BExpr *i = int_left ? x : y, *d = cast_to(bc, int_left ? y : x, CAT_FLOAT64);
    if (!i || !d) return NULL;
    BExpr *f = cast_to(bc, i, CAT_FLOAT64);
    BExpr *di = bx_new(bc->arena, BE_CAST, CAT_INT64, pos);
    BExpr *two63 = bx_float(bc->arena, 9223372036854775808.0, pos);
    if (!f || !di || !two63) return bind_oom(bc);
    di->a = d;
    /* i < d when d is 2^63: the operator's answer for "left less" */
    int left_less = int_left;
    int big =
        op == OP_NE || (left_less ? (op == OP_LT || op == OP_LE) : (op == OP_GT || op == OP_GE));
    BExpr *eqf = bx_bin(bc->arena, OP_EQ, CAT_BOOL, f, d, pos);
    BExpr *cmpf = bx_bin(bc->arena, op, CAT_BOOL, int_left ? f : d, int_left ? d : f, pos);
    BExpr *cmpi = bx_bin(bc->arena, op, CAT_BOOL, int_left ? i : di, int_left ? di : i, pos);
    BExpr *isbig = bx_bin(bc->arena, OP_GE, CAT_BOOL, d, two63, pos);
    BExpr *bigv = bx_int(bc->arena, CAT_BOOL, big, pos);
    BExpr *inner = bx_new(bc->arena, BE_CASE, CAT_BOOL, pos);
    BExpr *outer = bx_new(bc->arena, BE_CASE, CAT_BOOL, pos);
    if (!eqf || !cmpf || !cmpi || !isbig || !bigv || !inner || !outer) return bind_oom(bc);
    inner->a = isbig;
    inner->b = bigv;
    inner->c = cmpi;
    outer->a = eqf;
    outer->b = inner;
    outer->c = cmpf;
    return outer;
}

static BExpr *bind_compare(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos) {
    if (!x || !y) return NULL;
    if (x->type == CAT_DATE && y->type == CAT_STRING) y = string_to_date(bc, y);
    if (y && y->type == CAT_DATE && x->type == CAT_STRING) x = string_to_date(bc, x);
    if (!x || !y) return NULL;
    if (runtime_text(x) || runtime_text(y)) {
        /* text of numbers against a constant: compared on the text itself */
        static const AstOp flip[] = {[OP_EQ] = OP_EQ, [OP_NE] = OP_NE, [OP_LT] = OP_GT,
                                     [OP_LE] = OP_GE, [OP_GT] = OP_LT, [OP_GE] = OP_LE};
        BExpr *rt = runtime_text(x) ? x : y, *other = rt == x ? y : x;
        if (other->kind == BE_CONST && (other->is_null || other->type == CAT_NULL)) {
            BExpr *n = bx_null(bc->arena, CAT_BOOL, pos);
            return n ? n : bind_oom(bc);
        }
        if (other->type != CAT_STRING || runtime_text(other))
            return runtime_text_fail(bc, rt, "comparing a number or another text of numbers with");
        BExpr *u = text_use(bc, rt, TU_CMP, CAT_BOOL, pos);
        if (!u) return NULL;
        u->op = rt == x ? op : flip[op];
        if (other->kind == BE_CONST)
            u->ttext = const_text(other);
        else
            u->b = other; /* a string column or expression, read per row */
        return u;
    }
    if (x->type == CAT_DATE && y->type == CAT_STRING) y = string_as_date(bc, y);
    if (y && y->type == CAT_DATE && x->type == CAT_STRING) x = string_as_date(bc, x);
    if (!x || !y) return NULL;
    if (x->type == CAT_NULL && y->type != CAT_NULL) x = adopt_null(bc, x, y->type, y->dict);
    if (y->type == CAT_NULL && x && x->type != CAT_NULL) y = adopt_null(bc, y, x->type, x->dict);
    if (!x || !y) return NULL;
    if (dec_is(x) || dec_is(y)) return dec_compare(bc, op, x, y, pos);
    if (x->type == CAT_STRING || y->type == CAT_STRING) {
        if (x->type != y->type)
            return bind_fail(bc, "Binder", pos, "cannot compare %s with %s", cat_type_name(x->type),
                             cat_type_name(y->type));
        if (bx_unify_dicts(bc->arena, &x, &y) != 0) return bind_oom(bc);
    } else if (bx_is_float(x->type) || bx_is_float(y->type)) {
        /* a mixed CASE against an integer: its INT branches compare as
         * integers (SQLite compares int64 with int64 exactly) */
        if (!bx_is_float(y->type) && y->type != CAT_DATE && !is_null_const(y) && dist_ok(x, y))
            return distribute(bc, x, DIST_CMP_LEFT, op, y, pos);
        if (!bx_is_float(x->type) && x->type != CAT_DATE && !is_null_const(x) && dist_ok(y, x))
            return distribute(bc, y, DIST_CMP_RIGHT, op, x, pos);
        /* an INT64 beyond 2^53 against a REAL: exactly (SQLite) */
        if (!bx_is_float(x->type) && x->type != CAT_DATE && !is_null_const(x) &&
            !is_null_const(y) && bx_is_float(y->type) && !int_exact_in_double(bc, x))
            return compare_int_real(bc, op, cast_to(bc, x, CAT_INT64), y, pos);
        if (!bx_is_float(y->type) && y->type != CAT_DATE && !is_null_const(y) &&
            !is_null_const(x) && bx_is_float(x->type) && !int_exact_in_double(bc, y))
            return compare_int_real(bc, op, x, cast_to(bc, y, CAT_INT64), pos);
        x = cast_to(bc, x, CAT_FLOAT64);
        y = cast_to(bc, y, CAT_FLOAT64);
    }
    BExpr *e = bx_bin(bc->arena, op, CAT_BOOL, x, y, pos);
    return e ? e : bind_oom(bc);
}

/* Bind arithmetic op(x, y): INT64 unless a float operand makes it FLOAT64
 * (no distribution into mixed branches; see bind_arith). */
static BExpr *arith_plain(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos) {
    if (!x || !y) return NULL;
    if (dec_is(x) || dec_is(y)) return dec_arith(bc, op, x, y, pos);
    BExpr *x0 = x, *y0 = y; /* before the casts, for dec_exact_fold */
    if (!bx_is_numeric(x->type) || !bx_is_numeric(y->type))
        return bind_fail(bc, "Binder", pos, "cannot apply arithmetic to %s and %s",
                         cat_type_name(x->type), cat_type_name(y->type));
    CatType t = (bx_is_float(x->type) || bx_is_float(y->type)) ? CAT_FLOAT64 : CAT_INT64;
    if (op == OP_MOD) t = (t == CAT_FLOAT64) ? CAT_FLOAT64 : CAT_INT64;
    x = cast_to(bc, x, t);
    y = cast_to(bc, y, t);
    if (!x || !y) return NULL;
    if (x->kind == BE_CONST && y->kind == BE_CONST && !x->is_null && !y->is_null &&
        x->type != CAT_NULL && y->type != CAT_NULL) {
        /* two numbers: fold as SQLite computes them, an int64 overflow
         * becoming REAL (the run-time map cannot change a column's type) */
        CatValue vx, vy, r;
        if (plan_eval_const(x, &vx, NULL) == 0 && plan_eval_const(y, &vy, NULL) == 0 &&
            bx_fold_arith(op, &vx, &vy, &r) == 0) {
            BExpr *c = r.kind == CAT_V_INT     ? bx_int(bc->arena, CAT_INT64, r.i, pos)
                       : r.kind == CAT_V_FLOAT ? bx_float(bc->arena, r.f, pos)
                                               : bx_null(bc->arena, t, pos);
            if (c && r.kind == CAT_V_FLOAT) dec_exact_fold(bc, op, x0, y0, c);
            return c ? c : bind_oom(bc);
        }
    }
    BExpr *e = bx_bin(bc->arena, op, t, x, y, pos);
    return e ? e : bind_oom(bc);
}

/*
 * ---- DECIMAL(p,s): scaled int64 ----
 * A DECIMAL value is an int64 holding the number times 10^scale (BExpr
 * scale, see bx_scale). Rescaling is built from ordinary nodes, so the map
 * evaluators (CPU and GPU) need nothing new and their checked int64
 * arithmetic raises `integer overflow`:
 *
 *   up by k digits     x * 10^k                      (checked multiply)
 *   down by k digits   CASE WHEN x < 0 THEN (x - h) / 10^k
 *                      ELSE (x + h) / 10^k END, h = 10^k / 2
 *                      (round half away from zero, as DuckDB)
 *   to DOUBLE          CAST(x AS DOUBLE) / 10^s
 *
 * Type rules (DuckDB's, with int64 in place of its int128):
 *   dec +|-|% dec      scale max(s1, s2) (the other operand rescaled)
 *   dec * dec          scale s1 + s2 (Not implemented above 18)
 *   dec op integer     the integer is DECIMAL(18,0)
 *   dec / anything     DOUBLE
 *   dec op REAL        DOUBLE, except a literal such as 0.05 that is an
 *                      exact decimal (DuckDB types it DECIMAL(3,2))
 *   comparisons        on the common scale, exactly
 */

/* 1 if x is DECIMAL-typed. */
static int dec_is(const BExpr *x) {
    return x && x->type == CAT_DECIMAL;
}

/* A DECIMAL constant raw / 10^scale (NULL when is_null). */
static BExpr *dec_const(BindCtx *bc, int64_t raw, int scale, int is_null, int64_t pos) {
    BExpr *c =
        is_null ? bx_null(bc->arena, CAT_DECIMAL, pos) : bx_int(bc->arena, CAT_DECIMAL, raw, pos);
    if (!c) return bind_oom(bc);
    c->prec = CAT_DEC_MAX_PREC;
    c->scale = scale;
    return c;
}

/* The REAL literal x as an exact DECIMAL constant (the fewest digits after
 * the point that give back the same double, as the literal was written),
 * or NULL when x is not such a literal or needs more than 18 digits. */
static BExpr *dec_from_literal(BindCtx *bc, const BExpr *x) {
    if (!x || x->kind != BE_CONST || !x->float_lit || x->is_null || !isfinite(x->fval)) return NULL;
    if (x->float_lit == 2) return dec_const(bc, x->ival, x->scale, 0, x->pos);
    for (int k = 0; k <= CAT_DEC_MAX_PREC; k++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.*f", k, x->fval);
        if (strtod(buf, NULL) != x->fval) continue;
        int64_t raw;
        if (cat_parse_decimal(buf, strlen(buf), CAT_DEC_MAX_PREC, k, &raw) != 0) return NULL;
        return dec_const(bc, raw, k, 0, x->pos);
    }
    return NULL;
}

/* x * m as a DECIMAL of the given scale: folded when x is a constant and
 * the product fits, else a (checked) multiply node. */
static BExpr *dec_mul_const(BindCtx *bc, BExpr *x, int64_t m, int scale, int64_t pos) {
    int64_t r;
    if (x->kind == BE_CONST && (x->is_null || !__builtin_mul_overflow(x->ival, m, &r)))
        return dec_const(bc, x->is_null ? 0 : r, scale, x->is_null, pos);
    BExpr *k = bx_int(bc->arena, CAT_INT64, m, pos);
    BExpr *e = k ? bx_bin(bc->arena, OP_MUL, CAT_DECIMAL, x, k, pos) : NULL;
    if (!e) return bind_oom(bc);
    e->prec = CAT_DEC_MAX_PREC;
    e->scale = scale;
    return e;
}

/* x (DECIMAL of scale <= s, integer, BOOL or NULL) as a DECIMAL of scale
 * s. */
static BExpr *dec_rescale_up(BindCtx *bc, BExpr *x, int s, int64_t pos) {
    if (!x) return NULL;
    if (x->type == CAT_NULL || (x->kind == BE_CONST && x->is_null)) {
        if (x->kind == BE_CONST) return dec_const(bc, 0, s, 1, pos);
        BExpr *c = adopt_null(bc, x, CAT_DECIMAL, NULL);
        if (c) c->scale = s;
        return c;
    }
    if (x->type != CAT_DECIMAL) {
        if (x->kind == BE_CONST) {
            BExpr *c = dec_const(bc, x->ival, 0, 0, x->pos);
            return c && s > 0 ? dec_mul_const(bc, c, cat_pow10(s), s, pos) : c;
        }
        /* the integer as DECIMAL(18,0): the same int64 */
        BExpr *c = bx_new(bc->arena, BE_CAST, CAT_DECIMAL, x->pos);
        if (!c) return bind_oom(bc);
        c->a = x;
        c->prec = CAT_DEC_MAX_PREC;
        x = c;
    }
    int k = s - bx_scale(x);
    if (k <= 0) return x;
    return dec_mul_const(bc, x, cat_pow10(k), s, pos);
}

/* The DECIMAL x rounded half away from zero to scale s < its own, typed t
 * (DECIMAL of scale s, or INT64 when s = 0 and t says so). */
static BExpr *dec_round_down(BindCtx *bc, BExpr *x, int s, CatType t, int64_t pos) {
    int k = bx_scale(x) - s;
    int64_t p = cat_pow10(k), h = p / 2;
    if (x->kind == BE_CONST) {
        if (x->is_null)
            return t == CAT_DECIMAL ? dec_const(bc, 0, s, 1, pos) : bx_null(bc->arena, t, pos);
        int64_t v = x->ival, q = v / p, r = v % p;
        if (r >= h && h > 0) q++;
        if (r <= -h && h > 0) q--;
        return t == CAT_DECIMAL ? dec_const(bc, q, s, 0, pos) : bx_int(bc->arena, t, q, pos);
    }
    BExpr *zero = bx_int(bc->arena, CAT_DECIMAL, 0, pos);
    BExpr *hk = bx_int(bc->arena, CAT_INT64, h, pos);
    BExpr *pk = bx_int(bc->arena, CAT_INT64, p, pos);
    if (!zero || !hk || !pk) return bind_oom(bc);
    zero->scale = bx_scale(x);
    BExpr *lt = bx_bin(bc->arena, OP_LT, CAT_BOOL, x, zero, pos);
    BExpr *lo = bx_bin(bc->arena, OP_SUB, t, x, hk, pos);
    BExpr *hi = bx_bin(bc->arena, OP_ADD, t, x, hk, pos);
    BExpr *qlo = lo ? bx_bin(bc->arena, OP_DIV, t, lo, pk, pos) : NULL;
    BExpr *qhi = hi ? bx_bin(bc->arena, OP_DIV, t, hi, pk, pos) : NULL;
    BExpr *c = bx_new(bc->arena, BE_CASE, t, pos);
    if (!lt || !qlo || !qhi || !c) return bind_oom(bc);
    lo->scale = hi->scale = bx_scale(x);
    qlo->scale = qhi->scale = s;
    c->a = lt;
    c->b = qlo;
    c->c = qhi;
    c->scale = s;
    return c;
}

/* The DECIMAL x as type t: FLOAT64 / FLOAT32 (x / 10^s), an integer type
 * or BOOL (rounded half away from zero; INT32 saturates as CAST does), or
 * DECIMAL of scale `scale` (rescaled). */
static BExpr *dec_to(BindCtx *bc, BExpr *x, CatType t, int scale, int64_t pos) {
    if (!x) return NULL;
    int s = bx_scale(x);
    if (t == CAT_DECIMAL)
        return scale >= s ? dec_rescale_up(bc, x, scale, pos)
                          : dec_round_down(bc, x, scale, CAT_DECIMAL, pos);
    if (bx_is_float(t)) {
        if (x->kind == BE_CONST) {
            if (x->is_null) return bx_null(bc->arena, CAT_FLOAT64, pos);
            BExpr *c = bx_float(bc->arena, (double)x->ival / (double)cat_pow10(s), pos);
            return c ? c : bind_oom(bc);
        }
        BExpr *f = bx_new(bc->arena, BE_CAST, CAT_FLOAT64, pos);
        BExpr *d = bx_float(bc->arena, (double)cat_pow10(s), pos);
        if (!f || !d) return bind_oom(bc);
        f->a = x;
        if (s == 0) return f;
        BExpr *q = bx_bin(bc->arena, OP_DIV, CAT_FLOAT64, f, d, pos);
        return q ? q : bind_oom(bc);
    }
    if (t == CAT_BOOL) return as_condition(bc, x);
    BExpr *i = s > 0 ? dec_round_down(bc, x, 0, CAT_INT64, pos) : NULL;
    if (s == 0) {
        if (x->kind == BE_CONST) {
            i = x->is_null ? bx_null(bc->arena, CAT_INT64, pos)
                           : bx_int(bc->arena, CAT_INT64, x->ival, pos);
        } else if ((i = bx_new(bc->arena, BE_CAST, CAT_INT64, pos))) {
            i->a = x;
        }
        if (!i) return bind_oom(bc);
    }
    if (!i || t == CAT_INT64) return i;
    return cast_to(bc, i, t);
}

/* Operands x, y of a comparison or arithmetic where one is DECIMAL and
 * neither is STRING or DATE: 1 if they meet as DOUBLE (a REAL operand that
 * is not an exact decimal literal; such a literal is turned into a DECIMAL
 * constant in place), 0 if as DECIMAL. */
static int dec_meet_float(BindCtx *bc, BExpr **x, BExpr **y) {
    BExpr **sides[2] = {x, y};
    for (int i = 0; i < 2; i++) {
        BExpr **p = sides[i];
        if (!bx_is_float((*p)->type)) continue;
        BExpr *d = dec_from_literal(bc, *p);
        if (!d) return 1;
        *p = d;
    }
    return 0;
}

/* The non-NULL constant v (integer, DECIMAL or exact decimal literal) as
 * a scaled integer at scale s: 1 with *in = 1 and *out set, or *in = 0
 * when no DECIMAL of scale s equals it; 0 when v is none of those (the
 * caller compares otherwise). */
static int dec_in_value(BindCtx *bc, const BExpr *v, int s, int64_t *out, int *in) {
    int64_t raw;
    int vs;
    *in = 0;
    if (bx_is_float(v->type)) {
        BExpr *d = dec_from_literal(bc, v);
        if (!d) return 0;
        raw = d->ival, vs = d->scale;
    } else if (dec_is(v) || v->type == CAT_INT64 || v->type == CAT_INT32 || v->type == CAT_BOOL) {
        raw = v->ival, vs = bx_scale(v);
    } else {
        return 0;
    }
    if (vs > s) {
        int64_t p = cat_pow10(vs - s);
        if (raw % p != 0) return 1;
        raw /= p;
    } else if (__builtin_mul_overflow(raw, cat_pow10(s - vs), &raw)) {
        return 1;
    }
    *out = raw;
    *in = 1;
    return 1;
}

/* r, the folded REAL constant of x op y where x and y are constants: when
 * op is + - * and x, y are decimal literals or integers (one a literal),
 * r keeps SQLite's double but also carries the exact decimal result
 * (float_lit 2, ival at scale), which is what it is where it meets a
 * DECIMAL: DuckDB computes `0.06 + 0.01` (TPC-H Q6's text) as the decimal
 * 0.07, while the double is 0.06999999999999999. */
static void dec_exact_fold(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, BExpr *r) {
    if ((op != OP_ADD && op != OP_SUB && op != OP_MUL) || x->kind != BE_CONST ||
        y->kind != BE_CONST || x->is_null || y->is_null || !(x->float_lit || y->float_lit))
        return;
    BExpr *dx = x->float_lit ? dec_from_literal(bc, x) : NULL;
    BExpr *dy = y->float_lit ? dec_from_literal(bc, y) : NULL;
    if (!x->float_lit && (x->type == CAT_INT64 || x->type == CAT_INT32))
        dx = dec_const(bc, x->ival, 0, 0, x->pos);
    if (!y->float_lit && (y->type == CAT_INT64 || y->type == CAT_INT32))
        dy = dec_const(bc, y->ival, 0, 0, y->pos);
    if (!dx || !dy || bx_scale(dx) + bx_scale(dy) > CAT_DEC_MAX_PREC) return;
    BExpr *d = dec_arith(bc, op, dx, dy, r->pos);
    if (!d || d->kind != BE_CONST || d->is_null) return;
    r->float_lit = 2;
    r->ival = d->ival;
    r->scale = d->scale;
}

/* A comparison *op(*x, *y) of a non-constant and a non-NULL constant
 * with more digits after the point than the other side has, rewritten to
 * compare on the other side's scale (no rescaling of every row, which
 * could overflow, and a plain `column < constant` for range filters):
 * with P = 10^k, k the excess digits, c the constant,
 *   v < c  <=>  v < ceil(c/P)     v <= c  <=>  v <= floor(c/P)
 *   v > c  <=>  v > floor(c/P)    v >= c  <=>  v >= ceil(c/P)
 *   v = c, v <> c: only when P divides c.
 * Returns 1 when rewritten (*x, *y NULL after an error), else 0. */
static int dec_compare_const(BindCtx *bc, AstOp *op, BExpr **x, BExpr **y) {
    static const AstOp flip[] = {[OP_EQ] = OP_EQ, [OP_NE] = OP_NE, [OP_LT] = OP_GT,
                                 [OP_LE] = OP_GE, [OP_GT] = OP_LT, [OP_GE] = OP_LE};
    int cl = (*x)->kind == BE_CONST;
    BExpr *c = cl ? *x : *y, *v = cl ? *y : *x;
    if (c->kind != BE_CONST || v->kind == BE_CONST || c->is_null || !dec_is(c) ||
        bx_scale(c) <= bx_scale(v) || *op < OP_EQ || *op > OP_GE)
        return 0;
    AstOp o = cl ? flip[*op] : *op; /* now v o c */
    int64_t p = cat_pow10(bx_scale(c) - bx_scale(v)), q = c->ival / p, r = c->ival % p;
    int64_t fl = q - (r < 0), ce = q + (r > 0);
    int64_t b;
    if (o == OP_LT || o == OP_GE)
        b = ce;
    else if (o == OP_LE || o == OP_GT)
        b = fl;
    else if (r == 0)
        b = q;
    else
        return 0;
    BExpr *k = dec_const(bc, b, bx_scale(v), 0, c->pos);
    *x = dec_rescale_up(bc, v, bx_scale(v), c->pos);
    *y = k;
    *op = o;
    return 1;
}

/* Comparison op(x, y) where x or y is DECIMAL (the other not STRING). */
static BExpr *dec_compare(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos) {
    /* a string constant is cast to the DECIMAL's type, as DuckDB does */
    BExpr **sc = x->type == CAT_STRING && x->kind == BE_CONST   ? &x
                 : y->type == CAT_STRING && y->kind == BE_CONST ? &y
                                                                : NULL;
    if (sc) {
        BExpr *d = sc == &x ? y : x;
        int64_t v = 0;
        const char *t = (*sc)->is_null ? NULL : const_text(*sc);
        if (t && cat_parse_decimal(t, strlen(t), CAT_DEC_MAX_PREC, bx_scale(d), &v) != 0)
            return bind_fail(bc, "Conversion", (*sc)->pos,
                             "could not convert string '%s' to DECIMAL", t);
        if (!(*sc = dec_const(bc, v, bx_scale(d), t == NULL, (*sc)->pos))) return NULL;
    }
    if (x->type == CAT_DATE || y->type == CAT_DATE || x->type == CAT_STRING ||
        y->type == CAT_STRING)
        return bind_fail(bc, "Binder", pos, "cannot compare %s with %s", cat_type_name(x->type),
                         cat_type_name(y->type));
    if (dec_meet_float(bc, &x, &y)) {
        x = dec_is(x) ? dec_to(bc, x, CAT_FLOAT64, 0, pos) : cast_to(bc, x, CAT_FLOAT64);
        y = dec_is(y) ? dec_to(bc, y, CAT_FLOAT64, 0, pos) : cast_to(bc, y, CAT_FLOAT64);
    } else if (dec_compare_const(bc, &op, &x, &y)) {
        if (!x || !y) return NULL;
    } else {
        int s = bx_scale(x) > bx_scale(y) ? bx_scale(x) : bx_scale(y);
        x = dec_rescale_up(bc, x, s, pos);
        y = dec_rescale_up(bc, y, s, pos);
    }
    if (!x || !y) return NULL;
    BExpr *e = bx_bin(bc->arena, op, CAT_BOOL, x, y, pos);
    return e ? e : bind_oom(bc);
}

/* Arithmetic op(x, y) where x or y is DECIMAL (rules above). */
static BExpr *dec_arith(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos) {
    if (!bx_is_numeric(x->type) || !bx_is_numeric(y->type) || x->type == CAT_DATE ||
        y->type == CAT_DATE)
        return bind_fail(bc, "Binder", pos, "cannot apply arithmetic to %s and %s",
                         cat_type_name(x->type), cat_type_name(y->type));
    BExpr *x0 = x, *y0 = y;
    int lit = bx_is_float(x->type) || bx_is_float(y->type);
    int sx, sy;
    if (op == OP_DIV || dec_meet_float(bc, &x, &y) ||
        (op == OP_MUL && lit && bx_scale(x) + bx_scale(y) > CAT_DEC_MAX_PREC)) {
        /* DOUBLE; also a product with a literal that has too many digits
         * for an int64 DECIMAL (DuckDB: a wider DECIMAL) */
        x = x0, y = y0;
        x = dec_is(x) ? dec_to(bc, x, CAT_FLOAT64, 0, pos) : cast_to(bc, x, CAT_FLOAT64);
        y = dec_is(y) ? dec_to(bc, y, CAT_FLOAT64, 0, pos) : cast_to(bc, y, CAT_FLOAT64);
        return arith_plain(bc, op, x, y, pos);
    }
    sx = bx_scale(x), sy = bx_scale(y);
    int s;
    if (op == OP_MUL) {
        s = sx + sy;
        if (s > CAT_DEC_MAX_PREC)
            return bind_fail(bc, "Not implemented", pos,
                             "DECIMAL product with %d digits after the point (at most %d)", s,
                             CAT_DEC_MAX_PREC);
        x = dec_rescale_up(bc, x, sx, pos);
        y = dec_rescale_up(bc, y, sy, pos);
    } else {
        s = sx > sy ? sx : sy;
        x = dec_rescale_up(bc, x, s, pos);
        y = dec_rescale_up(bc, y, s, pos);
    }
    if (!x || !y) return NULL;
    if (x->kind == BE_CONST && y->kind == BE_CONST) {
        int64_t r = 0;
        int bad = 0, null = x->is_null || y->is_null;
        if (!null) {
            switch (op) {
            case OP_ADD:
                bad = __builtin_add_overflow(x->ival, y->ival, &r);
                break;
            case OP_SUB:
                bad = __builtin_sub_overflow(x->ival, y->ival, &r);
                break;
            case OP_MUL:
                bad = __builtin_mul_overflow(x->ival, y->ival, &r);
                break;
            default: /* OP_MOD: NULL for a zero divisor, as for integers */
                if (y->ival == 0)
                    null = 1;
                else
                    r = y->ival == -1 ? 0 : x->ival % y->ival;
                break;
            }
        }
        if (!bad) return dec_const(bc, r, s, null, pos);
    }
    BExpr *e = bx_bin(bc->arena, op, CAT_DECIMAL, x, y, pos);
    if (!e) return bind_oom(bc);
    e->prec = CAT_DEC_MAX_PREC;
    e->scale = s;
    return e;
}

/* CAST(x AS DECIMAL(prec, scale)) of a non-STRING x: integers and DECIMALs
 * rescale, REALs round half away from zero (x * 10^s, as DuckDB), a
 * constant out of range for prec is a Conversion Error. */
static BExpr *dec_cast(BindCtx *bc, BExpr *x, int prec, int scale, int64_t pos) {
    BExpr *r;
    BExpr *lit = dec_from_literal(bc, x); /* CAST(1.005 AS ...): the literal's digits */
    if (lit) x = lit;
    if (x->type == CAT_NULL || (x->kind == BE_CONST && x->is_null)) {
        r = dec_const(bc, 0, scale, 1, pos);
    } else if (bx_is_float(x->type)) {
        if (x->kind == BE_CONST) {
            double v = x->fval * (double)cat_pow10(scale);
            v = v < 0 ? ceil(v - 0.5) : floor(v + 0.5);
            if (!(fabs(v) < (double)cat_pow10(prec)))
                return bind_fail(bc, "Conversion", pos,
                                 "could not cast value %.17g to DECIMAL(%d,%d)", x->fval, prec,
                                 scale);
            r = dec_const(bc, (int64_t)v, scale, 0, pos);
        } else {
            /* x * 10^s + (x < 0 ? -0.5 : 0.5), truncated */
            BExpr *m = bx_float(bc->arena, (double)cat_pow10(scale), pos);
            BExpr *xf = cast_to(bc, x, CAT_FLOAT64);
            BExpr *p = m && xf ? bx_bin(bc->arena, OP_MUL, CAT_FLOAT64, xf, m, pos) : NULL;
            BExpr *z = bx_float(bc->arena, 0, pos);
            BExpr *lt = p && z ? bx_bin(bc->arena, OP_LT, CAT_BOOL, p, z, pos) : NULL;
            BExpr *hn = bx_float(bc->arena, -0.5, pos), *hp = bx_float(bc->arena, 0.5, pos);
            BExpr *h = bx_new(bc->arena, BE_CASE, CAT_FLOAT64, pos);
            if (!lt || !hn || !hp || !h) return bind_oom(bc);
            h->a = lt, h->b = hn, h->c = hp;
            BExpr *sum = bx_bin(bc->arena, OP_ADD, CAT_FLOAT64, p, h, pos);
            BExpr *i = bx_new(bc->arena, BE_CAST, CAT_INT64, pos);
            BExpr *d = bx_new(bc->arena, BE_CAST, CAT_DECIMAL, pos);
            if (!sum || !i || !d) return bind_oom(bc);
            i->a = sum;
            d->a = i;
            d->scale = scale;
            r = d;
        }
    } else if (dec_is(x) || x->type == CAT_INT32 || x->type == CAT_INT64 || x->type == CAT_BOOL) {
        r = dec_to(bc, dec_is(x) ? x : dec_rescale_up(bc, x, 0, pos), CAT_DECIMAL, scale, pos);
        if (r && r->kind == BE_CONST && !r->is_null &&
            (r->ival >= cat_pow10(prec) || r->ival <= -cat_pow10(prec)))
            return bind_fail(bc, "Conversion", pos, "could not cast value to DECIMAL(%d,%d)", prec,
                             scale);
    } else {
        return bind_fail(bc, "Binder", pos, "cannot cast %s to DECIMAL", cat_type_name(x->type));
    }
    if (r) r->prec = prec;
    return r;
}

/* CAST(text AS DECIMAL(prec, scale)) of a STRING x: a constant parses
 * exactly (Conversion Error when it does not); a column through a table
 * over its dictionary (a text that does not parse is an error when the
 * query is bound, as DuckDB's is when it runs). */
static BExpr *dec_cast_text(BindCtx *bc, BExpr *x, int prec, int scale, int64_t pos) {
    const CatDict *d = x->dict;
    if (x->kind == BE_CONST) {
        if (x->is_null) return dec_const(bc, 0, scale, 1, pos);
        const char *s = const_text(x);
        int64_t v;
        if (cat_parse_decimal(s, strlen(s), prec, scale, &v) != 0)
            return bind_fail(bc, "Conversion", pos,
                             "could not convert string '%s' to DECIMAL(%d,%d)", s, prec, scale);
        BExpr *c = dec_const(bc, v, scale, 0, pos);
        if (c) c->prec = prec;
        return c;
    }
    int64_t *tab = plan_alloc(bc->arena, sizeof(int64_t) * (size_t)(d && d->n ? d->n : 1));
    BExpr *l = bx_new(bc->arena, BE_LOOKUP, CAT_DECIMAL, pos);
    if (!tab || !l || !d) return bind_oom(bc);
    for (int64_t i = 0; i < d->n; i++) {
        const char *s = cat_dict_str(d, i);
        if (cat_parse_decimal(s, strlen(s), prec, scale, &tab[i]) != 0)
            return bind_fail(bc, "Conversion", pos,
                             "could not convert string '%s' to DECIMAL(%d,%d)", s, prec, scale);
    }
    l->a = x;
    l->table = tab;
    l->table_n = d->n;
    l->prec = prec;
    l->scale = scale;
    return l;
}

/* ROUND(x, n) of a DECIMAL x: DuckDB's DECIMAL of scale n when n < the
 * scale (half away from zero), else x itself. n must be a constant. */
static BExpr *dec_round(BindCtx *bc, BExpr *x, BExpr *n, int64_t pos) {
    int64_t k = 0;
    if (n) {
        if (n->kind != BE_CONST || bx_is_float(n->type) || n->type == CAT_DECIMAL)
            return bind_fail(bc, "Not implemented", pos,
                             "ROUND of a DECIMAL with a digits argument that is not an integer "
                             "constant");
        if (n->is_null) return dec_const(bc, 0, bx_scale(x), 1, pos);
        k = n->ival;
    }
    if (k < 0) k = 0;
    if (k >= bx_scale(x)) return x;
    return dec_round_down(bc, x, (int)k, CAT_DECIMAL, pos);
}

/*
 * ---- INT and REAL branches of one CASE / COALESCE ----
 * SQLite's CASE, COALESCE, IFNULL and NULLIF give the value of the branch
 * taken with that branch's type: COALESCE(59, AVG(39)) / -51 divides as
 * integers (-1). gqp's expressions are statically typed, so a CASE whose
 * branches mix INT and REAL is REAL, its integer branches wrapped in a
 * BE_CAST marked `mixed` (unify_branches) and the CASE marked `mixed` too.
 * Operators whose result depends on the operand's type are distributed
 * into the branches before typing:
 *
 *   CASE WHEN c THEN a ELSE b END / y   ->  CASE WHEN c THEN a/y ELSE b/y END
 *   COALESCE(a, b) / y                  ->  CASE WHEN a IS NOT NULL THEN a/y
 *                                           ELSE b/y END
 *
 * for + - * / % (either side), unary minus and ABS, so that each branch is
 * typed on its own and the mixed CASE stays outermost for the next
 * operator. Each distribution copies the other operand once per branch;
 * when the result would exceed DIST_MAX_NODES nodes the operator is applied
 * to the REAL-typed CASE as a whole instead (the result is REAL, a
 * documented deviation from SQLite).
 */
#define DIST_MAX_NODES 2048

static int unify_branches(BindCtx *bc, BExpr **br, int n, CatType *out);
static BExpr *bind_arith(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos);
static BExpr *bind_neg(BindCtx *bc, BExpr *x, int64_t pos);
static BExpr *bind_abs(BindCtx *bc, BExpr *x, int64_t pos);
static BExpr *abs_plain(BindCtx *bc, BExpr *x, int64_t pos);
static BExpr *bind_compare(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos);

/* Nodes of e (shared subtrees counted once per use), counting stops past
 * cap. */
static int64_t bx_count(const BExpr *e, int64_t cap) {
    int64_t n = 0;
    while (e && n <= cap) {
        n++;
        if (e->b) n += bx_count(e->b, cap - n);
        if (e->c) n += bx_count(e->c, cap - n);
        e = e->a;
    }
    return n;
}

/* Branches (leaves through nested mixed CASE / COALESCE) of the mixed e,
 * counting stops past cap. */
static int64_t mixed_leaves(const BExpr *e, int64_t cap) {
    if (cap <= 0) return 1;
    if (!e->mixed || (e->kind != BE_CASE && e->kind != BE_COALESCE)) return 1;
    const BExpr *p = e->kind == BE_CASE ? e->b : e->a;
    const BExpr *q = e->kind == BE_CASE ? e->c : e->b;
    int64_t n = mixed_leaves(p, cap);
    return n + mixed_leaves(q, cap - n);
}

/* 1 if x is a mixed CASE / COALESCE that an operator with the other operand
 * `other` (NULL for unary ones) may be distributed into within the size
 * limit. */
static int dist_ok(const BExpr *x, const BExpr *other) {
    if (!x->mixed || (x->kind != BE_CASE && x->kind != BE_COALESCE)) return 0;
    int64_t lim = DIST_MAX_NODES;
    int64_t leaves = mixed_leaves(x, lim);
    int64_t per = (other ? bx_count(other, lim) : 0) + 3; /* the operator, ABS's own nodes */
    return leaves <= lim && leaves * per + bx_count(x, lim) <= lim;
}

/* A branch of a mixed CASE without the cast that unify_branches put on it. */
static BExpr *strip_mixed(BExpr *x) {
    return x->kind == BE_CAST && x->mixed ? x->a : x;
}

/* The CASE WHEN cond THEN p ELSE q END of the branches' unified type,
 * marked mixed when they mix INT and REAL. NULL with err set on failure. */
static BExpr *make_case(BindCtx *bc, BExpr *cond, BExpr *p, BExpr *q, int64_t pos) {
    if (!cond || !p || !q) return NULL;
    BExpr *br[2] = {p, q};
    CatType t;
    if (unify_branches(bc, br, 2, &t) != 0) return NULL;
    BExpr *c = bx_new(bc->arena, BE_CASE, t, pos);
    if (!c) return bind_oom(bc);
    c->a = cond;
    c->b = br[0];
    c->c = br[1];
    c->dict = br[0]->dict ? br[0]->dict : br[1]->dict;
    c->mixed = br[0]->mixed || br[1]->mixed;
    return c;
}

/* Apply the distributed operator (kind, op, other) to the branch x. */
static BExpr *dist_apply(BindCtx *bc, DistKind kind, AstOp op, BExpr *x, BExpr *other,
                         int64_t pos) {
    switch (kind) {
    case DIST_LEFT:
        return bind_arith(bc, op, x, other, pos);
    case DIST_RIGHT:
        return bind_arith(bc, op, other, x, pos);
    case DIST_NEG:
        return bind_neg(bc, x, pos);
    case DIST_CMP_LEFT:
        return bind_compare(bc, op, x, other, pos);
    case DIST_CMP_RIGHT:
        return bind_compare(bc, op, other, x, pos);
    default:
        return bind_abs(bc, x, pos);
    }
}

/* The operator (kind, op, other) distributed into the branches of the mixed
 * CASE / COALESCE m (see above). NULL with err set on failure. */
static BExpr *distribute(BindCtx *bc, BExpr *m, DistKind kind, AstOp op, BExpr *other,
                         int64_t pos) {
    BExpr *cond, *p, *q;
    if (m->kind == BE_CASE) {
        cond = m->a, p = m->b, q = m->c;
    } else {
        cond = bx_new(bc->arena, BE_ISNULL, CAT_BOOL, m->pos);
        if (!cond) return bind_oom(bc);
        cond->a = m->a;
        cond->negated = 1;
        p = m->a, q = m->b;
    }
    p = dist_apply(bc, kind, op, strip_mixed(p), other, pos);
    q = p ? dist_apply(bc, kind, op, strip_mixed(q), other, pos) : NULL;
    BExpr *c = make_case(bc, cond, p, q, pos);
    if (!c) return NULL;
    switch (kind) {
    case DIST_LEFT:
        c->orig = arith_plain(bc, op, m, other, pos);
        break;
    case DIST_RIGHT:
        c->orig = arith_plain(bc, op, other, m, pos);
        break;
    case DIST_CMP_LEFT:
    case DIST_CMP_RIGHT: {
        /* the comparison of the REAL value, as without distribution */
        BExpr *o = cast_to(bc, other, CAT_FLOAT64);
        if (!o) return NULL;
        c->orig = kind == DIST_CMP_LEFT ? bx_bin(bc->arena, op, CAT_BOOL, m, o, pos)
                                        : bx_bin(bc->arena, op, CAT_BOOL, o, m, pos);
        break;
    }
    case DIST_NEG:
        if ((c->orig = bx_new(bc->arena, BE_UNARY, m->type, pos))) {
            c->orig->op = OP_NEG;
            c->orig->a = m;
        }
        break;
    default:
        c->orig = abs_plain(bc, m, pos);
        break;
    }
    return c->orig ? c : bind_oom(bc);
}

/* Bind arithmetic op(x, y): INT64 unless a float operand makes it FLOAT64;
 * into a mixed CASE / COALESCE operand the operator is distributed. */
static BExpr *bind_arith(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos) {
    if (!x || !y) return NULL;
    if (bx_is_numeric(x->type) && bx_is_numeric(y->type)) {
        if (dist_ok(x, y)) return distribute(bc, x, DIST_LEFT, op, y, pos);
        if (dist_ok(y, x)) return distribute(bc, y, DIST_RIGHT, op, x, pos);
    }
    return arith_plain(bc, op, x, y, pos);
}

/* Bind -x of a numeric, non-constant-folded x (bind_expr folds literal
 * constants): a mixed CASE takes the minus into its branches. */
static BExpr *bind_neg(BindCtx *bc, BExpr *x, int64_t pos) {
    if (!x) return NULL;
    if (!bx_is_numeric(x->type))
        return bind_fail(bc, "Binder", pos, "cannot negate %s", cat_type_name(x->type));
    if (dist_ok(x, NULL)) return distribute(bc, x, DIST_NEG, OP_NONE, NULL, pos);
    CatType t = bx_is_float(x->type) || dec_is(x) ? x->type : CAT_INT64;
    BExpr *n = bx_new(bc->arena, BE_UNARY, t, pos);
    if (!n) return bind_oom(bc);
    n->op = OP_NEG;
    n->a = x;
    return n;
}

/* Bind x IS y (x IS NOT y when negated), SQLite's NULL-safe equality: 1
 * when both are NULL, 0 when one is, else x = y; never NULL. Built as
 * CASE WHEN x IS NULL THEN y IS NULL WHEN y IS NULL THEN 0 ELSE x = y END
 * (NOT of it when negated). */
static BExpr *bind_is(BindCtx *bc, BExpr *x, BExpr *y, int negated, int64_t pos) {
    if (!x || !y) return NULL;
    BExpr *eq = bind_compare(bc, OP_EQ, x, y, pos);
    if (!eq) return NULL;
    BExpr *xn = bx_new(bc->arena, BE_ISNULL, CAT_BOOL, pos);
    BExpr *yn = bx_new(bc->arena, BE_ISNULL, CAT_BOOL, pos);
    BExpr *in = bx_new(bc->arena, BE_CASE, CAT_BOOL, pos);
    BExpr *out = bx_new(bc->arena, BE_CASE, CAT_BOOL, pos);
    BExpr *zero = bx_int(bc->arena, CAT_BOOL, 0, pos);
    if (!xn || !yn || !in || !out || !zero) return bind_oom(bc);
    xn->a = x;
    yn->a = y;
    in->a = yn;
    in->b = zero;
    in->c = eq;
    out->a = xn;
    out->b = yn;
    out->c = in;
    if (!negated) return out;
    BExpr *n = bx_new(bc->arena, BE_UNARY, CAT_BOOL, pos);
    if (!n) return bind_oom(bc);
    n->op = OP_NOT;
    n->a = out;
    return n;
}

/* Bind a boolean connective op(x, y) (AND / OR). */
static BExpr *bind_logic(BindCtx *bc, AstOp op, BExpr *x, BExpr *y, int64_t pos) {
    x = as_condition(bc, x);
    y = as_condition(bc, y);
    if (!x || !y) return NULL;
    BExpr *e = bx_bin(bc->arena, op, CAT_BOOL, x, y, pos);
    return e ? e : bind_oom(bc);
}

/* Returns op (AND / OR) over t[0..n) (n >= 1) as a balanced tree, the terms
 * in order: its height grows as log2(n), so a long IN list bound to ORs does
 * not make later recursion deep. NULL with an error. */
static BExpr *bind_logic_all(BindCtx *bc, AstOp op, BExpr **t, int n, int64_t pos) {
    if (n == 1) return t[0];
    int h = (n + 1) / 2;
    BExpr *l = bind_logic_all(bc, op, t, h, pos);
    BExpr *r = l ? bind_logic_all(bc, op, t + h, n - h, pos) : NULL;
    return r ? bind_logic(bc, op, l, r, pos) : NULL;
}

/* qsort order of int64 values. */
static int cmp_i64(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/* Sort v[0..n) ascending: already sorted (a subquery's DISTINCT or ORDER
 * BY) costs one pass; else a least-significant-byte radix sort over the
 * bytes that differ (4 passes for values within 32 bits), or qsort when
 * the scratch cannot be had. */
static void sort_i64(int64_t *v, int64_t n) {
    int64_t i = 1;
    while (i < n && v[i - 1] <= v[i])
        i++;
    if (i >= n) return;
    uint64_t *tmp = malloc(sizeof *tmp * (size_t)n);
    if (!tmp) {
        qsort(v, (size_t)n, sizeof(int64_t), cmp_i64);
        return;
    }
    uint64_t *a = (uint64_t *)v, *b = tmp, diff = 0;
    for (i = 0; i < n; i++) /* sign flipped: unsigned order is signed order */
        a[i] ^= 1ull << 63;
    for (i = 1; i < n; i++)
        diff |= a[i] ^ a[0];
    for (int shift = 0; shift < 64; shift += 8) {
        if (!((diff >> shift) & 0xff)) continue;
        int64_t count[257] = {0};
        for (i = 0; i < n; i++)
            count[((a[i] >> shift) & 0xff) + 1]++;
        for (int k = 0; k < 256; k++)
            count[k + 1] += count[k];
        for (i = 0; i < n; i++)
            b[count[(a[i] >> shift) & 0xff]++] = a[i];
        uint64_t *t = a;
        a = b;
        b = t;
    }
    if (a != (uint64_t *)v) memcpy(v, a, sizeof *a * (size_t)n);
    for (i = 0; i < n; i++)
        v[i] = (int64_t)((uint64_t)v[i] ^ (1ull << 63));
    free(tmp);
}

/* qsort order of doubles (no NaN among them). */
static int cmp_f64(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* tab[0..n) (int64s, or doubles in the slots when isf) as an ascending set
 * without duplicates, in place; returns its size. */
static int64_t sorted_set(int64_t *tab, int64_t n, int isf) {
    double *ftab = (double *)(void *)tab;
    if (isf)
        qsort(tab, (size_t)n, sizeof(int64_t), cmp_f64);
    else
        sort_i64(tab, n);
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isf ? (u > 0 && ftab[u - 1] == ftab[i]) : (u > 0 && tab[u - 1] == tab[i])) continue;
        if (isf)
            ftab[u++] = ftab[i];
        else
            tab[u++] = tab[i];
    }
    return u;
}

/* IN lists longer than this become a set probe (BE_INLIST); shorter ones
 * stay a chain of = and OR, as fast for a few values (see sqlfront.h). */
#define IN_SET_MIN SQL_IN_SET_MIN

/*
 * Bind x IN (list) as one BE_INLIST when the list is long (> IN_SET_MIN),
 * x is not a constant, and every value binds to a constant that compares
 * with x without an error: numbers with a number (an integral x keeps only
 * the integral values, exactly, as SQLite compares INTEGER with REAL; a
 * REAL x takes every value as a double), DATEs and date strings with a
 * DATE, strings with a STRING (looked up in x's own dictionary: a string
 * absent from it can match no row, so no dictionary union is built).
 * NULL values set the NULL flag, as does a NaN. Returns the node, NULL
 * with *declined = 0 after an error, or NULL with *declined = 1 when the
 * list does not qualify (the caller binds it as = / OR).
 */
static BExpr *bind_in_set(BindCtx *bc, const AstExpr *e, int allow_agg, int *declined) {
    *declined = 1;
    if (e->nlist <= IN_SET_MIN) return NULL;
    BExpr *x = bind_expr(bc, e->a, allow_agg);
    *declined = 0;
    if (!x) return NULL;
    *declined = 1;
    if (x->kind == BE_CONST || x->type == CAT_NULL) return NULL;
    int isf = bx_is_float(x->type), isstr = x->type == CAT_STRING;
    if (isstr && !x->dict) return NULL;
    if (!isstr && !bx_is_numeric(x->type)) return NULL;
    int64_t *tab = plan_alloc(bc->arena, sizeof(int64_t) * (size_t)e->nlist);
    if (!tab) return *declined = 0, bind_oom(bc);
    double *ftab = (double *)(void *)tab; /* the slots hold doubles when isf */
    int64_t n = 0;
    int hasnull = 0;
    for (int i = 0; i < e->nlist; i++) {
        /* the literals a subquery's rows became (thousands of them): read
         * without a bound expression each (as the general path below
         * would give them) */
        const AstExpr *l = e->list[i];
        if (l->kind == AST_NULL) {
            hasnull = 1;
            continue;
        }
        if (l->kind == AST_INT && !dec_is(x) && !isstr) {
            if (isf)
                ftab[n++] = (double)l->ival;
            else
                tab[n++] = l->ival;
            continue;
        }
        if (l->kind == AST_STRING && isstr) {
            int64_t code = cat_dict_find(x->dict, l->str, strlen(l->str));
            if (code >= 0) tab[n++] = code;
            continue;
        }
        BExpr *v = bind_expr(bc, l, allow_agg);
        if (!v) return *declined = 0, NULL;
        if (v->kind != BE_CONST || (dec_is(v) && !dec_is(x))) return NULL;
        if (v->is_null || v->type == CAT_NULL) {
            hasnull = 1;
            continue;
        }
        if (dec_is(x)) {
            /* the value at x's scale; one with finer digits (or beyond the
             * int64) equals no value of x */
            int in;
            if (!dec_in_value(bc, v, bx_scale(x), &tab[n], &in)) return NULL;
            n += in;
            continue;
        }
        if (v->type == CAT_STRING) {
            const char *s = cat_dict_str(v->dict, v->ival);
            if (isstr) {
                int64_t code = cat_dict_find(x->dict, s, strlen(s));
                if (code >= 0) tab[n++] = code;
                continue;
            }
            if (x->type != CAT_DATE) return NULL; /* = would be a Binder Error */
            int32_t days;
            if (cat_parse_date(s, strlen(s), &days) != 0)
                return *declined = 0, bind_fail(bc, "Binder", v->pos, "invalid date '%s'", s);
            tab[n++] = days;
            continue;
        }
        if (isstr || !bx_is_numeric(v->type)) return NULL;
        if (isf) {
            double f = bx_is_float(v->type) ? v->fval : (double)v->ival;
            if (f != f)
                hasnull = 1; /* NaN is NULL in SQLite */
            else
                ftab[n++] = f;
        } else if (bx_is_float(v->type)) {
            double f = v->fval;
            if (f != f)
                hasnull = 1;
            else if (f == floor(f) && f >= -9223372036854775808.0 && f < 9223372036854775808.0)
                tab[n++] = (int64_t)f;
        } else {
            tab[n++] = v->ival;
        }
    }
    int64_t u = sorted_set(tab, n, isf);
    *declined = 0;
    BExpr *s = bx_new(bc->arena, BE_INLIST, CAT_BOOL, e->pos);
    if (!s) return bind_oom(bc);
    s->a = x;
    s->table = tab;
    s->table_n = u;
    s->ival = hasnull;
    return s;
}

/* x IN (the integers of a subquery's rows, e->ints): the sorted set made
 * from them directly. NULL with *declined set when x is not an integer or
 * REAL expression (the caller then makes the literals: in_ints_list). */
static BExpr *bind_in_ints(BindCtx *bc, const AstExpr *e, int allow_agg, int *declined) {
    *declined = 0;
    BExpr *x = bind_expr(bc, e->a, allow_agg);
    if (!x) return NULL;
    *declined = 1;
    if (x->kind == BE_CONST || x->type == CAT_NULL || x->type == CAT_STRING || dec_is(x) ||
        !bx_is_numeric(x->type))
        return NULL;
    *declined = 0;
    if (e->n_ints == 0 && !e->has_null) /* IN of no rows: FALSE, even for NULL */
        return bx_int(bc->arena, CAT_BOOL, 0, e->pos);
    int isf = bx_is_float(x->type);
    int64_t n = e->n_ints;
    int64_t *tab = plan_alloc(bc->arena, sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!tab) return bind_oom(bc);
    double *ftab = (double *)(void *)tab;
    if (isf)
        for (int64_t i = 0; i < n; i++)
            ftab[i] = (double)e->ints[i];
    else
        memcpy(tab, e->ints, sizeof(int64_t) * (size_t)n);
    int64_t u = sorted_set(tab, n, isf);
    BExpr *s = bx_new(bc->arena, BE_INLIST, CAT_BOOL, e->pos);
    if (!s) return bind_oom(bc);
    s->a = x;
    s->table = tab;
    s->table_n = u;
    s->ival = e->has_null;
    return s;
}

/* A copy of the AST_IN e (e->ints) with its values as a list of literals
 * (and a NULL when there was one), as a list written out; NULL when out of
 * memory. */
static const AstExpr *in_ints_list(BindCtx *bc, const AstExpr *e) {
    int64_t n = e->n_ints + (e->has_null ? 1 : 0);
    if (n > INT32_MAX) return NULL;
    AstExpr *c = plan_alloc(bc->arena, sizeof *c);
    AstExpr *vals = plan_alloc(bc->arena, sizeof *vals * (size_t)(n ? n : 1));
    AstExpr **list = plan_alloc(bc->arena, sizeof *list * (size_t)(n ? n : 1));
    if (!c || !vals || !list) return NULL;
    *c = *e;
    c->ints = NULL;
    c->n_ints = 0;
    c->has_null = 0;
    for (int64_t i = 0; i < n; i++) {
        vals[i].kind = i < e->n_ints ? AST_INT : AST_NULL;
        vals[i].ival = i < e->n_ints ? e->ints[i] : 0;
        vals[i].pos = e->pos;
        vals[i].end = e->end;
        vals[i].height = 1;
        vals[i].weight = 1;
        list[i] = &vals[i];
    }
    c->list = list;
    c->nlist = (int)n;
    return c;
}

/* Numeric branches br[0..n) of which some may be DECIMAL: with no REAL
 * branch (exact decimal literals count as DECIMAL), every branch becomes a
 * DECIMAL of the largest scale and *out is CAT_DECIMAL; with one, the
 * DECIMAL branches become DOUBLE (*any_float set) and *out is left for
 * the caller (CAT_NULL). Returns 0, or -1 with the error set. */
static int dec_unify(BindCtx *bc, BExpr **br, int n, int *any_float, CatType *out) {
    *out = CAT_NULL;
    int any_dec = 0, s = 0;
    for (int i = 0; i < n; i++)
        any_dec |= dec_is(br[i]);
    if (!any_dec) return 0;
    int fl = 0;
    for (int i = 0; i < n; i++)
        if (bx_is_float(br[i]->type)) {
            BExpr *d = dec_from_literal(bc, br[i]);
            if (d)
                br[i] = d;
            else
                fl = 1;
        }
    for (int i = 0; i < n; i++) {
        if (fl && dec_is(br[i]) && !(br[i] = dec_to(bc, br[i], CAT_FLOAT64, 0, br[i]->pos)))
            return -1;
        if (dec_is(br[i]) && bx_scale(br[i]) > s) s = bx_scale(br[i]);
    }
    if (fl) {
        *any_float = 1;
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (!(br[i] = dec_rescale_up(bc, br[i], s, br[i]->pos))) return -1;
    *out = CAT_DECIMAL;
    return 0;
}

/* Result type shared by the branches of a CASE / COALESCE; unify string
 * dictionaries and promote numbers. Rewrites the branch array in place. */
static int unify_branches(BindCtx *bc, BExpr **br, int n, CatType *out) {
    for (int i = 0; i < n; i++)
        if (runtime_text(br[i]))
            return runtime_text_fail(bc, br[i], "CASE, COALESCE or IFNULL over"), -1;
    CatType t = CAT_NULL;
    int any_str = 0, any_num = 0, any_float = 0, any_date = 0;
    for (int i = 0; i < n; i++)
        any_date |= br[i]->type == CAT_DATE;
    /* a date string meeting a DATE branch is that date (as in comparisons;
     * SQLite stores dates as such strings) */
    for (int i = 0; any_date && i < n; i++)
        if (br[i]->type == CAT_STRING && !(br[i] = string_as_date(bc, br[i]))) return -1;
    for (int i = 0; i < n; i++) {
        if (br[i]->type == CAT_NULL) continue;
        if (br[i]->type == CAT_STRING)
            any_str = 1;
        else {
            any_num = 1;
            if (bx_is_float(br[i]->type)) any_float = 1;
        }
    }
    if (any_str && any_num) {
        bind_fail(bc, "Binder", br[0]->pos, "CASE branches mix STRING and numeric types");
        return -1;
    }
    if (any_str) {
        int first = -1;
        for (int i = 0; i < n; i++) {
            if (br[i]->type != CAT_STRING) continue;
            if (first < 0) {
                first = i;
                continue;
            }
            if (bx_unify_dicts(bc->arena, &br[first], &br[i]) != 0) {
                bind_oom(bc);
                return -1;
            }
            /* earlier branches must follow the union too */
            for (int j = 0; j < i; j++)
                if (br[j]->type == CAT_STRING && br[j]->dict != br[i]->dict &&
                    bx_unify_dicts(bc->arena, &br[j], &br[i]) != 0) {
                    bind_oom(bc);
                    return -1;
                }
        }
        for (int i = 0; i < n; i++)
            if (br[i]->type == CAT_NULL &&
                !(br[i] = adopt_null(bc, br[i], CAT_STRING, br[first]->dict)))
                return -1;
        *out = CAT_STRING;
        return 0;
    }
    if (any_num && dec_unify(bc, br, n, &any_float, out) != 0) return -1;
    if (any_num && *out == CAT_DECIMAL) return 0;
    if (any_num) {
        t = any_float ? CAT_FLOAT64 : CAT_INT64;
        /* all non-NULL branches of one type (DATE, BOOL, INT32, ...): that
         * type; a NULL branch adopts it */
        CatType first = CAT_NULL;
        int same = 1;
        for (int i = 0; i < n; i++) {
            if (br[i]->type == CAT_NULL) continue;
            if (first == CAT_NULL) first = br[i]->type;
            if (br[i]->type != first) same = 0;
        }
        if (same && first != CAT_NULL) t = first;
        for (int i = 0; i < n; i++) {
            if (br[i]->type == CAT_NULL) {
                br[i] = adopt_null(bc, br[i], t, NULL);
            } else if (bx_is_float(t) && !bx_is_float(br[i]->type)) {
                /* an integer branch of a REAL result: marked, so that type
                 * sensitive operators go into the branch (see bind_arith) */
                BExpr *c = bx_new(bc->arena, BE_CAST, t, br[i]->pos);
                if (!c) return bind_oom(bc), -1;
                c->a = br[i];
                c->mixed = 1;
                br[i] = c;
            } else if (br[i]->type != t) {
                br[i] = cast_to(bc, br[i], t);
            }
            if (!br[i]) return -1;
            if (br[i]->type != t) {
                /* same register class (INT32 -> INT64, FLOAT32 -> FLOAT64):
                 * wrap rather than retype, the node may be a shared column
                 * reference that GROUP BY matching compares by type */
                BExpr *c = bx_new(bc->arena, BE_CAST, t, br[i]->pos);
                if (!c) return bind_oom(bc), -1;
                c->a = br[i];
                br[i] = c;
            }
        }
    }
    *out = t;
    return 0;
}

/* Value of the column-free, aggregate-free e (plan_eval_const, plus the
 * comparisons, NOT, IS NULL, AND / OR and truth tests a condition is made
 * of). Returns 0, or -1 when e is not such a constant. */
static int fold_value(const BExpr *e, CatValue *v) {
    CatValue x, y;
    memset(v, 0, sizeof *v);
    switch (e->kind) {
    case BE_TRUTH:
    case BE_ISNULL:
        if (fold_value(e->a, &x) != 0) return -1;
        if (e->kind == BE_ISNULL) {
            v->kind = CAT_V_INT;
            v->i = (x.kind == CAT_V_NULL) != e->negated;
            return 0;
        }
        if (x.kind == CAT_V_STR) return -1;
        v->kind = x.kind == CAT_V_NULL ? CAT_V_NULL : CAT_V_INT;
        v->i = x.kind == CAT_V_INT ? x.i != 0 : x.f != 0;
        return 0;
    case BE_UNARY:
        if (e->op != OP_NOT) break;
        if (fold_value(e->a, &x) != 0 || x.kind == CAT_V_STR) return -1;
        v->kind = x.kind == CAT_V_NULL ? CAT_V_NULL : CAT_V_INT;
        v->i = x.kind == CAT_V_INT ? x.i == 0 : x.f == 0;
        return 0;
    case BE_BINARY: {
        if (e->op < OP_EQ || e->op > OP_OR) break;
        int fx = fold_value(e->a, &x), fy = fold_value(e->b, &y);
        if (e->op < OP_AND &&
            ((fx == 0 && x.kind == CAT_V_NULL) || (fy == 0 && y.kind == CAT_V_NULL))) {
            v->kind = CAT_V_NULL; /* a comparison with NULL, whatever the other side */
            return 0;
        }
        if (fx != 0 || fy != 0) return -1;
        if (e->op == OP_AND || e->op == OP_OR) {
            if (x.kind == CAT_V_FLOAT || y.kind == CAT_V_FLOAT) return -1;
            return bx_fold_logic(e->op, &x, &y, v);
        }
        if (x.kind == CAT_V_NULL || y.kind == CAT_V_NULL) {
            v->kind = CAT_V_NULL;
            return 0;
        }
        int c;
        if (x.kind == CAT_V_STR || y.kind == CAT_V_STR) {
            if (x.kind != y.kind) return -1;
            c = strcmp(x.s, y.s);
        } else if (x.kind == CAT_V_INT && y.kind == CAT_V_INT) {
            c = (x.i > y.i) - (x.i < y.i);
        } else {
            double dx = x.kind == CAT_V_INT ? (double)x.i : x.f;
            double dy = y.kind == CAT_V_INT ? (double)y.i : y.f;
            if (dx != dx || dy != dy) return -1;
            c = (dx > dy) - (dx < dy);
        }
        v->kind = CAT_V_INT;
        v->i = e->op == OP_EQ   ? c == 0
               : e->op == OP_NE ? c != 0
               : e->op == OP_LT ? c < 0
               : e->op == OP_LE ? c <= 0
               : e->op == OP_GT ? c > 0
                                : c >= 0;
        return 0;
    }
    default:
        break;
    }
    if (e->kind == BE_CONST || e->kind == BE_CAST || e->kind == BE_UNARY ||
        (e->kind == BE_BINARY && e->op >= OP_ADD && e->op <= OP_MOD))
        return plan_eval_const(e, v, NULL);
    return -1;
}

/* Truth of a constant condition: 1 true, 0 false or NULL, -1 when cond is
 * not a constant. */
static int const_truth(const BExpr *cond) {
    CatValue v;
    if (fold_value(cond, &v) != 0) return -1;
    if (v.kind == CAT_V_NULL) return 0;
    if (v.kind == CAT_V_INT) return v.i != 0;
    if (v.kind == CAT_V_FLOAT) return v.f != 0;
    return -1;
}

static BExpr *typed_null(BindCtx *bc, CatType t, int64_t pos);

/* Bind CASE [operand] WHEN .. THEN .. [ELSE ..] END into nested BE_CASE. */
static BExpr *bind_case(BindCtx *bc, const AstExpr *e, int allow_agg) {
    int nw = e->nlist / 2;
    BExpr **br = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)(nw + 1));
    BExpr **cond = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)(nw + 1));
    if (!br || !cond) return bind_oom(bc);
    for (int i = 0; i < nw; i++) {
        BExpr *w = bind_expr(bc, e->list[2 * i], allow_agg);
        if (!w) return NULL;
        if (e->a) {
            BExpr *op = bind_expr(bc, e->a, allow_agg);
            if (!op) return NULL;
            w = bind_compare(bc, OP_EQ, op, w, e->list[2 * i]->pos);
        } else {
            w = as_condition(bc, w);
        }
        if (!w) return NULL;
        cond[i] = w;
        br[i] = bind_expr(bc, e->list[2 * i + 1], allow_agg);
        if (!br[i]) return NULL;
    }
    br[nw] = e->b ? bind_expr(bc, e->b, allow_agg) : bx_null(bc->arena, CAT_NULL, e->pos);
    if (!br[nw]) return NULL;
    /* constant conditions fold, so that the value is the taken branch's
     * with its own type (SQLite): an arm whose condition is constantly
     * false or NULL goes, one whose condition is constantly true becomes
     * the ELSE. Arms holding an aggregate call stay (they make the query
     * an aggregation). */
    int m = 0, text = 0;
    BExpr *els = br[nw];
    for (int i = 0; i < nw; i++) {
        /* was any branch text (a dropped one included) */
        text |= br[i]->type == CAT_STRING;
        int tv = has_agg_call(cond[i]) ? -1 : const_truth(cond[i]);
        if (tv == 0 && !has_agg_call(br[i])) continue;
        if (tv == 1) {
            int later_agg = has_agg_call(br[nw]);
            for (int j = i + 1; j < nw; j++)
                later_agg |= has_agg_call(cond[j]) || has_agg_call(br[j]);
            if (!later_agg) {
                els = br[i];
                break;
            }
        }
        cond[m] = cond[i];
        br[m++] = br[i];
    }
    /* the branches left are NULLs where a dropped one was text: a NULL
     * typed as text (a derived table's column of it is then compared with
     * text, as a correlated subquery's key of a CASE over a NULL outer
     * column is: gqpdiff seed 33676) */
    int all_null = is_null_const(els);
    for (int i = 0; i < m && all_null; i++)
        all_null = is_null_const(br[i]);
    if (all_null && text && els->type == CAT_NULL && !(els = typed_null(bc, CAT_STRING, e->pos)))
        return NULL;
    if (m == 0) return els;
    nw = m;
    br[nw] = els;
    CatType t;
    if (unify_branches(bc, br, nw + 1, &t) != 0) return NULL;
    BExpr *acc = br[nw];
    for (int i = nw - 1; i >= 0; i--) {
        BExpr *c = bx_new(bc->arena, BE_CASE, t, e->pos);
        if (!c) return bind_oom(bc);
        c->a = cond[i];
        c->b = br[i];
        c->c = acc;
        c->dict = br[i]->dict ? br[i]->dict : acc->dict;
        c->mixed = br[i]->mixed || acc->mixed;
        acc = c;
    }
    return acc;
}

/* Bind ABS(x) as CASE WHEN x < 0 THEN -x ELSE x END; into a mixed CASE it
 * is distributed (see bind_arith). NULL with err set on failure. */
static BExpr *bind_abs(BindCtx *bc, BExpr *x, int64_t pos) {
    if (!x) return NULL;
    if (!bx_is_numeric(x->type))
        return bind_fail(bc, "Binder", pos, "abs of %s", cat_type_name(x->type));
    if (dist_ok(x, NULL)) return distribute(bc, x, DIST_ABS, OP_NONE, NULL, pos);
    return abs_plain(bc, x, pos);
}

/* ABS(x) of a numeric x as a CASE, without distribution. */
static BExpr *abs_plain(BindCtx *bc, BExpr *x, int64_t pos) {
    CatType t = x->type == CAT_NULL ? CAT_INT64 : x->type;
    BExpr *zero =
        bx_is_float(t) ? bx_float(bc->arena, 0, pos) : bx_int(bc->arena, CAT_INT64, 0, pos);
    BExpr *lt = bind_compare(bc, OP_LT, x, zero, pos);
    BExpr *neg = bx_new(bc->arena, BE_UNARY, t, pos);
    BExpr *c = bx_new(bc->arena, BE_CASE, t, pos);
    if (!lt || !neg || !c) return bind_oom(bc);
    neg->op = OP_NEG;
    neg->ival = 1; /* ABS's: an overflow stays an error (operators/expr.c) */
    neg->a = x;
    c->a = lt;
    c->b = neg;
    c->c = x;
    return c;
}

/* ------------------------------------------------- string functions -- */

/* The NULL result of a function typed t (STRING gets an empty dictionary). */
static BExpr *typed_null(BindCtx *bc, CatType t, int64_t pos) {
    BExpr *n = bx_null(bc->arena, t, pos);
    if (!n || (t == CAT_STRING && !(n->dict = bx_literal_dict(bc->arena, "")))) return bind_oom(bc);
    return n;
}

/* Text of constant argument x of function f into *out (numbers as SQLite
 * writes them); 1 if it is NULL; -1 with an error if not a constant. */
static int const_arg_text(BindCtx *bc, BExpr *x, const char *f, const char **out) {
    if (is_null_const(x) && x->kind == BE_CONST) return 1;
    if (x->kind != BE_CONST || runtime_text(x))
        return bind_fail(bc, "Not implemented", x->pos,
                         "%s() with a non-constant argument after the first", f),
               -1;
    if (x->type != CAT_STRING && !(x = const_to_text(bc, x, x->pos))) return -1;
    *out = const_text(x);
    return 0;
}

/* Integer value of constant argument x of f into *out (SQLite's integer of
 * a real or text); 1 if NULL; -1 with an error if not a constant. */
static int const_arg_int(BindCtx *bc, BExpr *x, const char *f, int64_t *out) {
    if (is_null_const(x) && x->kind == BE_CONST) return 1;
    if (x->kind != BE_CONST || runtime_text(x))
        return bind_fail(bc, "Not implemented", x->pos,
                         "%s() with a non-constant argument after the first", f),
               -1;
    *out = x->type == CAT_STRING  ? cat_text_to_int64(const_text(x))
           : bx_is_float(x->type) ? bx_f2i(x->fval)
                                  : x->ival;
    return 0;
}

/*
 * Bind a string function LENGTH, UPPER, LOWER, SUBSTR/SUBSTRING, TRIM,
 * LTRIM, RTRIM, REPLACE or INSTR of a STRING expression and constant other
 * arguments, evaluated once per dictionary entry (fn_map_dict). Returns
 * NULL with *matched 0 when f is none of them.
 */
/* x IS NULL (bound). */
static BExpr *is_null_of(BindCtx *bc, BExpr *x, int64_t pos) {
    BExpr *n = bx_new(bc->arena, BE_ISNULL, CAT_BOOL, pos);
    if (!n) return bind_oom(bc);
    n->a = x;
    return n;
}

/* TRUNC of a REAL x as map arithmetic: x itself where |x| >= 2^52 (every
 * such double is an integer; also +-Inf), else CAST(CAST(x AS INTEGER)
 * AS REAL), which truncates toward zero, of x or (x < 0) of -x negated,
 * so that -0.5 gives -0.0 as C's trunc() does. */
static BExpr *trunc_real(BindCtx *bc, BExpr *x, int64_t pos) {
    const double big = 4503599627370496.0; /* 2^52 */
    BExpr *hi = bx_float(bc->arena, big, pos), *lo = bx_float(bc->arena, -big, pos);
    BExpr *zero = bx_float(bc->arena, 0.0, pos);
    if (!hi || !lo || !zero) return bind_oom(bc);
    BExpr *ge = bind_compare(bc, OP_GE, x, hi, pos), *le = bind_compare(bc, OP_LE, x, lo, pos);
    BExpr *neg = bind_compare(bc, OP_LT, x, zero, pos);
    if (!ge || !le || !neg) return NULL;
    BExpr *isbig = bx_bin(bc->arena, OP_OR, CAT_BOOL, ge, le, pos);
    BExpr *tp = cast_to(bc, cast_to(bc, x, CAT_INT64), CAT_FLOAT64);
    BExpr *mx = bind_neg(bc, x, pos);
    BExpr *tn = mx ? bind_neg(bc, cast_to(bc, cast_to(bc, mx, CAT_INT64), CAT_FLOAT64), pos) : NULL;
    if (!isbig) return bind_oom(bc);
    if (!tp || !tn) return NULL;
    return make_case(bc, isbig, x, make_case(bc, neg, tn, tp, pos), pos);
}

/* Numeric functions rewritten into the map's own arithmetic, compares and
 * CASE (so they run on both devices), with SQLite's results (its math
 * functions; DuckDB's GREATEST / LEAST, which SQLite lacks):
 *   IIF(c, a, b)              CASE WHEN c THEN a ELSE b END
 *   SIGN(x)                   -1, 0, 1 (INTEGER), NULL for NULL
 *   TRUNC / FLOOR / CEIL(x),  an integer x itself; a REAL x truncated as
 *   CEILING(x)                trunc_real, then -1 / +1 where it moved
 *   MOD(a, b)                 fmod of both as REAL (OP_FMOD; NULL for
 *                             b = 0), integers too, as SQLite
 *   PI()                      3.141592653589793
 *   SQRT, EXP, LN, LOG10,     over the argument as REAL, NULL outside the
 *   LOG2, LOG(x) (LOG10),     domain: CPU-only map instructions (POP_MATH,
 *   LOG(b, x), POWER / POW    POP_POW), whose map node stays on the CPU
 *   GREATEST / LEAST(a, ...)  the greatest / least non-NULL argument (NULL
 *                             when all are NULL), the arguments unified as
 *                             CASE branches
 *   CONCAT(a, ...)            DuckDB's: COALESCE(a, '') || ... (text and
 *                             constants)
 * *matched = 0 for any other name. */
static BExpr *bind_mathfunc(BindCtx *bc, const AstExpr *e, BExpr **args, int allow_agg,
                            int *matched) {
    const char *f = e->str;
    int64_t pos = e->pos;
    int n = e->nlist;
    *matched = 1;
    if (strcasecmp(f, "iif") == 0 && n == 3)
        return make_case(bc, as_condition(bc, args[0]), args[1], args[2], pos);
    if (strcasecmp(f, "pi") == 0 && n == 0) {
        BExpr *c = bx_float(bc->arena, 3.141592653589793, pos);
        return c ? c : bind_oom(bc);
    }
    int sign = strcasecmp(f, "sign") == 0, tr = strcasecmp(f, "trunc") == 0;
    int fl = strcasecmp(f, "floor") == 0;
    int ce = strcasecmp(f, "ceil") == 0 || strcasecmp(f, "ceiling") == 0;
    if ((sign || tr || fl || ce) && n == 1) {
        BExpr *x = args[0];
        if (x->kind == BE_CONST && (x->is_null || x->type == CAT_NULL))
            return typed_null(bc,
                              sign                  ? CAT_INT64
                              : x->type == CAT_NULL ? CAT_FLOAT64
                                                    : x->type,
                              pos);
        if (x->type == CAT_STRING || x->type == CAT_DATE || dec_is(x) || runtime_text(x))
            return bind_fail(bc, "Not implemented", x->pos,
                             "%s() of a non-numeric or DECIMAL value", f);
        if (sign) {
            BExpr *zero = bx_int(bc->arena, CAT_INT64, 0, pos);
            BExpr *one = bx_int(bc->arena, CAT_INT64, 1, pos);
            BExpr *m1 = bx_int(bc->arena, CAT_INT64, -1, pos);
            BExpr *nul = bx_null(bc->arena, CAT_INT64, pos);
            if (!zero || !one || !m1 || !nul) return bind_oom(bc);
            BExpr *gt = bind_compare(bc, OP_GT, x, zero, pos);
            BExpr *lt = bind_compare(bc, OP_LT, x, zero, pos);
            BExpr *eq = bind_compare(bc, OP_EQ, x, zero, pos);
            return make_case(bc, gt, one,
                             make_case(bc, lt, m1, make_case(bc, eq, zero, nul, pos), pos), pos);
        }
        if (!bx_is_float(x->type)) return x; /* an integer: itself, as SQLite */
        BExpr *x64 = cast_to(bc, x, CAT_FLOAT64);
        BExpr *t = x64 ? trunc_real(bc, x64, pos) : NULL;
        if (!t || tr) return t;
        BExpr *c = bind_compare(bc, fl ? OP_LT : OP_GT, x64, t, pos);
        BExpr *one = bx_float(bc->arena, 1.0, pos);
        if (!c || !one) return c ? bind_oom(bc) : NULL;
        return make_case(bc, c, bind_arith(bc, fl ? OP_SUB : OP_ADD, t, one, pos), t, pos);
    }
    /* SQLite's math functions over REAL: a CPU-only map instruction
     * (POP_MATH / POP_POW; NULL outside the domain) */
    static const struct {
        const char *name;
        AstOp op;
    } m1[] = {{"sqrt", OP_SQRT},   {"exp", OP_EXP},   {"ln", OP_LN},
              {"log10", OP_LOG10}, {"log2", OP_LOG2}, {"log", OP_LOG10}};
    int mk = -1;
    for (size_t i = 0; i < sizeof m1 / sizeof m1[0]; i++)
        if (strcasecmp(f, m1[i].name) == 0) mk = (int)i;
    int pw = strcasecmp(f, "power") == 0 || strcasecmp(f, "pow") == 0;
    int lg2 = strcasecmp(f, "log") == 0 && n == 2; /* log(b, x) = ln(x) / ln(b) */
    if ((mk >= 0 && (n == 1 || lg2)) || (pw && n == 2)) {
        BExpr *r[2];
        for (int i = 0; i < n; i++) {
            BExpr *x = args[i];
            if (x->kind == BE_CONST && (x->is_null || x->type == CAT_NULL))
                return typed_null(bc, CAT_FLOAT64, pos);
            if (x->type == CAT_STRING || x->type == CAT_DATE || runtime_text(x))
                return bind_fail(bc, "Not implemented", x->pos, "%s() of a non-numeric value", f);
            if (!(r[i] = cast_to(bc, x, CAT_FLOAT64))) return NULL;
        }
        if (pw) {
            BExpr *p = bx_bin(bc->arena, OP_POW, CAT_FLOAT64, r[0], r[1], pos);
            return p ? p : bind_oom(bc);
        }
        BExpr *u[2] = {NULL, NULL};
        for (int i = 0; i < n; i++) {
            if (!(u[i] = bx_new(bc->arena, BE_UNARY, CAT_FLOAT64, pos))) return bind_oom(bc);
            u[i]->op = lg2 ? OP_LN : m1[mk].op;
            u[i]->a = r[i];
        }
        return lg2 ? bind_arith(bc, OP_DIV, u[1], u[0], pos) : u[0];
    }
    if (strcasecmp(f, "mod") == 0 && n == 2) {
        for (int i = 0; i < 2; i++) {
            if (args[i]->kind == BE_CONST && (args[i]->is_null || args[i]->type == CAT_NULL))
                return typed_null(bc, CAT_FLOAT64, pos);
            if (dec_is(args[i]) || args[i]->type == CAT_STRING || args[i]->type == CAT_DATE ||
                runtime_text(args[i]))
                return bind_fail(bc, "Not implemented", args[i]->pos,
                                 "MOD() of a DECIMAL or non-numeric value");
        }
        /* fmod of the two as REAL, integers too (SQLite's mod() takes
         * doubles: MOD(9223372036854775807, 10) is fmod(2^63, 10) = 8.0,
         * where the int64 remainder is 7) */
        BExpr *x = cast_to(bc, args[0], CAT_FLOAT64), *y = cast_to(bc, args[1], CAT_FLOAT64);
        if (!x || !y) return NULL;
        BExpr *r = bx_bin(bc->arena, OP_FMOD, CAT_FLOAT64, x, y, pos);
        return r ? r : bind_oom(bc);
    }
    if (strcasecmp(f, "concat") == 0 && n >= 1) {
        /* DuckDB's concat: the arguments' text side by side, NULLs as ''
         * (COALESCE(x, '') || ...; a constant number as its text) */
        AstExpr *acc = NULL;
        for (int i = 0; i < n; i++) {
            BExpr *x = args[i];
            AstExpr *a = e->list[i];
            if (x->kind == BE_CONST && (x->is_null || x->type == CAT_NULL)) continue;
            if (x->type != CAT_STRING && x->kind != BE_CONST) {
                if (x->kind != BE_COL ||
                    (x->type != CAT_INT32 && x->type != CAT_INT64 && x->type != CAT_DATE))
                    return bind_fail(bc, "Not implemented", x->pos,
                                     "concat() of a non-text expression (text, constants and "
                                     "integer or DATE columns)");
                /* an integer / DATE column: CAST(a AS TEXT) || '', the
                 * dictionary of its values' text (column_text) */
                AstExpr *ca = ast_node(bc, AST_CAST, a->pos), *em = ast_text(bc, "", a->pos);
                if (!ca || !em) return bind_oom(bc);
                ca->a = a;
                ca->str = (char *)"TEXT";
                ca->height = a->height + 1;
                ca->weight = a->weight + 1;
                if (!(a = ast_bin(bc, AST_BINARY, OP_CONCAT, NULL, ca, em, a->pos)))
                    return bind_oom(bc);
            }
            if (x->kind != BE_CONST) { /* NULL as '' */
                AstExpr *em = ast_text(bc, "", a->pos);
                if (!em || !(a = ast_bin(bc, AST_FUNC, OP_NONE, "coalesce", a, em, a->pos)))
                    return bind_oom(bc);
            }
            if (acc && !(a = ast_bin(bc, AST_BINARY, OP_CONCAT, NULL, acc, a, a->pos)))
                return bind_oom(bc);
            acc = a;
        }
        if (!acc) {
            BExpr *c = bx_new(bc->arena, BE_CONST, CAT_STRING, pos);
            if (!c || !(c->dict = bx_literal_dict(bc->arena, ""))) return bind_oom(bc);
            return c;
        }
        BExpr *r = bind_expr(bc, acc, allow_agg);
        if (r && r->type != CAT_STRING && r->kind == BE_CONST) r = const_to_text(bc, r, pos);
        return r;
    }
    int gr = strcasecmp(f, "greatest") == 0;
    if ((gr || strcasecmp(f, "least") == 0) && n >= 1) {
        if (n > 8) /* each argument reads the ones before it three times */
            return bind_fail(bc, "Not implemented", pos, "%s() of more than 8 arguments", f);
        BExpr *acc = args[0];
        for (int i = 1; i < n; i++) {
            BExpr *b = args[i];
            if (runtime_text(acc) || runtime_text(b))
                return runtime_text_fail(bc, runtime_text(acc) ? acc : b, "GREATEST / LEAST of");
            BExpr *an = is_null_of(bc, acc, pos), *bn = is_null_of(bc, b, pos);
            BExpr *cmp = an && bn ? bind_compare(bc, gr ? OP_GE : OP_LE, acc, b, pos) : NULL;
            if (!cmp) return NULL;
            acc = make_case(bc, an, b, make_case(bc, bn, acc, make_case(bc, cmp, acc, b, pos), pos),
                            pos);
            if (!acc) return NULL;
        }
        return acc;
    }
    *matched = 0;
    return NULL;
}

static BExpr *bind_strfunc(BindCtx *bc, const AstExpr *e, BExpr **args, int *matched) {
    static const struct {
        const char *name;
        FnStr fn;
        int min, max;
    } fns[] = {{"length", FN_LENGTH, 1, 1},
               {"upper", FN_UPPER, 1, 1},
               {"lower", FN_LOWER, 1, 1},
               {"substr", FN_SUBSTR, 2, 3},
               {"substring", FN_SUBSTR, 2, 3},
               {"trim", FN_TRIM, 1, 2},
               {"ltrim", FN_LTRIM, 1, 2},
               {"rtrim", FN_RTRIM, 1, 2},
               {"replace", FN_REPLACE, 3, 3},
               {"instr", FN_INSTR, 2, 2},
               /* DuckDB's names */
               {"char_length", FN_LENGTH, 1, 1},
               {"character_length", FN_LENGTH, 1, 1},
               {"starts_with", FN_STARTS, 2, 2},
               {"lpad", FN_LPAD, 3, 3},
               {"rpad", FN_RPAD, 3, 3},
               {"left", FN_SUBSTR, 2, 2},
               {"right", FN_SUBSTR, 2, 2}};
    const char *f = e->str;
    int k = -1;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strcasecmp(f, fns[i].name) == 0) k = (int)i;
    *matched = k >= 0;
    if (k < 0) return NULL;
    if (e->nlist < fns[k].min || e->nlist > fns[k].max)
        return bind_fail(bc, "Binder", e->pos, "wrong number of arguments to function %s()", f);
    FnStrOp op = {fns[k].fn, 0, 0, 0, NULL, NULL};
    CatType rt =
        op.fn == FN_LENGTH || op.fn == FN_INSTR || op.fn == FN_STARTS ? CAT_INT64 : CAT_STRING;
    BExpr *x = args[0];
    int nul = is_null_const(x) && x->kind == BE_CONST;
    int left = strcasecmp(f, "left") == 0, right = strcasecmp(f, "right") == 0;
    for (int i = 1; i < e->nlist; i++) {
        int r;
        if (op.fn == FN_SUBSTR || ((op.fn == FN_LPAD || op.fn == FN_RPAD) && i == 1))
            r = const_arg_int(bc, args[i], f, i == 1 ? &op.a : &op.b);
        else
            r = const_arg_text(bc, args[i], f,
                               i == 1 || op.fn == FN_LPAD || op.fn == FN_RPAD ? &op.s1 : &op.s2);
        if (r < 0) return NULL;
        nul |= r;
    }
    op.has_b = e->nlist == 3 && op.fn == FN_SUBSTR;
    if (nul) return typed_null(bc, rt, e->pos);
    if (left || right) {
        /* left(s, n): SUBSTR(s, 1, n); right(s, n): SUBSTR(s, -n), and
         * SUBSTR(s, 1, 0) for 0 */
        if (op.a < 0)
            return bind_fail(bc, "Not implemented", args[1]->pos, "%s() with a negative length", f);
        op.b = op.a;
        op.has_b = left || op.a == 0;
        op.a = left || op.a == 0 ? 1 : -op.a;
    }
    if ((op.fn == FN_LPAD || op.fn == FN_RPAD) && op.s1 && !op.s1[0])
        return bind_fail(bc, "Not implemented", args[2]->pos, "%s() with an empty padding", f);
    /* CAST(col AS TEXT) of an integer or DATE column of a small range: the
     * dictionary of its values' text (column_text), as || makes it */
    if (runtime_text(x) && !(x = column_text(bc, x))) return NULL;
    if (runtime_text(x)) return runtime_text_fail(bc, x, "a string function of");
    if (x->type == CAT_NULL)
        return bind_fail(bc, "Not implemented", x->pos, "%s() of an untyped NULL expression", f);
    if (x->type != CAT_STRING) {
        if (x->kind != BE_CONST)
            return bind_fail(bc, "Not implemented", x->pos,
                             "%s() of a non-text expression (only text, or constants)", f);
        if (!(x = const_to_text(bc, x, x->pos))) return NULL;
    }
    BExpr *r = fn_map_dict(bc->arena, x, &op, e->pos);
    return r ? r : bind_oom(bc);
}

/* The text of a non-constant integer or DATE column x (or of the runtime
 * text CAST(x AS TEXT) of one) as a STRING: a dictionary of the text of
 * every value of the column's range (catalog statistics, at most 2^20
 * values) and a lookup at x - min. x itself when it is not such a column
 * (the caller then reports what it cannot do); NULL when out of memory. */
static BExpr *column_text(BindCtx *bc, BExpr *x) {
    BExpr *c = runtime_text(x) && !x->tnull && !x->tpair[0] ? x->a : x;
    if (c->kind != BE_COL || !bc->b || c->slot >= bc->b->nrels ||
        (c->type != CAT_INT32 && c->type != CAT_INT64 && c->type != CAT_DATE))
        return x;
    const CatStats *st = &bc->b->rels[c->slot].table->cols[c->col].stats;
    int64_t lo = 0, hi = -1;
    /* statistics are doubles: exact below 2^53 only */
    if (!cat_stats_exact(st)) return x;
    if (st->has_minmax) lo = (int64_t)st->min, hi = (int64_t)st->max;
    if (hi - lo >= fn_pairs_max()) return x;
    int unsupported = 0;
    BExpr *r = fn_map_text(bc->arena, c, fn_text_same, NULL, lo, hi, c->pos, &unsupported);
    return r ? r : bind_oom(bc);
}

/* Bind x || y: constants (numbers as their text) fold, a text expression
 * beside a constant is mapped once per dictionary entry, two text
 * expressions through their pairs (fn_concat_pairs); an integer or DATE
 * column is first made text (column_text); NULL gives NULL. Anything else
 * is Not implemented. */
static BExpr *bind_concat(BindCtx *bc, BExpr *x, BExpr *y, int64_t pos) {
    if (is_null_const(x) && x->kind == BE_CONST) return typed_null(bc, CAT_STRING, pos);
    if (is_null_const(y) && y->kind == BE_CONST) return typed_null(bc, CAT_STRING, pos);
    if (x->kind != BE_CONST && x->type != CAT_STRING && !(x = column_text(bc, x))) return NULL;
    if (y->kind != BE_CONST && y->type != CAT_STRING && !(y = column_text(bc, y))) return NULL;
    if (runtime_text(x) && !(x = column_text(bc, x))) return NULL;
    if (runtime_text(y) && !(y = column_text(bc, y))) return NULL;
    if (runtime_text(x) || runtime_text(y))
        return runtime_text_fail(bc, runtime_text(x) ? x : y, "|| of");
    if (x->kind != BE_CONST && y->kind != BE_CONST) {
        /* two text expressions: a lookup over the pairs of their entries */
        if (x->type != CAT_STRING || y->type != CAT_STRING)
            return bind_fail(bc, "Not implemented", x->type != CAT_STRING ? x->pos : y->pos,
                             "operator || (string concatenation) of a non-constant non-text "
                             "expression and another non-constant expression");
        if ((double)x->dict->n * (double)y->dict->n > (double)fn_pairs_max()) {
            /* too many pairs for a table: the text is made when the query
             * runs (CPU-only to-text over the pair index), as runtime text */
            if ((double)x->dict->n * (double)y->dict->n > 9.2e18)
                return bind_fail(bc, "Not implemented", pos,
                                 "operator || of two text expressions with %lld x %lld values",
                                 (long long)x->dict->n, (long long)y->dict->n);
            BExpr *t = bx_new(bc->arena, BE_TOTEXT, CAT_STRING, pos);
            if (!t || !(t->a = fn_pair_index(bc->arena, x, y, pos))) return bind_oom(bc);
            t->tuse = TU_TEXT;
            t->tpair[0] = x->dict;
            t->tpair[1] = y->dict;
            return t;
        }
        BExpr *r = fn_concat_pairs(bc->arena, x, y, pos);
        return r ? r : bind_oom(bc);
    }
    BExpr *sides[2] = {x, y};
    for (int i = 0; i < 2; i++) {
        BExpr *v = sides[i];
        if (v->type == CAT_STRING) continue;
        if (v->kind != BE_CONST || v->type == CAT_NULL)
            return bind_fail(bc, "Not implemented", v->pos,
                             "operator || (string concatenation) of a non-text expression");
        if (!(sides[i] = const_to_text(bc, v, v->pos))) return NULL;
    }
    FnStrOp op = {FN_CONCAT, 0, 0, 0, "", ""};
    BExpr *v;
    if (sides[0]->kind == BE_CONST) /* prefix x to y (constant or not) */
        op.s1 = const_text(sides[0]), v = sides[1];
    else
        op.s2 = const_text(sides[1]), v = sides[0];
    BExpr *r = fn_map_dict(bc->arena, v, &op, pos);
    return r ? r : bind_oom(bc);
}

/* SQLite's round(r, n) for n > 0 over a constant: the decimal text of r to
 * 15 significant digits rounded half away from zero at n decimals (SQLite
 * formats with its printf and reads the text back). */
static double round_const(double r, int64_t n) {
    if (r < -4503599627370496.0 || r > 4503599627370496.0) return r;
    char buf[64], out[96];
    snprintf(buf, sizeof buf, "%.14e", r < 0 ? -r : r);
    /* digits d0.d1..d14 e exp */
    char dig[16];
    int nd = 0;
    for (const char *p = buf; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9') dig[nd++] = *p;
    int ex = atoi(strchr(buf, 'e') + 1);
    /* digit k of dig has weight 10^(ex - k); keep weights >= 10^-n */
    int keep = (int)(ex + n + 1); /* digits kept */
    if (keep < 0) return r < 0 ? -0.0 : 0.0;
    /* all 15 digits kept: nothing to round, the text is read back as is
     * (the lead stays under 10^15, no int64 overflow for any n) */
    if (keep > nd) keep = nd;
    int64_t lead = 0; /* digits kept as an integer, then scaled */
    for (int k = 0; k < keep; k++)
        lead = lead * 10 + (dig[k] - '0');
    if (keep < nd && dig[keep] >= '5') lead++;
    snprintf(out, sizeof out,
             "%s%lld"
             "e%d",
             r < 0 ? "-" : "", (long long)lead, (int)(ex - keep + 1));
    return strtod(out, NULL);
}

/* TUNING: relative slack under which a scaled value's fraction counts as
 * one half in round_digits: above the error of a short decimal's double
 * times 10^n (a few ulps, ~2e-16 relative) and below half a unit of the
 * 15th significant digit (at least 5e-16 relative), where SQLite rounds. */
#define ROUND_HALF_SLACK 4e-16
/* The slack applies where y < 10^14: the rounding position is then
 * before the 15th significant digit. From 10^14 on it is the 15th digit
 * itself, which SQLite rounds from the double's exact expansion (no
 * slack). A random test of 9000 values against sqlite3 3.40 (n = 1..6)
 * leaves mismatches only from y ~ 10^14 on, where SQLite's printf and
 * gqp's text of a REAL differ in the 15th digit anyway. */
#define ROUND_SLACK_BELOW 1e14
/* SQLite keeps 15 significant digits: from y = |x| * 10^n >= 10^15 on
 * nothing below them is left to round, and ROUND gives x. */
#define ROUND_NO_FRACTION 1e15

/* SQLite's ROUND(x, n) for n > 0 of a non-constant REAL x as map
 * arithmetic (both devices): y = |x| * 10^n; k = trunc(y), plus one when
 * the fraction is at least one half (less ROUND_HALF_SLACK * y: SQLite
 * rounds the 15-significant-digit decimal text, so 2.675 rounds up to
 * 2.68 although its double is below 2.675); k / 10^n with x's sign (-0.0
 * for a zero result of a negative x, as SQLite reads "-0.00" back); x itself
 * when y >= ROUND_NO_FRACTION. May differ from SQLite for values whose decimal text
 * needs more than 15 digits near a half (docs/sql.md). */
static BExpr *round_digits(BindCtx *bc, BExpr *x, int64_t n, int64_t pos) {
    if (!x) return NULL;
    double scale = 1;
    for (int64_t i = 0; i < n; i++)
        scale *= 10;
    BExpr *zero = bx_float(bc->arena, 0.0, pos), *sc = bx_float(bc->arena, scale, pos);
    BExpr *half = bx_float(bc->arena, 0.5, pos),
          *slack = bx_float(bc->arena, ROUND_HALF_SLACK, pos);
    BExpr *big = bx_float(bc->arena, ROUND_NO_FRACTION, pos);
    BExpr *one = bx_int(bc->arena, CAT_INT64, 1, pos),
          *izero = bx_int(bc->arena, CAT_INT64, 0, pos);
    BExpr *k = bx_new(bc->arena, BE_CAST, CAT_INT64, pos);
    BExpr *kf = bx_new(bc->arena, BE_CAST, CAT_FLOAT64, pos);
    BExpr *rf = bx_new(bc->arena, BE_CAST, CAT_FLOAT64, pos);
    if (!zero || !sc || !half || !slack || !big || !one || !izero || !k || !kf || !rf)
        return bind_oom(bc);
    BExpr *neg = bind_compare(bc, OP_LT, x, zero, pos);
    BExpr *y = bind_arith(bc, OP_MUL, abs_plain(bc, x, pos), sc, pos);
    if (!neg || !y) return NULL;
    k->a = y;
    kf->a = k;
    BExpr *fr = bind_arith(bc, OP_SUB, y, kf, pos);
    BExpr *sl = bind_arith(bc, OP_MUL, y, slack, pos);
    BExpr *cap = bx_float(bc->arena, ROUND_SLACK_BELOW, pos);
    if (!cap) return bind_oom(bc);
    sl = make_case(bc, bind_compare(bc, OP_LT, y, cap, pos), sl, zero, pos);
    BExpr *lim = bind_arith(bc, OP_SUB, half, sl, pos);
    BExpr *up = make_case(bc, bind_compare(bc, OP_GE, fr, lim, pos), one, izero, pos);
    BExpr *k2 = up ? bind_arith(bc, OP_ADD, k, up, pos) : NULL;
    if (!k2) return NULL;
    rf->a = k2;
    BExpr *r = bind_arith(bc, OP_DIV, rf, sc, pos);
    BExpr *nr = bx_new(bc->arena, BE_UNARY, CAT_FLOAT64, pos);
    if (!nr) return bind_oom(bc);
    nr->op = OP_NEG;
    nr->a = r;
    BExpr *sr = r ? make_case(bc, neg, nr, r, pos) : NULL;
    return sr ? make_case(bc, bind_compare(bc, OP_GE, y, big, pos), x, sr, pos) : NULL;
}

/* Bind SQLite's ROUND(x[, n]) (always REAL): n <= 0 (or absent) as map
 * arithmetic on both devices, (double)(int64)(x +- 0.5) where |x| < 2^52;
 * n > 0 folds over a constant x and is map arithmetic otherwise
 * (round_digits). */
static BExpr *bind_round(BindCtx *bc, const AstExpr *e, BExpr **args) {
    BExpr *x = args[0];
    int64_t n = 0;
    if (e->nlist == 2) {
        int r = const_arg_int(bc, args[1], "round", &n);
        if (r < 0) return NULL;
        if (r == 1) return typed_null(bc, CAT_FLOAT64, e->pos);
    }
    if (is_null_const(x) && x->kind == BE_CONST) return typed_null(bc, CAT_FLOAT64, e->pos);
    if (x->type == CAT_STRING && x->kind == BE_CONST) {
        x = bx_float(bc->arena, cat_text_to_real(const_text(x)), e->pos);
        if (!x) return bind_oom(bc);
    }
    if (!bx_is_numeric(x->type) || x->type == CAT_NULL || runtime_text(x))
        return bind_fail(bc, "Not implemented", x->pos, "ROUND of a non-numeric expression");
    if (!bx_is_float(x->type)) return cast_to(bc, x, CAT_FLOAT64);
    if (n > 30) n = 30;
    if (x->kind == BE_CONST) {
        double r = x->fval;
        if (n <= 0) {
            if (!(r < -4503599627370496.0 || r > 4503599627370496.0))
                r = (double)(int64_t)(r + (r < 0 ? -0.5 : 0.5));
        } else {
            r = round_const(r, n);
        }
        BExpr *c = bx_float(bc->arena, r, e->pos);
        return c ? c : bind_oom(bc);
    }
    if (n > 0) return round_digits(bc, cast_to(bc, x, CAT_FLOAT64), n, e->pos);
    x = cast_to(bc, x, CAT_FLOAT64);
    BExpr *big = bx_float(bc->arena, 4503599627370496.0, e->pos);
    BExpr *nbig = bx_float(bc->arena, -4503599627370496.0, e->pos);
    BExpr *zero = bx_float(bc->arena, 0.0, e->pos);
    BExpr *ph = bx_float(bc->arena, 0.5, e->pos), *mh = bx_float(bc->arena, -0.5, e->pos);
    if (!big || !nbig || !zero || !ph || !mh) return bind_oom(bc);
    BExpr *half = make_case(bc, bind_compare(bc, OP_LT, x, zero, e->pos), mh, ph, e->pos);
    BExpr *t = half ? bind_arith(bc, OP_ADD, x, half, e->pos) : NULL;
    BExpr *i = t ? bx_new(bc->arena, BE_CAST, CAT_INT64, e->pos) : NULL;
    if (t && !i) return bind_oom(bc);
    if (!i) return NULL;
    i->a = t;
    BExpr *f = bx_new(bc->arena, BE_CAST, CAT_FLOAT64, e->pos);
    if (!f) return bind_oom(bc);
    f->a = i;
    BExpr *out = bind_logic(bc, OP_OR, bind_compare(bc, OP_LT, x, nbig, e->pos),
                            bind_compare(bc, OP_GT, x, big, e->pos), e->pos);
    return make_case(bc, out, x, f, e->pos);
}

/* ------------------------------------------------------------ dates -- */

/* Integer constant v (INT64) at pos. */
static BExpr *k64(BindCtx *bc, int64_t v, int64_t pos) {
    BExpr *c = bx_int(bc->arena, CAT_INT64, v, pos);
    return c ? c : bind_oom(bc);
}

/* EXTRACT's fields */
enum { DP_YEAR, DP_MONTH, DP_DAY };

/*
 * Year, month or day of the non-constant DATE expression d, as integer
 * map arithmetic (Hinnant's civil-from-days; every operand is kept
 * non-negative by counting from 25 eras of 400 years before 0000-03-01,
 * so truncating division is floor division for years after -10000).
 * Runs wherever + - * / % run, on both devices. NULL on error.
 */
static BExpr *date_part(BindCtx *bc, BExpr *d, int part, int64_t pos) {
#define A(op, x, y) bind_arith(bc, op, x, y, pos)
#define K(v) k64(bc, v, pos)
    BExpr *z = A(OP_ADD, d, K(719468 + 146097 * 25));
    BExpr *doe = A(OP_MOD, z, K(146097));
    BExpr *era = A(OP_DIV, z, K(146097));
    BExpr *yoe =
        A(OP_DIV,
          A(OP_SUB, A(OP_ADD, A(OP_SUB, doe, A(OP_DIV, doe, K(1460))), A(OP_DIV, doe, K(36524))),
            A(OP_DIV, doe, K(146096))),
          K(365));
    BExpr *doy = A(
        OP_SUB, doe,
        A(OP_SUB, A(OP_ADD, A(OP_MUL, K(365), yoe), A(OP_DIV, yoe, K(4))), A(OP_DIV, yoe, K(100))));
    BExpr *mp = A(OP_DIV, A(OP_ADD, A(OP_MUL, K(5), doy), K(2)), K(153));
    BExpr *r;
    if (part == DP_DAY)
        r = A(OP_ADD, A(OP_SUB, doy, A(OP_DIV, A(OP_ADD, A(OP_MUL, K(153), mp), K(2)), K(5))),
              K(1));
    else if (part == DP_MONTH)
        r = A(OP_SUB, A(OP_ADD, mp, K(3)), A(OP_MUL, K(12), A(OP_DIV, mp, K(10))));
    else
        r = A(OP_ADD, A(OP_SUB, A(OP_ADD, yoe, A(OP_MUL, K(400), era)), K(400 * 25)),
              A(OP_DIV, mp, K(10)));
    return r;
#undef A
#undef K
}

/* x (a bound argument) as a DATE: a DATE, a date string constant or
 * column whose every string is a canonical date, or a NULL (typed DATE).
 * NULL with an error naming `what` otherwise. */
static BExpr *as_date_arg(BindCtx *bc, BExpr *x, const char *what) {
    if (x->type == CAT_STRING && x->kind == BE_CONST && !x->is_null) x = string_to_date(bc, x);
    if (x && x->type == CAT_STRING) x = string_as_date(bc, x);
    if (!x) return NULL;
    if (x->type == CAT_NULL) return adopt_null(bc, x, CAT_DATE, NULL);
    if (x->type != CAT_DATE)
        return bind_fail(bc, "Binder", x->pos, "%s needs a DATE, not %s", what,
                         cat_type_name(x->type));
    return x;
}

/* Months 0000-01 .. 9999-12 indexed from 0 (the DATE range). */
enum { MONTHS_SPAN = 10000 * 12 };

/* A LOOKUP of type INT64 from the month index mi (y * 12 + m - 1) to the
 * first day of that month (first) or its length in days. */
static BExpr *month_lookup(BindCtx *bc, BExpr *mi, int first, int64_t pos) {
    int64_t *tab = plan_alloc(bc->arena, sizeof(int64_t) * MONTHS_SPAN);
    BExpr *l = bx_new(bc->arena, BE_LOOKUP, CAT_INT64, pos);
    if (!tab || !l) return bind_oom(bc);
    for (int64_t i = 0; i < MONTHS_SPAN; i++) {
        int64_t y = i / 12, m = i % 12 + 1, f = fn_days_from_civil(y, m, 1);
        tab[i] =
            first
                ? f
                : (m == 12 ? fn_days_from_civil(y + 1, 1, 1) : fn_days_from_civil(y, m + 1, 1)) - f;
    }
    l->a = mi;
    l->table = tab;
    l->table_n = MONTHS_SPAN;
    return l;
}

/* The non-constant DATE x plus n months, DuckDB's rule (the day clamped to
 * the month's end): first[mi + n] + min(day, length[mi + n]) - 1 with the
 * month index mi of x from date_part, through two per-month LOOKUP tables
 * over 0000-01 .. 9999-12 (a result outside that range is NULL). Map
 * arithmetic and lookups only, so it runs on both devices. */
static BExpr *date_add_months(BindCtx *bc, BExpr *x, int64_t n, int64_t pos) {
    BExpr *y = date_part(bc, x, DP_YEAR, pos), *m = date_part(bc, x, DP_MONTH, pos);
    BExpr *d = date_part(bc, x, DP_DAY, pos);
    if (!y || !m || !d) return NULL;
    BExpr *mi = bind_arith(bc, OP_ADD, bind_arith(bc, OP_MUL, y, k64(bc, 12, pos), pos),
                           bind_arith(bc, OP_SUB, m, k64(bc, 1 - n, pos), pos), pos);
    if (!mi) return NULL;
    BExpr *first = month_lookup(bc, mi, 1, pos), *len = month_lookup(bc, mi, 0, pos);
    if (!first || !len) return NULL;
    BExpr *day = make_case(bc, bind_compare(bc, OP_LE, d, len, pos), d, len, pos);
    BExpr *r =
        day ? bind_arith(bc, OP_SUB, bind_arith(bc, OP_ADD, first, day, pos), k64(bc, 1, pos), pos)
            : NULL;
    if (r) r->type = CAT_DATE;
    return r;
}

/* 1 if the AST node is the INTERVAL the parser makes. */
static int is_interval(const AstExpr *e) {
    return e && e->kind == AST_FUNC && e->nlist == 2 && strcasecmp(e->str, "interval") == 0 &&
           e->list[1]->kind == AST_STRING;
}

/* Bind date_ast +/- iv (an INTERVAL 'n' DAY|MONTH|YEAR). A constant date
 * folds (MONTH and YEAR clamp the day to the month's end, as DuckDB);
 * a non-constant date takes DAY intervals as integer addition. */
static BExpr *bind_date_interval(BindCtx *bc, const AstExpr *date_ast, const AstExpr *iv, int neg,
                                 int allow_agg, int64_t pos) {
    BExpr *x = bind_expr(bc, date_ast, allow_agg);
    if (!x || !(x = as_date_arg(bc, x, "date + INTERVAL"))) return NULL;
    int64_t n = neg ? -iv->list[0]->ival : iv->list[0]->ival;
    const char *unit = iv->list[1]->str;
    if (x->kind == BE_CONST) {
        if (x->is_null) return x;
        int64_t d = x->ival;
        if (strcmp(unit, "day") == 0)
            d += n;
        else
            d = fn_add_months(d, strcmp(unit, "year") == 0 ? n * 12 : n);
        if (d < -719528 || d > 2932896) /* 0000-01-01 .. 9999-12-31 */
            return bind_fail(bc, "Binder", pos, "date out of range");
        BExpr *c = bx_int(bc->arena, CAT_DATE, d, pos);
        return c ? c : bind_oom(bc);
    }
    if (strcmp(unit, "day") != 0)
        return date_add_months(bc, x, strcmp(unit, "year") == 0 ? n * 12 : n, pos);
    BExpr *r = bind_arith(bc, OP_ADD, x, k64(bc, n, pos), pos);
    if (r) r->type = CAT_DATE;
    return r;
}

/* Bind EXTRACT(field FROM x) (e's list: STRING field, x bound as args[1]). */
static BExpr *bind_extract(BindCtx *bc, const AstExpr *e, BExpr *x) {
    const char *f = e->list[0]->str;
    int part = strcasecmp(f, "year") == 0    ? DP_YEAR
               : strcasecmp(f, "month") == 0 ? DP_MONTH
               : strcasecmp(f, "day") == 0   ? DP_DAY
                                             : -1;
    if (part < 0)
        return bind_fail(bc, "Not implemented", e->list[0]->pos,
                         "EXTRACT(%s FROM ...) (supported: YEAR, MONTH, DAY)", f);
    if (!(x = as_date_arg(bc, x, "EXTRACT"))) return NULL;
    if (x->kind == BE_CONST) {
        if (x->is_null) return bx_null(bc->arena, CAT_INT64, e->pos);
        int64_t y, m, d;
        fn_civil_from_days(x->ival, &y, &m, &d);
        return k64(bc, part == DP_YEAR ? y : part == DP_MONTH ? m : d, e->pos);
    }
    /* a DATE column whose current statistics span at most 2^20 days: a
     * table of the part per day of that range and a lookup at x - min
     * (a map of ~100 integer operations per row otherwise) */
    if (x->kind == BE_COL && bc->b && x->slot < bc->b->nrels) {
        const CatColumn *col = &bc->b->rels[x->slot].table->cols[x->col];
        const CatStats *st = &col->stats;
        if (col->type == CAT_DATE && st->has_minmax && st->rows == col->n &&
            st->max - st->min < (double)((int64_t)1 << 20)) {
            int64_t lo = (int64_t)st->min, n = (int64_t)st->max - lo + 1;
            int64_t *tab = plan_alloc(bc->arena, sizeof(int64_t) * (size_t)n);
            BExpr *c = bx_new(bc->arena, BE_CAST, CAT_INT64, e->pos);
            BExpr *k = bx_int(bc->arena, CAT_INT64, lo, e->pos);
            BExpr *sub = bx_new(bc->arena, BE_BINARY, CAT_INT64, e->pos);
            BExpr *l = bx_new(bc->arena, BE_LOOKUP, CAT_INT64, e->pos);
            if (!tab || !c || !k || !sub || !l) return bind_oom(bc);
            for (int64_t i = 0; i < n; i++) {
                int64_t y, m, d;
                fn_civil_from_days(lo + i, &y, &m, &d);
                tab[i] = part == DP_YEAR ? y : part == DP_MONTH ? m : d;
            }
            c->a = x;
            sub->op = OP_SUB, sub->a = c, sub->b = k;
            l->a = sub;
            l->table = tab;
            l->table_n = n;
            return l;
        }
    }
    return date_part(bc, x, part, e->pos);
}

/* fn_map_text callbacks: strftime with the format and modifiers of
 * DateMods ud; date() with its modifiers. */
typedef struct DateMods {
    const char **mods;
    int nmods;
    const char *fmt; /* strftime */
} DateMods;
static int strftime_cb(const void *ud, const char *in, char *out, size_t cap) {
    const DateMods *dm = ud;
    if (!dm->nmods) return fn_strftime(dm->fmt, in, out, cap);
    /* modifiers: the date they give (its time 00:00:00); a time part of
     * the value that the format would show is not handled */
    char day[16];
    if (strlen(in) > 10 && strpbrk(dm->fmt, "HMSfs")) {
        for (const char *p = strchr(dm->fmt, '%'); p; p = strchr(p + 2, '%'))
            if (p[1] && strchr("HMSfs", p[1])) return 2;
    }
    int rc = fn_sqlite_date(in, dm->mods, dm->nmods, day);
    return rc ? rc : fn_strftime(dm->fmt, day, out, cap);
}
static int date_cb(const void *ud, const char *in, char *out, size_t cap) {
    const DateMods *dm = ud;
    (void)cap; /* >= 16 bytes: 'YYYY-MM-DD' */
    return fn_sqlite_date(in, dm->mods, dm->nmods, out);
}

/* Text function fn of a non-constant date argument x of SQL function f:
 * a text x per dictionary entry, a DATE column per day of its value range
 * (catalog statistics, at most 2^20 days); other DATE expressions and
 * values fn does not handle are Not implemented. NULL with err set. */
static BExpr *bind_date_text(BindCtx *bc, BExpr *x, FnText fn, const void *ud, const char *f,
                             int64_t pos) {
    if (runtime_text(x)) return runtime_text_fail(bc, x, "a date function of");
    int64_t lo = 0, hi = -1;
    if (x->type == CAT_DATE && x->kind != BE_CONST) {
        if (x->kind != BE_COL || !bc->b || x->slot >= bc->b->nrels)
            return bind_fail(bc, "Not implemented", x->pos,
                             "%s() of a DATE expression other than a column", f);
        const CatStats *st = &bc->b->rels[x->slot].table->cols[x->col].stats;
        if (st->has_minmax) lo = (int64_t)st->min, hi = (int64_t)st->max;
        if (hi - lo >= fn_pairs_max())
            return bind_fail(bc, "Not implemented", x->pos,
                             "%s() of a DATE column spanning more than %lld days", f,
                             (long long)fn_pairs_max());
    } else if (x->type != CAT_STRING && x->type != CAT_DATE) {
        return bind_fail(bc, "Not implemented", x->pos, "%s() of a non-text argument", f);
    }
    int unsupported = 0;
    BExpr *r = fn_map_text(bc->arena, x, fn, ud, lo, hi, pos, &unsupported);
    if (unsupported)
        return bind_fail(bc, "Not implemented", x->pos,
                         "%s() of a value that is not a 'YYYY-MM-DD[ HH:MM[:SS]]' date (Julian "
                         "day numbers, times alone, 'now', time zones), or with this modifier",
                         f);
    return r ? r : bind_oom(bc);
}

/* Bind SQLite's strftime(fmt, x, modifiers...): fmt a constant with the
 * conversions fn_strftime_ok accepts, x text or a DATE, the modifiers
 * constants that date() takes; per possible value of x (bind_date_text),
 * so it runs on both devices. datetime(x, ...) and time(x, ...) are
 * strftime with SQLite's formats (fmt_fixed, with args[0] as x). */
static BExpr *bind_strftime(BindCtx *bc, const AstExpr *e, BExpr **args, const char *fmt_fixed) {
    int first = fmt_fixed ? 0 : 1; /* index of x */
    const char *f = fmt_fixed ? e->str : "strftime";
    DateMods *dm = plan_alloc(bc->arena, sizeof(DateMods));
    if (!dm || !(dm->mods = plan_alloc(bc->arena, sizeof(char *) * (size_t)e->nlist)))
        return bind_oom(bc);
    for (int i = first + 1; i < e->nlist; i++) {
        BExpr *a = args[i];
        if (a->kind != BE_CONST || runtime_text(a))
            return bind_fail(bc, "Not implemented", a->pos, "%s() with a non-constant modifier", f);
        if (a->is_null || a->type == CAT_NULL) return typed_null(bc, CAT_STRING, e->pos);
        if (a->type != CAT_STRING)
            return bind_fail(bc, "Not implemented", a->pos, "%s() with a non-text modifier", f);
        dm->mods[dm->nmods++] = const_text(a);
    }
    if (fmt_fixed) {
        BExpr *x = args[0];
        if (is_null_const(x)) return typed_null(bc, CAT_STRING, e->pos);
        if (x->kind == BE_CONST && x->type != CAT_STRING && x->type != CAT_DATE &&
            !(x = const_to_text(bc, x, x->pos)))
            return NULL;
        dm->fmt = fmt_fixed;
        return bind_date_text(bc, x, strftime_cb, dm, f, e->pos);
    }
    BExpr *fe = args[0], *x = args[1];
    if (fe->kind != BE_CONST || runtime_text(fe))
        return bind_fail(bc, "Not implemented", fe->pos, "strftime() with a non-constant format");
    if (fe->is_null || fe->type == CAT_NULL || is_null_const(x))
        return typed_null(bc, CAT_STRING, e->pos);
    if (fe->type != CAT_STRING && !(fe = const_to_text(bc, fe, fe->pos))) return NULL;
    const char *fmt = const_text(fe);
    if (!fn_strftime_ok(fmt))
        return bind_fail(bc, "Not implemented", fe->pos,
                         "strftime() format '%s' (supported: %%d %%f %%H %%j %%m %%M %%s %%S %%w "
                         "%%W %%Y %%%%)",
                         fmt);
    if (x->kind == BE_CONST && x->type != CAT_STRING && x->type != CAT_DATE &&
        !(x = const_to_text(bc, x, x->pos)))
        return NULL;
    dm->fmt = fmt;
    return bind_date_text(bc, x, strftime_cb, dm, "strftime", e->pos);
}

/* Bind SQLite's date(s, modifiers...) over constants: a STRING constant
 * (NULL where SQLite gives NULL); fn_sqlite_date lists the forms. A
 * non-constant s with constant modifiers is mapped per possible value of
 * s (bind_date_text). */
static BExpr *bind_sqlite_date(BindCtx *bc, const AstExpr *e, BExpr **args) {
    if (args[0]->kind != BE_CONST) {
        DateMods *dm = plan_alloc(bc->arena, sizeof(DateMods));
        if (!dm || !(dm->mods = plan_alloc(bc->arena, sizeof(char *) * (size_t)e->nlist)))
            return bind_oom(bc);
        for (int i = 1; i < e->nlist; i++) {
            BExpr *a = args[i];
            if (a->kind != BE_CONST || runtime_text(a))
                return bind_fail(bc, "Not implemented", a->pos,
                                 "date() with a non-constant modifier");
            if (a->is_null || a->type == CAT_NULL) return typed_null(bc, CAT_STRING, e->pos);
            if (a->type != CAT_STRING)
                return bind_fail(bc, "Not implemented", a->pos, "date() of a non-text argument");
            dm->mods[dm->nmods++] = const_text(a);
        }
        return bind_date_text(bc, args[0], date_cb, dm, "date", e->pos);
    }
    const char **txt = plan_alloc(bc->arena, sizeof(char *) * (size_t)(e->nlist + 1));
    char buf[16];
    if (!txt) return bind_oom(bc);
    for (int i = 0; i < e->nlist; i++) {
        BExpr *a = args[i];
        if (a->kind != BE_CONST)
            return bind_fail(bc, "Not implemented", a->pos,
                             "date() of a non-constant argument (constants only)");
        if (a->is_null || a->type == CAT_NULL) {
            BExpr *n = bx_null(bc->arena, CAT_STRING, e->pos);
            if (!n || !(n->dict = bx_literal_dict(bc->arena, ""))) return bind_oom(bc);
            return n;
        }
        if (a->type == CAT_DATE && i == 0) {
            char *s = plan_alloc(bc->arena, 16);
            if (!s) return bind_oom(bc);
            cat_format_date((int32_t)a->ival, s);
            txt[i] = s;
        } else if (a->type == CAT_STRING) {
            txt[i] = const_text(a);
        } else {
            return bind_fail(bc, "Not implemented", a->pos, "date() of a non-text argument");
        }
    }
    BExpr *c;
    int rc = fn_sqlite_date(txt[0], txt + 1, e->nlist - 1, buf);
    if (rc == 2)
        return bind_fail(bc, "Not implemented", e->pos,
                         "date() with this date or modifier (supported: 'YYYY-MM-DD', '+N "
                         "days|months|years', 'start of month|year|day')");
    if (rc != 0) {
        c = bx_null(bc->arena, CAT_STRING, e->pos);
        if (c && !(c->dict = bx_literal_dict(bc->arena, ""))) c = NULL;
    } else {
        c = bx_new(bc->arena, BE_CONST, CAT_STRING, e->pos);
        if (c && !(c->dict = bx_literal_dict(bc->arena, buf))) c = NULL;
    }
    return c ? c : bind_oom(bc);
}

/* DuckDB's order statistics MEDIAN(x), QUANTILE_CONT(x, q),
 * QUANTILE_DISC(x, q) (and QUANTILE, its alias of QUANTILE_DISC) as a
 * BE_AGG with ival = AggQuant and fval = q, a constant in [0, 1]. CONT and
 * MEDIAN take numbers and give FLOAT64; DISC also takes DATE and STRING
 * (codes order as text) and gives the argument's type. Returns NULL (err
 * set) on misuse; *handled = 0 when f is none of these names. */
static BExpr *bind_quantile(BindCtx *bc, const AstExpr *e, int allow_agg, int *handled) {
    const char *f = e->str;
    int median = strcasecmp(f, "median") == 0;
    AggQuant quant = median || strcasecmp(f, "quantile_cont") == 0 ? AQ_CONT
                     : strcasecmp(f, "quantile_disc") == 0 || strcasecmp(f, "quantile") == 0
                         ? AQ_DISC
                         : AQ_NONE;
    *handled = quant != AQ_NONE;
    if (quant == AQ_NONE) return NULL;
    if (!allow_agg)
        return bind_fail(bc, "Binder", e->pos, "aggregate function %s is not allowed here", f);
    if (bc->in_agg)
        return bind_fail(bc, "Binder", e->pos, "aggregate function calls cannot be nested");
    if (e->distinct) return bind_fail(bc, "Not implemented", e->pos, "%s(DISTINCT ...)", f);
    if (e->nlist != (median ? 1 : 2) || e->list[0]->kind == AST_STAR)
        return bind_fail(bc, "Binder", e->pos, "%s takes %s", f,
                         median ? "one argument" : "two arguments (value, fraction)");
    double q = 0.5;
    if (!median) {
        BExpr *qe = bind_expr(bc, e->list[1], 0);
        if (!qe) return NULL;
        if (qe->kind != BE_CONST || qe->is_null || qe->type == CAT_STRING || qe->type == CAT_DATE ||
            qe->type == CAT_BOOL)
            return bind_fail(bc, "Binder", e->list[1]->pos,
                             "%s: the fraction must be a constant number", f);
        q = bx_is_float(qe->type) ? qe->fval : (double)qe->ival;
        if (!(q >= 0.0 && q <= 1.0))
            return bind_fail(bc, "Binder", e->list[1]->pos,
                             "%s: the fraction must be between 0 and 1", f);
    }
    bc->in_agg = 1;
    BExpr *arg = bind_expr(bc, e->list[0], 0);
    bc->in_agg = 0;
    if (!arg) return NULL;
    if (runtime_text(arg)) return runtime_text_fail(bc, arg, "an aggregate of");
    if (arg->type == CAT_BOOL) arg = cast_to(bc, arg, CAT_INT64), arg->type = CAT_INT64;
    if (quant == AQ_CONT && (arg->type == CAT_STRING || arg->type == CAT_DATE))
        return bind_fail(bc, "Not implemented", e->pos, "%s of a %s value", f,
                         arg->type == CAT_STRING ? "STRING" : "DATE");
    BExpr *x = bx_new(bc->arena, BE_AGG, CAT_FLOAT64, e->pos);
    if (!x) return bind_oom(bc);
    x->agg = AGG_MIN;
    x->ival = quant;
    x->fval = q;
    x->a = arg;
    if (quant == AQ_DISC) {
        x->type = arg->type == CAT_STRING    ? CAT_STRING
                  : arg->type == CAT_DATE    ? CAT_DATE
                  : arg->type == CAT_DECIMAL ? CAT_DECIMAL
                  : bx_is_float(arg->type)   ? CAT_FLOAT64
                                             : CAT_INT64;
        x->dict = arg->dict;
        if (dec_is(arg)) x->prec = CAT_DEC_MAX_PREC, x->scale = bx_scale(arg);
    } else if (dec_is(arg) && bx_scale(arg) > 0) {
        /* over the scaled integers, then as a DOUBLE (DuckDB: DECIMAL) */
        BExpr *d = bx_float(bc->arena, (double)cat_pow10(bx_scale(arg)), e->pos);
        BExpr *q = d ? bx_bin(bc->arena, OP_DIV, CAT_FLOAT64, x, d, e->pos) : NULL;
        return q ? q : bind_oom(bc);
    }
    if (arg->type == CAT_NULL) {
        /* every input is NULL, so is the result (as MIN(NULL)) */
        if (quant == AQ_DISC) x->type = CAT_INT64;
        BExpr *w = bx_new(bc->arena, BE_CAST, CAT_NULL, e->pos);
        if (!w) return bind_oom(bc);
        w->a = x;
        return w;
    }
    return x;
}

/* SQLite's group_concat(x [, sep]) and string_agg(x, sep): a BE_AGG
 * (AQ_CONCAT, ttext = sep, default ",") whose text is made when the query
 * runs, so it is wrapped as runtime text (BE_TOTEXT TU_TEXT over it): the
 * uses of such text that runtime_text allows work, the others fail as
 * Not implemented. sep must be a constant. *handled = 0 when f is neither. */
static BExpr *bind_group_concat(BindCtx *bc, const AstExpr *e, int allow_agg, int *handled) {
    const char *f = e->str;
    int sagg = strcasecmp(f, "string_agg") == 0;
    *handled = sagg || strcasecmp(f, "group_concat") == 0;
    if (!*handled) return NULL;
    if (!allow_agg)
        return bind_fail(bc, "Binder", e->pos, "aggregate function %s is not allowed here", f);
    if (bc->in_agg)
        return bind_fail(bc, "Binder", e->pos, "aggregate function calls cannot be nested");
    if (e->nlist < 1 + sagg || e->nlist > 2 || e->list[0]->kind == AST_STAR)
        return bind_fail(bc, "Binder", e->pos, "wrong number of arguments to function %s()", f);
    if (e->distinct) return bind_fail(bc, "Not implemented", e->pos, "%s(DISTINCT ...)", f);
    const char *sep = ",";
    if (e->nlist == 2) {
        BExpr *se = bind_expr(bc, e->list[1], 0);
        if (!se) return NULL;
        if (se->kind != BE_CONST || runtime_text(se))
            return bind_fail(bc, "Not implemented", e->list[1]->pos,
                             "%s() with a non-constant separator", f);
        if (se->is_null || se->type == CAT_NULL) {
            sep = "";
        } else {
            if (se->type != CAT_STRING && !(se = const_to_text(bc, se, se->pos))) return NULL;
            sep = const_text(se);
        }
    }
    bc->in_agg = 1;
    BExpr *arg = bind_expr(bc, e->list[0], 0);
    bc->in_agg = 0;
    if (!arg) return NULL;
    /* the text of numbers is what group_concat makes of the numbers */
    if (runtime_text(arg) && !arg->tnull && !arg->tpair[0]) arg = arg->a;
    if (runtime_text(arg)) return runtime_text_fail(bc, arg, "an aggregate of");
    if (arg->type == CAT_BOOL) arg = cast_to(bc, arg, CAT_INT64), arg->type = CAT_INT64;
    BExpr *x = bx_new(bc->arena, BE_AGG, CAT_STRING, e->pos);
    BExpr *t = bx_new(bc->arena, BE_TOTEXT, CAT_STRING, e->pos);
    char *sp = plan_strdup(bc->arena, sep);
    if (!x || !t || !sp) return bind_oom(bc);
    x->agg = AGG_COUNT;
    x->ival = AQ_CONCAT;
    x->ttext = sp;
    x->a = arg;
    t->tuse = TU_TEXT;
    t->a = x;
    return t;
}

/* Bind a function call: aggregates, ABS, COALESCE/IFNULL, NULLIF. */
/* agg(...) FILTER (WHERE cond) as agg(CASE WHEN cond THEN x END) (COUNT(*):
 * COUNT(CASE WHEN cond THEN 1 END)): the rows cond does not keep give NULL,
 * which every aggregate skips. NULL with an error for a function that is
 * not an aggregate. */
static AstExpr *filter_to_case(BindCtx *bc, const AstExpr *e) {
    static const char *aggs[] = {"count",  "sum",      "avg",           "min",
                                 "max",    "total",    "group_concat",  "string_agg",
                                 "median", "quantile", "quantile_cont", "quantile_disc"};
    int ok = 0;
    for (size_t i = 0; i < sizeof aggs / sizeof aggs[0]; i++)
        ok |= strcasecmp(e->str, aggs[i]) == 0;
    if ((strcasecmp(e->str, "min") == 0 || strcasecmp(e->str, "max") == 0) && e->nlist != 1) ok = 0;
    if (!ok || e->nlist < 1)
        return bind_fail(bc, "Binder", e->c->pos,
                         "FILTER (WHERE ...) of %s(), which is not an aggregate", e->str);
    AstExpr *fe = ast_node(bc, AST_FUNC, e->pos), *ce = ast_node(bc, AST_CASE, e->pos);
    AstExpr **list = plan_alloc(bc->arena, sizeof(AstExpr *) * (size_t)e->nlist);
    AstExpr **wt = plan_alloc(bc->arena, sizeof(AstExpr *) * 2);
    if (!fe || !ce || !list || !wt) return bind_oom(bc);
    *fe = *e;
    fe->c = NULL;
    memcpy(list, e->list, sizeof(AstExpr *) * (size_t)e->nlist);
    AstExpr *then = e->list[0];
    if (then->kind == AST_STAR) {
        if (!(then = ast_node(bc, AST_INT, e->pos))) return bind_oom(bc);
        then->ival = 1;
    }
    wt[0] = e->c;
    wt[1] = then;
    ce->list = wt;
    ce->nlist = 2;
    ce->height = (e->c->height > then->height ? e->c->height : then->height) + 1;
    ce->weight = e->c->weight + then->weight + 1;
    list[0] = ce;
    fe->list = list;
    return fe;
}

static BExpr *bind_func(BindCtx *bc, const AstExpr *e, int allow_agg) {
    const char *f = e->str;
    if (e->c) {
        AstExpr *fe = filter_to_case(bc, e);
        return fe ? bind_func(bc, fe, allow_agg) : NULL;
    }
    PrimAgg agg;
    int is_agg = 1;
    int quantile = 0;
    BExpr *qx = bind_quantile(bc, e, allow_agg, &quantile);
    if (quantile) return qx;
    qx = bind_group_concat(bc, e, allow_agg, &quantile);
    if (quantile) return qx;
    if (strcasecmp(f, "total") == 0 && e->nlist == 1 && e->list[0]->kind != AST_STAR) {
        /* SQLite's total(x): SUM(CAST(x AS REAL)), 0.0 over no rows */
        AstExpr cast = *e->list[0], sum = *e;
        cast.kind = AST_CAST;
        cast.a = e->list[0];
        cast.str = "REAL";
        AstExpr *lp = &cast;
        sum.str = "sum";
        sum.list = &lp;
        BExpr *s = bind_func(bc, &sum, allow_agg);
        BExpr *z = s ? bx_float(bc->arena, 0.0, e->pos) : NULL;
        BExpr *c = z ? bx_new(bc->arena, BE_COALESCE, CAT_FLOAT64, e->pos) : NULL;
        if (s && !c) return bind_oom(bc);
        if (c) c->a = s, c->b = z;
        return c;
    }
    if (strcasecmp(f, "count") == 0)
        agg = AGG_COUNT;
    else if (strcasecmp(f, "sum") == 0)
        agg = AGG_SUM;
    else if (strcasecmp(f, "avg") == 0)
        agg = AGG_AVG;
    else if (strcasecmp(f, "min") == 0 && e->nlist == 1)
        agg = AGG_MIN;
    else if (strcasecmp(f, "max") == 0 && e->nlist == 1)
        agg = AGG_MAX;
    else
        is_agg = 0, agg = AGG_COUNT;
    if (is_agg) {
        if (!allow_agg)
            return bind_fail(bc, "Binder", e->pos, "aggregate function %s is not allowed here", f);
        if (bc->in_agg)
            return bind_fail(bc, "Binder", e->pos, "aggregate function calls cannot be nested");
        BExpr *x = bx_new(bc->arena, BE_AGG, CAT_INT64, e->pos);
        if (!x) return bind_oom(bc);
        x->agg = agg;
        if (e->nlist == 1 && e->list[0]->kind == AST_STAR) {
            if (agg != AGG_COUNT) return bind_fail(bc, "Binder", e->pos, "%s(*) is not allowed", f);
            x->agg = AGG_COUNT_STAR;
            x->agg_star = 1;
            return x;
        }
        if (e->nlist != 1) return bind_fail(bc, "Binder", e->pos, "%s takes one argument", f);
        bc->in_agg = 1;
        BExpr *arg = bind_expr(bc, e->list[0], 0);
        bc->in_agg = 0;
        if (!arg) return NULL;
        if (arg->type == CAT_STRING && agg != AGG_MIN && agg != AGG_MAX && agg != AGG_COUNT)
            return bind_fail(bc, "Binder", e->pos, "%s of a STRING value", f);
        if (runtime_text(arg) && agg != AGG_COUNT)
            return runtime_text_fail(bc, arg, "an aggregate of");
        if (arg->type == CAT_BOOL) arg = cast_to(bc, arg, CAT_INT64), arg->type = CAT_INT64;
        x->a = arg;
        x->agg_distinct = e->distinct && agg != AGG_MIN && agg != AGG_MAX;
        switch (agg) {
        case AGG_COUNT:
            x->type = CAT_INT64;
            break;
        case AGG_SUM:
            x->type = bx_is_float(arg->type) ? CAT_FLOAT64 : dec_is(arg) ? CAT_DECIMAL : CAT_INT64;
            break;
        case AGG_AVG:
            x->type = CAT_FLOAT64;
            break;
        default:
            x->type = arg->type == CAT_STRING    ? CAT_STRING
                      : arg->type == CAT_DATE    ? CAT_DATE
                      : arg->type == CAT_DECIMAL ? CAT_DECIMAL
                      : bx_is_float(arg->type)   ? CAT_FLOAT64
                                                 : CAT_INT64;
            x->dict = arg->dict;
            break;
        }
        if (arg->type == CAT_NULL && agg != AGG_COUNT) {
            /* every input is NULL, so is the result: computed over INT64
             * (AVG: FLOAT64) NULLs, typed NULL so that it adopts its
             * context's type like a NULL literal (IFNULL('a', MAX(NULL))) */
            if (agg != AGG_AVG) x->type = CAT_INT64;
            BExpr *w = bx_new(bc->arena, BE_CAST, CAT_NULL, e->pos);
            if (!w) return bind_oom(bc);
            w->a = x;
            return w;
        }
        if (dec_is(arg)) {
            /* SUM / MIN / MAX keep the scale; AVG is the DOUBLE average of
             * the scaled integers over 10^scale (DuckDB: DOUBLE) */
            x->prec = CAT_DEC_MAX_PREC;
            x->scale = agg == AGG_AVG ? 0 : bx_scale(arg);
            if (agg == AGG_AVG && bx_scale(arg) > 0) {
                BExpr *d = bx_float(bc->arena, (double)cat_pow10(bx_scale(arg)), e->pos);
                BExpr *q = d ? bx_bin(bc->arena, OP_DIV, CAT_FLOAT64, x, d, e->pos) : NULL;
                return q ? q : bind_oom(bc);
            }
        }
        return x;
    }
    BExpr **args = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)(e->nlist + 1));
    if (!args) return bind_oom(bc);
    for (int i = 0; i < e->nlist; i++) {
        if (e->list[i]->kind == AST_STAR)
            return bind_fail(bc, "Binder", e->list[i]->pos, "* is not allowed here");
        args[i] = bind_expr(bc, e->list[i], allow_agg);
        if (!args[i]) return NULL;
    }
    if (strcasecmp(f, "abs") == 0 && e->nlist == 1) return bind_abs(bc, args[0], e->pos);
    if (strcasecmp(f, "extract") == 0 && e->nlist == 2 && e->list[0]->kind == AST_STRING)
        return bind_extract(bc, e, args[1]);
    if (strcasecmp(f, "date") == 0 && e->nlist >= 1) return bind_sqlite_date(bc, e, args);
    if (strcasecmp(f, "strftime") == 0 && e->nlist >= 2) return bind_strftime(bc, e, args, NULL);
    if (strcasecmp(f, "datetime") == 0 && e->nlist >= 1)
        return bind_strftime(bc, e, args, "%Y-%m-%d %H:%M:%S");
    if (strcasecmp(f, "time") == 0 && e->nlist >= 1) return bind_strftime(bc, e, args, "%H:%M:%S");
    if ((strcasecmp(f, "min") == 0 || strcasecmp(f, "max") == 0) && e->nlist >= 2) {
        /* SQLite's scalar min/max: NULL if any argument is NULL, else the
         * least/greatest (the first of equals) with its own type */
        int mx = strcasecmp(f, "max") == 0;
        BExpr *acc = args[0];
        for (int i = 1; i < e->nlist; i++) {
            BExpr *b = args[i];
            BExpr *c1 = bind_compare(bc, mx ? OP_GE : OP_LE, acc, b, e->pos);
            BExpr *c2 = c1 ? bind_compare(bc, mx ? OP_LT : OP_GT, acc, b, e->pos) : NULL;
            BExpr *nul = c2 ? bx_null(bc->arena, CAT_NULL, e->pos) : NULL;
            if (c2 && !nul) return bind_oom(bc);
            BExpr *inner = make_case(bc, c2, b, nul, e->pos);
            if (!(acc = make_case(bc, c1, acc, inner, e->pos))) return NULL;
        }
        return acc;
    }
    int matched_math;
    BExpr *mf = bind_mathfunc(bc, e, args, allow_agg, &matched_math);
    if (matched_math) return mf;
    if (strcasecmp(f, "round") == 0 && (e->nlist == 1 || e->nlist == 2) && dec_is(args[0]))
        return dec_round(bc, args[0], e->nlist == 2 ? args[1] : NULL, e->pos);
    if (strcasecmp(f, "round") == 0 && (e->nlist == 1 || e->nlist == 2))
        return bind_round(bc, e, args);
    int matched;
    BExpr *sf = bind_strfunc(bc, e, args, &matched);
    if (matched) return sf;
    if (is_interval(e))
        return bind_fail(bc, "Not implemented", e->pos,
                         "INTERVAL outside date + INTERVAL or date - INTERVAL");
    if ((strcasecmp(f, "coalesce") == 0 && e->nlist >= 1) ||
        (strcasecmp(f, "ifnull") == 0 && e->nlist == 2)) {
        if (e->nlist == 2 && runtime_text(args[0]) && !args[0]->tnull &&
            args[1]->kind == BE_CONST) {
            /* the text of a NULL number is the constant */
            if (args[1]->is_null || args[1]->type == CAT_NULL) return args[0];
            if (args[1]->type == CAT_STRING) {
                BExpr *u = text_use(bc, args[0], TU_TEXT, CAT_STRING, e->pos);
                if (u) u->tnull = const_text(args[1]);
                return u;
            }
        }
        /* NULL constants go; after a non-NULL constant nothing is reached
         * (arguments with an aggregate call stay: they make the query an
         * aggregation), so COALESCE(59, x) is 59 with 59's type */
        int n = 0, reached = 1;
        for (int i = 0; i < e->nlist; i++) {
            BExpr *x = args[i];
            CatValue v;
            int k = has_agg_call(x) ? -1 : fold_value(x, &v);
            if (k == 0 && v.kind == CAT_V_NULL && i < e->nlist - 1) continue;
            if (!reached && k == 0) continue;
            if (!reached && !has_agg_call(x)) continue;
            if (k == 0) reached = 0;
            args[n++] = x;
        }
        if (n == 0) args[n++] = args[e->nlist - 1];
        if (n == 1) return args[0];
        CatType t;
        if (unify_branches(bc, args, n, &t) != 0) return NULL;
        BExpr *acc = args[n - 1];
        for (int i = n - 2; i >= 0; i--) {
            BExpr *c = bx_new(bc->arena, BE_COALESCE, t, e->pos);
            if (!c) return bind_oom(bc);
            c->a = args[i];
            c->b = acc;
            c->dict = args[i]->dict;
            c->mixed = args[i]->mixed || acc->mixed;
            acc = c;
        }
        return acc;
    }
    if (strcasecmp(f, "nullif") == 0 && e->nlist == 2) {
        /* the result is the first argument or NULL: a branch of a CASE,
         * which runtime text cannot be (it has no dictionary to share) */
        if (runtime_text(args[0])) {
            if (args[1]->kind == BE_CONST && (args[1]->is_null || args[1]->type == CAT_NULL))
                return args[0]; /* never equal to NULL */
            return runtime_text_fail(bc, args[0], "NULLIF of");
        }
        BExpr *eq = bind_compare(bc, OP_EQ, args[0], args[1], e->pos);
        if (!eq) return NULL;
        /* a constant comparison folds: the first argument, or NULL */
        int tv = const_truth(eq);
        if (tv == 0 && !has_agg_call(args[1])) return args[0];
        if (tv == 1 && !has_agg_call(args[0]) && !has_agg_call(args[1]))
            return bx_null(bc->arena, CAT_NULL, e->pos);
        BExpr *c = bx_new(bc->arena, BE_CASE, args[0]->type, e->pos);
        BExpr *nul = bx_null(bc->arena, args[0]->type, e->pos);
        if (!c || !nul) return bind_oom(bc);
        nul->dict = args[0]->dict;
        c->a = eq;
        c->b = nul;
        c->c = args[0];
        c->dict = args[0]->dict;
        c->mixed = args[0]->mixed;
        return c;
    }
    return bind_fail(bc, "Binder", e->pos, "no function matches %s() with %d argument%s", f,
                     e->nlist, e->nlist == 1 ? "" : "s");
}

static BExpr *cast_number(BindCtx *bc, BExpr *x, CatType t, int64_t pos);
static BExpr *cast_mixed(BindCtx *bc, BExpr *m, CatType t, int64_t pos);

/* Bind CAST(x AS type). Numbers convert between int and float; a STRING
 * value converts to a number through a per-dictionary-entry table (SQLite's
 * numeric prefix rules, cat_text_to_int64 / cat_text_to_real); a number
 * converts to TEXT as a constant when it is one, else as BE_TOTEXT, whose
 * text exists only at run time (a further CAST to a number is fused into
 * it). */
static BExpr *bind_cast(BindCtx *bc, const AstExpr *e, int allow_agg) {
    BExpr *x = bind_expr(bc, e->a, allow_agg);
    if (!x) return NULL;
    CatType t;
    int dprec, dscale;
    if (cat_type_parse_dec(e->str, &t, &dprec, &dscale) != 0)
        return bind_fail(bc, "Binder", e->pos, "unknown type \"%s\"%s", e->str,
                         cat_type_hint(e->str));
    if (t == CAT_DECIMAL && runtime_text(x)) return runtime_text_fail(bc, x, "CAST to DECIMAL of");
    if (t == CAT_DECIMAL && x->type == CAT_STRING)
        return dec_cast_text(bc, x, dprec, dscale, e->pos);
    if (t == CAT_DECIMAL) return dec_cast(bc, x, dprec, dscale, e->pos);
    if (dec_is(x) && t != CAT_STRING) return dec_to(bc, x, t, 0, e->pos);
    if (t == CAT_STRING) {
        if (x->type == CAT_STRING || x->type == CAT_NULL) {
            if (x->type == CAT_NULL && !(x->dict = bx_literal_dict(bc->arena, "")))
                return bind_oom(bc);
            x->type = CAT_STRING;
            return x;
        }
        if (x->kind == BE_CONST && x->is_null) {
            BExpr *n = bx_null(bc->arena, CAT_STRING, e->pos);
            if (!n || !(n->dict = bx_literal_dict(bc->arena, ""))) return bind_oom(bc);
            return n;
        }
        if (x->kind == BE_CONST) return const_to_text(bc, x, e->pos);
        BExpr *tx = bx_new(bc->arena, BE_TOTEXT, CAT_STRING, e->pos);
        if (!tx) return bind_oom(bc);
        tx->a = x;
        tx->tuse = TU_TEXT;
        return tx;
    }
    if (runtime_text(x))
        return bx_is_float(t) ? text_use(bc, x, TU_REAL, CAT_FLOAT64, e->pos)
                              : text_use(bc, x, TU_INT, CAT_INT64, e->pos);
    if (t == CAT_DATE && x->type == CAT_STRING) {
        /* a date string is that DATE (standard SQL, DuckDB; SQLite's DATE
         * is NUMERIC affinity and gives the year: a documented deviation) */
        BExpr *dt = string_as_date(bc, x);
        if (!dt) return NULL;
        if (dt->type == CAT_DATE) return dt;
    }
    if (x->type == CAT_STRING) {
        const CatDict *d = x->dict;
        int fl = bx_is_float(t);
        if (x->kind == BE_CONST) {
            if (x->is_null) return bx_null(bc->arena, fl ? CAT_FLOAT64 : CAT_INT64, e->pos);
            const char *s = const_text(x);
            BExpr *c = fl ? bx_float(bc->arena, cat_text_to_real(s), e->pos)
                          : bx_int(bc->arena, CAT_INT64, cat_text_to_int64(s), e->pos);
            return c ? c : bind_oom(bc);
        }
        int64_t *tab = plan_alloc(bc->arena, sizeof(int64_t) * (size_t)(d->n ? d->n : 1));
        BExpr *l = bx_new(bc->arena, BE_LOOKUP, fl ? CAT_FLOAT64 : CAT_INT64, e->pos);
        if (!tab || !l) return bind_oom(bc);
        for (int64_t i = 0; i < d->n; i++) {
            const char *s = cat_dict_str(d, i);
            if (fl) {
                /* a FLOAT64 lookup holds the bits of the double; -0.0 (the
                 * bits of INT64_MIN, the NULL mark) reads as 0.0 */
                double v = cat_text_to_real(s);
                if (v == 0) v = 0;
                memcpy(&tab[i], &v, sizeof v);
            } else {
                tab[i] = cat_text_to_int64(s);
                /* INT64_MIN marks NULL in a lookup: the one text that
                 * saturates to it reads one above (documented deviation) */
                if (tab[i] == INT64_MIN) tab[i] = INT64_MIN + 1;
            }
        }
        l->a = x;
        l->table = tab;
        l->table_n = d->n;
        return l;
    }
    if ((t == CAT_INT64 || t == CAT_INT32) && x->mixed &&
        (x->kind == BE_CASE || x->kind == BE_COALESCE)) {
        /* CAST(CASE .. THEN int ELSE real END AS INTEGER): each branch
         * converts from its own type (an int64 branch keeps every digit) */
        BExpr *c = cast_mixed(bc, x, t, e->pos);
        if (!c) return NULL;
        if (!(c->orig = bx_new(bc->arena, BE_CAST, t, e->pos))) return bind_oom(bc);
        c->orig->a = x;
        return c;
    }
    return cast_number(bc, x, t, e->pos);
}

/* CAST of the numeric (non-STRING) x to the non-STRING type t. */
static BExpr *cast_number(BindCtx *bc, BExpr *x, CatType t, int64_t pos) {
    if (x->type == CAT_NULL) return adopt_null(bc, x, t, NULL);
    if (t == CAT_BOOL) {
        BExpr *c = as_condition(bc, x);
        return c;
    }
    if (bx_is_float(t) == bx_is_float(x->type)) {
        if (x->kind == BE_CONST) {
            if (!bx_is_float(t)) x->ival = bx_to_type(t, x->ival);
            x->type = t;
            return x;
        }
        BExpr *c = bx_new(bc->arena, BE_CAST, t, pos);
        if (!c) return bind_oom(bc);
        c->a = x;
        return c;
    }
    return cast_to(bc, x, t);
}

/* The integer CAST to t distributed into the branches of the mixed CASE /
 * COALESCE m (its INT branches without their mixed REAL cast); the result
 * has m's shape, typed t and not mixed. NULL with err set on failure. */
static BExpr *cast_mixed(BindCtx *bc, BExpr *m, CatType t, int64_t pos) {
    if (!m->mixed || (m->kind != BE_CASE && m->kind != BE_COALESCE))
        return cast_number(bc, strip_mixed(m), t, pos);
    BExpr *c = plan_alloc(bc->arena, sizeof(BExpr));
    if (!c) return bind_oom(bc);
    *c = *m;
    c->type = t;
    c->mixed = 0;
    c->dict = NULL;
    c->orig = NULL;
    BExpr **p = m->kind == BE_CASE ? &c->b : &c->a;
    BExpr **q = m->kind == BE_CASE ? &c->c : &c->b;
    if (!(*p = cast_mixed(bc, *p, t, pos)) || !(*q = cast_mixed(bc, *q, t, pos))) return NULL;
    return c;
}

/* Bind an AST expression in the FROM scope. allow_agg permits aggregate
 * calls (select list, HAVING, ORDER BY). Returns NULL with err set. */
/* The ESCAPE c of LIKE e (SQLite): a constant of exactly one character
 * other than `%` and `_`, its code point in *esc. Returns 0, 1 when c is
 * NULL (the LIKE is then NULL), -1 with an error. */
static int like_escape(BindCtx *bc, const AstExpr *e, int allow_agg, uint32_t *esc) {
    BExpr *c = bind_expr(bc, e->c, allow_agg);
    if (!c) return -1;
    if (c->kind == BE_CONST && (c->is_null || c->type == CAT_NULL)) return 1;
    const char *t = c->kind == BE_CONST && c->type == CAT_STRING ? const_text(c) : NULL;
    if (!t || !plan_like_escape(t, esc))
        return bind_fail(bc, "Binder", e->c->pos, "ESCAPE expression must be a single character"),
               -1;
    if (*esc == '%' || *esc == '_')
        return bind_fail(bc, "Not implemented", e->c->pos, "ESCAPE '%s' (a wildcard)", t), -1;
    return 0;
}

static BExpr *bind_expr(BindCtx *bc, const AstExpr *e, int allow_agg) {
    PlanArena *A = bc->arena;
    switch (e->kind) {
    case AST_INT:
        return bx_int(A, CAT_INT64, e->ival, e->pos);
    case AST_FLOAT: {
        BExpr *x = bx_float(A, e->fval, e->pos);
        if (x) x->float_lit = 1;
        return x;
    }
    case AST_BOOL:
        return bx_int(A, CAT_BOOL, e->ival, e->pos);
    case AST_DATE:
        return bx_int(A, CAT_DATE, e->ival, e->pos);
    case AST_NULL:
        return bx_null(A, CAT_NULL, e->pos);
    case AST_STRING: {
        BExpr *x = bx_new(A, BE_CONST, CAT_STRING, e->pos);
        if (!x || !(x->dict = bx_literal_dict(A, e->str))) return bind_oom(bc);
        x->ival = 0;
        return x;
    }
    case AST_COLUMN:
        return bind_column(bc, e);
    case AST_STAR:
        return bind_fail(bc, "Binder", e->pos, "* is not allowed here");
    case AST_UNARY: {
        BExpr *x = bind_expr(bc, e->a, allow_agg);
        if (!x) return NULL;
        if (e->op == OP_PLUS) return x;
        if (e->op == OP_NOT) {
            if (x->type == CAT_STRING)
                return bind_fail(bc, "Binder", e->pos, "NOT of a STRING value");
            BExpr *n = bx_new(A, BE_UNARY, CAT_BOOL, e->pos);
            if (!n) return bind_oom(bc);
            n->op = OP_NOT;
            n->a = x;
            return n;
        }
        if (!bx_is_numeric(x->type))
            return bind_fail(bc, "Binder", e->pos, "cannot negate %s", cat_type_name(x->type));
        if (x->kind == BE_CONST) {
            if (bx_is_float(x->type)) {
                x->fval = -x->fval;
                if (x->float_lit == 2) x->ival = -x->ival; /* its exact decimal too */
            } else if (x->ival == INT64_MIN && !x->is_null) {
                /* -(-9223372036854775808) is REAL in SQLite */
                x->type = CAT_FLOAT64;
                x->fval = 9223372036854775808.0;
            } else {
                x->ival = -x->ival;
            }
            /* the type of a negation at run time (INT32 could overflow) */
            if (x->type == CAT_BOOL || x->type == CAT_INT32) x->type = CAT_INT64;
            return x;
        }
        return bind_neg(bc, x, e->pos);
    }
    case AST_BINARY: {
        if ((e->op == OP_ADD || e->op == OP_SUB) && is_interval(e->b))
            return bind_date_interval(bc, e->a, e->b, e->op == OP_SUB, allow_agg, e->pos);
        if (e->op == OP_ADD && is_interval(e->a))
            return bind_date_interval(bc, e->b, e->a, 0, allow_agg, e->pos);
        BExpr *x = bind_expr(bc, e->a, allow_agg);
        if (!x) return NULL;
        BExpr *y = bind_expr(bc, e->b, allow_agg);
        if (!y) return NULL;
        switch (e->op) {
        case OP_ADD:
        case OP_SUB:
        case OP_MUL:
        case OP_DIV:
        case OP_MOD:
            return bind_arith(bc, e->op, x, y, e->pos);
        case OP_EQ:
        case OP_NE:
        case OP_LT:
        case OP_LE:
        case OP_GT:
        case OP_GE:
            return bind_compare(bc, e->op, x, y, e->pos);
        case OP_AND:
        case OP_OR:
            return bind_logic(bc, e->op, x, y, e->pos);
        default:
            return bind_concat(bc, x, y, e->pos);
        }
    }
    case AST_BETWEEN: {
        BExpr *x = bind_expr(bc, e->a, allow_agg);
        BExpr *lo = x ? bind_expr(bc, e->b, allow_agg) : NULL;
        BExpr *hi = lo ? bind_expr(bc, e->c, allow_agg) : NULL;
        if (!hi) return NULL;
        BExpr *ge = bind_compare(bc, OP_GE, x, lo, e->pos);
        BExpr *le = ge ? bind_compare(bc, OP_LE, x, hi, e->pos) : NULL;
        BExpr *r = le ? bind_logic(bc, OP_AND, ge, le, e->pos) : NULL;
        if (!r || !e->negated) return r;
        BExpr *n = bx_new(A, BE_UNARY, CAT_BOOL, e->pos);
        if (!n) return bind_oom(bc);
        n->op = OP_NOT;
        n->a = r;
        return n;
    }
    case AST_IN: {
        int declined = 1;
        BExpr *acc = NULL;
        if (e->ints) {
            acc = bind_in_ints(bc, e, allow_agg, &declined);
            if (!acc && !declined) return NULL;
            if (!acc && !(e = in_ints_list(bc, e))) return bind_oom(bc);
        }
        if (!acc) acc = bind_in_set(bc, e, allow_agg, &declined);
        if (!acc && !declined) return NULL;
        if (!acc && e->nlist > 0) {
            /* x = v1 OR x = v2 ..., as a balanced tree */
            BExpr **eqs = plan_alloc(A, sizeof(BExpr *) * (size_t)e->nlist);
            if (!eqs) return bind_oom(bc);
            for (int i = 0; i < e->nlist; i++) {
                BExpr *x = bind_expr(bc, e->a, allow_agg);
                BExpr *v = x ? bind_expr(bc, e->list[i], allow_agg) : NULL;
                eqs[i] = v ? bind_compare(bc, OP_EQ, x, v, e->list[i]->pos) : NULL;
                if (!eqs[i]) return NULL;
            }
            acc = bind_logic_all(bc, OP_OR, eqs, e->nlist, e->pos);
            if (!acc) return NULL;
        }
        if (!acc) acc = bx_int(A, CAT_BOOL, 0, e->pos);
        if (!e->negated) return acc;
        BExpr *n = bx_new(A, BE_UNARY, CAT_BOOL, e->pos);
        if (!n) return bind_oom(bc);
        n->op = OP_NOT;
        n->a = acc;
        return n;
    }
    case AST_ISNULL: {
        BExpr *x = bind_expr(bc, e->a, allow_agg);
        if (!x) return NULL;
        if (e->b) return bind_is(bc, x, bind_expr(bc, e->b, allow_agg), e->negated, e->pos);
        BExpr *n = bx_new(A, BE_ISNULL, CAT_BOOL, e->pos);
        if (!n) return bind_oom(bc);
        n->a = x;
        n->negated = e->negated;
        return n;
    }
    case AST_LIKE: {
        BExpr *x = bind_expr(bc, e->a, allow_agg);
        BExpr *p = x ? bind_expr(bc, e->b, allow_agg) : NULL;
        if (!p) return NULL;
        if (p->type == CAT_NULL || x->type == CAT_NULL)
            return adopt_null(bc, x->type == CAT_NULL ? x : p, CAT_BOOL, NULL);
        /* a NULL value or pattern (also CAST(NULL AS TEXT)) gives NULL */
        if ((p->kind == BE_CONST && p->is_null) || (x->kind == BE_CONST && x->is_null))
            return bx_null(A, CAT_BOOL, e->pos);
        if (x->type != CAT_STRING)
            return bind_fail(bc, "Binder", e->pos, "LIKE needs a STRING value, got %s",
                             cat_type_name(x->type));
        if (p->type != CAT_STRING)
            return bind_fail(bc, "Binder", e->b->pos, "LIKE needs a STRING pattern, got %s",
                             cat_type_name(p->type));
        /* LIKE ... ESCAPE: a constant pattern over a dictionary, matched at
         * bind time (neither the pairs table, run-time text nor the
         * run-time dictionary match know the escape) */
        uint32_t esc = 0;
        if (e->c) {
            int r = like_escape(bc, e, allow_agg, &esc);
            if (r) return r < 0 ? NULL : bx_null(A, CAT_BOOL, e->pos);
            if (p->kind != BE_CONST)
                return bind_fail(bc, "Not implemented", e->b->pos,
                                 "LIKE ... ESCAPE with a non-constant pattern");
            if (runtime_text(x)) return runtime_text_fail(bc, x, "LIKE ... ESCAPE over");
        }
        if (p->kind != BE_CONST) {
            /* a pattern of a text expression: a lookup over the pairs of
             * the value's and the pattern's entries */
            if (runtime_text(p)) return runtime_text_fail(bc, p, "LIKE with");
            if (!runtime_text(x) &&
                (double)x->dict->n * (double)p->dict->n <= (double)fn_pairs_max()) {
                BExpr *l = fn_like_pairs(A, x, p, e->negated, e->pos);
                return l ? l : bind_oom(bc);
            }
            /* too many pairs (or x is text made at run time): the match
             * runs when the query does, on the CPU, over x's text and the
             * pattern's codes (to-text TU_LIKE with a second input); a
             * text x becomes run-time text as the pair (x, '') */
            BExpr *rt = x;
            if (!runtime_text(x)) {
                BExpr *empty = bx_new(A, BE_CONST, CAT_STRING, e->pos);
                if (!empty || !(empty->dict = bx_literal_dict(A, ""))) return bind_oom(bc);
                if (!(rt = bx_new(A, BE_TOTEXT, CAT_STRING, e->pos)) ||
                    !(rt->a = fn_pair_index(A, x, empty, e->pos)))
                    return bind_oom(bc);
                rt->tuse = TU_TEXT;
                rt->tpair[0] = x->dict;
                rt->tpair[1] = empty->dict;
            }
            BExpr *u = text_use(bc, rt, TU_LIKE, CAT_BOOL, e->pos);
            if (!u) return NULL;
            u->b = p;
            u->negated = e->negated;
            return u;
        }
        const char *pat = const_text(p);
        if (runtime_text(x)) {
            BExpr *u = text_use(bc, x, TU_LIKE, CAT_BOOL, e->pos);
            if (!u) return NULL;
            u->ttext = pat;
            u->negated = e->negated;
            return u;
        }
        const CatDict *d = x->dict;
        if (!esc && x->kind == BE_COL && d->n >= plan_dictlike_min()) {
            /* a large dictionary: matched when the query runs, where its
             * placement puts it (the GPU over the dictionary's cached copy) */
            BExpr *l = bx_new(A, BE_DICTLIKE, CAT_BOOL, e->pos);
            if (!l) return bind_oom(bc);
            l->a = x;
            l->dict = d;
            l->ttext = pat;
            l->negated = e->negated;
            double share = plan_like_share(d, pat);
            l->fval = e->negated ? 1.0 - share : share;
            return l;
        }
        int64_t *tab = plan_alloc(A, sizeof(int64_t) * (size_t)(d->n ? d->n : 1));
        BExpr *l = bx_new(A, BE_LOOKUP, CAT_BOOL, e->pos);
        if (!tab || !l) return bind_oom(bc);
        plan_like_table(d, pat, esc, e->negated, tab);
        if (x->kind == BE_CONST) return bx_int(A, CAT_BOOL, tab[x->ival], e->pos);
        l->a = x;
        l->table = tab;
        l->table_n = d->n;
        return l;
    }
    case AST_CASE:
        return bind_case(bc, e, allow_agg);
    case AST_CAST:
        return bind_cast(bc, e, allow_agg);
    case AST_FUNC:
        return bind_func(bc, e, allow_agg);
    case AST_SUBQUERY: /* libgqp runs subqueries and writes their values before binding */
    case AST_EXISTS:
        return bind_fail(bc, "Not implemented", e->pos, "a subquery here");
    case AST_PARAM: /* libgqp writes bound values into the AST before binding */
        return bind_fail(bc, "Binder", e->pos, "parameter %s has no value", e->str);
    }
    return bind_fail(bc, "Binder", e->pos, "unsupported expression");
}

/* A STRING group-key column c (codes of the key's dictionary) as codes of
 * dict, the dictionary of the equal expression it replaces (equal text,
 * built by another binding): a LOOKUP whose table maps each key string to
 * its code in dict (NULL where dict lacks it, which equal expressions never
 * produce). Returns NULL with err set when out of memory. */
static BExpr *group_remap(BindCtx *bc, BExpr *c, const CatDict *dict) {
    const CatDict *from = c->dict;
    if (!from || !dict)
        return bind_fail(bc, "Binder", c->pos,
                         "string GROUP BY key without "
                         "a dictionary");
    int64_t *tab = plan_alloc(bc->arena, sizeof(int64_t) * (size_t)(from->n ? from->n : 1));
    BExpr *l = bx_new(bc->arena, BE_LOOKUP, CAT_STRING, c->pos);
    if (!tab || !l) return bind_oom(bc);
    for (int64_t i = 0; i < from->n; i++) {
        int64_t j = cat_dict_find(dict, cat_dict_str(from, i), (size_t)cat_dict_len(from, i));
        tab[i] = j < 0 ? INT64_MIN : j;
    }
    l->a = c;
    l->table = tab;
    l->table_n = from->n;
    l->dict = dict;
    return l;
}

/* 1 if e is group key g: structurally equal, where an all-NULL value
 * (CAT_NULL, e.g. a CASE whose branches all are NULL) counts as the
 * INT64 that a select item or group key of it is typed. */
static int same_group_key(const BExpr *e, const BExpr *g) {
    if (plan_bexpr_equal(e, g)) return 1;
    if (e->type == g->type || (e->type != CAT_NULL && g->type != CAT_NULL) ||
        (e->type != CAT_INT64 && g->type != CAT_INT64))
        return 0;
    BExpr t = *e;
    t.type = g->type;
    return plan_bexpr_equal(&t, g);
}

/* Rewrite an expression of the FROM scope into the aggregate scope: group
 * keys become columns 0..ngroup-1, aggregate calls columns ngroup+k (added
 * to b->aggs, shared when equal). A bare column outside any aggregate that
 * is not a group key becomes MAX(column) (SQLite's bare columns). Returns
 * NULL with err set. */
static BExpr *to_agg_scope(BindCtx *bc, BExpr *e) {
    BSelect *b = bc->b;
    if (!e) return NULL;
    if (e->kind == BE_CONST) return e; /* the same in every group */
    for (int k = 0; k < b->ngroup; k++) {
        if (same_group_key(e, b->group[k])) {
            BExpr *c = bx_new(bc->arena, BE_COL, b->group[k]->type, e->pos);
            if (!c) return bind_oom(bc);
            c->slot = 0;
            c->col = k;
            c->scale = bx_scale(b->group[k]);
            c->dict = b->group[k]->dict; /* the key's values are its codes */
            if (e->type == CAT_STRING && e->dict != c->dict) return group_remap(bc, c, e->dict);
            return c;
        }
    }
    if (e->kind == BE_AGG) {
        int idx = -1;
        for (int k = 0; k < b->naggs; k++)
            if (b->aggs[k].agg == e->agg && b->aggs[k].distinct == e->agg_distinct &&
                b->aggs[k].quant == (AggQuant)e->ival && b->aggs[k].q == e->fval &&
                (b->aggs[k].sep == e->ttext ||
                 (b->aggs[k].sep && e->ttext && strcmp(b->aggs[k].sep, e->ttext) == 0)) &&
                plan_bexpr_equal(b->aggs[k].arg, e->a))
                idx = k;
        if (idx < 0) {
            BAgg *na = plan_alloc(bc->arena, sizeof(BAgg) * (size_t)(b->naggs + 1));
            if (!na) return bind_oom(bc);
            if (b->naggs) memcpy(na, b->aggs, sizeof(BAgg) * (size_t)b->naggs);
            na[b->naggs].agg = e->agg;
            na[b->naggs].arg = e->a;
            na[b->naggs].type = e->type;
            na[b->naggs].scale = e->scale;
            na[b->naggs].distinct = e->agg_distinct;
            na[b->naggs].quant = (AggQuant)e->ival;
            na[b->naggs].q = e->fval;
            na[b->naggs].sep = e->ttext;
            b->aggs = na;
            idx = b->naggs++;
        }
        BExpr *c = bx_new(bc->arena, BE_COL, e->type, e->pos);
        if (!c) return bind_oom(bc);
        c->slot = 0;
        c->col = b->ngroup + idx;
        c->scale = e->scale;
        c->dict = e->dict;
        return c;
    }
    if (e->kind == BE_COL) {
        /* SQLite's bare column: a value of some row of the group; gqp takes
         * the group's largest (MAX), the same whenever the column has one
         * value per group (a deviation where it has several: docs/sql.md) */
        BExpr *m = bx_new(bc->arena, BE_AGG, e->type, e->pos);
        if (!m) return bind_oom(bc);
        m->agg = AGG_MAX;
        m->a = e;
        m->scale = bx_scale(e);
        m->dict = e->dict;
        return to_agg_scope(bc, m);
    }
    BExpr *c = plan_alloc(bc->arena, sizeof(BExpr));
    if (!c) return bind_oom(bc);
    *c = *e;
    c->orig = NULL;
    if ((e->a && !(c->a = to_agg_scope(bc, e->a))) || (e->b && !(c->b = to_agg_scope(bc, e->b))) ||
        (e->c && !(c->c = to_agg_scope(bc, e->c)))) {
        /* a distributed CASE whose mixed value is a group key: its
         * branches read what is not grouped; the value itself is (REAL) */
        return e->orig ? to_agg_scope(bc, e->orig) : NULL;
    }
    return c;
}

/* 1 if e contains an aggregate call. */
static int has_agg_call(const BExpr *e) {
    if (!e) return 0;
    if (e->kind == BE_AGG) return 1;
    return has_agg_call(e->a) || has_agg_call(e->b) || has_agg_call(e->c);
}

/* Append e to *list (n entries, room for cap; grown by doubling in the
 * arena). 0, or -1 out of memory. */
static int list_push(BindCtx *bc, BExpr *e, BExpr ***list, int *n, int *cap) {
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        BExpr **nl = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)nc);
        if (!nl) return bind_oom(bc), -1;
        if (*n) memcpy(nl, *list, sizeof(BExpr *) * (size_t)*n);
        *list = nl;
        *cap = nc;
    }
    (*list)[(*n)++] = e;
    return 0;
}

/* Append the operands of e's chain of `op` (AND or OR) to *list (grown in
 * the arena); 0, or -1 out of memory. */
static int flatten_op(BindCtx *bc, BExpr *e, AstOp op, BExpr ***list, int *n, int *cap) {
    if (e->kind == BE_BINARY && e->op == op)
        return flatten_op(bc, e->a, op, list, n, cap) || flatten_op(bc, e->b, op, list, n, cap);
    return list_push(bc, e, list, n, cap);
}

/* 1 if conjuncts x and y are the same condition: structurally equal, or
 * equalities with their sides swapped. */
static int same_conjunct(const BExpr *x, const BExpr *y) {
    if (plan_bexpr_equal(x, y)) return 1;
    return x->kind == BE_BINARY && y->kind == BE_BINARY && x->op == OP_EQ && y->op == OP_EQ &&
           plan_bexpr_equal(x->a, y->b) && plan_bexpr_equal(x->b, y->a);
}

/* The branches of the OR e (*nbr of them), each as its list of conjuncts
 * (*cj)[i][0..(*ncj)[i]) (plan arena). 0, or -1 out of memory. */
static int or_branches(BindCtx *bc, BExpr *e, BExpr ****cj, int **ncj, int *nbr) {
    BExpr **br = NULL;
    int capbr = 0;
    *nbr = 0;
    if (flatten_op(bc, e, OP_OR, &br, nbr, &capbr) != 0) return -1;
    *cj = plan_alloc(bc->arena, sizeof(BExpr **) * (size_t)*nbr);
    *ncj = plan_alloc(bc->arena, sizeof(int) * (size_t)*nbr);
    if (!*cj || !*ncj) return bind_oom(bc), -1;
    for (int i = 0; i < *nbr; i++) {
        int cap = 0;
        (*cj)[i] = NULL;
        (*ncj)[i] = 0;
        if (flatten_op(bc, br[i], OP_AND, &(*cj)[i], &(*ncj)[i], &cap) != 0) return -1;
    }
    return 0;
}

/*
 * Factor the conjuncts common to every branch of the OR e:
 * (A AND x) OR (A AND y) becomes A and (x OR y) (distribution holds in
 * SQL's three-valued logic; a branch left with nothing is TRUE, and then
 * the residual OR is dropped: A OR (A AND y) is A). On return *common
 * holds the factored conjuncts (taken from the first branch) and
 * *residual the remaining OR, or NULL when none is left. When nothing is
 * common, *ncommon is 0 and *residual is e. 0, or -1 out of memory.
 */
static int factor_or(BindCtx *bc, BExpr *e, BExpr ***common, int *ncommon, BExpr **residual) {
    BExpr ***cj;
    int *ncj, nbr;
    *ncommon = 0;
    *residual = e;
    if (or_branches(bc, e, &cj, &ncj, &nbr) != 0) return -1;
    /* used[i][k]: conjunct k of branch i is factored out */
    char **used = plan_alloc(bc->arena, sizeof(char *) * (size_t)nbr);
    if (!used) return bind_oom(bc), -1;
    for (int i = 0; i < nbr; i++)
        if (!(used[i] = plan_alloc(bc->arena, (size_t)ncj[i] + 1)))
            return bind_oom(bc), -1;
        else
            memset(used[i], 0, (size_t)ncj[i] + 1);
    BExpr **com = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)(ncj[0] ? ncj[0] : 1));
    if (!com) return bind_oom(bc), -1;
    int nc = 0;
    for (int k = 0; k < ncj[0]; k++) {
        int in_all = 1;
        int *at = calloc((size_t)nbr, sizeof(int));
        if (!at) return bind_oom(bc), -1;
        for (int i = 1; i < nbr && in_all; i++) {
            at[i] = -1;
            for (int j = 0; j < ncj[i]; j++)
                if (!used[i][j] && same_conjunct(cj[0][k], cj[i][j])) {
                    at[i] = j;
                    break;
                }
            if (at[i] < 0) in_all = 0;
        }
        if (in_all) {
            used[0][k] = 1;
            for (int i = 1; i < nbr; i++)
                used[i][at[i]] = 1;
            com[nc++] = cj[0][k];
        }
        free(at);
    }
    if (nc == 0) return 0;
    /* residual: OR over the branches of the AND of their unused conjuncts */
    BExpr *res = NULL;
    for (int i = 0; i < nbr; i++) {
        BExpr *acc = NULL;
        for (int j = 0; j < ncj[i]; j++) {
            if (used[i][j]) continue;
            acc =
                acc ? bx_bin(bc->arena, OP_AND, CAT_BOOL, acc, cj[i][j], cj[i][j]->pos) : cj[i][j];
            if (!acc) return bind_oom(bc), -1;
        }
        if (!acc) { /* a branch that is all common: the OR is TRUE */
            res = NULL;
            break;
        }
        res = res ? bx_bin(bc->arena, OP_OR, CAT_BOOL, res, acc, e->pos) : acc;
        if (!res) return bind_oom(bc), -1;
    }
    *common = com;
    *ncommon = nc;
    *residual = res;
    return 0;
}

/* Append conjuncts of e (split on AND) to *list; an OR contributes the
 * conjuncts common to all its branches (factor_or) separately. */
static int split_conjuncts(BindCtx *bc, BExpr *e, BExpr ***list, int *n, int *cap) {
    if (e->kind == BE_BINARY && e->op == OP_AND)
        return split_conjuncts(bc, e->a, list, n, cap) || split_conjuncts(bc, e->b, list, n, cap);
    if (e->kind == BE_BINARY && e->op == OP_OR) {
        BExpr **com, *res;
        int nc;
        if (factor_or(bc, e, &com, &nc, &res) != 0) return -1;
        if (nc > 0) {
            for (int k = 0; k < nc; k++)
                if (split_conjuncts(bc, com[k], list, n, cap) != 0) return -1;
            return res ? split_conjuncts(bc, res, list, n, cap) : 0;
        }
    }
    return list_push(bc, e, list, n, cap);
}

/* For an OR conjunct e of WHERE that reads several relations: for each
 * relation r that every branch constrains on its own (conjuncts reading
 * only r), append OR over the branches of those conjuncts -- a condition
 * e implies, which then filters r before the joins (TPC-H q07's
 * (n1 = 'FRANCE' AND n2 = 'GERMANY') OR (n1 = 'GERMANY' AND n2 =
 * 'FRANCE') gives n1 IN both and n2 IN both; q19's branches a part
 * filter), kept when its estimated selectivity is below 0.3. e itself
 * stays. 0, or -1 out of memory. */
static int implied_filters(BindCtx *bc, BExpr *e, BExpr ***list, int *n, int *cap) {
    uint64_t m = bx_rel_mask(e);
    if (e->kind != BE_BINARY || e->op != OP_OR || !m || !(m & (m - 1))) return 0;
    BExpr ***cj;
    int *ncj, nbr;
    if (or_branches(bc, e, &cj, &ncj, &nbr) != 0) return -1;
    for (int r = 0; r < 64; r++) {
        uint64_t rb = (uint64_t)1 << r;
        if (!(m & rb)) continue;
        BExpr *any = NULL;
        int ok = 1;
        for (int i = 0; i < nbr && ok; i++) {
            BExpr *acc = NULL;
            for (int k = 0; k < ncj[i]; k++) {
                if (bx_rel_mask(cj[i][k]) != rb) continue;
                acc = acc ? bx_bin(bc->arena, OP_AND, CAT_BOOL, acc, cj[i][k], e->pos) : cj[i][k];
                if (!acc) return bind_oom(bc), -1;
            }
            if (!acc)
                ok = 0;
            else if (!(any = any ? bx_bin(bc->arena, OP_OR, CAT_BOOL, any, acc, e->pos) : acc))
                return bind_oom(bc), -1;
        }
        /* worth a pass of its own only when it drops most rows */
        if (ok && any && plan_selectivity(any, &bc->b->rels[r]) < 0.3 &&
            split_conjuncts(bc, any, list, n, cap) != 0)
            return -1;
    }
    return 0;
}

/* Index of the relation that reads mask m alone, or -1. */
static int single_rel(uint64_t m) {
    if (m == 0 || (m & (m - 1))) return -1;
    int r = 0;
    while (!(m & 1))
        m >>= 1, r++;
    return r;
}

/* Classify WHERE/ON conjuncts: push single-relation ones to their scan,
 * keep the rest as join predicates (equi-joins recognized). */
static int place_conjuncts(BindCtx *bc, BExpr **conj, int n, int nwhere) {
    BSelect *b = bc->b;
    b->preds = plan_alloc(bc->arena, sizeof(BPred) * (size_t)(n ? n : 1));
    int *nf = calloc((size_t)b->nrels, sizeof(int));
    if (!b->preds || !nf) {
        free(nf);
        return bind_oom(bc), -1;
    }
    for (int r = 0; r < b->nrels; r++) {
        b->rels[r].filters = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)(n ? n : 1));
        if (!b->rels[r].filters) {
            free(nf);
            return bind_oom(bc), -1;
        }
    }
    for (int i = 0; i < n; i++) {
        uint64_t m = bx_rel_mask(conj[i]);
        int r = single_rel(m);
        if (m == 0) r = b->nrels > 1 && b->rels[0].outer && !b->rels[1].full ? 1 : 0;
        if (m == 0 && b->rels[r].outer) r = -1; /* FULL JOIN: after the join */
        /* a WHERE conjunct on a table that a later RIGHT / FULL JOIN pads
         * runs after that join */
        int late = i < nwhere && b->late_where > 0 &&
                   (m == 0 || (m & (((uint64_t)1 << b->late_where) - 1)));
        if (r >= 0 && !b->rels[r].outer && !late) {
            b->rels[r].filters[b->rels[r].nfilters++] = conj[i];
            continue;
        }
        BPred *p = &b->preds[b->npreds++];
        p->expr = conj[i];
        p->rels = m | (late ? (uint64_t)1 << b->late_where : 0);
        BExpr *e = conj[i];
        /* a late conjunct is no join key: the join of its two tables comes
         * before the RIGHT / FULL JOIN that pads them */
        if (!late && e->kind == BE_BINARY && e->op == OP_EQ) {
            int la = single_rel(bx_rel_mask(e->a)), rb = single_rel(bx_rel_mask(e->b));
            if (la >= 0 && rb >= 0 && la != rb) {
                p->is_equi = 1;
                p->lrel = la;
                p->rrel = rb;
                p->lkey = e->a;
                p->rkey = e->b;
            }
        }
    }
    free(nf);
    return 0;
}

/* Mark the outer relations of the FROM list: the table after LEFT JOIN,
 * the first table for a RIGHT JOIN of the first two; a RIGHT or FULL JOIN
 * later in the list marks its table (right / full) and the tables before
 * it (padded); and the SEMI / ANTI JOIN relations that decorrelation
 * appended. Sets b->has_outer, b->has_semi, b->late_where. Returns 0 or
 * -1. */
static int mark_outer(BindCtx *bc) {
    const AstSelect *s = bc->sel;
    BSelect *b = bc->b;
    for (int i = 1; i < s->nfrom; i++) {
        if (s->from[i].join_kind == AST_JOIN_SEMI || s->from[i].join_kind == AST_JOIN_ANTI) {
            b->rels[i].semi = s->from[i].join_kind == AST_JOIN_SEMI ? 1 : 2;
            b->has_semi = 1;
            continue;
        } else if (s->from[i].join_kind == AST_JOIN_LEFT) {
            b->rels[i].outer = 1;
        } else if (s->from[i].join_kind == AST_JOIN_RIGHT && i == 1) {
            b->rels[0].outer = 1;
        } else if (s->from[i].join_kind == AST_JOIN_FULL && i == 1) {
            b->rels[0].outer = b->rels[1].outer = b->rels[1].full = 1;
        } else if (s->from[i].join_kind == AST_JOIN_RIGHT ||
                   s->from[i].join_kind == AST_JOIN_FULL) {
            /* after other joins: the rows so far are the NULL-padded side */
            b->rels[i].outer = 1;
            b->rels[i].full = s->from[i].join_kind == AST_JOIN_FULL;
            b->rels[i].right = s->from[i].join_kind == AST_JOIN_RIGHT;
            for (int j = 0; j < i; j++)
                b->rels[j].padded = 1;
            b->late_where = i;
        } else {
            continue;
        }
        b->has_outer = 1;
    }
    return 0;
}

/* A new AST node (plan arena) of kind k at pos; NULL when out of memory. */
static AstExpr *ast_node(BindCtx *bc, AstKind k, int64_t pos) {
    AstExpr *e = plan_alloc(bc->arena, sizeof(AstExpr));
    if (!e) return NULL;
    memset(e, 0, sizeof *e);
    e->kind = k;
    e->pos = e->end = pos;
    e->height = 1;
    e->weight = 1;
    return e;
}

/* The AST a op b (k AST_BINARY) or the call name(a, b) (k AST_FUNC), with
 * its height and weight; NULL when out of memory. */
static AstExpr *ast_bin(BindCtx *bc, AstKind k, AstOp op, const char *name, AstExpr *a, AstExpr *b,
                        int64_t pos) {
    AstExpr *e = ast_node(bc, k, pos);
    if (!e) return NULL;
    if (k == AST_FUNC) {
        if (!(e->list = plan_alloc(bc->arena, sizeof(AstExpr *) * 2))) return NULL;
        e->list[0] = a;
        e->list[1] = b;
        e->nlist = 2;
        e->str = (char *)name;
    } else {
        e->op = op;
        e->a = a;
        e->b = b;
    }
    e->height = (a->height > b->height ? a->height : b->height) + 1;
    e->weight = a->weight + b->weight + 1;
    return e;
}

/* The AST string literal s (not copied); NULL when out of memory. */
static AstExpr *ast_text(BindCtx *bc, const char *s, int64_t pos) {
    AstExpr *e = ast_node(bc, AST_STRING, pos);
    if (e) e->str = (char *)s;
    return e;
}

/* NATURAL JOIN and JOIN ... USING (cols) of inner and LEFT joins: each
 * named column (NATURAL: each column of the joined table that a table to
 * its left has) equals the same-named column of the first table to its
 * left that has it; the equalities become the join's ON (rels[i].using_on)
 * and the joined table's column is hidden from unqualified names and
 * SELECT *, as SQLite merges them. Returns 0 or -1. */
static int bind_using(BindCtx *bc) {
    const AstSelect *s = bc->sel;
    BSelect *b = bc->b;
    for (int i = 1; i < s->nfrom; i++) {
        const AstTableRef *f = &s->from[i];
        if (!f->natural && !f->nusing) continue;
        int merge = f->join_kind == AST_JOIN_RIGHT || f->join_kind == AST_JOIN_FULL;
        BRel *rel = &b->rels[i];
        const CatTable *t = rel->table;
        rel->hidden = plan_alloc(bc->arena, (size_t)t->ncols + 1);
        if (!rel->hidden) return bind_oom(bc), -1;
        memset(rel->hidden, 0, (size_t)t->ncols + 1);
        int n = f->natural ? t->ncols : f->nusing;
        AstExpr *acc = NULL;
        for (int k = 0; k < n; k++) {
            const char *name = f->natural ? t->cols[k].name : f->using_cols[k];
            int rc = cat_find_column(t, name), l = -1;
            for (int r = 0; r < i && l < 0; r++) {
                int c = cat_find_column(b->rels[r].table, name);
                if (c >= 0 && !(b->rels[r].hidden && b->rels[r].hidden[c])) l = r;
            }
            if (f->natural && l < 0) continue;
            if (rc < 0 || l < 0) {
                bind_fail(bc, "Binder", f->pos,
                          "cannot join using column %s - column not present in both tables", name);
                return -1;
            }
            if (rel->hidden[rc]) continue; /* named twice */
            rel->hidden[rc] = 1;
            BRel *lr = &b->rels[l];
            int lc = cat_find_column(lr->table, name);
            AstExpr *x = ast_node(bc, AST_COLUMN, f->pos), *y = ast_node(bc, AST_COLUMN, f->pos);
            if (!x || !y) return bind_oom(bc), -1;
            x->str = y->str = (char *)name;
            x->table = lr->alias;
            y->table = rel->alias;
            /* a column an earlier RIGHT / FULL JOIN merged: SQLite compares
             * (and merges again) its COALESCE */
            if (lr->merged && lr->merged[lc]) x = lr->merged[lc];
            if (merge) {
                /* the merged column: the left's value, or the joined table's
                 * where the left is padded (RIGHT) or either is (FULL) */
                if (!lr->merged) {
                    lr->merged =
                        plan_alloc(bc->arena, sizeof(AstExpr *) * (size_t)(lr->table->ncols + 1));
                    if (!lr->merged) return bind_oom(bc), -1;
                    memset(lr->merged, 0, sizeof(AstExpr *) * (size_t)(lr->table->ncols + 1));
                }
                if (!(lr->merged[lc] = ast_bin(bc, AST_FUNC, OP_NONE, "coalesce", x, y, f->pos)))
                    return bind_oom(bc), -1;
            }
            AstExpr *eq = ast_bin(bc, AST_BINARY, OP_EQ, NULL, x, y, f->pos);
            if (!eq || (acc && !(eq = ast_bin(bc, AST_BINARY, OP_AND, NULL, acc, eq, f->pos))))
                return bind_oom(bc), -1;
            acc = eq;
        }
        rel->using_on = acc;
    }
    return 0;
}

/* Bind the ON condition of each outer join: conjuncts that read only the
 * outer relation become its filters (they drop right rows before the
 * join, never left rows); the rest are kept in its on[] list for the join
 * to evaluate on the pairs. A conjunct reading a table to the right of
 * the join is an error. Returns 0 or -1. */
static int place_outer_on(BindCtx *bc) {
    const AstSelect *s = bc->sel;
    BSelect *b = bc->b;
    for (int i = 1; i < s->nfrom; i++) {
        int k = s->from[i].join_kind;
        const AstExpr *on = b->rels[i].using_on ? b->rels[i].using_on : s->from[i].join_on;
        if (k == AST_JOIN_INNER || !on) continue;
        int o = k == AST_JOIN_RIGHT && i == 1 ? 0 : i;
        uint64_t allowed = i >= 63 ? ~(uint64_t)0 : (((uint64_t)1 << (i + 1)) - 1);
        BExpr **conj = NULL;
        int nconj = 0, capconj = 0;
        BExpr *w = as_condition(bc, bind_expr(bc, on, 0));
        if (!w || split_conjuncts(bc, w, &conj, &nconj, &capconj) != 0) return -1;
        BRel *rel = &b->rels[o];
        BExpr **f = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)(rel->nfilters + nconj + 1));
        rel->on = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)(nconj + 1));
        if (!f || !rel->on) return bind_oom(bc), -1;
        if (rel->nfilters) memcpy(f, rel->filters, sizeof(BExpr *) * (size_t)rel->nfilters);
        rel->filters = f;
        for (int c = 0; c < nconj; c++) {
            uint64_t m = bx_rel_mask(conj[c]);
            if (m & ~allowed) {
                bind_fail(bc, "Binder", on->pos, "ON clause references tables to its right");
                return -1;
            }
            if (m == ((uint64_t)1 << o) && k != AST_JOIN_FULL && !rel->right)
                rel->filters[rel->nfilters++] = conj[c];
            else
                rel->on[rel->non++] = conj[c];
        }
    }
    return 0;
}

/* Name of output column i: alias, column name, or the expression text. */
static char *out_name(BindCtx *bc, const AstSelectItem *it) {
    if (it->alias) return plan_strdup(bc->arena, it->alias);
    /* a column of a decorrelated subquery's derived table (__gqp_sqN)
     * is named by the subquery's text, as SQLite names the subquery */
    if (it->expr->kind == AST_COLUMN &&
        !(it->expr->table && strncmp(it->expr->table, "__gqp_sq", 8) == 0))
        return plan_strdup(bc->arena, it->expr->str);
    int64_t len = it->expr->end - it->expr->pos;
    if (len <= 0) return plan_strdup(bc->arena, "?");
    char *s = plan_alloc(bc->arena, (size_t)len + 1);
    if (s) memcpy(s, bc->sql + it->expr->pos, (size_t)len);
    return s;
}

/* Integer value of a LIMIT/OFFSET expression, or -1 with an error. */
static int bind_limit(BindCtx *bc, const AstExpr *e, int64_t *out) {
    BExpr *x = bind_expr(bc, e, 0);
    if (!x) return -1;
    CatValue v;
    if (plan_eval_const(x, &v, bc->arena) != 0 || v.kind != CAT_V_INT) {
        bind_fail(bc, "Binder", e->pos, "LIMIT and OFFSET need an integer constant");
        return -1;
    }
    *out = v.i;
    return 0;
}

/* Bind the FROM list: look up tables, check duplicate aliases. */
/* Name of column j of the CatTable ud (plan_unique_name's callback). */
static const char *derived_col_name(const void *ud, int j) {
    return ((const CatTable *)ud)->cols[j].name;
}

/* Estimated rows of bound SELECT b's result (before LIMIT). */
static int64_t est_result_rows(const BSelect *b) {
    if (b->narms > 0) {
        int64_t n = 0;
        for (int i = 0; i < b->narms; i++)
            n += est_result_rows(b->arms[i]);
        return n;
    }
    int64_t n = 1;
    for (int r = 0; r < b->nrels; r++)
        if (!b->rels[r].semi && b->rels[r].est_rows > n) n = b->rels[r].est_rows;
    if (b->has_agg) n = b->ngroup == 0 ? 1 : (b->est_groups > 0 ? b->est_groups : n / 10 + 1);
    if (b->limit >= 0 && b->limit < n) n = b->limit;
    return n;
}

/* FROM entry i, a derived table: bind its SELECT (with the same catalog,
 * text and arena) and describe its result as the relation's table:
 * columns named as SQLite names a subquery's (a repeated name gets ":1",
 * ...), typed and with the dictionaries of the select list. A STRING
 * column made at run time (no dictionary at bind time) cannot be planned
 * inline: the error asks libgqp to materialize (stage "Materialize").
 * Returns 0 or -1. */
static int bind_derived(BindCtx *bc, int i) {
    const AstTableRef *f = &bc->sel->from[i];
    BSelect *sub = NULL;
    if (plan_bind_select(bc->cat, bc->sql, f->subquery, bc->arena, &sub, bc->err) != 0) return -1;
    int nc = sub->nout;
    if (f->colnames && f->ncolnames != nc) {
        bind_fail(bc, "Binder", f->pos, "expected %d columns for '%s' but got %d", f->ncolnames,
                  f->alias ? f->alias : "(subquery)", nc);
        return -1;
    }
    CatTable *t = plan_alloc(bc->arena, sizeof *t);
    if (!t || !(t->cols = plan_alloc(bc->arena, sizeof(CatColumn) * (size_t)(nc ? nc : 1))))
        return bind_oom(bc), -1;
    t->name = plan_strdup(bc->arena, f->alias ? f->alias : "(subquery)");
    t->ncols = nc;
    t->nrows = est_result_rows(sub);
    for (int c = 0; c < nc; c++) {
        const BExpr *o = sub->narms > 0 ? sub->arms[0]->out[c] : sub->out[c];
        CatColumn *col = &t->cols[c];
        col->type = o->type == CAT_NULL ? CAT_INT64 : o->type;
        col->dict = (CatDict *)o->dict;
        if (col->type == CAT_DECIMAL) {
            col->scale = bx_scale(o);
            col->prec = 18;
        }
        col->n = t->nrows;
        col->stats.rows = t->nrows;
        col->stats.distinct = t->nrows;
        if (col->type == CAT_STRING && !col->dict) {
            bind_fail(bc, "Materialize", f->pos, "a derived table's text made at run time");
            return -1;
        }
        const char *base = f->colnames         ? f->colnames[c]
                           : sub->out_names[c] ? sub->out_names[c]
                                               : "?";
        size_t len = strlen(base) + 16;
        if (!(col->name = plan_alloc(bc->arena, len))) return bind_oom(bc), -1;
        plan_unique_name(col->name, len, base, c, derived_col_name, t);
    }
    bc->b->rels[i].table = t;
    bc->b->rels[i].sub = sub;
    bc->b->has_sub = 1;
    return 0;
}

static int bind_from(BindCtx *bc) {
    const AstSelect *s = bc->sel;
    BSelect *b = bc->b;
    if (s->nfrom > 64) {
        bind_fail(bc, "Not implemented", s->from[64].pos, "more than 64 tables in FROM");
        return -1;
    }
    b->nrels = s->nfrom;
    b->rels = plan_alloc(bc->arena, sizeof(BRel) * (size_t)(s->nfrom ? s->nfrom : 1));
    if (!b->rels) return bind_oom(bc), -1;
    for (int i = 0; i < s->nfrom; i++) {
        CatTable *t = NULL;
        if (s->from[i].subquery && !s->from[i].bound_name) {
            if (bind_derived(bc, i) != 0) return -1;
            t = b->rels[i].table;
        } else {
            t = cat_find_table(bc->cat,
                               s->from[i].bound_name ? s->from[i].bound_name : s->from[i].name);
            if (!t) {
                bind_fail(bc, "Catalog", s->from[i].pos, "Table with name %s does not exist!",
                          s->from[i].name);
                return -1;
            }
            if (cat_table_ready(t) != 0) return bind_oom(bc), -1; /* rows INSERTed: sort, stats */
        }
        b->rels[i].table = t;
        b->rels[i].alias = plan_strdup(bc->arena, s->from[i].alias ? s->from[i].alias : t->name);
        if (s->from[i].hidden) { /* a decorrelated subquery: qualified names only */
            b->rels[i].hidden = plan_alloc(bc->arena, (size_t)t->ncols + 1);
            if (!b->rels[i].hidden) return bind_oom(bc), -1;
            memset(b->rels[i].hidden, 1, (size_t)t->ncols + 1);
        }
        for (int j = 0; j < i; j++)
            if (strcasecmp(b->rels[j].alias, b->rels[i].alias) == 0) {
                bind_fail(bc, "Binder", s->from[i].pos, "duplicate alias \"%s\" in FROM",
                          b->rels[i].alias);
                return -1;
            }
    }
    return 0;
}

/* Bind the select list, expanding * and t.*. Items are bound in the FROM
 * scope (aggregates allowed); the caller moves them to the agg scope. */
static int bind_items(BindCtx *bc, BExpr ***items, char ***names, int *n) {
    const AstSelect *s = bc->sel;
    BSelect *b = bc->b;
    int cap = 0;
    for (int i = 0; i < s->nitems; i++) {
        const AstExpr *e = s->items[i].expr;
        if (e->kind == AST_STAR) {
            int any = 0;
            for (int r = 0; r < b->nrels; r++)
                if (!e->table || strcasecmp(e->table, b->rels[r].alias) == 0)
                    cap += b->rels[r].table->ncols, any = 1;
            if (!any && e->table) {
                bind_fail(bc, "Binder", e->pos, "referenced table \"%s\" not found", e->table);
                return -1;
            }
            if (!any) {
                bind_fail(bc, "Binder", e->pos, "SELECT * with no tables specified is not valid");
                return -1;
            }
        } else {
            cap++;
        }
    }
    *items = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)(cap ? cap : 1));
    *names = plan_alloc(bc->arena, sizeof(char *) * (size_t)(cap ? cap : 1));
    bc->item_pos = plan_alloc(bc->arena, sizeof(int) * (size_t)(s->nitems ? s->nitems : 1));
    if (!*items || !*names || !bc->item_pos) return bind_oom(bc), -1;
    *n = 0;
    for (int i = 0; i < s->nitems; i++) {
        const AstExpr *e = s->items[i].expr;
        bc->item_pos[i] = *n; /* a * item starts its columns here */
        if (e->kind == AST_STAR) {
            for (int r = 0; r < b->nrels; r++) {
                if (e->table && strcasecmp(e->table, b->rels[r].alias) != 0) continue;
                if (b->rels[r].semi) continue;
                for (int c = 0; c < b->rels[r].table->ncols; c++) {
                    if (!e->table && b->rels[r].hidden && b->rels[r].hidden[c]) continue;
                    if (b->rels[r].merged && b->rels[r].merged[c]) { /* also a.*, as SQLite */
                        BExpr *m = bind_expr(bc, b->rels[r].merged[c], 0);
                        if (!m) return -1;
                        (*items)[*n] = m;
                        (*names)[(*n)++] = plan_strdup(bc->arena, b->rels[r].table->cols[c].name);
                        continue;
                    }
                    CatError cerr;
                    if (cat_column_use(b->rels[r].table, c, &cerr) != 0)
                        return bind_fail(bc, "Catalog", e->pos, "%s", cerr.msg), -1;
                    const CatColumn *col = &b->rels[r].table->cols[c];
                    BExpr *x = bx_new(bc->arena, BE_COL, col->type, e->pos);
                    if (!x) return bind_oom(bc), -1;
                    x->slot = r;
                    x->col = c;
                    x->dict = col->dict;
                    x->prec = col->prec;
                    x->scale = col->scale;
                    (*items)[*n] = x;
                    (*names)[(*n)++] = plan_strdup(bc->arena, col->name);
                }
            }
            continue;
        }
        BExpr *x = bind_expr(bc, e, 1);
        if (!x) return -1;
        if (x->type == CAT_NULL) x->type = CAT_INT64;
        (*items)[*n] = x;
        (*names)[(*n)++] = out_name(bc, &s->items[i]);
    }
    return 0;
}

/* Find the select item an ORDER BY / GROUP BY term names: a 1-based
 * position or an alias. Returns the index, -1 if it names none, -2 on error.
 * As in SQLite, an integer is a position only when it fits 32 bits
 * (sqlite3ExprIsInteger); a larger one is a constant expression. */
static int item_ref(BindCtx *bc, const AstExpr *e, char **names, int n, int by_alias) {
    /* (a literal that was a scalar subquery, e->select set, is an
     * expression: GROUP BY (SELECT 2) is not GROUP BY 2, as in SQLite) */
    if (e->kind == AST_INT && !e->select && e->ival <= INT32_MAX) {
        if (e->ival < 1 || e->ival > n) {
            bind_fail(bc, "Binder", e->pos, "term out of range - should be between 1 and %d", n);
            return -2;
        }
        return (int)e->ival - 1;
    }
    if (by_alias && e->kind == AST_COLUMN && !e->table) {
        for (int i = 0; i < bc->sel->nitems; i++)
            if (bc->sel->items[i].alias && strcasecmp(bc->sel->items[i].alias, e->str) == 0 &&
                bc->item_pos[i] < n)
                return bc->item_pos[i];
    }
    return -1;
}

/* 1 if e names a column of some FROM relation (GROUP BY prefers those to
 * select-list aliases, as SQLite does). */
static int is_from_column(BindCtx *bc, const AstExpr *e) {
    if (e->kind != AST_COLUMN || e->table) return 0;
    for (int r = 0; r < bc->b->nrels; r++)
        if (cat_find_column(bc->b->rels[r].table, e->str) >= 0) return 1;
    return 0;
}

/* SQLite's name of compound operator op (AstSetOp). */
static const char *setop_name(int op) {
    static const char *const n[] = {"UNION", "UNION ALL", "INTERSECT", "EXCEPT"};
    return op >= 0 && op < 4 ? n[op] : "UNION";
}

/* SQLite's ordinal of a 0-based ORDER BY term ("1st", "2nd", ...) into buf. */
static const char *ordinal(int i, char *buf, size_t cap) {
    int n = i + 1, t = n % 100;
    const char *suf = t >= 11 && t <= 13 ? "th"
                      : n % 10 == 1      ? "st"
                      : n % 10 == 2      ? "nd"
                      : n % 10 == 3      ? "rd"
                                         : "th";
    snprintf(buf, cap, "%d%s", n, suf);
    return buf;
}

/* Each ORDER BY term of b whose NULLs go against its direction gets a key
 * before it, `<term> IS NULL` in the same direction (ASC: the non-NULL
 * rows first; DESC: the NULL rows first), evaluated over the rows like
 * any key that is not an output column. Returns 0 or -1 (an error). */
static int nulls_keys(BindCtx *bc, const AstSelect *sel, BSelect *b) {
    int extra = 0;
    for (int i = 0; i < sel->norder; i++)
        extra += sel->order_by[i].nulls_flip;
    if (!extra) return 0;
    /* with SELECT DISTINCT or on a compound the added key `term IS NULL`
     * is computed from the term's output column after DISTINCT / the set
     * operation (operators/sort.c) */
    int n = b->norder + extra;
    BExpr **order = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)n);
    uint8_t *desc = plan_alloc(bc->arena, (size_t)n);
    int *out = plan_alloc(bc->arena, sizeof(int) * (size_t)n);
    if (!order || !desc || !out) return bind_oom(bc), -1;
    int j = 0;
    for (int i = 0; i < b->norder; i++) {
        if (sel->order_by[i].nulls_flip) {
            BExpr *isn = bx_new(bc->arena, BE_ISNULL, CAT_BOOL, sel->order_by[i].expr->pos);
            if (!isn) return bind_oom(bc), -1;
            isn->a = b->order[i];
            order[j] = isn;
            desc[j] = b->order_desc[i];
            out[j++] = -1;
        }
        order[j] = b->order[i];
        desc[j] = b->order_desc[i];
        out[j++] = b->order_out[i];
    }
    b->order = order;
    b->order_desc = desc;
    b->order_out = out;
    b->norder = n;
    return 0;
}

/* Give column c of every arm of compound b one type (and one dictionary),
 * as CASE branches get (unify_branches): INT meeting REAL becomes REAL,
 * strings share the union of their dictionaries, NULL constants adopt the
 * column's type. STRING meeting a number is an error (SQLite would keep
 * each value's own type). Returns 0 or -1 with an error. */
static int unify_arm_column(BindCtx *bc, BSelect *b, int c) {
    int n = b->narms;
    BExpr **br = plan_alloc(bc->arena, sizeof(BExpr *) * (size_t)n);
    if (!br) return bind_oom(bc), -1;
    int any_str = 0, any_num = 0;
    for (int i = 0; i < n; i++) {
        br[i] = b->arms[i]->out[c];
        if (runtime_text(br[i])) {
            /* libgqp runs every arm into a temporary table first (stage
             * "MaterializeArms"), where the text gets its dictionary */
            runtime_text_fail_as(bc, br[i], "a compound SELECT (UNION/INTERSECT/EXCEPT) column of",
                                 "MaterializeArms");
            return -1;
        }
        if (br[i]->kind == BE_CONST && br[i]->is_null) {
            /* the select list typed a bare NULL as INTEGER; here it adopts
             * the column's type */
            BExpr *x = bx_null(bc->arena, CAT_NULL, br[i]->pos);
            if (!x) return bind_oom(bc), -1;
            br[i] = x;
            continue;
        }
        if (br[i]->type == CAT_STRING)
            any_str = 1;
        else if (br[i]->type != CAT_DATE)
            any_num = 1;
    }
    if (any_str && any_num) {
        bind_fail(bc, "Binder", b->arms[0]->out[c]->pos,
                  "column %d of the compound SELECT mixes STRING and numeric values", c + 1);
        return -1;
    }
    CatType t;
    if (unify_branches(bc, br, n, &t) != 0) return -1;
    for (int i = 0; i < n; i++) {
        if (t == CAT_NULL) br[i]->type = CAT_INT64; /* all NULL: INTEGER, as a lone NULL */
        b->arms[i]->out[c] = br[i];
    }
    return 0;
}

/* The output column of compound b that ORDER BY term e (neither a
 * position nor a name) equals: e bound in the scope of each arm without
 * aggregates in turn (SQLite resolves a term such as `t2.b` or `a + b` so)
 * and compared with that arm's output expressions as bound before the
 * columns were unified (orig[arm][col]). Returns the column or -1; a term
 * that does not bind in some arm is not an error here. */
static int compound_order_expr(BindCtx *bc, const BSelect *b, BExpr ***orig, const AstExpr *e) {
    PlanError saved = *bc->err;
    int found = -1;
    for (int i = 0; i < b->narms && found < 0; i++) {
        BSelect *arm = b->arms[i];
        if (arm->has_agg) continue;
        BindCtx abc = {bc->cat, bc->sql, bc->arena, bc->err, arm, NULL, 0, NULL};
        BExpr *x = bind_expr(&abc, e, 0);
        if (!x) continue;
        for (int c = 0; c < b->nout && found < 0; c++)
            if (plan_bexpr_equal(x, orig[i][c])) found = c;
    }
    *bc->err = saved;
    return found;
}

/* Bind compound SELECT sel (sel->ncompound > 0): each core on its own, the
 * column counts checked, the columns unified across arms, then the ORDER BY
 * (positions or names of some arm's output columns, as SQLite resolves
 * them) and LIMIT / OFFSET of the compound. Returns 0 or -1 with err. */
static int bind_compound(const Catalog *cat, const char *sql, const AstSelect *sel,
                         PlanArena *arena, BSelect **out, PlanError *err) {
    BindCtx bc = {cat, sql, arena, err, NULL, sel, 0, NULL};
    BSelect *b = plan_alloc(arena, sizeof(BSelect));
    if (!b) return bind_oom(&bc), -1;
    b->limit = -1;
    bc.b = b;
    b->narms = sel->ncompound + 1;
    b->arms = plan_alloc(arena, sizeof(BSelect *) * (size_t)b->narms);
    b->arm_op = plan_alloc(arena, (size_t)b->narms);
    if (!b->arms || !b->arm_op) return bind_oom(&bc), -1;
    for (int i = 0; i < b->narms; i++) {
        AstSelect core = i == 0 ? *sel : *sel->compound[i - 1].select;
        core.compound = NULL;
        core.ncompound = 0;
        core.order_by = NULL;
        core.norder = 0;
        core.limit = core.offset = NULL;
        if (plan_bind_select(cat, sql, &core, arena, &b->arms[i], err) != 0) return -1;
        if (i > 0) {
            b->arm_op[i] = (uint8_t)sel->compound[i - 1].op;
            if (b->arms[i]->nout != b->arms[0]->nout) {
                bind_fail(&bc, "Binder", sel->compound[i - 1].pos,
                          "SELECTs to the left and right of %s do not have the same number of "
                          "result columns",
                          setop_name(b->arm_op[i]));
                return -1;
            }
        }
    }
    b->nout = b->arms[0]->nout;
    b->out_names = b->arms[0]->out_names;
    /* the output expressions as bound, for ORDER BY terms that name them */
    BExpr ***orig = plan_alloc(arena, sizeof(BExpr **) * (size_t)b->narms);
    if (!orig) return bind_oom(&bc), -1;
    for (int i = 0; i < b->narms; i++) {
        orig[i] = plan_alloc(arena, sizeof(BExpr *) * (size_t)(b->nout ? b->nout : 1));
        if (!orig[i]) return bind_oom(&bc), -1;
        memcpy(orig[i], b->arms[i]->out, sizeof(BExpr *) * (size_t)b->nout);
    }
    for (int c = 0; c < b->nout; c++)
        if (unify_arm_column(&bc, b, c) != 0) return -1;
    b->out = b->arms[0]->out;
    if (sel->norder) {
        b->norder = sel->norder;
        b->order = plan_alloc(arena, sizeof(BExpr *) * (size_t)sel->norder);
        b->order_desc = plan_alloc(arena, (size_t)sel->norder);
        b->order_out = plan_alloc(arena, sizeof(int) * (size_t)sel->norder);
        if (!b->order || !b->order_desc || !b->order_out) return bind_oom(&bc), -1;
        for (int k = 0; k < sel->norder; k++) {
            const AstExpr *oe = sel->order_by[k].expr;
            char ord[16];
            int r = -1;
            if (oe->kind == AST_INT && !oe->select) {
                if (oe->ival < 1 || oe->ival > b->nout) {
                    bind_fail(&bc, "Binder", oe->pos,
                              "%s ORDER BY term out of range - should be between 1 and %d",
                              ordinal(k, ord, sizeof ord), b->nout);
                    return -1;
                }
                r = (int)oe->ival - 1;
            } else if (oe->kind == AST_COLUMN && !oe->table) {
                for (int i = 0; i < b->narms && r < 0; i++)
                    for (int c = 0; c < b->nout && r < 0; c++)
                        if (b->arms[i]->out_names[c] &&
                            strcasecmp(b->arms[i]->out_names[c], oe->str) == 0)
                            r = c;
            }
            if (r < 0 && oe->kind != AST_INT) r = compound_order_expr(&bc, b, orig, oe);
            if (r < 0) {
                bind_fail(&bc, "Binder", oe->pos,
                          "%s ORDER BY term does not match any column in the result set",
                          ordinal(k, ord, sizeof ord));
                return -1;
            }
            b->order_out[k] = r;
            b->order_desc[k] = (uint8_t)sel->order_by[k].desc;
            b->order[k] = b->out[r];
        }
        if (nulls_keys(&bc, sel, b) != 0) return -1;
    }
    if (sel->limit && bind_limit(&bc, sel->limit, &b->limit) != 0) return -1;
    if (sel->offset && bind_limit(&bc, sel->offset, &b->offset) != 0) return -1;
    if (b->limit < -1) b->limit = -1;
    if (b->offset < 0) b->offset = 0;
    *out = b;
    return 0;
}

int plan_bind_select(const Catalog *cat, const char *sql, const AstSelect *sel, PlanArena *arena,
                     BSelect **out, PlanError *err) {
    BindCtx bc = {cat, sql, arena, err, NULL, sel, 0, NULL};
    err->offset = -1;
    if (sel->ncompound > 0) return bind_compound(cat, sql, sel, arena, out, err);
    BSelect *b = plan_alloc(arena, sizeof(BSelect));
    if (!b) return bind_oom(&bc), -1;
    bc.b = b;
    b->limit = -1;
    if (bind_from(&bc) != 0) return -1;

    /* WHERE and ON conjuncts (after USING / NATURAL merged their columns,
     * so that an unqualified name of one is no longer ambiguous there) */
    BExpr **conj = NULL;
    int nconj = 0, capconj = 0;
    if (mark_outer(&bc) != 0 || bind_using(&bc) != 0) return -1;
    if (sel->where) {
        BExpr *w = as_condition(&bc, bind_expr(&bc, sel->where, 0));
        if (!w || split_conjuncts(&bc, w, &conj, &nconj, &capconj) != 0) return -1;
    }
    if (!b->has_outer)
        for (int i = 0, nw = nconj; i < nw; i++)
            if (implied_filters(&bc, conj[i], &conj, &nconj, &capconj) != 0) return -1;
    int nwhere = nconj;
    for (int i = 0; i < sel->nfrom; i++) {
        const AstExpr *on = b->rels[i].using_on ? b->rels[i].using_on : sel->from[i].join_on;
        if (!on || sel->from[i].join_kind != AST_JOIN_INNER) continue;
        BExpr *w = as_condition(&bc, bind_expr(&bc, on, 0));
        if (!w || split_conjuncts(&bc, w, &conj, &nconj, &capconj) != 0) return -1;
    }
    if (b->nrels == 0 && nconj > 0) {
        /* SELECT without FROM: a WHERE is a constant condition */
        bind_fail(&bc, "Not implemented", sel->where->pos, "WHERE without FROM");
        return -1;
    }
    if (place_conjuncts(&bc, conj, nconj, nwhere) != 0) return -1;
    if (place_outer_on(&bc) != 0) return -1;

    /* select list */
    BExpr **items;
    char **names;
    int nitems;
    if (bind_items(&bc, &items, &names, &nitems) != 0) return -1;
    b->nout = nitems;
    b->out_names = names;

    /* GROUP BY */
    if (sel->ngroup) {
        b->group = plan_alloc(arena, sizeof(BExpr *) * (size_t)sel->ngroup);
        if (!b->group) return bind_oom(&bc), -1;
        for (int i = 0; i < sel->ngroup; i++) {
            int r = item_ref(&bc, sel->group_by[i], names, nitems,
                             !is_from_column(&bc, sel->group_by[i]));
            if (r == -2) return -1;
            BExpr *g = r >= 0 ? items[r] : bind_expr(&bc, sel->group_by[i], 0);
            if (!g) return -1;
            if (runtime_text(g)) {
                bind_fail(&bc, "Not implemented", sel->group_by[i]->pos,
                          "GROUP BY a CAST to a string type");
                return -1;
            }
            if (has_agg_call(g)) {
                bind_fail(&bc, "Binder", sel->group_by[i]->pos,
                          "aggregate functions are not allowed in GROUP BY");
                return -1;
            }
            if (g->type == CAT_NULL) g->type = CAT_INT64; /* typed as a select item is */
            b->group[b->ngroup++] = g;
        }
    }
    int any_agg = sel->ngroup > 0;
    for (int i = 0; i < nitems; i++)
        any_agg |= has_agg_call(items[i]);
    BExpr *having = NULL;
    if (sel->having) {
        having = as_condition(&bc, bind_expr(&bc, sel->having, 1));
        if (!having) return -1;
        any_agg = 1;
    }
    /* ORDER BY terms bound in the FROM scope first */
    BExpr **order = NULL;
    if (sel->norder) {
        order = plan_alloc(arena, sizeof(BExpr *) * (size_t)sel->norder);
        b->order_desc = plan_alloc(arena, (size_t)sel->norder);
        b->order_out = plan_alloc(arena, sizeof(int) * (size_t)sel->norder);
        if (!order || !b->order_desc || !b->order_out) return bind_oom(&bc), -1;
        for (int i = 0; i < sel->norder; i++) {
            const AstExpr *oe = sel->order_by[i].expr;
            b->order_desc[i] = (uint8_t)sel->order_by[i].desc;
            int r = item_ref(&bc, oe, names, nitems, 1);
            if (r == -2) return -1;
            b->order_out[i] = r;
            if (r >= 0) {
                order[i] = items[r];
                continue;
            }
            order[i] = bind_expr(&bc, oe, 1);
            if (!order[i]) return -1;
            any_agg |= has_agg_call(order[i]);
        }
    }
    b->has_agg = any_agg;
    if (any_agg) {
        for (int i = 0; i < nitems; i++)
            if (!(items[i] = to_agg_scope(&bc, items[i]))) return -1;
        if (having && !(having = to_agg_scope(&bc, having))) return -1;
        for (int i = 0; i < sel->norder; i++)
            if (!(order[i] = to_agg_scope(&bc, order[i]))) return -1;
    }
    b->out = items;
    b->having = having;
    b->norder = sel->norder;
    b->order = order;
    for (int i = 0; i < b->norder; i++) {
        if (b->order_out[i] >= 0) continue;
        for (int k = 0; k < b->nout; k++)
            if (plan_bexpr_equal(order[i], items[k])) {
                b->order_out[i] = k;
                break;
            }
    }
    b->distinct = sel->distinct;
    if (b->distinct)
        for (int i = 0; i < b->norder; i++)
            if (b->order_out[i] < 0) {
                bind_fail(&bc, "Binder", sel->order_by[i].expr->pos,
                          "for SELECT DISTINCT, ORDER BY expressions must appear in select list");
                return -1;
            }
    if (nulls_keys(&bc, sel, b) != 0) return -1;
    if (sel->limit && bind_limit(&bc, sel->limit, &b->limit) != 0) return -1;
    if (sel->offset && bind_limit(&bc, sel->offset, &b->offset) != 0) return -1;
    if (b->limit < -1) b->limit = -1; /* SQLite: negative LIMIT = no limit */
    if (b->offset < 0) b->offset = 0;
    if (sel->rank_keys > 0) {
        /* the row number of decorrelation's ranked derived table: its
         * partition keys are output columns, no LIMIT / DISTINCT */
        if (sel->rank_keys > b->norder || b->limit >= 0 || b->offset > 0 || b->distinct ||
            b->nout < 1) {
            bind_fail(&bc, "Binder", -1, "internal: a ranked SELECT of the wrong shape");
            return -1;
        }
        for (int i = 0; i < sel->rank_keys; i++)
            if (b->order_out[i] < 0) {
                bind_fail(&bc, "Binder", -1, "internal: a rank key is not an output column");
                return -1;
            }
        b->rank_keys = sel->rank_keys;
    }
    b->join_order = plan_alloc(arena, sizeof(int) * (size_t)(b->nrels ? b->nrels : 1));
    if (!b->join_order) return bind_oom(&bc), -1;
    plan_rewrite(b);
    *out = b;
    return 0;
}

int plan_bind_const(const char *sql, const AstExpr *ast, PlanArena *arena, BExpr **out,
                    PlanError *err) {
    BSelect empty;
    memset(&empty, 0, sizeof empty);
    BindCtx bc = {NULL, sql, arena, err, &empty, NULL, 0, NULL};
    err->offset = -1;
    *out = bind_expr(&bc, ast, 0);
    return *out ? 0 : -1;
}
