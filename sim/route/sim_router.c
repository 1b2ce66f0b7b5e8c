/* sim_router — built-in routing policies; see sim_router.h. */
#include "sim_router.h"

#include "sim_rng.h"

#include <stdlib.h>

typedef struct {
    sim_router base;
    sim_route_policy policy;
    uint32_t cursor; /* round-robin position, also the tie-break rotation */
    gsl_rng *rng;
    const sim_loadtree *tree; /* least_loaded's O(log N) index (NULL: scan) */
} builtin_router;

/* Least outstanding tokens, first in cyclic order from the rotating cursor:
 * through the load tree when one mirrors these views, else by a scan. */
static int32_t pick_least(builtin_router *b, const sim_router_view *v, int32_t n)
{
    int32_t start = (int32_t)(b->cursor % (uint32_t)n);
    if (b->tree && sim_loadtree_size(b->tree) == n) {
        b->cursor++;
        return sim_loadtree_first_min_from(b->tree, start);
    }
    int32_t best = start;
    for (int32_t k = 1; k < n; k++) {
        int32_t i = (start + k) % n;
        if (v[i].outstanding_tokens < v[best].outstanding_tokens) best = i;
    }
    b->cursor++;
    return best;
}

static int32_t builtin_pick(sim_router *r, const sim_request_spec *req, const sim_router_view *v,
                            int32_t n)
{
    builtin_router *b = (builtin_router *)r;
    (void)req;
    if (n <= 1) return 0;
    switch (b->policy) {
    case SIM_ROUTE_ROUND_ROBIN:
        return (int32_t)(b->cursor++ % (uint32_t)n);
    case SIM_ROUTE_RANDOM:
        return (int32_t)gsl_rng_uniform_int(b->rng, (unsigned long)n);
    case SIM_ROUTE_LEAST_LOADED:
        return pick_least(b, v, n);
    case SIM_ROUTE_CACHE_AWARE:
        break; /* built by sim_router_cache_create, never here */
    case SIM_ROUTE_POWER_OF_TWO: {
        int32_t a = (int32_t)gsl_rng_uniform_int(b->rng, (unsigned long)n);
        int32_t c = (int32_t)gsl_rng_uniform_int(b->rng, (unsigned long)(n - 1));
        if (c >= a) c++;
        if (v[c].outstanding_tokens < v[a].outstanding_tokens) return c;
        return a;
    }
    }
    return 0;
}

static void builtin_destroy(sim_router *r)
{
    builtin_router *b = (builtin_router *)r;
    if (b->rng) gsl_rng_free(b->rng);
    free(b);
}

static const sim_router_ops builtin_ops = {builtin_pick, builtin_destroy};

void sim_router_use_loadtree(sim_router *r, const sim_loadtree *t)
{
    if (r && r->ops == &builtin_ops) ((builtin_router *)r)->tree = t;
}

int sim_router_create(const sim_routing_cfg *cfg, uint64_t seed, sim_router **out, sim_err *err)
{
    *out = NULL;
    /* cache_aware needs the prefix-cache block size: sim_router_cache_create. */
    if (cfg->policy == SIM_ROUTE_CACHE_AWARE)
        return sim_err_set(err, SIM_EINVAL,
                           "routing.policy cache_aware is built by sim_router_cache_create (it needs the "
                           "cache block size), not sim_router_create");
    if ((unsigned)cfg->policy > SIM_ROUTE_POWER_OF_TWO)
        return sim_err_set(err, SIM_EINVAL, "routing.policy: unknown policy %d", (int)cfg->policy);
    builtin_router *b = calloc(1, sizeof *b);
    if (!b) return sim_err_set(err, SIM_ENOMEM, "out of memory creating the router");
    b->base.ops = &builtin_ops;
    b->policy = cfg->policy;
    b->rng = sim_rng_create(seed, "router", 0);
    if (!b->rng) {
        free(b);
        return sim_err_set(err, SIM_ENOMEM, "out of memory creating the router");
    }
    *out = &b->base;
    return SIM_OK;
}
