/* kern_gemm — bf16 GEMM on tensor cores with mma.sync m16n8k16 (sm_80+),
 * and the MoE grouped GEMM built on the same block tile.
 *
 * Block tile 128×128×32, 8 warps as 2 (M) × 4 (N), warp tile 64×32 (4×4
 * mma tiles, 64 fp32 accumulators per thread). Global → shared with
 * cp.async 16-byte copies, zero-filled past the matrix edge, two stages so
 * the next K slab loads while the current one is multiplied. Fragments come
 * from shared memory with ldmatrix (A) and ldmatrix.trans (B is K×N
 * row-major); rows are padded by 8 elements so ldmatrix is free of bank
 * conflicts. N and K must be multiples of 8 (16-byte rows); M is arbitrary.
 * No Hopper wgmma/TMA path yet: on sm_90 this runs the same mma.sync code,
 * which tops out well below the wgmma peak. */
#include "kern_cuda.cuh"

namespace {

constexpr int BM = 128, BN = 128, BK = 32, PAD = 8;
constexpr int AS = BK + PAD;  /* A smem row stride (elements) */
constexpr int BS = BN + PAD;  /* B smem row stride */
constexpr int THREADS = 256;

struct Smem {
    uint16_t a[2][BM * AS];
    uint16_t b[2][BK * BS];
};

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void cp_async16(void *dst, const void *src, bool valid)
{
    /* src-size 0 zero-fills the 16 bytes (out-of-range rows/cols). */
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

__device__ __forceinline__ void mma_bf16(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void load_stage(Smem &s, int st, const uint16_t *A, const uint16_t *B, int64_t M,
                                           int64_t N, int64_t K, int64_t m0, int64_t n0, int64_t k0)
{
    int tid = threadIdx.x;
    /* A: 128 rows × 4 chunks of 8 elements = 512 chunks, 2 per thread. */
    for (int c = tid; c < BM * (BK / 8); c += THREADS) {
        int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
        int64_t gr = m0 + r, gk = k0 + kc;
        bool ok = gr < M && gk < K;
        cp_async16(&s.a[st][r * AS + kc], ok ? A + gr * K + gk : A, ok);
    }
    /* B: 32 rows × 16 chunks = 512 chunks. */
    for (int c = tid; c < BK * (BN / 8); c += THREADS) {
        int r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
        int64_t gk = k0 + r, gn = n0 + nc;
        bool ok = gk < K && gn < N;
        cp_async16(&s.b[st][r * BS + nc], ok ? B + gk * N + gn : B, ok);
    }
    cp_async_commit();
}

/* One 128×128 output tile at (m0, n0) of C = A·B. */
__device__ void gemm_tile(Smem &s, const uint16_t *A, const uint16_t *B, uint16_t *C, int64_t M, int64_t N,
                          int64_t K, int64_t m0, int64_t n0)
{
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wm = (warp / 4) * 64, wn = (warp % 4) * 32;
    float acc[4][4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            for (int x = 0; x < 4; x++) acc[i][j][x] = 0.0f;

    int64_t ktiles = (K + BK - 1) / BK;
    load_stage(s, 0, A, B, M, N, K, m0, n0, 0);
    for (int64_t kt = 0; kt < ktiles; kt++) {
        int st = (int)(kt & 1);
        cp_async_wait_all();
        __syncthreads(); /* stage st landed; everyone is done with st^1 */
        if (kt + 1 < ktiles) load_stage(s, st ^ 1, A, B, M, N, K, m0, n0, (kt + 1) * BK);
        for (int kk = 0; kk < BK; kk += 16) {
            uint32_t af[4][4], bf[2][4];
            for (int i = 0; i < 4; i++)
                ldmatrix_x4(af[i], &s.a[st][(wm + i * 16 + lane % 16) * AS + kk + (lane / 16) * 8]);
            for (int j = 0; j < 2; j++)
                ldmatrix_x4_trans(bf[j], &s.b[st][(kk + lane % 16) * BS + wn + j * 16 + (lane / 16) * 8]);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) mma_bf16(acc[i][j], af[i], bf[j / 2][(j % 2) * 2], bf[j / 2][(j % 2) * 2 + 1]);
        }
    }
    __syncthreads(); /* the smem may be reused by the caller's next tile */

    int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            int64_t col = n0 + wn + j * 8 + 2 * t;
            for (int h = 0; h < 2; h++) {
                int64_t row = m0 + wm + i * 16 + g + h * 8;
                if (row < M && col < N) { /* N % 8 == 0, so col+1 < N too */
                    uint32_t packed = (uint32_t)kern_f2bf(acc[i][j][2 * h]) |
                                      ((uint32_t)kern_f2bf(acc[i][j][2 * h + 1]) << 16);
                    *reinterpret_cast<uint32_t *>(C + row * N + col) = packed;
                }
            }
        }
    }
}

__global__ void __launch_bounds__(THREADS) gemm_bf16_kernel(const uint16_t *A, const uint16_t *B, uint16_t *C,
                                                            int64_t M, int64_t N, int64_t K)
{
    __shared__ __align__(16) Smem s;
    gemm_tile(s, A, B, C, M, N, K, (int64_t)blockIdx.y * BM, (int64_t)blockIdx.x * BN);
}

/* grid.z = expert; blocks past the expert's rows exit (masked layout: the
 * partly or wholly empty tiles at group edges are the layout's cost). */
template <bool MASKED>
__global__ void __launch_bounds__(THREADS) grouped_kernel(const int64_t *off_or_count, int64_t cap, const uint16_t *A,
                                                          const uint16_t *B, uint16_t *C, int64_t N, int64_t K)
{
    __shared__ __align__(16) Smem s;
    int e = blockIdx.z;
    int64_t base = MASKED ? e * cap : off_or_count[e];
    int64_t rows = MASKED ? min(off_or_count[e], cap) : off_or_count[e + 1] - off_or_count[e];
    int64_t m0 = (int64_t)blockIdx.y * BM;
    if (m0 >= rows) return;
    gemm_tile(s, A + base * K, B + (int64_t)e * K * N, C + base * N, rows, N, K, m0, (int64_t)blockIdx.x * BN);
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

} // namespace

extern "C" int kern_gpu_gemm_bf16(int64_t M, int64_t N, int64_t K, const uint16_t *d_A, const uint16_t *d_B,
                                  uint16_t *d_C, sim_err *err)
{
    int rc = check_shape(M, N, K, err);
    if (rc) return rc;
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM));
    gemm_bf16_kernel<<<grid, THREADS>>>(d_A, d_B, d_C, M, N, K);
    return kern_cu_launched("gemm_bf16", err);
}

extern "C" int kern_gpu_grouped_contig(int32_t E, int64_t max_rows, int64_t N, int64_t K, const int64_t *d_offsets,
                                       const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, sim_err *err)
{
    int rc = check_shape(max_rows > 0 ? max_rows : 1, N, K, err);
    if (rc) return rc;
    if (E < 1 || E > 65535) return sim_err_set(err, SIM_EINVAL, "grouped GEMM: %d experts", E);
    if (max_rows < 1) return 0;
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((max_rows + BM - 1) / BM), (unsigned)E);
    grouped_kernel<false><<<grid, THREADS>>>(d_offsets, 0, d_A, d_B, d_C, N, K);
    return kern_cu_launched("grouped_contig", err);
}

extern "C" int kern_gpu_grouped_masked(int32_t E, int64_t cap, int64_t N, int64_t K, const int64_t *d_counts,
                                       const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, sim_err *err)
{
    int rc = check_shape(cap > 0 ? cap : 1, N, K, err);
    if (rc) return rc;
    if (E < 1 || E > 65535) return sim_err_set(err, SIM_EINVAL, "grouped GEMM: %d experts", E);
    if (cap < 1) return 0;
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((cap + BM - 1) / BM), (unsigned)E);
    grouped_kernel<true><<<grid, THREADS>>>(d_counts, cap, d_A, d_B, d_C, N, K);
    return kern_cu_launched("grouped_masked", err);
}
