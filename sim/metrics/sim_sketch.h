/* sim_sketch — a mergeable quantile sketch: a log-bucket histogram of
 * non-negative values with a fixed relative error.
 *
 * Bin 0 holds [0, lo); bins 1..nlog hold [lo·r^(i-1), lo·r^i) (the last of
 * them ends at hi), nlog = ceil(ln(hi/lo) / ln r), and bin nlog + 1 holds
 * everything >= hi. A quantile is the geometric centre of the bin
 * holding the wanted rank, clamped to the exact observed min and max (the
 * first and last ranks are the min and max, exact zeros are kept apart and
 * come back as 0), so it
 * is within sqrt(r) − 1 (relative) of the exact order statistic for values
 * in [lo, hi), within lo (absolute) below lo, and the observed max
 * above the range. The count, sum, min and max are exact. Memory is
 * (nlog + 2) × 8 bytes whatever the number of values; two sketches with the
 * same (lo, hi, r) merge by adding their bins, which gives the sketch of
 * the union. The sketch owns its bins; create returns NULL when out of
 * memory or for bad parameters, the other calls return SIM_EINVAL for bad
 * arguments. */
#ifndef SIM_SKETCH_H
#define SIM_SKETCH_H

#include <stdint.h>

typedef struct sim_sketch sim_sketch;

/* 0 < lo < hi (finite), r > 1, at most 10,000,000 bins. */
sim_sketch *sim_sketch_create(double lo, double hi, double r);
void sim_sketch_destroy(sim_sketch *s);

/* Adds value v (>= 0, finite) with weight w (>= 1). */
int sim_sketch_add(sim_sketch *s, double v, uint64_t w);
/* dst += src; both must share (lo, hi, r). */
int sim_sketch_merge(sim_sketch *dst, const sim_sketch *src);

uint64_t sim_sketch_count(const sim_sketch *s);
double sim_sketch_sum(const sim_sketch *s);  /* Σ v·w, in the order added */
double sim_sketch_min(const sim_sketch *s);  /* 0 when empty */
double sim_sketch_max(const sim_sketch *s);

/* The value of rank k (1-based, 1..count) of the values sorted ascending,
 * weights counted; 0 when empty. */
double sim_sketch_rank(const sim_sketch *s, uint64_t k);
/* The inverse-CDF quantile: the value of rank ceil(q·count), q in [0, 1]. */
double sim_sketch_quantile(const sim_sketch *s, double q);
/* The quantile as gsl_stats_quantile_from_sorted_data defines it on the
 * sorted values (linear interpolation between the order statistics
 * floor(q·(n−1)) and the next, 0-based), each order statistic read from the
 * sketch: within the same relative error as one rank. */
double sim_sketch_quantile_interp(const sim_sketch *s, double q);

/* sqrt(r) − 1: the relative error bound of a quantile in range. */
double sim_sketch_rel_error(const sim_sketch *s);

#endif
