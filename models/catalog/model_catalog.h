/* model_catalog — hardware and model catalogues.
 *
 * GPUs and models are data files (YAML) under models/gpus/ and
 * models/archs/; the build embeds them into the binary so servesim runs
 * with no files installed, and the folders named by $SERVESIM_CATALOG
 * (colon-separated; files in <dir>/gpus/<name>.yaml and
 * <dir>/archs/<name>.yaml) are searched first, so users add or override a
 * GPU or model by adding a file. Names are case-insensitive file stems;
 * unknown names fail with the list of known ones and a did-you-mean. A model
 * may also be given as a path to a Hugging Face config.json or a .yaml file.
 * Units: FLOP/s, bytes, bytes/s, seconds (the YAML files use TFLOP/s, GB or
 * GiB, TB/s, GB/s, MB, KB, µs and are converted at load). Plain structs,
 * filled by value; nothing here owns heap memory. */
#ifndef MODEL_CATALOG_H
#define MODEL_CATALOG_H

#include "sim_err.h"

#include <stdint.h>

#define MODEL_NAME_MAX 128
/* Most layers a config may list kinds for one by one (Nemotron-H 56B: 118). */
#define MODEL_LAYERS_LISTED_MAX 512

typedef struct {
    char name[MODEL_NAME_MAX];     /* catalogue key, e.g. "h100-sxm" */
    char arch[32];                 /* ampere | ada | hopper | blackwell | rtx-blackwell (model_gpu_caps.h) */
    double cc;                     /* compute capability, e.g. 9.0 */
    double flops_fp32, flops_bf16, flops_fp8, flops_fp6, flops_fp4; /* dense peak FLOP/s; 0 = unsupported */
    double hbm_bytes;              /* HBM capacity */
    double hbm_bw;                 /* HBM bandwidth, bytes/s */
    double l2_bytes;
    int32_t sms;
    double smem_per_sm;            /* bytes */
    double nvlink_bw;              /* per GPU, one direction, bytes/s */
    double nic_bw;                 /* per GPU NIC, one direction, bytes/s */
    double host_bw;                /* host link, bytes/s */
    /* Efficiency factors of the analytic roofline (what good kernels reach). */
    double eff_gemm;               /* fraction of peak FLOP/s */
    double eff_attn;               /* fraction of peak for attention maths */
    double eff_mem;                /* fraction of HBM bandwidth */
    double eff_nvlink;             /* bus-bandwidth fraction for collectives */
    double launch_s;               /* per-kernel launch floor */
    /* Added with the first roofline model: */
    double eff_gemm_fp8;           /* fraction of the fp8 peak (defaults to eff_gemm) */
    /* Collectives (model_comm.h): per-call cost, per-step latency per link,
     * NIC bus-bandwidth efficiency. Calibration may overwrite them. */
    double comm_base_s;
    double nvlink_step_s;
    double nic_step_s;
    double eff_nic;
    double eff_gemm_fp4;           /* fraction of the fp4 peak (defaults to eff_gemm_fp8) */
    /* Added with GPU aliases and rack-scale NVLink: */
    char aliases[256];             /* other names it is looked up by, ", "-joined ("b200_sxm, hgx-b200") */
    int32_t nvlink_domain;         /* GPUs one NVLink fabric connects (72 on an NVL72 rack);
                                    * 0 = the node (hardware.gpus_per_node) */
    /* Added with the energy model (sim_energy.h; 0 = not catalogued, so a
     * run that asks for energy on this GPU fails with that reason): board
     * power in watts at idle and at the power limit, the share of the
     * dynamic range (max − idle) a kernel streaming HBM at the derated
     * bandwidth draws, and the host's share per GPU of a node (CPUs, DRAM,
     * NICs, switches, fans, conversion losses) in watts. */
    double power_idle_w, power_max_w, power_mem_share, power_host_w;
    /* Added with the op model's cross-GPU check: the HBM rate a device-to-device copy
     * measures on this GPU (bytes/s, read + write counted; ../shared/gpu-specs.md "Measured
     * ceilings" or the source the GPU's file names; 0 = not measured: model_op_hbm_copy_bw
     * takes 0.9 of hbm_bw, Hopper's measured fraction). The op model's GEMM and MoE bandwidth
     * fractions are of this rate, so they carry across GPUs whose HBM reaches a different
     * share of its datasheet figure. */
    double hbm_copy_bw;
    /* Added with the collectives' cross-GPU check: the time NCCL takes for an all-reduce of a
     * small message (512 bytes) between 2 GPUs of the node, as nccl-tests' all_reduce_perf
     * reports it (seconds; the source the GPU's file names; 0 = not measured:
     * model_op_coll_lat takes comm_base_s + 2 nvlink_step_s, the ring estimate). The op
     * model's collective floors, per-rank steps and pipeline fill are multiples of it: the
     * NVLink/NVSwitch round trips a collective waits on, which no datasheet figure gives
     * (B200 takes 1.66x H100's). */
    double coll_lat_s;
    /* Added with the end-to-end cross-GPU check: the measured-table GPU whose fitted op-model
     * sets price this GPU's ops ("h100_sxm", "b200_sxm", "a100_sxm"; "" = its own when it has
     * tables, else its architecture's: model_op_table_gpu). Set from hardware.op_params_gpu,
     * never by the catalogue. */
    char op_params_table[16];
    /* Added with PCIe and NVLink-bridge GPUs (model_gpu_caps.h): how the GPUs
     * of a node are joined (interconnect_id a model_gpu_icx: 0 = NVLink
     * behind an NVSwitch), the GPUs one NVLink bridge joins (nvlink-bridge
     * only), and the PCIe path between GPUs: its bus-bandwidth efficiency
     * (of host_bw) and per-step latency of a collective. */
    char interconnect[16];
    int32_t interconnect_id;
    int32_t nvlink_bridge_gpus;
    double eff_pcie;
    double pcie_step_s;
} model_gpu;

/* A model's vision tower (models/catalog/model_vision.h), read from a
 * Hugging Face config's vision_config; family 0 = the config has none. The
 * widths are the tower's own (hidden, heads, MLP) and its merger's or
 * projector's; out_hidden is what it hands the language model. */
typedef struct {
    int32_t family;                /* model_vision_family */
    char type[32];                 /* vision_config.model_type (or the wrapper's), for messages */
    char why[192];                 /* family MODEL_VISION_UNSUPPORTED: why it is not priced */
    int32_t layers, hidden, heads, head_dim, intermediate;
    int32_t gated;                 /* MLP gate/up/down (1) or fc1/fc2 (0) */
    int32_t patch, merge, temporal_patch, in_channels;
    int32_t mergers;               /* merger MLPs (Qwen3-VL: 1 + the DeepStack ones) */
    int32_t merger_inter;          /* merger's intermediate width (0 = a single projection) */
    int32_t out_hidden;            /* embedding width handed to the language model */
    int32_t max_tokens;            /* Gemma: soft tokens per image at most */
    int32_t video_chunk;           /* Kimi-K2.5: frames per chunk the tower attends over and pools (0 = no video) */
    int32_t video_tokens;          /* Gemma: soft tokens per video frame at most (0 = no video) */
} model_vision;

typedef struct {
    char name[MODEL_NAME_MAX];
    int32_t layers;
    int32_t hidden;
    int32_t heads;
    int32_t kv_heads;
    int32_t head_dim;
    int32_t intermediate;          /* dense FFN size */
    int32_t vocab;
    /* MoE (0 experts = dense) */
    int32_t experts, top_k, shared_experts, expert_intermediate;
    int32_t first_dense_layers;    /* leading dense layers in an MoE model */
    /* MLA (kv_lora_rank 0 = standard attention) */
    int32_t q_lora_rank, kv_lora_rank, rope_dim, nope_dim, v_head_dim;
    int32_t sliding_window;        /* 0 = none */
    int32_t tied_embeddings;
    int32_t sliding_layers;        /* layers using sliding_window (rest full) */
    int32_t moe_layers;            /* layers with routed experts (0 = derived: layers − first_dense_layers) */
    double params;                 /* total parameters (computed) */
    double active_params;          /* per-token active parameters (computed) */
    /* Appended with the model zoo (0 = absent / bf16). */
    char notes[768];               /* what loading resolved, ignored or approximated ("; "-separated) */
    /* Checkpoint weight formats per part (model_dtype values, model_dtype.h)
     * as the checkpoint ships them; a scenario's dtype overrides them all. */
    int32_t wdtype_attn, wdtype_dense, wdtype_expert, wdtype_shared;
    int32_t quant_group;           /* weight-only formats: values per scale (int4 group size) */
    /* Layer kinds beyond full/sliding attention (0 = none). */
    int32_t linear_layers;         /* Gated DeltaNet layers (recurrent state, no KV); the rest attend */
    int32_t lin_k_heads, lin_v_heads, lin_k_dim, lin_v_dim, lin_conv; /* GDN key/value heads, dims, conv kernel */
    int32_t attn_out_gate;         /* attention output gated by a second q-sized projection (Qwen3.5) */
    int32_t index_topk;            /* DeepSeek sparse attention: keys each query attends (0 = dense) */
    int32_t index_heads, index_head_dim; /* DSA lightning-indexer heads and their dimension */
    int32_t attn_sinks;            /* per-head attention-sink logits (gpt-oss) */
    int32_t qk_norm_layer;         /* RMSNorm over the whole projected q and k (all heads at once; MiniMax-M2's
                                    * qk_norm_type per_layer): under TP each rank holds a shard, so the
                                    * variance is all-reduced across the TP ranks every attention layer */
    /* Appended with Mamba-2 hybrids, Nemotron-NAS, Kimi linear attention and
     * latent MoE (0 = absent). A block may lack a token mixer (an FFN-only
     * block: Nemotron-H's MLP/MoE blocks, NAS's skipped attention) or an FFN
     * (Nemotron-H's Mamba/attention blocks, NAS's skipped FFN). */
    int32_t mamba_layers;          /* Mamba-2 SSM mixer layers (recurrent state, no KV) */
    int32_t mamba_heads, mamba_head_dim, mamba_groups, mamba_state, mamba_conv; /* SSM heads x dim, B/C groups,
                                    * state size N, conv kernel */
    int32_t mamba_state_bytes;     /* bytes per SSM-state value as the engine caches it (4 fp32, 2 bf16) */
    int32_t mixerless_layers;      /* blocks without a token mixer */
    int32_t ffnless_layers;        /* blocks without an FFN */
    int32_t ffn_plain;             /* MLPs and experts are up/down (relu^2), not gated gate/up/down */
    int32_t moe_latent;            /* routed experts work in this width, projected from/to hidden (0 = hidden) */
    int32_t lin_kda;               /* linear layers are Kimi Delta Attention (per-channel forget gate) */
    int32_t ffn_widths[16];        /* dense FFN widths of the width classes (NAS: per-layer ffn_mult) */
    int32_t n_ffn_widths;          /* 0 = every dense layer is `intermediate` wide */
    /* Per-layer kinds when the config lists them (listed_layers = layers):
     * layer_mixer[i] a model_mixer_kind, layer_ffn[i] a model_ffn_kind,
     * layer_width[i] the width class of a dense layer. 0 = not listed: the
     * counts above place each kind evenly (model_spec.h). */
    int32_t listed_layers;
    uint8_t layer_mixer[MODEL_LAYERS_LISTED_MAX], layer_ffn[MODEL_LAYERS_LISTED_MAX];
    uint8_t layer_width[MODEL_LAYERS_LISTED_MAX];
    /* Appended with DeepSeek-V4 (0 = absent). comp_attn: shared-KV MQA (one
     * KV head of head_dim read as both K and V, queries through q_lora_rank,
     * per-head sinks) with a sliding_window branch on every attention layer;
     * sliding_layers of them have only that, csa_layers add compressed
     * sparse attention (one KV entry per csa_ratio tokens, index_topk of
     * them picked by the lightning indexer, index_* fields) and hca_layers
     * heavily compressed attention (one entry per hca_ratio tokens, all
     * attended). */
    int32_t comp_attn;
    int32_t csa_layers, hca_layers, csa_ratio, hca_ratio;
    int32_t o_groups, o_lora_rank; /* grouped low-rank O: heads in o_groups groups, each to o_lora_rank, then mixed to hidden */
    int32_t hc_mult;               /* hyper-connections: residual streams per token (0 = a plain residual) */
    int32_t hash_layers;           /* the first MoE layers route by a token-id table instead of a top-k of the gate */
    model_vision vision;           /* the vision tower (family 0 = none) */
} model_spec;

/* Token mixer and FFN of one block. */
typedef enum { MODEL_MIX_ATTN = 0, MODEL_MIX_LINEAR = 1, MODEL_MIX_MAMBA = 2, MODEL_MIX_NONE = 3 } model_mixer_kind;
typedef enum { MODEL_FFN_DENSE = 0, MODEL_FFN_MOE = 1, MODEL_FFN_NONE = 2 } model_ffn_kind;

/* Looks up a GPU by catalogue name or by one of the aliases its file
 * declares (`aliases: [b200_sxm, ...]`); case-insensitive, '_' and '-'
 * alike, so a serving benchmark's `h100_sxm` finds h100-sxm. out->name is
 * the catalogue name. */
int model_catalog_gpu(const char *name, model_gpu *out, sim_err *err);

/* Looks up a model: a path (.json Hugging Face config, its folder, or a
 * catalogue .yaml), a catalogue name, or a Hugging Face id of the model zoo
 * (model_resolve.h says how ids and their variants resolve). */
int model_catalog_model(const char *name_or_path, model_spec *out, sim_err *err);

/* Catalogue YAML model by name only: 1 and *out filled, 0 when there is no
 * such file, < 0 on a parse error. */
int model_catalog_arch(const char *name, model_spec *out, sim_err *err);

/* Case-insensitive edit distance of two names (for did-you-mean). */
int model_catalog_name_distance(const char *a, const char *b);

/* Calls fn for each catalogue model name ($SERVESIM_CATALOG files
 * included), for suggestions. */
void model_catalog_model_candidates(void (*fn)(const char *name, void *ctx), void *ctx);

/* Names embedded in the catalogue (static strings), for listings; fills
 * up to max and returns the total count. $SERVESIM_CATALOG files are not
 * listed here (they appear in unknown-name errors). */
int model_catalog_gpu_names(const char **names, int max);
int model_catalog_model_names(const char **names, int max);

#endif
