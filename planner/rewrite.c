/*
 * rewrite.c -- logical rewrites of a bound SELECT block: cardinality
 * estimates for each relation after its pushed-down filters, and the join
 * order (greedy by estimated result size along the join graph, cross
 * products only where no join predicate connects).
 */
#include <stdlib.h>
#include <string.h>

#include "planner/bexpr.h"

/* Distinct-count estimate of a join key over relation rel (1 if unknown). */
static double key_distinct(const BExpr *k, const BRel *rel) {
    if (k && k->kind == BE_CAST) k = k->a;
    if (!k || k->kind != BE_COL) return (double)(rel->est_rows > 0 ? rel->est_rows : 1);
    const CatColumn *c = &rel->table->cols[k->col];
    double d = c->stats.distinct > 0 ? (double)c->stats.distinct : 1.0;
    return d;
}

/* Estimated rows of joining a result of `cur` rows (covering mask `in`)
 * with relation r through the equi-join predicates that connect them;
 * *connected is set when at least one predicate does. */
static double join_estimate(const BSelect *b, uint64_t in, double cur, int r, int *connected) {
    double est = cur * (double)b->rels[r].est_rows;
    *connected = 0;
    for (int i = 0; i < b->npreds; i++) {
        const BPred *p = &b->preds[i];
        if (!p->is_equi) continue;
        int other;
        const BExpr *rk;
        if (p->lrel == r && (in >> p->rrel & 1))
            other = p->rrel, rk = p->lkey;
        else if (p->rrel == r && (in >> p->lrel & 1))
            other = p->lrel, rk = p->rkey;
        else
            continue;
        (void)other;
        double d = key_distinct(rk, &b->rels[r]);
        if (d < 1) d = 1;
        if (!*connected) est = est / d;
        *connected = 1;
    }
    return est;
}

/* The greedy join order from relation first (relations in mask `in`
 * excluded): each step joins the connected relation with the smallest
 * estimated result (cross products last). Writes nj relations into order;
 * returns the sum of the estimated intermediate results. */
static double greedy_order(const BSelect *b, int first, uint64_t in, int nj, int *order) {
    order[0] = first;
    in |= (uint64_t)1 << first;
    double cur = (double)b->rels[first].est_rows, cost = 0;
    for (int k = 1; k < nj; k++) {
        int best = -1, best_conn = 0;
        double best_est = 0;
        for (int r = 0; r < b->nrels; r++) {
            if (in >> r & 1) continue;
            int conn;
            double est = join_estimate(b, in, cur, r, &conn);
            if (best < 0 || (conn && !best_conn) || (conn == best_conn && est < best_est)) {
                best = r;
                best_conn = conn;
                best_est = est;
            }
        }
        order[k] = best;
        in |= (uint64_t)1 << best;
        cur = best_est;
        cost += cur + (best_conn ? 0 : 1e30);
    }
    return cost;
}

void plan_rewrite(BSelect *b) {
    for (int r = 0; r < b->nrels; r++) {
        BRel *rel = &b->rels[r];
        double sel = plan_rel_selectivity(rel);
        double est = (double)rel->table->nrows * sel;
        rel->est_rows = (int64_t)(est + 0.5);
        if (rel->est_rows < 1 && rel->table->nrows > 0) rel->est_rows = 1;
    }
    if (b->nrels == 0 || !b->join_order) return;
    int *order = b->join_order; /* allocated by the binder, nrels entries */
    if (b->has_outer) {
        /* outer joins keep the written order (a RIGHT JOIN of the first two
         * tables is their LEFT JOIN the other way round) */
        for (int r = 0; r < b->nrels; r++)
            order[r] = r;
        if (b->nrels > 1 && b->rels[0].outer && !b->rels[1].full) order[0] = 1, order[1] = 0;
        return;
    }
    /* SEMI / ANTI JOIN relations go last, in the written order */
    int nj = 0;
    uint64_t in = 0;
    for (int r = 0; r < b->nrels; r++)
        nj += !b->rels[r].semi;
    for (int r = 0, k = nj; r < b->nrels; r++)
        if (b->rels[r].semi) {
            order[k++] = r;
            in |= (uint64_t)1 << r;
        }
    /* greedy from every start; keep the order whose intermediate results
     * add up to the fewest rows (a small first table joined to a huge one
     * is worse than a selective table first: TPC-H q09's part) */
    int *try_order = malloc(sizeof(int) * (size_t)b->nrels);
    double best_cost = -1;
    for (int first = 0; first < b->nrels; first++) {
        if (b->rels[first].semi) continue;
        double cost = greedy_order(b, first, in, nj, try_order ? try_order : order);
        if (!try_order) break; /* out of memory: the first greedy order */
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            memcpy(order, try_order, sizeof(int) * (size_t)nj);
        }
    }
    free(try_order);
}
