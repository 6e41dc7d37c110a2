/*
 * exec.c -- the DAG executor. Nodes run in index order (the lowering
 * creates them topologically); each dispatches to the CPU twin of its
 * primitive (or the GPU twin, through executor/gpu.c, when placed there).
 * A value is freed as soon as its last consumer has run; result values are
 * moved (or copied, when they alias table memory) into the ExecResult.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor/executor.h"

typedef struct RtVal {
    PrimVec v;      /* v.n = length */
    int owned;      /* data/valid allocated by the executor */
    int64_t total;  /* DN_SCAN: sum of the flags */
    int ready;
} RtVal;

typedef struct Exec {
    Dag *dag;
    RtVal *vals;
    int *last_use;
    PrimCtx ctx;
    char *err;
    size_t errcap;
} Exec;

/* Host allocator of the CPU twins: 64-byte aligned, NULL on failure. */
static void *host_alloc(void *ud, size_t bytes) {
    (void)ud;
    size_t n = (bytes + 63) & ~(size_t)63;
    return aligned_alloc(64, n ? n : 64);
}

static void host_free(void *ud, void *p) {
    (void)ud;
    free(p);
}

/* Record an execution error; returns -1. */
static int ex_fail(Exec *x, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err, x->errcap, fmt, ap);
    va_end(ap);
    return -1;
}

/* Allocate value v as n elements of its type (+ validity if want_valid). */
static int ex_alloc(Exec *x, int v, int64_t n, int want_valid) {
    RtVal *r = &x->vals[v];
    r->v.type = x->dag->values[v].type;
    r->v.n = n;
    r->v.data = host_alloc(NULL, (size_t)n * prim_type_width(r->v.type));
    r->v.valid = want_valid ? host_alloc(NULL, (size_t)n) : NULL;
    r->owned = 1;
    r->ready = 1;
    if (!r->v.data || (want_valid && !r->v.valid))
        return ex_fail(x, "Execution Error: out of memory allocating %lld rows", (long long)n);
    return 0;
}

/* Release value v if the executor owns it. */
static void ex_release(Exec *x, int v) {
    RtVal *r = &x->vals[v];
    if (r->owned) {
        free(r->v.data);
        free(r->v.valid);
    }
    memset(r, 0, sizeof *r);
}

/* Drop a validity array that marks no NULL. */
static void drop_all_valid(RtVal *r) {
    if (!r->v.valid) return;
    for (int64_t i = 0; i < r->v.n; i++)
        if (!r->v.valid[i]) return;
    free(r->v.valid);
    r->v.valid = NULL;
}

/* 1 if prog may produce NULL from non-NULL inputs. */
static int prog_makes_null(const PrimProgram *p) {
    for (int i = 0; i < p->ninstr; i++) {
        PrimOp op = (PrimOp)p->code[i].op;
        if (op == POP_NULL || op == POP_DIV || op == POP_MOD || op == POP_LOOKUP) return 1;
    }
    return 0;
}

/* Length of value v at run time. */
static int64_t len_of(Exec *x, int v) {
    return x->vals[v].v.n;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Run node i on the CPU. Returns 0 or -1. */
static int run_cpu(Exec *x, int i) {
    DagNode *n = &x->dag->nodes[i];
    PrimCtx *ctx = &x->ctx;
    int o0 = n->noutputs > 0 ? n->outputs[0] : -1;
    PrimVec in[DAG_MAX_IO];
    for (int k = 0; k < n->ninputs && k < DAG_MAX_IO; k++) in[k] = x->vals[n->inputs[k]].v;
    int rc = 0;
    switch (n->kind) {
    case DN_SOURCE: {
        const CatColumn *c = &n->table->cols[n->column];
        RtVal *r = &x->vals[o0];
        r->v.type = x->dag->values[o0].type;
        r->v.n = n->table->nrows;
        r->v.data = c->data;
        r->v.valid = c->valid;
        r->owned = 0;
        r->ready = 1;
        n->rows_in = r->v.n;
        break;
    }
    case DN_CONST: {
        RtVal *r = &x->vals[o0];
        r->v.type = PRIM_I64;
        r->v.n = n->cn;
        r->v.data = n->cdata;
        r->owned = 0;
        r->ready = 1;
        break;
    }
    case DN_MAP: {
        int64_t len = n->len_from >= 0 ? len_of(x, n->len_from) : len_of(x, n->inputs[0]);
        int want_valid = 0;
        if (!n->prog.as_filter) {
            want_valid = prog_makes_null(&n->prog);
            for (int k = 0; k < n->ninputs; k++) want_valid |= in[k].valid != NULL;
        }
        if (ex_alloc(x, o0, len, want_valid) != 0) return -1;
        n->rows_in = len;
        rc = prim_cpu_map(ctx, &n->prog, in, len, &x->vals[o0].v);
        if (rc == 0 && want_valid) drop_all_valid(&x->vals[o0]);
        break;
    }
    case DN_SCAN: {
        int64_t len = in[0].n;
        if (ex_alloc(x, o0, len, 0) != 0) return -1;
        n->rows_in = len;
        rc = prim_cpu_scan(ctx, &in[0], len, x->vals[o0].v.data, &x->vals[o0].total);
        break;
    }
    case DN_SCATTER: {
        int64_t total = x->vals[x->dag->nodes[n->count_from].outputs[0]].total;
        if (ex_alloc(x, o0, total, 0) != 0) return -1;
        n->rows_in = in[0].n;
        rc = prim_cpu_scatter(ctx, NULL, in[0].data, in[1].data, in[0].n, &x->vals[o0].v);
        break;
    }
    case DN_GATHER: {
        int64_t len = in[1].n;
        if (ex_alloc(x, o0, len, in[0].valid != NULL) != 0) return -1;
        n->rows_in = in[0].n;
        rc = prim_cpu_gather(ctx, &in[0], in[1].data, len, &x->vals[o0].v);
        break;
    }
    case DN_SORT: {
        int64_t len = in[0].n;
        if (ex_alloc(x, o0, len, 0) != 0) return -1;
        n->rows_in = len;
        rc = prim_cpu_sort(ctx, in, n->desc, n->ninputs, len, x->vals[o0].v.data);
        break;
    }
    case DN_SEGMENTS: {
        int64_t len = in[0].n, nseg = 0;
        if (ex_alloc(x, o0, len, 0) != 0) return -1;
        n->rows_in = len;
        rc = prim_cpu_segments(ctx, in, n->ninputs, len, x->vals[o0].v.data, &nseg);
        x->vals[o0].v.n = nseg;
        break;
    }
    case DN_SEGREDUCE: {
        int64_t nseg = in[0].n;
        int64_t len = n->ninputs > 1 ? in[1].n : len_of(x, n->len_from);
        int counts = n->agg == AGG_COUNT || n->agg == AGG_COUNT_STAR;
        if (ex_alloc(x, o0, nseg, !counts) != 0) return -1;
        n->rows_in = len;
        rc = prim_cpu_segreduce(ctx, n->agg, n->ninputs > 1 ? &in[1] : NULL, in[0].data, nseg,
                                len, &x->vals[o0].v);
        if (rc == 0) drop_all_valid(&x->vals[o0]);
        break;
    }
    case DN_JOIN:
    case DN_CROSS: {
        PrimPairs pairs = {0, NULL, NULL};
        if (n->kind == DN_JOIN) {
            n->rows_in = in[0].n + in[1].n;
            rc = prim_cpu_join(ctx, &in[0], in[0].n, &in[1], in[1].n, &pairs);
        } else {
            n->rows_in = in[0].n + in[1].n;
            rc = prim_cpu_cross(ctx, in[0].n, in[1].n, &pairs);
        }
        if (rc != 0) break;
        int o1 = n->outputs[1];
        RtVal *l = &x->vals[o0], *r = &x->vals[o1];
        l->v.type = r->v.type = PRIM_I64;
        l->v.n = r->v.n = pairs.n;
        l->v.data = pairs.left;
        r->v.data = pairs.right;
        l->v.valid = r->v.valid = NULL;
        l->owned = r->owned = 1;
        l->ready = r->ready = 1;
        break;
    }
    case DN_SLICE: {
        int64_t len = in[0].n;
        int64_t off = n->slice_offset < len ? n->slice_offset : len;
        int64_t cnt = len - off;
        if (n->slice_limit >= 0 && n->slice_limit < cnt) cnt = n->slice_limit;
        if (ex_alloc(x, o0, cnt, in[0].valid != NULL) != 0) return -1;
        size_t w = prim_type_width(in[0].type);
        if (cnt) memcpy(x->vals[o0].v.data, (char *)in[0].data + (size_t)off * w, (size_t)cnt * w);
        if (cnt && in[0].valid) memcpy(x->vals[o0].v.valid, in[0].valid + off, (size_t)cnt);
        n->rows_in = len;
        break;
    }
    case DN_TRANSFER:
        return ex_fail(x, "Execution Error: transfer node in a CPU-only plan");
    }
    if (rc != 0)
        return ex_fail(x, "Execution Error: %s failed: %s", plan_dag_kind_name(n->kind),
                       ctx->err[0] ? ctx->err : "unknown error");
    return 0;
}

/* Copy of an unowned value (table memory) so the result owns it. */
static int own_copy(Exec *x, RtVal *r) {
    size_t bytes = (size_t)r->v.n * prim_type_width(r->v.type);
    void *d = host_alloc(NULL, bytes);
    uint8_t *vd = r->v.valid ? host_alloc(NULL, (size_t)r->v.n) : NULL;
    if (!d || (r->v.valid && !vd)) {
        free(d);
        free(vd);
        return ex_fail(x, "Execution Error: out of memory copying the result");
    }
    if (bytes) memcpy(d, r->v.data, bytes);
    if (vd && r->v.n) memcpy(vd, r->v.valid, (size_t)r->v.n);
    r->v.data = d;
    r->v.valid = vd;
    r->owned = 1;
    return 0;
}

int exec_run(Dag *dag, const ExecOptions *opt, ExecResult *res, char *errbuf, size_t errcap) {
    Exec x;
    memset(&x, 0, sizeof x);
    memset(res, 0, sizeof *res);
    x.dag = dag;
    x.err = errbuf;
    x.errcap = errcap;
    x.ctx.nthreads = opt && opt->nthreads > 0 ? opt->nthreads : 1;
    x.ctx.alloc = host_alloc;
    x.ctx.free = host_free;
    x.vals = calloc((size_t)(dag->nvalues ? dag->nvalues : 1), sizeof(RtVal));
    x.last_use = malloc(sizeof(int) * (size_t)(dag->nvalues ? dag->nvalues : 1));
    if (!x.vals || !x.last_use) {
        free(x.vals);
        free(x.last_use);
        return ex_fail(&x, "Execution Error: out of memory");
    }
    for (int v = 0; v < dag->nvalues; v++) x.last_use[v] = -1;
    for (int i = 0; i < dag->nnodes; i++) {
        DagNode *n = &dag->nodes[i];
        for (int k = 0; k < n->ninputs; k++) x.last_use[n->inputs[k]] = i;
        if (n->len_from >= 0 && x.last_use[n->len_from] < i) x.last_use[n->len_from] = i;
        if (n->count_from >= 0) {
            int cv = dag->nodes[n->count_from].outputs[0];
            if (x.last_use[cv] < i) x.last_use[cv] = i;
        }
    }
    for (int r = 0; r < dag->nresults; r++) x.last_use[dag->results[r]] = INT_MAX;

    int rc = 0;
    for (int i = 0; i < dag->nnodes && rc == 0; i++) {
        DagNode *n = &dag->nodes[i];
        x.ctx.err[0] = 0;
        double t0 = now_ms();
        if (n->device == DEV_GPU)
            rc = ex_fail(&x, "Device Error: node #%d is placed on the GPU but this executor "
                             "has no GPU path",
                         i);
        else rc = run_cpu(&x, i);
        n->ms = now_ms() - t0;
        if (rc == 0 && n->noutputs) n->rows_out = x.vals[n->outputs[0]].v.n;
        /* free what is no longer needed */
        for (int k = 0; k < n->ninputs; k++)
            if (x.last_use[n->inputs[k]] == i) ex_release(&x, n->inputs[k]);
        if (n->len_from >= 0 && x.last_use[n->len_from] == i) ex_release(&x, n->len_from);
        if (n->count_from >= 0) {
            int cv = dag->nodes[n->count_from].outputs[0];
            if (x.last_use[cv] == i) ex_release(&x, cv);
        }
        for (int k = 0; k < n->noutputs; k++)
            if (x.last_use[n->outputs[k]] < 0) ex_release(&x, n->outputs[k]);
    }
    if (rc == 0) {
        res->ncols = dag->nresults;
        res->cols = calloc((size_t)(dag->nresults ? dag->nresults : 1), sizeof(ExecColumn));
        if (!res->cols) rc = ex_fail(&x, "Execution Error: out of memory");
        for (int r = 0; r < dag->nresults && rc == 0; r++) {
            int v = dag->results[r];
            RtVal *rv = &x.vals[v];
            int dup = 0;
            for (int q = 0; q < r; q++)
                if (dag->results[q] == v) dup = 1;
            if ((!rv->owned || dup) && own_copy(&x, rv) != 0) {
                rc = -1;
                break;
            }
            res->cols[r].vec = rv->v;
            res->cols[r].ltype = dag->values[v].ltype;
            res->cols[r].dict = dag->values[v].dict;
            rv->owned = 0; /* moved into the result */
            if (r == 0) res->nrows = rv->v.n;
        }
        if (rc != 0) exec_result_free(res);
    }
    for (int v = 0; v < dag->nvalues; v++) ex_release(&x, v);
    free(x.vals);
    free(x.last_use);
    return rc;
}

void exec_result_free(ExecResult *res) {
    if (!res) return;
    for (int i = 0; i < res->ncols; i++) {
        free(res->cols[i].vec.data);
        free(res->cols[i].vec.valid);
    }
    free(res->cols);
    memset(res, 0, sizeof *res);
}
