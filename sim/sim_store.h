/* sim_store — the SQLite results database.
 *
 * Schema-versioned (table `meta`, key `schema_version`); tables `runs`
 * (one row per run with its scenario text, parameters and status),
 * `requests` (per-request metrics), `instance_series` (per-instance samples
 * over time) and `metrics` (summary name/value pairs per run). A run is
 * written in one transaction: on any error it is rolled back, so a database
 * never holds half a run. Opening an existing database with a newer schema
 * version than this build knows is an error; older ones are migrated. */
#ifndef SIM_STORE_H
#define SIM_STORE_H

#include "sim_err.h"
#include "sim_metrics.h"
#include "sim_scenario.h"

#include <stdint.h>

#define SIM_STORE_SCHEMA_VERSION 1

typedef struct sim_store sim_store;

int sim_store_open(const char *path, sim_store **out, sim_err *err);
void sim_store_close(sim_store *s);

/* Writes one run. params_json: the overrides/sweep parameters as a JSON
 * object (may be NULL). scenario_text: the scenario file as read (may be
 * NULL). Request rows are written only if sc->output.store_requests. */
int sim_store_write_run(sim_store *s, const sim_scenario *sc, const char *scenario_text,
                        const char *params_json, const sim_summary *sum,
                        const sim_metrics *m, int64_t *run_id, sim_err *err);

#endif
