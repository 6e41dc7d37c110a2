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
           t == CAT_BOOL || t == CAT_DATE || t == CAT_NULL;
}

/* Structural equality: same kinds, types, operators, constants, columns and
 * children (dictionary pointers compared by identity). */
int plan_bexpr_equal(const BExpr *x, const BExpr *y) {
    if (x == y) return 1;
    if (!x || !y) return 0;
    if (x->kind != y->kind || x->type != y->type || x->op != y->op || x->negated != y->negated)
        return 0;
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
        if (x->table_n != y->table_n || x->dict != y->dict) return 0;
        if (memcmp(x->table, y->table, (size_t)x->table_n * sizeof(int64_t)) != 0) return 0;
        break;
    case BE_AGG:
        if (x->agg != y->agg || x->agg_star != y->agg_star || x->agg_distinct != y->agg_distinct)
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

/* Evaluate a column-free bound expression to a literal value. Returns 0,
 * or -1 if e reads columns or is not foldable. */
int plan_eval_const(const BExpr *e, CatValue *out, PlanArena *arena) {
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
        if (plan_eval_const(e->a, &v, arena) != 0) return -1;
        if (v.kind == CAT_V_NULL) {
            *out = v;
            return 0;
        }
        if (e->op == OP_NEG) {
            if (v.kind == CAT_V_INT)
                v.i = -v.i;
            else if (v.kind == CAT_V_FLOAT)
                v.f = -v.f;
            else
                return -1;
            *out = v;
            return 0;
        }
        if (e->op == OP_NOT) {
            out->kind = CAT_V_INT;
            out->i = v.kind == CAT_V_INT ? v.i == 0 : v.kind == CAT_V_FLOAT ? v.f == 0 : 0;
            return 0;
        }
        return -1;
    }
    case BE_CAST: {
        CatValue v;
        if (plan_eval_const(e->a, &v, arena) != 0) return -1;
        if (v.kind == CAT_V_NULL || v.kind == CAT_V_STR) {
            *out = v;
            return 0;
        }
        if (bx_is_float(e->type)) {
            out->kind = CAT_V_FLOAT;
            out->f = v.kind == CAT_V_INT ? (double)v.i : v.f;
        } else {
            out->kind = CAT_V_INT;
            out->i = v.kind == CAT_V_INT ? v.i : (int64_t)v.f;
        }
        return 0;
    }
    case BE_BINARY: {
        CatValue x, y;
        if (plan_eval_const(e->a, &x, arena) != 0 || plan_eval_const(e->b, &y, arena) != 0)
            return -1;
        if (x.kind == CAT_V_NULL || y.kind == CAT_V_NULL) {
            out->kind = CAT_V_NULL;
            return 0;
        }
        if (x.kind == CAT_V_STR || y.kind == CAT_V_STR) return -1;
        int fl = x.kind == CAT_V_FLOAT || y.kind == CAT_V_FLOAT;
        double fx = x.kind == CAT_V_FLOAT ? x.f : (double)x.i;
        double fy = y.kind == CAT_V_FLOAT ? y.f : (double)y.i;
        switch (e->op) {
        case OP_ADD:
        case OP_SUB:
        case OP_MUL:
            if (fl) {
                out->kind = CAT_V_FLOAT;
                out->f = e->op == OP_ADD ? fx + fy : e->op == OP_SUB ? fx - fy : fx * fy;
            } else {
                out->kind = CAT_V_INT;
                out->i = e->op == OP_ADD   ? (int64_t)((uint64_t)x.i + (uint64_t)y.i)
                         : e->op == OP_SUB ? (int64_t)((uint64_t)x.i - (uint64_t)y.i)
                                           : (int64_t)((uint64_t)x.i * (uint64_t)y.i);
            }
            return 0;
        case OP_DIV:
            if (fl ? fy == 0 : y.i == 0) {
                out->kind = CAT_V_NULL;
            } else if (fl) {
                out->kind = CAT_V_FLOAT;
                out->f = fx / fy;
            } else {
                out->kind = CAT_V_INT;
                out->i = (x.i == INT64_MIN && y.i == -1) ? INT64_MIN : x.i / y.i;
            }
            return 0;
        default:
            return -1;
        }
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

/* The column of rel that e is, or NULL. Looks through LOOKUP remaps. */
static const CatColumn *pred_col(const BExpr *e, const BRel *rel) {
    if (e && e->kind == BE_CAST) e = e->a;
    if (!e || e->kind != BE_COL || e->col < 0 || e->col >= rel->table->ncols) return NULL;
    return &rel->table->cols[e->col];
}

/*
 * Estimated fraction of rel's rows that satisfy pred, from the column
 * statistics: equality 1/distinct, ranges by linear interpolation between
 * min and max, AND as a product, OR by inclusion-exclusion; 1/3 where
 * nothing is known (the textbook default).
 */
double plan_selectivity(const BExpr *p, const BRel *rel) {
    const double unknown = 1.0 / 3.0;
    if (!p) return 1.0;
    if (p->kind == BE_TRUTH) return plan_selectivity(p->a, rel);
    if (p->kind == BE_UNARY && p->op == OP_NOT) return 1.0 - plan_selectivity(p->a, rel);
    if (p->kind == BE_ISNULL) {
        const CatColumn *c = pred_col(p->a, rel);
        if (!c || c->stats.rows == 0) return 0.1;
        double f = (double)c->stats.nulls / (double)c->stats.rows;
        return p->negated ? 1.0 - f : f;
    }
    if (p->kind == BE_LOOKUP) return unknown;
    if (p->kind != BE_BINARY) return unknown;
    if (p->op == OP_AND) return plan_selectivity(p->a, rel) * plan_selectivity(p->b, rel);
    if (p->op == OP_OR) {
        double a = plan_selectivity(p->a, rel), b = plan_selectivity(p->b, rel);
        return a + b - a * b;
    }
    const CatColumn *c = pred_col(p->a, rel);
    const BExpr *k = p->b;
    AstOp op = p->op;
    if (!c) {
        c = pred_col(p->b, rel);
        k = p->a;
        switch (op) { /* mirror the comparison */
        case OP_LT:
            op = OP_GT;
            break;
        case OP_LE:
            op = OP_GE;
            break;
        case OP_GT:
            op = OP_LT;
            break;
        case OP_GE:
            op = OP_LE;
            break;
        default:
            break;
        }
    }
    int ok;
    double v = const_num(k, &ok);
    if (!c || !ok || !c->stats.has_minmax) return unknown;
    double lo = c->stats.min, hi = c->stats.max;
    double nd = c->stats.distinct > 0 ? (double)c->stats.distinct : 1.0;
    double span = hi - lo;
    double below; /* fraction of values < v */
    if (span <= 0)
        below = v > lo ? 1.0 : 0.0;
    else
        below = (v - lo) / span;
    if (below < 0) below = 0;
    if (below > 1) below = 1;
    switch (op) {
    case OP_EQ:
        return (v < lo || v > hi) ? 0.0 : 1.0 / nd;
    case OP_NE:
        return 1.0 - 1.0 / nd;
    case OP_LT:
    case OP_LE:
        return below;
    case OP_GT:
    case OP_GE:
        return 1.0 - below;
    default:
        return unknown;
    }
}
