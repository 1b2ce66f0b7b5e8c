/* calib_ingest — serving engines' measured per-op tables as perf-db points.
 *
 * Reads the tables of one GPU in a tree laid out as
 *   <root>/<gpu>/<family>/<backend>-<version>/<table>.csv[.gz]
 * (calib_optable.h; the public measurements of TensorRT-LLM, vLLM, SGLang
 * and NCCL kernels in ../shared/validation/ops) and stores each row as a
 * perf-db point of the GPU named by the tables' `device` column, with
 * kernel "<backend>-<version>:<kernel_source>" (so a deployment's engine
 * finds its own rows, calib_table.h), the latency column (milliseconds)
 * as the median in seconds, reps 1 and p10 = p90 = median (the tables give
 * one figure). Tables and their columns, read by name:
 *   gemm_perf                  gemm: m n k, gemm_dtype
 *   context_attention_perf     attn_prefill: batch_size → batch, isl → m,
 *                              num_heads, num_key_value_heads, head_dim
 *   generation_attention_perf  attn_decode: ctx = isl + step
 *                              (attention: beam_width 1, window_size 0 only)
 *   nccl_perf                  allreduce / allgather / reduce_scatter /
 *                              alltoall: message_size elements × dtype size
 *                              → bytes, num_gpus → ranks
 *   custom_allreduce_perf      allreduce, the same
 *   moe_perf                   moe (balanced routing only): num_tokens → m,
 *                              hidden_size → k, inter_size → n, topk →
 *                              batch, num_experts → groups, moe_ep_size →
 *                              ranks, moe_tp_size → heads
 *   context_mla_perf, generation_mla_perf              mla_prefill / mla_decode
 *   mla_context_module_perf, mla_generation_module_perf mla_module_*
 *   dsa_context_module_perf, dsa_generation_module_perf dsa_*
 *                              batch, isl → m (context) or isl + step → ctx,
 *                              num_heads → heads, tp_size → ranks; module
 *                              rows' kernel names the model after '@'
 *   mla_bmm_perf               mla_bmm_pre / mla_bmm_post: num_tokens, num_heads
 *   gdn_perf                   gdn_prefill / gdn_decode (per sub-kernel)
 *   scale_matrix_perf, computescale_perf   quant_fp8 / quant_scale: m, k → n
 * dtype: the op's dtype column mapped to servesim's names (bfloat16 →
 * bf16, half/float16 → fp16, fp8_e4m3 → fp8, …; names servesim has no
 * other for, such as the MoE tables' w4a16_mxfp4, w4a8_mxfp4_mxfp8 and
 * int4_wo, kept), with "/<kv dtype>" appended where the KV cache's differs
 * (attention, MLA, DSA); a dtype longer than a point holds
 * (CALIB_DTYPE_MAX) is an error naming file:line, never cut. Other
 * tables (mamba2, GLM-5 DSA parts) are skipped and counted, as are rows
 * whose latency is not a valid positive time or whose routing, window or
 * beam width servesim does not model.
 *
 * Ownership: nothing retained. Failure returns: a negative SIM_E* code with
 * err filled (a table that does not parse names file:line:column); the
 * points of one table go in one transaction, so a failing table leaves
 * nothing of itself behind. */
#ifndef CALIB_INGEST_H
#define CALIB_INGEST_H

#include "sim_err.h"
#include "calib_db.h"

#include <stdint.h>
#include <stdio.h>

typedef struct {
    /* NULL-terminated calib op names to keep (NULL = all), and dtypes
     * (NULL = all). */
    const char *const *ops;
    const char *const *dtypes;
    /* Keep, per engine version, op, dtype and shape, only the fastest
     * kernel's row (what the cost model reads; a compact dump). */
    int fastest_only;
    /* GPU identity beyond the device name: SM count (catalogue) and the
     * compute capability; 0 / "" when unknown. */
    int32_t sms;
    const char *cc;
    FILE *log; /* one line per table (may be NULL) */
} calib_ingest_opts;

typedef struct {
    int64_t tables, tables_skipped;
    int64_t rows, points, added, rows_skipped;
} calib_ingest_stats;

/* Ingests <root>/<gpu>/… into db. */
int calib_ingest(calib_db *db, const char *root, const char *gpu, const calib_ingest_opts *o,
                 calib_ingest_stats *st, sim_err *err);

/* servesim's dtype name of an engine table's ("bfloat16" → "bf16"); the
 * input itself when it has no other name. */
const char *calib_ingest_dtype(const char *engine_dtype);

#endif
