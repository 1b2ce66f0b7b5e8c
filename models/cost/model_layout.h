/* model_layout — how one serving instance spreads a model over its GPUs.
 *
 * tp splits every layer's heads and FFN columns; pp splits the layers into
 * stages with up to micro_batches batches in flight; dp replicates attention (each dp rank holds
 * 1/dp of the requests) while experts stay sharded; ep spreads the routed
 * experts over ep of the tp·dp ranks (each expert then split over
 * tp·dp/ep); dcp splits each request's KV by sequence over dcp of the tp
 * ranks (using the KV-head replicas TP leaves); sp adds ranks that split long
 * prefills by sequence (Ulysses all-to-all or Ring). An instance uses
 * tp·pp·dp·sp GPUs. Zero in dp/ep/dcp/sp means 1 and micro_batches 0 means
 * pp, so a layout written with designated initialisers for tp/pp alone is
 * the plain TP×PP layout. sim_pool_layout() (sim/cluster) fills one from a
 * scenario pool (dtype names, overheads, gpus_per_node). Units: seconds.
 * Plain data, caller-owned. */
#ifndef MODEL_LAYOUT_H
#define MODEL_LAYOUT_H

#include "sim_err.h"
#include "model_dtype.h"
#include "model_op_family.h"

#include <stdint.h>

/* The parts of an iteration a layout may price with another engine's
 * kernels than op_backend's (model_layout.kernels). */
typedef enum {
    MODEL_KERN_GEMM = 0,      /* dense GEMMs */
    MODEL_KERN_ATTENTION = 1, /* softmax attention: MHA/GQA, MLA and its module, DSA (linear attention
                               * stays op_backend's) */
    MODEL_KERN_MOE = 2,       /* the fused-MoE kernel */
    MODEL_KERN_COMM = 3,      /* the engine's own all-reduce */
    MODEL_KERN_PARTS = 4
} model_kern_part;

typedef enum {
    MODEL_SP_ULYSSES = 0, /* all-to-all turns sequence shards into head shards */
    MODEL_SP_RING = 1     /* KV blocks passed around the ring */
} model_sp_kind;

typedef enum {
    MODEL_EP_AUTO = 0,        /* DeepEP: low_latency for decode-only iterations, normal with prefill */
    MODEL_EP_NORMAL = 1,      /* DeepEP normal: bandwidth-bound, per-node dedup */
    MODEL_EP_LOW_LATENCY = 2, /* DeepEP low-latency: RDMA direct, latency floor */
    MODEL_EP_ALLTOALL = 3,    /* NCCL all-to-all of every (token, expert) pair, packed by
                               * destination rank before and un-permuted after */
    MODEL_EP_ALLGATHER = 4    /* NCCL all-gather of every rank's tokens, reduce-scatter of
                               * the partial outputs (each rank runs its experts on all) */
} model_ep_mode;
#define MODEL_EP_MODES 5

typedef enum {
    MODEL_MOE_GEMM_AUTO = 0,       /* masked after low-latency dispatch, contiguous otherwise */
    MODEL_MOE_GEMM_CONTIGUOUS = 1, /* tokens gathered per expert, full tiles */
    MODEL_MOE_GEMM_MASKED = 2      /* fixed slots per expert, partly empty tiles */
} model_moe_gemm;

typedef struct {
    int32_t tp, pp;
    model_dtype dtype;       /* weights and activations */
    model_dtype kv_dtype;
    double overhead_s;       /* per-iteration framework overhead */
    int32_t gpus_per_node;   /* 0 = 8 */
    double overhead_per_seq_s; /* added per scheduled request (prefill chunk or decode) per
                                * iteration: CPU-side input preparation and output
                                * processing that scales with the batch (vLLM ≈ 50 µs) */
    int32_t host_overlap;    /* 1: the per-request host work (overhead_per_seq_s) overlaps the
                              * iteration's device time, only the excess adds (vLLM's async
                              * scheduling); 0: it adds in full */
    double eager_launch_s;   /* host time per kernel launch in iterations with a prefill
                              * chunk (no CUDA graph): such an iteration lasts at least
                              * launches × this (0 = off) */
    /* Appended with the full layout model (0 = default). */
    int32_t dp, ep, dcp, sp;
    model_sp_kind sp_kind;
    int32_t tp_sp;           /* TP with reduce-scatter + all-gather, norms on 1/tp tokens */
    int32_t comm_fp8;        /* collectives carry fp8 (half the bytes, plus quantisation) */
    int32_t comm_overlap;    /* collectives hidden behind the next GEMM up to its duration */
    int32_t ar_norm_fusion;  /* tp > 1, ep 1: every all-reduce carries the next residual add + RMSNorm */
    int32_t micro_batches;   /* PP: batches in flight in the instance (0 = pp) */
    model_ep_mode ep_mode;
    model_moe_gemm moe_gemm;
    double expert_skew;      /* Zipf exponent of the token load over experts (0 = uniform) */
    char op_backend[16];     /* engine whose measured kernels price the ops (model_op.h):
                              * trtllm | vllm | sglang | auto (the set fitted on most rows);
                              * "" = the roofline */
    int32_t moe_tp;          /* expert TP (0 = tp·dp/ep); tp·dp/(moe_tp·ep) expert-group replicas */
    int32_t dtype_checkpoint; /* 1: each part's weights in the checkpoint's format (model_spec
                               * wdtype_*; scenario dtype "auto"), dtype then names the main one */
    double op_speedup[MODEL_FAM_COUNT]; /* each op family's time divided by this (model_op_family.h;
                                         * 0 = 1: as priced) */
    double eager_serial;     /* fraction of the shorter of an eager iteration's host launch time
                              * (eager_launch_s x launches) and device time that does not overlap
                              * the longer: 0 = the longer of the two (the host runs ahead of the
                              * GPU), 1 = their sum (host-GPU synchronisations inside the forward) */
    int32_t pad_one_token;   /* 1: a CUDA graph's padding rows (model_batch.n_pad) are one dummy request
                              * repeated (TensorRT-LLM), so they route to one token's top-k experts;
                              * 0: each routes as a token of its own (vLLM's and SGLang's padded
                              * input buffers hold stale tokens) */
    char kernels[MODEL_KERN_PARTS][16]; /* per part, the engine whose kernels price it, where a
                                         * recipe runs another engine's ("" = op_backend's) */
} model_layout;

/* The engine whose measured kernels price part p: l->kernels[p], else
 * l->op_backend ("" = the roofline, "auto" = the set fitted on most rows). */
static inline const char *model_layout_kernels(const model_layout *l, model_kern_part p)
{
    return l->op_backend[0] && l->kernels[p][0] ? l->kernels[p] : l->op_backend;
}


/* Copy of l with the zero defaults resolved (dp/ep/dcp/sp 1, micro_batches
 * pp, gpus_per_node 8, moe_tp tp·dp/ep when ep divides tp·dp, op_speedup 1). */
model_layout model_layout_resolved(const model_layout *l);

/* GPUs of one instance: tp·pp·dp·sp. */
int32_t model_layout_gpus(const model_layout *l);

const char *model_sp_kind_name(model_sp_kind k);
const char *model_ep_mode_name(model_ep_mode m);
const char *model_moe_gemm_name(model_moe_gemm g);

#endif
