/* kern_norm — row-wise kernels: safe softmax (warp per row and block per
 * row, both reducing the online (max, sum) state with warp shuffles; the
 * warp kernel's version 2 holds rows up to 1,024 columns in registers as
 * 16-byte float4 vectors, reads them once and takes max, then sum, then
 * the scaled exponentials from registers; the block kernel's version 2
 * does the same with a CTA per row for rows up to 32,768 columns (a
 * multiple of 4; 256 threads × 4 vectors up to 4,096 columns, 512 × 8 up
 * to 16,384, 512 × 16 up to 32,768), longer or unaligned rows taking
 * version 1's two reads with the online merge),
 * RMSNorm (bf16 in/out, fp32 maths; version 2: one pass with the row held
 * in registers as 16-byte vectors of 8 bf16, a warp per row and 8 rows per
 * CTA up to 4,096 columns, a 256-thread CTA per row up to 16,384, a
 * reciprocal square root and multiplications only; other widths, or
 * columns not a multiple of 8, take the scalar two-pass kernel of version
 * 1) and fp8 quantisation from bf16: block-128 with fp32 scale amax/448
 * and MXFP8 with an E8M0 scale per 32 (version 2 of both: 8 elements, one
 * 16-byte load, per thread, the block's lanes — 16 or 4 — sharing its amax
 * by shuffles, one reciprocal of the scale per thread, 8-byte stores;
 * version 1 had a warp per block and one or four elements per lane).
 * Maths as in kern_softmax_ref.h and kern_quant_ref.h (block-128 multiplies
 * by 1/scale where the reference divides: within the format's bound the
 * check allows). */
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

/* Warp per row, the row in registers: VPT float4 per lane, cols % 4 == 0
 * and cols ≤ 128·VPT; max, then Σ exp(x − max), then y = exp(x − max) · (1/Σ). */
template <int VPT>
__global__ void __launch_bounds__(256) softmax_warp_vec_kernel(const float *X, int64_t rows, int64_t cols, float *Y)
{
    int64_t row = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32, nvec = (int)(cols / 4);
    if (row >= rows) return; /* whole warps: a row is one warp's */
    const float4 *x = reinterpret_cast<const float4 *>(X + row * cols);
    float4 v[VPT];
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        int c = lane + 32 * i;
        v[i] = c < nvec ? __ldg(x + c) : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
        m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
    }
    m = kern_warp_max(m);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        v[i] = make_float4(__expf(v[i].x - m), __expf(v[i].y - m), __expf(v[i].z - m), __expf(v[i].w - m));
        s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
    float inv = 1.0f / kern_warp_sum(s);
    float4 *y = reinterpret_cast<float4 *>(Y + row * cols);
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        int c = lane + 32 * i;
        if (c < nvec) y[c] = make_float4(v[i].x * inv, v[i].y * inv, v[i].z * inv, v[i].w * inv);
    }
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

/* The block's reduction of one value per thread (op: max or sum): warp
 * shuffles, the warps' results through shared memory, every thread then
 * reduces the ≤ 32 warp values itself (no second barrier-separated pass). */
template <bool MAX>
__device__ __forceinline__ float block_reduce(float v, float *part)
{
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nw = blockDim.x / 32;
    v = MAX ? kern_warp_max(v) : kern_warp_sum(v);
    if (lane == 0) part[warp] = v;
    __syncthreads();
    float r = MAX ? -INFINITY : 0.0f;
    for (int w = 0; w < nw; w++) r = MAX ? fmaxf(r, part[w]) : r + part[w];
    __syncthreads(); /* part is reused by the next reduction */
    return r;
}

/* Block per row, the row in registers (version 2): VPT float4 per thread of
 * THREADS, cols % 4 == 0 and cols ≤ 4·THREADS·VPT. One read of the row:
 * max, then Σ exp(x − max) on the registers, then y = exp(x − max)·(1/Σ). */
template <int VPT, int THREADS>
__global__ void __launch_bounds__(THREADS) softmax_block_vec_kernel(const float *X, int64_t cols, float *Y)
{
    __shared__ float part[32];
    const float4 *x = reinterpret_cast<const float4 *>(X + blockIdx.x * cols);
    int nvec = (int)(cols / 4);
    float4 v[VPT];
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        int c = threadIdx.x + THREADS * i;
        v[i] = c < nvec ? __ldg(x + c) : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
        m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
    }
    m = block_reduce<true>(m, part);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        v[i] = make_float4(__expf(v[i].x - m), __expf(v[i].y - m), __expf(v[i].z - m), __expf(v[i].w - m));
        s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
    float inv = 1.0f / block_reduce<false>(s, part);
    float4 *y = reinterpret_cast<float4 *>(Y + blockIdx.x * cols);
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        int c = threadIdx.x + THREADS * i;
        if (c < nvec) y[c] = make_float4(v[i].x * inv, v[i].y * inv, v[i].z * inv, v[i].w * inv);
    }
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
    /* A warp team sums by shuffles; a CTA team (its 8 warps) through part. */
    ss = TEAM > 32 ? block_reduce<false>(ss, part) : kern_warp_sum(ss);
    if (row >= rows) return;
    float inv = rsqrtf(ss * (1.0f / (float)cols) + eps);
    uint4 *y = reinterpret_cast<uint4 *>(Y + row * cols);
#pragma unroll
    for (int i = 0; i < VPT; i++) {
        int c = t + i * TEAM;
        if (c < nvec) y[c] = scale8(v[i], W + 8 * c, inv);
    }
}

/* The E8M0 exponent of an MXFP8 block: the smallest power of two 2^e ≥
 * amax/448 (kern_e8m0_ceil_pow2), e in [-127, 127]; 0 for an all-zero block. */
__device__ __forceinline__ int mx_exponent(float amax)
{
    if (!(amax > 0.0f)) return 0;
    int e2;
    float f = frexpf(amax / 448.0f, &e2);
    int e = f == 0.5f ? e2 - 1 : e2;
    return max(-127, min(127, e));
}

/* Quantisation, 8 elements (one 16-byte load) per thread: the QBLK / 8
 * threads of a block (consecutive lanes) share its amax by shuffles. MX:
 * an E8M0 scale per block (QBLK 32), else an fp32 scale amax/448 (QBLK
 * 128). */
template <int QBLK, bool MX>
__global__ void __launch_bounds__(256) quant_vec_kernel(const uint16_t *X, int64_t nblocks, uint8_t *Q, void *S)
{
    constexpr int L = QBLK / 8;
    int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, blk = g / L;
    int sub = (int)(g % L);
    bool live = blk < nblocks;
    uint4 v = live ? __ldg(reinterpret_cast<const uint4 *>(X + blk * QBLK) + sub) : make_uint4(0, 0, 0, 0);
    uint32_t w[4] = {v.x, v.y, v.z, v.w};
    float f[8], amax = 0.0f;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        f[2 * i] = kern_bf2f((uint16_t)(w[i] & 0xffff)), f[2 * i + 1] = kern_bf2f((uint16_t)(w[i] >> 16));
        amax = fmaxf(amax, fmaxf(fabsf(f[2 * i]), fabsf(f[2 * i + 1])));
    }
#pragma unroll
    for (int o = 1; o < L; o <<= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    if (!live) return;
    float mul;
    if (MX) {
        int e = mx_exponent(amax);
        mul = ldexpf(1.0f, -e); /* a power of two: v · 2^-e is exact as ldexpf(v, -e) */
        if (sub == 0) ((uint8_t *)S)[blk] = (uint8_t)(e + 127);
    } else {
        float sc = amax > 0.0f ? amax / 448.0f : 1.0f;
        mul = 1.0f / sc;
        if (sub == 0) ((float *)S)[blk] = sc;
    }
    uint32_t lo = 0, hi = 0;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        lo |= (uint32_t)kern_f2e4m3(f[i] * mul) << (8 * i);
        hi |= (uint32_t)kern_f2e4m3(f[4 + i] * mul) << (8 * i);
    }
    *reinterpret_cast<uint2 *>(Q + blk * QBLK + sub * 8) = make_uint2(lo, hi);
}

/* CTAs for `units` (warps, threads) at per_block units per CTA. */
unsigned blocks_for(int64_t units, int per_block) { return (unsigned)((units + per_block - 1) / per_block); }

} // namespace

extern "C" int kern_gpu_softmax_warp(const float *d_x, int64_t rows, int64_t cols, float *d_y, sim_err *err)
{
    if (rows < 1 || cols < 1) return sim_err_set(err, SIM_EINVAL, "softmax: %lld×%lld", (long long)rows, (long long)cols);
    unsigned grid = blocks_for(rows, 8);
    int64_t nvec = cols % 4 == 0 ? cols / 4 : 0; /* 16-byte rows: the vector kernel */
    if (nvec >= 1 && nvec <= 32) softmax_warp_vec_kernel<1><<<grid, 256>>>(d_x, rows, cols, d_y);
    else if (nvec > 32 && nvec <= 64) softmax_warp_vec_kernel<2><<<grid, 256>>>(d_x, rows, cols, d_y);
    else if (nvec > 64 && nvec <= 128) softmax_warp_vec_kernel<4><<<grid, 256>>>(d_x, rows, cols, d_y);
    else if (nvec > 128 && nvec <= 256) softmax_warp_vec_kernel<8><<<grid, 256>>>(d_x, rows, cols, d_y);
    else softmax_warp_kernel<<<grid, 256>>>(d_x, rows, cols, d_y);
    return kern_cu_launched("softmax_warp", err);
}

extern "C" int kern_gpu_softmax_block(const float *d_x, int64_t rows, int64_t cols, float *d_y, sim_err *err)
{
    if (rows < 1 || cols < 1 || rows > 2147483647)
        return sim_err_set(err, SIM_EINVAL, "softmax: %lld×%lld", (long long)rows, (long long)cols);
    int64_t nvec = cols % 4 == 0 ? cols / 4 : 0; /* 16-byte rows: the row in registers */
    unsigned grid = (unsigned)rows;
    if (nvec >= 1 && nvec <= 256 * 4) softmax_block_vec_kernel<4, 256><<<grid, 256>>>(d_x, cols, d_y);
    else if (nvec > 256 * 4 && nvec <= 512 * 8) softmax_block_vec_kernel<8, 512><<<grid, 512>>>(d_x, cols, d_y);
    else if (nvec > 512 * 8 && nvec <= 512 * 16) softmax_block_vec_kernel<16, 512><<<grid, 512>>>(d_x, cols, d_y);
    else nvec = 0;
    if (nvec) return kern_cu_launched("softmax_block_vec", err);
    int threads = cols >= 4096 ? 1024 : cols >= 1024 ? 512 : 128;
    softmax_block_kernel<<<grid, threads>>>(d_x, cols, d_y);
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
    quant_vec_kernel<128, false><<<blocks_for(nb * 16, 256), 256>>>(d_x, nb, d_q, d_scales);
    return kern_cu_launched("quant_fp8_block128", err);
}

extern "C" int kern_gpu_quant_mxfp8(const uint16_t *d_x, int64_t rows, int64_t cols, uint8_t *d_q, uint8_t *d_scales,
                                    sim_err *err)
{
    if (rows < 1 || cols < 32 || cols % 32)
        return sim_err_set(err, SIM_EINVAL, "MXFP8 quantisation needs cols a multiple of 32 (got %lld)", (long long)cols);
    int64_t nb = rows * (cols / 32);
    quant_vec_kernel<32, true><<<blocks_for(nb * 4, 256), 256>>>(d_x, nb, d_q, d_scales);
    return kern_cu_launched("quant_mxfp8", err);
}
