/*
 * device.cu -- GPU twins without CUB: device detection, map (the register
 * program in one kernel), scatter, gather and cross. Contracts are the CPU
 * twins' in primitives/primitives.h, with device pointers; all work is issued
 * on ctx->stream and nothing here synchronizes the host.
 */
#include <stdint.h>

#include "primitives/gpu/gpu_util.cuh"

/* ------------------------------------------------------------ available -- */

/* Returns 1 if at least one CUDA device is present and the runtime can talk
 * to it, 0 otherwise (no driver, no device, or any CUDA error). Never fails. */
extern "C" int prim_gpu_available(void) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count > 0 ? 1 : 0;
}

/* ------------------------------------------------------------------ map -- */

/* Kernel arguments of map_kernel; every pointer is device memory. */
struct MapArgs {
    const PrimInstr *code; /* ninstr instructions, LOOKUP tables patched to device copies */
    const PrimVec *inputs; /* ninputs column descriptors (device data pointers) */
    int ninstr;
    int use_shared; /* 1: stage code in dynamic shared memory */
    int result;
    int result_t;
    int as_filter;
    int out_type;
    void *out;
    uint8_t *out_valid;
    int64_t n;
};

/* Register access: values are int64 bit patterns (doubles via bit casts),
 * NULL flags are one bit each of a 64-bit mask (PRIM_MAX_REGS == 64). */
#define RI(k) (r[k])
#define RF(k) (__longlong_as_double(r[k]))
#define ISNUL(k) ((nm >> (k)) & 1ull)
#define SETI(k, v)                                                                                 \
    do {                                                                                           \
        r[k] = (v);                                                                                \
        nm &= ~(1ull << (k));                                                                      \
    } while (0)
#define SETF(k, v)                                                                                 \
    do {                                                                                           \
        r[k] = __double_as_longlong(v);                                                            \
        nm &= ~(1ull << (k));                                                                      \
    } while (0)
#define SETNULL(k)                                                                                 \
    do {                                                                                           \
        r[k] = 0;                                                                                  \
        nm |= 1ull << (k);                                                                         \
    } while (0)

/* Truth of register k in operand type t (nonzero = true); k must be non-NULL. */
#define TRUTHY(k, t) ((t) == PRIM_REG_F ? (RF(k) != 0.0) : (RI(k) != 0))

/* Evaluates the register program once per row (grid-stride over rows), with
 * registers in a thread-local array and NULL flags in a 64-bit mask: nothing
 * but the result reaches global memory. The program was validated on the host
 * (registers in range, every read register written before). Semantics are
 * those of primitives.h and of the CPU twin (primitives/cpu/map.c): wrapping
 * int64 +,-,*, unary -; DIV/MOD by 0 give NULL; x / -1 is the wrapping
 * negation (INT64_MIN / -1 = INT64_MIN) and x % -1 is 0, so no UB; float MOD
 * works on saturating-truncated int64; F -> I saturates, NaN -> 0;
 * comparisons with NULL give NULL; AND/OR three-valued. The result is
 * stored as out->type: a U8 output (filter or not) gets the truth value
 * (non-NULL and != 0); I32 from a float saturates; NULL stores 0.
 * Float arithmetic uses the _rn intrinsics so that nvcc never contracts it
 * into FMA (the CPU twin rounds every operation). */
__global__ void map_kernel(MapArgs a) {
    extern __shared__ int64_t map_smem[];
    const PrimInstr *code = a.code;
    if (a.use_shared) {
        PrimInstr *s = (PrimInstr *)map_smem;
        for (int k = threadIdx.x; k < a.ninstr; k += blockDim.x)
            s[k] = a.code[k];
        __syncthreads();
        code = s;
    }
    for (int64_t row = GQP_GRID_START; row < a.n; row += GQP_GRID_STRIDE) {
        int64_t r[PRIM_MAX_REGS];
        uint64_t nm = ~0ull;
        for (int k = 0; k < a.ninstr; ++k) {
            const PrimInstr in = code[k];
            const int d = in.dst, x = in.a, y = in.b;
            switch (in.op) {
            case POP_COL: {
                const PrimVec c = a.inputs[in.ival];
                if (c.valid && !c.valid[row]) {
                    SETNULL(d);
                } else if (in.t == PRIM_REG_F) {
                    SETF(d, prim_load_f(c.data, c.type, row));
                } else {
                    SETI(d, prim_load_i(c.data, c.type, row));
                }
                break;
            }
            case POP_CONST:
                if (in.t == PRIM_REG_F)
                    SETF(d, in.fval);
                else
                    SETI(d, in.ival);
                break;
            case POP_NULL:
                SETNULL(d);
                break;
            case POP_ADD:
            case POP_SUB:
            case POP_MUL:
            case POP_DIV:
            case POP_MOD: {
                if (ISNUL(x) || ISNUL(y)) {
                    SETNULL(d);
                    break;
                }
                if (in.t == PRIM_REG_F) {
                    const double u = RF(x), v = RF(y);
                    if (in.op == POP_ADD) {
                        SETF(d, __dadd_rn(u, v));
                    } else if (in.op == POP_SUB) {
                        SETF(d, __dsub_rn(u, v));
                    } else if (in.op == POP_MUL) {
                        SETF(d, __dmul_rn(u, v));
                    } else if (in.op == POP_DIV) {
                        if (v == 0.0)
                            SETNULL(d);
                        else
                            SETF(d, __ddiv_rn(u, v));
                    } else {
                        const int64_t iu = prim_d2i(u), iv = prim_d2i(v);
                        if (iv == 0)
                            SETNULL(d);
                        else
                            SETF(d, (double)(iv == -1 ? 0 : iu % iv));
                    }
                } else {
                    const int64_t u = RI(x), v = RI(y);
                    if (in.op == POP_ADD) {
                        SETI(d, (int64_t)((uint64_t)u + (uint64_t)v));
                    } else if (in.op == POP_SUB) {
                        SETI(d, (int64_t)((uint64_t)u - (uint64_t)v));
                    } else if (in.op == POP_MUL) {
                        SETI(d, (int64_t)((uint64_t)u * (uint64_t)v));
                    } else if (in.op == POP_DIV) {
                        if (v == 0)
                            SETNULL(d);
                        else
                            SETI(d, v == -1 ? (int64_t)(0ull - (uint64_t)u) : u / v);
                    } else {
                        if (v == 0)
                            SETNULL(d);
                        else
                            SETI(d, v == -1 ? 0 : u % v);
                    }
                }
                break;
            }
            case POP_NEG:
                if (ISNUL(x))
                    SETNULL(d);
                else if (in.t == PRIM_REG_F)
                    SETF(d, -RF(x));
                else
                    SETI(d, (int64_t)(0ull - (uint64_t)RI(x)));
                break;
            case POP_I2F:
                if (ISNUL(x))
                    SETNULL(d);
                else
                    SETF(d, (double)RI(x));
                break;
            case POP_F2I:
                if (ISNUL(x))
                    SETNULL(d);
                else
                    SETI(d, prim_d2i(RF(x)));
                break;
            case POP_EQ:
            case POP_NE:
            case POP_LT:
            case POP_LE:
            case POP_GT:
            case POP_GE: {
                if (ISNUL(x) || ISNUL(y)) {
                    SETNULL(d);
                    break;
                }
                int res;
                if (in.t == PRIM_REG_F) {
                    const double u = RF(x), v = RF(y);
                    res = in.op == POP_EQ   ? u == v
                          : in.op == POP_NE ? u != v
                          : in.op == POP_LT ? u < v
                          : in.op == POP_LE ? u <= v
                          : in.op == POP_GT ? u > v
                                            : u >= v;
                } else {
                    const int64_t u = RI(x), v = RI(y);
                    res = in.op == POP_EQ   ? u == v
                          : in.op == POP_NE ? u != v
                          : in.op == POP_LT ? u < v
                          : in.op == POP_LE ? u <= v
                          : in.op == POP_GT ? u > v
                                            : u >= v;
                }
                SETI(d, res);
                break;
            }
            case POP_AND:
            case POP_OR: {
                const int nx = (int)ISNUL(x), ny = (int)ISNUL(y);
                const int tx = !nx && TRUTHY(x, in.t), ty = !ny && TRUTHY(y, in.t);
                const int fx = !nx && !tx, fy = !ny && !ty;
                if (in.op == POP_AND) {
                    if (fx || fy)
                        SETI(d, 0);
                    else if (nx || ny)
                        SETNULL(d);
                    else
                        SETI(d, 1);
                } else {
                    if (tx || ty)
                        SETI(d, 1);
                    else if (nx || ny)
                        SETNULL(d);
                    else
                        SETI(d, 0);
                }
                break;
            }
            case POP_NOT:
            case POP_TRUTH:
                if (ISNUL(x))
                    SETNULL(d);
                else
                    SETI(d, (int64_t)(in.op == POP_TRUTH ? TRUTHY(x, in.t) : !TRUTHY(x, in.t)));
                break;
            case POP_ISNULL:
                SETI(d, (int64_t)ISNUL(x));
                break;
            case POP_NOTNULL:
                SETI(d, (int64_t)!ISNUL(x));
                break;
            case POP_CASE: {
                const int z = in.c;
                const int take = !ISNUL(x) && RI(x) != 0;
                const int s = take ? y : z;
                const int64_t v = r[s];
                const uint64_t sn = (nm >> s) & 1ull;
                r[d] = v;
                nm = (nm & ~(1ull << d)) | (sn << d);
                break;
            }
            case POP_LOOKUP: {
                if (ISNUL(x)) {
                    SETNULL(d);
                    break;
                }
                const int64_t i = RI(x);
                if (i < 0 || i >= in.table_n) {
                    SETNULL(d);
                    break;
                }
                const int64_t v = in.table[i];
                if (v == INT64_MIN)
                    SETNULL(d);
                else
                    SETI(d, v);
                break;
            }
            case POP_COALESCE: {
                const int s = ISNUL(x) ? y : x;
                const int64_t v = r[s];
                const uint64_t sn = (nm >> s) & 1ull;
                r[d] = v;
                nm = (nm & ~(1ull << d)) | (sn << d);
                break;
            }
            default:
                SETNULL(d);
                break;
            }
        }
        const int res = a.result;
        const int isnull = (int)ISNUL(res);
        if (a.as_filter || a.out_type == PRIM_U8) {
            ((uint8_t *)a.out)[row] = (uint8_t)(!isnull && TRUTHY(res, a.result_t));
            if (a.out_valid) a.out_valid[row] = (uint8_t)(a.as_filter || !isnull);
        } else {
            if (isnull)
                prim_store_i(a.out, a.out_type, row, 0);
            else if (a.result_t == PRIM_REG_F)
                prim_store_f(a.out, a.out_type, row, RF(res));
            else
                prim_store_i(a.out, a.out_type, row, RI(res));
            if (a.out_valid) a.out_valid[row] = (uint8_t)!isnull;
        }
    }
}

#undef RI
#undef RF
#undef ISNUL
#undef SETI
#undef SETF
#undef SETNULL
#undef TRUTHY

/* Operand registers an opcode reads: bit 0 = a, bit 1 = b, bit 2 = c;
 * -1 for an unknown opcode. */
static int map_reads(int op) {
    switch (op) {
    case POP_COL:
    case POP_CONST:
    case POP_NULL:
        return 0;
    case POP_NEG:
    case POP_I2F:
    case POP_F2I:
    case POP_NOT:
    case POP_ISNULL:
    case POP_NOTNULL:
    case POP_TRUTH:
    case POP_LOOKUP:
        return 1;
    case POP_ADD:
    case POP_SUB:
    case POP_MUL:
    case POP_DIV:
    case POP_MOD:
    case POP_EQ:
    case POP_NE:
    case POP_LT:
    case POP_LE:
    case POP_GT:
    case POP_GE:
    case POP_AND:
    case POP_OR:
    case POP_COALESCE:
        return 3;
    case POP_CASE:
        return 7;
    default:
        return -1;
    }
}

/* Checks that prog can run without out-of-bounds access: register numbers in
 * 0..nregs-1 (nregs <= PRIM_MAX_REGS), every register read after it was
 * written, the result written, COL inputs in range with data, LOOKUP tables
 * present. Returns 0 or -1 with a message in ctx->err. */
static int map_validate(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs, int64_t n) {
    if (prog->nregs < 1 || prog->nregs > PRIM_MAX_REGS)
        return prim_gpu_fail(ctx, "map: %d registers (1..%d allowed)", prog->nregs, PRIM_MAX_REGS);
    if (prog->ninstr < 0 || (prog->ninstr > 0 && !prog->code))
        return prim_gpu_fail(ctx, "map: bad program (%d instructions)", prog->ninstr);
    if (prog->ninputs < 0 || (prog->ninputs > 0 && !inputs))
        return prim_gpu_fail(ctx, "map: bad input list (%d inputs)", prog->ninputs);
    if (prog->result < 0 || prog->result >= prog->nregs)
        return prim_gpu_fail(ctx, "map: result register %d out of range", prog->result);
    uint64_t written = 0;
    for (int k = 0; k < prog->ninstr; ++k) {
        const PrimInstr *in = &prog->code[k];
        const int reads = map_reads(in->op);
        if (reads < 0) return prim_gpu_fail(ctx, "map: unknown opcode %d at %d", (int)in->op, k);
        const int regs[3] = {in->a, in->b, in->c};
        for (int q = 0; q < 3; ++q) {
            if (!(reads & (1 << q))) continue;
            if (regs[q] < 0 || regs[q] >= prog->nregs || !((written >> regs[q]) & 1ull))
                return prim_gpu_fail(ctx, "map: instruction %d reads unset register %d", k,
                                     regs[q]);
        }
        if (in->dst < 0 || in->dst >= prog->nregs)
            return prim_gpu_fail(ctx, "map: instruction %d writes register %d out of range", k,
                                 in->dst);
        written |= 1ull << in->dst;
        if (in->op == POP_COL) {
            if (in->ival < 0 || in->ival >= prog->ninputs)
                return prim_gpu_fail(ctx, "map: column %lld out of range", (long long)in->ival);
            const PrimVec *c = &inputs[in->ival];
            if ((n > 0 && !c->data) || (int)c->type < PRIM_U8 || (int)c->type > PRIM_F64)
                return prim_gpu_fail(ctx, "map: input column %lld has no data",
                                     (long long)in->ival);
        }
        if (in->op == POP_LOOKUP && in->table_n > 0 && !in->table)
            return prim_gpu_fail(ctx, "map: LOOKUP at %d has no table", k);
    }
    if (!((written >> prog->result) & 1ull))
        return prim_gpu_fail(ctx, "map: result register %d never written", prog->result);
    return 0;
}

/* Rounds n up to a multiple of 16 bytes. */
static size_t align16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

/* GPU twin of prim_cpu_map: evaluates prog over rows 0..n-1 of the device
 * columns inputs[0..ninputs) into out (device, n values of out->type; validity
 * when out->valid is not NULL, NULL results written as 0). The instructions,
 * the column descriptors and every LOOKUP table are copied to one temporary
 * device block (ctx->alloc) on ctx->stream; the device copy of each LOOKUP
 * instruction is patched to point at its table's copy. Asynchronous: the
 * host-side program may be reused as soon as this returns (pageable
 * cudaMemcpyAsync stages the source before returning). Returns 0 or -1. */
extern "C" int prim_gpu_map(PrimCtx *ctx, const PrimProgram *prog, const PrimVec *inputs, int64_t n,
                            PrimVec *out) {
    if (prim_gpu_ctx_ok(ctx) != 0) return -1;
    if (!prog || !out || n < 0) return prim_gpu_fail(ctx, "map: bad arguments");
    if (map_validate(ctx, prog, inputs, n) != 0) return -1;
    if (n == 0) return 0;
    if (!out->data) return prim_gpu_fail(ctx, "map: output has no data");
    if (prog->as_filter && out->type != PRIM_U8)
        return prim_gpu_fail(ctx, "map: a filter writes PRIM_U8 flags");
    if ((int)out->type < PRIM_U8 || (int)out->type > PRIM_F64)
        return prim_gpu_fail(ctx, "map: bad output type %d", (int)out->type);

    cudaStream_t st = prim_gpu_stream(ctx);
    const size_t code_bytes = align16((size_t)prog->ninstr * sizeof(PrimInstr));
    const size_t in_bytes = align16((size_t)prog->ninputs * sizeof(PrimVec));
    size_t total = code_bytes + in_bytes;
    for (int k = 0; k < prog->ninstr; ++k)
        if (prog->code[k].op == POP_LOOKUP && prog->code[k].table_n > 0)
            total += align16((size_t)prog->code[k].table_n * sizeof(int64_t));
    DevBuf block(ctx);
    if (block.alloc(total) != 0) return -1;
    char *base = block.as<char>();
    PrimInstr *d_code = (PrimInstr *)base;
    PrimVec *d_inputs = (PrimVec *)(base + code_bytes);
    if (prog->ninstr > 0)
        GQP_CUDA_TRY(ctx, cudaMemcpyAsync(d_code, prog->code, prog->ninstr * sizeof(PrimInstr),
                                          cudaMemcpyHostToDevice, st));
    if (prog->ninputs > 0)
        GQP_CUDA_TRY(ctx, cudaMemcpyAsync(d_inputs, inputs, prog->ninputs * sizeof(PrimVec),
                                          cudaMemcpyHostToDevice, st));
    size_t pos = code_bytes + in_bytes;
    for (int k = 0; k < prog->ninstr; ++k) {
        const PrimInstr *in = &prog->code[k];
        if (in->op != POP_LOOKUP || in->table_n <= 0) continue;
        const int64_t *d_table = (const int64_t *)(base + pos);
        GQP_CUDA_TRY(ctx, cudaMemcpyAsync((void *)d_table, in->table,
                                          (size_t)in->table_n * sizeof(int64_t),
                                          cudaMemcpyHostToDevice, st));
        GQP_CUDA_TRY(ctx, cudaMemcpyAsync(&d_code[k].table, &d_table, sizeof d_table,
                                          cudaMemcpyHostToDevice, st));
        pos += align16((size_t)in->table_n * sizeof(int64_t));
    }

    MapArgs a;
    a.code = d_code;
    a.inputs = d_inputs;
    a.ninstr = prog->ninstr;
    a.result = prog->result;
    a.result_t = prog->result_t;
    a.as_filter = prog->as_filter;
    a.out_type = (int)out->type;
    a.out = out->data;
    a.out_valid = out->valid;
    a.n = n;
    /* TUNING: programs up to 32 KiB of code (682 instructions) are staged in
     * shared memory; longer ones are read through L1 from global memory. */
    const size_t smem = (size_t)prog->ninstr * sizeof(PrimInstr);
    a.use_shared = smem <= 32768;
    map_kernel<<<prim_gpu_grid(n), GQP_BLOCK, a.use_shared ? smem : 0, st>>>(a);
    GQP_LAUNCH_TRY(ctx);
    return 0;
}

/* -------------------------------------------------------------- scatter -- */

/* dst[idx[i]] = src ? src[i] : i for every i < n with flags == NULL or
 * flags[i] != 0 and 0 <= idx[i] < dn (others are skipped); when dv is
 * present it gets sv ? sv[i] != 0 : 1. T is the unsigned type of the
 * element width. */
template <typename T>
__global__ void scatter_kernel(const T *src, const uint8_t *sv, const uint8_t *flags,
                               const int64_t *idx, int64_t n, T *dst, uint8_t *dv, int64_t dn) {
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE) {
        if (flags && !flags[i]) continue;
        const int64_t k = idx[i];
        if (k < 0 || k >= dn) continue;
        dst[k] = src ? src[i] : (T)i;
        if (dv) dv[k] = sv ? (uint8_t)(sv[i] != 0) : (uint8_t)1;
    }
}

/* GPU twin of prim_cpu_scatter (device pointers). src == NULL scatters row
 * ids into a PRIM_I64 dst. dst->n is dst's capacity, as for the CPU twin:
 * selected rows with idx outside 0..dst->n-1 are skipped (the CPU twin skips
 * them too and then reports an error; the device cannot report one without
 * a sync, so the GPU twin does not). When dst has validity, written rows get
 * src's validity (1 if src has none). Indices of selected rows must be
 * distinct. Asynchronous. Returns 0 or -1. */
extern "C" int prim_gpu_scatter(PrimCtx *ctx, const PrimVec *src, const uint8_t *flags,
                                const int64_t *idx, int64_t n, PrimVec *dst) {
    if (!ctx) return -1;
    if (!dst || n < 0) return prim_gpu_fail(ctx, "scatter: bad arguments");
    if (n == 0) return 0;
    if (!idx || !dst->data || (src && !src->data))
        return prim_gpu_fail(ctx, "scatter: missing data");
    if (!src && dst->type != PRIM_I64)
        return prim_gpu_fail(ctx, "scatter: row ids need a PRIM_I64 destination");
    if (src && src->type != dst->type)
        return prim_gpu_fail(ctx, "scatter: source and destination types differ");
    cudaStream_t st = prim_gpu_stream(ctx);
    const uint8_t *sv = src ? src->valid : nullptr;
    const unsigned grid = prim_gpu_grid(n);
    switch (prim_type_width(dst->type)) {
    case 1:
        scatter_kernel<uint8_t>
            <<<grid, GQP_BLOCK, 0, st>>>(src ? (const uint8_t *)src->data : nullptr, sv, flags, idx,
                                         n, (uint8_t *)dst->data, dst->valid, dst->n);
        break;
    case 4:
        scatter_kernel<uint32_t>
            <<<grid, GQP_BLOCK, 0, st>>>(src ? (const uint32_t *)src->data : nullptr, sv, flags,
                                         idx, n, (uint32_t *)dst->data, dst->valid, dst->n);
        break;
    case 8:
        scatter_kernel<uint64_t>
            <<<grid, GQP_BLOCK, 0, st>>>(src ? (const uint64_t *)src->data : nullptr, sv, flags,
                                         idx, n, (uint64_t *)dst->data, dst->valid, dst->n);
        break;
    default:
        return prim_gpu_fail(ctx, "scatter: bad type %d", (int)dst->type);
    }
    GQP_LAUNCH_TRY(ctx);
    return 0;
}

/* --------------------------------------------------------------- gather -- */

/* dst[i] = src[idx[i]] for i < n; idx[i] outside 0..sn-1 gives 0 and, when
 * dv is present, validity 0; otherwise dv[i] = sv ? sv[idx[i]] != 0 : 1. */
template <typename T>
__global__ void gather_kernel(const T *src, const uint8_t *sv, const int64_t *idx, int64_t n,
                              int64_t sn, T *dst, uint8_t *dv) {
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE) {
        const int64_t k = idx[i];
        if (k < 0 || k >= sn) {
            dst[i] = (T)0;
            if (dv) dv[i] = 0;
        } else {
            dst[i] = src[k];
            if (dv) dv[i] = sv ? (uint8_t)(sv[k] != 0) : (uint8_t)1;
        }
    }
}

/* GPU twin of prim_cpu_gather (device pointers): dst[i] = src[idx[i]], with
 * idx[i] < 0 giving NULL (dst->valid must then be present; without it the
 * value 0 is written). src->n is src's length, as for the CPU twin: an index
 * >= src->n gives 0 / NULL (the CPU twin writes the same and then reports an
 * error, which the device cannot do without a sync). Asynchronous.
 * Returns 0 or -1. */
extern "C" int prim_gpu_gather(PrimCtx *ctx, const PrimVec *src, const int64_t *idx, int64_t n,
                               PrimVec *dst) {
    if (!ctx) return -1;
    if (!src || !dst || n < 0) return prim_gpu_fail(ctx, "gather: bad arguments");
    if (n == 0) return 0;
    if (!idx || !dst->data || (src->n > 0 && !src->data))
        return prim_gpu_fail(ctx, "gather: missing data");
    if (src->type != dst->type)
        return prim_gpu_fail(ctx, "gather: source and destination types differ");
    cudaStream_t st = prim_gpu_stream(ctx);
    const unsigned grid = prim_gpu_grid(n);
    switch (prim_type_width(dst->type)) {
    case 1:
        gather_kernel<uint8_t><<<grid, GQP_BLOCK, 0, st>>>((const uint8_t *)src->data, src->valid,
                                                           idx, n, src->n, (uint8_t *)dst->data,
                                                           dst->valid);
        break;
    case 4:
        gather_kernel<uint32_t><<<grid, GQP_BLOCK, 0, st>>>((const uint32_t *)src->data, src->valid,
                                                            idx, n, src->n, (uint32_t *)dst->data,
                                                            dst->valid);
        break;
    case 8:
        gather_kernel<uint64_t><<<grid, GQP_BLOCK, 0, st>>>((const uint64_t *)src->data, src->valid,
                                                            idx, n, src->n, (uint64_t *)dst->data,
                                                            dst->valid);
        break;
    default:
        return prim_gpu_fail(ctx, "gather: bad type %d", (int)dst->type);
    }
    GQP_LAUNCH_TRY(ctx);
    return 0;
}

/* ---------------------------------------------------------------- cross -- */

/* left[k] = k / nr, right[k] = k % nr for k < total = nl * nr. */
__global__ void cross_kernel(int64_t nr, int64_t total, int64_t *left, int64_t *right) {
    for (int64_t k = GQP_GRID_START; k < total; k += GQP_GRID_STRIDE) {
        const int64_t i = k / nr;
        left[k] = i;
        right[k] = k - i * nr;
    }
}

/* GPU twin of prim_cpu_cross: all nl * nr pairs ordered by i then j, in two
 * device arrays from ctx->alloc (the caller frees them through ctx->free;
 * NULL when out->n == 0). The size is known on the host: no sync.
 * Returns 0 or -1 (also when nl * nr * 8 bytes overflows). */
extern "C" int prim_gpu_cross(PrimCtx *ctx, int64_t nl, int64_t nr, PrimPairs *out) {
    if (prim_gpu_ctx_ok(ctx) != 0) return -1;
    if (!out || nl < 0 || nr < 0) return prim_gpu_fail(ctx, "cross: bad arguments");
    out->n = 0;
    out->left = out->right = nullptr;
    if (nl == 0 || nr == 0) return 0;
    if (nl > (INT64_MAX / 8) / nr)
        return prim_gpu_fail(ctx, "cross: %lld x %lld pairs is too many", (long long)nl,
                             (long long)nr);
    const int64_t total = nl * nr;
    DevBuf left(ctx), right(ctx);
    if (left.alloc((size_t)total * sizeof(int64_t)) != 0 ||
        right.alloc((size_t)total * sizeof(int64_t)) != 0)
        return -1;
    cross_kernel<<<prim_gpu_grid(total), GQP_BLOCK, 0, prim_gpu_stream(ctx)>>>(
        nr, total, left.as<int64_t>(), right.as<int64_t>());
    GQP_LAUNCH_TRY(ctx);
    out->n = total;
    out->left = (int64_t *)left.release();
    out->right = (int64_t *)right.release();
    return 0;
}
