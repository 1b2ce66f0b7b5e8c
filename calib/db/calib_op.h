/* calib_op — the operations calibration measures, their shape parameters,
 * and the work model (FLOPs, bytes moved) used for TFLOP/s, GB/s and the
 * fraction of peak. A shape is a plain struct of counts; fields an op does
 * not use are 0 (so they key the perf-db uniquely). Per op:
 *   gemm            m, n, k
 *   grouped_contig  groups (experts), m (mean tokens per expert: the groups
 *                   are unequal, calib_group_rows), n, k, skew_milli (the
 *                   routing skew: the Zipf exponent s of the experts' token
 *                   shares in thousandths, 1000 = s 1; 0 = the balanced
 *                   routing, CALIB_SKEW_MILLI_MAX at most)
 *   grouped_masked  same fields, the same routing: at skew 0 every expert
 *                   full at m rows (its capacity); skewed, the experts hold
 *                   the contiguous layout's Zipf counts in slots of the
 *                   hottest expert's count (short and empty slots skipped)
 *   attn_prefill    batch, m (new tokens per sequence), ctx (cached tokens),
 *                   heads, kv_heads, head_dim
 *   attn_decode     batch, ctx (tokens per request), heads, kv_heads, head_dim
 *   lse_merge       m (rows = batch·heads), head_dim, ranks (partials)
 *   softmax, rmsnorm, quant_fp8, quant_mxfp8   m rows, n columns
 *   copy            bytes (device-to-device, read + write counted)
 *   allreduce       bytes per rank, ranks
 *   allgather, reduce_scatter, alltoall   bytes per rank (each rank's
 *                   whole buffer: all-gather's output, reduce-scatter's
 *                   input, all-to-all's send = receive buffer), ranks
 * Ops only read from serving engines' measured tables (calib_ingest.h;
 * the harness does not time them, CALIB_OP_HARNESS_COUNT):
 *   moe             whole MoE block: m tokens, k hidden, n intermediate,
 *                   groups experts, batch top-k, ranks EP size, heads TP size
 *   mla_prefill     batch, m new tokens, heads, ranks TP size (kernel only)
 *   mla_decode      batch, ctx (tokens per request), heads, ranks TP size
 *   mla_module_prefill / mla_module_decode, dsa_prefill / dsa_decode
 *                   the whole attention module of the named model (DeepSeek
 *                   V3 MLA, V3.2 sparse attention), same fields
 *   mla_bmm_pre, mla_bmm_post   m tokens, heads (absorbed MLA batched GEMMs)
 *   gdn_prefill, gdn_decode     the gated-delta-net delta-rule kernel
 *                   (chunked / recurrent): batch, m tokens, ctx sequence
 *                   length, n d_model, k d_conv, heads v heads, kv_heads k
 *                   heads, head_dim v head dim, groups k head dim
 *   gdn_conv_prefill, gdn_conv_decode   its causal conv1d kernel, same fields
 *   quant_scale     computing fp8 scales of an m×n matrix
 * Units: FLOPs, bytes, seconds. Interpolation axes (log space) and the
 * fields that must match exactly are listed per op for calib_db lookups. */
#ifndef CALIB_OP_H
#define CALIB_OP_H

#include "calib_dtype.h"

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
    CALIB_OP_ALLGATHER = 12,
    CALIB_OP_REDUCE_SCATTER = 13,
    CALIB_OP_ALLTOALL = 14,
    CALIB_OP_HARNESS_COUNT = 15, /* ops below this the harness measures */
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
    CALIB_OP_GDN_CONV_PREFILL = 27,
    CALIB_OP_GDN_CONV_DECODE = 28,
    CALIB_OP_COUNT = 29
} calib_op;

typedef struct {
    int64_t m, n, k, batch, ctx, heads, kv_heads, head_dim, groups, bytes, ranks;
    int64_t skew_milli; /* grouped GEMMs' routing skew, thousandths of the Zipf exponent */
} calib_shape;

#define CALIB_SHAPE_FIELDS 12
#define CALIB_SHAPE_SKEW 11 /* the field index of skew_milli */
#define CALIB_MAX_AXES 3
/* The largest routing skew a shape may hold: s = 4 (the hottest expert
 * then takes over 90 % of the tokens of any expert count). */
#define CALIB_SKEW_MILLI_MAX 4000

/* Field i of a shape (0..11 in declaration order) and its column name. */
int64_t calib_shape_get(const calib_shape *s, int32_t field);
void calib_shape_set(calib_shape *s, int32_t field, int64_t v);
const char *calib_shape_field_name(int32_t field);
/* Orders shapes field by field (m first): < 0, 0, > 0. */
int calib_shape_cmp(const calib_shape *a, const calib_shape *b);
/* "m=64 n=4096 k=4096" (non-zero fields only). */
void calib_shape_format(const calib_shape *s, char *buf, size_t len);
/* 0 when the shape's routing skew suits op (0, or for the grouped GEMMs at
 * most CALIB_SKEW_MILLI_MAX); −1 with the field, the value and what was
 * expected in why. */
int calib_shape_skew_check(calib_op op, const calib_shape *s, char *why, size_t len);

const char *calib_op_name(calib_op op);
/* Returns the op for a name, or -1. */
int calib_op_from_name(const char *name);

/* Interpolation axes of an op: up to CALIB_MAX_AXES field indices. */
int32_t calib_op_axes(calib_op op, int32_t axes[CALIB_MAX_AXES]);

/* FLOPs and bytes of one execution. Bytes count a stored operand (weights,
 * KV) at calib_dtype_bytes and a GEMM's activations at
 * calib_dtype_act_bytes of the dtype (calib_dtype.h). A skewed grouped
 * GEMM moves the same groups·m rows (the FLOPs of the balanced one) but
 * reads only the weights of the experts that got rows
 * (calib_group_touched). */
double calib_op_flops(calib_op op, const calib_shape *s);
double calib_op_bytes(calib_op op, calib_dtype dtype, const calib_shape *s);
/* The same with the two sizes given (calib_dtype_bytes and
 * calib_dtype_act_bytes of the dtype). */
double calib_op_bytes_e(calib_op op, double elem_bytes, double act_bytes, const calib_shape *s);
/* Seconds the op would take at the peaks (compute or bandwidth, whichever
 * binds); 0 when the peak that binds is unknown (peak 0). */
double calib_op_ideal_s(calib_op op, calib_dtype dtype, const calib_shape *s, double peak_flops, double peak_bw);
/* Work of checking one point against the CPU reference, in reference
 * operations (FLOPs, or bytes for data movement). */
double calib_op_check_cost(calib_op op, const calib_shape *s);

/* Data layouts a point is prepared with (the backends' prepare flags).
 * TIMED is what the grids time: at skew 0 contiguous groups unequal (so
 * the two MoE layouts do not time the same thing) and masked groups all at
 * their cap; at a routing skew (skew_milli > 0) the Zipf counts of
 * calib_group_rows in both. The others are check-only edges of the
 * balanced routing (a skewed shape ignores them). */
enum {
    CALIB_LAYOUT_TIMED = 0,
    CALIB_LAYOUT_EMPTY_GROUP = 1u << 0,    /* grouped_contig: expert 1 gets no rows */
    CALIB_LAYOUT_MASKED_PARTIAL = 1u << 1, /* grouped_masked: counts cap, cap−1, 0, cap/3, 1, … */
    CALIB_LAYOUT_NEG_INF_LSE = 1u << 2     /* lse_merge: −inf partials, row 0 all −inf */
};

/* Group rows of a grouped GEMM point s (groups E, m, skew_milli):
 * contiguous → offsets[E+1] (rows of expert e are offsets[e] …
 * offsets[e+1]−1, offsets[E] = E·m); masked → counts[E]. Skew 0: contiguous
 * sizes in the repeating pattern 1.75, 0.25, 1.5, 0.5 × m, masked m each.
 * Skewed (s = skew_milli / 1000): Zipf's law over the experts, expert e of
 * rank (e + E/2) mod E (the hottest mid-list, its rows off any tile
 * boundary) taking weight w_e = (rank + 1)^−s; offsets[e] =
 * floor(E·m · (w_0 + … + w_{e−1}) / (w_0 + … + w_{E−1}) + 1/2) for
 * 0 < e < E (cumulative rounding: the counts sum to E·m exactly, each
 * within one row of its share), and the masked counts are the same
 * differences, each under the masked slot's capacity (the largest count).
 * Deterministic in (E, m, skew_milli): no random state; pow() of glibc is
 * correctly rounded, so the counts are the same on every host. Returns the
 * largest group (what sizes the kernel's grid, and the masked slot). */
int64_t calib_group_rows(calib_op op, uint32_t layout, const calib_shape *s, int64_t *out);
/* Experts that get at least one row at s (skewed routing leaves cold
 * experts empty when E·m is small; E at skew 0); no allocation. */
int64_t calib_group_touched(const calib_shape *s);
/* True when row r of partial p is a −inf partial under
 * CALIB_LAYOUT_NEG_INF_LSE: row 0 in every partial (an all-empty row), in
 * the other rows every third partial but never partial r mod P. */
int calib_lse_neg_inf(int64_t p, int64_t r, int64_t P);

/* Split-KV decode: the number of splits the GPU backend uses for a shape on
 * a GPU with `sms` SMs (enough blocks to fill the SMs twice, at most one per
 * page, at most 64), and whether some split is then left without a page
 * (its partial is −inf; the merge must ignore it). */
int32_t calib_decode_splits(int32_t sms, const calib_shape *s, int32_t page);
int calib_decode_has_empty_split(const calib_shape *s, int32_t page, int32_t splits);

/* Dense peaks of a GPU by device name ("NVIDIA H200", "NVIDIA H100 80GB
 * HBM3", …; figures of gpu-specs.md): FLOP/s at the dtype's peak
 * (calib_dtype_peak: bf16; fp32 half the bf16 tensor rate, a bound; fp8;
 * the FP4 peak) and HBM bytes/s. 0 when the device or the dtype's peak is
 * unknown (no fraction of peak is stored). */
double calib_peak_flops(const char *device, calib_dtype dtype);
double calib_peak_bw(const char *device);

#endif
