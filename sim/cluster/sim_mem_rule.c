/* sim_mem_rule — see sim_mem_rule.h. */
#include "sim_mem_rule.h"

#include "sim_spec.h"

#include <string.h>

#define MIB (1024.0 * 1024.0)

int sim_mem_rule_apply(const sim_sched_cfg *s, const model_cost *c, double state_bytes, double *util,
                       double *reserve_bytes, sim_err *err)
{
    const double hbm = model_cost_gpu(c)->hbm_bytes, w = model_cost_weight_bytes_per_gpu(c);
    switch (s->mem_fraction_of) {
    case SIM_MEM_OF_TOTAL: return 0;
    case SIM_MEM_OF_FREE: {
        /* KV = util·(HBM − weights − reserve): as a fraction of all of it. */
        double left = hbm - w - *reserve_bytes;
        if (left > 0 && hbm > 0) *util = (*util * left + w + *reserve_bytes) / hbm;
        return 0;
    }
    case SIM_MEM_OF_SGLANG: {
        const model_layout *l = model_cost_layout(c);
        double chunk = s->chunk_tokens > 2048 ? s->chunk_tokens : 2048;
        double graph_bs = s->max_seqs < 512 ? s->max_seqs : 512;
        double m = hbm / MIB;
        /* SGLang's tp_size spans the attention-DP ranks too. */
        double r = 512.0 + 1.5 * chunk + 2.0 * graph_bs + 1024.0 * (double)l->tp * l->dp * l->pp / 8.0;
        if (m > r) *util = (m - r) / m;
        /* Its reservation stands in for reserve_gb; the state stays. */
        *reserve_bytes = state_bytes;
        return 0;
    }
    }
    return sim_err_set(err, SIM_EINVAL, "scheduler.mem_fraction_of: unknown rule %d (expected total, free or sglang)",
                       (int)s->mem_fraction_of);
}

int sim_mem_rule_kv_tokens(const sim_sched_cfg *s, const model_cost *c, double held_bytes, int64_t *tokens,
                           sim_err *err)
{
    /* Linear-attention state is held per running sequence, beside the KV;
     * so are the weights held beside the model's (a vision tower): every
     * rule keeps both. */
    double state = (double)s->max_seqs * model_cost_state_bytes_per_seq(c) + held_bytes;
    double util = s->gpu_mem_util, reserve = s->reserve_gb * 1e9 + state;
    int rc = sim_mem_rule_apply(s, c, state, &util, &reserve, err);
    return rc < 0 ? rc : model_cost_kv_capacity_tokens(c, util, reserve, tokens, err);
}

int sim_mem_rule_pool_kv_tokens(const sim_sched_cfg *s, const model_spec *target, const model_gpu *g,
                                const model_layout *l, const model_cost *c, double held_bytes, model_cost **draft,
                                int64_t *tokens, sim_err *err)
{
    *draft = NULL;
    sim_sched_cfg mem = *s;
    int rc;
    if (s->spec.draft_tokens > 0) {
        if ((rc = sim_spec_draft_cost(&s->spec, target, g, l, draft, err)) < 0) return rc;
        mem.reserve_gb += sim_spec_draft_weight_bytes(&s->spec, target, g, l, *draft) / 1e9;
    }
    if ((rc = sim_mem_rule_kv_tokens(&mem, c, held_bytes, tokens, err)) < 0) {
        model_cost_destroy(*draft);
        *draft = NULL;
        return rc;
    }
    if (*draft) *tokens = sim_spec_kv_tokens(*tokens, c, *draft);
    return 0;
}
