/* kern_mma — the device functions shared by the Ampere-rung kernels (sm_80+) that
 * stage tiles through shared memory with cp.async and feed mma.sync from
 * ldmatrix: the bf16 GEMM (kern_gemm.cu), the grouped GEMM (kern_grouped.cu),
 * the fp8 GEMM (kern_gemm_fp8.cu) and the tensor-core attention
 * (kern_attn_mma.cu). 16-byte cp.async copies with zero fill, commit and
 * wait of copy groups, ldmatrix x4 (plain and transposed), mma.sync
 * m16n8k16 bf16 → fp32, and the XOR swizzle of unpadded tiles whose rows
 * are whole 128-byte lines; and, in namespace kern_gemm_tile, the Ampere
 * rung's bf16 block tile that the GEMM and the grouped GEMM share (its
 * 3-stage cp.async ring, mainloop and store; see kern_gemm.cu). Header-only,
 * CUDA C++; nothing here allocates or fails. */
#ifndef KERN_MMA_CUH
#define KERN_MMA_CUH

#include "kern_cuda.cuh"
#include "kern_plan.h"

/* A 16-byte global → shared copy; valid false zero-fills the 16 bytes
 * (src-size 0: rows and columns past a matrix edge), src must still be a
 * mapped address. */
__device__ __forceinline__ void kern_cp_async16(void *dst, const void *src, bool valid)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(kern_saddr(dst)), "l"(src),
                 "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void kern_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

/* Waits until at most N of this thread's committed groups are in flight
 * (every older group has landed; other threads' copies need a barrier). */
template <int N>
__device__ __forceinline__ void kern_cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Four 8×8 b16 matrices: lanes 8i..8i+7 give the row addresses of matrix
 * i, register i holds its fragment (row lane/4, columns 2·(lane%4), +1). */
__device__ __forceinline__ void kern_ldsm_x4(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(kern_saddr(p)));
}

/* The same, each matrix transposed (a k-major tile read as the col-major B
 * operand). */
__device__ __forceinline__ void kern_ldsm_x4_trans(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(kern_saddr(p)));
}

/* c += a·b, m16n8k16, bf16 inputs, fp32 accumulators. */
__device__ __forceinline__ void kern_mma_bf16(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Element offset of the 16-byte chunk `chunk` (of 8 bf16) of row r in a
 * swizzled tile whose rows are `row_chunks` chunks long (a multiple of 8):
 * the low three bits of the chunk index are XORed with the row's low three,
 * so the eight rows of an ldmatrix phase at one chunk hit eight different
 * bank groups. */
__device__ __forceinline__ int kern_swz(int r, int chunk, int row_chunks)
{
    return r * row_chunks * 8 + ((chunk & ~7) | ((chunk ^ r) & 7)) * 8;
}

/* Two floats as a bf16 pair (lo in the low half), the A-operand packing. */
__device__ __forceinline__ uint32_t kern_pack_bf16(float lo, float hi)
{
    return (uint32_t)kern_f2bf(lo) | ((uint32_t)kern_f2bf(hi) << 16);
}

/* The Ampere rung's bf16 block tile (kern_gemm.cu's header describes it):
 * 128×128×64, 8 warps of 64×32, a 3-stage cp.async ring of swizzled
 * stages in SMEM_BYTES of dynamic shared memory, ldmatrix(.trans) into
 * mma.sync. The GEMM, its split-K and the grouped GEMM run it. */
namespace kern_gemm_tile {

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

} // namespace kern_gemm_tile

#endif
