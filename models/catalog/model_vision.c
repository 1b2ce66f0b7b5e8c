/* model_vision — see model_vision.h. */
#include "model_vision.h"
#include "model_spec.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Largest width or count a tower key may hold (no tower is near it). */
#define VIS_INT_MAX (1 << 20)
/* Kimi-K2.5's frames per video chunk (media_proc_cfg.temporal_merge_kernel_size). */
#define VIS_KIMI_CHUNK 4
/* Gemma-4's soft tokens per video frame when the config does not say. */
#define VIS_GEMMA_VIDEO_TOKENS 70

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
    /* Video: the processor cuts the sampled frames into chunks of
     * media_proc_cfg.temporal_merge_kernel_size frames, 4 in Kimi-K2.5's
     * preprocessor_config.json and the default of vLLM's and SGLang's Kimi
     * processors (vllm transformers_utils/processors/kimi_k25*.py); the
     * config.json does not carry it. The tower attends over a whole chunk
     * and its sd2_tpool merge averages the chunk's frames, so a chunk must
     * fit the tower's temporal position table (init_pos_emb_time frames).
     * Another merge_type, or a table under 4 frames, takes no video. */
    v->video_chunk = VIS_KIMI_CHUNK;
    const char *mt = json_string_value(json_object_get(vc, "merge_type"));
    json_t *pt = json_object_get(vc, "init_pos_emb_time");
    if ((mt && strcmp(mt, "sd2_tpool") != 0) ||
        (json_is_integer(pt) && json_integer_value(pt) < VIS_KIMI_CHUNK))
        v->video_chunk = 0;
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
    /* Video: each sampled frame is an image of at most video_seq_length
     * soft tokens; configs that lack the key (Gemma-4-26B-A4B) take the
     * processor's default, Gemma4VideoProcessor.max_soft_tokens = 70
     * (transformers models/gemma4/video_processing_gemma4.py; vLLM
     * models/gemma4_mm.py _VIDEO_MAX_SOFT_TOKENS). */
    v->video_tokens = VIS_GEMMA_VIDEO_TOKENS;
    if (json_object_get(vc, "video_seq_length") && !vis_int(v, vc, "video_seq_length", &v->video_tokens)) return 0;
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

/* Gemma-4's resize (transformers get_aspect_ratio_preserving_size): the
 * image scaled, aspect kept, up or down, to max_tokens·k² patches of p²,
 * each side floored to a multiple of u = p·k; a side that floors to zero
 * becomes u and the other ⌊long/short⌋·u, at most max_tokens·u. Sets the
 * pooled rows and columns (sides / u). */
static void gemma_fit(int64_t width, int64_t height, int64_t p, int64_t k, int64_t max_tokens, int64_t *hb,
                      int64_t *wb)
{
    const double u = (double)(p * k);
    const double f = sqrt((double)(max_tokens * k * k) * (double)(p * p) / ((double)height * (double)width));
    *hb = (int64_t)floor(f * (double)height / u);
    *wb = (int64_t)floor(f * (double)width / u);
    if (*hb == 0) {
        *hb = 1;
        *wb = (int64_t)floor((double)width / (double)height);
        if (*wb > max_tokens) *wb = max_tokens;
    } else if (*wb == 0) {
        *wb = 1;
        *hb = (int64_t)floor((double)height / (double)width);
        if (*hb > max_tokens) *hb = max_tokens;
    }
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
        g->seq_len = hp * wp;
        g->patches = (int64_t)g->t * hp * wp;
        break;
    }
    case MODEL_VISION_KIMI_K25: {
        if (frames > 0 && v->video_chunk < 1)
            return sim_err_set(err, SIM_EINVAL, "%s: video inputs on the kimi_k25 tower of this config are not "
                               "supported (its merge_type is not sd2_tpool, or init_pos_emb_time holds fewer than "
                               "the processor's %d frames per chunk); send images (frames 0)", what,
                               VIS_KIMI_CHUNK);
        hp = (height + p * k - 1) / (p * k) * k;
        wp = (width + p * k - 1) / (p * k) * k;
        /* A video: ⌈F/c⌉ chunks of c frames (the last one shorter), each
         * one attention sequence over its frames' patches, averaged over
         * its frames into one frame's merged tokens. */
        const int64_t f = frames > 0 ? frames : 1, c = frames > 0 ? v->video_chunk : 1;
        const int64_t full = f / c, rem = f % c;
        g->t = (int32_t)f;
        g->tokens = (full + (rem > 0)) * (hp / k) * (wp / k);
        g->seqs = (int32_t)(full > 0 ? full : 1);
        g->seq_len = (full > 0 ? c : rem) * hp * wp;
        g->tail_len = full > 0 && rem > 0 ? rem * hp * wp : 0;
        g->patches = f * hp * wp;
        break;
    }
    case MODEL_VISION_GEMMA4: {
        /* Each frame of a video is an image of at most video_tokens soft
         * tokens. The processor pads every image (frame) to max·k² patches
         * and the tower runs on them all (the padding masked in attention,
         * dropped by the pooling): those are its rows and sequence. */
        const int64_t max = frames > 0 ? v->video_tokens : v->max_tokens;
        if (frames > 0 && max < 1)
            return sim_err_set(err, SIM_EINVAL, "%s: video inputs on this gemma4 tower are not supported", what);
        int64_t hb, wb;
        gemma_fit(width, height, p, k, max, &hb, &wb);
        hp = hb * k;
        wp = wb * k;
        g->t = frames > 0 ? frames : 1;
        g->seqs = g->t;
        g->tokens = (int64_t)g->t * hb * wb;
        g->seq_len = max * k * k;
        g->patches = (int64_t)g->t * g->seq_len;
        break;
    }
    default: return sim_err_set(err, SIM_EINVAL, "%s: no vision tower to price", what);
    }
    g->h = (int32_t)hp;
    g->w = (int32_t)wp;
    if (g->tokens > (1 << 22))
        return sim_err_set(err, SIM_EINVAL, "%s: %lld tokens per item is beyond any context (%d x %d, %d frames)",
                           what, (long long)g->tokens, width, height, frames);
    return 0;
}

double model_vision_weight_bytes(const model_vision *v)
{
    if (v->family != MODEL_VISION_QWEN3_VL && v->family != MODEL_VISION_KIMI_K25 && v->family != MODEL_VISION_GEMMA4)
        return 0;
    const double H = v->hidden, I = v->intermediate, nd = (double)v->heads * v->head_dim;
    double params = (double)v->in_channels * v->temporal_patch * v->patch * v->patch * H;
    params += v->layers * (3 * nd * H + H * nd + (v->gated ? 3 : 2) * I * H);
    if (v->merger_inter > 0)
        params += v->mergers * ((double)v->merger_inter * v->merger_inter + (double)v->out_hidden * v->merger_inter);
    else
        params += (double)v->out_hidden * H;
    return 2 * params;
}
