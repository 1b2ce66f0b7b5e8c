/* test_cache — prefix caching inside the simulator: a repeated prefix is
 * skipped by the next prefill (timing checked against the cost model),
 * cached and referenced blocks are accounted so that everything returns at
 * the end, the Mooncake trace head gets a real hit rate, and the
 * cache-aware router trades hit rate against load balance with λ. */
#include "model_catalog.h"
#include "model_cost.h"
#include "sim_cluster.h"
#include "test_util.h"
#include "test_model_util.h"

static const char *src;

static void base(sim_scenario *sc, const char *trace)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    sc->workload.requests = 0;
    sc->workload.trace.format = SIM_TRACE_MOONCAKE;
    snprintf(sc->workload.trace.path, sizeof sc->workload.trace.path, "%s/%s", src, trace);
    sc->cache.enabled = 1;
    sc->cache.block_tokens = 512;
    sc->output.sample_interval_s = 1;
}

static int run(const sim_scenario *sc, sim_summary *sum, sim_cluster_state *st, sim_req_record *first2)
{
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    int rc = sim_cluster_create(sc, &c, &err);
    CHECK_MSG(rc == 0, "create: %s", err.msg);
    if (rc) return rc;
    rc = sim_cluster_run(c, sum, &err);
    CHECK_MSG(rc == 0, "run: %s", err.msg);
    sim_cluster_state_get(c, st);
    int64_t n = 0;
    const sim_req_record *r = sim_metrics_requests(sim_cluster_metrics(c), &n);
    if (first2 && n >= 2) {
        first2[0] = r[0].id == 0 ? r[0] : r[1];
        first2[1] = r[0].id == 0 ? r[1] : r[0];
    }
    CHECK(st->kv_blocks_used == 0 && st->cache_referenced == 0 && st->outstanding_tokens == 0);
    CHECK(st->in_flight == 0);
    sim_cluster_destroy(c);
    return rc;
}

/* Request 2 shares blocks 1,2,3 (1536 tokens) with request 1: its prefill
 * computes 2100 - 1536 = 564 tokens over 1536 cached ones. */
static void test_reuse_timing(void)
{
    sim_scenario sc;
    base(&sc, "tests/data/cache/repeat.jsonl");
    sim_summary sum;
    sim_cluster_state st;
    sim_req_record r[2];
    if (run(&sc, &sum, &st, r)) return;
    CHECK(r[0].cached_tokens == 0);
    CHECK_MSG(r[1].cached_tokens == 1536, "cached %d", r[1].cached_tokens);
    model_cost *cost = test_cost_model("llama-3.1-8b", "h100-sxm", 1, sc.deployment.pools[0].scheduler.overhead_us);
    if (!cost) return;
    model_chunk ch = {.tokens = 564, .cached = 1536};
    model_batch b = {.n_chunks = 1, .chunks = &ch};
    sim_time want = (sim_time)(model_cost_iteration(cost, &b, NULL) * 1e9 + 0.5);
    CHECK_MSG(r[1].first_token - r[1].arrival == want, "TTFT %lld ns, expected %lld",
              (long long)(r[1].first_token - r[1].arrival), (long long)want);
    CHECK_NEAR(sum.cache_hit_rate, 1536.0 / 4100.0, 1e-12);
    model_cost_destroy(cost);

    /* Without the cache the same request prefills everything. */
    sc.cache.enabled = 0;
    if (run(&sc, &sum, &st, r)) return;
    CHECK(r[1].cached_tokens == 0 && sum.cache_hit_rate == 0);
}

static void test_mooncake_head(void)
{
    sim_scenario sc;
    base(&sc, "tests/data/workload/mooncake_conversation_head.jsonl");
    sc.deployment.pools[0].instances = 2;
    sim_summary on, off;
    sim_cluster_state st;
    if (run(&sc, &on, &st, NULL)) return;
    CHECK(on.requests_completed == 200);
    CHECK_MSG(on.cache_hit_rate > 0.05, "hit rate %.3f", on.cache_hit_rate);
    sc.cache.enabled = 0;
    if (run(&sc, &off, &st, NULL)) return;
    CHECK_MSG(on.ttft_ms.mean < off.ttft_ms.mean, "cache should cut TTFT: %.1f vs %.1f ms", on.ttft_ms.mean,
              off.ttft_ms.mean);

    /* Cache-aware routing: lambda 0 follows the cache, a huge lambda the load. */
    sc.cache.enabled = 1;
    sc.deployment.pools[0].instances = 4;
    sc.routing.policy = SIM_ROUTE_CACHE_AWARE;
    sc.routing.lambda = 0;
    sim_summary sticky, balanced;
    if (run(&sc, &sticky, &st, NULL)) return;
    sc.routing.lambda = 1e12;
    if (run(&sc, &balanced, &st, NULL)) return;
    CHECK_MSG(sticky.cache_hit_rate >= balanced.cache_hit_rate, "hit %.3f (λ=0) vs %.3f (λ=1e12)",
              sticky.cache_hit_rate, balanced.cache_hit_rate);
    CHECK_MSG(balanced.load_cv <= sticky.load_cv, "load CV %.3f (λ=1e12) vs %.3f (λ=0)", balanced.load_cv,
              sticky.load_cv);
    /* The presets and the approximate view run end to end. */
    const sim_route_preset presets[] = {SIM_PRESET_SGLANG, SIM_PRESET_DYNAMO, SIM_PRESET_LLMD};
    for (int i = 0; i < 3; i++) {
        sc.routing.preset = presets[i];
        sim_summary s;
        if (run(&sc, &s, &st, NULL)) return;
        CHECK(s.requests_completed == 200 && s.cache_hit_rate > 0);
    }
    sc.routing.preset = SIM_PRESET_NONE;
    sc.routing.lambda = 1;
    sc.routing.view = SIM_VIEW_APPROXIMATE;
    sc.routing.snapshot_interval_s = 2;
    sim_summary ap;
    if (run(&sc, &ap, &st, NULL)) return;
    CHECK(ap.requests_completed == 200 && ap.cache_hit_rate > 0);
}

/* Synthetic prefixes through the whole simulator. */
static void test_synthetic(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.cache.enabled = 1;
    sc.workload.requests = 400;
    sc.workload.arrival.rate = 10;
    sc.workload.input_tokens.dist = SIM_DIST_FIXED;
    sc.workload.input_tokens.value = 256;
    sc.workload.output_tokens.value = 32;
    sc.workload.prefix.kind = SIM_PREFIX_SYSTEM_PROMPT;
    sc.workload.prefix.prompts = 4;
    sc.workload.prefix.prompt_tokens = 2048;
    sim_summary sum;
    sim_cluster_state st;
    if (run(&sc, &sum, &st, NULL)) return;
    /* Each prompt is 4 full blocks of its 2304 tokens; all but its first use hit. */
    double ideal = 2048.0 / 2304.0 * (400 - 4) / 400.0;
    CHECK_MSG(sum.cache_hit_rate > 0.95 * ideal && sum.cache_hit_rate <= ideal + 1e-9,
              "hit rate %.4f, ideal %.4f", sum.cache_hit_rate, ideal);

    sc.workload.prefix.kind = SIM_PREFIX_MULTI_TURN;
    sc.workload.prefix.block_tokens = 64;
    sc.cache.block_tokens = 64;
    sc.workload.arrival.process = SIM_ARRIVAL_CLOSED;
    sc.workload.arrival.concurrency = 8;
    sc.workload.prefix.turns = 5;
    if (run(&sc, &sum, &st, NULL)) return;
    CHECK(sum.requests_completed == 400);
    CHECK_MSG(sum.cache_hit_rate > 0.4, "multi-turn hit rate %.3f", sum.cache_hit_rate);
}

/* KV sharing: pulling prefixes from peers and a tiered pool both raise the
 * hit rate of round-robin instances over private caches. */
static void test_sharing(void)
{
    sim_scenario sc;
    base(&sc, "tests/data/workload/mooncake_conversation_head.jsonl");
    sc.deployment.pools[0].instances = 4;
    sc.hardware.gpus_per_node = 2;
    sim_summary none, pull, pool;
    sim_cluster_state st;
    if (run(&sc, &none, &st, NULL)) return;
    sc.cache.sharing = SIM_SHARING_PULL;
    if (run(&sc, &pull, &st, NULL)) return;
    CHECK_MSG(pull.cache_hit_rate > none.cache_hit_rate, "pull %.3f vs none %.3f", pull.cache_hit_rate,
              none.cache_hit_rate);
    CHECK(st.fetched_blocks > 0);
    /* Small HBM caches (more evictions) over a host tier and a pool. */
    sc.cache.sharing = SIM_SHARING_POOL;
    sc.deployment.pools[0].scheduler.gpu_mem_util = 0.3;
    sc.cache.host_gb = 20;
    sc.cache.pool_gb = 200;
    if (run(&sc, &pool, &st, NULL)) return;
    sc.cache.sharing = SIM_SHARING_NONE;
    sim_summary small;
    if (run(&sc, &small, &st, NULL)) return;
    CHECK_MSG(pool.cache_hit_rate > small.cache_hit_rate, "pool %.3f vs local %.3f", pool.cache_hit_rate,
              small.cache_hit_rate);
    CHECK(pool.requests_completed + pool.requests_rejected == 200);
}

/* Pull fetches a peer's prefix exactly when moving it beats recomputing
 * it: request 2 lands on the other instance (round robin) and could take
 * request 1's three cached blocks (1536 tokens) over one NIC. */
static void test_pull_decision(void)
{
    model_cost *cost = test_cost_model("llama-3.1-8b", "h100-sxm", 1, 1500);
    if (!cost) return;
    model_chunk ch = {.tokens = 1536, .cached = 0};
    model_batch b = {.n_chunks = 1, .chunks = &ch};
    double recompute = model_cost_iteration(cost, &b, NULL);
    model_cost_destroy(cost);
    double bytes = 1536.0 * 131072.0;
    /* Break-even NIC bandwidth (latency 0): bytes / recompute, in Gb/s. */
    double even_gbps = bytes / recompute * 8 / 1e9;
    const double factor[2] = {1.1, 0.9};
    for (int i = 0; i < 2; i++) {
        sim_scenario sc;
        base(&sc, "tests/data/cache/pull.jsonl");
        sc.deployment.pools[0].instances = 2;
        sc.hardware.gpus_per_node = 1; /* instances on different nodes: the NIC path */
        sc.cache.sharing = SIM_SHARING_PULL;
        sc.network.nic_gbps = even_gbps * factor[i];
        sc.network.latency_us = 0;
        sim_summary sum;
        sim_cluster_state st;
        sim_req_record r[2];
        if (run(&sc, &sum, &st, r)) return;
        if (i == 0) {
            CHECK_MSG(st.fetched_blocks == 3 && r[1].cached_tokens == 1536,
                      "faster than recompute: fetched %lld blocks", (long long)st.fetched_blocks);
        } else {
            CHECK_MSG(st.fetched_blocks == 0 && r[1].cached_tokens == 0,
                      "slower than recompute: fetched %lld blocks", (long long)st.fetched_blocks);
        }
    }
}

static const test_case cases[] = {
    {"reuse_timing", test_reuse_timing},
    {"mooncake_head", test_mooncake_head},
    {"synthetic", test_synthetic},
    {"sharing", test_sharing},
    {"pull_decision", test_pull_decision},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    src = test_src_dir();
    return test_run("test_cache", cases);
}
