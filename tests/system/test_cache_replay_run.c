/* test_cache_replay_run — cache-replay and a full run agree: on a small
 * session trace whose requests never overlap (sessions, a sub-request, a
 * request outside sessions; every cache large enough that nothing is
 * evicted) the replay's matched prompt tokens, and so its token hit rate,
 * equal the simulator's, answer blocks included, on one instance and on
 * two routed round robin. */
#include "sim_cache_replay.h"
#include "sim_cluster.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Session A: three turns, each prompt the previous context plus its own
 * tokens (the partial block of turn 2 gets a new id, 5, once full in turn
 * 3, as in Mooncake traces); R outside sessions shares A's first blocks;
 * session B fans a sub-request out of its first turn, then a second turn.
 * By hand: A2 finds 3 blocks (A1's 1723 tokens of KV), A3 4, R 2, B's
 * sub-request 2 (B1's prompt block and its answer's), B2 2: 13 blocks.
 * On two instances, round robin in arrival (= file) order, A1 A3 B1 B2
 * share one and A2 R B1s the other: A3 finds A1's 3 blocks, R A2's 2 and
 * B2 B1's 2 (prompt and answer): 7 blocks. */
static const char trace[] =
    "{\"timestamp\": 0, \"session_id\": \"a\", \"id\": \"a1\", \"input_length\": 1024, \"output_length\": 700,"
    " \"hash_ids\": [1, 2]}\n"
    "{\"session_id\": \"a\", \"id\": \"a2\", \"delay\": 1000, \"input_length\": 2000, \"output_length\": 300,"
    " \"hash_ids\": [1, 2, 3, 4]}\n"
    "{\"session_id\": \"a\", \"id\": \"a3\", \"delay\": 1000, \"input_length\": 2600, \"output_length\": 50,"
    " \"hash_ids\": [1, 2, 3, 5, 6]}\n"
    "{\"timestamp\": 50000, \"input_length\": 1100, \"output_length\": 600, \"hash_ids\": [1, 2, 9]}\n"
    "{\"timestamp\": 100000, \"session_id\": \"b\", \"id\": \"b1\", \"input_length\": 700, \"output_length\": 400,"
    " \"hash_ids\": [10, 11]}\n"
    "{\"session_id\": \"b\", \"id\": \"b1s\", \"parent_id\": \"b1\", \"delay\": 500, \"input_length\": 1500,"
    " \"output_length\": 20, \"hash_ids\": [10, 11, 12]}\n"
    "{\"session_id\": \"b\", \"id\": \"b2\", \"delay\": 1000, \"input_length\": 1700, \"output_length\": 10,"
    " \"hash_ids\": [10, 11, 12, 13]}\n";

/* Matched prompt tokens of the simulator on `instances` instances routed
 * round robin, and of cache-replay with as many infinite caches. */
static void compare(const char *abs, int32_t instances, int64_t expect)
{
    sim_scenario sc;
    REQUIRE(test_trace_scenario(&sc, abs, instances, 512) == 0);
    sc.routing.policy = SIM_ROUTE_ROUND_ROBIN;
    sim_summary sum;
    sim_req_record rec[7];
    REQUIRE(run_by_id_with(&sc, test_fixed_cost, &sum, NULL, rec, 7) == 7);
    int64_t sim_cached = 0, prompt = 0;
    for (int i = 0; i < 7; i++) {
        sim_cached += rec[i].cached_tokens;
        prompt += rec[i].input_tokens;
    }

    sim_err err = {{0}};
    sim_trace *t = NULL;
    REQUIRE_MSG(sim_trace_load(abs, SIM_TRACE_MOONCAKE, &t, &err) == 0, "%s", err.msg);
    sim_cache_replay_cfg cfg;
    sim_cache_replay_cfg_defaults(&cfg);
    sim_cache_replay *r = NULL;
    int rc = sim_cache_replay_prepare(t, &cfg, &r, &err);
    sim_trace_destroy(t);
    REQUIRE_MSG(rc == 0, "%s", err.msg);
    sim_cache_replay_result res;
    rc = sim_cache_replay_run(r, instances, -1, &res, &err);
    sim_cache_replay_destroy(r);
    REQUIRE_MSG(rc == 0, "%s", err.msg);

    CHECK(res.prompt_tokens == prompt);
    CHECK_MSG(res.matched_tokens == sim_cached && sim_cached == expect,
              "%d instances: replay %lld tokens, run %lld, by hand %lld", (int)instances,
              (long long)res.matched_tokens, (long long)sim_cached, (long long)expect);
    CHECK_NEAR(res.token_hit, sum.cache_hit_rate, 1e-12);
}

static void test_replay_equals_run(void)
{
    const char *path = "test_cache_replay_run.jsonl";
    char abs[4096];
    REQUIRE(test_write_text(path, trace, abs) == 0);
    compare(abs, 1, 13 * 512);
    compare(abs, 2, 7 * 512);
    remove(path);
}

static const test_case cases[] = {
    {"replay_equals_run", test_replay_equals_run},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_cache_replay_run", cases);
}
