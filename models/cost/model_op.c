/* model_op — see model_op.h. The formulas of each family, their parameter
 * tables and the lookup of fitted sets. */
#include "model_op.h"
#include "model_gemm_split.h"
#include "model_gpu_caps.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define US 1e-6

/* DeepSeek-V3 MLA geometry (the tables' MLA rows are DeepSeek-V3's). */
#define MLA_HIDDEN 7168.0
#define MLA_Q_LORA 1536.0
#define MLA_KV_LORA 512.0
#define MLA_ROPE 64.0
#define MLA_NOPE 128.0
#define MLA_V 128.0
/* DeepSeek-V3.2 sparse attention (the tables' DSA rows are DeepSeek-V3.2's):
 * top-k keys per query, lightning-indexer heads and their dimension. */
#define DSA_TOPK 2048.0
#define DSA_IDX_HEADS 64.0
#define DSA_IDX_DIM 128.0
/* Query heads one CTA of the sparse MLA prefill kernel serves. */
#define DSA_HEAD_BLOCK 64.0
/* Cached prefix (tokens) past which SGLang's module tables time the attention
 * backend's per-batch metadata build inside every timed call: their
 * collector (sglang 0.5.14) builds it once before timing, but for a prefix
 * over 65536 tokens takes its eager path, which calls the backend's
 * init_forward_metadata before each module call. */
#define DSA_META_PREFIX 65536.0

/* ---- parameter tables ------------------------------------------------ */

static const model_op_param_info P_GEMM[] = {
    {"floor_us", "us", "kernel floor: launch, prologue, epilogue of the smallest GEMM", 3, 0.5, 200, 0, 0},
    {"eff_tc", "fraction", "fraction of the format's tensor-core peak a full wave of tiles reaches", 0.8, 0.05, 1.2, 0, 0},
    {"eff_mem", "fraction", "fraction of the GPU's measured HBM copy rate (catalogue hbm_copy_tbps) when streaming "
     "weights", 0.85, 0.05, 2, 0, 0},
    {"k_fill", "elements", "per-tile pipeline fill/drain, as extra k elements", 64, 1, 4096, 0, 0},
    {"quant_us", "us", "floor of the activation quantisation run before a non-bf16 GEMM", 2, 0.01, 400, 0, 0},
    {"quant_mem", "fraction", "fraction of the GPU's measured HBM copy rate (catalogue hbm_copy_tbps) the activation "
     "quantisation's passes reach", 0.7, 0.02, 2, 0, 0},
    {"cta_bw", "copy/SMs", "operand stream one CTA (one SM) sustains over its k loop, in multiples of the measured "
     "HBM copy rate's per-SM share: bounds grids that cannot fill the SMs", 5, 0.2, 200, 0, 0},
    {"split_max", "splits", "largest split-K factor the kernel uses (1: none, each CTA runs its tile's whole k)", 256,
     1, 1024, 1.001, 0},
    {"split_us", "us", "fixed cost of a split-K GEMM's reduction (its second kernel or fix-up pass)", 1, 0.01, 50, 0, 0},
    {"sk_wave", "fraction", "share of a partial last wave's idle SM time stream-K spreads over the busy SMs (0: the "
     "term and the sub-wave tile shrink left out)", 0.5, 0.01, 1, 0, 1},
    {"host_us", "us", "host time of one call in the table's eager timing loop (the op's Python wrapper, its "
     "launches): a table row lasts at least this; serving under CUDA graphs pays the GPU time alone (0: none)",
     0.01, 0.01, 2000, 100, 1},
};
/* P_GEMM's indices of quant_us, quant_mem and host_us. */
#define GEMM_QUANT_US 4
#define GEMM_QUANT_MEM 5
#define GEMM_HOST_US 10
/* The attention kernels' five shared parameters (P_ATTN, P_CTX_ATTN). */
#define P_ATTN_ROWS                                                                                                \
    {"floor_us", "us", "kernel floor", 5, 0.5, 500, 0, 0},                                                         \
    {"eff_tc", "fraction", "fraction of the tensor-core peak (bf16, or fp8 for fp8 attention)", 0.5, 0.02, 1.2, 0, \
     0},                                                                                                           \
    {"cta_us", "SM*us", "fixed work per CTA (one sequence x head x 128-query tile; decode: request x KV head)", 1, \
     0.001, 1000, 0, 0},                                                                                           \
    {"eff_mem", "fraction", "fraction of HBM bandwidth reading Q/K/V (decode: the KV cache)", 0.8, 0.05, 1.5, 0, 0}, \
    {"req_us", "SM*us", "fixed work per request (page table, softmax merge, output)", 1, 0.001, 1000, 0, 0}
static const model_op_param_info P_ATTN[] = {P_ATTN_ROWS};
/* Context attention (MHA/GQA prefill): P_ATTN plus the softmax's
 * exponentials, one per score (query × key × head) on the SFU, whose rate
 * is a sixteenth of the FP32 peak (16 MUFU results a clock per SM against
 * 128 FMAs): at head_dim 64 a score costs as many SFU clocks as its 2·(64 +
 * 64) MMA FLOPs take on the tensor cores' bf16 rate over 16. Then the
 * kernel's tile of q_tile rows: the masked parts of the diagonal and
 * window-edge tiles scored, and the longest CTA as a bound. Then the
 * kernel's key block: a windowed tile walks its key span in whole blocks
 * of kv_blk bytes of K. 0: the term left out (sets fitted before it). */
static const model_op_param_info P_CTX_ATTN[] = {
    P_ATTN_ROWS,
    {"eff_exp", "fraction", "fraction of the SFU exponential rate (FP32 peak / 16) the softmax's exponentials get, "
     "one per score", 0.5, 0.01, 4, 0, 1},
    {"q_tile", "rows", "query rows (and keys) of one MMA tile: a tile on the causal diagonal or a window's edge "
     "scores whole, and the grid lasts at least its longest CTA (0: exact pairs, no such bound)", 128, 16, 512, 0,
     1},
    {"kv_blk", "KiB", "bytes of one K block of the kernel's key loop (its keys: kv_blk / (head_dim x KV bytes)); a "
     "window's query tile starts its key span at any key, so it scores one block's keys more than the span on "
     "average (0: none)", 16, 1, 512, 0, 1},
};
/* Generation attention (GQA/MHA decode): P_ATTN plus the head-group limit
 * of the grouped kernel and the CUDA-core rate of the per-head kernel that
 * runs beyond it, the per-query-head work, the rate of a cache that fits
 * in L2 (the catalogue's l2_mb), the share of the per-CTA work that
 * overlaps the cache stream and the cache tokens of one step of the
 * kernel's loop, and the layout copies of a kernel that serves a KV head's
 * query group as the rows of its tile. */
static const model_op_param_info P_GEN_ATTN[] = {
    {"floor_us", "us", "kernel floor", 5, 0.5, 500, 0, 0},
    {"eff_tc", "fraction", "grouped kernel: fraction of the bf16 tensor-core peak", 0.5, 0.02, 1.2, 0, 0},
    {"cta_us", "SM*us", "fixed work per CTA (request x KV head; per-head kernel: request x query head)", 1, 0.001,
     1000, 0, 0},
    {"eff_mem", "fraction", "fraction of HBM bandwidth reading the KV cache", 0.8, 0.05, 1.5, 0, 0},
    {"req_us", "SM*us", "fixed work per request (page table, softmax merge, output)", 1, 0.001, 1000, 0, 0},
    {"grp_max", "heads", "largest query-head group per KV head the grouped kernel serves; larger groups run a "
     "per-query-head kernel", 40, 2, 1024, 900, 0},
    {"eff_cc", "fraction", "per-query-head kernel: fraction of the FP32 (CUDA-core) peak for its dot products", 0.2,
     0.005, 1.2, 0, 0},
    {"head_us", "SM*us", "fixed work per request x query head (its query row loaded, softmax state, output row "
     "written; 0: none)", 0.02, 0.0001, 10, 0, 1},
    {"l2_gain", "x HBM", "rate of a KV cache that fits in L2 (left there by the previous call), in multiples of the "
     "HBM rate (0: none, every read from HBM)", 2, 1, 20, 0, 1},
    {"cta_overlap", "fraction", "share of the fixed work per CTA (cta_us) that overlaps the KV stream and the MMAs "
     "(other CTAs' loads run under one CTA's set-up), joined by the cube-root smooth maximum (0: none, added)", 0.5,
     0.001, 1, 0, 1},
    {"kv_step", "tokens", "cache tokens of one step of the kernel's loop: a shorter cache costs about one step (the "
     "smooth maximum of the two; 0: none)", 64, 1, 1024, 0, 1},
    {"swap_us", "us", "the copies of a kernel that serves a KV head's query group as its rows (FlashAttention-2's "
     "decode): the queries into that group-major layout and the output back, paid where the layout is no view of "
     "the engine's (batch, KV heads and group all above 1); their bytes at eff_mem (0: none)", 5, 0.001, 100, 0, 1},
    {"cta_bw", "x HBM/SM", "FlashAttention-2's decode (swap_us > 0): the cache rate of a CTA alone on its SM, in "
     "multiples of the HBM rate's per-SM share (eff_mem x HBM / SMs), while the grid leaves SMs idle (0: 1)", 1.2,
     0.5, 4, 0, 1},
};
/* MLA decode kernel (P_ATTN plus its grid): how many query heads one CTA
 * serves, the cache tokens of one step of its loop, and how far it splits
 * a request's latent cache over idle SMs, and the rate of a cache that
 * fits in L2. Most Hopper and Blackwell sets predate these terms (0: every
 * head in one CTA, no steps, splits up to the idle SMs); TensorRT-LLM
 * 1.0's A100 kernel serves 64 heads per CTA in steps of 64 tokens and
 * walks the whole cache in it (fitted from the alternative start). */
static const model_op_param_info P_GEN_MLA[] = {
    {"floor_us", "us", "kernel floor", 5, 0.5, 500, 0, 0},
    {"eff_tc", "fraction", "fraction of the tensor-core peak (bf16)", 0.5, 0.02, 1.2, 0, 0},
    {"cta_us", "SM*us", "fixed work per CTA (request x head tile)", 1, 0.001, 1000, 0, 0},
    {"eff_mem", "fraction", "fraction of HBM bandwidth reading the latent KV cache", 0.8, 0.05, 1.5, 0, 0},
    {"req_us", "SM*us", "fixed work per request (page table, softmax merge, output)", 1, 0.001, 1000, 0, 0},
    {"head_tile", "heads", "query heads one CTA serves, fewer padded to it (each CTA reads its request's whole "
     "latent cache)", 128, 4, 1024, 64, 1},
    {"kv_tile", "tokens", "cache tokens per step of a CTA's loop (a part step costs a whole one)", 1, 1, 1024, 64, 1},
    {"kv_split", "splits", "largest split-KV factor over idle SMs (below 2: none, a CTA walks its request's whole "
     "cache and the grid runs in whole waves)", 1024, 1, 1024, 1.001, 1},
    {"l2_gain", "x HBM", "rate of a latent cache that fits in L2 (left there by the previous call), in multiples "
     "of the HBM rate (0: none, every read from HBM)", 2, 1, 20, 0, 1},
};
static const model_op_param_info P_MLA_MODULE[] = {
    {"floor_us", "us", "floor of the module's kernel sequence (about ten launches)", 30, 1, 2000, 0, 0},
    {"eff_tc", "fraction", "attention: fraction of the bf16 tensor-core peak", 0.5, 0.02, 1.2, 0, 0},
    {"cta_us", "SM*us", "attention: fixed work per CTA", 1, 0.001, 1000, 0, 0},
    {"eff_mem", "fraction", "fraction of HBM bandwidth (weights, KV)", 0.8, 0.05, 1.5, 0, 0},
    {"eff_gemm", "fraction", "projections: fraction of the GEMM format's tensor-core peak", 0.6, 0.02, 1.2, 0, 0},
};
static const model_op_param_info P_BMM[] = {
    {"floor_us", "us", "kernel floor", 4, 0.5, 500, 0, 0},
    {"eff_tc", "fraction", "fraction of the tensor-core peak", 0.5, 0.02, 1.2, 0, 0},
    {"eff_mem", "fraction", "fraction of the GPU's measured HBM copy rate (catalogue hbm_copy_tbps)", 0.8, 0.05, 2, 0, 0},
    {"l2_gain", "x HBM", "rate of operands that fit in L2 together (left there by the previous call), in multiples "
     "of eff_mem's (0: none)", 2, 1, 20, 0, 1},
};
static const model_op_param_info P_MOE[] = {
    {"floor_us", "us", "floor of the fused-MoE kernel sequence (routing, permute, 2 GEMMs, act, finalize)", 20, 1,
     2000, 0, 0},
    {"eff_tc", "fraction", "grouped GEMMs: fraction of the format's tensor-core peak", 0.6, 0.02, 1.2, 0, 0},
    {"eff_mem", "fraction", "fraction of the measured HBM copy rate (model_op_hbm_copy_bw) reading the touched "
     "experts' weights", 0.8, 0.05, 1.5, 0, 0},
    {"k_fill", "elements", "per-tile pipeline fill/drain of the grouped GEMMs, as extra k elements", 64, 1, 8192, 0, 0},
    {"token_us", "SM*us", "fixed work per token-expert pair (permute, gather, combine)", 0.05, 0.0001, 100, 0, 0},
    {"pair_pass", "FP32 ops/element", "CUDA-core work per element of every seen pair's hidden row (bf16) in the "
     "rank's element-wise passes, masked pairs of other ranks' experts included (zero-filled outputs, the top-k "
     "reduction), at the GPU's FP32 peak: these short passes run at the SMs' rate, not HBM's", 44, 0.044, 880, 0,
     0},
    {"wide_mem", "fraction", "eff_mem's share a batch of more tokens than local experts streams at (Triton "
     "fused_moe's default configuration then takes 64-row tiles, below it 16; 1: no switch)", 1, 0.1, 1.5, 0, 0},
    {"tile_exp", "exponent", "power of the busy-SM fraction (row tiles × 128-wide column tiles over SMs × "
     "tile_sat, below 1) the weight stream scales with (0.5: square root; near 0: kernels that split k or swap "
     "operands keep every SM streaming)", 0.5, 0.01, 1.5, 0, 0},
    {"pair_inter", "FP32 ops/element", "CUDA-core work per element of every seen pair's intermediate row, apart "
     "from pair_pass's over its hidden row (the activation; kernels that route only the rank's pairs do none for "
     "masked pairs)", 44, 0.044, 880, 0, 0},
    {"tile_sat", "tiles/SM", "128-wide tiles per SM the weight stream needs for its full rate (the busy fraction "
     "is tiles over SMs × tile_sat, the count unrounded; more than one: one resident tile per SM keeps too few loads "
     "in flight for HBM; 0: whole tiles over SMs, every set's count before the term)", 1, 0.125, 16, 2, 1},
    {"row_pad", "rows", "rows each touched expert's last row tile computes when the experts have no more than 64 "
     "rows (the kernel's small-batch row block: Triton fused_moe's default configuration 16, its block-fp8 one and "
     "Hopper's CUTLASS 64), never fewer than the pairs; the fit starts at 64, the whole tile, and from 16 in its "
     "second start; 0: one 64-row tile, the count before the term)", 64, 1, 64, 16, 1},
    {"ramp_us", "us", "fixed time that grows with the token-expert pairs the rank's kernels see, in proportion up "
     "to ramp_pairs of them, then flat (the fused op's small-batch step: on B200's TensorRT-LLM-gen kernels about "
     "10 us between 4 and 32 tokens at EP 128, one local expert, where the weights read do not change; 0: none)", 5,
     0.01, 100, 0, 1},
    {"ramp_pairs", "pairs", "seen token-expert pairs at which ramp_us is reached (0: none)", 256, 8, 65536, 0, 1},
    {"local_wl", "fraction", "share of the table's EP rows measured as the rank's own workload: only the tokens "
     "with a pick on the rank, each running all its top-k picks as grouped-GEMM rows, the other ranks' picks "
     "clamped to a local expert at zero weight (the collector's rank-0 workload for kernels that cannot skip a "
     "masked pick); 0 (the sets fitted before): every token replicated over the ranks, other ranks' picks seen "
     "and skipped; only a table's load (served tokens known) reads it, never the cost model's", 0.5, 0.001, 1,
     1, 1},
};
static const model_op_param_info P_COMM[] = {
    {"base_lat", "lat", "per-call launch and synchronisation, in multiples of the GPU's NCCL latency (catalogue "
     "nccl_lat_us)", 0.8, 0.01, 50, 0, 0},
    {"step_lat", "lat", "latency per rank step (the algorithm's n-1 hops), in multiples of the NCCL latency", 0.1,
     0.0001, 10, 0, 0},
    {"eff_bw", "fraction", "bulk regime (NCCL Simple, two-shot): bus bandwidth as a fraction of the achievable NVLink "
     "bus bandwidth (nvlink_gbps x efficiency.nvlink)", 0.8, 0.02, 4, 0, 0},
    {"eff_lo", "fraction", "low-latency regime (NCCL LL/LL128, one-shot): link bandwidth as a fraction of the "
     "achievable NVLink bus bandwidth (second start 0.03: a steep small-message slope, as NCCL's all-to-all has "
     "below its bulk regime, which the fit does not reach from 0.4)", 0.4, 0.01, 4, 0.03, 0},
    {"ramp_lat", "lat", "bulk regime's extra fixed time (pipeline fill over its chunks and channels), in multiples "
     "of the NCCL latency", 3, 0.001, 200, 0, 0},
    {"eff_loc", "fraction", "bulk regime: each rank's pass over its whole buffer (staging copies, reduction), as a "
     "fraction of the measured HBM copy rate", 0.3, 0.01, 4, 0, 0},
    {"host_us", "us", "eager custom all-reduce: the host's path of a call (the engine's dispatch, the input's copy "
     "into the registered buffer, the launch), paid in series with the kernel; the host's, so not a multiple of the "
     "NCCL latency (CUDA-graph sets: 0, no such term)", 20, 0.1, 500, 0, 1},
};
static const model_op_param_info P_QUANT[] = {
    {"floor_us", "us", "kernel floor", 3, 0.1, 500, 0, 0},
    {"eff_mem", "fraction", "fraction of the GPU's measured HBM copy rate (catalogue hbm_copy_tbps)", 0.7, 0.02, 2, 0,
     0},
    {"cta_bw", "copy/SMs", "one CTA's stream over its row chunk, in multiples of the measured HBM copy rate's per-SM "
     "share", 1,
     0.02, 100, 0, 0},
    {"row_chunk", "elements", "static-scale kernel: row elements one CTA covers (at or above the row: one CTA per row, "
     "vLLM's)", 4096, 256, 1048576, 1048576, 1},
    {"cta_us", "SM*us", "fixed work per CTA (its scale load, index set-up, tail)", 0.001, 0.0001, 100, 0.05, 1},
    {"l2_rate", "B/FLOP", "rate of the bytes that fit the L2 (a repeated op's working set stays there), in bytes per "
     "FP32 FLOP of the GPU's FP32 peak (the L2's rate scales with the SMs and their clock, not with HBM; 0: none)",
     0.05, 0.002, 1, 0.1, 1},
};
static const model_op_param_info P_GDN[] = {
    {"floor_us", "us", "kernel floor", 5, 0.1, 2000, 0, 0},
    {"eff_tc", "fraction", "delta rule: fraction of the bf16 tensor-core peak for its chunked matmuls", 0.2, 0.001,
     1.2, 0, 0},
    {"eff_mem", "fraction", "fraction of the GPU's measured HBM copy rate (catalogue hbm_copy_tbps) moving "
     "activations and recurrent state", 0.6, 0.01, 2, 0, 0},
    {"seq_us", "us", "conv: work per sequence done one sequence after another (its state read and written, the "
     "kernel's pass over it), overlapping the streaming", 0.001, 0.001, 100, 1, 1},
    {"qv_cut", "fraction", "conv: share of the q and v channels the measured kernel does not move (0: q, k and v, the "
     "layer's conv; 1: the key channels alone)", 0.001, 0.001, 1, 0.999, 1},
    {"split", "CTAs", "delta rule: CTAs per sequence x value head its kernels spread over the SMs (state column "
     "blocks, chunk tiles; 0: one)", 1, 0.25, 64, 0, 1},
    {"cc_ops", "FP32 ops", "conv: CUDA-core work per channel element of a token (its taps, activation, indexing) at "
     "the FP32 peak, bounding a kernel its issue rate limits rather than HBM (0: none)", 1, 1, 5000, 100, 1},
};

static const model_op_param_info P_DSA_MODULE[] = {
    {"floor_us", "us", "floor of the module's kernel sequence (projections, indexer, top-k, attention)", 30, 1, 4000, 0, 0},
    {"eff_tc", "fraction", "sparse attention: fraction of the bf16 tensor-core peak", 0.5, 0.02, 1.2, 0, 0},
    {"cta_us", "SM*us", "sparse attention: fixed work per CTA", 1, 0.001, 1000, 0, 0},
    {"eff_mem", "fraction", "fraction of HBM bandwidth (weights, KV, indexer keys, logits)", 0.8, 0.05, 1.5, 0, 0},
    {"eff_gemm", "fraction", "projections: fraction of the GEMM format's tensor-core peak", 0.6, 0.02, 1.2, 0, 0},
    {"eff_idx", "fraction", "indexer logits: fraction of the fp8 tensor-core peak", 0.3, 0.005, 1.2, 0, 0},
    {"host_us", "us", "host time issuing the module's kernels without the indexer's, overlapping their run (0: "
     "none, the floor alone)", 30, 1, 5000, 300, 1},
    {"idx_host_us", "us", "host time issuing the indexer's kernels (its projections, key cache write, logits, "
     "top-k), added to host_us", 10, 0.01, 5000, 100, 1},
    {"fill", "fraction", "sparse prefill: share of a query's empty top-k slots (keys it has not yet seen) its CTA "
     "still walks", 0.99, 0.001, 1, 0.01, 0},
    {"topk_us", "SM*us", "indexer: the top-k selection's work per query row whose context exceeds the top-k (0: "
     "none)", 20, 0.001, 1000, 0, 1},
    {"lgt_bytes", "bytes", "indexer prefill: HBM bytes per slot of the fp32 logit buffer of the batch's new tokens "
     "x all its requests' keys that lies outside the query's own keys (0: none)", 1, 0.001, 64, 0, 1},
    {"meta_us", "us", "prefill table rows past 65536 cached tokens (SGLang's collector): host time of the attention backend's "
     "per-batch metadata build, added to the host's issue time (0: none)", 300, 1, 5000, 0, 1},
    {"meta_req_us", "us", "prefill table rows past 65536 cached tokens: the metadata build's host time per "
     "request (its per-request loops), added to meta_us (0: none)", 20, 0.1, 500, 0, 1},
};

#define NP(a) ((int)(sizeof a / sizeof a[0]))

int model_op_param_count(model_op_kind k)
{
    switch (k) {
    case MODEL_OPK_GEMM: return NP(P_GEMM);
    case MODEL_OPK_GEN_ATTN: return NP(P_GEN_ATTN);
    case MODEL_OPK_CTX_ATTN: return NP(P_CTX_ATTN);
    case MODEL_OPK_CTX_MLA: return NP(P_ATTN);
    case MODEL_OPK_GEN_MLA: return NP(P_GEN_MLA);
    case MODEL_OPK_CTX_MLA_MODULE:
    case MODEL_OPK_GEN_MLA_MODULE: return NP(P_MLA_MODULE);
    case MODEL_OPK_MLA_BMM: return NP(P_BMM);
    case MODEL_OPK_MOE: return NP(P_MOE);
    case MODEL_OPK_NCCL:
    case MODEL_OPK_CUSTOM_AR: return NP(P_COMM);
    case MODEL_OPK_QUANT: return NP(P_QUANT);
    case MODEL_OPK_GDN: return NP(P_GDN);
    case MODEL_OPK_CTX_DSA_MODULE:
    case MODEL_OPK_GEN_DSA_MODULE: return NP(P_DSA_MODULE);
    default: return 0;
    }
}

const model_op_param_info *model_op_params_of(model_op_kind k)
{
    switch (k) {
    case MODEL_OPK_GEMM: return P_GEMM;
    case MODEL_OPK_GEN_ATTN: return P_GEN_ATTN;
    case MODEL_OPK_CTX_ATTN: return P_CTX_ATTN;
    case MODEL_OPK_CTX_MLA: return P_ATTN;
    case MODEL_OPK_GEN_MLA: return P_GEN_MLA;
    case MODEL_OPK_CTX_MLA_MODULE:
    case MODEL_OPK_GEN_MLA_MODULE: return P_MLA_MODULE;
    case MODEL_OPK_MLA_BMM: return P_BMM;
    case MODEL_OPK_MOE: return P_MOE;
    case MODEL_OPK_NCCL:
    case MODEL_OPK_CUSTOM_AR: return P_COMM;
    case MODEL_OPK_QUANT: return P_QUANT;
    case MODEL_OPK_GDN: return P_GDN;
    case MODEL_OPK_CTX_DSA_MODULE:
    case MODEL_OPK_GEN_DSA_MODULE: return P_DSA_MODULE;
    default: return NULL;
    }
}

/* ---- names ------------------------------------------------------------ */

static const char *const KIND_NAMES[MODEL_OPK_COUNT] = {
    "gemm", "context_attention", "generation_attention", "mla_context", "mla_generation", "mla_context_module",
    "mla_generation_module", "mla_bmm", "moe", "nccl", "custom_allreduce", "quantize", "gdn", "dsa_context_module",
    "dsa_generation_module"};

const char *model_op_kind_name(model_op_kind k)
{
    return (int)k >= 0 && k < MODEL_OPK_COUNT ? KIND_NAMES[k] : "?";
}

int model_op_kind_from_name(const char *name)
{
    for (int i = 0; i < MODEL_OPK_COUNT; i++)
        if (name && !strcasecmp(name, KIND_NAMES[i])) return i;
    return -1;
}

int model_op_kind_from_op_name(const char *op, const char *src)
{
    if (!op) return -1;
    if (!strcmp(op, "gemm")) return MODEL_OPK_GEMM;
    if (!strcmp(op, "context_attention")) return MODEL_OPK_CTX_ATTN;
    if (!strcmp(op, "generation_attention")) return MODEL_OPK_GEN_ATTN;
    if (!strcmp(op, "mla_context")) return MODEL_OPK_CTX_MLA;
    if (!strcmp(op, "mla_generation")) return MODEL_OPK_GEN_MLA;
    if (!strcmp(op, "mla_context_module")) return MODEL_OPK_CTX_MLA_MODULE;
    if (!strcmp(op, "mla_generation_module")) return MODEL_OPK_GEN_MLA_MODULE;
    if (!strcmp(op, "mla_gen_pre") || !strcmp(op, "mla_gen_post")) return MODEL_OPK_MLA_BMM;
    if (!strcmp(op, "moe")) return MODEL_OPK_MOE;
    if (!strcmp(op, "compute_scale") || !strcmp(op, "scale_matrix")) return MODEL_OPK_QUANT;
    if (!strcmp(op, "gdn")) return MODEL_OPK_GDN;
    if (!strcmp(op, "dsa_context_module") || !strcmp(op, "dsa_context_module_skip_indexer"))
        return MODEL_OPK_CTX_DSA_MODULE;
    if (!strcmp(op, "dsa_generation_module") || !strcmp(op, "dsa_generation_module_skip_indexer"))
        return MODEL_OPK_GEN_DSA_MODULE;
    if (!strcmp(op, "all_reduce") || !strcmp(op, "all_gather") || !strcmp(op, "reduce_scatter") ||
        !strcmp(op, "alltoall"))
        return src && !strcasecmp(src, "NCCL") ? MODEL_OPK_NCCL : MODEL_OPK_CUSTOM_AR;
    return -1;
}

static const char *const FIELD_NAMES[MODEL_OPF_COUNT] = {
    "m", "n", "k", "batch_size", "isl", "step", "num_heads", "num_key_value_heads", "head_dim", "window_size",
    "num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size", "num_gpus",
    "message_size", "seq_len", "d_model", "d_conv", "num_k_heads", "head_k_dim", "num_v_heads", "head_v_dim",
    "tp_size", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "index_n_heads",
    "index_head_dim", "index_topk"};

const char *model_op_field_name(model_op_field f)
{
    return (int)f >= 0 && f < MODEL_OPF_COUNT ? FIELD_NAMES[f] : "?";
}

/* ---- formats ---------------------------------------------------------- */

typedef struct {
    double wbytes;   /* bytes per weight value, scales included */
    double abytes;   /* bytes per activation value the mainloop reads, scales included */
    double peak;     /* tensor-core FLOP/s the GEMM runs at */
    int quant_acts;  /* activations quantised on the fly */
} op_fmt;

static int is(const char *a, const char *b) { return a && !strcasecmp(a, b); }

/* GEMM formats (model_op_resolved.fmt). */
enum { FMT_BF16 = 0, FMT_FP8, FMT_FP8_BLOCK, FMT_NVFP4, FMT_W4A8, FMT_W4A16, FMT_INT8_WO, FMT_W8A8, FMT_FP32,
       FMT_INT4_WO };

static int fmt_index(const char *dt)
{
    if (!dt || !*dt || is(dt, "bfloat16") || is(dt, "bf16") || is(dt, "float16") || is(dt, "half") ||
        is(dt, "fp16"))
        return FMT_BF16;
    if (is(dt, "fp8")) return FMT_FP8;
    if (is(dt, "fp8_block")) return FMT_FP8_BLOCK;
    if (is(dt, "nvfp4")) return FMT_NVFP4;
    if (is(dt, "w4a8_mxfp4_mxfp8")) return FMT_W4A8;
    if (is(dt, "w4a16_mxfp4")) return FMT_W4A16;
    if (is(dt, "int4_wo")) return FMT_INT4_WO;
    if (is(dt, "int8_wo")) return FMT_INT8_WO;
    if (is(dt, "sq") || is(dt, "int8")) return FMT_W8A8;
    if (is(dt, "float") || is(dt, "fp32")) return FMT_FP32;
    return -1;
}

static int fmt_of(const model_gpu *g, int fmt, op_fmt *f)
{
    double p16 = g->flops_bf16, p8 = g->flops_fp8 > 0 ? g->flops_fp8 : p16;
    double p4 = g->flops_fp4 > 0 ? g->flops_fp4 : p8;
    memset(f, 0, sizeof *f);
    /* 4-bit formats with their block scales: NVFP4 an E4M3 scale per 16
     * values (its GEMMs quantise the activations to NVFP4 as well), MXFP4 an
     * E8M0 scale per 32 (OCP MX v1.0; W4A8 against MXFP8 activations, also
     * an E8M0 per 32), int4 weight-only an fp16 scale per group of 128
     * (AWQ/GPTQ's default, TensorRT-LLM's W4A16 AWQ). */
    switch (fmt) {
    case FMT_BF16: f->wbytes = 2, f->peak = p16; break;
    case FMT_FP8: f->wbytes = 1, f->peak = p8, f->quant_acts = 1; break;
    case FMT_FP8_BLOCK: f->wbytes = 1 + 4.0 / 128, f->peak = p8, f->quant_acts = 1; break;
    case FMT_NVFP4: f->wbytes = f->abytes = 0.5 + 1.0 / 16, f->peak = p4, f->quant_acts = 1; break;
    case FMT_W4A8: f->wbytes = 0.5 + 1.0 / 32, f->abytes = 1 + 1.0 / 32, f->peak = p8, f->quant_acts = 1; break;
    case FMT_W4A16: f->wbytes = 0.5 + 1.0 / 32, f->peak = p16; break; /* dequantised to bf16 in the mainloop */
    case FMT_INT4_WO: f->wbytes = 0.5 + 2.0 / 128, f->peak = p16; break;
    case FMT_INT8_WO: f->wbytes = 1, f->peak = p16; break;
    case FMT_W8A8: f->wbytes = 1, f->peak = p8, f->quant_acts = 1; break; /* SmoothQuant W8A8: int8 tensor cores */
    case FMT_FP32: f->wbytes = 4, f->peak = g->flops_fp32 > 0 ? g->flops_fp32 : p16 / 16; break;
    default: return -1;
    }
    if (f->abytes == 0) f->abytes = f->quant_acts ? 1 : 2; /* fp8 / int8, else bf16 */
    return 0;
}

static double kv_bytes(const char *dt)
{
    if (is(dt, "fp8") || is(dt, "int8")) return 1;
    if (is(dt, "nvfp4") || is(dt, "fp4")) return 0.5625;
    return 2;
}

static double coll_bytes(const char *dt)
{
    if (is(dt, "int8") || is(dt, "fp8")) return 1;
    if (is(dt, "float") || is(dt, "fp32")) return 4;
    return 2;
}

/* Power-law exponent of a MoE routing distribution: 0 balanced (or none
 * named), a of "power_law_<a>", −1 unknown. */
static double moe_alpha(const char *d)
{
    if (!d || !*d || is(d, "balanced") || is(d, "uniform")) return 0;
    if (!strncasecmp(d, "power_law_", 10)) {
        char *end;
        double a = strtod(d + 10, &end);
        if (end != d + 10 && !*end && a > 0 && isfinite(a)) return a;
    }
    return -1;
}

void model_op_resolve(const model_op_query *q, model_op_resolved *r)
{
    const char *v = q->variant;
    memset(r, 0, sizeof *r);
    r->fmt = (int8_t)fmt_index(q->dtype);
    r->gemm_fmt = (int8_t)fmt_index(q->gemm_type[0] ? q->gemm_type : "bfloat16");
    r->attn_fp8 = (int8_t)is(q->dtype, "fp8");
    r->fused_quant = !strcmp(v, "fused_quant");
    r->bmm_post = !strcmp(v, "mla_gen_post");
    r->compute_scale = !strcmp(v, "compute_scale");
    r->gdn_conv = !strcmp(v, "conv");
    static const char *const dsa_parts[] = {"attention", "indexer", "skip_indexer", "dense"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(v, dsa_parts[i])) r->dsa_part = (int8_t)(i + 1);
    if (!strncmp(v, "all_reduce", 10) || !strcmp(v, "graph") || !strcmp(v, "eager") || !strcmp(v, "custom"))
        r->coll = 1;
    else if (!strcmp(v, "all_gather") || !strcmp(v, "reduce_scatter") || !strcmp(v, "alltoall"))
        r->coll = 2;
    r->coll_eager = !strcmp(v, "eager");
    r->moe_alpha = moe_alpha(q->distribution);
    r->moe_plain = !strcmp(v, "nongated");
    r->kv_bytes = kv_bytes(q->kv_dtype);
    r->coll_bytes = coll_bytes(q->dtype);
}

/* Appends s to out[0..cap) at *n, keeping room for the NUL (snprintf's
 * truncation, without its formatting cost: this runs once per priced op). */
static void variant_put(char *out, size_t cap, size_t *n, const char *s)
{
    while (*s && *n + 1 < cap) out[(*n)++] = *s++;
}

/* The fused-MoE kernel families a set is fitted per ("" = the engine's own
 * MoE op with no family named: TensorRT-LLM's torch flow), in the order an
 * engine takes them when none is named: on Blackwell the TensorRT-LLM-gen
 * kernels (FlashInfer's trtllm backend; TensorRT-LLM's own TRTLLMGen MoE),
 * on Hopper and Ampere Triton's fused_moe (TensorRT-LLM: CUTLASS), then
 * the others; Marlin only for formats no other kernel runs (int4). */
static const char *const MOE_KERNELS_BLACKWELL[] = {"trtllm", "cutlass", "", "triton", "marlin", NULL};
static const char *const MOE_KERNELS_OTHER[] = {"triton", "cutlass", "", "trtllm", "marlin", NULL};
static const char *const MOE_KERNELS_TRTLLM_OTHER[] = {"cutlass", "", "trtllm", "marlin", NULL};

/* Whether v is one of list's non-empty names. */
static int name_in(const char *const *list, const char *v)
{
    for (const char *const *k = list; *k; k++)
        if (**k && !strcmp(v, *k)) return 1;
    return 0;
}

/* A kernel_source substring and the kernel family it names; the first
 * match wins ({NULL, NULL} ends a list). */
typedef struct {
    const char *needle, *kernel;
} kernel_match;

static const char *kernel_match_of(const kernel_match *m, const char *kernel_source)
{
    for (; m->needle; m++)
        if (model_op_name_has(kernel_source, m->needle)) return m->kernel;
    return "";
}

int model_op_moe_kernel_known(const char *v) { return name_in(MOE_KERNELS_OTHER, v); }

int model_op_name_has(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; s && *s; s++)
        if (!strncasecmp(s, needle, n)) return 1;
    return 0;
}

/* vLLM's fused_moe (its A100 table's vllm_fused_moe) is the Triton kernel. */
static const kernel_match MOE_MATCH[] = {{"marlin", "marlin"},   {"triton", "triton"},       {"flashinfer_trtllm", "trtllm"},
                                         {"cutlass", "cutlass"}, {"fused_moe", "triton"}, {NULL, NULL}};

const char *model_op_moe_kernel_of(const char *kernel_source) { return kernel_match_of(MOE_MATCH, kernel_source); }

/* The attention backends the tables measure besides an engine's default
 * one (SGLang's and vLLM's Triton kernels, SGLang's and TensorRT-LLM's
 * FlashInfer backends, vLLM's FlashAttention-4). FlashInfer's TensorRT-LLM
 * kernels are vLLM's default on Blackwell: no kernel of their own. */
static const char *const ATTN_KERNELS[] = {"triton", "flashinfer", "fa4", NULL};
static const kernel_match ATTN_MATCH[] = {
    {"triton", "triton"}, {"flashinfer_trtllm", ""}, {"flashinfer", "flashinfer"}, {"fa4", "fa4"}, {NULL, NULL}};

int model_op_attn_kernel_known(const char *v) { return name_in(ATTN_KERNELS, v); }

/* The block-fp8 GEMM kernels vLLM's tables measure besides its default,
 * DeepGEMM (its CUTLASS and FlashInfer block-scaled kernels): each a set of
 * its own, whose host time and tiles differ. */
static const char *const GEMM_KERNELS[] = {"cutlass", "flashinfer", NULL};
static const kernel_match GEMM_MATCH[] = {
    {"cutlassfp8blockscaled", "cutlass"}, {"flashinferfp8blockscaled", "flashinfer"}, {NULL, NULL}};

int model_op_gemm_kernel_known(const char *v) { return name_in(GEMM_KERNELS, v); }

const char *model_op_gemm_kernel_of(const char *kernel_source) { return kernel_match_of(GEMM_MATCH, kernel_source); }

const char *model_op_attn_kernel_of(const char *kernel_source) { return kernel_match_of(ATTN_MATCH, kernel_source); }

const model_op_paramset *model_op_lookup_moe(const model_gpu *g, const char *table_gpu, const char *backend,
                                             model_op_query *q)
{
    const char *tg = table_gpu ? table_gpu : model_op_table_gpu(g);
    char v[64];
    if (model_op_moe_kernel_known(q->variant) || !strcmp(q->variant, "nongated")) {
        model_op_variant(q, v, sizeof v);
        return model_op_lookup_gpu(tg, backend, v);
    }
    int bw = (tg && !strncmp(tg, "b200", 4)) || (!tg && g && model_gpu_has_tcgen05(g));
    int trt = backend && !strcmp(backend, "trtllm");
    const char *const *order = bw ? MOE_KERNELS_BLACKWELL : trt ? MOE_KERNELS_TRTLLM_OTHER : MOE_KERNELS_OTHER;
    /* The kernel decides the price: the backend's set of it, else another
     * backend's set of the same kernel, before the next kernel. */
    for (const char *const *k = order; *k; k++) {
        snprintf(q->variant, sizeof q->variant, "%s", *k);
        model_op_variant(q, v, sizeof v);
        const model_op_paramset *s = model_op_lookup_gpu(tg, backend, v);
        if (!s && backend && *backend) s = model_op_lookup_gpu(tg, NULL, v);
        if (s) return s;
    }
    q->variant[0] = '\0';
    return NULL;
}

/* "kind:a", "kind:a/b" or "kind:a/b/c" into out (cap > 0), truncated as
 * snprintf would. */
static void variant_join3(char *out, size_t cap, const char *k, const char *a, const char *b, const char *c)
{
    size_t n = 0;
    variant_put(out, cap, &n, k);
    if (a) {
        variant_put(out, cap, &n, ":");
        variant_put(out, cap, &n, a);
    }
    if (b) {
        variant_put(out, cap, &n, "/");
        variant_put(out, cap, &n, b);
    }
    if (c) {
        variant_put(out, cap, &n, "/");
        variant_put(out, cap, &n, c);
    }
    out[n] = '\0';
}

static void variant_join(char *out, size_t cap, const char *k, const char *a, const char *b)
{
    variant_join3(out, cap, k, a, b, NULL);
}

void model_op_variant(const model_op_query *q, char *out, size_t cap)
{
    if (!cap) return;
    const char *k = model_op_kind_name(q->kind);
    switch (q->kind) {
    case MODEL_OPK_GEMM: variant_join(out, cap, k, q->dtype, model_op_gemm_kernel_known(q->variant) ? q->variant : NULL); break;
    case MODEL_OPK_MOE: variant_join(out, cap, k, q->dtype, model_op_moe_kernel_known(q->variant) ? q->variant : NULL); break;
    case MODEL_OPK_CTX_ATTN:
    case MODEL_OPK_GEN_ATTN:
        variant_join3(out, cap, k, q->dtype, q->kv_dtype, model_op_attn_kernel_known(q->variant) ? q->variant : NULL);
        break;
    case MODEL_OPK_CTX_MLA:
    case MODEL_OPK_GEN_MLA: variant_join(out, cap, k, q->dtype, q->kv_dtype); break;
    case MODEL_OPK_CTX_MLA_MODULE:
    case MODEL_OPK_GEN_MLA_MODULE:
    case MODEL_OPK_CTX_DSA_MODULE:
    case MODEL_OPK_GEN_DSA_MODULE:
        /* The dense path (another kernel sequence: MHA prefill, no indexer) is a set of its own. */
        variant_join3(out, cap, k, q->kv_dtype, q->gemm_type, !strcmp(q->variant, "dense") ? "dense" : NULL);
        break;
    case MODEL_OPK_MLA_BMM: variant_join(out, cap, k, q->variant, q->dtype); break;
    case MODEL_OPK_NCCL:
    case MODEL_OPK_CUSTOM_AR:
    case MODEL_OPK_QUANT: variant_join(out, cap, k, q->variant, NULL); break;
    case MODEL_OPK_GDN: variant_join(out, cap, k, q->variant, q->phase); break;
    default: variant_join(out, cap, "?", NULL, NULL); break;
    }
}

/* ---- shared pieces ---------------------------------------------------- */

static double smax(double a, double b) { return cbrt(a * a * a + b * b * b); }

/* Fraction of the SMs a grid of `ctas` equal CTAs keeps busy over its waves. */
static double wave_eff(double ctas, double sms)
{
    if (!(ctas > 0)) return 1;
    double waves = ceil(ctas / sms);
    return ctas / (waves * sms);
}

#define F(x) (q->f[MODEL_OPF_##x])

/* Tiled GEMM m×k · k×n (batch independent ones) on tm×tn output tiles:
 * compute time with wave quantisation over the SMs, memory time, their
 * smooth max. Fewer tiles than SMs: split-K (stream-K) spreads k over idle
 * SMs in s splits of at least 256 k each (at most split_max: 1 for kernels
 * without split-K), and pays for it: every split writes its fp32 partial
 * tile (m×n×4 bytes) and the reduction (or stream-K fix-up) reads them all
 * back, 2·s·m·n·4 bytes more traffic. The kernel takes the s (1, powers of
 * two, the most that fit) that is fastest, so a weight-streaming decode
 * GEMM with small n·m splits wide and one whose partials rival its weights
 * (large m·n against k) splits little (model_gemm_split_pick, which the
 * cost model's roofline shares); a split (s > 1) also pays split_s, its
 * reduction's launch or fix-up pass. Each CTA streams its operand tiles (tn
 * weight columns and tm activation rows per k) at most at cta_bw times the
 * HBM rate's per-SM share (cta_bw 0: unbounded), so a grid of few CTAs over
 * a long k takes waves·k·(tn·wbytes+tm·abytes)/(s·cta_bw·HBM/SMs) whatever
 * the HBM could give. HBM is the kernel's rate bw: the GPU's measured copy
 * rate (model_op_hbm_copy_bw), for the GEMMs and the MLA BMMs alike.
 * split_cost 0 keeps the ideal
 * split (the most splits, no partials): batched GEMMs (MLA BMMs), whose
 * tables the reduction term fits worse. More tiles than SMs: the last wave runs partly empty, but a
 * stream-K kernel spreads sk_wave of that last wave's idle SM time over
 * the busy SMs (waves tiles/S + (1 − sk_wave)·(⌈tiles/S⌉ − tiles/S);
 * sk_wave 0: whole waves). */
typedef struct {
    double peak, eff_tc, eff_mem, k_fill, cta_bw, split_max, split_s, sk_wave;
    int split_cost;
    double bw; /* HBM rate eff_mem and cta_bw are fractions of (bytes/s) */
} gemm_kernel;

static double gemm_tiled(const model_gpu *g, double batch, double m, double n, double k, double wbytes,
                         double abytes, const gemm_kernel *kn, double tm, double tn)
{
    const double S = g->sms;
    double tiles = batch * ceil(m / tm) * ceil(n / tn);
    double flops = 2.0 * batch * ceil(m / tm) * tm * ceil(n / tn) * tn * (k + kn->k_fill);
    double bytes = batch * (n * k * wbytes + m * k * abytes + m * n * 2.0);
    /* One CTA's whole-k operand stream at cta_bw times the HBM rate's per-SM share. */
    double cta_s = kn->cta_bw > 0 ? k * (tn * wbytes + tm * abytes) / (kn->cta_bw * kn->bw / S) : 0;
    if (tiles >= S) {
        double waves = ceil(tiles / S);
        if (kn->sk_wave > 0) waves -= kn->sk_wave * (waves - tiles / S);
        double par = tiles / (waves * S), mpar = par < 1 ? sqrt(par) : 1;
        double tmem = bytes / (kn->bw * kn->eff_mem * mpar), tcta = waves * cta_s;
        return smax(flops / (kn->peak * kn->eff_tc * par), tmem > tcta ? tmem : tcta);
    }
    /* One split's partial, written and read back. */
    const double partial = kn->split_cost ? batch * m * n * 4.0 * 2.0 : 0;
    return model_gemm_split_pick_capped(S, tiles, k, flops / (kn->peak * kn->eff_tc), bytes, kn->bw * kn->eff_mem,
                                        partial, 1, kn->split_max, cta_s, kn->split_s)
        .time_s;
}

/* The GEMM on 128-column tiles of 128 rows (m ≤ 64: 16/32/64). shrink: a
 * grid of those tiles that cannot fill the SMs may instead run on tiles of
 * 64 rows (from 128) and/or 64 columns where that makes more CTAs,
 * whichever is fastest — more, smaller CTAs fill the idle SMs before k is
 * split (the engines' GEMM libraries pick their tile per shape). */
static double gemm_core(const model_gpu *g, double batch, double m, double n, double k, double wbytes, double abytes,
                        const gemm_kernel *kn, int shrink)
{
    double tm = m > 64 ? 128 : m > 32 ? 64 : m > 16 ? 32 : 16;
    double t = gemm_tiled(g, batch, m, n, k, wbytes, abytes, kn, tm, 128);
    const double tiles = batch * ceil(m / tm) * ceil(n / 128);
    if (!shrink || tiles >= g->sms) return t;
    const double tms[2] = {tm, tm > 64 ? 64 : tm}, tns[2] = {128, 64};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            /* Only a shape that makes more CTAs: one that does not would just
             * read the same operands in smaller boxes. */
            if (batch * ceil(m / tms[i]) * ceil(n / tns[j]) <= tiles) continue;
            double c = gemm_tiled(g, batch, m, n, k, wbytes, abytes, kn, tms[i], tns[j]);
            if (c < t) t = c;
        }
    return t;
}

/* TensorRT-LLM's GEMM table runs the per-tensor fp8 linear through the
 * torch ops its quantise tables time (kernel sources torch_flow and
 * torch_ops; the free fit found its quantisation at 0.54 of HBM on B200,
 * the quantise tables' passes combine to 0.49). vLLM's compute_scale rows
 * are a difference of two kernels (dynamic per-token minus static) and its
 * GEMM table's quantisation moves data at a third of the rate its quantise
 * passes reach (0.25 against 0.76 of B200's datasheet HBM rate): another
 * path, not held (held, its B200 set's median error goes from 6 to 23 %).
 * SGLang has no compute_scale set. */
int model_op_gemm_quant_held(const char *backend, const char *variant)
{
    return backend && variant && !strcmp(backend, "trtllm") && !strcmp(variant, "gemm:fp8");
}

uint32_t model_op_gemm_quant_set(const double *compute_scale, const double *scale_matrix, double *p)
{
    /* t_quant: compute_scale reads 2 bytes an element, scale_matrix 3, at
     * fractions of the measured copy rate; the GEMM's quantisation term
     * moves their 5 at one fraction of the same rate (t_gemm). */
    p[GEMM_QUANT_US] = compute_scale[0] + scale_matrix[0];
    double q = 5.0 / (2.0 / compute_scale[1] + 3.0 / scale_matrix[1]);
    const model_op_param_info *pi = &P_GEMM[GEMM_QUANT_MEM];
    p[GEMM_QUANT_MEM] = q < pi->lo ? pi->lo : q > pi->hi ? pi->hi : q;
    return 1u << GEMM_QUANT_US | 1u << GEMM_QUANT_MEM;
}

/* 0.9: the share of its datasheet HBM rate Hopper's measured copy reaches
 * (H200: 4.3 of 4.8 TB/s, ../shared/gpu-specs.md), taken for a GPU whose
 * catalogue file gives no hbm_copy_tbps. */
#define HBM_COPY_DEFAULT 0.9

double model_op_hbm_copy_bw(const model_gpu *g)
{
    return g->hbm_copy_bw > 0 ? g->hbm_copy_bw : HBM_COPY_DEFAULT * g->hbm_bw;
}

/* P_COMM's host_us: the parameter an eager custom all-reduce alone reads. */
#define COMM_HOST_US 6

uint32_t model_op_params_unused(const model_op_query *q)
{
    if (q->kind != MODEL_OPK_NCCL && q->kind != MODEL_OPK_CUSTOM_AR) return 0;
    model_op_resolved r;
    model_op_resolve(q, &r);
    return r.coll_eager ? 0 : 1u << COMM_HOST_US;
}

double model_op_coll_lat(const model_gpu *g)
{
    return g->coll_lat_s > 0 ? g->coll_lat_s : g->comm_base_s + 2.0 * g->nvlink_step_s;
}

double model_op_coll_bw(const model_gpu *g)
{
    if (g->nvlink_bw > 0) return g->nvlink_bw * g->eff_nvlink;
    return model_gpu_pcie_bw(g) > 0 ? model_gpu_pcie_bw(g) : g->nic_bw * g->eff_nic;
}

/* Causal query·key pairs of one sequence of s tokens under window w (0 = none). */
static double causal_pairs(double s, double w)
{
    if (w > 0 && w < s) return w * (w + 1) / 2 + (s - w) * w;
    return s * (s + 1) / 2;
}

/* ---- families --------------------------------------------------------- */

static double t_gemm(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p,
                     const op_fmt *f)
{
    double m = F(M), n = F(N), k = F(K);
    /* sk_wave (p[9]) 0: a set fitted before the stream-K wave and the tile shrink, priced as it was. */
    const gemm_kernel kn = {f->peak, p[1], p[2], p[3], p[6], p[7], p[8] * US, p[9], 1, model_op_hbm_copy_bw(g)};
    double t = p[0] * US + gemm_core(g, 1, m, n, k, f->wbytes, f->abytes, &kn, p[9] > 0);
    /* Dynamic activation quantisation: amax pass (bf16 read) + scale pass
     * (bf16 read, quantised write) over m×k, at quant_mem of the measured
     * copy rate as the GEMM's own bytes are (the datasheet's before:
     * H100's fraction priced B200's passes 1.19x too fast). */
    if (f->quant_acts && !r->fused_quant)
        t += p[GEMM_QUANT_US] * US + m * k * (2.0 + 2.0 + f->abytes) / (model_op_hbm_copy_bw(g) * p[GEMM_QUANT_MEM]);
    /* host_us: the tables time calls back to back without CUDA
     * graphs, so a call whose host work outlasts its kernels measures the
     * host (vLLM's block-fp8 GEMMs: 150-200 us a call on B200 whatever the
     * shape below m = 1024). Only a table row is priced so. */
    if (q->table_timing && p[GEMM_HOST_US] * US > t) t = p[GEMM_HOST_US] * US;
    return t;
}

/* Context attention's tiling (P_CTX_ATTN's last three; all 0 for the
 * MLA and DSA prefill kernels, priced without them). */
typedef struct {
    double exp_eff; /* fraction of the SFU exponential rate (0: exponentials not priced) */
    double q_tile;  /* query rows of one MMA tile (0: exact pairs, no longest-CTA bound) */
    double kv_keys; /* keys of one block of the key loop (0: a window's span priced exact) */
} ctx_tiling;

static const ctx_tiling CTX_UNTILED = {0, 0, 0};

/* Context attention (also MLA prefill with its head dims). */
static double t_ctx_attn(const model_gpu *g, double b, double s, double prefix, double heads, double kvh, double dqk,
                         double dv, double window, double peak, double kvb, const ctx_tiling *tl,
                         const double *p)
{
    const double S = g->sms, exp_eff = tl->exp_eff, q_tile = tl->q_tile;
    /* New tokens see the cached prefix (window-capped) and the causal chunk. */
    double seen = window > 0 && window < prefix ? window : prefix;
    double pairs = b * (causal_pairs(s, window) + s * seen);
    /* Tiles of q_tile rows (P_CTX_ATTN's q_tile; 0: exact pairs, no tile bound): a
     * tile on the causal diagonal scores its whole square, a windowed tile
     * every key of its rows' union (q_tile - 1 more per row). */
    const double rows = q_tile < s ? q_tile : s, keys = window > 0 && window < s + seen ? window : s + seen;
    const int windowed = keys < s + seen;
    if (q_tile > 0) pairs += b * s * (rows - 1) * (windowed ? 1.0 : 0.5);
    /* A windowed tile's key span starts at any key, so its loop walks it in
     * (span - 1) / kv_keys + 1 blocks on average: kv_keys - 1 keys more
     * per row (a causal tile's span starts at key 0, on a block edge). */
    const double blk = windowed && tl->kv_keys > 1 ? tl->kv_keys - 1 : 0;
    pairs += b * s * blk;
    double flops = 2.0 * heads * (dqk + dv) * pairs;
    double ctas = b * heads * ceil(s / 128);
    double tc = flops / (peak * p[1] * wave_eff(ctas, S));
    double bytes = b * s * (heads * (dqk + dv) * 2.0 + kvh * (dqk + dv) * kvb) + b * seen * kvh * (dqk + dv) * kvb;
    double tmm = bytes / (g->hbm_bw * p[3]);
    /* The softmax's exponentials (P_CTX_ATTN's eff_exp; exp_eff 0: none). */
    const double sfu = (g->flops_fp32 > 0 ? g->flops_fp32 : g->flops_bf16 / 16) / 16;
    if (exp_eff > 0) tc = smax(tc, heads * pairs / (sfu * exp_eff * wave_eff(ctas, S)));
    /* The grid lasts at least its longest CTA: a sequence's last tile
     * against every key it sees, on one SM. */
    if (q_tile > 0) {
        double one = rows * (keys + rows - 1 + blk), tlong = 2.0 * (dqk + dv) * one / (peak * p[1] / S);
        if (exp_eff > 0) tlong = smax(tlong, one / (sfu * exp_eff / S));
        tc = smax(tc, tlong);
    }
    return p[0] * US + (ctas * p[2] + b * p[4]) * US / S + smax(tc, tmm);
}

/* Grid of a decode kernel beyond one CTA per request × KV head taking
 * every query head and splitting the cache over idle SMs (all fields 0):
 * `tiles` CTAs per request, each serving `tile_heads` query heads (the
 * tensor-core tile: fewer heads are padded to it) and reading the
 * request's whole cache; the cache read in steps of `kv_tile` tokens (a
 * part step costs a whole one); at most `split_max` splits (0: no cap;
 * below 2 none: a grid of CTAs that walk whole caches runs in whole
 * waves); `overlap` of the per-CTA work runs under the cache stream
 * (0: all of it added to the stream). */
typedef struct {
    double tiles, tile_heads, kv_tile, split_max, l2_gain, overlap;
    double splits; /* > 0: the kernel's own split count (fa2_splits), its CTAs run in whole waves; 0: the rule above */
    double cta_bw; /* with splits: a lone CTA's cache rate, in multiples of its SM's share of HBM (0: 1) */
} gen_grid;

/* FlashAttention-2's split-KV count for a decode grid of `ctas` CTAs over a
 * cache of `blocks` key blocks: none when the grid nearly fills the CTA
 * slots (0.8 of them; two 4-warp CTAs an SM), else the fewest splits (at
 * most 128, the slots or the blocks) whose wave efficiency reaches 0.85 of
 * the best, counting only split counts that change the blocks per split. */
static double fa2_splits(double ctas, double slots, double blocks)
{
    if (ctas >= 0.8 * slots) return 1;
    int most = (int)fmin(fmin(128, slots), blocks), nb = (int)blocks;
    if (most < 1) return 1;
    double eff[128], best = 0;
    for (int s = 1; s <= most; s++) {
        int ok = s == 1 || (nb + s - 1) / s != (nb + s - 2) / (s - 1);
        double waves = ctas * s / slots;
        eff[s - 1] = ok ? waves / ceil(waves) : 0;
        if (eff[s - 1] > best) best = eff[s - 1];
    }
    for (int s = 1; s <= most; s++)
        if (eff[s - 1] > 0 && eff[s - 1] >= 0.85 * best) return s;
    return 1;
}

/* Generation attention: one query token per request against ctx cached
 * tokens; split-KV spreads long contexts over idle SMs. `ctas` CTAs (one
 * per request × KV head for the grouped kernels) share `peak` at p[1]. */
static double gen_attn_grid(const model_gpu *g, double b, double ctx, double heads, double ctas, double dqk,
                            double dv, double kv_tok_bytes, double peak, const double *p, const gen_grid *gr)
{
    const double S = g->sms;
    if (gr->kv_tile > 0) ctx = ceil(ctx / gr->kv_tile) * gr->kv_tile;
    double splits = ctas < S ? floor(S / ctas) : 1, smax_split = ceil(ctx / 256);
    if (splits > smax_split) splits = smax_split;
    if (gr->split_max > 0 && splits > floor(gr->split_max)) splits = floor(gr->split_max);
    if (splits < 1) splits = 1;
    if (gr->splits > 0) splits = gr->splits;
    /* CTAs that cannot split run whole waves of whole caches, as do those of a kernel's own split count. */
    int whole = (gr->split_max > 0 && gr->split_max < 2) || gr->splits > 0;
    double par = whole ? wave_eff(ctas * splits, S) : ctas * splits < S ? ctas * splits / S : 1;
    double reads = gr->tiles > 1 ? gr->tiles : 1, mma = gr->tiles * gr->tile_heads;
    double kv = reads * b * ctx * kv_tok_bytes;
    /* A cache that fits in L2 is read from there at l2_gain times the HBM rate. */
    if (gr->l2_gain > 0 && kv <= g->l2_bytes) kv /= gr->l2_gain;
    double bytes = kv + b * heads * (dqk + dv) * 2.0;
    /* A grid of the kernel's own split count that leaves SMs idle: each CTA
     * streams at cta_bw times its SM's share, up to the whole HBM rate. */
    double mpar = gr->splits > 0 && gr->cta_bw > 0 && ctas * splits < S ? fmin(1, gr->cta_bw * ctas * splits / S) : par;
    double tmm = bytes / (g->hbm_bw * p[3] * mpar);
    double flops = 2.0 * b * (mma > heads ? mma : heads) * (dqk + dv) * ctx;
    double tc = flops / (peak * p[1] * par);
    /* The CTAs' fixed work; `overlap` of it hides under the stream and the
     * MMAs (other CTAs' loads in flight during one's set-up), the rest adds. */
    const double cta = ceil(ctas / S) * S * p[2] / S, ov = gr->overlap;
    double stream = smax(tc, tmm);
    if (ov > 0) stream = smax(stream, ov * cta * US);
    return p[0] * US + ((1 - ov) * cta + b * p[4] / S) * US + stream;
}

static double gen_attn_core(const model_gpu *g, double b, double ctx, double heads, double ctas, double dqk, double dv,
                            double kv_tok_bytes, double peak, const double *p, double l2_gain, double overlap,
                            double splits, double cta_bw)
{
    const gen_grid plain = {0, 0, 0, 0, l2_gain, overlap, splits, cta_bw};
    return gen_attn_grid(g, b, ctx, heads, ctas, dqk, dv, kv_tok_bytes, peak, p, &plain);
}

static double t_gen_attn(const model_gpu *g, double b, double ctx, double heads, double kvh, double dqk, double dv,
                         double kv_tok_bytes, double peak, const double *p)
{
    return gen_attn_core(g, b, ctx, heads, b * kvh, dqk, dv, kv_tok_bytes, peak, p, 0, 0, 0, 0);
}

/* GQA/MHA decode (P_GEN_ATTN): the grouped kernel (one CTA per request ×
 * KV head, its query heads on the tensor cores) serves head groups up to
 * grp_max; larger groups (TensorRT-LLM beyond its XQA kernels' group sizes)
 * run a kernel of one CTA per request × query head with its dot products
 * on the CUDA cores (eff_cc of the FP32 peak), the KV of a shared head
 * re-read from L2. A steep logistic in log(group / grp_max) joins the two,
 * so the fit can move grp_max. Both kernels walk the cache in steps of
 * kv_step tokens (a shorter cache costs about one step) and hide
 * cta_overlap of their per-CTA work under the stream. */
static double t_gqa_decode(const model_gpu *g, double b, double ctx, double heads, double kvh, double d,
                           double kv_tok_bytes, const double *p)
{
    const double grp = heads / kvh;
    /* swap_us (p[11]; 0: none) marks FlashAttention-2's decode: it runs a KV
     * head's query group as the rows of 64-row query tiles, q reshaped
     * (batch, KV heads, group) -> (batch, group, KV heads) and the output
     * back, two copy kernels each reading and writing b x heads x d bf16
     * unless the transpose is a view (one request or one KV head); it splits
     * the cache (key blocks of 128 tokens at head_dim 128) by its own count
     * (fa2_splits), and only a grouped query (MHA: none). */
    const int fa2 = p[11] > 0;
    double splits = 0;
    if (fa2)
        splits = grp > 1 ? fa2_splits(b * kvh * ceil(grp / 64), 2 * g->sms, ceil(ctx / (d <= 64 ? 256 : d <= 128 ? 128 : 64)))
                         : 1;
    /* A cache shorter than one step of the loop costs about one step. */
    if (p[10] > 0) ctx = smax(ctx, p[10]);
    double grouped = gen_attn_core(g, b, ctx, heads, b * kvh, d, d, kv_tok_bytes, g->flops_bf16, p, p[8], p[9], splits, p[12]);
    /* head_us (0 in sets fitted before it): per request × query head. */
    double rows = b * heads * p[7] * US / g->sms;
    double w = 1.0 / (1.0 + pow(p[5] / grp, 8.0));
    if (fa2 && b > 1 && kvh > 1 && grp > 1) rows += p[11] * US + 8.0 * b * heads * d / (g->hbm_bw * p[3]);
    if (w < 1e-9) return grouped + rows;
    double cc[5] = {p[0], p[6], p[2], p[3], p[4]};
    double fp32 = g->flops_fp32 > 0 ? g->flops_fp32 : g->flops_bf16 / 16;
    double perhead = gen_attn_core(g, b, ctx, heads, b * heads, d, d, kv_tok_bytes, fp32, cc, p[8], p[9], 0, 0);
    return (1 - w) * grouped + w * perhead + rows;
}

/* The format of an MLA or DSA module's projection GEMMs (gemm_type as
 * resolved): 0, or non-zero with err set when it is unknown. */
static int module_gemm_fmt(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, op_fmt *f,
                           sim_err *err)
{
    if (!fmt_of(g, r->gemm_fmt, f)) return 0;
    sim_err_set(err, SIM_EINVAL, "unknown gemm_type '%s'", q->gemm_type);
    return 1;
}

/* Weights an MLA block's projections multiply per token (h heads): q_a,
 * kv_a, q_b, then prefill kv_b (latent → per-head K/V) or decode the
 * absorbs (W_UK, W_UV), and o. */
static double mla_proj(double H, double QL, double KL, double RO, double NO, double V, double h, int ctx)
{
    double up = ctx ? KL * h * (NO + V) : 2.0 * h * NO * KL;
    return H * QL + H * (KL + RO) + QL * h * (NO + RO) + up + h * V * H;
}

static double t_mla_module(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p,
                           int ctx_phase, sim_err *err)
{
    op_fmt gf;
    if (module_gemm_fmt(g, q, r, &gf, err)) return 0;
    double h = F(HEADS), b = F(BATCH), s = F(ISL), kvb = r->kv_bytes;
    double ap[5] = {0, p[1], p[2], p[3], 0};
    double attn, tokens, wproj;
    if (ctx_phase) {
        tokens = b * s;
        attn = t_ctx_attn(g, b, s, 0, h, h, MLA_NOPE + MLA_ROPE, MLA_V, 0, g->flops_bf16, 2, &CTX_UNTILED, ap);
        /* q_a, kv_a, q_b, kv_b (latent → per-head K/V), o per token. */
        wproj = mla_proj(MLA_HIDDEN, MLA_Q_LORA, MLA_KV_LORA, MLA_ROPE, MLA_NOPE, MLA_V, h, 1);
    } else {
        double ctx = s + F(STEP);
        tokens = b;
        attn = t_gen_attn(g, b, ctx, h, 1, MLA_KV_LORA + MLA_ROPE, MLA_KV_LORA, (MLA_KV_LORA + MLA_ROPE) * kvb,
                          g->flops_bf16, ap);
        /* q_a, kv_a, q_b, absorbs (W_UK, W_UV), o. */
        wproj = mla_proj(MLA_HIDDEN, MLA_Q_LORA, MLA_KV_LORA, MLA_ROPE, MLA_NOPE, MLA_V, h, 0);
    }
    double tc = 2.0 * tokens * wproj / (gf.peak * p[4]);
    double tmm = (wproj * gf.wbytes + tokens * MLA_HIDDEN * 2.0 * 4) / (g->hbm_bw * p[3]);
    return p[0] * US + attn + smax(tc, tmm);
}

/* Sparse MLA prefill (FlashMLA's sparse kernel and its kin): one CTA per
 * query token and block of DSA_HEAD_BLOCK query heads (fewer heads are
 * padded to the block) walks the query's index list of `topk` slots in the
 * latent space (q·k over kv_lora + rope, p·v over kv_lora). A query at
 * position j has min(j, topk) keys to attend; the share `fill` (p[8]) of
 * the list's empty slots is walked as well (1: Hopper's FlashMLA, whose
 * time is the query count's, not the context's; 0: a kernel that stops at
 * the list's end). p[1] the fraction of the bf16 peak the CTAs reach, p[2]
 * a CTA's fixed work (SM·µs); whole waves over the SMs. b requests of s
 * new tokens after `prefix` cached ones. */
static double t_dsa_sparse_prefill(const model_gpu *g, double b, double s, double prefix, double h, double topk,
                                   double dqk, double dv, const double *p)
{
    const double S = g->sms, tokens = b * s;
    double blocks = ceil(h / DSA_HEAD_BLOCK), ctas = tokens * blocks;
    /* Keys over the new tokens: sum of min(j, topk) for j in (prefix, prefix + s]. */
    double keys = b * (causal_pairs(prefix + s, topk) - causal_pairs(prefix, topk));
    double slots = keys + p[8] * (tokens * topk - keys);
    double flops = 2.0 * DSA_HEAD_BLOCK * blocks * slots * (dqk + dv);
    double tc = flops / (g->flops_bf16 * p[1] * wave_eff(ctas, S));
    return tc + ceil(ctas / S) * p[2] * US;
}

/* A DSA module's kernels issued by the host in host_us µs while they run
 * for gpu_s: the longer of the two hides the other (smooth max); host_us 0
 * (sets fitted before the term) leaves the GPU time alone. Only a table
 * row (q->table_timing: the tables time eager calls) pays the host: the
 * cost model prices the GPU time, the engine's host work being its own
 * (CUDA graphs, the presets' eager floor), as GEMM's host_us. */
static double dsa_host(const model_op_query *q, double host_us, double gpu_s)
{
    return q->table_timing && host_us > 0 ? smax(host_us * US, gpu_s) : gpu_s;
}

/* DeepSeek sparse attention module (num_heads per TP rank; the geometry
 * fields default to DeepSeek-V3.2's; the indexer is replicated on every
 * rank): the MLA projections
 * plus the indexer's (q from the q latent, one key and the per-head weights
 * from the hidden state), the indexer scoring every cached key with every
 * query (2·64·128 FLOPs per pair at the fp8 peak, the fp8 keys read, one
 * fp32 logit per pair written and read by the top-k, and the top-k's
 * selection per query row whose context exceeds the top-k), and the MLA
 * attention:
 * prefill the sparse kernel over the whole top-k list per query
 * (t_dsa_sparse_prefill), decode the latent cache of at most DSA_TOPK keys
 * per request. r->dsa_part selects the sparse attention alone (with the
 * floor) or the indexer alone, for the cost model's ops of the same names,
 * the module without its indexer (the tables' *_skip_indexer rows: layers
 * reusing another's top-k), or the dense path (SGLang's prefill of contexts
 * within the top-k: dense MHA over the causal keys, no indexer). */
static double t_dsa_module(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p,
                           int ctx_phase, sim_err *err)
{
    op_fmt gf;
    if (module_gemm_fmt(g, q, r, &gf, err)) return 0;
#define GEO(x, d) (F(x) > 0 ? F(x) : (d))
    const double H = GEO(HIDDEN, MLA_HIDDEN), QL = GEO(Q_LORA, MLA_Q_LORA), KL = GEO(KV_LORA, MLA_KV_LORA);
    const double RO = GEO(ROPE, MLA_ROPE), NO = GEO(NOPE, MLA_NOPE), V = GEO(V_HEAD, MLA_V);
    const double IH = GEO(IDX_HEADS, DSA_IDX_HEADS), ID = GEO(IDX_DIM, DSA_IDX_DIM), TK = GEO(IDX_TOPK, DSA_TOPK);
#undef GEO
    const double h = F(HEADS), b = F(BATCH), s = F(ISL), kvb = r->kv_bytes;
    const double p8 = g->flops_fp8 > 0 ? g->flops_fp8 : g->flops_bf16;
    const int dense = r->dsa_part == 4;
    double ap[5] = {0, p[1], p[2], p[3], 0};
    double attn, tokens, wproj, pairs, keys, rows;
    const double widx = QL * IH * ID + H * (ID + IH);
    if (ctx_phase) {
        tokens = b * s;
        if (dense) /* per-head K/V expanded from the latent in bf16, all causal keys */
            attn = t_ctx_attn(g, b, s, F(STEP), h, h, NO + RO, V, 0, g->flops_bf16, 2, &CTX_UNTILED, ap);
        else
            attn = t_dsa_sparse_prefill(g, b, s, F(STEP), h, TK, KL + RO, KL, p);
        wproj = mla_proj(H, QL, KL, RO, NO, V, h, 1);
        pairs = b * (causal_pairs(s, 0) + s * F(STEP));
        keys = b * (s + F(STEP));
        /* Query rows whose context passes the top-k: new tokens at positions beyond TK. */
        rows = b * fmax(0, s + F(STEP) - fmax(F(STEP), TK));
    } else {
        double ctx = s + F(STEP);
        if (!(ctx > 0)) ctx = 1;
        tokens = b;
        attn = t_gen_attn(g, b, ctx < TK ? ctx : TK, h, 1, KL + RO, KL, (KL + RO) * kvb, g->flops_bf16, ap);
        wproj = mla_proj(H, QL, KL, RO, NO, V, h, 0);
        pairs = b * ctx;
        keys = b * ctx;
        rows = ctx > TK ? b : 0;
    }
    double itc = 2.0 * IH * ID * pairs / (p8 * p[5]);
    double imm = (keys * ID * (1.0 + 4.0 / 128.0) + pairs * 4.0 * 2.0) / (g->hbm_bw * p[3]);
    /* Prefill scores the batch's new tokens against the concatenation of
     * every request's keys: a [tokens, keys] fp32 logit buffer of which a
     * query owns its request's causal slots; p[10] bytes of HBM traffic per
     * other slot (0: none; decode's buffer is per request). */
    double span = ctx_phase && p[10] > 0 ? p[10] * fmax(0, tokens * keys - pairs) / g->hbm_bw : 0;
    /* skip_indexer: a layer that reuses another layer's top-k selection. */
    const int has_idx = r->dsa_part < 3;
    /* The top-k's selection per query row with more keys than it keeps (p[9] SM·µs; 0: none). */
    double indexer = has_idx ? smax(itc, imm) + rows * p[9] * US / g->sms + span : 0;
    if (r->dsa_part == 1) return p[0] * US + dsa_host(q, p[6], attn);
    if (r->dsa_part == 2) return dsa_host(q, p[7], indexer);
    if (!dense) wproj += widx;
    double tc = 2.0 * tokens * wproj / (gf.peak * p[4]);
    double tmm = (wproj * gf.wbytes + tokens * H * 2.0 * 4) / (g->hbm_bw * p[3]);
    /* A prefill table row past DSA_META_PREFIX cached tokens times the
     * backend's metadata build too: host time, p[11] µs plus p[12] µs per
     * request (0: none), on the host's side of dsa_host (a table row only). */
    double meta = ctx_phase && F(STEP) > DSA_META_PREFIX ? p[11] + p[12] * b : 0;
    return p[0] * US + dsa_host(q, p[6] + (has_idx ? p[7] : 0) + meta, attn + indexer + smax(tc, tmm));
}

void model_op_moe_cap_rows(double *rows, int32_t n, double cap)
{
    /* Each pass caps the experts over `cap` and spreads their excess over
     * the others in proportion to their rows; an expert a pass pushes over
     * the cap is capped by the next, so at most n passes. */
    for (int32_t pass = 0; pass < n; pass++) {
        double excess = 0, below = 0;
        for (int32_t i = 0; i < n; i++)
            if (rows[i] > cap) excess += rows[i] - cap, rows[i] = cap;
        if (!(excess > 0)) return;
        for (int32_t i = 0; i < n; i++)
            if (rows[i] < cap) below += rows[i];
        if (!(below > 0)) return; /* every expert full: the excess has nowhere to go */
        for (int32_t i = 0; i < n; i++)
            if (rows[i] < cap) rows[i] += excess * rows[i] / below;
    }
}

/* Inverse CDF of the power law x^(−a) on [lo, hi] at u ∈ [0, 1]. */
static double power_law_inv(double u, double a, double lo, double hi)
{
    if (fabs(a - 1) < 1e-9) return lo * pow(hi / lo, u);
    double e = 1 - a, l = pow(lo, e), h = pow(hi, e);
    return pow((h - l) * u + l, 1 / e);
}

#define MOE_MAX_EXPERTS 4096
/* P_MOE's local_wl: how a table's EP rows were measured, not the kernel. */
#define MOE_LOCAL_WL 13
/* Random placements averaged for the busiest rank's expected load. */
#define MOE_DRAWS 16

/* Tokens of the balanced generator with at least one pick on rank 0
 * (experts [0, El)): token i picks (i + j·⌈E/k⌉) mod E, or, with fewer
 * tokens than ⌈E/k⌉, ⌊(i·⌈E/k⌉/T + j·⌈E/k⌉) mod E⌋; the first pattern
 * repeats every E tokens. */
static double balanced_served(double T, double K, double E, double El)
{
    const double stride = ceil(E / K);
    const int32_t k = (int32_t)K, n = (int32_t)E;
    if (T < stride) {
        double s = 0;
        for (int32_t i = 0; i < (int32_t)T; i++) {
            int hit = 0;
            for (int32_t j = 0; j < k && !hit; j++) hit = floor(fmod(i * stride / T + j * stride, E)) < El;
            s += hit;
        }
        return s;
    }
    double s = 0;
    for (int32_t r = 0; r < n && r < T; r++) {
        int hit = 0;
        for (int32_t j = 0; j < k && !hit; j++) hit = fmod(r + j * stride, E) < El;
        if (hit) s += floor((T - 1 - r) / E) + 1;
    }
    return s;
}

/* Tokens with a pick on a rank that receives `pairs` of the T·k pairs,
 * its hottest expert `hot` rows: picks taken as independent, but never
 * fewer tokens than the hottest expert's rows (a token picks an expert
 * once) nor more than the tokens or the pairs. */
static double power_law_served(double T, double K, double pairs, double hot)
{
    double s = T * (1 - pow(fmax(0, 1 - pairs / (T * K)), K));
    return fmin(fmin(T, pairs), fmax(s, hot));
}

void model_op_moe_load_of(double T, double K, double E, double ep, double alpha, model_op_moe_load *out)
{
    memset(out, 0, sizeof *out);
    if (!(T > 0) || !(K > 0) || !(E > 0)) return;
    if (!(ep >= 1)) ep = 1;
    if (ep > E) ep = E;
    const double P = T * K, El = E / ep;
    out->seen_pairs = P;
    out->small_m = T <= El;
    if (alpha <= 0 || E > MOE_MAX_EXPERTS) {
        /* Balanced: every expert gets P/E rows; fewer picks than experts
         * touch P distinct experts, P/ep of them on this rank. */
        double per = P / E;
        out->pairs = P / ep;
        out->touched = per >= 1 ? El : ceil(P / ep);
        if (out->touched < 1) out->touched = 1;
        if (out->touched > El) out->touched = El;
        double rows = out->pairs / out->touched;
        out->tile_m = rows > 64 ? 128 : 64;
        double lo = floor(rows), frac = rows - lo;
        out->row_tiles = out->touched * ((1 - frac) * ceil(lo / out->tile_m) + frac * ceil((lo + 1) / out->tile_m));
        if (out->row_tiles < out->touched) out->row_tiles = out->touched;
        out->hot = ceil(rows);
        out->served = ep > 1 ? balanced_served(T, K, E, floor(El)) : T;
        return;
    }
    const int32_t n = (int32_t)E, step = (int32_t)ep;
    double lo = P > E ? 1.0 : 0.01, hi = P > E ? 0.8 * T : 2.0;
    if (hi <= lo) hi = lo * 1.0001;
    double c[MOE_MAX_EXPERTS], sum = 0;
    for (int32_t i = 0; i < n; i++) {
        c[i] = power_law_inv(1.0 - (i + 0.5) / E, alpha, lo, hi); /* descending */
        sum += c[i];
    }
    /* Scaled to P pairs, no expert past T rows (model_op_moe_cap_rows),
     * rounded to whole rows; the rounding's deficit goes to the hottest
     * experts below T, its surplus comes off the coldest non-empty. */
    for (int32_t i = 0; i < n; i++) c[i] = c[i] / sum * P;
    model_op_moe_cap_rows(c, n, T);
    double tot = 0;
    for (int32_t i = 0; i < n; i++) tot += c[i] = fmin(nearbyint(c[i]), floor(T));
    int32_t delta = (int32_t)(P - tot);
    for (int32_t i = 0, spins = 0; delta > 0 && spins < 2 * n; i = (i + 1) % n, spins++)
        if (c[i] + 1 <= T) c[i] += 1, delta--;
    for (int32_t i = n - 1; delta < 0 && i >= 0; i--)
        while (delta < 0 && c[i] > 0) c[i] -= 1, delta++;
    /* The busiest rank: the generator places the experts at random and
     * measures the rank with the most pairs. Its expectation, over
     * MOE_DRAWS placements of the profile by a fixed-seed shuffle
     * (deterministic; no placement with ep = 1). */
    double pairs = 0, touched = 0, t64 = 0, t128 = 0, hot = 0;
    const int32_t draws = step > 1 ? MOE_DRAWS : 1, El_i = n / step;
    int32_t perm[MOE_MAX_EXPERTS];
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (int32_t d = 0; d < draws; d++) {
        for (int32_t i = 0; i < n; i++) perm[i] = i;
        for (int32_t i = n - 1; draws > 1 && i > 0; i--) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            int32_t j = (int32_t)(rng % (uint64_t)(i + 1)), t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        double best = -1, bt = 0, b64 = 0, b128 = 0, bh = 0;
        for (int32_t r = 0; r < step; r++) {
            double sp = 0, st = 0, s64 = 0, s128 = 0, sh = 0;
            for (int32_t j = r * El_i; j < (r + 1) * El_i; j++) {
                double x = c[perm[j]];
                sp += x, st += x > 0, s64 += ceil(x / 64), s128 += ceil(x / 128);
                if (x > sh) sh = x;
            }
            if (sp > best) best = sp, bt = st, b64 = s64, b128 = s128, bh = sh;
        }
        pairs += best, touched += bt, t64 += b64, t128 += b128, hot += bh;
    }
    pairs /= draws, touched /= draws, t64 /= draws, t128 /= draws, hot /= draws;
    if (touched < 1) touched = 1;
    out->pairs = pairs > 0 ? pairs : 1;
    out->touched = touched;
    out->tile_m = out->pairs / touched > 64 ? 128 : 64;
    double tiles = out->tile_m > 64 ? t128 : t64;
    out->row_tiles = tiles > 1 ? tiles : 1;
    out->hot = hot > 1 ? hot : 1;
    out->served = step > 1 ? power_law_served(T, K, out->pairs, out->hot) : T;
}

double model_op_moe_time_load(const model_gpu *g, const model_op_query *q, const model_op_resolved *r,
                              const double *p, const model_op_moe_load *ld, sim_err *err)
{
    op_fmt fm;
    if (fmt_of(g, r->fmt, &fm)) {
        sim_err_set(err, SIM_EINVAL, "moe: unknown dtype '%s'", q->dtype);
        return 0;
    }
    if (!(F(HIDDEN) > 0) || !(F(INTER) > 0) || !(ld->pairs > 0) || !(ld->touched > 0) || !(ld->row_tiles > 0)) {
        sim_err_set(err, SIM_EINVAL, "moe: hidden_size, inter_size and the load must be > 0");
        return 0;
    }
    const op_fmt *f = &fm;
    const double S = g->sms, bw = model_op_hbm_copy_bw(g);
    double H = F(HIDDEN), I = F(INTER);
    double tp = F(MOE_TP) > 0 ? F(MOE_TP) : 1;
    double Ir = I / tp, pairs = ld->pairs, touched = ld->touched, tm = ld->tile_m > 0 ? ld->tile_m : 64;
    double mt = ld->row_tiles; /* row tiles over the touched experts */
    /* A table measured as the rank's own workload (local_wl of its EP rows;
     * 0: none, and never for the cost model's load, which has no served
     * count): the kernel's batch is the served tokens alone, and their
     * picks of other ranks' experts, clamped to local expert 0 at zero
     * weight, run as that expert's GEMM rows. */
    const double K = F(TOPK) > 0 ? F(TOPK) : 1;
    double masked = 0, seen = ld->seen_pairs;
    if (p[MOE_LOCAL_WL] > 0 && ld->served > 0) {
        masked = p[MOE_LOCAL_WL] * fmax(0, ld->served * K - pairs);
        seen -= p[MOE_LOCAL_WL] * fmax(0, seen - ld->served * K);
        mt += ceil(masked / tm);
    }
    const double rp = pairs + masked; /* rows the GEMMs gather and scatter */
    /* Two grouped GEMMs: gate+up (n = 2·Ir, k = H; up alone, n = Ir, for
     * non-gated experts) and down (n = H, k = Ir); tiles padded to 128 in
     * n, each tile's mainloop pays k_fill. */
    const double up = r->moe_plain ? 1.0 : 2.0;
    double t1 = mt * ceil(up * Ir / 128), t2 = mt * ceil(H / 128);
    /* Rows the tensor cores compute: whole row tiles; with p[10] > 0 and
     * no more than 64 rows an expert, each touched expert's last tile
     * computes p[10] rows (the kernel's small-batch row block), not 64,
     * but no fewer rows than the pairs (64: the whole tiles again; the
     * tile count, and so the waves and the weight stream's busy
     * fraction, is unchanged). */
    double rows = mt * tm;
    if (p[10] > 0 && tm <= 64) rows = fmax(rp, rows - touched * (tm - p[10]));
    double f1 = 2.0 * rows * ceil(up * Ir / 128) * 128 * (H + p[3]);
    double f2 = 2.0 * rows * ceil(H / 128) * 128 * (Ir + p[3]);
    double tc = f1 / (f->peak * p[1] * wave_eff(t1, S)) + f2 / (f->peak * p[1] * wave_eff(t2, S));
    /* The busy fraction: tiles over the SMs × p[9], the tiles per SM the
     * stream needs for its full rate (the count unrounded, so that it has
     * a slope; 0: whole tiles over the SMs, the count before the term). */
    double tiles = t1 < t2 ? t1 : t2, sat = S;
    if (p[9] > 0) tiles = mt * fmin(up * Ir, H) / 128, sat = S * p[9];
    double bytes = touched * (up + 1.0) * H * Ir * f->wbytes + rp * (H * f->abytes + (up + 1.0) * Ir * 2.0 + H * 2.0);
    /* Fewer tiles than SMs stream the weights through fewer SMs, at the
     * busy fraction to the tile_exp; a batch of more tokens than local
     * experts (Triton fused_moe's default configuration: 64-row tiles,
     * not 16) streams at wide_mem of it. The rate is the GPU's measured
     * copy rate, as the GEMM family's (B200 reaches 6.0 of its 8 TB/s,
     * Hopper 3.0 of 3.35). */
    double tmm = bytes / (bw * p[2] * (ld->small_m ? 1 : p[6]) * (tiles < sat ? pow(tiles / sat, p[7]) : 1));
    /* Every pair the rank's kernels see (all T·k with the tokens
     * replicated over the EP ranks, as the tables run them) pays the
     * element-wise passes over its rows: the activation's intermediates,
     * the zero-filled rows of experts held elsewhere, the top-k reduction.
     * They run at the SMs' rate (the FP32 peak), not HBM's: where they are
     * most of the time (SGLang's Triton kernel at EP ≥ 16 and ≥ 1024
     * tokens) B200 measures a median 0.84× H100's time, its FP32 peak's
     * 67/75 = 0.89, where its copy rate gives 0.5. */
    double gp = seen > rp ? seen : rp;
    double tpass = gp * (p[5] * H + p[8] * up * Ir) / (g->flops_fp32 > 0 ? g->flops_fp32 : g->flops_bf16 / 16);
    /* The small-batch step: p[11] µs reached at p[12] seen pairs, in
     * proportion below (0: none). */
    double ramp = p[11] > 0 && p[12] > 0 ? p[11] * US * fmin(1, gp / p[12]) : 0;
    return p[0] * US + rp * p[4] * US / S + smax(tc, tmm) + tpass + ramp;
}

static double t_moe(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p,
                    sim_err *err)
{
    if (r->moe_alpha < 0) {
        sim_err_set(err, SIM_EINVAL, "moe: unknown distribution '%s' (balanced or power_law_<alpha>)",
                    q->distribution);
        return 0;
    }
    if (q->moe_load.pairs > 0) return model_op_moe_time_load(g, q, r, p, &q->moe_load, err);
    model_op_moe_load ld;
    model_op_moe_load_of(F(TOKENS), F(TOPK), F(EXPERTS), F(MOE_EP) > 0 ? F(MOE_EP) : 1, r->moe_alpha, &ld);
    return model_op_moe_time_load(g, q, r, p, &ld, err);
}

void model_op_table_method(model_op_kind k, const model_op_paramset *own, double *p)
{
    if (k == MODEL_OPK_MOE) p[MOE_LOCAL_WL] = own ? own->p[MOE_LOCAL_WL] : 0;
}

void model_op_moe_load_fill(model_op_query *q)
{
    memset(&q->moe_load, 0, sizeof q->moe_load);
    double a = moe_alpha(q->distribution);
    if (q->kind != MODEL_OPK_MOE || a < 0) return;
    model_op_moe_load_of(F(TOKENS), F(TOPK), F(EXPERTS), F(MOE_EP) > 0 ? F(MOE_EP) : 1, a, &q->moe_load);
}

/* A collective as the libraries run it: two regimes, the cheaper taken (as
 * NCCL's tuner picks LL/LL128 or Simple, and the engines' custom all-reduce
 * one-shot or two-shot). Both pay (base + (n-1)·step)·L, L the GPU's
 * measured NCCL latency (model_op_coll_lat: the round trips over NVLink and
 * the switch that a collective's flags wait on, which set the floor and no
 * datasheet figure gives). The low-latency regime moves f_lo·B over the
 * links at eff_lo of the achievable NVLink bus bandwidth (model_op_coll_bw;
 * NCCL LL/LL128: the same bytes as the bulk algorithm, half of LL's being
 * flags; one-shot custom all-reduce: every rank reads all n-1 peers'
 * buffers, f_lo = n-1); the bulk regime moves f·B at eff_bw, plus each
 * rank's own pass over its B bytes at eff_loc of the measured HBM copy rate
 * (which is why bus bandwidth rises with n: the per-rank share of that pass
 * falls against f), plus ramp·L of pipeline fill. An eager custom
 * all-reduce (the engine's op called from the host, not replayed in a CUDA
 * graph) adds host_us a call: its tables' small messages sit flat at the
 * host's figure, and at 4 MiB between the longer and the sum of host and
 * graph times; the longer fits each GPU's tables a little better (0.2-0.4
 * points of median), the sum carries across GPUs better in six of the
 * eight cross-GPU medians and p90s (docs/cost-model.md: with the longer the
 * fit can put the eager floor's growth with n into the latency terms,
 * which scale with the GPU). */
static double t_comm(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p,
                     sim_err *err)
{
    double n = F(GPUS), B = F(MSG) * r->coll_bytes;
    double f, f_lo;
    if (r->coll == 1)
        f = 2.0 * (n - 1) / n, f_lo = q->kind == MODEL_OPK_CUSTOM_AR ? n - 1 : f;
    else if (r->coll == 2)
        f = f_lo = (n - 1) / n;
    else {
        sim_err_set(err, SIM_EINVAL, "unknown collective '%s'", q->variant);
        return 0;
    }
    double L = model_op_coll_lat(g), link = model_op_coll_bw(g);
    double lo = f_lo * B / (link * p[3]);
    double bulk = p[4] * L + f * B / (link * p[2]) + B / (model_op_hbm_copy_bw(g) * p[5]);
    double t = (p[0] + (n - 1) * p[1]) * L + (lo < bulk ? lo : bulk);
    return t + (r->coll_eager ? p[COMM_HOST_US] * US : 0);
}

/* Quantisation kernels: scale_matrix (static scale) runs chunks of 4096
 * of a row per CTA; compute_scale (the tables' per-token dynamic scale
 * minus the static kernel: one more read of the bf16 row for its amax)
 * one CTA per token. A grid short of the SMs reaches √(busy fraction) of
 * HBM, and each CTA streams its chunk at most at cta_bw times the HBM
 * rate's per-SM share, so few long rows are CTA-bound (m = 1, k = 65536:
 * 7.8 µs on vLLM B200 for 131 KB). HBM here is the measured copy rate
 * (model_op_hbm_copy_bw). */
static double t_quant(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p)
{
    double mk = F(M) * F(K);
    double per = r->compute_scale ? 2.0 : 3.0; /* bytes per element */
    /* Row chunk per CTA of the static-scale kernel: p[3] elements (0: 4096, the sets fitted before it). */
    double chunks = r->compute_scale ? 1 : ceil(F(K) / (p[3] > 0 ? p[3] : 4096));
    double ctas = F(M) * chunks, S = g->sms;
    double par = ctas < S ? sqrt(ctas / S) : 1;
    /* Bytes within the L2 move at l2_rate bytes per FP32 FLOP of the FP32 peak (p[5]; 0: none): the L2's
     * rate follows the SMs and their clock, not HBM (B200 moves a working set within both L2s no faster
     * than H100, 4.0 TB/s, at twice the HBM rate). */
    double bytes = mk * per, in_l2 = p[5] > 0 && g->l2_bytes > 0 && g->flops_fp32 > 0 ? fmin(bytes, g->l2_bytes) : 0;
    const double bw = model_op_hbm_copy_bw(g);
    double tm = ((bytes - in_l2) / (bw * p[1]) + (in_l2 > 0 ? in_l2 / (p[5] * g->flops_fp32) : 0)) / par;
    double tcta = p[2] > 0 ? ceil(ctas / S) * (F(K) / chunks) * per / (p[2] * bw / S) : 0;
    return p[0] * US + (tm > tcta ? tm : tcta) + ctas * p[4] * US / S;
}

/* Gated DeltaNet kernels: the conv streams its q, k, v channels (and the
 * state of each sequence), the delta rule its activations and fp32 state
 * beside its chunked matmuls; bandwidth at eff_mem of the measured copy
 * rate (model_op_hbm_copy_bw). The prefill conv of SGLang and vLLM is bound
 * by its instructions, not HBM (2.4 TB/s at most on H100, 2.9 on B200):
 * cc_ops FP32 ops per channel element at the FP32 peak, which carries
 * from H100 to B200 where the copy rate does not (docs/cost-model.md). */
static double t_gdn(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p)
{
    double T = F(TOKENS) > 0 ? F(TOKENS) : F(BATCH) * (F(SEQ_LEN) > 0 ? F(SEQ_LEN) : 1);
    double hk = F(K_HEADS), dk = F(K_DIM), hv = F(V_HEADS), dv = F(V_DIM), b = F(BATCH);
    /* q, k, v channels through the conv, less the share qv_cut of q and v
     * that a table's kernel did not move (p[4]; 0 for sets without it). */
    double chan = 2.0 * hk * dk + hv * dv - p[4] * (hk * dk + hv * dv);
    if (r->gdn_conv) {
        double bytes = T * chan * 2.0 * 2.0 + b * chan * F(D_CONV) * 2.0 * 2.0;
        double tmm = bytes / (model_op_hbm_copy_bw(g) * p[2]);
        /* Issue-bound (p[6]; 0: none): T tokens x chan channels at p[6] FP32 ops each, joined by the smooth max. */
        if (p[6] > 0 && g->flops_fp32 > 0) tmm = smax(tmm, T * chan * p[6] / g->flops_fp32);
        /* Sequences one after another (p[3]; 0: none), overlapping the stream. */
        return p[0] * US + (p[3] > 0 ? smax(b * p[3] * US, tmm) : tmm);
    }
    /* Delta rule: per token and value head a dk×dv state update and read
     * (chunked prefill does it as 64-token matmuls); the state is fp32. */
    double flops = T * hv * dk * dv * 2.0 * 4.0;
    double state = b * hv * dk * dv * 4.0 * 2.0;
    double bytes = T * (hk * dk * 2.0 + hv * dv * 2.0 * 2.0 + hv * 8.0) + state;
    /* CTAs per sequence × value head (p[5]; 0: one, the sets fitted before it). */
    double ctas = b * hv * (p[5] > 0 ? p[5] : 1);
    double par = ctas < g->sms ? ctas / g->sms : 1;
    double tc = flops / (g->flops_bf16 * p[1] * par);
    return p[0] * US + smax(tc, bytes / (model_op_hbm_copy_bw(g) * p[2] * (par < 1 ? sqrt(par) : 1)));
}

double model_op_time(const model_gpu *g, const model_op_query *q, const double *p, sim_err *err)
{
    model_op_resolved r;
    model_op_resolve(q, &r);
    return model_op_time_resolved(g, q, &r, p, err);
}

/* Every field finite and >= 0, tested without a branch per field (the
 * test is on every op priced); the loop names the first bad one (err). */
static inline int op_fields_ok(const model_op_query *q, sim_err *err)
{
    int fields_ok = 1;
    for (int i = 0; i < MODEL_OPF_COUNT; i++) fields_ok &= (q->f[i] >= 0) & (q->f[i] <= DBL_MAX);
    for (int i = 0; !fields_ok && i < MODEL_OPF_COUNT; i++)
        if (q->f[i] < 0 || !isfinite(q->f[i])) {
            sim_err_set(err, SIM_EINVAL, "%s: field %s must be a finite number >= 0 (got %g)",
                        model_op_kind_name(q->kind), model_op_field_name((model_op_field)i), q->f[i]);
            return 0;
        }
    return 1;
}

/* Context attention of q's shape (fp8 attention at the fp8 peak). */
static double q_ctx_attn(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p)
{
    double peak = r->attn_fp8 && g->flops_fp8 > 0 ? g->flops_fp8 : g->flops_bf16;
    /* kv_blk (p[7], KiB) of K a block: its keys at this head_dim and KV format. */
    const ctx_tiling tl = {p[5], p[6], p[7] > 0 ? p[7] * 1024.0 / (F(HEAD_DIM) * r->kv_bytes) : 0};
    return t_ctx_attn(g, F(BATCH), F(ISL), F(STEP), F(HEADS), F(KV_HEADS), F(HEAD_DIM), F(HEAD_DIM), F(WINDOW), peak,
                      r->kv_bytes, &tl, p);
}

/* Generation attention (GQA/MHA) over the context, or the window when shorter. */
static double q_gen_attn(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p)
{
    double ctx = F(ISL) + F(STEP);
    if (F(WINDOW) > 0 && F(WINDOW) < ctx) ctx = F(WINDOW);
    if (!(ctx > 0)) ctx = 1;
    return t_gqa_decode(g, F(BATCH), ctx, F(HEADS), F(KV_HEADS), F(HEAD_DIM), 2.0 * F(KV_HEADS) * F(HEAD_DIM) * r->kv_bytes,
                        p);
}

/* MLA decode kernel on P_GEN_MLA's grid: head tiles of p[5] heads (0: one
 * tile of every head), cache steps of p[6] tokens, splits up to p[7] (0:
 * the idle SMs). */
static double q_gen_mla(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p)
{
    double ctx = F(ISL) + F(STEP);
    if (!(ctx > 0)) ctx = 1;
    gen_grid gr = {p[5] > 0 ? ceil(F(HEADS) / p[5]) : 1, p[5], p[6], p[7], p[8], 0, 0, 0};
    return gen_attn_grid(g, F(BATCH), ctx, F(HEADS), F(BATCH) * gr.tiles, MLA_KV_LORA + MLA_ROPE, MLA_KV_LORA,
                         (MLA_KV_LORA + MLA_ROPE) * r->kv_bytes, g->flops_bf16, p, &gr);
}

/* MLA's batched GEMMs: one per head, before (nope -> latent) or after
 * (latent -> v) the attention. */
static double q_mla_bmm(const model_gpu *g, const model_op_query *q, const model_op_resolved *r, const double *p,
                        const op_fmt *f)
{
    int post = r->bmm_post;
    double kk = post ? MLA_KV_LORA : MLA_NOPE, nn = post ? MLA_V : MLA_KV_LORA;
    /* Weights, activations and output that fit in L2 together stream at l2_gain times eff_mem (p[3]; 0: none). */
    const double m = F(TOKENS), foot = F(HEADS) * (nn * kk * f->wbytes + m * kk * f->abytes + m * nn * 2.0);
    const double mem = p[3] > 0 && foot <= g->l2_bytes ? p[2] * p[3] : p[2];
    const gemm_kernel kn = {f->peak, p[1], mem, 0, 0, 0, 0, 0, 0, model_op_hbm_copy_bw(g)};
    return p[0] * US + gemm_core(g, F(HEADS), m, nn, kk, f->wbytes, f->abytes, &kn, 0);
}

double model_op_time_resolved(const model_gpu *g, const model_op_query *q, const model_op_resolved *r,
                              const double *p, sim_err *err)
{
    op_fmt f;
    if (!op_fields_ok(q, err)) return 0;
#define NEED(x)                                                                                                  \
    do {                                                                                                         \
        if (!(F(x) > 0)) {                                                                                       \
            sim_err_set(err, SIM_EINVAL, "%s: field %s must be > 0", model_op_kind_name(q->kind),                \
                        model_op_field_name(MODEL_OPF_##x));                                                     \
            return 0;                                                                                            \
        }                                                                                                        \
    } while (0)
    switch (q->kind) {
    case MODEL_OPK_GEMM:
        NEED(M); NEED(N); NEED(K);
        if (fmt_of(g, r->fmt, &f)) break;
        return t_gemm(g, q, r, p, &f);
    case MODEL_OPK_CTX_ATTN:
        NEED(BATCH); NEED(ISL); NEED(HEADS); NEED(KV_HEADS); NEED(HEAD_DIM);
        return q_ctx_attn(g, q, r, p);
    case MODEL_OPK_GEN_ATTN:
        NEED(BATCH); NEED(HEADS); NEED(KV_HEADS); NEED(HEAD_DIM);
        return q_gen_attn(g, q, r, p);
    case MODEL_OPK_CTX_MLA:
        NEED(BATCH); NEED(ISL); NEED(HEADS);
        return t_ctx_attn(g, F(BATCH), F(ISL), F(STEP), F(HEADS), F(HEADS), MLA_NOPE + MLA_ROPE, MLA_V, 0, g->flops_bf16,
                          r->kv_bytes, &CTX_UNTILED, p);
    case MODEL_OPK_GEN_MLA:
        NEED(BATCH); NEED(HEADS);
        return q_gen_mla(g, q, r, p);
    case MODEL_OPK_CTX_MLA_MODULE:
    case MODEL_OPK_GEN_MLA_MODULE:
        NEED(BATCH); NEED(HEADS);
        if (q->kind == MODEL_OPK_CTX_MLA_MODULE) NEED(ISL);
        return t_mla_module(g, q, r, p, q->kind == MODEL_OPK_CTX_MLA_MODULE, err);
    case MODEL_OPK_MLA_BMM:
        NEED(TOKENS); NEED(HEADS);
        if (fmt_of(g, r->fmt, &f)) break;
        return q_mla_bmm(g, q, r, p, &f);
    case MODEL_OPK_MOE:
        NEED(TOKENS); NEED(HIDDEN); NEED(INTER); NEED(TOPK); NEED(EXPERTS);
        if (fmt_of(g, r->fmt, &f)) break;
        return t_moe(g, q, r, p, err);
    case MODEL_OPK_NCCL:
    case MODEL_OPK_CUSTOM_AR:
        NEED(GPUS); NEED(MSG);
        return t_comm(g, q, r, p, err);
    case MODEL_OPK_QUANT:
        NEED(M); NEED(K);
        return t_quant(g, q, r, p);
    case MODEL_OPK_GDN:
        NEED(BATCH); NEED(K_HEADS); NEED(K_DIM); NEED(V_HEADS); NEED(V_DIM);
        return t_gdn(g, q, r, p);
    case MODEL_OPK_CTX_DSA_MODULE:
    case MODEL_OPK_GEN_DSA_MODULE:
        NEED(BATCH); NEED(HEADS);
        if (q->kind == MODEL_OPK_CTX_DSA_MODULE) NEED(ISL);
        return t_dsa_module(g, q, r, p, q->kind == MODEL_OPK_CTX_DSA_MODULE, err);
    default:
        sim_err_set(err, SIM_EINVAL, "unknown op kind %d", (int)q->kind);
        return 0;
    }
#undef NEED
    sim_err_set(err, SIM_EINVAL, "%s: unknown dtype '%s'", model_op_kind_name(q->kind), q->dtype);
    return 0;
}

/* ---- fitted sets ------------------------------------------------------ */

const char *model_op_table_gpu(const model_gpu *g)
{
    /* Ada and RTX Blackwell have no measured tables, and no sibling's
     * carries: their kernels are others (no wgmma, no tcgen05), so the
     * analytic roofline prices them. */
    static const struct {
        const char *prefix;
        model_gpu_arch arch;
        const char *table;
    } map[] = {{"h100", MODEL_ARCH_HOPPER, "h100_sxm"},
               {"b200", MODEL_ARCH_BLACKWELL, "b200_sxm"},
               {"a100", MODEL_ARCH_AMPERE, "a100_sxm"}};
    if (g->op_params_table[0]) return g->op_params_table;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strncasecmp(g->name, map[i].prefix, strlen(map[i].prefix))) return map[i].table;
    model_gpu_arch a = model_gpu_arch_of(g);
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (a == map[i].arch) return map[i].table;
    return NULL;
}

int model_op_params_from(model_gpu *g, const char *name, sim_err *err)
{
    g->op_params_table[0] = '\0';
    if (!name || !*name) return 0;
    model_gpu src;
    int rc = model_catalog_gpu(name, &src, err);
    if (rc < 0) return rc;
    src.op_params_table[0] = '\0';
    const char *t = model_op_table_gpu(&src);
    /* Its own tables: the catalogue name starts as the table GPU's does. */
    if (!t || strncasecmp(src.name, t, 4) != 0)
        return sim_err_set(err, SIM_EINVAL, "'%s' has no measured per-op tables of its own (expected h100-sxm, b200 "
                           "or a100-sxm-80g)", name);
    snprintf(g->op_params_table, sizeof g->op_params_table, "%s", t);
    return 0;
}

/* The set of variant on table GPU gpu: the backend's, or (backend NULL or
 * "") the one fitted on most rows, the sets serving does not run left out
 * when skip_not_served (model_op_set_not_served). */
static const model_op_paramset *lookup_set(const char *gpu, const char *backend, const char *variant,
                                           int skip_not_served)
{
    if (!gpu) return NULL;
    const model_op_paramset *best = NULL;
    for (int32_t i = 0; i < model_op_fitted_count; i++) {
        const model_op_paramset *s = &model_op_fitted[i];
        if (strcmp(s->gpu, gpu) || strcmp(s->variant, variant)) continue;
        if (skip_not_served && model_op_set_not_served(s)) continue;
        if (backend && *backend) {
            if (!strcmp(s->backend, backend)) return s;
        } else if (!best || s->rows > best->rows) {
            best = s;
        }
    }
    return best;
}

const model_op_paramset *model_op_lookup_gpu(const char *gpu, const char *backend, const char *variant)
{
    return lookup_set(gpu, backend, variant, 0);
}

const model_op_paramset *model_op_lookup(const model_gpu *g, const char *backend, const char *variant)
{
    return model_op_lookup_gpu(model_op_table_gpu(g), backend, variant);
}

#define HOST_BOUND_US 1.0

int model_op_set_host_bound(const model_op_paramset *s)
{
    return s && !strncmp(s->variant, "gemm:", 5) && s->p[GEMM_HOST_US] >= HOST_BOUND_US;
}

const model_op_paramset *model_op_lookup_serving(const model_gpu *g, const char *backend, const char *variant)
{
    return model_op_serving_of(model_op_lookup(g, backend, variant));
}

/* Tables that time a kernel the engine does not serve with. TensorRT-LLM
 * autotunes its FP4 GEMM at start-up (its nvfp4_gemm op picks a tactic per
 * shape bucket); its per-op table times the op outside that, and at
 * decode sizes its rows stream the weights at 1.7-2.1 TB/s on B200
 * (8192 x 8192, m = 4-64: 22.5-23.0 us) where the FP4 kernels of vLLM's
 * and SGLang's tables (FlashInfer's) reach 2.8-3.6 TB/s (12.7-15.7 us).
 * Priced with its own set, TensorRT-LLM's B200 NVFP4 deployments decode
 * 10-17 % slower than measured in every model and version of
 * silicon-dev.csv (Llama-3.1-70B +16.8 %, DeepSeek-R1/V3 +10.7 to +15.7 %
 * median); with the FlashInfer set, -0.8 % (docs/cost-model.md). */
static const struct {
    const char *backend, *variant;
} UNTUNED[] = {{"trtllm", "gemm:nvfp4"}};

const char *model_op_set_not_served(const model_op_paramset *s)
{
    if (!s) return NULL;
    if (model_op_set_host_bound(s)) return "host-bound";
    for (size_t i = 0; i < sizeof UNTUNED / sizeof UNTUNED[0]; i++)
        if (!strcmp(s->backend, UNTUNED[i].backend) && !strcmp(s->variant, UNTUNED[i].variant))
            return "timed outside the engine's kernel autotuning";
    return NULL;
}

const model_op_paramset *model_op_serving_of(const model_op_paramset *s)
{
    if (!model_op_set_not_served(s)) return s;
    const model_op_paramset *best = lookup_set(s->gpu, NULL, s->variant, 1);
    return best ? best : s;
}
