/* test_cache_replay — the cache-only replay: exact hit rates on hand-made
 * traces (LRU vs LFU, cache blocks smaller/larger than hash blocks, local vs
 * global caches, requests without hash ids), the qualitative Mooncake
 * effects on the bundled 200-request head of the conversation trace
 * (a small cache stays well under the theoretical maximum, a large one
 * reaches it, a global pool beats per-instance caches of the same total
 * size), answer blocks (a session's next turn finds the previous prompt
 * and answer; other requests' answers take room but nobody finds them),
 * and the `cache-replay` command's flags, table and JSON. */
#include "sim_cache_replay.h"
#include "test_util.h"

#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

static sim_cache_replay *prep(const char *text, sim_trace_format fmt, int32_t C,
                              sim_prefix_policy pol, sim_cache_route route)
{
    sim_err err = {{0}};
    sim_trace *t = NULL;
    int rc = sim_trace_parse(text, strlen(text), "hand.jsonl", fmt, &t, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc) return NULL;
    sim_cache_replay_cfg cfg;
    sim_cache_replay_cfg_defaults(&cfg);
    cfg.block_tokens = C;
    cfg.policy = pol;
    cfg.route = route;
    sim_cache_replay *r = NULL;
    rc = sim_cache_replay_prepare(t, &cfg, &r, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    sim_trace_destroy(t); /* the replay keeps its own copy of the keys */
    return r;
}

static sim_cache_replay_result run(const sim_cache_replay *r, int32_t caches, int64_t blocks)
{
    sim_cache_replay_result res;
    sim_err err = {{0}};
    int rc = sim_cache_replay_run(r, caches, blocks, &res, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return res;
}

/* r0 [1,2,3], r1 [1,2,4], r2 [1,2,3,(9)] with 1600 tokens (3 full blocks). */
static const char *trace3 =
    "{\"timestamp\": 0, \"input_length\": 1536, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n"
    "{\"timestamp\": 1, \"input_length\": 1536, \"output_length\": 1, \"hash_ids\": [1, 2, 4]}\n"
    "{\"timestamp\": 2, \"input_length\": 1600, \"output_length\": 1, \"hash_ids\": [1, 2, 3, 9]}\n";

static void test_exact_small(void)
{
    sim_cache_replay *r = prep(trace3, SIM_TRACE_MOONCAKE, 512, SIM_PREFIX_LRU, 0);
    if (!r) return;
    sim_cache_replay_result inf = run(r, 1, -1);
    CHECK(inf.requests == 3 && inf.prompt_tokens == 4672 && inf.cacheable_blocks == 9);
    CHECK(inf.matched_blocks == 5 && inf.matched_tokens == 2560 && inf.evicted_blocks == 0);
    CHECK_NEAR(inf.block_hit, 5.0 / 9, 1e-12);
    CHECK_NEAR(inf.token_hit, 2560.0 / 4672, 1e-12);
    /* 3 blocks: r1 evicts [3] for [4], r2 evicts [4] for [3]: 0 + 2 + 2. */
    sim_cache_replay_result c3 = run(r, 1, 3);
    CHECK(c3.matched_blocks == 4 && c3.evicted_blocks == 2 && c3.short_inserts == 0);
    /* 2 blocks: only the shared [1,2] ever fits. */
    sim_cache_replay_result c2 = run(r, 1, 2);
    CHECK(c2.matched_blocks == 4 && c2.short_inserts == 3 && c2.evicted_blocks == 0);
    /* A cache that holds nothing hits nothing. */
    sim_cache_replay_result c0 = run(r, 1, 0);
    CHECK(c0.matched_blocks == 0 && c0.cacheable_blocks == 9 && c0.token_hit == 0);
    sim_err err = {{0}};
    sim_cache_replay_result bad;
    CHECK(sim_cache_replay_run(r, 0, 3, &bad, &err) == SIM_EINVAL);
    CHECK(sim_cache_replay_run(r, 1, -7, &bad, &err) == SIM_EINVAL);
    sim_cache_replay_destroy(r);

    /* Cache blocks of 256 (two per hash id): r1 shares 4, r2 all 6. */
    r = prep(trace3, SIM_TRACE_MOONCAKE, 256, SIM_PREFIX_LRU, 0);
    sim_cache_replay_result s = run(r, 1, -1);
    CHECK(s.cacheable_blocks == 18 && s.matched_blocks == 10 && s.matched_tokens == 2560);
    sim_cache_replay_destroy(r);
    /* 1024: one block each ([1,2]), shared by all. */
    r = prep(trace3, SIM_TRACE_MOONCAKE, 1024, SIM_PREFIX_LRU, 0);
    s = run(r, 1, -1);
    CHECK(s.cacheable_blocks == 3 && s.matched_blocks == 2 && s.matched_tokens == 2048);
    sim_cache_replay_destroy(r);
    /* 768: block 0 = id 1 + half of id 2 (shared), block 1 = other half of
     * 2 + id 3 (r1 differs): 0 + 1 + 2. */
    r = prep(trace3, SIM_TRACE_MOONCAKE, 768, SIM_PREFIX_LRU, 0);
    s = run(r, 1, -1);
    CHECK(s.cacheable_blocks == 6 && s.matched_blocks == 3);
    sim_cache_replay_destroy(r);
}

/* 4-block cache. [1,2] twice, then [5,6], then [7] needs room: LRU drops
 * [2] (older), LFU drops [6] (fewer hits). Then [1,2] and [5,6] again.
 * LRU: 0+2+0+0+1+1 = 4, LFU: 0+2+0+0+2+1 = 5 of 11 blocks. */
static const char *trace_lfu =
    "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
    "{\"timestamp\": 1, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
    "{\"timestamp\": 2, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [5, 6]}\n"
    "{\"timestamp\": 3, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [7]}\n"
    "{\"timestamp\": 4, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
    "{\"timestamp\": 5, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [5, 6]}\n"
    "{\"timestamp\": 6, \"input_length\": 3000, \"output_length\": 1}\n";

static void test_lru_lfu(void)
{
    sim_cache_replay *r = prep(trace_lfu, SIM_TRACE_MOONCAKE, 512, SIM_PREFIX_LRU, 0);
    sim_cache_replay_result lru = run(r, 1, 4);
    CHECK(lru.cacheable_blocks == 11 && lru.matched_blocks == 4);
    CHECK(lru.prompt_tokens == 5 * 1024 + 512 + 3000); /* the id-less request counts */
    CHECK_NEAR(lru.token_hit, 4.0 * 512 / (5 * 1024 + 512 + 3000), 1e-12);
    sim_cache_replay_destroy(r);
    r = prep(trace_lfu, SIM_TRACE_MOONCAKE, 512, SIM_PREFIX_LFU, 0);
    sim_cache_replay_result lfu = run(r, 1, 4);
    CHECK(lfu.matched_blocks == 5);
    sim_cache_replay_destroy(r);
}

/* Four identical requests over two caches: round robin gives each cache
 * two (0+0+2+2), a global cache 0+2+2+2, hash routing keeps them together. */
static void test_local_global(void)
{
    const char *t = "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
                    "{\"timestamp\": 1, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
                    "{\"timestamp\": 2, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
                    "{\"timestamp\": 3, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": [1, 2]}\n";
    sim_cache_replay *r = prep(t, SIM_TRACE_MOONCAKE, 512, SIM_PREFIX_LRU, SIM_CACHE_ROUTE_ROUND_ROBIN);
    CHECK(run(r, 1, -1).matched_blocks == 6);
    CHECK(run(r, 2, -1).matched_blocks == 4);
    CHECK(run(r, 4, -1).matched_blocks == 0);
    sim_cache_replay_destroy(r);
    r = prep(t, SIM_TRACE_MOONCAKE, 512, SIM_PREFIX_LRU, SIM_CACHE_ROUTE_HASH);
    CHECK(run(r, 4, -1).matched_blocks == 6);
    sim_cache_replay_destroy(r);
    /* CSV traces have no hash ids: nothing cacheable, no division by 0. */
    r = prep("0,100,1\n1,2000,1\n", SIM_TRACE_CSV, 512, SIM_PREFIX_LRU, 0);
    sim_cache_replay_result c = run(r, 1, -1);
    CHECK(c.cacheable_blocks == 0 && c.prompt_tokens == 2100 && c.block_hit == 0 && c.token_hit == 0);
    sim_cache_replay_destroy(r);
}

/* The real trace's head: 200 requests, 2.78M prompt tokens. The full trace
 * (145M tokens) needs ~50M to reach its maximum; reuse in the head spans
 * most of its window, so the scaled sizes are 200K (small) and 2.5M. */
static void test_mooncake_head(void)
{
    const char *src = test_src_dir();
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/workload/mooncake_conversation_head.jsonl", src);
    sim_err err = {{0}};
    sim_trace *t = NULL;
    int rc = sim_trace_load(path, SIM_TRACE_MOONCAKE, &t, &err);
    REQUIRE_MSG(rc == 0, "%s", err.msg);
    sim_cache_replay_cfg cfg;
    sim_cache_replay_cfg_defaults(&cfg);
    sim_cache_replay *r = NULL;
    CHECK(sim_cache_replay_prepare(t, &cfg, &r, &err) == 0);
    sim_trace_destroy(t);
    if (!r) return;
    sim_cache_replay_result max = run(r, 1, -1);
    CHECK(max.requests == 200 && max.prompt_tokens == 2782179 && max.cacheable_blocks == 5337);
    CHECK_NEAR(max.block_hit, 0.0603, 0.0005);
    /* Non-decreasing in capacity. */
    const int64_t caps[] = {25000, 50000, 100000, 200000, 400000, 800000, 1600000, 2000000, 2500000};
    double prev = 0;
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        sim_cache_replay_result x = run(r, 1, caps[i] / 512);
        CHECK_MSG(x.block_hit >= prev - 1e-12, "%lld tokens: %.4f < %.4f", (long long)caps[i],
                  x.block_hit, prev);
        CHECK(x.block_hit <= max.block_hit + 1e-12);
        prev = x.block_hit;
    }
    sim_cache_replay_result small = run(r, 1, 200000 / 512);
    sim_cache_replay_result large = run(r, 1, 2500000 / 512);
    CHECK_MSG(small.block_hit < 0.7 * max.block_hit, "small %.4f max %.4f", small.block_hit,
              max.block_hit);
    CHECK_MSG(large.block_hit > 0.99 * max.block_hit, "large %.4f max %.4f", large.block_hit,
              max.block_hit);
    /* One pool of 2M vs four instances of 500K each, round robin. */
    sim_cache_replay_result global = run(r, 1, 2000000 / 512);
    sim_cache_replay_result local = run(r, 4, 500000 / 512);
    sim_cache_replay_result local_inf = run(r, 4, -1);
    CHECK_MSG(global.block_hit > 1.2 * local.block_hit, "global %.4f local %.4f",
              global.block_hit, local.block_hit);
    CHECK(local_inf.block_hit < 0.8 * max.block_hit);
    sim_cache_replay_destroy(r);
}

/* Runs the verb with stdout and stderr captured into out. */
static int cli(char *out, size_t cap, int argc, char **argv)
{
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    FILE *tmp = tmpfile();
    if (!tmp || so < 0 || se < 0) return -100;
    dup2(fileno(tmp), 1);
    dup2(fileno(tmp), 2);
    int rc = sim_cli_cache_replay(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    rewind(tmp);
    size_t n = fread(out, 1, cap - 1, tmp);
    out[n] = '\0';
    fclose(tmp);
    return rc;
}

static void test_cli(void)
{
    static char buf[1 << 16];
    char *out = buf; /* a pointer, so CHECK_CONTAINS's NULL test is meaningful */
    char tpath[] = "/tmp/test_cache_replay_XXXXXX";
    int fd = mkstemp(tpath);
    REQUIRE(fd >= 0);
    CHECK(write(fd, trace_lfu, strlen(trace_lfu)) == (ssize_t)strlen(trace_lfu));
    close(fd);

    char *help[] = {"cache-replay", "--help"};
    CHECK(cli(out, sizeof buf, 2, help) == 0);
    CHECK_CONTAINS(out, "usage: servesim cache-replay TRACE");
    CHECK_CONTAINS(out, "--capacity-tokens");
    char *none[] = {"cache-replay"};
    CHECK(cli(out, sizeof buf, 1, none) == 2);
    CHECK_CONTAINS(out, "no trace given");
    char *badpol[] = {"cache-replay", tpath, "--policy", "fifo"};
    CHECK(cli(out, sizeof buf, 4, badpol) == 2);
    CHECK_CONTAINS(out, "bad value 'fifo' for --policy");
    char *badcap[] = {"cache-replay", tpath, "--capacity-tokens", "12Q"};
    CHECK(cli(out, sizeof buf, 4, badcap) == 2);
    char *badopt[] = {"cache-replay", tpath, "--frobnicate", "1"};
    CHECK(cli(out, sizeof buf, 4, badopt) == 2);
    CHECK_CONTAINS(out, "unknown option '--frobnicate'");
    char *missing[] = {"cache-replay", "/nonexistent/trace.jsonl"};
    CHECK(cli(out, sizeof buf, 2, missing) == 2);
    CHECK_CONTAINS(out, "/nonexistent/trace.jsonl");

    /* Table: sizes as several bare values and a comma list. */
    char *table[] = {"cache-replay", tpath, "--capacity-tokens", "2048", "1K,inf", "--instances", "2"};
    CHECK(cli(out, sizeof buf, 7, table) == 0);
    CHECK_CONTAINS(out, "7 requests, 8632 prompt tokens, 11 cacheable blocks of 512 tokens");
    CHECK_CONTAINS(out, "global 1 x 2.048K");
    CHECK_CONTAINS(out, "local 2 x 1.024K");
    CHECK_CONTAINS(out, "local 2 x inf");
    CHECK_CONTAINS(out, "theoretical maximum (infinite global cache): token hit 0.3559, block hit 0.5455");

    /* JSON: 4-block LFU cache → 5 of 11 blocks. */
    char *js[] = {"cache-replay", tpath, "--capacity-tokens", "2048", "--policy", "lfu", "--json"};
    CHECK(cli(out, sizeof buf, 7, js) == 0);
    json_error_t jerr;
    json_t *doc = json_loads(out, 0, &jerr);
    CHECK_MSG(doc != NULL, "%s: %s", jerr.text, out);
    if (doc) {
        CHECK(json_integer_value(json_object_get(doc, "cacheable_blocks")) == 11);
        CHECK(strcmp(json_string_value(json_object_get(doc, "policy")), "lfu") == 0);
        CHECK_NEAR(json_real_value(json_object_get(doc, "max_block_hit_rate")), 6.0 / 11, 1e-6);
        json_t *rows = json_object_get(doc, "rows");
        CHECK(json_array_size(rows) == 1);
        json_t *row0 = json_array_get(rows, 0);
        CHECK(json_integer_value(json_object_get(row0, "capacity_tokens")) == 2048);
        CHECK(json_integer_value(json_object_get(row0, "capacity_blocks_per_cache")) == 4);
        CHECK(json_integer_value(json_object_get(row0, "matched_blocks")) == 5);
        CHECK_NEAR(json_real_value(json_object_get(row0, "block_hit_rate")), 5.0 / 11, 1e-6);
        json_decref(doc);
    }
    /* Block size changes the keys: at 1024 tokens [1,2] is one block. */
    char *big[] = {"cache-replay", tpath, "--block-tokens", "1024", "--capacity-tokens", "inf", "--json"};
    CHECK(cli(out, sizeof buf, 7, big) == 0);
    doc = json_loads(out, 0, &jerr);
    CHECK(doc != NULL);
    if (doc) {
        /* r0-r2, r4, r5 one block each; [7] is only 512 tokens */
        CHECK(json_integer_value(json_object_get(doc, "cacheable_blocks")) == 5);
        json_decref(doc);
    }
    unlink(tpath);
}


/* Turn 1: 1024 tokens [1, 2], 1100-token answer; turn 2 names that
 * context [1, 2, 3, 4, 5] plus 100 tokens of its own (2224). Turn 1 ends
 * with 2123 tokens of KV: 4 full 512-token blocks (8 of 256), which turn 2
 * finds, 2048 tokens. From a 1000-token prompt whose block 1 is partial
 * (id 2, [1, 7, ...] in turn 2) the answer continues turn 2's chain at
 * C = 512 (4 blocks found) but not at C = 256, where the prompt's block 2
 * lies under id 2: turn 2 finds 2 blocks, 512 tokens (as the simulator,
 * tests/system/test_cache_output.c). */
static void answer_case(const char *first, int id1, int32_t C, int64_t prompt_tokens, int64_t cacheable,
                        int64_t matched)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"timestamp\": 0, \"session_id\": 1, \"id\": 1, %s, \"hash_ids\": [1, 2]}\n"
             "{\"session_id\": 1, \"id\": 2, \"delay\": 100, \"input_length\": 2224, \"output_length\": 4,"
             " \"hash_ids\": [1, %d, 3, 4, 5]}\n",
             first, id1);
    sim_cache_replay *r = prep(text, SIM_TRACE_MOONCAKE, C, SIM_PREFIX_LRU, 0);
    if (!r) return;
    sim_cache_replay_result inf = run(r, 1, -1);
    CHECK(inf.prompt_tokens == prompt_tokens && inf.cacheable_blocks == cacheable);
    CHECK_MSG(inf.matched_blocks == matched && inf.matched_tokens == matched * C,
              "C %d: %lld blocks matched, not %lld", (int)C, (long long)inf.matched_blocks, (long long)matched);
    CHECK_NEAR(inf.token_hit, (double)(matched * C) / prompt_tokens, 1e-12);
    sim_cache_replay_destroy(r);
}

static void test_answer_hit(void)
{
    const char *whole = "\"input_length\": 1024, \"output_length\": 1100";
    const char *partial = "\"input_length\": 1000, \"output_length\": 1124";
    answer_case(whole, 2, 512, 3248, 6, 4);
    answer_case(whole, 2, 256, 3248, 12, 8);
    answer_case(partial, 7, 512, 3224, 5, 4);
    answer_case(partial, 7, 256, 3224, 11, 2);
}

/* Three requests outside sessions, the same 1100-token prompt (2 full
 * blocks) and 600-token answers (1699 tokens of KV: 3 blocks): each later
 * one finds the 2 prompt blocks; each answer's block has a key of its own.
 * In 3 blocks the previous answer's block, the LRU leaf, makes room for
 * the next one's: 2 evictions, the same hits. */
static void test_answer_unrelated(void)
{
    const char *t = "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 600, \"hash_ids\": [1, 2, 3]}\n"
                    "{\"timestamp\": 1, \"input_length\": 1100, \"output_length\": 600, \"hash_ids\": [1, 2, 3]}\n"
                    "{\"timestamp\": 2, \"input_length\": 1100, \"output_length\": 600, \"hash_ids\": [1, 2, 3]}\n";
    sim_cache_replay *r = prep(t, SIM_TRACE_MOONCAKE, 512, SIM_PREFIX_LRU, 0);
    if (!r) return;
    sim_cache_replay_result inf = run(r, 1, -1), c3 = run(r, 1, 3);
    CHECK(inf.cacheable_blocks == 6 && inf.matched_blocks == 4 && inf.evicted_blocks == 0);
    CHECK_MSG(c3.matched_blocks == 4 && c3.evicted_blocks == 2 && c3.short_inserts == 0,
              "3 blocks: %lld matched, %lld evicted", (long long)c3.matched_blocks, (long long)c3.evicted_blocks);
    sim_cache_replay_destroy(r);
}

static const test_case cases[] = {
    {"exact_small", test_exact_small},
    {"lru_lfu", test_lru_lfu},
    {"local_global", test_local_global},
    {"mooncake_head", test_mooncake_head},
    {"cli", test_cli},
    {"answer_hit", test_answer_hit},
    {"answer_unrelated", test_answer_unrelated},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_cache_replay", cases);
}
