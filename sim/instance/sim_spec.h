/* sim_spec — speculative decoding on an instance (scheduler.speculative).
 *
 * Each decode step of a speculating instance drafts k tokens per request
 * (k passes of the draft: the model's MTP module, or a separate draft
 * model), then verifies them in one target pass of 1 + k tokens per
 * request (model_batch.decode_width) and keeps the longest accepted prefix
 * of the drafts plus the target's own next token: 1 + A tokens, where draft
 * position i (1-based) is accepted with probability a_i given that the
 * ones before it were. E[1 + A] = Σ_{i=0..k} Π_{j≤i} a_j (Σ a^i for one
 * rate a). The draws come from the instance's own GSL stream seeded from
 * the scenario seed ("speculative", instance id).
 *
 * Ownership: sim_spec_draft_cost returns a cost model the caller owns;
 * sim_spec_create keeps a pointer to it (it must outlive the sim_spec) and
 * owns its RNG. Errors are returned (SIM_EINVAL, SIM_ENOMEM) with err set. */
#ifndef SIM_SPEC_H
#define SIM_SPEC_H

#include "model_cost.h"
#include "sim_err.h"
#include "sim_scenario.h"

#include <stdint.h>

typedef struct sim_spec sim_spec;

/* The draft's cost model on GPU g with layout l: mtp → the target model's
 * MTP module (cfg->mtp_layers transformer layers like the target's last
 * ones, with its embedding and LM head); draft → cfg->draft_model. */
int sim_spec_draft_cost(const sim_spec_cfg *cfg, const model_spec *target, const model_gpu *g,
                        const model_layout *l, model_cost **out, sim_err *err);

/* Weight bytes per GPU the draft adds to the target's (the MTP layers
 * alone: embedding and LM head are the target's own). */
double sim_spec_draft_weight_bytes(const sim_spec_cfg *cfg, const model_spec *target, const model_gpu *g,
                                   const model_layout *l, const model_cost *draft);

/* KV tokens the instance holds once the draft's KV shares the memory with
 * the target's (each token then costs both): kv_tokens · kv_t / (kv_t + kv_d). */
int64_t sim_spec_kv_tokens(int64_t kv_tokens, const model_cost *target, const model_cost *draft);

int sim_spec_create(const sim_spec_cfg *cfg, const model_cost *draft, uint64_t seed, int32_t instance,
                    sim_spec **out, sim_err *err);
void sim_spec_destroy(sim_spec *s);

int32_t sim_spec_k(const sim_spec *s);

/* A new request's acceptance scale: 1, or with acceptance_concentration
 * κ > 0 a Beta(κ·a1, κ·(1 − a1)) draw over a1 (its rates are a_i times the
 * scale, capped at 1). */
float sim_spec_request_scale(sim_spec *s);

/* Drafts accepted in one step by a request of that scale (0..k). */
int32_t sim_spec_accepted(sim_spec *s, float scale);

/* Seconds the draft takes in a step of batch b: one pass over the whole
 * batch (prefill chunks put their tokens into the draft's KV and draft the
 * first token after them; each decoding request drafts its first token),
 * then k − 1 more passes over the decoding requests. Device time: the
 * framework overhead is the target step's. */
double sim_spec_draft_s(const sim_spec *s, const model_batch *b);

/* Closed form: expected tokens per step for a request of scale 1. */
double sim_spec_expected_tokens(const sim_spec_cfg *cfg);

#endif
