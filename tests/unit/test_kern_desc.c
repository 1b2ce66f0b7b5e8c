/* test_kern_desc — the encodings the Hopper and Blackwell rungs hand to the
 * hardware, checked on the CPU against values worked out by hand from the
 * PTX ISA (the derivation beside each value): the wgmma and tcgen05
 * shared-memory descriptors of kern_desc.h for the tiles the kernels use,
 * their k-step advance inside a 128-byte swizzled row, the tcgen05.mma
 * instruction descriptors (kind::f16, kind::mxf8f6f4 with its scale
 * factor IDs), Tensor Memory addresses, and the cuTensorMapEncodeTiled
 * arguments of kern_tma_plan.c (dims innermost first, byte strides without
 * the innermost, boxes, the bytes a box brings) with the shapes the driver
 * or the 128-byte swizzle would refuse; and the persistent GEMMs' tile
 * order (kern_plan.h's kern_tile_grouped). Needs neither a GPU nor the
 * CUDA toolkit. */
#include "kern_desc.h"
#include "kern_plan.h"
#include "kern_tma_plan.h"
#include "test_util.h"

#include <stdint.h>

/* Field extraction, as the hardware reads a descriptor. */
static uint32_t bits(uint64_t v, int lo, int n)
{
    return (uint32_t)((v >> lo) & ((1ull << n) - 1));
}

/* wgmma descriptor ("Matrix Descriptor Format"): start address bits 0-13,
 * LBO 16-29, SBO 32-45 (all >> 4), base offset 49-51, layout type 62-63
 * (1 = 128B swizzle, 2 = 64B, 3 = 32B). */
static void test_wgmma_kmajor(void)
{
    /* A 64×64 bf16 tile, K-major (128-byte rows), 128-byte swizzled, at
     * shared address 0x2400 (9 KB: 1024-aligned, as TMA's 128B swizzle
     * needs): start 0x2400 >> 4 = 0x240; LBO unused for swizzled K-major,
     * "assumed 1": 16 bytes >> 4 = 1 → 0x1 << 16 = 0x10000; SBO = one
     * 8-row group of 8 × 128 bytes = 1024 >> 4 = 0x40 → 0x40 << 32 =
     * 0x40_0000_0000; layout 1 << 62 = 0x4000_0000_0000_0000. */
    uint64_t d = kern_wgmma_sw128_kmajor(0x2400);
    CHECK_MSG(d == 0x4000004000010240ull, "%#llx", (unsigned long long)d);
    CHECK(bits(d, 0, 14) == 0x240 && bits(d, 16, 14) == 1 && bits(d, 32, 14) == 64);
    CHECK(bits(d, 49, 3) == 0 && bits(d, 62, 2) == KERN_WGMMA_SW128);
    /* The k16 steps of bf16 (k32 of fp8) are 32 bytes along the swizzled
     * row: +32 >> 4 = +2 in the start field, nothing else changes (the
     * swizzle's XOR uses the address bits the hardware forms, and base
     * offset (addr >> 7) & 7 stays 0 below 128 bytes). */
    for (uint32_t k = 0; k < 4; k++) {
        uint64_t dk = kern_wgmma_sw128_kmajor(0x2400 + 32 * k);
        CHECK_MSG(dk == d + 2 * k, "k=%u: %#llx", k, (unsigned long long)dk);
    }
    /* The second consumer warpgroup's 64 rows of a 128-row A box: + 64 ×
     * 128 = 8192 bytes = +0x200. */
    CHECK(kern_wgmma_sw128_kmajor(0x2400 + 8192) == d + 0x200);
    /* The start field holds address bits 4-17 (256 KB of shared memory). */
    CHECK(bits(kern_wgmma_sw128_kmajor(0x3FFF0), 0, 14) == 0x3FFF);
    CHECK(bits(kern_wgmma_sw128_kmajor(0x40000 + 0x2400), 0, 14) == 0x240);
}

static void test_wgmma_mnmajor(void)
{
    /* B of the bf16 rung, K×N row-major = N-major (wgmma's trans-b 1): four
     * 64-column TMA boxes of 64 K rows × 128 bytes, 8 KB apart, after the
     * 16 KB A box of a stage at 0x400: B at 0x4400. PTX, MN-major
     * swizzled: LBO = "offset from the first (swizzle-byte-size/16) rows
     * to the next" = from one 64-element N chunk to the next = 8192 >> 4
     * = 0x200 → 0x200 << 16 = 0x200_0000; SBO = "offset from the first 8
     * columns to the next 8" = the next 8 K rows = 1024 >> 4 = 0x40. */
    uint64_t d = kern_wgmma_sw128_mnmajor(0x4400, 8192);
    CHECK_MSG(d == 0x4000004002000440ull, "%#llx", (unsigned long long)d);
    CHECK(bits(d, 16, 14) == 0x200 && bits(d, 32, 14) == 0x40);
    /* A k16 step is 16 K rows = 2 groups of 1024 bytes: +2048 >> 4 = +0x80. */
    CHECK(kern_wgmma_sw128_mnmajor(0x4400 + 2048, 8192) == d + 0x80);
    /* The flash prefill's V: 128-row boxes of 64 columns, 16 KB apart. */
    CHECK(bits(kern_wgmma_sw128_mnmajor(0x8000, 16384), 16, 14) == 0x400);
    /* The general form with the other layout types (bits 62-63). */
    CHECK(bits(kern_wgmma_desc(0x2400, 16, 1024, KERN_WGMMA_SW64), 62, 2) == 2);
    CHECK(bits(kern_wgmma_desc(0x2400, 16, 1024, KERN_WGMMA_SW32), 62, 2) == 3);
    CHECK(bits(kern_wgmma_desc(0x2400, 128, 256, KERN_WGMMA_INTERLEAVE), 62, 2) == 0);
}

/* tcgen05 shared-memory descriptor: the same three 14-bit fields, bits
 * 46-48 the fixed 0b001, base offset 49-51, LBO mode 52, swizzling mode
 * 61-63 (0 none, 1 128B with 32B atom, 2 128B, 4 64B, 6 32B). */
static void test_umma_desc(void)
{
    /* The K-major 128B-swizzled tile at 0x2400 of test_wgmma_kmajor:
     * 0x240 | 1 << 16 | 0x40 << 32 | 1 << 46 (0x4000_0000_0000) | 2 << 61
     * (0x4000_0000_0000_0000: the 128B swizzle lands on bit 62 in both
     * encodings, 1 at 62-63 on sm_90, 2 at 61-63 on sm_100). */
    uint64_t d = kern_umma_sw128_kmajor(0x2400);
    CHECK_MSG(d == 0x4000404000010240ull, "%#llx", (unsigned long long)d);
    CHECK(bits(d, 46, 3) == 1 && bits(d, 49, 3) == 0 && bits(d, 52, 1) == 0 && bits(d, 61, 3) == KERN_UMMA_SW128);
    CHECK(kern_umma_sw128_kmajor(0x2400 + 96) == d + 6); /* the 4th k16 step */
    /* B of the bf16 rung (N-major, 8 KB boxes) at 0x4400, as on sm_90. */
    uint64_t b = kern_umma_sw128_mnmajor(0x4400, 8192);
    CHECK_MSG(b == 0x4000404002000440ull, "%#llx", (unsigned long long)b);
    /* The scale-factor source of tcgen05.cp .32x128b at 0x30600: 32 rows of
     * 16 bytes, no swizzle, 8-row core matrices 128 bytes apart: start
     * 0x3060, LBO 0, SBO 128 >> 4 = 8 → 8 << 32 = 0x8_0000_0000, bit 46,
     * mode 0. */
    uint64_t c = kern_umma_cp_32x128b(0x30600);
    CHECK_MSG(c == 0x0000400800003060ull, "%#llx", (unsigned long long)c);
    CHECK(bits(c, 61, 3) == KERN_UMMA_SW_NONE);
}

/* tcgen05.mma instruction descriptor, kind::f16 ("Instruction descriptor
 * format for .kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8"): 0-1
 * sparsity selector, 2 sparsity, 3 saturate, 4-5 dtype (F32 = 1), 7-9
 * atype and 10-12 btype (BF16 = 1), 13-14 negate, 15 / 16 transpose A / B
 * (1 = MN-major), 17-22 N >> 3, 23 reserved, 24-28 M >> 4, 30-31 shift. */
static void test_idesc_f16(void)
{
    /* M128 N256, bf16 → f32, A K-major, B N-major (the bf16 rung):
     * 1 << 4 = 0x10, 1 << 7 = 0x80, 1 << 10 = 0x400, 1 << 16 = 0x1_0000,
     * 256 >> 3 = 32 → 32 << 17 = 0x40_0000, 128 >> 4 = 8 → 8 << 24 =
     * 0x800_0000: 0x0841_0490. */
    uint32_t i = kern_umma_idesc_bf16(128, 256, 0, 1);
    CHECK_MSG(i == 0x08410490u, "%#x", i);
    CHECK(bits(i, 4, 2) == 1 && bits(i, 7, 3) == 1 && bits(i, 10, 3) == 1);
    CHECK(bits(i, 15, 1) == 0 && bits(i, 16, 1) == 1 && bits(i, 17, 6) == 32 && bits(i, 23, 1) == 0);
    CHECK(bits(i, 24, 5) == 8 && bits(i, 0, 4) == 0 && bits(i, 13, 2) == 0 && bits(i, 29, 3) == 0);
    /* M64 N8, both K-major: 0x10 | 0x80 | 0x400 | 1 << 17 (0x2_0000) |
     * 4 << 24 (0x400_0000) = 0x0402_0490. */
    CHECK_MSG(kern_umma_idesc_bf16(64, 8, 0, 0) == 0x04020490u, "%#x", kern_umma_idesc_bf16(64, 8, 0, 0));
    CHECK(kern_umma_idesc_bf16(128, 256, 1, 1) == (i | (1u << 15)));
}

/* kind::mxf8f6f4 with block scaling: 4-5 B's scale factor ID, 7-9 / 10-12
 * atype / btype (E4M3 = 0), 15 / 16 transpose, 17-22 N >> 3, 23 scale
 * type (UE8M0 = 1), 24-28 M >> 4, 29-30 A's scale factor ID. */
static void test_idesc_mxf8(void)
{
    /* M128 N256: 32 << 17 = 0x40_0000, 1 << 23 = 0x80_0000, 8 << 24 =
     * 0x800_0000: 0x08C0_0000. */
    uint32_t i = kern_umma_idesc_mxf8_e4m3(128, 256);
    CHECK_MSG(i == 0x08C00000u, "%#x", i);
    CHECK(bits(i, 7, 3) == 0 && bits(i, 10, 3) == 0 && bits(i, 15, 2) == 0 && bits(i, 23, 1) == 1);
    /* The k-th MMA of a 128-K stage uses byte k of both scale words: k = 3:
     * 3 << 4 = 0x30, 3 << 29 = 0x6000_0000 → 0x68C0_0030; A 1, B 2:
     * 2 << 4 = 0x20, 1 << 29 = 0x2000_0000 → 0x28C0_0020. */
    CHECK_MSG(kern_umma_idesc_sf_ids(i, 3, 3) == 0x68C00030u, "%#x", kern_umma_idesc_sf_ids(i, 3, 3));
    CHECK_MSG(kern_umma_idesc_sf_ids(i, 1, 2) == 0x28C00020u, "%#x", kern_umma_idesc_sf_ids(i, 1, 2));
    for (uint32_t k = 0; k < 4; k++) {
        uint32_t ik = kern_umma_idesc_sf_ids(i, k, k);
        CHECK(bits(ik, 29, 2) == k && bits(ik, 4, 2) == k && (ik & ~((3u << 4) | (3u << 29))) == i);
    }
    /* Setting IDs again replaces them (the kernel starts from the base). */
    CHECK(kern_umma_idesc_sf_ids(kern_umma_idesc_sf_ids(i, 3, 3), 0, 1) == (i | (1u << 4)));
}

/* Tensor Memory address: lane in bits 16-31, column in 0-15. An epilogue
 * warp w reaches lanes 32·(w mod 4)…; column c of accumulator 1 (256
 * columns after the allocation's first). */
static void test_tmem_addr(void)
{
    CHECK(kern_tmem_addr(0, 96, 32) == 0x00600020u);
    CHECK(kern_tmem_addr(0x100, 32, 0) == 0x00200100u);
    CHECK(kern_tmem_addr(0x100, 0, 256 + 16 * 3 + 4) == 0x100 + 308);
}

/* cuTensorMapEncodeTiled's arguments: dims innermost first, strides in
 * bytes of dims 1.. (rank − 1 of them), box per dim, element strides 1. */
static void test_tma_gemm_maps(void)
{
    kern_tma_tiled t;
    sim_err err = {0};
    const uintptr_t base = 0x7f0000000000u;
    /* The bf16 rungs' A: M = 1000 rows × K = 4104 bf16, boxes 64 (K, one
     * 128-byte swizzle span) × 128 rows: dims {4104, 1000}, a row 4104 × 2
     * = 8208 bytes (a multiple of 16), box 64 × 128 × 2 = 16 KB. */
    CHECK(kern_tma_tiled_plan(base, 2, 1000, 4104, 0, 64, 128, &t, &err) == 0);
    CHECK(t.rank == 2 && t.dims[0] == 4104 && t.dims[1] == 1000 && t.strides[0] == 8208);
    CHECK(t.box[0] == 64 && t.box[1] == 128 && t.box[2] == 1);
    CHECK(t.elem_strides[0] == 1 && t.elem_strides[1] == 1 && t.elem_strides[2] == 1);
    CHECK(t.box_bytes == 16384);
    /* Their B: K = 4104 rows × N = 1928, 64 × 64 boxes of 8 KB; a stage is
     * one A box and four B boxes: 16384 + 4 · 8192 = 49152 = the 48 KB
     * the full barrier expects, at every edge (TMA counts whole boxes). */
    kern_tma_tiled b;
    CHECK(kern_tma_tiled_plan(base, 2, 4104, 1928, 0, 64, 64, &b, &err) == 0);
    CHECK(b.dims[0] == 1928 && b.dims[1] == 4104 && b.strides[0] == 3856 && b.box_bytes == 8192);
    CHECK(t.box_bytes + 4 * b.box_bytes == 48 * 1024);
    /* fp8 (e4m3, 1 byte): A M × K with 128 × 128 boxes (a 128-byte row is
     * one swizzle span): 16 KB; the MXFP8 rung's B, N × K with 128 × 256
     * boxes: 32 KB; 16 + 32 = its 48 KB stage; the Hopper fp8 rung's 128
     * × 128 B box: 16 + 16 = its 32 KB stage. */
    CHECK(kern_tma_tiled_plan(base, 1, 77, 384, 0, 128, 128, &t, &err) == 0 && t.box_bytes == 16384);
    CHECK(t.dims[0] == 384 && t.dims[1] == 77 && t.strides[0] == 384);
    CHECK(kern_tma_tiled_plan(base, 1, 264, 384, 0, 128, 256, &b, &err) == 0 && b.box_bytes == 32768);
    CHECK(t.box_bytes + b.box_bytes == 48 * 1024);
}

static void test_tma_3d_maps(void)
{
    kern_tma_tiled t;
    sim_err err = {0};
    /* The grouped GEMM's stacked weights [E = 8][K = 512][N = 1024] bf16:
     * dims {1024, 512, 8}, strides {1024 · 2, 512 · 2048} = {2048,
     * 1048576}, boxes one expert deep. */
    CHECK(kern_tma_tiled_plan(0x10000, 2, 512, 1024, 8, 64, 64, &t, &err) == 0);
    CHECK(t.rank == 3 && t.dims[0] == 1024 && t.dims[1] == 512 && t.dims[2] == 8);
    CHECK(t.strides[0] == 2048 && t.strides[1] == 1048576 && t.box[2] == 1 && t.box_bytes == 8192);
    /* The flash prefill's Q, [batch 2][n_q 300][hq 32 · d 128] bf16: dims
     * {4096, 300, 2}, strides {8192, 300 · 8192 = 2457600}, 64 × 128 boxes
     * (16 KB; a d = 128 row takes two). */
    CHECK(kern_tma_tiled_plan(0x10000, 2, 300, 32 * 128, 2, 64, 128, &t, &err) == 0);
    CHECK(t.dims[0] == 4096 && t.dims[1] == 300 && t.dims[2] == 2);
    CHECK(t.strides[0] == 8192 && t.strides[1] == 2457600 && t.box_bytes == 16384);
}

/* What cuTensorMapEncodeTiled or the 128-byte swizzle would refuse. */
static void test_tma_refusals(void)
{
    kern_tma_tiled t;
    sim_err err = {0};
    CHECK(kern_tma_tiled_plan(0x10008, 2, 64, 64, 0, 64, 64, &t, &err) == SIM_EINVAL); /* address */
    CHECK(kern_tma_tiled_plan(0x10000, 2, 64, 12, 0, 8, 64, &t, &err) == SIM_EINVAL);  /* 24-byte rows */
    CHECK(kern_tma_tiled_plan(0x10000, 2, 64, 64, 0, 128, 64, &t, &err) == SIM_EINVAL); /* 256-byte box row */
    CHECK(kern_tma_tiled_plan(0x10000, 1, 64, 64, 0, 4, 64, &t, &err) == SIM_EINVAL);   /* 4-byte box row */
    CHECK(kern_tma_tiled_plan(0x10000, 2, 512, 64, 0, 64, 257, &t, &err) == SIM_EINVAL); /* box past 256 */
    CHECK(kern_tma_tiled_plan(0x10000, 2, 64, 64, 0, 64, 0, &t, &err) == SIM_EINVAL);
    CHECK(kern_tma_tiled_plan(0x10000, 3, 64, 64, 0, 16, 64, &t, &err) == SIM_EINVAL); /* element size */
    CHECK(kern_tma_tiled_plan(0x10000, 2, 0, 64, 0, 64, 64, &t, &err) == SIM_EINVAL);
    CHECK(kern_tma_tiled_plan(0x10000, 2, 64, 64, -1, 64, 64, &t, &err) == SIM_EINVAL);
    /* A matrix stride at 2^40 bytes (rank 3): 2^20 rows of 2^20 bytes. */
    CHECK(kern_tma_tiled_plan(0x10000, 2, 1 << 20, 1 << 19, 2, 64, 64, &t, &err) == SIM_EINVAL);
    CHECK(kern_tma_tiled_plan(0x10000, 2, (1 << 20) - 1, 1 << 19, 2, 64, 64, &t, &err) == 0);
    CHECK(kern_tma_tiled_plan(0x10000, 2, (int64_t)1 << 33, 64, 0, 64, 64, &t, &err) == SIM_EINVAL);
    /* The limits themselves pass: a 128-byte box row, 256-row boxes. */
    CHECK(kern_tma_tiled_plan(0x10000, 2, 8, 8, 0, 64, 256, &t, &err) == 0 && t.box_bytes == 32768);
    CHECK(kern_tma_tiled_plan(0x10000, 1, 8, 16, 0, 16, 8, &t, &err) == 0 && t.box_bytes == 128);
}

/* The persistent GEMMs' grouped tile order: every tile of the grid once,
 * group_m tile rows at a time (the last group shorter), down a group's
 * rows before the next column. CTA b of a grid of g takes tiles b, b + g,
 * …: together the tiles cover the output exactly once. */
static void test_tile_order(void)
{
    int32_t tm, tn;
    /* 20 × 3 tiles, groups of 8: tiles 0-7 are rows 0-7 of column 0, 8-15
     * rows 0-7 of column 1, …; the last group (rows 16-19, 4 rows) starts
     * at tile 2 · 8 · 3 = 48: 48 → (16, 0), 51 → (19, 0), 52 → (16, 1). */
    static const int32_t want[][3] = {{0, 0, 0},   {7, 7, 0},   {8, 0, 1},   {24, 8, 0},
                                      {48, 16, 0}, {51, 19, 0}, {52, 16, 1}, {59, 19, 2}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        kern_tile_grouped(want[i][0], 20, 3, 8, &tm, &tn);
        CHECK_MSG(tm == want[i][1] && tn == want[i][2], "tile %d: (%d, %d)", want[i][0], tm, tn);
    }
    static const int32_t ms[] = {1, 2, 7, 8, 9, 17, 33}, ns[] = {1, 3, 8, 15};
    static unsigned char seen[33 * 15];
    for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++)
        for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
            int32_t M = ms[a], N = ns[b], ok = 1, prev_m = -1, prev_n = -1;
            memset(seen, 0, sizeof seen);
            for (int32_t t = 0; t < M * N; t++) {
                kern_tile_grouped(t, M, N, 8, &tm, &tn);
                ok &= tm >= 0 && tm < M && tn >= 0 && tn < N && !seen[tm * N + tn];
                if (tm >= 0 && tm < M && tn >= 0 && tn < N) seen[tm * N + tn] = 1;
                /* Within a group, the next tile is the next row or the top
                 * of the next column. */
                ok &= t == 0 || (tn == prev_n && tm == prev_m + 1) || (tn == prev_n + 1 && tm % 8 == 0) ||
                      (tn == 0 && tm % 8 == 0 && tm == (prev_m / 8 + 1) * 8);
                prev_m = tm, prev_n = tn;
            }
            CHECK_MSG(ok, "%d × %d tiles: not each tile once in the grouped order", M, N);
        }
}

static const test_case cases[] = {
    {"wgmma_kmajor", test_wgmma_kmajor},
    {"wgmma_mnmajor", test_wgmma_mnmajor},
    {"umma_desc", test_umma_desc},
    {"idesc_f16", test_idesc_f16},
    {"idesc_mxf8", test_idesc_mxf8},
    {"tmem_addr", test_tmem_addr},
    {"tma_gemm_maps", test_tma_gemm_maps},
    {"tma_3d_maps", test_tma_3d_maps},
    {"tma_refusals", test_tma_refusals},
    {"tile_order", test_tile_order},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_kern_desc", cases);
}
