/* sim_router_cache — the cache-aware router (routing.policy cache_aware) and
 * its presets, behind the same sim_router vtable as the built-in policies.
 * Every rule reads only the per-request sim_router_view the cluster fills
 * (matched_tokens, saved_ms and queue_ms in ms, block counts in KV blocks)
 * plus the request's input_tokens; the router owns nothing but itself and,
 * for Dynamo's softmax sampling, its GSL stream "router". Presets:
 *   none   — score_i = saved_ms_i − λ·queue_ms_i, highest wins (λ = 0: pure
 *            stickiness to the longest match; large λ: least queueing delay).
 *   sglang — SGLang router cache_aware: if the load (running + waiting) is
 *            imbalanced, (max − min) > balance_abs_threshold AND
 *            max > balance_rel_threshold·min, the least loaded instance; else
 *            the best match if matched/input > cache_threshold, else the
 *            instance with the smallest tree (fewest cached_blocks).
 *   dynamo — Dynamo KV router: logit = overlap_score_weight·prefill_blocks +
 *            decode_blocks; temperature 0 picks the minimum, > 0 samples
 *            softmax(−logit) after Dynamo's range normalisation.
 *   llmd   — llm-d weighted scorers: w_prefix·prefix + w_load·queue + w_kv·kv,
 *            highest wins.
 * The rule functions below are pure and exported so each can be tested on
 * hand-made views; ties go to the lowest index unless a rule says otherwise. */
#ifndef SIM_ROUTER_CACHE_H
#define SIM_ROUTER_CACHE_H

#include "sim_router.h"

#include <stdint.h>

/* Builds the cache-aware router for cfg->preset. block_tokens is the
 * prefix-cache block in tokens (Dynamo's block size; must be > 0 for the
 * dynamo preset). Rejects out-of-range settings with a message naming the
 * routing key. */
int sim_router_cache_create(const sim_routing_cfg *cfg, int32_t block_tokens, uint64_t seed,
                            sim_router **out, sim_err *err);

/* Checks the settings cfg->preset uses; 0 or SIM_EINVAL with a message. */
int sim_router_cache_validate(const sim_routing_cfg *cfg, int32_t block_tokens, sim_err *err);

/* Preset none: highest saved_ms − lambda·queue_ms; ties → lower queue_ms,
 * then the lowest index. */
int32_t sim_router_cache_pick_score(const sim_router_view *v, int32_t n, double lambda);

/* SGLang: which branch decided the pick. */
typedef enum {
    SIM_SGLANG_IMBALANCED = 0, /* load imbalanced: shortest queue */
    SIM_SGLANG_CACHE_HIT = 1,  /* match rate above cache_threshold: best match */
    SIM_SGLANG_SMALLEST = 2    /* balanced, low match: smallest tree */
} sim_sglang_branch;

/* 1 when SGLang would call the loads (running + waiting) imbalanced. */
int sim_router_cache_sglang_imbalanced(const sim_router_view *v, int32_t n, double abs_threshold,
                                       double rel_threshold);

/* SGLang cache_aware pick; *why (may be NULL) gets the branch taken. */
int32_t sim_router_cache_pick_sglang(const sim_routing_cfg *cfg, int32_t input_tokens,
                                     const sim_router_view *v, int32_t n, sim_sglang_branch *why);

/* Dynamo's cost of sending the request to one instance:
 * overlap_weight·(input − matched)/block_tokens + active_blocks +
 * ceil(input/block_tokens). Prefill blocks are fractional as in Dynamo's
 * DefaultWorkerSelector; the request's own decode blocks are the same on
 * every instance, so they shift all logits alike and change no decision. */
double sim_router_cache_dynamo_logit(const sim_router_view *v, int32_t input_tokens, int32_t block_tokens,
                                     double overlap_weight);

/* Selection probabilities over n instances (probs[n], caller-owned).
 * temperature 0: 1 on the argmin (ties → fewest cached_blocks, then lowest
 * index — Dynamo breaks ties by tree size). temperature > 0: Dynamo's
 * softmax_sample, p_i ∝ exp(−(l_i − l_min) / ((l_max − l_min)·T)), uniform
 * when all logits are equal; dividing by the logit range makes T
 * independent of the logits' scale and offset. */
void sim_router_cache_dynamo_probs(const sim_routing_cfg *cfg, int32_t input_tokens, int32_t block_tokens,
                                   const sim_router_view *v, int32_t n, double *probs);

/* Dynamo pick. u is a uniform draw in [0, 1), used only when temperature >
 * 0: the first index whose cumulative probability exceeds u. */
int32_t sim_router_cache_pick_dynamo(const sim_routing_cfg *cfg, int32_t input_tokens,
                                     int32_t block_tokens, const sim_router_view *v, int32_t n, double u);

/* llm-d total score of instance i among v[0..n): w_prefix·matched/input +
 * w_load·(max_w − waiting_i)/(max_w − min_w) (1 when all queues are equal,
 * llm-d's min-max queue scorer) + w_kv·(1 − kv_blocks_used/kv_blocks_total)
 * (0 free when kv_blocks_total is 0). */
double sim_router_cache_llmd_score(const sim_routing_cfg *cfg, int32_t input_tokens,
                                   const sim_router_view *v, int32_t n, int32_t i);

/* llm-d pick: highest total score, ties → lowest index. */
int32_t sim_router_cache_pick_llmd(const sim_routing_cfg *cfg, int32_t input_tokens,
                                   const sim_router_view *v, int32_t n);

#endif
