/* test_mem_rule — the engines' memory budgets (sim/cluster/sim_mem_rule.h): vLLM's
 * fraction of all memory, TensorRT-LLM's fraction of what the weights
 * leave, SGLang's mem_fraction_static from its reservation formula, checked
 * by hand on the DeepSeek-V3 FP8 TP4 B200 layout of the measured rows,
 * weights held beside the model's (a vision tower) kept out of the KV under
 * each rule, and an unknown rule refused. */
#include "test_util.h"

#include "sim_mem_rule.h"
#include "model_catalog.h"
#include "model_cost.h"

#include <math.h>
#include <string.h>

static model_cost *make(const char *model, const char *gpu, int32_t tp)
{
    model_spec m;
    model_gpu g;
    sim_err e = {""};
    if (model_catalog_model(model, &m, &e) || model_catalog_gpu(gpu, &g, &e)) {
        CHECK_MSG(0, "%s", e.msg);
        return NULL;
    }
    model_layout l;
    memset(&l, 0, sizeof l);
    l.tp = tp;
    l.pp = 1;
    l.dtype_checkpoint = 1;
    model_cost *c = NULL;
    CHECK_MSG(model_cost_create(&m, &g, &l, &c, &e) == 0, "%s", e.msg);
    return c;
}

/* DeepSeek-V3 FP8 at TP4 on B200 (made by main), and the scheduler each
 * case starts from: 64 sequences, 8192-token chunks. */
static model_cost *cost;

static sim_sched_cfg sched(sim_mem_fraction_of rule)
{
    sim_sched_cfg s;
    memset(&s, 0, sizeof s);
    s.max_seqs = 64;
    s.chunk_tokens = 8192;
    s.mem_fraction_of = rule;
    return s;
}

/* total: as given. */
static void case_total(void)
{
    sim_sched_cfg s = sched(SIM_MEM_OF_TOTAL);
    sim_err e = {""};
    double util = 0.9, res = 2e9;
    CHECK(sim_mem_rule_apply(&s, cost, 0, &util, &res, &e) == 0 && util == 0.9 && res == 2e9);
}

/* free: 0.9 of what the weights and reserve leave holds the KV. */
static void case_free(void)
{
    model_cost *c = cost;
    const double hbm = model_cost_gpu(c)->hbm_bytes, w = model_cost_weight_bytes_per_gpu(c);
    const double kvt = model_cost_kv_bytes_per_token(c) / 4; /* per GPU */
    sim_sched_cfg s = sched(SIM_MEM_OF_FREE);
    sim_err e = {""};
    double util = 0.9, res = 2e9;
    CHECK(sim_mem_rule_apply(&s, c, 0, &util, &res, &e) == 0);
    CHECK_NEAR(hbm * util - w - res, 0.9 * (hbm - w - 2e9), 1.0);
    int64_t tok = 0;
    CHECK_MSG(model_cost_kv_capacity_tokens(c, util, res, &tok, &e) == 0, "%s", e.msg);
    CHECK_NEAR((double)tok, 0.9 * (hbm - w - 2e9) / kvt, 0.02 * tok + 16);
}

/* sglang: (M − R)/M with M the GPU's MiB, R = 512 + 1.5·8192 + 2·64 +
 * 1024·4/8 MiB; its reservation replaces reserve_gb, the state stays. */
static void case_sglang(void)
{
    model_cost *c = cost;
    const double hbm = model_cost_gpu(c)->hbm_bytes;
    sim_sched_cfg s = sched(SIM_MEM_OF_SGLANG);
    sim_err e = {""};
    double util = 0.9, res = 2e9 + 5e6;
    CHECK(sim_mem_rule_apply(&s, c, 5e6, &util, &res, &e) == 0);
    double M = hbm / (1024.0 * 1024.0), R = 512 + 1.5 * 8192 + 2 * 64 + 1024.0 * 4 / 8;
    CHECK_NEAR(util, (M - R) / M, 1e-12);
    CHECK(res == 5e6);
    /* On B200 (179 GiB) that is 0.928: DeepSeek-V3's 169 GB of FP8 weights
     * per GPU at TP4 leave ~9 GB of KV, where 0.90 and a 2 GB reserve leave ~3. */
    CHECK_MSG(util > 0.92 && util < 0.935, "%g", util);
    int64_t tok_sg = 0, tok_90 = 0;
    CHECK(model_cost_kv_capacity_tokens(c, util, res, &tok_sg, &e) == 0);
    CHECK(model_cost_kv_capacity_tokens(c, 0.9, 2e9, &tok_90, &e) == 0);
    CHECK_MSG(tok_sg > 2.5 * tok_90, "%lld vs %lld tokens", (long long)tok_sg, (long long)tok_90);
    /* A chunk under 2048 tokens reserves as 2048; the CUDA-graph batch stops at 512. */
    s.chunk_tokens = 512, s.max_seqs = 4096;
    util = 0.9;
    CHECK(sim_mem_rule_apply(&s, c, 0, &util, &res, &e) == 0);
    CHECK_NEAR(util, (M - (512 + 1.5 * 2048 + 2 * 512 + 512.0)) / M, 1e-12);
}

/* Weights held beside the model's (a vision tower, 1.147 GB for
 * Qwen3-VL-8B's): every rule keeps them out of the KV, as weights, on
 * Qwen3-VL-8B at tp1 on an H100 (147,456 KV bytes a token): total and
 * sglang lose exactly them, free 0.9 of them. */
static void case_held(void)
{
    model_cost *c = make("Qwen/Qwen3-VL-8B-Instruct", "h100-sxm", 1);
    REQUIRE(c != NULL);
    const double held = 1146544128.0, kvt = model_cost_kv_bytes_per_token(c);
    CHECK(kvt == 36.0 * 8 * 128 * 2 * 2);
    const sim_mem_fraction_of rules[3] = {SIM_MEM_OF_TOTAL, SIM_MEM_OF_FREE, SIM_MEM_OF_SGLANG};
    const double share[3] = {1.0, 0.9, 1.0};
    for (int i = 0; i < 3; i++) {
        sim_sched_cfg s = sched(rules[i]);
        s.gpu_mem_util = 0.9;
        s.reserve_gb = 2;
        sim_err e = {""};
        int64_t t0 = 0, t1 = 0;
        CHECK_MSG(sim_mem_rule_kv_tokens(&s, c, 0, &t0, &e) == 0, "%s", e.msg);
        CHECK_MSG(sim_mem_rule_kv_tokens(&s, c, held, &t1, &e) == 0, "%s", e.msg);
        const double want = share[i] * held / kvt; /* 7,775.5 tokens (free: 6,998) */
        CHECK_MSG(fabs((double)(t0 - t1) - want) <= 1.0, "rule %d: %lld tokens fewer, by hand %.1f", (int)rules[i],
                  (long long)(t0 - t1), want);
    }
    model_cost_destroy(c);
}

/* A rule outside the enum (a config built in code; the loader refuses
 * unknown names) is refused. */
static void case_unknown(void)
{
    sim_sched_cfg s = sched((sim_mem_fraction_of)7);
    sim_err e = {""};
    double util = 0.9, res = 2e9;
    CHECK(sim_mem_rule_apply(&s, cost, 0, &util, &res, &e) == SIM_EINVAL);
    CHECK_CONTAINS(e.msg, "unknown rule 7");
}

static const test_case cases[] = {
    {"total", case_total},
    {"free", case_free},
    {"sglang", case_sglang},
    {"held", case_held},
    {"unknown", case_unknown},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    cost = make("deepseek-ai/DeepSeek-V3", "b200", 4);
    REQUIRE_OR(cost != NULL, return test_finish("test_mem_rule"));
    int rc = test_run("test_mem_rule", cases);
    model_cost_destroy(cost);
    return rc;
}
