/*
 * planner.h -- binder, bound expressions, the logical plan of a SELECT
 * block, its rewrites (predicate pushdown, join order), and the primitive
 * DAG that every later stage trades in (with its EXPLAIN renderers).
 *
 * The planner runs nothing and includes nothing from operators/, cost/ or
 * executor/.
 */
#ifndef GQP_PLANNER_H
#define GQP_PLANNER_H

#include <stdint.h>

#include "catalog/catalog.h"
#include "primitives/primitives.h"
#include "sqlfront/sqlfront.h"

/* Error of the planning stages: message with stage prefix and byte offset. */
typedef struct PlanError {
    char stage[16]; /* "Binder", "Not implemented", ... */
    char msg[512];
    int64_t offset; /* into the SQL text, -1 if none */
} PlanError;

/* ------------------------------------------------------ bound expressions --
 * A bound expression is typed. Columns are (slot, col): slot indexes the
 * relations of the scope (FROM position before aggregation; 0 after it,
 * whose columns are the group keys followed by the aggregates). STRING
 * values are int32 codes into `dict`, a sorted dictionary, so comparisons
 * on codes are comparisons on text; literals get one-entry dictionaries and
 * the binder unifies dictionaries with POP_LOOKUP remaps where two meet. */
typedef enum BExprKind {
    BE_CONST,    /* ival / fval by type; is_null for NULL */
    BE_COL,      /* slot, col */
    BE_UNARY,    /* op (OP_NEG, OP_NOT), a */
    BE_BINARY,   /* op (arith, compare, AND, OR), a, b */
    BE_ISNULL,   /* a; negated for IS NOT NULL */
    BE_CASE,     /* a ? b : c (a boolean) */
    BE_COALESCE, /* a if not NULL else b */
    BE_CAST,     /* a converted to type (numeric <-> numeric) */
    BE_TRUTH,    /* a != 0 as BOOL (numeric used as a condition) */
    BE_LOOKUP,   /* table[a] (a is a STRING code): remaps and LIKE */
    BE_AGG,      /* aggregate call (only before rewriting into the agg scope);
                    ival = an AggQuant, fval its fraction q, ttext
                    group_concat's separator */
    BE_TOTEXT,   /* CAST(number AS TEXT) of a non-constant number: its text
                    exists only when the query runs (dict NULL); tuse says
                    what is made of it (TextUse) */
    BE_INLIST,   /* a IN (constants), BOOL: table[0..table_n) is the ascending set of
                    distinct values in a's value space (int64; doubles in the slots
                    when a is float-typed; codes of a's dictionary for STRING), ival 1
                    when the list held a NULL (POP_INLIST's semantics) */
    BE_DICTLIKE, /* a [NOT] LIKE ttext (negated), BOOL, a a STRING column of a table
                    whose dictionary dict is large (plan_dictlike_min): the per-entry
                    table is made when the query runs (DN_DICTLIKE, either device),
                    not at bind time; fval: the share of entries that match (sampled) */
    BE_RUNS      /* STRING: the run of a's code (a a STRING expression with a sorted
                    dictionary) among table[0..table_n), the ascending first codes of
                    runs of entries with equal results (table[0] = 0), whose results
                    are dict's entries in order: SUBSTR(x, 1, k) over a large
                    dictionary (fn_map_dict) without a table of one code per entry
                    (POP_RUNS) */
} BExprKind;

/* What a BE_TOTEXT node (and the CPU-only DN_TOTEXT it lowers to) makes of
 * the text of each number. A dictionary built at run time cannot meet the
 * binder's per-dictionary tables, so the one consumer of that text that
 * needs a dictionary is fused into the node and runs on the text itself:
 *
 *   tuse      type    value per row (NULL number -> NULL, except tnull)
 *   TU_TEXT   STRING  codes into a dictionary built at run time; a NULL
 *                     number gives the text tnull when set (COALESCE)
 *   TU_INT    INT64   CAST(text AS INTEGER)  (cat_text_to_int64)
 *   TU_REAL   FLOAT64 CAST(text AS REAL)     (cat_text_to_real)
 *   TU_LIKE   BOOL    text LIKE ttext, or LIKE the STRING expression b
 *                     when b is set (NULL if it is NULL); NOT LIKE when
 *                     negated
 *   TU_CMP    BOOL    text <op> ttext, or <op> the STRING expression b
 *                     (a dictionary of bind time) when b is set, in byte
 *                     order (SQLite's BINARY); NULL if either is NULL
 *   TU_GCONCAT STRING (DN_TOTEXT only, group_concat): inputs the values
 *                     in group order and the group starts; per group the
 *                     text of its non-NULL values joined by ttext, NULL
 *                     when none, codes into a dictionary built at run time
 * A STRING input (group_concat's result) reads as its own text. */
typedef enum TextUse { TU_TEXT = 0, TU_INT, TU_REAL, TU_LIKE, TU_CMP, TU_GCONCAT } TextUse;

typedef struct BExpr {
    BExprKind kind;
    CatType type;
    AstOp op;
    int negated;
    int is_null;
    int64_t ival;
    double fval;
    int slot, col;
    struct BExpr *a, *b, *c;
    const int64_t *table; /* BE_LOOKUP, BE_INLIST, BE_RUNS, owned by the plan's arena */
    int64_t table_n;
    const CatDict *dict; /* STRING-typed expressions */
    PrimAgg agg;         /* BE_AGG */
    int agg_star;        /* COUNT(*) */
    int agg_distinct;    /* COUNT(DISTINCT x) etc. */
    int64_t pos;         /* source offset for messages */
    TextUse tuse;        /* BE_TOTEXT (op, negated as above) */
    const char *ttext;   /* BE_TOTEXT: LIKE pattern / comparison constant */
    const char *tnull;   /* BE_TOTEXT TU_TEXT: text of a NULL number, or NULL */
    /* BE_TOTEXT: when tpair[0] is set, a is not a number but the pair
     * index x * |tpair[1]| + y of the codes of two STRING expressions, and
     * its text is tpair[0][x] || tpair[1][y] (x || y beyond the pairs
     * table's limit, made when the query runs) */
    const CatDict *tpair[2];
    /* INT and REAL branches meet (SQLite keeps the taken branch's type):
     * on a BE_CAST, the cast the binder put on an integer branch of a
     * CASE / COALESCE to give it the REAL result type; on a BE_CASE /
     * BE_COALESCE, that some branch is such a cast (or itself mixed). The
     * binder distributes / and friends into such branches (bind.c). */
    int mixed;
    /* A CASE made by that distribution: the operator applied to the mixed
     * value as a whole (REAL), for where the branches cannot be reached
     * (the mixed value is a GROUP BY key); NULL otherwise. */
    struct BExpr *orig;
    /* type DECIMAL: the value is an int64 scaled by 10^scale, declared
     * DECIMAL(prec, scale) (prec matters to CAST; results of arithmetic
     * carry CAT_DEC_MAX_PREC) */
    int prec, scale;
    int float_lit; /* a FLOAT64 constant written as a literal (0.05): exact as
                      a DECIMAL where it meets one (DuckDB types it DECIMAL);
                      2: folded from literals (0.06 + 0.01), its exact decimal
                      value is ival at scale */
} BExpr;

/* A relation of the FROM list. */
typedef struct BRel {
    CatTable *table;
    char *alias;     /* name used for qualification (alias or table name) */
    BExpr **filters; /* conjuncts that read only this relation (pushed down) */
    int nfilters;
    int64_t est_rows; /* after its filters */
    /* outer = 1: this relation is LEFT JOINed to the relations before it in
     * join_order (its columns are NULL for their unmatched rows); on[0..non)
     * are the ON conjuncts that do not read only this relation (those are
     * filters); WHERE conjuncts that read it are preds, not filters. */
    int outer;
    int full;   /* outer and FULL JOIN: the left rels are outer too (the first
                   join) or padded (a later one); no ON conjunct is pushed down */
    int right;  /* outer and a RIGHT JOIN after other joins: this relation's
                   rows are kept, the rows joined so far padded */
    int padded; /* a later RIGHT / FULL JOIN may pad this relation's rows with
                   NULLs: its WHERE conjuncts run after that join */
    BExpr **on;
    int non;
    /* NATURAL JOIN / USING: the equalities it stands for (AST, arena) and
     * the columns it merges into the left table's (hidden[c] = 1: not
     * found by an unqualified name or SELECT *); NULL when none */
    struct AstExpr *using_on;
    uint8_t *hidden;
    /* a column of this (left) relation merged by a RIGHT or FULL JOIN's
     * USING / NATURAL with the joined table's copy: merged[c] is the AST
     * COALESCE(this.c, joined.c) that an unqualified name or SELECT *
     * stands for (either side may be the padded one); NULL when none */
    struct AstExpr **merged;
    /* semi = 1 (SEMI JOIN) / 2 (ANTI JOIN): the rows joined so far are kept
     * when some row (SEMI) or no row (ANTI) of this relation satisfies
     * on[0..non); this relation adds no columns to the result. Semi
     * relations come last in join_order. */
    int semi;
    /* A derived table planned inline: its bound SELECT, lowered into the
     * same DAG where the relation is scanned; table is then a description
     * (names, types, dictionaries, estimated rows; no data, no stats). */
    struct BSelect *sub;
} BRel;

/* A conjunct that reads two or more relations. rels is a bit mask over
 * FROM positions (joins of up to 64 relations). Equi-joins have lkey/rkey
 * over one relation each (lrel/rrel). */
typedef struct BPred {
    BExpr *expr;
    uint64_t rels;
    int is_equi;
    int lrel, rrel;
    BExpr *lkey, *rkey;
    int used;
} BPred;

/* An order statistic (DuckDB's MEDIAN / QUANTILE_CONT / QUANTILE_DISC)
 * in place of agg: over the n non-NULL values of the group in ascending
 * order v[0..n) (NULL when n == 0),
 *   AQ_CONT  v[lo] + (v[hi] - v[lo]) * d as DOUBLE, where r = (n-1)*q,
 *            lo = floor(r), hi = ceil(r), d = r - lo  (MEDIAN: q = 0.5)
 *   AQ_DISC  v[max(ceil(n*q), 1) - 1], of the argument's type
 *   AQ_CONCAT SQLite's group_concat(x, sep): the text of the non-NULL
 *            values in input order joined by sep (NULL when none), a
 *            STRING made at run time by a CPU-only DN_TOTEXT (TU_GCONCAT)
 * Lowered by the sort plan only (operators/quantile.c). */
typedef enum AggQuant { AQ_NONE = 0, AQ_CONT, AQ_DISC, AQ_CONCAT } AggQuant;

typedef struct BAgg {
    PrimAgg agg;
    BExpr *arg; /* NULL for COUNT(*) */
    CatType type;
    int scale;       /* type DECIMAL: its scale */
    int distinct;    /* aggregate over the distinct non-NULL values of arg */
    AggQuant quant;  /* an order statistic (agg then unused) */
    double q;        /* its fraction, 0..1 */
    const char *sep; /* AQ_CONCAT: the separator */
} BAgg;

/*
 * The logical plan of one SELECT block, in evaluation order:
 *   scan rels (with pushed-down filters) -> joins in join_order with preds
 *   -> group by / aggregates -> having -> project -> distinct -> order by
 *   -> offset/limit.
 */
typedef struct BSelect {
    int nrels;
    BRel *rels;
    int npreds;
    BPred *preds;
    int *join_order; /* permutation of 0..nrels-1 chosen by the rewriter */
    int has_outer;   /* some rel is outer: join_order is the written order (RIGHT
                        JOIN of the first two tables swaps them) */
    int has_semi;    /* some rel is a SEMI / ANTI JOIN (BRel.semi) */
    int late_where;  /* > 0: the last RIGHT / FULL JOIN after other joins (the
                        WHERE conjuncts on padded rels wait for it) */
    int has_sub;     /* some rel is a derived table planned inline (BRel.sub) */

    int has_agg; /* GROUP BY or any aggregate */
    int ngroup;
    BExpr **group; /* base scope */
    int naggs;
    BAgg *aggs;
    BExpr *having; /* agg scope */

    int nout;
    BExpr **out; /* agg scope if has_agg else base scope */
    char **out_names;
    int distinct;
    int norder;
    BExpr **order; /* same scope as out */
    uint8_t *order_desc;
    int *order_out; /* index of the output column equal to the key, or -1 */
    int64_t limit;  /* -1 = none */
    int64_t offset; /* 0 = none */
    int rank_keys;  /* > 0: out[nout-1] is the row number among the rows equal on
                       the first rank_keys ORDER BY keys (AstSelect.rank_keys) */
    int64_t est_groups;

    /* A compound SELECT (UNION [ALL] / INTERSECT / EXCEPT) when narms > 0:
     * arms[0..narms) are the bound cores (without ORDER BY / LIMIT), each
     * with nout columns whose types and dictionaries the binder unified
     * across arms (as CASE branches); arm_op[i] (i >= 1) is the AstSetOp
     * combining the result so far with arms[i] (left-associative). Of this
     * block then only nout, out (arms[0]'s), out_names, norder, order_desc,
     * order_out (every key an output column), limit and offset count. */
    int narms;
    struct BSelect **arms;
    uint8_t *arm_op;
} BSelect;

/* Arena for everything of one plan (bound expressions, tables, names). */
typedef struct PlanArena PlanArena;
PlanArena *plan_arena_new(void);
void plan_arena_free(PlanArena *a);
void *plan_alloc(PlanArena *a, size_t bytes); /* zeroed; NULL on failure */
char *plan_strdup(PlanArena *a, const char *s);
/* Hand a dictionary to the arena (freed with it). 0, or -1 (d freed). */
int plan_arena_own_dict(PlanArena *a, CatDict *d);
/* A slot for what planning computed once per arena and reuses (the
 * string functions' per-entry results, planner/funcs.c): NULL at first. */
void **plan_arena_memo(PlanArena *a);

/*
 * Bind a parsed SELECT against the catalog: resolve names (Binder Error on
 * unknown / ambiguous names with the byte offset), type every expression,
 * split WHERE into conjuncts and push single-relation ones to their scan,
 * collect aggregates, and choose the join order (plan_rewrite). The result
 * lives in arena. Returns 0 or -1 with err filled.
 */
int plan_bind_select(const Catalog *cat, const char *sql, const AstSelect *sel, PlanArena *arena,
                     BSelect **out, PlanError *err);

/* Rewrites on a bound block: estimate each relation's rows after its
 * filters and order the joins greedily by estimated cardinality along the
 * join graph (cross products last), writing b->join_order (which the caller
 * allocated with nrels entries). Called by plan_bind_select. */
void plan_rewrite(BSelect *b);

/* Constant evaluation of a bound expression without column references
 * (INSERT values, LIMIT). Returns 0 and the value, or -1. */
int plan_eval_const(const BExpr *e, CatValue *out, PlanArena *arena);
/* Bind an expression that may not reference columns (VALUES rows, LIMIT). */
int plan_bind_const(const char *sql, const AstExpr *ast, PlanArena *arena, BExpr **out,
                    PlanError *err);

/* out (cap >= strlen(base) + 16 bytes) becomes base, or base:1, base:2,
 * ... -- the first that none of the nprev names prev(ud, j) equals
 * (case-insensitive): SQLite's names for a result's repeated column names
 * (planner/funcs.c). */
void plan_unique_name(char *out, size_t cap, const char *base, int nprev,
                      const char *(*prev)(const void *ud, int j), const void *ud);

/* SQLite's `s LIKE pattern` (planner/like.c): 1 if it matches, else 0.
 * `%` any run, `_` one UTF-8 character, ASCII-only case folding. */
int plan_like_match(const char *s, const char *pattern);
/* The same through the segment matcher plan_like_table uses for patterns
 * of literal runs and `%` (like_at otherwise); for tests. */
int plan_like_match_fast(const char *s, const char *pattern);
/* tab[i] = (entry i of d LIKE pattern [ESCAPE esc]) XOR negated, for every
 * entry of d (all cores for a large dictionary). esc: 0 for none, else a
 * code point other than `%` and `_`, which followed by a character matches
 * that character (SQLite). */
void plan_like_table(const CatDict *d, const char *pattern, uint32_t esc, int negated,
                     int64_t *tab);
/* 1 if esc is exactly one UTF-8 character (an ESCAPE's), its code point in
 * *cp; else 0. */
int plan_like_escape(const char *esc, uint32_t *cp);
/* The same as bytes 0/1 (DN_DICTLIKE's CPU side). */
void plan_like_bytes(const CatDict *d, const char *pattern, int negated, uint8_t *tab);
/* Share of d's entries LIKE pattern, from at most 4,096 evenly spaced
 * entries (a BE_DICTLIKE's selectivity without matching them all). */
double plan_like_share(const CatDict *d, const char *pattern);
/* Entries from which a LIKE over a table column's dictionary runs when
 * the query does (BE_DICTLIKE / DN_DICTLIKE, on either device) instead of
 * at bind time: 65,536, or $GQP_DICTLIKE_MIN (tests set 1). */
int64_t plan_dictlike_min(void);

/* Structural equality of bound expressions. */
int plan_bexpr_equal(const BExpr *x, const BExpr *y);
/* Estimated selectivity of a predicate over one relation (0..1). */
double plan_selectivity(const BExpr *pred, const BRel *rel);
/* Estimated fraction of rel's rows that pass all its filters: the product of
 * plan_selectivity over rel->filters, in time linear in their number. */
double plan_rel_selectivity(const BRel *rel);

/* ------------------------------------------------- aggregation choice --
 * The shape of a GROUP BY / aggregate block as the lowering sees it, for
 * the cost model to price its two plans (cost_agg_plan_us):
 *   sort:  hash joins producing `joined` pairs, gathers of keys and values,
 *          sort + segments + one segmented reduce per aggregate;
 *   dense: one keymap per dimension, then one fused pass over the `scanned`
 *          fact rows (dense-aggregate) into `groups` slots, then the
 *          non-empty groups selected and decoded. */
typedef struct PlanAggShape {
    double scanned;    /* fact rows the fused pass reads */
    double fact_bytes; /* bytes per fact row it reads (filters, keys, values) */
    double filtered;   /* fact rows after the fact's own filters (the first probe) */
    int nranges;       /* range filters the fused pass tests on every scanned row */
    double filter_ops; /* map operations per fact row of the fact's own filters (the
                          sort plan's select interprets them all on every row) */
    double joined;     /* rows entering the aggregation (after joins and filters) */
    int ndims;
    double dim_rows;  /* selected dimension rows, all dimensions */
    double dim_range; /* keymap slots, all dimensions */
    int nkeys, naggs;
    double groups;     /* dense table slots (product of key cardinalities) */
    double est_groups; /* estimated non-empty groups */
} PlanAggShape;

/* ------------------------------------------------------------------ DAG --
 * A node is one primitive over vectors. Values are the vectors that flow
 * along the edges; each has one producer. Nodes are created in
 * topological order (inputs before consumers), so executing them in index
 * order is valid.
 */
typedef enum DagKind {
    DN_SOURCE,    /* a table column (host memory of the catalog) */
    DN_CONST,     /* a small constant int64 vector (e.g. one segment start) */
    DN_MAP,       /* expression program over input columns */
    DN_SCAN,      /* exclusive prefix sum of flags -> offsets (+ total) */
    DN_SCATTER,   /* compaction: row ids where flags, at offsets */
    DN_GATHER,    /* dst[i] = src[idx[i]] */
    DN_SORT,      /* keys -> permutation */
    DN_SEGMENTS,  /* sorted keys -> segment starts */
    DN_SEGREDUCE, /* value + starts -> per-segment aggregate */
    DN_JOIN,      /* equi-join -> (left ids, right ids) */
    DN_CROSS,     /* cross product -> (left ids, right ids) */
    DN_SLICE,     /* rows [offset, offset+limit) of a row-id sequence */
    DN_TRANSFER,  /* host <-> device copy (inserted by placement) */
    DN_TOTEXT,    /* numbers -> their text, used as TextUse says (CPU only) */
    DN_KEYMAP,    /* dimension keys (+ row ids) -> direct-address map key -> row */
    DN_DENSEAGG,  /* fused filter -> star-join probe -> dense group aggregate */
    DN_CONCAT,    /* inputs of one type, one after another (compound SELECTs) */
    DN_DICTLIKE,  /* no inputs: bytes 0/1, one per entry of dictionary totext_dict,
                     entry LIKE totext_text (NOT when totext_neg); read by a map's
                     POP_LOOKUPV; on the GPU over the dictionary's cached copy */
    DN_SEGRANK    /* segment starts (+ the rows' length from len_from) -> each row's
                     1-based number within its segment (ROW_NUMBER) */
} DagKind;

typedef enum DagDevice { DEV_CPU = 0, DEV_GPU = 1 } DagDevice;

typedef struct DagValue {
    int producer; /* node index */
    int slot;     /* which output of the producer */
    PrimType type;
    CatType ltype; /* logical type (result columns) */
    int scale;     /* ltype DECIMAL: digits after the point */
    const CatDict *dict;
    int64_t est_rows;
} DagValue;

#define DAG_MAX_IO 64
#define DAG_MAX_OUT PRIM_DA_NOUT(PRIM_DA_MAX)

typedef struct DagNode {
    DagKind kind;
    int ninputs;
    int *inputs; /* value ids */
    int noutputs;
    int outputs[DAG_MAX_OUT]; /* value ids */
    int len_from;             /* value whose runtime length gives this node's n (map, slice) */
    int count_from;           /* DN_SCATTER: the DN_SCAN node whose total sizes the output;
                                 -1: a match-marking scatter, dst[idx[i]] = i into len_from's
                                 length filled with -1 (outer joins) */
    int gather_nulls;         /* DN_GATHER: idx may hold -1 (NULL rows): output has validity */
    /* parameters */
    const CatTable *table; /* DN_SOURCE */
    int column;            /* DN_SOURCE */
    PrimProgram prog;      /* DN_MAP */
    char *label;           /* human text: predicate / expression / table.column */
    uint8_t *desc;         /* DN_SORT */
    PrimAgg agg;           /* DN_SEGREDUCE */
    int64_t *cdata;        /* DN_CONST */
    int64_t cn;
    int64_t slice_offset, slice_limit; /* DN_SLICE (-1 limit = all) */
    int totext_date;                   /* DN_TOTEXT: the input is DATE days (1), a DECIMAL of
                                          scale s (2 + s), else 0 */
    TextUse totext_use;                /* DN_TOTEXT: BE_TOTEXT's tuse ... */
    AstOp totext_op;                   /* ... op (TU_CMP), */
    int totext_neg;                    /* ... negated (TU_LIKE), */
    const char *totext_text;           /* ... ttext and */
    const char *totext_null;           /* ... tnull (arena); */
    const CatDict *totext_dict;        /* ... b's dictionary (TU_CMP with a second input) */
    const CatDict *totext_pair[2];     /* ... tpair: the input is a pair index */
    int64_t km_min, km_range;          /* DN_KEYMAP: key range (output length km_range) */
    const PrimDenseAgg *dagg;          /* DN_DENSEAGG: the spec (arena); output length ngroups */
    int64_t da_pass; /* DN_DENSEAGG: estimated fact rows that pass its range filters (cost) */
    /* DN_SEGREDUCE, DN_DENSEAGG, DN_MAP: 1 when the planner proved from
     * column statistics that no int64 overflow can occur (operators/
     * bound.c), so the primitives run without the checks (prog.nocheck,
     * dagg->nocheck); ovf_bound is the proven bound on |sum| / |value| */
    int no_ovf;
    double ovf_bound;
    /* placement and estimates */
    DagDevice device;
    int64_t est_rows;
    double est_cost_cpu, est_cost_gpu, est_cost_xfer; /* ms (cost/place.c) */
    char *reason; /* why placement chose device (arena text), or NULL */
    /* measured (EXPLAIN ANALYZE) */
    double ms;
    /* the run's timeline (EXPLAIN ANALYZE): the host's time to issue the
     * node (for a GPU node its launches and copies, returning before the
     * device ran them; a CPU node's is ms), and a GPU node's start on the
     * device after the run's first event (-1: not measured) */
    double issue_ms, start_ms;
    /* of the issue: gqp's kernel launches, the host's waits for the device
     * (counts, results) and their milliseconds (prim_gpu_host_counters) */
    int64_t launches, host_waits;
    double wait_ms;
    int64_t rows_in, rows_out;
    int64_t bytes_h2d, bytes_d2h;
    /* DN_SOURCE on the GPU read in place from page-locked host memory
     * (zero-copy) instead of through the column cache: mapped is the
     * plan's choice (libgqp: 1 the column's host range may be page-locked
     * for it, 2 only when a locked range holds it already), bytes_mapped
     * what the run read so (0: it was copied after all) */
    int mapped;
    int64_t bytes_mapped;
    /* DN_DICTLIKE on the GPU (executor): its dictionary's strings read in
     * this many pieces under the device budget; -1 its table kept from an
     * earlier chunk of the run; 0 whole */
    int64_t dict_pieces;
    int fused_with; /* -1 or the node it ran fused into */
    /* device out-of-memory recovery (executor): 1 the node ran on the GPU
     * again after memory was freed, 2 it ran on its CPU twin instead (it
     * was placed on the GPU); the failing allocation's bytes needed and
     * available, oom_limit when memory_limit refused it */
    int oom_action;
    int64_t oom_need, oom_avail;
    int oom_limit;
    /* SQLite's REAL after an integer overflow (executor): 1 the node, placed
     * on the GPU, ran on its CPU twin because an input holds such REALs; 2
     * the GPU found an overflow and the whole run was repeated on the CPU,
     * whose maps give the REALs (prim_cpu_map_reals) */
    int real_cpu;
} DagNode;

typedef struct Dag {
    int nnodes, capnodes;
    DagNode *nodes;
    int nvalues, capvalues;
    DagValue *values;
    int nresults; /* result columns */
    int *results; /* value ids */
    char **result_names;
    PlanArena *arena; /* owns labels, programs, constant data */
    /* EXPLAIN ANALYZE on a GPU: the host's time after the last node (the
     * results' copies back and the waits for them and for the device) */
    double tail_ms;
    int64_t tail_waits;
} Dag;

Dag *plan_dag_new(PlanArena *arena);
void plan_dag_free(Dag *d);
/* Add a node with inputs and `noutputs` fresh output values of the given
 * types; returns the node index or -1 on allocation failure. */
int plan_dag_add(Dag *d, DagKind kind, const int *inputs, int ninputs, int noutputs,
                 const PrimType *out_types);
/* Output value id k of node. */
int plan_dag_out(const Dag *d, int node, int k);
/* 1 if node n runs on the CPU twin only, whatever the placement: a to-text
 * node, or a map whose program holds a CPU-only instruction (SQLite's
 * math functions, prim_prog_cpu_only). */
int plan_node_cpu_only(const DagNode *n);
const char *plan_dag_kind_name(DagKind k);

/* EXPLAIN renderers. The returned string is malloc'ed; caller frees. */
char *plan_explain_text(const Dag *d, int analyze);
/* Estimated bytes of node n's outputs (estimated rows x width). */
int64_t plan_node_est_bytes(const Dag *d, const DagNode *n);
char *plan_explain_json(const Dag *d, int analyze);
char *plan_explain_dot(const Dag *d, int analyze);

/* A growable string for renderers and messages. */
typedef struct PlanBuf {
    char *s;
    size_t len, cap;
    int oom;
} PlanBuf;
void plan_buf_printf(PlanBuf *b, const char *fmt, ...);

#endif /* GQP_PLANNER_H */
