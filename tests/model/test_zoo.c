/* test_zoo — the shipped Hugging Face configs (models/hf), the model
 * resolver (names, ids, variants, paths, suggestions), checkpoint
 * quantisation and `servesim model show`. */
#include "model_catalog.h"
#include "model_cost.h"
#include "model_layout.h"
#include "sim_pool_layout.h"
#include "sim_scenario.h"
#include "model_hf.h"
#include "model_dtype.h"
#include "model_resolve.h"
#include "model_show.h"
#include "model_spec.h"
#include "model_zoo.h"
#include "test_util.h"
#include "test_model_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char src_dir[1024];
static const char *servesim_bin;

/* Every shipped config loads (table-driven over the whole zoo) and gives a
 * sane model. */
static void test_every_config_loads(void)
{
    int n = model_zoo_count();
    CHECK_MSG(n == 86, "zoo has %d configs", n);
    int quant_files = 0;
    for (int i = 0; i < n; i++) {
        char id[MODEL_NAME_MAX];
        model_zoo_id(i, id, sizeof id);
        model_spec m;
        sim_err e = {""};
        int rc = model_catalog_model(id, &m, &e);
        CHECK_MSG(rc == 0, "%s: %s", id, e.msg);
        if (rc) continue;
        quant_files += model_zoo_has_quant(i);
        CHECK_MSG(!strcmp(m.name, id), "%s named '%s'", id, m.name);
        CHECK_MSG(m.params > 1e8 && m.params < 3e12 && m.active_params <= m.params && m.active_params > 1e8,
                  "%s params %.4g active %.4g", id, m.params, m.active_params);
        double w = model_spec_weight_bytes(&m, -1, NULL);
        CHECK_MSG(w > 0.25 * m.params && w <= 2.0 * m.params + 1, "%s weight bytes %.4g for %.4g params", id, w,
                  m.params);
        CHECK_MSG(model_spec_kv_bytes_per_token(&m, 2.0) > 0, "%s has no KV", id);
        /* The same config through the case-folded id and the file naming. */
        char lower[MODEL_NAME_MAX], stem[MODEL_NAME_MAX + 8];
        for (size_t k = 0; k <= strlen(id); k++) lower[k] = (char)(id[k] >= 'A' && id[k] <= 'Z' ? id[k] + 32 : id[k]);
        snprintf(stem, sizeof stem, "%s.json", model_zoo_stem(i));
        model_spec a, b;
        CHECK_MSG(model_catalog_model(lower, &a, &e) == 0 && a.params == m.params, "%s: %s", lower, e.msg);
        CHECK_MSG(model_catalog_model(stem, &b, &e) == 0 && b.params == m.params, "%s: %s", stem, e.msg);
    }
    CHECK_MSG(quant_files == 27, "%d hf_quant files among the configs", quant_files);
    CHECK(model_zoo_stem(n) == NULL && model_zoo_stem(-1) == NULL);
    char *t = NULL;
    size_t len = 0;
    sim_err e = {""};
    CHECK(model_zoo_read(n, 0, &t, &len, &e) == SIM_EINVAL && t == NULL);
}

/* The ids the measured deployments name resolve, through shipped data. */
static void test_measured_ids(void)
{
    static const struct {
        const char *id;
        const char *note; /* part of the notes, or NULL for an exact zoo entry */
    } ids[] = {
        {"MiniMaxAI/MiniMax-M2.5", NULL},
        {"deepseek-ai/DeepSeek-V3", NULL},
        {"Qwen/Qwen3.5-397B-A17B", NULL},
        {"nvidia/DeepSeek-R1-NVFP4", "architecture from deepseek-ai/DeepSeek-R1"},
        {"nvidia/DeepSeek-V3.1-NVFP4", NULL},
        {"nvidia/Qwen3-32B-NVFP4", "architecture from Qwen/Qwen3-32B"},
        {"Qwen/Qwen3-32B", NULL},
        {"Qwen/Qwen3-235B-A22B-FP8", NULL},
        {"meta-llama/Llama-3.1-8B-Instruct", "resolved to meta-llama/Meta-Llama-3.1-8B"},
        {"openai/gpt-oss-120b", NULL},
        {"deepseek-ai/DeepSeek-R1", NULL},
        {"meta-llama/Llama-3.1-70B", "resolved to meta-llama/Meta-Llama-3.1-70B"},
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        model_spec m;
        sim_err e = {""};
        int rc = model_catalog_model(ids[i].id, &m, &e);
        CHECK_MSG(rc == 0, "%s: %s", ids[i].id, e.msg);
        if (rc) continue;
        CHECK_MSG(!strcmp(m.name, ids[i].id), "%s named %s", ids[i].id, m.name);
        if (ids[i].note) CHECK_CONTAINS(m.notes, ids[i].note);
        if (ids[i].note) CHECK_CONTAINS(m.notes, "is not shipped");
    }
    model_spec m;
    sim_err e = {""};
    /* NVFP4 variant: the format applies to the quantisable parts. */
    CHECK(model_catalog_model("nvidia/Qwen3-32B-NVFP4", &m, &e) == 0);
    CHECK(m.wdtype_dense == MODEL_DTYPE_NVFP4 && m.wdtype_attn == MODEL_DTYPE_NVFP4);
    CHECK(model_spec_main_dtype(&m) == MODEL_DTYPE_NVFP4);
    /* A quantised variant takes a shipped sibling's quantisation: its
     * ModelOpt file, or its quantization_config (Qwen's block-128 fp8). */
    CHECK(model_catalog_model("nvidia/DeepSeek-R1-NVFP4", &m, &e) == 0 && m.wdtype_attn == MODEL_DTYPE_BF16 &&
          m.wdtype_expert == MODEL_DTYPE_NVFP4);
    CHECK_CONTAINS(m.notes, "from the shipped nvidia/DeepSeek-V3.1-NVFP4");
    CHECK(model_catalog_model("Qwen/Qwen3-8B-FP8", &m, &e) == 0 && m.wdtype_dense == MODEL_DTYPE_FP8_BLOCK);
    CHECK_CONTAINS(m.notes, "from the shipped Qwen/Qwen3-32B-FP8");
    /* A bare name unique in the zoo. */
    CHECK(model_catalog_model("Kimi-K2.5", &m, &e) == 0 && !strcmp(m.name, "moonshotai/Kimi-K2.5"));
    /* Catalogue names still win over zoo ids. */
    CHECK(model_catalog_model("deepseek-v3", &m, &e) == 0 && !strcmp(m.name, "deepseek-v3"));
}

static void test_unknown_and_paths(void)
{
    model_spec m;
    sim_err e = {""};
    CHECK(model_catalog_model("moonshotai/Kimi-K2.55", &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "unknown model 'moonshotai/Kimi-K2.55'");
    CHECK_CONTAINS(e.msg, "did you mean 'moonshotai/Kimi-K2.5'");
    CHECK(model_catalog_model("Qwen/Qwen3-23B", &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "'Qwen/Qwen3-32B'");
    CHECK(model_catalog_model("zzzzzzzzzzzzzzzzzzzzzzzz", &m, &e) == SIM_EINVAL);
    CHECK(strstr(e.msg, "did you mean") == NULL);
    CHECK_CONTAINS(e.msg, "path to a config.json");
    char nearest[512];
    model_resolve_suggest("gpt-oss-12b", 3, nearest, sizeof nearest);
    CHECK(strstr(nearest, "gpt-oss-120b") != NULL);

    /* A missing config: a clean message, no -1:-1 position. */
    CHECK(model_catalog_model("./nope.json", &m, &e) == SIM_EIO);
    CHECK_CONTAINS(e.msg, "./nope.json: cannot open the model config");
    CHECK(strstr(e.msg, "-1:-1") == NULL);
    CHECK(model_hf_load("/nonexistent/config.json", &m, &e) == SIM_EIO);
    CHECK_CONTAINS(e.msg, "cannot open");
    CHECK(strstr(e.msg, "-1") == NULL);
    /* A folder is not a config; a folder with config.json is. */
    CHECK(model_catalog_model("/tmp", &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "without config.json");
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/tests/data/models", src_dir);
    CHECK(model_catalog_model(dir, &m, &e) == SIM_EINVAL);
}


/* Checkpoint quantisation: formats per part and the weight bytes they give. */
static void test_checkpoint_quant(void)
{
    static const struct {
        const char *id;
        int attn, expert_or_dense;
        double gb_lo, gb_hi; /* weight bytes as loaded */
    } q[] = {
        /* fp8 with weight_block_size: an fp32 scale per 128×128 weight tile
         * (0.02 % of the bytes); 671B parameters, MTP module not counted. */
        {"deepseek-ai/DeepSeek-V3", MODEL_DTYPE_FP8_BLOCK, MODEL_DTYPE_FP8_BLOCK, 668, 680},
        /* mxfp4 experts, modules_to_not_convert keeps attention and router in bf16 (65 GB checkpoint). */
        {"openai/gpt-oss-120b", MODEL_DTYPE_BF16, MODEL_DTYPE_MXFP4, 63, 67},
        /* compressed-tensors int4 group 32 on the routed experts; ignore keeps attention, shared and dense MLP. */
        {"moonshotai/Kimi-K2.5", MODEL_DTYPE_BF16, MODEL_DTYPE_INT4, 585, 600},
        /* ModelOpt NVFP4 (hf_quant.json): attention projections excluded in every layer. */
        {"nvidia/DeepSeek-V3.1-NVFP4", MODEL_DTYPE_BF16, MODEL_DTYPE_NVFP4, 390, 405},
        /* ModelOpt FP8 per-tensor. */
        {"nvidia/Llama-3.1-70B-Instruct-FP8", MODEL_DTYPE_FP8, MODEL_DTYPE_FP8, 70, 75},
        {"Qwen/Qwen3-235B-A22B-FP8", MODEL_DTYPE_FP8_BLOCK, MODEL_DTYPE_FP8_BLOCK, 233, 241},
        {"Qwen/Qwen3-32B", MODEL_DTYPE_BF16, MODEL_DTYPE_BF16, 64, 67},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        model_spec m = test_model_spec(q[i].id);
        CHECK_MSG(m.wdtype_attn == q[i].attn, "%s attention %s", q[i].id, model_dtype_name((model_dtype)m.wdtype_attn));
        CHECK_MSG(model_spec_main_dtype(&m) == q[i].expert_or_dense, "%s main %s", q[i].id,
                  model_dtype_name((model_dtype)model_spec_main_dtype(&m)));
        double gb = model_spec_weight_bytes(&m, -1, NULL) / 1e9;
        CHECK_MSG(gb >= q[i].gb_lo && gb <= q[i].gb_hi, "%s weights %.1f GB", q[i].id, gb);
    }
    model_spec k = test_model_spec("moonshotai/Kimi-K2.5");
    CHECK(k.wdtype_shared == MODEL_DTYPE_BF16 && k.wdtype_dense == MODEL_DTYPE_BF16 && k.quant_group == 32);
    /* DeepSeek-V3 in bf16 (a scenario's dtype overriding) is 1.34 TB. */
    model_spec ds = test_model_spec("deepseek-ai/DeepSeek-V3");
    double by[MODEL_DTYPE_COUNT];
    CHECK_NEAR(model_spec_weight_bytes(&ds, MODEL_DTYPE_BF16, by) / 1e9, 1342, 5);
    model_spec_weight_bytes(&ds, -1, by);
    CHECK(by[MODEL_DTYPE_BF16] > 3e9 && by[MODEL_DTYPE_BF16] < 5e9); /* embedding, LM head, norms, routers */

    /* The cost model takes the checkpoint's formats when the layout says so:
     * DeepSeek-V3 fits 8 x H200 in its FP8 checkpoint, not in bf16. */
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    CHECK(sc.dtype == SIM_DTYPE_AUTO);
    model_layout l;
    sim_err e = {""};
    sc.deployment.pools[0].parallel.tp = 8;
    CHECK(sim_pool_layout(&sc, &sc.deployment.pools[0], &l, &e) == 0 && l.dtype_checkpoint == 1);
    model_gpu h200;
    CHECK(model_catalog_gpu("h200-sxm", &h200, &e) == 0);
    model_cost *c = NULL;
    CHECK_MSG(model_cost_create(&ds, &h200, &l, &c, &e) == 0, "%s", e.msg);
    if (c) {
        int64_t tokens = 0;
        CHECK_MSG(model_cost_kv_capacity_tokens(c, 0.9, 0, &tokens, &e) == 0 && tokens > 100000, "%s", e.msg);
        /* Per GPU: 1/8 of the sharded weights plus the replicated MLA down-projections. */
        CHECK_NEAR(model_cost_weight_bytes_per_gpu(c) * 8 / 1e9, 681, 10);
        CHECK(model_cost_layout(c)->dtype == MODEL_DTYPE_FP8_BLOCK);
        model_cost_destroy(c);
    }
    sc.dtype = SIM_DTYPE_BF16;
    CHECK(sim_pool_layout(&sc, &sc.deployment.pools[0], &l, &e) == 0 && l.dtype_checkpoint == 0);
    c = NULL;
    if (model_cost_create(&ds, &h200, &l, &c, &e) == 0) {
        int64_t tokens = 0;
        CHECK(model_cost_kv_capacity_tokens(c, 0.9, 0, &tokens, &e) == SIM_ERANGE);
        CHECK_CONTAINS(e.msg, "weights need");
        model_cost_destroy(c);
    }
    /* Naming the checkpoint's own format keeps its bf16 parts; another
     * format applies to every part. */
    model_dtype parts[MODEL_PART_COUNT];
    model_spec oss = test_model_spec("openai/gpt-oss-120b");
    model_part_dtypes(&oss, 0, MODEL_DTYPE_MXFP4, parts);
    CHECK(parts[MODEL_PART_ATTN] == MODEL_DTYPE_BF16 && parts[MODEL_PART_EXPERT] == MODEL_DTYPE_MXFP4);
    model_part_dtypes(&oss, 0, MODEL_DTYPE_FP8, parts);
    CHECK(parts[MODEL_PART_ATTN] == MODEL_DTYPE_FP8 && parts[MODEL_PART_EXPERT] == MODEL_DTYPE_FP8);
    model_part_dtypes(&oss, 1, MODEL_DTYPE_FP8, parts);
    CHECK(parts[MODEL_PART_ATTN] == MODEL_DTYPE_BF16 && parts[MODEL_PART_EXPERT] == MODEL_DTYPE_MXFP4);
    /* NVFP4 checkpoint on a GPU without FP4 tensor cores: refused with the reason. */
    model_spec nv = test_model_spec("nvidia/DeepSeek-V3.1-NVFP4");
    model_gpu h100;
    CHECK(model_catalog_gpu("h100-sxm", &h100, &e) == 0);
    l.dtype_checkpoint = 1;
    c = NULL;
    CHECK(model_cost_create(&nv, &h100, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "no FP4 tensor cores");
    model_cost_destroy(c);

    /* The measured tables' precision names map to the checkpoint's formats. */
    model_dtype d;
    CHECK(model_dtype_for_precision("fp4", MODEL_DTYPE_MXFP4, &d, &e) == 0 && d == MODEL_DTYPE_MXFP4);
    CHECK(model_dtype_for_precision("fp4", MODEL_DTYPE_FP8_BLOCK, &d, &e) == 0 && d == MODEL_DTYPE_NVFP4);
    CHECK(model_dtype_for_precision("fp8", MODEL_DTYPE_FP8_BLOCK, &d, &e) == 0 && d == MODEL_DTYPE_FP8_BLOCK);
    CHECK(model_dtype_for_precision("fp8", MODEL_DTYPE_BF16, &d, &e) == 0 && d == MODEL_DTYPE_FP8);
    CHECK(model_dtype_for_precision("", MODEL_DTYPE_INT4, &d, &e) == 0 && d == MODEL_DTYPE_INT4);
    CHECK(model_dtype_for_precision("bf16", MODEL_DTYPE_NVFP4, &d, &e) == 0 && d == MODEL_DTYPE_BF16);
    CHECK(model_dtype_for_precision("fp3", MODEL_DTYPE_BF16, &d, &e) == SIM_EINVAL);
    /* Weight-only formats: bf16 activations before Blackwell, mxfp4 native on it. */
    model_gpu b200;
    CHECK(model_catalog_gpu("b200", &b200, &e) == 0);
    CHECK(model_dtype_act_bytes(&h100, MODEL_DTYPE_MXFP4) == 2.0 && model_dtype_peak(&h100, MODEL_DTYPE_MXFP4) ==
                                                                         h100.flops_bf16);
    CHECK(model_dtype_act_bytes(&b200, MODEL_DTYPE_MXFP4) < 1.1 && model_dtype_peak(&b200, MODEL_DTYPE_MXFP4) ==
                                                                       b200.flops_fp8);
    CHECK(model_dtype_act_bytes(&b200, MODEL_DTYPE_INT4) == 2.0);
    CHECK_NEAR(model_dtype_bytes(MODEL_DTYPE_MXFP4), 0.53125, 1e-12);
    CHECK_NEAR(model_dtype_bytes(MODEL_DTYPE_INT4), 0.5625, 1e-12);
}

/* quantization_config forms, from inline configs. */
static void test_quant_configs(void)
{
    static const char *base = "{\"num_hidden_layers\": 4, \"hidden_size\": 256, \"num_attention_heads\": 4, "
                              "\"num_key_value_heads\": 2, \"intermediate_size\": 512, \"vocab_size\": 1000, "
                              "\"num_local_experts\": 8, \"num_experts_per_tok\": 2, ";
    char buf[2048];
    model_spec m;
    sim_err e = {""};
    snprintf(buf, sizeof buf, "%s\"quantization_config\": {\"quant_method\": \"fp8\"}}", base);
    CHECK(model_hf_parse(buf, "a.json", &m, &e) == 0 && m.wdtype_attn == MODEL_DTYPE_FP8 &&
          m.wdtype_expert == MODEL_DTYPE_FP8);
    /* A regex ignore list keeps the attention in bf16. */
    snprintf(buf, sizeof buf,
             "%s\"quantization_config\": {\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"g\": "
             "{\"weights\": {\"num_bits\": 4, \"type\": \"int\", \"group_size\": 128}}}, \"ignore\": "
             "[\"lm_head\", \"re:.*self_attn.*\"]}}",
             base);
    CHECK(model_hf_parse(buf, "b.json", &m, &e) == 0 && m.wdtype_attn == MODEL_DTYPE_BF16 &&
          m.wdtype_expert == MODEL_DTYPE_INT4 && m.quant_group == 128);
    CHECK_CONTAINS(m.notes, "group size 128");
    /* Per-layer exclusions in fewer than half the layers are noted, not applied. */
    snprintf(buf, sizeof buf,
             "%s\"quantization_config\": {\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\", "
             "\"exclude_modules\": [\"model.layers.0.self_attn*\"]}}",
             base);
    CHECK(model_hf_parse(buf, "c.json", &m, &e) == 0 && m.wdtype_attn == MODEL_DTYPE_NVFP4);
    CHECK_CONTAINS(m.notes, "attention left unquantised in 1 of 4 layers");
    /* An hf_quant.json wins over the config. */
    snprintf(buf, sizeof buf, "%s\"quantization_config\": {\"quant_method\": \"fp8\"}}", base);
    CHECK(model_hf_parse_quant(buf, "{\"quantization\": {\"quant_algo\": \"MXFP8\", \"exclude_modules\": "
                                    "[\"lm_head\"]}}",
                               "d.json", &m, &e) == 0 &&
          m.wdtype_expert == MODEL_DTYPE_MXFP8);
    /* Methods servesim does not model are noted, weights stay bf16. */
    snprintf(buf, sizeof buf, "%s\"quantization_config\": {\"quant_method\": \"bitsandbytes\"}}", base);
    CHECK(model_hf_parse(buf, "e.json", &m, &e) == 0 && m.wdtype_expert == MODEL_DTYPE_BF16);
    CHECK_CONTAINS(m.notes, "'bitsandbytes' not modelled");
    /* Malformed ones name the key. */
    snprintf(buf, sizeof buf, "%s\"quantization_config\": [1]}", base);
    CHECK(model_hf_parse(buf, "f.json", &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "f.json: key 'quantization_config' must be a mapping");
    snprintf(buf, sizeof buf, "%s\"quantization_config\": {\"quant_method\": \"fp8\", \"ignored_layers\": 3}}", base);
    CHECK(model_hf_parse(buf, "g.json", &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "'ignored_layers' must be a list");
    CHECK(model_hf_parse_quant(buf, "{\"quantization\": {}}", "h.json", &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "quant_algo' missing");
}

/* Published totals and active parameters (within 3 %; active 0 = not
 * published in a form to compare). Active counts embedding and LM head as
 * servesim does (Nemotron-3 Nano's card: 3.6 B "including embeddings");
 * gpt-oss's card counts neither the embedding (0.58 B), so it is compared
 * without it. */
static void test_published_params(void)
{
    static const struct {
        const char *id;
        double total, active;
        int minus_embedding;
    } ref[] = {
        {"deepseek-ai/DeepSeek-V3", 671e9, 37e9, 0},  {"Qwen/Qwen3-235B-A22B", 235e9, 22e9, 0},
        {"Qwen/Qwen3.5-397B-A17B", 397e9, 17e9, 0},   {"openai/gpt-oss-120b", 116.8e9, 5.13e9, 1},
        {"moonshotai/Kimi-K2.5", 1.03e12, 32e9, 0},   {"zai-org/GLM-5", 744e9, 40e9, 0},
        {"XiaomiMiMo/MiMo-V2-Flash", 309e9, 15e9, 0}, {"MiniMaxAI/MiniMax-M2.5", 229e9, 10e9, 0},
        {"nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31.6e9, 3.6e9, 0},
        {"nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 120e9, 0, 0},
        {"nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", 550e9, 55e9, 0},
        {"nvidia/Nemotron-H-56B-Base-8K", 56e9, 56e9, 0},
        {"nvidia/Llama-3_3-Nemotron-Super-49B-v1", 49.9e9, 49.9e9, 0},
        /* ~428 B / ~23 B on the card (vision tower included in the total). */
        {"MiniMaxAI/MiniMax-M3", 428e9, 23e9, 1},
    };
    for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++) {
        model_spec m = test_model_spec(ref[i].id);
        double active = m.active_params - (ref[i].minus_embedding ? (double)m.vocab * m.hidden : 0);
        CHECK_MSG(fabs(m.params / ref[i].total - 1) < 0.03, "%s total %.4g vs %.4g", ref[i].id, m.params,
                  ref[i].total);
        /* MiniMax-M2.5, MiMo and GLM-5 publish rounded active counts (10B, 15B, 40B). */
        double tol = ref[i].total == 229e9 || ref[i].total == 309e9 || ref[i].total == 744e9 || ref[i].total == 428e9
                         ? 0.12
                         : 0.03;
        if (ref[i].active > 0)
            CHECK_MSG(fabs(active / ref[i].active - 1) < tol, "%s active %.4g vs %.4g", ref[i].id, active,
                      ref[i].active);
    }
}

/* Layer kinds as the configs describe them. */
static void test_architectures(void)
{
    /* Qwen3.5: Gated DeltaNet with a full-attention layer every 4th. */
    model_spec q = test_model_spec("Qwen/Qwen3.5-397B-A17B");
    CHECK(q.linear_layers == 45 && q.layers == 60 && q.lin_v_heads == 64 && q.lin_k_heads == 16 && q.attn_out_gate);
    CHECK(q.shared_experts == 1 && q.experts == 512 && q.top_k == 10 && q.moe_layers == 60);
    int full = 0;
    for (int32_t i = 0; i < q.layers; i++) full += !model_spec_layer_is_linear(&q, i);
    CHECK(full == 15 && !model_spec_layer_is_linear(&q, 3) && model_spec_layer_is_linear(&q, 0));
    /* KV only for the 15 attention layers: 2 KV heads x 256 x K,V x bf16. */
    CHECK_NEAR(model_spec_kv_bytes_per_token(&q, 2.0), 15 * 2 * 2 * 256 * 2.0, 1e-6);
    /* State: 45 layers x (64 value heads x 128 x 128 fp32 + conv). */
    double st = model_spec_state_bytes_per_seq(&q);
    CHECK(st > 45 * 64 * 128 * 128 * 4.0 && st < 45 * 64 * 128 * 128 * 4.0 * 1.05);
    /* DeepSeek sparse attention: indexer and top-k; its fp8 key adds to the KV. */
    model_spec d = test_model_spec("deepseek-ai/DeepSeek-V3.2"), v3 = test_model_spec("deepseek-ai/DeepSeek-V3");
    CHECK(d.index_topk == 2048 && d.index_heads == 64 && d.index_head_dim == 128 && d.kv_lora_rank == 512);
    CHECK_NEAR(model_spec_kv_bytes_per_token(&d, 2.0) - model_spec_kv_bytes_per_token(&v3, 2.0),
               61 * 128 * (1 + 4.0 / 128), 1e-6);
    model_spec g5 = test_model_spec("zai-org/GLM-5");
    CHECK(g5.index_topk == 2048 && g5.first_dense_layers == 3 && g5.moe_layers == 75);
    /* gpt-oss: alternating sliding/full layers with attention sinks. */
    model_spec o = test_model_spec("openai/gpt-oss-120b");
    CHECK(o.sliding_layers == 18 && o.sliding_window == 128 && o.attn_sinks);
    /* MoE with shared experts, first-k dense layers. */
    CHECK(v3.first_dense_layers == 3 && v3.shared_experts == 1 && v3.moe_layers == 58);
    /* MiniMax-M2: GQA MoE, 256 experts top-8, no shared expert. */
    model_spec mm = test_model_spec("MiniMaxAI/MiniMax-M2.5");
    CHECK(mm.experts == 256 && mm.top_k == 8 && mm.shared_experts == 0 && mm.kv_heads == 8 && mm.layers == 62);
    /* Per-layer MoE list (MiniMax-M3: moe_layer_freq), its dense layers' own width. */
    model_spec m3 = test_model_spec("MiniMaxAI/MiniMax-M3");
    CHECK(m3.moe_layers == 57 && m3.intermediate == 12288 && m3.expert_intermediate == 3072);
    /* The NVFP4 export gives the experts' width only as intermediate_size
     * (beside dense_intermediate_size): the same 426 B model, not 12288-wide
     * experts (1.7 T). */
    model_spec m3q = test_model_spec("nvidia/MiniMax-M3-NVFP4");
    CHECK_MSG(m3q.params == m3.params && m3q.expert_intermediate == 3072 && m3q.shared_experts == 1,
              "MiniMax-M3-NVFP4 %.4g params, experts %d wide", m3q.params, m3q.expert_intermediate);
    CHECK_CONTAINS(m3.notes, "sparse_attention_config not modelled");
    /* Catalogue YAML files state the checkpoint's formats too and agree
     * with the shipped configs. */
    static const char *const pairs[][2] = {{"deepseek-v3", "deepseek-ai/DeepSeek-V3"},
                                           {"gpt-oss-120b", "openai/gpt-oss-120b"}};
    for (int i = 0; i < 2; i++) {
        model_spec y = test_model_spec(pairs[i][0]), h = test_model_spec(pairs[i][1]);
        CHECK_MSG(y.wdtype_attn == h.wdtype_attn && y.wdtype_expert == h.wdtype_expert &&
                      (y.moe_layers == y.layers || y.wdtype_dense == h.wdtype_dense) && y.attn_sinks == h.attn_sinks,
                  "%s formats differ from %s", pairs[i][0], pairs[i][1]);
        CHECK_NEAR(model_spec_weight_bytes(&y, -1, NULL), model_spec_weight_bytes(&h, -1, NULL), 1);
    }
    {
        char path[] = "/tmp/servesim-zoo-arch-XXXXXX.yaml";
        int fd = mkstemps(path, 5);
        CHECK(fd >= 0);
        if (fd >= 0) {
            const char *y = "layers: 2\nhidden: 64\nheads: 4\nvocab: 10\nintermediate: 8\nweights:\n  all: fp9\n";
            CHECK(write(fd, y, strlen(y)) == (ssize_t)strlen(y));
            close(fd);
            model_spec m;
            sim_err e = {""};
            CHECK(model_catalog_model(path, &m, &e) == SIM_EINVAL);
            CHECK_CONTAINS(e.msg, "weights.all");
            CHECK_CONTAINS(e.msg, "unknown dtype 'fp9'");
            unlink(path);
        }
    }
    /* Vision towers are noted with what prices them (model_vision.h). */
    model_spec k = test_model_spec("moonshotai/Kimi-K2.5");
    CHECK_CONTAINS(k.notes, "vision tower kimi_k25: 27 layers x 1152");

    /* Nemotron-H: one block per letter (23 Mamba-2, 6 attention, 23 MoE),
     * relu² experts, shared expert of twice the width. */
    model_spec nh = test_model_spec("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
    CHECK(nh.layers == 52 && nh.mamba_layers == 23 && model_spec_attention_layers(&nh) == 6 && nh.moe_layers == 23);
    CHECK(nh.mixerless_layers == 23 && nh.ffnless_layers == 29 && nh.ffn_plain && nh.shared_experts == 2);
    CHECK(model_spec_layer_mixer(&nh, 0) == MODEL_MIX_MAMBA && model_spec_layer_ffn(&nh, 1) == MODEL_FFN_MOE &&
          model_spec_layer_mixer(&nh, 5) == MODEL_MIX_ATTN && model_spec_layer_ffn(&nh, 5) == MODEL_FFN_NONE);
    /* KV for the 6 attention layers only: 2 KV heads x 128 x K,V x bf16. */
    CHECK_NEAR(model_spec_kv_bytes_per_token(&nh, 2.0), 6 * 2 * 2 * 128 * 2.0, 1e-6);
    /* State per Mamba layer: conv over x,B,C (4096 + 2*8*128 channels, 3
     * steps, bf16) + SSM state 64 heads x 64 x 128 in fp32. */
    CHECK_NEAR(model_spec_state_bytes_per_seq(&nh), 23 * ((4096 + 2048) * 3 * 2.0 + 4096 * 128 * 4.0), 1e-3);
    /* Nemotron-H 56B: dense relu² MLP blocks, SSM state in bf16 (no cache dtype). */
    model_spec h56 = test_model_spec("nvidia/Nemotron-H-56B-Base-8K");
    CHECK(h56.experts == 0 && h56.mamba_layers == 54 && model_spec_dense_layers(&h56) == 54 &&
          h56.mamba_state_bytes == 2 && h56.head_dim == 128);
    /* Latent MoE: experts in 1024 wide, hidden -> latent -> hidden. */
    model_spec sup = test_model_spec("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8");
    CHECK(sup.moe_latent == 1024 && sup.experts == 512 && sup.top_k == 22 && sup.layers == 88);
    model_spec ult = test_model_spec("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16");
    CHECK(ult.layers == 108 && ult.mamba_layers == 48 && ult.moe_latent == 2048); /* depth from layers_block_type */
    /* Nemotron-NAS: 31 blocks without attention, 6 FFN widths from ffn_mult
     * (5.25 x 8192 -> 28672), 8 KV heads from n_heads_in_group 8. */
    model_spec nas = test_model_spec("nvidia/Llama-3_3-Nemotron-Super-49B-v1");
    CHECK(nas.mixerless_layers == 31 && nas.ffnless_layers == 0 && nas.n_ffn_widths == 6 && nas.kv_heads == 8);
    CHECK(nas.intermediate == 28672 && model_spec_layer_inter(&nas, 0) == 14336 && model_spec_layer_inter(&nas, 1) == 28672);
    CHECK_NEAR(model_spec_kv_bytes_per_token(&nas, 2.0), 49 * 2 * 8 * 128 * 2.0, 1e-6);
    CHECK_CONTAINS(nas.notes, "Nemotron-NAS blocks: 49 attention, 31 without attention");
    /* Kimi linear attention: 69 KDA layers beside 24 gated MLA layers;
     * latent MoE experts; MXFP4 (group-32 FP4) experts. */
    model_spec k3 = test_model_spec("moonshotai/Kimi-K3");
    CHECK(k3.linear_layers == 69 && k3.lin_kda && k3.lin_v_heads == 96 && k3.lin_k_dim == 128 && k3.kv_lora_rank == 512);
    CHECK(k3.moe_latent == 3584 && k3.attn_out_gate && model_spec_layer_mixer(&k3, 3) == MODEL_MIX_ATTN &&
          model_spec_layer_mixer(&k3, 92) == MODEL_MIX_ATTN && model_spec_layer_ffn(&k3, 0) == MODEL_FFN_DENSE);
    CHECK(k3.wdtype_expert == MODEL_DTYPE_MXFP4 && k3.wdtype_attn == MODEL_DTYPE_BF16);
    CHECK_NEAR(model_spec_kv_bytes_per_token(&k3, 2.0), 24 * (512 + 64) * 2.0, 1e-6);
}

/* Gated DeltaNet and DSA layers price their own ops. */
static void test_layer_ops(void)
{
    sim_err e = {""};
    model_gpu b200;
    CHECK(model_catalog_gpu("b200", &b200, &e) == 0);
    model_layout l;
    memset(&l, 0, sizeof l);
    l.tp = 8;
    l.pp = 1;
    l.dtype_checkpoint = 1;
    model_op ops[128];
    int32_t n = 0;
    model_chunk ch = {4096, 0};
    model_batch pre = {1, &ch, 0, 0, 0}, dec = {0, NULL, 64, 64 * 20000, 0};

    model_spec q = test_model_spec("Qwen/Qwen3.5-397B-A17B");
    model_cost *c = NULL;
    CHECK_MSG(model_cost_create(&q, &b200, &l, &c, &e) == 0, "%s", e.msg);
    if (c) {
        int seen = 0;
        model_cost_breakdown(c, &dec, ops, 128, &n, NULL);
        for (int32_t i = 0; i < n && i < 128; i++) {
            if (!strcmp(ops[i].name, "gdn_decode")) {
                seen |= 1;
                CHECK(ops[i].count == 45 && ops[i].time_s > 0 && ops[i].cls == MODEL_OPC_ATTN);
                /* Memory bound: the fp32 state read and written once per step. */
                CHECK(ops[i].bound == MODEL_BOUND_MEMORY);
                CHECK(ops[i].bytes >= 45 * 64 * 2.0 * (64 / 8) * 128 * 128 * 4.0);
            }
            if (!strcmp(ops[i].name, "attn_decode")) {
                seen |= 2;
                CHECK(ops[i].count == 15);
            }
            if (!strcmp(ops[i].name, "gdn_in_proj") || !strcmp(ops[i].name, "gdn_out_proj")) seen |= 4;
            if (!strcmp(ops[i].name, "qkv_proj")) CHECK(ops[i].count == 15);
        }
        CHECK_MSG(seen == 7, "seen %d", seen);
        model_cost_breakdown(c, &pre, ops, 128, &n, NULL);
        int prefill = 0;
        for (int32_t i = 0; i < n && i < 128; i++) prefill |= !strcmp(ops[i].name, "gdn_prefill");
        CHECK(prefill);
        /* No KV for the linear layers; their state is per sequence. */
        CHECK_NEAR(model_cost_kv_bytes_per_token(c), 15 * 2 * 2 * 256 * 2.0 * 4, 1e-6); /* 2 KV heads on 8 ranks */
        CHECK_NEAR(model_cost_state_bytes_per_seq(c), model_spec_state_bytes_per_seq(&q) / 8, 1e-3);
        model_cost_destroy(c);
    }

    /* Nemotron-H with latent MoE: Mamba-2 layers price their scan, the
     * MoE blocks project into the latent width, only the 8 attention
     * layers attend; mixer-only blocks reduce their own output. */
    model_spec sup = test_model_spec("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8");
    c = NULL;
    l.tp = 4;
    CHECK_MSG(model_cost_create(&sup, &b200, &l, &c, &e) == 0, "%s", e.msg);
    if (c) {
        int seen = 0;
        double disp = 0;
        model_cost_breakdown(c, &dec, ops, 128, &n, NULL);
        for (int32_t i = 0; i < n && i < 128; i++) {
            if (!strcmp(ops[i].name, "mamba_ssd_decode")) {
                seen |= 1;
                /* Memory bound: 32 heads per rank x 64 x 128 fp32 read and written. */
                CHECK(ops[i].count == 40 && ops[i].bound == MODEL_BOUND_MEMORY);
                CHECK(ops[i].bytes >= 40 * 64 * 2.0 * 32 * 64 * 128 * 4.0);
            }
            if (!strcmp(ops[i].name, "attn_decode")) {
                seen |= 2;
                CHECK(ops[i].count == 8);
            }
            if (!strcmp(ops[i].name, "moe_latent_down") || !strcmp(ops[i].name, "moe_latent_up")) seen |= 4;
            if (!strcmp(ops[i].name, "experts_up")) {
                seen |= 8;
                CHECK_CONTAINS(ops[i].detail, "k=1024"); /* experts read latent rows */
                CHECK(ops[i].count == 40);
            }
            if (!strcmp(ops[i].name, "input_norm")) CHECK(ops[i].count == 48);
            if (!strcmp(ops[i].name, "post_norm")) CHECK(ops[i].count == 40);
            if (!strcmp(ops[i].name, "tp_reduce_attn")) {
                seen |= 16;
                CHECK(ops[i].count == 48);
            }
            if (!strcmp(ops[i].name, "qkv_proj")) CHECK(ops[i].count == 8);
            disp += !strcmp(ops[i].name, "experts_gate_up");
        }
        CHECK_MSG(seen == 31 && disp == 0, "seen %d", seen);
        model_cost_breakdown(c, &pre, ops, 128, &n, NULL);
        int prefill = 0;
        for (int32_t i = 0; i < n && i < 128; i++) prefill |= !strcmp(ops[i].name, "mamba_ssd_prefill");
        CHECK(prefill);
        CHECK_NEAR(model_cost_kv_bytes_per_token(c), 8 * 2 * 2 * 128 * 2.0 * 2, 1e-6); /* 2 KV heads on 4 ranks */
        CHECK_NEAR(model_cost_state_bytes_per_seq(c), model_spec_state_bytes_per_seq(&sup) / 4, 1e-3);
        /* Weights per GPU: the whole FP8 checkpoint over 4 ranks, give or
         * take the replicated norms, routers and latent projections. */
        double wg = model_cost_weight_bytes_per_gpu(c), wall = model_spec_weight_bytes(&sup, -1, NULL);
        CHECK_MSG(wg > wall / 4 && wg < wall / 4 * 1.05, "%g of %g", wg, wall);
        model_cost_destroy(c);
    }
    /* tp must divide the Mamba heads and divide or be a multiple of the groups. */
    model_spec odd = sup;
    odd.mamba_groups = 3;
    l.tp = 4;
    CHECK(model_cost_create(&odd, &b200, &l, &c, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "Mamba-2 heads");
    /* Nemotron-NAS: one dense MLP op set per FFN width class, attention in
     * the 49 attending blocks only. */
    model_spec nas = test_model_spec("nvidia/Llama-3_3-Nemotron-Super-49B-v1");
    l.tp = 8;
    c = NULL;
    CHECK_MSG(model_cost_create(&nas, &b200, &l, &c, &e) == 0, "%s", e.msg);
    if (c) {
        double layers = 0, flops = 0;
        int classes = 0;
        model_cost_breakdown(c, &pre, ops, 128, &n, NULL);
        for (int32_t i = 0; i < n && i < 128; i++) {
            if (!strcmp(ops[i].name, "gate_up_proj")) {
                classes++;
                layers += ops[i].count;
                flops += ops[i].flops;
            }
            if (!strcmp(ops[i].name, "qkv_proj") || !strcmp(ops[i].name, "attn_prefill")) CHECK(ops[i].count == 49);
            if (!strcmp(ops[i].name, "tp_reduce_attn")) CHECK(ops[i].count == 49);
        }
        CHECK(classes == 6 && layers == 80);
        /* Σ widths: 2 x 4096 tokens x 8192 x (2 x Σ intermediate / 8). */
        CHECK_NEAR(flops, 2.0 * 4096 * 8192 * 2.0 * 1642496 / 8, 1e3);
        CHECK_NEAR(model_cost_weight_bytes_per_gpu(c) * 8, model_spec_weight_bytes(&nas, -1, NULL),
                   0.02 * model_spec_weight_bytes(&nas, -1, NULL));
        model_cost_destroy(c);
    }
    /* Kimi linear attention: KDA layers through the delta-rule ops beside MLA. */
    model_spec k3 = test_model_spec("moonshotai/Kimi-K3");
    c = NULL;
    CHECK_MSG(model_cost_create(&k3, &b200, &l, &c, &e) == 0, "%s", e.msg);
    if (c) {
        int seen = 0;
        model_cost_breakdown(c, &dec, ops, 128, &n, NULL);
        for (int32_t i = 0; i < n && i < 128; i++) {
            if (!strcmp(ops[i].name, "gdn_decode")) {
                seen |= 1;
                CHECK(ops[i].count == 69);
            }
            if (!strcmp(ops[i].name, "attn_decode")) {
                seen |= 2;
                CHECK(ops[i].count == 24);
            }
            if (!strcmp(ops[i].name, "moe_latent_down")) seen |= 4;
        }
        CHECK_MSG(seen == 7, "seen %d", seen);
        model_cost_destroy(c);
    }
    l.tp = 8;

    model_spec d = test_model_spec("deepseek-ai/DeepSeek-V3.2");
    c = NULL;
    CHECK_MSG(model_cost_create(&d, &b200, &l, &c, &e) == 0, "%s", e.msg);
    /* The same model without the sparse selection, for comparison. */
    model_spec dense = d;
    dense.index_topk = 0;
    model_cost *cd = NULL;
    CHECK(model_cost_create(&dense, &b200, &l, &cd, &e) == 0);
    if (c && cd) {
        int seen = 0;
        double attn_sparse = 0, attn_dense = 0;
        model_cost_breakdown(c, &dec, ops, 128, &n, NULL);
        for (int32_t i = 0; i < n && i < 128; i++) {
            if (!strcmp(ops[i].name, "dsa_indexer_decode")) {
                seen |= 1;
                CHECK(ops[i].count == 61);
            }
            if (!strcmp(ops[i].name, "dsa_topk_decode")) seen |= 2;
            if (!strcmp(ops[i].name, "dsa_index_q")) seen |= 4;
            if (!strcmp(ops[i].name, "attn_decode_dsa")) {
                seen |= 8;
                attn_sparse = ops[i].bytes;
            }
        }
        CHECK_MSG(seen == 15, "seen %d", seen);
        model_cost_breakdown(cd, &dec, ops, 128, &n, NULL);
        for (int32_t i = 0; i < n && i < 128; i++)
            if (!strcmp(ops[i].name, "attn_decode")) attn_dense = ops[i].bytes;
        /* At 20k context the sparse attention reads ~2048 of 20000 keys. */
        CHECK_MSG(attn_sparse > 0 && attn_sparse < 0.2 * attn_dense, "%g vs %g", attn_sparse, attn_dense);
        model_cost_breakdown(c, &pre, ops, 128, &n, NULL);
        int prefill = 0;
        for (int32_t i = 0; i < n && i < 128; i++)
            prefill |= !strcmp(ops[i].name, "dsa_indexer_prefill") || !strcmp(ops[i].name, "attn_prefill_dsa");
        CHECK(prefill);
    }
    model_cost_destroy(c);
    model_cost_destroy(cd);

    /* With an engine named, the sparse attention and the indexer are priced
     * by the DSA modules' fitted set, in each model's own geometry
     * (DeepSeek-V3.2, GLM-5), and the sparse attention still stops growing
     * past index_topk keys. */
    static const char *const dsa_models[] = {"deepseek-ai/DeepSeek-V3.2", "zai-org/GLM-5"};
    for (int k = 0; k < 2; k++) {
        model_spec dm = test_model_spec(dsa_models[k]);
        model_layout lo = l;
        snprintf(lo.op_backend, sizeof lo.op_backend, "trtllm");
        c = NULL;
        CHECK_MSG(model_cost_create(&dm, &b200, &lo, &c, &e) == 0, "%s", e.msg);
        if (!c) continue;
        double att[2] = {0, 0};
        int seen = 0;
        for (int j = 0; j < 2; j++) {
            model_batch db = {0, NULL, 64, 64 * (int64_t)(j ? 60000 : 20000), 0};
            model_cost_breakdown(c, &db, ops, 128, &n, NULL);
            for (int32_t i = 0; i < n && i < 128; i++) {
                if (!strcmp(ops[i].name, "attn_decode_dsa")) {
                    seen |= ops[i].source == MODEL_SRC_OP_MODEL;
                    att[j] = ops[i].time_s;
                }
                if (!strcmp(ops[i].name, "dsa_indexer_decode")) seen |= (ops[i].source == MODEL_SRC_OP_MODEL) << 1;
            }
        }
        CHECK_MSG(seen == 3, "%s: seen %d", dsa_models[k], seen);
        CHECK_MSG(att[0] > 0 && fabs(att[1] / att[0] - 1) < 1e-9, "%s: %g vs %g", dsa_models[k], att[1], att[0]);
        model_cost_breakdown(c, &pre, ops, 128, &n, NULL);
        int pre_seen = 0;
        for (int32_t i = 0; i < n && i < 128; i++)
            if (!strcmp(ops[i].name, "attn_prefill_dsa") || !strcmp(ops[i].name, "dsa_indexer_prefill"))
                pre_seen += ops[i].source == MODEL_SRC_OP_MODEL;
        CHECK_MSG(pre_seen == 2, "%s: prefill %d", dsa_models[k], pre_seen);
        model_cost_destroy(c);
    }
}

/* Precise messages for impossible configs (and absurd sizes). */
static void test_config_messages(void)
{
    static const struct {
        const char *json, *want;
    } bad[] = {
        {"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 0, "
         "\"vocab_size\": 10, \"intermediate_size\": 8}",
         "x.json: key 'num_key_value_heads' must be >= 1, got 0"},
        {"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 6, \"num_key_value_heads\": 4, "
         "\"vocab_size\": 10, \"intermediate_size\": 8}",
         "key 'num_attention_heads' = 6 is not a multiple of 'num_key_value_heads' = 4"},
        {"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 0, \"vocab_size\": 10, "
         "\"intermediate_size\": 8}",
         "key 'num_attention_heads' must be >= 1, got 0"},
        {"{\"num_hidden_layers\": 0, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8}",
         "key 'num_hidden_layers' must be >= 1, got 0"},
        {"{\"num_hidden_layers\": 1e12, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8}",
         "key 'num_hidden_layers' = 1e+12 is out of range (at most 67108864"},
        {"{\"num_hidden_layers\": 1000000000000, \"hidden_size\": 64, \"num_attention_heads\": 4, "
         "\"vocab_size\": 10, \"intermediate_size\": 8}",
         "key 'num_hidden_layers' = 1e+12 is out of range"},
        {"{\"num_hidden_layers\": 200000, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8}",
         "layers = 200000 is out of range (at most 100000)"},
        {"{\"num_hidden_layers\": 2, \"hidden_size\": 60, \"num_attention_heads\": 8, \"vocab_size\": 10, "
         "\"intermediate_size\": 8}",
         "key 'head_dim' missing and 'hidden_size' = 60 is not a multiple of 'num_attention_heads' = 8"},
        {"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"head_dim\": 0, "
         "\"vocab_size\": 10, \"intermediate_size\": 8}",
         "key 'head_dim' must be >= 1, got 0"},
        {"{\"num_hidden_layers\": 2.5, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10}",
         "key 'num_hidden_layers' must be a whole number, got 2.5"},
        {"{\"num_hidden_layers\": 4, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8, \"linear_num_value_heads\": 4, \"linear_num_key_heads\": 2, "
         "\"linear_key_head_dim\": 8, \"linear_value_head_dim\": 8}",
         "neither 'layer_types' nor 'full_attention_interval'"},
        {"{\"num_hidden_layers\": 4, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8, \"sliding_window\": 8, \"q_lora_rank\": 8, \"num_key_value_heads\": 1, "
         "\"compress_ratios\": [4]}",
         "key 'compress_ratios' has 1 entries for 4 layers (expected 4, or one more for the MTP layer)"},
        {"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8, \"q_lora_rank\": 8, \"num_key_value_heads\": 1, \"compress_ratios\": [0, 4]}",
         "key 'compress_ratios' needs 'sliding_window'"},
        {"{\"num_hidden_layers\": 3, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8, \"sliding_window\": 8, \"q_lora_rank\": 8, \"num_key_value_heads\": 1, "
         "\"index_topk\": 4, \"index_n_heads\": 2, \"index_head_dim\": 8, \"compress_ratios\": [4, 16, 64]}",
         "key 'compress_ratios[2]' = 64: a third compression ratio (after 4 and 16) is not modelled"},
        {"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8, \"sliding_window\": 8, \"q_lora_rank\": 8, \"num_key_value_heads\": 1, "
         "\"compress_ratios\": [0, \"4\"]}",
         "key 'compress_ratios[1]' must be a ratio >= 0"},
        {"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8, \"sliding_window\": 8, \"num_key_value_heads\": 1, \"compress_ratios\": [0, 8]}",
         "key 'q_lora_rank' missing"},
        {"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8, \"sliding_window\": 8, \"q_lora_rank\": 8, \"num_key_value_heads\": 1, "
         "\"o_groups\": 3, \"o_lora_rank\": 8, \"compress_ratios\": [0, 8]}",
         "key 'o_groups' = 3 does not divide 'num_attention_heads' = 4"},
        {"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 10, "
         "\"intermediate_size\": 8, \"sliding_window\": 8, \"q_lora_rank\": 8, \"num_key_value_heads\": 2, "
         "\"compress_ratios\": [0, 8]}",
         "compressed attention shares one K=V head (got 2 KV heads)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        model_spec m;
        sim_err e = {""};
        int rc = model_hf_parse(bad[i].json, "x.json", &m, &e);
        CHECK_MSG(rc < 0, "case %zu accepted", i);
        CHECK_CONTAINS(e.msg, bad[i].want);
    }
    /* Infinity (Python's json) is read, not a JSON error. */
    model_spec m;
    sim_err e = {""};
    CHECK_MSG(model_hf_parse("{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
                             "\"vocab_size\": 10, \"intermediate_size\": 8, \"time_step_limit\": [0.0, Infinity], "
                             "\"s\": \"Infinity\"}",
                             "y.json", &m, &e) == 0,
              "%s", e.msg);
}

/* `servesim model show` as text and JSON. */
static void test_model_show(void)
{
    model_spec m = test_model_spec("Qwen/Qwen3.5-397B-A17B");
    json_t *o = model_show_json(&m);
    CHECK(json_is_object(o));
    CHECK_NEAR(json_real_value(json_object_get(o, "total_params")), m.params, 1);
    CHECK(json_real_value(json_object_get(o, "active_params")) > 1.6e10);
    CHECK(json_real_value(json_object_get(o, "weight_bytes")) > 7.8e11);
    CHECK(json_real_value(json_object_get(o, "kv_bytes_per_token")) == 15 * 2 * 2 * 256 * 2.0);
    CHECK(json_real_value(json_object_get(o, "state_bytes_per_seq")) > 1.8e8);
    json_t *layers = json_object_get(o, "layers");
    CHECK(json_integer_value(json_object_get(layers, "linear_attention")) == 45);
    CHECK(json_integer_value(json_object_get(layers, "full_attention")) == 15);
    CHECK(json_integer_value(json_object_get(json_object_get(o, "experts"), "routed")) == 512);
    CHECK(json_array_size(json_object_get(o, "notes")) >= 1);
    json_decref(o);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    model_spec k = test_model_spec("moonshotai/Kimi-K2.5");
    model_show_text(&k, f);
    fclose(f);
    CHECK_CONTAINS(buf, "routed experts int4");
    CHECK_CONTAINS(buf, "MLA: 64 heads");
    CHECK_CONTAINS(buf, "vision tower kimi_k25");
    free(buf);
    /* The CLI: exit codes and JSON. */
    char cmd[2400], tmp[] = "/tmp/servesim-zoo-XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    snprintf(cmd, sizeof cmd, "%s model show deepseek-ai/DeepSeek-V3 --json > %s", servesim_bin, tmp);
    int st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char *out = test_slurp(tmp);
    json_error_t je;
    json_t *j = out ? json_loads(out, 0, &je) : NULL;
    CHECK(j && json_real_value(json_object_get(j, "weight_bytes")) > 6.68e11 &&
          json_real_value(json_object_get(j, "weight_bytes")) < 6.8e11);
    CHECK(j && !strcmp(json_string_value(json_object_get(j, "main_dtype")), "fp8_block"));
    json_decref(j);
    free(out);
    snprintf(cmd, sizeof cmd, "%s model show no/such-model 2>%s", servesim_bin, tmp);
    st = system(cmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    out = test_slurp(tmp);
    CHECK_CONTAINS(out, "unknown model 'no/such-model'");
    free(out);
    unlink(tmp);
}

static const test_case cases[] = {
    {"every_config_loads", test_every_config_loads},
    {"measured_ids", test_measured_ids},
    {"unknown_and_paths", test_unknown_and_paths},
    {"checkpoint_quant", test_checkpoint_quant},
    {"quant_configs", test_quant_configs},
    {"published_params", test_published_params},
    {"architectures", test_architectures},
    {"layer_ops", test_layer_ops},
    {"config_messages", test_config_messages},
    {"model_show", test_model_show},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    servesim_bin = argc > 1 ? argv[1] : "servesim";
    snprintf(src_dir, sizeof src_dir, "%s", test_src_dir());
    return test_run("test_zoo", cases);
}
