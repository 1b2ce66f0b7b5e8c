/* kern_attn — attention kernels matching kern_attn_ref.h: flash prefill
 * (causal, GQA, online softmax over KV tiles, query positions starting at
 * `cached`), paged decode with split-KV writing partial O + LSE, and the LSE
 * merge (also the DCP merge).
 *
 * These are CUDA-core (SIMT) kernels, not tensor-core ones: a block owns one
 * KV head and the warps of all query heads that share it (GQA group), so a
 * KV tile staged once in shared memory (bf16 → fp32, rows padded by one
 * float against bank conflicts) serves the whole group. Within a warp the
 * lanes take one key each for the scores (dot over d from shared memory),
 * reduce max/sum with shuffles, then take d/32 output dimensions each for
 * P·V. Correct and bandwidth-reasonable for decode; for prefill they reach a
 * fraction of an mma-based FlashAttention-2/3, which calibration rows record
 * as their own kernel name and version. d ∈ {64, 128}. */
#include "kern_cuda.cuh"
#include "kern_plan.h"

namespace {

constexpr int TILE = 32; /* keys per shared-memory tile = one per lane */
constexpr int MAX_WARPS = 16;

template <int D>
struct AttnSmem {
    float k[TILE][D + 1];
    float v[TILE][D + 1];
    float q[MAX_WARPS][D];
};

/* Running online-softmax state of one warp's query row. */
template <int D>
struct RowState {
    float m, l, acc[D / 32];
};

template <int D>
__device__ __forceinline__ void row_init(RowState<D> &r)
{
    r.m = -INFINITY, r.l = 0.0f;
    for (int x = 0; x < D / 32; x++) r.acc[x] = 0.0f;
}

/* Lanes take one key each (n valid keys of the tile, key j < limit only). */
template <int D>
__device__ __forceinline__ void row_tile(RowState<D> &r, const AttnSmem<D> &s, const float *q, int n,
                                         int valid_below, float sm_scale)
{
    int lane = threadIdx.x % 32;
    float sc = -INFINITY;
    if (lane < n && lane < valid_below) {
        float dot = 0.0f;
        for (int x = 0; x < D; x++) dot += q[x] * s.k[lane][x];
        sc = dot * sm_scale;
    }
    float mt = kern_warp_max(sc), mn = fmaxf(r.m, mt);
    if (mn == -INFINITY) return; /* nothing visible yet */
    float c = __expf(r.m - mn), p = sc == -INFINITY ? 0.0f : __expf(sc - mn);
    r.l = r.l * c + kern_warp_sum(p);
    r.m = mn;
    for (int x = 0; x < D / 32; x++) r.acc[x] *= c;
    int lim = min(n, valid_below);
    for (int j = 0; j < lim; j++) {
        float pj = __shfl_sync(0xffffffffu, p, j);
        for (int x = 0; x < D / 32; x++) r.acc[x] += pj * s.v[j][lane + 32 * x];
    }
}

template <int D>
__device__ __forceinline__ void stage_q(AttnSmem<D> &s, int warp, const uint16_t *q)
{
    for (int x = threadIdx.x % 32; x < D; x += 32) s.q[warp][x] = kern_bf2f(q[x]);
}

/* grid (ceil(n_q/qb), hkv, batch); block = 32·group·qb threads. */
template <int D>
__global__ void prefill_kernel(int n_q, int cached, int hq, int hkv, int qb, float sm_scale, const uint16_t *Q,
                               const uint16_t *K, const uint16_t *V, uint16_t *O, float *LSE)
{
    __shared__ AttnSmem<D> s;
    int group = hq / hkv, kh = blockIdx.y, b = blockIdx.z;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int i0 = blockIdx.x * qb, qi = i0 + warp / group, h = kh * group + warp % group;
    int n_kv = cached + n_q;
    bool active = qi < n_q;
    const uint16_t *Kb = K + (int64_t)b * n_kv * hkv * D, *Vb = V + (int64_t)b * n_kv * hkv * D;
    if (active) stage_q(s, warp, Q + (((int64_t)b * n_q + qi) * hq + h) * D);
    RowState<D> r;
    row_init(r);
    int last_block = min(cached + i0 + qb, n_kv); /* keys any query here may see */
    for (int j0 = 0; j0 < last_block; j0 += TILE) {
        int n = min(TILE, n_kv - j0);
        __syncthreads();
        for (int e = threadIdx.x; e < n * D; e += blockDim.x) {
            int j = e / D, x = e % D;
            int64_t off = ((int64_t)(j0 + j) * hkv + kh) * D + x;
            s.k[j][x] = kern_bf2f(Kb[off]);
            s.v[j][x] = kern_bf2f(Vb[off]);
        }
        __syncthreads();
        if (active) row_tile(r, s, s.q[warp], n, cached + qi + 1 - j0, sm_scale);
    }
    if (!active) return;
    int64_t row = ((int64_t)b * n_q + qi) * hq + h;
    float inv = 1.0f / r.l;
    for (int x = 0; x < D / 32; x++) O[row * D + lane + 32 * x] = kern_f2bf(r.acc[x] * inv);
    if (LSE && lane == 0) LSE[row] = r.m + __logf(r.l);
}

/* grid (n_splits, hkv, batch); block = 32·group threads. */
template <int D>
__global__ void decode_kernel(int hq, int hkv, int page, int max_pages, float sm_scale, const int32_t *ctx_len,
                              const int32_t *table, int n_splits, const uint16_t *Q, const uint16_t *KC,
                              const uint16_t *VC, float *OP, float *LP, int batch)
{
    __shared__ AttnSmem<D> s;
    int group = hq / hkv, sp = blockIdx.x, kh = blockIdx.y, b = blockIdx.z;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, h = kh * group + warp;
    /* The split rule of kern_decode_pages_per_split (kern_attn_ref.c), on
     * the device; --check compares the partials, so the two cannot drift
     * apart. */
    int t0, t1;
    kern_decode_split_keys(ctx_len[b], page, n_splits, sp, &t0, &t1);
    stage_q(s, warp, Q + ((int64_t)b * hq + h) * D);
    RowState<D> r;
    row_init(r);
    for (int j0 = t0; j0 < t1; j0 += TILE) {
        int n = min(TILE, t1 - j0);
        __syncthreads();
        for (int e = threadIdx.x; e < n * D; e += blockDim.x) {
            int j = e / D, x = e % D, t = j0 + j;
            int pg = table[(int64_t)b * max_pages + t / page];
            int64_t off = (((int64_t)pg * page + t % page) * hkv + kh) * D + x;
            s.k[j][x] = kern_bf2f(KC[off]);
            s.v[j][x] = kern_bf2f(VC[off]);
        }
        __syncthreads();
        row_tile(r, s, s.q[warp], n, n, sm_scale);
    }
    int64_t rows = (int64_t)batch * hq, row = (int64_t)b * hq + h;
    float *o = OP + ((int64_t)sp * rows + row) * D;
    bool empty = r.l == 0.0f;
    float inv = empty ? 0.0f : 1.0f / r.l;
    for (int x = 0; x < D / 32; x++) o[lane + 32 * x] = r.acc[x] * inv;
    if (lane == 0) LP[(int64_t)sp * rows + row] = empty ? -INFINITY : r.m + __logf(r.l);
}

/* One warp per row; lanes over d. */
__global__ void lse_merge_kernel(int P, int64_t rows, int d, const float *OP, const float *LP, float *O, float *L)
{
    int64_t row = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    float mx = -INFINITY;
    for (int p = lane; p < P; p += 32) mx = fmaxf(mx, LP[(int64_t)p * rows + row]);
    mx = kern_warp_max(mx);
    if (mx == -INFINITY) {
        for (int x = lane; x < d; x += 32) O[row * d + x] = 0.0f;
        if (L && lane == 0) L[row] = -INFINITY;
        return;
    }
    float sum = 0.0f;
    for (int p = lane; p < P; p += 32) sum += __expf(LP[(int64_t)p * rows + row] - mx);
    float lse = mx + __logf(kern_warp_sum(sum));
    for (int x = lane; x < d; x += 32) {
        float o = 0.0f;
        for (int p = 0; p < P; p++) {
            float w = __expf(LP[(int64_t)p * rows + row] - lse);
            if (w != 0.0f) o += w * OP[((int64_t)p * rows + row) * d + x];
        }
        O[row * d + x] = o;
    }
    if (L && lane == 0) L[row] = lse;
}

int check_heads(int32_t hq, int32_t hkv, int32_t d, sim_err *err)
{
    if (d != 64 && d != 128) return sim_err_set(err, SIM_EINVAL, "attention kernels support head_dim 64 or 128, not %d", d);
    if (hkv < 1 || hq < hkv || hq % hkv || hq / hkv > MAX_WARPS)
        return sim_err_set(err, SIM_EINVAL, "attention: hq=%d must be a multiple of hkv=%d with group ≤ %d", hq, hkv,
                           MAX_WARPS);
    return 0;
}

} // namespace

extern "C" int kern_gpu_attn_prefill(int32_t batch, int32_t n_q, int32_t cached, int32_t hq, int32_t hkv, int32_t d,
                                     float sm_scale, const uint16_t *d_q, const uint16_t *d_k, const uint16_t *d_v,
                                     uint16_t *d_o, float *d_lse, sim_err *err)
{
    int rc = check_heads(hq, hkv, d, err);
    if (rc) return rc;
    if (batch < 1 || n_q < 1 || cached < 0 || batch > 65535 || hkv > 65535)
        return sim_err_set(err, SIM_EINVAL, "prefill: bad batch %d / n_q %d / cached %d", batch, n_q, cached);
    int group = hq / hkv, qb = MAX_WARPS / group;
    dim3 grid((unsigned)((n_q + qb - 1) / qb), (unsigned)hkv, (unsigned)batch);
    if (d == 64)
        prefill_kernel<64><<<grid, 32 * group * qb>>>(n_q, cached, hq, hkv, qb, sm_scale, d_q, d_k, d_v, d_o, d_lse);
    else
        prefill_kernel<128><<<grid, 32 * group * qb>>>(n_q, cached, hq, hkv, qb, sm_scale, d_q, d_k, d_v, d_o, d_lse);
    return kern_cu_launched("attn_prefill", err);
}

extern "C" int kern_gpu_decode_split(int32_t batch, int32_t hq, int32_t hkv, int32_t d, int32_t page,
                                     int32_t max_pages, float sm_scale, const int32_t *d_ctx_len,
                                     const int32_t *d_block_table, int32_t n_splits, const uint16_t *d_q,
                                     const uint16_t *d_kc, const uint16_t *d_vc, float *d_o_part, float *d_lse_part,
                                     sim_err *err)
{
    int rc = check_heads(hq, hkv, d, err);
    if (rc) return rc;
    if (batch < 1 || batch > 65535 || n_splits < 1 || n_splits > 65535 || page < 1)
        return sim_err_set(err, SIM_EINVAL, "decode: bad batch %d / splits %d / page %d", batch, n_splits, page);
    dim3 grid((unsigned)n_splits, (unsigned)hkv, (unsigned)batch);
    int threads = 32 * (hq / hkv);
    if (d == 64)
        decode_kernel<64><<<grid, threads>>>(hq, hkv, page, max_pages, sm_scale, d_ctx_len, d_block_table, n_splits,
                                             d_q, d_kc, d_vc, d_o_part, d_lse_part, batch);
    else
        decode_kernel<128><<<grid, threads>>>(hq, hkv, page, max_pages, sm_scale, d_ctx_len, d_block_table, n_splits,
                                              d_q, d_kc, d_vc, d_o_part, d_lse_part, batch);
    return kern_cu_launched("decode_split", err);
}

extern "C" int kern_gpu_lse_merge(int32_t P, int64_t rows, int32_t d, const float *d_o_part, const float *d_lse_part,
                                  float *d_o, float *d_lse, sim_err *err)
{
    if (P < 1 || rows < 1 || d < 1) return sim_err_set(err, SIM_EINVAL, "lse merge: P=%d rows=%lld d=%d", P, (long long)rows, d);
    int64_t blocks = (rows * 32 + 255) / 256;
    if (blocks > 2147483647) return sim_err_set(err, SIM_EINVAL, "lse merge: too many rows");
    lse_merge_kernel<<<(unsigned)blocks, 256>>>(P, rows, d, d_o_part, d_lse_part, d_o, d_lse);
    return kern_cu_launched("lse_merge", err);
}
