/* kern_gemm_fp8 — fp8 (e4m3) GEMM with DeepSeek-style block scales on
 * tensor cores, mma.sync m16n8k32 (sm_89+; on sm_80 the launcher returns
 * SIM_ENOTSUP). Layout as kern_gemm_fp8_block_ref: A M×K and B N×K, both
 * K-major as the fp8 mma needs, 1×128 scales for A, 128×128 for B.
 *
 * Block tile 64×128 with one 128-deep K slab per step, so each slab is one
 * scale block: the slab's tensor-core partial sums go to a fresh fp32
 * register tile and are then promoted (8 warps of 32×32 so both
 * register tiles fit without spills; 64×128 block tiles) into the main accumulator with
 * sa[row]·sb[block] (fp8 mma accumulators lose precision over long K; the
 * promotion is also where the scales apply). Two cp.async stages in 54 KB of
 * dynamic shared memory; rows padded by 16 bytes for ldmatrix. sm_90a
 * compiles the e4m3 mma.sync to f16 conversions and HMMA; the Hopper rung
 * with fp8 wgmma is kern_gemm_fp8_sm90.cu. */
#include "kern_arch.h"
#include "kern_mma.cuh"

namespace {

constexpr int BM = 64, BN = 128, BK = 128, RS = BK + 16, THREADS = 256, MI = 2;
constexpr int STAGE = (BM + BN) * RS;
constexpr int SMEM_BYTES = 2 * STAGE;

__device__ __forceinline__ void mma_e4m3(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    __trap(); /* never launched: the host checks the code the device loaded (kern_gpu_fp8_code) */
#endif
}

__device__ __forceinline__ void load_stage(uint8_t *st, const uint8_t *A, const uint8_t *B, int64_t M, int64_t N,
                                           int64_t K, int64_t m0, int64_t n0, int64_t k0)
{
    uint8_t *sa = st, *sb = st + BM * RS;
    for (int c = threadIdx.x; c < BM * (BK / 16); c += THREADS) {
        int r = c / (BK / 16), kc = (c % (BK / 16)) * 16;
        bool ok = m0 + r < M;
        kern_cp_async16(sa + r * RS + kc, ok ? A + (m0 + r) * K + k0 + kc : A, ok);
    }
    for (int c = threadIdx.x; c < BN * (BK / 16); c += THREADS) {
        int r = c / (BK / 16), kc = (c % (BK / 16)) * 16;
        bool ok = n0 + r < N;
        kern_cp_async16(sb + r * RS + kc, ok ? B + (n0 + r) * K + k0 + kc : B, ok);
    }
    kern_cp_async_commit();
}

__global__ void __launch_bounds__(THREADS) gemm_fp8_kernel(const uint8_t *A, const float *SA, const uint8_t *B,
                                                           const float *SB, uint16_t *C, int64_t M, int64_t N,
                                                           int64_t K)
{
    extern __shared__ __align__(16) uint8_t smem[];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    int wm = (warp / 4) * 32, wn = (warp % 4) * 32;
    int64_t m0 = (int64_t)blockIdx.y * BM, n0 = (int64_t)blockIdx.x * BN, kb = K / BK;
    float acc[MI][4][4];
    for (int i = 0; i < MI; i++)
        for (int j = 0; j < 4; j++)
            for (int x = 0; x < 4; x++) acc[i][j][x] = 0.0f;

    load_stage(smem, A, B, M, N, K, m0, n0, 0);
    for (int64_t kt = 0; kt < kb; kt++) {
        uint8_t *st = smem + (kt & 1) * STAGE;
        kern_cp_async_wait<0>();
        __syncthreads();
        if (kt + 1 < kb) load_stage(smem + ((kt + 1) & 1) * STAGE, A, B, M, N, K, m0, n0, (kt + 1) * BK);
        const uint8_t *sa = st, *sb = st + BM * RS;
        float part[MI][4][4];
        for (int i = 0; i < MI; i++)
            for (int j = 0; j < 4; j++)
                for (int x = 0; x < 4; x++) part[i][j][x] = 0.0f;
        for (int kk = 0; kk < BK; kk += 32) {
            uint32_t af[MI][4], bfr[2][4];
            for (int i = 0; i < MI; i++) kern_ldsm_x4(af[i], sa + (wm + i * 16 + lane % 16) * RS + kk + (lane / 16) * 16);
            for (int j = 0; j < 2; j++)
                kern_ldsm_x4(bfr[j], sb + (wn + j * 16 + (lane % 8) + (lane / 16) * 8) * RS + kk + ((lane / 8) % 2) * 16);
            for (int i = 0; i < MI; i++)
                for (int j = 0; j < 4; j++)
                    mma_e4m3(part[i][j], af[i], bfr[j / 2][(j % 2) * 2], bfr[j / 2][(j % 2) * 2 + 1]);
        }
        /* Promote with the scales: sb is one value for this 128-wide N tile. */
        float sbv = SB[(n0 / 128) * kb + kt];
        for (int i = 0; i < MI; i++) {
            for (int h = 0; h < 2; h++) {
                int64_t row = m0 + wm + i * 16 + g + h * 8;
                float s = row < M ? SA[row * kb + kt] * sbv : 0.0f;
                for (int j = 0; j < 4; j++) {
                    acc[i][j][2 * h] += part[i][j][2 * h] * s;
                    acc[i][j][2 * h + 1] += part[i][j][2 * h + 1] * s;
                }
            }
        }
    }
    for (int i = 0; i < MI; i++)
        for (int j = 0; j < 4; j++) {
            int64_t col = n0 + wn + j * 8 + 2 * t;
            for (int h = 0; h < 2; h++) {
                int64_t row = m0 + wm + i * 16 + g + h * 8;
                if (row < M && col < N) {
                    uint32_t p = (uint32_t)kern_f2bf(acc[i][j][2 * h]) | ((uint32_t)kern_f2bf(acc[i][j][2 * h + 1]) << 16);
                    *reinterpret_cast<uint32_t *>(C + row * N + col) = p;
                }
            }
        }
}

} // namespace

extern "C" int kern_gpu_fp8_code(int *virtual_arch, sim_err *err)
{
    cudaFuncAttributes a;
    KERN_CU_TRY(cudaFuncGetAttributes(&a, gemm_fp8_kernel), err);
    *virtual_arch = a.ptxVersion;
    if (!kern_fp8_mma_ok(a.ptxVersion))
        return sim_err_set(err, SIM_ENOTSUP,
                           "this build runs compute_%d code for the fp8 GEMM on this device, which has no fp8 mma "
                           "(it would trap): rebuild with the device's architecture in CMAKE_CUDA_ARCHITECTURES "
                           "(built for %s)",
                           a.ptxVersion, SERVESIM_CUDA_ARCHS);
    return 0;
}

extern "C" int kern_gpu_gemm_fp8_block(int64_t M, int64_t N, int64_t K, const uint8_t *d_Aq, const float *d_sa,
                                       const uint8_t *d_Bq, const float *d_sb, uint16_t *d_C, sim_err *err)
{
    int cc = 0, rc = kern_cu_device_cc(&cc, err);
    if (rc) return rc;
    if (cc < 89)
        return sim_err_set(err, SIM_ENOTSUP, "fp8 GEMM needs compute capability 8.9+ (device is %d.%d)", cc / 10,
                           cc % 10);
    int code = 0;
    if ((rc = kern_gpu_fp8_code(&code, err))) return rc;
    if (M < 1 || N < 8 || N % 8 || K < BK || K % BK)
        return sim_err_set(err, SIM_EINVAL, "fp8 GEMM needs K a multiple of 128 and N of 8 (M=%lld N=%lld K=%lld)",
                           (long long)M, (long long)N, (long long)K);
    if ((M + BM - 1) / BM > 65535) return sim_err_set(err, SIM_EINVAL, "fp8 GEMM: M=%lld too large", (long long)M);
    KERN_CU_TRY(cudaFuncSetAttribute(gemm_fp8_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES), err);
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
    gemm_fp8_kernel<<<grid, THREADS, SMEM_BYTES>>>(d_Aq, d_sa, d_Bq, d_sb, d_C, M, N, K);
    return kern_cu_launched("gemm_fp8_block", err);
}
