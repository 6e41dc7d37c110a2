/*
 * dag.c -- the primitive DAG: nodes, values, construction, and the EXPLAIN
 * renderers (text tree, JSON, Graphviz dot).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"

/* New empty DAG whose parameters live in arena (not owned). NULL on OOM. */
Dag *plan_dag_new(PlanArena *arena) {
    Dag *d = calloc(1, sizeof(Dag));
    if (d) d->arena = arena;
    return d;
}

/* Free the node and value arrays (parameters belong to the arena). */
void plan_dag_free(Dag *d) {
    if (!d) return;
    free(d->nodes);
    free(d->values);
    free(d);
}

static const char *kind_names[] = {"source",           "const",   "map",    "scan",
                                   "scatter",          "gather",  "sort",   "segments",
                                   "segmented-reduce", "join",    "cross",  "slice",
                                   "transfer",         "to-text", "keymap", "dense-aggregate"};

/* Static name of a node kind. */
const char *plan_dag_kind_name(DagKind k) {
    if (k == DN_CONCAT) return "concat";
    if (k == DN_DICTLIKE) return "like-dictionary";
    if (k == DN_SEGRANK) return "segment-rank";
    return (unsigned)k < sizeof kind_names / sizeof *kind_names ? kind_names[k] : "?";
}

int plan_dag_add(Dag *d, DagKind kind, const int *inputs, int ninputs, int noutputs,
                 const PrimType *out_types) {
    if (noutputs > DAG_MAX_OUT || ninputs > DAG_MAX_IO) return -1;
    if (d->nnodes == d->capnodes) {
        int nc = d->capnodes ? d->capnodes * 2 : 64;
        DagNode *nn = realloc(d->nodes, sizeof(DagNode) * (size_t)nc);
        if (!nn) return -1;
        d->nodes = nn;
        d->capnodes = nc;
    }
    if (d->nvalues + noutputs > d->capvalues) {
        int nc = d->capvalues ? d->capvalues * 2 : 64;
        while (nc < d->nvalues + noutputs)
            nc *= 2;
        DagValue *nv = realloc(d->values, sizeof(DagValue) * (size_t)nc);
        if (!nv) return -1;
        d->values = nv;
        d->capvalues = nc;
    }
    int id = d->nnodes++;
    DagNode *n = &d->nodes[id];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->len_from = -1;
    n->count_from = -1;
    n->fused_with = -1;
    n->start_ms = -1;
    n->slice_limit = -1;
    n->ninputs = ninputs;
    if (ninputs) {
        n->inputs = plan_alloc(d->arena, sizeof(int) * (size_t)ninputs);
        if (!n->inputs) {
            d->nnodes--;
            return -1;
        }
        memcpy(n->inputs, inputs, sizeof(int) * (size_t)ninputs);
    }
    n->noutputs = noutputs;
    for (int k = 0; k < noutputs; k++) {
        int v = d->nvalues++;
        DagValue *val = &d->values[v];
        memset(val, 0, sizeof *val);
        val->producer = id;
        val->slot = k;
        val->type = out_types[k];
        n->outputs[k] = v;
    }
    return id;
}

int plan_dag_out(const Dag *d, int node, int k) {
    return d->nodes[node].outputs[k];
}

void plan_buf_printf(PlanBuf *b, const char *fmt, ...) {
    if (b->oom) return;
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) {
        va_end(ap2);
        return;
    }
    if (b->len + (size_t)need + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 1024;
        while (nc < b->len + (size_t)need + 1)
            nc *= 2;
        char *ns = realloc(b->s, nc);
        if (!ns) {
            b->oom = 1;
            va_end(ap2);
            return;
        }
        b->s = ns;
        b->cap = nc;
    }
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap2);
    va_end(ap2);
    b->len += (size_t)need;
}

static const char *prim_type_names[] = {"u8", "i32", "i64", "f32", "f64"};

/* " (no overflow: bound B)" when the planner proved that n cannot
 * overflow int64 (DagNode.no_ovf); B is left out when only the operations
 * inside were bounded (a STRING result, say). */
static void ovf_note(PlanBuf *b, const DagNode *n) {
    if (!n->no_ovf) return;
    if (n->ovf_bound <= 1e300)
        plan_buf_printf(b, " (no overflow: bound %.3g)", n->ovf_bound);
    else
        plan_buf_printf(b, " (no overflow)");
}

/* Parameters of node n in one line (no newline). */
static void node_params(PlanBuf *b, const Dag *d, const DagNode *n) {
    switch (n->kind) {
    case DN_SOURCE:
        plan_buf_printf(b, "%s.%s", n->table->name, n->table->cols[n->column].name);
        break;
    case DN_MAP:
        plan_buf_printf(b, "%s%s [%d ops]", n->prog.as_filter ? "filter " : "",
                        n->label ? n->label : "", n->prog.ninstr);
        ovf_note(b, n);
        break;
    case DN_SORT:
        plan_buf_printf(b, "%d key%s", n->ninputs, n->ninputs == 1 ? "" : "s");
        for (int k = 0; k < n->ninputs; k++)
            if (n->desc && n->desc[k]) plan_buf_printf(b, " k%d DESC", k);
        if (n->slice_limit >= 0)
            plan_buf_printf(b, ", rows [%lld, %lld) of the order", (long long)n->slice_offset,
                            (long long)(n->slice_offset + n->slice_limit));
        else if (n->slice_offset > 0)
            plan_buf_printf(b, ", rows [%lld, end) of the order", (long long)n->slice_offset);
        break;
    case DN_SEGREDUCE: {
        static const char *an[] = {"count(*)", "count", "sum", "min", "max", "avg"};
        plan_buf_printf(b, "%s%s%s", an[n->agg], n->label ? " " : "", n->label ? n->label : "");
        ovf_note(b, n);
        break;
    }
    case DN_SLICE:
        plan_buf_printf(b, "offset %lld limit %lld", (long long)n->slice_offset,
                        (long long)n->slice_limit);
        break;
    case DN_CONST:
        plan_buf_printf(b, "%lld value%s", (long long)n->cn, n->cn == 1 ? "" : "s");
        break;
    case DN_KEYMAP:
        plan_buf_printf(b, "keys [%lld, %lld)%s%s", (long long)n->km_min,
                        (long long)(n->km_min + n->km_range), n->label ? " " : "",
                        n->label ? n->label : "");
        break;
    case DN_DENSEAGG: {
        long long ng = n->dagg ? (long long)n->dagg->ngroups : 0;
        plan_buf_printf(b, "%s%s%lld group%s", n->label ? n->label : "", n->label ? " [" : "", ng,
                        ng == 1 ? "" : "s");
        if (n->label) plan_buf_printf(b, "]");
        ovf_note(b, n);
        break;
    }
    default:
        if (n->label) plan_buf_printf(b, "%s", n->label);
        break;
    }
    (void)d;
}

/* Estimated bytes of n's outputs (estimated rows x width). */
int64_t plan_node_est_bytes(const Dag *d, const DagNode *n) {
    long long b = 0;
    for (int k = 0; k < n->noutputs; k++) {
        const DagValue *v = &d->values[n->outputs[k]];
        int64_t r = v->est_rows > 0 ? v->est_rows : n->est_rows;
        b += (long long)r * (long long)prim_type_width(v->type);
    }
    return b;
}

/* Placement estimates of n (costs in ms, reason), when placement ran. */
static void node_costs(PlanBuf *b, const DagNode *n, int json) {
    if (!n->reason) return;
    if (json) {
        plan_buf_printf(b,
                        ", \"est_cost_cpu_ms\": %.6f, \"est_cost_gpu_ms\": %.6f, "
                        "\"est_cost_xfer_ms\": %.6f, \"reason\": ",
                        n->est_cost_cpu, n->est_cost_gpu, n->est_cost_xfer);
        return;
    }
    plan_buf_printf(b, " cpu=%.3fms gpu=%.3fms xfer=%.3fms {%s}", n->est_cost_cpu, n->est_cost_gpu,
                    n->est_cost_xfer, n->reason);
}

/* Text tree: result columns at the top, each node's inputs below it,
 * indented; a node already printed is referenced by its #id. */
static void text_node(PlanBuf *b, const Dag *d, int id, int depth, uint8_t *seen, int analyze) {
    const DagNode *n = &d->nodes[id];
    for (int i = 0; i < depth; i++)
        plan_buf_printf(b, "  ");
    plan_buf_printf(b, "#%d %s", id, plan_dag_kind_name(n->kind));
    if (seen[id]) {
        plan_buf_printf(b, " (see above)\n");
        return;
    }
    seen[id] = 1;
    plan_buf_printf(b, " [%s] ", n->device == DEV_GPU ? "gpu" : "cpu");
    node_params(b, d, n);
    plan_buf_printf(b, "  -> ");
    for (int k = 0; k < n->noutputs; k++)
        plan_buf_printf(b, "%sv%d:%s", k ? "," : "", n->outputs[k],
                        prim_type_names[d->values[n->outputs[k]].type]);
    plan_buf_printf(b, "  est_rows=%lld est_bytes=%lld", (long long)n->est_rows,
                    (long long)plan_node_est_bytes(d, n));
    node_costs(b, n, 0);
    if (!analyze && n->mapped) plan_buf_printf(b, "  (read mapped from host memory)");
    if (analyze && n->fused_with >= 0) plan_buf_printf(b, "  (fused into #%d)", n->fused_with);
    if (analyze) plan_buf_printf(b, "  rows=%lld time=%.3fms", (long long)n->rows_out, n->ms);
    if (analyze && n->start_ms >= 0)
        plan_buf_printf(
            b, " (issued in %.3fms: %lld launches, %lld host waits %.3fms; started at +%.3fms)",
            n->issue_ms, (long long)n->launches, (long long)n->host_waits, n->wait_ms, n->start_ms);
    if (analyze && (n->bytes_h2d || n->bytes_d2h))
        plan_buf_printf(b, " h2d=%lldB d2h=%lldB", (long long)n->bytes_h2d,
                        (long long)n->bytes_d2h);
    if (analyze && n->bytes_mapped)
        plan_buf_printf(b, " mapped=%lldB (read in place from host memory)",
                        (long long)n->bytes_mapped);
    if (analyze && n->dict_pieces > 0)
        plan_buf_printf(b, "  (its strings in %lld pieces under the device budget)",
                        (long long)n->dict_pieces);
    if (analyze && n->dict_pieces < 0)
        plan_buf_printf(b, "  (its table kept from an earlier chunk)");
    if (analyze && n->oom_action)
        plan_buf_printf(
            b, "  (%s after a device out-of-memory: %lld bytes needed, %lld available%s)",
            n->oom_action == 2 ? "ran on the CPU" : "ran again on the GPU", (long long)n->oom_need,
            (long long)n->oom_avail, n->oom_limit ? " under memory_limit" : "");
    if (analyze && n->real_cpu)
        plan_buf_printf(b, "  (ran on the CPU: %s)",
                        n->real_cpu == 1 ? "an input holds REALs from an integer overflow"
                                         : "the GPU found an integer overflow; the CPU gives "
                                           "SQLite's REAL");
    plan_buf_printf(b, "\n");
    for (int i = 0; i < n->ninputs; i++)
        text_node(b, d, d->values[n->inputs[i]].producer, depth + 1, seen, analyze);
    if (n->len_from >= 0 && n->ninputs == 0)
        text_node(b, d, d->values[n->len_from].producer, depth + 1, seen, analyze);
}

char *plan_explain_text(const Dag *d, int analyze) {
    PlanBuf b = {0};
    uint8_t *seen = calloc((size_t)(d->nnodes ? d->nnodes : 1), 1);
    if (!seen) return NULL;
    double total = 0;
    for (int i = 0; i < d->nnodes; i++)
        total += d->nodes[i].ms;
    plan_buf_printf(&b, "primitive DAG: %d nodes, %d result column%s\n", d->nnodes, d->nresults,
                    d->nresults == 1 ? "" : "s");
    for (int r = 0; r < d->nresults; r++) {
        plan_buf_printf(&b, "result %d \"%s\" <- v%d\n", r, d->result_names[r], d->results[r]);
        text_node(&b, d, d->values[d->results[r]].producer, 1, seen, analyze);
    }
    if (analyze) plan_buf_printf(&b, "total node time: %.3f ms\n", total);
    /* the GPU's part of the timeline: what the host spent issuing the GPU
     * nodes against the device's span from the first node's start to the
     * last one's end (a span far above the nodes' own times is waiting:
     * for the host, for counts, for copies) */
    double issue = 0, first = -1, last = -1, busy = 0, wait = 0;
    int64_t launches = 0, waits = 0;
    int ngpu = 0;
    for (int i = 0; analyze && i < d->nnodes; i++) {
        const DagNode *n = &d->nodes[i];
        if (n->start_ms < 0) continue;
        ngpu++;
        issue += n->issue_ms;
        busy += n->ms;
        launches += n->launches;
        waits += n->host_waits;
        wait += n->wait_ms;
        if (first < 0 || n->start_ms < first) first = n->start_ms;
        if (n->start_ms + n->ms > last) last = n->start_ms + n->ms;
    }
    if (ngpu)
        plan_buf_printf(&b,
                        "GPU timeline: %d nodes issued in %.3f ms of host time (%lld launches, "
                        "%lld host waits for the device: %.3f ms); on the device from +%.3f to "
                        "+%.3f ms (%.3f ms of node time)\n",
                        ngpu, issue, (long long)launches, (long long)waits, wait, first, last,
                        busy);
    if (ngpu)
        plan_buf_printf(&b,
                        "after the last node: %.3f ms of host time (%lld host waits: the "
                        "results' copies back)\n",
                        d->tail_ms, (long long)d->tail_waits);
    free(seen);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* Print s as a JSON string literal. */
static void json_str(PlanBuf *b, const char *s) {
    plan_buf_printf(b, "\"");
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            plan_buf_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            plan_buf_printf(b, "\\u%04x", *s);
        else
            plan_buf_printf(b, "%c", *s);
    }
    plan_buf_printf(b, "\"");
}

char *plan_explain_json(const Dag *d, int analyze) {
    PlanBuf b = {0};
    plan_buf_printf(&b, "{\"nodes\": [");
    for (int i = 0; i < d->nnodes; i++) {
        const DagNode *n = &d->nodes[i];
        PlanBuf p = {0};
        node_params(&p, d, n);
        plan_buf_printf(&b, "%s\n  {\"id\": %d, \"kind\": \"%s\", \"device\": \"%s\", \"params\": ",
                        i ? "," : "", i, plan_dag_kind_name(n->kind),
                        n->device == DEV_GPU ? "gpu" : "cpu");
        json_str(&b, p.s ? p.s : "");
        free(p.s);
        plan_buf_printf(&b, ", \"inputs\": [");
        for (int k = 0; k < n->ninputs; k++)
            plan_buf_printf(&b, "%s%d", k ? ", " : "", d->values[n->inputs[k]].producer);
        plan_buf_printf(&b, "], \"est_rows\": %lld, \"est_bytes\": %lld", (long long)n->est_rows,
                        (long long)plan_node_est_bytes(d, n));
        if (n->reason) {
            node_costs(&b, n, 1);
            json_str(&b, n->reason);
        }
        if (analyze && n->fused_with >= 0)
            plan_buf_printf(&b, ", \"fused_with\": %d", n->fused_with);
        if (analyze && n->start_ms >= 0)
            plan_buf_printf(&b,
                            ", \"issue_ms\": %.4f, \"start_ms\": %.4f, \"launches\": %lld, "
                            "\"host_waits\": %lld, \"wait_ms\": %.4f",
                            n->issue_ms, n->start_ms, (long long)n->launches,
                            (long long)n->host_waits, n->wait_ms);
        if (analyze && n->oom_action)
            plan_buf_printf(&b,
                            ", \"device_oom\": {\"action\": \"%s\", \"bytes_needed\": %lld, "
                            "\"bytes_available\": %lld, \"memory_limit\": %s}",
                            n->oom_action == 2 ? "cpu" : "retry", (long long)n->oom_need,
                            (long long)n->oom_avail, n->oom_limit ? "true" : "false");
        if (analyze && n->real_cpu)
            plan_buf_printf(&b, ", \"overflow_cpu\": \"%s\"",
                            n->real_cpu == 1 ? "input" : "repeated");
        if (analyze)
            plan_buf_printf(&b,
                            ", \"rows\": %lld, \"ms\": %.6f, \"h2d_bytes\": %lld, \"d2h_bytes\": "
                            "%lld, \"mapped_bytes\": %lld",
                            (long long)n->rows_out, n->ms, (long long)n->bytes_h2d,
                            (long long)n->bytes_d2h, (long long)n->bytes_mapped);
        plan_buf_printf(&b, "}");
    }
    plan_buf_printf(&b, "\n], \"results\": [");
    for (int r = 0; r < d->nresults; r++) {
        plan_buf_printf(&b, "%s{\"name\": ", r ? ", " : "");
        json_str(&b, d->result_names[r]);
        plan_buf_printf(&b, ", \"node\": %d}", d->values[d->results[r]].producer);
    }
    plan_buf_printf(&b, "]}\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

char *plan_explain_dot(const Dag *d, int analyze) {
    PlanBuf b = {0};
    plan_buf_printf(&b, "digraph gqp {\n  rankdir=BT;\n  node [shape=box, fontname=monospace];\n");
    for (int i = 0; i < d->nnodes; i++) {
        const DagNode *n = &d->nodes[i];
        PlanBuf p = {0};
        node_params(&p, d, n);
        plan_buf_printf(&b, "  n%d [label=\"#%d %s [%s]\\n", i, i, plan_dag_kind_name(n->kind),
                        n->device == DEV_GPU ? "gpu" : "cpu");
        for (const char *s = p.s; s && *s; s++) {
            if (*s == '"' || *s == '\\')
                plan_buf_printf(&b, "\\%c", *s);
            else
                plan_buf_printf(&b, "%c", *s);
        }
        free(p.s);
        plan_buf_printf(&b, "\\nest_rows=%lld est_bytes=%lld", (long long)n->est_rows,
                        (long long)plan_node_est_bytes(d, n));
        if (n->reason) {
            plan_buf_printf(&b, "\\ncpu=%.3fms gpu=%.3fms xfer=%.3fms\\n", n->est_cost_cpu,
                            n->est_cost_gpu, n->est_cost_xfer);
            for (const char *s = n->reason; *s; s++) {
                if (*s == '"' || *s == '\\')
                    plan_buf_printf(&b, "\\%c", *s);
                else
                    plan_buf_printf(&b, "%c", *s);
            }
        }
        if (analyze) plan_buf_printf(&b, " rows=%lld %.3fms", (long long)n->rows_out, n->ms);
        plan_buf_printf(&b, "\"%s];\n", n->device == DEV_GPU ? ", color=green" : "");
        for (int k = 0; k < n->ninputs; k++)
            plan_buf_printf(&b, "  n%d -> n%d;\n", d->values[n->inputs[k]].producer, i);
    }
    for (int r = 0; r < d->nresults; r++)
        plan_buf_printf(&b, "  r%d [shape=oval, label=\"%s\"];\n  n%d -> r%d;\n", r,
                        d->result_names[r], d->values[d->results[r]].producer, r);
    plan_buf_printf(&b, "}\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

int plan_node_cpu_only(const DagNode *n) {
    return n->kind == DN_TOTEXT || (n->kind == DN_MAP && prim_prog_cpu_only(&n->prog));
}
