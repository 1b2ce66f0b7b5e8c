/* sim_workload — the request generator.
 *
 * Turns a sim_workload_cfg into a stream of request specs: open loop
 * (Poisson, Gamma with a CV, constant rate, or trace replay with time/rate
 * scaling) through sim_workload_next(), or closed loop (N clients, each
 * sending its next request `think_time_s` after its previous one completes)
 * through sim_workload_sample(). Lengths come from the configured
 * distributions or from the trace. Arrival times and lengths use separate
 * GSL streams ("arrival", "input_len", "output_len") derived from the seed.
 * Requests are produced lazily, so memory does not grow with the request
 * count (except a loaded trace, which is held whole). With
 * workload.prefix.kind set, synthetic requests also carry prefix structure
 * (sim_prefixgen.h: shared system prompts, multi-turn sessions, RAG
 * documents) drawn from its own stream "prefix", so the arrival and length
 * draws are the same as with kind none; the input length drawn is then the
 * request's own part (its text after the system prompt, the new user
 * message, the question) and input_tokens adds the shared or context part.
 * Generated hash-id arrays are owned by the workload and stay valid until
 * the caller hands the request back with sim_workload_release().
 * With workload.classes, each class is a workload of its own (its arrivals
 * and lengths from its own streams, derived from the seed and the class
 * name, so adding a class leaves the others' draws alone) and
 * sim_workload_next merges them in arrival order (ties: the earlier class),
 * numbering the merged stream 0, 1, 2, ... and tagging each request with
 * its class and priority. A closed-loop class (arrival.process
 * closed_loop) has `concurrency` clients of its own, numbered after the
 * previous closed-loop classes' clients (sim_workload_clients counts them
 * all); sim_workload_sample_client sends client c's next request from c's
 * class, into the same numbering. Open-loop and closed-loop classes mix:
 * sim_workload_next merges the open ones only. */
#ifndef SIM_WORKLOAD_H
#define SIM_WORKLOAD_H

#include "sim_engine.h"
#include "sim_err.h"
#include "sim_scenario.h"

#include <stdint.h>

typedef struct {
    uint64_t id;              /* 0, 1, 2, ... in issue order */
    sim_time arrival;         /* ns */
    int32_t input_tokens;
    int32_t output_tokens;
    int32_t n_hash;           /* prefix block hashes (trace or workload.prefix), else 0 */
    const uint32_t *hash_ids; /* owned by the workload; valid until sim_workload_release(spec) */
    /* The context after the answer (prompt + output tokens) as the next
     * prompt of its session names it: its hash ids, so the prefix cache can
     * keep the answer's full blocks under the keys the next turn looks up
     * (NULL = not known: the output blocks get keys nothing else holds).
     * Same ownership as hash_ids. */
    int32_t n_ctx_ids;
    const uint32_t *ctx_ids;
    uint64_t session;         /* multi-turn session id + 1 (0 = none) */
    /* workload.sessions or a session trace (sim_session.h); 0 otherwise */
    int32_t sess_slot;        /* the session's slot in sim_session */
    int32_t turn;             /* turn index in the session, from 0 */
    int32_t sub;              /* 1 for a sub-request fanned out from turn `turn` */
    int32_t cls;              /* workload.classes index (0 without classes) */
    int32_t priority;         /* its class's priority (0 without classes) */
    int32_t images;           /* workload.images: items it carries (set by the cluster; 0 = text only) */
    int32_t image_tokens;     /* their tokens, already counted in input_tokens */
} sim_request_spec;

typedef struct sim_workload sim_workload;

int sim_workload_create(const sim_workload_cfg *cfg, uint64_t seed, sim_workload **out,
                        sim_err *err);
void sim_workload_destroy(sim_workload *w);

/* 1 if the workload is closed loop (without classes). */
int sim_workload_is_closed(const sim_workload *w);

/* Closed-loop clients in all: arrival.concurrency for a closed loop, the
 * closed-loop classes' concurrency summed with classes, else 0. */
int32_t sim_workload_clients(const sim_workload *w);
/* 1 when sim_workload_next gives arrivals: an open-loop workload, or
 * classes of which at least one is open loop. */
int sim_workload_has_open(const sim_workload *w);
/* Client `client`'s think time (its class's with classes), ns. */
sim_time sim_workload_think_ns(const sim_workload *w, int32_t client);
/* After sim_workload_next or sim_workload_sample_client gave 0: 1 when the
 * whole workload will issue nothing more. Without classes that is always
 * so; with classes, when every open-loop class's arrivals have ended and
 * every closed-loop class's clients have been refused a request (its
 * request budget or duration_s spent). */
int sim_workload_spent(const sim_workload *w);

/* Open loop: the next request in arrival order. Returns 1 and fills *out, 0
 * when the workload is exhausted (request count, duration or trace end), or
 * SIM_ENOMEM (prefix structure only; the workload can then only be destroyed).
 * multi_turn: each arrival is the next turn of one of `sessions` open
 * sessions picked uniformly at random, so with Poisson arrivals each
 * session's turns are a Poisson process of rate/sessions (the inter-turn gap
 * is exponential with mean sessions/rate); a session that has sent `turns`
 * turns closes and its slot opens a new session on its next pick.
 * Synthetic arrivals are a renewal process from t = 0 (the first request
 * arrives after one inter-arrival gap; constant rate gives (k+1)/rate); trace
 * replay puts the first entry at 0. Only arrivals before duration_s count. */
int sim_workload_next(sim_workload *w, sim_request_spec *out);

/* Closed loop: a new request arriving at `now` (lengths drawn, or taken from
 * the trace in order). Returns 1, 0 when the request budget is spent, or
 * SIM_ENOMEM as sim_workload_next. multi_turn: the session slot is picked
 * at random among `concurrency` slots; use sim_workload_sample_client. */
int sim_workload_sample(sim_workload *w, sim_time now, sim_request_spec *out);

/* Closed loop, sent by client `client` in [0, concurrency): multi_turn sends
 * that client's session's next turn (client c runs one session after another,
 * `turns` turns each; workload.prefix.sessions is unused in closed loop).
 * Other kinds ignore the client: same as sim_workload_sample. */
int sim_workload_sample_client(sim_workload *w, sim_time now, int32_t client, sim_request_spec *out);

/* Hands back a request's hash-id storage once the request has finished (or
 * was dropped). Call it once per issued request; a no-op for requests
 * without generated ids (trace ids live until destroy). The spec may be a
 * copy of the one the workload filled. */
void sim_workload_release(sim_workload *w, const sim_request_spec *spec);

/* Generated requests not yet released, and heap bytes holding their ids
 * (plus the free pool and multi-turn session contexts); 0 without prefix
 * structure. For leak and memory checks. */
int64_t sim_workload_ids_live(const sim_workload *w);
size_t sim_workload_ids_bytes(const sim_workload *w);

/* Sessions (workload.sessions, or a Mooncake trace with session_id fields;
 * sim_session.h): sim_workload_next() then gives each session's first
 * request at the session's start (synthetic: the arrival process times
 * session starts, workload.sessions.count of them; a trace: its session
 * starts and lines outside sessions at their timestamps), and every other
 * request of a session comes from sim_workload_request_done(). */
int sim_workload_has_sessions(const sim_workload *w);
/* Sessions opened and not yet ended (0 without sessions): the run is over
 * only when this is 0 too. */
int64_t sim_workload_sessions_open(const sim_workload *w);

/* Receives one follow-up request (id and arrival set); returns 0 or a
 * negative error. */
typedef int (*sim_workload_emit_fn)(void *ctx, sim_request_spec *spec);
struct sim_session_done_info;
/* Tells the workload request spec finished (or was dropped) at now. For a
 * request of a session it emits the requests that now follow, fills *info
 * (sim_session.h) and returns 1; otherwise it zeroes *info and returns 0.
 * Negative: SIM_ENOMEM or emit's error (the run should stop). Call it
 * before sim_workload_release of the same spec. */
int sim_workload_request_done(sim_workload *w, const sim_request_spec *spec, sim_time now,
                              sim_workload_emit_fn emit, void *ctx, struct sim_session_done_info *info);

/* Requests the workload will issue in total, or -1 if bounded only by time.
 * Exact for trace replay and constant rate; for Poisson/gamma with both a
 * request count and duration_s it is the count, an upper bound. */
int64_t sim_workload_total(const sim_workload *w);

/* Draws one length from a distribution (exposed for tests). */
typedef struct sim_lendist sim_lendist;
int sim_lendist_create(const sim_len_dist *cfg, sim_lendist **out, sim_err *err);
int32_t sim_lendist_draw(sim_lendist *d, void *gsl_rng_ptr);
double sim_lendist_mean(const sim_lendist *d); /* exact mean of the (clamped) distribution where known, else the configured mean */
void sim_lendist_destroy(sim_lendist *d);

#endif
