/* sim_pool_layout — a pool's parallel and scheduler config (and the
 * scenario's dtypes and gpus_per_node) as the cost model's model_layout.
 * Checks every degree and name and returns SIM_EINVAL with the key path on
 * bad input; never allocates. */
#ifndef SIM_POOL_LAYOUT_H
#define SIM_POOL_LAYOUT_H

#include "model_layout.h"
#include "sim_err.h"
#include "sim_scenario.h"

/* Fills *out from the scenario (dtype — "auto" or empty: the checkpoint's
 * formats —, kv_dtype, hardware.gpus_per_node)
 * and one of its pools (parallel.*, scheduler.overhead_us and
 * overhead_per_seq_us). Checks names and ranges; whether the layout fits
 * the model is model_cost_create's job. */
int sim_pool_layout(const sim_scenario *sc, const sim_pool_cfg *pool, model_layout *out, sim_err *err);

#endif
