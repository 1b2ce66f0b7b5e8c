/* sim_scenario — the parsed, validated scenario: plain data, no behaviour.
 *
 * A scenario YAML file (see README "Scenario reference") is read by
 * sim_loader into this struct; every field has a default, so an empty
 * mapping plus `model` is a valid scenario. Units are in the field names
 * (_s seconds, _ms milliseconds, _gb gigabytes, _us microseconds). Strings
 * are fixed-size buffers so the struct can be copied by value (sweeps and
 * search copy it per candidate). Paths are stored as given, already resolved
 * relative to the scenario file's folder by the loader. */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#define SIM_NAME_MAX 128
#define SIM_PATH_MAX 1024
#define SIM_MAX_POOLS 8
/* Op families whose price hardware.op_speedup scales (MODEL_FAM_COUNT). */
#define SIM_OP_FAMILIES 9

typedef enum {
    SIM_ARRIVAL_POISSON = 0,
    SIM_ARRIVAL_GAMMA = 1,    /* burstiness via cv */
    SIM_ARRIVAL_CONSTANT = 2,
    SIM_ARRIVAL_CLOSED = 3,   /* closed loop: `concurrency` clients */
    SIM_ARRIVAL_SCHEDULE = 4  /* Poisson with a piecewise-constant rate over time */
} sim_arrival_kind;

typedef struct {
    sim_arrival_kind process;
    double rate;          /* requests/s (open loop) */
    double cv;            /* gamma: coefficient of variation of inter-arrivals */
    int32_t concurrency;  /* closed loop: number of clients */
    double think_time_s;  /* closed loop: pause between a reply and the next request */
    int32_t max_connections; /* the client's connection pool: a request sent while this many are
                              * in flight waits in the client, its wait in TTFT (0 = unlimited) */
    char schedule[1024];  /* schedule: "t0:r0, t1:r1, ..." seconds:requests/s, each rate holds until the next */
} sim_arrival_cfg;

typedef enum {
    SIM_DIST_FIXED = 0,
    SIM_DIST_UNIFORM = 1,   /* integers in [min, max] */
    SIM_DIST_NORMAL = 2,    /* mean, std; clamped to [min, max] */
    SIM_DIST_LOGNORMAL = 3, /* mean, std of the lengths themselves (not of the log) */
    SIM_DIST_ZIPF = 4,      /* P(k) ∝ k^-s over k = min..max */
    SIM_DIST_EMPIRICAL = 5  /* samples from `path`: one integer per line, or value,weight */
} sim_dist_kind;

typedef struct {
    sim_dist_kind dist;
    double value;   /* fixed */
    double mean, std;
    double s;       /* zipf exponent */
    int64_t min, max; /* bounds for every kind (clamp); min >= 1 */
    char path[SIM_PATH_MAX]; /* empirical */
} sim_len_dist;

typedef enum {
    SIM_TRACE_NONE = 0,
    SIM_TRACE_MOONCAKE = 1, /* JSONL: timestamp (ms), input_length, output_length, hash_ids */
    SIM_TRACE_CSV = 2       /* timestamp,input_tokens,output_tokens (timestamp in s) */
} sim_trace_format;

typedef struct {
    sim_trace_format format;
    char path[SIM_PATH_MAX];
    double time_scale;  /* multiply trace timestamps (2 = half the rate) */
    double rate_scale;  /* multiply the arrival rate (divides timestamps); combines with time_scale */
} sim_trace_cfg;

/* workload.prefix.kind, parsed once by the loader (0 = none, as in a
 * zeroed config). */
typedef enum {
    SIM_PREFIX_NONE = 0,
    SIM_PREFIX_SYSTEM_PROMPT = 1,
    SIM_PREFIX_MULTI_TURN = 2,
    SIM_PREFIX_RAG = 3
} sim_prefix_kind;
#define SIM_PREFIX_KINDS 4

typedef struct {
    sim_prefix_kind kind;
    int32_t block_tokens;      /* tokens per generated hash block (Mooncake: 512) */
    int32_t prompts;           /* system_prompt: distinct shared prompts */
    int32_t prompt_tokens;     /* system_prompt: length of each shared prompt */
    double zipf_s;             /* popularity skew of prompts / documents */
    int32_t sessions;          /* multi_turn: concurrent sessions */
    int32_t turns;             /* multi_turn: turns per session */
    int32_t docs;              /* rag: distinct documents */
    int32_t doc_tokens;        /* rag: tokens per document */
    int32_t docs_per_request;  /* rag: documents in each prompt */
} sim_prefix_cfg;

/* workload.sessions: synthetic agentic / multi-turn sessions (see
 * sim_session.h). On when count > 0; arrival.* then times session starts. */
typedef struct {
    int64_t count;                   /* sessions to start (0 = off) */
    sim_len_dist turns;              /* turns per session */
    sim_len_dist user_tokens;        /* new user tokens of each turn after the first */
    sim_len_dist think_ms;           /* gap (ms) between a turn's end (its sub-requests joined) and the next turn */
    int32_t fan_out;                 /* sub-requests each turn but the last fans out */
    sim_len_dist child_input_tokens; /* a sub-request's own tokens after its parent's context */
    sim_len_dist child_output_tokens;
} sim_session_cfg;

/* workload.images: image or video inputs of a model with a vision tower
 * (models/catalog/model_vision.h). On when per_request is given; every
 * request then carries per_request items of width × height pixels (videos
 * of `frames` frames when frames > 0), whose tokens the cluster adds to
 * its prompt and whose encoder pass it prices (deployment.encode). */
typedef struct {
    int32_t enabled;                 /* set by the loader when per_request is given */
    sim_len_dist per_request;        /* images (videos) per request: fixed or a distribution */
    int32_t width, height;           /* pixels of each item as the processor receives it */
    int32_t frames;                  /* 0 = images; > 0 = each item a video of this many frames */
} sim_media_cfg;

typedef struct {
    double ttft_ms, tpot_ms;   /* 0 = no bound on that metric */
    double e2e_ms;             /* end to end (arrival to last token); 0 = no bound */
} sim_slo_cfg;

/* A token bucket (admission control): it holds `burst` tokens at t = 0,
 * refills at `rate` tokens/s up to `burst`, and each admitted request
 * takes one; a request finding less than one token is shed. */
typedef struct {
    double rate;               /* tokens (requests) per second; 0 = no bucket */
    double burst;              /* bucket size in requests (>= 1 when rate > 0) */
} sim_bucket_cfg;

#define SIM_MAX_CLASSES 8
#define SIM_CLASS_NAME_MAX 32

/* One SLO class of a mixed workload (workload.classes.*): its own arrival
 * process, lengths, request budget, SLO and priority. The loader starts each
 * item from the workload's own keys, so a class names only what differs. */
typedef struct {
    char name[SIM_CLASS_NAME_MAX];
    int32_t priority;          /* 0 is served first; larger numbers after smaller */
    int64_t requests;          /* requests this class sends (0 = bounded by duration_s only) */
    double duration_s;
    sim_arrival_cfg arrival;   /* open loop only */
    sim_len_dist input_tokens;
    sim_len_dist output_tokens;
    sim_slo_cfg slo;           /* 0 = the scenario's slo.* bound */
    sim_bucket_cfg admission;  /* the class's own token bucket */
    sim_prefix_cfg prefix;     /* its own prefix structure (its own prompts, documents, sessions) */
    sim_session_cfg sessions;  /* its own agentic sessions (count 0 = none) */
} sim_class_cfg;

/* workload.admission: what the cluster sheds at arrival. */
typedef struct {
    sim_bucket_cfg bucket;     /* one bucket for every request (rate 0 = none) */
    double slo_factor;         /* > 0: shed a request whose predicted TTFT exceeds slo_factor × its TTFT bound */
} sim_admission_cfg;

typedef struct {
    int64_t requests;      /* number of requests to send (0 = whole trace) */
    double duration_s;     /* stop sending after this simulated time (0 = no limit) */
    sim_arrival_cfg arrival;
    sim_len_dist input_tokens;
    sim_len_dist output_tokens;
    sim_trace_cfg trace;
    sim_prefix_cfg prefix;
    sim_session_cfg sessions;
    sim_media_cfg images;
    int32_t n_classes;     /* 0 = one class: the keys above */
    sim_class_cfg classes[SIM_MAX_CLASSES];
    sim_admission_cfg admission;
} sim_workload_cfg;

typedef enum {
    SIM_ROLE_COLOCATED = 0,
    SIM_ROLE_PREFILL = 1,
    SIM_ROLE_DECODE = 2,
    SIM_ROLE_ATTENTION = 3,
    SIM_ROLE_FFN = 4
} sim_role;

/* The parallel block's names (deployment.pools.*.parallel), parsed once by
 * the loader; sim_pool_layout turns them into the cost model's enums. */
typedef enum {
    SIM_SP_ULYSSES = 0,        /* all-to-all of heads */
    SIM_SP_RING = 1            /* ring attention: KV passed around the ranks */
} sim_sp_kind;
#define SIM_SP_KINDS 2

typedef enum {
    SIM_EP_AUTO = 0,           /* the engines' choice: low_latency for decode, normal for prefill */
    SIM_EP_NORMAL = 1,         /* DeepEP normal */
    SIM_EP_LOW_LATENCY = 2,    /* DeepEP low-latency */
    SIM_EP_ALLTOALL = 3,       /* NCCL all-to-all (engines without DeepEP) */
    SIM_EP_ALLGATHER = 4       /* NCCL all-gather + reduce-scatter */
} sim_ep_mode;
#define SIM_EP_MODES 5

/* `dtype` and `kv_dtype`: the number format of the weights and activations
 * and of the KV cache. auto (weights only) is the checkpoint's own format,
 * part by part; kv_dtype takes bf16 .. nvfp4 (SIM_KV_DTYPES names from
 * SIM_DTYPE_BF16). sim_pool_layout maps them onto the cost model's
 * model_dtype. */
typedef enum {
    SIM_DTYPE_AUTO = 0,
    SIM_DTYPE_BF16 = 1,
    SIM_DTYPE_FP8 = 2,       /* per-tensor scale */
    SIM_DTYPE_FP8_BLOCK = 3, /* 128-block scales */
    SIM_DTYPE_MXFP8 = 4,
    SIM_DTYPE_NVFP4 = 5,
    SIM_DTYPE_MXFP4 = 6,     /* weights only */
    SIM_DTYPE_INT4 = 7       /* group-32 weight-only */
} sim_dtype;
#define SIM_DTYPES 8
#define SIM_KV_DTYPES 5

typedef enum {
    SIM_MOE_GEMM_AUTO = 0,
    SIM_MOE_GEMM_CONTIGUOUS = 1,
    SIM_MOE_GEMM_MASKED = 2
} sim_moe_gemm;
#define SIM_MOE_GEMMS 3

typedef struct {
    int32_t tp, pp;
    int32_t dp;                /* attention data parallel (MoE): attention replicated, experts sharded */
    int32_t ep;                /* expert parallel degree; divides tp·dp */
    int32_t dcp;               /* decode context parallel: KV split by sequence over dcp of the tp ranks */
    int32_t sp;                /* sequence parallel degree for prefill (extra ranks) */
    sim_sp_kind sp_kind;
    int32_t tp_sp;             /* TP's sequence-parallel variant: reduce-scatter + all-gather */
    int32_t comm_fp8;          /* FP8-compressed collectives */
    int32_t comm_overlap;      /* overlap collectives with the next GEMM */
    int32_t ar_norm_fusion;    /* TP all-reduces carry the residual add and the next RMSNorm */
    int32_t micro_batches;     /* PP: batches in flight in the instance (0 = pp) */
    sim_ep_mode ep_mode;       /* the MoE all-to-all */
    sim_moe_gemm moe_gemm;     /* grouped-GEMM layout */
    double expert_skew;        /* Zipf exponent of tokens over experts (0 = uniform) */
    int32_t moe_tp;            /* expert TP: each expert split over moe_tp ranks (0 = tp·dp/ep);
                                * moe_tp·ep divides tp·dp, fewer = replicated expert groups */
} sim_parallel_cfg;

/* Speculative decoding (scheduler.speculative): each decode step verifies
 * the draft's k tokens beside the last sampled one in one target forward
 * pass of 1 + k tokens per request and keeps the accepted prefix of the
 * drafts plus one token of its own (sim_spec.h). */
#define SIM_SPEC_MAX_DRAFT 8
typedef enum { SIM_SPEC_MTP = 0, SIM_SPEC_DRAFT = 1 } sim_spec_method;
typedef struct {
    int32_t n;                 /* values given (1 = one for every position) */
    double v[SIM_SPEC_MAX_DRAFT];
} sim_f64_list;
typedef struct {
    int32_t draft_tokens;      /* k draft tokens per step (0 = off) */
    sim_spec_method method;    /* mtp: the model's own MTP layer(s); draft: a separate draft model */
    int32_t mtp_layers;        /* mtp: layers of one MTP module (DeepSeek-V3/R1: 1) */
    char draft_model[128];     /* draft: catalogue name or config path of the draft model */
    sim_f64_list acceptance;   /* P(draft token i accepted | tokens before it accepted), per position */
    double acceptance_concentration; /* > 0: each request draws its acceptance scale from a Beta of this
                                      * concentration around the mean (0 = the same for every request) */
} sim_spec_cfg;

/* The scheduler's names (deployment.pools.*.scheduler), parsed once by the
 * loader; 0 is each key's default, as in a zeroed config. */
typedef enum {
    SIM_POLICY_DECODE_FIRST = 0,   /* every iteration decodes, prefill fills the rest (vLLM) */
    SIM_POLICY_PREFILL_FIRST = 1   /* prefill-only iterations while prompts wait (SGLang) */
} sim_sched_policy;
#define SIM_SCHED_POLICIES 2

typedef enum {
    SIM_ADMISSION_OPTIMISTIC = 0,  /* preempt when KV runs out (vLLM) */
    SIM_ADMISSION_RESERVE = 1,     /* admit only what the whole sequence fits (TensorRT-LLM) */
    SIM_ADMISSION_RATIO = 2        /* SGLang: a decaying share of the running requests' output; retract */
} sim_admission;
#define SIM_ADMISSIONS 3

typedef enum {
    SIM_MEM_OF_TOTAL = 0,          /* gpu_mem_util of all GPU memory (sim_mem_rule.h) */
    SIM_MEM_OF_FREE = 1,           /* of what the weights and reserve leave */
    SIM_MEM_OF_SGLANG = 2          /* SGLang's reservation formula */
} sim_mem_fraction_of;
#define SIM_MEM_FRACTIONS_OF 3

typedef enum {
    SIM_SCHED_PRESET_NONE = 0,     /* sim_sched_preset.h */
    SIM_SCHED_PRESET_VLLM = 1,
    SIM_SCHED_PRESET_SGLANG = 2,
    SIM_SCHED_PRESET_TRTLLM = 3
} sim_sched_preset;
#define SIM_SCHED_PRESETS 4

/* The parts of an iteration whose kernels a pool may take from another
 * engine than its preset's (scheduler.kernels.*; a serving recipe that runs
 * another engine's kernels, e.g. SGLang with --attention-backend trtllm_mla
 * and --moe-runner-backend flashinfer_trtllm). */
typedef enum {
    SIM_KERNEL_GEMM = 0,           /* dense GEMMs */
    SIM_KERNEL_ATTENTION = 1,      /* softmax attention, MLA (and its module), DSA; not linear attention */
    SIM_KERNEL_MOE = 2,            /* the fused-MoE kernel */
    SIM_KERNEL_COMM = 3            /* the engine's own all-reduce (NCCL stays NCCL) */
} sim_kernel_part;
#define SIM_KERNEL_PARTS 4

typedef enum {
    SIM_GRAPH_NONE = 0,            /* no CUDA graphs: decode batches run unpadded (sim_graph_sizes.h) */
    SIM_GRAPH_VLLM = 1,            /* the capture sizes each engine generates */
    SIM_GRAPH_SGLANG = 2,
    SIM_GRAPH_TRTLLM = 3
} sim_graph_rule;
#define SIM_GRAPH_RULES 4

typedef struct {
    int32_t max_seqs;
    int32_t max_batched_tokens;
    int32_t chunk_tokens;      /* max prefill tokens of one request per iteration */
    int32_t whole_prompts;     /* a waiting prompt joins an iteration only whole (no chunked prefill) */
    int32_t block_tokens;      /* paged KV block size */
    double gpu_mem_util;       /* fraction of HBM the engine may use */
    double reserve_gb;         /* activation/workspace reserve per GPU */
    double overhead_us;        /* per-iteration framework overhead (scheduling, launch, sampling) */
    double overhead_per_seq_us; /* extra overhead per request scheduled in the iteration */
    double frontend_us;        /* per-request frontend delay before the engine sees it (API server) */
    double eager_launch_us;    /* host time per kernel launch in prefill iterations (no CUDA graph) */
    double eager_serial;       /* fraction of the shorter of an eager iteration's host launch time and GPU
                                * time that does not overlap the longer (0: the host runs ahead, the
                                * iteration lasts the longer one; 1: they serialise, it lasts their sum) */
    double pd_handover_us;     /* pd decode pool: per-request hand-over after the KV transfer, µs */
    double pd_handover_gbs;    /* pd decode pool: the engine's KV path per request, GB/s (0 = the network's) */
    int32_t preempt_keeps_kv;  /* a preempted request's freed KV stays cached until overwritten (vLLM V1's
                                * and SGLang's prefix caches): re-admitted, it recomputes only the rest */
    int32_t async_scheduling;  /* the host prepares the next iteration while the GPU runs this one
                                * (vLLM >= 0.14's default): the per-request host work is hidden
                                * behind the device time, the per-iteration part is not */
    int32_t recv_interval;     /* decode-only steps between polls for new requests (SGLang's
                                * --scheduler-recv-interval; <= 1 = every step) */
    int32_t adp_timeout_iters; /* attention-DP balancing: most steps context requests wait for every
                                * rank to have one (TensorRT-LLM's timeout_iters; 0 = off) */
    int32_t adp_wait_iters;    /* attention-DP balancing: further steps to batch them while every rank
                                * decodes (batching_wait_iters) */
    int32_t batch_wait_iters;  /* batch waiting without attention DP: most steps new requests wait while
                                * others decode (TensorRT-LLM's batch_wait_timeout_iters; 0 = no limit
                                * from it) */
    double batch_wait_ratio;   /* batch waiting: they start once the step would schedule this fraction of
                                * max_batched_tokens (batch_wait_max_tokens_ratio; 0 = no threshold);
                                * both 0 = off */
    sim_sched_policy policy;
    sim_sched_preset preset;   /* the engine whose defaults were applied (also its kernels' prices) */
    sim_sched_preset kernels[SIM_KERNEL_PARTS]; /* per sim_kernel_part, the engine whose measured kernels
                                                 * price it; NONE = the preset's */
    sim_admission admission;
    /* admission ratio (SGLang's new_token_ratio, sim_instance_ratio.c): a
     * running request is counted for ratio x min(its remaining output,
     * ratio_clip) tokens of KV; the ratio starts at ratio_init, falls by
     * ratio_decay each decode step to ratio_min, and after a retraction is
     * re-estimated from the survivors with retract_steps tokens each. */
    double ratio_init, ratio_min, ratio_decay;
    int32_t ratio_clip, retract_steps;
    sim_mem_fraction_of mem_fraction_of; /* what gpu_mem_util is a fraction of */
    sim_spec_cfg spec;         /* speculative decoding (off: draft_tokens 0) */
    /* CUDA graphs of decode-only iterations (sim_graph_sizes.h): the rule
     * whose captured batch sizes a decode batch is padded up to, and the
     * largest captured size (0 = the rule's default; above it, no graph). */
    sim_graph_rule cuda_graph_sizes;
    int32_t cuda_graph_max_bs;
    /* The API server's CPU workers (0 = none: frontend_us alone): each
     * request waits for a free worker (FIFO), which spends api_us plus
     * tokenize_us_per_token per prompt token on it before the engine sees it. */
    int32_t tokenizer_workers;
    double api_us, tokenize_us_per_token;
    /* The output side (0 workers = none): each iteration's sampled tokens
     * are detokenised and streamed by detokenizer_workers CPU workers, one
     * job per request (detokenize_us_per_token + stream_us_per_token per
     * token); the client sees a token when its job ends (sim_detok.h). */
    int32_t detokenizer_workers;
    double detokenize_us_per_token, stream_us_per_token;
} sim_sched_cfg;

/* What an autoscaler watches (deployment.pools.*.autoscale.metric). */
typedef enum {
    SIM_AS_QUEUE = 0,          /* requests waiting per serving instance */
    SIM_AS_CONCURRENCY = 1,    /* requests in a serving instance / its max_seqs */
    SIM_AS_UTILIZATION = 2,    /* busy share of the serving instances' time */
    SIM_AS_KV = 3,             /* KV blocks used / KV blocks of the serving instances */
    SIM_AS_SLO = 4             /* share of the requests finished that met the SLO */
} sim_autoscale_metric;
#define SIM_AS_METRICS 5

/* deployment.pools.*.autoscale: add or remove instances of the pool from a
 * lagged, windowed metric (sim/cluster/sim_autoscale.h). The pool's
 * `instances` is the count it starts with. */
typedef struct {
    int32_t enabled;
    int32_t min, max;          /* instances held (starting, serving or draining) */
    sim_autoscale_metric metric;
    double up_threshold;       /* -1 = the metric's default */
    double down_threshold;     /* -1 = the metric's default */
    int32_t step;              /* instances added per scale-up decision */
    double interval_s;         /* between metric samples and decisions */
    double window_s;           /* samples averaged per decision */
    double lag_s;              /* age of the newest sample a decision sees */
    double cooldown_s;         /* after a decision, none before this long */
    double storage_gbs;        /* per GPU, weights from storage to HBM (GB/s) */
    double startup_s;          /* engine start-up besides loading the weights */
} sim_autoscale_cfg;

typedef struct {
    sim_role role;
    int32_t instances;
    sim_parallel_cfg parallel;
    sim_sched_cfg scheduler;
    char gpu[SIM_NAME_MAX];    /* empty = hardware.gpu */
    sim_autoscale_cfg autoscale;
} sim_pool_cfg;

typedef enum {
    SIM_MODE_COLOCATED = 0,
    SIM_MODE_PD = 1,
    SIM_MODE_AF = 2,
    SIM_MODE_PD_AF = 3
} sim_deploy_mode;

/* PD hand-over (deployment.*). */
typedef enum {
    SIM_KV_WHOLE = 0,          /* the KV moves after the prefill */
    SIM_KV_LAYERWISE = 1       /* layer by layer, overlapped with the prefill's compute */
} sim_kv_transfer;
#define SIM_KV_TRANSFERS 2

typedef enum {
    SIM_DECODE_ROUND_ROBIN = 0,
    SIM_DECODE_LEAST_LOADED = 1
} sim_decode_routing;
#define SIM_DECODE_ROUTINGS 2

typedef enum {
    SIM_DECODE_PICK_PREFILL_END = 0, /* the decode instance is chosen when the prefill ends */
    SIM_DECODE_PICK_ARRIVAL = 1      /* at arrival, with the prefill instance */
} sim_decode_pick;
#define SIM_DECODE_PICKS 2

typedef struct {
    sim_deploy_mode mode;
    int32_t n_pools;
    sim_pool_cfg pools[SIM_MAX_POOLS];
    sim_kv_transfer kv_transfer;       /* pd */
    sim_decode_routing decode_routing; /* pd: how the decode instance is picked */
    sim_decode_pick decode_pick;       /* pd: when the decode instance is picked */
    int32_t af_micro_batches;  /* af: micro-batches in ping-pong between attention and FFN */
    /* workload.images' encoder: 0 instances = in each instance before the
     * request's prefill (colocated); > 0 = a pool of that many one-GPU
     * encoders of encode_gpu ("" = hardware.gpu) whose embeddings travel
     * the network to the prefill instance (encode -> prefill -> decode). */
    int32_t encode_instances;
    char encode_gpu[SIM_NAME_MAX];
} sim_deploy_cfg;

typedef enum {
    SIM_ROUTE_ROUND_ROBIN = 0,
    SIM_ROUTE_RANDOM = 1,
    SIM_ROUTE_LEAST_LOADED = 2,
    SIM_ROUTE_POWER_OF_TWO = 3,
    SIM_ROUTE_CACHE_AWARE = 4
} sim_route_policy;

typedef enum {
    SIM_PRESET_NONE = 0,       /* score = saved_ms − λ·queue_ms */
    SIM_PRESET_SGLANG = 1,     /* SGLang cache_aware */
    SIM_PRESET_DYNAMO = 2,     /* Dynamo KV router */
    SIM_PRESET_LLMD = 3        /* llm-d weighted scorers */
} sim_route_preset;

typedef enum {
    SIM_VIEW_EXACT = 0,        /* the router reads the instances' caches */
    SIM_VIEW_APPROXIMATE = 1   /* the router's own index of what it routed */
} sim_route_view;
#define SIM_ROUTE_VIEWS 2

typedef struct {
    sim_route_policy policy;
    sim_route_preset preset;   /* cache_aware only */
    double lambda;             /* weight of the load score (ms per ms) */
    /* SGLang cache_aware */
    double cache_threshold;
    double balance_abs_threshold;
    double balance_rel_threshold;
    /* Dynamo KV router */
    double overlap_score_weight;
    double temperature;        /* 0 = argmin, > 0 = softmax sampling */
    /* llm-d weighted scorers */
    double w_prefix, w_load, w_kv;
    /* the router's view of the caches */
    double snapshot_interval_s; /* 0 = live view */
    sim_route_view view;
    double min_dwell_s;        /* session stickiness: keep a session on its instance this long */
} sim_routing_cfg;

typedef enum {
    SIM_CACHE_LRU = 0,         /* least recently used first */
    SIM_CACHE_LFU = 1          /* fewest hits first, then least recently used */
} sim_cache_policy;
#define SIM_CACHE_POLICIES 2

typedef enum {
    SIM_SHARING_NONE = 0,      /* each instance its own cache */
    SIM_SHARING_PULL = 1,      /* fetch a prefix from the peer that holds it */
    SIM_SHARING_POOL = 2       /* host-DRAM tier per node and a remote pool below HBM */
} sim_cache_sharing;
#define SIM_CACHE_SHARINGS 3

typedef struct {
    int32_t enabled;           /* prefix caching on */
    int32_t block_tokens;      /* prefix-cache block, a multiple of the KV block */
    sim_cache_policy policy;   /* eviction of unreferenced blocks */
    sim_cache_sharing sharing;
    double host_gb;            /* pool: host-DRAM tier per node, GB (0 = none) */
    double host_gbps;          /* pool: host DRAM <-> GPU bandwidth, GB/s */
    double pool_gb;            /* pool: remote pool capacity, GB (0 = none) */
    double pool_gbps;          /* pool: remote pool bandwidth per instance, GB/s */
} sim_cache_cfg;


typedef struct {
    double nic_gbps;           /* per-GPU NIC, Gb/s one way (0 = from the GPU catalogue) */
    double nvlink_gbs;         /* per-GPU NVLink, GB/s one way (0 = catalogue) */
    double latency_us;         /* per-transfer latency across nodes */
} sim_network_cfg;

typedef struct {
    char key[256];             /* scenario key path to vary, e.g. routing.lambda */
    char values[1024];         /* comma-separated values, each applied as --set key=value */
} sim_sweep_cfg;

typedef struct {
    char db[SIM_PATH_MAX];     /* results DB; empty = do not store */
    int32_t store_requests;    /* 1 = one row per request in the DB */
    double sample_interval_s;  /* per-instance time-series sampling period */
    int64_t request_records;   /* requests kept as records (exact percentiles); past it a sketch */
    int64_t sample_records;    /* per-instance samples kept for the DB's time series */
} sim_output_cfg;

typedef struct {
    int32_t enabled;
    double max_queue_delay_s;  /* oldest waiting request older than this ⇒ overload */
    int64_t max_waiting;       /* waiting requests across the cluster above this ⇒ overload */
} sim_overload_cfg;

typedef struct {
    char gpu[SIM_NAME_MAX];
    int32_t gpus_per_node;
    char perf_db[SIM_PATH_MAX]; /* calibrated perf-db or .sql dump ("" = calib/data/ default) */
    /* GPU whose measured per-op tables' fitted op-model sets price every GPU of the run ("" =
     * each GPU its own, else its architecture's; model_cost_op_params_apply). */
    char op_params_gpu[SIM_NAME_MAX];
    /* Speedup of each op family, in model_op_family order (models/cost/model_op_family.h:
     * gemm, moe, attention, all_reduce, all_gather, reduce_scatter, all_to_all, send_recv,
     * other): that family's op times are divided by it (1 = as priced). */
    double op_speedup[SIM_OP_FAMILIES];
} sim_hardware_cfg;

typedef enum {
    SIM_OBJECTIVE_AUTO = 0,    /* cost when every GPU searched has a price, else goodput_per_gpu */
    SIM_OBJECTIVE_GOODPUT_PER_GPU = 1,
    SIM_OBJECTIVE_COST = 2,    /* per USD/GPU-hour; needs search.prices */
    SIM_OBJECTIVE_ENERGY = 3   /* fewest joules per output token at the SLO-meeting rate (turns energy on) */
} sim_search_objective;
#define SIM_SEARCH_OBJECTIVES 4

/* `search:` — the deployment search space of `servesim search` (sim_search.h).
 * List-valued settings are comma-separated strings; empty = the default
 * space derived from the model, GPU and budget. */
typedef struct {
    char gpus[256];            /* GPU catalogue names ("" = hardware.gpu) */
    char prices[256];          /* gpu=USD per GPU-hour pairs, e.g. "h100-sxm=2.5,h200-sxm=3.4" */
    /* Per-role GPU types (heterogeneous fleets): each pool of that role may
     * run on any GPU listed; "" = the candidate's GPU from search.gpus. */
    char prefill_gpus[256];
    char decode_gpus[256];
    char attention_gpus[256];
    char ffn_gpus[256];
    int32_t max_gpus;          /* GPU budget of one deployment */
    char modes[64];            /* colocated, pd, af, pd+af ("" = colocated,pd (+af for MoE)) */
    char layouts[512];         /* layouts for every role, e.g. "tp4,tp8,tp4pp2,tp1dp8ep8" */
    char prefill_layouts[512]; /* per-role overrides of `layouts` */
    char decode_layouts[512];
    char attention_layouts[512];
    char ffn_layouts[512];
    char pd_ratios[256];       /* x:y prefill:decode ratios ("" = every ratio that fills the budget) */
    char af_ratios[256];       /* a:f attention:ffn ratios ("" = every ratio that fills the budget) */
    char max_seqs[128];        /* scheduler knobs to try */
    char max_batched_tokens[128];
    char chunk_tokens[128];
    char lambdas[128];         /* routing.lambda values (cache_aware routing only) */
    char draft_tokens[64];     /* speculative draft tokens k to try in the pools that decode, e.g. "0,1,2,3"
                                * ("" = the scenario's scheduler.speculative as it is) */
    char encode_instances[64]; /* encode pool sizes to try (one-GPU encoders of deployment.encode, 0 = the
                                * instances encode), e.g. "0,1,2,4" ("" = deployment.encode.instances) */
    char autoscale[32];        /* "off", "on" or "off,on": fixed and/or autoscaled fleets ("" = both when a
                                * scenario pool autoscales, else fixed fleets only) */
    double rate;               /* > 0: evaluate at this rate (req/s) instead of finding the max */
    double percentile;         /* SLO percentile: 50, 90, 99 or 99.9 */
    int64_t requests;          /* requests per simulation during the search */
    double tolerance;          /* relative width at which the rate bisection stops */
    int32_t top_k;             /* runners-up shown (and kept exact by pruning) */
    int32_t threads;           /* worker threads (0 = one per core) */
    int32_t prune;             /* analytic-bound pruning on */
    sim_search_objective objective;
    int32_t max_candidates;    /* refuse spaces larger than this */
    int32_t replications;      /* >= 2: re-run the top_k deployments with this many seeds (0 = off) */
} sim_search_cfg;

/* `energy:` — the power model (sim/metrics/sim_energy.h): off by default. */
typedef struct {
    int32_t enabled;           /* report the run's energy (--json "energy", the table, the results DB) */
    double host_w_per_node;    /* host power per node in W (0 = the catalogue's power.host_w_per_gpu × GPUs per node) */
} sim_energy_cfg;

typedef struct sim_scenario {
    char name[SIM_NAME_MAX];
    uint64_t seed;
    char model[SIM_PATH_MAX];  /* catalogue name or path to a HF config.json */
    sim_dtype dtype;           /* weights/activations: auto (the checkpoint's, default), bf16, fp8, ... */
    sim_dtype kv_dtype;        /* KV cache: bf16 (default) .. nvfp4; never auto */
    sim_hardware_cfg hardware;
    sim_workload_cfg workload;
    sim_deploy_cfg deployment;
    sim_routing_cfg routing;
    sim_cache_cfg cache;
    sim_network_cfg network;
    sim_sweep_cfg sweep;
    sim_slo_cfg slo;
    sim_output_cfg output;
    sim_overload_cfg overload;
    char source_path[SIM_PATH_MAX]; /* scenario file it came from ("" if built in code) */
    sim_search_cfg search;     /* servesim search only */
    sim_energy_cfg energy;
} sim_scenario;

/* Fills every field with its documented default (one colocated pool). */
void sim_scenario_defaults(sim_scenario *sc);

/* hardware.gpus_per_node's default, and what a value below 1 (a scenario
 * built in code, as the schema refuses it in a file) stands for. */
#define SIM_DEFAULT_GPUS_PER_NODE 8

/* The "0 = default" rules of the hardware and network blocks, written once:
 * GPUs per NVLink node (below 1: SIM_DEFAULT_GPUS_PER_NODE), and the
 * per-GPU NIC bandwidth in bytes/s (network.nic_gbps when above 0, else the
 * GPU catalogue's gpu_nic_Bps). Pure. */
int32_t sim_hardware_gpus_per_node(const sim_hardware_cfg *hw);
double sim_network_nic_Bps(const sim_network_cfg *net, double gpu_nic_Bps);

/* The GPU type a deployment runs on, for tables and the results DB: the
 * first pool's own type (else hardware.gpu) when every pool runs on one
 * type, else the distinct types in pool order joined by '+' (a
 * heterogeneous fleet, written to buf). Pure; never NULL. */
const char *sim_scenario_gpu_label(const sim_scenario *sc, char *buf, size_t len);

/* One name table per enum, indexed by its value: the schema parses with
 * them and the *_name functions print with them ("?" out of range).
 * SIM_NAMED_ENUMS lists the enums with both, X(stem, type, count):
 * sim_<stem>_names[count] and const char *sim_<stem>_name(type). */
#define SIM_NAMED_ENUMS(X)                                        \
    X(prefix_kind, sim_prefix_kind, SIM_PREFIX_KINDS)             \
    X(sched_policy, sim_sched_policy, SIM_SCHED_POLICIES)         \
    X(admission, sim_admission, SIM_ADMISSIONS)                   \
    X(mem_fraction_of, sim_mem_fraction_of, SIM_MEM_FRACTIONS_OF) \
    X(sched_preset, sim_sched_preset, SIM_SCHED_PRESETS)          \
    X(sp_kind, sim_sp_kind, SIM_SP_KINDS)                         \
    X(ep_mode, sim_ep_mode, SIM_EP_MODES)                         \
    X(moe_gemm, sim_moe_gemm, SIM_MOE_GEMMS)                      \
    X(dtype, sim_dtype, SIM_DTYPES)                               \
    X(kv_transfer, sim_kv_transfer, SIM_KV_TRANSFERS)             \
    X(decode_routing, sim_decode_routing, SIM_DECODE_ROUTINGS)    \
    X(decode_pick, sim_decode_pick, SIM_DECODE_PICKS)             \
    X(cache_sharing, sim_cache_sharing, SIM_CACHE_SHARINGS)       \
    X(autoscale_metric, sim_autoscale_metric, SIM_AS_METRICS)     \
    X(kernel_part, sim_kernel_part, SIM_KERNEL_PARTS)
#define SIM_DECLARE_NAMES(stem, type, count)             \
    extern const char *const sim_##stem##_names[count]; \
    const char *sim_##stem##_name(type v);
SIM_NAMED_ENUMS(SIM_DECLARE_NAMES)
#undef SIM_DECLARE_NAMES
/* Tables the schema parses with and nothing prints by name. */
extern const char *const sim_graph_rule_names[SIM_GRAPH_RULES];
extern const char *const sim_route_view_names[SIM_ROUTE_VIEWS];
extern const char *const sim_cache_policy_names[SIM_CACHE_POLICIES];
extern const char *const sim_search_objective_names[SIM_SEARCH_OBJECTIVES];

/* The thresholds an autoscaler uses: as written, or the metric's default
 * for a -1 (deployment.pools.*.autoscale.up_threshold, down_threshold). */
void sim_autoscale_thresholds(const sim_autoscale_cfg *a, double *up, double *down);
/* Enums named without a public table. */
const char *sim_role_name(sim_role r);
const char *sim_route_policy_name(sim_route_policy p);
const char *sim_arrival_name(sim_arrival_kind k);
const char *sim_dist_name(sim_dist_kind k);
const char *sim_mode_name(sim_deploy_mode m);

/* 1 when workload.images sends images (per_request not fixed at 0). */
static inline int sim_images_enabled(const sim_media_cfg *m)
{
    return !(m->per_request.dist == SIM_DIST_FIXED && m->per_request.value == 0);
}

/* A class item as the workload's own keys describe it (name "", priority 0,
 * no SLO or bucket of its own). */
void sim_class_from_workload(sim_class_cfg *cl, const sim_workload_cfg *w);
/* Class i's SLO with the scenario's slo.* filling the bounds it leaves 0. */
sim_slo_cfg sim_class_slo(const sim_scenario *sc, int32_t i);
/* 1 when workload.admission or a class's bucket can shed requests. */
int sim_admission_enabled(const sim_workload_cfg *w);

#endif
