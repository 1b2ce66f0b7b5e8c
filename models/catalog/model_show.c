/* model_show — see model_show.h. */
#include "model_show.h"

#include "model_catalog.h"
#include "model_dtype.h"
#include "model_spec.h"
#include "model_zoo.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static void show_usage(FILE *o)
{
    fprintf(o, "usage: servesim model show NAME|ID|PATH [--json]\n"
               "       servesim model list [--json]\n"
               "show: a model as servesim loads it (a catalogue name, a Hugging Face id of the shipped zoo,\n"
               "case-insensitive, or a path to a config.json): layers by kind, sizes, experts, total and\n"
               "active parameters, weight bytes by format as loaded (the checkpoint's quantisation), KV\n"
               "and recurrent-state bytes, and the notes of what was resolved or left out.\n"
               "list: every catalogue model and shipped Hugging Face config with its size.\n");
}

static double gb(double b)
{
    return b / 1e9;
}

/* Bytes by format as a JSON object (formats with bytes only). */
static json_t *bytes_obj(const double *by)
{
    json_t *o = json_object();
    for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
        if (by[d] > 0) json_object_set_new(o, model_dtype_name((model_dtype)d), json_real(by[d]));
    return o;
}

static json_t *notes_array(const model_spec *m)
{
    json_t *a = json_array();
    const char *p = m->notes;
    while (*p) {
        const char *sep = strstr(p, "; ");
        size_t n = sep ? (size_t)(sep - p) : strlen(p);
        json_array_append_new(a, json_stringn(p, n));
        if (!sep) break;
        p = sep + 2;
    }
    return a;
}

/* How many dense layers have FFN width class k. */
static int32_t ffn_width_layers(const model_spec *m, int32_t k)
{
    int32_t n = 0;
    for (int32_t i = 0; i < m->layers; i++)
        n += model_spec_layer_ffn(m, i) == MODEL_FFN_DENSE && m->layer_width[i] == k;
    return n;
}

/* The weight format of each part present. */
static void show_json_dtypes(const model_spec *m, json_t *o)
{
    json_t *parts = json_object();
    json_object_set_new(parts, "attention", json_string(model_dtype_name((model_dtype)m->wdtype_attn)));
    if (model_spec_dense_layers(m) > 0)
        json_object_set_new(parts, "dense_mlp", json_string(model_dtype_name((model_dtype)m->wdtype_dense)));
    if (m->experts > 0)
        json_object_set_new(parts, "routed_experts", json_string(model_dtype_name((model_dtype)m->wdtype_expert)));
    if (m->shared_experts > 0)
        json_object_set_new(parts, "shared_experts", json_string(model_dtype_name((model_dtype)m->wdtype_shared)));
    json_object_set_new(o, "dtypes", parts);
}

/* The layer classes, by FFN and by mixer. */
static void show_json_layers(const model_spec *m, json_t *o)
{
    json_t *l = json_object();
    json_object_set_new(l, "total", json_integer(m->layers));
    json_object_set_new(l, "dense", json_integer(model_spec_dense_layers(m)));
    json_object_set_new(l, "moe", json_integer(m->moe_layers));
    json_object_set_new(l, "no_ffn", json_integer(m->ffnless_layers));
    int32_t attn = model_spec_attention_layers(m);
    /* DeepSeek-V4's attention layers are all bounded or compressed (keys below). */
    json_object_set_new(l, "full_attention", json_integer(m->comp_attn ? 0 : attn - m->sliding_layers));
    json_object_set_new(l, "sliding_window", json_integer(m->sliding_layers));
    json_object_set_new(l, "linear_attention", json_integer(m->linear_layers));
    json_object_set_new(l, "mamba2", json_integer(m->mamba_layers));
    json_object_set_new(l, "no_mixer", json_integer(m->mixerless_layers));
    json_object_set_new(l, "sparse_attention", json_integer(m->index_topk > 0 && !m->comp_attn ? attn : 0));
    json_object_set_new(l, "compressed_sparse_attention", json_integer(m->csa_layers));
    json_object_set_new(l, "heavily_compressed_attention", json_integer(m->hca_layers));
    json_object_set_new(l, "hash_moe", json_integer(m->hash_layers));
    json_object_set_new(o, "layers", l);
}

/* The mixers and FFNs beyond plain attention and MLP: compressed attention,
 * hyper-connections, sequence state, Mamba-2, FFN width classes, the latent
 * MoE, linear attention and the DSA indexer. */
static void show_json_mixers(const model_spec *m, json_t *o)
{
    if (m->comp_attn) {
        /* DeepSeek-V4's attention, output projection and residual. */
        json_t *v = json_object();
        json_object_set_new(v, "q_lora_rank", json_integer(m->q_lora_rank));
        json_object_set_new(v, "sliding_window", json_integer(m->sliding_window));
        json_object_set_new(v, "csa_ratio", json_integer(m->csa_ratio));
        json_object_set_new(v, "hca_ratio", json_integer(m->hca_ratio));
        json_object_set_new(v, "csa_kv_bytes_per_token", json_real(model_spec_csa_kv_bytes(m, 2.0)));
        json_object_set_new(v, "hca_kv_bytes_per_token", json_real(model_spec_hca_kv_bytes(m, 2.0)));
        json_object_set_new(v, "o_groups", json_integer(m->o_groups));
        json_object_set_new(v, "o_lora_rank", json_integer(m->o_lora_rank));
        json_object_set_new(o, "compressed_attention", v);
    }
    json_object_set_new(o, "hyper_connections", json_integer(m->hc_mult));
    json_object_set_new(o, "state_bytes_per_seq", json_real(model_spec_state_bytes_per_seq(m)));
    if (m->mamba_layers > 0) {
        json_t *g = json_object();
        json_object_set_new(g, "heads", json_integer(m->mamba_heads));
        json_object_set_new(g, "head_dim", json_integer(m->mamba_head_dim));
        json_object_set_new(g, "groups", json_integer(m->mamba_groups));
        json_object_set_new(g, "state_size", json_integer(m->mamba_state));
        json_object_set_new(g, "conv_kernel", json_integer(m->mamba_conv));
        json_object_set_new(g, "state_bytes_per_layer", json_real(model_spec_mamba_state_bytes(m)));
        json_object_set_new(o, "mamba2", g);
    }
    if (m->n_ffn_widths > 0) {
        json_t *ws = json_array();
        for (int32_t k = 0; k < m->n_ffn_widths; k++) {
            int32_t n = ffn_width_layers(m, k);
            json_t *e = json_object();
            json_object_set_new(e, "intermediate", json_integer(m->ffn_widths[k]));
            json_object_set_new(e, "layers", json_integer(n));
            json_array_append_new(ws, e);
        }
        json_object_set_new(o, "ffn_widths", ws);
    }
    if (m->moe_latent > 0) json_object_set_new(o, "moe_latent", json_integer(m->moe_latent));
    json_object_set_new(o, "mlp_gated", json_boolean(!m->ffn_plain));
    if (m->linear_layers > 0) {
        json_t *g = json_object();
        json_object_set_new(g, "key_heads", json_integer(m->lin_k_heads));
        json_object_set_new(g, "value_heads", json_integer(m->lin_v_heads));
        json_object_set_new(g, "key_head_dim", json_integer(m->lin_k_dim));
        json_object_set_new(g, "value_head_dim", json_integer(m->lin_v_dim));
        json_object_set_new(g, "conv_kernel", json_integer(m->lin_conv));
        json_object_set_new(o, m->lin_kda ? "kimi_delta_attention" : "gated_deltanet", g);
    }
    if (m->index_topk > 0) {
        json_t *d = json_object();
        json_object_set_new(d, "index_topk", json_integer(m->index_topk));
        json_object_set_new(d, "index_heads", json_integer(m->index_heads));
        json_object_set_new(d, "index_head_dim", json_integer(m->index_head_dim));
        json_object_set_new(o, "sparse_attention", d);
    }
}

/* Sinks, output gate, the dimensions, experts, MLA ranks, window and tying. */
static void show_json_shape(const model_spec *m, json_t *o)
{
    json_object_set_new(o, "attention_sinks", json_boolean(m->attn_sinks));
    json_object_set_new(o, "attention_output_gate", json_boolean(m->attn_out_gate));
    json_object_set_new(o, "qk_norm_per_layer", json_boolean(m->qk_norm_layer));
    json_object_set_new(o, "hidden", json_integer(m->hidden));
    json_object_set_new(o, "heads", json_integer(m->heads));
    json_object_set_new(o, "kv_heads", json_integer(m->kv_heads));
    json_object_set_new(o, "head_dim", json_integer(m->head_dim));
    json_object_set_new(o, "vocab", json_integer(m->vocab));
    json_object_set_new(o, "intermediate", json_integer(m->intermediate));
    json_t *e = json_object();
    json_object_set_new(e, "routed", json_integer(m->experts));
    json_object_set_new(e, "shared", json_integer(m->shared_experts));
    json_object_set_new(e, "top_k", json_integer(m->top_k));
    json_object_set_new(e, "intermediate", json_integer(m->expert_intermediate));
    json_object_set_new(o, "experts", e);
    if (m->kv_lora_rank > 0) {
        json_t *a = json_object();
        json_object_set_new(a, "q_lora_rank", json_integer(m->q_lora_rank));
        json_object_set_new(a, "kv_lora_rank", json_integer(m->kv_lora_rank));
        json_object_set_new(a, "rope_dim", json_integer(m->rope_dim));
        json_object_set_new(a, "nope_dim", json_integer(m->nope_dim));
        json_object_set_new(a, "v_head_dim", json_integer(m->v_head_dim));
        json_object_set_new(o, "mla", a);
    }
    if (m->sliding_window > 0) json_object_set_new(o, "sliding_window", json_integer(m->sliding_window));
    json_object_set_new(o, "tied_embeddings", json_boolean(m->tied_embeddings));
}

json_t *model_show_json(const model_spec *m)
{
    double by[MODEL_DTYPE_COUNT];
    double w = model_spec_weight_bytes(m, -1, by);
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(m->name));
    json_object_set_new(o, "total_params", json_real(m->params));
    json_object_set_new(o, "active_params", json_real(m->active_params));
    json_object_set_new(o, "weight_bytes", json_real(w));
    json_object_set_new(o, "weight_bytes_by_dtype", bytes_obj(by));
    json_object_set_new(o, "main_dtype", json_string(model_dtype_name((model_dtype)model_spec_main_dtype(m))));
    show_json_dtypes(m, o);
    json_object_set_new(o, "kv_bytes_per_token", json_real(model_spec_kv_bytes_per_token(m, 2.0)));
    show_json_layers(m, o);
    show_json_mixers(m, o);
    show_json_shape(m, o);
    json_object_set_new(o, "notes", notes_array(m));
    return o;
}

/* The layers line: FFN classes, then the mixers. */
static void show_text_layers(const model_spec *m, FILE *o, int32_t dense, int32_t full)
{
    fprintf(o, "  layers        %d:", m->layers);
    if (m->experts > 0 || m->ffnless_layers > 0) {
        fprintf(o, " %d dense MLP", dense);
        if (m->experts > 0) fprintf(o, " + %d MoE", m->moe_layers);
        if (m->ffnless_layers > 0) fprintf(o, " + %d without FFN", m->ffnless_layers);
        fprintf(o, ";");
    }
    if (m->comp_attn) {
        /* DeepSeek-V4: every layer attends its window; most add compressed KV. */
        fprintf(o, " %d compressed sparse (1 KV entry per %d tokens, top-%d by the indexer) + %d heavily compressed "
                   "(1 per %d tokens)", m->csa_layers, m->csa_ratio, m->index_topk, m->hca_layers, m->hca_ratio);
        if (m->sliding_layers > 0) fprintf(o, " + %d sliding window only", m->sliding_layers);
        fprintf(o, "; every layer also attends its last %d tokens", m->sliding_window);
    } else {
        fprintf(o, " %d full attention", full);
        if (m->index_topk > 0) fprintf(o, " (DeepSeek sparse: top-%d keys per query)", m->index_topk);
        if (m->sliding_layers > 0) fprintf(o, " + %d sliding window (%d tokens)", m->sliding_layers, m->sliding_window);
    }
    if (m->linear_layers > 0)
        fprintf(o, " + %d %s (linear)", m->linear_layers, m->lin_kda ? "Kimi Delta Attention" : "Gated DeltaNet");
    if (m->mamba_layers > 0) fprintf(o, " + %d Mamba-2", m->mamba_layers);
    if (m->mixerless_layers > 0) fprintf(o, " + %d without mixer", m->mixerless_layers);
    fprintf(o, "\n");
}

/* The attention, output projection, residual, indexer, linear and Mamba-2
 * lines. */
static void show_text_mixers(const model_spec *m, FILE *o)
{
    if (m->kv_lora_rank > 0)
        fprintf(o, "  attention     MLA: %d heads, q_lora_rank %d, kv_lora_rank %d, rope %d, nope %d, v %d\n", m->heads,
                m->q_lora_rank, m->kv_lora_rank, m->rope_dim, m->nope_dim, m->v_head_dim);
    else if (m->comp_attn)
        fprintf(o, "  attention     shared-KV MQA (K = V): %d heads, head_dim %d (rope %d), q_lora_rank %d\n", m->heads,
                m->head_dim, m->rope_dim, m->q_lora_rank);
    else
        fprintf(o, "  attention     %s: %d heads, %d KV heads, head_dim %d\n",
                m->kv_heads == m->heads ? "MHA" : m->kv_heads == 1 ? "MQA" : "GQA", m->heads, m->kv_heads,
                m->head_dim);
    if (m->o_groups > 0)
        fprintf(o, "  output proj   grouped low-rank: %d groups of %d heads, each to %d, then %d -> %d\n", m->o_groups,
                m->heads / m->o_groups, m->o_lora_rank, m->o_groups * m->o_lora_rank, m->hidden);
    if (m->hc_mult > 0)
        fprintf(o, "  residual      hyper-connections: %d streams of %d per token, mixed before and after each "
                   "attention and MoE block\n", m->hc_mult, m->hidden);
    if (m->attn_sinks || m->attn_out_gate)
        fprintf(o, "                %s%s%s\n", m->attn_sinks ? "attention sinks (per-head logits)" : "",
                m->attn_sinks && m->attn_out_gate ? ", " : "", m->attn_out_gate ? "gated attention output" : "");
    if (m->qk_norm_layer)
        fprintf(o, "                QK norm over all heads at once (its variance all-reduced across TP ranks)\n");
    if (m->index_topk > 0)
        fprintf(o, "  indexer       %d heads of %d, top-%d keys\n", m->index_heads, m->index_head_dim, m->index_topk);
    if (m->linear_layers > 0)
        fprintf(o, "  %s %d key heads x %d, %d value heads x %d, conv %d\n", m->lin_kda ? "KDA          " :
                "DeltaNet     ", m->lin_k_heads, m->lin_k_dim, m->lin_v_heads, m->lin_v_dim, m->lin_conv);
    if (m->mamba_layers > 0)
        fprintf(o, "  Mamba-2       %d heads x %d, %d groups, state %d, conv %d\n", m->mamba_heads, m->mamba_head_dim,
                m->mamba_groups, m->mamba_state, m->mamba_conv);
}

/* The dense MLP (by width class) and the experts. */
static void show_text_ffn(const model_spec *m, FILE *o, int32_t dense)
{
    const char *act = m->ffn_plain ? " (relu^2 up/down)" : "";
    if (dense > 0 && m->n_ffn_widths > 0) {
        fprintf(o, "  dense MLP     intermediate");
        for (int32_t k = 0; k < m->n_ffn_widths; k++) {
            int32_t n = ffn_width_layers(m, k);
            fprintf(o, "%s %d x %d", k ? "," : "", m->ffn_widths[k], n);
        }
        fprintf(o, "%s\n", act);
    } else if (dense > 0) {
        fprintf(o, "  dense MLP     intermediate %d%s\n", m->intermediate, act);
    }
    if (m->experts > 0) {
        fprintf(o, "  experts       %d routed, top-%d, intermediate %d; %d shared%s", m->experts, m->top_k,
                m->expert_intermediate, m->shared_experts, act);
        if (m->moe_latent > 0) fprintf(o, "; routed in latent %d", m->moe_latent);
        if (m->hash_layers > 0)
            fprintf(o, "; first %d MoE layers hash-routed (a token-id table picks the experts)", m->hash_layers);
        fprintf(o, "\n");
    }
}

/* Weights as loaded and their formats, the KV cache and per-sequence state. */
static void show_text_memory(const model_spec *m, FILE *o, int32_t dense, double w, const double *by)
{
    fprintf(o, "  weights       %.1f GB as loaded:", gb(w));
    int first = 1;
    for (int d = 0; d < MODEL_DTYPE_COUNT; d++)
        if (by[d] > 0) {
            fprintf(o, "%s %s %.1f GB", first ? "" : ",", model_dtype_name((model_dtype)d), gb(by[d]));
            first = 0;
        }
    fprintf(o, "\n  formats       attention %s", model_dtype_name((model_dtype)m->wdtype_attn));
    if (dense > 0) fprintf(o, ", dense MLP %s", model_dtype_name((model_dtype)m->wdtype_dense));
    if (m->experts > 0) fprintf(o, ", routed experts %s", model_dtype_name((model_dtype)m->wdtype_expert));
    if (m->shared_experts > 0) fprintf(o, ", shared experts %s", model_dtype_name((model_dtype)m->wdtype_shared));
    fprintf(o, "\n");
    double kv = model_spec_kv_bytes_per_token(m, 2.0);
    fprintf(o, "  KV cache      %.1f KB per token in bf16", kv / 1e3);
    if (m->index_topk > 0) fprintf(o, " (indexer keys included)");
    if (m->comp_attn)
        fprintf(o, ": %.0f B per compressed-sparse layer, %.0f B per heavily compressed one", model_spec_csa_kv_bytes(m, 2.0),
                model_spec_hca_kv_bytes(m, 2.0));
    fprintf(o, "\n");
    double st = model_spec_state_bytes_per_seq(m);
    if (st > 0) {
        fprintf(o, "  state         %.2f MB per sequence (", st / 1e6);
        if (m->linear_layers > 0)
            fprintf(o, "%s conv bf16 + recurrent fp32: %.2f MB/layer", m->lin_kda ? "KDA" : "DeltaNet",
                    model_spec_linear_state_bytes(m) / 1e6);
        if (m->linear_layers > 0 && m->mamba_layers > 0) fprintf(o, "; ");
        if (m->mamba_layers > 0)
            fprintf(o, "Mamba-2 conv bf16 + SSM %s: %.2f MB/layer", m->mamba_state_bytes == 4 ? "fp32" : "bf16",
                    model_spec_mamba_state_bytes(m) / 1e6);
        if (m->comp_attn)
            fprintf(o, "%ssliding-window K=V and pending compressor tokens, bf16", m->linear_layers + m->mamba_layers ?
                    "; " : "");
        fprintf(o, ")\n");
    }
}

void model_show_text(const model_spec *m, FILE *o)
{
    double by[MODEL_DTYPE_COUNT];
    double w = model_spec_weight_bytes(m, -1, by);
    int32_t dense = model_spec_dense_layers(m), full = model_spec_attention_layers(m) - m->sliding_layers;
    fprintf(o, "%s\n", m->name);
    show_text_layers(m, o, dense, full);
    show_text_mixers(m, o);
    fprintf(o, "  hidden        %d, vocab %d%s\n", m->hidden, m->vocab, m->tied_embeddings ? " (tied embedding)" : "");
    show_text_ffn(m, o, dense);
    fprintf(o, "  params        %.2f B total, %.2f B active per token\n", m->params / 1e9, m->active_params / 1e9);
    show_text_memory(m, o, dense, w, by);
    const char *p = m->notes;
    if (*p) fprintf(o, "  notes\n");
    while (*p) {
        const char *sep = strstr(p, "; ");
        size_t n = sep ? (size_t)(sep - p) : strlen(p);
        fprintf(o, "    - %.*s\n", (int)n, p);
        if (!sep) break;
        p = sep + 2;
    }
}

static int cmd_show(const char *name, int json)
{
    model_spec m;
    sim_err e = {""};
    if (model_catalog_model(name, &m, &e)) {
        fprintf(stderr, "servesim model show: %s\n", e.msg);
        return 2;
    }
    if (json) {
        json_t *o = model_show_json(&m);
        char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
        json_decref(o);
        if (!s) {
            fprintf(stderr, "servesim model show: out of memory\n");
            return 1;
        }
        printf("%s\n", s);
        free(s);
    } else {
        model_show_text(&m, stdout);
    }
    return 0;
}

static void list_one(const char *name, const char *kind, int json, json_t *arr)
{
    model_spec m;
    sim_err e = {""};
    int rc = model_catalog_model(name, &m, &e);
    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(name));
        json_object_set_new(o, "source", json_string(kind));
        if (rc) {
            json_object_set_new(o, "error", json_string(e.msg));
        } else {
            json_object_set_new(o, "total_params", json_real(m.params));
            json_object_set_new(o, "active_params", json_real(m.active_params));
            json_object_set_new(o, "weight_bytes", json_real(model_spec_weight_bytes(&m, -1, NULL)));
            json_object_set_new(o, "main_dtype",
                                json_string(model_dtype_name((model_dtype)model_spec_main_dtype(&m))));
        }
        json_array_append_new(arr, o);
        return;
    }
    if (rc)
        printf("%-52s %-9s error: %s\n", name, kind, e.msg);
    else
        printf("%-52s %-9s %8.1f %8.1f %9.1f  %s\n", name, kind, m.params / 1e9, m.active_params / 1e9,
               gb(model_spec_weight_bytes(&m, -1, NULL)), model_dtype_name((model_dtype)model_spec_main_dtype(&m)));
}

static int cmd_list(int json)
{
    const char *names[256];
    int n = model_catalog_model_names(names, 256);
    json_t *arr = json ? json_array() : NULL;
    if (!json)
        printf("%-52s %-9s %8s %8s %9s  %s\n", "model", "source", "params B", "active B", "weights GB", "format");
    for (int i = 0; i < n && i < 256; i++) list_one(names[i], "catalogue", json, arr);
    for (int i = 0; i < model_zoo_count(); i++) {
        char id[MODEL_NAME_MAX];
        model_zoo_id(i, id, sizeof id);
        list_one(id, "zoo", json, arr);
    }
    if (json) {
        char *s = json_dumps(arr, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
        json_decref(arr);
        if (!s) return 1;
        printf("%s\n", s);
        free(s);
    }
    return 0;
}

int model_cli_model(int argc, char **argv)
{
    int json = 0;
    const char *sub = NULL, *name = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            show_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "servesim model: unknown option '%s'\n", a);
            show_usage(stderr);
            return 2;
        } else if (!sub) {
            sub = a;
        } else if (!name) {
            name = a;
        } else {
            fprintf(stderr, "servesim model: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (sub && !strcmp(sub, "show")) {
        if (!name) {
            fprintf(stderr, "servesim model show: give a model (catalogue name, Hugging Face id or path)\n");
            return 2;
        }
        return cmd_show(name, json);
    }
    if (sub && !strcmp(sub, "list")) {
        if (name) {
            fprintf(stderr, "servesim model list: unexpected argument '%s'\n", name);
            return 2;
        }
        return cmd_list(json);
    }
    if (sub) fprintf(stderr, "servesim model: unknown subcommand '%s' (expected show or list)\n", sub);
    show_usage(stderr);
    return 2;
}
