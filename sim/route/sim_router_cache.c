/* sim_router_cache — cache-aware routing presets; see sim_router_cache.h. */
#include "sim_router_cache.h"

#include "sim_rng.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    sim_router base;
    sim_routing_cfg cfg; /* a copy: the scenario may go away before the router */
    int32_t block_tokens;
    gsl_rng *rng;        /* only drawn from by dynamo with temperature > 0 */
} cache_router;

/* ---- preset none ---------------------------------------------------- */

int32_t sim_router_cache_pick_score(const sim_router_view *v, int32_t n, double lambda)
{
    int32_t best = 0;
    double best_s = v[0].saved_ms - lambda * v[0].queue_ms;
    for (int32_t i = 1; i < n; i++) {
        double s = v[i].saved_ms - lambda * v[i].queue_ms;
        /* Equal scores (e.g. λ = 0 and no match anywhere) fall back to the
         * shorter queue, so stickiness never piles work onto a busy one. */
        if (s > best_s || (s == best_s && v[i].queue_ms < v[best].queue_ms)) {
            best = i;
            best_s = s;
        }
    }
    return best;
}

/* ---- SGLang cache_aware --------------------------------------------- */

static int64_t sglang_load(const sim_router_view *v)
{
    return (int64_t)v->running + (int64_t)v->waiting;
}

int sim_router_cache_sglang_imbalanced(const sim_router_view *v, int32_t n, double abs_threshold,
                                       double rel_threshold)
{
    int64_t lo = sglang_load(&v[0]), hi = lo;
    for (int32_t i = 1; i < n; i++) {
        int64_t l = sglang_load(&v[i]);
        if (l < lo) lo = l;
        if (l > hi) hi = l;
    }
    /* Both strict, both required, as in SGLang's router. */
    return (double)(hi - lo) > abs_threshold && (double)hi > rel_threshold * (double)lo;
}

int32_t sim_router_cache_pick_sglang(const sim_routing_cfg *cfg, int32_t input_tokens,
                                     const sim_router_view *v, int32_t n, sim_sglang_branch *why)
{
    int32_t best = 0;
    if (sim_router_cache_sglang_imbalanced(v, n, cfg->balance_abs_threshold,
                                           cfg->balance_rel_threshold)) {
        for (int32_t i = 1; i < n; i++)
            if (sglang_load(&v[i]) < sglang_load(&v[best])) best = i;
        if (why) *why = SIM_SGLANG_IMBALANCED;
        return best;
    }
    for (int32_t i = 1; i < n; i++)
        if (v[i].matched_tokens > v[best].matched_tokens) best = i;
    /* SGLang divides by the request length; an empty prompt matches nothing. */
    double rate = input_tokens > 0 ? (double)v[best].matched_tokens / (double)input_tokens : 0.0;
    if (v[best].matched_tokens > 0 && rate > cfg->cache_threshold) {
        if (why) *why = SIM_SGLANG_CACHE_HIT;
        return best;
    }
    /* A low match: send it where the tree is smallest, i.e. where the most
     * cache room is left for the new prefix. */
    best = 0;
    for (int32_t i = 1; i < n; i++)
        if (v[i].cached_blocks < v[best].cached_blocks) best = i;
    if (why) *why = SIM_SGLANG_SMALLEST;
    return best;
}

/* ---- Dynamo KV router ----------------------------------------------- */

double sim_router_cache_dynamo_logit(const sim_router_view *v, int32_t input_tokens, int32_t block_tokens,
                                     double overlap_weight)
{
    double bt = (double)block_tokens;
    double prefill_tokens = (double)input_tokens - (double)v->matched_tokens;
    if (prefill_tokens < 0) prefill_tokens = 0; /* a match never makes prefill negative */
    double prefill_blocks = prefill_tokens / bt;
    int64_t own_blocks = ((int64_t)input_tokens + block_tokens - 1) / block_tokens;
    double decode_blocks = (double)v->active_blocks + (double)own_blocks;
    return overlap_weight * prefill_blocks + decode_blocks;
}

static int32_t dynamo_argmin(const sim_routing_cfg *cfg, int32_t input_tokens,
                             int32_t block_tokens, const sim_router_view *v, int32_t n)
{
    int32_t best = 0;
    double best_l = sim_router_cache_dynamo_logit(&v[0], input_tokens, block_tokens,
                                                  cfg->overlap_score_weight);
    for (int32_t i = 1; i < n; i++) {
        double l = sim_router_cache_dynamo_logit(&v[i], input_tokens, block_tokens,
                                                 cfg->overlap_score_weight);
        /* Dynamo breaks ties by the smaller tree, then at random; the lowest
         * index replaces the coin so runs stay reproducible. */
        if (l < best_l || (l == best_l && v[i].cached_blocks < v[best].cached_blocks)) {
            best = i;
            best_l = l;
        }
    }
    return best;
}

/* Unnormalised softmax weight of logit l given the logits' range [lo, hi]. */
static double dynamo_weight(double l, double lo, double hi, double temperature)
{
    if (hi == lo) return 1.0;
    return exp(-(l - lo) / ((hi - lo) * temperature));
}

static void dynamo_range(const sim_routing_cfg *cfg, int32_t input_tokens, int32_t block_tokens,
                         const sim_router_view *v, int32_t n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int32_t i = 0; i < n; i++) {
        double l = sim_router_cache_dynamo_logit(&v[i], input_tokens, block_tokens,
                                                 cfg->overlap_score_weight);
        if (l < *lo) *lo = l;
        if (l > *hi) *hi = l;
    }
}

void sim_router_cache_dynamo_probs(const sim_routing_cfg *cfg, int32_t input_tokens, int32_t block_tokens,
                                   const sim_router_view *v, int32_t n, double *probs)
{
    if (cfg->temperature <= 0) {
        int32_t b = dynamo_argmin(cfg, input_tokens, block_tokens, v, n);
        for (int32_t i = 0; i < n; i++) probs[i] = i == b ? 1.0 : 0.0;
        return;
    }
    double lo, hi, sum = 0;
    dynamo_range(cfg, input_tokens, block_tokens, v, n, &lo, &hi);
    for (int32_t i = 0; i < n; i++) {
        double l = sim_router_cache_dynamo_logit(&v[i], input_tokens, block_tokens,
                                                 cfg->overlap_score_weight);
        probs[i] = dynamo_weight(l, lo, hi, cfg->temperature);
        sum += probs[i];
    }
    for (int32_t i = 0; i < n; i++) probs[i] /= sum;
}

int32_t sim_router_cache_pick_dynamo(const sim_routing_cfg *cfg, int32_t input_tokens,
                                     int32_t block_tokens, const sim_router_view *v, int32_t n, double u)
{
    if (cfg->temperature <= 0) return dynamo_argmin(cfg, input_tokens, block_tokens, v, n);
    /* Three passes over the views instead of a scratch array: logits are a
     * few flops each, and pick() then needs no allocation that could fail. */
    double lo, hi, sum = 0;
    dynamo_range(cfg, input_tokens, block_tokens, v, n, &lo, &hi);
    for (int32_t i = 0; i < n; i++)
        sum += dynamo_weight(sim_router_cache_dynamo_logit(&v[i], input_tokens, block_tokens,
                                                           cfg->overlap_score_weight),
                             lo, hi, cfg->temperature);
    double target = u * sum, cum = 0;
    for (int32_t i = 0; i < n; i++) {
        cum += dynamo_weight(sim_router_cache_dynamo_logit(&v[i], input_tokens, block_tokens,
                                                           cfg->overlap_score_weight),
                             lo, hi, cfg->temperature);
        if (target < cum) return i;
    }
    return n - 1; /* rounding left u·sum at the very top */
}

/* ---- llm-d weighted scorers ----------------------------------------- */

double sim_router_cache_llmd_score(const sim_routing_cfg *cfg, int32_t input_tokens,
                                   const sim_router_view *v, int32_t n, int32_t i)
{
    int32_t wmin = v[0].waiting, wmax = v[0].waiting;
    for (int32_t k = 1; k < n; k++) {
        if (v[k].waiting < wmin) wmin = v[k].waiting;
        if (v[k].waiting > wmax) wmax = v[k].waiting;
    }
    double prefix = input_tokens > 0 ? (double)v[i].matched_tokens / (double)input_tokens : 0.0;
    /* Min-max over this request's candidates, as llm-d's queue scorer: the
     * shortest queue scores 1 even when every queue is long. */
    double queue = wmax == wmin ? 1.0 : (double)(wmax - v[i].waiting) / (double)(wmax - wmin);
    double kv = v[i].kv_blocks_total > 0
                    ? 1.0 - (double)v[i].kv_blocks_used / (double)v[i].kv_blocks_total
                    : 0.0;
    return cfg->w_prefix * prefix + cfg->w_load * queue + cfg->w_kv * kv;
}

int32_t sim_router_cache_pick_llmd(const sim_routing_cfg *cfg, int32_t input_tokens,
                                   const sim_router_view *v, int32_t n)
{
    int32_t best = 0;
    double best_s = sim_router_cache_llmd_score(cfg, input_tokens, v, n, 0);
    for (int32_t i = 1; i < n; i++) {
        double s = sim_router_cache_llmd_score(cfg, input_tokens, v, n, i);
        if (s > best_s) {
            best = i;
            best_s = s;
        }
    }
    return best;
}

/* ---- the router ----------------------------------------------------- */

static int32_t cache_pick(sim_router *r, const sim_request_spec *req, const sim_router_view *v,
                          int32_t n)
{
    cache_router *c = (cache_router *)r;
    if (n <= 1) return 0;
    switch (c->cfg.preset) {
    case SIM_PRESET_NONE:
        return sim_router_cache_pick_score(v, n, c->cfg.lambda);
    case SIM_PRESET_SGLANG:
        return sim_router_cache_pick_sglang(&c->cfg, req->input_tokens, v, n, NULL);
    case SIM_PRESET_DYNAMO: {
        /* Draw only when sampling, so temperature 0 leaves the stream alone. */
        double u = c->cfg.temperature > 0 ? gsl_rng_uniform(c->rng) : 0.0;
        return sim_router_cache_pick_dynamo(&c->cfg, req->input_tokens, c->block_tokens, v, n, u);
    }
    case SIM_PRESET_LLMD:
        return sim_router_cache_pick_llmd(&c->cfg, req->input_tokens, v, n);
    }
    return 0; /* unreachable: the preset was validated at create */
}

static void cache_destroy(sim_router *r)
{
    cache_router *c = (cache_router *)r;
    if (c->rng) gsl_rng_free(c->rng);
    free(c);
}

static const sim_router_ops cache_ops = {cache_pick, cache_destroy};

/* x must be a finite number >= lo. */
static int check_min(double x, double lo, const char *key, sim_err *err)
{
    if (!isfinite(x) || x < lo)
        return sim_err_set(err, SIM_EINVAL, "routing.%s must be a finite number >= %g (got %g)",
                           key, lo, x);
    return SIM_OK;
}

int sim_router_cache_validate(const sim_routing_cfg *cfg, int32_t block_tokens, sim_err *err)
{
    int rc;
    switch (cfg->preset) {
    case SIM_PRESET_NONE:
        if (!isfinite(cfg->lambda) || cfg->lambda < 0)
            return sim_err_set(err, SIM_EINVAL,
                               "routing.lambda must be a finite number >= 0 (got %g); use a "
                               "large value such as 1e12 for pure load balancing",
                               cfg->lambda);
        return SIM_OK;
    case SIM_PRESET_SGLANG:
        if (!(cfg->cache_threshold >= 0 && cfg->cache_threshold <= 1))
            return sim_err_set(err, SIM_EINVAL,
                               "routing.cache_threshold must be in [0, 1] (got %g)",
                               cfg->cache_threshold);
        if ((rc = check_min(cfg->balance_abs_threshold, 0, "balance_abs_threshold", err))) return rc;
        return check_min(cfg->balance_rel_threshold, 0, "balance_rel_threshold", err);
    case SIM_PRESET_DYNAMO:
        if (block_tokens <= 0)
            return sim_err_set(err, SIM_EINVAL,
                               "routing.preset dynamo needs cache.block_tokens > 0 (got %d)",
                               (int)block_tokens);
        if ((rc = check_min(cfg->overlap_score_weight, 0, "overlap_score_weight", err))) return rc;
        return check_min(cfg->temperature, 0, "temperature", err);
    case SIM_PRESET_LLMD:
        if ((rc = check_min(cfg->w_prefix, 0, "w_prefix", err))) return rc;
        if ((rc = check_min(cfg->w_load, 0, "w_load", err))) return rc;
        if ((rc = check_min(cfg->w_kv, 0, "w_kv", err))) return rc;
        if (cfg->w_prefix + cfg->w_load + cfg->w_kv <= 0)
            return sim_err_set(err, SIM_EINVAL,
                               "routing.w_prefix, w_load and w_kv are all 0: the llmd preset "
                               "needs at least one positive weight");
        return SIM_OK;
    }
    return sim_err_set(err, SIM_EINVAL,
                       "routing.preset: unknown preset %d (expected none, sglang, dynamo or llmd)",
                       (int)cfg->preset);
}

int sim_router_cache_create(const sim_routing_cfg *cfg, int32_t block_tokens, uint64_t seed,
                            sim_router **out, sim_err *err)
{
    *out = NULL;
    if (cfg->policy != SIM_ROUTE_CACHE_AWARE)
        return sim_err_set(err, SIM_EINVAL,
                           "routing.preset applies only to routing.policy cache_aware (policy is %d)",
                           (int)cfg->policy);
    int rc = sim_router_cache_validate(cfg, block_tokens, err);
    if (rc) return rc;
    cache_router *c = calloc(1, sizeof *c);
    if (!c) return sim_err_set(err, SIM_ENOMEM, "out of memory creating the cache-aware router");
    c->base.ops = &cache_ops;
    c->cfg = *cfg;
    c->block_tokens = block_tokens;
    c->rng = sim_rng_create(seed, "router", 0);
    if (!c->rng) {
        free(c);
        return sim_err_set(err, SIM_ENOMEM, "out of memory creating the cache-aware router");
    }
    *out = &c->base;
    return SIM_OK;
}
