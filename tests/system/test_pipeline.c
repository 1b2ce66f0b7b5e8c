/* test_pipeline — pipeline parallelism inside an instance: up to
 * micro_batches batches in flight, each through every stage in turn.
 * A lone request pays the whole traversal per iteration (exact timing
 * against model_cost_pipeline); two lone requests run in two batches at
 * once instead of taking turns; a decode-heavy closed loop on tp2×pp4
 * delivers what the steady-state hand calculation says and within 10 % of
 * four tp2 instances per GPU, while one batch at a time (micro_batches 1)
 * pays the fill/drain bubble; runs are deterministic; the trace puts each
 * batch slot's iterations on its own track. */
#include "model_catalog.h"
#include "model_cost.h"
#include "model_layout.h"
#include "sim_pool_layout.h"
#include "sim_cluster.h"
#include "sim_trace_out.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

/* Llama-3.1-70B fp8 on H100s (analytic roofline), one pool. */
static void base(sim_scenario *sc, int tp, int pp, int instances)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-70b");
    sc->dtype = SIM_DTYPE_FP8;
    snprintf(sc->hardware.gpu, sizeof sc->hardware.gpu, "h100-sxm");
    snprintf(sc->hardware.perf_db, sizeof sc->hardware.perf_db, "none");
    sc->deployment.pools[0].instances = instances;
    sc->deployment.pools[0].parallel.tp = tp;
    sc->deployment.pools[0].parallel.pp = pp;
    sc->routing.policy = SIM_ROUTE_LEAST_LOADED;
}

static void fixed_lengths(sim_scenario *sc, int32_t in, int32_t out)
{
    sc->workload.input_tokens.dist = SIM_DIST_FIXED;
    sc->workload.input_tokens.value = in;
    sc->workload.output_tokens.dist = SIM_DIST_FIXED;
    sc->workload.output_tokens.value = out;
}

/* The cost model the cluster builds for pool 0. */
static model_cost *pool_cost(const sim_scenario *sc)
{
    model_spec m;
    model_gpu g;
    model_layout l;
    model_cost *c = NULL;
    sim_err err = {{0}};
    REQUIRE_MSG_OR(model_catalog_model(sc->model, &m, &err) == 0, return NULL, "%s", err.msg);
    REQUIRE_MSG_OR(model_catalog_gpu(sc->hardware.gpu, &g, &err) == 0, return NULL, "%s", err.msg);
    REQUIRE_MSG_OR(sim_pool_layout(sc, &sc->deployment.pools[0], &l, &err) == 0, return NULL, "%s", err.msg);
    REQUIRE_MSG_OR(model_cost_create(&m, &g, &l, &c, &err) == 0, return NULL, "%s", err.msg);
    return c;
}

static sim_time ns(double s) { return (sim_time)(s * 1e9 + 0.5); }

/* One batch alone through the pipeline, rounded as the instance rounds. */
static sim_time traversal(const model_cost *c, const model_batch *b)
{
    double st[4], hop[3], host = 0;
    model_cost_pipeline(c, b, st, hop, &host);
    sim_time t = ns(host);
    for (int k = 0; k < 4; k++) t += ns(st[k]) + (k < 3 ? ns(hop[k]) : 0);
    return t;
}

/* A lone request: nothing else is runnable, so every iteration pays the
 * whole fill and drain (host, four stages, three hops), exactly. */
static void test_lone_request_pays_the_bubble(void)
{
    sim_scenario sc;
    base(&sc, 2, 4, 1);
    fixed_lengths(&sc, 3000, 8);
    sc.workload.requests = 1;
    sc.deployment.pools[0].scheduler.chunk_tokens = 2048;
    run_result r;
    if (run(&sc, &r)) return;
    REQUIRE(r.n == 1);
    model_cost *c = pool_cost(&sc);
    REQUIRE_OR(c != NULL, free(r.recs); return);
    sim_time t = r.recs[0].arrival;
    for (int32_t done = 0; done < 3000;) {
        model_chunk ch = {.tokens = 3000 - done < 2048 ? 3000 - done : 2048, .cached = done};
        model_batch b = {.n_chunks = 1, .chunks = &ch};
        t += traversal(c, &b);
        done += ch.tokens;
    }
    CHECK_MSG(r.recs[0].first_token == t, "first token at %lld, expected %lld", (long long)r.recs[0].first_token,
              (long long)t);
    double step_sum = 0;
    for (int k = 1; k <= 7; k++) {
        model_batch b = {.n_decode = 1, .decode_ctx_sum = 3000 + k};
        t += traversal(c, &b);
        step_sum += model_cost_iteration(c, &b, NULL);
    }
    CHECK_MSG(r.recs[0].finish == t, "finish at %lld, expected %lld", (long long)r.recs[0].finish, (long long)t);
    /* The traversal is the iteration latency model_cost_iteration gives. */
    double sim_steps = (double)(r.recs[0].finish - r.recs[0].first_token) * 1e-9;
    CHECK_NEAR(sim_steps, step_sum, 1e-8);

    /* The visible TTFT cost: the prompt goes through all four stages, so a
     * lone prompt takes about what tp2 takes, several times tp8's on the
     * same eight GPUs. */
    sim_scenario s8;
    base(&s8, 8, 1, 1);
    fixed_lengths(&s8, 3000, 8);
    s8.workload.requests = 1;
    s8.deployment.pools[0].scheduler.chunk_tokens = 2048;
    run_result r8;
    if (run(&s8, &r8) == 0 && r8.n == 1) {
        double ttft_pp = (double)(r.recs[0].first_token - r.recs[0].arrival);
        double ttft_8 = (double)(r8.recs[0].first_token - r8.recs[0].arrival);
        CHECK_MSG(ttft_pp > 1.8 * ttft_8, "TTFT tp2pp4 %.1f ms vs tp8 %.1f ms", ttft_pp * 1e-6, ttft_8 * 1e-6);
    }
    free(r8.recs);
    model_cost_destroy(c);
    free(r.recs);
}

/* Two lone requests arriving together run as two batches in flight: each
 * gets its tokens about as fast as one alone (the second batch follows
 * the first one stage behind), not half as fast as when they take turns
 * in one batch slot. */
static void test_two_batches_in_flight(void)
{
    sim_scenario sc;
    base(&sc, 2, 4, 1);
    fixed_lengths(&sc, 64, 200);
    sc.workload.requests = 2;
    sc.workload.arrival.process = SIM_ARRIVAL_CLOSED;
    sc.workload.arrival.concurrency = 2;
    sc.deployment.pools[0].scheduler.max_seqs = 1; /* one request a batch */
    sc.deployment.pools[0].scheduler.max_batched_tokens = 64;
    sc.deployment.pools[0].scheduler.chunk_tokens = 64;
    run_result two, one;
    if (run(&sc, &two)) return;
    sc.workload.requests = 1;
    sc.workload.arrival.concurrency = 1;
    if (run(&sc, &one)) return;
    REQUIRE(two.n == 2 && one.n == 1);
    double alone = (double)(one.recs[0].finish - one.recs[0].arrival);
    for (int i = 0; i < 2; i++) {
        double e2e = (double)(two.recs[i].finish - two.recs[i].arrival);
        CHECK_MSG(e2e < 1.05 * alone, "request %d: %.1f ms with a second batch in flight, %.1f ms alone", i,
                  e2e * 1e-6, alone * 1e-6);
    }
    /* One batch slot: the two requests share each traversal (max_seqs 2)
     * or, at max_seqs 1, take turns: twice as long. */
    sc.deployment.pools[0].parallel.micro_batches = 1;
    sc.workload.requests = 2;
    sc.workload.arrival.concurrency = 2;
    run_result turns;
    if (run(&sc, &turns) == 0 && turns.n == 2) {
        double last = (double)(turns.recs[1].finish - turns.recs[1].arrival);
        CHECK_MSG(last > 1.8 * alone, "taking turns: %.1f ms vs %.1f ms alone", last * 1e-6, alone * 1e-6);
    }
    free(turns.recs);
    free(two.recs);
    free(one.recs);
}

/* Decode-heavy closed loop: 128 clients, 128-token prompts, 1024 output
 * tokens. tp2×pp4 keeps four batches of ~32 in flight; four tp2 instances
 * run ~32 each. Hand calculation of the PP steady state: a batch of b
 * decoding requests at mean context ctx leaves the pipeline every
 * max(busiest stage, traversal / 4), so the instance delivers b tokens per
 * interval. */
static void test_steady_state_vs_tp_only(void)
{
    sim_scenario pp, tp, one;
    base(&pp, 2, 4, 1);
    base(&tp, 2, 1, 4);
    sim_scenario *both[2] = {&pp, &tp};
    for (int i = 0; i < 2; i++) {
        fixed_lengths(both[i], 128, 1024);
        both[i]->workload.requests = 1280;
        both[i]->workload.arrival.process = SIM_ARRIVAL_CLOSED;
        both[i]->workload.arrival.concurrency = 128;
    }
    one = pp;
    one.deployment.pools[0].parallel.micro_batches = 1;
    run_result rp, rt, r1;
    if (run(&pp, &rp) || run(&tp, &rt) || run(&one, &r1)) return;
    CHECK(rp.st.completed == 1280 && rt.st.completed == 1280 && r1.st.completed == 1280);
    CHECK_MSG(rp.st.kv_blocks_used == 0 && rp.st.outstanding_tokens == 0 && rp.st.running == 0,
              "tp2pp4 leaves %lld KV blocks, %lld tokens", (long long)rp.st.kv_blocks_used,
              (long long)rp.st.outstanding_tokens);
    double g_pp = rp.sum.output_tokens_per_s / 8, g_tp = rt.sum.output_tokens_per_s / 8, g_1 = r1.sum.output_tokens_per_s / 8;
    printf("    output tok/s/GPU: tp2pp4 %.1f, 4 x tp2 %.1f, tp2pp4 one batch at a time %.1f\n", g_pp, g_tp, g_1);
    CHECK_MSG(g_pp > 0.9 * g_tp && g_pp < 1.05 * g_tp, "tp2pp4 %.1f vs 4 x tp2 %.1f tok/s/GPU", g_pp, g_tp);
    /* One batch at a time pays the fill and drain on every iteration. */
    CHECK_MSG(g_1 < 0.8 * g_pp, "one batch at a time %.1f vs %.1f tok/s/GPU", g_1, g_pp);

    model_cost *c = pool_cost(&pp);
    if (c) {
        const int64_t b = 32, ctx = 128 + 512;
        model_batch d = {.n_decode = (int32_t)b, .decode_ctx_sum = b * ctx};
        double busiest = 0, iv = model_cost_pipeline_interval(c, &d, 4, &busiest);
        double hand = (double)b / iv / 8;
        printf("    hand calculation: a batch of %lld every %.3f ms (busiest stage %.3f ms): %.1f tok/s/GPU\n",
               (long long)b, iv * 1e3, busiest * 1e3, hand);
        /* Prefill chunks and the ramp at the start and end cost a little. */
        CHECK_MSG(g_pp > 0.9 * hand && g_pp < 1.02 * hand, "simulated %.1f vs hand %.1f tok/s/GPU", g_pp, hand);
        /* One batch of 128 at a time: every token waits for a whole traversal. */
        model_batch d1 = {.n_decode = 128, .decode_ctx_sum = 128 * ctx};
        double hand1 = 128.0 / model_cost_iteration(c, &d1, NULL) / 8;
        CHECK_MSG(g_1 > 0.85 * hand1 && g_1 < 1.02 * hand1, "one batch: simulated %.1f vs hand %.1f", g_1, hand1);
        /* TPOT: a token every traversal of a batch of ~32. */
        double tpot_hand = 4 * iv * 1e3;
        CHECK_MSG(rp.sum.tpot_ms.p50 > 0.95 * tpot_hand && rp.sum.tpot_ms.p50 < 1.1 * tpot_hand,
                  "TPOT p50 %.2f ms vs %.2f", rp.sum.tpot_ms.p50, tpot_hand);
        model_cost_destroy(c);
    }
    free(rp.recs);
    free(rt.recs);
    free(r1.recs);
}

/* Same seed, same records; another seed, others. */
static void test_determinism(void)
{
    sim_scenario sc;
    base(&sc, 2, 4, 2);
    sc.workload.requests = 600;
    sc.workload.arrival.process = SIM_ARRIVAL_POISSON;
    sc.workload.arrival.rate = 12;
    sc.workload.input_tokens.dist = SIM_DIST_LOGNORMAL;
    sc.workload.input_tokens.mean = 1500;
    sc.workload.input_tokens.std = 900;
    sc.workload.input_tokens.min = 8;
    sc.workload.input_tokens.max = 8000;
    sc.workload.output_tokens.dist = SIM_DIST_UNIFORM;
    sc.workload.output_tokens.min = 1;
    sc.workload.output_tokens.max = 600;
    run_result a, b, c;
    if (run(&sc, &a) || run(&sc, &b)) return;
    CHECK(a.n == 600 && a.st.kv_blocks_used == 0 && a.st.outstanding_tokens == 0);
    CHECK(a.n == b.n && memcmp(a.recs, b.recs, (size_t)a.n * sizeof *a.recs) == 0);
    sc.seed = 43;
    if (run(&sc, &c)) return;
    CHECK(c.n != a.n || memcmp(a.recs, c.recs, (size_t)a.n * sizeof *a.recs) != 0);
    free(a.recs);
    free(b.recs);
    free(c.recs);
}

/* The trace: overlapping batches of one instance go on one async track per
 * batch slot, each track's iterations one after the other. */
static void test_trace_slots(void)
{
    sim_scenario sc;
    base(&sc, 2, 4, 1);
    fixed_lengths(&sc, 256, 32);
    sc.workload.requests = 40;
    sc.workload.arrival.process = SIM_ARRIVAL_CLOSED;
    sc.workload.arrival.concurrency = 16;
    char path[] = "/tmp/test_pipeline_trace_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    sim_err err = {{0}};
    sim_cluster *cl = NULL;
    sim_trace_out *t = NULL;
    sim_summary sum;
    CHECK_MSG(sim_cluster_create(&sc, &cl, &err) == 0, "%s", err.msg);
    CHECK_MSG(sim_trace_out_open(path, 0, 0, 0, &t, &err) == 0, "%s", err.msg);
    if (cl && t) {
        sim_cluster_set_trace(cl, t);
        CHECK_MSG(sim_cluster_run(cl, &sum, &err) == 0, "%s", err.msg);
    }
    CHECK(sim_trace_out_close(t, NULL, &err) == 0);
    sim_cluster_destroy(cl);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    unlink(path);
    REQUIRE_MSG(j != NULL, "%s", je.text);
    json_t *ev = json_object_get(j, "traceEvents");
    int64_t x = 0, b = 0, e = 0, slots_seen = 0, overlap = 0;
    double last_end[4] = {-1, -1, -1, -1};
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *o = json_array_get(ev, i);
        const char *ph = json_string_value(json_object_get(o, "ph"));
        const char *cat = json_string_value(json_object_get(o, "cat"));
        if (ph && !strcmp(ph, "X")) x++;
        if (!ph || !cat || strcmp(cat, "iteration")) continue;
        int slot = -1;
        if (sscanf(json_string_value(json_object_get(o, "id")), "instance 0 slot %d", &slot) != 1 || slot < 0 ||
            slot > 3)
            continue;
        double ts = json_number_value(json_object_get(o, "ts"));
        if (!strcmp(ph, "b")) {
            b++;
            if (ts < last_end[slot]) overlap++;
        } else if (!strcmp(ph, "e")) {
            e++;
            if (last_end[slot] < 0) slots_seen++;
            last_end[slot] = ts;
        }
    }
    CHECK_MSG(x == 0 && b > 0 && b == e, "%lld X, %lld begin, %lld end", (long long)x, (long long)b, (long long)e);
    CHECK_MSG(slots_seen == 4, "%lld batch slots traced", (long long)slots_seen);
    CHECK_MSG(overlap == 0, "%lld iterations of one slot overlap", (long long)overlap);
    json_decref(j);
}

static const test_case cases[] = {
    {"lone_request_pays_the_bubble", test_lone_request_pays_the_bubble},
    {"two_batches_in_flight", test_two_batches_in_flight},
    {"steady_state_vs_tp_only", test_steady_state_vs_tp_only},
    {"determinism", test_determinism},
    {"trace_slots", test_trace_slots},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_pipeline", cases);
}
