/* sim_spec — see sim_spec.h. */
#include "sim_spec.h"

#include "model_resolve.h"
#include "model_spec.h"
#include "sim_rng.h"

#include <gsl/gsl_randist.h>
#include <stdlib.h>
#include <string.h>

struct sim_spec {
    int32_t k;
    double a[SIM_SPEC_MAX_DRAFT]; /* per-position acceptance at scale 1 */
    double kappa, a1;            /* acceptance_concentration, first-position rate */
    const model_cost *draft;
    gsl_rng *rng;
};

/* The rate of position i (0-based) under cfg. */
static double rate_at(const sim_spec_cfg *cfg, int32_t i)
{
    return cfg->acceptance.n > 1 ? cfg->acceptance.v[i] : cfg->acceptance.v[0];
}

double sim_spec_expected_tokens(const sim_spec_cfg *cfg)
{
    double e = 1, run = 1;
    for (int32_t i = 0; i < cfg->draft_tokens && i < SIM_SPEC_MAX_DRAFT; i++) {
        run *= rate_at(cfg, i);
        e += run;
    }
    return e;
}

/* The MTP module as a model of its own: mtp_layers layers of the target's
 * kind (routed experts in an MoE model, as DeepSeek-V3's MTP layer has;
 * the target's last-layer attention kind), its embedding and LM head. */
static void mtp_spec(const model_spec *t, int32_t layers, model_spec *m)
{
    *m = *t;
    m->layers = layers;
    m->first_dense_layers = 0;
    m->moe_layers = 0;
    m->sliding_layers = 0;
    m->linear_layers = 0;
    m->mamba_layers = 0;
    m->mixerless_layers = 0;
    m->ffnless_layers = 0;
    m->listed_layers = 0;
    m->n_ffn_widths = 0;
    m->csa_layers = 0;
    m->hca_layers = 0;
    m->hash_layers = 0;
    m->notes[0] = '\0';
}

static void draft_layout(const model_spec *d, const model_layout *l, model_layout *out)
{
    *out = *l;
    out->pp = 1;
    out->micro_batches = 0;
    if (d->experts <= 0) {
        out->ep = 1;
        out->moe_tp = 0;
    }
}

int sim_spec_draft_cost(const sim_spec_cfg *cfg, const model_spec *target, const model_gpu *g,
                        const model_layout *l, model_cost **out, sim_err *err)
{
    *out = NULL;
    model_spec m;
    int rc;
    if (cfg->method == SIM_SPEC_MTP) {
        mtp_spec(target, cfg->mtp_layers, &m);
        if ((rc = model_spec_derive(&m, "scheduler.speculative (mtp)", err)) < 0)
            return sim_err_wrap(err, rc, "scheduler.speculative: the MTP module of %s", target->name);
    } else if ((rc = model_resolve(cfg->draft_model, &m, err)) < 0) {
        return sim_err_wrap(err, rc, "scheduler.speculative.draft_model");
    }
    model_layout dl;
    draft_layout(&m, l, &dl);
    if ((rc = model_cost_create(&m, g, &dl, out, err)) < 0)
        return sim_err_wrap(err, rc, "scheduler.speculative: the %s %s on the target's layout",
                            cfg->method == SIM_SPEC_MTP ? "MTP module of" : "draft model", m.name);
    return SIM_OK;
}

double sim_spec_draft_weight_bytes(const sim_spec_cfg *cfg, const model_spec *target, const model_gpu *g,
                                   const model_layout *l, const model_cost *draft)
{
    if (cfg->method != SIM_SPEC_MTP) return model_cost_weight_bytes_per_gpu(draft);
    /* The layers alone: w(2L) − w(L) takes out the shared embedding and head. */
    model_spec m2;
    mtp_spec(target, 2 * cfg->mtp_layers, &m2);
    model_layout dl;
    draft_layout(&m2, l, &dl);
    model_cost *c2 = NULL;
    sim_err e = {0};
    if (model_spec_derive(&m2, "scheduler.speculative (mtp)", &e) < 0 || model_cost_create(&m2, g, &dl, &c2, &e) < 0)
        return model_cost_weight_bytes_per_gpu(draft);
    double w = model_cost_weight_bytes_per_gpu(c2) - model_cost_weight_bytes_per_gpu(draft);
    model_cost_destroy(c2);
    return w > 0 ? w : 0;
}

int64_t sim_spec_kv_tokens(int64_t kv_tokens, const model_cost *target, const model_cost *draft)
{
    double t = model_cost_kv_bytes_per_token(target), d = model_cost_kv_bytes_per_token(draft);
    if (!(t > 0) || !(d >= 0)) return kv_tokens;
    return (int64_t)((double)kv_tokens * t / (t + d));
}

int sim_spec_create(const sim_spec_cfg *cfg, const model_cost *draft, uint64_t seed, int32_t instance,
                    sim_spec **out, sim_err *err)
{
    *out = NULL;
    if (cfg->draft_tokens < 1 || cfg->draft_tokens > SIM_SPEC_MAX_DRAFT || cfg->acceptance.n < 1)
        return sim_err_set(err, SIM_EINVAL, "scheduler.speculative: draft_tokens 1..%d and acceptance are needed",
                           SIM_SPEC_MAX_DRAFT);
    sim_spec *s = calloc(1, sizeof *s);
    if (!s) return sim_err_set(err, SIM_ENOMEM, "out of memory creating speculative decoding");
    s->k = cfg->draft_tokens;
    for (int32_t i = 0; i < s->k; i++) s->a[i] = rate_at(cfg, i);
    s->kappa = cfg->acceptance_concentration;
    s->a1 = s->a[0];
    s->draft = draft;
    s->rng = sim_rng_create(seed, "speculative", (uint64_t)instance);
    if (!s->rng) {
        free(s);
        return sim_err_set(err, SIM_ENOMEM, "out of memory creating speculative decoding");
    }
    *out = s;
    return SIM_OK;
}

void sim_spec_destroy(sim_spec *s)
{
    if (!s) return;
    gsl_rng_free(s->rng);
    free(s);
}

int32_t sim_spec_k(const sim_spec *s) { return s->k; }

float sim_spec_request_scale(sim_spec *s)
{
    if (!(s->kappa > 0) || !(s->a1 > 0) || !(s->a1 < 1)) return 1.0f;
    double x = gsl_ran_beta(s->rng, s->kappa * s->a1, s->kappa * (1 - s->a1));
    return (float)(x / s->a1);
}

int32_t sim_spec_accepted(sim_spec *s, float scale)
{
    int32_t n = 0;
    while (n < s->k) {
        double a = s->a[n] * scale;
        if (a >= 1) {
            n++;
            continue;
        }
        if (!(gsl_rng_uniform(s->rng) < a)) break;
        n++;
    }
    return n;
}

/* Device time of one draft pass over b (the host overhead is the step's). */
static double draft_pass(const model_cost *d, const model_batch *b)
{
    model_iter_cost ic;
    double total = model_cost_iteration(d, b, &ic);
    double dev = total - ic.overhead_s;
    return dev > 0 ? dev : 0;
}

double sim_spec_draft_s(const sim_spec *s, const model_batch *b)
{
    if (!s->draft || (b->n_chunks <= 0 && b->n_decode <= 0)) return 0;
    double t = draft_pass(s->draft, b);
    if (b->n_decode > 0 && s->k > 1) {
        /* The later passes run the decoding requests alone: a decode-only
         * step's first pass already priced that batch. */
        model_batch dec = {.n_decode = b->n_decode, .decode_ctx_sum = b->decode_ctx_sum, .n_pad = b->n_pad};
        t += (s->k - 1) * (b->n_chunks > 0 ? draft_pass(s->draft, &dec) : t);
    }
    return t;
}
