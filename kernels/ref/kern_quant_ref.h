/* kern_quant_ref — CPU references for fp8 quantisation of row-major fp32
 * matrices, and their inverses:
 *  - fp8 block-128 (DeepSeek-V3 style): e4m3 values with one fp32 scale per
 *    1×128 run along a row (activations) or per 128×128 tile (weights);
 *    scale = amax/448 so the block maximum maps to the e4m3 maximum (an
 *    all-zero block gets scale 1).
 *  - MXFP8 (OCP MX): e4m3 values with one E8M0 power-of-two scale per 32
 *    consecutive elements of a row. The scale is rounded *up* to the next
 *    power of two ≥ amax/448 (the cuBLAS/Transformer-Engine recipe), so no
 *    element saturates; the OCP spec's floor(log2 amax) − 8 variant can clip
 *    the block maximum by up to 12.5 %.
 * Dequantised x' = e4m3(q)·scale. For normal e4m3 results |x − x'| ≤ 2^-4·|x|
 * (half an ulp of a 3-bit mantissa); in the subnormal range |x − x'| ≤
 * 2^-10·scale. Column counts need not be multiples of the block: the last
 * block is short. Scale arrays are row-major [rows][ceil(cols/B)] (1×B
 * blocks) or [ceil(rows/128)][ceil(cols/128)] (128×128 tiles). Callers own
 * all buffers. */
#ifndef KERN_QUANT_REF_H
#define KERN_QUANT_REF_H

#include <stdint.h>

#define KERN_FP8_BLOCK 128
#define KERN_MX_BLOCK 32

static inline int64_t kern_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void kern_quant_fp8_block128_ref(const float *x, int64_t rows, int64_t cols, uint8_t *q, float *scales);
void kern_dequant_fp8_block128_ref(const uint8_t *q, const float *scales, int64_t rows, int64_t cols, float *x);

void kern_quant_fp8_tile128_ref(const float *x, int64_t rows, int64_t cols, uint8_t *q, float *scales);
void kern_dequant_fp8_tile128_ref(const uint8_t *q, const float *scales, int64_t rows, int64_t cols, float *x);

void kern_quant_mxfp8_ref(const float *x, int64_t rows, int64_t cols, uint8_t *q, uint8_t *scales_e8m0);
void kern_dequant_mxfp8_ref(const uint8_t *q, const uint8_t *scales_e8m0, int64_t rows, int64_t cols, float *x);

#endif
