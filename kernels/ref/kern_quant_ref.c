/* kern_quant_ref — see kern_quant_ref.h. */
#include "kern_quant_ref.h"

#include "kern_num.h"

#include <math.h>

static float kern_amax(const float *x, int64_t n)
{
    float m = 0.0f;
    for (int64_t i = 0; i < n; i++) m = fmaxf(m, fabsf(x[i]));
    return m;
}

static float kern_fp8_scale_of(float amax)
{
    return amax > 0.0f ? amax / KERN_E4M3_MAX : 1.0f;
}

void kern_quant_fp8_block128_ref(const float *x, int64_t rows, int64_t cols, uint8_t *q, float *scales)
{
    int64_t nb = kern_ceil_div(cols, KERN_FP8_BLOCK);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t b = 0; b < nb; b++) {
            int64_t c0 = b * KERN_FP8_BLOCK;
            int64_t len = cols - c0 < KERN_FP8_BLOCK ? cols - c0 : KERN_FP8_BLOCK;
            const float *src = x + r * cols + c0;
            float s = kern_fp8_scale_of(kern_amax(src, len));
            scales[r * nb + b] = s;
            for (int64_t i = 0; i < len; i++) q[r * cols + c0 + i] = kern_e4m3_from_f32(src[i] / s);
        }
    }
}

void kern_dequant_fp8_block128_ref(const uint8_t *q, const float *scales, int64_t rows, int64_t cols, float *x)
{
    int64_t nb = kern_ceil_div(cols, KERN_FP8_BLOCK);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            x[r * cols + c] = kern_e4m3_to_f32(q[r * cols + c]) * scales[r * nb + c / KERN_FP8_BLOCK];
}

void kern_quant_fp8_tile128_ref(const float *x, int64_t rows, int64_t cols, uint8_t *q, float *scales)
{
    int64_t nbr = kern_ceil_div(rows, KERN_FP8_BLOCK), nbc = kern_ceil_div(cols, KERN_FP8_BLOCK);
    for (int64_t br = 0; br < nbr; br++) {
        for (int64_t bc = 0; bc < nbc; bc++) {
            int64_t r0 = br * KERN_FP8_BLOCK, c0 = bc * KERN_FP8_BLOCK;
            int64_t r1 = r0 + KERN_FP8_BLOCK < rows ? r0 + KERN_FP8_BLOCK : rows;
            int64_t c1 = c0 + KERN_FP8_BLOCK < cols ? c0 + KERN_FP8_BLOCK : cols;
            float amax = 0.0f;
            for (int64_t r = r0; r < r1; r++) amax = fmaxf(amax, kern_amax(x + r * cols + c0, c1 - c0));
            float s = kern_fp8_scale_of(amax);
            scales[br * nbc + bc] = s;
            for (int64_t r = r0; r < r1; r++)
                for (int64_t c = c0; c < c1; c++) q[r * cols + c] = kern_e4m3_from_f32(x[r * cols + c] / s);
        }
    }
}

void kern_dequant_fp8_tile128_ref(const uint8_t *q, const float *scales, int64_t rows, int64_t cols, float *x)
{
    int64_t nbc = kern_ceil_div(cols, KERN_FP8_BLOCK);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            x[r * cols + c] = kern_e4m3_to_f32(q[r * cols + c]) *
                              scales[(r / KERN_FP8_BLOCK) * nbc + c / KERN_FP8_BLOCK];
}

void kern_quant_mxfp8_ref(const float *x, int64_t rows, int64_t cols, uint8_t *q, uint8_t *scales_e8m0)
{
    int64_t nb = kern_ceil_div(cols, KERN_MX_BLOCK);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t b = 0; b < nb; b++) {
            int64_t c0 = b * KERN_MX_BLOCK;
            int64_t len = cols - c0 < KERN_MX_BLOCK ? cols - c0 : KERN_MX_BLOCK;
            const float *src = x + r * cols + c0;
            float amax = kern_amax(src, len);
            uint8_t e = amax > 0.0f ? kern_e8m0_ceil_pow2(amax / KERN_E4M3_MAX) : 127; /* 2^0 */
            float s = kern_e8m0_to_f32(e);
            scales_e8m0[r * nb + b] = e;
            /* Dividing by a power of two is exact, so rounding happens once. */
            for (int64_t i = 0; i < len; i++) q[r * cols + c0 + i] = kern_e4m3_from_f32(src[i] / s);
        }
    }
}

void kern_dequant_mxfp8_ref(const uint8_t *q, const uint8_t *scales_e8m0, int64_t rows, int64_t cols, float *x)
{
    int64_t nb = kern_ceil_div(cols, KERN_MX_BLOCK);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            x[r * cols + c] = kern_e4m3_to_f32(q[r * cols + c]) *
                              kern_e8m0_to_f32(scales_e8m0[r * nb + c / KERN_MX_BLOCK]);
}
