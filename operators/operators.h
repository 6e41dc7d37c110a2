/*
 * operators.h -- lowering of the relational operators of a bound SELECT
 * block (planner/planner.h) into a DAG of primitive nodes. One file per
 * operator; lower.c drives them in evaluation order.
 *
 * Row sets are kept as late-materialized states: each FROM relation is a
 * "slot" holding a row-id vector into its table (or the identity, for a
 * table not yet filtered); a column is gathered through the row ids only
 * when an expression or the result needs it.
 */
#ifndef GQP_OPERATORS_H
#define GQP_OPERATORS_H

#include "planner/planner.h"

/* One slot of a state: a table's columns (base relation) or computed
 * columns (after aggregation), and the row ids that select from them. */
typedef struct LowSlot {
    const CatTable *table; /* base relation, or NULL for computed columns */
    int ncols;
    int *col_value;   /* value id of the full column (-1: source not yet created) */
    int *gathered;    /* cache: value id of the column aligned to the state (-1) */
    char **col_names; /* for labels */
    int rowids;       /* I64 row ids into the columns; -1 = identity */
    int joined;       /* 1 once the slot is part of the state */
    int nullable;     /* rowids may hold -1 (outer join padding): gathers give NULL */
} LowSlot;

typedef struct LowState {
    int nslots;
    LowSlot *slots;
    int len_value; /* a value whose runtime length is the state's row count */
    int64_t est_rows;
} LowState;

/* Choices the lowering leaves to its caller (libgqp passes the cost
 * model's estimates; operators/ does not depend on cost/). */
typedef enum LowerAgg {
    LOWER_AGG_AUTO = 0, /* the cheaper of sort and dense by agg_cost */
    LOWER_AGG_SORT = 1, /* always sort + segmented reduce */
    LOWER_AGG_DENSE = 2 /* the dense path wherever it applies */
} LowerAgg;

typedef struct LowerOpts {
    LowerAgg agg;
    /* Estimated microseconds of the sort (dense = 0) or dense (dense = 1)
     * plan of an aggregation of shape s on the cheaper device; NULL: dense
     * wherever it applies. */
    double (*agg_cost)(void *ud, int dense, const PlanAggShape *s);
    void *ud;
} LowerOpts;

typedef struct Lower {
    Dag *dag;
    PlanArena *arena;
    const BSelect *b;
    PlanError *err;
    const LowerOpts *opts;
} Lower;

/* Lower a bound SELECT into dag (results and result names set). opts may
 * be NULL (automatic choices without costs). Returns 0 or -1 with err
 * filled. */
int op_lower_select(const BSelect *b, const LowerOpts *opts, Dag *dag, PlanError *err);
/* Lower one SELECT block (not a compound) into *outp (b->nout value ids,
 * arena-owned, each of its logical type's vector type) without setting
 * the DAG's results. Returns 0 or -1 with err filled. */
int op_lower_block(const BSelect *b, const LowerOpts *opts, Dag *dag, PlanError *err, int **outp);
/* setop.c: lower compound b (b->narms > 0): each arm by op_lower_block,
 * combined left to right (UNION ALL: concat; UNION: concat + distinct;
 * INTERSECT / EXCEPT: concat with side tags, sort, segments, per-segment
 * min / max of the tag, the qualifying segments' first rows), then the
 * compound's ORDER BY and LIMIT. Result values into *outp. 0 or -1. */
int op_lower_compound(const BSelect *b, const LowerOpts *opts, Dag *dag, PlanError *err,
                      int **outp);

/* --- shared helpers (lower.c, expr.c) --- */
PrimType op_prim_type(CatType t);
/* Error helper: fills err ("Planner" stage), returns -1. */
int op_fail(Lower *L, const char *fmt, ...);
/* Value of column col of slot aligned to the state's rows (gathering
 * through the slot's row ids if needed); -1 on failure. */
int op_column(Lower *L, LowState *st, int slot, int col);
/* The table column col of slot s itself (its source node), whatever rows
 * the slot selects; -1 on failure. */
int op_source(Lower *L, LowSlot *s, int col);
/* Make *s a slot of the n computed columns cols (aligned to the state, no
 * row ids; names for labels). Returns 0 or -1. */
int op_computed_slot(Lower *L, LowSlot *s, int *cols, char **names, int n);
/* Value of expression e over the state: a plain column is returned as is
 * (when its type matches), anything else becomes one map node evaluating
 * the whole tree. out_type is the vector type; as_filter makes U8 flags. */
int op_expr(Lower *L, LowState *st, const BExpr *e, PrimType out_type, int as_filter);
/* Value of BE_TOTEXT e over the state: a map for its number, then the
 * CPU-only DN_TOTEXT node that writes the text and uses it as e->tuse
 * says (STRING codes with a dictionary built at run time, a number or a
 * BOOL). -1 on failure. */
int op_totext(Lower *L, LowState *st, const BExpr *e);
/* The DN_DICTLIKE node of BE_DICTLIKE e (one per dictionary and pattern in
 * the plan): its output value, bytes 0/1 per entry of e->dict, or -1. */
int op_dictlike(Lower *L, LowState *st, const BExpr *e);
/* A map node converting value v to type t (or v itself if it has t). */
int op_convert(Lower *L, int v, PrimType t);
/* expr.c: a BOOL (U8) value, 1 where value v is NULL (a map over v alone:
 * the NULLS FIRST / LAST key of an output column). */
int op_isnull_value(Lower *L, int v);
/* Text of a bound expression for EXPLAIN labels (arena-allocated). */
char *op_expr_label(Lower *L, const LowState *st, const BExpr *e);
/* acc AND x as a new bound node (acc NULL: x itself); NULL when out of
 * memory. Builds the one predicate a filter node evaluates. */
BExpr *op_and(Lower *L, BExpr *acc, BExpr *x);
/* list[0..n) combined with AND into one balanced tree (arena; height about
 * log2(n)); NULL for n == 0 or out of memory. */
BExpr *op_and_all(Lower *L, BExpr *const *list, int n);
/* The SQL name of aggregate agg ("count(*)", "sum", ...), for labels. */
const char *op_agg_name(PrimAgg agg);
/* A one-row int64 constant 0: the length of SELECT without FROM, and the
 * start of the single segment of a global aggregate. Value id or -1. */
int op_zero_row(Lower *L, const char *label);
/* Keep the rows idx (row numbers of st, est of them) of every joined slot:
 * its row ids gathered through idx (idx itself for identity row ids), its
 * column cache reset; st's length becomes idx's. Returns 0 or -1. */
int op_reselect(Lower *L, LowState *st, int idx, int64_t est);
/* Gather value v through index vector idx. */
int op_gather(Lower *L, int v, int idx, int64_t est_rows);

/* --- operators --- */
/* scan.c: a state over FROM relation r (identity row ids). */
int op_scan(Lower *L, LowState *st, int r);
/* scan.c: slot r of st over relation r's table, identity row ids, no
 * column read yet (op_scan then reads column 0 for the state's length). */
int op_table_slot(Lower *L, LowState *st, int r);
/* filter.c: keep the rows of st where pred is true (map -> scan -> scatter,
 * then row ids gathered). */
int op_filter(Lower *L, LowState *st, const BExpr *pred, double selectivity);
/* join.c: join relation r into st, using the unused equi-join predicates
 * that connect them (or a cross product), then the predicates that become
 * evaluable. */
int op_join(Lower *L, LowState *st, int r, uint8_t *pred_used);
/* join.c: LEFT JOIN relation r (b->rels[r].outer) into st: the pairs of
 * its first ON equi-conjunct (or a cross product) filtered by the rest of
 * its ON conjuncts, then the unmatched left rows with right row id -1 (a
 * match-marking scatter, a filter and a concat), then the WHERE predicates
 * that become evaluable. */
int op_left_join(Lower *L, LowState *st, int r, uint8_t *pred_used);
/* join.c: SEMI (ANTI) JOIN relation r (b->rels[r].semi): the pairs of its
 * ON conjuncts as for op_left_join, a match-marking scatter over st's
 * rows, and st keeps the rows some pair reaches (ANTI: that none does);
 * r adds no columns (its slot stays unjoined). */
int op_semi_join(Lower *L, LowState *st, int r, uint8_t *pred_used);
/* denseagg.c: if the block is a star (or one table) whose aggregation fits
 * a dense table and the dense plan is chosen (LowerOpts), lower FROM ..
 * GROUP BY as keymaps + one fused dense-aggregate and replace st (which has
 * b->nrels empty slots) by the grouped state; returns 1. Returns 0 with
 * nothing added when it does not apply or is not chosen, -1 on error. */
int op_dense_aggregate(Lower *L, LowState *st);
/* quantile.c: the order statistic ag (ag->quant) per group as a value of
 * its logical type: sort by (keys[0..ng), argument), per-group counts over
 * the group segments starts, index maps and gathers (file comment).
 * shared[0..3) are the sorted argument and its two counts: -1s to make
 * them (then filled in), or those of an earlier order statistic of an
 * equal argument to reuse. *label receives its EXPLAIN text. Value id or
 * -1. */
int op_quantile(Lower *L, LowState *st, const BAgg *ag, const int *keys, int ng, int starts,
                int64_t est_groups, int *shared, char **label);
/* groupconcat.c: group_concat ag (AQ_CONCAT) per group: its argument
 * gathered through perm (-1: the rows as they are, one group) and a
 * CPU-only to-text node over it and the segment starts; STRING codes of a
 * dictionary made at run time. *label receives its EXPLAIN text. */
int op_group_concat(Lower *L, LowState *st, const BAgg *ag, int perm, int starts,
                    int64_t est_groups, char **label);
/* aggregate.c: replace st by the grouped state (keys, then aggregates). */
int op_aggregate(Lower *L, LowState *st);
/* project.c: values of the select list over st into out[0..nout). */
int op_project(Lower *L, LowState *st, int *out);
/* sort.c: permutation ordering the state (or the output values outv; NULL:
 * every key evaluated over the state) by the ORDER BY keys; returns the
 * perm value id. */
int op_sort(Lower *L, LowState *st, const int *outv, int pre_distinct);
/* The output column j when ORDER BY key k of b is `out[j] IS NULL` (the
 * key NULLS FIRST / LAST adds before its term, planner/bind.c nulls_keys),
 * else -1: after DISTINCT or on a compound the state is gone, and the key
 * is computed from the output column (also a chunked final block's). */
int op_isnull_key_output(const BSelect *b, int k);
/* distinct.c: replace out[] by their distinct rows. */
int op_distinct(Lower *L, int *out, int nout, int64_t est_rows);
/* limit.c: slice value v to [offset, offset + limit). */
int op_limit(Lower *L, int v, int64_t offset, int64_t limit);
/* LIMIT / OFFSET of sort permutation perm (an output of a DN_SORT node):
 * the sort keeps rows [offset, offset + limit) of its order itself (a
 * range sort); any other value gets op_limit's slice. Returns perm's
 * value (now of the range's rows) or -1. */
int op_sort_limit(Lower *L, int perm, int64_t offset, int64_t limit);

/* --- bound.c: overflow proofs from column statistics --- */
/* Bounds below 2^62 prove the absence of an int64 overflow (a factor of
 * two of margin for the rounding of double statistics). */
#define OP_OVF_LIMIT 4611686018427387904.0
/* The catalog column a BE_COL e reads (ud: the caller's context), or NULL
 * when e reads a computed value. */
typedef const CatColumn *(*OpColOf)(const void *ud, const BExpr *e);
/* An upper bound on |e| over every row of the tables its columns come
 * from (column statistics; integer constants, columns, +, -, *, /, %,
 * unary -, CASE, COALESCE, integer casts, lookups, booleans), HUGE_VAL
 * when unknown (floats, computed columns, stale statistics). *safe (when
 * not NULL) is 1 when no integer +, -, *, / or unary - inside e can
 * overflow int64 (each one's bound below OP_OVF_LIMIT), else 0. */
double op_abs_bound(const BExpr *e, OpColOf col_of, const void *ud, int *safe);
/* OpColOf over a LowState (ud): the column of a base-table slot. */
const CatColumn *op_state_col(const void *ud, const BExpr *e);
/* OpColOf over a bound block (ud: a BSelect): the column of one of its
 * base relations (NULL for a derived table's). */
const CatColumn *op_block_col(const void *ud, const BExpr *e);
/* An upper bound on the rows of st: the product of the row counts of its
 * joined base tables (each at least 1); HUGE_VAL with a computed slot. */
double op_state_rows_bound(const LowState *st);
/* 1 when a sum of at most rows values each bounded by bound in absolute
 * value stays below OP_OVF_LIMIT (and so cannot overflow int64). */
int op_sum_no_overflow(double rows, double bound);
/* 0 when GQP_OVERFLOW_PROOF=off is set: nodes keep their overflow checks
 * whatever the proofs say (an A/B switch for measurements; the plan's
 * shape does not change). */
int op_skip_checks_allowed(void);

#endif /* GQP_OPERATORS_H */
