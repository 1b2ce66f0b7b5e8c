/* kern_grouped_sm90 — the Hopper rung of the MoE grouped GEMM C_e = A_e·B_e
 * (bf16 in and out, fp32 accumulate; kern_grouped.cu is the Ampere rung)
 * for both layouts of kern_grouped_ref.h, written from the PTX ISA for
 * sm_90a.
 *
 * Work is the same device-built tile list as the Ampere rung's
 * (kern_grouped.cuh: every 128-row M tile of every expert as (expert, first
 * row, rows)), and the block tile, ring and warpgroups are the Hopper GEMM
 * rung's (kern_wgmma.cuh, kern_gemm_sm90.cu): 128×256×64 on 384 threads,
 * a producer warpgroup whose one thread issues the TMA copies into a ring
 * of 4 stages of 48 KB with full/empty mbarriers, two consumer warpgroups
 * of 64 rows each running wgmma m64n256k16, setmaxnreg (producer 40,
 * consumers 232). The grid is persistent (one CTA per SM, no more than the
 * largest list could need); CTA b walks the work items b, b + grid, …,
 * item w being (list tile w / nt, N tile w % nt), N fastest so that
 * neighbouring CTAs share the A tile. The ring's counter runs on across
 * items, so its phases carry from one expert's tile to the next.
 *
 * Tensor maps (kern_grouped_rung_maps): A is one 2-D map over the stacked
 * tokens (`rows` × K: the contiguous layout's packed rows, the masked
 * layout's E·cap slab rows), loaded from the tile's first row; B is one
 * 3-D map over the stacked weights [E][K][N], the expert the outer
 * coordinate. A partial tile's A box runs into the next expert's rows (or
 * is zero-filled past `rows`): those rows' products are computed and not
 * stored — the epilogue writes only the tile's `rows` rows, bf16 pairs from
 * registers. N and K multiples of 8 (16-byte global strides).
 *
 * Only sm_90a has wgmma/setmaxnreg: other architectures of the build get a
 * body that traps, and the host launches it only on compute capability 9.0
 * with sm_90a code in the build (kern_gpu_grouped_sm90_ok). Errors: those
 * of kern_grouped_list_build and kern_grouped_rung_maps; SIM_ENOTSUP off
 * such a device or build; SIM_EIO for CUDA failures. */
#include "kern_grouped.cuh"
#include "kern_wgmma.cuh"

namespace {

using namespace kern_wgmma_bf16;

#ifdef KERN_SM90A
/* Work item w of the list: its tile and its N tile's first column. */
__device__ __forceinline__ kern_grouped_tile item(const kern_grouped_tile *tiles, int64_t w, int64_t nt, int &n0)
{
    n0 = (int)(w % nt) * BN;
    return tiles[w / nt];
}

__device__ __forceinline__ void producer(const CUtensorMap *ta, const CUtensorMap *tb, const kern_grouped_tile *tiles,
                                         int64_t items, int64_t nt, const kern_bf16_ring &r, int kblocks)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(ta)) : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tb)) : "memory");
    uint32_t it = 0; /* runs on across items: the ring's phases carry from expert to expert */
    for (int64_t w = blockIdx.x; w < items; w += gridDim.x) {
        int n0;
        kern_grouped_tile g = item(tiles, w, nt, n0);
        for (int kb = 0; kb < kblocks; kb++, it++) {
            uint32_t s = kern_bf16_stage_acquire(r, it), bar = r.full + 8 * s;
            uint32_t a = r.base + s * STAGE_BYTES, b = a + A_BYTES;
            kern_tma_load(a, ta, bar, kb * BK, (int)g.row0); /* rows past the tile's: computed, not stored */
#pragma unroll
            for (int j = 0; j < BN / BOX_N; j++)
                kern_tma_load_3d(b + j * B_BOX_BYTES, tb, bar, n0 + j * BOX_N, kb * BK, g.expert);
        }
    }
}

__device__ __forceinline__ void consumer(uint16_t *C, const kern_grouped_tile *tiles, int64_t items, int64_t nt, int N,
                                         const kern_bf16_ring &r, int kblocks, int cw, int warp, int lane)
{
    uint32_t it = 0;
    float d[128];
    for (int64_t w = blockIdx.x; w < items; w += gridDim.x) {
        int n0;
        kern_grouped_tile g = item(tiles, w, nt, n0);
        kern_bf16_consume(d, r, kblocks, it, cw, lane);
        kern_wgmma_store_bf16(C + g.row0 * N, g.rows, N, cw * 64 + warp * 16, n0, d, lane);
    }
}
#endif

/* The list's count is read on the device: the host never sees it. */
__global__ void __launch_bounds__(THREADS, 1) grouped_sm90_kernel(const __grid_constant__ CUtensorMap ta,
                                                                  const __grid_constant__ CUtensorMap tb,
                                                                  const int64_t *count,
                                                                  const kern_grouped_tile *tiles, uint16_t *C,
                                                                  int N, int K)
{
#ifdef KERN_SM90A
    const CUtensorMap *pa = &ta, *pb = &tb;
    const int64_t nt = (N + BN - 1) / BN, items = *count * nt;
    const int kblocks = (K + BK - 1) / BK;
    kern_bf16_run([=](const kern_bf16_ring &r) { producer(pa, pb, tiles, items, nt, r, kblocks); },
                  [=](const kern_bf16_ring &r, int cw, int warp, int lane) {
                      consumer(C, tiles, items, nt, N, r, kblocks, cw, warp, lane);
                  });
#else
    __trap(); /* never launched: the host checks for sm_90a code on a cc 9.0 device */
#endif
}

const char *const RUNG = "Hopper grouped GEMM (wgmma, TMA)";

/* `rows`: the rows A and C hold (contiguous: at least offsets[E]; masked:
 * E·cap). */
int grouped_sm90_launch(bool masked, int32_t E, int64_t rows, int64_t max_rows, int64_t cap, int64_t N, int64_t K,
                        const int64_t *d_rows_of, const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C,
                        void *d_work, size_t work_bytes, sim_err *err)
{
    const char *what = masked ? "grouped_masked_sm90" : "grouped_contig_sm90";
    CUtensorMap ta, tb;
    kern_grouped_list list;
    unsigned grid = 0;
    int rc = kern_gemm_rung_ok(90, RUNG, err);
    if (!rc)
        rc = kern_grouped_list_build(masked, what, E, max_rows, cap, N, K, d_rows_of, d_work, work_bytes, &list, err);
    if (rc || !list.max) return rc;
    if ((rc = kern_grouped_rung_maps(90, RUNG, rows, E, N, K, d_A, d_B, BM, BK, BOX_N, &ta, &tb, err))) return rc;
    if ((rc = kern_persistent_grid(RUNG, list.max * ((N + BN - 1) / BN), &grid, err))) return rc;
    return kern_cu_launch_smem(what, grouped_sm90_kernel, dim3(grid), THREADS, SMEM_BYTES, err, ta, tb, list.count,
                               list.tiles, d_C, (int)N, (int)K);
}

} // namespace

extern "C" int kern_gpu_grouped_sm90_ok(sim_err *err)
{
    return kern_gemm_rung_ok(90, RUNG, err);
}

extern "C" int kern_gpu_grouped_contig_sm90(int32_t E, int64_t rows, int64_t max_rows, int64_t N, int64_t K,
                                            const int64_t *d_offsets, const uint16_t *d_A, const uint16_t *d_B,
                                            uint16_t *d_C, void *d_work, size_t work_bytes, sim_err *err)
{
    return grouped_sm90_launch(false, E, rows, max_rows, 0, N, K, d_offsets, d_A, d_B, d_C, d_work, work_bytes, err);
}

extern "C" int kern_gpu_grouped_masked_sm90(int32_t E, int64_t cap, int64_t N, int64_t K, const int64_t *d_counts,
                                            const uint16_t *d_A, const uint16_t *d_B, uint16_t *d_C, void *d_work,
                                            size_t work_bytes, sim_err *err)
{
    return grouped_sm90_launch(true, E, (int64_t)E * cap, cap, cap, N, K, d_counts, d_A, d_B, d_C, d_work, work_bytes,
                               err);
}
