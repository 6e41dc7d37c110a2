/*
 * scan.c -- lowering of a table scan: the relation's slot joins the state
 * with identity row ids; columns become source nodes only when read
 * (column pruning falls out of late materialization). A derived table
 * planned inline is lowered where it is scanned; its result values are
 * the slot's columns.
 */
#include <stdlib.h>
#include <string.h>

#include "operators/operators.h"

/* Slot r of st over derived table rel->sub, lowered here into the same
 * DAG: its result values are the slot's computed columns. 0 or -1. */
static int derived_slot(Lower *L, LowState *st, int r) {
    const BRel *rel = &L->b->rels[r];
    int nc = rel->table->ncols, *outv = NULL;
    int rc = rel->sub->narms > 0 ? op_lower_compound(rel->sub, L->opts, L->dag, L->err, &outv)
                                 : op_lower_block(rel->sub, L->opts, L->dag, L->err, &outv);
    if (rc != 0) return -1;
    char **names = plan_alloc(L->arena, sizeof(char *) * (size_t)(nc ? nc : 1));
    if (!names) return op_fail(L, "out of memory");
    for (int c = 0; c < nc; c++) {
        PlanBuf b = {0};
        plan_buf_printf(&b, "%s.%s", rel->alias, rel->table->cols[c].name);
        names[c] = plan_strdup(L->arena, b.s ? b.s : "?");
        free(b.s);
    }
    LowSlot *s = &st->slots[r];
    if (op_computed_slot(L, s, outv, names, nc) != 0) return -1;
    s->table = rel->table; /* for its (estimated) column statistics */
    st->est_rows = rel->table->nrows;
    return 0;
}

int op_table_slot(Lower *L, LowState *st, int r) {
    const BRel *rel = &L->b->rels[r];
    if (rel->sub) return derived_slot(L, st, r);
    LowSlot *s = &st->slots[r];
    int nc = rel->table->ncols;
    s->table = rel->table;
    s->ncols = nc;
    s->col_value = plan_alloc(L->arena, sizeof(int) * (size_t)nc);
    s->gathered = plan_alloc(L->arena, sizeof(int) * (size_t)nc);
    s->col_names = plan_alloc(L->arena, sizeof(char *) * (size_t)nc);
    if (!s->col_value || !s->gathered || !s->col_names) return op_fail(L, "out of memory");
    for (int c = 0; c < nc; c++) {
        s->col_value[c] = -1;
        s->gathered[c] = -1;
        PlanBuf b = {0};
        plan_buf_printf(&b, "%s.%s", rel->alias, rel->table->cols[c].name);
        s->col_names[c] = plan_strdup(L->arena, b.s ? b.s : "?");
        free(b.s);
    }
    s->rowids = -1;
    s->joined = 1;
    st->est_rows = rel->table->nrows;
    return 0;
}

int op_scan(Lower *L, LowState *st, int r) {
    if (op_table_slot(L, st, r) != 0) return -1;
    /* the state's length: its first column (a source node) */
    st->len_value = op_column(L, st, r, 0);
    return st->len_value < 0 ? -1 : 0;
}
