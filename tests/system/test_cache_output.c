/* test_cache_output — a finished request's answer blocks stay in its
 * instance's prefix cache: a session's next turn finds the previous
 * prompt AND answer (every full block of them, hand-counted; the partial
 * block after them is recomputed), from a session trace, from synthetic
 * sessions and from prefix.kind multi_turn; requests outside sessions
 * cache answer blocks nobody else finds, so the hits of unrelated
 * requests do not move; under memory pressure the answer blocks, the
 * tail of their chain, are evicted first; and two runs are identical. */
#include "sim_cluster.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000LL
#define ITER_NS TEST_ITER_NS

/* One instance, the cache on in blocks of `cache_tokens`, a trace (an
 * absolute path) or none. */
static void base(sim_scenario *sc, const char *trace, int32_t cache_tokens)
{
    sim_scenario_defaults(sc);
    snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
    sc->workload.requests = 0;
    if (trace) {
        sc->workload.trace.format = SIM_TRACE_MOONCAKE;
        size_t n = strlen(trace);
        if (n < sizeof sc->workload.trace.path) memcpy(sc->workload.trace.path, trace, n + 1);
    }
    sc->deployment.pools[0].instances = 1;
    sc->output.sample_interval_s = 1;
    sc->cache.enabled = 1;
    sc->cache.block_tokens = cache_tokens;
}

/* Runs sc on the fixed iteration cost; records by id into rec[0..cap). */
static int64_t run_by_id(const sim_scenario *sc, sim_cluster_state *st, sim_req_record *rec, int64_t cap)
{
    return run_by_id_with(sc, test_fixed_cost, NULL, st, rec, cap);
}

/* Writes text to path (in the working directory) and its absolute path
 * into abs[4096]; -1 on failure. */
static int write_trace(const char *path, const char *text, char *abs)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int ok = fputs(text, f) >= 0;
    if (fclose(f) != 0 || !ok) return -1;
    return realpath(path, abs) ? 0 : -1;
}

/* Turn 1: 1024 tokens = hash blocks [1, 2], answer 1100 tokens; turn 2
 * names the context (2124 tokens) [1, 2, 3, 4, 5] and adds its own 100
 * tokens (2224). Turn 1 ends with 2123 tokens in KV (the last one sampled
 * is never computed): 4 full 512-token blocks, 2 of the prompt and 2 of
 * the answer. Turn 2 finds all 4, 2048 tokens, and prefills the rest: the
 * answer's partial block [2048, 2124) and its own 100 tokens. */
static const char two_turns[] =
    "{\"timestamp\": 0, \"session_id\": 1, \"id\": 1, \"input_length\": 1024, \"output_length\": 1100,"
    " \"hash_ids\": [1, 2]}\n"
    "{\"session_id\": 1, \"id\": 2, \"delay\": 100, \"input_length\": 2224, \"output_length\": 4,"
    " \"hash_ids\": [1, 2, 3, 4, 5]}\n";

/* The same context from a 1000-token prompt whose block 1 is partial
 * (id 2) and a 1124-token answer: in turn 2 that block is full and has a
 * new id, 7, as in Mooncake traces. With cache blocks of 512 the prompt's
 * keys end before it, so the answer's keys (from turn 2's ids) continue
 * them: 4 blocks found again. With blocks of 256 the prompt's block 2
 * already lies in hash block 1 under id 2, so turn 2's chain leaves turn
 * 1's there: the answer's blocks are cached under keys of their own and
 * turn 2 finds 2 blocks, 512 tokens (docs/prefix-cache.md, the caveat). */
static const char partial_id[] =
    "{\"timestamp\": 0, \"session_id\": 1, \"id\": 1, \"input_length\": 1000, \"output_length\": 1124,"
    " \"hash_ids\": [1, 2]}\n"
    "{\"session_id\": 1, \"id\": 2, \"delay\": 100, \"input_length\": 2224, \"output_length\": 4,"
    " \"hash_ids\": [1, 7, 3, 4, 5]}\n";

static void trace_case(const char *text, int32_t cache_tokens, int32_t expect)
{
    const char *path = "test_cache_output_two_turns.jsonl";
    char abs[4096];
    REQUIRE(write_trace(path, text, abs) == 0);
    sim_scenario sc;
    base(&sc, abs, cache_tokens);
    sim_cluster_state st;
    sim_req_record r[2];
    REQUIRE(run_by_id(&sc, &st, r, 2) == 2);
    CHECK_MSG(r[0].cached_tokens == 0 && r[1].cached_tokens == expect, "C %d: cached %d then %d, not %d",
              (int)cache_tokens, r[0].cached_tokens, r[1].cached_tokens, (int)expect);
    CHECK_MSG(r[1].arrival == r[0].finish + 100 * MS, "turn 2 at %lld, turn 1 done at %lld",
              (long long)r[1].arrival, (long long)r[0].finish);
    /* Turn 2's prefill of the rest is one 10 ms iteration. */
    CHECK(r[1].first_token == r[1].arrival + ITER_NS);
    remove(path);
}

static void test_trace_answer_hit(void)
{
    trace_case(two_turns, 512, 2048);
    trace_case(two_turns, 256, 2048);
    trace_case(partial_id, 512, 2048);
    trace_case(partial_id, 256, 512);
}

/* Synthetic sessions of 2 turns: a 1000-token prompt, 700-token answers,
 * 300 new tokens, hash and cache blocks of 128. Turn 1 ends with 1699
 * tokens in KV: 13 full blocks (1664 tokens; 7 of them, 896 tokens, are
 * the prompt's). Turn 2 (2000 tokens) finds those 13 blocks and prefills
 * the partial block [1664, 1700) and its own 300 tokens. */
static void synthetic(sim_scenario *sc, int64_t count)
{
    base(sc, NULL, 128);
    sim_workload_cfg *w = &sc->workload;
    w->arrival.process = SIM_ARRIVAL_CONSTANT;
    w->arrival.rate = 0.05;
    w->input_tokens.dist = SIM_DIST_FIXED;
    w->input_tokens.value = 1000;
    w->output_tokens.dist = SIM_DIST_FIXED;
    w->output_tokens.value = 700;
    w->prefix.block_tokens = 128;
    w->sessions.count = count;
    w->sessions.fan_out = 0;
    w->sessions.turns.dist = SIM_DIST_FIXED;
    w->sessions.turns.value = 2;
    w->sessions.user_tokens.dist = SIM_DIST_FIXED;
    w->sessions.user_tokens.value = 300;
    w->sessions.think_ms.dist = SIM_DIST_FIXED;
    w->sessions.think_ms.value = 100;
}

static void test_synthetic_answer_hit(void)
{
    sim_scenario sc;
    synthetic(&sc, 3);
    sim_cluster_state st;
    sim_req_record r[6];
    REQUIRE(run_by_id(&sc, &st, r, 6) == 6);
    int turn1 = 0, turn2 = 0;
    for (int i = 0; i < 6; i++) {
        if (r[i].input_tokens == 1000) {
            turn1++;
            CHECK_MSG(r[i].cached_tokens == 0, "turn 1 (id %d) found %d", i, r[i].cached_tokens);
        } else {
            turn2++;
            CHECK(r[i].input_tokens == 2000);
            CHECK_MSG(r[i].cached_tokens == 13 * 128, "turn 2 (id %d) found %d, not 1664", i, r[i].cached_tokens);
        }
    }
    CHECK(turn1 == 3 && turn2 == 3);
}

/* workload.prefix.kind multi_turn, one closed-loop client, sessions of 2
 * turns: 1000 own tokens each turn, 700-token answers, blocks of 128.
 * Turn 2 (1700 + 1000 = 2700 tokens) finds turn 1's 13 full blocks of KV,
 * 1664 tokens, as with workload.sessions. */
static void test_prefix_multi_turn(void)
{
    sim_scenario sc;
    synthetic(&sc, 0);
    sim_workload_cfg *w = &sc.workload;
    w->requests = 4;
    w->arrival.process = SIM_ARRIVAL_CLOSED;
    w->arrival.concurrency = 1;
    w->arrival.think_time_s = 0.1;
    w->prefix.kind = SIM_PREFIX_MULTI_TURN;
    w->prefix.turns = 2;
    sim_cluster_state st;
    sim_req_record r[4];
    REQUIRE(run_by_id(&sc, &st, r, 4) == 4);
    for (int i = 0; i < 4; i++) {
        int32_t in = i % 2 ? 2700 : 1000, hit = i % 2 ? 13 * 128 : 0;
        CHECK_MSG(r[i].input_tokens == in && r[i].cached_tokens == hit, "id %d: %d tokens, %d found", i,
                  r[i].input_tokens, r[i].cached_tokens);
    }
}

/* Three requests outside sessions with the same 1100-token prompt ([1, 2,
 * 3], 2 full blocks) and 600-token answers, one after the other: each
 * later one finds the 2 prompt blocks, 1024 tokens, as without answer
 * caching; each answer completes one block (1699 tokens in KV: 3 blocks)
 * that nobody finds. The cache ends with 2 + 3 blocks. */
static const char unrelated[] =
    "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 600, \"hash_ids\": [1, 2, 3]}\n"
    "{\"timestamp\": 20000, \"input_length\": 1100, \"output_length\": 600, \"hash_ids\": [1, 2, 3]}\n"
    "{\"timestamp\": 40000, \"input_length\": 1100, \"output_length\": 600, \"hash_ids\": [1, 2, 3]}\n";

static void test_unrelated_requests(void)
{
    const char *path = "test_cache_output_unrelated.jsonl";
    char abs[4096];
    REQUIRE(write_trace(path, unrelated, abs) == 0);
    sim_scenario sc;
    base(&sc, abs, 512);
    sim_cluster_state st;
    sim_req_record r[3];
    REQUIRE(run_by_id(&sc, &st, r, 3) == 3);
    CHECK(r[0].cached_tokens == 0 && r[1].cached_tokens == 1024 && r[2].cached_tokens == 1024);
    int64_t per = 512 / sc.deployment.pools[0].scheduler.block_tokens;
    CHECK_MSG(st.cached_blocks == 5 * per, "cache holds %lld KV blocks, not %lld", (long long)st.cached_blocks,
              (long long)(5 * per));
    remove(path);
}

/* The trace of test_trace_answer_hit with a request F outside sessions
 * between the turns (no hash ids: it caches nothing) whose KV at its peak,
 * K - 1025 tokens on an instance of K (a multiple of the 16-token KV
 * block), needs 2 of the 4 cached blocks:
 * the LRU leaves, turn 1's 2 answer blocks, go, and turn 2 finds only the
 * 2 prompt blocks (1024 tokens). F smaller by 1024 tokens evicts nothing. */
static void evict_case(int64_t kv_tokens, int64_t less, int32_t expect)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"timestamp\": 0, \"session_id\": 1, \"id\": 1, \"input_length\": 1024, \"output_length\": 1100,"
             " \"hash_ids\": [1, 2]}\n"
             "{\"session_id\": 1, \"id\": 2, \"delay\": 60000, \"input_length\": 2224, \"output_length\": 4,"
             " \"hash_ids\": [1, 2, 3, 4, 5]}\n"
             "{\"timestamp\": 20000, \"input_length\": %lld, \"output_length\": 600}\n",
             (long long)(kv_tokens - 1624 - less));
    const char *path = "test_cache_output_evict.jsonl";
    char abs[4096];
    REQUIRE(write_trace(path, text, abs) == 0);
    sim_scenario sc;
    base(&sc, abs, 512);
    sc.deployment.pools[0].scheduler.gpu_mem_util = 0.3;
    sim_cluster_state st;
    sim_req_record r[3];
    REQUIRE(run_by_id(&sc, &st, r, 3) == 3);
    /* Ids follow arrival: turn 1, F, turn 2. */
    CHECK(r[0].input_tokens == 1024 && r[2].input_tokens == 2224);
    CHECK_MSG(r[1].finish < r[2].arrival, "F ends at %lld, turn 2 arrives at %lld", (long long)r[1].finish,
              (long long)r[2].arrival);
    CHECK_MSG(r[2].cached_tokens == expect, "less %lld: turn 2 found %d, not %d", (long long)less,
              r[2].cached_tokens, expect);
    remove(path);
}

static void test_eviction_lru(void)
{
    sim_scenario sc;
    base(&sc, NULL, 512);
    sc.deployment.pools[0].scheduler.gpu_mem_util = 0.3;
    sc.workload.requests = 1;
    sim_err err = {{0}};
    sim_cluster *c = NULL;
    REQUIRE(sim_cluster_create(&sc, &c, &err) == 0);
    int64_t kv = sim_cluster_pool_kv_tokens(c, 0);
    sim_cluster_destroy(c);
    REQUIRE_MSG(kv > 8192 && kv % sc.deployment.pools[0].scheduler.block_tokens == 0, "kv %lld", (long long)kv);
    evict_case(kv, 0, 1024);
    evict_case(kv, 1024, 2048);
}

/* Same seed, same runs: every record identical. */
static void test_determinism(void)
{
    sim_scenario sc;
    synthetic(&sc, 20);
    sc.workload.arrival.rate = 2;
    sc.deployment.pools[0].instances = 2;
    run_result a, b;
    REQUIRE(run_with_cost(&sc, NULL, NULL, &a) == 0);
    REQUIRE(run_with_cost(&sc, NULL, NULL, &b) == 0);
    CHECK(a.n == 40 && a.n == b.n);
    CHECK(memcmp(a.recs, b.recs, (size_t)a.n * sizeof *a.recs) == 0);
    CHECK(a.st.cached_blocks == b.st.cached_blocks);
    free(a.recs);
    free(b.recs);
}

static const test_case cases[] = {
    {"trace_answer_hit", test_trace_answer_hit},
    {"synthetic_answer_hit", test_synthetic_answer_hit},
    {"prefix_multi_turn", test_prefix_multi_turn},
    {"unrelated_requests", test_unrelated_requests},
    {"eviction_lru", test_eviction_lru},
    {"determinism", test_determinism},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    (void)argc;
    return test_run("test_cache_output", cases);
}
