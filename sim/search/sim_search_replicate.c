/* sim_search_replicate — ties the single-seed search cannot resolve
 * (search.replications, see sim_search.h and sim_search_impl.h).
 *
 * Every probe of the search runs at the scenario seed, so two deployments
 * whose scores differ by less than one sample path's noise are ranked by
 * that noise. With search.replications = N >= 2 the best candidate of each
 * of the top_k distinct deployments is re-run N times at the rate the
 * search found for it, with the seeds `servesim run --replications` uses
 * (sim_rng_replication_seed of the scenario seed), and each run's objective
 * is computed as the search computes it: rate × SLO attainment × mean
 * output tokens per request / GPUs (the run's own mean output; the closed
 * loop: its goodput), per USD/GPU-h for the cost objective. The ranking
 * then follows the means, and a candidate whose 95 % interval overlaps the
 * leader's is marked indistinguishable (rep_tied). The runs go to the
 * search's threads (sim_pfor); the result does not depend on their count.
 * With a results store each deployment's interval is written as a
 * replication set (tables replication_sets and intervals, figure
 * "search.score"); the runs themselves are not stored. */
#include "sim_search_impl.h"

#include "sim_cluster.h"
#include "sim_headline.h"
#include "sim_interval.h"
#include "sim_pfor.h"
#include "sim_rng.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    sim_search *s;
    const int32_t *cand;     /* candidate of each deployment */
    int32_t reps;
    double *score;           /* [deployment × reps] */
    int *over;               /* [deployment × reps]: 1 when the run stopped on overload */
    int *rc;
    char (*msg)[256];
} rep_job;

static double run_objective(const sim_search *s, int32_t i, const sim_summary *sum)
{
    const sim_search_cand *c = &s->cands[i];
    const sim_search_result *r = &s->res[i];
    double out = sum->req_per_s > 0 ? sum->output_tokens_per_s / sum->req_per_s : r->mean_output;
    double good = sim_headline_attainment(sum);
    /* Autoscaling in the space: per GPU this run held, as the search scores it. */
    double gpus = s->n_as > 0 ? sim_search_gpus_held(c, sum) : c->gpus;
    double g = s->closed ? sum->goodput_req_per_s * out / gpus : r->rate * good * out / gpus;
    return sim_search_score_of(s, g, r->price, sum->energy.enabled ? sum->energy.joules_per_output_token : 0);
}

/* With a results store: one replication set per replicated deployment
 * (sim_store_write_replications), its objective as figure "search.score"
 * with its interval, params_json.search naming the session, candidate,
 * rank and rate and whether it is indistinguishable from the leader. */
static int store_sets(sim_search *s, const int32_t *top, int32_t n, sim_err *err)
{
    static const char *const fig[] = {"search.score"};
    const char *objective = s->objective_energy ? "energy" : s->objective_cost ? "cost" : "goodput_per_gpu";
    int rc = 0;
    sim_scenario *sc = malloc(sizeof *sc);
    if (!sc) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    for (int32_t d = 0; d < n && rc == 0; d++) {
        int32_t i = top[d];
        const sim_search_result *r = &s->res[i];
        if (r->rep_n < 2) continue;
        if ((rc = sim_search_apply(s, i, s->closed ? 0 : r->rate, r->requests, sc, err)) < 0) break;
        json_t *o = json_object(), *q = json_object();
        json_object_set_new(q, "session", json_string(s->session));
        json_object_set_new(q, "candidate", json_integer(i));
        json_object_set_new(q, "label", json_string(s->cands[i].label));
        json_object_set_new(q, "rank", json_integer(d + 1));
        json_object_set_new(q, "rate", json_real(r->rate));
        json_object_set_new(q, "objective", json_string(objective));
        json_object_set_new(q, "single_seed_score", json_real(r->score));
        json_object_set_new(q, "indistinguishable_from_best", json_boolean(r->rep_tied));
        json_object_set_new(o, "search", q);
        char *params = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(o);
        sim_interval iv = {.mean = r->rep_mean, .half_width = r->rep_half, .low = r->rep_low, .high = r->rep_high,
                           .sd = r->rep_sd, .n = r->rep_n};
        sim_store_replications rows = {.n = r->rep_n, .level = 0.95, .overloaded = r->rep_overloaded, .n_figures = 1,
                                       .figures = fig, .iv = &iv};
        rc = params ? sim_store_write_replications(s->store, sc, s->scenario_text, params, &rows, NULL, err)
                    : sim_err_set(err, SIM_ENOMEM, "out of memory");
        free(params);
    }
    free(sc);
    return rc;
}

static void rep_one(void *arg, int64_t k)
{
    rep_job *j = arg;
    sim_search *s = j->s;
    int32_t i = j->cand[k / j->reps];
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_summary sum;
    int rc = sc ? sim_search_apply(s, i, s->closed ? 0 : s->res[i].rate, s->res[i].requests, sc, &err)
                : sim_err_set(&err, SIM_ENOMEM, "out of memory");
    if (rc == 0) {
        sc->seed = sim_rng_replication_seed(s->sc.seed, (uint64_t)(k % j->reps));
        rc = sim_cluster_simulate(sc, s->perf_cache, &sum, NULL, &err);
    }
    j->rc[k] = rc;
    if (rc < 0) {
        snprintf(j->msg[k], sizeof j->msg[k], "%.250s", err.msg);
    } else {
        j->score[k] = run_objective(s, i, &sum);
        j->over[k] = sum.overloaded != 0;
    }
    free(sc);
}

int sim_search_replicate(sim_search *s, sim_err *err)
{
    const int32_t reps = s->sc.search.replications, k = s->sc.search.top_k;
    int32_t *top = malloc((size_t)(k > 0 ? k : 1) * sizeof *top);
    if (!top) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    int32_t n = sim_search_ranking_distinct(s, top, NULL, k);
    if (n > k) n = k;
    int64_t total = (int64_t)n * reps;
    rep_job j = {.s = s, .cand = top, .reps = reps, .score = calloc((size_t)(total > 0 ? total : 1), sizeof(double)),
                 .over = calloc((size_t)(total > 0 ? total : 1), sizeof(int)),
                 .rc = calloc((size_t)(total > 0 ? total : 1), sizeof(int)),
                 .msg = calloc((size_t)(total > 0 ? total : 1), sizeof *j.msg)};
    int rc = 0;
    if (!j.score || !j.over || !j.rc || !j.msg) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
        goto out;
    }
    sim_pfor(total, s->threads > 0 ? s->threads : 1, rep_one, &j);
    for (int64_t q = 0; q < total; q++)
        if (j.rc[q] < 0) {
            rc = sim_err_set(err, j.rc[q], "search.replications: %s, seed %d: %s", s->cands[top[q / reps]].label,
                             (int)(q % reps), j.msg[q]);
            goto out;
        }
    s->simulations += total;
    int32_t lead = -1;
    for (int32_t d = 0; d < n; d++) {
        sim_search_result *r = &s->res[top[d]];
        sim_interval iv;
        if (sim_interval_t(j.score + (int64_t)d * reps, reps, 0.95, &iv) < 0) continue;
        r->rep_n = reps;
        r->rep_mean = iv.mean, r->rep_half = iv.half_width, r->rep_low = iv.low, r->rep_high = iv.high;
        r->rep_sd = iv.sd;
        r->rep_overloaded = 0;
        for (int32_t q = 0; q < reps; q++) r->rep_overloaded += j.over[(int64_t)d * reps + q];
        if (lead < 0 || r->rep_mean > s->res[lead].rep_mean) lead = top[d];
    }
    for (int32_t d = 0; lead >= 0 && d < n; d++) {
        sim_search_result *r = &s->res[top[d]];
        sim_interval a = {.low = r->rep_low, .high = r->rep_high},
                     b = {.low = s->res[lead].rep_low, .high = s->res[lead].rep_high};
        r->rep_tied = top[d] != lead && r->rep_n >= 2 && sim_interval_overlap(&a, &b);
    }
    if (lead >= 0) s->best = lead;
    if (s->store && s->rank == 0) rc = store_sets(s, top, n, err);
out:
    free(top);
    free(j.score);
    free(j.over);
    free(j.rc);
    free(j.msg);
    return rc;
}
