/* kern_gpu — C interface to the bundled CUDA kernels and the library
 * references timed beside them (cuBLAS, NCCL, device copies). Built only
 * into the GPU backend plugin libservesim_gpu.so (-DSERVESIM_CUDA=ON); the
 * calibration harness (calib_backend_gpu_impl.c) is its only user. All pointers named d_* are device
 * memory owned by the caller (kern_gpu_malloc/kern_gpu_free). Launches go
 * to the default stream (per-thread: the .cu files are built with
 * --default-stream=per-thread, so launches can be captured into a CUDA
 * graph) and are asynchronous; every function checks the
 * launch and returns 0 or a negative SIM_E* code with the CUDA error text in
 * err (SIM_ENOTSUP when the device's compute capability lacks the
 * instruction, SIM_EINVAL for unsupported shapes, SIM_EIO for CUDA
 * failures). Element types: bf16 = uint16_t bit patterns, fp8 = OCP e4m3
 * bytes, scales fp32 (block-128) or E8M0 bytes (MXFP8); layouts and maths
 * are those of the CPU references in kern_*_ref.h. Times are seconds. */
#ifndef KERN_GPU_H
#define KERN_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "sim_err.h" /* C linkage for the .cu files too */

typedef struct {
    char name[256];
    char pci_bus_id[32]; /* "0000:1B:00.0", for NVML */
    int32_t sms, cc_major, cc_minor;
    int32_t sm_clock_mhz, mem_clock_mhz, mem_bus_bits;
    int64_t l2_bytes, mem_bytes;
    int32_t driver_version, runtime_version; /* e.g. 13000 */
} kern_gpu_info;

/* Number of CUDA devices; 0 with the reason in err when none is usable. */
int kern_gpu_count(int32_t *n, sim_err *err);
int kern_gpu_select(int32_t dev, kern_gpu_info *info, sim_err *err);

int kern_gpu_malloc(void **d_ptr, size_t bytes, sim_err *err);
void kern_gpu_free(void *d_ptr);
int kern_gpu_h2d(void *d_dst, const void *src, size_t bytes, sim_err *err);
int kern_gpu_d2h(void *dst, const void *d_src, size_t bytes, sim_err *err);
int kern_gpu_d2d(void *d_dst, const void *d_src, size_t bytes, sim_err *err);
int kern_gpu_sync(sim_err *err);
/* Sets bytes of device memory to `byte` (asynchronous, default stream):
 * NaN poisoning before a check, L2 flushing between timed samples. */
int kern_gpu_memset(void *d, int byte, size_t bytes, sim_err *err);
/* Uniform values in [-amp, amp): fp32, bf16, or e4m3 (then amp ≤ 448);
 * or E8M0 scales 2^e, e the nearest integer to such a value (amp ≤ 127). */
int kern_gpu_fill_f32(float *d, int64_t n, uint64_t seed, float amp, sim_err *err);
int kern_gpu_fill_bf16(uint16_t *d, int64_t n, uint64_t seed, float amp, sim_err *err);
int kern_gpu_fill_e4m3(uint8_t *d, int64_t n, uint64_t seed, float amp, sim_err *err);
int kern_gpu_fill_e8m0(uint8_t *d, int64_t n, uint64_t seed, float amp, sim_err *err);

/* Event timer on the default stream. */
typedef struct kern_gpu_timer kern_gpu_timer;
int kern_gpu_timer_create(kern_gpu_timer **t, sim_err *err);
void kern_gpu_timer_destroy(kern_gpu_timer *t);
int kern_gpu_timer_start(kern_gpu_timer *t, sim_err *err);
int kern_gpu_timer_stop(kern_gpu_timer *t, double *seconds, sim_err *err);

/* CUDA-graph capture of the launches made between begin and end (on the
 * default stream), replayed as one launch: timing a graph of back-to-back
 * launches leaves the host's per-launch cost out, as engines replaying
 * graphs do. A failed capture is abandoned cleanly (the caller times eager
 * launches instead). */
typedef struct kern_gpu_graph kern_gpu_graph;
int kern_gpu_capture_begin(sim_err *err);
int kern_gpu_capture_end(int ok, kern_gpu_graph **g, sim_err *err);
int kern_gpu_graph_launch(kern_gpu_graph *g, sim_err *err);
void kern_gpu_graph_destroy(kern_gpu_graph *g);

/* GEMM, C[M×N] = A[M×K]·B[K×N] in bf16, fp32 accumulate, mma.sync
 * m16n8k16 (sm_80+, the Ampere rung). N and K must be multiples of 8. A
 * skinny GEMM (M ≤ 64) splits K into kern_gemm_splits(M, N, K, SMs) parts
 * (kern_plan.h) when d_work holds at least kern_gemm_split_workspace(...)
 * bytes (fp32 partials, contents irrelevant; 0 bytes: no split needed);
 * with less it runs unsplit. */
int kern_gpu_gemm_bf16(int64_t M, int64_t N, int64_t K, const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C,
                       void *d_work, size_t work_bytes, sim_err *err);
/* The same GEMM as the Hopper rung (kern_gemm_sm90.cu): TMA loads into a
 * 4-stage mbarrier ring, wgmma m64n256k16, one producer and two consumer
 * warpgroups, persistent grid. SIM_ENOTSUP unless the device has compute
 * capability 9.0 and the build holds sm_90a code (kern_gpu_gemm_sm90_ok
 * says which, without launching). Same shape rules as kern_gpu_gemm_bf16. */
int kern_gpu_gemm_sm90_ok(sim_err *err);
int kern_gpu_gemm_bf16_sm90(int64_t M, int64_t N, int64_t K, const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C,
                            sim_err *err);
/* The Blackwell rung (kern_gemm_sm100.cu): TMA into a 4-stage ring,
 * tcgen05.mma M128 N256 K16 into two Tensor Memory accumulators, a
 * tcgen05.ld epilogue by 4 warps that drains one tile while the MMAs fill
 * the next; persistent grid. SIM_ENOTSUP unless the device has
 * compute capability 10.0 and the build holds sm_100a code. No Blackwell GPU
 * has run it yet. Same shape rules as kern_gpu_gemm_bf16. */
int kern_gpu_gemm_sm100_ok(sim_err *err);
int kern_gpu_gemm_bf16_sm100(int64_t M, int64_t N, int64_t K, const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C,
                             sim_err *err);
/* The MXFP8 block-scaled GEMM on the Blackwell rung
 * (kern_gemm_mxfp8_sm100.cu): e4m3 A (M×K) and B (N×K), E8M0 scales per 32
 * along K ([M][K/32] and [N][K/32] bytes, kern_quant_mxfp8's layout and
 * convention; maths as kern_gemm_mxfp8_ref), bf16 C; TMA for A and B,
 * cp.async for the scales, tcgen05.cp of the scales into Tensor Memory,
 * tcgen05.mma kind::mxf8f6f4 block_scale M128 N256 K32; one tile per CTA.
 * K must be a multiple of 128, N of 8, the scale arrays 4-byte aligned:
 * SIM_EINVAL. Offered where kern_gpu_gemm_sm100_ok is 0 (SIM_ENOTSUP
 * otherwise). No Blackwell GPU has run it yet. */
int kern_gpu_gemm_mxfp8_sm100(int64_t M, int64_t N, int64_t K, const uint8_t *d_Aq, const uint8_t *d_sa,
                              const uint8_t *d_Bq, const uint8_t *d_sb, uint16_t *d_C, sim_err *err);
/* fp8 e4m3 block-scaled GEMM (kern_gemm_fp8_block_ref layout: B is N×K,
 * scales 1×128 for A, 128×128 for B), mma.sync m16n8k32 (sm_89+). K must be
 * a multiple of 128 and N of 8. */
int kern_gpu_gemm_fp8_block(int64_t M, int64_t N, int64_t K, const uint8_t *d_Aq, const float *d_sa,
                            const uint8_t *d_Bq, const float *d_sb, uint16_t *d_C, sim_err *err);
/* The same GEMM as the Hopper rung (kern_gemm_fp8_sm90.cu, after DeepGEMM's
 * design): TMA loads of A and B into a 6-stage mbarrier ring, one 128-K
 * scale block per stage, wgmma m64n128k32 e4m3 into a per-stage fp32
 * accumulator promoted with the block's scales on the CUDA cores, one
 * producer and two consumer warpgroups, persistent grid. SIM_ENOTSUP unless
 * the device has compute capability 9.0 and the build holds sm_90a code
 * (kern_gpu_gemm_fp8_block_sm90_ok says which, without launching). Same
 * layouts and shape rules as kern_gpu_gemm_fp8_block. */
int kern_gpu_gemm_fp8_block_sm90_ok(sim_err *err);
int kern_gpu_gemm_fp8_block_sm90(int64_t M, int64_t N, int64_t K, const uint8_t *d_Aq, const float *d_sa,
                                 const uint8_t *d_Bq, const float *d_sb, uint16_t *d_C, sim_err *err);
/* The virtual architecture of the fp8 GEMM code this device loaded
 * (kern_arch.h); SIM_ENOTSUP when it has no fp8 mma (the build lacks the
 * device's architecture and the driver picked older code that would trap). */
int kern_gpu_fp8_code(int *virtual_arch, sim_err *err);
/* Grouped GEMM (bf16) in the two MoE layouts of kern_grouped_ref.h on the
 * Ampere rung's tile (kern_grouped.cu, sm_80+): a one-CTA kernel builds the
 * list of 128-row M tiles of every expert (kern_grouped_plan.h) from
 * d_offsets / d_counts (on the device) into d_work, then a persistent grid
 * multiplies exactly those tiles. max_rows (contiguous: the largest group,
 * masked: cap) bounds the list; d_work must hold
 * kern_grouped_workspace(E, max_rows) bytes (contents irrelevant). */
int kern_gpu_grouped_contig(int32_t E, int64_t max_rows, int64_t N, int64_t K, const int64_t *d_offsets,
                            const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, void *d_work, size_t work_bytes,
                            sim_err *err);
int kern_gpu_grouped_masked(int32_t E, int64_t cap, int64_t N, int64_t K, const int64_t *d_counts,
                            const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, void *d_work, size_t work_bytes,
                            sim_err *err);
/* The same grouped GEMM as the Hopper rung (kern_grouped_sm90.cu): the
 * same tile list, walked by a persistent grid on the Hopper GEMM rung's
 * tile (TMA into a 4-stage mbarrier ring, wgmma m64n256k16, one producer
 * and two consumer warpgroups); B through one 3-D tensor map over the
 * stacked [E][K][N] weights. Contiguous: A and C hold `rows` rows (at
 * least offsets[E]); masked: E·cap. SIM_ENOTSUP unless the device has
 * compute capability 9.0 and the build holds sm_90a code
 * (kern_gpu_grouped_sm90_ok says which, without launching). Same
 * workspace, shape rules and results as the Ampere rung. */
int kern_gpu_grouped_sm90_ok(sim_err *err);
int kern_gpu_grouped_contig_sm90(int32_t E, int64_t rows, int64_t max_rows, int64_t N, int64_t K,
                                 const int64_t *d_offsets, const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C,
                                 void *d_work, size_t work_bytes, sim_err *err);
int kern_gpu_grouped_masked_sm90(int32_t E, int64_t cap, int64_t N, int64_t K, const int64_t *d_counts,
                                 const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, void *d_work,
                                 size_t work_bytes, sim_err *err);

/* Flash prefill over `batch` equal sequences laid out back to back
 * (q [batch][n_q][hq][d], k/v [batch][cached+n_q][hkv][d], bf16), causal,
 * GQA, online softmax over KV tiles; o bf16, lse fp32 [batch][n_q][hq] (may
 * be NULL). d must be 64 or 128; hq/hkv ≤ 16. */
int kern_gpu_attn_prefill(int32_t batch, int32_t n_q, int32_t cached, int32_t hq, int32_t hkv, int32_t d,
                          float sm_scale, const uint16_t *d_q, const uint16_t *d_k, const uint16_t *d_v,
                          uint16_t *d_o, float *d_lse, sim_err *err);
/* The same prefill on tensor cores (kern_attn_mma.cu, the Ampere rung,
 * sm_80+; FlashAttention-2's design): 64 query rows of one head per CTA,
 * mma.sync m16n8k16 for Q·Kᵀ and P·V, online softmax in registers, K/V
 * tiles of 64 keys through a 2-stage cp.async ring. Same layouts and
 * results (within bf16 rounding of P); d 64 or 128, any hq multiple of hkv;
 * SIM_ENOTSUP below compute capability 8.0. */
int kern_gpu_attn_prefill_mma(int32_t batch, int32_t n_q, int32_t cached, int32_t hq, int32_t hkv, int32_t d,
                              float sm_scale, const uint16_t *d_q, const uint16_t *d_k, const uint16_t *d_v,
                              uint16_t *d_o, float *d_lse, sim_err *err);
/* The same prefill as the Hopper rung (kern_attn_sm90.cu, after
 * FlashAttention-3's design): 128 query rows of one head per CTA, a
 * producer warpgroup's TMA loads of Q and of 128-key K and V tiles into an
 * mbarrier ring, two consumer warpgroups computing Q·Kᵀ (both operands in
 * shared memory) and P·V (P in registers) with wgmma in ping-pong,
 * online softmax in registers, setmaxnreg. SIM_ENOTSUP unless the device has compute
 * capability 9.0 and the build holds sm_90a code
 * (kern_gpu_attn_prefill_sm90_ok says which, without launching). Same
 * layouts, shape rules and results as kern_gpu_attn_prefill_mma. */
int kern_gpu_attn_prefill_sm90_ok(sim_err *err);
int kern_gpu_attn_prefill_sm90(int32_t batch, int32_t n_q, int32_t cached, int32_t hq, int32_t hkv, int32_t d,
                               float sm_scale, const uint16_t *d_q, const uint16_t *d_k, const uint16_t *d_v,
                               uint16_t *d_o, float *d_lse, sim_err *err);
/* Paged split-KV decode (kern_decode_split_ref layout, bf16 q and cache,
 * fp32 partial outputs); d_ctx_len and d_block_table on the device. */
int kern_gpu_decode_split(int32_t batch, int32_t hq, int32_t hkv, int32_t d, int32_t page, int32_t max_pages,
                          float sm_scale, const int32_t *d_ctx_len, const int32_t *d_block_table, int32_t n_splits,
                          const uint16_t *d_q, const uint16_t *d_kc, const uint16_t *d_vc, float *d_o_part,
                          float *d_lse_part, sim_err *err);
/* The same decode on tensor cores (kern_decode_mma.cu, the Ampere rung,
 * sm_80+): a CTA per split × KV head × request, the GQA group (≤ 16) as the
 * mma's 16 rows, 64-key tiles gathered from the pages through a 3-stage
 * cp.async ring. Same layouts and results (within bf16 rounding of P);
 * n_splits is the caller's, sized for it by kern_decode_splits
 * (kern_plan.h). d 64 or 128; SIM_ENOTSUP below compute capability 8.0. */
int kern_gpu_decode_split_mma(int32_t batch, int32_t hq, int32_t hkv, int32_t d, int32_t page, int32_t max_pages,
                              float sm_scale, const int32_t *d_ctx_len, const int32_t *d_block_table, int32_t n_splits,
                              const uint16_t *d_q, const uint16_t *d_kc, const uint16_t *d_vc, float *d_o_part,
                              float *d_lse_part, sim_err *err);
int kern_gpu_lse_merge(int32_t P, int64_t rows, int32_t d, const float *d_o_part, const float *d_lse_part,
                       float *d_o, float *d_lse, sim_err *err);

/* Safe softmax over rows of an fp32 [rows][cols] matrix: one warp per row
 * (short rows) or one block per row (long rows), warp-shuffle reductions of
 * the online (max, sum) state. */
int kern_gpu_softmax_warp(const float *d_x, int64_t rows, int64_t cols, float *d_y, sim_err *err);
int kern_gpu_softmax_block(const float *d_x, int64_t rows, int64_t cols, float *d_y, sim_err *err);
/* RMSNorm, bf16 in/out, fp32 weight and maths. */
int kern_gpu_rmsnorm(const uint16_t *d_x, const float *d_w, int64_t rows, int64_t cols, float eps,
                     uint16_t *d_y, sim_err *err);
/* Quantisation from bf16 (cols a multiple of the block). */
int kern_gpu_quant_fp8_block128(const uint16_t *d_x, int64_t rows, int64_t cols, uint8_t *d_q, float *d_scales,
                                sim_err *err);
int kern_gpu_quant_mxfp8(const uint16_t *d_x, int64_t rows, int64_t cols, uint8_t *d_q, uint8_t *d_scales,
                         sim_err *err);

/* Library references. The cuBLAS handle is created on first use and kept
 * in the opaque context; the NCCL collectives run over `ranks` local
 * devices (single process, one communicator per device). */
typedef struct kern_gpu_lib kern_gpu_lib;
int kern_gpu_lib_create(kern_gpu_lib **lib, sim_err *err);
void kern_gpu_lib_destroy(kern_gpu_lib *lib);
int kern_gpu_cublas_gemm_bf16(kern_gpu_lib *lib, int64_t M, int64_t N, int64_t K, const uint16_t *d_A,
                              const uint16_t *d_B, uint16_t *d_C, sim_err *err);
/* NCCL collectives in bf16 over `ranks` devices; `bytes` is each rank's
 * whole buffer: all-reduce (sum) in place, all-gather's output (each rank
 * contributes bytes/ranks), reduce-scatter's input (sum; each rank keeps
 * bytes/ranks), all-to-all's send and receive buffers (bytes/ranks to and
 * from each peer, grouped ncclSend/ncclRecv). Timed inside (events on
 * device 0); buffers are allocated on first use. */
enum { KERN_COLL_ALL_REDUCE = 0, KERN_COLL_ALL_GATHER = 1, KERN_COLL_REDUCE_SCATTER = 2, KERN_COLL_ALL_TO_ALL = 3 };
int kern_gpu_nccl_collective(kern_gpu_lib *lib, int kind, int32_t ranks, int64_t bytes, double *seconds,
                             sim_err *err);

#ifdef __cplusplus
}
#endif

#endif
