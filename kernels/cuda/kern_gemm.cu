/* kern_gemm — bf16 GEMM on tensor cores with mma.sync m16n8k16 (sm_80+),
 * the Ampere rung of the kernel ladder. Its block tile (below) lives in
 * kern_mma.cuh (namespace kern_gemm_tile): the MoE grouped GEMM
 * (kern_grouped.cu) runs the same one.
 *
 * Block tile 128×128×64, 8 warps as 2 (M) × 4 (N), warp tile 64×32 (4×4
 * mma tiles, 64 fp32 accumulators per thread). Global → shared with
 * cp.async 16-byte copies, zero-filled past the matrix edge, in a ring of
 * three stages (96 KB of dynamic shared memory: two K slabs load while the
 * third is multiplied; three, not four, so the tile fits Ada's 99 KB).
 * Shared rows are not padded but swizzled: the 16-byte chunk c of row r
 * is stored at chunk c ^ (r mod 8) of its 128-byte line, so the eight
 * row addresses of every ldmatrix (A) and ldmatrix.trans (B is K×N
 * row-major) phase fall in eight different bank groups. N and K must be
 * multiples of 8 (16-byte rows); M is arbitrary.
 *
 * Skinny GEMMs (M ≤ 64, the decode projections) fill few of the SMs with
 * output tiles; there K is split: grid.z = S splits each multiply a
 * contiguous share of the K slabs into fp32 partials in a caller-owned
 * workspace [S][M][N] (the plan is kern_plan.h's, tested on the CPU), and a
 * second kernel sums the S partials in a fixed order (deterministic) into
 * bf16. This rung stays the path on every architecture; Hopper adds
 * kern_gemm_sm90.cu (TMA + wgmma) beside it. */
#include "kern_mma.cuh"
#include "kern_plan.h"

namespace {

using namespace kern_gemm_tile;

__global__ void __launch_bounds__(THREADS) gemm_bf16_kernel(const uint16_t *A, const uint16_t *B, uint16_t *C,
                                                            int64_t M, int64_t N, int64_t K)
{
    extern __shared__ __align__(128) uint16_t smem[];
    Tile t = {A, B, M, N, K, (int64_t)blockIdx.y * BM, (int64_t)blockIdx.x * BN};
    float acc[4][4][4];
    tile_mainloop(smem, t, 0, (K + BK - 1) / BK, acc);
    tile_store(acc, C, M, N, t.m0, t.n0);
}

/* Split z of grid.z multiplies its share of the K slabs into part[z]. */
__global__ void __launch_bounds__(THREADS) gemm_bf16_splitk_kernel(const uint16_t *A, const uint16_t *B, float *part,
                                                                   int64_t M, int64_t N, int64_t K)
{
    extern __shared__ __align__(128) uint16_t smem[];
    Tile t = {A, B, M, N, K, (int64_t)blockIdx.y * BM, (int64_t)blockIdx.x * BN};
    int64_t first, end;
    kern_gemm_split_range((K + BK - 1) / BK, (int32_t)gridDim.z, (int32_t)blockIdx.z, &first, &end);
    float acc[4][4][4];
    tile_mainloop(smem, t, first, end, acc);
    tile_store(acc, part + (int64_t)blockIdx.z * M * N, M, N, t.m0, t.n0);
}

/* C = Σ_z part[z], in z order, 8 elements per thread (16-byte stores). */
__global__ void splitk_reduce_kernel(const float *part, int32_t S, int64_t MN, uint16_t *C)
{
    for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * 8; i < MN; i += (int64_t)gridDim.x * blockDim.x * 8) {
        float s[8];
        const float4 *p = reinterpret_cast<const float4 *>(part + i);
        float4 a = p[0], b = p[1];
        s[0] = a.x, s[1] = a.y, s[2] = a.z, s[3] = a.w, s[4] = b.x, s[5] = b.y, s[6] = b.z, s[7] = b.w;
        for (int32_t z = 1; z < S; z++) {
            p = reinterpret_cast<const float4 *>(part + z * MN + i);
            a = p[0], b = p[1];
            s[0] += a.x, s[1] += a.y, s[2] += a.z, s[3] += a.w, s[4] += b.x, s[5] += b.y, s[6] += b.z, s[7] += b.w;
        }
        uint4 o;
        o.x = (uint32_t)kern_f2bf(s[0]) | ((uint32_t)kern_f2bf(s[1]) << 16);
        o.y = (uint32_t)kern_f2bf(s[2]) | ((uint32_t)kern_f2bf(s[3]) << 16);
        o.z = (uint32_t)kern_f2bf(s[4]) | ((uint32_t)kern_f2bf(s[5]) << 16);
        o.w = (uint32_t)kern_f2bf(s[6]) | ((uint32_t)kern_f2bf(s[7]) << 16);
        *reinterpret_cast<uint4 *>(C + i) = o;
    }
}

int check_shape(int64_t M, int64_t N, int64_t K, sim_err *err)
{
    if (M < 1 || N < 8 || K < 8 || N % 8 || K % 8)
        return sim_err_set(err, SIM_EINVAL, "bf16 GEMM needs N, K multiples of 8 (got M=%lld N=%lld K=%lld)",
                           (long long)M, (long long)N, (long long)K);
    if ((M + BM - 1) / BM > 65535)
        return sim_err_set(err, SIM_EINVAL, "bf16 GEMM: M=%lld too large for the grid", (long long)M);
    return 0;
}

template <typename F>
int set_smem(F *kernel, sim_err *err)
{
    KERN_CU_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES), err);
    return 0;
}

} // namespace

extern "C" int kern_gpu_gemm_bf16(int64_t M, int64_t N, int64_t K, const uint16_t *d_A, const uint16_t *d_B,
                                  uint16_t *d_C, void *d_work, size_t work_bytes, sim_err *err)
{
    int rc = check_shape(M, N, K, err), dev = 0, sms = 0;
    if (rc) return rc;
    KERN_CU_TRY(cudaGetDevice(&dev), err);
    KERN_CU_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err);
    int32_t S = kern_gemm_splits(M, N, K, sms);
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
    if (S > 1 && d_work && work_bytes >= kern_gemm_split_workspace(M, N, K, sms)) {
        if ((rc = set_smem(gemm_bf16_splitk_kernel, err))) return rc;
        grid.z = (unsigned)S;
        gemm_bf16_splitk_kernel<<<grid, THREADS, SMEM_BYTES>>>(d_A, d_B, (float *)d_work, M, N, K);
        if ((rc = kern_cu_launched("gemm_bf16_splitk", err))) return rc;
        int64_t blocks = (M * N / 8 + 255) / 256; /* N % 8 == 0: whole 8-element groups */
        splitk_reduce_kernel<<<(unsigned)(blocks > 4096 ? 4096 : blocks), 256>>>((const float *)d_work, S, M * N, d_C);
        return kern_cu_launched("gemm_bf16_splitk_reduce", err);
    }
    if ((rc = set_smem(gemm_bf16_kernel, err))) return rc;
    gemm_bf16_kernel<<<grid, THREADS, SMEM_BYTES>>>(d_A, d_B, d_C, M, N, K);
    return kern_cu_launched("gemm_bf16", err);
}
