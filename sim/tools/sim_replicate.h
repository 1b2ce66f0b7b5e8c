/* sim_replicate — a scenario run N times with independent seeds, and a
 * confidence interval for each headline figure (sim_headline.h) over the
 * runs: `servesim run SCENARIO --replications N`.
 *
 * Replication i runs the scenario as loaded with its seed replaced by
 * sim_rng_replication_seed(scenario seed, i), so the set of runs is fixed
 * by the scenario (and `servesim run --seed S` replays any one of them);
 * the runs go to a thread each (sim_pfor) and the result does not depend on
 * the thread count. The perf-db tables are loaded once and shared. Runs are
 * not written to a results DB. Intervals are Student t at `level` over the
 * N figures (sim_interval.h); a run that overloaded is kept (its partial
 * figures enter the intervals) and counted. The result owns its arrays. */
#ifndef SIM_REPLICATE_H
#define SIM_REPLICATE_H

#include "sim_err.h"
#include "sim_headline.h"
#include "sim_interval.h"
#include "sim_scenario.h"

#include <stdint.h>
#include <stdio.h>

#define SIM_REPLICATE_MAX 100000

typedef struct {
    int32_t n;
    double level;                     /* e.g. 0.95 */
    uint64_t base_seed;               /* the scenario's seed */
    uint64_t *seeds;                  /* n: each run's seed */
    int32_t *overloaded;              /* n: 1 when that run stopped on overload */
    double (*values)[SIM_HL_COUNT];   /* n rows of headline figures */
    sim_interval iv[SIM_HL_COUNT];    /* per figure over the n runs */
    int32_t n_overloaded;
    int32_t n_gpus;
    char describe[512];               /* the deployment, as `servesim run` prints it */
} sim_replicate_result;

/* Runs sc n times (2 <= n <= SIM_REPLICATE_MAX) on up to `jobs` threads
 * (<= 0: one per CPU). Fails with the first run's error (out freed) when
 * the deployment cannot be built or a run fails. */
int sim_replicate_run(const sim_scenario *sc, int32_t n, int32_t jobs, double level, sim_replicate_result *out,
                      sim_err *err);
void sim_replicate_free(sim_replicate_result *r);

/* The interval table (one line per figure). */
void sim_replicate_print_table(FILE *f, const sim_replicate_result *r);
/* One JSON object: scenario, replications, level, seeds, overloaded,
 * intervals {figure: {mean, half_width, low, high, n}}, runs [{seed,
 * overloaded, figures}] (README "Replications"). */
int sim_replicate_write_json(FILE *f, const sim_replicate_result *r, const sim_scenario *sc);

#endif
