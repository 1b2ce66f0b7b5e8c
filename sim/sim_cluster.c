/* sim_cluster — see sim_cluster.h. Arrivals are pulled lazily from the
 * workload one at a time (one pending arrival event), so memory follows the
 * requests in flight; finished requests go back to a free list. */
#include "sim_cluster.h"

#include "model_catalog.h"
#include "model_cost.h"
#include "model_layout.h"
#include "calib/calib_db.h"
#include "sim_af.h"
#include "sim_engine.h"
#include "sim_instance.h"
#include "sim_kvtier.h"
#include "sim_net.h"
#include "sim_prefix.h"
#include "sim_prefix_keys.h"
#include "sim_router_cache.h"
#include "sim_request.h"
#include "sim_router.h"
#include "sim_workload.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REQ_SLAB 4096

typedef struct req_slab {
    struct req_slab *next;
    sim_req reqs[REQ_SLAB];
} req_slab;

struct sim_cluster {
    sim_scenario sc;
    sim_engine *eng;
    sim_workload *wl;
    sim_router *router;
    sim_metrics *metrics;
    model_spec model;
    model_gpu gpu;
    model_cost *costs[SIM_MAX_POOLS];
    sim_instance **inst;
    int32_t *inst_pool;        /* pool index of each instance */
    int32_t *inst_gpu0;        /* first GPU (global index) of each instance */
    int32_t *inst_ngpu;
    /* Front instances take new requests (colocated or prefill); back ones
     * take KV after prefill (pd). Each set has its own contiguous views. */
    int32_t *front, *back;
    int32_t n_front, n_back;
    sim_router_view *views, *back_views;
    sim_router *back_router;
    int64_t back_kv_tokens;    /* smallest decode-instance KV capacity */
    double kv_bytes_per_token; /* what moves per token of context */
    sim_net *net;
    sim_af *af;                /* attention/FFN disaggregation (NULL unless af / pd+af) */
    calib_db *perf_db;         /* calibrated latencies (NULL = roofline only) */
    char perf_db_path[SIM_PATH_MAX];
    int32_t n_ffn_gpus;
    /* prefix caching and cache-aware routing */
    int caching;               /* instances hold prefix caches */
    int cache_route;           /* routing.policy cache_aware */
    int32_t cache_tokens, hash_tokens;
    double *prefill_ms_per_token; /* per instance, for saved_ms / queue_ms */
    sim_router_view *rviews;   /* per-request views handed to the cache-aware router */
    sim_router_view *snap;     /* load snapshot (routing.snapshot_interval_s > 0) */
    sim_prefix **approx;       /* routing.view approximate: the router's own indexes */
    int sharing;               /* 0 none, 1 pull, 2 pool */
    int layerwise;             /* pd: KV moves layer by layer during prefill */
    int32_t *front_of;         /* instance -> front index (-1 for back instances) */
    sim_kvtier **host_tier;    /* pool: host-DRAM tier per node */
    sim_kvtier *pool_tier;     /* pool: remote pool */
    int32_t n_nodes;
    int64_t fetched_blocks;
    sim_keymap sessions;       /* session -> slot (stickiness) */
    int32_t *sess_inst;
    sim_time *sess_since;
    int64_t n_sess, sess_cap;
    int32_t n_inst, n_gpus;
    int64_t kv_tokens_per_inst;

    req_slab *slabs;
    sim_req *free_reqs;

    int closed;
    int arrivals_done;
    int64_t issued, completed, rejected, in_flight;
    int64_t in_tok_done, out_tok_done;
    double in_flight_area;     /* ∫ in_flight dt in request·ns (Little's law check) */
    sim_time area_last;
    int64_t total;             /* expected requests, -1 unknown */
    int overloaded;
    int fatal;                 /* negative SIM_E* when the run had to stop */
    char overload_reason[256];
    sim_time sample_ns;
    sim_time last_sample;
    sim_progress_fn progress;
    void *progress_ctx;
    int64_t progress_next;
};

/* ---- request pool ------------------------------------------------------- */

static sim_req *req_alloc(sim_cluster *c)
{
    if (!c->free_reqs) {
        req_slab *s = malloc(sizeof *s);
        if (!s) return NULL;
        s->next = c->slabs;
        c->slabs = s;
        for (int i = REQ_SLAB - 1; i >= 0; i--) {
            s->reqs[i].free_next = c->free_reqs;
            c->free_reqs = &s->reqs[i];
        }
    }
    sim_req *r = c->free_reqs;
    c->free_reqs = r->free_next;
    memset(r, 0, sizeof *r);
    return r;
}

/* Integrates the number of requests in the system up to now. */
static void area_advance(sim_cluster *c)
{
    sim_time now = sim_engine_now(c->eng);
    c->in_flight_area += (double)c->in_flight * (double)(now - c->area_last);
    c->area_last = now;
}

static void req_free(sim_cluster *c, sim_req *r)
{
    r->free_next = c->free_reqs;
    c->free_reqs = r;
}

/* ---- traffic ------------------------------------------------------------ */

static void client_next(sim_engine *eng, void *ctx, uint64_t client);

static void maybe_done(sim_cluster *c)
{
    if (c->arrivals_done && c->in_flight == 0) sim_engine_stop(c->eng);
}

static void report_progress(sim_cluster *c)
{
    if (c->progress && c->completed >= c->progress_next) {
        c->progress(c->progress_ctx, c->completed, c->total,
                    (double)sim_engine_now(c->eng) / SIM_NS_PER_S);
        c->progress_next = c->completed + 1024;
    }
}

/* The request's cache-block key chain (NULL when it has no prefix ids). */
static void build_keys(sim_cluster *c, sim_req *r)
{
    const sim_request_spec *sp = &r->spec;
    r->keys = NULL;
    r->n_keys = 0;
    if (!(c->caching || c->cache_route) || sp->n_hash <= 0) return;
    int32_t n = sim_prefix_keys_count(sp->input_tokens, sp->n_hash, c->hash_tokens, c->cache_tokens);
    if (n <= 0) return;
    r->keys = malloc((size_t)n * sizeof *r->keys);
    SIM_ASSERT(r->keys != NULL, sim_engine_now(c->eng));
    r->n_keys = sim_prefix_keys_build(sp->hash_ids, sp->n_hash, sp->input_tokens, c->hash_tokens,
                                      c->cache_tokens, r->keys, n);
}

static void on_snapshot(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    (void)arg;
    memcpy(c->snap, c->views, (size_t)c->n_front * sizeof *c->snap);
    if (!(c->arrivals_done && c->in_flight == 0))
        sim_engine_after(eng, (sim_time)(c->sc.routing.snapshot_interval_s * 1e9), on_snapshot, c, 0);
}

/* Fills the per-request views of the cache-aware router: load from the live
 * or snapshot views, the prefix match from the instance's index (exact) or
 * the router's own (approximate), both turned into milliseconds. */
static void fill_cache_views(sim_cluster *c, const sim_req *r)
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
        v->queue_ms = (double)sim_instance_pending_prefill(c->inst[k]) * c->prefill_ms_per_token[k];
    }
}

/* The router's own record of what it sent where (routing.view approximate):
 * an LRU index per instance as large as its KV cache, which drifts from the
 * real cache because it never sees evictions. */
static void approx_record(sim_cluster *c, int32_t j, const sim_req *r)
{
    if (!c->approx || r->n_keys == 0) return;
    sim_time now = sim_engine_now(c->eng);
    int32_t created = 0;
    int32_t got = sim_prefix_insert(c->approx[j], r->keys, r->n_keys, now, &created);
    if (created > 0) {
        /* Drop the inserter's reference on the new tail (chains walk from
         * the root, so: +1 on the old part, -1 on everything). */
        if (got > created) sim_prefix_acquire(c->approx[j], r->keys, got - created, now);
        sim_prefix_release(c->approx[j], r->keys, got, now);
    }
}

/* Session stickiness: a session keeps its instance for routing.min_dwell_s. */
static int32_t sticky_pick(sim_cluster *c, const sim_req *r)
{
    if (c->sc.routing.min_dwell_s <= 0 || r->spec.session == 0) return -1;
    int32_t slot = sim_keymap_get(&c->sessions, r->spec.session);
    if (slot < 0) return -1;
    sim_time now = sim_engine_now(c->eng);
    if ((double)(now - c->sess_since[slot]) < c->sc.routing.min_dwell_s * 1e9) return c->sess_inst[slot];
    return -1;
}

static void sticky_note(sim_cluster *c, const sim_req *r, int32_t j)
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
        SIM_ASSERT(ni != NULL, now);
        c->sess_inst = ni;
        sim_time *ns = realloc(c->sess_since, (size_t)nc * sizeof *ns);
        SIM_ASSERT(ns != NULL, now);
        c->sess_since = ns;
        c->sess_cap = nc;
    }
    c->sess_inst[c->n_sess] = j;
    c->sess_since[c->n_sess] = now;
    SIM_ASSERT(sim_keymap_put(&c->sessions, r->spec.session, (int32_t)c->n_sess) == 0, now);
    c->n_sess++;
}

/* Routes one request spec into an instance; rejected ones are counted. */
static void dispatch(sim_cluster *c, const sim_request_spec *spec, int32_t client)
{
    c->issued++;
    sim_req *r = req_alloc(c);
    SIM_ASSERT(r != NULL, sim_engine_now(c->eng));
    r->spec = *spec;
    r->client = client;
    build_keys(c, r);
    int32_t j = sticky_pick(c, r);
    if (j < 0) {
        if (c->cache_route) {
            fill_cache_views(c, r);
            j = sim_router_pick(c->router, spec, c->rviews, c->n_front);
        } else {
            j = sim_router_pick(c->router, spec, c->views, c->n_front);
        }
    }
    SIM_ASSERT(j >= 0 && j < c->n_front, sim_engine_now(c->eng));
    int32_t k = c->front[j];
    int fits = c->n_back == 0
                   ? sim_instance_fits(c->inst[k], spec->input_tokens, spec->output_tokens)
                   : sim_instance_fits(c->inst[k], spec->input_tokens, 1) &&
                         (int64_t)spec->input_tokens + spec->output_tokens <= c->back_kv_tokens;
    if (!fits) {
        /* Longer than the KV cache can ever hold: a real engine rejects it. */
        c->rejected++;
        free(r->keys);
        sim_workload_release(c->wl, &r->spec);
        req_free(c, r);
        if (client >= 0)
            sim_engine_after(c->eng, (sim_time)(c->sc.workload.arrival.think_time_s * 1e9),
                             client_next, c, (uint64_t)client);
        return;
    }
    sticky_note(c, r, j);
    approx_record(c, j, r);
    area_advance(c);
    c->in_flight++;
    sim_instance_submit(c->inst[k], r);
}

static void on_arrival(sim_engine *eng, void *ctx, uint64_t arg);

/* A workload that cannot produce requests (out of memory) ends the run. */
static void workload_failed(sim_cluster *c, int rc)
{
    c->fatal = rc;
    c->arrivals_done = 1;
    sim_engine_stop(c->eng);
}

/* 1 when the workload produced a request; otherwise ends the arrivals
 * (exhausted) or the run (failed). */
static int workload_gave(sim_cluster *c, int wrc)
{
    if (wrc < 0) {
        workload_failed(c, wrc);
        return 0;
    }
    if (wrc == 0) {
        c->arrivals_done = 1;
        maybe_done(c);
        return 0;
    }
    return 1;
}

static void pull_next_arrival(sim_cluster *c)
{
    sim_request_spec spec;
    if (!workload_gave(c, sim_workload_next(c->wl, &spec))) return;
    /* The spec is re-read from the workload at fire time; stash it. */
    sim_req *holder = req_alloc(c);
    SIM_ASSERT(holder != NULL, sim_engine_now(c->eng));
    holder->spec = spec;
    sim_time t = spec.arrival < sim_engine_now(c->eng) ? sim_engine_now(c->eng) : spec.arrival;
    sim_engine_at(c->eng, t, on_arrival, c, (uint64_t)(uintptr_t)holder);
}

static void on_arrival(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_req *holder = (sim_req *)(uintptr_t)arg;
    sim_request_spec spec = holder->spec;
    (void)eng;
    req_free(c, holder);
    spec.arrival = sim_engine_now(c->eng);
    dispatch(c, &spec, -1);
    pull_next_arrival(c);
}

static void client_next(sim_engine *eng, void *ctx, uint64_t client)
{
    sim_cluster *c = ctx;
    sim_request_spec spec;
    if (!workload_gave(c, sim_workload_sample_client(c->wl, sim_engine_now(eng), (int32_t)client, &spec)))
        return;
    dispatch(c, &spec, (int32_t)client);
}

static void on_finish(void *ctx, sim_req *r)
{
    sim_cluster *c = ctx;
    c->completed++;
    area_advance(c);
    c->in_flight--;
    c->in_tok_done += r->spec.input_tokens;
    c->out_tok_done += r->spec.output_tokens;
    int32_t client = r->client;
    free(r->keys);
    r->keys = NULL;
    sim_workload_release(c->wl, &r->spec);
    req_free(c, r);
    if (client >= 0 && !c->arrivals_done)
        sim_engine_after(c->eng, (sim_time)(c->sc.workload.arrival.think_time_s * 1e9), client_next,
                         c, (uint64_t)client);
    report_progress(c);
    maybe_done(c);
}

/* ---- prefill/decode disaggregation ----------------------------------- */

static void kv_arrived(sim_net *net, sim_net_xfer id, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_req *r = (sim_req *)(uintptr_t)arg;
    (void)net;
    (void)id;
    sim_instance_release_hold(c->inst[r->prefill_instance], r);
    sim_instance_submit_decode(c->inst[r->instance], r);
}

/* Moves bytes from n_src consecutive endpoints starting at src0 to the GPUs
 * of instance dst, striped over both sides; cb(r) fires on arrival. */
static void move_to_instance(sim_cluster *c, int src0, int n_src, int32_t dst, double bytes,
                             sim_net_done_fn cb, sim_req *r)
{
    int src[1024], dsts[1024];
    int ns = n_src < 1024 ? n_src : 1024, nd = c->inst_ngpu[dst] < 1024 ? c->inst_ngpu[dst] : 1024;
    for (int i = 0; i < ns; i++) src[i] = src0 + i;
    for (int i = 0; i < nd; i++) dsts[i] = c->inst_gpu0[dst] + i;
    sim_net_xfer id;
    sim_err err;
    int rc = sim_net_transfer_striped(c->net, src, ns, dsts, nd, bytes, cb, c, (uint64_t)(uintptr_t)r, &id, &err);
    SIM_ASSERT(rc == 0, sim_engine_now(c->eng));
}

/* Blocks are reserved on r->instance: move the KV from the prefill GPUs to
 * the decode GPUs. */
static void start_kv_transfer(sim_cluster *c, sim_req *r)
{
    int32_t p = r->prefill_instance, d = r->instance;
    r->kv_bytes = (double)r->prefill_target * c->kv_bytes_per_token;
    double bytes = r->kv_bytes;
    if (c->layerwise && r->kv_reserved == r->first_token) {
        /* Layer-by-layer: while the prefill ran, each finished layer's KV
         * was already moving, so what is left after the last layer is
         * whatever the link could not absorb during (L-1)/L of the prefill,
         * and at least the last layer. (Blocks reserved late, after
         * back-pressure, get no overlap.) */
        int L = c->model.layers > 0 ? c->model.layers : 1;
        int k = c->inst_ngpu[p] > c->inst_ngpu[d] ? c->inst_ngpu[p] : c->inst_ngpu[d];
        double t_full = (double)sim_net_estimate(c->net, c->inst_gpu0[p], c->inst_gpu0[d], bytes / k);
        double window = (double)(r->first_token - r->first_scheduled) * (L - 1) / L;
        double left = t_full > 0 ? bytes * (1.0 - fmin(1.0, window / t_full)) : 0;
        bytes = fmax(bytes / L, left);
    }
    move_to_instance(c, c->inst_gpu0[p], c->inst_ngpu[p], d, bytes, kv_arrived, r);
}

static void on_prefill_done(void *ctx, sim_req *r)
{
    sim_cluster *c = ctx;
    int32_t j = sim_router_pick(c->back_router, &r->spec, c->back_views, c->n_back);
    SIM_ASSERT(j >= 0 && j < c->n_back, sim_engine_now(c->eng));
    if (sim_instance_reserve(c->inst[c->back[j]], r)) start_kv_transfer(c, r);
    /* else: back-pressure; on_kv_reserved fires when blocks free up there */
}

static void on_kv_reserved(void *ctx, sim_req *r) { start_kv_transfer((sim_cluster *)ctx, r); }

/* ---- KV sharing: pull from peers, or tiers below HBM ------------------- */

static int node_of(const sim_cluster *c, int32_t k)
{
    int gpn = c->sc.hardware.gpus_per_node > 0 ? c->sc.hardware.gpus_per_node : 8;
    return c->inst_gpu0[k] / gpn;
}

/* Idle-network time to move bytes striped from one endpoint set to an
 * instance's GPUs (each stripe carries its share on its own links). */
static sim_time fetch_estimate(const sim_cluster *c, int src0, int n_src, int32_t dst, double bytes)
{
    int k = n_src > c->inst_ngpu[dst] ? n_src : c->inst_ngpu[dst];
    return sim_net_estimate(c->net, src0, c->inst_gpu0[dst], bytes / k);
}

static int32_t on_fetch_plan(void *ctx, sim_req *r, int32_t local)
{
    sim_cluster *c = ctx;
    int32_t k = r->instance, x = 0;
    sim_time est = 0;
    double bpb = (double)c->cache_tokens * c->kv_bytes_per_token; /* bytes per cache block */
    if (c->sharing == 1) {
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
    if (--r->fetch_parts == 0) sim_instance_fetch_done(c->inst[r->instance], r);
}

static void fetch_part(sim_cluster *c, sim_req *r, int src0, int n_src, double bytes)
{
    r->fetch_parts++;
    move_to_instance(c, src0, n_src, r->instance, bytes, fetch_arrived, r);
}

static void on_fetch_start(void *ctx, sim_req *r)
{
    sim_cluster *c = ctx;
    double bpb = (double)c->cache_tokens * c->kv_bytes_per_token;
    int32_t local = r->shared;
    c->fetched_blocks += r->fetch_blocks;
    r->fetch_parts = 0;
    if (c->sharing == 1) {
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
    sim_kvtier_insert(c->pool_tier, key, NULL, NULL); /* the pool's own LRU drops what it must */
}

/* Demotion on eviction: HBM -> the node's host DRAM -> the remote pool. */
static void on_cache_evict(void *ctx, int32_t instance, uint64_t key)
{
    sim_cluster *c = ctx;
    if (c->sharing != 2) return;
    sim_kvtier_insert(c->host_tier[node_of(c, instance)], key, pool_evicted, c);
}

/* ---- sampling and overload ---------------------------------------------- */

static void take_samples(sim_cluster *c)
{
    sim_time now = sim_engine_now(c->eng);
    if (now <= c->last_sample) return;
    for (int32_t i = 0; i < c->n_inst; i++) {
        sim_sample s;
        sim_instance_sample(c->inst[i], now, &s);
        sim_metrics_add_sample(c->metrics, &s);
    }
    c->last_sample = now;
}

static void on_sample(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_time now = sim_engine_now(eng);
    (void)arg;
    take_samples(c);
    if (c->sc.overload.enabled) {
        int64_t waiting = 0;
        sim_time oldest = -1;
        for (int32_t i = 0; i < c->n_inst; i++) {
            sim_router_view v;
            sim_instance_view(c->inst[i], &v);
            waiting += v.waiting;
            sim_time o = sim_instance_oldest_waiting(c->inst[i]);
            if (o >= 0 && (oldest < 0 || o < oldest)) oldest = o;
        }
        double age_s = oldest >= 0 ? (double)(now - oldest) / SIM_NS_PER_S : 0;
        if (age_s > c->sc.overload.max_queue_delay_s) {
            snprintf(c->overload_reason, sizeof c->overload_reason,
                     "at t=%.1f s the oldest queued request had waited %.1f s (> overload.max_queue_delay_s = %g): "
                     "arrivals exceed what the deployment serves",
                     (double)now / SIM_NS_PER_S, age_s, c->sc.overload.max_queue_delay_s);
            c->overloaded = 1;
        } else if (waiting > c->sc.overload.max_waiting) {
            snprintf(c->overload_reason, sizeof c->overload_reason,
                     "at t=%.1f s %lld requests were queued (> overload.max_waiting = %lld)",
                     (double)now / SIM_NS_PER_S, (long long)waiting,
                     (long long)c->sc.overload.max_waiting);
            c->overloaded = 1;
        }
        if (c->overloaded) {
            sim_engine_stop(eng);
            return;
        }
    }
    if (!(c->arrivals_done && c->in_flight == 0)) sim_engine_after(eng, c->sample_ns, on_sample, c, 0);
}

/* ---- perf-db -------------------------------------------------------------- */

/* The default perf-db: the newest dump for this GPU under calib/data/ (or
 * $SERVESIM_CALIB_DATA), named <gpu>-<date>....sql by scripts/gpu-check.sh. */
static int default_perf_db(const char *gpu, char *out, size_t len)
{
    const char *dir = getenv("SERVESIM_CALIB_DATA");
#ifdef SERVESIM_CALIB_DATA_DIR
    if (!dir) dir = SERVESIM_CALIB_DATA_DIR;
#endif
    if (!dir) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    char best[256] = "";
    size_t gl = strlen(gpu);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > gl + 4 && strncmp(e->d_name, gpu, gl) == 0 && e->d_name[gl] == '-' &&
            strcmp(e->d_name + n - 4, ".sql") == 0 && strcmp(e->d_name, best) > 0)
            snprintf(best, sizeof best, "%s", e->d_name);
    }
    closedir(d);
    if (!best[0]) return 0;
    snprintf(out, len, "%s/%s", dir, best);
    return 1;
}

/* Opens the scenario's perf-db (a .sql dump is imported into memory) and
 * attaches it to every pool's cost model. */
static int attach_perf_db(sim_cluster *c, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    int explicit_db = sc->hardware.perf_db[0] != 0;
    if (explicit_db) snprintf(c->perf_db_path, sizeof c->perf_db_path, "%s", sc->hardware.perf_db);
    else if (!default_perf_db(c->gpu.name, c->perf_db_path, sizeof c->perf_db_path)) return SIM_OK;
    size_t n = strlen(c->perf_db_path);
    int dump = n > 4 && strcmp(c->perf_db_path + n - 4, ".sql") == 0;
    int rc = calib_db_open(dump ? ":memory:" : c->perf_db_path, dump ? CALIB_DB_CREATE : CALIB_DB_READONLY,
                           &c->perf_db, err);
    if (rc == 0 && dump) {
        int64_t rows = 0;
        rc = calib_db_import(c->perf_db, c->perf_db_path, &rows, err);
    }
    for (int32_t p = 0; rc == 0 && p < sc->deployment.n_pools; p++)
        if (c->costs[p]) rc = model_cost_set_db(c->costs[p], c->perf_db, NULL, err);
    if (rc < 0) return sim_err_wrap(err, rc, "hardware.perf_db %s", c->perf_db_path);
    return SIM_OK;
}

/* ---- build -------------------------------------------------------------- */

int sim_cluster_create(const sim_scenario *sc, sim_cluster **out, sim_err *err)
{
    int rc;
    *out = NULL;
    if (!sc->cache.enabled && strcmp(sc->cache.sharing, "none") != 0)
        return sim_err_set(err, SIM_EINVAL, "cache.sharing '%s' needs cache.enabled: true", sc->cache.sharing);
    sim_cluster *c = calloc(1, sizeof *c);
    if (!c) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    c->sc = *sc;
    if ((rc = model_catalog_model(sc->model, &c->model, err)) < 0) goto fail;
    if ((rc = model_catalog_gpu(sc->hardware.gpu, &c->gpu, err)) < 0) goto fail;

    /* FFN pools are a shared resource inside the attention instances' cost,
     * not simulated instances. */
    for (int32_t p = 0; p < sc->deployment.n_pools; p++)
        if (sc->deployment.pools[p].role != SIM_ROLE_FFN) c->n_inst += sc->deployment.pools[p].instances;
    size_t ni = (size_t)c->n_inst;
    c->inst = calloc(ni, sizeof *c->inst);
    c->inst_pool = calloc(ni, sizeof *c->inst_pool);
    c->inst_gpu0 = calloc(ni, sizeof *c->inst_gpu0);
    c->inst_ngpu = calloc(ni, sizeof *c->inst_ngpu);
    c->front = calloc(ni, sizeof *c->front);
    c->back = calloc(ni, sizeof *c->back);
    c->views = calloc(ni, sizeof *c->views);
    c->back_views = calloc(ni, sizeof *c->back_views);
    c->rviews = calloc(ni, sizeof *c->rviews);
    c->prefill_ms_per_token = calloc(ni, sizeof *c->prefill_ms_per_token);
    c->caching = sc->cache.enabled;
    c->cache_route = sc->routing.policy == SIM_ROUTE_CACHE_AWARE;
    c->cache_tokens = sc->cache.block_tokens;
    /* Trace hash ids (Mooncake) and generated ones share workload.prefix.block_tokens. */
    c->hash_tokens = sc->workload.prefix.block_tokens;
    c->eng = sim_engine_create();
    c->metrics = sim_metrics_create(c->n_inst);
    if (!c->inst || !c->inst_pool || !c->inst_gpu0 || !c->inst_ngpu || !c->front || !c->back ||
        !c->views || !c->back_views || !c->rviews || !c->prefill_ms_per_token || !c->eng ||
        !c->metrics) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory building the cluster");
        goto fail;
    }
    c->sharing = strcmp(sc->cache.sharing, "pull") == 0 ? 1 : strcmp(sc->cache.sharing, "pool") == 0 ? 2 : 0;
    c->layerwise = strcmp(sc->deployment.kv_transfer, "layerwise") == 0;
    c->front_of = malloc(ni * sizeof *c->front_of);
    if (!c->front_of) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory building the cluster");
        goto fail;
    }
    sim_instance_hooks hooks = {.on_finish = on_finish,
                                .on_prefill_done = on_prefill_done,
                                .on_kv_reserved = on_kv_reserved,
                                .on_fetch_plan = c->sharing ? on_fetch_plan : NULL,
                                .on_fetch_start = c->sharing ? on_fetch_start : NULL,
                                .on_cache_evict = c->sharing == 2 ? on_cache_evict : NULL,
                                .ctx = c};
    int32_t k = 0, attn_pool = -1, ffn_pool = -1, n_attn = 0, n_ffn = 0;
    int pd_af = sc->deployment.mode == SIM_MODE_PD_AF;
    c->back_kv_tokens = INT64_MAX;
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        model_gpu pool_gpu = c->gpu;
        if (pc->gpu[0] && (rc = model_catalog_gpu(pc->gpu, &pool_gpu, err)) < 0) goto fail;
        model_layout l;
        if ((rc = model_layout_from_pool(sc, pc, &l, err)) < 0 ||
            (rc = model_cost_create(&c->model, &pool_gpu, &l, &c->costs[p], err)) < 0) {
            sim_err_wrap(err, rc, "deployment.pools.%d", p);
            goto fail;
        }
        if (pc->role == SIM_ROLE_FFN) {
            ffn_pool = p;
            n_ffn += pc->instances;
            c->n_ffn_gpus += pc->instances * model_cost_gpus(c->costs[p]);
            continue;
        }
        int64_t kv_tokens = 0;
        rc = model_cost_kv_capacity_tokens(c->costs[p], pc->scheduler.gpu_mem_util,
                                           pc->scheduler.reserve_gb * 1e9, &kv_tokens, err);
        if (rc < 0) {
            sim_err_wrap(err, rc, "deployment.pools.%d", p);
            goto fail;
        }
        if (p == 0) {
            c->kv_tokens_per_inst = kv_tokens;
            c->kv_bytes_per_token = model_cost_kv_bytes_per_token(c->costs[p]);
        }
        int32_t g = model_cost_gpus(c->costs[p]);
        /* Attention instances serve like colocated ones (af) or take KV from
         * a prefill pool (pd+af); their iteration cost is the AF pipeline. */
        sim_role role = pc->role;
        if (role == SIM_ROLE_ATTENTION) {
            role = pd_af ? SIM_ROLE_DECODE : SIM_ROLE_COLOCATED;
            attn_pool = p;
            n_attn += pc->instances;
        }
        int is_back = role == SIM_ROLE_DECODE;
        /* Prefill cost per token of a full chunk: what a cached prefix saves
         * and what queued prompts cost, for the cache-aware router. */
        model_chunk probe = {.tokens = pc->scheduler.chunk_tokens, .cached = 0};
        model_batch pb = {.n_chunks = 1, .chunks = &probe};
        double ms_per_tok = model_cost_iteration(c->costs[p], &pb, NULL) * 1e3 / probe.tokens;
        if (is_back && kv_tokens < c->back_kv_tokens) c->back_kv_tokens = kv_tokens;
        for (int32_t i = 0; i < pc->instances; i++, k++) {
            rc = sim_instance_create(c->eng, k, role, &pc->scheduler, c->costs[p], kv_tokens,
                                     c->metrics, hooks, &c->inst[k], err);
            if (rc < 0) {
                sim_err_wrap(err, rc, "deployment.pools.%d", p);
                goto fail;
            }
            if (c->caching && !is_back &&
                (rc = sim_instance_enable_cache(c->inst[k], c->cache_tokens, sc->cache.policy, err)) < 0)
                goto fail;
            c->prefill_ms_per_token[k] = ms_per_tok;
            c->inst_pool[k] = p;
            c->inst_gpu0[k] = c->n_gpus;
            c->inst_ngpu[k] = g;
            c->n_gpus += g;
            c->front_of[k] = is_back ? -1 : c->n_front;
            if (is_back) {
                c->back[c->n_back] = k;
                sim_instance_publish_view(c->inst[k], &c->back_views[c->n_back++]);
            } else {
                c->front[c->n_front] = k;
                sim_instance_publish_view(c->inst[k], &c->views[c->n_front++]);
            }
        }
    }
    if ((rc = attach_perf_db(c, err)) < 0) goto fail;
    if (attn_pool >= 0) {
        if (ffn_pool < 0) {
            rc = sim_err_set(err, SIM_EINVAL, "deployment: mode %s needs an ffn pool",
                             sim_mode_name(sc->deployment.mode));
            goto fail;
        }
        double nic = sc->network.nic_gbps > 0 ? sc->network.nic_gbps * 1e9 / 8 : c->gpu.nic_bw;
        rc = sim_af_create(c->costs[attn_pool], c->costs[ffn_pool], n_attn, n_ffn,
                           sc->deployment.af_micro_batches, nic, sc->network.latency_us * 1e-6, &c->af, err);
        if (rc < 0) goto fail;
        for (int32_t i = 0; i < c->n_inst; i++)
            if (c->inst_pool[i] == attn_pool) sim_instance_set_cost_fn(c->inst[i], sim_af_iteration, c->af);
        c->n_gpus += c->n_ffn_gpus;
    }
    if (c->n_back > 0 || c->sharing) {
        /* The shared network: instances packed onto nodes in pool order;
         * pool sharing adds a host-DRAM tier per node and a remote pool. */
        int gpn = sc->hardware.gpus_per_node > 0 ? sc->hardware.gpus_per_node : 8;
        int nodes = (c->n_gpus + gpn - 1) / gpn;
        double nvl = sc->network.nvlink_gbs > 0 ? sc->network.nvlink_gbs * 1e9 : c->gpu.nvlink_bw;
        double nic = sc->network.nic_gbps > 0 ? sc->network.nic_gbps * 1e9 / 8 : c->gpu.nic_bw;
        double host = c->sharing == 2 ? sc->cache.host_gbps * 1e9 : 0;
        /* cache.pool_gbps is per instance; the pool's link carries them all. */
        double pool = c->sharing == 2 ? sc->cache.pool_gbps * 1e9 * c->n_front : 0;
        sim_net_topo *topo = sim_net_topo_build(nodes, gpn, nvl, nic, sc->network.latency_us * 1e-6,
                                                host, pool, err);
        if (!topo) {
            rc = SIM_EINVAL;
            goto fail;
        }
        c->net = sim_net_create(c->eng, topo, err);
        sim_net_topo_destroy(topo);
        if (!c->net) {
            rc = SIM_ENOMEM;
            goto fail;
        }
        c->n_nodes = nodes;
        if (c->sharing == 2) {
            double bpb = (double)c->cache_tokens * c->kv_bytes_per_token;
            c->host_tier = calloc((size_t)nodes, sizeof *c->host_tier);
            if (!c->host_tier) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                goto fail;
            }
            for (int nd = 0; nd < nodes; nd++)
                if ((rc = sim_kvtier_create((int64_t)(sc->cache.host_gb * 1e9 / bpb), &c->host_tier[nd], err)) < 0)
                    goto fail;
            if ((rc = sim_kvtier_create((int64_t)(sc->cache.pool_gb * 1e9 / bpb), &c->pool_tier, err)) < 0)
                goto fail;
        }
    }
    if (c->n_back > 0) {
        sim_routing_cfg back_cfg = {.policy = strcmp(sc->deployment.decode_routing, "round_robin") == 0
                                                  ? SIM_ROUTE_ROUND_ROBIN
                                                  : SIM_ROUTE_LEAST_LOADED};
        if ((rc = sim_router_create(&back_cfg, sc->seed ^ 0x5eedULL, &c->back_router, err)) < 0) goto fail;
    }
    if ((rc = sim_workload_create(&sc->workload, sc->seed, &c->wl, err)) < 0) goto fail;
    if (c->cache_route) {
        rc = sim_router_cache_create(&sc->routing, c->cache_tokens, sc->seed, &c->router, err);
        if (rc < 0) goto fail;
        if (strcmp(sc->routing.view, "approximate") == 0) {
            c->approx = calloc((size_t)c->n_front, sizeof *c->approx);
            if (!c->approx) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                goto fail;
            }
            int64_t cap = c->kv_tokens_per_inst / c->cache_tokens;
            for (int32_t j = 0; j < c->n_front; j++)
                if ((rc = sim_prefix_create(cap > 0 ? cap : 1, SIM_PREFIX_LRU, &c->approx[j], err)) < 0) goto fail;
        }
        if (sc->routing.snapshot_interval_s > 0) {
            c->snap = calloc((size_t)c->n_front, sizeof *c->snap);
            if (!c->snap) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                goto fail;
            }
        }
    } else if ((rc = sim_router_create(&sc->routing, sc->seed, &c->router, err)) < 0) {
        goto fail;
    }
    if (sim_keymap_init(&c->sessions, 1024) < 0) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
        goto fail;
    }
    c->closed = sim_workload_is_closed(c->wl);
    c->total = sim_workload_total(c->wl);
    c->sample_ns = (sim_time)(sc->output.sample_interval_s * 1e9);
    if (c->sample_ns < 1) c->sample_ns = SIM_NS_PER_S;
    *out = c;
    return SIM_OK;
fail:
    sim_cluster_destroy(c);
    return rc;
}

void sim_cluster_destroy(sim_cluster *c)
{
    if (!c) return;
    if (c->inst)
        for (int32_t i = 0; i < c->n_inst; i++) sim_instance_destroy(c->inst[i]);
    sim_net_destroy(c->net);
    sim_af_destroy(c->af);
    if (c->host_tier)
        for (int32_t nd = 0; nd < c->n_nodes; nd++) sim_kvtier_destroy(c->host_tier[nd]);
    free(c->host_tier);
    sim_kvtier_destroy(c->pool_tier);
    free(c->front_of);
    free(c->inst);
    free(c->inst_pool);
    free(c->inst_gpu0);
    free(c->inst_ngpu);
    free(c->front);
    free(c->back);
    free(c->views);
    free(c->back_views);
    free(c->rviews);
    free(c->prefill_ms_per_token);
    free(c->snap);
    if (c->approx)
        for (int32_t j = 0; j < c->n_front; j++) sim_prefix_destroy(c->approx[j]);
    free(c->approx);
    sim_keymap_fini(&c->sessions);
    free(c->sess_inst);
    free(c->sess_since);
    sim_router_destroy(c->back_router);
    for (int p = 0; p < SIM_MAX_POOLS; p++) model_cost_destroy(c->costs[p]);
    calib_db_close(c->perf_db);
    sim_router_destroy(c->router);
    sim_workload_destroy(c->wl);
    sim_metrics_destroy(c->metrics);
    sim_engine_destroy(c->eng);
    while (c->slabs) {
        req_slab *n = c->slabs->next;
        free(c->slabs);
        c->slabs = n;
    }
    free(c);
}

void sim_cluster_set_progress(sim_cluster *c, sim_progress_fn fn, void *ctx)
{
    c->progress = fn;
    c->progress_ctx = ctx;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Load imbalance across the instances the router chooses among: CV of the
 * tokens each served (prompt where it was prefilled, plus its output). */
static double front_load_cv(const sim_cluster *c)
{
    if (c->n_front < 2) return 0;
    int64_t n = 0;
    const sim_req_record *r = sim_metrics_requests(c->metrics, &n);
    double *load = calloc((size_t)c->n_inst, sizeof *load);
    if (!load) return 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t k = r[i].prefill_instance >= 0 ? r[i].prefill_instance : r[i].instance;
        if (k >= 0 && k < c->n_inst) load[k] += (double)r[i].input_tokens + r[i].output_tokens;
    }
    double sum = 0, sq = 0;
    for (int32_t j = 0; j < c->n_front; j++) sum += load[c->front[j]];
    double mean = sum / c->n_front;
    for (int32_t j = 0; j < c->n_front; j++) sq += (load[c->front[j]] - mean) * (load[c->front[j]] - mean);
    free(load);
    return mean > 0 ? sqrt(sq / c->n_front) / mean : 0;
}

/* Per-pool means over the instance samples. */
static void pool_summaries(const sim_cluster *c, sim_summary *out)
{
    int64_t n_smp = 0, cnt[SIM_MAX_POOLS] = {0};
    const sim_sample *smp = sim_metrics_samples(c->metrics, &n_smp);
    out->n_pools = c->sc.deployment.n_pools;
    for (int32_t p = 0; p < out->n_pools; p++) {
        const sim_pool_cfg *pc = &c->sc.deployment.pools[p];
        snprintf(out->pools[p].role, sizeof out->pools[p].role, "%s", sim_role_name(pc->role));
        out->pools[p].instances = pc->instances;
        out->pools[p].gpus = pc->instances * model_cost_gpus(c->costs[p]);
    }
    for (int64_t i = 0; i < n_smp; i++) {
        int32_t p = c->inst_pool[smp[i].instance];
        out->pools[p].utilization += smp[i].utilization;
        out->pools[p].kv_occupancy += smp[i].kv_occupancy;
        out->pools[p].waiting += smp[i].waiting;
        cnt[p]++;
    }
    for (int32_t p = 0; p < out->n_pools; p++) {
        if (!cnt[p]) continue;
        out->pools[p].utilization /= (double)cnt[p];
        out->pools[p].kv_occupancy /= (double)cnt[p];
        out->pools[p].waiting /= (double)cnt[p];
    }
}

int sim_cluster_run(sim_cluster *c, sim_summary *out, sim_err *err)
{
    double t0 = wall_now();
    if (c->closed) {
        for (int32_t i = 0; i < c->sc.workload.arrival.concurrency && !c->arrivals_done; i++)
            client_next(c->eng, c, (uint64_t)i);
    } else {
        pull_next_arrival(c);
    }
    sim_engine_after(c->eng, c->sample_ns, on_sample, c, 0);
    if (c->snap) on_snapshot(c->eng, c, 0);
    sim_engine_run(c->eng, SIM_TIME_MAX);
    take_samples(c);
    if (c->fatal < 0)
        return sim_err_set(err, c->fatal, "the workload ran out of memory generating requests");
    if (!c->overloaded) {
        SIM_ASSERT(c->in_flight == 0, sim_engine_now(c->eng));
    }
    int rc = sim_metrics_summarize(c->metrics, &c->sc.slo, c->n_gpus, out, err);
    if (rc < 0) return rc;
    out->wall_time_s = wall_now() - t0;
    out->events = sim_engine_events_fired(c->eng);
    out->n_gpus = c->n_gpus;
    out->requests_rejected = c->rejected;
    pool_summaries(c, out);
    out->load_cv = front_load_cv(c);
    if (c->af) {
        sim_af_stats as;
        sim_af_stats_get(c->af, &as);
        out->af.enabled = 1;
        out->af.micro_batches = c->sc.deployment.af_micro_batches;
        if (as.time_s > 0) {
            out->af.attention_util = as.attn_busy_s / as.time_s;
            out->af.ffn_util = as.ffn_busy_s / as.time_s;
            out->af.comm_fraction = as.comm_s / as.time_s;
        }
        out->af.activation_bytes = as.bytes;
        out->af.transfer_ms_per_iter = as.iterations ? as.comm_s / (double)as.iterations * 1e3 : 0;
        for (int32_t p = 0; p < out->n_pools; p++)
            if (c->sc.deployment.pools[p].role == SIM_ROLE_FFN) out->pools[p].utilization = out->af.ffn_util;
    }
    out->overloaded = c->overloaded;
    snprintf(out->overload_reason, sizeof out->overload_reason, "%s", c->overload_reason);
    if (c->progress) c->progress(c->progress_ctx, c->completed, c->total,
                                 (double)sim_engine_now(c->eng) / SIM_NS_PER_S);
    return SIM_OK;
}

const sim_metrics *sim_cluster_metrics(const sim_cluster *c) { return c->metrics; }

void sim_cluster_state_get(const sim_cluster *c, sim_cluster_state *out)
{
    memset(out, 0, sizeof *out);
    out->issued = c->issued;
    out->completed = c->completed;
    out->rejected = c->rejected;
    out->in_flight = c->in_flight;
    out->input_tokens_done = c->in_tok_done;
    out->output_tokens_done = c->out_tok_done;
    out->n_instances = c->n_inst;
    out->n_gpus = c->n_gpus;
    out->in_flight_area_s = c->in_flight_area / SIM_NS_PER_S;
    out->fetched_blocks = c->fetched_blocks;
    if (c->host_tier)
        for (int32_t nd = 0; nd < c->n_nodes; nd++) out->tier_blocks += sim_kvtier_size(c->host_tier[nd]);
    if (c->pool_tier) out->tier_blocks += sim_kvtier_size(c->pool_tier);
    for (int32_t i = 0; i < c->n_inst; i++) {
        sim_instance_stats s;
        sim_instance_stats_get(c->inst[i], &s);
        out->kv_blocks_used += s.kv_blocks_used;
        out->kv_blocks_total += s.kv_blocks_total;
        out->outstanding_tokens += s.outstanding_tokens;
        out->waiting += s.waiting;
        out->running += s.running;
        out->iterations += s.iterations;
        out->preemptions += s.preemptions;
        out->kv_pending += s.kv_pending;
        out->held += s.held;
        out->cache_referenced += s.cache_referenced;
        out->cached_blocks += s.cached_blocks;
    }
}

void sim_cluster_describe(const sim_cluster *c, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "%s on %s, %s weights, %d GPU(s):", c->model.name, c->gpu.name,
                                  c->sc.dtype, c->n_gpus);
    for (int32_t p = 0; p < c->sc.deployment.n_pools && off < len; p++) {
        const sim_pool_cfg *pc = &c->sc.deployment.pools[p];
        off += (size_t)snprintf(buf + off, len - off, "%s %d x %s tp=%d pp=%d", p ? ";" : "", pc->instances,
                                sim_role_name(pc->role), pc->parallel.tp, pc->parallel.pp);
    }
    if (off < len)
        off += (size_t)snprintf(buf + off, len - off, ", KV %lld tokens/instance", (long long)c->kv_tokens_per_inst);
    if (off < len)
        snprintf(buf + off, len - off, ", latencies: %s%s", c->perf_db ? "perf-db " : "analytic roofline",
                 c->perf_db ? c->perf_db_path : "");
}
