/* kern_num — low-precision number formats shared by the CPU references and
 * the calibration checks: bf16 (1-8-7, round-to-nearest-even from fp32),
 * OCP fp8 e4m3 "fn" (1-4-3, bias 7, finite only: max 448, NaN = S.1111.111,
 * no infinities; encoding saturates to ±448) and OCP E8M0 scales (an
 * unsigned biased exponent, value 2^(e-127), 0xFF = NaN). Encoders round to
 * nearest even. Everything is a pure function on values; nothing is owned. */
#ifndef KERN_NUM_H
#define KERN_NUM_H

#include <stdint.h>

#define KERN_E4M3_MAX 448.0f
#define KERN_E4M3_MIN_NORMAL 0.015625f /* 2^-6 */
#define KERN_E4M3_SUBNORMAL_STEP 0.001953125f /* 2^-9 */

uint16_t kern_bf16_from_f32(float x);
float kern_bf16_to_f32(uint16_t b);
/* x rounded to the nearest bf16 value, returned as fp32. */
float kern_bf16_round(float x);

uint8_t kern_e4m3_from_f32(float x);
float kern_e4m3_to_f32(uint8_t q);
float kern_e4m3_round(float x);

/* Smallest power of two 2^e (−127 ≤ e ≤ 127) with 2^e ≥ x, as E8M0; x must be
 * positive and finite (0 or denormal inputs give 2^-127). */
uint8_t kern_e8m0_ceil_pow2(float x);
float kern_e8m0_to_f32(uint8_t e);

/* Bulk helpers (n elements). */
void kern_bf16_from_f32_n(const float *x, uint16_t *out, int64_t n);
void kern_bf16_to_f32_n(const uint16_t *b, float *out, int64_t n);

#endif
