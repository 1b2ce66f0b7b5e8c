/* calib_backend_cpu — the CPU backend: times the C references on the
 * host so the harness can be run and tested anywhere. Its check() compares
 * each reference with an independent formulation (bf16 GEMM vs fp32 GEMM of
 * the same values, flash vs naive attention, split-KV + merge vs unsplit,
 * online vs two-pass softmax, quantisation vs its error bound, …). No
 * collectives; timings are wall-clock (CLOCK_MONOTONIC) per execution. */
#include "calib_backend.h"
#include "../sim/sim_clock.h"

#include "../kernels/kern_attn_ref.h"
#include "../kernels/kern_gemm_ref.h"
#include "../kernels/kern_grouped_ref.h"
#include "../kernels/kern_num.h"
#include "../kernels/kern_quant_ref.h"
#include "../kernels/kern_softmax_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define CPU_BUFS 10
#define CPU_SPLITS 4
#define CPU_PAGE 16

typedef struct {
    calib_op op;
    int32_t kernel;
    calib_shape s;
    void *buf[CPU_BUFS];
    int64_t *offs;
    int32_t *ctx, *table;
} cpu_state;

static const calib_kernel_desc cpu_k_gemm[] = {{"kern_gemm_bf16_ref", 1, "bf16", 0}, {"kern_gemm_fp8_block_ref", 1, "fp8", 0}};
static const calib_kernel_desc cpu_k_gc[] = {{"kern_grouped_contig_ref", 1, "fp32", 0}};
static const calib_kernel_desc cpu_k_gm[] = {{"kern_grouped_masked_ref", 1, "fp32", 0}};
static const calib_kernel_desc cpu_k_pf[] = {{"kern_attn_flash_ref", 1, "fp32", 0}};
static const calib_kernel_desc cpu_k_dec[] = {{"kern_decode_split_ref", 1, "fp32", 0}};
static const calib_kernel_desc cpu_k_lse[] = {{"kern_lse_merge_ref", 1, "fp32", 0}};
static const calib_kernel_desc cpu_k_sm[] = {{"kern_softmax_online_ref", 1, "fp32", 0}};
static const calib_kernel_desc cpu_k_rms[] = {{"kern_rmsnorm_ref", 1, "fp32", 0}};
static const calib_kernel_desc cpu_k_q8[] = {{"kern_quant_fp8_block128_ref", 1, "fp8", 0}};
static const calib_kernel_desc cpu_k_mx[] = {{"kern_quant_mxfp8_ref", 1, "mxfp8", 0}};
static const calib_kernel_desc cpu_k_copy[] = {{"memcpy", 1, "u8", 1}};

static void cpu_kernels(void *st, calib_op op, const calib_kernel_desc **list, int32_t *n, const char **why)
{
    (void)st;
    *why = NULL;
#define CPU_K(arr) (*list = (arr), *n = (int32_t)(sizeof(arr) / sizeof((arr)[0])))
    switch (op) {
    case CALIB_OP_GEMM: CPU_K(cpu_k_gemm); break;
    case CALIB_OP_GROUPED_CONTIG: CPU_K(cpu_k_gc); break;
    case CALIB_OP_GROUPED_MASKED: CPU_K(cpu_k_gm); break;
    case CALIB_OP_ATTN_PREFILL: CPU_K(cpu_k_pf); break;
    case CALIB_OP_ATTN_DECODE: CPU_K(cpu_k_dec); break;
    case CALIB_OP_LSE_MERGE: CPU_K(cpu_k_lse); break;
    case CALIB_OP_SOFTMAX: CPU_K(cpu_k_sm); break;
    case CALIB_OP_RMSNORM: CPU_K(cpu_k_rms); break;
    case CALIB_OP_QUANT_FP8: CPU_K(cpu_k_q8); break;
    case CALIB_OP_QUANT_MXFP8: CPU_K(cpu_k_mx); break;
    case CALIB_OP_COPY: CPU_K(cpu_k_copy); break;
    default:
        *list = NULL, *n = 0;
        *why = "the CPU backend has no collectives (NCCL needs GPUs)";
    }
#undef CPU_K
}

static void cpu_release(void *vst)
{
    cpu_state *st = vst;
    for (int i = 0; i < CPU_BUFS; i++) free(st->buf[i]), st->buf[i] = NULL;
    free(st->offs), free(st->ctx), free(st->table);
    st->offs = NULL, st->ctx = NULL, st->table = NULL;
}

static uint64_t cpu_rng(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

static void cpu_fill(float *p, int64_t n, uint64_t seed, float amp)
{
    uint64_t x = seed | 1;
    for (int64_t i = 0; i < n; i++) p[i] = amp * ((float)(cpu_rng(&x) >> 40) * (2.0f / 16777216.0f) - 1.0f);
}

/* Allocates buffer i with n elements of size es, filled with random fp32
 * (es 4) / bf16 (es 2) values or zeroed (fill 0). */
static int cpu_alloc(cpu_state *st, int i, int64_t n, size_t es, int fill, sim_err *err)
{
    st->buf[i] = calloc((size_t)(n > 0 ? n : 1), es);
    if (!st->buf[i]) return sim_err_set(err, SIM_ENOMEM, "CPU backend: out of memory (%lld elements)", (long long)n);
    if (fill && es == 4) cpu_fill(st->buf[i], n, 0x1234u + (uint64_t)i * 77u, 1.0f);
    if (fill && es == 2) {
        float *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
        if (!tmp) return sim_err_set(err, SIM_ENOMEM, "CPU backend: out of memory");
        cpu_fill(tmp, n, 0x777u + (uint64_t)i, 1.0f);
        kern_bf16_from_f32_n(tmp, st->buf[i], n);
        free(tmp);
    }
    return 0;
}

#define F(i) ((float *)st->buf[i])
#define H(i) ((uint16_t *)st->buf[i])
#define B8(i) ((uint8_t *)st->buf[i])

static int cpu_prepare(void *vst, calib_op op, int32_t kernel, const calib_shape *s, sim_err *err)
{
    cpu_state *st = vst;
    int rc = 0;
    cpu_release(st);
    st->op = op, st->kernel = kernel, st->s = *s;
    int64_t m = s->m, n = s->n, k = s->k;
    switch (op) {
    case CALIB_OP_GEMM:
        if (kernel == 0) {
            if ((rc = cpu_alloc(st, 0, m * k, 2, 1, err)) || (rc = cpu_alloc(st, 1, k * n, 2, 1, err)) ||
                (rc = cpu_alloc(st, 2, m * n, 2, 0, err)))
                goto fail;
        } else {
            if (k % 128) return sim_err_set(err, SIM_EINVAL, "fp8 GEMM needs k a multiple of 128");
            int64_t kb = k / 128, nb = kern_ceil_div(n, 128);
            if ((rc = cpu_alloc(st, 0, m * k, 4, 1, err)) || (rc = cpu_alloc(st, 1, n * k, 4, 1, err)) ||
                (rc = cpu_alloc(st, 2, m * k, 1, 0, err)) || (rc = cpu_alloc(st, 3, n * k, 1, 0, err)) ||
                (rc = cpu_alloc(st, 4, m * kb, 4, 0, err)) || (rc = cpu_alloc(st, 5, nb * kb, 4, 0, err)) ||
                (rc = cpu_alloc(st, 6, m * n, 2, 0, err)))
                goto fail;
            kern_quant_fp8_block128_ref(F(0), m, k, B8(2), F(4));
            kern_quant_fp8_tile128_ref(F(1), n, k, B8(3), F(5));
        }
        break;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: {
        int64_t E = s->groups, rows = E * m;
        st->offs = calloc((size_t)E + 1, sizeof *st->offs);
        if (!st->offs) return sim_err_set(err, SIM_ENOMEM, "out of memory");
        /* Equal groups of m rows: offsets e·m (contiguous) or counts m (masked). */
        for (int64_t e = 0; e <= E; e++) st->offs[e] = op == CALIB_OP_GROUPED_CONTIG ? e * m : m;
        if ((rc = cpu_alloc(st, 0, rows * k, 4, 1, err)) || (rc = cpu_alloc(st, 1, E * k * n, 4, 1, err)) ||
            (rc = cpu_alloc(st, 2, rows * n, 4, 0, err)))
            goto fail;
        break;
    }
    case CALIB_OP_ATTN_PREFILL: {
        int64_t nkv = s->ctx + m;
        if ((rc = cpu_alloc(st, 0, m * s->heads * s->head_dim, 4, 1, err)) ||
            (rc = cpu_alloc(st, 1, nkv * s->kv_heads * s->head_dim, 4, 1, err)) ||
            (rc = cpu_alloc(st, 2, nkv * s->kv_heads * s->head_dim, 4, 1, err)) ||
            (rc = cpu_alloc(st, 3, m * s->heads * s->head_dim, 4, 0, err)) || (rc = cpu_alloc(st, 4, m * s->heads, 4, 0, err)))
            goto fail;
        break;
    }
    case CALIB_OP_ATTN_DECODE: {
        int64_t pages_per = kern_ceil_div(s->ctx, CPU_PAGE), np = pages_per * s->batch;
        int64_t rows = s->batch * s->heads, d = s->head_dim;
        st->ctx = malloc((size_t)s->batch * sizeof *st->ctx);
        st->table = malloc((size_t)np * sizeof *st->table);
        if (!st->ctx || !st->table) return sim_err_set(err, SIM_ENOMEM, "out of memory");
        for (int64_t b = 0; b < s->batch; b++) st->ctx[b] = (int32_t)s->ctx;
        for (int64_t i = 0; i < np; i++) st->table[i] = (int32_t)((i * 7919) % np); /* scattered pages */
        if ((rc = cpu_alloc(st, 0, rows * d, 4, 1, err)) || (rc = cpu_alloc(st, 1, np * CPU_PAGE * s->kv_heads * d, 4, 1, err)) ||
            (rc = cpu_alloc(st, 2, np * CPU_PAGE * s->kv_heads * d, 4, 1, err)) ||
            (rc = cpu_alloc(st, 3, CPU_SPLITS * rows * d, 4, 0, err)) || (rc = cpu_alloc(st, 4, CPU_SPLITS * rows, 4, 0, err)) ||
            (rc = cpu_alloc(st, 5, rows * d, 4, 0, err)) || (rc = cpu_alloc(st, 6, rows, 4, 0, err)))
            goto fail;
        break;
    }
    case CALIB_OP_LSE_MERGE:
        if ((rc = cpu_alloc(st, 0, s->ranks * m * s->head_dim, 4, 1, err)) || (rc = cpu_alloc(st, 1, s->ranks * m, 4, 1, err)) ||
            (rc = cpu_alloc(st, 2, m * s->head_dim, 4, 0, err)) || (rc = cpu_alloc(st, 3, m, 4, 0, err)))
            goto fail;
        break;
    case CALIB_OP_SOFTMAX:
    case CALIB_OP_RMSNORM:
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8:
        if ((rc = cpu_alloc(st, 0, m * n, 4, 1, err)) || (rc = cpu_alloc(st, 1, m * n, 4, 0, err)) ||
            (rc = cpu_alloc(st, 2, n, 4, 1, err)) || (rc = cpu_alloc(st, 3, m * n, 1, 0, err)) ||
            (rc = cpu_alloc(st, 4, m * kern_ceil_div(n, 32), 4, 0, err)) || (rc = cpu_alloc(st, 5, m * n, 4, 0, err)))
            goto fail;
        if (op == CALIB_OP_QUANT_FP8 || op == CALIB_OP_QUANT_MXFP8) /* spread magnitudes over 2^±8 */
            for (int64_t i = 0; i < m * n; i++) F(0)[i] *= ldexpf(1.0f, (int)(i * 2654435761u % 17) - 8);
        break;
    case CALIB_OP_COPY:
        if ((rc = cpu_alloc(st, 0, s->bytes, 1, 0, err)) || (rc = cpu_alloc(st, 1, s->bytes, 1, 0, err))) goto fail;
        memset(st->buf[0], 0x5a, (size_t)s->bytes);
        break;
    default: return sim_err_set(err, SIM_ENOTSUP, "CPU backend: op %s not supported", calib_op_name(op));
    }
    return 0;
fail:
    cpu_release(st);
    return rc;
}

static void cpu_exec(cpu_state *st)
{
    const calib_shape *s = &st->s;
    switch (st->op) {
    case CALIB_OP_GEMM:
        if (st->kernel == 0) kern_gemm_bf16_ref(s->m, s->n, s->k, H(0), H(1), H(2));
        else kern_gemm_fp8_block_ref(s->m, s->n, s->k, B8(2), F(4), B8(3), F(5), H(6));
        break;
    case CALIB_OP_GROUPED_CONTIG: kern_grouped_contig_ref((int32_t)s->groups, s->n, s->k, st->offs, F(0), F(1), F(2)); break;
    case CALIB_OP_GROUPED_MASKED:
        kern_grouped_masked_ref((int32_t)s->groups, s->m, s->n, s->k, st->offs, F(0), F(1), F(2));
        break;
    case CALIB_OP_ATTN_PREFILL: {
        kern_prefill_shape ps = {(int32_t)s->m, (int32_t)s->ctx, (int32_t)s->heads, (int32_t)s->kv_heads,
                                 (int32_t)s->head_dim, 1.0f / sqrtf((float)s->head_dim)};
        kern_attn_flash_ref(&ps, 64, F(0), F(1), F(2), F(3), F(4));
        break;
    }
    case CALIB_OP_ATTN_DECODE: {
        kern_paged_shape ps = {(int32_t)s->batch, (int32_t)s->heads, (int32_t)s->kv_heads, (int32_t)s->head_dim,
                               CPU_PAGE, (int32_t)kern_ceil_div(s->ctx, CPU_PAGE), 1.0f / sqrtf((float)s->head_dim),
                               st->ctx, st->table};
        kern_decode_split_ref(&ps, CPU_SPLITS, F(0), F(1), F(2), F(3), F(4));
        kern_lse_merge_ref(CPU_SPLITS, s->batch * s->heads, (int32_t)s->head_dim, F(3), F(4), F(5), F(6));
        break;
    }
    case CALIB_OP_LSE_MERGE: kern_lse_merge_ref((int32_t)s->ranks, s->m, (int32_t)s->head_dim, F(0), F(1), F(2), F(3)); break;
    case CALIB_OP_SOFTMAX: kern_softmax_online_ref(F(0), s->m, s->n, F(1)); break;
    case CALIB_OP_RMSNORM: kern_rmsnorm_ref(F(0), F(2), s->m, s->n, 1e-6f, F(1)); break;
    case CALIB_OP_QUANT_FP8: kern_quant_fp8_block128_ref(F(0), s->m, s->n, B8(3), F(4)); break;
    case CALIB_OP_QUANT_MXFP8: kern_quant_mxfp8_ref(F(0), s->m, s->n, B8(3), B8(4)); break;
    case CALIB_OP_COPY: memcpy(st->buf[1], st->buf[0], (size_t)s->bytes); break;
    default: break;
    }
}

static int cpu_run(void *vst, double *seconds, sim_err *err)
{
    (void)err;
    double t0 = sim_wall_s();
    cpu_exec(vst);
    *seconds = sim_wall_s() - t0;
    return 0;
}

static float cpu_maxdiff(const float *a, const float *b, int64_t n, float *scale)
{
    float m = 0.0f, sc = 0.0f;
    for (int64_t i = 0; i < n; i++) m = fmaxf(m, fabsf(a[i] - b[i])), sc = fmaxf(sc, fabsf(b[i]));
    if (scale) *scale = sc;
    return m;
}

/* Runs the prepared point and compares it with an independent formulation;
 * *error and *tol are in the same (relative to max |reference|) units. */
static int cpu_check(void *vst, double *error, double *tol, sim_err *err)
{
    cpu_state *st = vst;
    const calib_shape *s = &st->s;
    int64_t m = s->m, n = s->n, k = s->k;
    float *ref = NULL, *got = NULL, *tmp = NULL, *tmp2 = NULL, sc = 1.0f;
    int rc = 0;
    cpu_exec(st);
    *error = 0.0, *tol = 0.0;
#define CPU_TMP(p, cnt)                                                              \
    do {                                                                             \
        (p) = malloc((size_t)((cnt) > 0 ? (cnt) : 1) * sizeof(float));               \
        if (!(p)) {                                                                  \
            rc = sim_err_set(err, SIM_ENOMEM, "check: out of memory");               \
            goto fail;                                                               \
        }                                                                            \
    } while (0)
    switch (st->op) {
    case CALIB_OP_GEMM: {
        CPU_TMP(ref, m * n);
        CPU_TMP(got, m * n);
        CPU_TMP(tmp, m * k);
        CPU_TMP(tmp2, k * n);
        float *A = tmp, *B = tmp2;
        if (st->kernel == 0) {
            kern_bf16_to_f32_n(H(0), A, m * k), kern_bf16_to_f32_n(H(1), B, k * n);
            kern_bf16_to_f32_n(H(2), got, m * n);
        } else {
            /* Dequantise A, and Bᵀ (N×K) into F(1)'s place, then transpose to K×N. */
            kern_dequant_fp8_block128_ref(B8(2), F(4), m, k, A);
            kern_dequant_fp8_tile128_ref(B8(3), F(5), n, k, F(1));
            for (int64_t j = 0; j < n; j++)
                for (int64_t x = 0; x < k; x++) B[x * n + j] = F(1)[j * k + x];
            kern_bf16_to_f32_n(H(6), got, m * n);
        }
        kern_gemm_f32_ref(m, n, k, A, B, ref);
        *error = cpu_maxdiff(got, ref, m * n, &sc) / fmaxf(sc, 1e-30f);
        *tol = 0x1p-7; /* one bf16 rounding of the output, relative to max |C| */
        break;
    }
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: {
        int64_t E = s->groups;
        CPU_TMP(ref, E * m * n);
        for (int64_t e = 0; e < E; e++)
            for (int64_t r = 0; r < m; r++) /* one token at a time, expert e's weights */
                kern_gemm_f32_ref(1, n, k, F(0) + (e * m + r) * k, F(1) + e * k * n, ref + (e * m + r) * n);
        *error = cpu_maxdiff(F(2), ref, E * m * n, &sc) / fmaxf(sc, 1e-30f);
        *tol = 1e-5;
        break;
    }
    case CALIB_OP_ATTN_PREFILL: {
        kern_prefill_shape ps = {(int32_t)m, (int32_t)s->ctx, (int32_t)s->heads, (int32_t)s->kv_heads,
                                 (int32_t)s->head_dim, 1.0f / sqrtf((float)s->head_dim)};
        CPU_TMP(ref, m * s->heads * s->head_dim);
        kern_attn_naive_ref(&ps, F(0), F(1), F(2), ref, NULL);
        *error = cpu_maxdiff(F(3), ref, m * s->heads * s->head_dim, NULL);
        *tol = 1e-5;
        break;
    }
    case CALIB_OP_ATTN_DECODE: {
        int64_t d = s->head_dim, hk = s->kv_heads, row = s->heads * d;
        CPU_TMP(ref, row);
        CPU_TMP(tmp, 2 * s->ctx * hk * d);
        float *kk = tmp, *vv = tmp + s->ctx * hk * d;
        int64_t mp = kern_ceil_div(s->ctx, CPU_PAGE);
        for (int64_t b = 0; b < s->batch; b++) {
            for (int64_t t = 0; t < s->ctx; t++) {
                int64_t off = ((int64_t)st->table[b * mp + t / CPU_PAGE] * CPU_PAGE + t % CPU_PAGE) * hk * d;
                memcpy(kk + t * hk * d, F(1) + off, sizeof(float) * (size_t)(hk * d));
                memcpy(vv + t * hk * d, F(2) + off, sizeof(float) * (size_t)(hk * d));
            }
            kern_prefill_shape ps = {1, (int32_t)s->ctx - 1, (int32_t)s->heads, (int32_t)hk, (int32_t)d,
                                     1.0f / sqrtf((float)d)};
            kern_attn_naive_ref(&ps, F(0) + b * row, kk, vv, ref, NULL);
            *error = fmax(*error, cpu_maxdiff(F(5) + b * row, ref, row, NULL));
        }
        *tol = 1e-5;
        break;
    }
    case CALIB_OP_LSE_MERGE: { /* the definition, in double */
        int64_t d = s->head_dim, P = s->ranks;
        for (int64_t r = 0; r < m; r++) {
            double mx = -INFINITY, sum = 0.0;
            for (int64_t p = 0; p < P; p++) mx = fmax(mx, F(1)[p * m + r]);
            for (int64_t p = 0; p < P; p++) sum += exp(F(1)[p * m + r] - mx);
            double lse = mx + log(sum);
            *error = fmax(*error, fabs(lse - F(3)[r]));
            for (int64_t x = 0; x < d; x++) {
                double o = 0.0;
                for (int64_t p = 0; p < P; p++) o += exp(F(1)[p * m + r] - lse) * F(0)[(p * m + r) * d + x];
                *error = fmax(*error, fabs(o - F(2)[r * d + x]));
            }
        }
        *tol = 1e-5;
        break;
    }
    case CALIB_OP_SOFTMAX:
        CPU_TMP(ref, m * n);
        kern_softmax_twopass_ref(F(0), m, n, ref);
        *error = cpu_maxdiff(F(1), ref, m * n, NULL);
        *tol = 1e-6;
        break;
    case CALIB_OP_RMSNORM:
        for (int64_t r = 0; r < m; r++) {
            double ss = 0.0;
            for (int64_t c = 0; c < n; c++) ss += (double)F(0)[r * n + c] * F(0)[r * n + c];
            double inv = 1.0 / sqrt(ss / (double)n + 1e-6);
            for (int64_t c = 0; c < n; c++)
                *error = fmax(*error, fabs(F(0)[r * n + c] * inv * F(2)[c] - F(1)[r * n + c]));
        }
        *tol = 1e-5;
        break;
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: { /* error / format bound, ≤ 1 passes */
        int mx = st->op == CALIB_OP_QUANT_MXFP8;
        int64_t nb = kern_ceil_div(n, mx ? 32 : 128);
        CPU_TMP(got, m * n);
        if (mx) kern_dequant_mxfp8_ref(B8(3), B8(4), m, n, got);
        else kern_dequant_fp8_block128_ref(B8(3), F(4), m, n, got);
        for (int64_t r = 0; r < m; r++)
            for (int64_t c = 0; c < n; c++) {
                float scale = mx ? kern_e8m0_to_f32(B8(4)[r * nb + c / 32]) : F(4)[r * nb + c / 128];
                float x = F(0)[r * n + c];
                double bound = 0x1p-4 * fabs(x) + 0x1p-10 * scale * 1.0001;
                *error = fmax(*error, fabs(x - got[r * n + c]) / bound);
            }
        *tol = 1.0;
        break;
    }
    case CALIB_OP_COPY:
        *error = memcmp(st->buf[0], st->buf[1], (size_t)s->bytes) ? 1.0 : 0.0;
        *tol = 0.0;
        break;
    default: rc = sim_err_set(err, SIM_ENOTSUP, "no check for %s on the CPU", calib_op_name(st->op));
    }
#undef CPU_TMP
fail:
    free(ref), free(got), free(tmp), free(tmp2);
    return rc;
}

static int cpu_identity(void *st, calib_gpu_id *id, sim_err *err)
{
    (void)st, (void)err;
    struct utsname u;
    memset(id, 0, sizeof *id);
    snprintf(id->name, sizeof id->name, "cpu");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) {
                    c += strspn(c + 1, " \t") + 1;
                    c[strcspn(c, "\n")] = '\0';
                    snprintf(id->name, sizeof id->name, "%s", c);
                }
                break;
            }
        }
        fclose(f);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    id->sms = ncpu > 0 ? (int32_t)ncpu : 1;
    snprintf(id->cc, sizeof id->cc, "cpu");
    snprintf(id->driver, sizeof id->driver, "%.31s", uname(&u) == 0 ? u.release : "?");
    snprintf(id->cuda, sizeof id->cuda, "none");
    snprintf(id->backend, sizeof id->backend, "cpu");
    return 0;
}

static double cpu_peak(void *st, const char *dtype)
{
    (void)st, (void)dtype;
    return 0.0; /* unknown: no fraction of peak on the CPU */
}

static void cpu_destroy(void *vst)
{
    cpu_release(vst);
    free(vst);
}

int calib_backend_cpu_create(calib_backend *b, sim_err *err)
{
    cpu_state *st = calloc(1, sizeof *st);
    if (!st) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    memset(b, 0, sizeof *b);
    b->name = "cpu";
    b->state = st;
    b->identity = cpu_identity;
    b->kernels = cpu_kernels;
    b->prepare = cpu_prepare;
    b->run = cpu_run;
    b->check = cpu_check;
    b->release = cpu_release;
    b->destroy = cpu_destroy;
    b->peak_flops = cpu_peak;
    b->default_warmup = 1;
    b->default_reps = 5;
    return 0;
}
