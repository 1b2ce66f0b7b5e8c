/* model_cost — iteration latency of one serving instance.
 *
 * An instance is a model on a GPU type with a parallel layout and dtypes.
 * model_cost_create() precomputes everything that does not depend on the
 * batch (weight bytes per rank, per-token FLOPs, KV bytes per token,
 * collective costs), so model_cost_iteration() is a few dozen flops and can
 * run millions of times per simulation. A batch is described by aggregates,
 * never by a per-request list for decode: the number of decode requests and
 * the sum of their context lengths, plus the (bounded) list of prefill
 * chunks with their already-cached context. This module is the interface
 * the rest of servesim uses; the analytic roofline behind it is the
 * embedded default (each result says where its numbers came from). */
#ifndef MODEL_COST_H
#define MODEL_COST_H

#include "../sim/sim_err.h"
#include "model_catalog.h"

#include <stdint.h>

typedef enum {
    MODEL_DTYPE_BF16 = 0,
    MODEL_DTYPE_FP8 = 1
} model_dtype;

typedef struct {
    int32_t tp, pp;
    model_dtype dtype;       /* weights and activations */
    model_dtype kv_dtype;
    double overhead_s;       /* per-iteration framework overhead */
    int32_t gpus_per_node;
    double overhead_per_seq_s; /* added per scheduled request (prefill chunk or decode) per
                                * iteration: CPU-side input preparation and output
                                * processing that scales with the batch (vLLM ≈ 50 µs) */
} model_layout;

typedef struct {
    int32_t tokens;          /* new tokens computed in this iteration */
    int32_t cached;          /* tokens of the same request already in KV */
} model_chunk;

typedef struct {
    int32_t n_chunks;
    const model_chunk *chunks;
    int32_t n_decode;        /* decode requests, one new token each */
    int64_t decode_ctx_sum;  /* Σ context length (tokens in KV) over decode requests */
} model_batch;

typedef struct {
    double total_s;          /* iteration latency including overhead */
    double gemm_s, attn_s, comm_s, other_s, overhead_s;
    const char *source;      /* "roofline" or "db" */
} model_iter_cost;

typedef struct model_cost model_cost;

/* Validates the layout (divisibility, memory) and precomputes. */
int model_cost_create(const model_spec *m, const model_gpu *g, const model_layout *l,
                      model_cost **out, sim_err *err);
void model_cost_destroy(model_cost *c);

/* Iteration latency in seconds with its breakdown (out may be NULL). */
double model_cost_iteration(const model_cost *c, const model_batch *b, model_iter_cost *out);

/* KV-cache bytes one token occupies on the whole instance (all ranks). */
double model_cost_kv_bytes_per_token(const model_cost *c);

/* Weight bytes per GPU of the instance. */
double model_cost_weight_bytes_per_gpu(const model_cost *c);

/* Tokens of KV the instance can hold: (HBM·util − weights − reserve) per GPU,
 * summed over its GPUs, / KV bytes per token. Fails with SIM_ERANGE and the
 * reason when the weights do not fit. */
int model_cost_kv_capacity_tokens(const model_cost *c, double gpu_mem_util, double reserve_bytes,
                                  int64_t *tokens, sim_err *err);

int32_t model_cost_gpus(const model_cost *c); /* tp·pp */

#endif
