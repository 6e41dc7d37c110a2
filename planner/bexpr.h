/*
 * bexpr.h -- internal helpers of the planner for bound expressions
 * (constructors, dictionary unification). Not used outside planner/ and
 * operators/.
 */
#ifndef GQP_BEXPR_H
#define GQP_BEXPR_H

#include "planner/planner.h"

BExpr *bx_new(PlanArena *a, BExprKind k, CatType t, int64_t pos);
/* 1 if a and b are both NULL or equal strings. */
int bx_same_text(const char *a, const char *b);
BExpr *bx_int(PlanArena *a, CatType t, int64_t v, int64_t pos);
BExpr *bx_float(PlanArena *a, double v, int64_t pos);
BExpr *bx_null(PlanArena *a, CatType t, int64_t pos);
BExpr *bx_bin(PlanArena *a, AstOp op, CatType t, BExpr *x, BExpr *y, int64_t pos);
int bx_is_float(CatType t);
int bx_is_numeric(CatType t);
int bx_scale(const BExpr *e);
uint64_t bx_rel_mask(const BExpr *e);
const CatDict *bx_literal_dict(PlanArena *a, const char *s);
int bx_unify_dicts(PlanArena *a, BExpr **x, BExpr **y);
int64_t bx_f2i(double x);
int64_t bx_to_type(CatType t, int64_t v);
int bx_fold_arith(AstOp op, const CatValue *x, const CatValue *y, CatValue *out);
int bx_fold_neg(const CatValue *x, CatValue *out);
/* x AND y / x OR y (op) in SQL's three-valued logic: NULL AND false is
 * false, NULL OR true is true, else NULL when either is NULL. 0, or -1
 * for a text operand. */
int bx_fold_logic(AstOp op, const CatValue *x, const CatValue *y, CatValue *out);

/* funcs.c: bind-time helpers of scalar functions on constants */
int64_t fn_days_from_civil(int64_t y, int64_t m, int64_t d);
void fn_civil_from_days(int64_t z, int64_t *y, int64_t *m, int64_t *d);
int64_t fn_add_months(int64_t days, int64_t n);
int fn_sqlite_date(const char *s, const char *const *mods, int nmods, char *out);

/* A string function with its constant arguments (see fn_apply_str). */
typedef enum FnStr {
    FN_LENGTH,
    FN_UPPER,
    FN_LOWER,
    FN_SUBSTR,
    FN_TRIM,
    FN_LTRIM,
    FN_RTRIM,
    FN_REPLACE,
    FN_INSTR,
    FN_CONCAT, /* s1 || text || s2 */
    FN_STARTS, /* 1 if the text starts with s1, else 0 (DuckDB's starts_with) */
    FN_LPAD,   /* DuckDB's lpad / rpad(text, a, s1): the first a characters, */
    FN_RPAD    /* or the text padded to a characters by s1 repeated */
} FnStr;
typedef struct FnStrOp {
    FnStr fn;
    int64_t a, b; /* SUBSTR start, length (has_b); LPAD / RPAD length */
    int has_b;
    const char *s1, *s2; /* TRIM set (NULL: ' '), REPLACE pattern and text, INSTR needle,
                            STARTS prefix, LPAD / RPAD padding (not empty) */
} FnStrOp;
int fn_apply_str(const FnStrOp *op, const char *in, size_t n, char **out, size_t *outlen,
                 int64_t *ival);
BExpr *fn_map_dict(PlanArena *a, BExpr *x, const FnStrOp *op, int64_t pos);
/* Operators over two text expressions through a table of every pair of
 * their dictionaries' entries (funcs.c): x || y, x [NOT] LIKE p. Only for
 * dictionaries whose sizes multiply to at most fn_pairs_max(). NULL when
 * out of memory. */
/* SQLite's strftime over text (funcs.c): the format check and the
 * function (0 text, 1 NULL, 2 not handled). */
int fn_strftime_ok(const char *fmt);
int fn_strftime(const char *fmt, const char *s, char *out, size_t cap);
/* A text function of one text value evaluated per possible value of a
 * STRING or DATE expression x (funcs.c). */
typedef int (*FnText)(const void *ud, const char *in, char *out, size_t cap);
BExpr *fn_map_text(PlanArena *a, BExpr *x, FnText fn, const void *ud, int64_t lo, int64_t hi,
                   int64_t pos, int *unsupported);
int fn_text_same(const void *ud, const char *in, char *out, size_t cap);
int64_t fn_pairs_max(void);
/* x * |dict(y)| + y over the codes of STRING expressions x and y, INT64. */
BExpr *fn_pair_index(PlanArena *a, BExpr *x, BExpr *y, int64_t pos);
BExpr *fn_concat_pairs(PlanArena *a, BExpr *x, BExpr *y, int64_t pos);
BExpr *fn_like_pairs(PlanArena *a, BExpr *x, BExpr *p, int negated, int64_t pos);

#endif
