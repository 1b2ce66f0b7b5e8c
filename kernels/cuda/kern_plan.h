/* kern_plan — the launch plans of the bundled kernels that are plain
 * arithmetic on the shape and the device, kept in C so they are tested
 * without a GPU: the Ampere-rung GEMM's split-K for skinny GEMMs (how many
 * K splits, how the K slabs are shared, the fp32 workspace the partials
 * need) and the tensor-core paged decode's split-KV (how many splits, the
 * keys of each). The tile sizes are kern_gemm.cu's. Pure functions;
 * kern_gemm_split_range and kern_decode_split_keys are inline for the
 * device too. */
#ifndef KERN_PLAN_H
#define KERN_PLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { KERN_GEMM_BM = 128, KERN_GEMM_BN = 128, KERN_GEMM_BK = 64 };
enum { KERN_SPLITK_M_MAX = 64, KERN_SPLITK_MAX = 16, KERN_SPLITK_MIN_SLABS = 4 };

/* K splits for an M×N×K bf16 GEMM on `sms` SMs: 1 (no split) unless M ≤
 * KERN_SPLITK_M_MAX; then enough that the output tiles times the splits
 * give every SM one, each split keeping at least KERN_SPLITK_MIN_SLABS K
 * slabs of KERN_GEMM_BK, at most KERN_SPLITK_MAX; fewer than 2 is 1. */
int32_t kern_gemm_splits(int64_t M, int64_t N, int64_t K, int32_t sms);
/* The K slabs of split z of S: [first, end) with first = kt·z/S, so the
 * splits cover all kt slabs in order, their sizes differing by at most one
 * (inline: the split-K kernel computes it on the device). */
#ifdef __CUDACC__
#define KERN_PLAN_HD __host__ __device__
#else
#define KERN_PLAN_HD
#endif
static inline KERN_PLAN_HD void kern_gemm_split_range(int64_t kt, int32_t S, int32_t z, int64_t *first, int64_t *end)
{
    *first = kt * z / S;
    *end = kt * (z + 1) / S;
}
/* Bytes of the fp32 partials [S][M][N]; 0 when there is no split. */
size_t kern_gemm_split_workspace(int64_t M, int64_t N, int64_t K, int32_t sms);

/* Tile `tile` of the persistent Hopper and Blackwell GEMMs' grouped order
 * over tiles_m × tiles_n output tiles (kern_tma.cuh's kern_tile_coords):
 * group_m tile rows at a time, down the rows of a group before moving one
 * tile column right (the last group may have fewer rows), so the CTAs
 * that run together share B's columns in L2. Every tile in [0, tiles_m ·
 * tiles_n) gets its own (*tm, *tn) (inline: the kernels compute it on the
 * device). */
static inline KERN_PLAN_HD void kern_tile_grouped(int32_t tile, int32_t tiles_m, int32_t tiles_n, int32_t group_m,
                                                  int32_t *tm, int32_t *tn)
{
    int32_t span = group_m * tiles_n, first = tile / span * group_m, left = tiles_m - first;
    int32_t rows = left < group_m ? left : group_m, r = tile % span;
    *tm = first + r % rows;
    *tn = r / rows;
}

enum { KERN_DECODE_CTAS_PER_SM = 2, KERN_DECODE_MIN_KEYS = 256, KERN_DECODE_SPLITS_MAX = 128 };

/* Split-KV splits for the tensor-core paged decode (kern_decode_mma.cu, a
 * CTA per split × KV head × request) of `batch` requests of up to ctx
 * tokens in pages of `page`, hkv KV heads, on `sms` SMs: enough that the
 * CTAs give every SM KERN_DECODE_CTAS_PER_SM, but no more than leave each
 * split KERN_DECODE_MIN_KEYS keys (one split below that), nor more than the
 * pages or KERN_DECODE_SPLITS_MAX; then cut to the splits that get pages
 * under kern_decode_split_keys' rule, so a context of ctx tokens leaves no
 * split empty. 1 for arguments below 1. */
int32_t kern_decode_splits(int64_t batch, int32_t hkv, int64_t ctx, int32_t page, int32_t sms);
/* Keys [*t0, *t1) of split sp of n_splits over a context of ctx tokens:
 * whole pages, ceil(pages / n_splits) per split (kern_attn_ref.h's
 * kern_decode_pages_per_split, which the CPU reference splits by); a split
 * past the context's end is empty (*t1 == *t0). */
static inline KERN_PLAN_HD void kern_decode_split_keys(int32_t ctx, int32_t page, int32_t n_splits, int32_t sp,
                                                       int32_t *t0, int32_t *t1)
{
    int32_t pages = (ctx + page - 1) / page, pps = (pages + n_splits - 1) / n_splits;
    if (pps < 1) pps = 1;
    int64_t a = (int64_t)sp * pps * page, b = a + (int64_t)pps * page;
    if (a > ctx) a = ctx;
    if (b > ctx) b = ctx;
    *t0 = (int32_t)a;
    *t1 = (int32_t)b;
}

#ifdef __cplusplus
}
#endif

#endif
