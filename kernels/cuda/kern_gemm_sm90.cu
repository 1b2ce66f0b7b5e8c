/* kern_gemm_sm90 — the Hopper rung of the bf16 GEMM (kern_gemm.cu is the
 * Ampere rung): C[M×N] = A[M×K]·B[K×N], bf16 in and out, fp32 accumulate,
 * written from the PTX ISA for sm_90a.
 *
 * Block tile 128×256×64 on 384 threads: warpgroup 0 is the producer, 1 and
 * 2 the consumers. One producer thread issues the tensor memory
 * accelerator's 2-D bulk copies (cp.async.bulk.tensor, 128-byte swizzle;
 * tensor maps from kern_tma.cuh; descriptors, tile order, epilogue from
 * kern_wgmma.cuh) into a
 * ring of 4 stages of 48 KB (A 128×64, B 64×256 as four 64-column boxes),
 * each stage with a "full" mbarrier (the copies' byte count completes it)
 * and an "empty" one (the 8 consumer warps arrive when their wgmma has read
 * the stage). Each consumer warpgroup multiplies its 64 rows with
 * wgmma.mma_async m64n256k16 (A K-major, B N-major, both from shared
 * memory through matrix descriptors), keeping one stage's wgmma group in
 * flight while it waits for the next stage. setmaxnreg moves registers from
 * the producer (40) to the consumers (232: 128 fp32 accumulators each).
 * The grid is persistent (one CTA per SM, at most one per tile) and walks
 * the tiles in groups of 8 tile rows, so consecutive CTAs share B columns
 * in L2. The tile's constants, the ring's layout and the warpgroups'
 * roles (kern_bf16_run), the wgmma, the ring's stage acquisition and the
 * consumers' K loop are kern_wgmma.cuh's (kern_grouped_sm90.cu shares
 * them). TMA zero-fills past the matrix edges: M is arbitrary, N and K
 * multiples of 8 (16-byte global strides). The epilogue writes bf16 pairs
 * from registers (no TMA store yet).
 *
 * Only sm_90a has wgmma/setmaxnreg: other architectures of the build get a
 * body that traps, and the host launches this kernel only on compute
 * capability 9.0 with sm_90a code in the build (kern_gpu_gemm_sm90_ok). */
#include "kern_wgmma.cuh"

namespace {

using namespace kern_wgmma_bf16;

#ifdef KERN_SM90A
constexpr int GROUP_M = 8;

__device__ __forceinline__ void producer(const CUtensorMap *ta, const CUtensorMap *tb, const kern_bf16_ring &r,
                                         int tiles_m, int tiles_n, int kblocks)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(ta)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tb)) : "memory");
    uint32_t it = 0;
    for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
        int m0, n0;
        kern_tile_coords(tile, tiles_m, tiles_n, BM, BN, GROUP_M, m0, n0);
        for (int kb = 0; kb < kblocks; kb++, it++) {
            uint32_t s = kern_bf16_stage_acquire(r, it), bar = r.full + 8 * s;
            uint32_t a = r.base + s * STAGE_BYTES, b = a + A_BYTES;
            kern_tma_load(a, ta, bar, kb * BK, m0);
#pragma unroll
            for (int j = 0; j < BN / BOX_N; j++) kern_tma_load(b + j * B_BOX_BYTES, tb, bar, n0 + j * BOX_N, kb * BK);
        }
    }
}

__device__ __forceinline__ void consumer(uint16_t *C, int M, int N, const kern_bf16_ring &r, int tiles_m, int tiles_n,
                                         int kblocks, int cw, int warp, int lane)
{
    uint32_t it = 0;
    float d[128];
    for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
        int m0, n0;
        kern_tile_coords(tile, tiles_m, tiles_n, BM, BN, GROUP_M, m0, n0);
        kern_bf16_consume(d, r, kblocks, it, cw, lane);
        kern_wgmma_store_bf16(C, M, N, (int64_t)m0 + cw * 64 + warp * 16, n0, d, lane);
    }
}
#endif

__global__ void __launch_bounds__(THREADS, 1) gemm_sm90_kernel(const __grid_constant__ CUtensorMap ta,
                                                               const __grid_constant__ CUtensorMap tb, uint16_t *C,
                                                               int M, int N, int K)
{
#ifdef KERN_SM90A
    int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, kblocks = (K + BK - 1) / BK;
    const CUtensorMap *pa = &ta, *pb = &tb;
    kern_bf16_run([=](const kern_bf16_ring &r) { producer(pa, pb, r, tiles_m, tiles_n, kblocks); },
                  [=](const kern_bf16_ring &r, int cw, int warp, int lane) {
                      consumer(C, M, N, r, tiles_m, tiles_n, kblocks, cw, warp, lane);
                  });
#else
    __trap(); /* never launched: the host checks for sm_90a code on a cc 9.0 device */
#endif
}

const char *const RUNG = "Hopper GEMM (wgmma, TMA)";

} // namespace

extern "C" int kern_gpu_gemm_sm90_ok(sim_err *err)
{
    return kern_gemm_rung_ok(90, RUNG, err);
}

extern "C" int kern_gpu_gemm_bf16_sm90(int64_t M, int64_t N, int64_t K, const uint16_t *d_A, const uint16_t *d_B,
                                       uint16_t *d_C, sim_err *err)
{
    CUtensorMap ta, tb;
    unsigned grid = 0;
    int rc = kern_gemm_rung_maps(90, RUNG, M, N, K, d_A, d_B, BM, BK, BOX_N, &ta, &tb, err);
    if (!rc) rc = kern_persistent_grid(RUNG, ((M + BM - 1) / BM) * ((N + BN - 1) / BN), &grid, err);
    if (rc) return rc;
    return kern_cu_launch_smem("gemm_bf16_sm90", gemm_sm90_kernel, dim3(grid), THREADS, SMEM_BYTES, err, ta, tb, d_C,
                               (int)M, (int)N, (int)K);
}
