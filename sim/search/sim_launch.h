/* sim_launch — launch files for one deployment (a scenario's `deployment`,
 * `routing`, `cache` and scheduler settings, typically the one a search
 * recommends): a runnable POSIX shell script per serving engine (vLLM,
 * SGLang, TensorRT-LLM) that starts every instance in the background with
 * its GPUs (CUDA_VISIBLE_DEVICES) and ports on its node, waits for their
 * /health, starts the engine's router or PD proxy, and stops everything it
 * started on exit or Ctrl-C; a Dynamo `DynamoGraphDeployment`
 * (nvidia.com/v1beta1) and llm-d-modelservice Helm values for Kubernetes.
 * What the simulation assumed and an engine cannot express is written into
 * the file as a NOTE line (and, for a layout an engine cannot launch, the
 * script refuses to run with that reason).
 *
 * The flags and keys written come from one table (sim_launch_flags.c), each
 * program's entry with the engine version its names were checked against;
 * sim_launch_flag_known() lets tests check a generated file against it.
 *
 * Library code: writers return 0, or SIM_EIO when the stream failed, with a
 * message in err; they never exit. The scenario is read only. */
#ifndef SIM_LAUNCH_H
#define SIM_LAUNCH_H

#include "sim_err.h"
#include "sim_scenario.h"

#include <stdio.h>

typedef enum {
    SIM_LAUNCH_VLLM = 0,
    SIM_LAUNCH_SGLANG = 1,
    SIM_LAUNCH_TRTLLM = 2,
    SIM_LAUNCH_DYNAMO = 3,   /* DynamoGraphDeployment YAML (vLLM workers) */
    SIM_LAUNCH_LLMD = 4,     /* llm-d-modelservice Helm values (vLLM) */
    SIM_LAUNCH_KINDS = 5
} sim_launch_kind;

/* File name of a kind: launch-vllm.sh, launch-sglang.sh, launch-trtllm.sh,
 * dynamo.yaml, llm-d-values.yaml. */
const char *sim_launch_file_name(sim_launch_kind k);

/* Writes the file of kind k for the deployment of sc; label (may be NULL)
 * names it in the header comment. */
int sim_launch_write(sim_launch_kind k, const sim_scenario *sc, const char *label, FILE *f, sim_err *err);

/* ---- the known-flag table (sim_launch_flags.c) ---------------------------- */

/* Programs whose flags the writers use, as they appear in a generated file:
 * "vllm serve", "toy_proxy_server.py", "sglang.launch_server",
 * "sglang_router.launch_router", "trtllm-serve", "dynamo.frontend",
 * "dynamo.vllm", and the YAML files "trtllm config" (LLM API options) and
 * "trtllm disagg config" (trtllm-serve disaggregated -c). */
typedef struct {
    const char *program;
    const char *version;              /* engine release the names were checked against */
    const char *const *flags;         /* NULL-terminated: "--flag" or a top-level YAML key */
} sim_launch_flagset;

/* The table: n entries. */
const sim_launch_flagset *sim_launch_flagsets(int *n);

/* 1 when flag (e.g. "--max-num-seqs", or a YAML key) is in program's set,
 * 0 when not, -1 when the program is not in the table. */
int sim_launch_flag_known(const char *program, const char *flag);

/* The version string of program's entry ("" when unknown). */
const char *sim_launch_flag_version(const char *program);

#endif
