/* test_sessions — sessions through the whole cluster: a session trace's
 * second turn hits the first turn's KV in the prefix cache, a fan-out's
 * next turn waits for its slowest sub-request (hand-computed on a fixed
 * cost per iteration), synthetic sessions join and end, and the per-turn
 * figures reach the summary, its JSON and its metric walk. */
#include "sim_cluster.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000LL
#define ITER_NS TEST_ITER_NS

static const char *src;

static void base(sim_scenario *sc, const char *trace)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    sc->workload.requests = 0;
    if (trace) {
        sc->workload.trace.format = SIM_TRACE_MOONCAKE;
        snprintf(sc->workload.trace.path, sizeof sc->workload.trace.path, "%s/%s", src, trace);
    }
    sc->deployment.pools[0].instances = 1;
    sc->output.sample_interval_s = 1;
}

/* base() with synthetic sessions: count sessions of `turns` turns, think_ms
 * between them; one request a second, 100-token prompts, 3-token answers. */
static void synthetic(sim_scenario *sc, int32_t count, int32_t turns, double think_ms)
{
    base(sc, NULL);
    sim_workload_cfg *w = &sc->workload;
    w->arrival.process = SIM_ARRIVAL_CONSTANT;
    w->arrival.rate = 1;
    w->input_tokens.dist = SIM_DIST_FIXED;
    w->input_tokens.value = 100;
    w->output_tokens.dist = SIM_DIST_FIXED;
    w->output_tokens.value = 3;
    w->sessions.count = count;
    w->sessions.turns.value = turns;
    w->sessions.think_ms.value = think_ms;
}

/* Runs sc (fixed iteration cost when fixed); records by id into rec[0..cap). */
static int64_t run_by_id(const sim_scenario *sc, int fixed, sim_summary *sum, sim_req_record *rec, int64_t cap)
{
    return run_by_id_with(sc, fixed ? test_fixed_cost : NULL, sum, NULL, rec, cap);
}

/* Turn 1: 2048 tokens = 4 hash blocks [11..14]; turn 2 (100 ms after turn
 * 1's end) extends them to 3000 tokens. With the cache on, turn 2 finds
 * exactly turn 1's 4 context blocks: 2048 tokens. */
static void test_second_turn_hits(void)
{
    sim_scenario sc;
    base(&sc, "tests/data/sessions/two_turns.jsonl");
    sc.cache.enabled = 1;
    sc.cache.block_tokens = 512;
    sim_summary sum;
    sim_req_record r[2];
    REQUIRE(run_by_id(&sc, 0, &sum, r, 2) == 2);
    CHECK_MSG(r[0].cached_tokens == 0 && r[1].cached_tokens == 4 * 512, "cached %d then %d", r[0].cached_tokens,
              r[1].cached_tokens);
    CHECK(r[1].input_tokens == 3000);
    CHECK_MSG(r[1].arrival == r[0].finish + 100 * MS, "turn 2 at %lld, turn 1 done at %lld",
              (long long)r[1].arrival, (long long)r[0].finish);
    const sim_session_summary *ss = &sum.sessions;
    CHECK(ss->enabled && ss->completed == 1 && ss->turns == 2 && ss->sub_requests == 0 && ss->n_turn_bins == 2);
    CHECK(ss->by_turn[0].cached_tokens_mean == 0 && ss->by_turn[1].cached_tokens_mean == 2048);
    CHECK_NEAR(ss->by_turn[1].cache_hit_rate, 2048.0 / 3000.0, 1e-12);
    CHECK_NEAR(ss->latency_ms.mean, (double)(r[1].finish - r[0].arrival) / MS, 1e-9);
    CHECK_NEAR(ss->by_turn[1].ttft_ms.mean, (double)(r[1].first_token - r[1].arrival) / MS, 1e-9);

    /* The cache off: the same session, nothing found. */
    sc.cache.enabled = 0;
    REQUIRE(run_by_id(&sc, 0, &sum, r, 2) == 2);
    CHECK(r[1].cached_tokens == 0 && sum.sessions.by_turn[1].cache_hit_rate == 0);
}

/* One instance, every iteration 10 ms. The plan (100 tokens, 3 out)
 * arrives at 0: prefill [0, 10) gives token 1, decode gives 2 and 3 at 20
 * and 30 ms. Sub-request A (2 out, no delay) arrives at 30: prefill
 * [30, 40), token 2 at 50. B (5 out, delay 5 ms) arrives at 35 and
 * prefills in the next iteration [40, 50) beside A's decode, then tokens
 * 2..5 at 60, 70, 80, 90. The answer waits for the slower, B: it arrives
 * at 90 + 100 = 190 ms, prefills to 200 and finishes at 210 ms. */
static void test_fan_out_join(void)
{
    sim_scenario sc;
    base(&sc, "tests/data/sessions/fan_out.jsonl");
    sim_summary sum;
    sim_req_record r[4];
    REQUIRE(run_by_id(&sc, 1, &sum, r, 4) == 4);
    static const long long want[4][3] = {{0, 10, 30}, {30, 40, 50}, {35, 50, 90}, {190, 200, 210}};
    for (int i = 0; i < 4; i++)
        CHECK_MSG(r[i].arrival == want[i][0] * MS && r[i].first_token == want[i][1] * MS &&
                      r[i].finish == want[i][2] * MS,
                  "request %d: arrival %lld first token %lld finish %lld ns, expected %lld %lld %lld ms", i,
                  (long long)r[i].arrival, (long long)r[i].first_token, (long long)r[i].finish, want[i][0],
                  want[i][1], want[i][2]);
    const sim_session_summary *ss = &sum.sessions;
    CHECK(ss->completed == 1 && ss->turns == 2 && ss->sub_requests == 2);
    CHECK_NEAR(ss->latency_ms.mean, 210.0, 1e-9);
    CHECK_NEAR(ss->by_turn[0].ttft_ms.mean, 10.0, 1e-9);
    CHECK_NEAR(ss->by_turn[1].ttft_ms.mean, 10.0, 1e-9);

    /* The slow sub-request made faster (delay 0, 2 tokens) moves the join.
     * Both arrive at 30 ms; the first starts an iteration at once, so the
     * second, arriving in the same nanosecond, prefills in the next one:
     * A finishes at 50, B at 60, and the answer arrives at 160 and
     * finishes at 180 ms. */
    char path[900];
    snprintf(path, sizeof path, "%s/session_fast_child.jsonl", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"timestamp\": 0, \"session_id\": 7, \"id\": \"plan\", \"input_length\": 100, \"output_length\": 3}\n"
          "{\"session_id\": 7, \"parent_id\": \"plan\", \"input_length\": 150, \"output_length\": 2}\n"
          "{\"session_id\": 7, \"parent_id\": \"plan\", \"input_length\": 160, \"output_length\": 2}\n"
          "{\"session_id\": 7, \"delay\": 100, \"input_length\": 300, \"output_length\": 2}\n",
          f);
    fclose(f);
    snprintf(sc.workload.trace.path, sizeof sc.workload.trace.path, "%s", path);
    REQUIRE(run_by_id(&sc, 1, &sum, r, 4) == 4);
    CHECK(r[1].finish == 50 * MS && r[2].finish == 60 * MS);
    CHECK_MSG(r[3].arrival == 160 * MS && r[3].finish == 180 * MS, "answer %lld..%lld", (long long)r[3].arrival,
              (long long)r[3].finish);
    remove(path);
}

/* Synthetic: 2 sessions of 3 turns, 2 sub-requests after turns 1 and 2,
 * think 40 ms. Every next turn arrives 40 ms after the later of its
 * sub-requests, which start when their turn ends; turns 2 and 3 find turn
 * 1's full 16-token blocks (and more) in the cache. */
static void test_synthetic(void)
{
    sim_scenario sc;
    synthetic(&sc, 2, 3, 40);
    sim_workload_cfg *w = &sc.workload;
    w->prefix.block_tokens = 16;
    w->sessions.fan_out = 2;
    w->sessions.child_output_tokens.dist = SIM_DIST_UNIFORM;
    w->sessions.child_output_tokens.min = 1;
    w->sessions.child_output_tokens.max = 6;
    sc.cache.enabled = 1;
    sc.cache.block_tokens = 16;
    sim_summary sum;
    sim_req_record r[32];
    /* per session: 3 turns + 2 × 2 sub-requests */
    int64_t n = run_by_id(&sc, 1, &sum, r, 32);
    CHECK(n == 14);
    if (n != 14) return;
    const sim_session_summary *ss = &sum.sessions;
    CHECK(ss->completed == 2 && ss->turns == 6 && ss->sub_requests == 8 && ss->turns_per_session == 3);
    CHECK(ss->by_turn[0].cached_tokens_mean == 0);
    CHECK_MSG(ss->by_turn[1].cached_tokens_mean >= 96, "turn 2 found %g", ss->by_turn[1].cached_tokens_mean);
    CHECK(ss->by_turn[2].cached_tokens_mean > ss->by_turn[1].cached_tokens_mean);
    /* Requests grouped by input length: turns 100, then longer; the join rule
     * holds for every turn after the first: its arrival is 40 ms after the
     * latest finish among the sub-requests that arrived at its previous
     * turn's end. */
    int joins = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < n; j++) {
            if (r[j].arrival != r[i].finish || j == i) continue;
            /* j started when i ended: a sub-request of turn i; find its siblings' latest end */
            sim_time last = 0;
            int kids = 0;
            for (int64_t k = 0; k < n; k++)
                if (r[k].arrival == r[i].finish && k != i) {
                    kids++;
                    if (r[k].finish > last) last = r[k].finish;
                }
            int found = 0;
            for (int64_t t = 0; t < n; t++)
                if (r[t].arrival == last + 40 * MS) found = 1;
            CHECK_MSG(kids == 2 && found, "turn %lld: %d sub-requests, next turn at %lld ms?", (long long)i, kids,
                      (long long)((last + 40 * MS) / MS));
            joins++;
            break;
        }
    }
    CHECK_MSG(joins == 4, "%d joins", joins);

    /* The figures reach the JSON and the metric walk (the results DB). */
    char *buf = test_summary_json(&sum);
    CHECK_CONTAINS(buf, "\"sessions\": {\"completed\": 2, \"turns\": 6, \"sub_requests\": 8");
    CHECK_CONTAINS(buf, "\"by_turn\": [");
    CHECK_CONTAINS(buf, "{\"turn\": 3, \"n\": 2, \"ttft_ms\": {");
    free(buf);
}

/* A think gap with nothing in flight does not end the run's time series:
 * one session, turn 1 at 1 s, turn 2 five seconds after it, samples every
 * second all the way to turn 2's end (a sample each second from 1 to 6 s,
 * plus the closing one). */
static void test_samples_through_gaps(void)
{
    sim_scenario sc;
    synthetic(&sc, 1, 2, 5000);
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    CHECK_MSG(sim_cluster_create(&sc, &c, &err) == 0, "%s", err.msg);
    if (!c) return;
    sim_cluster_set_cost_fn(c, test_fixed_cost, NULL);
    sim_summary sum;
    CHECK_MSG(sim_cluster_run(c, &sum, &err) == 0, "%s", err.msg);
    /* turn 1: 1.00-1.03 s; turn 2 arrives at 6.03 s and ends at 6.06 s */
    CHECK_NEAR(sum.sessions.latency_ms.mean, 5060.0, 1e-6);
    int64_t n = sim_metrics_samples_seen(sim_cluster_metrics(c));
    CHECK_MSG(n >= 7, "%lld samples over a 6.06 s run sampled every second", (long long)n);
    sim_cluster_destroy(c);
}

static int find_metric(const char *name, double v, void *ctx)
{
    (void)v;
    return strcmp(name, (const char *)ctx) == 0;
}

/* Without sessions nothing about them is printed or walked. */
static void test_off(void)
{
    sim_scenario sc;
    base(&sc, NULL);
    sc.workload.requests = 50;
    sim_summary sum;
    sim_req_record r[1];
    REQUIRE(run_by_id(&sc, 0, &sum, r, 1) >= 0);
    CHECK(!sum.sessions.enabled);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_summary_print_json(f, &sum);
    sim_summary_print_table(f, &sum, &sc);
    fclose(f);
    CHECK(strstr(buf, "session") == NULL);
    free(buf);
    CHECK(sim_summary_each_metric(&sum, find_metric, (void *)"sessions.completed") == 0);
    sum.sessions.enabled = 1;
    CHECK(sim_summary_each_metric(&sum, find_metric, (void *)"sessions.completed") == 1);
}

/* The same session with one detokenize-and-stream worker at 20 ms a
 * token: turn 2 comes 100 ms after the client saw turn 1's last token, not
 * after the engine emitted it. */
static void test_next_turn_after_last_seen(void)
{
    sim_scenario sc;
    base(&sc, "tests/data/sessions/two_turns.jsonl");
    sim_sched_cfg *s = &sc.deployment.pools[0].scheduler;
    s->detokenizer_workers = 1;
    s->stream_us_per_token = 20000;
    sim_summary sum;
    sim_req_record r[2];
    REQUIRE(run_by_id(&sc, 0, &sum, r, 2) == 2); /* both turns ran: a turn 2 never sent fails here */
    CHECK(r[0].stream_last >= 20 * MS);
    CHECK_MSG(r[1].arrival == sim_req_record_last_seen(&r[0]) + 100 * MS, "turn 2 at %lld, turn 1 seen done at %lld",
              (long long)r[1].arrival, (long long)sim_req_record_last_seen(&r[0]));
}

static const test_case cases[] = {
    {"next_turn_after_last_seen", test_next_turn_after_last_seen},
    {"second_turn_hits", test_second_turn_hits},
    {"fan_out_join", test_fan_out_join},
    {"synthetic", test_synthetic},
    {"samples_through_gaps", test_samples_through_gaps},
    {"off", test_off},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    src = test_src_dir();
    return test_run("test_sessions", cases);
}
