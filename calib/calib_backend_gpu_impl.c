/* calib_backend_gpu_impl — the GPU backend, built only into the plugin
 * libservesim_gpu.so (kernels/kernels.cmake, -DSERVESIM_CUDA=ON) that
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

#include "../kernels/kern_attn_ref.h"
#include "../kernels/kern_gemm_ref.h"
#include "../kernels/kern_gpu.h"
#include "../kernels/kern_num.h"
#include "../kernels/kern_quant_ref.h"
#include "../kernels/kern_softmax_ref.h"

#include <math.h>
#include <stdlib.h>

#define GPU_IN 6    /* input buffers per set */
#define GPU_OUT 4   /* output buffers */
#define GPU_SETS 8  /* most rotating input sets */
#define GPU_PAGE 16
/* A timed sample spans back-to-back launches adding up to about this long,
 * captured into one CUDA graph where the launches allow it: one launch
 * between two events carries the events' and the host's few-µs floor
 * (6.7 µs for a 64 KB copy on an H200; 4.3 µs with eager back-to-back
 * launches, host-bound), which serving engines, replaying CUDA graphs, do
 * not pay per kernel. */
#define GPU_SAMPLE_S 200e-6
#define GPU_MAX_INNER 64

typedef struct {
    kern_gpu_info info;
    kern_gpu_timer *timer;
    kern_gpu_lib *lib;
    int32_t ndev;
    calib_op op;
    int32_t kernel, sets, cur, splits;
    int32_t inner; /* launches per timed sample; 0 until the first (warm-up) run sizes it */
    kern_gpu_graph *graph; /* the sample's launches captured once (NULL: eager launches) */
    int graph_tried;
    calib_shape s;
    void *in[GPU_SETS][GPU_IN];
    size_t in_bytes[GPU_IN];
    void *out[GPU_OUT];
    size_t out_bytes[GPU_OUT];
} gpu_state;

static const calib_kernel_desc gk_gemm[] = {{"kern_gemm_bf16_mma", 1, "bf16", 0}, {"cublas_gemm_ex", 1, "bf16", 1},
                                            {"kern_gemm_fp8_block_mma", 1, "fp8", 0}};
static const calib_kernel_desc gk_gc[] = {{"kern_grouped_contig_mma", 1, "bf16", 0}};
static const calib_kernel_desc gk_gm[] = {{"kern_grouped_masked_mma", 1, "bf16", 0}};
static const calib_kernel_desc gk_pf[] = {{"kern_attn_prefill_simt", 1, "bf16", 0}};
static const calib_kernel_desc gk_dec[] = {{"kern_decode_split_simt", 1, "bf16", 0}};
static const calib_kernel_desc gk_lse[] = {{"kern_lse_merge", 1, "fp32", 0}};
static const calib_kernel_desc gk_sm[] = {{"kern_softmax_warp", 1, "fp32", 0}, {"kern_softmax_block", 1, "fp32", 0}};
static const calib_kernel_desc gk_rms[] = {{"kern_rmsnorm", 1, "bf16", 0}};
static const calib_kernel_desc gk_q8[] = {{"kern_quant_fp8_block128", 1, "fp8", 0}};
static const calib_kernel_desc gk_mx[] = {{"kern_quant_mxfp8", 1, "mxfp8", 0}};
static const calib_kernel_desc gk_copy[] = {{"cuda_memcpy_d2d", 1, "u8", 1}};
static const calib_kernel_desc gk_ar[] = {{"nccl_allreduce", 1, "bf16", 1}};

static void gpu_kernels(void *vst, calib_op op, const calib_kernel_desc **list, int32_t *n, const char **why)
{
    gpu_state *st = vst;
    int cc = st->info.cc_major * 10 + st->info.cc_minor;
    *why = NULL;
#define GK(arr) (*list = (arr), *n = (int32_t)(sizeof(arr) / sizeof((arr)[0])))
    switch (op) {
    case CALIB_OP_GEMM:
        GK(gk_gemm);
        if (cc < 89) *n = 2; /* no fp8 tensor cores before Ada */
        break;
    case CALIB_OP_GROUPED_CONTIG: GK(gk_gc); break;
    case CALIB_OP_GROUPED_MASKED: GK(gk_gm); break;
    case CALIB_OP_ATTN_PREFILL: GK(gk_pf); break;
    case CALIB_OP_ATTN_DECODE: GK(gk_dec); break;
    case CALIB_OP_LSE_MERGE: GK(gk_lse); break;
    case CALIB_OP_SOFTMAX: GK(gk_sm); break;
    case CALIB_OP_RMSNORM: GK(gk_rms); break;
    case CALIB_OP_QUANT_FP8: GK(gk_q8); break;
    case CALIB_OP_QUANT_MXFP8: GK(gk_mx); break;
    case CALIB_OP_COPY: GK(gk_copy); break;
    case CALIB_OP_ALLREDUCE:
        /* A one-rank all-reduce is a no-op NCCL short-cuts: its "bandwidth"
         * would be meaningless and TP=1 layouts have no collective to price. */
        if (st->ndev < 2) {
            *list = NULL, *n = 0, *why = "all-reduce needs at least 2 GPUs on this host; not measured";
            break;
        }
        GK(gk_ar);
        break;
    default: *list = NULL, *n = 0, *why = "unknown op";
    }
#undef GK
}

static void gpu_release(void *vst)
{
    gpu_state *st = vst;
    for (int s = 0; s < GPU_SETS; s++)
        for (int i = 0; i < GPU_IN; i++) kern_gpu_free(st->in[s][i]), st->in[s][i] = NULL;
    for (int i = 0; i < GPU_OUT; i++) kern_gpu_free(st->out[i]), st->out[i] = NULL;
    memset(st->in_bytes, 0, sizeof st->in_bytes);
    memset(st->out_bytes, 0, sizeof st->out_bytes);
    kern_gpu_graph_destroy(st->graph); /* it launched on the buffers just freed */
    st->graph = NULL, st->graph_tried = 0;
}

/* Input i: bytes, and how to fill it (0 f32, 1 bf16, 2 e4m3, 3 leave). */
typedef struct {
    size_t bytes;
    int kind;
    float amp;
} gpu_in_spec;

static int gpu_setup(gpu_state *st, const gpu_in_spec *in, int nin, const size_t *out, int nout, sim_err *err)
{
    size_t total = 0;
    int rc;
    for (int i = 0; i < nin; i++) total += in[i].bytes;
    /* Enough sets that consecutive runs never find their inputs in L2. */
    int64_t want = total ? (2 * st->info.l2_bytes + (int64_t)total - 1) / (int64_t)total : 1;
    st->sets = (int32_t)(want < 1 ? 1 : want > GPU_SETS ? GPU_SETS : want);
    st->cur = 0, st->inner = 0;
    for (int s = 0; s < st->sets; s++)
        for (int i = 0; i < nin; i++) {
            st->in_bytes[i] = in[i].bytes;
            if ((rc = kern_gpu_malloc(&st->in[s][i], in[i].bytes, err))) return rc;
            uint64_t seed = 0x9e37u * (uint64_t)(s + 1) + (uint64_t)i;
            if (in[i].kind == 0) rc = kern_gpu_fill_f32(st->in[s][i], (int64_t)(in[i].bytes / 4), seed, in[i].amp, err);
            else if (in[i].kind == 1) rc = kern_gpu_fill_bf16(st->in[s][i], (int64_t)(in[i].bytes / 2), seed, in[i].amp, err);
            else if (in[i].kind == 2) rc = kern_gpu_fill_e4m3(st->in[s][i], (int64_t)in[i].bytes, seed, in[i].amp, err);
            if (rc) return rc;
        }
    for (int i = 0; i < nout; i++) {
        st->out_bytes[i] = out[i];
        if ((rc = kern_gpu_malloc(&st->out[i], out[i], err))) return rc;
    }
    return kern_gpu_sync(err);
}

/* Decode splits: enough blocks to fill the SMs twice, at most one per page. */
static int32_t gpu_decode_splits(const gpu_state *st, const calib_shape *s)
{
    int64_t blocks = s->batch * s->kv_heads, pages = (s->ctx + GPU_PAGE - 1) / GPU_PAGE;
    int64_t sp = blocks > 0 ? (2 * st->info.sms + blocks - 1) / blocks : 1;
    if (sp > pages) sp = pages;
    if (sp > 64) sp = 64;
    return (int32_t)(sp < 1 ? 1 : sp);
}

static int gpu_prepare(void *vst, calib_op op, int32_t kernel, const calib_shape *s, sim_err *err)
{
    gpu_state *st = vst;
    int rc;
    gpu_release(st);
    st->op = op, st->kernel = kernel, st->s = *s;
    size_t m = (size_t)s->m, n = (size_t)s->n, k = (size_t)s->k, d = (size_t)s->head_dim;
    switch (op) {
    case CALIB_OP_GEMM:
        if (kernel < 2) {
            gpu_in_spec in[2] = {{m * k * 2, 1, 1.0f}, {k * n * 2, 1, 1.0f}};
            size_t out[1] = {m * n * 2};
            rc = gpu_setup(st, in, 2, out, 1, err);
        } else {
            size_t kb = k / 128, nb = (n + 127) / 128;
            gpu_in_spec in[4] = {{m * k, 2, 4.0f}, {m * kb * 4, 0, 1.0f}, {n * k, 2, 4.0f}, {nb * kb * 4, 0, 1.0f}};
            size_t out[1] = {m * n * 2};
            rc = gpu_setup(st, in, 4, out, 1, err);
        }
        break;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: {
        size_t E = (size_t)s->groups;
        gpu_in_spec in[2] = {{E * m * k * 2, 1, 1.0f}, {E * k * n * 2, 1, 1.0f}};
        size_t out[2] = {E * m * n * 2, (E + 1) * sizeof(int64_t)};
        if ((rc = gpu_setup(st, in, 2, out, 2, err))) break;
        int64_t *h = malloc((E + 1) * sizeof *h);
        if (!h) return sim_err_set(err, SIM_ENOMEM, "out of memory");
        for (size_t e = 0; e <= E; e++) h[e] = op == CALIB_OP_GROUPED_CONTIG ? (int64_t)(e * m) : (int64_t)m;
        rc = kern_gpu_h2d(st->out[1], h, (E + 1) * sizeof *h, err);
        free(h);
        break;
    }
    case CALIB_OP_ATTN_PREFILL: {
        size_t b = (size_t)s->batch, nkv = (size_t)(s->ctx + s->m);
        gpu_in_spec in[3] = {{b * m * (size_t)s->heads * d * 2, 1, 2.0f}, {b * nkv * (size_t)s->kv_heads * d * 2, 1, 2.0f},
                             {b * nkv * (size_t)s->kv_heads * d * 2, 1, 1.0f}};
        size_t out[2] = {b * m * (size_t)s->heads * d * 2, b * m * (size_t)s->heads * 4};
        rc = gpu_setup(st, in, 3, out, 2, err);
        break;
    }
    case CALIB_OP_ATTN_DECODE: {
        size_t b = (size_t)s->batch, pages = (size_t)((s->ctx + GPU_PAGE - 1) / GPU_PAGE), np = b * pages;
        size_t rows = b * (size_t)s->heads;
        st->splits = gpu_decode_splits(st, s);
        gpu_in_spec in[3] = {{rows * d * 2, 1, 2.0f}, {np * GPU_PAGE * (size_t)s->kv_heads * d * 2, 1, 2.0f},
                             {np * GPU_PAGE * (size_t)s->kv_heads * d * 2, 1, 1.0f}};
        size_t sp = (size_t)st->splits;
        size_t out[4] = {sp * rows * (d + 1) * 4, rows * (d + 1) * 4, b * 4, np * 4};
        if ((rc = gpu_setup(st, in, 3, out, 4, err))) break;
        int32_t *h = malloc((b + np) * sizeof *h);
        if (!h) return sim_err_set(err, SIM_ENOMEM, "out of memory");
        for (size_t i = 0; i < b; i++) h[i] = (int32_t)s->ctx;
        for (size_t i = 0; i < np; i++) h[b + i] = (int32_t)((i * 7919) % np); /* scattered pages */
        rc = kern_gpu_h2d(st->out[2], h, b * 4, err);
        if (!rc) rc = kern_gpu_h2d(st->out[3], h + b, np * 4, err);
        free(h);
        break;
    }
    case CALIB_OP_LSE_MERGE: {
        size_t P = (size_t)s->ranks;
        gpu_in_spec in[2] = {{P * m * d * 4, 0, 1.0f}, {P * m * 4, 0, 3.0f}};
        size_t out[2] = {m * d * 4, m * 4};
        rc = gpu_setup(st, in, 2, out, 2, err);
        break;
    }
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
    case CALIB_OP_QUANT_MXFP8: {
        gpu_in_spec in[1] = {{m * n * 2, 1, 100.0f}};
        size_t out[2] = {m * n, m * (n / 32 + 1) * 4};
        rc = gpu_setup(st, in, 1, out, 2, err);
        break;
    }
    case CALIB_OP_COPY: {
        gpu_in_spec in[1] = {{(size_t)s->bytes, 2, 1.0f}};
        size_t out[1] = {(size_t)s->bytes};
        rc = gpu_setup(st, in, 1, out, 1, err);
        break;
    }
    case CALIB_OP_ALLREDUCE: rc = 0; break; /* buffers live in the NCCL context */
    default: rc = sim_err_set(err, SIM_ENOTSUP, "GPU backend: op %s not supported", calib_op_name(op));
    }
    if (rc) gpu_release(st);
    return rc;
}

/* Launches the prepared op on input set `set`. */
static int gpu_launch(gpu_state *st, int set, sim_err *err)
{
    const calib_shape *s = &st->s;
    void **in = st->in[set], **out = st->out;
    switch (st->op) {
    case CALIB_OP_GEMM:
        if (st->kernel == 0) return kern_gpu_gemm_bf16(s->m, s->n, s->k, in[0], in[1], out[0], err);
        if (st->kernel == 1) return kern_gpu_cublas_gemm_bf16(st->lib, s->m, s->n, s->k, in[0], in[1], out[0], err);
        return kern_gpu_gemm_fp8_block(s->m, s->n, s->k, in[0], in[1], in[2], in[3], out[0], err);
    case CALIB_OP_GROUPED_CONTIG:
        return kern_gpu_grouped_contig((int32_t)s->groups, s->m, s->n, s->k, out[1], in[0], in[1], out[0], err);
    case CALIB_OP_GROUPED_MASKED:
        return kern_gpu_grouped_masked((int32_t)s->groups, s->m, s->n, s->k, out[1], in[0], in[1], out[0], err);
    case CALIB_OP_ATTN_PREFILL:
        return kern_gpu_attn_prefill((int32_t)s->batch, (int32_t)s->m, (int32_t)s->ctx, (int32_t)s->heads,
                                     (int32_t)s->kv_heads, (int32_t)s->head_dim, 1.0f / sqrtf((float)s->head_dim), in[0],
                                     in[1], in[2], out[0], out[1], err);
    case CALIB_OP_ATTN_DECODE: {
        int64_t rows = s->batch * s->heads, d = s->head_dim;
        float *op = out[0], *lp = op + st->splits * rows * d, *o = out[1], *l = o + rows * d;
        int32_t maxp = (int32_t)((s->ctx + GPU_PAGE - 1) / GPU_PAGE);
        int rc = kern_gpu_decode_split((int32_t)s->batch, (int32_t)s->heads, (int32_t)s->kv_heads, (int32_t)d, GPU_PAGE,
                                       maxp, 1.0f / sqrtf((float)d), out[2], out[3], st->splits, in[0], in[1], in[2], op,
                                       lp, err);
        return rc ? rc : kern_gpu_lse_merge(st->splits, rows, (int32_t)d, op, lp, o, l, err);
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

static int gpu_run(void *vst, double *seconds, sim_err *err)
{
    gpu_state *st = vst;
    int rc;
    if (st->op == CALIB_OP_ALLREDUCE) return kern_gpu_nccl_allreduce(st->lib, (int32_t)st->s.ranks, st->s.bytes, seconds, err);
    int32_t inner = st->inner > 0 ? st->inner : 1;
    if (st->inner > 0 && !st->graph_tried) {
        /* Capture the sample's launches once; if anything refuses capture,
         * time eager back-to-back launches instead. */
        sim_err cerr;
        st->graph_tried = 1;
        if (kern_gpu_capture_begin(&cerr) == 0) {
            int ok = 1;
            for (int32_t j = 0; j < inner && ok; j++) ok = gpu_launch(st, (st->cur + 1 + j) % st->sets, &cerr) == 0;
            kern_gpu_capture_end(ok, &st->graph, &cerr);
        }
    }
    if ((rc = kern_gpu_timer_start(st->timer, err))) return rc;
    if (st->graph) {
        if ((rc = kern_gpu_graph_launch(st->graph, err))) return rc;
    } else {
        for (int32_t j = 0; j < inner; j++) {
            st->cur = (st->cur + 1) % st->sets;
            if ((rc = gpu_launch(st, st->cur, err))) return rc;
        }
    }
    if ((rc = kern_gpu_timer_stop(st->timer, seconds, err))) return rc;
    if (st->inner == 0) {
        double want = *seconds > 0 ? ceil(GPU_SAMPLE_S / *seconds) : GPU_MAX_INNER;
        st->inner = (int32_t)(want < 1 ? 1 : want > GPU_MAX_INNER ? GPU_MAX_INNER : want);
    }
    *seconds /= inner;
    return 0;
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
    float *f = h ? malloc(n * sizeof *f) : NULL;
    if (h && !f) *rc = sim_err_set(err, SIM_ENOMEM, "check: out of memory");
    if (f) kern_bf16_to_f32_n(h, f, (int64_t)n);
    free(h);
    return f;
}

static double gpu_rel(const float *got, const float *ref, size_t n)
{
    double m = 0.0, sc = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]);
        m = isnan(d) ? INFINITY : fmax(m, d), sc = fmax(sc, fabs(ref[i]));
    }
    return m / fmax(sc, 1e-30);
}

static double gpu_abs(const float *got, const float *ref, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]);
        m = isnan(d) ? INFINITY : fmax(m, d);
    }
    return m;
}

/* Runs the prepared point on input set 0 and compares with the CPU
 * reference on the same values. Tolerances by output dtype: bf16 outputs
 * 1e-2 of max |ref| (two roundings plus accumulation order), fp32 1e-4 or
 * better, quantisation its format bound (error/bound ≤ 1). */
static int gpu_check(void *vst, double *error, double *tol, sim_err *err)
{
    gpu_state *st = vst;
    const calib_shape *s = &st->s;
    size_t m = (size_t)s->m, n = (size_t)s->n, k = (size_t)s->k, d = (size_t)s->head_dim;
    void **in = st->in[0];
    void *h[6] = {0};
    float *f[6] = {0};
    int rc = 0;
    *error = INFINITY, *tol = 0.0;
    if (st->op == CALIB_OP_ALLREDUCE)
        return sim_err_set(err, SIM_ENOTSUP, "NCCL all-reduce is a library reference; not checked");
    if ((rc = gpu_launch(st, 0, err)) || (rc = kern_gpu_sync(err))) return rc;
#define FETCH_BF(slot, ptr, cnt) if (!(f[slot] = gpu_bf16_fetch((ptr), (cnt), &rc, err))) goto fail
#define FETCH(slot, ptr, bytes) if (!(h[slot] = gpu_fetch((ptr), (bytes), &rc, err))) goto fail
#define ALLOC(slot, cnt)                                                      \
    if (!(f[slot] = malloc((cnt) * sizeof(float)))) {                         \
        rc = sim_err_set(err, SIM_ENOMEM, "check: out of memory");            \
        goto fail;                                                            \
    }
    switch (st->op) {
    case CALIB_OP_GEMM:
        if (st->kernel < 2) {
            FETCH_BF(0, in[0], m * k);
            FETCH_BF(1, in[1], k * n);
            FETCH_BF(2, st->out[0], m * n);
            ALLOC(3, m * n);
            kern_gemm_f32_ref((int64_t)m, (int64_t)n, (int64_t)k, f[0], f[1], f[3]);
            *error = gpu_rel(f[2], f[3], m * n);
        } else {
            size_t kb = k / 128, nb = (n + 127) / 128;
            FETCH(0, in[0], m * k);
            FETCH(1, in[1], m * kb * 4);
            FETCH(2, in[2], n * k);
            FETCH(3, in[3], nb * kb * 4);
            FETCH_BF(0, st->out[0], m * n);
            uint16_t *ref = malloc(m * n * 2);
            ALLOC(1, m * n);
            if (!ref) {
                rc = sim_err_set(err, SIM_ENOMEM, "check: out of memory");
                goto fail;
            }
            kern_gemm_fp8_block_ref((int64_t)m, (int64_t)n, (int64_t)k, h[0], h[1], h[2], h[3], ref);
            kern_bf16_to_f32_n(ref, f[1], (int64_t)(m * n));
            free(ref);
            *error = gpu_rel(f[0], f[1], m * n);
        }
        *tol = 1e-2;
        break;
    case CALIB_OP_GROUPED_CONTIG:
    case CALIB_OP_GROUPED_MASKED: {
        size_t E = (size_t)s->groups;
        FETCH_BF(0, in[0], E * m * k);
        FETCH_BF(1, in[1], E * k * n);
        FETCH_BF(2, st->out[0], E * m * n);
        ALLOC(3, E * m * n);
        for (size_t e = 0; e < E; e++)
            kern_gemm_f32_ref((int64_t)m, (int64_t)n, (int64_t)k, f[0] + e * m * k, f[1] + e * k * n, f[3] + e * m * n);
        *error = gpu_rel(f[2], f[3], E * m * n);
        *tol = 1e-2;
        break;
    }
    case CALIB_OP_ATTN_PREFILL: {
        size_t b = (size_t)s->batch, nkv = (size_t)(s->ctx + s->m), hq = (size_t)s->heads, hk = (size_t)s->kv_heads;
        FETCH_BF(0, in[0], b * m * hq * d);
        FETCH_BF(1, in[1], b * nkv * hk * d);
        FETCH_BF(2, in[2], b * nkv * hk * d);
        FETCH_BF(3, st->out[0], b * m * hq * d);
        ALLOC(4, b * m * hq * d);
        kern_prefill_shape ps = {(int32_t)m, (int32_t)s->ctx, (int32_t)hq, (int32_t)hk, (int32_t)d, 1.0f / sqrtf((float)d)};
        for (size_t i = 0; i < b; i++)
            kern_attn_naive_ref(&ps, f[0] + i * m * hq * d, f[1] + i * nkv * hk * d, f[2] + i * nkv * hk * d,
                                f[4] + i * m * hq * d, NULL);
        *error = gpu_abs(f[3], f[4], b * m * hq * d);
        *tol = 2e-2;
        break;
    }
    case CALIB_OP_ATTN_DECODE: {
        size_t b = (size_t)s->batch, pages = (size_t)((s->ctx + GPU_PAGE - 1) / GPU_PAGE), np = b * pages;
        size_t rows = b * (size_t)s->heads, hk = (size_t)s->kv_heads, sp = (size_t)st->splits;
        FETCH_BF(0, in[0], rows * d);
        FETCH_BF(1, in[1], np * GPU_PAGE * hk * d);
        FETCH_BF(2, in[2], np * GPU_PAGE * hk * d);
        FETCH(0, st->out[1], rows * d * 4);
        FETCH(1, st->out[2], b * 4);
        FETCH(2, st->out[3], np * 4);
        ALLOC(3, sp * rows * (d + 1));
        ALLOC(4, rows * d);
        kern_paged_shape ps = {(int32_t)b, (int32_t)s->heads, (int32_t)hk, (int32_t)d, GPU_PAGE, (int32_t)pages,
                               1.0f / sqrtf((float)d), h[1], h[2]};
        kern_decode_split_ref(&ps, (int32_t)sp, f[0], f[1], f[2], f[3], f[3] + sp * rows * d);
        kern_lse_merge_ref((int32_t)sp, (int64_t)rows, (int32_t)d, f[3], f[3] + sp * rows * d, f[4], NULL);
        *error = gpu_abs(h[0], f[4], rows * d);
        *tol = 1e-3;
        break;
    }
    case CALIB_OP_LSE_MERGE: {
        size_t P = (size_t)s->ranks;
        FETCH(0, in[0], P * m * d * 4);
        FETCH(1, in[1], P * m * 4);
        FETCH(2, st->out[0], m * d * 4);
        FETCH(3, st->out[1], m * 4);
        ALLOC(0, m * d);
        ALLOC(1, m);
        kern_lse_merge_ref((int32_t)P, (int64_t)m, (int32_t)d, h[0], h[1], f[0], f[1]);
        *error = fmax(gpu_abs(h[2], f[0], m * d), gpu_abs(h[3], f[1], m));
        *tol = 1e-4;
        break;
    }
    case CALIB_OP_SOFTMAX:
        FETCH(0, in[0], m * n * 4);
        FETCH(1, st->out[0], m * n * 4);
        ALLOC(0, m * n);
        kern_softmax_twopass_ref(h[0], (int64_t)m, (int64_t)n, f[0]);
        *error = gpu_rel(h[1], f[0], m * n);
        *tol = 1e-4;
        break;
    case CALIB_OP_RMSNORM:
        FETCH_BF(0, in[0], m * n);
        FETCH(0, in[1], n * 4);
        FETCH_BF(1, st->out[0], m * n);
        ALLOC(2, m * n);
        kern_rmsnorm_ref(f[0], h[0], (int64_t)m, (int64_t)n, 1e-6f, f[2]);
        *error = gpu_rel(f[1], f[2], m * n);
        *tol = 1e-2;
        break;
    case CALIB_OP_QUANT_FP8:
    case CALIB_OP_QUANT_MXFP8: {
        int mx = st->op == CALIB_OP_QUANT_MXFP8;
        size_t blk = mx ? 32 : 128, nb = n / blk;
        FETCH_BF(0, in[0], m * n);
        FETCH(0, st->out[0], m * n);
        FETCH(1, st->out[1], m * nb * (mx ? 1 : 4));
        ALLOC(1, m * n);
        if (mx) kern_dequant_mxfp8_ref(h[0], h[1], (int64_t)m, (int64_t)n, f[1]);
        else kern_dequant_fp8_block128_ref(h[0], h[1], (int64_t)m, (int64_t)n, f[1]);
        double worst = 0.0;
        for (size_t r = 0; r < m; r++)
            for (size_t bi = 0; bi < nb; bi++) {
                float amax = 0.0f;
                for (size_t c = bi * blk; c < (bi + 1) * blk; c++) amax = fmaxf(amax, fabsf(f[0][r * n + c]));
                float sc = mx ? kern_e8m0_to_f32(((uint8_t *)h[1])[r * nb + bi]) : ((float *)h[1])[r * nb + bi];
                float want = mx ? kern_e8m0_to_f32(amax > 0 ? kern_e8m0_ceil_pow2(amax / KERN_E4M3_MAX) : 127)
                                : (amax > 0 ? amax / KERN_E4M3_MAX : 1.0f);
                if (fabsf(sc - want) > 1e-6f * want) worst = INFINITY; /* wrong scale */
                for (size_t c = bi * blk; c < (bi + 1) * blk; c++) {
                    double x = f[0][r * n + c];
                    worst = fmax(worst, fabs(x - f[1][r * n + c]) / (0x1p-4 * fabs(x) + 0x1p-10 * sc * 1.0001));
                }
            }
        *error = worst;
        *tol = 1.0;
        break;
    }
    case CALIB_OP_COPY:
        FETCH(0, in[0], (size_t)s->bytes);
        FETCH(1, st->out[0], (size_t)s->bytes);
        *error = memcmp(h[0], h[1], (size_t)s->bytes) ? 1.0 : 0.0;
        *tol = 0.0;
        break;
    default: rc = sim_err_set(err, SIM_ENOTSUP, "no check for %s", calib_op_name(st->op));
    }
#undef FETCH_BF
#undef FETCH
#undef ALLOC
fail:
    for (int i = 0; i < 6; i++) free(h[i]), free(f[i]);
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
    id->sm_clock_mhz = st->info.sm_clock_mhz;
    id->mem_clock_mhz = st->info.mem_clock_mhz;
    snprintf(id->driver, sizeof id->driver, "%d.%d", st->info.driver_version / 1000, st->info.driver_version % 1000 / 10);
    snprintf(id->cuda, sizeof id->cuda, "%d.%d", st->info.runtime_version / 1000, st->info.runtime_version % 1000 / 10);
    snprintf(id->backend, sizeof id->backend, "gpu");
    return 0;
}

/* Dense peaks (FLOP/s) and HBM bandwidth from gpu-specs.md, by name. */
static const struct {
    const char *key;
    double bf16, fp8, bw;
} gpu_peaks[] = {{"A100", 312e12, 0, 2.04e12}, {"H100", 989.4e12, 1979e12, 3.35e12}, {"H200", 989.4e12, 1979e12, 4.8e12},
                 {"GB200", 2500e12, 5000e12, 8e12}, {"B200", 2250e12, 4500e12, 8e12}, {"B300", 2250e12, 4500e12, 8e12}};

static int gpu_peak_index(const gpu_state *st)
{
    for (size_t i = 0; i < sizeof gpu_peaks / sizeof gpu_peaks[0]; i++)
        if (strstr(st->info.name, gpu_peaks[i].key)) return (int)i;
    return -1;
}

static double gpu_peak(void *vst, const char *dtype)
{
    int i = gpu_peak_index(vst);
    if (i < 0) return 0.0;
    if (strcmp(dtype, "fp8") == 0 || strcmp(dtype, "mxfp8") == 0) return gpu_peaks[i].fp8;
    if (strcmp(dtype, "fp32") == 0) return gpu_peaks[i].bf16 / 2.0; /* tf32-class: only a bound */
    return gpu_peaks[i].bf16;
}

static void gpu_destroy(void *vst)
{
    gpu_state *st = vst;
    gpu_release(st);
    kern_gpu_timer_destroy(st->timer);
    kern_gpu_lib_destroy(st->lib);
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
        return sim_err_set(err, SIM_ENOTSUP, "no NVIDIA GPU backend: the plugin was built for backend ABI %d, this servesim has %d (rebuild both)",
                           (int)CALIB_BACKEND_ABI, (int)abi);
    if (kern_gpu_count(&n, &why) != 0 || n < 1)
        return sim_err_set(err, SIM_ENOTSUP, "no NVIDIA GPU found (%s); " CALIB_NO_GPU_HINT, why.msg);
    st = calloc(1, sizeof *st);
    if (!st) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    st->ndev = n;
    if ((rc = kern_gpu_select(0, &st->info, err)) || (rc = kern_gpu_timer_create(&st->timer, err)) ||
        (rc = kern_gpu_lib_create(&st->lib, err)))
        goto fail;
    b->name = "gpu";
    b->state = st;
    b->identity = gpu_identity;
    b->kernels = gpu_kernels;
    b->prepare = gpu_prepare;
    b->run = gpu_run;
    b->check = gpu_check;
    b->release = gpu_release;
    b->destroy = gpu_destroy;
    b->peak_flops = gpu_peak;
    int pi = gpu_peak_index(st);
    b->peak_bw = pi >= 0 ? gpu_peaks[pi].bw : 0.0;
    b->local_ranks = n;
    b->default_warmup = 3;
    b->default_reps = 20;
    return 0;
fail:
    gpu_destroy(st);
    return rc;
}
