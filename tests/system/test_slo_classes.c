/* test_slo_classes — SLO classes end to end, against hand calculations:
 * the merged arrival stream of two classes; priority order on one
 * instance that serves one request at a time (the interactive class
 * overtakes the queued batch requests, and first come first served when
 * both classes share a priority); preemption of the lower class first under
 * KV pressure; a token bucket shedding exactly the count its rate and
 * burst give; shedding by predicted TTFT at exactly the queue depth the
 * prediction rule gives; the per-class summary, the headline judged by each
 * class's SLO, and a workload without classes printing no class keys. */
#include "model_cost.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "sim_workload.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two classes of identical requests (input 1000, output 50) on one
 * llama-3.1-8b H100 instance with max_seqs 1, so requests are served one
 * after another: batch (class 0) at constant 1000 req/s (t = 1..5 ms),
 * interactive (class 1) at constant 1/4.5 ms (t = 4.5, 9 ms). */
/* llama-3.1-8b on one H100 (analytic prices), fixed lengths, and two
 * classes (batch, interactive) started from the workload's keys. */
static void class_base(sim_scenario *sc, int input, int output)
{
    static const char *const names[2] = {"batch", "interactive"};
    test_class_scenario(sc, input, output, 2, names);
}

static void two_class(sim_scenario *sc, int batch_prio, int inter_prio)
{
    class_base(sc, 1000, 50);
    sim_workload_cfg *w = &sc->workload;
    sim_class_cfg *b = &w->classes[0], *i = &w->classes[1];
    b->priority = batch_prio;
    i->priority = inter_prio;
    b->requests = 5;
    b->arrival.process = SIM_ARRIVAL_CONSTANT;
    b->arrival.rate = 1000;
    i->requests = 2;
    i->arrival.process = SIM_ARRIVAL_CONSTANT;
    i->arrival.rate = 1 / 0.0045;
    i->slo.ttft_ms = 1e9; /* everything within it: attainment 1 */
    sc->deployment.pools[0].scheduler.max_seqs = 1;
}

/* The merged stream: arrival order, ids 0.. in that order, class tags. */
static void test_merge(void)
{
    sim_scenario sc;
    two_class(&sc, 2, 0);
    sim_workload *w = NULL;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_workload_create(&sc.workload, sc.seed, &w, &err) == 0, "%s", err.msg);
    CHECK(sim_workload_total(w) == 7);
    static const sim_time at[7] = {1000000, 2000000, 3000000, 4000000, 4500000, 5000000, 9000000};
    static const int cls[7] = {0, 0, 0, 0, 1, 0, 1};
    sim_request_spec s;
    for (int k = 0; k < 7; k++) {
        REQUIRE(sim_workload_next(w, &s) == 1);
        CHECK_MSG(s.arrival == at[k] && s.cls == cls[k] && s.id == (uint64_t)k, "request %d: t %lld class %d id %llu",
                  k, (long long)s.arrival, (int)s.cls, (unsigned long long)s.id);
        CHECK(s.priority == (cls[k] ? 0 : 2));
    }
    CHECK(sim_workload_next(w, &s) == 0);
    sim_workload_destroy(w);
}

static const sim_req_record *rec_of(const run_result *r, uint64_t id)
{
    for (int64_t k = 0; k < r->n; k++)
        if (r->recs[k].id == id) return &r->recs[k];
    return NULL;
}

/* Served one at a time, each request takes the same S (same lengths, alone
 * in the batch), and the next starts when the previous finishes. Batch
 * request 0 (id 0, t = 1 ms) starts at once. By priority the queue then
 * serves interactive ids 4 and 6 before batch ids 1, 2, 3, 5; first come
 * first served (one priority) serves ids 1, 2, 3, 4, 5, 6. */
static void check_order(const run_result *r, const uint64_t *order, int n)
{
    const sim_req_record *prev = rec_of(r, order[0]);
    REQUIRE(prev != NULL);
    CHECK(prev->first_scheduled == prev->arrival);
    sim_time S = prev->finish - prev->first_scheduled;
    for (int k = 1; k < n; k++) {
        const sim_req_record *q = rec_of(r, order[k]);
        REQUIRE(q != NULL);
        CHECK_MSG(q->first_scheduled == prev->finish, "id %llu starts at %lld, not when id %llu finished (%lld)",
                  (unsigned long long)order[k], (long long)q->first_scheduled, (unsigned long long)order[k - 1],
                  (long long)prev->finish);
        CHECK(q->finish - q->first_scheduled == S);
        CHECK_MSG(q->first_scheduled == 1000000 + k * S, "id %llu: %lld vs 1 ms + %d S", (unsigned long long)order[k],
                  (long long)q->first_scheduled, k);
        prev = q;
    }
}

static void test_priority_overtakes(void)
{
    sim_scenario sc;
    run_result r;
    two_class(&sc, 2, 0);
    REQUIRE(run(&sc, &r) == 0);
    REQUIRE(r.n == 7);
    static const uint64_t by_prio[7] = {0, 4, 6, 1, 2, 3, 5};
    check_order(&r, by_prio, 7);
    /* Queueing by hand: interactive waits S - 3.5 ms and 2S - 8 ms; batch
     * ids 1, 2, 3, 5 wait 3S - 1, 4S - 2, 5S - 3, 6S - 4 ms. */
    const sim_req_record *b0 = rec_of(&r, 0);
    double S = (double)(b0->finish - b0->first_scheduled) / 1e6;
    double P = (double)(b0->first_token - b0->first_scheduled) / 1e6;
    REQUIRE(r.sum.n_classes == 2);
    const sim_class_summary *cb = &r.sum.classes[0], *ci = &r.sum.classes[1];
    CHECK(strcmp(ci->name, "interactive") == 0 && ci->requests_completed == 2 && cb->requests_completed == 5);
    CHECK_NEAR(ci->queue_ms.mean, ((S - 3.5) + (2 * S - 8)) / 2, 1e-6);
    CHECK_NEAR(cb->queue_ms.mean, (0 + (3 * S - 1) + (4 * S - 2) + (5 * S - 3) + (6 * S - 4)) / 5, 1e-6);
    CHECK(ci->slo_attainment == 1 && ci->requests_good == 2);
    /* batch has no TTFT bound of its own nor a scenario one: all good too */
    CHECK(r.sum.requests_good == 7);
    free(r.recs);

    /* One priority for both: first come first served. */
    two_class(&sc, 1, 1);
    REQUIRE(run(&sc, &r) == 0);
    static const uint64_t fifo[7] = {0, 1, 2, 3, 4, 5, 6};
    check_order(&r, fifo, 7);
    CHECK_NEAR(r.sum.classes[1].queue_ms.mean, ((4 * S - 3.5) + (6 * S - 8)) / 2, 1e-6);
    free(r.recs);

    /* A TTFT bound between the interactive requests' TTFTs by priority
     * (queue + the prefill step P: S - 3.5 + P and 2S - 8 + P ms): one of
     * the two meets it. */
    two_class(&sc, 2, 0);
    sc.workload.classes[1].slo.ttft_ms = 1.5 * S - 5.75 + P;
    REQUIRE(run(&sc, &r) == 0);
    CHECK(r.sum.classes[1].requests_good == 1);
    CHECK_NEAR(r.sum.classes[1].slo_attainment, 0.5, 1e-12);
    CHECK(r.sum.requests_good == 6); /* 5 batch (no bound) + 1 */
    free(r.recs);
}

/* KV pressure: a small KV cache (~16k tokens: gpu_mem_util 0.25 of 80 GB
 * less 16 GB of weights and the 2 GB reserve) filled by 60 batch requests
 * of 2012 tokens each, while 8 short interactive ones (264 tokens; all
 * eight hold ~2k tokens) arrive into it. By priority the victim is always a
 * batch request, since the interactive ones alone can never fill the KV;
 * with one priority the newest running request is, and the interactive
 * ones, admitted last, are preempted too. */
#define N_PRESSURE 68
static void pressure(sim_scenario *sc, int batch_prio)
{
    class_base(sc, 512, 1500);
    sim_workload_cfg *w = &sc->workload;
    w->classes[0].priority = batch_prio;
    w->classes[0].requests = 60;
    w->classes[0].arrival.rate = 20;
    w->classes[1].requests = 8;
    w->classes[1].arrival.rate = 2;
    w->classes[1].input_tokens.value = 64;
    w->classes[1].output_tokens.value = 200;
    sc->deployment.pools[0].scheduler.gpu_mem_util = 0.25; /* ~4 GB of KV: ~30k tokens */
}

static void test_preempt_lower_first(void)
{
    sim_scenario sc;
    run_result r;
    pressure(&sc, 1);
    REQUIRE(run(&sc, &r) == 0);
    REQUIRE(r.n == N_PRESSURE);
    int64_t pre[2] = {0, 0};
    /* Each record's class, from the ids the merged stream gives (drawn
     * again here: the same seed gives the same stream). */
    sim_workload *w = NULL;
    sim_err err = {{0}};
    REQUIRE(sim_workload_create(&sc.workload, sc.seed, &w, &err) == 0);
    int cls_of[N_PRESSURE] = {0};
    sim_request_spec s;
    for (int k = 0; k < N_PRESSURE && sim_workload_next(w, &s) == 1; k++) cls_of[s.id] = s.cls;
    sim_workload_destroy(w);
    for (int64_t k = 0; k < r.n; k++) pre[cls_of[r.recs[k].id]] += r.recs[k].preemptions;
    CHECK_MSG(pre[0] > 0 && pre[1] == 0, "by priority: batch preempted %lld times, interactive %lld", (long long)pre[0],
              (long long)pre[1]);
    CHECK(r.st.issued == N_PRESSURE && r.st.completed == N_PRESSURE && r.st.kv_blocks_used == 0);
    free(r.recs);

    pressure(&sc, 0); /* one priority */
    REQUIRE(run(&sc, &r) == 0);
    pre[0] = pre[1] = 0;
    for (int64_t k = 0; k < r.n; k++) pre[cls_of[r.recs[k].id]] += r.recs[k].preemptions;
    CHECK_MSG(pre[1] > 0, "one priority: interactive preempted %lld times (batch %lld)", (long long)pre[1],
              (long long)pre[0]);
    free(r.recs);
}

/* A bucket of rate 1/s and burst 3 against constant arrivals at 4/s (t =
 * 0.25 k s, k = 1..40): full at 0.25 s it admits 0.25, 0.5, 0.75 s
 * (levels 2, 1.25, 0.5), then reaches one token again only every second,
 * at 1.25, 2.25, ..., 9.25 s: 3 + 9 = 12 admitted, 28 shed. */
static void bucket_case(sim_scenario *sc, int per_class)
{
    class_base(sc, 100, 10);
    sim_workload_cfg *w = &sc->workload;
    for (int k = 0; k < 2; k++) {
        sim_class_cfg *c = &w->classes[k];
        snprintf(c->name, sizeof c->name, "%s", k ? "free" : "metered");
        c->requests = 40;
        c->arrival.process = SIM_ARRIVAL_CONSTANT;
        c->arrival.rate = 4;
    }
    w->classes[1].arrival.rate = 3; /* t = 1/3, 2/3, 1 s, ... (ties at whole seconds: metered first) */
    w->classes[1].requests = 30;
    sim_bucket_cfg b = {.rate = 1, .burst = 3};
    if (per_class) w->classes[0].admission = b;
    else w->admission.bucket = b;
}

static void test_token_bucket(void)
{
    sim_scenario sc;
    run_result r;
    bucket_case(&sc, 1);
    REQUIRE(run(&sc, &r) == 0);
    CHECK_MSG(r.sum.classes[0].requests_shed == 28, "metered shed %lld", (long long)r.sum.classes[0].requests_shed);
    CHECK(r.sum.classes[0].requests_completed == 12);
    CHECK(r.sum.classes[1].requests_shed == 0 && r.sum.classes[1].requests_completed == 30);
    CHECK(r.sum.requests_shed == 28 && r.sum.shed_reported);
    CHECK(r.st.shed == 28 && r.st.issued == 70 && r.st.completed == 42);
    free(r.recs);

    /* The same bucket over both classes: 70 arrivals through one bucket.
     * The burst admits 0.25, 1/3 and 0.5 s (0.25 token left). Below the
     * cap no token is lost, and arrivals come at least every 1/4 s, so
     * each later one is admitted within 1/4 s of the level reaching 1:
     * over (0.5, 10] s the bucket gains 9.5 on the 0.25 left, enough for
     * 9 (the 9th due at 9.25 s), not 10 (due at 10.25 s): 12 in all. */
    bucket_case(&sc, 0);
    REQUIRE(run(&sc, &r) == 0);
    int64_t admitted = r.sum.classes[0].requests_completed + r.sum.classes[1].requests_completed;
    CHECK_MSG(admitted == 12, "global bucket admitted %lld", (long long)admitted);
    CHECK(r.sum.requests_shed == 70 - admitted);
    free(r.recs);
}

/* Shedding by predicted TTFT: 20 requests of 2048 prompt tokens arrive
 * 0.1 ms apart, before the first iteration (tens of ms) ends, so the n-th
 * admitted one sees (n - 1) queued prompts: predicted TTFT n·2048·m, m the
 * pool's prefill ms per token (a full 2048-token chunk's iteration / 2048).
 * With slo_factor 1 and a bound of 5.5·2048·m, exactly 5 are admitted. */
static void test_slo_shed(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    snprintf(sc.model, sizeof sc.model, "llama-3.1-8b");
    snprintf(sc.hardware.perf_db, sizeof sc.hardware.perf_db, "none");
    sc.workload.requests = 20;
    sc.workload.arrival.process = SIM_ARRIVAL_CONSTANT;
    sc.workload.arrival.rate = 10000;
    sc.workload.input_tokens.value = 2048;
    sc.workload.output_tokens.value = 4;
    sc.deployment.pools[0].scheduler.chunk_tokens = 2048;
    sim_cluster *c = NULL;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_cluster_create(&sc, &c, &err) == 0, "%s", err.msg);
    model_chunk probe = {.tokens = 2048, .cached = 0};
    model_batch pb = {.n_chunks = 1, .chunks = &probe};
    double m = model_cost_iteration(sim_cluster_pool_cost(c, 0), &pb, NULL) * 1e3 / 2048;
    sim_cluster_destroy(c);
    REQUIRE(m > 0);
    sc.slo.ttft_ms = 5.5 * 2048 * m;
    sc.workload.admission.slo_factor = 1;
    run_result r;
    REQUIRE(run(&sc, &r) == 0);
    CHECK_MSG(r.sum.requests_completed == 5 && r.sum.requests_shed == 15, "completed %lld shed %lld",
              (long long)r.sum.requests_completed, (long long)r.sum.requests_shed);
    CHECK(r.sum.n_classes == 0 && r.sum.shed_reported);
    free(r.recs);
    /* factor 2: 11 */
    sc.workload.admission.slo_factor = 2;
    REQUIRE(run(&sc, &r) == 0);
    CHECK(r.sum.requests_completed == 11 && r.sum.requests_shed == 9);
    free(r.recs);

    /* By priority a request is predicted behind only what is served before
     * it: 10 batch prompts (no TTFT bound: never shed) arrive in the first
     * millisecond, then 3 interactive ones at 1, 2, 3 ms, all inside the
     * first iteration. The k-th interactive sees the running batch prompt
     * and k - 1 interactive ones, not the 9 waiting batch prompts:
     * (k + 1)·2048·m <= 5.5·2048·m, all admitted. With one priority it
     * waits behind all 10: (10 + k)·2048·m, all 3 shed. */
    for (int same = 0; same < 2; same++) {
        class_base(&sc, 2048, 4);
        sc.deployment.pools[0].scheduler.chunk_tokens = 2048;
        sim_class_cfg *b = &sc.workload.classes[0], *in = &sc.workload.classes[1];
        b->priority = same ? 0 : 1;
        b->requests = 10;
        b->arrival.process = SIM_ARRIVAL_CONSTANT;
        b->arrival.rate = 20000;
        in->requests = 3;
        in->arrival.process = SIM_ARRIVAL_CONSTANT;
        in->arrival.rate = 1000;
        in->slo.ttft_ms = 5.5 * 2048 * m;
        sc.workload.admission.slo_factor = 1;
        REQUIRE(run(&sc, &r) == 0);
        CHECK_MSG(r.sum.classes[1].requests_shed == (same ? 3 : 0) && r.sum.classes[0].requests_shed == 0,
                  "%s: interactive shed %lld", same ? "one priority" : "by priority",
                  (long long)r.sum.classes[1].requests_shed);
        free(r.recs);
    }
}

/* --json: a `classes` object keyed by name, and no class or shed keys at
 * all without classes and admission. */
static void test_json(void)
{
    sim_scenario sc;
    run_result r;
    two_class(&sc, 2, 0);
    REQUIRE(run(&sc, &r) == 0);
    char *buf = test_summary_json(&r.sum);
    REQUIRE(buf != NULL);
    CHECK_CONTAINS(buf, "\"requests_shed\": 0,");
    CHECK_CONTAINS(buf, "\"classes\": {\n    \"batch\": {\"priority\": 2, \"slo\": {\"ttft_ms\": 0, \"tpot_ms\": 0, "
                        "\"e2e_ms\": 0}, \"requests_completed\": 5,");
    CHECK_CONTAINS(buf, "\"interactive\": {\"priority\": 0, \"slo\": {\"ttft_ms\": 1e+09,");
    CHECK_CONTAINS(buf, "\"slo_attainment\": 1");
    CHECK_CONTAINS(buf, "\"slo_attainment\": 1, \"req_per_s\": ");
    free(buf);
    free(r.recs);

    sim_scenario_defaults(&sc);
    snprintf(sc.hardware.perf_db, sizeof sc.hardware.perf_db, "none");
    sc.workload.requests = 20;
    REQUIRE(run(&sc, &r) == 0);
    buf = test_summary_json(&r.sum);
    REQUIRE(buf != NULL);
    CHECK(strstr(buf, "classes") == NULL && strstr(buf, "shed") == NULL);
    free(buf);
    free(r.recs);
}

/* Each class's achieved rates by hand: batch completes 5 requests of 1000
 * prompt and 50 output tokens, interactive 2 of the same, all over the
 * run's one span T (first arrival to last completion): batch 5/T req/s,
 * 5000/T input and 250/T output tok/s, interactive 2/T, 2000/T, 100/T, and
 * the classes add up to the headline's throughput. */
static void test_class_rates(void)
{
    sim_scenario sc;
    run_result r;
    two_class(&sc, 2, 0);
    REQUIRE(run(&sc, &r) == 0);
    double t = r.sum.sim_time_s;
    REQUIRE(t > 0 && r.sum.n_classes == 2);
    static const double n[2] = {5, 2};
    double req = 0, in = 0, out = 0;
    for (int c = 0; c < 2; c++) {
        const sim_class_summary *cs = &r.sum.classes[c];
        CHECK(cs->requests_completed == (int64_t)n[c]);
        CHECK_MSG(fabs(cs->req_per_s - n[c] / t) < 1e-9 * n[c] / t, "%s: %.9g req/s, by hand %.9g", cs->name,
                  cs->req_per_s, n[c] / t);
        CHECK(fabs(cs->input_tokens_per_s - 1000 * n[c] / t) < 1e-9 * 1000 * n[c] / t);
        CHECK(fabs(cs->output_tokens_per_s - 50 * n[c] / t) < 1e-9 * 50 * n[c] / t);
        CHECK(fabs(cs->goodput_req_per_s - cs->req_per_s) < 1e-12); /* every request within its SLO */
        req += cs->req_per_s;
        in += cs->input_tokens_per_s;
        out += cs->output_tokens_per_s;
    }
    CHECK(fabs(req - r.sum.req_per_s) < 1e-9 * r.sum.req_per_s);
    CHECK(fabs(in - r.sum.input_tokens_per_s) < 1e-9 * r.sum.input_tokens_per_s);
    CHECK(fabs(out - r.sum.output_tokens_per_s) < 1e-9 * r.sum.output_tokens_per_s);
    char *buf = test_summary_json(&r.sum);
    REQUIRE(buf != NULL);
    char want[160];
    snprintf(want, sizeof want, "\"req_per_s\": %.9g, \"input_tokens_per_s\": %.9g, \"output_tokens_per_s\": %.9g}",
             r.sum.classes[0].req_per_s, r.sum.classes[0].input_tokens_per_s, r.sum.classes[0].output_tokens_per_s);
    CHECK_CONTAINS(buf, want);
    free(buf);
    free(r.recs);
}

/* scenarios/slo-classes.yaml as the README shows it: three classes, the
 * batch bucket sheds, and by priority the interactive and standard classes
 * meet their SLOs far more often than with one priority for all. */
static void test_shipped_scenario(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scenarios/slo-classes.yaml", test_src_dir());
    sim_scenario sc;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_loader_load_file(path, NULL, 0, &sc, &err) == 0, "%s", err.msg);
    run_result r, f;
    REQUIRE(run(&sc, &r) == 0);
    REQUIRE(r.sum.n_classes == 3);
    CHECK(strcmp(r.sum.classes[2].name, "batch") == 0 && r.sum.classes[2].requests_shed > 0);
    const char *same[] = {"workload.classes.0.priority=1", "workload.classes.2.priority=1"};
    REQUIRE_MSG(sim_loader_load_file(path, same, 2, &sc, &err) == 0, "%s", err.msg);
    REQUIRE(run(&sc, &f) == 0);
    for (int c = 0; c < 2; c++)
        CHECK_MSG(r.sum.classes[c].slo_attainment > f.sum.classes[c].slo_attainment + 0.3,
                  "%s: %.3f by priority, %.3f with one priority", r.sum.classes[c].name, r.sum.classes[c].slo_attainment,
                  f.sum.classes[c].slo_attainment);
    free(r.recs);
    free(f.recs);
}

/* servesim search with classes: evaluated at the classes' own rates,
 * each candidate judged by every class's own SLO (the one-GPU layouts
 * miss a class's bound and say which), the classes written back into
 * recommended.yaml, which replays. */
static void test_search(void)
{
    REQUIRE_OR(test_servesim != NULL, return);
    char cmd[4096], dir[] = "/tmp/test_slo_classes_XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "%s search %s/tests/data/slo/search-classes.yaml --no-db --quiet --out %s 2>&1",
             test_servesim, test_src_dir(), dir);
    char *out = NULL;
    CHECK(test_sh(cmd, &out) == 0);
    CHECK_CONTAINS(out, "SLO: every class's own (workload.classes.*.slo) at p99");
    CHECK_CONTAINS(out, "workload.classes: each candidate is evaluated at the classes' own arrival rates");
    CHECK_CONTAINS(out, "recommended: colocated 1x tp2");
    free(out);
    char path[600];
    snprintf(path, sizeof path, "%s/candidates.csv", dir);
    char *csv = test_slurp(path);
    REQUIRE(csv != NULL);
    CHECK_CONTAINS(csv, "slo_missed,\"colocated 1x tp1 | seqs 64 mbt 8192 chunk 2048\"");
    CHECK_CONTAINS(csv, "\"class interactive: TTFT p99 ");
    free(csv);
    snprintf(path, sizeof path, "%s/recommended.yaml", dir);
    sim_scenario sc;
    sim_err err = {{0}};
    REQUIRE_MSG(sim_loader_load_file(path, NULL, 0, &sc, &err) == 0, "%s", err.msg);
    CHECK(sc.workload.n_classes == 2 && strcmp(sc.workload.classes[1].name, "batch") == 0);
    CHECK(sc.workload.classes[1].priority == 1 && sc.workload.classes[1].arrival.rate == 4);
    CHECK(sc.workload.classes[0].slo.ttft_ms == 300 && sc.workload.classes[1].slo.e2e_ms == 60000);
    CHECK(sc.workload.classes[0].requests == 300 && sc.workload.classes[1].input_tokens.value == 4096);
    run_result r;
    REQUIRE(run(&sc, &r) == 0);
    CHECK(r.sum.requests_completed == 600 && r.sum.requests_good == 600);
    free(r.recs);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(test_sh(cmd, NULL) == 0);
}

static const test_case cases[] = {
    {"search", test_search},
    {"shipped_scenario", test_shipped_scenario},
    {"merge", test_merge},
    {"priority_overtakes", test_priority_overtakes},
    {"preempt_lower_first", test_preempt_lower_first},
    {"token_bucket", test_token_bucket},
    {"slo_shed", test_slo_shed},
    {"json", test_json},
    {"class_rates", test_class_rates},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_slo_classes", cases);
}
