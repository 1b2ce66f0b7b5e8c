/* kern_grouped — the MoE grouped GEMM C_e = A_e·B_e in bf16 (fp32
 * accumulate) for both layouts of kern_grouped_ref.h, on the Ampere rung's
 * block tile (kern_mma.cuh, kern_gemm_tile: mma.sync m16n8k16, 3-stage
 * cp.async ring, swizzled shared memory, ldmatrix), sm_80+.
 *
 * Work is a tile list (kern_grouped_plan.h): every 128-row M tile of every
 * expert as (expert, first row, rows). It is built on the device, from the
 * device-side offsets (contiguous) or counts (masked), by a one-CTA kernel
 * launched just before the GEMM — engines route on the GPU, so the host
 * never sees the rows per expert: each thread counts the tiles of its share
 * of the experts, a block scan gives each its first slot, and it writes
 * them. The GEMM kernel is then a persistent grid (the CTAs that fit the
 * SMs at once, no more than the largest list could need) whose CTAs walk
 * the work items (list tile × N tile, N fastest, so neighbouring CTAs share
 * an A tile) with a stride of the grid: empty experts and a masked slab's
 * unused rows cost nothing, and only each expert's last tile is partial.
 * The same kernel serves both layouts: a tile's rows are base + row0 in A
 * and C whatever the layout.
 *
 * The list builder (kern_grouped_list_build, kern_grouped.cuh) is shared
 * with the Hopper rung (kern_grouped_sm90.cu). The caller owns a device
 * workspace of kern_grouped_workspace(E, max_rows) bytes (the count and
 * the list); max_rows must bound every group (masked: the cap). Errors:
 * SIM_EINVAL for N or K not multiples of 8, no experts, or a workspace too
 * small; SIM_EIO for CUDA failures. */
#include "kern_grouped.cuh"
#include "kern_mma.cuh"

namespace {

using namespace kern_gemm_tile;

constexpr int PLAN_THREADS = 1024; /* 32 warps: one warp scans the warps' sums */

/* Exclusive prefix sum of v over the CTA (PLAN_THREADS threads); *total
 * gets the sum of all. */
__device__ __forceinline__ int64_t block_scan(int64_t v, int64_t *total)
{
    __shared__ int64_t warp_sum[PLAN_THREADS / 32];
    int lane = threadIdx.x % 32, w = threadIdx.x / 32;
    int64_t x = v;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        int64_t y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) warp_sum[w] = x;
    __syncthreads();
    if (w == 0) {
        int64_t s = warp_sum[lane];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            int64_t y = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= o) s += y;
        }
        warp_sum[lane] = s;
    }
    __syncthreads();
    *total = warp_sum[PLAN_THREADS / 32 - 1];
    return (w ? warp_sum[w - 1] : 0) + x - v;
}

/* The tile list of kern_grouped_plan_{contig,masked}, on one CTA: thread i
 * takes experts [E·i/T, E·(i+1)/T). Tiles past `max` are not written (the
 * count is cut to max: max_rows understated). */
template <bool MASKED>
__global__ void __launch_bounds__(PLAN_THREADS) grouped_plan_kernel(const int64_t *rows_of, int64_t cap, int32_t E,
                                                                    int64_t max, int64_t *count,
                                                                    kern_grouped_tile *tiles)
{
    int32_t e0 = (int32_t)((int64_t)E * threadIdx.x / PLAN_THREADS);
    int32_t e1 = (int32_t)((int64_t)E * (threadIdx.x + 1) / PLAN_THREADS);
    int64_t mine = 0, total, base, rows;
    for (int32_t e = e0; e < e1; e++) {
        kern_grouped_group(MASKED, e, cap, rows_of, &base, &rows);
        mine += kern_grouped_group_tiles(rows);
    }
    int64_t n = block_scan(mine, &total);
    for (int32_t e = e0; e < e1; e++) {
        kern_grouped_group(MASKED, e, cap, rows_of, &base, &rows);
        for (int64_t j = 0, nt = kern_grouped_group_tiles(rows); j < nt; j++, n++)
            if (n < max) tiles[n] = kern_grouped_tile_of(e, base, rows, j);
    }
    if (threadIdx.x == 0) *count = total < max ? total : max;
}

/* Work item w = (list tile w / nt, N tile w % nt); CTA b takes b, b + grid, … */
__global__ void __launch_bounds__(THREADS) grouped_tiles_kernel(const int64_t *count, const kern_grouped_tile *tiles,
                                                                const uint16_t *A, const uint16_t *B, uint16_t *C,
                                                                int64_t N, int64_t K)
{
    extern __shared__ __align__(128) uint16_t smem[];
    int64_t nt = (N + BN - 1) / BN, items = *count * nt, kt = (K + BK - 1) / BK;
    for (int64_t w = blockIdx.x; w < items; w += gridDim.x) {
        kern_grouped_tile g = tiles[w / nt];
        Tile t = {A + g.row0 * K, B + (int64_t)g.expert * K * N, g.rows, N, K, 0, (w % nt) * BN};
        float acc[4][4][4];
        tile_mainloop(smem, t, 0, kt, acc);
        tile_store(acc, C + g.row0 * N, g.rows, N, 0, t.n0);
    }
}

int grouped_launch(bool masked, int32_t E, int64_t max_rows, int64_t cap, int64_t N, int64_t K,
                   const int64_t *d_rows_of, const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, void *d_work,
                   size_t work_bytes, sim_err *err)
{
    const char *what = masked ? "grouped_masked" : "grouped_contig";
    kern_grouped_list list;
    int rc = kern_grouped_list_build(masked, what, E, max_rows, cap, N, K, d_rows_of, d_work, work_bytes, &list, err);
    int dev = 0, sms = 0, per_sm = 0;
    if (rc || !list.max) return rc;
    KERN_CU_TRY(cudaFuncSetAttribute(grouped_tiles_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES),
                err);
    KERN_CU_TRY(cudaGetDevice(&dev), err);
    KERN_CU_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err);
    KERN_CU_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grouped_tiles_kernel, THREADS, SMEM_BYTES), err);
    int64_t items = list.max * ((N + BN - 1) / BN), ctas = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
    grouped_tiles_kernel<<<(unsigned)(items < ctas ? items : ctas), THREADS, SMEM_BYTES>>>(list.count, list.tiles, d_A,
                                                                                         d_B, d_C, N, K);
    return kern_cu_launched(what, err);
}

} // namespace

int kern_grouped_list_build(bool masked, const char *what, int32_t E, int64_t max_rows, int64_t cap, int64_t N,
                            int64_t K, const int64_t *d_rows_of, void *d_work, size_t work_bytes,
                            kern_grouped_list *list, sim_err *err)
{
    list->max = 0;
    if (E < 1 || N < 8 || K < 8 || N % 8 || K % 8)
        return sim_err_set(err, SIM_EINVAL, "%s: needs experts and N, K multiples of 8 (got E=%d N=%lld K=%lld)", what,
                           E, (long long)N, (long long)K);
    if (max_rows < 1) return 0;
    size_t need = kern_grouped_workspace(E, max_rows);
    if (!d_work || work_bytes < need)
        return sim_err_set(err, SIM_EINVAL, "%s: workspace of %zu bytes, needs %zu", what, work_bytes, need);
    int64_t max = kern_grouped_tiles_max(E, max_rows), *d_count = (int64_t *)d_work;
    kern_grouped_tile *d_tiles = (kern_grouped_tile *)((char *)d_work + 16);
    if (masked) grouped_plan_kernel<true><<<1, PLAN_THREADS>>>(d_rows_of, cap, E, max, d_count, d_tiles);
    else grouped_plan_kernel<false><<<1, PLAN_THREADS>>>(d_rows_of, cap, E, max, d_count, d_tiles);
    int rc = kern_cu_launched(what, err);
    if (rc) return rc;
    list->count = d_count, list->tiles = d_tiles, list->max = max;
    return 0;
}

extern "C" int kern_gpu_grouped_contig(int32_t E, int64_t max_rows, int64_t N, int64_t K, const int64_t *d_offsets,
                                       const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, void *d_work,
                                       size_t work_bytes, sim_err *err)
{
    return grouped_launch(false, E, max_rows, 0, N, K, d_offsets, d_A, d_B, d_C, d_work, work_bytes, err);
}

extern "C" int kern_gpu_grouped_masked(int32_t E, int64_t cap, int64_t N, int64_t K, const int64_t *d_counts,
                                       const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, void *d_work,
                                       size_t work_bytes, sim_err *err)
{
    return grouped_launch(true, E, cap, cap, N, K, d_counts, d_A, d_B, d_C, d_work, work_bytes, err);
}
