/* kern_attn_ref — CPU references for attention, fp32 throughout.
 *
 * Prefill (one sequence): n_q new query tokens at positions cached …
 * cached+n_q−1 attend causally to keys 0 … cached+n_q−1 (the cached context
 * plus the chunk itself). q is [n_q][hq][d]; k, v are [cached+n_q][hkv][d];
 * o is [n_q][hq][d]; lse (may be NULL) is [n_q][hq], natural log of the
 * softmax denominator of the scaled scores. GQA: query head h reads KV head
 * h / (hq/hkv); hq must be a multiple of hkv. sm_scale is usually 1/√d.
 * kern_attn_naive_ref is the definition (full score row, max, exp-sum,
 * normalise); kern_attn_flash_ref computes the same with an online softmax
 * over KV tiles of `tile` keys, as flash attention does.
 *
 * Paged decode: each of `batch` requests has one query token ([batch][hq][d])
 * at position ctx_len[b]−1 and a context of ctx_len[b] tokens stored in
 * fixed-size pages of the cache k_cache/v_cache = [n_pages][page][hkv][d];
 * request b's j-th page is block_table[b·max_pages + j]. Split-KV cuts each
 * context into n_splits ranges of whole pages; each split writes a partial,
 * already normalised output o_part[s][b][hq][d] and its lse_part[s][b][hq]
 * (−inf and zeros for an empty split). kern_lse_merge_ref combines P
 * partials: lse = log Σ exp(lse_i), o = Σ exp(lse_i − lse)·o_i — the same
 * merge decode context parallelism (DCP) uses across ranks. Callers own all
 * buffers; functions neither allocate nor fail (shapes are trusted). */
#ifndef KERN_ATTN_REF_H
#define KERN_ATTN_REF_H

#include <stdint.h>

typedef struct {
    int32_t n_q, cached, hq, hkv, d;
    float sm_scale;
} kern_prefill_shape;

void kern_attn_naive_ref(const kern_prefill_shape *s, const float *q, const float *k, const float *v, float *o,
                         float *lse);
void kern_attn_flash_ref(const kern_prefill_shape *s, int32_t tile, const float *q, const float *k, const float *v,
                         float *o, float *lse);

typedef struct {
    int32_t batch, hq, hkv, d, page, max_pages;
    float sm_scale;
    const int32_t *ctx_len;     /* [batch] */
    const int32_t *block_table; /* [batch][max_pages] */
} kern_paged_shape;

/* Pages per split for a context of ctx tokens (ceil over whole pages). */
int32_t kern_decode_pages_per_split(int32_t ctx, int32_t page, int32_t n_splits);

void kern_decode_split_ref(const kern_paged_shape *s, int32_t n_splits, const float *q, const float *k_cache,
                           const float *v_cache, float *o_part, float *lse_part);
/* rows = batch·hq; o_part is [P][rows][d], lse_part [P][rows]. */
void kern_lse_merge_ref(int32_t P, int64_t rows, int32_t d, const float *o_part, const float *lse_part, float *o,
                        float *lse);

#endif
