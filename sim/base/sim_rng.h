/* sim_rng — per-component random streams.
 *
 * Every component that draws random numbers owns its own GSL generator
 * (mt19937) seeded from the scenario seed and a stream name, so adding a
 * component or drawing more in one never changes another's draws. The
 * caller owns the returned gsl_rng and frees it with gsl_rng_free. */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* Deterministic 64-bit seed for (scenario seed, stream name[, index]). */
uint64_t sim_rng_derive(uint64_t seed, const char *stream, uint64_t index);

/* The scenario seed of replication i (0, 1, ...) of a scenario seeded
 * `seed`: sim_rng_derive(seed, "replication", i) cut to 53 bits, so the
 * seeds `servesim run --replications` lists survive JSON readers that hold
 * numbers as doubles, and `--seed` replays any one of them. */
uint64_t sim_rng_replication_seed(uint64_t seed, uint64_t i);

/* New mt19937 generator seeded with sim_rng_derive(); NULL on ENOMEM. */
gsl_rng *sim_rng_create(uint64_t seed, const char *stream, uint64_t index);

#endif
