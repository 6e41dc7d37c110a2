/*
 * cost.h -- the cost model of gqp's primitives and the placement optimizer.
 *
 * Every primitive has, per device, a cost of the form
 *
 *     time_us = fixed_us + (elems * ns_per_elem + bytes * ns_per_byte) / 1000
 *
 * where `bytes` is what the primitive reads and writes and `elems` its
 * per-element work (per primitive below). Transfers cost
 *
 *     time_us = latency_us + bytes / bandwidth    (pinned and pageable differ)
 *
 *   primitive   bytes (read + written)                 elems
 *   map         inputs + output, n rows                n * instructions
 *   select      inputs + n flags + 8 * rows out        n * instructions
 *   scan        n * width + 8n                         -
 *   scatter     n flags + 8n offsets + 8 * rows out    -
 *   gather      8 * rows out + 2 * width * rows out    rows out * miss(source bytes)
 *                                                      when the row ids are random
 *   sort        keys + 8n permutation                  n * key bytes (radix passes)
 *   segments    keys + 8 * segments                    n * keys + segments
 *   segreduce   8 * segments + width * n               n when compensated (float SUM,
 *                                                      AVG), else 0
 *   join        keys of both sides + 16 * pairs        rows of both sides
 *               + 64 * rows of both sides * miss(32 * smaller side)
 *   cross       16 * pairs                             -
 *   slice       2 * width * rows out                   -
 *   to-text     -                                      n (CPU only)
 *   keymap      8 * range (fill) + n * (input widths   -
 *               + 8) (keys, row ids, one slot write)
 *   denseagg    rows scanned * fact-side input widths  rows scanned * range filters
 *               + 8 * groups * outputs                 (the tests) + rows passing them
 *                                                      * (1 + dims + aggregates) (row
 *                                                      count, probes, accumulate)
 *
 * (denseagg's fact-side inputs are the row ids and the columns read at the
 * fact row: range filters, foreign keys, fact keys, aggregate operands;
 * keymaps and dimension keys are read through the probes.)
 *
 * Random accesses: miss(S) = S / (S + cache bytes) is the share of random
 * reads into a structure of S bytes that leave the last-level cache (the
 * model's cpu_cache_mb / gpu_cache_mb). A gather's row ids are random when
 * they come from a sort, a gather, or the right side of a join; a filter's
 * row ids, segment starts and a join's left side ascend, and such a gather
 * streams (elems 0). A join's hash table and its row groups take about 32
 * bytes per row of the smaller side; a probe that misses moves a 64-byte
 * line, while a small build side (a dimension of a few hundred rows) stays
 * in the cache and a probe costs only its per-row work.
 *
 * Parallel passes: a CPU primitive over at least COST_PAR_MIN_ROWS rows
 * with more than one thread hands its shares to the persistent worker pool
 * once per parallel pass (prim_parallel); each pass costs cpu_spawn_us, on
 * top of fixed_us (which the single-threaded small calls measure). Passes: select, scan, segments,
 * keymap, denseagg 2; join 3; sort 2 + 2 per key byte; the others 1 (slice, to-text 0).
 *
 * The constants live in a CostModel, read from YAML (`gqp calibrate` writes
 * one) with compiled-in defaults for a 2-core CPU machine and for an H100.
 * cost/ never executes a query; calibration runs the primitives on their
 * own (calibrate.c).
 */
#ifndef GQP_COST_H
#define GQP_COST_H

#include <stddef.h>
#include <stdint.h>

#include "planner/planner.h"

/* The primitives a cost is kept for (a fused filter is CP_SELECT). */
typedef enum CostPrimKind {
    CP_MAP,
    CP_SELECT,
    CP_SCAN,
    CP_SCATTER,
    CP_GATHER,
    CP_SORT,
    CP_SEGMENTS,
    CP_SEGREDUCE,
    CP_JOIN,
    CP_CROSS,
    CP_SLICE,
    CP_TOTEXT,
    CP_KEYMAP,
    CP_DENSEAGG,
    CP_COUNT
} CostPrimKind;

/* Name of a CostPrimKind as used in the YAML files ("map", "select", ...). */
const char *cost_prim_name(CostPrimKind k);

/* Constants of one primitive on one device. */
typedef struct CostPrim {
    double fixed_us;    /* per call: launch + sync (GPU), call overhead (CPU) */
    double ns_per_elem; /* per unit of work (see the table above) */
    double ns_per_byte; /* 1 / bandwidth: 1 ns/B = 1 GB/s */
    /* CPU: a call over fewer than COST_PAR_MIN_ROWS rows runs on one
     * thread, and its per-element and per-byte time is this many times
     * what the (parallel) slopes give; measured at 1e5 rows on one thread
     * against the fit (1 = no change, e.g. one thread or the GPU) */
    double serial_x;
} CostPrim;

/* A host <-> device link. */
typedef struct CostLink {
    double latency_us;
    double gbps;
} CostLink;

typedef struct CostModel {
    char name[64];    /* "cpu-2core", "h100", or what calibration saw */
    char source[512]; /* where the constants came from (file path / "built-in ...") */
    CostPrim cpu[CP_COUNT];
    CostPrim gpu[CP_COUNT];
    CostLink h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable;
    /* a table column that is not resident: page-lock its host range, then
     * the pinned copy (the executor's column-cache fill; cost_fetch_us) */
    CostLink h2d_lock;
    double gpu_sync_us;  /* the host waits for the device (a count, a D2H result) */
    double cpu_spawn_us; /* a parallel pass of a CPU primitive: hand out + collect */
    double cpu_wake_us;  /* once per query with a parallel CPU pass: the pool's
                            workers sleep between queries and are woken */
    /* once per query: what the executor spends beyond its nodes' estimates
     * (allocations, events, stream waits, the final synchronisation and
     * result copies), on a plan with a GPU node (gpu_query_us) or an
     * all-CPU one (cpu_query_us); measured end to end by `gqp calibrate` */
    double gpu_query_us, cpu_query_us;
    /* a GPU node whose output size the host must read before it goes on
     * (a select or scan's count, segments, a join's pairs: cost_node_syncs)
     * drains the stream: the host waits, then launches again; measured end
     * to end with the per-query constants */
    double gpu_sync_node_us;
    /* every node's compute estimate on the device times this (transfers
     * not): the primitives' microbenchmarks run hot in the cache, queries
     * pay first touches and cold caches; fitted end to end with the
     * per-query constants (measured = query_us + scale x model), 1 = none */
    double cpu_scale, gpu_scale;
    double cpu_cache_mb; /* last-level cache (miss() in the table above) */
    double gpu_cache_mb; /* the GPU's L2 */
    int cpu_threads;     /* threads the CPU constants were measured with */
} CostModel;

/* Compiled-in defaults. which: "cpu" (2-core machine, calibrated) or
 * "h100" / "h200" (the CPU part of the H100 host from bench/results, the
 * GPU part from the measured figures in docs/cost.md). Unknown names give
 * the CPU defaults. */
void cost_model_default(CostModel *m, const char *which);

/* Load a YAML cost file over *m (keys absent from the file keep m's
 * values, so start from cost_model_default). Returns 0, or -1 with a
 * message naming the file, line and key in err. */
int cost_model_load(CostModel *m, const char *path, char *err, size_t cap);

/* Write m as YAML (the format cost_model_load reads). Returns 0 or -1. */
int cost_model_write(const CostModel *m, const char *path, char *err, size_t cap);

/* Pick and load the cost model: cost_file if not empty; else the user's
 * calibrated file (cost_user_file) when it is readable, loads, and, on a
 * machine with a GPU, was calibrated with one (its name ends in -h100,
 * -h200 or -gpu); else, by GPU name
 * (gpu_name contains "H100" / "H200": configs/cost-h100.yaml /
 * cost-h200.yaml), else configs/cost-cpu-2core.yaml, looked up in
 * $GQP_COST_DIR, then the source tree's configs/ for programs run from the
 * build tree, else the install prefix's share/gqp/ (found from the running
 * program's path, then the configured prefix; see cost_dirs in model.c);
 * when no file is found the compiled-in defaults of the same name.
 * m->source says what was used.
 * Returns 0, or -1 with err when cost_file is given but cannot be read
 * (m then holds the defaults). */
int cost_model_select(CostModel *m, const char *cost_file, const char *gpu_name, char *err,
                      size_t cap);

/* -------------------------------------------------------- cost functions --
 * Times in microseconds. */
double cost_prim_us(const CostPrim *p, double elems, double bytes);
/* Rows from which the CPU primitives run in parallel (their
 * *_PAR_MIN_ROWS). */
#define COST_PAR_MIN_ROWS 65536

/* Parallel passes (thread starts) of one call of CPU primitive k whose
 * keys take key_bytes bytes a row (sort only; the table above). */
int cost_cpu_passes(CostPrimKind k, double key_bytes);

/* Share of random reads into a structure of `bytes` bytes that miss a
 * cache of cache_mb MiB: bytes / (bytes + cache), 0 for no bytes. */
double cost_miss_share(double bytes, double cache_mb);
/* Transfer of bytes over a link (0 bytes cost nothing). */
double cost_link_us(const CostLink *l, double bytes);
/* Smallest column (bytes) for which page-locking it and copying pinned
 * (h2d_lock) is cheaper than a pageable copy; SIZE_MAX when it never is.
 * The executor's column cache locks exactly the columns of at least this
 * size (libgqp passes it down), so the model and the executor agree. */
size_t cost_lock_min_bytes(const CostModel *m);
/* Time to bring a non-resident table column of `bytes` to the GPU the way
 * the executor does: a pageable copy below cost_lock_min_bytes, else
 * page-lock + pinned copy. */
double cost_fetch_us(const CostModel *m, double bytes);
/* Estimated rows of value v (its own estimate, else its producer's). */
int64_t cost_value_rows(const Dag *d, int v);
/* Estimated bytes of value v (rows * width). */
double cost_value_bytes(const Dag *d, int v);
/* Compute time of node i on device dev, from the DAG's estimates. Sources,
 * constants and DN_TRANSFER cost 0 here (a source's device copy is a
 * transfer); DN_TOTEXT on the GPU costs 1e30 (it cannot run there). */
double cost_node_us(const CostModel *m, const Dag *d, int i, DagDevice dev);
/* 1 if node i on the GPU makes the host wait for a count (a filter map
 * run as a select, a scan, segments, a join): gpu_sync_node_us. */
int cost_node_syncs(const Dag *d, int i);
/* 1 if node i on the CPU runs parallel passes (so a query with it wakes
 * the worker pool: cpu_wake_us). */
int cost_node_parallel(const CostModel *m, const Dag *d, int i);
/* Compute time of filter map `map` run as one select primitive together
 * with its scan and scatter node `scatter` (whose estimate is the rows
 * selected). */
double cost_select_us(const CostModel *m, const Dag *d, int map, int scatter, DagDevice dev);

/* Estimated time in microseconds of a GROUP BY / aggregate block of shape
 * s under its sort plan (dense = 0: fact filter, hash joins with their
 * gathers, key and value gathers, sort, permutation gathers, segments, one
 * segmented reduce per aggregate, key gathers of the groups) or its dense
 * plan (dense = 1: one keymap per dimension, one dense-aggregate pass, a
 * select of the non-empty groups and the gathers of their keys and
 * aggregates), all on one device, priced with the per-primitive constants
 * cost_node_us uses: the smaller of the CPU and (gpu_ok != 0) the GPU.
 * Transfers are not priced (both plans read the same columns and return
 * est_groups rows). docs/cost.md lists the nodes counted. */
double cost_agg_plan_us(const CostModel *m, int dense, const PlanAggShape *s, int gpu_ok);

/* ------------------------------------------------------------ placement -- */

/* What the optimizer knows about the machine and the data. */
typedef struct CostInputs {
    int gpu_available; /* 0: every node on the CPU */
    /* 1 if column `column` of t is resident in device memory (a copy there
     * costs nothing); NULL = nothing resident. */
    int (*resident)(void *ud, const CatTable *t, int column);
    void *resident_ud;
    /* how many earlier queries of the session read column `column` of t
     * (resident_ud; NULL = none). A column that is not resident is priced
     * at its copy divided by 1 + that count: the copy stays cached, so a
     * column read again and again is worth bringing over once the work the
     * CPU did instead adds up to the copy (ski rental: never more than
     * twice the better of always and never copying). */
    int (*reads)(void *ud, const CatTable *t, int column);
    /* 1 if column `column` of t is in host memory kept page-locked (a
     * table streamed in chunks): its copy is priced at the pinned rate,
     * without the locking cost_fetch_us adds; NULL = never */
    int (*locked)(void *ud, const CatTable *t, int column);
    /* 1 if dictionary d's bytes and offsets are in device memory (a LIKE
     * over it, DN_DICTLIKE, copies them there first otherwise); NULL =
     * never */
    int (*dict_resident)(void *ud, const CatDict *d);
    int host_pinned;      /* intermediates that cross PCIe are page-locked... */
    double pin_max_bytes; /* ...up to this size (0 = any); larger ones are
                             pageable (the executor's EXEC_PIN_MAX_BYTES) */
    double pin_min_bytes; /* ...from this size (EXEC_PIN_MIN_BYTES) */
    int force;            /* 0: choose; 1: every node on the CPU; 2: on the GPU
                             (the values of gqp_device) */
    int exhaustive_max;   /* search every placement up to this many free nodes
                             (0 = default 12; < 0 = never) */
    /* > 0: keep a plan that mixes devices only when it is estimated at
     * most this fraction of the better uniform plan (libgqp: 0.8); 0 = the
     * plain optimum (tests compare it with brute force) */
    double mixed_margin;
    /* and at least this many microseconds cheaper (0 = no such bound) */
    double mixed_min_us;
} CostInputs;

/* Outcome of cost_place. */
typedef struct CostPlan {
    double total_us;       /* estimated time of the placement chosen */
    double all_cpu_us;     /* estimated time of everything on the CPU */
    double all_gpu_us;     /* ... everything on the GPU (0 without a GPU) */
    int free_nodes;        /* nodes the search decided */
    int exhaustive;        /* 1: every placement was tried */
    int uniform_by_margin; /* 1: a mixed optimum lost to CostInputs.mixed_margin */
} CostPlan;

/*
 * Place every node of dag on DEV_CPU or DEV_GPU to minimise the estimated
 * total time (compute + transfers), with data location as state: table
 * columns are on the host (and on the device when in->resident says so),
 * a value crosses PCIe once per direction it is needed in, results end on
 * the host. DN_TOTEXT stays on the CPU. Fills each node's device,
 * est_cost_cpu / est_cost_gpu / est_cost_xfer (milliseconds; xfer = the
 * transfers this node's inputs need under the placement chosen) and
 * reason (text in the DAG's arena). plan may be NULL. Returns 0, or -1
 * with err (out of memory).
 */
int cost_place(Dag *dag, const CostModel *m, const CostInputs *in, CostPlan *plan, char *err,
               size_t cap);

/* Estimated total time in microseconds of dag under placement dev[0..nnodes)
 * (the optimizer's objective; sources and constants placed on the GPU mean
 * "copy through the column cache"). For tests and benchmarks. */
double cost_dag_total(const Dag *dag, const CostModel *m, const CostInputs *in,
                      const DagDevice *dev);

/* ---------------------------------------------------------- calibration --
 * Run microbenchmarks of every CPU primitive (with nthreads threads; 0 =
 * all cores) at several sizes and, when a GPU is usable, of every GPU
 * primitive and of the transfers; fit each primitive's constants by least
 * squares and write them with the raw points as YAML to out_path. progress
 * (may be NULL) receives one line per primitive. Returns 0 or -1 with err. */
int cost_calibrate(const char *out_path, int nthreads, char *err, size_t cap);
/* probe (may be NULL) runs after the fit, before the file is written: it
 * may measure whole queries against the fitted model and set m's
 * per-query constants (libgqp does: gqp_calibrate). */
int cost_calibrate_ex(const char *out_path, int nthreads, int64_t max_rows,
                      void (*progress)(void *ud, const char *line), void *ud,
                      int (*probe)(void *ud, CostModel *m, char *err, size_t cap), char *err,
                      size_t cap);

/* How many lines cost_calibrate_ex's progress receives for these
 * arguments (gpu: a GPU is usable), for an "n of m" display. */
int cost_calibrate_steps(int nthreads, int64_t max_rows, int gpu);

/* The user's calibrated cost file, where `gqp calibrate` writes by default
 * and cost_model_select looks before the shipped files:
 * $XDG_CONFIG_HOME/gqp/cost-local.yaml (an absolute XDG_CONFIG_HOME),
 * else $HOME/.config/gqp/cost-local.yaml. Returns 0, or -1 when neither
 * variable is usable (or the path does not fit in cap). */
int cost_user_file(char *buf, size_t cap);

/* Least squares: beta[0..k) minimising sum_i (X[i*k..] . beta - y[i])^2,
 * with every coefficient clamped at >= 0 (refitting without it). Returns 0,
 * or -1 when the system is singular. */
int cost_fit(const double *X, const double *y, int n, int k, double *beta);

#endif /* GQP_COST_H */
