/*
 * select.c -- CPU twin of the fused filter: evaluate the filter program
 * over each thread's range into flags, count them, then write each
 * thread's selected row ids at its prefix offset. Two passes over one byte
 * per row instead of map + an 8-byte-per-row scan + scatter.
 */
#include <stdio.h>
#include <string.h>

#include "primitives/primitives.h"

/* Rows below which one thread does everything. TUNING: thread start costs
 * ~20 us on the 2-core CI machine; 64K rows of a simple predicate take
 * about as long. */
#define SELECT_SERIAL_ROWS 65536

typedef struct SelectJob {
    PrimCtx *ctx;
    const PrimProgram *prog;
    const PrimVec *inputs;
    int64_t n;
    uint8_t *flags;
    int64_t *rowids;
    int64_t counts[256];
    int64_t offs[256];
    int failed[256];
    int err_taken; /* __atomic: the first failing share writes err */
    char err[256];
} SelectJob;

/* Rows [a, b) of thread t of nt. */
static void range_of(int64_t n, int t, int nt, int64_t *a, int64_t *b) {
    *a = n * t / nt;
    *b = n * (t + 1) / nt;
}

/* Pass 1: flags for this thread's rows through the map twin on shifted
 * inputs; counts the selected rows. */
static void pass_flags(void *arg, int t, int nt) {
    SelectJob *j = arg;
    int64_t a, b;
    range_of(j->n, t, nt, &a, &b);
    j->counts[t] = 0;
    if (b <= a) return;
    PrimVec in[64];
    for (int k = 0; k < j->prog->ninputs && k < 64; k++) {
        in[k] = j->inputs[k];
        if (prim_prog_table_input(j->prog, k)) continue; /* a table, not rows */
        in[k].data = (char *)in[k].data + (size_t)a * prim_type_width(in[k].type);
        if (in[k].valid) in[k].valid += a;
        in[k].n = b - a;
    }
    PrimCtx sub = *j->ctx;
    sub.nthreads = 1;
    PrimVec out = {PRIM_U8, b - a, j->flags + a, NULL};
    if (prim_cpu_map(&sub, j->prog, in, b - a, &out) != 0) {
        j->failed[t] = 1;
        /* one writer (shares fail together when the query is interrupted) */
        if (!__atomic_exchange_n(&j->err_taken, 1, __ATOMIC_ACQ_REL))
            snprintf(j->err, sizeof j->err, "%s", sub.err);
        return;
    }
    int64_t c = 0;
    const uint8_t *f = j->flags + a;
    for (int64_t i = 0; i < b - a; i++)
        c += f[i] != 0;
    j->counts[t] = c;
}

/* Pass 2: write this thread's selected row ids at its offset. */
static void pass_write(void *arg, int t, int nt) {
    SelectJob *j = arg;
    int64_t a, b;
    range_of(j->n, t, nt, &a, &b);
    int64_t *o = j->rowids + j->offs[t];
    const uint8_t *f = j->flags;
    /* branch-free: write every row id, advance only past selected ones; stop
     * once this thread's count is written so no store lands in the next
     * thread's range (a 50% predicate defeats the branch predictor) */
    int64_t k = 0, cnt = j->counts[t];
    for (int64_t i = a; i < b && k < cnt; i++) {
        o[k] = i;
        k += f[i] != 0;
    }
}

int prim_cpu_select(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs, int64_t n,
                    int64_t *rowids, int64_t *count) {
    *count = 0;
    if (!prog->as_filter) {
        snprintf(ctx->err, sizeof ctx->err, "select needs a filter program");
        return -1;
    }
    if (prog->ninputs > 64) {
        snprintf(ctx->err, sizeof ctx->err, "select reads more than 64 columns");
        return -1;
    }
    if (n == 0) return 0;
    SelectJob *j = ctx->alloc(ctx->ud, sizeof(SelectJob));
    uint8_t *flags = ctx->alloc(ctx->ud, (size_t)n);
    if (!j || !flags) {
        if (j) ctx->free(ctx->ud, j);
        if (flags) ctx->free(ctx->ud, flags);
        snprintf(ctx->err, sizeof ctx->err, "out of memory");
        return -1;
    }
    memset(j, 0, sizeof *j);
    j->ctx = ctx;
    j->prog = prog;
    j->inputs = inputs;
    j->n = n;
    j->flags = flags;
    j->rowids = rowids;
    int nt = ctx->nthreads < 1 ? 1 : ctx->nthreads > 256 ? 256 : ctx->nthreads;
    if (n < SELECT_SERIAL_ROWS) nt = 1;
    int rc = prim_parallel(nt, pass_flags, j);
    for (int t = 0; t < nt && rc == 0; t++)
        if (j->failed[t]) {
            snprintf(ctx->err, sizeof ctx->err, "%s", j->err);
            rc = -1;
        }
    if (rc == 0) {
        int64_t acc = 0;
        for (int t = 0; t < nt; t++) {
            j->offs[t] = acc;
            acc += j->counts[t];
        }
        rc = prim_parallel(nt, pass_write, j);
        *count = acc;
    }
    ctx->free(ctx->ud, flags);
    ctx->free(ctx->ud, j);
    return rc;
}
