/* test_zoo — the shipped Hugging Face configs (models/hf), the model
 * resolver (names, ids, variants, paths, suggestions), checkpoint
 * quantisation and `servesim model show`. */
#include "model_catalog.h"
#include "model_hf.h"
#include "model_quant.h"
#include "model_resolve.h"
#include "model_show.h"
#include "model_spec.h"
#include "model_zoo.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char src_dir[1024];
static const char *servesim_bin;

/* Architectures not modelled yet: they must fail with a message naming the
 * file (README "Model zoo" lists them). */
static const char *const not_yet[] = {
    "MiniMaxAI/MiniMax-M3", "XiaomiMiMo/MiMo-V2-Flash", "google/gemma-4-26B-A4B", "moonshotai/Kimi-K3",
    "nvidia/Gemma-4-26B-A4B-NVFP4", "nvidia/Llama-3_3-Nemotron-Super-49B-v1", "nvidia/MiniMax-M3-NVFP4",
    "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4",
    "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8",
    "nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-NVFP4", "nvidia/Nemotron-H-56B-Base-8K", NULL};

static int is_not_yet(const char *id)
{
    for (int k = 0; not_yet[k]; k++)
        if (!strcmp(not_yet[k], id)) return 1;
    return 0;
}

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
        if (is_not_yet(id)) {
            CHECK_MSG(rc != 0, "%s now loads: move it out of not_yet", id);
            CHECK_CONTAINS(e.msg, model_zoo_stem(i));
            continue;
        }
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
    CHECK_MSG(quant_files == 21, "%d hf_quant files among the loading configs", quant_files);
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

int main(int argc, char **argv)
{
    servesim_bin = argc > 1 ? argv[1] : "servesim";
    snprintf(src_dir, sizeof src_dir, "%s", argc > 2 ? argv[2] : "..");
    test_every_config_loads();
    test_measured_ids();
    test_unknown_and_paths();
    return test_finish("test_zoo");
}
