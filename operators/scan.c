/*
 * scan.c -- lowering of a table scan: the relation's slot joins the state
 * with identity row ids; columns become source nodes only when read
 * (column pruning falls out of late materialization).
 */
#include <stdlib.h>
#include <string.h>

#include "operators/operators.h"

int op_table_slot(Lower *L, LowState *st, int r) {
    const BRel *rel = &L->b->rels[r];
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
