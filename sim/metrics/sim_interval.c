/* sim_interval — see sim_interval.h. */
#include "sim_interval.h"
#include "sim_err.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <string.h>

double sim_interval_t_quantile(double level, int64_t n)
{
    return gsl_cdf_tdist_Pinv(1 - (1 - level) / 2, (double)(n - 1));
}

int sim_interval_t(const double *x, int64_t n, double level, sim_interval *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n < 2 || !(level > 0 && level < 1)) return SIM_EINVAL;
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return SIM_EINVAL;
    out->mean = gsl_stats_mean(x, 1, (size_t)n);
    out->sd = gsl_stats_sd_m(x, 1, (size_t)n, out->mean);
    out->half_width = sim_interval_t_quantile(level, n) * out->sd / sqrt((double)n);
    out->low = out->mean - out->half_width;
    out->high = out->mean + out->half_width;
    return 0;
}

int sim_interval_overlap(const sim_interval *a, const sim_interval *b)
{
    return a->low <= b->high && b->low <= a->high;
}
