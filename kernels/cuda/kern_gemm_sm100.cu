/* kern_gemm_sm100 — the Blackwell rung of the bf16 GEMM (kern_gemm.cu is
 * the Ampere rung, kern_gemm_sm90.cu the Hopper one): C[M×N] = A[M×K]·B[K×N],
 * bf16 in and out, fp32 accumulate, written from the PTX ISA for sm_100a.
 *
 * One 128×256 output tile per CTA of 128 threads (4 warps). The
 * accumulator lives in Tensor Memory, not registers: warp 0 allocates 256
 * columns (tcgen05.alloc; 128 lanes × 256 fp32) and frees them at the end.
 * Lane 0 of warp 0 issues the tensor memory accelerator's copies of A
 * (64×128 box, K-major) and B (four 64×64 boxes, N-major), 128-byte
 * swizzled, into a 4-stage ring of 48 KB stages with "full" mbarriers, as
 * the Hopper rung does. Lane 0 of warp 1 alone issues the MMAs: per stage
 * four tcgen05.mma.cta_group::1.kind::f16 of M128 N256 K16 from shared
 * memory descriptors into the Tensor Memory accumulator, then
 * tcgen05.commit arrives on the stage's "empty" mbarrier once those MMAs
 * have read it, and after the last stage on a "done" mbarrier. The
 * epilogue: each warp reads its 32 lanes (rows) of the accumulator with
 * tcgen05.ld 32x32b.x32 (32 columns per load), converts to bf16 and
 * stores 16-byte chunks. TMA zero-fills past the matrix edges: M is
 * arbitrary, N and K multiples of 8.
 *
 * Not yet here: 2-CTA MMA (cta_group::2) with TMA multicast, a persistent
 * grid with two accumulator buffers so the epilogue overlaps the next
 * tile's MMAs, and the MXFP8 block-scaled variant. No Blackwell GPU has run
 * this kernel: it is compile- and SASS-checked only (test_kern_sass).
 * Other architectures of the build get a body that traps; the host
 * launches it only on compute capability 10.0 with sm_100a code in the
 * build (kern_gpu_gemm_sm100_ok). */
#include "kern_tma.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 1000 && defined(__CUDA_ARCH_FEAT_SM100_ALL)
#define KERN_SM100A 1
#endif

namespace {

constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 128;
constexpr int BOX_N = 64; /* B box width: 64 bf16 = the 128-byte swizzle span */
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = 1024 /* alignment slack */ + STAGES * STAGE_BYTES + (2 * STAGES + 1) * 8 + 16;

#ifdef KERN_SM100A
constexpr int B_BOX_BYTES = BK * BOX_N * 2, TMEM_COLS = BN;

/* A tcgen05 shared-memory descriptor, 128-byte swizzle: start, leading and
 * stride byte offsets (>> 4), the fixed version bits 46-47 = 1, layout
 * type 2 (128-byte swizzle) in bits 61-63. */
__device__ __forceinline__ uint64_t umma_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo & 0x3FFFF) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 46) | (2ull << 61);
}

/* The instruction descriptor of kind::f16: D fp32 (bits 4-5 = 1), A and B
 * bf16 (bits 7-9, 10-12 = 1), A K-major (bit 15 = 0), B N-major (bit 16 =
 * 1), N >> 3 in bits 17-22, M >> 4 in bits 24-28. */
constexpr uint32_t IDESC = (1u << 4) | (1u << 7) | (1u << 10) | (1u << 16) | ((uint32_t)(BN >> 3) << 17) |
                           ((uint32_t)(BM >> 4) << 24);

__device__ __forceinline__ void umma_bf16(uint32_t tmem, uint64_t da, uint64_t db, int accumulate)
{
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
                 " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
                 ::"r"(tmem), "l"(da), "l"(db), "r"(IDESC), "r"(accumulate)
                 : "memory");
}

/* Arrives on bar once every MMA this thread issued before has completed. */
__device__ __forceinline__ void umma_commit(uint32_t bar)
{
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar)
                 : "memory");
}

#define KERN_R8(i) "=r"(v[i]), "=r"(v[i + 1]), "=r"(v[i + 2]), "=r"(v[i + 3]), "=r"(v[i + 4]), "=r"(v[i + 5]), \
                   "=r"(v[i + 6]), "=r"(v[i + 7])

/* 32 consecutive fp32 columns of this thread's Tensor Memory lane. */
__device__ __forceinline__ void tmem_ld32(uint32_t taddr, uint32_t (&v)[32])
{
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "
                 "%14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\n"
                 : KERN_R8(0), KERN_R8(8), KERN_R8(16), KERN_R8(24)
                 : "r"(taddr)
                 : "memory");
    asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}
#undef KERN_R8
#endif

#ifdef KERN_SM100A
/* The epilogue: once the MMAs are done, warp w reads Tensor Memory lanes
 * 32w..32w+31 (rows of the tile) 32 columns at a time and stores them as
 * bf16, 16 bytes a store; rows past M and columns past N are skipped. */
static __device__ __forceinline__ void sm100_epilogue(uint32_t tmem, uint32_t done, uint16_t *C, int M, int N, int m0,
                                                      int n0, int warp, int lane)
{
    kern_mbar_wait(done, 0);
    __syncwarp(); /* tcgen05.ld is warp-wide (.sync.aligned) */
    asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
    int64_t row = (int64_t)m0 + warp * 32 + lane;
#pragma unroll 1
    for (int c = 0; c < BN; c += 32) {
        uint32_t v[32];
        tmem_ld32(tmem + ((uint32_t)(warp * 32) << 16) + (uint32_t)c, v);
        if (row >= M) continue;
#pragma unroll
        for (int q = 0; q < 4; q++) { /* 8 columns, 16 bytes, per store; N % 8 == 0 */
            int64_t col = (int64_t)n0 + c + q * 8;
            if (col >= N) break;
            uint4 o;
            o.x = (uint32_t)kern_f2bf(__uint_as_float(v[q * 8 + 0])) | ((uint32_t)kern_f2bf(__uint_as_float(v[q * 8 + 1])) << 16);
            o.y = (uint32_t)kern_f2bf(__uint_as_float(v[q * 8 + 2])) | ((uint32_t)kern_f2bf(__uint_as_float(v[q * 8 + 3])) << 16);
            o.z = (uint32_t)kern_f2bf(__uint_as_float(v[q * 8 + 4])) | ((uint32_t)kern_f2bf(__uint_as_float(v[q * 8 + 5])) << 16);
            o.w = (uint32_t)kern_f2bf(__uint_as_float(v[q * 8 + 6])) | ((uint32_t)kern_f2bf(__uint_as_float(v[q * 8 + 7])) << 16);
            *reinterpret_cast<uint4 *>(C + row * N + col) = o;
        }
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
    uint32_t full = base + STAGES * STAGE_BYTES, empty = full + STAGES * 8, done = empty + STAGES * 8;
    uint32_t slot = done + 8; /* where tcgen05.alloc writes the Tensor Memory address */
    uint8_t *slot_ptr = smem + (slot - kern_saddr(smem));
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, kblocks = (K + BK - 1) / BK;
    if (warp == 0) {
        asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(slot), "n"(TMEM_COLS)
                     : "memory");
        asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
    }
    if (threadIdx.x == 32) {
        for (int s = 0; s < STAGES; s++) {
            kern_mbar_init(full + 8 * s, 1);
            kern_mbar_init(empty + 8 * s, 1);
        }
        kern_mbar_init(done, 1);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    /* The allocation's address and the barriers visible to every thread. */
    asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
    uint32_t tmem = *reinterpret_cast<volatile uint32_t *>(slot_ptr);

    if (threadIdx.x == 0) { /* producer */
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&ta)) : "memory");
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&tb)) : "memory");
        for (int kb = 0; kb < kblocks; kb++) {
            uint32_t s = kb % STAGES, ph = (kb / STAGES) & 1;
            kern_mbar_wait(empty + 8 * s, ph ^ 1); /* a fresh barrier passes parity 1 */
            kern_mbar_expect_tx(full + 8 * s, STAGE_BYTES);
            uint32_t a = base + s * STAGE_BYTES, b = a + A_BYTES;
            kern_tma_load(a, &ta, full + 8 * s, kb * BK, m0);
#pragma unroll
            for (int j = 0; j < BN / BOX_N; j++) kern_tma_load(b + j * B_BOX_BYTES, &tb, full + 8 * s, n0 + j * BOX_N, kb * BK);
        }
    } else if (threadIdx.x == 32) { /* the MMA issuer */
        for (int kb = 0; kb < kblocks; kb++) {
            uint32_t s = kb % STAGES, ph = (kb / STAGES) & 1;
            kern_mbar_wait(full + 8 * s, ph);
            asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
            uint32_t a = base + s * STAGE_BYTES, b = a + A_BYTES;
#pragma unroll
            for (int k = 0; k < BK / 16; k++)
                /* Layouts as the Hopper rung's: A rows 128 bytes, 8-row groups 1 KB apart, k16 = 32 bytes;
                 * B 64-column boxes 8 KB apart (leading), 8-row K groups 1 KB apart (stride), k16 = 2 KB. */
                umma_bf16(tmem, umma_desc(a + k * 32, 16, 1024), umma_desc(b + k * 2048, B_BOX_BYTES, 1024),
                          kb > 0 || k > 0);
            umma_commit(empty + 8 * s); /* the stage is free once these MMAs have read it */
        }
        umma_commit(done);
    }
    __syncwarp();

    /* Epilogue: warp w reads Tensor Memory lanes 32w..32w+31 = rows of the tile. */
    sm100_epilogue(tmem, done, C, M, N, m0, n0, warp, lane);
    asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
    __syncthreads();
    if (warp == 0)
        asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(tmem), "n"(TMEM_COLS) : "memory");
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
    int rc = kern_gemm_rung_maps(100, RUNG, M, N, K, d_A, d_B, BM, BK, BOX_N, &ta, &tb, err);
    if (rc) return rc;
    if ((M + BM - 1) / BM > 65535)
        return sim_err_set(err, SIM_EINVAL, "Blackwell GEMM: M=%lld too large for the grid", (long long)M);
    KERN_CU_TRY(cudaFuncSetAttribute(gemm_sm100_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES), err);
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
    gemm_sm100_kernel<<<grid, THREADS, SMEM_BYTES>>>(ta, tb, d_C, (int)M, (int)N, (int)K);
    return kern_cu_launched("gemm_bf16_sm100", err);
}
