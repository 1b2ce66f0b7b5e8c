/* sim_session — agentic and multi-turn sessions: which requests follow a
 * finished one, and when.
 *
 * A session is a sequence of turns. Turn k's prompt is the session's
 * context — every earlier prompt, answer and joined sub-request answer —
 * plus new user tokens, and its hash ids are the context's chain extended,
 * so the prefix cache can hit the previous turn's KV. A turn's spec also
 * names its context after the answer (ctx_ids: synthetic, the chain that
 * already holds the answer's full blocks; a trace, the ids of the line
 * that continues it, its first sub-request or else the next turn), so the
 * answer's blocks are cached under the keys the next prompt looks up. When a turn finishes
 * it may fan out parallel sub-requests (prompt = the turn's context and
 * answer plus their own tokens); the next turn arrives a think/tool-call gap
 * after the LAST of them finished (a join), or after the turn itself when
 * it fanned out nothing. Two sources: synthetic (workload.sessions: turns,
 * user tokens, think gap and sub-request lengths from sim_lendist
 * distributions drawn per session from the stream "session", so a
 * session's draws do not depend on other sessions; every turn but the last fans
 * out workload.sessions.fan_out sub-requests) and a Mooncake trace with
 * session fields (sim_trace.h: the trace's turns, sub-requests, lengths,
 * hash ids and delays, the delays scaled like its timestamps).
 *
 * The caller (the workload) opens each session with its first arrival and
 * tells the module about every finished request of a session; the module
 * hands back the follow-ups with their arrival times through a callback.
 * State is kept per OPEN session (a slot: its context chain of hash ids,
 * synthetic only) and per request in flight (its id array, synthetic only),
 * so memory follows the sessions and requests in flight, not the requests
 * simulated. The module owns every id array it hands out until
 * sim_session_release() of its request (or destroy). Errors: SIM_EINVAL
 * for bad configuration (key path named), SIM_ENOMEM. */
#ifndef SIM_SESSION_H
#define SIM_SESSION_H

#include "sim_engine.h"
#include "sim_err.h"
#include "sim_scenario.h"
#include "sim_trace.h"
#include "sim_workload.h"

#include <stddef.h>
#include <stdint.h>

/* A session whose next prompt would pass this many tokens ends there. */
#define SIM_SESSION_MAX_CONTEXT (1 << 30)

typedef struct sim_session sim_session;

/* What a finished request of a session was, for the per-session metrics. */
typedef struct sim_session_done_info {
    int32_t is_turn;   /* 1 for a turn, 0 for a sub-request */
    int32_t turn;      /* its turn index from 0 (a sub-request: its parent's) */
    int32_t ended;     /* 1 when the session ended with it */
    sim_time start;    /* ended: the session's first arrival */
    int32_t turns;     /* ended: turns the session ran */
} sim_session_done_info;

/* Receives one follow-up request (spec->arrival set, spec->id left 0 for the
 * caller to number); returns 0 or a negative error, which is passed on. */
typedef int (*sim_session_emit_fn)(void *ctx, sim_request_spec *spec);

/* Synthetic sessions from cfg->sessions (lengths of the first prompt and of
 * every answer from cfg->input_tokens / cfg->output_tokens, hash blocks of
 * cfg->prefix.block_tokens), or, with trace non-NULL (kept by the caller,
 * it must outlive the module), the trace's sessions with their delays
 * multiplied by delay_factor. */
int sim_session_create(const sim_workload_cfg *cfg, const sim_trace *trace, double delay_factor, uint64_t seed,
                       sim_session **out, sim_err *err);
void sim_session_destroy(sim_session *s);

/* Opens a session arriving at `arrival` and fills its first request
 * (session, turn, lengths, hash ids; id left for the caller). Synthetic:
 * entry is ignored; trace: entry is the session's first line. Returns 0 or
 * SIM_ENOMEM (nothing opened). */
int sim_session_start(sim_session *s, int64_t entry, sim_time arrival, sim_request_spec *out);

/* Request spec (one this module filled) finished, or was dropped, at now:
 * emits the requests that now follow (sub-requests, or the next turn) and
 * fills *info. Returns 0 or the first error (SIM_ENOMEM, or emit's). */
int sim_session_done(sim_session *s, const sim_request_spec *spec, sim_time now, sim_session_emit_fn emit,
                     void *ctx, sim_session_done_info *info);

/* Hands back a request's id array (synthetic; a no-op for trace ids). */
void sim_session_release(sim_session *s, const sim_request_spec *spec);

/* Sessions opened and not yet ended; requests whose ids are live; heap
 * bytes of slots, chains and live id arrays. */
/* Gives s id space k of n (0 <= k < n; before its first session): its
 * fresh block ids are k, k + n, ... and its sessions are numbered (spec
 * .session) k + 1, k + 1 + n, ..., so n session models (a workload's SLO
 * classes) never give two requests of different spaces a common id or
 * session. Space 0 of 1 is the default. */
void sim_session_set_space(sim_session *s, int32_t k, int32_t n);
int64_t sim_session_open(const sim_session *s);
int64_t sim_session_live(const sim_session *s);
size_t sim_session_bytes(const sim_session *s);

#endif
