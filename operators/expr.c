/*
 * expr.c -- lowering of bound expressions: one map node per expression
 * tree, compiled to the register program of primitives/primitives.h, and
 * the labels EXPLAIN prints for them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "operators/operators.h"
#include "planner/bexpr.h"

/* Vector type that stores values of logical type t. */
PrimType op_prim_type(CatType t) {
    switch (t) {
    case CAT_INT32:
    case CAT_DATE:
    case CAT_STRING:
        return PRIM_I32;
    case CAT_FLOAT32:
        return PRIM_F32;
    case CAT_FLOAT64:
        return PRIM_F64;
    case CAT_BOOL:
        return PRIM_U8;
    default:
        return PRIM_I64;
    }
}

int op_fail(Lower *L, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->err->msg, sizeof L->err->msg, fmt, ap);
    va_end(ap);
    snprintf(L->err->stage, sizeof L->err->stage, "Planner");
    L->err->offset = -1;
    return -1;
}

/* Register class of logical type t. */
static int reg_t(CatType t) {
    return (t == CAT_FLOAT32 || t == CAT_FLOAT64) ? PRIM_REG_F : PRIM_REG_I;
}

typedef struct Compiler {
    Lower *L;
    LowState *st;
    PrimInstr *code;
    int n, cap;
    uint64_t used; /* register bitmap */
    int maxreg;
    int inputs[DAG_MAX_IO];
    int in_slot[DAG_MAX_IO], in_col[DAG_MAX_IO];
    int ninputs;
    int failed;
} Compiler;

/* Lowest free register, or -1 (and failed) when all PRIM_MAX_REGS are used. */
static int reg_alloc(Compiler *c) {
    for (int r = 0; r < PRIM_MAX_REGS; r++)
        if (!(c->used >> r & 1)) {
            c->used |= (uint64_t)1 << r;
            if (r + 1 > c->maxreg) c->maxreg = r + 1;
            return r;
        }
    c->failed = 1;
    op_fail(c->L, "expression needs more than %d registers", PRIM_MAX_REGS);
    return -1;
}

static void reg_free(Compiler *c, int r) {
    if (r >= 0) c->used &= ~((uint64_t)1 << r);
}

/* Append one instruction; returns its index or -1. */
static PrimInstr *emit(Compiler *c, PrimOp op, int t, int dst, int a, int b, int cc) {
    if (c->failed) return NULL;
    if (c->n == c->cap) {
        int nc = c->cap ? c->cap * 2 : 32;
        PrimInstr *ni = plan_alloc(c->L->arena, sizeof(PrimInstr) * (size_t)nc);
        if (!ni) {
            c->failed = 1;
            op_fail(c->L, "out of memory");
            return NULL;
        }
        if (c->n) memcpy(ni, c->code, sizeof(PrimInstr) * (size_t)c->n);
        c->code = ni;
        c->cap = nc;
    }
    PrimInstr *in = &c->code[c->n++];
    memset(in, 0, sizeof *in);
    in->op = (uint8_t)op;
    in->t = (uint8_t)t;
    in->dst = (int16_t)dst;
    in->a = (int16_t)a;
    in->b = (int16_t)b;
    in->c = (int16_t)cc;
    return in;
}

/* Index of (slot, col) among the program's inputs, adding it if new. */
static int input_index(Compiler *c, int slot, int col) {
    for (int i = 0; i < c->ninputs; i++)
        if (c->in_slot[i] == slot && c->in_col[i] == col) return i;
    if (c->ninputs == DAG_MAX_IO) {
        c->failed = 1;
        op_fail(c->L, "expression reads more than %d columns", DAG_MAX_IO);
        return -1;
    }
    int v = op_column(c->L, c->st, slot, col);
    if (v < 0) {
        c->failed = 1;
        return -1;
    }
    c->in_slot[c->ninputs] = slot;
    c->in_col[c->ninputs] = col;
    c->inputs[c->ninputs] = v;
    return c->ninputs++;
}

/* Index of value v (a node's output, not a table column) among the
 * program's inputs, adding it if new. */
static int input_value(Compiler *c, int v) {
    for (int i = 0; i < c->ninputs; i++)
        if (c->in_slot[i] == -1 && c->inputs[i] == v) return i;
    if (c->ninputs == DAG_MAX_IO) {
        c->failed = 1;
        op_fail(c->L, "expression reads more than %d columns", DAG_MAX_IO);
        return -1;
    }
    c->in_slot[c->ninputs] = -1;
    c->in_col[c->ninputs] = -1;
    c->inputs[c->ninputs] = v;
    return c->ninputs++;
}

static const PrimOp arith_ops[] = {
    [OP_ADD] = POP_ADD, [OP_SUB] = POP_SUB, [OP_MUL] = POP_MUL, [OP_DIV] = POP_DIV,
    [OP_MOD] = POP_MOD, [OP_EQ] = POP_EQ,   [OP_NE] = POP_NE,   [OP_LT] = POP_LT,
    [OP_LE] = POP_LE,   [OP_GT] = POP_GT,   [OP_GE] = POP_GE,   [OP_AND] = POP_AND,
    [OP_OR] = POP_OR,   [OP_POW] = POP_POW, [OP_FMOD] = POP_POW};

/* CAST to INT32 of register a (of register type at): F2I first for a
 * float, then min(max(x, INT32_MIN), INT32_MAX) through CASE, so that an
 * out-of-range value saturates as the binder's constant folding does
 * (bx_to_type). Returns the register holding the result, or -1. */
static int clamp_i32(Compiler *c, int a, int at) {
    int x = a;
    if (at == PRIM_REG_F) {
        x = reg_alloc(c);
        emit(c, POP_F2I, PRIM_REG_I, x, a, 0, 0);
        reg_free(c, a);
    }
    static const int64_t lim[2] = {INT32_MAX, INT32_MIN};
    for (int k = 0; k < 2; k++) {
        int b = reg_alloc(c), cond = reg_alloc(c);
        PrimInstr *in = emit(c, POP_CONST, PRIM_REG_I, b, 0, 0, 0);
        if (!in) return -1;
        in->ival = lim[k];
        emit(c, k == 0 ? POP_GT : POP_LT, PRIM_REG_I, cond, x, b, 0);
        emit(c, POP_CASE, PRIM_REG_I, x, cond, b, x);
        reg_free(c, b);
        reg_free(c, cond);
    }
    return x;
}

/* Compile e; returns the register holding its value, or -1. */
static int compile(Compiler *c, const BExpr *e) {
    if (c->failed) return -1;
    int t = reg_t(e->type);
    switch (e->kind) {
    case BE_CONST: {
        int d = reg_alloc(c);
        PrimInstr *in =
            emit(c, e->is_null || e->type == CAT_NULL ? POP_NULL : POP_CONST, t, d, 0, 0, 0);
        if (!in) return -1;
        in->ival = e->ival;
        in->fval = e->fval;
        return d;
    }
    case BE_COL: {
        int idx = input_index(c, e->slot, e->col);
        int d = reg_alloc(c);
        PrimInstr *in = emit(c, POP_COL, t, d, 0, 0, 0);
        if (!in || idx < 0) return -1;
        in->ival = idx;
        return d;
    }
    case BE_UNARY: {
        int a = compile(c, e->a);
        int d = reg_alloc(c);
        if (e->op >= OP_SQRT && e->op <= OP_LOG2) {
            static const PrimMathFn fn[] = {[OP_SQRT] = PMATH_SQRT,
                                            [OP_EXP] = PMATH_EXP,
                                            [OP_LN] = PMATH_LN,
                                            [OP_LOG10] = PMATH_LOG10,
                                            [OP_LOG2] = PMATH_LOG2};
            PrimInstr *in = emit(c, POP_MATH, PRIM_REG_F, d, a, 0, 0);
            if (in) in->ival = fn[e->op];
        } else if (e->op == OP_NEG) {
            /* ival 1: ABS's negation (bind.c abs_plain), whose overflow
             * stays an error where SQLite's REAL takes over elsewhere */
            PrimInstr *in = emit(c, POP_NEG, t, d, a, 0, 0);
            if (in && (e->ival == 1 || e->type == CAT_DECIMAL)) in->ival = 1;
        } else
            emit(c, POP_NOT, reg_t(e->a->type), d, a, 0, 0);
        reg_free(c, a);
        return d;
    }
    case BE_BINARY: {
        int a = compile(c, e->a);
        int b = compile(c, e->b);
        int d = reg_alloc(c);
        int opt = (e->op >= OP_EQ && e->op <= OP_GE) ? reg_t(e->a->type) : t;
        if (e->op == OP_AND || e->op == OP_OR) opt = PRIM_REG_I;
        if ((size_t)e->op >= sizeof arith_ops / sizeof *arith_ops ||
            (!arith_ops[e->op] && e->op != OP_ADD)) {
            c->failed = 1;
            op_fail(c->L, "operator not supported in a map");
            return -1;
        }
        PrimInstr *in = emit(c, arith_ops[e->op], opt, d, a, b, 0);
        if (in && e->op == OP_FMOD) in->ival = 1; /* POP_POW's fmod */
        /* a DECIMAL's scaled int64 that overflows is an error (DuckDB's
         * rule), never SQLite's REAL (prim_cpu_map_reals) */
        if (in && e->op >= OP_ADD && e->op <= OP_MOD &&
            (e->type == CAT_DECIMAL || e->a->type == CAT_DECIMAL || e->b->type == CAT_DECIMAL))
            in->ival = 1;
        reg_free(c, a);
        reg_free(c, b);
        return d;
    }
    case BE_ISNULL: {
        int a = compile(c, e->a);
        int d = reg_alloc(c);
        emit(c, e->negated ? POP_NOTNULL : POP_ISNULL, reg_t(e->a->type), d, a, 0, 0);
        reg_free(c, a);
        return d;
    }
    case BE_TRUTH: {
        int a = compile(c, e->a);
        int d = reg_alloc(c);
        emit(c, POP_TRUTH, reg_t(e->a->type), d, a, 0, 0);
        reg_free(c, a);
        return d;
    }
    case BE_CASE:
    case BE_COALESCE: {
        /* the nested part of a CASE / COALESCE chain first (c, resp. b),
         * so each level holds one register while the deeper ones compile:
         * a 60-branch CASE fits in the 64 registers */
        int cc = e->kind == BE_CASE ? compile(c, e->c) : -1;
        int b = e->kind == BE_COALESCE ? compile(c, e->b) : -1;
        int a = compile(c, e->a);
        if (e->kind == BE_CASE) b = compile(c, e->b);
        int d = reg_alloc(c);
        emit(c, e->kind == BE_CASE ? POP_CASE : POP_COALESCE, t, d, a, b, cc < 0 ? 0 : cc);
        reg_free(c, a);
        reg_free(c, b);
        reg_free(c, cc);
        return d;
    }
    case BE_CAST: {
        int a = compile(c, e->a);
        int at = reg_t(e->a->type);
        if (e->type == CAT_INT32 && (e->a->type == CAT_INT64 || at == PRIM_REG_F))
            return clamp_i32(c, a, at);
        if (at == t && !(t == PRIM_REG_I && e->type == CAT_INT64 &&
                         (e->a->kind == BE_BINARY || e->a->kind == BE_UNARY ||
                          e->a->kind == BE_CASE || e->a->kind == BE_COALESCE)))
            return a;
        int d = reg_alloc(c);
        /* CAST(integer arithmetic AS INTEGER): POP_F2I with ival 1, the
         * value itself, but a REAL that an overflow gave (SQLite's,
         * prim_cpu_map_reals) truncated */
        PrimInstr *ci = emit(c, t == PRIM_REG_F ? POP_I2F : POP_F2I, t, d, a, 0, 0);
        if (ci && at == t) ci->ival = 1;
        reg_free(c, a);
        return d;
    }
    case BE_LOOKUP: {
        int a = compile(c, e->a);
        int d = reg_alloc(c);
        /* a FLOAT64 lookup's table holds doubles' bits (CAST(text AS REAL)) */
        PrimInstr *in = emit(c, POP_LOOKUP, t, d, a, 0, 0);
        if (!in) return -1;
        in->table = e->table;
        in->table_n = e->table_n;
        reg_free(c, a);
        return d;
    }
    case BE_RUNS: {
        int a = compile(c, e->a);
        int d = reg_alloc(c);
        PrimInstr *in = emit(c, POP_RUNS, PRIM_REG_I, d, a, 0, 0);
        if (!in) return -1;
        in->table = e->table;
        in->table_n = e->table_n;
        reg_free(c, a);
        return d;
    }
    case BE_DICTLIKE: {
        /* the per-entry table is a node's output (either device), read
         * by code */
        /* the column first: a map's row count is its first input's
         * (e->a is a table column) */
        int a = compile(c, e->a);
        int v = op_dictlike(c->L, c->st, e);
        if (v < 0) {
            c->failed = 1;
            return -1;
        }
        int idx = input_value(c, v);
        int d = reg_alloc(c);
        PrimInstr *in = emit(c, POP_LOOKUPV, PRIM_REG_I, d, a, 0, 0);
        if (!in || idx < 0) return -1;
        in->ival = idx;
        reg_free(c, a);
        return d;
    }
    case BE_TOTEXT: {
        /* the text exists only at run time: its own CPU node, read as a
         * column */
        int v = op_totext(c->L, c->st, e);
        if (v < 0) {
            c->failed = 1;
            return -1;
        }
        int idx = input_value(c, v);
        int d = reg_alloc(c);
        PrimInstr *in = emit(c, POP_COL, t, d, 0, 0, 0);
        if (!in || idx < 0) return -1;
        in->ival = idx;
        return d;
    }
    case BE_INLIST: {
        int a = compile(c, e->a);
        int d = reg_alloc(c);
        PrimInstr *in = emit(c, POP_INLIST, reg_t(e->a->type), d, a, 0, 0);
        if (!in) return -1;
        in->table = e->table;
        in->table_n = e->table_n;
        in->ival = e->ival;
        reg_free(c, a);
        return d;
    }
    case BE_AGG:
        c->failed = 1;
        op_fail(c->L, "aggregate outside of an aggregation");
        return -1;
    }
    return -1;
}

/* Append text of e to b. */
static void label(PlanBuf *b, Lower *L, const LowState *st, const BExpr *e) {
    static const char *ops[] = {
        [OP_ADD] = "+", [OP_SUB] = "-",     [OP_MUL] = "*", [OP_DIV] = "/",
        [OP_MOD] = "%", [OP_EQ] = "=",      [OP_NE] = "<>", [OP_LT] = "<",
        [OP_LE] = "<=", [OP_GT] = ">",      [OP_GE] = ">=", [OP_AND] = "AND",
        [OP_OR] = "OR", [OP_CONCAT] = "||", [OP_POW] = "^", [OP_FMOD] = "fmod"};
    static const char *fns[] = {[OP_SQRT] = "sqrt",
                                [OP_EXP] = "exp",
                                [OP_LN] = "ln",
                                [OP_LOG10] = "log10",
                                [OP_LOG2] = "log2"};
    switch (e->kind) {
    case BE_CONST:
        if (e->is_null)
            plan_buf_printf(b, "NULL");
        else if (e->type == CAT_STRING)
            plan_buf_printf(b, "'%s'", cat_dict_str(e->dict, e->ival));
        else if (e->type == CAT_FLOAT32 || e->type == CAT_FLOAT64)
            plan_buf_printf(b, "%g", e->fval);
        else if (e->type == CAT_DECIMAL) {
            char buf[32];
            cat_format_decimal(e->ival, bx_scale(e), buf, sizeof buf);
            plan_buf_printf(b, "%s", buf);
        } else
            plan_buf_printf(b, "%lld", (long long)e->ival);
        break;
    case BE_COL:
        if (st && e->slot >= 0 && e->slot < st->nslots && st->slots[e->slot].col_names)
            plan_buf_printf(b, "%s", st->slots[e->slot].col_names[e->col]);
        else
            plan_buf_printf(b, "$%d.%d", e->slot, e->col);
        break;
    case BE_UNARY:
        if (e->op >= OP_SQRT && e->op <= OP_LOG2) {
            plan_buf_printf(b, "%s(", fns[e->op]);
            label(b, L, st, e->a);
            plan_buf_printf(b, ")");
            break;
        }
        plan_buf_printf(b, e->op == OP_NEG ? "-" : "NOT ");
        label(b, L, st, e->a);
        break;
    case BE_BINARY:
        plan_buf_printf(b, "(");
        label(b, L, st, e->a);
        plan_buf_printf(b, " %s ", ops[e->op] ? ops[e->op] : "?");
        label(b, L, st, e->b);
        plan_buf_printf(b, ")");
        break;
    case BE_ISNULL:
        label(b, L, st, e->a);
        plan_buf_printf(b, e->negated ? " IS NOT NULL" : " IS NULL");
        break;
    case BE_TRUTH:
        label(b, L, st, e->a);
        break;
    case BE_CASE:
        plan_buf_printf(b, "CASE WHEN ");
        label(b, L, st, e->a);
        plan_buf_printf(b, " THEN ");
        label(b, L, st, e->b);
        plan_buf_printf(b, " ELSE ");
        label(b, L, st, e->c);
        plan_buf_printf(b, " END");
        break;
    case BE_COALESCE:
        plan_buf_printf(b, "COALESCE(");
        label(b, L, st, e->a);
        plan_buf_printf(b, ", ");
        label(b, L, st, e->b);
        plan_buf_printf(b, ")");
        break;
    case BE_CAST:
        plan_buf_printf(b, "CAST(");
        label(b, L, st, e->a);
        plan_buf_printf(b, " AS %s)", cat_type_name(e->type));
        break;
    case BE_LOOKUP:
        plan_buf_printf(b, "lookup[%lld](", (long long)e->table_n);
        label(b, L, st, e->a);
        plan_buf_printf(b, ")");
        break;
    case BE_RUNS:
        plan_buf_printf(b, "runs[%lld of %lld](", (long long)e->table_n,
                        e->a && e->a->dict ? (long long)e->a->dict->n : 0LL);
        label(b, L, st, e->a);
        plan_buf_printf(b, ")");
        break;
    case BE_AGG:
        plan_buf_printf(b, "agg(...)");
        break;
    case BE_DICTLIKE:
        label(b, L, st, e->a);
        plan_buf_printf(b, " %sLIKE '%s'", e->negated ? "NOT " : "", e->ttext);
        break;
    case BE_INLIST:
        plan_buf_printf(b, "(");
        label(b, L, st, e->a);
        plan_buf_printf(b, " IN <%lld values%s>)", (long long)e->table_n,
                        e->ival ? " and NULL" : "");
        break;
    case BE_TOTEXT:
        plan_buf_printf(b, e->tnull ? "COALESCE(CAST(" : "CAST(");
        if (e->tpair[0]) plan_buf_printf(b, "pair ");
        label(b, L, st, e->a);
        plan_buf_printf(b, " AS TEXT)");
        if (e->tnull) plan_buf_printf(b, ", '%s')", e->tnull);
        if (e->tuse == TU_INT || e->tuse == TU_REAL)
            plan_buf_printf(b, " AS %s", e->tuse == TU_INT ? "INTEGER" : "REAL");
        else if (e->tuse == TU_LIKE)
            plan_buf_printf(b, " %sLIKE '%s'", e->negated ? "NOT " : "", e->ttext);
        else if (e->tuse == TU_CMP && e->b) {
            plan_buf_printf(b, " %s ", ops[e->op] ? ops[e->op] : "?");
            label(b, L, st, e->b);
        } else if (e->tuse == TU_CMP)
            plan_buf_printf(b, " %s '%s'", ops[e->op] ? ops[e->op] : "?", e->ttext);
        break;
    }
}

char *op_expr_label(Lower *L, const LowState *st, const BExpr *e) {
    PlanBuf b = {0};
    label(&b, L, st, e);
    char *s = plan_strdup(L->arena, b.s ? b.s : "");
    free(b.s);
    return s;
}

int op_dictlike(Lower *L, LowState *st, const BExpr *e) {
    const CatDict *d = e->dict;
    /* one node per dictionary and pattern in a plan */
    for (int i = 0; i < L->dag->nnodes; i++) {
        const DagNode *n = &L->dag->nodes[i];
        if (n->kind == DN_DICTLIKE && n->totext_dict == d && n->totext_neg == e->negated &&
            strcmp(n->totext_text, e->ttext) == 0)
            return n->outputs[0];
    }
    PrimType ot = PRIM_U8;
    int node = plan_dag_add(L->dag, DN_DICTLIKE, NULL, 0, 1, &ot);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    n->est_rows = d->n;
    n->totext_dict = d;
    n->totext_text = e->ttext;
    n->totext_neg = e->negated;
    /* the column whose dictionary it is (placement prices the
     * dictionary's copy by how often the column was read) */
    if (e->a && e->a->kind == BE_COL && e->a->slot >= 0 && st) {
        const LowSlot *ls = &st->slots[e->a->slot];
        if (ls->table && e->a->col >= 0 && e->a->col < ls->table->ncols &&
            ls->table->cols[e->a->col].dict == d) {
            n->table = ls->table;
            n->column = e->a->col;
        }
    }
    PlanBuf b = {0};
    plan_buf_printf(&b, "%sLIKE '%s' over %lld entries", e->negated ? "NOT " : "", e->ttext,
                    (long long)d->n);
    n->label = plan_strdup(L->arena, b.s ? b.s : "");
    free(b.s);
    int out = plan_dag_out(L->dag, node, 0);
    L->dag->values[out].ltype = CAT_BOOL;
    L->dag->values[out].dict = NULL;
    L->dag->values[out].est_rows = d->n;
    return out;
}

int op_totext(Lower *L, LowState *st, const BExpr *e) {
    int v[2];
    /* a STRING input (group_concat's text, made at run time) as its codes */
    v[0] = op_expr(L, st, e->a,
                   e->a->type == CAT_STRING  ? PRIM_I32
                   : bx_is_float(e->a->type) ? PRIM_F64
                                             : PRIM_I64,
                   0);
    if (v[0] < 0) return -1;
    if (e->a->type == CAT_STRING && e->tuse == TU_TEXT && !e->tnull) return v[0];
    /* TU_CMP against a string expression: its codes are the second input */
    if (e->b && (v[1] = op_expr(L, st, e->b, PRIM_I32, 0)) < 0) return -1;
    PrimType ot = op_prim_type(e->type);
    int node = plan_dag_add(L->dag, DN_TOTEXT, v, e->b ? 2 : 1, 1, &ot);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    n->est_rows = st->est_rows;
    n->totext_date = e->a->type == CAT_DATE      ? 1
                     : e->a->type == CAT_DECIMAL ? 2 + bx_scale(e->a)
                                                 : 0;
    n->totext_use = e->tuse;
    n->totext_op = e->op;
    n->totext_neg = e->negated;
    n->totext_text = e->ttext;
    n->totext_null = e->tnull;
    n->totext_dict = e->b ? e->b->dict : NULL;
    n->totext_pair[0] = e->tpair[0];
    n->totext_pair[1] = e->tpair[1];
    n->label = op_expr_label(L, st, e);
    int out = plan_dag_out(L->dag, node, 0);
    L->dag->values[out].ltype = e->type;
    L->dag->values[out].scale = e->scale;
    L->dag->values[out].dict = NULL;
    L->dag->values[out].est_rows = st->est_rows;
    return out;
}

int op_expr(Lower *L, LowState *st, const BExpr *e, PrimType out_type, int as_filter) {
    if (!as_filter && e->kind == BE_COL && op_prim_type(e->type) == out_type) {
        int v = op_column(L, st, e->slot, e->col);
        return v;
    }
    if (!as_filter && e->kind == BE_TOTEXT && op_prim_type(e->type) == out_type)
        return op_totext(L, st, e);
    Compiler c;
    memset(&c, 0, sizeof c);
    c.L = L;
    c.st = st;
    int r = compile(&c, e);
    if (c.failed || r < 0) return -1;
    PrimType ot = as_filter ? PRIM_U8 : out_type;
    int inputs[DAG_MAX_IO];
    memcpy(inputs, c.inputs, sizeof(int) * (size_t)c.ninputs);
    int node = plan_dag_add(L->dag, DN_MAP, inputs, c.ninputs, 1, &ot);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    n->prog.ninstr = c.n;
    n->prog.code = c.code;
    n->prog.nregs = c.maxreg;
    n->prog.result = r;
    n->prog.result_t = reg_t(e->type);
    n->prog.ninputs = c.ninputs;
    n->prog.as_filter = as_filter;
    /* integer arithmetic that the statistics prove free of overflow runs
     * without the checks (operators/bound.c; the GPU twin's map_kernel) */
    int checked = 0;
    for (int k = 0; k < c.n; k++)
        checked |= c.code[k].t == PRIM_REG_I &&
                   (c.code[k].op == POP_ADD || c.code[k].op == POP_SUB || c.code[k].op == POP_MUL ||
                    c.code[k].op == POP_DIV || c.code[k].op == POP_NEG);
    if (checked && op_skip_checks_allowed()) {
        int safe = 0;
        double x = op_abs_bound(e, op_state_col, st, &safe);
        if (safe) {
            n->prog.nocheck = 1;
            n->no_ovf = 1;
            n->ovf_bound = x;
        }
    }
    n->len_from = st->len_value;
    n->label = op_expr_label(L, st, e);
    n->est_rows = st->est_rows;
    int v = plan_dag_out(L->dag, node, 0);
    L->dag->values[v].ltype = e->type;
    L->dag->values[v].scale = bx_scale(e);
    L->dag->values[v].dict = e->dict;
    L->dag->values[v].est_rows = st->est_rows;
    return v;
}

/* A map node over value v alone running the ninstr instructions in (its
 * result register last, of register type rt) into a value of type t
 * labelled label; the value keeps v's logical type, scale and dictionary
 * unless the caller changes them. Returns the value id or -1. */
static int value_map(Lower *L, int v, PrimInstr *in, int ninstr, int rt, PrimType t,
                     const char *label) {
    int node = plan_dag_add(L->dag, DN_MAP, &v, 1, 1, &t);
    if (node < 0) return op_fail(L, "out of memory");
    DagNode *n = &L->dag->nodes[node];
    DagValue *val = &L->dag->values[v];
    n->prog.ninstr = ninstr;
    n->prog.code = in;
    n->prog.nregs = ninstr;
    n->prog.result = ninstr - 1;
    n->prog.result_t = rt;
    n->prog.ninputs = 1;
    n->len_from = v;
    n->label = plan_strdup(L->arena, label);
    n->est_rows = val->est_rows;
    int out = plan_dag_out(L->dag, node, 0);
    L->dag->values[out].ltype = val->ltype;
    L->dag->values[out].scale = val->scale;
    L->dag->values[out].dict = val->dict;
    L->dag->values[out].est_rows = val->est_rows;
    return out;
}

int op_convert(Lower *L, int v, PrimType t) {
    if (L->dag->values[v].type == t) return v;
    PrimInstr *in = plan_alloc(L->arena, sizeof(PrimInstr));
    if (!in) return op_fail(L, "out of memory");
    memset(in, 0, sizeof *in);
    int rt = (t == PRIM_F32 || t == PRIM_F64) ? PRIM_REG_F : PRIM_REG_I;
    in->op = POP_COL;
    in->t = (uint8_t)rt;
    return value_map(L, v, in, 1, rt, t, "convert");
}

int op_isnull_value(Lower *L, int v) {
    PrimType vt = L->dag->values[v].type;
    PrimInstr *in = plan_alloc(L->arena, 2 * sizeof(PrimInstr));
    if (!in) return op_fail(L, "out of memory");
    memset(in, 0, 2 * sizeof *in);
    in[0].op = POP_COL;
    in[0].t = (uint8_t)(vt == PRIM_F32 || vt == PRIM_F64 ? PRIM_REG_F : PRIM_REG_I);
    in[1].op = POP_ISNULL;
    in[1].t = in[0].t;
    in[1].dst = 1;
    in[1].a = 0;
    int out = value_map(L, v, in, 2, PRIM_REG_I, PRIM_U8, "is null");
    if (out < 0) return -1;
    DagValue *o = &L->dag->values[out];
    o->ltype = CAT_BOOL;
    o->scale = 0;
    o->dict = NULL;
    return out;
}
