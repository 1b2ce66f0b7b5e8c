/* sim_cluster — see sim_cluster.h. Arrivals are pulled lazily from the
 * workload one at a time (one pending arrival event), so memory follows the
 * requests in flight; finished requests go back to a free list. */
#include "sim_cluster.h"
#include "sim_clock.h"

#include "model_catalog.h"
#include "model_gpu_caps.h"
#include "model_cost.h"
#include "model_op.h"
#include "model_layout.h"
#include "sim_pool_layout.h"
#include "model_spec.h"
#include "calib_db.h"
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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_cluster_impl.h"
#include "sim_mem_rule.h"

/* 1024 split-K memo entries (~100 kB): an iteration's GEMMs are a few dozen
 * shapes, and a decode batch keeps its size for many steps. */
#define SPLIT_MEMO_SLOTS_LOG2 10

/* ---- request pool ------------------------------------------------------- */

static sim_req *req_alloc(sim_cluster *c)
{
    if (!c->free_reqs) {
        req_slab *s = calloc(1, sizeof *s); /* zeroed: destroy frees every slot's keys */
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
    c->in_flight_area += (double)(c->in_flight + c->conn_waiting) * (double)(now - c->area_last);
    c->area_last = now;
}

/* r's keys are freed (and NULL) already. */
static void req_free(sim_cluster *c, sim_req *r)
{
    r->free_next = c->free_reqs;
    c->free_reqs = r;
}

/* ---- traffic ------------------------------------------------------------ */

static void client_next(sim_engine *eng, void *ctx, uint64_t client);

/* 1 when nothing is left to arrive or run. An open session still has a
 * turn or sub-request to come (it may be waiting out a think gap with
 * nothing in flight). */
static int run_over(const sim_cluster *c)
{
    return c->arrivals_done && c->in_flight == 0 && c->conn_waiting == 0 && sim_workload_sessions_open(c->wl) == 0;
}

int sim_cluster_run_over(const sim_cluster *c) { return run_over(c); }

static void maybe_done(sim_cluster *c)
{
    if (run_over(c)) sim_engine_stop(c->eng);
}

static void session_finished(sim_cluster *c, const sim_req *r, int dropped);

static void report_progress(sim_cluster *c)
{
    if (c->progress && c->completed >= c->progress_next) {
        c->progress(c->progress_ctx, c->completed, c->total,
                    (double)sim_engine_now(c->eng) / SIM_NS_PER_S);
        c->progress_next = c->completed + 1024;
    }
}

/* Overload by queue length, checked in O(1) each time a request is queued
 * so that memory stays bounded by overload.max_waiting whatever the rate. */
static void check_queue(sim_cluster *c)
{
    /* Requests waiting in the client for a connection count too. */
    int64_t waiting = c->queued + c->conn_waiting;
    if (!c->sc.overload.enabled || c->overloaded || waiting <= c->sc.overload.max_waiting) return;
    char in_client[64] = "";
    if (c->conn_waiting > 0)
        snprintf(in_client, sizeof in_client, ", %lld of them in the client for a connection",
                 (long long)c->conn_waiting);
    snprintf(c->overload_reason, sizeof c->overload_reason,
             "at t=%.3f s %lld requests were queued%s (> overload.max_waiting = %lld): "
             "arrivals exceed what the deployment serves",
             (double)sim_engine_now(c->eng) / SIM_NS_PER_S, (long long)waiting, in_client,
             (long long)c->sc.overload.max_waiting);
    c->overloaded = 1;
    sim_engine_stop(c->eng);
}

/* Routes one request spec into an instance; rejected ones are counted. */
static void dispatch(sim_cluster *c, const sim_request_spec *spec, int32_t client)
{
    sim_req *r = req_alloc(c);
    if (!r) {
        sim_workload_release(c->wl, spec);
        sim_cluster_oom(c, "allocating a request");
        return;
    }
    c->issued++;
    r->spec = *spec;
    r->client = client;
    sim_cluster_encode_attach(c, r);
    spec = &r->spec; /* with its image tokens */
    if (sim_cluster_build_keys(c, r) < 0) {
        sim_workload_release(c->wl, &r->spec);
        req_free(c, r);
        return;
    }
    int32_t j = sim_cluster_sticky_pick(c, r);
    if (j < 0) {
        if (c->as) {
            j = sim_cluster_as_pick_front(c, spec, c->snap ? c->snap : c->views);
        } else if (c->cache_route) {
            sim_cluster_fill_cache_views(c, r);
            j = sim_router_pick(c->router, spec, c->rviews, c->n_front);
        } else {
            j = sim_router_pick(c->router, spec, c->snap ? c->snap : c->views, c->n_front);
        }
    }
    SIM_ASSERT(j >= 0 && j < c->n_front, sim_engine_now(c->eng));
    int32_t k = c->front[j];
    int fits = c->n_back == 0
                   ? sim_instance_fits(c->inst[k], spec->input_tokens, spec->output_tokens)
                   : sim_instance_fits(c->inst[k], spec->input_tokens, 1) &&
                         (int64_t)spec->input_tokens + spec->output_tokens <= c->back_kv_tokens;
    int shed = 0;
    if (!fits) {
        /* Longer than the KV cache can ever hold: a real engine rejects it. */
        c->rejected++;
        if (c->n_classes > 0) c->class_rejected[spec->cls]++;
    } else if (c->admission && !sim_cluster_admit(c, r, k)) {
        shed = 1; /* admission control refused it (counted there) */
    }
    if (!fits || shed) {
        free(r->keys);
        r->keys = NULL;
        session_finished(c, r, 1);
        sim_workload_release(c->wl, &r->spec);
        req_free(c, r);
        if (client >= 0)
            sim_engine_after(c->eng, sim_workload_think_ns(c->wl, client), client_next, c, (uint64_t)client);
        return;
    }
    sim_cluster_sticky_note(c, r, j);
    sim_cluster_approx_record(c, j, r->keys, r->n_keys);
    area_advance(c);
    c->in_flight++;
    r->decode_pick = -1;
    if (c->n_back > 0 && c->decode_at_arrival) {
        /* deployment.decode_pick arrival: both workers get the request now. */
        r->decode_pick = sim_cluster_pick_decode(c, r);
        SIM_ASSERT(r->decode_pick >= 0 && r->decode_pick < c->n_back, sim_engine_now(c->eng));
        sim_instance_claim(c->inst[c->back[r->decode_pick]], r);
    }
    if (!sim_cluster_encode_route(c, r, k)) sim_instance_submit(c->inst[k], r);
    check_queue(c);
}

/* ---- the clients' connection pool (workload.arrival.max_connections) ---- */

/* Sends spec: into the cluster now, or, while the pool's connections are
 * all in flight (or others wait before it), into the client's queue. */
static void send_request(sim_cluster *c, const sim_request_spec *spec, int32_t client)
{
    if (c->conn_max <= 0 || (c->in_flight < c->conn_max && !c->conn_head)) {
        dispatch(c, spec, client);
        return;
    }
    sim_req *holder = req_alloc(c);
    if (!holder) {
        sim_workload_release(c->wl, spec);
        sim_cluster_oom(c, "allocating a request");
        return;
    }
    holder->spec = *spec;
    holder->client = client;
    area_advance(c);
    if (c->conn_tail) c->conn_tail->free_next = holder;
    else c->conn_head = holder;
    c->conn_tail = holder;
    c->conn_waiting++;
    check_queue(c);
}

/* A connection came free: the requests waiting in the client go in, first
 * sent first, while connections are free (one refused by the cluster frees
 * its connection at once). */
static void pump_connections(sim_cluster *c)
{
    while (c->conn_head && c->in_flight < c->conn_max) {
        sim_req *holder = c->conn_head;
        c->conn_head = holder->free_next;
        if (!c->conn_head) c->conn_tail = NULL;
        area_advance(c);
        c->conn_waiting--;
        sim_request_spec spec = holder->spec;
        int32_t client = holder->client;
        req_free(c, holder);
        sim_time now = sim_engine_now(c->eng);
        c->conn_wait_ns += (double)(now - spec.arrival);
        c->conn_waited++;
        dispatch(c, &spec, client);
    }
}

static void on_connection_free(sim_engine *eng, void *ctx, uint64_t arg)
{
    (void)eng;
    (void)arg;
    pump_connections(ctx);
}

static void on_arrival(sim_engine *eng, void *ctx, uint64_t arg);

/* A workload that cannot produce requests (out of memory) ends the run. */
static void workload_failed(sim_cluster *c, int rc)
{
    c->arrivals_done = 1;
    sim_engine_fail(c->eng, rc, "the workload ran out of memory generating requests");
}

/* 1 when the workload produced a request; otherwise ends the arrivals
 * (exhausted: with classes only once every class is, since a spent class
 * leaves the others sending) or the run (failed). */
static int workload_gave(sim_cluster *c, int wrc)
{
    if (wrc < 0) {
        workload_failed(c, wrc);
        return 0;
    }
    if (wrc == 0) {
        if (!sim_workload_spent(c->wl)) return 0;
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
    if (!holder) {
        sim_workload_release(c->wl, &spec);
        sim_cluster_oom(c, "allocating a request");
        return;
    }
    holder->spec = spec;
    sim_time t = spec.arrival < sim_engine_now(c->eng) ? sim_engine_now(c->eng) : spec.arrival;
    if (!sim_engine_at(c->eng, t, on_arrival, c, (uint64_t)(uintptr_t)holder)) {
        /* The engine recorded the failure and stops the run. */
        sim_workload_release(c->wl, &holder->spec);
        req_free(c, holder);
    }
}

static void on_arrival(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_req *holder = (sim_req *)(uintptr_t)arg;
    sim_request_spec spec = holder->spec;
    (void)eng;
    req_free(c, holder);
    spec.arrival = sim_engine_now(c->eng);
    send_request(c, &spec, -1);
    pull_next_arrival(c);
}

static void client_next(sim_engine *eng, void *ctx, uint64_t client)
{
    sim_cluster *c = ctx;
    sim_request_spec spec;
    if (!workload_gave(c, sim_workload_sample_client(c->wl, sim_engine_now(eng), (int32_t)client, &spec)))
        return;
    send_request(c, &spec, (int32_t)client);
}

/* ---- sessions ------------------------------------------------------------- */

static void on_followup(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_req *holder = (sim_req *)(uintptr_t)arg;
    sim_request_spec spec = holder->spec;
    req_free(c, holder);
    spec.arrival = sim_engine_now(eng);
    send_request(c, &spec, -1);
}

/* A session's next request: held until its arrival like pull_next_arrival's. */
static int followup_emit(void *ctx, sim_request_spec *spec)
{
    sim_cluster *c = ctx;
    sim_req *holder = req_alloc(c);
    if (!holder) {
        sim_workload_release(c->wl, spec);
        return SIM_ENOMEM;
    }
    holder->spec = *spec;
    sim_time now = sim_engine_now(c->eng);
    if (!sim_engine_at(c->eng, spec->arrival < now ? now : spec->arrival, on_followup, c,
                       (uint64_t)(uintptr_t)holder)) {
        sim_workload_release(c->wl, &holder->spec);
        req_free(c, holder);
        return SIM_ENOMEM;
    }
    return 0;
}

/* Request r of a session finished (or was dropped: it never fits): its
 * session goes on, and the per-session figures take it. The client is done
 * with it when it has seen the last token (scheduler.detokenizer_workers:
 * stream_last after the engine emitted it), so the next turn's think gap
 * starts there. */
static void session_finished(sim_cluster *c, const sim_req *r, int dropped)
{
    if (!c->sess_stats) return;
    sim_session_done_info info;
    sim_time now = sim_engine_now(c->eng) + (dropped ? 0 : r->stream_last);
    int rc = sim_workload_request_done(c->wl, &r->spec, now, followup_emit, c, &info);
    if (rc < 0) {
        sim_cluster_oom(c, "generating a session's next request");
        return;
    }
    if (rc == 0) return;
    if (dropped) sim_session_stats_add_dropped(c->sess_stats);
    else if (!info.is_turn) sim_session_stats_add_sub(c->sess_stats);
    else if (sim_session_stats_add_turn(c->sess_stats, info.turn, r->spec.arrival, r->first_token + r->stream_first,
                                        r->spec.input_tokens, r->cached_tokens) < 0)
        sim_engine_fail(c->eng, SIM_EINVAL, "a session turn's times go backwards");
    if (info.ended && sim_session_stats_add_session(c->sess_stats, info.start, now, info.turns) < 0)
        sim_engine_fail(c->eng, SIM_EINVAL, "a session ended before it started");
}

static void on_finish(void *ctx, sim_req *r)
{
    sim_cluster *c = ctx;
    c->completed++;
    area_advance(c);
    c->in_flight--;
    /* A request waiting in the client takes the connection (an event, not
     * from inside the instance's finish). */
    if (c->conn_head) sim_engine_after(c->eng, 0, on_connection_free, c, 0);
    c->in_tok_done += r->spec.input_tokens;
    c->out_tok_done += r->spec.output_tokens;
    int32_t client = r->client, k = r->instance;
    /* A closed-loop client sends its next request once it has seen the
     * last token (scheduler.detokenizer_workers: stream_last after the
     * engine emitted it), then thinks. */
    sim_time seen = r->stream_last;
    free(r->keys);
    r->keys = NULL;
    session_finished(c, r, 0);
    sim_workload_release(c->wl, &r->spec);
    req_free(c, r);
    if (c->as) sim_cluster_as_touched(c, k);
    if (client >= 0 && !c->arrivals_done)
        sim_engine_after(c->eng, seen + sim_workload_think_ns(c->wl, client), client_next, c, (uint64_t)client);
    report_progress(c);
    maybe_done(c);
}

/* ---- sampling and overload ---------------------------------------------- */

static void take_samples(sim_cluster *c)
{
    sim_time now = sim_engine_now(c->eng);
    if (now <= c->last_sample) return;
    for (int32_t i = 0; i < c->n_inst; i++) {
        sim_sample s;
        if (c->as && !sim_cluster_as_sampled(c, i)) continue; /* holds no serving engine */
        sim_instance_sample(c->inst[i], now, &s);
        if (sim_metrics_add_sample(c->metrics, &s) < 0) sim_cluster_oom(c, "recording an instance sample");
    }
    c->last_sample = now;
}

static void on_sample(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_time now = sim_engine_now(eng);
    (void)arg;
    take_samples(c);
    if (c->sc.overload.enabled && !c->overloaded) {
        int64_t waiting = c->queued + c->conn_waiting;
        /* The client's queue is in arrival order: its head is its oldest. */
        sim_time oldest = c->conn_head ? c->conn_head->spec.arrival : -1;
        for (int32_t i = 0; i < c->n_inst; i++) {
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
    if (!run_over(c)) sim_engine_after(eng, c->sample_ns, on_sample, c, 0);
}

/* ---- build -------------------------------------------------------------- */

int sim_cluster_create(const sim_scenario *sc, sim_cluster **out, sim_err *err)
{
    return sim_cluster_create_shared(sc, NULL, out, err);
}

/* Installed on the instances only while a trace is attached. */
static int enable_energy(sim_cluster *c, sim_err *err);

static void on_iteration(void *ctx, int32_t instance, const sim_trace_iter *it)
{
    sim_cluster *c = ctx;
    sim_trace_out_iteration(c->trace, instance, it);
}

/* Where the pools' GPUs sit. A heterogeneous fleet (pools on different GPU
 * types): a node holds one GPU type, so each pool whose type differs from
 * the pool placed before it starts on a fresh node (a fresh NVLink domain on
 * rack-scale GPUs), and those nodes get that type's NVLink and NIC
 * bandwidth. With one GPU type the GPUs pack in pool order as always. */
typedef struct {
    model_gpu pool_gpus[SIM_MAX_POOLS];
    int32_t pool_slot0[SIM_MAX_POOLS]; /* first GPU slot of each pool (heterogeneous fleets) */
    int32_t slot, prev_placed, place_unit;
    int hetero, same_domain;
} cluster_placement;

/* The attention-FFN split's pools as the pools were built (-1: none). */
typedef struct {
    int32_t attn_pool, ffn_pool, n_attn, n_ffn;
} cluster_af_pools;

/* The cluster's copy of the scenario (an autoscaled pool built at its max;
 * the rest wait switched off), the catalogue entries, the per-instance
 * arrays, the engine and the metrics. */
static int cluster_alloc(const sim_scenario *sc0, struct calib_table_cache *perf_cache, sim_cluster **out,
                         sim_err *err)
{
    int rc;
    *out = NULL;
    if (!sc0->cache.enabled && sc0->cache.sharing != SIM_SHARING_NONE)
        return sim_err_set(err, SIM_EINVAL, "cache.sharing '%s' needs cache.enabled: true",
                           sim_cache_sharing_name(sc0->cache.sharing));
    sim_cluster *c = calloc(1, sizeof *c);
    if (!c) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    *out = c;
    c->sc = *sc0;
    c->conn_max = c->sc.workload.arrival.max_connections;
    for (int32_t p = 0; p < sc0->deployment.n_pools; p++) {
        sim_pool_cfg *pc = &c->sc.deployment.pools[p];
        c->as_initial[p] = pc->instances;
        if (pc->autoscale.enabled && pc->autoscale.max > pc->instances) pc->instances = pc->autoscale.max;
    }
    /* From here on the build reads the cluster's copy. */
    const sim_scenario *sc = &c->sc;
    c->perf_cache = perf_cache;
    /* Messages start with the key path, so callers can place them in the file. */
    if ((rc = model_catalog_model(sc->model, &c->model, err)) < 0) return sim_err_wrap(err, rc, "model");
    if ((rc = model_catalog_gpu(sc->hardware.gpu, &c->gpu, err)) < 0) return sim_err_wrap(err, rc, "hardware.gpu");
    if ((rc = model_op_params_from(&c->gpu, sc->hardware.op_params_gpu, err)) < 0)
        return sim_err_wrap(err, rc, "hardware.op_params_gpu");

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
        !c->metrics)
        return sim_err_set(err, SIM_ENOMEM, "out of memory building the cluster");
    c->sharing = sc->cache.sharing;
    c->layerwise = sc->deployment.kv_transfer == SIM_KV_LAYERWISE;
    c->decode_at_arrival = sc->deployment.decode_pick == SIM_DECODE_PICK_ARRIVAL;
    c->front_of = malloc(ni * sizeof *c->front_of);
    c->back_of = malloc(ni * sizeof *c->back_of);
    if (!c->front_of || !c->back_of) return sim_err_set(err, SIM_ENOMEM, "out of memory building the cluster");
    return SIM_OK;
}

/* Each pool's GPU type and the placement unit (cluster_placement). */
static int placement_init(const sim_cluster *c, cluster_placement *pl, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    memset(pl, 0, sizeof *pl);
    pl->prev_placed = -1;
    pl->same_domain = 1;
    const int gpn_place = sim_hardware_gpus_per_node(&sc->hardware);
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        int rc;
        pl->pool_gpus[p] = c->gpu;
        pl->pool_slot0[p] = 0;
        if (pc->gpu[0] && (rc = model_catalog_gpu(pc->gpu, &pl->pool_gpus[p], err)) < 0)
            return sim_err_wrap(err, rc, "deployment.pools.%d.gpu", p);
        if (pc->gpu[0] && (rc = model_op_params_from(&pl->pool_gpus[p], sc->hardware.op_params_gpu, err)) < 0)
            return sim_err_wrap(err, rc, "hardware.op_params_gpu");
        if (strcmp(pl->pool_gpus[p].name, c->gpu.name) != 0) pl->hetero = 1;
        if (pl->pool_gpus[p].nvlink_domain != c->gpu.nvlink_domain) pl->same_domain = 0;
    }
    pl->place_unit = pl->hetero && pl->same_domain && c->gpu.nvlink_domain > gpn_place
                         ? c->gpu.nvlink_domain / gpn_place * gpn_place
                         : gpn_place;
    return SIM_OK;
}

/* The instances of serving pool p (its cost model built): created with the
 * pool's scheduler, speculative decoding and prefix cache, numbered from
 * *k on, placed from pl->slot and published to the front or decode side. */
static int pool_instances(sim_cluster *c, int32_t p, sim_role role, int64_t kv_tokens, cluster_placement *pl,
                          int32_t *k, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    const sim_pool_cfg *pc = &sc->deployment.pools[p];
    sim_instance_hooks hooks = {.on_finish = on_finish,
                                .on_prefill_done = sim_cluster_on_prefill_done,
                                .on_kv_reserved = sim_cluster_on_kv_reserved,
                                .on_fetch_plan = c->sharing != SIM_SHARING_NONE ? sim_cluster_on_fetch_plan : NULL,
                                .on_fetch_start = c->sharing != SIM_SHARING_NONE ? sim_cluster_on_fetch_start : NULL,
                                .on_cache_evict = c->sharing == SIM_SHARING_POOL ? sim_cluster_on_cache_evict : NULL,
                                .on_load = sim_cluster_on_load,
                                .on_answer_cached = sim_cluster_on_answer_cached,
                                .ctx = c};
    int32_t g = model_cost_gpus(c->costs[p]);
    int is_back = role == SIM_ROLE_DECODE;
    /* Prefill cost per token of a full chunk: what a cached prefix saves
     * and what queued prompts cost, for the cache-aware router. */
    model_chunk probe = {.tokens = pc->scheduler.chunk_tokens, .cached = 0};
    model_batch pb = {.n_chunks = 1, .chunks = &probe};
    double ms_per_tok = model_cost_iteration(c->costs[p], &pb, NULL) * 1e3 / probe.tokens;
    if (is_back && kv_tokens < c->back_kv_tokens) c->back_kv_tokens = kv_tokens;
    for (int32_t i = 0; i < pc->instances; i++, (*k)++) {
        int32_t j = *k;
        int rc = sim_instance_create(c->eng, j, role, &pc->scheduler, c->costs[p], kv_tokens, c->metrics, hooks,
                                     &c->inst[j], err);
        if (rc < 0) return sim_err_wrap(err, rc, "deployment.pools.%d", p);
        if (c->draft_costs[p]) {
            sim_spec *spec = NULL;
            if ((rc = sim_spec_create(&pc->scheduler.spec, c->draft_costs[p], sc->seed, j, &spec, err)) < 0 ||
                (rc = sim_instance_enable_spec(c->inst[j], spec, err)) < 0)
                return sim_err_wrap(err, rc, "deployment.pools.%d.scheduler.speculative", p);
        }
        if (c->caching && !is_back &&
            (rc = sim_instance_enable_cache(c->inst[j], c->cache_tokens,
                                            sc->cache.policy == SIM_CACHE_LFU ? SIM_PREFIX_LFU : SIM_PREFIX_LRU,
                                            err)) < 0)
            return rc;
        c->prefill_ms_per_token[j] = ms_per_tok;
        c->inst_pool[j] = p;
        c->inst_gpu0[j] = pl->hetero ? pl->slot : c->n_gpus;
        c->inst_ngpu[j] = g;
        c->n_gpus += g;
        pl->slot += g;
        c->front_of[j] = is_back ? -1 : c->n_front;
        c->back_of[j] = is_back ? c->n_back : -1;
        sim_instance_count_queued(c->inst[j], &c->queued);
        if (is_back) {
            c->back[c->n_back] = j;
            sim_instance_publish_view(c->inst[j], &c->back_views[c->n_back++]);
        } else {
            c->front[c->n_front] = j;
            sim_instance_publish_view(c->inst[j], &c->views[c->n_front++]);
        }
    }
    return SIM_OK;
}

/* Every pool's layout and cost model (and its draft's), the KV each of its
 * instances holds, and its instances; FFN pools only counted (af). */
static int build_pools(sim_cluster *c, cluster_placement *pl, cluster_af_pools *af, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    int pd_af = sc->deployment.mode == SIM_MODE_PD_AF;
    int32_t k = 0;
    int rc;
    *af = (cluster_af_pools){-1, -1, 0, 0};
    c->back_kv_tokens = INT64_MAX;
    /* One memo of split-K picks for the cluster's cost models (its thread's). */
    if ((rc = model_gemm_split_memo_create(SPLIT_MEMO_SLOTS_LOG2, &c->split_memo, err)) < 0) return rc;
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        model_gpu pool_gpu = pl->pool_gpus[p];
        if (pl->hetero && pc->role != SIM_ROLE_FFN) {
            if (pl->prev_placed >= 0 && strcmp(pl->pool_gpus[pl->prev_placed].name, pool_gpu.name) != 0)
                pl->slot = (pl->slot + pl->place_unit - 1) / pl->place_unit * pl->place_unit;
            pl->prev_placed = p;
            pl->pool_slot0[p] = pl->slot;
        }
        model_layout l;
        if ((rc = sim_pool_layout(sc, pc, &l, err)) < 0 ||
            (rc = model_cost_create(&c->model, &pool_gpu, &l, &c->costs[p], err)) < 0)
            return sim_err_wrap(err, rc, "deployment.pools.%d", p);
        model_cost_set_split_memo(c->costs[p], c->split_memo);
        if (pc->role == SIM_ROLE_FFN) {
            af->ffn_pool = p;
            af->n_ffn += pc->instances;
            c->n_ffn_gpus += pc->instances * model_cost_gpus(c->costs[p]);
            continue;
        }
        int64_t kv_tokens = 0;
        /* With speculative decoding the draft's weights come out of the KV
         * pool's memory, and each token holds the draft's KV beside the
         * target's; a pool that encodes images holds the vision tower too. */
        rc = sim_mem_rule_pool_kv_tokens(&pc->scheduler, &c->model, &pool_gpu, &l, c->costs[p],
                                         sim_images_tower_bytes(sc, &c->model, sc->deployment.encode_instances,
                                                                pc->role),
                                         &c->draft_costs[p], &kv_tokens, err);
        if (rc < 0) return sim_err_wrap(err, rc, "deployment.pools.%d", p);
        if (c->draft_costs[p]) model_cost_set_split_memo(c->draft_costs[p], c->split_memo);
        if (p == 0) {
            c->kv_tokens_per_inst = kv_tokens;
            c->kv_bytes_per_token = model_cost_kv_bytes_per_token(c->costs[p]);
        }
        /* Attention instances serve like colocated ones (af) or take KV from
         * a prefill pool (pd+af); their iteration cost is the AF pipeline. */
        sim_role role = pc->role;
        if (role == SIM_ROLE_ATTENTION) {
            role = pd_af ? SIM_ROLE_DECODE : SIM_ROLE_COLOCATED;
            af->attn_pool = p;
            af->n_attn += pc->instances;
        }
        if ((rc = pool_instances(c, p, role, kv_tokens, pl, &k, err)) < 0) return rc;
    }
    return SIM_OK;
}

/* The attention-FFN pipeline, when an attention pool was built: the
 * attention instances' iteration cost, the FFN pool's GPUs counted. */
static int build_af(sim_cluster *c, const cluster_placement *pl, const cluster_af_pools *af, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    if (af->attn_pool >= 0) {
        if (af->ffn_pool < 0)
            return sim_err_set(err, SIM_EINVAL, "deployment: mode %s needs an ffn pool",
                               sim_mode_name(sc->deployment.mode));
        /* Activations cross between the two pools' GPUs: the slower NIC of the two. */
        double nic = sim_network_nic_Bps(&sc->network, pl->pool_gpus[af->attn_pool].nic_bw);
        double nic_f = sim_network_nic_Bps(&sc->network, pl->pool_gpus[af->ffn_pool].nic_bw);
        if (nic_f < nic) nic = nic_f;
        int rc = sim_af_create(c->costs[af->attn_pool], c->costs[af->ffn_pool], af->n_attn, af->n_ffn,
                               sc->deployment.af_micro_batches, nic, sc->network.latency_us * 1e-6, &c->af, err);
        if (rc < 0) return rc;
        for (int32_t i = 0; i < c->n_inst; i++)
            if (c->inst_pool[i] == af->attn_pool) sim_instance_set_cost_fn(c->inst[i], sim_af_iteration, c->af);
        c->n_gpus += c->n_ffn_gpus;
    }
    c->af_attn_pool = c->af ? af->attn_pool : -1;
    c->af_ffn_pool = c->af ? af->ffn_pool : -1;
    return SIM_OK;
}

/* The topology of `nodes` nodes: the hardware's links, the nodes of pools
 * on another GPU type with that type's, a rack-scale NVLink fabric (NVL72)
 * over several nodes (with several GPU types, only when every type has the
 * same fabric); pool sharing adds a host-DRAM tier per node and a remote
 * pool. Into *out (the caller destroys it). */
static int build_topology(const sim_cluster *c, const cluster_placement *pl, int nodes, int gpn, sim_net_topo **out,
                          sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    /* The GPUs' link to the peers of their node: NVLink behind an NVSwitch,
     * else PCIe (model_gpu_peer_link_bw: a bridge reaches one peer only). */
    double nvl = sc->network.nvlink_gbs > 0 ? sc->network.nvlink_gbs * 1e9 : model_gpu_peer_link_bw(&c->gpu);
    double nic = sim_network_nic_Bps(&sc->network, c->gpu.nic_bw);
    double host = c->sharing == SIM_SHARING_POOL ? sc->cache.host_gbps * 1e9 : 0;
    /* cache.pool_gbps is per instance; the pool's link carries them all. */
    double pool = c->sharing == SIM_SHARING_POOL ? sc->cache.pool_gbps * 1e9 * c->n_front : 0;
    sim_net_topo *topo = NULL;
    int rc = sim_net_topo_build(nodes, gpn, nvl, nic, sc->network.latency_us * 1e-6, host, pool, &topo, err);
    if (rc < 0) return rc;
    for (int32_t p = 0; pl->hetero && p < sc->deployment.n_pools && rc == 0; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        if (pc->role == SIM_ROLE_FFN || strcmp(pl->pool_gpus[p].name, c->gpu.name) == 0 || !c->costs[p]) continue;
        int32_t end = pl->pool_slot0[p] + pc->instances * model_cost_gpus(c->costs[p]);
        double pnvl = sc->network.nvlink_gbs > 0 ? sc->network.nvlink_gbs * 1e9
                                                 : model_gpu_peer_link_bw(&pl->pool_gpus[p]);
        double pnic = sim_network_nic_Bps(&sc->network, pl->pool_gpus[p].nic_bw);
        for (int32_t n = pl->pool_slot0[p] / gpn; n * gpn < end && rc == 0; n++)
            rc = sim_net_topo_set_node_gpu_links(topo, n, pnvl, pnic, err);
    }
    if (rc == 0 && c->gpu.nvlink_domain > gpn && (!pl->hetero || pl->same_domain))
        rc = sim_net_topo_set_nvlink_domain(topo, c->gpu.nvlink_domain / gpn, err);
    if (rc < 0) {
        sim_net_topo_destroy(topo);
        return rc;
    }
    *out = topo;
    return SIM_OK;
}

/* Pool sharing's KV tiers: host DRAM per node and the remote pool. */
static int build_kv_tiers(sim_cluster *c, int nodes, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    double bpb = (double)c->cache_tokens * c->kv_bytes_per_token;
    int rc;
    c->host_tier = calloc((size_t)nodes, sizeof *c->host_tier);
    if (!c->host_tier) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    for (int nd = 0; nd < nodes; nd++)
        if ((rc = sim_kvtier_create((int64_t)(sc->cache.host_gb * 1e9 / bpb), &c->host_tier[nd], err)) < 0)
            return rc;
    return sim_kvtier_create((int64_t)(sc->cache.pool_gb * 1e9 / bpb), &c->pool_tier, err);
}

/* The shared network (PD hand-over, KV sharing, an encode pool): instances
 * packed onto nodes in pool order. */
static int build_network(sim_cluster *c, const cluster_placement *pl, sim_err *err)
{
    if (!(c->n_back > 0 || c->sharing != SIM_SHARING_NONE || c->enc_n > 0)) return SIM_OK;
    int gpn = sim_hardware_gpus_per_node(&c->sc.hardware);
    int nodes = (c->n_gpus + gpn - 1) / gpn;
    if (pl->hetero && (pl->slot + gpn - 1) / gpn > nodes) nodes = (pl->slot + gpn - 1) / gpn;
    sim_net_topo *topo = NULL;
    int rc = build_topology(c, pl, nodes, gpn, &topo, err);
    if (rc < 0) return rc;
    c->net = sim_net_create(c->eng, topo, err);
    sim_net_topo_destroy(topo);
    if (!c->net) return SIM_ENOMEM;
    c->n_nodes = nodes;
    return c->sharing == SIM_SHARING_POOL ? build_kv_tiers(c, nodes, err) : SIM_OK;
}

/* The decode pool's router, the front router (cache-aware with its own
 * approximate indexes where routing.view asks), the snapshots every router
 * reads with routing.snapshot_interval_s; the workload comes between the
 * two routers (each takes its seed from the scenario). */
static int build_routing(sim_cluster *c, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    int rc;
    if (c->n_back > 0) {
        sim_routing_cfg back_cfg = {.policy = sc->deployment.decode_routing == SIM_DECODE_ROUND_ROBIN
                                                  ? SIM_ROUTE_ROUND_ROBIN
                                                  : SIM_ROUTE_LEAST_LOADED};
        if ((rc = sim_router_create(&back_cfg, sc->seed ^ 0x5eedULL, &c->back_router, err)) < 0) return rc;
    }
    if ((rc = sim_workload_create(&sc->workload, sc->seed, &c->wl, err)) < 0) return rc;
    if (c->cache_route) {
        rc = sim_router_cache_create(&sc->routing, c->cache_tokens, sc->seed, &c->router, err);
        if (rc < 0) return rc;
        if (sc->routing.view == SIM_VIEW_APPROXIMATE) {
            c->approx = calloc((size_t)c->n_front, sizeof *c->approx);
            if (!c->approx) return sim_err_set(err, SIM_ENOMEM, "out of memory");
            int64_t cap = c->kv_tokens_per_inst / c->cache_tokens;
            for (int32_t j = 0; j < c->n_front; j++)
                if ((rc = sim_prefix_create(cap > 0 ? cap : 1, SIM_PREFIX_LRU, &c->approx[j], err)) < 0) return rc;
        }
    } else if ((rc = sim_router_create(&sc->routing, sc->seed, &c->router, err)) < 0) {
        return rc;
    }
    if (sc->routing.snapshot_interval_s > 0) {
        /* Every router (front and decode) decides on the snapshot. */
        c->snap = calloc((size_t)c->n_front + 1, sizeof *c->snap);
        c->back_snap = calloc((size_t)c->n_back + 1, sizeof *c->back_snap);
        if (!c->snap || !c->back_snap) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    }
    return sim_cluster_attach_loadtrees(c, err);
}

/* Bounded memory on long runs: the records kept, and the pools the sample
 * means are taken over. */
static int metrics_limits(sim_cluster *c, sim_err *err)
{
    const sim_scenario *sc = &c->sc;
    if (sim_metrics_set_limits(c->metrics, sc->output.request_records, sc->output.sample_records, &sc->slo) < 0)
        return sim_err_set(err, SIM_EINVAL, "output.request_records and output.sample_records must be >= 0");
    int rc;
    if (c->n_inst > 0 && (rc = sim_metrics_set_groups(c->metrics, sc->deployment.n_pools, c->inst_pool)) < 0)
        return sim_err_set(err, rc, rc == SIM_ENOMEM ? "out of memory for the pools' sample means"
                                                     : "the pools' sample means: bad pool index");
    return SIM_OK;
}

int sim_cluster_create_shared(const sim_scenario *sc, struct calib_table_cache *perf_cache, sim_cluster **out,
                              sim_err *err)
{
    sim_cluster *c = NULL;
    cluster_placement pl;
    cluster_af_pools af;
    int rc = cluster_alloc(sc, perf_cache, &c, err);
    if (rc < 0) goto fail;
    sc = &c->sc;
    if ((rc = placement_init(c, &pl, err)) < 0 || (rc = build_pools(c, &pl, &af, err)) < 0 ||
        (rc = metrics_limits(c, err)) < 0 || (rc = sim_cluster_attach_perf_db(c, err)) < 0 ||
        (rc = sim_cluster_admit_init(c, err)) < 0 || (rc = sim_cluster_as_init(c, err)) < 0 ||
        (rc = build_af(c, &pl, &af, err)) < 0 || (rc = sim_cluster_encode_init(c, err)) < 0 ||
        (sc->energy.enabled && (rc = enable_energy(c, err)) < 0) || (rc = build_network(c, &pl, err)) < 0 ||
        (rc = build_routing(c, err)) < 0)
        goto fail;
    if (sim_keymap_init(&c->sessions, 1024) < 0 ||
        (sim_workload_has_sessions(c->wl) && !(c->sess_stats = sim_session_stats_create()))) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
        goto fail;
    }
    c->total = sim_workload_total(c->wl);
    c->sample_ns = (sim_time)(sc->output.sample_interval_s * 1e9);
    if (c->sample_ns < 1) c->sample_ns = SIM_NS_PER_S;
    *out = c;
    return SIM_OK;
fail:
    sim_cluster_destroy(c);
    *out = NULL;
    return rc;
}

void sim_cluster_destroy(sim_cluster *c)
{
    if (!c) return;
    if (c->inst)
        for (int32_t i = 0; i < c->n_inst; i++) sim_instance_destroy(c->inst[i]);
    sim_net_destroy(c->net);
    sim_cluster_encode_destroy(c);
    sim_af_destroy(c->af);
    if (c->host_tier)
        for (int32_t nd = 0; nd < c->n_nodes; nd++) sim_kvtier_destroy(c->host_tier[nd]);
    free(c->host_tier);
    sim_kvtier_destroy(c->pool_tier);
    free(c->front_of);
    free(c->back_of);
    sim_loadtree_destroy(c->front_tree);
    sim_loadtree_destroy(c->back_tree);
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
    free(c->back_snap);
    if (c->approx)
        for (int32_t j = 0; j < c->n_front; j++) sim_prefix_destroy(c->approx[j]);
    free(c->approx);
    sim_keymap_fini(&c->sessions);
    free(c->sess_inst);
    free(c->sess_since);
    sim_router_destroy(c->back_router);
    for (int p = 0; p < SIM_MAX_POOLS; p++) {
        model_cost_destroy(c->costs[p]);
        model_cost_destroy(c->draft_costs[p]);
    }
    if (c->perf_cache_owned) calib_table_cache_free(c->perf_cache);
    calib_memo_free(c->perf_memo);
    model_gemm_split_memo_free(c->split_memo);
    sim_router_destroy(c->router);
    sim_workload_destroy(c->wl);
    sim_session_stats_destroy(c->sess_stats);
    sim_metrics_destroy(c->metrics);
    sim_cluster_admit_fini(c);
    sim_cluster_as_fini(c);
    sim_engine_destroy(c->eng);
    /* A run stopped by a failure leaves requests in flight: their prefix
     * keys are theirs (a freed slot's are NULL). */
    while (c->slabs) {
        req_slab *n = c->slabs->next;
        for (int i = 0; i < REQ_SLAB; i++) free(c->slabs->reqs[i].keys);
        free(c->slabs);
        c->slabs = n;
    }
    free(c);
}

void sim_cluster_set_trace(sim_cluster *c, struct sim_trace_out *t)
{
    c->trace = t;
    for (int32_t k = 0; k < c->n_inst; k++) {
        sim_instance_set_iteration_hook(c->inst[k], t ? on_iteration : NULL);
        if (t) sim_trace_out_instance(t, k, sim_role_name(c->sc.deployment.pools[c->inst_pool[k]].role));
    }
}

void sim_cluster_set_cost_fn(sim_cluster *c, double (*fn)(void *ctx, const model_batch *b), void *ctx)
{
    for (int32_t k = 0; k < c->n_inst; k++) sim_instance_set_cost_fn(c->inst[k], fn, ctx);
}

void sim_cluster_set_progress(sim_cluster *c, sim_progress_fn fn, void *ctx)
{
    c->progress = fn;
    c->progress_ctx = ctx;
}

/* energy.enabled: every pool's GPU needs its catalogue power figures, and
 * every instance accounts its iterations' busy time (the AF pipeline both
 * of its pools', sim_af; the encode pool's encoders theirs,
 * sim_cluster_encode.c). */
static int enable_energy(sim_cluster *c, sim_err *err)
{
    for (int32_t p = 0; p < c->sc.deployment.n_pools; p++) {
        const model_gpu *g = model_cost_gpu(c->costs[p]);
        if (!(g->power_max_w > 0))
            return sim_err_set(err, SIM_EINVAL,
                               "energy: GPU '%s' (deployment.pools.%d) has no power figures in its catalogue "
                               "entry (power.idle_w, power.max_w)",
                               g->name, (int)p);
    }
    for (int32_t k = 0; k < c->n_inst; k++) {
        if (c->inst_pool[k] == c->af_attn_pool) continue; /* priced by the AF pipeline */
        const model_gpu *g = model_cost_gpu(c->costs[c->inst_pool[k]]);
        int rc = sim_instance_enable_energy(c->inst[k], g->power_mem_share, err);
        if (rc < 0) return rc;
    }
    if (c->af)
        sim_af_enable_energy(c->af, model_cost_gpu(c->costs[c->af_attn_pool])->power_mem_share,
                             model_cost_gpu(c->costs[c->af_ffn_pool])->power_mem_share);
    return SIM_OK;
}

/* The busy GPU-seconds of pool p's GPUs at the full dynamic range. */
static double pool_energy_busy(const sim_cluster *c, int32_t p)
{
    if (c->af && (p == c->af_attn_pool || p == c->af_ffn_pool)) {
        sim_af_stats as;
        sim_af_stats_get(c->af, &as);
        return p == c->af_attn_pool ? as.attn_energy_gpu_s : as.ffn_energy_gpu_s;
    }
    const int32_t per = model_cost_gpus(c->costs[p]);
    double busy = 0;
    for (int32_t k = 0; k < c->n_inst; k++)
        if (c->inst_pool[k] == p) {
            sim_instance_stats st;
            sim_instance_stats_get(c->inst[k], &st);
            busy += st.energy_busy_s * per;
        }
    return busy;
}

static sim_power power_of(const model_gpu *g)
{
    return (sim_power){g->power_idle_w, g->power_max_w, g->power_mem_share, g->power_host_w};
}

/* The run's energy over its span (first arrival to last completion):
 * every GPU's idle power, each pool's iterations' dynamic part, and the
 * hosts' share (sim_energy.h). */
static void energy_summary(const sim_cluster *c, sim_summary *out)
{
    sim_energy_summary *e = &out->energy;
    memset(e, 0, sizeof *e);
    const double span = out->sim_time_s, host_node = c->sc.energy.host_w_per_node;
    for (int32_t p = 0; p < c->sc.deployment.n_pools; p++) {
        const sim_power pw = power_of(model_cost_gpu(c->costs[p]));
        const int32_t per = model_cost_gpus(c->costs[p]);
        sim_energy_add_pool(e, &pw, c->sc.deployment.pools[p].instances * per, span, pool_energy_busy(c, p),
                            host_node > 0);
    }
    if (c->enc_n > 0) { /* the encode pool's one-GPU encoders */
        const sim_power pw = power_of(model_cost_gpu(c->costs[c->enc_cost_pool]));
        sim_energy_add_pool(e, &pw, c->enc_n, span, c->enc_energy_gpu_s, host_node > 0);
    }
    const int32_t gpn = sim_hardware_gpus_per_node(&c->sc.hardware);
    sim_energy_finish(e, span, (c->n_gpus + gpn - 1) / gpn, host_node, out->requests_completed,
                      out->input_tokens_per_s * span, out->output_tokens_per_s * span);
}

/* One worker pool's summary over the instances that have it: `input` the
 * API-server workers (scheduler.tokenizer_workers, not on decode pools),
 * else the detokenise-and-stream workers (scheduler.detokenizer_workers). */
static void workers_summary(const sim_cluster *c, int input, double sim_time_s, sim_workers_summary *w)
{
    memset(w, 0, sizeof *w);
    sim_time in_wait = 0, in_svc = 0; /* the input workers count whole ns */
    double out_wait = 0, out_svc = 0;
    for (int32_t k = 0; k < c->n_inst; k++) {
        const sim_pool_cfg *pc = &c->sc.deployment.pools[c->inst_pool[k]];
        const int32_t n = input ? pc->scheduler.tokenizer_workers : pc->scheduler.detokenizer_workers;
        if (n <= 0 || (input && pc->role == SIM_ROLE_DECODE)) continue;
        sim_instance_stats st;
        sim_instance_stats_get(c->inst[k], &st);
        w->enabled = 1;
        w->workers += n;
        w->jobs += input ? st.fe_jobs : st.dt_jobs;
        w->tokens += input ? 0 : st.dt_tokens;
        in_wait += st.fe_wait_ns;
        in_svc += st.fe_service_ns;
        out_wait += st.dt_wait_ns;
        out_svc += st.dt_service_ns;
    }
    if (!w->enabled) return;
    const double wait = input ? (double)in_wait : out_wait, svc = input ? (double)in_svc : out_svc;
    w->wait_ms = w->jobs ? wait / (double)w->jobs * 1e-6 : 0;
    w->service_ms = w->jobs ? svc / (double)w->jobs * 1e-6 : 0;
    w->utilization = sim_time_s > 0 ? svc * 1e-9 / (w->workers * sim_time_s) : 0;
}

/* Load imbalance across the instances the router chooses among: CV of the
 * tokens each served (prompt where it was prefilled, plus its output), into
 * *cv. 0 or SIM_ENOMEM. */
static int front_load_cv(const sim_cluster *c, double *cv, sim_err *err)
{
    *cv = 0;
    if (c->n_front < 2) return 0;
    double *load = calloc((size_t)c->n_inst, sizeof *load);
    if (!load) return sim_err_set(err, SIM_ENOMEM, "out of memory for the load of %d instances", c->n_inst);
    sim_metrics_routed_load(c->metrics, load);
    /* Autoscaled: over the instances that served at all (the others were
     * never started). */
    double sum = 0, sq = 0;
    int32_t n = 0;
    for (int32_t j = 0; j < c->n_front; j++)
        if (!c->as || load[c->front[j]] > 0) {
            sum += load[c->front[j]];
            n++;
        }
    double mean = n > 0 ? sum / n : 0;
    for (int32_t j = 0; j < c->n_front; j++)
        if (!c->as || load[c->front[j]] > 0) sq += (load[c->front[j]] - mean) * (load[c->front[j]] - mean);
    free(load);
    *cv = mean > 0 ? sqrt(sq / n) / mean : 0;
    return 0;
}

/* Per-pool means over the instance samples (every one, kept or not). */
static void pool_summaries(const sim_cluster *c, sim_summary *out)
{
    out->n_pools = c->sc.deployment.n_pools;
    for (int32_t p = 0; p < out->n_pools; p++) {
        const sim_pool_cfg *pc = &c->sc.deployment.pools[p];
        snprintf(out->pools[p].role, sizeof out->pools[p].role, "%s", sim_role_name(pc->role));
        out->pools[p].instances = pc->instances;
        out->pools[p].gpus = pc->instances * model_cost_gpus(c->costs[p]);
        sim_metrics_group_means(c->metrics, p, &out->pools[p].utilization, &out->pools[p].kv_occupancy,
                                &out->pools[p].waiting, &out->pools[p].mean_batch);
        out->pools[p].max_seqs = pc->scheduler.max_seqs;
    }
}

int sim_cluster_run(sim_cluster *c, sim_summary *out, sim_err *err)
{
    double t0 = sim_wall_s();
    /* Closed-loop clients (of every closed-loop class with classes) send
     * their first requests at t = 0; open-loop arrivals (of every open-loop
     * class) are pulled one at a time. Classes may mix both. */
    int32_t clients = sim_workload_clients(c->wl);
    for (int32_t i = 0; i < clients && !c->arrivals_done; i++) client_next(c->eng, c, (uint64_t)i);
    if (sim_workload_has_open(c->wl) && !c->arrivals_done) pull_next_arrival(c);
    sim_engine_after(c->eng, c->sample_ns, on_sample, c, 0);
    if (c->snap) sim_cluster_on_snapshot(c->eng, c, 0);
    if (c->as) sim_cluster_as_start(c);
    sim_engine_run(c->eng, SIM_TIME_MAX);
    take_samples(c);
    const char *why = NULL;
    int frc = sim_engine_failed(c->eng, &why);
    if (frc < 0)
        return sim_err_set(err, frc, "the run failed at t=%.3f s (%lld requests issued, %lld in flight): %s",
                           (double)sim_engine_now(c->eng) / SIM_NS_PER_S, (long long)c->issued,
                           (long long)c->in_flight, why);
    if (!c->overloaded) {
        SIM_ASSERT(c->in_flight == 0, sim_engine_now(c->eng));
    }
    int rc = sim_metrics_summarize(c->metrics, &c->sc.slo, c->n_gpus, out, err);
    if (rc < 0) return rc;
    out->wall_time_s = sim_wall_s() - t0;
    out->events = sim_engine_events_fired(c->eng);
    out->end_s = (double)sim_engine_now(c->eng) / SIM_NS_PER_S;
    out->n_gpus = c->n_gpus;
    out->requests_rejected = c->rejected;
    if ((rc = sim_cluster_class_summaries(c, out, err)) < 0) return rc;
    out->client_pool = (int32_t)c->conn_max;
    out->client_waited = c->conn_waited;
    out->client_wait_mean_ms = c->conn_waited > 0 ? c->conn_wait_ns / (double)c->conn_waited / 1e6 : 0;
    pool_summaries(c, out);
    if (c->sc.energy.enabled) energy_summary(c, out);
    workers_summary(c, 1, out->sim_time_s, &out->frontend);
    workers_summary(c, 0, out->sim_time_s, &out->detok);
    sim_cluster_encode_summary(c, out);
    if ((rc = front_load_cv(c, &out->load_cv, err)) < 0) return rc;
    if (c->as) sim_cluster_as_summary(c, out);
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
    if (c->sess_stats) sim_session_stats_summarize(c->sess_stats, &out->sessions);
    out->overloaded = c->overloaded;
    snprintf(out->overload_reason, sizeof out->overload_reason, "%s", c->overload_reason);
    if (c->progress) c->progress(c->progress_ctx, c->completed, c->total,
                                 (double)sim_engine_now(c->eng) / SIM_NS_PER_S);
    return SIM_OK;
}

const sim_metrics *sim_cluster_metrics(const sim_cluster *c) { return c->metrics; }

int32_t sim_cluster_n_pools(const sim_cluster *c) { return c->sc.deployment.n_pools; }

const model_cost *sim_cluster_pool_draft_cost(const sim_cluster *c, int32_t pool)
{
    return pool >= 0 && pool < c->sc.deployment.n_pools && pool < SIM_MAX_POOLS ? c->draft_costs[pool] : NULL;
}

const sim_spec_cfg *sim_cluster_pool_spec(const sim_cluster *c, int32_t pool)
{
    return sim_cluster_pool_draft_cost(c, pool) ? &c->sc.deployment.pools[pool].scheduler.spec : NULL;
}

const model_cost *sim_cluster_pool_cost(const sim_cluster *c, int32_t pool)
{
    return pool >= 0 && pool < c->sc.deployment.n_pools && pool < SIM_MAX_POOLS ? c->costs[pool] : NULL;
}

int32_t sim_cluster_instance_pool(const sim_cluster *c, int32_t instance)
{
    return instance >= 0 && instance < c->n_inst ? c->inst_pool[instance] : -1;
}

int32_t sim_cluster_pool_graph_batch(const sim_cluster *c, int32_t pool, int32_t n)
{
    for (int32_t i = 0; i < c->n_inst; i++)
        if (c->inst_pool[i] == pool) return sim_instance_graph_batch(c->inst[i], n);
    return n;
}

int64_t sim_cluster_pool_kv_tokens(const sim_cluster *c, int32_t pool)
{
    for (int32_t i = 0; i < c->n_inst; i++)
        if (c->inst_pool[i] == pool) {
            sim_instance_stats s;
            sim_instance_stats_get(c->inst[i], &s);
            return s.kv_blocks_total * c->sc.deployment.pools[pool].scheduler.block_tokens;
        }
    return 0;
}

void sim_cluster_state_get(const sim_cluster *c, sim_cluster_state *out)
{
    memset(out, 0, sizeof *out);
    out->issued = c->issued;
    out->completed = c->completed;
    out->rejected = c->rejected;
    out->shed = c->shed;
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
    /* "auto": the checkpoint's formats, named by the main one. */
    const char *wd = c->sc.dtype != SIM_DTYPE_AUTO ? sim_dtype_name(c->sc.dtype)
                                                   : model_dtype_name((model_dtype)model_spec_main_dtype(&c->model));
    size_t off = (size_t)snprintf(buf, len, "%s on %s, %s weights, %d GPU(s):", c->model.name, c->gpu.name, wd,
                                  c->n_gpus);
    for (int32_t p = 0; p < c->sc.deployment.n_pools && off < len; p++) {
        const sim_pool_cfg *pc = &c->sc.deployment.pools[p];
        const sim_parallel_cfg *pl = &pc->parallel;
        off += (size_t)snprintf(buf + off, len - off, "%s %d x %s tp=%d", p ? ";" : "", pc->instances,
                                sim_role_name(pc->role), pl->tp);
        if (pc->autoscale.enabled && off < len)
            off += (size_t)snprintf(buf + off, len - off, " (autoscaled %d..%d by %s, starting at %d)",
                                    pc->autoscale.min, pc->autoscale.max,
                                    sim_autoscale_metric_name(pc->autoscale.metric), c->as_initial[p]);
        /* Only the degrees that differ from 1, so plain layouts read plainly. */
        const char *names[] = {"pp", "dp", "ep", "dcp", "sp"};
        const int32_t deg[] = {pl->pp, pl->dp, pl->ep, pl->dcp, pl->sp};
        for (int i = 0; i < 5 && off < len; i++)
            if (deg[i] > 1) off += (size_t)snprintf(buf + off, len - off, " %s=%d", names[i], deg[i]);
        const sim_spec_cfg *sp = &pc->scheduler.spec;
        if (sp->draft_tokens > 0 && off < len)
            off += (size_t)snprintf(buf + off, len - off, " speculative %s k=%d (%.2f tokens/step expected)",
                                    sp->method == SIM_SPEC_MTP ? "mtp" : sp->draft_model, sp->draft_tokens,
                                    sim_spec_expected_tokens(sp));
    }
    if (off < len)
        off += (size_t)snprintf(buf + off, len - off, ", KV %lld tokens/instance", (long long)c->kv_tokens_per_inst);
    if (off < len)
        snprintf(buf + off, len - off, ", latencies: %s%s", c->perf_db_path[0] ? "perf-db " : "analytic roofline",
                 c->perf_db_path);
}
