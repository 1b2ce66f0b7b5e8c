/* kern_gemm_fp8_sm90 — the Hopper rung of the fp8 block-scaled GEMM
 * (kern_gemm_fp8.cu is the mma.sync one, which sm_90a runs as f16
 * conversions and HMMA): C[M×N] = Σ_kb (A·Bᵀ over K block kb) ·
 * sa[row, kb] · sb[n/128, kb], e4m3 A (M×K) and B (N×K), both K-major, 1×128
 * scales for A and 128×128 for B (fp32, the kern_gemm_fp8_block_ref layout
 * and maths), bf16 out. Written from the PTX ISA for sm_90a after the
 * design of DeepGEMM's Hopper fp8 GEMM.
 *
 * Block tile 128×128 with K blocks of 128 (one scale block per stage) on
 * 384 threads: warpgroup 0 is the producer, 1 and 2 the consumers. One
 * producer thread issues the tensor memory accelerator's 2-D bulk copies
 * (128-byte swizzle: a 128-byte fp8 row is one swizzle span; tensor maps
 * from kern_tma.cuh) of A's 128×128 and B's 128×128 boxes into a ring of 6
 * stages of 32 KB, each with a "full" mbarrier (completed by the copies'
 * bytes) and an "empty" one (the 8 consumer warps arrive once their wgmma
 * has read the stage). Each consumer warpgroup multiplies its 64 rows with
 * four wgmma.mma_async m64n128k32 e4m3·e4m3 → f32 (both operands K-major
 * from shared memory, as fp8 wgmma requires) into a per-stage accumulator,
 * waits for them, releases the stage and promotes on the CUDA cores: main
 * += part · sa[row, kb] · sb[n-block, kb], the scales read from global
 * memory (L2) before the stage's wait so their latency hides behind it.
 * The fp8 tensor core's partial sums thus never run longer than 128 of K
 * (its accumulation is less precise than fp32 over long K).
 * setmaxnreg moves registers from the producer (40) to the consumers (232:
 * 64 + 64 fp32 accumulators each). The grid is persistent (one CTA per SM,
 * at most one per tile) and walks the tiles in groups of 8 tile rows.
 * TMA zero-fills past the matrix edges: M is arbitrary, N a multiple of 8,
 * K of 128. The epilogue writes bf16 pairs from registers.
 *
 * Only sm_90a has wgmma/setmaxnreg: other architectures of the build get a
 * body that traps, and the host launches this kernel only on compute
 * capability 9.0 with sm_90a code in the build
 * (kern_gpu_gemm_fp8_block_sm90_ok). Launch failures come back as SIM_E*
 * codes (kern_gpu.h). */
#include "kern_wgmma.cuh"

namespace {

constexpr int BM = 128, BN = 128, BK = 128, STAGES = 6;
constexpr int THREADS = 384;
constexpr int A_BYTES = BM * BK, B_BYTES = BN * BK; /* e4m3: one byte each */
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = 1024 /* alignment slack */ + STAGES * STAGE_BYTES + 2 * STAGES * 8;

#ifdef KERN_SM90A
constexpr int CONSUMER_WARPS = 8, GROUP_M = 8;

/* d (+)= A·Bᵀ for one m64n128k32 e4m3 step; scale_d 0 overwrites d. Both
 * operands K-major (fp8 wgmma has no transpose). */
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float (&d)[64], uint64_t da, uint64_t db, int scale_d)
{
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
        KERN_WGMMA_R64 "},"
        " %64, %65, p, 1, 1;\n}\n"
        : KERN_WGMMA_D64(0)
        : "l"(da), "l"(db), "r"(scale_d)
        : "memory");
}

/* The next slot of the ring: stage s, parity ph flipping at each wrap. */
__device__ __forceinline__ void ring_next(uint32_t &s, uint32_t &ph)
{
    if (++s == STAGES) s = 0, ph ^= 1;
}

__device__ __forceinline__ void producer(const CUtensorMap *ta, const CUtensorMap *tb, uint32_t base, uint32_t full,
                                         uint32_t empty, int tiles_m, int tiles_n, int kblocks)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(ta)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tb)) : "memory");
    uint32_t s = 0, ph = 0;
    for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
        int m0, n0;
        kern_tile_coords(tile, tiles_m, tiles_n, BM, BN, GROUP_M, m0, n0);
        for (int kb = 0; kb < kblocks; kb++, ring_next(s, ph)) {
            kern_mbar_wait(empty + 8 * s, ph ^ 1); /* a fresh barrier passes parity 1 */
            kern_mbar_expect_tx(full + 8 * s, STAGE_BYTES);
            uint32_t a = base + s * STAGE_BYTES;
            kern_tma_load(a, ta, full + 8 * s, kb * BK, m0);
            kern_tma_load(a + A_BYTES, tb, full + 8 * s, kb * BK, n0);
        }
    }
}

/* One consumer warpgroup (cw 0 or 1: rows 64·cw of the tile). SA is M ×
 * kblocks, SB ceil(N/128) × kblocks, row-major. */
__device__ __forceinline__ void consumer(const float *SA, const float *SB, uint16_t *C, int M, int N, uint32_t base,
                                         uint32_t full, uint32_t empty, int tiles_m, int tiles_n, int kblocks, int cw,
                                         int warp, int lane)
{
    uint32_t s = 0, ph = 0;
    float acc[64], part[64];
#pragma unroll
    for (int i = 0; i < 64; i++) part[i] = 0.0f;
    for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
        int m0, n0;
        kern_tile_coords(tile, tiles_m, tiles_n, BM, BN, GROUP_M, m0, n0);
#pragma unroll
        for (int i = 0; i < 64; i++) acc[i] = 0.0f;
        /* This thread's two accumulator rows (g and g + 8 of its warp's 16)
         * and their scale rows; rows past M (zero-filled A) take scale 0. */
        int64_t rw = (int64_t)m0 + cw * 64 + warp * 16, r = rw + lane / 4;
        bool ok0 = r < M, ok1 = r + 8 < M;
        const float *sa0 = SA + (ok0 ? r : 0) * kblocks, *sa1 = SA + (ok1 ? r + 8 : 0) * kblocks;
        const float *sb = SB + (int64_t)(n0 / BN) * kblocks;
        for (int kb = 0; kb < kblocks; kb++, ring_next(s, ph)) {
            float s0 = ok0 ? __ldg(sa0 + kb) : 0.0f, s1 = ok1 ? __ldg(sa1 + kb) : 0.0f, sbv = __ldg(sb + kb);
            kern_mbar_wait(full + 8 * s, ph);
            uint32_t a = base + s * STAGE_BYTES + cw * (64 * BK), b = base + s * STAGE_BYTES + A_BYTES;
            kern_acc_fence(part);
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int k = 0; k < BK / 32; k++)
                /* A and B alike: rows of 128 bytes, 8-row groups 1024 bytes apart (stride), k32 steps 32 bytes
                 * along the swizzled row; the leading offset is unused for K-major swizzled operands. */
                wgmma_m64n128k32_e4m3(part, kern_wgmma_sw128_kmajor(a + k * 32), kern_wgmma_sw128_kmajor(b + k * 32),
                                      k > 0);
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
            asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
            kern_acc_fence(part);
            /* The stage is read: the producer may refill it while this warp promotes. */
            if (lane == 0) kern_mbar_arrive(empty + 8 * s);
            s0 *= sbv, s1 *= sbv;
#pragma unroll
            for (int j = 0; j < 16; j++) {
                acc[4 * j] += part[4 * j] * s0, acc[4 * j + 1] += part[4 * j + 1] * s0;
                acc[4 * j + 2] += part[4 * j + 2] * s1, acc[4 * j + 3] += part[4 * j + 3] * s1;
            }
        }
        kern_wgmma_store_bf16(C, M, N, rw, n0, acc, lane);
    }
}
#endif

__global__ void __launch_bounds__(THREADS, 1) gemm_fp8_sm90_kernel(const __grid_constant__ CUtensorMap ta,
                                                                   const __grid_constant__ CUtensorMap tb,
                                                                   const float *SA, const float *SB, uint16_t *C,
                                                                   int M, int N, int K)
{
#ifdef KERN_SM90A
    extern __shared__ __align__(1024) uint8_t smem[];
    uint32_t base = (kern_saddr(smem) + 1023) & ~1023u; /* the 128-byte swizzle repeats every 1024 bytes */
    uint32_t full = base + STAGES * STAGE_BYTES, empty = full + STAGES * 8;
    int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, kblocks = K / BK;
    int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    kern_ring_init(full, empty, STAGES, CONSUMER_WARPS);
    if (kern_wg_producer(wg)) {
        if (tid == 0) producer(&ta, &tb, base, full, empty, tiles_m, tiles_n, kblocks);
    } else {
        consumer(SA, SB, C, M, N, base, full, empty, tiles_m, tiles_n, kblocks, wg - 1, tid / 32, tid % 32);
    }
#else
    __trap(); /* never launched: the host checks for sm_90a code on a cc 9.0 device */
#endif
}

const char *const RUNG = "Hopper fp8 block-scaled GEMM (wgmma, TMA)";

} // namespace

extern "C" int kern_gpu_gemm_fp8_block_sm90_ok(sim_err *err)
{
    return kern_gemm_rung_ok(90, RUNG, err);
}

extern "C" int kern_gpu_gemm_fp8_block_sm90(int64_t M, int64_t N, int64_t K, const uint8_t *d_Aq, const float *d_sa,
                                            const uint8_t *d_Bq, const float *d_sb, uint16_t *d_C, sim_err *err)
{
    CUtensorMap ta, tb;
    unsigned grid = 0;
    int rc = kern_gemm_rung_maps_fp8(90, RUNG, M, N, K, d_Aq, d_Bq, BM, BN, BK, &ta, &tb, err);
    if (!rc) rc = kern_persistent_grid(RUNG, ((M + BM - 1) / BM) * ((N + BN - 1) / BN), &grid, err);
    if (rc) return rc;
    return kern_cu_launch_smem("gemm_fp8_block_sm90", gemm_fp8_sm90_kernel, dim3(grid), THREADS, SMEM_BYTES, err, ta,
                               tb, d_sa, d_sb, d_C, (int)M, (int)N, (int)K);
}
