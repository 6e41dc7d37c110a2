/*
 * test_cost.c -- the cost model and the placement optimizer: cost
 * functions grow with rows, the optimizer's placement costs what the best
 * of all placements costs on random small DAGs, the least-squares fit,
 * YAML round trips, and placement patterns through libgqp with a fake cost
 * model and a pretend GPU (no device needed).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cost/cost.h"
#include "libgqp/internal.h"

/* A random source of the tests (xorshift, fixed seed per test). */
static uint64_t rng_state;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Set node i's estimate and its outputs' to rows. */
static void set_rows(Dag *d, int i, int64_t rows) {
    d->nodes[i].est_rows = rows;
    for (int k = 0; k < d->nodes[i].noutputs; k++)
        d->values[d->nodes[i].outputs[k]].est_rows = rows;
}

static PrimInstr map_code[3] = {{POP_COL, PRIM_REG_I, 0, 0, 0, 0, 0, 0, NULL, 0},
                                {POP_CONST, PRIM_REG_I, 1, 0, 0, 0, 1, 0, NULL, 0},
                                {POP_GT, PRIM_REG_I, 2, 0, 1, 0, 0, 0, NULL, 0}};

/* A source node of rows rows (type I32) over a dummy table. */
static CatTable dummy_table;
static int add_source(Dag *d, int col, int64_t rows) {
    PrimType t = PRIM_I32;
    int s = plan_dag_add(d, DN_SOURCE, NULL, 0, 1, &t);
    d->nodes[s].table = &dummy_table;
    d->nodes[s].column = col;
    set_rows(d, s, rows);
    return s;
}

/* Dense-aggregate specs of the tests, by number of inputs: one input:
 * a range filter and a group key on it, COUNT(*) and SUM; two inputs: the
 * same, plus a probe of the second input (a keymap) by the first. */
static PrimDenseAgg test_dagg[2];
static const PrimDenseAgg *dagg_spec(int nin) {
    PrimDenseAgg *s = &test_dagg[nin > 1];
    memset(s, 0, sizeof *s);
    s->rows = -1;
    s->nranges = 1;
    s->range_hi[0] = 1000;
    if (nin > 1) {
        s->ndims = 1;
        s->dim_map[0] = 1;
        s->dim_range[0] = 1000;
    }
    s->nkeys = 1;
    s->key_dim[0] = -1;
    s->key_card[0] = 1024;
    s->naggs = 2;
    s->agg[0] = AGG_COUNT_STAR;
    s->val_a[0] = s->val_b[0] = -1;
    s->agg[1] = AGG_SUM;
    s->val_b[1] = -1;
    s->ngroups = 1024;
    return s;
}

/* Add node of kind k reading inputs, with its outputs (two for joins,
 * PRIM_DA_NOUT(2) for dense-aggregates, else one); a keymap's range is
 * rows. */
static int add_node(Dag *d, DagKind k, const int *in, int nin, int64_t rows) {
    PrimType t[DAG_MAX_OUT];
    for (int j = 0; j < DAG_MAX_OUT; j++)
        t[j] = PRIM_I64;
    if (k == DN_MAP) t[0] = PRIM_I32;
    int nout = k == DN_JOIN || k == DN_CROSS ? 2 : k == DN_DENSEAGG ? PRIM_DA_NOUT(2) : 1;
    int n = plan_dag_add(d, k, in, nin, nout, t);
    if (k == DN_MAP) {
        d->nodes[n].prog.ninstr = 3;
        d->nodes[n].prog.code = map_code;
        d->nodes[n].prog.ninputs = nin;
    }
    if (k == DN_KEYMAP) d->nodes[n].km_range = rows;
    if (k == DN_DENSEAGG) d->nodes[n].dagg = dagg_spec(nin);
    set_rows(d, n, rows);
    if (k == DN_DENSEAGG)
        for (int j = 0; j < nout; j++)
            d->values[d->nodes[n].outputs[j]].est_rows = d->nodes[n].dagg->ngroups;
    return n;
}

/* ----------------------------------------------------- cost functions -- */

Test(cost, node_costs_grow_with_rows) {
    CostModel m[2];
    cost_model_default(&m[0], "cpu");
    cost_model_default(&m[1], "h100");
    DagKind kinds[] = {DN_MAP,       DN_SCAN, DN_SCATTER, DN_GATHER, DN_SORT,   DN_SEGMENTS,
                       DN_SEGREDUCE, DN_JOIN, DN_CROSS,   DN_SLICE,  DN_KEYMAP, DN_DENSEAGG};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (int mi = 0; mi < 2; mi++)
            for (int dev = 0; dev < 2; dev++) {
                double prev = -1;
                for (int64_t rows = 10; rows <= 100000000; rows *= 10) {
                    PlanArena *a = plan_arena_new();
                    Dag *d = plan_dag_new(a);
                    int s0 = add_source(d, 0, rows), s1 = add_source(d, 1, rows);
                    int in[2] = {plan_dag_out(d, s0, 0), plan_dag_out(d, s1, 0)};
                    int n = add_node(d, kinds[k], in, 2, rows);
                    if (kinds[k] == DN_SEGREDUCE) d->nodes[n].len_from = in[1];
                    double c = cost_node_us(&m[mi], d, n, (DagDevice)dev);
                    cr_assert(c >= prev, "%s on %s (%s): %g us at %lld rows < %g before",
                              plan_dag_kind_name(kinds[k]), dev ? "gpu" : "cpu", m[mi].name, c,
                              (long long)rows, prev);
                    cr_assert(c > 0);
                    prev = c;
                    plan_dag_free(d);
                    plan_arena_free(a);
                }
            }
}

/* The shapes issue 4 fixed on the CPU model: a gather through a sort's
 * permutation from a column larger than the cache costs more than one
 * through a filter's ascending row ids; a join against a 200-row
 * dimension costs less per row than one of two 1e6-row sides; a float SUM
 * (compensated) costs more than an integer one; thread starts are charged
 * from 65,536 rows only. */
Test(cost, cpu_shapes_of_gather_join_segreduce) {
    CostModel m;
    cost_model_default(&m, "cpu");
    PlanArena *a = plan_arena_new();
    Dag *d = plan_dag_new(a);
    int64_t n = 10000000;
    int s0 = add_source(d, 0, n), s1 = add_source(d, 1, n), s2 = add_source(d, 2, 200);
    int v0 = plan_dag_out(d, s0, 0), v1 = plan_dag_out(d, s1, 0), v2 = plan_dag_out(d, s2, 0);
    int sc = add_node(d, DN_SCATTER, (int[]){v0, v0}, 2, n);
    int so = add_node(d, DN_SORT, (int[]){v1}, 1, n);
    int g_seq = add_node(d, DN_GATHER, (int[]){v1, plan_dag_out(d, sc, 0)}, 2, n);
    int g_rnd = add_node(d, DN_GATHER, (int[]){v1, plan_dag_out(d, so, 0)}, 2, n);
    cr_assert(cost_node_us(&m, d, g_rnd, DEV_CPU) > 1.5 * cost_node_us(&m, d, g_seq, DEV_CPU));
    int j_small = add_node(d, DN_JOIN, (int[]){v2, v0}, 2, n);
    int j_big = add_node(d, DN_JOIN, (int[]){v1, v0}, 2, n);
    cr_assert(cost_node_us(&m, d, j_small, DEV_CPU) < 0.8 * cost_node_us(&m, d, j_big, DEV_CPU));
    int seg = add_node(d, DN_SEGMENTS, (int[]){v1}, 1, 50);
    int r_int = add_node(d, DN_SEGREDUCE, (int[]){plan_dag_out(d, seg, 0), v1}, 2, 50);
    d->nodes[r_int].agg = AGG_SUM;
    int fsrc = add_source(d, 3, n);
    d->values[plan_dag_out(d, fsrc, 0)].type = PRIM_F32;
    int r_flt = add_node(d, DN_SEGREDUCE,
                         (int[]){plan_dag_out(d, seg, 0), plan_dag_out(d, fsrc, 0)}, 2, 50);
    d->nodes[r_flt].agg = AGG_SUM;
    cr_assert(cost_node_us(&m, d, r_flt, DEV_CPU) > cost_node_us(&m, d, r_int, DEV_CPU));
    /* a thread start is charged at 1e7 rows and not at 1,000 */
    int t0 = add_source(d, 4, 1000);
    int g_small =
        add_node(d, DN_GATHER, (int[]){plan_dag_out(d, t0, 0), plan_dag_out(d, t0, 0)}, 2, 1000);
    cr_assert(cost_node_us(&m, d, g_small, DEV_CPU) < m.cpu_spawn_us);
    cr_assert(cost_node_us(&m, d, g_seq, DEV_CPU) > m.cpu_spawn_us);
    plan_dag_free(d);
    plan_arena_free(a);
}

/* The dense plan of an aggregate wins on a large fact table with few
 * groups (SSB-like: 6M rows, one dimension, 7 groups, a selective or no
 * filter) and loses when the dense table is huge next to the rows (1,000
 * rows into 1e7 slots; with a GPU, which fills 1e7 slots in ~0.1 ms, about
 * the fixed costs of the sort plan's kernels, into 1e8), on both shipped
 * models. */
Test(cost, agg_plan_dense_vs_sort) {
    const char *models[] = {"cpu", "h100"};
    PlanAggShape few = {.scanned = 6e6,
                        .fact_bytes = 16,
                        .joined = 1.2e5,
                        .ndims = 1,
                        .dim_rows = 2556,
                        .dim_range = 2557,
                        .nkeys = 1,
                        .naggs = 1,
                        .groups = 8,
                        .est_groups = 7};
    PlanAggShape all = few;
    all.joined = 6e6;
    PlanAggShape huge = {.scanned = 1000,
                         .fact_bytes = 16,
                         .joined = 1000,
                         .ndims = 2,
                         .dim_rows = 2000,
                         .dim_range = 2000,
                         .nkeys = 2,
                         .naggs = 1,
                         .groups = 1e7,
                         .est_groups = 1000};
    for (int mi = 0; mi < 2; mi++)
        for (int gpu = 0; gpu < 2; gpu++) {
            CostModel m;
            cost_model_default(&m, models[mi]);
            const PlanAggShape *dense_wins[] = {&few, &all};
            for (int k = 0; k < 2; k++) {
                double ds = cost_agg_plan_us(&m, 1, dense_wins[k], gpu);
                double ss = cost_agg_plan_us(&m, 0, dense_wins[k], gpu);
                cr_assert(ds > 0 && ds < ss, "%s gpu=%d %s: dense %g us, sort %g us", m.name, gpu,
                          k ? "no filter" : "selective", ds, ss);
            }
            huge.groups = gpu ? 1e8 : 1e7;
            double dh = cost_agg_plan_us(&m, 1, &huge, gpu);
            double sh = cost_agg_plan_us(&m, 0, &huge, gpu);
            cr_assert(sh > 0 && sh < dh, "%s gpu=%d huge: dense %g us, sort %g us", m.name, gpu, dh,
                      sh);
            /* a GPU never makes a plan dearer: the cheaper device is taken */
            if (gpu) cr_assert(dh <= cost_agg_plan_us(&m, 1, &huge, 0));
        }
}

/* A keymap's and a dense-aggregate's costs follow their parameters: the
 * keymap's range and the dense table's groups and dimensions. */
Test(cost, keymap_and_denseagg_parameters) {
    CostModel m;
    cost_model_default(&m, "cpu");
    PlanArena *a = plan_arena_new();
    Dag *d = plan_dag_new(a);
    int s0 = add_source(d, 0, 1000000), s1 = add_source(d, 1, 1000);
    int fk = plan_dag_out(d, s0, 0), dk = plan_dag_out(d, s1, 0);
    int km = add_node(d, DN_KEYMAP, &dk, 1, 1000);
    double small = cost_node_us(&m, d, km, DEV_CPU);
    d->nodes[km].km_range = 100000000;
    d->values[d->nodes[km].outputs[0]].est_rows = 0; /* the range sizes the output */
    cr_assert_eq(cost_value_rows(d, d->nodes[km].outputs[0]), 100000000);
    cr_assert(cost_node_us(&m, d, km, DEV_CPU) > 10 * small);
    int in[2] = {fk, plan_dag_out(d, km, 0)};
    int da = add_node(d, DN_DENSEAGG, in, 2, 1000000);
    cr_assert_eq(d->nodes[da].noutputs, PRIM_DA_NOUT(2));
    double one_dim = cost_node_us(&m, d, da, DEV_CPU);
    PrimDenseAgg wide = *d->nodes[da].dagg;
    wide.ngroups = 100000000;
    d->nodes[da].dagg = &wide;
    cr_assert(cost_node_us(&m, d, da, DEV_CPU) > 10 * one_dim);
    PrimDenseAgg nodim = *dagg_spec(1);
    d->nodes[da].dagg = &nodim;
    cr_assert(cost_node_us(&m, d, da, DEV_CPU) < one_dim, "a probe costs something");
    plan_dag_free(d);
    plan_arena_free(a);
}

Test(cost, transfers_pinned_faster_than_pageable) {
    CostModel m;
    cost_model_default(&m, "h100");
    double prev = 0;
    for (double b = 1e3; b <= 1e10; b *= 10) {
        double pin = cost_link_us(&m.h2d_pinned, b), page = cost_link_us(&m.h2d_pageable, b);
        cr_assert(pin > prev);
        cr_assert(page >= pin);
        prev = pin;
    }
    cr_assert_eq(cost_link_us(&m.h2d_pinned, 0), 0);
}

/* A cold column is copied pageable below the crossover and page-locked
 * above it, whichever is cheaper: cost_fetch_us is the lower envelope. */
Test(cost, cold_column_copy_locks_only_when_cheaper) {
    CostModel m;
    cost_model_default(&m, "h100");
    m.h2d_pageable = (CostLink){10, 8}; /* 8 GB/s */
    m.h2d_lock = (CostLink){190, 12};   /* 180 us more, 12 GB/s */
    size_t x = cost_lock_min_bytes(&m); /* 180 us / (1/8 - 1/12 ns/B) = 4.32 MB */
    cr_assert(x > 4300000 && x < 4350000, "crossover %zu", x);
    for (double b = 1e3; b <= 1e10; b *= 3) {
        double pg = cost_link_us(&m.h2d_pageable, b), lk = cost_link_us(&m.h2d_lock, b);
        cr_assert_float_eq(cost_fetch_us(&m, b), pg < lk ? pg : lk, 1e-6 * (pg + lk), "%g B", b);
    }
    m.h2d_lock.gbps = 6; /* slower per byte too: never lock */
    cr_assert_eq(cost_lock_min_bytes(&m), SIZE_MAX);
    m.h2d_lock = (CostLink){5, 20}; /* cheaper everywhere: always lock */
    cr_assert_eq(cost_lock_min_bytes(&m), 0);
    m.h2d_lock.gbps = 0; /* no figures: never lock */
    cr_assert_eq(cost_lock_min_bytes(&m), SIZE_MAX);
}

/* Below the parallel threshold a CPU primitive runs on one thread: its
 * variable time grows by serial_x, its fixed cost does not; the GPU and
 * large calls are unchanged. */
Test(cost, serial_calls_cost_serial_x_more) {
    CostModel m;
    cost_model_default(&m, "h100");
    PlanArena *a = plan_arena_new();
    Dag *d = plan_dag_new(a);
    int s0 = add_source(d, 0, 50000), s1 = add_source(d, 1, 50000);
    int in[2] = {d->nodes[s0].outputs[0], d->nodes[s1].outputs[0]};
    int g = add_node(d, DN_GATHER, in, 2, 50000);
    double cpu1 = cost_node_us(&m, d, g, DEV_CPU), gpu1 = cost_node_us(&m, d, g, DEV_GPU);
    m.cpu[CP_GATHER].serial_x = 4;
    m.gpu[CP_GATHER].serial_x = 4; /* ignored on the GPU */
    double cpu4 = cost_node_us(&m, d, g, DEV_CPU);
    double fixed = m.cpu[CP_GATHER].fixed_us;
    cr_assert_float_eq(cpu4 - fixed, 4 * (cpu1 - fixed), 1e-6 * cpu4);
    cr_assert_float_eq(cost_node_us(&m, d, g, DEV_GPU), gpu1, 1e-9);
    set_rows(d, s1, 1000000); /* parallel: the slopes as fitted */
    set_rows(d, g, 1000000);
    double big4 = cost_node_us(&m, d, g, DEV_CPU);
    m.cpu[CP_GATHER].serial_x = 1;
    cr_assert_float_eq(cost_node_us(&m, d, g, DEV_CPU), big4, 1e-9);
    cr_assert(cost_node_parallel(&m, d, g));
    plan_dag_free(d);
    plan_arena_free(a);
}

Test(cost, least_squares_recovers_coefficients) {
    double X[20 * 3], y[20], beta[3];
    for (int i = 0; i < 20; i++) {
        double e = (double)(i + 1) * 1000, b = (double)((i * 7) % 11 + 1) * 5000;
        X[i * 3] = 1, X[i * 3 + 1] = e, X[i * 3 + 2] = b;
        y[i] = 12.5 + 0.003 * e + 0.0004 * b;
    }
    cr_assert_eq(cost_fit(X, y, 20, 3, beta), 0);
    cr_assert_float_eq(beta[0], 12.5, 1e-6);
    cr_assert_float_eq(beta[1], 0.003, 1e-9);
    cr_assert_float_eq(beta[2], 0.0004, 1e-9);
    /* a negative intercept is clamped at 0 */
    for (int i = 0; i < 20; i++)
        y[i] = -5 + 0.002 * X[i * 3 + 1];
    cr_assert_eq(cost_fit(X, y, 20, 2 * 0 + 3, beta), 0);
    cr_assert(beta[0] >= 0 && beta[1] >= 0 && beta[2] >= 0);
}

Test(cost, yaml_round_trip_and_shipped_files) {
    CostModel m, r;
    cost_model_default(&m, "h100");
    m.cpu[CP_SORT].fixed_us = 123.5;
    m.h2d_pageable.gbps = 7.25;
    m.cpu_spawn_us = 17.5;
    m.cpu_cache_mb = 12;
    m.h2d_lock = (CostLink){150.5, 11.5};
    m.cpu_wake_us = 21.5;
    m.gpu_query_us = 99.5;
    m.cpu_query_us = 33.5;
    m.gpu_sync_node_us = 44.5;
    m.cpu[CP_GATHER].serial_x = 9.5;
    char path[] = "/tmp/gqp-cost-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    char err[512];
    cr_assert_eq(cost_model_write(&m, path, err, sizeof err), 0, "%s", err);
    cost_model_default(&r, "cpu");
    cr_assert_eq(cost_model_load(&r, path, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.cpu[CP_SORT].fixed_us, 123.5, 1e-9);
    cr_assert_float_eq(r.h2d_pageable.gbps, 7.25, 1e-9);
    cr_assert_float_eq(r.cpu_spawn_us, 17.5, 1e-9);
    cr_assert_float_eq(r.cpu_cache_mb, 12, 1e-9);
    cr_assert_float_eq(r.h2d_lock.latency_us, 150.5, 1e-9);
    cr_assert_float_eq(r.h2d_lock.gbps, 11.5, 1e-9);
    cr_assert_float_eq(r.cpu_wake_us, 21.5, 1e-9);
    cr_assert_float_eq(r.gpu_query_us, 99.5, 1e-9);
    cr_assert_float_eq(r.cpu_query_us, 33.5, 1e-9);
    cr_assert_float_eq(r.gpu_sync_node_us, 44.5, 1e-9);
    cr_assert_float_eq(r.cpu[CP_GATHER].serial_x, 9.5, 1e-9);
    cr_assert_float_eq(r.cpu[CP_MAP].serial_x, 1, 1e-9);
    cr_assert_float_eq(r.gpu_cache_mb, m.gpu_cache_mb, 1e-9);
    cr_assert_float_eq(r.gpu[CP_MAP].ns_per_byte, m.gpu[CP_MAP].ns_per_byte, 1e-6);
    FILE *f = fopen(path, "w");
    fputs("cpu:\n  mapp: {fixed_us: 1}\n", f);
    fclose(f);
    cr_assert_eq(cost_model_load(&r, path, err, sizeof err), -1);
    cr_assert(strstr(err, "mapp") != NULL, "%s", err);
    unlink(path);
    const char *src = getenv("GQP_SOURCE_DIR");
    if (src) {
        const char *files[] = {"cost-h100.yaml", "cost-cpu-2core.yaml", "cost-h200.yaml"};
        for (int i = 0; i < 3; i++) {
            char p[1024];
            snprintf(p, sizeof p, "%s/configs/%s", src, files[i]);
            cost_model_default(&r, "cpu");
            cr_assert_eq(cost_model_load(&r, p, err, sizeof err), 0, "%s", err);
            cr_assert(r.cpu[CP_MAP].ns_per_elem > 0 || r.cpu[CP_MAP].ns_per_byte > 0, "%s", p);
        }
    }
}

/* The shipped cost file is chosen by the device's name: an H200 gets
 * configs/cost-h200.yaml (not the H100's), an H100 its own, others the
 * CPU file. */
Test(cost, device_name_selects_shipped_file) {
    CostModel m;
    char err[512];
    cr_assert_eq(cost_model_select(&m, NULL, "NVIDIA H200, 139.8 GiB", err, sizeof err), 0, "%s",
                 err);
    cr_assert_str_eq(m.name, "h200-calibrated");
    cr_assert(strstr(m.source, "cost-h200.yaml"), "%s", m.source);
    cr_assert(m.h2d_pinned.gbps > 50 && m.h2d_pinned.gbps < 60);    /* measured ~55 GB/s pinned */
    cr_assert(m.h2d_pageable.gbps > 5 && m.h2d_pageable.gbps < 20); /* measured */
    cr_assert(m.gpu[CP_SCAN].ns_per_byte > 0);
    cr_assert_eq(cost_model_select(&m, NULL, "NVIDIA H100 80GB HBM3, 79.1 GiB", err, sizeof err), 0,
                 "%s", err);
    cr_assert(strstr(m.source, "cost-h100.yaml"), "%s", m.source);
    cr_assert_eq(cost_model_select(&m, NULL, NULL, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(m.source, "cost-cpu-2core.yaml"), "%s", m.source);
}

/* A cost file without keymap / denseagg (written before they existed)
 * gets them estimated from its own scatter, map and join; one that names
 * them keeps its values. */
Test(cost, yaml_without_dense_primitives) {
    char path[] = "/tmp/gqp-cost-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    FILE *f = fopen(path, "w");
    fputs("cpu:\n  scatter: {fixed_us: 1, gbps: 4}\n  map: {fixed_us: 2, ns_per_elem: 0.5, "
          "gbps: 10}\n",
          f);
    fclose(f);
    CostModel r, def;
    char err[512];
    cost_model_default(&r, "h100");
    cost_model_default(&def, "h100");
    cr_assert_eq(cost_model_load(&r, path, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.cpu[CP_KEYMAP].fixed_us, 1, 1e-12);
    cr_assert_float_eq(r.cpu[CP_KEYMAP].ns_per_byte, 0.25, 1e-12);
    cr_assert_float_eq(r.cpu[CP_DENSEAGG].fixed_us, 2, 1e-12);
    cr_assert_float_eq(r.cpu[CP_DENSEAGG].ns_per_byte, 0.1, 1e-12);
    cr_assert_float_eq(r.cpu[CP_DENSEAGG].ns_per_elem, 2.0, 1e-12);
    cr_assert_float_eq(r.gpu[CP_DENSEAGG].ns_per_elem, def.gpu[CP_DENSEAGG].ns_per_elem, 1e-12);
    f = fopen(path, "w");
    fputs("cpu:\n  map: {fixed_us: 2}\n  denseagg: {fixed_us: 7, ns_per_elem: 3, gbps: 5}\n", f);
    fclose(f);
    cr_assert_eq(cost_model_load(&r, path, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.cpu[CP_DENSEAGG].fixed_us, 7, 1e-12);
    cr_assert_float_eq(r.cpu[CP_DENSEAGG].ns_per_elem, 3, 1e-12);
    unlink(path);
}

/* ---------------------------------------------- optimizer = brute force -- */

/* Residency of the random tests: even columns are resident. */
static int even_resident(void *ud, const CatTable *t, int column) {
    (void)ud;
    (void)t;
    return column % 2 == 0;
}

/* A random DAG: 2-3 sources, then nfree nodes of random kinds reading
 * random earlier values; results: one or two late values. */
static Dag *random_dag(PlanArena *a, int nfree) {
    Dag *d = plan_dag_new(a);
    int nsrc = 2 + (int)(rnd() % 2);
    for (int s = 0; s < nsrc; s++) {
        int64_t rows = (int64_t)1 << (rnd() % 27);
        add_source(d, s, rows);
    }
    DagKind kinds[] = {DN_MAP,  DN_GATHER, DN_SORT,   DN_SEGREDUCE, DN_JOIN,
                       DN_SCAN, DN_SLICE,  DN_KEYMAP, DN_DENSEAGG};
    for (int i = 0; i < nfree; i++) {
        DagKind k = kinds[rnd() % (sizeof kinds / sizeof *kinds)];
        int nin = (k == DN_GATHER || k == DN_JOIN || k == DN_SEGREDUCE) ? 2
                  : k == DN_MAP || k == DN_KEYMAP || k == DN_DENSEAGG   ? 1 + (int)(rnd() % 2)
                                                                        : 1;
        int in[2];
        for (int j = 0; j < nin; j++) {
            /* prefer recent values so that chains form */
            int lo = d->nvalues > 4 ? d->nvalues - 4 : 0;
            in[j] = (rnd() % 3) ? lo + (int)(rnd() % (uint64_t)(d->nvalues - lo))
                                : (int)(rnd() % (uint64_t)d->nvalues);
        }
        int64_t rows = (int64_t)1 << (rnd() % 27);
        int n = add_node(d, k, in, nin, rows);
        if (k == DN_SEGREDUCE) d->nodes[n].len_from = in[1];
    }
    static int results[2];
    d->results = results;
    d->nresults = 1 + (int)(rnd() % 2);
    results[0] = d->nvalues - 1;
    results[1] = (int)(rnd() % (uint64_t)d->nvalues);
    return d;
}

/* Smallest objective over every placement of every node (sources
 * included, so the optimizer's rule for them is checked too). */
static double brute_force(const Dag *d, const CostModel *m, const CostInputs *in) {
    DagDevice dev[32];
    double best = 1e300;
    for (uint32_t mask = 0; mask < (1u << d->nnodes); mask++) {
        for (int i = 0; i < d->nnodes; i++)
            dev[i] = (mask >> i & 1) ? DEV_GPU : DEV_CPU;
        double t = cost_dag_total(d, m, in, dev);
        if (t < best) best = t;
    }
    return best;
}

/* Run trials random DAGs with nfree free nodes; exhaustive_max as given.
 * Returns the worst ratio optimizer / brute force. */
static double compare_trials(int trials, int nfree, int exhaustive_max, int *exact) {
    CostModel m;
    cost_model_default(&m, "h100");
    double worst = 1;
    *exact = 0;
    for (int t = 0; t < trials; t++) {
        PlanArena *a = plan_arena_new();
        Dag *d = random_dag(a, nfree);
        CostInputs in;
        memset(&in, 0, sizeof in);
        in.gpu_available = 1;
        in.resident = even_resident;
        in.host_pinned = (int)(rnd() % 2);
        in.exhaustive_max = exhaustive_max;
        CostPlan plan;
        char err[256];
        cr_assert_eq(cost_place(d, &m, &in, &plan, err, sizeof err), 0, "%s", err);
        DagDevice dev[32];
        for (int i = 0; i < d->nnodes; i++) {
            dev[i] = d->nodes[i].device;
            cr_assert(d->nodes[i].reason != NULL);
        }
        double got = cost_dag_total(d, &m, &in, dev);
        cr_assert_float_eq(got, plan.total_us, 1e-6 * (got + 1));
        double best = brute_force(d, &m, &in);
        cr_assert(got >= best * (1 - 1e-9), "better than every placement?");
        cr_assert(got <= plan.all_cpu_us * (1 + 1e-9) && got <= plan.all_gpu_us * (1 + 1e-9));
        if (got <= best * (1 + 1e-9)) (*exact)++;
        if (got / best > worst) worst = got / best;
        plan_dag_free(d);
        plan_arena_free(a);
    }
    return worst;
}

Test(cost, exhaustive_equals_brute_force) {
    rng_state = 0x1234567;
    int exact;
    for (int nfree = 1; nfree <= 10; nfree++) {
        double worst = compare_trials(20, nfree, 0, &exact);
        cr_assert_eq(exact, 20, "%d free nodes: %d of 20 optimal (worst ratio %g)", nfree, exact,
                     worst);
    }
}

Test(cost, dynamic_programme_close_to_brute_force) {
    rng_state = 0x7654321;
    int exact, total_exact = 0;
    double worst = 1;
    for (int nfree = 2; nfree <= 10; nfree++) {
        double w = compare_trials(20, nfree, -1, &exact);
        total_exact += exact;
        if (w > worst) worst = w;
    }
    /* the DP + local search is a heuristic on DAGs with shared values:
     * nearly always optimal, never far off */
    cr_assert(total_exact >= 170, "optimal on %d of 180 DAGs", total_exact);
    cr_assert(worst <= 1.10, "worst ratio %g", worst);
}

Test(cost, no_gpu_places_everything_on_cpu) {
    rng_state = 42;
    CostModel m;
    cost_model_default(&m, "h100");
    PlanArena *a = plan_arena_new();
    Dag *d = random_dag(a, 20);
    CostInputs in;
    memset(&in, 0, sizeof in);
    char err[256];
    cr_assert_eq(cost_place(d, &m, &in, NULL, err, sizeof err), 0);
    for (int i = 0; i < d->nnodes; i++) {
        cr_assert_eq(d->nodes[i].device, DEV_CPU);
        cr_assert_str_eq(d->nodes[i].reason, "no GPU");
    }
    plan_dag_free(d);
    plan_arena_free(a);
}

/* ------------------------------------------------- through libgqp -- */

/* A fake model: the CPU streams at 1 GB/s with no fixed cost; the GPU at
 * 1 TB/s after 20 us per call; PCIe 1 GB/s after 10 us. */
static CostModel *fake_model(void) {
    CostModel *m = malloc(sizeof(CostModel));
    cost_model_default(m, "h100");
    for (int k = 0; k < CP_COUNT; k++) {
        m->cpu[k] = (CostPrim){0, 0.5, 1.0, 1};
        m->gpu[k] = (CostPrim){20, 0.0005, 0.001, 1};
    }
    m->h2d_pinned = m->d2h_pinned = (CostLink){10, 1.0};
    m->h2d_pageable = m->d2h_pageable = (CostLink){10, 0.5};
    m->gpu_sync_us = 10;
    snprintf(m->source, sizeof m->source, "fake");
    return m;
}

static char gen_dir[64];
static gqp *db;

/* A handle over a generated 200,000-row `test` table and a 10-row `tiny`
 * table, with the fake model and a pretend GPU. */
static void open_db(void) {
    snprintf(gen_dir, sizeof gen_dir, "/tmp/gqp-cost-db-XXXXXX");
    cr_assert(mkdtemp(gen_dir) != NULL);
    char *err = NULL;
    cr_assert_eq(gqp_gen_test(gen_dir, 200000, 4, &err), GQP_OK, "%s", err ? err : "");
    char cfg[128];
    snprintf(cfg, sizeof cfg, "%s/gqp.yaml", gen_dir);
    cr_assert_eq(gqp_open(cfg, &db), GQP_OK, "%s", db ? gqp_errmsg(db) : "");
    const char *setup[] = {"CREATE TABLE tiny (a INT32, b INT32)",
                           "INSERT INTO tiny VALUES (1,2),(3,4),(5,6),(7,8),(9,10),(2,2),(4,4),"
                           "(6,6),(8,8),(10,10)"};
    for (int i = 0; i < 2; i++) {
        gqp_stmt *st;
        cr_assert_eq(gqp_prepare(db, setup[i], -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
        cr_assert_eq(gqp_step(st), GQP_DONE, "%s", gqp_errmsg(db));
        gqp_finalize(st);
    }
    db->cost = fake_model();
    db->test_gpu = 1;
}

static void close_db(void) {
    gqp_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", gen_dir);
    cr_assert_eq(system(cmd), 0);
}

/* Prepare sql; the caller finalizes. */
static gqp_stmt *plan(const char *sql) {
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, sql, -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(db));
    return st;
}

/* Number of non-source nodes of st's DAG on dev. */
static int count_on(gqp_stmt *st, DagDevice dev) {
    int c = 0;
    for (int i = 0; i < st->dag->nnodes; i++)
        c += st->dag->nodes[i].kind != DN_SOURCE && st->dag->nodes[i].device == dev;
    return c;
}

TestSuite(place, .init = open_db, .fini = close_db);

Test(place, tiny_table_stays_on_cpu) {
    db->test_gpu = 2; /* even resident, 20 us per GPU call loses to 10 rows */
    gqp_stmt *st = plan("SELECT a, b FROM tiny WHERE a > 3 ORDER BY b");
    cr_assert_eq(count_on(st, DEV_GPU), 0);
    cr_assert(count_on(st, DEV_CPU) > 0);
    gqp_finalize(st);
}

Test(place, large_resident_scan_goes_to_gpu) {
    db->test_gpu = 2;
    gqp_stmt *st = plan("SELECT SUM(uniformf) FROM test WHERE uniformi > 50");
    int map_on_gpu = 0;
    for (int i = 0; i < st->dag->nnodes; i++) {
        DagNode *n = &st->dag->nodes[i];
        if (n->kind == DN_MAP && n->prog.as_filter) map_on_gpu = n->device == DEV_GPU;
        if (n->kind == DN_SOURCE && n->device == DEV_GPU)
            cr_assert_str_eq(n->reason, "resident on the GPU");
    }
    cr_assert(map_on_gpu, "the filter over 200k resident rows should run on the GPU");
    char *out = NULL;
    cr_assert_eq(gqp_explain(db, "SELECT SUM(uniformf) FROM test WHERE uniformi > 50", -1, 0, &out),
                 GQP_OK);
    cr_assert(strstr(out, "[gpu]") && strstr(out, "gpu=") && strstr(out, "est_bytes="), "%s", out);
    gqp_free(out);
    gqp_finalize(st);
}

/* A map holding a CPU-only instruction (SQLite's math functions but SQRT:
 * POP_MATH) stays on the CPU under a pretend GPU, both as the cost model
 * places it and under --device gpu, while the filter beside it runs on the
 * GPU. */
Test(place, math_function_map_stays_on_cpu) {
    db->test_gpu = 2;
    const char *q = "SELECT SUM(EXP(uniformf)) FROM test WHERE uniformi > 50";
    for (int forced = 0; forced < 2; forced++) {
        gqp_stmt *st;
        if (forced) db->device = GQP_DEVICE_GPU;
        st = plan(q);
        int math = 0, filter_gpu = 0;
        for (int i = 0; i < st->dag->nnodes; i++) {
            DagNode *n = &st->dag->nodes[i];
            if (n->kind == DN_MAP && prim_prog_cpu_only(&n->prog)) {
                math++;
                cr_assert_eq(n->device, DEV_CPU, "forced %d: the sqrt map on the GPU", forced);
                cr_assert(strstr(n->reason, "CPU twin only"), "%s", n->reason);
            }
            if (n->kind == DN_MAP && n->prog.as_filter) filter_gpu = n->device == DEV_GPU;
        }
        cr_assert_eq(math, 1);
        cr_assert(filter_gpu, "forced %d: the filter should stay on the GPU", forced);
        gqp_finalize(st);
    }
    db->device = GQP_DEVICE_AUTO;
}

/* Estimated cost of st's DAG with every free node on the CPU (gpu = 0) or
 * the GPU (1), and of its current placement (gpu = -1). */
static double dag_cost(gqp_stmt *st, int gpu) {
    CostInputs in;
    memset(&in, 0, sizeof in);
    in.gpu_available = 1;
    in.host_pinned = 1;
    DagDevice dev[256];
    cr_assert(st->dag->nnodes < 256);
    for (int i = 0; i < st->dag->nnodes; i++) {
        DagNode *n = &st->dag->nodes[i];
        dev[i] = gpu < 0 ? n->device : (gpu && !plan_node_cpu_only(n)) ? DEV_GPU : DEV_CPU;
    }
    return cost_dag_total(st->dag, db->cost, &in, dev);
}

Test(place, cold_table_tiny_result_follows_the_model) {
    db->test_gpu = 1; /* nothing resident */
    const char *q = "SELECT COUNT(*) FROM test WHERE uniformi > 50 AND normali5 < 0";
    /* PCIe at 1 GB/s (a cold column is copied pageable or page-locked,
     * whichever cost_fetch_us finds cheaper: both at 1 GB/s here): moving
     * 200k x 2 int columns (1.6 ms) beats 1 GB/s CPU work over them plus
     * 0.5 ns per operation */
    db->cost->h2d_pageable.gbps = db->cost->h2d_lock.gbps = 1.0;
    gqp_stmt *st = plan(q);
    double cpu = dag_cost(st, 0), gpu = dag_cost(st, 1), got = dag_cost(st, -1);
    cr_assert(got <= cpu * (1 + 1e-9) && got <= gpu * (1 + 1e-9), "%g vs %g %g", got, cpu, gpu);
    cr_assert(gpu < cpu);
    cr_assert(count_on(st, DEV_GPU) > 0);
    gqp_finalize(st);
    /* PCIe at 10 MB/s: the copy costs 160 ms, everything stays on the CPU
     * and the node reading the columns says why (the filter, or the
     * dense-aggregate the filter and COUNT(*) lower to as one pass) */
    db->cost->h2d_pinned.gbps = db->cost->h2d_pageable.gbps = db->cost->h2d_lock.gbps = 0.01;
    st = plan(q);
    cpu = dag_cost(st, 0), gpu = dag_cost(st, 1), got = dag_cost(st, -1);
    cr_assert(cpu < gpu);
    cr_assert_float_eq(got, cpu, 1e-9 * cpu);
    cr_assert_eq(count_on(st, DEV_GPU), 0);
    int why = 0;
    for (int i = 0; i < st->dag->nnodes; i++) {
        DagNode *n = &st->dag->nodes[i];
        if ((n->kind == DN_MAP && n->prog.as_filter) || n->kind == DN_DENSEAGG)
            why = strstr(n->reason, "transfers") && strstr(n->reason, "GPU saving");
    }
    cr_assert(why, "the filter's reason names the transfer");
    gqp_finalize(st);
    db->cost->h2d_pinned.gbps = db->cost->h2d_pageable.gbps = db->cost->h2d_lock.gbps = 1.0;
}

Test(place, forcing_and_set_device) {
    db->test_gpu = 2;
    const char *q = "SELECT SUM(uniformf) FROM test WHERE uniformi > 50";
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(db, "SET device = 'cpu'", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_DONE, "%s", gqp_errmsg(db));
    gqp_finalize(st);
    st = plan(q);
    cr_assert_eq(count_on(st, DEV_GPU), 0);
    cr_assert(strstr(st->dag->nodes[st->dag->nnodes - 1].reason, "forced") != NULL);
    gqp_finalize(st);
    db->device = GQP_DEVICE_AUTO;
    st = plan(q);
    cr_assert(count_on(st, DEV_GPU) > 0);
    gqp_finalize(st);
}

/* Ski rental: a cold column's copy is shared with the earlier queries that
 * read it, so a query the CPU wins when its columns are cold moves to the
 * GPU once they have been read often enough, and a statement that resets
 * the GPU cache (CREATE TABLE) also resets the counts. */
Test(place, columns_read_often_move_to_the_gpu) {
    db->test_gpu = 1;
    const char *q = "SELECT SUM(uniformi) FROM test WHERE normali5 < 0";
    CostLink saved = db->cost->h2d_lock, savedp = db->cost->h2d_pageable;
    /* free copies: what the GPU saves */
    db->cost->h2d_lock = db->cost->h2d_pageable = (CostLink){0, 1e9};
    gqp_stmt *st = plan(q);
    double saving = dag_cost(st, 0) - dag_cost(st, 1);
    gqp_finalize(st);
    cr_assert(saving > 0);
    /* the two columns' copies cost 3 savings: the CPU first, the GPU
     * once three earlier queries share the copy */
    double bytes = 2.0 * 200000 * 4;
    db->cost->h2d_lock = db->cost->h2d_pageable = (CostLink){0, bytes / (3 * saving * 1e3)};
    st = plan(q);
    double cpu = dag_cost(st, 0), gpu = dag_cost(st, 1);
    gqp_finalize(st);
    cr_assert(cpu < gpu, "GPU plan with copies %g vs CPU %g", gpu, cpu);
    int reads = 0;
    for (; reads < GQP_READS_CAP; reads++) {
        st = plan(q);
        int on_gpu = count_on(st, DEV_GPU) > 0;
        if (on_gpu) {
            gqp_finalize(st);
            break;
        }
        /* run it on the CPU: the read is counted */
        db->device = GQP_DEVICE_CPU;
        cr_assert_eq(gqp_step(st), GQP_ROW, "%s", gqp_errmsg(db));
        db->device = GQP_DEVICE_AUTO;
        gqp_finalize(st);
    }
    cr_assert(reads >= 2 && reads <= 4, "moved to the GPU after %d reads (3 expected)", reads);
    /* creating another table keeps the counts */
    st = plan("CREATE TABLE reset_reads (x INT32)");
    cr_assert_eq(gqp_step(st), GQP_DONE, "%s", gqp_errmsg(db));
    gqp_finalize(st);
    st = plan(q);
    cr_assert_gt(count_on(st, DEV_GPU), 0);
    gqp_finalize(st);
    /* changing the two columns resets their counts: back to the CPU */
    st = plan("UPDATE test SET uniformi = uniformi, normali5 = normali5 WHERE id = 0");
    cr_assert_eq(gqp_step(st), GQP_DONE, "%s", gqp_errmsg(db));
    gqp_finalize(st);
    st = plan(q);
    cr_assert_eq(count_on(st, DEV_GPU), 0);
    gqp_finalize(st);
    db->cost->h2d_lock = saved;
    db->cost->h2d_pageable = savedp;
}

Test(place, auto_without_gpu_runs_on_cpu) {
    if (prim_gpu_available()) cr_skip_test("a GPU is present");
    db->test_gpu = 0;
    gqp_stmt *st = plan("SELECT SUM(uniformf) FROM test WHERE uniformi > 50");
    cr_assert_eq(count_on(st, DEV_GPU), 0);
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s", gqp_errmsg(db));
    gqp_finalize(st);
}

/* ---------------------------------------------- DML and the GPU cache -- */

/* Runs sql (one statement, any result discarded) on h; asserts success. */
static void exec_on(gqp *h, const char *sql) {
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(h, sql, -1, &st, NULL), GQP_OK, "%s", gqp_errmsg(h));
    int rc;
    while ((rc = gqp_step(st)) == GQP_ROW) {
    }
    cr_assert_eq(rc, GQP_DONE, "%s: %s", sql, gqp_errmsg(h));
    gqp_finalize(st);
}

/* 1 if column col of table name is in h's GPU column cache. */
static int resident(gqp *h, const char *name, int col) {
    CatTable *t = cat_find_table(h->cat, name);
    cr_assert(t != NULL);
    return exec_device_resident(h->dev, t->cols[col].data, t->nrows);
}

Test(dml_gpu, changes_leave_the_cache_column_by_column) {
    if (!prim_gpu_available()) cr_skip_test("no GPU");
    gqp *h = NULL;
    cr_assert_eq(gqp_open(NULL, &h), GQP_OK);
    cr_assert_eq(gqp_set_device(h, GQP_DEVICE_GPU), GQP_OK);
    exec_on(h, "CREATE TABLE g(a INTEGER, b INTEGER, s TEXT)");
    exec_on(h, "CREATE TABLE k(x INTEGER)");
    exec_on(h, "INSERT INTO g VALUES (1, 10, 'p'), (2, 20, 'q'), (3, 30, NULL)");
    exec_on(h, "INSERT INTO k VALUES (1), (2), (3)");
    exec_on(h, "SELECT SUM(a), SUM(b), MIN(s) FROM g");
    exec_on(h, "SELECT SUM(x) FROM k");
    cr_assert(resident(h, "g", 0) && resident(h, "g", 1) && resident(h, "g", 2));
    cr_assert(resident(h, "k", 0));
    /* UPDATE of a: only a leaves the cache */
    exec_on(h, "UPDATE g SET a = a + b WHERE b > 15");
    cr_expect(!resident(h, "g", 0));
    cr_expect(resident(h, "g", 1) && resident(h, "g", 2) && resident(h, "k", 0));
    /* DELETE from k: k's column leaves, g's stay */
    exec_on(h, "DELETE FROM k WHERE x = 2");
    cr_expect(!resident(h, "k", 0));
    cr_expect(resident(h, "g", 1) && resident(h, "g", 2));
    /* the answers read the new data */
    gqp_stmt *st;
    cr_assert_eq(gqp_prepare(h, "SELECT SUM(a), SUM(b) FROM g", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s", gqp_errmsg(h));
    cr_expect_eq(gqp_column_int64(st, 0), 1 + 22 + 33);
    cr_expect_eq(gqp_column_int64(st, 1), 60);
    gqp_finalize(st);
    cr_assert_eq(gqp_prepare(h, "SELECT SUM(x), COUNT(*) FROM k", -1, &st, NULL), GQP_OK);
    cr_assert_eq(gqp_step(st), GQP_ROW, "%s", gqp_errmsg(h));
    cr_expect_eq(gqp_column_int64(st, 0), 4);
    cr_expect_eq(gqp_column_int64(st, 1), 2);
    gqp_finalize(st);
    /* DROP TABLE g: k is untouched */
    exec_on(h, "SELECT SUM(x) FROM k");
    exec_on(h, "DROP TABLE g");
    cr_expect(resident(h, "k", 0));
    gqp_close(h);
}

/* Write a minimal cost file named `name` at path (its CPU map constant
 * marks it). */
static void write_cost_file(const char *path, const char *name) {
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fprintf(f, "name: %s\ncpu:\n  map: {fixed_us: 1, ns_per_elem: 0.123, gbps: 10}\n", name);
    fclose(f);
}

/* The user's calibrated file ($XDG_CONFIG_HOME/gqp/cost-local.yaml, else
 * $HOME/.config/gqp/...) comes before the shipped files; a file measured
 * without a GPU is passed over when a GPU is present; a named file comes
 * first and must load. */
Test(cost, user_calibrated_file_lookup) {
    char dir[] = "/tmp/gqp-costfile-XXXXXX", path[320], sub[256], err[512];
    cr_assert(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/gqp", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    snprintf(path, sizeof path, "%s/cost-local.yaml", sub);
    setenv("XDG_CONFIG_HOME", dir, 1);
    char got[512];
    cr_assert_eq(cost_user_file(got, sizeof got), 0);
    cr_assert_str_eq(got, path);
    CostModel m;
    /* none written yet: the shipped CPU file */
    cr_assert_eq(cost_model_select(&m, NULL, "", err, sizeof err), 0);
    cr_assert(strstr(m.source, "cost-cpu-2core.yaml"), "%s", m.source);
    write_cost_file(path, "calibrated-2threads");
    cr_assert_eq(cost_model_select(&m, NULL, "", err, sizeof err), 0);
    cr_assert_str_eq(m.source, path);
    cr_assert_float_eq(m.cpu[CP_MAP].ns_per_elem, 0.123, 1e-9);
    /* a GPU now: a CPU-only calibration does not price it */
    cr_assert_eq(cost_model_select(&m, NULL, "NVIDIA H100 80GB HBM3", err, sizeof err), 0);
    cr_assert(strstr(m.source, "cost-h100.yaml"), "%s", m.source);
    write_cost_file(path, "calibrated-16threads-h100");
    cr_assert_eq(cost_model_select(&m, NULL, "NVIDIA H100 80GB HBM3", err, sizeof err), 0);
    cr_assert_str_eq(m.source, path);
    /* a named file first; a missing one is an error */
    char named[256];
    snprintf(named, sizeof named, "%s/named.yaml", dir);
    write_cost_file(named, "mine");
    cr_assert_eq(cost_model_select(&m, named, "", err, sizeof err), 0);
    cr_assert_str_eq(m.source, named);
    cr_assert_eq(cost_model_select(&m, "/nonexistent/cost.yaml", "", err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/cost.yaml"), "%s", err);
    /* HOME without (or with a relative) XDG_CONFIG_HOME */
    setenv("XDG_CONFIG_HOME", "relative/dir", 1);
    setenv("HOME", "/home/someone", 1);
    cr_assert_eq(cost_user_file(got, sizeof got), 0);
    cr_assert_str_eq(got, "/home/someone/.config/gqp/cost-local.yaml");
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("HOME");
    cr_assert_eq(cost_user_file(got, sizeof got), -1);
    remove(named);
    remove(path);
    rmdir(sub);
    rmdir(dir);
}

/* gqp_open: a cost file named by $GQP_COST_FILE or the config that does
 * not load is an error naming it (not a silent fall back to defaults). */
Test(cost, named_missing_cost_file_fails_open) {
    gqp *db = NULL;
    setenv("GQP_COST_FILE", "/nonexistent/named-cost.yaml", 1);
    cr_assert_eq(gqp_open(NULL, &db), GQP_ERROR);
    cr_assert(strstr(gqp_errmsg(db), "/nonexistent/named-cost.yaml"), "%s", gqp_errmsg(db));
    cr_assert(strstr(gqp_errmsg(db), "GQP_COST_FILE"), "%s", gqp_errmsg(db));
    cr_assert_eq(gqp_extended_errcode(db), GQP_ERROR_CATALOG);
    gqp_close(db);
    unsetenv("GQP_COST_FILE");
    char dir[] = "/tmp/gqp-costcfg-XXXXXX", cfg[256];
    cr_assert(mkdtemp(dir));
    snprintf(cfg, sizeof cfg, "%s/gqp.yaml", dir);
    FILE *f = fopen(cfg, "w");
    fprintf(f, "device:\n  cost_file: gone.yaml\n");
    fclose(f);
    cr_assert_eq(gqp_open(cfg, &db), GQP_ERROR);
    cr_assert(strstr(gqp_errmsg(db), "gone.yaml"), "%s", gqp_errmsg(db));
    cr_assert(strstr(gqp_errmsg(db), "cost_file"), "%s", gqp_errmsg(db));
    gqp_close(db);
    remove(cfg);
    rmdir(dir);
}

/* TPC-H Q6's shape (60M fact rows, four range conjuncts of 19 map
 * operations, 2% pass, one SUM, one group) with the shipped H200 file: the
 * dense pass wins, as measured there (0.22 against 1.20 ms at SF 3): the
 * sort plan's select interprets every filter operation on every row. */
Test(cost, filters_of_many_operations_favour_the_dense_pass) {
    const char *src = getenv("GQP_SOURCE_DIR");
    if (!src) cr_skip_test("GQP_SOURCE_DIR not set");
    CostModel m;
    char err[512], p[1024];
    snprintf(p, sizeof p, "%s/configs/cost-h200.yaml", src);
    cost_model_default(&m, "cpu");
    cr_assert_eq(cost_model_load(&m, p, err, sizeof err), 0, "%s", err);
    PlanAggShape q6 = {.scanned = 6e7,
                       .fact_bytes = 4.0 * 5,
                       .filtered = 1.14e6,
                       .nranges = 4,
                       .filter_ops = 19,
                       .joined = 1.14e6,
                       .naggs = 1,
                       .groups = 1,
                       .est_groups = 1};
    double dense = cost_agg_plan_us(&m, 1, &q6, 1), sort = cost_agg_plan_us(&m, 0, &q6, 1);
    cr_expect(dense < sort, "dense %g us, sort %g us", dense, sort);
}
