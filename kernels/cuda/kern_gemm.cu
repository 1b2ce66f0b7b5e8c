/* kern_gemm — bf16 GEMM on tensor cores with mma.sync m16n8k16 (sm_80+),
 * the Ampere rung of the kernel ladder, and the MoE grouped GEMM built on
 * the same block tile.
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

constexpr int BM = KERN_GEMM_BM, BN = KERN_GEMM_BN, BK = KERN_GEMM_BK, STAGES = 3;
constexpr int THREADS = 256;
constexpr int A_STAGE = BM * BK; /* elements */
constexpr int B_STAGE = BK * BN;
constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * 2;

/* At most STAGES-2 groups still in flight: the oldest stage has landed. */
__device__ __forceinline__ void cp_async_wait_stage() { kern_cp_async_wait<STAGES - 2>(); }

struct Tile {
    const uint16_t *A, *B;
    int64_t M, N, K, m0, n0;
};

__device__ __forceinline__ void load_stage(uint16_t *sa, uint16_t *sb, const Tile &t, int64_t k0)
{
    int tid = threadIdx.x;
    /* A: 128 rows × 8 chunks = 1024 chunks, 4 per thread. */
#pragma unroll
    for (int i = 0; i < BM * (BK / 8) / THREADS; i++) {
        int c = tid + i * THREADS, r = c / (BK / 8), ch = c % (BK / 8);
        int64_t gr = t.m0 + r, gk = k0 + ch * 8;
        bool ok = gr < t.M && gk < t.K;
        kern_cp_async16(sa + kern_swz(r, ch, BK / 8), ok ? t.A + gr * t.K + gk : t.A, ok);
    }
    /* B: 64 rows × 16 chunks = 1024 chunks. */
#pragma unroll
    for (int i = 0; i < BK * (BN / 8) / THREADS; i++) {
        int c = tid + i * THREADS, r = c / (BN / 8), ch = c % (BN / 8);
        int64_t gk = k0 + r, gn = t.n0 + ch * 8;
        bool ok = gk < t.K && gn < t.N;
        kern_cp_async16(sb + kern_swz(r, ch, BN / 8), ok ? t.B + gk * t.N + gn : t.B, ok);
    }
}

/* acc += A[m0.., k slabs kb0..kb1) · B[.., n0..] for one 128×128 tile. */
__device__ __forceinline__ void tile_mainloop(uint16_t *smem, const Tile &t, int64_t kb0, int64_t kb1, float (&acc)[4][4][4])
{
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
    uint16_t *sa = smem, *sb = smem + STAGES * A_STAGE;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int x = 0; x < 4; x++) acc[i][j][x] = 0.0f;

    int64_t n = kb1 - kb0;
    /* Prologue: the first STAGES-1 slabs (a group per slab, empty past the end). */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < n) load_stage(sa + s * A_STAGE, sb + s * B_STAGE, t, (kb0 + s) * BK);
        kern_cp_async_commit();
    }
    for (int64_t it = 0; it < n; it++) {
        int st = (int)(it % STAGES);
        cp_async_wait_stage();
        __syncthreads(); /* slab `it` landed for everyone; everyone is done with slab it-1's stage */
        int64_t nx = it + STAGES - 1;
        int sn = (int)(nx % STAGES);
        if (nx < n) load_stage(sa + sn * A_STAGE, sb + sn * B_STAGE, t, (kb0 + nx) * BK);
        kern_cp_async_commit();
        const uint16_t *a = sa + st * A_STAGE, *b = sb + st * B_STAGE;
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            uint32_t af[4][4], bf[2][4];
#pragma unroll
            for (int i = 0; i < 4; i++)
                kern_ldsm_x4(af[i], a + kern_swz(wm + i * 16 + lane % 16, kk * 2 + lane / 16, BK / 8));
#pragma unroll
            for (int j = 0; j < 2; j++)
                kern_ldsm_x4_trans(bf[j], b + kern_swz(kk * 16 + lane % 16, (wn + j * 16) / 8 + lane / 16, BN / 8));
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    kern_mma_bf16(acc[i][j], af[i], bf[j / 2][(j % 2) * 2], bf[j / 2][(j % 2) * 2 + 1]);
        }
    }
    kern_cp_async_wait<0>();
    __syncthreads(); /* the shared memory may be refilled by the caller's next tile */
}

/* The accumulators to C (bf16) or, for a K split, to an fp32 partial. */
template <typename OUT>
__device__ __forceinline__ void tile_store(const float (&acc)[4][4][4], OUT *C, int64_t M, int64_t N, int64_t m0,
                                           int64_t n0)
{
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wm = (warp / 4) * 64, wn = (warp % 4) * 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int64_t col = n0 + wn + j * 8 + 2 * t;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int64_t row = m0 + wm + i * 16 + g + h * 8;
                if (row >= M || col >= N) continue; /* N % 8 == 0, so col+1 < N too */
                if constexpr (sizeof(OUT) == 2) {
                    *reinterpret_cast<uint32_t *>(C + row * N + col) = kern_pack_bf16(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                } else {
                    *reinterpret_cast<float2 *>(C + row * N + col) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                }
            }
        }
}

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

/* grid.z = expert; blocks past the expert's rows exit (masked layout: the
 * partly or wholly empty tiles at group edges are the layout's cost). */
template <bool MASKED>
__global__ void __launch_bounds__(THREADS) grouped_kernel(const int64_t *off_or_count, int64_t cap, const uint16_t *A,
                                                          const uint16_t *B, uint16_t *C, int64_t N, int64_t K)
{
    extern __shared__ __align__(128) uint16_t smem[];
    int e = blockIdx.z;
    int64_t base = MASKED ? e * cap : off_or_count[e];
    int64_t rows = MASKED ? min(off_or_count[e], cap) : off_or_count[e + 1] - off_or_count[e];
    int64_t m0 = (int64_t)blockIdx.y * BM;
    if (m0 >= rows) return;
    Tile t = {A + base * K, B + (int64_t)e * K * N, rows, N, K, m0, (int64_t)blockIdx.x * BN};
    float acc[4][4][4];
    tile_mainloop(smem, t, 0, (K + BK - 1) / BK, acc);
    tile_store(acc, C + base * N, rows, N, m0, t.n0);
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

extern "C" int kern_gpu_grouped_contig(int32_t E, int64_t max_rows, int64_t N, int64_t K, const int64_t *d_offsets,
                                       const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, sim_err *err)
{
    int rc = check_shape(max_rows > 0 ? max_rows : 1, N, K, err);
    if (rc) return rc;
    if (E < 1 || E > 65535) return sim_err_set(err, SIM_EINVAL, "grouped GEMM: %d experts", E);
    if (max_rows < 1) return 0;
    if ((rc = set_smem(grouped_kernel<false>, err))) return rc;
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((max_rows + BM - 1) / BM), (unsigned)E);
    grouped_kernel<false><<<grid, THREADS, SMEM_BYTES>>>(d_offsets, 0, d_A, d_B, d_C, N, K);
    return kern_cu_launched("grouped_contig", err);
}

extern "C" int kern_gpu_grouped_masked(int32_t E, int64_t cap, int64_t N, int64_t K, const int64_t *d_counts,
                                       const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, sim_err *err)
{
    int rc = check_shape(cap > 0 ? cap : 1, N, K, err);
    if (rc) return rc;
    if (E < 1 || E > 65535) return sim_err_set(err, SIM_EINVAL, "grouped GEMM: %d experts", E);
    if (cap < 1) return 0;
    if ((rc = set_smem(grouped_kernel<true>, err))) return rc;
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((cap + BM - 1) / BM), (unsigned)E);
    grouped_kernel<true><<<grid, THREADS, SMEM_BYTES>>>(d_counts, cap, d_A, d_B, d_C, N, K);
    return kern_cu_launched("grouped_masked", err);
}
