/* sim_loader — strict scenario YAML loader (libyaml).
 *
 * Reads a scenario file into a sim_scenario, applying `--set key.path=value`
 * overrides before validation. Strict: unknown keys (with a did-you-mean
 * suggestion), wrong types and out-of-range values are errors whose message
 * names file:line:column, the key path and what was expected. Relative paths
 * in the file (trace, empirical lengths, model config, db) are resolved
 * against the scenario file's folder. The loader also prints the scenario
 * reference (every key, type, default, range, meaning) from the same schema
 * table it validates with, so the README reference cannot drift. */
#ifndef SIM_LOADER_H
#define SIM_LOADER_H

#include "sim_err.h"
#include "sim_scenario.h"

#include <stddef.h>
#include <stdio.h>

/* sets: n_sets strings "key.path=value" (list items by index:
 * deployment.pools.0.instances=8). Returns 0 or a negative SIM_E* code. */
int sim_loader_load_file(const char *path, const char *const *sets, int n_sets,
                         sim_scenario *out, sim_err *err);

/* Same for an in-memory document; `name` is used in messages and relative
 * paths resolve against the current directory. */
int sim_loader_load_string(const char *text, size_t len, const char *name,
                           const char *const *sets, int n_sets, sim_scenario *out, sim_err *err);

/* Applies "key.path=value" overrides to an existing scenario (checked and
 * converted exactly as --set on a file; a scheduler preset set here replaces
 * the pool's scheduler settings before the other overrides). out may be
 * base; on failure out is left as it was. */
int sim_loader_overlay(const sim_scenario *base, const char *const *sets, int n_sets, sim_scenario *out,
                       sim_err *err);

/* For an error found after loading (building the deployment) whose message
 * starts with a key path ("deployment.pools.0: ...", "model: ..."):
 * rewrites it to start with where that key is, file:line:column in the
 * scenario file or the --set that gave it (a layout message naming a degree,
 * "by tp=3", points at that degree's key). path and sets are what the
 * scenario was loaded from. Returns 1 when placed, 0 when left as it was. */
int sim_loader_locate_error(const char *path, const char *const *sets, int n_sets, sim_err *err);

/* Writes the scenario reference as Markdown. */
void sim_loader_write_reference(FILE *f);

#endif
