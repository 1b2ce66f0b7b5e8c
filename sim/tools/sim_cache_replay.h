/* sim_cache_replay — cache-only replay of a trace's prefix blocks.
 *
 * No timing and no engine: requests are taken in timestamp order (trace
 * order; traces never go backwards) and each one matches its key chain
 * (sim_prefix_keys.h) against the prefix cache of the instance it is routed
 * to, acquires the matched blocks, inserts the rest (bounded caches evict
 * unreferenced leaves in LRU or LFU order to make room), then the full
 * blocks its answer completes (prompt + output − 1 tokens of KV, as the
 * simulator's instances keep them: under the keys the line continuing its
 * session's context looks up, sim_prefix_keys_answer, else keys of its
 * own) and releases them — as if every request finished before the next
 * arrived. The result is the
 * prefix hit rate a cache of a given size could reach on that trace:
 * matched prompt tokens / prompt tokens, and matched blocks / cacheable
 * blocks (full cache blocks covered by hash ids). An infinite cache gives
 * the theoretical maximum. With several caches, requests are split over
 * them round robin or by a hash of their leading hash ids, which shows how
 * much locality a per-instance cache loses against one global pool.
 *
 * A prepared replay owns the key chains of every request (computed once)
 * and borrows nothing: the trace may be destroyed after prepare. Capacities
 * are in blocks of cfg.block_tokens tokens. The CLI verb
 * `servesim cache-replay` (sim_cli_cache_replay) prints tables of these. */
#ifndef SIM_CACHE_REPLAY_H
#define SIM_CACHE_REPLAY_H

#include "sim_err.h"
#include "sim_prefix.h"
#include "sim_trace.h"

#include <stdint.h>

typedef enum {
    SIM_CACHE_ROUTE_ROUND_ROBIN = 0, /* request i → cache i mod K */
    SIM_CACHE_ROUTE_HASH = 1         /* hash of the first route_depth hash ids mod K */
} sim_cache_route;

typedef struct {
    int32_t block_tokens;  /* cache block C, tokens (default 512) */
    int32_t hash_tokens;   /* trace hash block H, tokens (default 512, Mooncake) */
    sim_prefix_policy policy;
    sim_cache_route route;
    int32_t route_depth;   /* hash route: leading hash ids that pick the cache (default 2) */
} sim_cache_replay_cfg;

void sim_cache_replay_cfg_defaults(sim_cache_replay_cfg *cfg);

typedef struct {
    int64_t requests;
    int64_t prompt_tokens;      /* sum of input lengths, all requests */
    int64_t cacheable_blocks;   /* keys over all requests */
    int64_t matched_blocks;
    int64_t matched_tokens;     /* matched_blocks × block_tokens */
    int64_t evicted_blocks;
    int64_t short_inserts;      /* requests whose chain did not fit (all referenced) */
    double token_hit;           /* matched_tokens / prompt_tokens (0 if none) */
    double block_hit;           /* matched_blocks / cacheable_blocks (0 if none) */
} sim_cache_replay_result;

typedef struct sim_cache_replay sim_cache_replay;

int sim_cache_replay_prepare(const sim_trace *t, const sim_cache_replay_cfg *cfg,
                             sim_cache_replay **out, sim_err *err);
void sim_cache_replay_destroy(sim_cache_replay *r);

/* Replays the whole trace over n_caches caches of blocks_per_cache blocks
 * each (-1 = infinite, 0 = caches that hold nothing). 0, SIM_EINVAL or
 * SIM_ENOMEM. */
int sim_cache_replay_run(const sim_cache_replay *r, int32_t n_caches, int64_t blocks_per_cache,
                         sim_cache_replay_result *out, sim_err *err);

/* The `servesim cache-replay` verb: argv[0] = "cache-replay". Prints the
 * table (or JSON with --json) to stdout, errors to stderr; returns the exit
 * code (0 ok, 1 replay failed, 2 bad usage or input). */
int sim_cli_cache_replay(int argc, char **argv);

#endif
