/* calib_op — the operations calibration measures, their shape parameters,
 * and the work model (FLOPs, bytes moved) used for TFLOP/s, GB/s and the
 * fraction of peak. A shape is a plain struct of counts; fields an op does
 * not use are 0 (so they key the perf-db uniquely). Per op:
 *   gemm            m, n, k
 *   grouped_contig  groups (experts), m (tokens per expert), n, k
 *   grouped_masked  same, m = per-expert capacity (all full)
 *   attn_prefill    batch, m (new tokens per sequence), ctx (cached tokens),
 *                   heads, kv_heads, head_dim
 *   attn_decode     batch, ctx (tokens per request), heads, kv_heads, head_dim
 *   lse_merge       m (rows = batch·heads), head_dim, ranks (partials)
 *   softmax, rmsnorm, quant_fp8, quant_mxfp8   m rows, n columns
 *   copy            bytes (device-to-device, read + write counted)
 *   allreduce       bytes per rank, ranks
 * Units: FLOPs, bytes, seconds. Interpolation axes (log space) and the
 * fields that must match exactly are listed per op for calib_db lookups. */
#ifndef CALIB_OP_H
#define CALIB_OP_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    CALIB_OP_GEMM = 0,
    CALIB_OP_GROUPED_CONTIG = 1,
    CALIB_OP_GROUPED_MASKED = 2,
    CALIB_OP_ATTN_PREFILL = 3,
    CALIB_OP_ATTN_DECODE = 4,
    CALIB_OP_LSE_MERGE = 5,
    CALIB_OP_SOFTMAX = 6,
    CALIB_OP_RMSNORM = 7,
    CALIB_OP_QUANT_FP8 = 8,
    CALIB_OP_QUANT_MXFP8 = 9,
    CALIB_OP_COPY = 10,
    CALIB_OP_ALLREDUCE = 11,
    CALIB_OP_COUNT = 12
} calib_op;

typedef struct {
    int64_t m, n, k, batch, ctx, heads, kv_heads, head_dim, groups, bytes, ranks;
} calib_shape;

#define CALIB_SHAPE_FIELDS 11
#define CALIB_MAX_AXES 3

/* Field i of a shape (0..10 in declaration order) and its column name. */
int64_t calib_shape_get(const calib_shape *s, int32_t field);
void calib_shape_set(calib_shape *s, int32_t field, int64_t v);
const char *calib_shape_field_name(int32_t field);
/* "m=64 n=4096 k=4096" (non-zero fields only). */
void calib_shape_format(const calib_shape *s, char *buf, size_t len);

const char *calib_op_name(calib_op op);
/* Returns the op for a name, or -1. */
int calib_op_from_name(const char *name);

/* Interpolation axes of an op: up to CALIB_MAX_AXES field indices. */
int32_t calib_op_axes(calib_op op, int32_t axes[CALIB_MAX_AXES]);

/* FLOPs and bytes of one execution; elem_bytes is the operand element size
 * of the dtype ("fp8" 1, "bf16" 2, "fp32" 4). */
double calib_op_flops(calib_op op, const calib_shape *s);
double calib_op_bytes(calib_op op, const char *dtype, const calib_shape *s);
int32_t calib_dtype_bytes(const char *dtype);

#endif
