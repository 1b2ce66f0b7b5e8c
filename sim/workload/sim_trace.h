/* sim_trace — request traces loaded into memory.
 *
 * Two formats: Mooncake JSONL (one object a line: timestamp in ms,
 * input_length, output_length, hash_ids = 512-token prefix block hashes) and
 * plain CSV `timestamp,input_tokens,output_tokens` (timestamp in seconds, an
 * optional header line). Entries are kept in file order; timestamps must not
 * go backwards. hash_ids of all entries live in one arena owned by the
 * trace. Errors name the file, line and column (or field). */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include "sim_err.h"
#include "sim_scenario.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double timestamp_s;       /* as in the file, converted to seconds */
    int32_t input_tokens;
    int32_t output_tokens;
    int32_t n_hash;           /* number of prefix block hashes */
    int64_t hash_off;         /* offset of the first hash in sim_trace.hashes */
} sim_trace_entry;

typedef struct sim_trace {
    sim_trace_entry *entries;
    int64_t n;
    uint32_t *hashes;         /* arena of hash ids */
    int64_t n_hashes;
} sim_trace;

/* Loads a trace file (a regular file, streamed line by line; lines up to
 * SIM_FILE_MAX_TEXT). On error *out is NULL and err says where. */
int sim_trace_load(const char *path, sim_trace_format fmt, sim_trace **out, sim_err *err);

/* Parses an in-memory buffer (used by the fuzz target and tests). */
int sim_trace_parse(const char *buf, size_t len, const char *name, sim_trace_format fmt,
                    sim_trace **out, sim_err *err);

void sim_trace_destroy(sim_trace *t);

#endif
