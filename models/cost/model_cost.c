/* model_cost — creation, layout validation and the memory model; the op
 * graph of an iteration is in model_cost_eval.c, routed experts in
 * model_cost_moe.c, op timing in model_cost_db.c.
 *
 * Per-rank shapes. Attention runs on tp ranks per dp group: heads/tp query
 * heads, kv_heads/tp KV heads (replicated once tp exceeds them; MLA keeps
 * one latent per token on every rank). DCP shards each request's KV by
 * sequence over dcp ranks that hold the same KV head, so it needs that many
 * replicas: per-rank KV bytes fall to 1/dcp. Dense FFNs and shared experts
 * are split over tp; routed experts over ep of the tp·dp ranks, each expert
 * column-split over moe_tp (default tp·dp/ep; with moe_tp·ep < tp·dp the
 * expert groups are replicated). Weights are stored in the layout's
 * dtype with scales (model_dtype.h) except norms, router, embedding and LM
 * head (bf16, as checkpoints keep them).
 *
 * Memory per GPU of stage s: its layers' weights (plus embedding on the
 * first stage and LM head on the last); KV per token per GPU: its full
 * attention layers' KV (sliding layers hold a bounded window per request
 * and are counted only when the model has no full-attention layer). Pipeline
 * stages split layers as evenly as possible (vLLM). The instance holds
 * dp·sp groups of distinct requests, so its KV capacity is dp·sp times that
 * of one group. */
#include "model_cost_impl.h"

#include "model_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sliding layers are spread evenly (gpt-oss alternates them); the other
 * layer kinds are placed by model_spec_layer_mixer/_ffn. */
static int layer_is_sliding(const model_spec *m, int32_t i)
{
    if (m->sliding_layers <= 0) return 0;
    int64_t s = m->sliding_layers, L = m->layers;
    return (int64_t)(i + 1) * s / L > (int64_t)i * s / L;
}

/* The layout's degrees, overheads, speed-ups, formats and modes; *out is
 * the layout resolved. */
static int validate_settings(const model_spec *m, const model_gpu *g, const model_layout *in, model_layout *out,
                             sim_err *err)
{
    int rc;
    if (in->tp < 1 || in->pp < 1 || in->dp < 0 || in->ep < 0 || in->dcp < 0 || in->sp < 0 || in->micro_batches < 0)
        return sim_err_set(err, SIM_EINVAL,
                           "%s: tp and pp must be >= 1, dp/ep/dcp/sp/micro_batches >= 0 (got tp=%d pp=%d dp=%d "
                           "ep=%d dcp=%d sp=%d micro_batches=%d)",
                           m->name, in->tp, in->pp, in->dp, in->ep, in->dcp, in->sp, in->micro_batches);
    model_layout l = model_layout_resolved(in);
    *out = l;
    if (l.overhead_s < 0 || !isfinite(l.overhead_s) || l.overhead_per_seq_s < 0 || !isfinite(l.overhead_per_seq_s))
        return sim_err_set(err, SIM_EINVAL, "%s: overheads must be >= 0 (got %g s per iteration, %g s per request)",
                           m->name, l.overhead_s, l.overhead_per_seq_s);
    if (l.gpus_per_node < 0)
        return sim_err_set(err, SIM_EINVAL, "gpus_per_node must be >= 0 (got %d)", l.gpus_per_node);
    for (int f = 0; f < MODEL_FAM_COUNT; f++)
        if (!(l.op_speedup[f] > 0) || !isfinite(l.op_speedup[f]))
            return sim_err_set(err, SIM_EINVAL, "op_speedup.%s must be a finite number > 0 (got %g)",
                               model_op_family_name((model_op_family)f), l.op_speedup[f]);
    model_dtype part_dt[MODEL_PART_COUNT];
    model_part_dtypes(m, l.dtype_checkpoint, l.dtype, part_dt);
    for (int k = 0; k < MODEL_PART_COUNT; k++)
        if ((rc = model_dtype_check(g, part_dt[k], m->name, err))) return rc;
    if ((int)l.kv_dtype < 0 || (int)l.kv_dtype >= MODEL_DTYPE_COUNT)
        return sim_err_set(err, SIM_EINVAL, "%s: unknown kv_dtype %d", m->name, (int)l.kv_dtype);
    if ((int)l.sp_kind < 0 || (int)l.sp_kind > 1 || (int)l.ep_mode < 0 || (int)l.ep_mode >= MODEL_EP_MODES ||
        (int)l.moe_gemm < 0 || (int)l.moe_gemm > 2 || !(l.expert_skew >= 0) || !isfinite(l.expert_skew))
        return sim_err_set(err, SIM_EINVAL, "%s: bad sp_kind/ep_mode/moe_gemm/expert_skew", m->name);
    return 0;
}

/* TP: the heads, KV heads, linear-attention and Mamba heads and FFN widths
 * divide; PP: a layer per stage at least. */
static int validate_tp(const model_spec *m, const model_layout *lp, sim_err *err)
{
    const model_layout l = *lp;
    const int32_t tp = l.tp;
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
    if (m->comp_attn && (l.dcp > 1 || l.sp > 1))
        return sim_err_set(err, SIM_ENOTSUP, "%s: decode context parallelism (dcp=%d) and sequence parallelism "
                           "(sp=%d) of DeepSeek-V4's compressed attention are not modelled by servesim", m->name, l.dcp,
                           l.sp);
    if (m->linear_layers > 0 && (m->lin_v_heads % tp || (m->lin_k_heads % tp && tp % m->lin_k_heads)))
        return sim_err_set(err, SIM_EINVAL,
                           "%s: tp=%d must divide the %d linear-attention value heads and divide or be a multiple "
                           "of the %d key heads", m->name, tp, m->lin_v_heads, m->lin_k_heads);
    if (m->mamba_layers > 0 && (m->mamba_heads % tp || (m->mamba_groups % tp && tp % m->mamba_groups)))
        return sim_err_set(err, SIM_EINVAL,
                           "%s: tp=%d must divide the %d Mamba-2 heads and divide or be a multiple of its %d groups",
                           m->name, tp, m->mamba_heads, m->mamba_groups);
    if (model_spec_dense_layers(m) > 0) {
        int32_t n_w = m->n_ffn_widths > 0 ? m->n_ffn_widths : 1;
        for (int32_t k = 0; k < n_w; k++) {
            int32_t w = m->n_ffn_widths > 0 ? m->ffn_widths[k] : m->intermediate;
            if (w % tp)
                return sim_err_set(err, SIM_EINVAL, "%s: FFN intermediate size %d is not divisible by tp=%d", m->name,
                                   w, tp);
        }
    }
    if (l.pp > m->layers)
        return sim_err_set(err, SIM_EINVAL, "%s: pp=%d exceeds the %d layers (each stage needs one)", m->name, l.pp,
                           m->layers);
    return 0;
}

/* Experts: EP and expert TP divide the attention ranks, the experts and
 * their widths. */
static int validate_experts(const model_spec *m, const model_layout *in, const model_layout *lp, sim_err *err)
{
    const model_layout l = *lp;
    const int32_t tp = l.tp;
    /* Experts. */
    if (l.ep > 1 && m->experts == 0)
        return sim_err_set(err, SIM_EINVAL, "%s: ep=%d but the model has no routed experts", m->name, l.ep);
    if ((tp * l.dp) % l.ep)
        return sim_err_set(err, SIM_EINVAL, "%s: ep=%d must divide tp*dp=%d (experts live on the attention ranks)",
                           m->name, l.ep, tp * l.dp);
    if (m->experts > 0) {
        if (l.moe_tp < 1 || (tp * l.dp) % ((int64_t)l.moe_tp * l.ep))
            return sim_err_set(err, SIM_EINVAL,
                               "%s: moe_tp=%d times ep=%d must divide tp*dp=%d (each expert group spans moe_tp*ep "
                               "of the attention ranks)",
                               m->name, in->moe_tp, l.ep, tp * l.dp);
        int32_t moe_tp = l.moe_tp;
        if (m->experts % l.ep)
            return sim_err_set(err, SIM_EINVAL, "%s: %d experts are not divisible by ep=%d", m->name, m->experts,
                               l.ep);
        if (m->expert_intermediate % moe_tp)
            return sim_err_set(err, SIM_EINVAL,
                               "%s: expert intermediate size %d is not divisible by the expert TP degree "
                               "moe_tp=%d",
                               m->name, m->expert_intermediate, moe_tp);
        if (m->shared_experts > 0 && m->expert_intermediate % tp)
            return sim_err_set(err, SIM_EINVAL, "%s: shared-expert intermediate size %d is not divisible by tp=%d",
                               m->name, m->expert_intermediate, tp);
    }
    return 0;
}

/* DCP shards the KV TP replicates; Ulysses shards heads; more than one GPU
 * needs an interconnect. */
static int validate_dcp_sp(const model_spec *m, const model_gpu *g, const model_layout *lp, sim_err *err)
{
    const model_layout l = *lp;
    const int32_t tp = l.tp;
    /* DCP shards by sequence the KV that TP left replicated. */
    if (l.dcp > 1) {
        if (tp % l.dcp)
            return sim_err_set(err, SIM_EINVAL, "%s: dcp=%d must divide tp=%d (DCP ranks are TP ranks)", m->name,
                               l.dcp, tp);
        int32_t rep = m->kv_lora_rank > 0 ? tp : (tp > m->kv_heads ? tp / m->kv_heads : 1);
        if (rep % l.dcp)
            return sim_err_set(err, SIM_EINVAL,
                               "%s: dcp=%d needs each KV head held by a multiple of %d TP ranks, but tp=%d with "
                               "%d KV heads holds each on %d (DCP shards by sequence the KV that TP replicates)",
                               m->name, l.dcp, l.dcp, tp, m->kv_heads, rep);
    }
    /* Ulysses turns sequence shards into head shards. */
    if (l.sp > 1 && l.sp_kind == MODEL_SP_ULYSSES) {
        int32_t hr = m->heads / tp;
        if (hr % l.sp)
            return sim_err_set(err, SIM_EINVAL,
                               "%s: Ulysses sp=%d needs the %d heads per TP rank (%d heads / tp=%d) divisible by "
                               "sp; use sp_kind ring or a degree that divides them",
                               m->name, l.sp, hr, m->heads, tp);
    }
    int32_t gpus = tp * l.pp * l.dp * l.sp;
    if (gpus > 1 && g->nvlink_bw <= 0 && g->nic_bw <= 0)
        return sim_err_set(err, SIM_ENOTSUP, "%s: %d GPUs need an interconnect but %s has none listed", m->name, gpus,
                           g->name);
    return 0;
}

static int cost_validate(const model_spec *m, const model_gpu *g, const model_layout *in, sim_err *err)
{
    model_layout l = *in; /* resolved by validate_settings */
    int rc;
    if ((rc = validate_settings(m, g, in, &l, err)) || (rc = validate_tp(m, &l, err)) ||
        (rc = validate_experts(m, in, &l, err)) || (rc = validate_dcp_sp(m, g, &l, err)))
        return rc;
    return 0;
}

/* Zipf(s) over experts, popularity rank r → expert slot by a fixed
 * stride coprime with E (a deterministic stand-in for a random placement,
 * so hot experts are not all on rank 0), no expert's share past 1/top_k. */
int cost_moe_init(model_cost *c, sim_err *err)
{
    const model_spec *m = &c->m;
    int32_t E = m->experts;
    if (E == 0) return 0;
    c->p = calloc((size_t)E, sizeof *c->p);
    c->log_miss = calloc((size_t)E, sizeof *c->log_miss);
    if (!c->p || !c->log_miss) return sim_err_set(err, SIM_ENOMEM, "model_cost: out of memory");
    c->uniform = c->l.expert_skew == 0;
    int32_t step = (int32_t)(E * 0.618) | 1;
    while (step > 1) {
        int32_t a = E, b = step;
        while (b) {
            int32_t t = a % b;
            a = b;
            b = t;
        }
        if (a == 1) break;
        step += 2;
    }
    double z = 0;
    for (int32_t r = 0; r < E; r++) z += pow(r + 1.0, -c->l.expert_skew);
    for (int32_t r = 0; r < E; r++) {
        int32_t slot = (int32_t)(((int64_t)r * step) % E);
        c->p[slot] = pow(r + 1.0, -c->l.expert_skew) / z;
    }
    /* A token picks an expert once: no expert takes more than 1/top_k of
     * the picks (T rows of T·k), the excess spread over the others. */
    if (m->top_k > 0) model_op_moe_cap_rows(c->p, E, 1.0 / m->top_k);
    for (int32_t i = 0; i < E; i++) {
        double q = m->top_k * c->p[i];
        c->log_miss[i] = q >= 1 ? -INFINITY : log1p(-q);
    }
    return 0;
}

/* The cost model's per-format rates: bytes per weight, activation and KV
 * value, and the GEMM, attention and HBM rates of the GPU (whole model and
 * per part). */
static void cost_rates(model_cost *c)
{
    const model_gpu *g = &c->g;
    const model_layout *l = &c->l;
    c->wb = model_dtype_bytes(l->dtype);
    c->ab = model_dtype_act_bytes(g, l->dtype);
    c->kvb = model_dtype_bytes(l->kv_dtype);
    c->peak_gemm = model_dtype_peak(g, l->dtype) * model_dtype_gemm_eff(g, l->dtype);
    for (int k = 0; k < MODEL_PART_COUNT; k++) {
        c->wb_part[k] = model_dtype_bytes(c->part_dt[k]);
        c->ab_part[k] = model_dtype_act_bytes(g, c->part_dt[k]);
        c->peak_part[k] = model_dtype_peak(g, c->part_dt[k]) * model_dtype_gemm_eff(g, c->part_dt[k]);
    }
    c->peak_bf16 = g->flops_bf16 * g->eff_gemm;
    c->peak_attn = g->flops_bf16 * g->eff_attn;
    c->bw = g->hbm_bw * g->eff_mem;
    c->launch = g->launch_s;
}

/* Heads and KV of one rank: heads and KV heads per TP rank, their
 * replication, the KV bytes per token of a layer (MLA latent, DSA indexer
 * key, DeepSeek-V4's compressed entries); expert TP and experts per rank. */
static void cost_geometry(model_cost *c)
{
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    const double tp = l->tp;
    c->mla = m->kv_lora_rank > 0;
    c->heads_r = m->heads / tp;
    c->hd = m->head_dim;
    c->kv_r = c->mla ? 1.0 : (l->tp <= m->kv_heads ? m->kv_heads / tp : 1.0);
    c->kv_rep = c->mla ? tp : (l->tp > m->kv_heads ? tp / m->kv_heads : 1.0);
    c->kv_layer_r = c->mla ? ((double)m->kv_lora_rank + m->rope_dim) * c->kvb : 2.0 * c->kv_r * m->head_dim * c->kvb;
    /* DSA: every rank also keeps the indexer's fp8 key (fp32 scale per 128). */
    if (m->index_topk > 0 && !m->comp_attn) c->kv_layer_r += m->index_head_dim * (1.0 + 4.0 / 128.0);
    /* DeepSeek-V4: the one K=V head's compressed entries (every rank holds
     * them all), the mean over the compressed layers; the window-only
     * layers count as sliding (bounded: their window is per-sequence state). */
    if (m->comp_attn && m->csa_layers + m->hca_layers > 0)
        c->kv_layer_r = (m->csa_layers * model_spec_csa_kv_bytes(m, c->kvb) +
                         m->hca_layers * model_spec_hca_kv_bytes(m, c->kvb)) / (m->csa_layers + m->hca_layers);
    c->moe_tp = m->experts > 0 ? l->moe_tp : 1;
    c->experts_local = m->experts > 0 ? m->experts / l->ep : 0;
}

/* The layer classes: how many layers of each mixer and FFN kind, sliding
 * or full attention, and dense FFNs per width. */
static void cost_count_layers(model_cost *c)
{
    const model_spec *m = &c->m;
    for (int32_t i = 0; i < m->layers; i++) {
        model_mixer_kind mix = model_spec_layer_mixer(m, i);
        model_ffn_kind ffn = model_spec_layer_ffn(m, i);
        int attn = mix == MODEL_MIX_ATTN, sw = attn && layer_is_sliding(m, i);
        c->n_moe += ffn == MODEL_FFN_MOE;
        c->n_dense += ffn == MODEL_FFN_DENSE;
        c->n_lin += mix == MODEL_MIX_LINEAR;
        c->n_mamba += mix == MODEL_MIX_MAMBA;
        c->n_sw += sw;
        c->n_full += attn && !sw;
        c->n_mix_only += mix != MODEL_MIX_NONE && ffn == MODEL_FFN_NONE;
        c->n_dense_nomix += mix == MODEL_MIX_NONE && ffn == MODEL_FFN_DENSE;
        c->n_moe_nomix += mix == MODEL_MIX_NONE && ffn == MODEL_FFN_MOE;
        if (ffn == MODEL_FFN_DENSE) c->n_dense_w[m->n_ffn_widths > 0 ? m->layer_width[i] : 0]++;
    }
    c->n_layers = m->layers;
}

/* Weights, KV bytes per token and per-sequence state of each pipeline
 * stage on one rank (its layers, the embedding on the first, the head on
 * the last), and the instance's KV bytes per token. */
static void cost_stages(model_cost *c)
{
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    const double tp = l->tp, h = m->hidden;
    model_spec_parts p;
    model_spec_parts_get(m, &p);
    /* Weights of one layer on one rank. */
    double attn_r;
    if (c->mla)
        attn_r = p.attn_replicated + (p.attn - p.attn_replicated) / tp;
    else
        attn_r = 2.0 * h * c->heads_r * m->head_dim + 2.0 * h * c->kv_r * m->head_dim;
    if (m->attn_out_gate) attn_r += h * c->heads_r * m->head_dim;
    /* DeepSeek-V4: heads (q_b, grouped O) split over TP, the rest whole on
     * each rank; compressors and hyper-connections by their mean per
     * attention layer. */
    double win_state = 0;
    if (m->comp_attn) {
        const double La = model_spec_attention_layers(m);
        attn_r = p.attn_replicated + (p.attn - p.attn_replicated) / tp +
                 (m->csa_layers * p.comp_csa + m->hca_layers * p.comp_hca + m->layers * p.hc) / La;
        win_state = (m->sliding_layers * model_spec_window_state_bytes(m, 0) +
                     m->csa_layers * model_spec_window_state_bytes(m, 1) +
                     m->hca_layers * model_spec_window_state_bytes(m, 2)) / La;
    }
    /* Gated DeltaNet layers split their heads over TP; their state is per sequence. */
    const double lin_r = p.linear / tp, mamba_r = p.mamba / tp;
    const double state_r = model_spec_linear_state_bytes(m) / tp, mstate_r = model_spec_mamba_state_bytes(m) / tp;
    const double mats = m->ffn_plain ? 2.0 : 3.0;
    const double expert_r = p.expert / c->moe_tp, shared_r = p.shared / tp;
    const double kv_rank_layer = c->kv_layer_r / l->dcp;

    int32_t start = 0;
    for (int32_t s = 0; s < l->pp; s++) {
        int32_t n = m->layers / l->pp + (s < m->layers % l->pp ? 1 : 0);
        if (n > c->stage_layers_max) c->stage_layers_max = n;
        double w = 0, kv = 0, st = 0;
        for (int32_t i = start; i < start + n; i++) {
            model_mixer_kind mix = model_spec_layer_mixer(m, i);
            model_ffn_kind ffn = model_spec_layer_ffn(m, i);
            double mixer_r = mix == MODEL_MIX_ATTN ? attn_r : mix == MODEL_MIX_LINEAR ? lin_r
                             : mix == MODEL_MIX_MAMBA ? mamba_r : 0;
            /* One RMSNorm before each mixer and each FFN (bf16). */
            w += mixer_r * c->wb_part[MODEL_PART_ATTN] +
                 h * 2.0 * ((mix != MODEL_MIX_NONE) + (ffn != MODEL_FFN_NONE));
            st += mix == MODEL_MIX_LINEAR ? state_r : mix == MODEL_MIX_MAMBA ? mstate_r : 0;
            st += mix == MODEL_MIX_ATTN ? win_state : 0;
            c->stage_moe[s] += ffn == MODEL_FFN_MOE;
            if (ffn == MODEL_FFN_MOE)
                w += (c->experts_local * expert_r + p.latent) * c->wb_part[MODEL_PART_EXPERT] +
                     shared_r * c->wb_part[MODEL_PART_SHARED] + p.router * 2.0;
            else if (ffn == MODEL_FFN_DENSE)
                w += mats * h * model_spec_layer_inter(m, i) / tp * c->wb_part[MODEL_PART_DENSE];
            kv += mix != MODEL_MIX_ATTN || (layer_is_sliding(m, i) && c->n_full > 0) ? 0 : kv_rank_layer;
        }
        start += n;
        if (s == 0) w += p.embed / tp * 2.0;
        if (s == l->pp - 1) w += (m->tied_embeddings ? (l->pp > 1 ? p.embed : 0) : p.lm_head) / tp * 2.0 + h * 2.0;
        c->stage_weights[s] = w;
        c->stage_kv_tok[s] = kv;
        c->kv_tok_instance += kv * tp;
        if (st > c->state_seq_gpu) c->state_seq_gpu = st;
    }
}

/* DeepEP low-latency buffers: slots for R rows per local expert. */
static void cost_expert_buffers(model_cost *c)
{
    const model_spec *m = &c->m;
    const model_layout *l = &c->l;
    if (model_cost_ep_mode(c, 0) != MODEL_EP_LOW_LATENCY && model_cost_ep_mode(c, 1) != MODEL_EP_LOW_LATENCY) return;
    const double R = (double)MODEL_DEEPEP_LL_MAX_TOKENS * l->ep, I = m->expert_intermediate / (double)c->moe_tp;
    /* The experts' token width: a latent MoE dispatches its latent. */
    const double eh = m->moe_latent > 0 ? m->moe_latent : m->hidden, up = m->ffn_plain ? 1.0 : 2.0;
    double row = eh * c->ab + eh * COST_ACT_BYTES;
    if (l->moe_gemm != MODEL_MOE_GEMM_CONTIGUOUS) row += up * I * COST_ACT_BYTES + I * c->ab;
    c->expert_buf = c->experts_local * R * row;
}

int model_cost_create(const model_spec *m, const model_gpu *g, const model_layout *in, model_cost **out,
                      sim_err *err)
{
    model_cost *c = NULL;
    int rc;
    *out = NULL;
    if ((rc = cost_validate(m, g, in, err))) return rc;
    c = calloc(1, sizeof *c);
    if (!c) return sim_err_set(err, SIM_ENOMEM, "model_cost: out of memory");
    c->m = *m;
    c->g = *g;
    c->l = model_layout_resolved(in);
    for (int f = 0; f < MODEL_FAM_COUNT; f++) {
        c->fam_time[f] = 1.0 / c->l.op_speedup[f];
        c->fam_scaled |= c->l.op_speedup[f] != 1;
    }
    model_part_dtypes(m, c->l.dtype_checkpoint, c->l.dtype, c->part_dt);
    if (c->l.dtype_checkpoint) c->l.dtype = c->part_dt[m->experts > 0 ? MODEL_PART_EXPERT : MODEL_PART_DENSE];
    const model_layout *l = &c->l;
    model_comm_net_init(&c->net, g, l->gpus_per_node);
    c->n_stages = l->pp;
    c->stage_weights = calloc((size_t)l->pp, sizeof *c->stage_weights);
    c->stage_kv_tok = calloc((size_t)l->pp, sizeof *c->stage_kv_tok);
    c->stage_moe = calloc((size_t)l->pp, sizeof *c->stage_moe);
    if (!c->stage_weights || !c->stage_kv_tok || !c->stage_moe) {
        rc = sim_err_set(err, SIM_ENOMEM, "model_cost: out of memory");
        goto fail;
    }
    if ((rc = cost_moe_init(c, err))) goto fail;
    cost_op_sets_init(c);
    cost_rates(c);
    cost_geometry(c);
    cost_count_layers(c);
    cost_stages(c);
    cost_expert_buffers(c);
    cost_mla_module_init(c);
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
    free(c->stage_moe);
    free(c->p);
    free(c->log_miss);
    cost_db_release(c);
    free(c);
}

double model_cost_iteration(const model_cost *c, const model_batch *b, model_iter_cost *out)
{
    return cost_eval(c, b, 1, NULL, 0, NULL, out, NULL, NULL, NULL);
}

double model_cost_verify_iteration(const model_cost *c, const model_batch *b, int32_t width, model_iter_cost *out)
{
    return cost_eval(c, b, width, NULL, 0, NULL, out, NULL, NULL, NULL);
}

double model_cost_pipeline(const model_cost *c, const model_batch *b, double *stage_s, double *hop_s, double *host_s)
{
    return cost_eval(c, b, 1, NULL, 0, NULL, NULL, stage_s, hop_s, host_s);
}

double model_cost_pipeline_cost(const model_cost *c, const model_batch *b, double *stage_s, double *hop_s,
                                double *host_s, model_iter_cost *out)
{
    return cost_eval(c, b, 1, NULL, 0, NULL, out, stage_s, hop_s, host_s);
}

double model_cost_pipeline_interval(const model_cost *c, const model_batch *b, int32_t in_flight, double *busiest_s)
{
    const int32_t p = c->l.pp;
    double one[2], *buf = p > 1 ? malloc((size_t)(2 * p) * sizeof *buf) : one;
    if (!buf) return -1;
    double host = 0, total = cost_eval(c, b, 1, NULL, 0, NULL, NULL, buf, buf + p, &host);
    if (p <= 1) buf[0] = total;
    double busiest = p > 1 ? host : 0;
    for (int32_t s = 0; s < p; s++)
        if (buf[s] > busiest) busiest = buf[s];
    if (buf != one) free(buf);
    if (busiest_s) *busiest_s = busiest;
    if (in_flight < 1 || p <= 1) in_flight = 1;
    double cycle = total / in_flight;
    return cycle > busiest ? cycle : busiest;
}

double model_cost_breakdown(const model_cost *c, const model_batch *b, model_op *ops, int32_t max, int32_t *n_ops,
                            model_iter_cost *out)
{
    return cost_eval(c, b, 1, ops, max, n_ops, out, NULL, NULL, NULL);
}

double model_cost_kv_bytes_per_token(const model_cost *c)
{
    return c->kv_tok_instance;
}

double model_cost_kv_copies(const model_cost *c)
{
    double k = c->kv_rep / (c->l.dcp > 1 ? c->l.dcp : 1);
    return k > 1 ? k : 1;
}

double model_cost_state_bytes_per_seq(const model_cost *c)
{
    return c->state_seq_gpu;
}

double model_cost_expert_buffer_bytes(const model_cost *c)
{
    return c->expert_buf;
}

double model_cost_weight_bytes_per_gpu(const model_cost *c)
{
    double w = 0;
    for (int32_t s = 0; s < c->n_stages; s++)
        if (c->stage_weights[s] > w) w = c->stage_weights[s];
    return w;
}

double model_cost_activation_bytes(const model_cost *c, int64_t tokens)
{
    const model_spec *m = &c->m;
    double t = tokens > 0 ? (double)tokens : 0;
    double inter = m->intermediate / (double)c->l.tp;
    double expert = m->experts > 0 ? 2.0 * m->top_k * m->expert_intermediate / (double)c->moe_tp : 0;
    double qkv = (c->heads_r + 2.0 * c->kv_r) * c->hd;
    double widest = 2.0 * inter > expert ? 2.0 * inter : expert;
    if (qkv > widest) widest = qkv;
    /* Residual + hidden + the widest intermediate in bf16, fp32 logits of
     * the sampled rows (at most one per token). */
    return t * (2.0 * m->hidden + widest) * COST_ACT_BYTES + t * m->vocab / (double)c->l.tp * 4.0;
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
        const double buf = c->stage_moe[s] > 0 ? c->expert_buf : 0;
        double usable = c->g.hbm_bytes * gpu_mem_util - c->stage_weights[s] - buf - reserve_bytes;
        if (usable <= 0) {
            char extra[96] = "";
            if (buf > 0) snprintf(extra, sizeof extra, " (+ %.1f GB of DeepEP low-latency expert buffers)", buf / 1e9);
            return sim_err_set(err, SIM_ERANGE,
                               "%s %s weights need %.1f GB per GPU%s at tp=%d pp=%d dp=%d ep=%d but %s has %.1f GB x "
                               "%.2f - %.1f GB reserve = %.1f GB",
                               c->m.name, model_dtype_name(c->l.dtype), c->stage_weights[s] / 1e9, extra, c->l.tp,
                               c->l.pp, c->l.dp, c->l.ep, c->g.name, c->g.hbm_bytes / 1e9, gpu_mem_util,
                               reserve_bytes / 1e9, (c->g.hbm_bytes * gpu_mem_util - reserve_bytes) / 1e9);
        }
        /* Every token needs KV on every stage: the tightest stage decides. */
        double t = c->stage_kv_tok[s] > 0 ? usable / c->stage_kv_tok[s] : 0;
        if (best < 0 || t < best) best = t;
    }
    *tokens = (int64_t)floor(best) * (int64_t)c->l.dp * c->l.sp;
    return 0;
}

int32_t model_cost_gpus(const model_cost *c)
{
    return c->l.tp * c->l.pp * c->l.dp * c->l.sp;
}

const model_spec *model_cost_model(const model_cost *c)
{
    return &c->m;
}

const model_gpu *model_cost_gpu(const model_cost *c)
{
    return &c->g;
}

const model_layout *model_cost_layout(const model_cost *c)
{
    return &c->l;
}

const char *model_bound_name(model_bound b)
{
    static const char *const names[] = {"compute", "memory", "communication", "latency", "host"};
    return (int)b >= 0 && (int)b < 5 ? names[b] : "?";
}

const char *model_source_name(model_source s)
{
    static const char *const names[] = {"roofline", "db", "db-fit", "op-model"};
    return (int)s >= 0 && (int)s < 4 ? names[s] : "?";
}

const char *model_op_class_name(model_op_class cl)
{
    static const char *const names[] = {"gemm", "attention", "communication", "other", "overhead"};
    return (int)cl >= 0 && (int)cl < 5 ? names[cl] : "?";
}
