/* sim_autoscale_out — what an autoscaled run reports (deployment.pools.*
 * .autoscale): per pool the GPU-hours its instances were held against a
 * fixed fleet at its max over the same span, the decisions taken and a
 * timeline of events (each with the instance counts after it), and the
 * run's totals; printed in the table, in --json's `autoscale` object and
 * as results-DB metrics (`autoscale.*`). Plain data, no allocation: the
 * summary is copied by value. The cluster fills it (sim_cluster_autoscale.c). */
#ifndef SIM_AUTOSCALE_OUT_H
#define SIM_AUTOSCALE_OUT_H

#include "sim_scenario.h"

#include <stdint.h>
#include <stdio.h>

/* Events kept per run (all pools); later ones are counted in
 * events_dropped. The summary is copied by value (the search keeps one per
 * probe), so the timeline stays small. */
#define SIM_AUTOSCALE_MAX_EVENTS 64

typedef enum {
    SIM_AS_EV_START = 0,       /* scale-up decision: the instance starts loading */
    SIM_AS_EV_READY = 1,       /* it serves (new requests are routed to it) */
    SIM_AS_EV_DRAIN = 2,       /* scale-down decision: no new requests from now */
    SIM_AS_EV_LEAVE = 3        /* drained empty: it leaves, its GPUs freed */
} sim_as_event_kind;

typedef struct {
    double t_s;
    double value;              /* the window's metric value at a decision (start, drain); 0 otherwise */
    int32_t instance;          /* cluster-wide instance index */
    int16_t kind;              /* sim_as_event_kind */
    int16_t held;              /* instances held after it (starting + serving + draining) */
    int16_t serving;           /* instances taking new requests after it */
    int16_t pool;
} sim_as_event;

typedef struct {
    int32_t pool;
    int32_t enabled;           /* 0: a fixed pool, counted in the totals only */
    char role[16];
    char metric[16];
    int32_t min, max, initial;
    int32_t gpus_per_instance;
    double up_threshold, down_threshold;
    double cold_start_s;       /* weight load + start-up */
    double load_s;             /* the weight-load part */
    double gpu_hours;          /* held instances x GPUs over [0, span] */
    double fixed_gpu_hours;    /* max x GPUs over the same span */
    double mean_instances;     /* held, time-weighted */
    int32_t peak_instances, least_instances;
    int32_t scale_ups, scale_downs;   /* decisions */
    int32_t up_blocked;        /* scale-up decisions with max instances already held */
    int32_t n_events;          /* events of this pool, kept or not */
} sim_as_pool_summary;

typedef struct {
    int32_t enabled;
    double span_s;             /* run start (t = 0) to the run's end */
    double gpu_hours, fixed_gpu_hours;   /* every pool; fixed: autoscaled pools at their max */
    double saved_fraction;     /* 1 - gpu_hours / fixed_gpu_hours */
    int32_t n_pools;
    sim_as_pool_summary pools[SIM_MAX_POOLS];
    int32_t n_events, events_dropped; /* kept in time order, every pool's */
    sim_as_event events[SIM_AUTOSCALE_MAX_EVENTS];
} sim_autoscale_summary;

const char *sim_as_event_name(int kind);

/* The `autoscale` object's value (after `"autoscale": `), indented for
 * the summary's JSON. */
void sim_autoscale_print_json(FILE *f, const sim_autoscale_summary *a);
/* The table's autoscaling lines. violations: requests completed that
 * missed the SLO, of completed. */
void sim_autoscale_print_table(FILE *f, const sim_autoscale_summary *a, int64_t completed, int64_t good);
/* Calls fn(name, value, ctx) for each scalar (autoscale.gpu_hours,
 * autoscale.pools.N.*), stopping at the first non-zero return. */
int sim_autoscale_each_metric(const sim_autoscale_summary *a, int (*fn)(const char *, double, void *), void *ctx);

#endif
