/* model_hf_blocks — see model_hf_blocks.h. */
#include "model_hf_blocks.h"

#include "model_spec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* An integer key that must be >= 1 when the block kind needs it. */
static int need_pos(json_t *root, const char *origin, const char *key, int32_t *out, sim_err *err)
{
    json_t *v = json_object_get(root, key);
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > (1 << 24))
        return sim_err_set(err, SIM_EINVAL, "%s: key '%s' must be an integer in 1..%d for the Mamba-2 layers", origin,
                           key, 1 << 24);
    *out = (int32_t)json_integer_value(v);
    return 0;
}

/* Nemotron-H: one letter per block (M Mamba-2, * attention, - MLP, E MoE)
 * or one word per block (mamba, attention, mlp, moe). */
static int nemotron_h(json_t *root, const char *origin, model_spec *m, model_hf_blocks_info *info, sim_err *err)
{
    json_t *pat = json_object_get(root, "hybrid_override_pattern");
    json_t *list = json_object_get(root, "layers_block_type");
    const char *key = pat ? "hybrid_override_pattern" : "layers_block_type";
    size_t n = 0;
    if (pat) {
        if (!json_is_string(pat))
            return sim_err_set(err, SIM_EINVAL, "%s: key '%s' must be a string of M, *, - and E", origin, key);
        n = strlen(json_string_value(pat));
    } else {
        if (!json_is_array(list))
            return sim_err_set(err, SIM_EINVAL, "%s: key '%s' must be a list of mamba/attention/mlp/moe", origin, key);
        n = json_array_size(list);
    }
    if (m->layers == 0) m->layers = (int32_t)n;
    if (n == 0 || (int32_t)n != m->layers)
        return sim_err_set(err, SIM_EINVAL, "%s: key '%s' has %zu blocks for %d layers", origin, key, n, m->layers);
    if (n > MODEL_LAYERS_LISTED_MAX)
        return sim_err_set(err, SIM_EINVAL, "%s: key '%s' lists %zu blocks (servesim takes at most %d)", origin, key,
                           n, MODEL_LAYERS_LISTED_MAX);
    for (size_t i = 0; i < n; i++) {
        char c;
        if (pat) {
            c = json_string_value(pat)[i];
        } else {
            const char *w = json_string_value(json_array_get(list, i));
            c = !w ? '?' : !strcmp(w, "mamba") ? 'M' : !strcmp(w, "attention") ? '*' : !strcmp(w, "mlp") ? '-'
                : !strcmp(w, "moe") ? 'E' : '?';
        }
        uint8_t mix = MODEL_MIX_NONE, ffn = MODEL_FFN_NONE;
        switch (c) {
        case 'M': mix = MODEL_MIX_MAMBA; break;
        case '*': mix = MODEL_MIX_ATTN; break;
        case '-': ffn = MODEL_FFN_DENSE; break;
        case 'E': ffn = MODEL_FFN_MOE; break;
        default:
            return sim_err_set(err, SIM_EINVAL, "%s: key '%s[%zu]': unknown block kind (expected %s)", origin, key, i,
                               pat ? "M, *, - or E" : "mamba, attention, mlp or moe");
        }
        m->layer_mixer[i] = mix;
        m->layer_ffn[i] = ffn;
        m->mamba_layers += mix == MODEL_MIX_MAMBA;
        m->mixerless_layers += mix == MODEL_MIX_NONE;
        m->ffnless_layers += ffn == MODEL_FFN_NONE;
        info->moe_layers += ffn == MODEL_FFN_MOE;
    }
    m->listed_layers = (int32_t)n;
    info->ffn_listed = 1;
    if (m->mamba_layers > 0) {
        int rc;
        if ((rc = need_pos(root, origin, "mamba_num_heads", &m->mamba_heads, err)) ||
            (rc = need_pos(root, origin, "mamba_head_dim", &m->mamba_head_dim, err)) ||
            (rc = need_pos(root, origin, "n_groups", &m->mamba_groups, err)) ||
            (rc = need_pos(root, origin, "ssm_state_size", &m->mamba_state, err)) ||
            (rc = need_pos(root, origin, "conv_kernel", &m->mamba_conv, err)))
            return rc;
        /* vLLM/SGLang cache the SSM state in mamba_ssm_cache_dtype, else the
         * model's dtype. */
        const char *sdt = json_string_value(json_object_get(root, "mamba_ssm_cache_dtype"));
        m->mamba_state_bytes = sdt && (!strcmp(sdt, "float32") || !strcmp(sdt, "fp32")) ? 4 : 2;
    }
    const char *act = json_string_value(json_object_get(root, "mlp_hidden_act"));
    m->ffn_plain = act && !strcmp(act, "relu2");
    return 1;
}

/* DeciLM's width of an FFN with ffn_mult: 2/3 of mult·hidden, rounded up
 * to a multiple of 256. */
static int32_t nas_width(double mult, int32_t hidden)
{
    int64_t w = (int64_t)(2.0 * mult * hidden / 3.0);
    return (int32_t)((w + 255) / 256 * 256);
}

/* Nemotron-NAS (DeciLM): block_configs gives each layer's attention (GQA
 * group size, or skipped) and FFN (width multiplier, or skipped). */
static int nemotron_nas(json_t *root, const char *origin, model_spec *m, model_hf_blocks_info *info, sim_err *err)
{
    json_t *b = json_object_get(root, "block_configs");
    if (!json_is_array(b))
        return sim_err_set(err, SIM_EINVAL, "%s: key 'block_configs' must be a list of per-layer blocks", origin);
    size_t n = json_array_size(b);
    if ((int32_t)n != m->layers)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'block_configs' has %zu blocks for %d layers", origin, n,
                           m->layers);
    if (n > MODEL_LAYERS_LISTED_MAX)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'block_configs' lists %zu blocks (servesim takes at most %d)",
                           origin, n, MODEL_LAYERS_LISTED_MAX);
    int32_t group = 0;
    const int32_t max_w = (int32_t)(sizeof m->ffn_widths / sizeof m->ffn_widths[0]);
    for (size_t i = 0; i < n; i++) {
        json_t *blk = json_array_get(b, i), *at = json_object_get(blk, "attention"), *ff = json_object_get(blk, "ffn");
        if (!json_is_object(at) || !json_is_object(ff))
            return sim_err_set(err, SIM_EINVAL, "%s: key 'block_configs[%zu]' needs 'attention' and 'ffn' mappings",
                               origin, i);
        if (json_is_true(json_object_get(at, "replace_with_linear")) ||
            json_is_true(json_object_get(ff, "replace_with_linear")))
            return sim_err_set(err, SIM_ENOTSUP, "%s: key 'block_configs[%zu]': a block replaced by one linear layer "
                               "(replace_with_linear) is not modelled by servesim yet", origin, i);
        json_t *win = json_object_get(at, "window_length");
        if (win && !json_is_null(win))
            return sim_err_set(err, SIM_ENOTSUP, "%s: key 'block_configs[%zu].attention.window_length': per-layer "
                               "sliding windows of NAS blocks are not modelled by servesim yet", origin, i);
        if (json_is_true(json_object_get(at, "no_op"))) {
            m->layer_mixer[i] = MODEL_MIX_NONE;
            m->mixerless_layers++;
        } else {
            json_t *g = json_object_get(at, "n_heads_in_group");
            if (!json_is_integer(g) || json_integer_value(g) < 1 || m->heads % json_integer_value(g))
                return sim_err_set(err, SIM_EINVAL, "%s: key 'block_configs[%zu].attention.n_heads_in_group' must "
                                   "divide the %d attention heads", origin, i, m->heads);
            if (group && group != json_integer_value(g))
                return sim_err_set(err, SIM_ENOTSUP, "%s: key 'block_configs[%zu].attention.n_heads_in_group': KV "
                                   "heads differing per layer (%d and %lld query heads per KV head) are not modelled "
                                   "by servesim yet", origin, i, group, (long long)json_integer_value(g));
            group = (int32_t)json_integer_value(g);
            m->layer_mixer[i] = MODEL_MIX_ATTN;
        }
        if (json_is_true(json_object_get(ff, "no_op"))) {
            m->layer_ffn[i] = MODEL_FFN_NONE;
            m->ffnless_layers++;
            continue;
        }
        json_t *mult = json_object_get(ff, "ffn_mult");
        if (!json_is_number(mult) || !(json_number_value(mult) > 0) || json_number_value(mult) > 64)
            return sim_err_set(err, SIM_EINVAL, "%s: key 'block_configs[%zu].ffn.ffn_mult' must be a number in (0, 64]",
                               origin, i);
        int32_t w = nas_width(json_number_value(mult), m->hidden), k = 0;
        while (k < m->n_ffn_widths && m->ffn_widths[k] != w) k++;
        if (k == m->n_ffn_widths) {
            if (k == max_w)
                return sim_err_set(err, SIM_ENOTSUP, "%s: key 'block_configs': more than %d distinct FFN widths",
                                   origin, max_w);
            m->ffn_widths[m->n_ffn_widths++] = w;
        }
        m->layer_ffn[i] = MODEL_FFN_DENSE;
        m->layer_width[i] = (uint8_t)k;
        if (w > m->intermediate) m->intermediate = w; /* the widest sizes activations */
    }
    if (!group)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'block_configs': no layer attends (servesim needs one)", origin);
    m->kv_heads = m->heads / group;
    m->listed_layers = (int32_t)n;
    info->ffn_listed = 1;
    model_spec_note(m, "Nemotron-NAS blocks: %d attention, %d without attention, %d without FFN, %d FFN widths",
                    model_spec_attention_layers(m), m->mixerless_layers, m->ffnless_layers, m->n_ffn_widths);
    return 1;
}

/* A layer index list of linear_attn_config (1-based, as Kimi writes them). */
static int kimi_list(json_t *cfg, const char *origin, const char *key, model_spec *m, uint8_t kind, sim_err *err)
{
    json_t *l = json_object_get(cfg, key);
    if (!json_is_array(l))
        return sim_err_set(err, SIM_EINVAL, "%s: key 'linear_attn_config.%s' must be a list of layer numbers", origin,
                           key);
    for (size_t j = 0; j < json_array_size(l); j++) {
        json_t *e = json_array_get(l, j);
        if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > m->layers)
            return sim_err_set(err, SIM_EINVAL, "%s: key 'linear_attn_config.%s[%zu]' must be a layer number in 1..%d",
                               origin, key, j, m->layers);
        m->layer_mixer[json_integer_value(e) - 1] = kind;
        if (kind == MODEL_MIX_LINEAR) m->linear_layers++;
    }
    return 0;
}

/* Kimi linear attention: Kimi Delta Attention layers (kda_layers) and MLA
 * layers (full_attn_layers). */
static int kimi_linear(json_t *root, const char *origin, model_spec *m, sim_err *err)
{
    json_t *cfg = json_object_get(root, "linear_attn_config");
    if (!json_is_object(cfg))
        return sim_err_set(err, SIM_EINVAL, "%s: key 'linear_attn_config' must be a mapping", origin);
    if (m->layers > MODEL_LAYERS_LISTED_MAX)
        return sim_err_set(err, SIM_EINVAL, "%s: %d layers (servesim lists at most %d)", origin, m->layers,
                           MODEL_LAYERS_LISTED_MAX);
    for (int32_t i = 0; i < m->layers; i++) m->layer_mixer[i] = 0xff;
    int rc;
    if ((rc = kimi_list(cfg, origin, "kda_layers", m, MODEL_MIX_LINEAR, err)) ||
        (rc = kimi_list(cfg, origin, "full_attn_layers", m, MODEL_MIX_ATTN, err)))
        return rc;
    for (int32_t i = 0; i < m->layers; i++)
        if (m->layer_mixer[i] == 0xff)
            return sim_err_set(err, SIM_EINVAL, "%s: key 'linear_attn_config': layer %d is in neither kda_layers nor "
                               "full_attn_layers", origin, i + 1);
    json_t *h = json_object_get(cfg, "num_heads"), *d = json_object_get(cfg, "head_dim");
    json_t *k = json_object_get(cfg, "short_conv_kernel_size");
    if (!json_is_integer(h) || json_integer_value(h) < 1 || json_integer_value(h) > (1 << 16) || !json_is_integer(d) ||
        json_integer_value(d) < 1 || json_integer_value(d) > (1 << 16))
        return sim_err_set(err, SIM_EINVAL, "%s: keys 'linear_attn_config.num_heads' and '.head_dim' must be "
                           "integers in 1..65536", origin);
    m->lin_kda = 1;
    m->lin_k_heads = m->lin_v_heads = (int32_t)json_integer_value(h);
    m->lin_k_dim = m->lin_v_dim = (int32_t)json_integer_value(d);
    m->lin_conv = json_is_integer(k) && json_integer_value(k) > 0 && json_integer_value(k) <= 64
                      ? (int32_t)json_integer_value(k) : 4;
    m->listed_layers = m->layers;
    return 1;
}

int model_hf_blocks(json_t *root, const char *origin, model_spec *m, model_hf_blocks_info *info, sim_err *err)
{
    memset(info, 0, sizeof *info);
    if (json_object_get(root, "hybrid_override_pattern") || json_object_get(root, "layers_block_type"))
        return nemotron_h(root, origin, m, info, err);
    if (json_object_get(root, "block_configs")) return nemotron_nas(root, origin, m, info, err);
    if (json_object_get(root, "linear_attn_config")) return kimi_linear(root, origin, m, err);
    return 0;
}

void model_hf_blocks_ffn(model_spec *m, const uint8_t *is_moe)
{
    for (int32_t i = 0; i < m->layers && i < MODEL_LAYERS_LISTED_MAX; i++)
        m->layer_ffn[i] = is_moe[i] ? MODEL_FFN_MOE : MODEL_FFN_DENSE;
}
