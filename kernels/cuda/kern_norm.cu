/* kern_norm — row-wise kernels: safe softmax (warp per row and block per
 * row, both reducing the online (max, sum) state with warp shuffles),
 * RMSNorm (bf16 in/out, fp32 maths) and fp8 quantisation from bf16: block-128
 * with fp32 scale amax/448 (one warp per 128 elements) and MXFP8 with an E8M0
 * scale per 32 (one warp per block of 32, one element per lane). Maths as in
 * kern_softmax_ref.h and kern_quant_ref.h. */
#include "kern_cuda.cuh"

namespace {

/* Warp per row: lanes stride over the columns (coalesced). */
__global__ void softmax_warp_kernel(const float *X, int64_t rows, int64_t cols, float *Y)
{
    int64_t row = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float *x = X + row * cols;
    float m = -INFINITY, s = 0.0f;
    for (int64_t c = lane; c < cols; c += 32) kern_sm_merge(m, s, x[c], 1.0f);
    kern_warp_sm_reduce(m, s);
    float inv = 1.0f / s;
    for (int64_t c = lane; c < cols; c += 32) Y[row * cols + c] = __expf(x[c] - m) * inv;
}

/* Block per row: per-warp shuffles, then warp 0 merges the warps' states
 * from shared memory. */
__global__ void softmax_block_kernel(const float *X, int64_t cols, float *Y)
{
    __shared__ float sm[32], ss[32];
    __shared__ float fm, fs;
    const float *x = X + blockIdx.x * cols;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    float m = -INFINITY, s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) kern_sm_merge(m, s, x[c], 1.0f);
    kern_warp_sm_reduce(m, s);
    if (lane == 0) sm[warp] = m, ss[warp] = s;
    __syncthreads();
    if (warp == 0) {
        m = lane < nw ? sm[lane] : -INFINITY;
        s = lane < nw ? ss[lane] : 0.0f;
        kern_warp_sm_reduce(m, s);
        if (lane == 0) fm = m, fs = s;
    }
    __syncthreads();
    float inv = 1.0f / fs;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) Y[blockIdx.x * cols + c] = __expf(x[c] - fm) * inv;
}

__global__ void rmsnorm_kernel(const uint16_t *X, const float *W, int64_t cols, float eps, uint16_t *Y)
{
    __shared__ float part[32];
    const uint16_t *x = X + blockIdx.x * cols;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    float ss = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = kern_bf2f(x[c]);
        ss += v * v;
    }
    ss = kern_warp_sum(ss);
    if (lane == 0) part[warp] = ss;
    __syncthreads();
    if (warp == 0) {
        ss = kern_warp_sum(lane < nw ? part[lane] : 0.0f);
        if (lane == 0) part[0] = ss;
    }
    __syncthreads();
    float inv = rsqrtf(part[0] / (float)cols + eps);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
        Y[blockIdx.x * cols + c] = kern_f2bf(kern_bf2f(x[c]) * inv * W[c]);
}

/* One warp per 128-element block, 4 elements per lane. */
__global__ void quant_fp8_block128_kernel(const uint16_t *X, int64_t nblocks, uint8_t *Q, float *S)
{
    int64_t blk = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (blk >= nblocks) return;
    const uint16_t *x = X + blk * 128;
    float v[4], amax = 0.0f;
    for (int i = 0; i < 4; i++) v[i] = kern_bf2f(x[lane + 32 * i]), amax = fmaxf(amax, fabsf(v[i]));
    amax = kern_warp_max(amax);
    float s = amax > 0.0f ? amax / 448.0f : 1.0f;
    for (int i = 0; i < 4; i++) Q[blk * 128 + lane + 32 * i] = kern_f2e4m3(v[i] / s);
    if (lane == 0) S[blk] = s;
}

/* One warp per 32-element block; the scale is the smallest power of two
 * ≥ amax/448 (kern_e8m0_ceil_pow2). */
__global__ void quant_mxfp8_kernel(const uint16_t *X, int64_t nblocks, uint8_t *Q, uint8_t *S)
{
    int64_t blk = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (blk >= nblocks) return;
    float v = kern_bf2f(X[blk * 32 + lane]);
    float amax = kern_warp_max(fabsf(v));
    int e = 0;
    if (amax > 0.0f) {
        int e2;
        float f = frexpf(amax / 448.0f, &e2);
        e = f == 0.5f ? e2 - 1 : e2;
        e = max(-127, min(127, e));
    }
    Q[blk * 32 + lane] = kern_f2e4m3(ldexpf(v, -e));
    if (lane == 0) S[blk] = (uint8_t)(e + 127);
}

unsigned warps_grid(int64_t warps, int per_block) { return (unsigned)((warps + per_block - 1) / per_block); }

} // namespace

extern "C" int kern_gpu_softmax_warp(const float *d_x, int64_t rows, int64_t cols, float *d_y, sim_err *err)
{
    if (rows < 1 || cols < 1) return sim_err_set(err, SIM_EINVAL, "softmax: %lld×%lld", (long long)rows, (long long)cols);
    softmax_warp_kernel<<<warps_grid(rows, 8), 256>>>(d_x, rows, cols, d_y);
    return kern_cu_launched("softmax_warp", err);
}

extern "C" int kern_gpu_softmax_block(const float *d_x, int64_t rows, int64_t cols, float *d_y, sim_err *err)
{
    if (rows < 1 || cols < 1 || rows > 2147483647)
        return sim_err_set(err, SIM_EINVAL, "softmax: %lld×%lld", (long long)rows, (long long)cols);
    int threads = cols >= 4096 ? 1024 : cols >= 1024 ? 512 : 128;
    softmax_block_kernel<<<(unsigned)rows, threads>>>(d_x, cols, d_y);
    return kern_cu_launched("softmax_block", err);
}

extern "C" int kern_gpu_rmsnorm(const uint16_t *d_x, const float *d_w, int64_t rows, int64_t cols, float eps,
                                uint16_t *d_y, sim_err *err)
{
    if (rows < 1 || cols < 1 || rows > 2147483647)
        return sim_err_set(err, SIM_EINVAL, "rmsnorm: %lld×%lld", (long long)rows, (long long)cols);
    rmsnorm_kernel<<<(unsigned)rows, cols >= 2048 ? 512 : 128>>>(d_x, d_w, cols, eps, d_y);
    return kern_cu_launched("rmsnorm", err);
}

extern "C" int kern_gpu_quant_fp8_block128(const uint16_t *d_x, int64_t rows, int64_t cols, uint8_t *d_q,
                                           float *d_scales, sim_err *err)
{
    if (rows < 1 || cols < 128 || cols % 128)
        return sim_err_set(err, SIM_EINVAL, "fp8 block-128 quantisation needs cols a multiple of 128 (got %lld)",
                           (long long)cols);
    int64_t nb = rows * (cols / 128);
    quant_fp8_block128_kernel<<<warps_grid(nb, 8), 256>>>(d_x, nb, d_q, d_scales);
    return kern_cu_launched("quant_fp8_block128", err);
}

extern "C" int kern_gpu_quant_mxfp8(const uint16_t *d_x, int64_t rows, int64_t cols, uint8_t *d_q, uint8_t *d_scales,
                                    sim_err *err)
{
    if (rows < 1 || cols < 32 || cols % 32)
        return sim_err_set(err, SIM_EINVAL, "MXFP8 quantisation needs cols a multiple of 32 (got %lld)", (long long)cols);
    int64_t nb = rows * (cols / 32);
    quant_mxfp8_kernel<<<warps_grid(nb, 8), 256>>>(d_x, nb, d_q, d_scales);
    return kern_cu_launched("quant_mxfp8", err);
}
