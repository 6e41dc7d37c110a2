/*
 * gpu_direct.h -- the benchmark baselines of the GPU twins: for each
 * primitive, the same work done by calling CUB / Thrust directly (or, for
 * map, one hand-written fused kernel), timed with CUDA events on one stream
 * (primitives/gpu/direct.cu; without CUDA, direct_nocuda.c where every call
 * fails with "built without CUDA"). Used by bench/prim_gpu.c only; the
 * executor never calls these.
 *
 * Every function takes device pointers the caller allocated, issues one
 * warm-up run and then reps (>= 1) timed runs on stream (a cudaStream_t;
 * NULL = default stream), each run bracketed by two events recorded on
 * stream, and returns the median of the reps times in milliseconds. Each
 * run allocates its temporary storage with cudaMallocAsync on stream and
 * frees it with cudaFreeAsync (as the twins do through the pool). The
 * outputs hold the last run's result when the function returns. On failure
 * it returns -1 with a "Device Error: ..." message in err (cap bytes).
 * n >= 1 everywhere.
 */
#ifndef GQP_GPU_DIRECT_H
#define GQP_GPU_DIRECT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* d_flags[i] = d_a[i] > 60 && d_b[i] < 0 (0/1), one fused kernel: four rows
 * per thread with 16-byte loads when the pointers allow it. Asynchronous. */
float prim_direct_map(const int32_t *d_a, const int32_t *d_b, int64_t n, uint8_t *d_flags,
                      void *stream, int reps, char *err, size_t cap);

/* d_out[0..n) = exclusive prefix sum of d_flags (cub::DeviceScan with an
 * int64 accumulator), *total (host) = sum of all flags; synchronizes the
 * stream for *total, as prim_gpu_scan does. */
float prim_direct_scan(const uint8_t *d_flags, int64_t n, int64_t *d_out, int64_t *total,
                       void *stream, int reps, char *err, size_t cap);

/* The fused filter done directly: the map kernel above writes flags to a
 * temporary buffer, cub::DeviceSelect::Flagged compacts the row ids where
 * d_a[i] > 60 && d_b[i] < 0 into d_rowids (capacity n) and *count (host) is
 * synchronized from the device, as prim_gpu_select does. */
float prim_direct_select(const int32_t *d_a, const int32_t *d_b, int64_t n, int64_t *d_rowids,
                         int64_t *count, void *stream, int reps, char *err, size_t cap);

/* d_perm[0..n) = the stable permutation sorting d_keys ascending:
 * an iota kernel, then cub::DeviceRadixSort::SortPairs on the int32 keys
 * (CUB's own order-preserving bit flip, 32 bits) carrying int64 row ids. */
float prim_direct_sort(const int32_t *d_keys, int64_t n, int64_t *d_perm, void *stream, int reps,
                       char *err, size_t cap);

/* d_dst[i] = d_src[d_idx[i]] for i < n (every index in range):
 * thrust::gather with thrust::cuda::par_nosync.on(stream). */
float prim_direct_gather(const int32_t *d_src, const int64_t *d_idx, int64_t n, int32_t *d_dst,
                         void *stream, int reps, char *err, size_t cap);

/* *d_sum (device, one double) = sum of d_val[0..n) (cub::DeviceReduce::Sum).
 * Asynchronous. */
float prim_direct_sum(const double *d_val, int64_t n, double *d_sum, void *stream, int reps,
                      char *err, size_t cap);

/* d_out[s] = sum of d_val[d_offsets[s] .. d_offsets[s+1]) for s < nseg
 * (cub::DeviceSegmentedReduce::Sum; d_offsets has nseg + 1 values, the last
 * one n). Asynchronous. */
float prim_direct_segsum(const double *d_val, const int64_t *d_offsets, int64_t nseg, double *d_out,
                         void *stream, int reps, char *err, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* GQP_GPU_DIRECT_H */
