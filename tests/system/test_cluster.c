/* test_cluster — the colocated cluster end to end: conservation (every
 * request completes once, tokens add up, KV blocks and outstanding work all
 * return), Little's law, exact iteration timing against the cost model for
 * hand-checkable batches, chunked prefill, preemption by recompute,
 * rejection of requests that can never fit, closed-loop concurrency, the
 * clients' connection pool, overload detection and determinism. */
#include "model_catalog.h"
#include "model_cost.h"
#include "sim_cluster.h"
#include "test_util.h"
#include "test_model_util.h"
#include "test_cluster_util.h"

#include <stdlib.h>

static void base_scenario(sim_scenario *sc)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    sc->workload.requests = 3000;
    sc->workload.arrival.process = SIM_ARRIVAL_POISSON;
    sc->workload.arrival.rate = 30;
    sc->workload.input_tokens.dist = SIM_DIST_LOGNORMAL;
    sc->workload.input_tokens.mean = 1000;
    sc->workload.input_tokens.std = 600;
    sc->workload.input_tokens.min = 8;
    sc->workload.input_tokens.max = 8000;
    sc->workload.output_tokens.dist = SIM_DIST_UNIFORM;
    sc->workload.output_tokens.min = 1;
    sc->workload.output_tokens.max = 400;
    sc->deployment.pools[0].instances = 3;
    sc->deployment.pools[0].scheduler.chunk_tokens = 512;
    sc->routing.policy = SIM_ROUTE_LEAST_LOADED;
    sc->output.sample_interval_s = 0.5;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void check_conservation(const run_result *r, int64_t expect)
{
    CHECK_MSG(r->st.completed == expect, "completed %lld of %lld", (long long)r->st.completed, (long long)expect);
    CHECK(r->st.issued == expect + r->st.rejected);
    CHECK(r->n == r->st.completed);
    CHECK(r->st.in_flight == 0);
    CHECK(r->st.waiting == 0 && r->st.running == 0);
    CHECK_MSG(r->st.kv_blocks_used == 0, "%lld KV blocks still held", (long long)r->st.kv_blocks_used);
    CHECK_MSG(r->st.outstanding_tokens == 0, "%lld tokens outstanding", (long long)r->st.outstanding_tokens);
    uint64_t *ids = malloc((size_t)(r->n ? r->n : 1) * sizeof *ids);
    int64_t in = 0, outt = 0;
    int order_ok = 1;
    for (int64_t i = 0; i < r->n; i++) {
        ids[i] = r->recs[i].id;
        in += r->recs[i].input_tokens;
        outt += r->recs[i].output_tokens;
        const sim_req_record *q = &r->recs[i];
        if (!(q->arrival <= q->first_scheduled && q->first_scheduled < q->first_token &&
              q->first_token <= q->finish))
            order_ok = 0;
        if (q->output_tokens == 1 && q->first_token != q->finish) order_ok = 0;
    }
    CHECK_MSG(order_ok, "arrival <= scheduled < first token <= finish violated");
    qsort(ids, (size_t)r->n, sizeof *ids, cmp_u64);
    int unique = 1;
    for (int64_t i = 1; i < r->n; i++)
        if (ids[i] == ids[i - 1]) unique = 0;
    CHECK_MSG(unique, "a request completed twice");
    free(ids);
    CHECK(in == r->st.input_tokens_done);
    CHECK(outt == r->st.output_tokens_done);
    CHECK(r->sum.requests_completed == r->st.completed);
}

static void test_conservation_and_little(void)
{
    sim_scenario sc;
    base_scenario(&sc);
    run_result r;
    if (run(&sc, &r)) return;
    check_conservation(&r, 3000);
    CHECK(r.st.rejected == 0);
    /* Little's law: the integral of requests-in-system over time equals the
     * sum of their sojourn times (L = λW over the whole run). The integral is
     * taken from the event stream, the sojourns from the metrics records. */
    double sum_e2e = 0;
    for (int64_t i = 0; i < r.n; i++) sum_e2e += (double)(r.recs[i].finish - r.recs[i].arrival) / 1e9;
    CHECK_NEAR(r.st.in_flight_area_s, sum_e2e, 1e-9 * sum_e2e + 1e-6);
    double T = r.sum.sim_time_s;
    double L = r.st.in_flight_area_s / T, lambda = (double)r.n / T, W = sum_e2e / (double)r.n;
    CHECK_NEAR(L, lambda * W, 1e-6 * L);
    CHECK_NEAR(r.sum.e2e_ms.mean, W * 1e3, 1e-6 * W * 1e3);
    CHECK(r.sum.mean_utilization > 0.05 && r.sum.mean_utilization <= 1.0);
    free(r.recs);
}

/* One request alone: TTFT and E2E are sums of cost-model iterations. */
/* One request of fixed lengths on one instance. */
static void one_request(sim_scenario *sc, int32_t in, int32_t out)
{
    base_scenario(sc);
    sc->workload.requests = 1;
    sc->workload.input_tokens.dist = SIM_DIST_FIXED;
    sc->workload.input_tokens.value = in;
    sc->workload.output_tokens.dist = SIM_DIST_FIXED;
    sc->workload.output_tokens.value = out;
    sc->deployment.pools[0].instances = 1;
}

static void test_exact_timing(void)
{
    sim_scenario sc;
    one_request(&sc, 5000, 10);
    sc.deployment.pools[0].scheduler.chunk_tokens = 2048;
    run_result r;
    if (run(&sc, &r)) return;
    CHECK(r.n == 1);
    if (r.n != 1) return;

    model_cost *cost = test_cost_model("llama-3.1-8b", "h100-sxm", 1, sc.deployment.pools[0].scheduler.overhead_us);
    if (!cost) return;
    /* Prefill in chunks of 2048, 2048, 904 over the growing cached context. */
    sim_time t = r.recs[0].arrival;
    int32_t done = 0;
    while (done < 5000) {
        model_chunk ch = {.tokens = 5000 - done < 2048 ? 5000 - done : 2048, .cached = done};
        model_batch b = {.n_chunks = 1, .chunks = &ch};
        t += (sim_time)(model_cost_iteration(cost, &b, NULL) * 1e9 + 0.5);
        done += ch.tokens;
    }
    CHECK_MSG(r.recs[0].first_token == t, "first token at %lld, expected %lld",
              (long long)r.recs[0].first_token, (long long)t);
    /* Nine decode steps over contexts 5001..5009. */
    for (int k = 1; k <= 9; k++) {
        model_batch b = {.n_decode = 1, .decode_ctx_sum = 5000 + k};
        t += (sim_time)(model_cost_iteration(cost, &b, NULL) * 1e9 + 0.5);
    }
    CHECK_MSG(r.recs[0].finish == t, "finish at %lld, expected %lld", (long long)r.recs[0].finish,
              (long long)t);
    CHECK(r.recs[0].first_scheduled == r.recs[0].arrival);
    model_cost_destroy(cost);
    free(r.recs);
}

/* The frontend delay holds a lone request before the engine sees it: first
 * scheduling, first token and finish all move by exactly frontend_us, and
 * the engine's own timing is unchanged. */
static void test_frontend_delay(void)
{
    sim_scenario sc;
    one_request(&sc, 3000, 20);
    run_result a, b;
    if (run(&sc, &a)) return;
    sc.deployment.pools[0].scheduler.frontend_us = 7000;
    if (run(&sc, &b)) {
        free(a.recs);
        return;
    }
    CHECK(a.n == 1 && b.n == 1);
    if (a.n == 1 && b.n == 1) {
        const sim_time d = 7000000;
        CHECK(b.recs[0].arrival == a.recs[0].arrival);
        CHECK(b.recs[0].first_scheduled == a.recs[0].first_scheduled + d);
        CHECK(b.recs[0].first_token == a.recs[0].first_token + d);
        CHECK(b.recs[0].finish == a.recs[0].finish + d);
    }
    free(a.recs);
    free(b.recs);
}

static void test_preemption(void)
{
    sim_scenario sc;
    base_scenario(&sc);
    /* 80 GB × 0.25 − 16 GB weights − 2 GB reserve ≈ 2 GB of KV ≈ 15k tokens. */
    sc.deployment.pools[0].instances = 1;
    sc.deployment.pools[0].scheduler.gpu_mem_util = 0.25;
    sc.workload.requests = 400;
    sc.workload.arrival.rate = 8;
    sc.workload.output_tokens.min = 200;
    sc.workload.output_tokens.max = 800;
    run_result r;
    if (run(&sc, &r)) return;
    CHECK_MSG(!r.sum.overloaded, "%s", r.sum.overload_reason);
    check_conservation(&r, 400 - r.st.rejected);
    CHECK_MSG(r.st.preemptions > 0, "expected preemptions with a tiny KV cache");
    int64_t rec_pre = 0;
    for (int64_t i = 0; i < r.n; i++) rec_pre += r.recs[i].preemptions;
    CHECK(rec_pre == r.st.preemptions);
    CHECK(r.sum.preemptions == r.st.preemptions);
    /* The same load with reserve admission: nothing is preempted and every
     * request still completes (the queue absorbs the difference). */
    sc.deployment.pools[0].scheduler.admission = SIM_ADMISSION_RESERVE;
    run_result q;
    if (run(&sc, &q) == 0) {
        check_conservation(&q, 400 - q.st.rejected);
        CHECK_MSG(q.st.preemptions == 0, "%lld preemptions under reserve admission", (long long)q.st.preemptions);
        free(q.recs);
    }
    free(r.recs);
}

static void test_rejection(void)
{
    sim_scenario sc;
    base_scenario(&sc);
    sc.deployment.pools[0].instances = 1;
    sc.deployment.pools[0].scheduler.gpu_mem_util = 0.25; /* ≈15k tokens of KV */
    sc.workload.requests = 50;
    sc.workload.input_tokens.dist = SIM_DIST_UNIFORM;
    sc.workload.input_tokens.min = 1000;
    sc.workload.input_tokens.max = 40000;
    sc.workload.input_tokens.max = 40000;
    run_result r;
    if (run(&sc, &r)) return;
    CHECK(r.st.rejected > 0);
    CHECK(r.sum.requests_rejected == r.st.rejected);
    check_conservation(&r, 50 - r.st.rejected);
    free(r.recs);
}

/* `clients` closed-loop clients sending `requests` to two instances. */
static void closed_scenario(sim_scenario *sc, int32_t clients, int64_t requests)
{
    base_scenario(sc);
    sc->workload.arrival.process = SIM_ARRIVAL_CLOSED;
    sc->workload.arrival.concurrency = clients;
    sc->workload.requests = requests;
    sc->deployment.pools[0].instances = 2;
}

static void test_closed_loop(void)
{
    sim_scenario sc;
    closed_scenario(&sc, 8, 500);
    run_result r;
    if (run(&sc, &r)) return;
    check_conservation(&r, 500);
    double L = r.st.in_flight_area_s / r.sum.sim_time_s;
    CHECK_MSG(L <= 8.0 + 1e-9 && L > 7.0, "mean in system %.3f with 8 clients", L);
    free(r.recs);
}

/* The most requests being served at once (first scheduled to finish). */
static int64_t max_overlap(const run_result *r)
{
    int64_t n = r->n, best = 0, cur = 0;
    int64_t *ev = malloc((size_t)(2 * n + 1) * sizeof *ev); /* time * 2 + (0 end, 1 start) */
    if (!ev) return -1;
    for (int64_t i = 0; i < n; i++) {
        ev[2 * i] = r->recs[i].first_scheduled * 2 + 1;
        ev[2 * i + 1] = r->recs[i].finish * 2; /* a finish frees its slot before a start at the same time */
    }
    qsort(ev, (size_t)(2 * n), sizeof *ev, cmp_u64);
    for (int64_t i = 0; i < 2 * n; i++) {
        cur += (ev[i] & 1) ? 1 : -1;
        if (cur > best) best = cur;
    }
    free(ev);
    return best;
}

/* workload.arrival.max_connections: 12 clients over 3 connections keep at
 * most 3 requests in the engines, the rest wait in the client with their
 * wait in TTFT (Little's law still holds from the clients' side); a pool as
 * large as the clients changes nothing; open-loop arrivals queue the same. */
static void test_client_pool(void)
{
    sim_scenario sc;
    closed_scenario(&sc, 12, 600);
    run_result free_run, pooled, wide;
    if (run(&sc, &free_run)) return;
    sc.workload.arrival.max_connections = 3;
    if (run(&sc, &pooled)) return;
    check_conservation(&pooled, 600);
    CHECK_MSG(max_overlap(&free_run) > 3, "without a pool %lld served at once", (long long)max_overlap(&free_run));
    CHECK_MSG(max_overlap(&pooled) <= 3, "%lld served at once over 3 connections", (long long)max_overlap(&pooled));
    CHECK(pooled.sum.client_pool == 3 && pooled.sum.client_waited > 0 && pooled.sum.client_wait_mean_ms > 0);
    double sum_e2e = 0;
    for (int64_t i = 0; i < pooled.n; i++) sum_e2e += (double)(pooled.recs[i].finish - pooled.recs[i].arrival) / 1e9;
    CHECK_NEAR(pooled.st.in_flight_area_s, sum_e2e, 1e-9 * sum_e2e + 1e-6);
    double L = pooled.st.in_flight_area_s / pooled.sum.sim_time_s;
    CHECK_MSG(L <= 12.0 + 1e-9 && L > 11.0, "mean in system %.3f with 12 clients", L);
    /* Fewer requests in the engines: faster tokens, a longer TTFT (the wait). */
    CHECK(pooled.sum.tpot_ms.mean < free_run.sum.tpot_ms.mean);
    CHECK(pooled.sum.ttft_ms.mean > free_run.sum.ttft_ms.mean + pooled.sum.client_wait_mean_ms * 0.5);
    sc.workload.arrival.max_connections = 12;
    if (run(&sc, &wide)) return;
    CHECK(wide.sum.client_waited == 0);
    CHECK(wide.sum.e2e_ms.mean == free_run.sum.e2e_ms.mean && wide.sum.ttft_ms.mean == free_run.sum.ttft_ms.mean);
    free(free_run.recs);
    free(pooled.recs);
    free(wide.recs);

    run_result open;
    base_scenario(&sc);
    sc.workload.requests = 300;
    sc.workload.arrival.rate = 3;
    sc.workload.arrival.max_connections = 4;
    if (run(&sc, &open)) return;
    CHECK(!open.sum.overloaded);
    check_conservation(&open, 300);
    CHECK(max_overlap(&open) <= 4 && open.sum.client_waited > 0);
    free(open.recs);

    /* Arrivals beyond what 2 connections carry pile up in the client: the
     * overload check counts them (memory stays bounded by max_waiting). */
    run_result over;
    sc.workload.requests = 200000;
    sc.workload.arrival.rate = 30;
    sc.workload.arrival.max_connections = 2;
    sc.overload.enabled = 1;
    sc.overload.max_waiting = 50;
    sc.overload.max_queue_delay_s = 1e9;
    if (run(&sc, &over)) return;
    CHECK(over.sum.overloaded == 1 && over.st.completed < 1000);
    CHECK_CONTAINS(over.sum.overload_reason, "of them in the client for a connection (> overload.max_waiting = 50)");
    free(over.recs);
    /* ... and the oldest of them is the oldest queued request. */
    sc.overload.max_waiting = 1000000;
    sc.overload.max_queue_delay_s = 5;
    if (run(&sc, &over)) return;
    CHECK(over.sum.overloaded == 1);
    CHECK_CONTAINS(over.sum.overload_reason, "overload.max_queue_delay_s = 5");
    free(over.recs);
}

static void test_overload(void)
{
    sim_scenario sc;
    base_scenario(&sc);
    sc.deployment.pools[0].instances = 1;
    sc.workload.requests = 200000;
    sc.workload.arrival.rate = 500; /* far beyond one H100 */
    sc.overload.max_queue_delay_s = 20;
    run_result r;
    if (run(&sc, &r)) return;
    CHECK(r.sum.overloaded == 1);
    CHECK_CONTAINS(r.sum.overload_reason, "max_queue_delay_s");
    CHECK(r.st.completed < 200000);
    free(r.recs);
}

static void test_determinism(void)
{
    sim_scenario sc;
    base_scenario(&sc);
    sc.workload.requests = 800;
    run_result a, b, c;
    if (run(&sc, &a) || run(&sc, &b)) return;
    CHECK(a.n == b.n && memcmp(a.recs, b.recs, (size_t)a.n * sizeof *a.recs) == 0);
    sc.seed = 43;
    if (run(&sc, &c)) return;
    CHECK(c.n != a.n || memcmp(a.recs, c.recs, (size_t)a.n * sizeof *a.recs) != 0);
    free(a.recs);
    free(b.recs);
    free(c.recs);
}

static void test_not_supported_modes(void)
{
    sim_scenario sc;
    base_scenario(&sc);
    sc.cache.enabled = 0;
    sc.cache.sharing = SIM_SHARING_PULL;
    sim_cluster *c = NULL;
    sim_err err = {{0}};
    CHECK(sim_cluster_create(&sc, &c, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "needs cache.enabled");
    CHECK(c == NULL);
}

/* Scheduler policies on a hand-made trace: request B arrives while A
 * decodes. decode_first computes B's prompt in an iteration that also
 * decodes A; prefill_first (SGLang) runs it alone while A waits. */
static void test_policies(void)
{
    const char *src = test_src_dir();
    model_cost *cost = test_cost_model("llama-3.1-8b", "h100-sxm", 1, 1500);
    if (!cost) return;
    for (int pf = 0; pf < 2; pf++) {
        sim_scenario sc;
        base_scenario(&sc);
        sc.deployment.pools[0].instances = 1;
        sc.deployment.pools[0].scheduler.chunk_tokens = 2048;
        sc.workload.requests = 0;
        sc.workload.trace.format = SIM_TRACE_CSV;
        snprintf(sc.workload.trace.path, sizeof sc.workload.trace.path, "%s/tests/data/sched/two.csv", src);
        sc.deployment.pools[0].scheduler.policy = pf ? SIM_POLICY_PREFILL_FIRST : SIM_POLICY_DECODE_FIRST;
        run_result r;
        REQUIRE(run(&sc, &r) == 0);
        REQUIRE_MSG(r.n == 2, "%lld requests recorded", (long long)r.n);
        check_conservation(&r, 2);
        const sim_req_record *b = r.recs[0].id == 1 ? &r.recs[0] : &r.recs[1];
        const sim_req_record *a = r.recs[0].id == 1 ? &r.recs[1] : &r.recs[0];
        model_chunk ch = {.tokens = 1000, .cached = 0};
        CHECK(b->first_scheduled > a->first_token); /* B's prompt ran while A decoded */
        model_batch only = {.n_chunks = 1, .chunks = &ch};
        double t_only = model_cost_iteration(cost, &only, NULL);
        sim_time got = b->first_token - b->first_scheduled;
        if (pf) {
            CHECK_MSG(got == (sim_time)(t_only * 1e9 + 0.5), "prefill_first: B's prompt took %lld ns",
                      (long long)got);
        } else {
            /* Mixed with one decode step of A (its context is whatever A had reached). */
            CHECK_MSG(got > (sim_time)(t_only * 1e9 + 0.5), "decode_first: B's prompt took %lld ns, alone %.0f",
                      (long long)got, t_only * 1e9);
        }
        free(r.recs);
    }
    model_cost_destroy(cost);
}

static const test_case cases[] = {
    {"conservation_and_little", test_conservation_and_little},
    {"exact_timing", test_exact_timing},
    {"frontend_delay", test_frontend_delay},
    {"preemption", test_preemption},
    {"rejection", test_rejection},
    {"closed_loop", test_closed_loop},
    {"client_pool", test_client_pool},
    {"overload", test_overload},
    {"determinism", test_determinism},
    {"not_supported_modes", test_not_supported_modes},
    {"policies", test_policies},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_cluster", cases);
}
