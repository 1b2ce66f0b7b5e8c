/* sim_sketch — see sim_sketch.h. Dense bins (one uint64_t each): adding is
 * one log(), a quantile one pass over the bins. */
#include "sim_sketch.h"

#include "sim_err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct sim_sketch {
    double lo, hi, r, log_r;
    int32_t nlog, nbins;  /* nbins = nlog + 2 */
    uint64_t *bins;
    uint64_t zeros;       /* exact zeros, ranked before bin 0 */
    uint64_t count;
    double sum, min, max;
};

sim_sketch *sim_sketch_create(double lo, double hi, double r)
{
    if (!(lo > 0) || !(hi > lo) || !(r > 1) || !isfinite(hi) || !isfinite(r)) return NULL;
    double nl = ceil(log(hi / lo) / log(r));
    if (!(nl >= 1 && nl <= 1e7)) return NULL;
    sim_sketch *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->lo = lo;
    s->hi = hi;
    s->r = r;
    s->log_r = log(r);
    s->nlog = (int32_t)nl;
    s->nbins = s->nlog + 2;
    s->bins = calloc((size_t)s->nbins, sizeof *s->bins);
    if (!s->bins) {
        free(s);
        return NULL;
    }
    return s;
}

void sim_sketch_destroy(sim_sketch *s)
{
    if (!s) return;
    free(s->bins);
    free(s);
}

static int32_t bin_of(const sim_sketch *s, double v)
{
    if (v < s->lo) return 0;
    if (v >= s->hi) return s->nbins - 1;
    int32_t i = 1 + (int32_t)(log(v / s->lo) / s->log_r);
    if (i < 1) i = 1;
    if (i > s->nlog) i = s->nlog;
    return i;
}

int sim_sketch_add(sim_sketch *s, double v, uint64_t w)
{
    if (!s || !(v >= 0) || !isfinite(v) || w < 1) return SIM_EINVAL;
    if (v == 0)
        s->zeros += w;
    else
        s->bins[bin_of(s, v)] += w;
    if (s->count == 0 || v < s->min) s->min = v;
    if (s->count == 0 || v > s->max) s->max = v;
    s->count += w;
    s->sum += v * (double)w;
    return 0;
}

int sim_sketch_merge(sim_sketch *dst, const sim_sketch *src)
{
    if (!dst || !src || dst->lo != src->lo || dst->hi != src->hi || dst->r != src->r) return SIM_EINVAL;
    if (src->count == 0) return 0;
    for (int32_t i = 0; i < dst->nbins; i++) dst->bins[i] += src->bins[i];
    dst->zeros += src->zeros;
    if (dst->count == 0 || src->min < dst->min) dst->min = src->min;
    if (dst->count == 0 || src->max > dst->max) dst->max = src->max;
    dst->count += src->count;
    dst->sum += src->sum;
    return 0;
}

uint64_t sim_sketch_count(const sim_sketch *s) { return s ? s->count : 0; }
double sim_sketch_sum(const sim_sketch *s) { return s ? s->sum : 0; }
double sim_sketch_min(const sim_sketch *s) { return s && s->count ? s->min : 0; }
double sim_sketch_max(const sim_sketch *s) { return s && s->count ? s->max : 0; }
double sim_sketch_rel_error(const sim_sketch *s) { return s ? sqrt(s->r) - 1 : 0; }

double sim_sketch_rank(const sim_sketch *s, uint64_t k)
{
    if (!s || s->count == 0) return 0;
    /* The extremes are known exactly. */
    if (k <= 1) return s->min;
    if (k >= s->count) return s->max;
    if (k <= s->zeros) return 0;
    uint64_t cum = s->zeros;
    int32_t i = 0;
    for (; i < s->nbins; i++) {
        cum += s->bins[i];
        if (cum >= k) break;
    }
    double v;
    if (i == 0)
        v = s->lo / 2;
    else if (i >= s->nbins - 1)
        v = s->max;
    else
        v = s->lo * pow(s->r, (double)(i - 1)) * sqrt(s->r);
    if (v < s->min) v = s->min;
    if (v > s->max) v = s->max;
    return v;
}

double sim_sketch_quantile(const sim_sketch *s, double q)
{
    if (!s || s->count == 0) return 0;
    double rank = ceil(q * (double)s->count);
    if (rank < 1) rank = 1;
    return sim_sketch_rank(s, (uint64_t)rank);
}

double sim_sketch_quantile_interp(const sim_sketch *s, double q)
{
    if (!s || s->count == 0) return 0;
    double idx = q * (double)(s->count - 1);
    uint64_t lhs = (uint64_t)idx;
    double delta = idx - (double)lhs;
    double lo = sim_sketch_rank(s, lhs + 1);
    if (lhs + 1 >= s->count || delta == 0.0) return lo;
    return (1 - delta) * lo + delta * sim_sketch_rank(s, lhs + 2);
}
