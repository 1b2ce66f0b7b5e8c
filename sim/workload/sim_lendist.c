/* sim_lendist — request length distributions; declared in sim_workload.h.
 *
 * Every kind draws a real or integer value, rounds it and clamps it to
 * [min, max] (min >= 1), so callers always get a usable token count. Zipf
 * and empirical distributions precompute a gsl_ran_discrete alias table
 * once, so a draw is O(1) whatever the support size. The exact mean of the
 * clamped distribution is computed at create time where it has a closed or
 * finite form (fixed, uniform, zipf, empirical). */
#include "sim_workload.h"
#include "sim_file.h"
#include "sim_parse.h"

#include <ctype.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest zipf support (max - min + 1) we build a table for: 64 MiB of
 * weights, well past any real context length. */
#define LENDIST_ZIPF_MAX_SUPPORT (1 << 23)
#define LENDIST_LINE_MAX 256

struct sim_lendist {
    sim_dist_kind kind;
    int64_t min, max;
    int64_t fixed;                /* fixed: the clamped value */
    double mean, std;             /* normal: as configured */
    double mu, sigma;             /* lognormal: log-space parameters */
    gsl_ran_discrete_t *table;    /* zipf, empirical */
    int64_t *values;              /* empirical: value of table index i */
    double exact_mean;
};

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Rounds a real draw and clamps it to [min, max] without overflowing on
 * huge or non-finite values. */
static int64_t clamp_real(double x, int64_t lo, int64_t hi)
{
    if (!(x >= (double)lo)) return lo; /* also catches NaN */
    if (x >= (double)hi) return hi;
    return clamp64((int64_t)llround(x), lo, hi);
}

/* One line of a length file: `value` or `value,weight` into *val and *wt
 * (weight 1 when absent). Returns 0, 1 for a blank or '#' line, or the
 * error. The line is trimmed in place. */
static int lendist_parse_line(const char *path, long long lineno, char *line, ssize_t got, int64_t *val, double *wt,
                              sim_err *err)
{
    char *s = line;
    char *e = line + got;
    while (s < e && isspace((unsigned char)*s)) s++;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    if (s == e || *s == '#') return 1;
    *e = '\0';
    if (memchr(s, '\0', (size_t)(e - s)))
        return sim_err_set(err, SIM_EINVAL, "%s:%lld: unexpected NUL byte", path, lineno);
    char *comma = strchr(s, ',');
    if (comma) *comma = '\0';
    char *ve = comma ? comma : e; /* the value field, blanks before the comma left out */
    while (ve > s && isspace((unsigned char)ve[-1])) ve--;
    *val = 0;
    int vrc = sim_parse_i64_n(s, (size_t)(ve - s), val);
    if (vrc != SIM_PARSE_OK || *val < 1 || *val > INT32_MAX)
        return sim_err_set(err, SIM_EINVAL,
                           "%s:%lld: column 1 (value): expected an integer length in [1, %d], got '%.40s'", path,
                           lineno, INT32_MAX, s);
    *wt = 1.0;
    if (comma) {
        char *ws = comma + 1;
        const char *wp = ws; /* blanks after the comma skipped; the line's end is already trimmed */
        while (isspace((unsigned char)*wp)) wp++;
        if (sim_parse_double(wp, wt) != SIM_PARSE_OK || *wt < 0)
            return sim_err_set(err, SIM_EINVAL, "%s:%lld: column 2 (weight): expected a number >= 0, got '%.40s'",
                               path, lineno, ws);
    }
    return 0;
}

/* Parses a length file (one integer per line, or `value,weight`); blank
 * lines and lines starting with '#' are skipped. On success the caller owns
 * *values and *weights. */
static int lendist_read_empirical(const char *path, int64_t **values, double **weights,
                                  size_t *n_out, sim_err *err)
{
    int rc = 0;
    size_t n = 0, cap = 0;
    int64_t *v = NULL;
    double *w = NULL;
    char *line = NULL;
    size_t line_cap = 0;
    long long lineno = 0;
    FILE *f = NULL;
    if ((rc = sim_file_open_regular(path, "lengths", &f, err)) < 0) return rc;

    ssize_t got;
    while ((got = getline(&line, &line_cap, f)) >= 0) {
        lineno++;
        int64_t val;
        double wt;
        rc = lendist_parse_line(path, lineno, line, got, &val, &wt, err);
        if (rc == 1) continue;
        if (rc) goto fail;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            int64_t *nv = realloc(v, ncap * sizeof *nv);
            if (!nv) goto nomem;
            v = nv;
            double *nw = realloc(w, ncap * sizeof *nw);
            if (!nw) goto nomem;
            w = nw;
            cap = ncap;
        }
        v[n] = val;
        w[n] = wt;
        n++;
    }
    if (ferror(f)) {
        rc = sim_err_set(err, SIM_EIO, "%s: read error", path);
        goto fail;
    }
    double total = 0;
    for (size_t i = 0; i < n; i++) total += w[i];
    if (n == 0 || !(total > 0)) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: no lengths with positive weight (expected one integer "
                         "per line, or value,weight)", path);
        goto fail;
    }
    free(line);
    fclose(f);
    *values = v;
    *weights = w;
    *n_out = n;
    return 0;
nomem:
    rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
fail:
    free(line);
    free(v);
    free(w);
    fclose(f);
    return rc;
}

static int lendist_make_zipf(sim_lendist *d, double s, sim_err *err)
{
    int64_t k = d->max - d->min + 1;
    if (k > LENDIST_ZIPF_MAX_SUPPORT)
        return sim_err_set(err, SIM_ERANGE, "zipf: support [%lld, %lld] too large (at most %d values)",
                           (long long)d->min, (long long)d->max, LENDIST_ZIPF_MAX_SUPPORT);
    double *p = malloc((size_t)k * sizeof *p);
    if (!p) return sim_err_set(err, SIM_ENOMEM, "zipf: out of memory");
    /* Weights relative to the first, so the largest is 1 and nothing
     * underflows to an all-zero table for large s or min. */
    double lmin = log((double)d->min), total = 0, sum_kp = 0;
    for (int64_t i = 0; i < k; i++) {
        double x = (double)(d->min + i);
        p[i] = exp(-s * (log(x) - lmin));
        total += p[i];
        sum_kp += x * p[i];
    }
    d->exact_mean = sum_kp / total;
    d->table = gsl_ran_discrete_preproc((size_t)k, p);
    free(p);
    if (!d->table) return sim_err_set(err, SIM_ENOMEM, "zipf: out of memory");
    return 0;
}

static int lendist_make_empirical(sim_lendist *d, const char *path, sim_err *err)
{
    size_t n = 0;
    double *w = NULL;
    int rc = lendist_read_empirical(path, &d->values, &w, &n, err);
    if (rc) return rc;
    double total = 0, sum = 0;
    for (size_t i = 0; i < n; i++) {
        d->values[i] = clamp64(d->values[i], d->min, d->max);
        total += w[i];
        sum += (double)d->values[i] * w[i];
    }
    d->exact_mean = sum / total;
    d->table = gsl_ran_discrete_preproc(n, w);
    free(w);
    if (!d->table) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
    return 0;
}

int sim_lendist_create(const sim_len_dist *cfg, sim_lendist **out, sim_err *err)
{
    int rc = 0;
    *out = NULL;
    if (cfg->min < 1 || cfg->max < cfg->min || cfg->max > INT32_MAX)
        return sim_err_set(err, SIM_EINVAL, "%s: bounds [min %lld, max %lld] invalid (need 1 <= min <= max <= %d)",
                           sim_dist_name(cfg->dist), (long long)cfg->min, (long long)cfg->max, INT32_MAX);
    sim_lendist *d = calloc(1, sizeof *d);
    if (!d) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    d->kind = cfg->dist;
    d->min = cfg->min;
    d->max = cfg->max;
    d->mean = cfg->mean;
    d->std = cfg->std;
    switch (cfg->dist) {
    case SIM_DIST_FIXED:
        if (!isfinite(cfg->value)) {
            rc = sim_err_set(err, SIM_EINVAL, "fixed: value must be a finite number");
            goto fail;
        }
        d->fixed = clamp_real(cfg->value, d->min, d->max);
        d->exact_mean = (double)d->fixed;
        break;
    case SIM_DIST_UNIFORM:
        d->exact_mean = 0.5 * ((double)d->min + (double)d->max);
        break;
    case SIM_DIST_NORMAL:
        if (!isfinite(cfg->mean) || !isfinite(cfg->std) || cfg->std < 0) {
            rc = sim_err_set(err, SIM_EINVAL, "normal: need a finite mean and std >= 0 (got mean %g, std %g)",
                             cfg->mean, cfg->std);
            goto fail;
        }
        d->exact_mean = cfg->mean;
        break;
    case SIM_DIST_LOGNORMAL:
        if (!isfinite(cfg->mean) || !isfinite(cfg->std) || cfg->mean <= 0 || cfg->std < 0) {
            rc = sim_err_set(err, SIM_EINVAL, "lognormal: need mean > 0 and std >= 0 (got mean %g, std %g)",
                             cfg->mean, cfg->std);
            goto fail;
        }
        /* mean/std are of the lengths: E = exp(mu + sigma^2/2),
         * Var = (exp(sigma^2) - 1) E^2. */
        d->sigma = sqrt(log1p((cfg->std / cfg->mean) * (cfg->std / cfg->mean)));
        d->mu = log(cfg->mean) - 0.5 * d->sigma * d->sigma;
        d->exact_mean = cfg->mean;
        break;
    case SIM_DIST_ZIPF:
        if (!isfinite(cfg->s) || cfg->s < 0) {
            rc = sim_err_set(err, SIM_EINVAL, "zipf: exponent s must be a finite number >= 0 (got %g)", cfg->s);
            goto fail;
        }
        if ((rc = lendist_make_zipf(d, cfg->s, err))) goto fail;
        break;
    case SIM_DIST_EMPIRICAL:
        if (!cfg->path[0]) {
            rc = sim_err_set(err, SIM_EINVAL, "empirical: no path to a length file given");
            goto fail;
        }
        if ((rc = lendist_make_empirical(d, cfg->path, err))) goto fail;
        break;
    default:
        rc = sim_err_set(err, SIM_EINVAL, "unknown length distribution %d", (int)cfg->dist);
        goto fail;
    }
    *out = d;
    return 0;
fail:
    sim_lendist_destroy(d);
    return rc;
}

int32_t sim_lendist_draw(sim_lendist *d, void *gsl_rng_ptr)
{
    gsl_rng *r = gsl_rng_ptr;
    int64_t v = d->min;
    switch (d->kind) {
    case SIM_DIST_FIXED:
        v = d->fixed;
        break;
    case SIM_DIST_UNIFORM:
        v = d->min + (int64_t)gsl_rng_uniform_int(r, (unsigned long)(d->max - d->min + 1));
        break;
    case SIM_DIST_NORMAL:
        v = clamp_real(d->mean + gsl_ran_gaussian(r, d->std), d->min, d->max);
        break;
    case SIM_DIST_LOGNORMAL:
        v = clamp_real(gsl_ran_lognormal(r, d->mu, d->sigma), d->min, d->max);
        break;
    case SIM_DIST_ZIPF:
        v = d->min + (int64_t)gsl_ran_discrete(r, d->table);
        break;
    case SIM_DIST_EMPIRICAL:
        v = d->values[gsl_ran_discrete(r, d->table)];
        break;
    }
    return (int32_t)v;
}

double sim_lendist_mean(const sim_lendist *d)
{
    return d->exact_mean;
}

void sim_lendist_destroy(sim_lendist *d)
{
    if (!d) return;
    if (d->table) gsl_ran_discrete_free(d->table);
    free(d->values);
    free(d);
}
