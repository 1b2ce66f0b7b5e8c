/* kern_plan — the launch plans of the bundled kernels that are plain
 * arithmetic on the shape and the device, kept in C so they are tested
 * without a GPU: the Ampere-rung GEMM's split-K for skinny GEMMs (how many
 * K splits, how the K slabs are shared, the fp32 workspace the partials
 * need). The tile sizes are kern_gemm.cu's. Pure functions; kern_gemm_split_range
 * is inline for the device too. */
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

#ifdef __cplusplus
}
#endif

#endif
