/* sim_fidelity — replays measured deployments through the simulator.
 *
 * Reads a CSV of measured serving runs in the column layout of
 * ai-dynamo/aiconfigurator's silicon samples (Apache-2.0): id, concurrency,
 * backend, model_path, system, precision, gemm_quant_mode, moe_quant_mode,
 * mode (agg | disagg), isl, osl, the aggregated layout (batch_size,
 * tp_size, pp_size, attention_dp_size, moe_tp_size, moe_ep_size) or the
 * disaggregated one (prefill_* and decode_* of the same, plus
 * *_num_workers), silicon_ttft_ms and silicon_tpot_ms. Columns are found by
 * name; id, mode, the quant modes and the disaggregated columns are
 * optional (e2e-dev.csv has none of them). Every row becomes a closed-loop
 * scenario (sim_fidelity_row_scenario: the row's model, GPU, dtype and
 * layout, the backend's scheduler preset; a disaggregated row a PD
 * deployment of prefill and decode pools with their own layouts, worker
 * counts and batch sizes), runs through sim_cluster, and its mean TTFT and
 * TPOT are compared with the measured ones. Rows that cannot be simulated
 * are kept with status skipped and the reason.
 *
 * sim_fidelity_run() is the library part (no printing; free the result
 * with sim_fidelity_free); sim_fidelity_explain() breaks one row's
 * simulated TTFT and TPOT down; sim_cli_fidelity() is the `servesim
 * fidelity` command (sim_fidelity_cli.c). Units: milliseconds, percent. */
#ifndef SIM_FIDELITY_H
#define SIM_FIDELITY_H

#include "sim_err.h"
#include "sim_scenario.h"

#include <stdint.h>

/* One worker's layout as the CSV writes it: GPUs = tp·pp·dp = moe_tp·ep·pp;
 * batch is per attention-DP rank (0 = not given); workers 0 = not given. */
typedef struct {
    int32_t tp, pp, dp, moe_tp, ep, batch, workers;
} sim_fidelity_layout;

typedef struct {
    char id[128];               /* the CSV's id, or "line N" when it has none */
    char backend[16];
    char version[32];           /* the engine's version (backend_version column; "" = not given) */
    char model[128];            /* what the scenario's model: names (catalogue name or HF id) */
    char gpu[64];               /* catalogue name of the row's system */
    char dtype[16];             /* weights/activations */
    char kv_dtype[16];
    int disagg;                 /* 1: prefill/decode disaggregated */
    int32_t concurrency, isl, osl;
    double len_lo;              /* the benchmark client's lengths: uniform integers in [floor(len_lo·L), L]
                                   for L = isl and osl; 1 = exactly isl and osl */
    int32_t tp, pp, dp, ep;     /* aggregated layout (disaggregated: the decode workers') */
    int32_t mtp_tokens;         /* draft tokens the engine image's MTP ran (0 = none; sim_fidelity_csv.c) */
    double mtp_accept;          /* their acceptance rate per draft position */
    sim_fidelity_layout agg, prefill, decode;
    double meas_ttft_ms, meas_tpot_ms;
    double pred_ttft_ms, pred_tpot_ms;
    double pred_ttft_first_ms;  /* simulated: mean TTFT of the clients' first requests (the first wave; 0: none) */
    int64_t kv_tokens;          /* simulated: KV capacity of the decode side (tokens, one instance) */
    int64_t preemptions;        /* simulated: requests preempted (recomputed) over the run */
    double mean_batch;          /* simulated: time-averaged batch on the decode side (requests) */
    int ok;                     /* 0: skipped (reason in note) */
    char note[256];
    char assumed[128];          /* what the replay assumed where the row says nothing, or repaired where
                                   its columns are known to be wrong ("" = none) */
    int layout_unknown;         /* 1: a disaggregated row without worker counts, replayed as one prefill and
                                   one decode worker and scored only in sim_fidelity_result.layout_unknown */
    char inconsistent[256];     /* non-empty: why the measurement cannot be a run of the stated deployment
                                   (sim_fidelity_flag_inconsistent: beyond the GPUs' roofline, or faster
                                   than its deployment's other rows); simulated, scored only in
                                   sim_fidelity_result.inconsistent */
    double roof_compute, roof_memory; /* the measurement's loads on the replayed layout's roofline
                                   (sim_fidelity_roofline compute_load, memory_load); roof_checked 0: not
                                   computed (the row's cost model does not build) */
    int roof_checked;
    int32_t replicas;           /* aggregated: instances of the layout the clients were spread over (1, or
                                   k where concurrency = k·batch·DP and one instance beats the roofline;
                                   sim_fidelity_flag_inconsistent, said in `assumed`) */
    int32_t client_pool;        /* the benchmark client's connections when the measurement shows its pool
                                   bound (sim_fidelity_flag_inconsistent, said in `assumed`), 0 = none:
                                   replayed as workload.arrival.max_connections */
    int32_t line;               /* CSV line */
} sim_fidelity_row;

/* Error statistics of a group of simulated rows (percent). */
typedef struct {
    char backend[64];           /* the group's key (backend, GPU, model, mode, backend and GPU, or version; "all") */
    int32_t n;
    double ttft_mape, tpot_mape;
    double ttft_mdape, tpot_mdape; /* median absolute percentage error */
} sim_fidelity_group;

#define SIM_FID_MAX_GROUPS 48

typedef struct {
    sim_fidelity_row *rows;
    int32_t n_rows, n_ok;
    sim_fidelity_group all;   /* every simulated row of known layout; the groups below too */
    sim_fidelity_group layout_unknown; /* the simulated rows of unknown layout (sim_fidelity_row.layout_unknown) */
    sim_fidelity_group inconsistent;   /* the simulated rows of known layout whose measurement contradicts
                                          their deployment's other rows (sim_fidelity_row.inconsistent) */
    sim_fidelity_group backends[SIM_FID_MAX_GROUPS];
    int32_t n_backends;
    sim_fidelity_group gpus[SIM_FID_MAX_GROUPS], models[SIM_FID_MAX_GROUPS], modes[SIM_FID_MAX_GROUPS];
    int32_t n_gpus, n_models, n_modes;
    /* The targets' unit (each backend on each GPU, "vllm b200") and the engine
     * versions ("trtllm 1.0.0rc3"; "sglang (no version)" where the CSV gives none). */
    sim_fidelity_group backend_gpus[SIM_FID_MAX_GROUPS], versions[SIM_FID_MAX_GROUPS];
    int32_t n_backend_gpus, n_versions;
    double wall_s;
} sim_fidelity_result;

typedef struct {
    int steady;               /* leave each row's first wave of requests out of the means */
    const char *const *sets;  /* scenario overrides for every row ("key=value"), or for one
                               * backend's rows ("vllm:key=value") */
    int n_sets;
    int jobs;                 /* rows simulated in parallel (0 = 1) */
    const char *only_id;      /* simulate only the row with this id (others: skipped) */
} sim_fidelity_opts;

/* Replays every row of the CSV at path (opts may be NULL). Overrides that
 * do not load fail the whole run before any row, with the loader's message;
 * so do a missing file, a missing required column and a malformed line. */
int sim_fidelity_run(const char *csv_path, const sim_fidelity_opts *opts, sim_fidelity_result *out,
                     sim_err *err);
void sim_fidelity_free(sim_fidelity_result *r);

/* Parses the CSV into rows (no simulation; every row's ok is 0 and its note
 * empty, or the reason it cannot be simulated). */
int sim_fidelity_read(const char *csv_path, sim_fidelity_result *out, sim_err *err);

/* What one row's measurement demands of its GPUs (sim_fidelity_roofline):
 * by Little's law its c clients complete r = c/(TTFT + D) requests/s,
 * D = (mean output length − 1)·TPOT, and c·D/(TTFT + D) are decoding at
 * once. Per GPU of the busiest rank (the cost model's op list at the row's
 * layout: FLOPs and HBM bytes, collectives left out) it must do r's
 * prefill FLOPs plus 1/TPOT decode steps' FLOPs a second, and read 1/TPOT
 * decode steps' bytes (weights and the decoding batch's KV) a second
 * (tokens per step: 1 + the row's MTP draft tokens). The loads are those
 * rates over the catalogue GPU's dense peak at the row's dtype and its
 * HBM bandwidth; above 1 no such deployment could have measured it.
 * Disaggregated rows: the prefill pool's FLOPs and the decode pool's
 * steps, each spread over its workers. */
typedef struct {
    int32_t replicas;           /* instances assumed (aggregated rows) */
    double rate_per_s;          /* implied completed requests/s, whole deployment */
    double decoding;            /* implied decoding requests per decode instance */
    double prefill_flops;       /* FLOPs of one mean prompt on the busiest GPU (per request) */
    double decode_flops, decode_bytes; /* one decode step of the implied batch, busiest GPU */
    double peak_flops, hbm_bw;  /* the catalogue GPU's dense peak at the row's dtype, its HBM bandwidth */
    double compute_load;        /* needed FLOP/s over peak (prefill and decode; the prefill pool for PD) */
    double prefill_load;        /* the prefill part of compute_load (PD: the prefill pool's only) */
    double memory_load;         /* needed HBM bytes/s over bandwidth (the decode side) */
    int gpus;                   /* GPUs of one (decode, for PD) instance */
} sim_fidelity_roofline;

/* Fills *out for row r as if its clients were spread over `replicas`
 * instances of its layout (aggregated rows; 1 for disaggregated ones).
 * Returns 0, or an error when the row's model, GPU or layout does not
 * build a cost model (the row is then not checked). */
int sim_fidelity_roofline_of(const sim_fidelity_row *r, int32_t replicas, sim_fidelity_roofline *out,
                             sim_err *err);

/* Marks the rows whose measurement no deployment of their stated layout
 * could have produced (sim_fidelity_consistency.c):
 * *  - roofline: a load of sim_fidelity_roofline above FID_ROOF_SLACK (10/9).
 *    An aggregated row whose concurrency is k·batch·DP (k ≥ 2) and whose
 *    load at k instances is within the bound replays k replicas
 *    (sim_fidelity_row.replicas, said in `assumed`); any other such row is
 *    scored apart with the bound and the figures in `inconsistent`;
 *  - deployment: an aggregated row whose measured TPOT is under half what
 *    the same deployment (backend, model, GPU, dtype, layout, lengths,
 *    client) measured with fewer clients than its Little's-law decoding
 *    count: a larger batch decoding that much faster is no run of c
 *    clients all served;
 *  - client pool: an aggregated row of at least twice FID_CLIENT_POOL
 *    (100, aiohttp's default connection pool, which benchmark_serving's
 *    session keeps unless told otherwise) clients whose Little's-law
 *    decoding count is at most that pool and whose TTFT is at least the
 *    wait such a pool forces, (c / 100 − 1) × the decode time, replays
 *    with that pool (sim_fidelity_row.client_pool, said in `assumed`).
 * sim_fidelity_read calls it. */
void sim_fidelity_flag_inconsistent(sim_fidelity_result *out);

/* TensorRT-LLM's token budget (max_num_tokens, per attention-DP rank) as
 * its InferenceX DeepSeek-R1 recipe sets it for an aggregated row:
 * (concurrency + isl + 127) rounded down to 64, at least 8,192 from
 * version 1.2 on (and where the row names no version); for a row replayed
 * with MTP, ((MTP + 1) x max_batch_size + isl + 127) rounded down to 64
 * (max_batch_size the concurrency, or its share per attention-DP rank); 0
 * for every other row (the engine preset's budget). Such rows also
 * schedule prompts only whole (the recipe leaves enable_chunked_prefill
 * off). */
int32_t sim_fidelity_trtllm_dsr1_tokens(const sim_fidelity_row *r);

/* 1 when the row ran TensorRT-LLM's batch waiting, with its steps and token
 * ratio in *iters and *ratio (scheduler.batch_wait_iters, batch_wait_ratio):
 * InferenceX's Llama-3.1-70B B200 recipes with 1k/1k sequences below TP 8
 * (20, 0.9), its fp8 DeepSeek-R1 B200 recipe with 1k/1k sequences from 64
 * clients (40, 0.8; not the rows replayed with MTP, whose recipe has
 * none), aggregated rows without attention DP; 0 (and 0, 0) for every
 * other row. */
int sim_fidelity_trtllm_batch_wait(const sim_fidelity_row *r, int32_t *iters, double *ratio);

/* 1 when the row's vLLM InferenceX recipe fuses each TP all-reduce with
 * the residual add and RMSNorm after it (parallel.ar_norm_fusion):
 * 70b_fp8_b200 passes pass_config enable_fi_allreduce_fusion, gptoss_fp4_b200
 * fuse_allreduce_rms (both B200; the H100 recipes are not read as setting
 * it). Aggregated InferenceX rows only. */
int sim_fidelity_vllm_ar_norm_fusion(const sim_fidelity_row *r);

/* SGLang's poll interval (scheduler.recv_interval, decode steps) as its
 * InferenceX B200 recipe sets it for an aggregated row: 10 below the
 * recipe's concurrency threshold (16 clients; 5 for Qwen3.5 fp8; never for
 * fp8 DeepSeek at TP 4), 30 from it; 0 for rows no recipe of the table
 * runs (other engines, GPUs and models, attention DP, aiconfigurator's
 * collector), which keep the fitted 30 (InferenceX) or the engine's 1. */
int32_t sim_fidelity_sglang_recv_interval(const sim_fidelity_row *r);

/* The kernels an InferenceX SGLang B200 recipe runs in place of SGLang's own
 * (scheduler.kernels, indexed by sim_kernel_part; SIM_SCHED_PRESET_NONE =
 * SGLang's): TensorRT-LLM's MLA/MHA attention, fused MoE, all-reduce and,
 * in the fp8 DeepSeek recipe, dense GEMMs, as its flags name them. Fills k
 * and returns 1 for a row such a recipe ran, else all NONE and 0. */
int sim_fidelity_sglang_kernels(const sim_fidelity_row *r, sim_sched_preset k[SIM_KERNEL_PARTS]);

/* 1 when the row's engine and version schedule asynchronously by default
 * (vLLM from 0.14.0 and its nightly builds; scheduler.async_scheduling), 0
 * otherwise (other engines, older or unknown versions). */
int sim_fidelity_async_scheduling(const char *backend, const char *version);

/* The scenario a row replays as (overrides applied); 0 or the reason. */
int sim_fidelity_row_scenario(const sim_fidelity_row *r, const sim_fidelity_opts *opts, sim_scenario *sc,
                              sim_err *err);

/* Where one row's simulated time goes (ms; means over its requests). */
typedef struct {
    double ttft_ms, tpot_ms;
    double frontend_ms;         /* per-request frontend delay (API server) */
    double client_wait_ms;      /* waiting in the client for one of its connections (client_pool), a
                                   mean over every request */
    double queue_ms;            /* arrival (after the frontend and the client's wait) to the first
                                   scheduled iteration */
    double prefill_ms;          /* first scheduled iteration to the first token */
    double kv_transfer_ms;      /* pd: back-pressure + KV transfer + the engine hand-over (part of a PD row's TTFT) */
    double first_decode_ms;     /* pd: KV arrived to the first decode-side token, where a PD
                                 * row's client TTFT ends */
    /* Cost-model iterations at the row's typical shapes: one prefill of the
     * client's mean input length (batch 1) and one decode step of the mean
     * running batch at the mean context, by op family (gemm, attention,
     * comm, other, host). */
    double prefill_tokens;
    double prefill_iter_ms, prefill_fam_ms[5];
    double decode_iter_ms, decode_fam_ms[5];
    double decode_batch, decode_ctx;
    int32_t decode_graph_batch; /* the mean batch rounded, as its CUDA graph runs it (sim_instance_graph_batch) */
    double decode_stall_ms;     /* TPOT − decode step (per token): prefill chunks in the batch, waits */
    /* Speculative decoding (spec_tokens 0 = off): one step's verify pass of
     * 1 + k tokens per request and draft passes, and the tokens it emits. */
    double spec_verify_ms, spec_draft_ms, spec_tokens;
    int32_t spec_k;
    char prefill_top[3][64], decode_top[3][64]; /* the three costliest ops, "name 1.23 ms" */
    /* scheduler.tokenizer_workers: the part of frontend_ms spent waiting
     * for an API-server worker and being served by one (0 without them). */
    double worker_wait_ms, worker_service_ms;
    /* The client's mean TTFT split by wave: the first requests of the
     * clients, all sent at t = 0 into an empty engine (first_wave_n of
     * them), and every later one (later_n); a wave with no request reads 0. */
    double first_wave_ttft_ms, later_ttft_ms;
    int64_t first_wave_n, later_n;
} sim_fidelity_explain_out;

/* Simulates the row with id `id` of the CSV and breaks it down. */
int sim_fidelity_explain(const char *csv_path, const char *id, const sim_fidelity_opts *opts,
                           sim_fidelity_row *row, sim_fidelity_explain_out *out, sim_err *err);

/* `servesim fidelity [--csv PATH] [--steady-state] [--set [BACKEND:]KEY=VALUE]... [--jobs N] [--json]
 * [--explain ROW_ID]`; argv[0] = "fidelity". Prints; returns the exit code
 * (0 ok, 1 no row could be simulated, 2 usage or input error). */
int sim_cli_fidelity(int argc, char **argv);

#endif
