/* calib_stats — see calib_stats.h. */
#include "calib_stats.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

int calib_stats_summarise(double *samples, size_t n, calib_stats *out)
{
    if (n == 0) return -1;
    gsl_sort(samples, 1, n);
    out->n = n;
    out->min = samples[0];
    out->max = samples[n - 1];
    out->median = gsl_stats_median_from_sorted_data(samples, 1, n);
    out->p10 = gsl_stats_quantile_from_sorted_data(samples, 1, n, 0.10);
    out->p90 = gsl_stats_quantile_from_sorted_data(samples, 1, n, 0.90);
    /* The interpolations round differently (two samples 1 ulp apart can
     * give p10 > median): keep the order they have mathematically. */
    if (out->p10 > out->median) out->p10 = out->median;
    if (out->p90 < out->median) out->p90 = out->median;
    return 0;
}
