/* sim_af — attention/FFN disaggregation of the decode phase.
 *
 * Attention instances keep the KV cache and run attention (and embedding,
 * LM head, sampling); a pool of FFN instances runs the MLPs / experts for
 * all of them; activations cross the network twice per layer. With m
 * micro-batches in ping-pong, each resource (attention GPUs, the link each
 * way, FFN GPUs) is used m times per layer, so one layer of an iteration
 * costs max(m·max(a, c, f), a + 2c + f), where a, f and c are one
 * micro-batch's attention time, FFN time and one-way activation transfer
 * time: with m = 1 the serial sum, with enough micro-batches the largest
 * term. An iteration is that times the layer count plus the once-per-
 * iteration ops. The FFN side sees the tokens of n_attn/n_ffn attention
 * instances at once (the pool is shared evenly). Op times come from the
 * cost model's op breakdown, split by op name into the attention side and
 * the FFN side. Seconds, bytes, bytes/s. The object owns its statistics
 * only; the cost models belong to the caller. */
#ifndef SIM_AF_H
#define SIM_AF_H

#include "model_cost.h"
#include "sim_err.h"

#include <stdint.h>

typedef struct sim_af sim_af;

typedef struct {
    double a, f, c;          /* one micro-batch, one layer: attention, FFN, one-way transfer (s) */
    double once;             /* once-per-iteration ops (embedding, LM head, sampling, overhead) */
    double layer;            /* one layer with pipelining */
    double total;            /* the iteration */
    double bytes;            /* activation bytes moved in the iteration (both ways) */
    /* The energy model's busy seconds at the derated peaks (compute, HBM;
     * model_op.compute_busy_s, mem_busy_s) of a, of f and of the once-ops. */
    double a_compute, a_mem, f_compute, f_mem, once_compute, once_mem;
} sim_af_parts;

typedef struct {
    int64_t iterations;
    double time_s;           /* Σ iteration time */
    double attn_busy_s;      /* Σ attention-side compute */
    double ffn_busy_s;       /* Σ FFN-side compute (per FFN instance) */
    double comm_s;           /* Σ activation transfer time (both ways) */
    double bytes;            /* activation bytes moved */
    /* With sim_af_enable_energy: GPU-seconds at the full dynamic range of
     * the attention instances' GPUs and of the FFN pool's GPUs, each GPU's
     * per iteration capped at the iteration (sim_energy_busy_s). */
    double attn_energy_gpu_s, ffn_energy_gpu_s;
} sim_af_stats;

/* attn, ffn: cost models of an attention instance and an FFN instance;
 * link_Bps: per-GPU network bandwidth one way; latency_s per transfer. */
int sim_af_create(const model_cost *attn, const model_cost *ffn, int32_t n_attn, int32_t n_ffn,
                  int32_t micro_batches, double link_Bps, double latency_s, sim_af **out,
                  sim_err *err);
void sim_af_destroy(sim_af *af);

/* Accounts the iterations' energy busy time from now on, with each side's
 * GPU's share of the dynamic power at full HBM bandwidth (the catalogue's
 * power.mem_share, 0..1). An FFN instance serves n_attn / n_ffn attention
 * instances, so each attention iteration charges that share of one FFN
 * round to the FFN pool. */
void sim_af_enable_energy(sim_af *af, double attn_mem_share, double ffn_mem_share);

/* Iteration time of batch b on one attention instance (no statistics). */
double sim_af_parts_get(const sim_af *af, const model_batch *b, sim_af_parts *out);

/* Same, accumulating statistics: the instance's cost hook. */
double sim_af_iteration(void *af, const model_batch *b);

void sim_af_stats_get(const sim_af *af, sim_af_stats *out);

/* 1 if the op runs on the FFN side (MLP, experts, their collectives). */
int sim_af_op_is_ffn(const char *name);

#endif
