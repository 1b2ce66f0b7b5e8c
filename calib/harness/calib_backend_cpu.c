/* calib_backend_cpu — the CPU backend: times the C references on the
 * host so the harness can be run and tested anywhere. Its check() compares
 * each reference with an independent formulation (bf16 GEMM vs fp32 GEMM of
 * the same values, flash vs naive attention, split-KV + merge vs unsplit,
 * online vs two-pass softmax, quantisation vs its error bound, …) element
 * by element (calib_check.h), on outputs poisoned with NaN beforehand and
 * with a guard canary after every buffer. Data layouts as the GPU backend:
 * unequal contiguous groups when timed, Zipf-skewed groups at a routing
 * skew (calib_group_rows), masked counts below the cap and −inf LSE
 * partials for the check cases that ask. No collectives, no device
 * state (sample is NULL); timings are wall-clock (CLOCK_MONOTONIC) per
 * execution. */
#include "calib_backend.h"
#include "sim_clock.h"

#include "kern_attn_ref.h"
#include "kern_gemm_ref.h"
#include "kern_grouped_ref.h"
#include "kern_num.h"
#include "kern_quant_ref.h"
#include "kern_softmax_ref.h"

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
    uint32_t layout;
    calib_shape s;
    void *buf[CPU_BUFS];
    size_t bytes[CPU_BUFS]; /* each buffer's size; CALIB_CANARY_BYTES of canary follow it */
    int64_t *offs;
    int64_t slot; /* grouped_masked: rows of an expert's slot (the largest count: m unless skewed) */
    int32_t *ctx, *table;
} cpu_state;

/* GEMM: bf16; fp8 with 1×128 / 128×128 block scales; MXFP8 (E8M0 scales per
 * 32 along K, the Blackwell rung's operands). */
enum { CPU_GEMM_BF16, CPU_GEMM_FP8_BLOCK, CPU_GEMM_MXFP8 };
static const calib_kernel_desc cpu_k_gemm[] = {{"kern_gemm_bf16_ref", 1, "bf16", 0},
                                               {"kern_gemm_fp8_block_ref", 1, "fp8", 0},
                                               {"kern_gemm_mxfp8_ref", 1, "mxfp8", 0}};
static const calib_kernel_desc cpu_k_gc[] = {{"kern_grouped_contig_ref", 2, "fp32", 0}};
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
    for (int i = 0; i < CPU_BUFS; i++) free(st->buf[i]), st->buf[i] = NULL, st->bytes[i] = 0;
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
 * (es 4) / bf16 (es 2) values or zeroed (fill 0), and a guard canary after
 * it. */
static int cpu_alloc(cpu_state *st, int i, int64_t n, size_t es, int fill, sim_err *err)
{
    st->bytes[i] = (size_t)(n > 0 ? n : 0) * es;
    st->buf[i] = calloc(1, st->bytes[i] + CALIB_CANARY_BYTES);
    if (!st->buf[i]) return sim_err_set(err, SIM_ENOMEM, "CPU backend: out of memory (%lld elements)", (long long)n);
    calib_canary_fill((char *)st->buf[i] + st->bytes[i], CALIB_CANARY_BYTES);
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

/* bf16 A, B and C; or fp32 A and B quantised to fp8 (per 128-block rows, per
 * 128×128 tile; or MXFP8: per 32 along K for both) with their scales, and
 * a bf16 C. */
static int cpu_prepare_gemm(cpu_state *st, int32_t kernel, const calib_shape *s, sim_err *err)
{
    int64_t m = s->m, n = s->n, k = s->k;
    int rc;
    if (kernel == CPU_GEMM_BF16) {
        if ((rc = cpu_alloc(st, 0, m * k, 2, 1, err)) || (rc = cpu_alloc(st, 1, k * n, 2, 1, err)) ||
            (rc = cpu_alloc(st, 2, m * n, 2, 0, err)))
            return rc;
    } else {
        /* Quantised: fp32 A (M×K) and Bᵀ (N×K), their e4m3 values, their
         * scales (fp32 per 1×128 and 128×128 blocks, or one E8M0 byte per
         * 32 along K), and the bf16 C. */
        const int mx = kernel == CPU_GEMM_MXFP8, blk = mx ? 32 : 128;
        if (k % blk)
            return sim_err_set(err, SIM_EINVAL, "%s GEMM needs k a multiple of %d", mx ? "MXFP8" : "fp8", blk);
        int64_t kb = k / blk, sa = m * kb, sb = (mx ? n : kern_ceil_div(n, 128)) * kb;
        if ((rc = cpu_alloc(st, 0, m * k, 4, 1, err)) || (rc = cpu_alloc(st, 1, n * k, 4, 1, err)) ||
            (rc = cpu_alloc(st, 2, m * k, 1, 0, err)) || (rc = cpu_alloc(st, 3, n * k, 1, 0, err)) ||
            (rc = cpu_alloc(st, 4, sa, mx ? 1 : 4, 0, err)) || (rc = cpu_alloc(st, 5, sb, mx ? 1 : 4, 0, err)) ||
            (rc = cpu_alloc(st, 6, m * n, 2, 0, err)))
            return rc;
        if (mx) {
            kern_quant_mxfp8_ref(F(0), m, k, B8(2), B8(4));
            kern_quant_mxfp8_ref(F(1), n, k, B8(3), B8(5));
        } else {
            kern_quant_fp8_block128_ref(F(0), m, k, B8(2), F(4));
            kern_quant_fp8_tile128_ref(F(1), n, k, B8(3), F(5));
        }
    }
    return 0;
}

/* Grouped GEMM: the rows per expert (offsets or masked counts, skewed
 * by the shape's routing skew), tokens, weights per expert and the
 * output; masked tokens and output in slots of the largest count. */
static int cpu_prepare_grouped(cpu_state *st, calib_op op, uint32_t layout, const calib_shape *s, sim_err *err)
{
    int64_t m = s->m, n = s->n, k = s->k;
    int rc;
    int64_t E = s->groups;
    st->offs = calloc((size_t)E + 1, sizeof *st->offs);
    if (!st->offs) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    st->slot = calib_group_rows(op, layout, s, st->offs); /* offsets (contiguous) or counts (masked) */
    int64_t rows = op == CALIB_OP_GROUPED_MASKED ? E * st->slot : E * m;
    if ((rc = cpu_alloc(st, 0, rows * k, 4, 1, err)) || (rc = cpu_alloc(st, 1, E * k * n, 4, 1, err)) ||
        (rc = cpu_alloc(st, 2, rows * n, 4, 0, err)))
        return rc;
    return 0;
}

/* Prefill attention: `batch` sequences back to back, Q, K, V, O and LSE. */
static int cpu_prepare_prefill(cpu_state *st, const calib_shape *s, sim_err *err)
{
    int64_t m = s->m;
    int rc;
    int64_t nkv = s->ctx + m, b = s->batch > 0 ? s->batch : 1;
    if ((rc = cpu_alloc(st, 0, b * m * s->heads * s->head_dim, 4, 1, err)) ||
        (rc = cpu_alloc(st, 1, b * nkv * s->kv_heads * s->head_dim, 4, 1, err)) ||
        (rc = cpu_alloc(st, 2, b * nkv * s->kv_heads * s->head_dim, 4, 1, err)) ||
        (rc = cpu_alloc(st, 3, b * m * s->heads * s->head_dim, 4, 0, err)) ||
        (rc = cpu_alloc(st, 4, b * m * s->heads, 4, 0, err)))
        return rc;
    return 0;
}

/* Paged decode: the context lengths, a scattered page table, Q, paged K and
 * V, the split partials and the merged output and LSE. */
static int cpu_prepare_decode(cpu_state *st, const calib_shape *s, sim_err *err)
{
    int rc;
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
        return rc;
    return 0;
}

/* LSE merge: the partials (−inf LSEs where the layout asks) and the merged
 * output and LSE. */
static int cpu_prepare_lse_merge(cpu_state *st, uint32_t layout, const calib_shape *s, sim_err *err)
{
    int64_t m = s->m;
    int rc;
    if ((rc = cpu_alloc(st, 0, s->ranks * m * s->head_dim, 4, 1, err)) || (rc = cpu_alloc(st, 1, s->ranks * m, 4, 1, err)) ||
        (rc = cpu_alloc(st, 2, m * s->head_dim, 4, 0, err)) || (rc = cpu_alloc(st, 3, m, 4, 0, err)))
        return rc;
    if (layout & CALIB_LAYOUT_NEG_INF_LSE)
        for (int64_t p = 0; p < s->ranks; p++)
            for (int64_t r = 0; r < m; r++)
                if (calib_lse_neg_inf(p, r, s->ranks)) F(1)[p * m + r] = -INFINITY;
    return 0;
}

/* Softmax, RMSNorm and the quantisers: input, output, weights, fp8 values
 * and scales (quantiser inputs spread over 2^±8). */
static int cpu_prepare_rowwise(cpu_state *st, calib_op op, const calib_shape *s, sim_err *err)
{
    int64_t m = s->m, n = s->n;
    int rc;
    if ((rc = cpu_alloc(st, 0, m * n, 4, 1, err)) || (rc = cpu_alloc(st, 1, m * n, 4, 0, err)) ||
        (rc = cpu_alloc(st, 2, n, 4, 1, err)) || (rc = cpu_alloc(st, 3, m * n, 1, 0, err)) ||
        (rc = cpu_alloc(st, 4, m * kern_ceil_div(n, 32), 4, 0, err)) || (rc = cpu_alloc(st, 5, m * n, 4, 0, err)))
        return rc;
    if (op == CALIB_OP_QUANT_FP8 || op == CALIB_OP_QUANT_MXFP8) /* spread magnitudes over 2^±8 */
        for (int64_t i = 0; i < m * n; i++) F(0)[i] *= ldexpf(1.0f, (int)(i * 2654435761u % 17) - 8);
    return 0;
}

/* Allocates and fills the op's buffers; on failure none is kept. */
static int cpu_prepare(void *vst, calib_op op, int32_t kernel, const calib_shape *s, uint32_t layout, sim_err *err)
{
    cpu_state *st = vst;
    int rc = 0;
    cpu_release(st);
    st->op = op, st->kernel = kernel, st->s = *s, st->layout = layout;
    switch (op) {
    case CALIB_OP_GEMM: rc = cpu_prepare_gemm(st, kernel, s, err); break;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: rc = cpu_prepare_grouped(st, op, layout, s, err); break;
    case CALIB_OP_ATTN_PREFILL: rc = cpu_prepare_prefill(st, s, err); break;
    case CALIB_OP_ATTN_DECODE: rc = cpu_prepare_decode(st, s, err); break;
    case CALIB_OP_LSE_MERGE: rc = cpu_prepare_lse_merge(st, layout, s, err); break;
    case CALIB_OP_SOFTMAX:
    case CALIB_OP_RMSNORM:
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: rc = cpu_prepare_rowwise(st, op, s, err); break;
    case CALIB_OP_COPY:
        if ((rc = cpu_alloc(st, 0, s->bytes, 1, 0, err)) || (rc = cpu_alloc(st, 1, s->bytes, 1, 0, err))) break;
        memset(st->buf[0], 0x5a, (size_t)s->bytes);
        break;
    default: return sim_err_set(err, SIM_ENOTSUP, "CPU backend: op %s not supported", calib_op_name(op));
    }
    if (rc) cpu_release(st);
    return rc;
}

static void cpu_exec(cpu_state *st)
{
    const calib_shape *s = &st->s;
    switch (st->op) {
    case CALIB_OP_GEMM:
        if (st->kernel == CPU_GEMM_BF16) kern_gemm_bf16_ref(s->m, s->n, s->k, H(0), H(1), H(2));
        else if (st->kernel == CPU_GEMM_MXFP8) kern_gemm_mxfp8_ref(s->m, s->n, s->k, B8(2), B8(4), B8(3), B8(5), H(6));
        else kern_gemm_fp8_block_ref(s->m, s->n, s->k, B8(2), F(4), B8(3), F(5), H(6));
        break;
    case CALIB_OP_GROUPED_CONTIG: kern_grouped_contig_ref((int32_t)s->groups, s->n, s->k, st->offs, F(0), F(1), F(2)); break;
    case CALIB_OP_GROUPED_MASKED:
        kern_grouped_masked_ref((int32_t)s->groups, st->slot, s->n, s->k, st->offs, F(0), F(1), F(2));
        break;
    case CALIB_OP_ATTN_PREFILL: {
        kern_prefill_shape ps = {(int32_t)s->m, (int32_t)s->ctx, (int32_t)s->heads, (int32_t)s->kv_heads,
                                 (int32_t)s->head_dim, 1.0f / sqrtf((float)s->head_dim)};
        int64_t q = s->m * s->heads * s->head_dim, kv = (s->ctx + s->m) * s->kv_heads * s->head_dim;
        for (int64_t b = 0; b < (s->batch > 0 ? s->batch : 1); b++)
            kern_attn_flash_ref(&ps, 64, F(0) + b * q, F(1) + b * kv, F(2) + b * kv, F(3) + b * q, F(4) + b * s->m * s->heads);
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

/* The output buffers of the prepared op: poisoned before a checked run. */
static int cpu_outputs(const cpu_state *st, int out[4])
{
    switch (st->op) {
    case CALIB_OP_GEMM: out[0] = st->kernel == CPU_GEMM_BF16 ? 2 : 6; return 1;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: out[0] = 2; return 1;
    case CALIB_OP_ATTN_PREFILL: out[0] = 3, out[1] = 4; return 2;
    case CALIB_OP_ATTN_DECODE: out[0] = 3, out[1] = 4, out[2] = 5, out[3] = 6; return 4;
    case CALIB_OP_LSE_MERGE: out[0] = 2, out[1] = 3; return 2;
    case CALIB_OP_SOFTMAX:
    case CALIB_OP_RMSNORM:
    case CALIB_OP_COPY: out[0] = 1; return 1;
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: out[0] = 3, out[1] = 4; return 2;
    default: return 0;
    }
}

/* The check's scratch buffers, freed together whatever the outcome. */
typedef struct {
    float *ref, *got, *tmp, *tmp2;
} cpu_scratch;

/* Allocates scratch buffer p (one of ref, got, tmp, tmp2) of cnt floats. */
#define CPU_TMP(p, cnt)                                                              \
    do {                                                                             \
        (p) = scratch->p = malloc((size_t)((cnt) > 0 ? (cnt) : 1) * sizeof(float));  \
        if (!(p)) return sim_err_set(err, SIM_ENOMEM, "check: out of memory");       \
    } while (0)

/* The GEMM against an fp32 GEMM of the same (dequantised) values. */
static int cpu_check_gemm(const cpu_state *st, cpu_scratch *scratch, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    int64_t m = s->m, n = s->n, k = s->k;
    float *ref, *got, *tmp, *tmp2;
    CPU_TMP(ref, m * n);
    CPU_TMP(got, m * n);
    CPU_TMP(tmp, m * k);
    CPU_TMP(tmp2, k * n);
    float *A = tmp, *B = tmp2;
    if (st->kernel == CPU_GEMM_BF16) {
        kern_bf16_to_f32_n(H(0), A, m * k), kern_bf16_to_f32_n(H(1), B, k * n);
        kern_bf16_to_f32_n(H(2), got, m * n);
    } else {
        /* Dequantise A, and Bᵀ (N×K) into F(1)'s place, then transpose to K×N. */
        if (st->kernel == CPU_GEMM_MXFP8) {
            kern_dequant_mxfp8_ref(B8(2), B8(4), m, k, A);
            kern_dequant_mxfp8_ref(B8(3), B8(5), n, k, F(1));
        } else {
            kern_dequant_fp8_block128_ref(B8(2), F(4), m, k, A);
            kern_dequant_fp8_tile128_ref(B8(3), F(5), n, k, F(1));
        }
        for (int64_t j = 0; j < n; j++)
            for (int64_t x = 0; x < k; x++) B[x * n + j] = F(1)[j * k + x];
        kern_bf16_to_f32_n(H(6), got, m * n);
    }
    kern_gemm_f32_ref(m, n, k, A, B, ref);
    /* One bf16 rounding of the output (2^-9 relative) plus accumulation
     * order, with an absolute floor for cancelled sums. */
    calib_check_init(r, 0x1p-10 * calib_absmax(ref, m * n), 0x1p-8);
    calib_check_compare(r, got, ref, m * n, 0, "c");
    return 0;
}

/* Grouped GEMM, one token at a time against its expert's weights. */
static int cpu_check_grouped(const cpu_state *st, cpu_scratch *scratch, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    int64_t n = s->n, k = s->k;
    float *ref;
    int64_t E = s->groups, masked = st->op == CALIB_OP_GROUPED_MASKED;
    int64_t m = masked ? st->slot : s->m; /* rows per expert slot (masked) / mean (contiguous) */
    CPU_TMP(ref, E * m * n);
    for (int64_t e = 0; e < E; e++) {
        int64_t r0 = masked ? e * m : st->offs[e], rows = masked ? st->offs[e] : st->offs[e + 1] - st->offs[e];
        for (int64_t x = 0; x < rows; x++) /* one token at a time, expert e's weights */
            kern_gemm_f32_ref(1, n, k, F(0) + (r0 + x) * k, F(1) + e * k * n, ref + (r0 + x) * n);
    }
    double sc = 0;
    for (int64_t e = 0; e < E; e++) {
        int64_t r0 = masked ? e * m : st->offs[e], rows = masked ? st->offs[e] : st->offs[e + 1] - st->offs[e];
        for (int64_t i = r0 * n; i < (r0 + rows) * n; i++) sc = fmax(sc, fabs(ref[i]));
    }
    calib_check_init(r, 1e-6 * sc, 1e-5);
    /* The rows each expert owns (masked: rows past its count are never written). */
    for (int64_t e = 0; e < E; e++) {
        int64_t r0 = masked ? e * m : st->offs[e], rows = masked ? st->offs[e] : st->offs[e + 1] - st->offs[e];
        calib_check_compare(r, F(2) + r0 * n, ref + r0 * n, rows * n, r0 * n, "c");
    }
    return 0;
}

/* Flash prefill attention against naive attention, output and LSE. */
static int cpu_check_prefill(const cpu_state *st, cpu_scratch *scratch, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    int64_t m = s->m;
    float *ref, *tmp;
    kern_prefill_shape ps = {(int32_t)m, (int32_t)s->ctx, (int32_t)s->heads, (int32_t)s->kv_heads,
                             (int32_t)s->head_dim, 1.0f / sqrtf((float)s->head_dim)};
    int64_t q = m * s->heads * s->head_dim, kv = (s->ctx + m) * s->kv_heads * s->head_dim, nb = s->batch > 0 ? s->batch : 1;
    CPU_TMP(ref, q);
    CPU_TMP(tmp, m * s->heads);
    calib_check_init(r, 1e-5, 1e-4);
    for (int64_t b = 0; b < nb; b++) {
        kern_attn_naive_ref(&ps, F(0) + b * q, F(1) + b * kv, F(2) + b * kv, ref, tmp);
        calib_check_compare(r, F(3) + b * q, ref, q, b * q, "o");
        calib_check_compare(r, F(4) + b * m * s->heads, tmp, m * s->heads, b * m * s->heads, "lse");
    }
    return 0;
}

/* Paged split-KV decode plus merge against naive attention over the
 * gathered pages. */
static int cpu_check_decode(const cpu_state *st, cpu_scratch *scratch, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    float *ref, *got, *tmp;
    int64_t d = s->head_dim, hk = s->kv_heads, row = s->heads * d;
    CPU_TMP(ref, row);
    CPU_TMP(got, s->heads);
    CPU_TMP(tmp, 2 * s->ctx * hk * d);
    float *kk = tmp, *vv = tmp + s->ctx * hk * d;
    int64_t mp = kern_ceil_div(s->ctx, CPU_PAGE);
    calib_check_init(r, 1e-5, 1e-4);
    for (int64_t b = 0; b < s->batch; b++) {
        for (int64_t t = 0; t < s->ctx; t++) {
            int64_t off = ((int64_t)st->table[b * mp + t / CPU_PAGE] * CPU_PAGE + t % CPU_PAGE) * hk * d;
            memcpy(kk + t * hk * d, F(1) + off, sizeof(float) * (size_t)(hk * d));
            memcpy(vv + t * hk * d, F(2) + off, sizeof(float) * (size_t)(hk * d));
        }
        kern_prefill_shape ps = {1, (int32_t)s->ctx - 1, (int32_t)s->heads, (int32_t)hk, (int32_t)d,
                                 1.0f / sqrtf((float)d)};
        kern_attn_naive_ref(&ps, F(0) + b * row, kk, vv, ref, got);
        calib_check_compare(r, F(5) + b * row, ref, row, b * row, "o");
        calib_check_compare(r, F(6) + b * s->heads, got, s->heads, b * s->heads, "lse");
    }
    return 0;
}

/* The LSE merge against its definition, in double. */
static int cpu_check_lse_merge(const cpu_state *st, cpu_scratch *scratch, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    int64_t m = s->m;
    float *ref, *got;
    int64_t d = s->head_dim, P = s->ranks;
    CPU_TMP(ref, m * d);
    CPU_TMP(got, m);
    for (int64_t x = 0; x < m; x++) {
        double mx = -INFINITY, sum = 0.0;
        for (int64_t p = 0; p < P; p++) mx = fmax(mx, F(1)[p * m + x]);
        if (mx == -INFINITY) { /* every partial empty: zeros and −inf */
            got[x] = -INFINITY;
            for (int64_t y = 0; y < d; y++) ref[x * d + y] = 0.0f;
            continue;
        }
        for (int64_t p = 0; p < P; p++) sum += exp(F(1)[p * m + x] - mx);
        double lse = mx + log(sum);
        got[x] = (float)lse;
        for (int64_t y = 0; y < d; y++) {
            double o = 0.0;
            for (int64_t p = 0; p < P; p++) o += exp(F(1)[p * m + x] - lse) * F(0)[(p * m + x) * d + y];
            ref[x * d + y] = (float)o;
        }
    }
    calib_check_init(r, 1e-5, 1e-5);
    calib_check_compare(r, F(2), ref, m * d, 0, "o");
    calib_check_compare(r, F(3), got, m, 0, "lse");
    return 0;
}

/* Online softmax against two-pass softmax; RMSNorm against its definition,
 * in double. */
static int cpu_check_rowwise(const cpu_state *st, cpu_scratch *scratch, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    int64_t m = s->m, n = s->n;
    float *ref;
    CPU_TMP(ref, m * n);
    if (st->op == CALIB_OP_SOFTMAX) {
        kern_softmax_twopass_ref(F(0), m, n, ref);
        calib_check_init(r, 1e-7, 1e-5);
    } else {
        for (int64_t x = 0; x < m; x++) {
            double ss = 0.0;
            for (int64_t c = 0; c < n; c++) ss += (double)F(0)[x * n + c] * F(0)[x * n + c];
            double inv = 1.0 / sqrt(ss / (double)n + 1e-6);
            for (int64_t c = 0; c < n; c++) ref[x * n + c] = (float)(F(0)[x * n + c] * inv * F(2)[c]);
        }
        calib_check_init(r, 1e-6, 1e-5);
    }
    calib_check_compare(r, F(1), ref, m * n, 0, "y");
    return 0;
}

/* fp8 block / MXFP8 quantisation: the dequantised error within the format's
 * bound (a ratio of at most 1 passes). */
static int cpu_check_quant(const cpu_state *st, cpu_scratch *scratch, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    int64_t m = s->m, n = s->n;
    float *got;
    int mx = st->op == CALIB_OP_QUANT_MXFP8;
    int64_t nb = kern_ceil_div(n, mx ? 32 : 128);
    CPU_TMP(got, m * n);
    if (mx) kern_dequant_mxfp8_ref(B8(3), B8(4), m, n, got);
    else kern_dequant_fp8_block128_ref(B8(3), F(4), m, n, got);
    calib_check_init(r, 0x1p-10, 0x1p-4);
    for (int64_t x = 0; x < m; x++)
        for (int64_t c = 0; c < n; c++) {
            float scale = mx ? kern_e8m0_to_f32(B8(4)[x * nb + c / 32]) : F(4)[x * nb + c / 128];
            float v = F(0)[x * n + c];
            double bound = 0x1p-4 * fabs(v) + 0x1p-10 * scale * 1.0001;
            calib_check_ratio(r, fabs(v - got[x * n + c]) / bound, x * n + c, got[x * n + c], v, "dequantised");
        }
    return 0;
}

#undef CPU_TMP

/* Runs the prepared point on NaN-poisoned outputs and compares it element
 * by element with an independent formulation (see the header). */
static int cpu_check(void *vst, calib_check_result *r, sim_err *err)
{
    cpu_state *st = vst;
    cpu_scratch scratch = {NULL, NULL, NULL, NULL};
    int outs[4], nout = cpu_outputs(st, outs), rc = 0;
    for (int i = 0; i < nout; i++) memset(st->buf[outs[i]], CALIB_POISON_BYTE, st->bytes[outs[i]]);
    cpu_exec(st);
    int broken = 0;
    for (int i = 0; i < CPU_BUFS; i++)
        if (st->buf[i] && !calib_canary_intact((char *)st->buf[i] + st->bytes[i], CALIB_CANARY_BYTES)) broken++;
    switch (st->op) {
    case CALIB_OP_GEMM: rc = cpu_check_gemm(st, &scratch, r, err); break;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: rc = cpu_check_grouped(st, &scratch, r, err); break;
    case CALIB_OP_ATTN_PREFILL: rc = cpu_check_prefill(st, &scratch, r, err); break;
    case CALIB_OP_ATTN_DECODE: rc = cpu_check_decode(st, &scratch, r, err); break;
    case CALIB_OP_LSE_MERGE: rc = cpu_check_lse_merge(st, &scratch, r, err); break;
    case CALIB_OP_SOFTMAX:
    case CALIB_OP_RMSNORM: rc = cpu_check_rowwise(st, &scratch, r, err); break;
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: rc = cpu_check_quant(st, &scratch, r, err); break;
    case CALIB_OP_COPY: calib_check_bytes(r, st->buf[1], st->buf[0], (size_t)st->s.bytes, "dst"); break;
    default: rc = sim_err_set(err, SIM_ENOTSUP, "no check for %s on the CPU", calib_op_name(st->op));
    }
    /* Out of scratch memory: no verdict, the canary count included. */
    if (rc != SIM_ENOMEM) r->canary_broken = broken;
    free(scratch.ref), free(scratch.got), free(scratch.tmp), free(scratch.tmp2);
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

static double cpu_peak(void *st, calib_dtype dtype)
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
