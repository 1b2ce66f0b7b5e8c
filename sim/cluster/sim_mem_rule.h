/* sim_mem_rule — how much of a GPU an engine gives to weights and KV cache.
 *
 * Engines state their memory budget differently, and the difference decides
 * the KV capacity of heavy models (DeepSeek FP8 at TP4 on B200 leaves ~20 GB
 * per GPU beside 169 GB of weights). scheduler.mem_fraction_of says which:
 *   total   gpu_mem_util of all GPU memory holds weights, reserve_gb and KV
 *           (vLLM's gpu_memory_utilization, default 0.90);
 *   free    gpu_mem_util of what is left after the weights and reserve_gb
 *           holds KV (TensorRT-LLM's KvCacheConfig.free_gpu_memory_fraction,
 *           default 0.90);
 *   sglang  SGLang's mem_fraction_static when not given: (M − R) / M of the
 *           GPU's M MiB holds weights and KV, R = 512 + 1.5·max(chunked
 *           prefill, 2048) + 2·cuda_graph_max_bs + 1024·tp·pp/8 MiB
 *           (server_args.py's reservation for metadata, prefill
 *           activations, CUDA graphs and parallel buffers); the chunk is
 *           scheduler.chunk_tokens, the CUDA-graph batch max_seqs up to 512.
 * sim_mem_rule_apply turns any of them into the fraction of all memory and
 * the reserve that model_cost_kv_capacity_tokens() takes. Pure function;
 * fails (SIM_EINVAL) only for an unknown rule name. With speculative
 * decoding, sim_mem_rule_pool_kv_tokens also builds the draft's cost model
 * (owned by the caller) and fails with its error. */
#ifndef SIM_MEM_RULE_H
#define SIM_MEM_RULE_H

#include "model_cost.h"
#include "sim_scenario.h"

/* *util and *reserve_bytes (in: scheduler.gpu_mem_util and the reserve
 * beside the KV, recurrent state included; out: what to pass on) for the
 * pool's rule on cost model c (its GPU, layout and weights per GPU).
 * state_bytes is the per-GPU recurrent state part of the reserve, which
 * every rule keeps. */
int sim_mem_rule_apply(const sim_sched_cfg *s, const model_cost *c, double state_bytes, double *util,
                       double *reserve_bytes, sim_err *err);

/* A pool instance's KV capacity in tokens (*tokens) under its scheduler
 * config s on cost model c: the reserve is reserve_gb plus the recurrent
 * state of max_seqs running sequences plus held_bytes per GPU (weights
 * beside the model's: the vision tower of a pool that encodes,
 * sim_images_tower_bytes), through the pool's rule (sim_mem_rule_apply;
 * the state and held_bytes kept under every rule) into
 * model_cost_kv_capacity_tokens(). 0, or that function's or the rule's
 * error. */
int sim_mem_rule_kv_tokens(const sim_sched_cfg *s, const model_cost *c, double held_bytes, int64_t *tokens,
                           sim_err *err);

/* The same with the pool's speculative decoding (s->spec.draft_tokens > 0;
 * sim_spec.h): the draft's cost model on the target's GPU g and layout l
 * goes to *draft (the caller owns it; NULL when the pool does not
 * speculate), its weights come out of the memory the KV would take, and
 * each token then holds the draft's KV beside the target's; held_bytes as
 * above. The cluster and
 * the search's bounds size a pool with this one function. 0, or the draft's
 * or the rule's error (*draft NULL then). */
int sim_mem_rule_pool_kv_tokens(const sim_sched_cfg *s, const model_spec *target, const model_gpu *g,
                                const model_layout *l, const model_cost *c, double held_bytes, model_cost **draft,
                                int64_t *tokens, sim_err *err);

#endif
