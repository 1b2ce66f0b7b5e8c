/* model_cost — analytic roofline behind model_cost.h.
 *
 * The model (dense or MoE transformer, optional MLA and sliding windows) is
 * reduced at create time to per-rank aggregates summed over all layers:
 * GEMM FLOPs per token and weight bytes per iteration, attention FLOPs per
 * query·key pair, KV bytes per cached token, elementwise traffic per token,
 * kernel count and collective costs. An iteration is then
 *
 *   gemm  = max(T·F/(peak·eff_gemm), W/(bw·eff_mem))      per layer group
 *   attn  = max(pairs·f/(peak·eff_attn), kv bytes/(bw·eff_mem))
 *   comm  = (2·layers+1)·(α(tp) + 2(tp−1)/tp·T·h·2/(link·eff)) + PP sends
 *   other = elementwise bytes/bw + sampling + kernels·launch floor
 *   total = gemm + attn + comm + other + overhead (+ per-request overhead)
 *
 * with T all tokens of the iteration. The groups are: attention projections
 * plus dense FFNs; MoE layers (routed experts read only for the experts the
 * batch touches, E·(1−(1−k/E)^T) per layer; experts TP-sharded, no EP yet);
 * LM head on the sampled rows only (one per prefill chunk and decode
 * request), always in bf16 as checkpoints keep it so.
 *
 * Pipeline parallelism: the stages run one after the other for one batch
 * (no micro-batching), so latency is the sum over all layers plus the
 * activation sends between stages; PP only cuts memory per GPU here. Layers
 * need not divide evenly (vLLM splits as evenly as possible); memory uses
 * the heaviest stage.
 *
 * Launch floor: every kernel (not collectives, whose α includes theirs)
 * costs launch_s on top of its roofline time in iterations with prefill
 * (eager or piecewise graphs); decode-only iterations replay a CUDA graph,
 * which hides the CPU launch but not the GPU-side ramp and inter-kernel gap,
 * taken as half of launch_s (≈2 µs on H100, the duration of an empty kernel
 * in a graph). */
#include "model_cost.h"

#include "model_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decode-only iterations run as CUDA graphs: fraction of launch_s left. */
#define GRAPH_LAUNCH_FRACTION 0.5
/* Bus-bandwidth efficiency of one 400G NIC: NCCL reaches 46–48 of 50 GB/s
 * (gpu-specs.md, nccl-tests issue 290). */
#define NIC_EFFICIENCY 0.92
/* Activations and collectives travel in bf16. */
#define ACT_BYTES 2.0
/* Sampling reads/writes fp32 logits about three times (softmax, top-p, pick). */
#define SAMPLE_PASSES 3.0

struct model_cost {
    model_spec m;
    model_gpu g;
    model_layout l;
    double peak_gemm, peak_bf16, peak_attn, bw;
    /* Per-rank aggregates, Σ over all layers. */
    double dense_flops_tok, dense_bytes;
    double moe_flops_tok, moe_fixed_bytes, expert_bytes;
    double moe_layers_f, moe_experts_f, moe_log_miss; /* log(1 − k/E) */
    double lm_flops_tok, lm_bytes;
    double attn_pf_coef, attn_pf_coef_sw, attn_dec_coef, attn_dec_coef_sw, mla_up_flops_tok;
    double kv_tok_full, kv_tok_sw; /* bytes per cached token per rank */
    double elem_bytes_tok, sample_bytes_tok;
    double kernels;
    double ar_calls, ar_alpha, ar_beta, logit_gather_beta;
    double pp_alpha, pp_beta;
    /* Memory. */
    int32_t n_stages;
    double *stage_weights; /* bytes per GPU of each stage */
    double *stage_kv_tok;  /* KV bytes per token per GPU of each stage */
    double kv_tok_instance;
};

static const char *dtype_name(model_dtype d)
{
    return d == MODEL_DTYPE_FP8 ? "fp8" : "bf16";
}

/* Layer i is dense when it is among the leading non-MoE layers; sliding
 * layers are spread evenly (gpt-oss alternates them). */
static int layer_is_moe(const model_spec *m, int32_t i)
{
    return m->experts > 0 && i >= m->layers - m->moe_layers;
}

static int layer_is_sliding(const model_spec *m, int32_t i)
{
    if (m->sliding_layers <= 0) return 0;
    int64_t s = m->sliding_layers, L = m->layers;
    return (int64_t)(i + 1) * s / L > (int64_t)i * s / L;
}

static int cost_validate(const model_spec *m, const model_gpu *g, const model_layout *l, sim_err *err)
{
    int32_t tp = l->tp, pp = l->pp;
    if (tp < 1 || pp < 1)
        return sim_err_set(err, SIM_EINVAL, "%s: tp and pp must be >= 1 (got tp=%d pp=%d)", m->name, tp, pp);
    if (l->overhead_s < 0 || !isfinite(l->overhead_s) || l->overhead_per_seq_s < 0 ||
        !isfinite(l->overhead_per_seq_s))
        return sim_err_set(err, SIM_EINVAL, "%s: overheads must be >= 0 (got %g s per iteration, %g s per request)",
                           m->name, l->overhead_s, l->overhead_per_seq_s);
    if (l->gpus_per_node < 0)
        return sim_err_set(err, SIM_EINVAL, "gpus_per_node must be >= 0 (got %d)", l->gpus_per_node);
    if ((l->dtype != MODEL_DTYPE_BF16 && l->dtype != MODEL_DTYPE_FP8) ||
        (l->kv_dtype != MODEL_DTYPE_BF16 && l->kv_dtype != MODEL_DTYPE_FP8))
        return sim_err_set(err, SIM_EINVAL, "%s: unknown dtype %d / kv_dtype %d", m->name, (int)l->dtype,
                           (int)l->kv_dtype);
    if (l->dtype == MODEL_DTYPE_FP8 && g->flops_fp8 <= 0)
        return sim_err_set(err, SIM_ENOTSUP,
                           "%s has no FP8 tensor cores (tflops.fp8 = 0); run %s in bf16 on it or pick a GPU "
                           "with FP8 (Hopper or newer)",
                           g->name, m->name);
    if (m->heads % tp)
        return sim_err_set(err, SIM_EINVAL, "%s: %d attention heads are not divisible by tp=%d", m->name, m->heads,
                           tp);
    if (m->kv_lora_rank == 0) {
        if (tp <= m->kv_heads && m->kv_heads % tp)
            return sim_err_set(err, SIM_EINVAL, "%s: %d KV heads are not divisible by tp=%d", m->name, m->kv_heads,
                               tp);
        if (tp > m->kv_heads && tp % m->kv_heads)
            return sim_err_set(err, SIM_EINVAL,
                               "%s: tp=%d exceeds the %d KV heads and is not a multiple of them (KV heads can "
                               "only be replicated a whole number of times)",
                               m->name, tp, m->kv_heads);
    }
    if (m->moe_layers < m->layers && m->intermediate % tp)
        return sim_err_set(err, SIM_EINVAL, "%s: FFN intermediate size %d is not divisible by tp=%d", m->name,
                           m->intermediate, tp);
    if (m->experts > 0 && m->expert_intermediate % tp)
        return sim_err_set(err, SIM_EINVAL, "%s: expert intermediate size %d is not divisible by tp=%d", m->name,
                           m->expert_intermediate, tp);
    if (pp > m->layers)
        return sim_err_set(err, SIM_EINVAL, "%s: pp=%d exceeds the %d layers (each stage needs one)", m->name, pp,
                           m->layers);
    if (tp > 1 && g->nvlink_bw <= 0 && g->nic_bw <= 0)
        return sim_err_set(err, SIM_ENOTSUP, "%s: tp=%d needs a GPU interconnect but %s has none listed", m->name,
                           tp, g->name);
    return 0;
}

int model_cost_create(const model_spec *m, const model_gpu *g, const model_layout *l, model_cost **out,
                      sim_err *err)
{
    model_cost *c = NULL;
    int rc;
    *out = NULL;
    if ((rc = cost_validate(m, g, l, err))) return rc;
    c = calloc(1, sizeof *c);
    if (!c) return sim_err_set(err, SIM_ENOMEM, "model_cost: out of memory");
    c->m = *m;
    c->g = *g;
    c->l = *l;
    if (c->l.gpus_per_node == 0) c->l.gpus_per_node = 8; /* an HGX/DGX node */
    c->n_stages = l->pp;
    c->stage_weights = calloc((size_t)l->pp, sizeof *c->stage_weights);
    c->stage_kv_tok = calloc((size_t)l->pp, sizeof *c->stage_kv_tok);
    if (!c->stage_weights || !c->stage_kv_tok) {
        rc = sim_err_set(err, SIM_ENOMEM, "model_cost: out of memory");
        goto fail;
    }

    const double tp = l->tp, h = m->hidden;
    const double wb = l->dtype == MODEL_DTYPE_FP8 ? 1.0 : 2.0;
    const double kvb = l->kv_dtype == MODEL_DTYPE_FP8 ? 1.0 : 2.0;
    c->peak_gemm = l->dtype == MODEL_DTYPE_FP8 ? g->flops_fp8 * g->eff_gemm_fp8 : g->flops_bf16 * g->eff_gemm;
    c->peak_bf16 = g->flops_bf16 * g->eff_gemm;
    c->peak_attn = g->flops_bf16 * g->eff_attn;
    c->bw = g->hbm_bw * g->eff_mem;

    model_spec_parts p;
    model_spec_parts_get(m, &p);
    const double heads_r = m->heads / tp;
    const int mla = m->kv_lora_rank > 0;
    const double kv_r = mla ? 0 : (l->tp <= m->kv_heads ? m->kv_heads / tp : 1.0);

    /* Attention weights on one rank: column/row-split projections, KV heads
     * replicated once tp exceeds them, MLA down-projections replicated. */
    double attn_r;
    if (mla) {
        attn_r = p.attn_replicated + (p.attn - p.attn_replicated) / tp;
    } else {
        attn_r = 2.0 * h * heads_r * m->head_dim + 2.0 * h * kv_r * m->head_dim;
    }
    const double ffn_r = p.dense_ffn / tp;
    const double expert_r = p.expert / tp, shared_r = p.shared / tp;

    /* KV bytes per cached token per layer on one rank. */
    const double kv_layer = mla ? ((double)m->kv_lora_rank + m->rope_dim) * kvb : 2.0 * kv_r * m->head_dim * kvb;
    /* FLOPs per query·key pair per layer on one rank (QK^T and PV). */
    double pf_pair, dec_pair;
    if (mla) {
        pf_pair = 2.0 * heads_r * ((double)m->nope_dim + m->rope_dim + m->v_head_dim);
        /* Decode absorbs W_UK/W_UV: scores and values live in the latent. */
        dec_pair = 2.0 * heads_r * (2.0 * m->kv_lora_rank + m->rope_dim);
    } else {
        pf_pair = dec_pair = 4.0 * heads_r * m->head_dim;
    }
    const double q_r = heads_r * (mla ? (double)m->nope_dim + m->rope_dim : m->head_dim);

    double n_sliding = 0, n_full = 0, n_moe = 0, n_dense = 0;
    for (int32_t i = 0; i < m->layers; i++) {
        int moe = layer_is_moe(m, i), sw = layer_is_sliding(m, i);
        n_moe += moe;
        n_dense += !moe;
        n_sliding += sw;
        n_full += !sw;
    }
    /* Streamed per iteration. Norms and router stay in bf16. */
    c->dense_flops_tok = 2.0 * (m->layers * attn_r + n_dense * ffn_r);
    c->dense_bytes = m->layers * (attn_r * wb + p.norms * 2.0) + n_dense * ffn_r * wb;
    c->moe_flops_tok = n_moe * 2.0 * (m->top_k * expert_r + shared_r + p.router);
    c->moe_fixed_bytes = n_moe * (shared_r * wb + p.router * 2.0);
    c->expert_bytes = n_moe * expert_r * wb;
    c->moe_layers_f = n_moe;
    c->moe_experts_f = m->experts;
    c->moe_log_miss = m->experts > 0 ? log1p(-(double)m->top_k / m->experts) : 0;
    c->lm_flops_tok = 2.0 * (double)m->vocab * h / tp;
    c->lm_bytes = (double)m->vocab * h / tp * 2.0;
    c->attn_pf_coef = n_full * pf_pair;
    c->attn_pf_coef_sw = n_sliding * pf_pair;
    c->attn_dec_coef = n_full * dec_pair;
    c->attn_dec_coef_sw = n_sliding * dec_pair;
    /* MLA prefill over cached context up-projects the cached latents. */
    c->mla_up_flops_tok =
        mla ? m->layers * 2.0 * m->kv_lora_rank * heads_r * ((double)m->nope_dim + m->v_head_dim) : 0;
    c->kv_tok_full = n_full * kv_layer;
    c->kv_tok_sw = n_sliding * kv_layer;

    /* Elementwise traffic per token per layer (bf16): two fused add+RMSNorm
     * (read x and residual, write both), RoPE on q and k, KV-cache write,
     * attention q in / o out, SiLU·mul, MoE permute and combine. */
    double kdim_r = mla ? ((double)m->kv_lora_rank + m->rope_dim) : kv_r * m->head_dim;
    double elem_layer = 8.0 * h + 2.0 * (q_r + kdim_r) + 2.0 * kdim_r + 2.0 * q_r;
    double act_dense = 3.0 * m->intermediate / tp;
    double act_moe = 3.0 * (m->top_k + m->shared_experts) * (double)m->expert_intermediate / tp + 4.0 * m->top_k * h;
    c->elem_bytes_tok = ACT_BYTES * (m->layers * elem_layer + n_dense * act_dense + n_moe * act_moe + 2.0 * h);
    c->sample_bytes_tok = SAMPLE_PASSES * 4.0 * m->vocab;

    /* Kernels per iteration: dense layer = 2 norms, QKV, RoPE+KV write,
     * attention, O, gate_up, act, down (9); MLA adds q_a, kv_a, their norm;
     * MoE swaps the FFN's 3 for router, top-k, permute, 2 grouped GEMMs,
     * act, combine (7) plus 3 for shared experts; the model adds embedding,
     * final norm, LM head and sampling. */
    double k_layer = 6.0 + (mla ? 3.0 : 0.0);
    c->kernels = m->layers * k_layer + n_dense * 3.0 + n_moe * (7.0 + (m->shared_experts > 0 ? 3.0 : 0.0)) + 4.0;

    /* Collectives: two all-reduces per layer and one for the vocab-parallel
     * embedding; logits all-gathered once. */
    const int32_t gpn = c->l.gpus_per_node;
    if (l->tp > 1) {
        int cross = l->tp > gpn;
        double link = cross ? g->nic_bw * NIC_EFFICIENCY : g->nvlink_bw * g->eff_nvlink;
        if (link <= 0) link = g->nic_bw * NIC_EFFICIENCY;
        c->ar_calls = 2.0 * m->layers + 1.0;
        c->ar_alpha = g->allreduce_base_s + g->allreduce_hop_s * (tp - 2.0) + (cross ? g->net_latency_s : 0.0);
        c->ar_beta = 2.0 * (tp - 1.0) / tp / link;
        c->logit_gather_beta = (tp - 1.0) / tp / link;
    }
    /* PP: hidden state and residual sent at each stage boundary. */
    for (int32_t s = 1; s < l->pp; s++) {
        int cross = l->tp >= gpn || ((int64_t)s * l->tp) % gpn == 0;
        double link = cross ? g->nic_bw * NIC_EFFICIENCY : g->nvlink_bw * g->eff_nvlink;
        if (link <= 0) link = g->nic_bw * NIC_EFFICIENCY;
        if (link <= 0) {
            rc = sim_err_set(err, SIM_ENOTSUP, "%s: pp=%d needs a GPU interconnect but %s has none listed", m->name,
                             l->pp, g->name);
            goto fail;
        }
        c->pp_alpha += g->allreduce_base_s + (cross ? g->net_latency_s : 0.0);
        c->pp_beta += 2.0 * ACT_BYTES * h / link;
    }

    /* Memory per stage; stage s holds layers [start, start+n). */
    int32_t start = 0;
    for (int32_t s = 0; s < l->pp; s++) {
        int32_t n = m->layers / l->pp + (s < m->layers % l->pp ? 1 : 0);
        double w = 0, kv = 0;
        for (int32_t i = start; i < start + n; i++) {
            w += attn_r * wb + p.norms * 2.0;
            if (layer_is_moe(m, i))
                w += (m->experts * expert_r + shared_r) * wb + p.router * 2.0;
            else
                w += ffn_r * wb;
            kv += layer_is_sliding(m, i) ? 0 : kv_layer;
        }
        /* Sliding layers hold a bounded window per request, not per token;
         * count them only when the model has no full-attention layer. */
        if (n_full == 0)
            for (int32_t i = start; i < start + n; i++) kv += kv_layer;
        start += n;
        if (s == 0) w += p.embed / tp * 2.0;
        if (s == l->pp - 1) w += (m->tied_embeddings ? (l->pp > 1 ? p.embed : 0) : p.lm_head) / tp * 2.0 + h * 2.0;
        c->stage_weights[s] = w;
        c->stage_kv_tok[s] = kv;
        c->kv_tok_instance += kv * tp;
    }
    *out = c;
    return 0;
fail:
    model_cost_destroy(c);
    return rc;
}

void model_cost_destroy(model_cost *c)
{
    if (!c) return;
    free(c->stage_weights);
    free(c->stage_kv_tok);
    free(c);
}

static double roof(double flops, double peak, double bytes, double bw)
{
    double a = flops / peak, b = bytes / bw;
    return a > b ? a : b;
}

double model_cost_iteration(const model_cost *c, const model_batch *b, model_iter_cost *out)
{
    double tp_tok = 0, pairs = 0, pairs_sw = 0, kv_f = 0, kv_sw = 0, cached = 0;
    const double W = c->m.sliding_window;
    int32_t n_chunks = 0;
    for (int32_t i = 0; b->chunks && i < b->n_chunks; i++) {
        double t = b->chunks[i].tokens, p = b->chunks[i].cached;
        if (t <= 0) continue;
        if (p < 0) p = 0;
        n_chunks++;
        tp_tok += t;
        cached += p;
        /* Causal: each new token sees the cached prefix and half the chunk. */
        double span = p + 0.5 * t;
        pairs += t * span;
        kv_f += p + t;
        if (W > 0) {
            pairs_sw += t * (span < W ? span : W);
            kv_sw += (p + t < W ? p + t : W);
        }
    }
    const double nd = b->n_decode > 0 ? b->n_decode : 0;
    const double ctx = b->decode_ctx_sum > 0 ? (double)b->decode_ctx_sum : 0;
    const double T = tp_tok + nd;
    model_iter_cost r = {0, 0, 0, 0, 0, 0, "roofline"};
    if (T <= 0) {
        if (out) *out = r;
        return 0;
    }
    const double sampled = n_chunks + nd;

    /* GEMMs. */
    r.gemm_s = roof(T * c->dense_flops_tok, c->peak_gemm, c->dense_bytes, c->bw);
    if (c->moe_layers_f > 0) {
        double hit = c->moe_experts_f * -expm1(T * c->moe_log_miss); /* E·(1−(1−k/E)^T) */
        r.gemm_s += roof(T * c->moe_flops_tok, c->peak_gemm, c->moe_fixed_bytes + hit * c->expert_bytes, c->bw);
    }
    r.gemm_s += roof(sampled * c->lm_flops_tok, c->peak_bf16, c->lm_bytes, c->bw);

    /* Attention: prefill chunks against their cached context, decode over
     * each request's context (sliding layers capped at the window). */
    if (tp_tok > 0)
        r.attn_s += roof(pairs * c->attn_pf_coef + pairs_sw * c->attn_pf_coef_sw, c->peak_attn,
                         kv_f * c->kv_tok_full + kv_sw * c->kv_tok_sw, c->bw) +
                    cached * c->mla_up_flops_tok / c->peak_gemm;
    if (nd > 0) {
        double per_req = ctx / nd;
        double sw_ctx = W > 0 ? nd * (per_req < W ? per_req : W) : 0;
        r.attn_s += roof(ctx * c->attn_dec_coef + sw_ctx * c->attn_dec_coef_sw, c->peak_attn,
                         ctx * c->kv_tok_full + sw_ctx * c->kv_tok_sw, c->bw);
    }

    /* Collectives and pipeline sends. */
    if (c->ar_calls > 0)
        r.comm_s = c->ar_calls * (c->ar_alpha + c->ar_beta * T * c->m.hidden * ACT_BYTES) + c->ar_alpha +
                   c->logit_gather_beta * sampled * c->m.vocab * 4.0;
    r.comm_s += c->pp_alpha + c->pp_beta * T;

    /* Elementwise kernels, sampling and the per-kernel floor. */
    double launch = c->g.launch_s * (tp_tok > 0 ? 1.0 : GRAPH_LAUNCH_FRACTION);
    r.other_s = (T * c->elem_bytes_tok + sampled * c->sample_bytes_tok) / c->bw + c->kernels * launch;
    r.overhead_s = c->l.overhead_s + sampled * c->l.overhead_per_seq_s;
    r.total_s = r.gemm_s + r.attn_s + r.comm_s + r.other_s + r.overhead_s;
    if (out) *out = r;
    return r.total_s;
}

double model_cost_kv_bytes_per_token(const model_cost *c)
{
    return c->kv_tok_instance;
}

double model_cost_weight_bytes_per_gpu(const model_cost *c)
{
    double w = 0;
    for (int32_t s = 0; s < c->n_stages; s++)
        if (c->stage_weights[s] > w) w = c->stage_weights[s];
    return w;
}

int model_cost_kv_capacity_tokens(const model_cost *c, double gpu_mem_util, double reserve_bytes, int64_t *tokens,
                                  sim_err *err)
{
    if (!(gpu_mem_util > 0 && gpu_mem_util <= 1))
        return sim_err_set(err, SIM_EINVAL, "gpu memory utilisation must be in (0, 1], got %g", gpu_mem_util);
    if (!(reserve_bytes >= 0))
        return sim_err_set(err, SIM_EINVAL, "memory reserve must be >= 0, got %g", reserve_bytes);
    double best = -1;
    for (int32_t s = 0; s < c->n_stages; s++) {
        double usable = c->g.hbm_bytes * gpu_mem_util - c->stage_weights[s] - reserve_bytes;
        if (usable <= 0)
            return sim_err_set(err, SIM_ERANGE,
                               "%s %s weights need %.1f GB per GPU at tp=%d pp=%d but %s has %.1f GB x %.2f - "
                               "%.1f GB reserve = %.1f GB",
                               c->m.name, dtype_name(c->l.dtype), c->stage_weights[s] / 1e9, c->l.tp, c->l.pp,
                               c->g.name, c->g.hbm_bytes / 1e9, gpu_mem_util, reserve_bytes / 1e9,
                               (c->g.hbm_bytes * gpu_mem_util - reserve_bytes) / 1e9);
        /* Every token needs KV on every stage: the tightest stage decides. */
        double t = c->stage_kv_tok[s] > 0 ? usable / c->stage_kv_tok[s] : 0;
        if (best < 0 || t < best) best = t;
    }
    *tokens = (int64_t)floor(best);
    return 0;
}

int32_t model_cost_gpus(const model_cost *c)
{
    return c->l.tp * c->l.pp;
}
