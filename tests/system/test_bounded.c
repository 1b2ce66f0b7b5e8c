/* test_bounded — a cluster run past output.request_records and
 * output.sample_records against the same run kept whole: counts, means,
 * goodput, rates, pool means and load imbalance identical, percentiles
 * within the sketch's stated bound, the kept records the first ones
 * finished, and the memory kept independent of the number of requests. */
#include "sim_cluster.h"
#include "test_util.h"
#include "test_cluster_util.h"

static void scenario(sim_scenario *sc, int64_t requests)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    sc->workload.requests = requests;
    sc->workload.arrival.process = SIM_ARRIVAL_POISSON;
    sc->workload.arrival.rate = 40;
    sc->workload.input_tokens.dist = SIM_DIST_LOGNORMAL;
    sc->workload.input_tokens.mean = 800;
    sc->workload.input_tokens.std = 500;
    sc->workload.input_tokens.min = 8;
    sc->workload.input_tokens.max = 8000;
    sc->workload.output_tokens.dist = SIM_DIST_UNIFORM;
    sc->workload.output_tokens.min = 1;
    sc->workload.output_tokens.max = 300;
    sc->deployment.pools[0].instances = 3;
    sc->routing.policy = SIM_ROUTE_LEAST_LOADED;
    sc->output.sample_interval_s = 0.5;
    sc->slo.ttft_ms = 60;
    sc->slo.tpot_ms = 12;
}

static int close_rel(double got, double exact)
{
    return fabs(got - exact) <= SIM_METRICS_SKETCH_REL_ERROR * fabs(exact) * (1 + 1e-12);
}

static void check_stat(const char *name, const sim_stat *b, const sim_stat *a)
{
    CHECK_MSG(b->n == a->n && b->mean == a->mean, "%s: n %lld/%lld mean %.17g/%.17g", name, (long long)b->n,
              (long long)a->n, b->mean, a->mean);
    CHECK_MSG(close_rel(b->p50, a->p50) && close_rel(b->p90, a->p90) && close_rel(b->p99, a->p99) &&
                  close_rel(b->p999, a->p999),
              "%s: p50 %.9g/%.9g p90 %.9g/%.9g p99 %.9g/%.9g p999 %.9g/%.9g", name, b->p50, a->p50, b->p90, a->p90,
              b->p99, a->p99, b->p999, a->p999);
}

static void test_capped_run(void)
{
    sim_scenario sc;
    scenario(&sc, 3000);
    run_result whole, capped;
    REQUIRE_OR(run(&sc, &whole) == 0, free(whole.recs); return);
    CHECK(whole.sum.records.capped == 0 && whole.n == 3000);
    sc.output.request_records = 200;
    sc.output.sample_records = 50;
    REQUIRE_OR(run(&sc, &capped) == 0, free(whole.recs); free(capped.recs); return);
    const sim_summary *a = &whole.sum, *b = &capped.sum;
    CHECK(b->records.capped == 1 && b->records.requests_kept == 200 && capped.n == 200);
    CHECK(b->records.samples_kept == 50 && capped.n_samples == 50);
    CHECK(b->records.samples == a->records.samples && a->records.samples > 50);
    /* The records kept are the first 200 to finish, as in the whole run. */
    CHECK(capped.n > 0 && whole.n > 0 && capped.recs[0].id == whole.recs[0].id);
    /* Identical: the simulation does not depend on what is kept. */
    CHECK(b->requests_completed == 3000 && b->requests_good == a->requests_good);
    CHECK(a->requests_good > 0 && a->requests_good < 3000);
    CHECK(b->preemptions == a->preemptions && b->events == a->events);
    CHECK(b->sim_time_s == a->sim_time_s && b->req_per_s == a->req_per_s);
    CHECK(b->goodput_req_per_s == a->goodput_req_per_s && b->output_tokens_per_s == a->output_tokens_per_s);
    CHECK(b->mean_utilization == a->mean_utilization && b->mean_kv_occupancy == a->mean_kv_occupancy);
    CHECK(b->load_cv == a->load_cv && a->load_cv > 0);
    CHECK(b->pools[0].utilization == a->pools[0].utilization && b->pools[0].waiting == a->pools[0].waiting);
    CHECK(b->pools[0].kv_occupancy == a->pools[0].kv_occupancy && a->pools[0].utilization > 0);
    CHECK(memcmp(&b->itl_ms, &a->itl_ms, sizeof a->itl_ms) == 0);
    check_stat("ttft", &b->ttft_ms, &a->ttft_ms);
    check_stat("tpot", &b->tpot_ms, &a->tpot_ms);
    check_stat("e2e", &b->e2e_ms, &a->e2e_ms);
    check_stat("queue", &b->queue_ms, &a->queue_ms);
    /* Percentiles do come from the sketch (not the records). */
    CHECK(b->ttft_ms.p50 != a->ttft_ms.p50 || b->e2e_ms.p90 != a->e2e_ms.p90);

    /* No records at all. */
    sc.output.request_records = 0;
    run_result none;
    REQUIRE_OR(run(&sc, &none) == 0, free(whole.recs); free(capped.recs); free(none.recs); return);
    CHECK(none.n == 0 && none.sum.requests_good == a->requests_good);
    check_stat("ttft (no records)", &none.sum.ttft_ms, &a->ttft_ms);
    free(whole.recs);
    free(capped.recs);
    free(none.recs);
}

/* Same seed, same caps: byte-identical summaries. */
static void test_deterministic(void)
{
    sim_scenario sc;
    scenario(&sc, 1500);
    sc.output.request_records = 100;
    run_result x, y;
    REQUIRE_OR(run(&sc, &x) == 0, free(x.recs); return);
    REQUIRE_OR(run(&sc, &y) == 0, free(x.recs); free(y.recs); return);
    x.sum.wall_time_s = y.sum.wall_time_s = 0;
    CHECK(memcmp(&x.sum, &y.sum, sizeof x.sum) == 0);
    free(x.recs);
    free(y.recs);
}

/* The loader refuses a negative cap with the key path. */
static void test_bad_cap(void)
{
    sim_scenario sc;
    scenario(&sc, 10);
    sc.output.request_records = -1;
    sim_cluster *c = NULL;
    sim_err err = {{0}};
    CHECK(sim_cluster_create(&sc, &c, &err) == SIM_EINVAL);
    CHECK_CONTAINS(err.msg, "output.request_records");
    CHECK(c == NULL);
}

/* The CLI flag: --request-records N sets output.request_records, and the
 * table and JSON say what was kept. */
static void test_cli(void)
{
    const char *bin = test_servesim, *src = test_src_dir();
    REQUIRE(bin && src); /* ctest passes the binary and the source folder */
    char cmd[2048], *out = NULL;
    snprintf(cmd, sizeof cmd, "cd %s && %s run scenarios/quickstart.yaml --no-db --quiet --json --request-records 50",
             src, bin);
    CHECK(test_sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "\"records\": {\"requests_kept\": 50,");
    CHECK_CONTAINS(out, "\"percentiles\": \"sketch\"");
    free(out);
    snprintf(cmd, sizeof cmd, "cd %s && %s run scenarios/quickstart.yaml --no-db --quiet --request-records 50", src,
             bin);
    CHECK(test_sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "50 of 2000 requests kept (output.request_records): percentiles from a sketch");
    free(out);
    snprintf(cmd, sizeof cmd, "cd %s && %s run scenarios/quickstart.yaml --no-db --quiet --request-records -3 2>&1",
             src, bin);
    CHECK(test_sh(cmd, &out) == 2);
    CHECK_CONTAINS(out, "--request-records: expected a non-negative integer, got '-3'");
    free(out);
}

static const test_case cases[] = {
    {"capped_run", test_capped_run},
    {"deterministic", test_deterministic},
    {"bad_cap", test_bad_cap},
    {"cli", test_cli},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_bounded", cases);
}
