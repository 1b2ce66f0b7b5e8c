/* sim_metrics — what a run measured, and its summary.
 *
 * The cluster reports each finished request (one compact record), each
 * instance iteration (for inter-token latency, which is weighted by the
 * decode requests that got a token in that iteration, so no per-token
 * storage is needed) and periodic per-instance samples (utilisation, batch
 * size, KV occupancy, waiting requests). sim_metrics_summarize() computes
 * percentiles (GSL, on sorted copies), throughput and goodput under the SLO.
 * Times in records are ns; the summary is in ms and seconds as named. The
 * metrics object owns all its records.
 *
 * Memory can be bounded (sim_metrics_set_limits): past max_requests the
 * records stop growing (the first max_requests stay readable) and the
 * summary comes from running sums and a log-bucket sketch per latency
 * (sim_sketch): counts, sums, means, goodput, rates and load are still
 * exact, percentiles are within SIM_METRICS_SKETCH_REL_ERROR (relative) of
 * the exact ones for values of at least 1 ns. Past max_samples the samples
 * stop growing; their means stay exact (running sums). */
#ifndef SIM_METRICS_H
#define SIM_METRICS_H

#include "sim_energy.h"
#include "sim_engine.h"
#include "sim_err.h"
#include "sim_scenario.h"

#include "sim_autoscale_out.h"

#include <stdint.h>
#include <stdio.h>

/* Fields ordered so the record has no padding (112 bytes): it is kept for
 * every finished request. */
typedef struct {
    uint64_t id;
    int32_t instance;
    int32_t input_tokens, output_tokens;
    int32_t preemptions;
    int32_t cached_tokens;    /* prompt tokens found in the prefix cache (last admission) */
    int32_t prefill_instance; /* pd only (-1 otherwise) */
    sim_time arrival;         /* reached the cluster */
    sim_time first_scheduled; /* first iteration that computed any of it */
    sim_time first_token;     /* first output token emitted */
    sim_time finish;          /* last output token emitted */
    /* pd only (-1 / 0 otherwise) */
    sim_time kv_reserved;     /* decode blocks granted: end of back-pressure */
    sim_time kv_arrived;      /* KV landed on the decode instance */
    sim_time decode_first;    /* first decode-side token */
    double kv_bytes;          /* KV bytes moved for this request */
    /* scheduler.detokenizer_workers: the client sees the first and the last
     * token this long after first_token and finish (0 without them); TTFT,
     * TPOT and E2E are taken at what the client sees. */
    sim_time stream_first, stream_last;
} sim_req_record;

/* When the client sees r's first and last token. */
static inline sim_time sim_req_record_first_seen(const sim_req_record *r) { return r->first_token + r->stream_first; }
static inline sim_time sim_req_record_last_seen(const sim_req_record *r) { return r->finish + r->stream_last; }

typedef struct {
    int32_t instance;
    sim_time t;               /* end of the sampling window */
    double utilization;       /* busy fraction of the window */
    double batch_size;        /* time-weighted mean running requests in the window */
    double kv_occupancy;      /* used / total KV blocks at t */
    int32_t waiting;          /* queued requests at t */
} sim_sample;

typedef struct {
    double mean, p50, p90, p99, p999;
    int64_t n;
} sim_stat;

/* Prefill/decode disaggregation: where the time between the first token
 * and decode went (means over requests that moved KV). */
typedef struct {
    int32_t enabled;
    int64_t moved;                 /* requests whose KV moved */
    double kv_bytes_moved;
    sim_stat transfer_ms;          /* reservation granted -> KV arrived */
    sim_stat backpressure_ms;      /* prefill done -> decode blocks granted */
    double ttft_queue_ms, ttft_prefill_ms;  /* TTFT = queue + prefill */
    double first_decode_ms;        /* KV arrived -> first decode token */
} sim_pd_summary;

/* Attention/FFN disaggregation: per-iteration utilisation of each side
 * (busy time / iteration time) and the activation traffic. */
typedef struct {
    int32_t enabled;
    int32_t micro_batches;
    double attention_util, ffn_util, comm_fraction;
    double activation_bytes;
    double transfer_ms_per_iter;   /* activation transfer time per iteration, both ways */
} sim_af_summary;

/* Agentic / multi-turn sessions (filled by the caller from a
 * sim_session_stats; enabled only for a workload with sessions). Turn bins
 * are turn indices from the first; the last bin also holds every later
 * turn. */
#define SIM_SESSION_TURN_BINS 16
typedef struct {
    int64_t n;                     /* turns finished at this index */
    sim_stat ttft_ms;
    double cache_hit_rate;         /* prompt tokens found cached / prompt tokens, over these turns */
    double cached_tokens_mean;     /* prompt tokens found cached, per turn */
    double input_tokens_mean;      /* prompt tokens, per turn */
} sim_turn_summary;

typedef struct {
    int32_t enabled;
    int64_t completed;             /* sessions that ended */
    int64_t turns, sub_requests;   /* requests finished, by kind */
    int64_t dropped;               /* requests of sessions that never fit an instance (the session went on) */
    double turns_per_session;      /* mean over ended sessions */
    sim_stat latency_ms;           /* session end-to-end: first arrival to its last request's last token */
    int32_t n_turn_bins;           /* bins holding a turn */
    sim_turn_summary by_turn[SIM_SESSION_TURN_BINS];
} sim_session_summary;

/* A pool of CPU workers beside each instance: the API servers' input
 * workers (scheduler.tokenizer_workers: a job is a request, its service
 * api_us + tokenisation) or the detokenise-and-stream workers
 * (scheduler.detokenizer_workers: a job is a request's tokens of one
 * iteration). Jobs and tokens handed over, a job's mean wait for a worker
 * and mean service, the workers' busy share over the run. */
typedef struct {
    int32_t enabled;
    int32_t workers;               /* over every instance that has them */
    int64_t jobs, tokens;          /* tokens: detokenizer workers only */
    double wait_ms, service_ms, utilization;
} sim_workers_summary;

/* Multimodal inputs (workload.images; filled by the caller, enabled only
 * with images): what the requests carried, the vision tower's pass per
 * request with images (its TTFT share), and with an encode pool the wait
 * for an encoder, the embedding transfer and the encoders' busy share. */
typedef struct {
    int32_t enabled;
    int32_t pool;                  /* 1: an encode pool (deployment.encode.instances > 0); 0: in the instance */
    int32_t encoders;              /* the encode pool's GPUs */
    char family[16];               /* the tower's family (model_vision.h) */
    int64_t tokens_per_item;       /* language-model tokens one image (video) becomes */
    int64_t requests, items, tokens; /* requests with images encoded, their items and image tokens */
    double encode_ms;              /* mean encoder pass per request encoded */
    double wait_ms;                /* pool: mean wait for a free encoder */
    double transfer_ms;            /* pool: mean embedding transfer to the prefill instance */
    double embedding_bytes;        /* pool: embedding bytes moved */
    double utilization;            /* pool: busy share of the encoders over the run */
    double ttft_share;             /* (encode + wait + transfer) per request / mean TTFT */
} sim_encode_summary;

/* What the run kept (filled by sim_metrics_summarize). */
typedef struct {
    int32_t capped;                /* 1 when some requests or samples were not kept */
    int64_t requests_kept;         /* records readable with sim_metrics_requests */
    int64_t samples_kept, samples; /* samples readable / taken */
    double sketch_rel_error;       /* > 0 when percentiles come from sketches (requests past the cap) */
} sim_records_summary;

/* sqrt(1.001) − 1: the request-percentile bound past the record cap. */
#define SIM_METRICS_SKETCH_REL_ERROR 0.000499875

typedef struct {
    char role[16];
    int32_t instances, gpus;
    double utilization, kv_occupancy, waiting;
    double mean_batch;             /* time-weighted mean running requests per instance (headroom: vs max_seqs) */
    int32_t max_seqs;              /* the pool's scheduler.max_seqs */
} sim_pool_summary;

/* One SLO class's figures (workload.classes), filled by the caller. */
typedef struct {
    char name[SIM_CLASS_NAME_MAX];
    int32_t priority;
    sim_slo_cfg slo;               /* the bounds its requests were judged by */
    int64_t requests_completed, requests_good;
    int64_t requests_shed;         /* refused by admission control */
    int64_t requests_rejected;     /* never fit an instance's KV cache */
    sim_stat ttft_ms, tpot_ms, e2e_ms, queue_ms;
    double goodput_req_per_s;      /* requests within its SLO / the run's span (sim_time_s) */
    double slo_attainment;         /* requests within its SLO / requests completed (0 when none) */
    double req_per_s;              /* its requests completed / the run's span */
    double input_tokens_per_s;     /* its completed requests' prompt tokens / the run's span */
    double output_tokens_per_s;    /* its output tokens / the run's span */
} sim_class_summary;

typedef struct {
    int64_t requests_completed;
    int64_t requests_good;         /* met every SLO bound (with classes: its class's) */
    int64_t requests_rejected;     /* could never fit an instance's KV cache (set by the caller) */
    int64_t preemptions;
    sim_stat ttft_ms, tpot_ms, itl_ms, e2e_ms, queue_ms;
    double req_per_s, input_tokens_per_s, output_tokens_per_s, output_tokens_per_s_per_gpu;
    double goodput_req_per_s;
    double sim_time_s;             /* first arrival to last completion */
    double end_s;                  /* the simulated clock when the run ended (it starts at 0; filled by the
                                    * caller): the span a fleet's GPU-hours are held over */
    double wall_time_s;            /* filled by the caller */
    uint64_t events;               /* filled by the caller */
    int32_t n_gpus;
    int32_t overloaded;            /* 1 if the run stopped on overload */
    char overload_reason[256];
    double mean_utilization;       /* over instances and time */
    double mean_kv_occupancy;
    double cache_hit_rate;         /* prompt tokens found cached / prompt tokens */
    double load_cv;                /* coefficient of variation of tokens served per instance */
    sim_pd_summary pd;
    sim_af_summary af;             /* filled by the caller */
    int32_t n_pools;               /* filled by the caller (it knows the pools) */
    sim_pool_summary pools[SIM_MAX_POOLS];
    sim_records_summary records;
    sim_session_summary sessions;  /* filled by the caller */
    sim_energy_summary energy;     /* filled by the caller when energy.enabled (sim_energy.h) */
    /* Admission control and classes (filled by the caller; printed only
     * when admission is on or the workload has classes). */
    int32_t shed_reported;         /* 1: print requests_shed */
    int64_t requests_shed;
    /* The clients' connection pool (workload.arrival.max_connections; filled
     * by the caller, printed only when the pool is bounded). */
    int32_t client_pool;           /* the pool's connections, 0 = unlimited */
    int64_t client_waited;         /* requests that waited in the client for a connection */
    double client_wait_mean_ms;    /* their mean wait (in their TTFT and E2E) */
    int32_t n_classes;
    sim_class_summary classes[SIM_MAX_CLASSES];
    sim_workers_summary frontend;  /* filled by the caller when some pool has tokenizer_workers */
    sim_workers_summary detok;     /* filled by the caller when some pool has detokenizer_workers */
    sim_autoscale_summary autoscale; /* filled by the caller when some pool autoscales */
    sim_encode_summary encode;     /* filled by the caller when workload.images is on */
} sim_summary;

typedef struct sim_metrics sim_metrics;

sim_metrics *sim_metrics_create(int32_t n_instances);
void sim_metrics_destroy(sim_metrics *m);

/* Caps the records kept (0 = none; a new object keeps all) and gives the
 * SLO goodput is counted under once requests are streamed (NULL = no
 * bound); summarize must then be called with the same SLO. Only before the
 * first request or sample; SIM_EINVAL otherwise or for a negative cap. */
int sim_metrics_set_limits(sim_metrics *m, int64_t max_requests, int64_t max_samples, const sim_slo_cfg *slo);
/* Groups instances (pools) for sim_metrics_group_means: group_of[i] in
 * [0, n_groups) for each instance; only before the first sample. */
int sim_metrics_set_groups(sim_metrics *m, int32_t n_groups, const int32_t *group_of);

int sim_metrics_add_request(sim_metrics *m, const sim_req_record *r);
/* fn(ctx, r) for every valid record added from now on (NULL stops), before
 * it is kept or streamed: e.g. an autoscaler counting SLO attainment. */
typedef void (*sim_metrics_observer_fn)(void *ctx, const sim_req_record *r);
void sim_metrics_set_observer(sim_metrics *m, sim_metrics_observer_fn fn, void *ctx);
/* 1 when r meets every bound of slo (NULL or 0 bounds: none); a one-token
 * reply has no TPOT, so it cannot miss a TPOT bound. */
int sim_metrics_request_good(const sim_req_record *r, const sim_slo_cfg *slo);
/* One instance iteration of duration dur (ns) in which n_decode requests
 * received a token (n_decode may be 0). */
int sim_metrics_add_iteration(sim_metrics *m, int32_t instance, sim_time dur, int32_t n_decode);
int sim_metrics_add_sample(sim_metrics *m, const sim_sample *s);

/* The kept records and samples (the first ones, up to the caps). */
const sim_req_record *sim_metrics_requests(const sim_metrics *m, int64_t *n);
const sim_sample *sim_metrics_samples(const sim_metrics *m, int64_t *n);
/* Requests and samples added, kept or not. */
int64_t sim_metrics_requests_seen(const sim_metrics *m);
int64_t sim_metrics_samples_seen(const sim_metrics *m);
/* Means over every sample of group g (batch: running requests per
 * instance): returns 1, or 0 (outputs left) when the group has no sample;
 * SIM_EINVAL without groups or for a bad g. */
int sim_metrics_group_means(const sim_metrics *m, int32_t g, double *util, double *kv, double *waiting,
                            double *batch);
/* Tokens (prompt + output) of every request, kept or not, per instance it
 * was routed to (its prefill instance in pd): load[0..n_instances). */
int sim_metrics_routed_load(const sim_metrics *m, double *load);

/* Fills *out (wall_time_s and events are left 0 for the caller). */
int sim_metrics_summarize(const sim_metrics *m, const sim_slo_cfg *slo, int32_t n_gpus,
                          sim_summary *out, sim_err *err);

/* TPOT of one record in ms, (finish - first_token) / (output_tokens - 1),
 * into *out; returns 1, or 0 (and leaves *out) when output_tokens < 2. */
int sim_metrics_request_tpot_ms(const sim_req_record *r, double *out);

/* Token-weighted ITL quantile q in [0, 1], in ms, read from the ITL
 * histogram: within 0.1 % of the exact value between 1 us and 1000 s
 * (0 when no iteration had a decode request). */
int sim_metrics_itl_quantile_ms(const sim_metrics *m, double q, double *out);

/* Calls fn(name, value, ctx) for every numeric field of the summary, in the
 * JSON key order, nested fields with dotted names ("ttft_ms.p99",
 * "throughput.req_per_s"); non-finite values are passed as they are. Stops at
 * and returns the first non-zero value fn returns; 0 otherwise. */
typedef int (*sim_summary_metric_fn)(const char *name, double value, void *ctx);
int sim_summary_each_metric(const sim_summary *s, sim_summary_metric_fn fn, void *ctx);

/* One JSON object (see README "JSON output"); keys in a fixed order. */
void sim_summary_print_json(FILE *f, const sim_summary *s);
/* Batch headroom of a pool in percent: 100 × (1 − mean_batch / max_seqs),
 * 0 when max_seqs is unknown. */
double sim_summary_batch_headroom(const sim_pool_summary *p);
/* The pool with the least batch headroom (the first when none has max_seqs). */
int32_t sim_summary_fullest_pool(const sim_summary *s);

/* Human-readable table. */
void sim_summary_print_table(FILE *f, const sim_summary *s, const sim_scenario *sc);

#endif
