/* model_resolve — see model_resolve.h. */
#include "model_resolve.h"

#include "model_hf.h"
#include "model_dtype.h"
#include "model_spec.h"
#include "model_zoo.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static int ends_with_ci(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcasecmp(s + a - b, suffix);
}

/* ---- zoo entries ------------------------------------------------------- */

/* Loads zoo entry i (its config and, when shipped, its hf_quant.json);
 * the model is named by its Hugging Face id. */
static int resolve_zoo_entry(int i, model_spec *out, sim_err *err)
{
    char *text = NULL, *quant = NULL;
    size_t len = 0, qlen = 0;
    char origin[300], id[MODEL_NAME_MAX];
    int rc = model_zoo_read(i, 0, &text, &len, err);
    if (rc) return rc;
    if (model_zoo_has_quant(i) && (rc = model_zoo_read(i, 1, &quant, &qlen, err))) {
        free(text);
        return rc;
    }
    snprintf(origin, sizeof origin, "<zoo>/models/hf/%s.json", model_zoo_stem(i));
    rc = model_hf_parse_quant(text, quant, origin, out, err);
    free(text);
    free(quant);
    if (rc) return rc;
    model_zoo_id(i, id, sizeof id);
    snprintf(out->name, sizeof out->name, "%s", id);
    return 0;
}

/* ---- variants ----------------------------------------------------------- */

typedef struct {
    const char *suffix;
    model_dtype dtype;
} quant_suffix;

static const quant_suffix quant_suffixes[] = {
    {"-NVFP4", MODEL_DTYPE_NVFP4}, {"-MXFP4", MODEL_DTYPE_MXFP4}, {"-FP4", MODEL_DTYPE_NVFP4},
    {"-FP8", MODEL_DTYPE_FP8},     {"-INT4", MODEL_DTYPE_INT4},
};
static const char *const tune_suffixes[] = {"-Instruct", "-Chat", "-it"};

/* Strips one suffix of list from name in place; returns its index or -1. */
static int strip_quant(char *name)
{
    for (size_t k = 0; k < sizeof quant_suffixes / sizeof quant_suffixes[0]; k++)
        if (ends_with_ci(name, quant_suffixes[k].suffix)) {
            name[strlen(name) - strlen(quant_suffixes[k].suffix)] = 0;
            return (int)k;
        }
    return -1;
}

static int strip_tune(char *name)
{
    for (size_t k = 0; k < sizeof tune_suffixes / sizeof tune_suffixes[0]; k++)
        if (ends_with_ci(name, tune_suffixes[k]) && strlen(name) > strlen(tune_suffixes[k])) {
            name[strlen(name) - strlen(tune_suffixes[k])] = 0;
            return 1;
        }
    return 0;
}

/* Zoo entry for a base name: same org first, then the name in any org;
 * Llama names with and without the "Meta-" prefix. */
static int find_base(const char *org, const char *base)
{
    char cand[2][MODEL_NAME_MAX];
    int n = 0;
    if (strlen(base) + 6 > MODEL_NAME_MAX) return -1;
    snprintf(cand[n++], MODEL_NAME_MAX, "%s", base);
    if (!strncasecmp(base, "Meta-", 5))
        snprintf(cand[n++], MODEL_NAME_MAX, "%s", base + 5);
    else
        snprintf(cand[n++], MODEL_NAME_MAX, "Meta-%.*s", MODEL_NAME_MAX - 6, base);
    for (int k = 0; k < n; k++) {
        if (org && *org) {
            char id[2 * MODEL_NAME_MAX + 2];
            snprintf(id, sizeof id, "%s/%s", org, cand[k]);
            int i = model_zoo_find(id);
            if (i >= 0) return i;
        }
        int i = model_zoo_find_name(cand[k]);
        if (i >= 0) return i;
    }
    return -1;
}

/* model_type of zoo entry i (top level or text_config) into out; its
 * quantization_config (a new reference, or NULL) into *qcfg when asked. */
static void zoo_model_type(int i, char *out, size_t size, json_t **qcfg)
{
    char *text = NULL;
    size_t len = 0;
    out[0] = 0;
    if (qcfg) *qcfg = NULL;
    if (model_zoo_read(i, 0, &text, &len, NULL)) return;
    json_t *root = json_loads(text, 0, NULL);
    free(text);
    if (!root) return;
    const char *t = json_string_value(json_object_get(root, "model_type"));
    json_t *tc = json_object_get(root, "text_config");
    if (json_is_object(tc) && json_string_value(json_object_get(tc, "model_type")))
        t = json_string_value(json_object_get(tc, "model_type"));
    snprintf(out, size, "%s", t ? t : "");
    if (qcfg) {
        json_t *q = json_is_object(tc) ? json_object_get(tc, "quantization_config") : NULL;
        if (!q) q = json_object_get(root, "quantization_config");
        if (json_is_object(q)) *qcfg = json_incref(q);
    }
    json_decref(root);
}

/* A shipped checkpoint that is the same kind of variant (name suffix, org
 * when given) of the same architecture (model_type) as base entry b and
 * says how it is quantised (a ModelOpt file or a quantization_config);
 * -1 when none. */
static int find_quant_sibling(const char *org, const char *suffix, int b)
{
    char want[64], type[64];
    zoo_model_type(b, want, sizeof want, NULL);
    if (!want[0]) return -1;
    for (int i = 0; i < model_zoo_count(); i++) {
        const char *stem = model_zoo_stem(i);
        if (i == b || !ends_with_ci(stem, suffix)) continue;
        if (org && *org && strncasecmp(stem, org, strlen(org))) continue;
        json_t *q = NULL;
        zoo_model_type(i, type, sizeof type, &q);
        int quantised = model_zoo_has_quant(i) || q;
        json_decref(q);
        if (quantised && !strcmp(type, want)) return i;
    }
    return -1;
}

/* Base entry b's config with sibling s's quantisation: its ModelOpt file,
 * else its quantization_config set into the base config. */
static int load_with_quant_of(int b, int s, model_spec *out, sim_err *err)
{
    char *text = NULL, *quant = NULL, *merged = NULL, origin[300], type[64];
    size_t len = 0, qlen = 0;
    int rc = model_zoo_read(b, 0, &text, &len, err);
    snprintf(origin, sizeof origin, "<zoo>/models/hf/%s.json", model_zoo_stem(b));
    if (!rc && model_zoo_has_quant(s)) {
        rc = model_zoo_read(s, 1, &quant, &qlen, err);
    } else if (!rc) {
        json_t *q = NULL, *root = json_loads(text, 0, NULL);
        zoo_model_type(s, type, sizeof type, &q);
        if (root && q) json_object_set(root, "quantization_config", q);
        merged = root && q ? json_dumps(root, JSON_COMPACT) : NULL;
        json_decref(q);
        json_decref(root);
        if (!merged) rc = sim_err_set(err, SIM_EIO, "%s: cannot merge the quantisation of %s", origin, model_zoo_stem(s));
    }
    if (!rc) rc = model_hf_parse_quant(merged ? merged : text, quant, origin, out, err);
    free(text);
    free(quant);
    free(merged);
    return rc;
}

/* A quantised variant without a shipped sibling: the suffix's format on
 * every quantisable part (what ModelOpt and llm-compressor do by default:
 * every Linear but the LM head). */
static void apply_variant_dtype(model_spec *m, model_dtype d)
{
    int32_t *parts[] = {&m->wdtype_attn, &m->wdtype_dense, &m->wdtype_expert, &m->wdtype_shared};
    for (int k = 0; k < 4; k++) *parts[k] = (int32_t)d;
    if (d == MODEL_DTYPE_INT4 && m->quant_group == 0) m->quant_group = 32;
}

/* 1 when name resolved as a variant of a shipped id, 0 when not, < 0 on a
 * load error. */
static int resolve_variant(const char *name, model_spec *out, sim_err *err)
{
    char org[MODEL_NAME_MAX] = "", base[MODEL_NAME_MAX];
    const char *slash = strchr(name, '/');
    const char *sep = slash ? NULL : strstr(name, "--");
    if (slash || sep) {
        size_t n = (size_t)((slash ? slash : sep) - name);
        if (n >= sizeof org) return 0;
        snprintf(org, sizeof org, "%.*s", (int)n, name);
        snprintf(base, sizeof base, "%s", (slash ? slash + 1 : sep + 2));
    } else {
        snprintf(base, sizeof base, "%s", name);
    }
    if (ends_with_ci(base, ".json")) base[strlen(base) - 5] = 0;
    int q = strip_quant(base);
    int tuned = strip_tune(base);
    if (q < 0) q = strip_quant(base); /* "-FP8-Instruct" */
    int i = find_base(org, base);
    if (i < 0) return 0;
    char id[MODEL_NAME_MAX];
    model_zoo_id(i, id, sizeof id);
    int rc;
    if (q >= 0) {
        model_dtype d = quant_suffixes[q].dtype;
        int sib = find_quant_sibling(org, quant_suffixes[q].suffix, i);
        if (sib >= 0) {
            char sid[MODEL_NAME_MAX];
            model_zoo_id(sib, sid, sizeof sid);
            if ((rc = load_with_quant_of(i, sib, out, err))) return rc;
            model_spec_note(out,
                            "%s is not shipped: architecture from %s, quantisation (which parts are %s, how) "
                            "from the shipped %s of the same architecture",
                            name, id, model_dtype_name(d), sid);
        } else {
            if ((rc = resolve_zoo_entry(i, out, err))) return rc;
            apply_variant_dtype(out, d);
            model_spec_note(out,
                            "%s is not shipped: architecture from %s, weights %s (the name's %s suffix) on every "
                            "linear layer but embedding, LM head and routers",
                            name, id, model_dtype_name(d), quant_suffixes[q].suffix);
        }
    } else {
        if ((rc = resolve_zoo_entry(i, out, err))) return rc;
        model_spec_note(out, "%s is not shipped: resolved to %s (%s)", name, id,
                        tuned ? "same architecture; fine-tuned weights" : "the same model under its Hugging Face name");
    }
    snprintf(out->name, sizeof out->name, "%s", name);
    return 1;
}

/* ---- suggestions ------------------------------------------------------ */

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0) return 0;
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n)) return 1;
    return 0;
}

#define SUGGEST_MAX 5

typedef struct {
    const char *query;      /* as given */
    const char *query_name; /* after any org/ */
    int n;
    char names[SUGGEST_MAX][MODEL_NAME_MAX];
    int scores[SUGGEST_MAX];
    int max;
} suggest_ctx;

static void suggest_add(const char *cand, void *ctx)
{
    suggest_ctx *s = ctx;
    const char *slash = strchr(cand, '/');
    const char *cname = slash ? slash + 1 : cand;
    int d = model_catalog_name_distance(s->query, cand), d2 = model_catalog_name_distance(s->query_name, cname);
    int score = d < d2 ? d : d2;
    if (contains_ci(cname, s->query_name) || contains_ci(s->query_name, cname)) score = score < 2 ? score : 2;
    int limit = (int)strlen(s->query_name) / 3 + 2;
    if (score > limit) return;
    int pos = s->n;
    while (pos > 0 && s->scores[pos - 1] > score) pos--;
    if (pos >= s->max) return;
    int last = s->n < s->max ? s->n : s->max - 1;
    for (int k = last; k > pos; k--) {
        s->scores[k] = s->scores[k - 1];
        memcpy(s->names[k], s->names[k - 1], MODEL_NAME_MAX);
    }
    s->scores[pos] = score;
    snprintf(s->names[pos], MODEL_NAME_MAX, "%s", cand);
    if (s->n < s->max) s->n++;
}

void model_resolve_suggest(const char *name, int max, char *buf, size_t size)
{
    suggest_ctx s;
    memset(&s, 0, sizeof s);
    s.query = name;
    const char *slash = strchr(name, '/');
    s.query_name = slash ? slash + 1 : name;
    s.max = max < 1 ? 1 : max > SUGGEST_MAX ? SUGGEST_MAX : max;
    model_catalog_model_candidates(suggest_add, &s);
    for (int i = 0; i < model_zoo_count(); i++) {
        char id[MODEL_NAME_MAX];
        model_zoo_id(i, id, sizeof id);
        suggest_add(id, &s);
    }
    /* Only the closest: a tie lists all of them, a worse match none. */
    while (s.n > 1 && s.scores[s.n - 1] > s.scores[0]) s.n--;
    size_t used = 0;
    buf[0] = 0;
    for (int k = 0; k < s.n && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s'%s'", k == 0 ? "" : k + 1 == s.n ? " or " : ", ",
                                 s.names[k]);
}

/* ---- paths ------------------------------------------------------------ */

static int looks_like_path(const char *s)
{
    return s[0] == '/' || !strncmp(s, "./", 2) || !strncmp(s, "../", 3) || ends_with_ci(s, ".json");
}

/* 1 when name is an existing path and loaded, 0 when it is no path, < 0 on
 * an error. */
static int resolve_path(const char *name, model_spec *out, sim_err *err)
{
    struct stat st;
    if (stat(name, &st) != 0) {
        if (!looks_like_path(name)) return 0;
        /* Not a shipped id spelt as a file name either. */
        if (!strchr(name, '/') && model_zoo_find(name) >= 0) return 0;
        return sim_err_set(err, SIM_EIO, "%s: cannot open the model config: %s (expected a Hugging Face config.json, "
                           "a catalogue name or a Hugging Face id)", name, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        char path[4096];
        snprintf(path, sizeof path, "%s/config.json", name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            return sim_err_set(err, SIM_EINVAL, "%s: a folder without config.json (expected a Hugging Face model "
                               "folder or config file)", name);
        int rc = model_hf_load(path, out, err);
        return rc ? rc : 1;
    }
    if (!S_ISREG(st.st_mode))
        return sim_err_set(err, SIM_EINVAL, "%s: not a regular file (expected a Hugging Face config.json)", name);
    int rc = model_hf_load(name, out, err);
    return rc ? rc : 1;
}

int model_resolve(const char *name, model_spec *out, sim_err *err)
{
    if (!name || !*name) return sim_err_set(err, SIM_EINVAL, "no model name given");
    int rc = resolve_path(name, out, err);
    if (rc) return rc < 0 ? rc : 0;
    if ((rc = model_catalog_arch(name, out, err))) return rc < 0 ? rc : 0;
    int i = model_zoo_find(name);
    if (i >= 0) return resolve_zoo_entry(i, out, err);
    if ((rc = resolve_variant(name, out, err))) return rc < 0 ? rc : 0;
    char near[4 * MODEL_NAME_MAX + 32];
    model_resolve_suggest(name, 3, near, sizeof near);
    if (near[0])
        return sim_err_set(err, SIM_EINVAL,
                           "unknown model '%s' (did you mean %s?); give a catalogue name, a Hugging Face id of the "
                           "%d shipped configs (servesim model list) or a path to a config.json",
                           name, near, model_zoo_count());
    return sim_err_set(err, SIM_EINVAL,
                       "unknown model '%s'; give a catalogue name, a Hugging Face id of the %d shipped configs "
                       "(servesim model list) or a path to a config.json",
                       name, model_zoo_count());
}
