/* sim_schema — see sim_schema.h. */
#include "sim_schema.h"
#include "sim_sched_preset.h"
#include "sim_suggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMES(a) a, (int)(sizeof a / sizeof a[0])
#define SC(m) 0, offsetof(sim_scenario, m), sizeof(((sim_scenario *)0)->m)
#define PL(m) SIM_SCHEMA_IN_POOL, offsetof(sim_pool_cfg, m), sizeof(((sim_pool_cfg *)0)->m)
#define CL(m) SIM_SCHEMA_IN_CLASS, offsetof(sim_class_cfg, m), sizeof(((sim_class_cfg *)0)->m)
#define SC_WL(m) SC(workload.m)

/* Ranges: flags, min, max. */
#define ANY 0, 0, 0
#define GE0 SIM_SCHEMA_HAS_MIN, 0, 0
#define GT0 SIM_SCHEMA_HAS_MIN | SIM_SCHEMA_MIN_EXCL, 0, 0
#define GE1 SIM_SCHEMA_HAS_MIN, 1, 0
#define IN(a, b) SIM_SCHEMA_HAS_MIN | SIM_SCHEMA_HAS_MAX, a, b

#define SEC(p, d) {p, SIM_SCHEMA_MAP, 0, 0, 0, ANY, NULL, 0, 0, d}
#define FLD(p, t, loc, range, d) {p, t, loc, range, NULL, 0, 0, d}
#define ENM(p, loc, names, base, d) {p, SIM_SCHEMA_ENUM, loc, ANY, NAMES(names), base, d}

/* Name lists index the C enums of sim_scenario.h (plus enum_base). */
static const char *const spec_methods[] = {"mtp", "draft"};
static const char *const arrivals[] = {"poisson", "gamma", "constant", "closed_loop", "schedule"};
static const char *const dists[] = {"fixed", "uniform", "normal", "lognormal", "zipf", "empirical"};
static const char *const traces[] = {"mooncake", "csv"}; /* base 1: 0 is "no trace" */
static const char *const modes[] = {"colocated", "pd", "af", "pd+af"};
static const char *const roles[] = {"colocated", "prefill", "decode", "attention", "ffn"};
static const char *const policies[] = {"round_robin", "random", "least_loaded", "power_of_two",
                                       "cache_aware"};
static const char *const presets[] = {"none", "sglang", "dynamo", "llmd"};
/* scheduler.kernels.*: sim_sched_preset's values, NONE read as the preset's own. */
static const char *const kernel_engines[] = {"preset", "vllm", "sglang", "trtllm"};
_Static_assert(sizeof kernel_engines / sizeof kernel_engines[0] == SIM_SCHED_PRESETS,
               "scheduler.kernels.* names one engine per sim_sched_preset value");

/* One length distribution at key path `sec` described by `d`, stored through LOC(m.field). */
#define LEN_DIST_AT(sec, LOC, m, d)                                                               \
    SEC(sec, d),                                                                                  \
    ENM(sec ".dist", LOC(m.dist), dists, 0,                                                       \
        "Distribution kind; it decides which of the keys below are used."),                      \
    FLD(sec ".value", SIM_SCHEMA_F64, LOC(m.value), ANY,                                          \
        "fixed: the length (>= 1)."),                                                             \
    FLD(sec ".mean", SIM_SCHEMA_F64, LOC(m.mean), ANY,                                            \
        "normal, lognormal: mean length (> 0)."),                                                 \
    FLD(sec ".std", SIM_SCHEMA_F64, LOC(m.std), GE0,                                              \
        "normal, lognormal: standard deviation of the length itself."),                           \
    FLD(sec ".s", SIM_SCHEMA_F64, LOC(m.s), ANY,                                                  \
        "zipf: exponent s (> 0), P(k) ~ k^-s over k = min..max."),                                \
    FLD(sec ".min", SIM_SCHEMA_I64, LOC(m.min), GE1,                                              \
        "Smallest length (uniform and zipf range, clamp for the others)."),                       \
    FLD(sec ".max", SIM_SCHEMA_I64, LOC(m.max), GE1,                                              \
        "Largest length (uniform and zipf range, clamp for the others)."),                        \
    FLD(sec ".path", SIM_SCHEMA_PATH, LOC(m.path), ANY,                                           \
        "empirical: file with one length per line, or `length,weight`.")
#define LEN_DIST_TOKENS "Length distribution in tokens; every kind is clamped to [min, max]."
#define LEN_DIST_D(sec, m, d) LEN_DIST_AT("workload." sec, SC_WL, m, d)
#define LEN_DIST(sec, m) LEN_DIST_D(sec, m, LEN_DIST_TOKENS)

/* A prefix-structure block (workload.prefix, workload.classes.*.prefix). */
#define PREFIX_AT(sec, LOC, m, d)                                                                 \
    SEC(sec, d),                                                                                  \
    ENM(sec ".kind", LOC(m.kind), sim_prefix_kind_names, 0,                                       \
        "none; system_prompt (shared prompts, Zipf popularity); multi_turn (each turn extends the " \
        "previous context and answer); rag (shared documents, Zipf popularity)."),               \
    FLD(sec ".block_tokens", SIM_SCHEMA_I32, LOC(m.block_tokens), IN(1, 65536),                   \
        "Tokens per hash block."),                                                                \
    FLD(sec ".prompts", SIM_SCHEMA_I32, LOC(m.prompts), IN(1, 100000000),                         \
        "system_prompt: number of distinct shared prompts."),                                     \
    FLD(sec ".prompt_tokens", SIM_SCHEMA_I32, LOC(m.prompt_tokens), IN(1, 10000000),              \
        "system_prompt: tokens of each shared prompt (the request's own tokens follow)."),        \
    FLD(sec ".zipf_s", SIM_SCHEMA_F64, LOC(m.zipf_s), GE0,                                        \
        "Popularity skew of prompts and documents (0 = uniform)."),                               \
    FLD(sec ".sessions", SIM_SCHEMA_I32, LOC(m.sessions), IN(1, 100000000),                       \
        "multi_turn: sessions open at once."),                                                    \
    FLD(sec ".turns", SIM_SCHEMA_I32, LOC(m.turns), IN(1, 100000),                                \
        "multi_turn: turns per session."),                                                        \
    FLD(sec ".docs", SIM_SCHEMA_I32, LOC(m.docs), IN(1, 100000000),                               \
        "rag: distinct documents."),                                                              \
    FLD(sec ".doc_tokens", SIM_SCHEMA_I32, LOC(m.doc_tokens), IN(1, 10000000),                    \
        "rag: tokens per document."),                                                             \
    FLD(sec ".docs_per_request", SIM_SCHEMA_I32, LOC(m.docs_per_request),                         \
        IN(1, 1000), "rag: documents in each prompt.")

/* An agentic-sessions block (workload.sessions, workload.classes.*.sessions);
 * first: the key of the first turn's prompt. */
#define SESSIONS_AT(sec, LOC, m, first, d)                                                        \
    SEC(sec, d),                                                                                  \
    FLD(sec ".count", SIM_SCHEMA_I64, LOC(m.count), GE0,                                          \
        "Sessions to start (0 = off); workload.requests is then unused and duration_s bounds session starts."), \
    LEN_DIST_AT(sec ".turns", LOC, m.turns, "Turns per session (a length distribution, clamped to [min, max])."), \
    LEN_DIST_AT(sec ".user_tokens", LOC, m.user_tokens,                                           \
                "New user tokens of each turn after the first (the first turn's prompt is " first ")."), \
    LEN_DIST_AT(sec ".think_ms", LOC, m.think_ms,                                                 \
                "Think / tool-call gap in ms between a turn's end (its sub-requests joined) and the next turn " \
                "(a length distribution in ms; empirical reads measured gaps from a file)."),    \
    FLD(sec ".fan_out", SIM_SCHEMA_I32, LOC(m.fan_out), IN(0, 1024),                              \
        "Parallel sub-requests each turn but the last fans out when it finishes; the next turn waits for the " \
        "last of them."),                                                                         \
    LEN_DIST_AT(sec ".child_input_tokens", LOC, m.child_input_tokens,                             \
                "A sub-request's own tokens after its parent's context (prompt + answer)."),     \
    LEN_DIST_AT(sec ".child_output_tokens", LOC, m.child_output_tokens,                           \
                "A sub-request's answer; the answers join the next turn's context.")

static const sim_schema_field table[] = {
    SEC("", "Top-level keys. Every key has a default, so `{}` is a valid scenario."),
    FLD("name", SIM_SCHEMA_STR, SC(name), ANY, "Scenario name, stored with the results."),
    FLD("seed", SIM_SCHEMA_U64, SC(seed), GE0, "Seed of every random stream (one stream per component)."),
    FLD("model", SIM_SCHEMA_MODEL, SC(model), ANY,
        "Catalogue model name, Hugging Face id of the shipped zoo (e.g. deepseek-ai/DeepSeek-V3), or a path "
        "to a config.json (.json/.yaml)."),
    ENM("dtype", SC(dtype), sim_dtype_names, 0,
        "Weights and activations: auto (the checkpoint's quantisation, per part), bf16, fp8 (per-tensor), "
        "fp8_block (128-block scales), mxfp8 (E8M0 scale per 32), nvfp4, mxfp4 (weights; W4A16 before "
        "Blackwell), int4 (group-32 weight-only)."),
    /* bf16 .. nvfp4 of the same table: values SIM_DTYPE_BF16 and up */
    {"kv_dtype", SIM_SCHEMA_ENUM, SC(kv_dtype), ANY, sim_dtype_names + SIM_DTYPE_BF16, SIM_KV_DTYPES,
     SIM_DTYPE_BF16, "KV cache data type (same names as dtype)."},

    SEC("hardware", "Default GPU and node shape."),
    FLD("hardware.gpu", SIM_SCHEMA_STR, SC(hardware.gpu), ANY,
        "GPU catalogue name (e.g. h100-sxm, h200, b200); pools may override it."),
    FLD("hardware.perf_db", SIM_SCHEMA_PATH, SC(hardware.perf_db), ANY,
        "Calibrated perf-db (SQLite file or .sql dump from `servesim db export`); empty = the "
        "matching GPU's dump under calib/data/ if there is one, else the analytic roofline; `none` = "
        "the analytic roofline always (what `--no-perf-db` sets)."),
    FLD("hardware.op_params_gpu", SIM_SCHEMA_STR, SC(hardware.op_params_gpu), ANY,
        "GPU with measured per-op tables (h100-sxm, b200, a100-sxm-80g) whose fitted op-model parameter "
        "sets price the ops of every GPU in the run; empty = each GPU's own sets, or its architecture's "
        "(how a GPU without tables is priced). Set to another GPU's to see how a deployment would be "
        "predicted if its GPU had never been measured (the end-to-end cross-GPU check)."),
    FLD("hardware.gpus_per_node", SIM_SCHEMA_I32, SC(hardware.gpus_per_node), IN(1, 1024),
        "GPUs per node (sets which links are NVLink and which are network)."),
    SEC("hardware.op_speedup", "What a faster kernel is worth: each op family's time (perf-db, op model or "
                               "roofline) divided by its speedup (1 = as priced; `servesim sensitivity` sweeps one)."),
    FLD("hardware.op_speedup.gemm", SIM_SCHEMA_F64, SC(hardware.op_speedup[0]), GT0, "Speedup of dense GEMMs (projections, dense MLP, router, shared experts, LM head)."),
    FLD("hardware.op_speedup.moe", SIM_SCHEMA_F64, SC(hardware.op_speedup[1]), GT0, "Speedup of the routed experts (grouped GEMMs or the fused-MoE op)."),
    FLD("hardware.op_speedup.attention", SIM_SCHEMA_F64, SC(hardware.op_speedup[2]), GT0, "Speedup of attention kernels (context, generation, MLA, DSA modules)."),
    FLD("hardware.op_speedup.all_reduce", SIM_SCHEMA_F64, SC(hardware.op_speedup[3]), GT0, "Speedup of all-reduce collectives."),
    FLD("hardware.op_speedup.all_gather", SIM_SCHEMA_F64, SC(hardware.op_speedup[4]), GT0, "Speedup of all-gather collectives."),
    FLD("hardware.op_speedup.reduce_scatter", SIM_SCHEMA_F64, SC(hardware.op_speedup[5]), GT0, "Speedup of reduce-scatter collectives."),
    FLD("hardware.op_speedup.all_to_all", SIM_SCHEMA_F64, SC(hardware.op_speedup[6]), GT0, "Speedup of all-to-all (EP dispatch/combine: DeepEP or NCCL, Ulysses sequence parallelism)."),
    FLD("hardware.op_speedup.send_recv", SIM_SCHEMA_F64, SC(hardware.op_speedup[7]), GT0, "Speedup of point-to-point sends (pipeline stages, ring sequence parallelism)."),
    FLD("hardware.op_speedup.other", SIM_SCHEMA_F64, SC(hardware.op_speedup[8]), GT0, "Speedup of every other GPU op (norms, activations, RoPE/KV writes, quantisation, embedding, sampling, MoE permutes)."),

    SEC("workload", "What requests are sent, when, and how long they are."),
    FLD("workload.requests", SIM_SCHEMA_I64, SC(workload.requests), GE0,
        "Number of requests to send (0 = the whole trace; unused with workload.sessions, which counts "
        "sessions)."),
    FLD("workload.duration_s", SIM_SCHEMA_F64, SC(workload.duration_s), GE0,
        "Stop sending after this much simulated time (0 = no limit)."),
    SEC("workload.arrival", "Arrival process (ignored when a trace is replayed)."),
    ENM("workload.arrival.process", SC(workload.arrival.process), arrivals, 0,
        "Open loop (poisson, gamma, constant) or closed loop (closed_loop)."),
    FLD("workload.arrival.rate", SIM_SCHEMA_F64, SC(workload.arrival.rate), GT0,
        "Open loop: mean arrival rate in requests/s."),
    FLD("workload.arrival.schedule", SIM_SCHEMA_STR, SC(workload.arrival.schedule), ANY,
        "schedule: Poisson arrivals whose rate follows \"t0:r0, t1:r1, ...\" (seconds:requests/s; "
        "each rate holds until the next time, the last one to the end)."),
    FLD("workload.arrival.cv", SIM_SCHEMA_F64, SC(workload.arrival.cv), GT0,
        "gamma: coefficient of variation of inter-arrival times (1 = Poisson)."),
    FLD("workload.arrival.concurrency", SIM_SCHEMA_I32, SC(workload.arrival.concurrency),
        IN(0, 10000000), "closed_loop: number of clients (>= 1)."),
    FLD("workload.arrival.think_time_s", SIM_SCHEMA_F64, SC(workload.arrival.think_time_s), GE0,
        "closed_loop: pause between a reply and the client's next request."),
    FLD("workload.arrival.max_connections", SIM_SCHEMA_I32, SC(workload.arrival.max_connections),
        IN(0, 10000000),
        "The clients' connection pool, shared by every request the workload sends (0 = unlimited, the "
        "default): a request sent while this many are in flight waits in the client until one finishes, "
        "in the order sent, and its TTFT and E2E count the wait, as a benchmark client measures them "
        "(benchmark_serving's aiohttp session holds 100 connections unless told otherwise); overload.max_waiting "
        "and max_queue_delay_s count the requests waiting there."),
    LEN_DIST("input_tokens", input_tokens),
    LEN_DIST("output_tokens", output_tokens),
    SEC("workload.trace", "Trace replay: set both format and path to replay a trace instead of "
                          "the synthetic arrivals and lengths."),
    ENM("workload.trace.format", SC(workload.trace.format), traces, 1,
        "mooncake (JSONL, ms timestamps) or csv (timestamp,input_tokens,output_tokens)."),
    FLD("workload.trace.path", SIM_SCHEMA_PATH, SC(workload.trace.path), ANY, "Trace file."),
    FLD("workload.trace.time_scale", SIM_SCHEMA_F64, SC(workload.trace.time_scale), GT0,
        "Multiply trace timestamps (2 = half the rate)."),
    FLD("workload.trace.rate_scale", SIM_SCHEMA_F64, SC(workload.trace.rate_scale), GT0,
        "Multiply the arrival rate (divides timestamps); combines with time_scale."),
    PREFIX_AT("workload.prefix", SC_WL, prefix,
              "Synthetic prefix structure (hash blocks like Mooncake's) for prefix caching."),
    SESSIONS_AT("workload.sessions", SC_WL, sessions, "workload.input_tokens",
                "Agentic / multi-turn sessions: each turn's prompt is the previous context plus its "
                "answer (plus its sub-requests' answers) plus new user tokens, so the prefix cache can "
                "hit the previous turn's KV; the arrival process times session starts. Off while count is 0."),
    SEC("workload.images", "Image or video inputs of a model with a vision tower (README \"Multimodal "
                           "inputs\"): each item's tokens join the prompt and the tower's pass is priced. Off "
                           "while per_request is fixed at 0."),
    LEN_DIST_D("images.per_request", images.per_request,
               "Images (or videos) per request: fixed or a distribution, clamped to [min, max]."),
    FLD("workload.images.width", SIM_SCHEMA_I32, SC(workload.images.width), IN(1, 65536),
        "Width in pixels of each image (video frame) as the processor receives it."),
    FLD("workload.images.height", SIM_SCHEMA_I32, SC(workload.images.height), IN(1, 65536),
        "Height in pixels of each image (video frame)."),
    FLD("workload.images.frames", SIM_SCHEMA_I32, SC(workload.images.frames), IN(0, 100000),
        "0 = each item is an image; > 0 = a video of this many sampled frames (Qwen3-VL: temporal patches of 2; "
        "Kimi-K2.5: chunks of 4; Gemma-4: frames of at most 70 tokens)."),
    SEC("workload.admission", "Admission control at the cluster's door: a request it refuses is shed (counted, "
                              "never served)."),
    FLD("workload.admission.rate", SIM_SCHEMA_F64, SC(workload.admission.bucket.rate), GE0,
        "Token bucket over every request: refill rate in requests/s (0 = no bucket)."),
    FLD("workload.admission.burst", SIM_SCHEMA_F64, SC(workload.admission.bucket.burst), GE0,
        "Token bucket size in requests (>= 1 with a rate), full at t = 0."),
    FLD("workload.admission.slo_factor", SIM_SCHEMA_F64, SC(workload.admission.slo_factor), GE0,
        "Shed a request whose predicted TTFT on the instance it is routed to (the prefill tokens queued there "
        "ahead of it, i.e. not those of less urgent classes under priority scheduling, plus its own, at the pool's "
        "prefill rate, plus the frontend delay) exceeds slo_factor x its class's TTFT "
        "bound (0 = off; needs a TTFT bound)."),
    {"workload.classes", SIM_SCHEMA_LIST, 0, 0, 0, IN(1, SIM_MAX_CLASSES), NULL, 0, 0,
     "SLO classes of a mixed workload, each with its own arrivals, lengths, SLO and priority; every item "
     "starts from the workload's own keys above (requests, duration_s, arrival, input_tokens, output_tokens), "
     "which then describe no requests of their own. Synthetic arrivals only; a class may be open loop or closed loop "
     "(its own clients), and open and closed classes mix."},
    SEC("workload.classes.*", "One class (list item)."),
    FLD("workload.classes.*.name", SIM_SCHEMA_STR, CL(name), ANY,
        "Class name (required, unique): the key of its figures in --json `classes` and the results DB."),
    FLD("workload.classes.*.priority", SIM_SCHEMA_I32, CL(priority), IN(0, 1000000),
        "Scheduling priority: instances order their waiting queue by priority (0 first), then arrival, and "
        "preempt the lowest priority's newest request first (vLLM's priority policy)."),
    FLD("workload.classes.*.requests", SIM_SCHEMA_I64, CL(requests), GE0,
        "Requests this class sends (0 = until duration_s); a closed-loop class's clients stop when its requests "
        "are sent, and the run ends when every class's are done."),
    FLD("workload.classes.*.duration_s", SIM_SCHEMA_F64, CL(duration_s), GE0,
        "Stop this class's arrivals after this much simulated time (0 = no limit)."),
    SEC("workload.classes.*.arrival", "The class's arrival process (open loop, or its own closed-loop clients)."),
    ENM("workload.classes.*.arrival.process", CL(arrival.process), arrivals, 0,
        "poisson, gamma, constant, schedule or closed_loop (concurrency clients of its own, each sending its next "
        "request think_time_s after it has seen the last token of the previous one; with classes "
        "workload.arrival.process itself may not be closed_loop)."),
    FLD("workload.classes.*.arrival.rate", SIM_SCHEMA_F64, CL(arrival.rate), GT0, "Mean arrival rate in requests/s."),
    FLD("workload.classes.*.arrival.schedule", SIM_SCHEMA_STR, CL(arrival.schedule), ANY,
        "schedule: \"t0:r0, t1:r1, ...\" as workload.arrival.schedule."),
    FLD("workload.classes.*.arrival.cv", SIM_SCHEMA_F64, CL(arrival.cv), GT0, "gamma: coefficient of variation."),
    FLD("workload.classes.*.arrival.concurrency", SIM_SCHEMA_I32, CL(arrival.concurrency), IN(0, 10000000),
        "closed_loop: the class's clients (>= 1), each with one request in flight or thinking."),
    FLD("workload.classes.*.arrival.think_time_s", SIM_SCHEMA_F64, CL(arrival.think_time_s), GE0,
        "closed_loop: seconds a client of the class waits after the last token (or after a shed or rejected "
        "request) before sending its next request."),
    LEN_DIST_AT("workload.classes.*.input_tokens", CL, input_tokens, LEN_DIST_TOKENS),
    LEN_DIST_AT("workload.classes.*.output_tokens", CL, output_tokens, LEN_DIST_TOKENS),
    SEC("workload.classes.*.slo", "The class's SLO; a bound left 0 is the scenario's slo.* bound."),
    FLD("workload.classes.*.slo.ttft_ms", SIM_SCHEMA_F64, CL(slo.ttft_ms), GE0, "Time-to-first-token bound in ms."),
    FLD("workload.classes.*.slo.tpot_ms", SIM_SCHEMA_F64, CL(slo.tpot_ms), GE0, "Time-per-output-token bound in ms."),
    FLD("workload.classes.*.slo.e2e_ms", SIM_SCHEMA_F64, CL(slo.e2e_ms), GE0, "End-to-end latency bound in ms."),
    PREFIX_AT("workload.classes.*.prefix", CL, prefix,
              "The class's own prefix structure, as workload.prefix (which it starts from): its prompts, documents "
              "and sessions are its own (their hash ids and session ids are not another class's), so its requests "
              "share cached prefixes with each other only; kind none gives it none."),
    SESSIONS_AT("workload.classes.*.sessions", CL, sessions, "the class's input_tokens",
                "The class's own agentic sessions, as workload.sessions (which it starts from): its arrival "
                "process times its session starts, every turn and sub-request is of the class (its SLO and "
                "priority), and its sessions and their blocks are its own. Off while count is 0; not with a "
                "closed-loop class or a prefix structure of the class."),
    SEC("workload.classes.*.admission", "The class's own token bucket (beside workload.admission's)."),
    FLD("workload.classes.*.admission.rate", SIM_SCHEMA_F64, CL(admission.rate), GE0,
        "Refill rate in requests/s (0 = no bucket)."),
    FLD("workload.classes.*.admission.burst", SIM_SCHEMA_F64, CL(admission.burst), GE0,
        "Bucket size in requests (>= 1 with a rate), full at t = 0."),

    SEC("deployment", "How the model is served: the mode and its pools of instances."),
    ENM("deployment.mode", SC(deployment.mode), modes, 0,
        "colocated, pd (prefill/decode), af (attention/FFN) or pd+af."),
    ENM("deployment.kv_transfer", SC(deployment.kv_transfer), sim_kv_transfer_names, 0,
        "pd: KV moves whole after prefill, or layer by layer overlapping prefill compute."),
    ENM("deployment.decode_routing", SC(deployment.decode_routing), sim_decode_routing_names, 0,
        "pd: how a finished prefill picks its decode instance."),
    ENM("deployment.decode_pick", SC(deployment.decode_pick), sim_decode_pick_names, 0,
        "pd: when decode_routing chooses a request's decode instance: prefill_end (TensorRT-LLM's "
        "disaggregated server, Dynamo with vLLM or TensorRT-LLM, vLLM's proxy: the decode request "
        "is sent when the prefill returns) or arrival (SGLang's router and Dynamo with SGLang send "
        "it to both workers at once); the decode instance's load counts it from then."),
    SEC("deployment.encode", "Where workload.images' vision tower runs: in each instance before the request's "
                             "prefill (instances 0), or a pool of one-GPU encoders whose embeddings cross the "
                             "network to the prefill instance (encode -> prefill -> decode)."),
    FLD("deployment.encode.instances", SIM_SCHEMA_I32, SC(deployment.encode_instances), IN(0, 100000),
        "Encoder GPUs of the encode pool (0 = colocated: the instance encodes; search.encode_instances sizes it in "
        "a search)."),
    FLD("deployment.encode.gpu", SIM_SCHEMA_STR, SC(deployment.encode_gpu), ANY,
        "GPU of the encoders (empty = hardware.gpu); some pool must run on it (its cost model prices the "
        "tower)."),
    FLD("deployment.af_micro_batches", SIM_SCHEMA_I32, SC(deployment.af_micro_batches), IN(1, 64),
        "af: micro-batches in ping-pong between attention and FFN instances."),
    {"deployment.pools", SIM_SCHEMA_LIST, 0, 0, 0, IN(1, SIM_MAX_POOLS), NULL, 0, 0,
     "Pools of identical instances; each item starts from the defaults below."},
    SEC("deployment.pools.*", "One pool (list item)."),
    ENM("deployment.pools.*.role", PL(role), roles, 0,
        "colocated (mode colocated); prefill, decode (pd); attention, ffn (af); prefill, "
        "attention, ffn (pd+af)."),
    FLD("deployment.pools.*.instances", SIM_SCHEMA_I32, PL(instances), IN(1, 100000),
        "Number of instances (engine replicas) in the pool."),
    FLD("deployment.pools.*.gpu", SIM_SCHEMA_STR, PL(gpu), ANY, "GPU of this pool (\"\" = hardware.gpu)."),
    SEC("deployment.pools.*.parallel", "Layout of one instance."),
    FLD("deployment.pools.*.parallel.tp", SIM_SCHEMA_I32, PL(parallel.tp), IN(1, 1024),
        "Tensor-parallel degree."),
    FLD("deployment.pools.*.parallel.pp", SIM_SCHEMA_I32, PL(parallel.pp), IN(1, 1024),
        "Pipeline-parallel degree."),
    FLD("deployment.pools.*.parallel.dp", SIM_SCHEMA_I32, PL(parallel.dp), IN(1, 1024),
        "Attention data-parallel degree (MoE): attention replicated, experts sharded; GPUs = tp*pp*dp*sp."),
    FLD("deployment.pools.*.parallel.ep", SIM_SCHEMA_I32, PL(parallel.ep), IN(1, 1024),
        "Expert-parallel degree (MoE); must divide tp*dp."),
    FLD("deployment.pools.*.parallel.moe_tp", SIM_SCHEMA_I32, PL(parallel.moe_tp), IN(0, 1024),
        "Expert tensor-parallel degree (MoE; TensorRT-LLM's moe_tp_size): each expert's columns split over "
        "moe_tp ranks; 0 = tp*dp/ep. moe_tp*ep must divide tp*dp; when smaller, tp*dp/(moe_tp*ep) replicated "
        "expert groups each serve their share of the tokens."),
    FLD("deployment.pools.*.parallel.dcp", SIM_SCHEMA_I32, PL(parallel.dcp), IN(1, 1024),
        "Decode context parallel: KV split by sequence over dcp of the tp ranks; must divide tp."),
    FLD("deployment.pools.*.parallel.sp", SIM_SCHEMA_I32, PL(parallel.sp), IN(1, 1024),
        "Sequence-parallel degree for prefill (extra ranks per instance)."),
    ENM("deployment.pools.*.parallel.sp_kind", PL(parallel.sp_kind), sim_sp_kind_names, 0,
        "Sequence parallelism: ulysses (all-to-all; heads must divide) or ring (KV passed around)."),
    FLD("deployment.pools.*.parallel.tp_sp", SIM_SCHEMA_BOOL, PL(parallel.tp_sp), ANY,
        "TP with sequence parallelism: reduce-scatter + all-gather instead of all-reduce."),
    FLD("deployment.pools.*.parallel.comm_fp8", SIM_SCHEMA_BOOL, PL(parallel.comm_fp8), ANY,
        "FP8-compressed collectives (half the bytes, plus quantisation cost)."),
    FLD("deployment.pools.*.parallel.comm_overlap", SIM_SCHEMA_BOOL, PL(parallel.comm_overlap), ANY,
        "Split the TP GEMMs into row chunks so that each chunk's collective overlaps the next chunk's GEMM (GEMM "
        "+ all-reduce / all-gather fusion); no gain under two 128-row tiles (decode at small batch)."),
    FLD("deployment.pools.*.parallel.ar_norm_fusion", SIM_SCHEMA_BOOL, PL(parallel.ar_norm_fusion), ANY,
        "Under TP without expert parallelism, each all-reduce carries the residual add and the next RMSNorm in "
        "the same kernel (vLLM's fuse_allreduce_rms / enable_fi_allreduce_fusion, SGLang's "
        "--enable-flashinfer-allreduce-fusion): no norm kernel of its own after an all-reduce."),
    FLD("deployment.pools.*.parallel.micro_batches", SIM_SCHEMA_I32, PL(parallel.micro_batches),
        IN(0, 4096), "Pipeline parallelism: batches in flight in the instance, each through every stage in turn "
                     "(0 = pp, as vLLM's virtual engines and the SGLang/TensorRT-LLM PP schedulers; 1 = one batch at "
                     "a time, paying the whole fill and drain)."),
    ENM("deployment.pools.*.parallel.ep_mode", PL(parallel.ep_mode), sim_ep_mode_names, 0,
        "How tokens reach their experts' ranks and back under attention DP: DeepEP normal (bandwidth-bound), "
        "low_latency (rounds of 128 tokens), auto (low_latency for decode, normal for prefill); or NCCL, for "
        "engines without DeepEP: alltoall (every (token, expert) pair, one all-to-all each way), allgather "
        "(all-gather of all ranks' tokens, reduce-scatter of the outputs)."),
    ENM("deployment.pools.*.parallel.moe_gemm", PL(parallel.moe_gemm), sim_moe_gemm_names, 0,
        "Grouped-GEMM layout for experts: contiguous (permuted rows), masked (per-expert slots), auto (masked after low-latency dispatch, contiguous otherwise)."),
    FLD("deployment.pools.*.parallel.expert_skew", SIM_SCHEMA_F64, PL(parallel.expert_skew), GE0,
        "Zipf exponent of the token load over experts (0 = uniform)."),
    SEC("deployment.pools.*.scheduler", "Continuous-batching scheduler of each instance."),
    FLD("deployment.pools.*.scheduler.max_seqs", SIM_SCHEMA_I32, PL(scheduler.max_seqs), IN(1, 1048576),
        "Most requests in one iteration's batch."),
    FLD("deployment.pools.*.scheduler.max_batched_tokens", SIM_SCHEMA_I32,
        PL(scheduler.max_batched_tokens), GE1, "Token budget of one iteration."),
    FLD("deployment.pools.*.scheduler.chunk_tokens", SIM_SCHEMA_I32, PL(scheduler.chunk_tokens), GE1,
        "Most prefill tokens of one request per iteration (<= max_batched_tokens)."),
    FLD("deployment.pools.*.scheduler.whole_prompts", SIM_SCHEMA_BOOL, PL(scheduler.whole_prompts), ANY,
        "A waiting prompt joins an iteration only whole: one that does not fit what the prompts "
        "already there leave of the token budget waits for a later iteration, first come first "
        "served (TensorRT-LLM without enable_chunked_prefill, its default); a prompt longer than "
        "the budget or chunk_tokens still runs, alone, in chunks. false = the rest of the budget "
        "takes a chunk of the next prompt (chunked prefill)."),
    FLD("deployment.pools.*.scheduler.block_tokens", SIM_SCHEMA_I32, PL(scheduler.block_tokens),
        IN(1, 1024), "Paged KV cache block size in tokens."),
    {"deployment.pools.*.scheduler.gpu_mem_util", SIM_SCHEMA_F64, PL(scheduler.gpu_mem_util),
     SIM_SCHEMA_HAS_MIN | SIM_SCHEMA_HAS_MAX | SIM_SCHEMA_MIN_EXCL, 0, 1, NULL, 0, 0,
     "Fraction of GPU memory the engine may use."},
    FLD("deployment.pools.*.scheduler.reserve_gb", SIM_SCHEMA_F64, PL(scheduler.reserve_gb), GE0,
        "Activation/workspace reserve per GPU in GB."),
    FLD("deployment.pools.*.scheduler.overhead_us", SIM_SCHEMA_F64, PL(scheduler.overhead_us), GE0,
        "Per-iteration framework overhead in microseconds (scheduling, launch, sampling)."),
    ENM("deployment.pools.*.scheduler.preset", PL(scheduler.preset), sim_sched_preset_names, 0,
     "What a serving engine's defaults amount to here (vllm, sglang, trtllm; fitted on measured deployments, "
     "docs/cost-model.md): it sets max_batched_tokens, chunk_tokens, overhead_us, overhead_per_seq_us, "
     "frontend_us, eager_launch_us, eager_serial, policy, admission, mem_fraction_of, pd_handover_us, pd_handover_gbs, "
     "preempt_keeps_kv, async_scheduling, recv_interval, adp_timeout_iters, adp_wait_iters, batch_wait_iters, "
     "batch_wait_ratio, cuda_graph_sizes "
     "(the engine's) and cuda_graph_max_bs (0), and any "
     "of those written beside it "
     "wins. none = the defaults."),
    ENM("deployment.pools.*.scheduler.mem_fraction_of", PL(scheduler.mem_fraction_of), sim_mem_fraction_of_names, 0,
        "What gpu_mem_util is a fraction of: total = all GPU memory, weights included (vLLM's "
        "gpu_memory_utilization); free = the memory left after the weights and reserve_gb (TensorRT-LLM's "
        "free_gpu_memory_fraction); sglang = SGLang's own mem_fraction_static, total minus its reservation "
        "formula (gpu_mem_util and reserve_gb unused)."),
    SEC("deployment.pools.*.scheduler.kernels",
        "Which engine's measured kernels price each part of an iteration, where a serving recipe runs another "
        "engine's kernels than its own (SGLang with --attention-backend trtllm_mla, --moe-runner-backend "
        "flashinfer_trtllm, FlashInfer's GEMMs or all-reduce fusion runs TensorRT-LLM's). Needs scheduler.preset; "
        "preset = the preset's engine."),
    ENM("deployment.pools.*.scheduler.kernels.gemm", PL(scheduler.kernels[SIM_KERNEL_GEMM]), kernel_engines, 0,
        "Dense GEMMs (projections, shared experts, the LM head)."),
    ENM("deployment.pools.*.scheduler.kernels.attention", PL(scheduler.kernels[SIM_KERNEL_ATTENTION]),
        kernel_engines, 0,
        "Softmax attention: context and generation kernels, MLA and its module, DSA (a hybrid model's "
        "linear-attention layers keep the preset's kernels)."),
    ENM("deployment.pools.*.scheduler.kernels.moe", PL(scheduler.kernels[SIM_KERNEL_MOE]), kernel_engines, 0,
        "The fused-MoE kernel of the routed experts."),
    ENM("deployment.pools.*.scheduler.kernels.comm", PL(scheduler.kernels[SIM_KERNEL_COMM]), kernel_engines, 0,
        "The engine's own all-reduce kernel (NCCL's collectives are NCCL's whatever the engine)."),
    ENM("deployment.pools.*.scheduler.policy", PL(scheduler.policy), sim_sched_policy_names, 0,
        "decode_first: every iteration decodes, prefill fills the rest (vLLM, Sarathi); prefill_first: "
        "prefill-only iterations while prompts wait (SGLang's default)."),
    ENM("deployment.pools.*.scheduler.admission", PL(scheduler.admission), sim_admission_names, 0,
        "optimistic: admit while the prompt fits and preempt (recompute) the newest request when decoding runs "
        "out of KV (vLLM); reserve: admit only when the whole sequence (prompt + output) fits beside what the "
        "running requests were promised, so nothing is preempted and the rest queue (TensorRT-LLM's "
        "GUARANTEED_NO_EVICT); ratio: SGLang's new-token ratio, admit when the free KV holds the prompt and "
        "output (clipped at ratio_clip) beside ratio x the running requests' remaining output (clipped), the "
        "ratio falling each decode step from ratio_init to ratio_min; a decode step that runs out of KV "
        "retracts the requests with the fewest output tokens (the longest prompt first among equals) and "
        "re-estimates the ratio from the rest."),
    FLD("deployment.pools.*.scheduler.ratio_init", SIM_SCHEMA_F64, PL(scheduler.ratio_init), IN(0, 1),
        "admission ratio: the new-token ratio at start and after an idle spell (SGLang's init_new_token_ratio, "
        "0.7 x schedule_conservativeness)."),
    FLD("deployment.pools.*.scheduler.ratio_min", SIM_SCHEMA_F64, PL(scheduler.ratio_min), IN(0, 1),
        "admission ratio: the floor the ratio decays to (SGLang's min_new_token_ratio, ratio_init x 0.14 = "
        "0.098); at most ratio_init."),
    FLD("deployment.pools.*.scheduler.ratio_decay", SIM_SCHEMA_F64, PL(scheduler.ratio_decay), IN(0, 1),
        "admission ratio: what the ratio loses per decode step that needed no retraction (SGLang's "
        "new_token_ratio_decay, (init - min) / 600 = 0.001003)."),
    FLD("deployment.pools.*.scheduler.ratio_clip", SIM_SCHEMA_I32, PL(scheduler.ratio_clip), IN(1, 1000000000),
        "admission ratio: the most output tokens a request is counted for (SGLang's "
        "SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION, 4096)."),
    FLD("deployment.pools.*.scheduler.retract_steps", SIM_SCHEMA_I32, PL(scheduler.retract_steps),
        IN(0, 1000000),
        "admission ratio: after a retraction the ratio becomes (tokens the survivors generated + this x their "
        "number) / (their whole output + 1), at most 1 (SGLang's SGLANG_RETRACT_DECODE_STEPS, 20)."),
    FLD("deployment.pools.*.scheduler.overhead_per_seq_us", SIM_SCHEMA_F64,
        PL(scheduler.overhead_per_seq_us), GE0,
        "Extra overhead per scheduled request per iteration in microseconds (CPU-side "
        "per-request work; about 50 fits vLLM, 0 fits SGLang)."),
    FLD("deployment.pools.*.scheduler.eager_launch_us", SIM_SCHEMA_F64, PL(scheduler.eager_launch_us), GE0,
        "Host time per kernel launch, in microseconds, in iterations that carry a prefill chunk and so run "
        "without a CUDA graph (engines that capture graphs only for decode-only batches): such an "
        "iteration lasts at least launches x this. 0 = off (the GPU is never waiting for the host)."),
    FLD("deployment.pools.*.scheduler.eager_serial", SIM_SCHEMA_F64, PL(scheduler.eager_serial), IN(0, 1),
        "Fraction of the shorter of an eager iteration's host launch time (launches x eager_launch_us) and its "
     "GPU time that does not overlap the longer: 0 = the iteration lasts the longer of the two (the host runs "
     "ahead of the GPU), 1 = their sum (host-GPU synchronisations inside the forward serialise them)."),
    FLD("deployment.pools.*.scheduler.pd_handover_us", SIM_SCHEMA_F64, PL(scheduler.pd_handover_us), GE0,
        "Decode pool of a pd deployment: per-request time of the prefill-to-decode hand-over after the KV "
        "transfer, in microseconds (transfer-completion notification and polling, the decode side's admission "
        "of the arrived request): the request joins the decode batch this much later and both sides hold its "
        "KV meanwhile. 0 = none."),
    FLD("deployment.pools.*.scheduler.pd_handover_gbs", SIM_SCHEMA_F64, PL(scheduler.pd_handover_gbs), GE0,
        "Decode pool of a pd deployment: rate, in GB/s, at which the engine's KV path (per-page RDMA writes, "
        "NIXL/UCX or Mooncake transfer engine) moves one request's KV: a transfer lasts at least its bytes / "
        "this, however fast the network is. 0 = the network model's time alone."),
    FLD("deployment.pools.*.scheduler.preempt_keeps_kv", SIM_SCHEMA_BOOL, PL(scheduler.preempt_keeps_kv), ANY,
        "A preempted request's freed KV blocks stay in the engine's prefix cache (vLLM V1 and SGLang cache full "
        "blocks by default): they are reused by other requests only after the blocks freed before them, from "
        "the end of the sequence, and when the request is admitted again it recomputes only the part other "
        "allocations overwrote meanwhile. false = preemption recomputes the whole prompt and output so far."),
    FLD("deployment.pools.*.scheduler.async_scheduling", SIM_SCHEMA_BOOL, PL(scheduler.async_scheduling), ANY,
        "The engine's host prepares the next iteration while the GPU runs this one (vLLM's async scheduling, "
        "its default from 0.14): the per-request host work (overhead_per_seq_us) is hidden behind the "
        "iteration's device time and only what exceeds it lengthens the iteration; overhead_us stays in "
        "line. false = all host work adds to the device time (vLLM before 0.14)."),
    FLD("deployment.pools.*.scheduler.recv_interval", SIM_SCHEMA_I32, PL(scheduler.recv_interval), IN(0, 1000000),
        "Steps between the scheduler's polls for new requests (SGLang's --scheduler-recv-interval): a decode-only "
        "step counts 1, a step with a prefill the whole interval, so requests that arrive while the batch only "
        "decodes wait up to interval - 1 steps before they can be scheduled; an idle instance polls at once. "
        "0 or 1 = every step."),
    FLD("deployment.pools.*.scheduler.adp_timeout_iters", SIM_SCHEMA_I32, PL(scheduler.adp_timeout_iters),
        IN(0, 1000000),
        "Attention-DP balancing (TensorRT-LLM's attention_dp_config, enable_balance, timeout_iters), with "
        "parallel.dp > 1: each new request goes to the rank with the fewest requests, and new requests start "
        "their prefill only when every rank has one waiting, or this many steps have passed since the last "
        "ones started, or some rank has nothing running. 0 = off."),
    FLD("deployment.pools.*.scheduler.adp_wait_iters", SIM_SCHEMA_I32, PL(scheduler.adp_wait_iters),
        IN(0, 1000000),
        "Attention-DP balancing (batching_wait_iters): once every rank has a new request and every rank "
        "decodes, wait this many more steps to batch more of them. Needs adp_timeout_iters > 0."),
    FLD("deployment.pools.*.scheduler.batch_wait_iters", SIM_SCHEMA_I32, PL(scheduler.batch_wait_iters),
        IN(0, 1000000),
        "Batch waiting (TensorRT-LLM's batch_wait_timeout_iters), without attention DP: while requests decode, "
        "new requests start their prefill only when the step would schedule batch_wait_ratio x "
        "max_batched_tokens tokens (the decoding requests' and the whole prompts that fit) or this many steps "
        "have held them; with nothing decoding they start at once. 0 = no step limit (with batch_wait_ratio "
        "0 too: off)."),
    FLD("deployment.pools.*.scheduler.batch_wait_ratio", SIM_SCHEMA_F64, PL(scheduler.batch_wait_ratio),
        IN(0, 1),
        "Batch waiting (batch_wait_max_tokens_ratio): the fraction of max_batched_tokens a step must schedule "
        "before held requests start (see batch_wait_iters). 0 = no threshold."),
    ENM("deployment.pools.*.scheduler.cuda_graph_sizes", PL(scheduler.cuda_graph_sizes), sim_graph_rule_names, 0,
        "CUDA graphs of decode-only iterations: the batch sizes captured, as the named engine generates them "
        "(vllm: 1, 2, 4, multiples of 8 below 256, of 16 from 256; sglang: 1, 2, 4, 8, 12, multiples of 8 to "
        "256, of 16 to 496, of 32 from 512, and the largest; trtllm: 1, 2, 4, multiples of 8 to 128, steps of 64 "
        "above, and the largest). A decode-only batch runs as the smallest captured size >= its sequences per "
        "attention-DP rank, the extra rows dummy sequences of 1 token of context (their GEMM rows and attention, "
        "no per-request host work); a batch above cuda_graph_max_bs, or one with a prefill, runs unpadded. "
        "none = no padding. The presets set their engine's."),
    FLD("deployment.pools.*.scheduler.cuda_graph_max_bs", SIM_SCHEMA_I32, PL(scheduler.cuda_graph_max_bs),
        IN(0, 1048576),
        "Largest captured CUDA-graph batch per attention-DP rank (vLLM's max_cudagraph_capture_size, SGLang's "
        "--cuda-graph-max-bs, TensorRT-LLM's cuda_graph_config.max_batch_size); 0 = the engine's default: vllm "
        "min(2 x max_seqs, 512), sglang by GPU memory and TP (256 below 160 GiB at tp < 4, else 512), trtllm 128."),
    FLD("deployment.pools.*.scheduler.frontend_us", SIM_SCHEMA_F64, PL(scheduler.frontend_us), GE0,
        "Per-request time in the serving frontend before the engine sees a request, in microseconds "
        "(HTTP, API-server process hops, tokenisation, first-token streaming): it adds to TTFT and E2E "
        "but holds no GPU. 0 = none."),
    FLD("deployment.pools.*.scheduler.tokenizer_workers", SIM_SCHEMA_I32, PL(scheduler.tokenizer_workers),
        IN(0, 100000),
        "CPU workers of each instance's API server (0 = none). A request waits for a free worker (first come, "
        "first served), which spends api_us + tokenize_us_per_token x prompt tokens on it; then frontend_us "
        "(kept as it is, the engine presets' fitted value) and the engine's queue. The wait and the service "
        "show in the run's `frontend` figures and in fidelity --explain."),
    FLD("deployment.pools.*.scheduler.api_us", SIM_SCHEMA_F64, PL(scheduler.api_us), GE0,
        "With tokenizer_workers: a worker's fixed time per request (HTTP parsing, validation, the request "
        "object), in microseconds."),
    FLD("deployment.pools.*.scheduler.tokenize_us_per_token", SIM_SCHEMA_F64, PL(scheduler.tokenize_us_per_token),
        GE0, "With tokenizer_workers: a worker's time per prompt token (tokenisation), in microseconds."),
    FLD("deployment.pools.*.scheduler.detokenizer_workers", SIM_SCHEMA_I32, PL(scheduler.detokenizer_workers),
        IN(0, 100000),
        "CPU workers that detokenise and stream each instance's output (0 = none: tokens reach the client when "
        "sampled). Every iteration hands them one job per request that sampled tokens, costing "
        "detokenize_us_per_token + stream_us_per_token per token; the client sees a token when its job ends, so "
        "TTFT, TPOT and E2E include the wait when the workers are saturated; a closed-loop client or a session "
        "sends its next request when it has seen the last token. A separate pool from tokenizer_workers. Shows in the run's `detokenizer` figures."),
    FLD("deployment.pools.*.scheduler.detokenize_us_per_token", SIM_SCHEMA_F64,
        PL(scheduler.detokenize_us_per_token), GE0,
        "With detokenizer_workers: a worker's time per output token (detokenisation), in microseconds."),
    FLD("deployment.pools.*.scheduler.stream_us_per_token", SIM_SCHEMA_F64, PL(scheduler.stream_us_per_token), GE0,
        "With detokenizer_workers: a worker's time per output token to stream it (response framing, the send), "
        "in microseconds."),
    SEC("deployment.pools.*.scheduler.speculative",
        "Speculative decoding (off unless draft_tokens > 0): every decode step runs the draft for draft_tokens "
        "tokens per request, then one target pass verifies them beside the last sampled token (1 + draft_tokens "
        "tokens per request through the model, and KV for all of them), and keeps the accepted drafts plus one "
        "token of its own; the draft also runs once over every prefill chunk. Accepted drafts per step are drawn "
        "with the scenario's seed. Not modelled with pipeline parallelism or attention/FFN disaggregation. "
        "docs/cost-model.md, "
        "\"Speculative decoding\"."),
    FLD("deployment.pools.*.scheduler.speculative.draft_tokens", SIM_SCHEMA_I32, PL(scheduler.spec.draft_tokens),
        IN(0, SIM_SPEC_MAX_DRAFT),
        "Draft tokens k per request per step (TensorRT-LLM's num_nextn_predict_layers with MTP, vLLM's and "
        "SGLang's num_speculative_tokens / speculative_num_draft_tokens - 1). 0 = off."),
    ENM("deployment.pools.*.scheduler.speculative.method", PL(scheduler.spec.method), spec_methods, 0,
        "mtp: the model's multi-token-prediction module (DeepSeek-V3/R1's MTP layer, EAGLE-style heads) drafts: "
        "each draft token costs one pass of mtp_layers transformer layers of the model itself plus its LM head, "
        "priced by the same cost model; draft: a separate draft model (draft_model) drafts, each draft token one "
        "decode step of that model on the same GPUs and layout."),
    FLD("deployment.pools.*.scheduler.speculative.mtp_layers", SIM_SCHEMA_I32, PL(scheduler.spec.mtp_layers),
        IN(1, 8), "mtp: transformer layers in the MTP module (DeepSeek-V3/R1: 1; num_nextn_predict_layers)."),
    FLD("deployment.pools.*.scheduler.speculative.draft_model", SIM_SCHEMA_MODEL, PL(scheduler.spec.draft_model),
        ANY, "draft: the draft model, a catalogue name or a config path (.json/.yaml); its weights and KV share "
        "the GPUs' memory with the target's."),
    {"deployment.pools.*.scheduler.speculative.acceptance", SIM_SCHEMA_F64S, PL(scheduler.spec.acceptance),
     IN(0, 1), NULL, 0, 0,
     "Acceptance rate per draft position: the probability that draft token i is accepted given that the ones "
     "before it were (one number for every position, or a list of draft_tokens numbers). Expected tokens per "
     "step = 1 + a1 + a1*a2 + ... (= sum of a^i, i = 0..k, for one rate a). Required when draft_tokens > 0."},
    FLD("deployment.pools.*.scheduler.speculative.acceptance_concentration", SIM_SCHEMA_F64,
        PL(scheduler.spec.acceptance_concentration), GE0,
        "Spread of acceptance over requests: > 0 = each request draws its first-position rate from a Beta "
        "distribution with mean acceptance[0] and this concentration (alpha + beta), the later positions keeping "
        "their ratio to the first; 0 = every request has the given rates."),

    SEC("deployment.pools.*.autoscale",
        "Autoscaling (off unless enabled): every interval_s the pool's metric is sampled over its serving "
        "instances and a decision reads the samples of the window_s that ended lag_s ago; above up_threshold it "
        "starts step instances (each serving after its cold start: weight bytes per GPU / storage_gbs + "
        "startup_s), below down_threshold it drains one (no new requests; it leaves when empty), never outside "
        "min..max instances held and never within cooldown_s of its last decision. The pool's instances is the "
        "count it starts with. Colocated pools and the prefill and decode pools of pd; not af or pd+af. README, "
        "\"Autoscaling\"."),
    FLD("deployment.pools.*.autoscale.enabled", SIM_SCHEMA_BOOL, PL(autoscale.enabled), ANY,
        "Scale this pool's instance count with its metric."),
    FLD("deployment.pools.*.autoscale.min", SIM_SCHEMA_I32, PL(autoscale.min), IN(1, 100000),
        "Fewest instances held (starting, serving or draining); at most the pool's instances."),
    FLD("deployment.pools.*.autoscale.max", SIM_SCHEMA_I32, PL(autoscale.max), IN(0, 100000),
        "Most instances held, the fleet GPU-hours are compared with; at least the pool's instances (required "
        "when enabled; 0 = unset)."),
    ENM("deployment.pools.*.autoscale.metric", PL(autoscale.metric), sim_autoscale_metric_names, 0,
        "queue: requests waiting (not yet admitted; decode pools: also waiting for KV blocks) per serving "
        "instance, at each sample; concurrency: requests in the serving instances (waiting, running, waiting for "
        "KV) / their scheduler.max_seqs, at each sample (Knative's and KServe's concurrency target, as a share of "
        "the batch); utilization: share of the serving instances' time spent in iterations over "
        "each interval; kv: KV blocks used / KV blocks of the serving instances, at each sample; slo: share of "
        "the requests finished in each interval that met the SLO (slo.*: colocated pools every bound, prefill "
        "pools slo.ttft_ms, decode pools slo.tpot_ms). A window's value pools its samples (sum of numerators / "
        "sum of denominators)."),
    FLD("deployment.pools.*.autoscale.up_threshold", SIM_SCHEMA_F64, PL(autoscale.up_threshold), ANY,
        "Scale up when the window's value is above this (slo: below it). -1 = the metric's default: queue 4, "
        "concurrency 0.8, utilization 0.8, kv 0.8, slo 0.9."),
    FLD("deployment.pools.*.autoscale.down_threshold", SIM_SCHEMA_F64, PL(autoscale.down_threshold), ANY,
        "Scale down (drain one) when the window's value is below this (slo: at or above it). -1 = the metric's "
        "default: queue 0.5, concurrency 0.3, utilization 0.3, kv 0.3, slo 0.99."),
    FLD("deployment.pools.*.autoscale.step", SIM_SCHEMA_I32, PL(autoscale.step), IN(1, 100000),
        "Instances started by one scale-up decision (fewer when max is reached)."),
    FLD("deployment.pools.*.autoscale.interval_s", SIM_SCHEMA_F64, PL(autoscale.interval_s), GT0,
        "Seconds between samples of the metric and between decisions (15: Kubernetes' HPA sync period)."),
    FLD("deployment.pools.*.autoscale.window_s", SIM_SCHEMA_F64, PL(autoscale.window_s), GT0,
        "Seconds of samples one decision averages: those taken in (t - lag_s - window_s, t - lag_s]."),
    FLD("deployment.pools.*.autoscale.lag_s", SIM_SCHEMA_F64, PL(autoscale.lag_s), GE0,
        "Metrics pipeline delay in seconds: a decision at t sees no sample newer than t - lag_s (15: one "
        "Prometheus scrape interval)."),
    FLD("deployment.pools.*.autoscale.cooldown_s", SIM_SCHEMA_F64, PL(autoscale.cooldown_s), GE0,
        "Seconds after a scale-up or scale-down decision of this pool before its next one."),
    FLD("deployment.pools.*.autoscale.storage_gbs", SIM_SCHEMA_F64, PL(autoscale.storage_gbs), GT0,
        "GB/s at which each GPU of a starting instance loads its share of the weights from storage through the "
        "host (5: one NVMe Gen4 x4 drive's sustained sequential read, the narrowest link of storage -> host -> "
        "PCIe Gen5 x16; a network file system or object store is slower). Load time = the cost model's weight "
        "bytes per GPU / this."),
    FLD("deployment.pools.*.autoscale.startup_s", SIM_SCHEMA_F64, PL(autoscale.startup_s), GE0,
        "Seconds of engine start-up besides the weights (process and CUDA context, KV-cache profiling and "
        "allocation, CUDA-graph capture, compilation; 30 is an assumption of the order engines log, not a "
        "measurement: set it from your engine's start-up log)."),

    SEC("routing", "How requests are spread over instances."),
    ENM("routing.policy", SC(routing.policy), policies, 0, "Routing policy."),
    ENM("routing.preset", SC(routing.preset), presets, 0,
        "cache_aware: none (score = saved_ms - lambda*queue_ms), or the rule of sglang, dynamo or llmd."),
    FLD("routing.lambda", SIM_SCHEMA_F64, SC(routing.lambda), GE0,
        "cache_aware: weight of the expected queueing delay against the prefill time a cached prefix saves."),
    FLD("routing.cache_threshold", SIM_SCHEMA_F64, SC(routing.cache_threshold), IN(0, 1),
        "sglang: minimum matched fraction of the prompt to route by cache."),
    FLD("routing.balance_abs_threshold", SIM_SCHEMA_F64, SC(routing.balance_abs_threshold), GE0,
        "sglang: load gap (requests) above which the router balances instead."),
    FLD("routing.balance_rel_threshold", SIM_SCHEMA_F64, SC(routing.balance_rel_threshold), GE0,
        "sglang: load ratio above which the router balances instead."),
    FLD("routing.overlap_score_weight", SIM_SCHEMA_F64, SC(routing.overlap_score_weight), GE0,
        "dynamo: weight of the blocks to prefill against the active decode blocks."),
    FLD("routing.temperature", SIM_SCHEMA_F64, SC(routing.temperature), GE0,
        "dynamo: softmax sampling temperature (0 = pick the best)."),
    FLD("routing.w_prefix", SIM_SCHEMA_F64, SC(routing.w_prefix), GE0, "llmd: weight of the prefix-cache scorer."),
    FLD("routing.w_load", SIM_SCHEMA_F64, SC(routing.w_load), GE0, "llmd: weight of the queue scorer."),
    FLD("routing.w_kv", SIM_SCHEMA_F64, SC(routing.w_kv), GE0, "llmd: weight of the KV-utilisation scorer."),
    FLD("routing.snapshot_interval_s", SIM_SCHEMA_F64, SC(routing.snapshot_interval_s), GE0,
        "Every router (and pd's decode router) decides on instance load (queues, outstanding tokens, KV "
        "blocks, pending prefill) as of a snapshot refreshed this often (0 = live); the prefix match follows "
        "routing.view."),
    ENM("routing.view", SC(routing.view), sim_route_view_names, 0,
        "exact: the instances' real caches; approximate: the router's own index of what it routed."),
    FLD("routing.min_dwell_s", SIM_SCHEMA_F64, SC(routing.min_dwell_s), GE0,
        "Session stickiness: a session stays on its instance at least this long (0 = off)."),

    SEC("cache", "Prefix caching and KV sharing across instances."),
    FLD("cache.enabled", SIM_SCHEMA_BOOL, SC(cache.enabled), ANY, "Reuse the KV of cached prompt prefixes."),
    FLD("cache.block_tokens", SIM_SCHEMA_I32, SC(cache.block_tokens), IN(1, 65536),
        "Prefix-cache block in tokens (a multiple of the KV block); trace hash blocks map onto it."),
    ENM("cache.policy", SC(cache.policy), sim_cache_policy_names, 0, "Eviction of unreferenced blocks."),
    ENM("cache.sharing", SC(cache.sharing), sim_cache_sharing_names, 0,
        "none; pull (fetch a prefix another instance holds when faster than recomputing); pool (tiered)."),
    FLD("cache.host_gb", SIM_SCHEMA_F64, SC(cache.host_gb), GE0, "pool: host-DRAM tier per node in GB."),
    FLD("cache.host_gbps", SIM_SCHEMA_F64, SC(cache.host_gbps), GT0, "pool: host DRAM to GPU bandwidth, GB/s."),
    FLD("cache.pool_gb", SIM_SCHEMA_F64, SC(cache.pool_gb), GE0, "pool: remote pool capacity in GB."),
    FLD("cache.pool_gbps", SIM_SCHEMA_F64, SC(cache.pool_gbps), GT0,
        "pool: remote pool bandwidth per instance, GB/s."),

    SEC("network", "Links that move KV and activations (0 = from the GPU catalogue)."),
    FLD("network.nic_gbps", SIM_SCHEMA_F64, SC(network.nic_gbps), GE0, "Per-GPU NIC, Gb/s one way."),
    FLD("network.nvlink_gbs", SIM_SCHEMA_F64, SC(network.nvlink_gbs), GE0,
        "Per-GPU link to the other GPUs of its node, GB/s one way (0: NVLink behind an NVSwitch, else the "
        "catalogue's PCIe host_gbps)."),
    FLD("network.latency_us", SIM_SCHEMA_F64, SC(network.latency_us), GE0, "Latency of one transfer across nodes."),

    SEC("sweep", "Run the scenario once per value and print one comparison table."),
    FLD("sweep.key", SIM_SCHEMA_STR, SC(sweep.key), ANY, "Key path to vary (e.g. routing.lambda); empty = no sweep."),
    FLD("sweep.values", SIM_SCHEMA_STR, SC(sweep.values), ANY,
        "Comma-separated values, each applied like --set key=value."),

    SEC("slo", "Service-level objectives for goodput (0 = no bound)."),
    FLD("slo.ttft_ms", SIM_SCHEMA_F64, SC(slo.ttft_ms), GE0, "Time-to-first-token bound in ms."),
    FLD("slo.tpot_ms", SIM_SCHEMA_F64, SC(slo.tpot_ms), GE0, "Time-per-output-token bound in ms."),
    FLD("slo.e2e_ms", SIM_SCHEMA_F64, SC(slo.e2e_ms), GE0, "End-to-end latency bound in ms (arrival to last token)."),

    SEC("output", "Where results go."),
    FLD("output.db", SIM_SCHEMA_PATH, SC(output.db), ANY, "SQLite results database (\"\" = do not store); a relative path is relative to the working directory, not the scenario's folder."),
    FLD("output.store_requests", SIM_SCHEMA_BOOL, SC(output.store_requests), ANY,
        "Store one row per request in the database."),
    FLD("output.sample_interval_s", SIM_SCHEMA_F64, SC(output.sample_interval_s), GT0,
        "Per-instance time-series sampling period in s."),
    FLD("output.request_records", SIM_SCHEMA_I64, SC(output.request_records), GE0,
        "Finished requests kept as records (112 bytes each; the DB's per-request rows are these). Percentiles are "
        "exact while a run has at most this many; past it memory stops growing: counts, means, goodput and "
        "rates stay exact and percentiles come from a log-bucket sketch, within 0.05 % of the exact value "
        "(the output says so under `records`). 0 = no records, the sketch from the start. CLI: "
        "`--request-records N`."),
    FLD("output.sample_records", SIM_SCHEMA_I64, SC(output.sample_records), GE0,
        "Per-instance samples kept for the DB's time series (48 bytes each); later ones only enter the means."),

    SEC("overload", "Stop a run whose queues grow without bound."),
    FLD("overload.enabled", SIM_SCHEMA_BOOL, SC(overload.enabled), ANY, "Detect overload."),
    FLD("overload.max_queue_delay_s", SIM_SCHEMA_F64, SC(overload.max_queue_delay_s), GT0,
        "Overloaded when the oldest waiting request is older than this (s)."),
    FLD("overload.max_waiting", SIM_SCHEMA_I64, SC(overload.max_waiting), GE1,
        "Overloaded when more requests than this wait across the cluster."),

    SEC("energy", "Energy of the run from the GPU catalogue's power figures (README \"Energy\"); off by default."),
    FLD("energy.enabled", SIM_SCHEMA_BOOL, SC(energy.enabled), ANY,
        "Report joules, joules per output token, mean power (--json `energy`, the table, the results DB). "
        "search.objective energy turns it on."),
    FLD("energy.host_w_per_node", SIM_SCHEMA_F64, SC(energy.host_w_per_node), GE0,
        "Host power per node in W, charged for the whole run (0 = the GPU catalogue's power.host_w_per_gpu "
        "times hardware.gpus_per_node)."),

    SEC("search", "Deployment search space of `servesim search` (ignored by `run`). Lists are "
                  "comma-separated; an empty list means the default space for the model and GPU."),
    FLD("search.gpus", SIM_SCHEMA_STR, SC(search.gpus), ANY,
        "GPU catalogue names to compare (\"\" = hardware.gpu)."),
    FLD("search.prices", SIM_SCHEMA_STR, SC(search.prices), ANY,
        "USD per GPU-hour as gpu=price pairs (e.g. \"h100-sxm=2.5\"); enables cost per million tokens."),
    FLD("search.prefill_gpus", SIM_SCHEMA_STR, SC(search.prefill_gpus), ANY,
        "GPU types prefill pools may run on (\"\" = the candidate's search.gpus type): a heterogeneous fleet."),
    FLD("search.decode_gpus", SIM_SCHEMA_STR, SC(search.decode_gpus), ANY,
        "GPU types decode pools may run on (\"\" = the candidate's search.gpus type)."),
    FLD("search.attention_gpus", SIM_SCHEMA_STR, SC(search.attention_gpus), ANY,
        "GPU types attention pools (af, pd+af) may run on (\"\" = the candidate's search.gpus type)."),
    FLD("search.ffn_gpus", SIM_SCHEMA_STR, SC(search.ffn_gpus), ANY,
        "GPU types FFN pools (af, pd+af) may run on (\"\" = the candidate's search.gpus type)."),
    FLD("search.max_gpus", SIM_SCHEMA_I32, SC(search.max_gpus), IN(1, 100000), "GPU budget of one deployment."),
    FLD("search.modes", SIM_SCHEMA_STR, SC(search.modes), ANY,
        "Modes to try: colocated, pd, af, pd+af (\"\" = colocated,pd, plus af for MoE models)."),
    FLD("search.layouts", SIM_SCHEMA_STR, SC(search.layouts), ANY,
        "Instance layouts for every role, e.g. \"tp4,tp8,tp4pp2,tp1dp8ep8,tp8dcp2\" (tp pp dp ep dcp sp)."),
    FLD("search.prefill_layouts", SIM_SCHEMA_STR, SC(search.prefill_layouts), ANY,
        "Layouts of prefill pools (\"\" = search.layouts)."),
    FLD("search.decode_layouts", SIM_SCHEMA_STR, SC(search.decode_layouts), ANY,
        "Layouts of decode pools (\"\" = search.layouts)."),
    FLD("search.attention_layouts", SIM_SCHEMA_STR, SC(search.attention_layouts), ANY,
        "Layouts of attention pools (\"\" = search.layouts)."),
    FLD("search.ffn_layouts", SIM_SCHEMA_STR, SC(search.ffn_layouts), ANY,
        "Layouts of FFN pools (\"\" = expert-parallel defaults for MoE models)."),
    FLD("search.pd_ratios", SIM_SCHEMA_STR, SC(search.pd_ratios), ANY,
        "Prefill:decode instance ratios, e.g. \"1:1,1:3\" (\"\" = every split that fills the budget)."),
    FLD("search.af_ratios", SIM_SCHEMA_STR, SC(search.af_ratios), ANY,
        "Attention:FFN instance ratios (\"\" = every split that fills the budget)."),
    FLD("search.max_seqs", SIM_SCHEMA_STR, SC(search.max_seqs), ANY,
        "scheduler.max_seqs values to try (\"\" = 64,128,256,512)."),
    FLD("search.max_batched_tokens", SIM_SCHEMA_STR, SC(search.max_batched_tokens), ANY,
        "scheduler.max_batched_tokens values to try (\"\" = 8192,16384)."),
    FLD("search.chunk_tokens", SIM_SCHEMA_STR, SC(search.chunk_tokens), ANY,
        "scheduler.chunk_tokens values to try (\"\" = 2048)."),
    FLD("search.lambdas", SIM_SCHEMA_STR, SC(search.lambdas), ANY,
        "routing.lambda values to try (routing.policy cache_aware only)."),
    FLD("search.draft_tokens", SIM_SCHEMA_STR, SC(search.draft_tokens), ANY,
        "Speculative decoding as a search dimension: scheduler.speculative.draft_tokens values (0..8) to try in "
        "the pools that decode (colocated and decode; prefill pools keep their own), e.g. \"0,1,2,3\"; the method, "
        "acceptance and draft model come from the scenario's pool of the same role (deployment.pools.*.scheduler."
        "speculative, with draft_tokens 0 there if the scenario itself should not speculate). Values > 0 are not "
        "tried with modes af and pd+af or pipeline-parallel layouts (not modelled). \"\" = every candidate as the "
        "scenario's pool has it."),
    FLD("search.encode_instances", SIM_SCHEMA_STR, SC(search.encode_instances), ANY,
        "The encode pool as a search dimension (workload.images): deployment.encode.instances values to try, e.g. "
        "\"0,1,2,4\" (0 = each instance encodes its requests' images); the encoders run on deployment.encode.gpu, "
        "else on the GPU type of the candidate's first pool, count in search.max_gpus (the serving pools fill what "
        "is left), in per-GPU figures and at that GPU type's search.prices entry. \"\" = the scenario's "
        "deployment.encode.instances for every candidate (counted the same way)."),
    FLD("search.autoscale", SIM_SCHEMA_STR, SC(search.autoscale), ANY,
        "Autoscaling as a search dimension: \"off\" (fixed fleets), \"on\" (autoscaled fleets) or \"off,on\" "
        "(both, ranked together). An autoscaled candidate's pools scale by the policy of the scenario's pool of "
        "the same role (deployment.pools.*.autoscale with enabled true; at least one is needed for on): the "
        "candidate's instance count is its max, the scenario's min and starting instances carry over in GPUs "
        "(rounded up to whole instances, at least 1, at most the max). With autoscaling in the space every "
        "candidate runs the scenario's own arrivals (a schedule is allowed; no rate bisection; search.rate "
        "refused) with its requests and duration, and ranks by SLO-meeting output tokens per GPU held (GPU-hours "
        "over the run; prices per GPU-hour held). \"\" = off,on when a scenario pool autoscales, else off."),
    FLD("search.rate", SIM_SCHEMA_F64, SC(search.rate), GE0,
        "Evaluate every candidate at this arrival rate in req/s (0 = find the highest rate that meets the SLO)."),
    FLD("search.percentile", SIM_SCHEMA_F64, SC(search.percentile), IN(50, 99.9),
        "SLO percentile of TTFT and TPOT: 50, 90, 99 or 99.9."),
    FLD("search.requests", SIM_SCHEMA_I64, SC(search.requests), IN(10, 100000000),
        "Requests per simulation during the search (more instances get at least 40 each)."),
    FLD("search.tolerance", SIM_SCHEMA_F64, SC(search.tolerance), IN(0.001, 0.5),
        "Relative width of the rate bracket at which bisection stops."),
    FLD("search.top_k", SIM_SCHEMA_I32, SC(search.top_k), IN(1, 100),
        "Runners-up listed; pruning keeps this many exact."),
    FLD("search.threads", SIM_SCHEMA_I32, SC(search.threads), IN(0, 1024),
        "Worker threads per process (0 = one per core, shared among MPI ranks on a node)."),
    FLD("search.replications", SIM_SCHEMA_I32, SC(search.replications), IN(0, 10000),
        "0 = off; N >= 2: after the search, the best candidate of each of the top_k distinct deployments "
        "runs N more times with independent seeds at its rate, the ranking follows the mean objective, "
        "and candidates whose 95 % intervals overlap the leader's are reported as statistically "
        "indistinguishable."),
    FLD("search.prune", SIM_SCHEMA_BOOL, SC(search.prune), ANY,
        "Skip candidates whose analytic throughput bound cannot reach the top-k."),
    ENM("search.objective", SC(search.objective), sim_search_objective_names, 0,
        "goodput_per_gpu, cost (USD per million output tokens; needs prices), energy (fewest joules per "
        "output token at the highest SLO-meeting rate; turns energy.enabled on) or auto (cost when "
        "every GPU has a price)."),
    FLD("search.max_candidates", SIM_SCHEMA_I32, SC(search.max_candidates), IN(1, 10000000),
        "Refuse a search space larger than this."),
};

const sim_schema_field *sim_schema_table(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}

const sim_schema_field *sim_schema_lookup(const char *pattern)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].path, pattern) == 0) return &table[i];
    return NULL;
}

/* True when `path` is a direct child of `pattern`; *leaf gets its last key. */
static int is_child(const char *path, const char *pattern, const char **leaf)
{
    size_t pl = strlen(pattern);
    if (!*path) return 0;
    if (pl == 0) {
        *leaf = path;
        return strchr(path, '.') == NULL;
    }
    if (strncmp(path, pattern, pl) != 0 || path[pl] != '.') return 0;
    *leaf = path + pl + 1;
    return strchr(*leaf, '.') == NULL;
}

int sim_schema_children(const char *pattern, const char **names, int max)
{
    int n = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const char *leaf;
        if (is_child(table[i].path, pattern, &leaf) && n < max) names[n++] = leaf;
    }
    return n;
}

int sim_schema_edit_distance(const char *a, const char *b)
{
    /* Keys are short; anything long cannot be a typo of a key. */
    if (strlen(a) > 64 || strlen(b) > 64) return 1000;
    return sim_edit_distance(a, b, 0);
}

const char *sim_schema_suggest(const char *pattern, const char *key)
{
    const char *names[64];
    int n = sim_schema_children(pattern, names, 64);
    const char *best = NULL;
    int bestd = 1000;
    for (int i = 0; i < n; i++) {
        int d = sim_schema_edit_distance(key, names[i]);
        if (d < bestd) {
            bestd = d;
            best = names[i];
        }
    }
    /* Accept up to a third of the key's letters wrong (at least 2 edits). */
    size_t len = best ? strlen(best) : 0;
    if (best && (bestd <= 2 || (size_t)bestd * 3 <= len) && (size_t)bestd < len) return best;
    return NULL;
}

static int is_int_type(sim_schema_type t)
{
    return t == SIM_SCHEMA_I32 || t == SIM_SCHEMA_I64 || t == SIM_SCHEMA_U64;
}

void sim_schema_range(const sim_schema_field *f, char *buf, size_t size)
{
    buf[0] = '\0';
    if (f->type == SIM_SCHEMA_ENUM) {
        size_t used = 0;
        for (int i = 0; i < f->n_names && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? "|" : "", f->names[i]);
        return;
    }
    if (f->type == SIM_SCHEMA_LIST) {
        snprintf(buf, size, "%g..%g items", f->min, f->max);
        return;
    }
    unsigned fl = f->flags;
    if ((fl & SIM_SCHEMA_HAS_MIN) && (fl & SIM_SCHEMA_HAS_MAX)) {
        if (is_int_type(f->type))
            snprintf(buf, size, "%.0f..%.0f", f->min, f->max);
        else
            snprintf(buf, size, "%c%g, %g%c", (fl & SIM_SCHEMA_MIN_EXCL) ? '(' : '[', f->min, f->max,
                     (fl & SIM_SCHEMA_MAX_EXCL) ? ')' : ']');
    } else if (fl & SIM_SCHEMA_HAS_MIN) {
        snprintf(buf, size, "%s %g", (fl & SIM_SCHEMA_MIN_EXCL) ? ">" : ">=", f->min);
    } else if (fl & SIM_SCHEMA_HAS_MAX) {
        snprintf(buf, size, "%s %g", (fl & SIM_SCHEMA_MAX_EXCL) ? "<" : "<=", f->max);
    }
}

void sim_schema_expect(const sim_schema_field *f, char *buf, size_t size)
{
    char range[256];
    sim_schema_range(f, range, sizeof range);
    int both = (f->flags & SIM_SCHEMA_HAS_MIN) && (f->flags & SIM_SCHEMA_HAS_MAX);
    switch (f->type) {
    case SIM_SCHEMA_MAP: snprintf(buf, size, "a mapping"); break;
    case SIM_SCHEMA_LIST: snprintf(buf, size, "a list of %s", range); break;
    case SIM_SCHEMA_STR:
    case SIM_SCHEMA_PATH:
    case SIM_SCHEMA_MODEL: snprintf(buf, size, "a string"); break;
    case SIM_SCHEMA_BOOL: snprintf(buf, size, "true or false"); break;
    case SIM_SCHEMA_ENUM: snprintf(buf, size, "one of %s", range); break;
    case SIM_SCHEMA_I32:
    case SIM_SCHEMA_I64:
    case SIM_SCHEMA_U64:
    case SIM_SCHEMA_F64:
        snprintf(buf, size, "%s%s%s%s", is_int_type(f->type) ? "an integer" : "a number",
                 range[0] ? " " : "", range[0] && both ? "in " : "", range);
        break;
    case SIM_SCHEMA_F64S:
        snprintf(buf, size, "a number or a list of at most %d numbers%s%s%s", SIM_SPEC_MAX_DRAFT,
                 range[0] ? ", each " : "", range[0] && both ? "in " : "", range);
        break;
    }
}

const char *sim_schema_enum_name(const sim_schema_field *f, int value)
{
    int i = value - f->enum_base;
    if (f->type != SIM_SCHEMA_ENUM || i < 0 || i >= f->n_names) return NULL;
    return f->names[i];
}

int sim_schema_enum_value(const sim_schema_field *f, const char *name)
{
    if (f->type != SIM_SCHEMA_ENUM) return -1;
    for (int i = 0; i < f->n_names; i++)
        if (strcmp(name, f->names[i]) == 0) return f->enum_base + i;
    return -1;
}

void sim_schema_f64s_format(const void *p, char *buf, size_t size)
{
    sim_f64_list l;
    memcpy(&l, p, sizeof l);
    size_t n = 0;
    buf[0] = '\0';
    if (l.n == 1) {
        snprintf(buf, size, "%.10g", l.v[0]);
        return;
    }
    n += (size_t)snprintf(buf, size, "[");
    for (int32_t i = 0; i < l.n && i < SIM_SPEC_MAX_DRAFT && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%.10g", i ? ", " : "", l.v[i]);
    if (n < size) snprintf(buf + n, size - n, "]");
}

void sim_schema_default(const sim_schema_field *f, const sim_scenario *def, char *buf, size_t size)
{
    const char *base = f->in_pool == SIM_SCHEMA_IN_POOL    ? (const char *)&def->deployment.pools[0]
                       : f->in_pool == SIM_SCHEMA_IN_CLASS ? (const char *)&def->workload.classes[0]
                                                           : (const char *)def;
    const void *p = base + f->offset;
    int32_t i32;
    int64_t i64;
    uint64_t u64;
    double d;
    int e;
    switch (f->type) {
    case SIM_SCHEMA_MAP:
    case SIM_SCHEMA_LIST: buf[0] = '\0'; break;
    case SIM_SCHEMA_STR:
    case SIM_SCHEMA_PATH:
    case SIM_SCHEMA_MODEL: snprintf(buf, size, "\"%s\"", (const char *)p); break;
    case SIM_SCHEMA_I32: memcpy(&i32, p, sizeof i32); snprintf(buf, size, "%d", (int)i32); break;
    case SIM_SCHEMA_I64: memcpy(&i64, p, sizeof i64); snprintf(buf, size, "%lld", (long long)i64); break;
    case SIM_SCHEMA_U64:
        memcpy(&u64, p, sizeof u64);
        snprintf(buf, size, "%llu", (unsigned long long)u64);
        break;
    case SIM_SCHEMA_F64: memcpy(&d, p, sizeof d); snprintf(buf, size, "%.10g", d); break;
    case SIM_SCHEMA_F64S: sim_schema_f64s_format(p, buf, size); break;
    case SIM_SCHEMA_BOOL: memcpy(&i32, p, sizeof i32); snprintf(buf, size, "%s", i32 ? "true" : "false"); break;
    case SIM_SCHEMA_ENUM: {
        memcpy(&e, p, sizeof e);
        const char *name = sim_schema_enum_name(f, e);
        snprintf(buf, size, "%s", name ? name : "(not set)");
        break;
    }
    }
}
