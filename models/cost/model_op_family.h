/* model_op_family — the op families whose price can be scaled one at a
 * time (`hardware.op_speedup.<family>`, `servesim sensitivity --op`): what
 * a kernel engineer's faster kernel changes in the cost model.
 *
 *   gemm            dense GEMMs: projections, dense MLP, router, shared experts, LM head
 *   moe             the routed experts: grouped GEMMs or the fused-MoE op (perf-db or op model)
 *   attention       attention kernels (context and generation, MLA, DSA modules)
 *   all_reduce      all-reduce collectives (TP reduce, embedding reduce)
 *   all_gather      all-gather collectives (TP-SP gather, logits gather, DCP, MoE gather)
 *   reduce_scatter  reduce-scatter collectives
 *   all_to_all      all-to-all: DeepEP dispatch/combine, Ulysses sequence parallelism
 *   send_recv       point to point: pipeline-stage sends, ring sequence parallelism
 *   other           everything else a GPU runs: norms, activations, RoPE/KV writes,
 *                   quantisation, embedding, sampling, MoE permutes
 * The framework's host time (scheduling, eager launches) is no family: it
 * is set by scheduler.overhead_us and friends. A speedup s divides the
 * time of every op of its family by s (after the perf-db, op model or
 * roofline priced it; overlap budgets are unchanged). Pure functions. */
#ifndef MODEL_OP_FAMILY_H
#define MODEL_OP_FAMILY_H

typedef enum {
    MODEL_FAM_GEMM = 0,
    MODEL_FAM_MOE,
    MODEL_FAM_ATTENTION,
    MODEL_FAM_ALL_REDUCE,
    MODEL_FAM_ALL_GATHER,
    MODEL_FAM_REDUCE_SCATTER,
    MODEL_FAM_ALL_TO_ALL,
    MODEL_FAM_SEND_RECV,
    MODEL_FAM_OTHER,
    MODEL_FAM_COUNT
} model_op_family;

/* "gemm", "moe", "attention", "all_reduce", ...; "?" out of range. */
const char *model_op_family_name(model_op_family f);
/* The family named s (case-insensitive; '-' matches '_', so "all-reduce"
 * works), or -1. */
int model_op_family_from_name(const char *s);
/* Every family name, comma-separated ("gemm, moe, ..."), for messages. */
const char *model_op_family_list(void);

#endif
