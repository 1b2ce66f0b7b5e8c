/* sim_search_spec — speculative decoding as a search dimension
 * (search.draft_tokens, see sim_search_impl.h).
 *
 * Each candidate is enumerated once per draft-token count k of the list;
 * k applies to the pools that decode (colocated and decode pools; a PD
 * prefill pool keeps the scenario's setting), and the method, acceptance
 * rates and draft model come from the scenario pool the candidate's pool
 * takes its scheduler from (sim_search_template_pool). k > 0 is not
 * enumerated where the simulator does not model speculation (attention/FFN
 * disaggregation, pipeline parallelism: the loader refuses both); the
 * candidates left out are counted in the notes. A per-position acceptance
 * list of length n serves every k <= n through its first k rates, as the
 * replayed scenario then holds it.
 *
 * Nothing here allocates; failures are SIM_EINVAL with the key path. */
#include "sim_search_impl.h"

#include <string.h>

int sim_search_spec_parse(const sim_search_cfg *cfg, int32_t *out, int32_t max, sim_err *err)
{
    if (!cfg->draft_tokens[0]) return 0;
    int n = sim_search_parse_ints_in(cfg->draft_tokens, out, max, 0, SIM_SPEC_MAX_DRAFT, "search.draft_tokens", err);
    if (n < 0) return n;
    if (n == 0)
        return sim_err_set(err, SIM_EINVAL, "search.draft_tokens: expected a comma-separated list like \"0,1,2,3\"");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (out[i] == out[j])
                return sim_err_set(err, SIM_EINVAL, "search.draft_tokens: %d listed twice", (int)out[i]);
    return n;
}

static int decodes(sim_role role) { return role == SIM_ROLE_COLOCATED || role == SIM_ROLE_DECODE; }

int sim_search_spec_possible(const sim_search_cand *c)
{
    if (c->mode == SIM_MODE_AF || c->mode == SIM_MODE_PD_AF) return 0;
    for (int32_t p = 0; p < c->n_pools; p++)
        if (decodes(c->pools[p].role) && c->pools[p].pp > 1) return 0;
    return 1;
}

int32_t sim_search_spec_pool_k(const sim_search *s, const sim_search_cand *c, int32_t p)
{
    sim_role role = c->pools[p].role;
    if (c->draft_tokens >= 0 && decodes(role)) return c->draft_tokens;
    int32_t idx;
    return sim_search_template_pool(&s->sc, role, &idx)->scheduler.spec.draft_tokens;
}

void sim_search_spec_apply(const sim_search_cand *c, int32_t p, sim_pool_cfg *out)
{
    if (c->draft_tokens < 0 || !decodes(c->pools[p].role)) return;
    sim_spec_cfg *sp = &out->scheduler.spec;
    sp->draft_tokens = c->draft_tokens;
    if (c->draft_tokens > 0 && sp->acceptance.n > c->draft_tokens) sp->acceptance.n = c->draft_tokens;
}

/* The scenario pool idx as a speculating candidate's template for k draft tokens. */
static int check_template(const sim_pool_cfg *t, int32_t idx, sim_role role, int32_t kmax, sim_err *err)
{
    const sim_spec_cfg *sp = &t->scheduler.spec;
    const char *rn = sim_role_name(role);
    if (sp->acceptance.n < 1)
        return sim_err_set(err, SIM_EINVAL,
                           "deployment.pools.%d.scheduler.speculative.acceptance: required by search.draft_tokens "
                           "(up to %d draft tokens): the search's %s pools take their speculative settings (method, "
                           "acceptance, draft model) from this pool; give the acceptance rate per draft position "
                           "(draft_tokens may stay 0 there)",
                           (int)idx, (int)kmax, rn);
    if (sp->acceptance.n > 1 && sp->acceptance.n < kmax)
        return sim_err_set(err, SIM_EINVAL,
                           "deployment.pools.%d.scheduler.speculative.acceptance: %d rates, but search.draft_tokens asks "
                           "for %d draft tokens; give one rate for every position or at least %d",
                           (int)idx, (int)sp->acceptance.n, (int)kmax, (int)kmax);
    if (sp->method == SIM_SPEC_DRAFT && !sp->draft_model[0])
        return sim_err_set(err, SIM_EINVAL,
                           "deployment.pools.%d.scheduler.speculative.draft_model: method draft needs the draft model "
                           "(a catalogue name or config path) for search.draft_tokens",
                           (int)idx);
    return 0;
}

int sim_search_spec_check(sim_search *s, sim_err *err)
{
    if (s->n_drafts == 0) return 0;
    int32_t kmax = 0;
    int64_t speculating = 0;
    uint64_t checked = 0; /* scenario pools already checked, by index (< 64) */
    for (int32_t i = 0; i < s->n; i++) {
        const sim_search_cand *c = &s->cands[i];
        if (c->draft_tokens <= 0) continue;
        speculating++;
        if (c->draft_tokens > kmax) kmax = c->draft_tokens;
    }
    if (speculating == 0 && s->spec_skipped > 0)
        return sim_err_set(err, SIM_EINVAL,
                           "search.draft_tokens: no candidate searched can speculate: speculative decoding is not "
                           "modelled with attention/FFN disaggregation (modes af, pd+af) or pipeline parallelism "
                           "(layouts with pp > 1); search colocated or pd with layouts without pp, or list 0 alone");
    for (int32_t i = 0; i < s->n; i++) {
        const sim_search_cand *c = &s->cands[i];
        if (c->draft_tokens <= 0) continue;
        for (int32_t p = 0; p < c->n_pools; p++) {
            if (!decodes(c->pools[p].role)) continue;
            int32_t idx;
            const sim_pool_cfg *t = sim_search_template_pool(&s->sc, c->pools[p].role, &idx);
            if (idx < 64 && (checked >> idx & 1)) continue;
            int rc = check_template(t, idx, c->pools[p].role, kmax, err);
            if (rc < 0) return rc;
            if (idx < 64) checked |= (uint64_t)1 << idx;
        }
    }
    if (s->spec_skipped > 0)
        sim_search_note(s,
                        "search.draft_tokens: %lld candidates of modes af or pd+af or with pipeline-parallel decode "
                        "pools left out with draft tokens > 0 (speculation is not modelled there; they are searched "
                        "with 0 when the list has it). ",
                        (long long)s->spec_skipped);
    return 0;
}
