/* kern_wgmma — the device-side pieces the Hopper wgmma kernels share
 * (kern_gemm_sm90.cu for bf16, kern_gemm_fp8_sm90.cu for block-scaled
 * fp8, kern_grouped_sm90.cu for the grouped GEMM, kern_attn_sm90.cu; their
 * shared-memory matrix descriptors are kern_desc.h's): the compiler fence
 * that keeps accumulator accesses on the right side of a wgmma fence/wait
 * pair, the epilogue that stores a warpgroup's m64nN fp32 accumulator as
 * bf16 pairs, the initialisation of their mbarrier rings, their split of
 * registers and of roles between warpgroups, and the accumulator operand
 * lists of a wgmma's inline asm; and the bf16 rungs' (kern_gemm_sm90.cu,
 * kern_grouped_sm90.cu) block tile, its ring's layout, its wgmma
 * m64n256k16, the producer's stage acquisition and the consumers' K loop.
 * Header-only CUDA C++; the device code is compiled only for sm_90a
 * (KERN_SM90A: the arch-specific target that has wgmma); nothing here
 * allocates or fails. */
#ifndef KERN_WGMMA_CUH
#define KERN_WGMMA_CUH

#include "kern_desc.h"
#include "kern_tma.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KERN_SM90A 1
#endif

/* The bf16 rungs' block tile (kern_gemm_sm90.cu, kern_grouped_sm90.cu):
 * 128×256×64 on 384 threads (a producer and two consumer warpgroups), a
 * ring of 4 stages of 48 KB — A 128×64 at the stage's start, B 64×256 as
 * four 64-column boxes (64 bf16 = the 128-byte swizzle span) after it —
 * then the stages' "full" and "empty" mbarriers. */
namespace kern_wgmma_bf16 {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4;
constexpr int THREADS = 384, CONSUMER_WARPS = 8;
constexpr int BOX_N = 64;
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2, B_BOX_BYTES = BK * BOX_N * 2;
constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int SMEM_BYTES = 1024 /* alignment slack */ + STAGES * STAGE_BYTES + 2 * STAGES * 8;
} // namespace kern_wgmma_bf16

#ifdef KERN_SM90A
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

/* Runs a warp-specialised 384-thread CTA: kern_wg_producer's register
 * split, then produce() on the producer warpgroup's first thread (the one
 * that issues the copies) and consume(cw, warp, lane) on every thread of
 * the two consumer warpgroups (cw 0 or 1, warp 0–3 within it). Called by
 * every thread. */
template <class Produce, class Consume>
__device__ __forceinline__ void kern_wg_run(const Produce &produce, const Consume &consume)
{
    int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    if (kern_wg_producer(wg)) {
        if (tid == 0) produce();
    } else {
        consume(wg - 1, tid / 32, tid % 32);
    }
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

/* The accumulator operands of a wgmma's inline asm (the bf16 and fp8
 * rungs'): KERN_WGMMA_D64(i) binds d[i..i+63] read-write, KERN_WGMMA_R64
 * names the first 64 (%0 … %63) in the instruction's register list. */
#define KERN_WGMMA_D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), \
                         "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define KERN_WGMMA_D64(i) KERN_WGMMA_D8(i), KERN_WGMMA_D8(i + 8), KERN_WGMMA_D8(i + 16), KERN_WGMMA_D8(i + 24), \
                          KERN_WGMMA_D8(i + 32), KERN_WGMMA_D8(i + 40), KERN_WGMMA_D8(i + 48), KERN_WGMMA_D8(i + 56)
#define KERN_WGMMA_R64                                                                                       \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                 \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                       \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                       \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

/* d (+)= A·B for one m64n256k16 step; scale_d 0 overwrites d. A is
 * K-major (trans-a 0), B N-major (trans-b 1). */
__device__ __forceinline__ void kern_wgmma_m64n256k16(float (&d)[128], uint64_t da, uint64_t db, int scale_d)
{
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        KERN_WGMMA_R64 ", "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127},"
        " %128, %129, p, 1, 1, 0, 1;\n}\n"
        : KERN_WGMMA_D64(0), KERN_WGMMA_D64(64)
        : "l"(da), "l"(db), "r"(scale_d)
        : "memory");
}

/* The bf16 ring's shared-memory addresses: the stages from `base`, then
 * the stages' full and empty barriers. */
struct kern_bf16_ring {
    uint32_t base, full, empty;
};

/* Runs a bf16 rung's CTA: lays the ring out in the dynamic shared memory
 * (the stages from a 1024-byte boundary, the period of the 128-byte
 * swizzle), initialises its barriers (kern_ring_init), then runs
 * produce(ring) and consume(ring, cw, warp, lane) as kern_wg_run does.
 * Called by every thread. */
template <class Produce, class Consume>
__device__ __forceinline__ void kern_bf16_run(const Produce &produce, const Consume &consume)
{
    using namespace kern_wgmma_bf16;
    extern __shared__ __align__(1024) uint8_t kern_bf16_smem[];
    kern_bf16_ring r;
    r.base = (kern_saddr(kern_bf16_smem) + 1023) & ~1023u;
    r.full = r.base + STAGES * STAGE_BYTES;
    r.empty = r.full + STAGES * 8;
    kern_ring_init(r.full, r.empty, STAGES, CONSUMER_WARPS);
    kern_wg_run([&] { produce(r); }, [&](int cw, int warp, int lane) { consume(r, cw, warp, lane); });
}

/* The producer's next stage of the bf16 ring: waits until the consumers
 * have freed stage it % STAGES (a fresh barrier passes parity 1), announces
 * a stage's bytes on its full barrier and returns its index. The ring's
 * counter `it` runs on across tiles, so phases carry from tile to tile. */
__device__ __forceinline__ uint32_t kern_bf16_stage_acquire(const kern_bf16_ring &r, uint32_t it)
{
    using namespace kern_wgmma_bf16;
    uint32_t s = it % STAGES, ph = (it / STAGES) & 1;
    kern_mbar_wait(r.empty + 8 * s, ph ^ 1);
    kern_mbar_expect_tx(r.full + 8 * s, STAGE_BYTES);
    return s;
}

/* One consumer warpgroup's (cw: 0 or 1, its 64 rows of the stage's A) K
 * loop over `kblocks` stages of the bf16 ring from counter `it` (advanced):
 * d = A·B with wgmma m64n256k16 (A K-major, B N-major, both through
 * shared-memory descriptors), one stage's wgmma group kept in flight while
 * it waits for the next; each stage is handed back (one arrival per warp
 * on its empty barrier) once the group after it is issued, the last one
 * when all are complete. */
__device__ __forceinline__ void kern_bf16_consume(float (&d)[128], const kern_bf16_ring &r, int kblocks, uint32_t &it,
                                                  int cw, int lane)
{
    using namespace kern_wgmma_bf16;
#pragma unroll
    for (int i = 0; i < 128; i++) d[i] = 0.0f;
    for (int kb = 0; kb < kblocks; kb++, it++) {
        uint32_t s = it % STAGES, ph = (it / STAGES) & 1;
        kern_mbar_wait(r.full + 8 * s, ph);
        uint32_t a = r.base + s * STAGE_BYTES + cw * (64 * BK * 2), b = r.base + s * STAGE_BYTES + A_BYTES;
        kern_acc_fence(d);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int k = 0; k < BK / 16; k++)
            /* A: rows of 128 bytes, 8-row groups 1024 bytes apart, k16 steps 32 bytes along the swizzled row;
             * B: 64-column boxes 8 KB apart (leading), 8-row K groups 1 KB apart (stride), k16 = 2 KB. */
            kern_wgmma_m64n256k16(d, kern_wgmma_sw128_kmajor(a + k * 32), kern_wgmma_sw128_mnmajor(b + k * 2048, B_BOX_BYTES),
                                  kb > 0 || k > 0);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        /* The group before this one is complete: its stage may be refilled. */
        asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
        kern_acc_fence(d);
        if (kb > 0 && lane == 0) kern_mbar_arrive(r.empty + 8 * ((it - 1) % STAGES));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    kern_acc_fence(d);
    if (kblocks > 0 && lane == 0) kern_mbar_arrive(r.empty + 8 * ((it - 1) % STAGES));
}
#endif

#endif
