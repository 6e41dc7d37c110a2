/*
 * select.cu -- GPU twin of the fused filter (prim_cpu_select): the map
 * kernel writes one flag byte per row, then cub::DeviceSelect::Flagged
 * compacts the row ids; no offsets array is materialized.
 */
#include "primitives/gpu/gpu_util.cuh"

extern "C" int prim_gpu_select(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs,
                               int64_t n, int64_t *rowids, int64_t *count) {
    *count = 0;
    if (!prog->as_filter) return prim_gpu_fail(ctx, "select needs a filter program");
    if (n == 0) return 0;
    DevBuf flags(ctx);
    if (flags.alloc((size_t)n) != 0) return -1;
    PrimVec out = {PRIM_U8, n, flags.as<uint8_t>(), NULL};
    if (prim_gpu_map(ctx, prog, inputs, n, &out) != 0) return -1;
    return prim_gpu_util_select_rows(ctx, flags.as<uint8_t>(), n, rowids, count);
}
