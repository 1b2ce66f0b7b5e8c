/* sim_instance_impl — the instance's state, shared by the files that
 * implement it: sim_instance.c (iterations, scheduling, lifecycle),
 * sim_instance_cache.c (prefix cache and KV fetches), sim_instance_pd.c
 * (prefill/decode hand-over), sim_instance_priority.c (priority order) and
 * sim_instance_ratio.c (SGLang's ratio admission and retraction). Not a public header. */
#ifndef SIM_INSTANCE_IMPL_H
#define SIM_INSTANCE_IMPL_H

#include "sim_instance.h"
#include "sim_prefix.h"
#include "sim_detok.h"
#include "sim_spec.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t finish_iter;
    uint64_t id;
    sim_req *r;
} heap_ent;

/* One batch slot of the instance: the requests that run in its batches,
 * their decode set and the batch now in flight. Without pipeline
 * parallelism an instance has one; with pp stages it has up to
 * parallel.micro_batches (vLLM's virtual engines, the micro-batches of the
 * SGLang and TensorRT-LLM PP schedulers), each batch going through every
 * stage in turn while the others occupy the other stages. A request
 * belongs to one lane from admission (or decode join) until it leaves. */
typedef struct {
    int32_t idx;
    sim_req_list running;       /* run_link, admission order */
    sim_req_list prefilling;    /* pre_link, admission order */
    sim_req_list just_joined;   /* pre_link, decode role: joined at the last boundary */
    int64_t fetching;           /* admitted requests waiting for fetched prefix KV */

    heap_ent *heap;             /* decoding requests by (finish_iter, id) */
    int32_t heap_n, heap_cap;
    /* heap[0]'s finish_iter and request (INT64_MAX and NULL when empty),
     * where iter_end_warm finds them without waiting for the heap's line:
     * a prefetch hint only, no decision reads them. */
    int64_t top_finish;
    sim_req *top_req;
    int64_t *res_cnt;           /* decoding requests per ctx_base mod bs */
    int64_t dec_n, dec_base_sum;
    int64_t dstep;              /* iterations that gave every decoding request a token */
    sim_time stall_ns;          /* prefill-only time decoding requests sat through */

    int busy;                   /* a batch of this lane is in flight */
    sim_time iter_start;
    int32_t cur_n_decode, cur_batch;
    model_chunk *chunks;
    sim_req **chunk_req;
    int32_t n_chunks, chunk_cap;
} sim_lane;

/* Field order matters for speed: with thousands of instances none stays
 * in cache between two of its iterations, so the event loop asks for an
 * instance's first lines two events ahead and iter_end_warm for the rest
 * of its hot part one event ahead. The hot part comes first: the pointers
 * iter_end_warm follows (it must not wait on a line asked for only one
 * event earlier), then what every iteration reads or writes, then the
 * configuration, of which only the head, up to the speculative-decoding
 * block, is read per iteration. What only some setups use (PD roles,
 * pipeline stages, ratio admission, the API server's workers) is last. */
struct sim_instance {
    sim_engine *eng;
    int32_t id;
    sim_role role;
    sim_lane *lanes;            /* n_lanes batch slots (1 without pipeline parallelism) */
    int32_t n_lanes, busy_lanes;
    sim_router_view *published; /* where the router reads this instance's load */
    /* Speculative decoding (NULL = off): a decoding request's ctx_base is
     * then its KV tokens now, not a base (its tokens per step are drawn),
     * r->blocks its blocks, and every step visits the decode set. */
    sim_spec *spec;
    /* The one lane of an instance without pipeline parallelism (lanes
     * points here): kept inside the instance, so an iteration's end finds
     * it in the lines the event loop fetched ahead for the instance instead
     * of missing on a separate allocation. */
    sim_lane lane0;
    const model_cost *cost;
    double (*cost_fn)(void *ctx, const model_batch *b);
    void *cost_ctx;
    sim_encode_fn enc_fn;       /* colocated encoding (NULL = none; enc_ctx below) */
    sim_metrics *metrics;
    sim_metrics **class_metrics; /* the cluster's per-class metrics (NULL = none), indexed by spec.cls */
    sim_instance_hooks hooks;

    int64_t bs;                 /* block size in tokens */
    int64_t blocks_total, blocks_used; /* used = private blocks of requests */
    sim_prefix *pc;             /* prefix cache (NULL = off); its blocks are KV too */
    int64_t ctok, cbk;          /* cache block in tokens, and in KV blocks */
    int64_t blocks_taken;       /* blocks ever allocated from the free pool (preempt_keeps_kv) */

    sim_req_list waiting;       /* run_link, FIFO (preempted go to the front; retracted, ratio, to the back) */
    int64_t running_n;          /* Σ lanes' running requests */
    int32_t n_stages;           /* pipeline stages (pp; the stages' clocks are below) */
    int32_t dp_ranks;           /* attention-DP ranks of the layout (1 = none) */
    int32_t graph_max_bs;       /* largest captured CUDA-graph batch per DP rank (0 = no graphs;
                                 * scheduler.cuda_graph_sizes, sim_graph_sizes.h) */
    int prefill_first;          /* scheduler.policy prefill_first (SGLang) */
    int reserve;                /* scheduler.admission reserve: admit only what can finish */
    int ratio_mode;             /* scheduler.admission ratio on a colocated instance (sim_instance_ratio.c) */
    int by_priority;            /* workload.classes: waiting queue by priority (sim_instance_priority.c) */
    int energy_on;              /* sim_instance_enable_energy (its figures are below) */
    int64_t resv_total;         /* reserve: blocks promised to running requests */

    int64_t iter;               /* iterations completed */
    int64_t outstanding;        /* prefill tokens + output tokens still to compute */
    int64_t pending_prefill;    /* prefill tokens still to compute (queued + partial) */
    int64_t *queued;            /* caller's count of queued requests (NULL = none) */
    sim_time busy_since;        /* start of the current stretch with a batch in flight */
    sim_time busy_ns;
    sim_time win_start, win_busy;
    double win_batch;
    /* Admission holds (sim_instance_gate.c). */
    int64_t unseen;             /* waiting queue's tail not yet received (recv_interval) */
    int64_t batch_wait;         /* steps new requests have been held by batch waiting */
    sim_detok detok;            /* scheduler.detokenizer_workers (off: workers 0) */
    sim_sched_cfg cfg;

    /* Used only by some setups. */
    void *enc_ctx;
    sim_req_list kv_pending;    /* run_link, decode role: waiting for blocks to take KV */
    sim_req_list ready;         /* run_link, decode role: KV arrived, joins at the next boundary */
    int64_t reserved;           /* decode role: reserved, KV still in flight */
    int64_t held;               /* prefill role: requests whose KV is held here */
    /* Pipeline stages (n_stages = pp > 1): when the host and each stage are
     * next free, and one batch's per-stage times (model_cost_pipeline). */
    sim_time host_free, *stage_free;
    double *stage_s, *hop_s;
    double ratio;               /* ratio: SGLang's new_token_ratio now */
    double ratio_pass;          /* ratio: KV tokens counted in this admission pass (< 0: not summed yet) */
    int64_t preemptions;
    int64_t recv_count;         /* SGLang's recv counter since the last poll */
    int64_t adp_wait, adp_batching; /* TensorRT-LLM's attention-DP balancing step counters */
    int64_t *rank_n;                /* attention-DP balancing: requests on each rank (waiting or
                                     * running), NULL where not balanced (sim_instance_gate.c) */
    int64_t *rank_wait;             /* of which waiting for their context phase */
    int32_t spec_k;             /* speculative decoding: draft tokens a step (spec, above) */
    int32_t n_class_metrics;
    /* Energy (energy_on): the catalogue's mem_share, and Σ over iterations
     * of sim_energy_busy_s per GPU. */
    double energy_mem_share, energy_busy_s;
    /* The API server's worker pool (cfg.tokenizer_workers > 0): idle
     * workers, requests waiting for one (run_link, FIFO), and per job the
     * wait and service summed. */
    int32_t fe_idle;
    sim_req_list fe_queue;
    int64_t fe_jobs;
    sim_time fe_wait_ns, fe_service_ns;
};

/* Admission holds (sim_instance_gate.c): a request joined the waiting
 * queue; a step of lane ln ended; whether this step may admit waiting
 * requests (it also polls for new ones). */
void sim_instance_gate_arrival(sim_instance *in, sim_req *r);
/* Attention-DP balancing's per-rank counts (sim_instance_gate.c; no-ops
 * where in->rank_n is NULL): r left the waiting queue for a batch; r went
 * back to it (preempted); r left the instance (finished, or handed over to
 * decode). Inline: they run on every admission and finish. */
static inline void sim_instance_gate_admitted(sim_instance *in, const sim_req *r)
{
    if (in->rank_n) in->rank_wait[r->dp_rank]--;
}

static inline void sim_instance_gate_requeued(sim_instance *in, const sim_req *r)
{
    if (in->rank_n) in->rank_wait[r->dp_rank]++;
}

static inline void sim_instance_gate_left(sim_instance *in, const sim_req *r)
{
    if (in->rank_n) in->rank_n[r->dp_rank]--;
}
/* Priority scheduling (sim_instance_priority.c): r into its place in the
 * received part of the waiting queue; the unseen tail into its places (at
 * a poll); the running request of lane ln to preempt first (NULL when all
 * are fetching); the earliest arrival among the waiting (-1 when none). */
void sim_instance_waiting_place(sim_instance *in, sim_req *r);
void sim_instance_waiting_receive(sim_instance *in);
sim_req *sim_instance_priority_victim(const sim_instance *in, const sim_lane *ln);
sim_time sim_instance_priority_oldest(const sim_instance *in);
void sim_instance_gate_step_end(sim_instance *in, const sim_lane *ln);
int sim_instance_gate_admit(sim_instance *in, const sim_lane *ln);

static inline sim_lane *lane_of(sim_instance *in, const sim_req *r) { return &in->lanes[r->lane]; }

static inline void run_add(sim_instance *in, sim_lane *ln, sim_req *r)
{
    r->lane = ln->idx;
    sim_req_list_push_back(&ln->running, r, SIM_RUN_LINK);
    in->running_n++;
}

static inline void run_remove(sim_instance *in, sim_req *r)
{
    sim_req_list_remove(&lane_of(in, r)->running, r, SIM_RUN_LINK);
    in->running_n--;
}

/* The token budget a decode step's requests take: one token each, 1 + k
 * under speculative decoding (the verify pass scores the k drafts as
 * tokens of the batch; TensorRT-LLM's max_num_tokens, vLLM's
 * max-num-batched-tokens and SGLang's budget count them). */
static inline int64_t lane_decode_tokens(const sim_instance *in, const sim_lane *ln)
{
    return (int64_t)ln->dec_n * (1 + (in->spec ? in->spec_k : 0));
}

static inline int64_t blocks_for(const sim_instance *in, int64_t tokens)
{
    return (tokens + in->bs - 1) / in->bs;
}

static inline int64_t mod_bs(const sim_instance *in, int64_t a)
{
    int64_t m = a % in->bs;
    return m < 0 ? m + in->bs : m;
}

static inline void queued_add(sim_instance *in, int64_t d)
{
    if (in->queued) *in->queued += d;
}

/* KV blocks the prefix cache holds (referenced or evictable). */
static inline int64_t cached_kv(const sim_instance *in)
{
    if (!in->pc) return 0;
    sim_prefix_stats st;
    sim_prefix_stats_get(in->pc, &st);
    return st.total * in->cbk;
}

static inline int64_t shared_kv(const sim_instance *in, const sim_req *r)
{
    return (int64_t)r->shared * in->cbk;
}

/* sim_instance.c */
void sim_instance_schedule(sim_instance *in, sim_lane *ln);
/* Schedules every idle lane; publishes the view when none is idle. */
void sim_instance_kick(sim_instance *in);
/* The first idle lane, NULL when every lane has a batch in flight. */
sim_lane *sim_instance_idle_lane(sim_instance *in);
void sim_instance_publish(sim_instance *in);
void sim_instance_decode_join(sim_instance *in, sim_lane *ln, sim_req *r);

/* sim_instance_cache.c */
void sim_instance_evicted(void *ctx, uint64_t key);
int64_t sim_instance_free_blocks(sim_instance *in, int64_t need);
void sim_instance_release_refs(sim_instance *in, sim_req *r);
void sim_instance_match_prefix(sim_instance *in, sim_req *r);
void sim_instance_unmatch_prefix(sim_instance *in, sim_req *r);
void sim_instance_cache_insert(sim_instance *in, sim_req *r);
void sim_instance_cache_output(sim_instance *in, sim_req *r, int64_t kv_tokens);
int sim_instance_plan_fetch(sim_instance *in, sim_req *r);

/* sim_instance_ratio.c: an admission pass starts; whether r may be
 * admitted (counted if so); r, admitted, was put back; the running request
 * of ln to retract first (NULL when all are fetching); a decode step ended
 * (retracted: it had to retract); the scheduler idles. */
void sim_instance_ratio_pass_start(sim_instance *in);
int sim_instance_ratio_admit(sim_instance *in, sim_req *r);
void sim_instance_ratio_refused(sim_instance *in, const sim_req *r);
sim_req *sim_instance_ratio_victim(sim_instance *in, sim_lane *ln);
void sim_instance_ratio_after_step(sim_instance *in, int retracted);
void sim_instance_ratio_idle(sim_instance *in);

/* sim_instance_pd.c */
void sim_instance_forget_joined(sim_instance *in, sim_req *r);
void sim_instance_join_ready(sim_instance *in, sim_lane *ln);
void sim_instance_grant_pending(sim_instance *in);

#endif
