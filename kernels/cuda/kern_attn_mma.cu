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
 * P·V (V read with ldmatrix.trans), so scores never touch shared memory.
 * The row sums stay per lane until the end (one quad reduction), where O =
 * acc / l is written as bf16 pairs and LSE = m·scale + ln l.
 *
 * Shared memory: Q 64×d plus two stages of K and V 64×d, bf16: 40 KB at
 * d = 64, 80 KB at d = 128 (dynamic; fits the 99 KB of Ada and consumer
 * Blackwell). d ∈ {64, 128} (templates); any hq multiple of hkv. The
 * launcher returns SIM_EINVAL for other shapes and SIM_ENOTSUP below
 * compute capability 8.0. */
#include "kern_mma.cuh"

namespace {

constexpr int BM = 64;  /* query rows per CTA */
constexpr int BN = 64;  /* keys per KV tile */
constexpr int WARPS = 4; /* 16 query rows each */
constexpr int THREADS = 32 * WARPS;
constexpr float LOG2E = 1.4426950408889634f;

template <int D>
constexpr int smem_bytes()
{
    return (BM * D + 2 * 2 * BN * D) * 2; /* Q, then 2 stages of K and of V */
}

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

/* The swizzled element offset of chunk c + 2k of row r, from that of chunk
 * c < 2: the swizzle XORs the chunk with r mod 8, so stepping the chunk by
 * 2k (a 16-column k step) is an XOR of the offset with 16k — one LOP per
 * step instead of the swizzle. Holds for tiles of 64 or 128 columns. */
__device__ __forceinline__ int swz_step(int off, int k) { return off ^ (k * 16); }

/* Lane offsets (elements) of the ldmatrix x4 reads, at k step 0:
 *  - row_off: A from a row-major tile (Q; matrices rows 0–7 / 8–15 at
 *    columns 0–7, then the same at 8–15) and B through .trans from a
 *    k-major tile (V; same lane pattern);
 *  - key_off: B from an n-major tile (K rows as Kᵀ's columns; matrices
 *    keys 0–7 at columns 0–7 and 8–15, then keys 8–15 likewise). */
template <int D>
__device__ __forceinline__ int row_off(int lane)
{
    return kern_swz(lane % 16, lane / 16, D / 8);
}
template <int D>
__device__ __forceinline__ int key_off(int lane)
{
    return kern_swz((lane / 16) * 8 + lane % 8, (lane / 8) % 2, D / 8);
}

/* ex2.approx (flush to zero; 2^−inf = 0), the softmax's exponential. */
__device__ __forceinline__ float exp2_approx(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* s[nt] = this warp's 16 query rows · keys nt·8 … nt·8+7 of the tile. */
template <int D>
__device__ __forceinline__ void tile_scores(float (&s)[BN / 8][4], const uint32_t (&qf)[D / 16][4], const uint16_t *k)
{
    int koff = key_off<D>(threadIdx.x % 32);
#pragma unroll
    for (int nt = 0; nt < BN / 8; nt++) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        const uint16_t *kp = k + swz_step(koff, kk);
#pragma unroll
        for (int p = 0; p < BN / 16; p++) {
            uint32_t kf[4];
            kern_ldsm_x4(kf, kp + p * 16 * D);
            kern_mma_bf16(s[2 * p], qf[kk], kf[0], kf[1]);
            kern_mma_bf16(s[2 * p + 1], qf[kk], kf[2], kf[3]);
        }
    }
}

/* −inf for keys past the row's position: row g of the fragment is at
 * position pos, row g+8 at pos+8; key j0 + nt·8 + 2·(lane%4) (+1). */
__device__ __forceinline__ void mask_diagonal(float (&s)[BN / 8][4], int j0, int pos)
{
    int key0 = j0 + 2 * (threadIdx.x % 4);
#pragma unroll
    for (int nt = 0; nt < BN / 8; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            if (key0 + nt * 8 + (e & 1) > pos + (e >> 1) * 8) s[nt][e] = -INFINITY;
}

/* Online softmax on the fragment: new row maxima m (raw scores), the
 * running output and per-lane sums l rescaled, s replaced by P. */
template <int D>
__device__ __forceinline__ void tile_softmax(float (&s)[BN / 8][4], float (&o)[D / 8][4], float (&m)[2], float (&l)[2],
                                             float scale_log2)
{
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int nt = 0; nt < BN / 8; nt++) {
        mx[0] = fmaxf(mx[0], fmaxf(s[nt][0], s[nt][1]));
        mx[1] = fmaxf(mx[1], fmaxf(s[nt][2], s[nt][3]));
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
        /* The 4 lanes of a quad hold the same two rows. */
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
    }
    /* Every row sees key 0, so mx is finite from the first tile on; the
     * first tile's correction exp2(−inf) is 0. */
    float corr[2], ms[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; r++) {
        corr[r] = exp2_approx((m[r] - mx[r]) * scale_log2);
        ms[r] = mx[r] * scale_log2;
        m[r] = mx[r];
    }
#pragma unroll
    for (int nt = 0; nt < BN / 8; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            s[nt][e] = exp2_approx(fmaf(s[nt][e], scale_log2, -ms[e >> 1]));
            sum[e >> 1] += s[nt][e];
        }
#pragma unroll
    for (int r = 0; r < 2; r++) l[r] = l[r] * corr[r] + sum[r];
#pragma unroll
    for (int ot = 0; ot < D / 8; ot++) {
        o[ot][0] *= corr[0], o[ot][1] *= corr[0];
        o[ot][2] *= corr[1], o[ot][3] *= corr[1];
    }
}

/* o += P·V: P's accumulator layout is the A fragment's, two key n-tiles per
 * 16-key k step; V (keys × d, row-major) is the B operand through
 * ldmatrix.trans. */
template <int D>
__device__ __forceinline__ void tile_pv(float (&o)[D / 8][4], const float (&p)[BN / 8][4], const uint16_t *v)
{
    int voff = row_off<D>(threadIdx.x % 32);
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++) {
        uint32_t pf[4] = {kern_pack_bf16(p[2 * kk][0], p[2 * kk][1]), kern_pack_bf16(p[2 * kk][2], p[2 * kk][3]),
                          kern_pack_bf16(p[2 * kk + 1][0], p[2 * kk + 1][1]),
                          kern_pack_bf16(p[2 * kk + 1][2], p[2 * kk + 1][3])};
#pragma unroll
        for (int dp = 0; dp < D / 16; dp++) {
            uint32_t vf[4];
            kern_ldsm_x4_trans(vf, v + kk * 16 * D + swz_step(voff, dp));
            kern_mma_bf16(o[2 * dp], pf, vf[0], vf[1]);
            kern_mma_bf16(o[2 * dp + 1], pf, vf[2], vf[3]);
        }
    }
}

template <int D>
__global__ void __launch_bounds__(THREADS) attn_prefill_mma_kernel(PrefillArgs a)
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
    for (int kk = 0; kk < D / 16; kk++) kern_ldsm_x4(qf[kk], sq + warp * 16 * D + swz_step(row_off<D>(lane), kk));

    float o[D / 8][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
#pragma unroll
    for (int ot = 0; ot < D / 8; ot++) o[ot][0] = o[ot][1] = o[ot][2] = o[ot][3] = 0.0f;
    int pos = a.cached + q0 + warp * 16 + lane / 4; /* this lane's first row */
    for (int t = 0; t < tiles; t++) {
        int st = t & 1, j0 = t * BN;
        kern_cp_async_wait<1>(); /* K_t landed (V_t may not have) */
        __syncthreads();         /* … for every thread; all are done with tile t−1's stage */
        if (t + 1 < tiles) load_rows<D, BN>(sk + (st ^ 1) * BN * D, Kb + (j0 + BN) * kvstride, kvstride, n_kv - j0 - BN);
        kern_cp_async_commit();
        if (t + 1 < tiles) load_rows<D, BN>(sv + (st ^ 1) * BN * D, Vb + (j0 + BN) * kvstride, kvstride, n_kv - j0 - BN);
        kern_cp_async_commit();
        float s[BN / 8][4];
        tile_scores<D>(s, qf, sk + st * BN * D);
        /* Tiles reaching past the CTA's first row cross the diagonal (and
         * hold the zero-filled keys past n_kv, all beyond every row). */
        if (j0 + BN - 1 > a.cached + q0) mask_diagonal(s, j0, pos);
        tile_softmax<D>(s, o, m, l, a.scale_log2);
        kern_cp_async_wait<2>(); /* V_t landed */
        __syncthreads();
        tile_pv<D>(o, s, sv + st * BN * D);
    }

#pragma unroll
    for (int r = 0; r < 2; r++) {
        l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
        l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    }
#pragma unroll
    for (int r = 0; r < 2; r++) {
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

template <int D>
int launch(dim3 grid, const PrefillArgs &a, sim_err *err)
{
    KERN_CU_TRY(cudaFuncSetAttribute(attn_prefill_mma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     smem_bytes<D>()),
                err);
    attn_prefill_mma_kernel<D><<<grid, THREADS, smem_bytes<D>()>>>(a);
    return kern_cu_launched("attn_prefill_mma", err);
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
    PrefillArgs a = {d_q, d_k, d_v, d_o, d_lse, n_q, cached, hq, hkv, sm_scale, sm_scale * LOG2E};
    dim3 grid((unsigned)((n_q + BM - 1) / BM), (unsigned)hq, (unsigned)batch);
    return d == 64 ? launch<64>(grid, a, err) : launch<128>(grid, a, err);
}
