/* model_hf_quant — a checkpoint's weight formats from its Hugging Face
 * config.
 *
 * Reads `quantization_config` (quant_method fp8 with or without
 * `weight_block_size`, mxfp4 as gpt-oss ships it, compressed-tensors
 * config_groups — int4 group-wise, fp8, nvfp4 —, modelopt, awq/gptq) and a
 * ModelOpt hf_quant.json (`quantization.quant_algo`, `exclude_modules`,
 * per-module `quantized_layers` of MIXED_PRECISION checkpoints), which wins
 * when given. Each quantised format is assigned to the parts of the model
 * it covers — attention (including linear attention), dense MLPs, routed
 * experts, shared experts — in m->wdtype_*, minus the modules listed in
 * `ignore` / `modules_to_not_convert` / `exclude_modules` (exact names, `*`
 * globs and `re:` regexes are classified by the part they name; a part
 * excluded in at least half of its layers stays bf16, a smaller share is
 * noted). Embeddings, LM head, norms and routers stay bf16 as checkpoints
 * keep them. What could not be honoured is written to m->notes. The model's
 * layer counts must already be filled (model_hf fills them first). */
#ifndef MODEL_HF_QUANT_H
#define MODEL_HF_QUANT_H

#include "model_catalog.h"

#include <jansson.h>

/* qcfg: the config's quantization_config (or NULL); modelopt: the parsed
 * hf_quant.json root (or NULL). origin names the file in messages. */
int model_hf_quant_apply(json_t *qcfg, json_t *modelopt, const char *origin, model_spec *m, sim_err *err);

#endif
