/* kern_tma — see kern_tma.cuh. */
#include "kern_tma.cuh"

#include "kern_arch.h"
#include "kern_tma_plan.h"

#include <cudaTypedefs.h>

namespace {

typedef PFN_cuTensorMapEncodeTiled_v12000 encode_fn;

/* A rows×cols row-major matrix of `elem` bytes per element (bf16 or fp8
 * bytes) with boxes of box_cols × box_rows; with batch > 0, `batch` such
 * matrices back to back (a 3-D map, boxes one matrix deep, so rows past
 * `rows` are zero-filled rather than read from the next matrix). The
 * arguments are kern_tma_tiled_plan's (tested on the CPU); the swizzle is
 * the 128-byte one the descriptors of kern_desc.h name. */
int encode(encode_fn fn, CUtensorMap *map, CUtensorMapDataType type, int elem, const void *p, int64_t rows,
           int64_t cols, int64_t batch, uint32_t box_cols, uint32_t box_rows, sim_err *err)
{
    kern_tma_tiled t;
    int rc = kern_tma_tiled_plan((uintptr_t)p, (uint32_t)elem, rows, cols, batch, box_cols, box_rows, &t, err);
    if (rc) return rc;
    CUresult r = fn(map, type, t.rank, (void *)p, t.dims, t.strides, t.box, t.elem_strides,
                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return sim_err_set(err, SIM_EIO, "cuTensorMapEncodeTiled (%lld×%lld, box %u×%u): CUresult %d", (long long)rows,
                           (long long)cols, box_rows, box_cols, (int)r);
    return 0;
}

/* The driver's encoder, fetched without linking libcuda. */
int encoder(encode_fn *out, sim_err *err)
{
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    KERN_CU_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q), err);
    if (q != cudaDriverEntryPointSuccess || !fn)
        return sim_err_set(err, SIM_ENOTSUP, "the driver has no cuTensorMapEncodeTiled (query result %d)", (int)q);
    *out = (encode_fn)fn;
    return 0;
}

/* The maps of A (a_rows × a_cols, boxes a_box[0] inner × a_box[1]) and B
 * (likewise; with b_batch > 0, b_batch such matrices as one 3-D map) of
 * one element type. */
int encode_pair(CUtensorMapDataType type, int elem, const void *A, int64_t a_rows, int64_t a_cols,
                const uint32_t a_box[2], const void *B, int64_t b_rows, int64_t b_cols, int64_t b_batch,
                const uint32_t b_box[2], CUtensorMap *ta, CUtensorMap *tb, sim_err *err)
{
    encode_fn fn = NULL;
    int rc = encoder(&fn, err);
    if (!rc) rc = encode(fn, ta, type, elem, A, a_rows, a_cols, 0, a_box[0], a_box[1], err);
    return rc ? rc : encode(fn, tb, type, elem, B, b_rows, b_cols, b_batch, b_box[0], b_box[1], err);
}

} // namespace

int kern_gemm_rung_maps(int cc, const char *rung, int64_t M, int64_t N, int64_t K, const uint16_t *d_A,
                        const uint16_t *d_B, uint32_t box_m, uint32_t box_k, uint32_t box_n, CUtensorMap *ta,
                        CUtensorMap *tb, sim_err *err)
{
    int rc = kern_gemm_rung_ok(cc, rung, err);
    if (rc) return rc;
    if (M < 1 || N < 8 || K < 8 || N % 8 || K % 8 || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
        return sim_err_set(err, SIM_EINVAL, "the %s needs N, K multiples of 8, all below 2^31 (got M=%lld N=%lld K=%lld)",
                           rung, (long long)M, (long long)N, (long long)K);
    const uint32_t a_box[2] = {box_k, box_m}, b_box[2] = {box_n, box_k};
    return encode_pair(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d_A, M, K, a_box, d_B, K, N, 0, b_box, ta, tb, err);
}

int kern_gemm_rung_maps_fp8(int cc, const char *rung, int64_t M, int64_t N, int64_t K, const uint8_t *d_A,
                            const uint8_t *d_B, uint32_t box_m, uint32_t box_n, uint32_t box_k, CUtensorMap *ta,
                            CUtensorMap *tb, sim_err *err)
{
    int rc = kern_gemm_rung_ok(cc, rung, err);
    if (rc) return rc;
    if (M < 1 || N < 8 || K < 128 || N % 8 || K % 128 || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
        return sim_err_set(err, SIM_EINVAL,
                           "the %s needs K a multiple of 128 and N of 8, all below 2^31 (got M=%lld N=%lld K=%lld)",
                           rung, (long long)M, (long long)N, (long long)K);
    const uint32_t a_box[2] = {box_k, box_m}, b_box[2] = {box_k, box_n};
    return encode_pair(CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, d_A, M, K, a_box, d_B, N, K, 0, b_box, ta, tb, err);
}

int kern_grouped_rung_maps(int cc, const char *rung, int64_t rows, int32_t E, int64_t N, int64_t K,
                           const uint16_t *d_A, const uint16_t *d_B, uint32_t box_m, uint32_t box_k, uint32_t box_n,
                           CUtensorMap *ta, CUtensorMap *tb, sim_err *err)
{
    int rc = kern_gemm_rung_ok(cc, rung, err);
    if (rc) return rc;
    if (rows < 1 || E < 1 || N < 8 || K < 8 || N % 8 || K % 8 || rows > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
        return sim_err_set(err, SIM_EINVAL,
                           "the %s needs rows and experts, N and K multiples of 8, all below 2^31 (got rows=%lld E=%d "
                           "N=%lld K=%lld)",
                           rung, (long long)rows, (int)E, (long long)N, (long long)K);
    const uint32_t a_box[2] = {box_k, box_m}, b_box[2] = {box_n, box_k};
    return encode_pair(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d_A, rows, K, a_box, d_B, K, N, E, b_box, ta, tb, err);
}

int kern_attn_rung_maps(int cc, const char *rung, int32_t batch, int32_t n_q, int32_t n_kv, int32_t hq,
                        int32_t hkv, int32_t d, const uint16_t *d_q, const uint16_t *d_k, const uint16_t *d_v,
                        uint32_t box_q, uint32_t box_kv, CUtensorMap *tq, CUtensorMap *tk, CUtensorMap *tv,
                        sim_err *err)
{
    encode_fn fn = NULL;
    int rc = kern_gemm_rung_ok(cc, rung, err);
    if (!rc) rc = encoder(&fn, err);
    if (rc) return rc;
    const CUtensorMapDataType bf = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    if ((rc = encode(fn, tq, bf, 2, d_q, n_q, (int64_t)hq * d, batch, 64, box_q, err))) return rc;
    if ((rc = encode(fn, tk, bf, 2, d_k, n_kv, (int64_t)hkv * d, batch, 64, box_kv, err))) return rc;
    return encode(fn, tv, bf, 2, d_v, n_kv, (int64_t)hkv * d, batch, 64, box_kv, err);
}

int kern_gemm_rung_ok(int want, const char *rung, sim_err *err)
{
    int cc = 0, rc = kern_cu_device_cc(&cc, err);
    if (rc) return rc;
    if (cc != want)
        return sim_err_set(err, SIM_ENOTSUP, "the %s needs compute capability %d.%d (device is %d.%d)", rung, want / 10,
                           want % 10, cc / 10, cc % 10);
    if (!kern_arch_has_specific(SERVESIM_CUDA_ARCHS, want))
        return sim_err_set(err, SIM_ENOTSUP, "this build has no sm_%da code for the %s: add %da to CMAKE_CUDA_ARCHITECTURES (built for %s)",
                           want, rung, want, SERVESIM_CUDA_ARCHS);
    return 0;
}

int kern_persistent_grid(const char *rung, int64_t tiles, unsigned *grid, sim_err *err)
{
    int dev = 0, sms = 0;
    if (tiles > INT32_MAX) return sim_err_set(err, SIM_EINVAL, "%s: %lld tiles", rung, (long long)tiles);
    KERN_CU_TRY(cudaGetDevice(&dev), err);
    KERN_CU_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err);
    *grid = (unsigned)(tiles < sms ? tiles : sms);
    return 0;
}
