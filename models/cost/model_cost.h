/* model_cost — iteration latency of one serving instance.
 *
 * An instance is a model on a GPU type with a parallel layout and dtypes
 * (model_layout.h). model_cost_create() validates the layout (divisibility,
 * support) and precomputes everything that does not depend on the batch
 * (per-rank shapes, weight and KV bytes, expert placement), so
 * model_cost_iteration() costs a few dozen roofline evaluations and can run
 * millions of times per simulation. A batch is described by aggregates,
 * never by a per-request list for decode: the number of decode requests and
 * the sum of their context lengths, plus the (bounded) list of prefill
 * chunks with their already-cached context.
 *
 * The iteration is an op graph (docs/cost-model.md, "Ops of one iteration"): per layer norms, projections,
 * RoPE/KV write, attention, MLP or MoE (router, dispatch, grouped GEMMs,
 * combine, shared experts), quantisation and the layout's collectives; plus
 * embedding, LM head, logits gather, sampling and framework overhead.
 * model_cost_breakdown() lists those ops with FLOPs, bytes, time, bottleneck
 * and source; model_cost_iteration() runs the same evaluation without the
 * list, so both agree exactly. Each op's time comes from the perf-db when
 * one is attached (model_cost_set_db) and it has the op, else from the
 * roofline. Units: seconds, FLOPs, bytes. The handle owns its memory; an
 * attached perf-db stays the caller's. */
#ifndef MODEL_COST_H
#define MODEL_COST_H

#include "sim_err.h"
#include "model_catalog.h"
#include "model_layout.h"
#include "model_dtype.h"

#include <stdint.h>

typedef struct {
    int32_t tokens;          /* new tokens computed in this iteration */
    int32_t cached;          /* tokens of the same request already in KV */
} model_chunk;

typedef struct {
    int32_t n_chunks;
    const model_chunk *chunks;
    int32_t n_decode;        /* decode requests, one new token each */
    int64_t decode_ctx_sum;  /* Σ context length (tokens in KV) over decode requests */
    int32_t n_pad;           /* of n_decode, rows that pad a CUDA graph's batch (dummy sequences, their
                              * context in decode_ctx_sum): priced as decode rows, but no request's
                              * host work (overhead_per_seq_s) */
} model_batch;

typedef struct {
    double total_s;          /* iteration latency including overhead */
    double gemm_s, attn_s, comm_s, other_s, overhead_s;
    const char *source;      /* "roofline", "db" (some op from the perf-db) */
    /* Seconds the busiest rank's tensor/CUDA cores and its HBM would be
     * busy at the roofline's derated peaks: Σ over ops of flops / peak and
     * bytes / bandwidth (a collective's bytes count as HBM traffic), however
     * the op was priced. Divided by total_s they are the iteration's busy
     * fractions of compute and of memory bandwidth (the energy model's
     * input, sim_energy.h); they may exceed total_s where ops overlap. */
    double compute_busy_s, mem_busy_s;
} model_iter_cost;

typedef enum {
    MODEL_BOUND_COMPUTE = 0,
    MODEL_BOUND_MEMORY = 1,
    MODEL_BOUND_COMM = 2,
    MODEL_BOUND_LATENCY = 3, /* launch floor / fixed latency dominates */
    MODEL_BOUND_HOST = 4     /* CPU-side framework overhead */
} model_bound;

typedef enum {
    MODEL_SRC_ROOFLINE = 0,
    MODEL_SRC_DB = 1,        /* perf-db, measured or interpolated on its grid */
    MODEL_SRC_DB_FIT = 2,    /* perf-db series' fitted floor + rate model, off its grid */
    MODEL_SRC_OP_MODEL = 3   /* the op model fitted to the engine's measured kernels (model_op.h) */
} model_source;

typedef enum {
    MODEL_OPC_GEMM = 0,
    MODEL_OPC_ATTN = 1,
    MODEL_OPC_COMM = 2,
    MODEL_OPC_OTHER = 3,     /* elementwise, embedding, sampling, quantisation */
    MODEL_OPC_OVERHEAD = 4
} model_op_class;

/* One op of an iteration, summed over its `count` executions (layers,
 * micro-batches) on the busiest rank. time_s is what the op adds to the
 * iteration: hidden_s of its own duration overlapped with other work is
 * already taken off. */
typedef struct {
    char name[32];
    model_op_class cls;
    int32_t count;
    double flops, bytes;     /* on one rank (bytes: HBM traffic, or bytes sent for collectives) */
    double time_s, hidden_s;
    model_bound bound;
    model_source source;
    char detail[64];         /* shape or algorithm, e.g. "m=8 n=1280 k=5120", "ring nvlink n=4" */
    /* This op's share of model_iter_cost's compute_busy_s and mem_busy_s
     * (seconds at the derated peaks; the energy model's input per op, e.g.
     * for splitting an iteration between attention and FFN GPUs). */
    double compute_busy_s, mem_busy_s;
} model_op;

typedef struct model_cost model_cost;

/* Validates the layout (divisibility, memory) and precomputes. */
int model_cost_create(const model_spec *m, const model_gpu *g, const model_layout *l,
                      model_cost **out, sim_err *err);
void model_cost_destroy(model_cost *c);

/* Attaches a perf-db (calib/db/calib_db.h) whose rows for `gpu_name` (matched
 * as calib_db_gpu_find does) replace the roofline where they cover an op;
 * db NULL detaches. With gpu_name NULL the catalogue GPU's name is matched
 * against GPU-backend rows only; a name given explicitly matches any
 * backend. When the layout names an engine (op_backend vllm, sglang or
 * trtllm) that engine's rows price an op where it has some (calib_table.h).
 * The db must outlive c. */
struct calib_db;
int model_cost_set_db(model_cost *c, struct calib_db *db, const char *gpu_name, sim_err *err);
/* Attaches perf-db tables built elsewhere (calib/db/calib_table.h; shared,
 * read-only, must outlive c); NULL detaches. memo (may be NULL) caches
 * lookups: it is written while c is evaluated, so it must belong to the
 * one thread that evaluates c (and outlive it). */
struct calib_table;
struct calib_memo;
void model_cost_set_tables(model_cost *c, const struct calib_table *t, struct calib_memo *memo);
/* Attaches a memo of the GEMM descriptors' split-K picks
 * (model_gemm_split_memo.h; NULL detaches): the same prices, without the
 * search when a GEMM shape recurs. It is written while c is evaluated, so
 * it must belong to the one thread that evaluates c (and outlive it). */
struct model_gemm_split_memo;
void model_cost_set_split_memo(model_cost *c, struct model_gemm_split_memo *memo);
/* The dtypes c looks up in a perf-db (NULL-terminated, stored in out, at
 * most MODEL_COST_DB_DTYPES_MAX entries with the NULL). */
#define MODEL_COST_DB_DTYPES_MAX 12
const char *const *model_cost_db_dtypes(const model_cost *c, const char *out[MODEL_COST_DB_DTYPES_MAX]);

/* Prices DeepSeek's MLA attention block op by op even where the engine's
 * module rows or fitted module set would price it as one op (models/cost/
 * model_cost_mla.c): for comparing the two. Call before attaching perf-db
 * tables (it changes the dtypes c asks for). */
void model_cost_mla_module_off(model_cost *c);

/* Iteration latency in seconds with its breakdown (out may be NULL). */
double model_cost_iteration(const model_cost *c, const model_batch *b, model_iter_cost *out);

/* A speculative verify step: each decode request runs `width` tokens (the
 * last sampled one and width − 1 drafts). The linear layers, MoE and LM
 * head see n_decode·width rows; full, sliding and DSA decode attention
 * reads each request's KV once for its width positions, taken as width
 * times the query heads (FlashMLA's s_q·h_q, the generation kernels'
 * spec-decoding mode: width times the maths); the other mixers (linear
 * attention, Mamba, DeepSeek-V4's compressed attention) price each position
 * as a decode row of its own; the framework's per-request work counts each
 * request once. width <= 1 = model_cost_iteration. */
double model_cost_verify_iteration(const model_cost *c, const model_batch *b, int32_t width, model_iter_cost *out);

/* Same evaluation, also listing up to max ops into ops (*n_ops = the
 * number of ops, which may exceed max). Returns the same total. */
double model_cost_breakdown(const model_cost *c, const model_batch *b, model_op *ops, int32_t max,
                            int32_t *n_ops, model_iter_cost *out);

/* Pipeline parallelism: one batch's time stage by stage, for an instance
 * that keeps several batches in flight (sim_instance). stage_s[s] (pp
 * entries) is stage s's device time: its layers' share of the layer ops,
 * plus the embedding on the first stage and the final norm, LM head,
 * logits gather and sampling on the last, each stage held to its own host
 * launch floor when the batch runs eagerly; hop_s[s] (pp − 1 entries) is
 * the activation send from stage s to s + 1 over NVLink or the NIC, by
 * where the stages sit; *host_s the framework's host work before stage 0.
 * Any of the three may be NULL. Returns the batch's latency alone,
 * host + Σ stages + Σ hops, which is model_cost_iteration's. */
double model_cost_pipeline(const model_cost *c, const model_batch *b, double *stage_s, double *hop_s, double *host_s);
/* The same, also filling *out (may be NULL) as model_cost_iteration does. */
double model_cost_pipeline_cost(const model_cost *c, const model_batch *b, double *stage_s, double *hop_s,
                                double *host_s, model_iter_cost *out);

/* Steady state of a pipeline kept full of batches like b, in_flight of
 * them: the time between two batches leaving it, i.e. the busiest stage's
 * (or the host's) time, or a batch's whole latency over in_flight when
 * that is longer (too few batches to keep every stage busy: each stage
 * idles for the difference, the bubble). A decoding request gets a token
 * every in_flight intervals. *busiest_s (may be NULL) gets the busiest
 * stage's or the host's time. Without PP: the iteration latency (one
 * batch at a time). Returns −1 when out of memory. */
double model_cost_pipeline_interval(const model_cost *c, const model_batch *b, int32_t in_flight, double *busiest_s);

/* KV-cache bytes one token occupies on the whole instance (all ranks). */
double model_cost_kv_bytes_per_token(const model_cost *c);

/* How many attention-TP ranks of one DP rank hold the same KV bytes (≥ 1):
 * MLA's latent is on every TP rank, a GQA head on tp / kv_heads of them
 * when tp exceeds the KV heads, decode context parallelism (dcp) splits
 * such copies into distinct token shards. kv_bytes_per_token / this is the
 * distinct KV one token has on the instance. */
double model_cost_kv_copies(const model_cost *c);

/* Recurrent-state bytes one running sequence holds per GPU (Gated
 * DeltaNet layers; the heaviest stage's); 0 without linear layers. The
 * engine reserves it per scheduled sequence, apart from the KV blocks. */
double model_cost_state_bytes_per_seq(const model_cost *c);

/* Weight bytes per GPU of the instance (the heaviest stage's). */
double model_cost_weight_bytes_per_gpu(const model_cost *c);

/* Activation/workspace bytes per GPU the engine reserves for a forward
 * pass of `tokens` tokens (hidden states, the widest intermediate, logits). */
double model_cost_activation_bytes(const model_cost *c, int64_t tokens);

/* Bytes per GPU of the static per-expert buffers of DeepEP's low-latency
 * mode (0 when no iteration takes it): every local expert gets slots for
 * the most rows it can receive in one round, R = 128 tokens × ep ranks
 * (num_max_dispatch_tokens_per_rank of each sender), for the dispatch's
 * receive buffer (hidden values in the GEMM's activation format) and the
 * combine's send buffer (hidden bf16); with the masked grouped GEMM also
 * its gate_up output (2·I bf16) and activation output (I in the GEMM's
 * format). Allocated at start-up, so the KV pool does without them. */
double model_cost_expert_buffer_bytes(const model_cost *c);

/* Tokens of KV the instance can hold: (HBM·util − weights − expert buffers − reserve) per GPU,
 * over the tightest stage, / per-rank KV bytes per token, times the dp·sp
 * groups that hold distinct requests. Fails with SIM_ERANGE and the reason
 * when the weights do not fit. */
int model_cost_kv_capacity_tokens(const model_cost *c, double gpu_mem_util, double reserve_bytes,
                                  int64_t *tokens, sim_err *err);

int32_t model_cost_gpus(const model_cost *c); /* tp·pp·dp·sp */

/* The model, GPU and resolved layout the cost model was built for. */
const model_spec *model_cost_model(const model_cost *c);
const model_gpu *model_cost_gpu(const model_cost *c);
const model_layout *model_cost_layout(const model_cost *c);
/* The mode (model_ep_mode) that moves an iteration's tokens to their
 * experts' ranks and back, with (prefill = 1) or without prefill: DeepEP
 * normal or low_latency (ep_mode auto: low_latency for decode, normal for
 * prefill), NCCL alltoall or allgather; -1 when the layout moves no
 * tokens between expert ranks (tokens replicated over TP, or experts
 * TP-split, where they are all-gathered and reduce-scattered anyway). */
int model_cost_ep_mode(const model_cost *c, int prefill);

/* The vision tower's pass over `items` images or videos of grid g
 * (model_vision.h) on this instance's GPU type, its perf-db and its
 * engine's op model: the busiest of `ranks` GPUs encoding whole items
 * data-parallel (model_cost_vision.c lists the ops). Seconds; ops and
 * *n_ops as model_cost_breakdown (ops may be NULL), out as there (compute
 * and HBM busy seconds for the energy model). 0 for no items or a tower
 * that is not priced (the caller checks model_vision_check first). */
struct model_media_grid;
double model_cost_encode(const model_cost *c, const model_vision *v, const struct model_media_grid *g, int32_t items,
                         int32_t ranks, model_op *ops, int32_t max, int32_t *n_ops, model_iter_cost *out);

const char *model_bound_name(model_bound b);
const char *model_source_name(model_source s);
const char *model_op_class_name(model_op_class c);

#endif
