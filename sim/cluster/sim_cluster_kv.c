/* sim_cluster_kv — KV that moves between places over the network model:
 * prefill-to-decode transfers (whole or layer by layer, with decode-side
 * reservation and back-pressure) and KV sharing (pull from peers; a
 * host-DRAM / remote-pool tier hierarchy with demotion and promotion),
 * fetched only when moving beats recomputing. See sim_cluster_impl.h. */
#include "sim_cluster_impl.h"

/* ---- prefill/decode disaggregation ----------------------------------- */

/* The hand-over is done: the prefill side frees the KV, the decode side
 * takes the request in. */
static void kv_handed_over(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_req *r = (sim_req *)(uintptr_t)arg;
    (void)eng;
    sim_instance_release_hold(c->inst[r->prefill_instance], r);
    sim_instance_submit_decode(c->inst[r->instance], r);
    if (c->as) sim_cluster_as_touched(c, r->prefill_instance);
}

/* What the engine adds to the network's transfer (the decode pool's
 * scheduler.pd_handover_us and pd_handover_gbs): a fixed per-request
 * hand-over, and the time by which the engine's KV path, each GPU's stripe
 * (stripe_bytes) at its own rate, outlasts the transfer the network model
 * made (moved_ns). */
sim_time sim_cluster_pd_handover(const sim_sched_cfg *s, double stripe_bytes, sim_time moved_ns)
{
    double t = s->pd_handover_us * 1e3;
    if (s->pd_handover_gbs > 0) {
        double path = stripe_bytes / s->pd_handover_gbs; /* bytes / (GB/s) = ns */
        if (path > (double)moved_ns) t += path - (double)moved_ns;
    }
    return (sim_time)llround(t);
}

/* The GPUs of instance k that hold distinct KV of one request, in stage
 * order, into out (at most cap); returns their count. A request's KV lives
 * on one attention-DP rank (rank = key mod dp: a rotation over requests, as
 * SGLang's round-robin DP dispatch makes, and TensorRT-LLM's
 * fewest-requests rank choice under equal load), split by pipeline stage
 * (each stage its own layers) and over that rank's TP (and sequence-
 * parallel) GPUs by KV head or token; of the GPUs that hold the same bytes
 * (model_cost_kv_copies: MLA's latent on every TP rank, a GQA head on
 * tp / kv_heads of them) one sends or takes them. An instance numbers its
 * GPUs stage-major: stage s, DP rank d, sequence rank q, TP rank t is GPU
 * ((s·dp + d)·sp + q)·tp + t. */
int sim_cluster_kv_ranks(const sim_cluster *c, int32_t k, uint64_t key, int *out, int cap)
{
    const model_cost *mc = c->costs[c->inst_pool[k]];
    const model_layout *l = model_cost_layout(mc);
    int tp = l->tp > 0 ? l->tp : 1, pp = l->pp > 0 ? l->pp : 1, dp = l->dp > 1 ? l->dp : 1;
    int sp = l->sp > 1 ? l->sp : 1;
    int step = (int)llround(model_cost_kv_copies(mc));
    if (step < 1 || step > tp) step = step < 1 ? 1 : tp;
    int d = (int)(key % (uint64_t)dp), n = 0;
    for (int s = 0; s < pp; s++)
        for (int q = 0; q < sp; q++)
            for (int t = 0; t < tp && n < cap; t += step) out[n++] = c->inst_gpu0[k] + ((s * dp + d) * sp + q) * tp + t;
    return n;
}

/* The stripes a request's KV moves in from instance p to instance d: one
 * per holding GPU of the side with more of them. */
static int kv_stripes(const sim_cluster *c, int32_t p, int32_t d)
{
    int tmp[SIM_NET_MAX_STRIPES];
    int ns = sim_cluster_kv_ranks(c, p, 0, tmp, SIM_NET_MAX_STRIPES);
    int nd = sim_cluster_kv_ranks(c, d, 0, tmp, SIM_NET_MAX_STRIPES);
    return ns > nd ? ns : nd;
}

static void kv_arrived(sim_net *net, sim_net_xfer id, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_req *r = (sim_req *)(uintptr_t)arg;
    (void)net;
    (void)id;
    sim_time now = sim_engine_now(c->eng);
    if (c->trace) sim_trace_out_kv_end(c->trace, "KV transfer", r->spec.id, r->instance, now);
    const sim_sched_cfg *s = &c->sc.deployment.pools[c->inst_pool[r->instance]].scheduler;
    sim_time started = r->kv_reserved > r->first_token ? r->kv_reserved : r->first_token;
    int k = kv_stripes(c, r->prefill_instance, r->instance);
    sim_time extra = sim_cluster_pd_handover(s, r->kv_bytes / (k > 0 ? k : 1), now - started);
    if (extra > 0) sim_engine_after(c->eng, extra, kv_handed_over, c, (uint64_t)(uintptr_t)r);
    else kv_handed_over(c->eng, c, (uint64_t)(uintptr_t)r);
}

void sim_cluster_move_to_instance(sim_cluster *c, int src0, int n_src, int32_t dst, double bytes,
                                  sim_net_done_fn cb, sim_req *r, const char *what)
{
    int src[1024], dsts[1024];
    int ns = n_src < 1024 ? n_src : 1024, nd = c->inst_ngpu[dst] < 1024 ? c->inst_ngpu[dst] : 1024;
    for (int i = 0; i < ns; i++) src[i] = src0 + i;
    for (int i = 0; i < nd; i++) dsts[i] = c->inst_gpu0[dst] + i;
    sim_net_xfer id;
    sim_err err;
    int rc = sim_net_transfer_striped(c->net, src, ns, dsts, nd, bytes, cb, c, (uint64_t)(uintptr_t)r, &id, &err);
    if (rc < 0) sim_engine_fail(c->eng, rc, "moving %s to instance %d: %s", what, dst, err.msg);
}

/* Blocks are reserved on r->instance: move the KV from the prefill GPUs
 * that hold it to the decode GPUs that take it (sim_cluster_kv_ranks; the
 * decode side's DP rank rotates over requests like the prefill side's). */
static void start_kv_transfer(sim_cluster *c, sim_req *r)
{
    int32_t p = r->prefill_instance, d = r->instance;
    const model_cost *pc = c->costs[c->inst_pool[p]];
    int src[SIM_NET_MAX_STRIPES], dst[SIM_NET_MAX_STRIPES];
    int ns = sim_cluster_kv_ranks(c, p, (uint64_t)r->spec.id, src, SIM_NET_MAX_STRIPES);
    int nd = sim_cluster_kv_ranks(c, d, (uint64_t)r->spec.id, dst, SIM_NET_MAX_STRIPES);
    int k = ns > nd ? ns : nd;
    /* The distinct KV: copies held on several TP ranks move once. */
    r->kv_bytes = (double)r->prefill_target * model_cost_kv_bytes_per_token(pc) / model_cost_kv_copies(pc);
    double bytes = r->kv_bytes;
    if (c->layerwise && r->kv_reserved == r->first_token) {
        /* Layer-by-layer: while the prefill ran, each finished layer's KV
         * was already moving, so what is left after the last layer is
         * whatever the links could not absorb during (L-1)/L of the
         * prefill, and at least the last layer. (Blocks reserved late,
         * after back-pressure, get no overlap.) */
        int L = c->model.layers > 0 ? c->model.layers : 1;
        double t_full = (double)sim_net_estimate(c->net, src[0], dst[0], bytes / k);
        double window = (double)(r->first_token - r->first_scheduled) * (L - 1) / L;
        double left = t_full > 0 ? bytes * (1.0 - fmin(1.0, window / t_full)) : 0;
        bytes = fmax(bytes / L, left);
    }
    if (c->trace) sim_trace_out_kv_begin(c->trace, "KV transfer", r->spec.id, p, d, sim_engine_now(c->eng), bytes);
    sim_net_xfer id;
    sim_err err;
    int rc = sim_net_transfer_striped(c->net, src, ns, dst, nd, bytes, kv_arrived, c, (uint64_t)(uintptr_t)r, &id, &err);
    if (rc < 0) sim_engine_fail(c->eng, rc, "moving KV to instance %d: %s", d, err.msg);
}

void sim_cluster_on_prefill_done(void *ctx, sim_req *r)
{
    sim_cluster *c = ctx;
    int32_t j = r->decode_pick >= 0 ? r->decode_pick : sim_cluster_pick_decode(c, r);
    SIM_ASSERT(j >= 0 && j < c->n_back, sim_engine_now(c->eng));
    if (sim_instance_reserve(c->inst[c->back[j]], r)) start_kv_transfer(c, r);
    /* else: back-pressure; sim_cluster_on_kv_reserved fires when blocks free up there */
}

int32_t sim_cluster_pick_decode(sim_cluster *c, const sim_req *r)
{
    const sim_router_view *v = c->back_snap ? c->back_snap : c->back_views;
    if (c->as) return sim_cluster_as_pick_back(c, &r->spec, v);
    return sim_router_pick(c->back_router, &r->spec, v, c->n_back);
}

void sim_cluster_on_kv_reserved(void *ctx, sim_req *r) { start_kv_transfer((sim_cluster *)ctx, r); }

/* ---- KV sharing: pull from peers, or tiers below HBM ------------------- */

static int node_of(const sim_cluster *c, int32_t k)
{
    int gpn = sim_hardware_gpus_per_node(&c->sc.hardware);
    return c->inst_gpu0[k] / gpn;
}

/* Idle-network time to move bytes striped from one endpoint set to an
 * instance's GPUs (each stripe carries its share on its own links). */
static sim_time fetch_estimate(const sim_cluster *c, int src0, int n_src, int32_t dst, double bytes)
{
    int k = n_src > c->inst_ngpu[dst] ? n_src : c->inst_ngpu[dst];
    return sim_net_estimate(c->net, src0, c->inst_gpu0[dst], bytes / k);
}

int32_t sim_cluster_on_fetch_plan(void *ctx, sim_req *r, int32_t local)
{
    sim_cluster *c = ctx;
    int32_t k = r->instance, x = 0;
    sim_time est = 0;
    double bpb = (double)c->cache_tokens * c->kv_bytes_per_token; /* bytes per cache block */
    if (c->sharing == SIM_SHARING_PULL) {
        int32_t best = local, src = -1;
        for (int32_t j = 0; j < c->n_front; j++) {
            int32_t o = c->front[j];
            if (o == k || !sim_instance_cache(c->inst[o])) continue;
            int32_t m = sim_prefix_peek(sim_instance_cache(c->inst[o]), r->keys, r->n_keys);
            if (m > best) {
                best = m;
                src = j;
            }
        }
        if (src < 0) return 0;
        x = best - local;
        int32_t o = c->front[src];
        est = fetch_estimate(c, c->inst_gpu0[o], c->inst_ngpu[o], k, x * bpb);
        r->fetch_src = src;
    } else {
        int node = node_of(c, k);
        int32_t h = sim_kvtier_peek(c->host_tier[node], r->keys + local, r->n_keys - local);
        int32_t p = sim_kvtier_peek(c->pool_tier, r->keys + local + h, r->n_keys - local - h);
        x = h + p;
        if (x <= 0) return 0;
        sim_time eh = h ? fetch_estimate(c, sim_net_topo_host(sim_net_topo_of(c->net), node), 1, k, h * bpb) : 0;
        sim_time ep = p ? fetch_estimate(c, sim_net_topo_pool(sim_net_topo_of(c->net)), 1, k, p * bpb) : 0;
        est = eh > ep ? eh : ep;
        r->fetch_src = h;
    }
    /* Fetch only when moving the KV beats recomputing it here. */
    model_chunk ch = {.tokens = x * c->cache_tokens, .cached = local * c->cache_tokens};
    model_batch b = {.n_chunks = 1, .chunks = &ch};
    double recompute = model_cost_iteration(c->costs[c->inst_pool[k]], &b, NULL);
    return (double)est * 1e-9 < recompute ? x : 0;
}

static void fetch_arrived(sim_net *net, sim_net_xfer id, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_req *r = (sim_req *)(uintptr_t)arg;
    (void)net;
    (void)id;
    if (--r->fetch_parts == 0) {
        if (c->trace) sim_trace_out_kv_end(c->trace, "KV fetch", r->spec.id, r->instance, sim_engine_now(c->eng));
        sim_instance_fetch_done(c->inst[r->instance], r);
    }
}

static void fetch_part(sim_cluster *c, sim_req *r, int src0, int n_src, double bytes)
{
    r->fetch_parts++;
    sim_cluster_move_to_instance(c, src0, n_src, r->instance, bytes, fetch_arrived, r, "KV");
}

void sim_cluster_on_fetch_start(void *ctx, sim_req *r)
{
    sim_cluster *c = ctx;
    double bpb = (double)c->cache_tokens * c->kv_bytes_per_token;
    int32_t local = r->shared;
    c->fetched_blocks += r->fetch_blocks;
    r->fetch_parts = 0;
    if (c->trace)
        sim_trace_out_kv_begin(c->trace, "KV fetch", r->spec.id, c->sharing == SIM_SHARING_PULL ? c->front[r->fetch_src] : -1,
                               r->instance, sim_engine_now(c->eng), r->fetch_blocks * bpb);
    if (c->sharing == SIM_SHARING_PULL) {
        int32_t o = c->front[r->fetch_src];
        fetch_part(c, r, c->inst_gpu0[o], c->inst_ngpu[o], r->fetch_blocks * bpb);
        return;
    }
    /* Promotion: the blocks leave their tier and move up into HBM. */
    int node = node_of(c, r->instance);
    int32_t h = r->fetch_src, p = r->fetch_blocks - h;
    const sim_net_topo *t = sim_net_topo_of(c->net);
    if (h > 0) {
        sim_kvtier_take(c->host_tier[node], r->keys + local, h);
        fetch_part(c, r, sim_net_topo_host(t, node), 1, h * bpb);
    }
    if (p > 0) {
        sim_kvtier_take(c->pool_tier, r->keys + local + h, p);
        fetch_part(c, r, sim_net_topo_pool(t), 1, p * bpb);
    }
}

static void pool_evicted(void *ctx, uint64_t key)
{
    sim_cluster *c = ctx;
    /* the pool's own LRU drops what it must */
    if (sim_kvtier_insert(c->pool_tier, key, NULL, NULL) < 0) sim_cluster_oom(c, "growing the remote KV pool");
}

/* Demotion on eviction: HBM -> the node's host DRAM -> the remote pool. */
void sim_cluster_on_cache_evict(void *ctx, int32_t instance, uint64_t key)
{
    sim_cluster *c = ctx;
    if (c->sharing != SIM_SHARING_POOL) return;
    if (sim_kvtier_insert(c->host_tier[node_of(c, instance)], key, pool_evicted, c) < 0)
        sim_cluster_oom(c, "growing a host-DRAM KV tier");
}

