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
