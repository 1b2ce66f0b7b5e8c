/* kern_num — see kern_num.h. */
#include "kern_num.h"

#include <math.h>
#include <string.h>

uint16_t kern_bf16_from_f32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) {
        return (uint16_t)((u >> 16) | 0x0040u); /* keep NaN a (quiet) NaN */
    }
    /* Round to nearest even on the 16 dropped bits; overflow to inf is
     * the correct IEEE result for values past the bf16 range. */
    uint32_t bias = 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)((u + bias) >> 16);
}

float kern_bf16_to_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

float kern_bf16_round(float x)
{
    return kern_bf16_to_f32(kern_bf16_from_f32(x));
}

uint8_t kern_e4m3_from_f32(float x)
{
    if (isnan(x)) return 0x7f;
    uint8_t sign = signbit(x) ? 0x80 : 0x00;
    float a = fabsf(x);
    if (a < KERN_E4M3_MIN_NORMAL) {
        /* Subnormals (and the smallest normal, q = 8) are multiples of 2^-9;
         * nearbyintf rounds half to even in the default rounding mode. */
        float q = nearbyintf(a / KERN_E4M3_SUBNORMAL_STEP);
        return (uint8_t)(sign | (uint8_t)q);
    }
    if (a >= KERN_E4M3_MAX) return (uint8_t)(sign | 0x7e); /* saturate (satfinite) */
    int e2;
    float f = frexpf(a, &e2);            /* a = f·2^e2, f in [0.5, 1) */
    int e = e2 - 1;                       /* a = m·2^e, m in [1, 2) */
    float m = f * 2.0f;
    int q = (int)nearbyintf((m - 1.0f) * 8.0f);
    if (q == 8) {
        q = 0;
        e++;
    }
    int biased = e + 7;
    if (biased > 15 || (biased == 15 && q > 6)) return (uint8_t)(sign | 0x7e);
    return (uint8_t)(sign | (uint8_t)(biased << 3) | (uint8_t)q);
}

float kern_e4m3_to_f32(uint8_t q)
{
    int exp = (q >> 3) & 0xf, man = q & 7;
    float v;
    if (exp == 15 && man == 7) return NAN;
    if (exp == 0) v = ldexpf((float)man, -9);
    else v = ldexpf(1.0f + (float)man / 8.0f, exp - 7);
    return (q & 0x80) ? -v : v;
}

float kern_e4m3_round(float x)
{
    return kern_e4m3_to_f32(kern_e4m3_from_f32(x));
}

uint8_t kern_e8m0_ceil_pow2(float x)
{
    if (!(x > 0.0f) || !isfinite(x)) return isnan(x) ? 0xff : (x > 0.0f ? 254 : 0);
    int e2;
    float f = frexpf(x, &e2);            /* x = f·2^e2, f in [0.5, 1) */
    int e = (f == 0.5f) ? e2 - 1 : e2;    /* exact powers of two stay */
    if (e < -127) e = -127;
    if (e > 127) e = 127;
    return (uint8_t)(e + 127);
}

float kern_e8m0_to_f32(uint8_t e)
{
    if (e == 0xff) return NAN;
    return ldexpf(1.0f, (int)e - 127);
}

void kern_bf16_from_f32_n(const float *x, uint16_t *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = kern_bf16_from_f32(x[i]);
}

void kern_bf16_to_f32_n(const uint16_t *b, float *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) out[i] = kern_bf16_to_f32(b[i]);
}
