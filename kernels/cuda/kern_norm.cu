/* kern_norm — row-wise kernels: safe softmax (warp per row and block per
 * row, both reducing the online (max, sum) state with warp shuffles),
 * RMSNorm (bf16 in/out, fp32 maths; version 2: one pass with the row held
 * in registers as 16-byte vectors of 8 bf16, a warp per row and 8 rows per
 * CTA up to 4,096 columns, a 256-thread CTA per row up to 16,384, a
 * reciprocal square root and multiplications only; other widths, or
 * columns not a multiple of 8, take the scalar two-pass kernel of version
 * 1) and fp8 quantisation from bf16: block-128
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

/* Sum of squares of 8 bf16 packed in a 16-byte vector. */
__device__ __forceinline__ float sumsq8(uint4 v)
{
    uint32_t w[4] = {v.x, v.y, v.z, v.w};
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float a = kern_bf2f((uint16_t)(w[i] & 0xffff)), b = kern_bf2f((uint16_t)(w[i] >> 16));
        s += a * a + b * b;
    }
    return s;
}

/* y = x · inv · w for 8 elements: bf16 in and out, w fp32 (two float4). */
__device__ __forceinline__ uint4 scale8(uint4 v, const float *w, float inv)
{
    float4 w0 = __ldg(reinterpret_cast<const float4 *>(w)), w1 = __ldg(reinterpret_cast<const float4 *>(w) + 1);
    float ws[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
    uint32_t in[4] = {v.x, v.y, v.z, v.w}, out[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float a = kern_bf2f((uint16_t)(in[i] & 0xffff)) * inv * ws[2 * i];
        float b = kern_bf2f((uint16_t)(in[i] >> 16)) * inv * ws[2 * i + 1];
        out[i] = (uint32_t)kern_f2bf(a) | ((uint32_t)kern_f2bf(b) << 16);
    }
    return make_uint4(out[0], out[1], out[2], out[3]);
}

/* RMSNorm, one pass: TEAM threads (a warp, or the whole 256-thread CTA)
 * per row, each holding VPT 16-byte vectors of it in registers;
 * 256 / TEAM rows per CTA. cols % 8 == 0 and cols ≤ 8·VPT·TEAM. */
template <int VPT, int TEAM>
__global__ void __launch_bounds__(256) rmsnorm_vec_kernel(const uint16_t *X, const float *W, int64_t rows,
                                                          int64_t cols, float eps, uint16_t *Y)
{
    __shared__ float part[8];
    int64_t row = (int64_t)blockIdx.x * (256 / TEAM) + threadIdx.x / TEAM;
    int t = threadIdx.x % TEAM;
    int nvec = (int)(cols / 8);
    const uint4 *x = reinterpret_cast<const uint4 *>(X + row * cols);
    uint4 v[VPT];
    float ss = 0.0f;
    if (row < rows) {
#pragma unroll
        for (int i = 0; i < VPT; i++) {
            int c = t + i * TEAM;
            v[i] = c < nvec ? __ldg(x + c) : make_uint4(0, 0, 0, 0);
            ss += sumsq8(v[i]);
        }
    }
    ss = kern_warp_sum(ss);
    if (TEAM > 32) { /* the CTA is one team: combine its 8 warps */
        if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = ss;
        __syncthreads();
        ss = 0.0f;
#pragma unroll
        for (int w = 0; w < 8; w++) ss += part[w];
    }
    if (row >= rows) return;
    float inv = rsqrtf(ss * (1.0f / (float)cols) + eps);
    uint4 *y = reinterpret_cast<uint4 *>(Y + row * cols);
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        int c = t + i * TEAM;
        if (c < nvec) y[c] = scale8(v[i], W + 8 * c, inv);
    }
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
    int64_t nvec = cols / 8;
    unsigned warp_grid = (unsigned)((rows + 7) / 8);
    if (cols % 8 == 0) {
        /* The smallest register footprint that holds the row. */
        if (nvec <= 32) rmsnorm_vec_kernel<1, 32><<<warp_grid, 256>>>(d_x, d_w, rows, cols, eps, d_y);
        else if (nvec <= 64) rmsnorm_vec_kernel<2, 32><<<warp_grid, 256>>>(d_x, d_w, rows, cols, eps, d_y);
        else if (nvec <= 128) rmsnorm_vec_kernel<4, 32><<<warp_grid, 256>>>(d_x, d_w, rows, cols, eps, d_y);
        else if (nvec <= 256) rmsnorm_vec_kernel<8, 32><<<warp_grid, 256>>>(d_x, d_w, rows, cols, eps, d_y);
        else if (nvec <= 512) rmsnorm_vec_kernel<16, 32><<<warp_grid, 256>>>(d_x, d_w, rows, cols, eps, d_y);
        else if (nvec <= 1024) rmsnorm_vec_kernel<4, 256><<<(unsigned)rows, 256>>>(d_x, d_w, rows, cols, eps, d_y);
        else if (nvec <= 2048) rmsnorm_vec_kernel<8, 256><<<(unsigned)rows, 256>>>(d_x, d_w, rows, cols, eps, d_y);
        else nvec = 0;
        if (nvec) return kern_cu_launched("rmsnorm_vec", err);
    }
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
