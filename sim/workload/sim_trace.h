/* sim_trace — request traces loaded into memory.
 *
 * Two formats: Mooncake JSONL (one object a line: timestamp in ms,
 * input_length, output_length, hash_ids = 512-token prefix block hashes) and
 * plain CSV `timestamp,input_tokens,output_tokens` (timestamp in seconds, an
 * optional header line). Entries are kept in file order; timestamps must not
 * go backwards. hash_ids of all entries live in one arena owned by the
 * trace. Errors name the file, line and column (or field).
 *
 * Mooncake lines may also carry session structure (README "Session
 * traces"): `session_id` (integer or string; lines sharing it form one
 * session, its turns in file order), `id` (integer or string, unique: what
 * `parent_id` names), `parent_id` (the id of the session's latest turn: the
 * line is a sub-request fanned out from that turn, and the session's next
 * turn waits for it) and `delay` (ms >= 0: a follow-up line arrives that
 * long after what it waits for has finished; default 0). A session's first
 * line needs `timestamp` (its arrival); follow-up lines (later turns and
 * sub-requests) arrive by their delay, so their timestamp may be left out
 * and is not used, nor checked for order. Sub-requests do not fan out
 * further. */
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
    /* session structure (session -1 and the rest unused without session_id) */
    int64_t session;          /* session index, in order of first appearance, or -1 */
    int64_t parent;           /* sub-request: entry index of its turn; -1 for a turn */
    int64_t next;             /* turn: the session's next turn, -1 for its last */
    int64_t first_child;      /* turn: its first sub-request, -1 for none */
    int64_t next_child;       /* sub-request: its turn's next sub-request, -1 for the last */
    double delay_s;           /* follow-up: gap after what it waits for, seconds */
    int32_t turn;             /* turn index in the session from 0 (a sub-request: its turn's) */
    int32_t n_children;       /* turn: its sub-requests */
} sim_trace_entry;

typedef struct sim_trace {
    sim_trace_entry *entries;
    int64_t n;
    uint32_t *hashes;         /* arena of hash ids */
    int64_t n_hashes;
    int64_t n_sessions;       /* distinct session_id values (0 = a trace without sessions) */
} sim_trace;

/* Loads a trace file (a regular file, streamed line by line; lines up to
 * SIM_FILE_MAX_TEXT). On error *out is NULL and err says where. */
int sim_trace_load(const char *path, sim_trace_format fmt, sim_trace **out, sim_err *err);

/* Parses an in-memory buffer (used by the fuzz target and tests). */
int sim_trace_parse(const char *buf, size_t len, const char *name, sim_trace_format fmt,
                    sim_trace **out, sim_err *err);

void sim_trace_destroy(sim_trace *t);

/* The line that continues entry i's context past its answer, whose hash
 * ids name that context: a turn's first sub-request, else its session's
 * next turn; -1 for a sub-request, a session's last turn and a line
 * outside sessions. */
int64_t sim_trace_continuation(const sim_trace *t, int64_t i);

#endif
