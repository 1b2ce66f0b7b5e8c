/* model_vision — a model's vision tower: what it is, and how many tokens an
 * image or a video becomes.
 *
 * model_vision_from_hf() reads a Hugging Face config's vision_config into
 * m->vision (model_catalog.h) when its family is one servesim prices, and
 * otherwise records the family as unsupported with the reason, so that a
 * text-only run of the model still loads and a run that sends it images is
 * refused with that reason (model_vision_check). Families priced:
 *
 *   qwen3_vl  Qwen3-VL and Qwen3.5/3.6 (vision model_type qwen3_vl,
 *             qwen3_vl_moe, qwen3_5, qwen3_5_moe and their *_vision forms):
 *             patch_size p, spatial_merge_size s, temporal_patch_size T.
 *             The image is resized to multiples of f = p·s (each side
 *             rounded to the nearest multiple, at least f); the patch grid
 *             is (H'/p) × (W'/p) per temporal patch; an image is one
 *             temporal patch (the processor repeats it T times), a video of
 *             F frames ⌈F/T⌉. tokens = t·(H'/p)·(W'/p) / s². The tower
 *             attends within each temporal patch's grid (cu_seqlens per
 *             frame group). MLP fc1/fc2; the merger (and each DeepStack
 *             merger, one per deepstack_visual_indexes entry) is
 *             4·hidden → 4·hidden → out_hidden_size on the merged tokens.
 *   kimi_k25  Kimi-K2.5/K2.6/K2.7 MoonViT (vt_* keys, patch_size p,
 *             merge_kernel_size [kh, kw]): each side padded up to a
 *             multiple of p·k; tokens = (H'/(p·kh))·(W'/(p·kw)); the tower
 *             attends over the whole image; MLP fc0/fc1; the patch-merger
 *             projector is kh·kw·mm_hidden → the same → text_hidden_size.
 *             Video (merge_type sd2_tpool): the F frames are cut into
 *             ⌈F/c⌉ chunks of c = 4 frames, the last one shorter (c is the
 *             processor's temporal_merge_kernel_size, in
 *             preprocessor_config.json, not config.json: Kimi-K2.5 ships 4,
 *             vLLM's and SGLang's Kimi processors default to it; it must
 *             fit init_pos_emb_time); the tower runs on every frame's
 *             patches, attending over each chunk's c·(H'/p)·(W'/p) patches
 *             at once, then averages each chunk over its frames: tokens =
 *             ⌈F/c⌉·(H'/(p·k))·(W'/(p·k)).
 *   gemma4    Gemma-4 (vision model_type gemma4_vision: patch_size p,
 *             pooling_kernel_size k, default_output_length N soft tokens):
 *             the image is scaled (keeping its aspect, up or down) to
 *             N·k² patches, each side floored to a multiple of p·k (a side
 *             that floors to 0 becomes p·k, the other ⌊long/short⌋·p·k, at
 *             most N·p·k; transformers' get_aspect_ratio_preserving_size);
 *             tokens = (H'/(p·k))·(W'/(p·k)) ≤ N. The processor pads the
 *             patches to N·k² and the tower runs on all of them (attention
 *             masked): N·k² rows and one sequence of N·k² per image; k×k
 *             average pooling, then one projection hidden → the language
 *             model's hidden on the real tokens. The MLP is taken as gated
 *             (gate/up/down, the Gemma decoder form its hidden_activation
 *             names). Video: each of the F frames is such an image with
 *             N = video_seq_length (70 when the config lacks it, the
 *             default of transformers' Gemma4VideoProcessor): F sequences,
 *             F·(H'/(p·k))·(W'/(p·k)) tokens, no temporal pooling.
 *
 * Everything else with a vision_config (CLIP towers such as MiniMax-M3's,
 * Kimi-K3's) is unsupported. Plain functions on caller-owned structs. */
#ifndef MODEL_VISION_H
#define MODEL_VISION_H

#include "model_catalog.h"
#include "sim_err.h"

#include <stdint.h>

typedef enum {
    MODEL_VISION_NONE = 0,
    MODEL_VISION_UNSUPPORTED = 1,
    MODEL_VISION_QWEN3_VL = 2,
    MODEL_VISION_KIMI_K25 = 3,
    MODEL_VISION_GEMMA4 = 4
} model_vision_family;

/* One image or video as the tower sees it. */
typedef struct model_media_grid {
    int32_t t, h, w;         /* temporal patches (Kimi, Gemma: frames), patch rows, patch columns */
    int64_t patches;         /* rows through the tower's layers: t·h·w (Gemma: t·N·k², padded) */
    int64_t tokens;          /* embeddings handed to the language model */
    int32_t seqs;            /* attention sequences (video: one per temporal patch, Kimi chunk, Gemma frame) */
    int64_t seq_len;         /* patches in each */
    int64_t tail_len;        /* one more, shorter sequence (Kimi: a last chunk of fewer frames); 0 = none */
} model_media_grid;

/* Fills m->vision from a parsed config.json (a jansson json_t *; the top
 * object, whose vision_config and text_config sit side by side). A config
 * without one leaves family 0. Adds a note to m either way. Never fails: a
 * malformed or unknown tower is recorded as unsupported with the reason. */
void model_vision_from_hf(const void *top_json, model_spec *m);

/* The family's name ("qwen3_vl", "kimi_k25", "gemma4", "none", "unsupported"). */
const char *model_vision_family_name(int32_t family);

/* 0 when m's tower can be priced, else SIM_EINVAL with the reason (prefixed
 * by `what`, e.g. a key path). */
int model_vision_check(const model_spec *m, const char *what, sim_err *err);

/* The grid and token count of one image of width × height pixels (frames
 * 0) or one video of `frames` frames at that size. SIM_EINVAL with the
 * reason (prefixed by `what`) for a size below one pixel or a video on a
 * family that does not take one. */
int model_vision_grid(const model_vision *v, int32_t width, int32_t height, int32_t frames, model_media_grid *g,
                      const char *what, sim_err *err);

/* The tower's weights in bytes, bf16 (the checkpoints keep the tower so when
 * the language model is quantised): its linear layers as model_cost_encode
 * prices them — the patch embedding C·T·p²·H, per layer QKV 3·n·d·H, O
 * H·n·d and the MLP 2·I·H (gated 3·I·H), then the mergers
 * (Mi² + out·Mi each) or Gemma's projection out·H. Biases, norms and
 * position tables are left out (under 5 % of these towers). 0 for a
 * family servesim does not price. */
double model_vision_weight_bytes(const model_vision *v);

#endif
