/*
 * direct_nocuda.c -- the benchmark baselines of primitives/gpu_direct.h in a
 * build without CUDA: every call fails with "built without CUDA".
 */
#include <stdio.h>

#include "primitives/gpu_direct.h"

/* Writes the "built without CUDA" message into err (cap bytes) and returns
 * -1. */
static float no_cuda(char *err, size_t cap) {
    if (err && cap) snprintf(err, cap, "Device Error: gqp was built without CUDA");
    return -1;
}

/* Always -1 with "built without CUDA" in err. */
float prim_direct_map(const int32_t *d_a, const int32_t *d_b, int64_t n, uint8_t *d_flags,
                      void *stream, int reps, char *err, size_t cap) {
    return no_cuda(err, cap);
}

/* Always -1 with "built without CUDA" in err. */
float prim_direct_scan(const uint8_t *d_flags, int64_t n, int64_t *d_out, int64_t *total,
                       void *stream, int reps, char *err, size_t cap) {
    return no_cuda(err, cap);
}

/* Always -1 with "built without CUDA" in err. */
float prim_direct_select(const int32_t *d_a, const int32_t *d_b, int64_t n, int64_t *d_rowids,
                         int64_t *count, void *stream, int reps, char *err, size_t cap) {
    return no_cuda(err, cap);
}

/* Always -1 with "built without CUDA" in err. */
float prim_direct_sort(const int32_t *d_keys, int64_t n, int64_t *d_perm, void *stream, int reps,
                       char *err, size_t cap) {
    return no_cuda(err, cap);
}

/* Always -1 with "built without CUDA" in err. */
float prim_direct_gather(const int32_t *d_src, const int64_t *d_idx, int64_t n, int32_t *d_dst,
                         void *stream, int reps, char *err, size_t cap) {
    return no_cuda(err, cap);
}

/* Always -1 with "built without CUDA" in err. */
float prim_direct_sum(const double *d_val, int64_t n, double *d_sum, void *stream, int reps,
                      char *err, size_t cap) {
    return no_cuda(err, cap);
}

/* Always -1 with "built without CUDA" in err. */
float prim_direct_segsum(const double *d_val, const int64_t *d_offsets, int64_t nseg, double *d_out,
                         void *stream, int reps, char *err, size_t cap) {
    return no_cuda(err, cap);
}
