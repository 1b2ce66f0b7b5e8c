/* sim_sched_preset — what a serving engine's defaults amount to in this
 * simulator's scheduler (deployment.pools.*.scheduler.preset). A preset
 * fills a pool's scheduler settings before the scenario's own keys are read,
 * so any key written beside it wins whatever the order. The values are the
 * ones `servesim fidelity` replays the measured deployments with (fitted on
 * ../shared/validation/e2e-dev.csv, docs/cost-model.md):
 *   vllm    decode_first (chunked prefill), 8,192-token budget, 2,048-token
 *           chunks; 1.5 ms per iteration + 50 µs per scheduled request (its
 *           Python scheduler and I/O processing scale with the batch);
 *           45 ms of frontend per request (API server, process hops,
 *           streaming); mixed batches run under piecewise CUDA graphs;
 *           optimistic admission (it preempts by recompute when KV runs out);
 *           synchronous host work (async_scheduling off, vLLM before 0.14;
 *           the replay turns it on for rows of 0.14 and later).
 *   sglang  prefill_first, 8,192-token budget and chunks; 1.5 ms per
 *           iteration, no per-request cost (the overlap scheduler hides it);
 *           prefill iterations run without CUDA graphs, at least 200 µs per
 *           op launch, the host overlapping the GPU (eager_serial 0; both
 *           scripts/fit-engine.py --floor); reserve admission (it admits
 *           against KV for the expected output).
 *   trtllm  decode_first (in-flight batching), max_num_tokens 8,192, no
 *           chunking below it; no per-iteration cost (its executor hides
 *           it); iterations with a context request run eagerly, 75 µs of
 *           host time per op launch, half of the shorter of host and GPU
 *           time not overlapping the longer (eager_serial 0.5; both
 *           scripts/fit-engine.py --trt-floor); reserve admission (its
 *           default GUARANTEED_NO_EVICT capacity scheduler).
 *   vllm and sglang keep a preempted request's KV cached (preempt_keeps_kv:
 *   V1's prefix cache, the radix cache), trtllm never preempts.
 *   Every preset leaves recv_interval at 1 (SGLang polls for new requests
 *   every step by default) and attention-DP balancing off (adp_timeout_iters
 *   0, TensorRT-LLM's default): serving recipes set them (sim_instance_gate.c).
 *   Memory (mem_fraction_of, sim_mem_rule.h): vLLM's 0.90 of all GPU
 *   memory; SGLang's mem_fraction_static from its reservation formula;
 *   TensorRT-LLM's 0.90 of the memory left after the weights.
 *   Every preset pads decode-only batches to its engine's CUDA-graph
 *   capture sizes (cuda_graph_sizes vllm, sglang or trtllm, the largest
 *   size cuda_graph_max_bs 0: the engine's default; sim_graph_sizes.h).
 *   none    leaves the settings as they are. */
#ifndef SIM_SCHED_PRESET_H
#define SIM_SCHED_PRESET_H

#include "sim_scenario.h"

/* The presets are the sim_sched_preset enum of sim_scenario.h (names in
 * sim_sched_preset_names, "none" first). */

/* Overwrites the preset's fields of *cfg (max_batched_tokens, chunk_tokens,
 * overhead_us, overhead_per_seq_us, frontend_us, eager_launch_us, eager_serial, policy,
 * admission, mem_fraction_of, the PD hand-over pd_handover_us /
 * pd_handover_gbs, 0 for every engine: the shared rows do not identify
 * them, docs/cost-model.md, and the admission holds recv_interval,
 * adp_timeout_iters, adp_wait_iters at the engines' defaults,
 * async_scheduling off, and cuda_graph_sizes the engine's rule with
 * cuda_graph_max_bs 0)
 * and records the preset. Returns 0, or -1 for a value outside the enum. */
int sim_sched_preset_apply(sim_sched_preset name, sim_sched_cfg *cfg);

#endif
