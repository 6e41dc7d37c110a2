/*
 * runtime.cu -- the small slice of the CUDA runtime the executor uses
 * (streams, the stream-ordered memory pool, copies, page-locking, events),
 * behind the C declarations of primitives/primitives.h.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "primitives/primitives.h"

/* Write "Device Error: <msg> (<what>)" into err when e is an error.
 * Returns 0 on cudaSuccess, else -1. */
static int rt_check(cudaError_t e, const char *what, char *err, size_t cap) {
    if (e == cudaSuccess) return 0;
    (void)cudaGetLastError();
    if (err && cap) snprintf(err, cap, "Device Error: %s (%s)", cudaGetErrorString(e), what);
    return -1;
}

extern "C" int prim_gpu_describe(char *buf, size_t cap) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(buf, cap, "no CUDA device");
        return -1;
    }
    snprintf(buf, cap, "%s, %.1f GiB, sm_%d%d, %d SMs", p.name,
             (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), p.major, p.minor,
             p.multiProcessorCount);
    return 0;
}

extern "C" void *prim_gpu_stream_create(void) {
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return (void *)s;
}

extern "C" void prim_gpu_stream_destroy(void *stream) {
    if (stream) (void)cudaStreamDestroy((cudaStream_t)stream);
}

/* Make the default pool keep freed memory reserved (no release at sync
 * points), so repeated queries reuse it; done once per process (handles on
 * several threads may get here together: the flag is claimed atomically,
 * and setting the attribute twice would be harmless anyway). */
static void pool_init(void) {
    static int done = 0;
    if (__atomic_load_n(&done, __ATOMIC_ACQUIRE) || __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return;
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess) {
        uint64_t threshold = UINT64_MAX;
        (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    }
    (void)cudaGetLastError();
}

extern "C" void *prim_gpu_malloc(size_t bytes, void *stream) {
    pool_init();
    void *p = NULL;
    if (cudaMallocAsync(&p, bytes ? bytes : 256, (cudaStream_t)stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

extern "C" void prim_gpu_free(void *p, void *stream) {
    if (p) (void)cudaFreeAsync(p, (cudaStream_t)stream);
}

extern "C" int prim_gpu_copy(void *dst, const void *src, size_t bytes, PrimCopyKind kind,
                             void *stream, char *err, size_t cap) {
    if (bytes == 0) return 0;
    cudaMemcpyKind k = kind == PRIM_H2D   ? cudaMemcpyHostToDevice
                       : kind == PRIM_D2H ? cudaMemcpyDeviceToHost
                                          : cudaMemcpyDeviceToDevice;
    return rt_check(cudaMemcpyAsync(dst, src, bytes, k, (cudaStream_t)stream), "cudaMemcpyAsync",
                    err, cap);
}

/* Fill bytes of device memory dst with value, asynchronously on stream. */
extern "C" int prim_gpu_memset(void *dst, int value, size_t bytes, void *stream, char *err,
                               size_t cap) {
    if (bytes == 0) return 0;
    return rt_check(cudaMemsetAsync(dst, value, bytes, (cudaStream_t)stream), "cudaMemsetAsync",
                    err, cap);
}

/* The calling thread's kernel launches and host waits (a run's nodes are
 * issued by one thread; EXPLAIN ANALYZE takes differences around each). */
static thread_local int64_t t_launches, t_waits;
static thread_local double t_wait_ms;

void prim_gpu_count_launch(void) {
    t_launches++;
}

static double host_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Counts one host wait that began at t0 (host_ms) and passes rc on. */
static cudaError_t waited(double t0, cudaError_t rc) {
    t_wait_ms += host_ms() - t0;
    t_waits++;
    return rc;
}

cudaError_t prim_gpu_timed_sync(cudaStream_t st) {
    const double t0 = host_ms();
    return waited(t0, cudaStreamSynchronize(st));
}

extern "C" void prim_gpu_host_counters(int64_t *launches, int64_t *waits, double *wait_ms) {
    if (launches) *launches = t_launches;
    if (waits) *waits = t_waits;
    if (wait_ms) *wait_ms = t_wait_ms;
}

extern "C" int prim_gpu_sync(void *stream, char *err, size_t cap) {
    return rt_check(prim_gpu_timed_sync((cudaStream_t)stream), "cudaStreamSynchronize", err, cap);
}

extern "C" int prim_gpu_host_register(void *p, size_t bytes, char *err, size_t cap) {
    if (!p || bytes == 0) return 0;
    /* mapped: a kernel may also read the range in place (prim_gpu_host_device_ptr) */
    return rt_check(cudaHostRegister(p, bytes, cudaHostRegisterMapped), "cudaHostRegister", err,
                    cap);
}

extern "C" int prim_gpu_host_device_ptr(const void *base, size_t offset, void **dev, char *err,
                                        size_t cap) {
    void *d = NULL;
    *dev = NULL;
    if (rt_check(cudaHostGetDevicePointer(&d, (void *)base, 0), "cudaHostGetDevicePointer", err,
                 cap) != 0)
        return -1;
    *dev = (char *)d + offset;
    return 0;
}

extern "C" void prim_gpu_host_unregister(void *p) {
    if (p) (void)cudaHostUnregister(p);
    (void)cudaGetLastError();
}

/* A new event with flags, recorded on stream; NULL on failure. */
static void *event_new(void *stream, unsigned flags) {
    cudaEvent_t e;
    if (cudaEventCreateWithFlags(&e, flags) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (cudaEventRecord(e, (cudaStream_t)stream) != cudaSuccess) {
        (void)cudaGetLastError();
        (void)cudaEventDestroy(e);
        return NULL;
    }
    return (void *)e;
}

extern "C" void *prim_gpu_event_record(void *stream) {
    return event_new(stream, cudaEventDefault);
}

extern "C" float prim_gpu_event_ms(void *start, void *stop) {
    float ms = -1;
    if (!start || !stop) return -1;
    if (cudaEventSynchronize((cudaEvent_t)stop) != cudaSuccess ||
        cudaEventElapsedTime(&ms, (cudaEvent_t)start, (cudaEvent_t)stop) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return ms;
}

extern "C" void prim_gpu_event_destroy(void *ev) {
    if (ev) (void)cudaEventDestroy((cudaEvent_t)ev);
}

extern "C" int prim_gpu_device_sync(char *err, size_t cap) {
    const double t0 = host_ms();
    return rt_check(waited(t0, cudaDeviceSynchronize()), "cudaDeviceSynchronize", err, cap);
}

extern "C" size_t prim_gpu_pool_peak(int reset) {
    cudaMemPool_t pool;
    uint64_t v = 0;
    if (cudaDeviceGetDefaultMemPool(&pool, 0) != cudaSuccess ||
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &v) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (reset) {
        uint64_t zero = 0;
        (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero);
        (void)cudaGetLastError();
    }
    return (size_t)v;
}

extern "C" int prim_gpu_mem_info(size_t *free_bytes, size_t *total_bytes) {
    size_t fr = 0, total = 0;
    *free_bytes = *total_bytes = 0;
    if (cudaMemGetInfo(&fr, &total) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    /* the default pool keeps freed blocks reserved (pool_init): those are
     * not free to the driver but are to the next cudaMallocAsync */
    cudaMemPool_t pool;
    uint64_t reserved = 0, used = 0;
    if (cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess &&
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) ==
            cudaSuccess &&
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess &&
        reserved > used)
        fr += (size_t)(reserved - used);
    (void)cudaGetLastError();
    *free_bytes = fr;
    *total_bytes = total;
    return 0;
}

/* Median of 5 timed copies (after one warm-up) of bytes from src to dst on
 * stream s; returns milliseconds or -1. */
static float time_copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind k, cudaStream_t s) {
    float t[5];
    cudaEvent_t a, b;
    if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) return -1;
    if (cudaMemcpyAsync(dst, src, bytes, k, s) != cudaSuccess) return -1;
    for (int i = 0; i < 5; i++) {
        cudaEventRecord(a, s);
        cudaMemcpyAsync(dst, src, bytes, k, s);
        cudaEventRecord(b, s);
        if (cudaEventSynchronize(b) != cudaSuccess) return -1;
        cudaEventElapsedTime(&t[i], a, b);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (t[j] < t[i]) {
                float x = t[i];
                t[i] = t[j];
                t[j] = x;
            }
    return t[2];
}

extern "C" int prim_gpu_bandwidth(size_t bytes, double *d2d, double *h2d, double *d2h, char *err,
                                  size_t cap) {
    void *da = NULL, *db = NULL, *h = NULL;
    cudaStream_t s;
    if (rt_check(cudaStreamCreate(&s), "cudaStreamCreate", err, cap)) return -1;
    int rc = -1;
    if (rt_check(cudaMalloc(&da, bytes), "cudaMalloc", err, cap) ||
        rt_check(cudaMalloc(&db, bytes), "cudaMalloc", err, cap) ||
        rt_check(cudaMallocHost(&h, bytes), "cudaMallocHost", err, cap))
        goto done;
    cudaMemsetAsync(da, 1, bytes, s);
    {
        float t_dd = time_copy(db, da, bytes, cudaMemcpyDeviceToDevice, s);
        float t_hd = time_copy(da, h, bytes, cudaMemcpyHostToDevice, s);
        float t_dh = time_copy(h, da, bytes, cudaMemcpyDeviceToHost, s);
        if (t_dd <= 0 || t_hd <= 0 || t_dh <= 0) {
            rt_check(cudaGetLastError(), "timing copies", err, cap);
            goto done;
        }
        *d2d = 2.0 * (double)bytes / (t_dd * 1e6);
        *h2d = (double)bytes / (t_hd * 1e6);
        *d2h = (double)bytes / (t_dh * 1e6);
        rc = 0;
    }
done:
    if (da) cudaFree(da);
    if (db) cudaFree(db);
    if (h) cudaFreeHost(h);
    cudaStreamDestroy(s);
    return rc;
}

extern "C" void *prim_gpu_pinned_alloc(size_t bytes) {
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes ? bytes : 64, cudaHostAllocDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

extern "C" void *prim_gpu_mapped_alloc(size_t bytes, void **dev) {
    void *p = NULL;
    *dev = NULL;
    if (cudaHostAlloc(&p, bytes ? bytes : 64, cudaHostAllocMapped) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (cudaHostGetDevicePointer(dev, p, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        (void)cudaFreeHost(p);
        *dev = NULL;
        return NULL;
    }
    memset(p, 0, bytes ? bytes : 64);
    return p;
}

extern "C" void prim_gpu_pinned_free(void *p) {
    if (p) (void)cudaFreeHost(p);
}

extern "C" void *prim_gpu_event_mark(void *stream) {
    return event_new(stream, cudaEventDisableTiming);
}

extern "C" int prim_gpu_stream_wait(void *stream, void *ev, char *err, size_t cap) {
    if (!ev) return 0;
    return rt_check(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)ev, 0),
                    "cudaStreamWaitEvent", err, cap);
}
