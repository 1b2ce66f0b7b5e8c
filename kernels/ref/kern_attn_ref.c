/* kern_attn_ref — see kern_attn_ref.h. */
#include "kern_attn_ref.h"

#include <math.h>
#include <string.h>

/* Running state of one query row's online softmax: max m, denominator l
 * (relative to m) and the unnormalised output acc (relative to m). */
typedef struct {
    float m, l;
} kern_online;

static void kern_online_push(kern_online *st, float *acc, int32_t d, float score, const float *vrow)
{
    if (score > st->m) {
        /* New maximum: rescale what was accumulated against the old one. */
        float c = expf(st->m - score); /* m = −inf gives c = 0 */
        st->l *= c;
        for (int32_t i = 0; i < d; i++) acc[i] *= c;
        st->m = score;
    }
    float p = expf(score - st->m);
    st->l += p;
    for (int32_t i = 0; i < d; i++) acc[i] += p * vrow[i];
}

static float kern_dot(const float *a, const float *b, int32_t d)
{
    float s = 0.0f;
    for (int32_t i = 0; i < d; i++) s += a[i] * b[i];
    return s;
}

void kern_attn_naive_ref(const kern_prefill_shape *s, const float *q, const float *k, const float *v, float *o,
                         float *lse)
{
    int32_t group = s->hq / s->hkv, d = s->d;
    for (int32_t i = 0; i < s->n_q; i++) {
        int32_t last = s->cached + i; /* causal: keys 0..last */
        for (int32_t h = 0; h < s->hq; h++) {
            int32_t kh = h / group;
            const float *qr = q + ((int64_t)i * s->hq + h) * d;
            float *orow = o + ((int64_t)i * s->hq + h) * d;
            float mx = -INFINITY, sum = 0.0f;
            for (int32_t j = 0; j <= last; j++)
                mx = fmaxf(mx, s->sm_scale * kern_dot(qr, k + ((int64_t)j * s->hkv + kh) * d, d));
            memset(orow, 0, (size_t)d * sizeof *orow);
            for (int32_t j = 0; j <= last; j++) {
                float p = expf(s->sm_scale * kern_dot(qr, k + ((int64_t)j * s->hkv + kh) * d, d) - mx);
                sum += p;
                const float *vr = v + ((int64_t)j * s->hkv + kh) * d;
                for (int32_t x = 0; x < d; x++) orow[x] += p * vr[x];
            }
            for (int32_t x = 0; x < d; x++) orow[x] /= sum;
            if (lse) lse[(int64_t)i * s->hq + h] = mx + logf(sum);
        }
    }
}

void kern_attn_flash_ref(const kern_prefill_shape *s, int32_t tile, const float *q, const float *k, const float *v,
                         float *o, float *lse)
{
    int32_t group = s->hq / s->hkv, n_kv = s->cached + s->n_q, d = s->d;
    if (tile < 1) tile = 1;
    if (tile > 256) tile = 256; /* scores of one tile live on the stack */
    for (int32_t i = 0; i < s->n_q; i++) {
        int32_t last = s->cached + i;
        for (int32_t h = 0; h < s->hq; h++) {
            int32_t kh = h / group;
            const float *qr = q + ((int64_t)i * s->hq + h) * d;
            float *acc = o + ((int64_t)i * s->hq + h) * d;
            kern_online st = {-INFINITY, 0.0f};
            memset(acc, 0, (size_t)d * sizeof *acc);
            /* KV tiles in order; tiles wholly past the causal limit are
             * skipped, the diagonal tile is masked per key. */
            for (int32_t j0 = 0; j0 < n_kv && j0 <= last; j0 += tile) {
                int32_t j1 = j0 + tile < n_kv ? j0 + tile : n_kv;
                float tmax = -INFINITY, sc[256];
                for (int32_t j = j0; j < j1; j++) {
                    float x = j <= last ? s->sm_scale * kern_dot(qr, k + ((int64_t)j * s->hkv + kh) * d, d)
                                        : -INFINITY;
                    sc[j - j0] = x;
                    tmax = fmaxf(tmax, x);
                }
                /* One rescale per tile (flash-attention form), then add. */
                float mnew = fmaxf(st.m, tmax), c = expf(st.m - mnew);
                st.l *= c;
                for (int32_t x = 0; x < d; x++) acc[x] *= c;
                st.m = mnew;
                for (int32_t j = j0; j < j1; j++) {
                    if (j > last) continue;
                    float p = expf(sc[j - j0] - st.m);
                    st.l += p;
                    const float *vr = v + ((int64_t)j * s->hkv + kh) * d;
                    for (int32_t x = 0; x < d; x++) acc[x] += p * vr[x];
                }
            }
            for (int32_t x = 0; x < d; x++) acc[x] /= st.l;
            if (lse) lse[(int64_t)i * s->hq + h] = st.m + logf(st.l);
        }
    }
}

int32_t kern_decode_pages_per_split(int32_t ctx, int32_t page, int32_t n_splits)
{
    int32_t pages = (ctx + page - 1) / page;
    if (n_splits < 1) n_splits = 1;
    int32_t pps = (pages + n_splits - 1) / n_splits;
    return pps < 1 ? 1 : pps;
}

void kern_decode_split_ref(const kern_paged_shape *s, int32_t n_splits, const float *q, const float *k_cache,
                           const float *v_cache, float *o_part, float *lse_part)
{
    int32_t group = s->hq / s->hkv, d = s->d;
    int64_t rows = (int64_t)s->batch * s->hq;
    for (int32_t b = 0; b < s->batch; b++) {
        int32_t ctx = s->ctx_len[b];
        int32_t pps = kern_decode_pages_per_split(ctx, s->page, n_splits);
        for (int32_t sp = 0; sp < n_splits; sp++) {
            int32_t t0 = sp * pps * s->page, t1 = t0 + pps * s->page;
            if (t1 > ctx) t1 = ctx;
            for (int32_t h = 0; h < s->hq; h++) {
                int32_t kh = h / group;
                int64_t row = (int64_t)b * s->hq + h;
                const float *qr = q + row * d;
                float *acc = o_part + ((int64_t)sp * rows + row) * d;
                kern_online st = {-INFINITY, 0.0f};
                memset(acc, 0, (size_t)d * sizeof *acc);
                for (int32_t t = t0; t < t1; t++) {
                    int32_t pg = s->block_table[(int64_t)b * s->max_pages + t / s->page];
                    int64_t off = (((int64_t)pg * s->page + t % s->page) * s->hkv + kh) * d;
                    kern_online_push(&st, acc, d, s->sm_scale * kern_dot(qr, k_cache + off, d), v_cache + off);
                }
                if (st.l > 0.0f) {
                    for (int32_t x = 0; x < d; x++) acc[x] /= st.l;
                    lse_part[(int64_t)sp * rows + row] = st.m + logf(st.l);
                } else {
                    lse_part[(int64_t)sp * rows + row] = -INFINITY;
                }
            }
        }
    }
}

void kern_lse_merge_ref(int32_t P, int64_t rows, int32_t d, const float *o_part, const float *lse_part, float *o,
                        float *lse)
{
    for (int64_t r = 0; r < rows; r++) {
        float mx = -INFINITY;
        for (int32_t p = 0; p < P; p++) mx = fmaxf(mx, lse_part[(int64_t)p * rows + r]);
        float *orow = o + r * d;
        memset(orow, 0, (size_t)d * sizeof *orow);
        if (mx == -INFINITY) { /* no keys at all */
            if (lse) lse[r] = -INFINITY;
            continue;
        }
        float sum = 0.0f;
        for (int32_t p = 0; p < P; p++) sum += expf(lse_part[(int64_t)p * rows + r] - mx);
        float l = mx + logf(sum);
        for (int32_t p = 0; p < P; p++) {
            float w = expf(lse_part[(int64_t)p * rows + r] - l);
            if (w == 0.0f) continue;
            const float *op = o_part + ((int64_t)p * rows + r) * d;
            for (int32_t x = 0; x < d; x++) orow[x] += w * op[x];
        }
        if (lse) lse[r] = l;
    }
}
