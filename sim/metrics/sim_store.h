/* sim_store — the SQLite results database.
 *
 * Schema-versioned (table `meta`, key `schema_version`); tables `runs`
 * (one row per run with its scenario text, parameters and status),
 * `searches` (one row per search: running, complete or failed),
 * `replication_sets` and `intervals` (replications: a row per set of runs,
 * a row per figure with its mean and 95 % interval),
 * `requests` (per-request metrics), `instance_series` (per-instance samples
 * over time) and `metrics` (summary name/value pairs per run). A run is
 * written in one transaction: on any error it is rolled back, so a database
 * never holds half a run. Opening an existing database with a newer schema
 * version than this build knows is an error; older ones are migrated. A
 * perf-db or any other SQLite file is refused (SIM_EINVAL) by its tables. */
#ifndef SIM_STORE_H
#define SIM_STORE_H

#include "sim_err.h"
#include "sim_interval.h"
#include "sim_metrics.h"
#include "sim_scenario.h"

#include <stdint.h>

#define SIM_STORE_SCHEMA_VERSION 1

typedef struct sim_store sim_store;

int sim_store_open(const char *path, sim_store **out, sim_err *err);
void sim_store_close(sim_store *s);

/* Writes one run. params_json: the overrides/sweep parameters as a JSON
 * object (may be NULL). scenario_text: the scenario file as read (may be
 * NULL). Request rows are written only if sc->output.store_requests: the
 * records the metrics kept (the first output.request_records requests; the
 * metric rows records.* say how many when not all were kept). */
int sim_store_write_run(sim_store *s, const sim_scenario *sc, const char *scenario_text,
                        const char *params_json, const sim_summary *sum,
                        const sim_metrics *m, int64_t *run_id, sim_err *err);

/* A set of replications of one scenario (`run --replications N`, or one
 * deployment re-run by search.replications): runs n, the interval level,
 * how many runs stopped on overload, and per figure (names such as
 * "ttft_ms.p99", sim_headline.h) its mean and Student-t interval
 * (sim_interval.h; fewer than two runs with the figure: NULLs, n kept). */
typedef struct {
    int32_t n;
    double level;
    int32_t overloaded;
    int32_t n_figures;
    const char *const *figures;
    const sim_interval *iv;
} sim_store_replications;

/* Writes one row of replication_sets (the scenario as a run's row has it,
 * seed the base seed the replication seeds derive from, params_json as
 * for a run) and one row of intervals per figure, in one transaction;
 * *set_id (may be NULL) gets the set's id. */
int sim_store_write_replications(sim_store *s, const sim_scenario *sc, const char *scenario_text,
                                 const char *params_json, const sim_store_replications *r, int64_t *set_id,
                                 sim_err *err);

/* Searches: begin records one as 'running' (the runs it stores follow);
 * end marks it 'complete' (complete = 1) or 'failed', with the range of
 * run ids it wrote. A search killed before end stays 'running'. */
int sim_store_search_begin(sim_store *s, const char *scenario_path, int64_t *search_id, sim_err *err);
int sim_store_search_end(sim_store *s, int64_t search_id, int complete, sim_err *err);

/* When the latest search in the database is not complete: writes a
 * one-line note saying so into buf and returns 1; otherwise 0 (buf ""). The
 * _db form reads an open SQLite handle (read-only readers such as plot). */
struct sqlite3;
int sim_store_search_note(sim_store *s, char *buf, size_t size);
int sim_store_search_note_db(struct sqlite3 *db, const char *path, char *buf, size_t size);

/* Checks, without writing, that an open SQLite file is a servesim results
 * database this build can read (refuses a perf-db or a foreign file with
 * its tables named, a newer schema version). 0 or a negative SIM_E*. */
int sim_store_check_db(struct sqlite3 *db, const char *path, sim_err *err);

/* The latest search's id, status and start time; 0 when there is none. */
int sim_store_search_latest(struct sqlite3 *db, int64_t *id, char *status, size_t status_size, char *created,
                            size_t created_size);

#endif
