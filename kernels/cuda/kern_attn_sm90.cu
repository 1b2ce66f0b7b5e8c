/* kern_attn_sm90 — flash prefill, the Hopper rung of the attention kernels
 * (kern_attn_mma.cu is the Ampere rung), after FlashAttention-3's design,
 * written from the PTX ISA for sm_90a: the same maths and layouts as
 * kern_attn_prefill_ref / kern_gpu_attn_prefill (causal, GQA, queries at
 * positions cached … cached+n_q−1, bf16 in and out, fp32 LSE).
 *
 * A CTA owns BM = 128 query rows of one query head (grid: query tiles ×
 * query heads × batch, the tiles launched last-first so the longest causal
 * rows start first) on 384 threads: warpgroup 0 is the producer, 1 and 2
 * the consumers (64 query rows each). One producer thread issues the
 * tensor memory accelerator's 3-D bulk copies (128-byte swizzle, boxes of
 * 64 columns, one sequence deep so rows past its end are zero-filled;
 * maps from kern_tma.cuh): the Q tile once, then the K and V tiles of BN =
 * 128 keys of the query head's KV head (h / (hq/hkv)) into a ring of 4
 * slots — K of tile t in slot 2t mod 4, V in 2t+1 mod 4, so a stage is a
 * K and a V slot and S = Q·Kᵀ starts before V has landed — each slot with
 * a "full" mbarrier (the copies' bytes complete it) and an "empty" one
 * (the 8 consumer warps arrive once their wgmma has read it). Tiles wholly
 * past the CTA's last row are never loaded.
 *
 * Per KV tile a consumer warpgroup computes its 64×128 scores with
 * wgmma.mma_async m64n128k16 (Q and K both K-major from shared memory
 * through matrix descriptors) into fp32 registers, whose layout per warp
 * is mma.sync's accumulator layout: the online softmax is
 * kern_attn_frag.cuh's (−inf past each row's position on the tiles that
 * cross the warpgroup's diagonal only, row maxima over the quad of lanes
 * sharing a row, exp2 with the log2 e-scaled scale, output and per-lane
 * sums rescaled). P is packed to bf16 in registers and is the register A
 * operand of O += P·V (wgmma m64nDk16, V N-major from shared memory: the
 * descriptor's transpose), so scores never touch shared memory. At the end
 * O = acc / l is written as bf16 pairs and LSE = m·scale + ln l.
 * setmaxnreg moves registers from the producer (40) to the consumers
 * (232).
 *
 * Of FlashAttention-3's overlap mechanisms this has the producer/consumer
 * split (TMA copies run ahead of both consumers through the ring) and the
 * inter-warpgroup ping-pong: two named barriers make the consumers take
 * turns issuing Q·Kᵀ, so one's softmax runs while the other's GEMMs do.
 * Not yet the intra-warpgroup pipelining of the softmax with the next
 * tile's Q·Kᵀ: each consumer waits for its own wgmma before its softmax.
 *
 * Shared memory: Q 128×d plus 4 slots of 128×d, bf16: 80 KB at d = 64,
 * 160 KB at d = 128. d ∈ {64, 128} (templates); any hq multiple of hkv.
 * Only sm_90a has wgmma/setmaxnreg: other architectures of the build get a
 * body that traps, and the launcher returns SIM_ENOTSUP unless the device
 * has compute capability 9.0 and the build holds sm_90a code
 * (kern_gpu_attn_prefill_sm90_ok), SIM_EINVAL for other shapes, SIM_EIO
 * when the driver refuses a tensor map or the launch fails. */
#include "kern_attn_frag.cuh"
#include "kern_wgmma.cuh"

namespace {

constexpr int BM = 128;  /* query rows per CTA: 64 per consumer warpgroup */
constexpr int BN = 128;  /* keys per KV tile */
constexpr int SLOTS = 4; /* K, V, K, V */
constexpr int THREADS = 384;

template <int D>
constexpr int SLOT_BYTES = BN * D * 2;
template <int D>
constexpr int smem_bytes()
{
    return 1024 /* alignment slack */ + BM * D * 2 + SLOTS * SLOT_BYTES<D> + (2 * SLOTS + 1) * 8;
}

struct Sm90Args {
    uint16_t *O;
    float *LSE;
    int n_q, cached, hq, hkv;
    float sm_scale, scale_log2;
};

#ifdef KERN_SM90A
constexpr int CONSUMER_WARPS = 8;
constexpr int BOX = 64;                 /* columns per TMA box: 64 bf16 = the 128-byte swizzle span */
constexpr int BOX_BYTES = BN * BOX * 2; /* a 128-row box; BM = BN, so Q's boxes are the same size */

#define KERN_F4(i) "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])
#define KERN_D32 KERN_F4(0), KERN_F4(1), KERN_F4(2), KERN_F4(3), KERN_F4(4), KERN_F4(5), KERN_F4(6), KERN_F4(7)
#define KERN_D64 KERN_D32, KERN_F4(8), KERN_F4(9), KERN_F4(10), KERN_F4(11), KERN_F4(12), KERN_F4(13), KERN_F4(14), KERN_F4(15)
/* The accumulator operands of an m64n64 (32 registers) and m64n128 (64) wgmma. */
#define KERN_ACC32                                                                                              \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
    "%23, %24, %25, %26, %27, %28, %29, %30, %31"
#define KERN_ACC64                                                                                                \
    KERN_ACC32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, " \
               "%51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

/* d (+)= A·Bᵀ for one m64n128k16 step, A and B K-major from shared memory
 * (trans-a 0, trans-b 0); scale_d 0 overwrites d. */
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[16][4], uint64_t da, uint64_t db, int scale_d)
{
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        KERN_ACC64 "},"
        " %64, %65, p, 1, 1, 0, 0;\n}\n"
        : KERN_D64
        : "l"(da), "l"(db), "r"(scale_d)
        : "memory");
}

/* d += A·B for one m64nNk16 step (N = 128 or 64), A (P) in registers as
 * mma.sync's A fragment, B N-major from shared memory (trans-b 1). */
__device__ __forceinline__ void wgmma_rs(float (&d)[16][4], const uint32_t (&a)[4], uint64_t db)
{
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        KERN_ACC64 "},"
        " {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
        : KERN_D64
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
        : "memory");
}
__device__ __forceinline__ void wgmma_rs(float (&d)[8][4], const uint32_t (&a)[4], uint64_t db)
{
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        KERN_ACC32 "},"
        " {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
        : KERN_D32
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db)
        : "memory");
}
#undef KERN_F4
#undef KERN_D32
#undef KERN_D64
#undef KERN_ACC32
#undef KERN_ACC64

/* The consumers' ping-pong: named barrier 1 + cw is consumer cw's turn to
 * issue its Q·Kᵀ; the other consumer's 128 threads arrive on it (256 in
 * all; barrier 0 is __syncthreads'). */
__device__ __forceinline__ void turn_wait(int cw)
{
    asm volatile("bar.sync %0, 256;\n" ::"r"(1 + cw) : "memory");
}
__device__ __forceinline__ void turn_pass(int cw)
{
    asm volatile("bar.arrive %0, 256;\n" ::"r"(2 - cw) : "memory");
}

/* kern_acc_fence over an accumulator held as n-tiles of 4. */
template <int NT>
__device__ __forceinline__ void acc_fence(float (&d)[NT][4])
{
    kern_acc_fence(reinterpret_cast<float(&)[NT * 4]>(d));
}

/* The KV tiles the CTA's rows see: keys through position cached + q0 + BM − 1. */
__device__ __forceinline__ int kv_tiles(const Sm90Args &a, int q0)
{
    return (min(a.cached + a.n_q, a.cached + q0 + BM) + BN - 1) / BN;
}

template <int D>
__device__ __forceinline__ void producer(const CUtensorMap *tq, const CUtensorMap *tk, const CUtensorMap *tv,
                                         uint32_t sq, uint32_t slots, uint32_t qbar, uint32_t full, uint32_t empty,
                                         int q0, int h, int kh, int b, int tiles)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tq)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tk)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tv)) : "memory");
    kern_mbar_expect_tx(qbar, BM * D * 2);
#pragma unroll
    for (int c = 0; c < D / BOX; c++) kern_tma_load_3d(sq + c * BOX_BYTES, tq, qbar, h * D + c * BOX, q0, b);
    for (uint32_t it = 0; it < 2u * tiles; it++) {
        uint32_t s = it % SLOTS, ph = (it / SLOTS) & 1;
        kern_mbar_wait(empty + 8 * s, ph ^ 1); /* a fresh barrier passes parity 1 */
        kern_mbar_expect_tx(full + 8 * s, SLOT_BYTES<D>);
        const CUtensorMap *map = it % 2 ? tv : tk;
        uint32_t dst = slots + s * SLOT_BYTES<D>;
#pragma unroll
        for (int c = 0; c < D / BOX; c++)
            kern_tma_load_3d(dst + c * BOX_BYTES, map, full + 8 * s, kh * D + c * BOX, (int)(it / 2) * BN, b);
    }
}

/* The consumer warpgroup cw's 64 rows (its warp `warp` holds 16). */
template <int D>
__device__ __forceinline__ void consumer(const Sm90Args &a, uint32_t sq, uint32_t slots, uint32_t qbar, uint32_t full,
                                         uint32_t empty, int q0, int h, int b, int tiles, int cw, int warp, int lane)
{
    constexpr int NT = BN / 8, OT = D / 8;
    float s[NT][4], o[OT][4], m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
#pragma unroll
    for (int ot = 0; ot < OT; ot++) o[ot][0] = o[ot][1] = o[ot][2] = o[ot][3] = 0.0f;
    int first = a.cached + q0 + cw * 64;         /* the warpgroup's first row's position */
    int pos = first + warp * 16 + lane / 4;      /* this lane's first row */
    uint32_t qa = sq + cw * 64 * 128;            /* rows of 128 bytes within each 64-column box */
    kern_mbar_wait(qbar, 0);
    if (cw == 1) turn_pass(cw); /* consumer 0 goes first */
    for (int t = 0; t < tiles; t++) {
        uint32_t ks = (2 * t) % SLOTS, vs = (2 * t + 1) % SLOTS, ph = ((2 * t) / SLOTS) & 1;
        uint32_t kb = slots + ks * SLOT_BYTES<D>, vb = slots + vs * SLOT_BYTES<D>;
        kern_mbar_wait(full + 8 * ks, ph);
        turn_wait(cw);
        acc_fence(s);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int k = 0; k < D / 16; k++) {
            /* k16 steps 32 bytes along a swizzled row, 64-column boxes apart. */
            uint32_t off = (k / 4) * BOX_BYTES + (k % 4) * 32;
            wgmma_ss_n128(s, kern_wgmma_sw128_kmajor(qa + off), kern_wgmma_sw128_kmajor(kb + off), k > 0);
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        /* The other consumer's turn: its Q·Kᵀ runs under this one's softmax.
         * Both see the same tiles, so passes and waits pair up exactly (the
         * second consumer's first pass stands for the last one it skips). */
        if (cw == 0 || t + 1 < tiles) turn_pass(cw);
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        acc_fence(s);
        if (lane == 0) kern_mbar_arrive(empty + 8 * ks);
        int j0 = t * BN;
        /* Tiles reaching past the warpgroup's first row cross its diagonal
         * (and hold the zero-filled keys past n_kv, all beyond every row). */
        if (j0 + BN - 1 > first) kern_frag_mask<NT>(s, j0, pos, pos + 8);
        kern_frag_softmax<D, NT>(s, o, m, l, a.scale_log2);
        uint32_t pf[BN / 16][4];
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) kern_frag_p_a<NT>(pf[kk], s, kk, false);
        kern_mbar_wait(full + 8 * vs, ph);
        acc_fence(o);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++)
            /* V: 16 keys of 128-byte rows per k step; 64-column boxes (leading) BOX_BYTES apart. */
            wgmma_rs(o, pf[kk], kern_wgmma_sw128_mnmajor(vb + kk * 16 * 128, BOX_BYTES));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        acc_fence(o);
        if (lane == 0) kern_mbar_arrive(empty + 8 * vs);
    }

#pragma unroll
    for (int r = 0; r < 2; r++) {
        l[r] = kern_quad_sum(l[r]);
        int i = q0 + cw * 64 + warp * 16 + lane / 4 + r * 8;
        if (i >= a.n_q) continue;
        int64_t row = ((int64_t)b * a.n_q + i) * a.hq + h;
        float inv = 1.0f / l[r];
        uint16_t *orow = a.O + row * D + 2 * (lane % 4);
#pragma unroll
        for (int ot = 0; ot < OT; ot++)
            *reinterpret_cast<uint32_t *>(orow + ot * 8) = kern_pack_bf16(o[ot][2 * r] * inv, o[ot][2 * r + 1] * inv);
        if (a.LSE && lane % 4 == 0) a.LSE[row] = m[r] * a.sm_scale + logf(l[r]);
    }
}
#endif

template <int D>
__global__ void __launch_bounds__(THREADS, 1) attn_prefill_sm90_kernel(const __grid_constant__ CUtensorMap tq,
                                                                       const __grid_constant__ CUtensorMap tk,
                                                                       const __grid_constant__ CUtensorMap tv,
                                                                       Sm90Args a)
{
#ifdef KERN_SM90A
    extern __shared__ __align__(1024) uint8_t smem[];
    uint32_t sq = (kern_saddr(smem) + 1023) & ~1023u; /* the 128-byte swizzle repeats every 1024 bytes */
    uint32_t slots = sq + BM * D * 2, full = slots + SLOTS * SLOT_BYTES<D>, empty = full + SLOTS * 8;
    uint32_t qbar = empty + SLOTS * 8;
    int q0 = (int)(gridDim.x - 1 - blockIdx.x) * BM, h = blockIdx.y, b = blockIdx.z;
    int tiles = kv_tiles(a, q0), wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    if (threadIdx.x == 0) kern_mbar_init(qbar, 1); /* kern_ring_init fences and synchronises */
    kern_ring_init(full, empty, SLOTS, CONSUMER_WARPS);
    if (kern_wg_producer(wg)) {
        if (tid == 0) producer<D>(&tq, &tk, &tv, sq, slots, qbar, full, empty, q0, h, h / (a.hq / a.hkv), b, tiles);
    } else {
        consumer<D>(a, sq, slots, qbar, full, empty, q0, h, b, tiles, wg - 1, tid / 32, tid % 32);
    }
#else
    __trap(); /* never launched: the host checks for sm_90a code on a cc 9.0 device */
#endif
}

const char *const RUNG = "Hopper flash prefill (wgmma, TMA)";

} // namespace

extern "C" int kern_gpu_attn_prefill_sm90_ok(sim_err *err)
{
    return kern_gemm_rung_ok(90, RUNG, err);
}

extern "C" int kern_gpu_attn_prefill_sm90(int32_t batch, int32_t n_q, int32_t cached, int32_t hq, int32_t hkv,
                                          int32_t d, float sm_scale, const uint16_t *d_q, const uint16_t *d_k,
                                          const uint16_t *d_v, uint16_t *d_o, float *d_lse, sim_err *err)
{
    CUtensorMap tq, tk, tv;
    if (d != 64 && d != 128)
        return sim_err_set(err, SIM_EINVAL, "the %s supports head_dim 64 or 128, not %d", RUNG, d);
    if (hkv < 1 || hq < hkv || hq % hkv || hq > 65535)
        return sim_err_set(err, SIM_EINVAL, "the %s: hq=%d must be a multiple of hkv=%d (at most 65535)", RUNG, hq, hkv);
    if (batch < 1 || batch > 65535 || n_q < 1 || cached < 0 || (int64_t)cached + n_q > 2147483647 - BM ||
        (int64_t)hq * d > 2147483647 || !(sm_scale > 0.0f))
        return sim_err_set(err, SIM_EINVAL, "the %s: bad batch %d / n_q %d / cached %d / scale %g", RUNG, batch, n_q,
                           cached, (double)sm_scale);
    int rc = kern_attn_rung_maps(90, RUNG, batch, n_q, cached + n_q, hq, hkv, d, d_q, d_k, d_v, BM, BN, &tq, &tk, &tv,
                                 err);
    if (rc) return rc;
    Sm90Args a = {d_o, d_lse, n_q, cached, hq, hkv, sm_scale, sm_scale * KERN_LOG2E};
    dim3 grid((unsigned)((n_q + BM - 1) / BM), (unsigned)hq, (unsigned)batch);
    return d == 64 ? kern_cu_launch_smem("attn_prefill_sm90", attn_prefill_sm90_kernel<64>, grid, THREADS,
                                         smem_bytes<64>(), err, tq, tk, tv, a)
                   : kern_cu_launch_smem("attn_prefill_sm90", attn_prefill_sm90_kernel<128>, grid, THREADS,
                                         smem_bytes<128>(), err, tq, tk, tv, a);
}
