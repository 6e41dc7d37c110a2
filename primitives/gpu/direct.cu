/*
 * direct.cu -- the benchmark baselines of primitives/gpu_direct.h: each GPU
 * twin's work done by calling CUB / Thrust directly (map: one hand-written
 * fused kernel), timed with CUDA events on the caller's stream. Only
 * bench/prim_gpu.c calls these.
 *
 * One instantiation per library call and nothing else (compile time): int64
 * exclusive scan of uint8, Flagged select of int64 row ids, int32 -> int64
 * radix SortPairs, int32 gather by int64 index, double Sum and segmented Sum.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/functional>
#include <exception>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/system/cuda/execution_policy.h>

#include "primitives/gpu/gpu_util.cuh"
#include "primitives/gpu_direct.h"

/* ------------------------------------------------------------- helpers -- */

/* Stream-ordered temporary device memory (cudaMallocAsync on st), freed with
 * cudaFreeAsync on st when it goes out of scope, so an early return inside a
 * run never leaks. */
struct StreamBuf {
    cudaStream_t st;
    void *p;

    explicit StreamBuf(cudaStream_t s) : st(s), p(nullptr) {
    }
    ~StreamBuf() {
        if (p) (void)cudaFreeAsync(p, st);
    }
    StreamBuf(const StreamBuf &) = delete;
    StreamBuf &operator=(const StreamBuf &) = delete;

    /* Allocates bytes (at least 16). Returns the CUDA status. */
    cudaError_t alloc(size_t bytes) {
        return cudaMallocAsync(&p, bytes < 16 ? 16 : bytes, st);
    }
    template <typename T> T *as() const {
        return (T *)p;
    }
};

/* Keeps freed memory of device 0's default pool reserved across syncs (as
 * runtime.cu's pool_init does for prim_gpu_malloc), so that every timed run
 * allocates from a warm pool, like the twins. Done once; errors ignored. */
static void direct_pool_init(void) {
    static int done = 0;
    if (done) return;
    done = 1;
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess) {
        uint64_t threshold = UINT64_MAX;
        (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    }
    (void)cudaGetLastError();
}

/* Median of t[0..n) (n >= 1; sorts t): the middle value, or the mean of the
 * two middle values for even n. */
static float direct_median(float *t, int n) {
    for (int i = 1; i < n; ++i) {
        const float x = t[i];
        int j = i - 1;
        while (j >= 0 && t[j] > x) {
            t[j + 1] = t[j];
            --j;
        }
        t[j + 1] = x;
    }
    return (n & 1) ? t[n / 2] : 0.5f * (t[n / 2 - 1] + t[n / 2]);
}

/* Runs run() (a callable returning cudaError_t that issues one complete
 * run on st) once as a warm-up, then reps times between two events recorded
 * on st. Returns the median milliseconds, or -1 with "Device Error: ..." in
 * err (a message run() already wrote there is kept). */
template <typename Run>
static float direct_time(const char *what, cudaStream_t st, int reps, char *err, size_t cap,
                         Run run) {
    if (err && cap) err[0] = '\0';
    if (reps < 1) reps = 1;
    direct_pool_init();
    float *t = (float *)malloc((size_t)reps * sizeof(float));
    if (!t) {
        if (err && cap) snprintf(err, cap, "Device Error: out of host memory (direct %s)", what);
        return -1;
    }
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    cudaError_t rc = cudaEventCreate(&e0);
    if (rc == cudaSuccess) rc = cudaEventCreate(&e1);
    if (rc == cudaSuccess) rc = run();
    if (rc == cudaSuccess)
        rc = cudaStreamSynchronize(st); /* a benchmark's warm-up, no query's wait */
    for (int r = 0; r < reps && rc == cudaSuccess; ++r) {
        rc = cudaEventRecord(e0, st);
        if (rc == cudaSuccess) rc = run();
        if (rc == cudaSuccess) rc = cudaEventRecord(e1, st);
        if (rc == cudaSuccess) rc = cudaEventSynchronize(e1);
        if (rc == cudaSuccess) rc = cudaEventElapsedTime(&t[r], e0, e1);
    }
    float ms = -1;
    if (rc == cudaSuccess) {
        ms = direct_median(t, reps);
    } else {
        (void)cudaGetLastError();
        if (err && cap && !err[0])
            snprintf(err, cap, "Device Error: %s (direct %s)", cudaGetErrorString(rc), what);
    }
    if (e0) (void)cudaEventDestroy(e0);
    if (e1) (void)cudaEventDestroy(e1);
    free(t);
    return ms;
}

/* Returns 0 for n >= 1; otherwise -1 with a message in err. */
static int direct_bad_n(int64_t n, const char *what, char *err, size_t cap) {
    if (n >= 1) return 0;
    if (err && cap) snprintf(err, cap, "Primitive Error: direct %s needs n >= 1", what);
    return -1;
}

/* Blocks for a grid-stride kernel over n >= 1 items, one item per thread up
 * to 2^20 blocks. */
static unsigned direct_grid(int64_t n) {
    const int64_t b = (n + GQP_BLOCK - 1) / GQP_BLOCK;
    return (unsigned)(b < 1 ? 1 : b > (1 << 20) ? (1 << 20) : b);
}

/* ----------------------------------------------------------------- map -- */

/* The benchmark's filter on one row: a > 60 AND b < 0, as 0/1. */
static __device__ __forceinline__ unsigned char direct_pred(int32_t a, int32_t b) {
    return (unsigned char)((a > 60) & (b < 0));
}

/* out[i] = the filter on rows 4i..4i+3 for i < n4 (16-byte loads, one
 * 4-byte store per thread). */
__global__ void direct_map4_kernel(const int4 *__restrict__ a, const int4 *__restrict__ b,
                                   int64_t n4, uchar4 *__restrict__ out) {
    for (int64_t i = GQP_GRID_START; i < n4; i += GQP_GRID_STRIDE) {
        const int4 x = a[i], y = b[i];
        out[i] = make_uchar4(direct_pred(x.x, y.x), direct_pred(x.y, y.y), direct_pred(x.z, y.z),
                             direct_pred(x.w, y.w));
    }
}

/* out[i] = the filter on row i for lo <= i < n. */
__global__ void direct_map1_kernel(const int32_t *__restrict__ a, const int32_t *__restrict__ b,
                                   int64_t lo, int64_t n, uint8_t *__restrict__ out) {
    for (int64_t i = lo + GQP_GRID_START; i < n; i += GQP_GRID_STRIDE)
        out[i] = direct_pred(a[i], b[i]);
}

/* Launches the fused filter over rows 0..n-1 on st: the 4-wide kernel when a
 * and b are 16-byte and out 4-byte aligned, the scalar one for the rest.
 * Returns the launch status. */
static cudaError_t direct_map_launch(const int32_t *a, const int32_t *b, int64_t n, uint8_t *out,
                                     cudaStream_t st) {
    int64_t lo = 0;
    if ((((uintptr_t)a | (uintptr_t)b) & 15) == 0 && ((uintptr_t)out & 3) == 0) {
        const int64_t n4 = n / 4;
        if (n4 > 0) {
            direct_map4_kernel<<<direct_grid(n4), GQP_BLOCK, 0, st>>>(
                (const int4 *)a, (const int4 *)b, n4, (uchar4 *)out);
            const cudaError_t rc = cudaGetLastError();
            if (rc != cudaSuccess) return rc;
        }
        lo = n4 * 4;
    }
    if (lo < n) {
        direct_map1_kernel<<<direct_grid(n - lo), GQP_BLOCK, 0, st>>>(a, b, lo, n, out);
        return cudaGetLastError();
    }
    return cudaSuccess;
}

/* See gpu_direct.h: the fused filter kernel alone, asynchronous. */
extern "C" float prim_direct_map(const int32_t *d_a, const int32_t *d_b, int64_t n,
                                 uint8_t *d_flags, void *stream, int reps, char *err, size_t cap) {
    if (direct_bad_n(n, "map", err, cap) != 0) return -1;
    cudaStream_t st = (cudaStream_t)stream;
    return direct_time("map", st, reps, err, cap, [&]() -> cudaError_t {
        return direct_map_launch(d_a, d_b, n, d_flags, st);
    });
}

/* ---------------------------------------------------------------- scan -- */

/* ExclusiveScan with an int64 zero as the initial value, so that the sum
 * accumulates in int64 (ExclusiveSum on uint8 input would accumulate in int
 * and overflow past 2^31 set flags); total = last offset + last flag. */
extern "C" float prim_direct_scan(const uint8_t *d_flags, int64_t n, int64_t *d_out, int64_t *total,
                                  void *stream, int reps, char *err, size_t cap) {
    if (direct_bad_n(n, "scan", err, cap) != 0) return -1;
    cudaStream_t st = (cudaStream_t)stream;
    return direct_time("scan", st, reps, err, cap, [&]() -> cudaError_t {
        StreamBuf temp(st);
        size_t bytes = 0;
        cudaError_t rc = cub::DeviceScan::ExclusiveScan(nullptr, bytes, d_flags, d_out,
                                                        ::cuda::std::plus<>{}, (int64_t)0, n, st);
        if (rc != cudaSuccess) return rc;
        if ((rc = temp.alloc(bytes)) != cudaSuccess) return rc;
        rc = cub::DeviceScan::ExclusiveScan(temp.p, bytes, d_flags, d_out, ::cuda::std::plus<>{},
                                            (int64_t)0, n, st);
        if (rc != cudaSuccess) return rc;
        int64_t h_last = 0;
        uint8_t h_flag = 0;
        rc = cudaMemcpyAsync(&h_last, d_out + (n - 1), sizeof h_last, cudaMemcpyDeviceToHost, st);
        if (rc != cudaSuccess) return rc;
        rc = cudaMemcpyAsync(&h_flag, d_flags + (n - 1), 1, cudaMemcpyDeviceToHost, st);
        if (rc != cudaSuccess) return rc;
        if ((rc = prim_gpu_timed_sync(st)) != cudaSuccess) return rc;
        *total = h_last + h_flag;
        return cudaSuccess;
    });
}

/* -------------------------------------------------------------- select -- */

/* See gpu_direct.h: map kernel into a temporary flag array, then
 * cub::DeviceSelect::Flagged over a counting iterator (the row ids), then a
 * stream sync for the count, as prim_gpu_select and prim_gpu_util_select_rows. */
extern "C" float prim_direct_select(const int32_t *d_a, const int32_t *d_b, int64_t n,
                                    int64_t *d_rowids, int64_t *count, void *stream, int reps,
                                    char *err, size_t cap) {
    if (direct_bad_n(n, "select", err, cap) != 0) return -1;
    cudaStream_t st = (cudaStream_t)stream;
    typedef thrust::counting_iterator<int64_t> RowIter;
    return direct_time("select", st, reps, err, cap, [&]() -> cudaError_t {
        StreamBuf flags(st), temp(st);
        size_t bytes = 0;
        cudaError_t rc = cub::DeviceSelect::Flagged(nullptr, bytes, RowIter(0), (uint8_t *)nullptr,
                                                    d_rowids, (int64_t *)nullptr, n, st);
        if (rc != cudaSuccess) return rc;
        if ((rc = flags.alloc((size_t)n)) != cudaSuccess) return rc;
        if ((rc = temp.alloc(bytes + 16)) != cudaSuccess) return rc;
        if ((rc = direct_map_launch(d_a, d_b, n, flags.as<uint8_t>(), st)) != cudaSuccess)
            return rc;
        int64_t *d_count = temp.as<int64_t>();
        rc = cub::DeviceSelect::Flagged(temp.as<char>() + 16, bytes, RowIter(0),
                                        flags.as<uint8_t>(), d_rowids, d_count, n, st);
        if (rc != cudaSuccess) return rc;
        int64_t h_count = 0;
        rc = cudaMemcpyAsync(&h_count, d_count, sizeof h_count, cudaMemcpyDeviceToHost, st);
        if (rc != cudaSuccess) return rc;
        if ((rc = prim_gpu_timed_sync(st)) != cudaSuccess) return rc;
        *count = h_count;
        return cudaSuccess;
    });
}

/* ---------------------------------------------------------------- sort -- */

/* p[i] = i for i < n. */
__global__ void direct_iota_kernel(int64_t *p, int64_t n) {
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE)
        p[i] = i;
}

/* See gpu_direct.h: per run, an iota of row ids into a temporary buffer and
 * one SortPairs (non-DoubleBuffer form: the caller's keys stay untouched, the
 * sorted keys go to a temporary buffer). */
extern "C" float prim_direct_sort(const int32_t *d_keys, int64_t n, int64_t *d_perm, void *stream,
                                  int reps, char *err, size_t cap) {
    if (direct_bad_n(n, "sort", err, cap) != 0) return -1;
    cudaStream_t st = (cudaStream_t)stream;
    return direct_time("sort", st, reps, err, cap, [&]() -> cudaError_t {
        StreamBuf rows(st), keys_out(st), temp(st);
        size_t bytes = 0;
        cudaError_t rc = cub::DeviceRadixSort::SortPairs(nullptr, bytes, d_keys, (int32_t *)nullptr,
                                                         (const int64_t *)nullptr,
                                                         (int64_t *)nullptr, n, 0, 32, st);
        if (rc != cudaSuccess) return rc;
        if ((rc = rows.alloc((size_t)n * sizeof(int64_t))) != cudaSuccess) return rc;
        if ((rc = keys_out.alloc((size_t)n * sizeof(int32_t))) != cudaSuccess) return rc;
        if ((rc = temp.alloc(bytes)) != cudaSuccess) return rc;
        direct_iota_kernel<<<direct_grid(n), GQP_BLOCK, 0, st>>>(rows.as<int64_t>(), n);
        if ((rc = cudaGetLastError()) != cudaSuccess) return rc;
        return cub::DeviceRadixSort::SortPairs(temp.p, bytes, d_keys, keys_out.as<int32_t>(),
                                               (const int64_t *)rows.as<int64_t>(), d_perm, n, 0,
                                               32, st);
    });
}

/* -------------------------------------------------------------- gather -- */

/* See gpu_direct.h; a Thrust exception becomes -1 with its message. */
extern "C" float prim_direct_gather(const int32_t *d_src, const int64_t *d_idx, int64_t n,
                                    int32_t *d_dst, void *stream, int reps, char *err, size_t cap) {
    if (direct_bad_n(n, "gather", err, cap) != 0) return -1;
    cudaStream_t st = (cudaStream_t)stream;
    return direct_time("gather", st, reps, err, cap, [&]() -> cudaError_t {
        try {
            thrust::gather(thrust::cuda::par_nosync.on(st), d_idx, d_idx + n, d_src, d_dst);
        } catch (const std::exception &e) {
            if (err && cap) snprintf(err, cap, "Device Error: thrust::gather: %s", e.what());
            return cudaErrorUnknown;
        }
        return cudaGetLastError();
    });
}

/* --------------------------------------------------------------- reduce -- */

/* See gpu_direct.h: one cub::DeviceReduce::Sum, asynchronous. */
extern "C" float prim_direct_sum(const double *d_val, int64_t n, double *d_sum, void *stream,
                                 int reps, char *err, size_t cap) {
    if (direct_bad_n(n, "sum", err, cap) != 0) return -1;
    cudaStream_t st = (cudaStream_t)stream;
    return direct_time("sum", st, reps, err, cap, [&]() -> cudaError_t {
        StreamBuf temp(st);
        size_t bytes = 0;
        cudaError_t rc = cub::DeviceReduce::Sum(nullptr, bytes, d_val, d_sum, n, st);
        if (rc != cudaSuccess) return rc;
        if ((rc = temp.alloc(bytes)) != cudaSuccess) return rc;
        return cub::DeviceReduce::Sum(temp.p, bytes, d_val, d_sum, n, st);
    });
}

/* See gpu_direct.h: one cub::DeviceSegmentedReduce::Sum, begin offsets
 * d_offsets and end offsets d_offsets + 1, asynchronous. */
extern "C" float prim_direct_segsum(const double *d_val, const int64_t *d_offsets, int64_t nseg,
                                    double *d_out, void *stream, int reps, char *err, size_t cap) {
    if (direct_bad_n(nseg, "segsum", err, cap) != 0) return -1;
    cudaStream_t st = (cudaStream_t)stream;
    return direct_time("segsum", st, reps, err, cap, [&]() -> cudaError_t {
        StreamBuf temp(st);
        size_t bytes = 0;
        cudaError_t rc = cub::DeviceSegmentedReduce::Sum(nullptr, bytes, d_val, d_out, nseg,
                                                         d_offsets, d_offsets + 1, st);
        if (rc != cudaSuccess) return rc;
        if ((rc = temp.alloc(bytes)) != cudaSuccess) return rc;
        return cub::DeviceSegmentedReduce::Sum(temp.p, bytes, d_val, d_out, nseg, d_offsets,
                                               d_offsets + 1, st);
    });
}
