/* kern_gemm_sm100 — the Blackwell rung of the bf16 GEMM (kern_gemm.cu is
 * the Ampere rung, kern_gemm_sm90.cu the Hopper one): C[M×N] = A[M×K]·B[K×N],
 * bf16 in and out, fp32 accumulate, written from the PTX ISA for sm_100a.
 *
 * A persistent grid (one CTA per SM, at most one per tile) of 192 threads
 * (6 warps) walks the 128×256 output tiles in the Hopper rungs' grouped
 * order (kern_tile_coords). The accumulators live in Tensor Memory, not
 * registers: warp 0 allocates all 512 columns (tcgen05.alloc) — two
 * 128-lane × 256-fp32 accumulators — and frees them at the end. Lane 0 of
 * warp 0 issues the tensor memory accelerator's copies of A (64×128 box,
 * K-major) and B (four 64×64 boxes, N-major), 128-byte swizzled, into a
 * 4-stage ring of 48 KB stages with "full" mbarriers, as the Hopper rung
 * does, tile after tile without a pause. Lane 0 of warp 1 alone issues
 * the MMAs: for the CTA's i-th tile it waits until accumulator i mod 2 is
 * "empty", then per stage four tcgen05.mma.cta_group::1.kind::f16 of M128
 * N256 K16 from shared memory descriptors into it and a tcgen05.commit onto
 * the stage's "empty" mbarrier once those MMAs have read it, and after the
 * tile's last stage a commit onto the accumulator's "full" mbarrier. Warps
 * 2-5 are the epilogue: each waits for the accumulator to be full, reads
 * its 32 lanes (rows; warp w reaches lanes 32·(w mod 4)..) with tcgen05.ld
 * 32x32b.x32, converts to bf16, stores 16-byte chunks and arrives on the
 * accumulator's "empty" mbarrier — so the epilogue of tile i overlaps the
 * MMAs of tile i+1, which fill the other accumulator. TMA zero-fills past
 * the matrix edges: M is arbitrary, N and K multiples of 8.
 *
 * The tcgen05 helpers and the epilogue's stores are kern_tcgen05.cuh's,
 * shared with the MXFP8 variant (kern_gemm_mxfp8_sm100.cu). Not yet here:
 * 2-CTA MMA (cta_group::2) with TMA multicast, a TMA store epilogue. No
 * Blackwell GPU has run this kernel: it is compile- and SASS-checked only
 * (test_kern_sass). Other architectures of the build get a body that
 * traps; the host launches it only on compute capability 10.0 with
 * sm_100a code in the build (kern_gpu_gemm_sm100_ok). */
#include "kern_tcgen05.cuh"

namespace {

constexpr int BM = KERN_TC_BM, BN = KERN_TC_BN, BK = 64, STAGES = 4, ACCS = 2;
constexpr int EPI_WARPS = 4, THREADS = 64 + 32 * EPI_WARPS; /* producer warp, MMA warp, epilogue warps */
constexpr int BOX_N = 64; /* B box width: 64 bf16 = the 128-byte swizzle span */
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = 1024 /* alignment slack */ + STAGES * STAGE_BYTES + (2 * STAGES + 2 * ACCS) * 8 + 16;

#ifdef KERN_SM100A
constexpr int B_BOX_BYTES = BK * BOX_N * 2, TMEM_COLS = ACCS * BN, GROUP_M = 8;

/* d (+)= A·B for one M128 N256 K16 step: the instruction descriptor of
 * kind::f16 with fp32 accumulation, A K-major, B N-major (kern_desc.h). */
__device__ __forceinline__ void umma_bf16(uint32_t tmem, uint64_t da, uint64_t db, int accumulate)
{
    const uint32_t idesc = kern_umma_idesc_bf16(BM, BN, 0, 1);
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
                 " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                 ::"r"(tmem), "l"(da), "l"(db), "r"(idesc), "r"(accumulate)
                 : "memory");
}

/* The walk over this CTA's tiles all three roles share. */
struct tiles {
    int m, n, kblocks;
    __device__ __forceinline__ int count() const { return m * n; }
    __device__ __forceinline__ void coords(int tile, int &m0, int &n0) const
    {
        kern_tile_coords(tile, m, n, BM, BN, GROUP_M, m0, n0);
    }
};

/* The ring slot of the CTA's it-th K block: stage and the parity of its use. */
__device__ __forceinline__ uint32_t ring_stage(uint32_t it) { return it % STAGES; }
__device__ __forceinline__ uint32_t ring_parity(uint32_t it) { return (it / STAGES) & 1; }

__device__ __forceinline__ void producer(const CUtensorMap *ta, const CUtensorMap *tb, tiles t, uint32_t base,
                                         uint32_t full, uint32_t empty)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(ta)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tb)) : "memory");
    uint32_t it = 0;
    for (int tile = blockIdx.x; tile < t.count(); tile += gridDim.x) {
        int m0, n0;
        t.coords(tile, m0, n0);
        for (int kb = 0; kb < t.kblocks; kb++, it++) {
            uint32_t s = ring_stage(it);
            kern_mbar_wait(empty + 8 * s, ring_parity(it) ^ 1); /* a fresh barrier passes parity 1 */
            kern_mbar_expect_tx(full + 8 * s, STAGE_BYTES);
            uint32_t a = base + s * STAGE_BYTES, b = a + A_BYTES;
            kern_tma_load(a, ta, full + 8 * s, kb * BK, m0);
#pragma unroll
            for (int j = 0; j < BN / BOX_N; j++) kern_tma_load(b + j * B_BOX_BYTES, tb, full + 8 * s, n0 + j * BOX_N, kb * BK);
        }
    }
}

/* The MMA thread: tile i into accumulator i mod 2 once the epilogue has
 * emptied it (its use i / 2; a fresh barrier passes parity 1). */
__device__ __forceinline__ void issue_mma(uint32_t tmem, tiles t, uint32_t base, uint32_t full, uint32_t empty,
                                          uint32_t acc_full, uint32_t acc_empty)
{
    uint32_t it = 0, i = 0;
    for (int tile = blockIdx.x; tile < t.count(); tile += gridDim.x, i++) {
        uint32_t acc = i % ACCS, d = tmem + acc * BN;
        kern_mbar_wait(acc_empty + 8 * acc, ((i / ACCS) & 1) ^ 1);
        kern_tc_fence_after();
        for (int kb = 0; kb < t.kblocks; kb++, it++) {
            uint32_t s = ring_stage(it);
            kern_mbar_wait(full + 8 * s, ring_parity(it));
            kern_tc_fence_after();
            uint32_t a = base + s * STAGE_BYTES, b = a + A_BYTES;
#pragma unroll
            for (int k = 0; k < BK / 16; k++)
                /* Layouts as the Hopper rung's: A rows 128 bytes, 8-row groups 1 KB apart, k16 = 32 bytes;
                 * B 64-column boxes 8 KB apart (leading), 8-row K groups 1 KB apart (stride), k16 = 2 KB. */
                umma_bf16(d, kern_umma_sw128_kmajor(a + k * 32), kern_umma_sw128_mnmajor(b + k * 2048, B_BOX_BYTES),
                          kb > 0 || k > 0);
            kern_tc_commit(empty + 8 * s); /* the stage is free once these MMAs have read it */
        }
        kern_tc_commit(acc_full + 8 * acc); /* the tile's MMAs are done */
    }
}

/* One epilogue warp: its 32 rows of each tile, the accumulator handed back
 * once its loads are done. */
__device__ __forceinline__ void epilogue(uint32_t tmem, tiles t, uint32_t acc_full, uint32_t acc_empty, uint16_t *C,
                                         int M, int N, int warp, int lane)
{
    uint32_t i = 0;
    for (int tile = blockIdx.x; tile < t.count(); tile += gridDim.x, i++) {
        int m0, n0;
        t.coords(tile, m0, n0);
        uint32_t acc = i % ACCS;
        kern_mbar_wait(acc_full + 8 * acc, (i / ACCS) & 1);
        kern_tc_fence_after();
        kern_tc_store_bf16(tmem + acc * BN, warp % 4, C, M, N, m0, n0, lane);
        kern_tc_fence_before();
        __syncwarp();
        if (lane == 0) kern_mbar_arrive(acc_empty + 8 * acc);
    }
}
#endif

__global__ void __launch_bounds__(THREADS, 1) gemm_sm100_kernel(const __grid_constant__ CUtensorMap ta,
                                                                const __grid_constant__ CUtensorMap tb, uint16_t *C,
                                                                int M, int N, int K)
{
#ifdef KERN_SM100A
    extern __shared__ __align__(1024) uint8_t smem[];
    uint32_t base = (kern_saddr(smem) + 1023) & ~1023u; /* the 128-byte swizzle repeats every 1024 bytes */
    uint32_t full = base + STAGES * STAGE_BYTES, empty = full + STAGES * 8;
    uint32_t acc_full = empty + STAGES * 8, acc_empty = acc_full + ACCS * 8;
    uint32_t slot = acc_empty + ACCS * 8; /* where tcgen05.alloc writes the Tensor Memory address */
    int warp = threadIdx.x / 32;
    tiles t = {(M + BM - 1) / BM, (N + BN - 1) / BN, (K + BK - 1) / BK};
    if (warp == 0) kern_tc_alloc(slot, TMEM_COLS);
    if (threadIdx.x == 32) {
        for (int s = 0; s < STAGES; s++) {
            kern_mbar_init(full + 8 * s, 1);
            kern_mbar_init(empty + 8 * s, 1);
        }
        for (int a = 0; a < ACCS; a++) {
            kern_mbar_init(acc_full + 8 * a, 1);
            kern_mbar_init(acc_empty + 8 * a, EPI_WARPS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    uint32_t tmem = kern_tc_start(smem, slot);

    if (threadIdx.x == 0) producer(&ta, &tb, t, base, full, empty);
    else if (threadIdx.x == 32) issue_mma(tmem, t, base, full, empty, acc_full, acc_empty);
    else if (warp >= 2) epilogue(tmem, t, acc_full, acc_empty, C, M, N, warp, threadIdx.x % 32);
    __syncwarp(); /* the warp's lanes back from their roles (dealloc is warp-wide) */
    kern_tc_fence_before();
    __syncthreads(); /* every Tensor Memory load done */
    if (warp == 0) kern_tc_dealloc(tmem, TMEM_COLS);
#else
    __trap(); /* never launched: the host checks for sm_100a code on a cc 10.0 device */
#endif
}

const char *const RUNG = "Blackwell GEMM (tcgen05, Tensor Memory)";

} // namespace

extern "C" int kern_gpu_gemm_sm100_ok(sim_err *err)
{
    return kern_gemm_rung_ok(100, RUNG, err);
}

extern "C" int kern_gpu_gemm_bf16_sm100(int64_t M, int64_t N, int64_t K, const uint16_t *d_A, const uint16_t *d_B,
                                        uint16_t *d_C, sim_err *err)
{
    CUtensorMap ta, tb;
    unsigned grid = 0;
    int rc = kern_gemm_rung_maps(100, RUNG, M, N, K, d_A, d_B, BM, BK, BOX_N, &ta, &tb, err);
    if (!rc) rc = kern_persistent_grid(RUNG, ((M + BM - 1) / BM) * ((N + BN - 1) / BN), &grid, err);
    if (rc) return rc;
    return kern_cu_launch_smem("gemm_bf16_sm100", gemm_sm100_kernel, dim3(grid), THREADS, SMEM_BYTES, err, ta, tb, d_C,
                               (int)M, (int)N, (int)K);
}
