/* test_router_cache — the cache-aware router's presets on hand-made views:
 * score rule (λ limits), SGLang's imbalance switch and cache threshold,
 * Dynamo's logit arithmetic and softmax sampling, llm-d's weighted
 * scorers, determinism for a seed, and rejected configurations. */
#include "sim_router_cache.h"
#include "sim_rng.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

#define N_OF(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

static sim_routing_cfg base_cfg(sim_route_preset preset)
{
    sim_routing_cfg c;
    memset(&c, 0, sizeof c);
    c.policy = SIM_ROUTE_CACHE_AWARE;
    c.preset = preset;
    c.lambda = 1.0;
    c.cache_threshold = 0.5; /* SGLang router defaults */
    c.balance_abs_threshold = 32;
    c.balance_rel_threshold = 1.0001;
    c.overlap_score_weight = 1.0;
    c.temperature = 0.0;
    c.w_prefix = c.w_load = c.w_kv = 1.0;
    return c;
}

static sim_request_spec req_of(int32_t input_tokens)
{
    sim_request_spec r;
    memset(&r, 0, sizeof r);
    r.input_tokens = input_tokens;
    r.output_tokens = 16;
    return r;
}

/* ---- preset none ---------------------------------------------------- */

static void test_score_rule(void)
{
    sim_router_view v[3];
    memset(v, 0, sizeof v);
    /* saved ∝ matched (homogeneous cluster), the longest match is busiest */
    v[0].matched_tokens = 100; v[0].saved_ms = 10; v[0].queue_ms = 0;
    v[1].matched_tokens = 300; v[1].saved_ms = 30; v[1].queue_ms = 50;
    v[2].matched_tokens = 200; v[2].saved_ms = 20; v[2].queue_ms = 10;
    CHECK(sim_router_cache_pick_score(v, 3, 0.0) == 1);   /* λ = 0: longest match */
    CHECK(sim_router_cache_pick_score(v, 3, 1e12) == 0);  /* λ → ∞: least queueing */
    /* in between: 30 − 50λ vs 20 − 10λ vs 10: λ = 0.1 → 25, 19, 10 */
    CHECK(sim_router_cache_pick_score(v, 3, 0.1) == 1);
    /* λ = 0.5 → 5, 15, 10 */
    CHECK(sim_router_cache_pick_score(v, 3, 0.5) == 2);

    /* crossover of two instances: 100 − 60λ vs 0 */
    sim_router_view w[2];
    memset(w, 0, sizeof w);
    w[0].saved_ms = 100; w[0].queue_ms = 60;
    CHECK(sim_router_cache_pick_score(w, 2, 1.0) == 0);
    CHECK(sim_router_cache_pick_score(w, 2, 2.0) == 1);

    /* λ = 0 and no match anywhere: the shorter queue, then the lowest index */
    memset(v, 0, sizeof v);
    v[0].queue_ms = 5; v[1].queue_ms = 2; v[2].queue_ms = 2;
    CHECK(sim_router_cache_pick_score(v, 3, 0.0) == 1);
    /* λ huge and equal queues: the saved time still decides */
    v[2].saved_ms = 100;
    CHECK(sim_router_cache_pick_score(v, 3, 1e12) == 2);
    /* all equal: lowest index */
    memset(v, 0, sizeof v);
    CHECK(sim_router_cache_pick_score(v, 3, 1.0) == 0);
}

/* λ limits hold on many random clusters, not only the hand-made ones. */
static void test_score_limits_random(void)
{
    gsl_rng *g = sim_rng_create(7, "test", 0);
    REQUIRE(g != NULL);
    int ok_long = 1, ok_load = 1;
    for (int t = 0; t < 2000; t++) {
        sim_router_view v[6];
        memset(v, 0, sizeof v);
        int32_t n = 2 + (int32_t)gsl_rng_uniform_int(g, 5);
        for (int32_t i = 0; i < n; i++) {
            v[i].matched_tokens = (int32_t)gsl_rng_uniform_int(g, 4096);
            v[i].saved_ms = 0.05 * v[i].matched_tokens;
            v[i].queue_ms = 1000.0 * gsl_rng_uniform(g);
        }
        int32_t lm = 0, lq = 0;
        for (int32_t i = 1; i < n; i++) {
            if (v[i].matched_tokens > v[lm].matched_tokens ||
                (v[i].matched_tokens == v[lm].matched_tokens && v[i].queue_ms < v[lm].queue_ms))
                lm = i;
            if (v[i].queue_ms < v[lq].queue_ms) lq = i;
        }
        if (sim_router_cache_pick_score(v, n, 0.0) != lm) ok_long = 0;
        if (sim_router_cache_pick_score(v, n, 1e12) != lq) ok_load = 0;
    }
    CHECK_MSG(ok_long, "lambda = 0 did not always pick the longest match");
    CHECK_MSG(ok_load, "lambda = 1e12 did not always pick the least queueing delay");
    gsl_rng_free(g);
}

/* ---- SGLang --------------------------------------------------------- */

static void set_load(sim_router_view *v, int32_t running, int32_t waiting)
{
    v->running = running;
    v->waiting = waiting;
}

static void test_sglang(void)
{
    sim_routing_cfg c = base_cfg(SIM_PRESET_SGLANG);
    sim_sglang_branch why;
    sim_router_view v[3];

    /* absolute threshold: instance 0 holds the whole prompt but is busier */
    memset(v, 0, sizeof v);
    v[0].matched_tokens = 1000; v[0].cached_blocks = 500;
    v[1].cached_blocks = 10;
    set_load(&v[0], 30, 10); /* 40 */
    set_load(&v[1], 5, 2);   /* 7: diff 33 > 32 and 40 > 1.0001·7 */
    CHECK(sim_router_cache_sglang_imbalanced(v, 2, 32, 1.0001));
    CHECK(sim_router_cache_pick_sglang(&c, 1000, v, 2, &why) == 1 && why == SIM_SGLANG_IMBALANCED);
    set_load(&v[0], 30, 9);  /* 39: diff 32, not > 32 → balanced → the match */
    CHECK(!sim_router_cache_sglang_imbalanced(v, 2, 32, 1.0001));
    CHECK(sim_router_cache_pick_sglang(&c, 1000, v, 2, &why) == 0 && why == SIM_SGLANG_CACHE_HIT);

    /* relative threshold: abs 2, rel 1.5, min load 10 */
    c.balance_abs_threshold = 2;
    c.balance_rel_threshold = 1.5;
    set_load(&v[0], 15, 0);  /* 15 = 1.5·10, not > → balanced */
    set_load(&v[1], 10, 0);
    CHECK(sim_router_cache_pick_sglang(&c, 1000, v, 2, &why) == 0 && why == SIM_SGLANG_CACHE_HIT);
    set_load(&v[0], 16, 0);  /* 16 > 15 and diff 6 > 2 → imbalanced */
    CHECK(sim_router_cache_pick_sglang(&c, 1000, v, 2, &why) == 1 && why == SIM_SGLANG_IMBALANCED);
    /* both conditions are needed: rel holds (16 > 1.5·10) but abs 6 ≤ 6 fails */
    c.balance_abs_threshold = 6;
    CHECK(sim_router_cache_pick_sglang(&c, 1000, v, 2, &why) == 0 && why == SIM_SGLANG_CACHE_HIT);
    c.balance_abs_threshold = 5.9;
    CHECK(sim_router_cache_pick_sglang(&c, 1000, v, 2, &why) == 1 && why == SIM_SGLANG_IMBALANCED);

    /* cache threshold, balanced loads: rate 0.5 is not > 0.5 */
    c = base_cfg(SIM_PRESET_SGLANG);
    memset(v, 0, sizeof v);
    v[0].cached_blocks = 40; v[1].cached_blocks = 30; v[2].cached_blocks = 20;
    v[1].matched_tokens = 50;
    CHECK(sim_router_cache_pick_sglang(&c, 100, v, 3, &why) == 2 && why == SIM_SGLANG_SMALLEST);
    v[1].matched_tokens = 51;
    CHECK(sim_router_cache_pick_sglang(&c, 100, v, 3, &why) == 1 && why == SIM_SGLANG_CACHE_HIT);
    c.cache_threshold = 0.6;
    CHECK(sim_router_cache_pick_sglang(&c, 100, v, 3, &why) == 2 && why == SIM_SGLANG_SMALLEST);

    /* ties: equal best matches → lowest index; equal trees → lowest index;
     * equal least loads → lowest index */
    c = base_cfg(SIM_PRESET_SGLANG);
    memset(v, 0, sizeof v);
    v[1].matched_tokens = v[2].matched_tokens = 90;
    CHECK(sim_router_cache_pick_sglang(&c, 100, v, 3, &why) == 1 && why == SIM_SGLANG_CACHE_HIT);
    v[1].matched_tokens = v[2].matched_tokens = 0;
    v[0].cached_blocks = 9; v[1].cached_blocks = 3; v[2].cached_blocks = 3;
    CHECK(sim_router_cache_pick_sglang(&c, 100, v, 3, &why) == 1 && why == SIM_SGLANG_SMALLEST);
    set_load(&v[0], 100, 0);
    CHECK(sim_router_cache_pick_sglang(&c, 100, v, 3, &why) == 1 && why == SIM_SGLANG_IMBALANCED);
    /* min load 0: the relative test always holds, only abs matters */
    memset(v, 0, sizeof v);
    set_load(&v[0], 33, 0);
    v[0].matched_tokens = 100;
    CHECK(sim_router_cache_pick_sglang(&c, 100, v, 2, &why) == 1 && why == SIM_SGLANG_IMBALANCED);
    /* an empty prompt matches nothing */
    memset(v, 0, sizeof v);
    v[1].cached_blocks = 5;
    CHECK(sim_router_cache_pick_sglang(&c, 0, v, 2, &why) == 0 && why == SIM_SGLANG_SMALLEST);
}

/* ---- Dynamo --------------------------------------------------------- */

static void test_dynamo_logit(void)
{
    sim_router_view v;
    memset(&v, 0, sizeof v);
    v.matched_tokens = 32;
    v.active_blocks = 10;
    /* (100 − 32)/16 = 4.25 prefill blocks; 10 + ceil(100/16) = 17 decode */
    CHECK_NEAR(sim_router_cache_dynamo_logit(&v, 100, 16, 1.0), 21.25, 1e-12);
    CHECK_NEAR(sim_router_cache_dynamo_logit(&v, 100, 16, 2.0), 25.5, 1e-12);
    CHECK_NEAR(sim_router_cache_dynamo_logit(&v, 100, 16, 0.0), 17.0, 1e-12);
    v.matched_tokens = 100; /* full hit: no prefill */
    CHECK_NEAR(sim_router_cache_dynamo_logit(&v, 100, 16, 1.0), 17.0, 1e-12);
    v.matched_tokens = 120; /* a stale view past the prompt never goes negative */
    CHECK_NEAR(sim_router_cache_dynamo_logit(&v, 100, 16, 1.0), 17.0, 1e-12);
}

static void test_dynamo_argmin(void)
{
    sim_routing_cfg c = base_cfg(SIM_PRESET_DYNAMO);
    sim_router_view v[3];
    memset(v, 0, sizeof v);
    /* input 160, bt 16: logits w·(10 − m/16) + active + 10 */
    v[0].matched_tokens = 160; v[0].active_blocks = 30; /* 0 + 40 = 40 (w = 1) */
    v[1].matched_tokens = 0;   v[1].active_blocks = 5;  /* 10 + 15 = 25 */
    v[2].matched_tokens = 96;  v[2].active_blocks = 12; /* 4 + 22 = 26 */
    CHECK(sim_router_cache_pick_dynamo(&c, 160, 16, v, 3, 0.0) == 1);
    c.overlap_score_weight = 2.0; /* 40, 35, 30 */
    CHECK(sim_router_cache_pick_dynamo(&c, 160, 16, v, 3, 0.0) == 2);
    c.overlap_score_weight = 10.0; /* 40, 115, 62 */
    CHECK(sim_router_cache_pick_dynamo(&c, 160, 16, v, 3, 0.0) == 0);
    c.overlap_score_weight = 0.0; /* pure decode load: 40, 15, 22 */
    CHECK(sim_router_cache_pick_dynamo(&c, 160, 16, v, 3, 0.0) == 1);
    double p[3];
    sim_router_cache_dynamo_probs(&c, 160, 16, v, 3, p);
    CHECK(p[0] == 0.0 && p[1] == 1.0 && p[2] == 0.0);

    /* ties: the smaller tree, then the lowest index */
    memset(v, 0, sizeof v);
    v[0].cached_blocks = 7; v[1].cached_blocks = 3; v[2].cached_blocks = 3;
    c.overlap_score_weight = 1.0;
    CHECK(sim_router_cache_pick_dynamo(&c, 160, 16, v, 3, 0.0) == 1);
    v[1].cached_blocks = 7; v[2].cached_blocks = 7;
    CHECK(sim_router_cache_pick_dynamo(&c, 160, 16, v, 3, 0.0) == 0);
}

/* Views with Dynamo logits 10, 13, 19 (bt 1, input 10, full match). */
static void dynamo_views(sim_router_view *v, int64_t scale)
{
    memset(v, 0, 3 * sizeof *v);
    for (int i = 0; i < 3; i++) v[i].matched_tokens = 10;
    v[0].active_blocks = 0 * scale;
    v[1].active_blocks = 3 * scale;
    v[2].active_blocks = 9 * scale;
}

static void test_dynamo_softmax(void)
{
    sim_routing_cfg c = base_cfg(SIM_PRESET_DYNAMO);
    c.temperature = 1.0;
    sim_router_view v[3];
    dynamo_views(v, 1);
    double p[3], want[3], z = 0;
    /* range 9: weights exp(−0/9), exp(−3/9), exp(−9/9) */
    double e[3] = {exp(0.0), exp(-1.0 / 3.0), exp(-1.0)};
    for (int i = 0; i < 3; i++) z += e[i];
    for (int i = 0; i < 3; i++) want[i] = e[i] / z;
    sim_router_cache_dynamo_probs(&c, 10, 1, v, 3, p);
    for (int i = 0; i < 3; i++) CHECK_NEAR(p[i], want[i], 1e-12);

    /* scale-free: logits 10, 40, 100 have the same normalised spread */
    double q[3];
    dynamo_views(v, 10);
    sim_router_cache_dynamo_probs(&c, 10, 1, v, 3, q);
    for (int i = 0; i < 3; i++) CHECK_NEAR(q[i], want[i], 1e-12);

    /* the temperature sharpens: T = 0.1 puts almost all mass on the argmin */
    c.temperature = 0.1;
    sim_router_cache_dynamo_probs(&c, 10, 1, v, 3, q);
    CHECK(q[0] > 0.95 && q[2] < 1e-4);
    CHECK_NEAR(q[1] / q[0], exp(-(1.0 / 3.0) / 0.1), 1e-12);
    c.temperature = 1.0;

    /* equal logits: uniform */
    memset(v, 0, sizeof v);
    sim_router_cache_dynamo_probs(&c, 10, 1, v, 3, q);
    for (int i = 0; i < 3; i++) CHECK_NEAR(q[i], 1.0 / 3.0, 1e-12);

    /* the inverse-CDF pick at the edges of u */
    dynamo_views(v, 1);
    CHECK(sim_router_cache_pick_dynamo(&c, 10, 1, v, 3, 0.0) == 0);
    CHECK(sim_router_cache_pick_dynamo(&c, 10, 1, v, 3, want[0] - 1e-9) == 0);
    CHECK(sim_router_cache_pick_dynamo(&c, 10, 1, v, 3, want[0] + 1e-9) == 1);
    CHECK(sim_router_cache_pick_dynamo(&c, 10, 1, v, 3, 0.999999) == 2);

    /* sampling through the router: frequencies match softmax */
    sim_router *r = NULL;
    sim_err err;
    CHECK(sim_router_cache_create(&c, 1, 42, &r, &err) == SIM_OK);
    if (!r) return;
    sim_request_spec rq = req_of(10);
    int counts[3] = {0, 0, 0}, in_range = 1;
    const int draws = 40000;
    for (int k = 0; k < draws; k++) {
        int32_t i = sim_router_pick(r, &rq, v, 3);
        if (i >= 0 && i < 3)
            counts[i]++;
        else
            in_range = 0;
    }
    CHECK(in_range);
    /* binomial sd ≤ 0.0025 at 40000 draws; 0.01 is four sd */
    for (int i = 0; i < 3; i++) CHECK_NEAR((double)counts[i] / draws, want[i], 0.01);
    sim_router_destroy(r);
}

/* ---- llm-d ---------------------------------------------------------- */

static void llmd_views(sim_router_view *v)
{
    memset(v, 0, 3 * sizeof *v);
    /* prefix .8/0/.4, queue (min-max over 4,0,2) 0/1/.5, kv free .1/.9/.5 */
    v[0].matched_tokens = 80; v[0].waiting = 4; v[0].kv_blocks_used = 90; v[0].kv_blocks_total = 100;
    v[1].matched_tokens = 0;  v[1].waiting = 0; v[1].kv_blocks_used = 10; v[1].kv_blocks_total = 100;
    v[2].matched_tokens = 40; v[2].waiting = 2; v[2].kv_blocks_used = 50; v[2].kv_blocks_total = 100;
}

static void test_llmd(void)
{
    sim_routing_cfg c = base_cfg(SIM_PRESET_LLMD);
    sim_router_view v[3];
    llmd_views(v);
    CHECK_NEAR(sim_router_cache_llmd_score(&c, 100, v, 3, 0), 0.9, 1e-12);
    CHECK_NEAR(sim_router_cache_llmd_score(&c, 100, v, 3, 1), 1.9, 1e-12);
    CHECK_NEAR(sim_router_cache_llmd_score(&c, 100, v, 3, 2), 1.4, 1e-12);
    CHECK(sim_router_cache_pick_llmd(&c, 100, v, 3) == 1);
    c.w_prefix = 10; /* 8.1, 1.9, 5.4 */
    CHECK_NEAR(sim_router_cache_llmd_score(&c, 100, v, 3, 0), 8.1, 1e-12);
    CHECK(sim_router_cache_pick_llmd(&c, 100, v, 3) == 0);
    c.w_prefix = 3; c.w_load = 0.5; c.w_kv = 0; /* 2.4, 0.5, 1.45 */
    CHECK_NEAR(sim_router_cache_llmd_score(&c, 100, v, 3, 2), 1.45, 1e-12);
    CHECK(sim_router_cache_pick_llmd(&c, 100, v, 3) == 0);
    c.w_prefix = 0; c.w_load = 0; c.w_kv = 1; /* kv only: most free */
    CHECK(sim_router_cache_pick_llmd(&c, 100, v, 3) == 1);
    c.w_prefix = 1; c.w_load = 4; c.w_kv = 0; /* .8, 4, 2.4 */
    CHECK(sim_router_cache_pick_llmd(&c, 100, v, 3) == 1);

    /* queue scorer: min-max over the candidates, 1 when all equal */
    c = base_cfg(SIM_PRESET_LLMD);
    c.w_prefix = 0; c.w_kv = 0;
    v[0].waiting = 2; v[1].waiting = 4; v[2].waiting = 6;
    CHECK_NEAR(sim_router_cache_llmd_score(&c, 100, v, 3, 0), 1.0, 1e-12);
    CHECK_NEAR(sim_router_cache_llmd_score(&c, 100, v, 3, 1), 0.5, 1e-12);
    CHECK_NEAR(sim_router_cache_llmd_score(&c, 100, v, 3, 2), 0.0, 1e-12);
    v[0].waiting = v[1].waiting = v[2].waiting = 3;
    for (int32_t i = 0; i < 3; i++) CHECK_NEAR(sim_router_cache_llmd_score(&c, 100, v, 3, i), 1.0, 1e-12);
    CHECK(sim_router_cache_pick_llmd(&c, 100, v, 3) == 0); /* all tied: lowest index */
    /* no KV capacity known: the kv scorer contributes 0, not a division by 0 */
    c = base_cfg(SIM_PRESET_LLMD);
    memset(v, 0, sizeof v);
    CHECK_NEAR(sim_router_cache_llmd_score(&c, 0, v, 3, 0), 1.0, 1e-12);
}

/* ---- the router through the vtable ---------------------------------- */

static void test_router_dispatch(void)
{
    sim_err err;
    sim_router *r = NULL;
    sim_router_view v[3];
    sim_request_spec rq = req_of(100);

    sim_routing_cfg c = base_cfg(SIM_PRESET_NONE);
    c.lambda = 0;
    memset(v, 0, sizeof v);
    v[2].matched_tokens = 90; v[2].saved_ms = 9; v[2].queue_ms = 500;
    CHECK(sim_router_cache_create(&c, 16, 1, &r, &err) == SIM_OK);
    if (r) {
        CHECK(sim_router_pick(r, &rq, v, 3) == 2);
        CHECK(sim_router_pick(r, &rq, v, 1) == 0);
        sim_router_destroy(r);
    }
    c.lambda = 1e12;
    CHECK(sim_router_cache_create(&c, 16, 1, &r, &err) == SIM_OK);
    if (r) {
        CHECK(sim_router_pick(r, &rq, v, 3) == 0);
        sim_router_destroy(r);
    }

    c = base_cfg(SIM_PRESET_SGLANG);
    llmd_views(v); /* balanced loads; best match 80/100 > 0.5 → 0 */
    CHECK(sim_router_cache_create(&c, 16, 1, &r, &err) == SIM_OK);
    if (r) {
        CHECK(sim_router_pick(r, &rq, v, 3) == 0);
        sim_router_destroy(r);
    }

    c = base_cfg(SIM_PRESET_DYNAMO);
    v[0].active_blocks = 100; /* 100 + 7 + 1.25, 0 + 7 + 6.25, 0 + 7 + 3.75 */
    CHECK(sim_router_cache_create(&c, 16, 1, &r, &err) == SIM_OK);
    if (r) {
        CHECK(sim_router_pick(r, &rq, v, 3) == 2);
        sim_router_destroy(r);
    }

    c = base_cfg(SIM_PRESET_LLMD);
    CHECK(sim_router_cache_create(&c, 16, 1, &r, &err) == SIM_OK);
    if (r) {
        CHECK(sim_router_pick(r, &rq, v, 3) == 1);
        sim_router_destroy(r);
    }
}

/* The same seed gives the same picks; another seed gives other picks. */
static void test_determinism(void)
{
    sim_routing_cfg c = base_cfg(SIM_PRESET_DYNAMO);
    c.temperature = 0.7;
    sim_router_view v[3];
    dynamo_views(v, 1);
    sim_request_spec rq = req_of(10);
    sim_router *a = NULL, *b = NULL, *d = NULL;
    sim_err err;
    CHECK(sim_router_cache_create(&c, 1, 2024, &a, &err) == SIM_OK);
    CHECK(sim_router_cache_create(&c, 1, 2024, &b, &err) == SIM_OK);
    CHECK(sim_router_cache_create(&c, 1, 2025, &d, &err) == SIM_OK);
    if (!a || !b || !d) goto out;
    int same = 1, differ = 0;
    for (int k = 0; k < 500; k++) {
        int32_t x = sim_router_pick(a, &rq, v, 3);
        int32_t y = sim_router_pick(b, &rq, v, 3);
        int32_t z = sim_router_pick(d, &rq, v, 3);
        if (x != y) same = 0;
        if (x != z) differ = 1;
    }
    CHECK_MSG(same, "two routers with one seed diverged");
    CHECK_MSG(differ, "routers with different seeds made identical picks");
out:
    sim_router_destroy(a);
    sim_router_destroy(b);
    sim_router_destroy(d);
}

/* ---- rejected configurations ---------------------------------------- */

static void expect_reject(const sim_routing_cfg *c, int32_t block_tokens, const char *needle)
{
    sim_err err;
    err.msg[0] = 0;
    sim_router *r = (sim_router *)&err; /* must be reset to NULL on failure */
    int rc = sim_router_cache_create(c, block_tokens, 1, &r, &err);
    CHECK_MSG(rc == SIM_EINVAL, "expected SIM_EINVAL for '%s', got %d", needle, rc);
    CHECK(r == NULL);
    CHECK_CONTAINS(err.msg, needle);
    if (rc == SIM_OK) sim_router_destroy(r);
}

static void test_bad_config(void)
{
    sim_routing_cfg c;

    c = base_cfg(SIM_PRESET_NONE);
    c.lambda = -1;
    expect_reject(&c, 16, "routing.lambda");
    c.lambda = NAN;
    expect_reject(&c, 16, "routing.lambda");
    c.lambda = INFINITY;
    expect_reject(&c, 16, "1e12");

    c = base_cfg(SIM_PRESET_SGLANG);
    c.cache_threshold = 1.5;
    expect_reject(&c, 16, "routing.cache_threshold must be in [0, 1]");
    c = base_cfg(SIM_PRESET_SGLANG);
    c.balance_abs_threshold = -3;
    expect_reject(&c, 16, "routing.balance_abs_threshold");
    c = base_cfg(SIM_PRESET_SGLANG);
    c.balance_rel_threshold = NAN;
    expect_reject(&c, 16, "routing.balance_rel_threshold");

    c = base_cfg(SIM_PRESET_DYNAMO);
    expect_reject(&c, 0, "cache.block_tokens > 0");
    c.overlap_score_weight = -1;
    expect_reject(&c, 16, "routing.overlap_score_weight");
    c = base_cfg(SIM_PRESET_DYNAMO);
    c.temperature = -0.5;
    expect_reject(&c, 16, "routing.temperature");

    c = base_cfg(SIM_PRESET_LLMD);
    c.w_kv = -1;
    expect_reject(&c, 16, "routing.w_kv");
    c.w_prefix = c.w_load = c.w_kv = 0;
    expect_reject(&c, 16, "at least one positive weight");

    c = base_cfg(SIM_PRESET_NONE);
    c.preset = (sim_route_preset)9;
    expect_reject(&c, 16, "unknown preset 9");
    c = base_cfg(SIM_PRESET_NONE);
    c.policy = SIM_ROUTE_LEAST_LOADED;
    expect_reject(&c, 16, "cache_aware");

    /* settings a preset does not use are not its business */
    c = base_cfg(SIM_PRESET_LLMD);
    c.temperature = -1;
    CHECK(sim_router_cache_validate(&c, 0, NULL) == SIM_OK);
    /* a NULL sim_err is allowed */
    c = base_cfg(SIM_PRESET_NONE);
    c.lambda = -1;
    CHECK(sim_router_cache_validate(&c, 16, NULL) == SIM_EINVAL);
}

static const test_case cases[] = {
    {"score_rule", test_score_rule},
    {"score_limits_random", test_score_limits_random},
    {"sglang", test_sglang},
    {"dynamo_logit", test_dynamo_logit},
    {"dynamo_argmin", test_dynamo_argmin},
    {"dynamo_softmax", test_dynamo_softmax},
    {"llmd", test_llmd},
    {"router_dispatch", test_router_dispatch},
    {"determinism", test_determinism},
    {"bad_config", test_bad_config},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_router_cache", cases);
}
