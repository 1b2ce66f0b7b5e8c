/* test_search_hetero — heterogeneous fleets in the search: each role of a
 * PD deployment on its own GPU type (search.prefill_gpus, decode_gpus),
 * ranked by the fleet's price.
 *
 * The search case is built so that the answer follows from the roofline
 * and the prices alone: Llama-3.1-8B (16.1 GB of BF16 weights) at tp1, one
 * prefill and one decode instance, a low fixed rate, and a TPOT bound of
 * 6.8 ms at p90. One decode step reads every weight once: 5.65 ms at an
 * H100's 3.35 TB/s × 0.85, 3.95 ms at an H200's 4.8 TB/s × 0.85, and with
 * the step's fixed costs the cost model prices one request's step at
 * 7.5 ms on H100 and 5.9 ms on H200, so only fleets decoding on H200 meet
 * the SLO, whatever prefills. At a
 * fixed rate every passing fleet delivers the same tokens, so the cost
 * objective picks the cheapest passing fleet: H100 prefill at 1 USD/h +
 * H200 decode at 2 beats H200 + H200 (3 < 4) — different types per role;
 * with H200 at 1 and H100 at 1.5 it is H200 + H200 (2 < 2.5) — one type.
 *
 * The KV moves between GPU types on the network model: a pool on another
 * type starts on its own node, so the KV crosses the NICs, at the slower
 * of the two (an A100's 25 GB/s against an H100's 50 GB/s), by hand; the
 * same type packs on one node and moves over NVLink. Bad per-role keys
 * (unknown GPU, a role no mode has, a GPU the model fits at no layout, a
 * missing price under the cost objective) are refused naming the key. */
#include "test_util.h"
#include "test_cluster_util.h"

#include "model_catalog.h"
#include "sim_loader.h"
#include "sim_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base_yaml =
    "name: t-hetero\n"
    "model: llama-3.1-8b\n"
    "hardware: {gpu: h100-sxm, gpus_per_node: 8, perf_db: none}\n"
    "workload:\n"
    "  requests: 60\n"
    "  arrival: {process: poisson, rate: 1}\n"
    "  input_tokens: {dist: uniform, min: 200, max: 400}\n"
    "  output_tokens: {dist: uniform, min: 32, max: 64}\n"
    "deployment:\n"
    "  mode: pd\n"
    "  pools:\n"
    "    - {role: prefill, instances: 1}\n"
    "    - {role: decode, instances: 1}\n"
    "slo: {ttft_ms: 1000, tpot_ms: 6.8}\n"
    "search:\n"
    "  max_gpus: 2\n"
    "  rate: 1\n"
    "  modes: pd\n"
    "  layouts: tp1\n"
    "  pd_ratios: \"1:1\"\n"
    "  prefill_gpus: \"h100-sxm,h200-sxm\"\n"
    "  decode_gpus: \"h100-sxm,h200-sxm\"\n"
    "  max_seqs: \"16\"\n"
    "  max_batched_tokens: \"2048\"\n"
    "  chunk_tokens: \"1024\"\n"
    "  prices: \"h100-sxm=1,h200-sxm=2\"\n"
    "  objective: cost\n"
    "  requests: 60\n";

static int load(const char *const *sets, int n, sim_scenario *sc, sim_err *err)
{
    return sim_loader_load_string(base_yaml, strlen(base_yaml), "test", sets, n, sc, err);
}

/* Runs the search; returns the winner's index or -1. */
static int32_t best_of(const char *prices, sim_search **out)
{
    char set[160];
    snprintf(set, sizeof set, "search.prices=%s", prices);
    const char *sets[] = {set};
    sim_scenario sc;
    sim_err err = {{0}};
    *out = NULL;
    int rc = load(sets, 1, &sc, &err);
    CHECK_MSG(rc == 0, "load: %s", err.msg);
    if (rc) return -1;
    sim_search_opts o = {.threads = 2, .quiet = 1, .no_prune = 1};
    rc = sim_search_create(&sc, &o, out, &err);
    CHECK_MSG(rc == 0, "create: %s", err.msg);
    if (rc) return -1;
    rc = sim_search_run(*out, &err);
    CHECK_MSG(rc == 0, "run: %s", err.msg);
    int32_t w = -1;
    return rc == 0 && sim_search_ranking(*out, &w, 1) >= 1 ? w : -1;
}

static const char *pool_gpu(const sim_search *s, int32_t i, sim_role role)
{
    const sim_search_cand *c = sim_search_cand_get(s, i);
    for (int32_t p = 0; p < c->n_pools; p++)
        if (c->pools[p].role == role) return c->pools[p].gpu;
    return "";
}

static void case_types_per_role(void)
{
    sim_search *s = NULL;
    int32_t w = best_of("h100-sxm=1,h200-sxm=2", &s);
    REQUIRE(s);
    REQUIRE_MSG(w >= 0, "no fleet meets the SLO");
    CHECK(sim_search_count(s) == 4);
    /* Exactly the two fleets decoding on H200 meet the 6.8 ms TPOT bound. */
    int ok = 0;
    for (int32_t i = 0; i < sim_search_count(s); i++) {
        const sim_search_result *r = sim_search_result_get(s, i);
        int h200_decode = strcmp(pool_gpu(s, i, SIM_ROLE_DECODE), "h200-sxm") == 0;
        CHECK_MSG((r->status == SIM_CAND_OK) == h200_decode, "%s: status %d (%s)", sim_search_cand_get(s, i)->label,
                  (int)r->status, r->reason);
        ok += r->status == SIM_CAND_OK;
    }
    CHECK(ok == 2);
    CHECK_MSG(strcmp(pool_gpu(s, w, SIM_ROLE_PREFILL), "h100-sxm") == 0 &&
                  strcmp(pool_gpu(s, w, SIM_ROLE_DECODE), "h200-sxm") == 0,
              "winner %s", sim_search_cand_get(s, w)->label);
    /* The fleet's price: (1 + 2) / 2 GPUs per GPU-hour, 3 USD/h in all; per
     * million output tokens that over the goodput. */
    const sim_search_result *r = sim_search_result_get(s, w);
    const sim_search_cand *c = sim_search_cand_get(s, w);
    CHECK_NEAR(r->price, 1.5, 1e-12);
    CHECK_NEAR(r->price * c->gpus, 3.0, 1e-12);
    CHECK_NEAR(r->cost_per_mtok, 3.0 / 3600.0 / (r->goodput_per_gpu * c->gpus) * 1e6, 1e-9);
    printf("  winner %s: %.2f USD/h, %.3f USD per million output tokens\n", c->label, r->price * c->gpus,
           r->cost_per_mtok);
    /* The scenario it runs as names the decode pool's own GPU type. */
    sim_scenario run_sc;
    sim_err err = {{0}};
    CHECK(sim_search_apply(s, w, 1, 0, &run_sc, &err) == 0);
    CHECK(strcmp(run_sc.hardware.gpu, "h100-sxm") == 0);
    CHECK(strcmp(run_sc.deployment.pools[1].gpu, "h200-sxm") == 0);
    CHECK(run_sc.deployment.pools[0].gpu[0] == '\0');
    sim_search_stats st;
    sim_search_stats_get(s, &st);
    CHECK(st.hetero == 1 && st.ok == 2);
    sim_search_destroy(s);
}

static void case_one_type_when_cheaper(void)
{
    sim_search *s = NULL;
    int32_t w = best_of("h100-sxm=1.5,h200-sxm=1", &s);
    REQUIRE(s);
    REQUIRE_MSG(w >= 0, "no fleet meets the SLO");
    CHECK_MSG(strcmp(pool_gpu(s, w, SIM_ROLE_PREFILL), "h200-sxm") == 0 &&
                  strcmp(pool_gpu(s, w, SIM_ROLE_DECODE), "h200-sxm") == 0,
              "winner %s", sim_search_cand_get(s, w)->label);
    CHECK_NEAR(sim_search_result_get(s, w)->price, 1.0, 1e-12);
    sim_search_destroy(s);
}

/* One request, PD tp1 -> tp1, 8 GPUs per node, 7 us network latency, the
 * catalogue's links: the KV's transfer time. */
static sim_time transfer_ns(const char *prefill_gpu, const char *decode_gpu, double *bytes)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    snprintf(sc.model, sizeof sc.model, "llama-3.1-8b");
    snprintf(sc.hardware.gpu, sizeof sc.hardware.gpu, "h100-sxm");
    snprintf(sc.hardware.perf_db, sizeof sc.hardware.perf_db, "none");
    sc.hardware.gpus_per_node = 8;
    sc.deployment.mode = SIM_MODE_PD;
    sc.deployment.n_pools = 2;
    sc.deployment.pools[0].role = SIM_ROLE_PREFILL;
    sc.deployment.pools[0].instances = 1;
    sc.deployment.pools[1].role = SIM_ROLE_DECODE;
    sc.deployment.pools[1].instances = 1;
    snprintf(sc.deployment.pools[0].gpu, sizeof sc.deployment.pools[0].gpu, "%s", prefill_gpu);
    snprintf(sc.deployment.pools[1].gpu, sizeof sc.deployment.pools[1].gpu, "%s", decode_gpu);
    sc.network.latency_us = 7;
    sc.workload.requests = 1;
    sc.workload.input_tokens.dist = SIM_DIST_FIXED;
    sc.workload.input_tokens.value = 2000;
    sc.workload.output_tokens.dist = SIM_DIST_FIXED;
    sc.workload.output_tokens.value = 4;
    run_result r;
    if (run(&sc, &r) || r.n != 1) {
        free(r.recs);
        return -1;
    }
    *bytes = r.recs[0].kv_bytes;
    sim_time t = r.recs[0].kv_arrived - r.recs[0].kv_reserved;
    free(r.recs);
    return t;
}

static double nic_of(const char *name)
{
    model_gpu g;
    sim_err err = {{0}};
    return model_catalog_gpu(name, &g, &err) == 0 ? g.nic_bw : 0;
}

static void case_transfer_across_types(void)
{
    double bytes = 0;
    const double nic_a100 = nic_of("a100-sxm-80g"), nic_h100 = nic_of("h100-sxm"), nic_h200 = nic_of("h200-sxm");
    REQUIRE(nic_a100 > 0 && nic_h100 > nic_a100 && nic_h200 == nic_h100);
    /* A100 prefill -> H100 decode and back: the A100's NIC is the bottleneck. */
    const char *pairs[][2] = {{"a100-sxm-80g", "h100-sxm"}, {"h100-sxm", "a100-sxm-80g"}};
    for (int i = 0; i < 2; i++) {
        sim_time got = transfer_ns(pairs[i][0], pairs[i][1], &bytes);
        REQUIRE(got > 0 && bytes > 0);
        sim_time want = 7000 + (sim_time)ceil(bytes * 1e9 / nic_a100);
        CHECK_MSG(llabs(got - want) <= 2, "%s -> %s: %lld ns, expected %lld (%.0f bytes at %.3g B/s)", pairs[i][0],
                  pairs[i][1], (long long)got, (long long)want, bytes, nic_a100);
    }
    /* H100 -> H200: two types with the same NIC, still on two nodes. */
    sim_time got = transfer_ns("h100-sxm", "h200-sxm", &bytes);
    sim_time want = 7000 + (sim_time)ceil(bytes * 1e9 / nic_h100);
    CHECK_MSG(llabs(got - want) <= 2, "h100 -> h200: %lld ns, expected %lld", (long long)got, (long long)want);
    /* One type: both instances on one node, over NVLink (faster, no network latency). */
    sim_time same = transfer_ns("", "", &bytes);
    CHECK_MSG(same > 0 && same < want - 7000, "h100 -> h100 %lld ns, not faster than the NIC's %lld", (long long)same,
              (long long)want);
    printf("  %.0f KV bytes: a100->h100 over NICs %.3f ms, h100->h200 %.3f ms, h100->h100 over NVLink %.3f ms\n", bytes,
           (7000 + bytes * 1e9 / nic_a100) * 1e-6, want * 1e-6, same * 1e-6);
}

static void expect_refused(const char *set, const char *key, const char *what)
{
    const char *sets[] = {set};
    sim_scenario sc;
    sim_err err = {{0}};
    int rc = load(sets, 1, &sc, &err);
    sim_search *s = NULL;
    if (rc == 0) {
        sim_search_opts o = {.threads = 1, .quiet = 1};
        rc = sim_search_create(&sc, &o, &s, &err);
        sim_search_destroy(s);
    }
    CHECK_MSG(rc < 0, "%s: accepted", set);
    CHECK_MSG(strstr(err.msg, key) && strstr(err.msg, what), "%s: '%s' (expected %s ... %s)", set, err.msg, key, what);
}

static void case_bad_keys(void)
{
    expect_refused("search.decode_gpus=h100-sxm,nosuchgpu", "search.decode_gpus", "nosuchgpu");
    expect_refused("search.decode_gpus=h200-sxm,h200-sxm", "search.decode_gpus", "twice");
    expect_refused("search.ffn_gpus=h200-sxm", "search.ffn_gpus", "no mode");
    /* 405B at tp8 (101.5 GB of weights per GPU) does not fit an 80 GB H100
     * at any layout searched; a 141 GB H200 holds it. */
    const char *sets[] = {"model=llama-3.1-405b", "search.layouts=tp8", "search.max_gpus=16",
                          "search.decode_gpus=h200-sxm,h100-sxm", "search.prefill_gpus=h200-sxm"};
    sim_scenario sc;
    sim_err err = {{0}};
    REQUIRE(load(sets, 5, &sc, &err) == 0);
    sim_search *s = NULL;
    sim_search_opts o = {.threads = 1, .quiet = 1};
    CHECK(sim_search_create(&sc, &o, &s, &err) < 0);
    CHECK_MSG(strstr(err.msg, "search.decode_gpus") && strstr(err.msg, "h100-sxm") && strstr(err.msg, "any layout"),
              "%s", err.msg);
    sim_search_destroy(s);
    /* The cost objective needs every type a role may run on priced. */
    expect_refused("search.prices=h100-sxm=1", "search.prices", "h200-sxm");
}

static const test_case cases[] = {
    {"types_per_role", case_types_per_role},
    {"one_type_when_cheaper", case_one_type_when_cheaper},
    {"transfer_across_types", case_transfer_across_types},
    {"bad_keys", case_bad_keys},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_search_hetero", cases);
}
