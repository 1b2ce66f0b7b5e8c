/* sim_search_autoscale — autoscaling as a search dimension (search.autoscale,
 * see sim_search_impl.h).
 *
 * Each candidate is enumerated as a fixed fleet and/or an autoscaled one.
 * An autoscaled candidate's pool scales by the policy of the scenario pool
 * it takes its scheduler from (sim_search_template_pool) when that pool has
 * autoscale.enabled: the candidate's instance count N is the pool's max, and
 * the template's min and starting instances carry over in GPUs, rounded up
 * to whole instances of the candidate's layout and clamped to [1, N] (min)
 * and [min, N] (start): a policy written for 2 one-GPU instances gives a
 * TP2 candidate 1. A pool whose template does not autoscale stays fixed; an
 * autoscaled variant in which no pool can change size (every min equal to
 * its max) is the fixed fleet and is not enumerated twice.
 *
 * With the dimension on every candidate runs the scenario's own arrivals
 * (its schedule, rate, requests and duration; no bisection) and is scored
 * per GPU held: the GPU-hours its pools held from t = 0 to the run's end
 * (autoscaled pools: the autoscaler's integral; fixed ones: their GPUs over
 * the span), so a fleet that sheds GPUs at night ranks by what it used. The
 * pruning bound divides the capacity bound of the fleet at max by the GPUs
 * held at the least (every autoscaled pool at its min), which no run can
 * hold fewer of, so it stays an upper bound on the score.
 *
 * Nothing here allocates; failures are SIM_EINVAL with the key path. */
#include "sim_search_impl.h"

#include <string.h>

static int32_t template_gpus(const sim_pool_cfg *t)
{
    const sim_parallel_cfg *q = &t->parallel;
    return q->tp * q->pp * q->dp * (q->sp > 0 ? q->sp : 1);
}

/* ceil(n_t · g_t / g) clamped to [lo, hi]: n_t instances of g_t GPUs as instances of g GPUs. */
static int32_t in_gpus(int32_t n_t, int32_t g_t, int32_t g, int32_t lo, int32_t hi)
{
    int64_t v = g > 0 ? ((int64_t)n_t * g_t + g - 1) / g : n_t;
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return (int32_t)v;
}

int sim_search_autoscale_init(sim_search *s, sim_err *err)
{
    const sim_search_cfg *cfg = &s->sc.search;
    const sim_deploy_cfg *d = &s->sc.deployment;
    int policy = 0;
    for (int32_t q = 0; q < d->n_pools; q++) policy |= d->pools[q].autoscale.enabled;
    s->n_as = 0;
    if (!cfg->autoscale[0]) {
        if (!policy) return 0;
        s->as_v[0] = 0, s->as_v[1] = 1, s->n_as = 2;
    } else {
        char buf[sizeof cfg->autoscale];
        snprintf(buf, sizeof buf, "%s", cfg->autoscale);
        int seen[2] = {0, 0};
        for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
            int v = strcmp(tok, "off") == 0 ? 0 : strcmp(tok, "on") == 0 ? 1 : -1;
            if (v < 0)
                return sim_err_set(err, SIM_EINVAL, "search.autoscale: unknown value '%s' (expected off, on or off,on)",
                                   tok);
            if (seen[v]) return sim_err_set(err, SIM_EINVAL, "search.autoscale: '%s' listed twice", tok);
            seen[v] = 1;
            s->as_v[s->n_as++] = v;
        }
        if (s->n_as == 0)
            return sim_err_set(err, SIM_EINVAL, "search.autoscale: expected off, on or off,on");
        if (seen[1] && !policy)
            return sim_err_set(err, SIM_EINVAL,
                               "search.autoscale: on needs a policy: set deployment.pools.N.autoscale.enabled true "
                               "(with its min, max, metric and thresholds) on the scenario pool whose role the "
                               "candidates should scale; its policy is the one they scale by");
    }
    if (cfg->rate > 0)
        return sim_err_set(err, SIM_EINVAL,
                           "search.rate: with autoscaling in the search (search.autoscale or an autoscaled pool) "
                           "every candidate runs the scenario's own arrivals (an autoscaler's worth shows over a "
                           "rate that changes: workload.arrival.schedule); leave search.rate 0");
    int on = 0;
    for (int k = 0; k < s->n_as; k++) on |= s->as_v[k];
    if (cfg->objective == SIM_OBJECTIVE_ENERGY && on)
        return sim_err_set(err, SIM_EINVAL,
                           "search.objective: energy is not modelled with autoscaling (the energy model charges a "
                           "fixed fleet's idle power); set search.autoscale off or another objective");
    if (on && cfg->encode_instances[0])
        return sim_err_set(err, SIM_EINVAL,
                           "search.encode_instances: an encode pool is not modelled with autoscaling (a request at "
                           "an encoder is not yet held by its instance, which could drain under it); leave it \"\" "
                           "or set search.autoscale off");
    sim_search_note(s,
                    "search.autoscale %s: every candidate runs the scenario's own arrivals (no rate bisection) and "
                    "ranks by SLO-meeting output tokens per GPU held over the run (GPU-hours from t = 0 to its end); "
                    "an autoscaled candidate's instance count is its max. ",
                    s->n_as == 2 ? "off,on" : on ? "on" : "off");
    return 0;
}

/* The template pool of c's pool p when it autoscales, else NULL. */
static const sim_pool_cfg *scaling_template(const sim_search *s, const sim_search_cand *c, int32_t p)
{
    int32_t idx;
    const sim_pool_cfg *t = sim_search_template_pool(&s->sc, c->pools[p].role, &idx);
    return t->autoscale.enabled ? t : NULL;
}

void sim_search_autoscale_range(const sim_search *s, const sim_search_cand *c, int32_t p, int32_t *min,
                                int32_t *start)
{
    const int32_t n = c->pools[p].instances;
    const sim_pool_cfg *t = c->autoscale == 1 ? scaling_template(s, c, p) : NULL;
    if (!t) {
        *min = *start = n;
        return;
    }
    const int32_t tg = template_gpus(t), g = c->pools[p].gpus;
    *min = in_gpus(t->autoscale.min, tg, g, 1, n);
    *start = in_gpus(t->instances, tg, g, *min, n);
}

void sim_search_autoscale_apply(const sim_search *s, const sim_search_cand *c, int32_t p, sim_pool_cfg *out)
{
    int32_t min, start;
    sim_search_autoscale_range(s, c, p, &min, &start);
    if (c->autoscale != 1 || !scaling_template(s, c, p)) {
        out->autoscale.enabled = 0;
        return;
    }
    out->autoscale.enabled = 1;
    out->autoscale.max = c->pools[p].instances;
    out->autoscale.min = min;
    out->instances = start;
}

int sim_search_autoscale_varies(const sim_search *s, const sim_search_cand *c)
{
    if (c->mode == SIM_MODE_AF || c->mode == SIM_MODE_PD_AF) return 0;
    for (int32_t p = 0; p < c->n_pools; p++) {
        int32_t min, start;
        sim_search_autoscale_range(s, c, p, &min, &start);
        if (min < c->pools[p].instances) return 1;
    }
    return 0;
}

void sim_search_autoscale_count(const sim_search *s, const sim_search_cand *c, int32_t p, char *buf, size_t len)
{
    int32_t min, start;
    sim_search_autoscale_range(s, c, p, &min, &start);
    if (min < c->pools[p].instances) snprintf(buf, len, "%d..%d", (int)min, (int)c->pools[p].instances);
    else snprintf(buf, len, "%d", (int)c->pools[p].instances);
}

int32_t sim_search_gpus_floor(const sim_search *s, const sim_search_cand *c)
{
    int32_t g = c->gpus;
    for (int32_t p = 0; p < c->n_pools; p++) {
        int32_t min, start;
        sim_search_autoscale_range(s, c, p, &min, &start);
        g -= (c->pools[p].instances - min) * c->pools[p].gpus;
    }
    return g;
}

double sim_search_gpu_hours(const sim_search_cand *c, const sim_summary *sum)
{
    /* An autoscaled run integrates every pool (its fixed ones at their size); encoders are refused with it. */
    if (sum->autoscale.enabled) return sum->autoscale.gpu_hours;
    return c->gpus * sum->end_s / 3600;
}

double sim_search_gpus_held(const sim_search_cand *c, const sim_summary *sum)
{
    const double end = sum->autoscale.enabled ? sum->autoscale.span_s : sum->end_s;
    return end > 0 ? sim_search_gpu_hours(c, sum) * 3600 / end : c->gpus;
}
