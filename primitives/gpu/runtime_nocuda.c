/*
 * runtime_nocuda.c -- the device runtime of primitives.h in a build
 * without CUDA: nothing is available and every call fails cleanly.
 */
#include <stdio.h>

#include "primitives/primitives.h"

/* Write the "built without CUDA" message; returns -1. */
static int no_cuda(char *err, size_t cap) {
    if (err && cap) snprintf(err, cap, "Device Error: gqp was built without CUDA");
    return -1;
}

int prim_gpu_describe(char *buf, size_t cap) {
    snprintf(buf, cap, "no CUDA (built without CUDA)");
    return -1;
}
void *prim_gpu_stream_create(void) {
    return NULL;
}
void prim_gpu_stream_destroy(void *stream) {
    (void)stream;
}
void *prim_gpu_malloc(size_t bytes, void *stream) {
    (void)bytes;
    (void)stream;
    return NULL;
}
void prim_gpu_free(void *p, void *stream) {
    (void)p;
    (void)stream;
}
int prim_gpu_copy(void *dst, const void *src, size_t bytes, PrimCopyKind kind, void *stream,
                  char *err, size_t cap) {
    (void)dst, (void)src, (void)bytes, (void)kind, (void)stream;
    return no_cuda(err, cap);
}
int prim_gpu_memset(void *dst, int value, size_t bytes, void *stream, char *err, size_t cap) {
    (void)dst, (void)value, (void)bytes, (void)stream;
    return no_cuda(err, cap);
}
int prim_gpu_sync(void *stream, char *err, size_t cap) {
    (void)stream;
    return no_cuda(err, cap);
}
void prim_gpu_host_counters(int64_t *launches, int64_t *waits, double *wait_ms) {
    if (launches) *launches = 0;
    if (waits) *waits = 0;
    if (wait_ms) *wait_ms = 0;
}
int prim_gpu_host_register(void *p, size_t bytes, char *err, size_t cap) {
    (void)p, (void)bytes;
    return no_cuda(err, cap);
}
int prim_gpu_host_device_ptr(const void *base, size_t offset, void **dev, char *err, size_t cap) {
    (void)base, (void)offset;
    *dev = NULL;
    return no_cuda(err, cap);
}
void prim_gpu_host_unregister(void *p) {
    (void)p;
}
void *prim_gpu_event_record(void *stream) {
    (void)stream;
    return NULL;
}
float prim_gpu_event_ms(void *start, void *stop) {
    (void)start, (void)stop;
    return -1;
}
void prim_gpu_event_destroy(void *ev) {
    (void)ev;
}
int prim_gpu_device_sync(char *err, size_t cap) {
    return no_cuda(err, cap);
}
size_t prim_gpu_pool_peak(int reset) {
    (void)reset;
    return 0;
}
int prim_gpu_mem_info(size_t *free_bytes, size_t *total_bytes) {
    *free_bytes = *total_bytes = 0;
    return -1;
}
int prim_gpu_select(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs, int64_t n,
                    int64_t *rowids, int64_t *count) {
    (void)prog, (void)inputs, (void)n, (void)rowids;
    *count = 0;
    return no_cuda(ctx->err, sizeof ctx->err);
}
int prim_gpu_bandwidth(size_t bytes, double *d2d, double *h2d, double *d2h, char *err, size_t cap) {
    (void)bytes;
    *d2d = *h2d = *d2h = 0;
    return no_cuda(err, cap);
}
void *prim_gpu_pinned_alloc(size_t bytes) {
    (void)bytes;
    return NULL;
}
void *prim_gpu_mapped_alloc(size_t bytes, void **dev) {
    (void)bytes;
    *dev = NULL;
    return NULL;
}

void prim_gpu_pinned_free(void *p) {
    (void)p;
}
void *prim_gpu_event_mark(void *stream) {
    (void)stream;
    return NULL;
}
int prim_gpu_stream_wait(void *stream, void *ev, char *err, size_t cap) {
    (void)stream, (void)ev, (void)err, (void)cap;
    return 0;
}
