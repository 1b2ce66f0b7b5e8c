/* model_cost_vision — the vision tower's pass over a request's images
 * (model_cost_encode in model_cost.h), priced op by op with the iteration's
 * pricing: GEMMs through cost_gemm (the perf-db's GEMM rows or the
 * engine's op model when attached, else the roofline with tile waves and
 * split-K), the bidirectional attention as a context-attention op, norms,
 * activations and pooling as HBM-bound elementwise ops; then the eager host
 * floor (the tower runs without CUDA graphs) in eval_run's form,
 * cost_eager_extra: the longer of the host's launch time and the device
 * time, plus scheduler.eager_serial of the shorter.
 *
 * Ops, for P patches (items × the grid's rows: t·h·w, a Gemma-4 item's
 * padded N·k² per frame), S attention sequences of L patches (plus, for a
 * Kimi video whose last chunk has fewer frames, one per item of the
 * grid's tail_len: vis_attn_tail) and V merged tokens, tower width H,
 * heads n of head_dim d, MLP width I, C·T·p² values per patch (channels ×
 * temporal patch × patch²):
 *   vis_patch_embed   P × H × C·T·p²
 *   per layer (× layers): vis_norm1, vis_qkv P × 3·n·d × H, vis_attn
 *   (4·n·d·L² FLOPs per sequence: QKᵀ and PV over every pair, no causal
 *   half), vis_o_proj P × H × n·d, vis_norm2, the MLP (fc1 P × I × H,
 *   activation, fc2 P × H × I; gated: gate_up P × 2I × H, activation,
 *   down P × H × I);
 *   merger (× mergers: Qwen3-VL's DeepStack mergers are the same shape):
 *   a Kimi video's vis_tpool first (each chunk averaged over its frames:
 *   P rows read, V·merge² written), vis_merger_norm on V·merge² rows,
 *   vis_merger_fc1 V × Mi × Mi, activation,
 *   vis_merger_fc2 V × out × Mi (Mi = merge² × H); Gemma-4: vis_pool (k×k
 *   average), vis_proj_norm, vis_proj V × out × H.
 * The tower is bf16 (checkpoints keep it so when the language model is
 * quantised). A multi-GPU instance encodes data-parallel: each of `ranks`
 * GPUs encodes whole items, the busiest ⌈items/ranks⌉ of them (vLLM's
 * mm_encoder_tp_mode "data"); the result is that GPU's time. */
#include "model_cost_impl.h"
#include "model_vision.h"

#include "calib_op.h"

#include <math.h>

/* An HBM-bound elementwise op reading and writing `bytes` in all. */
static void vis_elem(cost_ctx *x, const char *name, double count, double rows, double bytes)
{
    cost_op_desc d;
    cost_roof_desc(&d, x->c, name, MODEL_OPC_OTHER, count, rows, 0, bytes, 0, 1);
    cost_op(x, &d, 0);
}

static void vis_gemm(cost_ctx *x, const char *name, double count, double m, double n, double k)
{
    cost_op_desc d;
    cost_gemm(&d, x->c, name, count, m, n, k, COST_ACT_BYTES, COST_ACT_BYTES, x->c->peak_bf16);
    cost_op(x, &d, 0);
}

/* Bidirectional attention within each of S sequences of L patches. The
 * perf-db's context attention rows are causal (L²/2 pairs for L new
 * tokens), so the L² pairs are looked up as twice the sequences. */
static void vis_attn(cost_ctx *x, const model_vision *v, const char *name, double layers, double S, double L)
{
    const double nd = (double)v->heads * v->head_dim;
    cost_op_desc a;
    cost_roof_desc(&a, x->c, name, MODEL_OPC_ATTN, layers, S * L, 4.0 * nd * L * L * S,
                   4.0 * S * L * nd * COST_ACT_BYTES, x->c->peak_attn, 1);
    a.calib_op = CALIB_OP_ATTN_PREFILL;
    a.shape[0] = (int64_t)L;
    a.shape[3] = (int64_t)(2 * S);
    a.shape[5] = v->heads, a.shape[6] = v->heads, a.shape[7] = v->head_dim;
    cost_op(x, &a, 0);
}

double model_cost_encode(const model_cost *c, const model_vision *v, const model_media_grid *g, int32_t items,
                         int32_t ranks, model_op *ops, int32_t max, int32_t *n_ops, model_iter_cost *out)
{
    cost_ctx x;
    cost_ctx_start(&x, c, ops, max, c->launch);
    const int known = v->family == MODEL_VISION_QWEN3_VL || v->family == MODEL_VISION_KIMI_K25 ||
                      v->family == MODEL_VISION_GEMMA4;
    if (items < 1 || !known || g->patches < 1) {
        if (n_ops) *n_ops = 0;
        if (out) *out = (model_iter_cost){0, 0, 0, 0, 0, 0, "roofline", 0, 0};
        return 0;
    }
    if (ranks < 1) ranks = 1;
    const double n_items = ceil((double)items / ranks);
    const double P = n_items * (double)g->patches, S = n_items * g->seqs, L = (double)g->seq_len;
    /* P counts every row the layers run on: a Gemma-4 image's padding too. */
    const double V = n_items * (double)g->tokens;
    const double H = v->hidden, I = v->intermediate, nd = (double)v->heads * v->head_dim, Ly = v->layers;
    const double B = COST_ACT_BYTES;
    vis_gemm(&x, "vis_patch_embed", 1, P, H, (double)v->in_channels * v->temporal_patch * v->patch * v->patch);
    vis_elem(&x, "vis_norm1", Ly, P, 2 * P * H * B);
    vis_gemm(&x, "vis_qkv", Ly, P, 3 * nd, H);
    vis_attn(&x, v, "vis_attn", Ly, S, L);
    if (g->tail_len > 0) vis_attn(&x, v, "vis_attn_tail", Ly, n_items, (double)g->tail_len);
    vis_gemm(&x, "vis_o_proj", Ly, P, H, nd);
    vis_elem(&x, "vis_norm2", Ly, P, 2 * P * H * B);
    if (v->gated) {
        vis_gemm(&x, "vis_gate_up", Ly, P, 2 * I, H);
        vis_elem(&x, "vis_act", Ly, P, 3 * P * I * B);
        vis_gemm(&x, "vis_down", Ly, P, H, I);
    } else {
        vis_gemm(&x, "vis_fc1", Ly, P, I, H);
        vis_elem(&x, "vis_act", Ly, P, 2 * P * I * B);
        vis_gemm(&x, "vis_fc2", Ly, P, H, I);
    }
    if (v->merger_inter > 0) {
        /* The merger takes merge² rows per token: every patch (Qwen3-VL,
         * Kimi images), or a Kimi video's chunks averaged over their
         * frames first (sd2_tpool). */
        const double Mi = v->merger_inter, nm = v->mergers, R = V * v->merge * v->merge;
        if (P > R) vis_elem(&x, "vis_tpool", 1, P, (P + R) * H * B);
        vis_elem(&x, "vis_merger_norm", nm, R, 2 * R * H * B);
        vis_gemm(&x, "vis_merger_fc1", nm, V, Mi, Mi);
        vis_elem(&x, "vis_merger_act", nm, V, 2 * V * Mi * B);
        vis_gemm(&x, "vis_merger_fc2", nm, V, v->out_hidden, Mi);
    } else {
        vis_elem(&x, "vis_pool", 1, P, (P + V) * H * B);
        vis_elem(&x, "vis_proj_norm", 1, V, 2 * V * H * B);
        vis_gemm(&x, "vis_proj", 1, V, v->out_hidden, H);
    }
    /* Eager: the host launches every kernel. */
    const double device = cost_device_s(&x);
    const double add = cost_eager_extra(c, x.launches * c->l.eager_launch_s, device);
    if (add > 0)
        cost_fixed(&x, "eager_host", MODEL_OPC_OVERHEAD, MODEL_BOUND_HOST, 1, add, 0, "tower launches > GPU time");
    return cost_ctx_finish(&x, n_ops, out);
}
