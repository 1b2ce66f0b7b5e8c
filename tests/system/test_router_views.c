/* test_router_views — every router decides on the view it is configured
 * with: the live instance state (routing.snapshot_interval_s 0) or a
 * snapshot refreshed every snapshot_interval_s.
 *   - On hand-built views, a stale snapshot changes the decisions of
 *     least_loaded, power_of_two and cache_aware (preset none).
 *   - End to end, the three policies give different results at 0, 1, 10
 *     and 60 s, and the same results twice for one seed.
 *   - Hand-checked: a snapshot never refreshed during the run holds the
 *     idle cluster of t = 0, so least_loaded (ties rotate) routes exactly
 *     as round_robin, cache_aware with no prefixes (ties to the lowest
 *     index) sends every request to instance 0, and pd's decode router
 *     (least_loaded) alternates like round_robin. */
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_router.h"
#include "sim_router_cache.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the routers on hand-built views ------------------------------------ */

static void test_router_on_snapshot(void)
{
    sim_request_spec req = {.input_tokens = 1000};
    /* Live: instance 0 has since filled up; the snapshot still shows it idle. */
    sim_router_view live[2] = {{.outstanding_tokens = 50000, .waiting = 40, .queue_ms = 900},
                               {.outstanding_tokens = 2000, .waiting = 1, .queue_ms = 20}};
    sim_router_view snap[2] = {{.outstanding_tokens = 0, .queue_ms = 0},
                               {.outstanding_tokens = 2000, .waiting = 1, .queue_ms = 20}};
    const sim_route_policy pols[] = {SIM_ROUTE_LEAST_LOADED, SIM_ROUTE_POWER_OF_TWO};
    for (int p = 0; p < 2; p++) {
        sim_routing_cfg cfg = {.policy = pols[p]};
        sim_router *r = NULL;
        sim_err err = {{0}};
        REQUIRE_MSG(sim_router_create(&cfg, 5, &r, &err) == 0, "%s", err.msg);
        int on_live = 0, on_snap = 0;
        for (int i = 0; i < 20; i++) {
            on_live += sim_router_pick(r, &req, live, 2) == 1;
            on_snap += sim_router_pick(r, &req, snap, 2) == 0;
        }
        CHECK_MSG(on_live == 20 && on_snap == 20, "policy %d: %d/20 to the live least loaded, %d/20 to the stale one",
                  (int)pols[p], on_live, on_snap);
        sim_router_destroy(r);
    }
    /* cache_aware, preset none: the same prefix match everywhere, so the
     * queue term decides; it is the snapshot's. */
    sim_routing_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.policy = SIM_ROUTE_CACHE_AWARE;
    cfg.preset = SIM_PRESET_NONE;
    cfg.lambda = 1;
    sim_router *r = NULL;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_router_cache_create(&cfg, 16, 1, &r, &err) == SIM_OK, "%s", err.msg);
    for (int i = 0; i < 2; i++) {
        live[i].matched_tokens = snap[i].matched_tokens = 512;
        live[i].saved_ms = snap[i].saved_ms = 30;
    }
    CHECK(sim_router_pick(r, &req, live, 2) == 1);
    CHECK(sim_router_pick(r, &req, snap, 2) == 0);
    CHECK(sim_router_cache_pick_score(live, 2, 1) == 1 && sim_router_cache_pick_score(snap, 2, 1) == 0);
    sim_router_destroy(r);
}

/* ---- end to end ---------------------------------------------------------- */

static const char *colocated_yaml =
    "name: t-router-views\n"
    "seed: 42\n"
    "model: llama-3.1-8b\n"
    "hardware: {gpu: h100-sxm, gpus_per_node: 8}\n"
    "workload:\n"
    "  requests: 1200\n"
    "  arrival: {process: poisson, rate: 40}\n"
    "  input_tokens:  {dist: lognormal, mean: 1024, std: 512, min: 16, max: 8192}\n"
    "  output_tokens: {dist: uniform, min: 64, max: 448}\n"
    "deployment:\n"
    "  mode: colocated\n"
    "  pools:\n"
    "    - role: colocated\n"
    "      instances: 4\n"
    "      parallel: {tp: 1}\n"
    "      scheduler: {max_seqs: 256, max_batched_tokens: 8192, chunk_tokens: 2048}\n"
    "routing: {policy: least_loaded}\n";

static const char *pd_yaml =
    "name: t-router-views-pd\n"
    "seed: 7\n"
    "model: llama-3.1-8b\n"
    "hardware: {gpu: h100-sxm, gpus_per_node: 8}\n"
    "workload:\n"
    "  requests: 300\n"
    "  arrival: {process: poisson, rate: 20}\n"
    "  input_tokens:  {dist: lognormal, mean: 1024, std: 512, min: 16, max: 8192}\n"
    "  output_tokens: {dist: uniform, min: 16, max: 256}\n"
    "deployment:\n"
    "  mode: pd\n"
    "  kv_transfer: whole\n"
    "  decode_routing: least_loaded\n"
    "  pools:\n"
    "    - role: prefill\n"
    "      instances: 1\n"
    "      parallel: {tp: 1}\n"
    "    - role: decode\n"
    "      instances: 2\n"
    "      parallel: {tp: 1}\n"
    "routing: {policy: least_loaded}\n"
    "network: {nic_gbps: 400, latency_us: 5}\n";

typedef struct {
    uint64_t digest;   /* FNV-1a over every record's routing and timing */
    int64_t n;
    int64_t per_inst[8];
    int rr_order;      /* request i went to instance i mod 4 */
    double ttft_mean_ms;
} run_out;

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* Runs yaml with the --set overrides; 0 or -1 (with a failed check). */
static int run(const char *yaml, const char *const *sets, int n_sets, run_out *o)
{
    memset(o, 0, sizeof *o);
    sim_scenario *sc = malloc(sizeof *sc);
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    int rc = sc ? sim_loader_load_string(yaml, strlen(yaml), "t", sets, n_sets, sc, &err) : -1;
    CHECK_MSG(rc == 0, "load: %s", err.msg);
    if (rc == 0) {
        sc->output.store_requests = 1;
        rc = sim_cluster_create(sc, &c, &err);
        CHECK_MSG(rc == 0, "create: %s", err.msg);
    }
    sim_summary sum;
    if (rc == 0) {
        rc = sim_cluster_run(c, &sum, &err);
        CHECK_MSG(rc == 0, "run: %s", err.msg);
    }
    if (rc == 0) {
        const sim_req_record *r = sim_metrics_requests(sim_cluster_metrics(c), &o->n);
        o->digest = 1469598103934665603ULL;
        o->rr_order = o->n > 0;
        for (int64_t i = 0; i < o->n; i++) {
            o->digest = fnv(o->digest, &r[i].id, sizeof r[i].id);
            o->digest = fnv(o->digest, &r[i].instance, sizeof r[i].instance);
            o->digest = fnv(o->digest, &r[i].prefill_instance, sizeof r[i].prefill_instance);
            o->digest = fnv(o->digest, &r[i].first_token, sizeof r[i].first_token);
            o->digest = fnv(o->digest, &r[i].finish, sizeof r[i].finish);
            if (r[i].instance >= 0 && r[i].instance < 8) o->per_inst[r[i].instance]++;
            if ((uint64_t)r[i].instance != r[i].id % 4) o->rr_order = 0;
        }
        o->ttft_mean_ms = sum.ttft_ms.mean;
        CHECK_MSG(sum.requests_completed == o->n, "%lld completed, %lld records", (long long)sum.requests_completed,
                  (long long)o->n);
    }
    sim_cluster_destroy(c);
    free(sc);
    return rc == 0 ? 0 : -1;
}

static void test_intervals_change_results(void)
{
    const char *pols[] = {"least_loaded", "power_of_two", "cache_aware"};
    const char *ivs[] = {"0", "1", "10", "60"};
    for (int p = 0; p < 3; p++) {
        run_out o[4];
        char pol[64], iv[64];
        snprintf(pol, sizeof pol, "routing.policy=%s", pols[p]);
        for (int i = 0; i < 4; i++) {
            snprintf(iv, sizeof iv, "routing.snapshot_interval_s=%s", ivs[i]);
            const char *sets[] = {pol, iv};
            REQUIRE(run(colocated_yaml, sets, 2, &o[i]) == 0);
            REQUIRE_MSG(o[i].n == 1200, "%s at %s s: %lld requests recorded", pols[p], ivs[i], (long long)o[i].n);
            printf("%-12s snapshot %2s s: mean TTFT %8.1f ms, requests per instance %lld/%lld/%lld/%lld\n", pols[p],
                   ivs[i], o[i].ttft_mean_ms, (long long)o[i].per_inst[0], (long long)o[i].per_inst[1],
                   (long long)o[i].per_inst[2], (long long)o[i].per_inst[3]);
        }
        for (int i = 0; i < 4; i++)
            for (int k = i + 1; k < 4; k++)
                CHECK_MSG(o[i].digest != o[k].digest, "%s: snapshot %s s and %s s gave identical results", pols[p],
                          ivs[i], ivs[k]);
        /* A stale view routes worse than the live one. */
        CHECK_MSG(o[1].ttft_mean_ms > o[0].ttft_mean_ms, "%s: mean TTFT %.1f ms at 1 s vs %.1f live", pols[p],
                  o[1].ttft_mean_ms, o[0].ttft_mean_ms);
        /* Deterministic: the same interval and seed twice, bit for bit. */
        snprintf(iv, sizeof iv, "routing.snapshot_interval_s=%s", ivs[1]);
        const char *sets[] = {pol, iv};
        run_out again;
        REQUIRE(run(colocated_yaml, sets, 2, &again) == 0);
        CHECK_MSG(again.digest == o[1].digest, "%s: two runs at snapshot 1 s differ", pols[p]);

        if (p == 0) {
            /* Never refreshed within the run (1200 requests at 40/s ≈ 30 s <
             * 100 s): least_loaded sees four idle instances and rotates. */
            const char *rr[] = {"routing.policy=round_robin"};
            const char *stale[] = {"routing.snapshot_interval_s=100"};
            run_out a, b;
            REQUIRE(run(colocated_yaml, rr, 1, &a) == 0);
            REQUIRE(run(colocated_yaml, stale, 1, &b) == 0);
            CHECK(a.rr_order && b.rr_order);
            CHECK_MSG(a.digest == b.digest, "least_loaded on the t=0 snapshot differs from round_robin");
            CHECK(o[0].digest != b.digest && !o[0].rr_order); /* live least_loaded does not rotate blindly */
        }
        if (p == 2) {
            /* cache_aware without prefixes: every score ties on the t = 0
             * snapshot, so the lowest index takes everything; live, the
             * queue term spreads the load (ties, frequent at this load,
             * still favour the low indexes). */
            const char *stale[] = {"routing.policy=cache_aware", "routing.snapshot_interval_s=100"};
            run_out b;
            REQUIRE(run(colocated_yaml, stale, 2, &b) == 0);
            CHECK_MSG(b.per_inst[0] == 1200, "%lld of 1200 on instance 0", (long long)b.per_inst[0]);
            for (int i = 0; i < 4; i++)
                CHECK_MSG(o[0].per_inst[i] > 100 && o[0].per_inst[i] < 600, "live cache_aware: instance %d got %lld",
                          i, (long long)o[0].per_inst[i]);
        }
    }
}

/* pd: the decode router reads the snapshot too. With one prefill instance
 * the front router has no choice, so the runs differ only by where decode
 * goes: on the t = 0 snapshot least_loaded alternates exactly as
 * round_robin does. */
static void test_pd_decode_router(void)
{
    const char *live_ll[] = {"deployment.decode_routing=least_loaded"};
    const char *stale_ll[] = {"deployment.decode_routing=least_loaded", "routing.snapshot_interval_s=1000"};
    const char *stale_rr[] = {"deployment.decode_routing=round_robin", "routing.snapshot_interval_s=1000"};
    const char *live_rr[] = {"deployment.decode_routing=round_robin"};
    run_out a, b, d, e;
    REQUIRE(run(pd_yaml, live_ll, 1, &a) == 0);
    REQUIRE(run(pd_yaml, stale_ll, 2, &b) == 0);
    REQUIRE(run(pd_yaml, stale_rr, 2, &d) == 0);
    REQUIRE(run(pd_yaml, live_rr, 1, &e) == 0);
    REQUIRE(a.n == 300 && b.n == 300);
    CHECK_MSG(b.digest == d.digest, "decode least_loaded on the t=0 snapshot differs from round_robin");
    CHECK(d.digest == e.digest); /* round_robin reads no view */
    CHECK_MSG(a.digest != b.digest, "decode routing ignored the snapshot");
}

static const test_case cases[] = {
    {"router_on_snapshot", test_router_on_snapshot},
    {"intervals_change_results", test_intervals_change_results},
    {"pd_decode_router", test_pd_decode_router},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_router_views", cases);
}
