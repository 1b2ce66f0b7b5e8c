/* model_spec — see model_spec.h. */
#include "model_spec.h"

#include "model_quant.h"

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

void model_spec_parts_get(const model_spec *m, model_spec_parts *p)
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
    } else {
        double hd = m->head_dim;
        p->attn = h * m->heads * hd + 2.0 * h * m->kv_heads * hd + (double)m->heads * hd * h;
        p->attn_replicated = 0;
    }
    /* Output gate: a second q-sized projection (Qwen3.5 full attention). */
    if (m->attn_out_gate) p->attn += h * m->heads * (double)m->head_dim;
    /* DSA indexer: q from the q latent (or hidden), one shared key, head weights. */
    p->indexer = 0;
    if (m->index_topk > 0) {
        double qin = m->q_lora_rank > 0 ? m->q_lora_rank : h;
        p->indexer = qin * m->index_heads * (double)m->index_head_dim + h * m->index_head_dim +
                     2.0 * m->index_head_dim + h * m->index_heads;
        p->attn += p->indexer;
        p->attn_replicated += h * m->index_head_dim + h * m->index_heads;
    }
    /* Gated DeltaNet: in_proj_qkvz, in_proj_ba, causal conv over q/k/v,
     * A_log and dt_bias per value head, gated RMSNorm, out_proj. */
    p->linear = 0;
    if (m->linear_layers > 0) {
        double qk = (double)m->lin_k_heads * m->lin_k_dim, v = (double)m->lin_v_heads * m->lin_v_dim;
        p->linear = h * (2.0 * qk + 2.0 * v) + h * 2.0 * m->lin_v_heads + (2.0 * qk + v) * m->lin_conv +
                    2.0 * m->lin_v_heads + m->lin_v_dim + v * h;
    }
    p->norms = 2.0 * h;
    p->dense_ffn = 3.0 * h * m->intermediate;
    p->expert = m->experts > 0 ? 3.0 * h * m->expert_intermediate : 0;
    p->shared = m->experts > 0 ? (double)m->shared_experts * 3.0 * h * m->expert_intermediate : 0;
    p->router = m->experts > 0 ? h * m->experts : 0;
    p->embed = (double)m->vocab * h;
    p->lm_head = m->tied_embeddings ? 0 : (double)m->vocab * h;
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

int model_spec_derive(model_spec *m, const char *origin, sim_err *err)
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

    if (m->experts > 0) {
        if (m->top_k < 1 || m->top_k > m->experts)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': top_k must be in 1..experts=%d (got %d)",
                               origin, m->name, m->experts, m->top_k);
        NEED_POS(expert_intermediate);
        if (m->first_dense_layers >= m->layers)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': first_dense_layers %d leaves no MoE layer of %d",
                               origin, m->name, m->first_dense_layers, m->layers);
        if (m->moe_layers == 0) m->moe_layers = m->layers - m->first_dense_layers;
        if (m->moe_layers > m->layers)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': moe_layers %d exceeds layers %d",
                               origin, m->name, m->moe_layers, m->layers);
    } else {
        if (m->top_k || m->shared_experts || m->moe_layers)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': top_k/shared_experts/moe_layers set but experts is 0",
                               origin, m->name);
    }
    if (m->moe_layers < m->layers) NEED_POS(intermediate);

    if (m->sliding_window > 0 && m->sliding_layers == 0) m->sliding_layers = m->layers;
    if (m->sliding_layers > m->layers)
        return sim_err_set(err, SIM_EINVAL, "%s: model '%s': sliding_layers %d exceeds layers %d",
                           origin, m->name, m->sliding_layers, m->layers);
    if (m->sliding_layers > 0 && m->sliding_window == 0)
        return sim_err_set(err, SIM_EINVAL, "%s: model '%s': sliding_layers set but sliding_window is 0",
                           origin, m->name);

    if (m->linear_layers > 0) {
        NEED_POS(lin_k_heads);
        NEED_POS(lin_v_heads);
        NEED_POS(lin_k_dim);
        NEED_POS(lin_v_dim);
        if (m->linear_layers >= m->layers)
            return sim_err_set(err, SIM_EINVAL, "%s: model '%s': %d linear-attention layers leave no attention layer "
                               "of %d", origin, m->name, m->linear_layers, m->layers);
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

    model_spec_parts p;
    model_spec_parts_get(m, &p);
    double dense = m->layers - m->moe_layers;
    double attn_layers = m->layers - m->linear_layers;
    double per_layer = p.norms;
    double moe_total = m->experts * p.expert + p.shared + p.router;
    double moe_active = m->top_k * p.expert + p.shared + p.router;
    /* Embedding and LM head both count as active: the head is a full GEMM
     * per token and the lookup is one row, but the convention of the model
     * cards we check against (Mixtral 12.9B) counts both. */
    double outer = p.embed + p.lm_head + m->hidden; /* final norm */
    double mixers = attn_layers * p.attn + m->linear_layers * p.linear;
    m->params = outer + m->layers * per_layer + mixers + dense * p.dense_ffn + m->moe_layers * moe_total;
    m->active_params = outer + m->layers * per_layer + mixers + dense * p.dense_ffn + m->moe_layers * moe_active;
    return 0;
}

double model_spec_weight_bytes(const model_spec *m, int override, double *by_dtype)
{
    model_spec_parts p;
    model_spec_parts_get(m, &p);
    const double L = m->layers, Lmoe = m->moe_layers, Ldense = m->layers - m->moe_layers;
    const double part_params[4] = {L * p.attn, Ldense * p.dense_ffn, Lmoe * m->experts * p.expert, Lmoe * p.shared};
    const int32_t part_dt[4] = {m->wdtype_attn, m->wdtype_dense, m->wdtype_expert, m->wdtype_shared};
    double local[MODEL_DTYPE_COUNT] = {0};
    double *b = by_dtype ? by_dtype : local;
    for (int d = 0; d < MODEL_DTYPE_COUNT; d++) b[d] = 0;
    for (int k = 0; k < 4; k++) {
        int d = override >= 0 ? override : part_dt[k];
        if (d < 0 || d >= MODEL_DTYPE_COUNT) d = MODEL_DTYPE_BF16;
        b[d] += part_params[k] * model_dtype_bytes((model_dtype)d);
    }
    b[MODEL_DTYPE_BF16] += 2.0 * (L * p.norms + Lmoe * p.router + p.embed + p.lm_head + m->hidden);
    /* part_params counted attention for every layer; linear layers hold theirs. */
    {
        int d = override >= 0 ? override : part_dt[0];
        if (d < 0 || d >= MODEL_DTYPE_COUNT) d = MODEL_DTYPE_BF16;
        b[d] += m->linear_layers * (p.linear - p.attn) * model_dtype_bytes((model_dtype)d);
    }
    double total = 0;
    for (int d = 0; d < MODEL_DTYPE_COUNT; d++) total += b[d];
    return total;
}

int model_spec_main_dtype(const model_spec *m)
{
    return m->experts > 0 ? m->wdtype_expert : m->wdtype_dense;
}

double model_spec_kv_bytes_per_token(const model_spec *m, double kv_value_bytes)
{
    double per_layer = m->kv_lora_rank > 0 ? (double)m->kv_lora_rank + m->rope_dim
                                           : 2.0 * m->kv_heads * (double)m->head_dim;
    int32_t attn = m->layers - m->linear_layers, full = attn - m->sliding_layers;
    int32_t counted = full > 0 ? full : attn;
    /* DSA keeps one fp8 indexer key (with an fp32 scale per 128) per token. */
    double indexer = m->index_topk > 0 ? m->index_head_dim * (1.0 + 4.0 / 128.0) : 0;
    return counted * (per_layer * kv_value_bytes + indexer);
}

int model_spec_layer_is_linear(const model_spec *m, int32_t i)
{
    if (m->linear_layers <= 0) return 0;
    /* The attention layers, A of L, sit at the end of each of A even groups. */
    int64_t A = m->layers - m->linear_layers, L = m->layers;
    return (int64_t)(i + 1) * A / L == (int64_t)i * A / L;
}

double model_spec_state_bytes_per_seq(const model_spec *m)
{
    if (m->linear_layers <= 0) return 0;
    double qk = (double)m->lin_k_heads * m->lin_k_dim, v = (double)m->lin_v_heads * m->lin_v_dim;
    double conv = (2.0 * qk + v) * (m->lin_conv > 1 ? m->lin_conv - 1 : 0) * 2.0;
    double recurrent = (double)m->lin_v_heads * m->lin_k_dim * m->lin_v_dim * 4.0;
    return m->linear_layers * (conv + recurrent);
}
