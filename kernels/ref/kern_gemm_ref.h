/* kern_gemm_ref — CPU references for dense GEMM, C = A·B, fp32 accumulate.
 * Shapes: A is M×K, C is M×N, all row-major. The fp32 and bf16 forms take B
 * as K×N row-major. The fp8 block-scaled form takes B as N×K row-major (each
 * output column's weights contiguous along K, as nn.Linear stores weights
 * and as fp8 tensor-core instructions need both operands K-major) with
 * 1×128 scales for A ([M][K/128]) and 128×128 scales for B
 * ([ceil(N/128)][K/128]), see kern_quant_ref.h; K must be a multiple of 128.
 * The MXFP8 form takes the same e4m3 operands (B N×K) with one E8M0 scale
 * per 32 elements along K for both, row-major [M][K/32] and [N][K/32] —
 * what kern_quant_mxfp8_ref writes for A and for Bᵀ —; K must be a
 * multiple of 32.
 * bf16 values are uint16_t bit patterns (kern_num.h); the bf16 and fp8
 * forms round the fp32 accumulator to bf16 once, on store. Callers own all
 * buffers; functions neither allocate nor fail. */
#ifndef KERN_GEMM_REF_H
#define KERN_GEMM_REF_H

#include <stdint.h>

void kern_gemm_f32_ref(int64_t M, int64_t N, int64_t K, const float *A, const float *B, float *C);
void kern_gemm_bf16_ref(int64_t M, int64_t N, int64_t K, const uint16_t *A, const uint16_t *B, uint16_t *C);
void kern_gemm_fp8_block_ref(int64_t M, int64_t N, int64_t K, const uint8_t *Aq, const float *sa,
                             const uint8_t *Bq_nk, const float *sb, uint16_t *C);
void kern_gemm_mxfp8_ref(int64_t M, int64_t N, int64_t K, const uint8_t *Aq, const uint8_t *sa_e8m0,
                         const uint8_t *Bq_nk, const uint8_t *sb_e8m0, uint16_t *C);

#endif
