/* model_op_table — see model_op_table.h. */
#include "model_op_table.h"

#include "model_catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_str(char *dst, size_t cap, const char *src) { snprintf(dst, cap, "%s", src ? src : ""); }

static const char *first_col(const calib_optable *t, const char *const *names)
{
    for (; *names; names++) {
        const char *v = calib_optable_get(t, *names);
        if (v) return v;
    }
    return NULL;
}

/* Geometry of a DSA model named by a table row, into cache. */
static void dsa_geometry(const char *name, model_op_geometry_cache *cache)
{
    if (!name) name = "";
    if (!strcmp(cache->model, name) && cache->model[0]) return;
    snprintf(cache->model, sizeof cache->model, "%s", name);
    memset(cache->f, 0, sizeof cache->f);
    cache->found = 0;
    model_spec m;
    sim_err e = {""};
    if (!*name || model_catalog_model(name, &m, &e) || m.kv_lora_rank <= 0 || m.index_topk <= 0) return;
    cache->found = 1;
    cache->f[MODEL_OPF_HIDDEN] = m.hidden;
    cache->f[MODEL_OPF_Q_LORA] = m.q_lora_rank;
    cache->f[MODEL_OPF_KV_LORA] = m.kv_lora_rank;
    cache->f[MODEL_OPF_ROPE] = m.rope_dim;
    cache->f[MODEL_OPF_NOPE] = m.nope_dim;
    cache->f[MODEL_OPF_V_HEAD] = m.v_head_dim;
    cache->f[MODEL_OPF_IDX_HEADS] = m.index_heads;
    cache->f[MODEL_OPF_IDX_DIM] = m.index_head_dim;
    cache->f[MODEL_OPF_IDX_TOPK] = m.index_topk;
}

int model_op_from_row(const calib_optable *t, model_op_query *q, double *measured_s, const char **why, sim_err *err)
{
    model_op_geometry_cache cache;
    memset(&cache, 0, sizeof cache);
    return model_op_from_row_cached(t, &cache, q, measured_s, why, err);
}

int model_op_from_row_cached(const calib_optable *t, model_op_geometry_cache *cache, model_op_query *q,
                             double *measured_s, const char **why, sim_err *err)
{
    memset(q, 0, sizeof *q);
    *measured_s = 0;
    const char *op = calib_optable_get(t, "op_name");
    const char *src = calib_optable_get(t, "kernel_source");
    if (!op) {
        return sim_err_set(err, SIM_EINVAL, "%s:%ld: no op_name column (expected the shared per-op table layout)",
                           calib_optable_path(t), calib_optable_line(t));
    }
    int kind = model_op_kind_from_op_name(op, src);
    if (kind < 0) {
        if (why) *why = "op not modelled";
        return 0;
    }
    q->kind = (model_op_kind)kind;
    q->table_timing = 1; /* a row is the table's eager timing of the op */
    for (int f = 0; f < MODEL_OPF_COUNT; f++) {
        const char *name = model_op_field_name((model_op_field)f);
        if (!calib_optable_has(t, name)) continue;
        int rc = calib_optable_double(t, name, &q->f[f], err);
        if (rc) return rc;
    }
    static const char *const dtype_cols[] = {"gemm_dtype", "moe_dtype", "bmm_dtype", "attn_dtype", "mla_dtype",
                                             "quant_dtype", "nccl_dtype", "allreduce_dtype", NULL};
    copy_str(q->dtype, sizeof q->dtype, first_col(t, dtype_cols));
    copy_str(q->kv_dtype, sizeof q->kv_dtype, calib_optable_get(t, "kv_cache_dtype"));
    copy_str(q->gemm_type, sizeof q->gemm_type, calib_optable_get(t, "gemm_type"));
    copy_str(q->phase, sizeof q->phase, calib_optable_get(t, "phase"));
    copy_str(q->distribution, sizeof q->distribution, calib_optable_get(t, "distribution"));
    /* MoE kernels: each kernel family (Triton, CUTLASS, TensorRT-LLM-gen,
     * Marlin's dequantising GEMMs) is a set of its own; non-gated experts
     * run up and down only. */
    if (q->kind == MODEL_OPK_MOE) copy_str(q->variant, sizeof q->variant, model_op_moe_kernel_of(src));
    if (q->kind == MODEL_OPK_MOE && model_op_name_has(src, "nongated")) copy_str(q->variant, sizeof q->variant, "nongated");
    /* Attention backends other than the engine's default are sets of their
     * own (SGLang's tables mix fa3 / trtllm_mha, Triton and FlashInfer rows). */
    if (q->kind == MODEL_OPK_CTX_ATTN || q->kind == MODEL_OPK_GEN_ATTN)
        copy_str(q->variant, sizeof q->variant, model_op_attn_kernel_of(src));
    /* So are vLLM's block-fp8 GEMM kernels other than DeepGEMM. */
    if (q->kind == MODEL_OPK_GEMM) copy_str(q->variant, sizeof q->variant, model_op_gemm_kernel_of(src));
    /* The routing load once per row, not once per pricing. */
    if (q->kind == MODEL_OPK_MOE) model_op_moe_load_fill(q);
    switch (q->kind) {
    case MODEL_OPK_NCCL:
    case MODEL_OPK_MLA_BMM:
    case MODEL_OPK_QUANT: copy_str(q->variant, sizeof q->variant, op); break;
    case MODEL_OPK_CUSTOM_AR:
        copy_str(q->variant, sizeof q->variant, model_op_name_has(src, "eager") ? "eager" : "graph");
        break;
    case MODEL_OPK_GDN:
        copy_str(q->variant, sizeof q->variant, model_op_name_has(src, "conv") ? "conv" : "delta");
        break;
    case MODEL_OPK_CTX_DSA_MODULE:
    case MODEL_OPK_GEN_DSA_MODULE:
        /* SGLang's dense MHA prefill of contexts within the top-k: no indexer. */
        copy_str(q->variant, sizeof q->variant,
                 model_op_name_has(src, "dense") ? "dense" : model_op_name_has(op, "skip_indexer") ? "skip_indexer" : "");
        dsa_geometry(calib_optable_get(t, "model"), cache);
        for (int f = MODEL_OPF_Q_LORA; f <= MODEL_OPF_IDX_TOPK; f++)
            if (q->f[f] == 0) q->f[f] = cache->f[f];
        if (q->f[MODEL_OPF_HIDDEN] == 0) q->f[MODEL_OPF_HIDDEN] = cache->f[MODEL_OPF_HIDDEN];
        break;
    default: break;
    }
    double lat = 0;
    if (calib_optable_has(t, "latency")) {
        int rc = calib_optable_double(t, "latency", &lat, err);
        if (rc) return rc;
    }
    *measured_s = lat > 0 ? lat * 1e-3 : 0;
    return 1;
}

const char *model_op_row_backend(const calib_optable *t, const model_op_query *q, const char *folder_backend)
{
    if (q->kind == MODEL_OPK_NCCL) return "nccl";
    if (folder_backend && *folder_backend) return folder_backend;
    const char *fw = calib_optable_get(t, "framework");
    if (!fw) return "";
    if (!strcasecmp(fw, "trtllm") || !strcasecmp(fw, "tensorrt-llm")) return "trtllm";
    if (!strcasecmp(fw, "vllm")) return "vllm";
    if (!strcasecmp(fw, "sglang")) return "sglang";
    return "";
}

static model_op_group *group_of(model_op_groups *gs, const char *variant, sim_err *err)
{
    for (size_t i = 0; i < gs->n; i++)
        if (!strcmp(gs->g[i].variant, variant)) return &gs->g[i];
    if (gs->n == gs->cap) {
        size_t cap = gs->cap ? gs->cap * 2 : 8;
        model_op_group *p = realloc(gs->g, cap * sizeof *p);
        if (!p) {
            sim_err_set(err, SIM_ENOMEM, "out of memory");
            return NULL;
        }
        gs->g = p;
        gs->cap = cap;
    }
    model_op_group *g = &gs->g[gs->n++];
    memset(g, 0, sizeof *g);
    copy_str(g->variant, sizeof g->variant, variant);
    return g;
}

int model_op_groups_read(const char *path, model_op_groups *out, sim_err *err)
{
    calib_optable *t = NULL;
    memset(out, 0, sizeof *out);
    int rc = calib_optable_open(path, &t, err);
    if (rc) return rc;
    model_op_geometry_cache cache;
    memset(&cache, 0, sizeof cache);
    for (;;) {
        rc = calib_optable_next(t, err);
        if (rc <= 0) break;
        model_op_query q;
        double ms;
        rc = model_op_from_row_cached(t, &cache, &q, &ms, NULL, err);
        if (rc < 0) break;
        if (rc == 0) {
            out->skipped_unmodelled++;
            continue;
        }
        if (!(ms > 0)) {
            out->skipped_zero++;
            continue;
        }
        char v[64];
        model_op_variant(&q, v, sizeof v);
        model_op_group *g = group_of(out, v, err);
        if (!g) {
            rc = SIM_ENOMEM;
            break;
        }
        if (g->n == g->cap) {
            size_t cap = g->cap ? g->cap * 2 : 1024;
            model_op_sample *p = realloc(g->s, cap * sizeof *p);
            if (!p) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory reading %s", path);
                break;
            }
            g->s = p;
            g->cap = cap;
        }
        g->s[g->n].q = q;
        g->s[g->n].t = ms;
        g->n++;
    }
    calib_optable_close(t);
    if (rc < 0) {
        model_op_groups_free(out);
        return rc;
    }
    return 0;
}

void model_op_groups_free(model_op_groups *gs)
{
    for (size_t i = 0; i < gs->n; i++) free(gs->g[i].s);
    free(gs->g);
    memset(gs, 0, sizeof *gs);
}
