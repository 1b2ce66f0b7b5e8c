/* calib_op — see calib_op.h. */
#include "calib_op.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const calib_op_names[CALIB_OP_COUNT] = {
    "gemm", "grouped_contig", "grouped_masked", "attn_prefill", "attn_decode", "lse_merge",
    "softmax", "rmsnorm", "quant_fp8", "quant_mxfp8", "copy", "allreduce",
    "allgather", "reduce_scatter", "alltoall", "moe", "mla_prefill", "mla_decode", "mla_module_prefill",
    "mla_module_decode", "dsa_prefill", "dsa_decode", "mla_bmm_pre", "mla_bmm_post", "gdn_prefill", "gdn_decode",
    "quant_scale", "gdn_conv_prefill", "gdn_conv_decode"};

static const char *const calib_field_names[CALIB_SHAPE_FIELDS] = {
    "m", "n", "k", "batch", "ctx", "heads", "kv_heads", "head_dim", "groups", "bytes", "ranks", "skew_milli"};

static const size_t calib_field_offsets[CALIB_SHAPE_FIELDS] = {
    offsetof(calib_shape, m),     offsetof(calib_shape, n),        offsetof(calib_shape, k),
    offsetof(calib_shape, batch), offsetof(calib_shape, ctx),      offsetof(calib_shape, heads),
    offsetof(calib_shape, kv_heads), offsetof(calib_shape, head_dim), offsetof(calib_shape, groups),
    offsetof(calib_shape, bytes), offsetof(calib_shape, ranks),    offsetof(calib_shape, skew_milli)};

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

int calib_shape_cmp(const calib_shape *a, const calib_shape *b)
{
    for (int32_t f = 0; f < CALIB_SHAPE_FIELDS; f++) {
        int64_t x = calib_shape_get(a, f), y = calib_shape_get(b, f);
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
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

int calib_shape_skew_check(calib_op op, const calib_shape *s, char *why, size_t len)
{
    const int grouped = op == CALIB_OP_GROUPED_CONTIG || op == CALIB_OP_GROUPED_MASKED;
    if (s->skew_milli == 0) return 0;
    if (!grouped) {
        snprintf(why, len,
                 "skew_milli is %lld on op %s (expected 0: only grouped_contig and grouped_masked rows have a "
                 "routing skew)",
                 (long long)s->skew_milli, calib_op_name(op));
        return -1;
    }
    if (s->skew_milli < 0 || s->skew_milli > CALIB_SKEW_MILLI_MAX) {
        snprintf(why, len, "skew_milli is %lld (expected the Zipf exponent in thousandths, 0 to %d: 1000 = s 1)",
                 (long long)s->skew_milli, CALIB_SKEW_MILLI_MAX);
        return -1;
    }
    return 0;
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

enum { F_M = 0, F_N = 1, F_K = 2, F_BATCH = 3, F_CTX = 4, F_HEADS = 5, F_BYTES = 9 };

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
    case CALIB_OP_ALLGATHER:
    case CALIB_OP_REDUCE_SCATTER:
    case CALIB_OP_ALLTOALL:
        axes[0] = F_BYTES;
        return 1;
    case CALIB_OP_MOE:
    case CALIB_OP_QUANT_SCALE:
        axes[0] = F_M, axes[1] = F_N;
        return 2;
    case CALIB_OP_MLA_PREFILL:
    case CALIB_OP_MLA_MODULE_PREFILL:
    case CALIB_OP_DSA_PREFILL:
    case CALIB_OP_GDN_PREFILL:
    case CALIB_OP_GDN_CONV_PREFILL:
        axes[0] = F_BATCH, axes[1] = F_M;
        return 2;
    case CALIB_OP_MLA_DECODE:
    case CALIB_OP_MLA_MODULE_DECODE:
    case CALIB_OP_DSA_DECODE:
    case CALIB_OP_GDN_DECODE:
    case CALIB_OP_GDN_CONV_DECODE:
        axes[0] = F_BATCH, axes[1] = F_CTX;
        return 2;
    case CALIB_OP_MLA_BMM_PRE:
    case CALIB_OP_MLA_BMM_POST:
        axes[0] = F_M, axes[1] = F_HEADS;
        return 2;
    default:
        return 0;
    }
}

/* Heads on one rank of a TP group (ranks 0 or 1: all). */
static double heads_per_rank(const calib_shape *s)
{
    return (double)s->heads / (double)(s->ranks > 1 ? s->ranks : 1);
}

/* DeepSeek-V3 MLA dimensions (the models these tables measure): latent 512,
 * rope 64, q/k head 192 (128 nope + 64 rope), v head 128. */
#define MLA_LATENT 512.0
#define MLA_ROPE 64.0
#define MLA_QK 192.0
#define MLA_V 128.0

/* Channels of a gated-delta-net causal conv: q and k (k heads × k head
 * dim, in groups) and v (v heads × v head dim, in head_dim). */
static double gdn_conv_channels(const calib_shape *s)
{
    return 2.0 * (double)s->kv_heads * (double)s->groups + (double)s->heads * (double)s->head_dim;
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
    case CALIB_OP_QUANT_SCALE: return m * n;
    case CALIB_OP_MOE: /* gate, up and down GEMMs of each routed token, this rank's share */
        return 6.0 * m * (double)(s->batch > 0 ? s->batch : 1) * k * n /
               ((double)(s->ranks > 1 ? s->ranks : 1) * (double)(s->heads > 1 ? s->heads : 1));
    case CALIB_OP_MLA_PREFILL:
    case CALIB_OP_MLA_MODULE_PREFILL:
    case CALIB_OP_DSA_PREFILL:
        return 2.0 * (MLA_QK + MLA_V) * heads_per_rank(s) * (double)s->batch * (m * (m + 1.0) / 2.0 + m * (double)s->ctx);
    case CALIB_OP_MLA_DECODE:
    case CALIB_OP_MLA_MODULE_DECODE:
    case CALIB_OP_DSA_DECODE:
        return 2.0 * (2.0 * MLA_LATENT + MLA_ROPE) * heads_per_rank(s) * (double)s->batch * (double)s->ctx;
    case CALIB_OP_MLA_BMM_PRE:
    case CALIB_OP_MLA_BMM_POST: return 2.0 * m * (double)s->heads * MLA_LATENT * MLA_V;
    case CALIB_OP_GDN_PREFILL:
    case CALIB_OP_GDN_DECODE: /* state update per token and head: k·v */
        return 4.0 * (m > 0 ? m : (double)s->batch) * (double)s->heads * (double)s->head_dim *
               (double)(s->groups > 0 ? s->groups : s->head_dim);
    case CALIB_OP_GDN_CONV_PREFILL:
    case CALIB_OP_GDN_CONV_DECODE: /* a d_conv-tap filter per token and channel */
        return 2.0 * (m > 0 ? m : (double)s->batch) * gdn_conv_channels(s) * (double)(s->k > 0 ? s->k : 1);
    default: return 0.0;
    }
}

double calib_op_bytes(calib_op op, calib_dtype dtype, const calib_shape *s)
{
    return calib_op_bytes_e(op, calib_dtype_bytes(dtype), calib_dtype_act_bytes(dtype), s);
}

double calib_op_bytes_e(calib_op op, double elem_bytes, double act_bytes, const calib_shape *s)
{
    /* e: a stored operand's (weights, KV) bytes per value; a: a GEMM's
     * activations' (the same but for the 4-bit weight formats). */
    double e = elem_bytes, a = act_bytes, m = (double)s->m, n = (double)s->n, k = (double)s->k;
    double d = (double)s->head_dim, b = (double)s->batch;
    switch (op) {
    case CALIB_OP_GEMM: return m * k * a + k * n * e + m * n * 2.0; /* output bf16 */
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED:
        if (s->skew_milli > 0) /* the same rows; the weights of the experts that got some */
            return (double)s->groups * (m * k * a + m * n * a) + (double)calib_group_touched(s) * k * n * e;
        return (double)s->groups * (m * k * a + k * n * e + m * n * a);
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
    case CALIB_OP_ALLGATHER:
    case CALIB_OP_REDUCE_SCATTER:
    case CALIB_OP_ALLTOALL: /* bus bytes: (r−1)/r of the buffer */
        return s->ranks > 1 ? ((double)s->ranks - 1.0) / (double)s->ranks * (double)s->bytes : (double)s->bytes;
    case CALIB_OP_QUANT_SCALE: return m * n * e + m * 4.0;
    case CALIB_OP_MOE: { /* the weights of the experts touched on this rank, plus activations */
        double experts = (double)(s->groups > 0 ? s->groups : 1), ep = (double)(s->ranks > 1 ? s->ranks : 1);
        double routed = m * (double)(s->batch > 0 ? s->batch : 1);
        double touched = (routed < experts ? routed : experts) / ep;
        return touched * 3.0 * k * n / (double)(s->heads > 1 ? s->heads : 1) * e + 4.0 * m * k * 2.0;
    }
    case CALIB_OP_MLA_PREFILL:
    case CALIB_OP_MLA_MODULE_PREFILL:
    case CALIB_OP_DSA_PREFILL:
        return b * (m + (double)s->ctx) * heads_per_rank(s) * (MLA_QK + MLA_QK + MLA_V + MLA_V) * e;
    case CALIB_OP_MLA_DECODE:
    case CALIB_OP_MLA_MODULE_DECODE:
    case CALIB_OP_DSA_DECODE: return b * ((double)s->ctx * (MLA_LATENT + MLA_ROPE) + heads_per_rank(s) * 2.0 * MLA_LATENT) * e;
    case CALIB_OP_MLA_BMM_PRE:
    case CALIB_OP_MLA_BMM_POST:
        return (double)s->heads * MLA_LATENT * MLA_V * e + m * (double)s->heads * (MLA_LATENT + MLA_V) * a;
    case CALIB_OP_GDN_PREFILL:
    case CALIB_OP_GDN_DECODE: {
        double tok = m > 0 ? m : b, hk = (double)(s->groups > 0 ? s->groups : s->head_dim);
        return tok * n * 2.0 * e + (b > 0 ? b : 1) * (double)s->heads * hk * d * 4.0 * 2.0;
    }
    case CALIB_OP_GDN_CONV_PREFILL:
    case CALIB_OP_GDN_CONV_DECODE: { /* channels in and out per token, each sequence's conv state read and written */
        double tok = m > 0 ? m : b, ch = gdn_conv_channels(s), taps = (double)(s->k > 1 ? s->k - 1 : 0);
        return tok * ch * 2.0 * e + (b > 0 ? b : 1) * ch * taps * 2.0 * e;
    }
    default: return 0.0;
    }
}

double calib_op_ideal_s(calib_op op, calib_dtype dtype, const calib_shape *s, double peak_flops, double peak_bw)
{
    double fl = calib_op_flops(op, s), by = calib_op_bytes(op, dtype, s);
    double tc = fl > 0 ? (peak_flops > 0 ? fl / peak_flops : -1.0) : 0.0;
    double tb = by > 0 ? (peak_bw > 0 ? by / peak_bw : -1.0) : 0.0;
    if (tc < 0) return 0.0; /* compute work at an unknown compute peak */
    if (tb < 0) tb = 0.0;   /* a compute-bound estimate stays a bound */
    return tc > tb ? tc : tb;
}

double calib_op_check_cost(calib_op op, const calib_shape *s)
{
    double fl = calib_op_flops(op, s); /* the references do the same arithmetic, unblocked */
    return fl > 0 ? fl : calib_op_bytes(op, CALIB_DTYPE_BF16, s);
}

/* The skewed routing's rows expert by expert (see calib_op.h): Zipf
 * weights (rank + 1)^−s over ranks rotated by E/2, cumulative rounding of
 * the E·m rows. */
typedef struct {
    int64_t E, total, e, prev;
    double s, sum, cum;
} zipf_walk;

static double zipf_weight(const zipf_walk *z, int64_t e)
{
    return pow((double)((e + z->E / 2) % z->E + 1), -z->s);
}

static void zipf_start(zipf_walk *z, const calib_shape *s)
{
    z->E = s->groups, z->total = s->groups * s->m, z->e = 0, z->prev = 0;
    z->s = (double)s->skew_milli / 1000.0, z->sum = 0.0, z->cum = 0.0;
    for (int64_t e = 0; e < z->E; e++) z->sum += zipf_weight(z, e);
}

/* Rows of the next expert. */
static int64_t zipf_next(zipf_walk *z)
{
    z->cum += zipf_weight(z, z->e);
    z->e++;
    int64_t o = z->e == z->E ? z->total : (int64_t)floor(z->cum / z->sum * (double)z->total + 0.5);
    if (o > z->total) o = z->total;
    if (o < z->prev) o = z->prev;
    int64_t c = o - z->prev;
    z->prev = o;
    return c;
}

int64_t calib_group_touched(const calib_shape *s)
{
    if (s->skew_milli <= 0 || s->groups < 1) return s->groups;
    zipf_walk z;
    zipf_start(&z, s);
    int64_t touched = 0;
    for (int64_t e = 0; e < s->groups; e++) touched += zipf_next(&z) > 0;
    return touched;
}

/* The skewed routing: contiguous offsets, or masked counts (the same
 * rows per expert). */
static int64_t group_rows_zipf(calib_op op, const calib_shape *s, int64_t *out)
{
    zipf_walk z;
    zipf_start(&z, s);
    int64_t most = 0;
    if (op == CALIB_OP_GROUPED_CONTIG) out[0] = 0;
    for (int64_t e = 0; e < s->groups; e++) {
        int64_t c = zipf_next(&z);
        if (op == CALIB_OP_GROUPED_CONTIG) out[e + 1] = z.prev;
        else out[e] = c;
        if (c > most) most = c;
    }
    return most;
}

int64_t calib_group_rows(calib_op op, uint32_t layout, const calib_shape *s, int64_t *out)
{
    const int64_t E = s->groups, m = s->m;
    int64_t most = 0;
    if (s->skew_milli > 0 && E >= 1) return group_rows_zipf(op, s, out);
    if (op == CALIB_OP_GROUPED_CONTIG) {
        static const double w[4] = {1.75, 0.25, 1.5, 0.5};
        double cum = 0.0;
        out[0] = 0;
        for (int64_t e = 1; e <= E; e++) {
            cum += w[(e - 1) % 4];
            int64_t o = e == E ? E * m : (int64_t)(cum * (double)m + 0.5);
            if (o > E * m) o = E * m;
            if (o < out[e - 1]) o = out[e - 1];
            out[e] = o;
        }
        if ((layout & CALIB_LAYOUT_EMPTY_GROUP) && E >= 2) out[1] = out[2]; /* expert 0 takes expert 1's rows */
        for (int64_t e = 0; e < E; e++)
            if (out[e + 1] - out[e] > most) most = out[e + 1] - out[e];
        return most;
    }
    for (int64_t e = 0; e < E; e++) {
        int64_t c = m;
        if (layout & CALIB_LAYOUT_MASKED_PARTIAL) {
            static const int32_t kind[5] = {0, 1, 2, 3, 4};
            switch (kind[e % 5]) {
            case 0: c = m; break;
            case 1: c = m - 1; break;
            case 2: c = 0; break;
            case 3: c = m / 3; break;
            default: c = 1; break;
            }
        }
        out[e] = c;
        if (c > most) most = c;
    }
    return most;
}

int calib_lse_neg_inf(int64_t p, int64_t r, int64_t P)
{
    if (r == 0) return 1;
    return (p + r) % 3 == 0 && p != r % P; /* partial r mod P stays finite */
}

int32_t calib_decode_splits(int32_t sms, const calib_shape *s, int32_t page)
{
    int64_t blocks = s->batch * s->kv_heads, pages = (s->ctx + page - 1) / page;
    int64_t sp = blocks > 0 ? (2 * (int64_t)sms + blocks - 1) / blocks : 1;
    if (sp > pages) sp = pages;
    if (sp > 64) sp = 64;
    return (int32_t)(sp < 1 ? 1 : sp);
}

int calib_decode_has_empty_split(const calib_shape *s, int32_t page, int32_t splits)
{
    int64_t pages = (s->ctx + page - 1) / page;
    int64_t pps = (pages + splits - 1) / splits;
    if (pps < 1) pps = 1;
    return (int64_t)splits * pps - pages >= pps; /* the last split starts past the end */
}

/* Dense peaks and HBM bandwidth from gpu-specs.md, by a substring of the
 * device name (the first match wins: GB200 before B200); fp4 0 before
 * Blackwell (B300: the low end of its 13,000–15,000 TFLOP/s). */
static const struct {
    const char *key;
    double bf16, fp8, fp4, bw;
} calib_peaks[] = {{"A100", 312e12, 0, 0, 2.04e12},          {"H100", 989.4e12, 1979e12, 0, 3.35e12},
                   {"H200", 989.4e12, 1979e12, 0, 4.8e12},   {"GB200", 2500e12, 5000e12, 10000e12, 8e12},
                   {"B200", 2250e12, 4500e12, 9000e12, 8e12}, {"B300", 2250e12, 4500e12, 13000e12, 8e12}};

static int calib_peak_index(const char *device)
{
    for (size_t i = 0; device && i < sizeof calib_peaks / sizeof calib_peaks[0]; i++)
        if (strstr(device, calib_peaks[i].key)) return (int)i;
    return -1;
}

double calib_peak_flops(const char *device, calib_dtype dtype)
{
    int i = calib_peak_index(device);
    if (i < 0) return 0.0;
    switch (calib_dtype_peak(dtype)) {
    case CALIB_PEAK_BF16: return calib_peaks[i].bf16;
    case CALIB_PEAK_FP32: return calib_peaks[i].bf16 / 2.0; /* tf32-class: only a bound */
    case CALIB_PEAK_FP8: return calib_peaks[i].fp8;
    case CALIB_PEAK_FP4: return calib_peaks[i].fp4;
    default: return 0.0;
    }
}

double calib_peak_bw(const char *device)
{
    int i = calib_peak_index(device);
    return i < 0 ? 0.0 : calib_peaks[i].bw;
}
