/* model_spec — see model_spec.h. */
#include "model_spec.h"

#include "model_dtype.h"

#include <stdio.h>
#include <string.h>

void model_spec_note(model_spec *m, const char *fmt, ...)
{
    size_t used = strlen(m->notes);
    if (used + 4 >= sizeof m->notes) return;
    if (used) used += (size_t)snprintf(m->notes + used, sizeof m->notes - used, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->notes + used, sizeof m->notes - used, fmt, ap);
    va_end(ap);
}

/* The softmax attention block: MLA, DeepSeek-V4's compressed attention or
 * MHA/GQA, with what stays whole on every TP rank. */
static void parts_attention(const model_spec *m, model_spec_parts *p)
{
    double h = m->hidden;
    if (m->kv_lora_rank > 0) {
        /* MLA: q through an optional low-rank bottleneck, KV compressed to
         * kv_lora_rank plus a shared rope key, up-projected per head. */
        double qk = (double)m->nope_dim + m->rope_dim;
        double q = m->q_lora_rank > 0
                       ? h * m->q_lora_rank + m->q_lora_rank + (double)m->q_lora_rank * m->heads * qk
                       : h * m->heads * qk;
        double kv_a = h * ((double)m->kv_lora_rank + m->rope_dim) + m->kv_lora_rank;
        double kv_b = (double)m->kv_lora_rank * m->heads * ((double)m->nope_dim + m->v_head_dim);
        double o = (double)m->heads * m->v_head_dim * h;
        p->attn = q + kv_a + kv_b + o;
        /* vLLM keeps the down-projections (q_a, kv_a) replicated under TP. */
        p->attn_replicated = (m->q_lora_rank > 0 ? h * m->q_lora_rank + m->q_lora_rank : 0) + kv_a;
    } else if (m->comp_attn) {
        /* DeepSeek-V4: q_a (+ norm) and q_b, one K=V head (+ norm), the
         * grouped O (each group's heads to o_lora_rank, then all groups to
         * hidden; a plain O without o_groups), one sink per head. */
        double hd = m->head_dim, qkv = h * m->q_lora_rank + m->q_lora_rank + (double)m->q_lora_rank * m->heads * hd +
                                      h * hd + hd;
        double o = m->o_groups > 0 ? (double)m->heads * hd * m->o_lora_rank + (double)m->o_groups * m->o_lora_rank * h
                                   : (double)m->heads * hd * h;
        p->attn = qkv + o + m->heads;
        /* The K=V head and the low-rank down-projection are whole on every TP rank. */
        p->attn_replicated = h * m->q_lora_rank + m->q_lora_rank + h * hd + hd;
    } else {
        double hd = m->head_dim;
        p->attn = h * m->heads * hd + 2.0 * h * m->kv_heads * hd + (double)m->heads * hd * h;
        p->attn_replicated = 0;
    }
}

/* DeepSeek-V4's compressors, indexer and hyper-connections (zero elsewhere). */
static void parts_compressed(const model_spec *m, model_spec_parts *p)
{
    double h = m->hidden;
    p->comp_csa = p->comp_hca = p->hc = p->hc_head = 0;
    if (m->comp_attn) {
        const double hd = m->head_dim, ihd = m->index_head_dim;
        /* Compressor: kv and gate projections with a position bias per slot
         * and a norm; CSA's windows overlap, so it projects two series. */
        p->comp_hca = m->hca_ratio > 0 ? 2.0 * h * hd + (double)m->hca_ratio * hd + hd : 0;
        p->indexer = m->csa_layers > 0 ? 2.0 * h * 2.0 * ihd + (double)m->csa_ratio * 2.0 * ihd + ihd +
                                             (double)m->q_lora_rank * m->index_heads * ihd + h * m->index_heads
                                       : 0;
        p->comp_csa = m->csa_layers > 0 ? 2.0 * h * 2.0 * hd + (double)m->csa_ratio * 2.0 * hd + hd + p->indexer : 0;
        /* Each mapping projects the n·hidden streams to n pre, n post and
         * n×n mixing weights (+ bias, 3 scales); the head to n weights. */
        const double n = m->hc_mult;
        p->hc = n > 0 ? 2.0 * ((2.0 + n) * n * n * h + (2.0 + n) * n + 3.0) : 0;
        p->hc_head = n > 0 ? n * n * h + n + 1.0 : 0;
    }
}

/* The output gate and the DSA indexer, added to the attention block. */
static void parts_gate_indexer(const model_spec *m, model_spec_parts *p)
{
    double h = m->hidden;
    /* Output gate: a second q-sized projection (Qwen3.5 full attention), or
     * the size of the attention output (Kimi's gated MLA). */
    if (m->attn_out_gate) p->attn += h * m->heads * (double)(m->kv_lora_rank > 0 ? m->v_head_dim : m->head_dim);
    /* DSA indexer: q from the q latent (or hidden), one shared key, head weights. */
    if (!m->comp_attn) p->indexer = 0;
    if (m->index_topk > 0 && !m->comp_attn) {
        double qin = m->q_lora_rank > 0 ? m->q_lora_rank : h;
        p->indexer = qin * m->index_heads * (double)m->index_head_dim + h * m->index_head_dim +
                     2.0 * m->index_head_dim + h * m->index_heads;
        p->attn += p->indexer;
        p->attn_replicated += h * m->index_head_dim + h * m->index_heads;
    }
}

/* The linear-attention mixer: Gated DeltaNet or Kimi Delta Attention. */
static void parts_linear(const model_spec *m, model_spec_parts *p)
{
    double h = m->hidden;
    /* Gated DeltaNet: in_proj_qkvz, in_proj_ba, causal conv over q/k/v,
     * A_log and dt_bias per value head, gated RMSNorm, out_proj. */
    p->linear = 0;
    if (m->linear_layers > 0) {
        double qk = (double)m->lin_k_heads * m->lin_k_dim, v = (double)m->lin_v_heads * m->lin_v_dim;
        p->linear = h * (2.0 * qk + 2.0 * v) + h * 2.0 * m->lin_v_heads + (2.0 * qk + v) * m->lin_conv +
                    2.0 * m->lin_v_heads + m->lin_v_dim + v * h;
    }
    /* Kimi Delta Attention: q/k/v, a full-rank per-channel forget gate and
     * output gate, beta per head, short conv over q/k/v, A_log and dt_bias
     * per key channel, the output norm and o_proj. */
    if (m->linear_layers > 0 && m->lin_kda) {
        double qk = (double)m->lin_k_heads * m->lin_k_dim, v = (double)m->lin_v_heads * m->lin_v_dim;
        p->linear = h * (2.0 * qk + v) + h * qk + h * v + h * m->lin_v_heads + (2.0 * qk + v) * m->lin_conv +
                    2.0 * qk + m->lin_v_dim + v * h;
    }
}

/* The Mamba-2 mixer. */
static void parts_mamba(const model_spec *m, model_spec_parts *p)
{
    double h = m->hidden;
    /* Mamba-2: in_proj to z, x, B, C and dt; causal conv over x, B, C (with
     * bias); A_log, D, dt_bias per head; gated RMSNorm; out_proj. */
    p->mamba = 0;
    if (m->mamba_layers > 0) {
        double di = (double)m->mamba_heads * m->mamba_head_dim, bc = 2.0 * m->mamba_groups * m->mamba_state;
        double conv = di + bc;
        p->mamba = h * (2.0 * di + bc + m->mamba_heads) + conv * (m->mamba_conv + 1.0) + 3.0 * m->mamba_heads + di +
                   di * h;
    }
}

/* Norms, the dense FFN, experts, router, embedding and LM head. */
static void parts_ffn(const model_spec *m, model_spec_parts *p)
{
    double h = m->hidden;
    const double mats = m->ffn_plain ? 2.0 : 3.0; /* up/down, or gate/up/down */
    const double eh = m->moe_latent > 0 ? m->moe_latent : h;
    p->norms = 2.0 * h;
    p->dense_ffn = mats * h * m->intermediate;
    p->expert = m->experts > 0 ? mats * eh * m->expert_intermediate : 0;
    p->shared = m->experts > 0 ? (double)m->shared_experts * mats * h * m->expert_intermediate : 0;
    /* Latent MoE: hidden -> latent before the routed experts, back after. */
    p->latent = m->experts > 0 && m->moe_latent > 0 ? 2.0 * h * m->moe_latent : 0;
    p->router = m->experts > 0 ? h * m->experts : 0;
    p->embed = (double)m->vocab * h;
    p->lm_head = m->tied_embeddings ? 0 : (double)m->vocab * h;
}

void model_spec_parts_get(const model_spec *m, model_spec_parts *p)
{
    parts_attention(m, p);
    parts_compressed(m, p);
    parts_gate_indexer(m, p);
    parts_linear(m, p);
    parts_mamba(m, p);
    parts_ffn(m, p);
}

#define NEED_POS(field)                                                                     \
    do {                                                                                    \
        if (m->field <= 0)                                                                  \
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': " #field " must be > 0 (got %d)", \
                               origin, m->name, (int)m->field);                             \
    } while (0)
#define NEED_NONNEG(field)                                                                  \
    do {                                                                                    \
        if (m->field < 0)                                                                   \
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': " #field " must be >= 0 (got %d)", \
                               origin, m->name, (int)m->field);                             \
    } while (0)

/* The sizes every model has: positive, non-negative, and within bounds past
 * which the products lose meaning. */
static int spec_check_ranges(const model_spec *m, const char *origin, sim_err *err)
{
    NEED_POS(layers);
    /* Far above every real model; past these the products lose meaning. */
    static const struct {
        const char *what;
        int32_t value, max;
    } lim[] = {{"layers", 0, 100000}, {"hidden", 0, 1 << 20}, {"heads", 0, 1 << 16}, {"kv_heads", 0, 1 << 16},
               {"vocab", 0, 1 << 26}, {"experts", 0, 1 << 20}, {"intermediate", 0, 1 << 24},
               {"expert_intermediate", 0, 1 << 24}};
    const int32_t vals[] = {m->layers, m->hidden, m->heads, m->kv_heads, m->vocab, m->experts, m->intermediate,
                            m->expert_intermediate};
    for (size_t k = 0; k < sizeof lim / sizeof lim[0]; k++)
        if (vals[k] > lim[k].max)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %s = %d is out of range (at most %d)", origin,
                               m->name, lim[k].what, vals[k], lim[k].max);
    NEED_POS(hidden);
    NEED_POS(heads);
    NEED_POS(vocab);
    NEED_NONNEG(head_dim);
    NEED_NONNEG(kv_heads);
    NEED_NONNEG(intermediate);
    NEED_NONNEG(experts);
    NEED_NONNEG(top_k);
    NEED_NONNEG(shared_experts);
    NEED_NONNEG(expert_intermediate);
    NEED_NONNEG(first_dense_layers);
    NEED_NONNEG(q_lora_rank);
    NEED_NONNEG(kv_lora_rank);
    NEED_NONNEG(rope_dim);
    NEED_NONNEG(nope_dim);
    NEED_NONNEG(v_head_dim);
    NEED_NONNEG(sliding_window);
    NEED_NONNEG(sliding_layers);
    NEED_NONNEG(moe_layers);
    return 0;
}

/* Head size and KV heads: MLA's from its ranks, MHA/GQA's from hidden / heads. */
static int spec_derive_heads(model_spec *m, const char *origin, sim_err *err)
{
    if (m->kv_lora_rank > 0) {
        NEED_POS(rope_dim);
        NEED_POS(nope_dim);
        NEED_POS(v_head_dim);
        if (m->head_dim == 0) m->head_dim = m->nope_dim + m->rope_dim;
        /* Every head reads the same latent: kv_heads is not a sharding unit. */
        if (m->kv_heads == 0) m->kv_heads = m->heads;
    } else {
        if (m->head_dim == 0) {
            if (m->hidden % m->heads)
                return sim_err_set(err, SIM_EINVAL,
                                   "%s: model '%s': head_dim missing and hidden %d is not divisible by heads %d",
                                   origin, m->name, m->hidden, m->heads);
            m->head_dim = m->hidden / m->heads;
        }
        if (m->kv_heads == 0) m->kv_heads = m->heads;
        if (m->heads % m->kv_heads)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': heads %d not divisible by kv_heads %d",
                               origin, m->name, m->heads, m->kv_heads);
    }
    return 0;
}

/* Experts, top-k and the MoE layer count (all layers past the dense and
 * FFN-less ones when not given). */
static int spec_derive_moe(model_spec *m, const char *origin, sim_err *err)
{
    if (m->experts > 0) {
        if (m->top_k < 1 || m->top_k > m->experts)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': top_k must be in 1..experts=%d (got %d)",
                               origin, m->name, m->experts, m->top_k);
        NEED_POS(expert_intermediate);
        if (m->first_dense_layers >= m->layers)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': first_dense_layers %d leaves no MoE layer of %d",
                               origin, m->name, m->first_dense_layers, m->layers);
        if (m->moe_layers == 0) m->moe_layers = m->layers - m->first_dense_layers - m->ffnless_layers;
        if (m->moe_layers > m->layers)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': moe_layers %d exceeds layers %d",
                               origin, m->name, m->moe_layers, m->layers);
    } else {
        if (m->top_k || m->shared_experts || m->moe_layers)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': top_k/shared_experts/moe_layers set but experts is 0",
                               origin, m->name);
    }
    if (m->moe_layers + m->ffnless_layers < m->layers && m->n_ffn_widths == 0) NEED_POS(intermediate);
    return 0;
}

/* Sliding-window layers: all attention layers when a window is given alone. */
static int spec_derive_sliding(model_spec *m, const char *origin, sim_err *err)
{
    if (m->sliding_window > 0 && m->sliding_layers == 0 && !m->comp_attn) m->sliding_layers = m->layers;
    if (m->sliding_layers > m->layers)
        return sim_err_set(err, SIM_EINVAL, "%s: model '%s': sliding_layers %d exceeds layers %d",
                           origin, m->name, m->sliding_layers, m->layers);
    if (m->sliding_layers > 0 && m->sliding_window == 0)
        return sim_err_set(err, SIM_EINVAL, "%s: model '%s': sliding_layers set but sliding_window is 0",
                           origin, m->name);
    return 0;
}

/* The other layer classes are counts; the Mamba-2 mixer has its sizes and a
 * bf16 or fp32 state. */
static int spec_check_mamba(const model_spec *m, const char *origin, sim_err *err)
{
    NEED_NONNEG(mamba_layers);
    NEED_NONNEG(mixerless_layers);
    NEED_NONNEG(ffnless_layers);
    NEED_NONNEG(moe_latent);
    NEED_NONNEG(linear_layers);
    if (m->mamba_layers > 0) {
        NEED_POS(mamba_heads);
        NEED_POS(mamba_head_dim);
        NEED_POS(mamba_groups);
        NEED_POS(mamba_state);
        NEED_POS(mamba_conv);
        if (m->mamba_heads % m->mamba_groups)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %d Mamba heads are not a multiple of %d groups",
                               origin, m->name, m->mamba_heads, m->mamba_groups);
        if (m->mamba_state_bytes != 2 && m->mamba_state_bytes != 4)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': Mamba state values must be 2 (bf16) or 4 (fp32) "
                               "bytes (got %d)", origin, m->name, m->mamba_state_bytes);
    }
    return 0;
}

/* The mixer and FFN classes leave an attention layer and fit the layer count. */
static int spec_check_layer_mix(const model_spec *m, const char *origin, sim_err *err)
{
    int64_t other = (int64_t)m->linear_layers + m->mamba_layers + m->mixerless_layers;
    if (other >= m->layers)
        return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %d linear, %d Mamba and %d mixer-less layers leave "
                           "no attention layer of %d", origin, m->name, m->linear_layers, m->mamba_layers,
                           m->mixerless_layers, m->layers);
    if ((int64_t)m->moe_layers + m->ffnless_layers > m->layers)
        return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %d MoE and %d FFN-less layers exceed %d layers",
                           origin, m->name, m->moe_layers, m->ffnless_layers, m->layers);
    return 0;
}

/* FFN width classes and the per-layer list of kinds, which must add up to the
 * layer counts. */
static int spec_check_listed(const model_spec *m, const char *origin, sim_err *err)
{
    if (m->n_ffn_widths < 0 || m->n_ffn_widths > (int32_t)(sizeof m->ffn_widths / sizeof m->ffn_widths[0]))
        return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %d FFN width classes (at most %zu)", origin, m->name,
                           m->n_ffn_widths, sizeof m->ffn_widths / sizeof m->ffn_widths[0]);
    for (int32_t k = 0; k < m->n_ffn_widths; k++)
        if (m->ffn_widths[k] <= 0 || m->ffn_widths[k] > (1 << 24))
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': FFN width class %d is %d (expected 1..%d)", origin,
                               m->name, k, m->ffn_widths[k], 1 << 24);
    if (m->n_ffn_widths > 0 && m->listed_layers != m->layers)
        return sim_err_set(err, SIM_EINVAL, "%s: model '%s': FFN width classes need the per-layer list", origin,
                           m->name);
    if (m->listed_layers != 0) {
        if (m->listed_layers != m->layers || m->layers > MODEL_LAYERS_LISTED_MAX)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %d listed layer kinds for %d layers (at most %d)",
                               origin, m->name, m->listed_layers, m->layers, MODEL_LAYERS_LISTED_MAX);
        int32_t cnt_mix[4] = {0}, cnt_ffn[3] = {0};
        for (int32_t i = 0; i < m->layers; i++) {
            if (m->layer_mixer[i] > MODEL_MIX_NONE || m->layer_ffn[i] > MODEL_FFN_NONE ||
                (m->layer_ffn[i] == MODEL_FFN_DENSE && m->n_ffn_widths > 0 && m->layer_width[i] >= m->n_ffn_widths))
                return sim_err_set(err, SIM_EINVAL, "%s: model '%s': layer %d has an unknown kind", origin, m->name, i);
            cnt_mix[m->layer_mixer[i]]++;
            cnt_ffn[m->layer_ffn[i]]++;
        }
        if (cnt_mix[MODEL_MIX_LINEAR] != m->linear_layers || cnt_mix[MODEL_MIX_MAMBA] != m->mamba_layers ||
            cnt_mix[MODEL_MIX_NONE] != m->mixerless_layers || cnt_ffn[MODEL_FFN_NONE] != m->ffnless_layers ||
            (m->experts > 0 && cnt_ffn[MODEL_FFN_MOE] != m->moe_layers))
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': the per-layer kinds do not add up to the layer counts",
                               origin, m->name);
    }
    return 0;
}

/* Linear-attention and DSA-indexer sizes. */
static int spec_check_linear_index(const model_spec *m, const char *origin, sim_err *err)
{
    if (m->linear_layers > 0) {
        NEED_POS(lin_k_heads);
        NEED_POS(lin_v_heads);
        NEED_POS(lin_k_dim);
        NEED_POS(lin_v_dim);
        if (m->sliding_layers > m->layers - m->linear_layers)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %d sliding and %d linear layers exceed %d layers",
                               origin, m->name, m->sliding_layers, m->linear_layers, m->layers);
        if (m->lin_v_heads % m->lin_k_heads)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %d linear value heads are not a multiple of %d key "
                               "heads", origin, m->name, m->lin_v_heads, m->lin_k_heads);
    }
    if (m->index_topk > 0) {
        NEED_POS(index_heads);
        NEED_POS(index_head_dim);
    }
    return 0;
}

/* DeepSeek-V4's compressed attention: layer classes, grouped O, one K=V head;
 * hash-routed layers within the MoE layers. */
static int spec_check_compressed(const model_spec *m, const char *origin, sim_err *err)
{
    if (m->comp_attn) {
        NEED_POS(q_lora_rank);
        NEED_POS(sliding_window);
        NEED_NONNEG(csa_layers);
        NEED_NONNEG(hca_layers);
        NEED_NONNEG(hc_mult);
        NEED_NONNEG(hash_layers);
        NEED_NONNEG(o_groups);
        if (m->csa_layers > 0) NEED_POS(csa_ratio);
        if (m->hca_layers > 0) NEED_POS(hca_ratio);
        if (m->o_groups > 0 && (m->o_lora_rank <= 0 || m->heads % m->o_groups))
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': o_groups %d must divide the %d heads, with o_lora_rank "
                               "> 0", origin, m->name, m->o_groups, m->heads);
        if ((int64_t)m->csa_layers + m->hca_layers + m->sliding_layers != model_spec_attention_layers(m))
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %d compressed-sparse, %d heavily compressed and %d "
                               "window-only layers are not the %d attention layers", origin, m->name, m->csa_layers,
                               m->hca_layers, m->sliding_layers, model_spec_attention_layers(m));
        if (m->kv_heads != 1)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': compressed attention shares one K=V head (got %d KV "
                               "heads)", origin, m->name, m->kv_heads);
    }
    if (m->hash_layers > m->moe_layers)
        return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %d hash-routed layers exceed the %d MoE layers", origin,
                           m->name, m->hash_layers, m->moe_layers);
    return 0;
}

/* Total and active parameters from the parts and the layer classes. */
static void spec_count_params(model_spec *m)
{
    model_spec_parts p;
    model_spec_parts_get(m, &p);
    double attn_layers = model_spec_attention_layers(m);
    /* One RMSNorm before each mixer and each FFN (a Nemotron-H block has one). */
    double norms = (double)(m->layers - m->mixerless_layers + m->layers - m->ffnless_layers) * m->hidden;
    double moe_total = m->experts * p.expert + p.shared + p.router + p.latent;
    double moe_active = m->top_k * p.expert + p.shared + p.router + p.latent;
    /* Embedding and LM head both count as active: the head is a full GEMM
     * per token and the lookup is one row, but the convention of the model
     * cards we check against (Mixtral 12.9B) counts both. */
    double outer = p.embed + p.lm_head + m->hidden + p.hc_head; /* final norm (and hyper-connection head) */
    double mixers = attn_layers * p.attn + m->linear_layers * p.linear + m->mamba_layers * p.mamba +
                    m->csa_layers * p.comp_csa + m->hca_layers * p.comp_hca;
    norms += m->layers * p.hc;
    double dense = model_spec_dense_params(m);
    m->params = outer + norms + mixers + dense + m->moe_layers * moe_total;
    m->active_params = outer + norms + mixers + dense + m->moe_layers * moe_active;
}

int model_spec_derive(model_spec *m, const char *origin, sim_err *err)
{
    int rc;
    if ((rc = spec_check_ranges(m, origin, err))) return rc;
    if ((rc = spec_derive_heads(m, origin, err))) return rc;
    if ((rc = spec_derive_moe(m, origin, err))) return rc;
    if ((rc = spec_derive_sliding(m, origin, err))) return rc;
    if ((rc = spec_check_mamba(m, origin, err))) return rc;
    if ((rc = spec_check_layer_mix(m, origin, err))) return rc;
    if ((rc = spec_check_listed(m, origin, err))) return rc;
    if ((rc = spec_check_linear_index(m, origin, err))) return rc;
    if ((rc = spec_check_compressed(m, origin, err))) return rc;
    spec_count_params(m);
    return 0;
}

int32_t model_spec_attention_layers(const model_spec *m)
{
    return m->layers - m->linear_layers - m->mamba_layers - m->mixerless_layers;
}

int32_t model_spec_dense_layers(const model_spec *m)
{
    return m->layers - m->moe_layers - m->ffnless_layers;
}

int32_t model_spec_layer_inter(const model_spec *m, int32_t i)
{
    if (m->n_ffn_widths > 0 && m->listed_layers > 0 && i >= 0 && i < m->listed_layers &&
        m->layer_width[i] < m->n_ffn_widths)
        return m->ffn_widths[m->layer_width[i]];
    return m->intermediate;
}

double model_spec_dense_params(const model_spec *m)
{
    const double mats = m->ffn_plain ? 2.0 : 3.0;
    if (m->n_ffn_widths == 0) return model_spec_dense_layers(m) * mats * m->hidden * (double)m->intermediate;
    double sum = 0;
    for (int32_t i = 0; i < m->layers; i++)
        if (model_spec_layer_ffn(m, i) == MODEL_FFN_DENSE) sum += model_spec_layer_inter(m, i);
    return mats * m->hidden * sum;
}

/* Even spread: slot i of n is one of the k marked ones. */
static int spread(int64_t i, int64_t k, int64_t n)
{
    return k > 0 && n > 0 && (i + 1) * k / n > i * k / n;
}

model_mixer_kind model_spec_layer_mixer(const model_spec *m, int32_t i)
{
    if (m->listed_layers > 0 && i >= 0 && i < m->listed_layers) return (model_mixer_kind)m->layer_mixer[i];
    /* The attention layers, A of L, sit at the end of each of A even
     * groups (Qwen3.5: every full_attention_interval-th layer attends);
     * the other kinds share the rest evenly. */
    int64_t L = m->layers, A = model_spec_attention_layers(m);
    if ((int64_t)(i + 1) * A / L != (int64_t)i * A / L) return MODEL_MIX_ATTN;
    int64_t j = i - (int64_t)(i + 1) * A / L; /* index among the non-attention layers */
    int64_t N = L - A;
    if (spread(j, m->mamba_layers, N)) return MODEL_MIX_MAMBA;
    int64_t k = j - (j + 1) * m->mamba_layers / (N > 0 ? N : 1); /* among the non-Mamba ones */
    return k < m->linear_layers ? MODEL_MIX_LINEAR : MODEL_MIX_NONE;
}

model_ffn_kind model_spec_layer_ffn(const model_spec *m, int32_t i)
{
    if (m->listed_layers > 0 && i >= 0 && i < m->listed_layers) return (model_ffn_kind)m->layer_ffn[i];
    int64_t L = m->layers, F = m->ffnless_layers;
    if (spread(i, F, L)) return MODEL_FFN_NONE;
    /* Among the layers with an FFN the MoE ones come last (first-k dense). */
    int64_t k = i - (int64_t)(i + 1) * F / L, n = L - F;
    return m->experts > 0 && k >= n - m->moe_layers ? MODEL_FFN_MOE : MODEL_FFN_DENSE;
}

double model_spec_weight_bytes(const model_spec *m, int override, double *by_dtype)
{
    model_spec_parts p;
    model_spec_parts_get(m, &p);
    const double Lmoe = m->moe_layers;
    /* The mixers (attention, linear attention, Mamba) are the attention part. */
    const double mixers = model_spec_attention_layers(m) * p.attn + m->linear_layers * p.linear +
                          m->mamba_layers * p.mamba + m->csa_layers * p.comp_csa + m->hca_layers * p.comp_hca;
    /* Latent projections sit with the routed experts they feed. */
    const double part_params[4] = {mixers, model_spec_dense_params(m), Lmoe * (m->experts * p.expert + p.latent),
                                   Lmoe * p.shared};
    const int32_t part_dt[4] = {m->wdtype_attn, m->wdtype_dense, m->wdtype_expert, m->wdtype_shared};
    double local[MODEL_DTYPE_COUNT] = {0};
    double *b = by_dtype ? by_dtype : local;
    for (int d = 0; d < MODEL_DTYPE_COUNT; d++) b[d] = 0;
    for (int k = 0; k < 4; k++) {
        int d = override >= 0 ? override : part_dt[k];
        if (d < 0 || d >= MODEL_DTYPE_COUNT) d = MODEL_DTYPE_BF16;
        b[d] += part_params[k] * model_dtype_bytes((model_dtype)d);
    }
    const double norms = (double)(m->layers - m->mixerless_layers + m->layers - m->ffnless_layers) * m->hidden;
    b[MODEL_DTYPE_BF16] += 2.0 * (norms + Lmoe * p.router + p.embed + p.lm_head + m->hidden);
    /* Hyper-connection mappings stay fp32 (counted with the bf16 part). */
    b[MODEL_DTYPE_BF16] += 4.0 * (m->layers * p.hc + p.hc_head);
    double total = 0;
    for (int d = 0; d < MODEL_DTYPE_COUNT; d++) total += b[d];
    return total;
}

int model_spec_main_dtype(const model_spec *m)
{
    return m->experts > 0 ? m->wdtype_expert : m->wdtype_dense;
}

double model_spec_csa_kv_bytes(const model_spec *m, double kv_value_bytes)
{
    if (!m->comp_attn || m->csa_ratio <= 0) return 0;
    return (m->head_dim * kv_value_bytes + m->index_head_dim * (1.0 + 4.0 / 128.0)) / m->csa_ratio;
}

double model_spec_hca_kv_bytes(const model_spec *m, double kv_value_bytes)
{
    if (!m->comp_attn || m->hca_ratio <= 0) return 0;
    return m->head_dim * kv_value_bytes / m->hca_ratio;
}

double model_spec_window_state_bytes(const model_spec *m, int compressed_kind)
{
    if (!m->comp_attn) return 0;
    const double hd = m->head_dim, window = (double)m->sliding_window * hd * 2.0;
    /* Pending tokens: kv and gate per token; CSA's two overlapping series
     * (2·head_dim each) for the window and the previous one, and the
     * indexer's own (2·index_head_dim). */
    if (compressed_kind == 1)
        return window + 2.0 * m->csa_ratio * 2.0 * (2.0 * hd + 2.0 * m->index_head_dim) * 2.0;
    if (compressed_kind == 2) return window + (double)m->hca_ratio * 2.0 * hd * 2.0;
    return window;
}

double model_spec_kv_bytes_per_token(const model_spec *m, double kv_value_bytes)
{
    /* DeepSeek-V4: only the compressed entries grow with the context. */
    if (m->comp_attn)
        return m->csa_layers * model_spec_csa_kv_bytes(m, kv_value_bytes) +
               m->hca_layers * model_spec_hca_kv_bytes(m, kv_value_bytes);
    double per_layer = m->kv_lora_rank > 0 ? (double)m->kv_lora_rank + m->rope_dim
                                           : 2.0 * m->kv_heads * (double)m->head_dim;
    int32_t attn = model_spec_attention_layers(m), full = attn - m->sliding_layers;
    int32_t counted = full > 0 ? full : attn;
    /* DSA keeps one fp8 indexer key (with an fp32 scale per 128) per token. */
    double indexer = m->index_topk > 0 ? m->index_head_dim * (1.0 + 4.0 / 128.0) : 0;
    return counted * (per_layer * kv_value_bytes + indexer);
}

int model_spec_layer_is_linear(const model_spec *m, int32_t i)
{
    return model_spec_layer_mixer(m, i) == MODEL_MIX_LINEAR;
}

double model_spec_linear_state_bytes(const model_spec *m)
{
    if (m->linear_layers <= 0) return 0;
    double qk = (double)m->lin_k_heads * m->lin_k_dim, v = (double)m->lin_v_heads * m->lin_v_dim;
    double conv = (2.0 * qk + v) * (m->lin_conv > 1 ? m->lin_conv - 1 : 0) * 2.0;
    double recurrent = (double)m->lin_v_heads * m->lin_k_dim * m->lin_v_dim * 4.0;
    return conv + recurrent;
}

double model_spec_mamba_state_bytes(const model_spec *m)
{
    if (m->mamba_layers <= 0) return 0;
    double di = (double)m->mamba_heads * m->mamba_head_dim, bc = 2.0 * m->mamba_groups * m->mamba_state;
    double conv = (di + bc) * (m->mamba_conv > 1 ? m->mamba_conv - 1 : 0) * 2.0;
    double ssm = di * m->mamba_state * (double)m->mamba_state_bytes;
    return conv + ssm;
}

double model_spec_state_bytes_per_seq(const model_spec *m)
{
    return m->linear_layers * model_spec_linear_state_bytes(m) + m->mamba_layers * model_spec_mamba_state_bytes(m) +
           m->sliding_layers * model_spec_window_state_bytes(m, 0) + m->csa_layers * model_spec_window_state_bytes(m, 1) +
           m->hca_layers * model_spec_window_state_bytes(m, 2);
}
