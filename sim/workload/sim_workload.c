/* sim_workload — see sim_workload.h.
 *
 * Open-loop synthetic arrivals form a renewal process starting at t = 0: the
 * k-th request (k = 0, 1, ...) arrives after k + 1 inter-arrival gaps, so a
 * Poisson workload is a true Poisson process on [0, inf). Gaps are summed in
 * double seconds and rounded to ns per request (constant rate uses (k+1)/rate
 * directly, so it never drifts). Trace replay maps the trace's timestamps to
 * (ts - ts0) * time_scale / rate_scale. Nothing is kept per request,
 * except generated hash ids, which sim_prefixgen holds until release.
 * Prefix structure draws only from its own stream, after the length draws,
 * so kind none and every other kind see the same arrivals and lengths. */
#include "sim_workload.h"

#include "sim_prefixgen.h"
#include "sim_rng.h"
#include "sim_session.h"
#include "sim_parse.h"
#include "sim_trace.h"

#include <ctype.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Arrivals past this many seconds (~290 years) cannot be held in int64 ns;
 * a workload whose next arrival lands there is exhausted. */
#define WL_MAX_SECONDS 9.0e9

/* arrival.schedule: piecewise-constant rates. */
#define WL_MAX_SEGMENTS 256
typedef struct {
    int32_t n;
    double t[WL_MAX_SEGMENTS], r[WL_MAX_SEGMENTS];
} wl_schedule;

struct sim_workload {
    wl_schedule sched;        /* arrival.schedule, parsed */
    sim_workload_cfg cfg;
    int closed;
    gsl_rng *rng_arrival, *rng_in, *rng_out;
    sim_lendist *dist_in, *dist_out; /* NULL in trace mode */
    sim_trace *trace;                /* NULL without a trace */
    sim_prefixgen *pg;               /* NULL when workload.prefix.kind is none */
    sim_session *ss;                 /* NULL without workload.sessions or a session trace */
    int64_t started;                 /* sessions: sessions opened (synthetic) */
    int64_t cursor;                  /* session trace: next entry to look at */
    int64_t limit;                   /* requests to issue at most; -1 = unbounded */
    int64_t total;                   /* sim_workload_total() */
    sim_time duration_ns;            /* 0 = no limit */
    double trace_t0_s;               /* first trace timestamp */
    double trace_factor;             /* time_scale / rate_scale */
    int64_t issued;
    double t_s;                      /* open loop synthetic: last arrival, seconds */
    int exhausted;
    /* workload.classes: one workload per class and each one's next request */
    int32_t n_sub;
    sim_workload **sub;
    sim_request_spec *next;
    int8_t *has_next;                /* 1 next[i] is held, 0 not pulled yet, -1 class exhausted (or closed loop) */
    int8_t *spent;                   /* closed-loop class: 1 once one of its clients got no request */
    int32_t *client_base;            /* closed-loop class: its first client's global index */
    int32_t n_clients;               /* closed-loop clients of every class together */
};

static sim_time wl_seconds_to_ns(double s)
{
    return (sim_time)llround(s * 1e9);
}

static sim_time wl_trace_arrival(const sim_workload *w, int64_t i)
{
    return wl_seconds_to_ns((w->trace->entries[i].timestamp_s - w->trace_t0_s) * w->trace_factor);
}


static int wl_schedule_parse(const char *text, wl_schedule *out, sim_err *err)
{
    out->n = 0;
    const char *p = text;
    int any = 0;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        while (isspace((unsigned char)*p)) p++;
        size_t tn = strcspn(p, ":");
        double t;
        if (p[tn] != ':' || sim_parse_double_n(p, tn, &t) != SIM_PARSE_OK)
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.schedule: expected time_s:rate at '%.40s'", p);
        p += tn + 1;
        while (isspace((unsigned char)*p)) p++;
        size_t rn = strcspn(p, " ,");
        double r;
        if (rn == 0)
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.schedule: expected a rate after '%g:'", t);
        if (sim_parse_double_n(p, rn, &r) != SIM_PARSE_OK)
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.schedule: expected a rate after '%g:', got '%.*s'",
                               t, (int)(rn < 40 ? rn : 40), p);
        p += rn;
        if (!isfinite(t) || t < 0 || !isfinite(r) || r < 0)
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.schedule: times and rates must be >= 0 (%g:%g)",
                               t, r);
        if (out->n > 0 && t <= out->t[out->n - 1])
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.schedule: times must increase (%g after %g)", t,
                               out->t[out->n - 1]);
        if (out->n == WL_MAX_SEGMENTS)
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.schedule: more than %d segments",
                               WL_MAX_SEGMENTS);
        out->t[out->n] = t;
        out->r[out->n++] = r;
        if (r > 0) any = 1;
        while (*p == ' ') p++;
        if (*p && *p != ',')
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.schedule: expected ',' at '%.40s'", p);
    }
    if (!any)
        return sim_err_set(err, SIM_EINVAL,
                           "workload.arrival.schedule: needs \"time_s:rate, ...\" with at least one rate > 0 "
                           "(got '%s')", text);
    return 0;
}

/* Next arrival after t of a Poisson process with the schedule's rate:
 * inverts the integrated rate, so E ~ Exp(1) units of Λ are walked across
 * segments (rate-0 stretches are skipped). INFINITY when the rate stays 0. */
static double wl_schedule_next(const wl_schedule *s, double t, double e)
{
    int32_t i = 0;
    while (i + 1 < s->n && s->t[i + 1] <= t) i++;
    if (t < s->t[0]) t = s->t[0]; /* no arrivals before the first breakpoint */
    for (;; i++) {
        double end = i + 1 < s->n ? s->t[i + 1] : INFINITY;
        double r = s->r[i];
        if (r > 0) {
            double cap = isfinite(end) ? r * (end - t) : INFINITY;
            if (e <= cap) return t + e / r;
            e -= cap;
        }
        if (!isfinite(end)) return INFINITY;
        t = end;
    }
}

static int wl_validate(const sim_workload_cfg *c, sim_err *err)
{
    const sim_arrival_cfg *a = &c->arrival;
    int closed = a->process == SIM_ARRIVAL_CLOSED;
    int traced = c->trace.format != SIM_TRACE_NONE;
    if ((unsigned)a->process > SIM_ARRIVAL_SCHEDULE)
        return sim_err_set(err, SIM_EINVAL, "workload.arrival.process: unknown kind %d", (int)a->process);
    if (c->requests < 0)
        return sim_err_set(err, SIM_EINVAL, "workload.requests: must be >= 0 (got %lld)",
                           (long long)c->requests);
    if (!isfinite(c->duration_s) || c->duration_s < 0 || c->duration_s > WL_MAX_SECONDS)
        return sim_err_set(err, SIM_EINVAL, "workload.duration_s: must be in [0, %g] (got %g)",
                           WL_MAX_SECONDS, c->duration_s);
    if (!traced && c->requests == 0 && c->duration_s == 0 && c->sessions.count == 0)
        return sim_err_set(err, SIM_EINVAL,
                           "workload: unbounded (set requests > 0, duration_s > 0, or a trace)");
    sim_prefix_kind pk = c->prefix.kind;
    if ((unsigned)pk >= SIM_PREFIX_KINDS)
        return sim_err_set(err, SIM_EINVAL, "workload.prefix.kind: unknown kind %d", (int)pk);
    if (traced && pk != SIM_PREFIX_NONE)
        return sim_err_set(err, SIM_EINVAL,
                           "workload.prefix.kind: %s needs synthetic requests, not a trace (a trace "
                           "carries its own hash_ids)", sim_prefix_kind_name(pk));
    if (c->sessions.count < 0)
        return sim_err_set(err, SIM_EINVAL, "workload.sessions.count: must be >= 0 (got %lld)",
                           (long long)c->sessions.count);
    if (c->sessions.count > 0) {
        if (closed)
            return sim_err_set(err, SIM_EINVAL,
                               "workload.sessions.count: sessions need an open-loop arrival.process (it times "
                               "session starts), not closed_loop");
        if (traced)
            return sim_err_set(err, SIM_EINVAL,
                               "workload.sessions.count: synthetic sessions and a trace exclude each other");
        if (pk != SIM_PREFIX_NONE)
            return sim_err_set(err, SIM_EINVAL,
                               "workload.prefix.kind: %s and workload.sessions exclude each other (set none)",
                               sim_prefix_kind_name(pk));
    }
    if (traced && c->trace.format != SIM_TRACE_MOONCAKE && c->trace.format != SIM_TRACE_CSV)
        return sim_err_set(err, SIM_EINVAL, "workload.trace.format: unknown format %d",
                           (int)c->trace.format);
    if (traced && !closed) {
        if (!isfinite(c->trace.time_scale) || c->trace.time_scale <= 0)
            return sim_err_set(err, SIM_EINVAL, "workload.trace.time_scale: must be > 0 (got %g)",
                               c->trace.time_scale);
        if (!isfinite(c->trace.rate_scale) || c->trace.rate_scale <= 0)
            return sim_err_set(err, SIM_EINVAL, "workload.trace.rate_scale: must be > 0 (got %g)",
                               c->trace.rate_scale);
    }
    if (closed) {
        if (a->concurrency < 1)
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.concurrency: must be >= 1 (got %d)",
                               (int)a->concurrency);
        if (!isfinite(a->think_time_s) || a->think_time_s < 0)
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.think_time_s: must be >= 0 (got %g)",
                               a->think_time_s);
    } else if (!traced && a->process == SIM_ARRIVAL_SCHEDULE) {
        wl_schedule sch;
        int src = wl_schedule_parse(a->schedule, &sch, err);
        if (src) return src;
    } else if (!traced) {
        if (!isfinite(a->rate) || a->rate <= 0)
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.rate: must be > 0 requests/s (got %g)",
                               a->rate);
        if (a->process == SIM_ARRIVAL_GAMMA && (!isfinite(a->cv) || a->cv <= 0))
            return sim_err_set(err, SIM_EINVAL, "workload.arrival.cv: must be > 0 for gamma (got %g)",
                               a->cv);
    }
    return 0;
}

/* Requests a time-bounded constant-rate workload issues: k with (k+1)/rate
 * rounding to before the duration. */
static int64_t wl_constant_count(const sim_workload *w)
{
    double rate = w->cfg.arrival.rate;
    int64_t k = (int64_t)floor(w->cfg.duration_s * rate) + 1;
    while (k > 0 && wl_seconds_to_ns((double)k / rate) >= w->duration_ns) k--;
    while (wl_seconds_to_ns((double)(k + 1) / rate) < w->duration_ns) k++;
    return k;
}

static void wl_compute_total(sim_workload *w)
{
    if (w->ss) {
        /* Synthetic sessions draw their turns as they go; a session trace
         * holds every request, but a duration cuts whole sessions. */
        w->total = w->trace && w->duration_ns == 0 ? w->trace->n : -1;
    } else if (w->trace) {
        int64_t n = w->limit;
        if (w->duration_ns > 0 && !w->closed) {
            /* Arrivals are monotone: count those before the duration. */
            int64_t lo = 0, hi = n;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (wl_trace_arrival(w, mid) < w->duration_ns) lo = mid + 1;
                else hi = mid;
            }
            n = lo;
        }
        w->total = n;
    } else if (w->cfg.arrival.process == SIM_ARRIVAL_CONSTANT && w->duration_ns > 0 &&
               w->cfg.duration_s * w->cfg.arrival.rate < 1e15) {
        int64_t n = wl_constant_count(w);
        w->total = w->limit >= 0 && w->limit < n ? w->limit : n;
    } else {
        w->total = w->limit;
    }
}

static int wl_create_classes(const sim_workload_cfg *cfg, uint64_t seed, sim_workload **out, sim_err *err);

/* A traced workload: the trace loaded and bounded by requests, its time
 * scale, and a session trace's session model (open loop, replayed whole). */
static int wl_open_trace(sim_workload *w, const sim_workload_cfg *cfg, uint64_t seed, sim_err *err)
{
    int rc;
    if ((rc = sim_trace_load(cfg->trace.path, cfg->trace.format, &w->trace, err))) {
        sim_err_wrap(err, rc, "workload.trace.path");
        return rc;
    }
    if (w->limit < 0 || w->limit > w->trace->n) w->limit = w->trace->n;
    w->trace_t0_s = w->trace->entries[0].timestamp_s;
    w->trace_factor = w->closed ? 0 : cfg->trace.time_scale / cfg->trace.rate_scale;
    if (w->trace->n_sessions > 0) {
        if (w->closed)
            return sim_err_set(err, SIM_EINVAL,
                               "workload.arrival.process: %s has session_id fields; a session trace is "
                               "replayed open loop (its turns wait for each other), not closed_loop",
                               cfg->trace.path);
        if (cfg->requests > 0)
            return sim_err_set(err, SIM_EINVAL,
                               "workload.requests: %s has session_id fields and is replayed whole "
                               "(set requests 0, or bound session starts with duration_s)",
                               cfg->trace.path);
        if ((rc = sim_session_create(cfg, w->trace, w->trace_factor, seed, &w->ss, err))) return rc;
    }
    if (!w->closed &&
        (w->trace->entries[w->limit - 1].timestamp_s - w->trace_t0_s) * w->trace_factor > WL_MAX_SECONDS)
        return sim_err_set(err, SIM_ERANGE, "workload.trace: %s spans more than %g s after scaling", cfg->trace.path,
                           WL_MAX_SECONDS);
    return 0;
}

/* A synthetic workload: the length distributions (an empirical one's
 * errors name its lengths file), the prefix generator and sessions. */
static int wl_open_synthetic(sim_workload *w, const sim_workload_cfg *cfg, uint64_t seed, sim_err *err)
{
    int rc;
    /* An empirical distribution fails on its lengths file: name that key. */
    int in_file = cfg->input_tokens.dist == SIM_DIST_EMPIRICAL && cfg->input_tokens.path[0];
    int out_file = cfg->output_tokens.dist == SIM_DIST_EMPIRICAL && cfg->output_tokens.path[0];
    if ((rc = sim_lendist_create(&cfg->input_tokens, &w->dist_in, err))) {
        sim_err_wrap(err, rc, in_file ? "workload.input_tokens.path" : "workload.input_tokens");
        return rc;
    }
    if ((rc = sim_lendist_create(&cfg->output_tokens, &w->dist_out, err))) {
        sim_err_wrap(err, rc, out_file ? "workload.output_tokens.path" : "workload.output_tokens");
        return rc;
    }
    if (cfg->prefix.kind != SIM_PREFIX_NONE) {
        int32_t slots = w->closed ? cfg->arrival.concurrency : cfg->prefix.sessions;
        if ((rc = sim_prefixgen_create(&cfg->prefix, slots, seed, &w->pg, err))) return rc;
    }
    if (cfg->sessions.count > 0) {
        if ((rc = sim_session_create(cfg, NULL, 0, seed, &w->ss, err))) return rc;
        w->limit = cfg->sessions.count;
    }
    return 0;
}

int sim_workload_create(const sim_workload_cfg *cfg, uint64_t seed, sim_workload **out,
                        sim_err *err)
{
    int rc;
    *out = NULL;
    if (cfg->n_classes > 0) return wl_create_classes(cfg, seed, out, err);
    if ((rc = wl_validate(cfg, err))) return rc;
    sim_workload *w = calloc(1, sizeof *w);
    if (!w) return sim_err_set(err, SIM_ENOMEM, "workload: out of memory");
    w->cfg = *cfg;
    w->closed = cfg->arrival.process == SIM_ARRIVAL_CLOSED;
    if (cfg->arrival.process == SIM_ARRIVAL_SCHEDULE && cfg->trace.format == SIM_TRACE_NONE &&
        (rc = wl_schedule_parse(cfg->arrival.schedule, &w->sched, err)) < 0)
        goto fail;
    w->duration_ns = wl_seconds_to_ns(cfg->duration_s);
    w->limit = cfg->requests > 0 ? cfg->requests : -1;
    w->rng_arrival = sim_rng_create(seed, "arrival", 0);
    w->rng_in = sim_rng_create(seed, "input_len", 0);
    w->rng_out = sim_rng_create(seed, "output_len", 0);
    if (!w->rng_arrival || !w->rng_in || !w->rng_out) {
        rc = sim_err_set(err, SIM_ENOMEM, "workload: out of memory");
        goto fail;
    }
    rc = cfg->trace.format != SIM_TRACE_NONE ? wl_open_trace(w, cfg, seed, err) : wl_open_synthetic(w, cfg, seed, err);
    if (rc) goto fail;
    wl_compute_total(w);
    *out = w;
    return 0;
fail:
    sim_workload_destroy(w);
    return rc;
}

/* The class's own workload: the base keys with the class's arrivals,
 * lengths, budget, prefix structure and sessions; a closed-loop class owns clients
 * [client_base, client_base + concurrency) of the merged workload's global
 * numbering. A class's prefix generator draws from the class's own stream
 * and ids of its own (sim_prefixgen_set_space: class i of n), so classes
 * never share a cached prefix nor a session; so does its session model
 * (sim_session_set_space), whose follow-up requests the merged workload
 * numbers and tags with the class (wl_emit). Traces are refused with
 * classes by the loader (and here). */
static int wl_create_classes(const sim_workload_cfg *cfg, uint64_t seed, sim_workload **out, sim_err *err)
{
    int rc;
    if (cfg->n_classes > SIM_MAX_CLASSES)
        return sim_err_set(err, SIM_EINVAL, "workload.classes: at most %d classes (got %d)", SIM_MAX_CLASSES,
                           (int)cfg->n_classes);
    if (cfg->trace.format != SIM_TRACE_NONE)
        return sim_err_set(err, SIM_EINVAL, "workload.classes: classes need synthetic arrivals, not a trace");
    sim_workload *w = calloc(1, sizeof *w);
    if (!w) return sim_err_set(err, SIM_ENOMEM, "workload: out of memory");
    w->cfg = *cfg;
    w->n_sub = cfg->n_classes;
    w->sub = calloc((size_t)w->n_sub, sizeof *w->sub);
    w->next = calloc((size_t)w->n_sub, sizeof *w->next);
    w->has_next = calloc((size_t)w->n_sub, sizeof *w->has_next);
    w->spent = calloc((size_t)w->n_sub, sizeof *w->spent);
    w->client_base = calloc((size_t)w->n_sub, sizeof *w->client_base);
    if (!w->sub || !w->next || !w->has_next || !w->spent || !w->client_base) {
        rc = sim_err_set(err, SIM_ENOMEM, "workload: out of memory");
        goto fail;
    }
    w->total = 0;
    for (int32_t i = 0; i < w->n_sub; i++) {
        const sim_class_cfg *cl = &cfg->classes[i];
        sim_workload_cfg sub = *cfg;
        sub.n_classes = 0;
        sub.requests = cl->requests;
        sub.duration_s = cl->duration_s;
        sub.arrival = cl->arrival;
        sub.input_tokens = cl->input_tokens;
        sub.output_tokens = cl->output_tokens;
        sub.prefix = cl->prefix;
        sub.sessions = cl->sessions;
        char stream[SIM_CLASS_NAME_MAX + 8];
        snprintf(stream, sizeof stream, "class.%s", cl->name);
        if ((rc = sim_workload_create(&sub, sim_rng_derive(seed, stream, 0), &w->sub[i], err)) < 0) {
            sim_err_wrap(err, rc, "workload.classes.%d (%s)", (int)i, cl->name);
            goto fail;
        }
        if (w->sub[i]->pg) sim_prefixgen_set_space(w->sub[i]->pg, i, w->n_sub);
        if (w->sub[i]->ss) sim_session_set_space(w->sub[i]->ss, i, w->n_sub);
        int64_t t = sim_workload_total(w->sub[i]);
        w->total = w->total < 0 || t < 0 ? -1 : w->total + t;
        if (w->sub[i]->closed) {
            if (cl->arrival.concurrency > INT32_MAX - w->n_clients) {
                rc = sim_err_set(err, SIM_EINVAL, "workload.classes.%d.arrival.concurrency: the classes' clients "
                                                  "exceed %d in all", (int)i, (int)INT32_MAX);
                goto fail;
            }
            w->client_base[i] = w->n_clients;
            w->n_clients += cl->arrival.concurrency;
            w->has_next[i] = -1; /* no open-loop arrivals from this class */
        }
    }
    *out = w;
    return 0;
fail:
    sim_workload_destroy(w);
    return rc;
}

/* Classes: the earliest of the classes' next requests. */
static int wl_next_merged(sim_workload *w, sim_request_spec *out)
{
    int32_t best = -1;
    for (int32_t i = 0; i < w->n_sub; i++) {
        if (w->has_next[i] == 0) {
            int rc = sim_workload_next(w->sub[i], &w->next[i]);
            if (rc < 0) return rc;
            w->has_next[i] = rc == 1 ? 1 : -1;
        }
        if (w->has_next[i] == 1 && (best < 0 || w->next[i].arrival < w->next[best].arrival)) best = i;
    }
    if (best < 0) return 0;
    *out = w->next[best];
    w->has_next[best] = 0;
    if (w->sub[best]->pg) sim_prefixgen_renumber(w->sub[best]->pg, out, (uint64_t)w->issued);
    out->id = (uint64_t)w->issued++;
    out->cls = best;
    out->priority = w->cfg.classes[best].priority;
    return 1;
}

void sim_workload_destroy(sim_workload *w)
{
    if (!w) return;
    for (int32_t i = 0; i < w->n_sub; i++) sim_workload_destroy(w->sub[i]);
    free(w->sub);
    free(w->next);
    free(w->has_next);
    free(w->spent);
    free(w->client_base);
    if (w->rng_arrival) gsl_rng_free(w->rng_arrival);
    if (w->rng_in) gsl_rng_free(w->rng_in);
    if (w->rng_out) gsl_rng_free(w->rng_out);
    sim_lendist_destroy(w->dist_in);
    sim_lendist_destroy(w->dist_out);
    sim_trace_destroy(w->trace);
    sim_prefixgen_destroy(w->pg);
    sim_session_destroy(w->ss);
    free(w);
}

int sim_workload_is_closed(const sim_workload *w)
{
    return w->closed;
}

int32_t sim_workload_clients(const sim_workload *w)
{
    if (w->n_sub > 0) return w->n_clients;
    return w->closed ? w->cfg.arrival.concurrency : 0;
}

int sim_workload_has_open(const sim_workload *w)
{
    if (w->n_sub == 0) return !w->closed;
    for (int32_t i = 0; i < w->n_sub; i++)
        if (!w->sub[i]->closed) return 1;
    return 0;
}

/* Classes: the closed-loop class of global client `client`. */
static int32_t wl_client_class(const sim_workload *w, int32_t client)
{
    int32_t best = -1;
    for (int32_t i = 0; i < w->n_sub; i++)
        if (w->sub[i]->closed && client >= w->client_base[i]) best = i;
    SIM_ASSERT(best >= 0 && client - w->client_base[best] < w->cfg.classes[best].arrival.concurrency, client);
    return best;
}

sim_time sim_workload_think_ns(const sim_workload *w, int32_t client)
{
    const sim_arrival_cfg *a = w->n_sub > 0 ? &w->cfg.classes[wl_client_class(w, client)].arrival : &w->cfg.arrival;
    return (sim_time)(a->think_time_s * 1e9);
}

int sim_workload_spent(const sim_workload *w)
{
    for (int32_t i = 0; i < w->n_sub; i++)
        if (w->sub[i]->closed ? !w->spent[i] : w->has_next[i] != -1) return 0;
    return 1;
}

int64_t sim_workload_total(const sim_workload *w)
{
    return w->total;
}

/* Fills lengths and hashes of request w->issued (from the trace or drawn);
 * `client` is the closed-loop client or -1. Returns 0 or SIM_ENOMEM. */
static int wl_fill(sim_workload *w, int32_t client, sim_request_spec *out)
{
    out->id = (uint64_t)w->issued;
    out->session = 0;
    out->n_ctx_ids = 0;
    out->ctx_ids = NULL;
    out->cls = 0;
    out->priority = 0;
    if (w->trace) {
        const sim_trace_entry *e = &w->trace->entries[w->issued];
        out->input_tokens = e->input_tokens;
        out->output_tokens = e->output_tokens;
        out->n_hash = e->n_hash;
        out->hash_ids = e->n_hash ? w->trace->hashes + e->hash_off : NULL;
    } else {
        out->input_tokens = sim_lendist_draw(w->dist_in, w->rng_in);
        out->output_tokens = sim_lendist_draw(w->dist_out, w->rng_out);
        out->n_hash = 0;
        out->hash_ids = NULL;
        if (w->pg) return sim_prefixgen_attach(w->pg, client, out->input_tokens, out, NULL);
    }
    return 0;
}

/* Seconds from the previous synthetic arrival to the next. */
static double wl_gap(sim_workload *w)
{
    const sim_arrival_cfg *a = &w->cfg.arrival;
    switch (a->process) {
    case SIM_ARRIVAL_POISSON:
        return gsl_ran_exponential(w->rng_arrival, 1.0 / a->rate);
    case SIM_ARRIVAL_GAMMA: {
        double k = 1.0 / (a->cv * a->cv);
        return gsl_ran_gamma(w->rng_arrival, k, 1.0 / (a->rate * k));
    }
    default:
        return 1.0 / a->rate;
    }
}

/* Open-loop synthetic arrivals: advances the arrival clock to the n-th
 * arrival (0-based; constant rate places it at (n + 1) / rate) and gives
 * its time in *at; 0 (and the workload exhausted) past WL_MAX_SECONDS. */
static int wl_next_arrival(sim_workload *w, int64_t n, sim_time *at)
{
    if (w->cfg.arrival.process == SIM_ARRIVAL_CONSTANT)
        w->t_s = (double)(n + 1) / w->cfg.arrival.rate;
    else if (w->cfg.arrival.process == SIM_ARRIVAL_SCHEDULE)
        w->t_s = wl_schedule_next(&w->sched, w->t_s, gsl_ran_exponential(w->rng_arrival, 1.0));
    else
        w->t_s += wl_gap(w);
    if (!(w->t_s <= WL_MAX_SECONDS)) {
        w->exhausted = 1;
        return 0;
    }
    *at = wl_seconds_to_ns(w->t_s);
    return 1;
}

/* Session trace: the next line that is not a follow-up (a session's first
 * line, or a line outside any session), as a request. */
static int wl_next_session_trace(sim_workload *w, sim_request_spec *out)
{
    const sim_trace *t = w->trace;
    while (w->cursor < t->n) {
        const sim_trace_entry *e = &t->entries[w->cursor];
        if (e->session < 0 || (e->turn == 0 && e->parent < 0)) break;
        w->cursor++;
    }
    if (w->exhausted || w->cursor >= t->n) return 0;
    sim_time at = wl_trace_arrival(w, w->cursor);
    if (w->duration_ns > 0 && at >= w->duration_ns) {
        w->exhausted = 1;
        return 0;
    }
    const sim_trace_entry *e = &t->entries[w->cursor];
    if (e->session >= 0) {
        if (sim_session_start(w->ss, w->cursor, at, out)) return SIM_ENOMEM;
    } else {
        memset(out, 0, sizeof *out);
        out->arrival = at;
        out->input_tokens = e->input_tokens;
        out->output_tokens = e->output_tokens;
        out->n_hash = e->n_hash;
        out->hash_ids = e->n_hash ? t->hashes + e->hash_off : NULL;
    }
    out->id = (uint64_t)w->issued++;
    w->cursor++;
    return 1;
}

int sim_workload_next(sim_workload *w, sim_request_spec *out)
{
    SIM_ASSERT(!w->closed, w->issued);
    if (w->n_sub > 0) return wl_next_merged(w, out);
    if (w->ss && w->trace) return wl_next_session_trace(w, out);
    if (w->ss) {
        /* Synthetic sessions: the arrival process times session starts. */
        sim_time at;
        if (w->exhausted || w->started >= w->limit || !wl_next_arrival(w, w->started, &at)) return 0;
        if (w->duration_ns > 0 && at >= w->duration_ns) {
            w->exhausted = 1;
            return 0;
        }
        if (sim_session_start(w->ss, -1, at, out)) return SIM_ENOMEM;
        out->id = (uint64_t)w->issued++;
        w->started++;
        return 1;
    }
    if (w->exhausted || (w->limit >= 0 && w->issued >= w->limit)) return 0;
    sim_time t;
    if (w->trace) {
        t = wl_trace_arrival(w, w->issued);
    } else if (!wl_next_arrival(w, w->issued, &t)) {
        return 0;
    }
    if (w->duration_ns > 0 && t >= w->duration_ns) {
        w->exhausted = 1;
        return 0;
    }
    out->arrival = t;
    int rc = wl_fill(w, -1, out);
    if (rc) return rc;
    w->issued++;
    return 1;
}

/* Classes: client `client`'s class sends its next request (numbered in the
 * merged stream); a class that has none left is marked spent. */
static int wl_sample_class(sim_workload *w, sim_time now, int32_t client, sim_request_spec *out)
{
    int32_t i = wl_client_class(w, client);
    int rc = sim_workload_sample_client(w->sub[i], now, client - w->client_base[i], out);
    if (rc <= 0) {
        if (rc == 0) w->spent[i] = 1;
        return rc;
    }
    if (w->sub[i]->pg) sim_prefixgen_renumber(w->sub[i]->pg, out, (uint64_t)w->issued);
    out->id = (uint64_t)w->issued++;
    out->cls = i;
    out->priority = w->cfg.classes[i].priority;
    return 1;
}

int sim_workload_sample_client(sim_workload *w, sim_time now, int32_t client, sim_request_spec *out)
{
    if (w->n_sub > 0) return wl_sample_class(w, now, client, out);
    SIM_ASSERT(w->closed, now);
    SIM_ASSERT(client >= -1 && client < w->cfg.arrival.concurrency, client);
    if (w->limit >= 0 && w->issued >= w->limit) return 0;
    if (w->duration_ns > 0 && now >= w->duration_ns) return 0;
    out->arrival = now;
    int rc = wl_fill(w, client, out);
    if (rc) return rc;
    w->issued++;
    return 1;
}

int sim_workload_sample(sim_workload *w, sim_time now, sim_request_spec *out)
{
    return sim_workload_sample_client(w, now, -1, out);
}

void sim_workload_release(sim_workload *w, const sim_request_spec *spec)
{
    if (w->n_sub > 0) {
        if (spec->cls >= 0 && spec->cls < w->n_sub) sim_workload_release(w->sub[spec->cls], spec);
        return;
    }
    if (w->pg) sim_prefixgen_release(w->pg, spec);
    if (w->ss && spec->session) sim_session_release(w->ss, spec);
}

int64_t sim_workload_ids_live(const sim_workload *w)
{
    if (w->n_sub > 0) {
        int64_t n = 0;
        for (int32_t i = 0; i < w->n_sub; i++) n += sim_workload_ids_live(w->sub[i]);
        return n;
    }
    return w->pg ? sim_prefixgen_live(w->pg) : w->ss ? sim_session_live(w->ss) : 0;
}

size_t sim_workload_ids_bytes(const sim_workload *w)
{
    if (w->n_sub > 0) {
        size_t n = 0;
        for (int32_t i = 0; i < w->n_sub; i++) n += sim_workload_ids_bytes(w->sub[i]);
        return n;
    }
    return w->pg ? sim_prefixgen_bytes(w->pg) : w->ss ? sim_session_bytes(w->ss) : 0;
}

int sim_workload_has_sessions(const sim_workload *w)
{
    for (int32_t i = 0; i < w->n_sub; i++)
        if (w->sub[i]->ss) return 1;
    return w->ss != NULL;
}

int64_t sim_workload_sessions_open(const sim_workload *w)
{
    int64_t n = w->ss ? sim_session_open(w->ss) : 0;
    for (int32_t i = 0; i < w->n_sub; i++) n += sim_workload_sessions_open(w->sub[i]);
    return n;
}

/* A follow-up request, numbered by the (merged) workload; with classes
 * (cls >= 0) tagged with its class and the class's priority. */
typedef struct {
    sim_workload *w;
    int32_t cls;
    sim_workload_emit_fn emit;
    void *ctx;
} wl_emit_ctx;

static int wl_emit(void *ctx, sim_request_spec *spec)
{
    wl_emit_ctx *e = ctx;
    spec->id = (uint64_t)e->w->issued++;
    if (e->cls >= 0) {
        spec->cls = e->cls;
        spec->priority = e->w->cfg.classes[e->cls].priority;
    }
    return e->emit(e->ctx, spec);
}

int sim_workload_request_done(sim_workload *w, const sim_request_spec *spec, sim_time now,
                              sim_workload_emit_fn emit, void *ctx, struct sim_session_done_info *info)
{
    memset(info, 0, sizeof *info);
    /* With classes the session model of the request's class. */
    int32_t cls = w->n_sub > 0 ? spec->cls : -1;
    if (w->n_sub > 0 && (cls < 0 || cls >= w->n_sub)) return 0;
    sim_session *ss = cls >= 0 ? w->sub[cls]->ss : w->ss;
    if (!ss || spec->session == 0) return 0;
    wl_emit_ctx e = {w, cls, emit, ctx};
    int rc = sim_session_done(ss, spec, now, wl_emit, &e, info);
    return rc < 0 ? rc : 1;
}
