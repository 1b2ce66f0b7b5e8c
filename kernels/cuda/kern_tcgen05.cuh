/* kern_tcgen05 — the device side the Blackwell (sm_100a) GEMM rungs share
 * (kern_gemm_sm100.cu, bf16; kern_gemm_mxfp8_sm100.cu, MXFP8; their
 * descriptors are kern_desc.h's): Tensor Memory allocation
 * and release, the tcgen05 fences, tcgen05.commit onto an mbarrier,
 * tcgen05.ld of 32 fp32 columns, the epilogue both use (a 128×256 fp32
 * accumulator in Tensor Memory stored as bf16 by 4 warps) and the end of
 * a one-tile CTA (kern_gemm_mxfp8_sm100.cu). Written from the PTX ISA;
 * defined only where KERN_SM100A is (sm_100a code), so other architectures
 * of the build compile the kernels' trapping bodies only. No Blackwell GPU
 * has run this code: it is compile- and SASS-checked (test_kern_sass). */
#ifndef KERN_TCGEN05_CUH
#define KERN_TCGEN05_CUH

#include "kern_desc.h"
#include "kern_tma.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 1000 && defined(__CUDA_ARCH_FEAT_SM100_ALL)
#define KERN_SM100A 1
#endif

/* The accumulator tile of both rungs: 128 lanes (rows) × 256 fp32 columns. */
#define KERN_TC_BM 128
#define KERN_TC_BN 256

#ifdef KERN_SM100A
/* Warp-wide: `cols` (a power of two ≥ 32) Tensor Memory columns, their
 * address written to shared memory at `slot`; the permit to allocate
 * given up at once (one CTA per SM). */
__device__ __forceinline__ void kern_tc_alloc(uint32_t slot, uint32_t cols)
{
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(slot), "r"(cols)
                 : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
}

/* Warp-wide, by the warp that allocated. */
__device__ __forceinline__ void kern_tc_dealloc(uint32_t tmem, uint32_t cols)
{
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(tmem), "r"(cols) : "memory");
}

__device__ __forceinline__ void kern_tc_fence_before()
{
    asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}

__device__ __forceinline__ void kern_tc_fence_after()
{
    asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}

/* After warp 0's kern_tc_alloc into `slot` (a shared address inside
 * `smem`, the dynamic shared memory) and the mbarriers' initialisation:
 * the CTA meets with that traffic ordered before it, and every thread gets
 * the allocation's Tensor Memory address. */
__device__ __forceinline__ uint32_t kern_tc_start(const uint8_t *smem, uint32_t slot)
{
    kern_tc_fence_before();
    __syncthreads();
    kern_tc_fence_after();
    return *reinterpret_cast<const volatile uint32_t *>(smem + (slot - kern_saddr(smem)));
}

/* Arrives on bar once every tcgen05 operation (MMA, copy) this thread
 * issued before has completed. */
__device__ __forceinline__ void kern_tc_commit(uint32_t bar)
{
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(bar)
                 : "memory");
}

#define KERN_R8(i) "=r"(v[i]), "=r"(v[i + 1]), "=r"(v[i + 2]), "=r"(v[i + 3]), "=r"(v[i + 4]), "=r"(v[i + 5]), \
                   "=r"(v[i + 6]), "=r"(v[i + 7])

/* 32 consecutive fp32 columns of this thread's Tensor Memory lane. */
__device__ __forceinline__ void kern_tc_ld32(uint32_t taddr, uint32_t (&v)[32])
{
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "
                 "%14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\n"
                 : KERN_R8(0), KERN_R8(8), KERN_R8(16), KERN_R8(24)
                 : "r"(taddr)
                 : "memory");
    asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}
#undef KERN_R8

/* A 128×256 fp32 accumulator at Tensor Memory column `tmem` stored as
 * bf16 by one warp: lanes 32q..32q+31 (rows of the tile; q is the warp's
 * index mod 4, the lane quarter tcgen05.ld lets it reach) 32 columns at a
 * time, 16 bytes a store; rows past M and columns past N are skipped
 * (N % 8 == 0). The caller has seen the MMAs' commit complete. */
__device__ __forceinline__ void kern_tc_store_bf16(uint32_t tmem, int q, uint16_t *C, int M, int N, int m0, int n0,
                                                   int lane)
{
    int64_t row = (int64_t)m0 + q * 32 + lane;
#pragma unroll 1
    for (int c = 0; c < KERN_TC_BN; c += 32) {
        uint32_t v[32];
        __syncwarp(); /* tcgen05.ld is warp-wide (.sync.aligned): the lanes past M rejoin */
        kern_tc_ld32(kern_tmem_addr(tmem, (uint32_t)(q * 32), (uint32_t)c), v);
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < 4; j++) { /* 8 columns, 16 bytes, per store */
            int64_t col = (int64_t)n0 + c + j * 8;
            if (col >= N) break;
            uint4 o;
            o.x = (uint32_t)kern_f2bf(__uint_as_float(v[j * 8 + 0])) | ((uint32_t)kern_f2bf(__uint_as_float(v[j * 8 + 1])) << 16);
            o.y = (uint32_t)kern_f2bf(__uint_as_float(v[j * 8 + 2])) | ((uint32_t)kern_f2bf(__uint_as_float(v[j * 8 + 3])) << 16);
            o.z = (uint32_t)kern_f2bf(__uint_as_float(v[j * 8 + 4])) | ((uint32_t)kern_f2bf(__uint_as_float(v[j * 8 + 5])) << 16);
            o.w = (uint32_t)kern_f2bf(__uint_as_float(v[j * 8 + 6])) | ((uint32_t)kern_f2bf(__uint_as_float(v[j * 8 + 7])) << 16);
            *reinterpret_cast<uint4 *>(C + row * N + col) = o;
        }
    }
}

/* The end of a one-tile CTA of 4 warps: once `done` completes phase 0
 * (the last MMAs' commit) each warp stores its 32 rows
 * (kern_tc_store_bf16), then warp 0 frees the `cols` columns once all
 * Tensor Memory loads are done. */
__device__ __forceinline__ void kern_tc_finish(uint32_t tmem, uint32_t cols, uint32_t done, uint16_t *C, int M, int N,
                                               int m0, int n0)
{
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncwarp(); /* the warp's lanes back from their roles */
    kern_mbar_wait(done, 0);
    kern_tc_fence_after();
    kern_tc_store_bf16(tmem, warp, C, M, N, m0, n0, lane);
    kern_tc_fence_before();
    __syncthreads();
    if (warp == 0) kern_tc_dealloc(tmem, cols);
}
#endif

#endif
