/* test_graph_pad — CUDA-graph capture sizes (scheduler.cuda_graph_sizes,
 * cuda_graph_max_bs; sim_graph_sizes.h): a decode-only iteration runs as the
 * smallest captured batch that holds it, the extra rows dummy sequences of
 * 1 token of context.
 *
 * - The rules by hand: vLLM's grid (1, 2, 4, multiples of 8 below 256, of 16
 *   from 256, up to min(2 x max_seqs, 512)): 65 -> 72, 3 -> 4, 257 -> 272,
 *   600 -> no graph; SGLang's (1, 2, 4, 8, 12, multiples of 8 to 256, of 16
 *   to 496, of 32 from 512, and the largest; 256 on an 80 GiB GPU at tp < 4,
 *   512 at tp 8 or on a B200); TensorRT-LLM's (1, 2, 4, multiples of 8 to
 *   128, steps of 64 above, and the largest; 128 by default).
 * - One instance (Qwen3-32B bf16 on one H100) with 65 requests of 64 prompt
 *   and 4 output tokens arriving at t = 0: the first iteration prefills all
 *   of them, the next three decode the 65. Under the vLLM rule each decode
 *   step lasts what model_cost_iteration prices the batch of 72 (65 real
 *   rows and 7 of 1 token), to the nanosecond; with no rule, or with the
 *   largest captured size 64, it lasts what the batch of 65 costs. The
 *   padding rows pay no per-request host work: with overhead_per_seq 50 µs
 *   the padded batch costs 7 x 50 µs less than 72 real requests.
 * - With 4 attention-DP ranks every rank runs the graph of the largest
 *   rank's share: 9 requests (3 a rank) run as 16, 65 (17) as 96, 7 as 8;
 *   with the largest size 16, 65 (17 a rank) run without a graph.
 * - The keys: presets set their engine's rule, a key beside a preset wins,
 *   bad values are refused with the key's path. */
#include "model_cost.h"
#include "sim_engine.h"
#include "sim_graph_sizes.h"
#include "sim_instance.h"
#include "sim_loader.h"
#include "sim_pool_layout.h"
#include "sim_metrics.h"
#include "sim_scenario.h"
#include "test_util.h"
#include "test_model_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_rule_vllm(void)
{
    const int32_t max = sim_graph_sizes_default_max(SIM_GRAPH_VLLM, 1024, 80, 1);
    CHECK(max == 512);
    CHECK(sim_graph_sizes_default_max(SIM_GRAPH_VLLM, 64, 80, 1) == 128);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, max, 65) == 72);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, max, 3) == 4);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, max, 1) == 1);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, max, 2) == 2);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, max, 5) == 8);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, max, 249) == 256);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, max, 257) == 272);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, max, 512) == 512);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, max, 600) == 600); /* above the largest: no graph */
    /* A largest size off the grid is not captured: 97..100 of max 100 run eagerly. */
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, 100, 95) == 96);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, 100, 97) == 97);
}

static void test_rule_sglang(void)
{
    CHECK(sim_graph_sizes_default_max(SIM_GRAPH_SGLANG, 1024, 79.6, 1) == 256);  /* H100 80 GB, tp 1 */
    CHECK(sim_graph_sizes_default_max(SIM_GRAPH_SGLANG, 1024, 79.6, 8) == 512);  /* tp 8 */
    CHECK(sim_graph_sizes_default_max(SIM_GRAPH_SGLANG, 1024, 178.4, 1) == 512); /* B200 */
    CHECK(sim_graph_sizes_default_max(SIM_GRAPH_SGLANG, 1024, 39.4, 2) == 32);   /* A100 40 GB */
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_SGLANG, 512, 65) == 72);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_SGLANG, 512, 9) == 12);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_SGLANG, 512, 13) == 16);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_SGLANG, 512, 257) == 272);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_SGLANG, 512, 497) == 512);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_SGLANG, 256, 300) == 300);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_SGLANG, 1024, 513) == 544);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_SGLANG, 100, 97) == 100); /* the largest is captured */
}

static void test_rule_trtllm(void)
{
    const int32_t max = sim_graph_sizes_default_max(SIM_GRAPH_TRTLLM, 1024, 178.4, 8);
    CHECK(max == 128);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_TRTLLM, max, 65) == 72);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_TRTLLM, max, 3) == 4);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_TRTLLM, max, 128) == 128);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_TRTLLM, max, 129) == 129);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_TRTLLM, 256, 129) == 192);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_TRTLLM, 256, 200) == 256);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_TRTLLM, 200, 193) == 200);
}

static void test_rule_none(void)
{
    CHECK(sim_graph_sizes_default_max(SIM_GRAPH_NONE, 1024, 80, 1) == 0);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_NONE, 512, 65) == 65);
    CHECK(sim_graph_sizes_pad(SIM_GRAPH_VLLM, 512, 0) == 0);
}

/* Every iteration's duration and decode rows, in order. */
typedef struct {
    int n, finished;
    int64_t dur_ns[16];
    int32_t decode[16];
    /* The batches the instance priced (a logging run): */
    const model_cost *c;
    int nb;
    model_batch b[16];
} iter_log;

static double logged_cost(void *ctx, const model_batch *b)
{
    iter_log *lg = ctx;
    if (lg->nb < 16) {
        lg->b[lg->nb] = *b;
        lg->b[lg->nb++].chunks = NULL;
    }
    return model_cost_iteration(lg->c, b, NULL);
}

static void on_finish(void *ctx, sim_req *r)
{
    (void)r;
    ((iter_log *)ctx)->finished++;
}

static void on_iter(void *ctx, int32_t instance, const sim_trace_iter *it)
{
    (void)instance;
    iter_log *lg = ctx;
    if (lg->n < 16) {
        lg->dur_ns[lg->n] = it->end_ns - it->start_ns;
        lg->decode[lg->n++] = it->decode_seqs;
    }
}

#define N_REQ 65

/* A plain scheduler (decode_first, optimistic) with CUDA graphs of rule r
 * up to max_bs (0: the rule's default). */
static sim_sched_cfg sched_cfg(int32_t max_seqs, sim_graph_rule r, int32_t max_bs)
{
    sim_sched_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.max_seqs = max_seqs;
    cfg.max_batched_tokens = 8192;
    cfg.chunk_tokens = 8192;
    cfg.block_tokens = 16;
    cfg.cuda_graph_sizes = r;
    cfg.cuda_graph_max_bs = max_bs;
    return cfg;
}

/* Runs N_REQ requests (64 prompt, 4 output tokens, all at t = 0) on one
 * instance of cost model c under rule r and largest size max_bs; fills lg. */
static int run(const model_cost *c, sim_graph_rule r, int32_t max_bs, int log_batches, iter_log *lg)
{
    const sim_sched_cfg cfg = sched_cfg(128, r, max_bs);
    memset(lg, 0, sizeof *lg);
    sim_err err = {{0}};
    sim_engine *eng = sim_engine_create();
    sim_metrics *met = sim_metrics_create(1);
    sim_instance_hooks hooks = {.on_finish = on_finish, .on_iteration = on_iter, .ctx = lg};
    sim_instance *in = NULL;
    int rc = eng && met ? sim_instance_create(eng, 0, SIM_ROLE_COLOCATED, &cfg, c, 1 << 20, met, hooks, &in, &err)
                        : -1;
    CHECK_MSG(rc == 0, "%s", err.msg);
    sim_req *reqs = calloc(N_REQ, sizeof *reqs);
    if (rc == 0 && reqs) {
        lg->c = c;
        if (log_batches) sim_instance_set_cost_fn(in, logged_cost, lg);
        for (int i = 0; i < N_REQ; i++) {
            reqs[i].spec.id = (uint64_t)i;
            reqs[i].spec.input_tokens = 64;
            reqs[i].spec.output_tokens = 4;
            reqs[i].client = -1;
            sim_instance_submit(in, &reqs[i]); /* at t = 0 */
        }
        sim_engine_run(eng, (sim_time)10 * 1000 * 1000000LL);
        CHECK_MSG(!sim_engine_failed(eng, NULL), "the run failed");
        CHECK_MSG(lg->finished == N_REQ, "%d of %d requests finished", lg->finished, N_REQ);
    } else {
        rc = -1;
    }
    sim_instance_destroy(in);
    free(reqs);
    sim_metrics_destroy(met);
    sim_engine_destroy(eng);
    return rc;
}

static int64_t ns_of(const model_cost *c, const model_batch *b)
{
    return (int64_t)(model_cost_iteration(c, b, NULL) * 1e9 + 0.5);
}

static void test_decode_cost(void)
{
    model_layout l = {.tp = 1, .pp = 1, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16,
                      .overhead_s = 1e-3, .overhead_per_seq_s = 50e-6, .gpus_per_node = 8};
    model_cost *c = test_cost_layout("qwen3-32b", "h100-sxm", &l);
    REQUIRE(c != NULL);
    iter_log plain, padded, above, logged;
    int ok = run(c, SIM_GRAPH_NONE, 0, 1, &plain) == 0 && run(c, SIM_GRAPH_VLLM, 0, 0, &padded) == 0 &&
             run(c, SIM_GRAPH_VLLM, 64, 0, &above) == 0 && run(c, SIM_GRAPH_VLLM, 0, 1, &logged) == 0;
    REQUIRE(ok);
    /* The first request finds the instance idle and prefills alone; the
     * other 64 prefill beside its first decode (a mixed batch: unpadded);
     * then decode-only steps of the 65, and of the 64 once the first is done. */
    REQUIRE_MSG(plain.n == 5 && padded.n == 5 && above.n == 5 && plain.nb == 5 && logged.nb == 5,
                "iterations %d %d %d", plain.n, padded.n, above.n);
    CHECK(plain.b[0].n_chunks == 1 && plain.b[1].n_chunks == 64 && plain.b[1].n_decode == 1);
    int steps = 0;
    for (int k = 0; k < plain.n; k++) {
        const model_batch *real = &plain.b[k];
        if (real->n_chunks > 0 || (real->n_decode != N_REQ && real->n_decode != 64)) {
            /* a prefill or mixed iteration runs unpadded */
            CHECK(padded.dur_ns[k] == plain.dur_ns[k] && logged.b[k].n_pad == 0);
            continue;
        }
        steps++;
        const int32_t want = real->n_decode == N_REQ ? 72 : 64, pad = want - real->n_decode;
        model_batch p = {.n_decode = want, .decode_ctx_sum = real->decode_ctx_sum + pad, .n_pad = pad};
        CHECK(plain.dur_ns[k] == ns_of(c, real));
        CHECK(padded.decode[k] == real->n_decode); /* the trace counts real requests */
        CHECK(logged.b[k].n_decode == p.n_decode && logged.b[k].n_pad == p.n_pad &&
              logged.b[k].decode_ctx_sum == p.decode_ctx_sum);
        CHECK_MSG(padded.dur_ns[k] == ns_of(c, &p), "step %d: %lld vs %lld ns", k, (long long)padded.dur_ns[k],
                  (long long)ns_of(c, &p));
        if (pad > 0) CHECK(padded.dur_ns[k] > plain.dur_ns[k]);
        else CHECK(padded.dur_ns[k] == plain.dur_ns[k]); /* 64 is captured */
        /* Largest captured size 64: 65 runs without a graph, 64 with its own. */
        CHECK(above.dur_ns[k] == plain.dur_ns[k]);
    }
    CHECK_MSG(steps == 3, "%d decode-only steps", steps);
    /* Padding rows are not requests: 7 x 50 µs less host work than 72 real ones. */
    model_batch pad = {.n_decode = 72, .decode_ctx_sum = 72 * 65, .n_pad = 7};
    model_batch full = {.n_decode = 72, .decode_ctx_sum = 72 * 65};
    CHECK_NEAR(model_cost_iteration(c, &full, NULL) - model_cost_iteration(c, &pad, NULL), 7 * 50e-6, 1e-12);
    model_cost_destroy(c);
}

/* Attention DP: every rank runs the graph of the largest rank's share. */
static void test_dp_ranks(void)
{
    model_layout l = {.tp = 1, .pp = 1, .dp = 4, .ep = 4, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16,
                      .gpus_per_node = 8};
    model_cost *c = test_cost_layout("qwen3-30b-a3b", "h100-sxm", &l);
    REQUIRE(c != NULL);
    sim_err err = {{0}};
    sim_sched_cfg cfg = sched_cfg(256, SIM_GRAPH_VLLM, 0);
    sim_engine *eng = sim_engine_create();
    sim_metrics *met = sim_metrics_create(1);
    sim_instance *in = NULL, *small = NULL, *none = NULL;
    sim_instance_hooks hooks = {0};
    int rc = eng && met ? sim_instance_create(eng, 0, SIM_ROLE_COLOCATED, &cfg, c, 1 << 20, met, hooks, &in, &err) : -1;
    cfg.cuda_graph_max_bs = 16;
    if (rc == 0) rc = sim_instance_create(eng, 1, SIM_ROLE_COLOCATED, &cfg, c, 1 << 20, met, hooks, &small, &err);
    cfg.cuda_graph_sizes = SIM_GRAPH_NONE;
    if (rc == 0) rc = sim_instance_create(eng, 2, SIM_ROLE_COLOCATED, &cfg, c, 1 << 20, met, hooks, &none, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc == 0) {
        CHECK(sim_instance_graph_batch(in, 9) == 16);  /* 3 a rank -> 4 */
        CHECK(sim_instance_graph_batch(in, 65) == 96); /* 17 a rank -> 24 */
        CHECK(sim_instance_graph_batch(in, 8) == 8);   /* 2 a rank, captured */
        CHECK(sim_instance_graph_batch(in, 7) == 8);   /* the ranks pad to the largest share */
        CHECK(sim_instance_graph_batch(small, 64) == 64);
        CHECK(sim_instance_graph_batch(small, 65) == 65); /* 17 a rank > 16: no graph */
        CHECK(sim_instance_graph_batch(none, 65) == 65);
    }
    sim_instance_destroy(in);
    sim_instance_destroy(small);
    sim_instance_destroy(none);
    sim_metrics_destroy(met);
    sim_engine_destroy(eng);
    model_cost_destroy(c);
}

static int load(const char *yaml, sim_scenario *sc, sim_err *err)
{
    err->msg[0] = '\0';
    return sim_loader_load_string(yaml, strlen(yaml), "t.yaml", NULL, 0, sc, err);
}

static void test_keys(void)
{
    sim_scenario sc;
    sim_err err;
    const sim_sched_cfg *s = &sc.deployment.pools[0].scheduler;
    REQUIRE(load("{}", &sc, &err) == 0);
    CHECK(s->cuda_graph_sizes == SIM_GRAPH_NONE && s->cuda_graph_max_bs == 0);
    static const char *const presets[] = {"vllm", "sglang", "trtllm"};
    static const sim_graph_rule rules[] = {SIM_GRAPH_VLLM, SIM_GRAPH_SGLANG, SIM_GRAPH_TRTLLM};
    for (int i = 0; i < 3; i++) {
        char y[128];
        snprintf(y, sizeof y, "deployment:\n  pools:\n    - scheduler: {preset: %s}\n", presets[i]);
        CHECK_MSG(load(y, &sc, &err) == 0, "%s", err.msg);
        CHECK(s->cuda_graph_sizes == rules[i] && s->cuda_graph_max_bs == 0);
    }
    CHECK_MSG(load("deployment:\n  pools:\n    - scheduler: {cuda_graph_sizes: none, preset: vllm, "
                   "cuda_graph_max_bs: 64}\n",
                   &sc, &err) == 0,
              "%s", err.msg);
    CHECK(s->cuda_graph_sizes == SIM_GRAPH_NONE && s->cuda_graph_max_bs == 64);
    CHECK(load("deployment:\n  pools:\n    - scheduler: {cuda_graph_sizes: tgi}\n", &sc, &err) < 0);
    CHECK_CONTAINS(err.msg, "deployment.pools.0.scheduler.cuda_graph_sizes");
    CHECK_CONTAINS(err.msg, "none|vllm|sglang|trtllm");
    CHECK(load("deployment:\n  pools:\n    - scheduler: {cuda_graph_max_bs: -8}\n", &sc, &err) < 0);
    CHECK_CONTAINS(err.msg, "t.yaml:3:");
    CHECK_CONTAINS(err.msg, "deployment.pools.0.scheduler.cuda_graph_max_bs");
    CHECK(load("deployment:\n  pools:\n    - scheduler: {cuda_graph_max_bs: [8, 16]}\n", &sc, &err) < 0);
    CHECK_CONTAINS(err.msg, "cuda_graph_max_bs");
}

/* Bytes of the routed experts' up/gate GEMM of one decode batch (their
 * weights read dominate: one expert's per touched expert). */
static double experts_bytes(const model_cost *c, int32_t n_decode, int32_t n_pad, int64_t ctx_sum)
{
    model_batch b = {0, NULL, n_decode, ctx_sum, n_pad};
    model_op ops[256];
    int32_t n = 0;
    model_cost_breakdown(c, &b, ops, 256, &n, NULL);
    const model_op *o = test_find_op(ops, n < 256 ? n : 256, "experts_gate_up");
    return o ? o->bytes : -1;
}

/* A padded MoE batch: the padding rows are copies of one dummy token, so
 * between them they touch one token's top-k experts. Qwen3-235B-A22B (128
 * experts, top 8) at TP 8 / EP 8 on H100: 10 requests padded to 16 read the
 * experts 11 independent tokens touch (the expected touched count is
 * E·(1 − (1 − k/E)^T)), within the few activation rows the 5 extra rows add,
 * and clearly fewer than 16 real requests'. */
static void test_moe_padding(void)
{
    model_layout l = {.tp = 8, .pp = 1, .ep = 8, .dtype = MODEL_DTYPE_BF16, .kv_dtype = MODEL_DTYPE_BF16,
                      .gpus_per_node = 8, .pad_one_token = 1};
    model_cost *c = test_cost_layout("qwen3-235b-a22b", "h100-sxm", &l);
    REQUIRE(c != NULL);
    const double padded = experts_bytes(c, 16, 6, 10 * 2000 + 6), eleven = experts_bytes(c, 11, 0, 11 * 2000),
                 sixteen = experts_bytes(c, 16, 0, 16 * 2000);
    REQUIRE(padded > 0 && eleven > 0 && sixteen > 0);
    CHECK_MSG(fabs(padded / eleven - 1) < 0.01, "padded %.6g B, 11 real %.6g B", padded, eleven);
    const double k = 8, E = 128, touch11 = E * (1 - pow(1 - k / E, 11)), touch16 = E * (1 - pow(1 - k / E, 16));
    CHECK_MSG(sixteen / eleven > 0.95 * touch16 / touch11, "16 real %.6g B, 11 real %.6g B (touched %.2f / %.2f)",
              sixteen, eleven, touch16, touch11);
    model_cost_destroy(c);
    /* Stale-buffer padding (vLLM, SGLang): every row routes on its own. */
    l.pad_one_token = 0;
    c = test_cost_layout("qwen3-235b-a22b", "h100-sxm", &l);
    REQUIRE(c != NULL);
    const double stale = experts_bytes(c, 16, 6, 10 * 2000 + 6);
    CHECK_MSG(fabs(stale / sixteen - 1) < 0.01, "stale padding %.6g B, 16 real %.6g B", stale, sixteen);
    model_cost_destroy(c);
    /* The layout of a pool takes it from the TensorRT-LLM rule only. */
    const char *yaml = "model: qwen3-235b-a22b\nhardware: {gpu: h100-sxm}\n"
                       "deployment: {pools: [{parallel: {tp: 8, ep: 8}, scheduler: {preset: trtllm}}]}\n";
    sim_scenario sc;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_loader_load_string(yaml, strlen(yaml), "pad.yaml", NULL, 0, &sc, &err) == 0, "%s", err.msg);
    model_layout pl;
    REQUIRE_MSG(sim_pool_layout(&sc, &sc.deployment.pools[0], &pl, &err) == 0, "%s", err.msg);
    CHECK(pl.pad_one_token == 1);
    sc.deployment.pools[0].scheduler.cuda_graph_sizes = SIM_GRAPH_VLLM;
    REQUIRE_MSG(sim_pool_layout(&sc, &sc.deployment.pools[0], &pl, &err) == 0, "%s", err.msg);
    CHECK(pl.pad_one_token == 0);
}

static const test_case cases[] = {
    {"rule_vllm", test_rule_vllm},   {"rule_sglang", test_rule_sglang}, {"rule_trtllm", test_rule_trtllm},
    {"rule_none", test_rule_none},   {"decode_cost", test_decode_cost}, {"dp_ranks", test_dp_ranks},
    {"keys", test_keys},
    {"moe_padding", test_moe_padding},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_graph_pad", cases);
}
