/* sim_trace_out — a Chrome / Perfetto trace of one run (`servesim run
 * --trace FILE.json`): a JSON object {"traceEvents": [...]} that
 * chrome://tracing and ui.perfetto.dev open. One track (thread) per
 * instance, named with its pool role, holds its iterations as complete
 * events (args: prefill tokens, prefill and decode sequences, batch size);
 * per instance counters give the waiting queue and the KV blocks held by
 * requests (fraction of the instance's blocks); KV transfers
 * (prefill → decode) and KV fetches (peer pull, tier promotion) are async
 * slices joined to the two instances' tracks by flow arrows. Timestamps
 * are simulated microseconds. The trace is bounded by a simulated-time
 * window [t0, t1) and by an event cap, so a long run stays a usable file;
 * (metadata naming the tracks is not counted); when the cap is hit later events are dropped and the file says so in
 * its metadata. Events are written as they happen (streamed, one jansson
 * object each). Owns the FILE it opens; errors: SIM_EIO (open, write),
 * SIM_ENOMEM. */
#ifndef SIM_TRACE_OUT_H
#define SIM_TRACE_OUT_H

#include "sim_err.h"

#include <stdint.h>

typedef struct sim_trace_out sim_trace_out;

typedef struct {
    int64_t start_ns, end_ns;
    int32_t prefill_tokens, prefill_seqs, decode_seqs;
    int64_t waiting;          /* requests queued for admission after the iteration */
    double kv_used;           /* fraction of the instance's KV blocks held by requests */
    int32_t slot, slots;      /* pipeline parallelism: the batch slot and how many the
                               * instance has (their batches overlap); slots <= 1 without */
} sim_trace_iter;

/* window in seconds of simulated time (t1 <= t0: no upper bound);
 * max_events > 0 caps the events written. */
int sim_trace_out_open(const char *path, double t0, double t1, int64_t max_events, sim_trace_out **out,
                       sim_err *err);
/* Names track `instance` (e.g. "instance 3 (decode)"). */
void sim_trace_out_instance(sim_trace_out *t, int32_t instance, const char *role);
void sim_trace_out_iteration(sim_trace_out *t, int32_t instance, const sim_trace_iter *it);
/* A KV movement of request `req` from instance src (-1: a host or pool tier)
 * to dst: begin when it starts, end when it arrived. kind: "KV transfer" or
 * "KV fetch". */
void sim_trace_out_kv_begin(sim_trace_out *t, const char *kind, uint64_t req, int32_t src, int32_t dst,
                            int64_t now_ns, double bytes);
void sim_trace_out_kv_end(sim_trace_out *t, const char *kind, uint64_t req, int32_t dst, int64_t now_ns);
/* Finishes the JSON and closes the file; returns 0 or SIM_EIO. Writes the
 * event count into *events when not NULL. */
int sim_trace_out_close(sim_trace_out *t, int64_t *events, sim_err *err);

#endif
