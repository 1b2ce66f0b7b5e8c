/* test_detok — the detokenise-and-stream workers
 * (scheduler.detokenizer_workers) by hand and under load.
 *
 * By hand: one request alone, one worker. Each iteration that samples its
 * token hands the worker one job of detokenize_us_per_token +
 * stream_us_per_token. When that is shorter than an iteration the worker is
 * idle at every hand-over, so the client sees every token exactly one job
 * later: TTFT and E2E move by it, TPOT not at all, and the engine's own
 * times not at all. When it is longer than every iteration the jobs queue
 * back to back from the first: the first token is seen one job after it was
 * sampled and each later one a job after the one before, so TPOT is the
 * job's length exactly.
 *
 * Under load: a batch of requests on one worker. A light per-token cost
 * leaves TPOT where it was (busy 0.4 %, the offered 4,000 tokens/s × 1 us);
 * a heavy one (300 us: 1.2 times what the worker can serve) saturates it,
 * raises TPOT and E2E, and the client cannot have seen the run's
 * tokens before the worker could have served them all (tokens × per-token
 * time after the first arrival). */
#include "sim_cluster.h"
#include "test_util.h"
#include "test_cluster_util.h"

static void one_request(sim_scenario *sc, int out_tokens)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    sc->workload.requests = 1;
    sc->workload.input_tokens.dist = SIM_DIST_FIXED;
    sc->workload.input_tokens.value = 1000;
    sc->workload.output_tokens.dist = SIM_DIST_FIXED;
    sc->workload.output_tokens.value = out_tokens;
    sc->deployment.pools[0].instances = 1;
}

static void set_pool(sim_scenario *sc, int workers, double detok_us, double stream_us)
{
    sim_sched_cfg *s = &sc->deployment.pools[0].scheduler;
    s->detokenizer_workers = workers;
    s->detokenize_us_per_token = detok_us;
    s->stream_us_per_token = stream_us;
}

static void test_by_hand_idle(void)
{
    sim_scenario sc;
    one_request(&sc, 5);
    run_result a, b;
    if (run(&sc, &a)) return;
    set_pool(&sc, 1, 100, 50);
    if (run(&sc, &b)) {
        free(a.recs);
        return;
    }
    REQUIRE_OR(a.n == 1 && b.n == 1, free(a.recs); free(b.recs); return);
    const sim_time job = 150000; /* ns */
    const sim_req_record *ra = &a.recs[0], *rb = &b.recs[0];
    /* Every iteration is longer than a job: the worker is idle each time. */
    CHECK(ra->finish - ra->first_token > 4 * job);
    CHECK(!a.sum.detok.enabled && ra->stream_first == 0 && ra->stream_last == 0);
    CHECK(rb->first_token == ra->first_token && rb->finish == ra->finish);
    CHECK(rb->stream_first == job && rb->stream_last == job);
    CHECK_NEAR(b.sum.ttft_ms.mean - a.sum.ttft_ms.mean, 0.15, 1e-9);
    CHECK_NEAR(b.sum.e2e_ms.mean - a.sum.e2e_ms.mean, 0.15, 1e-9);
    CHECK_NEAR(b.sum.tpot_ms.mean, a.sum.tpot_ms.mean, 1e-9);
    const sim_workers_summary *d = &b.sum.detok;
    CHECK(d->enabled && d->workers == 1 && d->jobs == 5 && d->tokens == 5);
    CHECK_NEAR(d->wait_ms, 0, 1e-12);
    CHECK_NEAR(d->service_ms, 0.15, 1e-12);
    free(a.recs);
    free(b.recs);
}

static void test_by_hand_saturated(void)
{
    sim_scenario sc;
    one_request(&sc, 5);
    run_result a, b;
    if (run(&sc, &a)) return;
    set_pool(&sc, 1, 80000, 20000); /* 100 ms a token: longer than any iteration */
    if (run(&sc, &b)) {
        free(a.recs);
        return;
    }
    REQUIRE_OR(a.n == 1 && b.n == 1, free(a.recs); free(b.recs); return);
    const sim_time job = 100 * SIM_NS_PER_MS;
    const sim_req_record *ra = &a.recs[0], *rb = &b.recs[0];
    CHECK(ra->finish - ra->first_token < job); /* the four decode iterations together */
    CHECK(rb->stream_first == job);
    CHECK(sim_req_record_last_seen(rb) == sim_req_record_first_seen(rb) + 4 * job);
    CHECK_NEAR(b.sum.tpot_ms.mean, 100, 1e-9);
    CHECK_NEAR(b.sum.ttft_ms.mean - a.sum.ttft_ms.mean, 100, 1e-9);
    /* Job k (0..4) started at the first's hand-over + k × 100 ms and was
     * handed over k decode iterations after it: its wait is 100 k ms less
     * those iterations, which together are at most the decode time D. */
    const double D = (double)(ra->finish - ra->first_token) * 1e-6;
    CHECK(b.sum.detok.wait_ms <= 1000.0 / 5 && b.sum.detok.wait_ms >= (1000 - 10 * D) / 5);
    free(a.recs);
    free(b.recs);
}

/* When the client saw the run's last token. */
static sim_time last_seen(const run_result *r)
{
    sim_time t1 = 0;
    for (int64_t i = 0; i < r->n; i++)
        if (sim_req_record_last_seen(&r->recs[i]) > t1) t1 = sim_req_record_last_seen(&r->recs[i]);
    return t1;
}

static void load_scenario(sim_scenario *sc)
{
    one_request(sc, 200);
    sc->workload.requests = 400;
    sc->workload.arrival.process = SIM_ARRIVAL_POISSON;
    sc->workload.arrival.rate = 20;
    sc->workload.input_tokens.value = 512;
}

static void test_load(void)
{
    sim_scenario sc;
    load_scenario(&sc);
    run_result off, light, heavy;
    if (run(&sc, &off)) return;
    set_pool(&sc, 1, 1, 0);
    if (run(&sc, &light)) {
        free(off.recs);
        return;
    }
    set_pool(&sc, 1, 250, 50); /* 300 us a token: 3,333 tokens/s at most, 4,000 offered */
    if (run(&sc, &heavy)) {
        free(off.recs);
        free(light.recs);
        return;
    }
    const double out_rate = 20 * 200; /* tokens/s offered */
    printf("TPOT off %.3f ms, 1 us/token %.3f ms, 300 us/token %.3f ms; E2E %.1f / %.1f / %.1f ms; "
           "workers busy %.1f %% / %.1f %%\n",
           off.sum.tpot_ms.mean, light.sum.tpot_ms.mean, heavy.sum.tpot_ms.mean, off.sum.e2e_ms.mean,
           light.sum.e2e_ms.mean, heavy.sum.e2e_ms.mean, 100 * light.sum.detok.utilization,
           100 * heavy.sum.detok.utilization);
    CHECK(fabs(light.sum.tpot_ms.mean / off.sum.tpot_ms.mean - 1) < 0.02);
    CHECK_NEAR(light.sum.detok.utilization, out_rate * 1e-6, 0.002);
    CHECK(light.sum.detok.tokens == 400 * 200 && heavy.sum.detok.tokens == 400 * 200);
    /* The backlog grows by 1/6 of the served rate over the run (4 s of the
     * worker's 24 s by the end): every request's tokens stretch, and its
     * whole reply waits behind the backlog. */
    CHECK_MSG(heavy.sum.tpot_ms.mean > 1.15 * off.sum.tpot_ms.mean, "saturated TPOT %.3f vs %.3f ms",
              heavy.sum.tpot_ms.mean, off.sum.tpot_ms.mean);
    CHECK_MSG(heavy.sum.e2e_ms.mean > off.sum.e2e_ms.mean + 1000, "saturated E2E %.1f vs %.1f ms",
              heavy.sum.e2e_ms.mean, off.sum.e2e_ms.mean);
    CHECK(heavy.sum.detok.utilization > 0.95 && heavy.sum.detok.wait_ms > 10 * heavy.sum.detok.service_ms);
    sim_time t0 = SIM_TIME_MAX, t1 = last_seen(&heavy);
    for (int64_t i = 0; i < heavy.n; i++)
        if (heavy.recs[i].arrival < t0) t0 = heavy.recs[i].arrival;
    CHECK((double)(t1 - t0) >= 400.0 * 200 * 300e3 * (1 - 1e-9));
    free(off.recs);
    free(light.recs);
    free(heavy.recs);
}


/* one_request() turned into a closed loop of `clients` clients, no think
 * time, `requests` requests. */
static void closed_loop(sim_scenario *sc, int out_tokens, int32_t clients, int64_t requests)
{
    one_request(sc, out_tokens);
    sc->workload.requests = requests;
    sc->workload.arrival.process = SIM_ARRIVAL_CLOSED;
    sc->workload.arrival.concurrency = clients;
    sc->workload.arrival.think_time_s = 0;
}

static void test_closed_loop_waits(void)
{
    sim_scenario sc;
    closed_loop(&sc, 5, 1, 2);
    set_pool(&sc, 1, 80000, 20000); /* 100 ms a token */
    run_result b;
    if (run(&sc, &b)) return;
    REQUIRE_OR(b.n == 2, free(b.recs); return);
    const sim_req_record *r0 = b.recs[0].id == 0 ? &b.recs[0] : &b.recs[1];
    const sim_req_record *r1 = b.recs[0].id == 0 ? &b.recs[1] : &b.recs[0];
    const sim_time job = 100 * SIM_NS_PER_MS;
    CHECK(r0->arrival == 0);
    CHECK(sim_req_record_first_seen(r0) == r0->first_token + job);
    CHECK(sim_req_record_last_seen(r0) == sim_req_record_first_seen(r0) + 4 * job);
    CHECK_MSG(r1->arrival == sim_req_record_last_seen(r0), "second arrival %lld ns, first seen done %lld ns",
              (long long)r1->arrival, (long long)sim_req_record_last_seen(r0));
    CHECK(r1->arrival > r0->finish + 3 * job);
    free(b.recs);
}

static void test_closed_loop_throughput(void)
{
    sim_scenario sc;
    closed_loop(&sc, 100, 8, 64);
    set_pool(&sc, 1, 0, 2000); /* 2 ms a token: 500 tokens/s, the engine emits several thousand */
    run_result b;
    if (run(&sc, &b)) return;
    REQUIRE_OR(b.n == 64, free(b.recs); return);
    sim_time t1 = last_seen(&b);
    /* All 6,400 tokens through one worker: at least 12.8 s. */
    CHECK((double)t1 >= 64.0 * 100 * 2e6 * (1 - 1e-9));
    /* Saturated: the 8 requests in the system share the worker's rate, so
     * by Little's law the mean E2E is 8 x 100 tokens x 2 ms over the share
     * of the run the worker was busy (it idles only until the first wave's
     * first tokens and in the last requests' tail). */
    const double little = 8 * 100 * 2 / b.sum.detok.utilization;
    printf("closed loop, 8 clients, 2 ms a token: E2E mean %.1f ms, Little's law %.1f ms, workers busy %.1f %%\n",
           b.sum.e2e_ms.mean, little, 100 * b.sum.detok.utilization);
    CHECK_MSG(fabs(b.sum.e2e_ms.mean / little - 1) < 0.03, "E2E mean %.1f ms, Little %.1f ms", b.sum.e2e_ms.mean,
              little);
    CHECK(b.sum.detok.utilization > 0.85);
    free(b.recs);
}

static const test_case cases[] = {
    {"by_hand_idle", test_by_hand_idle},
    {"by_hand_saturated", test_by_hand_saturated},
    {"load_saturates", test_load},
    {"closed_loop_waits_for_last_token", test_closed_loop_waits},
    {"closed_loop_throughput_is_the_workers", test_closed_loop_throughput},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_detok", cases);
}
