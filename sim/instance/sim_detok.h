/* sim_detok — an instance's detokenise-and-stream workers
 * (scheduler.detokenizer_workers): the CPU side of the output.
 *
 * Every iteration that sampled tokens hands the pool one job per request
 * that sampled any, costing (detokenize_us_per_token + stream_us_per_token)
 * per token; the client sees a request's tokens of that iteration when its
 * job ends. Nothing is scheduled per token or per job: one call per
 * iteration, in O(1), in closed form.
 *
 * The model, first come first served across iterations: an iteration's m
 * jobs (mean service s = tokens × per-token time / m) start when the work
 * handed over before them has drained at the pool's full rate (c workers),
 * or at once when it has; they run in waves of c, so job j of the
 * iteration ends floor(j / c) + 1 services after the start, and every job
 * of the iteration is given the mean of those ends (which job belongs to
 * which request is not tracked). Exact for one worker with one request,
 * and for any iteration whose jobs fit in one wave of an idle pool; under
 * saturation the backlog grows by m s / c minus the iteration's length,
 * which is the FIFO queue's throughput.
 *
 * Plain data, owned by its instance; no failure returns. */
#ifndef SIM_DETOK_H
#define SIM_DETOK_H

#include "sim_engine.h"
#include "sim_scenario.h"

#include <stdint.h>

typedef struct {
    int32_t workers;           /* 0 = off: tokens are seen when sampled */
    double ns_per_token;       /* detokenise + stream, per token */
    double free_at;            /* ns: when the work handed over so far has drained */
    int64_t jobs, tokens;
    double wait_ns, service_ns; /* over jobs: from hand-over to start, and the service */
} sim_detok;

/* Off unless cfg->detokenizer_workers > 0. */
void sim_detok_init(sim_detok *d, const sim_sched_cfg *cfg);

/* An iteration ending at now sampled `tokens` tokens for `jobs` requests
 * (jobs ≤ tokens); returns how long after now the client sees them (0 when
 * off or jobs is 0). */
sim_time sim_detok_step(sim_detok *d, sim_time now, int64_t jobs, int64_t tokens);

#endif
