/*
 * bexpr.c -- bound expression helpers: constructors, structural equality,
 * string dictionary unification, constant evaluation and selectivity
 * estimates from catalog statistics.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/bexpr.h"

/* New bound node of kind k and type t in the arena; NULL when out of memory. */
BExpr *bx_new(PlanArena *a, BExprKind k, CatType t, int64_t pos) {
    BExpr *e = plan_alloc(a, sizeof(BExpr));
    if (!e) return NULL;
    e->kind = k;
    e->type = t;
    e->pos = pos;
    e->slot = -1;
    e->col = -1;
    return e;
}

/* Integer constant. */
BExpr *bx_int(PlanArena *a, CatType t, int64_t v, int64_t pos) {
    BExpr *e = bx_new(a, BE_CONST, t, pos);
    if (e) e->ival = v;
    return e;
}

/* Float constant (FLOAT64). */
BExpr *bx_float(PlanArena *a, double v, int64_t pos) {
    BExpr *e = bx_new(a, BE_CONST, CAT_FLOAT64, pos);
    if (e) e->fval = v;
    return e;
}

/* NULL constant of type t. */
BExpr *bx_null(PlanArena *a, CatType t, int64_t pos) {
    BExpr *e = bx_new(a, BE_CONST, t, pos);
    if (e) e->is_null = 1;
    return e;
}

/* Binary node op(x, y) of result type t. */
BExpr *bx_bin(PlanArena *a, AstOp op, CatType t, BExpr *x, BExpr *y, int64_t pos) {
    BExpr *e = bx_new(a, BE_BINARY, t, pos);
    if (!e) return NULL;
    e->op = op;
    e->a = x;
    e->b = y;
    return e;
}

/* 1 if t is computed in float registers. */
int bx_is_float(CatType t) {
    return t == CAT_FLOAT32 || t == CAT_FLOAT64;
}

/* 1 if t is a number (or NULL, which adapts). */
int bx_is_numeric(CatType t) {
    return t == CAT_INT32 || t == CAT_INT64 || t == CAT_FLOAT32 || t == CAT_FLOAT64 ||
           t == CAT_BOOL || t == CAT_DATE || t == CAT_NULL || t == CAT_DECIMAL;
}

/* Scale of a DECIMAL-typed e (0 for other types). Nodes that pass a value
 * through (CASE and COALESCE, whose branches the binder rescaled to one
 * scale, unary minus, a cast between DECIMALs) take it from their
 * operands, so that the nodes built by generic code need not set it; every
 * other node carries its own (columns, constants, arithmetic, aggregates). */
int bx_scale(const BExpr *e) {
    if (!e || e->type != CAT_DECIMAL) return 0;
    int a, b;
    switch (e->kind) {
    case BE_CASE:
        a = bx_scale(e->b), b = bx_scale(e->c);
        return a > b ? a : b;
    case BE_COALESCE:
        a = bx_scale(e->a), b = bx_scale(e->b);
        return a > b ? a : b;
    case BE_UNARY:
        return bx_scale(e->a);
    case BE_CAST:
        return e->a && e->a->type == CAT_DECIMAL ? bx_scale(e->a) : e->scale;
    default:
        return e->scale;
    }
}

int bx_same_text(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* 1 if lookup x reads a pair index (funcs.c): (CAST(a) * n) + CAST(b) of
 * two STRING operands a and b. */
static int pair_lookup_ops(const BExpr *x) {
    const BExpr *i = x->a;
    return i && i->kind == BE_BINARY && i->op == OP_ADD && i->a->kind == BE_BINARY &&
           i->a->op == OP_MUL && i->a->a->kind == BE_CAST && i->b->kind == BE_CAST &&
           i->a->a->a->type == CAT_STRING && i->b->a->type == CAT_STRING;
}

/* 1 if lookup x reads a value index (funcs.c fn_map_text): CAST(d) - lo
 * of a DATE or integer d. */
static int date_lookup_ops(const BExpr *x) {
    const BExpr *i = x->a;
    return i && i->kind == BE_BINARY && i->op == OP_SUB && i->a->kind == BE_CAST &&
           i->b->kind == BE_CONST &&
           (i->a->a->type == CAT_DATE || i->a->a->type == CAT_INT32 || i->a->a->type == CAT_INT64);
}

/* 1 if dictionaries a and b hold the same strings (so the same codes). */
static int same_dict(const CatDict *a, const CatDict *b) {
    if (a == b) return 1;
    if (!a || !b || a->n != b->n) return 0;
    for (int64_t i = 0; i < a->n; i++)
        if (cat_dict_len(a, i) != cat_dict_len(b, i) ||
            memcmp(cat_dict_str(a, i), cat_dict_str(b, i), (size_t)cat_dict_len(a, i)) != 0)
            return 0;
    return 1;
}

/* Operand k (0: left, 1: right) of a pair lookup. */
static const BExpr *pair_op(const BExpr *x, int k) {
    return k == 0 ? x->a->a->a->a : x->a->b->a;
}

/*
 * 1 if the lookups x and y, whose children are equal expressions, compute
 * the same function of the child's text. The tables are per-binding
 * artefacts (each binding of `s = 'ab'` builds its own merged dictionary),
 * so when the dictionaries differ the comparison goes through the strings:
 * for each string of x's child dictionary that y's child dictionary also
 * holds (equal children produce only such strings), the two results must
 * be equal -- as text for a STRING result, as numbers otherwise.
 */
static int lookup_equal(const BExpr *x, const BExpr *y) {
    const CatDict *xa = x->a ? x->a->dict : NULL, *ya = y->a ? y->a->dict : NULL;
    if (x->table_n == y->table_n && x->dict == y->dict && xa == ya &&
        memcmp(x->table, y->table, (size_t)x->table_n * sizeof(int64_t)) == 0)
        return 1;
    int pair = pair_lookup_ops(x) && pair_lookup_ops(y);
    if (pair || (date_lookup_ops(x) && date_lookup_ops(y))) {
        /* a lookup over the pairs of two operands' codes (fn_concat_pairs,
         * fn_like_pairs) or over the days of a DATE range (fn_map_text):
         * equal when the operands carry the same dictionaries and the
         * entries agree (STRING ones as text; INT64_MIN is NULL) */
        if ((pair && (!same_dict(pair_op(x, 0)->dict, pair_op(y, 0)->dict) ||
                      !same_dict(pair_op(x, 1)->dict, pair_op(y, 1)->dict))) ||
            x->table_n != y->table_n || (x->type == CAT_STRING && (!x->dict || !y->dict)))
            return 0;
        for (int64_t i = 0; i < x->table_n; i++) {
            int64_t u = x->table[i], v = y->table[i];
            if (u == INT64_MIN || v == INT64_MIN || x->type != CAT_STRING) {
                if (u != v) return 0;
            } else if (strcmp(cat_dict_str(x->dict, u), cat_dict_str(y->dict, v)) != 0) {
                return 0;
            }
        }
        return 1;
    }
    if (!xa || !ya || xa->n != x->table_n || ya->n != y->table_n) return 0;
    int str = x->type == CAT_STRING;
    if (str && (!x->dict || !y->dict)) return 0;
    for (int64_t i = 0; i < x->table_n; i++) {
        int64_t j =
            xa == ya ? i : cat_dict_find(ya, cat_dict_str(xa, i), (size_t)cat_dict_len(xa, i));
        if (j < 0) continue;
        int64_t u = x->table[i], v = y->table[j];
        if (!str || u == INT64_MIN || v == INT64_MIN) {
            if (u != v) return 0;
        } else if (strcmp(cat_dict_str(x->dict, u), cat_dict_str(y->dict, v)) != 0) {
            return 0;
        }
    }
    return 1;
}

/* Structural equality over the SQL: same kinds, types, operators,
 * constants, columns and children; string constants and lookups compare
 * by text, not by the codes of their (per-binding) dictionaries. */
int plan_bexpr_equal(const BExpr *x, const BExpr *y) {
    if (x == y) return 1;
    if (!x || !y) return 0;
    if (x->kind != y->kind || x->type != y->type || x->op != y->op || x->negated != y->negated)
        return 0;
    if (x->type == CAT_DECIMAL && bx_scale(x) != bx_scale(y)) return 0;
    switch (x->kind) {
    case BE_CONST:
        if (x->is_null != y->is_null) return 0;
        if (x->is_null) return 1;
        if (x->type == CAT_STRING)
            return strcmp(cat_dict_str(x->dict, x->ival), cat_dict_str(y->dict, y->ival)) == 0;
        return bx_is_float(x->type) ? x->fval == y->fval : x->ival == y->ival;
    case BE_COL:
        return x->slot == y->slot && x->col == y->col;
    case BE_LOOKUP:
        if ((x->table == NULL) != (y->table == NULL)) return 0;
        if (!plan_bexpr_equal(x->a, y->a)) return 0;
        return lookup_equal(x, y);
    case BE_AGG:
        if (x->agg != y->agg || x->agg_star != y->agg_star || x->agg_distinct != y->agg_distinct ||
            x->ival != y->ival || x->fval != y->fval || !bx_same_text(x->ttext, y->ttext))
            return 0;
        break;
    case BE_TOTEXT:
        if (x->tuse != y->tuse || !bx_same_text(x->ttext, y->ttext) ||
            !bx_same_text(x->tnull, y->tnull) || x->tpair[0] != y->tpair[0] ||
            x->tpair[1] != y->tpair[1])
            return 0;
        break;
    case BE_DICTLIKE:
        if (x->dict != y->dict || !bx_same_text(x->ttext, y->ttext)) return 0;
        break;
    case BE_RUNS: /* the same runs of the same child dictionary, the same texts */
        if (!x->a || !y->a || x->a->dict != y->a->dict || x->table_n != y->table_n ||
            memcmp(x->table, y->table, (size_t)x->table_n * sizeof(int64_t)) != 0 ||
            !same_dict(x->dict, y->dict))
            return 0;
        break;
    case BE_INLIST:
        if (x->table_n != y->table_n || x->ival != y->ival) return 0;
        if (x->table_n && memcmp(x->table, y->table, (size_t)x->table_n * sizeof(int64_t)) != 0)
            return 0;
        break;
    default:
        break;
    }
    return plan_bexpr_equal(x->a, y->a) && plan_bexpr_equal(x->b, y->b) &&
           plan_bexpr_equal(x->c, y->c);
}

/* Bit mask of the slots (FROM positions < 64) that e reads. */
uint64_t bx_rel_mask(const BExpr *e) {
    if (!e) return 0;
    uint64_t m = 0;
    if (e->kind == BE_COL && e->slot >= 0 && e->slot < 64) m |= (uint64_t)1 << e->slot;
    return m | bx_rel_mask(e->a) | bx_rel_mask(e->b) | bx_rel_mask(e->c);
}

/* A dictionary holding the one string s (owned by the arena). */
const CatDict *bx_literal_dict(PlanArena *a, const char *s) {
    const char *strs[1] = {s};
    size_t lens[1] = {strlen(s)};
    int32_t code;
    CatDict *d = cat_dict_build(strs, lens, 1, &code);
    if (!d || plan_arena_own_dict(a, d) != 0) return NULL;
    return d;
}

/*
 * Make the string-typed expressions x and y share one dictionary: if their
 * dictionaries differ, build the sorted union (owned by the arena) and wrap
 * each side in a BE_LOOKUP from its codes to union codes. Returns 0 or -1
 * when out of memory.
 */
int bx_unify_dicts(PlanArena *a, BExpr **x, BExpr **y) {
    const CatDict *dx = (*x)->dict, *dy = (*y)->dict;
    if (dx == dy || (*x)->type != CAT_STRING || (*y)->type != CAT_STRING) return 0;
    int64_t n = dx->n + dy->n;
    const char **strs = malloc(sizeof(char *) * (size_t)(n ? n : 1));
    size_t *lens = malloc(sizeof(size_t) * (size_t)(n ? n : 1));
    int32_t *codes = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!strs || !lens || !codes) goto oom;
    for (int64_t i = 0; i < dx->n; i++) {
        strs[i] = cat_dict_str(dx, i);
        lens[i] = (size_t)cat_dict_len(dx, i);
    }
    for (int64_t i = 0; i < dy->n; i++) {
        strs[dx->n + i] = cat_dict_str(dy, i);
        lens[dx->n + i] = (size_t)cat_dict_len(dy, i);
    }
    CatDict *u = cat_dict_build(strs, lens, n, codes);
    if (!u || plan_arena_own_dict(a, u) != 0) goto oom;
    int64_t *tx = plan_alloc(a, sizeof(int64_t) * (size_t)(dx->n ? dx->n : 1));
    int64_t *ty = plan_alloc(a, sizeof(int64_t) * (size_t)(dy->n ? dy->n : 1));
    BExpr *lx = bx_new(a, BE_LOOKUP, CAT_STRING, (*x)->pos);
    BExpr *ly = bx_new(a, BE_LOOKUP, CAT_STRING, (*y)->pos);
    if (!tx || !ty || !lx || !ly) goto oom;
    for (int64_t i = 0; i < dx->n; i++)
        tx[i] = codes[i];
    for (int64_t i = 0; i < dy->n; i++)
        ty[i] = codes[dx->n + i];
    lx->a = *x;
    lx->table = tx;
    lx->table_n = dx->n;
    lx->dict = u;
    ly->a = *y;
    ly->table = ty;
    ly->table_n = dy->n;
    ly->dict = u;
    /* constants fold: keep them constant so they can be compared cheaply */
    if ((*x)->kind == BE_CONST && !(*x)->is_null) {
        lx->kind = BE_CONST;
        lx->ival = tx[(*x)->ival];
        lx->a = NULL;
    }
    if ((*y)->kind == BE_CONST && !(*y)->is_null) {
        ly->kind = BE_CONST;
        ly->ival = ty[(*y)->ival];
        ly->a = NULL;
    }
    if ((*x)->kind == BE_CONST && (*x)->is_null) lx = *x, lx->dict = u;
    if ((*y)->kind == BE_CONST && (*y)->is_null) ly = *y, ly->dict = u;
    *x = lx;
    *y = ly;
    free(strs);
    free(lens);
    free(codes);
    return 0;
oom:
    free(strs);
    free(lens);
    free(codes);
    return -1;
}

/* SQLite's CAST(real AS INTEGER): truncation toward zero, saturating at
 * the int64 range; NaN (which SQLite never holds: it is NULL there) gives
 * 0 (prim_real_to_int, the map twins' F2I). */
int64_t bx_f2i(double x) {
    return prim_real_to_int(x);
}

/* Integer v converted to integer type t: an INT32 target saturates at the
 * INT32 range (gqp's own type: SQLite has none and would keep the int64;
 * saturation mirrors its CAST of a too-large real), others keep v. */
int64_t bx_to_type(CatType t, int64_t v) {
    if (t != CAT_INT32) return v;
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
}

/* Sets *out to the float f, or to NULL when f is NaN (SQLite turns a NaN
 * result of arithmetic into NULL). */
static void fold_float(double f, CatValue *out) {
    out->kind = isnan(f) ? CAT_V_NULL : CAT_V_FLOAT;
    out->f = isnan(f) ? 0 : f;
}

/* Constant folding of op(x, y) for non-NULL numeric x and y, exactly as
 * SQLite evaluates it (sqlite3VdbeExec OP_Add .. OP_Remainder):
 *   int + - * int   int64; on overflow the REAL result of the same
 *                   operation on doubles (SQLite's switch to REAL)
 *   int / int       truncating; b == 0 gives NULL; INT64_MIN / -1 is REAL
 *   int % int       C remainder; b == 0 gives NULL; x % -1 is 0
 *   with a float    double arithmetic (/ by 0.0 is NULL, a NaN is NULL);
 *                   % truncates both to int64 and gives the REAL remainder
 * Returns 0 with *out set (CAT_V_INT, CAT_V_FLOAT or CAT_V_NULL), -1 when
 * op is not arithmetic or an operand is not a number. */
int bx_fold_arith(AstOp op, const CatValue *x, const CatValue *y, CatValue *out) {
    memset(out, 0, sizeof *out);
    if ((x->kind != CAT_V_INT && x->kind != CAT_V_FLOAT) ||
        (y->kind != CAT_V_INT && y->kind != CAT_V_FLOAT))
        return -1;
    int fl = x->kind == CAT_V_FLOAT || y->kind == CAT_V_FLOAT;
    double fx = x->kind == CAT_V_FLOAT ? x->f : (double)x->i;
    double fy = y->kind == CAT_V_FLOAT ? y->f : (double)y->i;
    int64_t r = 0;
    switch (op) {
    case OP_ADD:
    case OP_SUB:
    case OP_MUL: {
        int ovf = 0;
        if (!fl) {
            ovf = op == OP_ADD   ? __builtin_add_overflow(x->i, y->i, &r)
                  : op == OP_SUB ? __builtin_sub_overflow(x->i, y->i, &r)
                                 : __builtin_mul_overflow(x->i, y->i, &r);
            if (!ovf) {
                out->kind = CAT_V_INT;
                out->i = r;
                return 0;
            }
        }
        fold_float(op == OP_ADD ? fx + fy : op == OP_SUB ? fx - fy : fx * fy, out);
        return 0;
    }
    case OP_DIV:
        if (fl ? fy == 0 : y->i == 0) {
            out->kind = CAT_V_NULL;
        } else if (fl || (x->i == INT64_MIN && y->i == -1)) {
            fold_float(fx / fy, out);
        } else {
            out->kind = CAT_V_INT;
            out->i = x->i / y->i;
        }
        return 0;
    case OP_MOD: {
        int64_t a = fl ? bx_f2i(fx) : x->i, b = fl ? bx_f2i(fy) : y->i;
        if (b == 0) {
            out->kind = CAT_V_NULL;
            return 0;
        }
        r = b == -1 ? 0 : a % b;
        if (fl) {
            out->kind = CAT_V_FLOAT;
            out->f = (double)r;
        } else {
            out->kind = CAT_V_INT;
            out->i = r;
        }
        return 0;
    }
    default:
        return -1;
    }
}

/* Constant folding of -x for a non-NULL number x, as SQLite: -INT64_MIN
 * is the REAL 9223372036854775808. Returns 0 with *out set, or -1 when x
 * is not a number. */
int bx_fold_neg(const CatValue *x, CatValue *out) {
    memset(out, 0, sizeof *out);
    if (x->kind == CAT_V_FLOAT) {
        out->kind = CAT_V_FLOAT;
        out->f = -x->f;
    } else if (x->kind == CAT_V_INT && x->i == INT64_MIN) {
        out->kind = CAT_V_FLOAT;
        out->f = 9223372036854775808.0;
    } else if (x->kind == CAT_V_INT) {
        out->kind = CAT_V_INT;
        out->i = -x->i;
    } else {
        return -1;
    }
    return 0;
}

static int eval_const_raw(const BExpr *e, CatValue *out, PlanArena *arena);

int bx_fold_logic(AstOp op, const CatValue *x, const CatValue *y, CatValue *out) {
    if (x->kind == CAT_V_STR || y->kind == CAT_V_STR) return -1;
    const int dom = op == OP_OR; /* the value that decides: true for OR */
    const int xn = x->kind == CAT_V_NULL, yn = y->kind == CAT_V_NULL;
    const int xt = x->kind == CAT_V_INT ? x->i != 0 : x->f != 0;
    const int yt = y->kind == CAT_V_INT ? y->i != 0 : y->f != 0;
    memset(out, 0, sizeof *out);
    out->kind = CAT_V_INT;
    if ((!xn && xt == dom) || (!yn && yt == dom))
        out->i = dom;
    else if (xn || yn)
        out->kind = CAT_V_NULL;
    else
        out->i = !dom;
    return 0;
}

/* Evaluate a column-free bound expression to a literal value. Returns 0,
 * or -1 if e reads columns or is not foldable. A DECIMAL's scaled integer
 * (which the expression nodes compute: rescaling is explicit in them) is
 * handed out as its text when an arena is given (exact, for INSERT), else
 * as a REAL. */
int plan_eval_const(const BExpr *e, CatValue *out, PlanArena *arena) {
    if (eval_const_raw(e, out, arena) != 0) return -1;
    if (e->type == CAT_DECIMAL && out->kind == CAT_V_INT) {
        int s = bx_scale(e);
        char *buf = arena ? plan_alloc(arena, 32) : NULL;
        if (buf) {
            cat_format_decimal(out->i, s, buf, 32);
            out->kind = CAT_V_STR;
            out->s = buf;
        } else {
            out->kind = CAT_V_FLOAT;
            out->f = (double)out->i / (double)cat_pow10(s);
        }
    }
    return 0;
}

/* plan_eval_const without the DECIMAL conversion at the top: a DECIMAL is
 * its scaled integer. */
static int eval_const_raw(const BExpr *e, CatValue *out, PlanArena *arena) {
    memset(out, 0, sizeof *out);
    switch (e->kind) {
    case BE_CONST:
        if (e->is_null || e->type == CAT_NULL) {
            out->kind = CAT_V_NULL;
        } else if (e->type == CAT_STRING) {
            out->kind = CAT_V_STR;
            out->s = cat_dict_str(e->dict, e->ival);
        } else if (bx_is_float(e->type)) {
            out->kind = CAT_V_FLOAT;
            out->f = e->fval;
        } else if (e->type == CAT_DATE && arena) {
            /* a DATE literal goes to the catalog as its text, which any
             * DATE or STRING column accepts */
            char *buf = plan_alloc(arena, 16);
            if (!buf) return -1;
            cat_format_date((int32_t)e->ival, buf);
            out->kind = CAT_V_STR;
            out->s = buf;
        } else {
            out->kind = CAT_V_INT;
            out->i = e->ival;
        }
        return 0;
    case BE_UNARY: {
        CatValue v;
        if (eval_const_raw(e->a, &v, arena) != 0) return -1;
        if (v.kind == CAT_V_NULL) {
            *out = v;
            return 0;
        }
        if (e->op == OP_NEG) return bx_fold_neg(&v, out);
        if (e->op == OP_NOT) {
            out->kind = CAT_V_INT;
            out->i = v.kind == CAT_V_INT ? v.i == 0 : v.kind == CAT_V_FLOAT ? v.f == 0 : 0;
            return 0;
        }
        return -1;
    }
    case BE_CAST: {
        CatValue v;
        if (eval_const_raw(e->a, &v, arena) != 0) return -1;
        if (v.kind == CAT_V_NULL || v.kind == CAT_V_STR) {
            *out = v;
            return 0;
        }
        if (bx_is_float(e->type)) {
            out->kind = CAT_V_FLOAT;
            out->f = v.kind == CAT_V_INT ? (double)v.i : v.f;
        } else {
            out->kind = CAT_V_INT;
            out->i = bx_to_type(e->type, v.kind == CAT_V_INT ? v.i : bx_f2i(v.f));
        }
        return 0;
    }
    case BE_BINARY: {
        CatValue x, y;
        if (eval_const_raw(e->a, &x, arena) != 0 || eval_const_raw(e->b, &y, arena) != 0) return -1;
        if (e->op == OP_AND || e->op == OP_OR) return bx_fold_logic(e->op, &x, &y, out);
        if (x.kind == CAT_V_NULL || y.kind == CAT_V_NULL) {
            out->kind = CAT_V_NULL;
            return 0;
        }
        return bx_fold_arith(e->op, &x, &y, out);
    }
    default:
        return -1;
    }
}

/* Numeric value of a constant as double; 0 with *ok = 0 if not one. */
static double const_num(const BExpr *e, int *ok) {
    *ok = 0;
    if (!e || e->kind != BE_CONST || e->is_null) return 0;
    *ok = 1;
    return bx_is_float(e->type) ? e->fval : (double)e->ival;
}

/* The column of rel that e is, or NULL. Looks through CASTs. */
static const CatColumn *pred_col(const BExpr *e, const BRel *rel) {
    if (e && e->kind == BE_CAST) e = e->a;
    if (!e || e->kind != BE_COL || e->col < 0 || e->col >= rel->table->ncols) return NULL;
    return &rel->table->cols[e->col];
}

/* A comparison `column op constant` over one column of rel, the column on
 * the left (a constant on the left mirrors op) and the constant in the
 * column's own value space: STRING constants, which the binder compares
 * through a LOOKUP into a unified dictionary, are mapped back to codes of
 * the column's dictionary (a range bound to the first code on its side; an
 * absent string under = or <> sets `absent`). */
typedef struct ColCmp {
    const CatColumn *c;
    AstOp op;   /* OP_EQ OP_NE OP_LT OP_LE OP_GT OP_GE */
    double v;   /* the constant */
    int isnull; /* the constant is NULL: the comparison is never true */
    int absent; /* STRING = / <> with a string not in the dictionary */
} ColCmp;

/* 1 if op is < <= > >=. */
static int is_range_op(AstOp op) {
    return op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE;
}

/* The comparison with its operands swapped: a < b is b > a. */
static AstOp mirror_op(AstOp op) {
    switch (op) {
    case OP_LT:
        return OP_GT;
    case OP_LE:
        return OP_GE;
    case OP_GT:
        return OP_LT;
    case OP_GE:
        return OP_LE;
    default:
        return op;
    }
}

/* First index i of the ascending table[0..n) with table[i] > v (strict)
 * or >= v; n if none. */
static int64_t lookup_bound(const int64_t *table, int64_t n, int64_t v, int strict) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (strict ? table[mid] <= v : table[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The column of rel under e, through a CAST, or through a LOOKUP whose
 * table maps that STRING column's codes (*lookup set to the LOOKUP, else
 * NULL); NULL if e is not one. */
static const CatColumn *cmp_col(const BExpr *e, const BRel *rel, const BExpr **lookup) {
    *lookup = NULL;
    if (e && e->kind == BE_LOOKUP && e->table && e->a && e->a->kind == BE_COL) {
        const CatColumn *c = pred_col(e->a, rel);
        if (!c || c->type != CAT_STRING || !c->dict || e->table_n != c->dict->n) return NULL;
        *lookup = e;
        return c;
    }
    return pred_col(e, rel);
}

/* Fill *out if p compares a column of rel with a constant; returns 1, or 0
 * when p is anything else. */
static int col_cmp(const BExpr *p, const BRel *rel, ColCmp *out) {
    if (!p || p->kind != BE_BINARY || !(p->op == OP_EQ || p->op == OP_NE || is_range_op(p->op)))
        return 0;
    const BExpr *lk;
    const BExpr *k = p->b;
    AstOp op = p->op;
    const CatColumn *c = cmp_col(p->a, rel, &lk);
    if (!c) {
        c = cmp_col(p->b, rel, &lk);
        k = p->a;
        op = mirror_op(op);
    }
    if (!c || !k || k->kind != BE_CONST) return 0;
    memset(out, 0, sizeof *out);
    out->c = c;
    out->op = op;
    if (k->is_null) {
        out->isnull = 1;
        return 1;
    }
    if (!lk) {
        int ok;
        out->v = const_num(k, &ok);
        return ok;
    }
    /* LOOKUP(col) op u: codes below lb map below u, codes from ub above it */
    int64_t lb = lookup_bound(lk->table, lk->table_n, k->ival, 0);
    int64_t ub = lookup_bound(lk->table, lk->table_n, k->ival, 1);
    switch (op) {
    case OP_EQ:
    case OP_NE:
        out->v = (double)lb;
        out->absent = lb == ub;
        break;
    case OP_LT: /* code < lb */
        out->v = (double)lb;
        break;
    case OP_LE: /* code < ub */
        out->op = OP_LT;
        out->v = (double)ub;
        break;
    case OP_GT: /* code >= ub */
        out->op = OP_GE;
        out->v = (double)ub;
        break;
    default: /* OP_GE: code >= lb */
        out->v = (double)lb;
        break;
    }
    return 1;
}

/* 1 if c holds whole numbers (integers, dates, booleans, string codes). */
static int col_integral(const CatColumn *c) {
    return c->type != CAT_FLOAT32 && c->type != CAT_FLOAT64;
}

/* Fraction of c's rows that are not NULL (1 when c is empty). */
static double nonnull_frac(const CatColumn *c) {
    if (c->stats.rows <= 0) return 1.0;
    return (double)(c->stats.rows - c->stats.nulls) / (double)c->stats.rows;
}

/* Index of the last histogram bound <= v, or -1 if v is below them all. */
static int hist_find(const CatHist *h, double v) {
    int lo = 0, hi = h->n; /* answer in [lo - 1, hi - 1] */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (h->val[mid] <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/*
 * Fraction of c's non-NULL values below v (at most v when incl), in 0..1.
 * With a histogram: exact (in its sample) at a bound; between bounds k and
 * k + 1 the share of values strictly between them, lt[k+1] - le[k], spread
 * evenly over the gap (over its whole numbers for an integral column, where
 * x <= v is x < floor(v) + 1 and x < v is x < ceil(v)). Without one: linear
 * between min and max, incl ignored.
 */
static double frac_below(const CatColumn *c, double v, int incl) {
    const CatHist *h = c->stats.hist;
    if (!h) {
        double lo = c->stats.min, span = c->stats.max - c->stats.min;
        double below = span <= 0 ? (v > lo ? 1.0 : 0.0) : (v - lo) / span;
        return below < 0 ? 0 : below > 1 ? 1 : below;
    }
    int integral = col_integral(c);
    if (integral) {
        v = incl ? floor(v) + 1 : ceil(v);
        incl = 0;
    }
    int k = hist_find(h, v);
    if (k < 0) return 0.0;
    if (h->val[k] == v) return incl ? h->le[k] : h->lt[k];
    if (k == h->n - 1) return 1.0;
    double a = h->val[k], b = h->val[k + 1];
    double t = integral ? (b - a > 1 ? (v - a - 1) / (b - a - 1) : 0) : (v - a) / (b - a);
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    return h->le[k] + (h->lt[k + 1] - h->le[k]) * t;
}

/*
 * Fraction of c's non-NULL values equal to v. 0 outside [min, max] (and for
 * a fraction in an integral column). With a histogram: a bound seen at
 * least twice in the sample has its sampled frequency; any other value gets
 * its bucket's share divided by the bucket's distinct values -- the sampled
 * ones scaled by distinct / (distinct in the sample), since a sample misses
 * rare values. Without one: 1 / distinct.
 */
static double frac_equal(const CatColumn *c, double v) {
    const CatStats *st = &c->stats;
    if (!st->has_minmax || v < st->min || v > st->max) return 0.0;
    if (col_integral(c) && v != floor(v)) return 0.0;
    double nd = st->distinct > 0 ? (double)st->distinct : 1.0;
    const CatHist *h = st->hist;
    if (!h) return 1.0 / nd;
    int k = hist_find(h, v);
    if (k < 0 || (k == h->n - 1 && v > h->val[k])) return 1.0 / nd;
    double ns = (double)h->nsample;
    if (h->val[k] == v && (h->le[k] - h->lt[k]) * ns >= 1.5) return h->le[k] - h->lt[k];
    if (k == h->n - 1) k--; /* a singleton top bound: the bucket below it */
    if (k < 0) return 1.0 / nd;
    /* bucket [val[k], val[k+1]): the bound itself unless it is frequent */
    double share = h->lt[k + 1] - h->le[k], vals = h->gap_ndv[k];
    if ((h->le[k] - h->lt[k]) * ns < 1.5) share += h->le[k] - h->lt[k], vals += 1;
    double scale = 1.0;
    if (h->ndv > h->n && nd > (double)h->n) scale = (nd - h->n) / (double)(h->ndv - h->n);
    if (scale < 1) scale = 1;
    if (vals < 1) return share > 0 ? share : 1.0 / nd;
    return share / (vals * scale);
}

/* A range lo .. hi of a column (each end open or closed; +-inf when
 * unbounded). */
typedef struct ColRange {
    double lo, hi;
    int lo_incl, hi_incl;
} ColRange;

/* The whole line. */
static ColRange range_all(void) {
    ColRange r = {-INFINITY, INFINITY, 0, 0};
    return r;
}

/* Narrow r by the range comparison `x op v`. */
static void range_apply(ColRange *r, AstOp op, double v) {
    switch (op) {
    case OP_LT:
    case OP_LE:
        if (v < r->hi || (v == r->hi && op == OP_LT)) r->hi = v, r->hi_incl = op == OP_LE;
        break;
    default: /* OP_GT, OP_GE */
        if (v > r->lo || (v == r->lo && op == OP_GT)) r->lo = v, r->lo_incl = op == OP_GE;
        break;
    }
}

/* Narrow r to its intersection with s. */
static void range_meet(ColRange *r, const ColRange *s) {
    if (s->lo > r->lo || (s->lo == r->lo && !s->lo_incl)) r->lo = s->lo, r->lo_incl = s->lo_incl;
    if (s->hi < r->hi || (s->hi == r->hi && !s->hi_incl)) r->hi = s->hi, r->hi_incl = s->hi_incl;
}

/* Fraction of all rows of c whose value lies in r (NULLs never do). */
static double range_sel(const CatColumn *c, const ColRange *r) {
    if (r->lo > r->hi) return 0.0;
    double hi = r->hi == INFINITY ? 1.0 : frac_below(c, r->hi, r->hi_incl);
    double lo = r->lo == -INFINITY ? 0.0 : frac_below(c, r->lo, !r->lo_incl);
    double f = hi - lo;
    return (f > 0 ? f : 0.0) * nonnull_frac(c);
}

/* Fraction of all rows satisfying the comparison x (NULLs never do). */
static double cmp_sel(const ColCmp *x) {
    const CatColumn *c = x->c;
    if (x->isnull) return 0.0;
    if (!c->stats.has_minmax)
        return c->stats.rows > 0 && c->stats.nulls == c->stats.rows ? 0 : 1.0 / 3.0;
    double nn = nonnull_frac(c);
    if (x->op == OP_EQ) return x->absent ? 0.0 : nn * frac_equal(c, x->v);
    if (x->op == OP_NE) return x->absent ? nn : nn * (1.0 - frac_equal(c, x->v));
    ColRange r = range_all();
    range_apply(&r, x->op, x->v);
    return range_sel(c, &r);
}

/* If p is a range comparison of a column of rel with a constant, or an AND
 * of two on the same column (BETWEEN), set *c and *r to that column and
 * range and return 1; else 0. */
static int col_range(const BExpr *p, const BRel *rel, const CatColumn **c, ColRange *r) {
    ColCmp x;
    if (p && p->kind == BE_BINARY && p->op == OP_AND) {
        if (!col_range(p->a, rel, c, r)) return 0;
        const CatColumn *c2;
        ColRange r2;
        if (!col_range(p->b, rel, &c2, &r2) || c2 != *c) return 0;
        range_meet(r, &r2);
        return 1;
    }
    if (!col_cmp(p, rel, &x) || x.isnull || !is_range_op(x.op) || !x.c->stats.has_minmax) return 0;
    *c = x.c;
    *r = range_all();
    range_apply(r, x.op, x.v);
    return 1;
}

/*
 * Estimated fraction of rel's rows that satisfy pred, from the column
 * statistics (NULLs satisfy no comparison):
 *
 *   col = k, col <> k      frac_equal (histogram bound or bucket; else
 *                          1/distinct) times the non-NULL fraction
 *   col < k, <=, >, >=     frac_below (histogram; else linear between min
 *   and ranges (BETWEEN)   and max) times the non-NULL fraction
 *   NOT p                  1 - sel(p); non-NULL fraction - sel(p) when p is
 *                          one of the above
 *   col (as a condition)   col <> 0
 *   col IN (set)           the sum of the members' = fractions, at most the
 *                          non-NULL fraction (NOT IN with a NULL member: 0)
 *   IS [NOT] NULL          the NULL fraction
 *   AND / OR               product / inclusion-exclusion (independence),
 *                          except an AND of ranges on one column, which is
 *                          their intersection
 *   anything else          1/3 (the textbook default)
 *
 * When pred is one of rel->filters and a range over a column that earlier
 * filters of rel also bound, the result is conditional on them: sel(all
 * those ranges) / sel(the earlier ones). The product over rel->filters
 * (plan_rewrite) then estimates x >= a AND x <= b, a top-level BETWEEN that
 * the binder split into two conjuncts, as the range rather than as two
 * independent predicates.
 */
double plan_selectivity(const BExpr *p, const BRel *rel) {
    const double unknown = 1.0 / 3.0;
    if (!p) return 1.0;
    const CatColumn *c;
    if (p->kind == BE_TRUTH || p->kind == BE_COL) {
        c = pred_col(p->kind == BE_TRUTH ? p->a : p, rel);
        if (!c) return p->kind == BE_TRUTH ? plan_selectivity(p->a, rel) : unknown;
        if (!c->stats.has_minmax)
            return c->stats.rows > 0 && c->stats.nulls == c->stats.rows ? 0 : unknown;
        return nonnull_frac(c) * (1.0 - frac_equal(c, 0.0));
    }
    if (p->kind == BE_UNARY && p->op == OP_NOT) {
        ColCmp x;
        ColRange r;
        double s = plan_selectivity(p->a, rel);
        if (col_cmp(p->a, rel, &x)) {
            if (x.isnull) return 0.0;
            c = x.c;
        } else if (p->a && p->a->kind == BE_INLIST) {
            if (p->a->ival) return 0.0; /* NOT IN a list with a NULL: never true */
            c = p->a->a->kind == BE_COL ? pred_col(p->a->a, rel) : NULL;
        } else if (!col_range(p->a, rel, &c, &r)) {
            c = NULL;
        }
        double f = (c ? nonnull_frac(c) : 1.0) - s;
        return f > 0 ? f : 0.0;
    }
    if (p->kind == BE_INLIST && p->a && p->a->kind == BE_RUNS && p->a->a &&
        p->a->a->kind == BE_COL) {
        /* runs of a STRING column's codes (a prefix): the members' runs'
         * share of its dictionary's entries, as the share of rows */
        const BExpr *u = p->a;
        c = pred_col(u->a, rel);
        if (!c || c->type != CAT_STRING || c->dict != u->a->dict || !c->dict->n) return unknown;
        int64_t in = 0;
        for (int64_t i = 0; i < p->table_n; i++) {
            int64_t k = p->table[i];
            if (k < 0 || k >= u->table_n) continue;
            in += (k + 1 < u->table_n ? u->table[k + 1] : c->dict->n) - u->table[k];
        }
        return nonnull_frac(c) * (double)in / (double)c->dict->n;
    }
    if (p->kind == BE_INLIST) {
        /* the sum of the members' = selectivities, at most all non-NULL rows */
        c = pred_col(p->a, rel);
        if (!c || p->a->kind != BE_COL) return unknown;
        if (!c->stats.has_minmax)
            return c->stats.rows > 0 && c->stats.nulls == c->stats.rows ? 0 : unknown;
        double s = 0;
        int isf = bx_is_float(p->a->type);
        /* a long list (an IN subquery's rows: 59k at TPC-H Q20 SF 10)
         * through 1,024 members spread over it, scaled */
        int64_t step = p->table_n > 2048 ? p->table_n / 1024 : 1, seen = 0;
        for (int64_t i = 0; i < p->table_n && s < 1.0; i += step, seen++) {
            double v;
            if (isf)
                memcpy(&v, &p->table[i], sizeof v);
            else
                v = (double)p->table[i];
            s += frac_equal(c, v) * (double)step;
        }
        if (step > 1 && seen > 0) s *= (double)p->table_n / ((double)seen * (double)step);
        return nonnull_frac(c) * (s < 1.0 ? s : 1.0);
    }
    if (p->kind == BE_ISNULL) {
        c = pred_col(p->a, rel);
        if (!c || c->stats.rows == 0) return 0.1;
        double f = (double)c->stats.nulls / (double)c->stats.rows;
        return p->negated ? 1.0 - f : f;
    }
    if (p->kind == BE_DICTLIKE) {
        c = pred_col(p->a, rel);
        return (c ? nonnull_frac(c) : 1.0) * p->fval;
    }
    if (p->kind == BE_LOOKUP && p->type == CAT_BOOL && p->table && p->a && p->a->kind == BE_COL) {
        /* a LIKE (or another per-entry test) of a STRING column: the
         * share of dictionary entries it passes, as the share of rows */
        c = pred_col(p->a, rel);
        if (!c || c->type != CAT_STRING || !c->dict || p->table_n != c->dict->n || !p->table_n)
            return unknown;
        int64_t pass = 0;
        for (int64_t i = 0; i < p->table_n; i++)
            pass += p->table[i] != 0;
        return nonnull_frac(c) * (double)pass / (double)p->table_n;
    }
    if (p->kind != BE_BINARY) return unknown;
    ColRange r;
    if (col_range(p, rel, &c, &r)) {
        double s = range_sel(c, &r);
        /* a top-level filter: conditional on the earlier ranges on c */
        int idx = -1;
        for (int f = 0; f < rel->nfilters && idx < 0; f++)
            if (rel->filters[f] == p) idx = f;
        ColRange before = range_all();
        int bounded = 0;
        for (int f = 0; f < idx; f++) {
            const CatColumn *c2;
            ColRange r2;
            if (!col_range(rel->filters[f], rel, &c2, &r2) || c2 != c) continue;
            range_meet(&before, &r2);
            bounded = 1;
        }
        if (!bounded) return s;
        double sb = range_sel(c, &before);
        range_meet(&before, &r);
        return sb > 0 ? range_sel(c, &before) / sb : 0.0;
    }
    if (p->op == OP_AND) return plan_selectivity(p->a, rel) * plan_selectivity(p->b, rel);
    if (p->op == OP_OR) {
        double a = plan_selectivity(p->a, rel), b = plan_selectivity(p->b, rel);
        return a + b - a * b;
    }
    ColCmp x;
    if (!col_cmp(p, rel, &x)) return unknown;
    return cmp_sel(&x);
}

/*
 * Estimated fraction of rel's rows that pass all of rel->filters: the
 * product of plan_selectivity over them, computed in one pass. A range
 * filter on a column that earlier filters also bound is conditional on them
 * (as plan_selectivity does for one filter), with the earlier ranges kept
 * per column as the pass goes, so n filters cost O(n) rather than O(n^2).
 */
double plan_rel_selectivity(const BRel *rel) {
    int nc = rel->table ? rel->table->ncols : 0;
    ColRange *before = malloc(sizeof(ColRange) * (size_t)(nc ? nc : 1));
    uint8_t *bounded = calloc((size_t)(nc ? nc : 1), 1);
    double sel = 1.0;
    for (int f = 0; f < rel->nfilters; f++) {
        const BExpr *p = rel->filters[f];
        const CatColumn *c;
        ColRange r;
        if (!before || !bounded || !p || p->kind != BE_BINARY || !col_range(p, rel, &c, &r)) {
            sel *= plan_selectivity(p, rel);
            continue;
        }
        int ci = (int)(c - rel->table->cols);
        if (!bounded[ci]) {
            sel *= range_sel(c, &r);
            before[ci] = r;
            bounded[ci] = 1;
            continue;
        }
        double sb = range_sel(c, &before[ci]);
        range_meet(&before[ci], &r);
        sel *= sb > 0 ? range_sel(c, &before[ci]) / sb : 0.0;
    }
    free(before);
    free(bounded);
    return sel;
}
