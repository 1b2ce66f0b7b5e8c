/* model_hf_blocks — per-layer block kinds of hybrid Hugging Face configs.
 *
 * Reads the keys that give each layer its own kind: Nemotron-H's
 * `hybrid_override_pattern` (M Mamba-2, * attention, - MLP, E MoE, one
 * block each) or `layers_block_type`, with the Mamba-2 sizes
 * (mamba_num_heads, mamba_head_dim, n_groups, ssm_state_size, conv_kernel,
 * mamba_ssm_cache_dtype) and relu² MLPs; Nemotron-NAS's `block_configs`
 * (per layer: attention with n_heads_in_group or skipped, FFN with ffn_mult
 * or skipped); Kimi's `linear_attn_config` (Kimi Delta Attention layers
 * beside MLA layers). Fills model_spec's layer lists and counts (model_spec
 * derives the rest). What servesim cannot express (NAS blocks replaced by a
 * linear layer, per-layer windows or KV heads) fails with SIM_ENOTSUP and
 * the key path. Plain functions on caller-owned structs. */
#ifndef MODEL_HF_BLOCKS_H
#define MODEL_HF_BLOCKS_H

#include "model_catalog.h"

#include <jansson.h>

typedef struct {
    int ffn_listed;     /* the FFN kind of every layer was listed too */
    int32_t moe_layers; /* MoE blocks among them */
} model_hf_blocks_info;

/* 1 when root lists per-layer kinds (m filled), 0 when it does not, < 0
 * on an error. m->layers may be 0 on entry (Nemotron-H configs without
 * num_hidden_layers): it becomes the list's length. */
int model_hf_blocks(json_t *root, const char *origin, model_spec *m, model_hf_blocks_info *info, sim_err *err);

/* Lists each layer's FFN from is_moe (one flag per layer), for configs
 * that list only their mixers (Kimi). */
void model_hf_blocks_ffn(model_spec *m, const uint8_t *is_moe);

#endif
