/* test_route_answer — the cache-aware router sees a session's previous
 * answer: when an instance caches a finished request's answer blocks, the
 * router's approximate view (routing.view approximate) records them as it
 * records prompts at dispatch, so a session's next turn, whose prompt
 * blocks alone match two instances equally, goes to the instance that
 * holds the answer too; with an answer too short to complete a block the
 * tie stands and goes to the lowest index. The exact view (the instances'
 * own caches) agrees, and so does the Dynamo preset. */
#include "sim_cluster.h"
#include "test_util.h"
#include "test_cluster_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* X (8192 tokens, starting with blocks [1, 2]) goes to instance 0 (all
 * views empty: the lowest index). Turn 1 of session s, [1, 2], arrives
 * 1 ms later while X's prefill is still pending on instance 0: with
 * lambda 1 the queue there outweighs the 2 matched blocks, so it goes to
 * instance 1. Its answer (`out` tokens) ends long before turn 2 arrives;
 * then both instances hold [1, 2] as prompt blocks. With out = 1100
 * instance 1 also caches 2 answer blocks (2123 tokens of KV) and turn 2
 * ([1, 2, 3, 4, 5], 2224 tokens) matches 4 blocks there; with out = 300
 * (1323 tokens of KV, no answer block) both match 2. */
static void route_case(sim_route_view view, sim_route_preset preset, int out, int32_t expect)
{
    char text[1024];
    int ctx = 1024 + out;
    snprintf(text, sizeof text,
             "{\"timestamp\": 0, \"input_length\": 8192, \"output_length\": 4,"
             " \"hash_ids\": [1, 2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33]}\n"
             "{\"timestamp\": 1, \"session_id\": 1, \"id\": 1, \"input_length\": 1024, \"output_length\": %d,"
             " \"hash_ids\": [1, 2]}\n"
             "{\"session_id\": 1, \"id\": 2, \"delay\": 5000, \"input_length\": %d, \"output_length\": 4,"
             " \"hash_ids\": %s}\n",
             out, ctx + 100, out == 1100 ? "[1, 2, 3, 4, 5]" : "[1, 2, 3]");
    const char *path = "test_route_answer.jsonl";
    char abs[4096];
    REQUIRE(test_write_text(path, text, abs) == 0);
    sim_scenario sc;
    REQUIRE(test_trace_scenario(&sc, abs, 2, 512) == 0);
    sc.routing.policy = SIM_ROUTE_CACHE_AWARE;
    sc.routing.preset = preset;
    sc.routing.lambda = 1;
    sc.routing.view = view;
    sim_req_record r[3];
    REQUIRE(run_by_id_with(&sc, test_fixed_cost, NULL, NULL, r, 3) == 3);
    CHECK_MSG(r[0].input_tokens == 8192 && r[0].instance == 0 && r[1].instance == 1,
              "view %d preset %d: X on %d, turn 1 on %d", (int)view, (int)preset, r[0].instance, r[1].instance);
    CHECK_MSG(r[2].instance == expect, "view %d preset %d, answer %d: turn 2 on %d, not %d", (int)view,
              (int)preset, out, r[2].instance, expect);
    int32_t found = expect == 1 && out == 1100 ? 2048 : 1024;
    CHECK_MSG(r[2].cached_tokens == found, "turn 2 found %d, not %d", r[2].cached_tokens, found);
    remove(path);
}

static void test_next_turn_follows_answer(void)
{
    route_case(SIM_VIEW_APPROXIMATE, SIM_PRESET_NONE, 1100, 1);
    route_case(SIM_VIEW_EXACT, SIM_PRESET_NONE, 1100, 1);
}

static void test_tie_without_answer_block(void)
{
    route_case(SIM_VIEW_APPROXIMATE, SIM_PRESET_NONE, 300, 0);
    route_case(SIM_VIEW_EXACT, SIM_PRESET_NONE, 300, 0);
}

/* Dynamo's cost (fewer prefill blocks) reads the same view. */
static void test_dynamo(void)
{
    route_case(SIM_VIEW_APPROXIMATE, SIM_PRESET_DYNAMO, 1100, 1);
}

static const test_case cases[] = {
    {"next_turn_follows_answer", test_next_turn_follows_answer},
    {"tie_without_answer_block", test_tie_without_answer_block},
    {"dynamo", test_dynamo},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_route_answer", cases);
}
