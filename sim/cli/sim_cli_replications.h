/* sim_cli_replications — `servesim run SCENARIO --replications N [--jobs J]`
 * (sim/tools/sim_replicate.h does the runs): the scenario loaded with the
 * overrides, run n times on `jobs` threads (0 = one per CPU), the
 * intervals printed as a table or one JSON object. Returns the exit status
 * (0, 1 a run failed, 2 bad input, 3 some run overloaded). */
#ifndef SIM_CLI_REPLICATIONS_H
#define SIM_CLI_REPLICATIONS_H

#include <stdint.h>

int sim_cli_replications(const char *path, const char *const *sets, int n_sets, int32_t n, int32_t jobs, int json);

#endif
