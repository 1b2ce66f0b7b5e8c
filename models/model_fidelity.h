/* model_fidelity — replays measured deployments through the simulator.
 *
 * Reads a CSV of measured serving runs (ai-dynamo/aiconfigurator's
 * silicon samples: concurrency, backend, model_path, system, precision,
 * isl, osl, tp/pp/attention_dp/moe_ep sizes, silicon_ttft_ms,
 * silicon_tpot_ms; Apache-2.0), turns every row into a closed-loop
 * scenario (catalogue model and GPU, dtype from the checkpoint and
 * precision, layout from the row, per-backend scheduler profile), runs it
 * through sim_cluster and compares mean TTFT and TPOT with the measured
 * ones. model_fidelity_run() is the library part (no printing; the caller
 * frees the result with model_fidelity_free); model_cli_fidelity() is the
 * `servesim fidelity` command. Units: milliseconds, percent. */
#ifndef MODEL_FIDELITY_H
#define MODEL_FIDELITY_H

#include "../sim/sim_err.h"

#include <stdint.h>

typedef struct {
    char backend[16], model[64], dtype[16];
    int32_t concurrency, isl, osl, tp, pp, dp, ep;
    double meas_ttft_ms, meas_tpot_ms;
    double pred_ttft_ms, pred_tpot_ms;
    int ok;                     /* 0: the row could not be simulated (reason in note) */
    char note[160];
} model_fidelity_row;

typedef struct {
    char backend[16];
    int32_t n;
    double ttft_mape, tpot_mape; /* percent */
} model_fidelity_group;

typedef struct {
    model_fidelity_row *rows;
    int32_t n_rows, n_ok;
    model_fidelity_group all;
    model_fidelity_group backends[8];
    int32_t n_backends;
    double wall_s;
} model_fidelity_result;

typedef struct {
    int steady;               /* leave each row's first wave of requests out of the means */
    const char *const *sets;  /* scenario overrides for every row ("key=value"), or for one
                               * backend's rows ("vllm:key=value") */
    int n_sets;
} model_fidelity_opts;

/* Replays every row of the CSV at path (opts may be NULL). Overrides that
 * do not load fail the whole run before any row, with the loader's message. */
int model_fidelity_run(const char *csv_path, const model_fidelity_opts *opts, model_fidelity_result *out,
                       sim_err *err);
void model_fidelity_free(model_fidelity_result *r);

/* `servesim fidelity [--csv PATH] [--steady-state] [--set [BACKEND:]KEY=VALUE]... [--json]`;
 * argv[0] = "fidelity". Prints;
 * returns the exit code (0 ok, 1 no row could be simulated, 2 usage or input error). */
int model_cli_fidelity(int argc, char **argv);

#endif
