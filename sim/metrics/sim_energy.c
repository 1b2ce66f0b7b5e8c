/* sim_energy — see sim_energy.h. */
#include "sim_energy.h"



double sim_energy_busy_s(double dur_s, double compute_busy_s, double mem_busy_s, double mem_share)
{
    if (!(dur_s > 0)) return 0;
    double b = (compute_busy_s > 0 ? compute_busy_s : 0) + (mem_share > 0 ? mem_share : 0) * (mem_busy_s > 0 ? mem_busy_s : 0);
    return b < dur_s ? b : dur_s;
}

void sim_energy_add_pool(sim_energy_summary *e, const sim_power *p, int32_t gpus, double span_s,
                         double busy_gpu_s, int host_override)
{
    if (gpus <= 0 || !(span_s > 0)) return;
    e->enabled = 1;
    e->gpu_idle_j += gpus * p->idle_w * span_s;
    e->gpu_dynamic_j += (p->max_w - p->idle_w) * (busy_gpu_s > 0 ? busy_gpu_s : 0);
    if (!host_override) e->host_j += gpus * p->host_w_per_gpu * span_s;
}

void sim_energy_finish(sim_energy_summary *e, double span_s, int32_t nodes, double host_w_per_node,
                       int64_t requests, double input_tokens, double output_tokens)
{
    e->enabled = 1;
    e->span_s = span_s > 0 ? span_s : 0;
    if (host_w_per_node > 0 && nodes > 0 && span_s > 0) e->host_j += nodes * host_w_per_node * span_s;
    e->joules = e->gpu_idle_j + e->gpu_dynamic_j + e->host_j;
    e->mean_power_w = span_s > 0 ? e->joules / span_s : 0;
    e->joules_per_request = requests > 0 ? e->joules / (double)requests : 0;
    e->joules_per_output_token = output_tokens > 0 ? e->joules / output_tokens : 0;
    double all = input_tokens + output_tokens;
    e->joules_per_million_tokens = all > 0 ? e->joules / all * 1e6 : 0;
    e->kwh_per_million_output_tokens = output_tokens > 0 ? e->joules / output_tokens * 1e6 / 3.6e6 : 0;
}
