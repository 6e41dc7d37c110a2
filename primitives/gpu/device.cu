/*
 * device.cu -- GPU twins without CUB: device detection, map (the register
 * program in one kernel), scatter, gather, cross, keymap and denseagg (the
 * fused filter -> star-join probe -> dense GROUP BY kernel). Contracts are
 * the CPU twins' in primitives/primitives.h, with device pointers; all work
 * is issued on ctx->stream and nothing here synchronizes the host.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
/* Programs and inputs up to these counts travel inside the kernel's
 * parameters (MapArgs, under 4 KiB), so a map launch copies nothing to the
 * device but its tables: two pageable copies fewer per map node */
#define MAP_INLINE_CODE 48
#define MAP_INLINE_INPUTS 24

struct MapArgs {
    const PrimInstr *code; /* ninstr instructions, LOOKUP tables patched to device copies;
                              NULL: icode */
    const PrimVec *inputs; /* ninputs column descriptors (device data pointers); NULL: iinputs */
    int ninstr;
    int use_shared; /* 1: stage code in dynamic shared memory */
    int result;
    int result_t;
    int as_filter;
    int out_type;
    void *out;
    uint8_t *out_valid;
    int64_t n;
    int *status;   /* set to 1 when an integer overflow reaches a row's result */
    int reg_words; /* map_kernel<.., true>: where its register file starts in
                      dynamic shared memory (int64 words, after the code) */
    PrimInstr icode[MAP_INLINE_CODE];
    PrimVec iinputs[MAP_INLINE_INPUTS];
};
static_assert(sizeof(MapArgs) <= 4000, "MapArgs must fit the 4 KiB kernel parameter space");

/* Register access inside a FOR_ROWS loop (row j of the thread's R rows):
 * values are int64 bit patterns (doubles via bit casts) in a file laid out
 * register-major, register k of row j at r[(k * R + j) * S]: S = 1 for a
 * thread-local array (one instruction's R values adjacent), S = the block
 * size for the block's shared-memory file (r = its start + threadIdx.x, so
 * a warp's accesses are consecutive words); NULL flags are one bit each of
 * row j's 64-bit mask nm[j] (PRIM_MAX_REGS == 64). */
#define FOR_ROWS _Pragma("unroll") for (int j = 0; j < R; ++j)
#define RV(k) (r[((k)*R + j) * S])
#define RI(k) (RV(k))
#define RF(k) (__longlong_as_double(RV(k)))
#define ISNUL(k) ((nm[j] >> (k)) & 1ull)
#define SETI(k, v)                                                                                 \
    do {                                                                                           \
        RV(k) = (v);                                                                               \
        nm[j] &= ~(1ull << (k));                                                                   \
    } while (0)
#define SETF(k, v)                                                                                 \
    do {                                                                                           \
        RV(k) = __double_as_longlong(v);                                                           \
        nm[j] &= ~(1ull << (k));                                                                   \
    } while (0)
#define SETNULL(k)                                                                                 \
    do {                                                                                           \
        RV(k) = 0;                                                                                 \
        nm[j] |= 1ull << (k);                                                                      \
    } while (0)

/* Truth of register k in operand type t (nonzero = true); k must be non-NULL. */
#define TRUTHY(k, t) ((t) == PRIM_REG_F ? (RF(k) != 0.0) : (RI(k) != 0))

static __host__ __device__ int map_reads(int op);

/* Whether the result of in is an integer overflow error for row j of R,
 * given pm (the registers holding one before in runs) and the row's
 * registers r / NULL masks nm: an operand's error carries over, except for
 * a CASE branch not taken, COALESCE's b when a is not NULL, and AND (OR)
 * when either operand is a non-error false (true). The CPU twin's
 * map_poison (primitives/cpu/map.c) is the same rule. */
template <int R, int S>
static __device__ __forceinline__ int map_poison(const PrimInstr &in, const int64_t *r,
                                                 const uint64_t *nm, int j, uint64_t pm) {
    const int rd = map_reads(in.op);
    const int pa = (rd & 1) && ((pm >> in.a) & 1ull), pb = (rd & 2) && ((pm >> in.b) & 1ull);
    const int pc = (rd & 4) && ((pm >> in.c) & 1ull);
    switch (in.op) {
    case POP_CASE:
        return pa | ((!ISNUL(in.a) && RI(in.a) != 0) ? pb : pc);
    case POP_COALESCE:
        return pa | (ISNUL(in.a) ? pb : 0);
    case POP_AND:
    case POP_OR: {
        const int want = in.op == POP_OR;
        const int da = !pa && !ISNUL(in.a) && (int)TRUTHY(in.a, in.t) == want;
        const int db = !pb && !ISNUL(in.b) && (int)TRUTHY(in.b, in.t) == want;
        return (da || db) ? 0 : (pa | pb);
    }
    default:
        return pa | pb | pc;
    }
}

/* Returns 1 if x is in the ascending int64 set t[0..n): binary search for
 * the last element <= x (the CPU twin's map_in_i). */
__device__ __forceinline__ int map_in_i(const int64_t *t, int64_t n, int64_t x) {
    if (n <= 0) return 0;
    const int64_t *base = t;
    while (n > 1) {
        const int64_t half = n / 2;
        base = base[half] <= x ? base + half : base;
        n -= half;
    }
    return *base == x;
}

/* The index of the last element <= x of the ascending int64 array t[0..n),
 * or -1 when x is below t[0] (POP_RUNS; the CPU twin's map_run_of). */
__device__ __forceinline__ int64_t map_run_of(const int64_t *t, int64_t n, int64_t x) {
    if (n <= 0 || x < t[0]) return -1;
    const int64_t *base = t;
    while (n > 1) {
        const int64_t half = n / 2;
        base = base[half] <= x ? base + half : base;
        n -= half;
    }
    return base - t;
}

/* Returns 1 if x is in the ascending double set t[0..n) (NaN never is). */
__device__ __forceinline__ int map_in_f(const double *t, int64_t n, double x) {
    if (n <= 0) return 0;
    const double *base = t;
    while (n > 1) {
        const int64_t half = n / 2;
        base = base[half] <= x ? base + half : base;
        n -= half;
    }
    return *base == x;
}

/* Loads rows row[0..R) of column c into register d of each row: as double
 * when f, else as int64; NULL where the validity says so. One type switch
 * for all R rows, whose loads are then independent. */
template <int R, int S, typename T>
static __device__ __forceinline__ void map_load(const PrimVec &c, const int64_t (&row)[R], int d,
                                                int f, int64_t *r, uint64_t *nm) {
    const T *p = (const T *)c.data;
    T v[R];
    FOR_ROWS v[j] = p[row[j]];
    if (f) {
        FOR_ROWS SETF(d, (double)v[j]);
    } else if ((T)0.5 != 0) { /* float or double: saturating truncation */
        FOR_ROWS SETI(d, prim_d2i((double)v[j]));
    } else {
        FOR_ROWS SETI(d, (int64_t)v[j]);
    }
    if (c.valid) {
        FOR_ROWS if (!c.valid[row[j]]) SETNULL(d);
    }
}

/* Loads rows row[0..R) of column c into register d (map_load by c's type). */
template <int R, int S>
static __device__ __forceinline__ void map_col(const PrimVec &c, const int64_t (&row)[R], int d,
                                               int f, int64_t *r, uint64_t *nm) {
    switch (c.type) {
    case PRIM_U8:
        map_load<R, S, uint8_t>(c, row, d, f, r, nm);
        break;
    case PRIM_I32:
        map_load<R, S, int32_t>(c, row, d, f, r, nm);
        break;
    case PRIM_I64:
        map_load<R, S, int64_t>(c, row, d, f, r, nm);
        break;
    case PRIM_F32:
        map_load<R, S, float>(c, row, d, f, r, nm);
        break;
    default:
        map_load<R, S, double>(c, row, d, f, r, nm);
        break;
    }
}

/* The outcomes (lt / eq / gt as bits 0 / 1 / 2) that make comparison op
 * true. */
static __host__ __device__ __forceinline__ int cmp_want(int op) {
    return op == POP_EQ   ? 2
           : op == POP_NE ? 5
           : op == POP_LT ? 1
           : op == POP_LE ? 3
           : op == POP_GT ? 4
                          : 6;
}

/* u op v (want = cmp_want(op)) for integers and for doubles; NaN compares
 * unordered: false for all but NE. */
static __device__ __forceinline__ int cmp_i(int want, int64_t u, int64_t v) {
    return (want >> (u < v ? 0 : u == v ? 1 : 2)) & 1;
}
static __device__ __forceinline__ int cmp_f(int op, int want, double u, double v) {
    const int o = u < v ? 1 : u == v ? 2 : u > v ? 4 : 0;
    return o ? (want >> (o >> 1)) & 1 : op == POP_NE;
}

/* Internal opcode of the GPU twin (never in a PrimProgram a caller
 * builds): dst = input column ival compared (operator c, a PrimOp
 * comparison, in type t) with the constant table_n (t I) or fval (t F):
 * a COL, a CONST and the comparison fused by map_fuse. */
#define POPX_CMPC 200

/* Evaluates the register program over rows (grid-stride), R rows per
 * thread at a time: each instruction is decoded once and applied to the R
 * rows (rows base + j * stride, j < R; past the end a thread repeats row
 * n - 1 and stores nothing for it), so the interpreter's decode and branch
 * are paid once per R rows and the R column loads are in flight together.
 * Registers live in a thread-local array and NULL flags in 64-bit masks:
 * nothing but the result reaches global memory. The program was validated
 * on the host (registers in range, every read register written before).
 * Semantics are those of primitives.h and of the CPU twin
 * (primitives/cpu/map.c): wrapping int64 +,-,*, unary -; DIV/MOD by 0 give
 * NULL; x / -1 is the wrapping negation (INT64_MIN / -1 = INT64_MIN) and x
 * % -1 is 0, so no UB; float MOD works on saturating-truncated int64; F ->
 * I saturates, NaN -> 0; comparisons with NULL give NULL; AND/OR
 * three-valued. The result is stored as out->type: a U8 output (filter or
 * not) gets the truth value (non-NULL and != 0); I32 from a float
 * saturates; NULL stores 0. Float arithmetic uses the _rn intrinsics so
 * that nvcc never contracts it into FMA (the CPU twin rounds every
 * operation). */
template <bool kCheck, int R, bool kShared>
__global__ void map_kernel(const __grid_constant__ MapArgs a) {
    extern __shared__ int64_t map_smem[];
    constexpr int S = kShared ? GQP_BLOCK : 1;
    const PrimInstr *code = a.code ? a.code : a.icode;
    const PrimVec *inputs = a.inputs ? a.inputs : a.iinputs;
    if (a.use_shared) {
        PrimInstr *s = (PrimInstr *)map_smem;
        const PrimInstr *src = code;
        for (int k = threadIdx.x; k < a.ninstr; k += blockDim.x)
            s[k] = src[k];
        __syncthreads();
        code = s;
    }
    int64_t rl[kShared ? 1 : PRIM_MAX_REGS * R];
    int64_t *r = kShared ? map_smem + a.reg_words + threadIdx.x : rl;
    const int64_t stride = GQP_GRID_STRIDE;
    for (int64_t base = GQP_GRID_START; base < a.n; base += stride * R) {
        int64_t row[R];
        FOR_ROWS row[j] = min(base + j * stride, a.n - 1);
        uint64_t nm[R];
        uint64_t pm[R]; /* registers holding an integer overflow (map_poison) */
        FOR_ROWS {
            nm[j] = ~0ull;
            pm[j] = 0;
        }
        for (int k = 0; k < a.ninstr; ++k) {
            const PrimInstr in = code[k];
            const int d = in.dst, x = in.a, y = in.b;
            int pin[R];
            int ov[R]; /* this instruction overflowed int64 */
            FOR_ROWS {
                pin[j] = (kCheck && pm[j]) ? map_poison<R, S>(in, r, nm, j, pm[j]) : 0;
                ov[j] = 0;
            }
            switch (in.op) {
            case POP_COL:
                map_col<R, S>(inputs[in.ival], row, d, in.t == PRIM_REG_F, r, nm);
                break;
            case POPX_CMPC: {
                const int f = in.t == PRIM_REG_F, want = cmp_want(in.c);
                map_col<R, S>(inputs[in.ival], row, d, f, r, nm);
                if (f) {
                    FOR_ROWS if (!ISNUL(d)) RV(d) = cmp_f(in.c, want, RF(d), in.fval);
                } else {
                    FOR_ROWS if (!ISNUL(d)) RV(d) = cmp_i(want, RI(d), in.table_n);
                }
                break;
            }
            case POP_CONST:
                if (in.t == PRIM_REG_F) {
                    FOR_ROWS SETF(d, in.fval);
                } else {
                    FOR_ROWS SETI(d, in.ival);
                }
                break;
            case POP_NULL:
                FOR_ROWS SETNULL(d);
                break;
            case POP_ADD:
            case POP_SUB:
            case POP_MUL:
            case POP_DIV:
            case POP_MOD:
                if (in.t == PRIM_REG_F) {
                    FOR_ROWS {
                        if (ISNUL(x) || ISNUL(y)) {
                            SETNULL(d);
                            continue;
                        }
                        /* a NaN result (Inf - Inf, 0 * Inf) is NULL, as
                         * SQLite's (the CPU twin's map_nan_null) */
                        const double u = RF(x), v = RF(y);
                        if (in.op == POP_ADD || in.op == POP_SUB || in.op == POP_MUL ||
                            in.op == POP_DIV) {
                            const double res = in.op == POP_ADD   ? __dadd_rn(u, v)
                                               : in.op == POP_SUB ? __dsub_rn(u, v)
                                               : in.op == POP_MUL ? __dmul_rn(u, v)
                                               : v == 0.0         ? 0.0
                                                                  : __ddiv_rn(u, v);
                            if ((in.op == POP_DIV && v == 0.0) || res != res)
                                SETNULL(d);
                            else
                                SETF(d, res);
                        } else {
                            const int64_t iu = prim_d2i(u), iv = prim_d2i(v);
                            if (iv == 0)
                                SETNULL(d);
                            else
                                SETF(d, (double)(iv == -1 ? 0 : iu % iv));
                        }
                    }
                } else if (in.op == POP_ADD) {
                    FOR_ROWS {
                        const int n2 = ISNUL(x) || ISNUL(y);
                        const int64_t u = RI(x), v = RI(y);
                        const int64_t w = (int64_t)((uint64_t)u + (uint64_t)v);
                        ov[j] = !n2 && ((u ^ w) & (v ^ w)) < 0;
                        if (n2)
                            SETNULL(d);
                        else
                            SETI(d, w);
                    }
                } else if (in.op == POP_SUB) {
                    FOR_ROWS {
                        const int n2 = ISNUL(x) || ISNUL(y);
                        const int64_t u = RI(x), v = RI(y);
                        const int64_t w = (int64_t)((uint64_t)u - (uint64_t)v);
                        ov[j] = !n2 && ((u ^ v) & (u ^ w)) < 0;
                        if (n2)
                            SETNULL(d);
                        else
                            SETI(d, w);
                    }
                } else if (in.op == POP_MUL) {
                    FOR_ROWS {
                        const int n2 = ISNUL(x) || ISNUL(y);
                        const int64_t u = RI(x), v = RI(y);
                        const int64_t w = (int64_t)((uint64_t)u * (uint64_t)v);
                        ov[j] =
                            !n2 && __mul64hi((long long)u, (long long)v) != (w < 0 ? -1ll : 0ll);
                        if (n2)
                            SETNULL(d);
                        else
                            SETI(d, w);
                    }
                } else {
                    FOR_ROWS {
                        if (ISNUL(x) || ISNUL(y)) {
                            SETNULL(d);
                            continue;
                        }
                        const int64_t u = RI(x), v = RI(y);
                        if (in.op == POP_DIV) {
                            ov[j] = u == INT64_MIN && v == -1;
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
                }
                break;
            case POP_NEG:
                FOR_ROWS {
                    if (ISNUL(x))
                        SETNULL(d);
                    else if (in.t == PRIM_REG_F)
                        SETF(d, -RF(x));
                    else {
                        ov[j] = RI(x) == INT64_MIN;
                        SETI(d, (int64_t)(0ull - (uint64_t)RI(x)));
                    }
                }
                break;
            case POP_I2F:
                FOR_ROWS {
                    if (ISNUL(x))
                        SETNULL(d);
                    else
                        SETF(d, (double)RI(x));
                }
                break;
            case POP_MATH: /* SQRT only (prim_prog_cpu_only keeps the others on the CPU) */
                FOR_ROWS {
                    if (ISNUL(x) || !(RF(x) >= 0.0))
                        SETNULL(d);
                    else
                        SETF(d, __dsqrt_rn(RF(x)));
                }
                break;
            case POP_POW: /* fmod only (ival 1): exact, as the CPU twin's */
                FOR_ROWS {
                    const double res = ISNUL(x) || ISNUL(y) ? 0.0 : fmod(RF(x), RF(y));
                    if (ISNUL(x) || ISNUL(y) || res != res)
                        SETNULL(d);
                    else
                        SETF(d, res);
                }
                break;
            case POP_F2I: /* ival 1: an I operand, the value itself */
                FOR_ROWS {
                    if (ISNUL(x))
                        SETNULL(d);
                    else
                        SETI(d, in.ival == 1 ? RI(x) : prim_d2i(RF(x)));
                }
                break;
            case POP_EQ:
            case POP_NE:
            case POP_LT:
            case POP_LE:
            case POP_GT:
            case POP_GE: {
                const int want = cmp_want(in.op);
                if (in.t == PRIM_REG_F) {
                    FOR_ROWS {
                        const int res = cmp_f(in.op, want, RF(x), RF(y));
                        if (ISNUL(x) || ISNUL(y))
                            SETNULL(d);
                        else
                            SETI(d, (int64_t)res);
                    }
                } else {
                    FOR_ROWS {
                        const int res = cmp_i(want, RI(x), RI(y));
                        if (ISNUL(x) || ISNUL(y))
                            SETNULL(d);
                        else
                            SETI(d, (int64_t)res);
                    }
                }
                break;
            }
            case POP_AND:
            case POP_OR:
                FOR_ROWS {
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
                }
                break;
            case POP_NOT:
            case POP_TRUTH:
                FOR_ROWS {
                    if (ISNUL(x))
                        SETNULL(d);
                    else
                        SETI(d, (int64_t)(in.op == POP_TRUTH ? TRUTHY(x, in.t) : !TRUTHY(x, in.t)));
                }
                break;
            case POP_ISNULL:
                FOR_ROWS SETI(d, (int64_t)ISNUL(x));
                break;
            case POP_NOTNULL:
                FOR_ROWS SETI(d, (int64_t)!ISNUL(x));
                break;
            case POP_CASE:
                FOR_ROWS {
                    const int take = !ISNUL(x) && RI(x) != 0;
                    const int s = take ? y : in.c;
                    const int64_t v = RV(s);
                    const uint64_t sn = (nm[j] >> s) & 1ull;
                    RV(d) = v;
                    nm[j] = (nm[j] & ~(1ull << d)) | (sn << d);
                }
                break;
            case POP_LOOKUP:
                FOR_ROWS {
                    const int64_t i = ISNUL(x) ? -1 : RI(x);
                    const int64_t v = (i < 0 || i >= in.table_n) ? INT64_MIN : in.table[i];
                    if (v == INT64_MIN)
                        SETNULL(d);
                    else
                        SETI(d, v);
                }
                break;
            case POP_LOOKUPV: {
                const PrimVec tv = inputs[in.ival];
                FOR_ROWS {
                    const int64_t i = ISNUL(x) ? -1 : RI(x);
                    if (i < 0 || i >= tv.n)
                        SETNULL(d);
                    else
                        SETI(d, (int64_t)((const uint8_t *)tv.data)[i]);
                }
                break;
            }
            case POP_RUNS:
                FOR_ROWS {
                    const int64_t k2 = ISNUL(x) ? -1 : map_run_of(in.table, in.table_n, RI(x));
                    if (k2 < 0)
                        SETNULL(d);
                    else
                        SETI(d, k2);
                }
                break;
            case POP_INLIST:
                FOR_ROWS {
                    if (ISNUL(x)) {
                        SETNULL(d);
                        continue;
                    }
                    const int f =
                        in.t == PRIM_REG_F
                            ? map_in_f((const double *)(const void *)in.table, in.table_n, RF(x))
                            : map_in_i(in.table, in.table_n, RI(x));
                    if (f)
                        SETI(d, 1);
                    else if (in.ival != 0)
                        SETNULL(d);
                    else
                        SETI(d, 0);
                }
                break;
            case POP_COALESCE:
                FOR_ROWS {
                    const int s = ISNUL(x) ? y : x;
                    const int64_t v = RV(s);
                    const uint64_t sn = (nm[j] >> s) & 1ull;
                    RV(d) = v;
                    nm[j] = (nm[j] & ~(1ull << d)) | (sn << d);
                }
                break;
            default:
                FOR_ROWS SETNULL(d);
                break;
            }
            if (kCheck) {
                FOR_ROWS pm[j] = (pm[j] & ~(1ull << d)) | ((uint64_t)(pin[j] | ov[j]) << d);
            }
        }
        const int res = a.result;
        FOR_ROWS {
            if (base + j * stride >= a.n) continue;
            const int64_t rw = row[j];
            if (kCheck && ((pm[j] >> res) & 1ull)) *a.status = 1;
            const int isnull = (int)ISNUL(res);
            if (a.as_filter || a.out_type == PRIM_U8) {
                ((uint8_t *)a.out)[rw] = (uint8_t)(!isnull && TRUTHY(res, a.result_t));
                if (a.out_valid) a.out_valid[rw] = (uint8_t)(a.as_filter || !isnull);
            } else {
                if (isnull)
                    prim_store_i(a.out, a.out_type, rw, 0);
                else if (a.result_t == PRIM_REG_F)
                    prim_store_f(a.out, a.out_type, rw, RF(res));
                else
                    prim_store_i(a.out, a.out_type, rw, RI(res));
                if (a.out_valid) a.out_valid[rw] = (uint8_t)!isnull;
            }
        }
    }
}

#undef FOR_ROWS
#undef RV
#undef RI
#undef RF
#undef ISNUL
#undef SETI
#undef SETF
#undef SETNULL
#undef TRUTHY

/* Operand registers an opcode reads: bit 0 = a, bit 1 = b, bit 2 = c;
 * -1 for an unknown opcode. */
static __host__ __device__ int map_reads(int op) {
    switch (op) {
    case POP_COL:
    case POP_CONST:
    case POP_NULL:
    case POPX_CMPC:
        return 0;
    case POP_NEG:
    case POP_I2F:
    case POP_F2I:
    case POP_NOT:
    case POP_ISNULL:
    case POP_NOTNULL:
    case POP_TRUTH:
    case POP_LOOKUP:
    case POP_INLIST:
    case POP_LOOKUPV:
    case POP_RUNS:
    case POP_MATH:
        return 1;
    case POP_POW:
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

/* 1 if instruction op reads a host table (copied to the device per launch). */
static int op_has_table(int op) {
    return op == POP_LOOKUP || op == POP_INLIST || op == POP_RUNS;
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
        if (op_has_table(in->op) && in->table_n > 0 && !in->table)
            return prim_gpu_fail(ctx, "map: LOOKUP/INLIST/RUNS at %d has no table", k);
        if (in->op == POP_LOOKUPV &&
            (in->ival < 0 || in->ival >= prog->ninputs || inputs[in->ival].type != PRIM_U8 ||
             (inputs[in->ival].n > 0 && !inputs[in->ival].data)))
            return prim_gpu_fail(ctx, "map: LOOKUPV at %d has no U8 table input", k);
    }
    if (!((written >> prog->result) & 1ull))
        return prim_gpu_fail(ctx, "map: result register %d never written", prog->result);
    return 0;
}

/* 1 when register reg is read by code[from..n) before it is written
 * again, or is the result register at the end. */
static int reg_live(const PrimInstr *code, int n, int from, int reg, int result) {
    for (int k = from; k < n; ++k) {
        const PrimInstr *in = &code[k];
        const int rd = map_reads(in->op);
        if (((rd & 1) && in->a == reg) || ((rd & 2) && in->b == reg) || ((rd & 4) && in->c == reg))
            return 1;
        if (in->dst == reg) return 0;
    }
    return reg == result;
}

/* The comparison that gives a op b from b op' a. */
static int cmp_flip(int op) {
    return op == POP_LT   ? POP_GT
           : op == POP_GT ? POP_LT
           : op == POP_LE ? POP_GE
           : op == POP_GE ? POP_LE
                          : op;
}

/* prog's code into out (room for prog->ninstr) with each COL x, CONST y
 * (in either order) followed by a comparison of x and y (either side)
 * fused into one POPX_CMPC where x and y are not read again: one decode,
 * one register write instead of three (a filter's usual shape, TPC-H's
 * date ranges and dictionary codes). Returns the instruction count. */
static int map_fuse(const PrimProgram *prog, PrimInstr *out) {
    const PrimInstr *code = prog->code;
    const int n = prog->ninstr;
    int m = 0;
    for (int k = 0; k < n; ++k) {
        if (k + 2 < n) {
            const PrimInstr *i0 = &code[k], *i1 = &code[k + 1], *i2 = &code[k + 2];
            const PrimInstr *col = i0->op == POP_COL ? i0 : i1->op == POP_COL ? i1 : NULL;
            const PrimInstr *cst = i0->op == POP_CONST ? i0 : i1->op == POP_CONST ? i1 : NULL;
            int op = -1;
            if (col && cst && col->dst != cst->dst && col->t == i2->t && cst->t == i2->t &&
                i2->op >= POP_EQ && i2->op <= POP_GE) {
                if (i2->a == col->dst && i2->b == cst->dst) op = i2->op;
                if (i2->a == cst->dst && i2->b == col->dst) op = cmp_flip(i2->op);
            }
            const int d = op >= 0 ? i2->dst : -1;
            if (op >= 0 && (col->dst == d || !reg_live(code, n, k + 3, col->dst, prog->result)) &&
                (cst->dst == d || !reg_live(code, n, k + 3, cst->dst, prog->result))) {
                PrimInstr f = *i2;
                f.op = POPX_CMPC;
                f.c = (int16_t)op;
                f.a = f.b = (int16_t)d;
                f.ival = col->ival;
                f.table_n = cst->ival;
                f.fval = cst->fval;
                f.table = NULL;
                out[m++] = f;
                k += 2;
                continue;
            }
        }
        out[m++] = code[k];
    }
    return m;
}

/* TUNING: the most dynamic shared memory a map block takes (code and the
 * shared register file): 96 KiB leaves room for two blocks per SM. */
#define MAP_SMEM_MAX (96 * 1024)

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
 * cudaMemcpyAsync stages the source before returning). An integer overflow
 * reaching a row's result sets *ctx->status (the caller's check after its
 * next synchronization); without ctx->status this call synchronizes and
 * returns -1 with "integer overflow" itself. Returns 0 or -1. */
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

    /* the program with COL / CONST / comparison triples fused
     * (GQP_MAP_FUSE=0: as given; measurements) */
    struct Code {
        PrimInstr *p = NULL;
        ~Code() {
            free(p);
        }
    } fused;
    if (!(fused.p = (PrimInstr *)malloc(sizeof(PrimInstr) * (size_t)(prog->ninstr + 1))))
        return prim_gpu_fail(ctx, "map: out of host memory");
    static int fuse = -1;
    if (fuse < 0) {
        const char *e = getenv("GQP_MAP_FUSE");
        fuse = !(e && strcmp(e, "0") == 0);
    }
    int ninstr = prog->ninstr;
    if (fuse)
        ninstr = map_fuse(prog, fused.p);
    else if (ninstr > 0)
        memcpy(fused.p, prog->code, sizeof(PrimInstr) * (size_t)ninstr);
    const PrimInstr *code = fused.p;

    cudaStream_t st = prim_gpu_stream(ctx);
    /* the code and the inputs in the kernel's parameters when they fit
     * (else in one device block); the tables always in device memory */
    static int inline_ok = -1; /* GQP_MAP_INLINE=0: always in device memory (A/B) */
    if (inline_ok < 0) {
        const char *e = getenv("GQP_MAP_INLINE");
        inline_ok = !(e && strcmp(e, "0") == 0);
    }
    const int inl = inline_ok && ninstr <= MAP_INLINE_CODE && prog->ninputs <= MAP_INLINE_INPUTS;
    const size_t code_bytes = inl ? 0 : align16((size_t)ninstr * sizeof(PrimInstr));
    const size_t in_bytes = inl ? 0 : align16((size_t)prog->ninputs * sizeof(PrimVec));
    size_t total = code_bytes + in_bytes;
    for (int k = 0; k < ninstr; ++k)
        if (op_has_table(code[k].op) && code[k].table_n > 0)
            total += align16((size_t)code[k].table_n * sizeof(int64_t));
    DevBuf block(ctx);
    if (total > 0 && block.alloc(total) != 0) return -1;
    char *base = block.as<char>();
    size_t pos = code_bytes + in_bytes;
    for (int k = 0; k < ninstr; ++k) {
        PrimInstr *in = &fused.p[k];
        if (!op_has_table(in->op) || in->table_n <= 0) continue;
        int64_t *d_table = (int64_t *)(base + pos);
        GQP_CUDA_TRY(ctx, cudaMemcpyAsync(d_table, in->table, (size_t)in->table_n * sizeof(int64_t),
                                          cudaMemcpyHostToDevice, st));
        in->table = d_table; /* the device copy, in the code sent below */
        pos += align16((size_t)in->table_n * sizeof(int64_t));
    }
    PrimInstr *d_code = inl ? nullptr : (PrimInstr *)base;
    PrimVec *d_inputs = inl ? nullptr : (PrimVec *)(base + code_bytes);
    if (!inl && ninstr > 0)
        GQP_CUDA_TRY(ctx, cudaMemcpyAsync(d_code, code, ninstr * sizeof(PrimInstr),
                                          cudaMemcpyHostToDevice, st));
    if (!inl && prog->ninputs > 0)
        GQP_CUDA_TRY(ctx, cudaMemcpyAsync(d_inputs, inputs, prog->ninputs * sizeof(PrimVec),
                                          cudaMemcpyHostToDevice, st));

    MapArgs a;
    a.code = d_code;
    a.inputs = d_inputs;
    if (inl) {
        if (ninstr > 0) memcpy(a.icode, code, sizeof(PrimInstr) * (size_t)ninstr);
        if (prog->ninputs > 0) memcpy(a.iinputs, inputs, sizeof(PrimVec) * (size_t)prog->ninputs);
    }
    a.ninstr = ninstr;
    a.result = prog->result;
    a.result_t = prog->result_t;
    a.as_filter = prog->as_filter;
    a.out_type = (int)out->type;
    a.out = out->data;
    a.out_valid = out->valid;
    a.n = n;
    DevBuf st_tmp(ctx);
    if (!(a.status = prim_gpu_status(ctx, st_tmp))) return -1;
    /* TUNING: programs up to 32 KiB of code (682 instructions) are staged in
     * shared memory; longer ones are read through L1 from global memory. */
    const size_t smem = (size_t)ninstr * sizeof(PrimInstr);
    a.use_shared = smem <= 32768;
    /* overflow tracking (map_poison) costs registers (38 against 32 per
     * thread on sm_90, 75% occupancy instead of 100%): a program with no
     * integer arithmetic that can overflow (by op type, or by the
     * planner's bound proof: prog->nocheck) runs the kernel without it */
    int check = 0;
    for (int k = 0; k < ninstr; ++k) {
        const PrimInstr *in = &code[k];
        if (in->t == PRIM_REG_I && (in->op == POP_ADD || in->op == POP_SUB || in->op == POP_MUL ||
                                    in->op == POP_DIV || in->op == POP_NEG))
            check = 1;
    }
    if (prog->nocheck) check = 0;
    /* TUNING: 4 rows per thread per decoded instruction. Measured on the
     * H200 (bench/results/prim-gpu-h200.md): map of 2^26 rows 1.64 ms with
     * 1 row, 1.07 with 4, 1.16 with 8 (56 -> 96 registers); TPC-H SF 1
     * under gpu 10-25% faster with 4 or 8 than with 1 */
    constexpr int rows = 4;
    const unsigned grid = prim_gpu_grid((n + rows - 1) / rows);
    /* the register file in shared memory when it fits MAP_SMEM_REGS_MAX
     * (GQP_MAP_SHARED=0: thread-local; measurements): Nsight Compute saw
     * the thread-local file's traffic miss L1 and hold the kernel at the
     * L2's throughput */
    static int shared_ok = -1;
    if (shared_ok < 0) {
        const char *e = getenv("GQP_MAP_SHARED");
        shared_ok = !(e && strcmp(e, "0") == 0);
        if (shared_ok) {
            cudaError_t e1 =
                cudaFuncSetAttribute(map_kernel<true, rows, true>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, MAP_SMEM_MAX);
            cudaError_t e2 =
                cudaFuncSetAttribute(map_kernel<false, rows, true>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, MAP_SMEM_MAX);
            if (e1 != cudaSuccess || e2 != cudaSuccess) {
                (void)cudaGetLastError();
                shared_ok = 0;
            }
        }
    }
    const size_t code_sm = a.use_shared ? align16(smem) : 0;
    const size_t reg_sm = (size_t)prog->nregs * rows * GQP_BLOCK * sizeof(int64_t);
    const int in_smem = shared_ok && code_sm + reg_sm <= MAP_SMEM_MAX;
    a.reg_words = (int)(code_sm / sizeof(int64_t));
    const size_t sm = in_smem ? code_sm + reg_sm : code_sm;
    if (in_smem)
        check ? map_kernel<true, rows, true><<<grid, GQP_BLOCK, sm, st>>>(a)
              : map_kernel<false, rows, true><<<grid, GQP_BLOCK, sm, st>>>(a);
    else
        check ? map_kernel<true, rows, false><<<grid, GQP_BLOCK, sm, st>>>(a)
              : map_kernel<false, rows, false><<<grid, GQP_BLOCK, sm, st>>>(a);
    GQP_LAUNCH_TRY(ctx);
    return prim_gpu_status_done(ctx, st_tmp, "map");
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

/* --------------------------------------------------------------- keymap -- */

/* An integer column as the keymap and denseagg kernels read it. */
struct DaCol {
    const void *data;
    const uint8_t *valid; /* NULL: no NULLs */
    int type;             /* PRIM_U8 / PRIM_I32 / PRIM_I64 */
};

/* The kernel view of host-side vector v (device pointers). */
static DaCol da_col(const PrimVec &v) {
    DaCol c;
    c.data = v.data;
    c.valid = v.valid;
    c.type = (int)v.type;
    return c;
}

/* Value r of integer column c as int64, through the read-only cache. */
static __device__ __forceinline__ int64_t da_ld(const DaCol &c, int64_t r) {
    switch (c.type) {
    case PRIM_U8:
        return __ldg((const unsigned char *)c.data + r);
    case PRIM_I32:
        return __ldg((const int *)c.data + r);
    default:
        return __ldg((const long long *)c.data + r);
    }
}

/* 1 when lo <= v < lo + span (span >= 0), exactly (the CPU twin's da_in). */
static __device__ __forceinline__ bool da_in(int64_t v, int64_t lo, int64_t span) {
    return v >= lo && (uint64_t)v - (uint64_t)lo < (uint64_t)span;
}

/* out[key[i] - kmin] = max(out[...], rows ? rows[i] : i) for every i < n
 * whose key is present and in [kmin, kmin + range). out was set to -1. */
__global__ void keymap_kernel(DaCol key, const int64_t *rows, const uint8_t *flags, int64_t n,
                              int64_t kmin, int64_t range, int64_t *out) {
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE) {
        if ((flags && !flags[i]) || (key.valid && !key.valid[i])) continue;
        const int64_t v = da_ld(key, i);
        if (!da_in(v, kmin, range)) continue;
        const long long row = rows ? (long long)rows[i] : (long long)i;
        atomicMax((long long *)out + ((uint64_t)v - (uint64_t)kmin), row);
    }
}

/* GPU twin of prim_cpu_keymap (device pointers): a memset to -1, then one
 * scatter kernel where an atomic max makes the larger row id win a shared
 * slot, as on the CPU. key may be U8, I32 or I64. Asynchronous. Returns 0
 * or -1. */
/* The twins' common body: rows and flags may each be NULL. */
static int gpu_keymap(PrimCtx *ctx, const PrimVec *key, const int64_t *rows, const uint8_t *flags,
                      int64_t n, int64_t kmin, int64_t range, int64_t *out) {
    if (!ctx) return -1;
    if (!key || n < 0 || range < 0 || (range > 0 && !out) || (n > 0 && !key->data))
        return prim_gpu_fail(ctx, "keymap: bad arguments");
    if (key->type != PRIM_U8 && key->type != PRIM_I32 && key->type != PRIM_I64)
        return prim_gpu_fail(ctx, "keymap: key type %d (integers only)", (int)key->type);
    if (range == 0) return 0;
    cudaStream_t st = prim_gpu_stream(ctx);
    GQP_CUDA_TRY(ctx, cudaMemsetAsync(out, 0xff, (size_t)range * sizeof(int64_t), st));
    if (n == 0) return 0;
    keymap_kernel<<<prim_gpu_grid(n), GQP_BLOCK, 0, st>>>(da_col(*key), rows, flags, n, kmin, range,
                                                          out);
    GQP_LAUNCH_TRY(ctx);
    return 0;
}

extern "C" int prim_gpu_keymap(PrimCtx *ctx, const PrimVec *key, const int64_t *rows, int64_t n,
                               int64_t kmin, int64_t range, int64_t *out) {
    return gpu_keymap(ctx, key, rows, nullptr, n, kmin, range, out);
}

extern "C" int prim_gpu_keymap_where(PrimCtx *ctx, const PrimVec *key, const uint8_t *flags,
                                     int64_t n, int64_t kmin, int64_t range, int64_t *out) {
    if (ctx && n > 0 && !flags) return prim_gpu_fail(ctx, "keymap: bad arguments");
    return gpu_keymap(ctx, key, nullptr, flags, n, kmin, range, out);
}

/* ------------------------------------------------------------- denseagg -- */

/* Rows per thread per tile: each column is loaded for DA_ITEMS rows at once
 * (independent loads in flight), Crystal's blocked tile. TUNING: measured
 * on the H100 (bench_prim_gpu, Q1.1 shape, 2^26 rows): 4 rows 0.575 ms, 8
 * rows 0.805 ms (more registers, fewer resident blocks). Loading a fact
 * column read in two roles (Q1.1's lo_discount) through the cache instead
 * of streaming it was predicted to save a fifth of the traffic and measured
 * 0.758 ms (slower): not kept. */
#define DA_ITEMS 4
#define DA_TILE(R) ((int64_t)GQP_BLOCK * (R))
#define DA_NOUT_MAX PRIM_DA_NOUT(PRIM_DA_MAX)
/* Largest per-block shared table set (bytes, one copy) of mode 1. TUNING:
 * 32 KiB leaves room for 7 blocks of 256 threads per H100 SM. */
#define DA_SMEM_MAX 32768

/* How an output combines values. */
enum { DA_ADD = 0, DA_MIN = 1, DA_MAX = 2 };

/* Kernel arguments of denseagg (by value, about 2 KiB; every pointer is
 * device memory). Accumulation modes (template parameter MODE):
 *   0  ngroups == 1: registers, warp shuffles, one atomic per block/output
 *   1  nout * ngroups * 8 <= DA_SMEM_MAX: ncopies shared-memory table sets
 *      per block (warp w uses set w % ncopies), flushed with global atomics
 *   2  otherwise: global atomics on the outputs
 *   3  mode 1 with the lanes of a warp that share a group folded first
 *      (da_fold_peers); its own instantiation, so that mode 1 keeps its
 *      registers (SSB Q4.1, four probes, slowed by a third with the fold
 *      compiled in). Only when GQP_DA_FOLD=1 (measurements): on the H200
 *      at SSB SF 20, one run, mode 1 was faster at every group count
 *      tried (GROUP BY over all 120M rows: 5 groups 6.9 ms vs 8.1 with the
 *      fold, 7 groups 3.3 vs 4.7, 11 groups 3.5 vs 6.0, 50 groups 1.8 vs
 *      4.0; Q4.1 2.7 vs 3.7) */

struct DaArgs {
    int64_t n, ngroups;
    const int64_t *rows; /* fact row ids, or NULL for row = i */
    int nranges, ndims, nkeys, naggs, nout, ncopies;
    DaCol range[PRIM_DA_MAX];
    int64_t lo[PRIM_DA_MAX], hi[PRIM_DA_MAX];
    DaCol fk[PRIM_DA_MAX];
    const int64_t *map[PRIM_DA_MAX];
    int64_t kmin[PRIM_DA_MAX], krange[PRIM_DA_MAX];
    DaCol key[PRIM_DA_MAX];
    int key_dim[PRIM_DA_MAX];
    int64_t key_min[PRIM_DA_MAX], key_span[PRIM_DA_MAX], stride[PRIM_DA_MAX];
    DaCol va[PRIM_DA_MAX], vb[PRIM_DA_MAX];
    int agg[PRIM_DA_MAX], has_a[PRIM_DA_MAX], has_b[PRIM_DA_MAX];
    /* 1: aggregate q's values are never NULL (no validity), so its count
     * of values is the group's row count: not accumulated, copied from
     * out[0] after the pass (TPC-H Q1: 9 folds a row instead of 17) */
    int cnt_rows[PRIM_DA_MAX];
    char op[PRIM_DA_MAX];
    int kind[DA_NOUT_MAX];
    long long init[DA_NOUT_MAX];
    long long *out[DA_NOUT_MAX];
    int *status; /* set to 1 when a sum (or a row's a OP b) overflows int64 */
};

/* v[k] = c at rows r[k] and p[k] = (live[k] and that value is not NULL), for
 * k < R; rows that are not live are not loaded (v = 0). STREAM marks fact
 * columns, read once: loaded evict-first so that keymaps and dimension
 * columns stay in L2. LEAN: 0 the general form; 1 every column INT32
 * without NULLs; 2 that, and a fact column's R rows of a thread are
 * consecutive (r[k] = r[0] + k, 16-byte aligned): with vfull (all R rows
 * exist) one 128-bit load brings them when any is live. */
template <int R, bool STREAM, int LEAN>
static __device__ __forceinline__ void da_tile(const DaCol &c, const int64_t (&r)[R],
                                               const bool (&live)[R], int64_t (&v)[R], bool (&p)[R],
                                               bool vfull = false) {
    const bool stream = STREAM;
    if constexpr (LEAN == 2 && STREAM && R == 4) {
        if (vfull) {
            int4 w = make_int4(0, 0, 0, 0);
            if (live[0] || live[1] || live[2] || live[3])
                w = __ldcs((const int4 *)((const int *)c.data + r[0]));
            v[0] = live[0] ? w.x : 0;
            v[1] = live[1] ? w.y : 0;
            v[2] = live[2] ? w.z : 0;
            v[3] = live[3] ? w.w : 0;
#pragma unroll
            for (int k = 0; k < R; ++k)
                p[k] = live[k];
            return;
        }
    }
#pragma unroll
    for (int k = 0; k < R; ++k)
        v[k] = 0;
    if (LEAN) { /* every column INT32 without NULLs (checked by the host) */
#pragma unroll
        for (int k = 0; k < R; ++k) {
            if (live[k])
                v[k] =
                    stream ? __ldcs((const int *)c.data + r[k]) : __ldg((const int *)c.data + r[k]);
            p[k] = live[k];
        }
        return;
    }
    switch (c.type) {
    case PRIM_U8:
#pragma unroll
        for (int k = 0; k < R; ++k)
            if (live[k])
                v[k] = stream ? __ldcs((const unsigned char *)c.data + r[k])
                              : __ldg((const unsigned char *)c.data + r[k]);
        break;
    case PRIM_I32:
#pragma unroll
        for (int k = 0; k < R; ++k)
            if (live[k])
                v[k] =
                    stream ? __ldcs((const int *)c.data + r[k]) : __ldg((const int *)c.data + r[k]);
        break;
    default:
#pragma unroll
        for (int k = 0; k < R; ++k)
            if (live[k])
                v[k] = stream ? __ldcs((const long long *)c.data + r[k])
                              : __ldg((const long long *)c.data + r[k]);
        break;
    }
    if (c.valid) {
#pragma unroll
        for (int k = 0; k < R; ++k)
            p[k] = live[k] && (stream ? __ldcs((const unsigned char *)c.valid + r[k])
                                      : __ldg((const unsigned char *)c.valid + r[k])) != 0;
    } else {
#pragma unroll
        for (int k = 0; k < R; ++k)
            p[k] = live[k];
    }
}

/* Adds key j's code to g[k] for the live rows (values at rows rr[k] of the
 * key's column: fact rows or dimension rows); a code outside the key's
 * cardinality drops the row (as on the CPU). */
template <int R, bool STREAM, int LEAN>
static __device__ __forceinline__ void da_key(const DaArgs &a, int j, const int64_t (&rr)[R],
                                              bool (&ok)[R], int64_t (&g)[R], bool vfull = false) {
    int64_t v[R];
    bool p[R];
    da_tile<R, STREAM, LEAN>(a.key[j], rr, ok, v, p, vfull);
    const int64_t kmn = a.key_min[j], span = a.key_span[j], st = a.stride[j];
#pragma unroll
    for (int k = 0; k < R; ++k) {
        if (!ok[k]) continue;
        int64_t code = 0;
        if (p[k]) {
            if (!da_in(v[k], kmn, span)) {
                ok[k] = false;
                continue;
            }
            code = (int64_t)((uint64_t)v[k] - (uint64_t)kmn) + 1;
        }
        g[k] += code * st;
    }
}

/* x combined with y by kind; a sum that overflows int64 wraps and sets ov
 * (the CPU twin fails on any partial sum that overflows, as here). */
static __device__ __forceinline__ long long da_comb(int kind, long long x, long long y, bool &ov) {
    if (kind == DA_ADD) {
        const long long s = (long long)((unsigned long long)x + (unsigned long long)y);
        ov |= ((x ^ s) & (y ^ s)) < 0;
        return s;
    }
    if (kind == DA_MIN) return y < x ? y : x;
    return y > x ? y : x;
}

/* Atomically folds v into *p (global or shared memory) by kind; a sum that
 * overflows int64 sets ov. */
static __device__ __forceinline__ void da_atomic(long long *p, int kind, long long v, bool &ov) {
    if (kind == DA_ADD) {
        const long long old = (long long)atomicAdd((unsigned long long *)p, (unsigned long long)v);
        const long long s = (long long)((unsigned long long)old + (unsigned long long)v);
        ov |= ((old ^ s) & (v ^ s)) < 0;
    } else if (kind == DA_MIN) {
        atomicMin(p, v);
    } else {
        atomicMax(p, v);
    }
}

/* Folds x into *p for the lanes of a warp that share a group (peers: the
 * mask of lanes with this lane's group key, this lane included, from
 * __match_any_sync): a shuffle tree over the peers (Westphal's
 * "reduce_peers"), then one atomic by the group's lowest lane when live.
 * Lanes with the most common keys (TPC-H Q1: 4 groups over 60M rows) make
 * one shared-memory atomic per group and warp instead of 32 serialized on
 * one address; distinct keys cost one vote. Every lane of the warp calls. */
static __device__ __forceinline__ void da_fold_peers(long long *p, int kind, long long x,
                                                     unsigned peers, bool live, bool &ov) {
    const int lane = threadIdx.x & 31;
    const bool lead = __ffs(peers) - 1 == lane;
    int rel = __popc(peers & ((1u << lane) - 1u));                   /* position among the peers */
    unsigned rest = lane == 31 ? 0u : peers & (0xfffffffeu << lane); /* higher peers */
    bool act = true;
    while (__any_sync(0xffffffffu, rest != 0)) {
        const int next = __ffs(rest);
        const long long t = __shfl_sync(0xffffffffu, x, (next - 1) & 31);
        const bool odd = (rel & 1) != 0;
        if (act && !odd && next) x = da_comb(kind, x, t, ov);
        rest &= ~__ballot_sync(0xffffffffu, act && odd);
        if (odd) act = false;
        rel >>= 1;
    }
    if (lead && live) da_atomic(p, kind, x, ov);
}

/* Mode 0's end: reduces every thread's NOUT register accumulators over the
 * block (warp shuffles, then shared memory) and folds the block's result
 * into the outputs with one global atomic each, unless the block counted no
 * rows. Every thread of the block must call it. */
template <int NOUT>
static __device__ __forceinline__ void da_block_flush(const DaArgs &a, long long (&acc)[NOUT],
                                                      bool &ov) {
    __shared__ long long red[GQP_BLOCK / 32][NOUT];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int o = 0; o < NOUT; ++o) {
        if (o >= a.nout) break;
        const int kind = a.kind[o];
        long long x = acc[o];
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            x = da_comb(kind, x, __shfl_down_sync(0xffffffffu, x, off), ov);
        if (lane == 0) red[warp][o] = x;
    }
    __syncthreads();
    if (threadIdx.x < (unsigned)a.nout) {
        const int o = threadIdx.x, kind = a.kind[o];
        long long x = red[0][o], cnt = red[0][0];
        for (int w = 1; w < GQP_BLOCK / 32; ++w) {
            x = da_comb(kind, x, red[w][o], ov);
            cnt += red[w][0];
        }
        if (cnt > 0) da_atomic(a.out[o], kind, x, ov);
    }
}

/* The fused filter -> probe -> group -> aggregate pass of prim_gpu_denseagg
 * over tiles of DA_TILE rows (grid-stride over tiles). Per tile, every
 * thread holds DA_ITEMS rows (row base + k * GQP_BLOCK + tid: coalesced) and
 * works column at a time: each range filter, probe and key loads its column
 * only for the rows still alive, so a row stops costing loads as soon as it
 * fails. MODE as DaArgs describes; MAXA >= naggs bounds the aggregates
 * (mode 0 keeps 1 + 2 MAXA register accumulators). CHECK: track int64
 * overflows of sums and of a OP b (false when the planner proved there are
 * none, PrimDenseAgg.nocheck: the tracking is then dead code, and the sum
 * atomics need not return the old value). */
template <int MODE, int MAXA, bool CHECK, int LEAN, int MINB>
__global__ void __launch_bounds__(GQP_BLOCK, MINB) denseagg_kernel(const DaArgs a) {
    constexpr int R = DA_ITEMS, NOUT = PRIM_DA_NOUT(MAXA);
    extern __shared__ long long da_smem[];
    long long *tab = nullptr;
    const int64_t E = (int64_t)a.nout * a.ngroups; /* entries of one table set */
    if (MODE == 1 || MODE == 3) {
        for (int64_t e = threadIdx.x; e < E * a.ncopies; e += blockDim.x)
            da_smem[e] = a.init[(e % E) / a.ngroups];
        __syncthreads();
        tab = da_smem + (int64_t)((threadIdx.x >> 5) % a.ncopies) * E;
    }
    long long acc[NOUT];
#pragma unroll
    for (int o = 0; o < NOUT; ++o)
        acc[o] = o < a.nout ? a.init[o] : 0;
    bool ov = false; /* this thread saw an int64 overflow (reported at the end) */

    for (int64_t base = (int64_t)blockIdx.x * DA_TILE(R); base < a.n;
         base += (int64_t)gridDim.x * DA_TILE(R)) {
        int64_t r[R], g[R];
        bool ok[R];
        /* LEAN 2: a thread's rows consecutive (one 128-bit load a column) */
        const int64_t r0 = base + (LEAN == 2 ? (int64_t)R * threadIdx.x : (int64_t)threadIdx.x);
        const bool vfull = LEAN == 2 && r0 + R <= a.n;
#pragma unroll
        for (int k = 0; k < R; ++k) {
            r[k] = LEAN == 2 ? r0 + k : r0 + (int64_t)k * GQP_BLOCK;
            ok[k] = r[k] < a.n;
            g[k] = 0;
        }
        if (!LEAN && a.rows) {
#pragma unroll
            for (int k = 0; k < R; ++k)
                if (ok[k]) r[k] = __ldcs((const long long *)a.rows + r[k]);
        }
        /* 1. range filters */
        for (int f = 0; f < a.nranges; ++f) {
            int64_t v[R];
            bool p[R];
            da_tile<R, true, LEAN>(a.range[f], r, ok, v, p, vfull);
            const int64_t lo = a.lo[f], hi = a.hi[f];
#pragma unroll
            for (int k = 0; k < R; ++k)
                ok[k] = p[k] && v[k] >= lo && v[k] <= hi;
        }
        /* 2. probes, each followed by the keys on its dimension */
        for (int d = 0; d < a.ndims; ++d) {
            int64_t v[R], rd[R];
            bool p[R];
            da_tile<R, true, LEAN>(a.fk[d], r, ok, v, p, vfull);
            const int64_t kmin = a.kmin[d], kr = a.krange[d];
            const long long *map = (const long long *)a.map[d];
#pragma unroll
            for (int k = 0; k < R; ++k) {
                const bool in = p[k] && da_in(v[k], kmin, kr);
                rd[k] = in ? __ldg(map + ((uint64_t)v[k] - (uint64_t)kmin)) : -1;
                ok[k] = in && rd[k] >= 0;
            }
            for (int j = 0; j < a.nkeys; ++j)
                if (a.key_dim[j] == d) da_key<R, false, LEAN>(a, j, rd, ok, g);
        }
        /* 3. keys on fact columns */
        for (int j = 0; j < a.nkeys; ++j)
            if (a.key_dim[j] == -1) da_key<R, true, LEAN>(a, j, r, ok, g, vfull);
        /* 4. aggregates (mode 3: folded over the lanes of a group first;
         * the warp is converged here: every lane walks the same tiles) */
        unsigned peers[R], live[R];
        constexpr bool fold = MODE == 3;
        if (fold) {
            /* a tile where no lane's row passed costs one vote; a lane
             * whose row failed is a peer of no other (its own key below
             * 0), so it ends the shuffle tree */
            const int lane = threadIdx.x & 31;
#pragma unroll
            for (int k = 0; k < R; ++k) {
                live[k] = __ballot_sync(0xffffffffu, ok[k]);
                peers[k] =
                    live[k] ? __match_any_sync(0xffffffffu, ok[k] ? (long long)g[k] : -1ll - lane)
                            : 0u;
            }
#pragma unroll
            for (int k = 0; k < R; ++k)
                if (live[k]) da_fold_peers(&tab[ok[k] ? g[k] : 0], DA_ADD, 1, peers[k], ok[k], ov);
        }
#pragma unroll
        for (int k = 0; k < R; ++k) {
            if (!ok[k]) continue;
            if (MODE == 0)
                acc[0] += 1;
            else if (MODE == 2)
                atomicAdd((unsigned long long *)&a.out[0][g[k]], 1ull);
            else if (!fold)
                atomicAdd((unsigned long long *)&tab[g[k]], 1ull);
        }
#pragma unroll
        for (int q = 0; q < MAXA; ++q) {
            if (q >= a.naggs) break;
            int64_t v[R];
            bool p[R];
            if (a.has_a[q]) {
                da_tile<R, true, LEAN>(a.va[q], r, ok, v, p, vfull);
                if (a.has_b[q]) {
                    int64_t u[R];
                    bool pu[R];
                    da_tile<R, true, LEAN>(a.vb[q], r, ok, u, pu, vfull);
                    const char op = a.op[q];
#pragma unroll
                    for (int k = 0; k < R; ++k) {
                        const uint64_t x = (uint64_t)v[k], y = (uint64_t)u[k];
                        const int64_t w = (int64_t)(op == '+' ? x + y : op == '-' ? x - y : x * y);
                        p[k] = p[k] && pu[k];
                        /* a OP b overflowed on a row with both: the map's error */
                        const bool o = op == '+'   ? ((v[k] ^ w) & (u[k] ^ w)) < 0
                                       : op == '-' ? ((v[k] ^ u[k]) & (v[k] ^ w)) < 0
                                                   : __mul64hi((long long)v[k], (long long)u[k]) !=
                                                         (w < 0 ? -1ll : 0ll);
                        ov |= p[k] && o;
                        v[k] = w;
                    }
                }
            } else {
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    v[k] = 0;
                    p[k] = ok[k];
                }
            }
            const int ag = a.agg[q], kind = a.kind[1 + 2 * q];
            if (fold) {
                const long long idv = a.init[1 + 2 * q];
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    if (!live[k]) continue; /* warp-uniform */
                    const bool take = ok[k] && (ag == AGG_COUNT_STAR || p[k]);
                    const long long x = !take                                       ? idv
                                        : (ag == AGG_COUNT_STAR || ag == AGG_COUNT) ? 1
                                                                                    : v[k];
                    const int64_t gk = ok[k] ? g[k] : 0;
                    da_fold_peers(tab + (int64_t)(1 + 2 * q) * a.ngroups + gk, kind, x, peers[k],
                                  ok[k], ov);
                    if (!a.cnt_rows[q])
                        da_fold_peers(tab + (int64_t)(2 + 2 * q) * a.ngroups + gk, DA_ADD,
                                      ok[k] && p[k] ? 1 : 0, peers[k], ok[k], ov);
                }
            } else {
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    if (!ok[k]) continue;
                    const bool take = ag == AGG_COUNT_STAR || p[k];
                    const long long x = (ag == AGG_COUNT_STAR || ag == AGG_COUNT) ? 1 : v[k];
                    if (MODE == 0) {
                        if (take) acc[1 + 2 * q] = da_comb(kind, acc[1 + 2 * q], x, ov);
                        acc[2 + 2 * q] += p[k];
                    } else { /* mode 2, or mode 1 without the fold */
                        long long *t1 = MODE != 2 ? tab + (int64_t)(1 + 2 * q) * a.ngroups + g[k]
                                                  : a.out[1 + 2 * q] + g[k];
                        long long *t2 = MODE != 2 ? tab + (int64_t)(2 + 2 * q) * a.ngroups + g[k]
                                                  : a.out[2 + 2 * q] + g[k];
                        if (take) da_atomic(t1, kind, x, ov);
                        if (p[k] && !a.cnt_rows[q]) atomicAdd((unsigned long long *)t2, 1ull);
                    }
                }
            }
        }
    }

    if (MODE == 0) {
        da_block_flush<NOUT>(a, acc, ov);
    } else if (MODE == 1 || MODE == 3) {
        __syncthreads();
        for (int64_t e = threadIdx.x; e < E; e += blockDim.x) {
            const int o = (int)(e / a.ngroups);
            const int64_t grp = e - (int64_t)o * a.ngroups;
            long long cnt = 0;
            for (int c = 0; c < a.ncopies; ++c)
                cnt += da_smem[(int64_t)c * E + grp];
            if (cnt == 0) continue; /* no row of this block fell into the group */
            const int kind = a.kind[o];
            long long x = da_smem[e];
            for (int c = 1; c < a.ncopies; ++c)
                x = da_comb(kind, x, da_smem[(int64_t)c * E + e], ov);
            da_atomic(a.out[o] + grp, kind, x, ov);
        }
    }
    if (CHECK && ov) *a.status = 1;
}

/* out[o][g] = init[o] for every output o and group g. */
__global__ void denseagg_init(const DaArgs a) {
    for (int64_t g = GQP_GRID_START; g < a.ngroups; g += GQP_GRID_STRIDE)
        for (int o = 0; o < a.nout; ++o)
            a.out[o][g] = a.init[o];
}

/* Launches denseagg_kernel<MODE, MAXA, CHECK> with smem bytes of dynamic
 * shared memory: as many blocks as fit on the device at once (occupancy
 * times SM count), no more than there are tiles. Returns 0 or -1. */
template <int MODE, int MAXA, bool CHECK, int LEAN, int MINB>
static int da_launch1(PrimCtx *ctx, const DaArgs &a, size_t smem) {
    constexpr int R = DA_ITEMS;
    int sms = 0, per_sm = 0;
    if (prim_gpu_sm_count(ctx, &sms) != 0) return -1;
    GQP_CUDA_TRY(ctx,
                 cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                     &per_sm, denseagg_kernel<MODE, MAXA, CHECK, LEAN, MINB>, GQP_BLOCK, smem));
    if (per_sm < 1) per_sm = 1;
    const int64_t tiles = (a.n + DA_TILE(R) - 1) / DA_TILE(R);
    int64_t grid = (int64_t)sms * per_sm;
    if (grid > tiles) grid = tiles;
    if (grid < 1) grid = 1;
    denseagg_kernel<MODE, MAXA, CHECK, LEAN, MINB>
        <<<(unsigned)grid, GQP_BLOCK, smem, prim_gpu_stream(ctx)>>>(a);
    GQP_LAUNCH_TRY(ctx);
    return 0;
}

/* The lean form (every column INT32 without NULLs, fact rows in order: one
 * load path, no validity) for the unchecked shapes of modes 0-2, and its
 * register cap in mode 1 (8 resident blocks per SM; GQP_DA_MINB=0: none);
 * otherwise the general kernel. TUNING (issue 12): Nsight Compute on the
 * H200, SSB SF 10: the general kernel issues an instruction every 1.8
 * cycles with 48-64 registers (50-62% occupancy), 1.5 TB/s on Q1.1, 0.6-0.8
 * TB/s on Q2.1-Q4.1, stalled on loads. Measured on the H200, SSB SF 20,
 * one call, answers identical (md5): the lean form 15-21% faster on Q1.x,
 * Q2.x, Q3.1 and Q4.1 (Q1.1 1.04 -> 0.84 ms, Q3.1 2.31 -> 1.82, Q4.1 2.78
 * -> 2.28); capped at 6 or 8 blocks (spilling) mode 2 slower by 5-25%,
 * mode 0 unchanged, mode 1 (Q4.x) 3-12% faster at 8. Tried and removed
 * (same run, answers identical): 8 rows per thread (80-126 registers)
 * 0-10% slower; a bitmap instead of the 8-byte keymap for dimensions that
 * are pure filters (Q1.x's date, Q4.1's part and supplier; predicted 10%
 * faster on Q1.x) no faster within the runs' 5-10% spread. */
template <int MODE, int MAXA, bool CHECK>
static int da_launch(PrimCtx *ctx, const DaArgs &a, size_t smem, int lean, int minb) {
    if constexpr (!CHECK && MODE != 3) {
        /* mode 1 capped at 8 blocks (32 registers; measured faster on SSB
         * Q4.x) unless GQP_DA_MINB=0; modes 0 and 2 gained nothing by it */
        if constexpr (MODE == 1)
            if (lean && minb != 0)
                return lean == 2 ? da_launch1<MODE, MAXA, false, 2, 8>(ctx, a, smem)
                                 : da_launch1<MODE, MAXA, false, 1, 8>(ctx, a, smem);
        if (lean)
            return lean == 2 ? da_launch1<MODE, MAXA, false, 2, 0>(ctx, a, smem)
                             : da_launch1<MODE, MAXA, false, 1, 0>(ctx, a, smem);
    }
    return da_launch1<MODE, MAXA, CHECK, 0, 0>(ctx, a, smem);
}

/* 1 when column c is INT32 without NULLs (the lean kernel's one form). */
static bool da_lean_col(const DaCol &c) {
    return c.type == PRIM_I32 && !c.valid;
}

/* 1 when fact column c's data is 16-byte aligned (the lean kernel's
 * 128-bit loads). */
static bool da_vec_col(const DaCol &c) {
    return ((uintptr_t)c.data & 15u) == 0;
}

/* GPU twin of prim_cpu_denseagg (device pointers in the vectors; spec, in
 * and out are host arrays). One init kernel sets the outputs to their
 * identities, then one fused kernel (mode 0, 1 or 2 by the table size, see
 * DaArgs) accumulates with integer atomics, so the result does not depend
 * on scheduling. The spec travels as a kernel argument: no device
 * temporaries, no host synchronization. A sum that overflows int64 sets
 * *ctx->status (without ctx->status: this call synchronizes and returns -1
 * with "integer overflow"). Returns 0 or -1. */
extern "C" int prim_gpu_denseagg(PrimCtx *ctx, const PrimDenseAgg *spec, const PrimVec *in,
                                 int64_t n, PrimVec *out) {
    if (!ctx) return -1;
    DaArgs a;
    memset(&a, 0, sizeof a);
    if (prim_denseagg_check(ctx, spec, in, n, out, a.stride) != 0) return -1;
    const PrimDenseAgg *s = spec;
    a.n = n;
    a.ngroups = s->ngroups;
    a.rows = s->rows >= 0 ? (const int64_t *)in[s->rows].data : nullptr;
    a.nranges = s->nranges;
    a.ndims = s->ndims;
    a.nkeys = s->nkeys;
    a.naggs = s->naggs;
    a.nout = PRIM_DA_NOUT(s->naggs);
    for (int f = 0; f < s->nranges; ++f) {
        a.range[f] = da_col(in[s->range_col[f]]);
        a.lo[f] = s->range_lo[f];
        a.hi[f] = s->range_hi[f];
    }
    for (int d = 0; d < s->ndims; ++d) {
        a.fk[d] = da_col(in[s->dim_fk[d]]);
        a.map[d] = (const int64_t *)in[s->dim_map[d]].data;
        a.kmin[d] = s->dim_kmin[d];
        a.krange[d] = s->dim_range[d];
    }
    for (int j = 0; j < s->nkeys; ++j) {
        a.key[j] = da_col(in[s->key_col[j]]);
        a.key_dim[j] = s->key_dim[j];
        a.key_min[j] = s->key_min[j];
        a.key_span[j] = s->key_card[j] - 1;
    }
    a.kind[0] = DA_ADD;
    a.init[0] = 0;
    a.out[0] = (long long *)out[0].data;
    for (int q = 0; q < s->naggs; ++q) {
        a.agg[q] = (int)s->agg[q];
        a.has_a[q] = s->val_a[q] >= 0;
        a.has_b[q] = a.has_a[q] && s->val_b[q] >= 0;
        if (a.has_a[q]) a.va[q] = da_col(in[s->val_a[q]]);
        if (a.has_b[q]) a.vb[q] = da_col(in[s->val_b[q]]);
        a.op[q] = s->val_op[q];
        const int kind = s->agg[q] == AGG_MIN ? DA_MIN : s->agg[q] == AGG_MAX ? DA_MAX : DA_ADD;
        a.kind[1 + 2 * q] = kind;
        a.init[1 + 2 * q] = kind == DA_MIN ? INT64_MAX : kind == DA_MAX ? INT64_MIN : 0;
        a.kind[2 + 2 * q] = DA_ADD;
        a.init[2 + 2 * q] = 0;
        a.out[1 + 2 * q] = (long long *)out[1 + 2 * q].data;
        a.out[2 + 2 * q] = (long long *)out[2 + 2 * q].data;
        a.cnt_rows[q] = !a.has_a[q] || (!a.va[q].valid && (!a.has_b[q] || !a.vb[q].valid));
    }
    cudaStream_t st = prim_gpu_stream(ctx);
    denseagg_init<<<prim_gpu_grid(a.ngroups), GQP_BLOCK, 0, st>>>(a);
    GQP_LAUNCH_TRY(ctx);
    if (n == 0) return 0;
    DevBuf st_tmp(ctx);
    if (!(a.status = prim_gpu_status(ctx, st_tmp))) return -1;

    /* the lean kernel when every column it reads is INT32 without NULLs
     * and rows are in order (GQP_DA_LEAN=0 turns it off; measurements) */
    bool lean = !a.rows;
    for (int f = 0; f < a.nranges; ++f)
        lean = lean && da_lean_col(a.range[f]);
    for (int d = 0; d < a.ndims; ++d)
        lean = lean && da_lean_col(a.fk[d]);
    for (int j = 0; j < a.nkeys; ++j)
        lean = lean && da_lean_col(a.key[j]);
    for (int q = 0; q < a.naggs; ++q)
        lean =
            lean && (!a.has_a[q] || da_lean_col(a.va[q])) && (!a.has_b[q] || da_lean_col(a.vb[q]));
    const char *le = getenv("GQP_DA_LEAN"), *me = getenv("GQP_DA_MINB");
    if (le && strcmp(le, "0") == 0) lean = false;
    /* ... with 128-bit loads of the fact columns when every one is 16-byte
     * aligned, on request only (GQP_DA_VEC=1) until measured on a GPU:
     * written in the twenty-fourth session, whose device calls never got a
     * machine; otherwise the lean kernel's one load a row */
    bool vec = lean && DA_ITEMS == 4;
    for (int f = 0; f < a.nranges; ++f)
        vec = vec && da_vec_col(a.range[f]);
    for (int d = 0; d < a.ndims; ++d)
        vec = vec && da_vec_col(a.fk[d]);
    for (int j = 0; j < a.nkeys; ++j)
        vec = vec && (a.key_dim[j] >= 0 || da_vec_col(a.key[j]));
    for (int q = 0; q < a.naggs; ++q)
        vec = vec && (!a.has_a[q] || da_vec_col(a.va[q])) && (!a.has_b[q] || da_vec_col(a.vb[q]));
    const char *ve = getenv("GQP_DA_VEC");
    if (!ve || strcmp(ve, "1") != 0) vec = false;
    const int lform = vec ? 2 : lean ? 1 : 0;
    const int minb = me ? atoi(me) : -1;
    int rc;
    const int64_t set_bytes = a.ngroups <= DA_SMEM_MAX
                                  ? a.ngroups * a.nout * (int64_t)sizeof(long long)
                                  : DA_SMEM_MAX + 1;
    /* each shape with (CHECK) and without (nocheck) the overflow tracking */
    const bool chk = !s->nocheck;
    if (a.ngroups == 1) {
        if (a.naggs <= 1)
            rc = chk ? da_launch<0, 1, true>(ctx, a, 0, lform, minb)
                     : da_launch<0, 1, false>(ctx, a, 0, lform, minb);
        else if (a.naggs <= 2)
            rc = chk ? da_launch<0, 2, true>(ctx, a, 0, lform, minb)
                     : da_launch<0, 2, false>(ctx, a, 0, lform, minb);
        else if (a.naggs <= 4)
            rc = chk ? da_launch<0, 4, true>(ctx, a, 0, lform, minb)
                     : da_launch<0, 4, false>(ctx, a, 0, lform, minb);
        else
            rc = chk ? da_launch<0, PRIM_DA_MAX, true>(ctx, a, 0, lform, minb)
                     : da_launch<0, PRIM_DA_MAX, false>(ctx, a, 0, lform, minb);
    } else if (set_bytes <= DA_SMEM_MAX) {
        /* the peer fold (mode 3) only on request: slower wherever measured */
        const char *fe = getenv("GQP_DA_FOLD");
        const bool fold = fe && strcmp(fe, "1") == 0;
        int copies = (int)(DA_SMEM_MAX / set_bytes);
        if (copies > GQP_BLOCK / 32) copies = GQP_BLOCK / 32;
        a.ncopies = copies;
        const size_t smem = (size_t)(set_bytes * copies);
        if (fold)
            rc = chk ? da_launch<3, PRIM_DA_MAX, true>(ctx, a, smem, lform, minb)
                     : da_launch<3, PRIM_DA_MAX, false>(ctx, a, smem, lform, minb);
        else
            rc = chk ? da_launch<1, PRIM_DA_MAX, true>(ctx, a, smem, lform, minb)
                     : da_launch<1, PRIM_DA_MAX, false>(ctx, a, smem, lform, minb);
    } else {
        rc = chk ? da_launch<2, PRIM_DA_MAX, true>(ctx, a, 0, lform, minb)
                 : da_launch<2, PRIM_DA_MAX, false>(ctx, a, 0, lform, minb);
    }
    if (rc != 0) return rc;
    /* modes 1 and 2 left these counts out: they are the row counts */
    for (int q = 0; q < s->naggs; ++q)
        if (a.cnt_rows[q] && a.ngroups > 1)
            GQP_CUDA_TRY(ctx, cudaMemcpyAsync(a.out[2 + 2 * q], a.out[0],
                                              (size_t)a.ngroups * sizeof(long long),
                                              cudaMemcpyDeviceToDevice, st));
    return prim_gpu_status_done(ctx, st_tmp, "denseagg");
}

/* ------------------------------------------------------------ likedict -- */

/* One character at *z, advancing *z: planner/like.c's utf8_read (a lead
 * byte >= 0xC0 takes every following 10xxxxxx byte; other bytes are
 * themselves). */
static __device__ uint32_t like_utf8(const unsigned char *&z) {
    uint32_t c = *z++;
    if (c >= 0xC0) {
        c = c >= 0xF0 ? c & 0x07 : c >= 0xE0 ? c & 0x0F : c & 0x1F;
        while ((*z & 0xC0) == 0x80)
            c = (c << 6) | (*z++ & 0x3F);
    }
    return c;
}

static __device__ uint32_t like_fold(uint32_t c) {
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* s LIKE p by SQLite's rules (planner/like.c): the greedy matcher with one
 * backtracking point, the last `%` seen: on a mismatch its match grows by
 * one character. Linear in |s| per `%`, no recursion. */
static __device__ int like_match_dev(const unsigned char *p, const unsigned char *s) {
    const unsigned char *star_p = nullptr, *star_s = nullptr;
    for (;;) {
        if (*p == '%') {
            while (*p == '%')
                p++;
            star_p = p;
            star_s = s;
            continue;
        }
        if (!*s) break;
        if (*p) {
            const unsigned char *p1 = p, *s1 = s;
            const uint32_t c = like_utf8(p1), sc = like_utf8(s1);
            if (c == '_' || like_fold(c) == like_fold(sc)) {
                p = p1;
                s = s1;
                continue;
            }
        }
        if (!star_p) return 0;
        like_utf8(star_s);
        p = star_p;
        s = star_s;
    }
    while (*p == '%')
        p++;
    return *p == 0;
}

__global__ void likedict_kernel(const char *bytes, const int64_t *offsets, int64_t n,
                                const unsigned char *pat, int neg, uint8_t *out) {
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE)
        out[i] = (uint8_t)(like_match_dev(pat, (const unsigned char *)bytes +
                                                   (offsets[i] - offsets[0])) ^
                           neg);
}

extern "C" int prim_gpu_likedict(PrimCtx *ctx, const char *bytes, const int64_t *offsets, int64_t n,
                                 const char *pattern, int negated, uint8_t *out) {
    if (prim_gpu_ctx_ok(ctx) != 0) return -1;
    if (n < 0 || !pattern || (n > 0 && (!bytes || !offsets || !out)))
        return prim_gpu_fail(ctx, "likedict: bad arguments");
    if (n == 0) return 0;
    cudaStream_t st = prim_gpu_stream(ctx);
    const size_t plen = strlen(pattern) + 1;
    DevBuf pat(ctx);
    if (pat.alloc(plen) != 0) return -1;
    GQP_CUDA_TRY(ctx, cudaMemcpyAsync(pat.p, pattern, plen, cudaMemcpyHostToDevice, st));
    likedict_kernel<<<prim_gpu_grid(n), GQP_BLOCK, 0, st>>>(
        bytes, offsets, n, pat.as<const unsigned char>(), negated ? 1 : 0, out);
    GQP_LAUNCH_TRY(ctx);
    return 0;
}
