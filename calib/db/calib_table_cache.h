/* calib_table_cache — perf-db tables shared by every scenario built in one
 * process (a search builds a cluster per candidate and rate; importing and
 * fitting the perf-db again for each would dominate its time).
 *
 * Each distinct (perf-db path, GPU, engine, dtypes, SM count) is opened and
 * built once (calib_table_build) on first request, under a mutex; the
 * tables handed out are read-only and stay valid until the cache is freed.
 * A .sql dump is imported into memory once per path.
 *
 * Ownership: the cache owns the dbs and tables. Failure returns: a negative
 * SIM_E* code with err filled (the failure is not cached). */
#ifndef CALIB_TABLE_CACHE_H
#define CALIB_TABLE_CACHE_H

#include "sim_err.h"
#include "calib_table.h"

typedef struct calib_table_cache calib_table_cache;

int calib_table_cache_create(calib_table_cache **out, sim_err *err);
void calib_table_cache_free(calib_table_cache *c);

/* The tables of the GPU matching gpu_key (calib_db_gpu_find, GPU-backend
 * rows only) in the perf-db at path, for engine (NULL/"" = none) and the
 * NULL-terminated dtype list. Thread-safe. */
int calib_table_cache_get(calib_table_cache *c, const char *path, const char *gpu_key, const char *engine,
                          const char *const *dtypes, int32_t sms, const calib_table **out, sim_err *err);

#endif
