/* calib_op — see calib_op.h. */
#include "calib_op.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const calib_op_names[CALIB_OP_COUNT] = {
    "gemm", "grouped_contig", "grouped_masked", "attn_prefill", "attn_decode", "lse_merge",
    "softmax", "rmsnorm", "quant_fp8", "quant_mxfp8", "copy", "allreduce"};

static const char *const calib_field_names[CALIB_SHAPE_FIELDS] = {
    "m", "n", "k", "batch", "ctx", "heads", "kv_heads", "head_dim", "groups", "bytes", "ranks"};

static const size_t calib_field_offsets[CALIB_SHAPE_FIELDS] = {
    offsetof(calib_shape, m),     offsetof(calib_shape, n),        offsetof(calib_shape, k),
    offsetof(calib_shape, batch), offsetof(calib_shape, ctx),      offsetof(calib_shape, heads),
    offsetof(calib_shape, kv_heads), offsetof(calib_shape, head_dim), offsetof(calib_shape, groups),
    offsetof(calib_shape, bytes), offsetof(calib_shape, ranks)};

int64_t calib_shape_get(const calib_shape *s, int32_t field)
{
    if (field < 0 || field >= CALIB_SHAPE_FIELDS) return 0;
    int64_t v;
    memcpy(&v, (const char *)s + calib_field_offsets[field], sizeof v);
    return v;
}

void calib_shape_set(calib_shape *s, int32_t field, int64_t v)
{
    if (field >= 0 && field < CALIB_SHAPE_FIELDS) memcpy((char *)s + calib_field_offsets[field], &v, sizeof v);
}

const char *calib_shape_field_name(int32_t field)
{
    return field >= 0 && field < CALIB_SHAPE_FIELDS ? calib_field_names[field] : "?";
}

void calib_shape_format(const calib_shape *s, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < CALIB_SHAPE_FIELDS && used < len; i++) {
        int64_t v = calib_shape_get(s, i);
        if (!v) continue;
        int w = snprintf(buf + used, len - used, "%s%s=%lld", used ? " " : "", calib_field_names[i], (long long)v);
        if (w < 0) break;
        used += (size_t)w;
    }
}

const char *calib_op_name(calib_op op)
{
    return (int)op >= 0 && op < CALIB_OP_COUNT ? calib_op_names[op] : "?";
}

int calib_op_from_name(const char *name)
{
    for (int i = 0; i < CALIB_OP_COUNT; i++)
        if (strcmp(name, calib_op_names[i]) == 0) return i;
    return -1;
}

enum { F_M = 0, F_N = 1, F_K = 2, F_BATCH = 3, F_CTX = 4, F_BYTES = 9 };

int32_t calib_op_axes(calib_op op, int32_t axes[CALIB_MAX_AXES])
{
    switch (op) {
    case CALIB_OP_GEMM:
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED:
        axes[0] = F_M, axes[1] = F_N, axes[2] = F_K;
        return 3;
    case CALIB_OP_ATTN_PREFILL:
        axes[0] = F_BATCH, axes[1] = F_M, axes[2] = F_CTX;
        return 3;
    case CALIB_OP_ATTN_DECODE:
        axes[0] = F_BATCH, axes[1] = F_CTX;
        return 2;
    case CALIB_OP_LSE_MERGE:
        axes[0] = F_M;
        return 1;
    case CALIB_OP_SOFTMAX:
    case CALIB_OP_RMSNORM:
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8:
        axes[0] = F_M, axes[1] = F_N;
        return 2;
    case CALIB_OP_COPY:
    case CALIB_OP_ALLREDUCE:
        axes[0] = F_BYTES;
        return 1;
    default:
        return 0;
    }
}

int32_t calib_dtype_bytes(const char *dtype)
{
    if (strcmp(dtype, "fp8") == 0 || strcmp(dtype, "mxfp8") == 0) return 1;
    if (strcmp(dtype, "fp32") == 0) return 4;
    return 2;
}

double calib_op_flops(calib_op op, const calib_shape *s)
{
    double m = (double)s->m, n = (double)s->n, k = (double)s->k, d = (double)s->head_dim;
    switch (op) {
    case CALIB_OP_GEMM: return 2.0 * m * n * k;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: return 2.0 * (double)s->groups * m * n * k;
    case CALIB_OP_ATTN_PREFILL: /* QKᵀ and PV over the causal triangle past the cache */
        return 4.0 * d * (double)s->heads * (double)s->batch * (m * (double)s->ctx + m * (m + 1.0) / 2.0);
    case CALIB_OP_ATTN_DECODE: return 4.0 * d * (double)s->heads * (double)s->batch * (double)s->ctx;
    case CALIB_OP_LSE_MERGE: return 2.0 * (double)s->ranks * m * d;
    case CALIB_OP_SOFTMAX: return 5.0 * m * n;
    case CALIB_OP_RMSNORM: return 4.0 * m * n;
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: return 3.0 * m * n;
    default: return 0.0;
    }
}

double calib_op_bytes(calib_op op, const char *dtype, const calib_shape *s)
{
    double e = (double)calib_dtype_bytes(dtype), m = (double)s->m, n = (double)s->n, k = (double)s->k;
    double d = (double)s->head_dim, b = (double)s->batch;
    switch (op) {
    case CALIB_OP_GEMM: return (m * k + k * n) * e + m * n * 2.0; /* output bf16 */
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: return (double)s->groups * ((m * k + k * n) * e + m * n * e);
    case CALIB_OP_ATTN_PREFILL:
        return b * (2.0 * m * (double)s->heads * d + 2.0 * ((double)s->ctx + m) * (double)s->kv_heads * d) * e;
    case CALIB_OP_ATTN_DECODE:
        return b * (2.0 * (double)s->heads * d + 2.0 * (double)s->ctx * (double)s->kv_heads * d) * e;
    case CALIB_OP_LSE_MERGE: return ((double)s->ranks + 1.0) * m * (d + 1.0) * 4.0;
    case CALIB_OP_SOFTMAX: return 2.0 * m * n * 4.0;
    case CALIB_OP_RMSNORM: return 2.0 * m * n * e + n * 4.0;
    case CALIB_OP_QUANT_FP8: return m * n * (e + 1.0) + m * n / 128.0 * 4.0;
    case CALIB_OP_QUANT_MXFP8: return m * n * (e + 1.0) + m * n / 32.0;
    case CALIB_OP_COPY: return 2.0 * (double)s->bytes;
    case CALIB_OP_ALLREDUCE: /* bus bytes: 2(r−1)/r of the buffer per rank (ring) */
        return s->ranks > 1 ? 2.0 * ((double)s->ranks - 1.0) / (double)s->ranks * (double)s->bytes
                            : (double)s->bytes;
    default: return 0.0;
    }
}
