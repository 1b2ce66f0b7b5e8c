/* model_hf — see model_hf.h. */
#include "model_hf.h"
#include "model_vision.h"

#include "model_hf_blocks.h"
#include "model_hf_quant.h"
#include "model_dtype.h"
#include "model_spec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Largest value servesim accepts for any size key: far above every real
 * model (vocab 262k, hidden 16k, 1M context) and small enough that products
 * of a few sizes stay exact in a double. */
#define HF_INT_MAX (1 << 26)

/* Reads an integer key: missing is an error when required, JSON null is
 * "absent" (DeepSeek-V2-Lite writes q_lora_rank: null). */
static int hf_int(json_t *root, const char *origin, const char *key, int required, int32_t *out, sim_err *err)
{
    json_t *v = json_object_get(root, key);
    double d;
    if (!v || json_is_null(v)) {
        if (required) return sim_err_set(err, SIM_EINVAL, "%s: key '%s' missing", origin, key);
        return 0;
    }
    if (json_is_real(v)) /* some exporters write 4096.0 */
        d = json_real_value(v);
    else if (json_is_integer(v))
        d = (double)json_integer_value(v);
    else
        return sim_err_set(err, SIM_EINVAL, "%s: key '%s' must be a non-negative integer, got a %s", origin, key,
                           json_is_string(v) ? "string" : json_is_boolean(v) ? "boolean" : "list or mapping");
    if (d != floor(d))
        return sim_err_set(err, SIM_EINVAL, "%s: key '%s' must be a whole number, got %g", origin, key, d);
    if (d < 0)
        return sim_err_set(err, SIM_EINVAL, "%s: key '%s' must be >= 0, got %.0f", origin, key, d);
    if (d > HF_INT_MAX)
        return sim_err_set(err, SIM_EINVAL, "%s: key '%s' = %.6g is out of range (at most %d: no real model is that "
                           "large)", origin, key, d, HF_INT_MAX);
    *out = (int32_t)d;
    return 1;
}

/* A required key that must be >= 1. */
static int hf_pos(json_t *root, const char *origin, const char *key, int32_t *out, sim_err *err)
{
    int rc = hf_int(root, origin, key, 1, out, err);
    if (rc < 0) return rc;
    if (*out < 1) return sim_err_set(err, SIM_EINVAL, "%s: key '%s' must be >= 1, got 0", origin, key);
    return rc;
}

/* First present key of a list of synonyms. */
static int hf_int_any(json_t *root, const char *origin, const char *const *keys, int required, int32_t *out,
                      sim_err *err)
{
    for (int i = 0; keys[i]; i++) {
        json_t *v = json_object_get(root, keys[i]);
        if (v && !json_is_null(v)) return hf_int(root, origin, keys[i], 1, out, err);
    }
    if (required) return sim_err_set(err, SIM_EINVAL, "%s: key '%s' missing", origin, keys[0]);
    return 0;
}

static void hf_name_from_path(const char *path, char *name, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t n;
    if (!strcmp(base, "config.json") && slash && slash > path) {
        const char *p = slash - 1;
        while (p > path && p[-1] != '/') p--;
        n = (size_t)(slash - p);
        base = p;
    } else {
        const char *dot = strrchr(base, '.');
        n = dot ? (size_t)(dot - base) : strlen(base);
    }
    if (n >= size) n = size - 1;
    memcpy(name, base, n);
    name[n] = 0;
}

static json_t *hf_text_root(json_t *root);

/* Counts the layers of one kind in layer_types: 1 when the list is given,
 * 0 when absent, < 0 when it does not have one entry per layer. */
static int hf_layer_types(json_t *root, const char *origin, int32_t layers, const char *kind, int32_t *count,
                          sim_err *err)
{
    json_t *types = json_object_get(root, "layer_types");
    if (!json_is_array(types)) return 0;
    if ((int32_t)json_array_size(types) != layers)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'layer_types' has %zu entries for %d layers", origin,
                           json_array_size(types), layers);
    *count = 0;
    for (size_t j = 0; j < json_array_size(types); j++) {
        const char *t = json_string_value(json_array_get(types, j));
        if (t && !strcmp(t, kind)) (*count)++;
    }
    return 1;
}

/* DeepSeek-V4's attention and residual (config keys of deepseek_v4):
 * compress_ratios gives each layer's KV compression (0: the sliding window
 * only; the smaller ratio: compressed sparse attention with the lightning
 * indexer; the larger: heavily compressed attention), with one more entry
 * for the multi-token-prediction layer; o_groups/o_lora_rank the grouped
 * output projection; hc_mult the hyper-connection streams; num_hash_layers
 * the hash-routed MoE layers. 0 when the config has no compress_ratios. */
static int hf_deepseek_v4(json_t *root, const char *origin, model_spec *m, sim_err *err)
{
    json_t *cr = json_object_get(root, "compress_ratios");
    int rc;
    if (!cr) return 0;
    if (!json_is_array(cr))
        return sim_err_set(err, SIM_EINVAL, "%s: key 'compress_ratios' must be a list of one ratio per layer", origin);
    size_t n = json_array_size(cr);
    if (n != (size_t)m->layers && n != (size_t)m->layers + 1)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'compress_ratios' has %zu entries for %d layers (expected %d, "
                           "or one more for the MTP layer)", origin, n, m->layers, m->layers);
    if (m->sliding_window <= 0)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'compress_ratios' needs 'sliding_window' (every layer attends to "
                           "its window)", origin);
    int32_t lo = 0, hi = 0;
    for (int32_t i = 0; i < m->layers; i++) {
        json_t *v = json_array_get(cr, (size_t)i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1 << 20)
            return sim_err_set(err, SIM_EINVAL, "%s: key 'compress_ratios[%d]' must be a ratio >= 0 (0 = sliding "
                               "window only)", origin, i);
        int32_t r = (int32_t)json_integer_value(v);
        if (r == 0 || r == lo || r == hi) continue;
        if (r == 1)
            return sim_err_set(err, SIM_EINVAL, "%s: key 'compress_ratios[%d]' = 1 compresses nothing (expected 0 or "
                               ">= 2)", origin, i);
        if (!lo) lo = r;
        else if (!hi) hi = r;
        else
            return sim_err_set(err, SIM_ENOTSUP, "%s: key 'compress_ratios[%d]' = %d: a third compression ratio (after "
                               "%d and %d) is not modelled by servesim", origin, i, r, lo, hi);
    }
    if (lo && hi && lo > hi) {
        int32_t t = lo;
        lo = hi, hi = t;
    }
    if (lo && !hi && m->index_topk <= 0) hi = lo, lo = 0; /* one ratio and no indexer: heavily compressed only */
    m->comp_attn = 1;
    m->csa_ratio = lo, m->hca_ratio = hi;
    m->csa_layers = m->hca_layers = m->sliding_layers = 0;
    for (int32_t i = 0; i < m->layers; i++) {
        int32_t r = (int32_t)json_integer_value(json_array_get(cr, (size_t)i));
        m->csa_layers += r && r == lo;
        m->hca_layers += r && r == hi;
        m->sliding_layers += r == 0;
    }
    if (m->csa_layers > 0 && m->index_topk <= 0)
        return sim_err_set(err, SIM_EINVAL, "%s: compressed sparse layers (compress_ratios %d) need the lightning "
                           "indexer's 'index_topk', 'index_n_heads', 'index_head_dim'", origin, lo);
    if ((rc = hf_pos(root, origin, "q_lora_rank", &m->q_lora_rank, err)) < 0) return rc;
    if ((rc = hf_int(root, origin, "qk_rope_head_dim", 0, &m->rope_dim, err)) < 0) return rc;
    if ((rc = hf_int(root, origin, "o_groups", 0, &m->o_groups, err)) < 0) return rc;
    if (m->o_groups > 0) {
        if ((rc = hf_pos(root, origin, "o_lora_rank", &m->o_lora_rank, err)) < 0) return rc;
        if (m->heads % m->o_groups)
            return sim_err_set(err, SIM_EINVAL, "%s: key 'o_groups' = %d does not divide 'num_attention_heads' = %d",
                               origin, m->o_groups, m->heads);
    }
    if ((rc = hf_int(root, origin, "hc_mult", 0, &m->hc_mult, err)) < 0) return rc;
    if (m->hc_mult == 1) m->hc_mult = 0; /* one stream is a plain residual */
    if (m->hc_mult > 64)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'hc_mult' = %d residual streams (at most 64)", origin, m->hc_mult);
    if ((rc = hf_int(root, origin, "num_hash_layers", 0, &m->hash_layers, err)) < 0) return rc;
    if (m->hash_layers > m->moe_layers)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'num_hash_layers' = %d exceeds the %d MoE layers", origin,
                           m->hash_layers, m->moe_layers);
    return 1;
}

/* Depth, width, heads, vocabulary, head size and the dense FFN width;
 * *plain_inter is intermediate_size, the experts' width when no other is given. */
static int hf_dims(json_t *root, const char *origin, model_spec *m, int32_t *plain_inter, sim_err *err)
{
    int rc;
    /* Nemotron-H may give its depth only by the length of its block list. */
    int listed_depth = json_object_get(root, "layers_block_type") || json_object_get(root, "hybrid_override_pattern");
    if ((rc = hf_int(root, origin, "num_hidden_layers", !listed_depth, &m->layers, err)) < 0) return rc;
    if (rc == 1 && m->layers < 1)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'num_hidden_layers' must be >= 1, got 0", origin);
    if ((rc = hf_pos(root, origin, "hidden_size", &m->hidden, err)) < 0) return rc;
    if ((rc = hf_pos(root, origin, "num_attention_heads", &m->heads, err)) < 0) return rc;
    if ((rc = hf_pos(root, origin, "vocab_size", &m->vocab, err)) < 0) return rc;
    if ((rc = hf_int(root, origin, "num_key_value_heads", 0, &m->kv_heads, err)) < 0) return rc;
    if (rc == 1 && m->kv_heads == 0)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'num_key_value_heads' must be >= 1, got 0 (omit the key for "
                           "one KV head per attention head)", origin);
    if (m->kv_heads > 0 && m->heads % m->kv_heads)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'num_attention_heads' = %d is not a multiple of "
                           "'num_key_value_heads' = %d (each KV head serves a whole group of query heads)",
                           origin, m->heads, m->kv_heads);
    static const char *const k_head_dim[] = {"head_dim", "attention_head_dim", NULL};
    if ((rc = hf_int_any(root, origin, k_head_dim, 0, &m->head_dim, err)) < 0) return rc;
    if (rc == 1 && m->head_dim == 0)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'head_dim' must be >= 1, got 0 (omit it for hidden_size / "
                           "num_attention_heads)", origin);
    if (rc == 0 && !json_object_get(root, "kv_lora_rank") && m->hidden % m->heads)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'head_dim' missing and 'hidden_size' = %d is not a multiple "
                           "of 'num_attention_heads' = %d", origin, m->hidden, m->heads);
    if ((rc = hf_int(root, origin, "intermediate_size", 0, &m->intermediate, err)) < 0) return rc;
    /* MiniMax-M3 sizes its leading dense layers apart from the experts:
     * intermediate_size is then the experts' width (the NVFP4 export gives
     * no moe_intermediate_size, only this). */
    *plain_inter = m->intermediate;
    if ((rc = hf_int(root, origin, "dense_intermediate_size", 0, &m->intermediate, err)) < 0) return rc;
    return 0;
}

/* MoE sizes: the expert count, top-k, expert and shared-expert widths, the
 * leading dense layers and the latent width. */
static int hf_experts(json_t *root, const char *origin, model_spec *m, int32_t plain_inter, sim_err *err)
{
    int rc;
    /* MoE: the expert count is spelt three ways across families. */
    static const char *const k_experts[] = {"num_local_experts", "num_experts", "n_routed_experts", NULL};
    static const char *const k_topk[] = {"num_experts_per_tok", "experts_per_token", "num_experts_per_token",
                                         "top_k_experts", NULL};
    static const char *const k_shared[] = {"n_shared_experts", "num_shared_experts", NULL};
    if ((rc = hf_int_any(root, origin, k_experts, 0, &m->experts, err)) < 0) return rc;
    if (m->experts > 0) {
        if ((rc = hf_int_any(root, origin, k_topk, 1, &m->top_k, err)) < 0) return rc;
        m->expert_intermediate = plain_inter; /* Mixtral, gpt-oss, MiniMax-M3 */
        if ((rc = hf_int(root, origin, "moe_intermediate_size", 0, &m->expert_intermediate, err)) < 0) return rc;
        if ((rc = hf_int_any(root, origin, k_shared, 0, &m->shared_experts, err)) < 0) return rc;
        /* Qwen-MoE and MiniMax give the shared expert block by its width. */
        int32_t shared_w = 0;
        static const char *const k_shared_w[] = {"shared_expert_intermediate_size", "shared_intermediate_size",
                                                 "moe_shared_expert_intermediate_size", NULL};
        if ((rc = hf_int_any(root, origin, k_shared_w, 0, &shared_w, err)) < 0) return rc;
        if (shared_w > 0 && m->shared_experts <= 1 && m->expert_intermediate > 0) {
            int32_t n = (shared_w + m->expert_intermediate / 2) / m->expert_intermediate;
            if (n < 1) n = 1;
            if (n * m->expert_intermediate != shared_w)
                model_spec_note(m, "shared expert width %d counted as %d expert(s) of %d", shared_w, n,
                                m->expert_intermediate);
            m->shared_experts = n;
        }
        if ((rc = hf_int(root, origin, "first_k_dense_replace", 0, &m->first_dense_layers, err)) < 0) return rc;
        if (m->expert_intermediate <= 0)
            return sim_err_set(err, SIM_EINVAL, "%s: key 'moe_intermediate_size' (or intermediate_size) missing",
                               origin);
        /* Latent MoE: routed experts in a narrower width (Nemotron-3's
         * moe_latent_size, Kimi's routed_expert_hidden_size). */
        static const char *const k_latent[] = {"moe_latent_size", "routed_expert_hidden_size", NULL};
        if ((rc = hf_int_any(root, origin, k_latent, 0, &m->moe_latent, err)) < 0) return rc;
        if (m->moe_latent >= m->hidden) m->moe_latent = 0;
    }
    return 0;
}

/* Which layers are MoE when no block list says so: Qwen-MoE's step and
 * mlp_only_layers, DeepSeek's moe_layer_freq (a stride or one 0/1 per layer). */
static int hf_moe_layers(json_t *root, const char *origin, model_spec *m, int listed, sim_err *err)
{
    int rc;
    uint8_t is_moe[MODEL_LAYERS_LISTED_MAX];

    /* Qwen-MoE: layer i is sparse unless listed in mlp_only_layers and
     * when (i+1) % decoder_sparse_step == 0; DeepSeek: moe_layer_freq. */
    int32_t step = 1, freq = 1;
    if ((rc = hf_int(root, origin, "decoder_sparse_step", 0, &step, err)) < 0) return rc;
    /* moe_layer_freq: a stride, or one 0/1 per layer (MiniMax-M3, MiMo). */
    json_t *freq_list = json_object_get(root, "moe_layer_freq");
    if (json_is_array(freq_list)) {
        if ((int32_t)json_array_size(freq_list) != m->layers)
            return sim_err_set(err, SIM_EINVAL, "%s: key 'moe_layer_freq' has %zu entries for %d layers", origin,
                               json_array_size(freq_list), m->layers);
    } else {
        freq_list = NULL;
        if ((rc = hf_int(root, origin, "moe_layer_freq", 0, &freq, err)) < 0) return rc;
    }
    if (step < 1) return sim_err_set(err, SIM_EINVAL, "%s: key 'decoder_sparse_step' must be >= 1", origin);
    if (freq < 1) return sim_err_set(err, SIM_EINVAL, "%s: key 'moe_layer_freq' must be >= 1", origin);
    json_t *only = json_object_get(root, "mlp_only_layers");
    if (only && !json_is_array(only) && !json_is_null(only))
        return sim_err_set(err, SIM_EINVAL, "%s: key 'mlp_only_layers' must be a list of layer indices", origin);
    int32_t moe = 0;
    for (int32_t i = m->first_dense_layers; i < m->layers; i++) {
        int dense = ((i + 1) % step) != 0 || (i % freq) != 0;
        if (freq_list) {
            json_t *f = json_array_get(freq_list, (size_t)i);
            if (!json_is_integer(f) && !json_is_boolean(f))
                return sim_err_set(err, SIM_EINVAL, "%s: key 'moe_layer_freq[%d]' must be 0 or 1", origin, i);
            dense = json_is_integer(f) ? json_integer_value(f) == 0 : json_is_false(f);
        }
        for (size_t j = 0; only && json_is_array(only) && j < json_array_size(only); j++) {
            json_t *e = json_array_get(only, j);
            if (!json_is_integer(e))
                return sim_err_set(err, SIM_EINVAL, "%s: key 'mlp_only_layers[%zu]' must be an integer",
                                   origin, j);
            if (json_integer_value(e) == i) dense = 1;
        }
        moe += !dense;
        if (i < MODEL_LAYERS_LISTED_MAX) is_moe[i] = (uint8_t)!dense;
    }
    for (int32_t i = 0; i < m->first_dense_layers && i < MODEL_LAYERS_LISTED_MAX; i++) is_moe[i] = 0;
    if (listed) model_hf_blocks_ffn(m, is_moe);
    if (moe == 0)
        return sim_err_set(err, SIM_EINVAL, "%s: %d experts configured but no layer is sparse", origin,
                           m->experts);
    m->moe_layers = moe;
    return 0;
}

/* MLA (DeepSeek-V2/V3): the ranks and the per-head rope/nope/value sizes. */
static int hf_mla(json_t *root, const char *origin, model_spec *m, sim_err *err)
{
    int rc;
    /* MLA (DeepSeek-V2/V3). */
    if ((rc = hf_int(root, origin, "kv_lora_rank", 0, &m->kv_lora_rank, err)) < 0) return rc;
    if (m->kv_lora_rank > 0) {
        if ((rc = hf_int(root, origin, "q_lora_rank", 0, &m->q_lora_rank, err)) < 0) return rc;
        if ((rc = hf_int(root, origin, "qk_rope_head_dim", 1, &m->rope_dim, err)) < 0) return rc;
        if ((rc = hf_int(root, origin, "qk_nope_head_dim", 1, &m->nope_dim, err)) < 0) return rc;
        if ((rc = hf_int(root, origin, "v_head_dim", 1, &m->v_head_dim, err)) < 0) return rc;
        m->head_dim = m->nope_dim + m->rope_dim;
    }
    return 0;
}

/* Gated DeltaNet's sizes and which layers use it. */
static int hf_linear_attention(json_t *root, const char *origin, model_spec *m, sim_err *err)
{
    int rc;
    /* Gated DeltaNet (Qwen3.5/3.6, Qwen3-Next): linear-attention layers with
     * a full-attention layer every full_attention_interval, or per layer in
     * layer_types. */
    if (!m->lin_kda && (rc = hf_int(root, origin, "linear_num_value_heads", 0, &m->lin_v_heads, err)) < 0) return rc;
    if (m->lin_v_heads > 0 && !m->lin_kda) {
        if ((rc = hf_pos(root, origin, "linear_num_key_heads", &m->lin_k_heads, err)) < 0) return rc;
        if ((rc = hf_pos(root, origin, "linear_key_head_dim", &m->lin_k_dim, err)) < 0) return rc;
        if ((rc = hf_pos(root, origin, "linear_value_head_dim", &m->lin_v_dim, err)) < 0) return rc;
        m->lin_conv = 4;
        if ((rc = hf_int(root, origin, "linear_conv_kernel_dim", 0, &m->lin_conv, err)) < 0) return rc;
        int32_t interval = 0;
        if ((rc = hf_int(root, origin, "full_attention_interval", 0, &interval, err)) < 0) return rc;
        if ((rc = hf_layer_types(root, origin, m->layers, "linear_attention", &m->linear_layers, err)) < 0) return rc;
        if (rc == 0 && interval > 0) {
            m->linear_layers = m->layers - m->layers / interval;
        } else if (rc == 0) {
            return sim_err_set(err, SIM_EINVAL, "%s: linear attention configured (linear_num_value_heads) but "
                               "neither 'layer_types' nor 'full_attention_interval' says which layers use it", origin);
        }
    }
    return 0;
}

/* The output gate, the DSA indexer and attention sinks. */
static int hf_attention_extras(json_t *root, const char *origin, model_spec *m, sim_err *err)
{
    int rc;
    json_t *gate = json_object_get(root, "attn_output_gate");
    m->attn_out_gate = json_is_true(gate) || (m->kv_lora_rank > 0 && json_is_true(json_object_get(root,
                                                                                       "mla_use_output_gate")));
    /* QK norm over all heads at once (MiniMax-M2: use_qk_norm with
     * qk_norm_type per_layer), not per head as Qwen3's. */
    json_t *qkn = json_object_get(root, "qk_norm_type");
    m->qk_norm_layer = json_is_true(json_object_get(root, "use_qk_norm")) && json_is_string(qkn) &&
                       !strcmp(json_string_value(qkn), "per_layer");
    /* DeepSeek sparse attention (DeepSeek-V3.2, GLM-5): a lightning indexer
     * picks index_topk keys per query. */
    if ((rc = hf_int(root, origin, "index_topk", 0, &m->index_topk, err)) < 0) return rc;
    if (m->index_topk > 0) {
        if ((rc = hf_pos(root, origin, "index_n_heads", &m->index_heads, err)) < 0) return rc;
        if ((rc = hf_pos(root, origin, "index_head_dim", &m->index_head_dim, err)) < 0) return rc;
    }
    /* Attention sinks: gpt-oss learns one per head; MiMo adds them to its
     * sliding layers. */
    const char *type = json_string_value(json_object_get(root, "model_type"));
    m->attn_sinks = (type && !strncmp(type, "gpt_oss", 7)) ||
                    json_is_true(json_object_get(root, "add_swa_attention_sink_bias")) ||
                    json_is_true(json_object_get(root, "add_full_attention_sink_bias"));
    return 0;
}

/* The sliding window and the layers it applies to. */
static int hf_sliding(json_t *root, const char *origin, model_spec *m, sim_err *err)
{
    int rc;
    /* Sliding window: gpt-oss lists per-layer types; Mistral-style configs
     * apply the window to every layer unless use_sliding_window is false. */
    int32_t window = 0;
    if ((rc = hf_int(root, origin, "sliding_window", 0, &window, err)) < 0) return rc;
    json_t *use = json_object_get(root, "use_sliding_window");
    if (window > 0 && !(use && json_is_false(use))) {
        m->sliding_window = window;
        if ((rc = hf_layer_types(root, origin, m->layers, "sliding_attention", &m->sliding_layers, err)) < 0)
            return rc;
        if (rc == 1 && m->sliding_layers == 0) m->sliding_window = 0;
        if (rc == 0) m->sliding_layers = m->layers;
    }
    return 0;
}

static int hf_fill(json_t *root, const char *origin, model_spec *m, sim_err *err)
{
    int rc;
    if (!json_is_object(root)) return sim_err_set(err, SIM_EINVAL, "%s: expected a JSON object", origin);
    /* Multimodal wrappers keep the language model under text_config. */
    root = hf_text_root(root);
    int32_t plain_inter = 0;
    if ((rc = hf_dims(root, origin, m, &plain_inter, err)) < 0) return rc;

    /* Per-layer kinds (Nemotron-H, Nemotron-NAS, Kimi linear attention). */
    model_hf_blocks_info blocks;
    int listed = model_hf_blocks(root, origin, m, &blocks, err);
    if (listed < 0) return listed;

    json_t *tie = json_object_get(root, "tie_word_embeddings");
    if (tie && !json_is_boolean(tie) && !json_is_null(tie))
        return sim_err_set(err, SIM_EINVAL, "%s: key 'tie_word_embeddings' must be true or false", origin);
    m->tied_embeddings = json_is_true(tie);

    if ((rc = hf_experts(root, origin, m, plain_inter, err)) < 0) return rc;
    if (m->experts > 0 && listed && blocks.ffn_listed) {
        /* The block list already says which layers are MoE. */
        if (blocks.moe_layers == 0)
            return sim_err_set(err, SIM_EINVAL, "%s: %d experts configured but no block is MoE", origin, m->experts);
        m->moe_layers = blocks.moe_layers;
        m->first_dense_layers = 0;
    } else if (m->experts > 0) {
        if ((rc = hf_moe_layers(root, origin, m, listed, err)) < 0) return rc;
    }
    if ((rc = hf_mla(root, origin, m, err)) < 0) return rc;
    if ((rc = hf_linear_attention(root, origin, m, err)) < 0) return rc;
    if ((rc = hf_attention_extras(root, origin, m, err)) < 0) return rc;
    if ((rc = hf_sliding(root, origin, m, err)) < 0) return rc;
    if ((rc = hf_deepseek_v4(root, origin, m, err)) < 0) return rc;
    return model_spec_derive(m, origin, err);
}

/* Notes of what a config describes that servesim leaves out. */
static void hf_notes(json_t *root, model_spec *m)
{
    if (json_object_get(root, "global_head_dim") || json_object_get(root, "num_global_key_value_heads"))
        model_spec_note(m, "full-attention layers' own head_dim/KV heads (global_head_dim, num_global_key_value_heads) "
                        "not modelled: every layer uses head_dim %d and %d KV heads", m->head_dim, m->kv_heads);
    if (json_object_get(root, "swa_num_key_value_heads") || json_object_get(root, "swa_head_dim"))
        model_spec_note(m, "sliding layers' own heads (swa_*) not modelled: every layer uses %d KV heads of %d",
                        m->kv_heads, m->head_dim);
    if (json_object_get(root, "sparse_attention_config"))
        model_spec_note(m, "sparse_attention_config not modelled: its layers are priced as dense attention");
    if (json_is_true(json_object_get(root, "attention_k_eq_v")))
        model_spec_note(m, "attention_k_eq_v (keys reused as values) not modelled: K and V counted apart");
    static const char *const mtp_keys[] = {"num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules",
                                           NULL};
    for (int k = 0; mtp_keys[k]; k++) {
        json_t *v = json_object_get(root, mtp_keys[k]);
        if (json_is_integer(v) && json_integer_value(v) > 0) {
            model_spec_note(m, "%lld multi-token-prediction layer(s) (%s) not simulated",
                            (long long)json_integer_value(v), mtp_keys[k]);
            break;
        }
    }
}

/* The language model's key mapping (multimodal wrappers nest it). */
static json_t *hf_text_root(json_t *root)
{
    json_t *text = json_object_get(root, "text_config");
    if (json_is_object(text) && !json_object_get(root, "num_hidden_layers")) return text;
    return root;
}

static int hf_build(json_t *root, json_t *modelopt, const char *origin, model_spec *m, sim_err *err)
{
    int rc = hf_fill(root, origin, m, err);
    if (rc) return rc;
    json_t *text = hf_text_root(root);
    json_t *qcfg = json_object_get(text, "quantization_config");
    if (!qcfg) qcfg = json_object_get(root, "quantization_config");
    if ((rc = model_hf_quant_apply(qcfg, modelopt, origin, m, err))) return rc;
    /* DeepSeek-V4 ships its routed experts in FP4 (e2m1, ue8m0 scale per 32:
     * MXFP4) beside FP8 blocks elsewhere; a ModelOpt export names its own. */
    const char *edt = json_string_value(json_object_get(text, "expert_dtype"));
    if (edt && !strcmp(edt, "fp4") && m->experts > 0 && m->wdtype_expert != MODEL_DTYPE_NVFP4 &&
        m->wdtype_expert != MODEL_DTYPE_MXFP4) {
        m->wdtype_expert = MODEL_DTYPE_MXFP4;
        model_spec_note(m, "routed experts in FP4 (expert_dtype fp4: e2m1 with a ue8m0 scale per 32, as mxfp4)");
    }
    /* The vision tower (if any): priced for image inputs, or noted as not. */
    model_vision_from_hf(root, m);
    hf_notes(text, m);
    return 0;
}

static int hf_parse_modelopt(const char *quant_text, const char *origin, json_t **out, sim_err *err)
{
    json_error_t jerr;
    *out = NULL;
    if (!quant_text) return 0;
    *out = json_loads(quant_text, 0, &jerr);
    if (!*out)
        return sim_err_set(err, SIM_EINVAL, "%s (hf_quant.json):%d:%d: JSON error: %s", origin, jerr.line, jerr.column,
                           jerr.text);
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return sim_err_set(err, SIM_EINVAL, "%s (hf_quant.json): expected a JSON object", origin);
    }
    return 0;
}

/* Python's json writes Infinity/-Infinity/NaN (Nemotron's time_step_limit),
 * which JSON does not allow: a copy with them as 1e308/-1e308/0 outside
 * strings (same length, so error positions still match). */
static char *hf_sanitize(const char *text)
{
    size_t n = strlen(text);
    char *t = malloc(n + 1);
    if (!t) return NULL;
    memcpy(t, text, n + 1);
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_str) {
            if (t[i] == '\\' && i + 1 < n) i++;
            else if (t[i] == '"') in_str = 0;
            continue;
        }
        if (t[i] == '"') in_str = 1;
        else if (!strncmp(t + i, "Infinity", 8)) memcpy(t + i, "1e308   ", 8), i += 7;
        else if (!strncmp(t + i, "NaN", 3)) memcpy(t + i, "0  ", 3), i += 2;
    }
    return t;
}

int model_hf_parse_quant(const char *text, const char *quant_text, const char *origin, model_spec *out, sim_err *err)
{
    json_error_t jerr;
    json_t *mo = NULL;
    model_spec m;
    memset(&m, 0, sizeof m);
    hf_name_from_path(origin, m.name, sizeof m.name);
    int rc = hf_parse_modelopt(quant_text, origin, &mo, err);
    if (rc) return rc;
    char *clean = hf_sanitize(text);
    if (!clean) {
        json_decref(mo);
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", origin);
    }
    json_t *root = json_loads(clean, 0, &jerr);
    free(clean);
    if (!root) {
        json_decref(mo);
        return sim_err_set(err, SIM_EINVAL, "%s:%d:%d: JSON error: %s", origin, jerr.line, jerr.column, jerr.text);
    }
    rc = hf_build(root, mo, origin, &m, err);
    json_decref(root);
    json_decref(mo);
    if (rc) return rc;
    *out = m;
    return 0;
}

int model_hf_parse(const char *text, const char *origin, model_spec *out, sim_err *err)
{
    return model_hf_parse_quant(text, NULL, origin, out, err);
}

/* Reads a whole (bounded) file; a missing one is *text = NULL, rc 0 when
 * optional. */
static int hf_read(const char *path, int optional, char **text, sim_err *err)
{
    struct stat st;
    *text = NULL;
    if (stat(path, &st) != 0) {
        if (optional) return 0;
        return sim_err_set(err, SIM_EIO, "%s: cannot open: %s (expected a Hugging Face config.json)", path,
                           strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return sim_err_set(err, SIM_EINVAL, "%s: not a regular file (expected a Hugging Face config.json)", path);
    if (st.st_size > (64 << 20))
        return sim_err_set(err, SIM_EINVAL, "%s: %lld bytes is larger than the 64 MiB a model config may have", path,
                           (long long)st.st_size);
    FILE *f = fopen(path, "rb");
    if (!f) return sim_err_set(err, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        fclose(f);
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
    }
    size_t got = fread(buf, 1, (size_t)st.st_size, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != (size_t)st.st_size) {
        free(buf);
        return sim_err_set(err, SIM_EIO, "%s: read error", path);
    }
    buf[got] = 0;
    if (strlen(buf) != got) {
        free(buf);
        return sim_err_set(err, SIM_EINVAL, "%s: contains a NUL byte (not a JSON text file)", path);
    }
    *text = buf;
    return 0;
}

/* The ModelOpt file beside a config: hf_quant_config.json next to
 * config.json, <stem>.hf_quant.json next to <stem>.json. */
static void hf_quant_path(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dir = (size_t)(base - path);
    if (!strcmp(base, "config.json"))
        snprintf(out, size, "%.*shf_quant_config.json", (int)dir, path);
    else if (strlen(base) > 5 && !strcmp(base + strlen(base) - 5, ".json") &&
             !strstr(base, ".hf_quant."))
        snprintf(out, size, "%.*s.hf_quant.json", (int)(strlen(path) - 5), path);
    else
        out[0] = 0;
}

int model_hf_load(const char *path, model_spec *out, sim_err *err)
{
    char *text = NULL, *quant = NULL, qpath[4096];
    int rc = hf_read(path, 0, &text, err);
    if (rc) return rc;
    hf_quant_path(path, qpath, sizeof qpath);
    if (qpath[0] && (rc = hf_read(qpath, 1, &quant, err))) {
        free(text);
        return rc;
    }
    rc = model_hf_parse_quant(text, quant, path, out, err);
    if (!rc && quant) model_spec_note(out, "quantisation from %s", qpath);
    free(text);
    free(quant);
    return rc;
}
