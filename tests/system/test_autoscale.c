/* test_autoscale — autoscaled pools end to end, against hand calculations:
 * the policy's lagged window (which samples a decision sees) and the cold
 * start formula; an autoscaler following a step in the rate (the scale-up
 * at the first decision whose lagged window holds a sample past the step,
 * the new instance serving exactly one cold start later, the first request
 * it serves being the first to arrive after that, GPU-hours from those two
 * times); scale-down draining (no request lost, nothing routed to a
 * draining instance, each leaving exactly when its last request finished,
 * never below min nor the last active instance); max respected; a pd
 * deployment scaling its decode pool; bad configurations refused with their
 * key paths; the shipped scenario and the same seed giving the same output. */
#include "model_cost.h"
#include "sim_autoscale.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_store.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double S = 1e9; /* ns per s */

/* The window a decision at t reads: samples in (t - lag - window, t - lag]. */
static void test_policy_window(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sim_autoscale_cfg cfg = sc.deployment.pools[0].autoscale;
    cfg.interval_s = 5;
    cfg.window_s = 10;
    cfg.lag_s = 10;
    cfg.up_threshold = 3;
    cfg.down_threshold = 1;
    sim_autoscale *a = sim_autoscale_create(&cfg);
    REQUIRE(a != NULL);
    double v = -1;
    CHECK(sim_autoscale_value(a, (sim_time)(30 * S), &v) == 0); /* nothing yet */
    for (int k = 1; k <= 4; k++) sim_autoscale_push(a, (sim_time)(5 * k * S), k, 1); /* t = 5k s: value k */
    /* t = 22: window (2, 12] -> samples at 5 and 10: 1.5, between the thresholds */
    CHECK(sim_autoscale_value(a, (sim_time)(22 * S), &v) == 1 && fabs(v - 1.5) < 1e-12);
    CHECK(sim_autoscale_direction(a, v) == 0);
    CHECK(sim_autoscale_value(a, (sim_time)(12 * S), &v) == 0); /* (-8, 2]: none */
    for (int k = 5; k <= 8; k++) sim_autoscale_push(a, (sim_time)(5 * k * S), k, 1);
    /* t = 30: window (10, 20] -> samples at 15 and 20: (3 + 4) / 2 */
    CHECK(sim_autoscale_value(a, (sim_time)(30 * S), &v) == 1 && fabs(v - 3.5) < 1e-12);
    CHECK(sim_autoscale_direction(a, v) == 1);
    CHECK(sim_autoscale_direction(a, 0.5) == -1);
    /* the ring keeps ceil((10 + 10) / 5) + 2 = 6: at t = 50, (30, 40] -> 35, 40 */
    CHECK(sim_autoscale_value(a, (sim_time)(50 * S), &v) == 1 && fabs(v - 7.5) < 1e-12);
    sim_autoscale_destroy(a);
    cfg.metric = SIM_AS_SLO;
    cfg.up_threshold = 0.9;
    cfg.down_threshold = 0.99;
    a = sim_autoscale_create(&cfg);
    REQUIRE(a != NULL);
    CHECK(sim_autoscale_direction(a, 0.8) == 1 && sim_autoscale_direction(a, 0.95) == 0 &&
          sim_autoscale_direction(a, 0.99) == -1);
    sim_autoscale_destroy(a);
    cfg.storage_gbs = 4;
    cfg.startup_s = 7;
    CHECK(fabs(sim_autoscale_cold_start_s(&cfg, 16e9) - 11.0) < 1e-12);
}

/* llama-3.1-8b on H100s, one GPU per instance, analytic prices, fixed lengths. */
static void base(sim_scenario *sc, int instances)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    snprintf(sc->hardware.perf_db, sizeof sc->hardware.perf_db, "none");
    sc->workload.input_tokens.dist = SIM_DIST_FIXED;
    sc->workload.input_tokens.value = 200;
    sc->workload.output_tokens.dist = SIM_DIST_FIXED;
    sc->workload.output_tokens.value = 20;
    sc->deployment.pools[0].instances = instances;
    sc->routing.policy = SIM_ROUTE_LEAST_LOADED;
    sc->output.sample_interval_s = 1;
}

/* Turns on autoscaling of pool 0 with this policy (metric queue unless changed). */
static sim_autoscale_cfg *policy(sim_scenario *sc, int min, int max, double up, double down, double interval,
                                 double window, double lag, double cooldown)
{
    sim_autoscale_cfg *a = &sc->deployment.pools[0].autoscale;
    a->enabled = 1;
    a->min = min;
    a->max = max;
    a->metric = SIM_AS_QUEUE;
    a->up_threshold = up;
    a->down_threshold = down;
    a->interval_s = interval;
    a->window_s = window;
    a->lag_s = lag;
    a->cooldown_s = cooldown;
    return a;
}

/* The nth event of a kind of pool p (in time order), or NULL. */
static const sim_as_event *event_of(const sim_autoscale_summary *s, int p, int kind, int nth)
{
    for (int32_t e = 0; e < s->n_events; e++)
        if (s->events[e].pool == p && s->events[e].kind == kind && nth-- == 0) return &s->events[e];
    return NULL;
}

/* A step from 1 req/s to 50 req/s at t = 20 s on one instance that serves
 * one request at a time (max_seqs 1: about 12 req/s). Samples every 5 s;
 * a decision at t sees (t - 15, t - 10] (lag 10, window 5): the queue is 0
 * or a few before the step, and hundreds at the sample of t = 25, which a
 * decision first sees at t = 35. So the pool starts instance 1 at exactly
 * t = 35 s, and it serves at 35 + cold start (weights per GPU / 4 GB/s +
 * 7 s). The cooldown (1000 s) allows no second decision, max 2 no third
 * instance. GPU-hours: one instance over the span T plus one from 35 s
 * (a starting instance holds its GPUs while it loads). */
static void test_step_up(void)
{
    sim_scenario sc;
    base(&sc, 1);
    sim_pool_cfg *p = &sc.deployment.pools[0];
    p->scheduler.max_seqs = 1;
    sc.overload.enabled = 0; /* the backlog drains after the arrivals end */
    sc.workload.requests = 0;
    sc.workload.duration_s = 60;
    sc.workload.arrival.process = SIM_ARRIVAL_SCHEDULE;
    snprintf(sc.workload.arrival.schedule, sizeof sc.workload.arrival.schedule, "0:1, 20:50");
    sim_autoscale_cfg *a = policy(&sc, 1, 2, 8, 0, 5, 5, 10, 1000);
    a->storage_gbs = 4;
    a->startup_s = 7;
    sim_cluster *cl = NULL;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_cluster_create(&sc, &cl, &err) == 0, "%s", err.msg);
    const double cold = model_cost_weight_bytes_per_gpu(sim_cluster_pool_cost(cl, 0)) / 4e9 + 7;
    sim_cluster_destroy(cl);
    CHECK_MSG(cold > 10 && cold < 12, "cold start %g s (16 GB of bf16 weights at 4 GB/s + 7 s)", cold);
    run_result r;
    REQUIRE(run(&sc, &r) == 0);
    const sim_autoscale_summary *s = &r.sum.autoscale;
    REQUIRE(s->enabled && s->n_pools == 1);
    const sim_as_pool_summary *ps = &s->pools[0];
    const sim_as_event *start = event_of(&r.sum.autoscale, 0, SIM_AS_EV_START, 0), *ready = event_of(&r.sum.autoscale, 0, SIM_AS_EV_READY, 0);
    REQUIRE(start != NULL && ready != NULL);
    CHECK_MSG(start->t_s == 35.0 && start->instance == 1 && start->held == 2 && start->serving == 1,
              "start at %.9f s of instance %d", start->t_s, start->instance);
    CHECK_MSG(start->value > 8, "window value %g", start->value);
    CHECK_MSG(fabs(ready->t_s - (35 + cold)) < 1e-9 && ready->instance == 1 && ready->serving == 2,
              "ready at %.9f s, expected %.9f", ready->t_s, 35 + cold);
    CHECK(ps->scale_ups == 1 && ps->scale_downs == 0 && ps->peak_instances == 2 && ps->n_events == 2);
    CHECK(ps->cold_start_s == cold);
    /* The first request the new instance serves is the first to arrive at
     * or after it is ready, and starts on arrival (the instance is idle). */
    const sim_time t_ready = (sim_time)llround((35 + cold) * S);
    const sim_req_record *first_after = NULL, *first_on1 = NULL;
    for (int64_t k = 0; k < r.n; k++) {
        const sim_req_record *q = &r.recs[k];
        if (q->arrival >= t_ready && (!first_after || q->arrival < first_after->arrival)) first_after = q;
        if (q->instance == 1 && (!first_on1 || q->first_scheduled < first_on1->first_scheduled)) first_on1 = q;
        CHECK_MSG(q->instance == 0 || q->arrival >= t_ready, "request %llu on instance 1 arrived at %lld",
                  (unsigned long long)q->id, (long long)q->arrival);
    }
    REQUIRE(first_after != NULL && first_on1 != NULL);
    CHECK(first_on1 == first_after && first_on1->first_scheduled == first_on1->arrival);
    CHECK(r.st.in_flight == 0 && r.st.completed == r.st.issued && r.st.rejected == 0);
    const double T = s->span_s;
    CHECK_MSG(fabs(ps->gpu_hours - (T + T - 35) / 3600) < 1e-9 && fabs(ps->fixed_gpu_hours - 2 * T / 3600) < 1e-12,
              "GPU-hours %.9f fixed %.9f over %.3f s", ps->gpu_hours, ps->fixed_gpu_hours, T);
    CHECK(ps->gpu_hours == s->gpu_hours && fabs(s->saved_fraction - (1 - s->gpu_hours / s->fixed_gpu_hours)) < 1e-12);
    free(r.recs);
}

/* Three instances at a load one handles: every decision (each second,
 * cooldown 0, no lag) sees no queue and drains one, down to min 2; each
 * draining instance gets nothing new and leaves exactly when its last
 * request finishes (or at once when it holds none). */
static void check_drains(int min)
{
    sim_scenario sc;
    base(&sc, 3);
    sc.workload.requests = 300;
    sc.workload.arrival.process = SIM_ARRIVAL_CONSTANT;
    sc.workload.arrival.rate = 30;
    policy(&sc, min, 3, 1000, 0.5, 1, 1, 0, 0);
    run_result r;
    REQUIRE(run(&sc, &r) == 0);
    CHECK(r.st.issued == 300 && r.st.completed == 300 && r.st.in_flight == 0 && r.st.rejected == 0);
    CHECK(r.sum.requests_completed == 300 && r.st.kv_blocks_used == 0);
    const sim_as_pool_summary *ps = &r.sum.autoscale.pools[0];
    CHECK_MSG(ps->scale_downs == 3 - min && ps->least_instances == min && ps->peak_instances == 3,
              "%d drains, least %d", (int)ps->scale_downs, (int)ps->least_instances);
    for (int d = 0; d < 3 - min; d++) {
        const sim_as_event *drain = event_of(&r.sum.autoscale, 0, SIM_AS_EV_DRAIN, d), *gone = NULL;
        REQUIRE(drain != NULL);
        CHECK(drain->t_s == d + 1.0);
        const sim_autoscale_summary *as = &r.sum.autoscale;
        for (int32_t e = 0; e < as->n_events; e++)
            if (as->events[e].kind == SIM_AS_EV_LEAVE && as->events[e].instance == drain->instance) gone = &as->events[e];
        REQUIRE(gone != NULL);
        const sim_time t_drain = (sim_time)llround(drain->t_s * S);
        sim_time last = t_drain;
        for (int64_t k = 0; k < r.n; k++) {
            const sim_req_record *q = &r.recs[k];
            if (q->instance != drain->instance) continue;
            CHECK_MSG(q->arrival <= t_drain, "request %llu routed to draining instance %d at %lld",
                      (unsigned long long)q->id, drain->instance, (long long)q->arrival);
            if (q->finish > last) last = q->finish;
        }
        CHECK_MSG(fabs(gone->t_s - (double)last / S) < 1e-9, "instance %d left at %.9f s, its last request ended %.9f",
                  drain->instance, gone->t_s, (double)last / S);
    }
    CHECK(event_of(&r.sum.autoscale, 0, SIM_AS_EV_DRAIN, 3 - min) == NULL);
    free(r.recs);
}

static void test_drain(void)
{
    check_drains(2);
    check_drains(1); /* min 1: still never the last active instance */
}

/* Saturating arrivals and step 5 against max 3: never more than 3 held,
 * the refused decisions counted. */
static void test_max(void)
{
    sim_scenario sc;
    base(&sc, 1);
    sc.deployment.pools[0].scheduler.max_seqs = 1;
    sc.workload.requests = 2000;
    sc.workload.arrival.rate = 100;
    sim_autoscale_cfg *a = policy(&sc, 1, 3, 2, 0, 1, 1, 0, 0);
    a->step = 5;
    a->startup_s = 1;
    run_result r;
    REQUIRE(run(&sc, &r) == 0);
    const sim_as_pool_summary *ps = &r.sum.autoscale.pools[0];
    CHECK(ps->peak_instances == 3 && ps->scale_ups == 1 && ps->up_blocked > 0);
    for (int32_t e = 0; e < r.sum.autoscale.n_events; e++)
        CHECK(r.sum.autoscale.events[e].held <= 3 && r.sum.autoscale.events[e].held >= 1);
    CHECK(r.st.completed == 2000 && r.st.in_flight == 0);
    free(r.recs);
}

/* pd: the decode pool scales on concurrency by itself; nothing is lost. */
static void test_pd_decode(void)
{
    sim_scenario sc;
    base(&sc, 1);
    sc.deployment.mode = SIM_MODE_PD;
    sc.deployment.n_pools = 2;
    sc.deployment.pools[0].role = SIM_ROLE_PREFILL;
    sc.deployment.pools[1] = sc.deployment.pools[0];
    sc.deployment.pools[1].role = SIM_ROLE_DECODE;
    sc.deployment.pools[1].instances = 1;
    sc.deployment.pools[1].scheduler.max_seqs = 8;
    sc.workload.requests = 3000;
    sc.workload.arrival.rate = 60;
    sc.workload.output_tokens.value = 200;
    sim_autoscale_cfg *a = &sc.deployment.pools[1].autoscale;
    a->enabled = 1;
    a->min = 1;
    a->max = 4;
    a->metric = SIM_AS_CONCURRENCY;
    a->up_threshold = 0.9;
    a->down_threshold = 0.1;
    a->interval_s = 2;
    a->window_s = 4;
    a->lag_s = 2;
    a->cooldown_s = 4;
    a->startup_s = 2;
    run_result r;
    REQUIRE(run(&sc, &r) == 0);
    CHECK(r.st.issued == 3000 && r.st.completed == 3000 && r.st.in_flight == 0 && r.st.kv_blocks_used == 0 &&
          r.st.held == 0);
    const sim_autoscale_summary *s = &r.sum.autoscale;
    CHECK(s->n_pools == 2 && !s->pools[0].enabled && s->pools[1].enabled);
    CHECK_MSG(s->pools[1].scale_ups > 0 && s->pools[1].peak_instances <= 4, "%d ups, peak %d",
              (int)s->pools[1].scale_ups, (int)s->pools[1].peak_instances);
    for (int64_t k = 0; k < r.n; k++) CHECK(r.recs[k].prefill_instance == 0 && r.recs[k].instance >= 1);
    free(r.recs);
    /* Both pools at once: two prefill instances, one drained at the first
     * decision (t = 1 s): it takes no prompt after that, holds KV until its
     * last hand-over, and leaves; nothing is lost. The decode pool's
     * instances are numbered after the prefill pool's max. */
    sc.deployment.pools[0].instances = 2;
    policy(&sc, 1, 2, 1000, 0.5, 1, 1, 0, 0);
    REQUIRE(run(&sc, &r) == 0);
    s = &r.sum.autoscale;
    CHECK(r.st.completed == 3000 && r.st.in_flight == 0 && r.st.kv_blocks_used == 0 && r.st.held == 0);
    const sim_as_event *drain = event_of(s, 0, SIM_AS_EV_DRAIN, 0), *gone = event_of(s, 0, SIM_AS_EV_LEAVE, 0);
    REQUIRE(drain != NULL && gone != NULL && drain->instance == gone->instance);
    CHECK(drain->t_s == 1.0 && gone->t_s >= drain->t_s && s->pools[0].least_instances == 1);
    for (int64_t k = 0; k < r.n; k++) {
        const sim_req_record *q = &r.recs[k];
        CHECK(q->instance >= 2 && q->prefill_instance < 2);
        if (q->prefill_instance == drain->instance) {
            CHECK(q->arrival <= (sim_time)(drain->t_s * S));
            CHECK(q->kv_arrived <= (sim_time)llround(gone->t_s * S));
        }
    }
    free(r.recs);
}

static void expect_error(const char *yaml, const char *key, const char *what)
{
    sim_scenario sc;
    sim_err err = {{0}};
    int rc = sim_loader_load_string(yaml, strlen(yaml), "t.yaml", NULL, 0, &sc, &err);
    CHECK_MSG(rc != 0 && strstr(err.msg, key) && strstr(err.msg, what), "rc %d: %s (expected %s: %s)", rc, err.msg,
              key, what);
}

#define POOL "deployment:\n  pools:\n    - instances: 2\n      autoscale: "
static void test_bad_config(void)
{
    expect_error(POOL "{enabled: true}\n", "deployment.pools.0.autoscale.max", "required");
    expect_error(POOL "{enabled: true, max: 1}\n", "deployment.pools.0.autoscale.max", "must be >=");
    expect_error(POOL "{enabled: true, max: 4, min: 3}\n", "deployment.pools.0.autoscale.min", "must be <=");
    expect_error(POOL "{enabled: true, max: 4, metric: kv, up_threshold: 2}\n",
                 "deployment.pools.0.autoscale.up_threshold", "[0, 1]");
    expect_error(POOL "{enabled: true, max: 4, up_threshold: 1, down_threshold: 2}\n",
                 "deployment.pools.0.autoscale.down_threshold", "down_threshold < up_threshold");
    expect_error(POOL "{enabled: true, max: 4, metric: slo}\n", "deployment.pools.0.autoscale.metric", "SLO bound");
    expect_error(POOL "{enabled: true, max: 4, metric: fast}\n", "deployment.pools.0.autoscale.metric", "queue");
    expect_error(POOL "{enabled: true, max: 4, interval_s: 0}\n", "deployment.pools.0.autoscale.interval_s", "> 0");
    expect_error("cache: {enabled: true}\n" POOL "{enabled: true, max: 4}\n", "deployment.pools.0.autoscale.enabled",
                 "cache.enabled");
    expect_error("energy: {enabled: true}\n" POOL "{enabled: true, max: 4}\n", "deployment.pools.0.autoscale.enabled",
                 "energy.enabled");
    expect_error("deployment:\n  encode: {instances: 1}\n  pools:\n    - {instances: 2, autoscale: {enabled: true, "
                 "max: 4}}\n",
                 "deployment.pools.0.autoscale.enabled", "encode pool");
    expect_error("deployment:\n  mode: af\n  pools:\n    - {role: attention, autoscale: {enabled: true, max: 2}}\n"
                 "    - {role: ffn}\n",
                 "deployment.pools.0.autoscale.enabled", "attention/FFN");
    expect_error("deployment:\n  mode: pd\n  pools:\n    - {role: prefill, autoscale: {enabled: true, max: 2, metric: "
                 "slo}}\n    - {role: decode}\nslo: {tpot_ms: 50}\n",
                 "deployment.pools.0.autoscale.metric", "slo.ttft_ms");
    sim_scenario sc;
    sim_err err = {{0}};
    const char *ok = POOL "{enabled: true, max: 4}\n";
    CHECK_MSG(sim_loader_load_string(ok, strlen(ok), "t.yaml", NULL, 0, &sc, &err) == 0, "%s", err.msg);
}

/* The shipped scenario: fewer GPU-hours than the fleet at max, its JSON
 * object, and the same output from the same seed. */
static void test_shipped_scenario(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/autoscale-step.yaml", test_src_dir());
    sim_scenario sc;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_loader_load_file(path, NULL, 0, &sc, &err) == 0, "%s", err.msg);
    run_result r1, r2;
    REQUIRE(run(&sc, &r1) == 0);
    REQUIRE(run(&sc, &r2) == 0);
    const sim_autoscale_summary *s = &r1.sum.autoscale;
    CHECK(s->enabled && s->saved_fraction > 0.3 && s->pools[0].scale_ups > 0 && s->pools[0].scale_downs > 0);
    CHECK(s->pools[0].peak_instances <= 8 && s->pools[0].least_instances >= 1);
    r1.sum.wall_time_s = r2.sum.wall_time_s = 0;
    char *j1 = test_summary_json(&r1.sum), *j2 = test_summary_json(&r2.sum);
    REQUIRE(j1 && j2);
    CHECK(strcmp(j1, j2) == 0);
    CHECK(strstr(j1, "\"autoscale\": {") && strstr(j1, "\"timeline\": [[0, 2, 2]") && strstr(j1, "\"event\": \"drain\""));
    free(j1);
    free(j2);
    /* Off: no autoscale object at all. */
    const char *off[] = {"deployment.pools.0.autoscale.enabled=false"};
    REQUIRE_MSG(sim_loader_load_file(path, off, 1, &sc, &err) == 0, "%s", err.msg);
    sc.workload.duration_s = 60;
    run_result r3;
    REQUIRE(run(&sc, &r3) == 0);
    char *j3 = test_summary_json(&r3.sum);
    REQUIRE(j3);
    CHECK(!r3.sum.autoscale.enabled && !strstr(j3, "autoscale"));
    free(j3);
    free(r1.recs);
    free(r2.recs);
    free(r3.recs);
}

/* The results DB: the autoscale.* metrics and one autoscale_events row per event. */
static void test_results_db(void)
{
    sim_scenario sc;
    base(&sc, 3);
    sc.workload.requests = 300;
    sc.workload.arrival.process = SIM_ARRIVAL_CONSTANT;
    sc.workload.arrival.rate = 30;
    policy(&sc, 1, 3, 1000, 0.5, 1, 1, 0, 0);
    run_result r;
    REQUIRE(run(&sc, &r) == 0);
    char path[] = "/tmp/test_autoscale_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    unlink(path);
    sim_store *st = NULL;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_store_open(path, &st, &err) == 0, "%s", err.msg);
    int64_t id = 0;
    CHECK_MSG(sim_store_write_run(st, &sc, NULL, NULL, &r.sum, NULL, &id, &err) == 0, "%s", err.msg);
    sim_store_close(st);
    sqlite3 *db = NULL;
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    sqlite3_stmt *q = NULL;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM autoscale_events WHERE run_id = ?1), "
                                   "(SELECT value FROM metrics WHERE run_id = ?1 AND name = 'autoscale.gpu_hours'), "
                                   "(SELECT count(*) FROM autoscale_events WHERE run_id = ?1 AND event = 'leave')",
                               -1, &q, NULL) == SQLITE_OK);
    sqlite3_bind_int64(q, 1, id);
    REQUIRE(sqlite3_step(q) == SQLITE_ROW);
    CHECK(sqlite3_column_int(q, 0) == r.sum.autoscale.n_events && sqlite3_column_int(q, 0) == 4);
    CHECK(sqlite3_column_double(q, 1) == r.sum.autoscale.gpu_hours);
    CHECK(sqlite3_column_int(q, 2) == 2);
    sqlite3_finalize(q);
    sqlite3_close(db);
    unlink(path);
    free(r.recs);
}

static const test_case cases[] = {
    {"results_db", test_results_db},
    {"policy_window", test_policy_window},
    {"step_up", test_step_up},
    {"drain", test_drain},
    {"max", test_max},
    {"pd_decode", test_pd_decode},
    {"bad_config", test_bad_config},
    {"shipped_scenario", test_shipped_scenario},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_autoscale", cases);
}
