/* kern_gemm_mxfp8_sm100 — the MXFP8 block-scaled GEMM on Blackwell
 * (sm_100a): C[M×N] = Σ_k A[m,k]·2^sa[m,k/32] · B[n,k]·2^sb[n,k/32], e4m3 A
 * (M×K) and B (N×K, both K-major) with one E8M0 scale per 32 elements
 * along K, row-major [rows][K/32] bytes — the layout and the scale
 * convention kern_quant_mxfp8 (and kern_quant_mxfp8_ref) write, so a
 * quantised activation feeds this GEMM unchanged; bf16 out; maths as
 * kern_gemm_mxfp8_ref. Written from the PTX ISA after the design of
 * DeepGEMM's Blackwell fp8 GEMM; the descriptors, Tensor Memory helpers
 * and epilogue stores it shares with the bf16 rung (kern_gemm_sm100.cu)
 * are in kern_tcgen05.cuh.
 *
 * One 128×256 output tile per CTA of 128 threads (4 warps), K in blocks of
 * 128 (one 128-byte swizzle span of e4m3; four scales per row). Lane 0 of
 * warp 0 issues the tensor memory accelerator's copies of A (128×128 box)
 * and B (256 rows × 128 box) into a 4-stage ring of 48 KB stages with
 * "full" mbarriers. Warp 2 loads the stage's scales with cp.async, 4 bytes
 * (a row's four E8M0 of the K block) a copy, straight into the layout
 * tcgen05.cp's 32x128b.warpx4 shape reads: 16-byte row l of the 512-byte
 * block holds the words of tile rows l, 32+l, 64+l, 96+l (B's 256 rows are
 * two such blocks); rows past M or N are zero-filled. Two stages behind
 * its copies it waits for them, fences them to the async proxy and
 * arrives on the stage's "scales full" mbarrier. Lane 0 of warp 1 alone
 * issues the tensor core work: per stage three tcgen05.cp (shared →
 * Tensor Memory; the ISA wants the scales duplicated in all four 32-lane
 * partitions, which warpx4 does), then four
 * tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X of
 * M128 N256 K32, the k-th selecting byte k of the scale words through the
 * instruction descriptor's scale-factor IDs, and tcgen05.commit onto the
 * stage's "empty" mbarrier (the stage, its shared scales and its Tensor
 * Memory scale columns are free once those copies and MMAs completed);
 * after the last stage onto "done". Tensor Memory: 512 columns, the
 * accumulator in 0-255 and per stage 16 scale columns from 256 (A's 4,
 * B's 8), so a stage's copies never overwrite scales an earlier MMA may
 * still read. The epilogue (kern_tc_store_bf16): each warp reads its 32
 * lanes with tcgen05.ld and stores bf16. M is arbitrary, N a multiple of
 * 8, K of 128; the scale arrays 4-byte aligned.
 *
 * Not yet here: the bf16 rung's persistent grid with two accumulators (2 ×
 * 256 accumulator columns leave none of the 512 for the scales: it needs
 * N-128 tiles or 2-CTA MMA), 2-CTA MMA with TMA multicast, loading the
 * scales with TMA (their rows are 4 bytes, under the 16-byte minimum of a
 * box). No Blackwell GPU has run this kernel: it is compile- and
 * SASS-checked only (test_kern_sass). Other architectures of the build get
 * a body that traps; the host launches it only on compute capability 10.0
 * with sm_100a code in the build (kern_gpu_gemm_sm100_ok). */
#include "kern_tcgen05.cuh"

namespace {

constexpr int BM = KERN_TC_BM, BN = KERN_TC_BN, BK = 128, STAGES = 4, THREADS = 128;
constexpr int A_BYTES = BM * BK, B_BYTES = BN * BK, STAGE_BYTES = A_BYTES + B_BYTES; /* e4m3: one byte each */
constexpr int SFA_BYTES = BM * 4, SFB_BYTES = BN * 4, SF_BYTES = SFA_BYTES + SFB_BYTES; /* a 4-byte word per row */
constexpr int SMEM_BYTES = 1024 /* alignment slack */ + STAGES * (STAGE_BYTES + SF_BYTES) + (3 * STAGES + 1) * 8 + 16;

#ifdef KERN_SM100A
constexpr int TMEM_COLS = 512, SF_COL = BN, SF_COLS_PER_STAGE = 16;
constexpr int SF_LAG = 2; /* stages the scale warp runs ahead of its arrivals; < STAGES */

/* d (+)= (A·2^sa)·(B·2^sb) over K 32, the scales byte `id` of the words at
 * Tensor Memory columns sfa and sfb: the instruction descriptor of
 * kind::mxf8f6f4, E4M3 A and B both K-major, UE8M0 scales, with both
 * scale-factor IDs `id` (kern_desc.h). */
__device__ __forceinline__ void umma_mxf8(uint32_t d, uint64_t da, uint64_t db, uint32_t id, uint32_t sfa, uint32_t sfb,
                                          int accumulate)
{
    const uint32_t idesc = kern_umma_idesc_sf_ids(kern_umma_idesc_mxf8_e4m3(BM, BN), id, id);
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %6, 0;\n"
                 " tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%0], %1, %2, %3, [%4], [%5], p;\n}\n"
                 ::"r"(d), "l"(da), "l"(db), "r"(idesc), "r"(sfa), "r"(sfb), "r"(accumulate)
                 : "memory");
}

/* 32 rows × 16 bytes of shared memory (unswizzled, 8-row groups 128 bytes
 * apart) into Tensor Memory lanes 0-31, columns tcol..tcol+3, duplicated
 * into the other three 32-lane partitions. */
__device__ __forceinline__ void tmem_cp_sf(uint32_t tcol, uint32_t saddr)
{
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\n" ::"r"(tcol), "l"(kern_umma_cp_32x128b(saddr))
                 : "memory");
}

/* One row's four scale bytes of K block kb (4 bytes, zero-filled when the
 * row is past the matrix). */
__device__ __forceinline__ void cp_sf_word(uint32_t dst, const uint8_t *S, int64_t row, int64_t rows, int kb,
                                           int64_t sf_cols)
{
    const uint8_t *src = row < rows ? S + row * sf_cols + kb * 4 : S;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(row < rows ? 4 : 0)
                 : "memory");
}

/* The scale warp: stage kb's A and B scale words by cp.async into the
 * tcgen05.cp layout (see the header), then, SF_LAG stages later, the
 * wait, the proxy fence and the 32 lanes' arrivals on sf_full. */
__device__ __forceinline__ void load_scales(const uint8_t *SA, const uint8_t *SB, int M, int N, int K, int m0, int n0,
                                            uint32_t sf, uint32_t empty, uint32_t sf_full, int kblocks, int lane)
{
    int64_t sf_cols = K / 32;
    for (int kb = 0; kb < kblocks; kb++) {
        uint32_t s = kb % STAGES, ph = (kb / STAGES) & 1;
        kern_mbar_wait(empty + 8 * s, ph ^ 1);
        uint32_t a = sf + s * SF_BYTES, b = a + SFA_BYTES;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            cp_sf_word(a + lane * 16 + i * 4, SA, (int64_t)m0 + i * 32 + lane, M, kb, sf_cols);
            cp_sf_word(b + lane * 16 + i * 4, SB, (int64_t)n0 + i * 32 + lane, N, kb, sf_cols);
            cp_sf_word(b + SFA_BYTES + lane * 16 + i * 4, SB, (int64_t)n0 + 128 + i * 32 + lane, N, kb, sf_cols);
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        if (kb >= SF_LAG) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(SF_LAG) : "memory");
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); /* tcgen05.cp reads in the async proxy */
            kern_mbar_arrive(sf_full + 8 * ((kb - SF_LAG) % STAGES));
        }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    for (int kb = kblocks > SF_LAG ? kblocks - SF_LAG : 0; kb < kblocks; kb++) kern_mbar_arrive(sf_full + 8 * (kb % STAGES));
}

/* The MMA thread: per stage the scales into Tensor Memory, four block-scaled
 * MMAs, the commit that frees the stage; "done" after the last. */
__device__ __forceinline__ void issue_mma(uint32_t tmem, uint32_t base, uint32_t sf, uint32_t full, uint32_t sf_full,
                                          uint32_t empty, uint32_t done, int kblocks)
{
    for (int kb = 0; kb < kblocks; kb++) {
        uint32_t s = kb % STAGES, ph = (kb / STAGES) & 1;
        kern_mbar_wait(full + 8 * s, ph);
        kern_mbar_wait(sf_full + 8 * s, ph);
        kern_tc_fence_after();
        uint32_t a = base + s * STAGE_BYTES, b = a + A_BYTES, sa = sf + s * SF_BYTES;
        uint32_t tsfa = tmem + SF_COL + s * SF_COLS_PER_STAGE, tsfb = tsfa + 4;
        tmem_cp_sf(tsfa, sa);
        tmem_cp_sf(tsfb, sa + SFA_BYTES);
        tmem_cp_sf(tsfb + 4, sa + SFA_BYTES + 512);
#pragma unroll
        for (int k = 0; k < BK / 32; k++)
            /* A and B alike: rows of 128 bytes, 8-row groups 1 KB apart (stride), k32 = 32 bytes along the
             * swizzled row; the leading offset is unused for K-major swizzled operands. */
            umma_mxf8(tmem, kern_umma_sw128_kmajor(a + k * 32), kern_umma_sw128_kmajor(b + k * 32), (uint32_t)k, tsfa,
                      tsfb, kb > 0 || k > 0);
        kern_tc_commit(empty + 8 * s);
    }
    kern_tc_commit(done);
}
#endif

__global__ void __launch_bounds__(THREADS, 1) gemm_mxfp8_sm100_kernel(const __grid_constant__ CUtensorMap ta,
                                                                      const __grid_constant__ CUtensorMap tb,
                                                                      const uint8_t *SA, const uint8_t *SB,
                                                                      uint16_t *C, int M, int N, int K)
{
#ifdef KERN_SM100A
    extern __shared__ __align__(1024) uint8_t smem[];
    uint32_t base = (kern_saddr(smem) + 1023) & ~1023u; /* the 128-byte swizzle repeats every 1024 bytes */
    uint32_t sf = base + STAGES * STAGE_BYTES, full = sf + STAGES * SF_BYTES;
    uint32_t sf_full = full + STAGES * 8, empty = sf_full + STAGES * 8, done = empty + STAGES * 8;
    uint32_t slot = done + 8; /* where tcgen05.alloc writes the Tensor Memory address */
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, kblocks = K / BK;
    if (warp == 0) kern_tc_alloc(slot, TMEM_COLS);
    if (threadIdx.x == 32) {
        for (int s = 0; s < STAGES; s++) {
            kern_mbar_init(full + 8 * s, 1);
            kern_mbar_init(sf_full + 8 * s, 32); /* the scale warp's lanes */
            kern_mbar_init(empty + 8 * s, 1);
        }
        kern_mbar_init(done, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    uint32_t tmem = kern_tc_start(smem, slot);

    if (threadIdx.x == 0) { /* producer of A and B */
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&ta)) : "memory");
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tb)) : "memory");
        for (int kb = 0; kb < kblocks; kb++) {
            uint32_t s = kb % STAGES, ph = (kb / STAGES) & 1;
            kern_mbar_wait(empty + 8 * s, ph ^ 1); /* a fresh barrier passes parity 1 */
            kern_mbar_expect_tx(full + 8 * s, STAGE_BYTES);
            uint32_t a = base + s * STAGE_BYTES;
            kern_tma_load(a, &ta, full + 8 * s, kb * BK, m0);
            kern_tma_load(a + A_BYTES, &tb, full + 8 * s, kb * BK, n0);
        }
    } else if (threadIdx.x == 32) {
        issue_mma(tmem, base, sf, full, sf_full, empty, done, kblocks);
    } else if (warp == 2) {
        load_scales(SA, SB, M, N, K, m0, n0, sf, empty, sf_full, kblocks, lane);
    }
    kern_tc_finish(tmem, TMEM_COLS, done, C, M, N, m0, n0);
#else
    __trap(); /* never launched: the host checks for sm_100a code on a cc 10.0 device */
#endif
}

const char *const RUNG = "Blackwell MXFP8 GEMM (tcgen05 block-scaled)";

} // namespace

extern "C" int kern_gpu_gemm_mxfp8_sm100(int64_t M, int64_t N, int64_t K, const uint8_t *d_Aq, const uint8_t *d_sa,
                                         const uint8_t *d_Bq, const uint8_t *d_sb, uint16_t *d_C, sim_err *err)
{
    CUtensorMap ta, tb;
    int rc = kern_gemm_rung_maps_fp8(100, RUNG, M, N, K, d_Aq, d_Bq, BM, BN, BK, &ta, &tb, err);
    if (rc) return rc;
    if ((M + BM - 1) / BM > 65535)
        return sim_err_set(err, SIM_EINVAL, "%s: M=%lld too large for the grid", RUNG, (long long)M);
    if (((uintptr_t)d_sa | (uintptr_t)d_sb) % 4)
        return sim_err_set(err, SIM_EINVAL, "%s: the scale arrays must be 4-byte aligned", RUNG);
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
    return kern_cu_launch_smem("gemm_mxfp8_sm100", gemm_mxfp8_sm100_kernel, grid, THREADS, SMEM_BYTES, err, ta, tb,
                               d_sa, d_sb, d_C, (int)M, (int)N, (int)K);
}
