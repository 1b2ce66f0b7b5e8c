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

#include <stdarg.h>

/* Per-layer parameter counts of the pieces the cost model needs. */
typedef struct {
    double attn;          /* all attention projections of one layer */
    double attn_replicated; /* part not split by TP (MLA down-projections) */
    double linear;        /* all Gated DeltaNet (or KDA) projections, conv and gates of one linear layer */
    double mamba;         /* all Mamba-2 projections, conv, gates and norm of one SSM layer */
    double latent;        /* latent MoE: the hidden->latent and latent->hidden projections of one MoE layer */
    double indexer;       /* DSA lightning indexer of one layer (inside attn) */
    double norms;         /* RMSNorm weights of one layer */
    double dense_ffn;     /* gate+up+down of a dense layer */
    double expert;        /* gate+up+down of one routed expert */
    double shared;        /* all shared experts of one MoE layer */
    double router;        /* router weights of one MoE layer */
    double embed;         /* embedding table */
    double lm_head;       /* 0 when tied to the embedding */
    /* DeepSeek-V4 (comp_attn): attn is what every attention layer has (q
     * low-rank pair, the shared K=V projection, grouped O, sinks); a
     * compressed layer adds its compressor (csa: with the indexer, which
     * `indexer` also gives; hca: without). hc: the two hyper-connection
     * mappings of one layer (kept with the norms, in fp32 in checkpoints);
     * hc_head: the final one before the LM head. */
    double comp_csa, comp_hca, hc, hc_head;
} model_spec_parts;

/* Validates m and fills head_dim/moe_layers/sliding_layers defaults and
 * params/active_params. origin names the source (file) for messages. */
int model_spec_derive(model_spec *m, const char *origin, sim_err *err);

/* Appends a note ("; "-separated) to m->notes, truncating at its size. */
void model_spec_note(model_spec *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parameter counts of the pieces of m (m must have been derived). */
void model_spec_parts_get(const model_spec *m, model_spec_parts *out);

/* Layer kinds. Each block has a token mixer (attention, linear attention,
 * Mamba-2, or none) and an FFN (dense, MoE, or none). Attention layers =
 * layers − linear − Mamba − mixer-less, of which sliding_layers use the
 * window. A config that lists its kinds per layer (Nemotron-H's pattern,
 * NAS's block_configs) fills layer_mixer/layer_ffn; otherwise the counts
 * are placed evenly: the attention layers at the end of even groups
 * (Qwen3.5: every full_attention_interval-th layer attends), the other
 * mixers sharing the rest, FFN-less blocks spread evenly and the MoE FFNs
 * after the first-k dense ones. */
model_mixer_kind model_spec_layer_mixer(const model_spec *m, int32_t i);
model_ffn_kind model_spec_layer_ffn(const model_spec *m, int32_t i);
int model_spec_layer_is_linear(const model_spec *m, int32_t i);
int32_t model_spec_attention_layers(const model_spec *m);
int32_t model_spec_dense_layers(const model_spec *m);
/* FFN width of dense layer i (its width class, or intermediate). */
int32_t model_spec_layer_inter(const model_spec *m, int32_t i);
/* Parameters of all dense FFNs (per-layer widths summed). */
double model_spec_dense_params(const model_spec *m);

/* Recurrent-state bytes one sequence holds over all linear and Mamba
 * layers (conv state in bf16; the delta-rule state in fp32, the SSM state
 * in mamba_state_bytes, as vLLM/SGLang keep them); 0 for models without
 * them. Independent of its length. The _linear/_mamba forms give one
 * layer's. */
double model_spec_state_bytes_per_seq(const model_spec *m);
double model_spec_linear_state_bytes(const model_spec *m);
double model_spec_mamba_state_bytes(const model_spec *m);

/* Weight bytes of the whole model as loaded: each part in its checkpoint
 * format (m->wdtype_*), or every quantisable part in `override` when it is
 * >= 0 (a model_dtype); norms, routers, embedding and LM head in bf16.
 * by_dtype (MODEL_DTYPE_COUNT entries, may be NULL) gets the bytes per
 * format; returns the total. */
double model_spec_weight_bytes(const model_spec *m, int override, double *by_dtype);

/* The checkpoint's main weight format: that of the routed experts for an
 * MoE model, of the dense MLPs otherwise (a model_dtype value). */
int model_spec_main_dtype(const model_spec *m);

/* KV-cache bytes one token adds over all attention layers with
 * kv_value_bytes per stored value (sliding-window layers hold a bounded
 * window and are counted only when no layer is full attention; linear
 * layers hold state, not KV; DSA adds the indexer's fp8 key per token). */
double model_spec_kv_bytes_per_token(const model_spec *m, double kv_value_bytes);

/* DeepSeek-V4: KV bytes one token adds to one compressed layer of each
 * kind (the entry of csa_ratio tokens, with the indexer's fp8 key; the entry
 * of hca_ratio tokens), 0 for other models. */
double model_spec_csa_kv_bytes(const model_spec *m, double kv_value_bytes);
double model_spec_hca_kv_bytes(const model_spec *m, double kv_value_bytes);

/* DeepSeek-V4: bytes one sequence holds per attention layer whatever its
 * length: the sliding window's K=V entries (bf16) and, on compressed
 * layers, the compressor's pending tokens (kv and gate of the window not
 * yet closed, bf16; CSA's overlapping window and indexer included). The
 * all-layer sum is in model_spec_state_bytes_per_seq. */
double model_spec_window_state_bytes(const model_spec *m, int compressed_kind);

#endif
