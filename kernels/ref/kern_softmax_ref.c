/* kern_softmax_ref — see kern_softmax_ref.h. */
#include "kern_softmax_ref.h"

#include <math.h>

void kern_softmax_twopass_ref(const float *x, int64_t rows, int64_t cols, float *y)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float mx = -INFINITY, sum = 0.0f;
        for (int64_t c = 0; c < cols; c++) mx = fmaxf(mx, xr[c]);
        for (int64_t c = 0; c < cols; c++) sum += expf(xr[c] - mx);
        for (int64_t c = 0; c < cols; c++) yr[c] = expf(xr[c] - mx) / sum;
    }
}

void kern_softmax_state_merge(float *m, float *s, float m2, float s2)
{
    float mn = fmaxf(*m, m2);
    if (mn == -INFINITY) return; /* both empty */
    *s = *s * expf(*m - mn) + s2 * expf(m2 - mn);
    *m = mn;
}

void kern_softmax_online_ref(const float *x, int64_t rows, int64_t cols, float *y)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float m = -INFINITY, s = 0.0f;
        for (int64_t c = 0; c < cols; c++) kern_softmax_state_merge(&m, &s, xr[c], 1.0f);
        for (int64_t c = 0; c < cols; c++) yr[c] = expf(xr[c] - m) / s;
    }
}

void kern_rmsnorm_ref(const float *x, const float *w, int64_t rows, int64_t cols, float eps, float *y)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        float *yr = y + r * cols;
        float ss = 0.0f;
        for (int64_t c = 0; c < cols; c++) ss += xr[c] * xr[c];
        float inv = 1.0f / sqrtf(ss / (float)cols + eps);
        for (int64_t c = 0; c < cols; c++) yr[c] = xr[c] * inv * w[c];
    }
}
