/*
 * bound.c -- value bounds of integer expressions from the catalog's column
 * statistics, used to prove that an aggregate's SUM or a map's integer
 * arithmetic cannot overflow int64, so that the primitives may run without
 * their overflow checks (PrimProgram.nocheck, PrimDenseAgg.nocheck, the
 * segmented reduce's nocheck).
 *
 * A column's bound is max(|min|, |max|) of its statistics, which cover
 * every row of its table (not only the rows a query keeps): a bound holds
 * for any subset of rows. Statistics are doubles, so a bound may be low by
 * a rounding step (a relative 2^-53); OP_OVF_LIMIT (2^62) leaves a factor
 * of two for that against INT64_MAX.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operators/operators.h"

/* 1 for the integer logical types (whose values the map holds as int64;
 * a DECIMAL as its scaled integer, which is also what its statistics
 * hold). */
static int int_type(CatType t) {
    return t == CAT_INT32 || t == CAT_INT64 || t == CAT_DATE || t == CAT_BOOL || t == CAT_DECIMAL;
}

/* Bound of e (see op_abs_bound); every child is visited, so *safe sees
 * every operator of the tree. */
static double bound_rec(const BExpr *e, OpColOf col_of, const void *ud, int *safe) {
    if (!e) return 0;
    double a = e->a ? bound_rec(e->a, col_of, ud, safe) : 0;
    double b = e->b ? bound_rec(e->b, col_of, ud, safe) : 0;
    double c = e->c ? bound_rec(e->c, col_of, ud, safe) : 0;
    int is_int = int_type(e->type);
    double r = HUGE_VAL;
    switch (e->kind) {
    case BE_CONST:
        r = e->is_null ? 0 : fabs((double)e->ival);
        break;
    case BE_COL: {
        const CatColumn *col = is_int && col_of ? col_of(ud, e) : NULL;
        /* statistics of the column's current rows (stats.rows == n), or of
         * a whole column this one is a range of */
        if (col && int_type(col->type) && (col->stats.rows == col->n || col->stats_cover)) {
            /* no min/max: 0 only when every row is NULL (a derived table's
             * placeholder has row counts but no values yet) */
            if (col->stats.has_minmax)
                r = fmax(fabs(col->stats.min), fabs(col->stats.max));
            else if (col->stats.nulls == col->stats.rows)
                r = 0;
        }
        break;
    }
    case BE_UNARY:
        if (e->op == OP_NEG) {
            r = a;
            if (is_int && !(a < OP_OVF_LIMIT)) *safe = 0;
        } else {
            r = 1;
        }
        break;
    case BE_BINARY:
        switch (e->op) {
        case OP_ADD:
        case OP_SUB:
            r = a + b;
            break;
        case OP_MUL:
            r = a * b;
            break;
        case OP_DIV: /* |x / y| <= |x|; only INT64_MIN / -1 overflows */
            r = a;
            break;
        case OP_MOD: /* |x % y| < |y| and <= |x|; INT64_MIN % -1 is 0 */
            r = fmin(a, b);
            break;
        case OP_CONCAT:
            r = HUGE_VAL;
            break;
        default: /* comparisons, AND, OR */
            r = 1;
            break;
        }
        if (is_int && (e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL || e->op == OP_DIV) &&
            !(r < OP_OVF_LIMIT))
            *safe = 0;
        break;
    case BE_CASE:
        r = fmax(b, c);
        break;
    case BE_COALESCE:
        r = fmax(a, b);
        break;
    case BE_CAST: /* integer to integer keeps the value (INT32 clamps it) */
        r = e->a && int_type(e->a->type) ? a : HUGE_VAL;
        break;
    case BE_ISNULL:
    case BE_TRUTH:
    case BE_INLIST:
    case BE_DICTLIKE:
        r = 1;
        break;
    case BE_LOOKUP:
        if (is_int && e->table) {
            r = 0;
            for (int64_t i = 0; i < e->table_n; i++)
                r = fmax(r, fabs((double)e->table[i]));
        }
        break;
    case BE_RUNS: /* a code */
        r = (double)e->table_n;
        break;
    case BE_AGG:
    case BE_TOTEXT:
        r = HUGE_VAL;
        break;
    }
    return is_int ? r : HUGE_VAL;
}

int op_skip_checks_allowed(void) {
    const char *v = getenv("GQP_OVERFLOW_PROOF");
    return !(v && strcmp(v, "off") == 0);
}

double op_abs_bound(const BExpr *e, OpColOf col_of, const void *ud, int *safe) {
    int ok = 1;
    double r = bound_rec(e, col_of, ud, &ok);
    if (safe) *safe = ok;
    return r;
}

const CatColumn *op_block_col(const void *ud, const BExpr *e) {
    const BSelect *b = ud;
    if (!b || !e || e->kind != BE_COL || e->slot < 0 || e->slot >= b->nrels) return NULL;
    const BRel *r = &b->rels[e->slot];
    if (r->sub || !r->table || e->col < 0 || e->col >= r->table->ncols) return NULL;
    return &r->table->cols[e->col];
}

const CatColumn *op_state_col(const void *ud, const BExpr *e) {
    const LowState *st = ud;
    if (!st || !e || e->kind != BE_COL || e->slot < 0 || e->slot >= st->nslots) return NULL;
    const CatTable *t = st->slots[e->slot].table;
    return t && e->col >= 0 && e->col < t->ncols ? &t->cols[e->col] : NULL;
}

double op_state_rows_bound(const LowState *st) {
    double rows = 1;
    int any = 0;
    for (int s = 0; s < st->nslots; s++) {
        const LowSlot *sl = &st->slots[s];
        if (!sl->joined) continue;
        if (!sl->table) return HUGE_VAL; /* computed columns: no bound */
        /* a join yields at most the product of its sides (an outer join
         * at least one row per row of its preserved side) */
        rows *= sl->table->nrows > 1 ? (double)sl->table->nrows : 1.0;
        any = 1;
    }
    return any ? rows : HUGE_VAL;
}

int op_sum_no_overflow(double rows, double bound) {
    return rows * bound < OP_OVF_LIMIT;
}
