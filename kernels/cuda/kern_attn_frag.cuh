/* kern_attn_frag — the warp-level pieces the tensor-core attention kernels
 * share (kern_attn_mma.cu's prefill, kern_decode_mma.cu's split-KV decode):
 * one warp holds 16 query rows as mma.sync m16n8k16 A fragments and a
 * block of NT·8 keys as score accumulators s[NT][4] (lane: rows lane/4 and
 * lane/4 + 8, keys 2·(lane%4) and +1 of each n-tile). Over swizzled shared
 * tiles of d ∈ {64, 128} bf16 columns (kern_mma.cuh's layout):
 *   frag_scores   s = Q·Kᵀ (K rows read by plain ldmatrix as the B operand),
 *   frag_mask     −inf for keys past a per-row limit,
 *   frag_softmax  the online-softmax step on the fragment (row maxima over
 *                 the quad of lanes sharing a row, exp2 with the log2 e-
 *                 scaled scale, running output and per-lane sums rescaled,
 *                 s replaced by P),
 *   frag_pv       o += P·V with P packed to bf16 in registers as the A
 *                 operand (optionally also its bf16 residual) and V
 *                 through ldmatrix.trans.
 * Header-only, CUDA C++; nothing allocates or fails. */
#ifndef KERN_ATTN_FRAG_CUH
#define KERN_ATTN_FRAG_CUH

#include "kern_mma.cuh"

constexpr float KERN_LOG2E = 1.4426950408889634f;

/* The swizzled element offset of chunk c + 2k of row r, from that of chunk
 * c < 2: the swizzle XORs the chunk with r mod 8, so stepping the chunk by
 * 2k (a 16-column k step) is an XOR of the offset with 16k — one LOP per
 * step instead of the swizzle. Holds for tiles of 64 or 128 columns. */
__device__ __forceinline__ int kern_swz_step(int off, int k) { return off ^ (k * 16); }

/* Lane offsets (elements) of the ldmatrix x4 reads at k step 0, from a
 * tile's first row (a multiple of 8):
 *  - row_off: A from a row-major tile (Q: matrices rows 0–7 / 8–15 at
 *    columns 0–7, then the same at 8–15) and B through .trans from a
 *    k-major tile (V: same lane pattern);
 *  - key_off: B from an n-major tile (K rows as Kᵀ's columns: matrices
 *    keys 0–7 at columns 0–7 and 8–15, then keys 8–15 likewise). */
template <int D>
__device__ __forceinline__ int kern_frag_row_off(int lane)
{
    return kern_swz(lane % 16, lane / 16, D / 8);
}
template <int D>
__device__ __forceinline__ int kern_frag_key_off(int lane)
{
    return kern_swz((lane / 16) * 8 + lane % 8, (lane / 8) % 2, D / 8);
}

/* ex2.approx (flush to zero; 2^−inf = 0), the softmax's exponential. */
__device__ __forceinline__ float kern_exp2_approx(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* s[nt] = the warp's 16 query rows · keys nt·8 … nt·8+7 from k (the first
 * key row). */
template <int D, int NT>
__device__ __forceinline__ void kern_frag_scores(float (&s)[NT][4], const uint32_t (&qf)[D / 16][4], const uint16_t *k)
{
    int koff = kern_frag_key_off<D>(threadIdx.x % 32);
#pragma unroll
    for (int nt = 0; nt < NT; nt++) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
        const uint16_t *kp = k + kern_swz_step(koff, kk);
#pragma unroll
        for (int p = 0; p < NT / 2; p++) {
            uint32_t kf[4];
            kern_ldsm_x4(kf, kp + p * 16 * D);
            kern_mma_bf16(s[2 * p], qf[kk], kf[0], kf[1]);
            kern_mma_bf16(s[2 * p + 1], qf[kk], kf[2], kf[3]);
        }
    }
}

/* −inf for keys past the rows' limits: s's first key is j0, the lane's row
 * lane/4 sees keys ≤ lim0, row lane/4 + 8 keys ≤ lim1. */
template <int NT>
__device__ __forceinline__ void kern_frag_mask(float (&s)[NT][4], int j0, int lim0, int lim1)
{
    int key0 = j0 + 2 * (threadIdx.x % 4);
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            if (key0 + nt * 8 + (e & 1) > (e < 2 ? lim0 : lim1)) s[nt][e] = -INFINITY;
}

/* The online-softmax step: m (raw-score row maxima, −inf before any key)
 * and the per-lane sums l and output o rescaled to the new maxima, s
 * replaced by P = exp2(s·scale_log2 − m·scale_log2). A row with no visible
 * key yet keeps m = −inf and gets P = 0. */
template <int D, int NT>
__device__ __forceinline__ void kern_frag_softmax(float (&s)[NT][4], float (&o)[D / 8][4], float (&m)[2], float (&l)[2],
                                                  float scale_log2)
{
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        mx[0] = fmaxf(mx[0], fmaxf(s[nt][0], s[nt][1]));
        mx[1] = fmaxf(mx[1], fmaxf(s[nt][2], s[nt][3]));
    }
    float corr[2], ms[2], sum[2] = {0.0f, 0.0f};
#pragma unroll
    for (int r = 0; r < 2; r++) {
        /* The 4 lanes of a quad hold the same two rows. */
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
        bool none = mx[r] == -INFINITY;
        corr[r] = none ? 1.0f : kern_exp2_approx((m[r] - mx[r]) * scale_log2); /* first keys: exp2(−inf) = 0 */
        ms[r] = none ? 0.0f : mx[r] * scale_log2;
        m[r] = mx[r];
    }
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            s[nt][e] = kern_exp2_approx(fmaf(s[nt][e], scale_log2, -ms[e >> 1]));
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

/* The A fragment of P's k step kk (n-tiles 2kk, 2kk+1) in bf16; with lo,
 * the bf16 residual P − bf16(P) instead. */
template <int NT>
__device__ __forceinline__ void kern_frag_p_a(uint32_t (&pf)[4], const float (&p)[NT][4], int kk, bool lo)
{
#pragma unroll
    for (int x = 0; x < 4; x++) {
        const float *q = &p[2 * kk + x / 2][(x % 2) * 2];
        float a = q[0], b = q[1];
        if (lo) a -= kern_bf2f(kern_f2bf(a)), b -= kern_bf2f(kern_f2bf(b));
        pf[x] = kern_pack_bf16(a, b);
    }
}

/* o += P·V: P's accumulator layout is the A fragment's, two key n-tiles per
 * 16-key k step; V (keys × d, row-major from v, the first key row) is the
 * B operand through ldmatrix.trans. P is rounded to bf16 (one rounding of
 * 2^-9 per weight, as FlashAttention-2); with EXACT its bf16 residual is
 * multiplied too (a second mma per V fragment), which leaves P's error at
 * about 2^-17 — for the memory-bound decode, where the extra mma costs no
 * time. */
template <int D, int NT, bool EXACT>
__device__ __forceinline__ void kern_frag_pv(float (&o)[D / 8][4], const float (&p)[NT][4], const uint16_t *v)
{
    int voff = kern_frag_row_off<D>(threadIdx.x % 32);
#pragma unroll
    for (int kk = 0; kk < NT / 2; kk++) {
        uint32_t pf[4], pl[4];
        kern_frag_p_a<NT>(pf, p, kk, false);
        if (EXACT) kern_frag_p_a<NT>(pl, p, kk, true);
#pragma unroll
        for (int dp = 0; dp < D / 16; dp++) {
            uint32_t vf[4];
            kern_ldsm_x4_trans(vf, v + kk * 16 * D + kern_swz_step(voff, dp));
            kern_mma_bf16(o[2 * dp], pf, vf[0], vf[1]);
            kern_mma_bf16(o[2 * dp + 1], pf, vf[2], vf[3]);
            if (EXACT) {
                kern_mma_bf16(o[2 * dp], pl, vf[0], vf[1]);
                kern_mma_bf16(o[2 * dp + 1], pl, vf[2], vf[3]);
            }
        }
    }
}

/* Sum of a value over the quad of lanes sharing a fragment row. */
__device__ __forceinline__ float kern_quad_sum(float v)
{
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

#endif
