/*
 * scan_reduce.cu -- GPU twins built on CUB's scan, select and reduce: scan,
 * segments, segreduce, plus prim_gpu_util_select_rows for sort_join.cu.
 * Contracts are the CPU twins' in primitives/primitives.h with device
 * pointers. The host synchronizes ctx->stream only where a count returns to
 * it (scan's total, segments' nseg).
 *
 * Instantiations are kept few on purpose (compile time): every loader reads
 * its column through a runtime type switch, so one CUB instantiation serves
 * all five PrimTypes.
 */
#include <stdint.h>

#include <cub/block/block_scan.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "primitives/gpu/gpu_util.cuh"

typedef thrust::counting_iterator<int64_t> RowIter;

/* ----------------------------------------------------------------- scan -- */

/* Value i of a U8/I32/I64 column as int64 (scan input). */
struct ScanLoad {
    const void *d;
    int type;
    __host__ __device__ int64_t operator()(int64_t i) const {
#ifdef __CUDA_ARCH__
        return prim_load_i(d, type, i);
#else
        return 0;
#endif
    }
};

/* *d_total = value n-1 of the input (run before the scan, so that out may
 * alias the input). */
__global__ void scan_last_kernel(ScanLoad in, int64_t n, int64_t *d_total) {
    *d_total = in(n - 1);
}

/* *d_total += out[n-1]: the sum of all values. */
__global__ void scan_total_kernel(const int64_t *out, int64_t n, int64_t *d_total) {
    *d_total += out[n - 1];
}

/* GPU twin of prim_cpu_scan: exclusive prefix sum of in (U8, I32 or I64;
 * validity ignored) into out[0..n) (int64, device) with
 * cub::DeviceScan::ExclusiveSum over a widening transform iterator, and
 * *total (host) = the sum of all values. Synchronizes ctx->stream to return
 * *total (the one documented sync). n == 0 gives *total = 0 without device
 * work. Returns 0 or -1. */
extern "C" int prim_gpu_scan(PrimCtx *ctx, const PrimVec *in, int64_t n, int64_t *out,
                             int64_t *total) {
    if (prim_gpu_ctx_ok(ctx) != 0) return -1;
    if (!in || !total || n < 0) return prim_gpu_fail(ctx, "scan: bad arguments");
    *total = 0;
    if (n == 0) return 0;
    if (!in->data || !out) return prim_gpu_fail(ctx, "scan: missing data");
    if (in->type != PRIM_U8 && in->type != PRIM_I32 && in->type != PRIM_I64)
        return prim_gpu_fail(ctx, "scan: input must be U8, I32 or I64");
    cudaStream_t st = prim_gpu_stream(ctx);
    ScanLoad load = {in->data, (int)in->type};
    thrust::transform_iterator<ScanLoad, RowIter, int64_t> it(RowIter(0), load);
    size_t temp_bytes = 0;
    GQP_CUDA_TRY(ctx, cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, it, out, n, st));
    DevBuf temp(ctx);
    if (temp.alloc(temp_bytes + 16) != 0) return -1;
    int64_t *d_total = temp.as<int64_t>();
    void *d_temp = temp.as<char>() + 16;
    scan_last_kernel<<<1, 1, 0, st>>>(load, n, d_total);
    GQP_LAUNCH_TRY(ctx);
    GQP_CUDA_TRY(ctx, cub::DeviceScan::ExclusiveSum(d_temp, temp_bytes, it, out, n, st));
    scan_total_kernel<<<1, 1, 0, st>>>(out, n, d_total);
    GQP_LAUNCH_TRY(ctx);
    int64_t h_total = 0;
    GQP_CUDA_TRY(ctx,
                 cudaMemcpyAsync(&h_total, d_total, sizeof h_total, cudaMemcpyDeviceToHost, st));
    GQP_CUDA_TRY(ctx, prim_gpu_timed_sync(st));
    *total = h_total;
    return 0;
}

/* ------------------------------------------------------- select helper -- */

/* See gpu_util.cuh: compacts the indices of the flagged rows with
 * cub::DeviceSelect::Flagged; synchronizes ctx->stream for *count. */
extern "C" int prim_gpu_util_select_rows(PrimCtx *ctx, const uint8_t *d_flags, int64_t n,
                                         int64_t *d_out, int64_t *count) {
    cudaStream_t st = prim_gpu_stream(ctx);
    size_t temp_bytes = 0;
    GQP_CUDA_TRY(ctx, cub::DeviceSelect::Flagged(nullptr, temp_bytes, RowIter(0), d_flags, d_out,
                                                 (int64_t *)nullptr, n, st));
    DevBuf temp(ctx);
    if (temp.alloc(temp_bytes + 16) != 0) return -1;
    int64_t *d_count = temp.as<int64_t>();
    GQP_CUDA_TRY(ctx, cub::DeviceSelect::Flagged(temp.as<char>() + 16, temp_bytes, RowIter(0),
                                                 d_flags, d_out, d_count, n, st));
    int64_t h_count = 0;
    GQP_CUDA_TRY(ctx,
                 cudaMemcpyAsync(&h_count, d_count, sizeof h_count, cudaMemcpyDeviceToHost, st));
    GQP_CUDA_TRY(ctx, prim_gpu_timed_sync(st));
    *count = h_count;
    return 0;
}

/* ------------------------------------------------------------- segments -- */

/* flags[i] = (first ? i == 0 : flags[i]) | (i > 0 and row i of key differs
 * from row i-1); d == NULL (no key) only sets the row-0 flags. NULL equals NULL and differs from
 * any value; floats compare numerically (-0.0 == 0.0, NaN differs from everything). */
__global__ void heads_kernel(const void *d, const uint8_t *v, int type, int64_t n, uint8_t *flags,
                             int first) {
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE) {
        uint8_t h = first ? (uint8_t)(i == 0) : flags[i];
        if (!h && i > 0 && d) {
            const int na = v && !v[i], nb = v && !v[i - 1];
            if (na != nb)
                h = 1;
            else if (!na) {
                if (prim_is_float(type))
                    h = prim_load_f(d, type, i) != prim_load_f(d, type, i - 1);
                else
                    h = prim_load_i(d, type, i) != prim_load_i(d, type, i - 1);
            }
        }
        flags[i] = h;
    }
}

/* GPU twin of prim_cpu_segments: one heads_kernel pass per key flags the
 * first row of every run of equal keys (row 0 always), then
 * cub::DeviceSelect::Flagged writes those row ids to starts (device,
 * capacity n) and *nseg (host) is synchronized from the device. nkeys == 0
 * gives one segment for n > 0. Returns 0 or -1. */
extern "C" int prim_gpu_segments(PrimCtx *ctx, const PrimVec *keys, int nkeys, int64_t n,
                                 int64_t *starts, int64_t *nseg) {
    if (prim_gpu_ctx_ok(ctx) != 0) return -1;
    if (!nseg || n < 0 || nkeys < 0 || (nkeys > 0 && !keys))
        return prim_gpu_fail(ctx, "segments: bad arguments");
    *nseg = 0;
    if (n == 0) return 0;
    if (!starts) return prim_gpu_fail(ctx, "segments: missing output");
    for (int k = 0; k < nkeys; ++k)
        if (!keys[k].data || (int)keys[k].type < PRIM_U8 || (int)keys[k].type > PRIM_F64)
            return prim_gpu_fail(ctx, "segments: key %d has no data", k);
    cudaStream_t st = prim_gpu_stream(ctx);
    DevBuf flags(ctx);
    if (flags.alloc((size_t)n) != 0) return -1;
    const unsigned grid = prim_gpu_grid(n);
    if (nkeys == 0) {
        heads_kernel<<<grid, GQP_BLOCK, 0, st>>>(nullptr, nullptr, PRIM_U8, n, flags.as<uint8_t>(),
                                                 1);
        GQP_LAUNCH_TRY(ctx);
    }
    for (int k = 0; k < nkeys; ++k) {
        heads_kernel<<<grid, GQP_BLOCK, 0, st>>>(keys[k].data, keys[k].valid, (int)keys[k].type, n,
                                                 flags.as<uint8_t>(), k == 0);
        GQP_LAUNCH_TRY(ctx);
    }
    return prim_gpu_util_select_rows(ctx, flags.as<uint8_t>(), n, starts, nseg);
}

/* --------------------------------------------------------- segment rank -- */

/* out[i] = i - starts[s] + 1, s the last segment with starts[s] <= i
 * (binary search per row; starts ascending from 0). */
__global__ void segrank_kernel(const int64_t *__restrict__ starts, int64_t nseg, int64_t n,
                               int64_t *__restrict__ out) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t lo = 0, hi = nseg;
        while (hi - lo > 1) {
            int64_t mid = lo + (hi - lo) / 2;
            if (starts[mid] <= i)
                lo = mid;
            else
                hi = mid;
        }
        out[i] = i - starts[lo] + 1;
    }
}

extern "C" int prim_gpu_segrank(PrimCtx *ctx, const int64_t *starts, int64_t nseg, int64_t n,
                                int64_t *out) {
    if (prim_gpu_ctx_ok(ctx) != 0) return -1;
    if (n < 0 || nseg < 0 || (n > 0 && (!out || !starts || nseg < 1)))
        return prim_gpu_fail(ctx, "segment rank: bad arguments");
    if (n == 0) return 0;
    segrank_kernel<<<prim_gpu_grid(n), GQP_BLOCK, 0, prim_gpu_stream(ctx)>>>(starts, nseg, n, out);
    GQP_LAUNCH_TRY(ctx);
    return 0;
}

/* ------------------------------------------------------------ segreduce -- */

/* Partial aggregate of some rows (one layout for every aggregate and value
 * type, so that CUB is instantiated once): cnt non-NULL values; i: integer
 * SUM (wrapping, ovf set on overflow) / MIN / MAX; f + c: float SUM as a
 * compensated pair (and the double sum of integer values, for AVG after an
 * int64 overflow), or float MIN / MAX in f. cnt == 0 means empty. */
struct Acc {
    int64_t cnt;
    int64_t i;
    double f, c;
    int ovf;
};

/* The empty partial aggregate (no row). */
static __host__ __device__ __forceinline__ Acc acc_empty() {
    Acc a;
    a.cnt = 0;
    a.i = 0;
    a.f = 0.0;
    a.c = 0.0;
    a.ovf = 0;
    return a;
}

/* Row i of the value column as a partial aggregate; rows before *lo (the
 * start of the only segment, single-segment path) count as empty. */
struct AccLoad {
    const void *d;
    const uint8_t *valid;
    const int64_t *lo; /* NULL: no lower bound */
    int type;
    __host__ __device__ Acc operator()(int64_t r) const {
        Acc a = acc_empty();
#ifdef __CUDA_ARCH__
        if ((lo && r < *lo) || (valid && !valid[r]) || !d) return a;
        a.cnt = 1;
        if (prim_is_float(type)) {
            a.f = prim_load_f(d, type, r);
        } else {
            a.i = prim_load_i(d, type, r);
            a.f = (double)a.i;
        }
#endif
        return a;
    }
};

/* Combines two partial aggregates for aggregate agg (runtime). Associative
 * up to float rounding: sums combine with Knuth's TwoSum, carrying the
 * rounding error in c (close to the CPU twin's Neumaier sum); integer sums
 * wrap and flag overflow, which the host reports as the CPU twin does. */
struct AccOp {
    int agg;
    int is_float;
    __host__ __device__ Acc operator()(const Acc &a, const Acc &b) const {
        if (a.cnt == 0) return b;
        if (b.cnt == 0) return a;
        Acc r = a;
        r.cnt = a.cnt + b.cnt;
        if (agg == AGG_MIN) {
            r.i = b.i < a.i ? b.i : a.i;
            r.f = b.f < a.f ? b.f : a.f;
        } else if (agg == AGG_MAX) {
            r.i = b.i > a.i ? b.i : a.i;
            r.f = b.f > a.f ? b.f : a.f;
        } else if (agg == AGG_SUM || agg == AGG_AVG) {
            if (!is_float) {
                const int64_t s = (int64_t)((uint64_t)a.i + (uint64_t)b.i);
                r.ovf = a.ovf | b.ovf | (((a.i ^ s) & (b.i ^ s)) < 0);
                r.i = s;
            }
            if (is_float || agg == AGG_AVG) {
                const double s = a.f + b.f;
                const double bb = s - a.f;
                const double err = (a.f - (s - bb)) + (b.f - bb);
                r.f = s;
                r.c = a.c + b.c + err;
            }
        }
        return r;
    }
};

/* End offset of segment s: starts[s+1], or n for the last. */
struct SegEnd {
    const int64_t *starts;
    int64_t nseg, n;
    __host__ __device__ int64_t operator()(int64_t s) const {
#ifdef __CUDA_ARCH__
        return s + 1 < nseg ? starts[s + 1] : n;
#else
        return 0;
#endif
    }
};

/* Segments up to this many rows are reduced by one thread alone; longer
 * ones by the 32 threads of its warp together (see seg_reduce_kernel). */
#define SEG_SHORT 32
/* From this many rows per segment on average, cub::DeviceSegmentedReduce
 * (a block per segment) reduces instead. */
#define SEG_LONG_AVG 256

/* Fewer segments than this, long on average, are first cut into pieces
 * (seg_pieces_kernel): a block per segment would leave most of the GPU
 * idle (TPC-H Q1's 4 groups of 1.2M rows each, a chunk of SF 10 on the
 * H200: 5.5 ms per aggregate with a block each). Also the block size of
 * seg_pieces_kernel. */
#define SEG_FEW 512
/* The pieces: at least this many rows each, and about SEG_PIECES of them
 * over all rows (so that every SM gets several blocks). */
#define SEG_PIECE_MIN 4096
#define SEG_PIECES 2048

/* Cuts each segment s < nseg (nseg <= SEG_FEW; one block of SEG_FEW
 * threads) into pieces of at most p rows (at least one piece, possibly
 * empty, per segment): pstart[0..np) the pieces' first rows in order, the
 * entries up to np_max set to n (empty pieces at the end), and
 * po[0..nseg] the first piece of each segment (po[nseg]: the pieces'
 * count). Pieces are consecutive: piece k ends where k + 1 starts. */
__global__ void seg_pieces_kernel(const int64_t *starts, int64_t nseg, int64_t n, int64_t p,
                                  int64_t *pstart, int64_t np_max, int64_t *po) {
    typedef cub::BlockScan<int64_t, SEG_FEW> Scan;
    __shared__ typename Scan::TempStorage tmp;
    __shared__ int64_t total;
    const int s = threadIdx.x;
    int64_t lo = 0, hi = 0, c = 0;
    if (s < nseg) {
        lo = starts[s];
        hi = s + 1 < nseg ? starts[s + 1] : n;
        c = hi > lo ? (hi - lo + p - 1) / p : 1;
    }
    int64_t first = 0, all = 0;
    Scan(tmp).ExclusiveSum(c, first, all);
    if (s == 0) total = all;
    if (s < nseg) {
        po[s] = first;
        for (int64_t j = 0; j < c; j++)
            pstart[first + j] = lo + j * p;
    }
    if (s == 0) po[nseg] = all;
    __syncthreads();
    for (int64_t k = total + s; k < np_max; k += blockDim.x)
        pstart[k] = n;
}

/* a's fields from lane (lane + off) of the warp (every lane calls). */
static __device__ __forceinline__ Acc acc_shfl_down(const Acc &a, int off) {
    Acc r;
    r.cnt = __shfl_down_sync(0xffffffffu, a.cnt, off);
    r.i = __shfl_down_sync(0xffffffffu, a.i, off);
    r.f = __shfl_down_sync(0xffffffffu, a.f, off);
    r.c = __shfl_down_sync(0xffffffffu, a.c, off);
    r.ovf = __shfl_down_sync(0xffffffffu, a.ovf, off);
    return r;
}

/* Partial aggregate of every segment s < nseg into acc[s], in one pass over
 * the rows whatever the segment lengths: each warp takes 32 consecutive
 * segments, one per lane. A lane reduces its segment alone when it has at
 * most SEG_SHORT rows (neighbouring segments are adjacent rows, so the
 * warp's loads stay within a few cache lines); the warp then reduces each of
 * its longer segments together (coalesced strided loads, shuffle tree), so
 * one huge segment costs a warp's bandwidth, not a thread's. It replaced
 * cub::DeviceSegmentedReduce, which gives every segment a block of its own:
 * 17.8 ms for 4.5M segments of 4 rows (TPC-H Q18 at SF 3 on the H200). */
__global__ void seg_reduce_kernel(AccLoad load, AccOp op, const int64_t *starts, int64_t nseg,
                                  int64_t n, Acc *acc) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const Acc empty = acc_empty();
    for (int64_t w = GQP_GRID_START >> 5; w * 32 < nseg; w += warps) {
        const int64_t s = w * 32 + lane;
        int64_t lo = 0, hi = 0;
        if (s < nseg) {
            lo = starts[s];
            hi = s + 1 < nseg ? starts[s + 1] : n;
        }
        const bool shrt = hi - lo <= SEG_SHORT;
        if (s < nseg && shrt) {
            Acc a = empty;
            for (int64_t r = lo; r < hi; ++r)
                a = op(a, load(r));
            acc[s] = a;
        }
        unsigned longs = __ballot_sync(0xffffffffu, s < nseg && !shrt);
        while (longs) {
            const int src = __ffs(longs) - 1;
            longs &= longs - 1;
            const int64_t l0 = __shfl_sync(0xffffffffu, lo, src);
            const int64_t h0 = __shfl_sync(0xffffffffu, hi, src);
            Acc a = empty;
            for (int64_t r = l0 + lane; r < h0; r += 32)
                a = op(a, load(r));
#pragma unroll
            for (int off = 16; off > 0; off >>= 1)
                a = op(a, acc_shfl_down(a, off));
            if (lane == 0) acc[w * 32 + src] = a;
        }
    }
}

/* Writes the result of every segment s < nseg from its partial aggregate
 * into out (I64 or F64 data; ov, if present, validity), like the CPU twin's
 * segr_final: COUNT -> cnt; SUM -> i (NULL and *d_ovf = 1 on integer
 * overflow) or f + c; MIN/MAX -> i or f; AVG -> i / cnt, or (f + c) / cnt for
 * float values or after an integer overflow. Empty segments give NULL
 * (value 0), except COUNT (0). */
__global__ void seg_final_kernel(const Acc *acc, int64_t nseg, int agg, int is_float, void *out,
                                 uint8_t *ov, int *d_ovf) {
    for (int64_t s = GQP_GRID_START; s < nseg; s += GQP_GRID_STRIDE) {
        const Acc a = acc[s];
        int isnull = agg != AGG_COUNT && a.cnt == 0;
        int64_t iv = 0;
        double fv = 0.0;
        int fout = agg == AGG_AVG || is_float;
        if (!isnull) {
            switch (agg) {
            case AGG_COUNT:
                iv = a.cnt;
                fout = 0;
                break;
            case AGG_SUM:
                if (is_float) {
                    /* an infinite sum is the plain sum (its compensation is
                     * Inf - Inf = NaN); a NaN (+Inf plus -Inf) is NULL, as
                     * in SQLite and the CPU twin */
                    fv = isfinite(a.f) ? a.f + a.c : a.f;
                    isnull = isnan(fv);
                } else if (a.ovf) {
                    isnull = 1;
                    *d_ovf = 1;
                } else {
                    iv = a.i;
                }
                break;
            case AGG_MIN:
            case AGG_MAX:
                iv = a.i;
                fv = a.f;
                break;
            default: /* AGG_AVG */
                fv = (!is_float && !a.ovf) ? (double)a.i / (double)a.cnt
                                           : (isfinite(a.f) ? a.f + a.c : a.f) / (double)a.cnt;
                isnull = isnan(fv);
                break;
            }
        }
        if (fout)
            ((double *)out)[s] = isnull ? 0.0 : fv;
        else
            ((int64_t *)out)[s] = isnull ? 0 : iv;
        if (ov) ov[s] = (uint8_t)!isnull;
    }
}

/* COUNT(*): out[s] = end(s) - starts[s] (I64), never NULL. */
__global__ void seg_count_star_kernel(const int64_t *starts, int64_t nseg, int64_t n, int64_t *out,
                                      uint8_t *ov) {
    SegEnd end = {starts, nseg, n};
    for (int64_t s = GQP_GRID_START; s < nseg; s += GQP_GRID_STRIDE) {
        out[s] = end(s) - starts[s];
        if (ov) ov[s] = 1;
    }
}

/* primitives.h: CUB's space for one segment of n rows, with the partial. */
extern "C" size_t prim_gpu_segreduce_scratch(int64_t n) {
    if (n <= 0) return 0;
    AccLoad load = {nullptr, nullptr, nullptr, (int)PRIM_I64};
    thrust::transform_iterator<AccLoad, RowIter, Acc> it(RowIter(0), load);
    AccOp op = {(int)AGG_SUM, 0};
    size_t temp_bytes = 0;
    if (cub::DeviceReduce::Reduce(nullptr, temp_bytes, it, (Acc *)nullptr, n, op, acc_empty(),
                                  (cudaStream_t)0) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    /* with the partial and the overflow flag (prim_gpu_segreduce_ex) */
    return temp_bytes + sizeof(Acc) + 32;
}

/* GPU twin of prim_cpu_segreduce (device pointers), same numerics as
 * primitives/cpu/segreduce.c: per segment COUNT_STAR / COUNT (I64, never
 * NULL), SUM (I64 for integer val, F64 for float val), MIN / MAX (I64 or
 * F64 after val), AVG (F64); NULL where a segment has no non-NULL value.
 * out->type must be that type. One segment (a global aggregate, rows
 * starts[0]..n-1) runs cub::DeviceReduce; several seg_reduce_kernel (a
 * thread per short segment, a warp per long one), or
 * cub::DeviceSegmentedReduce (a block per segment) when segments hold
 * SEG_LONG_AVG rows or more on average. Float sums are compensated, so they
 * equal the CPU twin's within rounding (not bit for bit). An integer SUM
 * that overflows int64 is an error ("integer overflow"), as on the CPU: to
 * report it, integer SUM synchronizes ctx->stream; every other aggregate is
 * asynchronous. val may be NULL for COUNT_STAR. Returns 0 or -1. */
extern "C" int prim_gpu_segreduce(PrimCtx *ctx, PrimAgg agg, const PrimVec *val,
                                  const int64_t *starts, int64_t nseg, int64_t n, PrimVec *out) {
    return prim_gpu_segreduce_ex(ctx, agg, 0, val, starts, nseg, n, out);
}

/* prim_gpu_segreduce; with nocheck (the planner proved that no integer
 * sum overflows) an integer SUM is asynchronous too: no overflow flag is
 * copied back, so no synchronization. */
extern "C" int prim_gpu_segreduce_ex(PrimCtx *ctx, PrimAgg agg, int nocheck, const PrimVec *val,
                                     const int64_t *starts, int64_t nseg, int64_t n, PrimVec *out) {
    if (prim_gpu_ctx_ok(ctx) != 0) return -1;
    if (!out || nseg < 0 || n < 0 || (nseg > 0 && (!starts || !out->data)))
        return prim_gpu_fail(ctx, "segreduce: bad arguments");
    if ((int)agg < AGG_COUNT_STAR || (int)agg > AGG_AVG)
        return prim_gpu_fail(ctx, "segreduce: bad aggregate %d", (int)agg);
    int is_float = 0;
    if (agg != AGG_COUNT_STAR) {
        if (!val || (int)val->type < PRIM_U8 || (int)val->type > PRIM_F64 || (n > 0 && !val->data))
            return prim_gpu_fail(ctx, "segreduce: bad value vector");
        is_float = val->type == PRIM_F32 || val->type == PRIM_F64;
    }
    PrimType want = PRIM_I64;
    if (agg == AGG_AVG || ((agg == AGG_SUM || agg == AGG_MIN || agg == AGG_MAX) && is_float))
        want = PRIM_F64;
    if (out->type != want)
        return prim_gpu_fail(ctx, "segreduce: output type %d, expected %d", (int)out->type,
                             (int)want);
    if (nseg == 0) return 0;
    cudaStream_t st = prim_gpu_stream(ctx);
    if (agg == AGG_COUNT_STAR) {
        seg_count_star_kernel<<<prim_gpu_grid(nseg), GQP_BLOCK, 0, st>>>(
            starts, nseg, n, (int64_t *)out->data, out->valid);
        GQP_LAUNCH_TRY(ctx);
        return 0;
    }
    AccLoad load = {val->data, val->valid, nseg == 1 ? starts : nullptr, (int)val->type};
    thrust::transform_iterator<AccLoad, RowIter, Acc> it(RowIter(0), load);
    AccOp op = {(int)agg, is_float};
    const Acc init = acc_empty();
    DevBuf accs(ctx), temp(ctx);
    /* accs holds nseg partials, then the overflow flag. */
    const size_t acc_bytes = ((size_t)nseg * sizeof(Acc) + 15) & ~(size_t)15;
    if (accs.alloc(acc_bytes + 16) != 0) return -1;
    Acc *d_acc = accs.as<Acc>();
    int *d_ovf = (int *)(accs.as<char>() + acc_bytes);
    GQP_CUDA_TRY(ctx, cudaMemsetAsync(d_ovf, 0, sizeof(int), st));
    size_t temp_bytes = 0;
    if (nseg == 1) {
        GQP_CUDA_TRY(ctx,
                     cub::DeviceReduce::Reduce(nullptr, temp_bytes, it, d_acc, n, op, init, st));
        if (temp.alloc(temp_bytes) != 0) return -1;
        GQP_CUDA_TRY(ctx,
                     cub::DeviceReduce::Reduce(temp.p, temp_bytes, it, d_acc, n, op, init, st));
    } else if (n / nseg >= SEG_LONG_AVG && nseg < SEG_FEW) {
        /* few long segments: reduce pieces of them, a block each, then
         * each segment's pieces (deterministic: the cut depends on n
         * alone) */
        int64_t p = n / SEG_PIECES;
        if (p < SEG_PIECE_MIN) p = SEG_PIECE_MIN;
        const int64_t np_max = nseg + n / p + 1;
        DevBuf cut(ctx), part(ctx);
        if (cut.alloc(sizeof(int64_t) * (size_t)(np_max + nseg + 1)) != 0 ||
            part.alloc(sizeof(Acc) * (size_t)np_max) != 0)
            return -1;
        int64_t *pstart = cut.as<int64_t>(), *po = pstart + np_max;
        Acc *d_part = part.as<Acc>();
        seg_pieces_kernel<<<1, SEG_FEW, 0, st>>>(starts, nseg, n, p, pstart, np_max, po);
        GQP_LAUNCH_TRY(ctx);
        SegEnd pend = {pstart, np_max, n};
        thrust::transform_iterator<SegEnd, RowIter, int64_t> pends(RowIter(0), pend);
        size_t t1 = 0, t2 = 0;
        GQP_CUDA_TRY(ctx, cub::DeviceSegmentedReduce::Reduce(nullptr, t1, it, d_part, np_max,
                                                             pstart, pends, op, init, st));
        GQP_CUDA_TRY(ctx, cub::DeviceSegmentedReduce::Reduce(nullptr, t2, d_part, d_acc, nseg, po,
                                                             po + 1, op, init, st));
        temp_bytes = t1 > t2 ? t1 : t2;
        if (temp.alloc(temp_bytes) != 0) return -1;
        GQP_CUDA_TRY(ctx, cub::DeviceSegmentedReduce::Reduce(temp.p, t1, it, d_part, np_max, pstart,
                                                             pends, op, init, st));
        GQP_CUDA_TRY(ctx, cub::DeviceSegmentedReduce::Reduce(temp.p, t2, d_part, d_acc, nseg, po,
                                                             po + 1, op, init, st));
    } else if (n / nseg >= SEG_LONG_AVG) {
        /* long segments on average (a GROUP BY of few groups): a block per
         * segment reads each at full width (TPC-H Q9's 175 groups over
         * 18M rows at SF 3: 0.04 ms, against 2.4 ms with a warp each) */
        SegEnd endf = {starts, nseg, n};
        thrust::transform_iterator<SegEnd, RowIter, int64_t> ends(RowIter(0), endf);
        GQP_CUDA_TRY(ctx, cub::DeviceSegmentedReduce::Reduce(nullptr, temp_bytes, it, d_acc, nseg,
                                                             starts, ends, op, init, st));
        if (temp.alloc(temp_bytes) != 0) return -1;
        GQP_CUDA_TRY(ctx, cub::DeviceSegmentedReduce::Reduce(temp.p, temp_bytes, it, d_acc, nseg,
                                                             starts, ends, op, init, st));
    } else {
        int64_t warps = (nseg + 31) / 32, blocks = (warps * 32 + GQP_BLOCK - 1) / GQP_BLOCK;
        if (blocks > 65536) blocks = 65536; /* grid-stride beyond */
        seg_reduce_kernel<<<(unsigned)blocks, GQP_BLOCK, 0, st>>>(load, op, starts, nseg, n, d_acc);
        GQP_LAUNCH_TRY(ctx);
    }
    seg_final_kernel<<<prim_gpu_grid(nseg), GQP_BLOCK, 0, st>>>(d_acc, nseg, (int)agg, is_float,
                                                                out->data, out->valid, d_ovf);
    GQP_LAUNCH_TRY(ctx);
    if (agg == AGG_SUM && !is_float && !nocheck) {
        int h_ovf = 0;
        GQP_CUDA_TRY(ctx, cudaMemcpyAsync(&h_ovf, d_ovf, sizeof h_ovf, cudaMemcpyDeviceToHost, st));
        GQP_CUDA_TRY(ctx, prim_gpu_timed_sync(st));
        if (h_ovf) return prim_gpu_fail(ctx, "segreduce: integer overflow");
    }
    return 0;
}
