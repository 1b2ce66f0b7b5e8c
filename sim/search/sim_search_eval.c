/* sim_search_eval — simulating one candidate (see sim_search.h).
 *
 * A probe is one simulation of the candidate's deployment at one arrival
 * rate with the search's request count and the scenario seed, so a probe is
 * reproducible bit for bit (the recommended scenario replays it). It passes
 * when the run did not overload, every request fitted, and TTFT and TPOT at
 * the SLO percentile are within their bounds. The highest passing rate is
 * found by bisection on [0, bound]: the bound is never probed itself, so the
 * rate found — and the goodput computed from it — stays below the bound,
 * which is what makes bound pruning exact. Probes queue-limit themselves:
 * a request waiting 10× the TTFT bound (at least 10 s) means arrivals exceed
 * capacity, so the run stops early as overloaded (not with autoscaling in
 * the space, search.autoscale: every candidate then runs the scenario's own
 * arrivals once, and queueing through a cold start is expected). */
#include "sim_search_impl.h"
#include "sim_clock.h"

#include "sim_cluster.h"
#include "sim_headline.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int sim_search_apply(const sim_search *s, int32_t i, double rate, int64_t requests, sim_scenario *out,
                     sim_err *err)
{
    if (i < 0 || i >= s->n) return sim_err_set(err, SIM_EINVAL, "search: no candidate %d", (int)i);
    const sim_search_cand *c = &s->cands[i];
    *out = s->sc;
    snprintf(out->hardware.gpu, sizeof out->hardware.gpu, "%s", c->gpu);
    out->deployment.mode = c->mode;
    out->deployment.n_pools = c->n_pools;
    sim_pool_cfg pools[SIM_SEARCH_MAX_POOLS];
    for (int32_t p = 0; p < c->n_pools; p++) sim_search_pool_cfg(s, c, p, &pools[p]);
    for (int32_t p = 0; p < c->n_pools; p++) {
        out->deployment.pools[p] = pools[p];
        /* A pool on another GPU type than the first (a heterogeneous fleet) names its own. */
        if (strcmp(c->pools[p].gpu, c->gpu) != 0)
            snprintf(out->deployment.pools[p].gpu, sizeof out->deployment.pools[p].gpu, "%s", c->pools[p].gpu);
    }
    if (c->lambda >= 0) out->routing.lambda = c->lambda;
    if (c->encode_instances >= 0) {
        /* The encode pool searched; its encoders on deployment.encode.gpu, else hardware.gpu (= c->gpu). */
        out->deployment.encode_instances = c->encode_instances;
        if (c->encode_instances > 0 && strcmp(c->encode_gpu, c->gpu) != 0)
            snprintf(out->deployment.encode_gpu, sizeof out->deployment.encode_gpu, "%s", c->encode_gpu);
    }
    /* With autoscaling in the space the scenario's own requests (0: until its duration_s). */
    out->workload.requests = s->n_as > 0 ? s->sc.workload.requests
                                         : requests > 0 ? requests : sim_search_requests_for(s, c);
    out->sweep.key[0] = '\0';
    out->sweep.values[0] = '\0';
    out->output.db[0] = '\0';
    if (rate > 0) {
        if (s->sc.workload.trace.format != SIM_TRACE_NONE) {
            const sim_search_lens *L = NULL;
            for (int32_t k = 0; k < s->n_lens; k++)
                if (s->lens[k].n_req_key == out->workload.requests) L = &s->lens[k];
            if (!L || L->base_rate <= 0)
                return sim_err_set(err, SIM_EINVAL, "search: cannot rescale the trace (no arrival rate measured)");
            out->workload.trace.time_scale = 1.0;
            out->workload.trace.rate_scale = rate / L->base_rate;
        } else {
            out->workload.arrival.rate = rate;
        }
    }
    /* Not with autoscaling in the space: an autoscaled fleet queues while a
     * new instance cold-starts, which is no sign of unbounded growth; every
     * candidate then stops on the scenario's own overload settings. */
    if (s->sc.slo.ttft_ms > 0 && s->n_as == 0) {
        double q = s->sc.slo.ttft_ms * 1e-2; /* 10× the bound, in seconds */
        if (q < 10) q = 10;
        if (q < out->overload.max_queue_delay_s) out->overload.max_queue_delay_s = q;
    }
    return 0;
}

static double pct(const sim_stat *st, double p)
{
    if (p >= 99.85) return st->p999;
    if (p >= 98.5) return st->p99;
    if (p >= 85) return st->p90;
    return st->p50;
}

static const char *pct_name(double p)
{
    return p >= 99.85 ? "p99.9" : p >= 98.5 ? "p99" : p >= 85 ? "p90" : "p50";
}

static int judge(const sim_search *s, const sim_summary *sum, char *why, size_t wl)
{
    const sim_slo_cfg *slo = &s->sc.slo;
    const char *pn = pct_name(s->percentile);
    why[0] = '\0';
    if (sum->overloaded) {
        snprintf(why, wl, "overloaded (queues grew without bound)");
        return 0;
    }
    if (sum->requests_completed <= 0) {
        snprintf(why, wl, "no request completed");
        return 0;
    }
    if (sum->requests_rejected > 0) {
        snprintf(why, wl, "%lld requests never fit the KV cache", (long long)sum->requests_rejected);
        return 0;
    }
    /* workload.classes: every class against its own SLO, over the requests
     * served; shed ones (admission control) only lower the goodput. */
    for (int32_t c = 0; c < sum->n_classes; c++) {
        const sim_class_summary *cs = &sum->classes[c];
        double ct = pct(&cs->ttft_ms, s->percentile), cd = pct(&cs->tpot_ms, s->percentile);
        double ce = pct(&cs->e2e_ms, s->percentile);
        if (cs->slo.ttft_ms > 0 && cs->ttft_ms.n > 0 && ct > cs->slo.ttft_ms) {
            snprintf(why, wl, "class %s: TTFT %s %.0f ms > %.0f ms", cs->name, pn, ct, cs->slo.ttft_ms);
            return 0;
        }
        if (cs->slo.tpot_ms > 0 && cs->tpot_ms.n > 0 && cd > cs->slo.tpot_ms) {
            snprintf(why, wl, "class %s: TPOT %s %.1f ms > %.1f ms", cs->name, pn, cd, cs->slo.tpot_ms);
            return 0;
        }
        if (cs->slo.e2e_ms > 0 && cs->e2e_ms.n > 0 && ce > cs->slo.e2e_ms) {
            snprintf(why, wl, "class %s: E2E %s %.0f ms > %.0f ms", cs->name, pn, ce, cs->slo.e2e_ms);
            return 0;
        }
    }
    if (sum->n_classes > 0) return 1;
    double t = pct(&sum->ttft_ms, s->percentile), d = pct(&sum->tpot_ms, s->percentile);
    if (slo->ttft_ms > 0 && t > slo->ttft_ms) {
        snprintf(why, wl, "TTFT %s %.0f ms > %.0f ms", pn, t, slo->ttft_ms);
        return 0;
    }
    if (slo->tpot_ms > 0 && sum->tpot_ms.n > 0 && d > slo->tpot_ms) {
        snprintf(why, wl, "TPOT %s %.1f ms > %.1f ms", pn, d, slo->tpot_ms);
        return 0;
    }
    return 1;
}

static int run_probe(const sim_search *s, int32_t i, double rate, int64_t requests, sim_search_probe *pr,
                     char *prices, size_t pl, char *errbuf, size_t el)
{
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_cluster *cl = NULL;
    int rc;
    memset(pr, 0, sizeof *pr);
    pr->rate = rate;
    if (!sc) {
        snprintf(errbuf, el, "out of memory");
        return SIM_ENOMEM;
    }
    if ((rc = sim_search_apply(s, i, rate, requests, sc, &err)) < 0 ||
        (rc = sim_cluster_simulate(sc, s->perf_cache, &pr->sum, &cl, &err)) < 0) {
        snprintf(errbuf, el, "%.*s", (int)el - 1, err.msg);
        goto fail;
    }
    const char *pdb = sim_cluster_perf_db(cl), *base = pdb ? strrchr(pdb, '/') : NULL;
    if (pdb) snprintf(prices, pl, "perf-db %s", base ? base + 1 : pdb);
    else snprintf(prices, pl, "analytic");
    pr->pass = judge(s, &pr->sum, pr->why, sizeof pr->why);
fail:
    sim_cluster_destroy(cl);
    free(sc);
    return rc;
}

double sim_search_score_of(const sim_search *s, double goodput_per_gpu, double price, double joules_per_token)
{
    if (s->objective_energy) return joules_per_token > 0 ? 1.0 / joules_per_token : 0;
    return s->objective_cost ? (price > 0 ? goodput_per_gpu / price : 0) : goodput_per_gpu;
}

static void fill_metrics(const sim_search *s, const sim_search_cand *c, sim_search_result *res)
{
    const sim_summary *sum = &res->probes[res->best_probe].sum;
    double good = sim_headline_attainment(sum);
    double r;
    if (s->closed) {
        /* Closed loop: measured, never above the bound. */
        r = sum->goodput_req_per_s < res->bound_rate ? sum->goodput_req_per_s : res->bound_rate;
        good = 1;
        res->rate = sum->req_per_s;
    } else {
        r = res->rate < res->bound_rate ? res->rate : res->bound_rate;
    }
    /* Classes: the served requests' own mean output (admission control
     * changes the mix from the one offered). */
    double mean_out = s->classes && sum->req_per_s > 0 ? sum->output_tokens_per_s / sum->req_per_s : res->mean_output;
    /* Autoscaling in the space: per GPU held (the time-weighted mean over the
     * run; a fixed fleet holds all its GPUs), at least the GPUs at every
     * pool's min, so the bound (sim_search_bound) stays above. */
    double gpus = c->gpus;
    if (s->n_as > 0) {
        res->gpu_hours = sim_search_gpu_hours(c, sum);
        res->gpus_held = sim_search_gpus_held(c, sum);
        res->requests_missed = sum->requests_completed - sum->requests_good;
        gpus = res->gpus_held;
    }
    res->goodput_per_gpu = r * good * mean_out / gpus;
    res->run_tok_s_gpu = sum->output_tokens_per_s_per_gpu;
    res->tok_s_user = sum->tpot_ms.mean > 0 ? 1000.0 / sum->tpot_ms.mean : 0;
    res->ttft_ms = pct(&sum->ttft_ms, s->percentile);
    res->tpot_ms = pct(&sum->tpot_ms, s->percentile);
    res->cost_per_mtok = res->price > 0 && res->goodput_per_gpu > 0 ? res->price / 3600.0 / res->goodput_per_gpu * 1e6 : 0;
    res->joules_per_token = sum->energy.enabled ? sum->energy.joules_per_output_token : 0;
    res->score = sim_search_score_of(s, res->goodput_per_gpu, res->price, res->joules_per_token);
}

void sim_search_evaluate(const sim_search *s, int32_t i, sim_search_result *res)
{
    const sim_search_cand *c = &s->cands[i];
    char errbuf[256] = "";
    double t0 = sim_wall_s();
    res->n_probes = 0;
    res->best_probe = -1;
    if (!res->probes && !(res->probes = calloc(SIM_SEARCH_MAX_PROBES, sizeof *res->probes))) {
        res->status = SIM_CAND_ERROR;
        snprintf(res->reason, sizeof res->reason, "out of memory");
        return;
    }
    if (s->fixed) {
        double rate = s->closed ? 0 : s->sc.search.rate;
        sim_search_probe *pr = &res->probes[res->n_probes];
        if (run_probe(s, i, rate, res->requests, pr, res->prices, sizeof res->prices, errbuf, sizeof errbuf) < 0) goto error;
        res->n_probes = 1;
        res->rate = rate;
        if (pr->pass) {
            res->best_probe = 0;
            res->status = SIM_CAND_OK;
            res->reason[0] = '\0';
            fill_metrics(s, c, res);
        } else {
            res->status = SIM_CAND_SLO_MISSED;
            snprintf(res->reason, sizeof res->reason, "%s", pr->why);
        }
        res->wall_s = sim_wall_s() - t0;
        return;
    }
    double lo = 0, hi = res->bound_rate, fail_at = -1;
    char limit[160] = "";
    const double tol = s->sc.search.tolerance;
    /* The first probe sits just under the bound: where the bound is tight
     * one simulation settles the candidate; otherwise it is the top of the
     * bisection bracket. */
    while (res->n_probes < SIM_SEARCH_MAX_PROBES) {
        double r = res->n_probes == 0 ? hi * (1 - 0.5 * tol) : 0.5 * (lo + hi);
        sim_search_probe *pr = &res->probes[res->n_probes];
        if (res->n_probes > 0 && sim_search_stopping(s)) {
            /* Interrupted mid-bisection: left undecided, its probes dropped. */
            res->n_probes = 0;
            res->best_probe = -1;
            res->status = SIM_CAND_PENDING;
            snprintf(res->reason, sizeof res->reason, "not decided: the search was interrupted");
            res->wall_s = sim_wall_s() - t0;
            return;
        }
        if (run_probe(s, i, r, res->requests, pr, res->prices, sizeof res->prices, errbuf, sizeof errbuf) < 0) goto error;
        res->n_probes++;
        if (pr->pass) {
            lo = r;
            res->best_probe = res->n_probes - 1;
        } else {
            hi = r;
            fail_at = r;
            snprintf(limit, sizeof limit, "%s", pr->why);
        }
        if (lo > 0 && hi - lo <= tol * hi) break;
        if (lo == 0 && hi < res->bound_rate / 64) break; /* fails far below its capacity */
    }
    res->wall_s = sim_wall_s() - t0;
    if (res->best_probe < 0) {
        res->status = SIM_CAND_SLO_MISSED;
        snprintf(res->reason, sizeof res->reason, "SLO missed even at %.3g req/s: %s", fail_at, limit);
        return;
    }
    res->status = SIM_CAND_OK;
    res->rate = lo;
    if (fail_at > 0)
        snprintf(res->reason, sizeof res->reason, "at %.3g req/s: %s", fail_at, limit);
    else
        snprintf(res->reason, sizeof res->reason, "at its analytic bound (%s)", res->bound_by);
    fill_metrics(s, c, res);
    return;
error:
    res->wall_s = sim_wall_s() - t0;
    res->status = SIM_CAND_ERROR;
    snprintf(res->reason, sizeof res->reason, "%s", errbuf);
}

int sim_search_probe_params(const sim_search *s, int32_t i, int32_t probe, int best, int final_rank, char **out)
{
    const sim_search_cand *c = &s->cands[i];
    const sim_search_result *r = &s->res[i];
    static const sim_search_probe none;
    const sim_search_probe *pr = probe >= 0 && probe < r->n_probes ? &r->probes[probe] : &none;
    json_t *o = json_object(), *q = json_object();
    if (!o || !q) {
        json_decref(o);
        json_decref(q);
        return SIM_ENOMEM;
    }
    json_object_set_new(q, "session", json_string(s->session));
    json_object_set_new(q, "candidate", json_integer(c->id));
    json_object_set_new(q, "label", json_string(c->label));
    json_object_set_new(q, "mode", json_string(sim_mode_name(c->mode)));
    json_object_set_new(q, "gpus", json_integer(c->gpus));
    if (c->draft_tokens >= 0) json_object_set_new(q, "draft_tokens", json_integer(c->draft_tokens));
    if (c->autoscale >= 0) json_object_set_new(q, "autoscale", json_boolean(c->autoscale == 1));
    if (c->encode_instances >= 0) {
        json_object_set_new(q, "encode_instances", json_integer(c->encode_instances));
        if (c->encode_instances > 0) json_object_set_new(q, "encode_gpu", json_string(c->encode_gpu));
    }
    json_object_set_new(q, "probe", json_integer(probe));
    json_object_set_new(q, "rate", json_real(pr->rate));
    json_object_set_new(q, "pass", json_boolean(pr->pass));
    if (!pr->pass) json_object_set_new(q, "why", json_string(pr->why));
    json_object_set_new(q, "best", json_boolean(best));
    if (best) {
        json_object_set_new(q, "score", json_real(r->score));
        json_object_set_new(q, "goodput_per_gpu", json_real(r->goodput_per_gpu));
        json_object_set_new(q, "tok_s_user", json_real(r->tok_s_user));
        json_object_set_new(q, "ttft_ms", json_real(r->ttft_ms));
        json_object_set_new(q, "tpot_ms", json_real(r->tpot_ms));
        json_object_set_new(q, "percentile", json_real(s->percentile));
        json_object_set_new(q, "bound_rate", json_real(r->bound_rate));
        if (r->cost_per_mtok > 0) json_object_set_new(q, "cost_per_mtok", json_real(r->cost_per_mtok));
        if (s->hetero && r->price > 0) json_object_set_new(q, "usd_per_hour", json_real(r->price * c->gpus));
        if (s->n_as > 0) {
            json_object_set_new(q, "gpus_held", json_real(r->gpus_held));
            json_object_set_new(q, "gpu_hours", json_real(r->gpu_hours));
        }
    }
    if (s->hetero) {
        /* Each role's GPU type and count (the run's scenario names them too). */
        json_t *fleet = json_array();
        for (int32_t p = 0; p < c->n_pools; p++) {
            json_t *po = json_object();
            json_object_set_new(po, "role", json_string(sim_role_name(c->pools[p].role)));
            json_object_set_new(po, "gpu", json_string(c->pools[p].gpu));
            json_object_set_new(po, "instances", json_integer(c->pools[p].instances));
            json_object_set_new(po, "gpus", json_integer(c->pools[p].instances * c->pools[p].gpus));
            json_array_append_new(fleet, po);
        }
        if (c->encode_instances > 0) {
            json_t *po = json_object();
            json_object_set_new(po, "role", json_string("encode"));
            json_object_set_new(po, "gpu", json_string(c->encode_gpu));
            json_object_set_new(po, "instances", json_integer(c->encode_instances));
            json_object_set_new(po, "gpus", json_integer(c->encode_instances));
            json_array_append_new(fleet, po);
        }
        json_object_set_new(q, "fleet", fleet);
    }
    if (final_rank > 0) {
        json_object_set_new(q, "final", json_true());
        json_object_set_new(q, "rank", json_integer(final_rank));
    }
    json_object_set_new(o, "search", q);
    *out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return *out ? 0 : SIM_ENOMEM;
}
