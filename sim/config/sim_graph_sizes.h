/* sim_graph_sizes — the batch sizes an engine captures CUDA graphs for, and
 * the size a decode-only batch is padded to (scheduler.cuda_graph_sizes,
 * scheduler.cuda_graph_max_bs).
 *
 * Serving engines run a decode-only iteration as a replayed CUDA graph of a
 * captured batch size: a batch of n sequences runs the graph of the smallest
 * captured size >= n, the extra rows being dummy sequences (their GEMM rows
 * and a minimal attention). A batch above the largest captured size runs
 * without a graph, unpadded. Each rule is the list its engine generates when
 * no sizes are given (docs/cost-model.md, "CUDA-graph capture sizes"):
 *   vllm    1, 2, 4, multiples of 8 below 256, multiples of 16 from 256 up
 *           to the largest (vLLM V1 >= 0.11, max_cudagraph_capture_size
 *           default min(2 x max_num_seqs, 512); the largest is captured only
 *           when it is on that grid);
 *   sglang  1, 2, 4, 8, 12, multiples of 8 from 16 to 256, of 16 from 272 to
 *           496, of 32 from 512, and the largest (server_args.py, 0.5.x,
 *           no speculative decoding; --cuda-graph-max-bs by GPU memory and
 *           TP: < 20 GiB 8, < 35 GiB 24 (tp < 4) or 80, < 60 GiB 32 or 160,
 *           < 160 GiB 256 or 512, else 512);
 *   trtllm  1, 2, 4, multiples of 8 to 128, then steps of 64, and the
 *           largest (the PyTorch backend's CudaGraphConfig with
 *           enable_padding; max_batch_size default 128).
 * Pure functions of their arguments; no errors. */
#ifndef SIM_GRAPH_SIZES_H
#define SIM_GRAPH_SIZES_H

#include "sim_scenario.h"

#include <stdint.h>

/* The largest captured batch rule r takes when cuda_graph_max_bs is 0:
 * vllm min(2 x max_seqs, 512) (512 for max_seqs <= 0); sglang by the GPU's
 * memory in GiB and tp (the GPUs of the attention TP and DP ranks, SGLang's
 * tp_size); trtllm 128; none 0. */
int32_t sim_graph_sizes_default_max(sim_graph_rule r, int32_t max_seqs, double gpu_mem_gib, int32_t tp);

/* The batch a decode-only iteration of n sequences runs as under rule r with
 * max_bs its largest captured size: the smallest captured size >= n, or n
 * itself when no graph covers it (rule none, max_bs < n, n <= 0). */
int32_t sim_graph_sizes_pad(sim_graph_rule r, int32_t max_bs, int32_t n);

#endif
