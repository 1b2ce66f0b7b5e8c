/* kern_attn_mma — flash prefill on tensor cores, the Ampere rung (sm_80+)
 * of the attention kernels, after the FlashAttention-2 design: the same
 * maths and layouts as kern_attn_prefill_ref / kern_gpu_attn_prefill
 * (causal, GQA, queries at positions cached … cached+n_q−1, bf16 in and
 * out, fp32 LSE), computed with mma.sync m16n8k16.
 *
 * A CTA owns BM = 64 query rows of one query head (grid: query tiles ×
 * query heads × batch, the tiles launched last-first so the longest causal
 * rows start first); its 4 warps own 16 rows each. The Q tile is copied to
 * shared memory once and read into registers with ldmatrix (A fragments,
 * d/16 per warp); K and V tiles of BN = 64 keys of the query head's KV head
 * (h / (hq/hkv)) stream through a 2-stage cp.async ring, K and V in
 * separate copy groups so S = Q·Kᵀ starts before V has landed. Shared
 * tiles are unpadded, XOR-swizzled as kern_mma.cuh describes. Per KV tile
 * each warp computes its 16×64 scores in fp32 accumulators (K rows read with
 * plain ldmatrix are the col-major B operand), masks keys past each row's
 * position on the tiles that cross the diagonal (tiles wholly past it are
 * never loaded), takes the row maxima over the fragment and the quad of
 * lanes that shares a row (two xor shuffles), rescales the running output
 * and sum, and forms P = exp2(S·scale·log2 e − m·scale·log2 e) in place.
 * P is packed to bf16 in registers and used directly as the A operand of
 * P·V (V read with ldmatrix.trans), so scores never touch shared memory
 * (these warp-level steps are kern_attn_frag.cuh's, shared with the
 * tensor-core decode). The row sums stay per lane until the end (one quad
 * reduction), where O = acc / l is written as bf16 pairs and LSE = m·scale
 * + ln l.
 *
 * Shared memory: Q 64×d plus two stages of K and V 64×d, bf16: 40 KB at
 * d = 64, 80 KB at d = 128 (dynamic; fits the 99 KB of Ada and consumer
 * Blackwell). d ∈ {64, 128} (templates); any hq multiple of hkv. The
 * launcher returns SIM_EINVAL for other shapes and SIM_ENOTSUP below
 * compute capability 8.0. */
#include "kern_attn_frag.cuh"

namespace {

constexpr int BM = 64;  /* query rows per CTA */
constexpr int BN = 64;  /* keys per KV tile */
constexpr int WARPS = 4; /* 16 query rows each */
constexpr int THREADS = 32 * WARPS;

template <int D>
constexpr int smem_bytes()
{
    return (BM * D + 2 * 2 * BN * D) * 2; /* Q, then 2 stages of K and of V */
}

/* CTAs per SM the register allocation is sized for (at most 170 registers
 * at d = 64, 255 at d = 128): without the bound ptxas held d = 64 to 128
 * registers on sm_90a and spilled. */
template <int D>
constexpr int MIN_CTAS = D == 64 ? 3 : 1;

struct PrefillArgs {
    const uint16_t *Q, *K, *V;
    uint16_t *O;
    float *LSE;
    int n_q, cached, hq, hkv;
    float sm_scale, scale_log2;
};

/* ROWS rows of d bf16 from src (row stride `stride` elements) into a
 * swizzled tile; rows from `valid` on are zero-filled (row 0 is always
 * valid, so src stays a mapped address for the zero-filling copies). */
template <int D, int ROWS>
__device__ __forceinline__ void load_rows(uint16_t *dst, const uint16_t *src, int64_t stride, int valid)
{
    constexpr int CH = D / 8;
#pragma unroll
    for (int i = 0; i < ROWS * CH / THREADS; i++) {
        int c = threadIdx.x + i * THREADS, r = c / CH, ch = c % CH;
        bool ok = r < valid;
        kern_cp_async16(dst + kern_swz(r, ch, CH), ok ? src + r * stride + ch * 8 : src, ok);
    }
}

template <int D>
__global__ void __launch_bounds__(THREADS, MIN_CTAS<D>) attn_prefill_mma_kernel(PrefillArgs a)
{
    extern __shared__ __align__(128) uint16_t smem[];
    uint16_t *sq = smem, *sk = smem + BM * D, *sv = sk + 2 * BN * D;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int q0 = (int)(gridDim.x - 1 - blockIdx.x) * BM, h = blockIdx.y, b = blockIdx.z;
    int kh = h / (a.hq / a.hkv), n_kv = a.cached + a.n_q;
    int64_t qstride = (int64_t)a.hq * D, kvstride = (int64_t)a.hkv * D;
    const uint16_t *Qt = a.Q + ((int64_t)b * a.n_q + q0) * qstride + (int64_t)h * D;
    const uint16_t *Kb = a.K + (int64_t)b * n_kv * kvstride + (int64_t)kh * D;
    const uint16_t *Vb = a.V + (int64_t)b * n_kv * kvstride + (int64_t)kh * D;
    /* Keys any row of the tile sees: through position cached + q0 + BM − 1. */
    int kv_end = min(n_kv, a.cached + q0 + BM), tiles = (kv_end + BN - 1) / BN;

    load_rows<D, BM>(sq, Qt, qstride, a.n_q - q0);
    kern_cp_async_commit();
    load_rows<D, BN>(sk, Kb, kvstride, n_kv);
    kern_cp_async_commit();
    load_rows<D, BN>(sv, Vb, kvstride, n_kv);
    kern_cp_async_commit();
    kern_cp_async_wait<2>(); /* Q landed (K0, V0 may not have) */
    __syncthreads();
    uint32_t qf[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++)
        kern_ldsm_x4(qf[kk], sq + warp * 16 * D + kern_swz_step(kern_frag_row_off<D>(lane), kk));

    float o[D / 8][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
#pragma unroll
    for (int ot = 0; ot < D / 8; ot++) o[ot][0] = o[ot][1] = o[ot][2] = o[ot][3] = 0.0f;
    int pos = a.cached + q0 + warp * 16 + lane / 4; /* this lane's first row */
    for (int t = 0; t < tiles; t++) {
        int st = t & 1, j0 = t * BN;
        kern_cp_async_wait<1>(); /* K_t landed (V_t may not have) */
        __syncthreads();         /* … for every thread; all are done with tile t−1's stage */
        int64_t next = (int64_t)(j0 + BN) * kvstride; /* tile t+1's first key */
        if (t + 1 < tiles) load_rows<D, BN>(sk + (st ^ 1) * BN * D, Kb + next, kvstride, n_kv - j0 - BN);
        kern_cp_async_commit();
        if (t + 1 < tiles) load_rows<D, BN>(sv + (st ^ 1) * BN * D, Vb + next, kvstride, n_kv - j0 - BN);
        kern_cp_async_commit();
        float s[BN / 8][4];
        kern_frag_scores<D, BN / 8>(s, qf, sk + st * BN * D);
        /* Tiles reaching past the CTA's first row cross the diagonal (and
         * hold the zero-filled keys past n_kv, all beyond every row). */
        if (j0 + BN - 1 > a.cached + q0) kern_frag_mask<BN / 8>(s, j0, pos, pos + 8);
        kern_frag_softmax<D, BN / 8>(s, o, m, l, a.scale_log2);
        kern_cp_async_wait<2>(); /* V_t landed */
        __syncthreads();
        kern_frag_pv<D, BN / 8, false>(o, s, sv + st * BN * D);
    }

#pragma unroll
    for (int r = 0; r < 2; r++) {
        l[r] = kern_quad_sum(l[r]);
        int i = q0 + warp * 16 + lane / 4 + r * 8;
        if (i >= a.n_q) continue;
        int64_t row = ((int64_t)b * a.n_q + i) * a.hq + h;
        float inv = 1.0f / l[r];
        uint16_t *orow = a.O + row * D + 2 * (lane % 4);
#pragma unroll
        for (int ot = 0; ot < D / 8; ot++)
            *reinterpret_cast<uint32_t *>(orow + ot * 8) = kern_pack_bf16(o[ot][2 * r] * inv, o[ot][2 * r + 1] * inv);
        if (a.LSE && lane % 4 == 0) a.LSE[row] = m[r] * a.sm_scale + logf(l[r]);
    }
}

} // namespace

extern "C" int kern_gpu_attn_prefill_mma(int32_t batch, int32_t n_q, int32_t cached, int32_t hq, int32_t hkv,
                                         int32_t d, float sm_scale, const uint16_t *d_q, const uint16_t *d_k,
                                         const uint16_t *d_v, uint16_t *d_o, float *d_lse, sim_err *err)
{
    int cc = 0, rc;
    if (d != 64 && d != 128)
        return sim_err_set(err, SIM_EINVAL, "tensor-core prefill supports head_dim 64 or 128, not %d", d);
    if (hkv < 1 || hq < hkv || hq % hkv || hq > 65535)
        return sim_err_set(err, SIM_EINVAL, "tensor-core prefill: hq=%d must be a multiple of hkv=%d (at most 65535)",
                           hq, hkv);
    if (batch < 1 || batch > 65535 || n_q < 1 || cached < 0 || (int64_t)cached + n_q > 2147483647 - BM ||
        !(sm_scale > 0.0f))
        return sim_err_set(err, SIM_EINVAL, "tensor-core prefill: bad batch %d / n_q %d / cached %d / scale %g", batch,
                           n_q, cached, (double)sm_scale);
    if ((rc = kern_cu_device_cc(&cc, err))) return rc;
    if (cc < 80) return sim_err_set(err, SIM_ENOTSUP, "tensor-core prefill needs compute capability 8.0+ (have %d.%d)",
                                    cc / 10, cc % 10);
    PrefillArgs a = {d_q, d_k, d_v, d_o, d_lse, n_q, cached, hq, hkv, sm_scale, sm_scale * KERN_LOG2E};
    dim3 grid((unsigned)((n_q + BM - 1) / BM), (unsigned)hq, (unsigned)batch);
    return d == 64 ? kern_cu_launch_smem("attn_prefill_mma", attn_prefill_mma_kernel<64>, grid, THREADS, smem_bytes<64>(), err, a)
                   : kern_cu_launch_smem("attn_prefill_mma", attn_prefill_mma_kernel<128>, grid, THREADS, smem_bytes<128>(), err, a);
}
