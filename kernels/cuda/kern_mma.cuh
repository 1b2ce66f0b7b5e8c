/* kern_mma — the device functions shared by the Ampere-rung kernels (sm_80+) that
 * stage tiles through shared memory with cp.async and feed mma.sync from
 * ldmatrix: the bf16 GEMM (kern_gemm.cu), the fp8 GEMM (kern_gemm_fp8.cu)
 * and the tensor-core attention (kern_attn_mma.cu). 16-byte cp.async copies
 * with zero fill, commit and wait of copy groups, ldmatrix x4 (plain and
 * transposed), mma.sync m16n8k16 bf16 → fp32, and the XOR swizzle of
 * unpadded tiles whose rows are whole 128-byte lines. Header-only, CUDA
 * C++; nothing here allocates or fails. */
#ifndef KERN_MMA_CUH
#define KERN_MMA_CUH

#include "kern_cuda.cuh"

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

#endif
