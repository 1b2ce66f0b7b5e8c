/* kern_tma — the host side of the tensor memory accelerator for the GEMM
 * rungs that load tiles with it (kern_gemm_sm90.cu, kern_gemm_sm100.cu,
 * kern_gemm_fp8_sm90.cu, kern_gemm_mxfp8_sm100.cu, kern_grouped_sm90.cu):
 * the tensor maps of a row-major A (M×K) and B (K×N) in bf16, or of fp8 A
 * (M×K) and B (N×K), both K-major, 2-D, the grouped GEMM's stacked A (2-D) and B (3-D), and the
 * 3-D maps of the Hopper flash prefill's (kern_attn_sm90.cu) Q, K, V; 128-byte
 * swizzle, zero fill past the edges, encoded by the driver's
 * cuTensorMapEncodeTiled — fetched with cudaGetDriverEntryPointByVersion,
 * so the plugin links no libcuda —, the check that the device and the
 * build fit such a rung, and the device side every such kernel
 * shares: mbarrier initialisation, arrival (plain and announcing the
 * copies' bytes), parity waits, and the 2-D and 3-D bulk tensor copies that
 * complete on an mbarrier, the grouped tile order of the persistent GEMMs
 * (Hopper and Blackwell); and the persistent grid's size. CUDA C++;
 * the maps are the caller's. */
#ifndef KERN_TMA_CUH
#define KERN_TMA_CUH

#include "kern_cuda.cuh"
#include "kern_plan.h"

#include <cuda.h>

/* 0 when the device has compute capability `cc` exactly and the build
 * holds that architecture's arch-specific ("a") code, which `rung` (named
 * in the message) needs; else SIM_ENOTSUP saying which is missing. */
int kern_gemm_rung_ok(int cc, const char *rung, sim_err *err);

/* kern_gemm_rung_ok, then the tensor maps of A and B: A's boxes are box_k
 * (inner, ≤ 64 so a row is one 128-byte swizzle span) × box_m rows, B's
 * box_n (inner, ≤ 64) × box_k rows. Checks the shape (N, K multiples of 8
 * for 16-byte global strides, all < 2^31): SIM_EINVAL; a driver without
 * the entry point: SIM_ENOTSUP; an encoding refused: SIM_EIO. */
int kern_gemm_rung_maps(int cc, const char *rung, int64_t M, int64_t N, int64_t K, const uint16_t *d_A,
                        const uint16_t *d_B, uint32_t box_m, uint32_t box_k, uint32_t box_n, CUtensorMap *ta,
                        CUtensorMap *tb, sim_err *err);

/* The same for the fp8 block-scaled GEMM: e4m3 bytes, A M×K and B N×K
 * (both K-major), A's boxes box_k (inner, ≤ 128 bytes: one swizzle span)
 * × box_m rows, B's box_k × box_n rows. Checks the shape (K a multiple of
 * 128, the scale block; N of 8; all < 2^31): SIM_EINVAL; other failures
 * as kern_gemm_rung_maps. */
int kern_gemm_rung_maps_fp8(int cc, const char *rung, int64_t M, int64_t N, int64_t K, const uint8_t *d_A,
                            const uint8_t *d_B, uint32_t box_m, uint32_t box_n, uint32_t box_k, CUtensorMap *ta,
                            CUtensorMap *tb, sim_err *err);

/* kern_gemm_rung_ok, then the tensor maps of the grouped GEMM
 * (kern_grouped_sm90.cu): A, `rows` × K (the stacked tokens of every
 * expert), 2-D with boxes of box_k (inner, ≤ 64) × box_m rows; B, the
 * stacked weights [E][K][N], 3-D with the expert outermost and boxes of
 * box_n (inner, ≤ 64) × box_k rows × one expert (so a box never reads the
 * next expert's rows). Checks the shape (N, K multiples of 8, rows, E, N,
 * K below 2^31): SIM_EINVAL; other failures as kern_gemm_rung_maps. */
int kern_grouped_rung_maps(int cc, const char *rung, int64_t rows, int32_t E, int64_t N, int64_t K,
                           const uint16_t *d_A, const uint16_t *d_B, uint32_t box_m, uint32_t box_k, uint32_t box_n,
                           CUtensorMap *ta, CUtensorMap *tb, sim_err *err);

/* kern_gemm_rung_ok, then the tensor maps of an attention kernel's Q
 * ([batch][n_q][hq·d]), K and V ([batch][n_kv][hkv·d]), bf16, as 3-D maps
 * (one sequence deep, so rows past a sequence's end are zero-filled) with
 * boxes of 64 columns (one 128-byte swizzle span) × box_q or box_kv rows.
 * The caller has checked the shape (d a multiple of 64, sizes < 2^31). A
 * driver without the entry point: SIM_ENOTSUP; an encoding refused:
 * SIM_EIO. */
int kern_attn_rung_maps(int cc, const char *rung, int32_t batch, int32_t n_q, int32_t n_kv, int32_t hq,
                        int32_t hkv, int32_t d, const uint16_t *d_q, const uint16_t *d_k, const uint16_t *d_v,
                        uint32_t box_q, uint32_t box_kv, CUtensorMap *tq, CUtensorMap *tk, CUtensorMap *tv,
                        sim_err *err);

/* The grid of a persistent GEMM over `tiles` output tiles: one CTA per SM
 * of the current device, at most one per tile. SIM_EINVAL past 2^31 tiles
 * (`rung` names the kernel), SIM_EIO when the device cannot be queried. */
int kern_persistent_grid(const char *rung, int64_t tiles, unsigned *grid, sim_err *err);

/* Device side, sm_90 and later (the kernels that use these are compiled
 * for their own architecture only; elsewhere they are not defined). All
 * addresses are shared-memory (shared::cta) addresses. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void kern_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/* The producer's arrival, announcing `bytes` of copies to come. */
__device__ __forceinline__ void kern_mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void kern_mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* Waits until the phase of parity `parity` has completed. */
__device__ __forceinline__ void kern_mbar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

/* One 2-D box of the tensor map at coordinates (c0 innermost, c1) into
 * shared memory, completing `bytes` of transaction on bar. */
__device__ __forceinline__ void kern_tma_load(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
                 : "memory");
}

/* The same for a 3-D map at coordinates (c0 innermost, c1, c2). */
__device__ __forceinline__ void kern_tma_load_3d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1,
                                                 int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n"
                 ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}

/* Tile `tile` of the grouped order over tiles_m × tiles_n tiles of bm × bn
 * (kern_plan.h's kern_tile_grouped, tested on the CPU): (m0, n0) is the
 * tile's first element. */
__device__ __forceinline__ void kern_tile_coords(int tile, int tiles_m, int tiles_n, int bm, int bn, int group_m,
                                                 int &m0, int &n0)
{
    int32_t tm, tn;
    kern_tile_grouped(tile, tiles_m, tiles_n, group_m, &tm, &tn);
    m0 = tm * bm;
    n0 = tn * bn;
}

#endif

#endif
