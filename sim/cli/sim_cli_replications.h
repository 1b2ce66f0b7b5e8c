/* sim_cli_replications — `servesim run SCENARIO --replications N [--jobs J]`
 * (sim/tools/sim_replicate.h does the runs): the scenario loaded with the
 * overrides, run n times on `jobs` threads (0 = one per CPU), the
 * intervals printed as a table or one JSON object, and — unless --no-db,
 * to output.db or --db — stored as one replication set (sim_store.h:
 * tables replication_sets and intervals; the runs themselves are not
 * stored). Returns the exit status (0, 1 a run or the store failed, 2 bad
 * input or DB path, 3 some run overloaded). */
#ifndef SIM_CLI_REPLICATIONS_H
#define SIM_CLI_REPLICATIONS_H

#include <stdint.h>

typedef struct {
    const char *path;           /* the scenario file */
    const char *const *sets;    /* --set overrides */
    int n_sets;
    int32_t n, jobs;            /* --replications N, --jobs J */
    int json;                   /* --json */
    const char *db;             /* --db FILE (NULL: output.db) */
    int no_db;                  /* --no-db */
} sim_cli_replications_args;

int sim_cli_replications(const sim_cli_replications_args *a);

#endif
