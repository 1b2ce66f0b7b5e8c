/* model_vision — see model_vision.h. */
#include "model_vision.h"
#include "model_spec.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Largest width or count a tower key may hold (no tower is near it). */
#define VIS_INT_MAX (1 << 20)

const char *model_vision_family_name(int32_t family)
{
    switch (family) {
    case MODEL_VISION_NONE: return "none";
    case MODEL_VISION_UNSUPPORTED: return "unsupported";
    case MODEL_VISION_QWEN3_VL: return "qwen3_vl";
    case MODEL_VISION_KIMI_K25: return "kimi_k25";
    case MODEL_VISION_GEMMA4: return "gemma4";
    default: return "?";
    }
}

/* A whole number in [1, VIS_INT_MAX] at key; 0 and a reason in v->why otherwise. */
static int vis_int(model_vision *v, json_t *o, const char *key, int32_t *out)
{
    json_t *j = json_object_get(o, key);
    double d = json_is_integer(j) ? (double)json_integer_value(j) : json_is_real(j) ? json_real_value(j) : -1;
    if (!(d >= 1 && d <= VIS_INT_MAX && d == floor(d))) {
        snprintf(v->why, sizeof v->why, "vision_config.%s %s (expected a whole number in 1..%d)", key,
                 j ? "is out of range or not a number" : "is missing", VIS_INT_MAX);
        return 0;
    }
    *out = (int32_t)d;
    return 1;
}

static void unsupported(model_vision *v, const char *fmt, const char *arg)
{
    v->family = MODEL_VISION_UNSUPPORTED;
    snprintf(v->why, sizeof v->why, fmt, arg);
}

static int starts(const char *s, const char *p) { return s && strncmp(s, p, strlen(p)) == 0; }

static int qwen3_vl(model_vision *v, json_t *vc)
{
    int32_t depth = 0;
    if (!vis_int(v, vc, "depth", &v->layers) || !vis_int(v, vc, "hidden_size", &v->hidden) ||
        !vis_int(v, vc, "num_heads", &v->heads) || !vis_int(v, vc, "intermediate_size", &v->intermediate) ||
        !vis_int(v, vc, "patch_size", &v->patch) || !vis_int(v, vc, "spatial_merge_size", &v->merge) ||
        !vis_int(v, vc, "temporal_patch_size", &v->temporal_patch) ||
        !vis_int(v, vc, "out_hidden_size", &v->out_hidden))
        return 0;
    v->in_channels = 3;
    if (json_object_get(vc, "in_channels") && !vis_int(v, vc, "in_channels", &v->in_channels)) return 0;
    json_t *ds = json_object_get(vc, "deepstack_visual_indexes");
    if (ds && !json_is_array(ds)) {
        snprintf(v->why, sizeof v->why, "vision_config.deepstack_visual_indexes is not a list");
        return 0;
    }
    depth = ds ? (int32_t)json_array_size(ds) : 0;
    v->mergers = 1 + depth;
    v->merger_inter = v->hidden * v->merge * v->merge;
    return 1;
}

static int kimi_k25(model_vision *v, json_t *vc, int32_t text_hidden)
{
    if (!vis_int(v, vc, "vt_num_hidden_layers", &v->layers) || !vis_int(v, vc, "vt_hidden_size", &v->hidden) ||
        !vis_int(v, vc, "vt_num_attention_heads", &v->heads) ||
        !vis_int(v, vc, "vt_intermediate_size", &v->intermediate) || !vis_int(v, vc, "patch_size", &v->patch))
        return 0;
    json_t *mk = json_object_get(vc, "merge_kernel_size");
    if (!json_is_array(mk) || json_array_size(mk) != 2 || !json_is_integer(json_array_get(mk, 0)) ||
        json_integer_value(json_array_get(mk, 0)) != json_integer_value(json_array_get(mk, 1)) ||
        json_integer_value(json_array_get(mk, 0)) < 1 || json_integer_value(json_array_get(mk, 0)) > 64) {
        snprintf(v->why, sizeof v->why, "vision_config.merge_kernel_size must be a list of two equal whole "
                                        "numbers in 1..64");
        return 0;
    }
    v->merge = (int32_t)json_integer_value(json_array_get(mk, 0));
    int32_t mm = v->hidden;
    if (json_object_get(vc, "mm_hidden_size") && !vis_int(v, vc, "mm_hidden_size", &mm)) return 0;
    v->out_hidden = text_hidden;
    if (json_object_get(vc, "text_hidden_size") && !vis_int(v, vc, "text_hidden_size", &v->out_hidden)) return 0;
    v->in_channels = 3;
    v->temporal_patch = 1;
    v->mergers = 1;
    v->merger_inter = mm * v->merge * v->merge;
    return 1;
}

static int gemma4(model_vision *v, json_t *top, json_t *vc, int32_t text_hidden)
{
    if (!vis_int(v, vc, "num_hidden_layers", &v->layers) || !vis_int(v, vc, "hidden_size", &v->hidden) ||
        !vis_int(v, vc, "num_attention_heads", &v->heads) || !vis_int(v, vc, "intermediate_size", &v->intermediate) ||
        !vis_int(v, vc, "patch_size", &v->patch) || !vis_int(v, vc, "pooling_kernel_size", &v->merge))
        return 0;
    if (json_object_get(vc, "head_dim") && !vis_int(v, vc, "head_dim", &v->head_dim)) return 0;
    if (json_object_get(vc, "default_output_length")) {
        if (!vis_int(v, vc, "default_output_length", &v->max_tokens)) return 0;
    } else if (!vis_int(v, top, "vision_soft_tokens_per_image", &v->max_tokens)) {
        snprintf(v->why, sizeof v->why, "neither vision_config.default_output_length nor "
                                        "vision_soft_tokens_per_image gives the soft tokens per image");
        return 0;
    }
    v->in_channels = 3;
    v->temporal_patch = 1;
    v->gated = 1;
    v->mergers = 1;
    v->merger_inter = 0; /* pooling, then one projection */
    v->out_hidden = text_hidden;
    return 1;
}

void model_vision_from_hf(const void *top_json, model_spec *m)
{
    json_t *top = (json_t *)top_json;
    model_vision *v = &m->vision;
    memset(v, 0, sizeof *v);
    json_t *vc = json_object_get(top, "vision_config");
    if (!json_is_object(vc)) vc = json_object_get(top, "visual");
    if (!json_is_object(vc)) return;
    const char *vt = json_string_value(json_object_get(vc, "model_type"));
    const char *tt = json_string_value(json_object_get(top, "model_type"));
    snprintf(v->type, sizeof v->type, "%s", vt && vt[0] ? vt : tt ? tt : "?");
    int ok = 0;
    if (starts(vt, "qwen3_vl") || starts(vt, "qwen3_5")) {
        v->family = MODEL_VISION_QWEN3_VL;
        ok = qwen3_vl(v, vc);
    } else if ((!vt || !vt[0]) && tt && !strcmp(tt, "kimi_k25")) {
        v->family = MODEL_VISION_KIMI_K25;
        ok = kimi_k25(v, vc, m->hidden);
    } else if (vt && !strcmp(vt, "gemma4_vision")) {
        v->family = MODEL_VISION_GEMMA4;
        ok = gemma4(v, top, vc, m->hidden);
    } else {
        unsupported(v, "vision tower '%s' is not a family servesim prices (qwen3_vl, kimi_k25, gemma4)", v->type);
    }
    if (v->family != MODEL_VISION_UNSUPPORTED && ok) {
        if (!v->head_dim) v->head_dim = v->hidden % v->heads ? 0 : v->hidden / v->heads;
        if (v->head_dim < 1) {
            snprintf(v->why, sizeof v->why, "vision hidden size %d is not a multiple of its %d heads", v->hidden,
                     v->heads);
            ok = 0;
        }
    }
    if (v->family != MODEL_VISION_UNSUPPORTED && !ok) {
        char why[sizeof v->why];
        memcpy(why, v->why, sizeof why);
        snprintf(v->why, sizeof v->why, "%s vision tower: %.160s", model_vision_family_name(v->family), why);
        v->family = MODEL_VISION_UNSUPPORTED;
    }
    if (v->family == MODEL_VISION_UNSUPPORTED)
        model_spec_note(m, "vision tower not priced (%s): only text inputs can be simulated", v->why);
    else
        model_spec_note(m, "vision tower %s: %d layers x %d, %d heads, MLP %d%s, patch %d, merge %d "
                           "(image inputs: workload.images)",
                        model_vision_family_name(v->family), v->layers, v->hidden, v->heads, v->intermediate,
                        v->gated ? " gated" : "", v->patch, v->merge);
}

int model_vision_check(const model_spec *m, const char *what, sim_err *err)
{
    const model_vision *v = &m->vision;
    if (v->family == MODEL_VISION_NONE)
        return sim_err_set(err, SIM_EINVAL, "%s: model %s has no vision_config (a text-only model takes no images)",
                           what, m->name);
    if (v->family == MODEL_VISION_UNSUPPORTED)
        return sim_err_set(err, SIM_EINVAL, "%s: model %s: %s", what, m->name, v->why);
    return 0;
}

/* Nearest multiple of f (at least f). */
static int64_t round_to(int64_t x, int64_t f)
{
    int64_t r = (x + f / 2) / f * f;
    return r < f ? f : r;
}

int model_vision_grid(const model_vision *v, int32_t width, int32_t height, int32_t frames, model_media_grid *g,
                      const char *what, sim_err *err)
{
    memset(g, 0, sizeof *g);
    if (width < 1 || height < 1)
        return sim_err_set(err, SIM_EINVAL, "%s: width and height must be >= 1 pixel, got %d x %d", what, width,
                           height);
    if (frames < 0) return sim_err_set(err, SIM_EINVAL, "%s: frames must be >= 0, got %d", what, frames);
    const int64_t p = v->patch, k = v->merge;
    int64_t hp = 0, wp = 0;
    switch (v->family) {
    case MODEL_VISION_QWEN3_VL: {
        hp = round_to(height, p * k) / p;
        wp = round_to(width, p * k) / p;
        g->t = frames > 0 ? (int32_t)((frames + v->temporal_patch - 1) / v->temporal_patch) : 1;
        g->seqs = g->t;
        g->tokens = (int64_t)g->t * hp * wp / (k * k);
        break;
    }
    case MODEL_VISION_KIMI_K25:
    case MODEL_VISION_GEMMA4: {
        if (frames > 0)
            return sim_err_set(err, SIM_EINVAL, "%s: video inputs on the %s tower are not supported (its config "
                               "does not give how frames are pooled); send images (frames 0)", what,
                               model_vision_family_name(v->family));
        if (v->family == MODEL_VISION_KIMI_K25) {
            hp = (height + p * k - 1) / (p * k) * k;
            wp = (width + p * k - 1) / (p * k) * k;
        } else {
            /* At most max_tokens·k² patches, aspect kept, never scaled up. */
            double budget = (double)v->max_tokens * (double)(k * k) * (double)(p * p);
            double s = sqrt(budget / ((double)width * height));
            if (s > 1) s = 1;
            int64_t hb = (int64_t)floor(height * s / (double)(p * k) + 1e-9);
            int64_t wb = (int64_t)floor(width * s / (double)(p * k) + 1e-9);
            if (hb < 1) hb = 1;
            if (wb < 1) wb = 1;
            while (hb * wb > v->max_tokens) { /* the floor of a 1-clamped side can overshoot */
                if (hb >= wb) hb--;
                else wb--;
            }
            hp = hb * k;
            wp = wb * k;
        }
        g->t = 1;
        g->seqs = 1;
        g->tokens = hp * wp / (k * k);
        break;
    }
    default: return sim_err_set(err, SIM_EINVAL, "%s: no vision tower to price", what);
    }
    g->h = (int32_t)hp;
    g->w = (int32_t)wp;
    g->seq_len = hp * wp;
    g->patches = (int64_t)g->t * hp * wp;
    if (g->tokens > (1 << 22))
        return sim_err_set(err, SIM_EINVAL, "%s: %lld tokens per item is beyond any context (%d x %d, %d frames)",
                           what, (long long)g->tokens, width, height, frames);
    return 0;
}
