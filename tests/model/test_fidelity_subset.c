/* test_fidelity_subset — accuracy on measured deployments servesim was not
 * tuned on, and engine behaviour under KV pressure.
 *
 * 1. Replays the fixed subset tests/data/fidelity/silicon-subset.csv (221
 *    rows of ../shared/validation/silicon-dev.csv: up to 8 per backend ×
 *    GPU × mode × model, chosen by the hash of their id with
 *    scripts/fidelity-subset.py, not by how well they are predicted) and
 *    holds TTFT and TPOT MAPE and median APE, per backend and per GPU, at or
 *    below what the model reaches today plus a small margin, so a change
 *    that makes predictions worse fails. The figures are computed, never
 *    timed.
 * 2. A KV-bound deployment does not thrash: Llama-3.1-8B on one H100 with a
 *    KV cache that holds about 28 of its 64 clients' sequences. Under the
 *    vLLM preset (optimistic admission, preemption by recompute) requests
 *    are preempted about once each, not over and over (a preempted request
 *    waits until its whole first chunk fits again instead of being squeezed
 *    into the last free blocks); under the SGLang preset (ratio admission)
 *    at most one request in four is retracted; under TensorRT-LLM's
 *    (reserve admission) nothing is preempted; and every preset keeps the
 *    cache busy (the batch is what the KV holds, not a trickle). With
 *    vLLM's preempted KV left in its prefix cache (preempt_keeps_kv, the
 *    preset's) the recomputation costs less than without: TPOT is lower.
 * 3. The deployments the issue names do not thrash: Llama-3.1-70B FP8 on
 *    vLLM at tp1 (B200) and tp2 (H100) with 1k/8k and 8k/1k sequences at
 *    32 and 64 clients (tests/data/fidelity/kv-bound-rows.csv, rows of
 *    silicon-dev.csv). Each request is preempted at most 1.5 times on
 *    average (the H100 tp2 8k/1k row at 64 clients was preempted 5 times
 *    per request with every recompute paid in full, its TPOT 3.2x the
 *    measured), and TPOT stays within a factor of two of the measured. */
#include "sim_fidelity.h"
#include "sim_cluster.h"
#include "sim_loader.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reached when these thresholds were set (see docs/cost-model.md,
 * "Accuracy on silicon-dev.csv"), plus 4 % and rounded up to half a point.
 * Set after the replay went to ten requests per client at every
 * concurrency, took the InferenceX rows' client lengths ([0.8 L, L]), read
 * the squared expert-parallel layouts of two exports back, gave
 * each engine its own memory budget and SGLang its eager prefill launches
 * (200 µs each); where the earlier bound was tighter and still
 * holds it is kept. TensorRT-LLM's TTFT median is the one bound that rose
 * (41.5 → 45.5): over its 102 rows it sits between the 69 aggregated rows
 * (median about 26 %) and the 33 disaggregated ones (about 75 %), and moved
 * from about 40 to 43.5 % with the disaggregated rows' client lengths.
 * SGLang's TTFT median rose once more (46.5 → 54.5, at 52.3 %) when the
 * 28 subset rows whose PD layout is unknown left the groups (scored apart:
 * they
 * had replayed a 1P + 1D deployment the measurements did not have; the 8
 * SGLang H100 ones happened to score about 19 % there) and PD prefill
 * workers began admitting prompts to their token budget (SGLang's B200 PD
 * prefill, priced fast already, got faster: its 23 rows with worker counts
 * 64.6 → 69.7 % median on silicon-dev.csv).
 * When the routed experts of prefill iterations became the engines' fused-MoE
 * op (the op model's moe sets): SGLang's TTFT median 52.3 → 48.4 % (bound
 * 50.5), all rows' TTFT MAPE 131.4 %, TPOT unchanged or better except vLLM,
 * whose bounds rose: TTFT MAPE to 36.6 % (32.5 → 38.0), TTFT median 21.2 %
 * (21.0 → 22.5), TPOT MAPE 71.4 % (71.0 → 74.5) and median 19.3 %
 * (18.5 → 20.0) — gpt-oss-120b on B200, whose fitted w4a16_mxfp4 set prices
 * its prefill 1.5–2× above what the measured TTFT allows (the engine may run
 * another MXFP4 kernel than the table's), and vLLM's mixed iterations, whose
 * decode tokens ride in the fused op.
 * Tightened when SGLang's InferenceX rows got their recipes' poll interval
 * (30 steps), TensorRT-LLM's attention-DP rows their balancing and the vLLM
 * and SGLang presets cached preempted KV: SGLang TPOT MAPE 16.9 % (bound
 * 31.5 → 17.5) and median 8.9 % (15.0 → 9.5), TensorRT-LLM TTFT median
 * 30.7 % (45.5 → 32.0) and TPOT 31.2 % (38.0 → 32.5), B200 TTFT MAPE 161.3 %
 * (201.0 → 168.0); every bound the figure plus the margin, or the earlier
 * one where tighter.
 * When each fused-MoE kernel family got a set of its own, the kernels'
 * passes over every pair they see (masked ones included) a term, and MXFP4
 * experts on Blackwell the MXFP8-activation kernels: vLLM TTFT MAPE 36.7 →
 * 31.5 % (bound 38.0 → 33.0), median 21.7 → 20.2 % (22.5 → 21.0), TPOT MAPE
 * 71.5 → 70.6 % (74.5 → 73.5), all rows' TTFT MAPE 131.0 → 130.2 % (136.5 →
 * 135.5); two bounds loosened: TensorRT-LLM's TTFT median 30.7 → 34.8 %
 * (32.0 → 36.5) and SGLang's 43.3 → 46.0 % (45.5 → 48.0) — DeepSeek-R1/V3
 * fp8 on B200, whose prefill was already under-predicted (−30 … −70 %), now
 * priced by the TensorRT-LLM-gen kernel's own set (fitted alone it is faster
 * than the blend with SGLang's Triton rows it had been).
 * Tightened when the vLLM gpt-oss-120b H100 512-client row, whose measured
 * TPOT is under half its deployment's at 64 clients, left the groups
 * (scored apart as inconsistent; predicted 15× its TPOT): vLLM TPOT MAPE
 * 47.3 % (73.5 → 49.5), median 18.3 % (20.0 → 19.5), TTFT MAPE 30.5 %
 * (33.0 → 32.0); H100 TPOT MAPE 34.9 % (52.0 → 36.5); all rows' TPOT MAPE
 * 32.8 % (42.0 → 34.5).
 * When SGLang's fp8-KV prefill on Hopper took the FlashAttention-3 fp8/fp8
 * set instead of the Triton bfloat16/fp8 one (3-7x slower at 4k prompts):
 * SGLang TTFT MAPE 158.5 → 55.9 % (bound 164.0 → 58.5), H100's 94.0 →
 * 41.6 % (98.0 → 44.0), all rows' 130.1 → 106.8 % (135.5 → 111.0); one
 * bound loosened, SGLang's TPOT MAPE 17.0 → 17.6 % (17.5 → 18.5): its
 * Qwen3-32B H100 PD rows, whose prefill workers now keep up, load their
 * decode workers more (TPOT measured 112-560 ms at TP 2-8 there, which
 * nothing here reproduces).
 * Reset when the GEMM op model gave the activation quantisation its own
 * bandwidth and the kernels their split-K limit, per-CTA stream and
 * reduction cost (the refit GEMM and quantise sets): tightened TPOT median
 * 12.9 % (all; bound 15.5 → 13.5), vLLM 18.3 → 12.4 % (19.5 → 13.0),
 * TensorRT-LLM 12.8 % (15.5 → 13.5), H100 10.8 % (15.0 → 11.5); vLLM TPOT
 * MAPE 47.3 → 42.6 % (49.5 → 44.5), TTFT MAPE 30.5 → 28.1 % (32.0 → 29.5),
 * TTFT median 17.9 % (21.0 → 19.0); H100 TPOT MAPE 34.1 % (36.5 → 35.5),
 * TTFT MAPE 41.6 → 39.8 % (44.0 → 41.5); TensorRT-LLM TTFT median 34.8 →
 * 32.3 % (36.5 → 34.0); all rows' TTFT median 27.4 % (29.5 → 28.5).
 * Loosened: SGLang TPOT MAPE 17.6 → 19.5 % (18.5 → 20.5) and median
 * 13.1 % (9.5 → 14.0), TTFT MAPE 55.9 → 56.6 % (58.5 → 59.0) — its B200
 * fp8-block sets now run without split-K as the tables show (8 × 1024 × k:
 * 12.7 µs at k = 1024, 89 µs at 65536), which prices DeepSeek's low-batch
 * decode steps about 1 ms (8 %) higher than the measured steps allow,
 * while its c64 rows fell from +60 to +25 %; B200 TPOT MAPE 32.0 % (33.0 →
 * 33.5) and median 16.6 % (16.0 → 17.5) with them and TensorRT-LLM's nvfp4
 * sets, which the tables also fit without split-K (TensorRT-LLM B200
 * Llama-3.1-70B nvfp4 decode GEMMs up about 10 %); TensorRT-LLM TPOT MAPE
 * 33.3 % (32.5 → 35.0); TTFT MAPE of all rows 106.8 → 114.6 % (111.0 →
 * 119.5), TensorRT-LLM 198.6 % (187.5 → 206.5), B200 175.2 % (168.0 →
 * 182.5): one row, TensorRT-LLM Qwen3-32B-NVFP4 on B200 at 719 ms
 * measured, simulated 90 s before and 102 s after (an outlier of 125×,
 * priced by its thrashing, not by its GEMMs), moves the TensorRT-LLM TTFT
 * MAPE by 16 points.
 * Tightened when the InferenceX TensorRT-LLM DeepSeek-R1 recipes' token
 * budget and whole-prompt scheduling came into the replay
 * (sim_fidelity_trtllm_dsr1_tokens): TTFT MAPE of all rows 114.6 → 113.8 %
 * (119.5 → 118.5), median 27.4 → 25.9 % (28.5 → 27.0); TensorRT-LLM
 * 198.6 → 196.9 % (206.5 → 205.0), median 32.3 → 29.6 % (34.0 → 31.0);
 * B200 175.2 → 173.8 % (182.5 → 181.0), median 29.0 → 26.3 % (30.5 →
 * 27.5).
 * Tightened when the TensorRT-LLM 1.2.0rc6.post3 image's DeepSeek-R1 rows
 * (19 of the subset) decoded with MTP (2 draft tokens at 0.78, fitted by
 * scripts/fit-mtp.py): TensorRT-LLM TPOT MAPE 33.3 → 31.0 % (bound 35.0 →
 * 32.5), median 12.8 → 12.7 %; B200 TPOT MAPE 32.0 → 30.1 % (33.5 → 31.5),
 * median 16.6 → 16.0 % (17.5 → 17.0); all rows' TPOT MAPE 31.9 % (34.5 →
 * 33.5); TTFT unchanged at the printed precision.
 * Reset when vLLM rows of 0.14 and later replay with async scheduling (the
 * per-request host work hidden behind the step's GPU time): tightened vLLM
 * TPOT MAPE 42.6 → 37.8 % (bound 44.5 → 39.5) and median 12.4 → 9.2 %
 * (13.0 → 10.0), H100 TPOT MAPE 32.6 % (35.5 → 34.0) and median 9.2 %
 * (11.5 → 10.0), B200 TPOT MAPE 30.6 % (33.5 → 32.0) and median 16.0 %
 * (17.5 → 17.0), all rows' TPOT MAPE 31.5 % (34.5 → 33.0) and median
 * 12.5 % (13.5 → 13.0); one bound loosened, vLLM's TTFT median, at
 * 19.02 % (19.0 → 20.0): shorter decode steps shorten the queueing of
 * prompts, and rows already predicted low in TTFT fall further (on the
 * full replay vLLM TTFT MAPE 23.9 → 24.5 %, median 18.5 → 19.4 %).
 * With the MTP rows beside it: all rows' TPOT MAPE 30.5 % (33.0 → 32.0) and
 * median 12.0 % (13.0 → 12.5), B200 TPOT MAPE 28.7 % (31.5 → 30.0) and
 * median 14.6 % (17.0 → 15.5).
 * Tightened when the physics consistency check (sim_fidelity_consistency.c:
 * the work Little's law implies against the GPUs' roofline) replayed
 * TensorRT-LLM's Qwen3-32B NVFP4 B200 TP2 row of 416 clients at batch 13 as
 * the 32 replicas one instance's FP4 peak requires (TTFT 101.5 s → 671 ms,
 * 719 measured: the 125× outlier above) and scored vLLM's Qwen3-32B H100 PD
 * row beyond its HBM bandwidth apart: all rows' TTFT MAPE 40.1 % (bound
 * 118.5 → 42.0), TPOT MAPE 24.7 % (32.0 → 26.0); TensorRT-LLM TTFT MAPE
 * 41.3 % (205.0 → 43.0), median 27.1 % (31.0 → 28.5), TPOT MAPE 22.3 %
 * (32.5 → 23.5); vLLM TTFT MAPE 25.6 % (29.5 → 27.0), median 18.0 % (20.0 →
 * 19.0), TPOT MAPE 32.5 % (39.5 → 34.0), median 9.1 % (10.0 → 9.5); B200
 * TTFT MAPE 41.7 % (181.0 → 43.5), TPOT MAPE 21.3 % (30.0 → 22.5); H100
 * TTFT MAPE 38.2 % (41.5 → 40.0), median 24.2 % (26.0 → 25.5), TPOT MAPE
 * 28.9 % (34.0 → 30.5), median 9.1 % (10.0 → 9.5).
 * Loosened when decode-only iterations began running as the engines'
 * captured CUDA-graph batch sizes (engine behaviour, not fitted;
 * sim_graph_sizes.h): SGLang's TPOT median 13.58 → 14.00 % (bound 14.0 →
 * 14.5); all rows' TPOT median 12.5 → 11.9 %, the rest within 0.5 point.
 * Loosened when TensorRT-LLM's DeepSeek attention blocks of pure decode and
 * prefill iterations became its measured MLA module (model_cost_mla.c: one
 * module row a layer, not the sum of ten separately measured kernels and
 * their floors): decode steps 1–3 ms shorter, so the 20 DeepSeek PD rows
 * of the subset, 9 B200 and 11 H100 (TP 16 over two nodes, 8 heads a rank,
 * already predicted low there: 12.8 against 14.7 ms), move down in TPOT.
 * TensorRT-LLM TPOT MAPE 22.4 → 23.7 % (bound 23.5 → 25.0), median 12.7 →
 * 17.0 % (13.5 → 18.0); B200 TPOT median 16.3 % (15.5 → 17.0); all rows'
 * TPOT median 12.5 → 13.7 % (12.5 → 14.5); TTFT slightly better. On the
 * full silicon-dev.csv the move is smaller (docs/cost-model.md, "MLA
 * attention block as one module"). Measured physics, not a fit: the
 * bounds follow it.
 * Moved when the InferenceX recipes' vLLM and SGLang settings came into
 * the replay (read from the recipes, not fitted; docs/cost-model.md, "The
 * InferenceX recipes' settings": vLLM async scheduling on every InferenceX
 * row, vLLM MiniMax-M2.5 B200's 2 x ISL token budget, SGLang B200's
 * 10-step poll below its concurrency threshold). Tightened: all rows' TPOT
 * MAPE 25.3 → 23.0 % (bound 26.0 → 24.0); SGLang TTFT MAPE 56.8 → 53.2 %
 * (59.0 → 55.0); vLLM TPOT MAPE 32.5 → 24.7 % (34.0 → 26.0); B200 TTFT
 * MAPE 41.6 → 40.0 % (43.5 → 42.0), TPOT median 16.2 → 14.9 % (17.0 →
 * 15.5); H100 TPOT MAPE 29.6 → 25.7 % (30.5 → 27.0). Loosened: vLLM TTFT
 * median 17.9 → 19.2 % (19.0 → 19.5) and H100 TPOT median 9.3 → 10.4 %
 * (9.5 → 11.0): the subset's vLLM Llama-3.1-70B H100 rows (no version, run
 * with the recipe's async-scheduling: true) now price their decode steps
 * about 5 % under the measured TPOT, where the synchronous engine's host
 * time had matched it; on the full file vLLM H100 TPOT MAPE goes 16.9 →
 * 13.9 % and its median 5.1 → 5.3 %.
 * Tightened when SGLang's B200 recipes' TensorRT-LLM kernels
 * (scheduler.kernels; read from the recipes, not fitted) and TensorRT-LLM's
 * per-rank attention-DP balancing came in: SGLang TPOT MAPE 17.9 % (bound
 * 20.5 → 19.0), median 14.0 → 11.0 % (14.5 → 12.0); B200 TPOT MAPE 20.0 %
 * (22.5 → 21.0), median 13.4 % (15.5 → 14.5); all rows' TPOT MAPE 22.4 %
 * (24.0 → 23.5), median 13.7 → 12.8 % (14.5 → 13.5).
 * Moved when TensorRT-LLM's eager context iteration was refitted as 75 µs
 * a launch with half of host and GPU time in series (scripts/fit-engine.py
 * --trt-floor over its 1,024 aggregated rows: objective 0.523 → 0.464, TTFT
 * MAPE 29.0 → 27.0 %, TPOT 14.5 → 13.4 %; all of silicon-dev.csv TTFT 29.5
 * → 28.6 %, median 21.9 → 21.4 %, TensorRT-LLM TTFT median 23.8 → 22.4 %,
 * B200 22.6 → 21.5 %). Tightened: H100 TPOT MAPE 25.4 → 24.4 % (bound
 * 27.0 → 25.5), median 10.4 → 9.5 % (11.0 → 10.0), TTFT median 20.3 →
 * 23.5 % (25.5 → 24.5); TensorRT-LLM TPOT MAPE 23.5 → 23.1 % (25.0 →
 * 24.0). Loosened:
 * TensorRT-LLM's TTFT median 27.1 → 29.6 % (28.5 → 30.5) and B200's 26.5 →
 * 30.3 % (27.5 → 31.0): the subset's 40 TensorRT-LLM B200 aggregated rows
 * go from a median ratio 1.01 to 0.97 (median APE 20.6 → 24.1 %) where the
 * full file's 535 go from TTFT MAPE 28.5 to 24.8 %.
 * Loosened when the GEMM op model got its stream-K last wave and sub-wave
 * tile shrink (sk_wave; the GEMM sets refitted, H100 GEMM 10.4 / 38.4 →
 * 7.6 / 28.9 % median / p90 on the per-op tables): H100 TPOT median 9.5 →
 * 10.2 % (bound 10.0 → 11.0) over the subset's 85 H100 rows, while on the
 * full silicon-dev.csv H100's TPOT MAPE goes 11.2 → 10.9 % and its median
 * 6.2 → 6.0 % (all rows' TPOT 13.0 → 12.8 %, median 8.9 → 8.8 %; TTFT 28.6
 * → 28.7 %, median 21.3 %). On the subset: all rows' TPOT median 13.4 →
 * 12.8 %, TensorRT-LLM's 17.9 → 17.4 %, vLLM's 7.4 → 8.7 % (bound 9.5),
 * B200's 14.3 → 14.0 %; TTFT within 0.6 point.
 * Loosened when the op model's MoE (wide_mem, tile_exp, pair_inter, the
 * soft-L1 refit), attention (q_tile, l2_gain), MLA-BMM, DSA and GDN sets
 * were merged (each passed the bounds alone): B200's TTFT median ≤ 31.0 →
 * 31.01 % (bound 31.0 → 31.5) over the subset's 106 B200 rows, while the
 * full file's B200 TTFT MAPE stays 28.5 % (median 21.3 → 21.5 %) and all
 * rows' TPOT goes 12.8 → 12.7 % (median 8.8 → 8.7 %).
 * Loosened when a GDN layer's chunked delta-rule prefill came to count the
 * 8 kernels fla's forward launches (3 before; a count read off the source,
 * not fitted), so SGLang's eager floor holds Qwen3.5's prefill 45 x 5
 * launches longer. Of the subset's 8 Qwen3.5 rows the four of SGLang 0.5.9
 * (the source counted) come closer (TTFT error -41/-38/-22/-9 % →
 * -34/-27/-8/+3 %), the four of nightly builds, already predicted high,
 * move away (+15/+44/+51/+302 % → +36/+73/+79/+384 %; those builds may
 * launch fewer kernels a prefill), which moves SGLang's TTFT MAPE 53.4 →
 * 56.2 % (bound 55.0 → 56.5) and median 46.4 → 50.5 % (48.0 → 51.0), and
 * B200's TTFT MAPE 41.3 → 42.5 % (42.0 → 43.0), while on the full file the
 * 574 aggregated SGLang rows go TTFT MAPE 32.2 → 31.5 % (median 23.4 →
 * 22.4 %), the 224 Qwen3.5 ones 23.8 → 22.2 % (21.8 → 20.5 %), TPOT
 * 11.5 → 11.8 % (median 8.1 → 7.9 %); eager_launch_us refitted on the
 * full file stays at 200 µs in every leave-one-GPU/model-out fold
 * (docs/cost-model.md, "SGLang's eager floor: what it scales with").
 * Tightened when the rows whose measurement shows the benchmark client's
 * 100-connection pool replay with it (sim_fidelity_consistency.c, check 3;
 * the subset holds vLLM gpt-oss-120b H100 rows of that 512-client run):
 * vLLM TPOT MAPE 23.4 → 14.3 % (bound 26.0 → 15.5), H100 TPOT MAPE 24.6 →
 * 18.6 % (25.5 → 20.0), all rows' TPOT MAPE 21.8 → 19.1 % (23.5 → 20.5);
 * TTFT MAPE of all rows 39.7 → 39.8 %, vLLM 24.2 → 24.3 %, H100 37.0 →
 * 37.1 % (the 1k/8k TP 8 row, whose 0.11.2 run decoded at half the speed
 * the same deployment's 64-client run of 0.18.0 measured, is replayed at
 * 2.1× its 118 s TTFT instead of 0.2 %).
 * Moved when MiniMax-M2's QK norm over all heads came into the op list
 * (its per-layer all-reduce of the variances under TP, model_cost_eval.c):
 * tightened vLLM TPOT median 8.4 → 6.1 % (bound 9.5 → 7.0) and MAPE 14.3 →
 * 14.0 % (15.5 → 15.0); loosened all rows' TTFT median 26.5 → 27.1 %
 * (27.0 → 27.5): the subset's MiniMax rows at 4–16 clients, whose TTFT was
 * already predicted 5–15 % high, gain the norm and 62 small all-reduces in
 * their prefill (vLLM TTFT MAPE 24.3 → 24.7 %); on the full file all rows'
 * TTFT MAPE stays 28.2 % (median 20.3 → 20.5 %) while TPOT goes 11.7 →
 * 11.5 % (median 8.0 → 7.6 %), the MiniMax rows' 9.7 → 8.0 %.
 * Moved when vLLM's B200 recipes' all-reduce + RMSNorm fusion came in
 * (parallel.ar_norm_fusion for Llama-3.1-70B and gpt-oss-120b): vLLM TPOT
 * MAPE 14.0 → 13.5 %, median 6.1 → 5.9 %; all rows' TTFT median 27.06 →
 * 27.52 % (bound 27.5 → 28.0): the subset's Llama-3.1-70B TP 4/8 rows at
 * 8k prompts, predicted low already, lose their norms' launch floors in
 * prefill too; on the full file all rows' TTFT is unchanged (28.2 %,
 * median 20.5 %), TPOT 11.5 → 11.3 % (median 7.6 → 7.4 %).
 * Tightened when the TensorRT-LLM 1.2.0rc6.post3 rows (19 of the subset)
 * replayed InferenceX's MTP recipes as written (3 draft tokens, 1 with
 * attention DP; their token budget, no batch waiting; acceptance 0.726)
 * and the op model's MoE gained row_pad and the small-batch step:
 * TensorRT-LLM TTFT median 29.8 → 28.6 % (bound 30.5 → 30.0), TPOT MAPE
 * 22.5 → 22.3 % (24.0 → 23.5), median 17.3 → 16.8 % (18.0 → 17.5); B200
 * TTFT median 29.3 % (31.5 → 30.5), TPOT MAPE 19.0 % (21.0 → 20.0),
 * median 10.4 % (14.5 → 11.0); all rows' TTFT MAPE 39.7 % (42.0 → 41.5),
 * TPOT MAPE 18.8 % (20.5 → 20.0), median 10.4 % (13.5 → 11.0); on the
 * full file all rows' TTFT MAPE 28.2 % (median 20.5 → 20.3 %), TPOT
 * 11.3 → 11.2 % (median 7.4 → 7.3 %). */
typedef struct {
    const char *group;
    double ttft_mape, ttft_mdape, tpot_mape, tpot_mdape;
} bound;

static const bound backend_bounds[] = {
    {"sglang", 56.5, 51.0, 19.0, 12.0},
    {"trtllm", 43.0, 30.0, 23.5, 17.5},
    {"vllm", 27.0, 19.5, 15.0, 7.0},
};
static const bound gpu_bounds[] = {
    {"b200", 43.0, 30.5, 20.0, 11.0},
    {"h100-sxm", 40.0, 24.5, 20.0, 11.0},
};
static const bound all_bound = {"all", 41.5, 28.0, 20.0, 11.0};

static void check_group(const char *by, const sim_fidelity_group *g, const bound *b)
{
    printf("  %-8s %-9s %3d rows: TTFT MAPE %6.1f%% (<= %.1f) median %5.1f%% (<= %.1f); TPOT MAPE %5.1f%% (<= %.1f) "
           "median %5.1f%% (<= %.1f)\n",
           by, g->backend, g->n, g->ttft_mape, b->ttft_mape, g->ttft_mdape, b->ttft_mdape, g->tpot_mape, b->tpot_mape,
           g->tpot_mdape, b->tpot_mdape);
    CHECK_MSG(g->ttft_mape <= b->ttft_mape, "%s %s: TTFT MAPE %.2f%%", by, g->backend, g->ttft_mape);
    CHECK_MSG(g->ttft_mdape <= b->ttft_mdape, "%s %s: TTFT median APE %.2f%%", by, g->backend, g->ttft_mdape);
    CHECK_MSG(g->tpot_mape <= b->tpot_mape, "%s %s: TPOT MAPE %.2f%%", by, g->backend, g->tpot_mape);
    CHECK_MSG(g->tpot_mdape <= b->tpot_mdape, "%s %s: TPOT median APE %.2f%%", by, g->backend, g->tpot_mdape);
}

static const bound *find(const bound *bs, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(bs[i].group, key)) return &bs[i];
    return NULL;
}

static void test_subset(void)
{
    const char *src = test_src_dir();
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/data/fidelity/silicon-subset.csv", src);
    sim_fidelity_result r;
    sim_err e = {""};
    sim_fidelity_opts o = {0, NULL, 0, 2, NULL};
    REQUIRE_MSG(sim_fidelity_run(path, &o, &r, &e) == 0, "%s", e.msg);
    printf("%d of %d subset rows simulated\n", r.n_ok, r.n_rows);
    /* Every row simulates; the 28 disaggregated rows without worker counts
     * and without a row of the same measurement in the subset replay one
     * worker of each and are scored apart (layout unknown), in no group
     * the bounds hold. So is the vLLM gpt-oss-120b H100 tp4 8k/1k row at
     * 512 clients (TPOT 5.46 ms with 88 decoding, its 64-client row of the
     * subset 16.74 ms: an inconsistent measurement), and vLLM's Qwen3-32B
     * H100 PD row whose 215 decoding requests a TP4 worker need 1.5× its
     * HBM bandwidth at the measured TPOT (beyond the roofline). */
    CHECK(r.n_rows == 221);
    CHECK_MSG(r.n_ok >= 219, "%d rows simulated", r.n_ok);
    CHECK_MSG(r.layout_unknown.n == 28, "%d rows of unknown layout", r.layout_unknown.n);
    CHECK_MSG(r.inconsistent.n == 2, "%d inconsistent measurements", r.inconsistent.n);
    CHECK(r.all.n + r.layout_unknown.n + r.inconsistent.n == r.n_ok);
    check_group("all", &r.all, &all_bound);
    CHECK(r.n_backends == 3 && r.n_gpus == 2);
    for (int i = 0; i < r.n_backends; i++) {
        const bound *b = find(backend_bounds, 3, r.backends[i].backend);
        CHECK_MSG(b != NULL, "unexpected backend %s", r.backends[i].backend);
        if (b) check_group("backend", &r.backends[i], b);
    }
    for (int i = 0; i < r.n_gpus; i++) {
        const bound *b = find(gpu_bounds, 2, r.gpus[i].backend);
        CHECK_MSG(b != NULL, "unexpected GPU %s", r.gpus[i].backend);
        if (b) check_group("gpu", &r.gpus[i], b);
    }
    for (int i = 0; i < r.n_rows; i++)
        if (r.rows[i].ok)
            CHECK_MSG(r.rows[i].pred_ttft_ms > 0 && r.rows[i].pred_tpot_ms > 0 && r.rows[i].kv_tokens > 0,
                      "%s", r.rows[i].id);
    sim_fidelity_free(&r);
}

/* One KV-bound closed-loop run under a preset. */
typedef struct {
    sim_summary sum;
    sim_cluster_state st;
    int64_t kv_tokens;
} kv_run;

/* keep: scheduler.preempt_keeps_kv (-1 = the preset's). */
static int run_kv_bound_keep(const char *preset, int keep, kv_run *out)
{
    char p[64], kk[80];
    snprintf(p, sizeof p, "deployment.pools.0.scheduler.preset=%s", preset);
    snprintf(kk, sizeof kk, "deployment.pools.0.scheduler.preempt_keeps_kv=%s", keep ? "true" : "false");
    const char *sets[] = {"model=llama-3.1-8b",
                          "hardware.gpu=h100-sxm",
                          "workload.requests=640",
                          "workload.arrival.process=closed_loop",
                          "workload.arrival.concurrency=64",
                          "workload.input_tokens.dist=fixed",
                          "workload.input_tokens.value=1024",
                          "workload.output_tokens.dist=uniform",
                          "workload.output_tokens.min=896",
                          "workload.output_tokens.max=1152",
                          p,
                          "deployment.pools.0.scheduler.max_seqs=64",
                          /* 0.3 × 85.5 GB − 16 GB weights − 2 GB: ~58k tokens, 28 sequences of 2k;
                           * the same budget for every engine (not each one's own rule), so
                           * only their admission differs */
                          "deployment.pools.0.scheduler.gpu_mem_util=0.3",
                          "deployment.pools.0.scheduler.mem_fraction_of=total",
                          "output.db=",
                          kk};
    sim_scenario *sc = malloc(sizeof *sc);
    REQUIRE_OR(sc != NULL, return -1);
    sim_scenario_defaults(sc);
    sim_err e = {""};
    int n_sets = (int)(sizeof sets / sizeof sets[0]) - (keep < 0);
    int rc = sim_loader_overlay(sc, sets, n_sets, sc, &e);
    CHECK_MSG(rc == 0, "%s", e.msg);
    sim_cluster *cl = NULL;
    if (rc == 0) rc = sim_cluster_create(sc, &cl, &e);
    if (rc == 0) rc = sim_cluster_run(cl, &out->sum, &e);
    CHECK_MSG(rc == 0, "%s: %s", preset, e.msg);
    if (rc == 0) {
        sim_cluster_state_get(cl, &out->st);
        out->kv_tokens = sim_cluster_pool_kv_tokens(cl, 0);
    }
    sim_cluster_destroy(cl);
    free(sc);
    return rc;
}

static int run_kv_bound(const char *preset, kv_run *out) { return run_kv_bound_keep(preset, -1, out); }

static void test_kv_bound_no_thrash(void)
{
    const char *presets[] = {"vllm", "sglang", "trtllm"};
    for (int i = 0; i < 3; i++) {
        kv_run k;
        memset(&k, 0, sizeof k);
        if (run_kv_bound(presets[i], &k)) continue;
        double held = (double)k.kv_tokens / (1024 + 1024); /* sequences the KV holds at their longest */
        printf("KV-bound %-6s: KV %lld tokens (%.1f sequences), %lld preemptions for %lld requests, TTFT mean %.0f ms, "
               "TPOT mean %.2f ms, KV occupancy %.1f %%\n",
               presets[i], (long long)k.kv_tokens, held, (long long)k.st.preemptions, (long long)k.sum.requests_completed,
               k.sum.ttft_ms.mean, k.sum.tpot_ms.mean, 100 * k.sum.mean_kv_occupancy);
        CHECK(k.sum.requests_completed == 640);
        CHECK_MSG(held > 20 && held < 40, "%s: the KV holds %.1f sequences, expected a KV-bound deployment", presets[i],
                  held);
        if (!strcmp(presets[i], "vllm")) /* each request preempted about once at most, not thrashing */
            CHECK_MSG(k.st.preemptions <= k.sum.requests_completed, "%s: %lld preemptions", presets[i],
                      (long long)k.st.preemptions);
        else if (!strcmp(presets[i], "sglang")) /* ratio admission retracts, a few times, not thrashing */
            CHECK_MSG(k.st.preemptions <= k.sum.requests_completed / 4, "%s: %lld retractions", presets[i],
                      (long long)k.st.preemptions);
        else
            CHECK_MSG(k.st.preemptions == 0, "%s: %lld preemptions", presets[i], (long long)k.st.preemptions);
        /* Queueing, not recompute, makes the TTFT: with N sequences in the
         * cache the clients wait about (64/N − 1) lifetimes of one request
         * (TPOT × its output), so TTFT stays within a factor of two of that. */
        double life_ms = k.sum.tpot_ms.mean * 1024, expect = (64.0 / held - 1) * life_ms;
        CHECK_MSG(k.sum.ttft_ms.mean < 2.0 * expect && k.sum.ttft_ms.mean > 0.3 * expect,
                  "%s: TTFT %.0f ms, queueing alone explains %.0f ms", presets[i], k.sum.ttft_ms.mean, expect);
        CHECK_MSG(k.sum.mean_kv_occupancy > 0.6, "%s: KV occupancy %.2f", presets[i], k.sum.mean_kv_occupancy);
        if (!strcmp(presets[i], "vllm")) {
            kv_run full;
            memset(&full, 0, sizeof full);
            if (run_kv_bound_keep(presets[i], 0, &full)) continue;
            printf("KV-bound vllm, preempted KV not cached: %lld preemptions, TPOT mean %.2f ms\n",
                   (long long)full.st.preemptions, full.sum.tpot_ms.mean);
            CHECK_MSG(k.sum.tpot_ms.mean < full.sum.tpot_ms.mean, "TPOT %.2f ms with the cached KV, %.2f without",
                      k.sum.tpot_ms.mean, full.sum.tpot_ms.mean);
        }
    }
}

static void test_issue_rows_no_thrash(void)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/tests/data/fidelity/kv-bound-rows.csv", test_src_dir());
    sim_fidelity_result r;
    sim_err e = {""};
    sim_fidelity_opts o = {0, NULL, 0, 2, NULL};
    REQUIRE_MSG(sim_fidelity_run(path, &o, &r, &e) == 0, "%s", e.msg);
    CHECK(r.n_rows == 5 && r.n_ok == 5);
    for (int i = 0; i < r.n_rows; i++) {
        const sim_fidelity_row *x = &r.rows[i];
        if (!x->ok) continue;
        double per_req = (double)x->preemptions / (10.0 * x->concurrency), tpot = x->pred_tpot_ms / x->meas_tpot_ms;
        printf("  %s: %.2f preemptions per request, TPOT %.1f ms against %.1f measured (%.2fx), TTFT %.0f / %.0f ms\n",
               x->id, per_req, x->pred_tpot_ms, x->meas_tpot_ms, tpot, x->pred_ttft_ms, x->meas_ttft_ms);
        CHECK_MSG(per_req <= 1.5, "%s: %.2f preemptions per request", x->id, per_req);
        CHECK_MSG(tpot > 0.5 && tpot < 2.0, "%s: TPOT %.2fx the measured", x->id, tpot);
    }
    sim_fidelity_free(&r);
}

static const test_case cases[] = {
    {"kv_bound_no_thrash", test_kv_bound_no_thrash},
    {"issue_rows_no_thrash", test_issue_rows_no_thrash},
    {"subset", test_subset},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    return test_run("test_fidelity_subset", cases);
}
