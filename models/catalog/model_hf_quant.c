/* model_hf_quant — see model_hf_quant.h. */
#include "model_hf_quant.h"

#include "model_dtype.h"
#include "model_spec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { P_ATTN = 0, P_DENSE = 1, P_EXPERT = 2, P_SHARED = 3, P_COUNT = 4, P_NONE = -1 };
static const char *const part_names[P_COUNT] = {"attention", "dense MLP", "routed experts", "shared experts"};

typedef struct {
    int part;
    double weight; /* 1 for the whole part of a layer, a share for one projection */
    int64_t layer; /* -1 = every layer */
} q_module;

static int has(const char *s, const char *needle)
{
    return strstr(s, needle) != NULL;
}

/* Which part a module name (exact, glob or re: regex) names. */
static q_module classify(const model_spec *m, const char *name)
{
    q_module r = {P_NONE, 1.0, -1};
    char s[512];
    size_t n = strlen(name);
    if (n >= sizeof s) n = sizeof s - 1;
    for (size_t i = 0; i < n; i++) s[i] = (char)tolower((unsigned char)name[i]);
    s[n] = 0;
    const char *lay = strstr(s, "layers.");
    if (lay && isdigit((unsigned char)lay[7])) r.layer = strtoll(lay + 7, NULL, 10);
    const char *last = strrchr(s, '.');
    last = last ? last + 1 : s;
    size_t ll = strlen(last);
    int router = !strcmp(last, "gate") || (ll > 5 && !strcmp(last + ll - 5, "_gate")) || has(s, "router") ||
                 has(s, "e_score_correction") || (!strchr(s, '.') && !strcmp(s, "gate"));
    if (has(s, "lm_head") || has(s, "embed") || has(s, "vision") || has(s, "visual") || has(s, "multi_modal") ||
        has(s, "mm_projector") || has(s, "patch_merge") || has(s, "norm") || router)
        return r;
    int proj = has(s, "proj") || has(s, "conv1d");
    if (has(s, "shared_expert")) r.part = P_SHARED;
    else if (has(s, "experts") || has(s, "latent_proj")) r.part = P_EXPERT;
    else if (has(s, "attn") || has(s, "attention") || has(s, "indexer")) r.part = P_ATTN;
    else if (has(s, "mlp") || has(s, "ffn") || has(s, "feed_forward")) r.part = P_DENSE;
    else if (has(s, "mixer.")) {
        /* Nemotron-H names every block's module `mixer`: the Mamba-2 and
         * attention projections are the mixer part, up/down an MLP's. */
        r.part = has(s, "up_proj") || has(s, "down_proj") ? P_DENSE : P_ATTN;
    }
    if (proj && !has(s, "(")) {
        /* One projection of the part: its share of the part's matrices. */
        if (r.part == P_ATTN) r.weight = m->kv_lora_rank > 0 ? 1.0 / 5.0 : 1.0 / 4.0;
        else r.weight = has(s, "gate_up") ? 2.0 / 3.0 : 1.0 / 3.0;
    }
    return r;
}

static int layer_is_moe(const model_spec *m, int64_t i)
{
    return model_spec_layer_ffn(m, (int32_t)i) == MODEL_FFN_MOE;
}

static int part_in_layer(const model_spec *m, int part, int64_t i)
{
    switch (part) {
    case P_ATTN: return model_spec_layer_mixer(m, (int32_t)i) != MODEL_MIX_NONE;
    case P_DENSE: return model_spec_layer_ffn(m, (int32_t)i) == MODEL_FFN_DENSE;
    case P_EXPERT: return layer_is_moe(m, i);
    case P_SHARED: return layer_is_moe(m, i) && m->shared_experts > 0;
    }
    return 0;
}

/* Marks the parts excluded by the names of list (may be NULL). */
static int apply_excludes(const model_spec *m, json_t *list, const char *origin, const char *key, int excluded[P_COUNT],
                          sim_err *err)
{
    if (!list || json_is_null(list)) return 0;
    if (!json_is_array(list))
        return sim_err_set(err, SIM_EINVAL, "%s: key '%s' must be a list of module names", origin, key);
    int64_t L = m->layers;
    double *acc = calloc((size_t)(L * P_COUNT), sizeof *acc);
    if (!acc) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", origin);
    for (size_t j = 0; j < json_array_size(list); j++) {
        const char *name = json_string_value(json_array_get(list, j));
        if (!name) {
            free(acc);
            return sim_err_set(err, SIM_EINVAL, "%s: key '%s[%zu]' must be a string", origin, key, j);
        }
        q_module q = classify(m, name);
        if (q.part == P_NONE || q.layer >= L) continue;
        for (int64_t i = q.layer < 0 ? 0 : q.layer; i < (q.layer < 0 ? L : q.layer + 1); i++)
            acc[i * P_COUNT + q.part] += q.weight;
    }
    for (int p = 0; p < P_COUNT; p++) {
        int64_t have = 0, ex = 0;
        for (int64_t i = 0; i < L; i++) {
            if (!part_in_layer(m, p, i)) continue;
            have++;
            ex += acc[i * P_COUNT + p] >= 0.5 - 1e-9;
        }
        if (have == 0 || ex == 0) continue;
        if (2 * ex >= have) {
            excluded[p] = 1;
            if (ex < have)
                model_spec_note((model_spec *)m, "%s left unquantised in %lld of %lld layers: counted as bf16",
                                part_names[p], (long long)ex, (long long)have);
        } else {
            model_spec_note((model_spec *)m, "%s left unquantised in %lld of %lld layers: counted as quantised",
                            part_names[p], (long long)ex, (long long)have);
        }
    }
    free(acc);
    return 0;
}

/* A ModelOpt / compressed-tensors algorithm name → dtype; -1 unknown. */
static int algo_dtype(const char *a)
{
    if (!a) return -1;
    if (!strcasecmp(a, "FP8") || !strcasecmp(a, "FP8_PER_CHANNEL_PER_TOKEN")) return MODEL_DTYPE_FP8;
    if (!strcasecmp(a, "FP8_BLOCK") || !strcasecmp(a, "FP8_PB_WO")) return MODEL_DTYPE_FP8_BLOCK;
    if (!strcasecmp(a, "NVFP4") || !strcasecmp(a, "NVFP4_AWQ") || !strcasecmp(a, "W4A16_NVFP4")) return MODEL_DTYPE_NVFP4;
    if (!strcasecmp(a, "MXFP8")) return MODEL_DTYPE_MXFP8;
    if (!strcasecmp(a, "MXFP4") || !strcasecmp(a, "W4A8_MXFP4_FP8") || !strcasecmp(a, "W4A8_MXFP4_MXFP8"))
        return MODEL_DTYPE_MXFP4;
    if (!strcasecmp(a, "W4A16_AWQ") || !strcasecmp(a, "INT4_AWQ") || !strcasecmp(a, "W4A16") ||
        !strcasecmp(a, "W4A8_AWQ"))
        return MODEL_DTYPE_INT4;
    return -1;
}

/* compressed-tensors: the weights scheme of the first config group into
 * *out (bf16 when none is modelled). */
static int ct_dtype(json_t *groups, const char *origin, model_spec *m, int *out, sim_err *err)
{
    if (!json_is_object(groups) || json_object_size(groups) == 0)
        return sim_err_set(err, SIM_EINVAL, "%s: key 'quantization_config.config_groups' must be a non-empty mapping",
                           origin);
    const char *gname;
    json_t *g;
    int found = -1;
    json_object_foreach(groups, gname, g) {
        json_t *w = json_object_get(g, "weights");
        if (!json_is_object(w)) continue;
        json_int_t bits = json_integer_value(json_object_get(w, "num_bits"));
        const char *type = json_string_value(json_object_get(w, "type"));
        const char *strategy = json_string_value(json_object_get(w, "strategy"));
        json_int_t group = json_integer_value(json_object_get(w, "group_size"));
        int d = -1;
        if (bits == 4 && type && !strcasecmp(type, "int")) {
            d = MODEL_DTYPE_INT4;
            if (group > 0) m->quant_group = (int32_t)group;
            if (group > 0 && group != 32)
                model_spec_note(m, "int4 group size %lld: weight bytes counted with servesim's int4 (one bf16 scale "
                                "per 32 values)", (long long)group);
        } else if (bits == 4 && type && !strcasecmp(type, "float")) {
            /* FP4 with one scale per 32 values is MXFP4 (Kimi's
             * mxfp4-pack-quantized); per 16, NVFP4. */
            const char *fmt = json_string_value(json_object_get(g, "format"));
            d = group == 32 || (fmt && strstr(fmt, "mxfp4")) ? MODEL_DTYPE_MXFP4 : MODEL_DTYPE_NVFP4;
        } else if (bits == 8 && type && !strcasecmp(type, "float")) {
            d = strategy && !strcasecmp(strategy, "block") ? MODEL_DTYPE_FP8_BLOCK : MODEL_DTYPE_FP8;
        } else {
            model_spec_note(m, "compressed-tensors group '%s' (%lld-bit %s) not modelled: counted as bf16", gname,
                            (long long)bits, type ? type : "?");
        }
        if (found < 0) found = d;
        else if (d != found)
            model_spec_note(m, "compressed-tensors groups of different formats: the first applies to all ('%s' "
                            "differs)", gname);
    }
    *out = found < 0 ? MODEL_DTYPE_BF16 : found;
    return 0;
}

/* MIXED_PRECISION: the most frequent format among each part's modules. */
static int mixed_parts(const model_spec *m, json_t *layers, const char *origin, int part_dt[P_COUNT], sim_err *err)
{
    if (!json_is_object(layers))
        return sim_err_set(err, SIM_EINVAL, "%s: key 'quantized_layers' must map module names to formats", origin);
    double tally[P_COUNT][MODEL_DTYPE_COUNT] = {{0}};
    const char *name;
    json_t *v;
    json_object_foreach(layers, name, v) {
        int d = algo_dtype(json_string_value(json_object_get(v, "quant_algo")));
        q_module q = classify(m, name);
        if (q.part == P_NONE || d < 0) continue;
        tally[q.part][d] += q.weight;
    }
    for (int p = 0; p < P_COUNT; p++) {
        int best = -1;
        double bw = 0, total = 0;
        for (int d = 0; d < MODEL_DTYPE_COUNT; d++) {
            total += tally[p][d];
            if (tally[p][d] > bw) bw = tally[p][d], best = d;
        }
        part_dt[p] = best < 0 ? MODEL_DTYPE_BF16 : best;
        if (best >= 0 && bw < total)
            model_spec_note((model_spec *)m, "%s mix formats: counted as %s (%.0f%% of their modules)", part_names[p],
                            model_dtype_name((model_dtype)best), 100.0 * bw / total);
    }
    return 0;
}

int model_hf_quant_apply(json_t *qcfg, json_t *modelopt, const char *origin, model_spec *m, sim_err *err)
{
    int base = MODEL_DTYPE_BF16, rc;
    int part_dt[P_COUNT] = {MODEL_DTYPE_BF16, MODEL_DTYPE_BF16, MODEL_DTYPE_BF16, MODEL_DTYPE_BF16};
    int mixed = 0, excluded[P_COUNT] = {0};
    json_t *excl = NULL, *qlayers = NULL;
    const char *excl_key = "exclude_modules", *kv_algo = NULL;
    if (qcfg && !json_is_null(qcfg) && !json_is_object(qcfg))
        return sim_err_set(err, SIM_EINVAL, "%s: key 'quantization_config' must be a mapping", origin);
    if (modelopt) {
        json_t *q = json_object_get(modelopt, "quantization");
        if (!json_is_object(q)) q = modelopt;
        const char *algo = json_string_value(json_object_get(q, "quant_algo"));
        if (!algo)
            return sim_err_set(err, SIM_EINVAL, "%s: hf_quant.json: key 'quantization.quant_algo' missing", origin);
        kv_algo = json_string_value(json_object_get(q, "kv_cache_quant_algo"));
        excl = json_object_get(q, "exclude_modules");
        if (!strcasecmp(algo, "MIXED_PRECISION")) {
            mixed = 1;
            qlayers = json_object_get(q, "quantized_layers");
        } else if ((base = algo_dtype(algo)) < 0) {
            model_spec_note(m, "ModelOpt quant_algo %s not modelled: weights counted as bf16", algo);
            base = MODEL_DTYPE_BF16;
        }
    } else if (json_is_object(qcfg)) {
        json_t *mv = json_object_get(qcfg, "quant_method");
        if (mv && !json_is_string(mv))
            return sim_err_set(err, SIM_EINVAL, "%s: key 'quantization_config.quant_method' must be a string",
                               origin);
        const char *method = json_string_value(mv);
        const char *algo = json_string_value(json_object_get(qcfg, "quant_algo"));
        if (!method && algo) method = "modelopt";
        if (!method)
            return sim_err_set(err, SIM_EINVAL, "%s: key 'quantization_config.quant_method' missing", origin);
        if (!strcasecmp(method, "fp8")) {
            base = json_object_get(qcfg, "weight_block_size") ? MODEL_DTYPE_FP8_BLOCK : MODEL_DTYPE_FP8;
            excl_key = json_object_get(qcfg, "modules_to_not_convert") ? "modules_to_not_convert" : "ignored_layers";
        } else if (!strcasecmp(method, "mxfp4")) {
            base = MODEL_DTYPE_MXFP4;
            excl_key = "modules_to_not_convert";
        } else if (!strcasecmp(method, "compressed-tensors")) {
            if ((rc = ct_dtype(json_object_get(qcfg, "config_groups"), origin, m, &base, err))) return rc;
            excl_key = "ignore";
            if (json_is_object(json_object_get(qcfg, "kv_cache_scheme"))) kv_algo = "FP8";
            else kv_algo = json_string_value(json_object_get(qcfg, "kv_cache_scheme"));
        } else if (!strcasecmp(method, "modelopt")) {
            if (algo && !strcasecmp(algo, "MIXED_PRECISION")) {
                mixed = 1;
                qlayers = json_object_get(qcfg, "quantized_layers");
            } else if ((base = algo_dtype(algo)) < 0) {
                model_spec_note(m, "ModelOpt quant_algo %s not modelled: weights counted as bf16", algo ? algo : "?");
                base = MODEL_DTYPE_BF16;
            }
            excl_key = json_object_get(qcfg, "exclude_modules") ? "exclude_modules" : "ignore";
            kv_algo = json_string_value(json_object_get(qcfg, "kv_cache_quant_algo"));
        } else if (!strcasecmp(method, "awq") || !strcasecmp(method, "gptq")) {
            json_int_t bits = json_integer_value(json_object_get(qcfg, "bits"));
            json_int_t group = json_integer_value(json_object_get(qcfg, "group_size"));
            if (bits == 4) {
                base = MODEL_DTYPE_INT4;
                if (group > 0) m->quant_group = (int32_t)group;
            } else {
                model_spec_note(m, "%s %lld-bit weights not modelled: counted as bf16", method, (long long)bits);
            }
            excl_key = "modules_to_not_convert";
        } else {
            model_spec_note(m, "quantization_config.quant_method '%s' not modelled: weights counted as bf16", method);
        }
        if (!excl) excl = json_object_get(qcfg, excl_key);
    } else {
        return 0;
    }
    if (mixed && (rc = mixed_parts(m, qlayers, origin, part_dt, err))) return rc;
    if ((rc = apply_excludes(m, excl, origin, excl_key, excluded, err))) return rc;
    int32_t *dst[P_COUNT] = {&m->wdtype_attn, &m->wdtype_dense, &m->wdtype_expert, &m->wdtype_shared};
    for (int p = 0; p < P_COUNT; p++) *dst[p] = excluded[p] ? MODEL_DTYPE_BF16 : mixed ? part_dt[p] : base;
    if (kv_algo && *kv_algo)
        model_spec_note(m, "checkpoint calibrated a %s KV cache: the scenario's kv_dtype decides it", kv_algo);
    return 0;
}
