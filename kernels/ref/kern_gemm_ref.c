/* kern_gemm_ref — see kern_gemm_ref.h. Loops are i-k-j so the inner loop
 * streams rows of B and C; the accumulator row is fp32 throughout. */
#include "kern_gemm_ref.h"

#include "kern_num.h"
#include "kern_quant_ref.h"

#include <stdlib.h>
#include <string.h>

void kern_gemm_f32_ref(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C)
{
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * N;
        memset(c, 0, (size_t)N * sizeof *c);
        for (int64_t k = 0; k < K; k++) {
            float a = A[i * K + k];
            const float *b = B + k * N;
            for (int64_t j = 0; j < N; j++) c[j] += a * b[j];
        }
    }
}

void kern_gemm_bf16_ref(int64_t M, int64_t N, int64_t K, const uint16_t *A, const uint16_t *B, uint16_t *C)
{
    float acc[256];
    /* Column chunks keep the accumulator on the stack (no allocation, so
     * this can never fail). */
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j0 = 0; j0 < N; j0 += 256) {
            int64_t nj = N - j0 < 256 ? N - j0 : 256;
            memset(acc, 0, sizeof acc);
            for (int64_t k = 0; k < K; k++) {
                float a = kern_bf16_to_f32(A[i * K + k]);
                const uint16_t *b = B + k * N + j0;
                for (int64_t j = 0; j < nj; j++) acc[j] += a * kern_bf16_to_f32(b[j]);
            }
            for (int64_t j = 0; j < nj; j++) C[i * N + j0 + j] = kern_bf16_from_f32(acc[j]);
        }
    }
}

/* Scale arrays of either kind, read as fp32. */
typedef float (*scale_at_fn)(const void *scales, int64_t idx);

static float f32_at(const void *scales, int64_t idx)
{
    return ((const float *)scales)[idx];
}

static float e8m0_at(const void *scales, int64_t idx)
{
    return kern_e8m0_to_f32(((const uint8_t *)scales)[idx]);
}

/* C = Σ_b (A·Bᵀ over K block b of `blk` elements) · sa[i][b] ·
 * sb[j / b_rows][b] (scale rows of K / blk), e4m3 operands, rounded to
 * bf16 once. Per block: the unscaled fp32 partial sum (what the tensor
 * core produces), then the scale multiplies, as block-scaled kernels
 * promote partials into the fp32 accumulator (MX scales are powers of two:
 * exact unless the product leaves fp32's range). */
static void e4m3_block_gemm(int64_t M, int64_t N, int64_t K, int64_t blk, const uint8_t *Aq, const void *sa,
                            const uint8_t *Bq_nk, const void *sb, int64_t b_rows, scale_at_fn at, uint16_t *C)
{
    int64_t nb = K / blk;
    float e4m3[256]; /* every code decoded once: the inner loop only looks values up */
    for (int c = 0; c < 256; c++) e4m3[c] = kern_e4m3_to_f32((uint8_t)c);
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; b++) {
                float part = 0.0f;
                const uint8_t *a = Aq + i * K + b * blk, *w = Bq_nk + j * K + b * blk;
                for (int64_t k = 0; k < blk; k++) part += e4m3[a[k]] * e4m3[w[k]];
                acc += part * at(sa, i * nb + b) * at(sb, (j / b_rows) * nb + b);
            }
            C[i * N + j] = kern_bf16_from_f32(acc);
        }
    }
}

void kern_gemm_fp8_block_ref(int64_t M, int64_t N, int64_t K, const uint8_t *Aq, const float *sa,
                             const uint8_t *Bq_nk, const float *sb, uint16_t *C)
{
    e4m3_block_gemm(M, N, K, KERN_FP8_BLOCK, Aq, sa, Bq_nk, sb, KERN_FP8_BLOCK, f32_at, C);
}

void kern_gemm_mxfp8_ref(int64_t M, int64_t N, int64_t K, const uint8_t *Aq, const uint8_t *sa_e8m0,
                         const uint8_t *Bq_nk, const uint8_t *sb_e8m0, uint16_t *C)
{
    e4m3_block_gemm(M, N, K, KERN_MX_BLOCK, Aq, sa_e8m0, Bq_nk, sb_e8m0, 1, e8m0_at, C);
}
