/* sim_cluster_impl — the cluster's internal state, shared by the files
 * that implement it: sim_cluster.c (build, traffic, sampling, run),
 * sim_cluster_route.c (prefix keys and the cache-aware router's views),
 * sim_cluster_kv.c (KV moving between instances: PD transfers and KV
 * sharing), sim_cluster_perfdb.c (calibrated latencies) and
 * sim_cluster_admit.c (SLO classes and admission control) and
 * sim_cluster_autoscale.c (instances of autoscaled pools coming and
 * going). Not a public
 * header: only those files include it. */
#ifndef SIM_CLUSTER_IMPL_H
#define SIM_CLUSTER_IMPL_H

#include "sim_cluster.h"
#include "model_catalog.h"
#include "model_cost.h"
#include "model_gemm_split_memo.h"
#include "model_layout.h"
#include "model_vision.h"
#include "calib_table_cache.h"
#include "sim_af.h"
#include "sim_engine.h"
#include "sim_instance.h"
#include "sim_kvtier.h"
#include "sim_loadtree.h"
#include "sim_net.h"
#include "sim_prefix.h"
#include "sim_prefix_keys.h"
#include "sim_router_cache.h"
#include "sim_request.h"
#include "sim_router.h"
#include "sim_session.h"
#include "sim_session_stats.h"
#include "sim_workload.h"
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REQ_SLAB 4096

typedef struct req_slab {
    struct req_slab *next;
    sim_req reqs[REQ_SLAB];
} req_slab;

/* A token bucket's state (sim_cluster_admit.c). */
typedef struct {
    double level;              /* tokens now */
    sim_time last;             /* when level was last brought up to date */
} sim_bucket_state;

/* The vision tower's price for some item count (sim_cluster_encode.c). */
typedef struct {
    double s, compute_s, mem_s;    /* seconds; busy seconds for the energy model */
} sim_enc_price;
#define SIM_ENC_MEMO 64            /* item counts memoised per pool */

struct sim_cluster {
    sim_scenario sc;
    sim_engine *eng;
    sim_workload *wl;
    sim_router *router;
    sim_metrics *metrics;
    model_spec model;
    model_gpu gpu;
    model_cost *costs[SIM_MAX_POOLS];
    model_cost *draft_costs[SIM_MAX_POOLS]; /* scheduler.speculative: the draft's cost model (NULL = off) */
    sim_instance **inst;
    int32_t *inst_pool;        /* pool index of each instance */
    int32_t *inst_gpu0;        /* first GPU (global index) of each instance */
    int32_t *inst_ngpu;
    /* Front instances take new requests (colocated or prefill); back ones
     * take KV after prefill (pd). Each set has its own contiguous views. */
    int32_t *front, *back;
    int32_t n_front, n_back;
    sim_router_view *views, *back_views;
    sim_router *back_router;
    /* least_loaded routers' O(log N) indexes over the views they read (live
     * or snapshot); NULL for other policies */
    sim_loadtree *front_tree, *back_tree;
    int32_t *back_of;          /* instance -> back index (-1 for front instances) */
    int64_t back_kv_tokens;    /* smallest decode-instance KV capacity */
    double kv_bytes_per_token; /* what moves per token of context */
    int decode_at_arrival;     /* deployment.decode_pick arrival */
    sim_net *net;
    sim_af *af;                /* attention/FFN disaggregation (NULL unless af / pd+af) */
    calib_table_cache *perf_cache; /* calibrated latencies' tables (NULL = roofline only) */
    int perf_cache_owned;
    calib_memo *perf_memo;     /* this cluster's (this thread's) memo of table lookups */
    model_gemm_split_memo *split_memo; /* and of the GEMM descriptors' split-K picks */
    char perf_db_path[SIM_PATH_MAX];
    int32_t n_ffn_gpus;
    int32_t af_attn_pool, af_ffn_pool; /* the AF pools (-1 without AF) */
    /* prefix caching and cache-aware routing */
    int caching;               /* instances hold prefix caches */
    int cache_route;           /* routing.policy cache_aware */
    int32_t cache_tokens, hash_tokens;
    double *prefill_ms_per_token; /* per instance, for saved_ms / queue_ms */
    sim_router_view *rviews;   /* per-request views handed to the cache-aware router */
    sim_router_view *snap;     /* what every router reads when routing.snapshot_interval_s > 0: */
    sim_router_view *back_snap; /* front and decode views as of the last refresh (else NULL) */
    sim_prefix **approx;       /* routing.view approximate: the router's own indexes */
    sim_cache_sharing sharing; /* cache.sharing */
    int layerwise;             /* pd: KV moves layer by layer during prefill */
    int32_t *front_of;         /* instance -> front index (-1 for back instances) */
    sim_kvtier **host_tier;    /* pool: host-DRAM tier per node */
    sim_kvtier *pool_tier;     /* pool: remote pool */
    int32_t n_nodes;
    int64_t fetched_blocks;
    sim_keymap sessions;       /* session -> slot (stickiness) */
    int32_t *sess_inst;
    sim_time *sess_since;
    int64_t n_sess, sess_cap;
    int32_t n_inst, n_gpus;
    int64_t kv_tokens_per_inst;

    req_slab *slabs;
    sim_req *free_reqs;

    int arrivals_done;
    sim_session_stats *sess_stats; /* per-session figures; NULL without sessions */
    int64_t issued, completed, rejected, in_flight;
    int64_t in_tok_done, out_tok_done;
    double in_flight_area;     /* ∫ (in_flight + conn_waiting) dt in request·ns (Little's law check) */
    /* workload.arrival.max_connections (0 = unlimited): requests sent while
     * that many are in flight wait in the client in the order sent
     * (conn_head..conn_tail, holders linked by free_next), their arrival the
     * time they were sent. */
    int64_t conn_max, conn_waiting, conn_waited;
    sim_req *conn_head, *conn_tail;
    double conn_wait_ns;       /* summed over the requests that waited */
    sim_time area_last;
    int64_t total;             /* expected requests, -1 unknown */
    int overloaded;
    int64_t queued;            /* requests submitted to an instance and not yet admitted */
    char overload_reason[256];
    sim_time sample_ns;
    sim_time last_sample;
    sim_progress_fn progress;
    void *progress_ctx;
    struct sim_trace_out *trace;  /* --trace: the caller's, NULL when none */
    int64_t progress_next;
    /* SLO classes and admission control (sim_cluster_admit.c) */
    int admission;             /* some bucket or the SLO test can shed */
    sim_bucket_state bucket, class_bucket[SIM_MAX_CLASSES];
    int32_t n_classes;
    sim_metrics *class_metrics[SIM_MAX_CLASSES];
    int64_t shed, class_shed[SIM_MAX_CLASSES], class_rejected[SIM_MAX_CLASSES];
    /* Autoscaling (sim_cluster_autoscale.c): NULL when no pool autoscales;
     * an autoscaled pool is built at its max and starts with as_initial. */
    struct sim_cluster_as *as;
    int32_t as_initial[SIM_MAX_POOLS];
    /* workload.images (sim_cluster_encode.c) */
    int images;                /* requests carry images */
    model_media_grid media;    /* one item's grid and tokens */
    sim_lendist *img_count;
    gsl_rng *img_rng;
    sim_enc_price enc_memo[SIM_MAX_POOLS + 1][SIM_ENC_MEMO]; /* per pool, then the encode pool; s < 0 = not priced */
    int32_t enc_n, enc_idle;   /* encode pool GPUs (0 = colocated) and how many are idle */
    int32_t enc_gpu0;          /* global index of the first encoder GPU */
    int32_t enc_cost_pool;     /* the pool whose cost model prices the encoders */
    uint8_t *enc_busy;
    sim_req_list enc_queue;    /* requests waiting for an encoder (run_link) */
    double enc_bytes_per_token; /* embedding bytes per image token */
    int64_t enc_reqs, enc_items, enc_tokens;
    double enc_s_sum, enc_bytes;
    sim_time enc_wait_ns, enc_xfer_ns, enc_busy_ns;
    double enc_energy_gpu_s;   /* encode pool: GPU-seconds at the full dynamic range (energy.enabled) */
};

/* Ends the run on an allocation failure inside the event loop (the one
 * policy: the engine records it, stops, and sim_cluster_run returns it). */
static inline void sim_cluster_oom(sim_cluster *c, const char *what)
{
    sim_engine_fail(c->eng, SIM_ENOMEM, "out of memory %s", what);
}

/* sim_cluster_encode.c: validates workload.images against the model and
 * sets up colocated or pool encoding (after the instances, before the
 * network: encoders add GPUs); destroy frees it; attach draws a request's
 * images into its spec; route takes r (bound for front instance k) into the
 * encode pool and returns 1, or marks it for colocated encoding and returns
 * 0 (the caller submits it); summary fills out->encode. */
int sim_cluster_encode_init(sim_cluster *c, sim_err *err);
void sim_cluster_encode_destroy(sim_cluster *c);
void sim_cluster_encode_attach(sim_cluster *c, sim_req *r);
int sim_cluster_encode_route(sim_cluster *c, sim_req *r, int32_t k);
void sim_cluster_encode_summary(const sim_cluster *c, sim_summary *out);

/* sim_cluster_route.c */
int sim_cluster_build_keys(sim_cluster *c, sim_req *r); /* SIM_ENOMEM: the run failed */
void sim_cluster_on_snapshot(sim_engine *eng, void *ctx, uint64_t arg);
void sim_cluster_on_load(void *ctx, int32_t instance, int64_t outstanding);
int sim_cluster_attach_loadtrees(sim_cluster *c, sim_err *err); /* SIM_ENOMEM */
void sim_cluster_fill_cache_views(sim_cluster *c, const sim_req *r);
void sim_cluster_approx_record(sim_cluster *c, int32_t j, const uint64_t *keys, int32_t n);
void sim_cluster_on_answer_cached(void *ctx, int32_t k, const sim_req *r, int32_t n);
int32_t sim_cluster_sticky_pick(sim_cluster *c, const sim_req *r);
void sim_cluster_sticky_note(sim_cluster *c, const sim_req *r, int32_t j);

/* sim_cluster_kv.c */
void sim_cluster_on_prefill_done(void *ctx, sim_req *r);
void sim_cluster_on_kv_reserved(void *ctx, sim_req *r);
/* The decode-pool index deployment.decode_routing picks for r now. */
int32_t sim_cluster_pick_decode(sim_cluster *c, const sim_req *r);
/* The GPUs of instance k holding distinct KV of a request (rank key), in
 * stage order, into out (at most cap); returns their count. */
int sim_cluster_kv_ranks(const sim_cluster *c, int32_t k, uint64_t key, int *out, int cap);
/* Moves bytes from n_src consecutive endpoints starting at src0 to the GPUs
 * of instance dst, striped over both sides; cb(r) fires on arrival. A
 * network failure stops the run ("moving <what> to instance ..."). */
void sim_cluster_move_to_instance(sim_cluster *c, int src0, int n_src, int32_t dst, double bytes,
                                  sim_net_done_fn cb, sim_req *r, const char *what);
/* PD hand-over beyond the network's transfer (sim_cluster_kv.c), ns. */
sim_time sim_cluster_pd_handover(const sim_sched_cfg *s, double stripe_bytes, sim_time moved_ns);
int32_t sim_cluster_on_fetch_plan(void *ctx, sim_req *r, int32_t local);
void sim_cluster_on_fetch_start(void *ctx, sim_req *r);
void sim_cluster_on_cache_evict(void *ctx, int32_t instance, uint64_t key);

/* sim_cluster_admit.c: builds the class metrics and buckets (SIM_ENOMEM);
 * frees them; 1 when r, routed to instance k, is admitted, 0 when shed
 * (counted); r's predicted TTFT on k in ms; fills the summary's shed count
 * and classes, and judges the headline's good requests by their classes. */
int sim_cluster_admit_init(sim_cluster *c, sim_err *err);
void sim_cluster_admit_fini(sim_cluster *c);
int sim_cluster_admit(sim_cluster *c, const sim_req *r, int32_t k);
double sim_cluster_predicted_ttft_ms(const sim_cluster *c, const sim_req *r, int32_t k);
int sim_cluster_class_summaries(const sim_cluster *c, sim_summary *out, sim_err *err);

/* sim_cluster.c: 1 when nothing is left to arrive or run. */
int sim_cluster_run_over(const sim_cluster *c);

/* sim_cluster_autoscale.c (every call but init needs c->as): builds the
 * states once the instances exist (SIM_ENOMEM; nothing when no pool
 * autoscales); frees them; schedules the pools' first decisions; 1 when
 * instance k is sampled (active or draining); 1 when front index j takes new
 * requests; the front (back) index a router picks among the active
 * instances from these views; instance k let go of a request (a draining
 * one leaves when empty); fills out->autoscale at the run's end. */
typedef struct sim_cluster_as sim_cluster_as;
int sim_cluster_as_init(sim_cluster *c, sim_err *err);
void sim_cluster_as_fini(sim_cluster *c);
void sim_cluster_as_start(sim_cluster *c);
int sim_cluster_as_sampled(const sim_cluster *c, int32_t k);
int sim_cluster_as_routable_front(const sim_cluster *c, int32_t j);
int32_t sim_cluster_as_pick_front(sim_cluster *c, const sim_request_spec *spec, const sim_router_view *views);
int32_t sim_cluster_as_pick_back(sim_cluster *c, const sim_request_spec *spec, const sim_router_view *views);
void sim_cluster_as_touched(sim_cluster *c, int32_t k);
void sim_cluster_as_summary(sim_cluster *c, sim_summary *out);

/* sim_cluster_perfdb.c */
int sim_cluster_attach_perf_db(sim_cluster *c, sim_err *err);

#endif
