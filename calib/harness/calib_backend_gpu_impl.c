/* calib_backend_gpu_impl — the GPU backend, built only into the plugin
 * libservesim_gpu.so (kernels/cuda/CMakeLists.txt, -DSERVESIM_CUDA=ON) that
 * calib_backend_gpu.c loads with dlopen, so the servesim binary itself links
 * no CUDA library. It times the bundled CUDA kernels and the library
 * references (cuBLAS GEMM, NCCL all-reduce, device copy) with CUDA events,
 * one event pair per execution, rotating among enough input sets to exceed
 * twice the L2 (so inputs come from HBM as in serving). Its check()
 * downloads the inputs of the prepared point and compares the GPU output
 * with the CPU reference on the same (bf16/fp8-rounded) values, with
 * tolerances set by the output dtype. Peaks come from a small table keyed by
 * the device name (figures of gpu-specs.md); unknown devices store no
 * fraction of peak. The one exported symbol is calib_gpu_plugin_create. */
#include "calib_backend.h"

#include <stdio.h>
#include <string.h>

#define CALIB_NO_GPU_HINT "use --backend cpu to exercise the harness on the CPU references"

#include "calib_nvml.h"

#include "kern_attn_ref.h"
#include "kern_gemm_ref.h"
#include "kern_gpu.h"
#include "kern_grouped_plan.h"
#include "kern_num.h"
#include "kern_plan.h"
#include "kern_quant_ref.h"
#include "kern_softmax_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define GPU_IN 4        /* input buffers of a point */
#define GPU_OUT 4       /* output buffers */
#define GPU_META 2      /* metadata buffers (group offsets, decode lengths and block table): not rotated */
#define GPU_PAGE 16
/* A timed sample spans back-to-back launches adding up to about this long,
 * captured into one CUDA graph where the launches allow it: one launch
 * between two events carries the events' and the host's few-µs floor
 * (6.7 µs for a 64 KB copy on an H200; 4.3 µs with eager back-to-back
 * launches, host-bound), which serving engines, replaying CUDA graphs, do
 * not pay per kernel. Launch j of a sample uses buffer set j (inputs and
 * outputs), and the L2 is flushed before every sample (outside the timed
 * events), so every launch reads and writes memory the L2 does not hold:
 * the point is measured cold, as the docs say. Where the sets do not fit
 * in device memory the launches reuse sets and the point is logged warm. */
#define GPU_SAMPLE_S 200e-6
#define GPU_MAX_INNER 64
#define GPU_SET_BUDGET (4ull << 30) /* device bytes for the rotating sets of one point */

typedef struct {
    size_t bytes;
    int kind; /* 0 f32, 1 bf16, 2 e4m3 random fill; 3 leave (outputs); 4 E8M0 scales */
    float amp;
    void *set[GPU_MAX_INNER]; /* each bytes + CALIB_CANARY_BYTES */
} gpu_buf;

typedef struct {
    kern_gpu_info info;
    kern_gpu_timer *timer;
    kern_gpu_lib *lib;
    calib_nvml *nvml; /* NULL when NVML is not available: clocks unknown, nothing dropped */
    void *flush;      /* 2 × L2 of scratch, written before every sample */
    size_t flush_bytes;
    int32_t ndev, fp8_ok; /* fp8 tensor cores (cc ≥ 8.9); whether this build has code for them, the launch says */
    /* The GEMM kernels this device runs (gk_gemm entries, in order): the
     * fp8 GEMM from cc 8.9, the Hopper rungs (bf16 and fp8) on cc 9.0 and
     * the Blackwell rungs (bf16 and MXFP8) on cc 10.0 when the build has
     * their arch-specific code. */
    calib_kernel_desc gemm[7];
    int32_t gemm_kind[7], ngemm;
    /* The prefill kernels this device runs (gk_pf entries, in order): the
     * Hopper rung only on cc 9.0 with sm_90a code in the build. */
    calib_kernel_desc pf[3];
    int32_t pf_kind[3], npf;
    calib_op op;
    int32_t kernel, splits;
    uint32_t layout;
    int64_t max_rows; /* grouped GEMM: the largest group (sizes the grid; masked: an expert slot's rows) */
    int grouped_sm90; /* the grouped GEMMs' Hopper rung runs here (cc 9.0, sm_90a code) */
    calib_shape s;
    int32_t nin, nout, sets;
    gpu_buf in[GPU_IN], out[GPU_OUT];
    void *meta[GPU_META];
    size_t meta_bytes[GPU_META];
    int32_t inner; /* launches per timed sample; 0 until the first (warm-up) run sizes it */
    kern_gpu_graph *graph; /* the sample's launches captured once (NULL: eager launches) */
    int graph_tried;
    calib_sample last;
} gpu_state;

/* GEMM kernels by kind: the Ampere rung (version 2: 3-stage swizzled
 * cp.async ring, BK 64, split-K for M ≤ 64; version 1 rows were the
 * 2-stage padded kernel), cuBLAS, fp8 (mma.sync), the Hopper rung
 * (sm_90a), the Blackwell rung (sm_100a; version 2: persistent grid, two
 * Tensor Memory accumulators; version 1, one tile per CTA, never ran on a
 * GPU), the Hopper fp8 rung (sm_90a), the Blackwell MXFP8 rung (sm_100a).
 * gpu_state.gemm lists those the device runs. */
enum { GPU_GEMM_MMA, GPU_GEMM_CUBLAS, GPU_GEMM_FP8, GPU_GEMM_SM90, GPU_GEMM_SM100, GPU_GEMM_FP8_SM90, GPU_GEMM_MXFP8_SM100 };
static const calib_kernel_desc gk_gemm[] = {{"kern_gemm_bf16_mma", 2, "bf16", 0}, {"cublas_gemm_ex", 1, "bf16", 1},
                                            {"kern_gemm_fp8_block_mma", 1, "fp8", 0},
                                            {"kern_gemm_bf16_wgmma", 1, "bf16", 0},
                                            {"kern_gemm_bf16_tcgen05", 2, "bf16", 0},
                                            {"kern_gemm_fp8_block_wgmma", 1, "fp8", 0},
                                            {"kern_gemm_mxfp8_tcgen05", 1, "mxfp8", 0}};

/* The fp8 GEMMs: e4m3 operands with scales, checked against a CPU
 * reference (the block-scaled ones share operands, scales and reference;
 * the MXFP8 one has its own scales, gpu_prepare_gemm and gpu_check_gemm). */
static int gpu_gemm_fp8(int32_t kind)
{
    return kind == GPU_GEMM_FP8 || kind == GPU_GEMM_FP8_SM90 || kind == GPU_GEMM_MXFP8_SM100;
}
/* Version 3 (contiguous) / 2 (masked): the tile list (kern_grouped_plan.h,
 * built on the device) and a persistent grid over it; contiguous version 2
 * was a grid over experts × the largest group's tiles with unequal groups
 * (calib_group_rows), version 1 had equal groups; masked version 1 launched
 * the empty tiles of every slab. The second kernel of each is the Hopper
 * rung (kern_grouped_sm90.cu, sm_90a), listed only where
 * gpu_state.grouped_sm90 says the device runs it. */
static const calib_kernel_desc gk_gc[] = {{"kern_grouped_contig_mma", 3, "bf16", 0},
                                          {"kern_grouped_contig_wgmma", 1, "bf16", 0}};
static const calib_kernel_desc gk_gm[] = {{"kern_grouped_masked_mma", 2, "bf16", 0},
                                          {"kern_grouped_masked_wgmma", 1, "bf16", 0}};
/* Prefill kernels by kind: the SIMT kernel, the tensor-core one
 * (kern_attn_mma.cu, sm_80+, the Ampere rung) and the Hopper rung
 * (kern_attn_sm90.cu, sm_90a). gpu_state.pf lists those the device runs. */
enum { GPU_PF_SIMT, GPU_PF_MMA, GPU_PF_SM90 };
static const calib_kernel_desc gk_pf[] = {{"kern_attn_prefill_simt", 1, "bf16", 0},
                                          {"kern_attn_prefill_mma", 1, "bf16", 0},
                                          {"kern_attn_prefill_wgmma", 1, "bf16", 0}};
/* Paged decode: the SIMT kernel (splits: calib_decode_splits) and the
 * tensor-core one (kern_decode_mma.cu, sm_80+; splits: kern_decode_splits),
 * each followed by the LSE merge. */
enum { GPU_DEC_SIMT, GPU_DEC_MMA };
static const calib_kernel_desc gk_dec[] = {{"kern_decode_split_simt", 1, "bf16", 0},
                                           {"kern_decode_split_mma", 1, "bf16", 0}};
static const calib_kernel_desc gk_lse[] = {{"kern_lse_merge", 1, "fp32", 0}};
/* Version 2 of both: the row held in registers as float4 (the warp kernel up
 * to 1,024 columns, the block kernel up to 32,768). */
static const calib_kernel_desc gk_sm[] = {{"kern_softmax_warp", 2, "fp32", 0}, {"kern_softmax_block", 2, "fp32", 0}};
/* Version 2: one pass with the row in registers, 16-byte vectors, several rows per CTA. */
static const calib_kernel_desc gk_rms[] = {{"kern_rmsnorm", 2, "bf16", 0}};
/* Version 2 of both: 8 elements (a 16-byte load) per thread. */
static const calib_kernel_desc gk_q8[] = {{"kern_quant_fp8_block128", 2, "fp8", 0}};
static const calib_kernel_desc gk_mx[] = {{"kern_quant_mxfp8", 2, "mxfp8", 0}};
static const calib_kernel_desc gk_copy[] = {{"cuda_memcpy_d2d", 1, "u8", 1}};
static const calib_kernel_desc gk_ar[] = {{"nccl_allreduce", 1, "bf16", 1}};
static const calib_kernel_desc gk_ag[] = {{"nccl_allgather", 1, "bf16", 1}};
static const calib_kernel_desc gk_rs[] = {{"nccl_reduce_scatter", 1, "bf16", 1}};
static const calib_kernel_desc gk_a2a[] = {{"nccl_alltoall", 1, "bf16", 1}};

/* The NCCL collective of a harness op (kern_gpu.h), -1 for other ops. */
static int gpu_collective(calib_op op)
{
    switch (op) {
    case CALIB_OP_ALLREDUCE: return KERN_COLL_ALL_REDUCE;
    case CALIB_OP_ALLGATHER: return KERN_COLL_ALL_GATHER;
    case CALIB_OP_REDUCE_SCATTER: return KERN_COLL_REDUCE_SCATTER;
    case CALIB_OP_ALLTOALL: return KERN_COLL_ALL_TO_ALL;
    default: return -1;
    }
}

static void gpu_kernels(void *vst, calib_op op, const calib_kernel_desc **list, int32_t *n, const char **why)
{
    gpu_state *st = vst;
    *why = NULL;
#define GK(arr) (*list = (arr), *n = (int32_t)(sizeof(arr) / sizeof((arr)[0])))
    switch (op) {
    case CALIB_OP_GEMM:
        *list = st->gemm, *n = st->ngemm;
        break;
    case CALIB_OP_GROUPED_CONTIG: *list = gk_gc, *n = st->grouped_sm90 ? 2 : 1; break;
    case CALIB_OP_GROUPED_MASKED: *list = gk_gm, *n = st->grouped_sm90 ? 2 : 1; break;
    case CALIB_OP_ATTN_PREFILL:
        *list = st->pf, *n = st->npf;
        break;
    case CALIB_OP_ATTN_DECODE: GK(gk_dec); break;
    case CALIB_OP_LSE_MERGE: GK(gk_lse); break;
    case CALIB_OP_SOFTMAX: GK(gk_sm); break;
    case CALIB_OP_RMSNORM: GK(gk_rms); break;
    case CALIB_OP_QUANT_FP8: GK(gk_q8); break;
    case CALIB_OP_QUANT_MXFP8: GK(gk_mx); break;
    case CALIB_OP_COPY: GK(gk_copy); break;
    case CALIB_OP_ALLREDUCE:
    case CALIB_OP_ALLGATHER:
    case CALIB_OP_REDUCE_SCATTER:
    case CALIB_OP_ALLTOALL:
        /* A one-rank collective is a no-op NCCL short-cuts: its "bandwidth"
         * would be meaningless and one-GPU layouts have none to price. */
        if (st->ndev < 2) {
            *list = NULL, *n = 0, *why = "collectives need at least 2 GPUs on this host; not measured";
            break;
        }
        if (op == CALIB_OP_ALLREDUCE) GK(gk_ar);
        else if (op == CALIB_OP_ALLGATHER) GK(gk_ag);
        else if (op == CALIB_OP_REDUCE_SCATTER) GK(gk_rs);
        else GK(gk_a2a);
        break;
    default: *list = NULL, *n = 0, *why = "unknown op";
    }
#undef GK
}

static void gpu_release(void *vst)
{
    gpu_state *st = vst;
    for (int i = 0; i < GPU_IN; i++) {
        for (int s = 0; s < GPU_MAX_INNER; s++) kern_gpu_free(st->in[i].set[s]);
        memset(&st->in[i], 0, sizeof st->in[i]);
    }
    for (int i = 0; i < GPU_OUT; i++) {
        for (int s = 0; s < GPU_MAX_INNER; s++) kern_gpu_free(st->out[i].set[s]);
        memset(&st->out[i], 0, sizeof st->out[i]);
    }
    for (int i = 0; i < GPU_META; i++) kern_gpu_free(st->meta[i]), st->meta[i] = NULL, st->meta_bytes[i] = 0;
    kern_gpu_graph_destroy(st->graph); /* it launched on the buffers just freed */
    st->graph = NULL, st->graph_tried = 0;
    st->nin = st->nout = st->sets = 0, st->inner = 0;
}

static int gpu_fill(gpu_buf *b, int idx, int set, sim_err *err)
{
    uint64_t seed = 0x9e37u * (uint64_t)(set + 1) + (uint64_t)idx;
    if (b->kind == 0) return kern_gpu_fill_f32(b->set[set], (int64_t)(b->bytes / 4), seed, b->amp, err);
    if (b->kind == 1) return kern_gpu_fill_bf16(b->set[set], (int64_t)(b->bytes / 2), seed, b->amp, err);
    if (b->kind == 2) return kern_gpu_fill_e4m3(b->set[set], (int64_t)b->bytes, seed, b->amp, err);
    if (b->kind == 4) return kern_gpu_fill_e8m0(b->set[set], (int64_t)b->bytes, seed, b->amp, err);
    return 0;
}

/* Allocates (and fills, for inputs) buffer set `set`. */
static int gpu_add_set(gpu_state *st, int set, sim_err *err)
{
    int rc;
    for (int i = 0; i < st->nin; i++) {
        if ((rc = kern_gpu_malloc(&st->in[i].set[set], st->in[i].bytes + CALIB_CANARY_BYTES, err))) return rc;
        if ((rc = gpu_fill(&st->in[i], i, set, err))) return rc;
    }
    for (int i = 0; i < st->nout; i++)
        if ((rc = kern_gpu_malloc(&st->out[i].set[set], st->out[i].bytes + CALIB_CANARY_BYTES, err))) return rc;
    return 0;
}

/* The point's buffers: inputs (bytes, fill kind, amplitude) and outputs,
 * one set for now (gpu_run adds the rotating sets once it knows how many
 * launches a sample takes). */
typedef struct {
    size_t bytes;
    int kind;
    float amp;
} gpu_in_spec;

static int gpu_setup(gpu_state *st, const gpu_in_spec *in, int nin, const size_t *out, int nout, sim_err *err)
{
    int rc;
    st->nin = nin, st->nout = nout;
    for (int i = 0; i < nin; i++) st->in[i].bytes = in[i].bytes, st->in[i].kind = in[i].kind, st->in[i].amp = in[i].amp;
    for (int i = 0; i < nout; i++) st->out[i].bytes = out[i], st->out[i].kind = 3;
    if ((rc = gpu_add_set(st, 0, err))) return rc;
    st->sets = 1, st->inner = 0;
    return kern_gpu_sync(err);
}

static int gpu_meta(gpu_state *st, int i, const void *host, size_t bytes, sim_err *err)
{
    int rc = kern_gpu_malloc(&st->meta[i], bytes + CALIB_CANARY_BYTES, err);
    st->meta_bytes[i] = bytes;
    return rc ? rc : kern_gpu_h2d(st->meta[i], host, bytes, err);
}

/* Grouped GEMM: tokens and weights per expert, the rows per expert
 * (offsets or masked counts, skewed by the shape's routing skew) as
 * metadata, and the tile list's workspace (meta[1], shared by the buffer
 * sets as launches run in order). Masked tokens and outputs sit in slots
 * of the largest count (m unless skewed). */
static int gpu_prepare_grouped(gpu_state *st, calib_op op, uint32_t layout, const calib_shape *s, sim_err *err)
{
    size_t m = (size_t)s->m, n = (size_t)s->n, k = (size_t)s->k;
    int rc;
    size_t E = (size_t)s->groups;
    if (n % 8 || k % 8) return sim_err_set(err, SIM_EINVAL, "grouped GEMM needs N and K multiples of 8");
    int64_t *h = malloc((E + 1) * sizeof *h);
    if (!h) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    st->max_rows = calib_group_rows(op, layout, s, h);
    size_t rows = op == CALIB_OP_GROUPED_MASKED ? E * (size_t)st->max_rows : E * m;
    gpu_in_spec in[2] = {{rows * k * 2, 1, 1.0f}, {E * k * n * 2, 1, 1.0f}};
    size_t out[1] = {rows * n * 2};
    if ((rc = gpu_setup(st, in, 2, out, 1, err))) {
        free(h);
        return rc;
    }
    rc = gpu_meta(st, 0, h, (op == CALIB_OP_GROUPED_CONTIG ? E + 1 : E) * sizeof *h, err);
    free(h);
    size_t work = kern_grouped_workspace((int32_t)E, st->max_rows);
    if (!rc && !(rc = kern_gpu_malloc(&st->meta[1], work + CALIB_CANARY_BYTES, err))) st->meta_bytes[1] = work;
    return rc;
}

/* Paged decode: Q, paged K and V, the split partials and merged output,
 * and the context lengths and a scattered page table as metadata. */
static int gpu_prepare_decode(gpu_state *st, const calib_shape *s, sim_err *err)
{
    size_t d = (size_t)s->head_dim;
    int rc;
    size_t b = (size_t)s->batch, pages = (size_t)((s->ctx + GPU_PAGE - 1) / GPU_PAGE), np = b * pages;
    size_t rows = b * (size_t)s->heads;
    st->splits = st->kernel == GPU_DEC_MMA
                     ? kern_decode_splits(s->batch, (int32_t)s->kv_heads, s->ctx, GPU_PAGE, st->info.sms)
                     : calib_decode_splits(st->info.sms, s, GPU_PAGE);
    gpu_in_spec in[3] = {{rows * d * 2, 1, 2.0f}, {np * GPU_PAGE * (size_t)s->kv_heads * d * 2, 1, 2.0f},
                         {np * GPU_PAGE * (size_t)s->kv_heads * d * 2, 1, 1.0f}};
    size_t sp = (size_t)st->splits;
    size_t out[4] = {sp * rows * d * 4, sp * rows * 4, rows * d * 4, rows * 4};
    if ((rc = gpu_setup(st, in, 3, out, 4, err))) return rc;
    int32_t *h = malloc((b + np) * sizeof *h);
    if (!h) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < b; i++) h[i] = (int32_t)s->ctx;
    for (size_t i = 0; i < np; i++) h[b + i] = (int32_t)((i * 7919) % np); /* scattered pages */
    rc = gpu_meta(st, 0, h, b * 4, err);
    if (!rc) rc = gpu_meta(st, 1, h + b, np * 4, err);
    free(h);
    return rc;
}

/* LSE merge: the partials, with −inf LSEs written where the layout asks. */
static int gpu_prepare_lse_merge(gpu_state *st, uint32_t layout, const calib_shape *s, sim_err *err)
{
    size_t m = (size_t)s->m, d = (size_t)s->head_dim;
    int rc;
    size_t P = (size_t)s->ranks;
    gpu_in_spec in[2] = {{P * m * d * 4, 0, 1.0f}, {P * m * 4, 0, 3.0f}};
    size_t out[2] = {m * d * 4, m * 4};
    if ((rc = gpu_setup(st, in, 2, out, 2, err)) || !(layout & CALIB_LAYOUT_NEG_INF_LSE)) return rc;
    float *h = malloc(P * m * sizeof *h);
    if (!h) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    rc = kern_gpu_d2h(h, st->in[1].set[0], P * m * 4, err);
    for (size_t p = 0; p < P && !rc; p++)
        for (size_t r = 0; r < m; r++)
            if (calib_lse_neg_inf((int64_t)p, (int64_t)r, (int64_t)P)) h[p * m + r] = -INFINITY;
    if (!rc) rc = kern_gpu_h2d(st->in[1].set[0], h, P * m * 4, err);
    free(h);
    return rc;
}

/* GEMM buffers: bf16 A, B and C (the Ampere rung's split-K workspace in
 * meta[0]), or the fp8 block-scaled operands with their scales (fp32 per
 * 128, or MXFP8's E8M0 per 32 within 2^±4). */
static int gpu_prepare_gemm(gpu_state *st, int32_t kernel, const calib_shape *s, sim_err *err)
{
    size_t m = (size_t)s->m, n = (size_t)s->n, k = (size_t)s->k;
    if (kernel == GPU_GEMM_MXFP8_SM100) {
        if (k % 128 || n % 8) return sim_err_set(err, SIM_EINVAL, "MXFP8 GEMM needs K a multiple of 128 and N of 8");
        gpu_in_spec in[4] = {{m * k, 2, 4.0f}, {m * (k / 32), 4, 4.0f}, {n * k, 2, 4.0f}, {n * (k / 32), 4, 4.0f}};
        size_t out[1] = {m * n * 2};
        return gpu_setup(st, in, 4, out, 1, err);
    }
    if (gpu_gemm_fp8(kernel)) {
        if (k % 128 || n % 8) return sim_err_set(err, SIM_EINVAL, "fp8 GEMM needs K a multiple of 128 and N of 8");
        size_t kb = k / 128, nb = (n + 127) / 128;
        gpu_in_spec in[4] = {{m * k, 2, 4.0f}, {m * kb * 4, 0, 1.0f}, {n * k, 2, 4.0f}, {nb * kb * 4, 0, 1.0f}};
        size_t out[1] = {m * n * 2};
        return gpu_setup(st, in, 4, out, 1, err);
    }
    if (n % 8 || k % 8) return sim_err_set(err, SIM_EINVAL, "bf16 GEMM needs N and K multiples of 8");
    gpu_in_spec in[2] = {{m * k * 2, 1, 1.0f}, {k * n * 2, 1, 1.0f}};
    size_t out[1] = {m * n * 2};
    int rc = gpu_setup(st, in, 2, out, 1, err);
    /* The Ampere rung's split-K partials (skinny GEMMs): one workspace
     * for all buffer sets, as launches run in order. */
    size_t work = kernel == GPU_GEMM_MMA ? kern_gemm_split_workspace(s->m, s->n, s->k, st->info.sms) : 0;
    if (!rc && work) {
        rc = kern_gpu_malloc(&st->meta[0], work + CALIB_CANARY_BYTES, err);
        st->meta_bytes[0] = work;
    }
    return rc;
}

/* Prefill attention buffers: Q, K, V in, O and the LSE out. */
static int gpu_prepare_prefill(gpu_state *st, const calib_shape *s, sim_err *err)
{
    size_t m = (size_t)s->m, d = (size_t)s->head_dim, b = (size_t)s->batch, nkv = (size_t)(s->ctx + s->m);
    gpu_in_spec in[3] = {{b * m * (size_t)s->heads * d * 2, 1, 2.0f}, {b * nkv * (size_t)s->kv_heads * d * 2, 1, 2.0f},
                         {b * nkv * (size_t)s->kv_heads * d * 2, 1, 1.0f}};
    size_t out[2] = {b * m * (size_t)s->heads * d * 2, b * m * (size_t)s->heads * 4};
    return gpu_setup(st, in, 3, out, 2, err);
}

/* Quantisation buffers: bf16 rows in, fp8 values and their scales (fp32 per
 * 128, or E8M0 per 32 for MXFP8) out. */
static int gpu_prepare_quant(gpu_state *st, int mx, const calib_shape *s, sim_err *err)
{
    size_t m = (size_t)s->m, n = (size_t)s->n, blk = mx ? 32 : 128;
    if (n % blk) return sim_err_set(err, SIM_EINVAL, "quantisation needs columns a multiple of %zu", blk);
    gpu_in_spec in[1] = {{m * n * 2, 1, 100.0f}};
    size_t out[2] = {m * n, m * (n / blk) * (mx ? 1 : 4)};
    return gpu_setup(st, in, 1, out, 2, err);
}

static int gpu_prepare(void *vst, calib_op op, int32_t kernel, const calib_shape *s, uint32_t layout, sim_err *err)
{
    gpu_state *st = vst;
    int rc;
    gpu_release(st);
    /* GEMM kernels are kept by kind (gk_gemm's order), whatever subset the device lists. */
    if (op == CALIB_OP_GEMM && (kernel < 0 || kernel >= st->ngemm))
        return sim_err_set(err, SIM_EINVAL, "GEMM kernel %d of %d", (int)kernel, (int)st->ngemm);
    if (op == CALIB_OP_GEMM) kernel = st->gemm_kind[kernel];
    /* Prefill kernels likewise (gk_pf's order). */
    if (op == CALIB_OP_ATTN_PREFILL && (kernel < 0 || kernel >= st->npf))
        return sim_err_set(err, SIM_EINVAL, "prefill kernel %d of %d", (int)kernel, (int)st->npf);
    if (op == CALIB_OP_ATTN_PREFILL) kernel = st->pf_kind[kernel];
    /* Grouped GEMMs: the Ampere rung (0) and, where it runs, the Hopper one (1). */
    if ((op == CALIB_OP_GROUPED_CONTIG || op == CALIB_OP_GROUPED_MASKED) &&
        (kernel < 0 || kernel > (st->grouped_sm90 ? 1 : 0)))
        return sim_err_set(err, SIM_EINVAL, "grouped GEMM kernel %d of %d", (int)kernel, st->grouped_sm90 ? 2 : 1);
    st->op = op, st->kernel = kernel, st->s = *s, st->layout = layout;
    size_t m = (size_t)s->m, n = (size_t)s->n;
    switch (op) {
    case CALIB_OP_GEMM: rc = gpu_prepare_gemm(st, kernel, s, err); break;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: rc = gpu_prepare_grouped(st, op, layout, s, err); break;
    case CALIB_OP_ATTN_PREFILL: rc = gpu_prepare_prefill(st, s, err); break;
    case CALIB_OP_ATTN_DECODE: rc = gpu_prepare_decode(st, s, err); break;
    case CALIB_OP_LSE_MERGE: rc = gpu_prepare_lse_merge(st, layout, s, err); break;
    case CALIB_OP_SOFTMAX: {
        gpu_in_spec in[1] = {{m * n * 4, 0, 8.0f}};
        size_t out[1] = {m * n * 4};
        rc = gpu_setup(st, in, 1, out, 1, err);
        break;
    }
    case CALIB_OP_RMSNORM: {
        gpu_in_spec in[2] = {{m * n * 2, 1, 2.0f}, {n * 4, 0, 1.0f}};
        size_t out[1] = {m * n * 2};
        rc = gpu_setup(st, in, 2, out, 1, err);
        break;
    }
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: rc = gpu_prepare_quant(st, op == CALIB_OP_QUANT_MXFP8, s, err); break;
    case CALIB_OP_COPY: {
        gpu_in_spec in[1] = {{(size_t)s->bytes, 2, 1.0f}};
        size_t out[1] = {(size_t)s->bytes};
        rc = gpu_setup(st, in, 1, out, 1, err);
        break;
    }
    case CALIB_OP_ALLREDUCE:
    case CALIB_OP_ALLGATHER:
    case CALIB_OP_REDUCE_SCATTER:
    case CALIB_OP_ALLTOALL: rc = 0; break; /* buffers live in the NCCL context */
    default: rc = sim_err_set(err, SIM_ENOTSUP, "GPU backend: op %s not supported", calib_op_name(op));
    }
    if (rc) gpu_release(st);
    return rc;
}

/* Launches the prepared op on buffer set `set`. */
static int gpu_launch(gpu_state *st, int set, sim_err *err)
{
    const calib_shape *s = &st->s;
    void *in[GPU_IN], *out[GPU_OUT];
    for (int i = 0; i < GPU_IN; i++) in[i] = st->in[i].set[set];
    for (int i = 0; i < GPU_OUT; i++) out[i] = st->out[i].set[set];
    switch (st->op) {
    case CALIB_OP_GEMM:
        switch (st->kernel) {
        case GPU_GEMM_MMA:
            return kern_gpu_gemm_bf16(s->m, s->n, s->k, in[0], in[1], out[0], st->meta[0], st->meta_bytes[0], err);
        case GPU_GEMM_CUBLAS: return kern_gpu_cublas_gemm_bf16(st->lib, s->m, s->n, s->k, in[0], in[1], out[0], err);
        case GPU_GEMM_SM90: return kern_gpu_gemm_bf16_sm90(s->m, s->n, s->k, in[0], in[1], out[0], err);
        case GPU_GEMM_SM100: return kern_gpu_gemm_bf16_sm100(s->m, s->n, s->k, in[0], in[1], out[0], err);
        case GPU_GEMM_FP8_SM90:
            return kern_gpu_gemm_fp8_block_sm90(s->m, s->n, s->k, in[0], in[1], in[2], in[3], out[0], err);
        case GPU_GEMM_MXFP8_SM100:
            return kern_gpu_gemm_mxfp8_sm100(s->m, s->n, s->k, in[0], in[1], in[2], in[3], out[0], err);
        default: return kern_gpu_gemm_fp8_block(s->m, s->n, s->k, in[0], in[1], in[2], in[3], out[0], err);
        }
    case CALIB_OP_GROUPED_CONTIG:
        if (st->kernel == 1) /* A and C hold groups × m rows (gpu_prepare_grouped) */
            return kern_gpu_grouped_contig_sm90((int32_t)s->groups, s->groups * s->m, st->max_rows, s->n, s->k,
                                                st->meta[0], in[0], in[1], out[0], st->meta[1], st->meta_bytes[1], err);
        return kern_gpu_grouped_contig((int32_t)s->groups, st->max_rows, s->n, s->k, st->meta[0], in[0], in[1], out[0],
                                       st->meta[1], st->meta_bytes[1], err);
    case CALIB_OP_GROUPED_MASKED: /* slots of max_rows rows (gpu_prepare_grouped) */
        return (st->kernel == 1 ? kern_gpu_grouped_masked_sm90 : kern_gpu_grouped_masked)(
            (int32_t)s->groups, st->max_rows, s->n, s->k, st->meta[0], in[0], in[1], out[0], st->meta[1],
            st->meta_bytes[1], err);
    case CALIB_OP_ATTN_PREFILL:
        return (st->kernel == GPU_PF_SM90  ? kern_gpu_attn_prefill_sm90
                : st->kernel == GPU_PF_MMA ? kern_gpu_attn_prefill_mma
                                           : kern_gpu_attn_prefill)(
            (int32_t)s->batch, (int32_t)s->m, (int32_t)s->ctx, (int32_t)s->heads, (int32_t)s->kv_heads,
            (int32_t)s->head_dim, 1.0f / sqrtf((float)s->head_dim), in[0], in[1], in[2], out[0], out[1], err);
    case CALIB_OP_ATTN_DECODE: {
        int64_t rows = s->batch * s->heads, d = s->head_dim;
        int32_t maxp = (int32_t)((s->ctx + GPU_PAGE - 1) / GPU_PAGE);
        int rc = (st->kernel == GPU_DEC_MMA ? kern_gpu_decode_split_mma : kern_gpu_decode_split)(
            (int32_t)s->batch, (int32_t)s->heads, (int32_t)s->kv_heads, (int32_t)d, GPU_PAGE, maxp,
            1.0f / sqrtf((float)d), st->meta[0], st->meta[1], st->splits, in[0], in[1], in[2], out[0], out[1], err);
        return rc ? rc : kern_gpu_lse_merge(st->splits, rows, (int32_t)d, out[0], out[1], out[2], out[3], err);
    }
    case CALIB_OP_LSE_MERGE:
        return kern_gpu_lse_merge((int32_t)s->ranks, s->m, (int32_t)s->head_dim, in[0], in[1], out[0], out[1], err);
    case CALIB_OP_SOFTMAX:
        return st->kernel == 0 ? kern_gpu_softmax_warp(in[0], s->m, s->n, out[0], err)
                               : kern_gpu_softmax_block(in[0], s->m, s->n, out[0], err);
    case CALIB_OP_RMSNORM: return kern_gpu_rmsnorm(in[0], in[1], s->m, s->n, 1e-6f, out[0], err);
    case CALIB_OP_QUANT_FP8: return kern_gpu_quant_fp8_block128(in[0], s->m, s->n, out[0], out[1], err);
    case CALIB_OP_QUANT_MXFP8: return kern_gpu_quant_mxfp8(in[0], s->m, s->n, out[0], out[1], err);
    case CALIB_OP_COPY: return kern_gpu_d2d(out[0], in[0], (size_t)s->bytes, err);
    default: return sim_err_set(err, SIM_ENOTSUP, "GPU backend: op %s not supported", calib_op_name(st->op));
    }
}

/* After the warm-up run has sized a sample at `inner` launches: one buffer
 * set per launch, as far as GPU_SET_BUDGET and free memory allow. */
static int gpu_grow_sets(gpu_state *st, sim_err *err)
{
    size_t set_bytes = 0;
    for (int i = 0; i < st->nin; i++) set_bytes += st->in[i].bytes + CALIB_CANARY_BYTES;
    for (int i = 0; i < st->nout; i++) set_bytes += st->out[i].bytes + CALIB_CANARY_BYTES;
    int32_t want = st->inner;
    if (set_bytes > 0 && (uint64_t)want * set_bytes > GPU_SET_BUDGET) want = (int32_t)(GPU_SET_BUDGET / set_bytes);
    if (want < 1) want = 1;
    while (st->sets < want) {
        sim_err merr;
        if (gpu_add_set(st, st->sets, &merr)) { /* out of memory: fewer sets, the point is warm */
            for (int i = 0; i < st->nin; i++) kern_gpu_free(st->in[i].set[st->sets]), st->in[i].set[st->sets] = NULL;
            for (int i = 0; i < st->nout; i++) kern_gpu_free(st->out[i].set[st->sets]), st->out[i].set[st->sets] = NULL;
            break;
        }
        st->sets++;
    }
    return kern_gpu_sync(err);
}

static void gpu_read_state(gpu_state *st)
{
    calib_sample *x = &st->last;
    memset(x, 0, sizeof *x);
    x->l2_cold = st->flush && st->sets >= (st->inner > 0 ? st->inner : 1);
    if (st->nvml && calib_nvml_clocks(st->nvml, &x->sm_mhz, &x->mem_mhz, &x->reasons) == 0) {
        x->valid = 1;
        x->throttled = calib_nvml_slowdown(x->reasons);
    }
}

static int gpu_run(void *vst, double *seconds, sim_err *err)
{
    gpu_state *st = vst;
    int rc;
    if (gpu_collective(st->op) >= 0) {
        rc = kern_gpu_nccl_collective(st->lib, gpu_collective(st->op), (int32_t)st->s.ranks, st->s.bytes, seconds,
                                      err);
        gpu_read_state(st);
        st->last.l2_cold = -1;
        return rc;
    }
    if (st->inner == 0) { /* the warm-up: one eager launch sizes the sample */
        if ((rc = kern_gpu_timer_start(st->timer, err)) || (rc = gpu_launch(st, 0, err)) ||
            (rc = kern_gpu_timer_stop(st->timer, seconds, err)))
            return rc;
        double want = *seconds > 0 ? ceil(GPU_SAMPLE_S / *seconds) : GPU_MAX_INNER;
        st->inner = (int32_t)(want < 1 ? 1 : want > GPU_MAX_INNER ? GPU_MAX_INNER : want);
        if ((rc = gpu_grow_sets(st, err))) return rc;
        gpu_read_state(st);
        return 0;
    }
    int32_t inner = st->inner;
    if (!st->graph_tried) {
        /* Capture the sample's launches once; if anything refuses capture,
         * time eager back-to-back launches instead. */
        sim_err cerr;
        st->graph_tried = 1;
        if (kern_gpu_capture_begin(&cerr) == 0) {
            int ok = 1;
            for (int32_t j = 0; j < inner && ok; j++) ok = gpu_launch(st, j % st->sets, &cerr) == 0;
            kern_gpu_capture_end(ok, &st->graph, &cerr);
        }
    }
    /* Flush the L2 outside the timed events: every launch of the sample
     * then starts from HBM. */
    if (st->flush && (rc = kern_gpu_memset(st->flush, 0x5a, st->flush_bytes, err))) return rc;
    if ((rc = kern_gpu_timer_start(st->timer, err))) return rc;
    if (st->graph) {
        if ((rc = kern_gpu_graph_launch(st->graph, err))) return rc;
    } else {
        for (int32_t j = 0; j < inner; j++)
            if ((rc = gpu_launch(st, j % st->sets, err))) return rc;
    }
    if ((rc = kern_gpu_timer_stop(st->timer, seconds, err))) return rc;
    *seconds /= inner;
    gpu_read_state(st);
    return 0;
}

static void gpu_sample(void *vst, calib_sample *out)
{
    *out = ((gpu_state *)vst)->last;
}

/* Downloads n bytes of a device buffer into a new host buffer. */
static void *gpu_fetch(const void *d, size_t n, int *rc, sim_err *err)
{
    void *h = malloc(n ? n : 1);
    if (!h) {
        *rc = sim_err_set(err, SIM_ENOMEM, "check: out of memory");
        return NULL;
    }
    if ((*rc = kern_gpu_d2h(h, d, n, err))) {
        free(h);
        return NULL;
    }
    return h;
}

static float *gpu_bf16_fetch(const void *d, size_t n, int *rc, sim_err *err)
{
    uint16_t *h = gpu_fetch(d, n * 2, rc, err);
    float *f = h ? malloc((n ? n : 1) * sizeof *f) : NULL;
    if (h && !f) *rc = sim_err_set(err, SIM_ENOMEM, "check: out of memory");
    if (f) kern_bf16_to_f32_n(h, f, (int64_t)n);
    free(h);
    return f;
}

static float *gpu_floats(size_t n)
{
    return malloc((n > 0 ? n : 1) * sizeof(float));
}

/* Poisons set 0's outputs and writes a canary after every buffer of set 0
 * and every metadata buffer. */
static int gpu_arm(gpu_state *st, sim_err *err)
{
    unsigned char canary[CALIB_CANARY_BYTES];
    int rc;
    calib_canary_fill(canary, sizeof canary);
    for (int i = 0; i < st->nout; i++)
        if ((rc = kern_gpu_memset(st->out[i].set[0], CALIB_POISON_BYTE, st->out[i].bytes, err))) return rc;
    for (int i = 0; i < st->nin; i++)
        if ((rc = kern_gpu_h2d((char *)st->in[i].set[0] + st->in[i].bytes, canary, sizeof canary, err))) return rc;
    for (int i = 0; i < st->nout; i++)
        if ((rc = kern_gpu_h2d((char *)st->out[i].set[0] + st->out[i].bytes, canary, sizeof canary, err))) return rc;
    for (int i = 0; i < GPU_META; i++)
        if (st->meta[i] && (rc = kern_gpu_h2d((char *)st->meta[i] + st->meta_bytes[i], canary, sizeof canary, err)))
            return rc;
    return kern_gpu_sync(err);
}

/* Counts the canaries of set 0 and the metadata that were overwritten. */
static int gpu_canaries(gpu_state *st, int32_t *broken, sim_err *err)
{
    unsigned char got[CALIB_CANARY_BYTES];
    int rc;
    *broken = 0;
    for (int i = 0; i < st->nin + st->nout + GPU_META; i++) {
        const void *p;
        size_t bytes;
        if (i < st->nin) p = st->in[i].set[0], bytes = st->in[i].bytes;
        else if (i < st->nin + st->nout) p = st->out[i - st->nin].set[0], bytes = st->out[i - st->nin].bytes;
        else if (st->meta[i - st->nin - st->nout]) p = st->meta[i - st->nin - st->nout], bytes = st->meta_bytes[i - st->nin - st->nout];
        else continue;
        if ((rc = kern_gpu_d2h(got, (const char *)p + bytes, sizeof got, err))) return rc;
        if (!calib_canary_intact(got, sizeof got)) (*broken)++;
    }
    return 0;
}

/* The point's set-0 buffers and the host copies a check downloads or
 * computes, freed together whatever the outcome. */
typedef struct {
    void *in[GPU_IN], *out[GPU_OUT];
    void *h[6];
    float *f[6];
} gpu_check_bufs;

#define FETCH_BF(slot, ptr, cnt) if (!(f[slot] = gpu_bf16_fetch((ptr), (cnt), &rc, err))) return rc
#define FETCH(slot, ptr, bytes) if (!(h[slot] = gpu_fetch((ptr), (bytes), &rc, err))) return rc
#define ALLOC(slot, cnt) \
    if (!(f[slot] = gpu_floats(cnt))) return sim_err_set(err, SIM_ENOMEM, "check: out of memory")

/* bf16 GEMM against an fp32 GEMM of the same values; fp8 block and MXFP8
 * GEMMs against their CPU references, both rounded to bf16. */
static int gpu_check_gemm(const gpu_state *st, gpu_check_bufs *bufs, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    size_t m = (size_t)s->m, n = (size_t)s->n, k = (size_t)s->k;
    void **in = bufs->in, **out = bufs->out, **h = bufs->h;
    float **f = bufs->f;
    int rc = 0;
    if (!gpu_gemm_fp8(st->kernel)) {
        FETCH_BF(0, in[0], m * k);
        FETCH_BF(1, in[1], k * n);
        FETCH_BF(2, out[0], m * n);
        ALLOC(3, m * n);
        kern_gemm_f32_ref((int64_t)m, (int64_t)n, (int64_t)k, f[0], f[1], f[3]);
        calib_check_init(r, 0x1p-9 * calib_absmax(f[3], (int64_t)(m * n)), 0x1p-7);
        calib_check_compare(r, f[2], f[3], (int64_t)(m * n), 0, "c");
    } else {
        int mx = st->kernel == GPU_GEMM_MXFP8_SM100;
        size_t kb = k / 128, nb = (n + 127) / 128;
        FETCH(0, in[0], m * k);
        FETCH(1, in[1], mx ? m * (k / 32) : m * kb * 4);
        FETCH(2, in[2], n * k);
        FETCH(3, in[3], mx ? n * (k / 32) : nb * kb * 4);
        FETCH_BF(0, out[0], m * n);
        FETCH(4, out[0], m * n * 2); /* reused below for the reference's bf16 */
        ALLOC(1, m * n);
        if (mx) kern_gemm_mxfp8_ref((int64_t)m, (int64_t)n, (int64_t)k, h[0], h[1], h[2], h[3], h[4]);
        else kern_gemm_fp8_block_ref((int64_t)m, (int64_t)n, (int64_t)k, h[0], h[1], h[2], h[3], h[4]);
        kern_bf16_to_f32_n(h[4], f[1], (int64_t)(m * n));
        calib_check_init(r, 0x1p-9 * calib_absmax(f[1], (int64_t)(m * n)), 0x1p-7);
        calib_check_compare(r, f[0], f[1], (int64_t)(m * n), 0, "c");
    }
    return rc;
}

/* Grouped GEMM on the rows each expert owns. */
static int gpu_check_grouped(const gpu_state *st, gpu_check_bufs *bufs, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    int masked = st->op == CALIB_OP_GROUPED_MASKED;
    /* rows per expert slot (masked, gpu_prepare_grouped) / mean (contiguous) */
    size_t m = masked ? (size_t)st->max_rows : (size_t)s->m, n = (size_t)s->n, k = (size_t)s->k;
    void **in = bufs->in, **out = bufs->out, **h = bufs->h;
    float **f = bufs->f;
    int rc = 0;
    size_t E = (size_t)s->groups;
    FETCH_BF(0, in[0], E * m * k);
    FETCH_BF(1, in[1], E * k * n);
    FETCH_BF(2, out[0], E * m * n);
    FETCH(0, st->meta[0], st->meta_bytes[0]);
    ALLOC(3, E * m * n);
    const int64_t *g = h[0];
    double sc = 0.0;
    for (size_t e = 0; e < E; e++) {
        int64_t r0 = masked ? (int64_t)(e * m) : g[e], rows = masked ? g[e] : g[e + 1] - g[e];
        kern_gemm_f32_ref(rows, (int64_t)n, (int64_t)k, f[0] + r0 * (int64_t)k, f[1] + e * k * n, f[3] + r0 * (int64_t)n);
        sc = fmax(sc, calib_absmax(f[3] + r0 * (int64_t)n, rows * (int64_t)n));
    }
    calib_check_init(r, 0x1p-9 * sc, 0x1p-7);
    /* The rows each expert owns (masked: rows past its count stay poisoned, unread). */
    for (size_t e = 0; e < E; e++) {
        int64_t r0 = masked ? (int64_t)(e * m) : g[e], rows = masked ? g[e] : g[e + 1] - g[e];
        calib_check_compare(r, f[2] + r0 * (int64_t)n, f[3] + r0 * (int64_t)n, rows * (int64_t)n, r0 * (int64_t)n, "c");
    }
    return rc;
}

/* Prefill attention against naive attention: bf16 output, fp32 LSE. */
static int gpu_check_prefill(const gpu_state *st, gpu_check_bufs *bufs, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    size_t m = (size_t)s->m, d = (size_t)s->head_dim;
    void **in = bufs->in, **out = bufs->out, **h = bufs->h;
    float **f = bufs->f;
    int rc = 0;
    size_t b = (size_t)s->batch, nkv = (size_t)(s->ctx + s->m), hq = (size_t)s->heads, hk = (size_t)s->kv_heads;
    FETCH_BF(0, in[0], b * m * hq * d);
    FETCH_BF(1, in[1], b * nkv * hk * d);
    FETCH_BF(2, in[2], b * nkv * hk * d);
    FETCH_BF(3, out[0], b * m * hq * d);
    FETCH(0, out[1], b * m * hq * 4);
    ALLOC(4, b * m * hq * d);
    ALLOC(5, b * m * hq);
    kern_prefill_shape ps = {(int32_t)m, (int32_t)s->ctx, (int32_t)hq, (int32_t)hk, (int32_t)d, 1.0f / sqrtf((float)d)};
    for (size_t i = 0; i < b; i++)
        kern_attn_naive_ref(&ps, f[0] + i * m * hq * d, f[1] + i * nkv * hk * d, f[2] + i * nkv * hk * d,
                            f[4] + i * m * hq * d, f[5] + i * m * hq);
    calib_check_init(r, 0x1p-9 * calib_absmax(f[4], (int64_t)(b * m * hq * d)), 0x1p-7);
    calib_check_compare(r, f[3], f[4], (int64_t)(b * m * hq * d), 0, "o");
    double at = r->atol, rt = r->rtol;
    r->atol = 1e-3, r->rtol = 1e-4; /* lse, fp32 */
    calib_check_compare(r, h[0], f[5], (int64_t)(b * m * hq), 0, "lse");
    r->atol = at, r->rtol = rt;
    return rc;
}

/* Paged decode: the split partials (empty splits included) and the merged
 * output against the reference split and merged the same way. */
static int gpu_check_decode(const gpu_state *st, gpu_check_bufs *bufs, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    size_t d = (size_t)s->head_dim;
    void **in = bufs->in, **out = bufs->out, **h = bufs->h;
    float **f = bufs->f;
    int rc = 0;
    size_t b = (size_t)s->batch, pages = (size_t)((s->ctx + GPU_PAGE - 1) / GPU_PAGE), np = b * pages;
    size_t rows = b * (size_t)s->heads, hk = (size_t)s->kv_heads, sp = (size_t)st->splits;
    FETCH_BF(0, in[0], rows * d);
    FETCH_BF(1, in[1], np * GPU_PAGE * hk * d);
    FETCH_BF(2, in[2], np * GPU_PAGE * hk * d);
    FETCH(0, out[0], sp * rows * d * 4);
    FETCH(1, out[1], sp * rows * 4);
    FETCH(2, out[2], rows * d * 4);
    FETCH(3, out[3], rows * 4);
    FETCH(4, st->meta[0], b * 4);
    FETCH(5, st->meta[1], np * 4);
    ALLOC(3, sp * rows * (d + 1));
    ALLOC(4, rows * (d + 1));
    kern_paged_shape ps = {(int32_t)b, (int32_t)s->heads, (int32_t)hk, (int32_t)d, GPU_PAGE, (int32_t)pages,
                           1.0f / sqrtf((float)d), h[4], h[5]};
    /* The partials, empty splits (−inf, zeros) included, against the
     * reference split the same way; the merged output against it merged. */
    kern_decode_split_ref(&ps, (int32_t)sp, f[0], f[1], f[2], f[3], f[3] + sp * rows * d);
    kern_lse_merge_ref((int32_t)sp, (int64_t)rows, (int32_t)d, f[3], f[3] + sp * rows * d, f[4], f[4] + rows * d);
    calib_check_init(r, 1e-3, 1e-3);
    calib_check_compare(r, h[0], f[3], (int64_t)(sp * rows * d), 0, "o_part");
    calib_check_compare(r, h[1], f[3] + sp * rows * d, (int64_t)(sp * rows), 0, "lse_part");
    calib_check_compare(r, h[2], f[4], (int64_t)(rows * d), 0, "o");
    calib_check_compare(r, h[3], f[4] + rows * d, (int64_t)rows, 0, "lse");
    return rc;
}

/* The LSE merge against the CPU merge. */
static int gpu_check_lse_merge(const gpu_state *st, gpu_check_bufs *bufs, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    size_t m = (size_t)s->m, d = (size_t)s->head_dim;
    void **in = bufs->in, **out = bufs->out, **h = bufs->h;
    float **f = bufs->f;
    int rc = 0;
    size_t P = (size_t)s->ranks;
    FETCH(0, in[0], P * m * d * 4);
    FETCH(1, in[1], P * m * 4);
    FETCH(2, out[0], m * d * 4);
    FETCH(3, out[1], m * 4);
    ALLOC(0, m * d);
    ALLOC(1, m);
    kern_lse_merge_ref((int32_t)P, (int64_t)m, (int32_t)d, h[0], h[1], f[0], f[1]);
    calib_check_init(r, 1e-4, 1e-4);
    calib_check_compare(r, h[2], f[0], (int64_t)(m * d), 0, "o");
    calib_check_compare(r, h[3], f[1], (int64_t)m, 0, "lse");
    return rc;
}

/* Softmax against two-pass softmax. */
static int gpu_check_softmax(const gpu_state *st, gpu_check_bufs *bufs, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    size_t m = (size_t)s->m, n = (size_t)s->n;
    void **in = bufs->in, **out = bufs->out, **h = bufs->h;
    float **f = bufs->f;
    int rc = 0;
    FETCH(0, in[0], m * n * 4);
    FETCH(1, out[0], m * n * 4);
    ALLOC(0, m * n);
    kern_softmax_twopass_ref(h[0], (int64_t)m, (int64_t)n, f[0]);
    calib_check_init(r, 1e-5 * calib_absmax(f[0], (int64_t)(m * n)), 2e-4);
    calib_check_compare(r, h[1], f[0], (int64_t)(m * n), 0, "y");
    return rc;
}

/* RMSNorm against the CPU reference on the same bf16 input. */
static int gpu_check_rmsnorm(const gpu_state *st, gpu_check_bufs *bufs, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    size_t m = (size_t)s->m, n = (size_t)s->n;
    void **in = bufs->in, **out = bufs->out, **h = bufs->h;
    float **f = bufs->f;
    int rc = 0;
    FETCH_BF(0, in[0], m * n);
    FETCH(0, in[1], n * 4);
    FETCH_BF(1, out[0], m * n);
    ALLOC(2, m * n);
    kern_rmsnorm_ref(f[0], h[0], (int64_t)m, (int64_t)n, 1e-6f, f[2]);
    calib_check_init(r, 0x1p-9 * calib_absmax(f[2], (int64_t)(m * n)), 0x1p-7);
    calib_check_compare(r, f[1], f[2], (int64_t)(m * n), 0, "y");
    return rc;
}

/* fp8 block / MXFP8 quantisation: each scale exactly, each element within
 * the format's bound. */
static int gpu_check_quant(const gpu_state *st, gpu_check_bufs *bufs, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    size_t m = (size_t)s->m, n = (size_t)s->n;
    void **in = bufs->in, **out = bufs->out, **h = bufs->h;
    float **f = bufs->f;
    int rc = 0;
    int mx = st->op == CALIB_OP_QUANT_MXFP8;
    size_t blk = mx ? 32 : 128, nb = n / blk;
    FETCH_BF(0, in[0], m * n);
    FETCH(0, out[0], m * n);
    FETCH(1, out[1], m * nb * (mx ? 1 : 4));
    ALLOC(1, m * n);
    if (mx) kern_dequant_mxfp8_ref(h[0], h[1], (int64_t)m, (int64_t)n, f[1]);
    else kern_dequant_fp8_block128_ref(h[0], h[1], (int64_t)m, (int64_t)n, f[1]);
    calib_check_init(r, 0x1p-10, 0x1p-4);
    for (size_t row = 0; row < m; row++)
        for (size_t bi = 0; bi < nb; bi++) {
            float amax = 0.0f;
            for (size_t c = bi * blk; c < (bi + 1) * blk; c++) amax = fmaxf(amax, fabsf(f[0][row * n + c]));
            float sc = mx ? kern_e8m0_to_f32(((uint8_t *)h[1])[row * nb + bi]) : ((float *)h[1])[row * nb + bi];
            float want = mx ? kern_e8m0_to_f32(amax > 0 ? kern_e8m0_ceil_pow2(amax / KERN_E4M3_MAX) : 127)
                            : (amax > 0 ? amax / KERN_E4M3_MAX : 1.0f);
            /* The scale exactly (to 1e-6), then every element within the format's bound. */
            calib_check_ratio(r, fabsf(sc - want) <= 1e-6f * want ? 0.0 : INFINITY, (int64_t)(row * nb + bi), sc, want,
                              "scale");
            for (size_t c = bi * blk; c < (bi + 1) * blk; c++) {
                double x = f[0][row * n + c];
                calib_check_ratio(r, fabs(x - f[1][row * n + c]) / (0x1p-4 * fabs(x) + 0x1p-10 * sc * 1.0001),
                                  (int64_t)(row * n + c), f[1][row * n + c], x, "dequantised");
            }
        }
    return rc;
}

/* A device copy, byte for byte. */
static int gpu_check_copy(const gpu_state *st, gpu_check_bufs *bufs, calib_check_result *r, sim_err *err)
{
    const calib_shape *s = &st->s;
    void **in = bufs->in, **out = bufs->out, **h = bufs->h;
    int rc = 0;
    FETCH(0, in[0], (size_t)s->bytes);
    FETCH(1, out[0], (size_t)s->bytes);
    calib_check_bytes(r, h[1], h[0], (size_t)s->bytes, "dst");
    return rc;
}

#undef FETCH_BF
#undef FETCH
#undef ALLOC

/* Runs the prepared point once on set 0 — outputs NaN-poisoned, canaries
 * armed — and compares every output element with the CPU reference on the
 * same (bf16/fp8-rounded) inputs. Tolerances per output (|x − ref| ≤ atol
 * + rtol·|ref|): bf16 outputs rtol 2^-7 and atol 2^-9·max|ref| (one bf16
 * rounding, 2^-9, plus fp32 accumulation order and the fast exp/log of the
 * attention kernels); fp32 outputs rtol 2e-4 with small atols; quantisation
 * its format bound (error/bound ≤ 1) and the exact scale; copies exact. */
static int gpu_check(void *vst, calib_check_result *r, sim_err *err)
{
    gpu_state *st = vst;
    gpu_check_bufs c = {{0}, {0}, {0}, {0}};
    int32_t broken = 0;
    int rc = 0;
    calib_check_init(r, 0, 0);
    if (gpu_collective(st->op) >= 0)
        return sim_err_set(err, SIM_ENOTSUP, "NCCL %s is a library reference; not checked", calib_op_name(st->op));
    for (int i = 0; i < GPU_IN; i++) c.in[i] = st->in[i].set[0];
    for (int i = 0; i < GPU_OUT; i++) c.out[i] = st->out[i].set[0];
    if ((rc = gpu_arm(st, err)) || (rc = gpu_launch(st, 0, err)) || (rc = kern_gpu_sync(err)) ||
        (rc = gpu_canaries(st, &broken, err)))
        return rc;
    switch (st->op) {
    case CALIB_OP_GEMM: rc = gpu_check_gemm(st, &c, r, err); break;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: rc = gpu_check_grouped(st, &c, r, err); break;
    case CALIB_OP_ATTN_PREFILL: rc = gpu_check_prefill(st, &c, r, err); break;
    case CALIB_OP_ATTN_DECODE: rc = gpu_check_decode(st, &c, r, err); break;
    case CALIB_OP_LSE_MERGE: rc = gpu_check_lse_merge(st, &c, r, err); break;
    case CALIB_OP_SOFTMAX: rc = gpu_check_softmax(st, &c, r, err); break;
    case CALIB_OP_RMSNORM: rc = gpu_check_rmsnorm(st, &c, r, err); break;
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: rc = gpu_check_quant(st, &c, r, err); break;
    case CALIB_OP_COPY: rc = gpu_check_copy(st, &c, r, err); break;
    default:
        rc = sim_err_set(err, SIM_ENOTSUP, "no check for %s", calib_op_name(st->op));
        r->canary_broken = broken;
    }
    /* A failed download or allocation leaves no verdict, the canaries included. */
    if (!rc) r->canary_broken = broken;
    for (int i = 0; i < 6; i++) free(c.h[i]), free(c.f[i]);
    return rc;
}

static int gpu_identity(void *vst, calib_gpu_id *id, sim_err *err)
{
    gpu_state *st = vst;
    (void)err;
    memset(id, 0, sizeof *id);
    snprintf(id->name, sizeof id->name, "%s", st->info.name);
    id->sms = st->info.sms;
    snprintf(id->cc, sizeof id->cc, "%d.%d", st->info.cc_major, st->info.cc_minor);
    /* The clocks the GPU is set to run at (application clocks, else its
     * maximum) and the driver's own version string, from NVML: a GPU with
     * locked clocks or another driver is another identity. Without NVML,
     * the CUDA attributes (the maximum SM clock) and the CUDA driver API
     * version, marked as such. */
    int32_t sm = 0, mem = 0;
    if (st->nvml && calib_nvml_target_clocks(st->nvml, &sm, &mem) == 0) {
        id->sm_clock_mhz = sm, id->mem_clock_mhz = mem;
    } else {
        id->sm_clock_mhz = st->info.sm_clock_mhz, id->mem_clock_mhz = st->info.mem_clock_mhz;
    }
    char drv[96] = "";
    if (st->nvml) calib_nvml_driver(st->nvml, drv, sizeof drv);
    if (drv[0]) snprintf(id->driver, sizeof id->driver, "%s", drv);
    else
        snprintf(id->driver, sizeof id->driver, "cuda-api-%d.%d", st->info.driver_version / 1000,
                 st->info.driver_version % 1000 / 10);
    snprintf(id->cuda, sizeof id->cuda, "%d.%d", st->info.runtime_version / 1000, st->info.runtime_version % 1000 / 10);
    snprintf(id->backend, sizeof id->backend, "gpu");
    return 0;
}

static double gpu_peak(void *vst, calib_dtype dtype)
{
    return calib_peak_flops(((gpu_state *)vst)->info.name, dtype);
}

static void gpu_destroy(void *vst)
{
    gpu_state *st = vst;
    gpu_release(st);
    kern_gpu_free(st->flush);
    kern_gpu_timer_destroy(st->timer);
    kern_gpu_lib_destroy(st->lib);
    calib_nvml_close(st->nvml);
    free(st);
}

__attribute__((visibility("default"))) int calib_gpu_plugin_create(int32_t abi, calib_backend *b, sim_err *err)
{
    gpu_state *st = NULL;
    sim_err why;
    int32_t n = 0;
    int rc;
    memset(b, 0, sizeof *b);
    if (abi != CALIB_BACKEND_ABI)
        return sim_err_set(err, SIM_ENOTSUP,
                           "no NVIDIA GPU found (the GPU backend plugin was built for backend ABI %d, this servesim has %d: "
                           "rebuild both); " CALIB_NO_GPU_HINT,
                           (int)CALIB_BACKEND_ABI, (int)abi);
    if (kern_gpu_count(&n, &why) != 0 || n < 1)
        return sim_err_set(err, SIM_ENOTSUP, "no NVIDIA GPU found (%s); " CALIB_NO_GPU_HINT, why.msg);
    st = calloc(1, sizeof *st);
    if (!st) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    st->ndev = n;
    if ((rc = kern_gpu_select(0, &st->info, err)) || (rc = kern_gpu_timer_create(&st->timer, err)) ||
        (rc = kern_gpu_lib_create(&st->lib, err)))
        goto fail;
    /* Optional parts: without NVML no clocks are recorded and no sample is
     * dropped; without the flush buffer every point is measured warm. */
    if (calib_nvml_open(st->info.pci_bus_id[0] ? st->info.pci_bus_id : NULL, &st->nvml, &why)) st->nvml = NULL;
    st->flush_bytes = (size_t)(st->info.l2_bytes > 0 ? 2 * st->info.l2_bytes : 0);
    if (st->flush_bytes && kern_gpu_malloc(&st->flush, st->flush_bytes, &why)) st->flush = NULL, st->flush_bytes = 0;
    st->fp8_ok = st->info.cc_major * 10 + st->info.cc_minor >= 89;
    for (int32_t kind = 0; kind < (int32_t)(sizeof gk_gemm / sizeof gk_gemm[0]); kind++) {
        int ok = kind == GPU_GEMM_FP8         ? st->fp8_ok /* no fp8 tensor cores before Ada */
                 : kind == GPU_GEMM_SM90      ? kern_gpu_gemm_sm90_ok(&why) == 0
                 : kind == GPU_GEMM_SM100 || kind == GPU_GEMM_MXFP8_SM100 ? kern_gpu_gemm_sm100_ok(&why) == 0
                 : kind == GPU_GEMM_FP8_SM90  ? kern_gpu_gemm_fp8_block_sm90_ok(&why) == 0
                                              : 1;
        if (ok) st->gemm[st->ngemm] = gk_gemm[kind], st->gemm_kind[st->ngemm++] = kind;
    }
    st->grouped_sm90 = kern_gpu_grouped_sm90_ok(&why) == 0;
    for (int32_t kind = 0; kind < (int32_t)(sizeof gk_pf / sizeof gk_pf[0]); kind++)
        if (kind != GPU_PF_SM90 || kern_gpu_attn_prefill_sm90_ok(&why) == 0)
            st->pf[st->npf] = gk_pf[kind], st->pf_kind[st->npf++] = kind;
    b->name = "gpu";
    b->state = st;
    b->identity = gpu_identity;
    b->kernels = gpu_kernels;
    b->prepare = gpu_prepare;
    b->run = gpu_run;
    b->check = gpu_check;
    b->sample = gpu_sample;
    b->release = gpu_release;
    b->destroy = gpu_destroy;
    b->peak_flops = gpu_peak;
    b->peak_bw = calib_peak_bw(st->info.name);
    b->local_ranks = n;
    b->default_warmup = 3;
    b->default_reps = 20;
    return 0;
fail:
    gpu_destroy(st);
    return rc;
}
