/* kern_plan — see kern_plan.h. */
#include "kern_plan.h"

int32_t kern_gemm_splits(int64_t M, int64_t N, int64_t K, int32_t sms)
{
    if (M > KERN_SPLITK_M_MAX || M < 1 || N < 1 || K < 1 || sms < 1) return 1;
    int64_t tiles = ((M + KERN_GEMM_BM - 1) / KERN_GEMM_BM) * ((N + KERN_GEMM_BN - 1) / KERN_GEMM_BN);
    int64_t kt = (K + KERN_GEMM_BK - 1) / KERN_GEMM_BK, s = sms / tiles;
    if (s > kt / KERN_SPLITK_MIN_SLABS) s = kt / KERN_SPLITK_MIN_SLABS;
    if (s > KERN_SPLITK_MAX) s = KERN_SPLITK_MAX;
    return s < 2 ? 1 : (int32_t)s;
}

size_t kern_gemm_split_workspace(int64_t M, int64_t N, int64_t K, int32_t sms)
{
    int32_t s = kern_gemm_splits(M, N, K, sms);
    return s > 1 ? (size_t)s * (size_t)M * (size_t)N * sizeof(float) : 0;
}

int32_t kern_decode_splits(int64_t batch, int32_t hkv, int64_t ctx, int32_t page, int32_t sms)
{
    if (batch < 1 || hkv < 1 || ctx < 1 || page < 1 || sms < 1) return 1;
    int64_t blocks = batch * hkv, pages = (ctx + page - 1) / page;
    int64_t s = ((int64_t)KERN_DECODE_CTAS_PER_SM * sms + blocks - 1) / blocks;
    if (s > ctx / KERN_DECODE_MIN_KEYS) s = ctx / KERN_DECODE_MIN_KEYS;
    if (s > pages) s = pages;
    if (s > KERN_DECODE_SPLITS_MAX) s = KERN_DECODE_SPLITS_MAX;
    if (s < 2) return 1;
    int64_t pps = (pages + s - 1) / s;
    return (int32_t)((pages + pps - 1) / pps); /* the splits that get pages */
}
