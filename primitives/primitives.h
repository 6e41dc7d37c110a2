/*
 * primitives.h -- the primitive set of gqp's DAG, each as a CPU twin
 * (primitives/cpu/<name>.c, prim_cpu_<name>) and a GPU twin
 * (primitives/gpu/<name>.cu, prim_gpu_<name>) with the same arguments and
 * the same result. CPU twins take host pointers and use ctx->nthreads
 * threads; GPU twins take device pointers and issue their work on
 * ctx->stream without synchronizing, except where a host-side count is
 * returned (documented per function).
 *
 * Memory: primitives write into buffers the caller allocated, sized as each
 * function documents. Where an output size is data-dependent (join pairs)
 * the primitive allocates through ctx->alloc (the executor's allocator /
 * pool) and the caller frees through ctx->free. Temporary storage comes from
 * ctx->alloc as well, never from malloc/cudaMalloc behind the caller's back.
 *
 * All row counts, offsets and sizes are 64-bit. Every function returns 0 on
 * success or -1 on error with a message in ctx->err.
 */
#ifndef GQP_PRIMITIVES_H
#define GQP_PRIMITIVES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum PrimType {
    PRIM_U8 = 0,  /* flags / bool */
    PRIM_I32 = 1, /* INT32, DATE, string codes */
    PRIM_I64 = 2, /* INT64, row ids, counts */
    PRIM_F32 = 3,
    PRIM_F64 = 4
} PrimType;

size_t prim_type_width(PrimType t);

/* A vector: n values of one type, optional validity (NULL = all valid). */
typedef struct PrimVec {
    PrimType type;
    int64_t n;
    void *data;
    uint8_t *valid; /* one byte per value, 1 = present; NULL = no NULLs */
} PrimVec;

typedef struct PrimCtx {
    int nthreads; /* CPU twins: worker threads (>= 1) */
    void *stream; /* GPU twins: cudaStream_t (NULL = default stream) */
    /* The executor's allocator: host memory for CPU twins, device memory for
     * GPU twins. Returns NULL on failure. */
    void *(*alloc)(void *ud, size_t bytes);
    void (*free)(void *ud, void *p);
    void *ud;
    char err[256];
    /* CPU map (its batch loop): when not NULL and *interrupt != 0 (read
     * with __atomic_load_n), stop within 64 batches and fail with
     * "Interrupted" (gqp_interrupt); the executor checks between nodes */
    const int *interrupt;
    /* GPU twins: a word of device-writable memory (mapped pinned host
     * memory) where kernels report a data error without synchronizing: set
     * to 1 on an integer overflow (map, denseagg). The caller reads it after
     * its next synchronization and resets it to 0. NULL: a twin that can
     * find such an error synchronizes and returns -1 itself. CPU twins
     * ignore it (they return -1 with "integer overflow"). */
    int *status;
} PrimCtx;

/* ------------------------------------------------------------------ map --
 * A map node evaluates a whole expression tree per row in one pass, as a
 * small register program (the Virginian "opcodes in one kernel" design).
 * Registers hold either int64 (type I) or double (type F) values plus a
 * NULL flag. Semantics are SQLite's: integer arithmetic in int64, division
 * or modulo by zero gives NULL, comparisons and AND/OR/NOT use three-valued
 * logic, NOT x is (x == 0).
 * Integer overflow (I +, -, *, unary -, INT64_MIN / -1) is an error
 * ("integer overflow") when it reaches a row's result: the error follows
 * the value through every instruction that reads it, except a CASE branch
 * not taken, COALESCE's b when a is not NULL, and AND (OR) with a non-error
 * false (true) operand, whose results do not depend on it (SQLite would not
 * evaluate it). SQLite turns such a value into a REAL instead: the
 * executor's CPU maps do too (prim_cpu_map_reals, below).
 */
typedef enum PrimOp {
    POP_COL,   /* dst = input column ival (converted to dst's type) */
    POP_CONST, /* dst = ival (type I) or fval (type F) */
    POP_NULL,  /* dst = NULL */
    POP_ADD,   /* dst = a + b, in type t (both operands already of type t) */
    POP_SUB,
    POP_MUL,
    POP_DIV, /* I: truncating; NULL if b == 0 (also F, as SQLite) */
    POP_MOD, /* I: C remainder; F: fmod on truncated ints as SQLite; NULL if b == 0 */
    POP_NEG, /* dst = -a; ival 1: ABS's negation or a DECIMAL's, whose overflow stays an
                error (also ival 1 on + - * / %: DECIMAL arithmetic) */
    POP_I2F, /* dst(F) = (double)a(I) */
    POP_F2I, /* dst(I) = (int64)a(F), truncating; ival 1: a is I, dst = a (CAST(integer AS
                INTEGER): a REAL from an overflow, prim_cpu_map_reals, is truncated) */
    POP_EQ,  /* dst(I) = a == b compared in type t, 0/1 or NULL */
    POP_NE,
    POP_LT,
    POP_LE,
    POP_GT,
    POP_GE,
    POP_AND, /* three-valued; operands are I 0/1 (or any: nonzero = true) */
    POP_OR,
    POP_NOT,    /* dst(I) = a == 0 (a of type t), NULL stays NULL */
    POP_ISNULL, /* dst(I) = a is NULL ? 1 : 0, never NULL */
    POP_NOTNULL,
    POP_TRUTH,    /* dst(I) = a != 0 (a of type t), NULL stays NULL */
    POP_CASE,     /* dst = (a not NULL and a != 0) ? b : c, all of type t except a (I) */
    POP_LOOKUP,   /* dst = table[a] for 0 <= a < table_n (a of type I); NULL if a NULL
                     or table value is INT64_MIN: dictionary remaps, LIKE per entry.
                     dst is I, or F when t is PRIM_REG_F: then the entries are the
                     bit patterns of doubles (CAST(text AS REAL) per entry) */
    POP_COALESCE, /* dst = a if not NULL else b, in type t */
    POP_INLIST,   /* dst(I) = a IN set: the set is table[0..table_n), ascending with no
                     duplicates, of int64 values (t I) or of doubles stored in the
                     table's 8-byte slots (t F); ival != 0 says the SQL list also held
                     a NULL. NULL if a is NULL, 1 if a is in the set, else NULL when
                     ival != 0, else 0 (SQL's x IN (list) of constants) */
    POP_LOOKUPV,  /* dst(I) = tab[a] where tab is input column ival (PRIM_U8, its own length
                     m, not the program's row count): NULL if a is NULL or outside
                     0 <= a < m; a per-entry table made when the query runs (LIKE over a
                     dictionary, prim_gpu_likedict) */
    POP_RUNS,     /* dst(I) = the k with table[k] <= a < table[k+1] (table[table_n] read as
                     +inf): table[0..table_n) ascending run starts, table[0] <= every a.
                     NULL if a is NULL or below table[0]. A monotone function of a
                     sorted dictionary's codes with few distinct results (SUBSTR(x, 1,
                     k)): the run starts instead of one entry per code */
    POP_MATH,     /* dst(F) = f(a) of a(F), f by ival (PrimMathFn); NULL when a is NULL or
                     outside f's domain (SQLite's math functions: sqrt of x < 0, a log of
                     x <= 0, any NaN result). SQRT runs on both twins; the others on the
                     CPU twin only: the planner keeps a map holding one on the CPU
                     (plan_node_cpu_only) */
    POP_POW       /* dst(F) = pow(a, b) of F operands (ival 0), or fmod(a, b) (ival 1,
                     SQLite's mod()); NULL when either is NULL or the result is NaN (a
                     negative base with a fractional exponent, a zero divisor). fmod runs
                     on both twins (exact); pow on the CPU twin only */
} PrimOp;

/* The functions of POP_MATH (its ival). */
typedef enum PrimMathFn { PMATH_SQRT = 0, PMATH_EXP, PMATH_LN, PMATH_LOG10, PMATH_LOG2 } PrimMathFn;

enum { PRIM_REG_I = 0, PRIM_REG_F = 1 };

typedef struct PrimInstr {
    uint8_t op; /* PrimOp */
    uint8_t
        t; /* PRIM_REG_I / PRIM_REG_F: operand type (compare, arith), dst type (COL, CONST, CASE) */
    int16_t dst, a, b, c;
    int64_t ival; /* POP_COL: input index; POP_CONST: value */
    double fval;
    const int64_t *table; /* POP_LOOKUP, POP_INLIST, POP_RUNS (host table; the GPU twin gets
                             a device copy) */
    int64_t table_n;
} PrimInstr;

typedef struct PrimProgram {
    int ninstr;
    const PrimInstr *code;
    int nregs;     /* registers 0..nregs-1, at most PRIM_MAX_REGS */
    int result;    /* register holding the result */
    int result_t;  /* PRIM_REG_I / PRIM_REG_F */
    int ninputs;   /* input columns the program reads */
    int as_filter; /* 1: out is PRIM_U8 flags, 1 where result is non-NULL and != 0 */
    int nocheck;   /* 1: the planner proved (column bounds) that no integer op of the
                      program overflows int64: the GPU twin runs without tracking it */
} PrimProgram;

#define PRIM_MAX_REGS 64

/* REAL rows of an integer vector. SQLite switches an integer result that
 * overflows int64 to REAL; where is[i] != 0, row i's value is the REAL
 * val[i], and its int64 slot holds val[i] truncated toward zero
 * (saturating: what reading it as an INTEGER gives). val and is have the
 * vector's length; is == NULL: no REAL row. */
typedef struct PrimReals {
    double *val;
    uint8_t *is;
} PrimReals;

/* SQLite's exact comparison of integer i with double f (no rounding of i):
 * -1, 0 or 1. f is not NaN. */
int prim_cmp_int_real(int64_t i, double f);
/* f truncated toward zero as int64, saturating at the int64 range; NaN
 * gives 0 (SQLite's CAST(real AS INTEGER)). Never undefined behaviour. The
 * one host copy of the rule: the CPU map's F2I, the binder's folding
 * (bx_f2i), the executor and the API use it. */
static inline int64_t prim_real_to_int(double f) {
    if (f >= 9223372036854775808.0) return INT64_MAX;
    if (f >= -9223372036854775808.0) return (int64_t)f;
    return f < 0 ? INT64_MIN : 0; /* below the range, or NaN */
}

/* 1 if prog holds an instruction only the CPU twin runs (POP_MATH other than
 * SQRT, POP_POW's pow). */
int prim_prog_cpu_only(const PrimProgram *prog);
/* 1 if input k of prog is a POP_LOOKUPV table (indexed by value, not by
 * row: a caller splitting the rows over threads passes it whole), else 0. */
int prim_prog_table_input(const PrimProgram *prog, int k);

/* Evaluate prog over rows 0..n-1 of inputs[0..prog->ninputs) (each with at
 * least n values) into out (caller-allocated, n values of out->type; the
 * result register is converted to out->type). If out->valid is not NULL it
 * receives validity bytes; if it is NULL, NULL results are written as 0. */
int prim_cpu_map(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs, int64_t n,
                 PrimVec *out);
/* prim_cpu_map with SQLite's switch to REAL: an integer + - * / or unary -
 * that overflows on a row gives the REAL SQLite computes, and what reads
 * it follows SQLite's rules for a REAL operand (doubles; comparisons by
 * value; CAST AS INTEGER, POP_F2I with ival 1, truncates). in_reals: NULL,
 * or one per input (is NULL for an input without REAL rows). When a REAL
 * reaches the result of an I program stored as PRIM_I64, out_reals->val
 * and ->is are allocated through ctx->alloc and filled (the caller frees
 * them); they are NULL when no row's result is a REAL. A filter takes the
 * REAL's truth, an F64 output its value. Still "integer overflow": ABS of
 * INT64_MIN (POP_NEG with ival 1, as SQLite), a REAL as a dictionary code,
 * an I result stored narrower than int64. CPU only: the GPU twin reports
 * the overflow (PrimCtx.status) and the executor runs the query again on
 * the CPU. */
int prim_cpu_map_reals(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs,
                       const PrimReals *in_reals, int64_t n, PrimVec *out, PrimReals *out_reals);

/* --------------------------------------------------------------- select --
 * A filter's map -> scan -> scatter chain fused into one primitive: rowids
 * (capacity n) receives, in order, the rows 0..n-1 where the filter program
 * prog (as_filter) is true, and *count (host) their number. Needs no
 * offsets array; the executor runs it in place of the three nodes when
 * nothing else reads the flags or the offsets. The GPU twin synchronizes
 * its stream to return *count. */
int prim_cpu_select(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs, int64_t n,
                    int64_t *rowids, int64_t *count);

/* ----------------------------------------------------------------- scan --
 * Exclusive prefix sum of in (PRIM_U8, PRIM_I32 or PRIM_I64, n values) into
 * out[0..n) (int64); *total (host) = sum of all. The GPU twin synchronizes
 * its stream to return *total. */
int prim_cpu_scan(PrimCtx *ctx, const PrimVec *in, int64_t n, int64_t *out, int64_t *total);

/* -------------------------------------------------------------- scatter --
 * For every i in 0..n-1 with flags == NULL or flags[i] != 0:
 * dst[idx[i]] = src ? src[i] : i (row id, dst must be PRIM_I64). dst's type
 * equals src's; validity is scattered too when both have it. */
int prim_cpu_scatter(PrimCtx *ctx, const PrimVec *src, const uint8_t *flags, const int64_t *idx,
                     int64_t n, PrimVec *dst);

/* --------------------------------------------------------------- gather --
 * dst[i] = src[idx[i]] for i in 0..n-1; idx[i] < 0 gives NULL (dst->valid
 * must then be allocated). dst->valid (if not NULL) receives validity. */
int prim_cpu_gather(PrimCtx *ctx, const PrimVec *src, const int64_t *idx, int64_t n, PrimVec *dst);

/* ----------------------------------------------------------------- sort --
 * perm[0..n) = the stable permutation that orders rows by keys[0..nkeys)
 * lexicographically; desc[k] != 0 sorts key k descending. NULLs sort first
 * ascending and last descending (SQLite). Float keys compare numerically. */
int prim_cpu_sort(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys, int64_t n,
                  int64_t *perm);

/* Rows [offset, offset + cnt) of prim_cpu_sort's permutation, cnt =
 * prim_range_rows(n, offset, limit) (limit < 0: to the end), into perm
 * (capacity cnt) and *nout = cnt: ORDER BY ... LIMIT / OFFSET. When cnt is
 * at most a quarter of n, a radix select on the first key keeps the rows
 * whose key can fall in the range (plus ties) and only those are sorted;
 * the result equals the full sort's slice, ties included. GQP_TOPK=0 always
 * sorts every row (for A/B timing); GQP_TOPK=force selects at any size. */
int prim_cpu_sort_range(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys,
                        int64_t n, int64_t offset, int64_t limit, int64_t *perm, int64_t *nout);
/* GQP_TOPK as both twins of the range sort read it (once): 0 ("0" / "off":
 * sort every row), 1 (unset or anything else: by size), 2 ("force"). */
int prim_topk_mode(void);
/* Rows in [offset, offset + limit) of n (limit < 0: to the end), offset >= 0. */
int64_t prim_range_rows(int64_t n, int64_t offset, int64_t limit);

/* ------------------------------------------------------------- segments --
 * Rows 0..n-1 of keys are sorted (equal keys adjacent). Writes the first row
 * of each run of equal keys (NULLs equal each other) to starts (capacity n)
 * and their count to *nseg (host; the GPU twin synchronizes). n == 0 gives
 * 0 segments. */
int prim_cpu_segments(PrimCtx *ctx, const PrimVec *keys, int nkeys, int64_t n, int64_t *starts,
                      int64_t *nseg);

/* ---------------------------------------------------------- segment rank --
 * Rows 0..n-1 in segments starting at starts[0..nseg) (ascending, starts[0]
 * = 0 when n > 0: prim_cpu_segments' output): out[i] (n values) = i's
 * 1-based position in its segment, i - starts[s] + 1 -- ROW_NUMBER() over
 * sorted partitions. */
int prim_cpu_segrank(PrimCtx *ctx, const int64_t *starts, int64_t nseg, int64_t n, int64_t *out);

/* ------------------------------------------------------- segmented-reduce --
 * Segment s covers rows starts[s] .. starts[s+1]-1 (the last ends at n).
 * out (caller-allocated, nseg values, with valid allocated for all but
 * COUNT) receives per segment:
 *   AGG_COUNT_STAR: rows (I64)           AGG_COUNT: non-NULL values (I64)
 *   AGG_SUM: I64 for integer val, F64 for float val; NULL if no value
 *   AGG_MIN / AGG_MAX: I64 or F64 as val; NULL if no value
 *   AGG_AVG: F64 mean of non-NULL values; NULL if none
 * A global aggregate is one segment with starts[0] = 0 (also when n == 0). */
typedef enum PrimAgg { AGG_COUNT_STAR, AGG_COUNT, AGG_SUM, AGG_MIN, AGG_MAX, AGG_AVG } PrimAgg;
int prim_cpu_segreduce(PrimCtx *ctx, PrimAgg agg, const PrimVec *val, const int64_t *starts,
                       int64_t nseg, int64_t n, PrimVec *out);
/* The same with nocheck = 1 when the planner proved (column bounds) that
 * no integer SUM / AVG sum overflows int64: the twins skip the overflow
 * test (the GPU twin its synchronization to report one). With nocheck = 0
 * it is prim_cpu_segreduce / prim_gpu_segreduce. */
int prim_cpu_segreduce_ex(PrimCtx *ctx, PrimAgg agg, int nocheck, const PrimVec *val,
                          const int64_t *starts, int64_t nseg, int64_t n, PrimVec *out);

/* ----------------------------------------------------------------- join --
 * Equi-join: all pairs (i, j) with lkey[i] == rkey[j] (both non-NULL; lkey
 * and rkey have the same type), i in 0..nl-1, j in 0..nr-1. out->left and
 * out->right are allocated through ctx->alloc (freed by the caller through
 * ctx->free; NULL when out->n == 0). Pairs come ordered by i, then j. A hash
 * table is built on the smaller side. */
typedef struct PrimPairs {
    int64_t n;
    int64_t *left;
    int64_t *right;
} PrimPairs;
int prim_cpu_join(PrimCtx *ctx, const PrimVec *lkey, int64_t nl, const PrimVec *rkey, int64_t nr,
                  PrimPairs *out);

/* Cross product: all nl * nr pairs, ordered by i then j; allocated as
 * prim_cpu_join's. */
int prim_cpu_cross(PrimCtx *ctx, int64_t nl, int64_t nr, PrimPairs *out);

/* --------------------------------------------------------------- keymap --
 * Direct-address map of a (filtered) dimension by its key, the build side
 * of a star join on a dense integer key: out[0..range) (I64, caller-
 * allocated) = -1, then for every i in 0..n-1 whose key (I32 or I64) is
 * not NULL and lies in [kmin, kmin + range): out[key[i] - kmin] =
 * rows ? rows[i] : i. The planner uses it only on unique keys; should two
 * rows share a key anyway, the larger row id wins (the same on both twins). */
int prim_cpu_keymap(PrimCtx *ctx, const PrimVec *key, const int64_t *rows, int64_t n, int64_t kmin,
                    int64_t range, int64_t *out);
/* The same over a whole dimension with its filter as flags (U8, n values):
 * only rows i with flags[i] != 0 enter, as out[key[i] - kmin] = i. Saves
 * the compaction (and its host-side count) between filter and keymap. */
int prim_cpu_keymap_where(PrimCtx *ctx, const PrimVec *key, const uint8_t *flags, int64_t n,
                          int64_t kmin, int64_t range, int64_t *out);

/* ------------------------------------------------------------- denseagg --
 * Filter -> star-join probe -> GROUP BY aggregation fused into one pass
 * over the rows of a fact table, accumulating into a dense table of
 * ngroups groups (direct addressing by group code: the "few groups" hash
 * aggregation, and the fused probe + aggregate of ../shared/DESIGN.md §3).
 * Every column is an input vector in[k]; the spec names them by index.
 *
 * For each fact row r (r = in[rows].data[i] for i < n when rows >= 0, else
 * r = i for i < n):
 *  1. range filters: for each f < nranges the row is dropped unless
 *     in[range_col[f]][r] is not NULL and range_lo[f] <= it <= range_hi[f];
 *  2. joins: for each dimension d < ndims, k = in[dim_fk[d]][r]; the row is
 *     dropped if k is NULL, k - dim_kmin[d] is outside [0, dim_range[d]) or
 *     m = in[dim_map[d]][k - dim_kmin[d]] (a keymap, I64) is -1; otherwise
 *     the row joins dimension row rd[d] = m;
 *  3. group code: for each key j < nkeys, v = in[key_col[j]] at row r
 *     (key_dim[j] == -1) or at rd[key_dim[j]]; code_j = 0 if v is NULL,
 *     else v - key_min[j] + 1 (the planner guarantees 1 <= code_j <
 *     key_card[j]); g = sum_j code_j * stride_j with the last key's stride
 *     1 and stride_j = stride_{j+1} * key_card[j+1] (so ascending g is
 *     ascending key order with NULLs first, like a sort);
 *  4. aggregates: for each a < naggs, the value is nothing (val_a[a] == -1,
 *     COUNT(*)), in[val_a[a]][r], or in[val_a[a]][r] OP in[val_b[a]][r] with
 *     val_op[a] one of '+', '-', '*' (wrapping int64; NULL if either is
 *     NULL).
 * Outputs (caller-allocated, ngroups I64 values each, no validity):
 *   out[0]         rows per group;
 *   out[1 + 2a]    AGG_COUNT_STAR / AGG_COUNT: count of non-NULL values
 *                  (COUNT(*): rows), AGG_SUM: wrapping int64 sum, AGG_MIN /
 *                  AGG_MAX: min / max (INT64_MAX / INT64_MIN if none);
 *   out[2 + 2a]    non-NULL values of aggregate a.
 * Only integer inputs (U8, I32, I64). AVG is SUM / count, done by the
 * caller. Results do not depend on thread count or order. */
#define PRIM_DA_MAX 8 /* ranges, dimensions, keys and aggregates, each */
typedef struct PrimDenseAgg {
    int rows; /* input index of I64 fact row ids, or -1 */
    int nranges;
    int range_col[PRIM_DA_MAX];
    int64_t range_lo[PRIM_DA_MAX], range_hi[PRIM_DA_MAX];
    int ndims;
    int dim_fk[PRIM_DA_MAX], dim_map[PRIM_DA_MAX];
    int64_t dim_kmin[PRIM_DA_MAX], dim_range[PRIM_DA_MAX];
    int nkeys;
    int key_col[PRIM_DA_MAX], key_dim[PRIM_DA_MAX];
    int64_t key_min[PRIM_DA_MAX], key_card[PRIM_DA_MAX];
    int naggs;
    PrimAgg agg[PRIM_DA_MAX];
    int val_a[PRIM_DA_MAX], val_b[PRIM_DA_MAX];
    char val_op[PRIM_DA_MAX];
    int64_t ngroups; /* product of key_card (1 without keys) */
    int nocheck;     /* 1: the planner proved (column bounds) that no SUM and no
                        a OP b overflows int64: both twins skip the checks */
} PrimDenseAgg;
/* Number of outputs of a denseagg with naggs aggregates. */
#define PRIM_DA_NOUT(naggs) (1 + 2 * (naggs))
int prim_cpu_denseagg(PrimCtx *ctx, const PrimDenseAgg *spec, const PrimVec *in, int64_t n,
                      PrimVec *out);
/* The spec check both twins run first (primitives/cpu/denseagg.c):
 * validates spec, inputs and outputs against the contract above and fills
 * stride[0..nkeys) with the keys' strides. Returns 0, or -1 with a message. */
int prim_denseagg_check(PrimCtx *ctx, const PrimDenseAgg *spec, const PrimVec *in, int64_t n,
                        const PrimVec *out, int64_t *stride);

/* ------------------------------------------------------------ GPU twins --
 * Same contracts with device pointers; declared here so the executor can
 * dispatch on a node's placement. In a build without CUDA they return -1
 * with "built without CUDA". */
int prim_gpu_available(void); /* 1 if a device is present and usable */
int prim_gpu_map(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs, int64_t n,
                 PrimVec *out);
int prim_gpu_scan(PrimCtx *ctx, const PrimVec *in, int64_t n, int64_t *out, int64_t *total);
int prim_gpu_select(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs, int64_t n,
                    int64_t *rowids, int64_t *count);
int prim_gpu_scatter(PrimCtx *ctx, const PrimVec *src, const uint8_t *flags, const int64_t *idx,
                     int64_t n, PrimVec *dst);
int prim_gpu_gather(PrimCtx *ctx, const PrimVec *src, const int64_t *idx, int64_t n, PrimVec *dst);
int prim_gpu_sort(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys, int64_t n,
                  int64_t *perm);
/* The GPU twin selects on the first key's image as the CPU twin does (from
 * PRIM_GPU_TOPK_MIN_ROWS rows with a range of at most a quarter of them; primitives/gpu/
 * sort_join.cu), sorts only the candidates, and synchronizes for their
 * count; smaller inputs sort every row and copy the range. */
#define PRIM_GPU_TOPK_MIN_ROWS (1 << 20)
int prim_gpu_sort_range(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys,
                        int64_t n, int64_t offset, int64_t limit, int64_t *perm, int64_t *nout);
int prim_gpu_segments(PrimCtx *ctx, const PrimVec *keys, int nkeys, int64_t n, int64_t *starts,
                      int64_t *nseg);
int prim_gpu_segrank(PrimCtx *ctx, const int64_t *starts, int64_t nseg, int64_t n, int64_t *out);
int prim_gpu_segreduce(PrimCtx *ctx, PrimAgg agg, const PrimVec *val, const int64_t *starts,
                       int64_t nseg, int64_t n, PrimVec *out);
int prim_gpu_segreduce_ex(PrimCtx *ctx, PrimAgg agg, int nocheck, const PrimVec *val,
                          const int64_t *starts, int64_t nseg, int64_t n, PrimVec *out);
/* The device scratch prim_gpu_segreduce takes for one segment of n rows
 * (CUB's temporary space, sized by the device's multiprocessors rather
 * than by n once n is large, plus its partial); 0 without a device. */
size_t prim_gpu_segreduce_scratch(int64_t n);
int prim_gpu_join(PrimCtx *ctx, const PrimVec *lkey, int64_t nl, const PrimVec *rkey, int64_t nr,
                  PrimPairs *out);
int prim_gpu_cross(PrimCtx *ctx, int64_t nl, int64_t nr, PrimPairs *out);
int prim_gpu_keymap(PrimCtx *ctx, const PrimVec *key, const int64_t *rows, int64_t n, int64_t kmin,
                    int64_t range, int64_t *out);
int prim_gpu_keymap_where(PrimCtx *ctx, const PrimVec *key, const uint8_t *flags, int64_t n,
                          int64_t kmin, int64_t range, int64_t *out);
int prim_gpu_denseagg(PrimCtx *ctx, const PrimDenseAgg *spec, const PrimVec *in, int64_t n,
                      PrimVec *out);
/* LIKE over the n strings of a dictionary (device copies of CatDict's bytes
 * and n + 1 offsets, or of a piece of them: bytes holds the text from
 * offsets[0] on): out[i] (device, n bytes) = 1 when string i LIKE
 * pattern (host text; SQLite's rules: `%`, `_` one UTF-8 character, ASCII
 * letters case-insensitive, as planner/like.c), else 0; negated flips it.
 * Asynchronous on ctx's stream. */
int prim_gpu_likedict(PrimCtx *ctx, const char *bytes, const int64_t *offsets, int64_t n,
                      const char *pattern, int negated, uint8_t *out);

/* CPU worker helper shared by the CPU twins: run fn(arg, t, nthreads) on
 * nthreads threads (t = 0..nthreads-1) and wait. Returns 0 or -1. */
int prim_parallel(int nthreads, void (*fn)(void *arg, int t, int nt), void *arg);
/* Number of online cores. */
int prim_ncores(void);

/* ------------------------------------------------------ device runtime --
 * What the executor needs of the CUDA runtime, so that host C code never
 * includes CUDA headers (primitives/gpu/runtime.cu; without CUDA,
 * runtime_nocuda.c where every call fails with "built without CUDA").
 * Functions returning int give 0 or -1 with a "Device Error: ..." message
 * in err (cap bytes).
 */
typedef enum PrimCopyKind { PRIM_H2D, PRIM_D2H, PRIM_D2D } PrimCopyKind;
/* Name and memory of device 0 into buf ("NVIDIA H100 80GB HBM3, 79.1 GiB"). */
int prim_gpu_describe(char *buf, size_t cap);
/* New non-blocking stream (NULL on failure) and its release. */
void *prim_gpu_stream_create(void);
void prim_gpu_stream_destroy(void *stream);
/* Stream-ordered device allocation from the device's memory pool (kept
 * reserved between queries); NULL on failure. */
void *prim_gpu_malloc(size_t bytes, void *stream);
void prim_gpu_free(void *p, void *stream);
/* Asynchronous copy on stream (pinned host memory makes H2D/D2H truly
 * asynchronous; pageable memory is staged by the driver). */
int prim_gpu_copy(void *dst, const void *src, size_t bytes, PrimCopyKind kind, void *stream,
                  char *err, size_t cap);
/* Asynchronous fill of bytes of device memory dst with the byte value on
 * stream (cudaMemsetAsync). */
int prim_gpu_memset(void *dst, int value, size_t bytes, void *stream, char *err, size_t cap);
/* Wait for everything issued on stream. */
int prim_gpu_sync(void *stream, char *err, size_t cap);
/* The calling thread's running totals: kernels launched by gqp's own code
 * (not those CUB and Thrust launch inside), host waits for the device
 * (stream and device synchronizations) and the milliseconds spent in them;
 * zeros without CUDA. Differences around a node are its share. */
void prim_gpu_host_counters(int64_t *launches, int64_t *waits, double *wait_ms);
/* Page-locked host memory (cudaHostAlloc) for buffers that cross PCIe;
 * NULL on failure. */
void *prim_gpu_pinned_alloc(size_t bytes);
void prim_gpu_pinned_free(void *p);
/* Zeroed page-locked host memory mapped into the device's address space
 * (for PrimCtx.status): returns the host pointer, the device pointer in
 * *dev; NULL on failure. Free with prim_gpu_pinned_free. */
void *prim_gpu_mapped_alloc(size_t bytes, void **dev);
/* Page-lock an existing host range (for table columns), or undo it. */
int prim_gpu_host_register(void *p, size_t bytes, char *err, size_t cap);
void prim_gpu_host_unregister(void *p);
/* The device address of byte offset of a host range page-locked from base
 * by prim_gpu_host_register (registered mapped): kernels read it in place,
 * across PCIe (zero-copy). 0, or -1 with err set. */
int prim_gpu_host_device_ptr(const void *base, size_t offset, void **dev, char *err, size_t cap);
/* Ordering events between streams: mark records a (non-timing) event on
 * stream; wait makes stream wait for it. NULL events are ignored. */
void *prim_gpu_event_mark(void *stream);
int prim_gpu_stream_wait(void *stream, void *ev, char *err, size_t cap);
/* Events for timing: record on stream, then milliseconds between two. */
void *prim_gpu_event_record(void *stream);
float prim_gpu_event_ms(void *start, void *stop); /* syncs on stop; -1 on error */
void prim_gpu_event_destroy(void *ev);
/* High-water mark of the pool's used bytes since the last reset (reset
 * != 0 resets it after reading). 0 on error. */
size_t prim_gpu_pool_peak(int reset);
/* Device memory: *total bytes, and *free bytes an allocation can still get
 * (free on the device plus what the stream-ordered pool holds unused).
 * 0, or -1 (both 0) without a device. */
int prim_gpu_mem_info(size_t *free_bytes, size_t *total_bytes);
/* Measure bandwidths in GB/s with buffers of `bytes`: a device-to-device
 * copy counting bytes read + written, and pinned host->device and
 * device->host copies (median of 5 after a warm-up, CUDA events). */
int prim_gpu_bandwidth(size_t bytes, double *d2d, double *h2d, double *d2h, char *err, size_t cap);
/* Device-wide synchronization and last error check (for the end of a run). */
int prim_gpu_device_sync(char *err, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* GQP_PRIMITIVES_H */
