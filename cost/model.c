/*
 * model.c -- the CostModel: compiled-in defaults, YAML load and write, and
 * the choice of the file a session uses.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

#include "cost/cost.h"

static const char *prim_names[CP_COUNT] = {"map",   "select",   "scan",      "scatter", "gather",
                                           "sort",  "segments", "segreduce", "join",    "cross",
                                           "slice", "totext",   "keymap",    "denseagg"};

const char *cost_prim_name(CostPrimKind k) {
    return (unsigned)k < CP_COUNT ? prim_names[k] : "?";
}

/* Set one primitive's constants; gbps 0 means no byte term. */
static void set_prim(CostPrim *p, double fixed_us, double ns_per_elem, double gbps) {
    p->fixed_us = fixed_us;
    p->ns_per_elem = ns_per_elem;
    p->ns_per_byte = gbps > 0 ? 1.0 / gbps : 0;
    p->serial_x = 1;
}

/* Keymap constants of one device estimated from the other primitives'
 * (set first). TUNING: not measured when these defaults
 * were written (`gqp calibrate` measures it): a keymap is a fill plus a
 * scatter of row ids by key, so scatter's constants. */
static void estimate_keymap(CostPrim *c) {
    c[CP_KEYMAP] = c[CP_SCATTER];
}

/* Dense-aggregate constants of one device (gpu: 0 CPU, 1 GPU) estimated
 * from map's and join's. TUNING: not
 * measured when these defaults were written (`gqp calibrate` measures
 * it): the pass streams its fact columns like a map (map's fixed cost and
 * bandwidth) and pays per row and per probe. A probe reads a small,
 * usually cache-resident direct-address array: on the CPU about 4 map
 * instructions (bounds check, load, test, accumulate), not a hash join's
 * per-row cost, which is dominated by misses on a table the size of the
 * build side; on the GPU one map instruction per probe: keymaps stay in
 * L2 and the pass is bandwidth-bound (bench_prim_gpu on the H100: a Q1.1
 * shape, 16 bytes a row, at 1880 GB/s, i.e. at map's bandwidth, not at a
 * hash join's per-row cost). */
static void estimate_denseagg(CostPrim *c, int gpu) {
    c[CP_DENSEAGG] = c[CP_MAP];
    c[CP_DENSEAGG].ns_per_elem = (gpu ? 1 : 4) * c[CP_MAP].ns_per_elem;
}

/* Both estimates for one device. */
static void dense_estimates(CostPrim *c, int gpu) {
    estimate_keymap(c);
    estimate_denseagg(c, gpu);
}

/* CPU constants of the 2-core development machine. TUNING: fitted by
 * `gqp calibrate --threads 2` on the 2-core CI/dev VM (AMD EPYC, no GPU),
 * fastest of 5-15 runs per point; the fits and raw points are in
 * configs/cost-cpu-2core.yaml. Shapes (cost.h): gather and join with the
 * cache-miss term, segments per row, segreduce per compensated row, sort
 * on FLOAT keys (four radix passes), dense-aggregate with 0 and 3 probes. */
static void cpu_2core(CostModel *m) {
    set_prim(&m->cpu[CP_MAP], 0.66, 0.17, 147);
    set_prim(&m->cpu[CP_SELECT], 1.36, 0.17, 20.1);
    set_prim(&m->cpu[CP_SCAN], 0, 0, 24.3);
    set_prim(&m->cpu[CP_SCATTER], 0, 0, 6.25);
    set_prim(&m->cpu[CP_GATHER], 0.08, 3.44, 28.0);
    set_prim(&m->cpu[CP_SORT], 0, 3.21, 0);
    set_prim(&m->cpu[CP_SEGMENTS], 0, 0.71, 0);
    set_prim(&m->cpu[CP_SEGREDUCE], 0.17, 0.69, 24.4);
    set_prim(&m->cpu[CP_JOIN], 0, 7.93, 2.14);
    set_prim(&m->cpu[CP_CROSS], 0, 0, 3.82);
    set_prim(&m->cpu[CP_SLICE], 0, 0, 41.5);
    /* TUNING: not calibrated (the executor's text formatting): ~150 ns per
     * snprintf'ed value, a guess */
    set_prim(&m->cpu[CP_TOTEXT], 5, 150, 0);
    set_prim(&m->cpu[CP_KEYMAP], 0, 0, 2.87);
    set_prim(&m->cpu[CP_DENSEAGG], 0.78, 0.97, 29.7);
    m->cpu_threads = 2;
    /* TUNING: the VM's AMD EPYC reports a 32 MiB L3 (sysfs, lscpu); an
     * empty parallel pass of 2 threads measured 17-58 us (17 in the file) */
    m->cpu_cache_mb = 32;
    m->cpu_spawn_us = 17;
    m->cpu_wake_us = 20; /* TUNING: a guess until `gqp calibrate` measures it */
}

/* CPU constants of the H100 host (16 threads). TUNING: from
 * bench/results/seed004-h100-50M.md, gqp-cpu column: q11 (SUM over 50M
 * floats, 14.6 ms) gives segreduce ~14 GB/s; q01/q12 (filter over 50M rows,
 * ~50 ms) give select ~1 ns/row with two columns; q03 (gather of 32.6M rows
 * x 3 columns in ~30 ms) gives gather ~16 GB/s. Sort and join scaled from
 * the 2-core calibration by 8 (threads). */
static void cpu_h100_host(CostModel *m) {
    set_prim(&m->cpu[CP_MAP], 40, 0.08, 12.0);
    set_prim(&m->cpu[CP_SELECT], 40, 0.08, 12.0);
    set_prim(&m->cpu[CP_SCAN], 40, 0, 12.0);
    set_prim(&m->cpu[CP_SCATTER], 40, 0, 12.0);
    set_prim(&m->cpu[CP_GATHER], 40, 0, 16.0);
    set_prim(&m->cpu[CP_SORT], 80, 0.5, 0);
    set_prim(&m->cpu[CP_SEGMENTS], 40, 0, 12.0);
    set_prim(&m->cpu[CP_SEGREDUCE], 40, 0, 14.0);
    set_prim(&m->cpu[CP_JOIN], 80, 7.0, 0);
    set_prim(&m->cpu[CP_CROSS], 40, 0, 12.0);
    set_prim(&m->cpu[CP_SLICE], 2, 0, 10.0);
    set_prim(&m->cpu[CP_TOTEXT], 5, 150, 0);
    dense_estimates(m->cpu, 0);
    m->cpu_threads = 16;
    /* TUNING: not measured on that host (its gather and join constants
     * have no miss term, so it does not matter yet): a 32 MiB L3; a
     * thread start as on the 2-core VM, 16 of them in a pass */
    m->cpu_cache_mb = 32;
    m->cpu_spawn_us = 30;
    m->cpu_wake_us = 30; /* TUNING: a guess until `gqp calibrate` measures it */
}

/* GPU constants of an H100 (device_gbps: 3000 for H100, 4200 for H200).
 * TUNING: device-to-device copy 2998 GB/s read+write (prim_gpu_bandwidth,
 * bench/results/seed004-h100-5M.md); memory-bound kernels reached 1.3x of
 * that floor on seed004 q03-q06, so streaming primitives get 0.75 of it and
 * random-access ones (gather, join) 0.5; ~3.5 us per kernel launch and
 * ~10 us per host synchronisation (measured on the H100 while building the
 * GPU twins); primitives that return a count to the host (select, scan,
 * segments, join) pay one synchronisation. Sort: cub::DeviceRadixSort moves
 * key + 8-byte value per 8-bit pass, read and written. */
static void gpu_hopper(CostModel *m, double device_gbps) {
    double stream = 0.75 * device_gbps, random = 0.5 * device_gbps;
    set_prim(&m->gpu[CP_MAP], 5, 0.0005, stream);
    set_prim(&m->gpu[CP_SELECT], 15, 0.0005, stream);
    set_prim(&m->gpu[CP_SCAN], 15, 0, stream);
    set_prim(&m->gpu[CP_SCATTER], 4, 0, stream);
    set_prim(&m->gpu[CP_GATHER], 4, 0, random);
    set_prim(&m->gpu[CP_SORT], 40, 24.0 / stream, 0);
    set_prim(&m->gpu[CP_SEGMENTS], 15, 0, stream);
    set_prim(&m->gpu[CP_SEGREDUCE], 5, 0, stream);
    set_prim(&m->gpu[CP_JOIN], 50, 0.05, random);
    set_prim(&m->gpu[CP_CROSS], 5, 0, stream);
    set_prim(&m->gpu[CP_SLICE], 4, 0, stream);
    set_prim(&m->gpu[CP_TOTEXT], 0, 0, 0);
    dense_estimates(m->gpu, 1);
    /* TUNING: pinned H2D 55.2 GB/s measured (prim_gpu_bandwidth, seed004
     * results); D2H pinned assumed equal; pageable ~8 GB/s (driver-staged
     * copies measured on the H100 host); 10 us = copy call + stream sync. */
    m->h2d_pinned = (CostLink){10, 55.2};
    m->d2h_pinned = (CostLink){10, 55.2};
    m->h2d_pageable = (CostLink){12, 8.0};
    m->d2h_pageable = (CostLink){12, 8.0};
    /* TUNING: page-lock + pinned copy of a cold column; replaced by the
     * shipped calibration (configs/cost-h100.yaml, measure_links) */
    m->h2d_lock = (CostLink){60, 15.0};
    m->gpu_sync_us = 10;
    /* TUNING: H100 and H200 both have a 50 MiB L2 (NVIDIA's specification) */
    m->gpu_cache_mb = 50;
}

void cost_model_default(CostModel *m, const char *which) {
    memset(m, 0, sizeof *m);
    if (which && (strcasecmp(which, "h100") == 0 || strcasecmp(which, "h200") == 0)) {
        int h200 = strcasecmp(which, "h200") == 0;
        cpu_h100_host(m);
        /* TUNING: H200 device copy ~4.2 TB/s (measured on the H200 host) */
        gpu_hopper(m, h200 ? 4200 : 3000);
        snprintf(m->name, sizeof m->name, "%s", h200 ? "h200" : "h100");
    } else {
        cpu_2core(m);
        /* a GPU part so that a CPU-calibrated file still prices a GPU found
         * later: the H100's */
        gpu_hopper(m, 3000);
        snprintf(m->name, sizeof m->name, "cpu-2core");
    }
    snprintf(m->source, sizeof m->source, "built-in %s defaults", m->name);
}

/* ------------------------------------------------------------- loading -- */

typedef struct Ld {
    const char *path;
    char *err;
    size_t cap;
    uint8_t seen[2][CP_COUNT]; /* primitives the file set, per device */
} Ld;

/* The cpu: or gpu: section being read. */
typedef struct LdPrims {
    CostPrim *arr;
    uint8_t *seen;
} LdPrims;

/* Error at node n; returns -1. */
static int ld_err(Ld *l, const yaml_node_t *n, const char *what, const char *key) {
    snprintf(l->err, l->cap, "Cost Error: %s:%lu:%lu: %s '%s'", l->path,
             n ? (unsigned long)n->start_mark.line + 1 : 0UL,
             n ? (unsigned long)n->start_mark.column + 1 : 0UL, what, key);
    return -1;
}

/* Number of scalar node n into *out. Returns 0 or -1 (error names key). */
static int ld_num(Ld *l, const yaml_node_t *n, const char *key, double *out) {
    if (n->type != YAML_SCALAR_NODE) return ld_err(l, n, "expected a number for", key);
    char *end;
    const char *s = (const char *)n->data.scalar.value;
    double v = strtod(s, &end);
    if (end == s || *end || v < 0) return ld_err(l, n, "expected a number >= 0 for", key);
    *out = v;
    return 0;
}

/* Each (key, value) of mapping n to fn; -1 if n is not a mapping or fn
 * fails. */
static int ld_map(Ld *l, yaml_document_t *doc, yaml_node_t *n, const char *key,
                  int (*fn)(Ld *, yaml_document_t *, const char *, yaml_node_t *, void *),
                  void *ud) {
    if (n->type != YAML_MAPPING_NODE) return ld_err(l, n, "expected a mapping for", key);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        if (!k || !v || k->type != YAML_SCALAR_NODE) return ld_err(l, k, "bad key in", key);
        if (fn(l, doc, (const char *)k->data.scalar.value, v, ud) != 0) return -1;
    }
    return 0;
}

/* One key of a primitive's constants. */
static int ld_prim_key(Ld *l, yaml_document_t *doc, const char *key, yaml_node_t *v, void *ud) {
    CostPrim *p = ud;
    double x;
    if (ld_num(l, v, key, &x) != 0) return -1;
    if (strcmp(key, "fixed_us") == 0)
        p->fixed_us = x;
    else if (strcmp(key, "ns_per_elem") == 0)
        p->ns_per_elem = x;
    else if (strcmp(key, "gbps") == 0)
        p->ns_per_byte = x > 0 ? 1.0 / x : 0;
    else if (strcmp(key, "ns_per_byte") == 0)
        p->ns_per_byte = x;
    else if (strcmp(key, "serial_x") == 0)
        p->serial_x = x >= 1 ? x : 1;
    else
        return ld_err(l, v, "unknown constant", key);
    (void)doc;
    return 0;
}

/* One primitive of a cpu: / gpu: section. */
static int ld_prim(Ld *l, yaml_document_t *doc, const char *key, yaml_node_t *v, void *ud) {
    LdPrims *lp = ud;
    for (int k = 0; k < CP_COUNT; k++)
        if (strcmp(key, prim_names[k]) == 0) {
            lp->seen[k] = 1;
            return ld_map(l, doc, v, key, ld_prim_key, &lp->arr[k]);
        }
    return ld_err(l, v, "unknown primitive", key);
}

/* One key of a link. */
static int ld_link_key(Ld *l, yaml_document_t *doc, const char *key, yaml_node_t *v, void *ud) {
    CostLink *k = ud;
    double x;
    if (ld_num(l, v, key, &x) != 0) return -1;
    if (strcmp(key, "latency_us") == 0)
        k->latency_us = x;
    else if (strcmp(key, "gbps") == 0)
        k->gbps = x;
    else
        return ld_err(l, v, "unknown constant", key);
    (void)doc;
    return 0;
}

/* One link of the transfer: section. */
static int ld_link(Ld *l, yaml_document_t *doc, const char *key, yaml_node_t *v, void *ud) {
    CostModel *m = ud;
    CostLink *k = strcmp(key, "h2d_pinned") == 0     ? &m->h2d_pinned
                  : strcmp(key, "d2h_pinned") == 0   ? &m->d2h_pinned
                  : strcmp(key, "h2d_pageable") == 0 ? &m->h2d_pageable
                  : strcmp(key, "d2h_pageable") == 0 ? &m->d2h_pageable
                  : strcmp(key, "h2d_lock") == 0     ? &m->h2d_lock
                                                     : NULL;
    if (!k) return ld_err(l, v, "unknown link", key);
    return ld_map(l, doc, v, key, ld_link_key, k);
}

/* One top-level key. Unknown keys (points, fits, notes) are ignored. */
static int ld_top(Ld *l, yaml_document_t *doc, const char *key, yaml_node_t *v, void *ud) {
    CostModel *m = ud;
    double x;
    if (strcmp(key, "cpu") == 0 || strcmp(key, "gpu") == 0) {
        int g = key[0] == 'g';
        LdPrims lp = {g ? m->gpu : m->cpu, l->seen[g]};
        return ld_map(l, doc, v, key, ld_prim, &lp);
    }
    if (strcmp(key, "transfer") == 0) return ld_map(l, doc, v, key, ld_link, m);
    if (strcmp(key, "name") == 0 && v->type == YAML_SCALAR_NODE) {
        snprintf(m->name, sizeof m->name, "%s", (const char *)v->data.scalar.value);
        return 0;
    }
    /* the scalar constants */
    struct {
        const char *key;
        double *at;
    } const scal[] = {
        {"gpu_sync_us", &m->gpu_sync_us},   {"cpu_spawn_us", &m->cpu_spawn_us},
        {"cpu_wake_us", &m->cpu_wake_us},   {"gpu_query_us", &m->gpu_query_us},
        {"cpu_query_us", &m->cpu_query_us}, {"gpu_sync_node_us", &m->gpu_sync_node_us},
        {"gpu_scale", &m->gpu_scale},       {"cpu_scale", &m->cpu_scale},
        {"cpu_cache_mb", &m->cpu_cache_mb}, {"gpu_cache_mb", &m->gpu_cache_mb}};
    for (size_t i = 0; i < sizeof scal / sizeof *scal; i++) {
        if (strcmp(key, scal[i].key) != 0) continue;
        if (ld_num(l, v, key, &x) != 0) return -1;
        /* a scale of 0 or less means none */
        *scal[i].at =
            (scal[i].at == &m->gpu_scale || scal[i].at == &m->cpu_scale) && x <= 0 ? 1 : x;
        return 0;
    }
    if (strcmp(key, "cpu_threads") == 0) {
        if (ld_num(l, v, key, &x) != 0) return -1;
        m->cpu_threads = (int)x;
        return 0;
    }
    return 0;
}

int cost_model_load(CostModel *m, const char *path, char *err, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, cap, "Cost Error: cannot open cost file %s", path);
        return -1;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        snprintf(err, cap, "Cost Error: out of memory");
        return -1;
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, cap, "Cost Error: %s:%lu:%lu: %s", path,
                 (unsigned long)parser.problem_mark.line + 1,
                 (unsigned long)parser.problem_mark.column + 1,
                 parser.problem ? parser.problem : "YAML syntax error");
        yaml_parser_delete(&parser);
        fclose(f);
        return -1;
    }
    Ld l;
    memset(&l, 0, sizeof l);
    l.path = path;
    l.err = err;
    l.cap = cap;
    CostModel tmp = *m;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    int rc = root ? ld_map(&l, &doc, root, "cost file", ld_top, &tmp) : 0;
    /* a file from before keymap / denseagg existed: estimate them from the
     * file's own constants rather than mix in defaults of another machine */
    for (int g = 0; g < 2 && rc == 0; g++) {
        CostPrim *arr = g ? tmp.gpu : tmp.cpu;
        if (!l.seen[g][CP_KEYMAP] && l.seen[g][CP_SCATTER]) estimate_keymap(arr);
        if (!l.seen[g][CP_DENSEAGG] && (l.seen[g][CP_MAP] || l.seen[g][CP_JOIN]))
            estimate_denseagg(arr, g);
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    fclose(f);
    if (rc == 0) {
        *m = tmp;
        snprintf(m->source, sizeof m->source, "%s", path);
    }
    return rc;
}

/* ------------------------------------------------------------- writing -- */

/* One primitive line of the YAML. */
static void wr_prim(FILE *f, const char *name, const CostPrim *p) {
    fprintf(f, "  %s:%*s{fixed_us: %.4g, ns_per_elem: %.4g, gbps: %.4g", name,
            (int)(11 - strlen(name)), "", p->fixed_us, p->ns_per_elem,
            p->ns_per_byte > 0 ? 1.0 / p->ns_per_byte : 0.0);
    if (p->serial_x > 1) fprintf(f, ", serial_x: %.3g", p->serial_x);
    fprintf(f, "}\n");
}

int cost_model_write(const CostModel *m, const char *path, char *err, size_t cap) {
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, cap, "Cost Error: cannot write %s", path);
        return -1;
    }
    fprintf(f,
            "# gqp cost model: time_us = fixed_us + (elems * ns_per_elem + bytes / gbps) / 1000\n"
            "# (see cost/cost.h for what elems and bytes are per primitive)\n");
    fprintf(f, "name: %s\ncpu_threads: %d\ngpu_sync_us: %.4g\n", m->name, m->cpu_threads,
            m->gpu_sync_us);
    fprintf(f, "cpu_spawn_us: %.4g\ncpu_wake_us: %.4g\ncpu_cache_mb: %.4g\ngpu_cache_mb: %.4g\n",
            m->cpu_spawn_us, m->cpu_wake_us, m->cpu_cache_mb, m->gpu_cache_mb);
    fprintf(f, "gpu_query_us: %.4g\ncpu_query_us: %.4g\ngpu_sync_node_us: %.4g\n", m->gpu_query_us,
            m->cpu_query_us, m->gpu_sync_node_us);
    fprintf(f, "gpu_scale: %.4g\ncpu_scale: %.4g\n", m->gpu_scale > 0 ? m->gpu_scale : 1,
            m->cpu_scale > 0 ? m->cpu_scale : 1);
    fprintf(f, "transfer:\n");
    const CostLink *ls[5] = {&m->h2d_pinned, &m->d2h_pinned, &m->h2d_pageable, &m->d2h_pageable,
                             &m->h2d_lock};
    const char *ln[5] = {"h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable", "h2d_lock"};
    for (int i = 0; i < 5; i++)
        fprintf(f, "  %s:%*s{latency_us: %.4g, gbps: %.4g}\n", ln[i], (int)(14 - strlen(ln[i])), "",
                ls[i]->latency_us, ls[i]->gbps);
    fprintf(f, "cpu:\n");
    for (int k = 0; k < CP_COUNT; k++)
        wr_prim(f, prim_names[k], &m->cpu[k]);
    fprintf(f, "gpu:\n");
    for (int k = 0; k < CP_COUNT; k++)
        wr_prim(f, prim_names[k], &m->gpu[k]);
    if (fclose(f) != 0) {
        snprintf(err, cap, "Cost Error: cannot write %s", path);
        return -1;
    }
    return 0;
}

/* ----------------------------------------------------------- selection -- */

/* 1 if path names a readable file. */
static int readable(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

#define COST_NDIRS 3

/* The folders that may hold the shipped cost files, in the order they are
 * searched, into dirs; returns how many:
 *   1. $GQP_COST_DIR;
 *   2. for a program run from the build tree (its path under GQP_BUILD_DIR),
 *      the source tree's configs/ (GQP_CONFIG_DIR), so development builds
 *      use the files they were built with; otherwise
 *   2. <the program's folder>/../<datadir>/gqp, an installed prefix found
 *      from the running program (a prefix moved after install included);
 *   3. the configured install prefix's <datadir>/gqp (GQP_INSTALL_COST_DIR).
 * A program outside the build tree never reads the source tree. */
static int cost_dirs(char dirs[COST_NDIRS][1024]) {
    int n = 0;
    const char *env = getenv("GQP_COST_DIR");
    if (env && env[0]) snprintf(dirs[n++], 1024, "%s", env);
    char exe[1024] = "";
#ifdef __linux__
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[k > 0 ? k : 0] = 0;
#endif
#if defined(GQP_BUILD_DIR) && defined(GQP_CONFIG_DIR)
    size_t bl = strlen(GQP_BUILD_DIR);
    if (exe[0] && strncmp(exe, GQP_BUILD_DIR, bl) == 0 && exe[bl] == '/') {
        snprintf(dirs[n++], 1024, "%s", GQP_CONFIG_DIR);
        return n;
    }
#endif
    char *slash = strrchr(exe, '/');
#ifdef GQP_INSTALL_DATADIR
    if (slash) {
        *slash = 0;
        snprintf(dirs[n++], 1024, "%s/../%s/gqp", exe, GQP_INSTALL_DATADIR);
    }
#endif
#ifdef GQP_INSTALL_COST_DIR
    snprintf(dirs[n++], 1024, "%s", GQP_INSTALL_COST_DIR);
#endif
    (void)slash;
    return n;
}

int cost_user_file(char *buf, size_t cap) {
    const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
    int n;
    if (x && x[0] == '/')
        n = snprintf(buf, cap, "%s/gqp/cost-local.yaml", x);
    else if (h && h[0])
        n = snprintf(buf, cap, "%s/.config/gqp/cost-local.yaml", h);
    else
        return -1;
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* 1 when a loaded cost model's name says its GPU part was measured
 * (cost_calibrate_ex names it calibrated-<n>threads-h100|h200|gpu). */
static int calibrated_with_gpu(const CostModel *m) {
    size_t n = strlen(m->name);
    return (n > 5 &&
            (strcmp(m->name + n - 5, "-h100") == 0 || strcmp(m->name + n - 5, "-h200") == 0)) ||
           (n > 4 && strcmp(m->name + n - 4, "-gpu") == 0);
}

int cost_model_select(CostModel *m, const char *cost_file, const char *gpu_name, char *err,
                      size_t cap) {
    const char *which = "cpu", *file = "cost-cpu-2core.yaml";
    if (gpu_name && strstr(gpu_name, "H200"))
        which = "h200", file = "cost-h200.yaml";
    else if (gpu_name && strstr(gpu_name, "H100"))
        which = "h100", file = "cost-h100.yaml";
    cost_model_default(m, which);
    if (cost_file && cost_file[0]) {
        if (cost_model_load(m, cost_file, err, cap) != 0) {
            cost_model_default(m, which);
            return -1;
        }
        return 0;
    }
    char dirs[COST_NDIRS][1024];
    int ndirs = cost_dirs(dirs);
    char path[1100], lerr[256];
    if (cost_user_file(path, sizeof path) == 0 && readable(path)) {
        /* the file `gqp calibrate` wrote; one measured without a GPU does
         * not price a GPU that is present now */
        if (cost_model_load(m, path, lerr, sizeof lerr) == 0 &&
            (!(gpu_name && gpu_name[0]) || calibrated_with_gpu(m)))
            return 0;
        cost_model_default(m, which);
    }
    for (int pass = 0; pass < 2; pass++) {
        /* an H200 without its own file uses the H100's, whose GPU constants
         * are a lower bound */
        const char *fname = pass == 0 ? file : strcmp(which, "h200") == 0 ? "cost-h100.yaml" : NULL;
        if (!fname) break;
        for (int d = 0; d < ndirs; d++) {
            if (!dirs[d][0]) continue;
            snprintf(path, sizeof path, "%.1000s/%s", dirs[d], fname);
            if (readable(path) && cost_model_load(m, path, lerr, sizeof lerr) == 0) return 0;
        }
    }
    return 0;
}
