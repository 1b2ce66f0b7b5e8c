/* model_hf — see model_hf.h. */
#include "model_hf.h"

#include "model_spec.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Reads an integer key: missing is an error when required, JSON null is
 * "absent" (DeepSeek-V2-Lite writes q_lora_rank: null). */
static int hf_int(json_t *root, const char *origin, const char *key, int required, int32_t *out, sim_err *err)
{
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) {
        if (required) return sim_err_set(err, SIM_EINVAL, "%s: key '%s' missing", origin, key);
        return 0;
    }
    if (json_is_real(v)) { /* some exporters write 4096.0 */
        double d = json_real_value(v);
        if (!(d >= 0 && d <= INT32_MAX) || d != (double)(int32_t)d) goto bad;
        *out = (int32_t)d;
        return 1;
    }
    if (!json_is_integer(v)) goto bad;
    json_int_t i = json_integer_value(v);
    if (i < 0 || i > INT32_MAX) goto bad;
    *out = (int32_t)i;
    return 1;
bad:
    return sim_err_set(err, SIM_EINVAL, "%s: key '%s' must be a non-negative integer", origin, key);
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

static int hf_fill(json_t *root, const char *origin, model_spec *m, sim_err *err)
{
    int rc;
    if (!json_is_object(root)) return sim_err_set(err, SIM_EINVAL, "%s: expected a JSON object", origin);
    /* Multimodal wrappers keep the language model under text_config. */
    json_t *text = json_object_get(root, "text_config");
    if (json_is_object(text) && !json_object_get(root, "num_hidden_layers")) root = text;

    if ((rc = hf_int(root, origin, "num_hidden_layers", 1, &m->layers, err)) < 0) return rc;
    if ((rc = hf_int(root, origin, "hidden_size", 1, &m->hidden, err)) < 0) return rc;
    if ((rc = hf_int(root, origin, "num_attention_heads", 1, &m->heads, err)) < 0) return rc;
    if ((rc = hf_int(root, origin, "vocab_size", 1, &m->vocab, err)) < 0) return rc;
    if ((rc = hf_int(root, origin, "num_key_value_heads", 0, &m->kv_heads, err)) < 0) return rc;
    if ((rc = hf_int(root, origin, "head_dim", 0, &m->head_dim, err)) < 0) return rc;
    if ((rc = hf_int(root, origin, "intermediate_size", 0, &m->intermediate, err)) < 0) return rc;

    json_t *tie = json_object_get(root, "tie_word_embeddings");
    if (tie && !json_is_boolean(tie) && !json_is_null(tie))
        return sim_err_set(err, SIM_EINVAL, "%s: key 'tie_word_embeddings' must be true or false", origin);
    m->tied_embeddings = json_is_true(tie);

    /* MoE: the expert count is spelt three ways across families. */
    static const char *const k_experts[] = {"num_local_experts", "num_experts", "n_routed_experts", NULL};
    static const char *const k_topk[] = {"num_experts_per_tok", "experts_per_token", NULL};
    if ((rc = hf_int_any(root, origin, k_experts, 0, &m->experts, err)) < 0) return rc;
    if (m->experts > 0) {
        if ((rc = hf_int_any(root, origin, k_topk, 1, &m->top_k, err)) < 0) return rc;
        m->expert_intermediate = m->intermediate; /* Mixtral, gpt-oss */
        if ((rc = hf_int(root, origin, "moe_intermediate_size", 0, &m->expert_intermediate, err)) < 0) return rc;
        if ((rc = hf_int(root, origin, "n_shared_experts", 0, &m->shared_experts, err)) < 0) return rc;
        if ((rc = hf_int(root, origin, "first_k_dense_replace", 0, &m->first_dense_layers, err)) < 0) return rc;
        if (m->expert_intermediate <= 0)
            return sim_err_set(err, SIM_EINVAL, "%s: key 'moe_intermediate_size' (or intermediate_size) missing",
                               origin);

        /* Qwen-MoE: layer i is sparse unless listed in mlp_only_layers and
         * when (i+1) % decoder_sparse_step == 0; DeepSeek: moe_layer_freq. */
        int32_t step = 1, freq = 1;
        if ((rc = hf_int(root, origin, "decoder_sparse_step", 0, &step, err)) < 0) return rc;
        if ((rc = hf_int(root, origin, "moe_layer_freq", 0, &freq, err)) < 0) return rc;
        if (step < 1) return sim_err_set(err, SIM_EINVAL, "%s: key 'decoder_sparse_step' must be >= 1", origin);
        if (freq < 1) return sim_err_set(err, SIM_EINVAL, "%s: key 'moe_layer_freq' must be >= 1", origin);
        json_t *only = json_object_get(root, "mlp_only_layers");
        if (only && !json_is_array(only) && !json_is_null(only))
            return sim_err_set(err, SIM_EINVAL, "%s: key 'mlp_only_layers' must be a list of layer indices", origin);
        int32_t moe = 0;
        for (int32_t i = m->first_dense_layers; i < m->layers; i++) {
            int dense = ((i + 1) % step) != 0 || (i % freq) != 0;
            for (size_t j = 0; only && json_is_array(only) && j < json_array_size(only); j++) {
                json_t *e = json_array_get(only, j);
                if (!json_is_integer(e))
                    return sim_err_set(err, SIM_EINVAL, "%s: key 'mlp_only_layers[%zu]' must be an integer",
                                       origin, j);
                if (json_integer_value(e) == i) dense = 1;
            }
            moe += !dense;
        }
        if (moe == 0)
            return sim_err_set(err, SIM_EINVAL, "%s: %d experts configured but no layer is sparse", origin,
                               m->experts);
        m->moe_layers = moe;
    }

    /* MLA (DeepSeek-V2/V3). */
    if ((rc = hf_int(root, origin, "kv_lora_rank", 0, &m->kv_lora_rank, err)) < 0) return rc;
    if (m->kv_lora_rank > 0) {
        if ((rc = hf_int(root, origin, "q_lora_rank", 0, &m->q_lora_rank, err)) < 0) return rc;
        if ((rc = hf_int(root, origin, "qk_rope_head_dim", 1, &m->rope_dim, err)) < 0) return rc;
        if ((rc = hf_int(root, origin, "qk_nope_head_dim", 1, &m->nope_dim, err)) < 0) return rc;
        if ((rc = hf_int(root, origin, "v_head_dim", 1, &m->v_head_dim, err)) < 0) return rc;
        m->head_dim = m->nope_dim + m->rope_dim;
    }

    /* Sliding window: gpt-oss lists per-layer types; Mistral-style configs
     * apply the window to every layer unless use_sliding_window is false. */
    int32_t window = 0;
    if ((rc = hf_int(root, origin, "sliding_window", 0, &window, err)) < 0) return rc;
    json_t *use = json_object_get(root, "use_sliding_window");
    if (window > 0 && !(use && json_is_false(use))) {
        json_t *types = json_object_get(root, "layer_types");
        m->sliding_window = window;
        if (json_is_array(types)) {
            if ((int32_t)json_array_size(types) != m->layers)
                return sim_err_set(err, SIM_EINVAL, "%s: key 'layer_types' has %zu entries for %d layers", origin,
                                   json_array_size(types), m->layers);
            for (size_t j = 0; j < json_array_size(types); j++) {
                const char *t = json_string_value(json_array_get(types, j));
                if (t && !strcmp(t, "sliding_attention")) m->sliding_layers++;
            }
            if (m->sliding_layers == 0) m->sliding_window = 0;
        } else {
            m->sliding_layers = m->layers;
        }
    }
    return model_spec_derive(m, origin, err);
}

int model_hf_parse(const char *text, const char *origin, model_spec *out, sim_err *err)
{
    json_error_t jerr;
    model_spec m;
    memset(&m, 0, sizeof m);
    hf_name_from_path(origin, m.name, sizeof m.name);
    json_t *root = json_loads(text, 0, &jerr);
    if (!root)
        return sim_err_set(err, SIM_EINVAL, "%s:%d:%d: JSON error: %s", origin, jerr.line, jerr.column, jerr.text);
    int rc = hf_fill(root, origin, &m, err);
    json_decref(root);
    if (rc) return rc;
    *out = m;
    return 0;
}

int model_hf_load(const char *path, model_spec *out, sim_err *err)
{
    json_error_t jerr;
    model_spec m;
    memset(&m, 0, sizeof m);
    hf_name_from_path(path, m.name, sizeof m.name);
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) {
        /* jansson reports unreadable files with line -1. */
        int code = jerr.line < 0 ? SIM_EIO : SIM_EINVAL;
        return sim_err_set(err, code, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
    }
    int rc = hf_fill(root, path, &m, err);
    json_decref(root);
    if (rc) return rc;
    *out = m;
    return 0;
}
