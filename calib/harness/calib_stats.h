/* calib_stats — summary statistics of repeated timings: median, 10th and
 * 90th percentiles (GSL, linear interpolation between order statistics).
 * Units: whatever the samples are (seconds in calibration). The sample
 * array is sorted in place; the caller owns it. */
#ifndef CALIB_STATS_H
#define CALIB_STATS_H

#include <stddef.h>

typedef struct {
    double median, p10, p90, min, max;
    size_t n;
} calib_stats;

/* Returns 0, or -1 when n is 0. */
int calib_stats_summarise(double *samples, size_t n, calib_stats *out);

#endif
