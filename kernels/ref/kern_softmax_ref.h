/* kern_softmax_ref — CPU references for row-wise safe softmax and RMSNorm
 * over a row-major [rows][cols] fp32 matrix (in and out may alias).
 *  - two-pass: pass 1 finds the row max, pass 2 sums exp(x − max), then each
 *    output is exp(x − max)/sum (the classic safe softmax);
 *  - online: one pass keeps (max, sum) together, rescaling the sum when the
 *    max grows (Milakov & Gimelshein 2018), then writes the outputs — the
 *    form the GPU kernels reduce across warps by merging (max, sum) pairs.
 *  - RMSNorm: y = x / sqrt(mean(x²) + eps) · w, w of length cols.
 * Units: none. Callers own the buffers; nothing allocates or fails. */
#ifndef KERN_SOFTMAX_REF_H
#define KERN_SOFTMAX_REF_H

#include <stdint.h>

void kern_softmax_twopass_ref(const float *x, int64_t rows, int64_t cols, float *y);
void kern_softmax_online_ref(const float *x, int64_t rows, int64_t cols, float *y);

/* Merge of two online-softmax states (m, s) — associative and commutative,
 * which is what lets a warp reduce them in any tree shape. */
void kern_softmax_state_merge(float *m, float *s, float m2, float s2);

void kern_rmsnorm_ref(const float *x, const float *w, int64_t rows, int64_t cols, float eps, float *y);

#endif
