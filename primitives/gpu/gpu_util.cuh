/*
 * gpu_util.cuh -- private helpers shared by the GPU twins (primitives/gpu/*.cu
 * only; no host C file includes this). One macro checks every CUDA call and
 * kernel launch (CUB's CubDebug habit): on failure it writes
 * "Device Error: <cuda message> (file:line)" into ctx->err and returns -1
 * from the calling function. Temporary device memory is held by DevBuf, which
 * returns it to the executor's pool (ctx->free) when it goes out of scope, so
 * an early return never leaks. ctx->free must be stream-ordered with respect
 * to ctx->stream (a pool that reuses a block only for later work on the same
 * stream, or cudaFree, which synchronizes).
 */
#ifndef GQP_GPU_UTIL_CUH
#define GQP_GPU_UTIL_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdarg.h>

#include "primitives/primitives.h"

/* Threads per block of every hand-written kernel. */
#define GQP_BLOCK 256
/* Upper bound on the grid of the grid-stride kernels. TUNING: 8192 blocks of
 * 256 threads keep all 132 SMs of an H100 busy (about 62 resident blocks per
 * SM worth of rows per sweep); not measured yet. */
#define GQP_MAX_GRID 8192

/* Records err (if it is not cudaSuccess) with file and line into ctx->err.
 * Returns 0 when err == cudaSuccess, -1 otherwise. Clears the (non-sticky)
 * last-error state so that a later check does not report it twice. */
static inline int prim_gpu_check(PrimCtx *ctx, cudaError_t err, const char *file, int line) {
    if (err == cudaSuccess) return 0;
    (void)cudaGetLastError();
    snprintf(ctx->err, sizeof ctx->err, "Device Error: %s (%s:%d)", cudaGetErrorString(err), file,
             line);
    return -1;
}

/* Check a CUDA call; on failure record it and return -1 from the caller. */
#define GQP_CUDA_TRY(ctx, call)                                                                    \
    do {                                                                                           \
        if (prim_gpu_check((ctx), (call), __FILE__, __LINE__) != 0) return -1;                     \
    } while (0)

/* The calling thread's count of kernel launches and host waits
 * (runtime.cu; prim_gpu_host_counters reads them). */
void prim_gpu_count_launch(void);
cudaError_t prim_gpu_timed_sync(cudaStream_t st);

/* Check the kernel launch just issued (configuration and launch errors),
 * counting it for EXPLAIN ANALYZE. */
#define GQP_LAUNCH_TRY(ctx)                                                                        \
    do {                                                                                           \
        prim_gpu_count_launch();                                                                   \
        GQP_CUDA_TRY(ctx, cudaGetLastError());                                                     \
    } while (0)

/* Writes "Primitive Error: " and a printf-style message into ctx->err and
 * returns -1 (argument and contract errors, not CUDA errors). */
static inline int prim_gpu_fail(PrimCtx *ctx, const char *fmt, ...) {
    int k = snprintf(ctx->err, sizeof ctx->err, "Primitive Error: ");
    if (k < 0 || (size_t)k >= sizeof ctx->err) k = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err + k, sizeof ctx->err - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

/* The stream every GPU twin issues its work on. */
static inline cudaStream_t prim_gpu_stream(const PrimCtx *ctx) {
    return (cudaStream_t)ctx->stream;
}

/* Blocks for a grid-stride loop over n items (n >= 1): at most GQP_MAX_GRID. */
static inline unsigned prim_gpu_grid(int64_t n) {
    int64_t b = (n + GQP_BLOCK - 1) / GQP_BLOCK;
    if (b < 1) b = 1;
    return (unsigned)(b > GQP_MAX_GRID ? GQP_MAX_GRID : b);
}

/* Number of SMs of the current device, queried once per device (per
 * translation unit). Returns 0 or -1. */
static inline int prim_gpu_sm_count(PrimCtx *ctx, int *sms) {
    static int cached[64];
    int dev = 0;
    GQP_CUDA_TRY(ctx, cudaGetDevice(&dev));
    if (dev >= 0 && dev < 64 && cached[dev] > 0) {
        *sms = cached[dev];
        return 0;
    }
    GQP_CUDA_TRY(ctx, cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
    if (*sms < 1) *sms = 1;
    if (dev >= 0 && dev < 64) cached[dev] = *sms;
    return 0;
}

/* Index of the first item of this thread and the grid stride, both 64-bit. */
#define GQP_GRID_START ((int64_t)blockIdx.x * blockDim.x + threadIdx.x)
#define GQP_GRID_STRIDE ((int64_t)gridDim.x * blockDim.x)

/* A block of temporary (or output) device memory from ctx->alloc, given back
 * through ctx->free when the DevBuf is destroyed unless release()d. */
struct DevBuf {
    PrimCtx *ctx;
    void *p;
    size_t bytes;

    /* An empty buffer bound to ctx. */
    explicit DevBuf(PrimCtx *c) : ctx(c), p(nullptr), bytes(0) {
    }
    /* Frees the block, if any. */
    ~DevBuf() {
        if (p) ctx->free(ctx->ud, p);
    }
    DevBuf(const DevBuf &) = delete;
    DevBuf &operator=(const DevBuf &) = delete;

    /* Allocates n bytes (at least 16) through ctx->alloc. Returns 0, or -1
     * with "Device Error: out of device memory ..." in ctx->err. */
    int alloc(size_t n) {
        if (p) ctx->free(ctx->ud, p);
        p = nullptr;
        bytes = n < 16 ? 16 : n;
        p = ctx->alloc(ctx->ud, bytes);
        if (!p) {
            snprintf(ctx->err, sizeof ctx->err,
                     "Device Error: out of device memory allocating %zu bytes", bytes);
            return -1;
        }
        return 0;
    }
    /* Hands the block to the caller (who frees it through ctx->free). */
    void *release() {
        void *q = p;
        p = nullptr;
        return q;
    }
    /* Exchanges blocks with another DevBuf of the same ctx. */
    void swap(DevBuf &o) {
        void *q = p;
        p = o.p;
        o.p = q;
        size_t b = bytes;
        bytes = o.bytes;
        o.bytes = b;
    }
    template <typename T> T *as() const {
        return (T *)p;
    }
};

/* Checks the parts of ctx every GPU twin needs. Returns 0 or -1. */
static inline int prim_gpu_ctx_ok(PrimCtx *ctx) {
    if (!ctx) return -1;
    if (!ctx->alloc || !ctx->free) return prim_gpu_fail(ctx, "PrimCtx has no allocator");
    return 0;
}

/* The word a kernel sets to 1 to report a data error it found (an integer
 * overflow): ctx->status when the caller gave one (the caller reads it after
 * its next synchronization), else a fresh zeroed device word held by tmp.
 * Returns NULL (with ctx->err) on failure. */
static inline int *prim_gpu_status(PrimCtx *ctx, DevBuf &tmp) {
    if (ctx->status) return ctx->status;
    if (tmp.alloc(sizeof(int)) != 0) return nullptr;
    if (prim_gpu_check(ctx, cudaMemsetAsync(tmp.p, 0, sizeof(int), prim_gpu_stream(ctx)), __FILE__,
                       __LINE__) != 0)
        return nullptr;
    return tmp.as<int>();
}

/* After the kernels given prim_gpu_status's word: when that was tmp (the
 * caller gave no ctx->status), waits for the stream and returns -1 with
 * "<what>: integer overflow" if a kernel set it; otherwise returns 0 at
 * once (the caller checks its own word). */
static inline int prim_gpu_status_done(PrimCtx *ctx, DevBuf &tmp, const char *what) {
    if (ctx->status) return 0;
    int h = 0;
    GQP_CUDA_TRY(
        ctx, cudaMemcpyAsync(&h, tmp.p, sizeof h, cudaMemcpyDeviceToHost, prim_gpu_stream(ctx)));
    GQP_CUDA_TRY(ctx, prim_gpu_timed_sync(prim_gpu_stream(ctx)));
    if (h) return prim_gpu_fail(ctx, "%s: integer overflow", what);
    return 0;
}

/* ---- device-side value helpers shared by the kernels ---------------------- */

/* int64 from a double, truncating toward zero and saturating at the int64
 * range; NaN gives 0 (SQLite's CAST(x AS INTEGER); the CPU twin's map_f2i).
 * Never UB. */
static __device__ __forceinline__ int64_t prim_d2i(double f) {
    if (f >= 9223372036854775808.0) return INT64_MAX;
    if (f >= -9223372036854775808.0) return (int64_t)f;
    return f < 0 ? INT64_MIN : 0;
}

/* int32 from a double, as prim_d2i but saturating at the int32 range. */
static __device__ __forceinline__ int32_t prim_d2i32(double f) {
    if (f >= 2147483648.0) return INT32_MAX;
    if (f >= -2147483648.0) return (int32_t)f;
    return f < 0 ? INT32_MIN : 0;
}

/* Value i of an integer-typed column (U8, I32, I64) as int64; float columns
 * are converted with prim_d2i. */
static __device__ __forceinline__ int64_t prim_load_i(const void *d, int type, int64_t i) {
    switch (type) {
    case PRIM_U8:
        return ((const uint8_t *)d)[i];
    case PRIM_I32:
        return ((const int32_t *)d)[i];
    case PRIM_I64:
        return ((const int64_t *)d)[i];
    case PRIM_F32:
        return prim_d2i((double)((const float *)d)[i]);
    default:
        return prim_d2i(((const double *)d)[i]);
    }
}

/* Value i of any column as double. */
static __device__ __forceinline__ double prim_load_f(const void *d, int type, int64_t i) {
    switch (type) {
    case PRIM_U8:
        return (double)((const uint8_t *)d)[i];
    case PRIM_I32:
        return (double)((const int32_t *)d)[i];
    case PRIM_I64:
        return (double)((const int64_t *)d)[i];
    case PRIM_F32:
        return (double)((const float *)d)[i];
    default:
        return ((const double *)d)[i];
    }
}

/* Stores int64 v at position i of a column of type type (narrowing as a C
 * cast; floats get the converted value). */
static __device__ __forceinline__ void prim_store_i(void *d, int type, int64_t i, int64_t v) {
    switch (type) {
    case PRIM_U8:
        ((uint8_t *)d)[i] = (uint8_t)v;
        break;
    case PRIM_I32:
        ((int32_t *)d)[i] = (int32_t)v;
        break;
    case PRIM_I64:
        ((int64_t *)d)[i] = v;
        break;
    case PRIM_F32:
        ((float *)d)[i] = (float)v;
        break;
    default:
        ((double *)d)[i] = (double)v;
        break;
    }
}

/* Stores double v at position i of a column of type type (I32 / I64 get
 * the saturating truncation prim_d2i32 / prim_d2i, U8 the low byte of
 * prim_d2i). */
static __device__ __forceinline__ void prim_store_f(void *d, int type, int64_t i, double v) {
    switch (type) {
    case PRIM_I32:
        ((int32_t *)d)[i] = prim_d2i32(v);
        break;
    case PRIM_F32:
        ((float *)d)[i] = (float)v;
        break;
    case PRIM_F64:
        ((double *)d)[i] = v;
        break;
    default:
        prim_store_i(d, type, i, prim_d2i(v));
        break;
    }
}

static __device__ __forceinline__ int prim_is_float(int type) {
    return type == PRIM_F32 || type == PRIM_F64;
}

/* ---- helpers exported by one .cu for the others (C linkage) --------------- */

/* out[0..*count) = the indices i in 0..n-1 with flags[i] != 0, ascending
 * (cub::DeviceSelect::Flagged); out has capacity n. *count (host) is
 * synchronized from the device. n >= 1. Returns 0 or -1. */
extern "C" int prim_gpu_util_select_rows(PrimCtx *ctx, const uint8_t *d_flags, int64_t n,
                                         int64_t *d_out, int64_t *count);

#endif /* GQP_GPU_UTIL_CUH */
