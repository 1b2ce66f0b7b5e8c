/* sim_cluster — see sim_cluster.h. Arrivals are pulled lazily from the
 * workload one at a time (one pending arrival event), so memory follows the
 * requests in flight; finished requests go back to a free list. */
#include "sim_cluster.h"

#include "model_catalog.h"
#include "model_cost.h"
#include "sim_engine.h"
#include "sim_instance.h"
#include "sim_request.h"
#include "sim_router.h"
#include "sim_workload.h"

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
    sim_router_view *views;
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

/* Routes one request spec into an instance; rejected ones are counted. */
static void dispatch(sim_cluster *c, const sim_request_spec *spec, int32_t client)
{
    c->issued++;
    int32_t k = sim_router_pick(c->router, spec, c->views, c->n_inst);
    SIM_ASSERT(k >= 0 && k < c->n_inst, sim_engine_now(c->eng));
    if (!sim_instance_fits(c->inst[k], spec->input_tokens, spec->output_tokens)) {
        /* Longer than the KV cache can ever hold: a real engine rejects it. */
        c->rejected++;
        if (client >= 0)
            sim_engine_after(c->eng, (sim_time)(c->sc.workload.arrival.think_time_s * 1e9),
                             client_next, c, (uint64_t)client);
        return;
    }
    sim_req *r = req_alloc(c);
    SIM_ASSERT(r != NULL, sim_engine_now(c->eng));
    r->spec = *spec;
    r->client = client;
    area_advance(c);
    c->in_flight++;
    sim_instance_submit(c->inst[k], r);
}

static void on_arrival(sim_engine *eng, void *ctx, uint64_t arg);

static void pull_next_arrival(sim_cluster *c)
{
    sim_request_spec spec;
    if (!sim_workload_next(c->wl, &spec)) {
        c->arrivals_done = 1;
        maybe_done(c);
        return;
    }
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
    if (!sim_workload_sample(c->wl, sim_engine_now(eng), &spec)) {
        c->arrivals_done = 1;
        maybe_done(c);
        return;
    }
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
    req_free(c, r);
    if (client >= 0 && !c->arrivals_done)
        sim_engine_after(c->eng, (sim_time)(c->sc.workload.arrival.think_time_s * 1e9), client_next,
                         c, (uint64_t)client);
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

/* ---- build -------------------------------------------------------------- */

static int parse_dtype(const char *s, model_dtype *out, const char *key, sim_err *err)
{
    if (strcmp(s, "bf16") == 0) *out = MODEL_DTYPE_BF16;
    else if (strcmp(s, "fp8") == 0) *out = MODEL_DTYPE_FP8;
    else return sim_err_set(err, SIM_EINVAL, "%s: expected bf16 or fp8, got '%s'", key, s);
    return SIM_OK;
}

int sim_cluster_create(const sim_scenario *sc, sim_cluster **out, sim_err *err)
{
    int rc;
    *out = NULL;
    if (sc->deployment.mode != SIM_MODE_COLOCATED)
        return sim_err_set(err, SIM_ENOTSUP,
                           "deployment.mode '%s' is not implemented in this version of servesim "
                           "(only 'colocated' runs; PD and AF disaggregation are planned)",
                           sim_mode_name(sc->deployment.mode));
    if (sc->cache.enabled)
        return sim_err_set(err, SIM_ENOTSUP, "cache.enabled: prefix caching is not implemented in this "
                                              "version of servesim");
    if (strcmp(sc->workload.prefix.kind, "none") != 0)
        return sim_err_set(err, SIM_ENOTSUP, "workload.prefix.kind '%s' is not implemented in this version "
                                              "of servesim", sc->workload.prefix.kind);
    sim_cluster *c = calloc(1, sizeof *c);
    if (!c) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    c->sc = *sc;
    if ((rc = model_catalog_model(sc->model, &c->model, err)) < 0) goto fail;
    if ((rc = model_catalog_gpu(sc->hardware.gpu, &c->gpu, err)) < 0) goto fail;
    model_layout base = {.tp = 1, .pp = 1, .gpus_per_node = sc->hardware.gpus_per_node};
    if ((rc = parse_dtype(sc->dtype, &base.dtype, "dtype", err)) < 0) goto fail;
    if ((rc = parse_dtype(sc->kv_dtype, &base.kv_dtype, "kv_dtype", err)) < 0) goto fail;

    for (int32_t p = 0; p < sc->deployment.n_pools; p++) c->n_inst += sc->deployment.pools[p].instances;
    c->inst = calloc((size_t)c->n_inst, sizeof *c->inst);
    c->views = calloc((size_t)c->n_inst, sizeof *c->views);
    c->eng = sim_engine_create();
    c->metrics = sim_metrics_create(c->n_inst);
    if (!c->inst || !c->views || !c->eng || !c->metrics) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory building the cluster");
        goto fail;
    }
    sim_instance_hooks hooks = {on_finish, c};
    int32_t k = 0;
    for (int32_t p = 0; p < sc->deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &sc->deployment.pools[p];
        model_gpu pool_gpu = c->gpu;
        if (pc->gpu[0] && (rc = model_catalog_gpu(pc->gpu, &pool_gpu, err)) < 0) goto fail;
        model_layout l = base;
        l.tp = pc->parallel.tp;
        l.pp = pc->parallel.pp;
        l.overhead_s = pc->scheduler.overhead_us * 1e-6;
        l.overhead_per_seq_s = pc->scheduler.overhead_per_seq_us * 1e-6;
        if ((rc = model_cost_create(&c->model, &pool_gpu, &l, &c->costs[p], err)) < 0) {
            sim_err_wrap(err, rc, "deployment.pools.%d", p);
            goto fail;
        }
        int64_t kv_tokens = 0;
        rc = model_cost_kv_capacity_tokens(c->costs[p], pc->scheduler.gpu_mem_util,
                                           pc->scheduler.reserve_gb * 1e9, &kv_tokens, err);
        if (rc < 0) {
            sim_err_wrap(err, rc, "deployment.pools.%d", p);
            goto fail;
        }
        if (p == 0) c->kv_tokens_per_inst = kv_tokens;
        c->n_gpus += pc->instances * model_cost_gpus(c->costs[p]);
        for (int32_t i = 0; i < pc->instances; i++, k++) {
            rc = sim_instance_create(c->eng, k, &pc->scheduler, c->costs[p], kv_tokens, c->metrics,
                                     hooks, &c->inst[k], err);
            if (rc < 0) {
                sim_err_wrap(err, rc, "deployment.pools.%d", p);
                goto fail;
            }
            sim_instance_publish_view(c->inst[k], &c->views[k]);
        }
    }
    if ((rc = sim_workload_create(&sc->workload, sc->seed, &c->wl, err)) < 0) goto fail;
    if ((rc = sim_router_create(&sc->routing, sc->seed, &c->router, err)) < 0) goto fail;
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
    free(c->inst);
    free(c->views);
    for (int p = 0; p < SIM_MAX_POOLS; p++) model_cost_destroy(c->costs[p]);
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
    sim_engine_run(c->eng, SIM_TIME_MAX);
    take_samples(c);
    if (!c->overloaded) {
        SIM_ASSERT(c->in_flight == 0, sim_engine_now(c->eng));
    }
    int rc = sim_metrics_summarize(c->metrics, &c->sc.slo, c->n_gpus, out, err);
    if (rc < 0) return rc;
    out->wall_time_s = wall_now() - t0;
    out->events = sim_engine_events_fired(c->eng);
    out->n_gpus = c->n_gpus;
    out->requests_rejected = c->rejected;
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
    }
}

void sim_cluster_describe(const sim_cluster *c, char *buf, size_t len)
{
    const sim_pool_cfg *p = &c->sc.deployment.pools[0];
    snprintf(buf, len, "%s on %s, %d instance(s) tp=%d pp=%d, %d GPU(s), KV %lld tokens/instance, %s weights",
             c->model.name, c->gpu.name, c->n_inst, p->parallel.tp, p->parallel.pp, c->n_gpus,
             (long long)c->kv_tokens_per_inst, c->sc.dtype);
}
