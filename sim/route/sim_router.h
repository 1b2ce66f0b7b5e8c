/* sim_router — picks the instance a new request goes to.
 *
 * A router is a small vtable (pick, destroy) so new policies (the
 * cache-aware router with its λ weight) plug in without touching the
 * cluster. Built-in policies: round_robin, random (uniform), least_loaded
 * (fewest outstanding tokens: prefill tokens not yet computed plus output
 * tokens not yet generated) and power_of_two (two distinct random
 * candidates, the less loaded wins). Ties go to the first candidate in a
 * rotating order, so equal loads spread instead of piling onto instance 0.
 * Randomised policies own a GSL stream "router". The router reads instance
 * load through sim_router_view; it owns nothing but itself. */
#ifndef SIM_ROUTER_H
#define SIM_ROUTER_H

#include "sim_err.h"
#include "sim_loadtree.h"
#include "sim_scenario.h"
#include "sim_workload.h"

#include <stdint.h>

/* What the router may see of one candidate instance. The instances keep
 * the load fields current; the cluster hands every router either these
 * live views or a copy refreshed every routing.snapshot_interval_s. The
 * per-request fields (matched_tokens, saved_ms, queue_ms) are filled by the
 * cluster for cache-aware routing: the match from the instances' real
 * caches or the router's own approximate index, queue_ms live or as of the
 * last snapshot. */
typedef struct {
    int64_t outstanding_tokens;
    int32_t waiting;
    int32_t running;
    int64_t kv_blocks_used, kv_blocks_total; /* KV utilisation (paged blocks) */
    int64_t cached_blocks;        /* prefix-cache blocks held (tree size) */
    int64_t active_blocks;        /* KV blocks of running requests (Dynamo's decode blocks) */
    int32_t matched_tokens;       /* prompt tokens of this request already cached there */
    double saved_ms;              /* prefill time the match saves there */
    double queue_ms;              /* expected queueing delay there */
} sim_router_view;

typedef struct sim_router sim_router;

typedef struct {
    /* Returns the chosen index in [0, n). */
    int32_t (*pick)(sim_router *r, const sim_request_spec *req, const sim_router_view *views,
                    int32_t n);
    void (*destroy)(sim_router *r);
} sim_router_ops;

struct sim_router {
    const sim_router_ops *ops;
};

/* The built-in policies; cache_aware comes from sim_router_cache_create
 * (sim_router_cache.h). */
int sim_router_create(const sim_routing_cfg *cfg, uint64_t seed, sim_router **out, sim_err *err);

/* least_loaded: decide through t in O(log N) instead of scanning the views
 * (the same pick: sim_loadtree.h). The caller keeps t's leaves equal to the
 * outstanding_tokens of the views each pick is handed, and t outlives the
 * router's use of it; a pick whose n differs from t's size scans. NULL
 * detaches. Other policies, and routers not built by sim_router_create,
 * ignore it. */
void sim_router_use_loadtree(sim_router *r, const sim_loadtree *t);

static inline int32_t sim_router_pick(sim_router *r, const sim_request_spec *req,
                                      const sim_router_view *views, int32_t n)
{
    return r->ops->pick(r, req, views, n);
}

static inline void sim_router_destroy(sim_router *r)
{
    if (r) r->ops->destroy(r);
}

#endif
