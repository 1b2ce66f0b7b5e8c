/* model_hf — loads a model architecture from a Hugging Face config.json.
 *
 * Reads the keys of Llama/Mistral/Qwen2/Qwen3 (dense), Mixtral, Qwen2/3-MoE,
 * DeepSeek-V2/V3 (MLA + shared experts), DeepSeek-V4 (compressed attention,
 * grouped low-rank O, hyper-connections, hash-routed MoE) and gpt-oss configs with jansson,
 * choosing by the keys present rather than by model_type so close relatives
 * load too, then derives params via model_spec_derive(). The model name is
 * the folder holding config.json, or the file's stem for other names.
 * model_hf_load also reads the ModelOpt quantisation file beside the config
 * (hf_quant_config.json beside config.json, <stem>.hf_quant.json beside
 * <stem>.json). The checkpoint's quantisation sets the weight formats
 * (model_hf_quant.h); what is left out (MTP layers) is noted; a vision tower is read by model_vision.h
 * in the model's notes. Errors name the file and the key. Fills a
 * caller-owned struct. */
#ifndef MODEL_HF_H
#define MODEL_HF_H

#include "model_catalog.h"

int model_hf_load(const char *path, model_spec *out, sim_err *err);

/* Same, from JSON text already in memory; origin names it in messages. */
int model_hf_parse(const char *text, const char *origin, model_spec *out, sim_err *err);

/* Same, with the text of a ModelOpt hf_quant.json (NULL = none), which
 * gives the checkpoint's weight formats (model_hf_quant.h). */
int model_hf_parse_quant(const char *text, const char *quant_text, const char *origin, model_spec *out,
                         sim_err *err);

#endif
