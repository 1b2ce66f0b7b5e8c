/* sim_cluster_route — what the cache-aware router sees: each request's
 * cache-block key chain, per-instance prefix matches (from the instances'
 * real caches or the router's own approximate index) and expected delays
 * in milliseconds, load snapshots, and session stickiness. See
 * sim_cluster_impl.h. */
#include "sim_cluster_impl.h"

/* The request's cache-block key chain (NULL when it has no prefix ids):
 * its prompt's keys and, with the prefix cache on and every full prompt
 * block keyed, those of the blocks its answer completes. */
int sim_cluster_build_keys(sim_cluster *c, sim_req *r)
{
    const sim_request_spec *sp = &r->spec;
    r->keys = NULL;
    r->n_keys = 0;
    r->n_out_keys = 0;
    if (!(c->caching || c->cache_route) || sp->n_hash <= 0) return SIM_OK;
    int32_t n = sim_prefix_keys_count(sp->input_tokens, sp->n_hash, c->hash_tokens, c->cache_tokens);
    if (n <= 0) return SIM_OK;
    sim_prefix_turn turn = {sp->hash_ids, sp->n_hash, sp->input_tokens, sp->output_tokens,
                            sp->ctx_ids, sp->n_ctx_ids, sp->id};
    int32_t n_all = c->caching ? sim_prefix_keys_total(&turn, n, c->cache_tokens) : n;
    r->keys = malloc((size_t)n_all * sizeof *r->keys);
    if (!r->keys) {
        sim_cluster_oom(c, "building a request's prefix keys");
        return SIM_ENOMEM;
    }
    r->n_keys = sim_prefix_keys_build(sp->hash_ids, sp->n_hash, sp->input_tokens, c->hash_tokens,
                                      c->cache_tokens, r->keys, n);
    r->n_out_keys = sim_prefix_keys_answer(&turn, c->hash_tokens, c->cache_tokens, r->keys, r->n_keys, n_all);
    return SIM_OK;
}

/* Refreshes the routers' snapshot: every field of the live views plus the
 * cache-aware queue term (pending prefill in ms) as of now. Until the next
 * refresh the routers see neither the instances' progress nor their own
 * dispatches. */
void sim_cluster_on_snapshot(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    (void)arg;
    memcpy(c->snap, c->views, (size_t)c->n_front * sizeof *c->snap);
    for (int32_t j = 0; j < c->n_front; j++) {
        int32_t k = c->front[j];
        c->snap[j].queue_ms = (double)sim_instance_pending_prefill(c->inst[k]) * c->prefill_ms_per_token[k];
    }
    if (c->n_back > 0) memcpy(c->back_snap, c->back_views, (size_t)c->n_back * sizeof *c->back_snap);
    if (c->front_tree)
        for (int32_t j = 0; j < c->n_front; j++) sim_loadtree_set(c->front_tree, j, c->snap[j].outstanding_tokens);
    if (c->back_tree)
        for (int32_t j = 0; j < c->n_back; j++) sim_loadtree_set(c->back_tree, j, c->back_snap[j].outstanding_tokens);
    if (!(c->arrivals_done && c->in_flight == 0))
        sim_engine_after(eng, (sim_time)(c->sc.routing.snapshot_interval_s * 1e9), sim_cluster_on_snapshot, c, 0);
}

/* An instance's published load changed: live views keep the least-loaded
 * indexes current here; snapshot ones are refreshed with the snapshot. */
void sim_cluster_on_load(void *ctx, int32_t k, int64_t outstanding)
{
    sim_cluster *c = ctx;
    if (c->snap || k >= c->n_inst) return;
    if (c->front_of[k] >= 0) {
        if (c->front_tree) sim_loadtree_set(c->front_tree, c->front_of[k], outstanding);
    } else if (c->back_tree && c->back_of[k] >= 0) {
        sim_loadtree_set(c->back_tree, c->back_of[k], outstanding);
    }
}

/* Builds the least-loaded routers' indexes from the views as they stand
 * (after every instance published its first view). */
int sim_cluster_attach_loadtrees(sim_cluster *c, sim_err *err)
{
    int front = c->sc.routing.policy == SIM_ROUTE_LEAST_LOADED && c->n_front > 0;
    int back = c->back_router && c->n_back > 0 && c->sc.deployment.decode_routing != SIM_DECODE_ROUND_ROBIN;
    if (front && !(c->front_tree = sim_loadtree_create(c->n_front)))
        return sim_err_set(err, SIM_ENOMEM, "out of memory building the router's load index");
    if (back && !(c->back_tree = sim_loadtree_create(c->n_back)))
        return sim_err_set(err, SIM_ENOMEM, "out of memory building the router's load index");
    for (int32_t j = 0; front && j < c->n_front; j++)
        sim_loadtree_set(c->front_tree, j, c->views[j].outstanding_tokens);
    for (int32_t j = 0; back && j < c->n_back; j++)
        sim_loadtree_set(c->back_tree, j, c->back_views[j].outstanding_tokens);
    sim_router_use_loadtree(c->router, c->front_tree);
    sim_router_use_loadtree(c->back_router, c->back_tree);
    /* Without a live index to keep current, instances need not report load. */
    if (c->snap || (!c->front_tree && !c->back_tree))
        for (int32_t k = 0; k < c->n_inst; k++) sim_instance_set_load_hook(c->inst[k], NULL);
    return SIM_OK;
}

/* Fills the per-request views of the cache-aware router: load and the
 * queueing delay (pending prefill in ms) from the live views or from the
 * snapshot, the prefix match from the instance's index (exact) or the
 * router's own (approximate), turned into the prefill ms it saves. */
void sim_cluster_fill_cache_views(sim_cluster *c, const sim_req *r)
{
    const sim_router_view *load = c->snap ? c->snap : c->views;
    for (int32_t j = 0; j < c->n_front; j++) {
        int32_t k = c->front[j];
        sim_router_view *v = &c->rviews[j];
        *v = load[j];
        int32_t m = 0;
        if (r->n_keys > 0) {
            const sim_prefix *idx = c->approx ? c->approx[j] : sim_instance_cache(c->inst[k]);
            if (idx) m = sim_prefix_peek(idx, r->keys, r->n_keys);
        }
        int64_t tok = (int64_t)m * c->cache_tokens;
        if (tok > r->spec.input_tokens) tok = r->spec.input_tokens;
        v->matched_tokens = (int32_t)tok;
        v->saved_ms = (double)tok * c->prefill_ms_per_token[k];
        if (!c->snap) v->queue_ms = (double)sim_instance_pending_prefill(c->inst[k]) * c->prefill_ms_per_token[k];
    }
}

/* The router's own record of what it sent where (routing.view approximate):
 * an LRU index per instance as large as its KV cache, which drifts from the
 * real cache because it never sees evictions. Records keys[0, n) for front
 * instance j: a request's prompt when it is dispatched, its answer's blocks
 * when the instance caches them (sim_cluster_on_answer_cached). */
void sim_cluster_approx_record(sim_cluster *c, int32_t j, const uint64_t *keys, int32_t n)
{
    if (!c->approx || n <= 0) return;
    sim_time now = sim_engine_now(c->eng);
    int32_t created = 0;
    int32_t got = sim_prefix_insert(c->approx[j], keys, n, now, &created);
    if (got < 0) {
        sim_cluster_oom(c, "growing the router's prefix index");
        return;
    }
    if (created > 0) {
        /* Drop the inserter's reference on the new tail (chains walk from
         * the root, so: +1 on the old part, -1 on everything). */
        if (got > created) sim_prefix_acquire(c->approx[j], keys, got - created, now);
        sim_prefix_release(c->approx[j], keys, got, now);
    }
}

/* Instance k cached r's answer blocks (keys[0, n) are now in its index):
 * the approximate view records them, as a KV event would tell the router. */
void sim_cluster_on_answer_cached(void *ctx, int32_t k, const sim_req *r, int32_t n)
{
    sim_cluster *c = ctx;
    if (!c->approx || k < 0 || k >= c->n_inst || c->front_of[k] < 0) return;
    sim_cluster_approx_record(c, c->front_of[k], r->keys, n);
}

/* Session stickiness: a session keeps its instance for routing.min_dwell_s. */
int32_t sim_cluster_sticky_pick(sim_cluster *c, const sim_req *r)
{
    if (c->sc.routing.min_dwell_s <= 0 || r->spec.session == 0) return -1;
    int32_t slot = sim_keymap_get(&c->sessions, r->spec.session);
    if (slot < 0) return -1;
    sim_time now = sim_engine_now(c->eng);
    /* A session whose instance drains or left goes where the router says. */
    if (c->as && !sim_cluster_as_routable_front(c, c->sess_inst[slot])) return -1;
    if ((double)(now - c->sess_since[slot]) < c->sc.routing.min_dwell_s * 1e9) return c->sess_inst[slot];
    return -1;
}

void sim_cluster_sticky_note(sim_cluster *c, const sim_req *r, int32_t j)
{
    if (c->sc.routing.min_dwell_s <= 0 || r->spec.session == 0) return;
    int32_t slot = sim_keymap_get(&c->sessions, r->spec.session);
    sim_time now = sim_engine_now(c->eng);
    if (slot >= 0) {
        if (c->sess_inst[slot] != j) {
            c->sess_inst[slot] = j;
            c->sess_since[slot] = now;
        }
        return;
    }
    if (c->n_sess == c->sess_cap) {
        int64_t nc = c->sess_cap ? c->sess_cap * 2 : 1024;
        int32_t *ni = realloc(c->sess_inst, (size_t)nc * sizeof *ni);
        if (!ni) goto nomem;
        c->sess_inst = ni;
        sim_time *ns = realloc(c->sess_since, (size_t)nc * sizeof *ns);
        if (!ns) goto nomem;
        c->sess_since = ns;
        c->sess_cap = nc;
    }
    c->sess_inst[c->n_sess] = j;
    c->sess_since[c->n_sess] = now;
    if (sim_keymap_put(&c->sessions, r->spec.session, (int32_t)c->n_sess) < 0) goto nomem;
    c->n_sess++;
    return;
nomem:
    sim_cluster_oom(c, "recording a session");
}

