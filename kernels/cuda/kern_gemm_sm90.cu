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
 * in L2. TMA zero-fills past the matrix edges: M is arbitrary, N and K
 * multiples of 8 (16-byte global strides). The epilogue writes bf16 pairs
 * from registers (no TMA store yet).
 *
 * Only sm_90a has wgmma/setmaxnreg: other architectures of the build get a
 * body that traps, and the host launches this kernel only on compute
 * capability 9.0 with sm_90a code in the build (kern_gpu_gemm_sm90_ok). */
#include "kern_wgmma.cuh"

namespace {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int THREADS = 384;
constexpr int BOX_N = 64; /* B box width: 64 bf16 = the 128-byte swizzle span */
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2;
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = 1024 /* alignment slack */ + STAGES * STAGE_BYTES + 2 * STAGES * 8;

#ifdef KERN_SM90A
constexpr int B_BOX_BYTES = BK * BOX_N * 2, CONSUMER_WARPS = 8, GROUP_M = 8;

#define KERN_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                   "+f"(d[i + 6]), "+f"(d[i + 7])

/* d (+)= A·B for one m64n256k16 step; scale_d 0 overwrites d. A is
 * K-major (trans-a 0), B N-major (trans-b 1). */
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t da, uint64_t db, int scale_d)
{
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127},"
        " %128, %129, p, 1, 1, 0, 1;\n}\n"
        : KERN_D8(0), KERN_D8(8), KERN_D8(16), KERN_D8(24), KERN_D8(32), KERN_D8(40), KERN_D8(48), KERN_D8(56),
          KERN_D8(64), KERN_D8(72), KERN_D8(80), KERN_D8(88), KERN_D8(96), KERN_D8(104), KERN_D8(112), KERN_D8(120)
        : "l"(da), "l"(db), "r"(scale_d)
        : "memory");
}
#undef KERN_D8

__device__ __forceinline__ void producer(const CUtensorMap *ta, const CUtensorMap *tb, uint32_t base, uint32_t full,
                                         uint32_t empty, int tiles_m, int tiles_n, int kblocks)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(ta)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tb)) : "memory");
    uint32_t it = 0;
    for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
        int m0, n0;
        kern_tile_coords(tile, tiles_m, tiles_n, BM, BN, GROUP_M, m0, n0);
        for (int kb = 0; kb < kblocks; kb++, it++) {
            uint32_t s = it % STAGES, ph = (it / STAGES) & 1;
            kern_mbar_wait(empty + 8 * s, ph ^ 1); /* a fresh barrier passes parity 1 */
            kern_mbar_expect_tx(full + 8 * s, STAGE_BYTES);
            uint32_t a = base + s * STAGE_BYTES, b = a + A_BYTES;
            kern_tma_load(a, ta, full + 8 * s, kb * BK, m0);
#pragma unroll
            for (int j = 0; j < BN / BOX_N; j++) kern_tma_load(b + j * B_BOX_BYTES, tb, full + 8 * s, n0 + j * BOX_N, kb * BK);
        }
    }
}

__device__ __forceinline__ void consumer(uint16_t *C, int M, int N, uint32_t base, uint32_t full, uint32_t empty,
                                         int tiles_m, int tiles_n, int kblocks, int cw, int warp, int lane)
{
    uint32_t it = 0;
    float d[128];
    for (int tile = blockIdx.x; tile < tiles_m * tiles_n; tile += gridDim.x) {
        int m0, n0;
        kern_tile_coords(tile, tiles_m, tiles_n, BM, BN, GROUP_M, m0, n0);
#pragma unroll
        for (int i = 0; i < 128; i++) d[i] = 0.0f;
        for (int kb = 0; kb < kblocks; kb++, it++) {
            uint32_t s = it % STAGES, ph = (it / STAGES) & 1;
            kern_mbar_wait(full + 8 * s, ph);
            uint32_t a = base + s * STAGE_BYTES + cw * (64 * BK * 2), b = base + s * STAGE_BYTES + A_BYTES;
            kern_acc_fence(d);
            asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
            for (int k = 0; k < BK / 16; k++)
                /* A: rows of 128 bytes, 8-row groups 1024 bytes apart, k16 steps 32 bytes along the swizzled row;
                 * B: 64-column boxes 8 KB apart (leading), 8-row K groups 1 KB apart (stride), k16 = 2 KB. */
                wgmma_m64n256k16(d, kern_sw128_desc(a + k * 32, 16, 1024),
                                 kern_sw128_desc(b + k * 2048, B_BOX_BYTES, 1024), kb > 0 || k > 0);
            asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
            /* The group before this one is complete: its stage may be refilled. */
            asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
            kern_acc_fence(d);
            if (kb > 0 && lane == 0) kern_mbar_arrive(empty + 8 * ((it - 1) % STAGES));
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        kern_acc_fence(d);
        if (kblocks > 0 && lane == 0) kern_mbar_arrive(empty + 8 * ((it - 1) % STAGES));
        kern_wgmma_store_bf16(C, M, N, (int64_t)m0 + cw * 64 + warp * 16, n0, d, lane);
    }
}
#endif

__global__ void __launch_bounds__(THREADS, 1) gemm_sm90_kernel(const __grid_constant__ CUtensorMap ta,
                                                               const __grid_constant__ CUtensorMap tb, uint16_t *C,
                                                               int M, int N, int K)
{
#ifdef KERN_SM90A
    extern __shared__ __align__(1024) uint8_t smem[];
    uint32_t base = (kern_saddr(smem) + 1023) & ~1023u; /* the 128-byte swizzle repeats every 1024 bytes */
    uint32_t full = base + STAGES * STAGE_BYTES, empty = full + STAGES * 8;
    int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, kblocks = (K + BK - 1) / BK;
    int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    kern_ring_init(full, empty, STAGES, CONSUMER_WARPS);
    if (kern_wg_producer(wg)) {
        if (tid == 0) producer(&ta, &tb, base, full, empty, tiles_m, tiles_n, kblocks);
    } else {
        consumer(C, M, N, base, full, empty, tiles_m, tiles_n, kblocks, wg - 1, tid / 32, tid % 32);
    }
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
