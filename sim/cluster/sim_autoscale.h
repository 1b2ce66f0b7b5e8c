/* sim_autoscale — the autoscaling policy of one pool, apart from the
 * cluster that applies it (sim_cluster_autoscale.c).
 *
 * Every autoscale.interval_s the cluster closes one sample of the pool's
 * metric as a ratio (numerator, denominator: requests waiting over serving
 * instances, busy ns over serving ns, KV blocks used over blocks, requests
 * that met the SLO over requests finished) and pushes it here. A decision
 * at time t sees the samples taken in (t - lag_s - window_s, t - lag_s]
 * and pools them (sum of numerators / sum of denominators); with no
 * denominator in the window it does not decide. Above the up threshold
 * (slo: below it) it asks for `step` more instances, below the down
 * threshold (slo: at or above it) for one fewer; min, max, instances
 * already starting or draining and the cooldown are the cluster's to
 * apply. The window keeps ceil((lag + window) / interval) + 2 samples, so
 * its memory and each decision's cost are bounded by the configuration,
 * not by the run. Creation returns NULL when out of memory. */
#ifndef SIM_AUTOSCALE_H
#define SIM_AUTOSCALE_H

#include "sim_engine.h"
#include "sim_scenario.h"

#include <stdint.h>

typedef struct sim_autoscale sim_autoscale;

sim_autoscale *sim_autoscale_create(const sim_autoscale_cfg *cfg);
void sim_autoscale_destroy(sim_autoscale *a);

/* One sample taken at t (non-decreasing): num / den. */
void sim_autoscale_push(sim_autoscale *a, sim_time t, double num, double den);

/* The window's pooled value as a decision at t sees it, into *out: 1, or 0
 * when no sample of the window has a denominator. */
int sim_autoscale_value(const sim_autoscale *a, sim_time t, double *out);

/* +1 (scale up), -1 (scale down) or 0 for a window value v. */
int sim_autoscale_direction(const sim_autoscale *a, double v);

/* Seconds from a scale-up decision to the new instance serving:
 * weight_bytes_per_gpu / (storage_gbs · 1e9) + startup_s. */
double sim_autoscale_cold_start_s(const sim_autoscale_cfg *cfg, double weight_bytes_per_gpu);

#endif
