/* sim_launch_impl — internals shared by the launch writers (sim_launch.c:
 * shell scripts; sim_launch_k8s.c: Dynamo and llm-d YAML): the argument
 * list builder, the placement of instances on nodes, the Hugging Face
 * model names and the notes on what an engine cannot express. */
#ifndef SIM_LAUNCH_IMPL_H
#define SIM_LAUNCH_IMPL_H

#include "sim_launch.h"

#include <stddef.h>

#define LAUNCH_MAX_ARGS 96

/* An argument list: each entry literal (quoted as needed) or raw shell text
 * (written as is, e.g. "$MODEL" or $((PORT_BASE + 1))). */
typedef struct {
    const char *a[LAUNCH_MAX_ARGS];
    unsigned char raw[LAUNCH_MAX_ARGS];
    int n;
    char store[8192];
    size_t used;
    int overflow;
} launch_args;

void launch_arg(launch_args *A, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void launch_arg_raw(launch_args *A, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One engine instance placed on the cluster: GPUs first_gpu.. on `node`
 * (nodes > 1: it takes whole nodes node..node+nodes-1); slot numbers the
 * instances whose first node is `node`, for their ports. */
typedef struct {
    int pool, idx;
    int node, first_gpu, nodes, gpus, slot;
} launch_inst;

typedef struct {
    launch_inst *inst;
    int n, nodes, gpn;
} launch_plan;

/* GPUs one instance of pool p runs on in an engine: tp·pp·dp (the
 * simulator's prefill sequence-parallel ranks have no engine flag). */
int launch_pool_gpus(const sim_pool_cfg *p);
/* 1 when the pool is served by an engine process (every role but ffn). */
int launch_pool_served(const sim_pool_cfg *p);
int launch_plan_make(const sim_scenario *sc, launch_plan *pl, sim_err *err);
void launch_plan_free(launch_plan *pl);

const char *launch_hf_name(const char *model);
/* "prefill", "decode" or NULL (colocated / attention without PD). */
const char *launch_pd_role(const sim_scenario *sc, const sim_pool_cfg *p);
int launch_is_pd(const sim_scenario *sc);

/* vLLM engine flags of a pool (no --host/--port), shared by the script,
 * Dynamo's vLLM worker and llm-d's vLLM containers; opts leave out the TP
 * and DP sizes (llm-d's chart adds them from parallelism) or the KV
 * transfer config (Dynamo's worker sets its own). */
enum { LAUNCH_NO_TP_DP = 1, LAUNCH_NO_KV_TRANSFER = 2 };
void launch_vllm_engine_args(launch_args *A, const sim_scenario *sc, const sim_pool_cfg *p, int opts);

/* Notes that hold for every engine (attention/FFN, prefill SP, KV sharing,
 * mixed GPU types), each line starting "# NOTE: ". */
void launch_common_notes(FILE *f, const sim_scenario *sc);

#endif
