/*
 * gpu_nocuda.c -- the GPU twins in a build without CUDA: no device is ever
 * available and every GPU primitive fails with a Device Error, so the
 * executor keeps every node on the CPU twins.
 */
#include "primitives/primitives.h"

#include <stdio.h>

/* Writes the "built without CUDA" message into ctx->err (if ctx is not NULL)
 * and returns -1. */
static int no_cuda(PrimCtx *ctx) {
    if (ctx) snprintf(ctx->err, sizeof ctx->err, "Device Error: gqp was built without CUDA");
    return -1;
}

/* Returns 0: without CUDA there is never a usable device. */
int prim_gpu_available(void) {
    return 0;
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_map(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs, int64_t n,
                 PrimVec *out) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_scan(PrimCtx *ctx, const PrimVec *in, int64_t n, int64_t *out, int64_t *total) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_scatter(PrimCtx *ctx, const PrimVec *src, const uint8_t *flags, const int64_t *idx,
                     int64_t n, PrimVec *dst) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_gather(PrimCtx *ctx, const PrimVec *src, const int64_t *idx, int64_t n, PrimVec *dst) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_sort(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys, int64_t n,
                  int64_t *perm) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_sort_range(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys,
                        int64_t n, int64_t offset, int64_t limit, int64_t *perm, int64_t *nout) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_segments(PrimCtx *ctx, const PrimVec *keys, int nkeys, int64_t n, int64_t *starts,
                      int64_t *nseg) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_segrank(PrimCtx *ctx, const int64_t *starts, int64_t nseg, int64_t n, int64_t *out) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_segreduce(PrimCtx *ctx, PrimAgg agg, const PrimVec *val, const int64_t *starts,
                       int64_t nseg, int64_t n, PrimVec *out) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_segreduce_ex(PrimCtx *ctx, PrimAgg agg, int nocheck, const PrimVec *val,
                          const int64_t *starts, int64_t nseg, int64_t n, PrimVec *out) {
    return no_cuda(ctx);
}

/* Always 0: no device. */
size_t prim_gpu_segreduce_scratch(int64_t n) {
    (void)n;
    return 0;
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_join(PrimCtx *ctx, const PrimVec *lkey, int64_t nl, const PrimVec *rkey, int64_t nr,
                  PrimPairs *out) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_cross(PrimCtx *ctx, int64_t nl, int64_t nr, PrimPairs *out) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_keymap(PrimCtx *ctx, const PrimVec *key, const int64_t *rows, int64_t n, int64_t kmin,
                    int64_t range, int64_t *out) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_keymap_where(PrimCtx *ctx, const PrimVec *key, const uint8_t *flags, int64_t n,
                          int64_t kmin, int64_t range, int64_t *out) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_denseagg(PrimCtx *ctx, const PrimDenseAgg *spec, const PrimVec *in, int64_t n,
                      PrimVec *out) {
    return no_cuda(ctx);
}

/* Always -1 with "built without CUDA" in ctx->err. */
int prim_gpu_likedict(PrimCtx *ctx, const char *bytes, const int64_t *offsets, int64_t n,
                      const char *pattern, int negated, uint8_t *out) {
    return no_cuda(ctx);
}
