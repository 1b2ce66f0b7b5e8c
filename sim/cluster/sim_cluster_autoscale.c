/* sim_cluster_autoscale — instances of autoscaled pools coming and going
 * (deployment.pools.*.autoscale; the policy itself is sim_autoscale.h).
 *
 * The cluster builds every pool that autoscales at its max, each instance
 * on GPUs of its own, and keeps a state per instance: off (holds no GPU),
 * starting (holds its GPUs while the weights load and the engine starts),
 * active (routed to) or draining (holds its GPUs and finishes what it has,
 * routed nothing new). The routers choose among the active instances only:
 * while some front (or decode) instance is not active, the views of the
 * active ones, in instance order, are copied for each pick (O(active)); with
 * all active the pick is the plain one. A draining instance leaves as soon
 * as it holds nothing: no request waiting, running, handed to it (pd) or
 * holding KV there, no outstanding token. Metric samples and GPU-hours come
 * from the same states: pools' samples skip off and starting instances, and
 * a pool's GPU-hours integrate the instances it holds. See
 * sim_cluster_impl.h for the entry points; allocation failures return
 * SIM_ENOMEM from sim_cluster_as_init, nothing allocates after it. */
#include "sim_cluster_impl.h"
#include "sim_autoscale.h"

enum { AS_OFF = 0, AS_STARTING = 1, AS_ACTIVE = 2, AS_DRAINING = 3 };

typedef struct {
    int on;                    /* the pool autoscales */
    sim_autoscale *policy;
    sim_autoscale_cfg cfg;
    int32_t first, count;      /* its instances: first .. first + count - 1 */
    int32_t starting, active, draining;
    sim_time cold_ns;
    sim_time last_decision;
    int decided;
    int64_t slo_good, slo_done; /* requests finished since the last sample */
    sim_slo_cfg slo;           /* the bounds the pool answers for (metric slo) */
    double held_area;          /* ∫ instances held dt, instance·ns */
    sim_time area_last;
    sim_as_pool_summary out;   /* counters as they happen */
} as_pool;

struct sim_cluster_as {
    int8_t *state;             /* per instance */
    sim_time *since;           /* utilization: start of the instance's unsampled time */
    sim_time *busy_last;       /* its busy_ns then */
    int32_t *act_front, *act_back; /* front / back indices of the active instances, ascending */
    int32_t n_act_front, n_act_back;
    sim_router_view *cviews;   /* the active instances' views handed to a router */
    as_pool pools[SIM_MAX_POOLS];
    int32_t n_events, events_dropped; /* the run's timeline, every pool's, in time order */
    sim_as_event events[SIM_AUTOSCALE_MAX_EVENTS];
};

static int32_t held(const as_pool *P) { return P->starting + P->active + P->draining; }

static void area_to(as_pool *P, sim_time now)
{
    P->held_area += (double)held(P) * (double)(now - P->area_last);
    P->area_last = now;
}

static void rebuild_routable(sim_cluster *c)
{
    sim_cluster_as *a = c->as;
    a->n_act_front = a->n_act_back = 0;
    for (int32_t j = 0; j < c->n_front; j++)
        if (a->state[c->front[j]] == AS_ACTIVE) a->act_front[a->n_act_front++] = j;
    for (int32_t j = 0; j < c->n_back; j++)
        if (a->state[c->back[j]] == AS_ACTIVE) a->act_back[a->n_act_back++] = j;
}

/* Records an event with the counts after it. */
static void log_event(sim_cluster *c, as_pool *P, int kind, int32_t k, double value)
{
    sim_cluster_as *a = c->as;
    sim_as_pool_summary *o = &P->out;
    int32_t h = held(P);
    if (h > o->peak_instances) o->peak_instances = h;
    if (h < o->least_instances) o->least_instances = h;
    o->n_events++;
    if (a->n_events >= SIM_AUTOSCALE_MAX_EVENTS) {
        a->events_dropped++;
        return;
    }
    a->events[a->n_events++] = (sim_as_event){.t_s = (double)sim_engine_now(c->eng) / SIM_NS_PER_S,
                                              .value = value,
                                              .instance = k,
                                              .kind = (int16_t)kind,
                                              .held = (int16_t)h,
                                              .serving = (int16_t)P->active,
                                              .pool = (int16_t)c->inst_pool[k]};
}

/* Instance k holds nothing any more. */
static int is_empty(const sim_cluster *c, int32_t k)
{
    sim_instance_stats st;
    sim_instance_stats_get(c->inst[k], &st);
    return st.outstanding_tokens == 0 && st.waiting == 0 && st.running == 0 && st.kv_pending == 0 && st.held == 0 &&
           st.kv_blocks_used == 0;
}

static void leave(sim_cluster *c, int32_t k)
{
    as_pool *P = &c->as->pools[c->inst_pool[k]];
    sim_time now = sim_engine_now(c->eng);
    area_to(P, now);
    c->as->state[k] = AS_OFF;
    P->draining--;
    log_event(c, P, SIM_AS_EV_LEAVE, k, 0);
}

void sim_cluster_as_touched(sim_cluster *c, int32_t k)
{
    if (k >= 0 && k < c->n_inst && c->as->state[k] == AS_DRAINING && is_empty(c, k)) leave(c, k);
}

static void on_ready(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    sim_cluster_as *a = c->as;
    int32_t k = (int32_t)arg;
    as_pool *P = &a->pools[c->inst_pool[k]];
    sim_time now = sim_engine_now(eng);
    SIM_ASSERT(a->state[k] == AS_STARTING, now);
    area_to(P, now);
    a->state[k] = AS_ACTIVE;
    P->starting--;
    P->active++;
    sim_instance_stats st;
    sim_instance_stats_get(c->inst[k], &st);
    a->since[k] = now;
    a->busy_last[k] = st.busy_ns;
    rebuild_routable(c);
    log_event(c, P, SIM_AS_EV_READY, k, 0);
}

/* The pool's sample now, as numerator and denominator (sim_autoscale.h). */
static void sample(sim_cluster *c, int32_t p, double *num, double *den)
{
    sim_cluster_as *a = c->as;
    as_pool *P = &a->pools[p];
    sim_time now = sim_engine_now(c->eng);
    *num = *den = 0;
    if (P->cfg.metric == SIM_AS_SLO) {
        *num = (double)P->slo_good;
        *den = (double)P->slo_done;
        P->slo_good = P->slo_done = 0;
        return;
    }
    for (int32_t k = P->first; k < P->first + P->count; k++) {
        if (a->state[k] != AS_ACTIVE) continue;
        sim_instance_stats st;
        sim_instance_stats_get(c->inst[k], &st);
        switch (P->cfg.metric) {
        case SIM_AS_QUEUE:
            *num += (double)(st.waiting + st.kv_pending);
            *den += 1;
            break;
        case SIM_AS_CONCURRENCY:
            *num += (double)(st.waiting + st.running + st.kv_pending);
            *den += (double)c->sc.deployment.pools[p].scheduler.max_seqs;
            break;
        case SIM_AS_UTILIZATION:
            *num += (double)(st.busy_ns - a->busy_last[k]);
            *den += (double)(now - a->since[k]);
            a->busy_last[k] = st.busy_ns;
            a->since[k] = now;
            break;
        case SIM_AS_KV:
            *num += (double)st.kv_blocks_used;
            *den += (double)st.kv_blocks_total;
            break;
        case SIM_AS_SLO:
            break;
        }
    }
}

static void scale_up(sim_cluster *c, int32_t p, double v)
{
    sim_cluster_as *a = c->as;
    as_pool *P = &a->pools[p];
    int32_t n = P->cfg.step, room = P->cfg.max - held(P);
    if (room <= 0) {
        P->out.up_blocked++;
        return;
    }
    if (n > room) n = room;
    sim_time now = sim_engine_now(c->eng);
    area_to(P, now);
    for (int32_t k = P->first; k < P->first + P->count && n > 0; k++) {
        if (a->state[k] != AS_OFF) continue;
        a->state[k] = AS_STARTING;
        P->starting++;
        n--;
        log_event(c, P, SIM_AS_EV_START, k, v);
        if (!sim_engine_after(c->eng, P->cold_ns, on_ready, c, (uint64_t)k)) return; /* the engine stops the run */
    }
    P->out.scale_ups++;
    P->last_decision = now;
    P->decided = 1;
}

/* Drains the active instance with the fewest outstanding tokens (the last
 * of equals), never the pool's last active one nor below min. */
static void scale_down(sim_cluster *c, int32_t p, double v)
{
    sim_cluster_as *a = c->as;
    as_pool *P = &a->pools[p];
    if (P->active < 2 || P->active + P->starting - 1 < P->cfg.min) return;
    int32_t pick = -1;
    int64_t best = 0;
    for (int32_t k = P->first; k < P->first + P->count; k++) {
        if (a->state[k] != AS_ACTIVE) continue;
        sim_instance_stats st;
        sim_instance_stats_get(c->inst[k], &st);
        if (pick < 0 || st.outstanding_tokens <= best) {
            pick = k;
            best = st.outstanding_tokens;
        }
    }
    sim_time now = sim_engine_now(c->eng);
    area_to(P, now);
    a->state[pick] = AS_DRAINING;
    P->active--;
    P->draining++;
    rebuild_routable(c);
    log_event(c, P, SIM_AS_EV_DRAIN, pick, v);
    P->out.scale_downs++;
    P->last_decision = now;
    P->decided = 1;
    sim_cluster_as_touched(c, pick);
}

static void on_tick(sim_engine *eng, void *ctx, uint64_t arg)
{
    sim_cluster *c = ctx;
    int32_t p = (int32_t)arg;
    as_pool *P = &c->as->pools[p];
    sim_time now = sim_engine_now(eng);
    double num, den, v;
    sample(c, p, &num, &den);
    sim_autoscale_push(P->policy, now, num, den);
    int cooling = P->decided && (double)(now - P->last_decision) < P->cfg.cooldown_s * 1e9;
    if (!cooling && sim_autoscale_value(P->policy, now, &v)) {
        int dir = sim_autoscale_direction(P->policy, v);
        if (dir > 0) scale_up(c, p, v);
        else if (dir < 0) scale_down(c, p, v);
    }
    if (!sim_cluster_run_over(c)) sim_engine_after(eng, (sim_time)llround(P->cfg.interval_s * 1e9), on_tick, c, arg);
}

/* metric slo: each finished request counts for the pool that served it
 * (pd: its prefill pool for TTFT, its decode pool for TPOT). */
static void observe(void *ctx, const sim_req_record *r)
{
    sim_cluster *c = ctx;
    const int32_t ks[2] = {r->instance, r->prefill_instance};
    for (int i = 0; i < 2; i++) {
        int32_t k = ks[i];
        if (k < 0 || k >= c->n_inst || (i == 1 && k == r->instance)) continue;
        as_pool *P = &c->as->pools[c->inst_pool[k]];
        if (!P->on || P->cfg.metric != SIM_AS_SLO) continue;
        P->slo_done++;
        P->slo_good += sim_metrics_request_good(r, &P->slo);
    }
}

int sim_cluster_as_init(sim_cluster *c, sim_err *err)
{
    int any = 0, slo = 0;
    for (int32_t p = 0; p < c->sc.deployment.n_pools; p++) any |= c->sc.deployment.pools[p].autoscale.enabled;
    if (!any) return SIM_OK;
    sim_cluster_as *a = calloc(1, sizeof *a);
    size_t n = (size_t)c->n_inst;
    if (!a) return sim_err_set(err, SIM_ENOMEM, "out of memory building the autoscaler");
    c->as = a;
    a->state = calloc(n, sizeof *a->state);
    a->since = calloc(n, sizeof *a->since);
    a->busy_last = calloc(n, sizeof *a->busy_last);
    a->act_front = calloc(n, sizeof *a->act_front);
    a->act_back = calloc(n, sizeof *a->act_back);
    a->cviews = calloc(n, sizeof *a->cviews);
    if (!a->state || !a->since || !a->busy_last || !a->act_front || !a->act_back || !a->cviews)
        return sim_err_set(err, SIM_ENOMEM, "out of memory building the autoscaler");
    int32_t k = 0;
    for (int32_t p = 0; p < c->sc.deployment.n_pools; p++) {
        const sim_pool_cfg *pc = &c->sc.deployment.pools[p];
        as_pool *P = &a->pools[p];
        sim_as_pool_summary *o = &P->out;
        P->first = k;
        P->count = pc->instances;
        P->on = pc->autoscale.enabled;
        P->cfg = pc->autoscale;
        const int32_t initial = P->on ? c->as_initial[p] : pc->instances;
        for (int32_t i = 0; i < pc->instances; i++, k++) a->state[k] = i < initial ? AS_ACTIVE : AS_OFF;
        P->active = initial;
        o->pool = p;
        o->enabled = P->on;
        snprintf(o->role, sizeof o->role, "%s", sim_role_name(pc->role));
        o->gpus_per_instance = model_cost_gpus(c->costs[p]);
        o->initial = initial;
        o->peak_instances = o->least_instances = initial;
        o->min = o->max = pc->instances;
        if (!P->on) continue;
        o->min = P->cfg.min;
        o->max = P->cfg.max;
        snprintf(o->metric, sizeof o->metric, "%s", sim_autoscale_metric_name(P->cfg.metric));
        sim_autoscale_thresholds(&P->cfg, &o->up_threshold, &o->down_threshold);
        o->load_s = model_cost_weight_bytes_per_gpu(c->costs[p]) / (P->cfg.storage_gbs * 1e9);
        o->cold_start_s = sim_autoscale_cold_start_s(&P->cfg, model_cost_weight_bytes_per_gpu(c->costs[p]));
        P->cold_ns = (sim_time)llround(o->cold_start_s * 1e9);
        if (!(P->policy = sim_autoscale_create(&P->cfg)))
            return sim_err_set(err, SIM_ENOMEM, "out of memory building the autoscaler");
        if (P->cfg.metric == SIM_AS_SLO) {
            slo = 1;
            const sim_slo_cfg *s = &c->sc.slo;
            P->slo = (sim_slo_cfg){0};
            if (pc->role != SIM_ROLE_DECODE) P->slo.ttft_ms = s->ttft_ms;
            if (pc->role != SIM_ROLE_PREFILL) P->slo.tpot_ms = s->tpot_ms;
            if (pc->role == SIM_ROLE_COLOCATED) P->slo.e2e_ms = s->e2e_ms;
        }
    }
    rebuild_routable(c);
    if (slo) sim_metrics_set_observer(c->metrics, observe, c);
    return SIM_OK;
}

void sim_cluster_as_fini(sim_cluster *c)
{
    sim_cluster_as *a = c->as;
    if (!a) return;
    for (int p = 0; p < SIM_MAX_POOLS; p++) sim_autoscale_destroy(a->pools[p].policy);
    free(a->state);
    free(a->since);
    free(a->busy_last);
    free(a->act_front);
    free(a->act_back);
    free(a->cviews);
    free(a);
    c->as = NULL;
}

void sim_cluster_as_start(sim_cluster *c)
{
    for (int32_t p = 0; p < c->sc.deployment.n_pools; p++)
        if (c->as->pools[p].on)
            sim_engine_after(c->eng, (sim_time)llround(c->as->pools[p].cfg.interval_s * 1e9), on_tick, c,
                             (uint64_t)p);
}

int sim_cluster_as_sampled(const sim_cluster *c, int32_t k)
{
    return c->as->state[k] == AS_ACTIVE || c->as->state[k] == AS_DRAINING;
}

int sim_cluster_as_routable_front(const sim_cluster *c, int32_t j)
{
    return c->as->state[c->front[j]] == AS_ACTIVE;
}

/* A pick among the active instances of a set (front or back). */
static int32_t pick_active(sim_cluster *c, sim_router *router, const sim_request_spec *spec,
                           const sim_router_view *views, int32_t n, const int32_t *act, int32_t n_act)
{
    if (n_act == n) return sim_router_pick(router, spec, views, n);
    for (int32_t i = 0; i < n_act; i++) c->as->cviews[i] = views[act[i]];
    int32_t i = sim_router_pick(router, spec, c->as->cviews, n_act);
    return act[i];
}

int32_t sim_cluster_as_pick_front(sim_cluster *c, const sim_request_spec *spec, const sim_router_view *views)
{
    return pick_active(c, c->router, spec, views, c->n_front, c->as->act_front, c->as->n_act_front);
}

int32_t sim_cluster_as_pick_back(sim_cluster *c, const sim_request_spec *spec, const sim_router_view *views)
{
    return pick_active(c, c->back_router, spec, views, c->n_back, c->as->act_back, c->as->n_act_back);
}

void sim_cluster_as_summary(sim_cluster *c, sim_summary *out)
{
    sim_autoscale_summary *s = &out->autoscale;
    sim_time end = sim_engine_now(c->eng);
    const double hours = (double)end / SIM_NS_PER_S / 3600;
    memset(s, 0, sizeof *s);
    s->enabled = 1;
    s->span_s = (double)end / SIM_NS_PER_S;
    s->n_pools = c->sc.deployment.n_pools;
    for (int32_t p = 0; p < s->n_pools; p++) {
        as_pool *P = &c->as->pools[p];
        area_to(P, end);
        sim_as_pool_summary *o = &s->pools[p];
        *o = P->out;
        const double g = o->gpus_per_instance;
        o->fixed_gpu_hours = o->max * g * hours;
        o->gpu_hours = P->on ? P->held_area / SIM_NS_PER_S / 3600 * g : o->fixed_gpu_hours;
        o->mean_instances = end > 0 ? (P->on ? P->held_area / (double)end : o->max) : o->initial;
        s->gpu_hours += o->gpu_hours;
        s->fixed_gpu_hours += o->fixed_gpu_hours;
    }
    s->saved_fraction = s->fixed_gpu_hours > 0 ? 1 - s->gpu_hours / s->fixed_gpu_hours : 0;
    s->n_events = c->as->n_events;
    s->events_dropped = c->as->events_dropped;
    memcpy(s->events, c->as->events, (size_t)s->n_events * sizeof *s->events);
}
