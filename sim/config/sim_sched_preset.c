/* sim_sched_preset — see sim_sched_preset.h. */
#include "sim_sched_preset.h"

#include <stddef.h>


typedef struct {
    sim_sched_preset name;
    int32_t max_batched_tokens, chunk_tokens;
    double overhead_us, per_seq_us, frontend_us, eager_launch_us;
    double eager_serial; /* sim_scenario.h; SGLang's fitted by scripts/fit-engine.py --floor, TensorRT-LLM's by --trt-floor */
    sim_sched_policy policy;
    sim_admission admission;
    double pd_handover_us, pd_handover_gbs; /* decode side of a PD deployment (scripts/fit-engine.py --pd) */
    sim_mem_fraction_of mem_fraction_of;    /* sim_mem_rule.h */
} preset;

/* KV memory: vLLM's gpu_memory_utilization 0.9 of HBM (weights, activations
 * and KV inside it); SGLang's mem_fraction_static (weights and KV; its
 * default is 0.85-0.9 by GPU size and the recipes set 0.82-0.95: 0.9 kept);
 * TensorRT-LLM's free_gpu_memory_fraction 0.9 of what the weights and the
 * activation profile leave free. */
static const preset presets[] = {
    {SIM_SCHED_PRESET_VLLM, 8192, 2048, 1500, 50, 45000, 0, 0, SIM_POLICY_DECODE_FIRST, SIM_ADMISSION_OPTIMISTIC, 0, 0,
     SIM_MEM_OF_TOTAL},
    {SIM_SCHED_PRESET_SGLANG, 8192, 8192, 1500, 0, 0, 200, 0, SIM_POLICY_PREFILL_FIRST, SIM_ADMISSION_RATIO, 0, 0,
     SIM_MEM_OF_SGLANG},
    {SIM_SCHED_PRESET_TRTLLM, 8192, 8192, 0, 0, 0, 75, 0.5, SIM_POLICY_DECODE_FIRST, SIM_ADMISSION_RESERVE, 0, 0,
     SIM_MEM_OF_FREE},
};

int sim_sched_preset_apply(sim_sched_preset name, sim_sched_cfg *cfg)
{
    if (name == SIM_SCHED_PRESET_NONE) {
        cfg->preset = SIM_SCHED_PRESET_NONE;
        return 0;
    }
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        const preset *p = &presets[i];
        if (name != p->name) continue;
        cfg->max_batched_tokens = p->max_batched_tokens;
        cfg->chunk_tokens = p->chunk_tokens;
        cfg->overhead_us = p->overhead_us;
        cfg->overhead_per_seq_us = p->per_seq_us;
        cfg->frontend_us = p->frontend_us;
        cfg->eager_launch_us = p->eager_launch_us;
        cfg->eager_serial = p->eager_serial;
        cfg->pd_handover_us = p->pd_handover_us;
        cfg->pd_handover_gbs = p->pd_handover_gbs;
        /* The engines' defaults: SGLang polls every step (--scheduler-recv-interval 1),
         * TensorRT-LLM's attention-DP balancing is off; serving recipes set them
         * (the fidelity replay sets the InferenceX recipes', sim_fidelity.c). */
        cfg->recv_interval = 1;
        /* vLLM V1 and SGLang cache KV blocks by default (prefix caching, the
         * radix cache): a preempted request's blocks stay findable. */
        cfg->preempt_keeps_kv = p->name != SIM_SCHED_PRESET_TRTLLM;
        /* Every preset prices the host work in line with the GPU's (vLLM
         * before 0.14; the replay turns vLLM >= 0.14's async scheduling on
         * per row, sim_fidelity.c). */
        cfg->async_scheduling = 0;
        cfg->adp_timeout_iters = 0;
        cfg->adp_wait_iters = 0;
        cfg->batch_wait_iters = 0;
        cfg->batch_wait_ratio = 0;
        cfg->policy = p->policy;
        cfg->admission = p->admission;
        cfg->mem_fraction_of = p->mem_fraction_of;
        /* Decode-only iterations replay CUDA graphs of the engine's default
         * capture sizes, padded up (sim_graph_sizes.h); the largest size is
         * the engine's default, resolved per pool (GPU memory, TP). */
        cfg->cuda_graph_sizes = p->name == SIM_SCHED_PRESET_VLLM     ? SIM_GRAPH_VLLM
                                : p->name == SIM_SCHED_PRESET_SGLANG ? SIM_GRAPH_SGLANG
                                                                     : SIM_GRAPH_TRTLLM;
        cfg->cuda_graph_max_bs = 0;
        cfg->preset = p->name;
        return 0;
    }
    return -1;
}
