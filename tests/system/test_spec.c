/* test_spec — speculative decoding (scheduler.speculative): the accepted
 * tokens per step against their closed form, TPOT of a lone decoding
 * request against the closed form of the cost model's step time over the
 * expected tokens per step, KV capacity with a draft, the feature off
 * leaving a run unchanged, the drafts counted in a step's token budget,
 * and the loader's errors. */
#include "model_catalog.h"
#include "model_cost.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_spec.h"
#include "test_util.h"
#include "test_model_util.h"
#include "test_cluster_util.h"

#include <math.h>
#include <stdlib.h>

enum { IN_TOKENS = 64, OUT_TOKENS = 1025, REQUESTS = 60 };

/* One client sends REQUESTS requests of fixed lengths, one at a time: every
 * decode step is one request's (batch 1). */
static void lone_scenario(sim_scenario *sc, int32_t k, double a)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    sc->workload.requests = REQUESTS;
    sc->workload.arrival.process = SIM_ARRIVAL_CLOSED;
    sc->workload.arrival.concurrency = 1;
    sc->workload.input_tokens.dist = SIM_DIST_FIXED;
    sc->workload.input_tokens.value = IN_TOKENS;
    sc->workload.output_tokens.dist = SIM_DIST_FIXED;
    sc->workload.output_tokens.value = OUT_TOKENS;
    sc->deployment.pools[0].instances = 1;
    sim_spec_cfg *sp = &sc->deployment.pools[0].scheduler.spec;
    sp->draft_tokens = k;
    sp->method = SIM_SPEC_MTP;
    sp->acceptance.n = 1;
    sp->acceptance.v[0] = a;
}

/* Device seconds of one draft pass of one decode request at context ctx. */
static double draft_dev(const model_cost *d, int64_t ctx)
{
    model_batch b = {.n_decode = 1, .decode_ctx_sum = ctx};
    model_iter_cost ic;
    double t = model_cost_iteration(d, &b, &ic);
    return t - ic.overhead_s;
}

/* Closed form: a request's decode emits OUT_TOKENS − 1 tokens, E = Σ_{i=0..k} a^i
 * a step on average, so it takes (OUT − 1)/E steps; step s runs at context
 * IN + 1 + E·s and lasts the target's verify pass over 1 + k tokens
 * (model_cost_verify_iteration, checked in verify_step_cost) plus k draft
 * passes. TPOT = Σ step / (OUT − 1). */
static double closed_form_tpot_ms(const model_cost *target, const model_cost *draft, int32_t k, double a)
{
    double E = 0, p = 1;
    for (int32_t i = 0; i <= k; i++, p *= a) E += p;
    double steps = (OUT_TOKENS - 1) / E, total = 0;
    for (int64_t s = 0; s < (int64_t)ceil(steps); s++) {
        double w = (double)s + 1 <= steps ? 1.0 : steps - (double)s; /* the last, partial step */
        int64_t ctx = (int64_t)llround(IN_TOKENS + 1 + E * (double)s);
        model_batch b = {.n_decode = 1, .decode_ctx_sum = ctx};
        double step = model_cost_verify_iteration(target, &b, 1 + k, NULL) + (k > 0 ? k * draft_dev(draft, ctx) : 0);
        total += w * step;
    }
    return total / (OUT_TOKENS - 1) * 1e3;
}

static void test_tpot_closed_form(void)
{
    const struct {
        int32_t k;
        double a;
    } cases[] = {{0, 0.0}, {1, 0.8}, {3, 0.7}, {2, 0.3}};
    sim_scenario sc;
    lone_scenario(&sc, 0, 0);
    model_cost *target = test_cost_model("llama-3.1-8b", "h100-sxm", 1, sc.deployment.pools[0].scheduler.overhead_us);
    REQUIRE(target != NULL);
    model_spec m;
    sim_err err = {{0}};
    REQUIRE(model_catalog_model("llama-3.1-8b", &m, &err) == 0);
    model_cost *draft = NULL;
    sim_spec_cfg mtp = {.draft_tokens = 1, .method = SIM_SPEC_MTP, .mtp_layers = 1, .acceptance = {1, {0.5}}};
    REQUIRE_MSG(sim_spec_draft_cost(&mtp, &m, model_cost_gpu(target), model_cost_layout(target), &draft, &err) == 0,
                "%s", err.msg);
    double tpot0 = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        lone_scenario(&sc, cases[c].k, cases[c].a);
        run_result r;
        if (run(&sc, &r)) break;
        CHECK(r.st.completed == REQUESTS);
        CHECK_MSG(r.st.kv_blocks_used == 0 && r.st.outstanding_tokens == 0, "k=%d: %lld blocks, %lld tokens left",
                  cases[c].k, (long long)r.st.kv_blocks_used, (long long)r.st.outstanding_tokens);
        double want = closed_form_tpot_ms(target, draft, cases[c].k, cases[c].a);
        double got = r.sum.tpot_ms.mean;
        /* k = 0 is exact up to rounding; the draws leave ~0.3 % (1 sigma) on the mean. */
        double tol = cases[c].k == 0 ? 0.002 : 0.015;
        printf("  k=%d a=%.2f: TPOT %.4f ms, closed form %.4f ms (%+.2f %%)\n", cases[c].k, cases[c].a, got, want,
               100 * (got / want - 1));
        CHECK_MSG(fabs(got / want - 1) < tol, "k=%d a=%.2f: TPOT %.4f ms, closed form %.4f ms (%.2f %%)", cases[c].k,
                  cases[c].a, got, want, 100 * (got / want - 1));
        if (cases[c].k == 0) tpot0 = got;
        else if (cases[c].a >= 0.7)
            CHECK_MSG(got < tpot0, "k=%d a=%.2f: TPOT %.4f ms not below %.4f ms without drafts", cases[c].k, cases[c].a,
                      got, tpot0);
        free(r.recs);
    }
    model_cost_destroy(draft);
    model_cost_destroy(target);
}

/* The verify pass: width 1 is a plain decode step; the linear layers see
 * n·width rows (as n·width decode requests would); decode attention reads
 * each request's KV once, so it costs no more than n·width rows of their
 * own and no less than n rows. */
static void test_verify_step_cost(void)
{
    const char *models[] = {"llama-3.1-8b", "deepseek-v3"};
    for (int i = 0; i < 2; i++) {
        model_cost *c = test_cost_model(models[i], i ? "b200" : "h100-sxm", 8, 0);
        REQUIRE(c != NULL);
        model_batch one = {.n_decode = 32, .decode_ctx_sum = 32 * 4096};
        model_batch rows = {.n_decode = 32 * 4, .decode_ctx_sum = 32 * 4 * 4096};
        model_iter_cost plain, v1, v4, r4;
        double t_plain = model_cost_iteration(c, &one, &plain);
        CHECK(model_cost_verify_iteration(c, &one, 1, &v1) == t_plain);
        double t4 = model_cost_verify_iteration(c, &one, 4, &v4);
        model_cost_iteration(c, &rows, &r4);
        CHECK_NEAR(v4.gemm_s, r4.gemm_s, 1e-12);
        CHECK_MSG(v4.attn_s <= r4.attn_s && v4.attn_s > plain.attn_s, "%s: attention %.4g s (plain %.4g, 4x rows %.4g)",
                  models[i], v4.attn_s, plain.attn_s, r4.attn_s);
        CHECK(t4 > t_plain);
        model_cost_destroy(c);
    }
}

static void test_accepted_draws(void)
{
    sim_spec_cfg cfg = {.draft_tokens = 2, .method = SIM_SPEC_MTP, .mtp_layers = 1, .acceptance = {2, {0.9, 0.5}}};
    CHECK_NEAR(sim_spec_expected_tokens(&cfg), 1 + 0.9 + 0.45, 1e-12);
    sim_spec_cfg one = {.draft_tokens = 3, .acceptance = {1, {0.6}}};
    CHECK_NEAR(sim_spec_expected_tokens(&one), 1 + 0.6 + 0.36 + 0.216, 1e-12);
    const sim_spec_cfg *cfgs[2] = {&cfg, &one};
    for (int c = 0; c < 2; c++) {
        sim_spec *s = NULL;
        sim_err err = {{0}};
        REQUIRE_MSG(sim_spec_create(cfgs[c], NULL, 7, 0, &s, &err) == 0, "%s", err.msg);
        const int n = 200000;
        double sum = 0;
        int32_t hist[SIM_SPEC_MAX_DRAFT + 1] = {0};
        for (int i = 0; i < n; i++) {
            int32_t acc = sim_spec_accepted(s, 1.0f);
            hist[acc]++;
            sum += 1 + acc;
        }
        double want = sim_spec_expected_tokens(cfgs[c]);
        CHECK_MSG(fabs(sum / n - want) < 0.01, "mean tokens per step %.4f, closed form %.4f", sum / n, want);
        /* P(A = 0) = 1 − a1. */
        CHECK_NEAR((double)hist[0] / n, 1 - cfgs[c]->acceptance.v[0], 0.005);
        CHECK(hist[cfgs[c]->draft_tokens + 1] == 0);
        sim_spec_destroy(s);
    }
    /* A spread of acceptance over requests keeps the mean. */
    sim_spec_cfg spread = {.draft_tokens = 1, .acceptance = {1, {0.7}}, .acceptance_concentration = 4};
    sim_spec *s = NULL;
    sim_err err = {{0}};
    REQUIRE(sim_spec_create(&spread, NULL, 11, 0, &s, &err) == 0);
    double sum = 0, sq = 0;
    for (int i = 0; i < 100000; i++) {
        double x = sim_spec_request_scale(s) * 0.7;
        sum += x;
        sq += x * x;
    }
    double mean = sum / 1e5, var = sq / 1e5 - mean * mean;
    CHECK_NEAR(mean, 0.7, 0.005);
    /* Beta(κa, κ(1 − a)): variance a(1 − a)/(κ + 1). */
    CHECK_NEAR(var, 0.7 * 0.3 / 5, 0.003);
    sim_spec_destroy(s);
}

static void test_kv_capacity(void)
{
    sim_scenario sc;
    lone_scenario(&sc, 0, 0);
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    REQUIRE(sim_cluster_create(&sc, &c, &err) == 0);
    int64_t base = sim_cluster_pool_kv_tokens(c, 0);
    sim_cluster_destroy(c);
    lone_scenario(&sc, 2, 0.7);
    REQUIRE_MSG(sim_cluster_create(&sc, &c, &err) == 0, "%s", err.msg);
    int64_t mtp = sim_cluster_pool_kv_tokens(c, 0);
    sim_cluster_destroy(c);
    /* One more layer of KV per token (32 → 33) and one layer's weights. */
    CHECK_MSG(mtp < base * 32 / 33 && mtp > base * 32 / 33 * 0.9, "KV tokens %lld with the MTP layer, %lld without",
              (long long)mtp, (long long)base);
}

static void test_off_unchanged(void)
{
    sim_scenario a, b;
    lone_scenario(&a, 0, 0);
    a.workload.requests = 10;
    b = a;
    b.deployment.pools[0].scheduler.spec.acceptance.v[0] = 0.9;
    b.deployment.pools[0].scheduler.spec.method = SIM_SPEC_DRAFT;
    run_result ra, rb;
    if (run(&a, &ra) || run(&b, &rb)) return;
    CHECK(ra.sum.tpot_ms.mean == rb.sum.tpot_ms.mean && ra.sum.ttft_ms.mean == rb.sum.ttft_ms.mean);
    free(ra.recs);
    free(rb.recs);
}

/* Mean TTFT (ms) of two clients of 64-token prompts under whole-prompt
 * scheduling with a token budget of `budget`, k drafts at 0.7. */
static double two_client_ttft_ms(int32_t k, int32_t budget)
{
    sim_scenario sc;
    lone_scenario(&sc, k, 0.7);
    sc.workload.requests = 20;
    sc.workload.arrival.concurrency = 2;
    sc.workload.output_tokens.value = 200;
    sim_sched_cfg *s = &sc.deployment.pools[0].scheduler;
    s->max_seqs = 2;
    s->max_batched_tokens = budget;
    s->chunk_tokens = budget;
    s->whole_prompts = 1;
    run_result r;
    if (run(&sc, &r)) return -1;
    CHECK(r.st.completed == 20);
    double ttft = r.sum.ttft_ms.mean;
    free(r.recs);
    return ttft;
}

/* A decoding request takes 1 + k tokens of the step's budget (the verify
 * pass): with 66 tokens and k = 3 a 64-token prompt cannot join a step
 * beside a decoding request (66 − 4 < 64) and waits for it to finish; with
 * 72 it can (72 − 4 ≥ 64). Without drafts both budgets hold it (66 − 1),
 * and the two runs are identical. */
static void test_budget_counts_drafts(void)
{
    double spec_tight = two_client_ttft_ms(3, 66), spec_room = two_client_ttft_ms(3, 72);
    double plain_tight = two_client_ttft_ms(0, 66), plain_room = two_client_ttft_ms(0, 72);
    printf("  TTFT k=3: %.2f ms at 66 tokens, %.2f at 72; k=0: %.2f, %.2f\n", spec_tight, spec_room, plain_tight,
           plain_room);
    REQUIRE(spec_tight > 0 && spec_room > 0 && plain_tight > 0 && plain_room > 0);
    /* Counted as one token each, both budgets would hold the prompt beside a
     * decode step and the two k = 3 runs would be the same run. */
    CHECK_MSG(spec_tight > 1.2 * spec_room, "k=3: TTFT %.2f ms at 66 tokens, %.2f at 72", spec_tight, spec_room);
    CHECK_MSG(plain_tight == plain_room, "k=0: TTFT %.2f ms at 66 tokens, %.2f at 72", plain_tight, plain_room);
}

static void check_load_error(const char *spec, const char *want)
{
    char text[1024];
    snprintf(text, sizeof text,
             "model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\ndeployment:\n  pools:\n    - role: colocated\n"
             "      parallel: {tp: 1%s}\n      scheduler:\n        speculative: %s\n",
             strstr(spec, "PP") ? ", pp: 2" : "", strstr(spec, "PP") ? spec + 2 : spec);
    sim_scenario sc;
    sim_err err = {{0}};
    int rc = sim_loader_load_string(text, strlen(text), "spec.yaml", NULL, 0, &sc, &err);
    CHECK_MSG(rc != 0, "accepted: %s", spec);
    CHECK_CONTAINS(err.msg, want);
}

static void test_bad_config(void)
{
    check_load_error("{draft_tokens: 2}", "speculative.acceptance: required when draft_tokens > 0");
    check_load_error("{draft_tokens: 2, acceptance: [0.8, 0.6, 0.4]}", "one per draft position (2), got a list of 3");
    check_load_error("{draft_tokens: 1, acceptance: 1.5}", "speculative.acceptance");
    check_load_error("{draft_tokens: 1, acceptance: [0.5, x]}", "got");
    check_load_error("{draft_tokens: 1, acceptance: 0.5, method: draft}", "needs the draft model");
    check_load_error("{draft_tokens: 9, acceptance: 0.5}", "speculative.draft_tokens");
    check_load_error("PP{draft_tokens: 1, acceptance: 0.5}", "not modelled with pipeline parallelism");
    /* A good one loads, list and all. */
    const char *ok = "model: llama-3.1-8b\ndeployment:\n  pools:\n    - role: colocated\n      scheduler:\n"
                     "        speculative: {draft_tokens: 2, acceptance: [0.8, 0.5]}\n";
    sim_scenario sc;
    sim_err err = {{0}};
    CHECK_MSG(sim_loader_load_string(ok, strlen(ok), "ok.yaml", NULL, 0, &sc, &err) == 0, "%s", err.msg);
    CHECK(sc.deployment.pools[0].scheduler.spec.acceptance.n == 2);
    CHECK_NEAR(sc.deployment.pools[0].scheduler.spec.acceptance.v[1], 0.5, 0);
}

static const test_case cases[] = {
    {"tpot_closed_form", test_tpot_closed_form},
    {"verify_step_cost", test_verify_step_cost},
    {"accepted_draws", test_accepted_draws},
    {"kv_capacity", test_kv_capacity},
    {"off_unchanged", test_off_unchanged},
    {"budget_counts_drafts", test_budget_counts_drafts},
    {"bad_config", test_bad_config},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_spec", cases);
}
