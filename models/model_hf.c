/* model_hf — see model_hf.h. */
#include "model_hf.h"

#include "model_hf_quant.h"
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

static int hf_fill(json_t *root, const char *origin, model_spec *m, sim_err *err)
{
    int rc;
    if (!json_is_object(root)) return sim_err_set(err, SIM_EINVAL, "%s: expected a JSON object", origin);
    /* Multimodal wrappers keep the language model under text_config. */
    root = hf_text_root(root);

    if ((rc = hf_pos(root, origin, "num_hidden_layers", &m->layers, err)) < 0) return rc;
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
    if ((rc = hf_int(root, origin, "head_dim", 0, &m->head_dim, err)) < 0) return rc;
    if (rc == 1 && m->head_dim == 0)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'head_dim' must be >= 1, got 0 (omit it for hidden_size / "
                           "num_attention_heads)", origin);
    if (rc == 0 && !json_object_get(root, "kv_lora_rank") && m->hidden % m->heads)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'head_dim' missing and 'hidden_size' = %d is not a multiple "
                           "of 'num_attention_heads' = %d", origin, m->hidden, m->heads);
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

/* Notes of what a config describes that servesim leaves out. */
static void hf_notes(json_t *top, json_t *root, model_spec *m)
{
    if (json_is_object(json_object_get(top, "vision_config")) || json_is_object(json_object_get(top, "visual")))
        model_spec_note(m, "vision tower ignored: only the language model is simulated");
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
    hf_notes(root, text, m);
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

int model_hf_parse_quant(const char *text, const char *quant_text, const char *origin, model_spec *out, sim_err *err)
{
    json_error_t jerr;
    json_t *mo = NULL;
    model_spec m;
    memset(&m, 0, sizeof m);
    hf_name_from_path(origin, m.name, sizeof m.name);
    int rc = hf_parse_modelopt(quant_text, origin, &mo, err);
    if (rc) return rc;
    json_t *root = json_loads(text, 0, &jerr);
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
