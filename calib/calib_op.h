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
 * Ops only read from serving engines' measured tables (calib_ingest.h;
 * the harness does not time them, CALIB_OP_HARNESS_COUNT):
 *   allgather, reduce_scatter, alltoall   bytes per rank, ranks
 *   moe             whole MoE block: m tokens, k hidden, n intermediate,
 *                   groups experts, batch top-k, ranks EP size, heads TP size
 *   mla_prefill     batch, m new tokens, heads, ranks TP size (kernel only)
 *   mla_decode      batch, ctx (tokens per request), heads, ranks TP size
 *   mla_module_prefill / mla_module_decode, dsa_prefill / dsa_decode
 *                   the whole attention module of the named model (DeepSeek
 *                   V3 MLA, V3.2 sparse attention), same fields
 *   mla_bmm_pre, mla_bmm_post   m tokens, heads (absorbed MLA batched GEMMs)
 *   gdn_prefill, gdn_decode     one gated-delta-net kernel: batch, m tokens,
 *                   ctx sequence length, n d_model, k d_conv, heads v heads,
 *                   kv_heads k heads, head_dim v head dim, groups k head dim
 *   quant_scale     computing fp8 scales of an m×n matrix
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
    CALIB_OP_HARNESS_COUNT = 12, /* ops below this the harness measures */
    CALIB_OP_ALLGATHER = 12,
    CALIB_OP_REDUCE_SCATTER = 13,
    CALIB_OP_ALLTOALL = 14,
    CALIB_OP_MOE = 15,
    CALIB_OP_MLA_PREFILL = 16,
    CALIB_OP_MLA_DECODE = 17,
    CALIB_OP_MLA_MODULE_PREFILL = 18,
    CALIB_OP_MLA_MODULE_DECODE = 19,
    CALIB_OP_DSA_PREFILL = 20,
    CALIB_OP_DSA_DECODE = 21,
    CALIB_OP_MLA_BMM_PRE = 22,
    CALIB_OP_MLA_BMM_POST = 23,
    CALIB_OP_GDN_PREFILL = 24,
    CALIB_OP_GDN_DECODE = 25,
    CALIB_OP_QUANT_SCALE = 26,
    CALIB_OP_COUNT = 27
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
/* Orders shapes field by field (m first): < 0, 0, > 0. */
int calib_shape_cmp(const calib_shape *a, const calib_shape *b);
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
