/* sim_sched_preset — see sim_sched_preset.h. */
#include "sim_sched_preset.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int32_t max_batched_tokens, chunk_tokens;
    double overhead_us, per_seq_us, frontend_us, eager_launch_us;
    const char *policy, *admission;
    double pd_handover_us, pd_handover_gbs; /* decode side of a PD deployment (scripts/fit-engine.py --pd) */
    const char *mem_fraction_of;            /* sim_mem_rule.h */
} preset;

/* KV memory: vLLM's gpu_memory_utilization 0.9 of HBM (weights, activations
 * and KV inside it); SGLang's mem_fraction_static (weights and KV; its
 * default is 0.85-0.9 by GPU size and the recipes set 0.82-0.95: 0.9 kept);
 * TensorRT-LLM's free_gpu_memory_fraction 0.9 of what the weights and the
 * activation profile leave free. */
static const preset presets[] = {
    {"vllm", 8192, 2048, 1500, 50, 45000, 0, "decode_first", "optimistic", 0, 0, "total"},
    {"sglang", 8192, 8192, 1500, 0, 0, 200, "prefill_first", "reserve", 0, 0, "sglang"},
    {"trtllm", 8192, 8192, 0, 0, 0, 100, "decode_first", "reserve", 0, 0, "free"},
};

const char *const sim_sched_preset_names[SIM_SCHED_PRESETS] = {"none", "vllm", "sglang", "trtllm"};

int sim_sched_preset_apply(const char *name, sim_sched_cfg *cfg)
{
    if (!strcmp(name, "none")) {
        snprintf(cfg->preset, sizeof cfg->preset, "none");
        return 0;
    }
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        const preset *p = &presets[i];
        if (strcmp(name, p->name)) continue;
        cfg->max_batched_tokens = p->max_batched_tokens;
        cfg->chunk_tokens = p->chunk_tokens;
        cfg->overhead_us = p->overhead_us;
        cfg->overhead_per_seq_us = p->per_seq_us;
        cfg->frontend_us = p->frontend_us;
        cfg->eager_launch_us = p->eager_launch_us;
        cfg->pd_handover_us = p->pd_handover_us;
        cfg->pd_handover_gbs = p->pd_handover_gbs;
        /* The engines' defaults: SGLang polls every step (--scheduler-recv-interval 1),
         * TensorRT-LLM's attention-DP balancing is off; serving recipes set them
         * (the fidelity replay sets the InferenceX recipes', sim_fidelity.c). */
        cfg->recv_interval = 1;
        /* vLLM V1 and SGLang cache KV blocks by default (prefix caching, the
         * radix cache): a preempted request's blocks stay findable. */
        cfg->preempt_keeps_kv = strcmp(p->name, "trtllm") != 0;
        cfg->adp_timeout_iters = 0;
        cfg->adp_wait_iters = 0;
        snprintf(cfg->policy, sizeof cfg->policy, "%s", p->policy);
        snprintf(cfg->admission, sizeof cfg->admission, "%s", p->admission);
        snprintf(cfg->mem_fraction_of, sizeof cfg->mem_fraction_of, "%s", p->mem_fraction_of);
        snprintf(cfg->preset, sizeof cfg->preset, "%s", p->name);
        return 0;
    }
    return -1;
}
