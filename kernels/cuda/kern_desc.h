/* kern_desc — the bit encodings the Hopper and Blackwell rungs hand to the
 * tensor cores, as plain arithmetic so they are tested on the CPU
 * (tests/unit/test_kern_desc.c) and the kernels use exactly what is
 * tested:
 *  - the wgmma shared-memory matrix descriptor (sm_90a: kern_wgmma.cuh and
 *    the kernels that include it),
 *  - the tcgen05 shared-memory descriptor and the tcgen05.mma instruction
 *    descriptors of kind::f16 and kind::mxf8f6f4 (sm_100a: kern_tcgen05.cuh,
 *    kern_gemm_sm100.cu, kern_gemm_mxfp8_sm100.cu),
 *  - a Tensor Memory address (lane, column).
 * Written from the PTX ISA ("Matrix Descriptor Format" of wgmma; "Shared
 * memory descriptor" and "Instruction descriptor" of tcgen05; "Tensor
 * Memory addressing"). The layouts named here are those of a 128-byte
 * swizzled tile as TMA writes it (kern_tma.cu): rows of 128 bytes, 8-row
 * groups of 1024 bytes (the swizzle's period), each group 1024-aligned.
 * Header-only, inline, for the host and the device; pure functions that
 * neither allocate nor fail (fields past their width are masked, as the
 * hardware would read them). */
#ifndef KERN_DESC_H
#define KERN_DESC_H

#include <stdint.h>

#ifdef __CUDACC__
#define KERN_DESC_HD __host__ __device__
#else
#define KERN_DESC_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The 128-byte swizzle: a row (the span) and the 8-row pattern (the atom). */
enum { KERN_SW128_SPAN = 128, KERN_SW128_ATOM = 1024 };

/* wgmma layout type, descriptor bits 62-63. */
enum { KERN_WGMMA_INTERLEAVE = 0, KERN_WGMMA_SW128 = 1, KERN_WGMMA_SW64 = 2, KERN_WGMMA_SW32 = 3 };
/* tcgen05 swizzling mode, descriptor bits 61-63. */
enum {
    KERN_UMMA_SW_NONE = 0,
    KERN_UMMA_SW128_BASE32B = 1,
    KERN_UMMA_SW128 = 2,
    KERN_UMMA_SW64 = 4,
    KERN_UMMA_SW32 = 6
};

/* A 14-bit descriptor field holding a shared-memory byte address or
 * offset: bits 4-17 of it (addresses below 256 KB, 16-byte units). */
static inline KERN_DESC_HD uint64_t kern_desc_field(uint32_t bytes)
{
    return (uint64_t)((bytes & 0x3FFFFu) >> 4);
}

/* The wgmma (sm_90) matrix descriptor: start address in bits 0-13,
 * leading byte offset 16-29, stride byte offset 32-45 (each >> 4), base
 * offset 49-51 left 0 (every pattern this code names starts on its
 * 1024-byte boundary, the k steps inside it do not cross 128 bytes:
 * (addr >> 7) & 7 is 0), layout type 62-63. */
static inline KERN_DESC_HD uint64_t kern_wgmma_desc(uint32_t addr, uint32_t lbo, uint32_t sbo, uint32_t layout)
{
    return kern_desc_field(addr) | (kern_desc_field(lbo) << 16) | (kern_desc_field(sbo) << 32) |
           ((uint64_t)(layout & 3u) << 62);
}

/* A K-major operand in 128-byte swizzled rows: the stride byte offset is
 * the 8-row group's 1024 bytes; the leading offset is unused for swizzled
 * K-major layouts ("assumed to be 1": 16 bytes). `addr` may sit 32·j
 * bytes into a row (the j-th k16 step of bf16, k32 of fp8). */
static inline KERN_DESC_HD uint64_t kern_wgmma_sw128_kmajor(uint32_t addr)
{
    return kern_wgmma_desc(addr, 16, KERN_SW128_ATOM, KERN_WGMMA_SW128);
}

/* An MN-major operand (wgmma's transposed B: N contiguous) in 128-byte
 * swizzled rows of 64 bf16 along N, one K row each: the leading byte
 * offset is the distance between two 64-element MN chunks (`chunk_bytes`,
 * a TMA box apart), the stride byte offset that between 8-row K groups
 * (1024). A k16 step is 16 K rows: addr + 2048. */
static inline KERN_DESC_HD uint64_t kern_wgmma_sw128_mnmajor(uint32_t addr, uint32_t chunk_bytes)
{
    return kern_wgmma_desc(addr, chunk_bytes, KERN_SW128_ATOM, KERN_WGMMA_SW128);
}

/* The tcgen05 (sm_100) shared-memory descriptor: the same three 14-bit
 * fields, the fixed version bits 46-48 = 0b001, base offset 49-51 and the
 * leading-offset mode bit 52 left 0 (relative offsets), swizzling mode
 * 61-63. */
static inline KERN_DESC_HD uint64_t kern_umma_desc(uint32_t addr, uint32_t lbo, uint32_t sbo, uint32_t layout)
{
    return kern_desc_field(addr) | (kern_desc_field(lbo) << 16) | (kern_desc_field(sbo) << 32) | (1ull << 46) |
           ((uint64_t)(layout & 7u) << 61);
}

/* The two 128-byte swizzled operand forms, as kern_wgmma_sw128_*. */
static inline KERN_DESC_HD uint64_t kern_umma_sw128_kmajor(uint32_t addr)
{
    return kern_umma_desc(addr, 16, KERN_SW128_ATOM, KERN_UMMA_SW128);
}
static inline KERN_DESC_HD uint64_t kern_umma_sw128_mnmajor(uint32_t addr, uint32_t chunk_bytes)
{
    return kern_umma_desc(addr, chunk_bytes, KERN_SW128_ATOM, KERN_UMMA_SW128);
}

/* The source of tcgen05.cp .32x128b: 32 rows of 16 bytes, unswizzled,
 * 8-row core matrices 128 bytes apart (stride), one core matrix wide (the
 * leading offset unused: 0). */
static inline KERN_DESC_HD uint64_t kern_umma_cp_32x128b(uint32_t addr)
{
    return kern_umma_desc(addr, 0, 8 * 16, KERN_UMMA_SW_NONE);
}

/* The tcgen05.mma instruction descriptor of kind::f16 with fp32
 * accumulation: dtype F32 (bits 4-5 = 1), A and B BF16 (bits 7-9, 10-12 =
 * 1), transpose A / B (bits 15 / 16: 1 for an MN-major operand, 0 for
 * K-major), N >> 3 in bits 17-22, M >> 4 in bits 24-28 (bit 23 reserved).
 * Dense, no negation, no saturation, no shift. */
static inline KERN_DESC_HD uint32_t kern_umma_idesc_bf16(uint32_t m, uint32_t n, int a_mn_major, int b_mn_major)
{
    return (1u << 4) | (1u << 7) | (1u << 10) | ((uint32_t)(a_mn_major != 0) << 15) |
           ((uint32_t)(b_mn_major != 0) << 16) | (((n >> 3) & 0x3Fu) << 17) | (((m >> 4) & 0x1Fu) << 24);
}

/* The instruction descriptor of kind::mxf8f6f4 with block scaling, E4M3 A
 * and B (bits 7-9, 10-12 = 0), both K-major (bits 15, 16 = 0), N >> 3 in
 * bits 17-22, UE8M0 scales (bit 23 = 1), M >> 4 in bits 24-28, the scale
 * factor IDs 0 (kern_umma_idesc_sf_ids sets them). */
static inline KERN_DESC_HD uint32_t kern_umma_idesc_mxf8_e4m3(uint32_t m, uint32_t n)
{
    return (((n >> 3) & 0x3Fu) << 17) | (1u << 23) | (((m >> 4) & 0x1Fu) << 24);
}

/* The descriptor with the byte of each 32-bit Tensor Memory scale word to
 * use: B's scale factor ID in bits 4-5, A's in bits 29-30 (0-3 each). */
static inline KERN_DESC_HD uint32_t kern_umma_idesc_sf_ids(uint32_t idesc, uint32_t a_id, uint32_t b_id)
{
    return (idesc & ~((3u << 4) | (3u << 29))) | ((b_id & 3u) << 4) | ((a_id & 3u) << 29);
}

/* A Tensor Memory address: lane in bits 16-31, column in bits 0-15, from
 * the base tcgen05.alloc returned (lane 0, its first column). */
static inline KERN_DESC_HD uint32_t kern_tmem_addr(uint32_t base, uint32_t lane, uint32_t col)
{
    return base + (lane << 16) + col;
}

#ifdef __cplusplus
}
#endif

#endif
