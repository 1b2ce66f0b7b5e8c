/* sim_interval — confidence intervals of a mean over independent
 * replications (Student t, GSL): the figure of each replication is one
 * observation, the interval is mean ± t(1 − (1 − level)/2, n − 1) · sd / √n.
 * Plain data, no heap. */
#ifndef SIM_INTERVAL_H
#define SIM_INTERVAL_H

#include <stdint.h>

typedef struct {
    double mean;
    double sd;          /* sample standard deviation (n − 1) */
    double half_width;  /* t quantile × sd / √n */
    double low, high;   /* mean ∓ half_width */
    int64_t n;
} sim_interval;

/* The `level` (0 < level < 1, e.g. 0.95) interval of the mean of x[0..n).
 * Returns 0; SIM_EINVAL (out zeroed, n kept) when n < 2, level is out of
 * range or some x is not finite. */
int sim_interval_t(const double *x, int64_t n, double level, sim_interval *out);

/* The t quantile of a `level` interval over n >= 2 observations:
 * t(1 − (1 − level)/2, n − 1), what half_width multiplies sd / √n by. */
double sim_interval_t_quantile(double level, int64_t n);

/* 1 when the two intervals share a point ([low, high] closed). */
int sim_interval_overlap(const sim_interval *a, const sim_interval *b);

#endif
