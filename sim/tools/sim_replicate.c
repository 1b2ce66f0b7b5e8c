/* sim_replicate — see sim_replicate.h. */
#include "sim_replicate.h"

#include "calib_table_cache.h"
#include "sim_cluster.h"
#include "sim_pfor.h"
#include "sim_rng.h"

#include <math.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const sim_scenario *sc;
    calib_table_cache *cache;
    sim_replicate_result *r;
    int *rc;                 /* n: each run's return code */
    char (*msg)[256];        /* n: each run's error */
} rep_job;

static void rep_one(void *arg, int64_t i)
{
    rep_job *j = arg;
    sim_err err = {{0}};
    sim_scenario *sc = malloc(sizeof *sc);
    sim_cluster *cl = NULL;
    sim_summary sum;
    if (!sc) {
        j->rc[i] = SIM_ENOMEM;
        snprintf(j->msg[i], sizeof j->msg[i], "out of memory");
        return;
    }
    *sc = *j->sc;
    sc->seed = j->r->seeds[i];
    sc->output.db[0] = '\0';
    /* The first replication keeps its cluster to describe the deployment. */
    int rc = sim_cluster_simulate(sc, j->cache, &sum, i == 0 ? &cl : NULL, &err);
    if (cl) sim_cluster_describe(cl, j->r->describe, sizeof j->r->describe);
    j->rc[i] = rc;
    if (rc < 0) {
        snprintf(j->msg[i], sizeof j->msg[i], "%.250s", err.msg);
    } else {
        sim_headline_values(&sum, j->r->values[i]);
        j->r->overloaded[i] = sum.overloaded != 0;
        if (i == 0) j->r->n_gpus = sum.n_gpus;
    }
    sim_cluster_destroy(cl);
    free(sc);
}

void sim_replicate_free(sim_replicate_result *r)
{
    if (!r) return;
    free(r->seeds);
    free(r->overloaded);
    free(r->values);
    memset(r, 0, sizeof *r);
}

int sim_replicate_run(const sim_scenario *sc, int32_t n, int32_t jobs, double level, sim_replicate_result *out,
                      sim_err *err)
{
    memset(out, 0, sizeof *out);
    if (n < 2 || n > SIM_REPLICATE_MAX)
        return sim_err_set(err, SIM_EINVAL, "replications: expected 2..%d runs, got %d", SIM_REPLICATE_MAX, (int)n);
    if (!(level > 0 && level < 1))
        return sim_err_set(err, SIM_EINVAL, "replications: the interval level must be in (0, 1), got %g", level);
    out->n = n;
    out->level = level;
    out->base_seed = sc->seed;
    out->seeds = calloc((size_t)n, sizeof *out->seeds);
    out->overloaded = calloc((size_t)n, sizeof *out->overloaded);
    out->values = calloc((size_t)n, sizeof *out->values);
    rep_job j = {.sc = sc, .r = out, .rc = calloc((size_t)n, sizeof(int)), .msg = calloc((size_t)n, sizeof *j.msg)};
    int rc = 0;
    if (!out->seeds || !out->overloaded || !out->values || !j.rc || !j.msg) {
        rc = sim_err_set(err, SIM_ENOMEM, "replications: out of memory");
        goto out;
    }
    if ((rc = calib_table_cache_create(&j.cache, err)) < 0) goto out;
    for (int32_t i = 0; i < n; i++) out->seeds[i] = sim_rng_replication_seed(sc->seed, (uint64_t)i);
    sim_pfor(n, jobs, rep_one, &j);
    for (int32_t i = 0; i < n; i++)
        if (j.rc[i] < 0) {
            rc = sim_err_set(err, j.rc[i], "replication %d (seed %llu): %s", (int)i,
                             (unsigned long long)out->seeds[i], j.msg[i]);
            goto out;
        }
    double *col = malloc((size_t)n * sizeof *col);
    if (!col) {
        rc = sim_err_set(err, SIM_ENOMEM, "replications: out of memory");
        goto out;
    }
    for (int h = 0; h < SIM_HL_COUNT; h++) {
        /* Over the runs that have the figure (no TPOT with one-token answers):
         * fewer than two leave it without an interval (n says how many had it). */
        int32_t k = 0;
        for (int32_t i = 0; i < n; i++)
            if (isfinite(out->values[i][h])) col[k++] = out->values[i][h];
        sim_interval_t(col, k, level, &out->iv[h]);
    }
    free(col);
    for (int32_t i = 0; i < n; i++) out->n_overloaded += out->overloaded[i];
out:
    calib_table_cache_free(j.cache);
    free(j.rc);
    free(j.msg);
    if (rc < 0) sim_replicate_free(out);
    return rc;
}

void sim_replicate_print_table(FILE *f, const sim_replicate_result *r)
{
    double t = sim_interval_t_quantile(r->level, r->n);
    fprintf(f, "replications %d, seeds derived from %llu (replay one: --seed %llu for the first); "
               "%.0f %% Student-t intervals, t = %.3f\n\n",
            (int)r->n, (unsigned long long)r->base_seed, (unsigned long long)r->seeds[0], 100 * r->level, t);
    fprintf(f, "%-20s %12s %11s %12s %12s %12s\n", "figure", "mean", "± half", "low", "high", "sd");
    for (int h = 0; h < SIM_HL_COUNT; h++) {
        const sim_interval *iv = &r->iv[h];
        int prec = h == SIM_HL_SLO_ATTAINMENT ? 4 : 3;
        if (iv->n < 2) {
            fprintf(f, "%-20s %12s %11s %12s %12s %12s   (%lld runs had it)\n", sim_headline_label((sim_headline)h),
                    "-", "-", "-", "-", "-", (long long)iv->n);
            continue;
        }
        fprintf(f, "%-20s %12.*f %11.*f %12.*f %12.*f %12.*f\n", sim_headline_label((sim_headline)h), prec,
                iv->mean, prec, iv->half_width, prec, iv->low, prec, iv->high, prec, iv->sd);
    }
    if (r->n_overloaded)
        fprintf(f, "\nWARNING: %d of %d runs stopped on overload; their partial figures are included\n",
                (int)r->n_overloaded, (int)r->n);
}

/* {mean, half_width, low, high, sd, n}; nulls when fewer than two runs had the figure. */
static json_t *interval_json(const sim_interval *iv)
{
    json_t *o = json_object();
    int have = iv->n >= 2;
    json_object_set_new(o, "mean", have ? json_real(iv->mean) : json_null());
    json_object_set_new(o, "half_width", have ? json_real(iv->half_width) : json_null());
    json_object_set_new(o, "low", have ? json_real(iv->low) : json_null());
    json_object_set_new(o, "high", have ? json_real(iv->high) : json_null());
    json_object_set_new(o, "sd", have ? json_real(iv->sd) : json_null());
    json_object_set_new(o, "n", json_integer(iv->n));
    return o;
}

int sim_replicate_write_json(FILE *f, const sim_replicate_result *r, const sim_scenario *sc)
{
    json_t *o = json_object(), *seeds = json_array(), *ivs = json_object(), *runs = json_array();
    if (!o || !seeds || !ivs || !runs) {
        json_decref(o);
        json_decref(seeds);
        json_decref(ivs);
        json_decref(runs);
        return SIM_ENOMEM;
    }
    json_object_set_new(o, "scenario", json_string(sc->name));
    json_object_set_new(o, "replications", json_integer(r->n));
    json_object_set_new(o, "level", json_real(r->level));
    json_object_set_new(o, "base_seed", json_integer((json_int_t)r->base_seed));
    for (int32_t i = 0; i < r->n; i++) json_array_append_new(seeds, json_integer((json_int_t)r->seeds[i]));
    json_object_set_new(o, "seeds", seeds);
    json_object_set_new(o, "overloaded", json_integer(r->n_overloaded));
    json_object_set_new(o, "n_gpus", json_integer(r->n_gpus));
    for (int h = 0; h < SIM_HL_COUNT; h++)
        json_object_set_new(ivs, sim_headline_key((sim_headline)h), interval_json(&r->iv[h]));
    json_object_set_new(o, "intervals", ivs);
    for (int32_t i = 0; i < r->n; i++) {
        json_t *run = json_object();
        json_object_set_new(run, "seed", json_integer((json_int_t)r->seeds[i]));
        json_object_set_new(run, "overloaded", json_boolean(r->overloaded[i]));
        json_object_set_new(run, "figures", sim_headline_json(r->values[i]));
        json_array_append_new(runs, run);
    }
    json_object_set_new(o, "runs", runs);
    int rc = json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    fputc('\n', f);
    json_decref(o);
    return rc == 0 ? 0 : SIM_EIO;
}
