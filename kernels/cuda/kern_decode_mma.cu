/* kern_decode_mma — paged split-KV decode on tensor cores, the Ampere rung
 * (sm_80+) of the decode kernels: the layouts and results of
 * kern_decode_split_ref / kern_gpu_decode_split (per split an already
 * normalised fp32 partial output and its LSE, −inf and zeros for a split
 * without keys), merged afterwards by kern_gpu_lse_merge.
 *
 * A CTA per (split, KV head, request), 4 warps. The query heads that share
 * the KV head (the GQA group, at most 16) are the rows of the mma's M,
 * padded to 16 with zero rows: their A fragments are read once from global
 * memory into registers. The split's keys (kern_decode_split_keys: whole
 * pages) stream in tiles of 64 through a 3-stage cp.async ring, each key
 * row a 16-byte-chunked copy from the page the block table names (zero
 * filled past the split's end), K and V of a tile in one copy group; the
 * tiles are unpadded and XOR-swizzled as kern_mma.cuh describes. Warp w
 * takes keys 16w … 16w+15 of every tile with its own online-softmax state
 * (kern_attn_frag.cuh: S = Q·Kᵀ, masking past the split's end, exp2
 * softmax on the fragment, P·V with P as the bf16 A operand plus a second
 * mma on P's bf16 residual, so the fp32 partials keep fp32-level accuracy
 * where the prefill's single rounding of P would cost 2^-9); at the end
 * the 4 warps' states are merged through shared memory (max of the row
 * maxima, sums and outputs rescaled to it) and the group's rows written.
 *
 * Shared memory: 3 stages of K and V 64×d bf16, 48 KB at d = 64, 96 KB at
 * d = 128 (under Ada's and consumer Blackwell's 99 KB); the merge reuses
 * it. The split count is the caller's (kern_decode_splits in kern_plan.h
 * sizes it for this kernel). d ∈ {64, 128} (templates), group ≤ 16; the
 * launcher returns SIM_EINVAL for other shapes and SIM_ENOTSUP below
 * compute capability 8.0. */
#include "kern_attn_frag.cuh"
#include "kern_plan.h"

namespace {

constexpr int BN = 64;      /* keys per tile, 16 per warp */
constexpr int WARPS = 4, THREADS = 32 * WARPS, STAGES = 3;
constexpr int GROUP_MAX = 16; /* query heads per KV head: one m16 tile */

template <int D>
constexpr int smem_bytes()
{
    return STAGES * 2 * BN * D * 2;
}

/* Row stride (floats) of the warps' outputs in the merge, padded against
 * bank conflicts of the fragment-layout writes. */
template <int D>
constexpr int MERGE_STRIDE = D + 4;
static_assert(WARPS * 16 * (128 + 4) * 4 + 2 * WARPS * 16 * 4 <= STAGES * 2 * BN * 128 * 2, "merge fits the ring");
static_assert(WARPS * 16 * (64 + 4) * 4 + 2 * WARPS * 16 * 4 <= STAGES * 2 * BN * 64 * 2, "merge fits the ring");

struct DecodeArgs {
    const uint16_t *Q, *KC, *VC;
    const int32_t *ctx_len, *table;
    float *OP, *LP;
    int batch, hq, hkv, page, max_pages, n_splits;
    float sm_scale, scale_log2;
};

/* Keys j0 … j0+63 of request row `tb` of the block table into one stage of
 * K and V; keys from t1 on are zero-filled. */
template <int D>
__device__ __forceinline__ void load_tile(uint16_t *sk, uint16_t *sv, const DecodeArgs &a, const int32_t *tb, int kh,
                                          int j0, int t1)
{
    constexpr int CH = D / 8;
#pragma unroll
    for (int i = 0; i < BN * CH / THREADS; i++) {
        int c = threadIdx.x + i * THREADS, r = c / CH, ch = c % CH, t = j0 + r;
        bool ok = t < t1;
        int64_t off = ok ? (((int64_t)tb[t / a.page] * a.page + t % a.page) * a.hkv + kh) * D + ch * 8 : 0;
        kern_cp_async16(sk + kern_swz(r, ch, CH), a.KC + off, ok);
        kern_cp_async16(sv + kern_swz(r, ch, CH), a.VC + off, ok);
    }
}

/* The A fragments of the group's query rows (rows ≥ G are zero), straight
 * from global memory: row lane/4 (+8), columns 2·(lane%4) (+8) of each
 * 16-column k step. */
template <int D>
__device__ __forceinline__ void load_q(uint32_t (&qf)[D / 16][4], const uint16_t *Qg, int G)
{
    int lane = threadIdx.x % 32, g = lane / 4, c = 2 * (lane % 4);
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++)
#pragma unroll
        for (int x = 0; x < 4; x++) {
            int row = g + (x & 1) * 8, col = kk * 16 + c + (x >> 1) * 8;
            qf[kk][x] = row < G ? *reinterpret_cast<const uint32_t *>(Qg + (int64_t)row * D + col) : 0u;
        }
}

/* Row `row`'s merged maximum and sum over the warps' (m, l) in shared
 * memory (sm, sl: [WARPS][16]); a warp without keys (m = −inf) adds 0. */
__device__ __forceinline__ void merged_row(const float *sm, const float *sl, int row, float scale_log2, float &mx,
                                           float &sum)
{
    mx = -INFINITY, sum = 0.0f;
#pragma unroll
    for (int w = 0; w < WARPS; w++) mx = fmaxf(mx, sm[w * 16 + row]);
#pragma unroll
    for (int w = 0; w < WARPS; w++)
        if (sm[w * 16 + row] != -INFINITY)
            sum += sl[w * 16 + row] * kern_exp2_approx((sm[w * 16 + row] - mx) * scale_log2);
}

/* The 4 warps' (m, l, o) of the group's rows merged and written at rows
 * row0 … row0+G−1 of the partials: the output normalised and its LSE, or
 * zeros and −inf for a row without keys. sbuf: the ring's shared memory. */
template <int D>
__device__ __forceinline__ void merge_write(float *sbuf, const float (&o)[D / 8][4], const float (&m)[2],
                                            const float (&l)[2], const DecodeArgs &a, int64_t row0, int G)
{
    constexpr int RS = MERGE_STRIDE<D>;
    float *so = sbuf, *sm = so + WARPS * 16 * RS, *sl = sm + WARPS * 16;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4;
    if (lane % 4 == 0)
#pragma unroll
        for (int r = 0; r < 2; r++) sm[warp * 16 + g + 8 * r] = m[r], sl[warp * 16 + g + 8 * r] = l[r];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < 2; r++) {
        int row = g + 8 * r;
        float mx, sum;
        merged_row(sm, sl, row, a.scale_log2, mx, sum);
        /* This warp's share, already divided by the merged sum. */
        float f = m[r] == -INFINITY || sum == 0.0f ? 0.0f : kern_exp2_approx((m[r] - mx) * a.scale_log2) / sum;
#pragma unroll
        for (int ot = 0; ot < D / 8; ot++)
            *reinterpret_cast<float2 *>(so + (warp * 16 + row) * RS + ot * 8 + 2 * (lane % 4)) =
                make_float2(o[ot][2 * r] * f, o[ot][2 * r + 1] * f);
    }
    __syncthreads();
    for (int e = threadIdx.x; e < G * D; e += THREADS) {
        int row = e / D, x = e % D;
        float acc = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; w++) acc += so[(w * 16 + row) * RS + x];
        a.OP[(row0 + row) * D + x] = acc;
    }
    if (threadIdx.x < G) {
        float mx, sum;
        merged_row(sm, sl, threadIdx.x, a.scale_log2, mx, sum);
        a.LP[row0 + threadIdx.x] = sum > 0.0f ? mx * a.sm_scale + logf(sum) : -INFINITY;
    }
}

template <int D>
__global__ void __launch_bounds__(THREADS) decode_split_mma_kernel(DecodeArgs a)
{
    extern __shared__ __align__(128) uint16_t smem[];
    uint16_t *sk = smem, *sv = smem + STAGES * BN * D;
    int sp = blockIdx.x, kh = blockIdx.y, b = blockIdx.z, warp = threadIdx.x / 32;
    int G = a.hq / a.hkv, t0, t1;
    kern_decode_split_keys(a.ctx_len[b], a.page, a.n_splits, sp, &t0, &t1);
    const int32_t *tb = a.table + (int64_t)b * a.max_pages;
    int tiles = (t1 - t0 + BN - 1) / BN;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < tiles) load_tile<D>(sk + s * BN * D, sv + s * BN * D, a, tb, kh, t0 + s * BN, t1);
        kern_cp_async_commit();
    }
    uint32_t qf[D / 16][4];
    load_q<D>(qf, a.Q + ((int64_t)b * a.hq + (int64_t)kh * G) * D, G);
    float o[D / 8][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
#pragma unroll
    for (int ot = 0; ot < D / 8; ot++) o[ot][0] = o[ot][1] = o[ot][2] = o[ot][3] = 0.0f;
    for (int it = 0; it < tiles; it++) {
        kern_cp_async_wait<STAGES - 2>(); /* tile it landed */
        __syncthreads();                  /* … for every thread; all are done with tile it−1's stage */
        int nx = it + STAGES - 1, st = it % STAGES;
        if (nx < tiles)
            load_tile<D>(sk + (nx % STAGES) * BN * D, sv + (nx % STAGES) * BN * D, a, tb, kh, t0 + nx * BN, t1);
        kern_cp_async_commit();
        int j0 = t0 + it * BN + warp * 16; /* this warp's first key */
        float s[2][4];
        kern_frag_scores<D, 2>(s, qf, sk + st * BN * D + warp * 16 * D);
        if (j0 + 16 > t1) kern_frag_mask<2>(s, j0, t1 - 1, t1 - 1);
        kern_frag_softmax<D, 2>(s, o, m, l, a.scale_log2);
        kern_frag_pv<D, 2, true>(o, s, sv + st * BN * D + warp * 16 * D);
    }
#pragma unroll
    for (int r = 0; r < 2; r++) l[r] = kern_quad_sum(l[r]);
    kern_cp_async_wait<0>();
    __syncthreads(); /* the ring is free for the merge */
    int64_t rows = (int64_t)a.batch * a.hq;
    int64_t row0 = (int64_t)sp * rows + (int64_t)b * a.hq + (int64_t)kh * G; /* the group's first partial row */
    merge_write<D>(reinterpret_cast<float *>(smem), o, m, l, a, row0, G);
}

} // namespace

extern "C" int kern_gpu_decode_split_mma(int32_t batch, int32_t hq, int32_t hkv, int32_t d, int32_t page,
                                         int32_t max_pages, float sm_scale, const int32_t *d_ctx_len,
                                         const int32_t *d_block_table, int32_t n_splits, const uint16_t *d_q,
                                         const uint16_t *d_kc, const uint16_t *d_vc, float *d_o_part,
                                         float *d_lse_part, sim_err *err)
{
    int cc = 0, rc;
    if (d != 64 && d != 128)
        return sim_err_set(err, SIM_EINVAL, "tensor-core decode supports head_dim 64 or 128, not %d", d);
    if (hkv < 1 || hq < hkv || hq % hkv || hq / hkv > GROUP_MAX || hkv > 65535)
        return sim_err_set(err, SIM_EINVAL, "tensor-core decode: hq=%d must be a multiple of hkv=%d, group ≤ %d",
                           hq, hkv, GROUP_MAX);
    if (batch < 1 || batch > 65535 || n_splits < 1 || page < 1 || max_pages < 1 || !(sm_scale > 0.0f))
        return sim_err_set(err, SIM_EINVAL, "tensor-core decode: bad batch %d / splits %d / page %d / scale %g", batch,
                           n_splits, page, (double)sm_scale);
    if ((rc = kern_cu_device_cc(&cc, err))) return rc;
    if (cc < 80) return sim_err_set(err, SIM_ENOTSUP, "tensor-core decode needs compute capability 8.0+ (have %d.%d)",
                                    cc / 10, cc % 10);
    DecodeArgs a = {d_q,   d_kc, d_vc, d_ctx_len, d_block_table, d_o_part,  d_lse_part, batch,
                    hq,    hkv,  page, max_pages, n_splits,      sm_scale, sm_scale * KERN_LOG2E};
    dim3 grid((unsigned)n_splits, (unsigned)hkv, (unsigned)batch);
    return d == 64 ? kern_cu_launch_smem("decode_split_mma", decode_split_mma_kernel<64>, grid, THREADS, smem_bytes<64>(), err, a)
                   : kern_cu_launch_smem("decode_split_mma", decode_split_mma_kernel<128>, grid, THREADS, smem_bytes<128>(), err, a);
}
