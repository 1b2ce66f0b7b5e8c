/* model_spec — derived quantities and validation of a model architecture.
 *
 * Both catalogue loaders (YAML and Hugging Face config.json) fill the raw
 * architecture fields of a model_spec and then call model_spec_derive(),
 * which checks them for consistency, fills defaults (head_dim, moe_layers,
 * sliding_layers) and computes params and active_params. Units: parameter
 * counts (not bytes). Plain functions on caller-owned structs; no heap. */
#ifndef MODEL_SPEC_H
#define MODEL_SPEC_H

#include "model_catalog.h"

/* Per-layer parameter counts of the pieces the cost model needs. */
typedef struct {
    double attn;          /* all attention projections of one layer */
    double attn_replicated; /* part not split by TP (MLA down-projections) */
    double norms;         /* RMSNorm weights of one layer */
    double dense_ffn;     /* gate+up+down of a dense layer */
    double expert;        /* gate+up+down of one routed expert */
    double shared;        /* all shared experts of one MoE layer */
    double router;        /* router weights of one MoE layer */
    double embed;         /* embedding table */
    double lm_head;       /* 0 when tied to the embedding */
} model_spec_parts;

/* Validates m and fills head_dim/moe_layers/sliding_layers defaults and
 * params/active_params. origin names the source (file) for messages. */
int model_spec_derive(model_spec *m, const char *origin, sim_err *err);

/* Parameter counts of the pieces of m (m must have been derived). */
void model_spec_parts_get(const model_spec *m, model_spec_parts *out);

#endif
