/* model_resolve — turns a scenario's `model:` value into a model_spec.
 *
 * The one resolver behind model_catalog_model() (scenario loader, search,
 * predict, fidelity and `model show` all call that). In order:
 *   1. an existing path: a Hugging Face config.json (its ModelOpt
 *      `hf_quant_config.json` / `<stem>.hf_quant.json` beside it is read
 *      too) or a folder holding config.json;
 *   2. a catalogue name (models/archs/NAME.yaml, $SERVESIM_CATALOG);
 *   3. a Hugging Face id of the model zoo (model_zoo.h), case-insensitive,
 *      as `org/name`, `org--name[.json]` or a bare name unique in the zoo;
 *   4. a variant of a shipped id, resolved only through shipped data and
 *      said so in the model's notes: an instruction-tuned name ("-Instruct",
 *      "-Chat", "-it") or the "Meta-" prefix of Llama names resolve to the
 *      shipped base (same config.json); a quantised name ("-FP8", "-NVFP4",
 *      "-MXFP4", "-INT4", "-FP4") resolves to the shipped base's
 *      architecture with the quantisation (ModelOpt file, else
 *      quantization_config) of a shipped checkpoint of the same
 *      architecture (model_type), org and suffix when there is one
 *      (nvidia/DeepSeek-R1-NVFP4 takes nvidia/DeepSeek-V3.1-NVFP4's,
 *      Qwen/Qwen3-8B-FP8 Qwen/Qwen3-32B-FP8's), else
 *      with the suffix's format on every linear layer but embedding, LM
 *      head and routers.
 * Anything else fails with the nearest names (catalogue and zoo). A path
 * that does not exist but looks like one (ends in .json, starts with / or
 * ./) fails with "cannot open". Fills a caller-owned struct. */
#ifndef MODEL_RESOLVE_H
#define MODEL_RESOLVE_H

#include "model_catalog.h"

int model_resolve(const char *name, model_spec *out, sim_err *err);

/* The nearest known names to `name` (catalogue names and zoo ids; up to
 * max equally near ones), as "'a', 'b' or 'c'" into buf; empty when none
 * is close. */
void model_resolve_suggest(const char *name, int max, char *buf, size_t size);

#endif
