/* test_models — GPU/model catalogues and the Hugging Face loader. */
#include "model_catalog.h"
#include "model_hf.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char src_dir[1024];

static void hf_path(char *buf, size_t n, const char *file)
{
    snprintf(buf, n, "%s/tests/data/models/%s", src_dir, file);
}

static void test_gpus(void)
{
    const char *names[32];
    int n = model_catalog_gpu_names(names, 32);
    CHECK(n == 17); /* the measured seven and ten priced from datasheets (test_gpu_caps) */
    CHECK(model_catalog_gpu_names(names, 2) == n);
    static const char *want[] = {"a100-sxm-80g", "h100-sxm", "h200-sxm", "b200", "gb200", "b300", "gb300"};
    for (int i = 0; i < 7; i++) {
        model_gpu g;
        sim_err e = {""};
        int rc = model_catalog_gpu(want[i], &g, &e);
        CHECK_MSG(rc == 0, "%s: %s", want[i], e.msg);
        if (rc) continue;
        CHECK(!strcmp(g.name, want[i]));
        CHECK(g.flops_bf16 > 1e14 && g.hbm_bytes > 7e10 && g.hbm_bw > 1e12 && g.sms >= 108);
        CHECK(g.eff_gemm > 0.5 && g.eff_gemm < 0.9 && g.eff_mem > 0.7 && g.eff_mem <= 0.95);
        CHECK(g.launch_s > 1e-6 && g.launch_s < 1e-5);
        CHECK(g.nvlink_bw >= 3e11 && g.nic_bw > 0 && g.comm_base_s > 0 && g.nvlink_step_s > 0 && g.eff_nic > 0.5);
    }
    /* Case-insensitive, units converted. */
    model_gpu h;
    sim_err e = {""};
    CHECK(model_catalog_gpu("H100-SXM", &h, &e) == 0);
    CHECK_NEAR(h.flops_bf16, 989.4e12, 1e9);
    CHECK_NEAR(h.flops_fp8, 1979e12, 1e9);
    CHECK_NEAR(h.hbm_bw, 3.35e12, 1e6);
    CHECK_NEAR(h.nvlink_bw, 450e9, 1);
    CHECK_NEAR(h.l2_bytes, 50e6, 1);
    CHECK_NEAR(h.smem_per_sm, 228e3, 1);
    CHECK_NEAR(h.hbm_bytes, 79.6 * 1073741824.0, 1e6);
    CHECK(!strcmp(h.arch, "hopper") && h.cc == 9.0);
    model_gpu a;
    CHECK(model_catalog_gpu("a100-sxm-80g", &a, &e) == 0 && a.flops_fp8 == 0);
    /* Unknown names list the catalogue and suggest the closest. */
    CHECK(model_catalog_gpu("h100-sx", &h, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "unknown GPU 'h100-sx'");
    CHECK_CONTAINS(e.msg, "did you mean 'h100-sxm'");
    CHECK_CONTAINS(e.msg, "b300");
    CHECK(model_catalog_gpu("zzzzzzzzzz", &h, &e) == SIM_EINVAL);
    CHECK(strstr(e.msg, "did you mean") == NULL);
    CHECK_CONTAINS(e.msg, "a100-sxm-80g");
}

typedef struct {
    const char *name, *hf;
    double params, active;
} model_ref;

/* Published totals; active counts embedding + LM head (see gpt-oss note). */
static const model_ref refs[] = {
    {"llama-3.1-8b", "meta-llama--Meta-Llama-3.1-8B.json", 8.03e9, 8.03e9},
    {"llama-3.1-70b", "meta-llama--Meta-Llama-3.1-70B.json", 70.6e9, 70.6e9},
    {"llama-3.1-405b", "meta-llama--Meta-Llama-3.1-405B.json", 405.9e9, 405.9e9},
    {"qwen3-32b", "Qwen--Qwen3-32B.json", 32.8e9, 32.8e9},
    {"mixtral-8x7b", "mistralai--Mixtral-8x7B-v0.1.json", 46.7e9, 12.9e9},
    {"deepseek-v3", "deepseek-ai--DeepSeek-V3.json", 671e9, 37e9},
    {"qwen3-235b-a22b", "Qwen--Qwen3-235B-A22B.json", 235e9, 22.2e9},
    {"gpt-oss-120b", "openai--gpt-oss-120b.json", 116.8e9, 5.13e9 + 0.58e9},
};

static void test_models(void)
{
    const char *names[32];
    int n = model_catalog_model_names(names, 32);
    CHECK(n >= 8);
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        model_spec y, j;
        sim_err e = {""};
        char path[2048];
        int rc = model_catalog_model(refs[i].name, &y, &e);
        CHECK_MSG(rc == 0, "%s: %s", refs[i].name, e.msg);
        hf_path(path, sizeof path, refs[i].hf);
        int rc2 = model_catalog_model(path, &j, &e);
        CHECK_MSG(rc2 == 0, "%s: %s", path, e.msg);
        if (rc || rc2) continue;
        CHECK_MSG(fabs(y.params / refs[i].params - 1) < 0.02, "%s params %.4g vs %.4g", refs[i].name, y.params,
                  refs[i].params);
        CHECK_MSG(fabs(y.active_params / refs[i].active - 1) < 0.02, "%s active %.4g vs %.4g", refs[i].name,
                  y.active_params, refs[i].active);
        /* The catalogue YAML and the HF config describe the same model. */
        CHECK_MSG(y.params == j.params && y.active_params == j.active_params, "%s yaml %.6g/%.6g hf %.6g/%.6g",
                  refs[i].name, y.params, y.active_params, j.params, j.active_params);
        CHECK(y.layers == j.layers && y.head_dim == j.head_dim && y.kv_heads == j.kv_heads &&
              y.experts == j.experts && y.moe_layers == j.moe_layers && y.sliding_layers == j.sliding_layers);
    }
    model_spec m;
    sim_err e = {""};
    CHECK(model_catalog_model("QWEN3-32B", &m, &e) == 0 && m.head_dim == 128 && !strcmp(m.name, "qwen3-32b"));
    CHECK(model_catalog_model("DeepSeek-V3", &m, &e) == 0);
    CHECK(m.kv_lora_rank == 512 && m.rope_dim == 64 && m.first_dense_layers == 3 && m.moe_layers == 58);
    CHECK(model_catalog_model("gpt-oss-120b", &m, &e) == 0 && m.sliding_layers == 18 && m.sliding_window == 128);
    CHECK(model_catalog_model("llama-3-8b", &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "unknown model 'llama-3-8b'");
    CHECK_CONTAINS(e.msg, "did you mean 'llama-3.1-8b'");

    /* Every shipped HF config loads; the extra ones are sane. */
    static const char *all[] = {"Qwen--Qwen3-30B-A3B-FP8.json", "Qwen--Qwen3-32B-FP8.json",
                                "deepseek-ai--DeepSeek-R1.json"};
    static const double all_params[] = {30.5e9, 32.8e9, 671e9};
    for (int i = 0; i < 3; i++) {
        char path[2048];
        hf_path(path, sizeof path, all[i]);
        int rc = model_catalog_model(path, &m, &e);
        CHECK_MSG(rc == 0, "%s", e.msg);
        if (!rc) CHECK_MSG(fabs(m.params / all_params[i] - 1) < 0.02, "%s %.4g", all[i], m.params);
    }
    CHECK(!strcmp(m.name, "deepseek-ai--DeepSeek-R1"));

    /* A catalogue YAML given as a path. */
    char ypath[2048];
    snprintf(ypath, sizeof ypath, "%s/models/archs/llama-3.1-8b.yaml", src_dir);
    CHECK(model_catalog_model(ypath, &m, &e) == 0 && m.layers == 32);
}

static void test_hf_errors(void)
{
    model_spec m;
    sim_err e = {""};
    CHECK(model_hf_parse("{\"hidden_size\": 4096, \"num_attention_heads\": 32, \"vocab_size\": 1000}", "x.json",
                         &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "x.json");
    CHECK_CONTAINS(e.msg, "'num_hidden_layers' missing");
    CHECK(model_hf_parse("{\"num_hidden_layers\": 2, \"hidden_size\": \"big\", \"num_attention_heads\": 32, "
                         "\"vocab_size\": 1000}",
                         "y.json", &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "y.json: key 'hidden_size' must be a non-negative integer");
    CHECK(model_hf_parse("{\"num_hidden_layers\": 2,", "z.json", &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "z.json:");
    /* MoE without top-k. */
    CHECK(model_hf_parse("{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
                         "\"vocab_size\": 100, \"intermediate_size\": 128, \"num_local_experts\": 8}",
                         "moe.json", &m, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "'num_experts_per_tok' missing");
    /* head_dim defaults to hidden/heads; tied embeddings counted once. */
    CHECK(model_hf_parse("{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
                         "\"vocab_size\": 100, \"intermediate_size\": 128, \"tie_word_embeddings\": true}",
                         "dir/tiny/config.json", &m, &e) == 0);
    CHECK(m.head_dim == 16 && m.kv_heads == 4 && !strcmp(m.name, "tiny"));
    /* attn 4·64·64 + norms 128 + ffn 3·64·128 per layer; embed 6400; final norm 64. */
    CHECK_NEAR(m.params, 6400 + 64 + 2 * (4 * 64 * 64 + 128 + 3 * 64 * 128), 0.5);
    CHECK(model_catalog_model("/nonexistent/config.json", &m, &e) == SIM_EIO);
    CHECK_CONTAINS(e.msg, "/nonexistent/config.json");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    REQUIRE_MSG(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void test_env_catalog(void)
{
    char dir[] = "/tmp/servesim-catalog-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char p[512];
    snprintf(p, sizeof p, "%s/gpus", dir);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/archs", dir);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/gpus/My-GPU.yaml", dir);
    write_file(p, "arch: hopper\ncc: 9.0\ntflops:\n  fp32: 60\n  bf16: 900\nhbm_gb: 96\nhbm_tbps: 4\n"
                  "sms: 132\nnvlink_gbps: 450\nnic_gbps: 50\nefficiency:\n  gemm: 0.7\n  attn: 0.5\n  mem: 0.8\n"
                  "  nvlink: 0.9\n  launch_us: 4\n");
    snprintf(p, sizeof p, "%s/gpus/h100-sxm.yaml", dir); /* shadows the embedded one */
    write_file(p, "arch: hopper\ncc: 9.0\ntflops:\n  fp32: 60\n  bf16: 123\nhbm_gb: 80\nhbm_tbps: 3\n"
                  "sms: 132\nnvlink_gbps: 450\nnic_gbps: 50\nefficiency:\n  gemm: 0.7\n  attn: 0.5\n  mem: 0.8\n"
                  "  nvlink: 0.9\n  launch_us: 4\n");
    snprintf(p, sizeof p, "%s/gpus/bad.yaml", dir);
    write_file(p, "arch: hopper\ncc: 9.0\ntflops:\n  bf16: 900\n  fp33: 1\n");
    snprintf(p, sizeof p, "%s/archs/tiny.yaml", dir);
    write_file(p, "layers: 2\nhidden: 64\nheads: 4\nvocab: 100\nintermediate: 128\n");
    setenv("SERVESIM_CATALOG", dir, 1);

    model_gpu g;
    model_spec m;
    sim_err e = {""};
    CHECK(model_catalog_gpu("my-gpu", &g, &e) == 0);
    CHECK_NEAR(g.hbm_bytes, 96e9, 1);
    CHECK_NEAR(g.eff_gemm_fp8, 0.7, 1e-12); /* defaults to eff_gemm */
    CHECK(model_catalog_gpu("H100-sxm", &g, &e) == 0);
    CHECK_NEAR(g.flops_bf16, 123e12, 1);
    CHECK(model_catalog_gpu("bad", &g, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "bad.yaml:5:3: unknown key 'tflops.fp33'");
    CHECK(model_catalog_model("TINY", &m, &e) == 0 && m.layers == 2 && !strcmp(m.name, "tiny"));
    CHECK(model_catalog_gpu("nope", &g, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "My-GPU"); /* user files are listed too */
    unsetenv("SERVESIM_CATALOG");
    CHECK(model_catalog_gpu("h100-sxm", &g, &e) == 0);
    CHECK_NEAR(g.flops_bf16, 989.4e12, 1e9);
    static const char *files[] = {"gpus/My-GPU.yaml", "gpus/h100-sxm.yaml", "gpus/bad.yaml", "archs/tiny.yaml",
                                  "gpus", "archs", ""};
    for (int i = 0; i < 7; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        CHECK(remove(p) == 0);
    }
}

static const test_case cases[] = {
    {"gpus", test_gpus},
    {"models", test_models},
    {"hf_errors", test_hf_errors},
    {"env_catalog", test_env_catalog},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    snprintf(src_dir, sizeof src_dir, "%s", test_src_dir());
    return test_run("test_models", cases);
}
