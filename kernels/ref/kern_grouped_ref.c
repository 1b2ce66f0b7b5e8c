/* kern_grouped_ref — see kern_grouped_ref.h. */
#include "kern_grouped_ref.h"

#include "kern_gemm_ref.h"

void kern_grouped_contig_ref(int32_t E, int64_t N, int64_t K, const int64_t *offsets, const float *A,
                             const float *B, float *C)
{
    for (int32_t e = 0; e < E; e++) {
        int64_t rows = offsets[e + 1] - offsets[e];
        if (rows <= 0) continue;
        kern_gemm_f32_ref(rows, N, K, A + offsets[e] * K, B + (int64_t)e * K * N, C + offsets[e] * N);
    }
}

void kern_grouped_masked_ref(int32_t E, int64_t cap, int64_t N, int64_t K, const int64_t *counts,
                             const float *A, const float *B, float *C)
{
    for (int32_t e = 0; e < E; e++) {
        int64_t rows = counts[e] < cap ? counts[e] : cap;
        if (rows <= 0) continue;
        kern_gemm_f32_ref(rows, N, K, A + (int64_t)e * cap * K, B + (int64_t)e * K * N,
                          C + (int64_t)e * cap * N);
    }
}

int kern_moe_layout_contig(const int32_t *expert_of, int64_t T, int32_t E, int64_t *offsets, int64_t *perm)
{
    for (int32_t e = 0; e <= E; e++) offsets[e] = 0;
    for (int64_t t = 0; t < T; t++) {
        if (expert_of[t] < 0 || expert_of[t] >= E) return -1;
        offsets[expert_of[t] + 1]++;
    }
    for (int32_t e = 0; e < E; e++) offsets[e + 1] += offsets[e];
    /* Stable counting sort in O(T + E): use offsets[e] as expert e's write
     * cursor (it ends at e's end = start of e+1), then shift back by one. */
    for (int64_t t = 0; t < T; t++) perm[offsets[expert_of[t]]++] = t;
    for (int32_t e = E; e > 0; e--) offsets[e] = offsets[e - 1];
    offsets[0] = 0;
    return 0;
}

int kern_moe_layout_masked(const int32_t *expert_of, int64_t T, int32_t E, int64_t cap, int64_t *counts,
                           int64_t *slot)
{
    for (int32_t e = 0; e < E; e++) counts[e] = 0;
    for (int64_t t = 0; t < T; t++) {
        int32_t e = expert_of[t];
        if (e < 0 || e >= E) return -1;
        if (counts[e] >= cap) return -2;
        slot[t] = (int64_t)e * cap + counts[e]++;
    }
    return 0;
}
