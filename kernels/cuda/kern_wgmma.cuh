/* kern_wgmma — the device-side pieces the Hopper wgmma GEMMs share
 * (kern_gemm_sm90.cu for bf16, kern_gemm_fp8_sm90.cu for block-scaled
 * fp8): the grouped tile order of their persistent grids, the
 * shared-memory matrix descriptor of a 128-byte-swizzled operand, the
 * compiler fence that keeps accumulator accesses on the right side of a
 * wgmma fence/wait pair, and the epilogue that stores a warpgroup's
 * m64nN fp32 accumulator as bf16 pairs, the initialisation of their
 * mbarrier rings and their split of registers between warpgroups. Header-only CUDA C++, compiled
 * only for sm_90a (KERN_SM90A: the arch-specific target that has wgmma);
 * nothing here allocates or fails. */
#ifndef KERN_WGMMA_CUH
#define KERN_WGMMA_CUH

#include "kern_tma.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KERN_SM90A 1
#endif

#ifdef KERN_SM90A
/* Tile `tile` of the grouped order over tiles_m × tiles_n tiles of bm × bn:
 * group_m tile rows at a time, down the rows of a group before moving one
 * tile column right, so the CTAs running together share B's columns in L2.
 * (m0, n0) is the tile's first element. */
__device__ __forceinline__ void kern_tile_coords(int tile, int tiles_m, int tiles_n, int bm, int bn, int group_m,
                                                 int &m0, int &n0)
{
    int group = tile / (group_m * tiles_n), first = group * group_m;
    int rows = min(tiles_m - first, group_m), r = tile % (group_m * tiles_n);
    m0 = (first + r % rows) * bm;
    n0 = (r / rows) * bn;
}

/* A shared-memory matrix descriptor with the 128-byte swizzle: start
 * address, leading and stride byte offsets (each stored >> 4). */
__device__ __forceinline__ uint64_t kern_sw128_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)((lbo & 0x3FFFF) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

/* Initialises a ring of `stages` stages whose barriers lie at full + 8·s
 * (completed by the producer's arrival and the copies' bytes) and empty +
 * 8·s (completed by `consumers` arrivals), makes them visible to the copy
 * engine, and synchronises the CTA. Called by every thread. */
__device__ __forceinline__ void kern_ring_init(uint32_t full, uint32_t empty, int stages, int consumers)
{
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; s++) {
            kern_mbar_init(full + 8 * s, 1);
            kern_mbar_init(empty + 8 * s, consumers);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
}

/* Warp specialisation of a 384-thread CTA: warpgroup 0 (the producer,
 * which only issues copies) gives registers back (setmaxnreg 40), the two
 * consumers take them (232: room for their accumulators); 128·40 + 256·232
 * fits the 64 K registers of an SM. Called by every thread; true in the
 * producer warpgroup. */
__device__ __forceinline__ bool kern_wg_producer(int wg)
{
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        return true;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    return false;
}

/* Keeps the compiler from moving accumulator accesses across the wgmma
 * fence/wait pair. */
template <int N> __device__ __forceinline__ void kern_acc_fence(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* Stores a warpgroup's m64nN accumulator (N = 2·NA columns from n0) as
 * bf16 into row-major C (M×N_total), rows from r0 = the warpgroup's first
 * row + 16·warp. Accumulator layout of m64nN: warp w owns rows
 * 16w..16w+15; d[4j..4j+1] row g, d[4j+2..4j+3] row g+8, columns 8j + 2t,
 * +1 (g = lane / 4, t = lane % 4). Elements past M or N are skipped; N_total
 * even. */
template <int NA>
__device__ __forceinline__ void kern_wgmma_store_bf16(uint16_t *C, int M, int N, int64_t r0, int n0,
                                                      const float (&d)[NA], int lane)
{
    int g = lane / 4, t = lane % 4;
    r0 += g;
#pragma unroll
    for (int j = 0; j < NA / 4; j++) {
        int64_t col = n0 + j * 8 + 2 * t;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int64_t row = r0 + h * 8;
            if (row < M && col < N) {
                uint32_t p = (uint32_t)kern_f2bf(d[4 * j + 2 * h]) | ((uint32_t)kern_f2bf(d[4 * j + 2 * h + 1]) << 16);
                *reinterpret_cast<uint32_t *>(C + row * N + col) = p;
            }
        }
    }
}
#endif

#endif
