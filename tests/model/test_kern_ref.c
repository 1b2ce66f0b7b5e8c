/* test_kern_ref — the CPU references against their mathematical definitions
 * and against each other: number formats, quantisation bounds, GEMM forms
 * (the MXFP8 GEMM on the MXFP8 quantiser's output),
 * grouped GEMM layouts and the grouped GEMM's tile list, flash prefill vs naive attention, split-KV decode +
 * LSE merge vs unsplit attention, online vs two-pass softmax, RMSNorm; and
 * which code of a CUDA build a device runs (kern_arch): the default
 * architectures give the fp8 GEMM its mma path on every fp8-capable GPU,
 * where the former 80;90a;100a made Ada and consumer Blackwell run the
 * sm_80 code, whose fp8 mma is a trap. */
#include "test_util.h"

#include "kern_arch.h"
#include "kern_grouped_plan.h"
#include "kern_plan.h"
#include "kern_attn_ref.h"
#include "kern_gemm_ref.h"
#include "kern_grouped_ref.h"
#include "kern_num.h"
#include "kern_quant_ref.h"
#include "kern_softmax_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float urand(void) /* uniform in [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static void fill(float *x, int64_t n, float amp)
{
    for (int64_t i = 0; i < n; i++) x[i] = amp * urand();
}

static float max_abs_diff(const float *a, const float *b, int64_t n)
{
    float m = 0.0f;
    for (int64_t i = 0; i < n; i++) m = fmaxf(m, fabsf(a[i] - b[i]));
    return m;
}

static void test_bf16(void)
{
    CHECK(kern_bf16_round(1.0f) == 1.0f);
    CHECK(kern_bf16_round(1.0f + 0x1p-8f) == 1.0f);                /* tie → even */
    CHECK(kern_bf16_round(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);  /* tie → even (up) */
    CHECK(kern_bf16_round(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);
    CHECK(kern_bf16_from_f32(-2.0f) == 0xc000);
    CHECK(isnan(kern_bf16_round(NAN)));
    CHECK(isinf(kern_bf16_round(INFINITY)));
    int bad = 0;
    for (int i = 0; i < 10000; i++) {
        float x = urand() * 1000.0f;
        float r = kern_bf16_round(x);
        if (fabsf(r - x) > 0x1p-8f * fabsf(x)) bad++; /* half ulp of 7 bits */
        if (kern_bf16_round(r) != r) bad++; /* idempotent round trip */
    }
    CHECK_MSG(bad == 0, "%d bf16 values off", bad);
}

static void test_e4m3(void)
{
    int bad = 0;
    for (int c = 0; c < 256; c++) {
        float v = kern_e4m3_to_f32((uint8_t)c);
        if ((c & 0x7f) == 0x7f) {
            if (!isnan(v)) bad++;
            continue;
        }
        if (kern_e4m3_from_f32(v) != (uint8_t)c) bad++;
    }
    CHECK_MSG(bad == 0, "%d e4m3 codes do not round-trip", bad);
    CHECK(kern_e4m3_to_f32(0x7e) == 448.0f);
    CHECK(kern_e4m3_to_f32(0x01) == 0x1p-9f);
    CHECK(kern_e4m3_to_f32(0x08) == 0x1p-6f);
    CHECK(kern_e4m3_round(1000.0f) == 448.0f);
    CHECK(kern_e4m3_round(-1e9f) == -448.0f);
    CHECK(kern_e4m3_round(1.0625f) == 1.0f);   /* tie → even mantissa 0 */
    CHECK(kern_e4m3_round(1.1875f) == 1.25f);  /* tie → even mantissa 2 */
    CHECK(kern_e4m3_round(0x1p-10f) == 0.0f);  /* half the smallest subnormal → even (0) */
    CHECK(kern_e4m3_round(3 * 0x1p-10f) == 0x1p-8f);
    CHECK(isnan(kern_e4m3_round(NAN)));
    CHECK(kern_e8m0_ceil_pow2(1.0f) == 127);
    CHECK(kern_e8m0_ceil_pow2(1.5f) == 128);
    CHECK(kern_e8m0_ceil_pow2(0.75f) == 127);
    CHECK(kern_e8m0_ceil_pow2(0.5f) == 126);
    CHECK(kern_e8m0_to_f32(130) == 8.0f);
    CHECK(isnan(kern_e8m0_to_f32(0xff)));
}

/* |x − x'| ≤ 2^-4·|x| for normal e4m3 results, ≤ 2^-10·scale below. */
static int quant_bound_violations(const float *x, const float *xd, const float *scale_of, int64_t n)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        float tol = 0x1p-4f * fabsf(x[i]) + 0x1p-10f * scale_of[i] * 1.0001f;
        if (!(fabsf(x[i] - xd[i]) <= tol)) bad++;
    }
    return bad;
}

static void test_quant(void)
{
    enum { R = 6, C = 300 };
    float *x = malloc(sizeof(float) * R * C), *xd = malloc(sizeof(float) * R * C);
    float *sof = malloc(sizeof(float) * R * C), *sc = malloc(sizeof(float) * R * 3);
    uint8_t *q = malloc(R * C), *e8 = malloc(R * 10);
    /* Magnitudes spread over 2^-12 … 2^12 so blocks hold subnormals too. */
    for (int i = 0; i < R * C; i++) x[i] = urand() * ldexpf(1.0f, (int)(urand() * 12.0f));
    x[7] = 0.0f;

    kern_quant_fp8_block128_ref(x, R, C, q, sc);
    kern_dequant_fp8_block128_ref(q, sc, R, C, xd);
    int bad_scale = 0;
    for (int r = 0; r < R; r++) {
        for (int b = 0; b < 3; b++) {
            float amax = 0.0f;
            int len = b < 2 ? 128 : C - 256;
            for (int i = 0; i < len; i++) amax = fmaxf(amax, fabsf(x[r * C + b * 128 + i]));
            if (fabsf(sc[r * 3 + b] - amax / 448.0f) > 1e-6f * amax) bad_scale++;
        }
        for (int c = 0; c < C; c++) sof[r * C + c] = sc[r * 3 + c / 128];
    }
    CHECK_MSG(bad_scale == 0, "%d block-128 scales differ from amax/448", bad_scale);
    CHECK_MSG(quant_bound_violations(x, xd, sof, R * C) == 0, "fp8 block-128 error above bound");
    CHECK(xd[7] == 0.0f);

    kern_quant_fp8_tile128_ref(x, R, C, q, sc); /* one tile row, 3 tiles */
    kern_dequant_fp8_tile128_ref(q, sc, R, C, xd);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) sof[r * C + c] = sc[c / 128];
    CHECK_MSG(quant_bound_violations(x, xd, sof, R * C) == 0, "fp8 128x128 error above bound");

    kern_quant_mxfp8_ref(x, R, C, q, e8);
    kern_dequant_mxfp8_ref(q, e8, R, C, xd);
    int nb = (C + 31) / 32, bad_pow2 = 0, sat = 0;
    for (int r = 0; r < R; r++) {
        for (int b = 0; b < nb; b++) {
            float s = kern_e8m0_to_f32(e8[r * nb + b]);
            int ex;
            if (frexpf(s, &ex) != 0.5f) bad_pow2++;
            float amax = 0.0f;
            for (int c = b * 32; c < C && c < b * 32 + 32; c++) amax = fmaxf(amax, fabsf(x[r * C + c]));
            if (amax / s > 448.0f || amax / s <= 224.0f) sat++; /* tightest power of two */
        }
        for (int c = 0; c < C; c++) sof[r * C + c] = kern_e8m0_to_f32(e8[r * nb + c / 32]);
    }
    CHECK_MSG(bad_pow2 == 0, "%d E8M0 scales are not powers of two", bad_pow2);
    CHECK_MSG(sat == 0, "%d MX scales not the smallest power of two ≥ amax/448", sat);
    CHECK_MSG(quant_bound_violations(x, xd, sof, R * C) == 0, "MXFP8 error above bound");
    free(x), free(xd), free(sof), free(sc), free(q), free(e8);
}

static void test_gemm(void)
{
    enum { M = 9, N = 130, K = 256 };
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N), *Bt = malloc(sizeof(float) * N * K);
    float *C = malloc(sizeof(float) * M * N), *Cd = malloc(sizeof(float) * M * N);
    uint16_t *Ab = malloc(2 * M * K), *Bb = malloc(2 * K * N), *Cb = malloc(2 * M * N);
    fill(A, M * K, 1.0f), fill(B, K * N, 1.0f);

    kern_gemm_f32_ref(M, N, K, A, B, C);
    float worst = 0.0f;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < K; k++) s += (double)A[i * K + k] * B[k * N + j];
            worst = fmaxf(worst, fabsf((float)s - C[i * N + j]));
        }
    CHECK_NEAR(worst, 0.0, 1e-4);

    kern_bf16_from_f32_n(A, Ab, M * K), kern_bf16_from_f32_n(B, Bb, K * N);
    kern_bf16_to_f32_n(Ab, A, M * K), kern_bf16_to_f32_n(Bb, B, K * N); /* exact bf16 inputs */
    kern_gemm_f32_ref(M, N, K, A, B, C);
    kern_gemm_bf16_ref(M, N, K, Ab, Bb, Cb);
    kern_bf16_to_f32_n(Cb, Cd, M * N);
    int bad = 0;
    for (int i = 0; i < M * N; i++)
        if (fabsf(Cd[i] - C[i]) > 0x1p-8f * fabsf(C[i]) + 1e-5f) bad++;
    CHECK_MSG(bad == 0, "%d bf16 GEMM outputs beyond one bf16 rounding", bad);

    /* fp8: quantise A (1×128) and Bᵀ (128×128), compare with the fp32 GEMM of
     * the dequantised operands (same maths, only the bf16 store differs) and,
     * loosely, with the unquantised product. */
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) Bt[j * K + k] = B[k * N + j];
    uint8_t *Aq = malloc(M * K), *Bq = malloc(N * K);
    float *sa = malloc(sizeof(float) * M * 2), *sb = malloc(sizeof(float) * 2 * 2);
    kern_quant_fp8_block128_ref(A, M, K, Aq, sa);
    kern_quant_fp8_tile128_ref(Bt, N, K, Bq, sb);
    kern_gemm_fp8_block_ref(M, N, K, Aq, sa, Bq, sb, Cb);
    kern_bf16_to_f32_n(Cb, Cd, M * N);
    float *Ad = malloc(sizeof(float) * M * K), *Btd = malloc(sizeof(float) * N * K);
    kern_dequant_fp8_block128_ref(Aq, sa, M, K, Ad);
    kern_dequant_fp8_tile128_ref(Bq, sb, N, K, Btd);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) B[k * N + j] = Btd[j * K + k];
    float *Cq = malloc(sizeof(float) * M * N);
    kern_gemm_f32_ref(M, N, K, Ad, B, Cq);
    bad = 0;
    double num = 0, den = 0;
    for (int i = 0; i < M * N; i++) {
        if (fabsf(Cd[i] - Cq[i]) > 0x1p-8f * fabsf(Cq[i]) + 1e-4f) bad++;
        num += (double)(Cd[i] - C[i]) * (Cd[i] - C[i]), den += (double)C[i] * C[i];
    }
    CHECK_MSG(bad == 0, "%d fp8 GEMM outputs differ from the dequantised product", bad);
    CHECK_MSG(sqrt(num / den) < 0.06, "fp8 GEMM relative error %.4f vs unquantised", sqrt(num / den));
    CHECK_MSG(sqrt(num / den) > 1e-4, "fp8 GEMM suspiciously exact (%.2g): quantisation skipped?", sqrt(num / den));
    free(A), free(B), free(Bt), free(C), free(Cd), free(Ab), free(Bb), free(Cb);
    free(Aq), free(Bq), free(sa), free(sb), free(Ad), free(Btd), free(Cq);
}

/* MXFP8 GEMM: A and Bᵀ quantised by kern_quant_mxfp8_ref (the scales the
 * GEMM consumes are the quantiser's, so quantise → GEMM composes) with
 * magnitudes that change from one 32-block to the next, so a GEMM applying
 * a scale to the wrong block (or none) misses the dequantised product. */
static void test_gemm_mxfp8(void)
{
    enum { M = 5, N = 7, K = 96, NB = K / 32 };
    float *A = malloc(sizeof(float) * M * K), *Bt = malloc(sizeof(float) * N * K), *B = malloc(sizeof(float) * K * N);
    float *C = malloc(sizeof(float) * M * N), *Cq = malloc(sizeof(float) * M * N), *Cd = malloc(sizeof(float) * M * N);
    float *Ad = malloc(sizeof(float) * M * K), *Btd = malloc(sizeof(float) * N * K);
    uint8_t *Aq = malloc(M * K), *Bq = malloc(N * K), *sa = malloc(M * NB), *sb = malloc(N * NB);
    uint16_t *Cb = malloc(sizeof(uint16_t) * M * N);
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) A[i * K + k] = urand() * ldexpf(1.0f, (k / 32) * 5 - 4 + i % 3);
    for (int j = 0; j < N; j++)
        for (int k = 0; k < K; k++) Bt[j * K + k] = urand() * ldexpf(1.0f, 3 - (k / 32) * 4 + j % 2);
    kern_quant_mxfp8_ref(A, M, K, Aq, sa);
    kern_quant_mxfp8_ref(Bt, N, K, Bq, sb);
    int distinct = 0;
    for (int b = 1; b < NB; b++) distinct += sa[b] != sa[0];
    CHECK_MSG(distinct == NB - 1, "the test's 32-blocks should get distinct scales");
    kern_gemm_mxfp8_ref(M, N, K, Aq, sa, Bq, sb, Cb);
    kern_bf16_to_f32_n(Cb, Cd, M * N);

    kern_dequant_mxfp8_ref(Aq, sa, M, K, Ad);
    kern_dequant_mxfp8_ref(Bq, sb, N, K, Btd);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) B[k * N + j] = Btd[j * K + k];
    kern_gemm_f32_ref(M, N, K, Ad, B, Cq);
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) B[k * N + j] = Bt[j * K + k];
    kern_gemm_f32_ref(M, N, K, A, B, C);
    int bad = 0;
    double num = 0, den = 0;
    for (int i = 0; i < M * N; i++) {
        if (fabsf(Cd[i] - Cq[i]) > 0x1p-8f * fabsf(Cq[i]) + 1e-4f * fabsf(C[i]) + 1e-6f) bad++;
        num += (double)(Cd[i] - C[i]) * (Cd[i] - C[i]), den += (double)C[i] * C[i];
    }
    CHECK_MSG(bad == 0, "%d MXFP8 GEMM outputs differ from the dequantised product", bad);
    CHECK_MSG(sqrt(num / den) < 0.06, "MXFP8 GEMM relative error %.4f vs unquantised", sqrt(num / den));
    CHECK_MSG(sqrt(num / den) > 1e-4, "MXFP8 GEMM suspiciously exact (%.2g): quantisation skipped?", sqrt(num / den));

    /* Doubling one block's A scale doubles exactly that block's share. */
    sa[1 * NB + 2]++;
    uint16_t *Cb2 = malloc(sizeof(uint16_t) * M * N);
    kern_gemm_mxfp8_ref(M, N, K, Aq, sa, Bq, sb, Cb2);
    int changed_other = 0, changed_row = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int diff = Cb2[i * N + j] != Cb[i * N + j];
            if (i == 1) changed_row += diff;
            else changed_other += diff;
        }
    CHECK_MSG(changed_other == 0 && changed_row > 0, "one A scale changed rows other than its own (%d) or none (%d)",
              changed_other, changed_row);
    free(A), free(Bt), free(B), free(C), free(Cq), free(Cd), free(Ad), free(Btd);
    free(Aq), free(Bq), free(sa), free(sb), free(Cb), free(Cb2);
}

static void test_grouped(void)
{
    enum { T = 50, E = 6, K = 24, N = 17 };
    int32_t ex[T];
    for (int t = 0; t < T; t++) ex[t] = (int32_t)((urand() + 1.0f) * 2.5f); /* experts 0..4; 5 gets none */
    ex[3] = 4, ex[4] = 4;
    float *X = malloc(sizeof(float) * T * K), *B = malloc(sizeof(float) * E * K * N);
    float *want = malloc(sizeof(float) * T * N);
    fill(X, T * K, 1.0f), fill(B, E * K * N, 1.0f);
    for (int t = 0; t < T; t++) kern_gemm_f32_ref(1, N, K, X + t * K, B + (int64_t)ex[t] * K * N, want + t * N);

    int64_t off[E + 1], perm[T];
    CHECK(kern_moe_layout_contig(ex, T, E, off, perm) == 0);
    CHECK(off[0] == 0 && off[E] == T && off[E - 1] == T);
    float *Ag = malloc(sizeof(float) * T * K), *Cg = malloc(sizeof(float) * T * N), *got = malloc(sizeof(float) * T * N);
    int stable = 1;
    for (int r = 0; r < T; r++) {
        memcpy(Ag + r * K, X + perm[r] * K, sizeof(float) * K);
        if (r > 0 && ex[perm[r]] == ex[perm[r - 1]] && perm[r] < perm[r - 1]) stable = 0;
    }
    CHECK(stable);
    kern_grouped_contig_ref(E, N, K, off, Ag, B, Cg);
    for (int r = 0; r < T; r++) memcpy(got + perm[r] * N, Cg + r * N, sizeof(float) * N);
    CHECK_NEAR(max_abs_diff(got, want, T * N), 0.0, 1e-5);

    int64_t cnt[E], slot[T], cap = 0;
    for (int e = 0; e < E; e++) {
        int64_t c = 0;
        for (int t = 0; t < T; t++) c += ex[t] == e;
        cap = c > cap ? c : cap;
    }
    cap += 3;
    CHECK(kern_moe_layout_masked(ex, T, E, 2, cnt, slot) == -2); /* capacity overflow reported */
    CHECK(kern_moe_layout_masked(ex, T, E, cap, cnt, slot) == 0);
    CHECK(cnt[E - 1] == 0);
    float *Am = calloc((size_t)(E * cap * K), sizeof(float)), *Cm = malloc(sizeof(float) * E * cap * N);
    for (int64_t i = 0; i < E * cap * N; i++) Cm[i] = 12345.0f;
    for (int t = 0; t < T; t++) memcpy(Am + slot[t] * K, X + t * K, sizeof(float) * K);
    kern_grouped_masked_ref(E, cap, N, K, cnt, Am, B, Cm);
    for (int t = 0; t < T; t++) memcpy(got + t * N, Cm + slot[t] * N, sizeof(float) * N);
    CHECK_NEAR(max_abs_diff(got, want, T * N), 0.0, 1e-5);
    int touched = 0;
    for (int e = 0; e < E; e++)
        for (int64_t r = cnt[e]; r < cap; r++)
            for (int j = 0; j < N; j++) touched += Cm[(e * cap + r) * N + j] != 12345.0f;
    CHECK_MSG(touched == 0, "%d padded rows written", touched);
    int32_t badex[2] = {0, E};
    CHECK(kern_moe_layout_contig(badex, 2, E, off, perm) == -1);
    free(X), free(B), free(want), free(Ag), free(Cg), free(got), free(Am), free(Cm);
}

static void test_prefill(void)
{
    /* Hand-computed: one query at position 1, keys k0 = 1, k1 = 2, q = 1. */
    {
        kern_prefill_shape s = {1, 1, 1, 1, 1, 1.0f};
        float q[1] = {1.0f}, k[2] = {1.0f, 2.0f}, v[2] = {10.0f, 20.0f}, o[1], lse[1];
        kern_attn_naive_ref(&s, q, k, v, o, lse);
        double e1 = exp(1.0), e2 = exp(2.0);
        CHECK_NEAR(o[0], (10 * e1 + 20 * e2) / (e1 + e2), 1e-5);
        CHECK_NEAR(lse[0], log(e1 + e2), 1e-6);
    }
    int cached_cases[2] = {0, 37}, tiles[5] = {1, 7, 16, 64, 300};
    for (int ci = 0; ci < 2; ci++) {
        kern_prefill_shape s = {29, cached_cases[ci], 8, 2, 32, 0.0f};
        s.sm_scale = 1.0f / sqrtf((float)s.d);
        int nkv = s.cached + s.n_q;
        int64_t nq = (int64_t)s.n_q * s.hq * s.d, nk = (int64_t)nkv * s.hkv * s.d;
        float *q = malloc(sizeof(float) * nq), *k = malloc(sizeof(float) * nk), *v = malloc(sizeof(float) * nk);
        float *o0 = malloc(sizeof(float) * nq), *o1 = malloc(sizeof(float) * nq), *o2 = malloc(sizeof(float) * nq);
        float l0[29 * 8], l1[29 * 8];
        fill(q, nq, 3.0f), fill(k, nk, 3.0f), fill(v, nk, 1.0f);
        kern_attn_naive_ref(&s, q, k, v, o0, l0);
        for (int ti = 0; ti < 5; ti++) {
            kern_attn_flash_ref(&s, tiles[ti], q, k, v, o1, l1);
            CHECK_MSG(max_abs_diff(o0, o1, nq) < 1e-5f, "cached %d tile %d: O off by %g", s.cached, tiles[ti],
                      max_abs_diff(o0, o1, nq));
            CHECK_MSG(max_abs_diff(l0, l1, s.n_q * s.hq) < 1e-5f, "cached %d tile %d: LSE off", s.cached, tiles[ti]);
        }
        /* Causality: changing the last key/value must leave every query
         * but the last one unchanged; GQA: each KV head feeds only its group. */
        kern_attn_flash_ref(&s, 16, q, k, v, o1, NULL);
        for (int x = 0; x < s.hkv * s.d; x++) k[(int64_t)(nkv - 1) * s.hkv * s.d + x] += 5.0f;
        kern_attn_flash_ref(&s, 16, q, k, v, o2, NULL);
        int64_t before_last = (int64_t)(s.n_q - 1) * s.hq * s.d;
        CHECK(max_abs_diff(o1, o2, before_last) == 0.0f);
        CHECK(max_abs_diff(o1 + before_last, o2 + before_last, s.hq * s.d) > 1e-4f);
        float *o3 = malloc(sizeof(float) * nq);
        memcpy(o3, o2, sizeof(float) * nq);
        for (int j = 0; j < nkv; j++) v[(int64_t)j * s.hkv * s.d + s.d] += 1.0f; /* KV head 1, dim 0 */
        kern_attn_flash_ref(&s, 16, q, k, v, o3, NULL);
        /* heads 0..3 read KV head 0 (unchanged), heads 4..7 read KV head 1 (+1 in dim 0). */
        CHECK_NEAR(o3[0] - o2[0], 0.0, 1e-6);
        CHECK_NEAR(o3[4 * s.d] - o2[4 * s.d], 1.0, 1e-5);
        free(q), free(k), free(v), free(o0), free(o1), free(o2), free(o3);
    }
}

static void test_decode_split_and_merge(void)
{
    enum { BATCH = 3, HQ = 8, HKV = 2, D = 16, PAGE = 16, MAXP = 13, NPAGES = BATCH * MAXP };
    int32_t ctx[BATCH] = {1, 77, 200}, table[BATCH * MAXP];
    /* A shuffled page pool so requests' pages are scattered. */
    for (int i = 0; i < NPAGES; i++) table[i] = i;
    for (int i = NPAGES - 1; i > 0; i--) {
        int j = (int)((urand() + 1.0f) * 0.5f * (float)(i + 1)) % (i + 1), t = table[i];
        table[i] = table[j], table[j] = t;
    }
    int64_t cache_n = (int64_t)NPAGES * PAGE * HKV * D;
    float *kc = malloc(sizeof(float) * cache_n), *vc = malloc(sizeof(float) * cache_n);
    float q[BATCH * HQ * D], want[BATCH * HQ * D], want_lse[BATCH * HQ], got[BATCH * HQ * D], lse[BATCH * HQ];
    fill(kc, cache_n, 2.0f), fill(vc, cache_n, 1.0f), fill(q, BATCH * HQ * D, 2.0f);
    kern_paged_shape s = {BATCH, HQ, HKV, D, PAGE, MAXP, 0.25f, ctx, table};

    /* Reference: gather each context contiguous, naive attention at the last position. */
    float *k = malloc(sizeof(float) * 200 * HKV * D), *v = malloc(sizeof(float) * 200 * HKV * D);
    for (int b = 0; b < BATCH; b++) {
        for (int t = 0; t < ctx[b]; t++) {
            int64_t off = ((int64_t)table[b * MAXP + t / PAGE] * PAGE + t % PAGE) * HKV * D;
            memcpy(k + (int64_t)t * HKV * D, kc + off, sizeof(float) * HKV * D);
            memcpy(v + (int64_t)t * HKV * D, vc + off, sizeof(float) * HKV * D);
        }
        kern_prefill_shape ps = {1, ctx[b] - 1, HQ, HKV, D, 0.25f};
        kern_attn_naive_ref(&ps, q + b * HQ * D, k, v, want + b * HQ * D, want_lse + b * HQ);
    }
    int splits[5] = {1, 2, 3, 5, 16};
    for (int si = 0; si < 5; si++) {
        int P = splits[si];
        float *op = malloc(sizeof(float) * P * BATCH * HQ * D), *lp = malloc(sizeof(float) * P * BATCH * HQ);
        kern_decode_split_ref(&s, P, q, kc, vc, op, lp);
        kern_lse_merge_ref(P, BATCH * HQ, D, op, lp, got, lse);
        CHECK_MSG(max_abs_diff(got, want, BATCH * HQ * D) < 1e-5f, "splits %d: O off by %g", P,
                  max_abs_diff(got, want, BATCH * HQ * D));
        CHECK_MSG(max_abs_diff(lse, want_lse, BATCH * HQ) < 1e-5f, "splits %d: LSE off", P);
        if (P == 16) CHECK(isinf(lp[15 * BATCH * HQ]) && lp[15 * BATCH * HQ] < 0); /* ctx 1: empty split */
        free(op), free(lp);
    }

    /* DCP: shard one context of 100 keys by sequence over 4 "ranks" of
     * unequal size (one empty), attend per shard, merge. */
    kern_prefill_shape full = {1, 99, HQ, HKV, D, 0.25f};
    float *kk = malloc(sizeof(float) * 100 * HKV * D), *vv = malloc(sizeof(float) * 100 * HKV * D);
    fill(kk, 100 * HKV * D, 2.0f), fill(vv, 100 * HKV * D, 1.0f);
    float o_full[HQ * D], l_full[HQ], parts[4 * HQ * D], lparts[4 * HQ], o_m[HQ * D], l_m[HQ];
    kern_attn_naive_ref(&full, q, kk, vv, o_full, l_full);
    int bounds[5] = {0, 13, 13, 70, 100};
    for (int r = 0; r < 4; r++) {
        int n = bounds[r + 1] - bounds[r];
        if (n == 0) {
            for (int h = 0; h < HQ; h++) lparts[r * HQ + h] = -INFINITY;
            memset(parts + r * HQ * D, 0, sizeof(float) * HQ * D);
            continue;
        }
        kern_prefill_shape ps = {1, n - 1, HQ, HKV, D, 0.25f};
        kern_attn_naive_ref(&ps, q, kk + (int64_t)bounds[r] * HKV * D, vv + (int64_t)bounds[r] * HKV * D,
                            parts + r * HQ * D, lparts + r * HQ);
    }
    kern_lse_merge_ref(4, HQ, D, parts, lparts, o_m, l_m);
    CHECK_NEAR(max_abs_diff(o_m, o_full, HQ * D), 0.0, 1e-5);
    CHECK_NEAR(max_abs_diff(l_m, l_full, HQ), 0.0, 1e-5);
    free(kc), free(vc), free(k), free(v), free(kk), free(vv);
}

static void test_softmax_rmsnorm(void)
{
    enum { R = 7, C = 333 };
    float x[R * C], y1[R * C], y2[R * C];
    fill(x, R * C, 20.0f);
    for (int c = 0; c < C; c++) x[C + c] += 1000.0f; /* large: overflows a naive softmax */
    x[2 * C + 5] = -INFINITY;
    kern_softmax_twopass_ref(x, R, C, y1);
    kern_softmax_online_ref(x, R, C, y2);
    CHECK_NEAR(max_abs_diff(y1, y2, R * C), 0.0, 1e-6);
    for (int r = 0; r < R; r++) {
        double s = 0;
        for (int c = 0; c < C; c++) s += y2[r * C + c];
        CHECK_NEAR(s, 1.0, 1e-5);
    }
    CHECK(y2[2 * C + 5] == 0.0f);
    float m = -INFINITY, s = 0.0f;
    kern_softmax_state_merge(&m, &s, 1.0f, 2.0f);
    kern_softmax_state_merge(&m, &s, 3.0f, 1.0f);
    CHECK_NEAR(m, 3.0, 0);
    CHECK_NEAR(s, 2.0 * exp(-2.0) + 1.0, 1e-6);

    float xr[4] = {1, 2, 3, 4}, w[4] = {1, 1, 2, 0.5f}, yr[4];
    kern_rmsnorm_ref(xr, w, 1, 4, 0.0f, yr);
    double rms = sqrt(30.0 / 4.0);
    CHECK_NEAR(yr[0], 1 / rms, 1e-6);
    CHECK_NEAR(yr[2], 6 / rms, 1e-6);
    CHECK_NEAR(yr[3], 2 / rms, 1e-6);
    kern_rmsnorm_ref(xr, w, 1, 4, 2.5f, yr);
    CHECK_NEAR(yr[1], 2 / sqrt(10.0), 1e-6);
}

static void test_arch(void)
{
    const char *def = SERVESIM_CUDA_ARCHS_DEFAULT;
    /* Every GPU with fp8 tensor cores: Ada, Hopper, Blackwell (B200, B300),
     * consumer Blackwell (RTX 50, RTX PRO 6000). */
    static const int fp8_ccs[] = {89, 90, 100, 103, 120, 121};
    for (size_t i = 0; i < sizeof fp8_ccs / sizeof fp8_ccs[0]; i++) {
        int v = kern_arch_code_for(def, fp8_ccs[i]);
        CHECK_MSG(kern_fp8_mma_ok(v), "cc %d runs compute_%d of '%s': the fp8 GEMM would trap", fp8_ccs[i], v, def);
    }
    CHECK(kern_arch_code_for(def, 89) == 89);   /* its own SASS */
    CHECK(kern_arch_code_for(def, 90) == 90);   /* sm_90a */
    CHECK(kern_arch_code_for(def, 120) == 120);
    CHECK(kern_arch_code_for(def, 103) == 89);  /* no sm_103 code: the compute_89 PTX, JIT-compiled */
    CHECK(kern_arch_code_for(def, 86) == 80);   /* Ampere runs sm_80 (and has no fp8: the host refuses) */
    CHECK(kern_arch_code_for(def, 75) == 0);    /* Turing: nothing in the build */
    /* The former default: Ada and consumer Blackwell got the sm_80 code. */
    CHECK(kern_arch_code_for("80;90a;100a", 89) == 80 && !kern_fp8_mma_ok(80));
    CHECK(kern_arch_code_for("80;90a;100a", 120) == 80);
    CHECK(kern_arch_code_for("80,90a,100a", 100) == 100);
    CHECK(kern_arch_code_for("90a", 100) == 0); /* arch-specific code runs on its cc only */
    CHECK(kern_arch_code_for("", 90) == 0);
    /* The Hopper rung (wgmma, setmaxnreg) needs sm_90a itself; compute_90 PTX or sm_90 would not do. */
    CHECK(kern_arch_has_specific(def, 90));
    CHECK(kern_arch_has_specific(def, 100));
    CHECK(!kern_arch_has_specific(def, 89));
    CHECK(!kern_arch_has_specific("80;90;100a", 90));
    CHECK(kern_arch_has_specific("80,90a", 90) && !kern_arch_has_specific("80,90a", 100));
    CHECK(!kern_arch_has_specific("", 90) && !kern_arch_has_specific(NULL, 90));
    CHECK(!kern_arch_has_specific("100f", 100)); /* a family target is not the "a" code */
}

/* The Ampere-rung GEMM's split-K plan: only skinny GEMMs split, enough to
 * give every SM a tile, never below 4 K slabs per split nor above 16, and
 * the splits share the slabs in order without gap or overlap. */
static void test_splitk_plan(void)
{
    CHECK(kern_gemm_splits(65, 4096, 4096, 132) == 1);          /* not skinny */
    CHECK(kern_gemm_splits(1, 4096, 4096, 132) == 4);           /* 32 tiles: 132 / 32 */
    CHECK(kern_gemm_splits(64, 4096, 4096, 132) == 4);
    CHECK(kern_gemm_splits(1, 28672, 4096, 132) == 1);          /* 224 tiles fill the SMs */
    CHECK(kern_gemm_splits(1, 4096, 448, 132) == 1);            /* 7 slabs: under 2 × 4 */
    CHECK(kern_gemm_splits(1, 4096, 512, 132) == 2);            /* 8 slabs: 2 of 4 */
    CHECK(kern_gemm_splits(1, 128, 16384, 132) == KERN_SPLITK_MAX);
    CHECK(kern_gemm_splits(40, 264, 2176, 132) == 8);           /* the check case: 34 slabs, 3 tiles */
    CHECK(kern_gemm_splits(40, 264, 2176, 24) == 8 && kern_gemm_splits(40, 264, 2176, 23) == 7);
    CHECK(kern_gemm_splits(1, 4096, 4096, 0) == 1 && kern_gemm_splits(0, 4096, 4096, 132) == 1);
    CHECK(kern_gemm_split_workspace(1, 4096, 4096, 132) == 4 * 4096 * sizeof(float));
    CHECK(kern_gemm_split_workspace(128, 4096, 4096, 132) == 0);
    static const int64_t Ms[] = {1, 16, 40, 64}, Ns[] = {128, 264, 4096, 7168}, Ks[] = {512, 2176, 4104, 16384};
    static const int32_t sms[] = {24, 108, 132, 148};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 4; b++)
            for (size_t c = 0; c < 4; c++)
                for (size_t d = 0; d < 4; d++) {
                    int32_t S = kern_gemm_splits(Ms[a], Ns[b], Ks[c], sms[d]);
                    int64_t kt = (Ks[c] + KERN_GEMM_BK - 1) / KERN_GEMM_BK, next = 0;
                    CHECK(S >= 1 && S <= KERN_SPLITK_MAX);
                    for (int32_t z = 0; z < S; z++) {
                        int64_t first, end;
                        kern_gemm_split_range(kt, S, z, &first, &end);
                        CHECK_MSG(first == next && end > first, "M=%lld N=%lld K=%lld sms=%d: split %d of %d is [%lld, %lld)",
                                  (long long)Ms[a], (long long)Ns[b], (long long)Ks[c], sms[d], z, S, (long long)first,
                                  (long long)end);
                        CHECK(S == 1 || end - first >= KERN_SPLITK_MIN_SLABS);
                        next = end;
                    }
                    CHECK(next == kt);
                }
}

/* The tensor-core decode's split plan (kern_plan.h): splits for
 * KERN_DECODE_CTAS_PER_SM CTAs per SM where the context allows, never
 * under KERN_DECODE_MIN_KEYS keys per split (but the last) nor above the
 * pages or KERN_DECODE_SPLITS_MAX, no split without keys, and the splits'
 * keys (kern_decode_split_keys, on the device) those of the CPU
 * reference's rule (kern_decode_pages_per_split), covering the context in
 * order. */
static void test_decode_plan(void)
{
    CHECK(kern_decode_splits(1, 8, 8192, 16, 132) == 32);                  /* 33 for the SMs, 32 by keys */
    CHECK(kern_decode_splits(1, 8, 4096, 16, 132) == 16);                  /* 16 by keys */
    CHECK(kern_decode_splits(2, 8, 4096, 16, 108) == 14);                  /* 216 CTAs / 16 blocks */
    CHECK(kern_decode_splits(64, 8, 8192, 16, 132) == 1);                  /* 512 blocks fill the SMs */
    CHECK(kern_decode_splits(1, 8, 200, 16, 132) == 1);                    /* under 256 keys */
    CHECK(kern_decode_splits(1, 8, 1040, 16, 132) == 4);                   /* the check case: 4 of 17 pages */
    CHECK(kern_decode_splits(1, 1, 1 << 20, 16, 132) == KERN_DECODE_SPLITS_MAX);
    CHECK(kern_decode_splits(1, 8, 1600, 16, 132) == 6);                   /* 6 by keys: 17 pages each */
    CHECK(kern_decode_splits(0, 8, 4096, 16, 132) == 1 && kern_decode_splits(1, 8, 4096, 0, 132) == 1 &&
          kern_decode_splits(1, 8, 4096, 16, 0) == 1 && kern_decode_splits(1, 8, 0, 16, 132) == 1);
    static const int64_t batches[] = {1, 3, 16, 64};
    static const int32_t hkvs[] = {1, 2, 8}, ctxs[] = {1, 15, 16, 255, 256, 300, 1040, 4097, 32768, 131072},
                         pages[] = {16, 64}, sms[] = {20, 108, 132, 148};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 3; b++)
            for (size_t c = 0; c < 10; c++)
                for (size_t d = 0; d < 2; d++)
                    for (size_t e = 0; e < 4; e++) {
                        int32_t ctx = ctxs[c], page = pages[d];
                        int32_t S = kern_decode_splits(batches[a], hkvs[b], ctx, page, sms[e]);
                        int64_t blocks = batches[a] * hkvs[b], np = (ctx + page - 1) / page;
                        int64_t want = (KERN_DECODE_CTAS_PER_SM * sms[e] + blocks - 1) / blocks;
                        if (want > ctx / KERN_DECODE_MIN_KEYS) want = ctx / KERN_DECODE_MIN_KEYS;
                        if (want > np) want = np;
                        if (want > KERN_DECODE_SPLITS_MAX) want = KERN_DECODE_SPLITS_MAX;
                        CHECK(S >= 1 && S <= KERN_DECODE_SPLITS_MAX && S <= np);
                        /* Cutting to the splits that get pages loses at most half. */
                        CHECK_MSG(want < 2 ? S == 1 : 2 * S >= want, "b=%lld hkv=%d ctx=%d page=%d sms=%d: %d splits for %lld",
                                  (long long)batches[a], hkvs[b], ctx, page, sms[e], S, (long long)want);
                        int32_t pps = kern_decode_pages_per_split(ctx, page, S), next = 0;
                        for (int32_t sp = 0; sp < S; sp++) {
                            int32_t t0, t1;
                            kern_decode_split_keys(ctx, page, S, sp, &t0, &t1);
                            int64_t ref0 = (int64_t)sp * pps * page;
                            CHECK_MSG(t0 == next && t1 > t0 && t0 == ref0,
                                      "ctx=%d page=%d: split %d of %d is [%d, %d), the reference's starts at %lld", ctx,
                                      page, sp, S, t0, t1, (long long)ref0);
                            CHECK(sp == S - 1 || S == 1 || t1 - t0 >= KERN_DECODE_MIN_KEYS);
                            next = t1;
                        }
                        CHECK(next == ctx);
                        /* More splits than the plan's leave the last ones empty, as the reference does. */
                        int32_t t0, t1;
                        kern_decode_split_keys(ctx, page, (int32_t)np + 1, (int32_t)np, &t0, &t1);
                        CHECK(t0 == ctx && t1 == ctx);
                    }
}

/* Checks a grouped GEMM tile list against its layout: tiles in expert
 * order, each 1..KERN_GEMM_BM rows of one expert, consecutive within an
 * expert, and every row of every group covered exactly once (masked: no
 * row at or past an expert's count). Returns the number of failures. */
static int grouped_list_ok(int masked, int32_t E, int64_t cap, const int64_t *rows_of, const kern_grouped_tile *t,
                           int64_t n)
{
    int64_t total = masked ? (int64_t)E * cap : rows_of[E], want_tiles = 0, most = 0;
    unsigned char *hit = calloc((size_t)total + 1, 1);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        bad += t[i].rows < 1 || t[i].rows > KERN_GEMM_BM || t[i].expert < 0 || t[i].expert >= E;
        if (i > 0) {
            bad += t[i].expert < t[i - 1].expert; /* expert order */
            bad += t[i].expert == t[i - 1].expert && (t[i].row0 != t[i - 1].row0 + KERN_GEMM_BM || t[i - 1].rows != KERN_GEMM_BM);
        }
        for (int64_t r = t[i].row0; r < t[i].row0 + t[i].rows && r >= 0 && r < total; r++) hit[r]++;
    }
    for (int32_t e = 0; e < E; e++) {
        int64_t base, rows;
        kern_grouped_group(masked, e, cap, rows_of, &base, &rows);
        want_tiles += (rows + KERN_GEMM_BM - 1) / KERN_GEMM_BM;
        most = rows > most ? rows : most;
        for (int64_t r = base; r < base + (masked ? cap : rows); r++) bad += hit[r] != (r < base + rows);
    }
    bad += n != want_tiles || n > kern_grouped_tiles_max(E, most);
    free(hit);
    return bad;
}

static int64_t grouped_plan(int masked, int32_t E, int64_t cap, const int64_t *rows_of, kern_grouped_tile *t,
                            int64_t max)
{
    return masked ? kern_grouped_plan_masked(E, cap, rows_of, t, max) : kern_grouped_plan_contig(E, rows_of, t, max);
}

/* Contiguous offsets from per-expert rows. */
static void grouped_offsets(int32_t E, const int64_t *rows, int64_t *off)
{
    off[0] = 0;
    for (int32_t e = 0; e < E; e++) off[e + 1] = off[e] + rows[e];
}

static void test_grouped_plan_uniform(void)
{
    enum { E = 8 };
    int64_t rows[E], off[E + 1];
    kern_grouped_tile t[64];
    for (int e = 0; e < E; e++) rows[e] = 256;
    grouped_offsets(E, rows, off);
    int64_t n = kern_grouped_plan_contig(E, off, t, 64);
    CHECK(n == 16 && grouped_list_ok(0, E, 0, off, t, n) == 0);
    CHECK(t[3].expert == 1 && t[3].row0 == 384 && t[3].rows == 128);
    n = kern_grouped_plan_masked(E, 256, rows, t, 64);
    CHECK(n == 16 && grouped_list_ok(1, E, 256, rows, t, n) == 0);
    CHECK(t[3].expert == 1 && t[3].row0 == 384 && t[3].rows == 128);
    CHECK(kern_grouped_tiles_max(E, 256) == 16);
    CHECK(kern_grouped_workspace(E, 256) == 16 + 16 * sizeof(kern_grouped_tile));
}

/* A few hot experts take most tokens, the rest one or none: the list holds
 * only their tiles, where a grid over experts × the largest group's tiles
 * launches E × 8. */
static void test_grouped_plan_skewed(void)
{
    enum { E = 64, CAP = 1024 };
    int64_t rows[E] = {0}, off[E + 1];
    static kern_grouped_tile t[E * (CAP / KERN_GEMM_BM)];
    rows[3] = 1000, rows[17] = 640, rows[40] = 129;
    for (int e = 50; e < E; e++) rows[e] = 1 + e % 3;
    grouped_offsets(E, rows, off);
    int64_t want = 8 + 5 + 2 + 14, max = kern_grouped_tiles_max(E, 1000);
    int64_t n = kern_grouped_plan_contig(E, off, t, max);
    CHECK_MSG(n == want, "%lld tiles, want %lld", (long long)n, (long long)want);
    CHECK(grouped_list_ok(0, E, 0, off, t, n) == 0);
    CHECK(max == E * 8 && t[0].expert == 3 && t[8].expert == 17 && t[13].expert == 40 && t[14].rows == 1);
    n = kern_grouped_plan_masked(E, CAP, rows, t, kern_grouped_tiles_max(E, CAP));
    CHECK(n == want && grouped_list_ok(1, E, CAP, rows, t, n) == 0);
    CHECK(t[8].row0 == 17 * CAP && t[12].row0 == 17 * CAP + 512 && t[12].rows == 128);
}

static void test_grouped_plan_empty(void)
{
    enum { E = 6 };
    int64_t none[E] = {0}, some[E] = {0, 5, 0, 0, 130, 0}, off[E + 1];
    kern_grouped_tile t[16];
    grouped_offsets(E, none, off);
    CHECK(kern_grouped_plan_contig(E, off, t, 0) == 0);
    CHECK(kern_grouped_plan_masked(E, 64, none, t, 0) == 0);
    grouped_offsets(E, some, off);
    int64_t n = kern_grouped_plan_contig(E, off, t, 16);
    CHECK(n == 3 && grouped_list_ok(0, E, 0, off, t, n) == 0);
    CHECK(t[0].expert == 1 && t[1].expert == 4 && t[1].row0 == 5 && t[2].row0 == 133 && t[2].rows == 2);
    n = kern_grouped_plan_masked(E, 256, some, t, 16);
    CHECK(n == 3 && grouped_list_ok(1, E, 256, some, t, n) == 0 && t[1].row0 == 4 * 256);
    /* Malformed: offsets going back, a negative count, a list too short. */
    off[3] = off[2] - 1;
    CHECK(kern_grouped_plan_contig(E, off, t, 16) == -1);
    some[2] = -1;
    CHECK(kern_grouped_plan_masked(E, 256, some, t, 16) == -1);
    some[2] = 0;
    CHECK(kern_grouped_plan_masked(E, 256, some, t, 2) == -1);
}

/* Groups not a multiple of 128 rows: the last tile of each takes the
 * remainder; masked counts past the cap are cut to it. */
static void test_grouped_plan_partial(void)
{
    enum { E = 5 };
    int64_t rows[E] = {129, 127, 1, 300, 128}, off[E + 1];
    kern_grouped_tile t[16];
    grouped_offsets(E, rows, off);
    int64_t n = kern_grouped_plan_contig(E, off, t, 16);
    CHECK(n == 8 && grouped_list_ok(0, E, 0, off, t, n) == 0);
    CHECK(t[1].rows == 1 && t[1].row0 == 128 && t[2].rows == 127 && t[3].rows == 1 && t[6].rows == 44);
    CHECK(t[7].row0 == 557 && t[7].rows == 128);
    n = kern_grouped_plan_masked(E, 200, rows, t, 16); /* expert 3's 300 cut to 200 */
    CHECK(n == 7 && grouped_list_ok(1, E, 200, rows, t, n) == 0);
    CHECK(t[5].expert == 3 && t[5].row0 == 3 * 200 + 128 && t[5].rows == 72);
}

/* Random layouts, both kinds: every row once, in expert order, and the
 * list never longer than the bound the GPU sizes its workspace by. */
static void test_grouped_plan_cover(void)
{
    enum { EMAX = 40 };
    int64_t rows[EMAX], off[EMAX + 1];
    static kern_grouped_tile t[EMAX * 9];
    for (int it = 0; it < 300; it++) {
        int32_t E = 1 + (int32_t)((urand() + 1.0f) * 0.5f * (EMAX - 1));
        int64_t cap = 1 + (int64_t)((urand() + 1.0f) * 0.5f * 1100), most = 0;
        for (int32_t e = 0; e < E; e++) {
            float u = (urand() + 1.0f) * 0.5f;
            rows[e] = u < 0.3f ? 0 : (int64_t)(u * u * u * (float)cap); /* skewed, some empty */
            if (rows[e] > cap) rows[e] = cap;
            most = rows[e] > most ? rows[e] : most;
        }
        grouped_offsets(E, rows, off);
        for (int masked = 0; masked < 2; masked++) {
            const int64_t *src = masked ? rows : off;
            int64_t n = grouped_plan(masked, E, cap, src, t, kern_grouped_tiles_max(E, masked ? cap : most));
            CHECK_MSG(n >= 0 && grouped_list_ok(masked, E, cap, src, t, n) == 0, "iteration %d %s: %lld tiles", it,
                      masked ? "masked" : "contiguous", (long long)n);
        }
    }
}

static const test_case cases[] = {
    {"arch", test_arch},
    {"splitk_plan", test_splitk_plan},
    {"decode_plan", test_decode_plan},
    {"bf16", test_bf16},
    {"e4m3", test_e4m3},
    {"quant", test_quant},
    {"gemm", test_gemm},
    {"gemm_mxfp8", test_gemm_mxfp8},
    {"grouped", test_grouped},
    {"grouped_plan_uniform", test_grouped_plan_uniform},
    {"grouped_plan_skewed", test_grouped_plan_skewed},
    {"grouped_plan_empty", test_grouped_plan_empty},
    {"grouped_plan_partial", test_grouped_plan_partial},
    {"grouped_plan_cover", test_grouped_plan_cover},
    {"prefill", test_prefill},
    {"decode_split_and_merge", test_decode_split_and_merge},
    {"softmax_rmsnorm", test_softmax_rmsnorm},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_kern_ref", cases);
}
