/*
 * sort_join.cu -- GPU twins built on cub::DeviceRadixSort: sort (successive
 * stable LSD passes over order-preserving unsigned keys) and join (hash join
 * on a key-sorted build side). Contracts are the CPU twins' in
 * primitives/primitives.h with device pointers. Only three radix-sort
 * instantiations exist (8-, 32- and 64-bit keys, int64 payload); join reuses
 * the 64-bit one.
 */
#include <stdint.h>

#include <stdlib.h>
#include <string.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "primitives/gpu/gpu_util.cuh"

/* Temporary bytes cub::DeviceRadixSort::SortPairs (DoubleBuffer form) needs
 * for n items of key type K with an int64 payload; 0 on error (recorded). */
template <typename K> static int radix_temp_bytes(PrimCtx *ctx, int64_t n, size_t *bytes) {
    cub::DoubleBuffer<K> k(nullptr, nullptr);
    cub::DoubleBuffer<int64_t> v(nullptr, nullptr);
    size_t b = 0;
    GQP_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(nullptr, b, k, v, n, 0, (int)sizeof(K) * 8,
                                                      prim_gpu_stream(ctx)));
    *bytes = b;
    return 0;
}

/* One stable radix pass over bits [0, end_bit) of keys, carrying vals. The
 * DoubleBuffers' selectors tell where the sorted data landed. */
template <typename K>
static int radix_pass(PrimCtx *ctx, void *temp, size_t temp_bytes, cub::DoubleBuffer<K> &keys,
                      cub::DoubleBuffer<int64_t> &vals, int64_t n, int end_bit) {
    size_t b = temp_bytes;
    GQP_CUDA_TRY(ctx, cub::DeviceRadixSort::SortPairs(temp, b, keys, vals, n, 0, end_bit,
                                                      prim_gpu_stream(ctx)));
    return 0;
}

/* ----------------------------------------------------------------- sort -- */

/* Order-preserving unsigned image of row r of a column (ascending): U8 as
 * is; signed ints with the sign bit flipped; floats with the IEEE flip
 * (negative: all bits inverted; positive: sign bit set), -0.0 folded onto
 * +0.0 (they compare equal); NaNs keep their bits, as in the CPU twin.
 * 32-bit images fit in the low 32 bits. */
static __device__ __forceinline__ uint64_t sort_image(const void *d, int type, int64_t r) {
    switch (type) {
    case PRIM_U8:
        return ((const uint8_t *)d)[r];
    case PRIM_I32:
        return (uint32_t)((const int32_t *)d)[r] ^ 0x80000000u;
    case PRIM_I64:
        return (uint64_t)((const int64_t *)d)[r] ^ 0x8000000000000000ull;
    case PRIM_F32: {
        const float f = ((const float *)d)[r];
        const uint32_t u = f == 0.0f ? 0u : __float_as_uint(f);
        return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    }
    default: {
        const double f = ((const double *)d)[r];
        const uint64_t u = f == 0.0 ? 0ull : (uint64_t)__double_as_longlong(f);
        return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
    }
    }
}

/* out[i] = key image of row perm[i] (perm == NULL: row i), inverted for a
 * descending key; NULL rows get 0 so that the pass keeps their order (the
 * null pass places them). */
template <typename K>
__global__ void sort_key_kernel(const void *d, const uint8_t *v, int type, int desc,
                                const int64_t *perm, int64_t n, K *out) {
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE) {
        const int64_t r = perm ? perm[i] : i;
        K k = 0;
        if (!v || v[r]) {
            k = (K)sort_image(d, type, r);
            if (desc) k = (K)~k;
        }
        out[i] = k;
    }
}

/* out[i] = rank of row perm[i]'s NULL flag: ascending NULL 0 / value 1,
 * descending value 0 / NULL 1 (NULLs first ascending, last descending). */
__global__ void sort_null_kernel(const uint8_t *v, int desc, const int64_t *perm, int64_t n,
                                 uint8_t *out) {
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE) {
        const int isnull = !v[perm[i]];
        out[i] = (uint8_t)(desc ? isnull : !isnull);
    }
}

/* p[i] = i. */
__global__ void iota_kernel(int64_t *p, int64_t n) {
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE)
        p[i] = i;
}

/* ------------------------------------------------------- small sorts --
 * Up to SORT_SMALL_N rows and SORT_SMALL_KEYS keys (a query's final ORDER
 * BY over its groups, the range sort's candidates): one block sorts them
 * in shared memory, a bitonic network over (each key's NULL rank and
 * image, then the row), so the order is the radix passes' stable one;
 * one launch instead of some ten per key. Off unless GQP_SORT_SMALL=1:
 * on the H200 (SSB SF 1, bench_gqp A/B in one call) the node itself went
 * from 0.12-0.15 to 0.014 ms and Q2.x / Q3.x gained 5-10%, but Q4.x lost
 * 15-20% end to end in both rounds, not explained yet. */
#define SORT_SMALL_N 1024
#define SORT_SMALL_KEYS 4

struct SmallSortKeys {
    const void *data[SORT_SMALL_KEYS];
    const uint8_t *valid[SORT_SMALL_KEYS];
    int type[SORT_SMALL_KEYS];
    int desc[SORT_SMALL_KEYS];
    int nkeys;
};

__global__ void __launch_bounds__(SORT_SMALL_N)
    small_sort_kernel(const __grid_constant__ SmallSortKeys K, int n, int p2, int64_t *perm) {
    __shared__ unsigned long long img[SORT_SMALL_KEYS][SORT_SMALL_N];
    __shared__ uint8_t nr[SORT_SMALL_KEYS][SORT_SMALL_N];
    __shared__ unsigned short slot[SORT_SMALL_N];
    const int t = threadIdx.x;
    if (t < n)
        for (int k = 0; k < K.nkeys; ++k) {
            const int isnull = K.valid[k] && !K.valid[k][t];
            unsigned long long e =
                isnull ? 0ull : (unsigned long long)sort_image(K.data[k], K.type[k], t);
            if (K.desc[k] && !isnull) e = ~e;
            img[k][t] = e;
            nr[k][t] = (uint8_t)(K.desc[k] ? isnull : !isnull);
        }
    if (t < p2) slot[t] = (unsigned short)t;
    __syncthreads();
    /* a before b: rows past n last, then the keys, then the row */
    auto before = [&](int a, int b) -> bool {
        if (a >= n || b >= n) return a < b;
        for (int k = 0; k < K.nkeys; ++k) {
            if (nr[k][a] != nr[k][b]) return nr[k][a] < nr[k][b];
            if (img[k][a] != img[k][b]) return img[k][a] < img[k][b];
        }
        return a < b;
    };
    for (int size = 2; size <= p2; size <<= 1)
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            if (t < p2) {
                const int q = t ^ stride;
                if (q > t) {
                    const int a = slot[t], b = slot[q];
                    const bool up = (t & size) == 0;
                    if (before(b, a) == up) {
                        slot[t] = (unsigned short)b;
                        slot[q] = (unsigned short)a;
                    }
                }
            }
            __syncthreads();
        }
    if (t < n) perm[t] = slot[t];
}

/* 1 when the small-sort kernel is switched on (GQP_SORT_SMALL=1, read once). */
static int sort_small_on(void) {
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("GQP_SORT_SMALL");
        on = e && strcmp(e, "1") == 0;
    }
    return on;
}

/* GPU twin of prim_cpu_sort: perm (device, n values) = the stable
 * permutation ordering rows by keys[0..nkeys) lexicographically. Successive
 * stable cub radix passes from the last key to the first, each on the key
 * gathered through the current permutation (the first pass reads the key
 * directly); a nullable key gets a second 8-bit pass on its NULL flag right
 * after its value pass. Temporary memory: two key buffers (n x widest key),
 * one permutation buffer (n x 8) and CUB's temp storage, from ctx->alloc.
 * Asynchronous. Returns 0 or -1. */
extern "C" int prim_gpu_sort(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys,
                             int64_t n, int64_t *perm) {
    if (prim_gpu_ctx_ok(ctx) != 0) return -1;
    if (n < 0 || nkeys < 0 || (nkeys > 0 && !keys))
        return prim_gpu_fail(ctx, "sort: bad arguments");
    if (n == 0) return 0;
    if (!perm) return prim_gpu_fail(ctx, "sort: missing output");
    cudaStream_t st = prim_gpu_stream(ctx);
    size_t kwidth = 0, temp_bytes = 0;
    int need[3] = {0, 0, 0}; /* 8-, 32-, 64-bit passes */
    for (int k = 0; k < nkeys; ++k) {
        if (!keys[k].data || (int)keys[k].type < PRIM_U8 || (int)keys[k].type > PRIM_F64)
            return prim_gpu_fail(ctx, "sort: key %d has no data", k);
        const size_t w = prim_type_width(keys[k].type);
        kwidth = w > kwidth ? w : kwidth;
        need[w == 1 ? 0 : w == 4 ? 1 : 2] = 1;
        if (keys[k].valid) need[0] = 1;
    }
    if (nkeys > 0 && nkeys <= SORT_SMALL_KEYS && n <= SORT_SMALL_N && sort_small_on()) {
        SmallSortKeys K;
        memset(&K, 0, sizeof K);
        K.nkeys = nkeys;
        for (int k = 0; k < nkeys; ++k) {
            K.data[k] = keys[k].data;
            K.valid[k] = keys[k].valid;
            K.type[k] = (int)keys[k].type;
            K.desc[k] = desc ? desc[k] != 0 : 0;
        }
        int p2 = 1;
        while (p2 < n)
            p2 <<= 1;
        const int threads = p2 < 32 ? 32 : p2;
        small_sort_kernel<<<1, threads, 0, st>>>(K, (int)n, p2, perm);
        GQP_LAUNCH_TRY(ctx);
        return 0;
    }
    iota_kernel<<<prim_gpu_grid(n), GQP_BLOCK, 0, st>>>(perm, n);
    GQP_LAUNCH_TRY(ctx);
    if (nkeys == 0) return 0;
    size_t b = 0;
    if (need[0]) {
        if (radix_temp_bytes<uint8_t>(ctx, n, &b) != 0) return -1;
        temp_bytes = b > temp_bytes ? b : temp_bytes;
    }
    if (need[1]) {
        if (radix_temp_bytes<uint32_t>(ctx, n, &b) != 0) return -1;
        temp_bytes = b > temp_bytes ? b : temp_bytes;
    }
    if (need[2]) {
        if (radix_temp_bytes<uint64_t>(ctx, n, &b) != 0) return -1;
        temp_bytes = b > temp_bytes ? b : temp_bytes;
    }
    DevBuf k0(ctx), k1(ctx), palt(ctx), temp(ctx);
    if (k0.alloc((size_t)n * kwidth) != 0 || k1.alloc((size_t)n * kwidth) != 0 ||
        palt.alloc((size_t)n * sizeof(int64_t)) != 0 || temp.alloc(temp_bytes) != 0)
        return -1;
    cub::DoubleBuffer<int64_t> vals(perm, palt.as<int64_t>());
    const unsigned grid = prim_gpu_grid(n);
    for (int k = nkeys - 1; k >= 0; --k) {
        const PrimVec *key = &keys[k];
        const int dk = desc ? desc[k] != 0 : 0;
        /* The first pass runs on the identity permutation: read keys directly. */
        const int64_t *cur = k == nkeys - 1 ? nullptr : vals.Current();
        switch (prim_type_width(key->type)) {
        case 1: {
            cub::DoubleBuffer<uint8_t> kb(k0.as<uint8_t>(), k1.as<uint8_t>());
            sort_key_kernel<uint8_t><<<grid, GQP_BLOCK, 0, st>>>(
                key->data, key->valid, (int)key->type, dk, cur, n, kb.Current());
            GQP_LAUNCH_TRY(ctx);
            if (radix_pass<uint8_t>(ctx, temp.p, temp.bytes, kb, vals, n, 8) != 0) return -1;
            break;
        }
        case 4: {
            cub::DoubleBuffer<uint32_t> kb(k0.as<uint32_t>(), k1.as<uint32_t>());
            sort_key_kernel<uint32_t><<<grid, GQP_BLOCK, 0, st>>>(
                key->data, key->valid, (int)key->type, dk, cur, n, kb.Current());
            GQP_LAUNCH_TRY(ctx);
            if (radix_pass<uint32_t>(ctx, temp.p, temp.bytes, kb, vals, n, 32) != 0) return -1;
            break;
        }
        default: {
            cub::DoubleBuffer<uint64_t> kb(k0.as<uint64_t>(), k1.as<uint64_t>());
            sort_key_kernel<uint64_t><<<grid, GQP_BLOCK, 0, st>>>(
                key->data, key->valid, (int)key->type, dk, cur, n, kb.Current());
            GQP_LAUNCH_TRY(ctx);
            if (radix_pass<uint64_t>(ctx, temp.p, temp.bytes, kb, vals, n, 64) != 0) return -1;
            break;
        }
        }
        if (key->valid) {
            cub::DoubleBuffer<uint8_t> kb(k0.as<uint8_t>(), k1.as<uint8_t>());
            sort_null_kernel<<<grid, GQP_BLOCK, 0, st>>>(key->valid, dk, vals.Current(), n,
                                                         kb.Current());
            GQP_LAUNCH_TRY(ctx);
            if (radix_pass<uint8_t>(ctx, temp.p, temp.bytes, kb, vals, n, 1) != 0) return -1;
        }
    }
    if (vals.Current() != perm)
        GQP_CUDA_TRY(ctx, cudaMemcpyAsync(perm, vals.Current(), (size_t)n * sizeof(int64_t),
                                          cudaMemcpyDeviceToDevice, st));
    return 0;
}

/* ----------------------------------------------------------- sort range --
 * GPU twin of prim_cpu_sort_range, by a radix select on the first key's
 * image (sort_image, inverted when descending) as in the CPU twin, with no
 * host round trip until the candidates are counted:
 *  - bounds: the least and greatest image of the values and the NULL
 *    count (one pass, atomics into a device TkgState);
 *  - setup: the value ranks [rlo, rhi] the range reaches (after or before
 *    the NULL block), the interval [L, H] = [least, greatest];
 *  - up to ceil(image bits / TKG_DIG) passes: a histogram of
 *    (e - L) >> shift over the values in [L, H] (at most TKG_BINS bins, in
 *    shared memory), then one block picks the bins of ranks rlo and rhi and
 *    narrows [L, H] to them; a pass after the state says done returns at
 *    once. Done when the interval holds at most `stop` values, is exact
 *    (shift 0), or did not narrow (the range spans its bins);
 *  - the state to the host (one sync): the candidates are the values in
 *    [L, H] plus the NULL block when the range reaches it, exactly the
 *    ranks [before, before + m) of the full order; flagged in row order
 *    (prim_gpu_util_select_rows), their keys gathered and sorted on every
 *    key by prim_gpu_sort (stable: ties keep row order as in the full
 *    sort), and the range read off through a gather.
 * The result equals prim_gpu_sort's slice. Under GQP_TOPK's default the
 * select runs from PRIM_GPU_TOPK_MIN_ROWS rows with a range of at most a quarter of
 * them (else every row is sorted and the range copied); GQP_TOPK=0 always
 * sorts every row, GQP_TOPK=force always selects. */

#define TKG_DIG 11
#define TKG_BINS (1 << TKG_DIG)
#define TKG_PICK_THREADS (TKG_BINS / 2)
#define TKG_HIST_BLOCK 512
/* auto: stop narrowing once this many values past the range remain (their
 * sort costs less than another pass over the column) */
#define TKG_SLACK 65536

struct TkgState {
    unsigned long long mn, mx, nnull;
    unsigned long long L, H;
    long long below;  /* values with an image under L */
    long long inside; /* values with an image in [L, H] */
    long long rlo, rhi;
    int shift, done, val_hit, null_hit;
};

/* Image of row r of the first key, inverted when descending. */
static __device__ __forceinline__ unsigned long long tkg_image(const void *d, int type,
                                                               unsigned long long inv, int64_t r) {
    return (unsigned long long)sort_image(d, type, r) ^ inv;
}

__global__ void tkg_init_kernel(TkgState *s) {
    s->mn = ~0ull;
    s->mx = 0;
    s->nnull = 0;
}

struct TkgMin {
    __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const {
        return a < b ? a : b;
    }
};
struct TkgMax {
    __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const {
        return a > b ? a : b;
    }
};

/* Least / greatest image of the values and the NULL count, into s. */
__global__ void tkg_bounds_kernel(const void *d, const uint8_t *v, int type, unsigned long long inv,
                                  int64_t n, TkgState *s) {
    unsigned long long mn = ~0ull, mx = 0, nn = 0;
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE) {
        if (v && !v[i]) {
            nn++;
            continue;
        }
        const unsigned long long e = tkg_image(d, type, inv, i);
        mn = e < mn ? e : mn;
        mx = e > mx ? e : mx;
    }
    typedef cub::BlockReduce<unsigned long long, GQP_BLOCK> Red;
    __shared__ typename Red::TempStorage t0, t1, t2;
    mn = Red(t0).Reduce(mn, TkgMin());
    mx = Red(t1).Reduce(mx, TkgMax());
    nn = Red(t2).Sum(nn);
    if (threadIdx.x == 0) {
        if (mn != ~0ull) atomicMin(&s->mn, mn);
        if (mx != 0) atomicMax(&s->mx, mx);
        if (nn) atomicAdd(&s->nnull, nn);
    }
}

/* Bit length of x (0 for 0). */
static __device__ __forceinline__ int tkg_bits(unsigned long long x) {
    return x ? 64 - __clzll((long long)x) : 0;
}

/* The shift that puts (H - L) >> shift under TKG_BINS. */
static __device__ __forceinline__ int tkg_shift(unsigned long long span) {
    const int b = tkg_bits(span);
    return b > TKG_DIG ? b - TKG_DIG : 0;
}

/* The value ranks rows [offset, offset + cnt) reach and the first
 * interval (one thread). */
__global__ void tkg_setup_kernel(TkgState *s, int64_t n, int64_t offset, int64_t cnt, int desc0,
                                 int64_t stop) {
    const int64_t nnull = (int64_t)s->nnull, nvalid = n - nnull, last = offset + cnt - 1;
    const int64_t nfirst = desc0 ? 0 : nnull; /* ranks before the values */
    int64_t vlo = offset - nfirst, vhi = last - nfirst;
    if (vlo < 0) vlo = 0;
    if (vhi > nvalid - 1) vhi = nvalid - 1;
    s->null_hit = nnull > 0 && (desc0 ? last >= nvalid : offset < nnull);
    s->val_hit = nvalid > 0 && vlo <= vhi;
    s->rlo = vlo;
    s->rhi = vhi;
    s->L = s->mn;
    s->H = s->mx;
    s->below = 0;
    s->inside = s->val_hit ? nvalid : 0;
    s->shift = tkg_shift(s->H - s->L);
    s->done = !s->val_hit || s->L == s->H || s->inside <= stop;
}

/* Counts of (e - L) >> shift over the values in [L, H]. */
__global__ void __launch_bounds__(TKG_HIST_BLOCK)
    tkg_hist_kernel(const void *d, const uint8_t *v, int type, unsigned long long inv, int64_t n,
                    const TkgState *s, unsigned long long *hist) {
    if (s->done) return;
    __shared__ unsigned int h[TKG_BINS];
    for (int b = threadIdx.x; b < TKG_BINS; b += blockDim.x)
        h[b] = 0;
    __syncthreads();
    const unsigned long long L = s->L, span = s->H - s->L;
    const int shift = s->shift;
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE) {
        if (v && !v[i]) continue;
        const unsigned long long o = tkg_image(d, type, inv, i) - L;
        if (o <= span) atomicAdd(&h[o >> shift], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < TKG_BINS; b += blockDim.x)
        if (h[b]) atomicAdd(&hist[b], (unsigned long long)h[b]);
}

/* One block of TKG_PICK_THREADS threads: the bins of ranks rlo and rhi,
 * then [L, H] narrowed to them. */
__global__ void __launch_bounds__(TKG_PICK_THREADS)
    tkg_pick_kernel(TkgState *s, const unsigned long long *hist, int64_t stop) {
    if (s->done) return;
    typedef cub::BlockScan<long long, TKG_PICK_THREADS> Scan;
    __shared__ typename Scan::TempStorage tmp;
    __shared__ long long blo, bhi, cum_lo, cum_hi;
    const int t = threadIdx.x;
    if (t == 0) blo = 0, bhi = TKG_BINS - 1, cum_lo = 0, cum_hi = s->inside;
    __syncthreads();
    const long long c0 = (long long)hist[2 * t], c1 = (long long)hist[2 * t + 1];
    long long at = 0;
    Scan(tmp).ExclusiveSum(c0 + c1, at);
    const long long a = s->rlo - s->below, b = s->rhi - s->below;
    const long long c[2] = {c0, c1};
    for (int j = 0; j < 2; j++) {
        if (a >= at && a < at + c[j]) blo = 2 * t + j, cum_lo = at;
        if (b >= at && b < at + c[j]) bhi = 2 * t + j, cum_hi = at + c[j];
        at += c[j];
    }
    __syncthreads();
    if (t != 0) return;
    const int shift = s->shift;
    const unsigned long long L = s->L, H = s->H;
    const unsigned long long nL = L + ((unsigned long long)blo << shift);
    const unsigned long long top = ((unsigned long long)bhi << shift) + ((1ull << shift) - 1);
    const unsigned long long nH = top >= H - L ? H : L + top;
    s->below += cum_lo;
    s->inside = cum_hi - cum_lo;
    s->L = nL;
    s->H = nH;
    s->done = shift == 0 || s->inside <= stop || nL == nH || (nL == L && nH == H);
    s->shift = tkg_shift(nH - nL);
}

/* flags[i] = row i is a candidate: a value with image in [L, H] (when the
 * range reaches the values) or a NULL (when it reaches the NULL block). */
__global__ void tkg_flag_kernel(const void *d, const uint8_t *v, int type, unsigned long long inv,
                                int64_t n, const TkgState *s, uint8_t *flags) {
    const unsigned long long L = s->L, span = s->H - s->L;
    const int vh = s->val_hit, nh = s->null_hit;
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE)
        flags[i] =
            (v && !v[i]) ? (uint8_t)nh : (uint8_t)(vh && tkg_image(d, type, inv, i) - L <= span);
}

/* Every row sorted into scratch, the range copied to perm. */
static int tkg_full(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc, int nkeys, int64_t n,
                    int64_t offset, int64_t cnt, int64_t *perm) {
    DevBuf all(ctx);
    if (all.alloc((size_t)n * sizeof(int64_t)) != 0) return -1;
    if (prim_gpu_sort(ctx, keys, desc, nkeys, n, all.as<int64_t>()) != 0) return -1;
    GQP_CUDA_TRY(ctx,
                 cudaMemcpyAsync(perm, all.as<int64_t>() + offset, (size_t)cnt * sizeof(int64_t),
                                 cudaMemcpyDeviceToDevice, prim_gpu_stream(ctx)));
    return 0;
}

/* See the section comment. Synchronizes once for the candidates' count
 * (and once more in the flagged select) when it selects. */
extern "C" int prim_gpu_sort_range(PrimCtx *ctx, const PrimVec *keys, const uint8_t *desc,
                                   int nkeys, int64_t n, int64_t offset, int64_t limit,
                                   int64_t *perm, int64_t *nout) {
    if (prim_gpu_ctx_ok(ctx) != 0) return -1;
    if (n < 0 || offset < 0 || nkeys < 0 || (nkeys > 0 && !keys) || !nout)
        return prim_gpu_fail(ctx, "sort range: bad arguments");
    const int64_t cnt = prim_range_rows(n, offset, limit);
    *nout = cnt;
    if (cnt == 0) return 0;
    if (!perm) return prim_gpu_fail(ctx, "sort range: missing output");
    for (int k = 0; k < nkeys; ++k)
        if (!keys[k].data || (int)keys[k].type < PRIM_U8 || (int)keys[k].type > PRIM_F64)
            return prim_gpu_fail(ctx, "sort range: key %d has no data", k);
    if (nkeys > 64) return prim_gpu_fail(ctx, "sort range: %d keys (at most 64)", nkeys);
    const int mode = prim_topk_mode();
    if (nkeys == 0 || mode == 0 || (mode == 1 && (n < PRIM_GPU_TOPK_MIN_ROWS || cnt > n / 4)))
        return tkg_full(ctx, keys, desc, nkeys, n, offset, cnt, perm);
    cudaStream_t st = prim_gpu_stream(ctx);
    const PrimVec *k0 = &keys[0];
    const int desc0 = desc && desc[0];
    const unsigned long long inv = desc0 ? ~0ull : 0ull;
    const int type = (int)k0->type, bits = (int)prim_type_width(k0->type) * 8;
    const int64_t stop = mode == 2 ? 1 : cnt + TKG_SLACK;
    DevBuf state(ctx), hist(ctx), flags(ctx);
    if (state.alloc(sizeof(TkgState)) != 0 || hist.alloc(TKG_BINS * 8) != 0) return -1;
    TkgState *s = state.as<TkgState>();
    tkg_init_kernel<<<1, 1, 0, st>>>(s);
    GQP_LAUNCH_TRY(ctx);
    tkg_bounds_kernel<<<prim_gpu_grid(n), GQP_BLOCK, 0, st>>>(k0->data, k0->valid, type, inv, n, s);
    GQP_LAUNCH_TRY(ctx);
    tkg_setup_kernel<<<1, 1, 0, st>>>(s, n, offset, cnt, desc0, stop);
    GQP_LAUNCH_TRY(ctx);
    int sms = 0;
    if (prim_gpu_sm_count(ctx, &sms) != 0) return -1;
    int64_t hb = (n + TKG_HIST_BLOCK - 1) / TKG_HIST_BLOCK;
    const unsigned hgrid = (unsigned)(hb < 4 * (int64_t)sms ? hb : 4 * (int64_t)sms);
    for (int pass = 0; pass < (bits + TKG_DIG - 1) / TKG_DIG; pass++) {
        GQP_CUDA_TRY(ctx, cudaMemsetAsync(hist.p, 0, TKG_BINS * 8, st));
        tkg_hist_kernel<<<hgrid, TKG_HIST_BLOCK, 0, st>>>(k0->data, k0->valid, type, inv, n, s,
                                                          hist.as<unsigned long long>());
        GQP_LAUNCH_TRY(ctx);
        tkg_pick_kernel<<<1, TKG_PICK_THREADS, 0, st>>>(s, hist.as<unsigned long long>(), stop);
        GQP_LAUNCH_TRY(ctx);
    }
    if (flags.alloc((size_t)n) != 0) return -1;
    tkg_flag_kernel<<<prim_gpu_grid(n), GQP_BLOCK, 0, st>>>(k0->data, k0->valid, type, inv, n, s,
                                                            flags.as<uint8_t>());
    GQP_LAUNCH_TRY(ctx);
    TkgState h;
    GQP_CUDA_TRY(ctx, cudaMemcpyAsync(&h, s, sizeof h, cudaMemcpyDeviceToHost, st));
    GQP_CUDA_TRY(ctx, prim_gpu_timed_sync(st));
    const int64_t nnull = (int64_t)h.nnull, nvalid = n - nnull;
    const int64_t m = (h.val_hit ? h.inside : 0) + (h.null_hit ? nnull : 0);
    /* ranks of the full order before the candidates */
    const int64_t before =
        desc0 ? (h.val_hit ? h.below : nvalid) : (h.null_hit ? 0 : nnull + h.below);
    if (m < cnt || offset < before || offset + cnt > before + m)
        return prim_gpu_fail(ctx, "sort range: the select kept %lld rows at %lld for [%lld, +%lld)",
                             (long long)m, (long long)before, (long long)offset, (long long)cnt);
    DevBuf cand(ctx);
    if (cand.alloc((size_t)m * sizeof(int64_t)) != 0) return -1;
    int64_t got = 0;
    if (prim_gpu_util_select_rows(ctx, flags.as<uint8_t>(), n, cand.as<int64_t>(), &got) != 0)
        return -1;
    if (got != m)
        return prim_gpu_fail(ctx, "sort range: %lld candidates flagged, %lld counted",
                             (long long)got, (long long)m);
    /* the candidates' keys, sorted on every key */
    size_t gbytes = (size_t)m * sizeof(int64_t);
    for (int k = 0; k < nkeys; k++)
        gbytes += ((prim_type_width(keys[k].type) + 1) * (size_t)m + 15) & ~(size_t)15;
    DevBuf gmem(ctx);
    if (gmem.alloc(gbytes) != 0) return -1;
    int64_t *sp = gmem.as<int64_t>();
    char *p = (char *)(sp + m);
    PrimVec gk[64];
    for (int k = 0; k < nkeys; k++) {
        const size_t w = prim_type_width(keys[k].type);
        gk[k].type = keys[k].type;
        gk[k].n = m;
        gk[k].data = p;
        gk[k].valid = keys[k].valid ? (uint8_t *)(p + w * (size_t)m) : nullptr;
        p += ((w + 1) * (size_t)m + 15) & ~(size_t)15;
        if (prim_gpu_gather(ctx, &keys[k], cand.as<int64_t>(), m, &gk[k]) != 0) return -1;
    }
    if (prim_gpu_sort(ctx, gk, desc, nkeys, m, sp) != 0) return -1;
    PrimVec cv = {PRIM_I64, m, cand.p, nullptr}, out = {PRIM_I64, cnt, perm, nullptr};
    return prim_gpu_gather(ctx, &cv, sp + (offset - before), cnt, &out);
}

/* ----------------------------------------------------------------- join -- */

/* Empty hash slot (its start). */
#define JOIN_EMPTY (~0ull)

/* A hash slot: a distinct build key and the sorted position of its run's
 * first row (JOIN_EMPTY: free). Key and start share one 16-byte load, so a
 * probe's lookup is one access to the table (the run's end, in a parallel
 * array, is read only on a match). */
struct __align__(16) JoinSlot {
    unsigned long long key;
    unsigned long long start;
};

/* Equality image of row r of a join key: ints by value (I32 zero-extended
 * bits), floats by bit pattern with -0.0 folded onto +0.0. Returns 0 for a
 * key that never matches (NULL or NaN), 1 otherwise. */
static __device__ __forceinline__ int join_image(const void *d, const uint8_t *v, int type,
                                                 int64_t r, uint64_t *key) {
    if (v && !v[r]) return 0;
    switch (type) {
    case PRIM_U8:
        *key = ((const uint8_t *)d)[r];
        return 1;
    case PRIM_I32:
        *key = (uint32_t)((const int32_t *)d)[r];
        return 1;
    case PRIM_I64:
        *key = (uint64_t)((const int64_t *)d)[r];
        return 1;
    case PRIM_F32: {
        const float f = ((const float *)d)[r];
        if (f != f) return 0;
        *key = f == 0.0f ? 0u : __float_as_uint(f);
        return 1;
    }
    default: {
        const double f = ((const double *)d)[r];
        if (f != f) return 0;
        *key = f == 0.0 ? 0ull : (uint64_t)__double_as_longlong(f);
        return 1;
    }
    }
}

/* MurmurHash3's 64-bit finalizer. */
static __device__ __forceinline__ uint64_t join_hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

/* flags[i] = 1 where row i of the build key can match (not NULL, not NaN). */
__global__ void join_flag_kernel(const void *d, const uint8_t *v, int type, int64_t n,
                                 uint8_t *flags) {
    for (int64_t i = GQP_GRID_START; i < n; i += GQP_GRID_STRIDE) {
        uint64_t k;
        flags[i] = (uint8_t)join_image(d, v, type, i, &k);
    }
}

/* keys[t] = equality image of build row rows[t] (all of them match-able). */
__global__ void join_keys_kernel(const void *d, int type, const int64_t *rows, int64_t n,
                                 uint64_t *keys) {
    for (int64_t t = GQP_GRID_START; t < n; t += GQP_GRID_STRIDE) {
        uint64_t k = 0;
        join_image(d, nullptr, type, rows[t], &k);
        keys[t] = k;
    }
}

/* Inserts the first position t of every run of equal keys in the sorted
 * ks[0..n) into the open-addressing table slots[0..mask] (linear probing;
 * a slot is claimed through its start; at most n < capacity/2 slots used). */
__global__ void join_insert_kernel(const uint64_t *ks, int64_t n, JoinSlot *slots, uint64_t mask) {
    for (int64_t t = GQP_GRID_START; t < n; t += GQP_GRID_STRIDE) {
        if (t > 0 && ks[t] == ks[t - 1]) continue;
        uint64_t h = join_hash(ks[t]) & mask;
        while (atomicCAS(&slots[h].start, JOIN_EMPTY, (unsigned long long)t) != JOIN_EMPTY)
            h = (h + 1) & mask;
        slots[h].key = ks[t];
    }
}

/* For the last position t of every run, finds the run's slot and writes
 * ends[slot] = t + 1 (one past the run). Runs after join_insert_kernel. */
__global__ void join_tail_kernel(const uint64_t *ks, int64_t n, const JoinSlot *slots,
                                 int64_t *ends, uint64_t mask) {
    for (int64_t t = GQP_GRID_START; t < n; t += GQP_GRID_STRIDE) {
        if (t + 1 < n && ks[t + 1] == ks[t]) continue;
        uint64_t h = join_hash(ks[t]) & mask;
        for (;;) {
            const JoinSlot sl = slots[h];
            if (sl.start != JOIN_EMPTY && sl.key == ks[t]) {
                ends[h] = t + 1;
                break;
            }
            h = (h + 1) & mask;
        }
    }
}

/* For every probe row p: pstart[p] = first sorted build position with an
 * equal key and cnt[p] = number of such positions (0 and no match for NULL,
 * NaN, or a key missing from the table). One 16-byte slot load per step. */
__global__ void join_probe_kernel(const void *d, const uint8_t *v, int type, int64_t np,
                                  const JoinSlot *slots, const int64_t *ends, uint64_t mask,
                                  int64_t *pstart, int64_t *cnt) {
    for (int64_t p = GQP_GRID_START; p < np; p += GQP_GRID_STRIDE) {
        uint64_t key;
        int64_t c = 0, s0 = 0;
        if (join_image(d, v, type, p, &key)) {
            uint64_t h = join_hash(key) & mask;
            for (;;) {
                const JoinSlot sl = slots[h];
                if (sl.start == JOIN_EMPTY) break;
                if (sl.key == key) {
                    s0 = (int64_t)sl.start;
                    c = ends[h] - s0;
                    break;
                }
                h = (h + 1) & mask;
            }
        }
        pstart[p] = s0;
        cnt[p] = c;
    }
}

/* Output pair k < total: p = the last probe row with off[p] <= k (binary
 * search over off[0..np), off[0] = 0), t = k - off[p], build row
 * rs[pstart[p] + t]. probe_left says which side p is. */
__global__ void join_fill_kernel(const int64_t *off, const int64_t *pstart, int64_t np,
                                 const int64_t *rs, int64_t total, int probe_left, int64_t *left,
                                 int64_t *right) {
    for (int64_t k = GQP_GRID_START; k < total; k += GQP_GRID_STRIDE) {
        int64_t lo = 0, hi = np;
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (off[mid] <= k)
                lo = mid;
            else
                hi = mid;
        }
        const int64_t b = rs[pstart[lo] + (k - off[lo])];
        left[k] = probe_left ? lo : b;
        right[k] = probe_left ? b : lo;
    }
}

/* Smallest power of two >= x (x >= 1). */
static uint64_t pow2_at_least(uint64_t x) {
    uint64_t c = 1;
    while (c < x)
        c <<= 1;
    return c;
}

/* Number of bits needed for values 0..x (at least 1). */
static int bits_for(uint64_t x) {
    int b = 1;
    while (b < 64 && (x >> b) != 0)
        ++b;
    return b;
}

/* GPU twin of prim_cpu_join (device pointers; lkey and rkey of one type).
 * The smaller side is the build side (the right one on a tie):
 *  1. its match-able rows (not NULL, not NaN) are compacted
 *     (cub::DeviceSelect::Flagged; host sync for the count) and radix-sorted
 *     by key image, stably, so equal keys form runs with ascending row ids;
 *  2. an open-addressing table (capacity: power of two >= 2 x build rows,
 *     atomicCAS inserts) maps each distinct key to its run [start, end);
 *  3. every probe row counts its matches (one 16-byte slot load per
 *     lookup); prim_gpu_scan gives the offsets and the pair count (host
 *     sync), the pair arrays are allocated exactly through ctx->alloc, and
 *     one thread per pair fills them (binary search on the offsets, so
 *     skewed keys stay balanced). A tiled probe that looked every row up
 *     twice instead of writing per-row arrays was 17-41% slower on the
 *     H200 (bench/results/prim-gpu-h200.md).
 * Probing the left side yields pairs ordered by i then j directly. Probing
 * the right side yields them ordered by j then i; one stable radix pass on i
 * (bits for nl only) then gives the documented (i, j) order.
 * out->left/right: device arrays owned by the caller (ctx->free), NULL when
 * out->n == 0. Returns 0 or -1. */
extern "C" int prim_gpu_join(PrimCtx *ctx, const PrimVec *lkey, int64_t nl, const PrimVec *rkey,
                             int64_t nr, PrimPairs *out) {
    if (prim_gpu_ctx_ok(ctx) != 0) return -1;
    if (!out || !lkey || !rkey || nl < 0 || nr < 0)
        return prim_gpu_fail(ctx, "join: bad arguments");
    out->n = 0;
    out->left = out->right = nullptr;
    if (lkey->type != rkey->type) return prim_gpu_fail(ctx, "join: key types differ");
    if ((int)lkey->type < PRIM_U8 || (int)lkey->type > PRIM_F64)
        return prim_gpu_fail(ctx, "join: bad key type %d", (int)lkey->type);
    if (nl == 0 || nr == 0) return 0;
    if (!lkey->data || !rkey->data) return prim_gpu_fail(ctx, "join: missing key data");
    cudaStream_t st = prim_gpu_stream(ctx);
    const int probe_left = nr <= nl;
    const PrimVec *bk = probe_left ? rkey : lkey, *pk = probe_left ? lkey : rkey;
    const int64_t nb = probe_left ? nr : nl, np = probe_left ? nl : nr;
    const int type = (int)bk->type;
    const int key_bits = (int)prim_type_width(bk->type) * 8;

    /* 1. Compact and sort the build side. */
    DevBuf flags(ctx), rows(ctx), rows_alt(ctx), keys(ctx), keys_alt(ctx), temp(ctx);
    if (flags.alloc((size_t)nb) != 0 || rows.alloc((size_t)nb * 8) != 0) return -1;
    join_flag_kernel<<<prim_gpu_grid(nb), GQP_BLOCK, 0, st>>>(bk->data, bk->valid, type, nb,
                                                              flags.as<uint8_t>());
    GQP_LAUNCH_TRY(ctx);
    int64_t nbv = 0;
    if (prim_gpu_util_select_rows(ctx, flags.as<uint8_t>(), nb, rows.as<int64_t>(), &nbv) != 0)
        return -1;
    if (nbv == 0) return 0;
    size_t temp_bytes = 0;
    if (radix_temp_bytes<uint64_t>(ctx, nbv, &temp_bytes) != 0) return -1;
    if (rows_alt.alloc((size_t)nbv * 8) != 0 || keys.alloc((size_t)nbv * 8) != 0 ||
        keys_alt.alloc((size_t)nbv * 8) != 0 || temp.alloc(temp_bytes) != 0)
        return -1;
    join_keys_kernel<<<prim_gpu_grid(nbv), GQP_BLOCK, 0, st>>>(bk->data, type, rows.as<int64_t>(),
                                                               nbv, keys.as<uint64_t>());
    GQP_LAUNCH_TRY(ctx);
    cub::DoubleBuffer<uint64_t> kb(keys.as<uint64_t>(), keys_alt.as<uint64_t>());
    cub::DoubleBuffer<int64_t> rb(rows.as<int64_t>(), rows_alt.as<int64_t>());
    if (radix_pass<uint64_t>(ctx, temp.p, temp.bytes, kb, rb, nbv, key_bits) != 0) return -1;
    const uint64_t *ks = kb.Current();
    const int64_t *rs = rb.Current();

    /* 2. Hash table of distinct keys -> runs. */
    const uint64_t cap = pow2_at_least(2 * (uint64_t)nbv);
    DevBuf slots(ctx), ends(ctx);
    if (slots.alloc(cap * sizeof(JoinSlot)) != 0 || ends.alloc(cap * 8) != 0) return -1;
    GQP_CUDA_TRY(ctx, cudaMemsetAsync(slots.p, 0xff, cap * sizeof(JoinSlot), st));
    join_insert_kernel<<<prim_gpu_grid(nbv), GQP_BLOCK, 0, st>>>(ks, nbv, slots.as<JoinSlot>(),
                                                                 cap - 1);
    GQP_LAUNCH_TRY(ctx);
    join_tail_kernel<<<prim_gpu_grid(nbv), GQP_BLOCK, 0, st>>>(ks, nbv, slots.as<JoinSlot>(),
                                                               ends.as<int64_t>(), cap - 1);
    GQP_LAUNCH_TRY(ctx);

    /* 3. Probe, count, allocate, fill. */
    DevBuf pstart(ctx), cnt(ctx), off(ctx);
    if (pstart.alloc((size_t)np * 8) != 0 || cnt.alloc((size_t)np * 8) != 0 ||
        off.alloc((size_t)np * 8) != 0)
        return -1;
    join_probe_kernel<<<prim_gpu_grid(np), GQP_BLOCK, 0, st>>>(
        pk->data, pk->valid, type, np, slots.as<JoinSlot>(), ends.as<int64_t>(), cap - 1,
        pstart.as<int64_t>(), cnt.as<int64_t>());
    GQP_LAUNCH_TRY(ctx);
    PrimVec cv;
    cv.type = PRIM_I64;
    cv.n = np;
    cv.data = cnt.p;
    cv.valid = nullptr;
    int64_t total = 0;
    if (prim_gpu_scan(ctx, &cv, np, off.as<int64_t>(), &total) != 0) return -1;
    if (total == 0) return 0;
    if (total > INT64_MAX / 8)
        return prim_gpu_fail(ctx, "join: %lld pairs is too many", (long long)total);
    DevBuf left(ctx), right(ctx);
    if (left.alloc((size_t)total * 8) != 0 || right.alloc((size_t)total * 8) != 0) return -1;
    join_fill_kernel<<<prim_gpu_grid(total), GQP_BLOCK, 0, st>>>(
        off.as<int64_t>(), pstart.as<int64_t>(), np, rs, total, probe_left, left.as<int64_t>(),
        right.as<int64_t>());
    GQP_LAUNCH_TRY(ctx);

    if (!probe_left) {
        /* Pairs are ordered by (j, i): a stable pass on i gives (i, j). */
        DevBuf left_alt(ctx), right_alt(ctx), temp2(ctx);
        size_t tb = 0;
        if (radix_temp_bytes<uint64_t>(ctx, total, &tb) != 0) return -1;
        if (left_alt.alloc((size_t)total * 8) != 0 || right_alt.alloc((size_t)total * 8) != 0 ||
            temp2.alloc(tb) != 0)
            return -1;
        cub::DoubleBuffer<uint64_t> lk(left.as<uint64_t>(), left_alt.as<uint64_t>());
        cub::DoubleBuffer<int64_t> rv(right.as<int64_t>(), right_alt.as<int64_t>());
        if (radix_pass<uint64_t>(ctx, temp2.p, temp2.bytes, lk, rv, total,
                                 bits_for((uint64_t)(nl - 1))) != 0)
            return -1;
        if (lk.Current() != left.as<uint64_t>()) left.swap(left_alt);
        if (rv.Current() != right.as<int64_t>()) right.swap(right_alt);
    }
    out->n = total;
    out->left = (int64_t *)left.release();
    out->right = (int64_t *)right.release();
    return 0;
}
