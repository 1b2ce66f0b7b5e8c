/* sim_search — see sim_search.h. The driver: enumerate, bound (threads),
 * then waves of SIM_SEARCH_WAVE candidates in bound order, each wave
 * simulated on threads (and ranks), results exchanged, stored by rank 0.
 * Pruning decisions use only the results of finished waves, and the wave
 * size is a constant, so every worker count takes the same decisions. */
#include "sim_search_impl.h"

#include "calib_table_cache.h"
#include "sim_clock.h"
#include "sim_pfor.h"

#include "sim_cluster.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define SIM_SEARCH_WAVE 16

void sim_search_note(sim_search *s, const char *fmt, ...)
{
    size_t o = strlen(s->notes);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->notes + o, sizeof s->notes - o, fmt, ap);
    va_end(ap);
}

/* The search block checked against the scenario, and how candidates are
 * measured: at the scenario's own arrivals (closed loop, classes,
 * autoscaling: fixed) or at the highest rate meeting the SLO. */
static int search_mode(sim_search *s, const sim_scenario *sc, sim_err *err)
{
    const sim_search_cfg *cfg = &sc->search;
    int rc;
    double p = cfg->percentile;
    if (p != 50 && p != 90 && p != 99 && p != 99.9) {
        return sim_err_set(err, SIM_EINVAL, "search.percentile: %g is not one of 50, 90, 99, 99.9", p);
    }
    s->percentile = p;
    if (cfg->replications == 1) {
        rc = sim_err_set(err, SIM_EINVAL, "search.replications: 1 run gives no interval; expected 0 (off) or >= 2");
        return rc;
    }
    /* Autoscaling in the space (search.autoscale, or a pool of the scenario
     * autoscaling): every candidate at the scenario's own arrivals. */
    if ((rc = sim_search_autoscale_init(s, err)) < 0) return rc;
    if (sc->workload.trace.format == SIM_TRACE_NONE && sc->workload.arrival.process == SIM_ARRIVAL_SCHEDULE &&
        s->n_as == 0) {
        /* The search varies workload.arrival.rate, which a schedule ignores. */
        rc = sim_err_set(err, SIM_EINVAL,
                         "search: workload.arrival.process schedule has no single rate to search over; use "
                         "poisson, gamma or constant (or a trace, whose rate is rescaled), or set search.autoscale "
                         "(off for fixed fleets) to run every candidate at the schedule");
        return rc;
    }
    s->closed = sc->workload.trace.format == SIM_TRACE_NONE && sc->workload.arrival.process == SIM_ARRIVAL_CLOSED;
    s->classes = sc->workload.n_classes > 0;
    if (s->classes && cfg->rate > 0) {
        rc = sim_err_set(err, SIM_EINVAL, "search.rate: with workload.classes every class keeps its own arrival rate; "
                                          "leave search.rate 0");
        return rc;
    }
    /* Classes, like a closed loop, bring their own arrivals: measured at them;
     * so does every candidate with autoscaling in the space. */
    if (s->classes || s->n_as > 0) s->closed = 1;
    s->fixed = cfg->rate > 0 || s->closed;
    if (s->classes)
        sim_search_note(s, "workload.classes: each candidate is evaluated at the classes' own arrival rates and request counts "
                "(no rate bisection, and search.requests is not used); it passes when every class meets its own SLO at "
                "search.percentile over the requests served with none rejected, and goodput counts each request by its "
                "class's SLO (a shed request is not good). ");
    for (int32_t i = 0; i < sc->workload.n_classes; i++)
        if (sc->workload.classes[i].arrival.process == SIM_ARRIVAL_CLOSED) {
            sim_search_note(s, "Closed-loop classes send at their own concurrency and think time. ");
            break;
        }
    if (!s->classes && s->closed && s->n_as == 0)
        sim_search_note(s, "closed-loop workload: each candidate is evaluated at the scenario's concurrency (no rate bisection). ");
    if (!s->fixed && sc->slo.ttft_ms <= 0 && sc->slo.tpot_ms <= 0) {
        rc = sim_err_set(err, SIM_EINVAL,
                         "slo: finding the highest rate needs an SLO (slo.ttft_ms and/or slo.tpot_ms), "
                         "or set search.rate to evaluate every candidate at one rate");
        return rc;
    }
    return 0;
}

/* The objective: cost where every GPU type searched has a price (or asked
 * for, then every type must have one), energy (nothing pruned), else
 * goodput per GPU. */
static int search_objective(sim_search *s, const sim_scenario *sc, sim_err *err)
{
    const sim_search_cfg *cfg = &sc->search;
    int rc;
    /* Objective: cost needs a price for every GPU type searched. */
    int priced = 1;
    const char *unpriced = "";
    for (int32_t i = 0; i < s->n && priced; i++) {
        unpriced = sim_search_unpriced_gpu(&s->sc, &s->cands[i]);
        if (unpriced[0]) priced = 0;
    }
    if (cfg->objective == SIM_OBJECTIVE_COST && !priced) {
        if (s->hetero)
            rc = sim_err_set(err, SIM_EINVAL,
                             "search.prices: no price for GPU type '%s'; search.objective cost needs a price for every "
                             "GPU type a role may run on (search.gpus and search.*_gpus)",
                             unpriced);
        else
            rc = sim_err_set(err, SIM_EINVAL, "search.objective cost needs search.prices for every GPU searched");
        return rc;
    }
    s->objective_cost = cfg->objective == SIM_OBJECTIVE_COST || (cfg->objective == SIM_OBJECTIVE_AUTO && priced);
    s->objective_energy = cfg->objective == SIM_OBJECTIVE_ENERGY;
    if (s->objective_energy) {
        /* Every probe reports its energy; the throughput bound says nothing
         * about joules per token, so it cannot prune. */
        s->sc.energy.enabled = 1;
        s->sc.search.prune = 0;
        sim_search_note(s, "objective energy: every feasible candidate is simulated (the throughput bound does not bound "
                "joules per token, so nothing is pruned). ");
    }
    return 0;
}

/* The candidates' results: their cost models first (a candidate's request
 * count depends on its KV capacity), then each one's requests, price and
 * workload statistics. */
static int search_results_init(sim_search *s, const sim_scenario *sc, sim_err *err)
{
    const sim_search_cfg *cfg = &sc->search;
    int rc;
    s->res = calloc((size_t)s->n, sizeof *s->res);
    if (!s->res) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
        return rc;
    }
    /* Costs first: the request count of a candidate depends on its KV capacity. */
    const sim_search_lens *L0;
    if ((rc = sim_search_costs_build(s, err)) < 0) return rc;
    if ((rc = sim_search_lens_get(s, cfg->requests, &L0, err)) < 0) return rc;
    if (s->hetero && (rc = sim_search_check_role_gpus(s, err)) < 0) return rc;
    for (int32_t i = 0; i < s->n; i++) {
        const sim_search_lens *L;
        /* Autoscaling: the scenario's own requests (0: until its duration_s). */
        s->res[i].requests = s->n_as > 0 ? s->sc.workload.requests : sim_search_requests_for(s, &s->cands[i]);
        s->res[i].price = sim_search_fleet_price(&s->sc, &s->cands[i]);
        s->res[i].best_probe = -1;
        if ((rc = sim_search_lens_get(s, s->res[i].requests, &L, err)) < 0) return rc;
    }
    if (sc->workload.trace.format != SIM_TRACE_NONE && !s->fixed)
        for (int32_t k = 0; k < s->n_lens; k++)
            if (s->lens[k].base_rate <= 0) {
                rc = sim_err_set(err, SIM_EINVAL, "search: the trace has no measurable arrival rate to rescale");
                return rc;
            }
    return 0;
}

int sim_search_create(const sim_scenario *sc, const sim_search_opts *opts, sim_search **out, sim_err *err)
{
    int rc;
    *out = NULL;
    sim_search *s = calloc(1, sizeof *s);
    if (!s) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    if ((rc = calib_table_cache_create(&s->perf_cache, err)) < 0) {
        pthread_mutex_destroy(&s->mu);
        free(s);
        return rc;
    }
    s->sc = *sc;
    s->sc.output.db[0] = '\0';
    s->sc.sweep.key[0] = '\0';
    if (opts) s->opts = *opts;
    s->ranks = 1;
    if ((rc = search_mode(s, sc, err)) < 0) goto fail;
    if ((rc = model_catalog_model(sc->model, &s->model, err)) < 0) {
        sim_err_wrap(err, rc, "model");
        goto fail;
    }
    if ((rc = sim_search_encode_init(s, err)) < 0 || (rc = sim_search_enumerate(s, err)) < 0 ||
        (rc = search_objective(s, sc, err)) < 0 || (rc = search_results_init(s, sc, err)) < 0)
        goto fail;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const int32_t cfg_threads = sc->search.threads;
    s->threads = s->opts.threads > 0 ? s->opts.threads : cfg_threads > 0 ? cfg_threads : (int32_t)(cores > 0 ? cores : 1);
    snprintf(s->session, sizeof s->session, "%lld-%d", (long long)time(NULL), (int)getpid());
    *out = s;
    return 0;
fail:
    sim_search_destroy(s);
    return rc;
}

void sim_search_destroy(sim_search *s)
{
    if (!s) return;
    for (int32_t i = 0; i < s->n_costs; i++) {
        model_cost_destroy(s->costs[i].cost);
        model_cost_destroy(s->costs[i].draft);
    }
    if (s->res)
        for (int32_t i = 0; i < s->n; i++) free(s->res[i].probes);
    free(s->res);
    free(s->cands);
    calib_table_cache_free(s->perf_cache);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

void sim_search_set_store(sim_search *s, struct sim_store *st, const char *scenario_text)
{
    s->store = st;
    s->scenario_text = scenario_text;
}

/* ---- a parallel for over candidate indices ----------------------------- */

typedef struct {
    sim_search *s;
    const int32_t *idx;
    int bound;                 /* 1: bound, 0: evaluate */
} pfor;

/* Under MPI every rank must take part in each wave's exchange, and a
 * signal reaches the ranks at different times: a stop is not honoured there. */
int sim_search_stopping(const sim_search *s) { return s->ranks == 1 && s->opts.stop && *s->opts.stop; }

static int better(const sim_search *s, int32_t a, int32_t b);

/* Progress of one decided candidate (s->mu held). */
static void report(sim_search *s, int wave_end)
{
    if (!s->opts.progress || s->rank != 0) return;
    sim_search_progress p = {.done = s->done, .total = s->n, .evaluated = s->evaluated, .pruned = s->pruned,
                             .wave_end = wave_end, .best = s->best,
                             .best_score = s->best >= 0 ? s->res[s->best].score : 0};
    s->opts.progress(s->opts.progress_ctx, s, &p);
}

static void pfor_item(void *arg, int64_t j)
{
    pfor *pf = arg;
    sim_search *s = pf->s;
    if (!pf->bound && sim_search_stopping(s)) return; /* the rest are left undecided */
    int32_t i = pf->idx[j];
    if (pf->bound) {
        sim_search_bound(s, &s->cands[i], &s->res[i]);
        return;
    }
    sim_search_evaluate(s, i, &s->res[i]);
    pthread_mutex_lock(&s->mu);
    s->simulations += s->res[i].n_probes;
    s->sim_wall_s += s->res[i].wall_s;
    if (s->res[i].status != SIM_CAND_PENDING) {
        s->done++;
        s->evaluated++;
        /* Ranks other than 0 report nothing, so their best is not needed. */
        if (s->res[i].status == SIM_CAND_OK && (s->best < 0 || better(s, i, s->best))) s->best = i;
        report(s, 0);
    }
    pthread_mutex_unlock(&s->mu);
}

static void parallel_for(sim_search *s, const int32_t *idx, int32_t n, int bound)
{
    pfor pf = {.s = s, .idx = idx, .bound = bound};
    sim_pfor(n, s->threads > 0 ? s->threads : 1, pfor_item, &pf);
}

/* ---- ranking ------------------------------------------------------------ */

static int better(const sim_search *s, int32_t a, int32_t b)
{
    const sim_search_result *ra = &s->res[a], *rb = &s->res[b];
    /* Replicated candidates (after the search) first, by their mean over the seeds. */
    if ((ra->rep_n >= 2) != (rb->rep_n >= 2)) return ra->rep_n >= 2;
    if (ra->rep_n >= 2 && ra->rep_mean != rb->rep_mean) return ra->rep_mean > rb->rep_mean;
    if (ra->score != rb->score) return ra->score > rb->score;
    if (s->cands[a].gpus != s->cands[b].gpus) return s->cands[a].gpus < s->cands[b].gpus;
    /* Equal objective (same rate on the same GPUs): prefer what users feel,
     * so the winner is never dominated by a tied runner-up. */
    if (ra->tok_s_user != rb->tok_s_user) return ra->tok_s_user > rb->tok_s_user;
    if (ra->ttft_ms != rb->ttft_ms) return ra->ttft_ms < rb->ttft_ms;
    return a < b;
}

static int bound_first(const sim_search *s, int32_t a, int32_t b)
{
    const sim_search_result *ra = &s->res[a], *rb = &s->res[b];
    if (ra->bound_score != rb->bound_score) return ra->bound_score > rb->bound_score;
    return a < b;
}

static void sort_idx(const sim_search *s, int32_t *idx, int32_t n, int (*first)(const sim_search *, int32_t, int32_t))
{
    /* Bottom-up merge sort: stable, and unlike qsort it takes a context. */
    int32_t *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    if (!tmp) { /* fall back to insertion sort */
        for (int32_t i = 1; i < n; i++)
            for (int32_t j = i; j > 0 && first(s, idx[j], idx[j - 1]); j--) {
                int32_t t = idx[j];
                idx[j] = idx[j - 1];
                idx[j - 1] = t;
            }
        return;
    }
    for (int32_t w = 1; w < n; w *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * w) {
            int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int32_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) tmp[k++] = first(s, idx[b], idx[a]) ? idx[b++] : idx[a++];
            while (a < mid) tmp[k++] = idx[a++];
            while (b < hi) tmp[k++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
    free(tmp);
}

int32_t sim_search_ranking(const sim_search *s, int32_t *idx, int32_t max)
{
    int32_t *all = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *all), n = 0;
    if (!all) return 0;
    for (int32_t i = 0; i < s->n; i++)
        if (s->res[i].status == SIM_CAND_OK) all[n++] = i;
    sort_idx(s, all, n, better);
    int32_t k = n < max ? n : max;
    memcpy(idx, all, (size_t)k * sizeof *idx);
    free(all);
    return n;
}

int sim_search_same_deployment(const sim_search *s, int32_t a, int32_t b)
{
    const sim_search_cand *x = &s->cands[a], *y = &s->cands[b];
    if (x->mode != y->mode || x->n_pools != y->n_pools || strcmp(x->gpu, y->gpu) != 0) return 0;
    if (x->encode_instances != y->encode_instances || x->autoscale != y->autoscale) return 0;
    for (int32_t p = 0; p < x->n_pools; p++) {
        const sim_search_pool *u = &x->pools[p], *v = &y->pools[p];
        if (u->role != v->role || u->instances != v->instances || u->tp != v->tp || u->pp != v->pp ||
            u->dp != v->dp || u->ep != v->ep || u->dcp != v->dcp || u->sp != v->sp || strcmp(u->gpu, v->gpu) != 0)
            return 0;
    }
    return 1;
}

int32_t sim_search_ranking_distinct(const sim_search *s, int32_t *idx, int32_t *variants, int32_t max)
{
    int32_t *all = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *all), *head = NULL, *cnt = NULL;
    if (!all) return 0;
    int32_t n = sim_search_ranking(s, all, s->n), d = 0;
    head = malloc((size_t)(n > 0 ? n : 1) * sizeof *head);
    cnt = calloc((size_t)(n > 0 ? n : 1), sizeof *cnt);
    if (!head || !cnt) {
        free(all);
        free(head);
        free(cnt);
        return 0;
    }
    /* Ranked best first: the first of each deployment is its best variant. */
    for (int32_t q = 0; q < n; q++) {
        int32_t k = 0;
        while (k < d && !sim_search_same_deployment(s, head[k], all[q])) k++;
        if (k == d) head[d++] = all[q];
        cnt[k]++;
    }
    for (int32_t k = 0; k < d && k < max; k++) {
        idx[k] = head[k];
        if (variants) variants[k] = cnt[k];
    }
    free(all);
    free(head);
    free(cnt);
    return d;
}

/* k-th best score among OK candidates, -inf when fewer than k. */
static double kth_best(const sim_search *s, int32_t k)
{
    int32_t *top = malloc((size_t)k * sizeof *top);
    if (!top) return -INFINITY;
    int32_t n = sim_search_ranking(s, top, k);
    double v = n >= k ? s->res[top[k - 1]].score : -INFINITY;
    free(top);
    return v;
}

int32_t sim_search_pareto(const sim_search *s, int against_ttft, int32_t *idx, int32_t max)
{
    int32_t *ok = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *ok), n = 0, m = 0;
    if (!ok) return 0;
    for (int32_t i = 0; i < s->n; i++)
        if (s->res[i].status == SIM_CAND_OK) ok[n++] = i;
    sort_idx(s, ok, n, better);
    for (int32_t a = 0; a < n; a++) {
        const sim_search_result *ra = &s->res[ok[a]];
        double ya = against_ttft ? -ra->ttft_ms : ra->tok_s_user;
        int dominated = 0;
        for (int32_t b = 0; b < n && !dominated; b++) {
            if (a == b) continue;
            const sim_search_result *rb = &s->res[ok[b]];
            double yb = against_ttft ? -rb->ttft_ms : rb->tok_s_user;
            if (rb->goodput_per_gpu >= ra->goodput_per_gpu && yb >= ya &&
                (rb->goodput_per_gpu > ra->goodput_per_gpu || yb > ya))
                dominated = 1;
            /* Identical points: keep the first in ranking order only. */
            if (rb->goodput_per_gpu == ra->goodput_per_gpu && yb == ya && b < a) dominated = 1;
        }
        if (!dominated && m < max) idx[m++] = ok[a];
    }
    free(ok);
    return m;
}

/* ---- storing ------------------------------------------------------------ */

static int store_candidate(sim_search *s, int32_t i, sim_err *err)
{
    const sim_search_result *r = &s->res[i];
    sim_scenario *sc = malloc(sizeof *sc);
    int rc = 0;
    if (!sc) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    for (int32_t j = 0; j < r->n_probes && rc == 0; j++) {
        char *params = NULL;
        if ((rc = sim_search_apply(s, i, r->probes[j].rate, r->requests, sc, err)) < 0) break;
        if ((rc = sim_search_probe_params(s, i, j, j == r->best_probe, 0, &params)) < 0) {
            rc = sim_err_set(err, rc, "out of memory");
            break;
        }
        rc = sim_store_write_run(s->store, sc, s->scenario_text, params, &r->probes[j].sum, NULL, NULL, err);
        free(params);
    }
    free(sc);
    return rc;
}

int sim_search_store_final(sim_search *s, int32_t k, sim_err *err)
{
    if (!s->store || s->rank != 0 || k <= 0) return 0;
    int32_t top[100];
    if (k > 100) k = 100;
    int32_t n = sim_search_ranking_distinct(s, top, NULL, k);
    if (n > k) n = k;
    sim_scenario *sc = malloc(sizeof *sc);
    if (!sc) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    int rc = 0;
    for (int32_t q = 0; q < n && rc == 0; q++) {
        int32_t i = top[q];
        const sim_search_result *r = &s->res[i];
        /* A throughput-latency curve below the rate found (open loop). */
        static const double frac[] = {0.2, 0.4, 0.6, 0.8, 0.9};
        for (size_t fi = 0; fi < sizeof frac / sizeof frac[0] && !s->closed && rc == 0; fi++) {
            sim_summary cs;
            char *params = NULL;
            if ((rc = sim_search_apply(s, i, r->rate * frac[fi], r->requests, sc, err)) < 0) break;
            if ((rc = sim_cluster_simulate(sc, s->perf_cache, &cs, NULL, err)) < 0) break;
            if ((rc = sim_search_probe_params(s, i, -1, 0, 0, &params)) < 0) {
                rc = sim_err_set(err, rc, "out of memory");
                break;
            }
            /* probe -1 carries the curve's own rate */
            json_t *j = json_loads(params, 0, NULL);
            free(params);
            params = NULL;
            json_t *q2 = j ? json_object_get(j, "search") : NULL;
            if (q2) {
                json_object_set_new(q2, "rate", json_real(r->rate * frac[fi]));
                json_object_set_new(q2, "curve", json_true());
                params = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
            }
            json_decref(j);
            if (!params) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                break;
            }
            rc = sim_store_write_run(s->store, sc, s->scenario_text, params, &cs, NULL, NULL, err);
            free(params);
        }
        if (rc < 0) break;
        sim_cluster *cl = NULL;
        sim_summary sum;
        char *params = NULL;
        if ((rc = sim_search_apply(s, i, s->closed ? 0 : r->rate, r->requests, sc, err)) < 0) break;
        sc->output.store_requests = 1;
        if ((rc = sim_cluster_simulate(sc, s->perf_cache, &sum, &cl, err)) < 0) break;
        if ((rc = sim_search_probe_params(s, i, r->best_probe, 1, q + 1, &params)) < 0)
            rc = sim_err_set(err, rc, "out of memory");
        else
            rc = sim_store_write_run(s->store, sc, s->scenario_text, params, &sum, sim_cluster_metrics(cl), NULL, err);
        free(params);
        sim_cluster_destroy(cl);
    }
    free(sc);
    return rc;
}

/* ---- the run ------------------------------------------------------------ */

/* Joins the MPI job when asked; ranks on one node share its cores unless
 * threads were given. */
static int search_mpi_join(sim_search *s, sim_err *err)
{
    int32_t local = 1;
    s->rank = 0;
    s->ranks = 1;
    if (s->opts.use_mpi) {
        if (sim_search_mpi_start(&s->rank, &s->ranks, &local) < 0)
            return sim_err_set(err, SIM_ENOTSUP, "search: MPI requested but this servesim was built without MPI");
        /* Ranks on one node share its cores unless threads were given. */
        if (s->opts.threads <= 0 && s->sc.search.threads <= 0 && local > 1) {
            s->threads /= local;
            if (s->threads < 1) s->threads = 1;
        }
    }
    return 0;
}

/* The next wave: up to SIM_SEARCH_WAVE candidates from idx[*pos..n_order),
 * those whose bound is at most thr (the k-th best score) pruned on the way.
 * Returns how many. */
static int32_t wave_pick(sim_search *s, const int32_t *idx, int32_t n_order, int32_t *pos, double thr, int32_t k,
                         int32_t *wave)
{
    int32_t nw = 0;
    while (*pos < n_order && nw < SIM_SEARCH_WAVE) {
        int32_t i = idx[(*pos)++];
        sim_search_result *r = &s->res[i];
        if (r->bound_score <= thr) {
            r->status = SIM_CAND_PRUNED;
            snprintf(r->reason, sizeof r->reason, "bound %.4g < #%d's %.4g %s", r->bound_score, (int)k, thr,
                     s->objective_cost ? "tok/s/GPU per USD/GPU-h" : "tok/s/GPU");
            pthread_mutex_lock(&s->mu);
            s->pruned++;
            s->done++;
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        wave[nw++] = i;
    }
    return nw;
}

/* Simulates this rank's share of the wave (split by the requests each
 * simulation sends), takes in the other ranks' results, and stores the
 * wave's (rank 0). */
static int wave_run(sim_search *s, const int32_t *wave, int32_t nw, sim_err *err)
{
    int32_t mine[SIM_SEARCH_WAVE], owner[SIM_SEARCH_WAVE];
    double cost[SIM_SEARCH_WAVE];
    int rc = 0;
    int32_t nm = 0;
    for (int32_t j = 0; j < nw; j++) cost[j] = (double)s->res[wave[j]].requests;
    sim_search_assign(cost, nw, s->ranks, owner);
    for (int32_t j = 0; j < nw; j++)
        if (owner[j] == s->rank) mine[nm++] = wave[j];
    parallel_for(s, mine, nm, 0);
    if (s->ranks > 1 && (rc = sim_search_mpi_wave_exchange(s, wave, owner, nw, err)) < 0) return rc;
    if (s->ranks > 1) {
        pthread_mutex_lock(&s->mu);
        for (int32_t j = 0; j < nw; j++)
            if (owner[j] != s->rank && s->res[wave[j]].status != SIM_CAND_PENDING) {
                s->done++;
                s->evaluated++;
                if (s->res[wave[j]].status == SIM_CAND_OK && (s->best < 0 || better(s, wave[j], s->best)))
                    s->best = wave[j];
            }
        pthread_mutex_unlock(&s->mu);
    }
    if (s->store && s->rank == 0)
        for (int32_t j = 0; j < nw && rc == 0; j++)
            if (s->res[wave[j]].status != SIM_CAND_PENDING) rc = store_candidate(s, wave[j], err);
    return rc;
}

int sim_search_run(sim_search *s, sim_err *err)
{
    double t0 = sim_wall_s();
    int rc = search_mpi_join(s, err);
    if (rc) return rc;
    int32_t *idx = malloc((size_t)s->n * sizeof *idx);
    if (!idx) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    for (int32_t i = 0; i < s->n; i++) idx[i] = i;
    parallel_for(s, idx, s->n, 1);
    int32_t n_order = 0;
    for (int32_t i = 0; i < s->n; i++)
        if (s->res[i].status == SIM_CAND_PENDING) idx[n_order++] = i;
    sort_idx(s, idx, n_order, bound_first);
    const int prune = s->sc.search.prune && !s->opts.no_prune;
    const int32_t k = s->sc.search.top_k;
    int32_t pos = 0, wave[SIM_SEARCH_WAVE];
    s->done = s->n - n_order;
    s->pruned = s->evaluated = 0;
    s->best = -1;
    while (pos < n_order) {
        if (sim_search_stopping(s)) break;
        double thr = prune ? kth_best(s, k) : -INFINITY;
        int32_t nw = wave_pick(s, idx, n_order, &pos, thr, k, wave);
        if ((rc = wave_run(s, wave, nw, err)) < 0) break;
        pthread_mutex_lock(&s->mu);
        report(s, 1);
        pthread_mutex_unlock(&s->mu);
    }
    s->interrupted = sim_search_stopping(s) && rc == 0;
    free(idx);
    if (rc == 0 && !s->interrupted && s->sc.search.replications >= 2) rc = sim_search_replicate(s, err);
    s->wall_s = sim_wall_s() - t0;
    return rc;
}

/* ---- accessors ---------------------------------------------------------- */

int32_t sim_search_count(const sim_search *s) { return s->n; }
const sim_search_cand *sim_search_cand_get(const sim_search *s, int32_t i) { return &s->cands[i]; }
const sim_search_result *sim_search_result_get(const sim_search *s, int32_t i) { return &s->res[i]; }
const sim_scenario *sim_search_scenario(const sim_search *s) { return &s->sc; }

void sim_search_stats_get(const sim_search *s, sim_search_stats *out)
{
    memset(out, 0, sizeof *out);
    out->candidates = s->n;
    for (int32_t i = 0; i < s->n; i++) {
        switch (s->res[i].status) {
        case SIM_CAND_INFEASIBLE: out->infeasible++; break;
        case SIM_CAND_PRUNED: out->pruned++; break;
        case SIM_CAND_OK: out->ok++; out->evaluated++; break;
        case SIM_CAND_PENDING: out->undecided++; break;
        case SIM_CAND_SLO_MISSED:
        case SIM_CAND_ERROR:
            if (s->res[i].n_probes > 0) out->evaluated++;
            else out->infeasible++; /* analytically unreachable SLO */
            break;
        default: break;
        }
    }
    out->simulations = 0;
    for (int32_t i = 0; i < s->n; i++) out->simulations += s->res[i].n_probes;
    out->wall_s = s->wall_s;
    out->sim_wall_s = 0;
    for (int32_t i = 0; i < s->n; i++) out->sim_wall_s += s->res[i].wall_s;
    out->workers = s->threads * s->ranks;
    out->ranks = s->ranks;
    out->rank = s->rank;
    out->fixed_rate = s->fixed;
    out->objective_cost = s->objective_cost;
    out->objective_energy = s->objective_energy;
    out->interrupted = s->interrupted;
    out->hetero = s->hetero;
    out->autoscale = s->n_as > 0;
    out->percentile = s->percentile;
    snprintf(out->notes, sizeof out->notes, "%s", s->notes);
}
