/* sim_instance — one serving-engine replica (colocated role).
 *
 * Continuous batching in the vLLM-v1 / Sarathi style: every iteration first
 * gives each decoding request one token, then spends the rest of the token
 * budget (max_batched_tokens) on prefill chunks (at most chunk_tokens per
 * request), continuing partial prefills before admitting new requests, up to
 * max_seqs requests in flight. KV memory is a pool of fixed-size blocks
 * (capacity from the cost model's memory model); when a decode step needs a
 * block and none is free, the most recently admitted request is preempted
 * and later recomputed. Iteration latency comes from model_cost.
 *
 * Cost per iteration is O(log B + chunks), not O(B): decoding requests are
 * never visited per token. The instance keeps the iteration index n, the
 * running sum of context bases (Σ ctx = Σ base + B·n), a min-heap keyed by
 * the iteration at which each request emits its last token, and a count of
 * decoding requests per residue of base mod block size (those whose context
 * crosses a block boundary at iteration n form one residue class, so new
 * block demand is one array read).
 *
 * Pipeline parallelism (the cost model's pp > 1): the instance keeps up to
 * micro_batches batch slots ("lanes", sim_instance_impl.h), each with its
 * own requests, decode set and batch in flight, sharing the KV pool and the
 * queue; each batch goes through the host and every stage in turn
 * (model_cost_pipeline), waiting where an earlier batch holds a stage. The
 * instance counts as busy while any of its batches is in flight.
 *
 * The instance owns the requests handed to it until on_finish returns them;
 * it does not own the engine, cost model or metrics. Times in ns. */
#ifndef SIM_INSTANCE_H
#define SIM_INSTANCE_H

#include "model_cost.h"
#include "sim_engine.h"
#include "sim_err.h"
#include "sim_metrics.h"
#include "sim_prefix.h"
#include "sim_request.h"
#include "sim_router.h"
#include "sim_scenario.h"
#include "sim_spec.h"
#include "sim_trace_out.h"

#include <stdint.h>

typedef struct sim_instance sim_instance;

typedef struct {
    /* The request emitted its last token; the instance has let go of it. */
    void (*on_finish)(void *ctx, sim_req *r);
    /* prefill role: the first token is out; the KV stays held here (state
     * KV_HOLD, r->hold_blocks) until sim_instance_release_hold(). */
    void (*on_prefill_done)(void *ctx, sim_req *r);
    /* decode role: blocks for r's KV are now reserved here (it had waited). */
    void (*on_kv_reserved)(void *ctx, sim_req *r);
    /* KV sharing (optional): at admission, after `local` cache blocks matched
     * here, how many more blocks of r's prefix could be fetched from
     * elsewhere faster than recomputed (0 = none). */
    int32_t (*on_fetch_plan)(void *ctx, sim_req *r, int32_t local);
    /* Blocks for the planned fetch are allocated: start it; the cluster
     * calls sim_instance_fetch_done when the KV has arrived. */
    void (*on_fetch_start)(void *ctx, sim_req *r);
    /* Optional: r finished and its first n keys, its prompt's and the full
     * blocks of its answer, are now in this instance's prefix cache (the
     * router's approximate view records the answer's as it did the
     * prompt's). */
    void (*on_answer_cached)(void *ctx, int32_t instance, const sim_req *r, int32_t n);
    /* A cached block was evicted here (pool: demote it to a lower tier). */
    void (*on_cache_evict)(void *ctx, int32_t instance, uint64_t key);
    /* Optional: the published view was rewritten; outstanding is its load
     * (the cluster keeps its least-loaded index current from this). */
    void (*on_load)(void *ctx, int32_t instance, int64_t outstanding);
    /* An iteration ended (optional; a trace records it). */
    void (*on_iteration)(void *ctx, int32_t instance, const sim_trace_iter *it);
    void *ctx;
} sim_instance_hooks;

/* role: colocated, prefill or decode (a decode instance can still prefill
 * to recompute a preempted request, as real engines do). */
int sim_instance_create(sim_engine *eng, int32_t id, sim_role role, const sim_sched_cfg *cfg,
                        const model_cost *cost, int64_t kv_tokens, sim_metrics *metrics,
                        sim_instance_hooks hooks, sim_instance **out, sim_err *err);
void sim_instance_destroy(sim_instance *in);

/* Turns on prefix caching: an index of cache blocks of cache_tokens tokens
 * (a multiple of the KV block) sharing the KV memory with running
 * requests; unreferenced blocks are evicted by policy when an allocation
 * needs room. Requests with keys reuse their cached prefix. */
int sim_instance_enable_cache(sim_instance *in, int32_t cache_tokens, sim_prefix_policy policy, sim_err *err);

/* The fetched blocks of r have arrived: they join the local cache and r's
 * prefill continues after them. */
void sim_instance_fetch_done(sim_instance *in, sim_req *r);

/* Turns on speculative decoding (sim_spec.h) before any request arrives;
 * the instance owns spec from now on. Not with pipeline stages or a cost
 * function (SIM_ENOTSUP). */
int sim_instance_enable_spec(sim_instance *in, sim_spec *spec, sim_err *err);

/* The batch a decode-only iteration of n requests runs as: its CUDA
 * graph's (scheduler.cuda_graph_sizes, every attention-DP rank padded to
 * the graph of the largest rank's share; sim_graph_sizes.h), or n when no
 * graph covers it. Pure. */
int32_t sim_instance_graph_batch(const sim_instance *in, int32_t n);

/* Replaces the cost model's iteration latency (seconds) by fn(ctx, batch),
 * e.g. attention/FFN disaggregation (sim_af_iteration). */
void sim_instance_set_cost_fn(sim_instance *in, double (*fn)(void *ctx, const model_batch *b), void *ctx);

/* Colocated encoding (workload.images): an iteration holding the first
 * prefill chunk of a request with r->encode_due set runs the vision tower
 * for it first, fn(ctx, r, &compute_s, &mem_s) seconds (the busy seconds
 * for the energy model), added to the iteration; r->encode_due is then
 * cleared (the embeddings stay cached for a recompute after preemption).
 * NULL clears it. */
typedef double (*sim_encode_fn)(void *ctx, const struct sim_req *r, double *compute_s, double *mem_s);
void sim_instance_set_encoder(sim_instance *in, sim_encode_fn fn, void *ctx);

/* Sets (fn) or clears (NULL) the on_iteration hook, called with the hooks'
 * ctx; without one an iteration's end builds no trace record. */
void sim_instance_set_iteration_hook(sim_instance *in,
                                     void (*fn)(void *ctx, int32_t instance, const sim_trace_iter *it));

/* Sets (fn) or clears (NULL) the on_load hook, called with the hooks' ctx. */
void sim_instance_set_load_hook(sim_instance *in, void (*fn)(void *ctx, int32_t instance, int64_t outstanding));

/* Turns on the energy accounting: each iteration adds sim_energy_busy_s
 * (sim_energy.h) of its cost-model busy seconds, per GPU of the instance
 * (a pipeline stage's GPUs run 1/pp of a batch's layers), read back as
 * sim_instance_stats.energy_busy_s. Not for an instance whose iteration
 * cost is replaced (sim_instance_set_cost_fn): SIM_EINVAL. */
int sim_instance_enable_energy(sim_instance *in, double mem_share, sim_err *err);
/* Priority scheduling on (workload.classes): the waiting queue is ordered
 * by (spec.priority, arrival) and preemption takes the least urgent first
 * (sim_instance_priority.c). Before the first request. */
void sim_instance_set_priority(sim_instance *in, int on);
/* Per-class metrics (the caller's, n of them, outliving the instance): each
 * finished request's record also goes to m[spec.cls]. */
void sim_instance_set_class_metrics(sim_instance *in, sim_metrics **m, int32_t n);

/* The index (NULL without caching), for routers that peek at it. */
struct sim_prefix *sim_instance_cache(const sim_instance *in);

/* 1 if a request of these lengths can ever complete here (its full KV fits). */
int sim_instance_fits(const sim_instance *in, int32_t input_tokens, int32_t output_tokens);

/* Hands a request to the instance (state WAITING); starts an iteration if idle. */
void sim_instance_submit(sim_instance *in, sim_req *r);

void sim_instance_view(const sim_instance *in, sim_router_view *out);

/* Keeps *counter (shared by several instances, owned by the caller) up to
 * date with the requests queued here: submitted (or preempted) and not yet
 * admitted, those still in the frontend included. */
void sim_instance_count_queued(sim_instance *in, int64_t *counter);

/* prefill role: frees the KV blocks r held after its prefill. */
void sim_instance_release_hold(sim_instance *in, sim_req *r);

/* decode role: reserves blocks for r's KV (r->prefill_target tokens).
 * Returns 1 if reserved now (state KV_MOVING), 0 if r waits in this
 * instance's FIFO until blocks free up (on_kv_reserved fires then). */
int sim_instance_reserve(sim_instance *in, sim_req *r);

/* decode role: r (still before or in its prefill elsewhere) will come here
 * (deployment.decode_pick arrival): its decode work counts in this
 * instance's load from now; sim_instance_reserve then does not count it
 * again. */
void sim_instance_claim(sim_instance *in, sim_req *r);

/* decode role: r's KV has arrived into its reserved blocks; it joins decode
 * at the next iteration boundary. */
void sim_instance_submit_decode(sim_instance *in, sim_req *r);

/* Keeps *slot equal to sim_instance_view() from now on (updated on every
 * change), so a router can read all instances' loads from one array. */
void sim_instance_publish_view(sim_instance *in, sim_router_view *slot);

/* Closes the current sampling window at `now` and fills *out. */
void sim_instance_sample(sim_instance *in, sim_time now, sim_sample *out);

/* Prefill tokens queued or partly done here (for expected-delay estimates). */
int64_t sim_instance_pending_prefill(const sim_instance *in);
/* The prefill tokens served before a new request of this priority would be:
 * all of them without priority scheduling, else all but those of waiting
 * requests of a larger priority number (which it would overtake). */
int64_t sim_instance_pending_prefill_before(const sim_instance *in, int32_t priority);

/* Arrival time of the longest-waiting queued request, or -1 if none waits. */
sim_time sim_instance_oldest_waiting(const sim_instance *in);

typedef struct {
    int64_t kv_blocks_total, kv_blocks_used;
    int64_t waiting, running, decoding;
    int64_t iterations;
    int64_t preemptions;
    int64_t outstanding_tokens;
    int64_t kv_pending;        /* decode role: requests waiting for blocks */
    int64_t held;              /* prefill role: requests whose KV is held here */
    int64_t cached_blocks;     /* KV blocks held by the prefix cache */
    int64_t cache_referenced;  /* cache blocks referenced by requests */
    sim_time busy_ns;
    double energy_busy_s;      /* seconds at the full dynamic power per GPU (energy on; else 0) */
    /* API-server workers (scheduler.tokenizer_workers): requests served,
     * their waits for a worker and their service, summed. */
    int64_t fe_jobs;
    sim_time fe_wait_ns, fe_service_ns;
    /* Detokenise-and-stream workers (scheduler.detokenizer_workers): jobs
     * (a request's tokens of one iteration), tokens, and the jobs' waits and
     * service summed, in ns. */
    int64_t dt_jobs, dt_tokens;
    double dt_wait_ns, dt_service_ns;
} sim_instance_stats;

void sim_instance_stats_get(const sim_instance *in, sim_instance_stats *out);

/* scheduler.admission ratio: SGLang's new-token ratio now (sim_instance_ratio.c). */
double sim_instance_ratio(const sim_instance *in);

#endif
